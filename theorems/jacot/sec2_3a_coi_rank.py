"""§2.3 Cost of Identity as a Measure of Dimensionality, first part (seed l.117-123): COI = rank for
non-negative representations (l.117-119, E4/E20), Prop 1's lower bound (l.121-123), its implicit image
hypothesis (l.121, E21) and the erratum in Prop 1's proof (l.123, E3).  Claims: ``jacot.coi_equals_rank``,
``jacot.coi_lower_bound``, ``jacot.erratum_prop1_image_hypothesis``, ``jacot.erratum_prop1_proof``.

The COI is computed once, in ``solvers.leaky.coi`` (``+inf`` when the image condition
``Im A^T ⊆ Im sigma(A)^T`` fails, decided with the threshold stated there).  Errata are encoded twice:
the printed form is the falsifier ``stated`` (refuted), the corrected form the numeric check.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import asnumpy, on, xp_of
from theorems import matrices as M
from theorems.claim import Claim, inconclusive, Outcome, Param, ParamError

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


def _shape_params(w=6, N=5, k=3):
    return [
        Param.int("w", w, 1, 64, "number of neurons (rows of A)", search=(1, 8)),
        Param.int("N", N, 1, 64, "number of data points (columns of A)", search=(1, 8)),
        Param.int("k", k, 1, 64, "inner dimension (rank) of the non-negative factorisation", search=(1, 5)),
        Param.seed("seed of the random factors"),
        Param.matrix("A", None, "your own representation A (w x N); overrides w, N, k and seed"),
    ]


def _nonneg(p):
    """A = |G_1| |G_2| (non-negative, rank min(k, w, N) generically), or the user's A."""
    if p.A is not None:
        return np.array(p.A, dtype=float)
    rng = np.random.default_rng(p.seed)
    return np.abs(rng.standard_normal((p.w, p.k))) @ np.abs(rng.standard_normal((p.k, p.N)))


# ---------------------------------------------------------------------------
rank = Claim(
    id="jacot.coi_equals_rank",
    title="For a non-negative representation without bias, the cost of identity is its rank",
    label="l.119 (C1), l.99 (L5)",
    section="2.3",
    equation="l.119",
    lines=(117, 119),
    statement=r"A\ge0:\quad\|A\|^2_{\tilde K}=\|\bar\sigma(A)^+\|_F^2=\|AA^+\|_F^2=\mathrm{Rank}\,A",
    status="erratum",
    corrected=r"A\ge0:\quad\|A\|^2_{\tilde K}=\|A\bar\sigma(A)^+\|_F^2=\|AA^+\|_F^2=\mathrm{Rank}\,A",
    params=_shape_params(),
    validate=lambda p: _check_nonneg(p),
    notes="E4: the middle expression misses A (|sigmabar(A)^+|_F^2 = sum s_i^-2). E20: the COI is the "
          "SQUARED Frobenius norm of the smallest W with W sigma(A) = A. With the bias (K instead of Kbar) "
          "the equality fails when 1 is in Im A^T (A = c 1^T gives c^2/(1+c^2)). "
          "Tolerance 10 r max(w, N) eps cond_r^2 is the normwise worst case of a Gram-matrix pseudo-inverse; at the "
          "defaults (cond_r 21) it is 1.3e4 x the residual (1.3e-15): typical rounding does not reach the cond_r^2 "
          "worst case, and the printed form E4 is off by O(1), so the width costs no power.",
    catalogue="jacot §2.3 C1, §2.2 L5; §4 E4, E20",
    covers=("C1", "L5", "E4", "E20"),
)


def _check_nonneg(p):
    if p.A is not None and np.min(p.A) < 0:
        raise ParamError("parameter A must be entrywise non-negative for this claim (A >= 0)")


def _rank_outcome(p, printed=False):
    """One array-API path (p.backend: numpy, array_api_strict or cupy); A drawn on the host."""
    xp = xp_of(p)
    A0 = _nonneg(p)
    A = on(xp, A0)
    r = int(X.matrix_rank(xp, A))
    if printed:
        val = float(X.fro2(xp, X.pinv(xp, X.sigma(xp, A, bias=False))))
    else:
        # the COI without bias is scale-free (sigmabar positively homogeneous): evaluated on A / max A_ij, so that the
        # Gram matrix of a user's A ~ 1e-300 does not underflow to 0 (it returned COI 0 against rank 1: refuted)
        val = _coi_nobias(A0, xp)
    s = asnumpy(X.svdvals(xp, A))
    cond_r = float(s[0] / s[r - 1]) if r > 0 else 1.0
    # Error model: a pseudo-inverse on the rank-r part loses cond_r digits; |A A^+|^2 = r up to
    # ~ r * max(w, N) * eps * cond_r^2 (projector built from r singular vectors).
    tol = 10 * r * max(A.shape) * EPS * cond_r**2
    return Outcome(residual=abs(val - r), tolerance=tol, values={
        "value": val, "rank": r, "cond_r": cond_r, "form": "|sigmabar(A)^+|^2" if printed else "|A sigmabar(A)^+|^2"},
        message=f"{'printed' if printed else 'corrected'} middle expression = {val:.6g} vs rank {r}")


