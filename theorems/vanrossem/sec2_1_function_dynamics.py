"""§2.1 Function Dynamics (seed l.53-73): the losses of Eqs 1-2 (l.55-63), gradient descent and its continuous-time
limit (Eqs 3-4, l.65-73) and footnote 1 on functional derivatives (l.73).
Claims: ``vanrossem.loss_definition``, ``vanrossem.gd_continuous_limit``, ``vanrossem.functional_derivative_footnote``.

Conventions: :mod:`theorems.vanrossem._common`; numbers quoted in comments come from the catalogue.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import fd
from solvers import twopoint as tp
from solvers import xp_vanrossem as xv
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.vanrossem._common import EPS
from theorems.vanrossem._two_point_instances import _lin_instance, _net_loss_grads


# ---------------------------------------------------------------------------
# a small smooth MLP with hand-written backprop (tanh; smooth, so finite differences apply)
def _mlp_init(rng, widths, gain=1.0):
    """Xavier-normal layers ``(W, b)`` (std ``gain sqrt(2/(fan_in + fan_out))``), small random biases."""
    return [(rng.standard_normal((o, i)) * gain * math.sqrt(2.0 / (i + o)), 0.1 * rng.standard_normal(o))
            for i, o in zip(widths[:-1], widths[1:])]


def _ns(X):
    """The array namespace of ``X`` (host NumPy stays plain NumPy: the finite-difference reference runs there)."""
    return np if isinstance(X, np.ndarray) else xv.namespace(X)


def _mlp_forward(layers, X, start=0, stop=None):
    """Activations of layers ``start..stop-1`` applied to the rows of ``X``; tanh after every layer but the last
    of the whole network.  Returns the list ``[X, z_1, ...]`` of layer outputs."""
    xp = _ns(X)
    stop = len(layers) if stop is None else stop
    acts = [X]
    for k in range(start, stop):
        W, b = layers[k]
        z = acts[-1] @ xp.matrix_transpose(W) + b
        acts.append(z if k == len(layers) - 1 else xp.tanh(z))
    return acts


def _loss_eq1(layers, X, Y, convention="half_mean"):
    """Eq 1 ``1/2 <|f(x_i) - y_i|^2>`` (``half_mean``), PyTorch ``MSELoss(mean)`` (``mse_mean``: mean over points
    and output coordinates, no 1/2) or the half sum (``half_sum``)."""
    xp = _ns(X)
    R = _mlp_forward(layers, X)[-1] - Y
    if convention == "half_mean":
        return 0.5 * xp.mean(xp.sum(R * R, axis=1))
    if convention == "mse_mean":
        return float(xp.mean(R * R))
    return 0.5 * float(xp.sum(R * R))


def _backprop(layers, X, Y, convention="half_mean"):
    """Gradients of the loss in every ``(W, b)`` by backpropagation; ``dL/df_i`` is ``(f_i - y_i)/N`` for Eq 1,
    ``2 (f_i - y_i)/(N dim_y)`` for ``mse_mean`` and ``f_i - y_i`` for ``half_sum``."""
    xp = _ns(X)
    acts = _mlp_forward(layers, X)
    N, m = Y.shape
    R = acts[-1] - Y
    delta = {"half_mean": R / N, "mse_mean": 2 * R / (N * m), "half_sum": R}[convention]
    grads = [None] * len(layers)
    for k in range(len(layers) - 1, -1, -1):
        W, _ = layers[k]
        grads[k] = (xp.matrix_transpose(delta) @ acts[k], xp.sum(delta, axis=0))
        if k > 0:
            delta = (delta @ W) * (1 - acts[k] ** 2)
    return grads


def _flat(layers):
    if layers and not isinstance(layers[0][0], np.ndarray):
        xp = xv.namespace(layers[0][0])
        return xp.concat([xp.concat([xp.reshape(W, (-1,)), b]) for W, b in layers])
    return np.concatenate([np.concatenate([W.ravel(), b]) for W, b in layers])


def _unflat(theta, template):
    out, i = [], 0
    for W, b in template:
        nW, nb = W.size, b.size
        out.append((theta[i:i + nW].reshape(W.shape), theta[i + nW:i + nW + nb]))
        i += nW + nb
    return out


# ===========================================================================
# 1. The losses Eq 1 and Eq 2 (catalogue M1, M2)
def _validate_loss(p):
    if p.split is not None and not (1 <= p.split <= p.depth):
        raise ParamError(f"parameter split={p.split!r} must name a hidden layer 1..depth={p.depth} (or be omitted: "
                         "the layer halfway through the network, App. B l.479)")


loss = Claim(
    id="vanrossem.loss_definition",
    title="The training loss (Eq 1) and its encoder/decoder form (Eq 2): 1/2 x the data average",
    label="Eq 1, Eq 2",
    section="2.1",
    equation="(1), (2)",
    lines=(55, 63),
    statement=r"L(f_\theta)=\tfrac12\langle\|f_\theta(x_i)-y_i\|^2\rangle_{\mathcal D}"
              r"=\tfrac12\langle\|y_\psi(h_\phi(x_i))-y_i\|^2\rangle_{\mathcal D}=L(h_\phi,y_\psi)",
    status="holds",
    params=[
        Param.seed("seed of the network and the data"),
        Param.int("n_points", 4, 1, 64, "N, the number of data points", search=(1, 8)),
        Param.int("dim_x", 2, 1, 16, "input dimension", search=(1, 4)),
        Param.int("dim_y", 1, 1, 16, "output dimension", search=(1, 3)),
        Param.int("width", 6, 1, 64, "width of every hidden layer", search=(2, 8)),
        Param.int("depth", 4, 1, 10, "number of hidden layers (tanh)", search=(1, 5)),
        Param.int("split", None, 1, 10, "hidden layer H at which f = y o h is split (default: halfway, l.479)"),
    ],
    validate=_validate_loss,
    notes="Definitions, checked for what they assert: (i) splitting f into the encoder h (layers up to H) and the "
          "decoder y (the rest) leaves the loss unchanged (Eq 2 = Eq 1, Eq 2 computed point by point from separate "
          "encoder and decoder functions with fsum dot products, Eq 1 by the batched forward pass; tolerance: the "
          "forward rounding bound of both routes (worst case, ~1e-15..1e-10 while the routes usually agree to the last "
          "bit, so the residual is often 0: the bound is a-priori, not fitted). It was one forward pass regrouped, residual 0 by construction; H = hidden layer ceil(depth/2) by default, "
          "'the layer exactly halfway through the network', App. B l.479, decision D3); (ii) the convention "
          "1/2 x the data AVERAGE: backpropagation with dL/df_i = (f_i - y_i)/N agrees with the central-difference "
          "gradient (solvers.fd) of Eq 1. The experiments (PyTorch) presumably use MSELoss(mean), i.e. no 1/2 and an "
          "average over the output coordinates too: its gradient is 2/dim_y times that of Eq 1 (decision D1: a time "
          "unit, absorbed in the fitted tau's). For dim_y = 2 the two coincide exactly, so the falsifier fixes "
          "dim_y = 1, the paper's two-point and XOR setting.",
    catalogue="vanrossem §2.1 M1, M2; §6 D1, D3",
    covers=("M1", "M2"),
)


def _loss_eq2_split(layers, X, Y, H):
    """Eq 2 ``1/2 <|y_psi(h_phi(x_i)) - y_i|^2>`` computed point by point: ``h_phi`` = layers ``1..H`` (tanh after
    each), ``y_psi`` = layers ``H+1..end`` (tanh after each but the last), every dot product by ``math.fsum``."""
    def layer(W, b, a, last):
        z = [math.fsum([float(W[j, i]) * a[i] for i in range(len(a))] + [float(b[j])]) for j in range(W.shape[0])]
        return z if last else [math.tanh(x) for x in z]

    def h_phi(x):
        a = [float(t) for t in x]
        for W, b in layers[:H]:
            a = layer(W, b, a, False)
        return a

    def y_psi(h):
        a = h
        for k, (W, b) in enumerate(layers[H:], start=H):
            a = layer(W, b, a, k == len(layers) - 1)
        return a

    sq = []
    for x, y in zip(X, Y):
        f = y_psi(h_phi(x))
        sq.extend((f[j] - float(y[j])) ** 2 for j in range(len(f)))
    return 0.5 * math.fsum(sq) / X.shape[0]


def _loss_rounding_bound(layers, X, Y):
    """A-priori bound on ``|L_float - L|`` summed over the two routes (standard forward error analysis,
    ``gamma_n = n eps/(1 - n eps)``): through a layer ``z = W a + b``, ``|dz| <= gamma_{n+1}(|W||a| + |b|) +
    |W||da|`` (batched) or ``2 eps |z| + |W||da|`` (fsum: one rounding of the sum, one of each product is
    within it), then ``|d tanh(z)| <= |dz| + eps |tanh z|``; at the output ``|dL| <= <sum_j (|r_j| + df_j/2) df_j>
    + gamma_{N m + 2} L``."""
    total = 0.0
    for batched in (True, False):
        a, da = np.abs(X), np.zeros_like(X, dtype=float)
        acts = _mlp_forward(layers, X)
        for k, (W, b) in enumerate(layers):
            n = W.shape[1]
            g = (n + 1) * EPS / (1 - (n + 1) * EPS)
            z = acts[k + 1]
            dz = (g * (a @ np.abs(W).T + np.abs(b)) if batched else 2 * EPS * np.abs(z)) + da @ np.abs(W).T
            last = k == len(layers) - 1
            da = dz if last else dz + EPS * np.abs(z)
            a = np.abs(z)
        R = np.abs(acts[-1] - Y)
        L = 0.5 * np.mean(np.sum(R * R, axis=1))
        nm = R.size + 2
        total += float(np.mean(np.sum((R + da / 2) * da, axis=1))) + nm * EPS / (1 - nm * EPS) * L
    return total


def _loss_instance(p):
    rng = np.random.default_rng(p.seed)
    widths = [p.dim_x] + [p.width] * p.depth + [p.dim_y]
    layers = _mlp_init(rng, widths)
    X = rng.standard_normal((p.n_points, p.dim_x))
    Y = rng.standard_normal((p.n_points, p.dim_y))
    return layers, X, Y


def _loss_outcome(p, convention):
    layers, X, Y = _loss_instance(p)
    H = p.split if p.split is not None else (p.depth + 1) // 2
    # Eq 2 by a separate route: the encoder h_phi (layers 1..H) and the decoder y_psi (layers H+1..end) as two
    # per-point functions with correctly rounded dot products (math.fsum), against Eq 1 by the batched float64
    # forward pass of the whole network f_theta.
    L2 = _loss_eq2_split(layers, X, Y, H)
    # array-API path (p.backend): the batched forward pass of Eq 1 and the backpropagation of the convention under
    # test run in xp; the references (Eq 2 with fsum, the finite differences of Eq 1) stay on the host
    xp = xv.xp_of(p)
    lx = [xv.on(xp, W, b) for W, b in layers]
    Xx, Yx = xv.on(xp, X, Y)
    L1 = float(_loss_eq1(lx, Xx, Yx))
    loss_tol = _loss_rounding_bound(layers, X, Y)
    # the gradient of the convention under test against the finite-difference gradient of Eq 1
    g = _flat([(gW, gb) for gW, gb in _backprop(lx, Xx, Yx, convention)])
    theta = _flat(layers)
    # central differences on at most 400 coordinates (every one when there are fewer; a seeded subset otherwise,
    # always including up to 200 of the last layer's): a width-61 depth-10 net has ~35k parameters and the full
    # finite-difference gradient ran past the 60 s sweep limit (87 s)
    idx = np.arange(theta.size)
    if theta.size > 400:
        n_last = min(layers[-1][0].size + layers[-1][1].size, 200)
        rest = np.random.default_rng(p.seed + 1).choice(theta.size - n_last, 400 - n_last, replace=False)
        idx = np.union1d(rest, np.arange(theta.size - n_last, theta.size))

    def loss_at(sub):
        th = theta.copy()
        th[idx] = sub
        return _loss_eq1(_unflat(th, layers), X, Y)
    (g_fd,), (err,) = fd.gradient_with_error(loss_at, [theta[idx]], h=1e-5)
    g = xp.take(g, xp.asarray(idx), axis=0)
    g_fd_x, err_x = xv.on(xp, g_fd, err)
    # Error model: Eq 2 vs Eq 1: the forward rounding bound of both routes (_loss_rounding_bound).  Gradient: the Richardson error estimate of solvers.fd per entry, with a
    # factor 10 safety on the estimate of the truncation error (the h^2 term of a smooth tanh map).
    dev = xp.abs(g - g_fd_x)
    ratio = float(xp.max(dev / (10 * err_x)))
    g_norm = float(xp.linalg.vector_norm(g))
    dev = xv.asnumpy(dev)
    return Outcome.from_parts(
        {"Eq 2 (per-point encoder o decoder) - Eq 1 (batched f)": (abs(L2 - L1), loss_tol),
         f"backprop ({convention}) vs central differences of Eq 1 (ratio to 10x the fd error)": (ratio, 1.0)},
        f"split at hidden layer {H}; gradient convention {convention}",
        values={"loss_eq1": L1, "loss_eq2": L2, "split_layer": H, "max_gradient_deviation": float(dev.max()),
                "max_fd_error_estimate": float(err.max()), "n_parameters": int(theta.size),
                "gradient_ratio_to_eq1": g_norm / max(float(np.linalg.norm(g_fd)), 1e-300)})


@loss.numeric(backends=("numpy", "cupy"))
def loss_numeric(p):
    """Eq 2 equals Eq 1 at the split, and 1/2 x mean backprop matches finite differences of Eq 1."""
    return _loss_outcome(p, "half_mean")


loss.property(over=("seed", "n_points", "dim_x", "dim_y", "width", "depth"), max_examples=12)


@loss.falsifier("mse_loss_mean", search=("seed",), fixed={"dim_y": 1}, backends=("numpy", "cupy"))
def loss_mse_mean(p):
    """PyTorch MSELoss(mean) (no 1/2): gradient 2/dim_y times that of Eq 1 (= 2 for the paper's dim_y = 1)."""
    return _loss_outcome(p, "mse_mean")


@loss.falsifier("half_sum", search=("seed",), backends=("numpy", "cupy"))
def loss_half_sum(p):
    """1/2 x the SUM over the data (the convention under which Eq 7 is exact for two points, erratum E1): N times Eq 1."""
    return _loss_outcome(p.replace(n_points=max(p.n_points, 2)), "half_sum")


def _loss_symbolic_core(variant="stated"):
    """dL/df_i = (f_i - y_i)/N for L = 1/2 <|f_i - y_i|^2>, and MSELoss(mean) = (2/dim_y) L identically (N = 3,
    dim_y = 1, 2, 3)."""
    bad = []
    for m in (1, 2, 3):
        F = sp.Matrix(3, m, lambda i, j: sp.Symbol(f"f{i}{j}"))
        Yv = sp.Matrix(3, m, lambda i, j: sp.Symbol(f"y{i}{j}"))
        R = F - Yv
        L = ({"no_half": 1}.get(variant, sp.Rational(1, 2)) * sum(R[i, j] ** 2 for i in range(3) for j in range(m))
             / (1 if variant == "sum_not_mean" else 3))
        mse = sum(R[i, j] ** 2 for i in range(3) for j in range(m)) / (3 * m)
        for i in range(3):
            for j in range(m):
                if sp.expand(sp.diff(L, F[i, j]) - R[i, j] / 3) != 0:
                    bad.append(f"dL/df[{i},{j}] (dim_y={m})")
        if sp.expand(mse - sp.Rational(2, m) * L) != 0:
            bad.append(f"MSELoss = (2/dim_y) L (dim_y={m})")
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy.expand", "nonzero": bad,
        "proved": "dL/df_i = (f_i - y_i)/N; MSELoss(mean) = (2/dim_y) x Eq 1 (equal for dim_y = 2)"},
        message="identities that did not expand to zero")


