"""§4.1 Lazy and Rich Learning Regimes, the limits of Eq 10 (seed l.166-177): the large-weight (lazy) limit Eq 12
(l.166-170, erratum) and the small-weight (rich) limit Eq 13 (l.171-175).
Claims: ``vanrossem.large_weight_limit``, ``vanrossem.small_weight_limit``.

Conventions: :mod:`theorems.vanrossem._common`; numbers quoted in comments come from the catalogue.
"""
from __future__ import annotations

import math

from solvers import twopoint as tp
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.vanrossem._common import FLOOR, constants, converge, limit_outcome, limit_tolerance, not_converged


# ===========================================================================
# 6. Large and small initial weights (Eqs 12-13; catalogue F8/E4, F9)
def _scale_params(scale, rho1, rho2, delta_y=1.0, scale_search=(3.0, 15.0), scale_high=1e4, rho_high=100.0):
    return [
        Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.5, 2.0)),
        Param.float("tau_y", 1.0, FLOOR, 1e3, "decoder time constant", search=(0.5, 2.0)),
        Param.float("delta_x", 1.0, FLOOR, 1e3, "|x_2 - x_1| (a = delta_x^2)", search=(0.5, 2.0)),
        Param.float("delta_y", delta_y, FLOOR, 1e3, "|y_2 - y_1| (b = delta_y^2)", search=(0.5, 2.0)),
        Param.float("scale", scale, FLOOR, scale_high, "initial weight scale s: dh2_0 = s a rho1, dy2_0 = s dh2_0 rho2 "
                    "(both Eq 12/13 ratios proportional to s)", search=scale_search),
        Param.float("rho1", rho1, FLOOR, rho_high, "dh2_0 / (s a)", search=(0.3, 2.0)),
        Param.float("rho2", rho2, FLOOR, rho_high, "dy2_0 / (s dh2_0)", search=(0.3, 2.0)),
    ]


def _scaled_state(p):
    """The flow parameters of a scaled start (w_0 = dy2_0: dy(0) orthogonal to Delta_y, consistent)."""
    from theorems.claim import Params
    a = p.delta_x ** 2
    u0 = p.scale * a * p.rho1
    v0 = p.scale * u0 * p.rho2
    q = Params(tau_h=p.tau_h, tau_y=p.tau_y, delta_x=p.delta_x, delta_y=p.delta_y, dh2_0=u0, dy2_0=v0, w_0=v0)
    q.backend = getattr(p, "backend", "numpy")
    return q


large = Claim(
    id="vanrossem.large_weight_limit",
    title="Large initial weights: the final distance converges to A_high (lazy regime)",
    label="Eq 12",
    section="4.1",
    equation="(12)",
    lines=(166, 170),
    statement=r"\frac{\|dh(0)\|^2}{\|\Delta x\|^2},\ \frac{\|dy(0)\|^2}{\|dh(0)\|^2}\gg1\ \Longrightarrow\ "
              r"\|dh(\infty)\|^2\to A_{\rm high}",
    status="erratum",
    corrected=r"\bigl|\,\|dh(\infty)\|^2-\max(A_{\rm high},0)\bigr|\le A_{\rm low}^2/|A_{\rm high}|\text{, so the "
              r"limit is } A_{\rm high}\text{ only when } A_{\rm high}\gg A_{\rm low}>0\text{; for } A_{\rm high}<0"
              r"\text{ the representations collapse, } \|dh(\infty)\|^2\approx A_{\rm low}^2/|A_{\rm high}|\to0.",
    params=_scale_params(10.0, 0.5, 1.0),
    bound=True,
    notes="Eq 12 makes both terms of A_high = a (u0/a - (tau_y/tau_h) v0/u0) large without fixing its sign (E4). "
          "The bound is exact given Eq 10 (A_H < 0: u* = A_L^2/(S - A_H/2) <= A_L^2/|A_H|; A_H > 0: u* - A_H = "
          "A_L^2/(S + A_H/2)); the checks integrate the dynamics. Default s = 10 (catalogue: s = 100, A_H = -50, "
          "u_inf = 0.019992, reproduced by the falsifier's instance). Property and falsifier run the Numba kernel "
          "(collapse runs are stiff: ~3e4 steps at s = 100); the kernel is tested against its NumPy reference in "
          "tests/test_twopoint.py.",
    catalogue="vanrossem §2.3 F8; §4 E4; §5 priority 4",
    covers=("F8", "E4"),
)


