"""Deep linear networks: products, gradients, conserved quantities, the operator A_{N,W},
balanced points, and the gradient-flow right-hand side as a Numba kernel.

Conventions (catalogue menon §1): a tuple is a Python list in the paper's order
``Ws = [W_N, ..., W_1]`` with ``W_p`` of shape ``(d_p, d_{p-1})``; ``phi(Ws) = W_N ... W_1``;
``A_p = W_N ... W_p``, ``B_p = W_p ... W_1``, ``A_{N+1} = I``, ``B_0 = I``;
``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T`` (the sign convention of eq. (4.8); erratum E1).

The list functions are written against the array API (NumPy, CuPy, array-api-strict).
"""
from __future__ import annotations

from functools import reduce

import numpy as np
from numba import njit

from .matfun import psd_power
from .specialise import register
from .xp import namespace

__all__ = ["prod", "partial_A", "partial_B", "layer", "grads", "conserved", "a_operator",
           "a_matrix", "balanced_point", "random_orthogonal", "pack", "unpack", "dln_rhs",
           "make_args", "E_QUAD", "random_layers"]


# ---------------------------------------------------------------------------
# list helpers (array API)
def _eye(n, like):
    """Identity of size n in the backend of ``like`` (array-API arrays, or SymPy matrices)."""
    try:
        xp = namespace(like)
    except TypeError:
        import sympy
        return sympy.eye(n)
    return xp.eye(n, dtype=like.dtype)


def prod(Ws):
    """End-to-end matrix ``phi(Ws) = W_N ... W_1``."""
    return reduce(lambda a, b: a @ b, Ws)


def layer(Ws, p: int):
    """``W_p`` (1-based, paper numbering)."""
    return Ws[len(Ws) - p]


def partial_A(Ws, p: int):
    """``A_p = W_N ... W_p``; ``A_{N+1} = I_{d_N}``."""
    N = len(Ws)
    if p == N + 1:
        return _eye(Ws[0].shape[0], Ws[0])
    return prod(Ws[: N - p + 1])


def partial_B(Ws, p: int):
    """``B_p = W_p ... W_1``; ``B_0 = I_{d_0}``."""
    N = len(Ws)
    if p == 0:
        return _eye(Ws[-1].shape[1], Ws[-1])
    return prod(Ws[N - p:])


def grads(Ws, Ep):
    """``D_p = grad_{W_p} E(phi(W)) = A_{p+1}^T E'(W) B_{p-1}^T`` (eq. (3.6)/(7.5)), paper order."""
    N = len(Ws)
    return [partial_A(Ws, p + 1).T @ Ep @ partial_B(Ws, p - 1).T for p in range(N, 0, -1)]


def conserved(Ws):
    """``[C_1, ..., C_{N-1}]`` with ``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``."""
    N = len(Ws)
    return [layer(Ws, p + 1).T @ layer(Ws, p + 1) - layer(Ws, p) @ layer(Ws, p).T for p in range(1, N)]


def a_operator(W, Z, N: int, rel_cutoff: float = 1e-12):
    """``A_{N,W}(Z) = sum_k (W W^T)^{(N-k)/N} Z (W^T W)^{(k-1)/N}`` (eq. (4.14))."""
    xp = namespace(W, Z)
    T = xp.matrix_transpose
    R2, P2 = W @ T(W), T(W) @ W
    out = xp.zeros_like(Z)
    for k in range(1, N + 1):
        out = out + psd_power(R2, (N - k) / N, rel_cutoff) @ Z @ psd_power(P2, (k - 1) / N, rel_cutoff)
    return out


def a_matrix(W, N: int, rel_cutoff: float = 1e-12) -> np.ndarray:
    """The matrix of ``A_{N,W}`` acting on row-major ``vec(Z)`` (NumPy, ``d^2 x d^2``)."""
    W = np.asarray(W, dtype=float)
    m, n = W.shape
    M = np.zeros((m * n, m * n))
    R2, P2 = W @ W.T, W.T @ W
    for k in range(1, N + 1):
        L = psd_power(R2, (N - k) / N, rel_cutoff)
        Rr = psd_power(P2, (k - 1) / N, rel_cutoff)
        M += np.kron(L, Rr.T)  # vec_row(L Z R) = (L kron R^T) vec_row(Z)
    return M


