"""Chapter 3, App 3.C "Some technical lemmas", Lemmas 3.19-3.22 (seed l.2632-2692): the cited Lemmas
3.19/3.20 (Picard-Lindelof, Caratheodory) through the growth bound they give (T3.6, l.2636-2662;
``sander.cited_ode_lemmas``), Lemma 3.21 on singular values (l.2664-2674; ``sander.singular_value_lemma``) and
Lemma 3.22 (Moore-Osgood, with Thm 3.7's discussion l.1755): the order of t -> oo and L -> oo does not matter
under uniform convergence (P3.4, l.2676-2692; ``sander.limit_order``).

Catalogue sander_part1 §2.7 (P3.4), §2.8 (T3.6, T3.7).  Conventions: see :mod:`theorems.sander._resnet_harness`.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive


EPS = float(np.finfo(float).eps)


frob = Claim(
    id="sander.singular_value_lemma",
    title="s_min(A + A') >= s_min(A) - |A'|_F, |AB|_F >= s_min(A)|B|_F (m >= r), |AB|_F >= |A|_F s_min(B) (n >= r)",
    label="Lemma 3.21",
    section="3.C",
    equation="",
    lines=(2664, 2674),
    statement=r"s_{\min}(A+A')\ge s_{\min}(A)-\|A'\|_F;\ A\in\mathbb R^{m\times r},m\ge r:\ \|AB\|_F\ge s_{\min}(A)\|B\|_F;"
              r"\ B\in\mathbb R^{r\times n},n\ge r:\ \|AB\|_F\ge\|A\|_Fs_{\min}(B)",
    status="holds",
    bound=True,
    params=[Param.int("m", 5, 1, 30, "rows of A", search=(1, 8)), Param.int("r", 3, 1, 30, "inner dimension", search=(1, 8)),
            Param.int("n", 4, 1, 30, "columns of B", search=(1, 8)),
            Param.seed("seed", search=(0, 100_000))],
    notes="Random Gaussian draws with random scales; s_min is the min(rows, cols)-th singular value.  Error model: "
          "SVD backward error 8 max(m,n,r) eps |M|_2 per singular value.  Proof typos: missing square s_min(A)^2|B|_F^2; "
          "s_max(A') = |A|_2 should be |A'|_2.  Falsifier: dropping m >= r (A wide, B in its null space).",
    catalogue="sander_part1 §2.8 T3.7",
    covers=("T3.7",),
)


def _xsmin(xp, M):
    """Smallest of the min(m, n) singular values (array API)."""
    return float(xp.min(xp.linalg.svdvals(M)))


@frob.numeric(backends=("numpy", "cupy"))
def _(p):
    """The three inequalities on a random instance (those whose shape hypothesis holds); array API (NumPy,
    array-api-strict, CuPy): the instance is drawn on the host, singular values and norms on xp."""
    rng = np.random.default_rng(p.seed)
    sc = np.exp(rng.uniform(-2, 2, 3))
    A = sc[0] * rng.standard_normal((p.m, p.r))
    Ap = sc[1] * rng.standard_normal((p.m, p.r))
    B = sc[2] * rng.standard_normal((p.r, p.n))
    xp = xp_of(p)
    A, Ap, B = on(xp, A, Ap, B)
    fro = lambda M: float(xp.linalg.matrix_norm(M))
    op = lambda M: float(xp.max(xp.linalg.svdvals(M)))
    smin = lambda M: _xsmin(xp, M)
    tol = lambda *Ms: 8 * max(p.m, p.n, p.r) * EPS * sum(op(M) * (op(N) if N is not None else 1) for M, N in Ms)
    parts = {"perturbation": (max(0.0, smin(A) - fro(Ap) - smin(A + Ap)), tol((A, None), (Ap, None)))}
    if p.m >= p.r:
        parts["left"] = (max(0.0, smin(A) * fro(B) - fro(A @ B)), tol((A, B)) * math.sqrt(p.n))
    if p.n >= p.r:
        parts["right"] = (max(0.0, fro(A) * smin(B) - fro(A @ B)), tol((A, B)) * math.sqrt(p.m))
    # tightness: the tightest of the three, each (lower side) / (upper side); a lower side <= 0 says nothing (0)
    sides = {"perturbation": (smin(A) - fro(Ap), smin(A + Ap))}
    if p.m >= p.r:
        sides["left"] = (smin(A) * fro(B), fro(A @ B))
    if p.n >= p.r:
        sides["right"] = (fro(A) * smin(B), fro(A @ B))
    ratios = [float(lo / hi) if lo > 0 and hi > 0 else 0.0 for lo, hi in sides.values()]
    return Outcome.from_parts(parts, "violations of Lemma 3.21", {"checked": list(parts), "tightness": max(ratios)})


frob.property(over=("m", "r", "n", "seed"), max_examples=20)


@frob.falsifier("drop_m_ge_r", fixed={"m": 2, "r": 3, "n": 1}, backends=("numpy", "cupy"))
def _(p):
    """m < r: A in R^{2x3}, B a null vector of A: |AB|_F ~ 1e-17 while s_min(A)|B|_F ~ 0.8 (s_min = smallest nonzero)."""
    rng = np.random.default_rng(p.seed)
    xp = xp_of(p)
    A = on(xp, rng.standard_normal((p.m, p.r)))
    Vh = xp.linalg.svd(A, full_matrices=True)[2]
    B = xp.expand_dims(Vh[-1, :], axis=1) * xp.ones((1, p.n), dtype=xp.float64)
    lhs, rhs = float(xp.linalg.matrix_norm(A @ B)), _xsmin(xp, A) * float(xp.linalg.matrix_norm(B))
    return Outcome(residual=max(0.0, rhs - lhs), tolerance=8 * p.r * EPS * float(xp.max(xp.linalg.svdvals(A))) * math.sqrt(p.n),
                   values={"norm_AB": lhs, "smin_A_times_norm_B": rhs}, message="s_min(A)|B|_F - |AB|_F")


frob.tightness(over=("m", "r", "n", "seed"), max_examples=30)


# ===========================================================================
# T3.6: cited Lemmas 3.19 / 3.20
ode = Claim(
    id="sander.cited_ode_lemmas",
    title="Lemmas 3.19 (Picard-Lindelof) and 3.20 (Caratheodory): a field uniformly C-Lipschitz in U with g(0, r) = 0 gives a unique global solution with ||U(t)|| <= ||U(0)|| e^{Ct}",
    label="Lemmas 3.19, 3.20",
    section="3.C",
    equation="",
    lines=(2636, 2662),
    statement=r"g(\cdot,r)\text{ uniformly }C\text{-Lipschitz (a.a. }r),\ g(0,r)\equiv0\Rightarrow U(s)=U_0+\int_0^sg(U(r),r)dr"
              r"\text{ has a unique global (Caratheodory) solution},\ \|U(s)\|\le\|U_0\|e^{Cs}",
    status="heuristic",
    params=[Param.int("dim", 4, 1, 32, "dimension of U"),
            Param.float("C", 1.0, 0.0, 10.0, "growth constant", low_open=True),
            Param.float("T", 3.0, 0.0, 20.0, "horizon", low_open=True),
            Param.int("pieces", 7, 1, 100, "number of pieces of the (discontinuous in time) field"),
            Param.float("u0", 1.0, 1e-12, 100.0, "norm of U(0) (random direction)"
                    " (>= 1e-12: below, ||U|| underflows in the ratio test)"),
            Param.seed("seed")],
    notes="Cited textbook results (registered as heuristic: nothing of the thesis to refute).  Checked consequence "
          "used by Prop 3.8/3.9: for g(U, r) = C tanh(A(r) U) with ||A(r)||_2 <= 1 piecewise constant in r (a "
          "Caratheodory field, discontinuous in time; C-Lipschitz in U with g(0, r) = 0, Lemma 3.20's hypotheses), the solution exists on [0, T] and obeys the Gronwall bound "
          "||U(t)|| <= ||U(0)|| e^{Ct} (DOP853 per piece, rtol 1e-11: tolerance 1e-8 relative).  Falsifier: the "
          "superlinear g = C U^2 (catalogue E7's example) violates the growth hypothesis and leaves the bound (blow-up at "
          "t = 1/(C U0)).  Read-through (issue 21): the statement used to read '||g(U, r)|| <= C||U|| => unique global solution', "
          "which drops the Lipschitz hypothesis of Lemma 3.20 (l.2646-2650; linear growth alone gives no uniqueness: "
          "g(U) = sqrt|U - 1| near U = 1); it now states the lemma's hypotheses and the Gronwall bound of its proof (l.2658).",
    catalogue="sander_part1 §2.8 T3.6",
    covers=("T3.6",),
)


def _gronwall(p, g):
    rng = np.random.default_rng(p.seed)
    U0 = rng.standard_normal(p.dim)
    U0 *= p.u0 / np.linalg.norm(U0)
    ts = np.linspace(0, p.T, p.pieces + 1)
    worst, U = -np.inf, U0
    for i in range(p.pieces):
        A = rng.standard_normal((p.dim, p.dim))
        A /= np.linalg.norm(A, 2)
        # atol scaled to ||U0||: ||U(t)|| >= ||U0|| e^{-Ct} > 0, and a fixed atol = 1e-14 let the error control
        # ignore U at u0 = 2.9e-10 (relative error 1.8e-5 > the 1e-8 tolerance: sweep 4100433 refuted the bound)
        sol = solve_ivp(lambda t, y: g(y, A), (ts[i], ts[i + 1]), U, method="DOP853", rtol=1e-11,
                        atol=1e-14 * p.u0 * np.exp(-p.C * p.T), dense_output=True)
        tt = np.linspace(ts[i], ts[i + 1], 50)
        Y = sol.sol(tt) if sol.status == 0 else np.full((p.dim, 50), np.inf)
        rel = np.linalg.norm(Y, axis=0) / (np.linalg.norm(U0) * np.exp(p.C * tt)) - 1
        worst = max(worst, float(np.max(np.nan_to_num(rel, nan=np.inf))))
        if sol.status != 0:
            break
        U = sol.y[:, -1]
    return Outcome(residual=worst, tolerance=1e-8, values={"max_rel_excess": worst},
                   message="max_t ||U(t)|| / (||U0|| e^{Ct}) - 1")


@ode.numeric
def _(p):
    """Gronwall bound along a piecewise-constant-in-time field C tanh(A(t) U)."""
    return _gronwall(p, lambda y, A: p.C * np.tanh(A @ y))


@ode.falsifier("superlinear_growth", fixed={"dim": 1, "T": 3.0, "u0": 2.0})
def _(p):
    """g = C |U| U (no linear growth bound), |U0| = 2: U0 e^{Ct} is exceeded, then blow-up at t = 1/2."""
    return _gronwall(p, lambda y, A: p.C * np.abs(y) * y)


# ===========================================================================
# P3.4: Lemma 3.22, order of the limits t -> oo, L -> oo
mo = Claim(
    id="sander.limit_order",
    title="Lemma 3.22 (Moore-Osgood): under uniform convergence in t and in L the limits t -> oo and L -> oo commute",
    label="Lemma 3.22; Thm 3.7 discussion (l.1755)",
    section="3.4.2, 3.C",
    equation="",
    lines=(2676, 2692),
    statement=r"e_{L,t}\to e_{\infty,t}\text{ unif. in }t,\ e_{L,t}\to e_{L,\infty}\text{ unif. in }L\Rightarrow"
              r"\lim_Le_{L,\infty}=\lim_te_{\infty,t}=\lim_{L,t}e_{L,t}",
    status="holds",
    params=[Param.float("C", 2.0, 1.0, 4.0, "target y = C x (x = 1)", low_open=True, search=(1.1, 3.0)),
            Param.float("T", 12.0, 1.0, 50.0, "time horizon (the t -> oo proxy)"),
            Param.int("L_min", 8, 8, 64, "smallest depth of the ladder"),
            Param.int("L_max", 256, 256, 2048, "largest depth of the ladder")],
    validate=lambda p: (_ for _ in ()).throw(ParamError(
        f"parameters L_min={p.L_min}, L_max={p.L_max}: need L_max >= 4 L_min")) if p.L_max < 4 * p.L_min else None,
    notes="Proof verified as correct by the catalogue (P3.4).  Instance: the scalar linear ResNet of depth L with "
          "weight-tied w (App. 3.D's setting with identity activation), output e_{L,t} = (1 + w_L(t)/L)^L under the "
          "depth-scaled flow w' = -2(Pi - C)(1 + w/L)^{L-1}; L = oo: w' = -2(e^w - C)e^w.  Checked: (i) uniform in t "
          "convergence in L (log-log slope of sup_t |e_{L,t} - e_{oo,t}| <= -1 + 0.15, module rate model); "
          "(ii) uniform in L convergence in t: max_L |e_{L,T} - C| <= 1e-7 (linearised rate 2C^2 per unit time); "
          "(iii) the iterated limits agree: |e_{oo,T} - e_{L_max,T}| <= 1e-7.  DOP853 at rtol 1e-12.  Ranges narrowed by the audit (issue 21): L_min >= 8 (L_min = 2 gave a pre-asymptotic slope, refuted) and L_max >= 256 >= 4 L_min (7 of 20 sweep draws were rejected for L_max < 4 L_min).  Falsifier "
          "'unscaled_flow' (session 9, issue 21; it replaces the textbook family t/(t+L), which did not run the model): "
          "the same scalar ResNet trained without (3.4)'s depth factor, e_{L,t} = e^scaled_{L,t/L}: convergence in t "
          "and in L both lose their uniformity, lim_L lim_t = C but lim_t lim_L = 1.",
    catalogue="sander_part1 §2.7 P3.4, P3.6",
    covers=("P3.4",),
)


def _mo_path(C, L, ts):
    if L is None:
        rhs = lambda t, w: -2 * (np.exp(w) - C) * np.exp(w)
        out = lambda w: np.exp(w)
    else:
        rhs = lambda t, w: -2 * ((1 + w / L) ** L - C) * (1 + w / L) ** (L - 1)
        out = lambda w: (1 + w / L) ** L
    sol = solve_ivp(rhs, (0, ts[-1]), [0.0], method="DOP853", rtol=1e-12, atol=1e-14, t_eval=ts)
    return out(sol.y[0])


@mo.numeric
def _(p):
    """Uniform convergence in L (rate 1/L), in t (to C), and equal iterated limits."""
    # T is the t -> oo proxy: at the linearised rate 2 C^2 the distance to C left at T is ~ |C - 1| e^{-2 C^2 T}
    left = abs(p.C - 1) * math.exp(-2 * p.C ** 2 * p.T)
    if left > 1e-8:
        return inconclusive(f"T={p.T!r} is too short a proxy for t -> oo at C={p.C!r}: about {left:.2g} of the "
                            f"distance to C is left at T (the check needs 1e-7)", left_at_T=left)
    ts = np.linspace(0, p.T, 400)
    inf = _mo_path(p.C, None, ts)
    Ls, errs, ends = [], [], []
    L = p.L_min
    while L <= p.L_max:
        e = _mo_path(p.C, L, ts)
        Ls.append(L); errs.append(float(np.max(np.abs(e - inf)))); ends.append(float(e[-1]))
        L *= 2
    if max(errs) < 1e4 * EPS * p.C:
        return inconclusive(f"C={p.C!r}: the paths barely leave e = 1, so sup_t |e_L - e_oo| ({max(errs):.2g}) is "
                            f"rounding and has no slope in L", sup_t_err=errs)
    sl = np.diff(np.log(errs)) / np.diff(np.log(Ls))
    parts = {"uniform in t (slope <= -0.85)": (max(0.0, float(np.max(sl)) + 1), 0.15),
             "uniform in L (|e_{L,T} - C|)": (max(abs(x - p.C) for x in ends), 1e-7),
             "iterated limits agree": (abs(inf[-1] - ends[-1]), 1e-7)}
    return Outcome.from_parts(parts, "Moore-Osgood on the scalar ResNet", {
        "L": Ls, "sup_t_err": errs, "slopes": sl.tolist(), "e_oo_T": float(inf[-1]),
        "plot": {"kind": "loglog", "x": Ls, "series": {"sup_t |e_L - e_oo|": errs}, "xlabel": "L",
                 "ylabel": "sup_t error", "title": "uniform-in-t convergence in L"}})


mo.property(over=("C",), max_examples=5)


@mo.falsifier("unscaled_flow")
def _(p):
    """Both uniformities dropped on the same scalar ResNet: trained by the per-layer gradient flow WITHOUT the depth
    factor of (3.4) (w_k' = -d loss/d w_k, each layer's gradient 1/L of the scaled one), whose path is the scaled one
    at time t/L.  For each L it still converges in t to C, and for each t it converges in L to e_{oo,t} = 1 (no
    training), but neither uniformly, and the iterated limits differ: lim_L lim_t = C, lim_t lim_L = 1."""
    L_big = 1e6 * p.L_max
    # lim_t first: depth L_max trained to GF time L_max T (scaled time T, where the numeric check found e = C to 1e-7)
    e_L_inf = float(_mo_path(p.C, p.L_max, np.array([0.0, p.T]))[-1])
    # lim_L first: depth 1e6 L_max at time T (scaled time T/L_big, e within ~2C(C-1) T/L_big of 1)
    e_inf_t = float(_mo_path(p.C, L_big, np.array([0.0, p.T / L_big]))[-1])
    # uniformity in t lost: sup_t |e_{L,t} - e_{oo,t}| = sup_t |e_L(t/L) - 1| at L = L_min and L_max (does not shrink)
    ts = np.linspace(0, p.T, 200)
    sup_err = [float(np.max(np.abs(_mo_path(p.C, L, ts) - 1.0))) for L in (p.L_min, p.L_max)]
    return Outcome(residual=abs(e_L_inf - e_inf_t), tolerance=1e-7,
                   values={"lim_L_lim_t": e_L_inf, "lim_t_lim_L": e_inf_t, "sup_t_err_L_min_L_max": sup_err},
                   message="|difference of the iterated limits| (unscaled per-layer gradient flow)")
