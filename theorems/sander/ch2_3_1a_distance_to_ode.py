"""Chapter 2, Sec 2.3.1 "Distance to an ODE" (seed l.793-808) and App 2.A.1 (proof of Prop 2.2,
l.952-987): Definition 2.1 and Proposition 2.2, a ResNet is the Euler scheme of any interpolating neural ODE with
error ``<= (e^L - 1) C_N / (2 N L)`` (l.797-805; ``sander.euler_error_bound``), and the smoothness Def 2.1 and
Prop 2.2 ask of the interpolations (l.797-803; ``sander.smooth_interpolation_definition``, gap E19).

Catalogue sander_part1 §2.1 (C2.1-C2.7), §3.1 D1-D3, §3.2 R1, §4 E19.  Notation decisions (catalogue §6 and §2.1):

* Depth ``N``, layers ``n``, step ``h = 1/N``; the ResNet (2.1) is the explicit Euler scheme of any
  interpolating field ``phi(., n/N) = f(., theta_n)``.
* Norms: Euclidean on states; ``L`` is a Lipschitz constant of ``x -> phi(x, s)`` uniform in ``s``
  (for ``tanh(W(s) x + b(s))`` we use ``sup_s |W(s)|_2``, an upper bound, which only enlarges the bound).
* E19 / C2.3 (gap, minor): Def 2.1 asks for a "smooth" interpolation and Prop 2.2 for ``C^1``, but the two
  interpolations of l.799 are only Lipschitz in ``s``.  The proof (l.960-986) needs only
  ``xdd in L^infty``, so we use ``C_N = ess sup ||d_s phi + d_x phi[phi]||`` along the exact trajectory; the
  non-smooth families below (``steps``, ``alternating``) are checked with that ess-sup.
* ``C_N`` is the sup of ``||xdd(s)||`` along the exact solution (all the proof uses), not over a compact ``K``.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from solvers import resnet_ode as ro
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._resnet_harness import _fit_slope


EPS = float(np.finfo(float).eps)


FAMILIES = ("smooth", "affine", "steps", "alternating")


# ---------------------------------------------------------------------------
# the four families of interpolating fields
def _smooth_field(d, seed, scale=1.0):
    """phi(x, s) = tanh(W(s) x + b(s)), W(s) = W0 + sin(2 pi s) W1 + s^2 W2, b(s) = b0 + s b1
    (catalogue C2.4(b)/(c): random smooth trigonometric/polynomial coefficients)."""
    rng = np.random.default_rng(seed)
    W0, W1, W2 = scale * rng.standard_normal((3, d, d)) / np.sqrt(d)
    b0, b1 = rng.standard_normal((2, d))
    x0 = rng.standard_normal(d)

    def W(s):
        return W0 + np.sin(2 * np.pi * s) * W1 + s * s * W2

    def Wp(s):
        return 2 * np.pi * np.cos(2 * np.pi * s) * W1 + 2 * s * W2

    def bb(s):
        return b0 + s * b1

    return dict(W=W, Wp=Wp, b=bb, bp=lambda s: b1, x0=x0,
                Wlip=2 * np.pi * np.linalg.norm(W1, 2) + 2 * np.linalg.norm(W2, 2))


def _lipschitz_L(F, m=2001):
    """sup_s |W(s)|_2 on [0, 1]: grid maximum plus (ds/2) sup|W'|_2 (so an upper bound)."""
    s = np.linspace(0, 1, m)
    return float(max(np.linalg.norm(F["W"](t), 2) for t in s) + 0.5 / (m - 1) * F["Wlip"])


def _smooth_reference(F, N, rtol):
    """x(n/N), n = 0..N, and x, xdd on a fine grid, by DOP853 at relative tolerance ``rtol``."""
    def rhs(s, x):
        return np.tanh(F["W"](s) @ x + F["b"](s))
    sol = solve_ivp(rhs, (0.0, 1.0), F["x0"], method="DOP853", rtol=rtol, atol=rtol * 1e-2, dense_output=True)
    return sol


