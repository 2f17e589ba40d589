"""Closed-form special cases and the modelling layer of the two-point effective theory of van Rossem & Saxe:
identical outputs (Bernoulli solution, Eqs 37-40, erratum E2), the lazy rescaling (Eqs 41-43, erratum E3), the
random-feature distribution (Eqs 44-48, erratum E5), the linearisation about the input mean (Eq 5/15, with the
cubic sharpening), the equivalence with a two-layer linear network with bias (l.93), the dependence on the time
constants only (l.116) and the depth scaling of the initial distance (Eq 14).

Conventions: see :mod:`theorems.vanrossem._common` (``a = delta_x^2``, ``b = delta_y^2``, Eq 7 time units, lifted
integrator).  Numbers quoted in comments come from the catalogue (``research/vanrossem_saxe.md``).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.special import ndtr

from solvers import twopoint as tp
from solvers import xp_vanrossem as xv
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.vanrossem._common import ATOL, EPS, FLOOR, RTOL, flow_params, validate_initial


def _narrowed(params, **ranges):
    """``params`` with the ranges of some narrowed to ``(low, high)`` (None keeps that end), noted in their docs."""
    import dataclasses
    out = []
    for q in params:
        if q.name in ranges:
            lo, hi = ranges[q.name]
            lo = q.low if lo is None else lo
            hi = q.high if hi is None else hi
            q = dataclasses.replace(q, low=lo, high=hi, low_open=q.low_open and lo == q.low,
                                    high_open=q.high_open and hi == q.high,
                                    doc=f"{q.doc} (in [{lo:g}, {hi:g}] for this claim)")
        out.append(q)
    return out


def _pos(p, *names):
    for n in names:
        if not (getattr(p, n) > 0):
            raise ParamError(f"parameter {n} must be > 0 (got {getattr(p, n)!r})")


def _lifted_path(z0, P, times, rtol=RTOL, atol=ATOL, backend="numba"):
    """Lifted states at the sorted ``times`` (Dormand-Prince, chained from t = 0)."""
    out, z, t = [], np.asarray(z0, dtype=float), 0.0
    for t1 in times:
        if t1 > t:
            z, _, _ = tp.integrate_lifted(z, P, t1, backend, rtol, atol, t0=t, h0=(t1 - t) * 1e-3)
            t = t1
        out.append(z.copy())
    return np.array(out)


# ===========================================================================
# 1. Identical outputs: the Bernoulli solution (Eqs 37-40, catalogue B1, erratum E2)
def _bernoulli(t, u0, AH, tau_y, printed=False):
    """Eq 39: ``u(t) = A_H / (1 + (A_H/u0 - 1) E)``, ``E = exp(-A_H t / tau_y)`` (``printed``: ``exp(-A_H t)``).
    Evaluated as ``u0 / (E + (u0 t'/tau') phi(x))``, ``phi(x) = -expm1(-x)/x``, stable through ``A_H = 0``."""
    tt = np.asarray(t, dtype=float) / (1.0 if printed else tau_y)
    x = AH * tt
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        xs = np.where(x == 0, 1.0, x)
        # x >= 0: u0 / (E + u0 t' (1 - E)/x); x < 0 (multiply by e^x): u0 e^x / (1 + u0 t' expm1(x)/x)
        pos = u0 / (np.exp(-np.abs(x)) + u0 * tt * np.where(x == 0, 1.0, -np.expm1(-np.abs(x)) / np.abs(xs)))
        neg = u0 * np.exp(-np.abs(x)) / (1 + u0 * tt * np.where(x == 0, 1.0, np.expm1(-np.abs(x)) / xs))
    return np.where(x >= 0, pos, neg)


def _bernoulli_v(u, AH, a, tau_h, tau_y):
    """Eq 40 = Eq 24 along u(t): ``v = (tau_h/(tau_y a)) u (u - A_H)``."""
    return tau_h / (tau_y * a) * u * (u - AH)


def _validate_b1(p):
    _pos(p, "tau_h", "tau_y", "delta_x", "dh2_0")
    if p.dy2_0 < 0:
        raise ParamError(f"dy2_0 = |dy(0)|^2 must be >= 0 (got {p.dy2_0!r})")


bernoulli = Claim(
    id="vanrossem.identical_outputs_bernoulli",
    title="Identical outputs (y1 = y2): the Bernoulli solution of the representational distance",
    label="Eqs 38-40",
    section="A.4",
    equation="(37)-(40)",
    lines=(419, 435),
    statement=r"y_1=y_2:\ \tfrac{d}{dt}\|dh\|^2=-\tfrac1{\tau_y}\|dh\|^4+\tfrac1{\tau_y}A_{\rm high}\|dh\|^2,\quad "
              r"\|dh(t)\|^2=\frac{A_{\rm high}}{1+(\frac{A_{\rm high}}{\|dh(0)\|^2}-1)e^{-A_{\rm high}t}},\quad "
              r"\|dy\|^2=\tfrac{\tau_h}{\tau_y}\tfrac{A_{\rm high}^2}{\|\Delta x\|^2}"
              r"\tfrac{(1-A_{\rm high}/\|dh(0)\|^2)e^{-A_{\rm high}t}}{(1+(A_{\rm high}/\|dh(0)\|^2-1)e^{-A_{\rm high}t})^2}",
    status="erratum",
    corrected=r"\text{the same with } e^{-A_{\rm high}t/\tau_y}\text{ in Eqs 39 and 40 (the printed exponent holds only "
              r"for }\tau_y=1\text{ or }A_{\rm high}=\|dh(0)\|^2);\ A_{\rm high}=0:\ \|dh(t)\|^2=\frac{u_0}{1+u_0t/\tau_y}",
    params=[
        Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.3, 3.0)),
        Param.float("tau_y", 2.0, FLOOR, 1e3, "decoder time constant (the printed Eq 39 is right only at 1)",
                    search=(0.3, 3.0)),
        Param.float("delta_x", 0.5, FLOOR, 1e3, "|x_2 - x_1| (a = delta_x^2)", search=(0.3, 2.0)),
        Param.float("dh2_0", 0.5, FLOOR, 1e4, "|dh(0)|^2 > 0", search=(0.01, 3.0)),
        Param.float("dy2_0", 0.18, 0.0, 1e4, "|dy(0)|^2 (= w(0) since y1 = y2)", search=(0.0, 3.0)),
        Param.float("T", 5.0, FLOOR, 1e3, "last comparison time (20 times in (0, T])", search=(0.5, 20.0)),
    ],
    validate=_validate_b1,
    notes="Delta_y = 0 makes w = |dy|^2 invariant under Eq 7 (checked symbolically), and Eq 24 closes the u-equation. "
          "Defaults: the catalogue's E2 instance (tau_y = 2, u0 = 0.5, A_high = 0.32). A_high <= 0 is included: then "
          "u -> 0 (catalogue E6). Numeric: the lifted system with Delta_y = 0 (dim Y = 1) by Dormand-Prince.",
    catalogue="vanrossem §2.4 B1; §4 E2, E6; §3 R1",
    covers=("B1", "E2"),
)


def _b1_outcome(p, printed=False):
    a = p.delta_x ** 2
    AH = tp.a_high(p.dh2_0, p.dy2_0, a, p.tau_h, p.tau_y)
    times = np.linspace(0, p.T, 21)[1:]
    z0 = np.array([math.sqrt(p.dh2_0), math.sqrt(p.dy2_0 / p.dh2_0)])
    P = tp.lift_params(a, p.tau_h, p.tau_y, [0.0])
    try:
        Z = _lifted_path(z0, P, times)
        Z9 = _lifted_path(z0, P, times, rtol=1e-9, atol=1e-12)
    except RuntimeError as exc:  # the explicit integrator's step budget: a stiff instance, not a verdict
        # (a sweep drew tau_h = 4e-5, delta_x = 71, dh2_0 = 5.6e3: rates ~ a dh2_0 / tau_h ~ 6e11 per unit time)
        return inconclusive(f"the lifted Eq 7 is too stiff for Dormand-Prince here (rate scale a |dh(0)|^2 / tau_h = "
                            f"{a * p.dh2_0 / p.tau_h:.3g}): {exc}; the closed form is not compared",
                            A_high=AH)
    u, v, w = tp.uvw_from_lift(Z, [0.0])
    u9, v9, _ = tp.uvw_from_lift(Z9, [0.0])
    uc = _bernoulli(times, p.dh2_0, AH, p.tau_y, printed)
    vc = _bernoulli_v(uc, AH, a, p.tau_h, p.tau_y)  # Eq 40 = Eq 24 along u(t) (printed: along the printed u(t))
    # Error model: the run at rtol 1e-9 has a global error >= that of the rtol 1e-11 run (Dormand-Prince error
    # ~ rtol), so |u_9 - u_11| bounds the integrator error of u_11; plus 10 rtol (local error of the last steps,
    # as in _common.limit_tolerance) and 64 eps rounding of the closed form
    # (exp, expm1, a few products) times the scale max(u, u0, |A_H|).
    scale_u = max(p.dh2_0, abs(AH), float(np.max(u)))
    scale_v = max(p.dy2_0, float(np.max(v)), 1e-300)
    tol_u = float(np.max(np.abs(u9 - u))) + 10 * RTOL * scale_u + 64 * EPS * scale_u
    # v = k u (u - A_H), k = tau_h/(tau_y a): rounding of the difference is eps k u (u + |A_H|), not eps v
    tol_v = float(np.max(np.abs(v9 - v))) + 10 * RTOL * scale_v + 64 * EPS * (scale_v + p.tau_h / (p.tau_y * a) * scale_u * 2 * scale_u)
    ru, rv = float(np.max(np.abs(u - uc))), float(np.max(np.abs(v - vc)))
    i = int(np.argmax(np.abs(u - uc)))
    return Outcome.from_parts(
        {"dh2 (Eq 39)": (ru, tol_u), "dy2 (Eq 40)": (rv, tol_v), "w = dy2 kept": (float(np.max(np.abs(w - v))),
                                                                                 64 * EPS * scale_v)},
        f"max over 20 times of |closed form - lifted integration| ({'printed exp(-A_H t)' if printed else 'exp(-A_H t/tau_y)'})",
        values={"A_high": AH, "worst_time": float(times[i]), "dh2_integrated": float(u[i]),
                "dh2_closed_form": float(uc[i]),
                "plot": {"kind": "line", "x": times.tolist(),
                         "series": {"lifted ODE": u.tolist(), "closed form": uc.tolist()},
                         "xlabel": "t (Eq 7 units)", "ylabel": "|dh|^2",
                         "title": "y1 = y2: " + ("printed Eq 39" if printed else "corrected Eq 39")}})


@bernoulli.numeric
def bernoulli_numeric(p):
    """Corrected Eqs 39/40 (exponent -A_high t/tau_y) against the lifted integration with Delta_y = 0."""
    return _b1_outcome(p)


bernoulli.property(over=("tau_h", "tau_y", "delta_x", "dh2_0", "dy2_0", "T"), max_examples=12)


@bernoulli.falsifier("stated", search=("tau_y", "dh2_0", "dy2_0"))
def bernoulli_stated(p):
    """The printed exponent e^{-A_high t}: at tau_y = 2, u0 = 0.5, A_high = 0.32 it gives 0.4333 at t = 1 vs 0.4616."""
    return _b1_outcome(p, printed=True)


def _bernoulli_symbolic_core(variant="stated"):
    """Eq 7 with b = 0 keeps w = v; Eq 24 gives Eq 38; corrected Eq 39 solves it (printed only for tau_y = 1); Eq 40 = Eq 24(u(t))."""
    th, ty, a, u, v, t, u0 = sp.symbols("tau_h tau_y a u v t u_0", positive=True)
    AH = sp.Symbol("A_H", real=True)
    du = -a / th * v
    dv = -v * (u / ty + a / th * v / u)
    dw = -(3 * v - v + 0) * u / (2 * ty) - a / (2 * th) * (v + v) * v / u
    v24 = th / (ty * a) * u * (u - AH)
    eq38 = (1 if variant == "eq38_sign" else -1) * u ** 2 / ty + AH * u / ty

    def sol(E):
        return AH / (1 + (AH / u0 - 1) * E)
    E_c, E_p = sp.exp(-AH * t / ty), sp.exp(-AH * t)
    uc, up = sol(E_p if variant == "printed_exponent" else E_c), sol(E_p)
    res_c = sp.factor(sp.together(sp.diff(uc, t) - eq38.subs(u, uc)))
    res_p = sp.factor(sp.together(sp.diff(up, t) - eq38.subs(u, up)))
    eq40 = th / ty * AH ** 2 / a * (1 - AH / u0) * E_c / (1 + (AH / u0 - 1) * E_c) ** 2
    checks = {
        "w = v invariant (dw - dv at w = v, b = 0)": sp.together(dw - dv),
        "Eq 38 = du/dt with Eq 24": sp.together(du.subs(v, v24) - eq38),
        "corrected Eq 39 solves Eq 38": res_c,
        "corrected Eq 39 at t = 0": sp.together(uc.subs(t, 0) - u0),
        "Eq 40 = Eq 24(u(t)) (corrected exponent)": sp.together(eq40 - v24.subs(u, uc)),
        "printed Eq 39 at tau_y = 1": sp.together(res_p.subs(ty, 1)),
    }
    bad = [k for k, e in checks.items() if sp.expand(sp.numer(sp.together(e))) != 0]
    printed_nonzero = sp.expand(sp.numer(sp.together(res_p))) != 0
    return Outcome(residual=len(bad) + (0 if printed_nonzero else 1), tolerance=0, values={
        "method": "sympy.together/factor of the ODE residuals", "nonzero": bad,
        "printed_residual": str(res_p), "printed_residual_nonzero": bool(printed_nonzero),
        "proved": "w = v invariant; Eq 38; Eq 39 with exp(-A_H t/tau_y) solves Eq 38 with u(0) = u0; Eq 40 = Eq 24; "
                  "the printed exp(-A_H t) leaves a residual that vanishes at tau_y = 1"},
        message="identities that failed (plus 1 if the printed form were exact)")


@bernoulli.symbolic(timeout=60)
def bernoulli_symbolic(p):
    """Eq 7 with b = 0 keeps w = v; Eq 24 gives Eq 38; corrected Eq 39 solves it (printed only for tau_y = 1); Eq 40 = Eq 24(u(t))."""
    return _bernoulli_symbolic_core()


@bernoulli.mutant({
    'printed_exponent': 'Eq 39 as printed, exp(-A_H t) for exp(-A_H t/tau_y), taken as the solution',
    'eq38_sign': 'Eq 38 with +|dh|^4/tau_y (the sign of the quartic term flipped)',
}, timeout=60)
def bernoulli_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _bernoulli_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


@bernoulli.reproduction
def bernoulli_reproduction(p):
    """Catalogue E2 instance (tau_y = 2, u0 = 0.5, A_high = 0.32): ODE = corrected 0.4616084334 (t=1), 0.3817515265
    (t=5); printed 0.4332601076, 0.3450814689 (10 digits)."""
    a, th, ty, u0 = 0.25, 1.0, 2.0, 0.5
    v0 = (u0 - 0.32) * u0 * th / (ty * a)  # A_high = u0 - (ty/th) a v0/u0 = 0.32
    AH = tp.a_high(u0, v0, a, th, ty)
    Z = _lifted_path([math.sqrt(u0), math.sqrt(v0 / u0)], tp.lift_params(a, th, ty, [0.0]), [1.0, 5.0])
    u = Z[:, 0] ** 2
    uc = _bernoulli(np.array([1.0, 5.0]), u0, AH, ty)
    up = _bernoulli(np.array([1.0, 5.0]), u0, AH, ty, printed=True)
    q = 5e-11  # half a unit in the 10th digit
    parts = {"ODE t=1 vs 0.4616084334": (abs(u[0] - 0.4616084334), q + 1e-9 * u[0]),
             "ODE t=5 vs 0.3817515265": (abs(u[1] - 0.3817515265), q + 1e-9 * u[1]),
             "corrected t=1": (abs(uc[0] - 0.4616084334), q), "corrected t=5": (abs(uc[1] - 0.3817515265), q),
             "printed t=1 vs 0.4332601076": (abs(up[0] - 0.4332601076), q),
             "printed t=5 vs 0.3450814689": (abs(up[1] - 0.3450814689), q)}
    return Outcome.from_parts(parts, "catalogue §4 E2 numbers", values={
        "ode": u.tolist(), "corrected": uc.tolist(), "printed": up.tolist(), "A_high": AH})


# ===========================================================================
# 2. The lazy rescaling (Eqs 41-43, catalogue LZ1, erratum E3)
def _eq7_abs_terms(y, P):
    """Per component, the sum of the absolute values of the terms of Eq 7 (the scale of its rounding error)."""
    a, b, th, ty, g = P
    u, v, w = np.abs(y)
    return np.array([a / th * w, w * (u / ty + a / th * v / u),
                     (3 * w + v + b) * u / (2 * ty) + a / (2 * th) * (v + w) * w / u])


def _rescaled_field(y, P, G, inverse, with_scale=False):
    """d/dt' of the primed variables, by the chain rule: (alpha u, beta v, beta w) with t' = gamma t.
    Printed Eq 42: alpha = G, beta = G^2, gamma = 1/G; corrected (inverse): alpha = 1/G, beta = 1/G^2, gamma = G."""
    al, be, ga = (1 / G, 1 / G ** 2, G) if inverse else (G, G ** 2, 1 / G)
    u, v, w = y
    x = np.array([u / al, v / be, w / be])
    f = tp.eq7_rhs_numpy(0.0, x, P)
    fac = np.array([al, be, be]) / ga
    if with_scale:
        return fac * f, fac * _eq7_abs_terms(x, P)
    return fac * f


#: default cosine of the lazy-rescaling claim: the former default w_0 = 0.1 at dh2_0 = 0.3, dy2_0 = 0.2, delta_y = 1
#: (w_0 = dy2_0 - sqrt(dy2_0) delta_y cos_0 = 0.2 - sqrt(0.2) sqrt(0.05) = 0.1)
LZ_COS_0 = math.sqrt(0.05)


def _lz_state(p):
    """``p`` with ``w_0 = dy2_0 - sqrt(dy2_0) delta_y cos_0``: ``cos_0`` is the cosine of the angle between dy(0)
    and Delta_y (Cauchy-Schwarz: ``w - |dy|^2 = -dy.Delta_y``), so every ``cos_0`` in [-1, 1] is a network state."""
    return p.replace(w_0=p.dy2_0 - math.sqrt(p.dy2_0) * p.delta_y * p.cos_0)


def _validate_lz(p):
    _pos(p, "G")
    validate_initial(_lz_state(p))


lazy = Claim(
    id="vanrossem.lazy_rescaling",
    title="Lazy rescaling: the change of variables that turns large weights into Eq 43 (b -> b/G^2)",
    label="Eqs 41-43",
    section="A.5",
    equation="(41)-(43)",
    lines=(437, 451),
    statement=r"\|dh\|^{2\prime}=G\|dh\|^2,\ \|dy\|^{2\prime}=G^2\|dy\|^2,\ w'=G^2w,\ t'=G^{-1}t\ \Longrightarrow\ "
              r"\text{Eq 7 with }\|\Delta y\|^2\to G^{-2}\|\Delta y\|^2\ \text{(Eq 43)}",
    status="erratum",
    corrected=r"\text{Eq 43 (}\|\Delta y\|^2\to G^{-2}\|\Delta y\|^2)\text{ needs } u'=u/G,\ v'=v/G^2,\ w'=w/G^2,\ "
              r"t'=Gt;\ \text{the printed substitution gives } \|\Delta y\|^2\to G^{+2}\|\Delta y\|^2",
    # narrower than the other two-point claims: at tau_h = 1e-6, tau_y <= 1e-3, delta_x >= 100, delta_y = 1e3 or
    # dh2_0 outside [1e-3, 100] the trajectory comparison was refuted by up to 1e8 times its error bound
    # (scripts/range_ends.py), a stiffness the bound does not model; the claim itself is a change of variables
    # the initial alignment as the cosine cos_0 of the angle between dy(0) and Delta_y (w_0 derived, _lz_state), not
    # w_0 itself: drawn independently over [-1e4, 1e4], w_0 gave a network state in 6 of 20 draws (sweep 20261126)
    params=[q for q in _narrowed(flow_params(dh2_0=0.3, dy2_0=0.2, w_0=0.1), tau_h=(1e-4, None),
                                 tau_y=(1e-2, None), delta_x=(None, 10.0), delta_y=(None, 100.0),
                                 dh2_0=(1e-3, 100.0)) if q.name != "w_0"] + [
        Param.float("cos_0", LZ_COS_0, -1.0, 1.0, "cosine of the angle between dy(0) and Delta_y: w(0) = |dy(0)|^2 - "
                    "sqrt(|dy(0)|^2) |Delta_y| cos_0 (every value is a network state; default: w(0) = 0.1)"),
        Param.float("G", 10.0, FLOOR, 1e4, "weight-scale factor of Eq 41", search=(0.2, 50.0)),
        Param.float("T", 3.0, FLOOR, 100.0, "time horizon of the trajectory comparison (original time)",
                    search=(0.5, 10.0)),
    ],
    validate=_validate_lz,
    notes="The G -> infinity conclusion (Eq 43 tends to the y1 = y2 system) holds with the corrected substitution; by "
          "the large-weight erratum E4 the Bernoulli limit max(A_high, 0) can be 0. Numeric: (i) the chain-rule field "
          "of the substitution against Eq 43's field at 64 random consistent states (rounding error model), (ii) the "
          "lifted trajectory of Eq 7 mapped by the substitution against the lifted trajectory of Eq 43 (error model: "
          "10x the difference from runs at rtol 1e-9, atol 1e-12, plus rounding of the terms each of u, v, w is "
          "computed from). "
          "The initial alignment is the cosine cos_0 between dy(0) and Delta_y (w_0 = dy2_0 - sqrt(dy2_0) delta_y "
          "cos_0), so every draw is a network state: sweep 20261126 went from 6 certified + 14 rejected (w_0 drawn on "
          "its own) to 20/20 certified (seeds 7171 and 99 too).",
    catalogue="vanrossem §2.4 LZ1; §4 E3",
    covers=("LZ1", "E3"),
)


def _lz_field_check(p, inverse):
    a, b = p.delta_x ** 2, p.delta_y ** 2
    P43 = tp.eq7_params(a, b / p.G ** 2, p.tau_h, p.tau_y)
    rng = np.random.default_rng(12345)
    worst, worst_rel = 0.0, 0.0
    for _ in range(64):
        u, v = 10 ** rng.uniform(-2, 1), 10 ** rng.uniform(-2, 1)
        w = v - math.sqrt(v) * math.sqrt(b / p.G ** 2) * rng.uniform(-1, 1)   # consistent for Eq 43's data
        y = np.array([u, v, w])
        (lhs, s_l), rhs = _rescaled_field(y, tp.eq7_params(a, b, p.tau_h, p.tau_y), p.G, inverse, True), \
            tp.eq7_rhs_numpy(0.0, y, P43)
        # rounding: each entry is a sum of <= 4 terms of products of <= 6 factors, rescaled: 32 eps * sum |terms|
        scale = s_l + _eq7_abs_terms(y, P43) + 1e-300
        worst_rel = max(worst_rel, float(np.max(np.abs(lhs - rhs) / (32 * EPS * scale))))
        worst = max(worst, float(np.max(np.abs(lhs - rhs))))
    return worst_rel


# the second run of the trajectory comparison (its error estimate): both tolerances 100x the fine run's, so that its
# error bounds the fine run's where the absolute tolerance governs too (a collapsing s ~ 1e-8 is held to ATOL = 1e-14,
# a relative 1e-6 that runs sharing that ATOL do not see: with rtol alone loosened the sweep refuted 3 of 40 draws,
# at dy2_0 ~ 3e3-6e3 with s falling by 1e6, by 4-200x the bound)
LZ_COARSE_RTOL, LZ_COARSE_ATOL = 1e-9, 1e-12


def _lz_outcome(p, inverse):
    field_ratio = _lz_field_check(p, inverse)
    parts = {"field identity (residual / rounding bound)": (field_ratio, 1.0)}
    values = {"field_residual_over_rounding_bound": field_ratio, "w_0": p.w_0}
    if inverse:
        a = p.delta_x ** 2
        times = np.linspace(0, p.T, 11)[1:]
        z0 = tp.lift_from_uvw(p.dh2_0, p.dy2_0, p.w_0, p.delta_y)
        zp0 = tp.lift_from_uvw(p.dh2_0 / p.G, p.dy2_0 / p.G ** 2, p.w_0 / p.G ** 2, p.delta_y / p.G)
        scale_map = np.array([[1 / p.G], [1 / p.G ** 2], [1 / p.G ** 2]])

        def paths(rtol, atol):
            Z = _lifted_path(z0, tp.lift_params(a, p.tau_h, p.tau_y, [p.delta_y, 0.0]), times, rtol=rtol, atol=atol)
            Zp = _lifted_path(zp0, tp.lift_params(a, p.tau_h, p.tau_y, [p.delta_y / p.G, 0.0]), p.G * times,
                              rtol=rtol, atol=atol)
            U = np.array(tp.uvw_from_lift(Z, [p.delta_y, 0.0])) * scale_map
            Up = np.array(tp.uvw_from_lift(Zp, [p.delta_y / p.G, 0.0]))
            # the scale each component is computed from: w = v - s q.Delta_y cancels terms of size |v|
            sc = np.abs(U) + np.abs(Up)
            sc[2] += sc[1]
            return U, Up, sc
        mapped, Up, scl = paths(RTOL, ATOL)
        mapped_c, Up_c, _ = paths(LZ_COARSE_RTOL, LZ_COARSE_ATOL)
        # error model (a posteriori): the global error of each path is bounded by 10x its difference from a run at
        # rtol 1e-9, atol 1e-12 (the coarse run's error bounds the fine one's); plus 64 eps rounding of the scale each
        # component is computed from (for w that of v: at a = 1e-10 and dy2 ~ 1e4, w ~ 1e-8 is the cancellation of
        # v ~ 6e6, which the former bound, 1e3 rtol x |w|, missed by 1e8; at the defaults it was 1e6 x the residual)
        err = 10 * (np.abs(mapped_c - mapped) + np.abs(Up_c - Up)) + 64 * EPS * scl
        r = float(np.max(np.abs(mapped - Up) / (err + 1e-300)))
        parts["trajectories (residual / error bound)"] = (r, 1.0)
        values["trajectory_residual_over_bound"] = r
    return Outcome.from_parts(parts, "Eq 7 under the substitution vs Eq 43 "
                              + ("(corrected: u/G, v/G^2, w/G^2, Gt)" if inverse else "(printed: Gu, G^2v, G^2w, t/G)"),
                              values=values)


@lazy.numeric
def lazy_numeric(p):
    """The inverse substitution maps Eq 7 to Eq 43 (field identity and lifted trajectories)."""
    return _lz_outcome(_lz_state(p), inverse=True)


# cos_0, dh2_0 and dy2_0 drawn too: with the cosine every drawn initial state is a network state
lazy.property(over=("G", "tau_h", "tau_y", "delta_x", "delta_y", "dh2_0", "dy2_0", "cos_0"), max_examples=12)


@lazy.falsifier("stated", search=("G",))
def lazy_stated(p):
    """The printed Eq 42 substitution does not produce Eq 43 (it produces b -> G^2 b)."""
    return _lz_outcome(_lz_state(p), inverse=False)


def _lazy_symbolic_core(variant="stated"):
    """Chain rule for both substitutions against Eq 43 (G^-2 b) and the G^+2 b form (sympy.together)."""
    th, ty, a, b, u, v, w, G = sp.symbols("tau_h tau_y a b u v w G", positive=True)

    def field(bb):
        return (-a / th * w, -w * (u / ty + a / th * v / u),
                -(3 * w - v + bb) * u / (2 * ty) - a / (2 * th) * (v + w) * w / u)

    def transformed(al, be, ga):
        f = [e.subs({u: u / al, v: v / be, w: w / be}, simultaneous=True) for e in field(b)]
        return (al * f[0] / ga, be * f[1] / ga, be * f[2] / ga)

    def transformed_w(al, be, ga):  # w scaled by al (like u), not be
        f = [e.subs({u: u / al, v: v / be, w: w / al}, simultaneous=True) for e in field(b)]
        return (al * f[0] / ga, be * f[1] / ga, al * f[2] / ga)

    def match(tr, bb):
        return [sp.expand(sp.numer(sp.together(x - y))) == 0 for x, y in zip(tr, field(bb))]
    printed = transformed(G, G ** 2, 1 / G)
    inverse = {"time_not_rescaled": lambda: transformed(1 / G, 1 / G ** 2, 1),
               "w_scaled_like_u": lambda: transformed_w(1 / G, 1 / G ** 2, G)}.get(variant, lambda: transformed(1 / G, 1 / G ** 2, G))()
    m_pp, m_pm = match(printed, b / G ** 2), match(printed, G ** 2 * b)
    m_ip = match(inverse, b / G ** 2)
    residual = (3 - sum(m_ip)) + (3 - sum(m_pm)) + (1 if all(m_pp) else 0)
    return Outcome(residual=residual, tolerance=0, values={
        "method": "sympy chain rule + together/expand", "printed_vs_G^-2b": m_pp, "printed_vs_G^+2b": m_pm,
        "inverse_vs_G^-2b": m_ip,
        "proved": "(u/G, v/G^2, w/G^2, Gt) maps Eq 7 to Eq 43; the printed (Gu, G^2v, G^2w, t/G) maps it to b -> G^2 b"},
        message="mismatches of the corrected and G^+2 identities (plus 1 if the printed form matched Eq 43)")


@lazy.symbolic(timeout=60)
def lazy_symbolic(p):
    """Chain rule for both substitutions against Eq 43 (G^-2 b) and the G^+2 b form (sympy.together)."""
    return _lazy_symbolic_core()


@lazy.mutant({
    'time_not_rescaled': "the corrected substitution without t' = G t",
    'w_scaled_like_u': "w' = w/G (like u) instead of w/G^2",
}, timeout=60)
def lazy_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _lazy_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


# ===========================================================================
# 3. Random-feature distribution (Eqs 44-48, catalogue RF1, erratum E5)
def _validate_rf(p):
    _pos(p, "G", "tau_h", "tau_y", "delta_x", "delta_y")


random_features = Claim(
    id="vanrossem.random_feature_distribution",
    title="Random-feature model: distribution of the final distance, concentrating at A_low as G -> 0",
    label="Eqs 44-48",
    section="A.6",
    equation="(44)-(48)",
    lines=(453, 475),
    statement=r"\tfrac{u_0}{a},\tfrac{v_0}{u_0}\sim\mathcal N(G,G^2):\ A_{\rm high}\sim\mathcal N(0,2a^2G^2),\ "
              r"P(\|dh(\infty)\|^2<h)=\Phi\Bigl(\frac{h-A_{\rm low}^2/h}{\sqrt2\,aG}\Bigr),\ "
              r"f(h)=\frac{1+A_{\rm low}^2/h^2}{2\sqrt\pi\,aG}e^{-\frac12(\frac{h-A_{\rm low}^2/h}{\sqrt2aG})^2}",
    status="erratum",
    corrected=r"\rho=\tau_y/\tau_h:\ A_{\rm high}\sim\mathcal N\bigl(aG(1-\rho),a^2G^2(1+\rho^2)\bigr),\ "
              r"P(\|dh(\infty)\|^2<h)=\Phi\Bigl(\frac{h-A_{\rm low}^2/h-aG(1-\rho)}{aG\sqrt{1+\rho^2}}\Bigr)\ (h>0)"
              r"\text{; the printed form is the case }\rho=1\text{; concentration at }A_{\rm low}\text{ as }G\to0\text{ holds}",
    params=[
        Param.float("G", 0.5, FLOOR, 100.0, "initial-weight gain of the Gaussian model", search=(0.01, 2.0)),
        Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.3, 3.0)),
        Param.float("tau_y", 0.25, FLOOR, 1e3, "decoder time constant (rho = tau_y/tau_h; printed Eq 46 needs rho = 1)",
                    search=(0.3, 3.0)),
        Param.float("delta_x", 0.5, FLOOR, 1e3, "|x_2 - x_1|", search=(0.3, 2.0)),
        Param.float("delta_y", 1.2, FLOOR, 1e3, "|y_2 - y_1|", search=(0.3, 2.0)),
        Param.int("n_samples", 200_000, 1000, 10_000_000, "Monte Carlo samples"),
        Param.seed("Monte Carlo seed"),
    ],
    validate=_validate_rf,
    notes="Monte Carlo of the model (u0/a, v0/u0 independent N(G, G^2)), u_inf = Eq 10 (certified by "
          "vanrossem.two_point_fixed_point), empirical CDF at h/A_low in (0.5, 0.9, 1, 1.1, 2) and the first two "
          "moments of A_high. The model gives the positive ratios negative values with probability Phi(-1) = 0.1587 "
          "(the paper calls it illustrative, l.455); Eq 10 is evaluated as a formula there.",
    catalogue="vanrossem §2.4 RF1; §4 E5",
    covers=("RF1", "E5"),
)


def _rf_cdf(h, AL, a, G, rho, printed):
    if printed:
        return ndtr((h - AL ** 2 / h) / (math.sqrt(2) * a * G))
    return ndtr((h - AL ** 2 / h - a * G * (1 - rho)) / (a * G * math.sqrt(1 + rho ** 2)))


def _rf_outcome(p, printed=False):
    a, b = p.delta_x ** 2, p.delta_y ** 2
    rho = p.tau_y / p.tau_h
    AL = tp.a_low(a, b, p.tau_h, p.tau_y)
    rng = np.random.default_rng(p.seed)
    n = p.n_samples
    X, Y = rng.normal(p.G, p.G, n), rng.normal(p.G, p.G, n)
    AH = a * (X - rho * Y)                        # Eq 11 with u0/a = X, v0/u0 = Y
    S = np.hypot(AH / 2, AL)
    uinf = np.where(AH >= 0, AH / 2 + S, AL * AL / (S - AH / 2))
    hs = AL * np.array([0.5, 0.9, 1.0, 1.1, 2.0])
    emp = np.array([np.mean(uinf < h) for h in hs])
    th = np.array([_rf_cdf(h, AL, a, p.G, rho, printed) for h in hs])
    # Eqs 44-45: {u_inf < h} = {A_H h < h^2 - A_L^2} sample by sample (h > 0)
    mism = int(sum(np.sum((uinf < h) != (AH * h < h * h - AL * AL)) for h in hs))
    # error model: binomial standard error sqrt(P(1-P)/n) at each point, 5 sigma (Bonferroni over 5 points and
    # 2 moments keeps the family false-alarm rate < 1e-5); moments: 5 standard errors of the sample mean/variance.
    se = np.sqrt(np.maximum(th * (1 - th), 1.0 / n) / n)
    cdf_ratio = float(np.max(np.abs(emp - th) / (5 * se)))
    m_pred = 0.0 if printed else a * p.G * (1 - rho)
    v_pred = 2 * a * a * p.G ** 2 if printed else a * a * p.G ** 2 * (1 + rho ** 2)
    m_emp, v_emp = float(np.mean(AH)), float(np.var(AH))
    mean_ratio = abs(m_emp - m_pred) / (5 * math.sqrt(v_emp / n))
    var_ratio = abs(v_emp - v_pred) / (5 * v_emp * math.sqrt(2.0 / n))
    i = int(np.argmax(np.abs(emp - th) / se))
    return Outcome.from_parts(
        {"CDF at 5 points (|emp - Eq 47| / 5 SE)": (cdf_ratio, 1.0),
         "mean of A_high (/ 5 SE)": (mean_ratio, 1.0), "variance of A_high (/ 5 SE)": (var_ratio, 1.0),
         "Eqs 44-45 event identity (mismatching samples)": (float(mism), 0.0)},
        f"Monte Carlo ({n} samples) vs the {'printed' if printed else 'corrected'} Eqs 46-47",
        values={"rho": rho, "A_low": AL, "h": hs.tolist(), "empirical_cdf": emp.tolist(), "model_cdf": th.tolist(),
                "worst_h_over_A_low": float(hs[i] / AL), "mean_A_high": m_emp, "var_A_high": v_emp,
                "mean_predicted": m_pred, "var_predicted": v_pred,
                "negative_ratio_fraction": float(np.mean((X < 0) | (Y < 0)))})


@random_features.numeric
def random_features_numeric(p):
    """Monte Carlo CDF of Eq 10 under the Gaussian model vs the corrected Eq 47 (mean aG(1-rho), var a^2G^2(1+rho^2))."""
    return _rf_outcome(p)


random_features.property(over=("G", "tau_h", "tau_y", "delta_x", "delta_y", "seed"), max_examples=12,
                         fixed={"n_samples": 50_000})


@random_features.falsifier("stated", search=("tau_y", "G", "seed"))
def random_features_stated(p):
    """Printed Eq 46/47 (N(0, 2a^2G^2)) at rho = 0.25, G = 0.5: mean 0.0936 vs 0, variance 0.0166 vs 0.03125."""
    return _rf_outcome(p, printed=True)


def _random_features_symbolic_core(variant="stated"):
    """Eq 10's u* solves u^2 - A_H u - A_L^2 = 0 (so u* < h iff h^2 - A_H h - A_L^2 > 0 for h > 0); moments of
    A_H = a(X - rho Y); Eq 48 = d/dh Eq 47; the corrected density integrates the corrected CDF."""
    AH = sp.Symbol("A_H", real=True)
    AL, h, a, G, rho = sp.symbols("A_L h a G rho", positive=True)
    S = sp.sqrt(AH ** 2 / 4 + AL ** 2)
    ustar = AH / 2 + S
    quad = sp.expand(ustar ** 2 - AH * ustar - AL ** 2)
    # A_H = a X - a rho Y with X, Y independent N(G, G^2): mean and variance of a linear combination
    muX = muY = G
    varX = varY = G ** 2
    mean = sp.expand(a * muX - a * rho * muY - a * G * (1 - rho))
    stated_var = 2 * a ** 2 * G ** 2 if variant == "variance_printed" else a ** 2 * G ** 2 * (1 + rho ** 2)
    var = sp.expand(a ** 2 * varX + (a * rho) ** 2 * varY - stated_var)
    Phi = lambda z: (1 + sp.erf(z / sp.sqrt(2))) / 2  # noqa: E731
    z = (h - AL ** 2 / h) / (sp.sqrt(2) * a * G)
    norm48 = 2 * a * G if variant == "density_no_sqrt_pi" else 2 * sp.sqrt(sp.pi) * a * G
    f48 = (1 + AL ** 2 / h ** 2) / norm48 * sp.exp(-z ** 2 / 2)
    d48 = sp.expand(sp.together(sp.diff(Phi(z), h) / f48)) - 1
    zc = (h - AL ** 2 / h - a * G * (1 - rho)) / (a * G * sp.sqrt(1 + rho ** 2))
    fc = (1 + AL ** 2 / h ** 2) / (sp.sqrt(2 * sp.pi * (1 + rho ** 2)) * a * G) * sp.exp(-zc ** 2 / 2)
    dc = sp.expand(sp.together(sp.diff(Phi(zc), h) / fc)) - 1
    checks = {"u*^2 - A_H u* - A_L^2": quad, "E[A_H] - aG(1-rho)": mean,
              "Var[A_H] - a^2G^2(1+rho^2)": var, "Eq 48 / (d/dh Eq 47) - 1": d48,
              "corrected density / (d/dh corrected CDF) - 1": dc}
    bad = [k for k, e in checks.items() if e != 0]
    printed_var = sp.expand(a ** 2 * G ** 2 * (1 + rho ** 2) - 2 * a ** 2 * G ** 2).subs(rho, 1)
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy.expand / sympy.stats / diff", "nonzero": bad,
        "printed_mean_at_rho": str(sp.factor(a * G * (1 - rho))), "printed_var_equals_at_rho_1": printed_var == 0,
        "proved": "Eqs 44-45 reduce to a quadratic sign; A_H ~ N(aG(1-rho), a^2G^2(1+rho^2)) (printed: rho = 1); "
                  "Eq 48 = d/dh Eq 47"},
        message="identities that did not reduce to 0")


@random_features.symbolic(timeout=60)
def random_features_symbolic(p):
    """Eq 10's u* solves u^2 - A_H u - A_L^2 = 0 (so u* < h iff h^2 - A_H h - A_L^2 > 0 for h > 0); moments of
    A_H = a(X - rho Y); Eq 48 = d/dh Eq 47; the corrected density integrates the corrected CDF."""
    return _random_features_symbolic_core()


@random_features.mutant({
    'density_no_sqrt_pi': 'Eq 48 with 1/(2 a G) (the sqrt(pi) dropped from the normalisation)',
    'variance_printed': 'Var[A_H] = 2 a^2 G^2 as printed (Eq 46, true only at rho = 1)',
}, timeout=60)
def random_features_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _random_features_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


@random_features.reproduction
def random_features_reproduction(p):
    """Catalogue RF1 (b): a = 0.25, A_low = 0.3, G = 1 and 0.1 (rho = 1): Eq 47 at h/A_low = (0.5, 0.9, 1, 1.1, 2) is
    (0.1015, 0.4289, 0.5, 0.5643, 0.8985) and (0, 0.0366, 0.5, 0.9474, 1) (4 digits); E5 moments at rho = 0.25, G = 0.5:
    corrected mean 0.09375, variance 0.016602."""
    a, AL = 0.25, 0.3
    hs = AL * np.array([0.5, 0.9, 1.0, 1.1, 2.0])
    c1 = np.array([_rf_cdf(h, AL, a, 1.0, 1.0, False) for h in hs])
    c01 = np.array([_rf_cdf(h, AL, a, 0.1, 1.0, False) for h in hs])
    q1 = np.array([0.1015, 0.4289, 0.5, 0.5643, 0.8985])
    q01 = np.array([0.0, 0.0366, 0.5, 0.9474, 1.0])
    parts = {"G = 1 CDF": (float(np.max(np.abs(c1 - q1))), 5e-5 + 4 * EPS),
             "G = 0.1 CDF": (float(np.max(np.abs(c01 - q01))), 5e-5 + 4 * EPS),
             "E5 mean aG(1-rho)": (abs(a * 0.5 * 0.75 - 0.09375), 5e-6),
             "E5 variance a^2G^2(1+rho^2)": (abs(a * a * 0.25 * (1 + 0.0625) - 0.016602), 5e-7)}
    return Outcome.from_parts(parts, "catalogue RF1 numbers", values={"G1": c1.tolist(), "G0.1": c01.tolist()})


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
        Param.float("eps_max", 0.05, 0.0, 0.5, "largest |Delta x| (then eps_max/2, /4, /8); <= 0.5: the statement is "
                    "asymptotic in |Delta x| and at 1 the slopes have not settled", low_open=True, search=(0.02, 0.1)),
    ],
    validate=_validate_lin,
    notes="Sharpening (catalogue M5): the pointwise error is O(|Delta x|^2) but the difference h(x_2) - h(x_1) - "
          "D_h Delta x, the only thing the theory uses, is O(|Delta x|^3) (even orders cancel in a centred expansion). "
          "Checked as local log-log slopes of the errors over four halvings of |Delta x|, for h and for y o h "
          "(y = one more smooth layer to a 2-D output, D_y D_h = its Jacobian at the mean by the chain rule). "
          "Error model of a slope: the next Taylor order changes it by O(eps_max^2 |D^5h|/|D^3h|), bounded by 0.15 "
          "for these unit-scale maps at eps_max <= 0.1; inconclusive if the cubic coefficient is degenerate.",
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
    return eps, np.array(diff_h), np.array(diff_y), np.array(point), sl(diff_h), sl(diff_y), sl(point)


def _lin_outcome(p, centre="mean"):
    eps, dh, dy, pt, sh, sy, sp_ = _lin_slopes(p, centre)
    # h(x2) - h(x1) - J (x2 - x1) carries the rounding of h and y themselves (O(1) tanh outputs, absolute), not a
    # multiple of |Delta x|: below 1e4 eps the slopes measure rounding (eps_max <~ 1e-3), or a degenerate cubic term
    if min(dh.min(), dy.min(), pt.min()) < 1e4 * EPS:
        return inconclusive("difference error at rounding level: |Delta x| too small for the cubic term (or a "
                            "degenerate cubic term)", errors=dh.tolist())
    tol = 0.15
    return Outcome.from_parts(
        {"slope of h difference error - 3": (float(np.max(np.abs(sh - 3))), tol),
         "slope of y o h difference error - 3": (float(np.max(np.abs(sy - 3))), tol),
         "slope of pointwise error - 2": (float(np.max(np.abs(sp_ - 2))), tol)},
        f"local log-log slopes over |Delta x| = {eps[0]:.3g} / 2^k (expansion about {centre})",
        values={"eps": eps.tolist(), "difference_error_h": dh.tolist(), "difference_error_y": dy.tolist(),
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
    eps, dh, dy, pt, sh, sy, sp_ = _lin_slopes(p)
    rd, rp = dh[:-1] / dh[1:], pt[:-1] / pt[1:]
    return Outcome.from_parts({"difference ratio at 0.1 -> 0.05 vs 8.0": (abs(rd[-1] - 8.0), 0.5),
                               "pointwise ratio at 0.1 -> 0.05 vs 4.02": (abs(rp[-1] - 4.02), 0.25)},
                              "catalogue M5 halving ratios", values={"difference_ratios": rd.tolist(),
                                                                     "pointwise_ratios": rp.tolist()})


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


def _lin_instance(p):
    rng = np.random.default_rng(p.seed)
    Dh = rng.standard_normal((p.hidden, p.dim_x))
    Dy = rng.standard_normal((p.dim_y, p.hidden))
    yb = rng.standard_normal(p.dim_y)
    X = rng.standard_normal((2, p.dim_x)) + 1.5  # the data mean is far from 0
    Y = rng.standard_normal((2, p.dim_y))
    return Dh, Dy, yb, X, Y


def _net_loss_grads(xp, W1, W2, b2, Xin, Y):
    """Two-layer linear network f(x) = W2 W1 x + b2, loss 1/2 mean_i |f(x_i) - y_i|^2, backprop gradients (xp)."""
    T = xp.matrix_transpose
    H = Xin @ T(W1)
    R = H @ T(W2) + b2 - Y
    return 0.25 * xp.sum(R * R), 0.5 * (T(W2) @ T(R)) @ Xin, 0.5 * T(R) @ H, 0.5 * xp.sum(R, axis=0)


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


# ===========================================================================
# 6. Only tau_h, tau_y (and a/tau_h) enter (l.116, catalogue U1)
universality = Claim(
    id="vanrossem.time_constants_only",
    title="Eq 7 refers to the network only through tau_h and tau_y; the input scale only through a/tau_h",
    label="l.116",
    section="3.1",
    equation="(7)",
    lines=(116, 116),
    statement=r"\text{the dynamics in Eq 7 contain no direct reference to the implementation details of the network, "
              r"only two effective learning rates }1/\tau_h,\ 1/\tau_y",
    status="holds",
    params=flow_params(dh2_0=0.3, dy2_0=0.2, w_0=0.1) + [
        Param.float("lam", 3.0, FLOOR, 1e3, "common factor of a and tau_h", search=(0.1, 10.0)),
        Param.float("c", 2.0, FLOOR, 1e3, "common factor of both tau's (a time rescaling t -> t/c)",
                    search=(0.1, 10.0)),
        Param.float("T", 4.0, FLOOR, 100.0, "time horizon", search=(0.5, 10.0)),
    ],
    validate=validate_initial,
    notes="Two exact symmetries of Eq 7: (a, tau_h) -> (lam a, lam tau_h) leaves the field unchanged (a enters only as "
          "a/tau_h), and (tau_h, tau_y) -> (c tau_h, c tau_y) divides it by c (time rescaling). So fitted 'tau_h' "
          "absorb the input scale, and only tau_y/tau_h shapes the orbits. Falsifier: changing a alone changes the "
          "trajectory.",
    catalogue="vanrossem §2.5 U1",
    covers=("U1",),
)


def _u1_traj(p, a, th, ty, times):
    z0 = tp.lift_from_uvw(p.dh2_0, p.dy2_0, p.w_0, p.delta_y)
    dY = [p.delta_y, 0.0]
    return np.array(tp.uvw_from_lift(_lifted_path(z0, tp.lift_params(a, th, ty, dY), times), dY))


def _u1_outcome(p, scale_a_only=False):
    a = p.delta_x ** 2
    times = np.linspace(0, p.T, 11)[1:]
    ref = _u1_traj(p, a, p.tau_h, p.tau_y, times)
    sym = _u1_traj(p, p.lam * a, p.tau_h * (1.0 if scale_a_only else p.lam), p.tau_y, times)
    slow = _u1_traj(p, a, p.c * p.tau_h, p.c * p.tau_y, p.c * times)
    scl = np.max(np.abs(ref), axis=1, keepdims=True) + 1e-300
    # error model: two adaptive Dormand-Prince runs (rtol 1e-11) on different step sequences: 1e3 rtol times the
    # component scale, plus 64 eps rounding
    bound = (1e3 * RTOL + 64 * EPS) * scl
    parts = {"(lam a, lam tau_h) (residual / bound)": (float(np.max(np.abs(sym - ref) / bound)), 1.0)}
    if not scale_a_only:
        parts["(c tau_h, c tau_y) at c t (residual / bound)"] = (float(np.max(np.abs(slow - ref) / bound)), 1.0)
    return Outcome.from_parts(parts, "trajectories (dh2, dy2, w) under the symmetries of Eq 7",
                              values={"max_abs_diff": float(np.max(np.abs(sym - ref))), "T": p.T})


@universality.numeric
def universality_numeric(p):
    """Lifted trajectories at (a, tau_h), (lam a, lam tau_h) and (c tau_h, c tau_y, c t) coincide."""
    return _u1_outcome(p)


universality.property(over=("lam", "c", "tau_h", "tau_y", "delta_x", "delta_y"), max_examples=12)


@universality.falsifier("input_scale_alone", search=("lam",))
def universality_a_alone(p):
    """a -> lam a with tau_h fixed: a different trajectory (the input scale is not invisible by itself)."""
    return _u1_outcome(p, scale_a_only=True)


def _universality_symbolic_core(variant="stated"):
    """Eq 7 field: invariant under (a, tau_h) -> (lam a, lam tau_h); divided by c under both tau's -> c tau's."""
    th, ty, a, b, u, v, w, lam, c = sp.symbols("tau_h tau_y a b u v w lam c", positive=True)
    f = [-a / th * w, -w * (u / ty + a / th * v / u),
         -(3 * w - v + b) * u / (2 * ty) - a / (2 * th) * (v + w) * w / u]
    th_new = th / lam if variant == "a_times_tau_h" else lam * th
    cc = c ** 2 if variant == "time_unit_squared" else c
    n1 = sum(1 for e in f if sp.expand(sp.together(e.subs({a: lam * a, th: th_new}, simultaneous=True) - e)) != 0)
    n2 = sum(1 for e in f if sp.expand(sp.together(e.subs({th: c * th, ty: c * ty}, simultaneous=True) - e / cc)) != 0)
    return Outcome(residual=n1 + n2, tolerance=0, values={
        "method": "sympy.together/expand", "proved": "Eq 7 depends on a, tau_h only via a/tau_h; tau's set the time unit"},
        message="field components that changed")


@universality.symbolic(timeout=60)
def universality_symbolic(p):
    """Eq 7 field: invariant under (a, tau_h) -> (lam a, lam tau_h); divided by c under both tau's -> c tau's."""
    return _universality_symbolic_core()


@universality.mutant({
    'a_times_tau_h': 'a and tau_h enter only via a tau_h (invariance under (a, tau_h) -> (lam a, tau_h/lam))',
    'time_unit_squared': "tau's -> c tau's divides the field by c^2",
}, timeout=60)
def universality_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _universality_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


# ===========================================================================
# 7. Depth scaling of the initial distance (Eq 14, catalogue D1)
def _validate_d1(p):
    _pos(p, "gain")


depth = Claim(
    id="vanrossem.depth_scaling",
    title="Initial representational distance shrinks geometrically with depth, |dh(0)|^2 ~ G^n |Delta x|^2",
    label="Eq 14",
    section="5",
    equation="(14)",
    lines=(228, 232),
    statement=r"\|dh(0)\|^2\sim G^n\|x_2-x_1\|^2\quad(\text{per-layer gain }G<1\text{ at small initial weights})",
    status="holds",
    params=[
        Param.float("gain", 1.0, FLOOR, 3.0, "Xavier-normal init gain g", search=(0.6, 1.4)),
        Param.int("width", 200, 20, 1000, "width of every layer (input dimension too)", search=(150, 300)),
        Param.int("depth", 10, 2, 40, "number of leaky-ReLU layers"),
        Param.float("alpha", 0.01, 0.0, 1.0, "negative slope of the leaky ReLU"),
        Param.int("n_seeds", 24, 2, 200, "independent networks"),
        Param.seed("first seed"),
    ],
    validate=_validate_d1,
    notes="Quantitative form (catalogue D1): for Xavier-normal leaky-ReLU layers of equal width with zero biases, "
          "G = g^2 (1 + alpha^2)/2 (std g sqrt(2/(fan_in + fan_out)) = g/sqrt(width); half the units active). "
          "Nearby inputs (|Delta x| = 1e-4 |x|) so that the derivative regime applies. G is fitted as the log-log "
          "slope of the seed-averaged u_n over n = 1..depth. Error model: 5 standard errors of the per-seed slopes "
          "(finite-width fluctuation) + 2/width (Jensen bias of a log of a chi-square-like ratio).",
    catalogue="vanrossem §2.7 D1",
    covers=("D1",),
)


def _depth_fit(p):
    lnG = []
    us = []
    for k in range(p.n_seeds):
        rng = np.random.default_rng(p.seed + k)
        x1 = rng.standard_normal(p.width)
        dx = rng.standard_normal(p.width)
        x2 = x1 + 1e-4 * dx * np.linalg.norm(x1) / np.linalg.norm(dx)
        u = []
        h1, h2 = x1, x2
        for _ in range(p.depth):
            W = rng.standard_normal((p.width, p.width)) * p.gain / math.sqrt(p.width)
            z1, z2 = W @ h1, W @ h2
            h1, h2 = np.where(z1 > 0, z1, p.alpha * z1), np.where(z2 > 0, z2, p.alpha * z2)
            u.append(float(np.sum((h2 - h1) ** 2)))
        u = np.array(u) / float(np.sum((x2 - x1) ** 2))
        us.append(u)
        n = np.arange(1, p.depth + 1)
        lnG.append(np.polyfit(n, np.log(u), 1)[0])
    us = np.array(us)
    n = np.arange(1, p.depth + 1)
    slope = np.polyfit(n, np.log(us.mean(axis=0)), 1)[0]
    se = float(np.std(lnG, ddof=1) / math.sqrt(p.n_seeds))
    return float(slope), se, us.mean(axis=0)


def _depth_outcome(p, G_pred, label):
    slope, se, umean = _depth_fit(p)
    tol = 5 * se + 2.0 / p.width
    n = list(range(1, p.depth + 1))
    return Outcome(residual=abs(slope - math.log(G_pred)), tolerance=tol,
                   values={"G_fitted": math.exp(slope), "G_predicted": G_pred, "se_log_G": se,
                           "plot": {"kind": "semilogy", "x": [float(i) for i in n],
                                    "series": {"mean u_n / |dx|^2": umean.tolist(),
                                               label: [G_pred ** i for i in n]},
                                    "xlabel": "layer n", "ylabel": "|dh_n(0)|^2 / |dx|^2", "title": "Eq 14"}},
                   message=f"|log G_fit - log G| with G = {label}")


@depth.numeric
def depth_numeric(p):
    """Fitted per-layer gain of |dh_n(0)|^2 vs g^2 (1 + alpha^2)/2."""
    return _depth_outcome(p, p.gain ** 2 * (1 + p.alpha ** 2) / 2, "g^2(1+alpha^2)/2")


depth.property(over=("gain", "width", "seed"), max_examples=10)


@depth.falsifier("gain_squared", search=("seed",))
def depth_gain_squared(p):
    """G = g^2 (the factor 1/2 from the inactive half of the units dropped)."""
    return _depth_outcome(p, p.gain ** 2, "g^2")


@depth.reproduction
def depth_reproduction(p):
    """Catalogue D1 (b): fitted G = 0.4002, 0.4940, 0.5978, 0.8349, 0.9683 at g = 0.9, 1.0, 1.1, 1.3, 1.4
    (20 x 500 leaky nets, 5 seeds). Here 10 x 200 nets, 24 seeds; compared within the statistical tolerance of the
    catalogue's own fit (its residuals are ~2% below g^2(1+alpha^2)/2) plus ours."""
    from theorems.claim import Params
    quoted = {0.9: 0.4002, 1.0: 0.4940, 1.1: 0.5978, 1.3: 0.8349, 1.4: 0.9683}
    parts, vals = {}, {}
    for g, Gq in quoted.items():
        p = Params(gain=g, width=200, depth=10, alpha=0.01, n_seeds=24, seed=0)
        slope, se, _ = _depth_fit(p)
        vals[str(g)] = math.exp(slope)
        parts[f"g = {g}: G vs {Gq}"] = (abs(slope - math.log(Gq)), 5 * se + 2.0 / 200 + 0.025)
    return Outcome.from_parts(parts, "catalogue D1 table", values={"G_fitted": vals})


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
        Param.int("hidden", 4, 1, 50, "width of the representation", search=(1, 6)),
        Param.int("dim_x", 2, 1, 20, "input dimension", search=(1, 4)),
        Param.int("dim_y", 2, 1, 20, "output dimension", search=(1, 4)),
        Param.float("eta", 0.02, 0.0, 0.2, "largest learning rate (then eta/2, eta/4)", low_open=True,
                    search=(0.005, 0.04)),
        Param.float("T", 2.0, 0.0, 20.0, "horizon in units eta * steps (= t/tau)", low_open=True,
                    search=(0.5, 4.0)),
    ],
    notes="Tested on the two-point effective theory itself (the two-layer linear network with output bias of "
          "vanrossem.two_layer_linear_equivalence, Eq 16 loss): GD after K = T/eta steps vs the flow with tau = 1/eta at "
          "t = K steps (Dormand-Prince, rtol 1e-12). GD is explicit Euler with unit step for d phi/dt = -eta grad L, so "
          "the error is C eta + O(eta^2): the observed order over eta, eta/2, eta/4 must be 1 (error model: |order - 1| "
          "<= 0.1 + 4 eta, the O(eta) correction to a first-order error ratio). Falsifier: tau = 1/(2 eta).",
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
    k_min, k_max = p.T / p.eta, 4 * p.T / p.eta
    if not k_min >= GD_STEPS[0]:
        return inconclusive(f"T/eta = {k_min:.3g} GD steps at the largest eta: the order in eta is observed at a "
                            f"fixed horizon reached by many steps (at least {GD_STEPS[0]}); take T >= {GD_STEPS[0]} eta",
                            steps=k_min)
    if not k_max <= GD_STEPS[1]:
        return inconclusive(f"T/(eta/4) = {k_max:.3g} GD steps, more than the {GD_STEPS[1]:.0e} this check runs; "
                            f"take a larger eta", steps=k_max)
    theta0, grad = _gd_instance(p)
    # the order is 1 + O(eta lambda_max) (lambda_max: the largest Hessian eigenvalue, which grows with the width);
    # the tolerance 0.1 + 4 eta holds for eta lambda_max <= 1/4, beyond it GD is not in the first-order regime
    lam = _hessian_norm(grad, theta0)
    if p.eta * lam > 0.25:
        return inconclusive(f"eta * lambda_max(Hessian) = {p.eta * lam:.3g} > 1/4 (lambda_max = {lam:.3g}): GD is not in "
                            f"the small-step regime where its error is first order in eta; take eta <= {0.25 / lam:.3g}",
                            lambda_max=lam)
    etas = p.eta / np.array([1.0, 2.0, 4.0])
    errs = []
    for eta in etas:
        K = max(1, int(round(p.T / eta)))
        th = theta0.copy()
        for _ in range(K):
            th = th - eta * grad(th)
        tau = tau_of_eta(eta)
        fl, _, _ = tp.rk.dopri5_numpy(lambda t, y: -grad(y) / tau, 0.0, theta0, float(K), rtol=1e-12, atol=1e-14,
                                      h0=1e-3)
        errs.append(float(np.linalg.norm(th - fl)))
    errs = np.array(errs)
    if errs.min() < 1e3 * EPS * np.linalg.norm(theta0):
        return inconclusive("GD and flow agree to rounding: no observable error", errors=errs.tolist())
    orders = np.log2(errs[:-1] / errs[1:])
    return Outcome(residual=float(np.max(np.abs(orders - 1))), tolerance=0.1 + 4 * p.eta,
                   values={"etas": etas.tolist(), "errors": errs.tolist(), "orders": orders.tolist(),
                           "plot": {"kind": "loglog", "x": etas.tolist(), "series": {"|theta_GD - theta_flow|": errs.tolist()},
                                    "xlabel": "eta", "ylabel": "error at t = T/eta steps", "title": "Eq 3 -> Eq 4"}},
                   message="|observed order - 1| of GD against the flow with tau(eta)")


