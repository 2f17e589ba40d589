"""App. A.1 Cost of Identity, proofs (seed l.284-347): the bound in Prop 6 = Prop 2's proof (l.312-330,
E5), its limit (l.332-338, E6) and Prop 7's non-negativity criterion (l.344-346, E18).  Claims:
``jacot.erratum_prop6_bound``, ``jacot.erratum_prop6_limit``, ``jacot.erratum_prop7_nonneg_criterion``.

Each erratum is encoded twice: the printed form is the falsifier ``stated`` (refuted on the shown
instance), the corrected form the numeric check (certified), plus SymPy where the catalogue gives algebra.
"""

from __future__ import annotations


import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, inconclusive, Outcome, Param
from theorems.jacot._shared import _stable_A, _stable_params

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


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
    x = float(xp.sum(Kp @ xp.ones((A.shape[1],), dtype=xp.float64)))  # 1^T K^+ 1 (sec2_3c_coi_minima.kplus_ones)
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
