"""Adaptive Runge-Kutta-Munthe-Kaas on R^m x O(Q)^L: Dormand-Prince 5(4) in Cayley coordinates with an
embedded error estimate, for the coupled systems of :mod:`solvers.orthogonal`,

    y' = f_y(t, y, R_1..R_L),        R_k' = A_k(t, y, R_1..R_L) R_k,     A_k skew (in o(Q)).

Method (Iserles, Munthe-Kaas, Norsett, Zanna, Acta Numerica 2000, §8.3; Dormand & Prince 1980).  On a step
from ``t`` write ``R_k(t + s) = cay(Omega_k(s)) R_k(t)``, ``cay(W) = (I - W/2)^{-1}(I + W/2)``.  Then
``(y, Omega)`` solves a smooth ODE on the *linear* space R^m x o(Q)^L,

    y' = f_y(t, y, cay(Omega) R),     Omega_k' = dcay^{-1}_{Omega_k}(A_k) = (I - Omega_k/2) A_k (I + Omega_k/2),

``Omega(0) = 0``, whose right-hand side is exact (the Cayley map's dcay^{-1} is a finite product, so there is
no dexp^{-1} series to truncate at the method's order).  One step applies the Dormand-Prince 5(4) pair to it
and maps back with ``cay``.  Properties (tests/test_liegroup.py):

* order: the 5th-order solution is of classical order 5 in ``h`` (the Omega-system is smooth, solved to order 5,
  ``cay`` applied exactly); the embedded 4th-order solution gives the local error estimate
  ``h sum_j e_j (k_j, K_j)`` with ``e = b - b_hat``;
* error control: the estimate is measured in the *ambient* coordinates, ``(dy, dOmega R_new)`` (the first-order
  change of ``R = cay(Omega) R_old`` is ``dOmega R``), in scipy's RMS norm scaled by
  ``atol + rtol max(|z_old|, |z_new|)`` per entry, i.e. the same norm as ``scipy.integrate.solve_ivp`` on the
  embedded ODE for the entries of (y, R); step factor ``0.9 err^(-1/5)`` clipped to [0.2, 10] (no growth right
  after a rejection);
* FSAL: the 7th stage is evaluated at the accepted state, so an accepted step costs 6 evaluations;
* inner stages: ``R_j`` is the degree-5 truncation of the Cayley series (five matrix products; its O(h^6) error
  does not lower the order), the accepted state and the FSAL stage use the exact ``cay`` (one solve);
* orthogonality: ``cay`` of a skew matrix is orthogonal and dcay^{-1} maps o(Q) to o(Q), so the only defect is
  rounding, ``|R^T R - I| ~ c Q eps`` per step growing like ``sqrt(n_steps)``, whatever the tolerance;
* output times ``t_eval``: steps are shortened to land on them exactly (no dense output), so the states there
  have the same local accuracy as any step end;
* discontinuous fields (ReLU walls of Chen's flow): a jump inside a step inflates the error estimate and the step
  is rejected and shortened until the jump's contribution is below the tolerance (costs a few rejections per
  crossing; the global error then no longer decays like ``tol``, see benchmarks/bench_oq.py).  For such fields
  use :func:`lie_dopri5_walls`.

Sector walls (:func:`lie_dopri5_walls`): for fields that are smooth on each side of the walls
``g_{a,i} = (R_k (x_i + beta_k))_a = 0`` (the preactivations of Chen's aligned truncations), the right-hand side
takes the sides as an argument, ``f(t, y, Rs, args, side)``, and the integrator holds them fixed over a step, so
every stage sees the smooth field of one side (its extension past the wall).  After an accepted step the wall
values at its end are compared with the sides; if a wall was crossed, the first crossing is located on the
Dormand-Prince continuous extension (order 4; ``y`` and ``Omega`` are polynomials in the step fraction, ``R =
cay(Omega) R_0`` exactly, one row of the Cayley map per evaluation) by Illinois false position to rounding of the
fraction, every other wall is checked at that fraction (an earlier crossing becomes the candidate), the step is
cut there (state from the extension, or with ``restep=True`` from a Runge-Kutta step of the located length), the
wall's side flipped and the field re-evaluated.  Cost: one cut step and one evaluation per crossing; error: the
method's on each smooth piece plus the extension's at each crossing (~tol each), so the global error follows
the tolerance instead of stalling; orthogonality as above (the cut state is ``cay`` of a skew matrix).
Limitation: a wall that the field of both sides pushes the state into (a sliding mode) is crossed back and forth
at vanishing step fractions until ``max_steps`` (success False).

Kernel: :func:`lie_dopri5` (Numba; the loop is a template calling ``RHS``, compiled once per registered
right-hand side with ``njit(cache=True)`` by :func:`solvers.specialise.kernel`); :func:`lie_dopri5_numpy` runs
the same template as plain Python with a NumPy right-hand side (reference, slow); :func:`lie_dopri5_walls`
(Numba, template :func:`_lie_dp_walls_loop`) the wall-locating variant.  Right-hand side convention as
in :mod:`solvers.orthogonal`: ``f(t, y, Rs, args) -> (dy, A)`` for the kernel, ``f(t, y, Rs, *args)`` for the
reference.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .orthogonal import check_state
from .specialise import RHS, kernel

__all__ = ["DP54", "DP54_DENSE", "LieResult", "lie_dopri5", "lie_dopri5_numpy", "lie_dopri5_walls"]

# Dormand-Prince 5(4): nodes C, matrix A (row 6 = the 5th-order weights: FSAL), weights B (order 5), error
# weights E = B - B_hat (B_hat the embedded 4th-order weights).
_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = np.zeros((7, 7))
_A[1, :1] = [1 / 5]
_A[2, :2] = [3 / 40, 9 / 40]
_A[3, :3] = [44 / 45, -56 / 15, 32 / 9]
_A[4, :4] = [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729]
_A[5, :5] = [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656]
_A[6, :6] = [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]
_B = _A[6].copy()
_BHAT = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
_E = _B - _BHAT


def _check_tableau(A, B, C, BHAT):
    """Row sums of A equal the nodes, both weight vectors sum to 1 (consistency), FSAL row = B."""
    if not (np.allclose(A.sum(axis=1), C, atol=1e-15) and abs(B.sum() - 1) < 1e-15 and abs(BHAT.sum() - 1) < 1e-15
            and np.array_equal(A[-1], B) and np.all(np.triu(A) == 0)):
        raise ValueError("Dormand-Prince tableau is inconsistent")


_check_tableau(_A, _B, _C, _BHAT)
DP54 = (_A, _B, _C, _E, 5)
# Dormand-Prince continuous extension (Shampine 1986; scipy's RK45.P): z(t + theta h) = z + h sum_j k_j
# sum_m P[j, m] theta^(m+1), of order 4, equal to the 5th-order solution at theta = 1 (rows sum to B).
DP54_DENSE = np.array([
    [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0, 0, 0, 0],
    [0, 131558114200 / 32700410799, -68118460800 / 10900136933, 87487479700 / 32700410799],
    [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0, 127303824393 / 49829197408, -318862633887 / 49829197408, 701980252875 / 199316789632],
    [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423]])
if not np.allclose(DP54_DENSE.sum(axis=1), _B, atol=1e-15):
    raise ValueError("Dormand-Prince dense output is inconsistent with the weights")
CONTROLLER = (-0.2, 0.2)     # after a rejection: h <- h max(floor, 0.9 err^expo)


@dataclass
class LieResult:
    """Result of :func:`lie_dopri5`: final time and state, the states at ``t_eval`` (``ts``, ``ys``, ``Rss``),
    counts, and whether the integration reached ``t1``."""
    t: float
    y: np.ndarray
    Rs: np.ndarray
    ts: np.ndarray
    ys: np.ndarray
    Rss: np.ndarray
    nfev: int
    naccepted: int
    nrejected: int
    success: bool
    message: str
    nevents: int = 0      # wall crossings located (lie_dopri5_walls; each cuts a step, counted here, not in naccepted)
    side: np.ndarray | None = None    # the sides at t (lie_dopri5_walls)


_MESSAGES = {0: "reached t1", -1: "max_steps exceeded", -2: "step size fell below the rounding of t",
             -3: "non-finite right-hand side"}


# ---------------------------------------------------------------------------
# kernel pieces (Numba; callable from Python too)
@njit(cache=True)
def _cay_into(W, R, out, I):
    """out = cay(W) R = (I - W/2)^{-1} (I + W/2) R = 2 (I - W/2)^{-1} R - R: Gaussian elimination of I - W/2
    without pivoting, in place on 2R (no allocation but the factor; 9.7 us at Q = 30 against 16.8 us for
    ``np.linalg.solve``, 0.34 against 1.05 us at Q = 3).  No pivoting is safe: for skew W the symmetric part of
    I - W/2 is I, so every pivot is >= 1 (the Schur complements keep a symmetric part >= I) and the result is
    orthogonal to rounding, as with the LAPACK solve (tests/test_liegroup.py)."""
    Q = W.shape[0]
    M = np.empty((Q, Q))
    for a in range(Q):
        for b in range(Q):
            M[a, b] = -0.5 * W[a, b]
            out[a, b] = 2.0 * R[a, b]
        M[a, a] += 1.0
    for p in range(Q):
        inv = 1.0 / M[p, p]
        for r in range(p + 1, Q):
            lm = M[r, p] * inv
            if lm != 0.0:
                for c in range(p + 1, Q):
                    M[r, c] -= lm * M[p, c]
                for c in range(Q):
                    out[r, c] -= lm * out[p, c]
    for p in range(Q - 1, -1, -1):
        for r in range(p + 1, Q):
            um = M[p, r]
            if um != 0.0:
                for c in range(Q):
                    out[p, c] -= um * out[r, c]
        inv = 1.0 / M[p, p]
        for c in range(Q):
            out[p, c] *= inv
    for a in range(Q):
        for c in range(Q):
            out[a, c] -= R[a, c]


@njit(cache=True)
def _stage_state(y, Rs, ky, kO, A, j, h, yj, Oj, Rj, I, exact):
    """y_j = y + h sum_l a_jl k_l, Omega_j = h sum_l a_jl K_l, R_j = cay(Omega_j) R (into yj, Oj, Rj); with
    ``exact`` False R_j is the degree-5 Cayley series (inner stages, see :func:`_cay_series_into`)."""
    L, Q = Rs.shape[0], Rs.shape[1]
    yj[:] = y
    Oj[:] = 0.0
    for l in range(j):
        a = h * A[j, l]
        if a != 0.0:
            for i in range(y.shape[0]):
                yj[i] += a * ky[l, i]
            for k in range(L):
                for p in range(Q):
                    for q in range(Q):
                        Oj[k, p, q] += a * kO[l, k, p, q]
    for k in range(L):
        if exact:
            _cay_into(Oj[k], Rs[k], Rj[k], I)
        else:
            _cay_series_into(Oj[k], Rs[k], Rj[k])


@njit(cache=True)
def _cay_series_into(W, R, out):
    """out = (I + 2 sum_{k=1..5} (W/2)^k) R = cay(W) R + O(|W|^6): five products instead of a solve (a LAPACK
    solve of a 30 x 30 system costs ~12 matrix products here).  Used for the inner stages only, whose values
    enter the step through h f(stage): an O(h^6) stage error is an O(h^7) step error, below the method's O(h^6),
    and the inner stages need not lie on O(Q) (the update and the FSAL stage use the exact map)."""
    Wh = 0.5 * W
    T = R.copy()
    out[:, :] = R
    for _ in range(5):
        T = Wh @ T
        out += 2.0 * T


@njit(cache=True)
def _pullback(Oj, Aj, out, I):
    """out = dcay^{-1}_{Omega_j}(A_j) = (I - Omega_j/2) A_j (I + Omega_j/2), layer by layer."""
    for k in range(Aj.shape[0]):
        M = Aj[k] - 0.5 * (Oj[k] @ Aj[k])
        out[k] = M + 0.5 * (M @ Oj[k])


@njit(cache=True)
def _error_norm(y, yn, Rs, Rn, ky, kO, E, h, rtol, atol):
    """RMS of (h sum e_j k_j, (h sum e_j K_j) R_new) / (atol + rtol max(|old|, |new|)) over all entries."""
    m = y.shape[0]
    L, Q = Rs.shape[0], Rs.shape[1]
    acc = 0.0
    for i in range(m):
        e = 0.0
        for j in range(E.shape[0]):
            e += E[j] * ky[j, i]
        sc = atol + rtol * max(abs(y[i]), abs(yn[i]))
        acc += (h * e / sc) ** 2
    dO = np.zeros((Q, Q))
    for k in range(L):
        dO[:, :] = 0.0
        for j in range(E.shape[0]):
            if E[j] != 0.0:
                dO += E[j] * kO[j, k]
        dR = h * (dO @ Rn[k])
        for a in range(Q):
            for b in range(Q):
                sc = atol + rtol * max(abs(Rs[k, a, b]), abs(Rn[k, a, b]))
                acc += (dR[a, b] / sc) ** 2
    return np.sqrt(acc / (m + L * Q * Q))


@njit(cache=True)
def _initial_step(y, Rs, dy, A0, order, rtol, atol, span):
    """Hairer-Norsett-Wanner II.4 first guess h = 0.01 |z| / |z'| in the scaled norm (capped by the span)."""
    m = y.shape[0]
    L, Q = Rs.shape[0], Rs.shape[1]
    d0 = 0.0
    d1 = 0.0
    for i in range(m):
        sc = atol + rtol * abs(y[i])
        d0 += (y[i] / sc) ** 2
        d1 += (dy[i] / sc) ** 2
    for k in range(L):
        V = A0[k] @ Rs[k]
        for a in range(Q):
            for b in range(Q):
                sc = atol + rtol * abs(Rs[k, a, b])
                d0 += (Rs[k, a, b] / sc) ** 2
                d1 += (V[a, b] / sc) ** 2
    n = m + L * Q * Q
    d0 = np.sqrt(d0 / n)
    d1 = np.sqrt(d1 / n)
    h = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    return min(h, span)


