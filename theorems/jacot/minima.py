"""Minima of the cost of identity and the model's definitions (§2, §2.3, §2.4, §4, App. B).

* P1c  the stable rank is continuous, the COI is not (``jacot.coi_discontinuity``);
* P2   stable minima are non-negative with COI = rank (``jacot.stable_minima``);
* P3   the Caratheodory constant-COI path (``jacot.constant_coi_path``), P3b (empirical);
* M1-M3, E22  the ODE, its discretisation D1 and the objective (``jacot.leaky_discretisation``);
* H1   the backward equation of the momenta (``jacot.momentum_backward_equation``);
* H6, L7, L9, F2, X1  remarks, citations and experiments, registered with notes.

Every cost of identity / image condition goes through ``solvers.leaky`` (``coi``, ``g_norm2``,
``image_condition``: +inf convention of l.87).  The proof errata of Props 1-3 and Prop 10
(E3, E5, E6, E12, E15, E17, E18, E19) live in ``theorems.jacot.proofs``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import fd, leaky, rk
from solvers import leaky_net as ln
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------
# shared helpers (also used read-only by theorems.jacot.proofs)
def nonneg_lowrank(w, N, k, seed):
    """``A = |G_1| |G_2|`` (w x N, non-negative, rank min(k, w, N) generically)."""
    rng = np.random.default_rng(seed)
    return np.abs(rng.standard_normal((w, k))) @ np.abs(rng.standard_normal((k, N)))


def ones_in_rowspace(A) -> bool:
    """Is ``1_N`` in ``Im A^T`` (decided by ``solvers.leaky.image_condition`` on ``A^T A``)?"""
    return leaky.image_condition(np.ones((1, A.shape[1])), A.T @ A)[0]


def coi_tol(A, bias=True):
    """Rounding model of ``solvers.leaky.coi``: a pseudo-inverse quadratic form on the kept spectrum of
    the Gram ``G`` has relative error ~ n eps cond(G) (eigh backward error n eps |G| divided by the
    smallest kept eigenvalue); factor 10 for the accumulation over the w rows."""
    G = leaky.gram(A, bias)
    lam = np.linalg.eigvalsh(G)
    top = max(float(lam[-1]), 0.0)
    kept = lam[lam > G.shape[0] * EPS * top]
    cond = float(top / kept[0]) if kept.size else 1.0
    return 10 * G.shape[0] * EPS * cond


def kplus_ones(A):
    """``K^+ 1`` with the Moore-Penrose inverse of ``K = sigma(A)^T sigma(A)`` (eigh, LAPACK cutoff)."""
    K = leaky.gram(A)
    return np.linalg.pinv(K, hermitian=True) @ np.ones(A.shape[1])


def caratheodory(Ah):
    """Prop 3 (Prop 7) construction: a vertex ``a >= 0`` of ``{sum_i a_i (Ah_i Ah_i^T, relu(Ah_i) relu(Ah_i)^T)
    = (Ah^T Ah, Kbar)}`` (HiGHS dual simplex), polished by least squares on its support so that the
    equality holds to rounding.  Returns (a, support size, constraint rank, relative residual)."""
    from scipy.optimize import linprog

    w, N = Ah.shape
    R = np.maximum(Ah, 0.0)
    iu = np.triu_indices(N)
    M = np.array([np.concatenate([np.outer(Ah[i], Ah[i])[iu], np.outer(R[i], R[i])[iu]]) for i in range(w)]).T
    b = M.sum(axis=1)  # a = 1 is feasible: the target is the pair itself
    res = linprog(np.zeros(w), A_eq=M, b_eq=b, bounds=[(0, None)] * w, method="highs-ds")
    if res.status != 0:
        return None, 0, 0, np.inf
    S = res.x > 1e-9 * max(1.0, float(np.max(res.x)))
    sol, *_ = np.linalg.lstsq(M[:, S], b, rcond=None)
    if np.any(sol < 0):
        sol = res.x[S]
    a = np.zeros(w)
    a[S] = sol
    resid = float(np.linalg.norm(M @ a - b) / np.linalg.norm(b))
    return a, int(S.sum()), int(np.linalg.matrix_rank(M)), resid


def coi_path(Ah, a, t):
    """Rows ``A_{t,i} = sqrt((1 - t) + t a_i) Ah_i``."""
    return np.sqrt((1 - t) + t * a)[:, None] * Ah


def escape_search(A, seed):
    """Smallest COI change over an 'escape family' at A and the rounding tolerance of a change: scaling A by
    (1 - d), appending a row d z (z a column of Kbar, the direction of Prop 6's proof, or random), and random
    perturbations of A, for d in {1e-1, 1e-2, 1e-3} (relative to |A|_F)."""
    rng = np.random.default_rng(seed + 7)
    c0 = leaky.coi(A)
    Kbar = leaky.gram(A, bias=False)
    nA = float(np.linalg.norm(A)) or 1.0
    best = np.inf
    for d in (1e-1, 1e-2, 1e-3):
        cands = [(1 - d) * A]
        for z in list(Kbar.T) + [rng.standard_normal(A.shape[1]) for _ in range(3)]:
            nz = np.linalg.norm(z)
            if nz > 0:
                cands.append(np.vstack([A, d * nA * z[None, :] / nz]))
        for _ in range(5):
            E = rng.standard_normal(A.shape)
            cands.append(A + d * nA * E / np.linalg.norm(E))
        for C in cands:
            best = min(best, leaky.coi(C) - c0)
    return float(best), 2 * coi_tol(A) * max(abs(c0), 1.0)


def _rank(A):
    return int(np.linalg.matrix_rank(A))


def _srank(A):
    s = np.linalg.svd(A, compute_uv=False)
    s = s / s[0] if s[0] > 0 else s  # scale-free, so that s ~ 1e-200 does not underflow to 0/0
    return float(s.sum() ** 2 / (s * s).sum())


# ---------------------------------------------------------------------------
# P1c: continuity of the stable rank vs the COI
cont = Claim(
    id="jacot.coi_discontinuity",
    title="The stable rank |A|_*^2/|A|_F^2 is continuous (A != 0); the cost of identity is not",
    label="l.128 (P1c)",
    section="2.3",
    equation="l.128",
    lines=(128, 128),
    statement=r"A\mapsto\frac{\|A\|_*^2}{\|A\|_F^2}\text{ is continuous on }A\neq0,\ \text{whereas }A\mapsto\|A\|^2_{\tilde K}"
              r"\text{ is discontinuous}",
    status="holds",
    params=[
        Param.int("w", 4, 1, 32, "rows of A", search=(2, 6)),
        Param.int("N", 5, 1, 32, "columns of A", search=(2, 6)),
        Param.int("r", 2, 1, 31, "rank of the non-negative base point A_0", search=(1, 3)),
        Param.float("eps", 0.1, 0.0, 1.0, "largest perturbation size; the sequence is eps * 10^-j, j = 0..4",
                    low_open=True, search=(0.01, 1.0)),
        Param.seed("seed"),
    ],
    validate=lambda p: _validate_cont(p),
    notes="A_eps = A_0 + eps E with A_0 = |G1||G2| >= 0 of rank r and E = |u||v|^T >= 0 generic: A_eps >= 0 has "
          "rank r + 1, so (C1) the COI without bias is r + 1 for every eps > 0 and r at eps = 0 (a jump of 1), "
          "while the stable rank moves by at most the Lipschitz bound from |.|_* and |.|_F (triangle "
          "inequalities). The catalogue's example is diag(1, eps) (r = 1, COI 2 -> 1).",
    catalogue="jacot §2.3 P1c",
    covers=("P1c",),
)


def _validate_cont(p):
    if p.r >= min(p.w, p.N):
        raise ParamError(f"parameter r must be < min(w, N) so that A_0 + eps E can gain a rank (got r={p.r}, "
                         f"w={p.w}, N={p.N})")


def _cont_data(p):
    rng = np.random.default_rng(p.seed)
    A0 = np.abs(rng.standard_normal((p.w, p.r))) @ np.abs(rng.standard_normal((p.r, p.N)))
    E = np.outer(np.abs(rng.standard_normal(p.w)), np.abs(rng.standard_normal(p.N)))
    E /= np.linalg.norm(E)
    A0 /= np.linalg.norm(A0)
    return A0, E


def _cont_outcome(p, coi_law="jump"):
    A0, E = _cont_data(p)
    eps = p.eps * 10.0 ** -np.arange(5)
    c0, s0 = leaky.coi(A0, bias=False), _srank(A0)
    n0 = float(np.linalg.svd(A0, compute_uv=False).sum())
    nE = float(np.linalg.svd(E, compute_uv=False).sum())
    cois, sranks, s_excess, c_res, tols = [], [], 0.0, 0.0, []
    for e in eps:
        A = A0 + e * E
        if _rank(A) != p.r + 1:
            return inconclusive(f"A_0 + {e:.1e} E does not have rank r + 1 (degenerate draw)", eps=float(e))
        c, s = leaky.coi(A, bias=False), _srank(A)
        if not np.isfinite(c):
            return inconclusive(f"image condition undecidable at eps = {e:.1e} (grey zone of solvers.leaky)")
        cois.append(c)
        sranks.append(s)
        # Lipschitz envelope: | |A|_* - n0 | <= e nE, | |A|_F - 1 | <= e (|A0|_F = |E|_F = 1)
        lo = max(n0 - e * nE, 0.0) ** 2 / (1 + e) ** 2
        hi = (n0 + e * nE) ** 2 / max(1 - e, 1e-300) ** 2 if e < 1 else np.inf
        s_excess = max(s_excess, lo - s, s - hi)
        tol_c = coi_tol(A, bias=False) * max(c, 1.0) + coi_tol(A0, bias=False) * max(c0, 1.0)
        tols.append(tol_c)
        if coi_law == "jump":  # the claim: COI(A_eps) - COI(A_0) = 1 for every eps > 0
            c_res = max(c_res, abs((c - c0) - 1.0) / tol_c)
        else:  # falsifier: continuity, |COI(A_eps) - COI(A_0)| within the stable rank's envelope
            c_res = max(c_res, abs(c - c0) / (tol_c + (hi - lo if np.isfinite(hi) else 0.0)))
    s_tol = 100 * max(p.w, p.N) * EPS * max(sranks)  # svd rounding of the ratio
    plot = {"kind": "semilogx", "x": [float(e) for e in eps],
            "series": {"COI without bias": cois, "stable rank": sranks},
            "xlabel": "eps", "ylabel": "value", "title": "A_0 + eps E: the COI stays at r + 1, the stable rank converges"}
    values = {"coi_A0": c0, "srank_A0": s0, "coi": cois, "srank": sranks, "eps": [float(e) for e in eps],
              "plot": plot}
    name = "COI jump = 1" if coi_law == "jump" else "COI continuous"
    return Outcome.from_parts({"srank within Lipschitz envelope": (max(0.0, s_excess), s_tol),
                               name: (c_res, 1.0)},
                              message=f"COI(A_0) = {c0:.6g} -> COI(A_eps) = {cois[-1]:.6g}; srank {s0:.6g} vs "
                                      f"{sranks[-1]:.6g} at eps = {eps[-1]:.0e}", values=values)


@cont.numeric
def _(p):
    """Along eps -> 0: the stable rank stays inside its Lipschitz envelope, the COI (solvers.leaky.coi) stays r + 1."""
    return _cont_outcome(p)


cont.property(over=("w", "N", "r", "eps", "seed"), max_examples=15)


@cont.falsifier("coi_continuous")
def _(p):
    """The COI continuous like the stable rank: |COI(A_eps) - COI(A_0)| within the same envelope."""
    return _cont_outcome(p, coi_law="continuous")


def _cont_symbolic(variant):
    """A_e = diag(1, e) -> A_0 = diag(1, 0) (non-negative, so COI = |A A^+|_F^2): the jumps
    |lim_e srank(A_e) - srank(A_0)| and |lim_e COI(A_e) - COI(A_0)| from singular values and pinv.  The statement
    (or a perturbed one) says which quantity is continuous (jump 0) and which is not: failed assertions."""
    e = sp.Symbol("e", positive=True)

    def srank(A):
        sv = [x for x in A.singular_values() if x != 0]
        return sum(sv) ** 2 / sum(x**2 for x in sv)

    def coi(A):
        return (A * A.pinv()).trace()

    def rank(A):
        return sp.Integer(A.rank())
    A_e, A_0 = sp.diag(1, e), sp.diag(1, 0)
    continuous, discontinuous = {"stated": (srank, coi), "coi_continuous": (coi, srank),
                                 "rank_continuous": (rank, coi)}[variant]
    jump = lambda f: sp.Abs(sp.limit(sp.cancel(f(A_e)), e, 0) - f(A_0))  # noqa: E731
    return int(jump(continuous) != 0) + int(jump(discontinuous) == 0)


@cont.symbolic(timeout=30)
def _(p):
    """diag(1, e): srank (1 + e)^2/(1 + e^2) -> 1 as e -> 0, while COI = Tr[A A^+] = 2 for e > 0 and 1 at e = 0."""
    bad = _cont_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy singular_values, pinv, limit",
                   "proved": "lim_{e->0} srank(diag(1,e)) = 1 = srank(diag(1,0)); COI(diag(1,e)) = 2 != 1 = COI(diag(1,0))"},
                   message="failed assertions (a jump where continuity is stated, or none where a jump is)")


@cont.mutant({"coi_continuous": "the roles swapped: the COI continuous, the stable rank discontinuous",
              "rank_continuous": "Rank A (not the stable rank |A|_*^2/|A|_F^2) continuous"}, timeout=30)
def _(p, variant):
    """The statement perturbed, through the same procedure: an assertion must fail."""
    bad = _cont_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: {bad} continuity assertions fail at diag(1, e) -> diag(1, 0)")


# ---------------------------------------------------------------------------
# P2 (Prop 6): stable minima
stable = Claim(
    id="jacot.stable_minima",
    title="Stable local minima of the COI are non-negative and have COI with bias = COI without bias = rank",
    label="Prop 2 (Prop 6)",
    section="2.3, A.1",
    equation="Prop 2",
    lines=(132, 132),
    statement=r"A\text{ a stable local minimum of }A\mapsto\|A\|_K^2\ \Longrightarrow\ A\ge0,\ "
              r"\|A\|_K^2=\|A\|_{\tilde K}^2=\mathrm{Rank}\,A",
    status="holds",
    params=[
        Param.int("w", 6, 1, 32, "neurons (rows of A)", search=(2, 7)),
        Param.int("N", 5, 2, 32, "data points (columns of A)", search=(3, 7)),
        Param.int("k", 3, 1, 31, "inner dimension of A = |G1||G2| (k < N so that 1 is not in Im A^T)", search=(1, 3)),
        Param.seed("seed"),
        Param.int("n_pert", 30, 1, 10_000, "random perturbations per scale in the stability test"),
        Param.matrix("A", None, "your own candidate minimum A (w x N); overrides w, N, k, seed"),
    ],
    validate=lambda p: _validate_stable(p),
    notes="The check decides the hypothesis first: criticality via the scaling derivative (P2.i: AK^+1 = 0) and "
          "stability via random perturbations of A and of an appended zero row at relative scales 1e-2, 1e-4, "
          "1e-6; if either fails the instance is inconclusive (not a stable minimum), otherwise non-negativity, "
          "1^T K^+ 1 = 1 and COI_bias = COI_nobias = rank are asserted. The default candidates A = |G1||G2| with "
          "1 not in Im A^T are the stable minima the proof describes. Proof errata E5, E6 (and E12, E18, E19) are "
          "in theorems.jacot.proofs.",
    catalogue="jacot §2.3 P2 (P2.i-P2.vi); §3 R2",
    covers=("P2",),
)


def _validate_stable(p):
    if p.A is None and p.k >= p.N:
        raise ParamError(f"parameter k must be < N (got k={p.k}, N={p.N}): with k >= N, 1 lies in Im A^T and "
                         "A = |G1||G2| is not a stable minimum")


def _stable_candidate(p):
    if p.A is not None:
        return np.array(p.A, dtype=float)
    return nonneg_lowrank(p.w, p.N, p.k, p.seed)


def stability_test(A, n_pert, seed):
    """Smallest COI change over random perturbations of A and of an appended zero row (relative scales
    1e-2, 1e-4, 1e-6), and the rounding tolerance of that change."""
    rng = np.random.default_rng(seed + 1)
    c0 = leaky.coi(A)
    scale = float(np.linalg.norm(A)) or 1.0
    worst, tol = np.inf, coi_tol(A) * max(c0, 1.0)
    for s in (1e-2, 1e-4, 1e-6):
        for _ in range(n_pert):
            E = rng.standard_normal(A.shape)
            d1 = leaky.coi(A + s * scale * E / np.linalg.norm(E)) - c0
            z = rng.standard_normal((1, A.shape[1]))
            Ap = np.vstack([A, s * scale * z / np.linalg.norm(z)])
            d2 = leaky.coi(Ap) - c0
            worst = min(worst, d1, d2)
    return float(worst), 2 * tol


def _stable_outcome(p, assume_hypothesis=True, A=None):
    A = _stable_candidate(p) if A is None else A
    N = A.shape[1]
    c_b, c_n, r = leaky.coi(A), leaky.coi(A, bias=False), _rank(A)
    kp1 = kplus_ones(A)
    crit = float(np.linalg.norm(A @ kp1))
    tol_b = coi_tol(A) * max(c_b if np.isfinite(c_b) else 1.0, 1.0)
    tol_n = coi_tol(A, bias=False) * max(c_n if np.isfinite(c_n) else 1.0, 1.0)
    # |A K^+ 1|: rounding of the pseudo-inverse ~ cond(K) eps |A| |K^+ 1|
    tol_crit = coi_tol(A) * float(np.linalg.norm(A)) * max(float(np.linalg.norm(kp1)), 1.0)
    values = {"coi_bias": c_b, "coi_nobias": c_n, "rank": r, "|A K^+ 1|": crit,
              "1^T K^+ 1": float(np.sum(kp1)), "min_entry": float(A.min())}
    if assume_hypothesis:
        if crit > tol_crit:
            return inconclusive(f"A is not critical (|A K^+ 1| = {crit:.2e}; the scaling derivative "
                                f"2|A K^+ 1|^2 != 0): not a local minimum", **values)
        worst, tol_s = stability_test(A, p.n_pert, p.seed if p.A is None else 0)
        values["min_coi_change"] = worst
        if worst < -tol_s:
            return inconclusive(f"a perturbation lowers the COI by {-worst:.2e}: A is not a stable local minimum",
                                **values)
    parts = {"A >= 0": (max(0.0, -float(A.min())), 0.0),
             "COI_bias = rank": (abs(c_b - r), tol_b),
             "COI_nobias = rank": (abs(c_n - r), tol_n),
             "1^T K^+ 1 = 1": (abs(float(np.sum(kp1)) - 1.0), tol_crit + coi_tol(A) * N)}
    return Outcome.from_parts(parts, message=f"COI bias {c_b:.10g}, no bias {c_n:.10g}, rank {r}", values=values)


@stable.numeric
def _(p):
    """Hypothesis (critical, no perturbation lowers the COI) decided first; then A >= 0 and the equalities."""
    return _stable_outcome(p)


stable.property(over=("w", "N", "k", "seed"), max_examples=12, fixed={"n_pert": 10})


@stable.falsifier("constant_row", fixed={"w": 6, "N": 8, "k": 3})
def _(p):
    """Drop '1 not in Im A^T' (which stability forces): A >= 0 with a constant row 2 has COI_bias < COI_nobias = rank."""
    A = nonneg_lowrank(p.w, p.N, p.k, p.seed)
    A[0] = 2.0
    out = _stable_outcome(p, assume_hypothesis=False, A=A)
    out.values["form"] = "every non-negative A (one row constant: 1 in Im A^T)"
    return out


@stable.falsifier("negative_entries", search=("seed",), fixed={"w": 4, "N": 3, "k": 2})
def _(p):
    """Assert the conclusions for a generic A with negative entries (not a stable minimum): they fail."""
    A = np.random.default_rng(p.seed).standard_normal((p.w, p.N)) + 0.5
    return _stable_outcome(p, assume_hypothesis=False, A=A)


@stable.reproduction
def _(p):
    """R2: COI_bias = COI_nobias = rank on 300 random non-negative low-rank A with 1 not in Im A^T (quoted: 0 failures
    at 1e-7; here failures are counted against the rounding model cond(K) eps, the 1e-7 count is reported); also the largest 1^T K^+ 1 over the same draws (P2.iv, quoted max 1 + 1.8e-8 over 5000 generic samples)."""
    rng = np.random.default_rng(2024)
    fails, used, worst, xmax, at_quoted = 0, 0, 0.0, -np.inf, 0
    while used < 300:
        w, N = int(rng.integers(2, 9)), int(rng.integers(3, 9))
        k = int(rng.integers(1, N))
        A = np.abs(rng.standard_normal((w, k))) @ np.abs(rng.standard_normal((k, N)))
        if ones_in_rowspace(A):
            continue
        used += 1
        r = _rank(A)
        dev = max(abs(leaky.coi(A) - r), abs(leaky.coi(A, bias=False) - r))
        worst = max(worst, dev)
        at_quoted += int(dev > 1e-7)
        # failure against the rounding model of solvers.leaky.coi (cond(K) eps), not a fixed 1e-7
        fails += int(dev > max(coi_tol(A), coi_tol(A, bias=False)) * max(r, 1))
        xmax = max(xmax, float(np.sum(kplus_ones(A))))
    return Outcome(residual=float(fails), tolerance=0.0, values={"samples": used, "failures_rounding_model": fails,
                   "above_1e-7": at_quoted,
                   "max_deviation": worst, "quoted_failures": 0, "max_1^T K^+ 1": xmax},
                   message=f"{fails} of {used} non-negative minima violate COI_bias = COI_nobias = rank beyond rounding "
                           f"({at_quoted} above the catalogue's fixed 1e-7, max deviation {worst:.1e}); quoted 0 of 300")


def _stable_symbolic(factor=2, sm_sign=1):
    """P2.i: d/ds COI(sA)|_{s=1} (from the COI's definition) minus factor |A K^+ 1|^2 on a rational 2 x 3 example;
    P2.iv: 1^T (Kbar + 11^T + g)^-1 1 minus x/(1 + sm_sign x), x = 1^T (Kbar + g)^-1 1: identities that fail."""
    s = sp.Symbol("s", positive=True)
    A = sp.Matrix([[1, 2, -1], [sp.Rational(1, 2), -1, 3]])
    R = A.applyfunc(lambda x: max(x, 0))
    one = sp.ones(3, 1)
    Kbar = R.T * R
    K = Kbar + one * one.T
    coi_s = (s**2 * A.T * A * (s**2 * Kbar + one * one.T).inv()).trace()
    lhs = sp.diff(coi_s, s).subs(s, 1)
    v = A * K.inv() * one
    bad = int(sp.nsimplify(sp.cancel(lhs - factor * (v.T * v)[0, 0])) != 0)
    g = sp.Symbol("gamma", positive=True)
    x = (one.T * (Kbar + g * sp.eye(3)).inv() * one)[0, 0]
    sm = (one.T * (Kbar + one * one.T + g * sp.eye(3)).inv() * one)[0, 0]
    bad += int(sp.cancel(sp.together(sm - x / (1 + sm_sign * x))) != 0)
    return bad, lhs, 2 * (v.T * v)[0, 0]


@stable.symbolic(timeout=60)
def _(p):
    """P2.i: d/ds COI(sA)|_{s=1} = 2 |A K^+ 1|^2 on a rational 2 x 3 example (K invertible, mask fixed for s > 0);
    P2.iv: Sherman-Morrison 1^T (Kbar + 11^T + g)^-1 1 = x/(1 + x) with x = 1^T (Kbar + g)^-1 1."""
    bad, lhs, rhs = _stable_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff/cancel", "dcoi_ds": str(lhs),
                   "2|AK^+1|^2": str(rhs), "proved": "P2.i scaling derivative and P2.iv Sherman-Morrison, exactly"},
                   message="identities that failed")


@stable.mutant({"scaling_factor_one": "P2.i with |A K^+ 1|^2 (the factor 2 of the scaling derivative dropped)",
                "sherman_morrison_sign": "P2.iv with x/(1 - x) (sign in the Sherman-Morrison denominator)"}, timeout=60)
def _(p, variant):
    """The proof's identities perturbed, through the same procedure: one must fail."""
    bad = _stable_symbolic(**{"scaling_factor_one": dict(factor=1), "sherman_morrison_sign": dict(sm_sign=-1)}[variant])[0]
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} identities failed")


# ---------------------------------------------------------------------------
# P3 (Prop 7): constant-COI path
path = Claim(
    id="jacot.constant_coi_path",
    title="For w > N(N+1), a constant-COI path leads from any non-non-negative A to a point with a zero row",
    label="Prop 3 (Prop 7)",
    section="2.3, A.1",
    equation="Prop 3",
    lines=(134, 136),
    statement=r"w>N(N+1),\ \hat A\text{ a local min. of }\|A\|_K^2,\ \hat A\not\ge0\ \Rightarrow\ \exists\text{ continuous }"
              r"A_t,\ \|A_t\|^2_{K_t}\equiv\|\hat A\|_{\hat K}^2,\ A_0=\hat A,\ A_1\text{ a saddle}",
    status="gap",
    corrected=r"w>N(N+1),\ \hat A\not\ge0\ \Rightarrow\ A_{t,i}=\sqrt{(1-t)+ta_i}\,\hat A_i\text{ has constant }"
              r"(A_t^TA_t,\bar\sigma(A_t)^T\bar\sigma(A_t))\text{ and COI},\ A_1\text{ has a zero row and }A_1\not\ge0,"
              r"\text{ so (Prop 2) }A_1\text{ is not a local minimum (criticality of }A_1\text{ not shown)}",
    params=[
        Param.int("N", 3, 1, 4, "data points (the LP has N(N+1) equality rows)", search=(2, 3)),
        Param.int("w", 15, 1, 64, "neurons; the claim needs w > N(N+1)", search=(13, 20)),
        Param.seed("seed of A-hat"),
        Param.int("n_t", 11, 2, 201, "grid points in t"),
    ],
    notes="Caratheodory for cones via an LP vertex (scipy HiGHS dual simplex), polished on its support. "
          "Local minimality of A-hat is not needed for the constant COI (any A-hat works). Gap (E18, E19 in "
          "theorems.jacot.proofs): 'saddle' is shown only as 'not a local minimum' (contrapositive of Prop 2), "
          "criticality is not shown; non-negativity of A_t fails because Tr(A^T A - Kbar) = |[A]_-|^2 is constant. "
          "The numeric check also finds a COI decrease near A_1 (escape family of escape_search: it is not a local "
          "minimum); whether A_1 is critical (a saddle) is not checked.",
    catalogue="jacot §2.3 P3; §3 R2",
    covers=("P3",),
)


def _path_outcome(p, need_zero_row=True, feature=None):
    rng = np.random.default_rng(p.seed)
    Ah = rng.standard_normal((p.w, p.N))
    a, nnz, crank, lp_res = caratheodory(Ah)
    if a is None:
        return inconclusive("the LP solver failed")
    ts = np.linspace(0.0, 1.0, p.n_t)
    K0 = Ah.T @ Ah
    R0 = np.maximum(Ah, 0)
    Kb0 = R0.T @ R0
    if feature is None:
        cois = [leaky.coi(coi_path(Ah, a, t)) for t in ts]
    else:  # a non-homogeneous feature map (falsifier): ||A||^2 w.r.t. [feature(A); 1]
        def fcoi(A):
            S = np.vstack([feature(A), np.ones((1, A.shape[1]))])
            return leaky.g_norm2(A, S.T @ S)
        cois = [fcoi(coi_path(Ah, a, t)) for t in ts]
    gram_dev = max(max(np.linalg.norm(At.T @ At - K0), np.linalg.norm(np.maximum(At, 0).T @ np.maximum(At, 0) - Kb0))
                   for At in (coi_path(Ah, a, t) for t in ts)) / max(np.linalg.norm(K0), 1.0)
    A1 = coi_path(Ah, a, 1.0)
    zero_rows = int(np.sum(np.all(A1 == 0, axis=1)))
    neg = float(np.sum(np.minimum(A1, 0) ** 2))
    c0 = cois[0]
    if not np.isfinite(c0):
        return inconclusive("COI of A-hat is infinite (image condition fails)")
    # Error model: the Gram pair moves by the LP residual lp_res (relative) plus rounding; the COI by
    # cond(K) * (that relative perturbation + n eps) * COI.
    tol_c = (coi_tol(Ah) + 10 * coi_tol(Ah) / (Ah.shape[1] * EPS) * lp_res) * max(abs(c0), 1.0)
    dev = max(abs(c - c0) for c in cois)
    parts = {"COI constant": (dev, tol_c),
             "Gram pair constant": (gram_dev, 10 * p.w * EPS + lp_res),
             "A_1 not non-negative": (0.0 if neg > 0 else 1.0, 0.0)}
    if need_zero_row:
        parts["A_1 has a zero row"] = (0.0 if zero_rows >= 1 else 1.0, 0.0)
    if feature is None and need_zero_row:
        esc, tol_e = escape_search(A1, p.seed)
        parts["A_1 not a local minimum (COI decrease found)"] = (max(0.0, esc + tol_e), 0.0)
    values = {"coi_path": [float(c) for c in cois], "support": nnz, "constraint_rank": crank,
              "N(N+1)": p.N * (p.N + 1), "zero_rows_A1": zero_rows, "neg_mass_A1": neg,
              "neg_mass_Ahat": float(np.sum(np.minimum(Ah, 0) ** 2)), "lp_residual": lp_res}
    if "A_1 not a local minimum (COI decrease found)" in parts:
        values["best_coi_change_near_A1"] = esc
    return Outcome.from_parts(parts, message=f"COI {c0:.10g} along t in [0, 1] (max dev {dev:.1e}); "
                                             f"{zero_rows} zero rows at t = 1", values=values)


@path.numeric
def _(p):
    """LP/Caratheodory path: constant Gram pair and COI on a t-grid, a zero row and negative entries at t = 1,
    and a COI decrease next to A_1."""
    if p.w <= p.N * (p.N + 1):
        return inconclusive(f"hypothesis w > N(N+1) fails (w = {p.w}, N(N+1) = {p.N * (p.N + 1)})")
    return _path_outcome(p)


path.property(over=("N", "w", "seed"), max_examples=10)


@path.falsifier({
    "narrow": "Drop w > N(N+1) (w = 6 <= 12): the constraint rank exceeds w, the only "
              "solution is a = 1, no zero row.",
    "tanh_features": {"description": "Replace the positively homogeneous ReLU by tanh: rescaling rows no longer "
                                     "keeps the feature Gram, COI moves.",
                      "fixed": {"w": 15, "N": 3}},
}, fixed={"w": 6, "N": 3})
def _(p, variant):
    return _path_outcome(p, **{"narrow": dict(), "tanh_features": dict(feature=np.tanh)}[variant])


_PATH_ROWS = [(1, 2), (2, -1), (-1, 3), (3, 1), (-2, -1), (1, -3), (2, 5)]  # w = 7 > N(N+1) = 6, N = 2


def _path_symbolic(variant="stated"):
    """Exact Caratheodory step for w = 7, N = 2 (rational rows x_i): a null vector v of the 6 x 7 matrix of the
    pairs (x_i x_i^T, relu(x_i) relu(x_i)^T), a = 1 + tau v with tau the largest step keeping a >= 0 (one a_j = 0).
    Then the printed path A_{t,i} = sqrt((1-t) + t a_i) A-hat_i (or a perturbed one), with relu as Max and the
    weights c_i > 0 symbols substituted afterwards: entries of A_t^T A_t, Kbar_t, K_t and the COI that move in t,
    plus A_0 != A-hat and A_1 without a zero row."""
    t = sp.Symbol("t", nonnegative=True)
    X = sp.Matrix(_PATH_ROWS)
    relu = lambda z: sp.Max(0, z)  # noqa: E731
    cols = []
    for i in range(X.rows):
        x, r = X[i, :].T, X[i, :].T.applyfunc(relu)
        M1, M2 = x * x.T, r * r.T
        cols.append([M1[0, 0], M1[0, 1], M1[1, 1], M2[0, 0], M2[0, 1], M2[1, 1]])
    v = sp.Matrix(cols).T.nullspace()[0]
    tau = min(-1 / vi for vi in v if vi < 0)
    a = [1 + tau * vi for vi in v]
    c = sp.symbols(f"c0:{X.rows}", positive=True)
    weight = {"stated": lambda ai: (1 - t) + t * ai, "no_sqrt": lambda ai: ((1 - t) + t * ai) ** 2,
              "endpoints_swapped": lambda ai: t + (1 - t) * ai}[variant]
    At = sp.Matrix(X.rows, 2, lambda i, j: sp.sqrt(c[i]) * X[i, j])
    sub = {ci: weight(ai) for ci, ai in zip(c, a)}

    def grams(A):
        R = A.applyfunc(relu)
        S = R.col_join(sp.ones(1, 2))
        return A.T * A, R.T * R, S.T * S
    G = [g.subs(sub) for g in grams(At)]
    G0 = grams(X)
    bad = sum(1 for g, g0 in zip(G, G0) for e in (g - g0) if sp.expand(e) != 0)
    coi_t = sp.cancel((At * G[2].inv() * At.T).trace().subs(sub))
    bad += int(sp.diff(coi_t, t) != 0)
    bad += sum(1 for e in (At.subs(sub).subs(t, 0) - X) if sp.expand(e) != 0)
    A1 = At.subs(sub).subs(t, 1)
    bad += int(not any(all(sp.expand(e) == 0 for e in A1[i, :]) for i in range(A1.rows)))
    return bad


@path.symbolic(timeout=60)
def _(p):
    """The printed path sqrt((1-t) + t a_i) A-hat_i, a from an exact Caratheodory step (w = 7, N = 2): Grams,
    K_t and COI constant in t, A_0 = A-hat, A_1 has a zero row."""
    bad = _path_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy nullspace, Max, expand", "rows": _PATH_ROWS,
                   "proved": "A_t^T A_t, Kbar_t, K_t and the COI are constant along the printed path; A_0 = A-hat and "
                             "A_1 has a zero row (ReLU positively homogeneous)"},
                   message="entries that move in t, or failed endpoint conditions")


