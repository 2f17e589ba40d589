"""§3.1 Separation of Timescales, first part (seed l.172-184): eq. (2), kinetic + potential energies
(l.172-178), the B_p formula's transpose (l.174-176, E10), the sign of the gamma-potential (l.180-188, E11)
and the Theorem 4 identity (l.182-184).  Claims: ``jacot.hamiltonian_energies``,
``jacot.erratum_momentum_transpose``, ``jacot.erratum_gamma_potential_sign``, ``jacot.theorem4_identity``.

Shot geodesics from ``theorems.jacot._shooting`` and ``theorems.jacot._theorem4_paths``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import on, xp_of
from theorems.claim import Claim, inconclusive, Outcome, Param
from theorems.jacot import _theorem4_paths as _t4
from theorems.jacot._shooting import _initial, _params, _sym_H, _t4_matrices

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


# ---------------------------------------------------------------------------
# eq. (2): H = kinetic + potential when the image condition holds (T0, T0b)
energies = Claim(
    id="jacot.hamiltonian_energies",
    title="Under the image condition H is kinetic plus potential energy, eq. (2)",
    label="eq. (2)",
    section="3.1",
    equation="(2)",
    lines=(172, 178),
    statement=r"\mathrm{Im}A_p^T\subset\mathrm{Im}\,\sigma(A_p)^T\Rightarrow\ \mathcal H="
              r"\tfrac1{2\tilde L}\|\partial_pA_p\|_{K_p}^2-\tfrac{\tilde L}2\|A_p\|_{K_p}^2,\quad "
              r"\|\partial_pA_p\|_{K_p}=\tilde L\sqrt{\|A_p\|_{K_p}^2+\tfrac2{\tilde L}\mathcal H}",
    status="holds",
    params=_params(w=12, N=5, Lt=1.0, search_w=(5, 12), search_N=(2, 5)),
    notes="Checked at the points of a shot geodesic where the image condition holds (solvers.leaky."
          "image_condition) and K_p is well conditioned on its range (kept cond < 1e8); elsewhere both energies are "
          "infinite (the paper's remark l.180) and the point is skipped. For N > w + 1 (K singular, a Gaussian A_0 "
          "violates the condition everywhere: 9 of 20 sweep draws of seed 880011 were inconclusive) the path starts "
          "at A_0 = |G| >= 0, where sigma(A_0) = [A_0; 1] and the condition holds; a path that blows up (or passes "
          "20000 integrator steps) before p = 1 is compared at the output points reached before (formerly inconclusive). "
          "Error bound per point: 100 N eps cond(K) (|kin| + |pot| + |H|) + Lt |A| |B| r with r <= 1e-8 the accepted "
          "image-condition residual (kin + pot - H = Lt Tr[B (I - P) A^T] exactly). E10 (the transpose in B_p = Lt^-1 W_p "
          "(sigma(A_p)^+)^T) is recorded; the check uses B_p from the shooting, not the printed formula. The per-point bound is the normwise "
          "worst case; at the defaults the worst point uses 6.8e-5 of it (cond(K) up to 266): 1.5e4 x, the price "
          "of a bound valid at cond(K) near 1e8, where the points are still compared.",
    catalogue="jacot §2.5 T0, T0b; §4 E10, E11",
    covers=("T0", "T0b", "E11"),
)


def _energies_path(p):
    """States (A_p, B_p) of a geodesic on which the image condition can hold, and the end s of the p-range shot.

    * Start: eq. (2) is a pointwise statement under Im A_p^T in Im sigma(A_p)^T.  For N <= w + 1 a Gaussian A_0 gives
      an invertible K_0 = sigma(A_0)^T sigma(A_0) (rank w + 1 >= N), so the condition holds; for N > w + 1, K has rank
      <= w + 1 < N and a Gaussian A_0 violates it at every point (sweep 880011: 9 of 20 draws inconclusive).  There
      the start is A_0 = |G| (entrywise non-negative): sigma(A_0) = [A_0; 1] contains A_0's rows, so the condition
      holds at p = 0 and while A_p stays non-negative; B_0 is drawn as before.
    * Horizon: where the path blows up (|state| > 1e6) or exceeds 20000 integrator steps before p = 1, the states
      reached before (output points p = 0, 1/50, ..., s) are compared (solvers.leaky.shoot(partial=True))."""
    A0, B0 = _initial(p)
    if p.N > p.w + 1:
        A0 = np.abs(A0)
    backend = p.backend if p.backend in ("numpy", "numba") else "numpy"
    n_out = 50
    Y, steps = leaky.shoot(A0, B0, p.Lt, n_out=n_out, rtol=1e-11, atol=1e-12, backend=backend,
                           max_total_steps=20_000, partial=True)
    return Y, steps, (Y.shape[0] - 1) / n_out


def _energies_outcome(p, potential_sign=-1.0):
    """The path shot on the CPU (adaptive integrator, _energies_path); eq. (2) evaluated at its 51 points as one
    batch on the namespace of p.backend (K-norms by solvers.xp_jacot, as solvers.leaky)."""
    Y, steps, s = _energies_path(p)
    xp = xp_of(p)
    n = p.w * p.N
    A = on(xp, Y[:, :n].reshape(-1, p.w, p.N))
    B = on(xp, Y[:, n:2 * n].reshape(-1, p.w, p.N))
    K = X.gram(xp, A)
    c = X.kept_cond(xp, K)  # cond on the numerical range of K (K is singular for N > w + 1; K^+ acts there)
    res = X.image_residual(xp, A, K)
    use = (res <= leaky.IMAGE_RTOL) & (c <= 1e8)
    dA = p.Lt * (B @ K - A)
    kin = X.g_norm2(xp, dA, K) / (2 * p.Lt)
    pot = potential_sign * p.Lt / 2 * X.g_norm2(xp, A, K)
    H = X.hamiltonian(xp, A, B, p.Lt)
    zero = xp.zeros_like(H)
    kin, pot = xp.where(use, kin, zero), xp.where(use, pot, zero)  # skipped points: +inf energies, not compared
    # Error model, per point: (i) the pseudo-inverse solves on the kept spectrum of K lose cond(K) digits: relative
    # error <= c_n eps cond(K) with c_n = 100 N (eigh backward error and the two quadratic forms) on terms of size
    # |kin| + |pot| + |H|; (ii) the image condition is accepted up to a residual r = |(I - P) A^T| / |A| <= 1e-8
    # (solvers.leaky.IMAGE_RTOL), and with P the projector on Im K, exactly kin + pot - H = Lt Tr[B (I - P) A^T]
    # (expand |B K - A|_K^2 with K K^+ = P), bounded by Lt |B| |A| r.  Residual: the error over this bound.
    scale = xp.abs(kin) + xp.abs(pot) + xp.abs(H)
    nA = xp.sqrt(X.fro2(xp, A))
    nB = xp.sqrt(X.fro2(xp, B))
    bound = 100 * p.N * EPS * c * scale + p.Lt * nA * nB * res
    bound = xp.where(bound > 0, bound, xp.full_like(bound, 1e-300))
    ratio = xp.abs(kin + pot - H) / bound
    ratio = xp.where(use & ~xp.isnan(ratio), ratio, xp.zeros_like(ratio))  # skipped points (and NaN) count 0
    used = int(xp.sum(xp.astype(use, xp.int64)))
    if used == 0:
        return inconclusive("the image condition fails (or K is ill-conditioned on its range) at every point of the "
                            "path: both energies are infinite there")
    worst = float(xp.max(ratio))
    max_cond = float(xp.max(xp.where(use, c, xp.zeros_like(c))))
    return Outcome(residual=worst, tolerance=1.0, values={
        "points_used": used, "max_cond_K": max_cond, "steps": steps, "horizon": s,
        "nonneg_start": bool(p.N > p.w + 1)},
        message=f"max |kinetic + potential - H| / (its error bound) over {used} points of p in [0, {s:g}] with the "
                f"image condition")


@energies.numeric(backends=("numpy", "cupy"))
def _(p):
    """Kinetic + potential (K-norms through the pseudo-inverse) against H on a shot geodesic."""
    return _energies_outcome(p)


energies.property(over=("w", "N", "Lt", "seed", "B_scale"), max_examples=10)


@energies.falsifier("potential_sign_E11", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """The gamma-stable potential as printed at l.180 (E11: +Lt/2 |A|^2 instead of -Lt/2 |A|^2)."""
    return _energies_outcome(p, potential_sign=+1.0)


_EN_PATTERNS = [((1, 1), (1, 1)), ((1, -1), (-1, 1)), ((-1, -1), (1, -1))]


def _energies_symbolic(variant):
    """w = N = 2, three ReLU patterns: K = sigma^T sigma (bias row included) is invertible, so the image
    condition holds; A' = V a free matrix, B = (A + V/L) K^-1 (l.172).  Counts the patterns where
    H - (|V|_K^2/(2L) - L/2 |A|_K^2) or |V|_K^2 - L^2 (|A|_K^2 + 2H/L) does not cancel to 0."""
    bad = 0
    kin, pot = {"stated": (2, -1), "potential_sign_E11": (2, 1), "kinetic_factor": (1, -1)}[variant]
    for sg in _EN_PATTERNS:
        a, b, L, R, S, _, mask = _sym_H(2, 2, sg)
        V = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"v{i}{j}", real=True))
        K = S.T * S
        Ki = K.inv()
        B = (a + V / L) * Ki
        H = L / 2 * sum(e**2 for e in (B * S.T)) - L * (B * a.T).trace()
        nV, nA = (V * Ki * V.T).trace(), (a * Ki * a.T).trace()
        bad += sp.cancel(sp.together(H - (nV / (kin * L) + pot * L / 2 * nA))) != 0
        bad += sp.cancel(sp.together(nV - L**2 * (nA + pot * -2 * H / L))) != 0
    return bad


@energies.symbolic(timeout=60)
def _(p):
    """w = N = 2 on three ReLU patterns (K invertible): with B = (A + A'/L) K^-1, eq. (2) and the speed formula."""
    bad = _energies_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "eq. (2) and |A'|_K = L sqrt(|A|_K^2 + 2H/L) for w = N = 2, A' free, on three ReLU patterns"},
                   message="identities (two per pattern) that did not cancel")


