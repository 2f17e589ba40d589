"""Chen §2 (seed lines 137-253): the model -- the network, cumulative parameters, truncation maps,
sectors, and the link of the cumulative maps to the network's hidden and output layers (catalogue chen
§2.1: M1-M8, M11; errata E6, E22).

Claims:

* ``chen.network_model``          (1.1)-(1.8), (2.1)-(2.13), (2.26): definitions (M1, M3, M5, M11)
* ``chen.cumulative_parameters``  (2.6): beta^(l) = (W^(l))^{-1} b^(l) = sum_j (W^(j))^{-1} b_j; round trip (M2)
* ``chen.truncation_forms``       (2.9): the three expressions of tau^(l) agree (M4)
* ``chen.truncation_sectors``     (2.14)-(2.15): fixed points and collapse of tau^(l) (M6, E22)
* ``chen.hidden_layers``          (2.17): x^(l) = W^(l) I^(l)(x^(0)) [E6: + beta^(l)] (M7)
* ``chen.output_layer``           (2.18): x^(L+1) = W^(L+1) I^(L)(x^(0)) [E6: iff b_{L+1} = -W_{L+1} b^(L)] (M8)

The random network and the rounding-error model of its maps: ``theorems/chen/_network.py``.
Layer lists are in layer order [W_1, ..., W_L]; data points are columns.  Notation decisions D1-D9
are recorded in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import xp_chen as xc
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param
from theorems.chen._common import EPS, XP, _f, _xs, rng_for
from theorems.chen._network import _compose_err, _cumulative_err, _forward_err, _gam, _n2, _net_params, network


def _seeded(p, seed):
    """The parameters ``p`` with another seed (the instances of a batch: seeds seed, seed + 1, ...)."""
    from types import SimpleNamespace
    return SimpleNamespace(**{**{k: getattr(p, k) for k in ("Q", "L", "N")}, "seed": seed})


def _batch_param(high=256):
    return Param.int("batch", 1, 1, high, "instances checked at once, stacked on a leading axis (seeds seed, "
                     "seed + 1, ...; 1 = the single-instance check)", search=(1, 8))


# ===========================================================================
Claim(
    id="chen.network_model",
    title="The ReLU network, cumulative maps, sectors and the Euclidean input cost (definitions)",
    label="(1.1)-(1.8), (2.1)-(2.13), (2.26)",
    section="1, 2",
    equation="(2.1)-(2.13), (2.26)",
    lines=(137, 285),
    statement=r"x^{(\ell)}=\sigma(W_\ell x^{(\ell-1)}+b_\ell),\ x^{(L+1)}=W_{L+1}x^{(L)}+b_{L+1},\ "
              r"\mathcal S^\pm_\ell=\{a^{(\ell)}(x)\in\mathbb R^Q_\pm\},\ "
              r"\mathcal C_N=\tfrac12\sum_j\tfrac1{N_j}\sum_i|\mathcal I^{(L)}(x_{j,i})-(W^{(L+1)})^{-1}y_j|^2",
    status="heuristic",
    notes="Definitions (catalogue M1, M3, M5, M11), implemented in solvers/chen.py and used by every other "
          "claim.  Standing assumptions: M_l = Q, W_l in GL(Q), L = Q, W^(L+1) of full rank.  M3: "
          "beta^(L+1) := W_{L+1}^{-1} beta^(L) (1.4)/(2.7) is dimensionally odd (beta^(L) lives in L_0) and never "
          "used; the consistent cumulative definition would be beta^(L) + (W^(L+1))^{-1} b_{L+1}.  M5: l.210 "
          "'(W_l(x+beta^(l)))_r' must be the cumulative W^(l).  M11: l.374 calls (2.26) 'the standard cost "
          "(2.22)' (typo).  D1: R^Q_+ open, R^Q_- closed.  Nothing to check numerically beyond the claims "
          "that use these definitions.",
    catalogue="chen §2.1 M1, M3, M5, M11",
    covers=("M1", "M3", "M5", "M11"),
)


# ===========================================================================
cum = Claim(
    id="chen.cumulative_parameters",
    title="Cumulative biases: beta^(l) = (W^(l))^{-1} b^(l) = sum_j (W^(j))^{-1} b_j",
    label="(1.3)/(2.6)",
    section="2",
    equation="(2.6)",
    lines=(173, 175),
    statement=r"\beta^{(\ell)}:=(W^{(\ell)})^{-1}b^{(\ell)}=\sum_{j=1}^\ell(W^{(j)})^{-1}b_j",
    status="holds",
    params=_net_params(),
    notes="Telescoping (W^(l))^{-1} W_l...W_{j+1} = (W^(j))^{-1}.  Also checked: the map (W_l, b_l) -> "
          "(W^(l), beta^(l)) is inverted exactly by solvers.chen.per_layer (round trip, catalogue M12).  "
          "Tolerance (issue-19 audit 2): a normwise solve bound 16 Q L eps cond S max|W|; 2.9e4 x the residual at "
          "the defaults, where the residual is 3-5 ulp; over 60 sweep draws (seed 11) the worst residual is 1/150 of it "
          "(a worst-case bound over L solves, not a crude scale).",
    catalogue="chen §2.1 M2, M12",
    covers=("M2",),
)


def _cum_outcome(p, wrong=False):
    xp = xp_of(p)
    Ws, bs, X = network(p)
    Wc, bc, betas = cm.cumulative(Ws, bs)         # host copy: the scales of the error model
    Wx, bx = _xs(xp, Ws), _xs(xp, bs)
    Wcx, bcx, betax = xc.cumulative(Wx, bx)      # both sides of (2.6) through the array API
    e1 = 0.0
    for l in range(p.L):
        lhs = xc.solve_vec(Wcx[l], bcx[l])
        rhs = sum(xc.solve_vec(Wcx[l] if wrong else Wcx[j], bx[j]) for j in range(l + 1))
        e1 = max(e1, _f(xc.max_abs(lhs - rhs)))
    Ws2, bs2 = xc.per_layer(Wcx, betax)
    e2 = max(max(_f(xc.max_abs(a - b)) for a, b in zip(Wx, Ws2)),
             max(_f(xc.max_abs(a - b)) for a, b in zip(bx, bs2)))
    # error model: each solve has backward error ~ Q eps cond(W^(j)); the sums add L of them
    cond = max(np.linalg.cond(W) for W in Wc)
    sc = max(1.0, max(np.max(np.abs(b)) for b in betas))
    tol = 16 * p.Q * p.L * EPS * cond * sc * max(np.max(np.abs(W)) for W in Wc + Ws)
    return Outcome.from_parts({"telescoping_2_6": (e1, tol), "round_trip": (e2, tol)},
                              message="(2.6) two forms and the per-layer round trip",
                              values={"max_cond": float(cond)})


@cum.numeric(backends=XP)
def cum_numeric(p):
    """(W^(l))^{-1} b^(l) vs sum_j (W^(j))^{-1} b_j, and the round trip to (W_l, b_l)."""
    return _cum_outcome(p)


cum.property(over=("Q", "L", "seed"), max_examples=15)


@cum.falsifier("wrong_partial_product", search=("seed",), fixed={"L": 3})
def cum_wrong(p):
    """beta^(l) = sum_j (W^(l))^{-1} b_j (the full product for every j): O(1) error for l >= 2."""
    return _cum_outcome(p, wrong=True)


# ===========================================================================
forms = Claim(
    id="chen.truncation_forms",
    title="The three expressions of the truncation map tau^(l) agree",
    label="(1.6)/(2.9)",
    section="2",
    equation="(2.9)",
    lines=(185, 187),
    statement=r"\tau^{(\ell)}=(a^{(\ell)})^{-1}\circ\sigma\circ a^{(\ell)}=(W^{(\ell)})^{-1}(\sigma(W^{(\ell)}x+b^{(\ell)})-b^{(\ell)})"
              r"=(W^{(\ell)})^{-1}\sigma(W^{(\ell)}(x+\beta^{(\ell)}))-\beta^{(\ell)}",
    status="holds",
    params=_net_params(L=1, extra=[_batch_param()]),
    catalogue="chen §2.1 M4",
    covers=("M4",),
)


def _forms_case(p):
    Ws, bs, X = network(p)
    Wc, bc, betas = cm.cumulative(Ws, bs)
    return Wc[-1], bc[-1], 3 * X


@forms.numeric(backends=XP)
def forms_numeric(p):
    """All three forms at N points for the last cumulative layer, on ``batch`` networks (seeds seed, seed + 1,
    ...) stacked on a leading axis; the network with the largest residual over its own tolerance decides."""
    cases = [_forms_case(_seeded(p, p.seed + k)) for k in range(p.batch)]
    tol = np.array([16 * p.Q * EPS * np.linalg.cond(W) * (1 + np.max(np.abs(X)) + np.max(np.abs(np.linalg.solve(W, b))))
                    for W, b, X in cases])
    xp = xp_of(p)
    f1, f2, f3 = xc.tau_forms(*on(xp, *(np.stack(a) for a in zip(*cases))))
    res = asnumpy(xp.maximum(xp.max(xp.abs(f1 - f2), axis=(-2, -1)), xp.max(xp.abs(f1 - f3), axis=(-2, -1))))
    k = int(np.argmax(res / tol))
    return Outcome(residual=float(res[k]), tolerance=float(tol[k]), values={"networks": p.batch, "worst_seed": p.seed + k},
                   message=f"max difference of the three forms (worst of {p.batch} networks: seed {p.seed + k})")


forms.property(over=("Q", "L", "N", "seed"), max_examples=15)


@forms.falsifier("drop_b", search=("seed",))
def forms_drop(p):
    """tau = W^{-1} sigma(W x + b) (the pull-back by a^{-1} replaced by W^{-1}, i.e. -b dropped): error
    |beta| = |W^{-1} b|.  (The catalogue's 'W^{-1} sigma(Wx+b) - beta' equals the second form exactly.)"""
    W, b, X = _forms_case(p)
    f1, _, _ = cm.tau_forms(W, b, X)
    beta = np.linalg.solve(W, b)
    wrong = np.linalg.solve(W, cm.relu(W @ X + b[:, None]))
    tol = 16 * p.Q * EPS * np.linalg.cond(W) * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)))
    return Outcome(residual=float(np.max(np.abs(f1 - wrong))), tolerance=tol, message="dropped -b")


