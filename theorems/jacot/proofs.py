"""Errata in the proofs and side remarks of Jacot & Kaiser (catalogue §4): E3 (Prop 1's proof), E5, E6
(Prop 6 = Prop 2's proof), E12 (l.142 wording), E15 (Fig. 1 caption), E17 (Prop 10's proof), E18 (Prop 7's
proof) and E19 (l.134, an overstatement: a gap).

Each erratum is encoded twice: the printed form is the falsifier ``stated`` (refuted on the shown
instance), the corrected form the numeric check (certified), plus SymPy where the catalogue gives algebra.
Costs of identity and image conditions come from ``solvers.leaky``; the stable-minimum candidates, the
Caratheodory path and the COI rounding model from ``theorems.jacot.minima``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.jacot.minima import (caratheodory, coi_path, coi_tol, escape_search, nonneg_lowrank,
                                   ones_in_rowspace)

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


def _stable_params(w=6, N=5, k=3):
    return [
        Param.int("w", w, 1, 32, "neurons (rows of the stable minimum A = |G1||G2|)", search=(2, 7)),
        Param.int("N", N, 2, 32, "data points", search=(3, 7)),
        Param.int("k", k, 1, 31, "inner dimension (k < N: 1 not in Im A^T)", search=(1, 2)),
        Param.seed("seed"),
    ]


def _stable_A(p):
    """A non-negative candidate with 1 not in Im A^T (a stable minimum, jacot.stable_minima), or None."""
    if p.k >= p.N:
        return None
    A = nonneg_lowrank(p.w, p.N, p.k, p.seed)
    return None if ones_in_rowspace(A) else A


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
# E5: Prop 6 proof, l.330
e5 = Claim(
    id="jacot.erratum_prop6_bound",
    title="Prop 6's proof, l.330: the bound is |sigma(A_i)|^2 - 1 >= |A_i|^2 (not |A_i|^2 + 1)",
    label="Prop 6 proof (E5)",
    section="A.1",
    equation="l.318, l.330",
    lines=(312, 330),
    statement=r"\|\sigma(A_i)\|^2-1\ \ge\ \|A_i\|^2+1",
    status="erratum", bound=True,
    corrected=r"\|\sigma(A_i)\|^2-2+\mathbf 1^TK^+\mathbf 1\ge\|A_i\|^2,\ \mathbf 1^TK^+\mathbf 1\le1\ \Rightarrow\ "
              r"\|\sigma(A_i)\|^2-1\ge\|A_i\|^2",
    params=_stable_params(),
    notes="E5. A_i is column i and sigma(A_i) includes the appended 1. With |sigma(A_i)|^2 <= |A_i|^2 + 1 the printed "
          "line gives 1 >= 2 (no stable minima at all, contradicting A = 0); the corrected line gives equality, "
          "hence A_i >= 0 and 1^T K^+ 1 = 1. Checked at stable minima A = |G1||G2| (1 not in Im A^T), where also "
          "the l.314 simplification Kbar_i^T K^+ Kbar_i = |sigma(A_i)|^2 - 2 + 1^T K^+ 1 is verified.",
    catalogue="jacot §2.3 P2.iii, P2.v; §4 E5",
    covers=("E5",),
)


def _e5_terms(A, xp=None):
    """The per-column terms at the host matrix A, computed on ``xp`` (NumPy when None); host vectors out."""
    xp = xp if xp is not None else xp_of("numpy")
    Ax = on(xp, A)
    K = X.gram(xp, Ax)
    Kp = X.pinvh(xp, K)
    x = float(xp.sum(Kp @ xp.ones((A.shape[1],), dtype=xp.float64)))  # 1^T K^+ 1 (minima.kplus_ones)
    Kbar = X.gram(xp, Ax, bias=False)
    S = X.sigma(xp, Ax)
    sig2 = xp.sum(S * S, axis=0)  # |sigma(A_i)|^2 with the appended 1
    a2 = xp.sum(Ax * Ax, axis=0)
    quad = xp.sum(Kbar * (Kp @ Kbar), axis=0)  # Kbar_i^T K^+ Kbar_i, column by column
    sig2 = asnumpy(sig2)
    tol = float(X.coi_tol(xp, Ax)) * max(float(np.max(sig2)), 1.0) * 10
    return x, sig2, asnumpy(a2), asnumpy(quad), tol


@e5.numeric(backends=("numpy", "cupy"))
def _(p):
    """At a stable minimum: the l.314 simplification, the l.318 inequality and the corrected l.330 line, per column
    (the stable minimum drawn and gated on the host; its terms on p.backend's namespace)."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T (k >= N or degenerate draw): A is not a stable minimum")
    x, sig2, a2, quad, tol = _e5_terms(A, xp_of(p))
    return Outcome.from_parts({
        "l.314 identity": (float(np.max(np.abs(quad - (sig2 - 2 + x)))), tol),
        "l.318 inequality": (float(np.max(np.maximum(0.0, a2 - (sig2 - 2 + x)))), tol),
        "corrected l.330": (float(np.max(np.maximum(0.0, a2 - (sig2 - 1)))), tol)},
        message=f"1^T K^+ 1 = {x:.12g}; min_i (|sigma(A_i)|^2 - 1 - |A_i|^2) = {float(np.min(sig2 - 1 - a2)):.2e}",
        values={"1^T K^+ 1": x, "slack_corrected": (sig2 - 1 - a2).tolist(),
                # tightness of the corrected l.330, |A_i|^2 <= |sigma(A_i)|^2 - 1, at its tightest column
                "tightness": float(np.max(np.where(sig2 - 1 > 0, a2 / np.where(sig2 - 1 > 0, sig2 - 1, 1.0), 0.0)))})


e5.property(over=("w", "N", "k", "seed"), max_examples=12)
# The corrected l.330 is an equality at every stable minimum (A >= 0 there: |sigma(A_i)|^2 = |A_i|^2 + 1, the
# proof's conclusion), so the tightness is 1 on every draw and the sharpened constant fails at once.
e5.tightness(over=("w", "N", "k", "seed"), max_examples=10)


@e5.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed l.330 at the same stable minimum: |sigma(A_i)|^2 - 1 >= |A_i|^2 + 1 fails by 1."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    x, sig2, a2, quad, tol = _e5_terms(A, xp_of(p))
    gap = float(np.max((a2 + 1) - (sig2 - 1)))
    return Outcome(residual=max(0.0, gap), tolerance=tol, values={"violation": gap},
                   message=f"(|A_i|^2 + 1) - (|sigma(A_i)|^2 - 1) = {gap:.12g} > 0")


def _e5_symbolic(variant="stated"):
    """(i) l.314 for a symbolic non-negative 2 x 2 A (K = sigma^T sigma invertible): Kbar_i^T K^-1 Kbar_i against
    |sigma(A_i)|^2 - c + 1^T K^-1 1 (c = 2 as printed at l.314); (ii) the concluding line: with s = |sigma(A_i)|^2,
    a = |A_i|^2, x = 1^T K^+ 1, (s - 1 - rhs) - (s - 2 + x - a) - (1 - x) must expand to a constant >= 0 (rhs = a
    corrected, a + 1 printed), i.e. the line follows from l.318 and x <= 1.  Failed items."""
    A = sp.Matrix(2, 2, sp.symbols("a0:4", positive=True))
    S = A.applyfunc(lambda e: sp.Max(e, 0)).col_join(sp.ones(1, 2))
    K = S.T * S
    Ki, one = K.inv(), sp.ones(2, 1)
    c = 1 if variant == "l314_factor_one" else 2
    bad = 0
    for i in range(2):
        Kb = K[:, i] - one
        lhs = (Kb.T * Ki * Kb)[0, 0]
        rhs = sum(e**2 for e in S[:, i]) - c + (one.T * Ki * one)[0, 0]
        bad += int(sp.cancel(sp.together(lhs - rhs)) != 0)
    s_, a_, x_ = sp.symbols("s a x", real=True)
    bound = a_ + 1 if variant == "printed_E5" else a_
    rest = sp.expand((s_ - 1 - bound) - (s_ - 2 + x_ - a_) - (1 - x_))
    bad += int(not (rest.is_number and rest >= 0))
    return bad


@e5.symbolic(timeout=30)
def _(p):
    """l.314 symbolically (2 x 2 A >= 0), then s - 1 - a = (s - 2 + x - a) + (1 - x): the corrected line follows
    from l.318 and 1^T K^+ 1 <= 1."""
    bad = _e5_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel/expand",
                   "proved": "Kbar_i^T K^+ Kbar_i = |sigma(A_i)|^2 - 2 + 1^T K^+ 1 (2 x 2, A >= 0); corrected line "
                             "follows from l.318 and 1^T K^+ 1 <= 1; printed line does not (remainder -1)"},
                   message="identities that failed")