def _large_outcome(p, predicted, label, backend=None):
    q = _scaled_state(p)
    a, b, AH, AL = constants(q)
    res = converge(q, backend=backend)
    if not res["converged"]:
        return not_converged(res)
    bound = AL * AL / abs(AH) if AH != 0 else math.inf
    out = limit_outcome(q, predicted, res, label)
    out.tolerance = bound + out.tolerance  # the corrected statement's bound + the integrator's error model
    out.values.update({"bound_AL2_over_AH": bound, "dh2_0": q.dh2_0, "dy2_0": q.dy2_0, "eq10": tp.eq10(AH, AL)})
    if 0 < bound < math.inf:
        # bound=True convention: the side that must be smaller over the side that must be larger, |u_inf - max(A_H,
        # 0)| / (A_L^2/|A_H| + integrator error) (Eq 10: A_H / (S + |A_H|/2) with S = sqrt(A_H^2/4 + A_L^2), -> 1 as
        # A_L/|A_H| -> 0); the error model is in the denominator, else a bound below the integration error (A_L =
        # 1e-6: A_L^2/|A_H| ~ 1e-15) gave "tightness" 2e3 on a certified draw
        out.values["tightness"] = float(out.residual) / float(out.tolerance)
    return out


@large.numeric(backends=("numpy", "numba"))
def large_numeric(p):
    """|u_inf - max(A_high, 0)| <= A_low^2/|A_high| on the converged lifted integration."""
    AH = constants(_scaled_state(p))[2]
    return _large_outcome(p, max(AH, 0.0), "max(A_high, 0)")


@large.property_check(over=("scale", "rho1", "rho2", "tau_h", "tau_y", "delta_x", "delta_y"), max_examples=12)
def large_property(p):
    """Drawn large scales, both signs of A_high (Numba kernel)."""
    AH = constants(_scaled_state(p))[2]
    return _large_outcome(p, max(AH, 0.0), "max(A_high, 0)", backend="numba")


# the bound driven to equality: tightness |u_inf - max(A_H, 0)| / (A_L^2/|A_H|) = |A_H| / (S + |A_H|/2) -> 1 as
# A_L/|A_H| -> 0; witnesses: the collapse side (rho2 = 100: A_H = -995) and the lazy side (rho1 = 100, rho2 = 1e-6:
# A_H = +1000), both at tightness 1 - 1e-6; the default (A_H = -5) is at 0.963
large.tightness(over=("rho1", "rho2", "delta_y"), max_examples=10,
                witnesses=[{"rho2": 100.0}, {"rho1": 100.0, "rho2": 1e-6}])


@large.falsifier("stated", fixed={"scale": 100.0})
def large_stated(p):
    """The printed limit A_high at s = 100, rho = (0.5, 1): A_high = -50 while u_inf = 0.019992 (catalogue E4)."""
    AH = constants(_scaled_state(p))[2]
    return _large_outcome(p, AH, "A_high", backend="numba")