def _lie_dp_loop(t0, y0, R0, t1, args, rtol, atol, h0, h_max, max_steps, A, B, C, E, order, t_out, rej_expo, rej_floor):
    """Template (calls ``RHS``): adaptive Cayley-RKMK with the embedded pair (A, B, C, E), FSAL (A[-1] = B).
    Records the state at each time of ``t_out`` (increasing, within [t0, t1]).  Returns
    (t, y, Rs, ys, Rss, nfev, naccepted, nrejected, status)."""
    m = y0.shape[0]
    L, Q = R0.shape[0], R0.shape[1]
    s = B.shape[0]
    nout = t_out.shape[0]
    ys = np.zeros((nout, m))
    Rss = np.zeros((nout, L, Q, Q))
    I = np.eye(Q)
    y = y0.copy()
    Rs = R0.copy()
    ky = np.empty((s, m))
    kO = np.empty((s, L, Q, Q))
    yj = np.empty(m)
    Oj = np.empty((L, Q, Q))
    Rj = np.empty((L, Q, Q))
    t = t0
    dy, A0 = RHS(t, y, Rs, args)
    nfev = 1
    ky[0] = dy
    kO[0] = A0
    iout = 0
    while iout < nout and t_out[iout] <= t:
        ys[iout] = y
        Rss[iout] = Rs
        iout += 1
    h = h0 if h0 > 0.0 else _initial_step(y, Rs, dy, A0, order, rtol, atol, t1 - t0)
    h = min(h, h_max)
    nacc = 0
    nrej = 0
    status = 0
    rejected = False
    expo = -1.0 / order
    while t < t1:
        if nacc + nrej >= max_steps:
            status = -1
            break
        target = t_out[iout] if iout < nout else t1
        hs = h
        hit = False
        if t + hs >= target - 1e-14 * max(abs(target), 1.0):
            hs = target - t
            hit = True
        if hs <= 4e-16 * max(abs(t), 1.0):
            status = -2
            break
        for j in range(1, s):
            _stage_state(y, Rs, ky, kO, A, j, hs, yj, Oj, Rj, I, j == s - 1)
            dyj, Aj = RHS(t + C[j] * hs, yj, Rj, args)
            nfev += 1
            ky[j] = dyj
            _pullback(Oj, Aj, kO[j], I)
        # FSAL: the last stage is the 5th-order solution (yj, Rj) and its raw generator Aj
        err = _error_norm(y, yj, Rs, Rj, ky, kO, E, hs, rtol, atol)
        if not np.isfinite(err):
            if not (np.all(np.isfinite(dyj)) and np.all(np.isfinite(Aj))):
                status = -3
                break
            err = 1e10
        if err <= 1.0:
            t = target if hit else t + hs
            y[:] = yj
            Rs[:] = Rj
            ky[0] = dyj
            kO[0] = Aj
            nacc += 1
            fac = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** expo)
            if rejected:
                fac = min(fac, 1.0)
            hn = hs * fac
            h = min(max(hn, h) if hit else hn, h_max)   # a step shortened to land on an output time keeps the proposal
            rejected = False
            if hit:
                while iout < nout and t_out[iout] <= t:
                    ys[iout] = y
                    Rss[iout] = Rs
                    iout += 1
        else:
            nrej += 1
            h = hs * max(rej_floor, 0.9 * err ** rej_expo)
            rejected = True
    return t, y, Rs, ys, Rss, nfev, nacc, nrej, status


