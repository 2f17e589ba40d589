"""Chen §9 (seed lines 1432-1489): the standard cost with untruncated ("clustered") initial data -- the
network acts as the identity, and Theorem 9.1's closed form (catalogue chen §2.10: S9a, T91; errata E13,
E14).

Claims:

* ``chen.untruncated_reduction`` S9a (9.1)-(9.3): untruncated data, the network acts as the identity
* ``chen.theorem_9_1``           T91 (9.8)-(9.12): closed form of the least-squares flow [E13: Y_ext; E14]

D7: §9 is implemented with the paper's 1/(2N) as printed in (9.3); the (2.22) weights are the falsifier E14.
D5: "W_{Q+1}" of §8-9 is the cumulative output matrix W^(Q+1); output bias b_{Q+1} = -W_{Q+1} b^(Q).  The
bilinear toy and its integrator: ``theorems/chen/_toy.py``; decisions D1-D9 in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from solvers import chen as cm
from solvers import xp_chen as xc
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.chen._common import EPS, XP, _xs, random_orthogonal, rng_for
from theorems.chen._toy import RTOL, _network_output, _standard_cost, _to_network


# ===========================================================================
# §9
sec9a = Claim(
    id="chen.untruncated_reduction",
    title="Untruncated data: the hidden layers act as the identity and the cost is least squares in W^(Q+1)",
    label="§9 (9.1)-(9.6)",
    section="9",
    equation="(9.1)-(9.6)",
    lines=(1432, 1462),
    statement=r"x_{\ell,i}\in\mathcal S^+_{\ell'}\ \forall\ell,\ell',i\ \Longrightarrow\ \mathcal I^{(Q)}(x)=x,\ "
              r"\tilde{\mathcal C}=\tfrac1{2N}\|W_{Q+1}X-Y_{ext}\|_F^2,\ \partial_sW^{(\ell)}=\partial_s\beta^{(\ell)}=0",
    status="holds",
    params=[Param.int("Q", 3, 2, 5, "dimension = layers", search=(2, 4)),
            Param.int("points", 4, 1, 10, "points per cluster (Q clusters)", search=(1, 6)),
            Param.seed("seed")],
    notes="Instance: R_l Haar, data = apexes far below: every layer coordinate >= 0.5, so I^(Q) = id.  Checked: I^(Q) = id "
          "on the data (aligned form), the network output (per-layer (W_l, b_l) of aligned cumulative D_l R_l, D5 "
          "output bias) equals W^(Q+1) x, the standard cost (2.22) equals Q x (9.3) when all N_j are equal (read-through "
          "8: these two parts were claimed here but not computed; with equal N_j the two normalisations "
          "(catalogue E14) give the same limit but not the same cost: (2.22) has 1/N_j = Q/N, (9.3) 1/N, so the (9.7) "
          "flow is the (2.22) flow slowed by the factor Q), and the gradient in (beta, R) of the Euclidean input cost vanishes (9.6).  Falsifier 'one_truncated': one "
          "point moved into a truncated sector of layer 1 breaks I^(Q)(x) = x.  (9.1) 'tau^(Q)' should read I^(Q).",
    catalogue="chen §2.10 S9a; §2.7 CL11",
    covers=("S9a", "CL11"),
)


def _sec9a(p, truncate):
    rng = rng_for(p.seed)
    Rs = [random_orthogonal(p.Q, rng) for _ in range(p.Q)]
    X = rng.standard_normal((p.Q, p.Q * p.points))
    betas = []
    for R in Rs:                                     # apex so that min_i (R(x_i + beta))_r = 0.5 + |N|
        m = np.min(R @ X, axis=1)
        betas.append(R.T @ (0.5 + np.abs(rng.standard_normal(p.Q)) - m))
    if truncate:
        U0 = Rs[0] @ (X[:, 0] + betas[0])
        X[:, 0] -= Rs[0].T @ np.array([U0[0] + 0.5] + [0.0] * (p.Q - 1))
    clusters = [X[:, j * p.points:(j + 1) * p.points] for j in range(p.Q)]
    yt = rng.standard_normal((p.Q, p.Q))
    S = 1 + np.max(np.abs(X)) + max(np.max(np.abs(b)) for b in betas)
    # I^(Q) and the direct velocities (chain rule on all points at once) through the array API
    _, lab, cnt = cm.pack_clusters(clusters)
    xp = xp_of(p)
    Rx, bx = _xs(xp, Rs), _xs(xp, betas)
    Xx, Yx, wx = on(xp, X, yt[lab].T, 1.0 / cnt[lab])
    err = float(xc.max_abs(xc.compose(Rx, bx, Xx) - Xx))
    gW, gb = xc.grad_packed(Rx, bx, Xx, Yx, wx)      # packed = X: the clusters are consecutive column blocks
    grad = max(max(float(xc.max_abs(xc.skew(G @ xp.matrix_transpose(R)))) for G, R in zip(gW, Rx)),
               max(float(xc.max_abs(g)) for g in gb))
    tol = 32 * p.Q * p.Q * EPS * S
    parts = {"identity": (err, tol), "stationary": (grad, tol * S)}
    # through the network itself (read-through 8: the notes claimed these two checks, the code had neither):
    # per-layer (W_l, b_l) from aligned cumulative W^(l) = D_l R_l, W^(Q+1) random, b_{Q+1} = -W_{Q+1} b^(Q) (D5);
    # outputs x^(Q+1) = W^(Q+1) x (9.3), and the standard cost (2.22) (weights 1/N_j) against (9.3) (weight 1/N):
    # with every N_j = N/Q, (2.22) = Q x (9.3) (the two normalisations differ by the constant factor Q, E14)
    Ws, bs, Wc = _to_network(Rs, betas, p.seed)
    rng2 = rng_for(p.seed + 5)
    Wcum_out = np.eye(p.Q) + 0.5 * rng2.standard_normal((p.Q, p.Q))
    Y = rng2.standard_normal((p.Q, p.Q))
    Wout = Wcum_out @ np.linalg.inv(Wc[-1])
    bout = -Wout @ cm.cumulative(Ws, bs)[1][-1]
    out = _network_output(Ws, bs, Wout, bout, X)
    Sn = (1 + max(np.max(np.abs(b)) for b in betas) + np.max(np.abs(X))) * \
        max(np.linalg.norm(w, 2) for w in Ws + [Wout]) ** (p.Q + 1)
    tol_n = 64 * (p.Q + 2) * p.Q * EPS * Sn * np.linalg.cond(Wc[-1])
    c222 = _standard_cost(Ws, bs, Wout, bout, clusters, Y)
    c93 = 0.5 / X.shape[1] * float(np.sum((Wcum_out @ X - Y[:, lab]) ** 2))
    d_out = float(np.max(np.abs(out - Wcum_out @ X)))
    parts["network_output_9_3"] = (d_out, tol_n)
    # the two costs differ by what the measured output difference explains (sum_i w_i |r_i| |d o_i| <=
    # sqrt(2 Q C) sqrt(Q) d_out, sum_i w_i = Q; x 2 for the cross term) plus the rounding of the sums (16 N eps C)
    tol_c = 2 * np.sqrt(2 * p.Q * c222) * np.sqrt(p.Q) * d_out + 16 * X.shape[1] * EPS * (c222 + p.Q * c93)
    parts["cost_2_22_is_Q_times_9_3"] = (abs(c222 - p.Q * c93), tol_c)
    return Outcome.from_parts(parts, message=f"max |I^(Q)(x) - x| = {err:.2e}; max |velocity| = {grad:.2e}",
                              values={"cost_2_22": c222, "cost_9_3": c93})


@sec9a.numeric(backends=XP)
def sec9a_numeric(p):
    """I^(Q) = id on the data and (9.6) d_s beta = d_s R = 0."""
    return _sec9a(p, False)


sec9a.property(over=("Q", "points", "seed"), max_examples=10)


@sec9a.falsifier("one_truncated", search=("seed",))
def sec9a_one(p):
    """One point truncated by layer 1."""
    return _sec9a(p, True)


# ---------------------------------------------------------------------------
def _validate_t91(p):
    if p.points * p.Q < p.Q:
        raise ParamError("need N >= Q points for X X^T to be invertible")


t91 = Claim(
    id="chen.theorem_9_1",
    title="Thm 9.1: closed-form least-squares flow of the output matrix on untruncated data",
    label="Thm 9.1",
    section="9",
    equation="(9.7)-(9.12)",
    lines=(1466, 1486),
    statement=r"W(s)=W(0)e^{-sXX^T/N}+Y\mathcal P^{(0)}(1-e^{-sXX^T/N}),\ W(\infty)=Y\mathcal P^{(0)},\ "
              r"\mathcal P^{(0)}=X^T(XX^T)^{-1}\ \text{the projector onto }\mathrm{Ran}(X^T)",
    status="erratum",
    corrected=r"W(s)=W(0)e^{-sXX^T/N}+Y_{ext}X^T(XX^T)^{-1}(1-e^{-sXX^T/N}),\ W(\infty)=Y_{ext}X^T(XX^T)^{-1};\ "
              r"X^T(XX^T)^{-1}\text{ is }N\times Q\text{ (the projector is }X^T(XX^T)^{-1}X)",
    params=[Param.int("Q", 3, 1, 5, "dimension (= number of clusters)", search=(1, 4)),
            Param.int("points", 3, 1, 10, "points per cluster (N = Q * points)", search=(1, 5)),
            Param.seed("seed"),
            Param.float("T", 3.0, 0.1, 10.0, "time horizon")],
    validate=_validate_t91,
    notes="Cost (9.3) = 1/(2N) ||W X - Y_ext||^2 (Y_ext: the label of each point's cluster, Q x N), flow W' = -(WX - "
          "Y_ext) X^T / N integrated by DOP853 (rtol 1e-11) against the closed form (expm).  'stated' = the printed "
          "Y P^(0) with Y the Q x Q label matrix: dimensionally impossible when N != Q (residual inf); 'weights_2_22' "
          "(E14): with the (2.22) weights 1/N_j and unequal cluster sizes the limit differs from (9.12).",
    catalogue="chen §2.10 T91; §4 E13, E14",
    covers=("T91", "E13", "E14"),
)


def _t91_instance(p, sizes=None):
    rng = rng_for(p.seed)
    sizes = sizes or [p.points] * p.Q
    X = rng.standard_normal((p.Q, sum(sizes)))
    Y = rng.standard_normal((p.Q, p.Q))
    lab = np.concatenate([np.full(n, j) for j, n in enumerate(sizes)])
    Yext = Y[:, lab]
    W0 = rng.standard_normal((p.Q, p.Q))
    return X, Y, Yext, W0, lab, sizes


@t91.numeric
def t91_numeric(p):
    """Closed form with Y_ext against the integrated flow; the limit and the projector."""
    X, Y, Yext, W0, lab, sizes = _t91_instance(p)
    N = X.shape[1]
    A = X @ X.T / N
    if np.linalg.cond(A) > 1e8:
        return inconclusive("X X^T is (numerically) singular")
    P0 = X.T @ np.linalg.inv(X @ X.T)
    Q = p.Q
    f = lambda t, w: (-(w.reshape(Q, Q) @ X - Yext) @ X.T / N).ravel()
    ts = np.linspace(0, p.T, 21)
    sol = solve_ivp(f, (0, p.T), W0.ravel(), method="DOP853", rtol=RTOL, atol=RTOL * 1e-2, t_eval=ts)
    err = 0.0
    for k, t in enumerate(ts):
        E = expm(-t * A)
        Wc = W0 @ E + Yext @ P0 @ (np.eye(Q) - E)
        err = max(err, float(np.max(np.abs(sol.y[:, k].reshape(Q, Q) - Wc))))
    Pi = P0 @ X
    S = 1 + np.max(np.abs(W0)) + np.max(np.abs(Yext @ P0))
    return Outcome.from_parts({"closed_form": (err, 1e3 * RTOL * S),
                               "projector": (float(np.max(np.abs(Pi @ Pi - Pi))), 64 * N * EPS * np.linalg.cond(A))},
                              message=f"max |W_ODE - (9.10) with Y_ext| = {err:.2e}",
                              values={"P0_shape": list(P0.shape), "limit_cost":
                                      float(0.5 / N * np.sum((Yext @ P0 @ X - Yext) ** 2))})


t91.property(over=("Q", "points", "seed"), max_examples=8)


@t91.falsifier("stated", fixed={"points": 3})
def t91_stated(p):
    """Printed Y P^(0): Y is Q x Q, P^(0) is N x Q with N = Q * points != Q (dimension mismatch)."""
    X, Y, Yext, W0, lab, sizes = _t91_instance(p)
    P0 = X.T @ np.linalg.inv(X @ X.T)
    if Y.shape[1] != P0.shape[0]:
        return Outcome(residual=float("inf"), tolerance=0.0, values={"Y_shape": list(Y.shape),
                                                                      "P0_shape": list(P0.shape)},
                       message=f"Y {Y.shape} times P^(0) {P0.shape}: undefined")
    lim = Y @ P0
    ref = Yext @ P0
    return Outcome(residual=float(np.max(np.abs(lim - ref))), tolerance=64 * EPS * (1 + np.max(np.abs(ref))),
                   message="N = Q: Y P^(0) is defined")


@t91.falsifier("weights_2_22", fixed={"Q": 3})
def t91_weights(p):
    """E14: with cluster sizes (2, 4, 3) the (2.22)-weighted least-squares limit differs from (9.12)."""
    sizes = [2, 4, 3] + [3] * max(0, p.Q - 3)
    X, Y, Yext, W0, lab, sizes = _t91_instance(p, sizes[:p.Q])
    N = X.shape[1]
    w = np.array([1.0 / sizes[j] for j in lab])
    lim_222 = (Yext * w) @ X.T @ np.linalg.inv((X * w) @ X.T)
    lim_912 = Yext @ X.T @ np.linalg.inv(X @ X.T)
    d = float(np.max(np.abs(lim_222 - lim_912)))
    return Outcome(residual=d, tolerance=64 * N * EPS * np.linalg.cond(X @ X.T) * (1 + np.max(np.abs(lim_912))),
                   message=f"|limit (2.22 weights) - limit (9.12)| = {d:.3g}")
