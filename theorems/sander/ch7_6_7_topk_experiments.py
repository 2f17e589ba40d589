"""§7.6 Experiments and §7.7 Discussion (seed l.4977-5024): the experiments (Figs 7.4-7.7, registered, not
reproduced), Fig 7.5's toy pruning run (l.4984-4997, registered) and the lambda -> infinity limits (l.5016,
erratum E7.3).  Claims: ``sander.topk_experiments``, ``sander.topk_pruning_toy``, ``sander.topk_lambda_limit``.

Conventions and the operator-output error model (chapter 7): ``theorems.sander._attention``.
"""
from __future__ import annotations

import numpy as np

from solvers import topk as tk
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._attention import _validate_nk

EPS = float(np.finfo(float).eps)


# ===========================================================================
experiments = Claim(
    id="sander.topk_experiments",
    title="Top-k experiments: MNIST pruning, ViT-B/16 top-3 loss, V-MoE on JFT, TPU runtimes",
    label="Figs 7.4-7.7",
    section="7.6",
    equation="",
    lines=(4980, 5012),
    statement=r"\text{90\% sparsity MNIST pruning; straight-through entropic baseline 5.9\%; V-MoE S/32: 32 experts, "
              r"}k=28\text{ of }n=400;\ 10\text{ h vs }15\text{ h}",
    status="empirical",
    params=[],
    notes="Not reproduced: ViT-B/16 on CIFAR-100, V-MoE on JFT-300M and TPU runtimes need accelerators and data not "
          "available offline; the toy pruning plan of catalogue §3.3 R7.a (sklearn digits) was not run in the time "
          "budget. The operator-level claims are checked by the other sander.topk_* claims.",
    catalogue="sander_part23 §2.4 EMP7; §3.3 R7.a",
    covers=("EMP7",),
)


# ===========================================================================
# Fig 7.5: registered, not reproduced
prune = Claim(
    id="sander.topk_pruning_toy",
    title="Fig 7.5 at toy scale (R7.a): magnitude pruning to 10% density with relaxed top-k",
    label="Fig 7.5",
    section="7.6",
    equation="",
    lines=(4984, 4997),
    statement=r"\text{90\% sparsity kept at every step; relaxed top-}k\text{ (}p=2,\tfrac43\text{) comparable to hard top-}k",
    status="empirical",
    params=[],
    notes="Catalogue §3.3 R7.a plan (MLP 784-32-32-10 on sklearn digits, topkmag at 10% density) is not run: the "
          "PAV of solvers.topk is pure Python (a 1000+-weight layer per step, thousands of steps: minutes to hours "
          "on this 2-core machine) and the plan's assertion (relaxed final loss <= hard) is a trend with no "
          "thesis number to compare (the thesis quotes MNIST 5.9% for the entropic straight-through baseline "
          "only). The density invariant itself (exactly k non-zeros) is a property of the operator, checked by "
          "sander.topk_relaxed / sander.topk_fig73_zero_area.",
    catalogue="sander_part23 §3.3 R7.a; §2.4 EMP7",
    covers=("EMP7",),
)