@rank.numeric(backends=("numpy", "cupy"))
def _(p):
    """|A sigmabar(A)^+|_F^2 (via solvers.leaky.coi) against the numerical rank."""
    return _rank_outcome(p)


rank.property(over=("w", "N", "k", "seed"), max_examples=25)


@rank.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed middle expression |sigmabar(A)^+|_F^2 = sum s_i^{-2} (E4)."""
    return _rank_outcome(p, printed=True)


@rank.falsifier("with_bias", search=("seed",), fixed={"w": 1, "N": 3, "k": 1})
def _(p):
    """With the bias row (K instead of Kbar) and A = c 1^T: COI = c^2/(1 + c^2) < 1 = rank."""
    c = 1.0 + (p.seed % 7)
    A = c * np.ones((1, p.N))
    val = leaky.coi(A, bias=True)
    return Outcome(residual=abs(val - 1.0), tolerance=100 * EPS, values={"c": c, "coi_with_bias": val},
                   message=f"A = {c} 1^T: COI with bias {val:.6g} vs rank 1")


def _pinv_checked(A, Ap):
    """Number of Moore-Penrose conditions (A X A = A, X A X = X, (AX)^T = AX, (XA)^T = XA) that fail for X = Ap."""
    conds = [A * Ap * A - A, Ap * A * Ap - Ap, (A * Ap).T - A * Ap, (Ap * A).T - Ap * A]
    return sum(1 for M in conds for e in M if sp.cancel(e) != 0)


def _rank_instances():
    """Non-negative A of known rank (by construction): 3x2 and 2x3 of full rank 2, and a 3x2 rank-1 u v^T;
    each with its pseudo-inverse by formula (verified by the four Penrose conditions)."""
    out = []
    tall = sp.Matrix(3, 2, sp.symbols("t0:6", positive=True))
    out.append((tall, (tall.T * tall).inv() * tall.T, 2))
    wide = sp.Matrix(2, 3, sp.symbols("q0:6", positive=True))
    out.append((wide, wide.T * (wide * wide.T).inv(), 2))
    u = sp.Matrix(sp.symbols("u0:3", positive=True))
    v = sp.Matrix(sp.symbols("v0:2", positive=True))
    out.append((u * v.T, v * u.T / ((u.T * u)[0, 0] * (v.T * v)[0, 0]), 1))
    return out


def _rank_symbolic(variant):
    """sigmabar(A) = relu(A) entrywise (= A for A >= 0); the corrected middle expression |A sigmabar(A)^+|_F^2 (or a
    perturbed one) minus the rank, plus failed Penrose conditions: entries that do not cancel."""
    bad = 0
    for A, Ap, r in _rank_instances():
        S = A.applyfunc(lambda e: sp.Max(e, 0))  # sigmabar, no bias row
        bad += _pinv_checked(S, Ap)
        M = {"stated": A * Ap, "missing_A_E4": Ap, "not_squared": A * Ap}[variant]
        val = sum(e**2 for e in M)
        if variant == "not_squared":
            val = sp.sqrt(val)
        bad += int(sp.cancel(sp.together(val - r)) != 0)
    return bad


@rank.symbolic(timeout=60)
def _(p):
    """A >= 0 of rank 2 (3x2, 2x3) and rank 1 (u v^T): |A sigmabar(A)^+|_F^2 = rank, pseudo-inverses verified."""
    bad = _rank_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel; pseudo-inverse by formula, Penrose "
                   "conditions checked", "proved": "|A sigmabar(A)^+|_F^2 = Rank A for non-negative 3x2 and 2x3 A "
                   "of rank 2 and a rank-1 u v^T"}, message="identities or Penrose conditions that failed")


@rank.mutant({"missing_A_E4": "the printed middle expression |sigmabar(A)^+|_F^2 (A missing, erratum E4)",
              "not_squared": "|A sigmabar(A)^+|_F (the square dropped, E20)"}, timeout=60)
def _(p, variant):
    """The middle expression perturbed, through the same procedure: must not equal the rank."""
    bad = _rank_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: {bad} instances where the perturbed expression is not the rank")


# ---------------------------------------------------------------------------
prop1 = Claim(
    id="jacot.coi_lower_bound",
    title="The cost of identity (no bias) is at least the stable rank |A|_*^2/|A|_F^2",
    label="Prop 1",
    section="2.3",
    equation="Prop 1",
    lines=(121, 123),
    statement=r"\|A\|_{\tilde K}^2\ \ge\ \frac{\|A\|_*^2}{\|A\|_F^2}",
    status="holds",
    bound=True,
    params=[
        Param.int("w", 6, 1, 64, "rows of A", search=(1, 8)),
        Param.int("N", 4, 1, 64, "columns of A", search=(1, 6)),
        Param.seed("seed"),
        Param.float("shift", 0.5, -10.0, 10.0, "A = G + shift (more positive entries, more often a finite COI)",
                    search=(-0.5, 2.0)),
        # drawn (property, sweep) with max(w, N) rows: for w < N nearly every matrix family fails the image condition
        # (COI = +inf, nothing compared: sweep 4100401 drew 7 such of 20).  Families: the default ones less "diagonal"
        # (a negative diagonal entry leaves a zero column of sigmabar(A) against a non-zero one of A: +inf by
        # construction) and "ill_conditioned" (cond up to 1e10: the image condition of sigmabar(A) is not decidable
        # through its Gram matrix in float64; 3 of the first 6 draws of sweep 4100417 were these two families)
        Param.matrix("A", None, "your own A (any shape); overrides w, N, seed, shift",
                     shape=lambda q: (max(q.w, q.N), q.N),
                     families=tuple(f for f in M.DEFAULT_FAMILIES if f not in ("diagonal", "ill_conditioned"))
                     + ("seed",)),
    ],
    notes="E21: true only under the infinity convention (Im A^T ⊆ Im sigmabar(A)^T, else COI = +inf, and the "
          "inequality holds trivially); with a plain pseudo-inverse A = (-0.329, -0.792)^T has 'COI' 0 < 1. "
          "E3 (the proof's middle expression) is recorded in the catalogue; the statement is unaffected. "
          "Defaults w = 6, N = 4 (read-through 8; formerly w = 3 < N = 4, where 99% of Gaussian + 0.5 draws fail the "
          "image condition and certify trivially with COI = +inf: the default run never compared a finite COI); "
          "property search w up to 8 so that w >= N, where the COI is finite, is drawn more often. Session 9: a draw "
          "whose COI is +inf certified without comparing anything (sweep 27182818: the w < N draws); now the numeric "
          "check draws A = [P; C P] (P >= 0, rows of A in the row space of sigmabar(A), _A_finite) where the Gaussian + "
          "shift draw fails the image condition, and a +inf COI (a user's A) is inconclusive: every certified draw "
          "compares two finite numbers.",
    catalogue="jacot §2.3 P1; §4 E3, E21",
    covers=("P1", "E21"),
)


def _A(p):
    if p.A is not None:
        return np.array(p.A, dtype=float)
    rng = np.random.default_rng(p.seed)
    return rng.standard_normal((p.w, p.N)) + p.shift


def _A_finite(p):
    """Prop 1's A, drawn where the comparison is between two finite numbers: the Gaussian + shift draw of ``_A`` when
    its COI is finite; otherwise (image condition fails: w < N nearly always, or a very negative shift) A = [P; C P]
    from the same seed (rows permuted), P = |G_1 + shift| >= 0 of ceil(w/2) rows, C Gaussian: the rows of P are rows
    of sigmabar(A) and every row of A lies in their span, so Im A^T c Im sigmabar(A)^T and the COI is finite.  A
    matrix passed by the user is taken as it is.  Returns (A, constructed)."""
    A = _A(p)
    if p.A is not None or not math.isinf(_coi_nobias(A)):
        return A, False
    rng = np.random.default_rng([p.seed, 1])
    w1 = (p.w + 1) // 2
    P = np.abs(rng.standard_normal((w1, p.N)) + p.shift)
    C = rng.standard_normal((p.w - w1, w1))
    return np.vstack([P, C @ P])[rng.permutation(p.w)], True


def _prop1_outcome(A, coi_value, xp=None, **extra):
    """A on the host; its singular values and those of sigmabar(A) on ``xp`` (NumPy when None)."""
    xp = xp if xp is not None else xp_of("numpy")
    Ax = on(xp, A)
    s = asnumpy(X.svdvals(xp, Ax))
    if s[0] == 0:
        return inconclusive("A = 0: the stable rank is undefined (0/0)")
    r = s / s[0]  # scale-free: (sum s)^2 / sum s^2 underflows to 0/0 = NaN for s ~ 1e-200 (NaN - COI then certified)
    srank = float(r.sum() ** 2 / (r * r).sum())
    # Error model: the COI is a pseudo-inverse quadratic form (relative error ~ max(w,N) eps cond^2 on the
    # kept spectrum); the stable rank is a ratio of sums of singular values (~ rank eps).
    if np.isinf(coi_value):
        # the bound holds by the convention alone, nothing is compared: no evidence (read-through 9: such draws certified)
        return inconclusive("image condition fails: COI = +inf >= stable rank by the infinity convention alone; "
                            "no finite COI to compare (need Im A^T in Im sigmabar(A)^T, e.g. w >= N)",
                            coi="inf", srank=srank, **extra)
    sv = asnumpy(X.svdvals(xp, X.sigma(xp, Ax, bias=False)))
    kept = sv[sv > max(A.shape) * EPS * sv[0]] if sv[0] > 0 else sv[:1]
    cond = float(kept[0] / kept[-1]) if kept.size and kept[-1] > 0 else 1.0
    tol = 10 * max(A.shape) * EPS * (cond**2) * max(coi_value, srank)
    return Outcome(residual=max(0.0, srank - coi_value), tolerance=tol, values={
        "coi": coi_value, "srank": srank, "gap": coi_value - srank, **extra,
        "tightness": srank / coi_value if coi_value > 0 else (1.0 if srank == 0 else float("inf"))},
        message=f"COI {coi_value:.6g} vs stable rank {srank:.6g}")


def _coi_nobias(A, xp=None):
    """The COI without bias (solvers.xp_jacot.coi on ``xp``, NumPy when None) of A / max|A_ij|: sigmabar is positively
    homogeneous without bias, so the COI is scale-free, and the Gram matrix sigmabar(A)^T sigmabar(A) of an A ~ 1e-200
    underflows to 0 (COI 0 was returned)."""
    xp = xp if xp is not None else xp_of("numpy")
    m = float(np.max(np.abs(A))) if A.size else 0.0
    return float(X.coi(xp, on(xp, leaky._as_matrix(A / m if m > 0 else A)), bias=False))


def _pinv_coi(A, xp):
    """|A pinv(sigmabar(A))|_F^2: the plain pseudo-inverse, no image condition (the printed reading, E21)."""
    Ax = on(xp, A)
    return float(X.fro2(xp, Ax @ X.pinv(xp, X.sigma(xp, Ax, bias=False))))


@prop1.numeric(backends=("numpy", "cupy"))
def _(p):
    """COI (infinity convention, solvers.xp_jacot.coi as solvers.leaky.coi) minus the stable rank of A, never negative,
    on an A with finite COI (_A_finite)."""
    A, constructed = _A_finite(p)
    xp = xp_of(p)
    out = _prop1_outcome(A, _coi_nobias(A, xp), xp)
    if constructed:
        out.values["A_drawn"] = "[P; C P] (the Gaussian + shift draw has COI = +inf)"
        out.message += " (A = [P; C P]: the Gaussian + shift draw fails the image condition)"
    return out


prop1.property(over=("w", "N", "seed", "shift", "A"), max_examples=40)


@prop1.falsifier("plain_pinv", search=("seed", "shift"), fixed={"w": 1, "N": 2, "shift": -3.0}, backends=("numpy", "cupy"))
def _(p):
    """E21: drop the infinity convention (plain pseudo-inverse): an all-negative A gives 0 < stable rank."""
    A, xp = _A(p), xp_of(p)
    out = _prop1_outcome(A, _pinv_coi(A, xp), xp)
    out.values["form"] = "|A pinv(sigmabar(A))|^2 without the image condition"
    return out


@prop1.falsifier("with_bias", search=("seed",), fixed={"w": 1, "N": 3, "shift": 1.0}, backends=("numpy", "cupy"))
def _(p):
    """The bound with the bias (K instead of Kbar): A = c 1^T has COI c^2/(1+c^2) < 1."""
    xp = xp_of(p)
    c = 1.0 + (p.seed % 5)
    A = c * np.ones((p.w, p.N))
    return _prop1_outcome(A, float(X.coi(xp, on(xp, A), bias=True)), xp, c=c)


def _prop1_symbolic(variant):
    """The proof's minimiser for A = diag(s) (s > 0, three values): B = |A|_F / sqrt(|A|_*) sqrt(A) meets the
    constraint |B|_F = |A|_F, is stationary for min sum s_i^2/t_i^2 s.t. sum t_i^2 = |A|_F^2, and attains
    |A B^+|_F^2; that value minus the printed bound (or a perturbed one): failed identities."""
    s = sp.symbols("s0:3", positive=True)
    fro2, nuc = sum(x**2 for x in s), sum(s)
    t = [sp.sqrt(fro2) / sp.sqrt(nuc) * sp.sqrt(x) for x in s]  # diagonal of B
    bad = int(sp.cancel(sum(x**2 for x in t) - fro2) != 0)
    value = sum(si**2 / ti**2 for si, ti in zip(s, t))  # |A B^+|_F^2, B^+ = diag(1/t)
    # stationarity in u_i = t_i^2 of sum s_i^2/u_i + mu (sum u_i - |A|_F^2): s_i^2/u_i^2 equal for all i
    mus = [sp.cancel(si**2 / ti**4) for si, ti in zip(s, t)]
    bad += sum(int(sp.cancel(m - mus[0]) != 0) for m in mus)
    bound = {"stated": nuc**2 / fro2, "not_squared": nuc / sp.sqrt(fro2), "fro_not_squared": nuc**2 / sp.sqrt(fro2)}
    bad += int(sp.cancel(sp.together(value - bound[variant])) != 0)
    return bad


@prop1.symbolic(timeout=30)
def _(p):
    """The proof's minimiser B = |A|_F/sqrt(|A|_*) sqrt(A) (A diagonal) attains |A|_*^2/|A|_F^2 under |B|_F = |A|_F."""
    bad = _prop1_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "min over |B|_F <= |A|_F of |A B^+|_F^2 is attained at the printed B and equals |A|_*^2/|A|_F^2 "
                   "(A = diag of three positive values; the proof reduces to this case by the SVD)"},
                   message="failed identities")


