"""§3.1 Separation of Timescales, the bottleneck experiments of Fig. 1 (seed l.217-219; catalogue BN1,
R3-R6).  Claims: ``jacot.bottleneck_structure``, ``jacot.bottleneck_hamiltonian_trend``,
``jacot.bottleneck_k5`` (registered without a check, see its notes).  The variability of the Bottleneck rank
(l.221, BN2) is ``sec3_1d_bottleneck_variability``.

EMPIRICAL claims: the checks train discretised leaky ResNets; the training and measurement helpers and their
thresholds are described in ``theorems.jacot._training``.
"""

from __future__ import annotations

import numpy as np

from theorems.claim import Claim, inconclusive, Outcome
from theorems.jacot._training import (_not_a_minimum, _params, _PARAMS, _r3_table, _schedule, _sweep,
                                      _validate)




def _layer_plots(m, Lt, L):
    layers = list(range(L + 1))
    return [
        {"kind": "semilogy", "x": layers, "series": {"COI_gamma(A_l)": m["coi"].tolist(),
                                                    "srank ||A||_*^2/||A||_F^2": m["srank"].tolist(),
                                                    "kinetic/Lt^2 (layer l+1)": m["kin"].tolist() + [None]},
         "xlabel": "layer l", "ylabel": "cost of identity / stable rank",
         "title": f"bottleneck structure, Lt = {Lt:g}: COI high at the ends, low in the middle"},
        {"kind": "line", "x": list(range(1, L + 1)), "series": {"-2H_l/Lt (discrete)": m["H"].tolist(),
                                                               "-2H_gamma,l/Lt": m["Hg"].tolist(),
                                                               "COI_gamma(A_(l-1))": np.minimum(m["coi"][:-1], 10.0).tolist(),
                                                               "#sv(W_l) > 0.1 max": [float(x) for x in m["rank_layers"]]},
         "xlabel": "layer l", "ylabel": "-2H/Lt, COI (clipped at 10), rank of W_l",
         "title": f"Hamiltonian across layers, Lt = {Lt:g}"},
    ]


# ---------------------------------------------------------------------------
# BN1 (iii)-(v), (vii): the per-layer structure at large Lt
structure = Claim(
    id="jacot.bottleneck_structure",
    title="Trained leaky ResNets at large Lt: low COI and few large singular values in the middle, "
          "fast high-COI layers at the ends, kinetic energy ~ extra COI, H nearly flat",
    label="Fig. 1, BN1 (iii)-(vii)",
    section="3.1",
    equation="l.140, l.219",
    lines=(219, 219),
    statement=r"\text{large }\tilde L:\ \|A_p\|^2_{K_p}\text{ and }\|\partial_pA_p\|^2\text{ large near }p=0,1,\ "
              r"\|A_p\|^2_{K_p}\to k^*,\ \|\partial_pA_p\|\to0\text{ inside the bottleneck};\ W_p\text{ has }k^*"
              r"\text{ large singular values there};\ \mathcal H\text{ varies much less than kinetic and potential energy}",
    status="empirical",
    params=_params(Lt_low=8.0),  # the claim is about large Lt (Lt = 1..4: no bottleneck, the falsifier)
    validate=_validate,
    notes="Hypothesis (the statements are about minima): an end point with stationarity |grad L|/(|grad C| + |grad R|) > 0.5 or one collapsed to W = 0 (train MSE >= 0.9) is inconclusive with the reason. "
          "Scaled-down Fig. 1 (catalogue R3: w = 10, N = 40, L = 40, k = 2; the paper trains adaptive nets, R3 and this "
          "module use equidistant steps). Default (ci) size w = 8, N = 32, L = 32, "
          "1000 L-BFGS iterations per Lt in the continuation 1, 2, 4, 8, 12 (beyond 8, steps of ratio <= 1.5). gamma_p = "
          "1e-3 ||K_p||_op (E2). The 'rank' is #{s > 0.1 s_max} of the median middle-third spectrum of W_l; it may "
          "exceed k* by one (the constant direction, catalogue R3: 3 large values for k = 2). k* is the Bottleneck "
          "rank of the end point, k_b = round(min COI_gamma) (l.217), required within the teacher's k +- 2 (BN2). "
          "Declared range narrowed (audit, sweep 880011): Lt/L <= 3/4 and k + 1 < w (see _validate). Discrete H is not flat in the first layers "
          "(rho Lt = 0.4 cannot resolve a jump of speed Lt sqrt(COI)): only the middle third is tested, on the gamma-stable "
          "-2H_gamma/Lt (session 9: the discrete -2H/Lt amplifies the leftover gradient by 1/lam and drifted by 15 over "
          "the middle layers of a sweep-4100418 draw whose H_gamma was flat to 0.3). Spectral gap measured after k_b or "
          "k_b + 1 values (session 9: at r = #{s > 0.1 s_max} it tied the gap to the threshold; sweep 4100417 draw 13).",
    catalogue="jacot §2.5 BN1; §3 R3",
    covers=("BN1", "R3"),
)