@gd_limit.numeric
def gd_limit_numeric(p):
    """GD vs the flow with tau = 1/eta: first-order convergence in eta."""
    return _gd_outcome(p, lambda eta: 1.0 / eta)


gd_limit.property(over=("seed", "hidden", "dim_x", "dim_y", "eta", "T"), max_examples=10)


@gd_limit.falsifier("tau_factor_two", search=("seed",))
def gd_limit_tau_factor_two(p):
    """tau = 1/(2 eta) (a factor 2 in the time unit, as in erratum E1): the discrepancy does not vanish as eta -> 0."""
    return _gd_outcome(p, lambda eta: 0.5 / eta)


# ===========================================================================
# 9. The plateau of the loss at small weights (l.132, catalogue L2 with the law of P1)
plateau = Claim(
    id="vanrossem.loss_plateau",
    title="The second term of the loss (Eq 9) plateaus at small weights; its length grows like ln(1/eps)/lambda_+",
    label="l.132 (Eq 9)",
    section="3.3",
    equation="(9), (35)",
    lines=(124, 132),
    statement=r"\text{the second term }\tfrac14\bigl(w+\tfrac12(\|\Delta y\|^2-\|dy\|^2)\bigr)\text{ causes a plateau in "
              r"the loss at small weights}",
    status="holds",
    params=[
        # narrower than the other two-point claims: at tau_y = 1e-6, delta_x >= 100 or delta_y <= 1e-3 the plateau
        # slope missed 1/rate beyond its tolerance (scripts/range_ends.py): not resolved, so not declared
        Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.5, 2.0)),
        Param.float("tau_y", 2.0, 1e-4, 1e3, "decoder time constant (>= 1e-4)", search=(0.5, 2.0)),
        Param.float("delta_x", 0.5, FLOOR, 10.0, "|x_2 - x_1| (<= 10)", search=(0.4, 1.5)),
        Param.float("delta_y", 1.0, 1e-2, 1e3, "|y_2 - y_1| (>= 1e-2)", search=(0.4, 1.5)),
        Param.float("eps", 1e-4, 1e-12, 0.01, "small scale: u0 = eps a, v0 = eps u0, dy(0) along Delta y (>= 1e-12: "
                    "at 5e-324, u0 = 0 and the direction of dh is undefined)", search=(1e-7, 1e-4)),
    ],
    validate=lambda p: _pos(p, "tau_h", "tau_y", "delta_x", "delta_y", "eps"),
    notes="Quantitative reading (catalogue P1): with u0 = eps a, v0 = eps u0 and w0 = v0 - sqrt(v0 b) (A_high = "
          "O(eps)), the time for L_Delta to halve is ln(1/eps)/lambda_+ + O(1), lambda_+ = A_low/tau_y (Eq 35 at "
          "A_high = 0). Checked as the slope (t_half(eps/100) - t_half(eps))/ln 100 against 1/lambda_+. Error model: "
          "the O(1) term changes by O(eps (1 + tau_y/tau_h)) between the two scales (A_high and the nonlinear terms are "
          "O(eps)); the slope's error is O(eps) (measured: x1/100 per x1/100 in eps), so it is estimated by Richardson "
          "from the slopes over [eps/1e4, eps/100] and [eps/1e6, eps/1e4] (tolerance 2|s1 - s2|/99 + 1e-9 t_half/ln 100; "
          "hypothesis 'small weights' checked: the slope differences must fall by 30..300 per x1/100 in eps, else "
          "inconclusive (e.g. eps=0.01 with delta_x=10: u0 = 1); "
          "the former factor 50 eps (1 + tau_y/tau_h)/lambda_+ had no derivation and let a x2 wrong rate certify at "
          "eps=0.003 tau_h=0.2 tau_y=5 delta_x=2 delta_y=0.3; falsifier rate_halved_e1 now refutes it). Numeric in "
          "Eq 7 time units (lifted integrator).",
    catalogue="vanrossem §2.2 L2; §2.5 P1",
    covers=("L2",),
)


