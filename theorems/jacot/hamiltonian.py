"""The Hamiltonian reformulation (§2.4, §3.1): Hamilton's equations, conservation of H,
eq. (2) (kinetic + potential), the Theorem 4 identity, and Prop 10 (erratum E1).

All numerics by forward shooting (catalogue §2, key observation): a solution of Hamilton's
equations from random ``(A_0, B_0)`` is an exact critical path for a synthetic target.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


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
    # the integrator is adaptive (control flow): it stays on the CPU; an array-API check (array_api_strict, cupy)
    # shoots with the NumPy integrator, so that its path is the NumPy record's path
    backend = p.backend if p.backend in ("numpy", "numba") else "numpy"
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


def _central_differences(xp, A, B, h, Lt, wrt):
    """Gradient of H in A (wrt = 0) or B (wrt = 1) by central differences of step h, all 2 w N perturbed
    Hamiltonians evaluated as one batch (the entrywise loop of solvers.fd.central_difference, stacked)."""
    w, N = A.shape
    E = h * xp.reshape(xp.eye(w * N, dtype=xp.float64), (w * N, w, N))
    X0 = A if wrt == 0 else B
    plus, minus = X0[None, ...] + E, X0[None, ...] - E
    if wrt == 0:
        d = X.hamiltonian(xp, plus, B[None, ...], Lt) - X.hamiltonian(xp, minus, B[None, ...], Lt)
    else:
        d = X.hamiltonian(xp, A[None, ...], plus, Lt) - X.hamiltonian(xp, A[None, ...], minus, Lt)
    return xp.reshape(d / (2 * h), (w, N))


def _equations_outcome(p, variant=0):
    """One array-API path (p.backend): (A, B) drawn on the host; the right side of Hamilton's equations and the
    batched central differences of H on xp."""
    xp = xp_of(p)
    A, B = _initial(p)
    margin = float(np.min(np.abs(A)))
    h = 1e-5 * max(1.0, float(np.max(np.abs(A))))
    if margin < 10 * h:
        return inconclusive(f"an entry of A is within {margin:.1e} of the ReLU kink; H is not differentiable there")
    Ax, Bx = on(xp, A, B)
    dA, dB = X.hamilton_rhs(xp, Ax, Bx, p.Lt)
    if variant == 2:  # the falsifier no_relu_mask: sigma(A) B^T B unmasked
        dB = -p.Lt * (X.relu(xp, Ax) @ (xp.matrix_transpose(Bx) @ Bx) - Bx)
    gB = _central_differences(xp, Ax, Bx, h, p.Lt, 1)
    gA = _central_differences(xp, Ax, Bx, h, p.Lt, 0)
    scale = leaky.hamiltonian_scale(A, B, p.Lt) / max(1.0, float(np.linalg.norm(A)) + float(np.linalg.norm(B)))
    # Error model of a central difference of a cubic-in-(A,B) polynomial (piecewise): truncation
    # h^2/6 |H'''| <= h^2 * scale, plus cancellation 2 eps |H| / h per entry; Frobenius over w N entries.
    # |H| here is the size of H's terms at the perturbed points (|A|, |B| + h, no cancellation between entries):
    # for tiny B (B_scale = 1e-10) H(A, B) is ~ 0 but H(A, B + h e) carries Lt h |A| with rounding eps Lt h |A|
    Hs = leaky.hamiltonian_scale(np.abs(A), np.abs(B) + h, p.Lt)
    tol = np.sqrt(p.w * p.N) * (h * h * scale + 4 * EPS * Hs / h) * 10
    return Outcome.from_parts({"dA = dH/dB": (float(X.fro(xp, dA - gB)), tol),
                               "-dB = dH/dA": (float(X.fro(xp, -dB - gA)), tol)},
                              message="Hamilton's equations vs central differences of H",
                              values={"h": h, "kink_margin": margin})


@equations.numeric(backends=("numpy", "cupy"))
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


def _printed_motion(a, b, L, S, R, mask, variant="stated"):
    """The right-hand sides of eq. (1) as printed, dA/dp = L(B sigma^T sigma - A) and
    dB/dp = -L(sigma'(A) * [sigma(A) B^T B] - B) (bias row dropped, catalogue H1), or a perturbed copy."""
    w, N = a.shape
    dA = L * (b * S.T * S - a)
    M = R * (b.T * b)
    m = (lambda i, j: 1) if variant == "no_relu_mask" else (lambda i, j: mask[i, j])
    sB = -1 if variant == "momentum_B_sign" else 1
    dB = -L * sp.Matrix(w, N, lambda i, j: m(i, j) * M[i, j] - sB * b[i, j])
    if variant == "momentum_sign":
        dB = -dB
    return dA, dB


_EQ_PATTERNS = [((1, 1, 1), (1, 1, 1)), ((1, -1, 1), (-1, 1, 1)), ((-1, -1, 1), (1, -1, -1))]


def _equations_symbolic(variant):
    """Entries where the printed (or perturbed) eq. (1) differs from sympy.diff of the printed H."""
    bad = 0
    for sg in _EQ_PATTERNS:
        a, b, L, R, S, H, mask = _sym_H(2, 3, sg)
        dA, dB = _printed_motion(a, b, L, S, R, mask, variant)
        for i in range(2):
            for j in range(3):
                bad += sp.expand(sp.diff(H, b[i, j]) - dA[i, j]) != 0
                bad += sp.expand(sp.diff(H, a[i, j]) + dB[i, j]) != 0
    return bad


@equations.symbolic(timeout=60)
def _(p):
    """For w=2, N=3 and three sign patterns of A (ReLU mask fixed), differentiate H symbolically."""
    bad = _equations_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.diff + expand", "instances": [list(map(list, s)) for s in _EQ_PATTERNS],
        "proved": "dH/dB = L(B K - A) and dH/dA = L(mask*(relu(A) B^T B) - B) on each fixed ReLU pattern"},
        message="entries where Hamilton's equations and the derivatives of H differ")


