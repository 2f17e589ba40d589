"""§2.3 Cost of Identity, last part (seed l.140-142): the Fig. 1 caption's COI square (l.140, E15),
the wording about non-negative minima (l.142, E12) and noisy GD escaping negative minima (l.142).  Claims:
``jacot.erratum_fig1_coi_square``, ``jacot.erratum_nonneg_wording``,
``jacot.noisy_gd_escapes_negative_minima``.
"""

from __future__ import annotations


import numpy as np

from solvers import xp_jacot as X
from solvers.xp import on, xp_of
from theorems.claim import Claim, inconclusive, Outcome, Param
from theorems.jacot._shared import _remark, _stable_A, _stable_params, caratheodory, coi_path, escape_search


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
        Param.int("w3", 15, 13, 40, "neurons of the negative A-hat (from 13, above 3 x 4 = 12: every draw meets Prop 3's "
                  "hypothesis)"),
    ],
    notes="E12 (wording). Escape family tried at a point A: scaling A by (1 - d), appending a row d z with z a column "
          "of Kbar (the proof's direction) or a random vector, and random perturbations of A, for d in {1e-1, 1e-2, "
          "1e-3}. 'Escape' = a COI decrease beyond the rounding tolerance of solvers.leaky.coi. Declared range narrowed "
          "(session 9): w3 from 13 (was 7), above N3(N3 + 1) <= 12, so every draw meets Prop 3's hypothesis.",
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
