"""Chen §3.2 (seed lines 374-482): the steps of Theorem 3.2 checked pointwise on one cluster -- the
truncation as a projection, the bias and rotation equations, the cost decrease and the commutator identity
(catalogue chen §2.4: T2-T5; errata E1, E9).

Claims:

* ``chen.truncation_projection`` (3.12)-(3.13): tau = R^T H R x - R^T H^perp R beta [E9: R_l, not W_l]
* ``chen.bias_flow``            (3.19) pointwise against finite differences (T2); needs alignment
* ``chen.rotation_generator``   (3.22) pointwise against finite differences along rotations (T3, E1)
* ``chen.cost_decrease``        (3.24)-(3.26): d_s C = -|R^T J0perp R(beta+yt)|^2 - Tr|Omega|^2 <= 0 (T4)
* ``chen.commutator_identity``  (3.27): [H, M] = H M H^perp - H^perp M H for any M (T5)

Notation decisions D1-D9: see ``theorems/chen/_common.py``; the metric on O(Q) (D2), layer coordinates and
the corrected generator (E1): see ``theorems/chen/_pointwise.py``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import expm

from solvers import chen as cm
from solvers import fd, orthogonal
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.chen._common import EPS, KINK, XP, random_orthogonal, rng_for
from theorems.chen._pointwise import _cost1, _kink_guard, _pt_params, point_state


def _omega_fd(R, beta, X, yt, h=1e-5):
    """Omega by central differences along R -> expm(sum_k a_k E_k) R, E_k = e_i e_j^T - e_j e_i^T (i<j):
    d C / d a_k = Tr(E_k Omega) = -2 Omega_ij (Lemma 6.1).  Returns (Omega_fd, entrywise error)."""
    Q = R.shape[0]
    pairs = [(i, j) for i in range(Q) for j in range(i + 1, Q)]

    def E(a):
        W = np.zeros((Q, Q))
        for (i, j), ak in zip(pairs, a):
            W[i, j] += ak
            W[j, i] -= ak
        return W
    f = lambda a: _cost1(expm(E(a)) @ R, beta, X, yt)
    (g,), (e,) = fd.gradient_with_error(f, [np.zeros(len(pairs))], h=h)
    Om, Er = np.zeros((Q, Q)), np.zeros((Q, Q))
    for (i, j), gk, ek in zip(pairs, g, e):
        Om[i, j], Om[j, i] = -gk / 2, gk / 2
        Er[i, j] = Er[j, i] = ek / 2
    return Om, Er


# ===========================================================================
# chen.truncation_projection ((3.12)-(3.13), E9)
proj = Claim(
    id="chen.truncation_projection",
    title="tau as a projection, (3.12), and its beta-Jacobian (3.13)",
    label="(3.12)-(3.13)",
    section="3.2",
    equation="(3.9)-(3.13)",
    lines=(397, 409),
    statement=r"\tau^{(\ell)}(x)=W_\ell^TH^{(\ell)}(x)W_\ell x-W_\ell^TH^{(\ell)\perp}(x)W_\ell\beta^{(\ell)},\quad "
              r"\partial_{\beta^{(\ell)}}\tau^{(\ell)}=-(W^{(\ell)})^{-1}H^{(\ell)\perp}W^{(\ell)}",
    status="erratum",
    corrected=r"\tau^{(\ell)}(x)=R_\ell^TH^{(\ell)}(x)R_\ell x-R_\ell^TH^{(\ell)\perp}(x)R_\ell\beta^{(\ell)}"
              r"\ (R_\ell\text{ the cumulative orthogonal factor});\ (3.13)\text{ as printed}",
    params=_pt_params(),
    notes="E9: (3.12) uses the per-layer W_l where the cumulative orthogonal factor R_l (W^(l) = W_* R_l) is "
          "meant (typo).  (3.13) is right for any invertible cumulative W^(l) (checked by central differences "
          "at an aligned W = D R and at a general W).",
    catalogue="chen §4 E9 (l.399); §3 R1 (3.12), (3.13)",
    covers=("E9",),
)


def _proj_outcome(p, printed=False):
    R, beta, X, yt = point_state(p)
    rng = rng_for(p.seed + 21)
    R1 = random_orthogonal(p.Q, rng)              # layer 1 of a 2-layer aligned network with W^(2) = R
    W_l = R @ R1.T                                # per-layer W_2, W_2 W^(1) = R
    U = R @ (X + beta[:, None])
    H = cm.heav(U)
    F = W_l if printed else R
    proj_ = np.stack([F.T @ (H[:, i] * (F @ X[:, i])) - F.T @ ((1 - H[:, i]) * (F @ beta)) for i in range(p.N)], axis=1)
    e312 = float(np.max(np.abs(proj_ - cm.tau(R, beta, X))))
    # (3.13) at a general invertible W by central differences of tau_W in beta
    W = R + 0.3 * rng.standard_normal((p.Q, p.Q))
    Uw = W @ (X + beta[:, None])
    # (3.12) is evaluated at the point (both sides take H from the same U: only a U at rounding level of 0 is
    # ambiguous); (3.13)'s central differences move beta by h = 1e-5, hence u = W(x + beta) by <= |W|_2 h: the gate
    # is that reach (was 1e-3, 5 of 20 draws of the fresh sweep 27182818 inconclusive at N = 15-32)
    reach = 4 * float(np.linalg.norm(W, 2)) * 1e-5
    if np.min(np.abs(U)) < 64 * EPS * (1 + float(np.max(np.abs(X))) + float(np.max(np.abs(beta)))) \
            or np.min(np.abs(Uw)) < reach:
        return inconclusive(f"a point lies within the central difference's reach {reach:.2g} of a ReLU kink")
    e313, tol313 = 0.0, 0.0
    for i in range(p.N):
        Jfd = np.stack([fd.central_difference(lambda b: cm.tau_general(W, b, X[:, [i]])[k, 0], beta, 1e-5)
                        for k in range(p.Q)])
        J = -np.linalg.solve(W, (Uw[:, i] <= 0)[:, None] * W)
        e313 = max(e313, float(np.max(np.abs(Jfd - J))))
    # tau_W is affine in beta between kinks (step 1e-5 moves u by <= |W| 1e-5 < 1e-3): the central difference
    # has no truncation error, only cancellation 2 eps |tau| / h, amplified by the solve (cond W)
    tau_max = float(np.max(np.abs(cm.tau_general(W, beta, X))))
    tol313 = 16 * EPS * (1 + tau_max) / 1e-5 * np.linalg.cond(W)
    sc = 64 * p.Q * EPS * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)))
    return Outcome.from_parts({"3_12": (e312, sc), "3_13": (e313, tol313)}, message="(3.12) and (3.13)")


@proj.numeric
def proj_numeric(p):
    """(3.12) with R_l, and (3.13) against central differences."""
    return _proj_outcome(p)


proj.property(over=("Q", "N", "seed"), max_examples=10)


@proj.falsifier("stated", search=("seed",))
def proj_stated(p):
    """(3.12) with the per-layer W_l (= R_2 R_1^T in a two-layer aligned network with W^(2) = R_2)."""
    return _proj_outcome(p, printed=True)


# ===========================================================================
# chen.bias_flow (T2)
bias = Claim(
    id="chen.bias_flow",
    title="Bias equation (3.19): -dC/dbeta = -R^T J0perp R (beta + yt)",
    label="Thm 3.2 (3.19)",
    section="3.2, 6",
    equation="(3.19), (6.4)-(6.9)",
    lines=(431, 440),
    statement=r"\partial_{\beta^{(\ell)}}\mathcal C_N=R_\ell^T\Big(\int_{\mathbb R^Q\setminus\mathbb R^Q_+}dx\,"
              r"\mu_\ell(a^{-1}_{R_\ell,\beta^{(\ell)}}(x))H^\perp(x)\Big)R_\ell(\beta^{(\ell)}+\tilde y_\ell)",
    status="holds",
    params=_pt_params(),
    notes="Key step: the cancellation (6.8) H^perp sigma(u) = 0, which needs alignment (for general W the "
          "(6.4) form W^T H^perp W^{-T}(tau - yt) keeps the sigma term) and the Euclidean metric (fails for the "
          "pull-back cost, remark l.909).  Reference: central differences (solvers/fd.py) of the cost written "
          "through the network; states with a layer coordinate within 1e-3 of a kink are inconclusive.",
    catalogue="chen §2.4 T2; §3 R2",
    covers=("T2",),
)


def _bias_outcome(p, formula):
    R, beta, X, yt = point_state(p)
    if _kink_guard(R, beta, X) < KINK:
        return inconclusive("a data point lies within 1e-3 of a ReLU kink: finite differences would straddle it")
    (g,), (err,) = fd.gradient_with_error(lambda b: _cost1(R, b, X, yt), [beta], h=1e-5)
    val = formula(R, beta, X, yt)
    res = float(np.max(np.abs(val - g)))
    # error model: FD error estimate (Richardson + cancellation, solvers/fd.py) plus rounding of the formula
    tol = float(np.max(err)) + 64 * p.Q * EPS * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)) + np.max(np.abs(yt)))
    return Outcome(residual=res, tolerance=tol, values={"grad_fd": g.tolist(), "formula": val.tolist(),
                                                        "J0perp": cm.j0perp(R, beta, X).tolist()},
                   message=f"|formula - FD gradient| = {res:.2e}")


@bias.numeric
def bias_numeric(p):
    """(3.19) against central differences of the cost."""
    return _bias_outcome(p, lambda R, b, X, yt: -cm.dbeta_effective(R, b, X, yt))


bias.property(over=("Q", "N", "seed"), max_examples=20)


@bias.falsifier("non_aligned", search=("seed",))
def bias_nonaligned(p):
    """Non-aligned W = S^T D S R: the cancellation (6.8) fails; the (6.9)-type formula with the polar factor
    R misses the gradient of the cost with tau = W^{-1} sigma(W(x+beta)) - beta."""
    R, beta, X, yt = point_state(p)
    rng = rng_for(p.seed + 1)
    S = random_orthogonal(p.Q, rng)
    W = S.T @ np.diag(np.linspace(0.5, 2.0, p.Q)) @ S @ R
    U = W @ (X + beta[:, None])
    if np.min(np.abs(U)) < KINK:
        return inconclusive("kink")
    f = lambda b: 0.5 * np.mean(np.sum((cm.tau_general(W, b, X) - yt[:, None]) ** 2, axis=0))
    (g,), (err,) = fd.gradient_with_error(f, [beta], h=1e-5)
    val = -cm.dbeta_effective(R, beta, X, yt)
    # the general (6.4) form matches (recorded for contrast)
    Hp = (U <= 0).astype(float)
    Tau = cm.tau_general(W, beta, X)
    gen = -np.mean([W.T @ (Hp[:, i] * np.linalg.solve(W.T, Tau[:, i] - yt)) for i in range(p.N)], axis=0)
    tol = float(np.max(err)) + 64 * p.Q * EPS * (1 + np.max(np.abs(X)))
    return Outcome(residual=float(np.max(np.abs(val - g))), tolerance=tol,
                   values={"general_6_4_error": float(np.max(np.abs(gen - g)))},
                   message=f"(3.19) with the polar factor vs FD: {np.max(np.abs(val - g)):.2e}; general (6.4): "
                           f"{np.max(np.abs(gen - g)):.1e}")


@bias.falsifier("pullback_cost", search=("seed",))
def bias_pullback(p):
    """Pull-back cost 1/2|A(tau - yt)|^2 (A = W^(L+1), random): the cancellation is assumed but fails."""
    R, beta, X, yt = point_state(p)
    A = np.eye(p.Q) + 0.8 * rng_for(p.seed + 2).standard_normal((p.Q, p.Q))
    if _kink_guard(R, beta, X) < KINK:
        return inconclusive("kink")
    f = lambda b: 0.5 * np.mean(np.sum((A @ (cm.tau(R, b, X) - yt[:, None])) ** 2, axis=0))
    (g,), (err,) = fd.gradient_with_error(f, [beta], h=1e-5)
    Jp = cm.j0perp(R, beta, X)
    val = R.T @ (Jp * (R @ (A.T @ A @ (beta + yt))))      # (3.19) with the metric A^T A inserted
    tol = float(np.max(err)) + 64 * p.Q * EPS * (1 + np.max(np.abs(X))) * np.linalg.norm(A) ** 2
    return Outcome(residual=float(np.max(np.abs(val - g))), tolerance=tol,
                   message=f"cancellation-assumed pull-back gradient vs FD: {np.max(np.abs(val - g)):.2e}")


# ===========================================================================
# chen.rotation_generator (T3, E1)
rot = Claim(
    id="chen.rotation_generator",
    title="Rotation generator (3.22): Omega = -pi_-((dC/dR) R^T) as a sector integral",
    label="Thm 3.2 (3.22)",
    section="3.2, 6",
    equation="(3.22)-(3.23), (6.13)-(6.21)",
    lines=(442, 459),
    statement=r"-\pi_-((\partial_{R}\mathcal C)R^T)=\int_{\rm off}dx\,\mu(a^{-1}(x))[H(x),M(x)],\ "
              r"M=\tfrac12(xv^T+vx^T)",
    status="erratum",
    corrected=r"-\pi_-((\partial_{R}\mathcal C)R^T)=\int dx\,\mu(a^{-1}(x))[H(x),M(x)-\tfrac12xx^T]"
              r"=-\int dx\,\mu(a^{-1}(x))[H(x),\tfrac12(rx^T+xr^T)],\ r=\sigma(x)-v",
    params=_pt_params(),
    notes="E1: (6.16) writes 2Huu^TH where the product is Huu^TH + Huu^T (H(Hu)u^T = Huu^T); Huu^T is not "
          "symmetric, so pi_- keeps 1/2[H, uu^T].  The paper's own Lemma 7.3/Thm 5.1 restricted to one layer "
          "give the corrected form.  Reference: central differences along R -> expm(a E_ij) R.",
    catalogue="chen §2.4 T3; §4 E1; §3 R2",
    covers=("T3", "E1"),
)


def _rot_outcome(p, formula):
    R, beta, X, yt = point_state(p)
    if _kink_guard(R, beta, X) < KINK:
        return inconclusive("a data point lies within 1e-3 of a ReLU kink: finite differences would straddle it")
    Om_fd, err = _omega_fd(R, beta, X, yt)
    val = formula(R, beta, X, yt)
    res = float(np.max(np.abs(val - Om_fd)))
    tol = float(np.max(err)) + 64 * p.Q * EPS * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)) + np.max(np.abs(yt))) ** 2
    off = int(np.sum([(0 < np.sum(u > 0) < p.Q) for u in (R @ (X + beta[:, None])).T]))
    return Outcome(residual=res, tolerance=tol,
                   values={"omega_fd": Om_fd.tolist(), "omega_formula": val.tolist(), "off_diagonal_points": off},
                   message=f"|Omega formula - Omega FD| = {res:.2e} ({off} of {p.N} points off-diagonal)")


@rot.numeric
def rot_numeric(p):
    """Corrected generator (E1) against central differences along rotations."""
    return _rot_outcome(p, cm.omega_corrected)


rot.property(over=("Q", "N", "seed"), max_examples=20)


@rot.falsifier("stated", search=("seed",))
def rot_stated(p):
    """Printed (3.22): any state with an off-diagonal point refutes it."""
    return _rot_outcome(p, cm.omega_stated)


def _rot_symbolic_core(variant="stated"):
    """Q = 2, R = rot(theta), symbolic x, beta, yt; in each one-active pattern sigma(u) = Hu and
    d f/d theta = -<J, Omega>_F (R' = J R, Lemma 6.1) holds exactly for the corrected Omega; the printed
    one leaves -/+ u1 u2 (reduced modulo cos^2 + sin^2 - 1)."""
    th, c, s = sp.symbols("theta c s")
    x = sp.Matrix(sp.symbols("x1 x2"))
    b = sp.Matrix(sp.symbols("b1 b2"))
    y = sp.Matrix(sp.symbols("y1 y2"))
    R = sp.Matrix([[sp.cos(th), -sp.sin(th)], [sp.sin(th), sp.cos(th)]])
    J = sp.Matrix([[0, -1], [1, 0]])
    out, left = {}, 0
    for pat in [(1, 0), (0, 1)]:
        H = sp.diag(*pat)
        u = R * (x + b)
        v = R * (b + y)
        f = ((R.T * H * u - b - y).T * (R.T * H * u - b - y))[0] / 2
        df = sp.diff(f, th)
        r = H * u - v
        comm = lambda M: H * M - M * H
        Om_c = (1 if variant == "sign_flipped" else -1) * comm((r * u.T + u * r.T) / 2)
        Om_p = comm((u * v.T + v * u.T) / 2)
        for name, Om in (("corrected", Om_c), ("printed", Om_p)):
            e = sp.expand(df + sum(J[i, j] * Om[i, j] for i in range(2) for j in range(2)))
            e = sp.expand(e.subs({sp.cos(th): c, sp.sin(th): s}))
            rem = sp.reduced(e, [c**2 + s**2 - 1], c, s)[1]
            out[f"{name}{pat}"] = str(sp.factor(rem))
            if name == {"printed_omega": "printed"}.get(variant, "corrected"):
                left += int(rem != 0)
    return Outcome(residual=left, tolerance=0, values={
        "method": "sympy.expand + reduction modulo c^2+s^2-1", "instances": ["Q=2, patterns (1,0), (0,1)"],
        "remainders": out, "proved": "df/dtheta + <J, Omega_corr>_F = 0 in each one-active pattern"},
        message=f"corrected remainders {[out['corrected(1, 0)'], out['corrected(0, 1)']]}, printed "
                f"{[out['printed(1, 0)'], out['printed(0, 1)']]}")


@rot.symbolic(timeout=60)
def rot_symbolic(p):
    """Q = 2, R = rot(theta), symbolic x, beta, yt; in each one-active pattern sigma(u) = Hu and
    d f/d theta = -<J, Omega>_F (R' = J R, Lemma 6.1) holds exactly for the corrected Omega; the printed
    one leaves -/+ u1 u2 (reduced modulo cos^2 + sin^2 - 1)."""
    return _rot_symbolic_core()


@rot.mutant({
    'printed_omega': 'the printed generator (3.22), [H, (u v^T + v u^T)/2]',
    'sign_flipped': 'the corrected generator with the opposite sign, +[H, (r u^T + u r^T)/2]',
}, timeout=60)
def rot_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _rot_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


@rot.reproduction()
def rot_reproduction(p):
    """Catalogue T3(b)/R2 decisive case: beta = -yt (v = 0), one point at layer coordinates u = (1, -2):
    Omega_FD = Omega_corr = [[0, 1], [-1, 0]], Omega_printed = 0."""
    R = np.eye(2)
    yt = np.array([0.3, -0.7])
    beta = -yt
    X = (np.array([1.0, -2.0]) - beta)[:, None]
    Om_fd, err = _omega_fd(R, beta, X, yt)
    want = np.array([[0.0, 1.0], [-1.0, 0.0]])
    return Outcome.from_parts({"fd": (float(np.max(np.abs(Om_fd - want))), float(np.max(err)) + 1e-9),
                               "corrected": (float(np.max(np.abs(cm.omega_corrected(R, beta, X, yt) - want))), 1e-15),
                               "printed_is_zero": (float(np.max(np.abs(cm.omega_stated(R, beta, X, yt)))), 1e-15)},
                              message="u = (1,-2), v = 0", values={"omega_fd": Om_fd.tolist()})


# ===========================================================================
# chen.cost_decrease (T4)
dec = Claim(
    id="chen.cost_decrease",
    title="Monotone cost (3.24)-(3.26): beta part -|R^T J0perp R(beta+yt)|^2, rotation part -Tr|Omega|^2",
    label="Thm 3.2 (3.24)-(3.26)",
    section="3.2, 6",
    equation="(3.24)-(3.26), (6.22)-(6.23)",
    lines=(461, 473),
    statement=r"\partial_s\mathcal C_N=\sum_\ell\big((\partial_{\beta^{(\ell)}}\mathcal C)\cdot\partial_s\beta^{(\ell)}"
              r"+\mathrm{Tr}((\partial_{R_\ell}\mathcal C)^T\partial_sR_\ell)\big)\le0,\ "
              r"\mathrm{Tr}((\partial_{R}\mathcal C)^T\partial_sR)=-\mathrm{Tr}|\Omega|^2",
    status="holds",
    params=_pt_params(),
    notes="Holds for Omega = -pi_-((dC/dR)R^T) (the definition in (3.22)), hence for the corrected formula.  "
          "With the printed formula (3.22) the rotational part can be positive (E1 consequence): falsifier "
          "'printed_omega'.  Reference: d/ds C(beta + s beta', cay(s Omega) R) by central differences.",
    catalogue="chen §2.4 T4",
    covers=("T4",),
)


def _dec_outcome(p, omega):
    R, beta, X, yt = point_state(p)
    if _kink_guard(R, beta, X) < KINK:
        return inconclusive("a data point lies within 1e-3 of a ReLU kink")
    db = cm.dbeta_effective(R, beta, X, yt)
    Om = omega(R, beta, X, yt)
    f_b = lambda s: _cost1(R, beta + s[0] * db, X, yt)
    f_R = lambda s: _cost1(orthogonal.cayley(s[0] * Om) @ R, beta, X, yt)
    (gb,), (eb,) = fd.gradient_with_error(f_b, [np.zeros(1)], h=1e-5)
    (gR,), (eR,) = fd.gradient_with_error(f_R, [np.zeros(1)], h=1e-5)
    pred_b = -float(np.sum(db * db))
    pred_R = -float(np.sum(Om * Om))
    sc = 64 * p.Q * EPS * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)) + np.max(np.abs(yt))) ** 2
    parts = {"beta_part_3_25": (abs(gb[0] - pred_b), eb[0] + sc), "rotation_part_3_26": (abs(gR[0] - pred_R), eR[0] + sc),
             "monotone": (max(0.0, gb[0] + gR[0]), eb[0] + eR[0] + sc)}
    return Outcome.from_parts(parts, message="d_s C along the flow vs (3.25)/(3.26)",
                              values={"dC_beta": gb[0], "dC_rotation": gR[0], "pred_beta": pred_b, "pred_rotation": pred_R})


@dec.numeric
def dec_numeric(p):
    """(3.25) and (3.26) with Omega = -pi_-((dC/dR)R^T) (corrected formula), and d_s C <= 0."""
    return _dec_outcome(p, cm.omega_corrected)


dec.property(over=("Q", "N", "seed"), max_examples=15)


@dec.falsifier("printed_omega", search=("seed",), fixed={"Q": 2, "N": 4})
def dec_printed(p):
    """With the printed (3.22) the rotational part of d_s C is not -Tr|Omega|^2 (and can be positive)."""
    return _dec_outcome(p, cm.omega_stated)


# ===========================================================================
# chen.commutator_identity (T5)
comm = Claim(
    id="chen.commutator_identity",
    title="[H, M] = H M H^perp - H^perp M H for diagonal projections H (3.27)",
    label="(3.27)",
    section="3.2",
    equation="(3.27)",
    lines=(477, 481),
    statement=r"H(x)M-MH(x)=H(x)MH^\perp(x)-H^\perp(x)MH(x)\quad(M=M^T)",
    status="holds",
    params=[Param.int("Q", 4, 1, 8, "dimension", search=(1, 6)),
            Param.seed("seed of M and the pattern"),
            Param.int("batch", 1, 1, 1024, "pairs (H, M) checked at once, stacked on a leading axis (seeds seed, "
                      "seed + 1, ...)", search=(1, 16)),
            Param.matrix("M", None, "a Q x Q matrix of your own (the patterns H still drawn from seed, seed + 1, ...)",
                         shape=("Q", "Q"))],
    validate=lambda p: _validate_comm(p),
    notes="M is a matrix parameter (the identity quantifies over M; properties and sweeps draw the matrix families).  "
          "True for any M (symmetry of M is not needed), as long as H is a diagonal 0/1 matrix.  (In fact for any H: "
          "H M (I - H) - (I - H) M H = H M - M H; the numeric check is a rounding test of that algebra, batched.)",
    catalogue="chen §2.4 T5",
    covers=("T5",),
)


def _validate_comm(p):
    if p.M is not None:
        sh = np.shape(p.M)
        if len(sh) != 2 or sh[0] != sh[1]:
            raise ParamError(f"parameter M must be a square matrix, got shape {sh}")


def _comm_case(p, seed=None):
    rng = rng_for(p.seed if seed is None else seed)
    Q = p.Q if p.M is None else np.shape(p.M)[0]
    H = np.diag((rng.random(Q) < 0.5).astype(float))
    M = rng.standard_normal((Q, Q))
    if p.M is not None:
        M = np.asarray(p.M, float)
    return H, M, np.eye(Q) - H


@comm.numeric(backends=XP)
def comm_numeric(p):
    """Random 0/1 diagonal H and a (non-symmetric) M; ``batch`` pairs (seeds seed, seed + 1, ...) stacked on a
    leading axis, the pair with the largest residual over its own tolerance decides."""
    from solvers.xp import asnumpy
    cases = [_comm_case(p, p.seed + k) for k in range(p.batch)]
    tol = np.array([8 * M.shape[0] * EPS * float(np.max(np.abs(M))) for _, M, _ in cases])
    xp = xp_of(p)
    H, M, Hp = on(xp, *(np.stack(a) for a in zip(*cases)))
    res = asnumpy(xp.max(xp.abs((H @ M - M @ H) - (H @ M @ Hp - Hp @ M @ H)), axis=(-2, -1)))
    k = int(np.argmax(np.where(tol > 0, res / np.where(tol > 0, tol, 1.0), np.where(res > 0, np.inf, 0.0))))  # M = 0
    return Outcome(residual=float(res[k]), tolerance=float(tol[k]), values={"pairs": p.batch, "worst_seed": p.seed + k},
                   message=f"entrywise (worst of {p.batch} pairs: seed {p.seed + k})")


comm.property(over=("Q", "seed", "M"), max_examples=15)


@comm.falsifier("plus_sign", search=("seed",))
def comm_plus(p):
    """[H, M] = H M H^perp + H^perp M H (wrong sign) fails unless M is block-diagonal in H."""
    H, M, Hp = _comm_case(p)
    res = float(np.max(np.abs((H @ M - M @ H) - (H @ M @ Hp + Hp @ M @ H))))
    return Outcome(residual=res, tolerance=8 * M.shape[0] * EPS * np.max(np.abs(M)), message="entrywise")


def _comm_symbolic_core(variant="stated"):
    """Q = 3, every pattern H in {0,1}^3, M a matrix of 9 free symbols: the identity expands to 0."""
    M = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"m{i}{j}"))
    left = 0
    for k in range(8):
        H = sp.diag(*[(k >> i) & 1 for i in range(3)])
        Hp = sp.eye(3) - H
        rhs = {"sign_flipped": H * M * Hp + Hp * M * H, "missing_term": H * M * Hp}.get(variant, H * M * Hp - Hp * M * H)
        left += sum(1 for e in (H * M - M * H - rhs) if sp.expand(e) != 0)
    # the most general instance: H a 3 x 3 matrix of 9 free symbols too (the identity needs neither that H is
    # diagonal nor that it is a projection: H M (I - H) - (I - H) M H = H M - M H term by term)
    H = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"h{i}{j}"))
    Hp = sp.eye(3) - H
    rhs = {"sign_flipped": H * M * Hp + Hp * M * H, "missing_term": H * M * Hp}.get(variant, H * M * Hp - Hp * M * H)
    left += sum(1 for e in (H * M - M * H - rhs) if sp.expand(e) != 0)
    return Outcome(residual=left, tolerance=0, values={"method": "sympy.expand",
                                                       "instances": ["Q=3, 8 patterns", "Q=3, H and M free"],
                                                       "proved": "[H,M] = H M H^perp - H^perp M H for any M (and any "
                                                                 "H, H^perp := I - H)"})


@comm.symbolic(timeout=30)
def comm_symbolic(p):
    """Q = 3, every pattern H in {0,1}^3, M a matrix of 9 free symbols: the identity expands to 0."""
    return _comm_symbolic_core()


@comm.mutant({
    'sign_flipped': '[H, M] = H M H^perp + H^perp M H',
    'missing_term': '[H, M] = H M H^perp (the second term dropped)',
}, timeout=30)
def comm_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _comm_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out
