"""Chen's ReLU model in cumulative parameters: truncation maps, the Euclidean input cost, its direct
gradient, and the effective gradient-flow right-hand sides of Theorem 3.2 (printed and corrected).

Conventions (catalogue chen §1; decisions D1-D4):

* Layers are Python lists in **layer order** ``[W_1, ..., W_L]`` (not the reversed order of
  ``solvers.dln``); cumulative ``W^(l) = W_l ... W_1``, ``beta^(l) = sum_{j<=l} (W^(j))^{-1} b_j``.
* Data points are **columns**: cluster ``j`` is ``X_j`` of shape ``(Q, N_j)``; the clusters of an
  instance are packed into ``X`` (``(Q, N)``) with integer labels ``lab`` (``(N,)``) and counts ``cnt``.
* ReLU ``sigma(u) = max(u, 0)``, ``h(u) = 1 if u > 0 else 0`` (h(0) = 0).  Orthants (D1):
  ``R^Q_+ = {u_i > 0}`` open, ``R^Q_- = {u_i <= 0}`` closed.
* Aligned cumulative weights ``W^(l) = W_* R_l`` (Def 2.2): the truncation map
  ``tau_{R,beta}(x) = R^T sigma(R(x + beta)) - beta`` does not depend on ``W_*``.
* Cluster ``j`` is paired with layer ``j`` (cluster-separated truncations, Def 3.1 read as D6);
  targets ``yt[j] = (W^(Q+1))^{-1} y_j`` are fixed data (D4).
* The Euclidean input cost (2.26): ``C = 1/2 sum_j 1/N_j sum_i |I^(L)(x_ji) - yt_j|^2`` with
  ``I^(L) = tau^(L) o ... o tau^(1)`` (the *composed* cost; equal to the per-cluster cost (3.6)
  under cluster separation).
* Metric on O(Q) (D2): Frobenius; the gradient flow is ``R' = Omega R`` with
  ``Omega = -pi_-((d C/d R) R^T)`` (3.21)-(3.22), ``pi_-(A) = (A - A^T)/2``.

Effective generators (layer coordinates ``u = R(x + beta)``, ``v = R(beta + yt)``, ``r = sigma(u) - v``):

* printed (3.22):   ``Omega = mean_i [H(u_i), 1/2 (u_i v^T + v u_i^T)]``
* corrected (E1):   ``Omega = -mean_i [H(u_i), 1/2 (r_i u_i^T + u_i r_i^T)]``
                    ``      = mean_i [H(u_i), M(u_i) - 1/2 u_i u_i^T]``
* (3.19):           ``beta' = -R^T J0perp R (beta + yt)``, ``J0perp = diag(n_r / N)``,
  ``n_r = #{i : u_ir <= 0}``.

The *direct* flow differentiates the composed cost written through the network itself
(``tau = W^{-1}(sigma(W x + b) - b)`` with ``W`` a general matrix evaluated at ``W = R``) by
reverse-mode chain rule; nothing of Theorem 3.2 is used.  Kernels: ``effective_rhs`` and
``direct_rhs`` (Numba, ``f(t, y, Rs, args)``) with NumPy references ``*_numpy``, integrated by the
Cayley-RKMK scheme of :mod:`solvers.orthogonal` (:func:`integrate`: ``orthogonal.lie_rk``, one kernel
cached on disk per right-hand side; or
``orthogonal.lie_rk_numpy`` with the NumPy references); or adaptively to a tolerance by
:func:`integrate_adaptive` (Cayley-RKMK Dormand-Prince 5(4) of :mod:`solvers.liegroup`, order 5 with an
embedded error estimate; with ``walls=True`` the sector walls u_ai = 0 where the field jumps are located and no
step crosses one (:func:`effective_rhs_sided`), so the error follows the tolerance to ~1e-12: benchmarks/bench_oq.py).  :func:`flat_rhs` is the same flow as a flat ODE for
``scipy.integrate.solve_ivp``.

Reuse by other claims (Prop 4.1/4.2, the staircase, the per-layer comparison): build an instance
with :func:`pack_clusters`, integrate with :func:`integrate` (``kind`` = ``"stated"``,
``"corrected"``, ``"direct"``; ``sign=-1`` gives the (1.14)/(4.1) sign; ``freeze_R=True`` the
fixed-R flow of §4.3), read off :func:`j0perp`, :func:`omega_corrected`, :func:`cost_composed`,
:func:`separation_margin` along the returned trajectory.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import liegroup, orthogonal
from .specialise import register

__all__ = [
    "relu", "heav", "cumulative", "per_layer", "forward", "tau", "tau_general", "tau_forms", "compose",
    "cost_composed", "cost_separated", "cost_network_general", "grad_composed", "omega_direct",
    "j0perp", "dbeta_effective", "omega_stated", "omega_corrected", "omega_moments",
    "sector_moments", "separation_margin", "pack_clusters", "pack_state", "unpack_state",
    "effective_rhs", "effective_rhs_sided", "effective_rhs_numpy", "direct_rhs", "direct_rhs_numpy", "make_args",
    "integrate", "integrate_adaptive", "flat_rhs", "KINDS",
]

KINDS = {"stated": 0, "corrected": 1, "direct": 2}


# ---------------------------------------------------------------------------
# elementary maps
def relu(u):
    return np.maximum(u, 0.0)


def heav(u):
    """h(u) = 1 for u > 0, 0 for u <= 0 (h(0) = 0, eq. (1.2))."""
    return (np.asarray(u) > 0).astype(float)


def cumulative(Ws, bs):
    """(W_l, b_l)_l -> (W^(l), b^(l), beta^(l))_l, eq. (2.6); lists in layer order."""
    Wc, bc, betas = [], [], []
    W, b, beta = None, None, None
    for Wl, bl in zip(Ws, bs):
        W = Wl if W is None else Wl @ W
        b = bl if b is None else Wl @ b + bl
        beta = np.linalg.solve(W, bl) if beta is None else beta + np.linalg.solve(W, bl)
        Wc.append(W)
        bc.append(b)
        betas.append(beta)
    return Wc, bc, betas


def per_layer(Wc, betas):
    """Inverse of :func:`cumulative`: W_l = W^(l) (W^(l-1))^{-1}, b_l = W^(l)(beta^(l) - beta^(l-1))."""
    Ws, bs = [], []
    prevW, prevb = None, None
    for W, beta in zip(Wc, betas):
        Ws.append(W if prevW is None else W @ np.linalg.inv(prevW))
        bs.append(W @ (beta if prevb is None else beta - prevb))
        prevW, prevb = W, beta
    return Ws, bs


def forward(Ws, bs, X):
    """Hidden layers x^(l) = sigma(W_l x^(l-1) + b_l), l = 0..L (eq. (2.1)); columns are points."""
    out = [X]
    for W, b in zip(Ws, bs):
        out.append(relu(W @ out[-1] + b[:, None]))
    return out


def tau(R, beta, X):
    """Aligned truncation map tau_{R,beta}(x) = R^T sigma(R(x + beta)) - beta (6.2), columns."""
    return R.T @ relu(R @ (X + beta[:, None])) - beta[:, None]


def tau_general(W, beta, X):
    """tau(x) = W^{-1} sigma(W(x + beta)) - beta, the third form of (2.9), for any invertible W."""
    return np.linalg.solve(W, relu(W @ (X + beta[:, None]))) - beta[:, None]


def tau_forms(W, b, X):
    """The three printed forms of (2.9) with b = W beta: (a^{-1} o sigma o a), W^{-1}(sigma(Wx+b)-b),
    W^{-1} sigma(W(x+beta)) - beta."""
    beta = np.linalg.solve(W, b)
    a = W @ X + b[:, None]
    f1 = np.linalg.solve(W, relu(a) - b[:, None])
    f2 = np.linalg.solve(W, relu(W @ X + b[:, None]) - b[:, None])
    f3 = np.linalg.solve(W, relu(W @ (X + beta[:, None]))) - beta[:, None]
    return f1, f2, f3


def compose(Ws, betas, X, upto=None, general=False):
    """I^(l)(X) = tau^(l) o ... o tau^(1)(X) (2.16) with l = upto (default: all layers).
    ``general=True`` uses the network form W^{-1} sigma(W(x+beta)) - beta (W any invertible)."""
    Z = X
    for W, beta in list(zip(Ws, betas))[: (len(Ws) if upto is None else upto)]:
        Z = tau_general(W, beta, Z) if general else tau(W, beta, Z)
    return Z


# ---------------------------------------------------------------------------
# packing
def pack_clusters(clusters):
    """[X_1, ..., X_K] (each (Q, N_j)) -> (X (Q, N), lab (N,) int64, cnt (K,) float)."""
    X = np.ascontiguousarray(np.concatenate(clusters, axis=1), dtype=np.float64)
    lab = np.concatenate([np.full(c.shape[1], j, dtype=np.int64) for j, c in enumerate(clusters)])
    cnt = np.array([c.shape[1] for c in clusters], dtype=np.float64)
    return X, lab, cnt


def pack_state(betas, Rs):
    """(list of beta, list of R) -> (y = concatenated betas, Rs (L, Q, Q))."""
    return (np.ascontiguousarray(np.concatenate(betas), dtype=np.float64),
            np.ascontiguousarray(np.array(Rs, dtype=np.float64)))


def unpack_state(y, Rs):
    L, Q = Rs.shape[0], Rs.shape[1]
    return [y[k * Q:(k + 1) * Q] for k in range(L)], [Rs[k] for k in range(L)]


# ---------------------------------------------------------------------------
# costs and the direct gradient
def cost_composed(Rs, betas, clusters, yt, general=False):
    """The Euclidean input cost (2.26): 1/2 sum_j mean_i |I^(L)(x_ji) - yt_j|^2."""
    c = 0.0
    for j, Xj in enumerate(clusters):
        Z = compose(Rs, betas, Xj, general=general)
        c += 0.5 * np.mean(np.sum((Z - yt[j][:, None]) ** 2, axis=0))
    return float(c)


def cost_separated(Rs, betas, clusters, yt):
    """The per-cluster cost (3.6): 1/2 sum_l mean_i |tau^(l)(x_li) - yt_l|^2 (cluster l <-> layer l)."""
    c = 0.0
    for j, Xj in enumerate(clusters):
        Z = tau(Rs[j], betas[j], Xj)
        c += 0.5 * np.mean(np.sum((Z - yt[j][:, None]) ** 2, axis=0))
    return float(c)


def cost_network_general(Ws, betas, clusters, yt):
    """The composed cost with general (not necessarily orthogonal) cumulative matrices W^(l)."""
    return cost_composed(Ws, betas, clusters, yt, general=True)


def grad_composed(Rs, betas, clusters, yt):
    """Euclidean gradient of :func:`cost_network_general` in (W^(l), beta^(l)) at W^(l) = R_l, by the
    chain rule through tau = W^{-1} sigma(W(z + beta)) - beta (no use of Theorem 3.2).
    Returns (gW list, gbeta list)."""
    X, lab, cnt = pack_clusters(clusters)
    yt = np.asarray(yt, dtype=float)
    return _grad_packed(Rs, betas, X, yt[lab].T, 1.0 / cnt[lab])


def _grad_packed(Rs, betas, X, Y, w):
    """:func:`grad_composed` on all points at once: X (Q, N) data, Y (Q, N) each point's target, w (N,)
    each point's weight 1/N_j.  The cost is a weighted sum over points, so the chain rule runs on the
    stacked columns (one pass per layer instead of one per cluster and layer)."""
    L = len(Rs)
    Winv = [np.linalg.inv(R) for R in Rs]
    zs, us = [X], []
    for k in range(L):
        u = Rs[k] @ (zs[-1] + betas[k][:, None])
        us.append(u)
        zs.append(Winv[k] @ relu(u) - betas[k][:, None])
    g = (zs[-1] - Y) * w
    gW, gb = [None] * L, [None] * L
    for k in range(L - 1, -1, -1):
        gs = Winv[k].T @ g                       # dC/ds
        gu = heav(us[k]) * gs                    # dC/du
        # d(W^{-1})[dW] = -W^{-1} dW W^{-1};  du = dW (z + beta)
        gW[k] = -Winv[k].T @ g @ relu(us[k]).T @ Winv[k].T + gu @ (zs[k] + betas[k][:, None]).T
        g2 = Rs[k].T @ gu
        gb[k] = np.sum(g2 - g, axis=1)
        g = g2
    return gW, gb


def omega_direct(Rs, betas, clusters, yt):
    """Direct generators Omega_l = -pi_-((dC/dW^(l)) R_l^T) and beta-velocities -dC/dbeta^(l)."""
    gW, gb = grad_composed(Rs, betas, clusters, yt)
    return [-orthogonal.skew(G @ R.T) for G, R in zip(gW, Rs)], [-g for g in gb]


# ---------------------------------------------------------------------------
# effective quantities of Theorem 3.2 / Corollary 3.5 (one cluster, one layer)
def _layer_coords(R, beta, X, yt):
    U = R @ (X + beta[:, None])
    v = R @ (beta + yt)
    return U, v


def j0perp(R, beta, X):
    """J0perp = diag(n_r / N), n_r = #{i : (R(x_i + beta))_r <= 0} (3.39)-(3.40); returns the diagonal."""
    U = R @ (X + beta[:, None])
    return np.mean(U <= 0, axis=1).astype(float)