@prop1.mutant({"not_squared": "the bound |A|_*/|A|_F (squares dropped)",
               "fro_not_squared": "the bound |A|_*^2/|A|_F (the Frobenius square dropped)"}, timeout=30)
def _(p, variant):
    """Prop 1's right side perturbed, through the same procedure: the attained value must differ from it."""
    bad = _prop1_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: the proof's minimum value differs from the perturbed bound")


prop1.tightness(over=("w", "N", "seed", "shift"), max_examples=30)


# ---------------------------------------------------------------------------
# E3: Prop 1's proof
e3 = Claim(
    id="jacot.erratum_prop1_proof",
    title="Prop 1's proof: the optimiser's value is |A|_*/|A|_F^2 |sqrt A|_F^2, over B with Im A^T in Im B^T",
    label="Prop 1 proof (E3)",
    section="2.3",
    equation="l.123",
    lines=(123, 123),
    statement=r"\min_{\|B\|_F\le\|A\|_F}\|AB^+\|_F^2=\|AB^+\|_F^2\big|_{B=\frac{\|A\|_F}{\sqrt{\|A\|_*}}\sqrt A}"
              r"=\frac{\|A\|_*^2}{\|A\|_F^2}\|\sqrt A\|_F^2=\frac{\|A\|_*^2}{\|A\|_F^2}",
    status="erratum",
    corrected=r"\min_{\|B\|_F\le\|A\|_F,\ \mathrm{Im}A^T\subseteq\mathrm{Im}B^T}\|AB^+\|_F^2=\frac{\|A\|_*}{\|A\|_F^2}"
              r"\|\sqrt A\|_F^2=\frac{\|A\|_*^2}{\|A\|_F^2},\ \text{at }B=\frac{\|A\|_F}{\sqrt{\|A\|_*}}U\Sigma^{1/2}V^T",
    params=[
        Param.int("w", 3, 1, 32, "rows of A", search=(1, 5)),
        Param.int("N", 4, 1, 32, "columns of A", search=(1, 6)),
        Param.seed("seed of A and of the random competitors B"),
        Param.int("n_B", 200, 1, 10_000, "random competitors B with Im A^T in Im B^T and |B|_F = |A|_F"),
    ],
    notes="E3: the middle expression has |A|_*^2 for |A|_* (|sqrt A|_F^2 = |A|_*); the minimum must be restricted "
          "to Im A^T ⊆ Im B^T (otherwise a B with orthogonal row space gives 0); sqrt A = U Sigma^{1/2} V^T. "
          "Prop 1's statement itself is jacot.coi_lower_bound.",
    catalogue="jacot §2.3 P1; §4 E3",
    covers=("E3",),
)


