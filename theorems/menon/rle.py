"""Section 12-14: Riemannian Langevin equations (RLE) for the DLN, Brownian motion on (M_d, g^N),
the entropy gradient, and the numerical remarks of Sections 13-14.

Conventions: see the package docstring (tuples ``[W_N, ..., W_1]``, ``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``).
Throughout, ``W = Q_N Sigma Q_0^T`` is the end-to-end SVD, ``Lambda = Sigma^{1/N}`` (5.15)-(5.17), and the
entropy is Thm 10 without its additive constant, ``S = 1/2 sum_{i<j} log((s_i^2 - s_j^2)/(s_i^{2/N} - s_j^{2/N}))``.
Mean curvature ``H`` of a submanifold is the trace of its second fundamental form (no 1/dim), so the sphere
S_r^{d-1} has ``|H| = (d-1)/r`` pointing inwards (line 896).
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import sympy as sp
from numba import njit

from solvers import dln, fd, rk, sde
from solvers.specialise import register
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

from ._common import EPS, alpha, balanced_instance, mc_paths, pairs, rng_for, vec, with_paths


# ---------------------------------------------------------------------------
# shared helpers
def _entropy(W, N, half=True):
    """Thm 10 entropy of W (up to its constant) from the singular values; ``half=False`` drops the 1/2."""
    s = np.linalg.svd(W, compute_uv=False)
    tot = 0.0
    for i, j in pairs(len(s)):
        tot += math.log((s[i] ** 2 - s[j] ** 2) / (s[i] ** (2 / N) - s[j] ** (2 / N)))
    return 0.5 * tot if half else tot


def _sigma_prime(lam, N):
    """Sigma'_kk of (12.8)."""
    d = len(lam)
    out = np.zeros(d)
    for k in range(d):
        for l in range(d):
            if l != k:
                out[k] += (N * lam[k] ** (2 * N - 1) / (lam[k] ** (2 * N) - lam[l] ** (2 * N))
                           - lam[k] / (lam[k] ** 2 - lam[l] ** 2)) * lam[k] ** (N - 1)
    return out


def _fd_error(est_h, est_2h, rounding):
    """Error model of a central difference: truncation O(h^2) estimated by step doubling
    (|D_h - D_2h| = 3 c h^2, so |D_h - D| ~ |D_h - D_2h| / 3), plus the rounding bound."""
    return float(np.linalg.norm(est_h - est_2h)) / 3 + rounding


def _pred_grad_S(lam, Qs, N, factor=1.0):
    return factor * Qs[0] @ np.diag(_sigma_prime(lam, N)) @ Qs[-1].T


# ===========================================================================
# 1. principle (2): grad(S o phi) is (minus) the mean curvature of the fibre
mean_curv = Claim(
    id="menon.mean_curvature_principle",
    title="The gradient of S∘φ is minus the mean curvature of the fibre (principle (2), sign corrected)",
    label="G12.1 principle (2)",
    section="12.1",
    equation="",
    lines=(904, 907),
    statement=r"\operatorname{grad}_{(\mathcal M,g)}S(\phi(m))\ \text{is the mean curvature } H_{\mathcal O_x}(m)",
    status="erratum",
    corrected=r"\operatorname{grad}_{(\mathcal M,g)}(S\circ\phi)(m)=-H_{\mathcal O_x}(m)"
              r"\quad(H=\text{trace of the second fundamental form, inward for spheres as on l.896})",
    params=[
        Param.choice("orbit", "dln", ["dln", "real_symmetric", "hermitian"],
                     "dln: O_W inside (M, iota) (phi_* H against grad_{g^N} S of (12.13)); real_symmetric/"
                     "hermitian: isospectral orbit {U X U^*} in Sym_d / Her_d with S = c log van(x), c = 1 / 2"),
        Param.int("d", 3, 2, 5, "width / matrix size", search=(2, 4)),
        Param.int("N", 3, 2, 6, "depth (orbit=dln only)", search=(2, 5)),
        Param.seed("seed of Lambda, Q_p (or of the spectrum x)"),
    ],
    notes="Erratum E17 (sign convention). By the first variation of volume, d/dt log vol(O) along a normal "
          "field X is -<H, X>, so grad(S∘phi) = -H with H the (inward, for spheres) trace of the second "
          "fundamental form, the convention of line 896. The printed principle (2) drops the minus sign. "
          "Mean curvature is computed from exact second derivatives of the orbit curves t -> exp(tA).m: "
          "H = sum_{ab} (G^{-1})_{ab} P_nor(d^2/dsdt) with G the Gram matrix of the orbit velocities and P_nor "
          "the projection onto T_m M ⊖ T_m O. For the DLN, phi_* H is compared with -grad_{g^N} S = "
          "-Q_N Sigma' Q_0^T (12.8) (valid because phi is a Riemannian submersion, Thm 13); for the isospectral "
          "orbits the normal space at diag(x) is the diagonal and S = c log van(x) (Remark 16; c = 2 Hermitian, "
          "1 real symmetric). Line 906 of the brief is principle (1); principle (2) is on line 907.",
    catalogue="menon §2.9 G12.1; §2.8 Thm 15(b); §4 E17",
)


def _dln_mean_curvature(lam, Qs, N):
    """phi_* of the mean curvature of O_W in (M, iota) at the balanced point z(lam, Qs), and cond(Gram)."""
    d = len(lam)
    Ws = dln.balanced_point(lam, Qs)
    Q = lambda p: Qs[N - p]  # noqa: E731
    Wp = lambda p: Ws[N - p]  # noqa: E731

    def velocity(A):  # A = [A_0, ..., A_N]; d/dt of Q_p -> e^{tA_p} Q_p
        return vec([A[p] @ Wp(p) - Wp(p) @ A[p - 1] for p in range(N, 0, -1)])

    def second(A, B):  # polarised second derivative of W_p(t) = e^{tA_p} W_p e^{-tA_{p-1}}
        out = []
        for p in range(N, 0, -1):
            out.append(0.5 * (A[p] @ B[p] + B[p] @ A[p]) @ Wp(p) - A[p] @ Wp(p) @ B[p - 1]
                       - B[p] @ Wp(p) @ A[p - 1] + 0.5 * Wp(p) @ (A[p - 1] @ B[p - 1] + B[p - 1] @ A[p - 1]))
        return vec(out)

    Z = np.zeros((d, d))
    gens = []  # the orbit O_W: Q_1..Q_{N-1} free, Q_0 and Q_N fixed
    for p in range(1, N):
        for k, l in pairs(d):
            A = [Z] * (N + 1)
            A[p] = Q(p) @ alpha(d, k, l) @ Q(p).T
            gens.append(A)
    # T_W M: theta-directions Q_p E_ii Q_{p-1}^T (8.2 corrected, E9) and rotations of every Q_p, p = 0..N
    tan = []
    for i in range(d):
        E = np.zeros((d, d))
        E[i, i] = 1.0
        tan.append(vec([Q(p) @ E @ Q(p - 1).T for p in range(N, 0, -1)]))
    for p in range(0, N + 1):
        for k, l in pairs(d):
            A = [Z] * (N + 1)
            A[p] = Q(p) @ alpha(d, k, l) @ Q(p).T
            tan.append(velocity(A))
    U, s, _ = np.linalg.svd(np.array(tan).T, full_matrices=False)
    dim_M = d * d + (N - 1) * d * (d - 1) // 2
    U = U[:, :dim_M]
    V = np.array([velocity(A) for A in gens]).T
    G = V.T @ V
    Gi = np.linalg.inv(G)
    Hamb = sum(Gi[a, b] * second(gens[a], gens[b]) for a in range(len(gens)) for b in range(len(gens)))
    H = U @ (U.T @ Hamb)
    H = H - V @ (Gi @ (V.T @ H))  # remove the orbit-tangential part (T_W O ⊂ T_W M)
    # phi_*(X) = sum_p A_{p+1} X_p B_{p-1}
    Hs = [H[i * d * d:(i + 1) * d * d].reshape(d, d) for i in range(N)]
    push = sum(dln.partial_A(Ws, p + 1) @ Hs[N - p] @ dln.partial_B(Ws, p - 1) for p in range(1, N + 1))
    return push, float(np.linalg.cond(G)), float(s[dim_M - 1] / s[0]), float(np.linalg.norm(Hamb))


def _iso_mean_curvature(x, hermitian):
    """Mean curvature of the isospectral orbit {U X U^*} at X = diag(x) (its diagonal), and cond(Gram)."""
    d = len(x)
    X = np.diag(x).astype(complex)
    gens = []
    for k, l in pairs(d):
        gens.append(alpha(d, k, l).astype(complex))
        if hermitian:
            S = np.zeros((d, d), complex)
            S[k, l] = S[l, k] = 1j / np.sqrt(2)
            gens.append(S)
    comm = lambda A, B: A @ B - B @ A  # noqa: E731
    V = [comm(A, X) for A in gens]
    G = np.array([[np.real(np.vdot(a, b)) for b in V] for a in V])
    Gi = np.linalg.inv(G)
    H = np.zeros(d)
    for a, A in enumerate(gens):
        for b, B in enumerate(gens):
            sec = 0.5 * (comm(A, comm(B, X)) + comm(B, comm(A, X)))
            H += Gi[a, b] * np.real(np.diag(sec))  # normal space at diag(x): real diagonal matrices
    return H, float(np.linalg.cond(G))