@path.mutant({"no_sqrt": "A_{t,i} = ((1-t) + t a_i) A-hat_i (the square root dropped)",
              "endpoints_swapped": "A_{t,i} = sqrt(t + (1-t) a_i) A-hat_i (weights of the endpoints swapped)"}, timeout=60)
def _(p, variant):
    """The path perturbed, through the same procedure: entries must move or an endpoint condition fail."""
    bad = _path_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: {bad} Gram entries moving in t or failed endpoint conditions")


# ---------------------------------------------------------------------------
# M1, M2, M3, E22: the ODE, its discretisation and the objective
disc = Claim(
    id="jacot.leaky_discretisation",
    title="The leaky ResNet ODE and its discretisation: D1 with rho = 1/L converges at O(1/L), the printed rho = 1 recursion does not",
    label="l.31-47 (M1-M3)",
    section="2",
    equation="l.33, l.41, l.43, l.47",
    lines=(31, 47),
    statement=r"\partial_p\alpha_p=-\tilde L\alpha_p+W_p\sigma(\alpha_p)\ \text{is the continuous version of}\ "
              r"\alpha_{\ell+1}=(1-\tilde L)\alpha_\ell+W_\ell\sigma(\alpha_\ell)",
    status="heuristic",
    corrected=r"\alpha_{p_\ell}=(1-\tfrac{\tilde L}L)\alpha_{p_{\ell-1}}+\tfrac1LW_{p_\ell}\sigma(\alpha_{p_{\ell-1}})"
              r"\text{ (D1, }\rho_\ell=\tfrac1L)\ \text{satisfies}\ \max|\alpha^{(L)}_1-\alpha_1|=O(1/L),\ "
              r"\mathcal L^{(L)}(\theta)\to\tfrac1N\|f^*(X)-\alpha_1(X)\|^2+\tfrac\lambda{2\tilde L}\int_0^1\|W_p\|_F^2dp",
    params=[
        Param.int("w", 5, 1, 16, "width", search=(2, 6)),
        Param.int("N", 7, 1, 16, "data points", search=(2, 8)),
        Param.float("Lt", 2.0, 0.0, 20.0, "effective depth L~ (0: the NeuralODE of M1)", search=(0.0, 4.0)),
        Param.int("L0", 25, 2, 400, "coarsest number of layers; errors at L0, 2 L0, 4 L0, 8 L0 (need L0 > Lt)",
                  search=(20, 40)),
        Param.float("lam", 0.1, 0.0, 10.0, "regularisation lambda of the objective M3"),
        Param.seed("seed of X, f*(X) and the smooth weights W_p"),
    ],
    validate=lambda p: _validate_disc(p),
    notes="M1 (Lt = 0, the NeuralODE) and M2 (Lt > 0) are definitions; l.43 ('continuous version of "
          "alpha_{l+1} = (1 - Lt) alpha_l + W_l sigma(alpha_l)') is heuristic (E22): it is explicit Euler with step 1, "
          "and by S1 the per-layer leak must be Lt/L. Check: weights W_p = C0 + sin(3p) C1 + p^2 C2, reference "
          "alpha_1 by RK4 with 1000 steps (its error, estimated against 500 steps, is reported), D1 errors at "
          "L0 2^j, j = 0..3; the observed order between the last two L must be 1 within the Richardson "
          "estimate 3 |q_last - q_prev| of the pre-asymptotic drift (geometric drift: remaining deviation <= 2 "
          "|q_last - q_prev|, +1 for ReLU-kink noise). M3: the discrete cost (D1) converges to the continuous "
          "objective (reference: RK4 endpoint, Gauss-Legendre quadrature of int |W_p|^2) at the same order.",
    catalogue="jacot §2.1 M1, M2, M3; §4 E22",
    covers=("M1", "M2", "M3"),
)