@lru_cache(maxsize=64)
def _smooth_reference_data(d, seed):
    """Everything about the smooth field that does not depend on N: the DOP853 solutions (rtol 1e-12 and 1e-10),
    C_N (with and without d_s phi) and L."""
    F = _smooth_field(d, seed)
    fine = _smooth_reference(F, 1, 1e-12)
    coarse = _smooth_reference(F, 1, 1e-10)
    # C_N = sup ||xdd|| along the trajectory: grid max + (ds/2) * sup||xddd|| (FD estimate x1.5)
    m = 4001
    sg = np.linspace(0, 1, m)
    Xg = fine.sol(sg).T
    Ws = np.array([F["W"](s) for s in sg])
    Wps = np.array([F["Wp"](s) for s in sg])
    bs = np.array([F["b"](s) for s in sg])
    u = np.tanh(np.einsum("kij,kj->ki", Ws, Xg) + bs)
    D = 1 - u * u
    xdd_x = D * np.einsum("kij,kj->ki", Ws, u)                        # d_x phi [phi]
    xdd = D * (np.einsum("kij,kj->ki", Wps, Xg) + F["bp"](0.0)) + xdd_x  # + d_s phi
    nrm = np.linalg.norm(xdd, axis=1)
    slope = float(np.max(np.abs(np.diff(nrm))) * (m - 1))
    C_N = float(nrm.max() + 0.5 / (m - 1) * 1.5 * slope)
    C_x = float(np.linalg.norm(xdd_x, axis=1).max() + 0.5 / (m - 1) * 1.5 * slope)
    return F, fine, coarse, C_N, C_x, _lipschitz_L(F)


def _smooth_case(p):
    F, fine, coarse, C_N, C_x, L = _smooth_reference_data(p.d, p.seed)
    N = p.N
    s_n = np.arange(N + 1) / N
    W = np.array([F["W"](s) for s in s_n[:-1]])
    b = np.array([F["b"](s) for s in s_n[:-1]])
    x0 = F["x0"][None, :]
    xs = (ro.euler_forward(x0, W, b, N) if p.backend == "numba" else ro.euler_forward_numpy(x0, W, b, N))[:, 0, :]
    X = fine.sol(s_n).T
    ref_err = float(np.max(np.abs(X - coarse.sol(s_n).T)))   # error estimate of the 1e-12 solution (conservative)
    err = float(np.max(np.linalg.norm(xs - X, axis=1)))
    scale = max(1.0, float(np.max(np.linalg.norm(xs, axis=1))))
    # error model of the floating-point Euler recursion x_{n+1} = fl(x_n + fl(f_n)/N), u = eps/2:
    #   the local rounding of step n is delta_n <= u ||x_{n+1}|| (the addition) + (d + 2) u ||f_n|| / N (the
    #   matvec of length d, the bias, tanh and the division), and ||f_n|| <= sqrt(d) (tanh); the rounded recursion
    #   is the exact one plus delta_n, and L-Lipschitz steps carry it forward with factor (1 + L/N)^(N-n) <= e^L, so
    #   ||x_n^fl - x_n|| <= e^L (N u scale + (d + 2) u sqrt(d)) with scale = max_n ||x_n||.  Safety factor 2;
    #   plus twice the estimated error of the DOP853 reference.
    u = EPS / 2
    rounding = 2 * math.exp(L) * (N * u * scale + (p.d + 2) * u * math.sqrt(p.d))
    allowance = rounding + 2 * ref_err
    return dict(error=err, L=L, C_N=C_N, C_N_without_ds=C_x, allowance=allowance, ref_err=ref_err, rounding=rounding,
                gap_final=float(np.linalg.norm(xs[-1] - X[-1])))