@loss.symbolic(timeout=30)
def loss_symbolic(p):
    """dL/df_i = (f_i - y_i)/N for L = 1/2 <|f_i - y_i|^2>, and MSELoss(mean) = (2/dim_y) L identically (N = 3,
    dim_y = 1, 2, 3)."""
    return _loss_symbolic_core()


@loss.mutant({
    'no_half': 'L = <|f_i - y_i|^2> (the 1/2 dropped)',
    'sum_not_mean': 'L = 1/2 sum_i |f_i - y_i|^2 (a sum over the data, not the mean)',
}, timeout=30)
def loss_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _loss_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


# ===========================================================================
# 8. Gradient descent and its continuous-time limit (Eqs 3-4, catalogue M3)
gd_limit = Claim(
    id="vanrossem.gd_continuous_limit",
    title="Gradient descent with step eta is the gradient flow with tau = 1/eta, time measured in steps",
    label="Eqs 3-4",
    section="2.1",
    equation="(3), (4)",
    lines=(65, 73),
    statement=r"\Delta\phi=-\eta\nabla_\phi L\ \xrightarrow{\ \eta\to0\ }\ \tfrac{d}{dt}\phi=-\tfrac1\tau\nabla_\phi L,"
              r"\quad\tau:=1/\eta",
    status="holds",
    params=[
        Param.seed("seed of the two-point data and the initial parameters"),
        # the step as eta_lambda = eta x lambda_max(Hessian at the start), the quantity the first-order regime is
        # about: eta itself (in (0, 0.2]) against lambda_max = 1-670 over the former sizes (hidden <= 50, dims <= 20)
        # made 4 of the first 4 draws of sweep 777001 inconclusive (eta lambda_max = 0.9-41 > 1/4).  Sizes <= 10 / 6
        # (lambda_max <= ~50) and T <= 4 keep the smallest step's T/(eta/4) within the 1e6 steps the loop runs.
        Param.int("hidden", 4, 1, 10, "width of the representation", search=(1, 6)),
        Param.int("dim_x", 2, 1, 6, "input dimension", search=(1, 4)),
        Param.int("dim_y", 2, 1, 6, "output dimension", search=(1, 4)),
        # eta_lambda >= 0.01: the smallest step's 4 T lambda_max / eta_lambda <= 8e4 GD steps (at 0.001: 7e5 steps,
        # 2.5 min on the loaded CI machine)
        Param.float("eta_lambda", 0.02, 0.01, 0.1, "largest learning rate times the largest Hessian eigenvalue at the "
                    "start, eta lambda_max (then /2, /4): the first-order regime of GD", search=(0.01, 0.04)),
        Param.float("T", 2.0, 0.0, 4.0, "horizon in units eta * steps (= t/tau)", low_open=True,
                    search=(0.5, 4.0)),
    ],
    notes="Tested on the two-point effective theory itself (the two-layer linear network with output bias of "
          "vanrossem.two_layer_linear_equivalence, Eq 16 loss): GD after K = T/eta steps vs the flow with tau = 1/eta at "
          "t = K steps (Dormand-Prince, rtol 1e-12). GD is explicit Euler with unit step for d phi/dt = -eta grad L, so "
          "the error is C eta + O(eta^2): the observed order over eta, eta/2, eta/4 must be 1 (error model: |order - 1| "
          "<= 0.1 + 4 eta lambda_max, the O(eta lambda_max) correction to a first-order error ratio). The step is "
          "given as eta_lambda = eta lambda_max (lambda_max: the largest Hessian eigenvalue at the start, by power "
          "iteration), in (0, 0.1]: the first-order regime by construction (audit: eta drawn alone in (0, 0.2] was "
          "beyond it on 4 of 4 draws of sweep 777001, all inconclusive). Falsifier: tau = 1/(2 eta).",
    catalogue="vanrossem §2.1 M3",
    covers=("M3",),
)


