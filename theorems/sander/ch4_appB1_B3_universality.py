"""App. 4.B.1-4.B.3 (seed l.3336-3395): convergence of the second-order model as eps -> infinity (Prop
4.8), universality of Momentum ResNets with a free v0 (Prop 4.9) and non-universality with v0 = 0 (Prop
4.10).  Claims: ``sander.eps_to_infinity`` (l.3338-3346), ``sander.free_v0_universality`` (l.3350-3358),
``sander.nonuniversality_v0_zero`` (l.3362-3396).

Conventions (gamma, eps = 1/(1 - gamma), the main-text and appendix second-order models, the tanh MLP
residual function): ``theorems.sander._momentum``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.optimize import brentq

from solvers import momentum as mom
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._momentum import _grid_unresolvable, _ivp

EPS64 = float(np.finfo(np.float64).eps)
EPS = float(np.finfo(float).eps)


# ===========================================================================
# P4.8: eps -> infinity
def _p48_solve(eps_, x0, v0, T, scaling, rtol=1e-11):
    from scipy.integrate import solve_ivp
    f = lambda x: -np.sin(x) - 0.2 * x ** 3  # noqa: E731
    ts = np.linspace(0, T, 301)
    kw = dict(method="DOP853", rtol=rtol, atol=rtol, t_eval=ts)
    if scaling == "appendix":   # x'' + x'/eps = f
        rhs = lambda t, y: [y[1], f(y[0]) - y[1] / eps_]  # noqa: E731
    else:                       # main text: eps x'' + x' = f
        rhs = lambda t, y: [y[1], (f(y[0]) - y[1]) / eps_]  # noqa: E731
    ye = solve_ivp(rhs, (0, T), [x0, v0], **kw).y
    ys = solve_ivp(lambda t, y: [y[1], f(y[0])], (0, T), [x0, v0], **kw).y
    return ye, ys


limit = Claim(
    id="sander.eps_to_infinity",
    title="x'' + x'/eps = f converges uniformly to x'' = f on [0, T] as eps -> infinity",
    label="Prop 4.8",
    section="4.B.1",
    equation="",
    lines=(3338, 3346),
    statement=r"x_\varepsilon:\ \ddot x+\tfrac1\varepsilon\dot x=f,\ x^*:\ \ddot x=f,\ \text{same }(x_0,v_0)"
              r"\ \Rightarrow\ \sup_{[0,T]}|x_\varepsilon-x^*|\to0",
    status="holds",
    params=[
        Param.float("eps", 100.0, 1.0, 1e5, "eps", search=(1.0, 1e4)),
        Param.float("x0", 1.0, -2.0, 2.0, "x(0)", search=(-1.5, 1.5)),
        Param.float("v0", 0.3, -2.0, 2.0, "x'(0)", search=(-1.0, 1.0)),
        Param.float("T", 3.0, 0.0, 5.0, "horizon", low_open=True),
    ],
    notes="f = -sin x - 0.2 x^3 (catalogue P4.8(b)); the appendix scaling x'' + x'/eps = f (decision A6). "
          "Quantitative form: in phase space z = (x, v) the difference solves z' = F(z) + g with "
          "|g| <= sup|v_eps|/eps, F Lipschitz with constant Lam = max(1, sup|f'|) on the reached set, so Gronwall "
          "gives sup|x_eps - x*| <= (V/eps)(e^{Lam T} - 1)/Lam: O(1/eps). Tolerance: that bound plus 10x the "
          "DOP853 error estimate (rtol 1e-9 vs 1e-11). The proposition implicitly assumes x* exists on [0, T].",
    catalogue="sander_part23 §2.1 P4.8",
)


def _p48_outcome(p, scaling):
    if _grid_unresolvable(p.T, 301):
        return _grid_unresolvable(p.T, 301)
    ye, ys = _p48_solve(p.eps, p.x0, p.v0, p.T, scaling)
    ye9, ys9 = _p48_solve(p.eps, p.x0, p.v0, p.T, scaling, rtol=1e-9)
    est = max(float(np.max(np.abs(ye9[0] - ye[0]))), float(np.max(np.abs(ys9[0] - ys[0]))))
    X = max(float(np.max(np.abs(ye[0]))), float(np.max(np.abs(ys[0]))))
    lam = max(1.0, 1.0 + 0.6 * X * X)
    V = float(np.max(np.abs(ye[1])))
    gron = (V / p.eps) * math.expm1(lam * p.T) / lam
    r = float(np.max(np.abs(ye[0] - ys[0])))
    return Outcome(residual=r, tolerance=gron + 10 * est,
                   values={"sup_gap": r, "eps_times_gap": p.eps * r, "gronwall_bound": gron, "integrator_est": est},
                   message="sup |x_eps - x*| vs the Gronwall bound (V/eps)(e^{Lam T}-1)/Lam")


@limit.numeric
def _(p):
    """sup|x_eps - x*| within the O(1/eps) Gronwall bound."""
    return _p48_outcome(p, "appendix")


limit.property(over=("eps", "x0", "v0"), max_examples=10)


@limit.falsifier("main_text_scaling", fixed={"eps": 1000.0})
def _(p):
    """The main-text model eps x'' + x' = f (A6) does not tend to x'' = f as eps -> infinity (it freezes)."""
    return _p48_outcome(p, "main")


