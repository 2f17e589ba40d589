"""Random networks and the rounding-error model of their cumulative and forward maps, shared by the
chen modules of §2-§2.2 (``sec2_model``, ``sec2_1_standard_cost``, ``sec2_2_reparametrisation``).

``network(p)``: random invertible layers W_l = G_l + 2 I, biases, data (columns), with the parameters
``_net_params``.  ``_cumulative_err``, ``_forward_err``, ``_compose_err``: the maps of solvers/chen.py with
first-order normwise bounds on their rounding (Higham, Accuracy and Stability), propagated by
``_chain_bound``.

Layer lists are in layer order [W_1, ..., W_L]; data points are columns.  Notation decisions D1-D9
are recorded in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from theorems.claim import Param
from theorems.chen._common import EPS, rng_for


def _net_params(L=3, extra=()):
    return [
        Param.int("Q", 3, 1, 6, "width of input and hidden layers", search=(1, 5)),
        Param.int("L", L, 1, 6, "number of hidden layers", search=(1, 5)),
        Param.int("N", 5, 1, 40, "number of data points", search=(1, 10)),
        Param.seed("seed of W_l = G + 2I (G Gaussian), b_l ~ N(0,1), X ~ N(0,1)"),
        *extra,
    ]


def network(p):
    """Random invertible layers W_l = G_l + 2 I, biases, data (columns)."""
    rng = rng_for(p.seed)
    Ws = [rng.standard_normal((p.Q, p.Q)) + 2 * np.eye(p.Q) for _ in range(p.L)]
    bs = [rng.standard_normal(p.Q) for _ in range(p.L)]
    X = rng.standard_normal((p.Q, p.N))
    return Ws, bs, X


def _gam(n):
    """gamma_n = n u / (1 - n u), u = eps/2 (Higham, Accuracy and Stability, (3.8))."""
    u = EPS / 2
    return n * u / (1 - n * u)


def _n2(A):
    return float(np.linalg.norm(A, 2))


def _cumulative_err(Ws, bs):
    """cm.cumulative with first-order normwise bounds on the rounding of W^(l), b^(l), beta^(l):
    ||fl(AB) - AB||_F <= gamma_Q ||A||_F ||B||_F; the solve W^{-1} b_l (LU, partial pivoting) errs by
    <= ||W^{-1}||_2 (gamma_{3Q} || |L||U| ||_F + dW) ||s|| (Higham Thm 9.4), dW the error of W^(l)."""
    import scipy.linalg as sla
    Q = Ws[0].shape[0]
    out = []
    W = b = beta = None
    dbeta = 0.0
    for Wl, bl in zip(Ws, bs):
        if W is None:
            W, dW, b, db = Wl, 0.0, bl, 0.0
        else:
            dW = _n2(Wl) * dW + _gam(Q) * np.linalg.norm(Wl) * np.linalg.norm(W)
            db = _n2(Wl) * db + _gam(Q + 1) * (np.linalg.norm(Wl) * np.linalg.norm(b) + np.linalg.norm(bl))
            W, b = Wl @ W, Wl @ b + bl
        Pm, Lm, Um = sla.lu(W)
        lu = float(np.linalg.norm(np.abs(Pm @ Lm) @ np.abs(Um)))
        Winv = np.linalg.inv(W)
        s = np.linalg.solve(W, bl)
        ds = _n2(Winv) * (_gam(3 * Q) * lu + dW) * np.linalg.norm(s)
        beta, dbeta = (s, ds) if beta is None else (beta + s, dbeta + ds + _gam(1) * np.linalg.norm(beta + s))
        out.append({"W": W, "dW": dW, "b": b, "db": db, "beta": beta, "dbeta": dbeta, "Winv": Winv, "lu": lu})
    return out


def _chain_bound(jacs, local, final):
    """First-order propagation of local rounding errors through a chain of linear(ised) maps, per point:
    sum_l sum_k ||final J_L ... J_{l+1} G_lk||_2 delta_lk (norms of products, not products of norms, so that
    W^(l) W^(l)^{-1} cancels).  jacs[l][i] (Q, Q): Jacobian of step l at point i; local[l]: list of
    (G, delta) with G None (identity), one (Q, Q) matrix or a list of them per point, delta (N,) the size of
    an error made inside step l that reaches its output through G."""
    N = local[0][0][1].shape[0]
    out = np.zeros(N)
    for i in range(N):
        P = final.copy()
        for l in range(len(jacs) - 1, -1, -1):
            for G, d in local[l]:
                g = P if G is None else P @ (G[i] if isinstance(G, list) else G)
                out[i] += _n2(g) * d[i]
            P = P @ jacs[l][i]
    return out


def _forward_err(Ws, bs, X, final=None):
    """cm.forward, and a first-order bound per point (column) on the rounding of final @ x^(L): the step
    x -> relu(W_l x + b_l) errs locally by gamma_{Q+1}(||W_l||_F |x| + |b_l|) and passes an error on through
    its Jacobian D_l W_l (relu exact, D_l the activation pattern).  Returns (x^(L), bound)."""
    Q = X.shape[0]
    final = np.eye(Q) if final is None else final
    z = X
    jacs, local = [], []
    for W, b in zip(Ws, bs):
        a = W @ z + b[:, None]
        D = [np.diag((a[:, i] > 0).astype(float)) for i in range(z.shape[1])]
        local.append([(D, _gam(Q + 1) * (np.linalg.norm(W) * np.linalg.norm(z, axis=0) + np.linalg.norm(b)))])
        jacs.append([d @ W for d in D])
        z = cm.relu(a)
    return z, _chain_bound(jacs, local, final)


def _compose_err(cum, X, upto, final=None):
    """I^(l)(X) through tau(z) = W^{-1} sigma(W(z + beta)) - beta (cm.compose, general=True), and a
    first-order bound per point on the rounding of final @ I^(l)(X).  An error in z reaches tau(z) through
    the Jacobian W^{-1} D W (D the activation pattern of the point; the identity when no coordinate is
    truncated).  Local rounding of one step: v = W t to (dW + gamma_Q ||W||_F)|t| (reaching the output through
    W^{-1} D), the solve to ||W^{-1}||(gamma_{3Q} || |L||U| ||_F + dW)|w| (Higham Thm 9.4), the additions to
    gamma_1, and beta's error dbeta on both sides ((J - I) dbeta)."""
    Q, N = X.shape
    final = np.eye(Q) if final is None else final
    z = X
    jacs, local = [], []
    for c in cum[:upto]:
        W, Winv, beta = c["W"], c["Winv"], c["beta"]
        t = z + beta[:, None]
        v = W @ t
        w = np.linalg.solve(W, cm.relu(v))
        zn = w - beta[:, None]
        WD = [Winv * (v[:, i] > 0)[None, :] for i in range(N)]          # W^{-1} D
        J = [wd @ W for wd in WD]
        nt, nw = np.linalg.norm(t, axis=0), np.linalg.norm(w, axis=0)
        local.append([(WD, (c["dW"] + _gam(Q) * np.linalg.norm(W)) * nt),            # v = W t
                      (Winv, (_gam(3 * Q) * c["lu"] + c["dW"]) * nw),                 # the solve's backward error
                      ([j - np.eye(Q) for j in J], np.full(N, c["dbeta"])),           # beta enters as (J - I) dbeta
                      (J, _gam(1) * nt),                                             # t = z + beta
                      (None, _gam(1) * np.linalg.norm(zn, axis=0))])                  # z' = w - beta
        jacs.append(J)
        z = zn
    return z, _chain_bound(jacs, local, final)
