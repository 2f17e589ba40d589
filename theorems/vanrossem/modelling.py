"""The modelling layer of van Rossem & Saxe: the losses (Eqs 1-2), the footnote on functional derivatives, the
modelling assumption (Eq 6) as the gradient flow of Eq 16, the representational velocity (l.105), the intuition
of §4.3, and the typos and notation slips (catalogue E12).

Conventions: see :mod:`theorems.vanrossem._common` (``a = delta_x^2``, ``b = delta_y^2``, Eq 7 time units with
the paper's Eq 17 gradient factor ``g = 1/2``; the true gradients of Eq 16 carry ``g = 1/4``, erratum E1).
Numbers quoted in comments come from the catalogue (``research/vanrossem_saxe.md``).
"""
from __future__ import annotations

import math
import os
import re

import numpy as np
import sympy as sp

from solvers import fd
from solvers import twopoint as tp
from solvers import xp_vanrossem as xv
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.documents import DOCUMENTS
from theorems.vanrossem._common import FLOOR

EPS = float(np.finfo(float).eps)


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


# ===========================================================================
# 3. The modelling assumption Eq 6: gradient flow of Eq 16 in (ybar, D_h, D_y) (catalogue M6)
def _eff_params(extra=()):
    return [Param.seed("seed of the data and the linearisation parameters"),
            Param.int("dim_x", 2, 1, 16, "dim X", search=(1, 4)),
            Param.int("hidden", 3, 1, 16, "dim H", search=(1, 5)),
            Param.int("dim_y", 2, 1, 16, "dim Y", search=(1, 4)),
            Param.float("tau_ybar", 1.5, FLOOR, 1e3, "time constant of the mean output", search=(0.3, 3.0)),
            Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.3, 3.0)),
            Param.float("tau_y", 2.0, FLOOR, 1e3, "decoder time constant", search=(0.3, 3.0)),
            Param.float("scale", 1.0, FLOOR, 100.0, "scale of the initial D_h, D_y", search=(0.05, 3.0))] + list(extra)


def _eff_instance(p):
    rng = np.random.default_rng(p.seed)
    x1, x2 = rng.standard_normal(p.dim_x), rng.standard_normal(p.dim_x)
    y1, y2 = rng.standard_normal(p.dim_y), rng.standard_normal(p.dim_y)
    Dh = p.scale * rng.standard_normal((p.hidden, p.dim_x))
    Dy = p.scale * rng.standard_normal((p.dim_y, p.hidden))
    ybar = rng.standard_normal(p.dim_y)
    return x1, x2, y1, y2, Dh, Dy, ybar


def _loss16(ybar, Dh, Dy, x1, x2, y1, y2):
    """Eq 16: ``1/2 <|ybar + 1/2 D_y D_h (x_i - x_-i) - y_i|^2>`` over the two points."""
    r1 = ybar + 0.5 * Dy @ (Dh @ (x1 - x2)) - y1
    r2 = ybar + 0.5 * Dy @ (Dh @ (x2 - x1)) - y2
    return 0.25 * (r1 @ r1 + r2 @ r2)


def _eq6_field(ybar, Dh, Dy, x1, x2, y1, y2, taus, g=tp.TRUE_FACTOR):
    """Eq 6 with the closed-form gradients of Eq 16 (factor ``g``: 1/4 true, 1/2 the paper's Eq 17)."""
    dX, dY = x2 - x1, y2 - y1
    r = Dy @ Dh @ dX - dY
    t_yb, t_h, t_y = taus
    return (-(ybar - 0.5 * (y1 + y2)) / t_yb, -g / t_h * np.outer(Dy.T @ r, dX), -g / t_y * np.outer(r, Dh @ dX))


effective = Claim(
    id="vanrossem.effective_gradient_flow",
    title="The modelling assumption (Eq 6): the linearisation parameters follow gradient flow of Eq 16",
    label="Eq 6",
    section="2.2, A.1",
    equation="(6), (16)",
    lines=(85, 91),
    statement=r"\tfrac{d}{dt}\bar y=-\tfrac1{\tau_{\bar y}}\tfrac{\partial L}{\partial\bar y},\quad "
              r"\tfrac{d}{dt}D_h=-\tfrac1{\tau_h}\tfrac{\partial L}{\partial D_h},\quad "
              r"\tfrac{d}{dt}D_y=-\tfrac1{\tau_y}\tfrac{\partial L}{\partial D_y}",
    status="heuristic",
    params=_eff_params(),
    notes="A modelling assumption (the paper: 'not necessarily equal to the actual dynamics', l.91), not a theorem. "
          "Checked: (i) the effective vector field used by the suite (closed-form gradients 1/4 D_y^T r dX^T, "
          "1/4 r dh^T, ybar - (y_1+y_2)/2, erratum E1) is -(1/tau) x the central-difference gradient of Eq 16 block by "
          "block, i.e. it IS the gradient flow of Eq 16 with per-block rates; (ii) hence dL/dt = -sum_k tau_k^{-1} "
          "|dL/dtheta_k|^2 <= 0 along it (directional finite difference). The falsifier shows the caveat of l.91 on "
          "the simplest network where it bites: in a 3-layer linear net (D_h = W_1, D_y = W_3 W_2, split after W_1) "
          "parameter gradient descent moves D_y by -(G W_2^T W_2 + W_3 W_3^T G), G = dL/dD_y, which is not "
          "-(1/tau_y) G for any scalar tau_y. (In the 2-layer case the assumption is exact: "
          "vanrossem.two_layer_linear_equivalence.) Consequences of Eq 6 are tested in fixed_point.py and structure.py.",
    catalogue="vanrossem §2.1 M6 (G1, M7); §4 E1",
    covers=("M6",),
)