@energies.mutant({"potential_sign_E11": "potential +L/2 |A|_K^2 (the sign printed at l.180, E11)",
                  "kinetic_factor": "kinetic |A'|_K^2 / L instead of / (2L)"}, timeout=60)
def _(p, variant):
    """Eq. (2) perturbed, through the same procedure: must not cancel to 0."""
    bad = _energies_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"identities_nonzero": bad},
                   message=f"{variant}: {bad} identities did not cancel")


# ---------------------------------------------------------------------------
# Theorem 4, identity (T4a): holds for ANY (A, B) with A' := Lt (B K - A)
thm4 = Claim(
    id="jacot.theorem4_identity",
    title="Theorem 4's gamma-identity for the Hamiltonian",
    label="Thm 4",
    section="3.1",
    equation="Thm 4 (first display)",
    lines=(182, 184),
    statement=r"\mathcal H=\tfrac1{2\tilde L}\|\partial_pA_p+\gamma\tilde LB_p\|^2_{(K_p+\gamma I)}"
              r"-\tfrac{\tilde L}2\|A_p\|^2_{(K_p+\gamma I)}-\gamma\tfrac{\tilde L}2\|B_p\|^2",
    status="holds",
    params=_params() + [Param.float("gamma", 0.1, 1e-12, 100.0, "regularisation gamma > 0"
                    " (>= 1e-12: below, numerically singular)",
                                    search=(1e-3, 10.0))],
    notes="Catalogue T4a: an algebraic identity for any (A, B) once A' := Lt (B K - A), since "
          "A'/Lt + gamma B = B (K + gamma I) - A; neither optimality nor the image condition is needed. "
          "Tolerance 50 N eps cond(K + gamma I) x the term sizes: the normwise worst case of the solves; at the "
          "defaults (cond 72) 3e4 x the residual (1e-14), as typical rounding stays near eps x the terms; the "
          "mutants (no_B_term, missing_L) are off by O(gamma |B|^2), far outside.",
    catalogue="jacot §2.5 T4a",
    covers=("T4a",),
)