def _e3_data(p):
    """A drawn on the host, its SVD (kept spectrum: a prefix, s > max(w, N) eps s_max) and B* on p.backend's namespace."""
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    A = on(xp, rng.standard_normal((p.w, p.N)))
    U, s, Vt = xp.linalg.svd(A, full_matrices=False)
    r = int(xp.sum(xp.astype(s > max(A.shape) * EPS * s[0], xp.int64)))
    U, s, Vt = U[:, :r], s[:r], Vt[:r, :]
    nuc, fro2 = float(xp.sum(s)), float(xp.sum(s * s))
    sqrtA = (U * xp.sqrt(s)) @ Vt
    Bstar = math.sqrt(fro2) / math.sqrt(nuc) * sqrtA  # Python floats: array-api-strict refuses NumPy scalars
    val = float(X.fro2(xp, A @ X.pinv(xp, Bstar)))
    # Error model: pinv of B* loses cond(B*) = sqrt(cond A) digits; |.|^2 relative ~ 10 r max(w,N) eps cond(A)
    tol = 10 * r * max(A.shape) * EPS * float(s[0] / s[-1]) * max(val, 1.0)
    return xp, A, U, s, Vt, nuc, fro2, sqrtA, Bstar, val, tol, rng


@e3.numeric(backends=("numpy", "cupy"))
def _(p):
    """|AB*^+|^2 = |A|_*/|A|_F^2 |sqrt A|^2 = srank; B* feasible; no random B with the same row space does better
    (the n_B competitors drawn on the host in one stacked draw, evaluated as one batch: SVDs, ranks, pseudo-inverses)."""
    xp, A, U, s, Vt, nuc, fro2, sqrtA, Bstar, val, tol, rng = _e3_data(p)
    r = s.shape[0]
    srank = nuc**2 / fro2
    middle = nuc / fro2 * float(X.fro2(xp, sqrtA))
    # competitors: B = G V^T, the row space of A (Im A^T ⊆ Im B^T), |B|_F = |A|_F; rank-deficient ones left out
    B = on(xp, rng.standard_normal((p.n_B, p.w, r))) @ Vt
    B = B * (math.sqrt(fro2) / X.fro(xp, B))[:, None, None]
    full = X.matrix_rank(xp, B) >= r
    vals = X.fro2(xp, A @ X.pinv(xp, B))
    best = float(xp.min(xp.where(full, vals, xp.full_like(vals, xp.inf))))
    return Outcome.from_parts({
        "|AB*^+|^2 = srank": (abs(val - srank), tol),
        "corrected middle = srank": (abs(middle - srank), tol),
        "|B*|_F <= |A|_F": (max(0.0, float(X.fro(xp, Bstar)) - np.sqrt(fro2)), 10 * EPS * np.sqrt(fro2)),
        "random B not below": (max(0.0, srank - best), tol)},
        message=f"srank {srank:.12g}, |AB*^+|^2 {val:.12g}, best random competitor {best:.6g}",
        values={"srank": srank, "value_at_Bstar": val, "corrected_middle": middle, "best_random_B": best})


