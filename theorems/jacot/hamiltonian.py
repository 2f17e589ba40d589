"""The Hamiltonian reformulation (§2.4, §3.1): Hamilton's equations, conservation of H,
eq. (2) (kinetic + potential), the Theorem 4 identity, and Prop 10 (erratum E1).

All numerics by forward shooting (catalogue §2, key observation): a solution of Hamilton's
equations from random ``(A_0, B_0)`` is an exact critical path for a synthetic target.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import fd, leaky
from theorems.claim import Claim, Outcome, Param, inconclusive

EPS = np.finfo(float).eps


def _params(w=6, N=5, Lt=3.0, B_scale=0.1, search_w=(2, 8), search_N=(2, 8)):
    return [
        Param.int("w", w, 1, 32, "width (number of neurons, rows of A_p)", search=search_w),
        Param.int("N", N, 1, 32, "number of data points (columns of A_p)", search=search_N),
        Param.float("Lt", Lt, 1e-6, 50.0, "effective depth L~ (leakage)"
                    " (>= 1e-6: below, not resolved in double precision)", search=(0.5, 10.0)),
        Param.seed("seed of the initial (A_0, B_0)"),
        Param.float("B_scale", B_scale, 0.0, 10.0, "scale of the initial momentum B_0", low_open=True,
                    search=(1e-2, 1.0)),
    ]


def _initial(p):
    rng = np.random.default_rng(p.seed)
    A0 = rng.standard_normal((p.w, p.N))
    B0 = p.B_scale * rng.standard_normal((p.w, p.N))
    return A0, B0


def _shoot(p, variant=0, rtol=1e-11, n_out=100):
    A0, B0 = _initial(p)
    backend = p.backend if p.backend in ("numpy", "numba") else "numba"
    return leaky.shoot(A0, B0, p.Lt, n_out=n_out, rtol=rtol, atol=rtol * 0.1, backend=backend, variant=variant)


def _H_along(Y, p):
    return np.array([leaky.hamiltonian(*leaky.unpack(y, p.w, p.N)[:2], p.Lt) for y in Y])


# ---------------------------------------------------------------------------
# H3/H4: Hamilton's equations are those of eq. (1)
equations = Claim(
    id="jacot.hamilton_equations",
    title="The critical-point dynamics of (A_p, B_p) are Hamilton's equations of H",
    label="eq. (1)",
    section="2.4",
    equation="(1)",
    lines=(148, 158),
    statement=r"\partial_pA_p=\tilde L(B_p\sigma(A_p)^T\sigma(A_p)-A_p)=\partial_{B_p}\mathcal H,\quad "
              r"-\partial_pB_p=\tilde L(\dot\sigma(A_p)\odot[\sigma(A_p)B_p^TB_p]-B_p)=\partial_{A_p}\mathcal H,\quad "
              r"\mathcal H=\tfrac{\tilde L}2\|B_p\sigma(A_p)^T\|^2-\tilde L\,\mathrm{Tr}[B_pA_p^T]",
    status="holds",
    params=_params(),
    notes="The row of sigma(A) B^T B belonging to the bias is dropped in the momentum equation (implicit in "
          "the paper, catalogue H1). Away from the ReLU kink (no entry of A at 0) H is smooth and the "
          "derivatives are checked by central differences.",
    catalogue="jacot §2.4 H3, H4",
    covers=("H3", "H4"),
)


def _equations_outcome(p, variant=0):
    A, B = _initial(p)
    margin = float(np.min(np.abs(A)))
    h = 1e-5 * max(1.0, float(np.max(np.abs(A))))
    if margin < 10 * h:
        return inconclusive(f"an entry of A is within {margin:.1e} of the ReLU kink; H is not differentiable there")
    y = leaky.pack(A, B)
    dy = leaky.hamilton_rhs_numpy(0.0, y, p.w, p.N, p.Lt, variant)
    dA, dB, _ = leaky.unpack(dy, p.w, p.N)
    gB = fd.central_difference(lambda Bx: leaky.hamiltonian(A, Bx, p.Lt), B, h)
    gA = fd.central_difference(lambda Ax: leaky.hamiltonian(Ax, B, p.Lt), A, h)
    scale = leaky.hamiltonian_scale(A, B, p.Lt) / max(1.0, float(np.linalg.norm(A)) + float(np.linalg.norm(B)))
    # Error model of a central difference of a cubic-in-(A,B) polynomial (piecewise): truncation
    # h^2/6 |H'''| <= h^2 * scale, plus cancellation 2 eps |H| / h per entry; Frobenius over w N entries.
    # |H| here is the size of H's terms at the perturbed points (|A|, |B| + h, no cancellation between entries):
    # for tiny B (B_scale = 1e-10) H(A, B) is ~ 0 but H(A, B + h e) carries Lt h |A| with rounding eps Lt h |A|
    Hs = leaky.hamiltonian_scale(np.abs(A), np.abs(B) + h, p.Lt)
    tol = np.sqrt(p.w * p.N) * (h * h * scale + 4 * EPS * Hs / h) * 10
    return Outcome.from_parts({"dA = dH/dB": (float(np.linalg.norm(dA - gB)), tol),
                               "-dB = dH/dA": (float(np.linalg.norm(-dB - gA)), tol)},
                              message="Hamilton's equations vs central differences of H",
                              values={"h": h, "kink_margin": margin})


@equations.numeric
def _(p):
    """Central differences of H (eq. (1)) against the right-hand side of Hamilton's equations."""
    return _equations_outcome(p)