# ===========================================================================
sect = Claim(
    id="chen.truncation_sectors",
    title="Fixed points and collapse of tau^(l): S^+ is the fixed-point set, S^- collapses to -beta",
    label="(2.14)-(2.15)",
    section="2",
    equation="(2.12)-(2.15)",
    lines=(197, 222),
    statement=r"\tau^{(\ell)}(x)=x\Leftrightarrow x\in\mathcal S^+_\ell,\quad \tau^{(\ell)}(x)=-\beta^{(\ell)}"
              r"\Leftrightarrow x\in\mathcal S^-_\ell",
    status="gap",
    corrected=r"\{\tau^{(\ell)}(x)=x\}=(a^{(\ell)})^{-1}(\overline{\mathbb R^Q_+})\supsetneq\mathcal S^+_\ell"
              r"\ \text{(walls)},\quad \tau^{(\ell)}(x)=-\beta^{(\ell)}\Leftrightarrow x\in\mathcal S^-_\ell\ \text{(exact)}",
    params=_net_params(L=1, extra=[Param.float("wall", 0.3, 0.0, 1.0, "fraction of points moved onto a wall")]),
    notes="D1/E22: with h(0) = 0 the orthant R^Q_+ is open, so the walls of the closed orthant are fixed points "
          "outside S^+ (a measure-zero set); (2.15) is exact because R^Q_- is closed.  Independence: on S^+ "
          "and S^-, tau does not depend on W^(l); on S^+ not on beta^(l) (checked by perturbing them).  "
          "Tolerance (issue-19 audit 2): the independence parts allow 4 x 16 Q eps cond(W) S (solve bound); 2.4e5 x "
          "the residual at the defaults, where the residual is below 1 ulp (points deep in S^+ map back exactly); over 60 "
          "sweep draws (seed 11) the worst residual is 1/90 (beta) and 1/215 (W) of it.",
    catalogue="chen §2.1 M6; §4 E22",
    covers=("M6", "E22"),
)