def _mean_curv_outcome(p, sign):
    """Compare the pushed-forward mean curvature with sign * grad S (corrected: sign = -1)."""
    if p.orbit == "dln":
        if p.d > 4:
            raise ParamError("orbit=dln needs d <= 4 (the tangent-space SVD is O((N d^2)^3))")
        lam, Qs, _ = balanced_instance(p.d, p.N, p.seed)
        push, condG, _, scale = _dln_mean_curvature(lam, Qs, p.N)
        grad = _pred_grad_S(lam, Qs, p.N)
        # error model: O(N d^2)-term sums and projections in floating point, amplified by the Gram inverse
        tol = 100 * p.N * p.d ** 2 * EPS * condG * (scale + float(np.linalg.norm(grad)))
        res = float(np.linalg.norm(push - sign * grad))
        vals = {"phi_star_H": push.tolist(), "grad_gN_S": grad.tolist(), "lambda": lam.tolist(), "cond_gram": condG}
    else:
        rng = rng_for(p.seed)
        for _ in range(1000):
            x = np.sort(rng.uniform(-2, 2, p.d))
            if np.min(np.diff(x)) > 0.1:
                break
        herm = p.orbit == "hermitian"
        H, condG = _iso_mean_curvature(x, herm)
        c = 2.0 if herm else 1.0
        grad = np.array([c * sum(1 / (x[i] - x[j]) for j in range(p.d) if j != i) for i in range(p.d)])
        tol = 100 * p.d ** 2 * EPS * condG * float(np.linalg.norm(grad) + np.linalg.norm(H))
        res = float(np.linalg.norm(H - sign * grad))
        vals = {"H": H.tolist(), "grad_S": grad.tolist(), "x": x.tolist(), "cond_gram": condG}
    return Outcome(residual=res, tolerance=tol, values=vals,
                   message=f"|H_pushed - ({'-' if sign < 0 else '+'}grad S)| on the {p.orbit} orbit")


@mean_curv.numeric
def _(p):
    """Mean curvature of the fibre from exact second derivatives of orbit curves equals -grad(S∘phi)."""
    return _mean_curv_outcome(p, -1.0)


mean_curv.property(over=("orbit", "d", "N", "seed"), max_examples=12)


@mean_curv.falsifier("stated", search=("seed",))
def _(p):
    """Printed sign: grad(S∘phi) = +H. Refuted by |H + grad S| = 2|grad S|."""
    return _mean_curv_outcome(p, +1.0)


# ===========================================================================
# 2. principle (3): BM upstairs does NOT project to BM downstairs unless fibres are minimal
bm_proj = Claim(
    id="menon.bm_projection_principle",
    title="Brownian motion on (M, g) projects to a diffusion with generator β⁻¹(Δ_h + <∇S, ∇·>), not to BM",
    label="G12.1 principle (3)",
    section="12.1",
    lines=(908, 908),
    statement=r"M_t \text{ with generator } \beta^{-1}\Delta_g \Longrightarrow \phi(M_t) \text{ has generator } "
              r"\beta^{-1}\Delta_h",
    status="erratum",
    corrected=r"\phi(M_t)\ \text{has generator}\ \beta^{-1}\bigl(\Delta_h+\langle\nabla_hS,\nabla_h\,\cdot\,\rangle_h\bigr),"
              r"\ S=\log\operatorname{vol}(\mathcal O_x);\ \text{BM iff the fibres are minimal}",
    params=[
        Param.choice("example", "hermitian", ["hermitian", "radial"],
                     "hermitian: BM on Her_d -> eigenvalues (Dyson); radial: BM on R^d -> r = |x| (Bessel)"),
        Param.int("d", 3, 2, 8, "matrix size / dimension (d >= 2: for d = 1 the fibres are points)", search=(2, 6)),
        Param.float("beta", 2.0, 0.1, 100.0, "inverse temperature"),
        Param.float("T", 1.0, 0.0, 10.0, "time", low_open=True),
        Param.int("paths", 4000, 100, 10**6, "Monte-Carlo samples"),
        Param.seed("seed"),
    ],
    notes="Erratum E13. For f on the quotient, Delta_g(f∘phi) = (Delta_h f + <grad S, grad f>)∘phi (the vertical "
          "trace of the Hessian is -<H, grad f> = <grad S, grad f> by principle (2)). Counterexamples: |x| of BM "
          "in R^d is a Bessel process, drift (d-1)/(beta r); the eigenvalues of BM on Her_d are Dyson BM: "
          "E sum x_i^2 grows at (2/beta) d^2, not at the rate (2/beta) d of BM on the flat quotient (reflection "
          "at the walls adds nothing to sum x_i^2, whose normal derivative vanishes there). sum x_i^2 = |X|_F^2 "
          "alone only tests the degree of homogeneity of S (it is the same for any norm-preserving projection), "
          "so the check also compares p_3 and p_4 of the eigenvalues (radial: r^4), whose rates "
          "6d p_1/beta and (8d p_2 + 4 p_1^2)/beta test grad S pair by pair. All predictions are "
          "exact for all t (the generator closes on these power sums), and the samples are exact Gaussian increments (no time stepping), so the only error "
          "is Monte-Carlo: tolerance 5 standard errors. Also contradicts (12.4) at kappa = 1.",
    catalogue="menon §2.9 G12.1; §4 E13",
)


def _bm_sample(p):
    """The projected process at T under BM with generator beta^{-1} Delta (exact Gaussian increments, no time
    stepping): radial -> r = |x| (returned as x with |x| = r, a function of r only is used), hermitian -> the
    spectrum of X_0 + sqrt(2T/beta) H (H GUE-normalised: Frobenius-orthonormal coordinates have variance 1).
    Returns (samples of the projected point, its start).  Drawn in batches of 20000 paths (bounded memory)."""
    rng = rng_for(p.seed)
    sd = math.sqrt(2 * p.T / p.beta)  # each Frobenius-orthonormal coordinate has variance 2T/beta
    d = p.d
    if p.example == "radial":
        x0 = rng.standard_normal(d)
        r = np.linalg.norm(x0 + sd * rng.standard_normal((p.paths, d)), axis=1)
        return r[:, None], np.array([float(np.linalg.norm(x0))])
    x0 = np.sort(rng.uniform(-1, 1, d)) + 0.5   # p_1(0) != 0, so the odd observable p_3 moves
    out = []
    for start in range(0, p.paths, 20000):
        m = min(20000, p.paths - start)
        A = rng.standard_normal((m, d, d)) + 1j * rng.standard_normal((m, d, d))
        Hm = (A + np.conj(np.swapaxes(A, 1, 2))) / 2  # diag ~ N(0,1); Re, Im of off-diagonals ~ N(0, 1/2)
        out.append(np.linalg.eigvalsh(np.diag(x0)[None] + sd * Hm))  # the projected process phi(M) = spectrum
    return np.concatenate(out), x0


def _power_sums(x):
    return {k: np.sum(x ** k, axis=-1) for k in (1, 2, 3, 4)}


def _bm_predictions(p, x0, generator):
    """E f(x_T) for the observables f, solved from the generator's closed action on power sums (exact in T).

    radial, f in {r^2, r^4}; corrected L = beta^{-1}(d^2/dr^2 + (d-1)/r d/dr): L r^2 = 2d/beta,
    L r^4 = (4d+8) r^2/beta; printed (flat half-line, reflected: r^2, r^4 have zero normal derivative at 0):
    L r^2 = 2/beta, L r^4 = 12 r^2/beta.
    hermitian, f in {p_2, p_3, p_4} of the eigenvalues; corrected L = beta^{-1}(Delta + <grad 2 log van, grad>):
    L p_1 = 0, L p_2 = 2d^2/beta, L p_3 = 6d p_1/beta, L p_4 = (8d p_2 + 4 p_1^2)/beta, L p_1^2 = 2d/beta;
    printed (flat Weyl chamber, reflected at the walls, where these f have zero normal derivative):
    L p_1 = 0, L p_2 = 2d/beta, L p_3 = 6 p_1/beta, L p_4 = 12 p_2/beta, L p_1^2 = 2d/beta.
    p_3 and p_4 see grad S direction by direction, not only its degree of homogeneity (as p_2 = |X|_F^2 does)."""
    d, T, b = p.d, p.T, p.beta
    if p.example == "radial":
        r2 = float(x0[0] ** 2)
        c2, c4 = (2 * d, 4 * d + 8) if generator == "corrected" else (2, 12)
        return {"r^2": r2 + c2 * T / b,
                "r^4": r2 ** 2 + c4 / b * (r2 * T + c2 * T ** 2 / (2 * b))}
    P = _power_sums(x0)
    p1, p2, p3, p4 = (float(P[k]) for k in (1, 2, 3, 4))
    if generator == "corrected":
        a2, a3, a4, a11 = 2 * d * d, 6 * d, (8 * d, 4), 2 * d
    else:
        a2, a3, a4, a11 = 2 * d, 6, (12, 0), 2 * d
    # E p_2(t) = p_2 + a2 t/b; E p_1^2(t) = p_1^2 + a11 t/b; E p_4(T) = p_4 + int_0^T (a4[0] E p_2 + a4[1] E p_1^2)/b
    return {"p_2": p2 + a2 * T / b,
            "p_3": p3 + a3 * p1 * T / b,
            "p_4": p4 + (a4[0] * (p2 * T + a2 * T ** 2 / (2 * b)) + a4[1] * (p1 * p1 * T + a11 * T ** 2 / (2 * b))) / b}