def dbeta_effective(R, beta, X, yt):
    """(3.19): beta' = -R^T J0perp R (beta + yt)."""
    return -R.T @ (j0perp(R, beta, X) * (R @ (beta + yt)))


def _comm_diag(Hcols, M):
    """mean_i [H_i, M_i] with H_i = diag(Hcols[:, i]) and M_i stacked (N, Q, Q)."""
    hi = Hcols.T[:, :, None]
    hj = Hcols.T[:, None, :]
    return np.mean((hi - hj) * M, axis=0)


def omega_stated(R, beta, X, yt):
    """Printed (3.22)-(3.23): Omega = mean_i [H(u_i), 1/2 (u_i v^T + v u_i^T)]."""
    U, v = _layer_coords(R, beta, X, yt)
    M = 0.5 * (U.T[:, :, None] * v[None, None, :] + v[None, :, None] * U.T[:, None, :])
    return _comm_diag(heav(U), M)


def omega_corrected(R, beta, X, yt):
    """Corrected (E1): Omega = -mean_i [H(u_i), 1/2 (r_i u_i^T + u_i r_i^T)], r = sigma(u) - v."""
    U, v = _layer_coords(R, beta, X, yt)
    Rr = relu(U) - v[:, None]
    M = 0.5 * (Rr.T[:, :, None] * U.T[:, None, :] + U.T[:, :, None] * Rr.T[:, None, :])
    return -_comm_diag(heav(U), M)


