"""§6.5.2 Orthogonal context matrices (seed l.4248-4273; proofs §6.A.8-6.A.9, l.4576-4609): zero loss for
orthogonal contexts (Lemma 6.10, Prop 6.11, l.4252-4262).  Claim: ``sander.incontext_orthogonal_zero_loss``.

Conventions and the exact-expectation error model (chapter 6): ``theorems.sander._attention``.
"""
from __future__ import annotations

import numpy as np

from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param
from theorems.sander._attention import _loss_plain, _loss_xp, _quad_tol, _torus, _torus_orth

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Lemma 6.10 / Prop 6.11: orthogonal contexts
def _block_C(delta, b, scale=1.0):
    J = np.array([[1.0, b], [b, 1.0]]) * scale
    return np.kron(np.eye(delta), J)


orth = Claim(
    id="sander.incontext_orthogonal_zero_loss",
    title="Orthogonal contexts: zero loss for p = (.., q, 1), C = diag(J_b), b = -q/(1+q); rank delta iff q = -1/2",
    label="Lemma 6.10, Prop 6.11",
    section="6.5.2",
    equation="",
    lines=(4252, 4262),
    statement=r"P^*_{T-1,T-1}=-1,\ P^*_{T-1,T}=2,\ \mathbf B^{*\top}\mathbf A^*=\tfrac12\mathrm{diag}(J,\dots,J)\Rightarrow"
              r"\mathcal T_{\theta^*}=\lambda^T;\ \ell(\theta^*)=0\Rightarrow p_T\mathbf C_{ii}=1,\ p_T\mathbf C_{2i-1,2i}+"
              r"(\mathbf C_{2i-1,2i-1}+\mathbf C_{2i-1,2i})p_{T-1}=0,\dots",
    status="holds",
    params=[
        Param.int("delta", 2, 1, 3, "d = 2 delta", search=(1, 3)),
        Param.int("T", 5, 2, 6, "sequence length", search=(2, 6)),
        Param.float("q", -0.5, -0.95, 5.0, "p_{T-1} (p_T = 1); b = -q/(1+q)", search=(-0.9, 4.0)),
    ],
    notes="Contexts lambda = (mu_1, conj mu_1, ..., mu_delta, conj mu_delta), mu uniform phases; exact quadrature on "
          "the N-th roots of unity, N = 4T + 2 (each mu exponent lies in [-2T, 2T]). q = -1/2 is Lemma 6.10 (up to the "
          "scaling p -> 2p, C -> C/2). b = -1 is impossible (l.4608): its loss is 4 (falsifier). The trigonometric "
          "identity 2 cos(t) R_t - I = R_2t is checked as a part.",
    catalogue="sander_part23 §2.3 L6.10, P6.11",
    covers=("L6.10", "P6.11"),
)


def _orth_loss(p, b, q, lemma_scaling=False, xp=None):
    lam = _torus_orth(p.delta, 4 * p.T + 2)
    pv = np.zeros(p.T)
    if lemma_scaling:
        pv[-2], pv[-1] = -1.0, 2.0
        C = _block_C(p.delta, 1.0, 0.5)
    else:
        pv[-1] = 1.0
        if p.T >= 2:
            pv[-2] = q
        C = _block_C(p.delta, b)
    return (_loss_plain(C, pv, p.T, lam) if xp is None else _loss_xp(xp, C, pv, p.T, lam)), C, pv


@orth.numeric(backends=("numpy", "cupy"))
def _(p):
    """Zero loss on the family and for Lemma 6.10; rank of C is delta iff q = -1/2 (else 2 delta)."""
    xp = xp_of(p)
    b = -p.q / (1 + p.q)
    L, C, pv = _orth_loss(p, b, p.q, xp=xp)
    L10, C10, pv10 = _orth_loss(p, 1.0, -0.5, lemma_scaling=True, xp=xp)
    tol = 64 * (4 * p.T + 2) ** p.delta * EPS * (1 + float(np.sum(np.abs(C))) ** 2 * float(np.sum(np.abs(pv))) ** 2)
    # rank on the array path: singular values above the matrix_rank cutoff max(shape) eps sigma_max
    sv = asnumpy(xp.linalg.svdvals(on(xp, C)))
    rank = int(np.sum(sv > sv.max() * max(C.shape) * EPS))
    want = p.delta if abs(b - 1) < 1e-12 else 2 * p.delta
    th = np.linspace(0, 2 * np.pi, 7)
    R = lambda a: np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    trig = max(float(np.max(np.abs(2 * np.cos(a) * R(a) - np.eye(2) - R(2 * a)))) for a in th)
    return Outcome.from_parts({"zero_loss_family": (L, tol), "zero_loss_lemma_6_10": (L10, tol),
                               "rank": (abs(rank - want), 0.0), "trig_identity": (trig, 16 * EPS)},
                              f"orthogonal zero-loss set ({p.backend})", values={"b": b, "rank": rank})


orth.property(over=("delta", "T", "q"), max_examples=10)


@orth.falsifier("b_minus_one")
def _(p):
    """J_{-1} blocks (b = -1, which would need -1 = 0): loss 4 (d = 4, T = 5, any q)."""
    L, C, pv = _orth_loss(p, -1.0, p.q)
    return Outcome(residual=L, tolerance=64 * (4 * p.T + 2) ** p.delta * EPS * 100, values={"loss": L})


@orth.falsifier("lemma_6_10_under_unitary_contexts")
def _(p):
    """The Lemma 6.10 solution evaluated under unitary (independent) contexts has positive loss (8 at d = 4, T = 5)."""
    pv = np.zeros(p.T)
    pv[-2], pv[-1] = -1.0, 2.0
    C = _block_C(p.delta, 1.0, 0.5)
    L = _loss_plain(C, pv, p.T, _torus(2 * p.delta, 2 * p.T))
    return Outcome(residual=L, tolerance=_quad_tol(C, pv, 2 * p.delta, p.T), values={"loss": L})
