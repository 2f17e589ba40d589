"""The cost of identity as a measure of dimension (§2.2-2.3): the K-norm, the neuron
decomposition (E14), COI = rank for non-negative representations (E4, E20), Prop 1 and its
implicit image hypothesis (E21), the stable-rank chain, and the choice of gamma_p (E2).

The COI is computed once, in ``solvers.leaky.coi`` (``+inf`` when the image condition
``Im A^T ⊆ Im sigma(A)^T`` fails, decided with the threshold stated there).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import asnumpy, on, xp_of
from theorems import matrices as M
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

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


def _rank(A):
    """Numerical rank with the LAPACK threshold max(w, N) eps s_max (numpy.linalg.matrix_rank)."""
    return int(np.linalg.matrix_rank(A))


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
          "the equality fails when 1 is in Im A^T (A = c 1^T gives c^2/(1+c^2)).",
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
        Param.int("w", 3, 1, 64, "rows of A", search=(1, 5)),
        Param.int("N", 4, 1, 64, "columns of A", search=(1, 6)),
        Param.seed("seed"),
        Param.float("shift", 0.5, -10.0, 10.0, "A = G + shift (more positive entries, more often a finite COI)",
                    search=(-0.5, 2.0)),
        Param.matrix("A", None, "your own A (w x N); overrides w, N, seed, shift", shape=("w", "N"),
                     families=M.DEFAULT_FAMILIES + ("seed",)),
    ],
    notes="E21: true only under the infinity convention (Im A^T ⊆ Im sigmabar(A)^T, else COI = +inf, and the "
          "inequality holds trivially); with a plain pseudo-inverse A = (-0.329, -0.792)^T has 'COI' 0 < 1. "
          "E3 (the proof's middle expression) is recorded in the catalogue; the statement is unaffected.",
    catalogue="jacot §2.3 P1; §4 E3, E21",
    covers=("P1", "E21"),
)


def _A(p):
    if p.A is not None:
        return np.array(p.A, dtype=float)
    rng = np.random.default_rng(p.seed)
    return rng.standard_normal((p.w, p.N)) + p.shift


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
        return Outcome(residual=0.0, tolerance=0.0, values={"coi": "inf", "srank": srank, **extra, "tightness": 0.0},
                       message="image condition fails: COI = +inf >= stable rank (infinity convention)")
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
    """COI (infinity convention, solvers.xp_jacot.coi as solvers.leaky.coi) minus the stable rank of A, never negative."""
    A, xp = _A(p), xp_of(p)
    return _prop1_outcome(A, _coi_nobias(A, xp), xp)


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
chain = Claim(
    id="jacot.stable_rank_chain",
    title="|A|_F^2/|A|_op^2 <= |A|_*^2/|A|_F^2 <= Rank A",
    label="l.125 (P1b)",
    section="2.3",
    equation="l.125",
    lines=(125, 125),
    statement=r"\frac{\|A\|_F^2}{\|A\|_{op}^2}\le\frac{\|A\|_*^2}{\|A\|_F^2}\le\mathrm{Rank}\,A",
    status="holds",
    bound=True,
    params=[
        Param.int("w", 4, 1, 64, "rows", search=(1, 8)),
        Param.int("N", 5, 1, 64, "columns", search=(1, 8)),
        Param.seed("seed"),
        Param.float("decay", 1.0, 0.0, 1.0, "singular values decay^i (1: all equal, equality on the right)",
                    search=(0.01, 1.0)),
    ],
    notes="Equality on the right iff the nonzero singular values are equal (decay = 1).",
    catalogue="jacot §2.3 P1b",
    covers=("P1b",),
)


def _chain_values(p):
    """A = U diag(decay^i) V^T built on the host; its singular values and rank on p.backend's namespace."""
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    r = min(p.w, p.N)
    U, _ = np.linalg.qr(rng.standard_normal((p.w, r)))
    V, _ = np.linalg.qr(rng.standard_normal((p.N, r)))
    s = p.decay ** np.arange(r)
    A = on(xp, (U * s) @ V.T)
    svx = X.svdvals(xp, A)
    rk = int(X.matrix_rank(xp, A))
    fro2 = float(xp.sum(svx * svx))
    s0, nuc = float(svx[0]), float(xp.sum(svx))
    return fro2 / s0**2, nuc**2 / fro2, rk, asnumpy(svx)


