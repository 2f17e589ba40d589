"""Right-hand sides that do not allocate: in-place versions ``f(t, y, args, out)`` of the fields of
:mod:`solvers.twopoint` (the lifted two-point system), :mod:`solvers.leaky` (Hamilton's equations of the
leaky ResNet) and :mod:`solvers.dln` (the deep-linear-network gradient flow), for the allocation-free loops
of :mod:`solvers.rk` (``register(inplace=True)``: the integrator passes its stage buffer as ``out``).

Each writes the same field as its out-of-place original; the arithmetic is the same up to the summation
order of the matrix products (explicit loops for small ones, where a BLAS call costs more than the product;
BLAS into the work buffers for large ones), so the two agree to rounding, not bit for bit
(``tests/test_solvers.py`` holds them to a few eps of the field's scale; ``lift_rhs`` is bit for bit).  Work arrays the field needs
(the matrix products) travel in ``args``, made once by the ``*_args`` helpers below; nothing is allocated per
call.  The originals are left as they are (the claims and their recorded results use them).

``shoot`` and ``integrate_lifted`` mirror :func:`solvers.leaky.shoot` and :func:`solvers.twopoint.integrate_lifted`
on these fields with one kernel call for the whole path (:func:`solvers.rk.solve_dopri5` with ``t_eval``: the
integrator steps onto each output point and carries its step size across them, instead of one call and a fresh
``h0`` per output interval).  ``benchmarks/bench_ode_peers.py`` times them against ``scipy.integrate.solve_ivp``.
:func:`hamilton_rhs_sw` is the leaky field with the ReLU's sides frozen in a mode (smooth in ``y``), the field of
:func:`solvers.rk.solve_switching` that :func:`solvers.leaky.shoot` (numba backend) runs: event location at the
walls ``A_ij = 0`` instead of steps over them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import dln, rk
from .specialise import register

__all__ = ["lift_rhs", "hamilton_rhs", "hamilton_args", "hamilton_rhs_sw", "hamilton_args_sw", "dln_rhs", "dln_args", "shoot", "integrate_lifted"]


# ---------------------------------------------------------------------------
# two-point: the lifted system z = (s, q_1..q_m)
@register(inplace=True)
@njit(cache=True)
def lift_rhs(t, z, args, out):
    """In place :func:`solvers.twopoint.lift_rhs` (same operations, same bits); ``args = (P,)``."""
    P = args[0]
    a, th, ty, g = P[0], P[1], P[2], P[3]
    m = z.shape[0] - 1
    s = z[0]
    qr = 0.0
    for i in range(m):
        r = z[1 + i] * s - P[4 + i]
        qr += z[1 + i] * r
        out[1 + i] = -g / ty * s * r
    out[0] = -g * a / th * qr


def integrate_lifted(z0, P, t1, rtol=1e-11, atol=1e-14, t0=0.0, h0=None, max_steps=2_000_000, t_eval=None):
    """:func:`solvers.twopoint.integrate_lifted` on the in-place field, as an :class:`solvers.rk.ODEResult`."""
    h0 = (t1 - t0) * 1e-3 if h0 is None else h0
    return rk.solve_dopri5(lift_rhs, t0, z0, t1, (np.asarray(P, dtype=float),), rtol=rtol, atol=atol, h0=h0,
                           max_steps=max_steps, t_eval=t_eval)


# ---------------------------------------------------------------------------
# leaky ResNet: Hamilton's equations, y = [A.ravel(), B.ravel(), I]
def hamilton_args(w: int, N: int, Lt: float, variant: int = 0):
    """``args`` of :func:`hamilton_rhs`: ``(w, N, Lt, variant, work)``, ``work`` two N x N products, relu(A)
    and two w x N products."""
    return (int(w), int(N), float(Lt), int(variant), np.empty(2 * N * N + 3 * w * N))


@njit(cache=True)
def _hamilton(y, out, w, N, Lt, variant, work, sw, frozen):
    """The field of :func:`hamilton_rhs` (``frozen`` False: the side of each wall from the sign of ``A``) and of
    :func:`hamilton_rhs_sw` (``frozen`` True: from ``sw``, ``R_ij = A_ij`` where ``sw_ij > 0``, else 0, and the
    mask ``sw_ij > 0``: the smooth field of one mode, continued past its walls)."""
    n = w * N
    K = work[:N * N]
    G = work[N * N:2 * N * N]
    if w * N * N > 2048:          # large: BLAS products into the work buffers (no allocation)
        R = work[2 * N * N:2 * N * N + n].reshape(w, N)
        BK = work[2 * N * N + n:2 * N * N + 2 * n].reshape(w, N)
        RG = work[2 * N * N + 2 * n:2 * N * N + 3 * n].reshape(w, N)
        Am = y[:n].reshape(w, N)
        Bm = y[n:2 * n].reshape(w, N)
        for i in range(w):
            for j in range(N):
                a = Am[i, j]
                pos = sw[i * N + j] > 0.0 if frozen else a > 0.0
                R[i, j] = a if pos else 0.0
        Kv = K.reshape(N, N)
        Gv = G.reshape(N, N)
        np.dot(R.T, R, Kv)
        np.dot(Bm.T, Bm, Gv)
        for k in range(N * N):
            K[k] += 1.0
        np.dot(Bm, Kv, BK)
        np.dot(R, Gv, RG)
        s = 0.0
        for i in range(w):
            sb = 0.0
            for j in range(N):
                out[i * N + j] = Lt * (BK[i, j] - Am[i, j])
                rg = RG[i, j]
                pos = sw[i * N + j] > 0.0 if frozen else Am[i, j] > 0.0
                if variant != 2 and not pos:
                    rg = 0.0
                d = -Lt * (rg - Bm[i, j])
                out[n + i * N + j] = -d if variant == 1 else d
                sb += Bm[i, j]
            s += (Lt * sb) ** 2
        out[2 * n] = s
        return
    # R = relu(A) (or A where sw > 0) once, into the work buffer; K = R^T R + 1 and G = B^T B as sums of rank-one
    # updates over the rows i (inner loops contiguous, branch-free)
    R = work[2 * N * N:2 * N * N + n]
    for k in range(n):
        v = y[k]
        pos = sw[k] > 0.0 if frozen else v > 0.0
        R[k] = v if pos else 0.0
    for k in range(N * N):
        K[k] = 1.0
        G[k] = 0.0
    for i in range(w):
        ri = i * N
        bi = n + i * N
        for a in range(N):
            ra = R[ri + a]
            ba = y[bi + a]
            for b in range(N):
                K[a * N + b] += ra * R[ri + b]
                G[a * N + b] += ba * y[bi + b]
    # A' = Lt (B K - A);  B' = -Lt (mask o R G - B): entry (i, b) summed over a in local accumulators (the same
    # order as accumulating rows of K, G into out, without a store per term: out may alias nothing, but the
    # compiler cannot know)
    s = 0.0
    for i in range(w):
        ri = i * N
        bi = n + i * N
        sb = 0.0
        for b in range(N):
            x = 0.0
            z = 0.0
            for a in range(N):
                x += y[bi + a] * K[a * N + b]
                z += R[ri + a] * G[a * N + b]
            out[ri + b] = Lt * (x - y[ri + b])
            if variant != 2 and not (sw[ri + b] > 0.0 if frozen else y[ri + b] > 0.0):
                z = 0.0
            d = -Lt * (z - y[bi + b])
            out[bi + b] = -d if variant == 1 else d
            sb += y[bi + b]
        s += (Lt * sb) ** 2
    out[2 * n] = s


@register(inplace=True)
@njit(cache=True)
def hamilton_rhs(t, y, args, out):
    """In place :func:`solvers.leaky.hamilton_rhs`: ``A' = Lt (B K - A)``, ``K = R^T R + 1``, ``R = relu(A)``;
    ``B' = -Lt (1_{A>0} o R B^T B - B)`` (variant 1: opposite sign, 2: mask dropped); ``I' = |Lt B 1|^2``."""
    w, N, Lt, variant, work = args
    _hamilton(y, out, w, N, Lt, variant, work, work[:0], False)


def hamilton_args_sw(w: int, N: int, Lt: float, variant: int = 0):
    """``args`` of :func:`hamilton_rhs_sw`: those of :func:`hamilton_args` and the mode ``sw`` (``w N`` sides of
    the walls ``A_ij = 0``, set and flipped by :func:`solvers.rk.solve_switching`)."""
    return hamilton_args(w, N, Lt, variant) + (np.ones(int(w) * int(N)),)


@register(inplace=True)
@njit(cache=True)
def hamilton_rhs_sw(t, y, args, out):
    """:func:`hamilton_rhs` with the ReLU's sides frozen in the mode ``sw = args[5]`` (``relu(A_ij)`` and
    ``1_{A_ij > 0}`` read as ``A_ij`` and 1 where ``sw_ij > 0``, as 0 elsewhere): smooth in ``y``, equal to
    :func:`hamilton_rhs` wherever the signs of ``A`` are those of ``sw``; the field for
    :func:`solvers.rk.solve_switching` (walls: the ``w N`` entries of ``A``, the first components of ``y``)."""
    w, N, Lt, variant, work, sw = args
    _hamilton(y, out, w, N, Lt, variant, work, sw, True)


def shoot(A0, B0, Lt: float, n_out: int = 100, rtol: float = 1e-11, atol: float = 1e-12, variant: int = 0,
          h0: float = 1e-4, max_steps: int = 200_000):
    """Hamilton's equations on ``p in [0, 1]`` from ``(A0, B0)``, states at ``n_out + 1`` equispaced points, in
    one kernel call (see the module docstring); returns the :class:`solvers.rk.ODEResult` (``ys`` without the
    initial state).  The blow-up and step-budget policies of :func:`solvers.leaky.shoot` are the caller's."""
    A0 = np.asarray(A0, dtype=float)
    B0 = np.asarray(B0, dtype=float)
    w, N = A0.shape
    y = np.concatenate([A0.ravel(), B0.ravel(), [0.0]])
    ps = np.linspace(0.0, 1.0, n_out + 1)
    return rk.solve_dopri5(hamilton_rhs, 0.0, y, 1.0, hamilton_args(w, N, Lt, variant), rtol=rtol, atol=atol,
                           h0=h0, max_steps=max_steps, t_eval=ps[1:], hold_after_reject=True)