def _eff_outcome(p):
    """Array-API path: the Eq 6 field, the central differences of Eq 16 (every entry of a block perturbed in one
    stacked evaluation, the same steps and Richardson estimate as solvers.fd) and the directional derivative in
    ``xp``."""
    xp = xv.xp_of(p)
    x1, x2, y1, y2, Dh, Dy, ybar = xv.on(xp, *_eff_instance(p))
    taus = (p.tau_ybar, p.tau_h, p.tau_y)
    field = xv.eq6_field(xp, ybar, Dh, Dy, x1, x2, y1, y2, taus)
    grads, errs = xv.fd_gradient_with_error(xp, lambda yb, A, B: xv.loss16(xp, yb, A, B, x1, x2, y1, y2), [ybar, Dh, Dy])
    parts = {}
    for name, F, G, E, tau in zip(("ybar", "D_h", "D_y"), field, grads, errs, taus):
        # error model: the fd Richardson estimate per entry (x10 safety), scaled by 1/tau like the field
        parts[f"Eq 6 field of {name} vs -(1/tau) fd gradient of Eq 16"] = (
            float(xp.max(xp.abs(F + G / tau) / (10 * E / tau))), 1.0)

    # dL/dt along the field, by a central difference in the step size e (L is a polynomial of degree 4 in e);
    # E has shape (..., 1): a stack of step sizes
    def L_along(E):
        e = E[..., 0]
        return xv.loss16(xp, ybar + e[..., None] * field[0], Dh + e[..., None, None] * field[1],
                         Dy + e[..., None, None] * field[2], x1, x2, y1, y2)
    (dLdt,), (err_t,) = xv.fd_gradient_with_error(xp, L_along, [xp.zeros(1, dtype=xp.float64)], h=1e-5)
    predicted = -sum(float(xp.sum(G * G)) / tau for G, tau in zip(grads, taus))
    dLdt, err_t = float(dLdt[0]), float(err_t[0])
    parts["dL/dt = -sum |grad|^2/tau (directional fd)"] = (abs(dLdt - predicted), 10 * err_t + 1e-8 * abs(predicted))
    return Outcome.from_parts(parts, "Eq 6 = gradient flow of Eq 16 with per-block rates", values={
        "loss": float(xv.loss16(xp, ybar, Dh, Dy, x1, x2, y1, y2)), "dL_dt": dLdt, "dL_dt_predicted": predicted})


@effective.numeric(backends=("numpy", "cupy"))
def effective_numeric(p):
    """The effective field is -(1/tau) grad Eq 16 block-wise (finite differences), and the loss decreases along it."""
    return _eff_outcome(p)


effective.property(over=("seed", "dim_x", "hidden", "dim_y", "tau_ybar", "tau_h", "tau_y", "scale"), max_examples=12)


@effective.falsifier("deep_linear_parametrisation", search=("seed",), backends=("numpy", "cupy"))
def effective_deep_linear(p):
    """A 3-layer linear net (D_y = W_3 W_2): the induced D_y velocity is not -(1/tau_y) dL/dD_y for any scalar tau_y."""
    xp = xv.xp_of(p)
    rng = np.random.default_rng(p.seed + 1)
    x1, x2, y1, y2, Dh, Dy, ybar = _eff_instance(p)
    W3 = p.scale * rng.standard_normal((p.dim_y, p.hidden))
    W2 = rng.standard_normal((p.hidden, p.hidden))
    x1, x2, y1, y2, Dh, W3, W2 = xv.on(xp, x1, x2, y1, y2, Dh, W3, W2)
    Dy = W3 @ W2
    dX, dY = x2 - x1, y2 - y1
    dh = xv.mv(xp, Dh, dX)
    G = 0.25 * xv.outer(xp, xv.mv(xp, Dy, dh) - dY, dh)     # dL/dD_y (Eq 16, true factor)
    T = xp.matrix_transpose
    induced = -(G @ T(W2) @ W2 + W3 @ T(W3) @ G)             # d(W3 W2)/dt under unit-rate parameter GD
    # best scalar rate c: induced ~ -c G (least squares); residual relative to |induced|
    c = -float(xp.sum(induced * G)) / max(float(xp.sum(G * G)), 1e-300)
    res = float(xp.linalg.vector_norm(induced + c * G)) / max(float(xp.linalg.vector_norm(induced)), 1e-300)
    # error model: rounding of the matrix products, 50 eps (hidden + dim_y) relative
    return Outcome(residual=res, tolerance=50 * EPS * (p.hidden + p.dim_y), values={
        "best_scalar_rate": c, "relative_misfit": res},
        message="|induced dD_y/dt + c G| / |induced| at the best scalar c")


