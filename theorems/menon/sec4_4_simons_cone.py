"""Menon §4.4 (seed lines 310-334): the Simons cone (Remark 8) and the Bures-Wasserstein remark
(Remark 9, E10).

Conventions: see the package docstring (``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``, tuples
``[W_N, ..., W_1]``).  Every tolerance below is written next to its error model.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.menon._common import EPS, balanced_instance, rng_for

from ._balanced import _fro, _jac_C, _numerical_rank, _rational_orthogonal


# ===========================================================================
# 7. Remark 8: the Simons cone
cone = Claim(
    id="menon.simons_cone",
    title="For d = N = 2 the balanced manifold is 5-dimensional inside the Simons cone, which is minimal",
    label="Remark 8",
    section="4.4",
    equation="(4.24)-(4.28)",
    lines=(310, 328),
    statement=r"d=N=2:\ \mathcal M_{\mathbf 0}=\{(4.25)\text{-}(4.27)\}\subset\mathcal C=\{|a|^2=|b|^2\}"
              r"\subset\mathbb R^8,\ \dim\mathcal M=5,\ \mathcal C\ \text{has zero mean curvature at}\ x\ne0",
    status="holds",
    params=[
        Param.seed("seed of the balanced point and the cone points"),
        Param.int("m", 4, 1, 8, "dimension of the a-block of the cone {|a|^2 = |b|^2} (Remark 8: 4); the numeric "
                  "check takes the b-block of the same dimension (the claim is about m = n)"),
        Param.int("n", None, 1, 8, "dimension of the b-block (default: n = m, the claim; Remark 8: 4, 4); an n != m "
                  "is the falsifier unequal_cone's (the numeric check is inconclusive there; sweeps keep n = m)"
                  ).for_falsifiers(),
        Param.int("points", 5, 1, 100, "number of random cone points"),
    ],
    notes="Mean curvature = div of the unit normal grad f/|grad f| (sum of principal curvatures), computed "
          "by the complex-step derivative (exact to rounding, no step-size error).  For the cone "
          "{|a|^2=|b|^2} in R^{m+n} it equals (m-n)/|x| on the cone, so it is minimal iff m = n.  Area "
          "minimality (Bombieri-De Giorgi-Giusti) and the regularity of minimal surfaces for n <= 7 are "
          "cited background, not checked.  Note x_1..x_4 = W_1 and x_5..x_8 = W_2 row-major; (4.28) is the "
          "trace of (4.4).",
    catalogue="menon §2.2 R8; §3 table",
)


def _mean_curvatures(P, m, xp):
    """div(nu) at every row of P (k points x (m+n)) at once, by complex step: the batch Z[k, i] = P[k] + i h e_i
    is formed on the host and moved to ``xp`` (array API); nu_i(Z[k, i]) = sgn_i Z[k, i, i] / sqrt(sum Z[k, i]^2)."""
    h = 1e-30
    k, D = P.shape
    Zh = P[:, None, :].astype(complex) + 1j * h * np.eye(D)[None, :, :]
    sgn = np.concatenate([np.ones(m), -np.ones(D - m)])
    Z, S, I = X.to_xp(xp, [Zh, sgn, np.eye(D)])
    diagZ = xp.sum(Z * I, axis=-1)                      # Z[k, i, i]
    nu = S * diagZ / xp.sqrt(xp.sum(Z * Z, axis=-1))     # nu_i at Z[k, i]
    return xp.sum(xp.imag(nu), axis=-1) / h


def _cone_points(rng, m, n, k):
    pts = []
    for _ in range(k):
        u, v = rng.standard_normal(m), rng.standard_normal(n)
        r = rng.uniform(0.3, 3.0)
        pts.append(np.concatenate([r * u / np.linalg.norm(u), r * v / np.linalg.norm(v)]))
    return pts


def _cone_outcome(p, equal_blocks=False):
    """The (m, n) cone, or with ``equal_blocks`` the (m, m) cone of the claim."""
    rng = rng_for(p.seed)
    m, n = (p.m, p.m) if equal_blocks or p.n is None else (p.m, p.n)
    pts = _cone_points(rng, m, n, p.points)
    values = {}
    if m == 4 and n == 4:
        lam, Qs, (W2, W1) = balanced_instance(2, 2, p.seed)
        x = np.concatenate([W1.ravel(), W2.ravel()])  # (4.24)
        pts.insert(0, x)
        eqs = W2.T @ W2 - W1 @ W1.T  # (4.25)-(4.27) are its (0,0), (0,1), (1,1) entries
        J = X.to_xp(xp_of(p), [_jac_C([W2, W1])])[0]   # assembled on the host, its SVD on p.backend
        rank, grey, _ = _numerical_rank(J)
        values.update(balanced_point=x.tolist(), equations_4_25_27=[eqs[0, 0], eqs[0, 1], eqs[1, 1]],
                      cone_f=float(np.sum(x[:4] ** 2) - np.sum(x[4:] ** 2)), jacobian_rank=rank,
                      dimension=8 - rank)
        if grey:
            return inconclusive("Jacobian rank undecidable (grey zone)", **values)
    # array-API path: all cone points at once on p.backend (H |x| and f / |x|^2 per point)
    xp = xp_of(p)
    P = X.to_xp(xp, [np.stack(pts)])[0]
    r2 = xp.sum(P * P, axis=-1)
    H = X.host(xp.abs(_mean_curvatures(X.host(P), m, xp)) * xp.sqrt(r2)).tolist()
    f = X.host(xp.abs(xp.sum(P[:, :m] ** 2, axis=-1) - xp.sum(P[:, m:] ** 2, axis=-1)) / r2).tolist()
    values.update(H_times_r=H, f_over_r2=f)
    resid = max(max(H), max(f))
    if "jacobian_rank" in values:
        resid += abs(values["jacobian_rank"] - 3)
    # error model: |x| div(nu) sums m+n complex-step terms, each exact to ~4 eps; f/|x|^2 cancels two sums
    # of squares of unit-scale entries, ~ (m+n) eps.  64 (m+n) eps; a rank mismatch adds >= 1.
    tol = 64 * (m + n) * EPS
    return Outcome(residual=resid, tolerance=tol, values=values,
                   message="max(|x| |H(x)|, |f(x)|/|x|^2) over cone points (+ |rank - 3| at the balanced point)")


@cone.numeric(backends=("numpy", "cupy"))
def _(p):
    """Balanced (W_2, W_1) lies on the cone, the Jacobian of (4.25)-(4.27) has rank 3 (dim 5), and H = 0, on the
    cone with blocks (m, m).  (n is the falsifier's: a sweep drawing m and n independently used to leave 7 draws in
    8 inconclusive, m != n being outside the claim; the falsifier unequal_cone keeps m = 3, n = 5.)"""
    if p.n is not None and p.n != p.m:   # sweeps leave n at its default None (= m)
        return inconclusive(f"m={p.m}, n={p.n}: the claim is about the cone with m = n (Remark 8: 4, 4); for m != n "
                            f"its mean curvature is (m - n)/|x| (see the falsifier unequal_cone)")
    out = _cone_outcome(p, equal_blocks=True)
    if isinstance(out.values, dict):
        out.values["blocks"] = [p.m, p.m]
    return out


cone.property(over=("seed",), max_examples=12)


def _cone_system(x, variant="stated"):
    """(4.25)-(4.27) as printed (left minus right side), and the nearest misprints."""
    if variant == "transposes_swapped":  # read off W_2W_2^T - W_1^TW_1 instead of (4.4)
        return [(x[4]**2 + x[5]**2) - (x[0]**2 + x[2]**2), (x[4]*x[6] + x[5]*x[7]) - (x[0]*x[1] + x[2]*x[3]),
                (x[6]**2 + x[7]**2) - (x[1]**2 + x[3]**2)]
    rhs_4_26 = x[0]*x[1] + x[2]*x[3] if variant == "index_4_26" else x[0]*x[2] + x[1]*x[3]
    return [(x[4]**2 + x[6]**2) - (x[0]**2 + x[1]**2), (x[4]*x[5] + x[6]*x[7]) - rhs_4_26,
            (x[5]**2 + x[7]**2) - (x[2]**2 + x[3]**2)]


def _cone_prove(variant="stated"):
    """Failures of: the entries of W_2^TW_2 - W_1W_1^T (4.4) against the system (variant); its (4.25) + (4.27)
    being (4.28); |x|^3 div(grad f/|grad f|) = (m-n)|x|^2 - f on two cones; the system vanishing at a rational
    balanced point with its Jacobian of rank 3 there (dim M = 8 - 3 = 5)."""
    x = sp.symbols("x1:9", real=True)
    W1 = sp.Matrix([[x[0], x[1]], [x[2], x[3]]])
    W2 = sp.Matrix([[x[4], x[5]], [x[6], x[7]]])
    C = W2.T * W2 - W1 * W1.T
    printed = _cone_system(x, variant)
    bad = sum(int(sp.expand(a - b) != 0) for a, b in zip([C[0, 0], C[0, 1], C[1, 1]], printed))
    bad += int(sp.expand(C[1, 0] - C[0, 1]) != 0)
    bad += int(sp.expand(printed[0] + printed[2] - (sum(v**2 for v in x[4:]) - sum(v**2 for v in x[:4]))) != 0)
    curv = {}
    for m, n in [(4, 4), (3, 5)]:
        y = sp.symbols(f"y1:{m + n + 1}", real=True)
        S = sum(v**2 for v in y)
        f = sum(v**2 for v in y[:m]) - sum(v**2 for v in y[m:])
        nu = [(1 if i < m else -1) * y[i] / sp.sqrt(S) for i in range(m + n)]
        div = sum(sp.diff(nu[i], y[i]) for i in range(m + n))
        s = sp.Symbol("s", positive=True)  # s stands for |x|^2, so that the powers of |x| combine
        scaled = sp.expand(sp.expand(div.subs(S, s) * s ** sp.Rational(3, 2)).subs(s, S))
        ok = sp.expand(scaled - ((m - n) * S - f)) == 0
        bad += int(not ok)
        curv[f"{m},{n}"] = "|x|^3 H = (m-n)|x|^2 - f" if ok else str(scaled)
    # exact rank at a rational balanced point: W_1 = Q1 diag(2,1) Q0^T, W_2 = Q2 diag(2,1) Q1^T
    Qs = [_rational_orthogonal(sp.Matrix([[0, s], [-s, 0]])) for s in (sp.Rational(1, 2), sp.Rational(1, 3), 2)]
    Lam = sp.diag(2, 1)
    W2n, W1n = Qs[0] * Lam * Qs[1].T, Qs[1] * Lam * Qs[2].T
    F = sp.Matrix(printed)
    J = F.jacobian(x).subs(dict(zip(x, list(W1n) + list(W2n))))
    rank = J.rank()
    bad += int(rank != 3) + int(any(sp.simplify(e) != 0 for e in F.subs(dict(zip(x, list(W1n) + list(W2n))))))
    return bad, curv, int(rank)


@cone.symbolic(timeout=60)
def _(p):
    """Entries of W_2^TW_2 - W_1W_1^T are (4.25)-(4.27); |x|^3 div(grad f/|grad f|) = (m-n)|x|^2 - f; exact rank 3."""
    bad, curv, rank = _cone_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand / powsimp; exact rational rank", "mean_curvature": curv, "rank": rank,
        "proved": "(4.25)-(4.27) are the entries of (4.4); their sum is (4.28); H = 0 on the m = n = 4 cone, "
                  "H = (m-n)/|x| on the (3,5) cone; dim M = 8 - 3 = 5 at a rational balanced point"},
        message="number of failed identities")


@cone.mutant({
    "transposes_swapped": "the system read off W_2W_2^T = W_1^TW_1: x_5^2 + x_6^2 = x_1^2 + x_3^2, ...",
    "index_4_26": "(4.26) with x_1x_2 + x_3x_4 on the right (row and column of W_1 confused)",
}, timeout=60)
def _(p, variant):
    """(4.25)-(4.27) perturbed, through the same procedure: some identity must fail."""
    bad, _, _ = _cone_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities failed for the system ({variant})")


@cone.falsifier("unequal_cone", search=("seed",), fixed={"m": 3, "n": 5})
def _(p):
    """The cone {|a|^2 = |b|^2} with m = 3, n = 5 is not minimal: |x| H = m - n = -2 on the cone."""
    out = _cone_outcome(p)
    if out.verdict is None:
        out.message = "|x| |H(x)| on the (m, n) cone: (m - n) != 0"
    return out


# ===========================================================================
# 8. Remark 9 and E10: Bures-Wasserstein
bw = Claim(
    id="menon.bures_wasserstein",
    title="N = 2 on V = {W_2 = W_1^T}: the submersion metric g^2 is twice the Bures-Wasserstein metric",
    label="Remark 9; E10",
    section="4.4",
    equation="(4.29)",
    lines=(330, 334),
    statement=r"N=2,\ \mathcal V=\{W_2=W_1^T\},\ W=W_1^TW_1\in\mathbb P_d:\ "
              r"g^2\ \text{(Riemannian submersion of}\ \mathcal V)\ =g^{BW}",
    status="erratum",
    corrected=r"g^2=2\,g^{BW}\ \text{for}\ d_{BW}^2(A,B)=\operatorname{Tr}A+\operatorname{Tr}B-2\operatorname{Tr}"
              r"(A^{1/2}BA^{1/2})^{1/2};\ \text{the flow leaves}\ \mathcal V\ \text{invariant iff}\ E'\ "
              r"\text{is symmetric; then}\ \dot W=-\operatorname{grad}_{g^2}E=-\tfrac12\operatorname{grad}_{BW}E",
    params=[
        Param.int("d", 3, 1, 5, "size of the psd matrices", search=(1, 4)),
        Param.seed("seed of P, Z and the target"),
    ],
    notes="g^2(Z,Z) = min{ |(dW_1^T, dW_1)|^2 = 2|dW_1|^2 : W_1^T dW_1 + dW_1^T W_1 = Z } is computed as a "
          "least-norm problem with a non-symmetric factor W_1 (Cholesky), independently of any Lyapunov "
          "formula; g^BW(Z,Z) = lim d_BW(P, P+eps Z)^2/eps^2 with mpmath (60 digits, eps = 1e-20).  The "
          "factor 2 is |W|^2 = 2|W_1|^2 on V.  The flow: dW_2 - dW_1^T = -(E' - E'^T) W_1^T on V, so V is "
          "invariant iff E' is symmetric (with W_1 invertible); and dW/dt = -(PE' + E'P) satisfies "
          "g^2(-dW/dt, Z) = Tr(E'Z), i.e. the DLN on V is the g^2-gradient flow = BW gradient flow at half speed.",
    catalogue="menon §2.2 R9; §4 E10",
)


def _bw_instance(p):
    rng = rng_for(p.seed)
    d = p.d
    G = rng.standard_normal((d, d))
    P = G @ G.T / d + 0.5 * np.eye(d)
    S = rng.standard_normal((d, d))
    Z = (S + S.T) / 2
    W1 = np.linalg.cholesky(P).T  # W_1^T W_1 = P, W_1 upper triangular (not symmetric)
    return rng, P, Z, W1


def _g2_lift(W1, Z):
    """Least-norm dW_1 with W_1^T dW_1 + dW_1^T W_1 = Z (the horizontal lift); returns dW_1 and cond."""
    d = W1.shape[0]
    iu = np.triu_indices(d)
    K = np.zeros((len(iu[0]), d * d))
    for k in range(d * d):
        V = np.zeros(d * d)
        V[k] = 1.0
        V = V.reshape(d, d)
        K[:, k] = (W1.T @ V + V.T @ W1)[iu]
    sol, *_ = np.linalg.lstsq(K, Z[iu], rcond=None)
    return sol.reshape(d, d), float(np.linalg.cond(K))


def _bw_metric_mp(P, Z, eps_exp=20, dps=60):
    """g^BW(Z,Z) = d_BW(P, P + eps Z)^2 / eps^2 in mpmath, at eps and 2 eps (error estimate)."""
    import mpmath as mp

    with mp.workdps(dps):
        A = mp.matrix(P.tolist())
        Zm = mp.matrix(Z.tolist())
        ev, Q = mp.eigsy(A)
        Ah = Q * mp.diag([mp.sqrt(e) for e in ev]) * Q.T

        def f(eps):
            B = A + eps * Zm
            M = Ah * B * Ah
            M = (M + M.T) / 2
            em, _ = mp.eigsy(M)
            tr = sum(A[i, i] + B[i, i] for i in range(A.rows))
            return (tr - 2 * sum(mp.sqrt(e) for e in em)) / eps**2

        eps = mp.mpf(10) ** (-eps_exp)
        g1, g2 = f(eps), f(2 * eps)
        return float(g1), float(abs(g2 - g1))


def _bw_parts(p, nonsymmetric=False):
    rng, P, Z, W1 = _bw_instance(p)
    d = p.d
    dW1, condK = _g2_lift(W1, Z)
    g2 = 2 * float(np.sum(dW1 * dW1))
    gbw, trunc = _bw_metric_mp(P, Z)
    # the flow on V: E = 1/2|W - Y|^2 with Y symmetric (E' symmetric on symmetric W), or E = W_{12}
    Ws = [W1.T, W1]
    W = dln.prod(Ws)
    if nonsymmetric:
        Ep = np.zeros((d, d))
        Ep[0, min(1, d - 1)] = 1.0
    else:
        S = rng.standard_normal((d, d))
        Ep = W - (S + S.T) / 2
    D = dln.grads(Ws, Ep)
    tangency = _fro(-D[0] + D[1].T)  # dW_2 - dW_1^T
    Wdot = -(D[0] @ W1 + W1.T @ D[1])  # d/dt W_2 W_1
    lift, _ = _g2_lift(W1, -Wdot)  # g^2(-Wdot, Z) = 2 <lift(-Wdot), lift(Z)>
    duality = abs(2 * float(np.sum(lift * dW1)) - float(np.trace(Ep @ Z)))
    scale_flow = _fro(Ep) * float(np.sum(W1 * W1))
    tol_dual = 64 * d * d * EPS * condK * (2 * _fro(lift) * _fro(dW1) + _fro(Ep) * _fro(Z))
    # error model: the least-norm solve has relative forward error ~ cond(K) eps (x 64 d^2 margin); the
    # mpmath side carries the measured truncation |f(2eps) - f(eps)| (rounding there is ~1e-20 relative);
    # the flow terms are products of three factors: ~ 16 d eps |E'| |W_1|^2.
    tol_rel = 64 * d * d * EPS * condK + trunc / max(gbw, 1e-300)
    tol_flow = 16 * d * EPS * scale_flow
    return {"g2": g2, "gBW": gbw, "ratio": g2 / gbw, "cond_K": condK, "mp_truncation": trunc,
            "tangency_|dW2-dW1^T|": tangency, "duality_defect": duality, "tol_rel": tol_rel,
            "tol_flow": tol_flow, "tol_duality": tol_dual, "scale_flow": scale_flow}


@bw.numeric
def _(p):
    """g^2 = 2 g^BW (least-norm lift vs d_BW limit); V invariant for symmetric E'; DLN = g^2-gradient flow."""
    v = _bw_parts(p)
    resid = max(abs(v["g2"] - 2 * v["gBW"]) / (2 * v["gBW"]) / v["tol_rel"],
                v["tangency_|dW2-dW1^T|"] / v["tol_flow"],
                v["duality_defect"] / v["tol_duality"])
    return Outcome(residual=resid, tolerance=1.0, values=v,
                   message="max over the three parts of |defect| / its tolerance (relative g^2 vs 2 g^BW; "
                           "tangency of the flow to V; gradient duality g^2(-dW/dt, Z) = Tr(E'Z))")