def _vec(d, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((3, d))
    return [[Fraction(float(t)) for t in row] for row in v]


def _fnorm(vec):
    """Euclidean norm of a vector of Fractions, rounded once (relative error <= 2 eps)."""
    return math.sqrt(float(sum(t * t for t in vec)))


def _exact_case(p, N=None):
    """affine / steps / alternating, in exact rational arithmetic (float inputs are exact binaries).

    affine:      f(x, theta_n) = a n/N + b;  phi = a s + b;  x(s) = x0 + b s + a s^2/2;  C_N = |a|
    steps:       f(x, theta_n) = n v;  residual interpolation phi = N s v;  x(s) = x0 + N s^2 v/2;  C_N = N|v|
    alternating: theta_n = (-1)^n, f = theta^2 v;  weight interpolation phi = (1 - 2(Ns - n))^2 v on cell n;
                 x(n/N) = x0 + n v/(3N) (each cell integrates to 1/(3N));  C_N = ess sup |d_s phi| = 4N|v|
    In all three d_x phi = 0, so L = 0 and the bound is C_N/(2N)."""
    N = p.N if N is None else N
    a, b, x0 = _vec(p.d, p.seed)
    d = p.d
    x = list(x0)
    err2 = Fraction(0)
    for n in range(N + 1):
        s = Fraction(n, N)
        if p.family == "affine":
            X = [x0[i] + b[i] * s + a[i] * s * s / 2 for i in range(d)]
        elif p.family == "steps":
            X = [x0[i] + N * s * s * a[i] / 2 for i in range(d)]
        else:
            X = [x0[i] + a[i] * Fraction(n, 3 * N) for i in range(d)]
        e2 = sum((x[i] - X[i]) ** 2 for i in range(d))
        err2 = max(err2, e2)
        if n == N:
            final_gap = math.sqrt(float(e2))
            break
        if p.family == "affine":
            fx = [a[i] * Fraction(n, N) + b[i] for i in range(d)]
        elif p.family == "steps":
            fx = [n * a[i] for i in range(d)]
        else:
            fx = list(a)                       # theta_n^2 = 1
        x = [x[i] + fx[i] / N for i in range(d)]
    na = _fnorm(a)
    C_N = {"affine": na, "steps": N * na, "alternating": 4 * N * na}[p.family]
    return dict(error=math.sqrt(float(err2)), L=0.0, C_N=C_N, C_N_without_ds=0.0,
                allowance=8 * d * EPS * C_N / (2 * N), ref_err=0.0, gap_final=final_gap)


EXACT_MAX_N = 4096     # rational arithmetic up to here (~4 s at d = 8); above, float64 with a rounding model


def _float_case(p, N):
    """affine / steps / alternating in float64 (N > EXACT_MAX_N, where Fractions take minutes): the same recursion
    and exact solution as :func:`_exact_case`.  Rounding model (L = 0, no Grönwall growth): each Euler step adds
    <= u ||x_{n+1}|| + 2u ||f_n||/N, the closed-form X(n/N) carries <= 4u ||X||, so the error is known to within
    2 (N u max||x|| + 2u max||f|| + 4u max||X||) (factor 2 safety)."""
    rng = np.random.default_rng(p.seed)
    a, b, x0 = rng.standard_normal((3, p.d))                  # the same draw as _vec (which makes them Fractions)
    n = np.arange(N + 1, dtype=float)
    s = n / N
    if p.family == "affine":
        X = x0 + np.outer(s, b) + np.outer(s * s, a) / 2
        F = np.outer(n[:-1] / N, a) + b
    elif p.family == "steps":
        X = x0 + np.outer(N * s * s, a) / 2
        F = np.outer(n[:-1], a)
    else:
        X = x0 + np.outer(n / (3 * N), a)
        F = np.tile(a, (N, 1))
    xs = np.empty((N + 1, p.d))
    x = x0.copy()
    xs[0] = x
    for k in range(N):
        x = x + F[k] / N
        xs[k + 1] = x
    e = np.linalg.norm(xs - X, axis=1)
    u = EPS / 2
    allowance = 2 * (N * u * float(np.max(np.linalg.norm(xs, axis=1))) + 2 * u * float(np.max(np.linalg.norm(F, axis=1)))
                     + 4 * u * float(np.max(np.linalg.norm(X, axis=1))))
    na = float(np.linalg.norm(a))
    C_N = {"affine": na, "steps": N * na, "alternating": 4 * N * na}[p.family]
    return dict(error=float(e.max()), L=0.0, C_N=C_N, C_N_without_ds=0.0, allowance=allowance, ref_err=0.0,
                gap_final=float(e[-1]))


def _case(p, N=None):
    if p.family == "smooth":
        return _smooth_case(p if N is None else p.replace(N=N))
    if (p.N if N is None else N) > EXACT_MAX_N:
        return _float_case(p, p.N if N is None else N)
    return _exact_case(p, N)


def _bound(L, C, N, factor=2.0):
    """(e^L - 1)/(factor N L) C, and its limit C/(factor N) at L = 0."""
    return (math.expm1(L) / L if L > 0 else 1.0) * C / (factor * N)


claim = Claim(
    id="sander.euler_error_bound",
    title="A ResNet is the Euler scheme of any interpolating neural ODE: error <= (e^L-1) C_N/(2NL)",
    label="Prop 2.2",
    section="2.3.1, App 2.A.1",
    equation="(2.1)-(2.2)",
    lines=(797, 805),
    statement=r"\varphi_\Theta\in C^1,\ L\text{-Lipschitz in }x:\ \|x_n-x(\tfrac nN)\|\le\frac{e^L-1}{2NL}C_N\ (L>0),"
              r"\ \le\frac{C_N}{2N}\ (L=0),\quad C_N=\|\partial_s\varphi_\Theta+\partial_x\varphi_\Theta[\varphi_\Theta]\|_\infty;"
              r"\ \text{tight for }\varphi=as+b:\ \|x(1)-x_N\|=\frac{\|a\|}{2N}",
    status="holds", bound=True,
    params=[
        Param.int("N", 64, 1, 100_000, "depth (Euler step 1/N)", search=(8, 512)),
        Param.int("d", 3, 1, 8, "state dimension", search=(1, 5)),
        Param.seed("seed of the field and x0"),
        Param.choice("family", "smooth", FAMILIES,
                     "smooth: tanh(W(s)x+b(s)), trig/poly W(s); affine: phi=as+b (tightness, l.805); "
                     "steps: f(x,theta_n)=n v, residual interpolation (C2.6a); alternating: theta_n=(-1)^n, "
                     "f=theta^2 v, weight interpolation (C2.6b)"),
    ],
    notes="C_N is the (ess-)sup of ||xdd|| along the exact trajectory (E19: the interpolations of l.799 are only "
          "Lipschitz in s, the proof needs xdd in L^inf only). Smooth family: reference by DOP853 at rtol 1e-12 "
          "(error estimated against rtol 1e-10), C_N from a 4001-point grid plus a Lipschitz correction, L = sup_s "
          "|W(s)|_2 (grid + Lipschitz correction). Exact families in rational arithmetic: error and bound to "
          "~1e-16 relative; affine and steps attain the bound (the 'attained' part), alternating is at 1/3 of it. "
          "Rounding allowance of the smooth family derived from the float Euler recursion: 2 e^L (N u max||x_n|| + "
          "(d+2) u sqrt(d)) + 2 x reference error (6e-11 at N = 64, 4e-10 at N = 1e5 against an error of 6.5e-6); "
          "the former blanket 'N > 20000 -> inconclusive' is gone (audit, issue 21): inconclusive only where the "
          "allowance reaches half the bound.  Exact families above N = 4096 run in float64 with their own rounding "
          "model (formerly rejected: 7 of 20 sweep draws).",
    catalogue="sander_part1 §2.1 C2.3, C2.4, C2.5, C2.6; §3.1 D1-D3; §3.2 R1; §4 E19",
    covers=("C2.1", "C2.3", "C2.4", "C2.5", "D1"),
)


def _outcome(p, c, factor=2.0, drop_ds=False, label="Prop 2.2"):
    C = c["C_N_without_ds"] if drop_ds else c["C_N"]
    bound = _bound(c["L"], C, p.N, factor)
    vals = {"error": c["error"], "bound": bound, "L": c["L"], "C_N": c["C_N"], "ratio": c["error"] / bound if bound else math.inf,
            "N_times_error": p.N * c["error"], "allowance": c["allowance"], "reference_error": c["ref_err"],
            "family": p.family, "tightness": c["error"] / bound if bound else math.inf}
    parts = {"error<=bound": (max(c["error"] - bound, 0.0), c["allowance"])}
    if p.family in ("affine", "steps") and factor == 2.0 and not drop_ds:
        parts["attained"] = (abs(c["error"] - bound), c["allowance"])
    return Outcome.from_parts(parts, f"{label}: max_n ||x_n - x(n/N)|| = {c['error']:.6e} vs bound {bound:.6e} "
                                     f"({p.family}, N={p.N})", vals)


@claim.numeric(backends=("numpy", "numba"))
def numeric(p):
    """max_n ||x_n - x(n/N)|| against (e^L-1) C_N/(2NL); the affine and steps families must attain it."""
    c = _case(p)
    bound = _bound(c["L"], c["C_N"], p.N)
    if c["allowance"] >= 0.5 * bound:
        # the comparison error <= bound cannot be resolved when rounding and reference error are the bound's size
        return inconclusive(f"rounding/reference allowance {c['allowance']:.3e} is >= half the bound {bound:.3e}: "
                            "the floating-point Euler recursion cannot resolve error <= bound here")
    return _outcome(p, c)


claim.property(over=("N", "d", "seed"), fixed={"family": "smooth"}, max_examples=15)


#: the bound's coefficient of C_N as printed, (e^L - 1)/(2NL), and misprints (mutants)
ERROR_BOUNDS = {"stated": lambda L, N: (sp.exp(L) - 1) / (2 * N * L),
                "halved_constant": lambda L, N: (sp.exp(L) - 1) / (4 * N * L),
                "N_squared": lambda L, N: (sp.exp(L) - 1) / (2 * N ** 2 * L)}


def _error_bound_symbolic(form):
    """Grönwall: the proof's recursion e_{n+1} <= (1 + L/N) e_n + C/(2N^2) sums to C((1+L/N)^N - 1)/(2NL), and
    (1+L/N)^N <= e^L (h = L - N log(1 + L/N) has h(0) = 0, h' = L/(N+L) >= 0), so the recursion stays under the printed
    coefficient's e^L form; the chain rule xdd = d_s phi + d_x phi[phi]; the affine field phi = a s + b: C_N from that
    chain rule, x(1) - x_N by summation, against the printed coefficient at L -> 0 (the stated tightness
    |x(1) - x_N| = |a|/(2N), equality).  Returns (failures, residuals)."""
    k, n, N, L, s = sp.symbols("k n N L s", positive=True, integer=False)
    kk = sp.Symbol("kk", integer=True, nonnegative=True)
    nn, NN = sp.symbols("nn NN", integer=True, positive=True)
    geo = sp.summation((1 + L / NN) ** kk, (kk, 0, nn - 1))
    r1 = sp.simplify(sp.powsimp(geo - NN / L * ((1 + L / NN) ** nn - 1)))
    h = L - NN * sp.log(1 + L / NN)
    # h(0) = 0 and h' = L/(N+L) >= 0 (sympy decides the sign from L, N > 0): (1+L/N)^N <= e^L
    r0 = sp.Integer(0) if h.subs(L, 0) == 0 and sp.simplify(sp.diff(h, L)).is_nonnegative else sp.Integer(1)
    # chain rule along x(s) for the smooth family's field phi(x, s) = tanh(w(s) x + c(s)), w, c arbitrary
    x = sp.Function("x")(s)
    w, c = sp.Function("w"), sp.Function("c")
    X, S = sp.symbols("X S")

    def phi(X_, S_):
        return sp.tanh(w(S_) * X_ + c(S_))
    xdd = sp.diff(phi(x, s), s).subs(sp.Derivative(x, s), phi(x, s))
    expect = (sp.diff(phi(X, S), S) + sp.diff(phi(X, S), X) * phi(X, S)).subs({X: x, S: s})
    r2 = sp.expand(xdd - expect)
    # affine: x_N = x0 + b + a (N-1)/(2N), x(1) = x0 + b + a/2
    a, b, x0 = sp.symbols("a b x0", positive=True)
    xN = x0 + sp.summation((a * kk / NN + b) / NN, (kk, 0, NN - 1))
    phi_aff = a * s + b
    C_aff = sp.diff(phi_aff, s) + sp.diff(phi_aff, x0) * phi_aff      # C_N = |d_s phi + d_x phi phi| = a
    x1 = x0 + sp.integrate(phi_aff, (s, 0, 1))
    coef0 = sp.limit(ERROR_BOUNDS[form](L, NN), L, 0)                  # L = 0: Lipschitz constant of phi in x
    r3 = sp.simplify(sp.expand((x1 - xN) - coef0 * C_aff))
    rs = (r0, r1, r2, r3)
    return sum(1 for r in rs if r != 0), rs


@claim.symbolic(timeout=30)
def _(p):
    """Grönwall sum and (1+L/N)^N <= e^L, the chain rule xdd = d_s phi + d_x phi[phi], and the affine error a/(2N)
    equal to the printed bound at L = 0 (symbolic N)."""
    bad, (r0, r1, r2, r3) = _error_bound_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.summation / diff / integrate / limit / simplify on small closed forms",
        "proved": ["(1+L/N)^N <= e^L", "sum_{k<n}(1+L/N)^k = N/L((1+L/N)^n - 1)", "xdd = d_s phi + d_x phi phi",
                   "x(1) - x_N = a/(2N) = lim_(L->0) (e^L-1)/(2NL) C_N for phi = a s + b"],
        "residuals": [str(r0), str(r1), str(r2), str(r3)]},
        message="number of identities that did not reduce to 0")