def _thm4_outcome(p, drop_B_term=False):
    """One array-API path (p.backend): (A, B) drawn on the host; the solves with G = K + gamma I, H and cond(G) on xp."""
    xp = xp_of(p)
    A, B = on(xp, *_initial(p))
    K = X.gram(xp, A)
    G = K + p.gamma * xp.eye(p.N, dtype=xp.float64)
    dA = p.Lt * (B @ K - A)
    M = dA + p.gamma * p.Lt * B

    def q(Y):  # Tr[Y G^-1 Y^T]
        return float(xp.sum(Y * xp.matrix_transpose(xp.linalg.solve(G, xp.matrix_transpose(Y)))))
    t1 = q(M) / (2 * p.Lt)
    t2 = p.Lt / 2 * q(A)
    t3 = 0.0 if drop_B_term else p.gamma * p.Lt / 2 * float(X.fro2(xp, B))
    H = float(X.hamiltonian(xp, A, B, p.Lt))
    sv = X.svdvals(xp, G)
    c = float(sv[0] / sv[-1])  # numpy.linalg.cond (2-norm)
    scale = abs(t1) + abs(t2) + abs(t3) + abs(H)
    # Error model: two solves with G (relative error ~ N eps cond(G)) on terms of size `scale`.
    tol = 50 * p.N * EPS * c * scale
    return Outcome(residual=abs(t1 - t2 - t3 - H), tolerance=tol, values={
        "H": H, "rhs": t1 - t2 - t3, "cond": c}, message="|right side of Thm 4 - H| for random (A, B)")