def _validate_disc(p):
    if not p.L0 > p.Lt:
        raise ParamError(f"parameter L0 must exceed Lt (D2/D3: rho Lt = Lt/L < 1; got L0={p.L0}, Lt={p.Lt})")


def _disc_setup(p):
    rng = np.random.default_rng(p.seed)
    X = rng.standard_normal((p.w, p.N))
    Y = rng.standard_normal((p.w, p.N))
    C = rng.standard_normal((3, p.w, p.w + 1)) / np.sqrt(p.w + 1)

    def Wf(t):
        return C[0] + np.sin(3 * t) * C[1] + t * t * C[2]
    return X, Y, Wf


def _ode_endpoint(X, Wf, Lt, n):
    w, N = X.shape

    def rhs(t, y):
        A = y.reshape(w, N)
        return (-Lt * A + Wf(t) @ leaky.sigma(A)).ravel()
    return rk.rk_fixed_numpy(rhs, 0.0, X.ravel(), 1.0 / n, n).reshape(w, N)


def _continuous_cost(p, X, Y, Wf, A1):
    if p.Lt == 0 or p.lam == 0:
        return float(np.sum((Y - A1) ** 2) / p.N), 0.0
    xg, wg = np.polynomial.legendre.leggauss(20)
    tq = 0.5 * (xg + 1)
    integral = float(sum(0.5 * wi * np.sum(Wf(t) ** 2) for t, wi in zip(tq, wg)))
    return float(np.sum((Y - A1) ** 2) / p.N) + p.lam / (2 * p.Lt) * integral, integral


