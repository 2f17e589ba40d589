"""Menon §5.3-5.4 (seed lines 390-430): the SVD parametrisation z of the balanced varieties and its
rank-deficient extension.

Sign convention: G_p is used exactly as in (4.2)/(5.6), ``W_{p+1}^T W_{p+1} = W_p W_p^T - G_p``, i.e.
``G_p = -C_p`` with ``C_p`` of the package docstring (erratum E1).  With this sign the right-to-left
construction (5.7)-(5.8) needs ``R_p^2 - G_p`` psd (G_p negative definite suffices) and the
left-to-right one (5.12) needs ``P_{p+1}^2 + G_p`` psd (G_p positive definite suffices).

Several checks combine a few sub-checks, each with its own error model; they are reported as
``residual = max_i r_i / tol_i`` against ``tolerance = 1`` and every ``r_i``, ``tol_i`` is listed in
``values`` (so ``residual <= 1`` iff every sub-check holds within its own tolerance).
"""
from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.matfun import psd_sqrt
from solvers.xp import xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import EPS, alpha, pairs, rng_for, vec

from ._parametrisations import _balanced_residual, _rank_part


# ===========================================================================
# P5: SVD parametrisation z (5.13)-(5.17)
def _validate_svd(p):
    if p.lam is not None:
        if len(p.lam) != p.d:
            raise ParamError(f"parameter lam must have d={p.d} entries, got {len(p.lam)}")
        if np.any(p.lam <= 0):
            raise ParamError("parameter lam must be positive (Lambda in R_+^d)")


def _z_jacobian(lam, Qs, r=None):
    """Analytic Jacobian of z_r (Stiefel frames Qs[i] of shape d x r) in the coordinates
    (lambda, tangent of each St_{r,d}: Q alpha (alpha in so(r)) and Q_perp E (E in R^{(d-r) x r})).
    Also the Jacobian of phi o z_r.  Returns (J_z, J_phi)."""
    N = len(Qs) - 1
    d, r = Qs[0].shape
    L = np.diag(lam)
    Q = {q: Qs[N - q] for q in range(N + 1)}
    cols_z, cols_phi = [], []
    Sig = np.diag(lam ** N)

    def z_dir(dQ, q0):
        out = []
        for p in range(N, 0, -1):
            V = np.zeros((d, d))
            if p == q0:
                V += dQ @ L @ Q[p - 1].T
            if p - 1 == q0:
                V += Q[p] @ L @ dQ.T
            out.append(V)
        return vec(out)

    for k in range(r):
        E = np.zeros((r, r))
        E[k, k] = 1.0
        cols_z.append(vec([Q[p] @ E @ Q[p - 1].T for p in range(N, 0, -1)]))
        cols_phi.append((Q[N] @ (N * lam[k] ** (N - 1) * E) @ Q[0].T).ravel())
    for q in range(N + 1):
        full = np.linalg.svd(Q[q], full_matrices=True)[0]
        perp = full[:, r:]
        dirs = [Q[q] @ alpha(r, k, l) for (k, l) in pairs(r)]
        dirs += [np.outer(perp[:, i], np.eye(r)[j]) for i in range(d - r) for j in range(r)]
        for dQ in dirs:
            cols_z.append(z_dir(dQ, q))
            if q == N:
                cols_phi.append((dQ @ Sig @ Q[0].T).ravel())
            elif q == 0:
                cols_phi.append((Q[N] @ Sig @ dQ.T).ravel())
    return np.array(cols_z).T, np.array(cols_phi).T