@claim.mutant({"halved_constant": "(e^L - 1)/(4NL) C_N: the affine example's error a/(2N) exceeds it",
               "N_squared": "(e^L - 1)/(2N^2 L) C_N: the affine example's error a/(2N) exceeds it"}, timeout=30)
def _(p, variant):
    """The printed coefficient perturbed, through the same tightness identity: it must not reduce to 0."""
    bad, rs = _error_bound_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"residuals": [str(r) for r in rs]},
                   message=f"x(1) - x_N - bound on phi = a s + b is {rs[-1]} for {variant}")


@claim.falsifier({
    "halved_constant": "The bound with 4NL instead of 2NL: violated by a factor 2 on the tightness example.",
    "C_N_without_ds_phi": {"description": "C_N := ||d_x phi[phi]|| (no d_s phi): 0 for f(x, theta_n) = n v, "
                                          "while the error is |v|/2.",
                           "fixed": {"family": "steps", "N": 50}},
}, fixed={"family": "affine", "N": 37})
def _(p, variant):
    return _outcome(p, _case(p), **{
        "halved_constant": dict(factor=4.0, label="halved constant"),
        "C_N_without_ds_phi": dict(drop_ds=True, label="C_N without d_s phi"),
    }[variant])


def _shrink(p):
    """The wrong variant 'the ResNet converges to its interpolating ODE at rate 1/N whatever the depth
    regularity': gap(4N) <= gap(N)/2 (a rate 1/N gives 1/4)."""
    g1, g4 = _case(p)["gap_final"], _case(p, 4 * p.N)["gap_final"]
    tol = g1 / 2 + 8 * p.d * EPS * max(g1, 1.0)
    # claimed_value: g1/4, what the wrong rate 1/N predicts for gap(4N) (the report's margin is measured from it)
    return Outcome(residual=g4, tolerance=tol, values={"gap_N": g1, "gap_4N": g4, "N": p.N, "family": p.family,
                                                       "claimed_value": g1 / 4 + (tol - g1 / 2)},
                   message=f"gap ||x_N - x(1)||: {g1:.12g} at N={p.N}, {g4:.12g} at N={4 * p.N}")