def _prepare(t0, y0, R0, t1, rtol, atol, t_eval):
    y0, R0 = check_state(y0, R0, 1.0, 0)
    t0, t1 = float(t0), float(t1)
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise ValueError(f"need finite t0 < t1, got t0={t0!r}, t1={t1!r}")
    if not (np.isfinite(rtol) and rtol > 0 and np.isfinite(atol) and atol >= 0):
        raise ValueError(f"need rtol > 0 and atol >= 0 (finite), got rtol={rtol!r}, atol={atol!r}")
    if rtol < 100 * np.finfo(float).eps:
        raise ValueError(f"rtol={rtol:.3g} is below 100 eps; the error estimate would be rounding")
    if t_eval is None:
        te = np.array([t0, t1])
    else:
        te = np.ascontiguousarray(t_eval, dtype=np.float64).ravel()
        if te.size == 0 or np.any(np.diff(te) <= 0) or te[0] < t0 or te[-1] > t1:
            raise ValueError("t_eval must be strictly increasing within [t0, t1]")
    return t0, y0, R0, t1, te


def _result(out, te):
    t, y, Rs, ys, Rss, nfev, nacc, nrej, status = out
    return LieResult(t=float(t), y=y, Rs=Rs, ts=te, ys=ys, Rss=Rss, nfev=int(nfev), naccepted=int(nacc),
                     nrejected=int(nrej), success=status == 0, message=_MESSAGES[int(status)])