def _svd_parts(lam, Qs, backend="numpy"):
    """Sub-checks on z(Lambda, Q) (error model: each W_p is 2 products of O(1) matrices, |dW_p| <= 10 d eps
    lam_max; products of N of them: 10 N d eps lam_max^N; sqrt of a psd matrix with smallest eigenvalue
    lam_min^2 is Lipschitz with constant 1/(2 lam_min))."""
    N = len(Qs) - 1
    d = Qs[0].shape[0]
    lmax, lmin = float(np.max(lam)), float(np.min(lam))
    sv = np.sort(lam)[::-1]
    Jz, _ = _z_jacobian(lam, Qs)       # analytic Jacobian, assembled column by column on the host
    # array-API path: (Lambda, Q) moved to the backend of ``xp`` (p.backend), every residual and SVD there
    xp = xp_of(backend)
    lamx, Qs, Jz = X.to_xp(xp, [lam]), X.to_xp(xp, Qs), X.to_xp(xp, [Jz])[0]
    lamx = lamx[0]
    Ws = dln.balanced_point(lamx, Qs)
    res13, _ = _balanced_residual(Ws)
    W = dln.prod(Ws)
    Sig = X.diag(lamx ** N)
    parts = {
        "(5.13) balanced": (res13, 20 * d * EPS * lmax ** 2),
        "(5.17) W = Q_N S Q_0^T": (X.fro(W - Qs[0] @ Sig @ Qs[-1].T), 10 * N * d * EPS * lmax ** N * np.sqrt(d)),
        "sv(W_p) = Lambda": (max(float(np.max(np.abs(X.host(xp.linalg.svdvals(w)) - sv))) for w in Ws),
                             10 * d * EPS * lmax),
    }
    if N > 1:
        r14 = max(X.norm2(psd_sqrt(dln.layer(Ws, p) @ dln.layer(Ws, p).T)
                          - psd_sqrt(dln.layer(Ws, p + 1).T @ dln.layer(Ws, p + 1))) for p in range(1, N))
        parts["(5.14) R_p = P_{p+1}"] = (r14, 40 * d * EPS * lmax ** 2 / lmin)
    dim = d * d + (N - 1) * d * (d - 1) // 2
    parts["rank Dz = dim M"], rank, smin = _rank_part(Jz, dim)
    return parts, {"rank_Dz": rank, "dim_M": dim, "n_coordinates": Jz.shape[1], "smin_Dz": smin,
                   "lam": lam.tolist()}, Ws


def _svd_instance(p):
    rng = rng_for(p.seed)
    if p.lam is not None:
        lam = np.asarray(p.lam, dtype=float)
    else:
        lam = rng.uniform(0.5, 1.8, p.d)
        for _ in range(1000):
            if p.d < 2 or np.min(np.abs(np.diff(np.sort(lam)))) >= p.min_gap:
                break
            lam = rng.uniform(0.5, 1.8, p.d)
    Qs = [dln.random_orthogonal(p.d, rng) for _ in range(p.N + 1)]
    return lam, Qs


svd_parametrisation = Claim(
    id="menon.svd_parametrisation",
    title="SVD parametrisation z of the balanced manifold M; W = Q_N Sigma Q_0^T",
    label="(5.13)-(5.17)",
    section="5.3",
    equation="(5.13)-(5.17)",
    lines=(390, 414),
    statement=r"W_p=Q_p\Lambda Q_{p-1}^T,\ \Lambda=\Sigma^{1/N}\ \Rightarrow\ W_{p+1}^TW_{p+1}=W_pW_p^T,"
              r"\ R_p=P_{p+1},\ W=Q_N\Sigma Q_0^T;\ \mathfrak z\text{ a local bijection for distinct }\sigma_i",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width", search=(1, 4)),
        Param.int("N", 3, 1, 8, "depth", search=(1, 5)),
        Param.seed("seed of Lambda and Q_N..Q_0"),
        Param.float("min_gap", 0.05, 0.0, 1.0, "smallest gap between the drawn lambda_i", low_open=True),
        Param.vector("lam", None, "Lambda of your own (d positive entries)"),
    ],
    validate=_validate_svd,
    notes="The coordinates (Lambda, Q_N..Q_0) number d + (N+1)d(d-1)/2 = d^2 + (N-1)d(d-1)/2 = dim M, so "
          "'local bijection' means Dz has full column rank, checked with the exact (analytic) Jacobian. "
          "Globally z is not injective: a common sign matrix D (Q_p -> Q_p D) leaves every W_p unchanged, "
          "a 2^d-fold cover (and permutations of Lambda, fixed by the ordering (5.18)).  With repeated "
          "singular values Dz drops rank (falsifier repeated_singular_values).",
    catalogue="menon §2.4 P5; §3 (rank 18 for d=3, N=4)",
)


