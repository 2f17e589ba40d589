"""Chapter 7 (fast, differentiable and sparse top-k): the LMO over the permutohedron (Prop 7.1, the worked
example, (7.2)-(7.4)), the relaxed operators by isotonic regression (Props 7.2, 7.5, 7.6) solved three ways,
Dykstra (Alg. 7.7, erratum E7.2), smoothness and sparsity in p (Figs 7.1/7.3), the biconjugate (Prop 7.4,
erratum E7.1), the lambda -> infinity limits (Discussion, erratum E7.3), the error bound of the Example,
the Jacobian (Prop 7.8), the k-support conjugate (Prop 7.3), k-support negentropy (7.B.1), and the
experiments (registered, not reproduced).

Conventions (catalogue sander_part23 §1, §6 A7): ``R = (lam/p)|.|_p^p``, ``q = p/(p-1)``, ``w = 1_k``;
the mask uses phi(x) = x, topkmag phi(x) = x^2/2 (``solvers.topk``).  Fig 7.1's lambda is unstated: lam = 1.

Error model for operator outputs (used throughout): the pooled values gamma are computed to a few ulps of
their scale ``S = max|x| + lam k`` (closed forms, or bisection to the last bit), so ``|du| <= 64 n eps S``;
``y = lam^(1-q) psi(x - u)`` then moves by at most ``lam^(1-q) (q-1) max|x-u|^(q-2) |du|`` for q >= 2 and by
``2 lam^(1-q) |du|^(q-1)`` for 1 < q < 2 (Hoelder continuity of |u|^(q-1)).
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import sympy as sp

from solvers import topk as tk
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

EPS = float(np.finfo(float).eps)


def _y_tol(x, k, lam, p, n_scale=64, y=None):
    """Entrywise error of y = grad R*(x - u) for an error du = n_scale n u S in the isotonic solution u.
    For q = p/(p-1) >= 2: dy/dz = ((q-1)/lam) (|z|/lam)^(q-2) = ((q-1)/lam) |y|^((q-2)/(q-1)); with the outputs y
    of the solvers compared (``y``, a posteriori) |y| <= Y = max(1, max|y|) and the slope is <= (q-1) Y/lam (audit:
    the a priori (2S)^(q-2) lam^(1-q) gave 4e124 near p = 1, a tolerance that cannot fail).  Without ``y``: the
    a priori bound.  For q < 2: Hoelder, 2 lam^(1-q) du^(q-1)."""
    q = p / (p - 1)
    n = len(x)
    S = float(np.max(np.abs(x))) + lam * k + 1.0
    du = n_scale * n * EPS * S
    if q >= 2:
        if y is not None:
            Y = max(1.0, max(float(np.max(np.abs(v))) for v in y))
            return (q - 1) / lam * Y * du * (1 + (q - 2) * du / lam) + 4 * n * EPS
        return lam ** (1 - q) * (q - 1) * (2 * S) ** (q - 2) * du + 4 * n * EPS
    return 2 * lam ** (1 - q) * du ** (q - 1) + 4 * n * EPS


def _draw_x(p):
    rng = np.random.default_rng(p.seed)
    return rng.uniform(-5, 5, p.n)


def _validate_nk(p):
    if p.get("x") is not None:
        if p.x.ndim != 1 or p.x.size < 2:
            raise ParamError("parameter x must be a vector of length >= 2")
        if p.get("k") is not None and p.k > p.x.size:
            raise ParamError(f"parameter k={p.k} exceeds the length n={p.x.size} of x")
    elif p.get("k") is not None and p.get("n") is not None and p.k > p.n:
        raise ParamError(f"parameter k={p.k} must be <= n={p.n}")


def _double_range(lam, pp):
    """Why lam and p put the regularised operator out of double range, or None.  grad R* (u) =
    lam^(1-q) |u|^(q-1) sign(u) with q = p/(p-1): lam^(1-q) overflows when |(1-q) log10 lam| > 300
    (lam = 5e-324, or p next to 1 with lam < 1), and |u|^(q-1) overflows or underflows for q > 300."""
    q = pp / (pp - 1)
    if not q - 1 <= 300:
        return inconclusive(f"p={pp!r} is so close to 1 that q = p/(p-1) = {q:.3g}: |u|^(q-1) over- or underflows a "
                            f"double for every |u| != 1", q=q)
    mag = (1 - q) * math.log10(lam)
    if not abs(mag) <= 300:
        return inconclusive(f"lam={lam!r}, p={pp!r}: lam^(1-q) = 10^{mag:.4g} is out of double range (q = {q:.4g})",
                            q=q, log10_scale=mag)
    return None


def _in_double_range(f):
    """A check of the regularised operator: inconclusive when lam, p are out of double range (above)."""
    @functools.wraps(f)
    def checked(p):
        return _double_range(p.lam, p.get("p", 2.0)) or f(p)
    return checked


def _validate_lmo(p):
    _validate_nk(p)
    if p.get("x") is not None and p.x.size > 7:
        raise ParamError(f"parameter x has length {p.x.size}; at most 7 (the LMO is checked by brute force "
                         f"over all n! permutations, like n)")


def _x_of(p):
    return np.array(p.x, dtype=float) if p.get("x") is not None else _draw_x(p)


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


# ===========================================================================
# P7.2 / P7.5 / P7.6: three solvers
relaxed = Claim(
    id="sander.topk_relaxed",
    title="Relaxed top-k operators by isotonic regression on the sorted input (PAV closed form, PAV bisection, KKT)",
    label="Props 7.2, 7.5, 7.6",
    section="7.4-7.5",
    equation="(7.5)-(7.6)",
    lines=(4825, 4912),
    statement=r"\mathbf y_{\varphi,R}=\nabla R^*(\mathbf x-\mathbf u^*),\ \mathbf u^*=\mathrm{sign}(\mathbf x)\circ"
              r"\mathbf v^*_{\sigma^{-1}},\ \mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n(\ge0)}R^*(\mathbf s-\mathbf v)"
              r"+f_\varphi(\mathbf v,\mathbf w)",
    status="holds",
    params=[
        Param.int("n", 8, 2, 60, "dimension", search=(2, 10)),
        Param.int("k", 3, 1, 59, "k", search=(1, 5)),
        Param.float("lam", 0.7, 0.0, 100.0, "regularisation strength lambda", low_open=True, search=(0.05, 3.0)),
        Param.float("p", 4 / 3, 1.0, 4.0, "p of R = (lam/p)|y|_p^p (p > 1)", low_open=True, search=(1.1, 3.0)),
        Param.choice("op", "mag", ["mask", "mag"], "phi(x) = x (mask) or phi(x) = x^2/2 (topkmag)"),
        Param.seed("seed of x (uniform in [-5, 5])"),
        Param.vector("x", None, "your own x (overrides n, seed)"),
    ],
    validate=_validate_nk,
    notes="Three independent routes: PAV with the closed-form pooling (p = 2 linear, p = 4/3 the cubic of App. "
          "7.A.6), PAV with bisection pooling (any p), and a KKT solver with no isotonic regression (capped simplex "
          "for the mask; the Prop 7.3 variational form for topkmag). For the mask also sum y = k and y in [0, 1]. "
          "Proof typo: 'max_{v_1 >= ...}' at l.5105 is min. Tolerance (_y_tol): for p <= 2 the a posteriori slope "
          "(q-1) max(1,|y|)/lam times the isotonic error 64 n u S (audit: the a priori (2S)^(q-2) lam^(1-q) factor "
          "reached 4e124 near p = 1); for p > 2 (q < 2) y = |z|^(q-1) is only Hoelder at z = 0 and the worst case "
          "2 lam^(1-q) du^(q-1) is ~1e-6, 10^10 above the typical residual: it is the bound for an entry at the "
          "threshold, where the comparison cannot resolve more.",
    catalogue="sander_part23 §2.4 P7.2, P7.5/P7.6, C7.1",
    covers=("P7.2", "P7.5", "P7.6"),
)


def _relaxed_outputs(p, x, k):
    mag = p.op == "mag"
    yb = tk.relaxed(x, k, p.lam, p.p, mag, "bisect")
    yk = tk.kkt_mag(x, k, p.lam, p.p) if mag else tk.kkt_mask(x, k, p.lam, p.p)
    closed = p.p == 2.0 or abs(p.p - 4 / 3) < 1e-12
    yc = tk.relaxed(x, k, p.lam, 4 / 3 if abs(p.p - 4 / 3) < 1e-12 else p.p, mag, "closed") if closed else None
    return yb, yk, yc


@relaxed.numeric
@_in_double_range
def _(p):
    """PAV (closed form and bisection) and the KKT solver agree entrywise; the mask lies in P(1_k)."""
    x = _x_of(p)
    k = min(p.k, x.size)
    yb, yk, yc = _relaxed_outputs(p, x, k)
    tol = _y_tol(x, k, p.lam, p.p, y=[v for v in (yb, yk, yc) if v is not None])
    parts = {"pav_bisect_vs_kkt": (float(np.max(np.abs(yb - yk))), 2 * tol)}
    if yc is not None:
        parts["pav_closed_vs_bisect"] = (float(np.max(np.abs(yc - yb))), 2 * tol)
    if p.op == "mask":
        parts["sum_y_equals_k"] = (abs(float(yb.sum()) - k), x.size * tol)
        parts["y_in_[0,1]"] = (float(max(0.0, -yb.min(), yb.max() - 1)), tol)
    return Outcome.from_parts(parts, "three solvers", values={"y": yb.tolist(), "nonzeros": int(np.count_nonzero(yb)),
                                                              "k": k})


relaxed.property(over=("n", "k", "lam", "p", "op", "seed"), max_examples=20)


@relaxed.falsifier("unsorted_input", search=("seed",))
@_in_double_range
def _(p):
    """PAV on the unsorted input (skipping sigma): entries differ from the true operator (sum y may still be k)."""
    x = _x_of(p)
    k = min(p.k, x.size)
    mag = p.op == "mag"
    wrong = tk.relaxed(x, k, p.lam, p.p, mag, "bisect", sort_input=False)
    right = tk.relaxed(x, k, p.lam, p.p, mag, "bisect")
    return Outcome(residual=float(np.max(np.abs(wrong - right))), tolerance=2 * _y_tol(x, k, p.lam, p.p),
                   values={"sum_wrong": float(wrong.sum()), "sum_right": float(right.sum())})


@relaxed.falsifier("grad_R_not_grad_Rstar", fixed={"op": "mask", "p": 2.0, "lam": 0.5})
def _(p):
    """y = grad R(x - u) in place of grad R*(x - u) (lam = 0.5): the mask no longer sums to k."""
    x = _x_of(p)
    k = min(p.k, x.size)
    sigma = np.argsort(-x, kind="stable")
    w = (np.arange(x.size) < k).astype(float)
    v, _ = tk.pav(x[sigma], w, p.lam, p.p, False)
    u = np.empty_like(x)
    u[sigma] = v
    y = p.lam * np.sign(x - u) * np.abs(x - u) ** (p.p - 1)
    return Outcome(residual=abs(float(y.sum()) - k), tolerance=x.size * _y_tol(x, k, p.lam, p.p),
                   values={"sum_y": float(y.sum()), "k": k})


# ===========================================================================
# A7.7 / E7.2 Dykstra
dyk = Claim(
    id="sander.topk_dykstra",
    title="Dykstra's algorithm as printed (Alg. 7.7) solves the isotonic problem with 2w, not w",
    label="Alg. 7.7",
    section="7.5",
    equation="",
    lines=(4948, 4954),
    statement=r"\mathbf v^0=\mathbf s,\ \mathbf y^k=\arg\min_{C_1}\tfrac12\|\mathbf v^k+\mathbf p^k-\mathbf y\|^2+"
              r"\langle\mathbf y,\mathbf w\rangle,\ \mathbf v^{k+1}=\arg\min_{C_2}\tfrac12\|\mathbf y^k+\mathbf q^k-"
              r"\mathbf v\|^2+\langle\mathbf v,\mathbf w\rangle\ \to\ \mathbf v^*=\arg\min_{v_1\ge\dots\ge v_n}"
              r"\tfrac12\|\mathbf s-\mathbf v\|^2+\langle\mathbf w,\mathbf v\rangle",
    status="erratum",
    corrected=r"\text{start at }\mathbf v^0=\mathbf s-\mathbf w\text{ with pure projections onto }C_1,C_2"
              r"\ (\text{or use }\mathbf w/2\text{ in each half-step});\ \text{as printed the limit solves the problem with }2\mathbf w",
    params=[
        Param.int("n", 9, 2, 400, "dimension", search=(2, 30)),
        Param.int("k", 3, 1, 399, "w = 1_k", search=(1, 8)),
        Param.seed("seed of the sorted input s ~ N(0, 1)"),
        Param.int("iters", 5000, 1, 10**6, "Dykstra iterations"),
    ],
    validate=_validate_nk,
    notes="phi = id, R = |.|^2/2 (lam = 1), w = 1_k: the pooled problem is the projection of s - w onto the monotone "
          "cone, which PAV solves exactly. Each printed half-step subtracts w and p + q + v = s is invariant, so the "
          "fixed point is optimal for the linear term 2w. Dykstra converges linearly; we run until an iteration "
          "changes v by <= 1e-15 (max norm) and report the iterations.",
    catalogue="sander_part23 §2.4 A7.7; §4 E7.2",
    covers=("A7.7", "E7.2"),
)


def _dyk_instance(p):
    rng = np.random.default_rng(p.seed)
    s = np.sort(rng.standard_normal(p.n))[::-1]
    w = (np.arange(p.n) < min(p.k, p.n)).astype(float)
    return s, w


def _dyk_tol(s, it):
    return 1e-12 + 8 * len(s) * EPS * float(np.max(np.abs(s)) + 2)


@dyk.numeric
def _(p):
    """Standard Dykstra (start s - w, pure projections) equals PAV(w)."""
    s, w = _dyk_instance(p)
    v, it = tk.dykstra(s, w, p.iters, tol=1e-15)
    v_pav, _ = tk.pav(s, w, 1.0, 2.0, False)
    if it >= p.iters:
        return inconclusive(f"Dykstra did not settle within {p.iters} iterations", iterations=it)
    # error model: stopping at a step of <= 1e-15 leaves a distance to the limit of ~ step/(1 - rate); 1e-12 covers
    # rates up to 0.999, plus rounding of the pairwise averages
    return Outcome(residual=float(np.max(np.abs(v - v_pav))), tolerance=_dyk_tol(s, it),
                   values={"iterations": it}, message="|Dykstra - PAV(w)|_max")


dyk.property(over=("n", "k", "seed"), max_examples=12)


@dyk.falsifier("stated")
def _(p):
    """Algorithm 7.7 as printed against PAV(w): off by O(1); it matches PAV(2w) instead (values)."""
    s, w = _dyk_instance(p)
    v = tk.dykstra_printed(s, w, p.iters)
    v1, _ = tk.pav(s, w, 1.0, 2.0, False)
    v2, _ = tk.pav(s, 2 * w, 1.0, 2.0, False)
    return Outcome(residual=float(np.max(np.abs(v - v1))), tolerance=_dyk_tol(s, p.iters),
                   values={"printed_vs_PAV_w": float(np.max(np.abs(v - v1))),
                           "printed_vs_PAV_2w": float(np.max(np.abs(v - v2)))})


dspeed = Claim(
    id="sander.topk_dykstra_speed",
    title="'When w = 1_k, Dykstra converges surprisingly fast' (100 iterations reproduce PAV)",
    label="l.4954, l.5237",
    section="7.5",
    equation="",
    lines=(4954, 4954),
    statement=r"\mathbf w=\mathbf 1_k:\ \text{Dykstra converges surprisingly fast; 100 iterations give the PAV output}",
    status="empirical",
    params=[],
    notes="Scale dependent (catalogue A7.7b): at the MoE size n = 400, k = 28, lam = 1 the error on y after 10/100/1000 "
          "iterations is 0.775/0.693/0.269 for logit scale 0.1 but 6.4e-8/1.8e-15 for scale 10. The reproduction "
          "recomputes this table on a fresh draw and compares orders of magnitude. TPU timings (Fig 7.4) not reproduced.",
    catalogue="sander_part23 §2.4 A7.7b",
    covers=("A7.7b",),
)


@dspeed.reproduction(name="moe_table")
def _(p):
    """n = 400, k = 28, lam = 1: error of Dykstra's y after 10/100/1000 iterations on a fresh draw. Entries quoted
    >= 1e-3 (slow regime, scale 0.1 and 1) must agree within a factor 10 (|log10 ratio| <= 1); the fast regime (scale 10)
    is draw-dependent after 10 iterations (quoted 6.4e-8), so we assert the quoted trend: <= 1e-6 after 100
    iterations (quoted 1.8e-15), while scale 0.1 is still > 0.1 off after 1000 iterations."""
    quoted = {(0.1, 10): 0.775, (0.1, 100): 0.693, (0.1, 1000): 0.269, (1.0, 10): 0.335, (1.0, 100): 0.133,
              (1.0, 1000): 1.2e-3, (10.0, 10): 6.4e-8, (10.0, 100): 1.8e-15}
    rng = np.random.default_rng(0)
    z = np.sort(rng.standard_normal(400))[::-1]
    w = (np.arange(400) < 28).astype(float)
    ours = {}
    for (sc, it) in quoted:
        s = sc * z
        v_pav, _ = tk.pav(s, w, 1.0, 2.0, False)
        v, _ = tk.dykstra(s, w, it)
        ours[(sc, it)] = float(np.max(np.abs((s - v) - (s - v_pav))))      # y = s - v for the mask, lam = 1
    slow = max(abs(math.log10(max(ours[k], 1e-300) / q)) for k, q in quoted.items() if q >= 1e-3)
    parts = {"slow_regime_log10_ratio": (slow, 1.0), "fast_after_100": (ours[(10.0, 100)], 1e-6),
             "scale_0.1_not_converged_after_1000": (0.0 if ours[(0.1, 1000)] > 0.1 else 1.0, 0.0)}
    return Outcome.from_parts(parts, "Dykstra speed depends on the logit scale",
                              values={"ours": {f"scale={a},iters={b}": v for (a, b), v in ours.items()},
                                      "quoted": {f"scale={a},iters={b}": v for (a, b), v in quoted.items()}})


# ===========================================================================
# D7.2 (7.A.8) dual block coordinate ascent
def _hprime_inv(z, s_i, w_i, lam, q):
    """(h_i^*)'(z): the v with h_i'(v) = z, h_i(v) = r*(s_i - v) + w_i v (mask): psi(v - s_i) = lam^(q-1)(z - w_i)."""
    u = lam ** (q - 1) * (z - w_i)
    return s_i + math.copysign(abs(u) ** (1 / (q - 1)), u)


def _hprime(v, s_i, w_i, lam, q):
    u = v - s_i
    return lam ** (1 - q) * math.copysign(abs(u) ** (q - 1), u) + w_i


def _dual_ascent(s, w, lam, p, max_sweeps=50_000, tol=0.0):
    """Block coordinate ascent on the dual of (7.5) (App. 7.A.8): odd then even alpha_i, each a two-element pooling with
    the neighbours' multipliers as extra linear terms, clipped at 0.  Returns (v, sweeps)."""
    n = len(s)
    q = p / (p - 1)
    a = np.zeros(n + 1)                      # a[0] = a[n] = 0 fixed; a[1..n-1] free (a_i couples v_i, v_(i+1))
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        old = a.copy()
        for parity in (1, 0):
            for i in range(1, n):
                if i % 2 != parity:
                    continue
                # v_i = v_(i+1) = g with h_i'(g) = a_i - a_(i-1), h_(i+1)'(g) = a_(i+1) - a_i
                wb = np.array([w[i - 1] + a[i - 1], w[i] - a[i + 1]])
                g = tk.pool(s[i - 1:i + 1], wb, lam, p, False, "closed" if p in (2.0, 4 / 3) else "bisect")
                a[i] = max(0.0, _hprime(g, s[i - 1], w[i - 1], lam, q) + a[i - 1])
        if np.max(np.abs(a - old)) <= tol:
            break
    v = np.array([_hprime_inv(a[i + 1] - a[i], s[i], w[i], lam, q) for i in range(n)])
    return v, sweeps