def sector_moments(R, beta, X):
    """Sector moments of mu o a^{-1} (Defs 3.3-3.4): {nu: (J0_nu mass, J1_nu (Q,), J2_nu (Q,Q))}
    over the occupied sectors nu in {0,1}^Q (tuples)."""
    U = R @ (X + beta[:, None])
    N = U.shape[1]
    out = {}
    for i in range(N):
        nu = tuple(int(x) for x in (U[:, i] > 0))
        m, J1, J2 = out.get(nu, (0.0, np.zeros(U.shape[0]), np.zeros((U.shape[0],) * 2)))
        out[nu] = (m + 1.0 / N, J1 + U[:, i] / N, J2 + np.outer(U[:, i], U[:, i]) / N)
    return out


def omega_moments(R, beta, X, yt, form="corrected"):
    """Corollary 3.5 through sector moments.  ``form='printed'``: (3.38) as printed,
    (nu_i - nu_j)((J1)_i v_j + v_i (J1)_j); ``'corrected'``: with the factor 1/2 and the
    second-moment term -1/2 (J2)_ij (E2)."""
    v = R @ (beta + yt)
    Q = R.shape[0]
    Om = np.zeros((Q, Q))
    for nu, (m, J1, J2) in sector_moments(R, beta, X).items():
        d = np.subtract.outer(np.array(nu, float), np.array(nu, float))
        S = np.outer(J1, v) + np.outer(v, J1)
        if form == "printed":
            Om += d * S
        else:
            Om += d * (0.5 * S - 0.5 * J2)
    return Om


