"""Chen §3.3 (seed lines 483-554): the gradient flow through the zeroth, first and second moments of the
sectors, Corollary 3.5, and the remark that no backpropagation is needed (catalogue chen §2.4 T7, §2.5:
K1-K3; erratum E2).

Claims:

* ``chen.sector_moments``       (3.33)-(3.35), (3.39)-(3.40): J0perp = diag(n_r/N), [H,M]_ij = (nu_i-nu_j)M_ij,
                                no contribution from R^Q_+ and R^Q_- (K1, K3)
* ``chen.corollary_3_5``        (3.36)-(3.38) through sector moments (K2, E2)
* ``chen.no_backprop``          l.551 "no backpropagation is needed" (T7, heuristic)

Notation decisions D1-D9: see ``theorems/chen/_common.py``; the metric on O(Q) (D2), layer coordinates and
the corrected generator (E1): see ``theorems/chen/_pointwise.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import xp_chen as xc
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome
from theorems.chen._common import EPS, XP, j0perp_direct, rng_for
from theorems.chen._pointwise import _pt_params, point_state


# ===========================================================================
# chen.sector_moments (K1, K3)
mom = Claim(
    id="chen.sector_moments",
    title="Sector moments: J0perp = diag(n_r/N), [H,M]_ij = (nu_i - nu_j) M_ij, no R^Q_± contribution",
    label="Defs 3.3-3.4, (3.33)-(3.35), (3.39)-(3.40)",
    section="3.3",
    equation="(3.28)-(3.35), (3.39)-(3.40)",
    lines=(485, 549),
    statement=r"J_0^{(\ell)\perp}=\mathrm{diag}(n_r^{(\ell)}/N_\ell),\ n_r=\#\{i:(a(x_i))_r\le0\};\ "
              r"[H(x),M]_{ij}=(\nu_i-\nu_j)M_{ij}\ (x\in\mathbb R^Q_\nu);\ "
              r"\text{the } \mathbb R^Q_\pm \text{ sectors do not contribute to }\Omega",
    status="holds",
    params=_pt_params(),
    notes="l.547 says 'negative'; it means non-positive (h(0) = 0, D1).  (3.35) holds for any M.  (3.32)-(3.33): J0 "
          "counted on the half spaces {u_r > 0} plus J0perp read off the chain-rule bias gradient is I0 1 = 1 (read-through "
          "8: this part was the sum of one-hot sector masses, 1 for every input).  The vanishing "
          "of the R^Q_+ and R^Q_- contributions also holds for the corrected Omega (checked).",
    catalogue="chen §2.5 K1, K3",
    covers=("K1", "K3"),
)


def _mom_parts(R, beta, X, yt, count=lambda U: U <= 0, xp=None):
    """The sector-moment identities through the array API (``xp``; NumPy's by default): the points in
    stacks (N, Q, Q) for the commutators."""
    Q, N = X.shape
    M = rng_for(1).standard_normal((Q, Q))
    Uh = R @ (X + beta[:, None])                       # host: the scale of the rounding model
    sc = 8 * Q * EPS * (1 + np.max(np.abs(Uh))) * (1 + np.max(np.abs(M)) + np.max(np.abs(yt)) + np.max(np.abs(beta)))
    xp = xp_of("numpy") if xp is None else xp
    R, beta, X, yt, M = on(xp, R, beta, X, yt, M)
    U = R @ (X + xc.col(beta))
    nu = xc.heav(U).T                                                                  # (N, Q) patterns
    Hs = nu[:, :, None] * xp.eye(Q, dtype=xp.float64)[None, :, :]                      # H(u_i) = diag(nu_i)
    # (3.32) J0perp = int mu H^perp, read off where it acts, the bias equation: the direct gradient (chain rule through
    # the network) is dC/dbeta = R^T J0perp v, here at v = 1 (was mean(1 - h(U)) against mean(U <= 0): the same count
    # twice, a part that could not fail); a multiple of 1/N up to the chain rule's rounding ~ Q eps (1 + max|u|)
    Jp_int, _ = j0perp_direct(xp, R, beta, X)
    Jp_cnt = xp.sum(xp.astype(count(U), xp.float64), axis=1) / N                        # (3.39)-(3.40)
    # (3.32)-(3.33): J0 counted on the open half spaces {u_r > 0} (3.33) plus J0perp from the chain rule is
    # I0 1, and I0 = 1 (a = R(. + beta) is an isometry, so the pullback of mu_l is a probability).  Was: the sum
    # of the sector masses of a one-hot matrix, 1 for every input (each point lies in exactly one sector).
    J0_cnt = xp.mean(nu, axis=0)                                                         # (3.33) diagonal of J0
    i0 = float(xc.max_abs(J0_cnt + Jp_int - 1.0))
    e335 = float(xc.max_abs(Hs @ M - M @ Hs - (nu[:, :, None] - nu[:, None, :]) * M))  # (3.35), all points at once
    # R^Q_+ / R^Q_- points contribute nothing to either generator (weights 1/#diagonal points on them, 0 elsewhere)
    diag = xp.all(U > 0, axis=0) | xp.all(U <= 0, axis=0)
    nd = int(xp.sum(xp.astype(diag, xp.int64)))
    contrib = 0.0
    if nd:
        w = xp.astype(diag, xp.float64) / nd
        contrib = max(float(xc.max_abs(xc.omega_pointwise(R, beta, X, yt, "corrected", w))),
                      float(xc.max_abs(xc.omega_pointwise(R, beta, X, yt, "stated", w))))
    return {"J0perp_3_39": (float(xc.max_abs(Jp_int - Jp_cnt)), 16 * Q * EPS * (1 + np.max(np.abs(Uh)))),
            "J0_plus_J0perp_is_I0": (i0, 16 * Q * EPS * (1 + np.max(np.abs(Uh))) + 4 * N * EPS),
            "commutator_3_35": (e335, sc),
            "diagonal_sectors_vanish": (contrib, sc * np.max(np.abs(U)))}


@mom.numeric(backends=XP)
def mom_numeric(p):
    """(3.32) = (3.39)-(3.40), J0 (3.33) + J0perp = I0 1 = 1, (3.35) for any M, no R^Q_± contribution to Omega."""
    R, beta, X, yt = point_state(p)
    return Outcome.from_parts(_mom_parts(R, beta, X, yt, xp=xp_of(p)), message="sector moments")


mom.property(over=("Q", "N", "seed"), max_examples=15)


@mom.falsifier("strict_count")
def mom_strict(p):
    """Counting n_r with '< 0' instead of '<= 0' fails on a wall (a point with (a(x))_r = 0)."""
    R = np.eye(2)
    beta = np.zeros(2)
    X = np.array([[0.0, 1.0], [1.0, -1.0]])   # u = (0, 1) on a wall, and (1, -1)
    return Outcome.from_parts(_mom_parts(R, beta, X, np.zeros(2), count=lambda U: U < 0),
                              message="wall point u = (0, 1)")


# ===========================================================================
# chen.corollary_3_5 (K2, E2)
cor = Claim(
    id="chen.corollary_3_5",
    title="Corollary 3.5: Omega through first (and second) sector moments",
    label="Cor 3.5",
    section="3.3",
    equation="(3.36)-(3.38)",
    lines=(523, 537),
    statement=r"\partial_s\beta^{(\ell)}=-R_\ell^TJ_0^{(\ell)\perp}R_\ell(\beta^{(\ell)}+\tilde y_\ell),\ "
              r"[\Omega_\ell]_{ij}=\sum_{\nu\in\{0,1\}^Q}(\nu_i-\nu_j)\big((J_{1,\nu})_iv_j+v_i(J_{1,\nu})_j\big);"
              r"\ \text{the flow depends on the data only through first sector moments}",
    status="erratum",
    corrected=r"(3.36)\text{ as printed};\ [\Omega_\ell]_{ij}=\sum_\nu(\nu_i-\nu_j)\Big[\tfrac12\big((J_{1,\nu})_iv_j+v_i(J_{1,\nu})_j\big)"
              r"-\tfrac12(J_{2,\nu})_{ij}\Big],\ J_{2,\nu}=\int_{\mathbb R^Q_\nu}dx\,\mu_\ell(a^{-1}(x))\,xx^T",
    params=_pt_params(),
    notes="E2: a factor 1/2 is missing relative to (3.22)-(3.23) and the E1 second-moment term is missing, so "
          "the claim 'only through the first degree moments' (l.537) is false; the §3.3 heading (l.483) "
          "announces second moments.  l.525 cites (3.13) and (3.21); (3.19) and (3.21) are meant.  Reference: "
          "the direct generator -pi_-((dC/dW)R^T) by the chain rule (solvers/chen.grad_composed), itself "
          "certified against finite differences by chen.rotation_generator.  (3.36) (read-through 8: in the "
          "equation range but unchecked here) is a part of the numeric check: -R^T J0perp R(beta + yt) with J0perp counted "
          "(3.39)-(3.40) against the direct beta-gradient.",
    catalogue="chen §2.5 K2; §4 E2; §3 R3",
    covers=("K2", "E2"),
)


def _cor_outcome(p, form):
    """Both generators through the array API: the moments from the sectors as a one-hot matrix
    (solvers/xp_chen.omega_moments), the direct generator by the chain rule (solvers/xp_chen.grad_packed)."""
    from solvers.xp import asnumpy
    R, beta, X, yt = point_state(p)
    tol = 64 * p.Q * EPS * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)) + np.max(np.abs(yt))) ** 2
    xp = xp_of(p)
    R, beta, X, yt = on(xp, R, beta, X, yt)
    Om_dir = xc.omega_direct1(R, beta, X, yt)
    val, nsec = xc.omega_moments(R, beta, X, yt, form=form)
    res = float(xc.max_abs(val - Om_dir))
    # (3.36) (read-through 8: the corollary's bias equation was not checked here): -R^T J0perp R (beta + yt) with
    # J0perp = diag(n_r/N) counted (3.39)-(3.40), against the direct beta-gradient (chain rule); printed = corrected
    N = X.shape[1]
    Jp = xp.mean(xp.astype(R @ (X + xc.col(beta)) <= 0, xp.float64), axis=1)
    db_mom = -(xp.matrix_transpose(R) @ xc.col(Jp * (R @ xc.col(beta + yt))[:, 0]))[:, 0]
    _, gb = xc.grad_packed([R], [beta], X, xp.broadcast_to(xc.col(yt), X.shape), xp.full((N,), 1.0 / N, dtype=xp.float64))
    res_b = float(xc.max_abs(db_mom + gb[0]))
    return Outcome.from_parts({"omega_3_38": (res, tol), "beta_3_36": (res_b, tol)},
                              values={"omega_direct": asnumpy(Om_dir).tolist(),
                                      "omega_moments": asnumpy(val).tolist(), "sectors": int(nsec)},
                              message=f"|moment formula - direct generator| = {res:.2e}; (3.36) {res_b:.2e}")


@cor.numeric(backends=XP)
def cor_numeric(p):
    """Corrected (3.38) (factor 1/2, second moments) against the direct generator."""
    return _cor_outcome(p, "corrected")


cor.property(over=("Q", "N", "seed"), max_examples=20)


@cor.falsifier("stated", search=("seed",))
def cor_stated(p):
    """Printed (3.38)."""
    return _cor_outcome(p, "printed")


@cor.falsifier("first_moments_only", search=("seed",))
def cor_first(p):
    """With the factor 1/2 restored but no second moments (i.e. (3.22) itself) the generator is still wrong."""
    R, beta, X, yt = point_state(p)
    Om_dir, _ = cm.omega_direct([R], [beta], [X], yt[None])
    res = float(np.max(np.abs(cm.omega_stated(R, beta, X, yt) - Om_dir[0])))
    tol = 64 * p.Q * EPS * (1 + np.max(np.abs(X)) + np.max(np.abs(beta)) + np.max(np.abs(yt))) ** 2
    return Outcome(residual=res, tolerance=tol, message="first moments only")


# ===========================================================================
# T7: registered without a numeric check
Claim(
    id="chen.no_backprop",
    title="'To solve (3.19), (3.21) no backpropagation is needed'",
    label="l.551",
    section="3.3",
    lines=(551, 551),
    statement=r"\text{solving (3.19), (3.21) needs no Jacobian of the parameter-to-output map}",
    status="heuristic",
    notes="True in the cluster-separated case: each (beta^(l), R_l) needs only the activation pattern of its own "
          "layer on the layer-l image of cluster l (solvers/chen.effective_rhs uses nothing else).  It still "
          "needs the forward image of the data.  False for Theorem 5.1 (no separation): P^± are products over "
          "all later layers, i.e. back-propagated Jacobians.  Not a checkable statement.",
    catalogue="chen §2.4 T7",
    covers=("T7",),
)
