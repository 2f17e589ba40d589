"""§2.4 Hamiltonian Reformulation (seed l.144-165): Hamilton's equations (1) (l.148-158), the backward
equation of the momenta (l.148-150, H1), conservation of H (l.156-160) and the earlier Hamiltonian
formulations cited (l.162-164).  Claims: ``jacot.hamilton_equations``, ``jacot.momentum_backward_equation``,
``jacot.hamiltonian_conservation``, ``jacot.prior_hamiltonian_formulations``.

All numerics by forward shooting (``theorems.jacot._shooting``; catalogue §2, key observation): a solution of
Hamilton's equations from random ``(A_0, B_0)`` is an exact critical path for a synthetic target.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import fd, leaky, rk
from solvers import xp_jacot as X
from solvers.xp import on, xp_of
from theorems.claim import Claim, inconclusive, Outcome, Param
from theorems.jacot._shared import _ode_endpoint, _remark, _weight_family
from theorems.jacot._shooting import _initial, _params, _printed_motion, _shoot, _sym_H

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


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
# H1: the momenta and their backward equation
mom = Claim(
    id="jacot.momentum_backward_equation",
    title="The momenta B_p = -1/lambda dC/dA_p: terminal value and backward ODE",
    label="l.148-150 (H1)",
    section="2.4",
    equation="l.150",
    lines=(148, 150),
    statement=r"B_1=\tfrac{2}{\lambda N}(f^*(X)-A_1),\qquad -\partial_pB_p=\dot\sigma(A_p)\odot[W_p^TB_p]-\tilde LB_p",
    status="holds",
    params=[
        Param.int("w", 3, 1, 8, "width", search=(1, 4)),
        Param.int("N", 4, 1, 8, "data points", search=(1, 5)),
        Param.float("Lt", 2.0, 0.0, 10.0, "effective depth L~", search=(0.0, 4.0)),
        Param.float("lam", 0.1, 0.0, 10.0, "regularisation lambda", low_open=True, search=(0.01, 1.0)),
        Param.int("n", 200, 20, 5000, "RK4 steps on [0, 1] (forward and backward)"),
        Param.seed("seed of X, f*(X) and the weights", 1),
    ],
    notes="[W_p^T B_p] keeps the first w rows (the bias row of W_p^T B_p is dropped, implicit in the paper). "
          "Check: B_0 from the backward ODE (RK4, joint with A_p integrated backwards from A_1) against "
          "-1/lambda times central differences of X -> C(alpha_1(X)) along random directions (solvers.fd). "
          "Tolerance (read-through 8): 10 x (the FD error estimates at n and 2n steps + twice the change of the "
          "difference FD - (-lambda <B_0, D>) between n and 2n steps: Richardson on the difference, which tends to 0 "
          "iff the backward equation is right). Formerly the change of <B_0, D> alone (one side's discretisation "
          "error), 3.6e7 x the residual at the defaults.",
    catalogue="jacot §2.4 H1",
    covers=("H1",),
)


def _mom_setup(p):
    rng = np.random.default_rng(p.seed)
    X, Y = rng.standard_normal((p.w, p.N)), rng.standard_normal((p.w, p.N))
    C = rng.standard_normal((3, p.w, p.w + 1)) / np.sqrt(p.w + 1)
    D = [rng.standard_normal((p.w, p.N)) for _ in range(2)]
    return X, Y, _weight_family(C), D


def _adjoint_B0(p, X, Y, Wf, n, variant):
    w, N = X.shape
    A1 = _ode_endpoint(X, Wf, p.Lt, n)
    B1 = 2.0 / (p.lam * N) * (Y - A1)

    def joint(t, y):
        A = y[: w * N].reshape(w, N)
        B = y[w * N:].reshape(w, N)
        W = Wf(t)
        M = W[:, :w].T @ B
        if variant != 2:
            M = np.where(A > 0, M, 0.0)
        dB = -(M - p.Lt * B) if variant != 1 else -(M + p.Lt * B)
        return np.concatenate([(-p.Lt * A + W @ leaky.sigma(A)).ravel(), dB.ravel()])
    y = rk.rk_fixed_numpy(joint, 1.0, np.concatenate([A1.ravel(), B1.ravel()]), -1.0 / n, n)
    return y[w * N:].reshape(w, N), float(np.max(np.abs(y[: w * N].reshape(w, N) - X)))


def _mom_outcome(p, variant=0):
    X, Y, Wf, D = _mom_setup(p)
    B0, back_err = _adjoint_B0(p, X, Y, Wf, p.n, variant)
    B0h, _ = _adjoint_B0(p, X, Y, Wf, 2 * p.n, variant)  # the same at 2n steps: Richardson on the difference

    def cost(Xv, n):
        return float(np.sum((Y - _ode_endpoint(Xv, Wf, p.Lt, n)) ** 2) / p.N)
    worst, rows = 0.0, []
    for Dk in D:
        # d(n) = FD derivative of the n-step cost - (-lambda <B_0(n), D>): both sides discretise the same continuous
        # derivative, so d(n) -> 0 as n grows iff the backward equation is right (a wrong one leaves d(n) -> const).
        # Error model: for a difference converging with order q >= 1, |d(n)| <= |d(n) - d(2n)| / (1 - 2^-q)
        # <= 2 |d(n) - d(2n)|; plus the FD error estimates of solvers.fd at n and 2n; safety factor 10 (reduced,
        # erratic order at ReLU kinks).  (Formerly the tolerance was |<B_0(n) - B_0(2n), D>|, the error of ONE
        # side: 6e-5 at the defaults where the two sides agree to 3e-11, 3.6e7 x the residual.)
        (g,), (err,) = fd.gradient_with_error(lambda e, Dk=Dk: cost(X + e[0] * Dk, p.n), [np.zeros(1)], h=1e-6)
        (g2,), (err2,) = fd.gradient_with_error(lambda e, Dk=Dk: cost(X + e[0] * Dk, 2 * p.n), [np.zeros(1)], h=1e-6)
        pred, pred2 = -p.lam * float(np.sum(B0 * Dk)), -p.lam * float(np.sum(B0h * Dk))
        d, d2 = float(g[0]) - pred, float(g2[0]) - pred2
        tol = 10 * (float(err[0]) + float(err2[0]) + 2 * abs(d - d2)) + 1e-12
        rows.append({"fd": float(g[0]), "adjoint": pred, "difference_n": d, "difference_2n": d2, "tol": tol})
        worst = max(worst, abs(d) / tol)
    return Outcome(residual=worst, tolerance=1.0, values={"directions": rows, "backward_A_error": back_err},
                   message="max over directions of |FD derivative - (-lambda <B_0, D>)| / tolerance")


@mom.numeric
def _(p):
    """B_0 from the backward ODE vs -1/lambda grad_X C(alpha_1(X)) by central differences (two directions)."""
    return _mom_outcome(p)


mom.property(over=("w", "N", "Lt", "lam", "seed"), max_examples=5)


@mom.falsifier({
    "no_relu_mask": "Drop sigma-dot (use [W_p^T B_p] unmasked): the transported momentum is wrong.",
    "leak_sign": "Flip the sign of the leak term: -dB = sigma-dot * [W^T B] + Lt B.",
}, search=("seed",))
def _(p, variant):
    return _mom_outcome(p, variant={"no_relu_mask": 2, "leak_sign": 1}[variant])


def _mom_symbolic(variant="stated"):
    """B_1 from -1/lambda dC/dA_1 (sympy.diff of C = 1/N |f* - A|^2, w = N = 2) against the printed terminal value,
    and the adjoint pairing d/dp <B, dA> along dA' = -Lt dA + V (m * dA) (linearised forward ODE) and the printed
    backward equation -B' = m * (V^T B) - Lt B (fixed mask m), or perturbed copies: failed identities."""
    lam, Nn = sp.Symbol("lambda", positive=True), 2
    A = sp.Matrix(2, 2, sp.symbols("a0:4"))
    F = sp.Matrix(2, 2, sp.symbols("f0:4"))
    C = sum((F - A).applyfunc(lambda x: x**2)) / Nn
    grad = A.applyfunc(lambda x: sp.diff(C, x))
    c1 = 1 if variant == "terminal_factor_one" else 2
    bad = sum(1 for e in (-grad / lam - c1 / (lam * Nn) * (F - A)) if sp.expand(e) != 0)
    Lt = sp.Symbol("Lt")
    V = sp.Matrix(2, 2, sp.symbols("v0:4"))
    m = sp.Matrix(2, 2, sp.symbols("m0:4"))
    dA = sp.Matrix(2, 2, sp.symbols("d0:4"))
    B = sp.Matrix(2, 2, sp.symbols("b0:4"))
    dAdot = -Lt * dA + V * m.multiply_elementwise(dA)
    leak = -1 if variant == "leak_sign" else 1
    Bdot = -(m.multiply_elementwise(V.T * B) - leak * Lt * B)
    pairing = sum(Bdot.multiply_elementwise(dA)) + sum(B.multiply_elementwise(dAdot))
    return bad + int(sp.expand(pairing) != 0)


