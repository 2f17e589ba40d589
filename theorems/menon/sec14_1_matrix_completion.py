"""Menon §14.1 (seed lines 1024-1046): d = 2 matrix completion, the clustering of the end-to-end limits.

Conventions and the entropy normalisation: see ``theorems/menon/_rle.py``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from numba import njit

from solvers import rk
from solvers.specialise import register
from theorems.claim import Claim, Outcome, Param, inconclusive

from ._common import rng_for


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
            res = rk.solve_dopri5(_mc_rhs, t, y, t + h, (float(N),), rtol=1e-10, atol=1e-14, max_steps=10_000_000)
            if not res.success:
                raise RuntimeError(res.message)
            y = res.y
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