dual = Claim(
    id="sander.topk_dual_ascent",
    title="Block coordinate ascent in the dual of the isotonic problem (the non-Euclidean 'Dykstra') recovers PAV",
    label="App. 7.A.8",
    section="7.A.8",
    equation="",
    lines=(5165, 5187),
    statement=r"\min_{v_1\ge\dots\ge v_n}\sum_ih_i(v_i)=\max_{\alpha\in\mathbb R_+^{n-1}}-\sum_ih_i^*(\alpha_i-\alpha_{i-1}),"
              r"\ v_i^*=(h_i^*)'(\alpha_i^*-\alpha_{i-1}^*)",
    status="holds",
    params=[
        Param.int("n", 12, 2, 40, "dimension", search=(2, 12)),
        Param.int("k", 4, 1, 39, "w = 1_k", search=(1, 5)),
        Param.float("p", 4 / 3, 1.0, 3.0, "p (closed-form pooling for 2 and 4/3, bisection otherwise)", low_open=True,
                    search=(1.2, 2.5)),
        Param.float("lam", 1.0, 0.0, 10.0, "lambda", low_open=True, search=(0.2, 3.0)),
        Param.seed("seed of the sorted s (N(0, 1) times 2, descending)"),
    ],
    validate=_validate_nk,
    notes="phi = id (mask). Run until a sweep changes alpha by 0 in floating point (at most 50000 sweeps; "
          "inconclusive otherwise). Tolerance: the operator error model of the module docstring applied to v.",
    catalogue="sander_part23 §2.4 D7.2",
    covers=("D7.2",),
)


