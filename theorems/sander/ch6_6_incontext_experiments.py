"""§6.6 Experiments (seed l.4292-4340): Figs 6.3-6.10 (registered, not reproduced) and Fig 6.3 at CPU scale
(l.4272; catalogue R6.a, slow).  Claims: ``sander.incontext_experiments``, ``sander.incontext_fig63_cpu``.

Conventions and the exact-expectation error model (chapter 6): ``theorems.sander._attention``.
"""
from __future__ import annotations

import numpy as np

from theorems.claim import Claim, Outcome
from theorems.sander._attention import _corrected_68, _loss_plain, _torus_orth


# ===========================================================================
experiments = Claim(
    id="sander.incontext_experiments",
    title="In-context AR experiments: GPT-2 embeddings, GD vs linear layers, Figs 6.3-6.10",
    label="Figs 6.3-6.10",
    section="6.6",
    equation="",
    lines=(4297, 4337),
    statement=r"\text{Fig 6.4: '4 times more' inexact AR fits on shuffled GPT-2 embeddings; Fig 6.5: GD beats linear "
              r"layers for }L\ge3",
    status="empirical",
    params=[],
    notes="Not reproduced: GPT-2 embeddings (Moby Dick, d = 1280) are not available offline, and the trained deep "
          "models need a GPU budget. The CPU-scale plan for Fig 6.3 (catalogue §3.3 R6.a: gradient descent on the "
          "exact corrected Prop 6.8 loss) was not run in the time budget.",
    catalogue="sander_part23 §2.3 EMP6; §3.3 R6.a",
    covers=("EMP6",),
)


# ===========================================================================
# Fig 6.3 at CPU scale (R6.a)
def _fig63_train(kind, d, H, Tmax, seed, maxiter):
    from scipy.optimize import minimize
    rng = np.random.default_rng(seed)
    nP = sum(range(2, Tmax + 1))
    lams = {T: _torus_orth(d // 2, 4 * T + 2) for T in range(2, Tmax + 1)} if kind == "orthogonal" else None

    def unpack(th):
        A = th[:H * d].reshape(H, d)
        B = th[H * d:2 * H * d].reshape(H, d)
        rows, i = {}, 2 * H * d
        for T in range(2, Tmax + 1):
            rows[T] = th[i:i + T]; i += T
        return A, B, rows

    def loss(th):
        A, B, rows = unpack(th)
        C = B.T @ A
        if kind == "unitary":
            return sum(_corrected_68(C, rows[T], T) for T in rows)
        return sum(_loss_plain(C, rows[T], T, lams[T]) for T in rows)

    th0 = rng.standard_normal(2 * H * d + nP) * 0.5
    r = minimize(loss, th0, method="L-BFGS-B", options={"maxiter": maxiter, "maxfun": 50 * maxiter, "ftol": 1e-16,
                                                         "gtol": 1e-12})
    A, B, rows = unpack(r.x)
    return float(r.fun), B.T @ A, rows


fig63 = Claim(
    id="sander.incontext_fig63_cpu",
    title="Fig 6.3 at CPU scale: training (6.6) reaches the zero-loss sets of Props 6.7 (unitary, H = d) and 6.11 "
          "(orthogonal, delta < H < d: rank-delta B^T A with P_{T-1,T-1}/P_{T-1,T} = -1/2)",
    label="Fig 6.3",
    section="6.5.2, 6.6",
    equation="",
    lines=(4272, 4272),
    statement=r"\text{unitary, }H=d:\ \mathbf B^\top\mathbf A\text{ diagonal},\ P_{T-1}\propto e_T;\ "
              r"\text{orthogonal, }\delta<H<d:\ \operatorname{rank}\mathbf B^\top\mathbf A=\delta,\ \ell\to0",
    status="empirical",
    params=[],
    notes="Catalogue §3.3 R6.a plan at reduced size (d = 4, T_max = 5 instead of d = 10, T = 15, L-BFGS instead of "
          "Adam): exact population loss, unitary by the corrected Prop 6.8 form (E6.2), orthogonal by torus "
          "quadrature. Random N(0, 1/4) initialisation, seed 0. Trend assertions with loose tolerances: final loss "
          "<= 1e-6; unitary: |offdiag(B^T A)| / |diag| <= 1e-2 and sum_{t<T}|P_{T-1,t}| / |P_{T-1,T}| <= 1e-2; "
          "orthogonal with H = 3 (delta = 2 < H < d = 4, as the thesis's H = 8 between delta = 5 and d = 10): "
          "sigma_3(B^T A)/sigma_1 <= 1e-2 (rank delta although H = 3 allows 3) and P_{T-1,T-1}/P_{T-1,T} = -1/2 "
          "(Prop 6.11's rank-delta member) to 1e-2. Whether L-BFGS reaches zero loss from a random start is the "
          "empirical content (Fig 6.3: 'arbitrarily small final loss'). Measured over seeds 0-5 (not asserted): "
          "H = 3 reaches zero loss for 4/6 seeds (seeds 3, 4 drift to P_{T-1,T-1}/P_{T-1,T} -> -1, the impossible "
          "b = -1 family, loss ~2, parameters growing, ~190 s each); H = delta = 2 only for 1/6 (local minima at "
          "loss 5.13 and 2.87). Seed 0 is used (about 11 s for both runs).",
    catalogue="sander_part23 §3.3 R6.a; §2.3 EMP6 (Fig 6.3)",
    covers=("EMP6",),
)


@fig63.reproduction(name="cpu_fig63", slow=True)
def _(p):
    """Both training runs reach the predicted zero-loss structures."""
    Lu, Cu, Pu = _fig63_train("unitary", 4, 4, 5, 0, 3000)
    Lo, Co, Po = _fig63_train("orthogonal", 4, 3, 5, 0, 1500)
    off = np.abs(Cu - np.diag(np.diag(Cu)))
    sv = np.linalg.svd(Co, compute_uv=False)
    p_ratio_u = max(float(np.sum(np.abs(r[:-1])) / abs(r[-1])) for r in Pu.values())
    p_ratio_o = max(abs(float(r[-2] / r[-1]) + 0.5) for T, r in Po.items() if T >= 3)
    parts = {"unitary loss": (Lu, 1e-6), "orthogonal loss": (Lo, 1e-6),
             "unitary offdiag": (float(np.max(off) / np.min(np.abs(np.diag(Cu)))), 1e-2),
             "unitary P -> e_T": (p_ratio_u, 1e-2),
             "orthogonal rank": (float(sv[2] / sv[0]), 1e-2),
             "orthogonal P ratio -1/2": (p_ratio_o, 1e-2)}
    return Outcome.from_parts(parts, "Fig 6.3 structures", {"singular_values_orthogonal": sv.tolist(),
                                                            "BtA_unitary": Cu.tolist()})
