"""Flows that stay on the orthogonal group: Runge-Kutta-Munthe-Kaas (RKMK) integrators with the
Cayley map, for a coupled system of Euclidean unknowns and rotations,

    y' = f_y(t, y, R_1..R_L),        R_k' = A_k(t, y, R_1..R_L) R_k,     A_k skew (in o(Q)).

Method (Iserles, Munthe-Kaas, Norsett, Zanna, Acta Numerica 2000, §8.3).  Write
``R_k(t_0 + s) = cay(Omega_k(s)) R_k(t_0)`` with ``cay(W) = (I - W/2)^{-1} (I + W/2)``.  Then
``Omega_k`` solves the ODE on the *linear* space o(Q)

    Omega_k' = dcay^{-1}_{Omega_k}(A_k) = (I - Omega_k/2) A_k (I + Omega_k/2),     Omega_k(0) = 0,

which is exact (no truncated series, unlike the exponential map's dexp^{-1}).  One step applies an
explicit Runge-Kutta tableau of ``solvers.rk.TABLEAUX`` to (y, Omega) and maps back with ``cay``.
Properties (tested in tests/test_chen.py):

* order: the classical order of the tableau (rk4: 4), because the (y, Omega) system is smooth and
  solved to that order and ``cay`` is applied exactly;
* orthogonality: ``cay`` of a skew matrix is orthogonal, and dcay^{-1} maps skew to skew, so the
  only defect is rounding, ``|R^T R - I| ~ c Q eps`` per step, growing like a random walk,
  ``~ Q eps sqrt(n)`` (never like ``h^q``, as a projected classical RK would);
* the Numba kernel :func:`lie_rk` and the NumPy reference :func:`lie_rk_numpy` perform the same
  floating-point operations up to summation order: they agree to ~1e-14 relative.

Right-hand side convention: ``f(t, y, Rs, args) -> (dy, A)`` for the kernel (``f`` ``@njit``,
``Rs`` and ``A`` of shape ``(L, Q, Q)``), ``f(t, y, Rs, *args)`` for the NumPy reference.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .rk import call_cached, tableau

__all__ = ["cayley", "dcayinv", "lie_rk", "lie_rk_numpy", "orthogonality_defect", "skew", "check_state"]


def skew(A):
    """pi_-(A) = (A - A^T)/2, batched over leading axes."""
    A = np.asarray(A, dtype=float)
    return 0.5 * (A - np.swapaxes(A, -1, -2))


def cayley(W):
    """cay(W) = (I - W/2)^{-1}(I + W/2), batched; orthogonal for skew W."""
    W = np.asarray(W, dtype=float)
    eye = np.broadcast_to(np.eye(W.shape[-1]), W.shape)
    return np.linalg.solve(eye - 0.5 * W, eye + 0.5 * W)


def dcayinv(Om, A):
    """dcay^{-1}_Om(A) = (I - Om/2) A (I + Om/2): the generator ODE of the Cayley coordinates."""
    eye = np.eye(A.shape[-1])
    return (eye - 0.5 * Om) @ A @ (eye + 0.5 * Om)


def orthogonality_defect(Rs) -> float:
    """max_k max_ij |(R_k^T R_k - I)_ij| over a stack (or a trajectory) of matrices."""
    Rs = np.asarray(Rs, dtype=float)
    G = np.swapaxes(Rs, -1, -2) @ Rs
    return float(np.max(np.abs(G - np.eye(Rs.shape[-1]))))


def check_state(y0, R0, h, n):
    """Validate the inputs of the integrators; raises ValueError with a clear message."""
    y0 = np.ascontiguousarray(y0, dtype=np.float64)
    R0 = np.ascontiguousarray(R0, dtype=np.float64)
    if y0.ndim != 1:
        raise ValueError(f"y0 must be a 1-d vector, got shape {y0.shape}")
    if R0.ndim != 3 or R0.shape[1] != R0.shape[2] or R0.shape[0] < 1:
        raise ValueError(f"R0 must be a stack of square matrices of shape (L, Q, Q), got shape {R0.shape}")
    if not (np.all(np.isfinite(y0)) and np.all(np.isfinite(R0))):
        raise ValueError("y0 and R0 must be finite")
    d = orthogonality_defect(R0)
    if d > 1e-8:
        raise ValueError(f"R0 is not orthogonal: max |R^T R - I| = {d:.2e} > 1e-8")
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"step h must be positive and finite, got {h!r}")
    if int(n) != n or n < 0:
        raise ValueError(f"number of steps n must be a non-negative integer, got {n!r}")
    return y0, R0


# ---------------------------------------------------------------------------
# NumPy reference
def lie_rk_numpy(f, t0: float, y0, R0, h: float, n: int, args=(), method: str = "rk4", every: int = 0):
    """``n`` Cayley-RKMK steps of size ``h`` with the explicit tableau ``method``.

    Returns ``(y, Rs)`` or, with ``every > 0``, ``(y, Rs, ys, Rss)`` where ``ys``/``Rss`` hold the
    states every ``every`` steps (the initial one included)."""
    A_, b, c, _ = tableau(method)
    y, R0s = check_state(y0, R0, h, n)
    y = y.copy()
    Rs = R0s.copy()
    s = len(b)
    L, Q, _ = Rs.shape
    t = float(t0)
    ky = np.empty((s, y.size))
    kO = np.empty((s, L, Q, Q))
    ys, Rss = ([y.copy()], [Rs.copy()]) if every else (None, None)
    for i in range(n):
        for j in range(s):
            if j:
                yj = y + h * np.tensordot(A_[j, :j], ky[:j], axes=1)
                Oj = h * np.tensordot(A_[j, :j], kO[:j], axes=1)
                Rj = cayley(Oj) @ Rs
            else:
                yj, Oj, Rj = y, np.zeros((L, Q, Q)), Rs
            dy, A = f(t + c[j] * h, yj, Rj, *args)
            ky[j] = dy
            kO[j] = dcayinv(Oj, A)
        y = y + h * np.tensordot(b, ky, axes=1)
        Rs = cayley(h * np.tensordot(b, kO, axes=1)) @ Rs
        t += h
        if every and (i + 1) % every == 0:
            ys.append(y.copy())
            Rss.append(Rs.copy())
    if every:
        return y, Rs, np.array(ys), np.array(Rss)
    return y, Rs


# ---------------------------------------------------------------------------
# Numba kernel
@njit(cache=True)
def _cay(W):
    Q = W.shape[0]
    I = np.eye(Q)
    return np.linalg.solve(I - 0.5 * W, I + 0.5 * W)


@njit(cache=True)
def _rk_buffers(y0, R0, s, n, every):
    """Work arrays of a Cayley-RKMK run: state copies, stage slopes, and the recorded outputs."""
    m = y0.shape[0]
    L, Q = R0.shape[0], R0.shape[1]
    nout = n // every + 1 if every > 0 else 1
    ys = np.empty((nout, m))
    Rss = np.empty((nout, L, Q, Q))
    ys[0] = y0
    Rss[0] = R0
    return y0.copy(), R0.copy(), np.empty((s, m)), np.empty((s, L, Q, Q)), ys, Rss


@njit(cache=True)
def _rk_stage(y, Rs, ky, kO, A_, j, h):
    """Stage j's arguments: y_j = y + h sum a_jl k_l, Omega_j = h sum a_jl K_l, R_j = cay(Omega_j) R."""
    L, Q = Rs.shape[0], Rs.shape[1]
    yj = y.copy()
    Oj = np.zeros((L, Q, Q))
    for l in range(j):
        if A_[j, l] != 0.0:
            yj += h * A_[j, l] * ky[l]
            Oj += h * A_[j, l] * kO[l]
    Rj = np.empty((L, Q, Q))
    for k in range(L):
        Rj[k] = Rs[k] if j == 0 else _cay(Oj[k]) @ Rs[k]
    return yj, Rj, Oj