def _dual_instance(p):
    rng = np.random.default_rng(p.seed)
    s = np.sort(2 * rng.standard_normal(p.n))[::-1]
    return s, (np.arange(p.n) < min(p.k, p.n)).astype(float)


@dual.numeric
@_in_double_range
def _(p):
    """Dual coordinate ascent and PAV give the same v (entrywise)."""
    s, w = _dual_instance(p)
    v, sweeps = _dual_ascent(s, w, p.lam, p.p)
    if sweeps >= 50_000:
        return inconclusive("dual ascent did not settle in 50000 sweeps")
    v_pav, _ = tk.pav(s, w, p.lam, p.p, False, "closed" if p.p in (2.0, 4 / 3) else "bisect")
    S = float(np.max(np.abs(s))) + p.lam * p.k + 1
    tol = 1e3 * p.n * EPS * S
    return Outcome(residual=float(np.max(np.abs(v - v_pav))), tolerance=tol, values={"sweeps": sweeps})


dual.property(over=("n", "k", "p", "lam", "seed"), max_examples=8)


@dual.falsifier("no_clipping", search=("seed",))
@_in_double_range
def _(p):
    """Without the projection alpha_i >= 0 the ascent solves the unconstrained problem (all v_i pooled into one value
    per chain) -- not the isotonic solution."""
    s, w = _dual_instance(p)
    q = p.p / (p.p - 1)
    # unconstrained dual <=> equality constraints v_1 = ... = v_n: one pool
    g = tk.pool(s, w, p.lam, p.p, False, "closed" if p.p in (2.0, 4 / 3) else "bisect")
    v_pav, _ = tk.pav(s, w, p.lam, p.p, False, "closed" if p.p in (2.0, 4 / 3) else "bisect")
    S = float(np.max(np.abs(s))) + p.lam * p.k + 1
    return Outcome(residual=float(np.max(np.abs(g - v_pav))), tolerance=1e3 * p.n * EPS * S)


