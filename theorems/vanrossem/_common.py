"""Shared helpers for the vanrossem claims: parameter blocks, the data constants ``a, b`` and
``A_high, A_low`` (Eq 11), validation of initial values, Hypothesis draws of consistent initial
states, and the converged integration of the lifted system with its error model.

Conventions (recorded once for the package, catalogue §1/§6):

* ``a = delta_x^2 = |x_2 - x_1|^2``, ``b = delta_y^2 = |y_2 - y_1|^2``; the state is
  ``(dh2, dy2, w) = (|dh|^2, |dy|^2, |dy|^2 - dy.(y_2 - y_1))`` (Eq 8).
* Time units (erratum E1, decision D1): Eq 7 verbatim, i.e. the flow of Eq 6 with the paper's Eq 17
  gradients (factor 1/2); the true gradients of Eq 16 (factor 1/4) run the same orbits at half speed.
  Every final-state claim depends only on ``tau_y/tau_h``.
* Integrator (decision D7, erratum E7): always the lifted ``(s, q)`` system of :mod:`solvers.twopoint`,
  which is smooth where the two representations cross.
"""
from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from solvers import twopoint as tp
from theorems.claim import Outcome, Param, ParamError, inconclusive

EPS = float(np.finfo(float).eps)
RTOL, ATOL = 1e-11, 1e-14  # Dormand-Prince tolerances of every converged integration
#: Smallest declared value of the positive scales (time constants, distances, |dh(0)|^2, gains, weight
#: scales).  Below it, against scales of order 1 up to 1e3, 1/tau^2, a/dh2_0 and the like leave double range
#: or the integration's step-size control: scripts/range_ends.py found ZeroDivisionError, singular Jacobians
#: and NaN tolerances at 5e-324 and 1e-200, and false refutations of error models down to 1e-10, in 25 claims.
FLOOR = 1e-6


# ---------------------------------------------------------------------------
# parameter blocks
def flow_params(tau_h=1.0, tau_y=2.0, delta_x=0.5, delta_y=1.0, dh2_0=0.01, dy2_0=0.001, w_0=0.0,
                delta_y_low=FLOOR, delta_y_open=False):
    """The seven parameters of a two-point initial value problem (defaults: the paper's two-point task
    ``dx = 0.5, dy = 1`` with small initial weights)."""
    return [
        Param.float("tau_h", tau_h, FLOOR, 1e3, "effective time constant of the encoder (1/learning rate)",
                    search=(0.3, 3.0)),
        Param.float("tau_y", tau_y, FLOOR, 1e3, "effective time constant of the decoder", search=(0.3, 3.0)),
        Param.float("delta_x", delta_x, FLOOR, 1e3, "|x_2 - x_1|, norm of the input difference (a = delta_x^2)",
                    search=(0.3, 2.0)),
        Param.float("delta_y", delta_y, delta_y_low, 1e3,
                    "|y_2 - y_1|, norm of the target difference (b = delta_y^2)", low_open=delta_y_open,
                    search=(0.3, 2.0)),
        Param.float("dh2_0", dh2_0, FLOOR, 1e4, "|dh(0)|^2, initial squared representational distance",
                    search=(1e-3, 3.0)),
        Param.float("dy2_0", dy2_0, 0.0, 1e4, "|dy(0)|^2, initial squared predicted-output difference",
                    search=(1e-4, 3.0)),
        Param.float("w_0", w_0, -1e4, 1e4, "w(0) = |dy(0)|^2 - dy(0).(y_2 - y_1), initial alignment"),
    ]


def validate_initial(p) -> None:
    """Initial values that no network can have are bad input (ParamError naming the constraint)."""
    why = tp.consistent(p.dh2_0, p.dy2_0, p.w_0, p.delta_y)
    if why:
        raise ParamError(f"initial values (dh2_0, dy2_0, w_0) = ({p.dh2_0!r}, {p.dy2_0!r}, {p.w_0!r}) are not a "
                         f"network state: {why}; the constraint is |w_0 - dy2_0| <= sqrt(dy2_0) * delta_y")
    if p.dh2_0 <= 0:
        raise ParamError("dh2_0 must be > 0: A_high divides by |dh(0)|^2")


