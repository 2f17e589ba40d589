"""The model (§2) and cluster-separated truncations (§3.1): cumulative parameters, truncation maps,
the link to the network, the two costs, alignment (catalogue chen §2.1-2.3: M1-M12, A1-A3, CS1-CS3;
errata E6, E17, E20, E22).

Claims:

* ``chen.network_model``          (1.1)-(1.8), (2.1)-(2.13), (2.26): definitions (M1, M3, M5, M11)
* ``chen.cumulative_parameters``  (2.6): beta^(l) = (W^(l))^{-1} b^(l) = sum_j (W^(j))^{-1} b_j; round trip (M2)
* ``chen.truncation_forms``       (2.9): the three expressions of tau^(l) agree (M4)
* ``chen.truncation_sectors``     (2.14)-(2.15): fixed points and collapse of tau^(l) (M6, E22)
* ``chen.hidden_layers``          (2.17): x^(l) = W^(l) I^(l)(x^(0)) [E6: + beta^(l)] (M7)
* ``chen.output_layer``           (2.18): x^(L+1) = W^(L+1) I^(L)(x^(0)) [E6: iff b_{L+1} = -W_{L+1} b^(L)] (M8)
* ``chen.pullback_cost``          (2.22): standard cost = pull-back cost with metric (W^(L+1))^T W^(L+1) (M9)
* ``chen.gauge_invariance``       (2.25): invariance under W^(L) -> A W^(L) [E20: only A positive diagonal] (M10)
* ``chen.reparametrisation``      l.289: cumulative parameters are independent coordinates (M12)
* ``chen.alignment``              (2.28)-(2.31), (6.2), (3.17): aligned W = W_* R, tau independent of W_* (A1, A2, T1)
* ``chen.alignment_not_preserved`` alignment is a constraint, not preserved by the unconstrained flow (A3)
* ``chen.cluster_separation``     Def 3.1, (3.3)-(3.5): I^(Q)(X_l) = tau^(l)(X_l) [E17: on the images] (CS1)
* ``chen.bias_variance``          (3.6)-(3.8), (3.15): per-cluster cost and its bias-variance split (CS2, CS3)

Layer lists are in layer order [W_1, ..., W_L]; data points are columns.  Notation decisions D1-D9
are recorded in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import fd, orthogonal
from solvers import xp_chen as xc
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.chen._common import EPS, random_orthogonal, rng_for, separated_instance, validate_QKL

KINK = 1e-3
XP = ("numpy", "cupy")   # checks written once through the array API (solvers/xp_chen.py); array-api-strict too


def _xs(xp, arrays):
    """A list of host arrays moved to the namespace ``xp`` (one list entry per array)."""
    return [on(xp, a) for a in arrays]


def _f(x) -> float:
    """A 0-d array of any backend as a Python float (the only device-to-host transfer of a check)."""
    return float(x)


def _seeded(p, seed):
    """The parameters ``p`` with another seed (the instances of a batch: seeds seed, seed + 1, ...)."""
    from types import SimpleNamespace
    return SimpleNamespace(**{**{k: getattr(p, k) for k in ("Q", "L", "N")}, "seed": seed})


def _batch_param(high=256):
    return Param.int("batch", 1, 1, high, "instances checked at once, stacked on a leading axis (seeds seed, "
                     "seed + 1, ...; 1 = the single-instance check)", search=(1, 8))


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
          "(W^(l), beta^(l)) is inverted exactly by solvers.chen.per_layer (round trip, catalogue M12).",
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
          "and S^-, tau does not depend on W^(l); on S^+ not on beta^(l) (checked by perturbing them).",
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
    plus = xp.all(U > sc2, axis=0)
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
    statement=r"\text{the pull-back metric (and the cost) are invariant under } W^{(L)}\to AW^{(L)},\ "
              r"W^{(L+1)}\to W^{(L+1)}A^{-1}\ \text{for any } A\in GL(M_L)",
    status="erratum",
    corrected=r"\text{with } W_{L+1}\to W_{L+1}A^{-1},\ b_L\to Ab_L:\ W^{(L+1)}\text{ and the metric are invariant for any }A;"
              r"\ \text{the network and the cost only for } A \text{ positive diagonal}",
    params=_net_params(),
    notes="E20: as written W^(L+1) -> W^(L+1) A^{-1} changes the metric; the intended map is W_{L+1} -> "
          "W_{L+1} A^{-1}, under which the metric tensor is trivially invariant (W^(L+1) unchanged) but the "
          "network output W_{L+1} A^{-1} sigma(A z) equals W_{L+1} sigma(z) only when sigma(Az) = A sigma(z), "
          "i.e. A positive diagonal (positive homogeneity of ReLU).",
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


@gauge.falsifier("stated", search=("seed",), fixed={"Q": 3})
def gauge_stated(p):
    """A = rotation x diag(1, 2, 0.5, ...) (a generic A in GL): the network output changes."""
    rng = np.random.default_rng(p.seed + 4)
    A = random_orthogonal(p.Q, rng) @ np.diag(np.resize([1.0, 2.0, 0.5], p.Q))
    return _gauge_outcome(p, A)


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


# ===========================================================================
al = Claim(
    id="chen.alignment",
    title="Aligned cumulative weights W = W_* R: tau independent of W_*, so W^(l) = R_l w.l.o.g.",
    label="Def 2.2, (6.2), (3.17)",
    section="2.3, 6",
    equation="(2.28)-(2.31), (6.1)-(6.3), (3.17)",
    lines=(297, 321),
    statement=r"W^{(\ell)}=W^{(\ell)}_*R_\ell\ (W_*\text{ diagonal}, R\in O(Q))\Rightarrow "
              r"\tau^{(\ell)}=R_\ell^T\sigma(R_\ell(x+\beta^{(\ell)}))-\beta^{(\ell)}",
    status="holds",
    params=[Param.int("Q", 3, 1, 6, "dimension", search=(1, 5)), Param.int("N", 6, 1, 40, "points", search=(1, 12)),
            Param.seed("seed")],
    notes="A1: polar decomposition W = |W| R, |W| = (W W^T)^{1/2} = R~^T W_* R~; aligned iff |W| is diagonal.  "
          "'W_* >= 0' (l.69, l.525) must be W_* > 0 (W invertible).  A2/(6.2): sigma(Dx) = D sigma(x) for "
          "D >= 0 diagonal.  T1 (3.17): the cost, hence its (beta, R)-gradient with W_* frozen, is the same "
          "at W_* R and at R.",
    catalogue="chen §2.2 A1, A2; §2.4 T1",
    covers=("A1", "A2", "T1"),
)


def _al_case(p):
    rng = rng_for(p.seed)
    R = random_orthogonal(p.Q, rng)
    D = np.diag(rng.uniform(0.2, 5.0, p.Q))
    beta = 0.5 * rng.standard_normal(p.Q)
    X = rng.standard_normal((p.Q, p.N))
    return R, D, beta, X, rng


@al.numeric(backends=XP)
def al_numeric(p):
    """Polar factors of D R, tau_{DR} = tau_R, and equal costs under random R-perturbations (W_* frozen)."""
    from solvers.matfun import psd_sqrt
    R, D, beta, X, rng = _al_case(p)
    yt = rng.standard_normal(p.Q)
    # the perturbed rotations are instance data: drawn (and their Cayley maps taken) once on the host
    R1s = [orthogonal.cayley(0.1 * orthogonal.skew(rng.standard_normal((p.Q, p.Q)))) @ R for _ in range(3)]
    sc = 64 * p.Q * EPS * np.linalg.cond(D) * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)))
    sc_c = sc * (1 + np.max(np.abs(yt))) ** 2
    Dmax = float(np.max(D))
    xp = xp_of(p)
    R, D, beta, X, yt = on(xp, R, D, beta, X, yt[None])
    W = D @ R
    absW = psd_sqrt(W @ xp.matrix_transpose(W))
    Rp = xp.linalg.solve(absW, W)
    e_c = 0.0
    for R1 in _xs(xp, R1s):
        c1 = xc.cost_composed([D @ R1], [beta], [X], yt, general=True)
        c2 = xc.cost_separated([R1], [beta], [X], yt)
        e_c = max(e_c, abs(_f(c1) - _f(c2)))
    return Outcome.from_parts({"abs_W_diagonal": (_f(xc.max_abs(absW - D)), sc * Dmax),
                               "polar_factor": (_f(xc.max_abs(Rp - R)), sc),
                               "tau_independent_of_W*": (_f(xc.max_abs(xc.tau_general(W, beta, X) - xc.tau(R, beta, X))), sc),
                               "cost_independent_of_W*": (e_c, sc_c)},
                              message="aligned W = W_* R")


al.property(over=("Q", "N", "seed"), max_examples=15)


@al.falsifier("non_aligned", search=("seed",), fixed={"Q": 3})
def al_nonaligned(p):
    """Non-aligned W = S^T D S R (|W| not diagonal): tau_W differs from tau_R by O(1)."""
    R, D, beta, X, rng = _al_case(p)
    S = random_orthogonal(p.Q, rng)
    W = S.T @ D @ S @ R
    sc = 64 * p.Q * EPS * np.linalg.cond(D) * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)))
    return Outcome(residual=float(np.max(np.abs(cm.tau_general(W, beta, X) - cm.tau(R, beta, X)))), tolerance=sc,
                   message="non-aligned W")


# ===========================================================================
anp = Claim(
    id="chen.alignment_not_preserved",
    title="Alignment is a constraint: the unconstrained flow in W^(l) leaves the aligned set",
    label="(interpretation of Def 2.2)",
    section="2.3",
    equation="(2.31)",
    lines=(297, 321),
    statement=r"\text{(implicit) the gradient flow of }\mathcal C_N\text{ in }W^{(\ell)}\text{ keeps }W^{(\ell)}=W_*R_\ell",
    status="heuristic",
    params=[Param.int("Q", 2, 2, 5, "dimension", search=(2, 4)), Param.int("N", 6, 1, 40, "points", search=(2, 12)),
            Param.seed("seed")],
    notes="A3 (not claimed by the paper, needed for its interpretation).  At an aligned point the Euclidean "
          "gradient along the W_* directions is exactly 0 (A2: the cost does not depend on W_*), certified by "
          "the numeric check; but d/ds (W W^T) = -(G W^T + W G^T) has a nonzero off-diagonal part, so the "
          "unconstrained flow leaves the aligned set (falsifier 'preserved'; catalogue: 197/200 random states, "
          "misalignment 0.055-0.40 along trajectories).  The paper imposes alignment by hand.",
    catalogue="chen §2.2 A3",
    covers=("A3",),
)


def _anp_case(p):
    rng = rng_for(p.seed)
    R = random_orthogonal(p.Q, rng)
    D = np.diag(rng.uniform(0.5, 2.0, p.Q))
    beta = 0.5 * rng.standard_normal(p.Q)
    X = rng.standard_normal((p.Q, p.N))
    yt = rng.standard_normal(p.Q)
    W = D @ R
    if np.min(np.abs(W @ (X + beta[:, None]))) < KINK:
        return None
    (G,), (E,) = fd.gradient_with_error(lambda A: cm.cost_network_general([A], [beta], [X], yt[None]), [W], h=1e-6)
    return W, D, R, G, E


@anp.numeric
def anp_numeric(p):
    """The Euclidean gradient has zero component along the W_* directions E_rr R (FD)."""
    c = _anp_case(p)
    if c is None:
        return inconclusive("kink")
    W, D, R, G, E = c
    comp = [abs(float(np.sum(G * (np.outer(np.eye(p.Q)[r], np.eye(p.Q)[r]) @ R)))) for r in range(p.Q)]
    return Outcome(residual=max(comp), tolerance=float(np.sum(E)), values={"W_star_components": comp},
                   message="gradient along W_* directions")


anp.property(over=("Q", "N", "seed"), max_examples=10)


@anp.falsifier("preserved", search=("seed",))
def anp_preserved(p):
    """The off-diagonal part of d/ds (W W^T) = -(G W^T + W G^T) vanishes (it does not)."""
    c = _anp_case(p)
    if c is None:
        return inconclusive("kink")
    W, D, R, G, E = c
    V = -(G @ W.T + W @ G.T)
    off = V - np.diag(np.diag(V))
    tol = 2 * float(np.sum(E)) * np.max(np.abs(W))
    return Outcome(residual=float(np.max(np.abs(off))), tolerance=tol, message="off-diagonal velocity of W W^T")


# ===========================================================================
sep = Claim(
    id="chen.cluster_separation",
    title="Cluster-separated truncations give I^(Q)(X_l) = tau^(l)(X_l)",
    label="Def 3.1, (3.3)-(3.5)",
    section="3.1",
    equation="(3.3)-(3.5)",
    lines=(339, 358),
    statement=r"\tau^{(\ell)}=\mathrm{id}\text{ on }X_{\ell'}\ (\ell'\ne\ell)\ \Rightarrow\ "
              r"\mathcal I^{(Q)}(X_\ell)=\tau^{(\ell)}(X_\ell)",
    status="gap",
    corrected=r"\tau^{(\ell')}=\mathrm{id}\text{ near }X_\ell\ (\ell'<\ell)\text{ and near }\tau^{(\ell)}(X_\ell)\ "
              r"(\ell'>\ell)\ \Rightarrow\ \mathcal I^{(Q)}(X_\ell)=\tau^{(\ell)}(X_\ell)",
    params=[Param.int("Q", 2, 1, 5, "dimension", search=(2, 4)),
            Param.int("clusters", 2, 1, 5, "clusters K <= Q", search=(1, 3)),
            Param.int("layers", 2, 1, 6, "layers L >= K", search=(1, 4)),
            Param.int("points_per_cluster", 6, 1, 40, "points per cluster", search=(1, 10)),
            Param.seed("seed")],
    validate=validate_QKL,
    notes="E17/D6: the computation (3.4) applies tau^(l') (l' > l) to the truncated image tau^(l)(X_l), so "
          "the hypothesis must hold on the images (and on neighbourhoods, so that gradients decouple).  "
          "Instances: theorems/chen/_common.separated_instance; the D6 margin is reported.",
    catalogue="chen §2.3 CS1; §4 E17",
    covers=("CS1", "E17"),
)


def _sep_on(xp, clusters, yt, betas, Rs):
    """A separated instance moved to ``xp``: (clusters, yt, betas, Rs) as lists of arrays (yt one (K, Q) array)."""
    return _xs(xp, clusters), on(xp, yt), _xs(xp, betas), _xs(xp, Rs)


@sep.numeric(backends=XP)
def sep_numeric(p):
    """Under D6 (margin > 0): I^(L)(X_l) = tau^(l)(X_l) for every cluster, and (2.26) = (3.6)."""
    clusters, yt, betas, Rs = separated_instance(p.Q, p.clusters, p.layers, p.points_per_cluster, p.seed,
                                                 distance=3.0 * p.Q, spread=0.25)
    m = cm.separation_margin(Rs, betas, clusters)       # the hypothesis D6, gated on the host
    if m <= 0:
        return inconclusive(f"the instance violates D6 (margin {m:.3g})", margin=m)
    xp = xp_of(p)
    clusters, yt, betas, Rs = _sep_on(xp, clusters, yt, betas, Rs)
    e = max(_f(xc.max_abs(xc.compose(Rs, betas, X) - xc.tau(Rs[j], betas[j], X))) for j, X in enumerate(clusters))
    dc = abs(_f(xc.cost_composed(Rs, betas, clusters, yt)) - _f(xc.cost_separated(Rs, betas, clusters, yt)))
    sc = 16 * p.Q * p.layers * EPS * (1 + 3.0 * p.Q * 2)
    return Outcome.from_parts({"composition_3_5": (e, sc), "cost_3_6": (dc, sc * 10 * p.Q)},
                              message=f"D6 margin {m:.3g}", values={"margin": m})


sep.property(over=("Q", "clusters", "layers", "points_per_cluster", "seed"), max_examples=10)


@sep.falsifier("stated")
def sep_stated(p):
    """Literal Def 3.1 (catalogue E17): Q = 2, R_1 = I, R_2 = -I, beta_1 = 0, beta_2 = (.5,.5), X_1 = (-1,-1),
    X_2 = (3,3): tau^(1) = id on X_2 and tau^(2) = id on X_1, yet I^(2)(X_1) = (-.5,-.5) != tau^(1)(X_1) = (0,0)."""
    Rs = [np.eye(2), -np.eye(2)]
    betas = [np.zeros(2), np.array([0.5, 0.5])]
    X1, X2 = np.array([[-1.0], [-1.0]]), np.array([[3.0], [3.0]])
    lit = (np.max(np.abs(cm.tau(Rs[0], betas[0], X2) - X2)) == 0 and np.max(np.abs(cm.tau(Rs[1], betas[1], X1) - X1)) == 0)
    if not lit:
        return inconclusive("the literal hypothesis does not hold on this example")
    res = float(np.max(np.abs(cm.compose(Rs, betas, X1) - cm.tau(Rs[0], betas[0], X1))))
    return Outcome(residual=res, tolerance=8 * EPS, values={"I2_X1": cm.compose(Rs, betas, X1).ravel().tolist(),
                                                            "tau1_X1": cm.tau(Rs[0], betas[0], X1).ravel().tolist(),
                                                            "D6_margin": cm.separation_margin(Rs, betas, [X1, X2])},
                   message="literal Def 3.1 holds but (3.5) fails")


# ===========================================================================
bv = Claim(
    id="chen.bias_variance",
    title="Per-cluster cost (3.6)/(3.15) and its bias-variance split (3.7)",
    label="(3.6)-(3.8), (3.15)",
    section="3.1-3.2",
    equation="(3.6)-(3.8), (3.14)-(3.15)",
    lines=(360, 417),
    statement=r"\mathcal C_N=\tfrac12\sum_\ell\tfrac1{N_\ell}\mathrm{Tr}|\Delta\tau^{(\ell)}(X_\ell)|^2"
              r"+\tfrac12\sum_\ell|\overline{\tau^{(\ell)}}-\tilde y_\ell|^2=\tfrac12\sum_\ell\int\mu_\ell|\tau^{(\ell)}-\tilde y_\ell|^2",
    status="holds",
    params=sep.params,
    validate=sep.validator,
    notes="CS2/CS3.  The printed second sum of (3.7) runs over j with summand indexed by l (typo).",
    catalogue="chen §2.3 CS2, CS3",
    covers=("CS2", "CS3"),
)


def _bv_outcome(p, with_variance=True):
    clusters, yt, betas, Rs = separated_instance(p.Q, p.clusters, p.layers, p.points_per_cluster, p.seed,
                                                 distance=3.0 * p.Q, spread=0.25)
    xp = xp_of(p)
    clusters, yt, betas, Rs = _sep_on(xp, clusters, yt, betas, Rs)
    c36 = _f(xc.cost_separated(Rs, betas, clusters, yt))
    split = 0.0
    for j, X in enumerate(clusters):
        T = xc.tau(Rs[j], betas[j], X)
        mean = xp.mean(T, axis=1)
        if with_variance:
            split += 0.5 / X.shape[1] * _f(xp.sum((T - xc.col(mean)) ** 2))
        split += 0.5 * _f(xp.sum((mean - yt[j, ...]) ** 2))
    sc = 64 * p.Q * EPS * (1 + c36) * (1 + 6.0 * p.Q) ** 2
    return Outcome(residual=abs(c36 - split), tolerance=sc, values={"cost": c36, "split": split},
                   message=f"(3.6) {c36:.8g} vs split {split:.8g}")


@bv.numeric(backends=XP)
def bv_numeric(p):
    """(3.6) vs variance + bias terms (3.7)."""
    return _bv_outcome(p)


bv.property(over=("Q", "clusters", "points_per_cluster", "seed"), max_examples=10)


@bv.falsifier("bias_only", search=("seed",))
def bv_bias_only(p):
    """Dropping the variance term: wrong as soon as a truncated cluster has spread."""
    return _bv_outcome(p, with_variance=False)