@e5.mutant({"printed_E5": "the printed conclusion |sigma(A_i)|^2 - 1 >= |A_i|^2 + 1",
            "l314_factor_one": "l.314 with -K_i^T K^+ 1 once (the factor 2 of the cross term dropped)"}, timeout=30)
def _(p, variant):
    """The proof's lines perturbed, through the same procedure: an item must fail."""
    bad = _e5_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} items failed")


# ---------------------------------------------------------------------------
# E6: Prop 6 proof, l.332-338
e6 = Claim(
    id="jacot.erratum_prop6_limit",
    title="Prop 6's proof, l.334-336: bounding the Sherman-Morrison term by x/(1+x) only gives |A|_K^2 >= |A|_Kbar^2 - 1",
    label="Prop 6 proof (E6)",
    section="A.1",
    equation="l.334-338",
    lines=(332, 338),
    statement=r"\|A\|_K^2\ge\lim_{\gamma\searrow0}\|A\|^2_{\bar K+\gamma I}-\frac{\mathbf 1^T(\bar K+\gamma I)^{-1}\mathbf 1}"
              r"{1+\mathbf 1^T(\bar K+\gamma I)^{-1}\mathbf 1}=\|A\|^2_{\bar K}",
    status="erratum",
    corrected=r"\|A\|_K^2=\lim_{\gamma\searrow0}\|A\|^2_{\bar K+\gamma I}-\frac{\mathbf 1^T(\bar K+\gamma)^{-1}\bar K(\bar K+\gamma)^{-1}"
              r"\mathbf 1}{1+x_\gamma},\ \ \frac{\mathbf 1^T(\bar K+\gamma)^{-1}\bar K(\bar K+\gamma)^{-1}\mathbf 1}{1+x_\gamma}\le"
              r"\frac{\|\bar K^{+1/2}\mathbf 1\|^2}{1+x_\gamma}\to0,\ \text{so }\|A\|_K^2=\|A\|^2_{\bar K}",
    params=_stable_params() + [Param.float("gamma_min", 1e-8, 1e-12, 1e-2, "smallest gamma of the sequence 1e-2 ... gamma_min"
                    " (>= 1e-12: below, numerically singular)")],
    notes="E6: x_gamma = 1^T (Kbar + gamma)^{-1} 1 -> infinity (1 not in Im Kbar), so x/(1+x) -> 1 and the printed chain "
          "only yields |A|_K^2 >= |A|_Kbar^2 - 1; the true subtracted term has a bounded numerator. Checked at "
          "stable minima A = |G1||G2| (A^T A = Kbar there).",
    catalogue="jacot §2.3 P2.vi; §4 E6",
    covers=("E6",),
)