def _sect_case(p):
    Ws, bs, X = network(p)
    W = cm.cumulative(Ws, bs)[0][-1]
    beta = np.random.default_rng(p.seed + 7).standard_normal(p.Q)
    rng = rng_for(p.seed + 11)
    U = 2 * rng.standard_normal((p.Q, max(p.N, 4)))
    U[:, 0] = np.abs(U[:, 0]) + 0.1      # one point in S^+
    U[:, 1] = -np.abs(U[:, 1]) - 0.1     # one in S^-
    walls = rng.random(U.shape) < p.wall
    U = np.where(walls, 0.0, U)          # some coordinates exactly on a wall
    X = np.linalg.solve(W, U) - beta[:, None]
    U = W @ (X + beta[:, None])          # recomputed: walls are now |u| ~ eps, snap them
    U = np.where(walls, 0.0, U)
    X = np.linalg.solve(W, U) - beta[:, None]
    return W, beta, X


def _count(xp, mask) -> int:
    return int(xp.sum(xp.astype(mask, xp.int64)))


def _masked_max_abs(xp, A, cols):
    """max |A[:, cols]| (0 when no column is selected), without data-dependent shapes."""
    return _f(xp.max(xp.where(cols[None, :], xp.abs(A), xp.zeros_like(A))))