@limit.reproduction(name="catalogue_rate")
def _(p):
    """Catalogue P4.8(b): sup gap 0.871, 0.141, 0.0149, 0.00150 at eps = 1, 10, 100, 1000 ((x0, v0) = (1, 0.3), T = 3)."""
    quoted = {1.0: 0.871, 10.0: 0.141, 100.0: 0.0149, 1000.0: 0.00150}
    rows, worst = {}, 0.0
    for e, q in quoted.items():
        ye, ys = _p48_solve(e, 1.0, 0.3, 3.0, "appendix")
        # the catalogue's sup is over its own grid: compare at 3 significant digits (half a unit) plus the grid
        r = float(np.max(np.abs(ye[0] - ys[0])))
        rows[str(e)] = {"computed": r, "quoted": q}
        worst = max(worst, abs(r - q) / q)
    return Outcome(residual=worst, tolerance=0.01, values={"rows": rows},
                   message="max relative gap to the quoted 3-digit values (1%: rounding + sampling grid of the sup)")


# ===========================================================================
# P4.9: free v0
freev0 = Claim(
    id="sander.free_v0_universality",
    title="With a free initial velocity v0 = (h(x0) - x0)/(1 - 1/e), x'' + x' = 0 represents any h",
    label="Prop 4.9",
    section="4.B.2",
    equation="",
    lines=(3350, 3358),
    statement=r"\ddot x+\dot x=0,\ (x(0),\dot x(0))=\Bigl(x_0,\frac{h(x_0)-x_0}{1-1/e}\Bigr)\Rightarrow\varphi_1(x_0)=h(x_0)",
    status="holds",
    params=[
        Param.choice("target", "minus_x", ["minus_x", "cubic", "mlp"], "h(x) = -x, -x^3, or a random tanh MLP"),
        Param.int("d", 2, 1, 8, "dimension"),
        Param.seed("seed of x0 and the MLP"),
    ],
    notes="Numeric: DOP853 at rtol 1e-12 vs 1e-9 (a posteriori error estimate, tolerance 10x it plus 100 eps |h|).",
    catalogue="sander_part23 §2.1 P4.9",
)


def _p49(p, factor):
    from scipy.integrate import solve_ivp
    rng = np.random.default_rng(p.seed)
    x0 = rng.standard_normal(p.d)
    if p.target == "minus_x":
        hx = -x0
    elif p.target == "cubic":
        hx = -x0 ** 3
    else:
        W1, W2, b = mom.random_weights(1, 8, p.d, rng)
        hx = mom.mlp(x0[None, :], W1[0], W2[0], b[0])[0]
    v0 = (hx - x0) * factor
    d = p.d
    rhs = lambda t, z: np.concatenate([z[d:], -z[d:]])  # noqa: E731
    sols = [solve_ivp(rhs, (0, 1), np.concatenate([x0, v0]), method="DOP853", rtol=r, atol=r).y[:d, -1]
            for r in (1e-12, 1e-9)]
    est = float(np.max(np.abs(sols[0] - sols[1])))
    r = float(np.max(np.abs(sols[0] - hx)))
    return Outcome(residual=r, tolerance=10 * est + 100 * EPS64 * max(1.0, float(np.max(np.abs(hx)))),
                   values={"gap": r, "integrator_est": est}, message="|phi_1(x0) - h(x0)|")


@freev0.numeric
def _(p):
    """Integrate x'' + x' = 0 from (x0, v0) and compare phi_1(x0) with h(x0)."""
    return _p49(p, 1 / (1 - math.exp(-1)))


