"""Shared instance generators and helpers for the chen claims.

Notation decisions (catalogue chen §5, D1-D9), recorded once for the package:

* D1 orthants: R^Q_+ = {x_i > 0} open, R^Q_- = {x_i <= 0} closed, h(0) = 0.  Then (2.15), J0perp and
  Prop 4.1 are exact; (2.14) fails only on the walls (E22).
* D2 metric on O(Q): Frobenius, R' = Omega R with Omega = -pi_-((dC/dR) R^T) (3.21)/Lemma 6.1.  The
  (1.14)/(4.1) sign -Omega R is rejected (E3).  A 1/2 Tr (Killing) normalisation would double the speed.
* D3 composition order: tau^(hi,lo) = tau^(hi) o ... o tau^(lo) as in (5.3)/(7.7).
* D4 "W^(Q+1) fixed": yt_l = (W^(Q+1))^{-1} y_l are fixed data, independent of R_Q.
* D5 (§8-9) "W_{Q+1}" is the cumulative output matrix, output bias b_{Q+1} = -W_{Q+1} b^(Q).
* D6 cluster separation: tau^(l') = id on a neighbourhood of X_l for l' < l and of tau^(l)(X_l) for
  l' > l; checked along every trajectory (:func:`solvers.chen.separation_margin`).
* D7 normalisation 1/2 sum_j 1/N_j sum_i everywhere.
* D8 "partially truncated": neither (1.21) nor (4.10) is used as a hypothesis.
* D9 Prop 4.2 constants: eta_2 := eta_1'/(1 - eta_0 - eta_1') log(1/gamma) (+ second-moment term).

Layer lists are in layer order [W_1, ..., W_L]; data points are columns (solvers/chen.py).
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import orthogonal
from solvers import xp_chen as xc
from solvers.xp import on
from theorems.claim import ParamError

EPS = float(np.finfo(float).eps)
XP = ("numpy", "cupy")   # checks written once through the array API (solvers/xp_chen.py); array-api-strict too
KINK = 1e-3      # finite differences of step <= 1e-5 (|x| <= ~10) never straddle a ReLU kink beyond this


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def random_orthogonal(Q: int, rng: np.random.Generator, det: int | None = None) -> np.ndarray:
    """Haar orthogonal matrix (QR of a Gaussian with the signs of diag(r) fixed)."""
    A = rng.standard_normal((Q, Q))
    q, r = np.linalg.qr(A)
    q = q * np.sign(np.diag(r))
    if det is not None and np.sign(np.linalg.det(q)) != det:
        q[:, 0] = -q[:, 0]
    return q


def small_rotation(Q: int, rng: np.random.Generator, angle: float) -> np.ndarray:
    """cay of a random skew generator of Frobenius norm ~ angle."""
    S = orthogonal.skew(rng.standard_normal((Q, Q)))
    nrm = np.linalg.norm(S)
    return orthogonal.cayley(angle * S / nrm) if nrm > 0 else np.eye(Q)


def _positive_frame(Q: int, m: int) -> np.ndarray:
    """m <= Q-1 unit vectors in the open positive orthant of R^Q with pairwise inner products 1/2
    (the directions from one simplex vertex to m others), with the largest smallest component found
    on a grid: u_j = p e_j + q sum_{k<m, k != j} e_k + r/sqrt(Q-m) sum_{k>=m} e_k, (p - q)^2 = 1/2."""
    U = np.zeros((Q, m))
    if m == 0:
        return U
    best, arg = -1.0, None
    for q in np.linspace(0.0, 0.6, 601):
        p = q + np.sqrt(0.5) if m > 1 else 1.0 / np.sqrt(Q)
        if m == 1:
            q = 0.0
        r2 = 1 - p * p - (m - 1) * q * q
        if r2 <= 0:
            continue
        r = np.sqrt(r2 / (Q - m))
        mn = min(p, r, q if m > 1 else np.inf)
        if mn > best:
            best, arg = mn, (p, q, r)
    p, q, r = arg
    for j in range(m):
        U[:m, j] = q
        U[j, j] = p
        U[m:, j] = r
    return U


def separated_instance(Q: int, K: int, L: int, n: int, seed: int, spread: float = 0.35,
                       distance: float = 4.0, target: float = 0.5, tilt: float = 0.15):
    """A configuration with cluster-separated truncations (D6) and partially truncated clusters.

    Cluster j (j < K <= Q) is centred at c_j = distance * e_j with n Gaussian points of standard
    deviation ``spread``; layer j < K has apex -beta_j near the mean of cluster j (so cluster j meets several sectors
    of its own layer) and a frame R_j that maps every c_i - c_j (i != j) into the open positive orthant
    (a Procrustes fit onto :func:`_positive_frame`, then a random tilt of size ``tilt``);
    target yt_j = c_j + target * (random unit vector).  Layers j >= K are idle: R = I, apex far
    below every cluster (tau = id on all data).
    Returns (clusters, yt (K, Q), betas, Rs)."""
    rng = rng_for(seed)
    C = distance * np.eye(Q)[:, :K]
    clusters = [C[:, [j]] + spread * rng.standard_normal((Q, n)) for j in range(K)]
    yt = np.empty((K, Q))
    for j in range(K):
        d = rng.standard_normal(Q)
        yt[j] = C[:, j] + target * d / np.linalg.norm(d)
    U = _positive_frame(Q, K - 1)
    betas, Rs = [], []
    for j in range(L):
        if j >= K:
            Rs.append(np.eye(Q))
            betas.append(np.full(Q, 10.0 * distance))
            continue
        others = [i for i in range(K) if i != j]
        if others:
            G = np.stack([(C[:, i] - C[:, j]) / np.linalg.norm(C[:, i] - C[:, j]) for i in others], axis=1)
            T = U
            u_, _, vt = np.linalg.svd(T @ G.T)
            R = u_ @ vt
        else:
            R = random_orthogonal(Q, rng)
        R = small_rotation(Q, rng, tilt) @ R
        Rs.append(R)
        betas.append(-(np.mean(clusters[j], axis=1) + 0.2 * spread * rng.standard_normal(Q)))
    return clusters, yt, betas, Rs


def validate_QKL(p) -> None:
    """clusters <= Q (one cluster per label direction) and clusters <= layers (one layer per cluster)."""
    if p.clusters > p.Q:
        raise ParamError(f"parameter clusters={p.clusters} must be <= Q={p.Q} (cluster centres are "
                         "distance * e_j, one per coordinate direction)")
    if p.clusters > p.layers:
        raise ParamError(f"parameter clusters={p.clusters} must be <= layers={p.layers} (cluster l is "
                         "truncated by layer l; Def 3.1)")


def _xs(xp, arrays):
    """A list of host arrays moved to the namespace ``xp`` (one list entry per array)."""
    return [on(xp, a) for a in arrays]


def _f(x) -> float:
    """A 0-d array of any backend as a Python float (the only device-to-host transfer of a check)."""
    return float(x)


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def kink_distance(Rs, betas, clusters) -> float:
    """Smallest |layer coordinate| of any point in any layer (finite differences must not straddle it)."""
    m = np.inf
    for Xj in clusters:
        Z = Xj
        for R, b in zip(Rs, betas):
            U = R @ (Z + b[:, None])
            m = min(m, float(np.min(np.abs(U))))
            Z = R.T @ cm.relu(U) - b[:, None]
    return m


def j0perp_direct(xp, R, beta, X):
    """(J0perp)_r by the chain rule through the network, not from its formula: with the target chosen so that
    v = R(beta + yt) = (1, ..., 1), the direct gradient is dC/dbeta = R^T J0perp v (d tau/d beta = -R^T D^perp R and
    D^perp sigma(u) = 0), so J0perp = R dC/dbeta.  Also the layer coordinates U."""
    Q, N = X.shape
    yt = xp.matrix_transpose(R) @ xp.ones((Q,), dtype=X.dtype) - beta
    Y = xp.broadcast_to(xc.col(yt), (Q, N))
    _, gb = xc.grad_packed([R], [beta], X, Y, xp.full((N,), 1.0 / N, dtype=X.dtype))
    return R @ gb[0], R @ (X + xc.col(beta))