@svd_parametrisation.numeric(backends=("numpy", "cupy"))
def _(p):
    """(5.13), (5.14), (5.17), singular values of each W_p, and rank Dz = d^2 + (N-1)d(d-1)/2 (array-API path
    on p.backend; the analytic Jacobian is assembled on the host)."""
    lam, Qs = _svd_instance(p)
    if p.d > 1 and np.min(np.abs(np.diff(np.sort(lam)))) < 1e-8 * np.max(lam):
        return inconclusive("repeated singular values: outside the hypothesis 'distinct singular values'",
                            lam=lam.tolist())
    parts, vals, _ = _svd_parts(lam, Qs, p.backend)
    return Outcome.from_parts(parts, "SVD parametrisation z", vals)


svd_parametrisation.property(over=("d", "N", "seed"), max_examples=15)


def _cayley(d, name):
    """Rotation by the Cayley transform, as (numerator, denominator): Q = (I - A)(I + A)^{-1}, A skew."""
    ks = sp.symbols(f"{name}_0:{d * (d - 1) // 2}")
    A = sp.zeros(d, d)
    for j, (k, l) in enumerate(pairs(d)):
        A[k, l], A[l, k] = ks[j], -ks[j]
    I = sp.eye(d)
    return ((I - A) * (I + A).adjugate()).applyfunc(sp.expand), sp.expand((I + A).det())


def _svd_param_prove(variant="stated"):
    """Polynomial entries of (5.13) (balance) and (5.17) (telescoping) that do not expand to zero, with
    W_p = Q_p Lambda Q_{p-1}^T as printed or (variant transposes_swapped) W_p = Q_{p-1} Lambda Q_p^T."""
    swap = variant == "transposes_swapped"
    bad, inst = 0, []
    # (i) d = 2, N = 2, 3: every Q_p a Cayley rotation (and Q_0 a reflection), full statement
    for d, N in ((2, 2), (2, 3)):
        lam = sp.symbols(f"l1:{d + 1}", positive=True)
        L = sp.diag(*lam)
        Qn = [_cayley(d, f"q{p}") for p in range(N + 1)]
        Qn[0] = (Qn[0][0] * sp.diag(1, -1), Qn[0][1])
        for num, den in Qn:  # the Cayley numerators are orthogonal up to den^2
            bad += sum(1 for x in (num.T * num - den ** 2 * sp.eye(d)) if sp.expand(x) != 0)
        Wn = [(Qn[p - 1][0] * L * Qn[p][0].T if swap else Qn[p][0] * L * Qn[p - 1][0].T, Qn[p][1] * Qn[p - 1][1])
              for p in range(1, N + 1)]
        for p in range(1, N):
            (A, a), (B, b) = Wn[p], Wn[p - 1]  # W_{p+1} = A / a, W_p = B / b
            bad += sum(1 for x in ((A.T * A) * b ** 2 - (B * B.T) * a ** 2) if sp.expand(x) != 0)
        num, den = Wn[-1]
        for p in range(N - 2, -1, -1):
            num, den = num * Wn[p][0], den * Wn[p][1]
        target = Qn[N][0] * sp.diag(*[x ** N for x in lam]) * Qn[0][0].T
        bad += sum(1 for x in (num * Qn[N][1] * Qn[0][1] - target * den) if sp.expand(x) != 0)
        inst.append(f"d={d}, N={N} (Cayley rotations, Q_0 a reflection)")
    # (ii) d = 3, N = 2: only the orthogonality that each identity uses is imposed
    d = 3
    lam = sp.symbols("l1:4", positive=True)
    L = sp.diag(*lam)
    gen = lambda c: sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{c}{i}{j}"))
    n1, d1 = _cayley(d, "q1")
    Q0, Q2 = gen("a"), gen("b")  # arbitrary matrices: (5.17) needs only Q_1^T Q_1 = I
    bad += sum(1 for x in ((Q2 * L * n1.T) * (n1 * L * Q0.T) - Q2 * L * L * Q0.T * d1 ** 2) if sp.expand(x) != 0)
    n0, d0 = _cayley(d, "q0")
    n2, d2 = _cayley(d, "q2")
    Q1 = gen("c")  # arbitrary: (5.13) at p = 1 needs only Q_0, Q_2 orthogonal
    W2, W1 = (Q1 * L * n2.T, n0 * L * Q1.T) if swap else (n2 * L * Q1.T, Q1 * L * n0.T)
    bad += sum(1 for x in ((W2.T * W2) * d0 ** 2 - (W1 * W1.T) * d2 ** 2) if sp.expand(x) != 0)
    inst.append("d=3, N=2 (Q_1 Cayley, Q_0 Q_2 arbitrary for (5.17); Q_0 Q_2 Cayley, Q_1 arbitrary for (5.13))")
    return int(bad), inst