def _structure_outcome(p):
    _, _, runs = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    Lt, m, _ = runs[-1]
    why = _not_a_minimum([(Lt, m)], p.iters)
    if why:
        return inconclusive(why, train_mse=m["mse"], stationarity=m["stat"])
    L, mid = p.L, m["mid"]
    e = max(1, L // 6)                         # "near the ends": first and last sixth of the layers
    coi = m["coi"]
    coi_ends = min(float(coi[: e + 1].max()), float(coi[-e - 1:].max()))
    Hm = m["H"][mid]
    # H flatness is tested on the gamma-stable -2H_gamma/Lt (Thm 4, eq. (3): |H - H_gamma| <= O(sqrt(gamma))), as in
    # jacot.bottleneck_hamiltonian_trend: the discrete H uses B = -(1/lam) dC/dA, which amplifies the gradient left
    # at an L-BFGS end point by 1/lam.  Sweep 4100418 draw 6 (stationarity 0.43, lam = 0.013): discrete -2H/Lt drifted
    # -5.2 -> -17.9 through the middle layers (range 15.1 > 0.05 x COI range 193, refuted) while -2H_gamma/Lt stayed
    # in [2.42, 2.73]; at the defaults (stationarity 0.17) the two ranges are 0.18 and 0.06.  The discrete range is
    # reported (values).
    Hgm = m["Hg"][mid]
    coi_range = float(coi.max() - coi.min())
    kin_mid = float(np.median(m["kin"][mid]))
    kin_end = max(float(m["kin"][:e].max()), float(m["kin"][-e:].max()))
    neg_mid, neg_in = float(np.median(m["neg"][1:][mid])), float(m["neg"][0])
    # BN1 (vi) / T4g: kinetic/Lt^2 against the extra COI, COI_gamma(A_(l-1)) - min COI_gamma, over all layers
    xc, yk = coi[:-1] - coi.min(), m["kin"]
    slope = float(xc @ yk / (xc @ xc))
    corr = float(np.corrcoef(xc, yk)[0, 1])
    # Thresholds (loose, from the scale separation the paper predicts and the catalogue measured):
    #  * COI: middle median <= 1/2 of the largest COI in BOTH end sixths (catalogue R3: 1.8 vs 181 at the input;
    #    the output COI is smaller, ~4-12 here, so the factor 2 is the margin the output side allows);
    #  * W spectrum: at most k* + 1 large values (k* plus the constant direction, R3), with a gap
    #    s_(r+1)/s_r <= 0.2 at r = k_b or k_b + 1 (measured 0.02 in R3; see gap_at below);
    #  * kinetic energy: middle median <= 1% of its largest value in the end sixths (R3: 0.25 vs 181.5);
    #  * H: range of -2H_gamma,l/Lt over the middle third <= 5% of the range of COI_gamma over all layers
    #    (R3: [1.56, 1.81] against 181 -> 1.8, i.e. 0.14%) -- "varies significantly less", not "constant";
    #  * slow layers near non-negative: middle negative mass <= 1/4 of the input's (R3: 0.045 vs 0.71).
    # k* is the Bottleneck rank of the minimum (l.217: the integer min_p COI approaches), which BN2 lets differ from
    # the teacher's k by 1-2 (jacot.bottleneck_rank_variability): k_b = round(min COI_gamma), required within k +- 2,
    # and the middle spectrum is compared with k_b.  (Sweep 880011 draw 7: min COI 3.17, 4 large sv: a rank-3
    # bottleneck of a k = 2 teacher, formerly refuted against k + 1 = 3.)  The count of large singular values (W) and
    # min COI (representations) are independent measurements.
    kb = max(1, int(round(m["coi_min"])))
    # Spectral gap at the count the claim speaks of: k_b large values, or k_b + 1 with the constant direction (R3),
    # the two counts "large sv <= k_b + 1" admits.  It was measured at r = #{s > 0.1 s_max}, which ties the gap to
    # the threshold: sweep 4100417 draw 13 (w = 4, k_b = 1) had middle spectrum 17.3, 2.22, 0.665, 0.134 -- one large
    # value, the constant direction at 0.128 s_max just above the 0.1 threshold, so r = 2 and s_3/s_2 = 0.30 was
    # refuted while s_2/s_1 = 0.128 is the gap after the k_b = 1 large value.
    sv = m["sv_mid"]

    def gap_at(j):
        return float(sv[j] / sv[j - 1]) if 0 < j < len(sv) and sv[j - 1] > 0 else 0.0
    gap = min(gap_at(kb), gap_at(kb + 1))
    parts = {
        "COI_mid <= COI_ends/2": (m["coi_mid"], coi_ends / 2),
        "|k_b - k| <= 2 (BN2; k_b = round(min COI))": (float(abs(kb - p.k)), 2.0),
        "large sv in middle <= k_b+1": (float(m["rank"]), float(kb + 1)),
        "spectral gap min(s_(k_b+1)/s_k_b, s_(k_b+2)/s_(k_b+1)) <= 0.2": (gap, 0.2),
        "kinetic_mid <= 0.01 kinetic_ends": (kin_mid, 0.01 * kin_end),
        "range(-2H_gamma/Lt)_mid <= 0.05 range(COI)": (float(Hgm.max() - Hgm.min()), 0.05 * coi_range),
        "neg_mid <= neg_input/4": (neg_mid, neg_in / 4),
        #  * kinetic ~ extra COI (T4g: speed ~ Lt sqrt(COI - min COI)): least-squares slope through 0 within
        #    [0.75, 1.25] and correlation >= 0.95 (measured 1.02 and 0.9996 at the defaults; the slope is 1 exactly
        #    when H_gamma is constant over the layers and equal to -Lt/2 min COI, so the 25% covers the
        #    discretisation of the first layers)
        "|slope(kinetic/Lt^2 ~ extra COI) - 1| <= 0.25": (abs(slope - 1), 0.25),
        "1 - corr(kinetic, extra COI) <= 0.05": (1 - corr, 0.05),
    }
    vals = {"Lt": Lt, "k_b": kb, "train_mse": m["mse"], "stationarity": m["stat"], "coi_input": float(coi[0]),
            "coi_output": float(coi[-1]),
            "coi_mid_median": m["coi_mid"], "coi_min": m["coi_min"], "rank_mid": m["rank"],
            "sv_mid": [round(float(s), 4) for s in m["sv_mid"][:6]], "gap": gap, "gap_at_r": m["gap"],
            "minus2H_over_Lt_mid": [float(Hm.min()), float(np.median(Hm)), float(Hm.max())],
            "minus2Hgamma_over_Lt_mid": [float(Hgm.min()), float(np.median(Hgm)), float(Hgm.max())],
            "minus2Hgamma_over_Lt_mid_median": m["Hg_mid"], "kinetic_mid_median": kin_mid, "kinetic_end_max": kin_end,
            "neg_mid": neg_mid, "neg_input": neg_in, "kinetic_vs_extra_coi_slope": slope,
            "kinetic_vs_extra_coi_corr": corr, "rank_layers": m["rank_layers"]}
    pl = _layer_plots(m, Lt, L)
    vals["plot"], vals["plots"] = pl[0], pl[1:]
    return Outcome.from_parts(parts, message=f"Lt = {Lt:g}: COI input {coi[0]:.1f}, middle {m['coi_mid']:.2f}, output "
                              f"{coi[-1]:.2f}; {m['rank']} large sv; -2H/Lt middle in [{Hm.min():.2f}, {Hm.max():.2f}]",
                              values=vals)


@structure.numeric
def _(p):
    """Train with continuation up to Lt and test the per-layer bottleneck structure (loose thresholds)."""
    return _structure_outcome(p)


@structure.falsifier("small_effective_depth")
def _(p):
    """The same structure claimed at Lt = 1 (NeuralODE-like regime): no bottleneck, many large singular values.
    (Lt = 1 lies below the claim's declared range, large Lt >= 8: the falsifier overrides it.)"""
    return _structure_outcome(p.replace(Lt=1.0))


# ---------------------------------------------------------------------------
# BN1 (i), (ii): -2H/Lt rises to k* from below, min COI falls to k* from above
trend = Claim(
    id="jacot.bottleneck_hamiltonian_trend",
    title="As Lt grows, -2H/Lt rises toward the Bottleneck rank k* from below and min_p COI falls toward it from above",
    label="Fig. 1, BN1 (i)-(ii)",
    section="3.1",
    equation="l.140, l.217-219",
    lines=(217, 219),
    statement=r"-\tfrac2{\tilde L}\mathcal H\uparrow k^*,\qquad\min_p\|A_p\|^2_{K_p}\downarrow k^*\qquad(\tilde L\to\infty)",
    status="empirical",
    params=_PARAMS,
    validate=_validate,
    notes="Hypothesis (the statements are about minima): an end point with stationarity |grad L|/(|grad C| + |grad R|) > 0.5 or one collapsed to W = 0 (train MSE >= 0.9) is inconclusive with the reason. "
          "Medians of the discrete -2H_l/Lt and of -2H_gamma,l/Lt over the middle third of the layers (the first "
          "layers are not resolved, catalogue R3). Monotonicity is asserted with a slack (see the check), for "
          "-2H_gamma/Lt from the first Lt where the bottleneck has formed (min COI within 1 of the end point's rank: "
          "'approach k* from below' is about that regime; the fresh sweep 4100613 found an overshoot to 2.10 at Lt = 4, "
          "min COI 5.39, before 1.62 -> 1.83 at Lt = 8 -> 12.3, k_b = 2), closeness (judged where the end point's min "
          "COI is within 0.25 of its integer k_b, i.e. the Bottleneck rank has settled; 4100614 ended at 2.68) "
          "to k* only at the largest Lt >= 8 with the catalogue's +-0.5, on -2H_gamma/Lt and min COI: the discrete "
          "-2H/Lt uses B = -(1/lambda) dC/dA, a one-sided derivative at the ReLU kinks the end point sits on, and its "
          "median at Lt = 12 ranged 0.58-1.83 over rounding-level perturbations of the training (BLAS kernel, 2^-52 "
          "relative change of the start) against 1.79 +- 0.01 for -2H_gamma/Lt; the discrete value is tested for "
          "the rise (within its non-conservation over the middle layers) and for staying below min COI. The integer is the Bottleneck rank k_b of the end "
          "point (nearest integer to min COI_gamma), required within the teacher's k +- 2: BN2 lets the net settle "
          "on another rank (jacot.bottleneck_rank_variability; a sweep draw with k = 3 ended at -2H_gamma/Lt 1.94, min "
          "COI 2.12, a rank-2 minimum, which the teacher's k refuted); the reproductions compare with the teacher's k. "
          "Min COI's decrease is asserted from Lt = 2 on (a converged rise from Lt = 1 to 2 in a width-5 net, sweep 880011). "
          "A draw that would be refuted while its continuation jumped to a lower-rank minimum (an end point at Lt >= 4 "
          "within 0.25 of an integer r < w, the next below r - 1/2: two sequences of minima) is inconclusive; formerly "
          "every fall of min COI below the previous integer was gated, the claimed descent itself (sweep 880011: 8 "
          "of 20 draws). Continuation beyond Lt = 8 in steps of ratio <= 1.5; declared range narrowed to Lt/L <= 3/4 "
          "and k + 1 < w (see _validate). Related: jacot.bottleneck_rank_hamiltonian (P5b, registered without a check). "
          "R4 (Fig. 1 at k* = 5, width 30, N = 200, L = 50) is written (_r4_reproduction) but not registered: at the "
          "1000 iterations per Lt affordable here it did not converge (see the comment there).",
    catalogue="jacot §2.5 BN1, P5b; §3 R3, R4",
    covers=("BN1", "R3"),
)


def _trend_parts(runs, k, check_k=True, endpoint_rank=False):
    """``endpoint_rank``: compare -2H_gamma/Lt at the largest Lt with the Bottleneck rank k_b of the end point (the
    integer nearest min COI_gamma, an independent quantity), required within k +- 2 (BN2: minima of another rank
    exist, jacot.bottleneck_rank_variability), instead of with the teacher's k."""
    Lts = [r[0] for r in runs]
    H = [r[1]["H_mid"] for r in runs]
    Hg = [r[1]["Hg_mid"] for r in runs]
    cm = [r[1]["coi_min"] for r in runs]
    # Error model of the discrete -2H/Lt: its B_l = -(1/lambda) dC/dA_l is a one-sided derivative at the ReLU kinks
    # the L-BFGS end point sits on (catalogue H2, R3), so the end point's rounding (BLAS kernel, a 2^-52
    # perturbation of the start) moves the whole middle-third profile: at Lt = 12, 16 such perturbations gave
    # medians 0.58-1.83, profile ranges up to 1.3, while -2H_gamma/Lt (from the representations A_l only) stayed in
    # 1.786-1.798 and min COI in 2.019-2.034.  H is conserved along a critical path (the discrete H_l nearly so in
    # the slow middle layers, catalogue R3: [1.56, 1.81] there), so the half-range u of -2H_l/Lt over the middle
    # third measures how far the end point is from one; the discrete median is only known to +-u.
    u = [float(np.ptp(r[1]["H"][r[1]["mid"]])) / 2 for r in runs]
    # Slack model: each Lt is an approximate (1000-iteration) L-BFGS minimum, not the exact one; on repeated
    # runs the medians move by ~0.1 and min COI by a few percent, so monotonicity is asserted up to an
    # absolute 0.25 on -2H_gamma/Lt (plus u on the discrete -2H/Lt) and a relative 5% on min COI (the trends
    # themselves move by 2-50 per doubling at small Lt and ~0.1-0.5 at large Lt).
    # The same holds for -2H_gamma,l/Lt: it is conserved along a critical path only up to Thm 4's eq. (3) (gamma c
    # terms), so its middle-third half-range ug bounds how well the median estimates the path's value.  Audit (sweep
    # seed 777001, w = 10, N = 25, iters 626): the median fell 1.488 -> 1.182 from Lt = 4 to 5.24 (0.31 > 0.25) with
    # ug = 0.31 and 0.15 there; at the defaults ug is 0.03-0.17 from Lt = 4 on.
    ug = [float(np.ptp(r[1]["Hg"][r[1]["mid"]])) / 2 for r in runs]
    # The discrete H_l is eq. (1) on the leaky discretisation, a consistent approximation of the continuous H only while
    # the step rho Lt = Lt / L is small; at rho Lt -> 1 the leak factor 1 - rho Lt -> 0 dominates.  Audit (sweep seed
    # 888002, L = 18, Lt = 14.4: rho Lt = 0.80): the discrete median fell 1.42 -> 0.60 while -2H_gamma/Lt and min COI
    # kept their trends.  So its rise (reported below) is taken between consecutive Lt with rho Lt <= 1/2 (the defaults reach 0.375).
    L_layers = len(runs[0][1]["H"])
    fine = [Lt / L_layers <= 0.5 for Lt in Lts]
    rise_H = max([0.0] + [H[i] - H[i + 1] - u[i] - u[i + 1] for i in range(len(H) - 1) if fine[i] and fine[i + 1]])
    # "approach k* from below" (l.219) is a statement about the bottleneck regime: -2H_gamma/Lt is judged non-decreasing
    # from the first Lt whose min COI is within 1 of the end point's Bottleneck rank (the bottleneck has formed); before
    # that the stable Hamiltonian can overshoot and come back (fresh sweep 4100613, w = 10, N = 21, k = 3: 2.10 at Lt = 4
    # with min COI 5.39, then 1.62, 1.74, 1.83 at Lt = 8, 9.9, 12.3 with min COI 2.01, 1.98, 1.97 -> k_b = 2); those
    # earlier pairs are reported (values["pre_bottleneck_Hg_fall"])
    kb_end = max(1, int(round(cm[-1])))
    formed = next((i for i, c in enumerate(cm) if c <= kb_end + 1), len(cm) - 1)
    falls = [Hg[i] - Hg[i + 1] - ug[i] - ug[i + 1] for i in range(len(Hg) - 1)]
    rise_Hg = max([0.0] + falls[formed:])
    pre_fall = max([0.0] + falls[:formed])
    # min COI "approaches k* from above" (l.219) as Lt grows: asserted from Lt = 2 on.  At Lt = 1 (the NeuralODE-like
    # regime of the structure falsifier, no bottleneck) a narrow net's min COI can sit below its value at Lt = 2:
    # sweep 880011 draw 9 (w = 5, k = 2): 7.43 -> 8.57 (13.58 at 1500 iterations) from Lt = 1 to 2, stationarity
    # 0.07-0.12, then 6.01, 3.63, 2.09 -- a converged rise before the approach, not a failure of it.
    fall_c = max([0.0] + [cm[i + 1] / cm[i] - 1 for i in range(len(cm) - 1) if Lts[i] >= 2])
    # The discrete -2H/Lt's rise is REPORTED (values["discrete_rise_excess"]), not asserted: its median moved 0.58-1.83
    # under rounding-level perturbations of one training (error model above), and neither the slack 0.25 nor its
    # middle-layer half-range u covers that (sweep seed 424242: -0.25 -> -0.98 from Lt = 4 to 4.12 with u ~ 0.2, while
    # -2H_gamma/Lt rose).  The trend is asserted on -2H_gamma/Lt and min COI; the discrete value on the sandwich below.
    parts = {
             "-2H_gamma/Lt non-decreasing once the bottleneck formed (slack 0.25 + its non-conservation ug)":
                 (rise_Hg, 0.25),
             "min COI non-increasing from Lt = 2 (slack 5%)": (fall_c, 0.05),
             # from below / above (eq. (4) upper side: -2H/Lt <= min COI_gamma + gamma c^2; discrete slack 0.1)
             # the discrete median is known to +-u (its middle-third half-range, error model above): the sandwich
             # allows it, as the rise does (fresh sweep 4100615, k = 1: 0.17 over min COI at one Lt of a collapsing
             # bottleneck, min COI 1.23 -> 0.54)
             "-2H/Lt <= min COI + 0.1 + u at every Lt": (max(h - c - ui for h, c, ui in zip(H, cm, u)), 0.1)}
    if check_k and Lts[-1] >= 8:
        # catalogue R3: +-0.5 on -2H/Lt vs the integer at Lt >= 12 (it measured 1.59 for k = 2, 1.81 for min COI).
        # Tested on the gamma-stable -2H_gamma/Lt: the discrete median is decided by the rounding at the kinks
        # (error model above: 0.58-1.83 across rounding-level perturbations, so +-0.5 would be a coin flip).
        if endpoint_rank:
            kb = max(1, int(round(cm[-1])))
            # k_b is defined once min COI has settled at an integer (l.217: "it must be an integer k*"); within 0.25
            # (catalogue R3's margin) the closeness of -2H_gamma/Lt to it is judged, otherwise reported: fresh sweep
            # 4100614 (w = 6, N = 35, k = 3) ended at min COI 2.68, stationarity 0.40, between ranks 3 and 2, with
            # -2H_gamma/Lt = 2.31 below it (the sandwich and the trends held)
            if abs(cm[-1] - kb) <= 0.25:
                parts["|-2H_gamma/Lt - k_b| <= 0.5 at largest Lt (k_b = round(min COI))"] = (abs(Hg[-1] - kb), 0.5)
            parts["|k_b - k| <= 2 (BN2)"] = (float(abs(kb - k)), 2.0)
        else:
            parts["|-2H_gamma/Lt - k| <= 0.5 at largest Lt"] = (abs(Hg[-1] - k), 0.5)
            parts["|min COI - k| <= 0.5 at largest Lt"] = (abs(cm[-1] - k), 0.5)
    vals = {"Lt": Lts, "minus2H_over_Lt_mid": H, "minus2H_over_Lt_mid_halfrange": u,
            "minus2Hgamma_over_Lt_mid_halfrange": ug, "discrete_rise_excess": rise_H,
            "bottleneck_formed_at_Lt": Lts[formed], "pre_bottleneck_Hg_fall": pre_fall,
            "minus2Hgamma_over_Lt_mid": Hg, "min_coi_gamma": cm,
            "rank_mid": [r[1]["rank"] for r in runs], "train_mse": [r[1]["mse"] for r in runs],
            "stationarity": [r[1]["stat"] for r in runs],
            "plot": {"kind": "semilogx", "x": Lts, "series": {"-2H/Lt (middle median)": H, "-2H_gamma/Lt": Hg,
                                                             "min_p COI_gamma": cm, "k*": [float(k)] * len(Lts)},
                     "xlabel": "effective depth Lt", "ylabel": "estimate of k*",
                     "title": "BN1: -2H/Lt from below, min COI from above"}}
    return parts, vals


@trend.numeric
def _(p):
    """Continuation sweep 1, 2, 4, ..., Lt: monotone trends and closeness to k* at the largest Lt (every Lt of the
    continuation a converged, non-trivial end point)."""
    _, _, runs = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    why = _not_a_minimum([(r[0], r[1]) for r in runs], p.iters)
    if why:
        return inconclusive(why, stationarity=[r[1]["stat"] for r in runs], train_mse=[r[1]["mse"] for r in runs])
    parts, vals = _trend_parts(runs, p.k, endpoint_rank=True)
    out = Outcome.from_parts(parts, message=f"-2H/Lt {[round(x, 2) for x in vals['minus2H_over_Lt_mid']]}, -2H_gamma/Lt "
                             f"{[round(x, 2) for x in vals['minus2Hgamma_over_Lt_mid']]}, min COI "
                             f"{[round(x, 2) for x in vals['min_coi_gamma']]} at Lt {vals['Lt']}", values=vals)
    # BN2: the continuation may jump to a minimum of lower rank, a different sequence of minima whose own k* is the
    # target: then a broken trend is not evidence against the claim (one sequence), and the draw is inconclusive.
    # A jump: an end point at Lt >= 4 sitting at a rank (min COI within 0.25 of an integer r < w: a bottleneck
    # narrower than the width) followed by one below r - 1/2 (sweep 424242: min COI 2.19 at Lt = 8, 0.98 at Lt = 15.7, -2H_gamma/Lt following it 1.91 -> 0.83).
    # The gate applies only to a draw that would be refuted: it used to make every draw whose min COI fell by more
    # than 1/2 below the previous integer inconclusive, which is the claimed descent itself at small Lt (sweep 880011:
    # 8 of 20 draws, e.g. 2.83 -> 2.00 from Lt = 4 to 5.6 with -2H_gamma/Lt rising 1.63 -> 1.74).  Refutation power is
    # unchanged (a draw refuted now was refuted before); certified draws with a jump are reported (values["jump"]).
    cms = [r[1]["coi_min"] for r in runs]
    jump = next((i for i in range(len(cms) - 1) if runs[i][0] >= 4 and round(cms[i]) < p.w
                 and abs(cms[i] - round(cms[i])) <= 0.25 and cms[i + 1] < round(cms[i]) - 0.5), None)
    vals["jump"] = None if jump is None else [runs[jump][0], runs[jump + 1][0]]
    if jump is not None and out.decide() == "refuted":
        return inconclusive(f"the continuation jumped to a lower-rank minimum (BN2): min COI {cms[jump]:.3g} -> "
                            f"{cms[jump + 1]:.3g} from Lt = {runs[jump][0]:g} to {runs[jump + 1][0]:g}; the trend "
                            f"over two sequences of minima is not the claim's ({out.message})", min_coi_gamma=cms)
    return out


@trend.falsifier("estimate_at_small_Lt", fixed={"Lt": 2.0})
def _(p):
    """-2H/Lt already within 0.5 of k* at Lt = 2 (it is far below: the estimate needs large Lt)."""
    _, _, runs = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    why = _not_a_minimum([(r[0], r[1]) for r in runs], p.iters)
    if why:
        return inconclusive(why)
    H = runs[-1][1]["H_mid"]
    return Outcome(residual=abs(H - p.k), tolerance=0.5, values={"minus2H_over_Lt_mid": H, "Lt": runs[-1][0]},
                   message=f"Lt = {runs[-1][0]:g}: -2H/Lt = {H:.2f} vs k = {p.k}")



@trend.reproduction(name="R3", slow=True)
def _(p):
    """Catalogue R3 at its size (w = 10, N = 40, L = 40, lam = 0.01, Lt = 1, 2, 4, 8, 12, k = 2) with 5000 L-BFGS
    iterations per Lt (the catalogue ran 20000; on the shared 2-core machine 5000 keeps this at a few CPU minutes,
    and the medians move by < 0.1 between 2000 and 5000 iterations).
    Quoted: -2H/Lt medians -50.9, -11.4, -0.41, 1.14, 1.59; min COI_gamma 22.83, 12.97, 5.33, 2.24, 1.81;
    #sv > 0.1 max: 7, 5, 4, 3, 3.  The teacher draw is unrecorded, so exact values are not reproducible: compared
    are the trends and the catalogue's tolerances (+-0.5 at Lt = 12; min COI within 25% at every Lt >= 4)."""
    quoted_H = [-50.9, -11.4, -0.41, 1.14, 1.59]
    quoted_c = [22.83, 12.97, 5.33, 2.24, 1.81]
    runs = _r3_table(2, [1.0, 2.0, 4.0, 8.0, 12.0], 5000)
    parts, vals = _trend_parts(runs, 2)
    parts["min COI within 25% of quoted (Lt >= 4)"] = (max(abs(r[1]["coi_min"] / q - 1) for r, q in
                                                          zip(runs[2:], quoted_c[2:])), 0.25)
    vals.update(quoted_minus2H=quoted_H, quoted_min_coi=quoted_c, quoted_rank=[7, 5, 4, 3, 3])
    return Outcome.from_parts(parts, message="R3 sweep (k = 2)", values=vals)


# R4 is NOT registered (decorator removed; kept for a run with more CPU).  At 1000 L-BFGS iterations per Lt (what the
# shared 2-core machine allowed: 31 minutes wall) it was refuted: the middle-layer spectra gave 15, 11, 6, 6, 6 large
# values (5 +- 1 at Lt >= 16: passed) and -2H_gamma/Lt rose monotonically (-28.6, -1.40, 2.52, 3.26, 3.26), but the
# discrete -2H/Lt medians (-175, -5.9, 1.47, -590, -28.0) are not converged (B = -G/lambda amplifies the residual
# gradient by 1/lambda = 500 at lambda = 0.002) and min COI_gamma fell through 5 (25.8, 12.8, 5.56, 3.52, 2.33) while
# the train MSE rose from 0.024 (Lt = 8) to 0.060 (Lt = 16): the continuation jumps were not re-converged.  The
# catalogue's 20000 iterations per Lt (~10 CPU minutes each) were not affordable here.
def _r4_reproduction():
    """Catalogue R4 (Fig. 1 scaled down): width 30 (a 20 -> 5 -> 20 teacher embedded in R^30), N = 200, L = 50,
    lam = 0.002, Lt = 2, 4, 8, 16, 24 with continuation, 1000 L-BFGS iterations per Lt (the catalogue suggests
    20000: ~10 CPU minutes per Lt here; 1000 x 5 is ~3 CPU minutes).  Paper: -2H/Lt rises to 5, min COI falls to 5, 5 dominant singular values;
    catalogue: expect 5 +- 1 large middle singular values at Lt >= 16."""
    X, Y, runs = _sweep(30, 200, 50, 5, 0.002, 1000, [2.0, 4.0, 8.0, 16.0, 24.0], 0, d=20)
    parts, vals = _trend_parts(runs, 5, check_k=False)
    parts["5 +- 1 large sv at Lt >= 16"] = (max(abs(r[1]["rank"] - 5) for r in runs[3:]), 1.0)
    parts["|-2H/Lt - 5| <= 1 at Lt = 24"] = (abs(runs[-1][1]["H_mid"] - 5), 1.0)
    pl = _layer_plots(runs[-1][1], 24.0, 50)
    vals["plots"] = pl
    return Outcome.from_parts(parts, message="R4 sweep (k* = 5)", values=vals)


bottleneck_k5 = Claim(
    id="jacot.bottleneck_k5",
    title="Fig. 1 at bottleneck rank k* = 5: -2H/Lt and min COI approach 5 (catalogue R4) - not reproduced here",
    label="R4",
    section="3.1",
    equation="Fig. 1",
    lines=(217, 221),
    statement=r"\text{for a rank-}5\text{ task, }-2H/\tilde L\to 5,\ \min_p\|A_p\|_{K_p}^2\to 5\text{ and 5 dominant "
              r"singular values in the middle layers as }\tilde L\text{ grows}",
    status="empirical",
    params=[],
    notes="Registered without a check, because the reproduction written for it (_r4_reproduction: width 30, a "
          "20 -> 5 -> 20 teacher, N = 200, L = 50, lam = 0.002, Lt = 2..24 with continuation) was REFUTED at the "
          "1000 L-BFGS iterations per Lt affordable on 2 shared cores: 6 large middle singular values at Lt >= 16 "
          "(5 +- 1 passes), but -2H_gamma/Lt rose only to 3.26, the discrete -2H/Lt was -590 at Lt = 16 (B = -G/lam "
          "amplifies the leftover gradient 500x) and the train MSE rose after Lt = 8. The catalogue's 20000 iterations "
          "per Lt (~10 CPU minutes each) were not run; a GPU machine was not available to this task. The k* = 2 and "
          "k* = 3 versions (R3) are reproduced by jacot.bottleneck_hamiltonian_trend.",
    catalogue="jacot §3 R4",
    covers=("R4",),
)