def random_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """Haar-distributed orthogonal matrix (QR of a Gaussian with the sign fix)."""
    Q, R = np.linalg.qr(rng.standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def balanced_point(lam, Qs):
    """The parametrisation z (5.15)-(5.16): ``Qs = [Q_N, ..., Q_0]``, ``W_p = Q_p diag(lam) Q_{p-1}^T``."""
    xp = namespace(lam, *Qs)
    Lam = xp.eye(lam.shape[0], dtype=lam.dtype) * lam[None, :]
    T = xp.matrix_transpose
    N = len(Qs) - 1
    return [Qs[i] @ Lam @ T(Qs[i + 1]) for i in range(N)]


def random_layers(widths, rng: np.random.Generator, scale: float = 1.0):
    """Gaussian layers for widths ``[d_0, ..., d_N]``, paper order ``[W_N, ..., W_1]``."""
    N = len(widths) - 1
    return [scale * rng.standard_normal((widths[p], widths[p - 1])) / np.sqrt(widths[p - 1])
            for p in range(N, 0, -1)]


def pack(Ws) -> np.ndarray:
    return np.concatenate([np.asarray(w, dtype=float).ravel() for w in Ws])


def unpack(y, widths):
    """Inverse of :func:`pack` for widths ``[d_0, ..., d_N]``."""
    N = len(widths) - 1
    out, k = [], 0
    for p in range(N, 0, -1):
        r, c = widths[p], widths[p - 1]
        out.append(np.asarray(y[k: k + r * c]).reshape(r, c))
        k += r * c
    return out


# ---------------------------------------------------------------------------
# gradient-flow right-hand side as a Numba kernel
#
# The energy is E(W) = 1/2 |M o (W - Y)|^2 + q/4 |M o (W - Y)|^4 (mask M, quartic weight q):
# quadratic regression (q=0, M=1), matrix completion (0/1 mask), and a non-quadratic energy.
# ``mode`` selects the loss:   0  L = E o phi                     (Theorem 1 holds)
#                              1  L = E o phi + mu/2 |W_1|^2       (not of the form E o phi)
#                              2  per-layer rates: dW_p = -c_p grad_p L
#                              3  uniform weight decay: + lam/2 sum_p |W_p|^2
E_QUAD = 0


@njit(cache=True)
def _energy_grad(W, Y, M, q):
    R = M * (W - Y)
    s = 0.0
    for i in range(R.shape[0]):
        for j in range(R.shape[1]):
            s += R[i, j] * R[i, j]
    return M * R * (1.0 + q * s)


@register
@njit(cache=True)
def dln_rhs(t, y, args):
    """-grad L for the packed layers ``y``; ``args = (widths, Y, M, q, mode, coef)``."""
    widths, Y, M, q, mode, coef = args
    N = widths.shape[0] - 1
    offs = np.zeros(N + 2, dtype=np.int64)  # offs[p] start of W_p (packed in order N..1)
    k = 0
    for p in range(N, 0, -1):
        offs[p] = k
        k += widths[p] * widths[p - 1]
    Ws = []
    for p in range(1, N + 1):
        Ws.append(np.ascontiguousarray(y[offs[p]: offs[p] + widths[p] * widths[p - 1]]).reshape(widths[p], widths[p - 1]))
    # prefix products B_p = W_p ... W_1 and suffix products A_p = W_N ... W_p
    Bs = [np.eye(widths[0])]
    for p in range(1, N + 1):
        Bs.append(Ws[p - 1] @ Bs[p - 1])
    As = [np.eye(widths[N]) for _ in range(N + 2)]
    for p in range(N, 0, -1):
        As[p] = As[p + 1] @ Ws[p - 1]
    W = Bs[N]
    G = _energy_grad(W, Y, M, q)
    out = np.empty_like(y)
    for p in range(1, N + 1):
        D = As[p + 1].T @ G @ Bs[p - 1].T
        if mode == 1 and p == 1:
            D = D + coef[0] * Ws[0]
        elif mode == 2:
            D = coef[p - 1] * D
        elif mode == 3:
            D = D + coef[0] * Ws[p - 1]
        n = widths[p] * widths[p - 1]
        out[offs[p]: offs[p] + n] = -D.ravel()
    return out


def make_args(widths, Y, M=None, q: float = 0.0, mode: int = 0, coef=(0.0,)):
    """Pack the arguments of :func:`dln_rhs` with the dtypes Numba expects."""
    widths = np.asarray(widths, dtype=np.int64)
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    M = np.ones_like(Y) if M is None else np.ascontiguousarray(M, dtype=np.float64)
    return (widths, Y, M, float(q), int(mode), np.asarray(coef, dtype=np.float64))


def dln_rhs_numpy(t, y, widths, Y, M, q, mode, coef):
    """NumPy reference of :func:`dln_rhs` (same loss conventions): D_p = A_{p+1}^T E'(W) B_{p-1}^T from prefix
    and suffix products (2N - 2 products, not the N^2 of :func:`grads`: the implicit-midpoint checks call it
    ~10^5 times at d = N = 8).  tests/test_solvers.py holds it to finite differences of the energy."""
    Ws = unpack(y, widths)            # [W_N, ..., W_1]
    N = len(Ws)
    B = [None] * (N + 1)              # B[p] = W_p ... W_1, B[0] = I
    B[0] = np.eye(widths[0])
    for p in range(1, N + 1):
        B[p] = Ws[N - p] @ B[p - 1]
    R = M * (B[N] - Y)
    G = M * R * (1.0 + q * np.sum(R * R))
    out = np.empty(len(y))
    k = 0
    At = None                         # A_{p+1}^T E' with A_{N+1} = I, built from the top down
    for i, p in enumerate(range(N, 0, -1)):
        At = G if At is None else Ws[i - 1].T @ At
        D = At @ B[p - 1].T
        if mode == 1 and p == 1:
            D = D + coef[0] * Ws[i]
        elif mode == 2:
            D = coef[p - 1] * D
        elif mode == 3:
            D = D + coef[0] * Ws[i]
        out[k: k + D.size] = -D.ravel()
        k += D.size
    return out
