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