def _bm_outcome(p, generator):
    xs, x0 = _bm_sample(p)
    if p.example == "radial":
        obs = {"r^2": xs[:, 0] ** 2, "r^4": xs[:, 0] ** 4}
        start = {"r^2": float(x0[0] ** 2), "r^4": float(x0[0] ** 4)}
    else:
        P, P0 = _power_sums(xs), _power_sums(x0)
        obs = {f"p_{k}": P[k] for k in (2, 3, 4)}
        start = {f"p_{k}": float(P0[k]) for k in (2, 3, 4)}
    pred = _bm_predictions(p, x0, generator)
    parts, values, decisive = {}, {}, 0
    for name, y in obs.items():
        mean = float(np.mean(y))
        se = float(np.std(y, ddof=1) / math.sqrt(p.paths))
        # rounding of f(x_T) (eigvalsh backward error ~ d eps |M|, relative ~ 4 d eps on a power <= 4) and of
        # the prediction; it is all that is left when T is so small that the increments vanish
        rounding = 32 * p.d * EPS * (abs(start[name]) + float(np.max(np.abs(y))))
        # 5 standard errors per observable (at most three observables: a false alarm needs a 5-sigma excursion)
        parts[name] = (abs(mean - pred[name]), 5 * se + rounding)
        values[name] = {"mean": mean, "predicted": pred[name], "start": start[name], "standard_error": se,
                        "rounding": rounding}
        decisive += int(abs(pred[name] - start[name]) > rounding)
    if not decisive:
        return inconclusive(f"T={p.T!r}: every predicted increment is below the rounding of its observable: "
                            "any rate would pass", **values)
    return Outcome.from_parts(parts, values={"observables": values, "generator": generator},
                              message=f"E f(x_T) vs the {generator} generator's prediction for "
                                      + ", ".join(obs) + " (5 standard errors + rounding each)")


@bm_proj.numeric
def _(p):
    """Monte-Carlo: the projected process moves the observables r^2, r^4 (radial) / p_2, p_3, p_4 of the
    eigenvalues (Dyson) at the rates of the corrected generator beta^{-1}(Delta_h + <grad S, grad>)."""
    return _bm_outcome(p, "corrected")


bm_proj.property(over=("example", "d", "seed"), max_examples=10)


@bm_proj.falsifier("stated", search=("seed",))
def _(p):
    """Printed principle (3): the projection is BM on (X, h) (flat half-line / Weyl chamber, reflected)."""
    return _bm_outcome(p, "printed")


#: the orbit-volume potentials of the corrected generator: radial S(d, r) and Dyson S(x) (Her_d), and misprints
BM_PROJ_VARIANTS = {
    "corrected": (lambda d, r: (d - 1) * sp.log(r),
                  lambda x: 2 * sum(sp.log(x[j] - x[i]) for i in range(len(x)) for j in range(i + 1, len(x)))),
    "radial_dimension_shifted": (lambda d, r: d * sp.log(r),
                                 lambda x: 2 * sum(sp.log(x[j] - x[i]) for i in range(len(x))
                                                   for j in range(i + 1, len(x)))),
    "dyson_half_log_van": (lambda d, r: (d - 1) * sp.log(r),
                           lambda x: sum(sp.log(x[j] - x[i]) for i in range(len(x)) for j in range(i + 1, len(x)))),
}


def _bm_proj_prove(variant="corrected"):
    """Failures of: |grad r|^2 = 1 and Delta r = dS/dr (radial, d = 2..6: the ambient Laplacian of f(r) is
    f'' + S'(r) f'); (Delta + <grad S, grad>) sum x_i^2 = 2 d^2 = Delta_{Her_d} |X|^2 (Dyson, d = 2..4)."""
    S_rad, S_dys = BM_PROJ_VARIANTS[variant]
    bad = 0
    printed_defect = {}
    r = sp.symbols("r", positive=True)
    for d in range(2, 7):
        xs = sp.symbols(f"x1:{d + 1}", positive=True)
        rr = sp.sqrt(sum(x ** 2 for x in xs))
        grad2 = sp.simplify(sum(sp.diff(rr, x) ** 2 for x in xs))
        lap_r = sp.simplify(sum(sp.diff(rr, x, 2) for x in xs))
        dS = sp.diff(S_rad(d, r), r).subs(r, rr)
        bad += int(sp.simplify(grad2 - 1) != 0) + int(sp.simplify(lap_r - dS) != 0)
        printed_defect[d] = str(sp.simplify(lap_r.subs(rr, r)))  # the first-order term principle (3) omits
    for d in range(2, 5):
        x = sp.symbols(f"y1:{d + 1}", real=True)
        S = S_dys(x)
        fq = sum(xi ** 2 for xi in x)
        gen = sum(sp.diff(fq, xi, 2) for xi in x) + sum(sp.diff(S, xi) * sp.diff(fq, xi) for xi in x)
        bad += int(sp.cancel(sp.together(gen - 2 * d ** 2)) != 0)
    return bad, printed_defect


@bm_proj.symbolic(timeout=60)
def _(p):
    """Radial: Delta f(r) = f''|grad r|^2 + f' Delta r with |grad r|^2 = 1 = h^{rr} and Delta r = (d-1)/r = dS/dr
    (S = (d-1) log r), so the generator is Delta_h + <grad S, grad>, not Delta_h; Dyson: the corrected
    generator maps sum x_i^2 to 2 d^2 (times 1/beta), not 2d."""
    bad, printed_defect = _bm_proj_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy simplify/cancel", "instances": "radial d=2..6; Dyson (Her_d, S = 2 log van) d=2..4",
        "omitted_drift_Delta_r": printed_defect,
        "proved": "|grad r| = 1, Delta r = dS/dr; (Delta + <grad 2 log van, grad>) sum x_i^2 = 2 d^2"},
        message="number of failed identities")


@bm_proj.mutant({
    "radial_dimension_shifted": "S = d log r for the sphere S^{d-1} (dimension shifted)",
    "dyson_half_log_van": "S = log van (the square of the Vandermonde dropped) for the Dyson orbits",
}, timeout=60)
def _(p, variant):
    """The potential S perturbed, through the same procedure: some identity must fail."""
    bad, _ = _bm_proj_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} identities failed with S ({variant})")


# ===========================================================================
# 3. RLE generator: sphere with kappa = 0, E = 0
rle_gen = Claim(
    id="menon.rle_generator",
    title="RLE with κ=0: tangential noise upstairs gives deterministic gradient flow of -β⁻¹S downstairs",
    label="G12.1b",
    section="12.1",
    equation="(12.1)-(12.7)",
    lines=(910, 944),
    statement=r"dm=-\operatorname{grad}_gL\,dt+P_m\,dM^\beta\ (\kappa=0)\ \Longrightarrow\ "
              r"\dot x=-\operatorname{grad}_hF_\beta,\ F_\beta=E-\beta^{-1}S",
    status="holds",
    params=[
        Param.int("d", 5, 2, 12, "ambient dimension; the orbits are spheres S_r^{d-1}", search=(2, 8)),
        Param.float("beta", 2.0, 0.1, 100.0, "inverse temperature", search=(0.5, 10.0)),
        Param.float("r0", 1.0, 0.1, 10.0, "initial radius"),
        Param.float("T", 1.0, 0.0, 10.0, "time", low_open=True),
        Param.float("dt", 1e-3, 1e-4, 1e-1, "Euler-Maruyama step (from 1e-4: see notes)"),
        Param.int("paths", 200, 10, 10**5, "paths"),
        Param.seed("seed"),
    ],
    notes="Instance of (12.6)-(12.7): M = R^d, G = SO(d), X = [0, inf) with h = dr^2, S = (d-1) log r, E = 0. "
          "The upstairs SDE dm = sqrt(2/beta) P_m dW (BM at inverse temperature beta, projected on T O) has "
          "d|m|^2 = (2/beta)(d-1) dt exactly (Ito; m^T P_m = 0), so downstairs rdot = (d-1)/(beta r) = "
          "beta^{-1} dS/dr = -grad_h F_beta, deterministic. Euler-Maruyama keeps m^T P_m dW = 0, and each step "
          "adds (2/beta)|P_m dW|^2 = (2/beta) dt chi^2_{d-1}: unbiased, with pathwise spread (2/beta) "
          "sqrt(2(d-1) T dt) (CLT); tolerance 6 times that spread (max over the paths). Equations (12.1)-(12.7) "
          "are formal (the paper says so); only this explicit instance and the Dyson case (Remark 17) are "
          "checkable. F_beta = L - S/beta in (12.5) should read E - S/beta.  Range: dt starts at 1e-4 (was 1e-5: "
          "T/dt up to 1e6 Python-loop steps); paths are capped by the cost model _common.mc_paths (the pathwise "
          "tolerance does not depend on the number of paths).",
    catalogue="menon §2.9 G12.1b; §2.8 G11.2",
)


def _sphere_run(p, kappa):
    rng = rng_for(p.seed)
    m0 = rng.standard_normal(p.d)
    m0 *= p.r0 / np.linalg.norm(m0)
    x0 = np.tile(m0, (p.paths, 1))
    c = math.sqrt(2 / p.beta)

    def noise(x, dB):
        tang = dB - x * (np.sum(x * dB, axis=1) / np.sum(x * x, axis=1))[:, None]
        return c * (tang + math.sqrt(kappa) * (dB - tang))

    n = max(1, int(round(p.T / p.dt)))
    xT = sde.euler_maruyama(lambda x: np.zeros_like(x), noise, x0, p.T / n, n, rng)
    return np.sum(xT ** 2, axis=1), n


def _sphere_outcome(p, r2T, n, rate):
    pred = p.r0 ** 2 + rate * p.T
    spread = (2 / p.beta) * math.sqrt(2 * (p.d - 1) * p.T * (p.T / n))
    # error model: EM fluctuation of |m|^2 (std `spread`, CLT) times 6 for the max over the paths, plus rounding
    tol = 6 * spread + 10 * n * EPS * pred
    res = float(np.max(np.abs(r2T - pred)))
    return Outcome(residual=res, tolerance=tol,
                   values={"r2_predicted": pred, "r2_mean": float(np.mean(r2T)), "r2_path_std": float(np.std(r2T)),
                           "em_spread": spread, "steps": n},
                   message="max over paths of |r_T^2 - (r0^2 + 2(d-1)T/beta)| (pathwise: downstairs is deterministic)")


