"""Menon §3.2 (seed lines 148-162): overparametrisation.

Claims (catalogue menon §2.1, §2.2; erratum E19):

* ``menon.fibre_dimension``       line 148 (E19): the fibre φ^{-1}(W) has dimension (N-1)d^2, not "N d^2 choices"
* ``menon.matrix_completion_degenerate``  (3.8): minimised exactly on the affine space S (line 158: M_ij -> W_ij)
* ``menon.not_morse``             line 162: Hess(E∘φ) at a minimiser has (N-1)d^2 zero eigenvalues

Conventions as in the package docstring: tuples ``[W_N, ..., W_1]``, ``A_p = W_N...W_p``,
``B_p = W_p...W_1``; vectorisation is row-major and follows :func:`solvers.dln.pack`.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import expm

from solvers import dln
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from ._model import _abs, _chain_k, _cond, _dphi, _gamma, _gauge_basis, _gl_basis, _rank


# ===========================================================================
# M3  line 148: the fibre of φ (erratum E19)
fibre = Claim(
    id="menon.fibre_dimension",
    title="Overparametrization: the representations of f = W form a manifold of dimension (N-1)d², not 'Nd² choices'",
    label="Sec. 3.2",
    section="3.2",
    equation="",
    lines=(148, 148),
    statement=r"\text{the same function } f \text{ may be represented by } Nd^2 \text{ choices of training parameters } \mathbf W",
    status="erratum",
    corrected=r"\text{for invertible } W,\ \phi^{-1}(W)=\{(g_NW_Ng_{N-1}^{-1},\dots,g_1W_1g_0^{-1}): g_p\in GL_d,"
              r"\ g_0=g_N=I\}\text{ is a manifold of dimension }(N-1)d^2=Nd^2-\operatorname{rank}D\phi,\ "
              r"\operatorname{rank}D\phi(\mathbf W)=d^2",
    params=[
        Param.int("d", 3, 1, 5, "width", search=(1, 4)),
        Param.int("N", 3, 1, 6, "depth", search=(1, 5)),
        Param.seed("seed of the layers and the gauge"),
        Param.choice("point", "random", ["random", "zero"],
                     "random layers (W invertible) or the zero tuple (the falsifier zero_tuple's point: off the "
                     "hypothesis, inconclusive in the numeric check; sweeps keep random)").for_falsifiers(),
    ],
    notes="Erratum E19 (imprecision): Nd^2 is the number of parameters, not the number (nor the dimension) of "
          "representations. Numeric check: rank Dφ = d^2 (so dim ker Dφ = (N-1)d^2), the GL_d gauge directions "
          "(ξ_p W_p - W_p ξ_{p-1}), ξ_0 = ξ_N = 0, span (N-1)d^2 dimensions inside ker Dφ, and finite gauge "
          "transformations g_p = expm(t ξ_p) stay in the fibre. The zero tuple violates the hypothesis "
          "'W invertible' (numeric: inconclusive); the falsifier zero_tuple shows rank Dφ = 0 there for N >= 2. "
          "The printed line also writes f_n, 1 <= p <= n for N (E18).",
    catalogue="menon §2.1 M3; §4 E19",
)


def _m3_layers(p):
    rng = np.random.default_rng(p.seed)
    if p.point == "zero":
        return [np.zeros((p.d, p.d)) for _ in range(p.N)], rng
    return dln.random_layers([p.d] * (p.N + 1), rng), rng


def _fibre_measure(p, n_points: int = 0):
    Ws, rng = _m3_layers(p)
    d, N = p.d, p.N
    widths = [d] * (N + 1)
    k = _chain_k(widths)
    J = _dphi(Ws)
    Jabs = _dphi(_abs(Ws))
    rank, s, tau, amb = _rank(J, Jabs, k)
    T = _gauge_basis(Ws, _gl_basis(d))
    Tabs = _gauge_basis(_abs(Ws), _gl_basis(d))
    grank, gs, gtau, gamb = _rank(T, Tabs, d + 1) if T.size else (0, np.zeros(0), 0.0, False)
    # |Dφ T|: each entry a sum of products of <= k + d factors
    ker_res = float(np.linalg.norm(J @ T)) if T.size else 0.0
    ker_tol = 4 * _gamma(k + d + 1) * float(np.linalg.norm(Jabs @ np.abs(T))) if T.size else 0.0
    # finite gauge transformations: points of the fibre
    W = dln.prod(Ws)
    pts, fib_res, fib_tol = [], 0.0, 0.0
    if n_points:
        xis = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(N - 1)]
        for m in range(1, n_points + 1):
            t = 0.5 * m / n_points
            g = [np.eye(d)] + [expm(t * x) for x in xis] + [np.eye(d)]
            gi = [np.eye(d)] + [expm(-t * x) for x in xis] + [np.eye(d)]
            Wg = [g[q] @ dln.layer(Ws, q) @ gi[q - 1] for q in range(N, 0, -1)]
            # rounding: expm/its inverse are accurate to ~ c d eps |g|; φ(Wg) telescopes, so the error is
            # gamma_K times the product of absolute values of all 3N factors
            absprod = dln.prod([np.abs(g[q]) @ np.abs(dln.layer(Ws, q)) @ np.abs(gi[q - 1]) for q in range(N, 0, -1)])
            fib_res = max(fib_res, float(np.linalg.norm(dln.prod(Wg) - W)))
            fib_tol = max(fib_tol, 16 * _gamma(3 * N * d + 10 * d) * float(np.linalg.norm(absprod)))
            pts.append(dln.pack(Wg))
    distinct = 0
    if pts:
        P = np.array(pts)
        gaps = [np.linalg.norm(P[i] - P[j]) for i in range(len(P)) for j in range(i)]
        distinct = len(P) if (not gaps or min(gaps) > 1e6 * fib_tol) else 0
    cond = _cond(W)
    return {"rank_Dphi": rank, "fibre_dim": N * d * d - rank, "gauge_rank": grank, "ker_residual": ker_res,
            "ker_tolerance": ker_tol, "ambiguous": amb or gamb, "cond_W": cond, "rank_tau": tau,
            "smallest_nonzero_sv": float(s[rank - 1]) if rank else 0.0, "fibre_points": len(pts),
            "distinct_fibre_points": distinct, "fibre_residual": fib_res, "fibre_tolerance": fib_tol,
            "n_parameters": N * d * d}


@fibre.numeric
def _m3_numeric(p):
    """rank Dφ = d² at invertible W; the GL_d gauge orbit fills ker Dφ, dimension (N-1)d²."""
    if p.point == "zero":
        return inconclusive("W = 0 is not invertible: the corrected statement assumes invertible W "
                            "(see the falsifier zero_tuple)", point=p.point)
    v = _fibre_measure(p, n_points=3)
    if v["ambiguous"] or v["cond_W"] > 1e8:
        return inconclusive("W too close to singular to decide the ranks in floating point", **v)
    want = (p.N - 1) * p.d ** 2
    mismatch = (abs(v["fibre_dim"] - want) + abs(v["gauge_rank"] - want)
                + int(v["ker_residual"] > v["ker_tolerance"]) + int(v["fibre_residual"] > v["fibre_tolerance"]))
    v["expected_fibre_dim"] = want
    return Outcome(residual=mismatch, tolerance=0, values=v,
                   message=f"fibre dim {v['fibre_dim']} (= Nd^2 - rank Dφ), gauge rank {v['gauge_rank']}, "
                           f"expected (N-1)d^2 = {want}; residual counts mismatches")


fibre.property(over=("d", "N", "seed"), max_examples=15)


#: the gauge direction at W_p of the corrected fibre (derivative of g_p W_p g_{p-1}^{-1}, g = I + t xi) and misprints
FIBRE_VARIANTS = {
    "corrected": lambda xi, W, k: xi[k] * W - W * xi[k - 1],
    "sign_flipped": lambda xi, W, k: xi[k] * W + W * xi[k - 1],      # g_p W_p g_{p-1}
    "same_index": lambda xi, W, k: xi[k] * W - W * xi[k],            # g_p W_p g_p^{-1}
}


def _m3_prove(variant="corrected"):
    """Entries of d/dt phi(W + tV)|_{t=0} (sympy diff of the product) with V_p the gauge direction (variant),
    symbolic W_p and xi_1..xi_{N-1} (xi_0 = xi_N = 0), that do not expand to 0."""
    t = sp.Symbol("t")
    bad = 0
    for d, N in ((2, 2), (2, 3), (1, 4)):
        Ws = [sp.Matrix(d, d, lambda i, j, p=p: sp.Symbol(f"w{p}_{i}{j}")) for p in range(N, 0, -1)]
        xi = [sp.zeros(d, d)] + [sp.Matrix(d, d, lambda i, j, p=p: sp.Symbol(f"x{p}_{i}{j}"))
                                 for p in range(1, N)] + [sp.zeros(d, d)]
        moved = [W + t * FIBRE_VARIANTS[variant](xi, W, k) for W, k in zip(Ws, range(N, 0, -1))]
        dW = dln.prod(moved).diff(t).subs(t, 0)
        bad += sum(1 for e in dW if sp.expand(e) != 0)
    return bad


@fibre.symbolic(timeout=30)
def _m3_symbolic(p):
    """Symbolic W_p and ξ_p: d/dt φ(W + t(ξ_pW_p - W_pξ_{p-1})) = 0 at t = 0, so the GL_d gauge directions lie in
    ker Dφ."""
    bad = _m3_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy diff + expand", "instances_d_N": [[2, 2], [2, 3], [1, 4]],
        "proved": "sum_p A_{p+1}(ξ_p W_p - W_p ξ_{p-1})B_{p-1} = 0 for all ξ_1..ξ_{N-1} (ξ_0 = ξ_N = 0)"},
        message="entries that did not expand to zero")


@fibre.mutant({
    "sign_flipped": "the orbit g_pW_pg_{p-1} (no inverse): direction ξ_pW_p + W_pξ_{p-1}",
    "same_index": "the orbit g_pW_pg_p^{-1} (index not shifted): direction ξ_pW_p - W_pξ_p",
}, timeout=30)
def _m3_mutant(p, variant):
    """The gauge action perturbed, through the same procedure: Dφ of its directions must not vanish."""
    bad = _m3_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} entries of Dφ applied to the {variant} gauge directions did not expand to zero")


@fibre.falsifier("stated", search=("seed",))
def _m3_stated(p):
    """The printed count: the representations of W number (or span) N d² — measured (N-1)d², a continuum."""
    v = _fibre_measure(p.replace(point="random"), n_points=p.N * p.d ** 2 + 1)
    stated = p.N * p.d ** 2
    v["stated_count"] = stated
    return Outcome(residual=abs(v["fibre_dim"] - stated), tolerance=0, values=v,
                   counterexample={"fibre_dim": v["fibre_dim"], "stated": stated,
                                   "distinct_representations_found": v["distinct_fibre_points"]},
                   message=f"fibre dimension {v['fibre_dim']} != Nd^2 = {stated}" + (
                       f"; and {v['distinct_fibre_points']} > Nd^2 distinct representations on one gauge curve "
                       "(the fibre is a manifold, not a finite set)" if p.N >= 2 else
                       "; for N = 1 the fibre is the single point W_1 = W"))


@fibre.falsifier("zero_tuple", fixed={"point": "zero", "N": 2})
def _m3_zero(p):
    """Drop 'W invertible': at W = 0 with N >= 2, rank Dφ = 0, so ker Dφ has dimension Nd², not (N-1)d²."""
    if p.N < 2:
        raise ParamError("the zero_tuple falsifier needs N >= 2 (for N = 1, Dφ = I)")
    v = _fibre_measure(p.replace(point="zero"))
    want = (p.N - 1) * p.d ** 2
    return Outcome(residual=abs(v["fibre_dim"] - want), tolerance=0, values=v,
                   message=f"rank Dφ(0) = {v['rank_Dphi']} so dim ker Dφ = {v['fibre_dim']} != (N-1)d^2 = {want}")


# ===========================================================================
# M4  matrix completion (3.8) is degenerate
completion = Claim(
    id="menon.matrix_completion_degenerate",
    title="Matrix completion (3.8) is degenerate: E is minimised (E = 0) exactly on the affine space S",
    label="(3.8), Sec. 3.2",
    section="3.2",
    equation="(3.8)",
    lines=(150, 162),
    statement=r"E(W)=\tfrac12\sum_{(i,j)\in S}|W_{ij}-a_{ij}|^2\ \text{does not depend on } W_{ij},(i,j)\notin S,"
              r"\ \text{and is minimised on }\mathcal S=\{W: W_{ij}=a_{ij},(i,j)\in S\}",
    status="holds",
    params=[
        Param.int("d", 3, 2, 8, "matrix size (d >= 2: at d = 1 no S is proper and nonempty)", search=(2, 5)),
        Param.seed("seed of the mask S and values a_ij"),
        Param.float("density", 0.5, 0.0, 1.0, "probability that an entry is observed (S nonempty, S != all)",
                    search=(0.1, 0.9)),
        Param.float("spread", 100.0, 0.0, 1e6, "size of the unobserved entries of the test minimisers",
                    low_open=True),
    ],
    notes="Line 158 prints 'does not depend on the values M_ij' for W_ij (typo, E18). The minimiser set is the "
          "affine space S of dimension d^2 - |S| > 0 when S is not all entries (the hypothesis: otherwise the "
          "numeric check is inconclusive; the falsifier full_observation makes the point). Numeric check: the "
          "Hessian by second differences with step 1 (exact for a quadratic, rounding only) equals the "
          "projector diag(1_S); E vanishes at random points of S of size 'spread'; moving from a minimiser in "
          "the unobserved directions keeps E = 0 (degeneracy: min over unit directions of E(W*+v) is 0).",
    catalogue="menon §2.1 M4; §4 E18",
)


MASK_TRIES = 1000  # masks drawn until 0 < |S| < d^2 (the statement's S is a proper nonempty set of entries)


def _m4_instance(p, full=False):
    """Mask, observed values and the rng.  The mask is Bernoulli(density) per entry conditioned on the hypothesis
    0 < |S| < d^2 (drawn again from the same rng until it holds, at most MASK_TRIES times: a sweep drawing d = 1 or
    density near 0 / 1 left 5/20 draws (seed 777001) inconclusive on an empty or full mask)."""
    rng = np.random.default_rng(p.seed)
    if full:
        mask = np.ones((p.d, p.d))
    else:
        for _ in range(MASK_TRIES):
            mask = (rng.random((p.d, p.d)) < p.density).astype(float)
            if 0 < mask.sum() < p.d ** 2:
                break
    a = rng.standard_normal((p.d, p.d))
    return mask, a * mask, rng


def _mc_energy(W, mask, a):
    R = mask * (W - a)
    return 0.5 * float(np.sum(R * R))


def _m4_outcome(p, full=False):
    mask, a, rng = _m4_instance(p, full)
    d = p.d
    nS = int(mask.sum())
    Wstar = a + (1 - mask) * rng.standard_normal((d, d)) * p.spread
    # Hessian by central second differences, step 1: exact for a quadratic E, rounding only
    n = d * d
    H = np.zeros((n, n))
    base = _mc_energy(Wstar, mask, a)
    E = np.eye(n).reshape(n, d, d)
    for i in range(n):
        for j in range(i, n):
            f = lambda s, t: _mc_energy(Wstar + s * E[i] + t * E[j], mask, a)
            H[i, j] = H[j, i] = (f(1, 1) - f(1, -1) - f(-1, 1) + f(-1, -1)) / 4
    proj = np.diag(mask.ravel())
    # Rounding: the observed residuals are O(1) (W* - a = 0 on S, steps 1), each E evaluation errs by
    # <= gamma_{n+2} * (|R|^2 + 1 + ...) <= gamma_{n+2} * 4; four evaluations over 4. Unobserved entries of
    # size 'spread' are multiplied by 0 exactly and do not contribute.
    tol_H = 8 * _gamma(n + 4) * 4
    res_H = float(np.max(np.abs(H - proj)))
    # E on S: random points of S, far apart (spread)
    res_S = max(_mc_energy(a + (1 - mask) * rng.standard_normal((d, d)) * p.spread, mask, a) for _ in range(5))
    tol_S = 0.0  # observed entries equal a_ij exactly, so every residual is exactly 0
    # degeneracy: smallest value of E(W* + v) over unit directions = lambda_min(H)/2
    w, V = np.linalg.eigh(H)
    v = V[:, 0].reshape(d, d)
    res_deg = _mc_energy(Wstar + v, mask, a)
    tol_deg = 8 * _gamma(n + 4) * 2 + res_H  # rounding of E, plus the Hessian error entering v
    # off S, E > 0 and equals the explicit sum (a point with one observed entry off by 1)
    values = {"|S|": nS, "minimiser_set_dim": n - nS, "hessian_rank": int(np.sum(w > 0.5)),
              "hessian_vs_projector": res_H, "E_on_S_max": res_S, "E_at_unit_step_min": res_deg,
              "E_at_base": base, "lambda_min": float(w[0])}
    return Outcome.from_parts({"hessian_is_projector": (res_H, tol_H), "E_zero_on_S": (res_S, tol_S),
                               "degenerate_direction": (res_deg, tol_deg)},
                              "Hess E = P_S (rounding model), E = 0 on S (exact), E(W*+v) = 0 along the kernel",
                              values)


@completion.numeric
def _m4_numeric(p):
    """Hess E = projector onto S; E = 0 on S; E stays 0 along the unobserved directions from a minimiser."""
    mask, _, _ = _m4_instance(p)
    if mask.sum() == 0 or mask.sum() == p.d ** 2:
        return inconclusive(f"no mask among {MASK_TRIES} drawn at density={p.density!r} observes some but not all "
                            "entries; the degeneracy needs 0 < |S| < d^2", S=int(mask.sum()))
    return _m4_outcome(p)


completion.property(over=("d", "seed", "density"), max_examples=15)


_M4_S = [(0, 0), (0, 2), (1, 1), (2, 0), (2, 1)]
#: the matrix-completion energy as printed, E = 1/2 sum_S |W_ij - a_ij|^2, and misprints (W, a, S) -> E
COMPLETION_VARIANTS = {
    "stated": lambda W, a, S: sp.Rational(1, 2) * sum((W[i, j] - a[(i, j)]) ** 2 for (i, j) in S),
    "half_dropped": lambda W, a, S: sum((W[i, j] - a[(i, j)]) ** 2 for (i, j) in S),
    "sign_flipped": lambda W, a, S: sp.Rational(1, 2) * sum((W[i, j] + a[(i, j)]) ** 2 for (i, j) in S),
}


def _m4_prove(variant="stated"):
    """Failures of: Hess E = projector onto S, dE/dW_ij = 0 off S, E = 0 on {W_ij = a_ij, (i,j) in S} (the set
    claimed to be the minimisers), for symbolic W, a and a fixed mask S (d = 3)."""
    d, S = 3, _M4_S
    W = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"W_{i}{j}"))
    a = {(i, j): sp.Symbol(f"a_{i}{j}") for (i, j) in S}
    E = COMPLETION_VARIANTS[variant](W, a, S)
    vs = list(W)
    H = sp.hessian(E, vs)
    P = sp.diag(*[1 if (k // d, k % d) in S else 0 for k in range(d * d)])
    bad = sum(1 for e in (H - P) if sp.expand(e) != 0)
    bad += sum(1 for k, x in enumerate(vs) if (k // d, k % d) not in S and sp.diff(E, x) != 0)
    bad += int(sp.expand(E.subs({W[i, j]: a[(i, j)] for (i, j) in S})) != 0)
    return bad


@completion.symbolic(timeout=30)
def _m4_symbolic(p):
    """Symbolic W, a and a fixed mask: Hess E = diag(1_S), ∂E/∂W_ij = 0 off S, E - 0 on S expands to 0."""
    bad = _m4_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.hessian + expand", "d": 3, "S": _M4_S,
        "proved": "Hess E = projector onto S (rank |S|), E independent of W_ij off S, E = 0 on S"},
        message="entries that did not reduce to zero")


@completion.mutant({
    "half_dropped": "E = sum_S |W_ij - a_ij|^2 (the 1/2 dropped: Hess E = 2 P_S)",
    "sign_flipped": "E = 1/2 sum_S |W_ij + a_ij|^2 (E no longer vanishes on the claimed minimisers)",
}, timeout=30)
def _m4_mutant(p, variant):
    """The energy perturbed, through the same procedure: some identity must fail."""
    bad = _m4_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} entries/conditions did not reduce to zero for E ({variant})")


@completion.falsifier("full_observation", search=("seed",))
def _m4_full(p):
    """S = every entry: E is nondegenerate (Hess E = I), the minimiser is unique and E(W*+v) = 1/2 for unit v."""
    return _m4_outcome(p, full=True)


# ===========================================================================
# M5  E∘φ is not Morse (line 162)
morse = Claim(
    id="menon.not_morse",
    title="E∘φ is not a Morse function: its Hessian at a minimiser has (N-1)d² zero eigenvalues",
    label="Sec. 3.2",
    section="3.2",
    equation="",
    lines=(162, 162),
    statement=r"\phi\circ E(\mathbf W)\ \text{is not a Morse function due to overparametrization}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 4, "width", search=(1, 3)),
        Param.int("N", 3, 2, 5, "depth; N >= 2 for overparametrization (N = 1 is the falsifier depth_one's, which "
                  "sets it itself)", search=(2, 4)),
        Param.seed("seed of the target Y and the factorisation"),
        Param.float("h", 1e-2, 0.0, 1.0, "finite-difference step of the Hessian", low_open=True),
    ],
    notes="Printed '\\phi\\circ E' is read E∘φ (E18). Instance: E = 1/2|W - Y|^2 with Y invertible and W any "
          "factorisation of Y (W_1 = (W_N...W_2)^{-1} Y), a global minimiser. The Hessian is computed by central "
          "differences of the exact gradient (3.6); the gradient is a polynomial of degree 2 in each single "
          "coordinate, so the central difference is exact and only rounding (eps |grad|_abs / h) enters. "
          "Zero eigenvalues are those below that bound (Weyl); the count is exact, (N-1)d^2, because rank Dφ = d^2 "
          "at invertible W, and it also matches Dφ^T Dφ (the exact Hessian at a critical point with Hess E = I). "
          "LaSalle's failure (E not coercive) is not checked here. Falsifier N = 1: the Hessian is I (Morse).",
    catalogue="menon §2.1 M5; §4 E18",
)


def _m5_instance(p):
    rng = np.random.default_rng(p.seed)
    d, N = p.d, p.N
    Y = rng.standard_normal((d, d)) + 2 * np.eye(d)
    top = dln.random_layers([d] * N, rng, scale=1.0)  # W_N .. W_2
    if N > 1:
        for i in range(len(top)):
            top[i] = top[i] + np.eye(d)
        W1 = np.linalg.solve(dln.prod(top), Y)
        Ws = top + [W1]
    else:
        Ws = [Y.copy()]
    return Ws, Y


def _m5_hessian(p):
    Ws, Y = _m5_instance(p)
    d, N, h = p.d, p.N, p.h
    widths = [d] * (N + 1)
    x0 = dln.pack(Ws)
    n = x0.size

    def grad(x):
        L = dln.unpack(x, widths)
        return dln.pack(dln.grads(L, dln.prod(L) - Y))

    H = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        H[:, i] = (grad(x0 + e) - grad(x0 - e)) / (2 * h)
    H = (H + H.T) / 2
    J = _dphi(Ws)
    exact = J.T @ J
    # rounding model: each gradient entry errs by <= gamma_K * G_abs with G_abs the gradient computed
    # from absolute values at a point |W| + h; the difference quotient adds 2 of them over 2h.
    K = _chain_k(widths) + d + 4
    Wabs = [np.abs(w) + h for w in Ws]
    Gabs = dln.pack(dln.grads(Wabs, dln.prod(Wabs) + np.abs(Y)))
    col = 2 * _gamma(K) * Gabs / (2 * h) * 2
    tol_H = float(np.sqrt(n) * np.linalg.norm(col))  # Frobenius bound of the FD error matrix
    ev = np.linalg.eigvalsh(H)
    nzero = int(np.sum(np.abs(ev) <= tol_H))
    amb = bool(np.any((np.abs(ev) > tol_H) & (np.abs(ev) <= 1e3 * tol_H)))
    grad_at_min = float(np.linalg.norm(grad(x0)))
    v = {"zero_eigenvalues": nzero, "nonzero_eigenvalues": n - nzero, "n_parameters": n,
         "expected_zero": (N - 1) * d * d, "eig_tolerance": tol_H,
         "smallest_nonzero": float(np.min(np.abs(ev)[np.abs(ev) > tol_H])) if nzero < n else None,
         "largest_zero": float(np.max(np.abs(ev)[np.abs(ev) <= tol_H])) if nzero else None,
         "fd_vs_exact_hessian": float(np.linalg.norm(H - exact)), "grad_norm_at_minimiser": grad_at_min,
         "ambiguous": amb}
    return v, tol_H


@morse.numeric
def _m5_numeric(p):
    """FD Hessian of E∘φ at a factorisation of Y: >= (N-1)d² zero eigenvalues (exactly that many), not Morse."""
    v, tol = _m5_hessian(p)   # N >= 2 by the declared range (N = 1: the falsifier depth_one)
    if v["ambiguous"]:
        return inconclusive("an eigenvalue lies in the grey zone of the rounding model", **v)
    want = (p.N - 1) * p.d ** 2
    # not Morse: at least (N-1)d^2 (>= 1) zero eigenvalues; and the FD Hessian agrees with Dφ^T Dφ
    deficit = max(0, want - v["zero_eigenvalues"]) + int(v["fd_vs_exact_hessian"] > tol)
    return Outcome(residual=deficit, tolerance=0, values=v,
                   message=f"{v['zero_eigenvalues']} zero / {v['nonzero_eigenvalues']} nonzero Hessian eigenvalues "
                           f"(>= {want} zero required); FD vs Dφ^TDφ {v['fd_vs_exact_hessian']:.1e} (tol {tol:.1e})")


morse.property(over=("d", "N", "seed"), max_examples=12)


@morse.falsifier("depth_one")
def _m5_depth_one(p):
    """N = 1 (set here, whatever N is given: the claim's range starts at its hypothesis N = 2): L = E, Hessian I,
    no zero eigenvalue — Morse; the overparametrization is what breaks it."""
    v, tol = _m5_hessian(p.replace(N=1))
    return Outcome(residual=max(0, 1 - v["zero_eigenvalues"]), tolerance=0, values=v,
                   message=f"N = 1: {v['zero_eigenvalues']} zero eigenvalues (a degenerate critical point needs >= 1)")


@morse.reproduction
def _m5_reproduction(p):
    """Catalogue §2.1 M5: d = 3, N = 3 gives exactly 18 zero and 9 nonzero Hessian eigenvalues."""
    quoted = (18, 9)
    v, _ = _m5_hessian(morse.resolve({"d": 3, "N": 3, "seed": 0}))
    got = (v["zero_eigenvalues"], v["nonzero_eigenvalues"])
    return Outcome(residual=abs(got[0] - quoted[0]) + abs(got[1] - quoted[1]), tolerance=0,
                   values={"computed": list(got), "quoted": list(quoted), **v},
                   message="zero / nonzero eigenvalue counts, compared exactly")