def _e6_terms(A, gammas, xp=None):
    """Eigen-split of Kbar and the Sherman-Morrison terms at each gamma, on ``xp`` (NumPy when None); A on the host.
    Returns the rows, c0, and (lam, c) as host vectors."""
    xp = xp if xp is not None else xp_of("numpy")
    Ax = on(xp, A)
    Kbar = X.gram(xp, Ax, bias=False)
    lam, V = xp.linalg.eigh(Kbar)
    c = xp.matrix_transpose(V) @ xp.ones((A.shape[1],), dtype=xp.float64)
    keep = lam > Kbar.shape[0] * EPS * lam[-1]
    c0 = float(xp.sum(xp.where(keep, c**2 / xp.where(keep, lam, xp.ones_like(lam)), xp.zeros_like(lam))))
    lamk = xp.where(keep, lam, xp.zeros_like(lam))
    rows = []
    for g in map(float, gammas):
        x = float(xp.sum(c**2 / (lam + g)))
        num = float(xp.sum(lamk * c**2 / (lam + g) ** 2))
        coib = float(X.coi_gamma(xp, Ax, float(g), bias=False))  # |A|^2_{Kbar + gamma}
        rows.append({"gamma": float(g), "x": x, "term": num / (1 + x), "x/(1+x)": x / (1 + x),
                     "coi_bar_gamma": coib, "coi_gamma_direct": float(X.coi_gamma(xp, Ax, float(g)))})
    return rows, c0, asnumpy(lam), asnumpy(c)


