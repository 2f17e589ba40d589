"""Helpers shared by the menon modules of Sections 12-14 on Riemannian Langevin equations (RLE)
(sec12_1_rle_principles, sec12_2_dln_brownian_motion, sec13_random_init, sec14_1_matrix_completion).

Conventions: see the package docstring (tuples ``[W_N, ..., W_1]``, ``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``).
Throughout, ``W = Q_N Sigma Q_0^T`` is the end-to-end SVD, ``Lambda = Sigma^{1/N}`` (5.15)-(5.17), and the
entropy is Thm 10 without its additive constant, ``S = 1/2 sum_{i<j} log((s_i^2 - s_j^2)/(s_i^{2/N} - s_j^{2/N}))``.
Mean curvature ``H`` of a submanifold is the trace of its second fundamental form (no 1/dim), so the sphere
S_r^{d-1} has ``|H| = (d-1)/r`` pointing inwards (line 896).
"""
from __future__ import annotations

import numpy as np


def _sigma_prime(lam, N):
    """Sigma'_kk of (12.8)."""
    d = len(lam)
    out = np.zeros(d)
    for k in range(d):
        for l in range(d):
            if l != k:
                out[k] += (N * lam[k] ** (2 * N - 1) / (lam[k] ** (2 * N) - lam[l] ** (2 * N))
                           - lam[k] / (lam[k] ** 2 - lam[l] ** 2)) * lam[k] ** (N - 1)
    return out


def _pred_grad_S(lam, Qs, N, factor=1.0):
    return factor * Qs[0] @ np.diag(_sigma_prime(lam, N)) @ Qs[-1].T