# ---------------------------------------------------------------------------
# deep linear network: -grad L of the packed layers (order W_N, ..., W_1; see solvers.dln)
def dln_args(widths, Y, M=None, q: float = 0.0, mode: int = 0, coef=(0.0,)):
    """``args`` of :func:`dln_rhs`: those of :func:`solvers.dln.make_args` plus the layout of one work
    buffer holding the prefix products ``B_p = W_p..W_1`` (``p = 0..N``), the suffix products
    ``A_p = W_N..W_p`` (``p = 1..N+1``), the energy gradient ``G`` and one temporary."""
    widths_, Y_, M_, q_, mode_, coef_ = dln.make_args(widths, Y, M, q, mode, coef)
    wd = [int(x) for x in widths_]
    N = len(wd) - 1
    offs = np.zeros(N + 2, dtype=np.int64)
    k = 0
    for p in range(N, 0, -1):
        offs[p] = k
        k += wd[p] * wd[p - 1]
    lay = np.zeros(2 * N + 6, dtype=np.int64)      # [bstart(0..N), astart(1..N+1), G, T, end]
    pos = 0
    for p in range(N + 1):
        lay[p] = pos
        pos += wd[p] * wd[0]
    for p in range(1, N + 2):
        lay[N + 1 + p - 1] = pos
        pos += wd[N] * wd[p - 1]
    lay[2 * N + 2] = pos
    pos += wd[N] * wd[0]
    lay[2 * N + 3] = pos
    pos += max(wd) * max(wd)
    lay[2 * N + 4] = pos
    return (widths_, Y_, M_, q_, mode_, coef_, offs, lay, np.empty(pos))