@equations.mutant({"no_relu_mask": "momentum equation without sigma'(A) (sigma(A) B^T B unmasked)",
                   "momentum_B_sign": "momentum equation with +B instead of -B inside the bracket"}, timeout=60)
def _(p, variant):
    """Eq. (1) perturbed, through the same procedure: entries must disagree with dH."""
    bad = _equations_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"entries_differing": bad},
                   message=f"{variant}: {bad} entries of the perturbed eq. (1) differ from sympy.diff of H")


@equations.falsifier("no_relu_mask", search=("seed",), fixed={"w": 3, "N": 3}, backends=("numpy", "cupy"))
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


def _conservation_symbolic(variant):
    """dH/dp = sum dH/dA * dA/dp + dH/dB * dB/dp with dA/dp, dB/dp the right sides of eq. (1) as printed
    (or perturbed) and H the printed Hamiltonian, differentiated by sympy: patterns where it is not 0."""
    bad = 0
    for sg in [((1, 1, 1), (1, 1, 1)), ((1, -1, 1), (-1, 1, 1))]:
        a, b, L, R, S, H, mask = _sym_H(2, 3, sg)
        dA, dB = _printed_motion(a, b, L, S, R, mask, variant)
        dH = sum(sp.diff(H, a[i, j]) * dA[i, j] + sp.diff(H, b[i, j]) * dB[i, j] for i in range(2) for j in range(3))
        bad += sp.expand(dH) != 0
    return bad


@conservation.symbolic(timeout=60)
def _(p):
    """dH/dp = <dH/dA, A'> + <dH/dB, B'> = 0 with A', B' the printed eq. (1), on fixed ReLU patterns."""
    bad = _conservation_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff of the printed H, chain rule along "
                   "the printed eq. (1), expand", "proved":
                   "dH/dp = 0 along eq. (1) on each ReLU pattern (H continuous across patterns)"},
                   message="patterns where dH/dp did not expand to 0")


@conservation.mutant({"momentum_sign": "momentum equation with the opposite sign (dB/dp = +L(...))",
                      "momentum_B_sign": "momentum equation with +B instead of -B inside the bracket"}, timeout=60)