@rle_gen.numeric
def _(p):
    """Euler-Maruyama of tangential noise on spheres: r_t^2 = r0^2 + 2(d-1)t/beta on every path."""
    paths, stop = mc_paths(p, max(1, int(round(p.T / p.dt))), 1200.0, 150.0, min_paths=10)   # vector EM, d <= 12
    if stop is not None:
        return stop
    r2T, n = _sphere_run(p.replace(paths=paths), 0.0)
    return with_paths(_sphere_outcome(p, r2T, n, 2 * (p.d - 1) / p.beta), p.paths, paths)


rle_gen.property(over=("d", "beta", "seed"), max_examples=10)


@rle_gen.falsifier("isotropic_noise", search=("seed",))
def _(p):
    """kappa = 1 (isotropic noise): the observable is no longer deterministic (and drifts at rate 2d/beta)."""
    r2T, n = _sphere_run(p, 1.0)
    return _sphere_outcome(p, r2T, n, 2 * (p.d - 1) / p.beta)


@rle_gen.falsifier("no_ito_correction", search=("seed",))
def _(p):
    """Forget the Ito correction (tangential noise 'cannot change r'): predicts rdot = 0."""
    r2T, n = _sphere_run(p, 0.0)
    return _sphere_outcome(p, r2T, n, 0.0)


def _rle_gen_prove(variant="stated"):
    """For f = |m|^2 under dm = sqrt(2/beta) P dW (P = P_m, or I for the mutant projection_dropped): nonzero
    entries of the martingale coefficient grad f^T P, plus a failure when the Ito drift (1/beta) tr(P P^T Hess f)
    differs from 2 r beta^{-1} dS/dr (the gradient flow of F_beta = -beta^{-1} S), S = (d-1) log r (d log r for the
    mutant), d = 2..5."""
    bad = 0
    beta, r = sp.symbols("beta r", positive=True)
    for d in range(2, 6):
        m = sp.Matrix(sp.symbols(f"m1:{d + 1}", real=True))
        P = sp.eye(d) if variant == "projection_dropped" else sp.eye(d) - m * m.T / (m.T * m)[0]
        f = (m.T * m)[0]
        grad = sp.Matrix([sp.diff(f, x) for x in m])
        hess = sp.hessian(f, list(m))
        mart = sp.simplify(grad.T * P)                                 # noise coefficient of d f
        drift = sp.simplify((sp.Rational(1, 1) / beta) * (P * P.T * hess).trace())  # (1/2)(2/beta) tr(P P^T Hess)
        S = (d if variant == "S_dimension_shifted" else d - 1) * sp.log(r)
        target = 2 * r * sp.diff(S, r) / beta  # d(r^2)/dt = 2 r rdot with rdot = beta^{-1} S'(r)
        bad += sum(1 for e in mart if e != 0) + int(sp.simplify(drift - target) != 0)
    return bad


@rle_gen.symbolic(timeout=60)
def _(p):
    """Ito for f = |m|^2 under dm = sqrt(2/beta) P_m dW: no martingale part, drift (2/beta)(d-1) = 2 r beta^{-1} dS/dr."""
    bad = _rle_gen_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy simplify (d <= 5)", "instances": [2, 3, 4, 5],
        "proved": "d|m|^2 = (2/beta)(d-1) dt exactly, i.e. rdot = (d-1)/(beta r) = beta^{-1} dS/dr"},
        message="number of nonzero defects")


@rle_gen.mutant({
    "projection_dropped": "dm = sqrt(2/beta) dW (no P_m): the noise leaves the sphere",
    "S_dimension_shifted": "S = d log r for the orbit S^{d-1} (dimension shifted)",
}, timeout=60)
def _(p, variant):
    """The RLE perturbed, through the same procedure: defects must remain."""
    bad = _rle_gen_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"defects": bad},
                   message=f"{bad} nonzero defects for {variant}")