# ===========================================================================
# 4. w controls the representational velocity (l.105, catalogue R2)
def _rv_params():
    return [Param.seed("seed of the state"),
            Param.int("dim_x", 2, 1, 16, "dim X", search=(1, 4)),
            Param.int("hidden", 3, 1, 64, "dim H", search=(1, 6)),
            Param.int("dim_y", 2, 1, 16, "dim Y", search=(1, 4)),
            Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.3, 3.0)),
            Param.float("tau_y", 2.0, FLOOR, 1e3, "decoder time constant", search=(0.3, 3.0)),
            Param.float("scale", 1.0, FLOOR, 100.0, "scale of D_h, D_y", search=(0.05, 3.0)),
            Param.choice("gradients", "eq17", ["eq17", "eq16"],
                         "eq17: the paper's Eq 17 factor 1/2 (Eq 7 time units); eq16: the true gradients (1/4)")]


velocity = Claim(
    id="vanrossem.representational_velocity",
    title="w controls the representational velocity and only adds the output angle",
    label="l.105 (Eq 7, first line; Eq 8)",
    section="2.3",
    equation="(7), (8)",
    lines=(99, 105),
    statement=r"\tfrac{d}{dt}\|dh\|^2=-\tfrac1{\tau_h}\|x_2-x_1\|^2\,w,\qquad "
              r"w=\|dy\|^2-\|dy\|\,\|y_2-y_1\|\cos\theta",
    status="holds",
    params=_rv_params(),
    notes="Sharpening: the first line of Eq 7 is exact for EVERY state (D_h, D_y), not only on the invariant manifold "
          "of Eq 19 (catalogue R0), because d|dh|^2/dt = 2 dh.(dD_h/dt) dX = -(2 g a/tau_h) (D_y dh).(dy - dY) = "
          "-(2 g a/tau_h) w. With the paper's Eq 17 (g = 1/2) this is Eq 7; with the true gradients of Eq 16 "
          "(g = 1/4, erratum E1) it is half of it (choose gradients=eq16: the check then compares with -(a/(2 tau_h)) w). "
          "The velocity is a central difference in time along the Eq 6 field (exact up to rounding: |dh|^2 is "
          "quadratic along a straight line). 'Angle': theta is the angle between dy and Delta y, so "
          "w = v - sqrt(v b) cos(theta), |w - v| <= sqrt(v b).",
    catalogue="vanrossem §2.2 R2 (R0, E1)",
    covers=("R2",),
)


def _rv_state(p):
    rng = np.random.default_rng(p.seed)
    x1, x2 = rng.standard_normal(p.dim_x), rng.standard_normal(p.dim_x)
    y1, y2 = rng.standard_normal(p.dim_y), rng.standard_normal(p.dim_y)
    Dh = p.scale * rng.standard_normal((p.hidden, p.dim_x))
    Dy = p.scale * rng.standard_normal((p.dim_y, p.hidden))
    return x1, x2, y1, y2, Dh, Dy