equations.property(over=("w", "N", "Lt", "seed", "B_scale"), max_examples=15)


def _sym_H(w, N, signs):
    """Symbolic A (entries a_ij, with relu(a_ij) = a_ij where signs[i][j] > 0 and 0 otherwise), B."""
    a = sp.Matrix(w, N, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
    b = sp.Matrix(w, N, lambda i, j: sp.Symbol(f"b{i}{j}", real=True))
    L = sp.Symbol("L", positive=True)
    R = sp.Matrix(w, N, lambda i, j: a[i, j] if signs[i][j] > 0 else 0)
    S = R.col_join(sp.ones(1, N))
    H = L / 2 * sum(e**2 for e in (b * S.T)) - L * sum(b[i, j] * a[i, j] for i in range(w) for j in range(N))
    mask = sp.Matrix(w, N, lambda i, j: 1 if signs[i][j] > 0 else 0)
    return a, b, L, R, S, H, mask


@equations.symbolic(timeout=60)
def _(p):
    """For w=2, N=3 and three sign patterns of A (ReLU mask fixed), differentiate H symbolically."""
    patterns = [((1, 1, 1), (1, 1, 1)), ((1, -1, 1), (-1, 1, 1)), ((-1, -1, 1), (1, -1, -1))]
    bad = 0
    for sg in patterns:
        a, b, L, R, S, H, mask = _sym_H(2, 3, sg)
        dA = L * (b * S.T * S - a)
        M = R * (b.T * b)
        dB = -L * sp.Matrix(2, 3, lambda i, j: mask[i, j] * M[i, j] - b[i, j])
        for i in range(2):
            for j in range(3):
                bad += sp.expand(sp.diff(H, b[i, j]) - dA[i, j]) != 0
                bad += sp.expand(sp.diff(H, a[i, j]) + dB[i, j]) != 0
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.diff + expand", "instances": [list(map(list, s)) for s in patterns],
        "proved": "dH/dB = L(B K - A) and dH/dA = L(mask*(relu(A) B^T B) - B) on each fixed ReLU pattern"},
        message="entries where Hamilton's equations and the derivatives of H differ")


@equations.falsifier("no_relu_mask", search=("seed",), fixed={"w": 3, "N": 3})
def _(p):
    """Drop the ReLU derivative in the momentum equation (sigma(A) B^T B unmasked): wrong where A < 0."""
    return _equations_outcome(p, variant=2)


# ---------------------------------------------------------------------------
# H5: conservation of H along the path
conservation = Claim(
    id="jacot.hamiltonian_conservation",
    title="The Hamiltonian of a representation geodesic is constant in p",
    label="eq. (1), conservation",
    section="2.4",
    equation="(1)",
    lines=(156, 160),
    statement=r"\mathcal H(A_p,B_p)=\tfrac{\tilde L}2\|B_p\sigma(A_p)^T\|^2-\tilde L\,\mathrm{Tr}[B_pA_p^T]"
              r"\ \text{is constant in }p",
    status="holds",
    params=_params(),
    notes="Geodesics by forward shooting from random (A_0, B_0) (an exact critical path for the target "
          "A_1 + lambda N/2 B_1). H is continuous across the ReLU kink and dH/dp = 0 almost everywhere, so "
          "conservation holds through the kinks; the Dormand-Prince controller resolves the jump of B' there. "
          "Paths that blow up (norm > 1e6) are inconclusive, not failures.",
    catalogue="jacot §2.4 H5; §3 R1",
    covers=("H5", "R1"),
)


