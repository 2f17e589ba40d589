"""One-layer instances built in layer coordinates, shared by the chen modules of §4 (``sec4_1_equilibria``,
``sec4_2_partial_truncation``).

Every flow of the §4 modules (equilibria, collapse, staircase, the classes of solutions) is the *direct*
gradient flow of the Euclidean input cost (2.26) on R^Q x O(Q) (``solvers.chen.integrate(kind="direct")``:
the gradient of the cost written through the network, nothing of Theorem 3.2 used), integrated by
Cayley-RKMK RK4 (solvers/orthogonal.py); ``chen.orbit_sign`` integrates the effective flow with either
sign of the rotation equation.  Layer coordinates u = R(x + beta), b~ = R(beta + yt); decisions D1-D9 in
``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from theorems.chen._common import random_orthogonal, rng_for


# ===========================================================================
# helpers


def _layer_instance(Q, N, seed, case):
    """One cluster built in layer coordinates: R Haar, u_i = R(x_i + beta_0) with every coordinate
    > 0 (case 'plus') or <= 0 (case 'minus'), b~_0 = R(beta_0 + yt) with positive entries (so that in
    case 'minus' the collapse beta -> -yt keeps every u_i <= 0: u_i(s) = u_i(0) - (1 - e^{-s}) b~_0).
    Returns (R, beta0, X, yt)."""
    rng = rng_for(seed)
    R = random_orthogonal(Q, rng)
    beta0 = 0.5 * rng.standard_normal(Q)
    U = 0.2 + np.abs(rng.standard_normal((Q, N)))
    if case == "minus":
        U = -U
    bt = 0.3 + np.abs(rng.standard_normal(Q))
    X = R.T @ U - beta0[:, None]
    yt = R.T @ bt - beta0
    return R, beta0, X, yt


def _traj_bt(ys, Rss, yt):
    """|beta(s) + yt| along a one-layer trajectory."""
    return np.linalg.norm(ys + yt[None, :], axis=1)