def _rv_outcome(p, predict):
    """Array-API path: the Eq 6 field, the reduced variables and the central difference in time (steps h and 2h
    stacked) in ``xp``."""
    xp = xv.xp_of(p)
    x1, x2, y1, y2, Dh, Dy = xv.on(xp, *_rv_state(p))
    g = tp.EQ7_FACTOR if p.gradients == "eq17" else tp.TRUE_FACTOR
    _, fDh, _ = xv.eq6_field(xp, xp.zeros(p.dim_y, dtype=xp.float64), Dh, Dy, x1, x2, y1, y2, (1.0, p.tau_h, p.tau_y), g)
    dX, dY = x2 - x1, y2 - y1
    a, b = float(xv.dot(xp, dX, dX)), float(xv.dot(xp, dY, dY))
    dh = xv.mv(xp, Dh, dX)
    dy = xv.mv(xp, Dy, dh)
    u, v = float(xv.dot(xp, dh, dh)), float(xv.dot(xp, dy, dy))
    dydY = float(xv.dot(xp, dy, dY))
    w = v - dydY

    def u_along(E):
        d = xv.mv(xp, Dh + E[..., 0][..., None, None] * fDh, dX)
        return xv.dot(xp, d, d)
    # rounding of the difference quotient: 4 eps max|u(+-h)|, |u(+-2h)| / h (evaluated_scale). A large velocity
    # (tau_h = 1.7e-4, scale = 44: |d(dh)/dt| h ~ 1e4 |dh|) makes u(+-h) ~ 1e8 u(0), whose rounding the base-point
    # term 4 eps max(u(0), 1)/h of solvers.fd missed (sweep seed 31337: refuted at 36 vs 0.15, relative 9e-13)
    (du,), (err,) = xv.fd_gradient_with_error(xp, u_along, [xp.zeros(1, dtype=xp.float64)], h=1e-4,
                                              evaluated_scale=True)
    du, err = float(du[0]), float(err[0])
    pred = predict(a, b, u, v, w, p.tau_h, p.tau_y) * (2 * g)    # Eq 7 in units of the chosen gradient factor
    cos = dydY / max(math.sqrt(v * b), 1e-300)
    w_angle = v - math.sqrt(v * b) * cos
    # error model: fd error estimate (rounding of the values the quotient subtracts; the truncation vanishes for a
    # quadratic) x10, plus the rounding of the prediction, 16 eps |a/tau_h| (|v| + |dy.dY|)
    tol_v = 10 * err + 16 * EPS * a / p.tau_h * (abs(v) + abs(dydY))
    return Outcome.from_parts(
        {"d|dh|^2/dt vs prediction": (abs(du - pred), tol_v),
         "w = v - sqrt(v b) cos(theta)": (abs(w - w_angle), 16 * EPS * (abs(v) + math.sqrt(v * b)))},
        "representational velocity along the Eq 6 field (off the invariant manifold)",
        values={"du_dt": du, "predicted": pred, "w": w, "u": u, "v": v, "a": a, "b": b, "cos_theta": cos,
                "gradient_factor": g})


@velocity.numeric(backends=("numpy", "cupy"))
def velocity_numeric(p):
    """d|dh|^2/dt along Eq 6 equals -(a/tau_h) w (times 2g) at a random, unaligned state."""
    return _rv_outcome(p, lambda a, b, u, v, w, th, ty: -a / th * w)


velocity.property(over=("seed", "dim_x", "hidden", "dim_y", "tau_h", "tau_y", "scale", "gradients"),
                  max_examples=15)


@velocity.falsifier({
    "square": "The 'square' variant of Eq 51: d|dh|^2/dt = -(a/tau_h) w^2.",
    "output_norm_only": "Velocity from |dy|^2 alone (no alignment with the targets): -(a/tau_h) v.",
    "decoder_time_constant": {"description": "tau_y in place of tau_h: -(a/tau_y) w.", "search": ("seed", "tau_y")},
}, search=("seed",), backends=("numpy", "cupy"))
def _(p, variant):
    return _rv_outcome(p, {
        "square": lambda a, b, u, v, w, th, ty: -a / th * w * w,
        "output_norm_only": lambda a, b, u, v, w, th, ty: -a / th * v,
        "decoder_time_constant": lambda a, b, u, v, w, th, ty: -a / ty * w,
    }[variant])


def _velocity_symbolic_core(variant="stated"):
    """Generic 2x2 D_h, D_y: d|dh|^2/dt + (2g a/tau_h) w expands to 0 (g = 1/2 and 1/4), no manifold assumption."""
    th = sp.Symbol("tau_h", positive=True)
    Dh = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"h{i}{j}"))
    Dy = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"y{i}{j}"))
    dX = sp.Matrix(sp.symbols("x0 x1"))
    dY = sp.Matrix(sp.symbols("t0 t1"))
    dh = Dh * dX
    dy = Dy * dh
    a = (dX.T * dX)[0]
    w = (dy.T * dy)[0] - (dy.T * dY)[0]
    bad = []
    for g in (sp.Rational(1, 2), sp.Rational(1, 4)):
        dDh = -g / th * Dy.T * (dy - dY) * dX.T
        du = 2 * (dh.T * (dDh * dX))[0]
        c_ = {"factor_2": 2, "sign_flipped": -1}.get(variant, 1)  # Eq 7's -(a/tau_h) w at g = 1/2
        if sp.expand(du + c_ * 2 * g * a / th * w) != 0:
            bad.append(f"g={g}")
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy.expand, generic 2x2 matrices", "nonzero": bad,
        "proved": "d|dh|^2/dt = -(2g a/tau_h) w for all D_h, D_y (g = 1/2: Eq 7)"},
        message="gradient factors for which the identity failed")


@velocity.symbolic(timeout=60)
def velocity_symbolic(p):
    """Generic 2x2 D_h, D_y: d|dh|^2/dt + (2g a/tau_h) w expands to 0 (g = 1/2 and 1/4), no manifold assumption."""
    return _velocity_symbolic_core()


@velocity.mutant({
    'factor_2': 'd|dh|^2/dt = -(2/tau_h)|dx|^2 w',
    'sign_flipped': 'd|dh|^2/dt = +(1/tau_h)|dx|^2 w',
}, timeout=60)
def velocity_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _velocity_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