def _disc_outcome(p, scheme="D1", claimed_order=1.0):
    X, Y, Wf = _disc_setup(p)
    ref = _ode_endpoint(X, Wf, p.Lt, 1000)
    ref_err = float(np.max(np.abs(ref - _ode_endpoint(X, Wf, p.Lt, 500))))
    J, _ = _continuous_cost(p, X, Y, Wf, ref)
    Ls = [p.L0 * 2**j for j in range(4)]
    errs, cost_errs = [], []
    for L in Ls:
        rho = ln.equidistant(L)
        ps = np.cumsum(rho)
        Ws = np.array([Wf(t) for t in ps])
        if scheme == "D1":
            A = ln.forward_numpy(X, Ws, rho, p.Lt)[-1]
            reg = 0.0 if (p.Lt == 0 or p.lam == 0) else p.lam / (2 * p.Lt) * float(np.sum(rho * np.sum(Ws**2, axis=(1, 2))))
            cost_errs.append(abs(float(np.sum((Y - A) ** 2) / p.N) + reg - J))
        else:  # l.43 printed: per-layer leak Lt, weights W_{p_l}/L
            A = X.copy()
            for l in range(L):
                A = (1 - p.Lt) * A + Ws[l] / L @ leaky.sigma(A)
            cost_errs.append(np.nan)
        errs.append(float(np.max(np.abs(A - ref))))
    errs = np.array(errs)
    if errs[-1] < 1e3 * ref_err or not np.all(np.isfinite(errs)):
        return inconclusive("discretisation error at the finest L is not resolved by the reference", errors=errs.tolist(),
                            reference_error=ref_err)
    q = np.log2(errs[:-1] / errs[1:])
    parts = {"path order": (abs(q[-1] - claimed_order), 3 * abs(q[-1] - q[-2]) + 1e-3)}
    values = {"L": Ls, "errors": errs.tolist(), "observed_orders": q.tolist(), "reference_error": ref_err,
              "plot": {"kind": "loglog", "x": [float(L) for L in Ls],
                       "series": {f"max |alpha_1^(L) - alpha_1| ({scheme})": errs.tolist(),
                                  "C/L": (errs[0] * Ls[0] / np.array(Ls, dtype=float)).tolist()},
                       "xlabel": "layers L", "ylabel": "error at p = 1", "title": "D1 converges to the ODE at O(1/L)"}}
    if scheme == "D1" and p.Lt > 0 and p.lam > 0:
        ce = np.array(cost_errs)
        if ce[-1] > 1e3 * ref_err:
            qc = np.log2(ce[:-1] / ce[1:])
            parts["cost order"] = (abs(qc[-1] - claimed_order), 3 * abs(qc[-1] - qc[-2]) + 1e-3)
            values["cost_errors"] = ce.tolist()
            values["cost_orders"] = qc.tolist()
    return Outcome.from_parts(parts, message=f"errors {', '.join(f'{e:.3g}' for e in errs)} at L = {Ls}; "
                                             f"observed order {q[-1]:.3f} (claimed {claimed_order})", values=values)