def lie_dopri5(f, t0, y0, R0, t1, args=(), rtol=1e-8, atol=1e-10, h0=0.0, h_max=np.inf, max_steps=10 ** 6, t_eval=None):
    """Integrate from ``t0`` to ``t1`` by adaptive Cayley-RKMK Dormand-Prince 5(4) (Numba kernel; ``f`` ``@njit``,
    ``f(t, y, Rs, args) -> (dy, A)``, cached on disk when registered).  Returns a :class:`LieResult`; the states
    at ``t_eval`` (default ``[t0, t1]``) are in ``ys``/``Rss``.  ``h0`` first step (0: estimated), ``h_max`` the
    largest step (``h0 = h_max = (t1 - t0)/n`` with a large ``rtol`` gives n fixed steps of the 5th-order method)."""
    t0, y0, R0, t1, te = _prepare(t0, y0, R0, t1, rtol, atol, t_eval)
    if not (h0 >= 0 and h_max > 0):
        raise ValueError(f"need h0 >= 0 (0: automatic) and h_max > 0, got h0={h0!r}, h_max={h_max!r}")
    A, B, C, E, order = DP54
    out = kernel(_lie_dp_loop, f)(t0, y0, R0, t1, args, float(rtol), float(atol), float(h0), float(h_max), int(max_steps),
                                  A, B, C, E, float(order), te, *CONTROLLER)
    return _result(out, te)


