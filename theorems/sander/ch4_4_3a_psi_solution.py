r"""§4.4.3 Universality of Momentum ResNets with linear residual functions (seed l.3000-3030), with the
proof of App. 4.A.2 (l.3184-3199): the solution Psi_eps of the linear model (4.7) (Prop 4.3) and its
first-order limit eps -> 0 (l.3014).  Claims: ``sander.psi_linear_solution`` (l.3002-3012),
``sander.psi_first_order_limit`` (l.3014).

Conventions (kappa = 1/(2 eps), f_eps, G_eps as printed in the main text l.3025, not the Lemma 4.6 print
of erratum E4.1): :mod:`solvers.psi_eps` and ``ch4_4_3c_psi_threshold``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import sympy as sp

from solvers import psi_eps as pe
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems import matrices as M

EPS = float(np.finfo(float).eps)       # 2.2e-16
U = EPS / 2                            # unit roundoff


# ===========================================================================
# 2. Prop 4.3: solution of the linear model (4.7)
def _theta(p):
    if p.get("theta") is not None:
        return np.array(p.theta, dtype=float)
    rng = np.random.default_rng(p.seed)
    return p.scale * rng.standard_normal((p.d, p.d))


def _validate_theta(p):
    th = p.get("theta")
    if th is not None and th.shape[0] != th.shape[1]:
        raise ParamError(f"parameter theta must be a square matrix, got shape {th.shape}")


claim_sol = Claim(
    id="sander.psi_linear_solution",
    title="Solution of the linear second-order model (4.7): x(1) = Psi_eps(theta) x0",
    label="Prop 4.3",
    section="4.4.3, 4.A.2",
    equation="(4.7)",
    lines=(3002, 3012),
    statement=r"\varepsilon\ddot x+\dot x=\theta x,\ (x,\dot x)(0)=(x_0,0)\Rightarrow x(1)=\Psi_\varepsilon(\theta)x_0,\ "
              r"\Psi_\varepsilon(\theta)=e^{-\frac1{2\varepsilon}}\sum_{n\ge0}\Big(\frac1{(2n)!}+\frac1{2\varepsilon(2n+1)!}\Big)"
              r"\Big(\frac\theta\varepsilon+\frac{I}{4\varepsilon^2}\Big)^n",
    status="holds",
    params=[
        Param.float("eps", 0.3, 1e-12, 1000.0, "eps > 0 (0.5 hides the 1/(2eps) falsifier)"
                    " (>= 1e-12: below, the SVD of the linearised system does not converge)",
                    search=(0.05, 10.0)),
        Param.int("d", 3, 1, 8, "size of theta", search=(1, 5)),
        Param.seed("seed of theta"),
        Param.float("scale", 1.0, 0.0, 10.0, "theta has i.i.d. N(0, scale^2) entries", low_open=True, search=(0.1, 3.0)),
        Param.matrix("theta", None, "your own real square theta (overrides d, seed, scale)", shape=("d", "d"),
                     families=M.DEFAULT_FAMILIES + ("spd",), bound=5.0),
    ],
    validate=_validate_theta,
    notes="psi_eps = top-left block of expm of the first-order system (the proof's own formula, l.3192), "
          "against three references: the printed series (Horner, when sqrt||Z|| <= 25), DOP853 on the ODE "
          "(eps >= 0.02; rtol 1e-12) and the eigen-decomposition with f_eps (when cond(V) <= 1e6).",
    catalogue="sander_part23 §2.1 P4.3",
)


def _series_bound(th, eps):
    """f_eps(||Z||_2) >= e^{-kappa} sum |a_n| ||Z||^n: bounds the size of the series' terms."""
    Z = th / eps + np.eye(th.shape[0]) / (4 * eps * eps)
    return float(pe.f_eps(float(np.linalg.norm(Z, 2)), eps)), Z


