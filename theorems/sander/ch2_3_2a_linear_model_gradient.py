"""Chapter 2, Sec 2.3.2 "Linear Case", the model and its gradient (seed l.809-823): least squares with a
linear ResNet is the deep matrix factorisation (2.5) (l.815-819; ``sander.linear_regression_equivalence``), the
gradient of Sec 2.3.2 (l.821, erratum E2; ``sander.linear_gradient``) and the depth-rescaled flow (l.819-823, L3:
``N nabla_n = O(1)``, and the l.992 gradient runs time 2x slower; ``sander.linear_rescaled_flow``).

Catalogue sander_part1 §2.2 (L1-L3).  Notation (harness H2, paper order of the product, the true gradient
``(2/N) S^T G Sigma P^T``): see :mod:`theorems.sander._resnet_harness`.
"""
from __future__ import annotations


import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from solvers import xp_sander1 as xk
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._resnet_harness import _h2_instance, _spd, grad


EPS = float(np.finfo(float).eps)


# ===========================================================================
# L1: regression <-> deep matrix factorisation
regr = Claim(
    id="sander.linear_regression_equivalence",
    title="Least squares with a linear ResNet is the deep matrix factorisation ||Pi - B||_Sigma^2 up to a constant",
    label="(2.5)",
    section="2.3.2",
    equation="(2.5)",
    lines=(815, 819),
    statement=r"\tfrac1n\textstyle\sum_k\|\Pi x_k-y_k\|^2=\|\Pi-B\|_\Sigma^2+c,\ \Sigma=\tfrac1n\sum x_kx_k^\top,\ "
              r"B=\tfrac1n\sum y_kx_k^\top\Sigma^{-1},\ c=\tfrac1n\sum\|y_k\|^2-\operatorname{Tr}(B\Sigma B^\top)\ge0",
    status="holds",
    params=[Param.int("d", 3, 1, 8, "dimension", search=(1, 5)),
            # narrowed by the audit (issue 21): n in [1, 1000] drew n < d in 3 of 4 sweep draws (seed 777001), all
            # inconclusive (Sigma singular, B undefined); n >= 8 >= d keeps Sigma invertible
            Param.int("n", 10, 8, 1000, "number of samples (n >= 8 >= d, so Sigma > 0)", search=(8, 40)),
            Param.seed("seed")],
    notes="The identity rests on Sigma B^T = (1/n) sum x_k y_k^T; c >= 0 is the residual of the best linear fit. "
          "n < d: Sigma is singular and B undefined (inconclusive); the declared n starts at 8 = max d (audit issue 21: "
          "the former n >= 1 made 3 of 4 sweep draws inconclusive). Error model: both sides are sums of n d^2 "
          "products of size ~ scale: 8 n d^2 eps scale cond(Sigma).",
    catalogue="sander_part1 §2.2 L1",
    covers=("L1",),
)


def _regr(p, with_c=True):
    """Array API (NumPy, array-api-strict, CuPy): the data are drawn on the host, the gate on cond(Sigma) is
    decided there, both sides are computed with ``xp``."""
    rng = np.random.default_rng(p.seed)
    X, Y = rng.standard_normal((2, p.n, p.d))
    Pi = np.eye(p.d) + rng.standard_normal((p.d, p.d)) / 3
    Sig_h = X.T @ X / p.n
    cond = np.linalg.cond(Sig_h)
    if p.n < p.d or not np.isfinite(cond) or cond > 1e12:
        return inconclusive("Sigma is singular (n < d or degenerate data): B is undefined", n=p.n, d=p.d)
    xp = xp_of(p)
    X, Y, Pi = on(xp, X, Y, Pi)
    T, tr = xp.matrix_transpose, xp.linalg.trace
    Sig = T(X) @ X / p.n
    B = (T(Y) @ X / p.n) @ xp.linalg.inv(Sig)
    yy = float(xp.mean(xp.sum(Y * Y, axis=1)))
    lhs = float(xp.mean(xp.sum((X @ T(Pi) - Y) ** 2, axis=1)))
    c = yy - float(tr(B @ Sig @ T(B)))
    G = Pi - B
    rhs = float(tr(G @ Sig @ T(G))) + (c if with_c else 0.0)
    scale = lhs + yy + float(tr(Pi @ Sig @ T(Pi)))
    tol = 8 * p.n * p.d**2 * EPS * scale * cond
    parts = {"identity": (abs(lhs - rhs), tol), "c>=0": (max(-c, 0.0), tol)}
    return Outcome.from_parts(parts, f"lhs {lhs:.12f}, rhs {rhs:.12f}, c = {c:.6f}", {"lhs": lhs, "rhs": rhs, "c": c})