@sect.numeric(backends=XP)
def sect_numeric(p):
    """Fixed points = a^{-1}(closed orthant), collapse iff S^-, and the independence statements."""
    xp = xp_of(p)
    W, beta, X = _sect_case(p)
    # host: the rounding scale and the second matrix W2 (instance data, drawn once)
    sc = float(16 * p.Q * EPS * np.linalg.cond(W) * (1 + np.max(np.abs(X)) + np.max(np.abs(beta))))
    W2 = W + 0.3 * np.random.default_rng(p.seed + 13).standard_normal(W.shape)
    sc2 = sc * max(1.0, float(np.linalg.cond(W2) / np.linalg.cond(W)))
    W, beta, X, W2 = on(xp, W, beta, X, W2)
    U = W @ (X + xc.col(beta))
    T = xc.tau_general(W, beta, X)
    fixed = xp.max(xp.abs(T - X), axis=0) <= sc
    closed_plus = xp.all(U >= -sc, axis=0)
    coll = xp.max(xp.abs(T + xc.col(beta)), axis=0) <= sc
    minus = xp.all(U <= sc, axis=0)
    mism = _count(xp, fixed != closed_plus) + _count(xp, coll != minus)
    # independence: another W2 on the points in S^+ (resp. S^-) of both, beta on S^+
    U2 = W2 @ (X + xc.col(beta))
    inS = (xp.all(U > 0, axis=0) & xp.all(U2 > 0, axis=0)) | (xp.all(U <= 0, axis=0) & xp.all(U2 <= 0, axis=0))
    T2 = xc.tau_general(W2, beta, X)
    e_W = _masked_max_abs(xp, T2 - T, inS)
    # the statement is local: a point in S^+ for beta and for the shifted beta + 1e-3 (read-through 8: only the
    # first was required, so a point within |W 1e-3| of a wall, pushed out of S^+ by the shift, would refute it)
    U3 = W @ (X + xc.col(beta + 1e-3))
    plus = xp.all(U > sc2, axis=0) & xp.all(U3 > sc2, axis=0)
    T3 = xc.tau_general(W, beta + 1e-3, X)       # column-wise map: the columns in S^+ are read off below
    e_b = _masked_max_abs(xp, T3 - X, plus)
    return Outcome.from_parts({"sector_equivalences": (mism, 0), "W_independence": (e_W, 4 * sc2),
                               "beta_independence_on_S+": (e_b, 4 * sc2)},
                              message="corrected (2.14) on the closed orthant, (2.15), independence",
                              values={"wall_points": _count(xp, closed_plus & ~xp.all(U > 0, axis=0))})


sect.property(over=("Q", "N", "seed"), max_examples=15)


@sect.falsifier("stated")
def sect_stated(p):
    """(2.14) as printed (fixed-point set = S^+, open orthant): the wall point u = (0, 1) is fixed but not in S^+."""
    W, beta = np.eye(2), np.zeros(2)
    X = np.array([[0.0], [1.0]])
    T = cm.tau_general(W, beta, X)
    fixed = bool(np.max(np.abs(T - X)) <= 4 * EPS)
    in_plus = bool(np.all(W @ (X + beta[:, None]) > 0))
    return Outcome(residual=float(fixed != in_plus), tolerance=0.0,
                   values={"fixed": fixed, "in_S_plus": in_plus, "H_perp": [1.0, 0.0]},
                   message="u = (0,1): tau(x) = x, x not in S^+ (H^perp = diag(1,0))")


