"""Helpers shared by the menon modules on balanced varieties (sec4_1_balanced_variety,
sec4_2_balanced_dynamics, sec4_2_ambient_noise, sec4_4_simons_cone).

Conventions: see the package docstring (``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``, tuples
``[W_N, ..., W_1]``).  Every tolerance below is written next to its error model.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import namespace
from theorems.menon._common import EPS


def _fro(a) -> float:
    """Frobenius norm; NumPy arrays as before, other array-API arrays through their namespace."""
    if isinstance(a, (np.ndarray, np.generic, float, int)):
        return float(np.linalg.norm(a))
    return X.fro(a)


def _numerical_rank(J, expected=None):
    """Numerical rank of J: singular values above tau = 1e3 * max(shape) * eps * s_max count.

    Error model: the entries of J carry rounding ~ eps * s_max, which moves every singular
    value by at most ~ sqrt(size) * eps * s_max (Weyl), far below tau.  The rank is
    *undecidable* when some singular value falls in the grey zone [tau, 1e4 tau]; the caller
    then reports inconclusive."""
    s = np.linalg.svd(J, compute_uv=False) if isinstance(J, np.ndarray) else X.host(namespace(J).linalg.svdvals(J))
    if s.size == 0 or s[0] == 0:
        return 0, False, s
    tau = 1e3 * max(J.shape) * EPS * s[0]
    grey = bool(np.any((s > tau) & (s < 1e4 * tau)))
    return int(np.sum(s > tau)), grey, s


def _scale(Ws):
    return max(X.vdot(w, w) for w in Ws)


def _jac_C(Ws):
    """Matrix of dC: (dW_N..dW_1 packed row-major) -> upper triangles of (C_1..C_{N-1})."""
    N = len(Ws)
    shapes = [w.shape for w in Ws]
    cols = []
    for i, (r, c) in enumerate(shapes):
        for k in range(r * c):
            dW = [np.zeros(s) for s in shapes]
            dW[i].flat[k] = 1.0
            col = []
            for q in range(1, N):
                W1, W0 = dln.layer(Ws, q + 1), dln.layer(Ws, q)
                V1, V0 = dln.layer(dW, q + 1), dln.layer(dW, q)
                dC = V1.T @ W1 + W1.T @ V1 - V0 @ W0.T - W0 @ V0.T
                col.append(dC[np.triu_indices(dC.shape[0])])
            cols.append(np.concatenate(col) if col else np.zeros(0))
    return np.array(cols).T


def _rational_orthogonal(S):
    """Cayley transform (I - S)(I + S)^{-1} of a rational skew matrix: an exactly rational orthogonal matrix."""
    I = sp.eye(S.shape[0])
    return (I - S) * (I + S).inv()