def _gd_instance(p):
    Dh, Dy, yb, X, Y = _lin_instance(p)
    Xc = X - X.mean(axis=0)
    shapes = [Dh.shape, Dy.shape, yb.shape]
    theta0 = np.concatenate([0.5 * Dh.ravel(), 0.5 * Dy.ravel(), yb.ravel()])

    def grad(theta):
        i, j = Dh.size, Dh.size + Dy.size
        W1, W2, b2 = theta[:i].reshape(shapes[0]), theta[i:j].reshape(shapes[1]), theta[j:]
        _, g1, g2, gb = _net_loss_grads(np, W1, W2, b2, Xc, Y)   # CPU-only: a GD loop of up to 1e6 steps
        return np.concatenate([g1.ravel(), g2.ravel(), gb.ravel()])
    return theta0, grad


def _hessian_norm(grad, theta, iters=40):
    """Largest |eigenvalue| of the Hessian at theta: power iteration on central-difference Hessian-vector products."""
    v = np.random.default_rng(0).standard_normal(theta.size)
    v /= np.linalg.norm(v)
    lam, e = 0.0, 1e-5 * max(1.0, float(np.linalg.norm(theta)))
    for _ in range(iters):
        hv = (grad(theta + e * v) - grad(theta - e * v)) / (2 * e)
        lam = float(np.linalg.norm(hv))
        if not lam > 0:
            return 0.0
        v = hv / lam
    return lam


