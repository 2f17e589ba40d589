"""§3.1 Separation of Timescales, the last paragraph (seed l.221; catalogue BN2, R3 with a k = 3 teacher): distinct
sequences of minima with different Bottleneck ranks.  Claim: ``jacot.bottleneck_rank_variability``.

EMPIRICAL claim: the check trains discretised leaky ResNets along several paths with the helpers of
``theorems.jacot._training`` (the same task, objective, hypotheses and declared ranges as ``sec3_1c_bottleneck``).
"""

from __future__ import annotations

from solvers import leaky_net as ln
from theorems.claim import Claim, inconclusive, Outcome, Param
from theorems.jacot._training import (_fit, _init, _measure, _MEMO, _not_a_minimum, _params, _r3_table, _schedule,
                                      STAT_MAX, _sweep, _validate)


# ---------------------------------------------------------------------------
# BN2: distinct minima with different bottleneck ranks
variability = Claim(
    id="jacot.bottleneck_rank_variability",
    title="Minima with different bottleneck ranks exist for the same task; the kept dimension varies by 1-2",
    label="BN2",
    section="3.1",
    equation="l.221",
    lines=(221, 221),
    statement=r"\text{distinct sequences of local minima }A^{\tilde L}\text{ with different Bottleneck ranks exist; the kept "
              r"dimension can differ by }1\text{--}2",
    status="empirical",
    params=[q for q in _params(Lt_low=8.0) if q.name != "k"]
    + [Param.int("k", 2, 2, 3, "inner dimension k* of the teacher (>= 2: a rank-1 teacher has no non-trivial lower "
                 "rank to settle on; all runs of 7 rank-1 sweep draws found rank 1, a search without a witness)"),
       Param.int("runs", 2, 1, 3, "extra training paths 2Lt/3 -> Lt (init seeds "
                                                       "seed+1..seed+runs; up to 3 more while fewer converge or "
                                                       "all share one rank)")],
    validate=_validate,
    notes="Hypothesis (the statements are about minima): an end point with stationarity |grad L|/(|grad C| + |grad R|) > 0.5 or one collapsed to W = 0 (train MSE >= 0.9) is inconclusive with the reason. "
          "Same data and objective at the same Lt, different training paths: the continuation 1, 2, 4, ..., Lt of "
          "jacot.bottleneck_structure and, for seeds seed+1..seed+runs, initialisation W = (2Lt/3)[I, 0] + 0.1 N(0, 1) "
          "trained at 2Lt/3 then at Lt. The Bottleneck ranks round(min_p COI_gamma) differ between runs and all lie within "
          "k* +- 2 (the paper's 'can vary by 1-2'). Runs that collapse to W = 0 (direct training at Lt = 12 with L = 32 "
          "does: the leak (1 - Lt/L)^L ~ 3e-7 kills the signal) are the trivial minimum and are not counted. "
          "At the defaults: ranks [2, 1, 1], objectives 0.2270 (continuation, rank 2) vs 0.2377 and 0.2497 (rank 1): "
          "distinct end points of similar cost, the continuation reaching the lowest. The end points are L-BFGS "
          "terminations after `iters` iterations, not certified local minima (stationarity is not reachable at "
          "ReLU kinks, catalogue H2). Observed while writing this: the path is chaotic -- rescaling the initial "
          "weights by 2W instead of (12W)/6 (one ulp) turned a rank-1 end point into a rank-2 one. "
          "The statement is a conjunction, checked where each part can be decided (session 10). EXISTENCE ('distinct "
          "sequences of minima with different ranks exist') is proved by one witness: the reproduction `witness` "
          "requires two converged non-trivial end points of different Bottleneck rank at the defaults (ranks [2, 1, 1]). "
          "The BOUND ('the kept dimension can vary by 1-2': every converged end point's rank within k* +- 2) is "
          "universal, so the numeric check judges it on every draw, with at least one converged end point, and "
          "reports whether the draw also holds a witness (values['witness']). Before, a draw certified only with a "
          "witness, so draws whose runs all settled on one rank were inconclusive: 13/20 on fresh sweep 4100702, "
          "10-13/20 on 880011 and 990022, above the 20% bar by construction (an existence claim is not a property of "
          "every draw). Tried for per-draw witnesses and not adopted: 4 continuations 1, 2, 4, 8, ..., Lt from "
          "different init seeds per draw converge reliably but reached one rank in 7 of 8 draws; restarting from the "
          "continuation's end point with its weights truncated to rank r - 1 (or noised) gave rank-1 end points at "
          "stationarity 0.54-0.87 (> 0.5: not accepted as minima). The rank a task settles on is robust to the "
          "initialisation in most draws of the declared ranges. The falsifier always_k_star (no variability) is "
          "refuted at the defaults by the same witness.",
    catalogue="jacot §2.5 BN2; §3 R3 (k = 3 teacher)",
    covers=("BN2", "R3"),
)