def _solution_outcome(p, series_fn=None, label="printed series"):
    eps = p.eps
    th = _theta(p)
    d = th.shape[0]
    P = pe.psi_eps(th, eps)
    nP = max(float(np.linalg.norm(P, 2)), 1e-300)
    normM = 1 + max(float(np.linalg.norm(th, 1)), 1.0) / eps
    tol_expm = 32 * U * normM * max(nP, 1e-300) * d
    parts, vals = {}, {"norm_psi": nP, "theta": th.tolist()}
    bound, Z = _series_bound(th, eps)
    nZ = float(np.linalg.norm(Z, 2))
    if math.sqrt(nZ) <= 25 or series_fn is not None:
        S = (series_fn or pe.psi_eps_series)(th, eps)
        # Horner with 80 terms: rounding ~ 80 u * (sum |a_n| ||Z||^n) <= 80 u f_eps(||Z||); truncation
        # a_80 ||Z||^80 e^{-kappa} < 1e-40 for ||Z|| <= 625
        parts[label] = (float(np.linalg.norm(S - P, 2)), 80 * U * d * bound + tol_expm)
        vals["series_bound_f(|Z|)"] = bound
    else:
        vals["series"] = "skipped: ||Z|| > 625, the printed series needs > 80 terms"
    if series_fn is None:
        if eps >= 0.02 and normM < 1e3:
            from scipy.integrate import solve_ivp

            def rhs(t, y):
                X = y[:d * d].reshape(d, d)
                V = y[d * d:].reshape(d, d)
                return np.concatenate([V.ravel(), ((th @ X - V) / eps).ravel()])
            y0 = np.concatenate([np.eye(d).ravel(), np.zeros(d * d)])
            sol = solve_ivp(rhs, (0, 1), y0, method="DOP853", rtol=1e-12, atol=1e-14 * nP)
            Xo = sol.y[:d * d, -1].reshape(d, d)
            # DOP853 global error: local tol 1e-12 per step, amplified by the flow's growth over [0,1]
            # (bounded by e^{||M||}) and summed over the steps: 1e-12 * nsteps * max(1, ||Psi||)
            nsteps = max(1, sol.t.size)
            parts["dop853"] = (float(np.linalg.norm(Xo - P, 2)), 1e-12 * nsteps * max(1.0, nP) + tol_expm)
            vals["dop853_steps"] = nsteps
        w, V = np.linalg.eig(th)
        cV = float(np.linalg.cond(V))
        # the reference assumes a backward-stable eig, ||theta V - V diag(w)|| <= c n eps ||theta|| ||V||;
        # checked a posteriori: LAPACK's balanced geev breaks it on badly scaled input (a row ~1e-200
        # of a rank-deficient theta gave residual 0.45), and then the reference is not used
        eig_res = float(np.linalg.norm(th @ V - V * w, 2))
        eig_ok = eig_res <= 64 * d * U * max(float(np.linalg.norm(th, 2)), 1e-300) * float(np.linalg.norm(V, 2))
        if not eig_ok:
            vals["eig_reference_skipped"] = f"eig backward error {eig_res:.3g} exceeds its model"
        if cV <= 1e6 and eig_ok:
            E = np.real((V * pe.psi_scalar(w.astype(complex), eps)) @ np.linalg.inv(V))
            mf = float(np.max(np.abs(pe.psi_scalar(w.astype(complex), eps))))
            parts["eig_f_eps"] = (float(np.linalg.norm(E - P, 2)),
                                  64 * U * cV * d * (mf + 1e-300) * (1 + 0.5 / eps + nZ ** 0.5) + tol_expm)
            vals["cond_V"] = cV
    return Outcome.from_parts(parts, f"Psi_eps(theta) (expm of the first-order system) vs references, eps={eps:g}", vals)


@claim_sol.numeric
def sol_numeric(p):
    """psi_eps (expm) agrees with the printed series, DOP853 on the ODE and V f(Lambda) V^{-1}."""
    return _solution_outcome(p)


claim_sol.property(over=("eps", "d", "theta"), max_examples=10)


#: (kappa in the odd coefficients, sign of I/(4 eps^2) in Z = theta/eps + I/(4 eps^2)) of the printed series, and
#: misprints (mutants)
SOL_FORMS = {"stated": (lambda e: 1 / (2 * e), 1), "kappa_dropped": (lambda e: 1, 1), "Z_sign_flipped": (lambda e: 1 / (2 * e), -1)}


def _sol_symbolic(form):
    kf, zsign = SOL_FORMS[form]
    t, e, s = sp.symbols("t epsilon s", positive=True)
    theta = e * s**2 - zsign / (4 * e)          # s^2 = z, Z = theta/eps + zsign I/(4 eps^2) as printed
    x = sp.exp(-t / (2 * e)) * (sp.cosh(s * t) + sp.sinh(s * t) / (2 * e * s))
    res = (e * sp.diff(x, t, 2) + sp.diff(x, t) - theta * x).rewrite(sp.exp)
    r1 = sp.simplify(sp.expand(sp.powsimp(sp.expand(res * sp.exp(t / (2 * e))))))
    ic0 = sp.simplify(x.subs(t, 0) - 1)
    ic1 = sp.simplify(sp.diff(x, t).subs(t, 0))
    # coefficients: x(1) e^{kappa} = sum z^n (1/(2n)! + kappa/(2n+1)!), z = s^2, kappa = 1/(2 eps)
    k = 1 / (2 * e)
    ser = sp.series(sp.cosh(s) + k * sp.sinh(s) / s, s, 0, 24).removeO()
    target = sum((1 / sp.factorial(2 * n) + kf(e) / sp.factorial(2 * n + 1)) * s**(2 * n) for n in range(12))
    bad = sum(1 for c in sp.Poly(sp.expand(ser - target), s).coeffs() if sp.simplify(c) != 0)
    # dsolve confirms the closed form is THE solution (uniqueness for the linear IVP)
    y = sp.Function("y")
    th = sp.Symbol("theta", real=True)
    sol = sp.dsolve(e * y(t).diff(t, 2) + y(t).diff(t) - th * y(t), y(t), ics={y(0): 1, y(t).diff(t).subs(t, 0): 0})
    chk = (sol.rhs - x.subs(s, sp.sqrt(th / e + 1 / (4 * e**2)))).subs({e: sp.Rational(3, 10), th: sp.Rational(7, 5), t: 1})
    bad += 0 if abs(sp.N(chk, 30)) < 1e-25 else 1
    return sum(1 for r in (r1, ic0, ic1) if r != 0) + bad


