"""§2.2 Two Point Interaction (seed l.75-93, with App. A.1 l.313-317): the linearisation about the input mean
(Eq 5/15, l.79-83, with the cubic sharpening), the modelling assumption Eq 6 as gradient flow of Eq 16 (l.85-91)
and the equivalence with a two-layer linear network with bias (l.93).
Claims: ``vanrossem.linearisation_about_mean``, ``vanrossem.effective_gradient_flow``,
``vanrossem.two_layer_linear_equivalence``.

Conventions: :mod:`theorems.vanrossem._common`; numbers quoted in comments come from the catalogue.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import xp_vanrossem as xv
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.vanrossem._common import EPS, FLOOR
from theorems.vanrossem._two_point_instances import _lin_instance, _net_loss_grads


# ===========================================================================
# 4. The linearisation about the mean (Eq 5/15, catalogue M5 with the cubic sharpening)
def _mlp_params(seed, dim_x, width, depth):
    """The layers of :func:`_mlp` (same seeded draws) and the generator, positioned after them."""
    rng = np.random.default_rng(seed)
    dims = [dim_x] + [width] * depth
    Ws = [rng.standard_normal((dims[i + 1], dims[i])) / math.sqrt(dims[i]) * 1.5 for i in range(depth)]
    bs = [0.3 * rng.standard_normal(dims[i + 1]) for i in range(depth)]
    return Ws, bs, rng


def _mlp_batch(xp, Ws, bs, act, X):
    """``h`` and its Jacobian at every row of the stack ``X`` (shape ``(B, dim_x)``), in ``xp``: the forward pass
    and the chain rule of :func:`_mlp`, batched over the points."""
    if act == "tanh":
        f, df = xp.tanh, (lambda z: 1 - xp.tanh(z) ** 2)
    else:
        f, df = (lambda z: xp.logaddexp(xp.zeros_like(z), z)), (lambda z: 1 / (1 + xp.exp(-z)))
    J = xp.broadcast_to(xp.eye(X.shape[-1], dtype=xp.float64), (X.shape[0], X.shape[-1], X.shape[-1]))
    for W, bb in zip(Ws, bs):
        z = X @ xp.matrix_transpose(W) + bb
        J = df(z)[..., None] * (W @ J)
        X = f(z)
    return X, J


def _validate_lin(p):
    if p.eps_max <= 0:
        raise ParamError("eps_max must be > 0")


linearisation = Claim(
    id="vanrossem.linearisation_about_mean",
    title="Linearisation about the input mean: the difference is exact to third order",
    label="Eq 5 / Eq 15",
    section="2.2, A.1",
    equation="(5), (15)",
    lines=(79, 83),
    statement=r"h(x_i)\approx h(\tfrac{x_1+x_2}2)+\tfrac12D_h(x_i-x_{\neg i}),\quad "
              r"y(h(x_i))\approx y(h(\tfrac{x_1+x_2}2))+\tfrac12D_yD_h(x_i-x_{\neg i})",
    status="holds",
    params=[
        Param.seed("seed of the random smooth map and the direction"),
        Param.int("dim_x", 3, 1, 50, "input dimension", search=(1, 6)),
        Param.int("width", 20, 1, 500, "width of each hidden layer", search=(2, 30)),
        Param.int("depth", 2, 1, 10, "number of layers of h (y is one more layer on top)", search=(1, 4)),
        Param.choice("act", "tanh", ["tanh", "softplus"], "smooth nonlinearity"),
        # eps_max <= 0.1: the slope error model (next Taylor order, <= 0.15) is stated for eps_max <= 0.1; the former
        # 0.5 let sweep 777001 draw 0.171, where a width-2 depth-7 map's slope was 2.235 vs 2 +- 0.15 (refuted)
        Param.float("eps_max", 0.05, 0.0, 0.1, "largest |Delta x| (then eps_max/2, /4, /8); <= 0.1: the statement is "
                    "asymptotic in |Delta x| and the slopes' error model holds there", low_open=True, search=(0.02, 0.1)),
    ],
    validate=_validate_lin,
    notes="Sharpening (catalogue M5): the pointwise error is O(|Delta x|^2) but the difference h(x_2) - h(x_1) - "
          "D_h Delta x, the only thing the theory uses, is O(|Delta x|^3) (even orders cancel in a centred expansion). "
          "Checked as local log-log slopes of the errors over four halvings of |Delta x|, for h and for y o h "
          "(y = one more smooth layer to a 2-D output, D_y D_h = its Jacobian at the mean by the chain rule). "
          "Error model of a slope: the next Taylor order changes it by O(eps_max^2 |D^5h|/|D^3h|), bounded by 0.15 "
          "for these unit-scale maps at eps_max <= 0.1 (the declared range: it was 0.5, and sweep 777001 refuted a "
          "draw at 0.171); a halving whose slope rounding could move by more than 0.05 (rounding model "
          "r = sqrt(fan_in (depth + 2)) eps |h|, see the check) is left out, and the check is inconclusive only when "
          "fewer than two halvings per series remain (eps_max too small, or a degenerate cubic term).",
    catalogue="vanrossem §2.1 M5",
    covers=("M5",),
)


def _lin_slopes(p, centre="mean"):
    """Array-API path: the random map is drawn on the host; its forward pass and Jacobian are evaluated in ``xp`` on
    the stack of all the points of the four halvings at once (x_1, x_2, the expansion centres and the mean)."""
    xp = xv.xp_of(p)
    Ws, bs, rng = _mlp_params(p.seed, p.dim_x, p.width, p.depth)
    Wy = rng.standard_normal((2, p.width)) / math.sqrt(p.width)
    xbar = rng.standard_normal(p.dim_x) * 0.5
    d = rng.standard_normal(p.dim_x)
    d /= np.linalg.norm(d)
    eps = p.eps_max / 2.0 ** np.arange(4)
    X1, X2 = xbar - eps[:, None] * d / 2, xbar + eps[:, None] * d / 2
    C = np.broadcast_to(xbar, X1.shape) if centre == "mean" else X1
    k = len(eps)
    P = xv.on(xp, np.concatenate([X1, X2, C, xbar[None, :]]))
    Wsx = [xv.on(xp, W) for W in Ws]
    bsx = [xv.on(xp, b) for b in bs]
    Wyx = xv.on(xp, Wy)
    hP, JP = _mlp_batch(xp, Wsx, bsx, p.act, P)
    zy = hP @ xp.matrix_transpose(Wyx)
    yP = xp.tanh(zy)
    JyP = (1 - xp.tanh(zy) ** 2)[..., None] * (Wyx @ JP)
    h1, h2, hc, hm = hP[:k, :], hP[k:2 * k, :], hP[2 * k:3 * k, :], hP[3 * k:, :]
    y1, y2 = yP[:k, :], yP[k:2 * k, :]
    Jh, Jy, Jm = JP[2 * k:3 * k, ...], JyP[2 * k:3 * k, ...], JP[3 * k:, ...]
    dX = P[k:2 * k, :] - P[:k, :]
    nrm = lambda x: xv.asnumpy(xp.linalg.vector_norm(x, axis=-1))  # noqa: E731
    diff_h = nrm(h2 - h1 - xv.mv(xp, Jh, dX))
    diff_y = nrm(y2 - y1 - xv.mv(xp, Jy, dX))
    point = nrm(h1 - hm - 0.5 * xv.mv(xp, Jm, P[:k, :] - P[k:2 * k, :]))
    del hc
    sl = lambda err: np.log2(np.array(err[:-1]) / np.array(err[1:]))  # noqa: E731
    scale = (float(max(nrm(h1).max(), nrm(h2).max())), float(max(nrm(y1).max(), nrm(y2).max())))
    return eps, np.array(diff_h), np.array(diff_y), np.array(point), sl(diff_h), sl(diff_y), sl(point), scale


def _lin_outcome(p, centre="mean"):
    eps, dh, dy, pt, sh, sy, sp_, (hs, ys) = _lin_slopes(p, centre)
    # h(x2) - h(x1) - J (x2 - x1) carries the rounding of h and y themselves, not a multiple of |Delta x|.  Rounding
    # model of an error e_k: r = sqrt(fan_in (depth + 1)) eps_mach |h|_2 (each layer's affine map rounds its fan_in
    # products with a random-walk error, the depth + 1 maps add in quadrature through unit-scale Jacobians); it moves
    # a slope log2(e_k / e_k+1) by at most delta_k = (r / e_k + r / e_k+1) / ln 2.  A halving whose delta_k > 0.05 is
    # left out (rounding, not the Taylor term, would decide it); the others get tolerance 0.15 + delta_k.  At least
    # two slopes per series must remain, else inconclusive (eps_max too small, or a degenerate cubic term).  This
    # replaced a fixed gate min(e) >= 1e4 eps_mach that left 6 of 20 draws of sweep 4100433 inconclusive although
    # their slopes were 3.000 +- 0.015 down to errors of 4.5e-14.
    r0 = math.sqrt(max(p.width, p.dim_x) * (p.depth + 2)) * EPS
    parts, kept = {}, {}
    for name, err, slopes, target, sc in (("h difference error", dh, sh, 3, hs), ("y o h difference error", dy, sy, 3, ys),
                                          ("pointwise error", pt, sp_, 2, hs)):
        r = r0 * max(sc, 1.0)
        delta = (r / err[:-1] + r / err[1:]) / math.log(2)
        ok = np.flatnonzero(delta <= 0.05)
        kept[name] = ok.tolist()
        if ok.size < 2:
            return inconclusive(f"{name} at rounding level: fewer than two halvings of |Delta x| = {eps[0]:.3g} / 2^k "
                                f"rise above the rounding model r = {r:.2g} (eps_max too small for the Taylor term, or "
                                "a degenerate cubic term)", errors=err.tolist())
        dev = np.abs(slopes[ok] - target) - delta[ok]
        parts[f"slope of {name} - {target}"] = (max(float(np.max(dev)), 0.0), 0.15)
    return Outcome.from_parts(
        parts,
        f"local log-log slopes over |Delta x| = {eps[0]:.3g} / 2^k (expansion about {centre})",
        values={"halvings_used": kept, "rounding_model_r0": r0, "eps": eps.tolist(), "difference_error_h": dh.tolist(), "difference_error_y": dy.tolist(),
                "pointwise_error_h": pt.tolist(), "slopes_h": sh.tolist(), "slopes_y": sy.tolist(),
                "slopes_pointwise": sp_.tolist(),
                "plot": {"kind": "loglog", "x": eps.tolist(), "series": {"difference (h)": dh.tolist(),
                                                                         "pointwise (h)": pt.tolist()},
                         "xlabel": "|Delta x|", "ylabel": "error", "title": "Eq 5: cubic difference, quadratic point"}})


@linearisation.numeric(backends=("numpy", "cupy"))
def linearisation_numeric(p):
    """Difference error slope 3 (h and y o h) and pointwise error slope 2 on a random smooth MLP."""
    return _lin_outcome(p)


linearisation.property(over=("seed", "dim_x", "width", "depth", "act", "eps_max"), max_examples=15)


@linearisation.falsifier("expand_about_x1", search=("seed",), backends=("numpy", "cupy"))
def linearisation_about_x1(p):
    """Jacobian taken at x_1 instead of the mean: the difference error is only O(|Delta x|^2) (slope 2, not 3)."""
    return _lin_outcome(p, centre="x1")


def _linearisation_symbolic_core(variant="stated"):
    """Scalar Taylor check: for h = sum c_k x^k (k <= 5), h(m+e/2) - h(m-e/2) - h'(m) e has no e^2 term and its e^3
    coefficient is h'''(m)/24; the pointwise error h(m-e/2) - h(m) + h'(m) e/2 has e^2 coefficient h''(m)/8."""
    m, e = sp.symbols("m e")
    c = sp.symbols("c0:6")
    x = sp.Symbol("x")
    hh = sum(ci * x ** k for k, ci in enumerate(c))
    h = lambda z: hh.subs(x, z)  # noqa: E731
    d1 = sp.diff(hh, x).subs(x, m)
    # x_1 = m - e/2, x_2 = m + e/2: the statement's coefficient c of D_h (x_i - x_-i) is 1/2
    c_ = {"factor_one": 1, "sign_flipped": -sp.Rational(1, 2)}.get(variant, sp.Rational(1, 2))
    diff = sp.expand(h(m + e / 2) - h(m - e / 2) - 2 * c_ * d1 * e)
    point = sp.expand(h(m - e / 2) - h(m) + c_ * d1 * e)
    checks = {"pointwise e^1": point.coeff(e, 1),"e^0": diff.coeff(e, 0), "e^1": diff.coeff(e, 1), "e^2": diff.coeff(e, 2),
              "e^3 - h'''/24": sp.expand(diff.coeff(e, 3) - sp.diff(hh, x, 3).subs(x, m) / 24),
              "e^4": diff.coeff(e, 4),
              "pointwise e^2 - h''/8": sp.expand(point.coeff(e, 2) - sp.diff(hh, x, 2).subs(x, m) / 8)}
    bad = [k for k, v in checks.items() if v != 0]
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy.expand of a quintic", "nonzero": bad,
        "proved": "centred difference error = h'''(m) e^3/24 + O(e^5); pointwise error = h''(m) e^2/8 + O(e^3)"},
        message="coefficients that did not vanish")