# ===========================================================================
# 4. Theorem 18: Brownian motion on (M_d, g^N)
thm18 = Claim(
    id="menon.dln_brownian_motion",
    title="Brownian motion on (M_d, g^N): Laplace-Beltrami drift (1/β) Q_N Σ'' Q_0^T, noise √eig(A) conjugated",
    label="Thm 18",
    section="12.2",
    equation="(12.9)-(12.10)",
    lines=(946, 966),
    statement=r"dX^\beta=\sqrt{2/\beta}\,\bigl(\sqrt{a_{kl}}\,dB^{k,l}\bigr)_{kl}+\beta^{-1}Q_N\Sigma''Q_0^Tdt,\ "
              r"\Sigma''_{kk}=(N-1)\lambda_k^{N-2},\ a_{kk}=N\lambda_k^{2N-2},\ "
              r"a_{kl}=\frac{\lambda_k^{2N}-\lambda_l^{2N}}{\lambda_k^2-\lambda_l^2}",
    status="erratum",
    corrected=r"dX^\beta=\sqrt{2/\beta}\,Q_N\bigl(\sqrt{a_{kl}}\,dB^{k,l}\bigr)_{kl}Q_0^T+\beta^{-1}Q_N\Sigma''Q_0^Tdt",
    params=[
        Param.int("d", 3, 1, 4, "width", search=(1, 4)),
        Param.int("N", 3, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of Lambda and Q_N, Q_0"),
        Param.float("h", 1e-4, 1e-7, 1e-2, "finite-difference step (relative to |W|)"),
    ],
    notes="Erratum E14 (presentation): the drift (12.9) is correct (no interaction terms), but the noise matrix of "
          "(12.10) is written in the SVD frame; as a matrix-valued SDE for X it must be conjugated, "
          "Q_N(·)Q_0^T, like the drift. Numeric check (beta = 1; both sides scale as 1/beta): the generator of BM "
          "is Delta_{g^N} with inverse metric g^{ij} = A (the matrix of A_{N,W}, Lemma 1), so the Ito drift of "
          "the coordinate W_i is b^i = sum_j d_j A^{ij} - 1/2 A^{ij} d_j log det A (finite differences); the "
          "diffusion matrix of the corrected noise, (Q_N ⊗ Q_0) diag(a) (Q_N ⊗ Q_0)^T, must equal A. The residual "
          "is max(drift error / drift tolerance, covariance error / covariance tolerance) against 1.",
    catalogue="menon §2.9 Thm 18; §3 (Thm 18 drift row); §4 E14",
)


def _lb_drift(W, N, h, inverse=False):
    """Ito drift sum_j d_j g^{ij} - 1/2 g^{ij} d_j log det g^{..} of BM (beta = 1) for g^{-1} = A (or A^{-1})."""
    d = W.shape[0]
    n = d * d

    def ginv(Wx):
        M = dln.a_matrix(Wx, N)
        return np.linalg.inv(M) if inverse else M

    G0 = ginv(W)
    dG = np.zeros((n, n, n))  # dG[j] = d_j g^{..}
    dlog = np.zeros(n)
    for j in range(n):
        E = np.zeros(n)
        E[j] = h
        Gp, Gm = ginv(W + E.reshape(d, d)), ginv(W - E.reshape(d, d))
        dG[j] = (Gp - Gm) / (2 * h)
        dlog[j] = (np.linalg.slogdet(Gp)[1] - np.linalg.slogdet(Gm)[1]) / (2 * h)
    div = np.array([sum(dG[j][i, j] for j in range(n)) for i in range(n)])
    # |g|^{1/2} = det(g^{..})^{-1/2}  ->  -1/2 g^{ij} d_j log det(g^{..})
    b = div - 0.5 * G0 @ dlog
    return b.reshape(d, d), G0


def _thm18_outcome(p, *, inverse=False, conjugate=True):
    lam, Qs, _ = balanced_instance(p.d, p.N, p.seed, lam_range=(0.6, 1.6), min_gap=0.1)
    N = p.N
    W = Qs[0] @ np.diag(lam ** N) @ Qs[-1].T
    h = p.h * max(1.0, float(np.linalg.norm(W)))
    b1, A = _lb_drift(W, N, h, inverse)
    b2, _ = _lb_drift(W, N, 2 * h, inverse)
    pred = Qs[0] @ np.diag((N - 1) * lam ** (N - 2)) @ Qs[-1].T
    condA = float(np.linalg.cond(A))
    # error model: central differences (step doubling for the O(h^2) truncation) plus rounding of the
    # d^2 difference quotients, ~ d^2 * eps * |A| * cond(A) / h each
    dtol = 10 * _fd_error(b1, b2, p.d ** 2 * EPS * float(np.linalg.norm(A)) * condA / h)
    derr = float(np.linalg.norm(b1 - pred))
    # diffusion matrix of the noise: vec_row(Q_N X Q_0^T) = (Q_N ⊗ Q_0) vec_row(X)
    a = np.empty((p.d, p.d))
    for k in range(p.d):
        for l in range(p.d):
            a[k, l] = N * lam[k] ** (2 * N - 2) if k == l else \
                (lam[k] ** (2 * N) - lam[l] ** (2 * N)) / (lam[k] ** 2 - lam[l] ** 2)
    K = np.kron(Qs[0], Qs[-1]) if conjugate else np.eye(p.d * p.d)
    cov = K @ np.diag(a.ravel()) @ K.T
    Aexact = dln.a_matrix(W, N)
    # error model: eigen-reconstruction and the psd powers inside a_matrix, ~ 100 d^2 eps |A|
    ctol = 100 * p.d ** 2 * EPS * float(np.linalg.norm(Aexact))
    cerr = float(np.linalg.norm(cov - Aexact))
    return Outcome(residual=max(derr / dtol, cerr / ctol), tolerance=1.0,
                   values={"drift_error": derr, "drift_tolerance": dtol, "covariance_error": cerr,
                           "covariance_tolerance": ctol, "drift_svd_frame": np.diag(Qs[0].T @ b1 @ Qs[-1]).tolist(),
                           "sigma_pp": ((N - 1) * lam ** (N - 2)).tolist(), "lambda": lam.tolist(), "cond_A": condA},
                   message="max(drift err/tol, covariance err/tol): LB drift vs Q_N Sigma'' Q_0^T and noise "
                           "covariance vs A_{N,W}")


@thm18.numeric
def _(p):
    """Laplace-Beltrami drift by finite differences of A and log det A equals Q_N Sigma'' Q_0^T, and the
    conjugated noise has covariance A_{N,W}."""
    return _thm18_outcome(p)


thm18.property(over=("d", "N", "seed"), max_examples=10)


@thm18.falsifier({
    "stated": {"description": "Printed (12.10): noise matrix in the SVD frame (no Q_N(.)Q_0^T): its "
                              "covariance is not A (d >= 2).",
               "fixed": {"d": 2}},
    "inverse_metric": "Use A^{-1} (the metric g^N itself) as the diffusion matrix: the drift is "
                      "no longer (N-1) lam^{N-2}.",
}, search=("seed",))
def _(p, variant):
    return _thm18_outcome(p, **{"stated": dict(conjugate=False), "inverse_metric": dict(inverse=True)}[variant])


#: Sigma''_kk of Theorem 18 as printed, (N-1) lambda^{N-2}, and misprints
THM18_VARIANTS = {
    "corrected": lambda N, lam: (N - 1) * lam ** (N - 2),
    "factor_N": lambda N, lam: N * lam ** (N - 2),
    "exponent_shifted": lambda N, lam: (N - 1) * lam ** (N - 1),
}


def _thm18_prove(variant="corrected"):
    """Depths N = 2..8 (d = 1) at which the Laplace-Beltrami drift g^{-1/2} d/dw (g^{1/2} g^{-1}) of the metric
    g = 1/(N w^{2-2/N}) (4.14), at w = lambda^N, differs from Sigma'' (variant)."""
    w, lam = sp.symbols("w lambda", positive=True)
    bad = []
    for N in range(2, 9):
        ginv = N * w ** (2 - sp.Rational(2, N))
        sqrtg = 1 / sp.sqrt(ginv)
        drift = sp.diff(sqrtg * ginv, w) / sqrtg
        rem = sp.simplify(sp.powsimp(sp.expand(drift.subs(w, lam**N) - THM18_VARIANTS[variant](N, lam)), force=True))
        if rem != 0:
            bad.append(N)
    return bad


@thm18.symbolic(timeout=60)
def _(p):
    """d = 1: g = 1/(N w^{2-2/N}); the LB drift g^{-1/2} d/dw (g^{1/2} g^{-1}) = (N-1) w^{1-2/N} = (N-1) lam^{N-2}."""
    bad = _thm18_prove()
    return Outcome(residual=len(bad), tolerance=0, values={"method": "sympy diff/simplify", "instances": "d=1, N=2..8",
                                                           "proved": "drift (N-1) w^{1-2/N} = Sigma''"},
                   message="number of N for which the d=1 drift differs from (12.9)")


@thm18.mutant({
    "factor_N": "Sigma''_kk = N lambda_k^{N-2} (N for N-1)",
    "exponent_shifted": "Sigma''_kk = (N-1) lambda_k^{N-1} (exponent shifted)",
}, timeout=60)
def _(p, variant):
    """(12.9) perturbed, through the same procedure: the drift must differ at some depth."""
    bad = _thm18_prove(variant)
    return Outcome(residual=len(bad), tolerance=0, values={"failing_depths": bad},
                   message=f"the LB drift differs from Sigma'' ({variant}) at N = {bad}")


@thm18.reproduction
def _(p):
    """Catalogue §3: at (d, N) = (3, 3) the LB drift in the SVD frame is (3.172674, 2.889657, 1.312561) = Sigma''.
    We take lambda = quoted / (N-1) (inverting (12.9)), recompute the drift by finite differences of A and
    compare at the quoted 6 decimals."""
    quoted = np.array([3.172674, 2.889657, 1.312561])
    N = 3
    lam = quoted / (N - 1)
    rng = rng_for(7)
    QN, Q0 = dln.random_orthogonal(3, rng), dln.random_orthogonal(3, rng)
    W = QN @ np.diag(lam ** N) @ Q0.T
    b, _ = _lb_drift(W, N, 1e-4)
    b2, _ = _lb_drift(W, N, 2e-4)
    drift = np.diag(QN.T @ b @ Q0)
    off = float(np.max(np.abs(QN.T @ b @ Q0 - np.diag(drift))))
    fd_err = _fd_error(b, b2, 0.0)
    return Outcome(residual=float(np.max(np.abs(drift - quoted))), tolerance=5e-7 + 10 * fd_err,
                   values={"drift_svd_frame": drift.tolist(), "quoted": quoted.tolist(), "off_diagonal_max": off,
                           "fd_error_estimate": fd_err},
                   message="LB drift in the SVD frame vs the catalogue's 6-decimal values")


# ===========================================================================
# 5. the entropy gradient (12.8), (12.13)
ent_grad = Claim(
    id="menon.entropy_gradient",
    title="grad_{g^N} S = A_{N,W}(∇_F S) = Q_N Σ' Q_0^T with Σ' of (12.8)",
    label="G18",
    section="12.2",
    equation="(12.8), (12.13)",
    lines=(968, 980),
    statement=r"\operatorname{grad}_{g^N}F_\beta=\mathcal A_{N,W}(E'(W))-\beta^{-1}Q_N\Sigma'Q_0^T,\ "
              r"\Sigma'_{kk}=\sum_{l\ne k}\Bigl(\frac{N\lambda_k^{2N-1}}{\lambda_k^{2N}-\lambda_l^{2N}}"
              r"-\frac{\lambda_k}{\lambda_k^2-\lambda_l^2}\Bigr)\lambda_k^{N-1}",
    status="holds",
    params=[
        Param.int("d", 3, 2, 5, "width", search=(2, 4)),
        Param.int("N", 4, 2, 8, "depth", search=(2, 6)),
        Param.seed("seed"),
        Param.float("h", 1e-5, 1e-8, 1e-2, "finite-difference step (relative to |W|)"),
    ],
    notes="S is the entropy of Thm 10 (line 976 says 'Theorem 14': typo, E18). grad_{g^N} S = A(∇_F S) since "
          "g^N(Z, Y) = Tr(Z^T A^{-1} Y) (E5). Numeric: ∇_F S by central differences of S(W) computed from "
          "svdvals (independent of any closed form), then A_{N,W} applied. The E-part of (12.13) is Thm 3 "
          "(other module). Requires distinct singular values (else Sigma' has removable 0/0 pair terms, see "
          "menon.bounded_repulsion).",
    catalogue="menon §2.9 G18; §4 E18",
)


def _ent_grad_outcome(p, half=True):
    lam, Qs, _ = balanced_instance(p.d, p.N, p.seed, lam_range=(0.5, 1.8), min_gap=0.1)
    N = p.N
    W = Qs[0] @ np.diag(lam ** N) @ Qs[-1].T
    h = p.h * max(1.0, float(np.linalg.norm(W)))
    f = lambda X: _entropy(X, N, half)  # noqa: E731
    g1 = dln.a_operator(W, fd.central_difference(f, W, h), N)
    g2 = dln.a_operator(W, fd.central_difference(f, W, 2 * h), N)
    pred = _pred_grad_S(lam, Qs, N)
    normA = float(np.linalg.norm(dln.a_matrix(W, N), 2))
    s = lam ** N
    gap = min(abs(s[i] ** 2 - s[j] ** 2) / max(s[i], s[j]) ** 2 for i, j in pairs(p.d))
    # error model: central differences (truncation by step doubling) plus rounding of each difference
    # quotient, ~ d^2 eps |S| / (h * relative gap), all mapped through A
    rnd = normA * p.d ** 2 * EPS * (abs(f(W)) + 1) / (h * gap)
    tol = 10 * _fd_error(g1, g2, rnd)
    return Outcome(residual=float(np.linalg.norm(g1 - pred)), tolerance=tol,
                   values={"grad_fd_svd_frame": np.diag(Qs[0].T @ g1 @ Qs[-1]).tolist(),
                           "sigma_prime": _sigma_prime(lam, N).tolist(), "lambda": lam.tolist()},
                   message="|A_{N,W}(∇_F S) - Q_N Sigma' Q_0^T|_F with ∇_F S by central differences")


@ent_grad.numeric
def _(p):
    """A_{N,W} applied to the finite-difference gradient of S equals Q_N Sigma' Q_0^T."""
    return _ent_grad_outcome(p)


ent_grad.property(over=("d", "N", "seed"), max_examples=12)


@ent_grad.falsifier("no_half", search=("seed",))
def _(p):
    """S without the 1/2 of Thm 10 (log of the volume squared): the gradient doubles."""
    return _ent_grad_outcome(p, half=False)


#: the pair term of Sigma'_kk (12.8) as printed, and misprints: (N, lam_k, lam_l) -> term
ENT_GRAD_VARIANTS = {
    "stated": lambda N, a, b: (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) - a / (a ** 2 - b ** 2))
    * a ** (N - 1),
    "sign_flipped": lambda N, a, b: (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) + a / (a ** 2 - b ** 2))
    * a ** (N - 1),
    "power_shifted": lambda N, a, b: (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) - a / (a ** 2 - b ** 2))
    * a ** (N - 2),
}