def _objective(X, Y, W, Lt, lam):
    rho = ln.equidistant(W.shape[0])
    return ln.loss(X, Y, W, rho, Lt, lam)


#: extra training paths tried beyond ``runs`` when paths end non-stationary or all converged ones share one rank
EXTRA_PATHS = 3


def _variability_runs(p):
    """The continuation's end point and the 2Lt/3 -> Lt paths from init seeds seed+1, seed+2, ...: ``runs`` of them,
    and up to EXTRA_PATHS more while fewer than ``runs`` extra paths ended at converged non-trivial minima or all
    converged end points share one Bottleneck rank (a search for a witness of an existence claim, bounded; sweep
    880011: 9 of 13 inconclusive draws had fewer than two converged paths, mostly with runs = 1)."""
    X, Y, sweep = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    out = [(sweep[-1][1], _objective(X, Y, sweep[-1][2], p.Lt, p.lam))]
    for s in range(1, p.runs + EXTRA_PATHS + 1):
        if s > p.runs:
            extra_ok = len(_minima(out[1:], p.iters))
            ranks = {int(round(m["coi_min"])) for m, _ in _minima(out, p.iters)}
            if extra_ok >= p.runs and len(ranks) >= 2:
                break
        key = ("jump", p.w, p.N, p.L, p.k, p.Lt, p.lam, p.iters, s, p.seed)
        if key not in _MEMO:
            Lt0 = 2 * p.Lt / 3
            W, _, _ = _fit(X, Y, Lt0, p.L, p.lam, p.iters, W0=_init(p.w, p.L, Lt0, p.seed + s))
            W, rho, val = _fit(X, Y, p.Lt, p.L, p.lam, p.iters, W0=W * p.Lt / Lt0)
            _MEMO[key] = (_measure(X, Y, W, rho, p.Lt, p.lam), val)
        out.append(_MEMO[key])
    return out


def _minima(res, iters):
    """The runs (measure, objective) whose end points are converged non-trivial minima (_not_a_minimum)."""
    return [(m, v) for m, v in res if _not_a_minimum([(0.0, m)], iters) is None]


@variability.numeric
def _(p):
    """Bottleneck ranks over several training paths: every converged end point's within k* +- 2 (the universal part);
    whether the draw also holds a witness of distinct ranks is reported (existence: reproduction `witness`)."""
    res = _variability_runs(p)
    # A run that collapsed to W = 0 (output the constant mean, train MSE ~ 1 = C(0) on normalised targets) is the
    # trivial minimum A = 0 (L8), not a bottleneck; a run whose end point is not stationary (STAT_MAX) is not a
    # minimum: both reported, not counted.
    kept = _minima(res, p.iters)
    # Bottleneck rank of a run: the integer nearest to min_p COI_gamma (P5b: the COI of the bottleneck is k*);
    # the count of large singular values is reported too but is threshold-sensitive (a third value drifts
    # through 0.1 s_max between runs of the same COI-rank 2).
    ranks = [int(round(m["coi_min"])) for m, _ in kept]
    if not kept:
        return inconclusive(f"no converged non-trivial minimum ({len(res)} runs collapsed to W = 0 or not converged: "
                            f"stationarity > {STAT_MAX}; raise iters)",
                            objective=[v for _, v in res], stationarity=[m["stat"] for m, _ in res],
                            train_mse=[m["mse"] for m, _ in res])
    # the universal part, judged on every draw: "vary by 1-2", |rank - k*| <= 2 for every converged end point.
    # The existence part needs a witness (>= 2 distinct ranks among converged runs): reported here, required by the
    # reproduction `witness` at the defaults (one witness proves an existence statement; a draw without one is no
    # evidence against it).
    witness = len(kept) >= 2 and len(set(ranks)) >= 2
    parts = {"|rank - k*| <= 2": (float(max(abs(r - p.k) for r in ranks)), 2.0)}
    return Outcome.from_parts(parts, message=f"ranks {ranks} (k* = {p.k}; first: continuation from Lt = 1, then "
                              f"2Lt/3 -> Lt from other initialisations), objectives {[round(v, 4) for _, v in kept]}; "
                              + ("a witness of distinct ranks" if witness else "no witness of distinct ranks on this "
                                 "draw (existence: reproduction `witness`)"),
                              values={"ranks": ranks, "objective": [v for _, v in kept], "witness": witness,
                                      "sv_count_mid": [m["rank"] for m, _ in kept],
                                      "collapsed_or_unconverged_runs": len(res) - len(kept),
                                      "stationarity": [m["stat"] for m, _ in kept],
                                      "min_coi_gamma": [m["coi_min"] for m, _ in kept],
                                      "minus2H_over_Lt_mid": [m["H_mid"] for m, _ in kept],
                                      "train_mse": [m["mse"] for m, _ in kept],
                                      "sv_mid": [[round(float(s), 3) for s in m["sv_mid"][:5]] for m, _ in kept]})