def separation_margin(Rs, betas, clusters):
    """D6 margin of cluster-separated truncations: the smallest layer coordinate
    min_r (R_l'(z + beta_l'))_r over clusters l, layers l' != l, where z = X_l for l' < l and
    z = tau^(l)(X_l) for l' > l (layers past the last cluster: every cluster's image).  Positive
    means every other layer acts as the identity on a neighbourhood; then I^(L)(X_l) = tau^(l)(X_l)."""
    L = len(Rs)
    m = np.inf
    for l, Xl in enumerate(clusters):
        img = tau(Rs[l], betas[l], Xl) if l < L else Xl
        for k in range(L):
            if k == l:
                continue
            z = Xl if k < l else img
            m = min(m, float(np.min(Rs[k] @ (z + betas[k][:, None]))))
    return m


# ---------------------------------------------------------------------------
# right-hand sides: NumPy references
def make_args(clusters, yt, kind="corrected", sign=1.0, freeze_R=False):
    """Kernel arguments (X, lab, cnt, yt, mode, sign, freeze) for :func:`effective_rhs`/:func:`direct_rhs`."""
    X, lab, cnt = pack_clusters(clusters)
    if kind not in KINDS:
        raise ValueError(f"unknown flow kind {kind!r} (known: {', '.join(KINDS)})")
    return (X, lab, cnt, np.ascontiguousarray(yt, dtype=np.float64), np.int64(KINDS[kind]),
            float(sign), np.int64(1 if freeze_R else 0))