GD_STEPS = (10, 10**6)  # T/eta at the largest eta at least 10 (a fixed horizon reached by many steps);
# T/(eta/4) at most 10^6 iterations


def _gd_outcome(p, tau_of_eta):
    theta0, grad = _gd_instance(p)
    # the order is 1 + O(eta lambda_max) (lambda_max: the largest Hessian eigenvalue, which grows with the width);
    # the step is eta = eta_lambda / lambda_max, in the first-order regime by construction (eta_lambda <= 0.1)
    lam = _hessian_norm(grad, theta0)
    if not lam > 0:
        return inconclusive("the Hessian vanishes at the start: no curvature scale for the step", lambda_max=lam)
    eta0 = p.eta_lambda / lam
    k_min, k_max = p.T / eta0, 4 * p.T / eta0
    if not k_min >= GD_STEPS[0]:
        return inconclusive(f"T/eta = {k_min:.3g} GD steps at the largest eta: the order in eta is observed at a "
                            f"fixed horizon reached by many steps (at least {GD_STEPS[0]}); take T >= {GD_STEPS[0]} eta",
                            steps=k_min)
    if not k_max <= GD_STEPS[1]:
        return inconclusive(f"T/(eta/4) = {k_max:.3g} GD steps, more than the {GD_STEPS[1]:.0e} this check runs; "
                            f"take a larger eta_lambda or smaller T", steps=k_max)
    etas = eta0 / np.array([1.0, 2.0, 4.0])
    errs = []
    for eta in etas:
        K = max(1, int(round(p.T / eta)))
        th = theta0.copy()
        for _ in range(K):
            th = th - eta * grad(th)
        tau = tau_of_eta(eta)
        res = tp.rk.solve_dopri5(lambda t, y: -grad(y) / tau, 0.0, theta0, float(K), rtol=1e-12, atol=1e-14,
                                 h0=1e-3, backend="numpy")
        if not res.success:
            return inconclusive(f"the flow did not reach t = {K}: {res.message}")
        fl = res.y
        errs.append(float(np.linalg.norm(th - fl)))
    errs = np.array(errs)
    if errs.min() < 1e3 * EPS * np.linalg.norm(theta0):
        return inconclusive("GD and flow agree to rounding: no observable error", errors=errs.tolist())
    orders = np.log2(errs[:-1] / errs[1:])
    return Outcome(residual=float(np.max(np.abs(orders - 1))), tolerance=0.1 + 4 * p.eta_lambda,
                   values={"etas": etas.tolist(), "errors": errs.tolist(), "orders": orders.tolist(),
                           "plot": {"kind": "loglog", "x": etas.tolist(), "series": {"|theta_GD - theta_flow|": errs.tolist()},
                                    "xlabel": "eta", "ylabel": "error at t = T/eta steps", "title": "Eq 3 -> Eq 4"}},
                   message="|observed order - 1| of GD against the flow with tau(eta)")