class _NumpyRHS:
    def __init__(self, f):
        self.f = f

    def __call__(self, t, y, Rs, args):
        return self.f(t, y, Rs, *args)


def lie_dopri5_numpy(f, t0, y0, R0, t1, args=(), rtol=1e-8, atol=1e-10, h0=0.0, h_max=np.inf, max_steps=10 ** 6, t_eval=None):
    """The same loop as :func:`lie_dopri5` run as plain Python with ``f(t, y, Rs, *args) -> (dy, A)`` (NumPy)."""
    import types
    t0, y0, R0, t1, te = _prepare(t0, y0, R0, t1, rtol, atol, t_eval)
    if not (h0 >= 0 and h_max > 0):
        raise ValueError(f"need h0 >= 0 (0: automatic) and h_max > 0, got h0={h0!r}, h_max={h_max!r}")
    A, B, C, E, order = DP54
    g = dict(_lie_dp_loop.__globals__)
    g["RHS"] = _NumpyRHS(f)
    loop = types.FunctionType(_lie_dp_loop.__code__, g, "_lie_dp_loop_py")
    out = loop(t0, y0, R0, t1, tuple(args), float(rtol), float(atol), float(h0), float(h_max), int(max_steps),
               A, B, C, E, float(order), te, *CONTROLLER)
    return _result(out, te)


# ---------------------------------------------------------------------------
# sector walls: event location for fields that are smooth on each side of the walls {g = 0}
#
# Walls of the aligned-truncation flows (Chen's ReLU model): point i attached to layer k = wlab[i] has the
# preactivations g_{a,i} = (R_k (x_i + beta_k))_a, beta_k = y[kQ:(k+1)Q], a = 1..Q; the field is smooth on each
# side of every wall g_{a,i} = 0 and jumps across it.  ``side[a, i]`` (1.0: g > 0, 0.0: g <= 0) is the side whose
# field the right-hand side uses, ``f(t, y, Rs, args, side) -> (dy, A)``: while it is held fixed the field is
# the smooth extension of one side's, so the Runge-Kutta stages never see a jump.
@njit(cache=True)
def _wall_values(y, Rs, WX, wlab, G):
    """G[a, i] = (R_k (x_i + beta_k))_a for k = wlab[i] < L; +1 for points attached to no layer."""
    L, Q = Rs.shape[0], Rs.shape[1]
    z = np.empty(Q)
    for i in range(WX.shape[1]):
        k = wlab[i]
        if k < 0 or k >= L:
            G[:, i] = 1.0
            continue
        for b in range(Q):
            z[b] = WX[b, i] + y[k * Q + b]
        for a in range(Q):
            s = 0.0
            for b in range(Q):
                s += Rs[k, a, b] * z[b]
            G[a, i] = s


@njit(cache=True)
def _dense_weights(P, theta, w):
    """w[j] = sum_m P[j, m] theta^(m+1): the continuous extension's weights at the step fraction theta."""
    for j in range(P.shape[0]):
        s = 0.0
        p = theta
        for m in range(P.shape[1]):
            s += P[j, m] * p
            p *= theta
        w[j] = s


