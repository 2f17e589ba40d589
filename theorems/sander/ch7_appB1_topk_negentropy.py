"""§7.B.1 k-support negentropies (seed l.5189-5201).  Claim: ``sander.topk_negentropy``.

Conventions and the operator-output error model (chapter 7): ``theorems.sander._attention``.
"""
from __future__ import annotations

import math

import sympy as sp

from theorems.claim import Claim, Outcome, Param

EPS = 2.220446049250313e-16      # double unit roundoff x 2


# ===========================================================================
# N7.B k-support negentropy
negent = Claim(
    id="sander.topk_negentropy",
    title="phi(x) = exp(x - 1) gives phi*(y) = y log y and the k-support negentropy",
    label="7.B.1",
    section="7.B.1",
    equation="",
    lines=(5189, 5198),
    statement=r"\varphi(x)=e^{x-1}:\ \varphi^*(y)=y\log y,\ f^*_\varphi(\mathbf y,\mathbf 1_k)=\min_{\mathbf z\in[0,1]^n,"
              r"\langle\mathbf z,\mathbf 1\rangle=k}\sum_iy_i\log\frac{y_i}{z_i}",
    status="holds",
    params=[Param.float("y", 0.7, 0.0, 10.0, "point y > 0 of the numeric check", low_open=True)],
    notes="Symbolic: the supremum of x y - e^(x-1) is attained at x = 1 + log y and equals y log y; the perspective "
          "z phi*(y/z) = y log(y/z). Numeric: a 1-D sup by scipy bounded minimisation.",
    catalogue="sander_part23 §2.4 N7.B",
    covers=("N7.B",),
)


#: phi*(y) as printed, and misprints (mutants): the factor y dropped; the conjugate of e^x (y log y - y)
PHI_STAR_FORMS = {"stated": lambda y: y * sp.log(y), "log_y": lambda y: sp.log(y),
                  "conjugate_of_exp_x": lambda y: y * sp.log(y) - y}


def _negentropy_failures(form):
    """sup_x x y - e^{x-1}: stationary point by sympy.solve, a maximum (second derivative < 0), its value against
    phi*(y) of ``form``; the perspective z phi*(y/z) against the printed summand y log(y/z).  Returns (failures, the
    computed conjugate)."""
    phi_star = PHI_STAR_FORMS[form]
    x, y, z = sp.symbols("x y z", positive=True)
    obj = x * y - sp.exp(x - 1)
    xs = sp.solve(sp.diff(obj, x), x)[0]
    conj = sp.simplify(obj.subs(x, xs))
    r = int(not bool(sp.simplify(sp.diff(obj, x, 2).subs(x, xs)).is_negative))
    r += int(sp.simplify(sp.expand_log(conj - phi_star(y), force=True)) != 0)
    persp = sp.simplify(z * phi_star(y / z) - y * sp.log(y / z))
    r += int(sp.simplify(sp.expand_log(persp, force=True)) != 0)
    return r, conj


@negent.symbolic(timeout=30)
def _(p):
    """Legendre transform of exp(x - 1) by stationarity (a maximum); the perspective."""
    r, conj = _negentropy_failures("stated")
    return Outcome(residual=r, tolerance=0, values={"method": "sympy.solve + simplify", "phi_star": str(conj)})


@negent.mutant({"log_y": "phi*(y) = log y (the factor y dropped)",
                "conjugate_of_exp_x": "phi*(y) = y log y - y (the conjugate of e^x, not of e^{x-1})"}, timeout=30)
def _(p, variant):
    """phi* perturbed, through the same Legendre computation: it must differ."""
    r, conj = _negentropy_failures(variant)
    return Outcome(residual=r, tolerance=0, values={"phi_star_computed": str(conj)},
                   message=f"{r} identities fail: sup_x xy - e^(x-1) = {conj} ({variant})")


@negent.numeric
def _(p):
    """sup_x x y - exp(x - 1) by bounded scalar minimisation equals y log y."""
    sup, tol = _sup_numeric(p.y)
    return Outcome(residual=abs(sup - p.y * math.log(p.y)), tolerance=tol,
                   values={"sup": sup, "y_log_y": p.y * math.log(p.y)})


def _sup_numeric(y):
    """sup_x x y - e^(x-1) by bounded Brent on [log y - 40, log y + 40] (the window follows the scale of y, not the
    maximiser formula; a fixed [-60, 60] missed the maximiser for y < e^-61).  Error model: at the maximiser the
    objective is flat, so Brent's location error dx (xatol 1e-10, or ~sqrt(eps) where rounding hides the curvature
    y) costs y dx^2/2; the objective's rounding is <= 4 eps (|x y| + e^(x-1)) at |x| <= |log y| + 41.  AUDIT: the
    former tolerance 1e-8 (1 + y) was 1e8 x the residual at the defaults and absolute, so it accepted anything for
    small y."""
    from scipy.optimize import minimize_scalar
    ly = math.log(y)
    r = minimize_scalar(lambda x: -(x * y - math.exp(x - 1)), bounds=(ly - 40, ly + 40), method="bounded",
                        options={"xatol": 1e-10})
    X = abs(ly) + 41
    rnd = 4 * EPS * (X * y + y * math.e ** 2)
    dx2 = max(1e-20, 2 * rnd / y)           # the location Brent can resolve: y dx^2/2 ~ rounding
    return float(-r.fun), 16 * rnd + y * dx2 / 2


@negent.falsifier("log_without_y")
def _(p):
    """phi*(y) = log y (dropping the factor y) is wrong."""
    sup, tol = _sup_numeric(p.y)
    return Outcome(residual=abs(sup - math.log(p.y)), tolerance=tol, values={"sup": sup, "log_y": math.log(p.y)})