@e6.numeric(backends=("numpy", "cupy"))
def _(p):
    """Sherman-Morrison split along gamma -> 0: the true term obeys term <= c0/(1+x) -> 0, and |A|_K^2 = |A|_Kbar^2
    (the stable minimum drawn and gated on the host; the algebra on p.backend's namespace)."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    xp = xp_of(p)
    Ax = on(xp, A)
    gammas = np.geomspace(1e-2, p.gamma_min, 4)
    rows, c0, lam, c = _e6_terms(A, gammas, xp)
    ck, cb = float(X.coi(xp, Ax)), float(X.coi(xp, Ax, bias=False))
    kop = float(X.opnorm(xp, X.gram(xp, Ax)))
    # Error models: the SM identity and the gamma-solve have relative rounding ~ N eps cond(K + gamma)
    sm = max(abs(r["coi_gamma_direct"] - (r["coi_bar_gamma"] - r["term"])) / (10 * A.shape[1] * EPS *
             (kop / r["gamma"]) * max(r["coi_bar_gamma"], 1.0)) for r in rows)
    bound = max(r["term"] - c0 / (1 + r["x"]) for r in rows)
    tol = float(X.coi_tol(xp, Ax)) * max(cb, 1.0)
    # x_gamma = sum_kept c_j^2/(lam_j + gamma) + q/gamma with q = |P_ker(Kbar) 1|^2 > 0, so
    # 0 <= gamma x_gamma - q <= gamma c0: x grows like q/gamma and term <= c0/(1+x) <= c0 gamma/q -> 0.
    n = A.shape[1]
    q = float(np.sum(c[lam <= n * EPS * lam[-1]] ** 2))
    # rounding: the kernel eigenvalues are ~ N eps lam_max instead of 0, which shifts gamma x by q N eps lam_max / gamma
    growth = max((abs(r["gamma"] * r["x"] - q) - r["gamma"] * c0)
                 / (q * n * EPS * lam[-1] / r["gamma"] + 100 * A.shape[1] * EPS * max(q, 1.0)) for r in rows)
    return Outcome.from_parts({
        "Sherman-Morrison identity": (sm, 1.0),
        "term <= c0/(1+x)": (max(0.0, bound), 10 * EPS * c0),
        "1 not in Im Kbar (q > 0)": (0.0 if q > 1e3 * A.shape[1] * EPS else 1.0, 0.0),
        "gamma x - q in [0, gamma c0]": (max(0.0, growth), 1.0),
        "|A|_K^2 = |A|_Kbar^2": (abs(ck - cb), tol)},
        message=f"true term {rows[-1]['term']:.2e} at gamma = {p.gamma_min:.0e} (x/(1+x) = {rows[-1]['x/(1+x)']:.8f}); "
                f"COI with bias {ck:.12g}, without {cb:.12g}",
        values={"rows": rows, "c0": c0, "q": q, "coi_bias": ck, "coi_nobias": cb,
                "plot": {"kind": "loglog", "x": [r["gamma"] for r in rows],
                         "series": {"true subtracted term": [r["term"] for r in rows],
                                    "1 - x/(1+x)": [1 - r["x/(1+x)"] for r in rows]},
                         "xlabel": "gamma", "ylabel": "value", "title": "E6: the true term -> 0, the paper's bound -> 1"}})


e6.property(over=("w", "N", "k", "seed"), max_examples=10)


@e6.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed chain: lim (|A|^2_{Kbar+gamma} - x/(1+x)) = |A|^2_Kbar; at gamma_min it is |A|^2_Kbar - 1."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    xp = xp_of(p)
    rows, c0, _, _ = _e6_terms(A, [p.gamma_min], xp)
    r = rows[0]
    cb = float(X.coi(xp, on(xp, A), bias=False))
    printed = r["coi_bar_gamma"] - r["x/(1+x)"]
    # the printed limit value at finite gamma differs from its gamma -> 0 limit by at most
    # |coi_bar_gamma - cb| + (1 - x/(1+x)) (both -> 0); allow that plus rounding
    tol = abs(r["coi_bar_gamma"] - cb) + (1 - r["x/(1+x)"]) + float(X.coi_tol(xp, on(xp, A))) * max(cb, 1.0)
    return Outcome(residual=abs(printed - cb), tolerance=tol, values={"printed_chain_value": printed, "coi_nobias": cb},
                   message=f"printed chain gives {printed:.10g}, |A|_Kbar^2 = {cb:.10g} (difference -> 1)")


def _e6_symbolic(variant="stated"):
    """N = 2, Kbar = v v^T with v = (1, u) (u > 0, u != 1: 1 not in Im Kbar), A^T A = Kbar: (i) Sherman-Morrison,
    Tr[Kbar (Kbar + 11^T + g)^-1] = Tr[Kbar (Kbar + g)^-1] - term, and (ii) lim_{g -> 0} term = 0, with term the
    corrected subtracted term 1^T M Kbar M 1/(1 + x) (M = (Kbar + g)^-1, x = 1^T M 1) or a perturbed one."""
    u, g = sp.symbols("u gamma", positive=True)
    u = u + 2  # u > 2, so v is never parallel to 1
    v = sp.Matrix([1, u])
    Kbar = v * v.T
    M = (Kbar + g * sp.eye(2)).inv()
    one = sp.ones(2, 1)
    x = sp.cancel((one.T * M * one)[0, 0])
    num = {"printed_E6": x, "no_one_plus": None}.get(variant, (one.T * M * Kbar * M * one)[0, 0])
    term = (one.T * M * Kbar * M * one)[0, 0] / x if variant == "no_one_plus" else num / (1 + x)
    full = (Kbar * (Kbar + one * one.T + g * sp.eye(2)).inv()).trace()
    bad = int(sp.cancel(sp.together(full - ((Kbar * M).trace() - term))) != 0)
    bad += int(sp.limit(sp.cancel(term), g, 0, "+") != 0)
    return bad


@e6.symbolic(timeout=60)
def _(p):
    """N = 2, Kbar = v v^T (1 not in Im Kbar): the Sherman-Morrison split with the corrected term, which -> 0 as gamma -> 0."""
    bad = _e6_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel, sympy.limit", "proved":
                   "|A|_K^2 = lim |A|^2_{Kbar+g} - 1^T M Kbar M 1/(1+x), the term -> 0 (Kbar = v v^T, v = (1, u), u > 2)"},
                   message="failed: the split or the limit")


@e6.mutant({"printed_E6": "the printed bound term x/(1 + x) (E6): -> 1, and not the Sherman-Morrison term",
            "no_one_plus": "the term 1^T M Kbar M 1 / x (the 1 + of the denominator dropped)"}, timeout=60)
def _(p, variant):
    """The subtracted term perturbed, through the same procedure: the split or the limit must fail."""
    bad = _e6_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} items failed")


# ---------------------------------------------------------------------------
# E12: l.142 wording
e12 = Claim(
    id="jacot.erratum_nonneg_wording",
    title="l.142: something pushes away from negative (non-stable) minima, not from non-negative ones",
    label="l.142 (E12)",
    section="2.3",
    equation="l.142",
    lines=(142, 142),
    statement=r"\text{there seems to be something else that pushes away from such non-negative minima}",
    status="erratum",
    corrected=r"\text{... pushes away from such negative/non-stable minima: at non-negative (stable) minima no "
              r"perturbation lowers the COI, while from the end }A_1\text{ of the Prop 3 path of a negative }\hat A"
              r"\text{ the COI decreases}",
    params=_stable_params() + [
        Param.int("N3", 3, 2, 3, "data points of the negative A-hat (Prop 3 needs w3 > N3(N3 + 1))"),
        Param.int("w3", 15, 7, 40, "neurons of the negative A-hat"),
    ],
    notes="E12 (wording). Escape family tried at a point A: scaling A by (1 - d), appending a row d z with z a column "
          "of Kbar (the proof's direction) or a random vector, and random perturbations of A, for d in {1e-1, 1e-2, "
          "1e-3}. 'Escape' = a COI decrease beyond the rounding tolerance of solvers.leaky.coi.",
    catalogue="jacot §2.3 P3b; §4 E12",
    covers=("E12",),
)


def _negative_endpoint(p):
    rng = np.random.default_rng(p.seed)
    Ah = rng.standard_normal((p.w3, p.N3))
    a, *_ = caratheodory(Ah)
    return None if a is None else coi_path(Ah, a, 1.0)


@e12.numeric
def _(p):
    """No escape at a non-negative stable minimum; a clear escape from the Prop 3 endpoint of a negative A-hat."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    if p.w3 <= p.N3 * (p.N3 + 1):
        return inconclusive(f"Prop 3 needs w3 > N3(N3 + 1) (got {p.w3}, {p.N3 * (p.N3 + 1)})")
    d_pos, tol_pos = escape_search(A, p.seed)
    A1 = _negative_endpoint(p)
    if A1 is None:
        return inconclusive("the LP solver failed")
    d_neg, tol_neg = escape_search(A1, p.seed)
    return Outcome.from_parts({"no escape at non-negative minimum": (max(0.0, -d_pos), tol_pos),
                               "escape from negative endpoint": (max(0.0, d_neg + tol_neg), 0.0)},
                              message=f"best COI change: {d_pos:.2e} at the non-negative minimum, {d_neg:.3g} at the "
                                      f"negative A_1", values={"best_change_nonneg": d_pos, "best_change_negative": d_neg,
                                                               "tol_nonneg": tol_pos, "tol_negative": tol_neg})


