"""§6.4 In-context mapping with gradient descent, Lemma 6.3 (seed l.4164; proof §6.A.1, l.4347-4362):
positional-softmax heads build the augmented tokens e_t = (0, s_t, s_{t-1}), with the s_0 := s_1 caveat (A1).
Claim: ``sander.incontext_positional_heads``.

Conventions and the exact-expectation error model (chapter 6): ``theorems.sander._attention``.
"""
from __future__ import annotations

import math

import numpy as np

from solvers import xp_sander2 as X
from solvers.xp import asnumpy, namespace, on, xp_of
from theorems.claim import Claim, Outcome, Param

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Lemma 6.3: positional softmax heads
def _pos_tokens(S, beta):
    """Two positional-softmax heads with causal mask: P^1 = beta [t' = t], P^2 = beta [t' = t-1];
    returns the (T, 3d) outputs sum_h sum_{t'<=t} A^h_{t,t'} W_V^h s_{t'}, and the weights."""
    T, d = S.shape
    out = np.zeros((T, 3 * d))
    offdiag = []
    for t in range(T):                       # t is 0-based: position t+1
        for h, target in ((1, t), (2, t - 1)):
            logits = np.array([beta if tp == target else 0.0 for tp in range(t + 1)])
            a = np.exp(logits - logits.max())
            a /= a.sum()
            out[t, h * d:(h + 1) * d] = a @ S[:t + 1]
            if target >= 0:
                offdiag.append(1.0 - a[target])
    return out, max(offdiag) if offdiag else 0.0


pos = Claim(
    id="sander.incontext_positional_heads",
    title="Two positional-softmax heads produce e_t = (0, s_t, s_{t-1}) to any precision for t >= 2; at t = 1 the "
          "s_0 slot receives s_1",
    label="Lemma 6.3",
    section="6.4, 6.A.1",
    equation="",
    lines=(4164, 4164),
    statement=r"\sum_{h=1}^2\sum_{t'\le t}\mathcal A^h_{t,t'}W_V^hs_{t'}\simeq(0,s_t,s_{t-1})=e_t",
    status="holds",
    params=[
        Param.int("T", 8, 2, 30, "sequence length", search=(2, 20)),
        Param.int("d", 2, 1, 6, "token dimension", search=(1, 5)),
        Param.float("delta", 1e-6, 1e-12, 0.5, "target precision (beta is chosen from it)", search=(1e-12, 0.1)),
        Param.seed("seed of s_1..s_T (N(0, 1))"),
    ],
    notes="Proof construction (l.4347-4361): P^1_{t,t'} = beta [t'=t], P^2_{t,t'} = beta [t'=t-1], causal mask. "
          "Error at t >= 2 per head <= (t-1)/(e^beta + t-1) * max|s_t' - s_t| <= (T-1) e^-beta 2 max|s|, so beta = "
          "log(2 sqrt2 (T-1) max|s| / delta) gives precision delta (the 'arbitrary precision' of the lemma). Caveat "
          "A1 (catalogue): at t = 1 the causal head 2 can only attend to t' = 1, so the s_0 slot holds s_1 exactly, "
          "i.e. the construction realises the convention s_0 := s_1 (under which Prop 6.5's structure fails, see "
          "sander.incontext_gd_step). Falsifier: reading s_0 = 0 at t = 1.",
    catalogue="sander_part23 §2.3 L6.3; §6 A1",
    covers=("L6.3",),
)


def _pos_tokens_xp(S, beta):
    """_pos_tokens on the array path: both heads as causally masked (T, T) softmax matrices applied to S at once.
    Returns the (T, 3d) outputs and the largest off-target weight (host float)."""
    xp = namespace(S)
    T, d = S.shape
    i = xp.reshape(xp.arange(T), (T, 1))
    j = xp.reshape(xp.arange(T), (1, T))
    outs, off = [xp.zeros((T, d), dtype=S.dtype)], 0.0
    for shift in (0, 1):                       # head 1 attends to t' = t, head 2 to t' = t - 1
        target = (j == i - shift)
        full = lambda v: xp.full((T, T), v, dtype=S.dtype)  # noqa: E731
        logits = xp.where(j <= i, xp.where(target, full(beta), full(0.0)), full(-xp.inf))
        A = X.softmax_rows(logits)
        outs.append(A @ S)
        has = xp.any(target, axis=1)
        w = xp.sum(xp.where(target, A, full(0.0)), axis=1)
        if bool(xp.any(has)):
            off = max(off, float(xp.max(xp.where(has, 1.0 - w, xp.full((T,), -xp.inf, dtype=S.dtype)))))
    return xp.concat(outs, axis=1), off


def _pos_outcome(p, s0_zero=False):
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    S = rng.standard_normal((p.T, p.d))
    smax = float(np.max(np.linalg.norm(S, axis=1)))
    beta = math.log(2 * math.sqrt(2) * max(p.T - 1, 1) * smax / p.delta) if smax > 0 else 0.0
    Sx = on(xp, S)
    out, off = _pos_tokens_xp(Sx, beta)
    want = xp.concat([xp.zeros((p.T - 1, p.d), dtype=Sx.dtype), Sx[1:, :], Sx[:-1, :]], axis=1)
    err = [float(e) for e in asnumpy(xp.linalg.vector_norm(out[1:, :] - want, axis=1))]
    # rounding: softmax weights to ~4 eps, weighted sums of T terms of size smax
    rtol = 8 * p.T * EPS * smax
    s0 = xp.zeros((p.d,), dtype=Sx.dtype) if s0_zero else Sx[0, :]
    slot = float(xp.linalg.vector_norm(out[0, 2 * p.d:] - s0))
    parts = {"t>=2": (max(err) if err else 0.0, p.delta + rtol), "t=1 s0 slot": (slot, p.delta + rtol)}
    return Outcome.from_parts(parts, f"beta = {beta:.3g} ({p.backend})",
                              {"beta": beta, "max_offtarget_weight": off, "errors_t>=2": err,
                               "t1_slot_minus_s0": slot})


@pos.numeric(backends=("numpy", "cupy"))
def _(p):
    """Max error over t >= 2 is <= delta at the chosen beta; at t = 1 the s_0 slot equals s_1 (convention A1)."""
    return _pos_outcome(p)


pos.property(over=("T", "d", "delta", "seed"), max_examples=15)


@pos.falsifier("s0_zero_at_t1", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """The construction does not produce s_0 = 0 at t = 1: the slot holds s_1."""
    return _pos_outcome(p, s0_zero=True)
