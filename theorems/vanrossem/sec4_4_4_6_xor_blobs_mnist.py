"""§4.4 XOR Task, §4.5 Feature Collapse and §4.6 MNIST (seed l.193-220), with their experiments in App. B.2-B.4
(l.522-577; Table 2, l.532-543) and App. C.3-C.4 (l.605-621): the XOR task (Fig 6), the orthogonal-feature (blob)
task (Figs 7-8) and its very-low-weight limit (Fig 13), the MNIST experiments (§3.4 and §4.6; not reproducible
offline), the exponential weighing of Eq 50, the Taylor ratio of Fig 14 and the hyper-parameters of Table 2.
Claims: ``vanrossem.xor_structure``, ``vanrossem.feature_collapse``, ``vanrossem.context_merge``,
``vanrossem.mnist_trajectories``, ``vanrossem.mnist_structure``, ``vanrossem.exponential_weighing``,
``vanrossem.mnist_taylor_ratio``, ``vanrossem.table2_hyperparameters``.

Networks: :mod:`solvers.mlp` (float64, Xavier-normal with the paper's gain, zero biases, PyTorch ``MSELoss(mean)``
with the Table learning rates, full-batch gradient descent unless a batch size is stated; decisions D2-D4 of the
catalogue).  Representation ``H``: :func:`solvers.mlp.hidden_index` (the hidden layer halfway, decision D3).
Every reproduction states the model its assertions come from (Eq 10 and its limits) and its loose margin; the
fast versions (default run) use smaller networks or data sets than the paper, the full reproductions are
``slow=True``.
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from solvers import mlp
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.vanrossem._common import EPS
from theorems.vanrossem._seed import _need_seed, _table2


# ===========================================================================
# 2. XOR (Fig 6; catalogue X1, §3 R6)
_XOR_X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_XOR_Y = np.array([[0.0], [1.0], [1.0], [0.0]])
_SAME = ((0, 3), (1, 2))


@functools.lru_cache(maxsize=16)
def _xor_run(width, depth, gain, lr, epochs, batch_size=None, seed=0):
    widths = [2] + [width] * depth + [1]
    H = mlp.hidden_index(widths)
    rec = mlp.train(_XOR_X, _XOR_Y, widths, "leaky_relu", gain, lr, epochs, seed, record_every=epochs,
                    batch_size=batch_size, backend="numba", loss="mse_mean", record_layers=(H,))
    R, F = rec.layer(H), rec.outputs
    pairs = {}
    for i, j in itertools.combinations(range(4), 2):
        pairs[f"{i}-{j}"] = {"u0": float(np.sum((R[0, i] - R[0, j]) ** 2)),
                             "v0": float(np.sum((F[0, i] - F[0, j]) ** 2)),
                             "u_end": float(np.sum((R[-1, i] - R[-1, j]) ** 2)),
                             "same_target": (i, j) in _SAME}
    return pairs, float(rec.losses[-1])


def _xor_parts(tag, pairs, regime):
    same = [p["u_end"] for p in pairs.values() if p["same_target"]]
    diff = [p["u_end"] for p in pairs.values() if not p["same_target"]]
    med = float(np.median(diff))
    if regime == "rich":
        # Eq 10 at small weights: same-target pairs A_low = 0 -> stay at ~u0 (merge relative to the others);
        # the four different-target pairs have equal |dx| = |dy| = 1 -> equal A_low
        return {f"{tag}: max same-target u_end / median different <= 0.1": (max(same) / med, 0.1),
                f"{tag}: spread of different-target pairs max|u/median - 1| <= 0.25":
                    (max(abs(d / med - 1) for d in diff), 0.25)}
    if regime == "lazy":
        # Eq 10 at large weights -> A_high ~ u0 (decoder term small): no restructuring
        return {f"{tag}: max |u_end/u0 - 1| over the 6 pairs <= 0.1":
                (max(abs(p["u_end"] / p["u0"] - 1) for p in pairs.values()), 0.1)}
    # 'two layers': exactly one same-target pair merges (the theory predicts both)
    return {f"{tag}: min same-target u_end / median different <= 0.1": (min(same) / med, 0.1),
            f"{tag}: the other same-target pair is NOT merged (median different / max same <= 1)": (med / max(same), 1.0)}


xor = Claim(
    id="vanrossem.xor_structure",
    title="XOR (Fig 6): small initial weights merge equal-target representations, large ones do not; a 2-layer net "
          "merges only one pair",
    label="Fig 6, §4.4",
    section="4.4, B.2",
    equation="(10)",
    lines=(183, 195),
    statement=r"\text{at small initial weights representations of XOR inputs with the same target merge "
              r"(}\|y_2-y_1\|=0\text{); at large weights no merging; a 2-layer network merges only one pair}",
    status="empirical",
    notes="Model of the assertions (Eq 10): small weights -> same-target pairs (0,0)-(1,1) and (1,0)-(0,1) have "
          "A_low = 0 and end near their tiny u0 while the four different-target pairs (all |dx| = |dy| = 1) end at the "
          "same A_low-driven distance; large weights -> Eq 10 ~ A_high ~ u0 for every pair. Fast version: 20 hidden "
          "leaky-ReLU layers of width 50, full-batch GD: 'rich' g = 1.0, lr 0.04, 1000 epochs; 'lazy' g = 2.0, lr 1e-8, "
          "1000 epochs (Table 2 'High' uses lr 3e-9 at width 500); 'two layers' 1 hidden layer of width 100, "
          "g = 0.0015, lr 0.1, 10000 epochs (Table 2: width 500, lr 0.03, 40000 epochs). Margins: same/different "
          "<= 0.1 (catalogue 20x500: 20-40x closer), different pairs equal within 25% (catalogue +-7%), lazy pairs "
          "within 10% of u0 (catalogue: 0.1-2% of Eq 10). Slow version: the Table 2 rows read from the seed, "
          "per-sample SGD (decision D2); 'XOR Low' (g 0.7) does not leave the plateau in 1000 epochs (catalogue E11), "
          "so the rich regime is asserted at g = 1.0, lr 0.01, 3000 epochs as in the catalogue. KNOWN DISCREPANCY (measured "
          "here, seed 0, per-sample SGD, 20 x 500): the slow check is REFUTED on the rich part: (1,0)-(0,1) merges "
          "(u_end 0.0041, 29x below the median different-target distance 0.116) but (0,0)-(1,1) ends at 0.024 (u0 "
          "0.0038), only 4.8x below, against the 0.1 margin from the catalogue's run (20-40x); the different-target "
          "pairs agree within 9%, the High row keeps u0 within 2.4%, the '2 layers' row merges exactly one pair "
          "(0.016 vs 1.47; catalogue 0.0102 vs 1.493) and the Table 2 'Low' row stays on the plateau (loss 0.2500). "
          "SEED CHECK (same rich configuration, seeds 0-3, all fitted to loss <= 5e-16; ratio = median "
          "different-target u_end / same-target u_end, 10x required): seed 0: (0,0)-(1,1) 4.8x, (1,0)-(0,1) 28.7x; "
          "seed 1: 33.5x, 36.5x; seed 2: 17.8x, 82.8x; seed 3: 8.2x, 31.2x; different-target spread 8.5%, 2.8%, 4.5%, "
          "1.6%. (1,0)-(0,1) merges in 4 of 4 seeds, but the merging of BOTH same-target pairs at the 10x margin is "
          "not reproduced in 2 of 4 seeds (0 and 3; (0,0)-(1,1) ranges 4.8-33.5x, always closer than every "
          "different-target pair). Not a majority of seeds, so the discrepancy is not put down to seed 0 alone: no "
          "multi-seed protocol is adopted (seeds 0-2 alone would pass 2 of 3, but seed 3 was already known to fail), "
          "the margin is not loosened, and the slow check stays at seed 0 and refutes.",
    catalogue="vanrossem §2.6 X1; §3 R6; §6 D2",
    covers=("X1", "R6"),
)


@xor.reproduction
def xor_fast(p):
    """20 x 50 leaky nets: rich (g=1) merges the two same-target pairs, lazy (g=2) keeps u0; 1 x 100 merges one pair."""
    rich, l1 = _xor_run(50, 20, 1.0, 0.04, 1000)
    lazy, l2 = _xor_run(50, 20, 2.0, 1e-8, 1000)
    two, l3 = _xor_run(100, 1, 0.0015, 0.1, 10000)
    losses = {"rich": l1, "lazy": l2, "two_layers": l3}
    if max(losses.values()) > 1e-3:
        return inconclusive("a run did not fit XOR (final loss > 1e-3)", losses=losses)
    parts = {**_xor_parts("rich", rich, "rich"), **_xor_parts("lazy", lazy, "lazy"),
             **_xor_parts("2-layer", two, "two")}
    return Outcome.from_parts(parts, "XOR pairwise distances at the halfway layer", values={
        "rich_pairs": rich, "lazy_pairs": lazy, "two_layer_pairs": two, "final_losses": losses})


@xor.reproduction(name="table2", slow=True)
def xor_table2(p):
    """Table 2 XOR rows (20 x 500, per-sample SGD): rich at g = 1.0 (substitute for 'Low'), lazy at 'High' (pairs
    within 10% of u0, the large-weight limit of Eq 10), and the '2 layers' row; the 'Low' row is run and reported.
    Rich part at seed 0 only: it REFUTES there ((0,0)-(1,1) 4.8x closer, < 10x); over seeds 0-3 both same-target pairs
    reach 10x in 2 of 4 (per-seed numbers in the claim's notes), so the check is kept single-seed and refuting."""
    L, bad = _need_seed()
    if bad:
        return bad
    t2 = _table2(L)
    hi, two, low = t2["XOR High weights"], t2["XOR 2 layers"], t2["XOR Low weights"]
    rich, l1 = _xor_run(hi["units"], hi["hidden"], 1.0, 0.01, 3000, 1)
    lazy, l2 = _xor_run(hi["units"], hi["hidden"], hi["gain"], hi["lr"], hi["epochs"], 1)
    tl, l3 = _xor_run(two["units"], two["hidden"], two["gain"], two["lr"], two["epochs"])
    lowp, l0 = _xor_run(low["units"], low["hidden"], low["gain"], low["lr"], low["epochs"], 1)
    parts = {**_xor_parts("rich (g=1.0)", rich, "rich"), **_xor_parts("High", lazy, "lazy"),
             **_xor_parts("2 layers", tl, "two")}
    return Outcome.from_parts(parts, "XOR, Table 2 configurations", values={
        "rich_pairs": rich, "high_pairs": lazy, "two_layer_pairs": tl, "low_pairs": lowp,
        "final_losses": {"rich": l1, "high": l2, "two_layers": l3, "low_table2": l0}})


# ===========================================================================
# 3. The orthogonal-feature (blob) task (Figs 7-8, 13; catalogue FC1, FC2, §3 R7)
def _blobs(n, sigma=1.0):
    """2 x n x n blob images (5 x 5 pixels, centres on linspace(0, 4, n), variance sigma^2) + one-hot context:
    27-dim inputs; target x/4 (context 1) or y/4 (context 2) (decision D4)."""
    pos = np.linspace(0.0, 4.0, n)
    g = np.arange(5.0)
    X, Y, C, PX, PY = [], [], [], [], []
    for c in (0, 1):
        for px in pos:
            for py in pos:
                img = np.exp(-((g[None, :] - px) ** 2 + (g[:, None] - py) ** 2) / (2 * sigma ** 2))
                X.append(np.concatenate([img.ravel(), [1.0 - c, float(c)]]))
                Y.append((px if c == 0 else py) / 4.0)
                C.append(c)
                PX.append(px)
                PY.append(py)
    return np.array(X), np.array(Y)[:, None], np.array(C), np.array(PX), np.array(PY)


def _collapse_ratio(R, C, PX, PY, c):
    """Within-group / between-group variance of context ``c``, grouped by the task-relevant coordinate: 0 when the
    irrelevant direction has collapsed, ~1-2 for an intact square."""
    m = C == c
    rel = (PX if c == 0 else PY)[m]
    Rc = R[m]
    keys = np.unique(rel)
    means = np.array([Rc[rel == k].mean(axis=0) for k in keys])
    within = np.mean([np.sum((Rc[rel == k] - means[i]) ** 2, axis=1).mean() for i, k in enumerate(keys)])
    between = np.sum((means - Rc.mean(axis=0)) ** 2, axis=1).mean()
    return float(within / between)


def _cross_context(R, C, PX, PY):
    """Mean squared distance between the context-1 and context-2 group means of equal target, over the mean squared
    spread of all group means (0 when the two contexts merge into one line, C.3)."""
    keys = np.unique(PX)
    m1 = np.array([R[(C == 0) & (PX == k)].mean(axis=0) for k in keys])
    m2 = np.array([R[(C == 1) & (PY == k)].mean(axis=0) for k in keys])
    allm = np.vstack([m1, m2])
    spread = np.sum((allm - allm.mean(axis=0)) ** 2, axis=1).mean()
    return float(np.sum((m1 - m2) ** 2, axis=1).mean() / spread)


@functools.lru_cache(maxsize=16)
def _blob_run(n, gain, lr, epochs, batch_size, seed=0, width=100, depth=4):
    X, Y, C, PX, PY = _blobs(n)
    widths = [27] + [width] * depth + [1]
    H = mlp.hidden_index(widths)
    rec = mlp.train(X, Y, widths, "tanh", gain, lr, epochs, seed, record_every=epochs, batch_size=batch_size,
                    backend="numpy", loss="mse_mean", record_layers=(H,))
    R = rec.layer(H)
    out = {"loss_end": float(rec.losses[-1]), "hidden_layer": H}
    for k, Rk in (("init", R[0]), ("final", R[-1])):
        out[k] = {"ctx1": _collapse_ratio(Rk, C, PX, PY, 0), "ctx2": _collapse_ratio(Rk, C, PX, PY, 1),
                  "cross": _cross_context(Rk, C, PX, PY)}
    return out


_BLOB_FAST = {"very_low": (6, 0.275, 0.08, 600, 8), "high": (6, 2.0, 0.003, 200, 8)}

collapse = Claim(
    id="vanrossem.feature_collapse",
    title="Orthogonal-feature task (Fig 8): at small initial weights the task-irrelevant direction collapses in each "
          "context; at large weights the square remains",
    label="Fig 8, §4.5",
    section="4.5, B.3",
    equation="(10)",
    lines=(197, 211),
    statement=r"\text{at small initial weights the representation of each context collapses along the task-irrelevant "
              r"feature; at large initial weights it retains one 2-d square per context}",
    status="empirical",
    notes="Statistic: within-group / between-group variance of the halfway layer per context, grouped by the relevant "
          "coordinate (0 = collapsed, ~1.5-2 at initialisation). Model (Eq 10): pairs differing only along the "
          "irrelevant feature have dy = 0, hence A_low = 0: they merge at small weights and keep their distance "
          "(~A_high ~ u0) at large weights. Fast version: 6 x 6 blob positions per context (72 points instead of "
          "1800), 4 hidden tanh layers of width 100, minibatch 8: 'very low' g 0.275, lr 0.08, 600 epochs; 'high' "
          "g 2.0, lr 0.003, 200 epochs. Asserted: very-low final ratio <= 0.6 x its initial value in both contexts "
          "(catalogue, full task: 1.73 -> 0.38, 1.51 -> 0.28); high final ratio within 15% of its initial value "
          "(catalogue 1.83 -> 1.85). Slow version: the full 2 x 30 x 30 data set with the three Table 2 'Blobs' rows "
          "(minibatch 32, decision D4), asserting the monotone order very low < low < high of the final ratios "
          "(catalogue 0.38 < 1.36 < 1.85, context 1). Layer count: Table 2's 4 hidden layers (the captions say 5- "
          "and 4-layer, vanrossem.notation_typos).",
    catalogue="vanrossem §2.6 FC1; §3 R7; §6 D4",
    covers=("FC1", "R7"),
)


@collapse.reproduction
def collapse_fast(p):
    """72-point blob task, 4 x 100 tanh: collapse ratio falls >= 40% at very low gain, stays within 15% at high gain."""
    lo, hi = _blob_run(*_BLOB_FAST["very_low"]), _blob_run(*_BLOB_FAST["high"])
    if max(lo["loss_end"], hi["loss_end"]) > 0.02:
        return inconclusive("a blob run did not fit (final loss > 0.02)", very_low=lo, high=hi)
    parts = {}
    for c in ("ctx1", "ctx2"):
        parts[f"very low: final/initial collapse ratio ({c}) <= 0.6"] = (lo["final"][c] / lo["init"][c], 0.6)
        parts[f"high: |final/initial - 1| ({c}) <= 0.15"] = (abs(hi["final"][c] / hi["init"][c] - 1), 0.15)
    return Outcome.from_parts(parts, "feature collapse (fast)", values={"very_low": lo, "high": hi})


@collapse.reproduction(name="table2", slow=True)
def collapse_full(p):
    """Full 2 x 30 x 30 task, the three Table 2 'Blobs' rows, minibatch 32: very low < low < high (both contexts)."""
    L, bad = _need_seed()
    if bad:
        return bad
    t2 = _table2(L)
    runs = {}
    for key, name in (("very_low", "Blobs Very low weights"), ("low", "Blobs Low weights"), ("high", "Blobs High weights")):
        r = t2[name]
        runs[key] = _blob_run(30, r["gain"], r["lr"], r["epochs"], 32, 0, r["units"], r["hidden"])
    parts = {}
    for c in ("ctx1", "ctx2"):
        f = {k: runs[k]["final"][c] for k in runs}
        parts[f"very low < low ({c})"] = (f["very_low"] / f["low"], 1.0 - 1e-9)
        parts[f"low < high ({c})"] = (f["low"] / f["high"], 1.0 - 1e-9)
    return Outcome.from_parts(parts, "feature collapse, Table 2 rows", values=runs)


merge = Claim(
    id="vanrossem.context_merge",
    title="C.3 / Fig 13: at very low weights the two contexts merge into a single line",
    label="Fig 13, C.3",
    section="C.3",
    equation="(10)",
    lines=(605, 612),
    statement=r"\text{at very small initial weights the representational structure of the orthogonal-feature task "
              r"collapses to a single line (cross-context pairs with equal output merge)}",
    status="empirical",
    notes="Statistic: mean squared distance between the context-1 and context-2 group means of equal target over the "
          "spread of all group means (0 = one line). Model: cross-context pairs with equal output have dy = 0, so "
          "Eq 10 merges them, but over a larger |dx| and hence more slowly (C.3; plateau law vanrossem.loss_plateau). "
          "Only PARTIALLY reproduced (catalogue FC2: full-batch very-low 6.41 -> 0.388 with incomplete fitting; "
          "minibatch very-low 6.41 -> 3.48; high 5.92 -> 5.92). Asserted (fast runs of vanrossem.feature_collapse): "
          "the statistic falls by >= 20% at very low weights and changes by <= 15% at high weights; a single line "
          "(statistic < 0.1 x initial) is NOT asserted and is reported in values.",
    catalogue="vanrossem §2.6 FC2",
    covers=("FC2",),
)


@merge.reproduction
def merge_fast(p):
    """Cross-context statistic: falls >= 20% at very low gain, within 15% at high gain (fast blob runs)."""
    lo, hi = _blob_run(*_BLOB_FAST["very_low"]), _blob_run(*_BLOB_FAST["high"])
    return Outcome.from_parts(
        {"very low: final/initial cross-context statistic <= 0.8": (lo["final"]["cross"] / lo["init"]["cross"], 0.8),
         "high: |final/initial - 1| <= 0.15": (abs(hi["final"]["cross"] / hi["init"]["cross"] - 1), 0.15)},
        "context merging (fast)", values={"very_low": lo, "high": hi,
                                          "single_line_reached": lo["final"]["cross"] < 0.1 * lo["init"]["cross"]})


# ===========================================================================
# 4. MNIST (Figs 4, 9, 14): not reproducible offline (catalogue MN1, MN2, C4, §3 R9)
_MNIST_NOTE = ("NOT reproduced: the experiment trains on the MNIST training set, which is not available offline on "
               "this machine, and data sets are not downloaded by the suite. No proxy check is registered as this "
               "claim (a synthetic substitute would test a different statement). ")

mn1 = Claim(
    id="vanrossem.mnist_trajectories",
    title="Fig 4: the (u, v, w) trajectories of a 0 and a 1 digit during MNIST training follow Eq 7",
    label="Fig 4, §3",
    section="3, B.4",
    equation="(7)",
    lines=(134, 145),
    statement=r"\text{the effective theory fits the learning dynamics of two MNIST digits during full-data training}",
    status="empirical",
    notes=_MNIST_NOTE + "Catalogue proxy plan (not a check of this claim): a 2-class Gaussian mixture, 4 x 100 "
          "leaky net, following one pair. Fig 4 says 100 units, Table 2 says 200 (vanrossem.notation_typos).",
    catalogue="vanrossem §2.5 MN1; §3 R9",
    covers=("MN1", "R9"),
)


mn2 = Claim(
    id="vanrossem.mnist_structure",
    title="Fig 9: MNIST pairwise representational distances correlate with Eq 10 after exponential weighing "
          "(Pearson 0.703; 0.512 without the diagonal blocks)",
    label="Fig 9, Eq 50",
    section="4.6, B.4",
    equation="(10), (50)",
    lines=(213, 220),
    statement=r"\mathrm{Pearson}\bigl(\|dh_{ij}\|^2_{\rm net},\ \|dh_{ij}\|^2_{\rm pred}\bigr)=0.703\ "
              r"(0.512\text{ without the diagonal blocks})",
    status="empirical",
    notes=_MNIST_NOTE + "The quoted correlations 0.703 and 0.512 are therefore not recomputed. Catalogue notes on "
          "Eq 50 (not encoded here): it is symmetric, not normalised, and has a non-zero diagonal, so 'without the "
          "diagonal blocks' (same-digit blocks) differs from dropping the zero diagonal.",
    catalogue="vanrossem §2.6 MN2; §3 R9",
    covers=("MN2",),
)


def _eq50(D):
    """Eq 50: ``P_ij = sum_{k,l} exp(-D_ik) D_kl exp(-D_lj)`` (``E D E`` with ``E = exp(-D)`` entrywise)."""
    E = np.exp(-D)
    return E @ D @ E


def _triangle_violation(D):
    """Fraction of ordered off-diagonal pairs (i, j) with sqrt(D_ij) > sqrt(D_ik) + sqrt(D_kj) for some k != i, j
    (relative slack 1e-12 for rounding)."""
    S = np.sqrt(np.maximum(D, 0.0))
    n = len(S)
    bad = 0
    for i in range(n):
        via = S[i][:, None] + S                                   # via[k, j] = S_ik + S_kj
        for j in range(n):
            if j == i:
                continue
            m = np.ones(n, bool)
            m[[i, j]] = False
            bad += bool(np.any(S[i, j] > via[m, j] * (1 + 1e-12)))
    return bad / (n * (n - 1))


weighing = Claim(
    id="vanrossem.exponential_weighing",
    title="Eq 50: exponential weighing of the pairwise Eq 10 predictions reduces triangle-inequality violations",
    label="Eq 50, B.4",
    section="B.4",
    equation="(50)",
    lines=(569, 577),
    statement=r"\|dh_{ij}\|^2_{\rm pred}=\sum_{k,l}e^{-\|dh_{ik}\|^2_{\rm th}}e^{-\|dh_{lj}\|^2_{\rm th}}"
              r"\|dh_{kl}\|^2_{\rm th}\ \text{reduces issues with the triangle inequality}",
    status="heuristic",
    params=[
        Param.seed("seed of the points and labels"),
        Param.int("n_points", 24, 3, 200, "number of data points", search=(8, 24)),
        Param.int("n_classes", 3, 2, 10, "number of target classes", search=(2, 5)),
        Param.int("dim", 3, 1, 20, "input dimension", search=(1, 5)),
        Param.float("scale", 0.3, 0.0, 10.0, "sqrt(tau_y/tau_h): prediction d_ij = scale |x_i - x_j| [y_i != y_j]",
                    low_open=True, search=(0.05, 3.0)),
    ],
    notes="'Simplistic and without theoretical guarantees' (l.577): heuristic. Checked on the small-weight prediction "
          "of Eq 10 for class data, d_ij = A_low = scale |x_i - x_j| [y_i != y_j] (|dy| = 1 between classes), which "
          "violates the triangle inequality on sqrt(d) wherever a pair of one class is bridged by another class. "
          "Asserted: Eq 50 is symmetric (to rounding) and the fraction of violating pairs does not increase "
          "(catalogue: 0.222 -> 0.000 on its example; here typically 0.6 -> 0). Recorded, not asserted: Eq 50 is not "
          "normalised and has a NON-zero diagonal (so 'without the diagonal blocks' in Fig 9 means the same-digit "
          "blocks, not the zero diagonal). The MNIST correlations themselves: vanrossem.mnist_structure.",
    catalogue="vanrossem §2.6 MN2 (Eq 50 properties)",
    covers=("MN2",),
)


@weighing.numeric
def weighing_numeric(p):
    """Eq 50 on an A_low class matrix: symmetric, and the triangle-violation fraction does not increase."""
    rng = np.random.default_rng(p.seed)
    X = rng.standard_normal((p.n_points, p.dim))
    y = rng.integers(0, p.n_classes, p.n_points)
    D = p.scale * np.linalg.norm(X[:, None] - X[None], axis=2) * (y[:, None] != y[None])
    P = _eq50(D)
    before, after = _triangle_violation(D), _triangle_violation(P)
    # error model of the symmetry: two matrix products, n terms each: 4 n eps max|P|
    return Outcome.from_parts(
        {"|P - P^T|": (float(np.max(np.abs(P - P.T))), 4 * p.n_points * EPS * float(np.max(np.abs(P)))),
         "violations after - before (<= 0)": (max(after - before, 0.0), 0.0)},
        "Eq 50 on the A_low prediction of class data",
        values={"violation_fraction_before": before, "violation_fraction_after": after,
                "min_diagonal": float(P.diagonal().min()), "max_off_diagonal": float((P - np.diag(P.diagonal())).max()),
                "scale_ratio_P_over_D": float(np.max(P) / max(np.max(D), 1e-300))})


weighing.property(over=("seed", "n_points", "n_classes", "dim", "scale"), max_examples=8)


c4 = Claim(
    id="vanrossem.mnist_taylor_ratio",
    title="Fig 14: after MNIST training the first-order Taylor term dominates for nearby pairs (not at initialisation)",
    label="Fig 14, C.4",
    section="C.4",
    equation="(5)",
    lines=(614, 621),
    statement=r"\text{the ratio of first- to second-order Taylor terms of }h\text{ and }y\text{ is large for nearby "
              r"pairs of MNIST digits after 30 epochs, but not at initialisation}",
    status="empirical",
    notes=_MNIST_NOTE + "What holds for any smooth map, the cubic difference law of the centred linearisation, is "
          "checked by vanrossem.linearisation_about_mean.",
    catalogue="vanrossem §2.6 C4",
    covers=("C4",),
)


# ===========================================================================
# 5. Table 2 as data (catalogue T2)
table2 = Claim(
    id="vanrossem.table2_hyperparameters",
    title="Table 2: hyper-parameters of the toy-data experiments, parsed and checked for coherence",
    label="Table 2",
    section="B.2-B.4",
    equation="",
    lines=(532, 543),
    statement=r"\text{Table 2 (XOR, Blobs, MNIST rows: nonlinearity, init gain, learning rate, epochs, units, hidden "
              r"layers)}",
    status="empirical",
    notes="Data. The reproduction parses the nine rows from the seed (the slow reproductions of this module read their "
          "configurations from the same parse) and checks what the text says about them: the XOR rows use 'the same "
          "[architecture] as the default' (B.2: leaky ReLU, 500 units, 20 hidden layers; the '2 layers' row has 1 "
          "hidden layer); the blob rows are tanh with 100 units (Fig 8); the gains of the three blob rows and of the "
          "three 20-layer XOR rows increase from low to high. It also checks the coherence of the extreme 'XOR High' "
          "learning rate 3e-9 (catalogue T2): at gain 2 the 20 x 500 network's initial loss is O(10^4) (outputs "
          "up to ~150), and 10 full-batch steps at lr 3e-9 lower the loss, while 300x that rate makes it blow up "
          "(measured, not asserted by the paper). The 'MINST' spelling is in vanrossem.notation_typos.",
    catalogue="vanrossem §2.8 T2",
    covers=("T2",),
)


def _loss_after(widths, gain, lr, steps, seed=0):
    """Initial loss, loss after ``steps`` full-batch GD steps (inf once it overflows) and the initial output scale."""
    params = mlp.init_mlp(widths, gain, seed, "leaky_relu")
    L0 = mlp.loss_value(params, _XOR_X, _XOR_Y, "leaky_relu", "mse_mean")
    out0 = mlp.forward(params, _XOR_X, "leaky_relu")[-1]
    L = L0
    with np.errstate(all="ignore"):
        for _ in range(steps):
            L, g = mlp.loss_and_grads(params, _XOR_X, _XOR_Y, "leaky_relu", "mse_mean")
            if not math.isfinite(L) or L > 1e100:
                return L0, math.inf, float(np.max(np.abs(out0)))
            params = [(W - lr * gW, b - lr * gb) for (W, b), (gW, gb) in zip(params, g)]
        L = mlp.loss_value(params, _XOR_X, _XOR_Y, "leaky_relu", "mse_mean")
    return L0, (L if math.isfinite(L) else math.inf), float(np.max(np.abs(out0)))


@table2.reproduction
def table2_check(p):
    """Parse Table 2 and check it against App. B's prose; the XOR High rate 3e-9 is stable, 300x is not."""
    L, bad = _need_seed()
    if bad:
        return bad
    t2 = _table2(L)
    xor_rows = [k for k in t2 if k.startswith("XOR")]
    blob_rows = [k for k in t2 if k.startswith("Blobs")]
    bad_rows = []
    for k in xor_rows:
        r = t2[k]
        want_hidden = 1 if "2 layers" in k else 20
        if r["nonlinearity"] != "leaky relu" or r["units"] != 500 or r["hidden"] != want_hidden:
            bad_rows.append(k)
    for k in blob_rows:
        if t2[k]["nonlinearity"] != "tanh" or t2[k]["units"] != 100:
            bad_rows.append(k)
    gx = [t2[f"XOR {n} weights"]["gain"] for n in ("Low", "Intermediate", "High")]
    gb = [t2[f"Blobs {n} weights"]["gain"] for n in ("Very low", "Low", "High")]
    hi = t2["XOR High weights"]
    widths = [2] + [hi["units"]] * hi["hidden"] + [1]
    L0, L1, out1 = _loss_after(widths, hi["gain"], hi["lr"], 10)
    _, L2, _ = _loss_after(widths, hi["gain"], 300 * hi["lr"], 10)
    return Outcome.from_parts(
        {"rows parsed (9 expected)": (abs(len(t2) - 9), 0),
         "rows inconsistent with App. B prose": (len(bad_rows), 0),
         "XOR gains increasing": (0 if gx == sorted(gx) and len(set(gx)) == 3 else 1, 0),
         "Blob gains increasing": (0 if gb == sorted(gb) and len(set(gb)) == 3 else 1, 0),
         "lr 3e-9: loss after 10 steps / initial < 1": (L1 / L0, 1.0 - 1e-12),
         "lr 300 x 3e-9: loss after 10 steps / initial > 1 (inverse < 1)": (L0 / L2, 1.0 - 1e-12)},
        "Table 2 parsed from the seed", values={"table2": t2, "inconsistent_rows": bad_rows,
                                                "xor_high_initial_loss": L0, "xor_high_loss_10_steps": L1,
                                                "xor_high_loss_10_steps_300x": L2, "xor_high_initial_output_scale": out1})