def effective_rhs_numpy(t, y, Rs, X, lab, cnt, yt, mode, sign, freeze):
    """Theorem 3.2: beta_l' = (3.19), R_l' = sign * Omega_l R_l with Omega printed (mode 0) or
    corrected (mode 1); layers without a cluster (l >= K) do not move."""
    L, Q = Rs.shape[0], Rs.shape[1]
    dy = np.zeros(L * Q)
    A = np.zeros((L, Q, Q))
    for k in range(min(L, len(cnt))):
        Xk = X[:, lab == k]
        beta = y[k * Q:(k + 1) * Q]
        dy[k * Q:(k + 1) * Q] = dbeta_effective(Rs[k], beta, Xk, yt[k])
        if not freeze:
            Om = omega_stated(Rs[k], beta, Xk, yt[k]) if mode == 0 else omega_corrected(Rs[k], beta, Xk, yt[k])
            A[k] = sign * Om
    return dy, A


def direct_rhs_numpy(t, y, Rs, X, lab, cnt, yt, mode, sign, freeze):
    """Direct gradient flow of the composed cost (2.26): beta' = -dC/dbeta, R' = -pi_-(dC/dW R^T) R."""
    L, Q = Rs.shape[0], Rs.shape[1]
    betas, Rl = unpack_state(y, Rs)
    gW, gb = _grad_packed(Rl, betas, X, yt[lab].T, 1.0 / cnt[lab])
    Oms, dbs = [-orthogonal.skew(G @ R.T) for G, R in zip(gW, Rl)], [-g for g in gb]
    A = np.zeros((L, Q, Q)) if freeze else sign * np.array(Oms)
    return np.concatenate(dbs), A


# ---------------------------------------------------------------------------
# right-hand sides: Numba kernels
#: the ``side`` argument of :func:`_effective_core` when the sides are read off the signs
_NO_SIDE = np.zeros((1, 1))


