"""Chen §8.1 (seed lines 1243-1309): propagators of the bilinear toy and Lemma 8.2 (catalogue chen §2.9:
S8c, L81, L82; errata E10, E12).

Claims:

* ``chen.toy_propagators``       S8c (8.9)-(8.11), L81: E(s) = V_L E(0) V_R [E10: the printed propagators
                                 use the swapped Gram matrices]
* ``chen.lemma_8_2``             L82: ||AB|| > sqrt(lambda_0)||A|| [E12: >= ; fails at A = 0]

D5: "W_{Q+1}" of §8-9 is the cumulative output matrix W^(Q+1); output bias b_{Q+1} = -W_{Q+1} b^(Q).  The
bilinear toy and its integrator: ``theorems/chen/_toy.py``; decisions D1-D9 in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.chen._common import EPS, XP, rng_for
from theorems.chen._toy import RTOL, _toy_instance, _toy_matrix_params, _toy_params, _validate_toy_matrices


# ---------------------------------------------------------------------------
sec8c = Claim(
    id="chen.toy_propagators",
    title="Propagator representation E(s) = V_L(s) E(0) V_R(s) of the toy error (and Lemma 8.1)",
    label="§8 (8.9)-(8.12), Lemma 8.1",
    section="8.1",
    equation="(8.9)-(8.17)",
    lines=(1249, 1289),
    statement=r"\partial_s\mathcal U_B=-\mathcal U_BBB^T,\ \partial_s\mathcal U_W=-W^TW\mathcal U_W,\ "
              r"E(s)=\mathcal U_W(s)E(0)\mathcal U_B(s)\ (8.11)",
    status="erratum",
    bound=True,
    corrected=r"\partial_s\mathcal V_L=-WW^T\mathcal V_L,\ \partial_s\mathcal V_R=-\mathcal V_RB^TB,\ "
              r"E(s)=\mathcal V_L(s)E(0)\mathcal V_R(s);\ \ \|\mathcal U_B(s,s_0)\|\le e^{-(s-s_0)\lambda_0}\ "
              r"\text{if }BB^T\ge\lambda_0\ (\text{L8.1, with }\le)",
    params=_toy_params(_toy_matrix_params()),
    validate=lambda p: _validate_toy_matrices(p),
    notes="(8.11) and Lemma 8.1 hold for every initial state: W(0), B(0), Y are matrix parameters (read-through 8; "
          "properties and sweeps draw the matrix families, entries bounded by 2).  All four propagators are integrated "
          "with the toy by DOP853 (rtol 1e-11).  Error model: global error "
          "~ 1e3 x rtol x scale.  Lemma 8.1 is checked on the same run with lambda_0 = inf_s lambda_min(B B^T) (the minimum over the 81 samples "
          "less the most lambda_min can fall between samples, ||B|| ||B'|| dt x 2) "
          "(part 'lemma_8_1', tolerance 1e-9 relative); it is a bound with a constant (the rate lambda_0), declared "
          "bound=True in the issue-19 audit 2 with its tightness lambda_0 s / -log||U_B(s)|| (best 0.998 at Q = 2, "
          "seed 1, T = 0.1) and a sharpened_10pct falsifier.  E10 also: (8.10) needs d/ds0 U_B(s,s0) = +B B^T(s0) U_B "
          "(falsifier 'sign_8_10'), and (8.16)-(8.17) need '-' before the forcing integrals (falsifier "
          "'duhamel_plus'); both are parts of the numeric check (trapezoid rule with a Richardson error estimate; "
          "central differences in s0).",
    catalogue="chen §2.9 S8c, L81; §4 E10",
    covers=("S8c", "E10", "L81"),
)


def _sec8c(p, printed):
    W0, B0, Y = _toy_instance(p)
    Q = W0.shape[0]                 # the user's matrices fix Q (p.Q otherwise)
    E0 = W0 @ B0 + Y

    def f(t, z):
        W, B = z[:Q * Q].reshape(Q, Q), z[Q * Q:2 * Q * Q].reshape(Q, Q)
        VL, VR, UB = (z[k * Q * Q:(k + 1) * Q * Q].reshape(Q, Q) for k in (2, 3, 4))
        E = W @ B + Y
        if printed:
            dVL, dVR = -(W.T @ W) @ VL, -VR @ (B @ B.T)
        else:
            dVL, dVR = -(W @ W.T) @ VL, -VR @ (B.T @ B)
        dUB = -UB @ (B @ B.T)
        return np.concatenate([(-E @ B.T).ravel(), (-W.T @ E).ravel(), dVL.ravel(), dVR.ravel(), dUB.ravel()])
    I = np.eye(Q).ravel()
    z0 = np.concatenate([W0.ravel(), B0.ravel(), I, I, I])
    ts = np.linspace(0, p.T, 81)
    sol = solve_ivp(f, (0, p.T), z0, method="DOP853", rtol=RTOL, atol=RTOL * 1e-2, t_eval=ts)
    err, lem, lam0, slope = 0.0, 0.0, np.inf, 0.0
    for k in range(len(ts)):
        z = sol.y[:, k]
        W, B = z[:Q * Q].reshape(Q, Q), z[Q * Q:2 * Q * Q].reshape(Q, Q)
        VL, VR, UB = (z[m * Q * Q:(m + 1) * Q * Q].reshape(Q, Q) for m in (2, 3, 4))
        err = max(err, float(np.max(np.abs(W @ B + Y - VL @ E0 @ VR))))
        lam0 = min(lam0, float(np.linalg.eigvalsh(B @ B.T)[0]))
        slope = max(slope, 2 * float(np.linalg.norm(B, 2) * np.linalg.norm(W.T @ (W @ B + Y), 2)))
    # Lemma 8.1's lambda_0 is the infimum over all s, the samples give only an upper estimate of it: between samples
    # lambda_min(B B^T) falls by at most |d/ds B B^T| dt/2 <= ||B|| ||B'|| dt (B' = -W^T E), taken x 2 for the sup
    # between samples (read-through 8: the sampled minimum was used, so a dip between samples could refute it)
    lam0 = max(0.0, lam0 - 2 * slope * (ts[1] - ts[0]) / 2)
    tight = None
    for k in range(len(ts)):
        UB = sol.y[4 * Q * Q:5 * Q * Q, k].reshape(Q, Q)
        nU = float(np.linalg.norm(UB, 2))
        lem = max(lem, nU * np.exp(ts[k] * lam0) - 1.0)
        # tightness of L8.1 (the rate lambda_0 is the constant): lambda_0 s / -log||U_B(s)|| <= 1, over the samples
        # where the decay -log||U_B|| > 1e-6 is resolved (DOP853 at rtol 1e-11: relative error < 1e-4 there)
        if k and -np.log(nU) > 1e-6:
            r = lam0 * ts[k] / -np.log(nU)
            tight = r if tight is None else max(tight, r)
    S = 1 + np.max(np.abs(E0))
    parts = {"representation": (err, 1e3 * RTOL * S), "lemma_8_1": (max(lem, 0.0), 1e-9)}
    if not printed:
        parts.update(_duhamel(p))
    return Outcome.from_parts(parts,
                              message=f"max |E(s) - V_L E(0) V_R| = {err:.2e}",
                              values={"lambda_0": lam0, "tightness": tight})


def _duhamel(p, sgn_forcing=-1.0, sgn_810=+1.0):
    """(8.10) and (8.16)-(8.17) with the propagators (8.9) (which are the right ones for B and W separately):
    U_W(s, s') = U_W(s) U_W(s')^{-1} (left), U_B(s, s') = U_B(s')^{-1} U_B(s) (right).  Duhamel integrals by
    the trapezoid rule on 801 points (error estimated by the 401-point rule: Richardson, O(dt^2)); d/ds0 by
    central differences of step 1e-3 (error O(1e-6) plus the integration error / 1e-3)."""
    W0, B0, Y = _toy_instance(p)
    Q = W0.shape[0]
    I = np.eye(Q).ravel()

    def f(t, z):
        W, B = z[:Q * Q].reshape(Q, Q), z[Q * Q:2 * Q * Q].reshape(Q, Q)
        UW, UB = z[2 * Q * Q:3 * Q * Q].reshape(Q, Q), z[3 * Q * Q:].reshape(Q, Q)
        E = W @ B + Y
        return np.concatenate([(-E @ B.T).ravel(), (-W.T @ E).ravel(), (-(W.T @ W) @ UW).ravel(),
                               (-UB @ (B @ B.T)).ravel()])
    T = min(p.T, 2.0)
    sol = solve_ivp(f, (0, T), np.concatenate([W0.ravel(), B0.ravel(), I, I]), method="DOP853", rtol=RTOL,
                    atol=RTOL * 1e-2, dense_output=True)
    get = lambda t: [sol.sol(t)[k * Q * Q:(k + 1) * Q * Q].reshape(Q, Q) for k in range(4)]
    WT, BT, UWT, UBT = get(T)

    def integrals(m):
        ts = np.linspace(0, T, m)
        fb, fw = [], []
        for t in ts:
            W, B, UW, UB = get(t)
            fb.append(UWT @ np.linalg.inv(UW) @ W.T @ Y)
            fw.append(Y @ B.T @ np.linalg.inv(UB) @ UBT)
        wts = np.full(m, T / (m - 1))
        wts[0] = wts[-1] = T / (2 * (m - 1))
        return np.tensordot(wts, np.array(fb), 1), np.tensordot(wts, np.array(fw), 1)
    Ib, Iw = integrals(801)
    Ib2, Iw2 = integrals(401)
    quad = max(np.max(np.abs(Ib - Ib2)), np.max(np.abs(Iw - Iw2))) / 3 + 1e3 * RTOL
    rB = float(np.max(np.abs(BT - (UWT @ B0 + sgn_forcing * Ib))))
    rW = float(np.max(np.abs(WT - (W0 @ UBT + sgn_forcing * Iw))))
    s0, d = 0.5 * T, 1e-3
    Ub = lambda s0: np.linalg.inv(get(s0)[3]) @ UBT
    dU = (Ub(s0 + d) - Ub(s0 - d)) / (2 * d)
    B = get(s0)[1]
    r810 = float(np.max(np.abs(dU - sgn_810 * (B @ B.T) @ Ub(s0))))
    fd_tol = 10 * d * d * (1 + np.max(np.abs(B))) ** 6 + 1e3 * RTOL / d
    return {"duhamel_8_16": (rB, 10 * quad), "duhamel_8_17": (rW, 10 * quad), "sign_8_10": (r810, fd_tol)}


@sec8c.numeric
def sec8c_numeric(p):
    """(8.11) with V_L' = -W W^T V_L and V_R' = -V_R B^T B; Lemma 8.1 on the same run."""
    return _sec8c(p, False)


sec8c.property(over=("Q", "seed", "W0", "B0", "Y"), max_examples=4, fixed={"T": 2.0})

# Lemma 8.1 ||U_B(s, 0)|| <= e^{-s lambda_0}: the rate lambda_0 = inf_s lambda_min(B B^T) is the constant.  It is
# sharp where lambda_min(B B^T) stays at its infimum (B B^T ~ lambda_0 I over the run, or small s with the
# infimum at s = 0); witness Q = 2, seed 1, T = 0.1 (ratio 0.998 with the rigorous lambda_0)
sec8c.tightness(over=("Q", "seed", "T"), max_examples=12, witnesses=[{"Q": 2, "seed": 1, "T": 0.1}])


@sec8c.falsifier("duhamel_plus", search=("seed",))
def sec8c_duhamel(p):
    """(8.16)-(8.17) as printed, with '+' in front of the forcing integrals."""
    parts = _duhamel(p, sgn_forcing=+1.0)
    return Outcome.from_parts({k: v for k, v in parts.items() if k.startswith("duhamel")},
                              message="printed Duhamel signs")


@sec8c.falsifier("sign_8_10", search=("seed",))
def sec8c_810(p):
    """(8.10) as printed: d/ds0 U_B(s, s0) = -B B^T(s0) U_B(s, s0)."""
    parts = _duhamel(p, sgn_810=-1.0)
    return Outcome.from_parts({"sign_8_10": parts["sign_8_10"]}, message="printed (8.10) sign")


@sec8c.falsifier("stated", search=("seed",), fixed={"Q": 2})
def sec8c_stated(p):
    """(8.11) with the printed propagators (8.9): Gram matrices W^T W and B B^T."""
    return _sec8c(p, True)


# ---------------------------------------------------------------------------
l82 = Claim(
    id="chen.lemma_8_2",
    title="Lemma 8.2: ||AB|| >= sqrt(lambda_0) ||A|| when B B^T >= lambda_0",
    label="Lemma 8.2",
    section="8.1",
    equation="(8.18)-(8.20)",
    lines=(1293, 1308),
    statement=r"BB^T>\lambda_0\ \Longrightarrow\ \|AB\|_{op}>\sqrt{\lambda_0}\|A\|_{op}",
    status="erratum",
    bound=True,
    corrected=r"BB^T\ge\lambda_0\ \Longrightarrow\ \|AB\|_{op}\ge\sqrt{\lambda_0}\|A\|_{op}\ (\text{equality at }A=0)",
    params=[Param.int("Q", 3, 1, 6, "dimension (ignored where A or B is given)", search=(1, 5)),
            Param.seed("seed"),
            Param.bool("zero_A", False, "use A = 0 (the counterexample to the strict form)"),
            Param.matrix("A", None, "a Q x Q matrix of your own (drawn Gaussian from the seed when omitted)",
                         shape=("Q", "Q")),
            Param.matrix("B", None, "a Q x Q matrix of your own (drawn Gaussian from the seed when omitted)",
                         shape=("Q", "Q"), families=("gaussian", "diagonal", "orthogonal", "near_singular",
                                                     "ill_conditioned", "rank_deficient", "symmetric", "seed"))],
    validate=lambda p: _validate_l82(p),
    notes="The lemma quantifies over all A, B: both are matrix parameters (properties, the tightness search and "
          "sweeps draw them from the matrix families, half the draws the seeded Gaussian instance).  "
          "lambda_0 := lambda_min(B B^T) (B random, invertible a.s.; a B singular to rounding violates lambda_0 > 0: "
          "inconclusive, read-through 8).  Numeric: violation max(0, sqrt(lambda_0)||A|| - "
          "||AB||) against rounding.  'stated': the strict inequality at A = 0 (0 > 0 is false).  (8.19) misses a "
          "square: ||AB||^2 = ||B^T A^T||^2 (E12).",
    catalogue="chen §2.9 L82; §4 E12",
    covers=("L82", "E12"),
)


def _validate_l82(p):
    shapes = {n: np.shape(p[n]) for n in ("A", "B") if p[n] is not None}
    for n, sh in shapes.items():
        if len(sh) != 2 or sh[0] != sh[1]:
            raise ParamError(f"parameter {n} must be a square matrix, got shape {sh}")
    if len(set(shapes.values())) > 1:
        raise ParamError(f"parameters A and B must have the same shape, got {shapes['A']} and {shapes['B']}")
    if p.zero_A and p.A is not None:
        raise ParamError("parameters zero_A=true and A both given: choose one")


def _l82(p):
    """||AB||_2 and sqrt(lambda_min(B B^T)) ||A||_2 through the array API (the instance drawn on the host, or
    the user's A, B)."""
    rng = rng_for(p.seed)
    given = next((np.asarray(p[n], float) for n in ("A", "B") if p[n] is not None), None)
    Q = p.Q if given is None else given.shape[0]
    A0 = rng.standard_normal((Q, Q))
    B0 = rng.standard_normal((Q, Q))
    A = np.zeros((Q, Q)) if p.zero_A else (np.asarray(p.A, float) if p.A is not None else A0)
    B = np.asarray(p.B, float) if p.B is not None else B0
    xp = xp_of(p)
    Ax, Bx = on(xp, A, B)
    # sqrt(lambda_0) = sigma_min(B) (B square), taken from the singular values: absolute error ~ eps sigma_max(B),
    # where sqrt of the computed eigenvalue of B B^T errs by ~sqrt(eps) sigma_max(B) near a singular B
    smin = float(xp.linalg.svdvals(Bx)[-1])           # the array API lists singular values in descending order
    lhs = float(xp.linalg.matrix_norm(Ax @ Bx, ord=2))
    return lhs, smin * float(xp.linalg.matrix_norm(Ax, ord=2)), A, B


@l82.numeric(backends=XP)
def l82_numeric(p):
    """||AB|| >= sqrt(lambda_0) ||A|| (rounding)."""
    lhs, rhs, A, B = _l82(p)
    # the hypothesis B B^T > lambda_0 > 0 needs B invertible: a B singular to rounding (sigma_min(B) <= Q eps
    # sigma_max(B)) has lambda_0 = 0, where (8.18) reads ||AB|| >= 0 and says nothing (read-through 8: certified)
    s = np.linalg.svd(B, compute_uv=False)
    if s[-1] <= B.shape[0] * EPS * max(s[0], 1e-300):
        return inconclusive(f"B is singular (sigma_min(B) = {s[-1]:.3g}): lambda_0 = 0 violates the hypothesis "
                            "B B^T > lambda_0 > 0")
    tol = 16 * A.shape[0] * EPS * (1 + np.linalg.norm(A, 2) * np.linalg.norm(B, 2))
    return Outcome(residual=max(0.0, rhs - lhs), tolerance=tol, message=f"||AB|| = {lhs:.4g} >= {rhs:.4g}",
                   # sqrt(lambda_0)||A|| / ||AB||; none where A = 0 (0 >= 0 says nothing about the constant)
                   values={"lhs": float(lhs), "rhs": float(rhs), "tightness": float(rhs / lhs) if lhs > 0 else None})


l82.property(over=("Q", "seed", "zero_A", "A", "B"), max_examples=15)


@l82.falsifier("stated", fixed={"zero_A": True})
def l82_stated(p):
    """Strict '>' at A = 0: the gap ||AB|| - sqrt(lambda_0)||A|| must be positive; it is 0."""
    lhs, rhs, A, B = _l82(p)
    return Outcome(residual=1.0 if lhs - rhs <= 0 else 0.0, tolerance=0.0,
                   values={"gap": float(lhs - rhs)}, message=f"gap = {lhs - rhs:.3g} (strict form needs > 0)")


l82.tightness(over=("Q", "seed", "A", "B"), max_examples=30)