@gd_limit.numeric
def gd_limit_numeric(p):
    """GD vs the flow with tau = 1/eta: first-order convergence in eta."""
    return _gd_outcome(p, lambda eta: 1.0 / eta)


gd_limit.property(over=("seed", "hidden", "dim_x", "dim_y", "eta_lambda", "T"), max_examples=10)


@gd_limit.falsifier("tau_factor_two", search=("seed",))
def gd_limit_tau_factor_two(p):
    """tau = 1/(2 eta) (a factor 2 in the time unit, as in erratum E1): the discrepancy does not vanish as eta -> 0."""
    return _gd_outcome(p, lambda eta: 0.5 / eta)


# ===========================================================================
# 2. Footnote 1: functional derivatives do not remove the parametrisation (catalogue M4)
footnote = Claim(
    id="vanrossem.functional_derivative_footnote",
    title="Footnote 1: gradient flow on the maps themselves would need the parametrisation-dependent dynamics of grad y",
    label="footnote 1",
    section="2.1",
    equation="(4)",
    lines=(73, 73),
    statement=r"\text{replacing the right-hand side of Eq 4 by functional derivatives of }L\text{ gives a term involving "
              r"}\nabla y_\psi\text{, whose dynamics explicitly depend on }\psi",
    status="heuristic",
    notes="Motivation, not a theorem. What can be checked exactly is the core of the remark: two parametrisations of "
          "the SAME map y(h) = c h, namely psi = c and psi = (p, q) with c = p q, induce different dynamics of the map "
          "(and of its gradient c) under parameter gradient flow: dc/dt = -dL/dc versus d(pq)/dt = -(p^2 + q^2) dL/dc. "
          "The symbolic check proves both and that they differ unless p^2 + q^2 = 1. No numeric check: nothing else is "
          "asserted.",
    catalogue="vanrossem §2.1 M4",
    covers=("M4",),
)