e12.property(over=("w", "N", "k", "seed"), max_examples=6)


@e12.falsifier("stated")
def _(p):
    """Printed: non-negative minima are pushed away from, i.e. the escape family lowers their COI: it does not."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    d_pos, tol_pos = escape_search(A, p.seed)
    return Outcome(residual=max(0.0, d_pos + tol_pos), tolerance=0.0, values={"best_change_nonneg": d_pos, "tol": tol_pos},
                   message=f"best COI change at the non-negative minimum {d_pos:.2e} (an escape needs < -{tol_pos:.1e})")


# ---------------------------------------------------------------------------
# E15: Fig. 1 caption
e15 = Claim(
    id="jacot.erratum_fig1_coi_square",
    title="Fig. 1 caption: the COI compared with -2H/Lt is min_p |A_p|^2_{K_p} (squared)",
    label="Fig. 1 caption (E15)",
    section="2.3",
    equation="l.140",
    lines=(140, 140),
    statement=r"\text{COI refers to }\min_p\|A_p\|_{K_p}\ (\approx-\tfrac2{\tilde L}\mathcal H\approx k^*)",
    status="erratum",
    corrected=r"\text{COI refers to }\min_p\|A_p\|^2_{K_p};\ \text{on the rest geodesic }A_p\equiv A>0,\ B_p\equiv AK^+:\ "
              r"-\tfrac2{\tilde L}\mathcal H=\|A\|_K^2=\mathrm{Rank}A",
    params=_stable_params(w=6, N=6, k=3) + [Param.float("Lt", 5.0, 1e-6, 100.0, "effective depth"
                    " (>= 1e-6: below, not resolved in double precision)",
                                                        search=(0.5, 20.0))],
    notes="E15. Exact instance: a strictly positive stable minimum A = |G1||G2| (1 not in Im A^T, so A K^+ 1 = 0) "
          "with B = A K^+ is a rest point of Hamilton's equations (A' = Lt(BK - A) = 0 and relu(A)B^TB = B), hence "
          "a geodesic with H = -Lt/2 |A|_K^2; -2H/Lt = k = |A|_K^2 while the unsquared |A|_K = sqrt(k).",
    catalogue="jacot §2.5 BN1; §4 E15",
    covers=("E15",),
)


def _e15_data(p):
    """The strictly positive stable minimum drawn and gated on the host; B = A K^+, Hamilton's right side, H, the COI
    and the rank on p.backend's namespace (solvers.xp_jacot, as solvers.leaky)."""
    A = _stable_A(p)
    if A is None or A.min() <= 0:
        return None
    xp = xp_of(p)
    Ax = on(xp, A)
    B = Ax @ X.pinvh(xp, X.gram(xp, Ax))
    dA, dB = X.hamilton_rhs(xp, Ax, B, p.Lt)
    big = max(float(xp.max(xp.abs(dA))), float(xp.max(xp.abs(dB))))
    rest = big / (p.Lt * max(float(xp.max(xp.abs(Ax))), 1.0))
    H = float(X.hamiltonian(xp, Ax, B, p.Lt))
    return A, -2 * H / p.Lt, float(X.coi(xp, Ax)), int(X.matrix_rank(xp, Ax)), rest, float(X.coi_tol(xp, Ax))


@e15.numeric(backends=("numpy", "cupy"))
def _(p):
    """Rest geodesic: Hamilton's rhs vanishes, -2H/Lt = min_p |A_p|^2_K = rank."""
    d = _e15_data(p)
    if d is None:
        return inconclusive("no strictly positive stable minimum for these parameters")
    A, h, c, r, rest, ctol = d
    tol = ctol * max(c, 1.0) * 10
    return Outcome.from_parts({"rest point": (rest, tol), "-2H/Lt = |A|_K^2": (abs(h - c), tol),
                               "|A|_K^2 = rank": (abs(c - r), tol)},
                              message=f"-2H/Lt = {h:.12g}, |A|_K^2 = {c:.12g}, rank {r}",
                              values={"-2H/Lt": h, "coi_squared": c, "rank": r, "rhs_residual": rest})


e15.property(over=("w", "N", "k", "seed", "Lt"), max_examples=10)


@e15.falsifier("stated", fixed={"k": 3}, backends=("numpy", "cupy"))
def _(p):
    """The printed unsquared min_p |A_p|_{K_p} against -2H/Lt on the same geodesic: sqrt(k) != k."""
    d = _e15_data(p)
    if d is None:
        return inconclusive("no strictly positive stable minimum for these parameters")
    A, h, c, r, rest, ctol = d
    tol = ctol * max(c, 1.0) * 10
    return Outcome(residual=abs(h - np.sqrt(c)), tolerance=tol, values={"-2H/Lt": h, "unsquared": float(np.sqrt(c))},
                   message=f"-2H/Lt = {h:.10g} vs min_p |A_p|_K = {np.sqrt(c):.10g}")


