"""Chen §2.2 (seed lines 281-290): the Euclidean cost in the input layer, in cumulative parameters
that are independent coordinates (catalogue chen §2.1: M12).

Claims:

* ``chen.reparametrisation``      l.289: cumulative parameters are independent coordinates (M12)

The random network and the rounding-error model of its maps: ``theorems/chen/_network.py``.
Layer lists are in layer order [W_1, ..., W_L]; data points are columns.  Notation decisions D1-D9
are recorded in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import fd
from solvers import xp_chen as xc
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, inconclusive
from theorems.chen._common import KINK, XP, _f, _xs
from theorems.chen._network import _compose_err, _cumulative_err, _forward_err, _gam, _n2, _net_params, network


# ===========================================================================
rep = Claim(
    id="chen.reparametrisation",
    title="Cumulative parameters are independent coordinates (as a change of variables, not as dynamics)",
    label="l.289",
    section="2.2",
    equation="(2.6)",
    lines=(287, 289),
    statement=r"(W^{(\ell)},\beta^{(\ell)})_\ell\ \text{are independent parameters (for different }\ell,\ell')",
    status="holds",
    params=_net_params(L=2),
    notes="M12: (W_l, b_l) -> (W^(l), beta^(l)) is a diffeomorphism of (GL(Q) x R^Q)^L (round trip exact).  "
          "As dynamics it is not innocent: the Euclidean gradient flow in the cumulative coordinates is not "
          "the gradient flow of the network in (W_l, b_l) (different metrics; falsifier 'same_dynamics').  "
          "Cost: the composed Euclidean cost (2.26) with general cumulative matrices and one cluster.",
    catalogue="chen §2.1 M12; §3 R6",
    covers=("M12",),
)


def _rep_case(p):
    Ws, bs, X = network(p)
    Wc, bc, betas = cm.cumulative(Ws, bs)
    yt = np.random.default_rng(p.seed + 1).standard_normal((1, p.Q))
    return Ws, bs, X, Wc, betas, yt


@rep.numeric(backends=XP)
def rep_numeric(p):
    """Round trip (W_l, b_l) -> cumulative -> per-layer, and the cost is the same function in both charts."""
    Ws, bs, X, Wc, betas, yt = _rep_case(p)
    xp = xp_of(p)
    Wx, bx, (Xx, ytx) = _xs(xp, Ws), _xs(xp, bs), on(xp, X, yt)
    Wcx, _, betax = xc.cumulative(Wx, bx)
    Ws2, bs2 = xc.per_layer(Wcx, betax)
    e = max(max(_f(xc.max_abs(a - b)) for a, b in zip(Wx, Ws2)),
            max(_f(xc.max_abs(a - b)) for a, b in zip(bx, bs2)))
    # cost through the network (standard forward pass, output bias convention) vs the cumulative chart
    c_net = _f(xc.sq_cost(xp.linalg.solve(Wcx[-1], xc.forward(Wx, bx, Xx)[-1]) - xc.col(betax[-1]), ytx[0, ...]))
    c_cum = _f(xc.cost_composed(Wcx, betax, [Xx], ytx, general=True))
    # error model (issue-19 audit; was 64 Q L eps x a crude scale^2, 5e7 x the residual at the defaults): first
    # order, doubled.  Round trip: W_l' = W^(l) inv(W^(l-1)) errs by ||inv|| (dW_l + ||W_l|| dW_{l-1}) + ||W_l||
    # gamma_3Q ||L||U|| ||inv|| (the inverse, Higham ch. 14) + gamma_Q ||W^(l)||_F ||inv||_F; b_l' = W^(l) dbeta by
    # ||W^(l)|| (dbeta_l + dbeta_{l-1}) + (dW_l + gamma_Q ||W^(l)||_F) |dbeta|.  Cost: c_net = |W^(L)^{-1} x^(L) -
    # beta - yt|^2/2 errs per point by |r| (||W^-1|| e_f + the solve + dbeta + gamma_1 |.|), c_cum by |r| eZ
    # (_forward_err, _compose_err), both plus gamma_Q |r|^2.
    Q = p.Q
    cum = _cumulative_err(Ws, bs)
    eW, eb = [], []
    for l, c in enumerate(cum):
        if l == 0:
            eW.append(c["dW"])
            eb.append(_n2(c["W"]) * c["dbeta"] + (c["dW"] + _gam(Q) * np.linalg.norm(c["W"])) * np.linalg.norm(c["beta"]))
            continue
        pc = cum[l - 1]
        nI = _n2(pc["Winv"])
        eW.append(nI * (c["dW"] + _n2(Ws[l]) * pc["dW"]) + _n2(Ws[l]) * _gam(3 * Q) * pc["lu"] * nI
                  + _gam(Q) * np.linalg.norm(c["W"]) * np.linalg.norm(pc["Winv"]))
        db = np.linalg.norm(c["beta"] - pc["beta"])
        eb.append(_n2(c["W"]) * (c["dbeta"] + pc["dbeta"]) + (c["dW"] + _gam(Q) * np.linalg.norm(c["W"])) * db)
    tol_rt = 2 * max(max(eW), max(eb))
    c = cum[-1]
    xL, e_f = _forward_err(Ws, bs, X)
    w = np.linalg.solve(Wc[-1], xL)
    Zc, eZ = _compose_err(cum, X, p.L)
    r = np.linalg.norm(Zc - yt[0][:, None], axis=0)
    nI = _n2(c["Winv"])
    e_net = nI * e_f + nI * (_gam(3 * Q) * c["lu"] + c["dW"]) * np.linalg.norm(w, axis=0) + c["dbeta"] + \
        _gam(1) * np.linalg.norm(w - c["beta"][:, None], axis=0)
    tol_c = 2 * float(np.mean(r * (e_net + eZ) + 2 * _gam(Q) * r ** 2))
    return Outcome.from_parts({"round_trip": (e, tol_rt), "cost_same_function": (abs(c_net - c_cum), tol_c)},
                              message="round trip and cost in both charts")


rep.property(over=("Q", "L", "seed"), max_examples=10)


@rep.falsifier("same_dynamics", search=("seed",), fixed={"L": 2, "Q": 2})
def rep_dynamics(p):
    """'The gradient flow in the cumulative parameters is the network's gradient flow': the velocity of W^(1)
    under the per-layer flow, -dC/dW_1, differs from -dC/dW^(1) of the cumulative flow."""
    Ws, bs, X, Wc, betas, yt = _rep_case(p)

    def c_layer(W1, W2, b1, b2):
        Wc_, _, be_ = cm.cumulative([W1, W2], [b1, b2])
        return cm.cost_network_general(Wc_, be_, [X], yt)
    pre1 = Ws[0] @ X + bs[0][:, None]
    pre2 = Ws[1] @ cm.relu(pre1) + bs[1][:, None]
    if min(np.min(np.abs(pre1)), np.min(np.abs(pre2))) < KINK:
        return inconclusive("a pre-activation lies within 1e-3 of a ReLU kink")
    (g1, _, _, _), (e1, _, _, _) = fd.gradient_with_error(c_layer, [Ws[0], Ws[1], bs[0], bs[1]], h=1e-6)
    (gc, _, _, _), (ec, _, _, _) = fd.gradient_with_error(
        lambda A, B, a, b: cm.cost_network_general([A, B], [a, b], [X], yt), [Wc[0], Wc[1], betas[0], betas[1]], h=1e-6)
    res = float(np.max(np.abs(g1 - gc)))
    return Outcome(residual=res, tolerance=float(np.max(e1) + np.max(ec)),
                   message=f"|dW^(1)/ds per-layer - cumulative| = {res:.3g}")