@njit(cache=True)
def _dense_omega(kO, w, h, k, O):
    """O = h sum_j w_j K_j of layer k (the Cayley coordinates at the fraction whose weights are w)."""
    O[:, :] = 0.0
    for j in range(w.shape[0]):
        c = h * w[j]
        if c != 0.0:
            O += c * kO[j, k]


@njit(cache=True)
def _dense_wall(y, Rs, ky, kO, P, theta, h, WX, wlab, a, i, w, O, I):
    """g_{a,i} on the continuous extension at t + theta h: row a of cay(Omega_k(theta)) R_k times x_i + beta_k(theta),
    with row a of cay(O) = (I - O/2)^{-1}(I + O/2) from one solve with (I - O/2)^T (no full Cayley map)."""
    Q = Rs.shape[1]
    k = wlab[i]
    _dense_weights(P, theta, w)
    _dense_omega(kO, w, h, k, O)
    z = np.empty(Q)
    for b in range(Q):
        s = y[k * Q + b]
        for j in range(w.shape[0]):
            s += h * w[j] * ky[j, k * Q + b]
        z[b] = WX[b, i] + s
    e = np.zeros(Q)
    e[a] = 1.0
    r = np.linalg.solve((I - 0.5 * O).T.copy(), e)      # r^T = e_a^T (I - O/2)^{-1}
    z1 = Rs[k] @ z
    z2 = z1 + 0.5 * (O @ z1)
    return r @ z2


@njit(cache=True)
def _locate(y, Rs, ky, kO, P, h, WX, wlab, a, i, sgn, f0, t1, f1, w, O, I):
    """Step fraction theta in (0, t1] where phi = sgn g_{a,i} (> 0 on the current side, <= 0 past the wall) reaches
    the wall on the continuous extension; Illinois false position on the bracket [0, t1] (phi(0) = f0 > 0,
    phi(t1) = f1 <= 0) to |bracket| <= 4 eps.  Returns the bracket end past the wall (phi <= 0 there)."""
    ta, fa, tb, fb = 0.0, f0, t1, f1
    side_b = 0                      # which end was kept last (Illinois halving of the stale end's value)
    for _ in range(100):
        if tb - ta <= 4e-16:
            break
        tc = tb - fb * (tb - ta) / (fb - fa)
        if not (ta < tc < tb):
            tc = 0.5 * (ta + tb)
        fc = sgn * _dense_wall(y, Rs, ky, kO, P, tc, h, WX, wlab, a, i, w, O, I)
        if fc <= 0.0:
            tb, fb = tc, fc
            if side_b == 1:
                fa *= 0.5
            side_b = 1
        else:
            ta, fa = tc, fc
            if side_b == -1:
                fb *= 0.5
            side_b = -1
        if fc == 0.0:
            break
    return tb


@njit(cache=True)
def _dense_state(y, Rs, ky, kO, P, theta, h, yd, Rd, w, O, I):
    """The continuous extension's state at t + theta h: y(theta), R_k(theta) = cay(Omega_k(theta)) R_k (exact map,
    orthogonal to rounding)."""
    _dense_weights(P, theta, w)
    for b in range(y.shape[0]):
        s = y[b]
        for j in range(w.shape[0]):
            s += h * w[j] * ky[j, b]
        yd[b] = s
    for k in range(Rs.shape[0]):
        _dense_omega(kO, w, h, k, O)
        _cay_into(O, Rs[k], Rd[k], I)


@njit(cache=True)
def _earliest(G0, G1, side, th1, strict):
    """Walls crossed between the states with values G0 (fraction 0) and G1 (fraction th1): the one with the
    smallest linear estimate th1 f0 / (f0 - f1) of its crossing fraction, phi = (2 side - 1) g.  Returns
    (fraction estimate, a, i), a = -1 when none is crossed; fraction 0 for a wall already past at fraction 0
    (one just flipped, at the wall to rounding), or, with ``strict``, such walls are skipped."""
    best = 2.0
    ab = -1
    ib = -1
    for i in range(G0.shape[1]):
        for a in range(G0.shape[0]):
            sg = 2.0 * side[a, i] - 1.0
            f1 = sg * G1[a, i]
            if f1 > 0.0:
                continue
            f0 = sg * G0[a, i]
            if strict and f0 <= 0.0:
                continue
            th = 0.0 if f0 <= 0.0 else th1 * f0 / (f0 - f1)
            if th < best:
                best = th
                ab = a
                ib = i
    return best, ab, ib


