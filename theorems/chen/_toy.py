"""Shared by the chen modules of §8-9 (``sec8_collapsed_data``, ``sec8_1_propagators``,
``sec8_2_conservation_laws``, ``sec9_clustered_data``): the network's standard cost (2.22) in per-layer
parameters, the collapsed instance of §8 and its network, and the bilinear toy (8.5)-(8.7) with its DOP853
integrator (relative tolerance ``RTOL``).

D5: "W_{Q+1}" of §8-9 is the cumulative output matrix W^(Q+1); output bias b_{Q+1} = -W_{Q+1} b^(Q).
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from solvers import chen as cm
from theorems.claim import Param, ParamError
from theorems.chen._common import random_orthogonal, rng_for


RTOL = 1e-11          # DOP853 relative tolerance of every toy integration below


# ===========================================================================
# network helpers (per-layer parameters, layer order)
def _network_output(Ws, bs, Wout, bout, X):
    return Wout @ cm.forward(Ws, bs, X)[-1] + bout[:, None]


def _standard_cost(Ws, bs, Wout, bout, clusters, Y):
    """(2.22): 1/2 sum_j 1/N_j sum_i |x^(L+1)_{j,i} - y_j|^2, labels y_j = columns of Y."""
    return float(sum(0.5 * np.mean(np.sum((_network_output(Ws, bs, Wout, bout, Xj) - Y[:, [j]]) ** 2, axis=0))
                     for j, Xj in enumerate(clusters)))


# ===========================================================================
# S8a (E23)
def _collapsed_instance(Q, n, seed):
    """Q = L layers, cluster j collapsed by layer j and untouched by every other layer (Q = 2 construction
    generalised: R_j = -I for j >= 2 ... is not general; we use the exact layer-coordinate construction):
    layer j has R_j Haar and apex -beta_j; cluster j = points with R_j(x + beta_j) <= -0.2 componentwise,
    every other layer k sees cluster j (for k < j) or the point -beta_j (for k > j) strictly positive.
    Built by rejection over random apexes far apart.  Returns (Rs, betas, clusters) or None."""
    rng = rng_for(seed)
    for _ in range(200):
        Rs = [random_orthogonal(Q, rng) for _ in range(Q)]
        betas = [3.0 * rng.standard_normal(Q) for _ in range(Q)]
        clusters = []
        for j in range(Q):
            U = -0.2 - 0.3 * np.abs(rng.standard_normal((Q, n)))
            clusters.append(Rs[j].T @ U - betas[j][:, None])
        ok = True
        for j in range(Q):
            for k in range(Q):
                if k == j:
                    continue
                z = clusters[j] if k < j else -betas[j][:, None]
                if np.min(Rs[k] @ (z + betas[k][:, None])) <= 0.05:
                    ok = False
        if ok:
            return Rs, betas, clusters
    return None


def _to_network(Rs, betas, seed):
    """Aligned cumulative W^(l) = D_l R_l (random positive diagonal D_l) -> per-layer (W_l, b_l)."""
    rng = rng_for(seed + 17)
    Wc = [np.diag(0.5 + rng.random(R.shape[0])) @ R for R in Rs]
    return cm.per_layer(Wc, betas) + (Wc,)


# ===========================================================================
# the bilinear toy (8.5)-(8.7): C = 1/2 ||W B + Y||_F^2, B' = -W^T E, W' = -E B^T, E = W B + Y
def _toy_rhs(Q):
    def f(t, z):
        W, B, Y = z[:Q * Q].reshape(Q, Q), z[Q * Q:2 * Q * Q].reshape(Q, Q), z[2 * Q * Q:].reshape(Q, Q)
        E = W @ B + Y
        return np.concatenate([(-E @ B.T).ravel(), (-W.T @ E).ravel(), np.zeros(Q * Q)])
    return f


def _toy_solve(W0, B0, Y, T, n_out=101, extra=None):
    Q = W0.shape[0]
    z0 = np.concatenate([W0.ravel(), B0.ravel(), Y.ravel()])
    ts = np.linspace(0, T, n_out)
    sol = solve_ivp(_toy_rhs(Q), (0, T), z0, method="DOP853", rtol=RTOL, atol=RTOL * 1e-2, t_eval=ts)
    Ws = sol.y[:Q * Q].T.reshape(-1, Q, Q)
    Bs = sol.y[Q * Q:2 * Q * Q].T.reshape(-1, Q, Q)
    return ts, Ws, Bs


def _toy_params(extra=()):
    return [Param.int("Q", 3, 1, 6, "dimension", search=(1, 4)),
            Param.seed("seed of W(0), B(0), Y"),
            Param.float("T", 4.0, 0.1, 10.0, "time horizon"), *extra]


_TOY_MATRICES = ("W0", "B0", "Y")


def _toy_matrix_params():
    """W(0), B(0), Y as matrix parameters, for claims that quantify over the toy's states (entries bounded by 2:
    the toy flow's stiffness grows with |B|^2 + |W|^2)."""
    return [Param.matrix(n, None, f"{what} (Q x Q) of your own; drawn from the seed when omitted", shape=("Q", "Q"),
                         bound=2.0, families=("gaussian", "diagonal", "identity_like", "symmetric", "orthogonal",
                                              "near_singular", "rank_deficient", "seed"))
            for n, what in zip(_TOY_MATRICES, ("W(0)", "B(0)", "the labels Y"))]


def _validate_toy_matrices(p):
    shapes = {n: np.shape(p[n]) for n in _TOY_MATRICES if p.get(n) is not None}
    for n, sh in shapes.items():
        if len(sh) != 2 or sh[0] != sh[1]:
            raise ParamError(f"parameter {n} must be a square matrix, got shape {sh}")
    if len(set(shapes.values())) > 1:
        raise ParamError("parameters " + ", ".join(f"{n} {sh}" for n, sh in shapes.items()) + " must have one shape")


def _toy_instance(p, definite=None):
    mats = {n: getattr(p, n, None) for n in _TOY_MATRICES}   # p may be a plain namespace (batched seeds)
    given = [np.asarray(m, float) for m in mats.values() if m is not None]
    Q = p.Q if not given else given[0].shape[0]
    rng = rng_for(p.seed)
    W = 0.5 * rng.standard_normal((Q, Q))
    B = 0.5 * rng.standard_normal((Q, Q))
    Y = rng.standard_normal((Q, Q))
    W, B, Y = (np.asarray(mats[n], float) if mats[n] is not None else M for n, M in zip(_TOY_MATRICES, (W, B, Y)))
    if definite == "plus":
        B = B + 1.5 * np.eye(Q)
        W = 0.3 * W
    elif definite == "minus":
        W = W + 1.5 * np.eye(Q)
        B = 0.3 * B
    if definite in ("plus", "minus"):
        # the shift 1.5 I leaves +-I(0) indefinite for some seeds (14% of (Q <= 6, seed) pairs, 38% at Q = 6: the
        # sweep's inconclusive draws of chen.toy_decay); shift further, doubling, only where it did not suffice, so
        # the instances that were definite are unchanged (read-through 8)
        sgn = 1.0 if definite == "plus" else -1.0
        for k in range(10):
            if np.linalg.eigvalsh(sgn * (B @ B.T - W.T @ W))[0] > 0:
                break
            if definite == "plus":
                B = B + 1.5 * 2.0 ** k * np.eye(Q)
            else:
                W = W + 1.5 * 2.0 ** k * np.eye(Q)
    return W, B, Y