# ===========================================================================
hid = Claim(
    id="chen.hidden_layers",
    title="Hidden layers through the truncation maps: x^(l) = W^(l)(I^(l)(x^(0)) + beta^(l))",
    label="(2.17)",
    section="2",
    equation="(2.16)-(2.17), (2.23)-(2.24)",
    lines=(224, 232),
    statement=r"x^{(\ell)}_{j,i}=W^{(\ell)}\mathcal I^{(\ell)}(x^{(0)}_{j,i})",
    status="erratum",
    corrected=r"x^{(\ell)}=W^{(\ell)}\big(\mathcal I^{(\ell)}(x^{(0)})+\beta^{(\ell)}\big)=a^{(\ell)}(\mathcal I^{(\ell)}(x^{(0)}))",
    params=_net_params(),
    notes="E6: proof by induction, W_l x^(l-1) + b_l = W^(l)(I^(l-1) + beta^(l-1)) + b_l = W^(l)(I^(l-1) + "
          "beta^(l)).  The same omission is in (2.23) (l.267) and (2.24) (l.271).  General (non-aligned) "
          "invertible layers.",
    catalogue="chen §2.1 M7; §4 E6; §3 R1",
    covers=("M7", "E6"),
)


def _hid_outcome(p, printed=False):
    xp = xp_of(p)
    Ws, bs, X = network(p)
    Wc, bc, betas = cm.cumulative(Ws, bs)
    cum = _cumulative_err(Ws, bs)
    # both sides of (2.17) through the array API; the error model below stays on the host
    Wx, bx, Xx = _xs(xp, Ws), _xs(xp, bs), on(xp, X)
    Wcx, _, betax = xc.cumulative(Wx, bx)
    xs = xc.forward(Wx, bx, Xx)
    errs, bounds = [], []
    for l in range(1, p.L + 1):
        I = xc.compose(Wcx[:l], betax[:l], Xx, general=True)
        pred = Wcx[l - 1] @ (I if printed else I + xc.col(betax[l - 1]))
        errs.append(_f(xc.max_abs(xs[l] - pred)))
        # error model: first-order bounds of both sides propagated through the actual Jacobians
        # (_forward_err, _compose_err with final = W^(l)), doubled for the second-order terms; the printed
        # variant has the same rounding, its gap is W^(l) beta^(l) = b^(l)
        c = cum[l - 1]
        _, e_f = _forward_err(Ws[:l], bs[:l], X)
        Z, eZ = _compose_err(cum, X, l, final=c["W"])
        t = Z + (0.0 if printed else c["beta"][:, None])
        ep = (eZ + _n2(c["W"]) * ((0.0 if printed else c["dbeta"]) + _gam(1) * np.linalg.norm(t, axis=0))
              + (c["dW"] + _gam(p.Q) * np.linalg.norm(c["W"])) * np.linalg.norm(t, axis=0))
        bounds.append(float(np.max(e_f + ep)))
    tol = 2 * max(bounds)
    return Outcome(residual=max(errs), tolerance=tol, values={"error_per_layer": errs, "error_bound_per_layer": bounds,
                                                              "norm_b_cumulative": [float(np.linalg.norm(b)) for b in bc]},
                   message=f"max_l |x^(l) - formula| = {max(errs):.2e}")


@hid.numeric(backends=XP)
def hid_numeric(p):
    """x^(l) of the network vs W^(l)(I^(l) + beta^(l)), l = 1..L."""
    return _hid_outcome(p)


hid.property(over=("Q", "L", "N", "seed"), max_examples=15)


@hid.falsifier("stated", search=("seed",))
def hid_stated(p):
    """Printed (2.17) x^(l) = W^(l) I^(l)(x^(0)): off by W^(l) beta^(l) = b^(l)."""
    return _hid_outcome(p, printed=True)