@njit(cache=True)
def _effective_core(y, Rs, args, side, sided):
    """Theorem 3.2's field (printed mode 0 / corrected mode 1): per point the layer coordinates u, the sector
    indicators hv[a] = h(u_a) = [u_a > 0], then sigma(u_a) = hv[a] u_a, the count
    #{u_a <= 0} += 1 - hv[a] and the commutator terms of the pairs with hv[a] != hv[b] (the same operations as the
    loop before the sided variant existed: results bitwise equal).  ~85 us per call at Q = 30, L = K = 3, 20 points
    per cluster: the O(N Q^2) pair loop dominates.  ``sided``: the indicators are read from ``side[a, i]`` instead
    (the field of one side of every wall, continued past it: :func:`effective_rhs_sided`; same operations
    otherwise).  ``side`` is not read when ``sided`` is False."""
    X, lab, cnt, yt, mode, sign, freeze = args
    L, Q = Rs.shape[0], Rs.shape[1]
    K = min(L, cnt.shape[0])
    dy = np.zeros(L * Q)
    A = np.zeros((L, Q, Q))
    u = np.empty(Q)
    v = np.empty(Q)
    hv = np.empty(Q)
    jp = np.empty(Q)
    for k in range(K):
        R = Rs[k]
        beta = y[k * Q:(k + 1) * Q]
        for a in range(Q):
            s = 0.0
            for b in range(Q):
                s += R[a, b] * (beta[b] + yt[k, b])
            v[a] = s
            jp[a] = 0.0
        Om = np.zeros((Q, Q))
        for i in range(X.shape[1]):
            if lab[i] != k:
                continue
            for a in range(Q):
                s = 0.0
                for b in range(Q):
                    s += R[a, b] * (X[b, i] + beta[b])
                u[a] = s
                hv[a] = side[a, i] if sided else (1.0 if s > 0.0 else 0.0)
                jp[a] += 1.0 - hv[a]
            for a in range(Q):
                ha = hv[a]
                for b in range(Q):
                    hb = hv[b]
                    if ha == hb:
                        continue
                    if mode == 0:
                        m = 0.5 * (u[a] * v[b] + v[a] * u[b])
                        Om[a, b] += (ha - hb) * m
                    else:
                        ra = ha * u[a] - v[a]
                        rb = hb * u[b] - v[b]
                        m = 0.5 * (ra * u[b] + u[a] * rb)
                        Om[a, b] -= (ha - hb) * m
        n = cnt[k]
        for a in range(Q):
            jv = jp[a] / n * v[a]
            for b in range(Q):
                dy[k * Q + b] -= R[a, b] * jv
        if freeze == 0:
            for a in range(Q):
                for b in range(Q):
                    A[k, a, b] = sign * Om[a, b] / n
    return dy, A


@register
@njit(cache=True)
def effective_rhs(t, y, Rs, args):
    """Theorem 3.2 (3.19) and (3.22) printed (mode 0) or corrected (E1, mode 1), each point's sector read off the
    sign of its layer coordinates (h(0) = 0); layers without a cluster do not move."""
    return _effective_core(y, Rs, args, _NO_SIDE, False)


@register
@njit(cache=True)
def effective_rhs_sided(t, y, Rs, args, side):
    """:func:`effective_rhs` with the sector of each point held fixed: ``side[a, i]`` (1.0 or 0.0) replaces
    ``h(u_ai)`` (and ``sigma(u_ai) = side * u_ai``, ``#{u_ai <= 0}`` counts ``1 - side``), so the field is the
    polynomial in (u, v) of one sector on a neighbourhood of its walls (smooth there); with ``side = h(u)`` it
    is :func:`effective_rhs` (same operations).  For :func:`solvers.liegroup.lie_dopri5_walls`."""
    return _effective_core(y, Rs, args, side, True)


@register
@njit(cache=True)
def direct_rhs(t, y, Rs, args):
    X, lab, cnt, yt, mode, sign, freeze = args
    L, Q = Rs.shape[0], Rs.shape[1]
    gW = np.zeros((L, Q, Q))
    gb = np.zeros((L, Q))
    Winv = np.empty((L, Q, Q))
    for k in range(L):
        Winv[k] = np.linalg.inv(Rs[k])
    zs = np.empty((L + 1, Q))
    us = np.empty((L, Q))
    sv = np.empty(Q)
    for i in range(X.shape[1]):
        j = lab[i]
        zs[0] = X[:, i]
        for k in range(L):
            us[k] = Rs[k] @ (zs[k] + y[k * Q:(k + 1) * Q])
            for a in range(Q):
                sv[a] = max(us[k, a], 0.0)
            zs[k + 1] = Winv[k] @ sv - y[k * Q:(k + 1) * Q]
        g = (zs[L] - yt[j]) / cnt[j]
        for k in range(L - 1, -1, -1):
            gs = Winv[k].T @ g
            gu = np.empty(Q)
            for a in range(Q):
                gu[a] = gs[a] if us[k, a] > 0.0 else 0.0
                sv[a] = max(us[k, a], 0.0)
            p = Winv[k].T @ g
            q = Winv[k] @ sv      # (s^T W^{-T})^T
            zb = zs[k] + y[k * Q:(k + 1) * Q]
            for a in range(Q):
                for b in range(Q):
                    gW[k, a, b] += -p[a] * q[b] + gu[a] * zb[b]
            g2 = Rs[k].T @ gu
            for a in range(Q):
                gb[k, a] += g2[a] - g[a]
            g = g2
    dy = np.empty(L * Q)
    A = np.zeros((L, Q, Q))
    for k in range(L):
        for a in range(Q):
            dy[k * Q + a] = -gb[k, a]
        if freeze == 0:
            P = gW[k] @ Rs[k].T
            for a in range(Q):
                for b in range(Q):
                    A[k, a, b] = -sign * 0.5 * (P[a, b] - P[b, a])
    return dy, A


