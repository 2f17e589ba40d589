"""Helpers shared by the menon modules on the model and its gradient (sec3_model_and_gradient,
sec3_2_overparametrisation, sec4_4_remarks, sec14_1_rank_one).

Conventions as in the package docstring: tuples ``[W_N, ..., W_1]``, ``A_p = W_N...W_p``,
``B_p = W_p...W_1``; vectorisation is row-major and follows :func:`solvers.dln.pack`.

Rank decisions (fibre dimension, thin gradients, parameter count, Morse) share one error
model, :func:`_rank`: the entries of a matrix built from products of k factors carry a
rounding error <= gamma_k |M|_abs entrywise (|M|_abs the same products of absolute values),
and the SVD adds a backward error <= c max(m, n) eps |M|_2.  Singular values below that
bound tau are zero; a singular value in the grey zone (tau, 1e3 tau] makes the instance
inconclusive rather than miscounted.
"""
from __future__ import annotations

import numpy as np

from solvers import dln
from solvers import xp_menon as XM
from solvers.xp import namespace
from theorems.menon._common import EPS


U = EPS / 2  # unit roundoff


def _gamma(k: int) -> float:
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of a k-term dot product."""
    return k * U / (1 - k * U)


# ---------------------------------------------------------------------------
# shared helpers
def _abs(Ws):
    return [np.abs(w) for w in Ws]


def _dphi(Ws) -> np.ndarray:
    """Jacobian of φ at Ws: a (d_N d_0) x sum_p d_p d_{p-1} matrix, row-major vec, columns in pack order.

    dφ = sum_p A_{p+1} dW_p B_{p-1} and vec_row(L Z R) = (L kron R^T) vec_row(Z)."""
    N = len(Ws)
    return np.hstack([np.kron(dln.partial_A(Ws, p + 1), dln.partial_B(Ws, p - 1).T) for p in range(N, 0, -1)])


def _rank(M, Mabs, k: int, grey: float = 1e3):
    """Numerical rank of M with the error model of the module docstring.

    Returns ``(rank, singular values, tau, ambiguous)``: rank = #{s > tau}; ambiguous when a
    singular value lies in (tau, grey * tau]."""
    if isinstance(M, np.ndarray):
        M = np.atleast_2d(M)
        s = np.linalg.svd(M, compute_uv=False) if M.size else np.zeros(0)
        nabs = float(np.linalg.norm(Mabs))
    else:  # an array-API array (p.backend): the SVD there, the singular values back on the host
        s = XM.host(namespace(M).linalg.svdvals(M)) if M.shape[0] * M.shape[1] else np.zeros(0)
        nabs = XM.fro(Mabs)
    smax = float(s[0]) if s.size else 0.0
    tau = 2 * (_gamma(k) * nabs + 4 * max(M.shape) * EPS * smax)
    rank = int(np.sum(s > tau))
    ambiguous = bool(np.any((s > tau) & (s <= grey * tau)))
    return rank, s, tau, ambiguous


def _chain_k(widths) -> int:
    """Number of terms in the longest dot-product chain of φ: sum of inner widths, plus one."""
    return int(sum(widths[1:-1]) + max(widths) + 1)


def _cond(M) -> float:
    """2-norm condition number, inf for a singular matrix (no warning)."""
    s = np.linalg.svd(M, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def _gauge_tangent(Ws, xis):
    """Tangent of W_p -> g_p W_p g_{p-1}^{-1} at g = I: (ξ_p W_p - W_p ξ_{p-1}), ξ_0 = ξ_N = 0. xis = [ξ_1..ξ_{N-1}]."""
    N, d = len(Ws), Ws[0].shape[0]
    z = np.zeros((d, d))
    xi = [z] + list(xis) + [z]  # xi[k] = ξ_k, k = 0..N
    return dln.pack([xi[k] @ dln.layer(Ws, k) - dln.layer(Ws, k) @ xi[k - 1] for k in range(N, 0, -1)])


def _gauge_basis(Ws, gens):
    """Columns: gauge tangents for ξ_k = one generator in slot k (k = 1..N-1), zero elsewhere."""
    N, d = len(Ws), Ws[0].shape[0]
    cols = []
    for k in range(1, N):
        for g in gens:
            xis = [np.zeros((d, d))] * (N - 1)
            xis = list(xis)
            xis[k - 1] = g
            cols.append(_gauge_tangent(Ws, xis))
    return np.array(cols).T if cols else np.zeros((sum(w.size for w in Ws), 0))


def _gl_basis(d):
    out = []
    for i in range(d):
        for j in range(d):
            e = np.zeros((d, d))
            e[i, j] = 1.0
            out.append(e)
    return out