def _conservation_outcome(p, variant=0):
    fine, steps = _shoot(p, variant, rtol=1e-11)
    coarse, _ = _shoot(p, variant, rtol=1e-9)
    if fine is None or coarse is None:
        return inconclusive("the path blew up (norm > 1e6) or the integrator stalled before p = 1: the "
                            "Hamiltonian system is stiff for this (A_0, B_0, Lt); try a smaller B_scale or Lt")
    Hf, Hc = _H_along(fine, p), _H_along(coarse, p)
    A0, B0 = _initial(p)
    scale = max(leaky.hamiltonian_scale(A0, B0, p.Lt), 1e-300)
    spread = float(np.ptp(Hf)) / scale
    # Error model: the rtol=1e-9 path's deviation from the rtol=1e-11 path estimates the coarse path's
    # global error, which bounds the finer path's (Dormand-Prince error is proportional to rtol); the
    # spread of a conserved quantity along the fine path is at most twice its error, plus rounding of
    # H on each accepted step (~ steps * eps * scale).
    est = float(np.max(np.abs(Hc - Hf))) / scale
    tol = 2 * est + 10 * steps * EPS
    ps = np.linspace(0, 1, len(Hf))
    return Outcome(residual=spread, tolerance=tol, values={
        "H_spread": spread, "H": float(Hf[0]), "H_scale": scale, "error_estimate": est, "steps": steps,
        "plot": {"kind": "line", "x": ps[::2].tolist(), "series": {"H(p) - H(0)": (Hf - Hf[0])[::2].tolist()},
                 "xlabel": "p", "ylabel": "H(A_p, B_p) - H(A_0, B_0)",
                 "title": f"conservation of H (w={p.w}, N={p.N}, Lt={p.Lt})"}},
        message=f"relative spread of H over 101 points of [0, 1] ({steps} Dormand-Prince steps)")


@conservation.numeric(backends=("numpy", "numba"))
def _(p):
    """Shoot Hamilton's equations at rtol 1e-11 (and 1e-9 for the error estimate); spread of H."""
    return _conservation_outcome(p)


conservation.property(over=("w", "N", "Lt", "seed", "B_scale"), max_examples=15)


@conservation.symbolic(timeout=60)
def _(p):
    """dH/dp = <dH/dA, A'> + <dH/dB, B'> = 0 with Hamilton's equations, on fixed ReLU patterns."""
    bad = 0
    patterns = [((1, 1, 1), (1, 1, 1)), ((1, -1, 1), (-1, 1, 1))]
    for sg in patterns:
        a, b, L, R, S, H, mask = _sym_H(2, 3, sg)
        dHdA = sp.Matrix(2, 3, lambda i, j: sp.diff(H, a[i, j]))
        dHdB = sp.Matrix(2, 3, lambda i, j: sp.diff(H, b[i, j]))
        dH = sum(dHdA[i, j] * dHdB[i, j] + dHdB[i, j] * (-dHdA[i, j]) for i in range(2) for j in range(3))
        bad += sp.expand(dH) != 0
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "proved":
                   "dH/dp = 0 along Hamilton's equations on each ReLU pattern (H continuous across patterns)"},
                   message="patterns where dH/dp did not expand to 0")


@conservation.falsifier({
    "momentum_sign": "The momentum equation with the opposite sign (B' = +dH/dA): H drifts by O(1).",
    "no_relu_mask": "The momentum equation without the ReLU derivative: not Hamiltonian, H drifts.",
}, search=("seed",))
def _(p, variant):
    return _conservation_outcome(p, variant={"momentum_sign": 1, "no_relu_mask": 2}[variant])


