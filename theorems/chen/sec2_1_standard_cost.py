"""Chen §2.1 (seed lines 254-280): the standard cost is the pull-back cost in the input layer, and its
gauge invariance (catalogue chen §2.1: M9, M10; erratum E20).

Claims:

* ``chen.pullback_cost``          (2.22): standard cost = pull-back cost with metric (W^(L+1))^T W^(L+1) (M9)
* ``chen.gauge_invariance``       (2.25): invariance under W^(L) -> A W^(L) [E20: only A positive diagonal] (M10)

The random network and the rounding-error model of its maps: ``theorems/chen/_network.py``.
Layer lists are in layer order [W_1, ..., W_L]; data points are columns.  Notation decisions D1-D9
are recorded in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import xp_chen as xc
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError
from theorems.chen._common import XP, _f, _xs, random_orthogonal, rng_for
from theorems.chen._network import _compose_err, _cumulative_err, _forward_err, _gam, _n2, _net_params, network


# ===========================================================================
def _clusters_le_N(p):
    if p.clusters > p.N:
        raise ParamError(f"parameter clusters={p.clusters} must be <= N={p.N} (every cluster needs a point)")


pb = Claim(
    id="chen.pullback_cost",
    title="The standard cost is the pull-back cost in input space (metric (W^(L+1))^T W^(L+1))",
    label="(2.22)",
    section="2.1",
    equation="(2.20)-(2.22), (1.7)",
    lines=(244, 258),
    statement=r"\tilde{\mathcal C}_N=\tfrac12\sum_j\tfrac1{N_j}\sum_i|x^{(L+1)}_{j,i}-y_j|^2"
              r"=\tfrac12\sum_j\tfrac1{N_j}\sum_i|\mathcal I^{(L)}(x_{j,i})-(W^{(L+1)})^{-1}y_j|^2_{\mathfrak L_0,W^{(L+1)}}",
    status="holds",
    params=_net_params(extra=[Param.int("clusters", 2, 1, 5, "number of labels/clusters (points split evenly)")]),
    validate=lambda p: _clusters_le_N(p),
    notes="Holds under the output-bias convention b_{L+1} = -W_{L+1} b^(L) of chen.output_layer (M8); "
          "weights 1/N_j per cluster (D7).",
    catalogue="chen §2.1 M9",
    covers=("M9",),
)


def _pb_sides(p, Ws, bs, X, W_out, b_out, Y, lab):
    """The standard cost (network outputs vs y_j) and the pull-back cost (I^(L) vs (W^(L+1))^{-1} y_j in the
    metric (W^(L+1))^T W^(L+1)), both through the array API; cluster j is the columns with lab == j."""
    xp = xp_of(p)
    Wx, bx, (Xx, Wox, box, Yx) = _xs(xp, Ws), _xs(xp, bs), on(xp, X, W_out, b_out, Y)
    Wcx, _, betax = xc.cumulative(Wx, bx)
    out_ = Wox @ xc.forward(Wx, bx, Xx)[-1] + xc.col(box)
    W_full = Wox @ Wcx[-1]
    G = xp.matrix_transpose(W_full) @ W_full
    I = xc.compose(Wcx, betax, Xx, general=True)
    std = pull = 0.0
    for j in range(p.clusters):
        m = xp.asarray(np.nonzero(lab == j)[0])
        yj = Yx[:, j:j + 1]
        std = std + 0.5 * xp.mean(xp.sum((xp.take(out_, m, axis=1) - yj) ** 2, axis=0))
        D = xp.take(I, m, axis=1) - xp.linalg.solve(W_full, yj)
        pull = pull + 0.5 * xp.mean(xp.sum(D * (G @ D), axis=0))
    return _f(std), _f(pull)


def _pb_outcome(p, zero_bias=False):
    Ws, bs, X = network(p)
    Wc, bc, betas = cm.cumulative(Ws, bs)
    rng = rng_for(p.seed + 5)
    W_out = rng.standard_normal((p.Q, p.Q)) + 2 * np.eye(p.Q)
    Y = rng.standard_normal((p.Q, p.clusters))
    lab = np.arange(p.N) % p.clusters
    b_out = np.zeros(p.Q) if zero_bias else -W_out @ bc[-1]
    std, pull = _pb_sides(p, Ws, bs, X, W_out, b_out, Y, lab)
    # host copies of the outputs and the composition: the scales of the error model below
    out_ = W_out @ cm.forward(Ws, bs, X)[-1] + b_out[:, None]
    W_full = W_out @ Wc[-1]
    I = cm.compose(Wc, betas, X, general=True)
    # error model (issue-19 audit; was 64 Q (L+1) eps x a crude scale^2 x cond, 2.4e9 x the residual at the
    # defaults): first-order per point, reusing output_layer's bounds.  Standard side: r = out - y errs by e_y
    # (_forward_err with final = W_out, the output affine map and b_out), so |r|^2/2 by |r| e_y + gamma_Q |r|^2.
    # Pull-back side: |W_full D|^2 with D = I - W_full^{-1} y: W_full I errs by eZ (_compose_err, final = W_full)
    # + dM |I|, the solve by ||W_full|| ||W_full^{-1}|| (gamma_3Q ||L||U|| + dM) |s|, and the quadratic form
    # D^T (W^T W) D by gamma_2Q ||W_full||_F^2 |D|^2.  Summed with the weights 1/N_j, doubled (second order).
    import scipy.linalg as sla
    cum = _cumulative_err(Ws, bs)
    c = cum[-1]
    xL, eL = _forward_err(Ws, bs, X, final=W_out)
    e_bout = 0.0 if zero_bias else _n2(W_out) * c["db"] + _gam(p.Q) * np.linalg.norm(W_out) * np.linalg.norm(c["b"])
    e_y = eL + _gam(p.Q + 1) * (np.linalg.norm(W_out) * np.linalg.norm(xL, axis=0) + np.linalg.norm(b_out)) + e_bout
    Z, eZ = _compose_err(cum, X, p.L, final=W_full)
    dM = _n2(W_out) * c["dW"] + _gam(p.Q) * np.linalg.norm(W_out) * np.linalg.norm(c["W"])
    Pm, Lm, Um = sla.lu(W_full)
    lu = float(np.linalg.norm(np.abs(Pm @ Lm) @ np.abs(Um)))
    nWf, nWi = _n2(W_full), _n2(np.linalg.inv(W_full))
    tol = 0.0
    for j in range(p.clusters):
        m = lab == j
        r = np.linalg.norm(out_[:, m] - Y[:, [j]], axis=0)
        sj = np.linalg.solve(W_full, Y[:, [j]])
        D = I[:, m] - sj
        ds = nWf * nWi * (_gam(3 * p.Q) * lu + dM) * float(np.linalg.norm(sj))
        WD = np.linalg.norm(W_full @ D, axis=0)
        e_std = r * e_y[m] + _gam(p.Q) * r ** 2
        e_pull = WD * (eZ[m] + dM * np.linalg.norm(I[:, m], axis=0) + ds) + \
            _gam(2 * p.Q) * np.linalg.norm(W_full) ** 2 * np.linalg.norm(D, axis=0) ** 2
        tol += float(np.mean(e_std + e_pull))
    tol *= 2
    return Outcome(residual=abs(std - pull), tolerance=tol, values={"standard": std, "pullback": pull},
                   message=f"standard {std:.6g} vs pull-back {pull:.6g}")


@pb.numeric(backends=XP)
def pb_numeric(p):
    """(2.22) first line (network) vs last line (pull-back metric in L_0)."""
    return _pb_outcome(p)


pb.property(over=("Q", "L", "N", "seed"), max_examples=15)


@pb.falsifier("zero_output_bias", search=("seed",))
def pb_zero(p):
    """b_{L+1} = 0: the outputs are shifted by W^(L+1) beta^(L) and the two costs differ."""
    return _pb_outcome(p, zero_bias=True)


# ===========================================================================
gauge = Claim(
    id="chen.gauge_invariance",
    title="Gauge freedom W^(L) -> A W^(L), W_{L+1} -> W_{L+1} A^{-1}",
    label="(2.25)",
    section="2.1",
    equation="(2.25)",
    lines=(262, 279),
    statement=r"\text{the pull-back metric in }\mathfrak L_0\text{ is invariant under } W^{(L)}\to AW^{(L)},\ "
              r"W^{(L+1)}\to W^{(L+1)}A^{-1}\ \text{for any } A\in GL(M_L)",
    status="erratum",
    corrected=r"\text{with } W_{L+1}\to W_{L+1}A^{-1},\ b_L\to Ab_L:\ W^{(L+1)}\text{ and the metric are invariant for any }A;"
              r"\ \text{the network and the cost only for } A \text{ positive diagonal}",
    params=_net_params(),
    notes="E20: as written W^(L+1) -> W^(L+1) A^{-1} changes the metric; the intended map is W_{L+1} -> "
          "W_{L+1} A^{-1}, under which the metric tensor is trivially invariant (W^(L+1) unchanged) but the "
          "network output W_{L+1} A^{-1} sigma(A z) equals W_{L+1} sigma(z) only when sigma(Az) = A sigma(z), "
          "i.e. A positive diagonal (positive homogeneity of ReLU).  Read-through 8: the statement quoted 'the metric "
          "(and the cost)'; l.273-277 print only the metric (the cost's 'degeneracy' is its consequence), so the statement "
          "now quotes the metric and the falsifiers are 'stated' = the literal map W^(L+1) -> W^(L+1) A^{-1} (the metric "
          "becomes A^{-T} M A^{-1}, generic A), 'generic_A' = the intended map with a generic A (metric invariant, network "
          "output and cost not; was 'stated'), 'sign_flip' = the nearest A outside the positive diagonals.",
    catalogue="chen §2.1 M10; §4 E20",
    covers=("M10", "E20"),
)


def _gauge_outcome(p, A):
    Ws, bs, X = network(p)
    W_out = np.random.default_rng(p.seed + 9).standard_normal((p.Q, p.Q)) + 2 * np.eye(p.Q)
    b_out = np.random.default_rng(p.seed + 10).standard_normal(p.Q)
    Ws2 = Ws[:-1] + [A @ Ws[-1]]
    bs2 = bs[:-1] + [A @ bs[-1]]
    W_out2 = W_out @ np.linalg.inv(A)
    # the network before and after the gauge map, and the metric factors, through the array API
    xp = xp_of(p)
    Wx, bx, (Xx, Ax, Wox, box) = _xs(xp, Ws), _xs(xp, bs), on(xp, X, A, W_out, b_out)
    Wx2 = Wx[:-1] + [Ax @ Wx[-1]]
    bx2 = bx[:-1] + [(Ax @ xc.col(bx[-1]))[:, 0]]
    Wox2 = Wox @ xp.linalg.inv(Ax)
    y0 = Wox @ xc.forward(Wx, bx, Xx)[-1] + xc.col(box)
    y1 = Wox2 @ xc.forward(Wx2, bx2, Xx)[-1] + xc.col(box)
    mx0, mx1 = Wox @ xc.cumulative(Wx, bx)[0][-1], Wox2 @ xc.cumulative(Wx2, bx2)[0][-1]
    T = xp.matrix_transpose
    r_out, r_met = _f(xc.max_abs(y1 - y0)), _f(xc.max_abs(T(mx1) @ mx1 - T(mx0) @ mx0))
    met0 = (W_out @ cm.cumulative(Ws, bs)[0][-1])       # host: the scales of the error model
    met1 = (W_out2 @ cm.cumulative(Ws2, bs2)[0][-1])
    # error model (issue-19 audit; was 64 Q (L+1) eps x a crude scale x cond(A), 1.3e6 x the residual at the
    # defaults): first-order per point, reusing output_layer's bounds, doubled for the second order.  Each output
    # errs by its forward chain (_forward_err with final = W_out or W_out A^{-1}) + the output affine map; the
    # gauged side also by A W_L, A b_L (gamma_Q, reaching the output through W_out A^{-1} D_L) and by
    # W_out A^{-1} (the inverse to gamma_3Q cond(A) ||A^{-1}||, the product to gamma_Q).  Metric: M = W_out W^(L)
    # errs by dM (the cumulative product's dW), M^T M by 2 ||M|| dM + gamma_Q ||M||_F^2.
    Q = p.Q
    Ainv = np.linalg.inv(A)
    nA, nAi = np.linalg.norm(A), np.linalg.norm(Ainv)
    dWo2 = _gam(Q) * np.linalg.norm(W_out) * nAi + _n2(W_out) * _gam(3 * Q) * np.linalg.cond(A) * _n2(Ainv)
    xL0, e0 = _forward_err(Ws, bs, X, final=W_out)
    xL1, e1 = _forward_err(Ws2, bs2, X, final=W_out2)
    xLm = cm.forward(Ws[:-1], bs[:-1], X)[-1]
    e_y0 = e0 + _gam(Q + 1) * (np.linalg.norm(W_out) * np.linalg.norm(xL0, axis=0) + np.linalg.norm(b_out))
    e_y1 = (e1 + _gam(Q + 1) * (np.linalg.norm(W_out2) * np.linalg.norm(xL1, axis=0) + np.linalg.norm(b_out))
            + _n2(W_out2) * _gam(Q) * nA * (np.linalg.norm(Ws[-1]) * np.linalg.norm(xLm, axis=0)
                                            + np.linalg.norm(bs[-1]))
            + dWo2 * np.linalg.norm(xL1, axis=0))
    tol = 2 * float(np.max(e_y0 + e_y1))
    c0, c1 = _cumulative_err(Ws, bs)[-1], _cumulative_err(Ws2, bs2)[-1]
    dM0 = _n2(W_out) * c0["dW"] + _gam(Q) * np.linalg.norm(W_out) * np.linalg.norm(c0["W"])
    dM1 = _n2(W_out2) * c1["dW"] + dWo2 * _n2(c1["W"]) + _gam(Q) * np.linalg.norm(W_out2) * np.linalg.norm(c1["W"])
    tol_met = 2 * sum(2 * _n2(m) * d + _gam(Q) * np.linalg.norm(m) ** 2 for m, d in ((met0, dM0), (met1, dM1)))
    return Outcome.from_parts({"network_output": (r_out, tol), "metric_tensor": (r_met, tol_met)},
                              message="output and metric before/after the gauge map")


@gauge.numeric(backends=XP)
def gauge_numeric(p):
    """A positive diagonal: network output and metric unchanged."""
    return _gauge_outcome(p, np.diag(np.random.default_rng(p.seed + 4).uniform(0.2, 5.0, p.Q)))


gauge.property(over=("Q", "L", "N", "seed"), max_examples=15)


def _generic_A(p):
    """A = rotation x diag(1, 2, 0.5, ...): a generic A in GL, neither orthogonal nor positive diagonal."""
    rng = np.random.default_rng(p.seed + 4)
    return random_orthogonal(p.Q, rng) @ np.diag(np.resize([1.0, 2.0, 0.5], p.Q))


@gauge.falsifier("stated", search=("seed",), fixed={"Q": 3})
def gauge_stated(p):
    """(2.25) as printed: W^(L) -> A W^(L), W^(L+1) -> W^(L+1) A^{-1} (the cumulative output matrix itself): the
    metric tensor M^T M of the network, M = W_{L+1} W^(L), becomes A^{-T} M^T M A^{-1} (generic A)."""
    Ws, bs, X = network(p)
    W_out = np.random.default_rng(p.seed + 9).standard_normal((p.Q, p.Q)) + 2 * np.eye(p.Q)
    A = _generic_A(p)
    M = W_out @ cm.cumulative(Ws, bs)[0][-1]
    M1 = M @ np.linalg.inv(A)
    res = float(np.max(np.abs(M1.T @ M1 - M.T @ M)))
    # rounding of the two Gram matrices: gamma_Q ||M||_F^2 each, the inverse and product by gamma_3Q cond(A) ||A^-1||^2
    Ai = np.linalg.inv(A)
    tol = 2 * (_gam(p.Q) * np.linalg.norm(M) ** 2 * (1 + _n2(Ai) ** 2)
               + 2 * _n2(M) ** 2 * _n2(Ai) ** 2 * _gam(3 * p.Q) * np.linalg.cond(A))
    return Outcome(residual=res, tolerance=tol, message=f"|metric after the printed map - before| = {res:.3g}")


@gauge.falsifier("generic_A", search=("seed",), fixed={"Q": 3})
def gauge_generic(p):
    """The intended map (W_{L+1} -> W_{L+1} A^{-1}) with a generic A in GL: the metric is invariant, the network
    output (hence the cost) changes."""
    return _gauge_outcome(p, _generic_A(p))


@gauge.falsifier("sign_flip", search=("seed",), fixed={"Q": 3})
def gauge_sign_flip(p):
    """The nearest A outside the corrected class: the positive diagonal of the numeric check with its first entry's
    sign flipped (still in GL).  ReLU is positively homogeneous only: sigma(-z) != -sigma(z), so the output changes
    on every point whose first pre-activation of layer L is nonzero (the metric stays invariant)."""
    d = np.random.default_rng(p.seed + 4).uniform(0.2, 5.0, p.Q)
    d[0] = -d[0]
    return _gauge_outcome(p, np.diag(d))