@claim.falsifier({
    "gap_shrinks_steps": "C2.6(a): f(x, theta_n) = n v with the residual interpolation: gap |v|/2 for every N.",
    "gap_shrinks_alternating": {"description": "C2.6(b): theta_n = (-1)^n, f = theta^2 v, weight interpolation: "
                                               "gap (2/3)|v| for every N.",
                                "fixed": {"family": "alternating", "N": 25}},
}, fixed={"family": "steps", "N": 25})
def _(p, variant):
    return _shrink(p)


@claim.reproduction(name="smooth_rate")
def _(p):
    """Smooth family, N = 8..512: error <= bound at every N and N * error converges (catalogue R1: < 5% for
    N >= 64 between N and 2N); loglog plot of error and bound."""
    p = claim.resolve({"family": "smooth", "d": 4, "seed": 1})
    Ns = [8, 16, 32, 64, 128, 256, 512]
    rows = [_smooth_case(p.replace(N=N)) for N in Ns]
    errs = [r["error"] for r in rows]
    bounds = [_bound(r["L"], r["C_N"], N) for r, N in zip(rows, Ns)]
    Ne = [N * e for N, e in zip(Ns, errs)]
    slope, se = _fit_slope(Ns[3:], errs[3:])
    parts = {"bound_all_N": (max(max(e - b, 0) for e, b in zip(errs, bounds)), max(r["allowance"] for r in rows)),
             "N_err_converges": (max(abs(Ne[i + 1] / Ne[i] - 1) for i in range(3, len(Ns) - 1)), 0.05)}
    return Outcome.from_parts(parts, f"N*error: {[round(v, 4) for v in Ne]}; slope {slope:.3f} +- {se:.3f}", {
        "N": Ns, "error": errs, "bound": bounds, "N_times_error": Ne, "slope": slope, "slope_se": se,
        "ratio": [e / b for e, b in zip(errs, bounds)],
        "catalogue": "C2.4(b): ratio 0.047, N*err -> 3.1306 for the catalogue's own (unrecorded) draw",
        "plot": {"kind": "loglog", "x": [float(n) for n in Ns], "series": {"max_n ||x_n - x(n/N)||": errs,
                 "bound (e^L-1)C_N/(2NL)": bounds}, "xlabel": "depth N", "ylabel": "error",
                 "title": "Prop 2.2, smooth tanh field: error and bound, both O(1/N)"}})