# ---------------------------------------------------------------------------
# P10 / E1: growth of the weight norm along a critical path
growth = Claim(
    id="jacot.weight_norm_growth",
    title="Along a critical path the weight norm grows by the integrated bias norm (factor 2 missing)",
    label="Prop 10",
    section="A.3",
    equation="Prop 10",
    lines=(466, 505),
    statement=r"\|W_p\|^2=\|W_0\|^2+\tilde L\int_0^p\|W_{q,\cdot w+1}\|^2\,dq",
    status="erratum",
    corrected=r"\|W_p\|^2=\|W_0\|^2+2\tilde L\int_0^p\|b_q\|^2\,dq,\qquad b_q=W_{q,\cdot w+1}=\tilde LB_q\mathbf 1",
    params=_params(),
    notes="E1: the first variation at l.487 drops the chain-rule term dr(p) d_p(|W_p|^2 + |b_p|^2) of "
          "F(r(q)); with it, F' = 2 Lt G. Analytic check: d/dp Tr[B K B^T] = 2 Lt |B 1|^2 from H3. "
          "W_p = Lt B_p sigma(A_p)^T (H2) on the shot geodesic; I(p) = int |b|^2 integrated with the path.",
    catalogue="jacot §2.7 P10; §4 E1",
    covers=("P10", "E1"),
)


def _growth_outcome(p, factor):
    fine, steps = _shoot(p, rtol=1e-11, n_out=10)
    coarse, _ = _shoot(p, rtol=1e-9, n_out=10)
    if fine is None or coarse is None:
        return inconclusive("the path blew up (norm > 1e6) before p = 1; try a smaller B_scale or Lt")

    def parts(Y):
        A0, B0, _ = leaky.unpack(Y[0], p.w, p.N)
        A1, B1, I = leaky.unpack(Y[-1], p.w, p.N)
        W0 = p.Lt * B0 @ leaky.sigma(A0).T
        W1 = p.Lt * B1 @ leaky.sigma(A1).T
        return float(np.sum(W1 * W1) - np.sum(W0 * W0)), float(p.Lt * I), float(np.sum(W1 * W1) + np.sum(W0 * W0))

    dW, LI, size = parts(fine)
    dWc, LIc, _ = parts(coarse)
    if LI <= 1e-12 * max(size, 1e-300):
        return inconclusive("the bias column is (numerically) zero along the path: both forms agree trivially")
    # Error model: integration error of both sides estimated by the rtol 1e-9 vs 1e-11 difference (x2),
    # plus rounding of the Frobenius norms (~ w N eps |W|^2).
    tol = 2 * (abs(dWc - dW) + factor * abs(LIc - LI)) + 10 * p.w * (p.N + 1) * EPS * size
    ratio = dW / LI
    return Outcome(residual=abs(dW - factor * LI), tolerance=tol, values={
        "ratio": ratio, "delta_W2": dW, "Lt_int_b2": LI, "factor_tested": factor, "steps": steps},
        message=f"(|W_1|^2 - |W_0|^2) / (Lt int |b|^2) = {ratio:.10f}, tested factor {factor}")


@growth.numeric(backends=("numpy", "numba"))
def _(p):
    """Corrected Prop 10: |W_1|^2 - |W_0|^2 = 2 Lt int_0^1 |b|^2 on a shot geodesic."""
    return _growth_outcome(p, 2.0)


growth.property(over=("w", "N", "Lt", "seed", "B_scale"), max_examples=10)


@growth.falsifier("stated", search=("seed",))
def _(p):
    """Prop 10 as printed (factor 1): the measured ratio is 2."""
    return _growth_outcome(p, 1.0)


@growth.symbolic(timeout=60)
def _(p):
    """d/dp Tr[B K B^T] = 2 Lt |B 1|^2 along Hamilton's equations (so d/dp |W|^2 = 2 Lt |b|^2)."""
    bad = 0
    for sg in [((1, 1, 1), (1, 1, 1)), ((1, -1, 1), (-1, 1, 1)), ((-1, -1, -1), (1, -1, 1))]:
        a, b, L, R, S, H, mask = _sym_H(2, 3, sg)
        dA = L * (b * S.T * S - a)
        M = R * (b.T * b)
        dB = -L * sp.Matrix(2, 3, lambda i, j: mask[i, j] * M[i, j] - b[i, j])
        F = (b * S.T * S * b.T).trace()
        dF = sum(sp.diff(F, a[i, j]) * dA[i, j] + sp.diff(F, b[i, j]) * dB[i, j] for i in range(2) for j in range(3))
        one = b * sp.ones(3, 1)
        bad += sp.expand(dF - 2 * L * (one.T * one)[0, 0]) != 0
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy chain rule + expand", "proved":
                   "d/dp Tr[B K B^T] = 2 L |B 1|^2 on each ReLU pattern; with W = L B sigma^T, "
                   "d/dp |W|^2 = 2 L |b|^2 (the corrected Prop 10)"},
                   message="patterns where the identity failed")