# ===========================================================================
# 5. The intuition of §4.3 (catalogue F12)
intuition = Claim(
    id="vanrossem.structure_intuition",
    title="Intuition (§4.3): equal targets pull representations together, different targets push coincident ones apart",
    label="§4.3, l.176",
    section="4.1, 4.3",
    equation="(7)",
    lines=(176, 191),
    statement=r"\text{representations move closer when their outputs agree; with different targets and the same "
              r"representation they must move apart; this resembles rich/lazy learning}",
    status="heuristic",
    params=_rv_params(),
    notes="Qualitative. The two mechanisms have exact counterparts in the effective theory (Eq 6 off the manifold, "
          "the paper's gradient factor): (i) equal targets (Delta y = 0): w = |dy|^2 >= 0, so d|dh|^2/dt = "
          "-(a/tau_h)|dy|^2 <= 0: the representations approach while their outputs differ; (ii) different targets and "
          "coincident representations (dh = 0): d|dh|^2/dt = 0 but d^2|dh|^2/dt^2 = 2|d(dh)/dt|^2 = "
          "2 (g a/tau_h)^2 |D_y^T Delta y|^2 > 0 (g = 1/2 for Eq 7): they separate. Checked numerically on random states. The "
          "rich/lazy resemblance (l.176) is not testable beyond the limits of vanrossem.large_weight_limit and "
          "vanrossem.small_weight_limit.",
    catalogue="vanrossem §2.6 F12",
    covers=("F12",),
)


@intuition.numeric(backends=("numpy", "cupy"))
def intuition_numeric(p):
    """Delta y = 0 gives d|dh|^2/dt = -(a/tau_h)|dy|^2 <= 0; dh = 0 with Delta y != 0 gives d^2|dh|^2/dt^2 > 0."""
    xp = xv.xp_of(p)   # array-API path: every product and norm below in xp, scalars brought back
    x1, x2, y1, y2, Dh, Dy = xv.on(xp, *_rv_state(p))
    mv, dot, nrm = (lambda A, x: xv.mv(xp, A, x)), (lambda x, y: float(xv.dot(xp, x, y))), \
        (lambda x: float(xp.linalg.vector_norm(x)))
    DyT = xp.matrix_transpose(Dy)
    zero = xp.zeros(p.dim_y, dtype=xp.float64)
    g = tp.EQ7_FACTOR if p.gradients == "eq17" else tp.TRUE_FACTOR
    dX = x2 - x1
    a = dot(dX, dX)
    # (i) equal targets
    _, fDh, _ = xv.eq6_field(xp, zero, Dh, Dy, x1, x2, y1, y1, (1.0, p.tau_h, p.tau_y), g)
    dh, dhdot = mv(Dh, dX), mv(fDh, dX)
    du = 2 * dot(dh, dhdot)
    v = dot(mv(Dy, dh), mv(Dy, dh))
    pred_i = -2 * g * a / p.tau_h * v
    # (ii) coincident representations: project D_h so that D_h dX = 0
    Dh0 = Dh - xv.outer(xp, mv(Dh, dX), dX) / a
    _, fDh0, _ = xv.eq6_field(xp, zero, Dh0, Dy, x1, x2, y1, y2, (1.0, p.tau_h, p.tau_y), g)
    sdot = mv(fDh0, dX)
    d2u = 2 * dot(sdot, sdot)                          # u = |dh|^2 with dh(0) = 0: u'' = 2 |dh'|^2
    pred_ii = 2 * (g * a / p.tau_h) ** 2 * float(xp.sum(mv(DyT, y2 - y1) ** 2))
    scale_i = 2 * g * a / p.tau_h * (v + abs(du))
    # (ii) error model: sdot = -(g a/tau_h) D_y^T r with r = D_y dh - dY, evaluated at the projected dh of size
    # delta = |D_h0 dX| (not exactly 0 after rounding) with rounding c EPS per product (c = 4 x summed dims).
    # |sdot - sdot_exact| <= k |D_y| (|D_y| delta + c EPS (|D_y||D_h0||dX| + |dY|)) + k c EPS |D_y| |r| =: e_s,
    # so |d2u - 2|sdot_exact|^2| <= 2 (2|sdot| e_s + e_s^2); the prediction itself carries k^2 c EPS |D_y||dY|
    # x 4 |D_y^T dY|.  Relative to pred_ii this is amplified by |D_y||dY| / |D_y^T dY| when D_y^T dY cancels.
    k = g * a / p.tau_h
    c = 4 * (p.dim_x + p.hidden + p.dim_y)
    nDy, ndY, ndX = nrm(Dy), nrm(y2 - y1), math.sqrt(a)
    delta = nrm(mv(Dh0, dX))
    r0 = mv(Dy, mv(Dh0, dX)) - (y2 - y1)
    e_s = k * nDy * (nDy * delta + c * EPS * (nDy * nrm(Dh0) * ndX + ndY)) + k * c * EPS * nDy * nrm(r0)
    ns = nrm(sdot)
    tol_ii = 2 * (2 * ns * e_s + e_s ** 2) + 4 * k ** 2 * c * EPS * nDy * ndY * nrm(mv(DyT, y2 - y1))
    return Outcome.from_parts(
        {"(i) du/dt + (2g a/tau_h)|dy|^2 (equal targets)": (abs(du - pred_i), 32 * EPS * max(scale_i, 1e-300)),
         "(i) du/dt <= 0": (max(du, 0.0), 32 * EPS * max(scale_i, 1e-300)),
         "(ii) u'' at dh = 0 vs 2 (g a/tau_h)^2 |D_y^T dY|^2": (abs(d2u - pred_ii), max(tol_ii, 1e-300)),
         "(ii) u'' > 0": (0.0 if d2u > 0 else 1.0, 0.5)},
        "the two mechanisms of §4.3 in the effective theory",
        values={"du_dt_equal_targets": du, "d2u_dt2_coincident": d2u, "dh_after_projection": delta})


