"""§4.3.3 The role of momentum, the remark after Prop 4.1 (seed l.2955): the continuous counterpart of
the RevNet fixed-point spectrum.  Claim: ``sander.revnet_continuous_spectrum`` (l.2955).

Conventions (the two second-order forms, ``J(A, B)``) and the eigenvalue error model of every spectral check
here: ``theorems.sander._momentum``'s docstring.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from theorems.claim import Claim, Outcome
from theorems.sander._momentum import _AB_of, _cplx, _eig_tol, _validate_AB, AB_PARAMS


# ===========================================================================
# 3. Remark after Prop 4.1: the continuous counterpart
cont = Claim(
    id="sander.revnet_continuous_spectrum",
    title="Continuous RevNet: Sp [[0,A],[B,0]] = ±sqrt(Sp AB), so not all eigenvalues have Re < 0",
    label="Remark after Prop 4.1",
    section="4.3.3",
    equation="",
    lines=(2955, 2955),
    statement=r"\operatorname{Sp}\begin{pmatrix}0&A\\B&0\end{pmatrix}=\pm\sqrt{\operatorname{Sp}(AB)},\ "
              r"\text{hence the eigenvalues cannot all have real part}<0",
    status="holds",
    params=AB_PARAMS,
    validate=_validate_AB,
    notes="Numeric: every eigenvalue nu of K = [[0,A],[B,0]] has nu^2 within error of Sp(AB) and -nu also in Sp K "
          "(the +- pairing), and sum Re nu = tr K = 0, so max Re nu >= 0.  Falsifier: the damped variant "
          "v' = phi - delta v (trace -delta d < 0) where all eigenvalues are stable.",
    catalogue="sander_part23 §2.1 R4.1",
)


def _cont_outcome(K, A, B):
    nu, V = np.linalg.eig(K)
    tol = _eig_tol(K, V)
    mu, Vm = np.linalg.eig(A @ B)
    tol_mu = _eig_tol(A @ B, Vm)
    sq = max(float(np.min(np.abs(l * l - mu))) for l in nu)
    sq_tol = max(2 * abs(l) for l in nu) * tol + tol_mu + tol * tol
    pair = max(float(np.min(np.abs(nu + l))) for l in nu)
    maxre = float(np.max(nu.real))
    trace = float(np.sum(nu.real))
    return Outcome.from_parts({"squares_in_Sp_AB": (sq, sq_tol), "plus_minus_pairs": (pair, 2 * tol),
                               "not_all_stable": (max(0.0, -maxre), tol)},
                              f"max Re nu = {maxre:.3g}, sum Re nu = {trace:.2e}",
                              {"eigenvalues": _cplx(nu), "max_real_part": maxre, "sum_real_parts": trace,
                               "eig_tolerance": tol})


@cont.numeric
def _(p):
    """eig of [[0,A],[B,0]]: nu^2 in Sp(AB), -nu in the spectrum, max Re nu >= 0 (within rounding)."""
    A, B = _AB_of(p)
    d = A.shape[0]
    return _cont_outcome(np.block([[np.zeros((d, d)), A], [B, np.zeros((d, d))]]), A, B)


cont.property(over=("d", "A", "B"), max_examples=20)


#: the printed spectrum Sp K = +-sqrt(Sp AB) as a characteristic polynomial in nu, and a misprint (mutant)
CONT_FORMS = {
    "stated": lambda nu, A, B: (nu ** 2 * sp.eye(2) - B * A).det(),
    "square_root_dropped": lambda nu, A, B: ((nu * sp.eye(2) - B * A) * (nu * sp.eye(2) + B * A)).det(),
}


def _cont_identities(form):
    nu = sp.Symbol("nu")
    A = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"a{i}{j}"))
    B = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"b{i}{j}"))
    K = sp.BlockMatrix([[sp.zeros(2), A], [B, sp.zeros(2)]]).as_explicit()
    bad = int(sp.expand((nu * sp.eye(4) - K).det(method="berkowitz") - CONT_FORMS[form](nu, A, B)) != 0)
    return bad + int(K.trace() != 0)


@cont.symbolic(timeout=30)
def _(p):
    """d = 2 symbolic blocks: det(nu I - K) = det(nu^2 I - BA), and tr K = 0."""
    bad = _cont_identities("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy berkowitz det + expand",
                                                      "instances": ["d=2"],
                                                      "proved": "chi_K(nu) = chi_BA(nu^2); tr K = 0"},
                   message="identities that did not expand to zero")


@cont.mutant({"square_root_dropped": "Sp K = +-Sp(AB) (square root dropped): chi_K(nu) != chi_BA(nu) chi_BA(-nu)"},
             timeout=30)
def _(p, variant):
    """The printed spectrum perturbed, through the same determinant identity: it must not expand to zero."""
    bad = _cont_identities(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities fail for the mutated spectrum ({variant})")


@cont.falsifier("damped", search=("seed",), fixed={"d": 2})
def _(p):
    """Damped variant v' = phi(x) - delta v (delta = 1/2): Jacobian [[-delta I, A], [B, 0]]; with A = I, B = -I
    (AB = -I) every eigenvalue has Re = -delta/2 < 0 and nu^2 is no longer in Sp(AB)."""
    d, delta = p.d, 0.5
    A, B = np.eye(d), -np.eye(d)
    K = np.block([[-delta * np.eye(d), A], [B, np.zeros((d, d))]])
    return _cont_outcome(K, A, B)