def _lie_dp_walls_loop(t0, y0, R0, t1, args, rtol, atol, h0, h_max, max_steps, A, B, C, E, P, order, t_out,
                       rej_expo, rej_floor, WX, wlab, side, restep):
    """Template (calls ``RHS(t, y, Rs, args, side)``): :func:`_lie_dp_loop` with the field's side held fixed over
    each step and the wall crossings located.  An accepted step whose end lies past a wall of its side (the sign
    of some g differs from ``side``) is cut at the first crossing, found on the continuous extension (Illinois on
    each crossed wall, the earliest kept); the state there is the extension's (y linear, R = cay(Omega) R exact),
    that wall's side is flipped and the field re-evaluated (FSAL restarts).  No step integrates across a wall.
    Returns (t, y, Rs, ys, Rss, nfev, naccepted, nrejected, status, nevents)."""
    m = y0.shape[0]
    L, Q = R0.shape[0], R0.shape[1]
    s = B.shape[0]
    nout = t_out.shape[0]
    nw = WX.shape[1]
    ys = np.zeros((nout, m))
    Rss = np.zeros((nout, L, Q, Q))
    I = np.eye(Q)
    y = y0.copy()
    Rs = R0.copy()
    ky = np.empty((s, m))
    kO = np.empty((s, L, Q, Q))
    yj = np.empty(m)
    Oj = np.empty((L, Q, Q))
    Rj = np.empty((L, Q, Q))
    G0 = np.empty((Q, nw))
    G1 = np.empty((Q, nw))
    Gd = np.empty((Q, nw))
    yd = np.empty(m)
    Rd = np.empty((L, Q, Q))
    wd = np.empty(P.shape[0])
    Od = np.empty((Q, Q))
    t = t0
    _wall_values(y, Rs, WX, wlab, G0)
    for i in range(nw):
        for a in range(Q):
            side[a, i] = 1.0 if G0[a, i] > 0.0 else 0.0
    dy, A0 = RHS(t, y, Rs, args, side)
    nfev = 1
    ky[0] = dy
    kO[0] = A0
    iout = 0
    while iout < nout and t_out[iout] <= t:
        ys[iout] = y
        Rss[iout] = Rs
        iout += 1
    h = h0 if h0 > 0.0 else _initial_step(y, Rs, dy, A0, order, rtol, atol, t1 - t0)
    h = min(h, h_max)
    nacc = 0
    nrej = 0
    nev = 0
    status = 0
    rejected = False
    expo = -1.0 / order
    while t < t1:
        if nacc + nrej + nev >= max_steps:
            status = -1
            break
        target = t_out[iout] if iout < nout else t1
        hs = h
        hit = False
        if t + hs >= target - 1e-14 * max(abs(target), 1.0):
            hs = target - t
            hit = True
        if hs <= 4e-16 * max(abs(t), 1.0):
            status = -2
            break
        for j in range(1, s):
            _stage_state(y, Rs, ky, kO, A, j, hs, yj, Oj, Rj, I, j == s - 1)
            dyj, Aj = RHS(t + C[j] * hs, yj, Rj, args, side)
            nfev += 1
            ky[j] = dyj
            _pullback(Oj, Aj, kO[j], I)
        err = _error_norm(y, yj, Rs, Rj, ky, kO, E, hs, rtol, atol)
        if not np.isfinite(err):
            if not (np.all(np.isfinite(dyj)) and np.all(np.isfinite(Aj))):
                status = -3
                break
            err = 1e10
        if err > 1.0:
            nrej += 1
            h = hs * max(rej_floor, 0.9 * err ** rej_expo)
            rejected = True
            continue
        fac = 10.0 if err == 0.0 else min(10.0, 0.9 * err ** expo)
        if rejected:
            fac = min(fac, 1.0)
        rejected = False
        # walls crossed by the accepted step: the earliest crossing on the continuous extension
        _wall_values(yj, Rj, WX, wlab, G1)
        th_min, a_ev, i_ev = _earliest(G0, G1, side, 1.0, False)
        if a_ev >= 0 and th_min > 0.0:
            # locate the candidate (smallest linear estimate), then check every wall at that fraction on the
            # extension: one that is already past its wall there crossed earlier and becomes the candidate
            th_hi = 1.0
            f_hi = (2.0 * side[a_ev, i_ev] - 1.0) * G1[a_ev, i_ev]
            for _ in range(nw * Q):
                sg = 2.0 * side[a_ev, i_ev] - 1.0
                th = _locate(y, Rs, ky, kO, P, hs, WX, wlab, a_ev, i_ev, sg, sg * G0[a_ev, i_ev], th_hi, f_hi,
                             wd, Od, I)
                _dense_state(y, Rs, ky, kO, P, th, hs, yd, Rd, wd, Od, I)
                _wall_values(yd, Rd, WX, wlab, Gd)
                Gd_ev = Gd[a_ev, i_ev]
                Gd[a_ev, i_ev] = G0[a_ev, i_ev]          # the located wall is not its own competitor
                th2, a2, i2 = _earliest(G0, Gd, side, th, True)
                Gd[a_ev, i_ev] = Gd_ev
                if a2 < 0:
                    break
                th_hi = th
                a_ev, i_ev = a2, i2
                f_hi = (2.0 * side[a2, i2] - 1.0) * Gd[a2, i2]
            th_min = th
        if a_ev < 0:
            t = target if hit else t + hs
            y[:] = yj
            Rs[:] = Rj
            ky[0] = dyj
            kO[0] = Aj
            G0[:, :] = G1
            nacc += 1
            hn = hs * fac
            h = min(max(hn, h) if hit else hn, h_max)
            if hit:
                while iout < nout and t_out[iout] <= t:
                    ys[iout] = y
                    Rss[iout] = Rs
                    iout += 1
            continue
        # cut the step at the crossing: state from the continuous extension, flip that wall, restart the field
        nev += 1
        if th_min >= 1.0:             # the crossing is the step's end: keep the step's own state
            t = target if hit else t + hs
            y[:] = yj
            Rs[:] = Rj
        elif th_min > 0.0:
            if restep:                # a Runge-Kutta step of the located length (error of the method, not the
                hs2 = th_min * hs     # order-4 extension's); its end is the wall to the extension's accuracy
                for j in range(1, s):
                    _stage_state(y, Rs, ky, kO, A, j, hs2, yj, Oj, Rj, I, j == s - 1)
                    dyj, Aj = RHS(t + C[j] * hs2, yj, Rj, args, side)
                    nfev += 1
                    ky[j] = dyj
                    _pullback(Oj, Aj, kO[j], I)
                y[:] = yj
                Rs[:] = Rj
            else:
                y[:] = yd
                Rs[:] = Rd
            t = t + th_min * hs
        side[a_ev, i_ev] = 1.0 - side[a_ev, i_ev]
        _wall_values(y, Rs, WX, wlab, G0)
        dy, A0 = RHS(t, y, Rs, args, side)
        nfev += 1
        ky[0] = dy
        kO[0] = A0
        h = min(hs * fac, h_max)
        if th_min >= 1.0 and hit:
            while iout < nout and t_out[iout] <= t:
                ys[iout] = y
                Rss[iout] = Rs
                iout += 1
    return t, y, Rs, ys, Rss, nfev, nacc, nrej, status, nev