def _ent_grad_prove(variant="stated"):
    """Number of (N, k) (d = 3, N = 2..5) with a nonzero remainder of N sigma_k^{2-2/N} dS/dsigma_k (S of Thm 10
    differentiated by sympy, times the eigenvalue of A on u_k v_k^T) minus Sigma'_kk (variant), sigma = lambda^N."""
    bad = 0
    d = 3
    lam = sp.symbols(f"l1:{d + 1}", positive=True)
    sig = sp.symbols(f"s1:{d + 1}", positive=True)
    for N in range(2, 6):
        S = sp.Rational(1, 2) * sum(sp.log((sig[i] ** 2 - sig[j] ** 2) /
                                           (sig[i] ** sp.Rational(2, N) - sig[j] ** sp.Rational(2, N)))
                                    for i, j in pairs(d))
        for k in range(d):
            lhs = N * sig[k] ** (2 - sp.Rational(2, N)) * sp.diff(S, sig[k])
            lhs = lhs.subs({sig[i]: lam[i] ** N for i in range(d)})
            rhs = sum(ENT_GRAD_VARIANTS[variant](N, lam[k], lam[l]) for l in range(d) if l != k)
            bad += int(sp.cancel(sp.together(sp.powsimp(sp.expand_power_base(lhs - rhs, force=True),
                                                        force=True))) != 0)
    return bad


@ent_grad.symbolic(timeout=60)
def _(p):
    """N lambda_k^{2N-2} dS/dsigma_k (the eigenvalue N sigma^{2-2/N} of A times dS) equals Sigma'_kk, d = 3, N = 2..5."""
    bad = _ent_grad_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy together/cancel",
                                                      "instances": "d=3, N=2..5, every k",
                                                      "proved": "N sigma_k^{2-2/N} dS/dsigma_k = Sigma'_kk (12.8)"},
                   message="number of (N, k) with a nonzero remainder")


@ent_grad.mutant({
    "sign_flipped": "Sigma'_kk with + lambda_k/(lambda_k^2 - lambda_l^2) (sign of the second term flipped)",
    "power_shifted": "Sigma'_kk with the factor lambda_k^{N-2} for lambda_k^{N-1}",
}, timeout=60)
def _(p, variant):
    """(12.8) perturbed, through the same procedure: remainders must stay nonzero."""
    bad = _ent_grad_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero": bad},
                   message=f"{bad} of 12 (N, k) have a nonzero remainder against Sigma' ({variant})")


# ===========================================================================
# 6. bounded repulsion (derived)
bounded = Claim(
    id="menon.bounded_repulsion",
    title="The 'Coulombic repulsion' of Σ' is bounded: its pair term tends to (N-1)/2 λ_k^{N-2} at coincidence",
    label="G18-note",
    section="12.2",
    equation="(12.8)",
    lines=(956, 980),
    statement=r"\lim_{\lambda_l\to\lambda_k}\Bigl(\frac{N\lambda_k^{2N-1}}{\lambda_k^{2N}-\lambda_l^{2N}}"
              r"-\frac{\lambda_k}{\lambda_k^2-\lambda_l^2}\Bigr)\lambda_k^{N-1}=\frac{N-1}2\lambda_k^{N-2}",
    status="holds",
    params=[
        Param.int("N", 4, 2, 12, "depth", search=(2, 8)),
        Param.float("lam", 1.3, 0.05, 20.0, "lambda_k", search=(0.2, 3.0)),
        Param.float("eps", 1e-12, 1e-40, 1e-3, "relative separation: lambda_l = lambda_k (1 ± eps)",
                    search=(1e-30, 1e-4)),
    ],
    notes="Derived (catalogue G18-note), not stated in the paper: line 980 calls Sigma' 'the analogue of "
          "Coulombic repulsion', but unlike Dyson's 1/(x_i - x_j) the pair term is bounded (the orbit volume does "
          "not vanish at coincident singular values). With t = lambda_l/lambda_k the pair term is lambda_k^{N-2} "
          "g(t), g(t) = N/(1 - t^{2N}) - 1/(1 - t^2) = (N-1)/2 - (N^2-1)/6 (t-1) + (N^2-1)/12 (t-1)^2 + ... "
          "(sympy series, N = 2..7). Numeric check in mpmath with 30 + 2|log10 eps| digits (the cancellation costs 2|log10 eps| digits) and the "
          "first-order remainder bound 2 (N^2-1)/6 eps lambda^{N-2} as tolerance.",
    catalogue="menon §2.9 G18-note",
)


def _pair_term(lk, ll, N):
    return (N * lk ** (2 * N - 1) / (lk ** (2 * N) - ll ** (2 * N)) - lk / (lk ** 2 - ll ** 2)) * lk ** (N - 1)


def _bounded_outcome(p, dyson=False):
    # each term is ~ 1/eps with relative rounding 10^-dps on a difference of size eps, i.e. absolute
    # error ~ 10^-dps / eps^2: choose dps so that this stays ~ 10^-30
    dps = 30 + int(2 * math.ceil(-math.log10(p.eps)))
    with mp.workdps(dps):
        lk = mp.mpf(p.lam)
        worst = mp.mpf(0)
        for sgn in (1, -1):
            ll = lk * (1 + sgn * mp.mpf(p.eps))
            f = _pair_term(lk, ll, p.N)
            ref = lk ** (p.N - 1) / (lk - ll) if dyson else (p.N - 1) * lk ** (p.N - 2) / 2
            worst = max(worst, abs(f - ref))
        # error model: first-order Taylor remainder |g'(1)| = (N^2-1)/6, doubled for the higher orders
        # (|c2/c1| = 1/2, eps <= 1e-3), plus the rounding 10^(5-dps) / eps^2 (times the size of the terms)
        tol = 2 * (p.N ** 2 - 1) / 6 * p.eps * p.lam ** (p.N - 2) + \
            float(mp.mpf(10) ** (5 - dps) / mp.mpf(p.eps) ** 2) * (p.N + 1) * max(1.0, p.lam) ** (2 * p.N)
        return Outcome(residual=float(worst), tolerance=tol,
                       values={"pair_term": float(_pair_term(lk, lk * (1 + mp.mpf(p.eps)), p.N)),
                               "limit": (p.N - 1) * p.lam ** (p.N - 2) / 2},
                       message="|pair term at lambda_l = lambda_k(1 ± eps) - reference|")


@bounded.numeric
def _(p):
    """Evaluate the pair term of (12.8) at lambda_l = lambda_k (1 ± eps) (mpmath, enough digits)."""
    return _bounded_outcome(p)


bounded.property(over=("N", "lam", "eps"), max_examples=15)


@bounded.falsifier("dyson_like", search=("lam",))
def _(p):
    """The Dyson-like unbounded pair term lambda_k^{N-1}/(lambda_k - lambda_l)."""
    return _bounded_outcome(p, dyson=True)


#: the limit of the pair term as printed, (N-1)/2 lambda^{N-2}, and misprints
BOUNDED_VARIANTS = {
    "stated": lambda N, lam: sp.Rational(N - 1, 2) * lam ** (N - 2),
    "half_dropped": lambda N, lam: (N - 1) * lam ** (N - 2),
    "exponent_shifted": lambda N, lam: sp.Rational(N - 1, 2) * lam ** (N - 1),
}


def _bounded_prove(variant="stated"):
    """Depths N = 2..8 at which sympy's limit lambda_l -> lambda_k of the printed pair term
    (N lambda_k^{2N-1}/(lambda_k^{2N} - lambda_l^{2N}) - lambda_k/(lambda_k^2 - lambda_l^2)) lambda_k^{N-1}
    differs from the right-hand side (variant)."""
    a, b = sp.symbols("lambda_k lambda_l", positive=True)
    bad = []
    for N in range(2, 9):
        g = (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) - a / (a ** 2 - b ** 2)) * a ** (N - 1)
        lim = sp.limit(sp.cancel(sp.together(g)), b, a)
        if sp.simplify(lim - BOUNDED_VARIANTS[variant](N, a)) != 0:
            bad.append(N)
    return bad


@bounded.symbolic(timeout=60)
def _(p):
    """sympy: lim_{lambda_l -> lambda_k} of the pair term of (12.8) is (N-1)/2 lambda_k^{N-2}, N = 2..8."""
    bad = _bounded_prove()
    return Outcome(residual=len(bad), tolerance=0, values={"method": "sympy.limit of the printed expression",
                                                           "instances": "N=2..8", "proved": "finite limit (N-1)/2 lambda^{N-2}"},
                   message="number of N with a different limit")


@bounded.mutant({
    "half_dropped": "limit (N-1) lambda_k^{N-2} (the 1/2 dropped)",
    "exponent_shifted": "limit (N-1)/2 lambda_k^{N-1} (exponent shifted)",
}, timeout=60)
def _(p, variant):
    """The limit perturbed, through the same procedure: it must differ at some depth."""
    bad = _bounded_prove(variant)
    return Outcome(residual=len(bad), tolerance=0, values={"failing_depths": bad},
                   message=f"the limit differs from the {variant} value at N = {bad}")


# ===========================================================================
# 7. effective-rank jumps (empirical, cited)
Claim(
    id="menon.effective_rank_jumps",
    title="Effective rank of W(t) in matrix completion drops through sudden jumps (numerics of [14])",
    label="D13.3",
    section="13.3",
    lines=(1002, 1004),
    statement=r"\text{the effective rank of } W(t) \text{ decreases in time through sudden jumps; limits follow an "
              r"asymptotic distribution on the low-rank manifolds}",
    status="empirical",
    params=[],
    notes="Not certifiable here: the paper reports observations from [14] without the setup (matrix size, mask, "
          "target, initialisation scale, depth, definition of effective rank, time horizon). The catalogue's "
          "quick d=10, N=3 gradient-flow trials (init 0.3 and 0.05) converged by t <= 400 without clear rank "
          "plateaus, so a qualitative reproduction would be a guess at [14]'s parameters rather than a check of "
          "the claim. The related d = 2 experiment of Section 14.1 is menon.matrix_completion_clustering.",
    catalogue="menon §2.10 D13.3",
)