@njit(cache=True)
def _matmul(C, c0, A, a0, ta, B, b0, tb, n, k, m):
    """``C[c0:] (n x m) = op(A) (n x k) @ op(B) (k x m)`` on flat row-major buffers; ``ta``/``tb``: the stored
    matrix is the transpose (stored ``k x n`` / ``m x k``).  Small products by loops whose innermost access is
    contiguous (a BLAS call costs more than the product below ~4^3 multiply-adds); larger ones by BLAS
    (``np.dot`` into the output view: nothing allocated)."""
    if n * k * m > 64:
        Cv = C[c0:c0 + n * m].reshape(n, m)
        if ta:
            Av = A[a0:a0 + k * n].reshape(k, n)
            if tb:
                np.dot(Av.T, B[b0:b0 + m * k].reshape(m, k).T, Cv)
            else:
                np.dot(Av.T, B[b0:b0 + k * m].reshape(k, m), Cv)
        else:
            Av = A[a0:a0 + n * k].reshape(n, k)
            if tb:
                np.dot(Av, B[b0:b0 + m * k].reshape(m, k).T, Cv)
            else:
                np.dot(Av, B[b0:b0 + k * m].reshape(k, m), Cv)
        return
    if tb:                       # C[i, j] = sum_l op(A)[i, l] B_s[j, l]: dot products of rows
        for i in range(n):
            for j in range(m):
                s = 0.0
                if ta:
                    for l in range(k):
                        s += A[a0 + l * n + i] * B[b0 + j * k + l]
                else:
                    for l in range(k):
                        s += A[a0 + i * k + l] * B[b0 + j * k + l]
                C[c0 + i * m + j] = s
        return
    for q in range(n * m):
        C[c0 + q] = 0.0
    for i in range(n):           # C[i, :] += op(A)[i, l] B[l, :]
        for l in range(k):
            x = A[a0 + l * n + i] if ta else A[a0 + i * k + l]
            if x != 0.0:
                for j in range(m):
                    C[c0 + i * m + j] += x * B[b0 + l * m + j]