@linearisation.symbolic(timeout=60)
def linearisation_symbolic(p):
    """Scalar Taylor check: for h = sum c_k x^k (k <= 5), h(m+e/2) - h(m-e/2) - h'(m) e has no e^2 term and its e^3
    coefficient is h'''(m)/24; the pointwise error h(m-e/2) - h(m) + h'(m) e/2 has e^2 coefficient h''(m)/8."""
    return _linearisation_symbolic_core()


@linearisation.mutant({
    'factor_one': 'h(x_i) ~ h(xbar) + D_h (x_i - x_-i) (the 1/2 dropped)',
    'sign_flipped': 'h(x_i) ~ h(xbar) - 1/2 D_h (x_i - x_-i)',
}, timeout=60)
def linearisation_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _linearisation_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


@linearisation.reproduction
def linearisation_reproduction(p):
    """Catalogue M5 (b): ratios per halving of the difference error ~ 8 (7.9, 8.0, 8.0) and of the pointwise error
    ~ 4 (4.06, 4.04, 4.02) for a random 3 -> 20 -> 20 tanh map at |Delta x| = 0.4 ... 0.05 (compared to 1 digit:
    the map is a different random draw)."""
    from theorems.claim import Params
    p = Params(seed=0, dim_x=3, width=20, depth=2, act="tanh", eps_max=0.4)
    eps, dh, dy, pt, sh, sy, sp_, _ = _lin_slopes(p)
    rd, rp = dh[:-1] / dh[1:], pt[:-1] / pt[1:]
    return Outcome.from_parts({"difference ratio at 0.1 -> 0.05 vs 8.0": (abs(rd[-1] - 8.0), 0.5),
                               "pointwise ratio at 0.1 -> 0.05 vs 4.02": (abs(rp[-1] - 4.02), 0.25)},
                              "catalogue M5 halving ratios", values={"difference_ratios": rd.tolist(),
                                                                     "pointwise_ratios": rp.tolist()})


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
          "vanrossem.two_layer_linear_equivalence.) Consequences of Eq 6 are tested in the modules of §2.3-§4.6 and "
          "App. A (sec2_3_reduction.py ... appA5_A6_lazy_random_features.py).",
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
# 5. The effective theory is a two-layer linear network with bias (l.93, catalogue M7)
linear_net = Claim(
    id="vanrossem.two_layer_linear_equivalence",
    title="The effective theory is a two-layer linear network with an output bias on centred inputs",
    label="l.93",
    section="2.2",
    equation="(5), (6), (16)",
    lines=(93, 93),
    statement=r"\text{the effective theory (Eqs 5-6) is mathematically the same as a two layer linear network with bias "
              r"and differing learning rates for each of the layers}",
    status="holds",
    params=[
        Param.seed("seed of the parameters and the two data points"),
        Param.int("dim_x", 3, 1, 50, "input dimension", search=(1, 6)),
        Param.int("hidden", 4, 1, 200, "dimension of the representation H", search=(1, 8)),
        Param.int("dim_y", 2, 1, 50, "output dimension", search=(1, 5)),
    ],
    notes="Identification: first-layer weight W_1 = D_h, second-layer weight W_2 = D_y, output bias b_2 = ybar, inputs "
          "centred at the mean (x_i - xbar = +-Delta x/2). Checked: the Eq 16 loss (1/2 x mean over the 2 points) "
          "equals the network's MSE loss, and the network's backprop gradients equal the effective-theory gradients "
          "1/4 D_y^T(dy - Delta y)Delta x^T, 1/4 (dy - Delta y) dh^T, ybar - (y_1 + y_2)/2 (catalogue G1 / erratum E1), "
          "so gradient flow with per-layer rates 1/tau_h, 1/tau_y, 1/tau_ybar is Eq 6. Falsifier: the same network on "
          "uncentred inputs (no first-layer bias) is not the effective theory.",
    catalogue="vanrossem §2.1 M7 (G1)",
    covers=("M7",),
)