@disc.numeric
def _(p):
    """D1 (rho = 1/L) against an RK4 reference of the ODE: observed order 1 for the path and for the cost."""
    return _disc_outcome(p)


disc.property(over=("w", "N", "Lt", "seed"), max_examples=6)


@disc.falsifier({
    "per_layer_leak_Lt": "l.43 taken literally as a discretisation: per-layer leak Lt (rho = 1), weights W_{p_l}/L: "
                         "no convergence. (The two-way encoding of E22 is jacot.erratum_leak_per_layer.)",
    "second_order": "Claim O(1/L^2) for D1 (the weights are lagged, explicit Euler): refuted, the order is 1.",
})
def _(p, variant):
    return _disc_outcome(p, **{
        "per_layer_leak_Lt": dict(scheme="printed"),
        "second_order": dict(claimed_order=2.0),
    }[variant])


def _disc_symbolic(variant="stated"):
    """Scalar ODE alpha' = f(alpha) = -Lt alpha + W s(alpha) (s a free function); one step of the recursion
    (D1 as corrected, or a perturbed form) from alpha with h = 1/L against the Taylor expansion of the exact
    solution: the consistency defect lim_{L->oo} L (step - alpha) - f and the local error L^2 (step - exact)
    as L -> oo (must be finite for a first-order scheme)."""
    a, W, Lt, L = sp.symbols("alpha W Lt L", positive=True)
    sfun = sp.Function("s")
    f = -Lt * a + W * sfun(a)
    step = {"stated": (1 - Lt / L) * a + W * sfun(a) / L,
            "per_layer_leak_Lt": (1 - Lt) * a + W * sfun(a) / L,
            "unscaled_W": (1 - Lt / L) * a + W * sfun(a)}[variant]
    h = 1 / L
    exact = a + h * f + h**2 / 2 * sp.diff(f, a) * f  # alpha(p + h) to O(h^3)
    consistency = sp.limit(sp.expand(L * (step - a) - f), L, sp.oo)
    local = sp.limit(sp.expand(L**2 * (step - exact)), L, sp.oo)
    return int(consistency != 0) + int(local.has(sp.oo, -sp.oo, sp.zoo, sp.nan))