@regr.numeric(backends=("numpy", "cupy"))
def _(p):
    """Both sides on random data, and c >= 0."""
    return _regr(p)


regr.property(over=("d", "n", "seed"), max_examples=15)


@regr.falsifier("without_constant", fixed={"n": 12}, backends=("numpy", "cupy"))
def _(p):
    """Dropping c: the two losses differ by the irreducible residual c > 0 (n > d, generic targets)."""
    return _regr(p, with_c=False)


#: (B from Sigma and C = (1/n) sum y x^T, c from (1/n) sum |y|^2 and B) of (2.5) as printed, and misprints (mutants)
REGRESSION_FORMS = {"stated": (lambda C, Sig: C * Sig.inv(), lambda yy, B, Sig: yy - (B * Sig * B.T).trace()),
                    "sigma_inverse_dropped": (lambda C, Sig: C, lambda yy, B, Sig: yy - (B * Sig * B.T).trace()),
                    "c_sign_flipped": (lambda C, Sig: C * Sig.inv(), lambda yy, B, Sig: yy + (B * Sig * B.T).trace())}


def _regression_residual(form):
    """n = 3 samples with symbolic entries in d = 2, generic Pi: (1/n) sum |Pi x_k - y_k|^2 computed from the samples
    against ||Pi - B||_Sigma^2 + c with Sigma, B, c built from the same samples as printed; cancel(together)."""
    Bf, cf = REGRESSION_FORMS[form]
    n, d = 3, 2
    X = [sp.Matrix(d, 1, sp.symbols(f"x{k}_0:{d}")) for k in range(n)]
    Y = [sp.Matrix(d, 1, sp.symbols(f"y{k}_0:{d}")) for k in range(n)]
    P = sp.Matrix(d, d, sp.symbols("p0:4"))
    Sig = sum((x * x.T for x in X), sp.zeros(d)) / n
    C = sum((y * x.T for x, y in zip(X, Y)), sp.zeros(d)) / n
    B = Bf(C, Sig)
    lhs = sum(((P * x - y).T * (P * x - y))[0] for x, y in zip(X, Y)) / n
    c = cf(sum((y.T * y)[0] for y in Y) / n, B, Sig)
    return sp.cancel(sp.together(lhs - (((P - B) * Sig * (P - B).T).trace() + c)))


@regr.symbolic(timeout=30)
def _(p):
    """n = 3 symbolic samples in d = 2, generic Pi: (1/n) sum |Pi x_k - y_k|^2 = ||Pi - B||_Sigma^2 + c with Sigma,
    B = (1/n) sum y x^T Sigma^{-1} and c = (1/n) sum |y|^2 - Tr(B Sigma B^T) from the samples (rational identity)."""
    r = _regression_residual("stated")
    return Outcome(residual=int(r != 0), tolerance=0, values={"method": "sympy.cancel(together)", "residual": str(r),
                                                              "instances": "n = 3, d = 2, all entries symbolic"},
                   message="identity reduced to 0" if r == 0 else "identity did not reduce")


@regr.mutant({"sigma_inverse_dropped": "B = (1/n) sum y_k x_k^T (the Sigma^{-1} dropped)",
              "c_sign_flipped": "c = (1/n) sum |y_k|^2 + Tr(B Sigma B^T)"}, timeout=30)
def _(p, variant):
    """(2.5) perturbed, through the same cancellation: the difference must not reduce to 0."""
    r = _regression_residual(variant)
    return Outcome(residual=int(r != 0), tolerance=0, values={"residual_nonzero": r != 0},
                   message=f"(1/n) sum |Pi x - y|^2 - (||Pi - B||^2 + c) does not reduce to 0 for {variant}")


# ===========================================================================
# L2, L3: the gradient (E2)
gradc = Claim(
    id="sander.linear_gradient",
    title="Gradient of ||Pi - B||_Sigma^2 in theta_n: (2/N) Pi_{:n}^T (Pi - B) Sigma Pi_{n:}^T",
    label="Sec 2.3.2 'Gradient'",
    section="2.3.2, App 2.A.2",
    equation="l.821, l.992",
    lines=(821, 821),
    statement=r"N\nabla_n^N=\Pi_{:n}^N(\Pi^N-B)\Sigma\Pi_{n:}^N",
    corrected=r"N\nabla_n^N=2\,\Pi_{:n}^{N\top}(\Pi^N-B)\Sigma\,\Pi_{n:}^{N\top}",
    status="erratum",
    params=[Param.int("N", 5, 1, 64, "depth", search=(1, 10)),
            Param.int("d", 3, 1, 6, "dimension", search=(1, 4)),
            Param.seed("seed")],
    notes="E2: l.821 has no transposes and no factor 2; l.992 has the transposes but no 2. The factor 2 only "
          "rescales time (L3: theta' = -N nabla_n, same fixed points); the missing transposes give a wrong vector "
          "field. Checked against central finite differences (solvers.fd) with its error estimate x10; layers are "
          "non-symmetric, Sigma > 0 random.",
    catalogue="sander_part1 §2.2 L2, L3; §4 E2; §3.2 R2",
    covers=("L2", "L3", "E2"),
)


