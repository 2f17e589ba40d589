"""Chen's ReLU model through the array API: the maps of :mod:`solvers.chen` (cumulative parameters, the
network's forward pass, the truncation maps and their compositions, the costs, the effective generators)
written once for NumPy, array-api-strict and CuPy.

The arrays carry optional leading batch axes: a layer matrix is ``(..., Q, Q)``, a bias ``(..., Q)``, data
``(..., Q, N)`` (points are columns, as in :mod:`solvers.chen`).  Only standard array-API calls are used
(``xp.linalg.solve`` of a vector right-hand side is written as a one-column solve, because the standard
treats a 1-D right-hand side as a single vector only when it is not batched).  Scalars come back as
0-d arrays (or ``(...,)`` arrays); the caller decides when to bring them to the host.
"""
from __future__ import annotations

from .xp import namespace

__all__ = ["relu", "heav", "col", "solve_vec", "cumulative", "per_layer", "forward", "tau", "tau_general",
           "tau_forms", "compose", "sq_cost", "cost_composed", "cost_separated", "max_abs"]


def relu(u):
    xp = namespace(u)
    return xp.maximum(u, 0.0)


def heav(u):
    """h(u) = 1 for u > 0, 0 for u <= 0 (h(0) = 0), as float64."""
    xp = namespace(u)
    return xp.astype(u > 0, xp.float64)


def col(b):
    """A bias (..., Q) as a column (..., Q, 1) that broadcasts against data (..., Q, N)."""
    return namespace(b).expand_dims(b, axis=-1)


def solve_vec(W, b):
    """W^{-1} b for W (..., Q, Q), b (..., Q), batched or not."""
    xp = namespace(W, b)
    return xp.linalg.solve(W, col(b))[..., 0]


def max_abs(A):
    """max |A| over all entries (a 0-d array)."""
    xp = namespace(A)
    return xp.max(xp.abs(A))


def cumulative(Ws, bs):
    """(W_l, b_l)_l -> (W^(l), b^(l), beta^(l))_l, eq. (2.6); lists in layer order (as solvers.chen)."""
    Wc, bc, betas = [], [], []
    W = b = beta = None
    for Wl, bl in zip(Ws, bs):
        W = Wl if W is None else Wl @ W
        b = bl if b is None else (Wl @ col(b))[..., 0] + bl
        s = solve_vec(W, bl)
        beta = s if beta is None else beta + s
        Wc.append(W)
        bc.append(b)
        betas.append(beta)
    return Wc, bc, betas


def per_layer(Wc, betas):
    """Inverse of :func:`cumulative`: W_l = W^(l) (W^(l-1))^{-1}, b_l = W^(l)(beta^(l) - beta^(l-1))."""
    xp = namespace(*Wc)
    Ws, bs = [], []
    prevW = prevb = None
    for W, beta in zip(Wc, betas):
        Ws.append(W if prevW is None else W @ xp.linalg.inv(prevW))
        bs.append((W @ col(beta if prevb is None else beta - prevb))[..., 0])
        prevW, prevb = W, beta
    return Ws, bs


def forward(Ws, bs, X):
    """Hidden layers x^(l) = sigma(W_l x^(l-1) + b_l), l = 0..L (eq. (2.1)); columns are points."""
    out = [X]
    for W, b in zip(Ws, bs):
        out.append(relu(W @ out[-1] + col(b)))
    return out


def tau(R, beta, X):
    """Aligned truncation map tau_{R,beta}(x) = R^T sigma(R(x + beta)) - beta (6.2), columns."""
    xp = namespace(R, X)
    return xp.matrix_transpose(R) @ relu(R @ (X + col(beta))) - col(beta)


def tau_general(W, beta, X):
    """tau(x) = W^{-1} sigma(W(x + beta)) - beta, the third form of (2.9), for any invertible W."""
    xp = namespace(W, X)
    return xp.linalg.solve(W, relu(W @ (X + col(beta)))) - col(beta)


def tau_forms(W, b, X):
    """The three printed forms of (2.9) with b = W beta (as solvers.chen.tau_forms)."""
    xp = namespace(W, X)
    beta = solve_vec(W, b)
    a = W @ X + col(b)
    f1 = xp.linalg.solve(W, relu(a) - col(b))
    f2 = xp.linalg.solve(W, relu(W @ X + col(b)) - col(b))
    f3 = xp.linalg.solve(W, relu(W @ (X + col(beta)))) - col(beta)
    return f1, f2, f3


def compose(Ws, betas, X, upto=None, general=False):
    """I^(l)(X) = tau^(l) o ... o tau^(1)(X) (2.16) with l = upto (default: all layers)."""
    Z = X
    n = len(Ws) if upto is None else upto
    for W, beta in list(zip(Ws, betas))[:n]:
        Z = tau_general(W, beta, Z) if general else tau(W, beta, Z)
    return Z


def sq_cost(Z, y):
    """1/2 mean_i |z_i - y|^2 over the columns of Z (..., Q, N), target y (..., Q)."""
    xp = namespace(Z, y)
    return 0.5 * xp.mean(xp.sum((Z - col(y)) ** 2, axis=-2), axis=-1)


def cost_composed(Rs, betas, clusters, yt, general=False):
    """The Euclidean input cost (2.26): 1/2 sum_j mean_i |I^(L)(x_ji) - yt_j|^2 (yt (K, Q))."""
    c = 0.0
    for j, Xj in enumerate(clusters):
        c = c + sq_cost(compose(Rs, betas, Xj, general=general), yt[j, ...])
    return c