# ===========================================================================
# D7.3 / E7.3 lambda -> infinity
lamlim = Claim(
    id="sander.topk_lambda_limit",
    title="As lambda -> infinity the relaxed mask tends to (k/n) 1 -- and topkmag_R tends to 0, so it needs rescaling too",
    label="Discussion (l.5016)",
    section="7.7",
    equation="",
    lines=(5016, 5016),
    statement=r"\lambda\to\infty:\ \mathrm{topkmask}_R\to\tfrac kn\mathbf 1_n\ (\text{rescaling by }n/k\text{ needed}),"
              r"\ \text{in contrast to }\mathrm{topkmag}_R\ (\text{no rescaling})",
    status="erratum",
    corrected=r"\mathrm{topkmask}_R\to\tfrac kn\mathbf 1,\quad \lambda\,\mathrm{topkmag}_R(\mathbf x)\to\mathbf x"
              r"\ (p=2):\ \text{topkmag}_R\text{ also needs a rescaling (by }\lambda)",
    params=[
        Param.int("n", 6, 2, 50, "dimension", search=(2, 10)),
        Param.int("k", 2, 1, 49, "k", search=(1, 4)),
        Param.float("lam", 1e5, 10.0, 1e12, "lambda (large)", search=(1e3, 1e8)),
        Param.seed("seed of x"),
    ],
    validate=_validate_nk,
    notes="E7.3, p = 2. For lam > spread(x) PAV pools everything: mask y = (x - mean x)/lam + k/n exactly, so "
          "|y - k/n| <= max|x - mean x|/lam; topkmag: gamma = sum|x|/(n + lam k), y = (x - u)/lam, but "
          "PAV need not pool everything for topkmag (k = n: nothing pools; audit: the bound sum|x|/(n + lam k) refuted "
          "n = k = 2): |lam y - x| = |u| <= the largest prefix weighted mean of the sorted |x| (the first isotonic block), "
          "computed from x alone, <= sum|x|/(lam + 1). lam <= spread(x) is inconclusive (the mask's bound needs "
          "lam > spread). Both O(1/lam) bounds are the tolerances.",
    catalogue="sander_part23 §2.4 D7.3; §4 E7.3",
    covers=("D7.3", "E7.3"),
)


def _lam_x(p):
    return np.random.default_rng(p.seed).uniform(-5, 5, p.n)


@lamlim.numeric
def _(p):
    """mask -> k/n within max|x - mean|/lam; lam topkmag_R(x) -> x within sum|x|/(n + lam k)."""
    x = _lam_x(p)
    k = min(p.k, p.n)
    ym = tk.topk_mask(x, k, p.lam, 2.0)
    yg = tk.topk_mag(x, k, p.lam, 2.0)
    rnd = 64 * p.n * EPS * (np.max(np.abs(x)) + p.lam * k)
    # |lam y - x| = |u|, u the non-increasing isotonic fit of the sorted |x| (targets s_i/(lam w_i + 1), weights
    # lam w_i + 1, w = 1_k).  Its largest value is its first block's, which is the largest prefix weighted mean
    # max_j sum_{i<=j} s_i / sum_{i<=j}(lam w_i + 1), computed here from x alone (not from the solver); it is
    # <= sum|x|/(lam + 1) since every prefix holds a head index: the O(1/lam) rate.  (The former bound
    # sum|x|/(n + lam k) assumed PAV pools everything, which fails e.g. for k = n, where nothing pools: n = k = 2
    # was refuted.)
    s_ = np.sort(np.abs(x))[::-1]
    wts = np.where(np.arange(p.n) < k, p.lam + 1.0, 1.0)
    mag_bound = float(np.max(np.cumsum(s_) / np.cumsum(wts)))
    # the mask pools everything (y = (x - mean x)/lam + k/n) only for lam > spread(x): the rate bound's hypothesis
    spread = float(np.ptp(x))
    if p.lam <= spread:
        return inconclusive(f"lam = {p.lam:g} <= spread(x) = {spread:.3g}: the mask's O(1/lam) bound max|x - mean|/lam "
                            "needs lam > spread(x) (PAV pools everything from there on)")
    return Outcome.from_parts({
        "mask_to_k_over_n": (float(np.max(np.abs(ym - k / p.n))), float(np.max(np.abs(x - x.mean()))) / p.lam + rnd / p.lam),
        "lam_topkmag_to_x": (float(np.max(np.abs(p.lam * yg - x))), mag_bound + rnd),
    }, "lambda -> infinity limits", values={"mask": ym.tolist(), "lam_times_topkmag_over_x": (p.lam * yg / x).tolist()})


lamlim.property(over=("n", "k", "lam", "seed"), max_examples=12)


@lamlim.falsifier("stated")
def _(p):
    """As printed: topkmag_R(x) -> x without rescaling. At lam = 1e5 it is ~ x/lam, off by ~|x|."""
    x = _lam_x(p)
    yg = tk.topk_mag(x, min(p.k, p.n), p.lam, 2.0)
    return Outcome(residual=float(np.max(np.abs(yg - x))), tolerance=float(np.sum(np.abs(x))) / p.lam + 1e-12,
                   values={"topkmag_R": yg.tolist(), "x": x.tolist()})