freev0.property(over=("target", "d", "seed"), max_examples=10)


#: the initial speed v0(h, x0) of Prop 4.9 as printed, and misprints (mutants)
FREEV0_FORMS = {"stated": lambda h, x0: (h - x0) / (1 - sp.exp(-1)),
                "one_minus_e": lambda h, x0: (h - x0) / (1 - sp.E),
                "sign_flipped": lambda h, x0: (x0 - h) / (1 - sp.exp(-1))}


def _freev0_failures(form):
    """dsolve x'' + x' = 0 with x(0) = x0, x'(0) = v0 (independent of the proof's formula), then x(1) - h; and the
    proof's phi_t = x0 - v0(e^{-t} - 1) against the dsolve solution.  Returns the residuals that are not 0."""
    t, x0, h = sp.symbols("t x0 h")
    v0 = FREEV0_FORMS[form](h, x0)
    X = sp.Function("X")
    sol = sp.dsolve(X(t).diff(t, 2) + X(t).diff(t), X(t), ics={X(0): x0, X(t).diff(t).subs(t, 0): v0}).rhs
    res = [sp.simplify(sol.subs(t, 1) - h), sp.simplify(sol - (x0 - v0 * (sp.exp(-t) - 1)))]
    return sum(1 for r in res if r != 0)


@freev0.symbolic(timeout=30)
def _(p):
    """sympy: dsolve of x'' + x' = 0, x(0) = x0, x'(0) = (h - x0)/(1 - 1/e) gives x(1) = h, and equals the proof's
    x(t) = x0 - v0(e^{-t} - 1)."""
    bad = _freev0_failures("stated")
    return Outcome(residual=bad, tolerance=0,
                   values={"method": "sympy.dsolve with initial conditions, simplify", "instances": ["scalar, h symbolic"],
                           "proved": "phi_1 = h; the proof's closed form"},
                   message="nonzero residuals")


@freev0.mutant({"one_minus_e": "v0 = (h(x0) - x0)/(1 - e) (exponent sign lost): phi_1 != h",
                "sign_flipped": "v0 = (x0 - h(x0))/(1 - 1/e): phi_1 = 2 x0 - h"}, timeout=30)
def _(p, variant):
    """v0 perturbed, through the same dsolve: phi_1(x0) - h must not simplify to 0."""
    bad = _freev0_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} residuals do not simplify to zero for {variant}")


@freev0.falsifier("without_1_minus_1_over_e")
def _(p):
    """v0 = h(x0) - x0 (the factor 1/(1 - 1/e) dropped): phi_1(x0) != h(x0)."""
    return _p49(p, 1.0)


# ===========================================================================
# 5. Prop 4.10: non-universality with v0 = 0, d = 1, autonomous
def _mlp_scalar(seed, m=6):
    """f(x) = sum a_i tanh(w_i x + b_i) and its primitive F (f = F')."""
    rng = np.random.default_rng(seed)
    a, w, b = 1.5 * rng.standard_normal(m), 1.5 * rng.standard_normal(m), rng.standard_normal(m)
    w = np.where(np.abs(w) < 0.1, 0.1, w)
    f = lambda x: float(np.sum(a * np.tanh(w * x + b)))
    logcosh = lambda u: np.logaddexp(u, -u) - math.log(2)
    F = lambda x: float(np.sum(a * logcosh(w * x + b) / w))
    return f, F, float(np.sum(np.abs(a * w)))


def _second_order_time1(f, x0, v0, eps, rtol):
    """eps x'' + x' = f(x) from (x0, v0) on [0, 1]; also integrates int x'^2."""
    rhs = lambda t, y: [y[1], (f(y[0]) - y[1]) / eps, y[1] ** 2]
    sol = _ivp(rhs, [x0, v0, 0.0], 1.0, rtol, rtol * 1e-2)
    return sol.y[:, -1]