@large.reproduction
def large_reproduction(p):
    """Catalogue E4: s = 100, rho = (0.5, 1): A_high = -50, u_inf = 0.019992; rho = (1, 0.5): 50.02 (Numba kernel)."""
    from theorems.claim import Params
    out = {}
    vals = {}
    for (r1, r2), q, half in (((0.5, 1.0), 0.019992, 5e-7), ((1.0, 0.5), 50.02, 5e-3)):
        p = Params(tau_h=1.0, tau_y=1.0, delta_x=1.0, delta_y=1.0, scale=100.0, rho1=r1, rho2=r2)
        res = converge(_scaled_state(p), backend="numba")
        out[f"rho=({r1:g},{r2:g}) vs {q}"] = (abs(res["u"] - q), half + limit_tolerance(res))
        vals[f"rho=({r1:g},{r2:g})"] = res["u"]
    return Outcome.from_parts(out, "catalogue E4 table (s = 100)", values=vals)


small = Claim(
    id="vanrossem.small_weight_limit",
    title="Small initial weights: the final distance converges to A_low (rich regime)",
    label="Eq 13",
    section="4.1",
    equation="(13)",
    lines=(171, 175),
    statement=r"\frac{\|dh(0)\|^2}{\|\Delta x\|^2},\ \frac{\|dy(0)\|^2}{\|dh(0)\|^2}\ll1\ \Longrightarrow\ "
              r"\|dh(\infty)\|^2\to A_{\rm low}",
    status="gap",
    corrected=r"\bigl|\,\|dh(\infty)\|^2-A_{\rm low}\bigr|\le|A_{\rm high}|\le u_0+\tfrac{\tau_y}{\tau_h}a\tfrac{v_0}{u_0}"
              r"\text{; the limit is } A_{\rm low}\text{ when } |A_{\rm high}|\ll A_{\rm low}\text{ (fails for nearly "
              r"equal targets, } b\to0\text{, at any fixed small scale).}",
    # Eq 13's hypothesis, both ratios << 1, by construction: s <= 0.1 and rho1, rho2 <= 1 give ratios s rho <= 0.1 (the
    # shared range, s up to 1e4 and rho up to 100, drew ratios up to 5 in the whole-suite sweep of seed 20261126: 4 of
    # its 5 inconclusive draws were outside the hypothesis)
    params=_scale_params(1e-3, 1.0, 0.5, scale_search=(1e-5, 1e-2), scale_high=0.1, rho_high=1.0),
    bound=True,
    notes="The bound |u* - A_L| <= |A_H|/2 + |S - A_L| <= |A_H| is exact given Eq 10; the checks integrate the "
          "dynamics (plateau of length ~ tau_y ln(1/s)/lam_+). Inconclusive where A_H <= -A_L (collapse: 0 < u* < A_L "
          "makes the bound hold for any limit, so it decides nothing). Falsifier 'stated' (Eq 13 ratios alone): "
          "((0.01, 0.005)) with b = 1e-8 give u_inf = 0.005002 = 50 A_low (catalogue F9 (d)); quantitative reading of "
          "'converges to A_low': |u_inf/A_low - 1| <= 2 max(Eq 13 ratios).",
    catalogue="vanrossem §2.3 F9; §5 priority 4",
    covers=("F9",),
)