@disc.symbolic(timeout=30)
def _(p):
    """D1 (rho = 1/L) is consistent with the leaky ODE: L (step - alpha) -> f(alpha), local error O(1/L^2)."""
    bad = _disc_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.limit against the Taylor expansion",
                   "proved": "D1 is a consistent first-order scheme (explicit Euler, step 1/L) for the ODE of l.41"},
                   message="failed: inconsistent, or local error not O(1/L^2)")


@disc.mutant({"per_layer_leak_Lt": "leak Lt per layer, (1 - Lt) alpha + W s / L (the l.43 recursion's leak)",
              "unscaled_W": "(1 - Lt/L) alpha + W s (the weights not scaled by the step)"}, timeout=30)
def _(p, variant):
    """The recursion perturbed, through the same procedure: not consistent with the ODE."""
    bad = _disc_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: the recursion is not a consistent discretisation of the ODE")


# ---------------------------------------------------------------------------
# H1: the momenta and their backward equation
mom = Claim(
    id="jacot.momentum_backward_equation",
    title="The momenta B_p = -1/lambda dC/dA_p: terminal value and backward ODE",
    label="l.148-150 (H1)",
    section="2.4",
    equation="l.150",
    lines=(148, 150),
    statement=r"B_1=\tfrac{2}{\lambda N}(f^*(X)-A_1),\qquad -\partial_pB_p=\dot\sigma(A_p)\odot[W_p^TB_p]-\tilde LB_p",
    status="holds",
    params=[
        Param.int("w", 3, 1, 8, "width", search=(1, 4)),
        Param.int("N", 4, 1, 8, "data points", search=(1, 5)),
        Param.float("Lt", 2.0, 0.0, 10.0, "effective depth L~", search=(0.0, 4.0)),
        Param.float("lam", 0.1, 0.0, 10.0, "regularisation lambda", low_open=True, search=(0.01, 1.0)),
        Param.int("n", 200, 20, 5000, "RK4 steps on [0, 1] (forward and backward)"),
        Param.seed("seed of X, f*(X) and the weights", 1),
    ],
    notes="[W_p^T B_p] keeps the first w rows (the bias row of W_p^T B_p is dropped, implicit in the paper). "
          "Check: B_0 from the backward ODE (RK4, joint with A_p integrated backwards from A_1) against "
          "-1/lambda times central differences of X -> C(alpha_1(X)) along random directions (solvers.fd). "
          "Tolerance: 10 x (the FD error estimate of solvers.fd + twice the change of <B_0, D> between n and 2n "
          "steps, which bounds the O(h) discretisation error of both sides, reduced order at ReLU kinks).",
    catalogue="jacot §2.4 H1",
    covers=("H1",),
)


