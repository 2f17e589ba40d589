"""Helpers shared by the menon modules sec5_1_polar, sec5_2_scalar_conics, sec5_3_svd_parametrisation.

Sign convention: G_p is used exactly as in (4.2)/(5.6), ``W_{p+1}^T W_{p+1} = W_p W_p^T - G_p``, i.e.
``G_p = -C_p`` with ``C_p`` of the package docstring (erratum E1).  With this sign the right-to-left
construction (5.7)-(5.8) needs ``R_p^2 - G_p`` psd (G_p negative definite suffices) and the
left-to-right one (5.12) needs ``P_{p+1}^2 + G_p`` psd (G_p positive definite suffices).

Several checks combine a few sub-checks, each with its own error model; they are reported as
``residual = max_i r_i / tol_i`` against ``tolerance = 1`` and every ``r_i``, ``tol_i`` is listed in
``values`` (so ``residual <= 1`` iff every sub-check holds within its own tolerance).
"""
from __future__ import annotations

import numpy as np

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import namespace
from theorems.menon._common import EPS


def _rank_part(J, expected):
    """Numerical rank test of a matrix that should have rank ``expected`` (full column rank when
    ``expected == J.shape[1]``).  Error model: J is exact up to rounding, |dJ|_2 <= n eps |J|_2; the
    rank is ``expected`` iff s_expected > 100 n eps s_max and s_{expected+1} is below it.
    Sub-check residual: thr / s_expected (<= 1 when the gap is resolved) and s_{expected+1} / thr."""
    s = np.linalg.svd(J, compute_uv=False) if isinstance(J, np.ndarray) else X.host(namespace(J).linalg.svdvals(J))
    thr = 100 * max(J.shape) * EPS * s[0]
    num_rank = int(np.sum(s > thr))
    lo = s[expected - 1] if expected >= 1 else np.inf
    hi = s[expected] if expected < len(s) else 0.0
    return (max(thr / lo, hi / thr), 1.0), num_rank, float(lo)


def _balanced_residual(Ws, Gs=None):
    """max_p |W_{p+1}^T W_{p+1} - W_p W_p^T + G_p|_F (4.2) and the per-p scale |W_{p+1}|^2+|W_p|^2+|G_p|."""
    N = len(Ws)
    res, scale = 0.0, 0.0
    for p in range(1, N):
        Wp1, Wp = dln.layer(Ws, p + 1), dln.layer(Ws, p)
        G = 0.0 if Gs is None else Gs[p]
        res = max(res, X.fro(Wp1.T @ Wp1 - Wp @ Wp.T + G))
        scale = max(scale, X.vdot(Wp1, Wp1) + X.vdot(Wp, Wp) + (0 if Gs is None else float(np.linalg.norm(G))))
    return res, scale