def _(p, variant):
    """Eq. (1) perturbed, through the same procedure: dH/dp must not expand to 0."""
    bad = _conservation_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"patterns_nonzero": bad},
                   message=f"{variant}: dH/dp along the perturbed eq. (1) is nonzero on {bad} patterns")


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


def _growth_symbolic(factor):
    """With W = L B sigma(A)^T (H2) and b = its bias column, d/dp |W|^2 (chain rule along the printed eq. (1))
    minus factor * L |b|^2: ReLU patterns where it does not expand to 0."""
    bad = 0
    for sg in [((1, 1, 1), (1, 1, 1)), ((1, -1, 1), (-1, 1, 1)), ((-1, -1, -1), (1, -1, 1))]:
        a, b, L, R, S, H, mask = _sym_H(2, 3, sg)
        dA, dB = _printed_motion(a, b, L, S, R, mask)
        W = L * b * S.T
        F = sum(e**2 for e in W)
        bias = W[:, W.shape[1] - 1]
        dF = sum(sp.diff(F, a[i, j]) * dA[i, j] + sp.diff(F, b[i, j]) * dB[i, j] for i in range(2) for j in range(3))
        bad += sp.expand(dF - factor * L * sum(e**2 for e in bias)) != 0
    return bad


@growth.symbolic(timeout=60)
def _(p):
    """d/dp |W|^2 = 2 Lt |b|^2 along Hamilton's equations, W = Lt B sigma(A)^T and b its bias column."""
    bad = _growth_symbolic(2)
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy chain rule + expand", "proved":
                   "with W = L B sigma^T and b = W_{., w+1}, d/dp |W|^2 = 2 L |b|^2 along eq. (1) on each ReLU "
                   "pattern (the corrected Prop 10)"},
                   message="patterns where the identity failed")


@growth.mutant({"factor_one": "Prop 10 as printed: d/dp |W|^2 = Lt |b|^2 (factor 2 missing, erratum E1)",
                "factor_Lt_squared": "d/dp |W|^2 = 2 Lt^2 |b|^2 (one Lt too many)"}, timeout=60)
def _(p, variant):
    """The rate with a perturbed constant, through the same procedure: must not expand to 0."""
    L = sp.Symbol("L", positive=True)
    bad = _growth_symbolic({"factor_one": 1, "factor_Lt_squared": 2 * L}[variant])
    return Outcome(residual=bad, tolerance=0, values={"patterns_nonzero": bad},
                   message=f"{variant}: d/dp |W|^2 - c Lt |b|^2 nonzero on {bad} patterns")


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
    """The path shot on the CPU (adaptive integrator); eq. (2) evaluated at its n_out + 1 points as one batch on
    the namespace of p.backend (K-norms by solvers.xp_jacot, as solvers.leaky)."""
    Y, steps = _shoot(p, rtol=1e-11, n_out=50)
    if Y is None:
        return inconclusive("the path blew up before p = 1; try a smaller B_scale or Lt")
    xp = xp_of(p)
    n = p.w * p.N
    A = on(xp, Y[:, :n].reshape(-1, p.w, p.N))
    B = on(xp, Y[:, n:2 * n].reshape(-1, p.w, p.N))
    K = X.gram(xp, A)
    sv = X.svdvals(xp, K)
    c = sv[:, 0] / sv[:, -1]  # numpy.linalg.cond (2-norm)
    use = (X.image_residual(xp, A, K) <= leaky.IMAGE_RTOL) & (c <= 1e8)
    dA = p.Lt * (B @ K - A)
    kin = X.g_norm2(xp, dA, K) / (2 * p.Lt)
    pot = potential_sign * p.Lt / 2 * X.g_norm2(xp, A, K)
    H = X.hamiltonian(xp, A, B, p.Lt)
    zero = xp.zeros_like(H)
    kin, pot = xp.where(use, kin, zero), xp.where(use, pot, zero)  # skipped points: +inf energies, not compared
    ratio = xp.abs(kin + pot - H) / (xp.abs(kin) + xp.abs(pot) + xp.abs(H)) / c
    ratio = xp.where(use & ~xp.isnan(ratio), ratio, xp.zeros_like(ratio))  # skipped points (and NaN) count 0
    used = int(xp.sum(xp.astype(use, xp.int64)))
    if used == 0:
        return inconclusive("the image condition fails (or K is ill-conditioned) at every point of the path: "
                            "both energies are infinite there (need w + 1 >= N)")
    worst = float(xp.max(ratio))
    max_cond = float(xp.max(xp.where(use, c, xp.zeros_like(c))))
    # Error model: pseudo-inverse solves in K^+ lose cond(K) digits: relative error <= c_n eps cond(K),
    # with c_n = 100 N (eigh backward error and the two quadratic forms); residual is normalised by cond.
    tol = 100 * p.N * EPS
    return Outcome(residual=worst, tolerance=tol, values={
        "points_used": used, "max_cond_K": max_cond, "steps": steps},
        message=f"max relative |kinetic + potential - H| / cond(K) over {used} points with the image condition")