@variability.reproduction(name="witness")
def _(p):
    """Existence, by a witness: at the defaults (w = 8, N = 32, L = 32, k* = 2, Lt = 12, lam = 0.01), the
    continuation and the 2Lt/3 -> Lt paths end at converged non-trivial minima of different Bottleneck ranks, all
    within k* +- 2 (measured: ranks [2, 1, 1], objectives 0.2270, 0.2377, 0.2497)."""
    p = variability.resolve({})
    kept = _minima(_variability_runs(p), p.iters)
    ranks = [int(round(m["coi_min"])) for m, _ in kept]
    parts = {"converged non-trivial minima >= 2": (max(0.0, 2.0 - len(kept)), 0.0),
             "distinct Bottleneck ranks >= 2": (0.0 if len(set(ranks)) >= 2 else 1.0, 0.0),
             "|rank - k*| <= 2": (float(max((abs(r - p.k) for r in ranks), default=0.0)), 2.0)}
    return Outcome.from_parts(parts, message=f"ranks {ranks} at the defaults (k* = {p.k})",
                              values={"ranks": ranks, "objective": [v for _, v in kept],
                                      "stationarity": [m["stat"] for m, _ in kept]})


@variability.falsifier("always_k_star")
def _(p):
    """The kept dimension is always the teacher's k* (no variability): refuted by the rank-1 end points."""
    res = _minima(_variability_runs(p), p.iters)
    if not res:
        return inconclusive(f"no run ended at a converged non-trivial minimum (stationarity > {STAT_MAX} or W = 0)")
    ranks = [int(round(m["coi_min"])) for m, _ in res]
    return Outcome(residual=float(max(abs(r - p.k) for r in ranks)), tolerance=0.0, values={"ranks": ranks},
                   message=f"ranks {ranks} vs k* = {p.k}")


@variability.reproduction(name="R3_k3", slow=True)
def _(p):
    """Catalogue R3, k = 3 teacher (w = 10, N = 40, L = 40, lam = 0.01, continuation to 16; 5000 L-BFGS per Lt where
    the catalogue ran 20000):
    quoted min COI_gamma 17.3, 12.9, 7.35, 2.16, 1.99, 1.91 for Lt = 1, 2, 4, 8, 12, 16 and a rank-2 bottleneck
    (middle spectrum 16.8, 14.8, 0.49, ...) at Lt = 12, i.e. one below k* = 3.  Compared: min COI at the largest
    Lt within 0.25 of an integer k_b, and |k_b - 3| <= 2 (BN2); whether k_b = 2 as quoted is reported."""
    runs = _r3_table(3, [1.0, 2.0, 4.0, 8.0, 12.0, 16.0], 5000)
    cm = [r[1]["coi_min"] for r in runs]
    kb = int(round(cm[-1]))
    # min COI within 0.25 of its integer (catalogue: 1.91 at Lt = 16, i.e. 0.09 off; 0.25 allows the unrecorded
    # teacher draw), monotone decrease in Lt up to 5% (the slack of jacot.bottleneck_hamiltonian_trend), |k_b - 3| <= 2
    fall = max([0.0] + [cm[i + 1] / cm[i] - 1 for i in range(len(cm) - 1)])
    parts = {"min COI within 0.25 of an integer": (abs(cm[-1] - kb), 0.25), "|k_b - 3| <= 2": (abs(kb - 3), 2.0),
             "min COI non-increasing (slack 5%)": (fall, 0.05)}
    return Outcome.from_parts(parts, message=f"k = 3 teacher: min COI {[round(c, 2) for c in cm]} (quoted 17.3, 12.9, "
                              f"7.35, 2.16, 1.99, 1.91); bottleneck rank {kb} (quoted 2)",
                              values={"min_coi_gamma": cm, "k_b": kb, "quoted_k_b": 2,
                                      "rank_mid": [r[1]["rank"] for r in runs],
                                      "sv_mid_last": [round(float(s), 3) for s in runs[-1][1]["sv_mid"][:5]]})
