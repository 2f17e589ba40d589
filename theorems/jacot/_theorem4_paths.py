"""Private helpers for Theorem 4 (§3.1, App. A.2): shot geodesics with the three initialisations, the
quantities along a path, and the pointwise-bound error model shared by eq. (3), the rate bound, eq. (4) and
the errata E7, E9, E11.
"""

from __future__ import annotations

import numpy as np

from solvers import leaky
from theorems.claim import inconclusive, Outcome, Param
from theorems.jacot._shooting import _on_reached_part, _params as _base_params

EPS = np.finfo(float).eps

_INITS = ("random", "kernel", "X_negative")


def _params(gamma=1e-3, init="random", **kw):
    return _base_params(**kw) + [
        # gamma >= 1e-9 (session 10, narrowed from 1e-12): where K is singular (w + 1 < N) G = K + gamma I has
        # cond ~ |K|/gamma, and the K-norms of eq. (1) are resolved only while 50 N eps cond(G) < 1 (SingularGram),
        # i.e. gamma > 50 N eps |K|, about 4e-10 at N = 40, |K| = 1e3.  Fresh sweep 4100710: 4 of 20 draws of
        # erratum_thm4_proof_chain had gamma ~ 1e-12 and cond(G) 8.5e12-7.5e13, inconclusive (a statement about
        # gamma > 0 that float64 cannot evaluate below this)
        Param.float("gamma", gamma, 1e-9, 100.0, "regularisation gamma > 0"
                    " (>= 1e-9: below, K + gamma I is numerically singular where K is)", search=(1e-4, 1e-1)),
        Param.choice("init", init, _INITS,
                     "initial momentum: random (B_scale * Gaussian); kernel (B_0 = alpha A_0 P_ker(K_0) + "
                     "1e-3 B_scale noise, alpha in [0.5, 5] from the seed; K_0 singular needs N > w + 1); "
                     "X_negative (B_0 = A_0 (K_0 + gamma I)^-1, so X_0 = -gamma |B_0|^2 < 0)"),
    ]


def _initial(p):
    rng = np.random.default_rng(p.seed)
    A0 = rng.standard_normal((p.w, p.N))
    if p.init == "random":
        return A0, p.B_scale * rng.standard_normal((p.w, p.N))
    K = leaky.gram(A0)
    if p.init == "X_negative":
        return A0, np.linalg.solve(K + p.gamma * np.eye(p.N), A0.T).T
    lam, V = np.linalg.eigh(K)
    Vk = V[:, lam < 1e-8 * lam[-1]]
    alpha = rng.uniform(0.5, 5.0)
    return A0, alpha * A0 @ Vk @ Vk.T + 1e-3 * p.B_scale * rng.standard_normal((p.w, p.N))


def _shoot(p, rtol, n_out):
    A0, B0 = _initial(p)
    backend = p.backend if p.backend in ("numpy", "numba") else "numba"
    # A path needing more than 2e4 Dormand-Prince steps (25x the defaults) is stiff (the X_negative start at small gamma has
    # |B| ~ 1/gamma): inconclusive, not a draw that runs for minutes (sweep seed 20261126 timed one out at 60 s)
    Y, steps = leaky.shoot(A0, B0, p.Lt, n_out=n_out, rtol=rtol, atol=rtol * 0.1, backend=backend,
                           max_total_steps=20_000)
    return Y, steps, leaky.hamiltonian(A0, B0, p.Lt)


class SingularGram(ValueError):
    """G = K + gamma I is singular to float64 at a point of the path: every quantity solved with it is unresolved."""


def _along(Y, p, H):
    """Per output point: |A'|_G, COI_gamma = |A|_G^2, |B|, H_gamma, cond(G) with G = K + gamma I.  Raises
    :class:`SingularGram` where 50 N eps cond(G) >= 1: the solves' rounding bound (the checks' tolerance term) then
    exceeds the terms themselves (fresh sweep 4100613: gamma = 2.5e-8 against |K| ~ 1e9 at w = 1, a singular solve)."""
    rows = []
    for i, y in enumerate(Y):
        A, B, _ = leaky.unpack(y, p.w, p.N)
        K = leaky.gram(A)
        G = K + p.gamma * np.eye(p.N)
        cond = float(np.linalg.cond(G))
        if not np.isfinite(cond) or 50 * p.N * EPS * cond >= 1:
            raise SingularGram(f"G = K + gamma I is singular to float64 at p = {i / (len(Y) - 1):.2f} (cond {cond:.3g}, "
                               f"gamma = {p.gamma:.3g} against |K| = {np.linalg.norm(K, 2):.3g}): eq. (1)'s K-norms are "
                               "not resolved there; a larger gamma or a smaller B_scale")
        dA = p.Lt * (B @ K - A)
        nd = float(np.sqrt(max(np.trace(dA @ np.linalg.solve(G, dA.T)), 0.0)))
        cA = float(np.trace(A @ np.linalg.solve(G, A.T)))
        Hg = nd * nd / (2 * p.Lt) - p.Lt / 2 * cA
        rows.append((nd, cA, float(np.linalg.norm(B)), Hg, cond,
                     abs(H) + leaky.hamiltonian_scale(A, B, p.Lt) + nd * nd / p.Lt + p.Lt * cA))
    r = np.array(rows)
    return {"nd": r[:, 0], "coi": r[:, 1], "B": r[:, 2], "Hg": r[:, 3], "cond": r[:, 4], "scale": r[:, 5],
            "X": r[:, 1] + 2 * H / p.Lt}