def _small_outcome(p, quantitative_eq13=False):
    q = _scaled_state(p)
    a, b, AH, AL = constants(q)
    if not quantitative_eq13 and AH <= -AL:
        # for A_high < 0, 0 < u* < A_low (Eq 10), so |u* - A_low| < A_low <= |A_high|: the bound would hold for any
        # limit in [0, A_low] and the comparison could not fail (sweep seed 31337: tolerance up to 2e6 x the
        # residual, A_high = -7041, A_low = 0.0031, the collapse regime of vanrossem.large_weight_limit)
        return inconclusive(f"A_high = {AH:.3g} <= -A_low = {-AL:.3g}: outside the small-weight regime |A_high| << "
                            "A_low of Eq 13 (here the representations collapse, see vanrossem.large_weight_limit); "
                            "the bound |u_inf - A_low| <= |A_high| is implied by 0 < u_inf < A_low and decides nothing",
                            A_high=AH, A_low=AL, eq10=tp.eq10(AH, AL))
    res = converge(q)
    if not res["converged"]:
        return not_converged(res)
    ratios = (q.dh2_0 / a, q.dy2_0 / q.dh2_0)
    out = limit_outcome(q, AL, res, "A_low")
    if quantitative_eq13:
        out.tolerance += 2 * max(ratios) * AL
    else:
        out.tolerance += abs(AH)
    out.values.update({"eq13_ratios": list(ratios), "bound_abs_AH": abs(AH), "ratio_to_A_low": res["u"] / AL,
                       "eq10": tp.eq10(AH, AL)})
    if not quantitative_eq13 and AH != 0:
        # bound=True convention: |u_inf - A_low| / (|A_high| + error) (Eq 10, A_H > 0: (A_H/2 + S - A_L)/A_H, -> 1 as
        # A_L/A_H -> 0, i.e. nearly equal targets at a fixed small scale: the gap's own example)
        out.values["tightness"] = float(out.residual) / float(out.tolerance)   # |A_H| + the integrator's error
    return out


@small.numeric(backends=("numpy", "numba"))
def small_numeric(p):
    """|u_inf - A_low| <= |A_high| on the converged lifted integration."""
    return _small_outcome(p)


small.property(over=("scale", "rho1", "rho2", "tau_h", "tau_y", "delta_x", "delta_y"), max_examples=12)


# the bound driven to equality: tightness |u_inf - A_L| / |A_H| -> 1 as A_L/A_H -> 0 with A_H > 0 (nearly equal
# targets at a fixed small scale, the gap's own case); witness delta_y = 1e-6 (A_L = 1e-6, A_H = 5e-4): 0.998; the
# default (A_L = 1, A_H = 5e-4) is at 0.5.  The second inequality |A_H| <= u0 + (tau_y/tau_h) a v0/u0 is the triangle
# inequality (equality when one term vanishes) and is not searched.
small.tightness(over=("rho1", "rho2", "delta_y"), max_examples=10, witnesses=[{"delta_y": 1e-6}])


@small.falsifier("stated", fixed={"delta_y": 1e-4, "scale": 0.01, "rho1": 1.0, "rho2": 0.5})
def small_ratios_only(p):
    """The printed reading (Eq 13 ratios alone; 'ratios_only'): ratios (0.01, 0.005) but nearly equal targets
    (b = 1e-8): u_inf = 0.005002 = 50 A_low."""
    return _small_outcome(p, quantitative_eq13=True)


@small.reproduction
def small_reproduction(p):
    """Catalogue F9 table u_inf/A_low (taus = a = b = 1): s = 1e-4, 1e-2, 1 for rho = (1, 0.5) and (0.5, 1)."""
    from theorems.claim import Params
    quoted = {(1e-4, 1.0, 0.5): (1.00003, 5e-6), (1e-2, 1.0, 0.5): (1.0025, 5e-5), (1.0, 1.0, 0.5): (1.281, 5e-4),
              (1e-4, 0.5, 1.0): (0.999975, 5e-7), (1e-2, 0.5, 1.0): (0.9975, 5e-5), (1.0, 0.5, 1.0): (0.7808, 5e-5)}
    parts, vals = {}, {}
    for (s, r1, r2), (q, half_ulp) in quoted.items():
        p = Params(tau_h=1.0, tau_y=1.0, delta_x=1.0, delta_y=1.0, scale=s, rho1=r1, rho2=r2)
        res = converge(_scaled_state(p))
        ratio = res["u"] / 1.0  # A_low = 1
        parts[f"s={s:g} rho=({r1:g},{r2:g}) vs {q}"] = (abs(ratio - q), half_ulp + limit_tolerance(res))
        vals[f"s={s:g} rho=({r1:g},{r2:g})"] = ratio
    return Outcome.from_parts(parts, "catalogue F9 table", values=vals)