e3.property(over=("w", "N", "seed"), max_examples=15, fixed={"n_B": 30})


@e3.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed middle expression |A|_*^2/|A|_F^2 |sqrt A|_F^2 against |AB*^+|^2."""
    xp, A, U, s, Vt, nuc, fro2, sqrtA, Bstar, val, tol, rng = _e3_data(p)
    printed = nuc**2 / fro2 * float(X.fro2(xp, sqrtA))
    return Outcome(residual=abs(printed - val), tolerance=tol, values={"printed_middle": printed, "value_at_Bstar": val},
                   message=f"printed middle {printed:.10g} vs |AB*^+|^2 = {val:.10g}")


@e3.falsifier("unconstrained_min", fixed={"w": 3, "N": 4})
def _(p):
    """Drop Im A^T ⊆ Im B^T: B with row space orthogonal to A's (|B|_F = |A|_F) gives |AB^+|^2 = 0 < srank."""
    xp, A, U, s, Vt, nuc, fro2, sqrtA, Bstar, val, tol, rng = _e3_data(p)
    A, s, Vt = asnumpy(A), asnumpy(s), asnumpy(Vt)
    if len(s) >= p.N:
        return inconclusive("A has full column rank: no row space orthogonal to A's (take w < N)")
    Q, _ = np.linalg.qr(np.hstack([Vt.T, rng.standard_normal((p.N, p.N - len(s)))]))
    perp = Q[:, len(s):].T
    B = rng.standard_normal((p.w, perp.shape[0])) @ perp
    B *= np.sqrt(fro2) / np.linalg.norm(B)
    v = float(np.linalg.norm(A @ np.linalg.pinv(B)) ** 2)
    srank = nuc**2 / fro2
    return Outcome(residual=max(0.0, srank - v), tolerance=tol, values={"|AB^+|^2": v, "srank": srank},
                   message=f"unconstrained minimum candidate {v:.2e} < stable rank {srank:.6g}")