def _footnote_symbolic_core(variant="stated"):
    """Same map y = c h, two parametrisations: dc/dt = -L'(c) vs d(pq)/dt = -(p^2+q^2) L'(c) (sympy)."""
    p_, q_, c, hh, yt = sp.symbols("p q c h y_t", real=True)
    Lc = sp.Rational(1, 2) * (c * hh - yt) ** 2                # the loss as a function of the map
    Lpq = Lc.subs(c, p_ * q_)
    dc_direct = -sp.diff(Lc, c)
    dc_induced = -sp.diff(Lpq, p_) * q_ - sp.diff(Lpq, q_) * p_  # d(pq)/dt = p' q + p q'
    F = 1 if variant == "no_dependence" else p_ ** 2 + q_ ** 2  # the stated factor between the two dynamics
    gap = sp.expand(dc_induced - F * dc_direct.subs(c, p_ * q_))
    differ = sp.factor(dc_induced - dc_direct.subs(c, p_ * q_))
    expected = sp.factor((F - 1) * dc_direct.subs(c, p_ * q_))
    bad = int(gap != 0) + int(sp.expand(differ - expected) != 0)
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand/factor", "difference": str(differ),
        "proved": "d(pq)/dt = (p^2+q^2) dc/dt: the map's dynamics depend on the parametrisation"},
        message="identities that did not reduce to zero")


@footnote.symbolic(timeout=30)
def footnote_symbolic(p):
    """Same map y = c h, two parametrisations: dc/dt = -L'(c) vs d(pq)/dt = -(p^2+q^2) L'(c) (sympy)."""
    return _footnote_symbolic_core()


@footnote.mutant({
    'no_dependence': "d(pq)/dt = dc/dt (the remark negated: the map's dynamics independent of the parametrisation)",
}, timeout=30)
def footnote_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _footnote_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out