@register(inplace=True)
@njit(cache=True)
def dln_rhs(t, y, args, out):
    """In place :func:`solvers.dln.dln_rhs`; ``args`` from :func:`dln_args`."""
    widths, Y, M, q, mode, coef, offs, lay, work = args
    N = widths.shape[0] - 1
    d0 = widths[0]
    dN = widths[N]
    # B_0 = I, B_p = W_p B_{p-1}
    b0 = lay[0]
    for i in range(d0):
        for j in range(d0):
            work[b0 + i * d0 + j] = 1.0 if i == j else 0.0
    for p in range(1, N + 1):
        _matmul(work, lay[p], y, offs[p], False, work, lay[p - 1], False, widths[p], widths[p - 1], d0)
    # A_{N+1} = I, A_p = A_{p+1} W_p
    aN1 = lay[N + 1 + N]
    for i in range(dN):
        for j in range(dN):
            work[aN1 + i * dN + j] = 1.0 if i == j else 0.0
    for p in range(N, 0, -1):
        _matmul(work, lay[N + 1 + p - 1], work, lay[N + 1 + p], False, y, offs[p], False, dN, widths[p], widths[p - 1])
    # G = M o R (1 + q |R|^2), R = M o (W - Y), W = B_N
    g0 = lay[2 * N + 2]
    bN = lay[N]
    s = 0.0
    for i in range(dN):
        for j in range(d0):
            r = M[i, j] * (work[bN + i * d0 + j] - Y[i, j])
            work[g0 + i * d0 + j] = r
            s += r * r
    for i in range(dN):
        for j in range(d0):
            work[g0 + i * d0 + j] = M[i, j] * work[g0 + i * d0 + j] * (1.0 + q * s)
    # D_p = A_{p+1}^T G B_{p-1}^T (w_p x w_{p-1}); T = A_{p+1}^T G (w_p x d0)
    t0 = lay[2 * N + 3]
    for p in range(1, N + 1):
        wp, wq = widths[p], widths[p - 1]
        _matmul(work, t0, work, lay[N + 1 + p], True, work, g0, False, wp, dN, d0)
        _matmul(out, offs[p], work, t0, False, work, lay[p - 1], True, wp, d0, wq)
        o = offs[p]
        for k in range(wp * wq):
            D = out[o + k]
            if mode == 1 and p == 1:
                D = D + coef[0] * y[o + k]
            elif mode == 2:
                D = coef[p - 1] * D
            elif mode == 3:
                D = D + coef[0] * y[o + k]
            out[o + k] = -D