@claim_sol.symbolic(timeout=60)
def sol_symbolic(p):
    """x(t) = e^{-t/(2eps)}(cosh st + sinh(st)/(2 eps s)), theta = eps s^2 - 1/(4 eps), solves (4.7) with
    (1, 0), and its Taylor coefficients in z = s^2 at t = 1 are e^{-kappa}(1/(2n)! + kappa/(2n+1)!)."""
    nz = _sol_symbolic("stated")
    return Outcome(residual=nz, tolerance=0, values={
        "method": "sympy rewrite(exp)+expand+simplify; series coefficients; dsolve at eps=3/10, theta=7/5",
        "instances": ["symbolic eps, s (theta = eps s^2 - 1/(4eps))", "dsolve: eps=3/10, theta=7/5"],
        "proved": "ODE residual 0, x(0)=1, x'(0)=0, coefficients match the printed series"},
        message="nonzero residuals / mismatched coefficients")


@claim_sol.mutant({"kappa_dropped": "the series with 1/(2n+1)! instead of 1/(2 eps (2n+1)!)",
                   "Z_sign_flipped": "Z = theta/eps - I/(4 eps^2): the closed form no longer solves (4.7)"}, timeout=60)
def sol_mutant(p, variant):
    """The printed series perturbed, through the same ODE and coefficient checks: some must fail."""
    nz = _sol_symbolic(variant)
    return Outcome(residual=nz, tolerance=0, values={"failures": nz},
                   message=f"{nz} residuals / coefficients fail for {variant}")


@claim_sol.falsifier("kappa_replaced_by_1", search=("eps", "seed"))
def sol_falsifier(p):
    """The series with 1/(2n+1)! instead of 1/(2eps (2n+1)!): invisible at eps = 1/2 only."""
    def wrong(th, eps, terms=80):
        d = th.shape[0]
        Z = th / eps + np.eye(d) / (4 * eps * eps)
        acc = np.zeros_like(Z)
        for n in range(terms - 1, -1, -1):
            acc = acc @ Z + (1.0 / math.factorial(2 * n) + 1.0 / math.factorial(2 * n + 1)) * np.eye(d)
        return math.exp(-0.5 / eps) * acc
    return _solution_outcome(p, series_fn=wrong, label="series_without_1/(2eps)")


# ===========================================================================
# 3. eps -> 0: Psi_eps(theta) -> exp(theta), error O(eps)
claim_lim = Claim(
    id="sander.psi_first_order_limit",
    title="Psi_eps(theta) -> exp(theta) as eps -> 0, with error O(eps)",
    label="Prop 4.3 remark (l.3014)",
    section="4.4.3",
    equation="(4.8)",
    lines=(3014, 3014),
    statement=r"\Psi_\varepsilon(\theta)\xrightarrow[\varepsilon\to0]{}\Psi_0(\theta)=\exp\theta",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "size of theta", search=(1, 5)),
        Param.seed("seed of theta"),
        Param.float("scale", 1.0, 0.0, 3.0, "theta has i.i.d. N(0, scale^2) entries", low_open=True, search=(0.2, 2.0)),
        Param.float("eps_min", 1e-4, 1e-6, 1e-2, "smallest eps of the decades 1e-1, 1e-2, ..., eps_min"),
    ],
    notes="Derived here (matched asymptotics, not in the thesis): Psi_eps(theta) = e^theta - eps (theta + theta^2) "
          "e^theta + O(eps^2) (outer solution x1' = theta x1 - theta^2 e^{theta t}, initial layer x1(0) = -theta). "
          "The check measures both rates: ||Psi_eps - e^theta|| ~ eps (slope 1) and the remainder after the "
          "first-order term ~ eps^2 (slope 2).  The thesis states the limit without a rate.",
    catalogue="sander_part23 §2.1 P4.3b",
)