@energies.numeric(backends=("numpy", "cupy"))
def _(p):
    """Kinetic + potential (K-norms through the pseudo-inverse) against H on a shot geodesic."""
    return _energies_outcome(p)


energies.property(over=("w", "N", "Lt", "seed", "B_scale"), max_examples=10)


@energies.falsifier("potential_sign_E11", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """The gamma-stable potential as printed at l.180 (E11: +Lt/2 |A|^2 instead of -Lt/2 |A|^2)."""
    return _energies_outcome(p, potential_sign=+1.0)


_EN_PATTERNS = [((1, 1), (1, 1)), ((1, -1), (-1, 1)), ((-1, -1), (1, -1))]


def _energies_symbolic(variant):
    """w = N = 2, three ReLU patterns: K = sigma^T sigma (bias row included) is invertible, so the image
    condition holds; A' = V a free matrix, B = (A + V/L) K^-1 (l.172).  Counts the patterns where
    H - (|V|_K^2/(2L) - L/2 |A|_K^2) or |V|_K^2 - L^2 (|A|_K^2 + 2H/L) does not cancel to 0."""
    bad = 0
    kin, pot = {"stated": (2, -1), "potential_sign_E11": (2, 1), "kinetic_factor": (1, -1)}[variant]
    for sg in _EN_PATTERNS:
        a, b, L, R, S, _, mask = _sym_H(2, 2, sg)
        V = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"v{i}{j}", real=True))
        K = S.T * S
        Ki = K.inv()
        B = (a + V / L) * Ki
        H = L / 2 * sum(e**2 for e in (B * S.T)) - L * (B * a.T).trace()
        nV, nA = (V * Ki * V.T).trace(), (a * Ki * a.T).trace()
        bad += sp.cancel(sp.together(H - (nV / (kin * L) + pot * L / 2 * nA))) != 0
        bad += sp.cancel(sp.together(nV - L**2 * (nA + pot * -2 * H / L))) != 0
    return bad


@energies.symbolic(timeout=60)
def _(p):
    """w = N = 2 on three ReLU patterns (K invertible): with B = (A + A'/L) K^-1, eq. (2) and the speed formula."""
    bad = _energies_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "eq. (2) and |A'|_K = L sqrt(|A|_K^2 + 2H/L) for w = N = 2, A' free, on three ReLU patterns"},
                   message="identities (two per pattern) that did not cancel")


@energies.mutant({"potential_sign_E11": "potential +L/2 |A|_K^2 (the sign printed at l.180, E11)",
                  "kinetic_factor": "kinetic |A'|_K^2 / L instead of / (2L)"}, timeout=60)