def _mom_setup(p):
    rng = np.random.default_rng(p.seed)
    X, Y = rng.standard_normal((p.w, p.N)), rng.standard_normal((p.w, p.N))
    C = rng.standard_normal((3, p.w, p.w + 1)) / np.sqrt(p.w + 1)
    D = [rng.standard_normal((p.w, p.N)) for _ in range(2)]

    def Wf(t):
        return C[0] + np.sin(3 * t) * C[1] + t * t * C[2]
    return X, Y, Wf, D


def _adjoint_B0(p, X, Y, Wf, n, variant):
    w, N = X.shape
    A1 = _ode_endpoint(X, Wf, p.Lt, n)
    B1 = 2.0 / (p.lam * N) * (Y - A1)

    def joint(t, y):
        A = y[: w * N].reshape(w, N)
        B = y[w * N:].reshape(w, N)
        W = Wf(t)
        M = W[:, :w].T @ B
        if variant != 2:
            M = np.where(A > 0, M, 0.0)
        dB = -(M - p.Lt * B) if variant != 1 else -(M + p.Lt * B)
        return np.concatenate([(-p.Lt * A + W @ leaky.sigma(A)).ravel(), dB.ravel()])
    y = rk.rk_fixed_numpy(joint, 1.0, np.concatenate([A1.ravel(), B1.ravel()]), -1.0 / n, n)
    return y[w * N:].reshape(w, N), float(np.max(np.abs(y[: w * N].reshape(w, N) - X)))


def _mom_outcome(p, variant=0):
    X, Y, Wf, D = _mom_setup(p)
    B0, back_err = _adjoint_B0(p, X, Y, Wf, p.n, variant)
    B0h, _ = _adjoint_B0(p, X, Y, Wf, 2 * p.n, variant)  # finer run: |B0(n) - B0(2n)| estimates the error

    def cost(Xv):
        return float(np.sum((Y - _ode_endpoint(Xv, Wf, p.Lt, p.n)) ** 2) / p.N)
    worst, rows = 0.0, []
    for Dk in D:
        (g,), (err,) = fd.gradient_with_error(lambda e, Dk=Dk: cost(X + e[0] * Dk), [np.zeros(1)], h=1e-6)
        pred = -p.lam * float(np.sum(B0 * Dk))
        disc_err = p.lam * abs(float(np.sum((B0 - B0h) * Dk)))
        tol = 10 * (float(err[0]) + 2 * disc_err) + 1e-12
        rows.append({"fd": float(g[0]), "adjoint": pred, "tol": tol})
        worst = max(worst, abs(float(g[0]) - pred) / tol)
    return Outcome(residual=worst, tolerance=1.0, values={"directions": rows, "backward_A_error": back_err},
                   message="max over directions of |FD derivative - (-lambda <B_0, D>)| / tolerance")


@mom.numeric
def _(p):
    """B_0 from the backward ODE vs -1/lambda grad_X C(alpha_1(X)) by central differences (two directions)."""
    return _mom_outcome(p)


mom.property(over=("w", "N", "Lt", "lam", "seed"), max_examples=5)


@mom.falsifier({
    "no_relu_mask": "Drop sigma-dot (use [W_p^T B_p] unmasked): the transported momentum is wrong.",
    "leak_sign": "Flip the sign of the leak term: -dB = sigma-dot * [W^T B] + Lt B.",
}, search=("seed",))
def _(p, variant):
    return _mom_outcome(p, variant={"no_relu_mask": 2, "leak_sign": 1}[variant])


