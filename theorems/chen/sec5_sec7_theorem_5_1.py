"""Chen §5 (seed lines 801-866) with its proof in §7 (lines 1028-1206): Theorem 5.1, the general gradient
flow without cluster-separated truncations, and Lemmas 7.1-7.3 (catalogue chen §2.8: T51a-T51e; errata E5,
E15, E16).

Claims:

* ``chen.lemma_7_1``             T51a: tau^(l2,l1)(x) = P^+_{l1,l2} x - sum_l P^-_{l,l2} beta^(l)
* ``chen.theorem_5_1_bias``      T51b (5.4), Lemma 7.2 (7.11) [E5: sign and cluster/layer index]
* ``chen.theorem_5_1_rotation``  T51c (5.5)-(5.7), Lemma 7.3: the rotation generator (confirms E1)
* ``chen.theorem_5_1_support``   T51d (5.8)-(5.10) [E15: S^+_k must be R^Q \\ S^-_k]
* ``chen.theorem_5_1_separated_limit`` T51e (5.11)-(5.13): under separation Thm 5.1 reduces to Thm 3.2 (notes)

Composition order D3: tau^(hi,lo) = tau^(hi) o ... o tau^(lo); H^(k) is evaluated at
R_k(tau^(k-1,1)(x) + beta^(k)) (5.3).  Layer lists in layer order, data points are columns.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import expm

from solvers import chen as cm
from solvers import fd
from solvers import xp_chen as xc
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.chen._common import EPS, KINK, kink_distance, random_orthogonal, rng_for


# ===========================================================================
# Theorem 5.1 machinery (non-separated truncations, L = Q layers, Q clusters)
def _t51_params():
    return [
        Param.int("Q", 3, 2, 4, "dimension = number of layers = number of clusters (L = Q)", search=(2, 4)),
        Param.int("points", 3, 1, 8, "points per cluster", search=(2, 5)),
        Param.seed("seed of R_l (Haar), beta_l ~ 0.5 N, X ~ N, yt ~ N"),
    ]


def _t51_instance(p):
    rng = rng_for(p.seed)
    Rs = [random_orthogonal(p.Q, rng) for _ in range(p.Q)]
    betas = [0.5 * rng.standard_normal(p.Q) for _ in range(p.Q)]
    clusters = [rng.standard_normal((p.Q, p.points)) for _ in range(p.Q)]
    yt = rng.standard_normal((p.Q, p.Q))
    return Rs, betas, clusters, yt


def _trace(Rs, betas, x):
    """Forward pass of one point: z_0 = x, u_k = R_k(z_{k-1} + beta_k), z_k = tau^(k)(z_{k-1}); the
    projectors Pk = R_k^T H_k R_k and Pk_perp = R_k^T H_k^perp R_k (layer index k = 0..L-1)."""
    zs, Ps, Pps = [x], [], []
    for R, b in zip(Rs, betas):
        u = R @ (zs[-1] + b)
        h = (u > 0).astype(float)
        Ps.append(R.T @ (h[:, None] * R))
        Pps.append(R.T @ ((1 - h)[:, None] * R))
        zs.append(R.T @ cm.relu(u) - b)
    return zs, Ps, Pps


def _Pplus(Ps, l1, l2):
    """P^+_{l1,l2} = P_{l2} ... P_{l1} (0-based layer indices, l1 <= l2; identity if l1 > l2)."""
    M = np.eye(Ps[0].shape[0])
    for k in range(l1, l2 + 1):
        M = Ps[k] @ M
    return M


def _Pminus(Ps, Pps, l, l2):
    return _Pplus(Ps, l + 1, l2) @ Pps[l]


def _fd_beta(Rs, betas, clusters, yt, l):
    f = lambda b: cm.cost_composed(Rs, betas[:l] + [b] + betas[l + 1:], clusters, yt)
    (g,), (e,) = fd.gradient_with_error(f, [betas[l]], h=1e-5)
    return g, e


def _fd_omega(Rs, betas, clusters, yt, l):
    """Omega_l = -pi_-(dC/dR_l R_l^T) by central differences along R_l -> expm(E) R_l (Lemma 6.1:
    d C/d a_ij = Tr(E_ij Omega) = -2 Omega_ij for E_ij = e_i e_j^T - e_j e_i^T)."""
    Q = Rs[0].shape[0]
    pairs = [(i, j) for i in range(Q) for j in range(i + 1, Q)]

    def E(a):
        W = np.zeros((Q, Q))
        for (i, j), ak in zip(pairs, a):
            W[i, j] += ak
            W[j, i] -= ak
        return W
    f = lambda a: cm.cost_composed(Rs[:l] + [expm(E(a)) @ Rs[l]] + Rs[l + 1:], betas, clusters, yt)
    (g,), (e,) = fd.gradient_with_error(f, [np.zeros(len(pairs))], h=1e-5)
    Om, Er = np.zeros((Q, Q)), np.zeros((Q, Q))
    for (i, j), gk, ek in zip(pairs, g, e):
        Om[i, j], Om[j, i] = -gk / 2, gk / 2
        Er[i, j] = Er[j, i] = ek / 2
    return Om, Er


def _dbeta_formulas(Rs, betas, clusters, yt, l):
    """-dC/dbeta_l: corrected sum_j mean (P^-_{l,Q})^T (tau - yt_j); printed (5.4); Lemma 7.2 as stated."""
    L = len(Rs)
    corr, printed, lemma = np.zeros(len(betas[l])), np.zeros(len(betas[l])), np.zeros(len(betas[l]))
    for j, Xj in enumerate(clusters):
        for i in range(Xj.shape[1]):
            zs, Ps, Pps = _trace(Rs, betas, Xj[:, i])
            res = zs[-1] - yt[j]
            Pm = _Pminus(Ps, Pps, l, L - 1)
            corr += Pm.T @ res / Xj.shape[1]
            lemma -= Pm.T @ res / Xj.shape[1]        # (7.11) stated: d_beta 1/2|.|^2 = +(P^-)^T(...)
            if j >= l:                                # (5.4): sum over l' = l..Q of mu_l' with P^-_{l',Q}
                Pmj = _Pminus(Ps, Pps, j, L - 1)
                inner = _Pplus(Ps, j, L - 1) @ zs[j] - sum(_Pminus(Ps, Pps, k, L - 1) @ betas[k]
                                                           for k in range(j, L)) - yt[j]
                printed -= Pmj.T @ inner / Xj.shape[1]
    return corr, printed, lemma


def _omega_formula(Rs, betas, clusters, yt, l, residual_mistake=False):
    """(5.6)-(5.7): -sum_l' mean [H^(l), M_{l,l'}], M = 1/2 R_l (g z^T + z g^T) R_l^T,
    g = (P^+_{l+1,Q})^T (tau^(Q,1) - yt_l'), z = tau^(l-1,1) + beta_l.  ``residual_mistake``: g replaced by
    -R_l^T R_l(beta_l + yt_l') (the E1 mistake, residual -> -v)."""
    L, Q = len(Rs), Rs[0].shape[0]
    Om = np.zeros((Q, Q))
    for j, Xj in enumerate(clusters):
        for i in range(Xj.shape[1]):
            zs, Ps, Pps = _trace(Rs, betas, Xj[:, i])
            R = Rs[l]
            u = R @ (zs[l] + betas[l])
            h = (u > 0).astype(float)
            g = _Pplus(Ps, l + 1, L - 1).T @ (zs[-1] - yt[j])
            if residual_mistake:
                g = -(betas[l] + yt[j])
            z = zs[l] + betas[l]
            M = 0.5 * R @ (np.outer(g, z) + np.outer(z, g)) @ R.T
            Om -= (np.subtract.outer(h, h) * M) / Xj.shape[1]
    return Om


def _guard(Rs, betas, clusters):
    d = kink_distance(Rs, betas, clusters)
    return d >= KINK, d


# ---------------------------------------------------------------------------
l71 = Claim(
    id="chen.lemma_7_1",
    title="Lemma 7.1: composed truncations are P^+ x minus a P^- combination of the biases",
    label="Lemma 7.1",
    section="7",
    equation="(7.1)-(7.10)",
    lines=(1032, 1088),
    statement=r"\tau^{(\ell_1,\ell_2)}:=\tau^{(\ell_2)}\circ\cdots\circ\tau^{(\ell_1)}:\ \tau^{(\ell_1,\ell_2)}(x)="
              r"P^+_{\ell_1,\ell_2}(x)\,x-\sum_{\ell=\ell_1}^{\ell_2}P^-_{\ell,\ell_2}(x)\,\beta^{(\ell)}",
    status="holds",
    params=_t51_params(),
    notes="D3: tau^(l2,l1) = tau^(l2) o ... o tau^(l1) (as (5.3)/(7.7); (7.1) prints the opposite index order, which the "
          "statement quotes with (7.1)'s definition; read-through 8: it was written in the D3 order).  "
          "Every pair l1 <= l2 and every point of every cluster.  Falsifier 'P_plus_bias': P^+ in place of P^- in "
          "the bias sum.",
    catalogue="chen §2.8 T51a; §3 R9",
    covers=("T51a",),
)


def _l71(p, wrong=False):
    """Lemma 7.1 on every point of every cluster at once, through the array API: the forward pass on the stacked
    columns, the projectors P_k = R_k^T H_k R_k and P_k^perp of each point as (N, Q, Q) stacks, and (7.7) for every
    l1 <= l2 as stacked products applied to each point's z_{l1}."""
    Rs, betas, clusters, yt = _t51_instance(p)
    xp = xp_of(p)
    T = xp.matrix_transpose
    Rx, bx = [on(xp, R) for R in Rs], [on(xp, b) for b in betas]
    Z = on(xp, np.concatenate(clusters, axis=1))              # (Q, N): the lemma is a statement per point
    zs, Ps, Pps = [Z], [], []
    for R, b in zip(Rx, bx):
        U = R @ (Z + xc.col(b))
        h = xc.heav(U).T                                      # (N, Q) activation patterns
        Ps.append((T(R)[None, :, :] * h[:, None, :]) @ R)       # R^T diag(h_i) R, one per point
        Pps.append((T(R)[None, :, :] * (1.0 - h)[:, None, :]) @ R)
        Z = T(R) @ xc.relu(U) - xc.col(b)
        zs.append(Z)
    L = len(Rs)
    S = 1 + max(float(xc.max_abs(z)) for z in zs)

    def plus(l1, l2):                                          # P^+_{l1,l2} = P_{l2} ... P_{l1} (identity if l1 > l2)
        M = xp.eye(p.Q, dtype=xp.float64)
        for k in range(l1, l2 + 1):
            M = Ps[k] @ M
        return M

    err = 0.0
    for l1 in range(L):
        for l2 in range(l1, L):
            Pb = (lambda k: plus(k, l2)) if wrong else (lambda k: plus(k + 1, l2) @ Pps[k])
            rhs = plus(l1, l2) @ T(zs[l1])[:, :, None] - sum(Pb(k) @ bx[k][None, :, None] for k in range(l1, l2 + 1))
            err = max(err, float(xc.max_abs(T(rhs[:, :, 0]) - zs[l2 + 1])))
    tol = 32 * L * p.Q * EPS * S          # products of <= L orthogonal projectors: rounding ~ L Q eps S
    return Outcome(residual=err, tolerance=tol, message=f"max |tau^(l2,l1) - (7.7)| = {err:.2e}")


@l71.numeric(backends=("numpy", "cupy"))
def l71_numeric(p):
    """Lemma 7.1 for every l1 <= l2 (tau^(l1-1,1)(x) as the input of layer l1)."""
    return _l71(p)


l71.property(over=("Q", "points", "seed"), max_examples=15)


@l71.falsifier("P_plus_bias", search=("seed",))
def l71_wrong(p):
    """P^+ in place of P^- in the bias term."""
    return _l71(p, wrong=True)


# ---------------------------------------------------------------------------
t51b = Claim(
    id="chen.theorem_5_1_bias",
    title="Theorem 5.1 bias equation without cluster separation",
    label="Thm 5.1 (5.4), Lemma 7.2",
    section="5, 7",
    equation="(5.4), (7.11)-(7.15)",
    lines=(819, 823),
    statement=r"\partial_s\beta^{(\ell)}=-\sum_{\ell'=\ell}^Q\int dx\,\mu_{\ell'}(x)(P^-_{\ell',Q})^T\Big(P^+_{\ell',Q}"
              r"\tau^{(\ell'-1,1)}(x)-\sum_{\ell''=\ell'}^QP^-_{\ell'',Q}\beta^{(\ell'')}-\tilde y\Big)",
    status="erratum",
    corrected=r"\partial_s\beta^{(\ell)}=-\partial_{\beta^{(\ell)}}\mathcal C_N=\sum_{j=1}^Q\int dx\,\mu_j(x)\,"
              r"(P^-_{\ell,Q}(x))^T\big(\tau^{(Q,1)}(x)-\tilde y_j\big)",
    params=_t51_params(),
    notes="E5: (i) sign: Lemma 7.2 as stated gives +(P^-)^T(...), its proof (7.13)-(7.14) gives -(P^-)^T(...); "
          "(ii) (5.4)/(7.15) pair the cluster index l' (mu_l') with the layer index of P^-_{l',Q} and sum only "
          "l' >= l.  Reference: central differences of the composed cost (solvers/fd.py) for every layer l.  "
          "Falsifiers: 'stated' = printed (5.4) (yt read as yt_l'); 'lemma_7_2' = (7.11) as stated (exactly minus "
          "the truth).  Configurations with a layer coordinate within 1e-3 of a kink are inconclusive.",
    catalogue="chen §2.8 T51b; §4 E5; §3 R9",
    covers=("T51b", "E5", "CL9"),
)


def _t51b(p, which):
    Rs, betas, clusters, yt = _t51_instance(p)
    ok, d = _guard(Rs, betas, clusters)
    if not ok:
        return inconclusive(f"a layer coordinate lies within {d:.1e} of a ReLU kink", kink_distance=d)
    res, tol, rels = 0.0, 0.0, []
    for l in range(len(Rs)):
        g, e = _fd_beta(Rs, betas, clusters, yt, l)
        corr, printed, lemma = _dbeta_formulas(Rs, betas, clusters, yt, l)
        val = {"corrected": corr, "stated": printed, "lemma_7_2": lemma}[which]
        res = max(res, float(np.max(np.abs(val - (-g)))))
        tol = max(tol, float(np.max(e)) + 64 * p.Q ** 2 * EPS * (1 + np.max(np.abs(yt))) * 10)
        rels.append(float(np.linalg.norm(val + g) / max(np.linalg.norm(g), 1e-300)))
    # error model: FD error estimate (fd.gradient_with_error) + rounding of the L-fold products
    return Outcome(residual=res, tolerance=tol, values={"relative_errors": rels},
                   message=f"{which}: max |formula - (-dC/dbeta)_FD| = {res:.2e} (relative {max(rels):.3g})")


@t51b.numeric
def t51b_numeric(p):
    """Corrected bias equation against FD of the composed cost, every layer."""
    return _t51b(p, "corrected")


t51b.property(over=("Q", "points", "seed"), max_examples=8)


@t51b.falsifier({
    "stated": "Printed (5.4).",
    "lemma_7_2": "Lemma 7.2 (7.11) as stated (sign +): relative error exactly 2.",
}, search=("seed",))
def _(p, variant):
    return _t51b(p, variant)


# ---------------------------------------------------------------------------
t51c = Claim(
    id="chen.theorem_5_1_rotation",
    title="Theorem 5.1 rotation generator without cluster separation (Lemma 7.3)",
    label="Thm 5.1 (5.5)-(5.7), Lemma 7.3",
    section="5, 7",
    equation="(5.5)-(5.7), (7.16)-(7.24)",
    lines=(825, 835),
    statement=r"\tilde\Omega_\ell=-\pi_-((\partial_{R_\ell}\mathcal C_N)R_\ell^T)=-\sum_{\ell'=1}^Q\int dx\,\mu_{\ell'}(x)"
              r"[H^{(\ell)},M_{\ell,\ell'}(x)],\ M_{\ell,\ell'}=\tfrac12R_\ell(gz^T+zg^T)R_\ell^T,\ "
              r"g=(P^+_{\ell+1,Q})^T(\tau^{(Q,1)}-\tilde y_{\ell'}),\ z=\tau^{(\ell-1,1)}+\beta^{(\ell)}",
    status="holds",
    params=_t51_params(),
    notes="Reference: central differences of the composed cost along R_l -> expm(E) R_l (Lemma 6.1), every layer.  "
          "Restricted to one layer and one cluster it is the corrected generator of E1, not (3.22): the general "
          "theorem confirms E1.  Falsifier 'residual_minus_v': the residual replaced by -R_l(beta_l + yt) (the E1 "
          "mistake).",
    catalogue="chen §2.8 T51c; §3 R9",
    covers=("T51c",),
)


def _t51c(p, mistake=False):
    Rs, betas, clusters, yt = _t51_instance(p)
    ok, d = _guard(Rs, betas, clusters)
    if not ok:
        return inconclusive(f"a layer coordinate lies within {d:.1e} of a ReLU kink", kink_distance=d)
    res, tol = 0.0, 0.0
    for l in range(len(Rs)):
        Om_fd, er = _fd_omega(Rs, betas, clusters, yt, l)
        Om = _omega_formula(Rs, betas, clusters, yt, l, residual_mistake=mistake)
        res = max(res, float(np.max(np.abs(Om - Om_fd))))
        tol = max(tol, float(np.max(er)) + 64 * p.Q ** 2 * EPS * 10 * (1 + np.max(np.abs(yt))) ** 2)
    return Outcome(residual=res, tolerance=tol, message=f"max |Omega~ (5.6) - Omega_FD| = {res:.2e}")


@t51c.numeric
def t51c_numeric(p):
    """(5.6)-(5.7) against FD along rotations, every layer."""
    return _t51c(p)


t51c.property(over=("Q", "points", "seed"), max_examples=6)


@t51c.falsifier("residual_minus_v", search=("seed",))
def t51c_mistake(p):
    """The E1 mistake in (5.7): residual tau - yt replaced by -(beta + yt)."""
    return _t51c(p, mistake=True)


# ---------------------------------------------------------------------------
t51d = Claim(
    id="chen.theorem_5_1_support",
    title="Support of the l'-th term of (5.4): where P^-_{l',Q} != 0",
    label="Thm 5.1 (5.8)-(5.10)",
    section="5",
    equation="(5.8)-(5.10)",
    lines=(837, 847),
    statement=r"\{P^-_{\ell',Q}\neq0\}\subset(\tau^{(\ell'-1,1)})^{-1}(\mathcal S^\perp_{\ell'})\cap(\tau^{(\ell',1)})^{-1}"
              r"(\mathcal S^+_{\ell'+1})\cap\cdots\cap(\tau^{(Q-1,1)})^{-1}(\mathcal S^+_Q)",
    status="erratum",
    corrected=r"\{P^-_{\ell',Q}\neq0\}\subset(\tau^{(\ell'-1,1)})^{-1}(\mathcal S^\perp_{\ell'})\cap\bigcap_{k>\ell'}"
              r"(\tau^{(k-1,1)})^{-1}(\mathbb R^Q\setminus\mathcal S^-_k)\quad(\text{i.e. (5.10)})",
    params=[Param.int("Q", 2, 2, 4, "dimension = layers", search=(2, 4)),
            Param.int("samples", 1500, 100, 100_000, "random points x ~ 2 N(0,1)"),
            Param.seed("seed of the layers and the points")],
    notes="Random layers (R Haar, beta ~ 0.5 N) and points: corrected form: no point has P^-_{l',Q} != 0 outside the "
          "(5.10) set (count, tolerance 0).  'stated': count of points with P^-_{1,Q} != 0 outside (5.9) (catalogue "
          "misc.py: x = (-0.958, 1.600), max|P^-_{1,2}| = 0.587).",
    catalogue="chen §2.8 T51d; §4 E15",
    covers=("T51d", "E15"),
)


def _t51d(p, printed):
    """(5.10) (or the printed (5.9)) on all ``samples`` points at once, through the array API: the forward pass on
    the stacked columns, P^-_{l,Q} = P^+_{l+1,Q} P_l^perp of every point as an (N, Q, Q) stack, and the sector
    conditions as boolean masks; the first offending (point, layer) pair in point order is the witness."""
    rng = rng_for(p.seed)
    Rs = [random_orthogonal(p.Q, rng) for _ in range(p.Q)]
    betas = [0.5 * rng.standard_normal(p.Q) for _ in range(p.Q)]
    X = 2.0 * rng.standard_normal((p.Q, p.samples))
    xp = xp_of(p)
    T = xp.matrix_transpose
    Z = on(xp, X)
    us, Ps, Pps = [], [], []
    for R, b in zip((on(xp, R) for R in Rs), (on(xp, b) for b in betas)):
        U = R @ (Z + xc.col(b))                               # layer coordinates of every point (input tau^(k-1,1)(x))
        h = xc.heav(U).T
        us.append(U)
        Ps.append((T(R)[None, :, :] * h[:, None, :]) @ R)
        Pps.append((T(R)[None, :, :] * (1.0 - h)[:, None, :]) @ R)
        Z = T(R) @ xc.relu(U) - xc.col(b)
    bad, size = [], []
    for l in range(p.Q):
        Pm = Pps[l]
        for k in range(l + 1, p.Q):
            Pm = Ps[k] @ Pm                                   # P^-_{l,Q} = P_Q ... P_{l+1} P_l^perp
        mP = xp.max(xp.abs(Pm), axis=(-2, -1))
        inside = xp.any(us[l] <= 0, axis=0)                   # tau^(l-1,1)(x) in S^perp_l
        for k in range(l + 1, p.Q):
            inside = inside & (xp.all(us[k] > 0, axis=0) if printed else xp.any(us[k] > 0, axis=0))
        bad.append((mP >= 1e-12) & ~inside)
        size.append(mP)
    bad, size = asnumpy(xp.stack(bad)), asnumpy(xp.stack(size))    # (Q, samples)
    witness = None
    if bad.any():
        i = int(np.argmax(bad.any(axis=0)))
        l = int(np.argmax(bad[:, i]))
        witness = {"x": X[:, i].tolist(), "layer": l + 1, "max_P_minus": float(size[l, i])}
    n_bad = int(bad.sum())
    return Outcome(residual=float(n_bad), tolerance=0.0, values={"witness": witness},
                   message=f"{n_bad} (point, layer) pairs with P^- != 0 outside the {'printed (5.9)' if printed else '(5.10)'} set")


@t51d.numeric(backends=("numpy", "cupy"))
def t51d_numeric(p):
    """(5.10): P^-_{l',Q} != 0 only where layer l' truncates and no later layer fully truncates."""
    return _t51d(p, False)


t51d.property(over=("Q", "seed"), max_examples=5, fixed={"samples": 500})


@t51d.falsifier("stated", search=("seed",))
def t51d_stated(p):
    """(5.9) with S^+_k: points with P^- != 0 but tau^(k-1,1)(x) outside S^+_k exist."""
    return _t51d(p, True)


# ---------------------------------------------------------------------------
t51e = Claim(
    id="chen.theorem_5_1_separated_limit",
    title="Theorem 5.1 under cluster separation reduces to Theorem 3.2 (5.11)-(5.13)",
    label="Thm 5.1 (5.11)-(5.13)",
    section="5",
    equation="(5.11)-(5.13)",
    lines=(849, 863),
    statement=r"R_\ell^TH^{(\ell)}(x)R_\ell x'=x'\ (x\in\mathrm{supp}\,\mu_\ell,\ x'\in\mathrm{supp}\,\mu_{\ell'})"
              r"\Rightarrow(P^-_{\ell',\ell'})^TP^+_{\ell',\ell'}=0\ \text{and (5.4) reduces to (3.19)}",
    status="heuristic",
    notes="(5.13) (P^-_{l,l})^T P^+_{l,l} = R^T H^perp H R = 0 is immediate (verified in chen.commutator_identity-type "
          "algebra, H H^perp = 0).  (5.12) is garbled (E16): it evaluates H at the wrong point; the intended "
          "condition is H^(l)(.) = 1 on the other clusters or their images (D6).  'In agreement with Theorem 3.2' "
          "holds for the beta-equation only: the rotation part agrees with the corrected E1 generator "
          "(chen.theorem_5_1_rotation).  Registered without a check: the substantive content is covered by "
          "chen.theorem_5_1_bias/rotation and chen.effective_flow.",
    catalogue="chen §2.8 T51e; §4 E16",
    covers=("T51e", "E16"),
)