def _e3_symbolic(variant="stated"):
    """A = diag(s) (three positive values), the printed optimiser B = |A|_F/sqrt(|A|_*) sqrt(A) (or B with A for sqrt A):
    |B|_F = |A|_F, |A B^+|_F^2 (B^+ = B^-1) against the middle expression (corrected or printed) and the right side
    |A|_*^2/|A|_F^2: identities that fail."""
    s = sp.symbols("s0:3", positive=True)
    A = sp.diag(*s)
    nuc, fro2 = sum(s), sum(x**2 for x in s)
    root = A if variant == "B_without_sqrt" else A.applyfunc(sp.sqrt)
    B = sp.sqrt(fro2) / sp.sqrt(nuc) * root
    val = sum(e**2 for e in A * B.inv())
    sq = sum(e**2 for e in A.applyfunc(sp.sqrt))  # |sqrt A|_F^2
    middle = (nuc**2 if variant == "printed_middle_E3" else nuc) / fro2 * sq
    bad = int(sp.cancel(sum(e**2 for e in B) - fro2) != 0)
    bad += int(sp.cancel(val - middle) != 0) + int(sp.cancel(middle - nuc**2 / fro2) != 0)
    return bad


@e3.symbolic(timeout=30)
def _(p):
    """Diagonal A = diag(s): B = c diag(sqrt s) with c^2 = |A|_F^2/|A|_*: |AB^+|^2 = |A|_*^2/|A|_F^2 = corrected middle;
    the printed middle is |A|_* times larger."""
    bad = _e3_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel",
                   "proved": "value at the optimiser = corrected middle = |A|_*^2/|A|_F^2, |B|_F = |A|_F; printed = |A|_* x true"},
                   message="identities that failed")