# ===========================================================================
out = Claim(
    id="chen.output_layer",
    title="Output layer: x^(L+1) = W^(L+1) I^(L)(x^(0)) needs b_{L+1} = -W_{L+1} b^(L)",
    label="(2.18)",
    section="2",
    equation="(2.18)-(2.19)",
    lines=(234, 240),
    statement=r"x^{(L+1)}_{j,i}=W_Lx^{(L)}_{j,i}=W^{(L+1)}\mathcal I^{(L)}(x^{(0)}_{j,i}),\ j=1,\dots,L",
    status="erratum",
    corrected=r"x^{(L+1)}=W_{L+1}x^{(L)}+b_{L+1}=W^{(L+1)}\mathcal I^{(L)}(x^{(0)})\iff b_{L+1}=-W_{L+1}b^{(L)}"
              r"\ (j=1,\dots,Q)",
    params=_net_params(),
    notes="E6: W_L must be W_{L+1}, 'j = 1..L' must be j = 1..Q, and the identity needs the output bias "
          "b_{L+1} = -W_{L+1} b^(L) (without it every output is shifted by W^(L+1) beta^(L) + b_{L+1}); §8 "
          "assumes b_{L+1} = 0 (l.1221), which contradicts it (E23, another module).",
    catalogue="chen §2.1 M8; §4 E6",
    covers=("M8",),
)


def _out_outcome(p, zero_bias=False):
    xp = xp_of(p)
    Ws, bs, X = network(p)
    Wc, bc, betas = cm.cumulative(Ws, bs)
    W_out = np.random.default_rng(p.seed + 3).standard_normal((p.Q, p.Q)) + 2 * np.eye(p.Q)
    b_out = np.zeros(p.Q) if zero_bias else -W_out @ bc[-1]
    # both sides of (2.18) through the array API (the output bias is part of the instance, built on the host)
    Wx, bx, (Xx, Wox, box) = _xs(xp, Ws), _xs(xp, bs), on(xp, X, W_out, b_out)
    Wcx, _, betax = xc.cumulative(Wx, bx)
    y = Wox @ xc.forward(Wx, bx, Xx)[-1] + xc.col(box)
    pred = (Wox @ Wcx[-1]) @ xc.compose(Wcx, betax, Xx, general=True)
    res = _f(xc.max_abs(y - pred))
    # error model: first-order normwise bounds per point of every operation on both sides (Higham ch. 3, 9),
    # each local error carried to the output through the norm of the actual Jacobian product (relu
    # patterns D_l; _forward_err, _compose_err), doubled for the second-order terms.  Output side: the chain
    # W_out D_L W_L ... plus the rounding of W_out x^(L) + b_out and of b_out; formula side: M = W_out W^(L)
    # known to dM, the chain M J_L ... J_1 of the truncation maps, plus (dM + gamma_Q ||M||_F)|Z|.
    cum = _cumulative_err(Ws, bs)
    c = cum[-1]
    xL, eL = _forward_err(Ws, bs, X, final=W_out)
    e_bout = 0.0 if zero_bias else _n2(W_out) * c["db"] + _gam(p.Q) * np.linalg.norm(W_out) * np.linalg.norm(c["b"])
    e_y = eL + _gam(p.Q + 1) * (np.linalg.norm(W_out) * np.linalg.norm(xL, axis=0) + np.linalg.norm(b_out)) + e_bout
    M = W_out @ c["W"]
    Z, eZ = _compose_err(cum, X, p.L, final=M)
    dM = _n2(W_out) * c["dW"] + _gam(p.Q) * np.linalg.norm(W_out) * np.linalg.norm(c["W"])
    e_pred = eZ + (dM + _gam(p.Q) * np.linalg.norm(M)) * np.linalg.norm(Z, axis=0)
    tol = 2 * float(np.max(e_y + e_pred))
    return Outcome(residual=res, tolerance=tol, values={"shift": float(np.linalg.norm(W_out @ Wc[-1] @ betas[-1] + b_out)),
                                                        "tolerance_over_residual": tol / res if res > 0 else float("inf")},
                   message=f"|x^(L+1) - W^(L+1) I^(L)| = {res:.2e}")


@out.numeric(backends=XP)
def out_numeric(p):
    """With b_{L+1} = -W_{L+1} b^(L) the identity holds."""
    return _out_outcome(p)


out.property(over=("Q", "L", "N", "seed"), max_examples=15)


@out.falsifier("stated", search=("seed",))
def out_stated(p):
    """b_{L+1} = 0 (as §8 assumes): every output is shifted by W^(L+1) beta^(L)."""
    return _out_outcome(p, zero_bias=True)