def _linear_outcome(p, centred=True):
    """Array-API path: the effective theory's loss and gradients and the network's forward pass and backprop on
    the two data points, all in ``xp``; only the norms of the differences come back."""
    xp = xv.xp_of(p)
    Dh, Dy, yb, X, Y = xv.on(xp, *_lin_instance(p))
    mv, nrm = (lambda A, x: xv.mv(xp, A, x)), (lambda x: float(xp.linalg.vector_norm(x)))
    dX, dY = X[1, :] - X[0, :], Y[1, :] - Y[0, :]
    dh = mv(Dh, dX)
    dy = mv(Dy, dh)
    # the effective theory (Eqs 5, 16) and its gradients (Eq 17 with the correct factor 1/4)
    pred = [yb - 0.5 * dy, yb + 0.5 * dy]
    L_eff = 0.25 * sum(float(xp.sum((pr - Y[i, :]) ** 2)) for i, pr in enumerate(pred))
    g_h = 0.25 * xv.outer(xp, mv(xp.matrix_transpose(Dy), dy - dY), dX)
    g_y = 0.25 * xv.outer(xp, dy - dY, dh)
    g_b = yb - 0.5 * (Y[0, :] + Y[1, :])
    Xin = X - xp.mean(X, axis=0) if centred else X
    L_net, n_h, n_y, n_b = _net_loss_grads(xp, Dh, Dy, yb, Xin, Y)
    L_net = float(L_net)
    # rounding: every quantity is a sum of products of at most 4 factors of the data: 64 eps times the sum of
    # the absolute values of the terms (bounded by the products of the norms)
    s = (1 + nrm(Dh) * nrm(Dy)) * (1 + nrm(X)) + nrm(Y) + nrm(yb)
    tol = 64 * EPS * s * s * max(p.dim_x, p.hidden, p.dim_y)
    return Outcome.from_parts(
        {"loss": (abs(L_eff - L_net), tol), "dL/dD_h": (nrm(g_h - n_h), tol),
         "dL/dD_y": (nrm(g_y - n_y), tol), "dL/dybar": (nrm(g_b - n_b), tol)},
        f"effective theory vs two-layer linear network ({'centred' if centred else 'raw'} inputs)",
        values={"L_effective": L_eff, "L_network": L_net, "scale": s})