@thm4.numeric(backends=("numpy", "cupy"))
def _(p):
    """Evaluate both sides at a random (A, B) with A' from Hamilton's first equation."""
    return _thm4_outcome(p)


thm4.property(over=("w", "N", "Lt", "seed", "B_scale", "gamma"), max_examples=25)


@thm4.falsifier("no_B_term", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """Drop the -gamma Lt/2 |B|^2 term."""
    return _thm4_outcome(p, drop_B_term=True)


def _thm4_symbolic(variant):
    """w = N = 2, K a free symmetric matrix (the identity never uses K's form), A, B free, A' = L(BK - A):
    the printed right side of Thm 4 minus H = L/2 Tr[B K B^T] - L Tr[B A^T], cancelled."""
    L, g, a, b, K, Gi, dA, H, _ = _t4_matrices()
    M = dA + (g * b if variant == "missing_L" else g * L * b)
    last = 0 if variant == "no_B_term" else g * L / 2 * sum(e**2 for e in b)
    rhs = (M * Gi * M.T).trace() / (2 * L) - L / 2 * (a * Gi * a.T).trace() - last
    return int(sp.cancel(sp.together(rhs - H)) != 0)


@thm4.symbolic(timeout=60)
def _(p):
    """Matrix identity (w = N = 2, K free symmetric, K + gamma I invertible) with A' = L(BK - A)."""
    bad = _thm4_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "Thm 4's identity for 2x2 A, B and a free symmetric K (so for every K = sigma^T sigma)"},
                   message="identity failed")


@thm4.mutant({"no_B_term": "the -gamma L/2 |B|^2 term dropped",
              "missing_L": "A' + gamma B instead of A' + gamma L B in the kinetic term"}, timeout=60)