# ===========================================================================
# C7.2 smoothness and sparsity (Figs 7.1, 7.3)
smooth = Claim(
    id="sander.topk_smoothness",
    title="p = 4/3 gives a C^1 (differentiable everywhere) sparse top-k mask; p = 2 only a.e. differentiable",
    label="Fig 7.1, l.4861",
    section="7.4",
    equation="",
    lines=(4861, 4862),
    statement=r"p\in(1,2):\ \mathbf y_{\varphi,R}\ \text{differentiable everywhere and sparse};\ p=2:\ "
              r"\text{differentiable a.e. and sparse}",
    status="erratum",
    corrected=r"p\in(1,2):\ \mathbf y_{\varphi,R}\ \text{differentiable except where a coordinate enters or leaves the "
              r"cap }y_i=1\text{ (the box face of }P(\mathbf 1_k)\text{), and sparse for small }\lambda",
    params=[
        Param.float("p", 4 / 3, 1.0, 1.5, "p in (1, 3/2] (where F' is Lipschitz, so the O(h) kink test applies)",
                    low_open=True, search=(1.2, 1.5)),
        Param.float("lam", 1.0, 0.0, 10.0, "lambda (Fig 7.1: unstated, 1)", low_open=True),
        Param.float("h", 1e-3, 1e-5, 1e-2, "grid step of the finite-difference derivative"),
    ],
    notes="Fig 7.1 path theta(s) = (3, 1, -1+s, s), k = 2, F(s) = y_2 + y_3 of the relaxed mask for s in [1.5, 3.5] "
          "(the kinks of p = 2 lie at the ends of the zero interval [2, 3]). "
          "Kink test: the largest jump of the difference quotient between adjacent cells is <= 2 h sup|F''| for a "
          "C^1, piecewise C^2 F (O(h)), but O(1) at a kink. sup|F''| is estimated at step 10 h (jump/(10 h)), the test "
          "at step h allows twice that: jump(h) <= 4 h jump(10h)/(10h). A kink keeps jump(h) ~ jump(10h) and fails. "
          "Sparsity: F = 0 exactly on the middle of [2, 3] (both p). The p = 2 variant is the falsifier. For p in (3/2, 2) "
          "F' is only Hoelder with exponent q - 2 < 1 near the threshold (y ~ (x - tau)^(q-1)), so the jump decays like "
          "h^(q-2) and this two-decade test does not apply (p = 1.75: ratio 0.51 per decade, expected 10^(-1/3) = 0.46); "
          "the parameter range is restricted to (1, 3/2]. "
          "AUDIT (status holds -> erratum): the p-norm smooths only the zero threshold ((x - tau)_+^(q-1) is C^1 at 0), "
          "not the cap y_i = 1 of P(1_k): clip(((x_i - tau)/lam)^(q-1), 0, 1) has slope (q-1)/lam on one side of the cap. "
          "On Fig 7.1's path at lam = 1 every cap transition falls where y_2 = y_3 = 0, so the figure shows no kink; at "
          "lam = 2, p = 4/3, y_1 leaves the cap at s = 2.93 and F' jumps from 0 to 0.151 (one-sided quotients at h = 1e-5; "
          "PAV and the independent KKT bisection give the same values); the former check was refuted for every lam >= 1.1. "
          "The numeric check tests the corrected statement (kink test with the cells at cap transitions left out; exact "
          "zeros only for lam <= 1, Fig 7.1's regime: for larger lam the path need not be sparse); the falsifier "
          "'stated' (the printed statement) runs the kink test over the whole path at lam = 2.",
    catalogue="sander_part23 §2.4 C7.2",
    covers=("C7.2",),
)


def _path_F(s_grid, p, lam):
    return np.array([float(np.sum(tk.relaxed(np.array([3.0, 1.0, -1.0 + s, s]), 2, lam, p, False,
                                              "closed" if p in (2.0, 4 / 3) else "bisect")[1:3])) for s in s_grid])


def _path_Y(s_grid, p, lam):
    return np.array([tk.relaxed(np.array([3.0, 1.0, -1.0 + s, s]), 2, lam, p, False,
                                "closed" if p in (2.0, 4 / 3) else "bisect") for s in s_grid])


def _cap_cells(Y):
    """Cells [s_j, s_j+1] across which some coordinate enters or leaves the cap y_i = 1 (the box face of the
    capped simplex P(1_k) = {y in [0,1]^n, sum y = k}): there clip(., 0, 1) has slope (q-1)/lam != 0 on one side
    and 0 on the other, so the p-norm does not smooth it."""
    at_cap = Y >= 1 - 1e-12
    return np.any(at_cap[1:] != at_cap[:-1], axis=1)