@chain.numeric(backends=("numpy", "cupy"))
def _(p):
    """Both inequalities on a matrix with prescribed singular values."""
    left, mid, rk, sv = _chain_values(p)
    # Error model: ratios of sums of r singular values, each with absolute error ~ r eps s_max.
    tol = 20 * len(sv) * EPS * rk
    return Outcome.from_parts({"left <= middle": (max(0.0, left - mid), tol),
                               "middle <= rank": (max(0.0, mid - rk), tol)},
                              message="stable-rank chain", values={"left": left, "middle": mid, "rank": rk,
                                                                   # the tighter of the two inequalities
                                                                   "tightness": max(left / mid, mid / rk)})


chain.property(over=("w", "N", "seed", "decay"), max_examples=30)


@chain.falsifier("srank_equals_rank", fixed={"decay": 0.1}, backends=("numpy", "cupy"))
def _(p):
    """Claim equality on the right for unequal singular values: s = (1, 0.1, ...) gives middle < rank."""
    left, mid, rk, sv = _chain_values(p)
    return Outcome(residual=abs(rk - mid), tolerance=20 * len(sv) * EPS * rk,
                   values={"middle": mid, "rank": rk}, message=f"stable rank {mid:.6g} vs rank {rk}")


def _nonneg_certificate(expr, vs):
    """1 unless numerator and denominator of expr are polynomials in vs (all >= 0) with coefficients of one sign."""
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    for q in (num, den):
        try:
            coeffs = sp.Poly(sp.expand(q), *vs).coeffs()
        except sp.PolynomialError:
            return 1
        if not all(c.is_Rational for c in coeffs) or len({sp.sign(c) for c in coeffs if c != 0}) > 1:
            return 1
    return 0


def _chain_symbolic(variant):
    """Singular values s_0 = c + y + x >= s_1 = c + y >= s_2 = c > 0 (x, y >= 0): the gaps middle - left and
    rank - middle of the printed chain (or a perturbed one), as rational functions of (x, y, c), must have
    numerator and denominator with coefficients of one sign (a certificate that each gap is >= 0)."""
    x, y, c = sp.symbols("x y c", nonnegative=True)
    s = [c + y + x, c + y, c]
    fro2, nuc, op = sum(v**2 for v in s), sum(s), s[0]
    left = {"left_op_not_squared": fro2 / op}.get(variant, fro2 / op**2)
    middle = {"middle_nuclear_not_squared": nuc / fro2}.get(variant, nuc**2 / fro2)
    return _nonneg_certificate(middle - left, (x, y, c)) + _nonneg_certificate(3 - middle, (x, y, c))


@chain.symbolic(timeout=30)
def _(p):
    """Rank 3, ordered singular values: both gaps of the chain are ratios of polynomials with non-negative coefficients."""
    bad = _chain_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel + Poly coefficients", "proved":
                   "|A|_F^2/|A|_op^2 <= |A|_*^2/|A|_F^2 <= 3 for every A of rank 3 (s_0 = c+y+x >= s_1 = c+y >= "
                   "s_2 = c > 0): each gap is a quotient of polynomials in x, y, c >= 0 with coefficients of one sign"},
                   message="gaps without a sign certificate")


@chain.mutant({"left_op_not_squared": "left ratio |A|_F^2/|A|_op (the operator-norm square dropped)",
               "middle_nuclear_not_squared": "middle ratio |A|_*/|A|_F^2 (the nuclear-norm square dropped)"}, timeout=30)
def _(p, variant):
    """The chain perturbed, through the same procedure: a gap must lose its sign certificate."""
    bad = _chain_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"gaps_without_certificate": bad},
                   message=f"{variant}: {bad} gaps without a sign certificate")


chain.tightness(over=("w", "N", "seed", "decay"), max_examples=30)