@e3.mutant({"printed_middle_E3": "the printed middle |A|_*^2/|A|_F^2 |sqrt A|_F^2 (E3)",
            "B_without_sqrt": "the optimiser with A for sqrt A"}, timeout=30)
def _(p, variant):
    """The proof's line perturbed, through the same procedure: an identity must fail."""
    bad = _e3_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} identities failed")


# ---------------------------------------------------------------------------
# E21: Prop 1 needs the infinity convention
p1hyp = Claim(
    id="jacot.erratum_prop1_image_hypothesis",
    title="Prop 1 holds only with the +inf convention (Im A^T in Im sigmabar(A)^T); with a plain pinv it fails",
    label="Prop 1 (E21)",
    section="2.3",
    equation="Prop 1",
    lines=(121, 121),
    statement=r"\|A\bar\sigma(A)^+\|_F^2\ \ge\ \frac{\|A\|_*^2}{\|A\|_F^2}\quad\text{for all }A\ne0",
    status="erratum",
    corrected=r"\|A\|_{\tilde K}^2\ \ge\ \frac{\|A\|_*^2}{\|A\|_F^2},\quad\|A\|_{\tilde K}^2=+\infty\text{ unless }"
              r"\mathrm{Im}A^T\subseteq\mathrm{Im}\bar\sigma(A)^T",
    params=[
        Param.int("w", 1, 1, 64, "rows of A", search=(1, 5)),
        Param.int("N", 2, 1, 64, "columns of A", search=(1, 6)),
        Param.seed("seed"),
        Param.float("shift", -3.0, -10.0, 10.0, "A = G + shift (negative shift: sigmabar(A) often 0)",
                    search=(-3.0, 2.0)),
        Param.matrix("A", None, "your own A (w x N); overrides w, N, seed, shift", shape=("w", "N"),
                     families=M.DEFAULT_FAMILIES + ("seed",)),
    ],
    notes="E21 (implicit hypothesis). Defaults make A all-negative (sigmabar(A) = 0): the printed reading "
          "(plain pseudo-inverse) gives 0 < stable rank, the catalogue's A = (-0.329, -0.792)^T being one such "
          "case; with the infinity convention the COI is +inf and the bound holds. Outcome and error model "
          "from jacot.coi_lower_bound (_prop1_outcome in this module).",
    catalogue="jacot §2.3 P1; §4 E21",
    covers=("E21",),
)


#: Image-condition decision by least squares (np.linalg.lstsq, an SVD of sigmabar(A) itself, not the eigenvalues of
#: its Gram that solvers.leaky uses): relative residual below IMG_HOLDS = the inclusion holds (rounding of a
#: least-squares solve, ~ max(w, N) eps cond(sigmabar), leaves room up to cond ~ 1e6), above IMG_FAILS = it fails
#: (a genuine violation leaves an O(1) share of A outside the row space); in between the draw is inconclusive.
IMG_HOLDS, IMG_FAILS = 1e-8, 1e-4


