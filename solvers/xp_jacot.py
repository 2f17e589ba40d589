"""Array-API forms of the leaky-ResNet algebra of ``solvers.leaky`` (Jacot & Kaiser), for checks that run
one code path on NumPy, array-api-strict and CuPy.

Every function takes the namespace ``xp`` first and arrays of that namespace, and broadcasts over leading
(batch) axes: ``A`` is ``(..., w, N)``.  The thresholds are those of the NumPy originals, so that on the
NumPy namespace each function returns what its ``solvers.leaky`` / ``numpy.linalg`` counterpart returns up
to rounding:

* :func:`pinv` is ``numpy.linalg.pinv`` (SVD, cutoff ``rcond * s_max``, ``rcond = 1e-15``); :func:`pinvh` its
  ``hermitian=True`` form (eigh, cutoff on ``|lambda|``);
* :func:`matrix_rank` is ``numpy.linalg.matrix_rank`` (``s > max(m, n) eps s_max``);
* :func:`image_residual` / :func:`g_norm2` / :func:`coi` are ``solvers.leaky.image_condition`` / ``g_norm2`` /
  ``coi``: the numerical range of the PSD ``G`` is the span of the eigenvectors with ``lambda > n eps
  lambda_max``; selected by a 0/1 mask (no data-dependent shapes, so a batch keeps one shape).

Only standard array-API calls (``xp.linalg.svd/eigh/...``, ``xp.matrix_transpose``, ``xp.where``...) are used;
array-api-strict checks it on the CPU.
"""
from __future__ import annotations

import numpy as np

from .leaky import IMAGE_RTOL

__all__ = ["relu", "sigma", "gram", "fro", "fro2", "svdvals", "opnorm", "pinv", "pinvh", "matrix_rank",
           "kept_cond", "image_residual", "g_norm2", "coi", "coi_gamma", "hamiltonian", "hamilton_rhs"]

EPS = float(np.finfo(float).eps)


def relu(xp, A):
    return xp.where(A > 0, A, xp.zeros_like(A))


def sigma(xp, A, bias: bool = True):
    """``sigma(A) = [relu(A); 1^T]`` (``(..., w+1, N)``), or ``relu(A)`` without the bias row."""
    r = relu(xp, A)
    if not bias:
        return r
    ones = xp.ones((*A.shape[:-2], 1, A.shape[-1]), dtype=A.dtype)
    return xp.concat([r, ones], axis=-2)


def gram(xp, A, bias: bool = True, gamma: float = 0.0):
    """``K = sigma(A)^T sigma(A) + gamma I``."""
    S = sigma(xp, A, bias)
    K = xp.matrix_transpose(S) @ S
    return K + gamma * xp.eye(K.shape[-1], dtype=K.dtype) if gamma else K


def fro2(xp, X):
    """Squared Frobenius norm over the last two axes."""
    return xp.sum(X * X, axis=(-2, -1))


def fro(xp, X):
    return xp.sqrt(fro2(xp, X))


def svdvals(xp, X):
    return xp.linalg.svdvals(X)


def opnorm(xp, X):
    """Spectral norm (largest singular value)."""
    return xp.max(xp.linalg.svdvals(X), axis=-1)


def _safe(xp, keep, v):
    return xp.where(keep, v, xp.ones_like(v))


def pinv(xp, A, rcond: float = 1e-15):
    """Moore-Penrose pseudo-inverse exactly as ``numpy.linalg.pinv`` builds it (SVD, cutoff rcond s_max)."""
    U, s, Vh = xp.linalg.svd(A, full_matrices=False)
    cut = rcond * xp.max(s, axis=-1, keepdims=True)
    keep = s > cut
    sinv = xp.where(keep, 1.0 / _safe(xp, keep, s), xp.zeros_like(s))
    return xp.matrix_transpose(Vh) @ (sinv[..., :, None] * xp.matrix_transpose(U))


def pinvh(xp, G, rcond: float = 1e-15):
    """``numpy.linalg.pinv(G, hermitian=True)``: eigh, eigenvalues with |lambda| <= rcond max|lambda| dropped."""
    lam, V = xp.linalg.eigh(G)
    a = xp.abs(lam)
    keep = a > rcond * xp.max(a, axis=-1, keepdims=True)
    linv = xp.where(keep, 1.0 / _safe(xp, keep, lam), xp.zeros_like(lam))
    return V @ (linv[..., :, None] * xp.matrix_transpose(V))


def matrix_rank(xp, A):
    """``numpy.linalg.matrix_rank``: singular values above max(m, n) eps s_max (an integer array over the batch)."""
    s = xp.linalg.svdvals(A)
    tol = xp.max(s, axis=-1, keepdims=True) * (max(A.shape[-2:]) * EPS)
    return xp.sum(xp.astype(s > tol, xp.int64), axis=-1)