def _t_half(p, eps):
    a, b = p.delta_x ** 2, p.delta_y ** 2
    u0 = eps * a
    v0 = eps * u0
    w0 = v0 - math.sqrt(v0 * b)
    dY = [p.delta_y]
    P = tp.lift_params(a, p.tau_h, p.tau_y, dY)
    z0 = tp.lift_from_uvw(u0, v0, w0, p.delta_y, m=1)

    def LD(z):
        u, v, w = tp.uvw_from_lift(z, dY)
        return 0.25 * (w + 0.5 * (b - v))
    L0 = LD(z0)
    # absolute tolerance below the initial state's own scale (s0 = sqrt(eps) delta_x can be ~1e-10)
    atol = min(ATOL, 1e-3 * RTOL * float(np.max(np.abs(z0))))
    AL = tp.a_low(a, b, p.tau_h, p.tau_y)
    dt = 0.25 * p.tau_y / AL
    t, z = 0.0, z0
    for _ in range(100_000):
        z1, _, _ = tp.integrate_lifted(z, P, t + dt, "numba", RTOL, atol, t0=t, h0=dt * 1e-2)
        if LD(z1) <= L0 / 2:
            lo, hi, zlo = t, t + dt, z
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                zm, _, _ = tp.integrate_lifted(zlo, P, mid, "numba", RTOL, atol, t0=lo, h0=(mid - lo) * 1e-2)
                if LD(zm) <= L0 / 2:
                    hi = mid
                else:
                    lo, zlo = mid, zm
                if hi - lo < 1e-12 * hi:
                    break
            return 0.5 * (lo + hi)
        t, z = t + dt, z1
    raise RuntimeError("no halving")