def cost_separated(Rs, betas, clusters, yt):
    """The per-cluster cost (3.6): 1/2 sum_l mean_i |tau^(l)(x_li) - yt_l|^2 (cluster l <-> layer l)."""
    c = 0.0
    for j, Xj in enumerate(clusters):
        c = c + sq_cost(tau(Rs[j], betas[j], Xj), yt[j, ...])
    return c


# ---------------------------------------------------------------------------
# the direct gradient and the effective generators of one layer (Theorem 3.2, Corollary 3.5)
def skew(A):
    """pi_-(A) = (A - A^T)/2, batched over leading axes."""
    return 0.5 * (A - namespace(A).matrix_transpose(A))


def grad_packed(Rs, betas, X, Y, w):
    """solvers.chen._grad_packed through the array API: the Euclidean gradient of the composed cost
    sum_i w_i/2 |I^(L)(x_i) - y_i|^2 in (W^(l), beta^(l)) at W^(l) = R_l, by the chain rule through
    tau = W^{-1} sigma(W(z + beta)) - beta.  X, Y (Q, N) data and targets, w (N,) weights."""
    xp = namespace(X, Y)
    T = xp.matrix_transpose
    L = len(Rs)
    Winv = [xp.linalg.inv(R) for R in Rs]
    zs, us = [X], []
    for k in range(L):
        u = Rs[k] @ (zs[-1] + col(betas[k]))
        us.append(u)
        zs.append(Winv[k] @ relu(u) - col(betas[k]))
    g = (zs[-1] - Y) * w[None, :]
    gW, gb = [None] * L, [None] * L
    for k in range(L - 1, -1, -1):
        gu = heav(us[k]) * (T(Winv[k]) @ g)
        gW[k] = -T(Winv[k]) @ g @ T(relu(us[k])) @ T(Winv[k]) + gu @ T(zs[k] + col(betas[k]))
        g2 = T(Rs[k]) @ gu
        gb[k] = xp.sum(g2 - g, axis=1)
        g = g2
    return gW, gb


def omega_direct1(R, beta, X, yt):
    """The direct generator -pi_-((dC/dW) R^T) of one layer and one cluster (solvers.chen.omega_direct)."""
    xp = namespace(R, X)
    N = X.shape[1]
    gW, _ = grad_packed([R], [beta], X, xp.broadcast_to(col(yt), X.shape), xp.full((N,), 1.0 / N, dtype=xp.float64))
    return -skew(gW[0] @ xp.matrix_transpose(R))


def omega_pointwise(R, beta, X, yt, form="corrected", w=None):
    """sum_i w_i [H(u_i), M_i] (w = 1/N by default): printed (3.22) M = 1/2 (u v^T + v u^T) (form 'stated'),
    or the corrected (E1) -1/2 (r u^T + u r^T), r = sigma(u) - v (solvers.chen.omega_stated/omega_corrected)."""
    xp = namespace(R, X)
    U = R @ (X + col(beta))
    v = (R @ col(beta + yt))[:, 0]
    N = X.shape[1]
    w = xp.full((N,), 1.0 / N, dtype=xp.float64) if w is None else w
    Ut = U.T                                                     # (N, Q)
    if form == "stated":
        M = 0.5 * (Ut[:, :, None] * v[None, None, :] + v[None, :, None] * Ut[:, None, :])
        sgn = 1.0
    else:
        Rr = (relu(U) - col(v)).T
        M = 0.5 * (Rr[:, :, None] * Ut[:, None, :] + Ut[:, :, None] * Rr[:, None, :])
        sgn = -1.0
    H = heav(Ut)
    return sgn * xp.sum(w[:, None, None] * (H[:, :, None] - H[:, None, :]) * M, axis=0)


def sector_onehot(U):
    """The sectors of the points (columns of U (Q, N)): E (N, 2^Q), E[i, s] = 1 iff the pattern h(u_i) has
    binary code s (bit r = coordinate r), and the patterns nu (Q, 2^Q) of all sectors."""
    xp = namespace(U)
    Q = U.shape[0]
    S = 2 ** Q
    pw = xp.asarray([2.0 ** r for r in range(Q)], dtype=xp.float64)
    codes = xp.sum(heav(U) * pw[:, None], axis=0)                                  # (N,), exact integers
    s = xp.arange(S, dtype=xp.float64)
    E = xp.astype(codes[:, None] == s[None, :], xp.float64)
    nu = xp.asarray([[float((k >> r) & 1) for k in range(S)] for r in range(Q)], dtype=xp.float64)
    return E, nu


def omega_moments(R, beta, X, yt, form="corrected"):
    """Corollary 3.5 through the sector moments J1_nu = 1/N sum_{i in nu} u_i, J2_nu = 1/N sum_{i in nu} u_i u_i^T
    (solvers.chen.omega_moments, with the sectors as a one-hot matrix instead of a dict: empty sectors
    have zero moments and add nothing).  Returns (Omega, number of occupied sectors as a 0-d array)."""
    xp = namespace(R, X)
    U = R @ (X + col(beta))
    v = (R @ col(beta + yt))[:, 0]
    N = X.shape[1]
    E, nu = sector_onehot(U)
    J1 = U @ E / N                                               # (Q, S)
    J2 = (U[:, None, :] * U[None, :, :]) @ E / N                 # (Q, Q, S)
    d = nu[:, None, :] - nu[None, :, :]                          # (Q, Q, S): nu_i - nu_j
    Sm = J1[:, None, :] * v[None, :, None] + v[:, None, None] * J1[None, :, :]
    term = d * Sm if form == "printed" else d * (0.5 * Sm - 0.5 * J2)
    return xp.sum(term, axis=-1), xp.sum(xp.astype(xp.sum(E, axis=0) > 0, xp.int64))