def lie_dopri5_walls(f, t0, y0, R0, t1, walls, args=(), rtol=1e-8, atol=1e-10, h0=0.0, h_max=np.inf,
                     max_steps=10 ** 6, t_eval=None, restep=False):
    """:func:`lie_dopri5` for a field that is smooth on each side of the walls ``{g_{a,i} = 0}``,
    ``g_{a,i} = (R_k (x_i + beta_k))_a``, ``walls = (X, lab)``: point ``x_i = X[:, i]`` (shape (Q, N)) attached to
    layer ``k = lab[i]`` (points with ``lab[i]`` outside ``0..L-1`` have no wall), ``beta_k = y[kQ:(k+1)Q]``.
    ``f(t, y, Rs, args, side) -> (dy, A)`` (``@njit``) evaluates the field of the sides ``side`` (float (Q, N),
    1.0 for g > 0, 0.0 for g <= 0) whatever the sign of g at its argument.  The sides start from the signs at
    ``t0``; every crossing is located (to rounding of the step fraction, on the order-4 continuous extension) and
    the integration restarts there with the wall's side flipped.  Returns a :class:`LieResult`, ``nevents`` the
    crossings; the final sides are ``LieResult.side``."""
    t0, y0, R0, t1, te = _prepare(t0, y0, R0, t1, rtol, atol, t_eval)
    if not (h0 >= 0 and h_max > 0):
        raise ValueError(f"need h0 >= 0 (0: automatic) and h_max > 0, got h0={h0!r}, h_max={h_max!r}")
    X, lab = walls
    X = np.ascontiguousarray(X, dtype=np.float64)
    lab = np.ascontiguousarray(lab, dtype=np.int64)
    L, Q = R0.shape[0], R0.shape[1]
    if X.ndim != 2 or X.shape[0] != Q or lab.shape != (X.shape[1],):
        raise ValueError(f"walls must be (X (Q, N), lab (N,)) with Q = {Q}, got shapes {X.shape}, {lab.shape}")
    if y0.shape[0] < L * Q:
        raise ValueError(f"walls need beta_k = y[kQ:(k+1)Q] for k < L: y0 has {y0.shape[0]} < L Q = {L * Q} entries")
    side = np.zeros((Q, X.shape[1]))
    A, B, C, E, order = DP54
    out = kernel(_lie_dp_walls_loop, f)(t0, y0, R0, t1, args, float(rtol), float(atol), float(h0), float(h_max),
                                        int(max_steps), A, B, C, E, DP54_DENSE, float(order), te, *CONTROLLER,
                                        X, lab, side, bool(restep))
    res = _result(out[:9], te)
    res.nevents = int(out[9])
    res.side = side
    return res