def kept_cond(xp, S, thresh=None):
    """Condition number of S on its numerically nonzero spectrum (s > max(shape) eps s_max; ``thresh`` overrides
    the factor max(shape) eps); 1 for S = 0."""
    s = xp.linalg.svdvals(S)
    top = s[..., 0]
    f = max(S.shape[-2:]) * EPS if thresh is None else thresh
    keep = s > f * s[..., :1]
    low = xp.min(xp.where(keep, s, xp.full_like(s, xp.inf)), axis=-1)
    ok = top > 0
    return xp.where(ok, top / xp.where(ok, low, xp.ones_like(low)), xp.ones_like(top))


def _range(xp, G):
    """Eigen-decomposition of the PSD ``G`` with the 0/1 mask of its numerical range (lambda > n eps lambda_max^+)."""
    lam, V = xp.linalg.eigh(G)
    top = xp.where(lam[..., -1:] > 0, lam[..., -1:], xp.zeros_like(lam[..., -1:]))
    keep = lam > G.shape[-1] * EPS * top
    return lam, V, keep


def image_residual(xp, M, G):
    """``||M^T - P M^T||_F / ||M||_F`` with P the projector on the numerical range of ``G`` (0 for M = 0), as in
    ``solvers.leaky.image_condition``; the condition holds where it is ``<= IMAGE_RTOL``."""
    lam, V, keep = _range(xp, G)
    C = xp.matrix_transpose(V) @ xp.matrix_transpose(M)          # coordinates of M^T in the eigenbasis
    Ck = xp.where(keep[..., :, None], C, xp.zeros_like(C))
    R = xp.matrix_transpose(M) - V @ Ck
    nrm = fro(xp, M)
    pos = nrm > 0
    return xp.where(pos, fro(xp, R) / xp.where(pos, nrm, xp.ones_like(nrm)), xp.zeros_like(nrm))


def g_norm2(xp, M, G):
    """``Tr[M G^+ M^T]`` on the numerical range of ``G``, ``+inf`` where ``Im M^T`` is not in it."""
    lam, V, keep = _range(xp, G)
    P = M @ V
    q = xp.where(keep[..., None, :], P * P / _safe(xp, keep, lam)[..., None, :], xp.zeros_like(P))
    val = xp.sum(q, axis=(-2, -1))
    ok = image_residual(xp, M, G) <= IMAGE_RTOL
    return xp.where(ok, val, xp.full_like(val, xp.inf))


def coi(xp, A, bias: bool = True):
    """Cost of identity ``||A sigma(A)^+||_F^2`` (+inf when the image condition fails), as ``solvers.leaky.coi``."""
    return g_norm2(xp, A, gram(xp, A, bias))


def coi_gamma(xp, A, gamma: float, bias: bool = True):
    """``Tr[A (K + gamma I)^{-1} A^T]``, as ``solvers.leaky.coi_gamma``."""
    G = gram(xp, A, bias, gamma)
    X = xp.linalg.solve(G, xp.matrix_transpose(A))
    return xp.sum(A * xp.matrix_transpose(X), axis=(-2, -1))


def hamiltonian(xp, A, B, Lt: float):
    """``H = Lt/2 ||B sigma(A)^T||_F^2 - Lt Tr[B A^T]`` (eq. (1))."""
    M = B @ xp.matrix_transpose(sigma(xp, A))
    return 0.5 * Lt * fro2(xp, M) - Lt * xp.sum(B * A, axis=(-2, -1))


def hamilton_rhs(xp, A, B, Lt: float):
    """Hamilton's equations (H3) as arrays: ``(A', B') = (Lt (B K - A), -Lt (mask(A) * [relu(A) B^T B] - B))``."""
    R = relu(xp, A)
    K = xp.matrix_transpose(R) @ R + 1.0
    dA = Lt * (B @ K - A)
    M = R @ (xp.matrix_transpose(B) @ B)
    M = xp.where(A > 0, M, xp.zeros_like(M))
    return dA, -Lt * (M - B)


def coi_tol(xp, A, bias: bool = True):
    """Rounding model of :func:`coi` (as ``theorems.jacot._shared.coi_tol``): 10 n eps cond(G) on the kept
    spectrum of the Gram ``G``."""
    G = gram(xp, A, bias)
    lam = xp.linalg.eigvalsh(G)
    top = xp.where(lam[..., -1] > 0, lam[..., -1], xp.zeros_like(lam[..., -1]))
    keep = lam > G.shape[-1] * EPS * top[..., None]
    low = xp.min(xp.where(keep, lam, xp.full_like(lam, xp.inf)), axis=-1)
    anyk = xp.any(keep, axis=-1)
    cond = xp.where(anyk, top / xp.where(anyk, low, xp.ones_like(low)), xp.ones_like(low))
    return 10 * G.shape[-1] * EPS * cond