@claim.reproduction(name="exact_numbers")
def _(p):
    """D1-D3 in exact arithmetic: tightness ratio 1 (N = 1, 2, 7, 50, 300), gaps 1/2 (N = 3, 10, 100, 1000) and
    2/3 (N = 2, 5, 50, 500) for d = 1, v = 1 (thesis l.805-807)."""
    out = {}
    for fam, Ns, want in (("affine", (1, 2, 7, 50, 300), None), ("steps", (3, 10, 100, 1000), Fraction(1, 2)),
                          ("alternating", (2, 5, 50, 500), Fraction(2, 3))):
        for N in Ns:
            x = Fraction(0)
            for n in range(N):
                x += {"affine": Fraction(n, N) * 1 + 1, "steps": Fraction(n), "alternating": Fraction(1)}[fam] / N
            X1 = {"affine": Fraction(3, 2), "steps": Fraction(N, 2), "alternating": Fraction(1, 3)}[fam]
            gap = abs(X1 - x)
            target = Fraction(1, 2 * N) if fam == "affine" else want
            out[f"{fam}_N{N}"] = gap - target
    bad = sum(1 for v in out.values() if v != 0)
    return Outcome(residual=bad, tolerance=0, values={"differences": {k: str(v) for k, v in out.items()},
                                                      "quoted": "error = |a|/(2N); gaps 1/2 and 2/3 for every N"},
                   message="exact rational gaps minus quoted values (count of nonzero)")