@svd_parametrisation.symbolic(timeout=60)
def _(p):
    """Polynomial identities (denominators cleared, sympy.expand): (5.13) and the telescoping (5.17)."""
    bad, inst = _svd_param_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "Cayley rotations Q = (I-A) adj(I+A) / det(I+A), denominators cleared, sympy.expand",
        "instances": inst,
        "proved": "W_{p+1}^T W_{p+1} = W_p W_p^T and W_N...W_1 = Q_N Lambda^N Q_0^T"},
        message="number of polynomial entries that did not expand to zero")


@svd_parametrisation.mutant({
    "transposes_swapped": "W_p = Q_{p-1} Lambda Q_p^T (the frames on the wrong sides)",
}, timeout=60)
def _(p, variant):
    """(5.13) perturbed, through the same procedure: entries must stay nonzero."""
    bad, _ = _svd_param_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} polynomial entries did not expand to zero for {variant}")


@svd_parametrisation.reproduction
def _(p):
    """rank Dz for d=3, N=4 (catalogue §3 quotes 18 = dim M)."""
    quoted = 18
    p = svd_parametrisation.resolve({"d": 3, "N": 4, "seed": 0})
    lam, Qs = _svd_instance(p)
    parts, vals, _ = _svd_parts(lam, Qs)
    got = vals["rank_Dz"]
    return Outcome(residual=abs(got - quoted), tolerance=0,
                   values={"rank_Dz": got, "quoted": quoted, "formula": vals["dim_M"],
                           "rank_subcheck": parts["rank Dz = dim M"]},
                   message=f"rank Dz = {got} vs quoted {quoted} (exact integer)")


@svd_parametrisation.falsifier("sign_cover", search=("seed",))
def _(p):
    """'z is injective' fails: all 2^d common sign matrices D (Q_p -> Q_p D) give the same point.
    Residual: the distance between two such coordinate points; tolerance: image rounding / s_min(Dz)."""
    lam, Qs = _svd_instance(p)
    d, N = p.d, p.N
    Ws = dln.balanced_point(lam, Qs)
    tol_img = 20 * N * d * EPS * np.max(lam)
    Jz, _ = _z_jacobian(lam, Qs)
    smin = float(np.linalg.svd(Jz, compute_uv=False)[-1])
    same, far = 0, 0.0
    for signs in itertools.product([1.0, -1.0], repeat=d):
        D = np.diag(signs)
        W2 = dln.balanced_point(lam, [Q @ D for Q in Qs])
        if np.linalg.norm(vec(W2) - vec(Ws)) <= tol_img:
            same += 1
            far = max(far, float(np.linalg.norm(vec([Q @ D - Q for Q in Qs]))))
    return Outcome(residual=far, tolerance=tol_img / max(smin, 1e-300),
                   values={"cover_degree": same, "expected_2^d": 2 ** d, "max_coordinate_distance": far},
                   message=f"{same} distinct coordinate points map to the same W (2^d = {2 ** d})")