def _kink_outcome(p, pv, exclude_caps=True):
    """Kink test on F = y_2 + y_3 along the Fig 7.1 path, at steps 10h and h.  With exclude_caps, difference-quotient
    jumps next to a cell where a coordinate crosses the cap 1 are left out (the corrected statement: C^1 away from
    the cap transitions); without, the whole path is tested (the statement as printed)."""
    out = {}
    caps_seen = []
    for h in (10 * p.h, p.h):
        grid = np.arange(1.5, 3.5 + h / 2, h)
        Y = _path_Y(grid, pv, p.lam)
        F = Y[:, 1] + Y[:, 2]
        D = np.diff(F) / h
        J = np.abs(np.diff(D))                      # jump at interior node j+1, between cells j and j+1
        if exclude_caps:
            cap = _cap_cells(Y)
            near = np.zeros(len(J), bool)
            for j in np.nonzero(cap)[0]:
                near[max(j - 2, 0):j + 2] = True
            caps_seen += [float(grid[j]) for j in np.nonzero(cap)[0]]
            J = np.where(near, 0.0, J)
        out[h] = (float(np.max(J)), grid, F)
    big, small = out[10 * p.h][0], out[p.h][0]
    allowed = 4 * p.h * big / (10 * p.h) + 64 * EPS / p.h
    parts = {"C1_kink_test": (small, allowed)}
    Ymid = _path_Y(np.array([2.2, 2.5, 2.8]), pv, p.lam)
    zeros = int(np.sum(Ymid == 0.0))
    if p.lam <= 1.0:
        # Fig 7.1's regime: y_2 = y_3 = 0 exactly in the middle of [2, 3]
        parts["exact_zero_on_[2.2,2.8]"] = (float(np.max(np.abs(Ymid[:, 1] + Ymid[:, 2]))), 0.0)
    grid, F = out[10 * p.h][1], out[10 * p.h][2]
    step = max(1, len(grid) // 200)
    return Outcome.from_parts(parts, f"derivative jumps at h = {10 * p.h:g} and {p.h:g}",
                              values={"jump_10h": big, "jump_h": small, "p": pv,
                                      "cap_transitions_excluded_near_s": sorted(set(round(c, 6) for c in caps_seen)),
                                      "exact_zeros_at_s_2.2_2.5_2.8": zeros,
                                      "plot": {"kind": "line", "x": grid[::step].tolist(),
                                               "series": {f"y2+y3, p={pv:.3g}": F[::step].tolist()},
                                               "xlabel": "s", "ylabel": "y_2 + y_3", "title": "Fig 7.1 path"}})


@smooth.numeric
@_in_double_range
def _(p):
    """Corrected statement: away from the cap transitions the difference-quotient jump shrinks like h for p in (1, 3/2];
    y_2 + y_3 = 0 exactly inside [2, 3] (lam <= 1)."""
    return _kink_outcome(p, p.p)


smooth.property(over=("p", "lam"), max_examples=4, fixed={"h": 2e-3})


@smooth.falsifier("p2_differentiable_everywhere")
def _(p):
    """p = 2: the jump stays 0.5 as h shrinks (a true kink at the zero threshold), so 'differentiable everywhere' fails.
    Whole path (at lam = 1 the zero-threshold kinks of p = 2 coincide with cap transitions, which the corrected
    check leaves out; p = 4/3 passes this whole-path test at lam = 1)."""
    return _kink_outcome(p, 2.0, exclude_caps=False)


@smooth.falsifier("stated")
def _(p):
    """The statement as printed ('differentiable everywhere' for p in (1, 2)) at p = 4/3, lam = 2: y_1 leaves the cap
    1 at s = 2.93 and F' jumps from 0 to 0.151 (left/right quotients at h = 1e-5, PAV and the KKT bisection agree)."""
    return _kink_outcome(p.replace(lam=2.0), p.p, exclude_caps=False)


# ===========================================================================
# P7.4 / E7.1 biconjugate
bicon = Claim(
    id="sander.topk_biconjugate",
    title="Biconjugate of sum phi*(y_i) restricted to k-sparse vectors: needs inf phi = 0",
    label="Prop 7.4",
    section="7.4",
    equation="",
    lines=(4880, 4886),
    statement=r"\Phi_k=\textstyle\sum_i\varphi^*(y_i)+\delta_{S_k},\ \varphi\text{ convex}\ \Rightarrow\ "
              r"\Phi_k^{**}(\mathbf y)=f^*_\varphi(\mathbf y,\mathbf 1_k)",
    status="erratum",
    corrected=r"\Phi_k^{**}(\mathbf y)=f^*_\varphi(\mathbf y,\mathbf 1_k)+(n-k)\varphi^*(0)\quad(\text{equal iff }"
              r"\inf\varphi=0)",
    params=[
        Param.float("c", -1.0, -5.0, 5.0, "phi(x) = x^2/2 + c (phi*(0) = -c)", search=(-3.0, 3.0)),
        Param.float("y1", 0.7, -2.0, 2.0, "first coordinate of y"),
        Param.float("y2", -0.4, -2.0, 2.0, "second coordinate of y"),
    ],
    notes="E7.1. n = 2, k = 1. f*_phi(y, 1_1) = (|y_1| + |y_2|)^2/2 - c (perspective minimum). Both conjugates are "
          "computed numerically from phi alone (audit: the first was a hand-written closed form that already held the "
          "-phi*(0) term the erratum is about): phi* by a discrete sup over a t-grid, Phi_1^*(x) = sup over y in S_1 "
          "by a sup over the supports |I| <= 1 and a y-grid (each coordinate outside I pays phi*(0)), and Phi^** = "
          "sup_x <x,y> - Phi^*(x) on a two-level grid of [-4, 4]^2: the grid value is a lower bound, Lipschitz "
          "continuity (|y| + the y-grid half-width) times the half-diagonal of a cell the upper bound, widened by "
          "E = 2(h_t^2 + h_y^2)/8 for the discrete conjugates (curvature 1, spacing 1e-3). "
          "The proof drops sum_{i not in I} phi*(0) (l.5071-5077).",
    catalogue="sander_part23 §2.4 P7.4; §4 E7.1",
    covers=("P7.4", "E7.1"),
)


_BC_T, _BC_Y = 10.0, 7.0            # t-grid (phi -> phi*) and y-grid (phi* -> Phi^*) half-widths
_BC_HT, _BC_HY = 1e-3, 1e-3         # their spacings


def _legendre(vals, grid, at):
    """Discrete Legendre transform sup_{s in grid} (a s - vals(s)) at every a of ``at`` (chunked max)."""
    out = np.empty(len(at))
    for i in range(0, len(at), 256):
        a = at[i:i + 256, None]
        out[i:i + 256] = np.max(a * grid[None, :] - vals[None, :], axis=1)
    return out


def _phi_star_conj(p, X1, X2, g1, g2):
    """Phi_1^*(x) = sup_{y in S_1} <x, y> - sum_i phi*(y_i), computed numerically from phi alone (n = 2, k = 1):
    phi* = sup_t (t y - phi(t)) on a t-grid, and for each support I in {{}, {1}, {2}} (|I| <= k) the sup over
    y_I of x_I y_I - phi*(y_I) on a y-grid, minus phi*(0) for each coordinate outside I (y_i = 0 there).
    No closed form of phi*, Phi^* or the -phi*(0) term is used: the term appears because the zero
    coordinates of y in S_k still pay phi*(0)."""
    c = p.c
    t = np.arange(-_BC_T, _BC_T + _BC_HT / 2, _BC_HT)
    yv = np.arange(-_BC_Y, _BC_Y + _BC_HY / 2, _BC_HY)
    phi = t ** 2 / 2 + c
    phistar_y = _legendre(phi, t, yv)                 # phi* on the y-grid
    phistar0 = float(np.max(-phi))                    # phi*(0) = sup_t -phi(t)
    H1 = _legendre(phistar_y, yv, g1)[:, None]         # sup_y x1 y - phi*(y), x1 on its 1-D grid
    H2 = _legendre(phistar_y, yv, g2)[None, :]
    return np.maximum(np.maximum(H1 - phistar0, H2 - phistar0), -2 * phistar0) + 0 * X1, phistar0


def _biconj(p):
    """Phi^**(y) = sup_x <x, y> - Phi^*(x) with Phi^* computed numerically (_phi_star_conj) on a two-level grid of
    [-4, 4]^2.  Bracket: the grid sup is a lower bound of the sup of the numerical Phi^*; Lipschitz continuity
    (|y| + Y, Y the y-grid half-width bounding the slopes of the numerical Phi^*) times the half-diagonal of a
    cell gives the upper bound.  Error model of the numerical conjugates (maximisers inside the grids: |x| <= 4
    needs |y| <= 4 < Y = 7, |y| <= 7 needs |t| <= 7 < T = 10): a discrete sup of a concave objective with
    curvature <= 1 (phi'' = phi*'' = 1) on spacing h loses at most h^2/8, so phi*_num in [phi* - h_t^2/8, phi*],
    H_num in [H - h_y^2/8, H + h_t^2/8], and Phi^*_num, Phi^**_num are within E = 2(h_t^2 + h_y^2)/8 of the exact."""
    y = np.array([p.y1, p.y2])
    L = 4.0
    g = np.linspace(-L, L, 801)
    X1, X2 = np.meshgrid(g, g, indexing="ij")
    P, phistar0 = _phi_star_conj(p, X1, X2, g, g)
    V = X1 * y[0] + X2 * y[1] - P
    i, j = np.unravel_index(np.argmax(V), V.shape)
    h = 2 * (g[1] - g[0])
    g1 = np.linspace(g[i] - h, g[i] + h, 801)
    g2 = np.linspace(g[j] - h, g[j] + h, 801)
    X1, X2 = np.meshgrid(g1, g2, indexing="ij")
    P2, _ = _phi_star_conj(p, X1, X2, g1, g2)
    V2 = X1 * y[0] + X2 * y[1] - P2
    lower = float(V2.max())
    cell = g1[1] - g1[0]
    lip = float(np.linalg.norm(y)) + _BC_Y
    E = 2 * (_BC_HT ** 2 + _BC_HY ** 2) / 8
    upper = lower + lip * cell / math.sqrt(2)
    # f*_phi(y, 1_1) = min over z in [0,1]^2, z1 + z2 = 1, of sum z_i phi*(y_i / z_i) (Prop 7.3), phi* = y^2/2 - c:
    # the perspective minimum (|y1| + |y2|)^2 / 2 - c (k = 1)
    fstar = (abs(y[0]) + abs(y[1])) ** 2 / 2 - p.c * 1
    closed = np.maximum(X1 ** 2, X2 ** 2) / 2 + 2 * p.c     # the closed form max_i phi(x_i) + c, for the record
    return lower - E, upper + E, fstar, {"phi_star_0_numeric": phistar0,
                                         "Phi_star_numeric_vs_closed_form_max": float(np.max(np.abs(P2 - closed))),
                                         "conjugate_error_model_E": E}


@bicon.numeric
def _(p):
    """Phi^** lies in the grid bracket around f*_phi + (n - k) phi*(0)."""
    lower, upper, fstar, extra = _biconj(p)
    target = fstar + (2 - 1) * (-p.c)
    res = max(lower - target, target - upper, 0.0)
    return Outcome(residual=res, tolerance=8 * EPS * (abs(target) + 1),
                   values={"Phi_bicon_bracket": [lower, upper], "f_star": fstar, "corrected": target, **extra},
                   message="distance of the corrected value to the bracket [grid sup, grid sup + Lip * cell]")


bicon.property(over=("c",), max_examples=8)


@bicon.falsifier("stated")
def _(p):
    """As printed (phi = x^2/2 - 1, y = (0.7, -0.4)): f* = 1.605 but Phi^** = 2.605."""
    lower, upper, fstar, extra = _biconj(p)
    res = max(lower - fstar, fstar - upper, 0.0)
    return Outcome(residual=res, tolerance=8 * EPS * (abs(fstar) + 1),
                   values={"Phi_bicon_bracket": [lower, upper], "f_star": fstar, **extra})


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


# ===========================================================================
# X7.1 error bound of the Example
ebound = Claim(
    id="sander.topk_error_bound",
    title="Example (p = 2, topkmag): ||topkmag_R - topkmag||_inf <= lam ||x||_inf for lam small enough",
    label="Example (l.4932), Remark 7.A.6",
    section="7.5, 7.A.6",
    equation="",
    lines=(4932, 4936),
    statement=r"\gamma_B^*=\frac{\sum_Bs_i}{\sum_B(\lambda w_i+1)};\ \lambda\text{ small}\ \Rightarrow\ "
              r"\|\mathrm{topkmag}_R(\mathbf x)-\mathrm{topkmag}(\mathbf x)\|_\infty\le\lambda\|\mathbf x\|_\infty",
    status="holds",
    bound=True,
    params=[
        Param.int("n", 6, 2, 50, "dimension", search=(2, 10)),
        Param.int("k", 2, 1, 49, "k", search=(1, 4)),
        Param.float("lam", 0.05, 0.0, 10.0, "lambda", low_open=True, search=(1e-3, 1.0)),
        Param.seed("seed of x"),
        Param.vector("x", None, "your own x"),
    ],
    validate=_validate_nk,
    notes="'Small enough' made precise (catalogue X7.1): if lam <= |x|_[k]/|x|_[k+1] - 1 every PAV block is a "
          "singleton and the error is <= lam/(1 + lam) ||x||_inf; the threshold depends on the gap, so no lam works "
          "uniformly in x (falsifier: near tie). Instances violating the condition are inconclusive.",
    catalogue="sander_part23 §2.4 X7.1",
    covers=("X7.1",),
)


@ebound.numeric
@_in_double_range
def _(p):
    """Under lam <= |x|_[k]/|x|_[k+1] - 1: the error is <= lam/(1+lam) |x|_inf (and the pooled formula holds)."""
    x = _x_of(p)
    n = x.size
    k = min(p.k, n)
    if k >= n:
        return inconclusive("k = n: no (k+1)-th entry")
    a = np.sort(np.abs(x))[::-1]
    if a[k] > 0 and p.lam > a[k - 1] / a[k] - 1:
        return inconclusive("lam exceeds the gap condition |x|_[k]/|x|_[k+1] - 1", gap_threshold=float(a[k - 1] / a[k] - 1))
    y = tk.topk_mag(x, k, p.lam, 2.0)
    err = float(np.max(np.abs(y - tk.hard_topkmag(x, k))))
    bound = p.lam / (1 + p.lam) * float(np.max(np.abs(x)))
    return Outcome(residual=err, tolerance=bound + _y_tol(x, k, p.lam, 2.0),
                   values={"error": err, "lam_x_inf": p.lam * float(np.max(np.abs(x))),
                           # error / (bound + rounding allowance): where the bound is below rounding (lam ~ 0) the
                           # two sides cannot be compared closer than the allowance
                           "tightness": err / (bound + _y_tol(x, k, p.lam, 2.0))})


ebound.property(over=("n", "k", "lam", "seed"), max_examples=20)


@ebound.falsifier("uniform_in_x", fixed={"x": [1.0, 0.999, 0.2, -0.1], "k": 1, "lam": 0.01})
def _(p):
    """Reading 'lam small' uniformly in x: x = (1, 0.999, 0.2, -0.1), k = 1, lam = 0.01 gives error 0.45 >> 0.01."""
    x = _x_of(p)
    k = min(p.k, x.size)
    y = tk.topk_mag(x, k, p.lam, 2.0)
    err = float(np.max(np.abs(y - tk.hard_topkmag(x, k))))
    return Outcome(residual=err, tolerance=p.lam * float(np.max(np.abs(x))) + _y_tol(x, k, p.lam, 2.0),
                   values={"error": err})


ebound.tightness(over=("n", "k", "lam", "seed"), max_examples=40)


# ===========================================================================
# P7.8 Jacobian
jac = Claim(
    id="sander.topk_jacobian",
    title="Closed-form Jacobian of the isotonic solution (block-wise weights |gamma - s_i|^(q-2))",
    label="Prop 7.8",
    section="7.5",
    equation="",
    lines=(4960, 4968),
    statement=r"\frac{\partial\gamma^*_{B_r}}{\partial s_i}=\frac{|\gamma^*_{B_r}-s_i|^{q-2}}{\sum_{j\in B_r}|\gamma^*_{B_r}"
              r"-s_j|^{q-2}}\ (\varphi=x),\quad\frac{(q-1)|\gamma^*-s_i|^{q-2}}{\sum_{j\in B_r}(q-1)|\gamma^*-s_j|^{q-2}+w_j}"
              r"\ (\varphi=x^2/2)",
    status="holds",
    params=[
        Param.int("n", 7, 2, 30, "dimension", search=(2, 9)),
        Param.int("k", 3, 1, 29, "w = 1_k", search=(1, 4)),
        Param.choice("p", "4/3", ["2", "4/3"], "p (closed-form pooling)"),
        Param.choice("op", "mag", ["mask", "mag"], "phi = x (mask) or x^2/2 (mag)"),
        Param.seed("seed of the sorted s (uniform [0, 5], descending)"),
    ],
    validate=_validate_nk,
    notes="lam = 1 (the statement's R = |.|_p^p/p). Central differences of the PAV solution v*(s) (solvers.fd "
          "error model: Richardson estimate x2 plus cancellation) against the formula. Caveats: 'p > 0' should read "
          "p > 1; on a block with gamma = s_i for all i (q > 2) the formula is 0/0, its limit 1 (singletons) is used. "
          "Instances whose partition changes within the FD stencil are inconclusive.",
    catalogue="sander_part23 §2.4 P7.8",
    covers=("P7.8",),
)


def _jac_instance(p):
    rng = np.random.default_rng(p.seed)
    s = np.sort(rng.uniform(0, 5, p.n))[::-1]
    w = (np.arange(p.n) < min(p.k, p.n)).astype(float)
    return s, w, (2.0 if p.p == "2" else 4 / 3), p.op == "mag"


def _jac_check(p, wrong_power=False):
    from solvers.fd import central_difference
    s, w, pv, mag = _jac_instance(p)
    v, blocks = tk.pav(s, w, 1.0, pv, mag)
    h = 1e-6
    J = np.zeros((p.n, p.n))
    J2 = np.zeros((p.n, p.n))
    for i in range(p.n):
        def vi(t, i=i):
            return tk.pav(t, w, 1.0, pv, mag)[0][i]
        for hh, out in ((h, J), (2 * h, J2)):
            out[i] = central_difference(vi, s, hh)
    for hh in (-2 * h, 2 * h):
        for i in range(p.n):
            e = np.zeros(p.n)
            e[i] = hh
            if tk.pav(s + e, w, 1.0, pv, mag)[1] != blocks:
                return None, None, None
    Jf = tk.jacobian_blocks(s, w, v, blocks, 1.0, pv, mag)
    if wrong_power:
        q = pv / (pv - 1)
        for a, e in blocks:
            num = np.abs(v[a] - s[a:e]) ** (q - 1)
            den = float(np.sum(num)) + (float(np.sum(w[a:e])) if mag else 0.0)
            if den > 0:
                Jf[a:e, a:e] = num / den
    err = 2 * np.abs(J - J2) / 3 + 8 * EPS * (float(np.max(np.abs(s))) + 2) / h
    return J, Jf, err


@jac.numeric
def _(p):
    """Finite differences of the PAV solution against the closed form, entrywise."""
    J, Jf, err = _jac_check(p)
    if J is None:
        return inconclusive("the PAV partition changes within the finite-difference stencil")
    return Outcome(residual=float(np.max(np.abs(J - Jf) - err)) + float(np.max(err)), tolerance=float(np.max(err)) * 2,
                   values={"max_abs_diff": float(np.max(np.abs(J - Jf))), "fd_error": float(np.max(err))},
                   message="max |J_fd - J_formula| (shifted by the entrywise fd error)")


jac.property(over=("n", "k", "p", "op", "seed"), max_examples=12)


@jac.falsifier("power_q_minus_1", search=("seed",), fixed={"p": "4/3"})
def _(p):
    """|gamma - s_i|^(q-1) in place of |gamma - s_i|^(q-2): an O(1) error on pooled blocks."""
    J, Jf, err = _jac_check(p, wrong_power=True)
    if J is None:
        return inconclusive("the PAV partition changes within the finite-difference stencil")
    return Outcome(residual=float(np.max(np.abs(J - Jf) - err)) + float(np.max(err)), tolerance=float(np.max(err)) * 2)


# ===========================================================================
# P7.3 conjugate / k-support norm
ksup = Claim(
    id="sander.topk_ksupport",
    title="Conjugate of f_phi: min over P(w) of the perspective; phi = x^2/2, w = 1_k gives the squared k-support norm",
    label="Prop 7.3",
    section="7.4",
    equation="",
    lines=(4833, 4866),
    statement=r"\varphi\text{ convex},\ \mathbf w\ge0:\ f^*_\varphi(\mathbf y,\mathbf w)=\min_{\mathbf z\in P(\mathbf w)}"
              r"\sum_iz_i\varphi^*(y_i/z_i);\ \varphi=\tfrac{x^2}2,\mathbf w=\mathbf 1_k:\ \tfrac12\|\mathbf y\|_{(k)}^2",
    status="holds",
    params=[
        Param.int("n", 5, 2, 8, "dimension", search=(2, 7)),
        Param.int("k", 2, 1, 7, "k", search=(1, 4)),
        Param.seed("seed of y ~ N(0, 1)"),
    ],
    validate=_validate_nk,
    notes="Two routes for phi = x^2/2, w = 1_k: the Argyriou closed form of the squared k-support norm and the "
          "capped-simplex minimum of sum y_i^2/(2 z_i) (KKT: z_i = min(1, |y_i|/t), sum z = k, bisection on t). The "
          "catalogue's third route (exact enumeration of supports of the conjugate) and its three seeded values "
          "(1.6964282137, 2.7682627748, 2.9827770569; draws not given) are not encoded. The w >= 0 hypothesis is not "
          "exercised by a falsifier.",
    catalogue="sander_part23 §2.4 P7.3, C7.1",
    covers=("P7.3", "C7.1"),
)


def _capped_min(y, k):
    a = np.abs(y)
    if np.count_nonzero(a) <= k:
        return 0.5 * float(np.sum(a * a))
    lo, hi = 1e-300, float(a.max()) * 1e3
    f = lambda t: float(np.sum(np.minimum(1.0, a / t)))
    for _ in range(3000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if f(mid) > k:
            lo = mid
        else:
            hi = mid
    z = np.minimum(1.0, a / (0.5 * (lo + hi)))
    z = z * (k / z.sum()) if z.sum() > 0 else z
    z = np.minimum(z, 1.0)
    m = z > 0
    return 0.5 * float(np.sum(a[m] ** 2 / z[m]))


@ksup.numeric
def _(p):
    """Argyriou closed form = capped-simplex minimum (to rounding of the bisection on t)."""
    y = np.random.default_rng(p.seed).standard_normal(p.n)
    k = min(p.k, p.n)
    a = tk.conj_ksupport(y, k)
    b = _capped_min(y, k)
    scale = float(np.sum(y * y))
    return Outcome.from_parts({"closed_vs_capped_min": (abs(a - b), 1e3 * p.n * EPS * scale + 1e-15)},
                              "k-support routes", values={"closed_form": a, "capped_min": b})


ksup.property(over=("n", "k", "seed"), max_examples=15)


@ksup.falsifier("no_minimisation", search=("seed",))
def _(p):
    """Dropping the minimisation over z (z = 1 on the k largest |y_i|, 0 elsewhere, as for the hard top-k) is not the
    conjugate: it is +inf-like off k-sparse y; here compare (1/2)|y|^2 (z = 1 everywhere, infeasible for k < n)."""
    y = np.random.default_rng(p.seed).standard_normal(p.n)
    k = min(p.k, p.n)
    a = tk.conj_ksupport(y, k)
    return Outcome(residual=abs(a - 0.5 * float(np.sum(y * y))), tolerance=1e3 * p.n * EPS * float(np.sum(y * y)) + 1e-15)


# ===========================================================================
# N7.B k-support negentropy
negent = Claim(
    id="sander.topk_negentropy",
    title="phi(x) = exp(x - 1) gives phi*(y) = y log y and the k-support negentropy",
    label="7.B.1",
    section="7.B.1",
    equation="",
    lines=(5189, 5198),
    statement=r"\varphi(x)=e^{x-1}:\ \varphi^*(y)=y\log y,\ f^*_\varphi(\mathbf y,\mathbf 1_k)=\min_{\mathbf z\in[0,1]^n,"
              r"\langle\mathbf z,\mathbf 1\rangle=k}\sum_iy_i\log\frac{y_i}{z_i}",
    status="holds",
    params=[Param.float("y", 0.7, 0.0, 10.0, "point y > 0 of the numeric check", low_open=True)],
    notes="Symbolic: the supremum of x y - e^(x-1) is attained at x = 1 + log y and equals y log y; the perspective "
          "z phi*(y/z) = y log(y/z). Numeric: a 1-D sup by scipy bounded minimisation.",
    catalogue="sander_part23 §2.4 N7.B",
    covers=("N7.B",),
)


#: phi*(y) as printed, and misprints (mutants): the factor y dropped; the conjugate of e^x (y log y - y)
PHI_STAR_FORMS = {"stated": lambda y: y * sp.log(y), "log_y": lambda y: sp.log(y),
                  "conjugate_of_exp_x": lambda y: y * sp.log(y) - y}


def _negentropy_failures(form):
    """sup_x x y - e^{x-1}: stationary point by sympy.solve, a maximum (second derivative < 0), its value against
    phi*(y) of ``form``; the perspective z phi*(y/z) against the printed summand y log(y/z).  Returns (failures, the
    computed conjugate)."""
    phi_star = PHI_STAR_FORMS[form]
    x, y, z = sp.symbols("x y z", positive=True)
    obj = x * y - sp.exp(x - 1)
    xs = sp.solve(sp.diff(obj, x), x)[0]
    conj = sp.simplify(obj.subs(x, xs))
    r = int(not bool(sp.simplify(sp.diff(obj, x, 2).subs(x, xs)).is_negative))
    r += int(sp.simplify(sp.expand_log(conj - phi_star(y), force=True)) != 0)
    persp = sp.simplify(z * phi_star(y / z) - y * sp.log(y / z))
    r += int(sp.simplify(sp.expand_log(persp, force=True)) != 0)
    return r, conj


@negent.symbolic(timeout=30)
def _(p):
    """Legendre transform of exp(x - 1) by stationarity (a maximum); the perspective."""
    r, conj = _negentropy_failures("stated")
    return Outcome(residual=r, tolerance=0, values={"method": "sympy.solve + simplify", "phi_star": str(conj)})


@negent.mutant({"log_y": "phi*(y) = log y (the factor y dropped)",
                "conjugate_of_exp_x": "phi*(y) = y log y - y (the conjugate of e^x, not of e^{x-1})"}, timeout=30)
def _(p, variant):
    """phi* perturbed, through the same Legendre computation: it must differ."""
    r, conj = _negentropy_failures(variant)
    return Outcome(residual=r, tolerance=0, values={"phi_star_computed": str(conj)},
                   message=f"{r} identities fail: sup_x xy - e^(x-1) = {conj} ({variant})")


@negent.numeric
def _(p):
    """sup_x x y - exp(x - 1) by bounded scalar minimisation equals y log y."""
    from scipy.optimize import minimize_scalar
    r = minimize_scalar(lambda x: -(x * p.y - math.exp(x - 1)), bounds=(-60, 60), method="bounded",
                        options={"xatol": 1e-10})
    # error model: the objective is flat at the maximiser; x error 1e-5 costs <= e^(x-1) dx^2/2 ~ y 1e-10
    return Outcome(residual=abs(-r.fun - p.y * math.log(p.y)), tolerance=1e-8 * (1 + p.y),
                   values={"sup": -r.fun, "y_log_y": p.y * math.log(p.y)})


@negent.falsifier("log_without_y")
def _(p):
    """phi*(y) = log y (dropping the factor y) is wrong."""
    from scipy.optimize import minimize_scalar
    r = minimize_scalar(lambda x: -(x * p.y - math.exp(x - 1)), bounds=(-60, 60), method="bounded",
                        options={"xatol": 1e-10})
    return Outcome(residual=abs(-r.fun - math.log(p.y)), tolerance=1e-8 * (1 + p.y))


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