def _(p, variant):
    """Thm 4 perturbed, through the same procedure: must not cancel to 0."""
    bad = _thm4_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero": bad},
                   message=f"{variant}: right side - H did not cancel")


# ---------------------------------------------------------------------------
# E10: B_p = Lt^-1 W_p (sigma(A_p)^+)^T, not Lt^-1 W_p sigma(A_p)^+
transpose = Claim(
    id="jacot.erratum_momentum_transpose",
    title="The momentum from the weights: B_p = Lt^-1 W_p (sigma(A_p)^+)^T (the transpose is missing in print)",
    label="l.174 (E10)",
    section="3.1",
    equation="l.174",
    lines=(174, 176),
    statement=r"B_p=\tilde L^{-1}W_p\sigma(A_p)^{+}=(A_p+\tilde L^{-1}\partial_pA_p)K_p^+",
    status="erratum",
    corrected=r"B_p=\tilde L^{-1}W_p(\sigma(A_p)^{+})^T=(A_p+\tilde L^{-1}\partial_pA_p)K_p^+\quad"
              r"(W_p=\tilde LB_p\sigma(A_p)^T,\ \mathrm{Im}B_p^T\subseteq\mathrm{Im}K_p)",
    params=[
        Param.int("w", 6, 1, 32, "width (rows of A, B)", search=(1, 8)),
        Param.int("N", 5, 1, 32, "data points (columns of A, B)", search=(1, 8)),
        Param.float("Lt", 3.0, 1e-6, 50.0, "effective depth Lt"
                    " (>= 1e-6: below, not resolved in double precision)", search=(0.1, 10.0)),
        Param.seed("seed of (A, B)"),
    ],
    notes="E10: W_p is w x (w+1) and sigma(A_p)^+ is N x (w+1), so the printed product is not even defined "
          "unless N = w + 1, and then it is the wrong matrix. The instance: random A; B with rows in Im K "
          "(B = G sigma^+ sigma, which is what the image condition of l.174 gives on a geodesic); "
          "W = Lt B sigma(A)^T (H2); A' = Lt (B K - A) (H3). The second printed expression is correct.",
    catalogue="jacot §2.5 T0; §4 E10",
    covers=("E10", "T0"),
)


def _transpose_data(p):
    """One array-API path (p.backend); A and the Gaussian G of B = G sigma^+ sigma drawn on the host."""
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    A = on(xp, rng.standard_normal((p.w, p.N)))
    S = X.sigma(xp, A)
    Sp = X.pinv(xp, S)
    B = on(xp, rng.standard_normal((p.w, p.N))) @ Sp @ S  # rows in Im sigma(A)^T = Im K
    W = p.Lt * B @ xp.matrix_transpose(S)
    K = xp.matrix_transpose(S) @ S
    dA = p.Lt * (B @ K - A)
    return xp, A, B, S, Sp, W, K, dA


@transpose.numeric(backends=("numpy", "cupy"))
def _(p):
    """Lt^-1 W (sigma^+)^T and (A + A'/Lt) K^+ against B."""
    xp, A, B, S, Sp, W, K, dA = _transpose_data(p)
    c = float(X.kept_cond(xp, S))
    scale = float(X.fro(xp, B)) + EPS
    # Error model: pinv of sigma has relative error ~ max(w+1, N) eps cond(sigma); K^+ = pinv(sigma^T sigma)
    # squares the condition number. Products of O(1) many such factors: constant 100.
    n = max(p.w + 1, p.N)
    r1 = float(X.fro(xp, W @ xp.matrix_transpose(Sp) / p.Lt - B))
    r2 = float(X.fro(xp, (A + dA / p.Lt) @ X.pinv(xp, K) - B))
    return Outcome.from_parts({"Lt^-1 W (sigma^+)^T = B": (r1, 100 * n * EPS * c * scale),
                               "(A + A'/Lt) K^+ = B": (r2, 100 * n * EPS * c**2 * scale)},
                              message="corrected momentum formulas", values={"cond_sigma": c})