@svd_parametrisation.falsifier("repeated_singular_values", search=("seed", "d", "N"), fixed={"d": 2})
def _(p):
    """Drop 'distinct singular values': with lambda_1 = lambda_2, Dz loses rank (direction alpha_12 on all
    Q_p at once), so z is not a local bijection there."""
    lam, Qs = _svd_instance(p)
    if p.d < 2:
        return inconclusive("d = 1 has no repeated singular values")
    lam = lam.copy()
    lam[1] = lam[0]
    parts, vals, _ = _svd_parts(lam, Qs)
    return Outcome.from_parts(parts, "z at repeated singular values", vals)


# ===========================================================================
# P6: rank-deficient case (5.18)-(5.20), erratum E7
def _validate_rank(p):
    if p.r > p.d:
        raise ParamError(f"parameter r={p.r} exceeds d={p.d}")


def _rank_instance(p):
    rng = rng_for(p.seed)
    for _ in range(1000):
        lam = np.sort(rng.uniform(0.5, 1.8, p.r))[::-1]
        if p.r < 2 or np.min(-np.diff(lam)) >= 0.05:
            break
    Qfull = [dln.random_orthogonal(p.d, rng) for _ in range(p.N + 1)]
    return lam, Qfull


def _zr(lam, Qs_st):
    L = X.diag(lam)
    return [Qs_st[i] @ L @ Qs_st[i + 1].T for i in range(len(Qs_st) - 1)]