# ===========================================================================
# 8. random initial conditions are unbalanced
unbal = Claim(
    id="menon.random_init_unbalanced",
    title="A random initial condition lies on the balanced manifold with probability zero",
    label="D13.4",
    section="13.4",
    lines=(1010, 1016),
    statement=r"\mathbb P(\mathbf W_0\in\mathcal M)=0\ \text{for a random initial condition}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width", search=(1, 5)),
        Param.int("N", 3, 2, 6, "depth", search=(2, 5)),
        Param.int("samples", 500, 10, 100_000, "number of Gaussian draws"),
        Param.float("delta", 1e-8, 1e-14, 1e-2, "threshold on max_p |C_p|_F / |W|^2 for 'on M'"),
        Param.seed("seed"),
    ],
    notes="Proof: W -> (C_p)_p is a polynomial submersion at generic points (its Jacobian has full rank "
          "(N-1)d(d+1)/2, the codimension of M_0), so M_0 is a proper algebraic subset of M_d^N, of Lebesgue "
          "measure zero. Numeric: the Jacobian rank at the first draws equals the codimension (> 0 for N >= 2), "
          "and no Gaussian draw has max_p |C_p|_F below delta * scale. Residual = rank deficit + number of "
          "draws on M (to delta). For d = 1, P(|C| < delta) ~ delta, so delta must stay small relative to "
          "1/samples. The conjecture of lines 1014-1016 (noise moves M_G towards M_0) is exploratory and not "
          "encoded.",
    catalogue="menon §2.10 D13.4",
)


def _c_jacobian(Ws):
    """Matrix of dC: V -> (V_{p+1}^T W_{p+1} + W_{p+1}^T V_{p+1} - V_p W_p^T - W_p V_p^T)_p (upper triangles)."""
    N, d = len(Ws), Ws[0].shape[0]
    iu = np.triu_indices(d)
    cols = []
    for i in range(N * d * d):
        e = np.zeros(N * d * d)
        e[i] = 1.0
        V = [e[k * d * d:(k + 1) * d * d].reshape(d, d) for k in range(N)]
        out = []
        for p in range(1, N):
            Wq, Wp, Vq, Vp = dln.layer(Ws, p + 1), dln.layer(Ws, p), dln.layer(V, p + 1), dln.layer(V, p)
            out.append((Vq.T @ Wq + Wq.T @ Vq - Vp @ Wp.T - Wp @ Vp.T)[iu])
        cols.append(np.concatenate(out))
    return np.array(cols).T


def _unbal_outcome(p, balanced_sampler=False):
    rng = rng_for(p.seed)
    d, N = p.d, p.N
    if balanced_sampler:
        draws = []
        for _ in range(p.samples):
            lam = np.abs(rng.standard_normal(d))
            draws.append(np.array(dln.balanced_point(lam, [dln.random_orthogonal(d, rng) for _ in range(N + 1)])))
        L = np.array(draws)  # (samples, N, d, d) in paper order
    else:
        L = rng.standard_normal((p.samples, N, d, d))
    T = np.swapaxes
    # paper order: L[:, 0] = W_N, ..., L[:, N-1] = W_1, so W_{p+1} = L[:, N-p-1], W_p = L[:, N-p]
    C = np.stack([T(L[:, N - p - 1], 1, 2) @ L[:, N - p - 1] - L[:, N - p] @ T(L[:, N - p], 1, 2)
                  for p in range(1, N)], axis=1)
    size = np.max(np.linalg.norm(C, axis=(2, 3)), axis=1)
    scale = np.max(np.sum(L ** 2, axis=(2, 3)), axis=1)
    rel = size / scale
    on_M = int(np.sum(rel < p.delta))
    codim = (N - 1) * d * (d + 1) // 2
    ranks = [int(np.linalg.matrix_rank(_c_jacobian(list(L[i])))) for i in range(min(3, p.samples))]
    deficit = codim - min(ranks)
    return Outcome(residual=on_M + deficit, tolerance=0,
                   values={"draws_on_M": on_M, "min_relative_C": float(np.min(rel)), "codimension": codim,
                           "jacobian_ranks": ranks, "samples": p.samples},
                   message="number of draws on M (|C|/|W|^2 < delta) + rank deficit of dC")


@unbal.numeric
def _(p):
    """Gaussian draws: |C_p| bounded away from 0, and dC has full rank (N-1)d(d+1)/2 (codimension of M_0)."""
    return _unbal_outcome(p)


unbal.property(over=("d", "N", "seed"), max_examples=10)


@unbal.falsifier("balanced_sampler", search=("seed",))
def _(p):
    """A sampler supported on M (z(Lambda, Q) with random Lambda, Q): every draw is balanced."""
    return _unbal_outcome(p, balanced_sampler=True)


# ===========================================================================
# 9. Section 14.1: d = 2 matrix completion
mc = Claim(
    id="menon.matrix_completion_clustering",
    title="d=2 matrix completion: end-to-end flow from small random inits reaches rank-one limits near [[1,±1],[±1,1]]",
    label="OP14.1",
    section="14.1",
    equation="(14.1)-(14.5)",
    lines=(1024, 1046),
    statement=r"\text{solutions of (4.21) from random } W_0 \text{ are attracted to the rank-one solutions and "
              r"cluster around } \begin{pmatrix}1&1\\1&1\end{pmatrix}",
    status="erratum",
    corrected=r"\text{with small initialisation and } N\ge3 \text{ the limits cluster around } "
              r"\begin{pmatrix}1&\pm1\\\pm1&1\end{pmatrix}\text{, both signs with probability } \tfrac12 "
              r"\ (W\mapsto DWD,\ D=\operatorname{diag}(1,-1))",
    params=[
        Param.int("N", 3, 3, 6, "depth (the corrected claim needs N >= 3; was 1..6, see notes)", search=(3, 5)),
        Param.int("runs", 16, 4, 64, "number of random initial conditions (was up to 400: cost)"),
        Param.float("scale", 0.01, 1e-4, 0.01, "standard deviation of the Gaussian entries of W_0 (small "
                    "initialisation; was up to 2, see notes)"),
        Param.float("T", 1000.0, 1000.0, 1e4, "integration time (was 1..1e5, see notes)"),
        Param.float("radius", 0.1, 0.05, 1.0, "clustering radius (Frobenius distance to the target set; was from "
                    "1e-3, see notes)"),
        Param.seed("seed of the initial conditions"),
    ],
    notes="Erratum E15 (typo / incomplete): the flow (14.5) commutes with W -> DWD, D = diag(1,-1) (E(DWD) = E(W), "
          "E'(DWD) = D E'(W) D, A_{N,DWD}(DZD) = D A_{N,W}(Z) D), and the Gaussian law of W_0 is invariant, so "
          "the limits W_12 ≈ +1 and ≈ -1 are equally likely; the printed (14.4) keeps only +1 (and has a stray "
          "'a ∈ R∖{0}'; l.1036 cites Fig 9.1 for Fig 9.5, l.1046 '(14.2)' for (14.3)). Integration: (14.5) "
          "with fractional powers from the SVD, Numba Dormand-Prince 5(4) (rtol 1e-10, atol 1e-14). Corrected "
          "check: residual max(median dist / radius, |frac(W_12 > 0) - 1/2| / (3 sqrt(1/(4 runs)))) <= 1, where "
          "dist is the Frobenius distance of a limit to {[[1,1],[1,1]], [[1,-1],[-1,1]]} (cluster: the majority "
          "within radius) and the sign balance is a 3-sigma binomial test. Stated falsifier: fraction of "
          "limits with W_12 < 0 against the only ones the printed claim allows to be elsewhere, the outliers. "
          "'Cluster' is qualitative; the radius 0.1 and 'majority' are our reading, stated here. Large "
          "initialisation or N <= 2 weaken the effect (catalogue §3); N = 1 freezes the off-diagonals.  "
          "Audit (seed-1 sweep: 13 refuted, 4 errors of 20): the draws went outside the corrected claim.  Ranges "
          "narrowed to what the claim and the experiment (catalogue §3: N = 3, 5, scale 1e-3 and 1e-2, T = 5000) "
          "cover: N >= 3 (the corrected hypothesis), scale <= 0.01 ('small initialisation'), radius >= 0.05 (the "
          "N = 3, scale 0.01 limits lie up to ~0.06 from J±: lower quartile |W12| = 0.958), T in [1e3, 1e4] and "
          "runs <= 64 (T = 1e5 cost 20 s per run: the errors were timeouts).  Runs stop once settled (E < 1e-16 and "
          "W moved < 1e-7 over the last doubling chunk).  Statistical model: runs are i.i.d.; under the claim "
          "K = #{W12 > 0} ~ Binomial(n, 1/2) (the D-symmetry), tested two-sided at level 1e-3 (exact binomial "
          "critical value; with n <= 10 runs the sign test cannot reject at that level: stated in the values); "
          "cluster: the median distance to {J+, J-} of the converged limits is <= radius; a run is converged when "
          "E(W(T)) < 1e-10; more than a quarter unconverged is inconclusive ('T too short').",
    catalogue="menon §2.10 OP14.1; §3 (§14.1 experiment table); §4 E15",
)


@register
@njit(cache=True)
def _mc_rhs(t, y, args):
    """(14.5) for E = 1/2((W11-1)^2 + (W22-1)^2): -A_{N,W}(E'(W)) in the SVD frame."""
    N = args[0]
    W = y.reshape(2, 2)
    U, s, Vt = np.linalg.svd(W)
    G = np.zeros((2, 2))
    G[0, 0] = W[0, 0] - 1.0
    G[1, 1] = W[1, 1] - 1.0
    Zt = U.T @ G @ Vt.T
    for k in range(2):
        for l in range(2):
            c = 0.0
            for j in range(1, int(N) + 1):
                c += s[k] ** (2.0 * (N - j) / N) * s[l] ** (2.0 * (j - 1) / N)
            Zt[k, l] *= c
    return -(U @ Zt @ Vt).ravel()