def _paths(p, n_out=50):
    fine, steps, H = _shoot(p, 1e-11, n_out)
    coarse, _, _ = _shoot(p, 1e-9, n_out)
    if fine is None or coarse is None:
        return None
    try:
        return _along(fine, p, H), _along(coarse, p, H), H, steps
    except SingularGram as exc:
        return str(exc)


_BLOWUP = ("the path blew up (norm > 1e6) or is stiff (more than 2e4 Dormand-Prince steps) before p = 1; try a "
           "smaller B_scale, Lt, a larger gamma or another seed")


#: Run a Theorem-4 check on the part of the geodesic that exists (every Theorem 4 statement is about any solution of
#: (1) on its interval; see _shooting._on_reached_part).  Where the drawn path blows up or turns stiff before p = 1
#: (large Lt, large B_scale: sweep 27182818, 5 of 20 draws of eq. (3) and of the rate bound), the check runs on the
#: reached part.  Inconclusive only when the path does not reach p = 1/50 (X_negative starts at small gamma with K_0
#: singular have |B_0| ~ 1/gamma; their blow-up time ~ gamma^2 / Lt is below what float64 can follow).
_reached = _on_reached_part(_BLOWUP, lambda p: _initial(p), max_total_steps=20_000,
                            describe=lambda p: f"Lt = {p.Lt:.3g}, gamma = {p.gamma:.3g}, init {p.init}")


def _bound_outcome(p, excess, message, n_out=50, ratio=None, **extra):
    """Generic pointwise bound: excess(q, H) -> array of LHS - RHS (<= 0 where the bound holds); ratio(q, H)
    -> array of LHS / RHS, whose max over p is reported as values["tightness"] (bound=True claims).

    Error model: the rtol 1e-9 path's deviation from the rtol 1e-11 path bounds the finer path's
    integration error on LHS - RHS (x2, Dormand-Prince error ~ rtol); plus rounding of the solves with
    G = K + gamma I, 50 N eps cond(G) on terms of size `scale`."""
    r = _paths(p, n_out)
    if r is None:
        return inconclusive(_BLOWUP)
    if isinstance(r, str):
        return inconclusive(r)
    qf, qc, H, steps = r
    ef, ec = excess(qf, H), excess(qc, H)
    tol_p = 2 * np.abs(ef - ec) + 50 * p.N * EPS * qf["cond"] * qf["scale"]
    k = int(np.argmax(ef - tol_p))
    if ratio is not None:
        rt = ratio(qf, H)
        rt = rt[np.isfinite(rt)]
        extra["tightness"] = float(np.max(rt)) if rt.size else 0.0
    return Outcome(residual=float(max(ef[k], 0.0)), tolerance=float(tol_p[k]), values={
        "worst_p": k / n_out, "excess_at_worst": float(ef[k]), "max_excess": float(np.max(ef)),
        "min_X": float(np.min(qf["X"])), "H": H, "steps": steps, **extra},
        message=message + f" (worst at p = {k / n_out:.2f} of {n_out + 1} points)")


def _eq3_sides(p, q, H, sqrt_term=True):
    lhs = np.abs(2 * H / p.Lt - 2 * q["Hg"] / p.Lt)
    c = q["B"]
    return lhs, (2 / p.Lt * q["nd"] * np.sqrt(p.gamma) * c if sqrt_term else 0.0) + p.gamma * c * c


def _eq3_excess(p, factor=1.0, sqrt_term=True):
    def f(q, H):
        lhs, rhs = _eq3_sides(p, q, H, sqrt_term)
        return lhs - factor * rhs
    return f