nonuni = Claim(
    id="sander.nonuniversality_v0_zero",
    title="d = 1, v0 = 0, autonomous: h with h(x0) <= -x0 and x0 <= h(-x0) is not representable (nor x -> λx, λ <= -1)",
    label="Prop 4.10",
    section="4.B.3",
    equation="(4.13)",
    lines=(3362, 3396),
    statement=r"\varepsilon\ddot x+\dot x=f(x),\ (x,\dot x)(0)=(x_0,0),\ d=1:\ \nexists x_0>0:\ "
              r"\varphi_1(x_0)\le-x_0\ \wedge\ x_0\le\varphi_1(-x_0)",
    status="holds",
    params=[Param.seed("seed of f(x) = sum_i a_i tanh(w_i x + b_i) (6 units)", search=(0, 100_000)),
            Param.float("eps", 1.0, 0.0, 20.0, "epsilon = 1/(1-gamma)", low_open=True, search=(0.1, 5.0)),
            Param.float("x0", 1.0, 0.0, 10.0, "the point x0 > 0", low_open=True, search=(0.1, 3.0))],
    notes="Checked on random autonomous f: the margin max(phi_1(x0) + x0, x0 - phi_1(-x0)) is > 0, and the proof's "
          "energy identity eps x'(1)^2/2 - F(x(1)) + F(x0) = -int_0^1 x'^2 (F' = f) holds.  Written in the "
          "main-text scaling eps x'' + x' = f (the appendix's x'' + x'/eps = f is f rescaled by 1/eps).  Error model: "
          "a posteriori, |DOP853(rtol) - DOP853(rtol/100)| times 10 plus 1e-12; a margin inside it is inconclusive.  "
          "Falsifiers: v0 free (P4.9) represents x -> -1.2 x; a non-autonomous piecewise-constant theta(t) in "
          "x'' + x' = theta(t) x represents x -> -x (catalogue: 'expected, not checked'; built and checked here).",
    catalogue="sander_part23 §2.1 P4.10, P4.9",
)


def _margin_outcome(phi_p, phi_m, x0, err, extra=None, label=""):
    m = max(phi_p + x0, x0 - phi_m)
    vals = {"phi1_x0": phi_p, "phi1_minus_x0": phi_m, "margin": m, "error_estimate": err}
    vals.update(extra or {})
    if abs(m) <= err:
        return inconclusive(f"{label}margin {m:.2e} within the integration error {err:.1e}", **vals)
    return Outcome(residual=max(0.0, -m), tolerance=err, values=vals,
                   message=f"{label}phi_1(x0) = {phi_p:.6g}, phi_1(-x0) = {phi_m:.6g}: "
                           + ("not both h(x0) <= -x0 and x0 <= h(-x0)" if m > 0 else
                              "h(x0) <= -x0 and x0 <= h(-x0) both hold: the map is represented"))


@nonuni.numeric
def _(p):
    """Integrate from (+-x0, 0): the Prop 4.10 pattern does not occur, and the energy identity holds."""
    f, F, _ = _mlp_scalar(p.seed)
    out = {}
    for s in (1, -1):
        hi = _second_order_time1(f, s * p.x0, 0.0, p.eps, 1e-12)
        lo = _second_order_time1(f, s * p.x0, 0.0, p.eps, 1e-10)
        out[s] = (hi, 10 * float(np.max(np.abs(hi - lo))) + 1e-12)
    err = max(out[1][1], out[-1][1])
    base = _margin_outcome(out[1][0][0], out[-1][0][0], p.x0, err)
    if base.verdict == "inconclusive":
        return base
    eres = max(abs(p.eps * y[1] ** 2 / 2 - F(y[0]) + F(s * p.x0) + y[2]) for s, (y, _) in out.items())
    escale = max(abs(F(y[0])) + abs(F(s * p.x0)) + y[2] + p.eps * y[1] ** 2 for s, (y, _) in out.items())
    etol = err * max(1.0, escale) * 10 + 16 * EPS * escale
    return Outcome.from_parts({"not_represented": (base.residual, base.tolerance), "energy_identity": (eres, etol)},
                              base.message, base.values)


nonuni.property(over=("seed", "eps", "x0"), max_examples=12)


#: the proof's energy E_m(x, x') (F' = f) as printed, and misprints (mutants)
ENERGIES = {"stated": lambda eps, v, Fx: eps * v ** 2 / 2 - Fx,
            "half_dropped": lambda eps, v, Fx: eps * v ** 2 - Fx,
            "sign_flipped": lambda eps, v, Fx: eps * v ** 2 / 2 + Fx}


