"""Pointwise single-cluster states (catalogue harness H), shared by the chen modules of §3.2
(``sec3_2b_pointwise_flow``) and §3.3 (``sec3_3_moments``): one layer (R, beta), one cluster X, one target yt.

Notation decisions D1-D9: see ``theorems/chen/_common.py``.  The metric on O(Q) is Frobenius (D2):
R' = Omega R, Omega = -pi_-((dC/dR) R^T).  Everything is in layer coordinates u = R(x + beta),
v = R(beta + yt), residual r = sigma(u) - v; the corrected generator (E1) is
Omega = -mean_i [H(u_i), 1/2 (r_i u_i^T + u_i r_i^T)] = mean_i [H(u_i), M(u_i) - 1/2 u_i u_i^T].
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from theorems.claim import Param
from theorems.chen._common import random_orthogonal, rng_for


# ===========================================================================
# pointwise single-cluster states (catalogue harness H)
def _pt_params(extra=()):
    return [
        Param.int("Q", 3, 2, 6, "dimension", search=(2, 5)),
        Param.int("N", 6, 1, 40, "points in the cluster", search=(1, 12)),
        Param.seed("seed of R (Haar), beta ~ 0.5 N(0,1), X ~ N(0,1), yt ~ N(0,1)"),
        *extra,
    ]


def point_state(p):
    rng = rng_for(p.seed)
    R = random_orthogonal(p.Q, rng)
    beta = 0.5 * rng.standard_normal(p.Q)
    X = rng.standard_normal((p.Q, p.N))
    yt = rng.standard_normal(p.Q)
    return R, beta, X, yt


def _cost1(R, beta, X, yt):
    return cm.cost_separated([R], [beta], [X], yt[None])


def _kink_guard(R, beta, X):
    d = float(np.min(np.abs(R @ (X + beta[:, None]))))
    return d