def _(p, variant):
    """Eq. (2) perturbed, through the same procedure: must not cancel to 0."""
    bad = _energies_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"identities_nonzero": bad},
                   message=f"{variant}: {bad} identities did not cancel")


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
    """One array-API path (p.backend): (A, B) drawn on the host; the solves with G = K + gamma I, H and cond(G) on xp."""
    xp = xp_of(p)
    A, B = on(xp, *_initial(p))
    K = X.gram(xp, A)
    G = K + p.gamma * xp.eye(p.N, dtype=xp.float64)
    dA = p.Lt * (B @ K - A)
    M = dA + p.gamma * p.Lt * B

    def q(Y):  # Tr[Y G^-1 Y^T]
        return float(xp.sum(Y * xp.matrix_transpose(xp.linalg.solve(G, xp.matrix_transpose(Y)))))
    t1 = q(M) / (2 * p.Lt)
    t2 = p.Lt / 2 * q(A)
    t3 = 0.0 if drop_B_term else p.gamma * p.Lt / 2 * float(X.fro2(xp, B))
    H = float(X.hamiltonian(xp, A, B, p.Lt))
    sv = X.svdvals(xp, G)
    c = float(sv[0] / sv[-1])  # numpy.linalg.cond (2-norm)
    scale = abs(t1) + abs(t2) + abs(t3) + abs(H)
    # Error model: two solves with G (relative error ~ N eps cond(G)) on terms of size `scale`.
    tol = 50 * p.N * EPS * c * scale
    return Outcome(residual=abs(t1 - t2 - t3 - H), tolerance=tol, values={
        "H": H, "rhs": t1 - t2 - t3, "cond": c}, message="|right side of Thm 4 - H| for random (A, B)")


@thm4.numeric(backends=("numpy", "cupy"))
def _(p):
    """Evaluate both sides at a random (A, B) with A' from Hamilton's first equation."""
    return _thm4_outcome(p)


thm4.property(over=("w", "N", "Lt", "seed", "B_scale", "gamma"), max_examples=25)


@thm4.falsifier("no_B_term", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """Drop the -gamma Lt/2 |B|^2 term."""
    return _thm4_outcome(p, drop_B_term=True)


def _t4_matrices():
    """w = N = 2: A, B free, K a free symmetric matrix, G = K + gamma I, A' = L(BK - A) (eq. (1))."""
    L, g = sp.symbols("L gamma", positive=True)
    a = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
    b = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"b{i}{j}", real=True))
    K = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"k{min(i, j)}{max(i, j)}", real=True))
    G = K + g * sp.eye(2)
    Gi = G.inv()
    dA = L * (b * K - a)
    H = L / 2 * (b * K * b.T).trace() - L * (b * a.T).trace()
    ip = lambda X, Y: (X * Gi * Y.T).trace()  # noqa: E731
    return L, g, a, b, K, Gi, dA, H, ip


def _thm4_symbolic(variant):
    """w = N = 2, K a free symmetric matrix (the identity never uses K's form), A, B free, A' = L(BK - A):
    the printed right side of Thm 4 minus H = L/2 Tr[B K B^T] - L Tr[B A^T], cancelled."""
    L, g, a, b, K, Gi, dA, H, _ = _t4_matrices()
    M = dA + (g * b if variant == "missing_L" else g * L * b)
    last = 0 if variant == "no_B_term" else g * L / 2 * sum(e**2 for e in b)
    rhs = (M * Gi * M.T).trace() / (2 * L) - L / 2 * (a * Gi * a.T).trace() - last
    return int(sp.cancel(sp.together(rhs - H)) != 0)


@thm4.symbolic(timeout=60)
def _(p):
    """Matrix identity (w = N = 2, K free symmetric, K + gamma I invertible) with A' = L(BK - A)."""
    bad = _thm4_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "proved":
                   "Thm 4's identity for 2x2 A, B and a free symmetric K (so for every K = sigma^T sigma)"},
                   message="identity failed")


@thm4.mutant({"no_B_term": "the -gamma L/2 |B|^2 term dropped",
              "missing_L": "A' + gamma B instead of A' + gamma L B in the kinetic term"}, timeout=60)
def _(p, variant):
    """Thm 4 perturbed, through the same procedure: must not cancel to 0."""
    bad = _thm4_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero": bad},
                   message=f"{variant}: right side - H did not cancel")