def constants(p):
    """``(a, b, A_high, A_low)`` of Eq 11 for parameters ``p``."""
    a, b = p.delta_x ** 2, p.delta_y ** 2
    return a, b, tp.a_high(p.dh2_0, p.dy2_0, a, p.tau_h, p.tau_y), tp.a_low(a, b, p.tau_h, p.tau_y)


@st.composite
def consistent_states(draw, taus=(0.3, 3.0), deltas=(0.3, 2.0), log_u=(-3.0, 0.5), log_v=(-4.0, 0.5),
                      fixed=None, boundary=False):
    """Hypothesis draws of parameters with a consistent initial state: ``log10`` uniform ``dh2_0, dy2_0``,
    ``w_0 = dy2_0 - sqrt(dy2_0) delta_y cos(theta)`` with ``cos(theta)`` uniform in [-1, 1] (``boundary``:
    ``cos(theta) = +-1``, the states of a scalar-output network, dim Y = 1)."""
    f = dict(fixed or {})
    d = {
        "tau_h": draw(st.floats(*taus)), "tau_y": draw(st.floats(*taus)),
        "delta_x": draw(st.floats(*deltas)), "delta_y": draw(st.floats(*deltas)),
        "dh2_0": 10 ** draw(st.floats(*log_u)), "dy2_0": 10 ** draw(st.floats(*log_v)),
    }
    d.update(f)
    c = draw(st.sampled_from([-1.0, 1.0])) if boundary else draw(st.floats(-1.0, 1.0))
    d["w_0"] = d["dy2_0"] - math.sqrt(d["dy2_0"]) * d["delta_y"] * c
    return d


# ---------------------------------------------------------------------------
# converged integration and its error model
def converge(p, g=tp.EQ7_FACTOR, backend=None, **over):
    """Integrate the lifted system from the initial state of ``p`` to convergence (stopping rule in
    :func:`solvers.twopoint.solve_to_equilibrium`)."""
    a, b = p.delta_x ** 2, p.delta_y ** 2
    be = backend or ("numba" if getattr(p, "backend", "numpy") == "numba" else "numpy")
    kw = dict(g=g, backend=be, rtol=RTOL, atol=ATOL)
    kw.update(over)
    return tp.solve_to_equilibrium(p.dh2_0, p.dy2_0, p.w_0, a, b, p.tau_h, p.tau_y, **kw)


def limit_sensitivity(res):
    """``|d u*/d A_high|`` of Eq 10 near the run's level sets: ``d(A_H/2 + S)/dA_H = 1/2 + A_H/(4 S) = u*/(2 S)``
    (in [0, 1]), the larger of its values at ``A_high(0)`` and ``A_high(T)``, plus ``drift/(8 S)`` for the
    curvature (``d^2 u*/dA_H^2 = A_L^2/(4 S^3) <= 1/(4 S)``); 1 where ``S = 0``."""
    AL = res["AL"]
    drift = abs(res["AH_end"] - res["AH0"])
    best = 0.0
    for AH in (res["AH0"], res["AH_end"]):
        S = math.hypot(AH / 2, AL)
        if S == 0 or not math.isfinite(S):
            return 1.0
        best = max(best, tp.eq10(AH, AL) / (2 * S) + drift / (8 * S))
    return min(1.0, best)


