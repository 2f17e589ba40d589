"""Array-API helpers of the menon checks: one code path for NumPy, array-api-strict and CuPy.

Every function takes arrays of one backend and dispatches through ``solvers.xp.namespace``; on NumPy
arrays (array-api-compat's NumPy namespace) they compute what the NumPy code of the checks computed
before, so the NumPy records do not move beyond rounding.  Only standard array-API calls are used
(no ``einsum``, no ``kron``, no ``.T`` on stacks, no ``eig`` of non-symmetric matrices).
"""
from __future__ import annotations

import numpy as np

from .matfun import psd_eig
from .xp import asnumpy, namespace, on

__all__ = ["fro", "norm2", "to_xp", "diag", "outer", "psd_powers", "a_op", "a_mat", "kron", "host",
           "T", "vdot"]


def T(X):
    """Transpose of the last two axes (``.T`` is only defined on 2-D arrays in the array API)."""
    return namespace(X).matrix_transpose(X)


def host(x) -> np.ndarray:
    """A result brought back to host NumPy."""
    return np.asarray(asnumpy(x))


def fro(X) -> float:
    """Frobenius norm (of a matrix; of a vector: the 2-norm) as a Python float."""
    xp = namespace(X)
    if X.ndim == 2:
        return float(xp.linalg.matrix_norm(X))
    return float(xp.linalg.vector_norm(X))


def norm2(X) -> float:
    """Spectral norm of a matrix as a Python float."""
    return float(namespace(X).linalg.matrix_norm(X, ord=2))


def vdot(X, Y) -> float:
    """Frobenius inner product sum(X * Y) as a Python float."""
    return float(namespace(X, Y).sum(X * Y))


def to_xp(xp, Ws):
    """A list of host arrays moved to ``xp`` (float64), in order."""
    return [on(xp, w) for w in Ws]


def diag(v):
    """diag(v) for a 1-D array (array-API: an identity scaled column-wise)."""
    xp = namespace(v)
    return xp.eye(v.shape[0], dtype=v.dtype) * v[None, :]


def outer(u, v):
    return u[:, None] * v[None, :]


def kron(A, B):
    """Kronecker product of two matrices (row-major blocks), by broadcasting and one reshape."""
    xp = namespace(A, B)
    m, n = A.shape
    p, q = B.shape
    return xp.reshape(A[:, None, :, None] * B[None, :, None, :], (m * p, n * q))


def psd_powers(S, exps, rel_cutoff: float = 1e-12):
    """``[S**a for a in exps]`` from one ``eigh`` (the cutoff of solvers.matfun.psd_power; ``S**0 = I``)."""
    xp = namespace(S)
    w, V = psd_eig(S, rel_cutoff)
    Vt = xp.matrix_transpose(V)
    out = []
    for a in exps:
        if a == 0:
            wa = xp.ones_like(w)
        else:
            pos = w > 0
            wa = xp.where(pos, xp.where(pos, w, xp.ones_like(w)) ** a, xp.zeros_like(w))
        out.append((V * wa[..., None, :]) @ Vt)
    return out


def a_op(W, Z, N: int):
    """``A_{N,W}(Z) = sum_k (WW^T)^{(N-k)/N} Z (W^TW)^{(k-1)/N}`` (4.14), one eigh of each side
    (batched over leading axes)."""
    xp = namespace(W, Z)
    Wt = xp.matrix_transpose(W)
    L = psd_powers(W @ Wt, [(N - k) / N for k in range(1, N + 1)])
    R = psd_powers(Wt @ W, [(k - 1) / N for k in range(1, N + 1)])
    out = L[0] @ Z @ R[0]
    for l, r in zip(L[1:], R[1:]):
        out = out + l @ Z @ r
    return out


def a_mat(W, N: int):
    """Matrix of ``A_{N,W}`` on row-major vec(Z) (d^2 x d^2): sum_k kron(L_k, R_k^T)."""
    xp = namespace(W)
    Wt = xp.matrix_transpose(W)
    L = psd_powers(W @ Wt, [(N - k) / N for k in range(1, N + 1)])
    R = psd_powers(Wt @ W, [(k - 1) / N for k in range(1, N + 1)])
    out = kron(L[0], xp.matrix_transpose(R[0]))
    for l, r in zip(L[1:], R[1:]):
        out = out + kron(l, xp.matrix_transpose(r))
    return out