def _mom_symbolic(variant="stated"):
    """B_1 from -1/lambda dC/dA_1 (sympy.diff of C = 1/N |f* - A|^2, w = N = 2) against the printed terminal value,
    and the adjoint pairing d/dp <B, dA> along dA' = -Lt dA + V (m * dA) (linearised forward ODE) and the printed
    backward equation -B' = m * (V^T B) - Lt B (fixed mask m), or perturbed copies: failed identities."""
    lam, Nn = sp.Symbol("lambda", positive=True), 2
    A = sp.Matrix(2, 2, sp.symbols("a0:4"))
    F = sp.Matrix(2, 2, sp.symbols("f0:4"))
    C = sum((F - A).applyfunc(lambda x: x**2)) / Nn
    grad = A.applyfunc(lambda x: sp.diff(C, x))
    c1 = 1 if variant == "terminal_factor_one" else 2
    bad = sum(1 for e in (-grad / lam - c1 / (lam * Nn) * (F - A)) if sp.expand(e) != 0)
    Lt = sp.Symbol("Lt")
    V = sp.Matrix(2, 2, sp.symbols("v0:4"))
    m = sp.Matrix(2, 2, sp.symbols("m0:4"))
    dA = sp.Matrix(2, 2, sp.symbols("d0:4"))
    B = sp.Matrix(2, 2, sp.symbols("b0:4"))
    dAdot = -Lt * dA + V * m.multiply_elementwise(dA)
    leak = -1 if variant == "leak_sign" else 1
    Bdot = -(m.multiply_elementwise(V.T * B) - leak * Lt * B)
    pairing = sum(Bdot.multiply_elementwise(dA)) + sum(B.multiply_elementwise(dAdot))
    return bad + int(sp.expand(pairing) != 0)


@mom.symbolic(timeout=30)
def _(p):
    """B_1 = -1/lambda dC/dA_1 = 2/(lambda N)(f* - A_1) for C = 1/N |f* - A|^2 (w = 2, N = 2 symbols); and the adjoint
    pairing d/dp <B, dA> = 0 for dA' = -Lt dA + V (m * dA), -B' = m * (V^T B) - Lt B (fixed mask m)."""
    bad = _mom_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff/expand",
                   "proved": "terminal value; the backward equation is the adjoint of the linearised forward ODE"},
                   message="identities that failed")


@mom.mutant({"leak_sign": "-B' = m * (V^T B) + Lt B (the leak term's sign flipped)",
             "terminal_factor_one": "B_1 = 1/(lambda N) (f* - A_1) (the factor 2 dropped)"}, timeout=30)
def _(p, variant):
    """The printed equations perturbed, through the same procedure: an identity must fail."""
    bad = _mom_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} identities failed")


# ---------------------------------------------------------------------------
# Remarks, citations and experiments: registered with notes (no verdict computed here).
def _remark(id, title, label, lines, statement, status, notes, catalogue, covers, section):
    return Claim(id=id, title=title, label=label, section=section, equation=label,
                 lines=lines, statement=statement, status=status, params=[], notes=notes,
                 catalogue=catalogue, covers=covers)


noisy_gd = _remark(
    "jacot.noisy_gd_escapes_negative_minima", "Noisy GD escapes negative (non-stable) minima along constant-COI paths",
    "l.142 (P3b)", (142, 142),
    r"\text{noisy GD avoids negative/non-stable minima (Prop 3 path to a saddle); full-batch GD only found "
    r"stable/non-negative minima}",
    "empirical",
    "Empirical observation about trained networks plus a heuristic mechanism (diffusion along the Prop 3 path). "
    "The mechanism's two ingredients are checked elsewhere: the constant-COI path (jacot.constant_coi_path) and "
    "the escape from its endpoint vs the absence of escape at non-negative minima (jacot.erratum_nonneg_wording, "
    "E12). Gradient descent on the gamma-stable COI drifts to A = 0 (scaling down lowers COI_gamma), so a cheap "
    "'fraction of non-negative limits' experiment is not meaningful; not reproduced.",
    "jacot §2.3 P3b; §4 E12", ("P3b",), "2.3")

cited = _remark(
    "jacot.prior_hamiltonian_formulations", "The Lagrangian/Hamiltonian view of non-leaky ResNets appeared in [26]",
    "l.162-164 (H6)", (162, 164),
    r"\text{The Lagrangian and Hamiltonian reformulations appeared in [26] (non-leaky ResNets), similar to [31, 32]}",
    "heuristic",
    "A citation remark; nothing to check. The paper's stated difference (|.|_{K_p} depends on A_p and can be "
    "degenerate) is the +inf convention implemented in solvers.leaky.g_norm2.",
    "jacot §2.4 H6", ("H6",), "2.4")

kinetic = _remark(
    "jacot.kinetic_mass_heuristic", "K_p^+ acts as a mass matrix; larger Lt shifts the balance towards the COI",
    "l.103-105 (L7)", (103, 105),
    r"\tfrac1{2\tilde L}\|\partial_pA_p\|^2_{K_p}\text{ favours slow paths, }K_p^+\text{ the mass; as }\tilde L\uparrow"
    r"\text{ the COI term dominates}",
    "heuristic",
    "Qualitative; the quantitative content is eq. (2) and Theorem 4 (jacot.hamiltonian_energies, "
    "jacot.theorem4_*), and the trained-network trends BN1-BN3 (theorems.jacot.bottleneck).",
    "jacot §2.2 L7", ("L7",), "2.2")

cancel = _remark(
    "jacot.infinite_terms_remark", "Near low-dimensional representations the three terms are infinite and cancel",
    "l.109-111 (L9)", (109, 111),
    r"\sigma(A_p)^+\text{ unbounded near low-dimensional }A_p\text{: the three terms of the split are infinite and cancel}",
    "heuristic",
    "Motivates K + gamma I; the finite-vs-infinite example is the falsifier of jacot.three_term_split (L4) and the "
    "gamma-stable identities are jacot.theorem4_identity / jacot.theorem4_hamiltonian_gap.",
    "jacot §2.2 L9", ("L9",), "2.2")

fig2 = _remark(
    "jacot.step_rules_test_error", "Adaptive / irregular layer steps: small but consistent test-error advantage (Fig. 2)",
    "Fig. 2 (F2)", (209, 522),
    r"\text{(a) adaptive and irregular }\rho_\ell\text{ give lower test error, larger }L\text{ helps; (b) a dimension-3 "
    r"bottleneck near }p=0.7;\ \text{(c) adaptive steps concentrate in the first and last layers}",
    "empirical",
    "Paper setup: Lt = 3, teacher 30 -> 6 -> 3 -> 30 (random ResNets), L in [4, 22]. The CPU-size reproduction is "
    "the catalogue's R5, encoded by theorems.jacot.bottleneck (another module); (c)'s mechanism (equidistributed "
    "relative increments put small steps in fast layers) is certified by jacot.adaptive_steps.",
    "jacot §2.6 F2; §3 R5", ("F2",), "4, B")

setup = _remark(
    "jacot.experimental_setup", "Experimental setup of App. B (teachers, width 200, Adam + SGD, lambda = 0.002, L = 50)",
    "App. B (X1)", (509, 524),
    r"\text{teacher nets with inner dimension }k^*;\ 1000+1000\text{ points; width 200; Adam 20k + SGD 10k; }"
    r"\lambda=0.002;\ L=50\text{ and }L\in[4,22];\ \text{COI, kinetic energy and }\mathcal H\text{ via solve on }K_p+\gamma I",
    "empirical",
    "A description of experiments, not a claim. Fig. 3's observation (path length, |B_p|, |B_p sigma(A_p)^T| stay "
    "bounded as Lt grows, the hypotheses of T4d) needs trained networks: the scaled-down experiments are R3-R5 in "
    "theorems.jacot.bottleneck. 'solve on K + gamma I' is how solvers.leaky.coi_gamma evaluates the stable COI.",
    "jacot §2.8 X1", ("X1",), "B")