def integrate(kind, betas0, Rs0, clusters, yt, h, n, backend="numba", every=1, sign=1.0,
              freeze_R=False, method="rk4"):
    """Integrate the ``kind`` flow (``stated``/``corrected`` effective, or ``direct``) by Cayley-RKMK
    with ``n`` steps of size ``h``; returns (ys (n//every+1, L*Q), Rss (n//every+1, L, Q, Q))."""
    y0, R0 = pack_state(betas0, Rs0)
    y0, R0 = orthogonal.check_state(y0, R0, h, n)
    args = make_args(clusters, yt, kind, sign, freeze_R)
    if every <= 0:
        raise ValueError("every must be positive")
    if backend == "numba":
        f = direct_rhs if kind == "direct" else effective_rhs
        _, _, ys, Rss = orthogonal.lie_rk(f, 0.0, y0, R0, h, n, args, method=method, every=every)
        return ys, Rss
    f = direct_rhs_numpy if kind == "direct" else effective_rhs_numpy
    _, _, ys, Rss = orthogonal.lie_rk_numpy(f, 0.0, y0, R0, h, n, args, method=method, every=every)
    return ys, Rss


def integrate_adaptive(kind, betas0, Rs0, clusters, yt, T, rtol=1e-10, atol=1e-12, t_eval=None, backend="numba",
                       sign=1.0, freeze_R=False, max_steps=10 ** 6, walls=False):
    """Integrate the ``kind`` flow on [0, T] by adaptive Cayley-RKMK Dormand-Prince 5(4)
    (:func:`solvers.liegroup.lie_dopri5`; error per step <= atol + rtol |z| in the entries of (beta, R)).
    ``walls=True`` (effective flows, Numba): the sector walls u_ai = 0 are located and no step crosses one
    (:func:`solvers.liegroup.lie_dopri5_walls` with :func:`effective_rhs_sided`), so the error follows the
    tolerance down to ~1e-12 instead of stalling where the field jumps.
    Returns a :class:`solvers.liegroup.LieResult` (states at ``t_eval``, default ``[0, T]``, in ``ys``/``Rss``)."""
    y0, R0 = pack_state(betas0, Rs0)
    args = make_args(clusters, yt, kind, sign, freeze_R)
    if walls:
        if kind == "direct" or backend != "numba":
            raise ValueError("walls=True needs an effective flow (kind 'stated' or 'corrected') and backend 'numba'")
        X, lab = args[0], args[1]
        return liegroup.lie_dopri5_walls(effective_rhs_sided, 0.0, y0, R0, T, (X, lab), args, rtol=rtol, atol=atol,
                                         t_eval=t_eval, max_steps=max_steps)
    if backend == "numba":
        f = direct_rhs if kind == "direct" else effective_rhs
        return liegroup.lie_dopri5(f, 0.0, y0, R0, T, args, rtol=rtol, atol=atol, t_eval=t_eval,
                                   max_steps=max_steps)
    f = direct_rhs_numpy if kind == "direct" else effective_rhs_numpy
    return liegroup.lie_dopri5_numpy(f, 0.0, y0, R0, T, args, rtol=rtol, atol=atol, t_eval=t_eval,
                                     max_steps=max_steps)


def flat_rhs(kind, clusters, yt, L, Q, sign=1.0, freeze_R=False):
    """The same flow as an ODE on the flat vector z = (beta, vec R) in R^{LQ + LQ^2} (no group structure):
    ``g(t, z) = (f_y, vec(A R))`` through the Numba right-hand side, for ``scipy.integrate.solve_ivp``."""
    args = make_args(clusters, yt, kind, sign, freeze_R)
    f = direct_rhs if kind == "direct" else effective_rhs
    m = L * Q

    def g(t, z):
        Rs = np.ascontiguousarray(z[m:].reshape(L, Q, Q))
        dy, A = f(t, np.ascontiguousarray(z[:m]), Rs, args)
        return np.concatenate([dy, np.matmul(A, Rs).ravel()])
    return g