@bw.falsifier("stated", search=("seed",))
def _(p):
    """Remark 9 as printed, g^2 = g^BW: off by the factor 2."""
    v = _bw_parts(p)
    return Outcome(residual=abs(v["g2"] - v["gBW"]) / v["gBW"], tolerance=v["tol_rel"], values=v,
                   message="relative defect |g^2 - g^BW| / g^BW (the ratio g^2/g^BW is 2)")


@bw.falsifier("nonsymmetric_energy", search=("seed",))
def _(p):
    """'V is invariant for any E': E = W_{12} (E' = e_1 e_2^T not symmetric) moves the flow off V."""
    if p.d < 2:
        return inconclusive("for d = 1 every E' is symmetric")
    v = _bw_parts(p, nonsymmetric=True)
    return Outcome(residual=v["tangency_|dW2-dW1^T|"], tolerance=v["tol_flow"], values=v,
                   message="|dW_2 - dW_1^T|_F: the flow leaves V")


bw.property(over=("d", "seed"), max_examples=10)


#: the factor c in g^2 = c g^BW: corrected 2, printed 1 (Remark 9), and 4 (|W|^2 counted as 4|W_1|^2)
BW_FACTORS = {"corrected": 2, "as_printed": 1, "factor_4": 4}


def _bw_prove(variant="corrected"):
    """d = 1: g^2(z, z) = min 2 w'^2 subject to 2 w w' = z (the fibre of V over p is {+-sqrt p}: the lift is unique)
    against the eps^2 coefficient of d_BW(p, p + eps z)^2; returns (ratio - factor, g2, gBW, ratio)."""
    p_, z, eps, w = sp.symbols("p z epsilon w", positive=True)
    g2 = 2 * (z / (2 * w)) ** 2  # the fibre is {+-w}: the lift of z is unique, w' = z / (2w)
    g2 = g2.subs(w, sp.sqrt(p_))
    dbw2 = p_ + (p_ + eps * z) - 2 * sp.sqrt(sp.sqrt(p_) * (p_ + eps * z) * sp.sqrt(p_))
    gbw = sp.series(dbw2 / eps**2, eps, 0, 1).removeO()
    ratio = sp.simplify(g2 / gbw)
    return sp.simplify(ratio - BW_FACTORS[variant]), g2, gbw, ratio