# ---------------------------------------------------------------------------
# E17: Prop 10 proof, l.477
e17 = Claim(
    id="jacot.erratum_prop10_reparametrisation",
    title="Prop 10's proof, l.477: the reparametrised dynamics read r'(q) V_{r(q)} sigma(A~_q)",
    label="Prop 10 proof (E17)",
    section="A.3",
    equation="l.477",
    lines=(474, 479),
    statement=r"\partial_q\tilde A_q=-\tilde L\tilde A_q+r'(q)A_{r(q)}\sigma(\tilde Z_q)+e^{\tilde L(r(q)-q)}r'(q)b_{r(q)}",
    status="erratum",
    corrected=r"\partial_q\tilde A_q=-\tilde L\tilde A_q+r'(q)V_{r(q)}\bar\sigma(\tilde A_q)+e^{\tilde L(r(q)-q)}r'(q)b_{r(q)}"
              r"=\tilde V_q\bar\sigma(\tilde A_q)+\tilde b_q-\tilde L\tilde A_q,\ \ \tilde A_q=e^{\tilde L(r(q)-q)}A_{r(q)}",
    params=[
        Param.int("w", 3, 1, 16, "width", search=(1, 5)),
        Param.int("N", 3, 1, 16, "data points", search=(1, 5)),
        Param.float("Lt", 2.0, 0.0, 20.0, "effective depth", search=(0.0, 5.0)),
        Param.seed("seed of A_r, V, b, q, r(q), r'(q)"),
    ],
    notes="E17 (notation/typo, independent of the factor 2 of E1): the proof writes W for the non-bias part V. "
          "Pointwise check: at random A_r (any signs), V, b, q, r = r(q), r' > 0, the chain rule "
          "d/dq A~ = Lt (r' - 1) A~ + e^{Lt(r-q)} r' (-Lt A_r + V relu(A_r) + b) equals the corrected line "
          "(positive homogeneity: relu(e^c A) = e^c relu(A)). The printed line is read with Z~ = A~ (w = N).",
    catalogue="jacot §2.7 P10; §4 E17",
    covers=("E17",),
)


def _e17_data(p):
    rng = np.random.default_rng(p.seed)
    A = rng.standard_normal((p.w, p.N))
    V = rng.standard_normal((p.w, p.w))
    b = rng.standard_normal((p.w, 1))
    q, r, dr = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.2, 3.0)
    e = np.exp(p.Lt * (r - q))
    At = e * A
    chain = p.Lt * (dr - 1) * At + e * dr * (-p.Lt * A + V @ np.maximum(A, 0) + b)
    scale = max(float(np.max(np.abs(chain))), p.Lt * float(np.max(np.abs(At))), 1.0)
    return A, V, b, e, dr, At, chain, scale


@e17.numeric
def _(p):
    """Chain rule of A~ = e^{Lt(r-q)} A_r against the corrected line 3 and line 4 of the display."""
    A, V, b, e, dr, At, chain, scale = _e17_data(p)
    line3 = -p.Lt * At + dr * V @ np.maximum(At, 0) + e * dr * b
    line4 = (dr * V) @ np.maximum(At, 0) + e * dr * b - p.Lt * At
    tol = 20 * (p.w + 2) * EPS * scale * max(e, 1.0)  # a few matrix products with entries ~ scale
    return Outcome.from_parts({"line 3 (corrected)": (float(np.max(np.abs(chain - line3))), tol),
                               "line 4": (float(np.max(np.abs(chain - line4))), tol)},
                              message="chain rule vs corrected reparametrised dynamics", values={"scale": scale})


e17.property(over=("w", "N", "Lt", "seed"), max_examples=15)


@e17.falsifier("stated", fixed={"w": 3, "N": 3})
def _(p):
    """The printed r'(q) A_{r(q)} sigma(Z~_q), read with Z~ = A~ (square case w = N so that the product is defined)."""
    if p.w != p.N:
        return inconclusive("the printed product A_r sigma(Z~) needs w = N to be defined")
    A, V, b, e, dr, At, chain, scale = _e17_data(p)
    printed = -p.Lt * At + dr * A @ np.maximum(At, 0) + e * dr * b
    tol = 20 * (p.w + 2) * EPS * scale * max(e, 1.0)
    return Outcome(residual=float(np.max(np.abs(chain - printed))), tolerance=tol,
                   values={"printed_vs_chain": float(np.max(np.abs(chain - printed)))},
                   message="chain rule vs the printed line")


def _e17_symbolic(variant="stated"):
    """Scalar, fixed ReLU mask m (e^{Lt(r-q)} > 0 preserves it): A~(q) = e^{Lt(r(q)-q)} A(r(q)) with r and A free
    functions, differentiated by sympy, A'(p) replaced by the ODE -Lt A + V m A + b; minus the corrected line 3
    (or a perturbed one): 1 if it does not expand to 0."""
    Lt, V, b, m = sp.symbols("Lt V b m", real=True)
    q = sp.Symbol("q", real=True)
    r, Af = sp.Function("r"), sp.Function("A")
    e = sp.exp(Lt * (r(q) - q))
    At = e * Af(r(q))
    d = sp.diff(At, q)
    p_ = sp.Symbol("p")
    ode = (-Lt * Af(p_) + V * m * Af(p_) + b).subs(p_, r(q))
    d = d.subs(sp.Subs(sp.Derivative(Af(p_), p_), p_, r(q)), ode).doit()
    d = d.replace(lambda x: isinstance(x, sp.Derivative) and x.expr.func == Af, lambda x: ode)
    dr = sp.diff(r(q), q)
    factor = {"printed_E17": Af(r(q)), "missing_rprime": V / dr}.get(variant, V)
    line = -Lt * At + dr * factor * m * At + e * dr * b
    return int(sp.expand(d - line) != 0)