def _plateau_outcome(p, rate):
    """Slope of ``t_half`` against ``ln(1/eps)`` with a Richardson error estimate.

    Error model (measured, catalogue P1): ``t_half(eps) = ln(1/eps)/lambda_+ + C + K eps + O(eps^2)``, so the
    slope over ``[eps/100, eps]`` is ``1/lambda_+ - K eps (1 - 1/100)/ln 100 + ...`` (its error falls by ~100 for
    every factor 100 in eps: 2.1e-3, 2.1e-5, 2.1e-7 at eps = 3e-3, defaults).  With ``s1`` the slope over
    ``[eps/10^4, eps/100]`` and ``s2`` over ``[eps/10^6, eps/10^4]``, ``|s2 - 1/lambda_+| ~ |s1 - s2|/99``; the
    tolerance is twice that (the O(eps^2) term: the measured ratio is 100-140, never below 100) plus the
    integration and bisection error of each t_half (relative 1e-9, rtol 1e-11 and 1e-12 bisection)."""
    a, b = p.delta_x ** 2, p.delta_y ** 2
    t0, t1, t2 = _t_half(p, p.eps), _t_half(p, p.eps / 100), _t_half(p, p.eps / 1e4)
    t3 = _t_half(p, p.eps / 1e6)
    s0, s1, s2 = ((tb - ta) / math.log(100) for ta, tb in ((t0, t1), (t1, t2), (t2, t3)))
    lam = tp.a_low(a, b, p.tau_h, p.tau_y) / p.tau_y
    noise = 1e-9 * (t2 + t3) / math.log(100)
    values = {"t_half": [t0, t1, t2, t3], "eps": [p.eps, p.eps / 100, p.eps / 1e4, p.eps / 1e6],
              "slopes": [s0, s1, s2], "lambda_plus": lam, "predicted_slope": 1 / rate}
    # hypothesis "small weights": the O(eps) law of the slope's error must hold at these scales, i.e. the
    # successive slope differences fall by ~100 (measured 100-140 in the asymptotic regime); at eps = 0.01 with
    # a = 100 (u0 = eps a = 1) the start is not small and the ratio is far from 100
    d01, d12 = abs(s0 - s1), abs(s1 - s2)
    if d12 > noise and not (30 <= d01 / d12 <= 300):
        return inconclusive(f"not in the small-weight regime at eps={p.eps:g}: slope differences fall by "
                            f"{d01 / d12:.3g} per x1/100 in eps, not ~100 (u0 = eps a = {p.eps * a:.3g})", **values)
    richardson = d12 / 99
    tol = 2 * richardson + noise
    values.update(slope=s2, richardson_error_estimate=richardson)
    return Outcome(residual=abs(s2 - 1 / rate), tolerance=tol, values=values,
                   message="|dt_half/d ln(1/eps) - 1/rate| over [eps/1e6, eps/1e4] (Richardson error from [eps/1e4, eps/100])")