def limit_tolerance(res, *scales):
    """Error model of ``|u(T) - u*|`` for a converged run ``res``:

    * ``sens * (|A_high(T) - A_high(0)| + 8 eps (2 u0 + |A_high(0)|))``: the integrator's drift along the line of
      equilibria and the rounding of ``A_high(0) = u0 - (tau_y a/tau_h) v0/u0`` (its two terms are at most
      ``u0`` and ``u0 + |A_high|``) move the selected equilibrium by ``sens`` = :func:`limit_sensitivity`
      times as much (``sens = u*/(2S) <= 1``; ~ ``u*/|A_high|`` in the collapse regime ``A_high << -A_low``);
    * ``2 |du|``: the Newton step of Eq 25 on the final level set estimates the distance ``u* - u(T)`` to
      first order; the factor 2 covers the ``O(du^2 + w^2)`` remainder at the stopping time;
    * ``10 rtol u``: local error of the last steps; ``32 eps (sum of scales)``: rounding of ``u = s^2``
      and of Eq 10 (scales: the compared values and any other quantity the caller's formula rounds)."""
    drift = abs(res["AH_end"] - res["AH0"])
    u0 = abs(res["us"][0]) if res.get("us") else 0.0
    ah_round = 8 * EPS * (2 * u0 + abs(res["AH0"]))
    return (limit_sensitivity(res) * (drift + ah_round) + 2 * abs(res["du"]) + 10 * RTOL * abs(res["u"])
            + 32 * EPS * (abs(res["u"]) + sum(abs(x) for x in scales)))


def not_converged(res):
    return inconclusive(f"the lifted integration did not converge by t={res['t']:.3g} "
                        f"(Newton distance {res['du']:.2e}); the plateau is longer than the chunk budget",
                        t=res["t"], du=res["du"], u=res["u"])


def plot_dh2(res, u_star, title="|dh(t)|^2 (lifted integration) and the Eq 10 limit", n=200):
    """A semilogx plot of ``dh2(t)`` with the constant Eq 10 line (at most ``n`` points)."""
    ts, us = np.asarray(res["ts"][1:]), np.asarray(res["us"][1:])
    if len(ts) > n:
        idx = np.unique(np.linspace(0, len(ts) - 1, n).round().astype(int))
        ts, us = ts[idx], us[idx]
    return {"kind": "semilogx", "x": [float(x) for x in ts],
            "series": {"dh2(t)": [float(x) for x in us], "Eq 10": [float(u_star)] * len(ts)},
            "xlabel": "t (Eq 7 time units)", "ylabel": "|dh|^2", "title": title}


def limit_outcome(p, predicted, res, label, extra=None):
    """``|u(T) - predicted|`` against :func:`limit_tolerance` (the same error model for the claim and
    every falsifier)."""
    a, b, AH, AL = constants(p)
    if not res["converged"]:
        return not_converged(res)
    resid = abs(res["u"] - predicted)
    tol = limit_tolerance(res, predicted)
    values = {"dh2_predicted": predicted, "dh2_integrated": res["u"], "A_high": AH, "A_low": AL,
              "t_stop": res["t"], "newton_distance": res["du"], "A_high_drift": res["AH_end"] - res["AH0"],
              "crossings": res["crossings"], "rk_steps": res["steps"]}
    values.update(extra or {})
    return Outcome(residual=resid, tolerance=tol, values=values,
                   message=f"|dh2(T) - {label}| after converged lifted integration to T={res['t']:.3g}")


def _pos(p, *names):
    for n in names:
        if not (getattr(p, n) > 0):
            raise ParamError(f"parameter {n} must be > 0 (got {getattr(p, n)!r})")


#: Dormand-Prince steps per sample interval before the interval counts as stiff and it and the rest go to Radau
#: (the collapse regime a |q|^2/tau_h >> s^2/tau_y: sweep draws needed 1e6-1e8 explicit steps, errors on the 2e6 budget)
DP_BUDGET = 20_000


def _lifted_path(z0, P, times, rtol=RTOL, atol=ATOL, backend="numba"):
    """Lifted states at the sorted ``times`` (Dormand-Prince, chained from t = 0; from the first interval that exhausts
    :data:`DP_BUDGET` steps on, Radau IIA with the exact Jacobian at the same rtol/atol)."""
    out, z, t, stiff = [], np.asarray(z0, dtype=float), 0.0, False
    for t1 in times:
        if t1 > t:
            if not stiff:
                r = tp.integrate_lifted(z, P, t1, backend, rtol, atol, t0=t, h0=(t1 - t) * 1e-3, max_steps=DP_BUDGET)
                if r.success:
                    z = r.y
                else:
                    stiff = True
            if stiff:
                z = tp.integrate_lifted_stiff(z, P, t1, backend, rtol, atol, t0=t).checked()
            t = t1
        out.append(np.array(z, dtype=float))
    return np.array(out)