@e17.symbolic(timeout=30)
def _(p):
    """Scalar case with a fixed ReLU mask m: sympy differentiates e^{Lt(r(q)-q)} A(r(q)) along the ODE = corrected line."""
    bad = _e17_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff with r, A free functions, expand",
                   "proved": "d/dq A~ along the leaky ODE equals the corrected line 3"}, message="nonzero remainder")


@e17.mutant({"printed_E17": "the printed line 3 with A_{r(q)} for V_{r(q)} (E17)",
             "missing_rprime": "V_{r(q)} sigma(A~_q) without the factor r'(q)"}, timeout=30)
def _(p, variant):
    """Line 3 perturbed, through the same procedure: the remainder must be nonzero."""
    bad = _e17_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: nonzero remainder")


# ---------------------------------------------------------------------------
# E18: Prop 7 proof, l.344-346
e18 = Claim(
    id="jacot.erratum_prop7_nonneg_criterion",
    title="Prop 7's proof: A >= 0 iff A^T A = Kbar = K^sigma - beta^2 11^T (not K^sigma)",
    label="Prop 7 proof (E18)",
    section="A.1",
    equation="l.344-346",
    lines=(344, 346),
    statement=r"A\ge0\iff\hat K=\hat K^\sigma\quad(\hat K=A^TA,\ \hat K^\sigma=\sigma(A)^T\sigma(A))",
    status="erratum",
    corrected=r"A\ge0\iff\hat K=\hat K^\sigma-\beta^2\mathbf 1\mathbf 1^T=\bar\sigma(A)^T\bar\sigma(A),\ \text{since }"
              r"\mathrm{Tr}[\hat K-\bar K]=\|[A]_-\|_F^2",
    params=[
        Param.int("w", 5, 1, 32, "rows", search=(1, 6)),
        Param.int("N", 4, 1, 32, "columns", search=(1, 6)),
        Param.seed("seed"),
    ],
    notes="E18; beta = 1 is the appended constant. The same proof calls '(the converse of) Proposition 2' what is "
          "its contrapositive, and calls A_1 a 'saddle' without showing criticality (the gap of "
          "jacot.constant_coi_path).",
    catalogue="jacot §2.3 P3; §4 E18",
    covers=("E18",),
)


def _e18_parts(p, printed=False):
    rng = np.random.default_rng(p.seed)
    Apos = np.abs(rng.standard_normal((p.w, p.N)))
    Aneg = rng.standard_normal((p.w, p.N))
    Aneg[0, 0] = -abs(Aneg[0, 0]) - 0.1  # at least one negative entry
    G = (lambda A: leaky.gram(A)) if printed else (lambda A: leaky.gram(A, bias=False))
    tol = 10 * p.w * EPS * float(np.max(Apos) ** 2) * p.N
    eq = float(np.max(np.abs(Apos.T @ Apos - G(Apos))))
    negmass = float(np.sum(np.minimum(Aneg, 0) ** 2))
    trace = abs(float(np.trace(Aneg.T @ Aneg - leaky.gram(Aneg, bias=False))) - negmass)
    return eq, trace, negmass, tol


@e18.numeric
def _(p):
    """A >= 0: A^T A = Kbar to rounding; any A: Tr(A^T A - Kbar) = |[A]_-|^2 (> 0 as soon as an entry is negative)."""
    eq, trace, negmass, tol = _e18_parts(p)
    return Outcome.from_parts({"A>=0: A^T A = Kbar": (eq, tol), "trace identity": (trace, tol * (1 + negmass)),
                               "negative A: Kbar != A^T A": (0.0 if negmass > tol else 1.0, 0.0)},
                              message=f"|A^T A - Kbar| = {eq:.1e} for A >= 0; |[A]_-|^2 = {negmass:.4g} for the negative A",
                              values={"neg_mass": negmass})


e18.property(over=("w", "N", "seed"), max_examples=15)


@e18.falsifier("stated")
def _(p):
    """The printed criterion K-hat = K-hat^sigma (with the bias row) on a non-negative A: off by 1 1^T."""
    eq, trace, negmass, tol = _e18_parts(p, printed=True)
    return Outcome(residual=eq, tolerance=tol, values={"max|A^TA - K^sigma|": eq},
                   message=f"non-negative A: max |A^T A - sigma(A)^T sigma(A)| = {eq:.6g}")


def _e18_symbolic(variant="stated"):
    """A 2 x 2 on all 16 sign patterns (a_ij = +-|a_ij| symbols, relu as Max): the criterion A^T A = G (G the corrected
    sigmabar^T sigmabar = K^sigma - 1 1^T, or a perturbed one) must hold exactly on the non-negative pattern and fail
    on every other; and Tr[A^T A - Kbar] = |[A]_-|_F^2 on each.  Patterns where either fails."""
    import itertools
    mags = sp.symbols("m0:4", positive=True)
    relu = lambda z: sp.Max(0, z)  # noqa: E731
    bad = 0
    for signs in itertools.product((1, -1), repeat=4):
        A = sp.Matrix(2, 2, [sg * m for sg, m in zip(signs, mags)])
        S = A.applyfunc(relu).col_join(sp.ones(1, 2))
        Ksig = S.T * S
        G = {"printed_E18": Ksig, "bias_sign": Ksig + sp.ones(2, 2)}.get(variant, Ksig - sp.ones(2, 2))
        holds = all(sp.expand(e) == 0 for e in (A.T * A - G))
        bad += int(holds != all(sg > 0 for sg in signs))
        Kbar = A.applyfunc(relu).T * A.applyfunc(relu)
        bad += int(sp.expand((A.T * A - Kbar).trace() - sum(relu(-e) ** 2 for e in A)) != 0)
    return bad