# ---------------------------------------------------------------------------
neurons = Claim(
    id="jacot.neuron_decomposition_gram",
    title="The Gram matrix as a sum over neurons (the bias term is missing in print)",
    label="l.93 (L3)",
    section="2.2",
    equation="l.93",
    lines=(89, 93),
    statement=r"K_p=\sum_{i=1}^w\sigma((A_p)_i)\sigma((A_p)_i)^T",
    status="erratum",
    corrected=r"K_p=\sum_{i=1}^w\bar\sigma(A_{p,i})\bar\sigma(A_{p,i})^T+\mathbf 1_N\mathbf 1_N^T",
    params=[Param.int("w", 5, 1, 64, "neurons", search=(1, 8)), Param.int("N", 4, 1, 64, "data points", search=(1, 8)),
            Param.seed("seed")],
    notes="E14. The loss splits over neurons (rows) because the Frobenius norm is additive over rows; the "
          "interaction between neurons goes through K_p.",
    catalogue="jacot §2.2 L3; §4 E14",
    covers=("L3", "C0", "E14"),
)


def _neurons_outcome(p, with_ones=True):
    """K = sigma(A)^T sigma(A) (one product) against the explicit sum of the w outer products relu(A_i) relu(A_i)^T
    (a stack of outer products summed over the neuron axis), on p.backend's namespace."""
    xp = xp_of(p)
    A = on(xp, np.random.default_rng(p.seed).standard_normal((p.w, p.N)))
    K = X.gram(xp, A)
    R = X.relu(xp, A)
    S = xp.sum(R[:, :, None] * R[:, None, :], axis=0)
    if with_ones:
        S = S + xp.ones((p.N, p.N), dtype=xp.float64)
    kmax = float(xp.max(xp.abs(K)))
    tol = 4 * p.w * EPS * kmax  # summation rounding, w terms
    return Outcome(residual=float(xp.max(xp.abs(K - S))), tolerance=tol,
                   values={"max_entry_K": kmax}, message="max |K - sum over neurons|")


@neurons.numeric(backends=("numpy", "cupy"))
def _(p):
    """K = sigma(A)^T sigma(A) against the corrected sum over neurons."""
    return _neurons_outcome(p)


neurons.property(over=("w", "N", "seed"), max_examples=20)


@neurons.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed sum (no 1 1^T): differs from K by exactly 1 in every entry."""
    return _neurons_outcome(p, with_ones=False)


def _neurons_symbolic(variant):
    """w = 3, N = 2, A free: sigma(A) = [relu(A); 1^T] (sp.Max), K = sigma^T sigma against the corrected sum over
    neurons (or a perturbed one): entries that do not expand to 0."""
    a = sp.Matrix(3, 2, sp.symbols("a0:6", real=True))
    R = a.applyfunc(lambda e: sp.Max(e, 0))
    S = R.col_join(sp.ones(1, 2))
    ones = {"stated": sp.ones(2, 2), "no_bias_term_E14": sp.zeros(2, 2), "bias_per_neuron": 3 * sp.ones(2, 2)}[variant]
    D = S.T * S - (sum((R[i, :].T * R[i, :] for i in range(3)), sp.zeros(2, 2)) + ones)
    return sum(1 for e in D if sp.expand(e) != 0)


@neurons.symbolic(timeout=30)
def _(p):
    """sigma(A)^T sigma(A) = sum_i relu(A_i) relu(A_i)^T + 1 1^T, symbolically for w = 3, N = 2 (A free)."""
    bad = _neurons_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand (relu as Max)"},
                   message="entries that differ")


@neurons.mutant({"no_bias_term_E14": "the printed sum without 1 1^T (erratum E14)",
                 "bias_per_neuron": "1 1^T added once per neuron (w 1 1^T)"}, timeout=30)
def _(p, variant):
    """The decomposition perturbed, through the same procedure: entries must differ."""
    bad = _neurons_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"entries_differing": bad},
                   message=f"{variant}: {bad} entries of K differ from the perturbed sum")


# ---------------------------------------------------------------------------
gamma = Claim(
    id="jacot.gamma_p_scaling",
    title="The suggested gamma_p: |sigma(A_p)|_op^2 = |K_p|_op, not |K_p|_op^2",
    label="l.200 (T4e)",
    section="3.1",
    equation="l.200",
    lines=(200, 200),
    statement=r"\gamma_p=\gamma_0\|\sigma(A_p)\|_{op}^2=\gamma_0\|K_p\|_{op}^2",
    status="erratum",
    corrected=r"\gamma_p=\gamma_0\|\sigma(A_p)\|_{op}^2=\gamma_0\|K_p\|_{op}",
    params=[Param.int("w", 6, 1, 64, "neurons", search=(1, 8)), Param.int("N", 5, 1, 64, "data points", search=(1, 8)),
            Param.seed("seed")],
    notes="E2 (wrong exponent). The paper's experiments may use either form; a reproduction must say which.",
    catalogue="jacot §2.5 T4e; §4 E2",
    covers=("T4e", "E2"),
)


def _gamma_outcome(p, power):
    """Both operator norms (largest singular values) on p.backend's namespace."""
    xp = xp_of(p)
    A = on(xp, np.random.default_rng(p.seed).standard_normal((p.w, p.N)))
    s2 = float(X.opnorm(xp, X.sigma(xp, A))) ** 2
    k = float(X.opnorm(xp, X.gram(xp, A))) ** power
    tol = 10 * max(p.w + 1, p.N) * EPS * max(s2, k)
    return Outcome(residual=abs(s2 - k), tolerance=tol, values={"sigma_op2": s2, f"K_op^{power}": k},
                   message=f"|sigma(A)|_op^2 = {s2:.10g} vs |K|_op^{power} = {k:.10g}")


