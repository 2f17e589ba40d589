"""§7.3 Background (seed l.4721-4796): the linear maximization oracle over the permutohedron (Prop 7.1, the worked
example, (7.2)-(7.4); l.4736-4815; proof §7.A.1, l.5031-5038).  Claim: ``sander.topk_lmo``.

Conventions and the operator-output error model (chapter 7): ``theorems.sander._attention``.
"""
from __future__ import annotations

import itertools

import numpy as np

from solvers import topk as tk
from theorems.claim import Claim, Outcome, Param, ParamError
from theorems.sander._attention import _validate_nk, _x_of

EPS = float(np.finfo(float).eps)


def _validate_lmo(p):
    _validate_nk(p)
    if p.get("x") is not None and p.x.size > 7:
        raise ParamError(f"parameter x has length {p.x.size}; at most 7 (the LMO is checked by brute force "
                         f"over all n! permutations, like n)")


# ===========================================================================
# P7.1, D7.1, (7.2)-(7.4)
lmo = Claim(
    id="sander.topk_lmo",
    title="LMO over the permutohedron: f(x,w) = sum w_i x_[i], y = w_rank(x); sort, rank, top-k as LPs",
    label="Prop 7.1, (7.2)-(7.4)",
    section="7.3-7.4",
    equation="(7.1)-(7.4)",
    lines=(4736, 4815),
    statement=r"w_1\ge\dots\ge w_n:\ f(\mathbf x,\mathbf w)=\sum_iw_ix_{[i]},\ \mathbf y(\mathbf x,\mathbf w)="
              r"\mathbf w_{\mathrm{rank}(\mathbf x)};\ \mathrm{topkmask}=\mathbf y(\mathbf x,\mathbf 1_k),\ "
              r"\mathrm{topkmag}=\mathbf y_{x^2/2}(\mathbf x,\mathbf 1_k)",
    status="holds",
    params=[
        Param.int("n", 5, 1, 7, "dimension (brute force over n! permutations)", search=(1, 6)),
        Param.int("k", 2, 1, 7, "k of the top-k mask", search=(1, 3)),
        Param.seed("seed of x and w"),
        Param.vector("x", None, "your own x (overrides n, seed); entries within +-1e100, since (7.3)-(7.4) square x",
                     low=-1e100, high=1e100),
    ],
    validate=_validate_lmo,
    notes="Brute force: the maximum of <x, w_sigma> over all permutations sigma (the vertices of P(w)). "
          "Also the worked example of l.4752-4760 (x = (0.2, -0.9, 0.5), k = 2), the LPs for sort and rank, "
          "P(1_k) = {<y,1> = k, y in [0,1]^n} (vertex check), and (7.3)-(7.4) with phi = x^2/2 and the signed mask "
          "phi = |x|.",
    catalogue="sander_part23 §2.4 D7.1, P7.1, P7.1b, F7.1",
    covers=("D7.1", "P7.1", "P7.1b", "F7.1"),
)


@lmo.numeric
def _(p):
    """Brute-force LMO against the sorting formula; sort/rank/topk LPs; the worked example."""
    x = _x_of(p)
    n = x.size
    k = min(p.k, n)
    rng = np.random.default_rng(p.seed + 1)
    w = rng.standard_normal(n)
    perms = list(itertools.permutations(range(n)))
    vals = [float(np.dot(x, w[list(s)])) for s in perms]
    best = int(np.argmax(vals))
    f, y = tk.lmo(x, w)
    tol = 8 * n * EPS * float(np.sum(np.abs(x)) * np.max(np.abs(w)) + 1)
    ties = sorted(vals)[-2] if len(vals) > 1 else -np.inf
    parts = {"value": (abs(f - vals[best]), tol)}
    if vals[best] - ties > tol:      # unique maximiser: the argmax must agree
        parts["argmax"] = (float(np.max(np.abs(y - w[list(perms[best])]))), 0.0)
    rho = np.arange(n, 0, -1).astype(float)
    parts["sort_LP"] = (float(np.max(np.abs(tk.lmo(rho, x)[1] - np.sort(x)[::-1][np.argsort(np.argsort(-rho))]))), 0.0)
    rank = np.empty(n)
    rank[np.argsort(-x, kind="stable")] = np.arange(1, n + 1)
    y_rank = tk.lmo(-x, rho)[1]
    if np.unique(x).size == n:
        parts["rank_LP"] = (float(np.max(np.abs(y_rank - rank))), 0.0)
    else:  # tied entries: every order of the tied ranks maximises the LP; the value and the ranks used decide
        parts["rank_LP_value"] = (abs(float(np.dot(x, y_rank) - np.dot(x, rank))),
                                  8 * n * EPS * float(n * np.sum(np.abs(x)) + 1))
        parts["rank_LP_ranks"] = (float(np.max(np.abs(np.sort(y_rank) - np.sort(rho)))), 0.0)
    mask = tk.hard_topkmask(x, k)
    parts["topkmask_in_P(1_k)"] = (abs(mask.sum() - k) + float(np.sum(mask * (1 - mask))), 0.0)
    # (7.3)-(7.4): y_phi = phi'(x) o y(phi(x), 1_k)
    wk = (np.arange(n) < k).astype(float)
    mag_lp, mag = x * tk.lmo(x * x / 2, wk)[1], tk.hard_topkmag(x, k)
    a = np.sort(np.abs(x))[::-1]
    if k < n and a[k - 1] == a[k]:  # |x| tied at the k-th place: either tied entry is a top-k magnitude
        parts["topkmag_(7.4)_magnitudes"] = (float(np.max(np.abs(np.sort(np.abs(mag_lp)) - np.sort(np.abs(mag))))), 0.0)
    else:
        parts["topkmag_(7.4)"] = (float(np.max(np.abs(mag_lp - mag))), 0.0)
    ex = np.array([0.2, -0.9, 0.5])
    example = {"argsort": (np.argsort(-ex, kind="stable") + 1).tolist(),
               "rank": tk.lmo(-ex, np.array([3.0, 2.0, 1.0]))[1].tolist(),
               "topkmask": tk.hard_topkmask(ex, 2).tolist(), "topk": (ex * tk.hard_topkmask(ex, 2)).tolist(),
               "topkmag": tk.hard_topkmag(ex, 2).tolist()}
    want = {"argsort": [3, 1, 2], "rank": [2, 3, 1], "topkmask": [1, 0, 1], "topk": [0.2, 0, 0.5],
            "topkmag": [0, -0.9, 0.5]}
    parts["worked_example"] = (float(sum(np.max(np.abs(np.array(example[k_]) - np.array(want[k_]))) for k_ in want)), 0.0)
    return Outcome.from_parts(parts, "LMO by sorting", values={"worked_example": example, "n_permutations": len(perms)})


lmo.property(over=("n", "k", "seed"), max_examples=15)


@lmo.falsifier("unsorted_w", search=("seed",))
def _(p):
    """Using w in ascending order without sorting: sum_i w_i x_[i] is the minimum, not the LMO value."""
    x = _x_of(p)
    n = x.size
    w = np.sort(np.random.default_rng(p.seed + 1).standard_normal(n))
    wrong = float(np.dot(np.sort(x)[::-1], w))
    true = max(float(np.dot(x, w[list(s)])) for s in itertools.permutations(range(n)))
    return Outcome(residual=abs(wrong - true), tolerance=8 * n * EPS * float(np.sum(np.abs(x)) * np.max(np.abs(w)) + 1),
                   values={"wrong": wrong, "true": true})
