"""Menon §13.3-13.4 (seed lines 1002-1016): the numerical remarks on effective-rank jumps and on
random (unbalanced) initial conditions.

Conventions and the entropy normalisation: see ``theorems/menon/_rle.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import dln
from theorems.claim import Claim, Outcome, Param

from ._common import rng_for


# ===========================================================================
# 7. effective-rank jumps (empirical, cited)
Claim(
    id="menon.effective_rank_jumps",
    title="Effective rank of W(t) in matrix completion drops through sudden jumps (numerics of [14])",
    label="D13.3",
    section="13.3",
    lines=(1002, 1004),
    statement=r"\text{the effective rank of } W(t) \text{ decreases in time through sudden jumps; limits follow an "
              r"asymptotic distribution on the low-rank manifolds}",
    status="empirical",
    params=[],
    notes="Not certifiable here: the paper reports observations from [14] without the setup (matrix size, mask, "
          "target, initialisation scale, depth, definition of effective rank, time horizon). The catalogue's "
          "quick d=10, N=3 gradient-flow trials (init 0.3 and 0.05) converged by t <= 400 without clear rank "
          "plateaus, so a qualitative reproduction would be a guess at [14]'s parameters rather than a check of "
          "the claim. The related d = 2 experiment of Section 14.1 is menon.matrix_completion_clustering.",
    catalogue="menon §2.10 D13.3",
)


# ===========================================================================
# 8. random initial conditions are unbalanced
unbal = Claim(
    id="menon.random_init_unbalanced",
    title="A random initial condition lies on the balanced manifold with probability zero",
    label="D13.4",
    section="13.4",
    lines=(1010, 1016),
    statement=r"\mathbb P(\mathbf W_0\in\mathcal M)=0\ \text{for a random initial condition}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width", search=(1, 5)),
        Param.int("N", 3, 2, 6, "depth", search=(2, 5)),
        Param.int("samples", 500, 10, 100_000, "number of Gaussian draws"),
        Param.float("delta", 1e-8, 1e-14, 1e-8, "threshold on max_p |C_p|_F / |W|^2 for 'on M' (at most 1e-8: "
                    "see the notes' error model)"),
        Param.seed("seed"),
    ],
    notes="Proof: W -> (C_p)_p is a polynomial submersion at generic points (its Jacobian has full rank "
          "(N-1)d(d+1)/2, the codimension of M_0), so M_0 is a proper algebraic subset of M_d^N, of Lebesgue "
          "measure zero. Numeric: the Jacobian rank at the first draws equals the codimension (> 0 for N >= 2), "
          "and no Gaussian draw has max_p |C_p|_F below delta * scale. Residual = rank deficit + number of "
          "draws on M (to delta). Error model of that count: the Gaussian law has a density, so near-misses occur at "
          "the small-ball rate P(rel < delta) ~ c delta^codim; the worst case, d = 1 and N = 2 (codimension 1), has "
          "c ~ 0.33 (326 of 1e5 draws below delta = 1e-2), so the range of delta stops at 1e-8, where the expected "
          "count over the most samples (1e5) is 3e-4 (the range reached 1e-2, where --param d=1 N=2 delta=0.01 "
          "samples=100000 refuted the true claim with 326 near-misses). The conjecture of lines 1014-1016 (noise moves M_G towards M_0) is exploratory and not "
          "encoded.",
    catalogue="menon §2.10 D13.4",
)


def _c_jacobian(Ws):
    """Matrix of dC: V -> (V_{p+1}^T W_{p+1} + W_{p+1}^T V_{p+1} - V_p W_p^T - W_p V_p^T)_p (upper triangles)."""
    N, d = len(Ws), Ws[0].shape[0]
    iu = np.triu_indices(d)
    cols = []
    for i in range(N * d * d):
        e = np.zeros(N * d * d)
        e[i] = 1.0
        V = [e[k * d * d:(k + 1) * d * d].reshape(d, d) for k in range(N)]
        out = []
        for p in range(1, N):
            Wq, Wp, Vq, Vp = dln.layer(Ws, p + 1), dln.layer(Ws, p), dln.layer(V, p + 1), dln.layer(V, p)
            out.append((Vq.T @ Wq + Wq.T @ Vq - Vp @ Wp.T - Wp @ Vp.T)[iu])
        cols.append(np.concatenate(out))
    return np.array(cols).T


def _unbal_outcome(p, balanced_sampler=False):
    rng = rng_for(p.seed)
    d, N = p.d, p.N
    if balanced_sampler:
        draws = []
        for _ in range(p.samples):
            lam = np.abs(rng.standard_normal(d))
            draws.append(np.array(dln.balanced_point(lam, [dln.random_orthogonal(d, rng) for _ in range(N + 1)])))
        L = np.array(draws)  # (samples, N, d, d) in paper order
    else:
        L = rng.standard_normal((p.samples, N, d, d))
    T = np.swapaxes
    # paper order: L[:, 0] = W_N, ..., L[:, N-1] = W_1, so W_{p+1} = L[:, N-p-1], W_p = L[:, N-p]
    C = np.stack([T(L[:, N - p - 1], 1, 2) @ L[:, N - p - 1] - L[:, N - p] @ T(L[:, N - p], 1, 2)
                  for p in range(1, N)], axis=1)
    size = np.max(np.linalg.norm(C, axis=(2, 3)), axis=1)
    scale = np.max(np.sum(L ** 2, axis=(2, 3)), axis=1)
    rel = size / scale
    on_M = int(np.sum(rel < p.delta))
    codim = (N - 1) * d * (d + 1) // 2
    ranks = [int(np.linalg.matrix_rank(_c_jacobian(list(L[i])))) for i in range(min(3, p.samples))]
    deficit = codim - min(ranks)
    return Outcome(residual=on_M + deficit, tolerance=0,
                   values={"draws_on_M": on_M, "min_relative_C": float(np.min(rel)), "codimension": codim,
                           "jacobian_ranks": ranks, "samples": p.samples},
                   message="number of draws on M (|C|/|W|^2 < delta) + rank deficit of dC")


@unbal.numeric
def _(p):
    """Gaussian draws: |C_p| bounded away from 0, and dC has full rank (N-1)d(d+1)/2 (codimension of M_0)."""
    return _unbal_outcome(p)


unbal.property(over=("d", "N", "seed"), max_examples=10)


@unbal.falsifier("balanced_sampler", search=("seed",))
def _(p):
    """A sampler supported on M (z(Lambda, Q) with random Lambda, Q): every draw is balanced."""
    return _unbal_outcome(p, balanced_sampler=True)