def _mc_limits(N, runs, scale, T, seed, settled=1e-7):
    """Limits W(T) of (14.5) from ``runs`` Gaussian initial conditions of standard deviation ``scale``.

    The flow is integrated in doubling chunks (100, 200, 400, ... up to T); a run stops early once E < 1e-16 and
    W moved by less than ``settled`` over the last chunk (as long as all the time before it): the limit is then
    reached to far below any clustering radius, and the explicit integrator no longer spends ~1e5
    stability-limited steps on a settled state (T = 1e5 took 20 s per run)."""
    rng = rng_for(seed)
    out = []
    for _ in range(runs):
        y = scale * rng.standard_normal(4)
        t, chunk = 0.0, 100.0
        while t < T:
            h = min(chunk, float(T) - t)
            prev = y
            y, _, _ = rk.dopri5(_mc_rhs, t, y, t + h, (float(N),), rtol=1e-10, atol=1e-14, max_steps=10_000_000)
            t += h
            chunk *= 2
            E = 0.5 * ((y[0] - 1) ** 2 + (y[3] - 1) ** 2)
            if E < 1e-16 and np.linalg.norm(y - prev) < settled:
                break
        out.append(y.reshape(2, 2))
    return np.array(out)


def _mc_stats(Ws, radius):
    Jp = np.array([[1.0, 1.0], [1.0, 1.0]])
    Jm = np.array([[1.0, -1.0], [-1.0, 1.0]])
    dist = np.minimum(np.linalg.norm(Ws - Jp, axis=(1, 2)), np.linalg.norm(Ws - Jm, axis=(1, 2)))
    s = np.linalg.svd(Ws, compute_uv=False)
    ratio = s[:, 1] / s[:, 0]
    E = 0.5 * ((Ws[:, 0, 0] - 1) ** 2 + (Ws[:, 1, 1] - 1) ** 2)
    a = np.abs(Ws[:, 0, 1])
    return {"outliers": int(np.sum(dist > radius)), "frac_W12_pos": float(np.mean(Ws[:, 0, 1] > 0)),
            "frac_W12_neg": float(np.mean(Ws[:, 0, 1] < 0)),
            "median_sigma2_over_sigma1": float(np.median(ratio)),
            "q90_sigma2_over_sigma1": float(np.quantile(ratio, 0.9)),
            "abs_W12_quartiles": np.quantile(a, [0.25, 0.5, 0.75]).tolist(),
            "median_abs_W12W21": float(np.median(np.abs(Ws[:, 0, 1] * Ws[:, 1, 0]))),
            "max_energy": float(np.max(E)), "median_distance": float(np.median(dist))}


def _mc_equivariance(N, seed):
    """|F(DWD) - D F(W) D| at a random W (the symmetry behind the 50/50 split)."""
    rng = rng_for(seed + 1)
    W = rng.standard_normal((2, 2))
    D = np.diag([1.0, -1.0])
    a = _mc_rhs(0.0, (D @ W @ D).ravel(), (float(N),)).reshape(2, 2)
    b = D @ _mc_rhs(0.0, W.ravel(), (float(N),)).reshape(2, 2) @ D
    return float(np.linalg.norm(a - b))


def _binom_critical(n, alpha=1e-3):
    """Smallest c with P(|K - n/2| >= c) <= alpha for K ~ Binomial(n, 1/2) (exact; inf if no c works)."""
    pmf = [math.comb(n, k) / 2.0**n for k in range(n + 1)]
    for c2 in range(0, n + 2):          # c = c2 / 2
        tail = sum(q for k, q in enumerate(pmf) if abs(2 * k - n) >= c2)
        if tail <= alpha:
            return c2 / 2
    return math.inf


@mc.numeric
def _(p):
    """Limits cluster at [[1,±1],[±1,1]] (median distance <= radius) and both signs are equally frequent (exact
    two-sided binomial test at level 1e-3 on #{W12 > 0})."""
    Ws = _mc_limits(p.N, p.runs, p.scale, p.T, p.seed)
    E = 0.5 * ((Ws[:, 0, 0] - 1) ** 2 + (Ws[:, 1, 1] - 1) ** 2)
    conv = E < 1e-10
    if np.sum(~conv) > p.runs / 4:
        return inconclusive(f"{int(np.sum(~conv))} of {p.runs} runs have not reached E = 0 by T={p.T!r} "
                            f"(N={p.N}, scale={p.scale!r}): the limits are not yet there; take a larger T",
                            max_energy=float(np.max(E)))
    st = _mc_stats(Ws[conv], p.radius)
    st["equivariance_defect"] = _mc_equivariance(p.N, p.seed)
    n = int(np.sum(conv))
    k = int(np.sum(Ws[conv][:, 0, 1] > 0))
    crit = _binom_critical(n)
    st.update(converged_runs=n, W12_positive=k, binomial_critical=crit,
              sign_test_has_power=bool(np.isfinite(crit) and crit <= n / 2))
    cluster = st["median_distance"] / p.radius
    balance = abs(k - n / 2) / (crit - 0.25) if np.isfinite(crit) else 0.0
    st.update(cluster_part=cluster, balance_part=balance)
    return Outcome(residual=max(cluster, balance), tolerance=1.0, values=st,
                   message="max(median distance to {J+, J-} / radius, |#(W12>0) - n/2| / exact binomial critical "
                           "value at level 1e-3)")


mc.property(over=("seed",), max_examples=4, fixed={"runs": 16})


@mc.falsifier("stated", search=("seed",))
def _(p):
    """Printed (14.4): all limits cluster around [[1,1],[1,1]]; the fraction with W_12 < 0 is far from 0."""
    Ws = _mc_limits(p.N, p.runs, p.scale, p.T, p.seed)
    st = _mc_stats(Ws, p.radius)
    return Outcome(residual=st["frac_W12_neg"], tolerance=st["outliers"] / p.runs, values=st,
                   message="fraction of limits with W_12 < 0 vs the fraction of unclustered limits")


#: the rank-one family (14.3) as printed, and misprints
MC_FAMILIES = {
    "corrected": lambda a: sp.Matrix([[1, a], [1 / a, 1]]),
    "family_symmetric": lambda a: sp.Matrix([[1, a], [a, 1]]),
    "family_sign_flipped": lambda a: sp.Matrix([[1, a], [-1 / a, 1]]),
}


def _mc_prove(variant="corrected"):
    """Failures of det(14.3) = 0, E(14.3) = 0 (family per variant), E(DWD) = E(W) and E'(DWD) = D E'(W) D."""
    a = sp.symbols("a", nonzero=True)
    w = sp.Matrix(2, 2, sp.symbols("w11 w12 w21 w22", real=True))
    W = MC_FAMILIES[variant](a)
    E = lambda X: ((X[0, 0] - 1) ** 2 + (X[1, 1] - 1) ** 2) / 2  # noqa: E731
    D = sp.diag(1, -1)
    bad = int(sp.simplify(W.det()) != 0) + int(sp.simplify(E(W)) != 0)
    bad += int(sp.expand(E(D * w * D) - E(w)) != 0)
    DwD = D * w * D
    grad_at = sp.Matrix(2, 2, lambda i, j: sp.diff(E(w), w[i, j])).subs({w[i, j]: DwD[i, j] for i in range(2)
                                                                           for j in range(2)}, simultaneous=True)
    bad += sum(1 for e in (grad_at - D * sp.Matrix(2, 2, lambda i, j: sp.diff(E(w), w[i, j])) * D) if sp.expand(e) != 0)
    return bad, sp.simplify(W.det())


@mc.symbolic(timeout=60)
def _(p):
    """The rank-one family (14.3) has det = 0 and E = 0; E(DWD) = E(W) and E'(DWD) = D E'(W) D."""
    bad, _ = _mc_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy", "proved":
                                                      "det(14.3) = 0, E(14.3) = 0, E and E' are D-equivariant"},
                   message="number of failed identities")


@mc.mutant({
    "family_symmetric": "(14.3) as [[1, a], [a, 1]] (a for 1/a)",
    "family_sign_flipped": "(14.3) as [[1, a], [-1/a, 1]] (sign flipped)",
}, timeout=60)
def _(p, variant):
    """The family perturbed, through the same procedure: det must not vanish."""
    bad, det = _mc_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"det": str(det)},
                   message=f"{bad} identities failed for {variant}: det = {det}")


@mc.reproduction(slow=True)
def _(p):
    """Catalogue §3 table, row N = 3, scale 0.01: median sigma2/sigma1 6.3e-4, |W12| quartiles
    0.958/0.997/1.002, fraction W12 > 0 = 0.47 (40 runs, T = 5000 here; different random inits)."""
    Ws = _mc_limits(3, 40, 0.01, 5000.0, 12345)
    st = _mc_stats(Ws, 0.1)
    n = len(Ws)
    # comparison at the precision a 40-run experiment with other inits supports: order of magnitude of the
    # median ratio (factor 10), median |W12| to 0.02, fraction within 3 binomial SE of the quoted 0.47
    parts = [abs(math.log10(st["median_sigma2_over_sigma1"] / 6.3e-4)) / 1.0,
             abs(st["abs_W12_quartiles"][1] - 0.997) / 0.02,
             abs(st["frac_W12_pos"] - 0.47) / (3 * math.sqrt(0.25 / n)),
             st["max_energy"] / 1e-6]
    st["parts"] = parts
    return Outcome(residual=max(parts), tolerance=1.0, values=st,
                   message="N=3, scale 0.01 statistics vs the catalogue table (each part normalised by its allowance)")