def _grad_instance(p):
    rng = np.random.default_rng(p.seed)
    th = rng.standard_normal((p.N, p.d, p.d))
    Sig, _ = _spd(p.d, 0.3, 1.5, rng)
    B = rng.standard_normal((p.d, p.d))
    return th, Sig, B


def _grad_outcome(p, convention):
    """Array API: the gradient (one stacked product pass) and all 4 N d^2 finite-difference evaluations (one
    batch, solvers.xp_sander1.fd_gradients) on ``xp``."""
    xp = xp_of(p)
    th, Sig, B = on(xp, *_grad_instance(p))
    g = xk.lin_grad(xp, th, Sig, B, convention)
    (fd,), (err,) = xk.fd_gradients(xp, lambda t: xk.lin_loss(xp, t, Sig, B), [th], h=1e-5)
    excess = float(xp.max(xp.abs(g - fd) - 10 * err))
    fdmax = float(xp.max(xp.abs(fd)))
    rel = float(xp.max(xp.abs(g - fd))) / fdmax
    return Outcome(residual=max(excess, 0.0), tolerance=1e-12 * max(1.0, fdmax),
                   values={"relative_error": rel, "fd_error_estimate": float(xp.max(err)), "convention": convention},
                   message=f"{convention} gradient vs central FD: max|g - fd|/max|fd| = {rel:.3e}")


@gradc.numeric(backends=("numpy", "cupy"))
def _(p):
    """The true gradient (2/N) Pi_{:n}^T G Sigma Pi_{n:}^T against central differences."""
    return _grad_outcome(p, "true")


gradc.property(over=("N", "d", "seed"), max_examples=12)


@gradc.falsifier({
    "stated": "Main text l.821: (1/N) Pi_{:n} G Sigma Pi_{n:} (catalogue: relative error 0.576).",
    "appendix_l992": "Appendix l.992: (1/N) Pi_{:n}^T G Sigma Pi_{n:}^T, half the true "
                     "gradient (relative error 0.5).",
}, search=("seed",), backends=("numpy", "cupy"))
def _(p, variant):
    return _grad_outcome(p, {"stated": "main", "appendix_l992": "appendix"}[variant])


# ===========================================================================
# L3: the rescaled flow theta_n' = -N nabla_n
flow = Claim(
    id="sander.linear_rescaled_flow",
    title="Linear ResNets: N nabla_n = O(1) for weights theta_n = psi(n/N), and the l.992 gradient flow is the true one at half speed",
    label="Sec 2.3.2 'Gradient' (rescaled flow)",
    section="2.3.2",
    equation="l.821",
    lines=(819, 823),
    statement=r"\dot\theta_n=-N\nabla_n,\qquad N\nabla_n=O(1)",
    status="holds",
    params=[Param.int("N", 8, 2, 256, "depth of the smaller net (N and 2N are compared)", search=(2, 16)),
            Param.int("d", 3, 1, 6, "dimension", search=(1, 3)),
            Param.seed("seed of psi_init, Sigma and B"),
            Param.float("T", 1.0, 0.0, 10.0, "time horizon of the time-rescaling check", low_open=True)],
    notes="Definition L3, checked through its two consequences: (a) with theta_n = psi(n/N) for a smooth psi, "
          "c(N) = N max_n ||nabla_n||_F converges as N doubles (|c(2N)/c(N) - 1| <= 2 (1/q + 1/N): the change of the "
          "residual Pi^N - B, q = ||Pi^N - B||/||Pi^N - Pi^2N||, plus the O(1/N) Riemann-sum correction; inconclusive "
          "for q < 3, next to the optimum); (b) the flow with the appendix gradient (l.992, no factor 2) at time 2t "
          "equals the true-gradient flow at time t: reported only (read-through, issue 21: both fields come from one "
          "routine that differs by the factor 2, so the comparison measures DOP853's error and cannot fail; the factor "
          "itself is certified against finite differences in sander.linear_gradient).  The fixed points "
          "coincide trivially (the two gradients are proportional).  Falsifier: 'nabla_n = O(1)' without the factor N.",
    catalogue="sander_part1 §2.2 L3; §4 E2",
    covers=("L3",),
)