@njit(cache=True)
def _rk_store(ky, kO, j, dy, A, Oj):
    """Store stage j's slopes; the generator is pulled back through the inverse of the Cayley map's
    trivialised derivative, dcay^{-1}_Omega(A) = (I - Omega/2) A (I + Omega/2) (exact; as dcayinv)."""
    Q = A.shape[1]
    I = np.eye(Q)
    ky[j] = dy
    for k in range(A.shape[0]):
        kO[j, k] = (I - 0.5 * Oj[k]) @ A[k] @ (I + 0.5 * Oj[k])


@njit(cache=True)
def _rk_advance(y, Rs, ky, kO, b, h):
    """y += h sum b_j k_j, R <- cay(h sum b_j K_j) R (in place)."""
    L, Q = Rs.shape[0], Rs.shape[1]
    O = np.zeros((L, Q, Q))
    for j in range(b.shape[0]):
        if b[j] != 0.0:
            y += h * b[j] * ky[j]
            O += h * b[j] * kO[j]
    for k in range(L):
        Rs[k] = _cay(O[k]) @ Rs[k]


@njit(cache=True)
def _lie_rk(f, t0, y0, R0, h, n, args, A_, b, c, every):
    y, Rs, ky, kO, ys, Rss = _rk_buffers(y0, R0, b.shape[0], n, every)
    t = t0
    out = 1
    for i in range(n):
        for j in range(b.shape[0]):
            yj, Rj, Oj = _rk_stage(y, Rs, ky, kO, A_, j, h)
            dy, A = f(t + c[j] * h, yj, Rj, args)
            _rk_store(ky, kO, j, dy, A, Oj)
        _rk_advance(y, Rs, ky, kO, b, h)
        t += h
        if every > 0 and (i + 1) % every == 0:
            ys[out] = y
            Rss[out] = Rs
            out += 1
    return y, Rs, ys, Rss


def lie_rk(f, t0: float, y0, R0, h: float, n: int, args=(), method: str = "rk4", every: int = 0):
    """Numba kernel of :func:`lie_rk_numpy`; ``f`` must be ``@njit`` with signature
    ``f(t, y, Rs, args) -> (dy, A)``.  Same return convention."""
    A_, b, c, _ = tableau(method)
    y0, R0 = check_state(y0, R0, h, n)
    y, Rs, ys, Rss = call_cached(_lie_rk, f, float(t0), y0, R0, float(h), int(n), args, A_, b, c, int(every))
    if every:
        return y, Rs, ys, Rss
    return y, Rs