intuition.property(over=("seed", "dim_x", "hidden", "dim_y", "tau_h", "tau_y", "scale", "gradients"),
                   max_examples=12)


# ===========================================================================
# 6. Typos and notation slips (catalogue E12)
_SEED_NAME = DOCUMENTS["vanrossem"][0]


def _seed_lines():
    """The seed file's lines (1-based list with a dummy 0), or None when it is not on this machine."""
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.environ.get("THEOREMS_SEEDS", ""), "/work/shared/seeds",
             os.path.join(here, "..", "..", "..", "shared", "seeds"), os.path.join(here, "..", "..", "seeds")]
    for d in cands:
        f = os.path.join(d, _SEED_NAME) if d else ""
        if f and os.path.exists(f):
            with open(f, encoding="utf-8") as fh:
                return [""] + fh.read().split("\n")
    return None


def _latex_of(line):
    """The LaTeX source of a display line: from its first backslash (the Unicode rendering before it has none) to
    the MathML word dump after it."""
    i = line.find("\\")
    if i < 0:
        return ""
    ends = [j for j in (line.find(m, i) for m in ("italic_", "start_ROW", "start_ARG", "roman_", "start_POST",
                                                     "divide start")) if j > 0]
    return line[i:min(ends)] if ends else line[i:]


def _paren_balance(tex):
    tex = tex.replace(r"\left(", "(").replace(r"\right)", ")")
    return tex.count("(") - tex.count(")")


def _typo_eq9_parentheses(L):
    """l.130: Eq 9 closes with ')))': one ')' too many."""
    tex = _latex_of(L[130])
    stated = _paren_balance(tex)
    corrected = _paren_balance(tex.replace("))),", ")),"))
    return abs(stated), abs(corrected), {"eq9_latex_tail": tex[-60:], "paren_excess": -stated}