@e18.symbolic(timeout=60)
def _(p):
    """2 x 2 A on all 16 sign patterns: A^T A = K^sigma - 1 1^T exactly when A >= 0; Tr[A^T A - Kbar] = |[A]_-|^2."""
    bad = _e18_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand on sign patterns"},
                   message="sign patterns where the criterion or the trace identity failed")


@e18.mutant({"printed_E18": "the printed criterion A^T A = K^sigma (bias row kept)",
             "bias_sign": "A^T A = K^sigma + 1 1^T (the sign of beta^2 1 1^T flipped)"}, timeout=60)
def _(p, variant):
    """The criterion perturbed, through the same procedure: it must fail on the non-negative pattern."""
    bad = _e18_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} patterns failed")


# ---------------------------------------------------------------------------
# E19: l.134 overstatement (gap)
e19 = Claim(
    id="jacot.strict_minima_stable",
    title="l.134: 'all strict local minima of wide networks are stable' - Prop 3 only shows they are non-negative",
    label="l.134 (E19)",
    section="2.3",
    equation="l.134",
    lines=(134, 134),
    statement=r"w>N(N+1):\ \text{all strict local minima of }A\mapsto\|A\|_K^2\text{ are stable}",
    status="gap",
    corrected=r"w>N(N+1):\ \text{Prop 3 gives: strict local minima are non-negative. Moreover a non-negative }A\neq0"
              r"\text{ is never strict (}A\mapsto DA,\ D>0\text{ diagonal, keeps the COI), so }A=0\text{ is the only strict "
              r"local minimum and the claim holds vacuously}",
    params=_stable_params() + [
        Param.int("N3", 3, 2, 3, "data points of the negative A-hat"),
        Param.int("w3", 15, 7, 40, "neurons of the negative A-hat (w3 > N3(N3 + 1))"),
    ],
    notes="E19 (overstatement in the argument; the statement is not refuted). The catalogue calls it a gap: the "
          "proof does not show stability. Observation added here (not in the catalogue): non-negative minima are "
          "never strict because row rescaling A -> DA (D > 0 diagonal) keeps relu(DA) = D relu(A) and the COI "
          "(= rank for the stable ones); together with Prop 3 this leaves A = 0 (COI 0, a strict global minimum, "
          "stable) as the only strict local minimum, so the printed sentence is vacuously true.",
    catalogue="jacot §2.3 P3; §4 E19",
    covers=("E19",),
)


def _row_scaling(A, seed, ts=(1e-3, 1e-2, 1e-1)):
    rng = np.random.default_rng(seed + 3)
    d = rng.uniform(-1, 1, A.shape[0])
    c0 = leaky.coi(A)
    out = []
    for t in ts:
        At = (1 + t * d)[:, None] * A
        out.append((float(np.linalg.norm(At - A)), leaky.coi(At) - c0))
    return out, coi_tol(A) * max(c0, 1.0) * 2


@e19.numeric
def _(p):
    """Non-trivial constant-COI paths through a negative A-hat (Prop 3) and through a non-negative minimum (row scaling);
    A = 0 is strict (every small perturbation has COI > 0)."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    if p.w3 <= p.N3 * (p.N3 + 1):
        return inconclusive("Prop 3 needs w3 > N3(N3 + 1)")
    rng = np.random.default_rng(p.seed)
    Ah = rng.standard_normal((p.w3, p.N3))
    a, *_ = caratheodory(Ah)
    if a is None:
        return inconclusive("the LP solver failed")
    c0 = leaky.coi(Ah)
    tol_h = coi_tol(Ah) * max(c0, 1.0) * 2
    neg = [(float(np.linalg.norm(coi_path(Ah, a, t) - Ah)), leaky.coi(coi_path(Ah, a, t)) - c0) for t in (1e-3, 1e-2, 1e-1)]
    pos, tol_p = _row_scaling(A, p.seed)
    zero = min(leaky.coi(1e-3 * rng.standard_normal((p.w, p.N))) for _ in range(20))
    return Outcome.from_parts({
        "Prop 3 path: constant COI": (max(abs(c) for _, c in neg), tol_h),
        "Prop 3 path: moves": (0.0 if min(m for m, _ in neg) > 0 else 1.0, 0.0),
        "row scaling: constant COI": (max(abs(c) for _, c in pos), tol_p),
        "row scaling: moves": (0.0 if min(m for m, _ in pos) > 0 else 1.0, 0.0),
        "A = 0 strict": (0.0 if zero > 0 else 1.0, 0.0)},
        message=f"constant-COI paths leave A-hat (moves {neg[0][0]:.1e}) and the non-negative minimum "
                f"(moves {pos[0][0]:.1e}); min COI near 0: {zero:.3g}",
        values={"prop3_path": neg, "row_scaling": pos, "min_coi_near_zero": zero})


e19.property(over=("w", "N", "k", "seed"), max_examples=6)


@e19.falsifier("nonneg_minima_strict")
def _(p):
    """The nearest wrong variant 'non-negative stable minima are strict': row scaling keeps the COI, so they are not."""
    A = _stable_A(p)
    if A is None:
        return inconclusive("1 lies in Im A^T: not a stable minimum")
    pos, tol_p = _row_scaling(A, p.seed)
    # strictness needs COI(A_t) > COI(A) beyond rounding for every A_t != A: residual = tol - min increase
    inc = min(c for _, c in pos)
    return Outcome(residual=max(0.0, tol_p - inc), tolerance=0.0, values={"row_scaling": pos, "tol": tol_p},
                   message=f"smallest COI increase along row scaling {inc:.1e} (strictness needs > {tol_p:.1e})")