def _gnorm(p, N, scale):
    psi, Sig, B = _h2_instance(p)
    th = np.array([psi(n / N) for n in range(1, N + 1)])
    return scale(N) * max(np.linalg.norm(g) for g in grad(th, Sig, B))


def _flow_ab(p):
    psi, Sig, B = _h2_instance(p)
    N = p.N
    th0 = np.array([psi(n / N) for n in range(1, N + 1)]).ravel()

    def rhs(conv):
        return lambda t, y: (-N * grad(y.reshape(N, p.d, p.d), Sig, B, convention=conv)).ravel()
    a = solve_ivp(rhs("true"), (0, p.T), th0, method="DOP853", rtol=1e-11, atol=1e-13).y[:, -1]
    b = solve_ivp(rhs("appendix"), (0, 2 * p.T), th0, method="DOP853", rtol=1e-11, atol=1e-13).y[:, -1]
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-300))


@flow.numeric
def _(p):
    """N max_n ||nabla_n|| is N-independent (rate model 2 (1/q + 1/N)); the l.992 flow at 2T vs the true flow at T is reported."""
    c1, c2 = _gnorm(p, p.N, lambda N: N), _gnorm(p, 2 * p.N, lambda N: N)
    if c1 == 0:
        return inconclusive("zero gradient: the instance is at a fixed point", c_N=c1)
    # Error model of the O(1) part: N nabla_n = Pi_{:n} (Pi^N - B) Sigma Pi_{n:}^T, so c(N) changes with N through
    # the residual Pi^N - B (relative change ||Pi^N - Pi^2N|| / ||Pi^N - B|| = 1/q) and through the partial
    # products (the O(1/N) Riemann-sum correction): |c(2N)/c(N) - 1| <= 2 (1/q + 1/N).  Measured over 7,000
    # instances (seeds 0-199, d 1-6, N 2-64): at most 0.94 (1/q + 1/N).  Near the optimum (q < 3) the residual
    # is the discretisation change itself and c(N) has no stable scale: inconclusive.  (The fixed 10% used before
    # refuted N = 2, d = 1, seed 4 and seed 45 at the default N = 8, where Pi^N is 0.06 of its own change from B.)
    psi, Sig, B = _h2_instance(p)
    prods_N = [np.eye(p.d)]
    for M in (p.N, 2 * p.N):
        P = np.eye(p.d)
        for n in range(1, M + 1):
            P = (np.eye(p.d) + psi(n / M) / M) @ P
        prods_N.append(P)
    P1, P2 = prods_N[1], prods_N[2]
    q = float(np.linalg.norm(P1 - B) / max(np.linalg.norm(P1 - P2), 1e-300))
    if q < 3:
        return inconclusive(f"Pi^N is within 3 discretisation changes of B (q = {q:.3g}): the relative change of "
                            "N max||nabla_n|| measures the optimum's neighbourhood, not the scaling", c_N=c1, q=q)
    # (b) the l.992 flow at 2T against the true flow at T is REPORTED, not judged: both fields come from the same
    # routine (`grad`, convention factor 2 vs 1), so their gap is solver error only and cannot fail on the claim
    # (read-through, issue 21); that the l.992 gradient is half the true one is certified against central finite
    # differences by sander.linear_gradient
    rel = _flow_ab(p)
    return Outcome.from_parts({"N nabla_n = O(1)": (abs(c2 / c1 - 1), 2 * (1 / q + 1 / p.N))},
                              "rescaled gradient N nabla_n = O(1) (time rescaling x2 reported)",
                              {"c_N": c1, "c_2N": c2, "q": q, "rel_flow_gap_reported": rel})


flow.property(over=("N", "d", "seed"), max_examples=6)


@flow.falsifier("unscaled_gradient_O1")
def _(p):
    """'nabla_n = O(1)' (no factor N): max ||nabla_n|| halves when N doubles."""
    c1, c2 = _gnorm(p, p.N, lambda N: 1.0), _gnorm(p, 2 * p.N, lambda N: 1.0)
    return Outcome(residual=abs(c2 / c1 - 1), tolerance=0.1, values={"max_grad_N": c1, "max_grad_2N": c2},
                   message="|max||nabla^{2N}|| / max||nabla^N|| - 1|")
