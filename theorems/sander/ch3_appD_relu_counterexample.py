"""Chapter 3, App 3.D "Counter-example for the ReLU case" (seed l.2756-2788): ReLU breaks smoothness in
depth (``sander.relu_counterexample``, with erratum E14 in its flow equation, l.2775-2779).

Catalogue sander_part1 §2.9 (D3.1), §4 E14.  Conventions as in :mod:`theorems.sander._resnet_harness` (GF time = iterations x
eta; gap ``max_k |Z_{k+1}-Z_k|_F``).  The App. 3.D network is the q = m = 1 case of (3.3) with ``V_k = 1`` frozen,
depth ``2L``: ``h_{k+1} = h_k + ReLU(w_{k+1} h_k) / (2L)``; it is run through :mod:`solvers.resnet_train`.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from solvers import resnet_train as rt
from solvers.fd import gradient_with_error
from theorems.claim import Claim, Outcome, Param, inconclusive


EPS = float(np.finfo(float).eps)


relu = Claim(
    id="sander.relu_counterexample",
    title="ReLU breaks smoothness in depth: alternating init, odd layers frozen, even layers -> w* >= 2 log C",
    label="App. 3.D",
    section="3.D",
    equation="(3.56)",
    lines=(2756, 2787),
    statement=r"\frac{dw_{2k}}{dt}=-\frac{\partial\ell}{\partial w_{2k}}=2x\Big(C-\prod_{j}(1+\tfrac{w_{2j}}{2L})\Big)"
              r"\prod_{j\ne k}(1+\tfrac{w_{2j}}{2L});\ w_{2k+1}\equiv-\tfrac1{2L},\ w_{2k}\to w^*,\ (1+\tfrac{w^*}{2L})^L=C,\ w^*\ge2\log C",
    status="erratum",
    corrected=r"-\frac{\partial\ell}{\partial w_{2k}}=\frac{x^2}{L}\Big(C-\Pi\Big)\prod_{j\ne k}(1+\tfrac{w_{2j}}{2L})\ "
              r"(\text{depth-scaled flow (3.4): }2x^2(\cdot));\ w_{2k+1}\equiv-\tfrac1{2L},\ w_{2k}\to w^*=2L(C^{1/L}-1)\ge2\log C,"
              r"\ \max_k|w_{k+1}-w_k|\to w^*+\tfrac1{2L}=\Omega(1)",
    params=[
        Param.int("L", 8, 1, 64, "half depth (the network has 2L layers)", search=(1, 8)),
        Param.float("C", 2.0, 1.0, 10.0, "target ratio y = C x, C > 1", low_open=True, search=(1.2, 4.0)),
        Param.float("x", 1.0, 1e-100, 10.0, "the input x > 0 (>= 1e-100: the loss ~ x^2 must not underflow)",
                    search=(0.3, 2.0)),
        Param.float("T", 200.0, 0.0, 10_000.0, "gradient-flow time (depth-scaled flow (3.4)) in units of 1/x^2: the "
                    "flow runs to t = T/x^2 (l = x^2 (C - Pi)^2, so the flow at input x is the x = 1 flow slowed by x^2)",
                    low_open=True),
    ],
    notes="E14: the printed flow misses the factor x/(2L) (unscaled flow) -- only the time scale changes, the limit w* "
          "does not.  Numeric: the full layerwise depth-scaled gradient flow dw_k/dt = -2L dl/dw_k (gradients of "
          "solvers.resnet_train with q = m = 1, V = 1 frozen) integrated by LSODA (rtol 1e-11, atol 1e-13).  Checked: "
          "odd layers bit-for-bit frozen (ReLU'(negative) = 0 exactly), the corrected flow formula x^2/L (C - Pi) prod_{j != k} "
          "against backprop and central differences at a point off the limit (error model in _flow_formula; audit issue 21: "
          "it was only reported before), every even layer within 1e-6 of w* at time T "
          "(exponential convergence; inconclusive if the loss is not yet < 1e-16), max_k |w_{k+1} - w_k| >= 2 log C.  "
          "The thesis's 'only broken assumption is the non-smoothness of sigma' (l.2787) is consistent: the init "
          "(-1)^k/(2L) is not a discretised Lipschitz function, but its differences are 1/L, which is all Prop 3.8 uses; "
          "GELU/tanh from the same init keep depth x max gap bounded (falsifier smooth_activation, reproduction).",
    catalogue="sander_part1 §2.9 D3.1; §4 E14; §3.1 D20",
    covers=("D3.1", "D20", "E14"),
)


def _net(L, act):
    """The App. 3.D network as (3.3) with q = m = 1, depth 2L, V = 1 frozen: (A, V, B)."""
    return np.ones((1, 1)), np.ones((2 * L, 1, 1)), np.ones((1, 1))


def _w0(L):
    k = np.arange(1, 2 * L + 1)
    return (-1.0) ** k / (2 * L)


def _flow(L, C, x, T, act, rescaled=False):
    """The layerwise flow to time T; ``rescaled``: in the time tau = x^2 t (dw/dtau = -2L dl/dw / x^2, exact since
    l = x^2 (C - Pi)^2 for the positive branch), so that T counts units of 1/x^2 and LSODA never sees spans ~1e200."""
    A, V, B = _net(L, act)
    X, Y = np.array([[x]]), np.array([[C * x]])
    k = 2 * L / (x * x) if rescaled else 2 * L

    def rhs(t, w):
        _, _, _, dW, _ = rt.grads_numpy(X, Y, A, V, w.reshape(2 * L, 1, 1), B, act)
        return -k * dW.ravel()
    sol = solve_ivp(rhs, (0.0, T), _w0(L), method="LSODA", rtol=1e-11, atol=1e-13)
    w = sol.y[:, -1]
    loss = rt.loss_numpy(X, Y, A, V, w.reshape(2 * L, 1, 1), B, act)
    return w, loss, sol


def _wstar(L, C):
    return 2 * L * (C ** (1.0 / L) - 1)


@relu.numeric
def _(p):
    """Integrate the layerwise flow: odd layers frozen, even layers -> w*, gap -> w* + 1/(2L) >= 2 log C."""
    # time in units of 1/x^2 (audit issue 21: with x drawn down to 1e-100 every sweep draw was 'not converged')
    w, loss, sol = _flow(p.L, p.C, p.x, p.T, "relu", rescaled=True)
    if not sol.success:
        return inconclusive(f"LSODA failed: {sol.message}")
    # converged means |Pi - C| = sqrt(2 loss) / x < 1e-8 (the loss scales with x^2: an absolute threshold would
    # take the untrained start at x = 1e-8, loss ~ 1e-16, for convergence; the flow's speed scales with x^2 too)
    if math.sqrt(2 * loss) > 1e-8 * p.x:
        return inconclusive(f"not converged by t = T/x^2 = {p.T / p.x ** 2:.3g} (loss {loss:.2e}, |Pi - C| ~ "
                            f"{math.sqrt(2 * loss) / p.x:.2e}); increase T", loss=loss)
    formula = _flow_formula(p, "corrected")
    ws = _wstar(p.L, p.C)
    odd, even = w[0::2], w[1::2]
    gap = float(np.max(np.abs(np.diff(w))))
    parts = {"odd layers frozen": (float(np.max(np.abs(odd + 1 / (2 * p.L)))), 0.0),
             # LSODA: rtol 1e-11 on O(1) weights; converged loss < 1e-16 means |Pi - C| < 1e-8/x, and w* - w ~ (Pi - C) 2L/(L C)
             "even layers -> w*": (float(np.max(np.abs(even - ws))), 1e-6),
             "gap >= 2 log C": (max(0.0, 2 * math.log(p.C) - gap), 1e-9),
             # the corrected (3.56) formula x^2/L (C - Pi) prod_{j != k} against backprop and FD (error model there)
             "corrected flow vs backprop": (formula.values["residual_backprop"], formula.values["tol_backprop"]),
             "corrected flow vs FD": (formula.values["residual_fd"], formula.values["tol_fd"])}
    return Outcome.from_parts(parts, "App. 3.D conclusions at time T and the corrected flow (3.56)", {
        "w_star": ws, "two_log_C": 2 * math.log(p.C), "max_gap": gap, "loss": loss, "even_mean": float(even.mean()),
        "corrected_flow": {k: formula.values[k] for k in ("residual_backprop", "tol_backprop", "residual_fd",
                                                          "tol_fd", "fd_resolves")}})


relu.property(over=("L", "C", "x"), max_examples=6)


def _flow_formula(p, form):
    """The even-layer flow formula of (3.56), ``form`` 'corrected' (x^2/L) or 'printed' (2x), against -dl/dw_{2k} at
    a point off the limit (even layers moved by U(0, 0.3), seed 0; odd layers at -1/(2L)), by two routes independent
    of the formula: backpropagation (solvers.resnet_train.grads_numpy) and central differences of the loss.

    Error model.  Backprop: the forward pass is 2L multiply-adds on h > 0, each relative error <= 2u, so h_{2L} and the
    backward products carry relative error <= 4(2L + 2)u; the gradient x^2/L |C - Pi| Pi/fac_k is computed as a
    difference C x - h, so the absolute error is <= 8(2L + 2)u x^2/L (C + Pi) max_k Pi/fac_k (factor 2 safety).
    FD: the estimate of solvers.fd.gradient_with_error (|d_h - d_2h|/3 + 4 eps max(|f|, 1)/h) x4; its floor
    4 eps/h is absolute, so at small x it does not resolve the gradient (reported as fd_resolves)."""
    A, V, B = _net(p.L, "relu")
    X, Y = np.array([[p.x]]), np.array([[p.C * p.x]])
    rng = np.random.default_rng(0)
    w = _w0(p.L) + np.where(np.arange(2 * p.L) % 2 == 1, 0.3 * rng.random(2 * p.L), 0.0)   # even layers moved
    f = lambda v: rt.loss_numpy(X, Y, A, V, v.reshape(2 * p.L, 1, 1), B, "relu")
    (g,), (err,) = gradient_with_error(f, [w], h=1e-6)
    _, _, _, dW, _ = rt.grads_numpy(X, Y, A, V, w.reshape(2 * p.L, 1, 1), B, "relu")
    gb = dW.ravel()
    fac = 1 + w[1::2] / (2 * p.L)
    Pi = np.prod(fac)
    formula = {"corrected": p.x ** 2 / p.L * (p.C - Pi) * Pi / fac,
               "printed": 2 * p.x * (p.C - Pi) * Pi / fac}[form]
    scale = p.x ** 2 / p.L * (p.C + Pi) * float(np.max(Pi / fac))
    tol_bp = 8 * (2 * p.L + 2) * EPS * scale
    tol_fd = 4 * float(np.max(err)) + 8 * EPS * scale
    r_bp = float(np.max(np.abs(formula + gb[1::2])))
    r_fd = float(np.max(np.abs(formula + g[1::2])))
    return Outcome.from_parts({"formula vs backprop": (r_bp, tol_bp), "formula vs FD": (r_fd, tol_fd)},
                              f"{form} even-layer flow (3.56) against -dl/dw_2k (backprop and FD)",
                              {"form": form, "residual_backprop": r_bp, "tol_backprop": tol_bp, "residual_fd": r_fd,
                               "tol_fd": tol_fd, "fd_resolves": bool(tol_fd < 1e-3 * scale), "formula": formula.tolist(),
                               "minus_grad_backprop": (-gb[1::2]).tolist(), "minus_grad_fd": (-g[1::2]).tolist(),
                               "odd_layer_grad_backprop": float(np.max(np.abs(gb[0::2])))})


@relu.falsifier("stated")
def _(p):
    """The printed flow 2x(C - Pi) Pi_{j != k} through the same comparison as the corrected one (backprop and central
    differences): off by the factor 2L/x."""
    return _flow_formula(p, "printed")


@relu.falsifier("smooth_activation", fixed={"L": 8})
def _(p):
    """Same init and flow with GELU (C^2): consecutive weights stay O(1/L) apart, so max gap >= 2 log C fails."""
    w, loss, sol = _flow(p.L, p.C, p.x, p.T, "gelu", rescaled=True)
    gap = float(np.max(np.abs(np.diff(w))))
    return Outcome(residual=2 * math.log(p.C) - gap, tolerance=1e-9, values={
        "max_gap": gap, "depth_times_gap": 2 * p.L * gap, "loss": loss},
        message="2 log C - max_k |w_{k+1} - w_k| (the ReLU conclusion needs <= 0)")


#: (the depth-scaled flow's prefactor of (C - Pi) prod_{j != k}, as a function of x; w*(L, C)): corrected, and
#: misprints (mutants: the printed 2x of (3.56), E14; w* without its factor 2)
RELU_FORMS = {"corrected": (lambda x: 2 * x ** 2, lambda L, C: 2 * L * (C ** (1 / L) - 1)),
              "printed_flow_2x": (lambda x: 2 * x, lambda L, C: 2 * L * (C ** (1 / L) - 1)),
              "w_star_factor_2_dropped": (lambda x: 2 * x ** 2, lambda L, C: L * (C ** (1 / L) - 1))}


def _relu_failures(form):
    """(flow) L = 2: x > 0, odd layers w = -1/(2L) (ReLU(w h) = 0 for h > 0), even layers on the positive branch,
    h_{2L} = x prod (1 + w_{2j}/(2L)); -2L d/dw_{2k} (C x - h_{2L})^2 by sympy.diff against the form's flow;
    (limit) w* solves (1 + w*/(2L))^L = C (powsimp); (bound) w* - 2 log C = 2L g(log(C)/L), g(u) = e^u - 1 - u with
    g(0) = 0 and g' >= 0 on u >= 0 (inequality solver), so w* >= 2 log C.  Returns the failures."""
    pref, wsf = RELU_FORMS[form]
    x, C = sp.symbols("x C", positive=True)
    Lh = 2
    w = sp.symbols(f"w0:{Lh}")
    h = x
    for k in range(Lh):                               # layer pairs: odd (frozen, ReLU = 0), then even
        h = h + 0 + w[k] * h / (2 * Lh)
    Pi = sp.Mul(*[(1 + wk / (2 * Lh)) for wk in w])
    bad = int(sp.expand(h - x * Pi) != 0)
    for k in range(Lh):
        flow = -2 * Lh * sp.diff((C * x - h) ** 2, w[k])
        rest = sp.Mul(*[(1 + w[j] / (2 * Lh)) for j in range(Lh) if j != k])
        bad += int(sp.expand(flow - pref(x) * (C - Pi) * rest) != 0)
    L = sp.Symbol("L", positive=True)
    ws = wsf(L, C)
    bad += int(sp.simplify(sp.powsimp((1 + ws / (2 * L)) ** L, force=True) - C) != 0)
    u = sp.log(C) / L
    bad += int(sp.simplify(sp.expand(ws - 2 * sp.log(C) - 2 * L * (sp.exp(u) - 1 - u))) != 0)
    uu = sp.symbols("u", real=True)
    g = sp.exp(uu) - 1 - uu
    decreasing = sp.solve_univariate_inequality(sp.diff(g, uu) < 0, uu, relational=False).intersect(
        sp.Interval(0, sp.oo))
    bad += int(g.subs(uu, 0) != 0) + int(decreasing != sp.S.EmptySet)
    return bad