@gamma.numeric(backends=("numpy", "cupy"))
def _(p):
    """Operator norms: |sigma(A)|_op^2 against |K|_op."""
    return _gamma_outcome(p, 1)


gamma.property(over=("w", "N", "seed"), max_examples=20)


@gamma.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed second form |K|_op^2."""
    return _gamma_outcome(p, 2)


def _gamma_symbolic(power):
    """S = R(t) diag(a, b) R(u)^T (rational rotations, a = b + d >= b > 0), so |S|_op = a by construction;
    K = S^T S.  The statement |S|_op^2 = |K|_op^power names |K|_op = a^(2/power): count the failures of
    'that value is an eigenvalue of K (root of its characteristic polynomial) and the largest one'."""
    b, d, t, u = sp.symbols("b d t u", positive=True)
    a = b + d

    def rot(z):
        return sp.Matrix([[1 - z**2, -2 * z], [2 * z, 1 - z**2]]) / (1 + z**2)
    S = rot(t) * sp.diag(a, b) * rot(u).T
    K = S.T * S
    claimed = a ** sp.Rational(2, power)
    bad = int(sp.cancel((K - claimed * sp.eye(2)).det()) != 0)
    other = sp.cancel(K.trace() - claimed)  # the other eigenvalue if claimed is one
    num = sp.fraction(sp.cancel(claimed - other))[0]
    bad += int(any(c < 0 for c in sp.Poly(sp.expand(num), b, d).coeffs()))
    return bad


@gamma.symbolic(timeout=30)
def _(p):
    """|S|_op^2 = |S^T S|_op for a generic 2x2 S = R diag(a, b) R'^T: a^2 is the largest root of charpoly(K)."""
    bad = _gamma_symbolic(1)
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy charpoly + cancel", "proved":
                   "for S = R(t) diag(a, b) R(u)^T (a >= b > 0): |S|_op^2 = a^2 is the largest eigenvalue of K = S^T S"},
                   message="failed: a^2 is not the largest eigenvalue of S^T S")


@gamma.mutant("printed_square_E2", timeout=30)
def _(p):
    """The printed second form |sigma(A)|_op^2 = |K_p|_op^2 (E2), through the same procedure: a is no eigenvalue of K."""
    bad = _gamma_symbolic(2)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message="|K|_op = |S|_op (the printed square) is not an eigenvalue of S^T S")