def _energy_rate(form):
    """d/dt E + x'^2 along eps x'' + x' = f(x), expanded (0 iff the energy dissipates at rate x'^2)."""
    t, eps = sp.symbols("t epsilon", positive=True)
    x = sp.Function("x")(t)
    F, f = sp.Function("F"), sp.Function("f")
    dE = sp.diff(ENERGIES[form](eps, sp.diff(x, t), F(x)), t).subs(sp.Derivative(F(x), x), f(x))   # F' = f
    expr = dE.subs(sp.diff(x, t, 2), (f(x) - sp.diff(x, t)) / eps) + sp.diff(x, t) ** 2        # the ODE
    return int(sp.expand(expr) != 0)


@nonuni.symbolic(timeout=30)
def _(p):
    """Energy: with F' = f and eps x'' + x' = f(x), d/dt (eps x'^2/2 - F(x)) = -x'^2 (the proof's dE_m/dt)."""
    bad = _energy_rate("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy substitution of x'' and simplify", "instances": ["x(t), F generic"],
        "proved": "d/dt(eps x'^2/2 - F(x)) = -x'^2 along eps x'' + x' = F'(x)"},
        message="identities that did not simplify to zero")


@nonuni.mutant({"half_dropped": "E = eps x'^2 - F(x) (factor 1/2 dropped): dE/dt != -x'^2",
                "sign_flipped": "E = eps x'^2/2 + F(x) (sign of F flipped): dE/dt != -x'^2"}, timeout=30)
def _(p, variant):
    """The energy perturbed, through the same substitution: d/dt E + x'^2 must not expand to zero."""
    bad = _energy_rate(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"d/dt E + x'^2 does not expand to zero for the mutated energy ({variant})")


@nonuni.falsifier("free_v0")
def _(p):
    """v0 = (h(x0) - x0)/(1 - 1/e) with f = 0, eps = 1 (Prop 4.9) represents h(x) = -1.2 x exactly."""
    lam = -1.2
    sols = {}
    for s in (1, -1):
        x0 = s * p.x0
        v0 = (lam * x0 - x0) / (1 - math.exp(-1))
        hi = _second_order_time1(lambda x: 0.0, x0, v0, 1.0, 1e-12)
        lo = _second_order_time1(lambda x: 0.0, x0, v0, 1.0, 1e-10)
        sols[s] = (hi[0], 10 * abs(hi[0] - lo[0]) + 1e-12)
    return _margin_outcome(sols[1][0], sols[-1][0], p.x0, max(sols[1][1], sols[-1][1]),
                           {"h": "x -> -1.2 x", "v0_rule": "(h(x0)-x0)/(1-1/e)"}, "free v0: ")


def _piecewise_theta(target):
    """theta(t) = th1 on [0, 1/2), -40 on [1/2, 1] in x'' + x' = theta(t) x with time-1 map x -> target x."""
    def T(th1, th2=-40.0):
        M1 = expm(np.array([[0, 1], [th1, -1.0]]) * 0.5)
        M2 = expm(np.array([[0, 1], [th2, -1.0]]) * 0.5)
        return (M2 @ M1)[0, 0]
    grid = np.linspace(-5, 60, 131)
    vals = np.array([T(g) - target for g in grid])
    k = int(np.argmax(np.sign(vals[:-1]) != np.sign(vals[1:])))
    return brentq(lambda a: T(a) - target, grid[k], grid[k + 1], xtol=1e-14), -40.0


@nonuni.falsifier("non_autonomous")
def _(p):
    """Non-autonomous theta(t), piecewise constant (th1 on [0, 1/2), -40 after) in x'' + x' = theta(t) x:
    h(x) = -1.05 x (slope <= -1, excluded for autonomous f) is represented with v0 = 0."""
    target = -1.05
    th1, th2 = _piecewise_theta(target)
    sols = {}
    for s in (1, -1):
        res = []
        for rtol in (1e-12, 1e-10):
            y = [s * p.x0, 0.0]
            for th, (a, b) in ((th1, (0, 0.5)), (th2, (0.5, 1.0))):
                sol = solve_ivp(lambda t, z, th=th: [z[1], th * z[0] - z[1]], (a, b), y, method="DOP853",
                                rtol=rtol, atol=rtol * 1e-2)
                y = sol.y[:, -1]
            res.append(y[0])
        sols[s] = (res[0], 10 * abs(res[0] - res[1]) + 1e-12)
    return _margin_outcome(sols[1][0], sols[-1][0], p.x0, max(sols[1][1], sols[-1][1]),
                           {"theta1": th1, "theta2": th2, "h": f"x -> {target} x"},
                           f"theta = ({th1:.10g}, {th2:g}) on [0,1/2), [1/2,1]: ")