def _rank_parts(p, printed=False):
    d, r, N = p.d, p.r, p.N
    lam, Qfull = _rank_instance(p)
    Qst_h = [Q[:, :r] for Q in Qfull]
    # array-API path: the frames and Lambda moved to p.backend; Jacobians assembled on the host, ranked there
    xp = xp_of(p)
    lamx, Qst = X.to_xp(xp, [lam])[0], X.to_xp(xp, Qst_h)
    Ws = _zr(lamx, Qst)
    W = dln.prod(Ws)
    s = X.host(xp.linalg.svdvals(W))  # decreasing: the ordering (5.18)
    lmax = float(lam[0])
    tz = 10 * N * d * EPS * lmax ** N * np.sqrt(d)  # rounding of the N-fold product
    zero_idx = list(range(d - r, d)) if printed else list(range(r, d))  # 0-based: sigma_{d-r+1..d} / sigma_{r+1..d}
    zs = float(np.max(s[zero_idx])) if zero_idx else 0.0
    parts = {("printed (5.19) sigma_{d-r+1..d} = 0" if printed else "(5.19) sigma_{r+1..d} = 0"): (zs, tz)}
    vals = {"singular_values": s.tolist(), "r": r, "d": d, "zero_indices_1based": [i + 1 for i in zero_idx]}
    if not printed:
        parts["rank W = r (sigma_r > 0)"] = (tz, float(s[r - 1]))
        res13, _ = _balanced_residual(Ws)
        parts["(5.13) balanced"] = (res13, 20 * d * EPS * lmax ** 2)
        parts["(5.17) W = Q_N S Q_0^T"] = (X.fro(W - Qst[0] @ X.diag(lamx ** N) @ Qst[-1].T), tz)
        # only the first r columns of each Q_p matter: full-frame z with Lambda padded by zeros, and a
        # different completion of the frames, give the same point
        lam0 = np.concatenate([lam, np.zeros(d - r)])
        rng = rng_for(p.seed + 1)
        Qalt = []
        for Q in Qfull:
            perp = Q[:, r:] @ dln.random_orthogonal(d - r, rng) if d > r else Q[:, r:]
            Qalt.append(np.hstack([Q[:, :r], perp]))
        lam0 = X.to_xp(xp, [lam0])[0]

        def dist(As):  # |vec(As) - vec(Ws)|
            return float(np.sqrt(sum(X.vdot(a - w, a - w) for a, w in zip(As, Ws))))
        diff = max(dist(dln.balanced_point(lam0, X.to_xp(xp, Qfull))),
                   dist(dln.balanced_point(lam0, X.to_xp(xp, Qalt))))
        parts["only first r columns matter"] = (diff, 20 * N * d * EPS * lmax)
        Jz, Jphi = X.to_xp(xp, _z_jacobian(lam, Qst_h))
        ncoord = r + (N + 1) * (r * d - r * (r + 1) // 2)
        parts["Dz_r injective"], rz, _ = _rank_part(Jz, ncoord)
        parts["rank D(phi o z_r) = dim M_r-frak"], rphi, _ = _rank_part(Jphi, r * (2 * d - r))
        vals.update({"rank_Dz_r": rz, "n_coordinates": ncoord, "rank_Dphi_z": rphi,
                     "dim_frak_M_r": r * (2 * d - r)})
    return parts, vals


rank_deficient_svd = Claim(
    id="menon.rank_deficient_svd",
    title="Rank-deficient SVD parametrisation z_r of M_r",
    label="(5.18)-(5.20)",
    section="5.4",
    equation="(5.18)-(5.20)",
    lines=(416, 430),
    statement=r"\sigma_1\ge\dots\ge\sigma_d;\ \operatorname{rank}W=r<d\Rightarrow\sigma_{d-r+1}=\dots=\sigma_d=0;"
              r"\ \mathfrak z_r:\mathbb R_+^d\times St_{r,d}^{N+1}\to\mathcal M_r,\ \phi(\mathcal M_r)=\mathfrak M_r",
    status="erratum",
    corrected=r"\operatorname{rank}W=r\Rightarrow\sigma_{r+1}=\dots=\sigma_d=0\ (\sigma_r>0);\ "
              r"\mathfrak z_r:\mathbb R_+^r\times St_{r,d}^{N+1}\to\mathcal M_r,\ W_p=Q_p\Lambda Q_{p-1}^T",
    params=[
        Param.int("d", 3, 2, 6, "width", search=(2, 5)),
        Param.int("r", 2, 1, 6, "rank (1 <= r <= d)", search=(1, 4)),
        Param.int("N", 3, 1, 6, "depth", search=(1, 4)),
        Param.seed("seed of Lambda and the frames"),
    ],
    validate=_validate_rank,
    notes="Erratum E7 (line 422): with the decreasing order (5.18) rank r means the last d - r singular "
          "values vanish, sigma_{r+1} = ... = sigma_d = 0; the printed sigma_{d-r+1..d} claims r zeros, "
          "false whenever 2r > d (e.g. d=3, r=2), true but too weak when 2r <= d.  Also: in (5.20) "
          "Lambda must lie in R_+^r (with Lambda in R_+^d and Q_p in St_{r,d} the product Q_p Lambda "
          "Q_{p-1}^T is not defined); eta_r on line 430 is undefined (presumably z_r).  The numeric check "
          "also tests 'only the first r columns of each Q_p matter' (line 424), that z_r is an immersion "
          "(rank = r + (N+1)(rd - r(r+1)/2), our count, not printed) and that phi o z_r has rank "
          "r(2d - r) = dim frak M_r (4.20).",
    catalogue="menon §2.4 P6; §4 E7",
)


@rank_deficient_svd.numeric(backends=("numpy", "cupy"))
def _(p):
    """Corrected (5.19) on z_r(Lambda, Q) with Lambda in R_+^r, Stiefel frames, rank and immersion checks."""
    parts, vals = _rank_parts(p)
    return Outcome.from_parts(parts, "rank-deficient parametrisation z_r", vals)


rank_deficient_svd.property(over=("d", "r", "N", "seed"), max_examples=15)


@rank_deficient_svd.falsifier("stated", search=("d", "r", "seed"), fixed={"d": 3, "r": 2})
def _(p):
    """Printed (5.19): sigma_{d-r+1} = ... = sigma_d = 0 for rank r < d (fails when 2r > d)."""
    if p.r >= p.d:
        return inconclusive("(5.19) is stated for rank r < d", r=p.r, d=p.d)
    parts, vals = _rank_parts(p, printed=True)
    return Outcome.from_parts(parts, "printed (5.19) zero pattern", vals)