def _limit_data(p):
    rng = np.random.default_rng(p.seed)
    th = p.scale * rng.standard_normal((p.d, p.d))
    E = sla.expm(th)
    C = -(th + th @ th) @ E
    n = int(round(-math.log10(p.eps_min)))
    es = [10.0 ** -j for j in range(1, n + 1)]
    e1, e2, fl = [], [], []
    for e in es:
        P = pe.psi_eps(th, e)
        e1.append(float(np.linalg.norm(P - E, 2)))
        e2.append(float(np.linalg.norm(P - E - e * C, 2)))
        # rounding floor of expm of the first-order system: 32 u ||M||_1 ||Psi|| d
        fl.append(32 * U * (1 + max(float(np.linalg.norm(th, 1)), 1.0) / e) * float(np.linalg.norm(P, 2)) * p.d)
    return th, es, e1, e2, fl, float(np.linalg.norm(C, 2))


@claim_lim.numeric
def lim_numeric(p):
    """Measured rates: slope of log||Psi_eps - e^theta|| = 1 and of the remainder after the O(eps) term = 2.

    Error model of a slope between eps and eps/10: the next order changes log(err) by at most
    log(1 + r) where r = (remainder/err) at eps, plus the rounding floor over err; tolerance 2r + 4 floor/err."""
    th, es, e1, e2, fl, nC = _limit_data(p)
    if nC < 1e-8:
        return inconclusive("(theta + theta^2) e^theta = 0: the O(eps) term vanishes (theta = 0 or -I)")
    s1 = math.log10(e1[-2] / e1[-1])
    r = e2[-2] / e1[-2]
    parts = {"rate_1": (abs(s1 - 1), 2 * r + 4 * fl[-1] / e1[-1])}
    # the remainder's slope 2: its own next-order term ~ eps^3 relative eps (ratio ~ eps); floor counted
    s2 = math.log10(e2[-3] / e2[-2]) if len(es) >= 3 else math.log10(e2[-2] / e2[-1])
    j = -3 if len(es) >= 3 else -2
    parts["rate_2_after_first_order_term"] = (abs(s2 - 2), 20 * es[j] * (1 + nC) + 4 * (fl[j] + fl[j + 1]) / e2[j + 1])
    parts["leading_coefficient"] = (abs(e1[-1] / es[-1] - nC), 2 * r * nC + 4 * fl[-1] / es[-1])
    vals = {"eps": es, "err_exp": e1, "err_after_first_order": e2, "slope_1": s1, "slope_2": s2,
            "norm_(theta+theta^2)e^theta": nC,
            "plot": {"kind": "loglog", "x": es, "series": {"||Psi_eps - e^theta||": e1,
                                                           "||Psi_eps - e^theta + eps(theta+theta^2)e^theta||": e2},
                     "xlabel": "eps", "ylabel": "error (2-norm)", "title": "Psi_eps -> exp: rates 1 and 2"}}
    return Outcome.from_parts(parts, "Psi_eps - e^theta = O(eps), remainder O(eps^2)", vals)


claim_lim.property(over=("d", "seed", "scale"), max_examples=10)


@claim_lim.falsifier("rate_eps_squared", search=("seed",))
def lim_falsifier(p):
    """The nearest wrong claim: ||Psi_eps - e^theta|| = O(eps^2) (slope 2): the measured slope is 1."""
    th, es, e1, e2, fl, nC = _limit_data(p)
    s1 = math.log10(e1[-2] / e1[-1])
    r = e2[-2] / e1[-2]
    return Outcome(residual=abs(s1 - 2), tolerance=2 * r + 4 * fl[-1] / e1[-1],
                   values={"slope": s1, "eps": es, "err_exp": e1}, message="slope of log||Psi_eps - e^theta|| vs 2")


@claim_lim.reproduction
def lim_reproduction(p):
    """Catalogue P4.3b: errors 0.591, 0.0633, 0.00638, 0.000638 at eps = 1e-1..1e-4 (random 3x3, seed not
    given): the theta-independent content is the decade ratio -> 1/10 (quoted: 0.1071, 0.1008, 0.1000)."""
    quoted = [0.591, 0.0633, 0.00638, 0.000638]
    qr = [quoted[i + 1] / quoted[i] for i in range(3)]
    p = claim_lim.resolve({"d": 3, "seed": 0})
    _, es, e1, _, _, _ = _limit_data(p)
    mr = [e1[i + 1] / e1[i] for i in range(3)]
    # the ratio's deviation from 1/10 is O(eps) and theta-dependent: compare the last one at 3 digits
    return Outcome.from_parts({"last_decade_ratio": (abs(mr[-1] - qr[-1]), 5e-4)},
                              "decade ratios of ||Psi_eps - e^theta||", {
                                  "measured_errors": e1, "measured_ratios": mr, "eps": es,
                                  "note": "absolute errors depend on the (unspecified) theta; ours: seed 0"})