@p1hyp.numeric(backends=("numpy", "cupy"))
def _(p):
    """The corrected statement's own content, by a route independent of jacot.coi_lower_bound's: (i) the
    convention's COI (solvers.xp_jacot.coi) is +inf exactly when the image condition fails, decided separately by
    the least-squares residual of X sigmabar(A) = A; (ii) where it holds, the COI equals |X*|_F^2 of the
    minimum-norm least-squares solution X* = A sigmabar(A)^+ (so the printed |A sigmabar(A)^+|_F^2 and the convention
    agree there), and that value is >= the stable rank; (iii) where it fails the bound holds by the convention and
    the plain value is reported (values["plain_pinv"]: below the stable rank on the defaults, the erratum)."""
    A, xp = _A(p), xp_of(p)
    if not np.any(A):
        return inconclusive("A = 0: the stable rank is undefined (0/0)")
    A = A / float(np.max(np.abs(A)))          # scale-free (sigmabar is positively homogeneous)
    S = np.maximum(A, 0.0)
    s = np.linalg.svd(A, compute_uv=False)
    srank = float(s.sum() ** 2 / (s * s).sum())
    coi_conv = _coi_nobias(A, xp)
    if np.any(S):
        Xt, *_ = np.linalg.lstsq(S.T, A.T, rcond=None)   # min-norm X^T with S^T X^T ~ A^T
        res = float(np.linalg.norm(S.T @ Xt - A.T) / np.linalg.norm(A))
        plain = float(np.sum(Xt * Xt))
        sv = np.linalg.svd(S, compute_uv=False)
        kept = sv[sv > max(A.shape) * EPS * sv[0]]
        cond = float(kept[0] / kept[-1])
    else:                                         # sigmabar(A) = 0: nothing but 0 lies in its row space
        res, plain, cond = 1.0, 0.0, 1.0
    vals = {"image_residual": res, "coi_convention": "inf" if math.isinf(coi_conv) else coi_conv,
            "plain_pinv": plain, "srank": srank}
    if IMG_HOLDS < res < IMG_FAILS:
        return inconclusive(f"image-condition residual {res:.2g} in the grey zone ({IMG_HOLDS:g}, {IMG_FAILS:g})", **vals)
    if max(A.shape) * EPS * cond ** 2 > 1e-2:
        # the convention's COI comes from the eigenvalues of the Gram sigmabar^T sigmabar, whose condition is cond^2:
        # past 1e-2 / (max(w, N) eps) its smallest kept eigenvalues are rounding, and the two routes need not agree
        # (fresh sweep 27182818 draw 13: rank-deficient family, w = 48, N = 33, cond(sigmabar) = 3.7e7, least squares
        # residual 2e-14 but the Gram route's COI +inf)
        return inconclusive(f"sigmabar(A) has condition number {cond:.3g}: the Gram route of the convention squares it "
                            f"({cond ** 2:.2g}) beyond what float64 resolves; the image-condition decision is "
                            f"the least-squares one only", **vals)
    holds = res <= IMG_HOLDS
    parts = {"COI = +inf exactly when Im A^T is not in Im sigmabar(A)^T": (float(holds == math.isinf(coi_conv)), 0.0)}
    if holds and not math.isinf(coi_conv):
        # Error model: both are pseudo-inverse quadratic forms on the kept spectrum (relative ~ max(w,N) eps cond^2)
        tol = 10 * max(A.shape) * EPS * cond ** 2 * max(plain, srank, 1.0)
        parts["COI = |A sigmabar(A)^+|_F^2 (least squares) where the image condition holds"] = (abs(coi_conv - plain), tol)
        parts["|A sigmabar(A)^+|_F^2 >= stable rank"] = (max(0.0, srank - plain), tol)
    return Outcome.from_parts(parts, values=vals,
                              message=f"image condition {'holds' if holds else 'fails'} (residual {res:.2g}); COI "
                              f"{vals['coi_convention']}, plain |A sigmabar^+|^2 = {plain:.6g}, stable rank {srank:.6g}")


p1hyp.property(over=("w", "N", "seed", "shift", "A"), max_examples=25)


@p1hyp.falsifier("stated", search=("seed", "shift"), backends=("numpy", "cupy"))
def _(p):
    """Plain pseudo-inverse (no convention): an all-negative A gives 0 < stable rank."""
    A, xp = _A(p), xp_of(p)
    return _prop1_outcome(A, _pinv_coi(A, xp), xp, form="|A pinv(sigmabar(A))|^2")


@p1hyp.reproduction
def _(p):
    """Catalogue E21: A = (-0.329, -0.792)^T has plain-pinv 'COI' 0 < stable rank 1."""
    A = np.array([[-0.329], [-0.792]])
    val = float(np.linalg.norm(A @ np.linalg.pinv(leaky.sigma(A, bias=False))) ** 2)
    s = np.linalg.svd(A, compute_uv=False)
    sr = float(s.sum() ** 2 / (s * s).sum())
    return Outcome(residual=abs(val - 0.0) + abs(sr - 1.0), tolerance=1e-12,
                   values={"pinv_coi": val, "stable_rank": sr, "coi_convention": leaky.coi(A, bias=False)},
                   message=f"plain-pinv COI {val:.3g} vs stable rank {sr:.15g} (quoted 0 and 1)")