@plateau.numeric
def plateau_numeric(p):
    """Plateau length law: dt_half/d ln(1/eps) = 1/lambda_+ = tau_y/A_low."""
    a, b = p.delta_x ** 2, p.delta_y ** 2
    return _plateau_outcome(p, tp.a_low(a, b, p.tau_h, p.tau_y) / p.tau_y)


plateau.property(over=("tau_h", "tau_y", "delta_x", "delta_y", "eps"), max_examples=10)


@plateau.falsifier("rate_with_tau_h")
def plateau_rate_tau_h(p):
    """lambda_+ read as A_low/tau_h (the encoder's time constant) instead of A_low/tau_y."""
    a, b = p.delta_x ** 2, p.delta_y ** 2
    return _plateau_outcome(p, tp.a_low(a, b, p.tau_h, p.tau_y) / p.tau_h)


@plateau.falsifier("rate_halved_e1")
def plateau_rate_halved(p):
    """lambda_+ / 2: the escape rate in the time unit of the true Eq 16 gradients (erratum E1's factor 2) read
    into Eq 7's time: a rate wrong by x2, the nearest wrong reading of Eq 35."""
    a, b = p.delta_x ** 2, p.delta_y ** 2
    return _plateau_outcome(p, 0.5 * tp.a_low(a, b, p.tau_h, p.tau_y) / p.tau_y)


@plateau.reproduction
def plateau_reproduction(p):
    """Catalogue P1 (b): tau_h = tau_y = 1, a = 0.25, b = 1: slope (t_half(1e-6) - t_half(1e-4))/ln 100 = 2.000
    (= 1/lambda_+, 4 digits)."""
    from theorems.claim import Params
    p = Params(tau_h=1.0, tau_y=1.0, delta_x=0.5, delta_y=1.0, eps=1e-4)
    t1, t2 = _t_half(p, 1e-4), _t_half(p, 1e-6)
    slope = (t2 - t1) / math.log(100)
    return Outcome(residual=abs(slope - 2.000), tolerance=5e-4, values={"t_half": [t1, t2], "slope": slope,
                                                                          "catalogue_t_half": [19.196, 28.406]},
                   message="plateau slope vs the catalogue's 2.000")
