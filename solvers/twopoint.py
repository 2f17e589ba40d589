"""The two-point effective theory of van Rossem & Saxe (seed 001, Eqs 6-8, 10-11, 21, 24-25).

Notation (catalogue ``research/vanrossem_saxe.md`` §1): ``a = |dx|^2``, ``b = |dy_target|^2`` (the squared
input and target differences), ``u = |dh|^2``, ``v = |dy|^2``, ``w = v - dy.Delta_y``.

Two representations of the same dynamics:

* **Eq 7** (the paper's reduced 3-variable system) in the variables ``(u, v, w)``.  It divides by ``u`` and
  is singular where the two representations cross (``u = 0``); integrated naively it returns negative
  squared distances (catalogue R3, erratum E7).
* **The lifted system** on the invariant manifold ``M = {dh = s n, D_y = q n^T}`` (catalogue R0, decision
  D7): ``s`` (signed representational difference along the fixed unit vector ``n``) and ``q`` (the decoder
  column, ``q in R^m``, ``m = dim Y``).  With ``r = q s - Delta_y`` and gradient factor ``g``::

      ds/dt = -(g a / tau_h) q.r,      dq/dt = -(g / tau_y) s r.

  It is polynomial (smooth through ``s = 0``) and ``(u, v, w) = (s^2, s^2|q|^2, s^2|q|^2 - s q.Delta_y)``
  satisfies Eq 7 wherever ``u > 0``.

Gradient factor (erratum E1, decision D1): Eq 7 as printed is the flow of Eq 6 with the paper's Eq 17
gradients, which carry a factor ``g = 1/2``; the true gradients of the loss Eq 16 carry ``g = 1/4``.
Both define the same orbits, and ``g`` only rescales time (``t -> 2 g t``).  **Eq 7 verbatim (g = 1/2)
is the default everywhere**; ``g`` is a parameter of both right-hand sides (``g = 1/2`` reproduces Eq 7).

Every right-hand side exists as a Numba kernel ``f(t, y, args)`` (``args = (P,)``, one float array) for
:mod:`solvers.rk` and as a NumPy reference ``f(t, y, P)``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from solvers import rk
from solvers.specialise import register

__all__ = ["EQ7_FACTOR", "TRUE_FACTOR", "eq7_rhs", "eq7_rhs_numpy", "lift_rhs", "lift_rhs_numpy",
           "eq7_params", "lift_params", "lift_from_uvw", "uvw_from_lift", "a_high", "a_low", "eq10",
           "eq10_minus", "level_a_high", "newton_du", "integrate_lifted", "solve_to_equilibrium",
           "integrate_eq7_naive", "consistent", "lift_jacobian", "integrate_lifted_stiff"]

EPS = float(np.finfo(float).eps)
EQ7_FACTOR = 0.5   # the paper's Eq 17 gradients (Eq 7 verbatim)
TRUE_FACTOR = 0.25  # the true gradients of the loss Eq 16 (erratum E1)
STIFF_METHOD = "Radau"  # SciPy method of integrate_lifted_stiff


# ---------------------------------------------------------------------------
# right-hand sides
def eq7_params(a, b, tau_h, tau_y, g=EQ7_FACTOR):
    """Parameter array of :func:`eq7_rhs`: ``[a, b, tau_h, tau_y, g]``."""
    return np.array([a, b, tau_h, tau_y, g], dtype=float)


@register
@njit(cache=True)
def eq7_rhs(t, y, args):
    """Eq 7 (times ``2 g``; ``g = 1/2`` is Eq 7 verbatim); ``y = (u, v, w)``, ``args = (P,)``."""
    P = args[0]
    a, b, th, ty, g = P[0], P[1], P[2], P[3], P[4]
    u, v, w = y[0], y[1], y[2]
    c = 2.0 * g
    out = np.empty(3)
    out[0] = -c * a / th * w
    out[1] = -c * w * (u / ty + a / th * v / u)
    out[2] = -c * ((3.0 * w - v + b) * u / (2.0 * ty) + a / (2.0 * th) * (v + w) * w / u)
    return out


def eq7_rhs_numpy(t, y, P):
    """NumPy reference of :func:`eq7_rhs` (``f(t, y, P)``)."""
    a, b, th, ty, g = P
    u, v, w = y
    c = 2.0 * g
    return np.array([-c * a / th * w,
                     -c * w * (u / ty + a / th * v / u),
                     -c * ((3 * w - v + b) * u / (2 * ty) + a / (2 * th) * (v + w) * w / u)])


def lift_params(a, tau_h, tau_y, delta_y_vec, g=EQ7_FACTOR):
    """Parameter array of :func:`lift_rhs`: ``[a, tau_h, tau_y, g, Delta_y_1..Delta_y_m]``."""
    return np.concatenate([[a, tau_h, tau_y, g], np.asarray(delta_y_vec, dtype=float).ravel()])


@register
@njit(cache=True)
def lift_rhs(t, z, args):
    """Lifted system ``z = (s, q_1..q_m)``: ``s' = -(g a/tau_h) q.r``, ``q' = -(g/tau_y) s r``, ``r = q s - Delta_y``."""
    P = args[0]
    a, th, ty, g = P[0], P[1], P[2], P[3]
    m = z.shape[0] - 1
    s = z[0]
    out = np.empty(m + 1)
    qr = 0.0
    for i in range(m):
        r = z[1 + i] * s - P[4 + i]
        qr += z[1 + i] * r
        out[1 + i] = -g / ty * s * r
    out[0] = -g * a / th * qr
    return out


def lift_rhs_numpy(t, z, P):
    """NumPy reference of :func:`lift_rhs`."""
    a, th, ty, g = P[:4]
    dY = P[4:]
    s, q = z[0], z[1:]
    r = q * s - dY
    return np.concatenate([[-g * a / th * (q @ r)], -g / ty * s * r])


# ---------------------------------------------------------------------------
# coordinates
def consistent(u, v, w, delta_y) -> str | None:
    """Why ``(u, v, w)`` is not the state of any network with target difference norm ``delta_y``, or None.

    ``u = |dh|^2 >= 0``, ``v = |dy|^2 >= 0`` and, by Cauchy-Schwarz on ``v - w = dy.Delta_y``,
    ``|w - v| <= sqrt(v) * delta_y``."""
    if u < 0:
        return f"dh2 = |dh|^2 must be >= 0 (got {u!r})"
    if v < 0:
        return f"dy2 = |dy|^2 must be >= 0 (got {v!r})"
    if abs(w - v) > math.sqrt(v) * delta_y * (1 + 1e-12) + 1e-300:
        return (f"|w - dy2| = {abs(w - v)!r} exceeds sqrt(dy2)*delta_y = {math.sqrt(v) * delta_y!r} "
                "(Cauchy-Schwarz: w - |dy|^2 = -dy.Delta_y)")
    return None


def lift_from_uvw(u, v, w, delta_y, m=2):
    """A lifted state ``(s, q)`` (``s = +sqrt(u) > 0``) with ``Delta_y = (delta_y, 0, ..)`` and the given
    ``(u, v, w)``; ``m >= 2`` makes every consistent triple reachable (``m = 1`` needs ``|w - v| =
    sqrt(v) delta_y``).  Raises ValueError for an inconsistent triple or ``u = 0``."""
    why = consistent(u, v, w, delta_y)
    if why:
        raise ValueError(why)
    if u <= 0:
        raise ValueError("dh2 = 0: the direction n of the representational difference is undefined")
    s = math.sqrt(u)
    q = np.zeros(m)
    qn2 = v / u                      # |q|^2
    if delta_y > 0:
        q1 = (v - w) / (s * delta_y)  # q.Delta_y = (v - w)/s
    else:
        q1 = math.sqrt(qn2)
    rest = qn2 - q1 * q1
    if rest < 0:
        if rest < -1e-10 * max(qn2, 1e-300) or m == 1 and rest < -1e-10 * max(qn2, 1e-300):
            raise ValueError("inconsistent (u, v, w)")
        rest = 0.0
    if m == 1:
        if rest > 1e-10 * max(qn2, 1e-300):
            raise ValueError("dim Y = 1 needs |w - dy2| = sqrt(dy2) * delta_y")
        q[0] = q1
    else:
        q[0], q[1] = q1, math.sqrt(rest)
    return np.concatenate([[s], q])


def uvw_from_lift(z, delta_y_vec):
    """``(u, v, w)`` of lifted states ``z`` (shape ``(..., 1 + m)``)."""
    z = np.asarray(z, dtype=float)
    s, q = z[..., 0], z[..., 1:]
    qq = np.sum(q * q, axis=-1)
    qd = q @ np.asarray(delta_y_vec, dtype=float)
    u = s * s
    v = u * qq
    return u, v, v - s * qd


# ---------------------------------------------------------------------------
# Eq 10/11 and the conserved quantity
def a_high(u0, v0, a, tau_h, tau_y):
    """Eq 11: ``A_high = (u0/a - (tau_y/tau_h) v0/u0) a``."""
    return u0 - tau_y / tau_h * a * v0 / u0


def a_low(a, b, tau_h, tau_y):
    """Eq 11: ``A_low = sqrt(tau_y/tau_h) |dx| |dy|``."""
    return math.sqrt(tau_y / tau_h) * math.sqrt(a) * math.sqrt(b)


def eq10(AH, AL):
    """Eq 10 ``A_H/2 + sqrt(A_H^2/4 + A_L^2)``, evaluated without cancellation for ``A_H < 0``
    (``= A_L^2 / (S - A_H/2)``); relative rounding error a few eps."""
    S = math.hypot(AH / 2, AL)
    return AH / 2 + S if AH >= 0 else AL * AL / (S - AH / 2)


def eq10_minus(AH, AL):
    """The other root ``A_H/2 - S`` of the fixed-point equation (negative; catalogue F4)."""
    S = math.hypot(AH / 2, AL)
    return AH / 2 - S if AH <= 0 else -AL * AL / (S + AH / 2)


def level_a_high(z, a, tau_h, tau_y):
    """The conserved quantity in lifted form: ``s^2 - (tau_y a/tau_h)|q|^2`` (= A_high; Eq 24: on the level
    set, ``v = (tau_h/(tau_y a)) u (u - A_high)``).  It is the n-component of the conserved balance
    ``tau_h D_h D_h^T - tau_y D_y^T D_y`` of Eq 6, times ``a/tau_h``; quadratic, so implicit midpoint keeps it."""
    z = np.asarray(z, dtype=float)
    return z[..., 0] ** 2 - tau_y * a / tau_h * np.sum(z[..., 1:] ** 2, axis=-1)


def newton_du(u, w, a, b, tau_h, tau_y, AH):
    """Newton step in ``u`` towards the equilibrium of the 2-D system Eq 25 on the level set ``A_high = AH``.

    Eq 25: ``u' = -(a/tau_h) w``, ``w' = F(u, w)`` with ``v = k u (u - AH)``, ``k = tau_h/(tau_y a)``.
    The Newton step ``-J^{-1}(u', w')`` has ``dw = -w`` and ``du = (-F + J22 w)/J21``; near a stable
    node it equals ``u* - u`` up to ``O(|du|^2 + |w|^2)``."""
    k = tau_h / (tau_y * a)
    v = k * u * (u - AH)
    dv = k * (2 * u - AH)
    F = -(3 * w - v + b) * u / (2 * tau_y) - a / (2 * tau_h) * (v + w) * w / u
    J21 = (-(3 * w - v + b) / (2 * tau_y) + u * dv / (2 * tau_y)
           - a / (2 * tau_h) * (dv * w / u - (v + w) * w / (u * u)))
    J22 = -3 * u / (2 * tau_y) - a / (2 * tau_h) * (v + 2 * w) / u
    if J21 == 0:
        return math.inf
    return (-F + J22 * w) / J21


# ---------------------------------------------------------------------------
# integrators
def integrate_lifted(z0, P, t1, backend="numba", rtol=1e-11, atol=1e-14, t0=0.0, h0=None,
                     max_steps=2_000_000):
    """Adaptive Dormand-Prince 5(4) on the lifted system from ``t0`` to ``t1``, as a :class:`solvers.rk.ODEResult`
    (``success`` False, with the reason, when ``max_steps`` did not reach ``t1``; ``.checked()`` gives the end state
    or raises).  ``backend='numba'`` runs the Numba kernel, anything else the NumPy reference (same controller)."""
    h0 = (t1 - t0) * 1e-3 if h0 is None else h0
    nb = backend == "numba"
    return rk.solve_dopri5(lift_rhs if nb else lift_rhs_numpy, t0, z0, t1, (np.asarray(P, dtype=float),),
                           rtol=rtol, atol=atol, h0=h0, max_steps=max_steps, backend="numba" if nb else "numpy")


def lift_jacobian(z, P):
    """Jacobian of the lifted field :func:`lift_rhs` (``alpha = g a/tau_h``, ``beta = g/tau_y``)::

        d s'/d s = -alpha |q|^2,   d s'/d q = -alpha (r + s q),
        d q'/d s = -beta (r + s q), d q'/d q = -beta s^2 I."""
    a, th, ty, g = P[0], P[1], P[2], P[3]
    s, q = z[0], np.asarray(z[1:], dtype=float)
    r = q * s - P[4:]
    m = q.shape[0]
    J = np.empty((m + 1, m + 1))
    J[0, 0] = -g * a / th * (q @ q)
    J[0, 1:] = -g * a / th * (r + q * s)
    J[1:, 0] = -g / ty * (r + s * q)
    J[1:, 1:] = -g / ty * s * s * np.eye(m)
    return J


def integrate_lifted_stiff(z0, P, t1, backend="numba", rtol=1e-11, atol=1e-14, t0=0.0, method=None):
    """The lifted system from ``t0`` to ``t1`` by a SciPy implicit method (``STIFF_METHOD``) with the
    exact Jacobian :func:`lift_jacobian`, as a :class:`solvers.rk.ODEResult` like :func:`integrate_lifted` (``accepted``
    the implicit steps; ``success`` False with SciPy's message when the stepper fails).

    For the collapse regime (``a |q|^2/tau_h`` much larger than the rate ``s^2/tau_y`` at which the state then
    moves): there Dormand-Prince is held at step ``~ 3 tau_h/(g a |q|^2)`` by stability, not accuracy, and a
    plateau of length ``T`` costs ``~ T g a |q|^2/tau_h`` steps (10^6-10^8 at ``|dy(0)|^2/|dh(0)|^2 = 10^3-10^5``).
    ``backend='numba'`` evaluates the field with the Numba kernel, anything else with the NumPy reference."""
    stepper = _stiff_stepper(z0, P, t1, backend, rtol, atol, t0, method)
    n, msg = 0, "reached t1"
    while stepper.status == "running":
        m = stepper.step()
        n += 1
        if stepper.status == "failed":
            msg = f"{method or STIFF_METHOD} on the lifted system failed before t1={t1}: {m}"
    return rk.ODEResult(y=stepper.y.copy(), t=float(stepper.t), accepted=n, rejected=0, nfev=int(stepper.nfev),
                        success=stepper.status == "finished", message=msg)


def _stiff_stepper(z0, P, t_bound, backend, rtol, atol, t0, method=None):
    """A SciPy implicit stepper (``STIFF_METHOD``, Radau IIA of order 5) on the lifted system with the exact
    Jacobian; stepping one object across many sample times avoids restarting it at every sample."""
    from scipy import integrate
    P = np.asarray(P, dtype=float)
    if backend == "numba":
        args = (P,)
        fun = lambda t, z: lift_rhs(t, z, args)  # noqa: E731
    else:
        fun = lambda t, z: lift_rhs_numpy(t, z, P)  # noqa: E731
    cls = getattr(integrate, method or STIFF_METHOD)
    return cls(fun, t0, np.asarray(z0, dtype=float), t_bound, rtol=rtol, atol=atol,
               jac=lambda t, z: lift_jacobian(z, P))


def solve_to_equilibrium(u0, v0, w0, a, b, tau_h, tau_y, g=EQ7_FACTOR, backend="numba", rtol=1e-11,
                         atol=1e-14, m=2, stop_rel=None, samples_per_chunk=6, max_chunks=100,
                         max_steps=2_000_000, stiff_steps=500):
    """Integrate the lifted system from a consistent ``(u0, v0, w0)`` until it has converged.

    **Stopping rule.**  Time advances in chunks ``[T_k, T_{k+1}]`` with ``T_1 = 1/rate0`` (``rate0`` the
    largest initial rate ``max(u0/tau_y, a v0/(u0 tau_h), A_low/tau_y)`` times ``2g``) and ``T_{k+1} = 2 T_k``;
    after each chunk the Newton step ``du`` of the 2-D system Eq 25 on the *current* level set (see
    :func:`newton_du`) estimates ``u(inf) - u(T)``.  Stop when ``u > 0``, ``|du| <= stop_rel * u`` and
    ``|w| <= stop_rel * max(u, b)`` (default ``stop_rel = rtol``), or give up after ``max_chunks`` chunks
    (``converged = False``).  The chunk doubling makes the cost logarithmic in the plateau length.

    **Stiffness.**  Each sample interval is first given to Dormand-Prince with a budget of ``stiff_steps``
    steps; an interval that exhausts it is stiff (the collapse regime, see :func:`integrate_lifted_stiff`), and
    that interval and every later one are integrated by LSODA with the exact Jacobian (``stiff_from`` records
    the time of the switch, None when there was none).  The a-posteriori error model of the limit
    (the drift of the conserved ``A_high`` and the Newton distance) does not depend on which method ran.

    Returns a dict: ``z`` (final lifted state), ``t``, ``u, v, w`` (final), ``du`` (Newton distance), ``AH0``
    and ``AH_end`` (the conserved quantity at the start and the end: its drift is the integrator's error along
    the line of equilibria), ``crossings`` (sign changes of ``s`` seen at the samples), ``steps``,
    ``converged``, and the sampled trajectory ``ts``, ``us``.
    """
    dYv = np.zeros(m)
    dYv[0] = math.sqrt(b)
    z = lift_from_uvw(u0, v0, w0, math.sqrt(b), m)
    P = lift_params(a, tau_h, tau_y, dYv, g)
    AH0 = float(level_a_high(z, a, tau_h, tau_y))
    AL = a_low(a, b, tau_h, tau_y)
    rate0 = 2 * g * max(u0 / tau_y, a * v0 / (u0 * tau_h), AL / tau_y, 1e-300)
    stop_rel = rtol if stop_rel is None else stop_rel
    t, T = 0.0, 1.0 / rate0
    ts, us = [0.0], [u0]
    crossings, steps = 0, 0
    sign = np.sign(z[0])
    converged = False
    du = math.inf
    stiff_from = None
    budget = min(max_steps, stiff_steps) if stiff_steps else max_steps
    for _ in range(max_chunks):
        grid = np.linspace(t, T, samples_per_chunk + 1)[1:]
        for t1 in grid:
            if t1 <= t:
                continue
            if stiff_from is None:
                r = integrate_lifted(z, P, t1, backend, rtol, atol, t0=t, h0=(t1 - t) * 1e-3, max_steps=budget)
                if r.success:
                    z = r.y
                    steps += r.accepted + r.rejected
                else:
                    if not stiff_steps:
                        raise RuntimeError(r.message)
                    stiff_from = t
                    steps += budget
                    stepper = _stiff_stepper(z, P, math.inf, backend, rtol, atol, t)
            if stiff_from is not None:
                # one implicit stepper for the rest of the run; the sample is taken at the first step
                # boundary at or past t1 (no interpolation: the state is the integrator's own)
                while stepper.t < t1:
                    msg = stepper.step()
                    steps += 1
                    if stepper.status == "failed":
                        raise RuntimeError(f"{STIFF_METHOD} on the lifted system failed at t={stepper.t}: {msg}")
                z, t1 = stepper.y.copy(), float(stepper.t)
            t = t1
            ts.append(t)
            us.append(float(z[0] ** 2))
            if np.sign(z[0]) != sign and z[0] != 0:
                crossings += 1
                sign = np.sign(z[0])
        u, v, w = (float(x) for x in uvw_from_lift(z, dYv))
        AH = float(level_a_high(z, a, tau_h, tau_y))
        if u > 0:
            # Eq 25 is Eq 7 in time units 2g: the Newton step does not depend on the time unit
            du = newton_du(u, w, a, b, tau_h, tau_y, AH)
            if abs(du) <= stop_rel * u and abs(w) <= stop_rel * max(u, b):
                converged = True
                break
        T *= 2
    u, v, w = (float(x) for x in uvw_from_lift(z, dYv))
    return {"z": z, "t": t, "u": u, "v": v, "w": w, "du": float(du), "AH0": AH0,
            "AH_end": float(level_a_high(z, a, tau_h, tau_y)), "AL": AL, "crossings": crossings,
            "steps": steps, "converged": converged, "ts": ts, "us": us, "delta_y_vec": dYv,
            "stiff_from": stiff_from}


def integrate_eq7_naive(u0, v0, w0, a, b, tau_h, tau_y, t1, g=EQ7_FACTOR, rtol=1e-11, atol=1e-14,
                        n_samples=200, max_steps=200_000):
    """Eq 7 integrated as it stands (NumPy Dormand-Prince, sampled on ``n_samples`` times): what a reader who
    "solves it numerically" (l.347) gets.  Returns a dict with the samples ``ts, us, vs, ws``, ``min_u``,
    ``breakdown`` (the integrator's error message, or None) and ``t_reached``."""
    P = eq7_params(a, b, tau_h, tau_y, g)
    y = np.array([u0, v0, w0], dtype=float)
    ts, ys = [0.0], [y.copy()]
    breakdown = None
    t = 0.0
    import warnings
    for t_next in np.linspace(0, t1, n_samples + 1)[1:]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = rk.solve_dopri5(eq7_rhs_numpy, t, y, t_next, (P,), rtol=rtol, atol=atol,
                                    h0=(t_next - t) * 1e-3, max_steps=max_steps, backend="numpy").checked()
        except (RuntimeError, FloatingPointError, ZeroDivisionError) as exc:
            breakdown = f"{type(exc).__name__}: {exc}"
            break
        if not np.all(np.isfinite(y)):
            breakdown = f"non-finite state {y.tolist()} at t={t_next}"
            break
        t = t_next
        ts.append(t)
        ys.append(y.copy())
    ys = np.array(ys)
    return {"ts": ts, "us": ys[:, 0].tolist(), "vs": ys[:, 1].tolist(), "ws": ys[:, 2].tolist(),
            "min_u": float(np.min(ys[:, 0])), "min_v": float(np.min(ys[:, 1])), "breakdown": breakdown,
            "t_reached": t, "y_end": ys[-1].tolist()}