transpose.property(over=("w", "N", "Lt", "seed"), max_examples=15)


@transpose.falsifier("stated", search=("seed", "w"), fixed={"w": 4, "N": 5}, backends=("numpy", "cupy"))
def _(p):
    """The printed Lt^-1 W sigma(A)^+ (defined only for N = w + 1; otherwise not conformable)."""
    xp, A, B, S, Sp, W, K, dA = _transpose_data(p)
    if W.shape[1] != Sp.shape[0]:
        return Outcome(residual=float("inf"), tolerance=0.0, values={"W": list(W.shape), "sigma_pinv": list(Sp.shape)},
                       message=f"W {tuple(W.shape)} times sigma(A)^+ {tuple(Sp.shape)}: not conformable (needs N = w + 1)")
    c = float(X.kept_cond(xp, S))
    r = float(X.fro(xp, W @ Sp / p.Lt - B))
    tol = 100 * max(p.w + 1, p.N) * EPS * c * (float(X.fro(xp, B)) + EPS)
    return Outcome(residual=r, tolerance=tol, values={"cond_sigma": c},
                   message=f"|Lt^-1 W sigma^+ - B| = {r:.3g} (N = w + 1 so the product is defined)")


# ---------------------------------------------------------------------------
# E11: the gamma-stable potential energy is -Lt/2 |A|^2_{K+gI}
potsign = Claim(
    id="jacot.erratum_gamma_potential_sign",
    title="The gamma-stable potential energy is -Lt/2 |A_p|^2_{K_p+gI} (sign lost in print)",
    label="l.180 (E11)",
    section="3.1",
    equation="l.180",
    lines=(180, 188),
    statement=r"\mathcal H_{\gamma,p}=\tfrac1{2\tilde L}\|\partial_pA_p\|^2_{K_p+\gamma I}+\tfrac{\tilde L}2\|A_p\|^2_{K_p+\gamma I}"
              r"\ \text{ satisfies (3)}",
    status="erratum",
    corrected=r"\mathcal H_{\gamma,p}=\tfrac1{2\tilde L}\|\partial_pA_p\|^2_{K_p+\gamma I}-\tfrac{\tilde L}2\|A_p\|^2_{K_p+\gamma I}"
              r"\ \text{ satisfies (3)}",
    params=_t4._params(),
    notes="E11. The sum of the two printed gamma-stable energies must be the H_gamma of eq. (3) (l.186, used at "
          "l.378). Tested through eq. (3) pointwise on a shot geodesic with c = |B_p| (the error model of "
          "_theorem4_paths._bound_outcome: rtol 1e-9 vs 1e-11 paths plus solve rounding). With the printed sign the "
          "gap to H is Lt |A|^2_G, far outside the bound. Same check as jacot.theorem4_hamiltonian_gap, here "
          "as the erratum's own two-way encoding.",
    catalogue="jacot §2.5 T0c; §4 E11",
    covers=("E11", "T0c"),
)


def _potsign_excess(p, printed=False):
    base = _t4._eq3_excess(p)

    def f(q, H):
        if not printed:
            return base(q, H)
        q2 = dict(q)
        q2["Hg"] = q["Hg"] + p.Lt * q["coi"]  # -Lt/2 coi -> +Lt/2 coi
        return base(q2, H)
    return f


@potsign.numeric
@_t4._reached
def _(p):
    """Eq. (3) with H_gamma = kinetic_gamma - Lt/2 COI_gamma at 51 points of a shot geodesic."""
    return _t4._bound_outcome(p, _potsign_excess(p), "eq. (3) with the corrected potential sign")


potsign.property(over=("w", "N", "Lt", "seed", "B_scale", "gamma"), max_examples=6)


@potsign.falsifier("stated", search=("seed", "gamma"))
def _(p):
    """Eq. (3) with the printed potential +Lt/2 COI_gamma."""
    return _t4._bound_outcome(p, _potsign_excess(p, printed=True), "eq. (3) with the printed potential sign")
