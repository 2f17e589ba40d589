"""§7.B.1 k-support negentropies (seed l.5189-5201).  Claim: ``sander.topk_negentropy``.

Conventions and the operator-output error model (chapter 7): ``theorems.sander._attention``.
"""
from __future__ import annotations

import math

import sympy as sp

from theorems.claim import Claim, Outcome, Param


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
    from scipy.optimize import minimize_scalar
    r = minimize_scalar(lambda x: -(x * p.y - math.exp(x - 1)), bounds=(-60, 60), method="bounded",
                        options={"xatol": 1e-10})
    # error model: the objective is flat at the maximiser; x error 1e-5 costs <= e^(x-1) dx^2/2 ~ y 1e-10
    return Outcome(residual=abs(-r.fun - p.y * math.log(p.y)), tolerance=1e-8 * (1 + p.y),
                   values={"sup": -r.fun, "y_log_y": p.y * math.log(p.y)})


@negent.falsifier("log_without_y")
def _(p):
    """phi*(y) = log y (dropping the factor y) is wrong."""
    from scipy.optimize import minimize_scalar
    r = minimize_scalar(lambda x: -(x * p.y - math.exp(x - 1)), bounds=(-60, 60), method="bounded",
                        options={"xatol": 1e-10})
    return Outcome(residual=abs(-r.fun - math.log(p.y)), tolerance=1e-8 * (1 + p.y))