@linear_net.numeric(backends=("numpy", "cupy"))
def linear_net_numeric(p):
    """Loss and gradients of the effective theory = those of the two-layer linear network with output bias."""
    return _linear_outcome(p)


linear_net.property(over=("seed", "dim_x", "hidden", "dim_y"), max_examples=15)


@linear_net.falsifier("uncentred_inputs", search=("seed",), backends=("numpy", "cupy"))
def linear_net_uncentred(p):
    """The same network fed the raw (uncentred) inputs: its loss and gradients differ from the effective theory."""
    return _linear_outcome(p, centred=False)


def _linear_net_symbolic_core(variant="stated"):
    """2x2x2 symbolic instance: Eq 16 loss - network loss and the three gradient differences expand to 0."""
    Dh = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"h{i}{j}"))
    Dy = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"y{i}{j}"))
    yb = sp.Matrix(2, 1, lambda i, j: sp.Symbol(f"b{i}"))
    x = [sp.Matrix(2, 1, lambda i, j, k=k: sp.Symbol(f"x{k}{i}")) for k in (1, 2)]
    y = [sp.Matrix(2, 1, lambda i, j, k=k: sp.Symbol(f"t{k}{i}")) for k in (1, 2)]
    xbar = (x[0] + x[1]) / 2
    half = 1 if variant == "no_half" else sp.Rational(1, 2)
    eff = [yb + Dy * Dh * (x[i] - x[1 - i]) * half for i in (0, 1)]          # Eq 5
    net = [Dy * (Dh * (x[i] - xbar)) + yb for i in (0, 1)]                 # centred two-layer net
    L = lambda preds: sum(((pr - t).T * (pr - t))[0] for pr, t in zip(preds, y)) / 4  # noqa: E731
    Le, Ln = L(eff), L(net)
    params = list(Dh) + list(Dy) + list(yb)
    nonzero = int(sp.expand(Le - Ln) != 0)
    dX, dY = x[1] - x[0], y[1] - y[0]
    dy = Dy * Dh * dX
    g_h = (Dy.T * (dy - dY) * dX.T) / (2 if variant == "gradient_half" else 4)
    nonzero += sum(1 for i in range(2) for j in range(2) if sp.expand(sp.diff(Ln, Dh[i, j]) - g_h[i, j]) != 0)
    nonzero += sum(1 for k in params if sp.expand(sp.diff(Le, k) - sp.diff(Ln, k)) != 0)
    return Outcome(residual=nonzero, tolerance=0, values={
        "method": "sympy.expand", "instance": "dim_x = hidden = dim_y = 2",
        "proved": "L_Eq16(D_h, D_y, ybar) = MSE of f(x) = D_y D_h (x - xbar) + ybar as polynomials; equal gradients; "
                  "dL/dD_h = 1/4 D_y^T (dy - Delta y) Delta x^T"},
        message="entries that did not expand to zero")


@linear_net.symbolic(timeout=60)
def linear_net_symbolic(p):
    """2x2x2 symbolic instance: Eq 16 loss - network loss and the three gradient differences expand to 0."""
    return _linear_net_symbolic_core()


@linear_net.mutant({
    'no_half': 'Eq 5 without the 1/2: ybar + D_y D_h (x_i - x_-i)',
    'gradient_half': 'dL/dD_h = 1/2 D_y^T (dy - Delta y) Delta x^T (the printed Eq 17 factor, E1)',
}, timeout=60)
def linear_net_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _linear_net_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out