# Bound driven to equality: the affine field phi = as + b attains it (l.805), the random smooth fields reach ~0.04
claim.tightness(over=("N", "d", "seed", "family"), max_examples=30,
                witnesses=[{"family": "affine", "N": 7, "d": 2}, {"family": "steps", "N": 10}])


# ===========================================================================
# C2.3 / E19: Definition 2.1 asks for smoothness the examples do not have
interp = Claim(
    id="sander.smooth_interpolation_definition",
    title="Def 2.1: the residual and weight interpolations are only Lipschitz in s; Prop 2.2 holds with an ess-sup",
    label="Def 2.1, Prop 2.2",
    section="2.3.1",
    lines=(797, 803),
    statement=r"\varphi_\Theta\text{ smooth},\ \varphi_\Theta(\cdot,\tfrac nN)=f(\cdot,\theta_n^N);\ \text{Prop 2.2 assumes }\varphi_\Theta\in C^1",
    corrected=r"\varphi_\Theta\text{ Lipschitz in }s\text{ (piecewise }C^1),\ C_N=\operatorname{ess\,sup}_{s}\|\partial_s\varphi_\Theta+\partial_x\varphi_\Theta[\varphi_\Theta]\|"
              r"\text{ along the trajectory}",
    status="gap",
    params=[],
    notes="The interpolations offered at l.799 are piecewise linear in s (in f or in theta), hence not C^1 at s = n/N; "
          "the proof of Prop 2.2 (l.960-986) only needs xdd in L^inf (Taylor with integral remainder), so the bound "
          "holds with the ess-sup. Checked in sander.euler_error_bound, families 'steps' (bound attained) and "
          "'alternating' (weight interpolation, 1/3 of the bound), and in sander.linear_euler_lemma_2_13 (same "
          "remark for psi_sigma, only Lipschitz in s). No separate numeric check here.",
    catalogue="sander_part1 §2.1 C2.3; §4 E19",
    covers=("C2.3", "E19"),
)