@bw.symbolic(timeout=60)
def _(p):
    """d = 1: g^2(z,z) = min 2 w'^2 s.t. 2 w w' = z gives z^2/(2p); d_BW(p, p + eps z)^2 = eps^2 z^2/(4p) + O(eps^3)."""
    diff, g2, gbw, ratio = _bw_prove()
    return Outcome(residual=int(diff != 0), tolerance=0, values={
        "method": "sympy series in eps", "instances": ["d=1"], "g2": str(sp.simplify(g2)), "gBW": str(gbw),
        "ratio": str(ratio), "proved": "g^2 = 2 g^BW for d = 1 (the factor is |W|^2 = 2|W_1|^2 on V)"},
        message="1 if g^2 / g^BW != 2")


@bw.mutant({
    "as_printed": "g^2 = g^BW as printed in Remark 9 (no factor 2)",
    "factor_4": "g^2 = 4 g^BW (|W|^2 counted as 4|W_1|^2)",
}, timeout=60)
def _(p, variant):
    """The factor perturbed, through the same procedure: g^2/g^BW minus it must not vanish."""
    diff, _, _, ratio = _bw_prove(variant)
    return Outcome(residual=int(diff != 0), tolerance=0, values={"ratio_minus_factor": str(diff)},
                   message=f"g^2/g^BW = {ratio}, minus the factor {BW_FACTORS[variant]} ({variant}) is {diff}")