def _typo_y0(L):
    """l.130, l.331, l.353: 'y(0)' stands for ybar(0). Text: every Eq 9/18/22 uses (y(0) - (y_2+y_1)/2). Numeric:
    the Eq 9 loss at t = 0 equals Eq 16 with y(0) := ybar(0), not with y(0) := the prediction at x_1 or x_2."""
    hits = {ln: _latex_of(L[ln]).count(r"(y(0)-\frac{y_{2}+y_{1}}{2})") for ln in (130, 331, 353)}
    rng = np.random.default_rng(12)
    x1, x2, y1, y2 = rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2)
    Dh, Dy, ybar = rng.standard_normal((3, 2)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    L16 = _loss16(ybar, Dh, Dy, x1, x2, y1, y2)
    dY = y2 - y1
    dy = Dy @ Dh @ (x2 - x1)
    w, v, b = float(dy @ dy - dy @ dY), float(dy @ dy), float(dY @ dY)

    def eq9(y0):
        m = y0 - 0.5 * (y1 + y2)
        return 0.5 * float(m @ m) + 0.25 * (w + 0.5 * (b - v))
    pred_x1 = ybar - 0.5 * dy                      # the literal y(0): a network output (at x_1)
    tol = 64 * EPS * (abs(L16) + v + b)
    corrected = abs(eq9(ybar) - L16)
    stated = abs(eq9(pred_x1) - L16)
    missing = sum(1 for c in hits.values() if c < 1)
    return (stated / tol if stated > tol else 0.0) + missing, (corrected / tol if corrected > tol else 0.0) + missing, {
        "y0_occurrences": hits, "eq9_with_ybar0": eq9(ybar), "eq9_with_prediction_at_x1": eq9(pred_x1),
        "eq16": L16}


def _typo_mnist(L):
    """l.542-543: Table 2 rows 'MINST' for the MNIST data set of App. B.4."""
    table = " ".join(L[532:544])
    stated = table.count("MINST")
    fixed = table.replace("MINST", "MNIST")
    return stated, fixed.count("MINST") + (0 if "MNIST" in " ".join(L[555:560]) else 1), {
        "table2_minst_count": stated}


def _table2(L):
    rows = {}
    for ln in range(535, 544):
        m = re.match(r"(.+?)\s+(leaky relu|tanh|relu|none)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", L[ln])
        if m:
            rows[m.group(1).strip()] = {"nonlinearity": m.group(2), "gain": float(m.group(3)),
                                        "lr": float(m.group(4)), "epochs": int(m.group(5)),
                                        "units": int(m.group(6)), "hidden": int(m.group(7)), "line": ln}
    return rows


def _typo_layer_counts(L):
    """Blob network: Fig 8 (l.211) and B.3 (l.553) say 5-layer, Fig 13 (l.612) says 4-layer, Table 2 says 4 hidden
    layers. Stated: the counts agree. Corrected: each count is hidden (4) or hidden + 1 Linear layers (5)."""
    rows = _table2(L)
    hidden = {r["hidden"] for k, r in rows.items() if k.startswith("Blobs")}
    c8 = re.search(r"(\d+)-layer, tanh", L[211])
    c3 = re.search(r"(\d+) layer fully connected", L[553])
    c13 = re.search(r"(\d+)-layer, tanh", L[612])
    counts = [int(c.group(1)) for c in (c8, c3, c13) if c]
    if len(counts) < 3 or len(hidden) != 1:
        return 1.0, 1.0, {"parse": "failed"}
    H = hidden.pop()
    stated = len(set(counts + [H])) - 1                     # distinct values beyond one
    corrected = sum(1 for c in counts if c not in (H, H + 1))
    return stated, corrected, {"fig8_blobs_layers": counts[0], "b3_layers": counts[1], "fig13_layers": counts[2],
                               "table2_hidden": H}


def _typo_units(L):
    """Fig 4 caption (l.145): '100 units' for the MNIST net; Table 2: 200 units."""
    m = re.search(r"(\d+) units", L[145])
    rows = _table2(L)
    units = {r["units"] for k, r in rows.items() if k.startswith("MINST") or k.startswith("MNIST")}
    if not m or len(units) != 1:
        return 1.0, 1.0, {"parse": "failed"}
    u = units.pop()
    return float(int(m.group(1)) != u), 0.0, {"fig4_units": int(m.group(1)), "table2_units": u}


def _typo_trace_tau(L):
    """Eq 30 (l.391) names the trace of the Jacobian 'tau', the letter of the time constants tau_h, tau_y. Symbolic
    part of the corrected reading: the right-hand side of Eq 30 is the trace of the Eq 29 Jacobian at u*."""
    tex = _latex_of(L[391])
    stated = int(tex.startswith(r"\tau=") and r"\tau_{y}" in tex)
    th, ty, a = sp.symbols("tau_h tau_y a", positive=True)
    AH, AL = sp.Symbol("A_H", real=True), sp.Symbol("A_L", positive=True)
    ustar = AH / 2 + sp.sqrt(AH ** 2 / 4 + AL ** 2)
    v = th / (ty * a) * ustar * (ustar - AH)
    J22 = -sp.Rational(3, 2) * ustar / ty - a / (2 * th) * v / ustar   # d(dw/dt)/dw at w = 0 (Eq 7 on Eq 24)
    eq30 = -(AH / 2 + sp.sqrt(AH ** 2 + 4 * AL ** 2)) / ty
    corrected = int(sp.simplify(sp.expand(J22 - eq30)) != 0)
    return stated, corrected, {"eq30_lhs": tex[:5]}


def _typo_decoder_argument(L):
    """l.81: 'y_psi(x_i)' for y_psi(h_phi(x_i)); y_psi is a map H -> Y (l.61), so the printed argument is ill-typed."""
    tex = _latex_of(L[81])
    stated = tex.count(r"y_{\psi}(x_{i})")
    return stated, 0 if r"y_{\psi}(h_{\phi}(" in tex else 1, {"printed_occurrences": stated}


def _typo_squared_distance(L):
    """l.170-174: 'the final representational distance converges to A_high/A_low' means the SQUARED distance
    (Eq 10 has |dh|^2 on the left). Checked on the catalogue's exact example (u_inf = 5/6): the converged |dh|^2,
    not |dh|, equals Eq 10."""
    # NumPy Dormand-Prince (no Numba compile for one small run); rtol 1e-10
    res = tp.solve_to_equilibrium(0.3, 0.2, 0.2, 0.25, 1.0, 1.0, 4.0, backend="numpy", rtol=1e-10)
    AH, AL = tp.a_high(0.3, 0.2, 0.25, 1.0, 4.0), tp.a_low(0.25, 1.0, 1.0, 4.0)
    u_star = tp.eq10(AH, AL)
    # error model (as vanrossem.two_point_fixed_point): drift of the conserved A_high + 2 x the Newton distance
    # + the local error 10 rtol u*
    tol = abs(res["AH_end"] - res["AH0"]) + 2 * abs(res["du"]) + 1e-9 * u_star
    text_ok = "||dh||^{2}=\\frac{1}{2}A_{\\text{high}}" in L[158]
    stated, corrected = abs(math.sqrt(res["u"]) - u_star) / tol, abs(res["u"] - u_star) / tol
    return (stated if stated > 1 else 0.0, (corrected if corrected > 1 else 0.0) + (0 if text_ok else 1),
            {"dh2_inf": res["u"], "dh_inf": math.sqrt(res["u"]), "eq10": u_star})


_TYPOS = {
    "eq9_parentheses": _typo_eq9_parentheses,
    "y0_means_ybar": _typo_y0,
    "decoder_argument": _typo_decoder_argument,
    "trace_named_tau": _typo_trace_tau,
    "squared_distance": _typo_squared_distance,
    "mnist_spelling": _typo_mnist,
    "blob_layer_counts": _typo_layer_counts,
    "mnist_units": _typo_units,
}

typos = Claim(
    id="vanrossem.notation_typos",
    title="Typos and notation slips (Eq 9 brackets, y(0), y_psi(x_i), trace 'tau', squared distance, MINST, "
          "layer and unit counts)",
    label="E12",
    section="2.2, 3, 4.1, A.1, A.3, B, C.3",
    equation="(5), (9), (18), (22), (30); Tables 2",
    lines=(81, 612),
    statement=r"\text{as printed: Eq 9 }\ldots\|dy\|^2)))\text{, }y(0)\text{ in Eqs 9, 18, 22, }y_\psi(x_i)\text{ (l.81), "
              r"}\tau=\mathrm{tr}J\text{ (Eq 30), 'distance' converges to }A\text{, 'MINST', 5-layer vs 4-layer vs 4 "
              r"hidden, 100 vs 200 units}",
    status="erratum",
    corrected=r"\text{one ')' fewer in Eq 9; }y(0)\to\bar y(0);\ y_\psi(x_i)\to y_\psi(h_\phi(x_i));\ "
              r"\mathrm{tr}J\text{ named apart from }\tau_h,\tau_y;\ \|dh(\infty)\|^2\to A;\ \text{MNIST; blob net = 4 "
              r"hidden = 5 Linear layers; one unit count}",
    params=[Param.choice("typo", "all", ["all"] + list(_TYPOS), "which slip to check (all: every one)")],
    notes="Each slip is read from the seed text (its LaTeX source) and checked in its printed and its corrected "
          "reading; where an equation is involved the reading is also checked numerically or symbolically "
          "(y(0) := ybar(0) makes Eq 9 equal Eq 16 at t = 0; Eq 30's right side is the trace of the Eq 29 Jacobian; "
          "the converged |dh|^2, not |dh|, equals Eq 10). Residual of the corrected check = number of corrected "
          "readings that fail; of the 'stated' falsifier = number of printed readings that are inconsistent (each "
          "one alone refutes it). Not encoded: the eigenvector named (a, b) at l.405 (consistent within the paper, "
          "it only clashes with the catalogue's a, b); '|dh|^6 = u^3' at l.367 (notation; Eq 25 itself is checked by "
          "vanrossem.conservation_law). Inconclusive if the seed file is not on this machine.",
    catalogue="vanrossem §4 E12",
    covers=("E12",),
)


def _typo_outcome(p, which):
    L = _seed_lines()
    if L is None:
        return inconclusive(f"seed file {_SEED_NAME} not found (set THEOREMS_SEEDS to its directory)")
    names = list(_TYPOS) if p.typo == "all" else [p.typo]
    per, values = {}, {}
    for n in names:
        stated, corrected, vals = _TYPOS[n](L)
        per[n] = {"stated": float(stated), "corrected": float(corrected)}
        values[n] = vals
    if which == "stated":
        # the printed text is refuted when EVERY selected slip is inconsistent as printed
        consistent = [n for n in names if per[n]["stated"] <= 0]
        return Outcome(residual=float(len(names) - len(consistent)), tolerance=float(len(names) - 1),
                       values={"per_typo": per, "printed_consistent": consistent, **values},
                       message=f"{len(names) - len(consistent)} of {len(names)} printed readings inconsistent")
    failing = [n for n in names if per[n]["corrected"] > 0]
    return Outcome(residual=float(len(failing)), tolerance=0.0,
                   values={"per_typo": per, "corrected_failing": failing, **values},
                   message=f"{len(failing)} of {len(names)} corrected readings fail")


@typos.numeric
def typos_numeric(p):
    """Every corrected reading is consistent with the seed text and the mathematics."""
    return _typo_outcome(p, "corrected")


@typos.falsifier("stated")
def typos_stated(p):
    """The printed readings: each one is inconsistent (refuted when all selected slips are)."""
    return _typo_outcome(p, "stated")