@relu.symbolic(timeout=30)
def _(p):
    """The depth-scaled flow of the even layers is 2x^2 (C - Pi) prod_{j != k} (sympy.diff, L = 2); w* = 2L(C^{1/L} - 1)
    solves (1 + w*/2L)^L = C; w* - 2 log C = 2L(e^u - 1 - u) >= 0 with u = log(C)/L >= 0."""
    bad = _relu_failures("corrected")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy", "instances": ["L = 2 for the flow; symbolic L, C"],
                   "proved": "corrected (3.56) flow, (1 + w*/2L)^L = C and w* >= 2 log C"}, message="failed identities")


@relu.mutant({"printed_flow_2x": "(3.56) as printed, 2x(C - Pi) prod_{j != k} (E14): not the gradient flow",
              "w_star_factor_2_dropped": "w* = L(C^{1/L} - 1): does not solve (1 + w*/2L)^L = C"}, timeout=30)
def _(p, variant):
    """The flow or the limit perturbed, through the same derivation: some identity must fail."""
    bad = _relu_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities fail for {variant}")


@relu.reproduction(name="catalogue_table")
def _(p):
    """Catalogue D3.1 (x = 1, C = 2): max gap 1.51062, 1.44801, 1.41704, 1.40164 and w* 1.448124, 1.416761, 1.401418,
    1.393829 at depths 16, 32, 64, 128 -- recomputed by the flow (depths 16, 32) and from (3.56)."""
    quoted_gap = {16: 1.51062, 32: 1.44801, 64: 1.41704, 128: 1.40164}
    quoted_ws = {16: 1.448124, 32: 1.416761, 64: 1.401418, 128: 1.393829}
    parts, vals = {}, {}
    for depth in (16, 32, 64, 128):
        L = depth // 2
        ws = _wstar(L, 2.0)
        if depth <= 32:
            w, loss, _ = _flow(L, 2.0, 1.0, 200.0, "relu")
            gap = float(np.max(np.abs(np.diff(w))))
        else:
            gap = ws + 1 / (2 * L)
        vals[depth] = {"gap": gap, "w_star": ws}
        parts[f"gap@{depth}"] = (abs(gap - quoted_gap[depth]), 0.5e-5)       # quoted to 5 decimals
        parts[f"w*@{depth}"] = (abs(ws - quoted_ws[depth]), 0.5e-6)          # quoted to 6 decimals
    return Outcome.from_parts(parts, "catalogue D3.1 table", {"recomputed": vals, "limit_2log2": 2 * math.log(2)})


@relu.reproduction(name="smooth_activations", slow=True)
def _(p):
    """GELU and tanh from the alternating init (x = 1, C = 2, T = 200): depth x max gap stays bounded
    (catalogue GELU 3.915, 4.003, 4.048, 4.070; tanh 1.162, 1.224, 1.257, 1.274 at depths 16..128)."""
    quoted = {"gelu": [3.915, 4.003, 4.048, 4.070], "tanh": [1.162, 1.224, 1.257, 1.274]}
    parts, got = {}, {}
    for act, q in quoted.items():
        got[act] = []
        for depth, qv in zip((16, 32, 64, 128), q):
            w, loss, _ = _flow(depth // 2, 2.0, 1.0, 200.0, act)
            v = depth * float(np.max(np.abs(np.diff(w))))
            got[act].append(v)
            parts[f"{act}@{depth}"] = (abs(v - qv), 0.0005 + 1e-3 * qv)   # quoted to 3 decimals (+ LSODA)
    return Outcome.from_parts(parts, "depth x max gap, smooth activations", {"recomputed": got})