# ---------------------------------------------------------------------------
# eq. (2): H = kinetic + potential when the image condition holds (T0, T0b)
energies = Claim(
    id="jacot.hamiltonian_energies",
    title="Under the image condition H is kinetic plus potential energy, eq. (2)",
    label="eq. (2)",
    section="3.1",
    equation="(2)",
    lines=(172, 178),
    statement=r"\mathrm{Im}A_p^T\subset\mathrm{Im}\,\sigma(A_p)^T\Rightarrow\ \mathcal H="
              r"\tfrac1{2\tilde L}\|\partial_pA_p\|_{K_p}^2-\tfrac{\tilde L}2\|A_p\|_{K_p}^2,\quad "
              r"\|\partial_pA_p\|_{K_p}=\tilde L\sqrt{\|A_p\|_{K_p}^2+\tfrac2{\tilde L}\mathcal H}",
    status="holds",
    params=_params(w=12, N=5, Lt=1.0, search_w=(5, 12), search_N=(2, 5)),
    notes="Checked at the points of a shot geodesic where the image condition holds (solvers.leaky."
          "image_condition) and K_p is well conditioned (cond < 1e8); elsewhere both energies are infinite "
          "(the paper's remark l.180) and the point is skipped. E10 (the transpose in B_p = Lt^-1 W_p "
          "(sigma(A_p)^+)^T) is recorded; the check uses B_p from the shooting, not the printed formula.",
    catalogue="jacot §2.5 T0, T0b; §4 E10, E11",
    covers=("T0", "T0b", "E11"),
)


def _energies_outcome(p, potential_sign=-1.0):
    Y, steps = _shoot(p, rtol=1e-11, n_out=50)
    if Y is None:
        return inconclusive("the path blew up before p = 1; try a smaller B_scale or Lt")
    worst, used, conds = 0.0, 0, []
    for y in Y:
        A, B, _ = leaky.unpack(y, p.w, p.N)
        K = leaky.gram(A)
        ok, _ = leaky.image_condition(A, K)
        c = np.linalg.cond(K)
        if not ok or c > 1e8:
            continue
        dA = p.Lt * (B @ K - A)
        kin = leaky.g_norm2(dA, K) / (2 * p.Lt)
        pot = potential_sign * p.Lt / 2 * leaky.g_norm2(A, K)
        H = leaky.hamiltonian(A, B, p.Lt)
        scale = abs(kin) + abs(pot) + abs(H)
        worst = max(worst, abs(kin + pot - H) / scale / c)
        conds.append(c)
        used += 1
    if used == 0:
        return inconclusive("the image condition fails (or K is ill-conditioned) at every point of the path: "
                            "both energies are infinite there (need w + 1 >= N)")
    # Error model: pseudo-inverse solves in K^+ lose cond(K) digits: relative error <= c_n eps cond(K),
    # with c_n = 100 N (eigh backward error and the two quadratic forms); residual is normalised by cond.
    tol = 100 * p.N * EPS
    return Outcome(residual=worst, tolerance=tol, values={
        "points_used": used, "max_cond_K": max(conds), "steps": steps},
        message=f"max relative |kinetic + potential - H| / cond(K) over {used} points with the image condition")


@energies.numeric
def _(p):
    """Kinetic + potential (K-norms through the pseudo-inverse) against H on a shot geodesic."""
    return _energies_outcome(p)


energies.property(over=("w", "N", "Lt", "seed", "B_scale"), max_examples=10)


@energies.falsifier("potential_sign_E11", search=("seed",))
def _(p):
    """The gamma-stable potential as printed at l.180 (E11: +Lt/2 |A|^2 instead of -Lt/2 |A|^2)."""
    return _energies_outcome(p, potential_sign=+1.0)