@mom.symbolic(timeout=30)
def _(p):
    """B_1 = -1/lambda dC/dA_1 = 2/(lambda N)(f* - A_1) for C = 1/N |f* - A|^2 (w = 2, N = 2 symbols); and the adjoint
    pairing d/dp <B, dA> = 0 for dA' = -Lt dA + V (m * dA), -B' = m * (V^T B) - Lt B (fixed mask m)."""
    bad = _mom_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff/expand",
                   "proved": "terminal value; the backward equation is the adjoint of the linearised forward ODE"},
                   message="identities that failed")


@mom.mutant({"leak_sign": "-B' = m * (V^T B) + Lt B (the leak term's sign flipped)",
             "terminal_factor_one": "B_1 = 1/(lambda N) (f* - A_1) (the factor 2 dropped)"}, timeout=30)
def _(p, variant):
    """The printed equations perturbed, through the same procedure: an identity must fail."""
    bad = _mom_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} identities failed")

cited = _remark(
    "jacot.prior_hamiltonian_formulations", "The Lagrangian/Hamiltonian view of non-leaky ResNets appeared in [26]",
    "l.162-164 (H6)", (162, 164),
    r"\text{The Lagrangian and Hamiltonian reformulations appeared in [26] (non-leaky ResNets), similar to [31, 32]}",
    "heuristic",
    "A citation remark; nothing to check. The paper's stated difference (|.|_{K_p} depends on A_p and can be "
    "degenerate) is the +inf convention implemented in solvers.leaky.g_norm2.",
    "jacot §2.4 H6", ("H6",), "2.4")