@energies.symbolic(timeout=60)
def _(p):
    """Scalar Legendre check: with B = (A + A'/L) K^+, L/2 |B sigma^T|^2 - L <B, A> = |A'|^2_K/(2L) - L/2|A|^2_K."""
    x, v, L = sp.symbols("x v L", real=True)
    bad = 0
    for relu in (x, sp.Integer(0)):  # x > 0 and x < 0 (w = N = 1, K = relu^2 + 1 invertible)
        K = relu**2 + 1
        B = (x + v / L) / K
        H = L / 2 * B**2 * K - L * B * x
        rhs = v**2 / (2 * L * K) - L / 2 * x**2 / K
        bad += sp.cancel(sp.together(H - rhs)) != 0
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "eq. (2) for w = N = 1 in both ReLU regions"}, message="regions where eq. (2) failed")


# ---------------------------------------------------------------------------
# Theorem 4, identity (T4a): holds for ANY (A, B) with A' := Lt (B K - A)
thm4 = Claim(
    id="jacot.theorem4_identity",
    title="Theorem 4's gamma-identity for the Hamiltonian",
    label="Thm 4",
    section="3.1",
    equation="Thm 4 (first display)",
    lines=(182, 184),
    statement=r"\mathcal H=\tfrac1{2\tilde L}\|\partial_pA_p+\gamma\tilde LB_p\|^2_{(K_p+\gamma I)}"
              r"-\tfrac{\tilde L}2\|A_p\|^2_{(K_p+\gamma I)}-\gamma\tfrac{\tilde L}2\|B_p\|^2",
    status="holds",
    params=_params() + [Param.float("gamma", 0.1, 1e-12, 100.0, "regularisation gamma > 0"
                    " (>= 1e-12: below, numerically singular)",
                                    search=(1e-3, 10.0))],
    notes="Catalogue T4a: an algebraic identity for any (A, B) once A' := Lt (B K - A), since "
          "A'/Lt + gamma B = B (K + gamma I) - A; neither optimality nor the image condition is needed.",
    catalogue="jacot §2.5 T4a",
    covers=("T4a",),
)


def _thm4_outcome(p, drop_B_term=False):
    A, B = _initial(p)
    K = leaky.gram(A)
    G = K + p.gamma * np.eye(p.N)
    dA = p.Lt * (B @ K - A)
    M = dA + p.gamma * p.Lt * B
    t1 = np.trace(M @ np.linalg.solve(G, M.T)) / (2 * p.Lt)
    t2 = p.Lt / 2 * np.trace(A @ np.linalg.solve(G, A.T))
    t3 = 0.0 if drop_B_term else p.gamma * p.Lt / 2 * float(np.sum(B * B))
    H = leaky.hamiltonian(A, B, p.Lt)
    c = np.linalg.cond(G)
    scale = abs(t1) + abs(t2) + abs(t3) + abs(H)
    # Error model: two solves with G (relative error ~ N eps cond(G)) on terms of size `scale`.
    tol = 50 * p.N * EPS * c * scale
    return Outcome(residual=abs(t1 - t2 - t3 - H), tolerance=tol, values={
        "H": H, "rhs": t1 - t2 - t3, "cond": c}, message="|right side of Thm 4 - H| for random (A, B)")


@thm4.numeric
def _(p):
    """Evaluate both sides at a random (A, B) with A' from Hamilton's first equation."""
    return _thm4_outcome(p)


thm4.property(over=("w", "N", "Lt", "seed", "B_scale", "gamma"), max_examples=25)


@thm4.falsifier("no_B_term", search=("seed",))
def _(p):
    """Drop the -gamma Lt/2 |B|^2 term."""
    return _thm4_outcome(p, drop_B_term=True)


@thm4.symbolic(timeout=60)
def _(p):
    """Matrix identity with K + gamma I invertible: expand with B(K + gamma I) - A = A'/L + gamma B."""
    x, b, L, g, k = sp.symbols("x b L gamma k", real=True)
    # scalar case N = w = 1 with K = k (any positive number; the identity never uses K's form)
    G = k + g
    dA = L * (b * k - x)
    rhs = (dA + g * L * b) ** 2 / (2 * L * G) - L / 2 * x**2 / G - g * L / 2 * b**2
    H = L / 2 * b**2 * k - L * b * x
    bad = int(sp.cancel(sp.together(rhs - H)) != 0)
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "scalar identity (N = w = 1, K = k arbitrary); the matrix case is the same computation with "
                   "M (K+gI)^{-1} M^T, M = B(K+gI) - A"}, message="identity failed")
