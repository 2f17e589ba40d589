"""Menon §14.1 (seed lines 1026-1038): the rank-one zero set of the matrix-completion energy.

Claims (catalogue menon §2.6 K3):

* ``menon.rank_one_zero_set``     (14.3)-(14.4): [[1,a],[1/a,1]] is rank one with E = 0 for (14.1)

Conventions as in the package docstring: tuples ``[W_N, ..., W_1]``, ``A_p = W_N...W_p``,
``B_p = W_p...W_1``; vectorisation is row-major and follows :func:`solvers.dln.pack`.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import xp_menon as XM
from solvers.xp import namespace, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError
from theorems.menon._common import EPS


def _validate_a(p):
    if abs(p.a) < 1e-4:
        raise ParamError(f"parameter a={p.a!r} must be nonzero (|a| >= 1e-4; (14.3) has a in R \\ {{0}})")


# ===========================================================================
# K3  (14.3)-(14.4): a rank-one variety in the zero set of (14.1)
rankone = Claim(
    id="menon.rank_one_zero_set",
    title="The matrices [[1, a], [1/a, 1]] are rank one and minimise the completion energy (14.1)",
    label="(14.3)-(14.4), Fig. 9.5",
    section="14.1",
    equation="(14.1)-(14.4)",
    lines=(1026, 1038),
    statement=r"W=\begin{pmatrix}1&a\\ \frac1a&1\end{pmatrix},\ a\ne0:\ \operatorname{rank}W=1,\ "
              r"E(W)=\tfrac12((W_{11}-1)^2+(W_{22}-1)^2)=0",
    status="holds",
    params=[Param.float("a", 2.0, -1e4, 1e4, "the parameter a != 0 of (14.3)")],
    validate=_validate_a,
    notes="Figure 9.5 (line 785) is the picture of this hyperbola; line 1036 cites Fig. 9.1 instead (E15). "
          "(14.4) [[1,1],[1,1]] is a = 1; a = -1 is equally a member (E15: limits cluster at both). Symbolic: "
          "det = 0 and E = 0 for symbolic a, and conversely W_11 = W_22 = 1, det W = 0 force W_21 = 1/W_12. "
          "Numeric: sigma_2/sigma_1 <= 8 eps (the only rounding is fl(1/a), a relative error u, giving "
          "|det| <= 2u|a||1/a|, plus the SVD's backward error ~ 2 eps sigma_1; sigma_1 >= 2). |a| < 1e-4 "
          "is rejected so that 1/a stays moderate.",
    catalogue="menon §2.6 K3; §2.10 OP14.1; §4 E15",
)


def _k3_outcome(W, xp=None):
    """sigma_2/sigma_1 + E(W); the SVD, E and det on ``xp`` (array API) when given, else NumPy."""
    Wx = W if xp is None else XM.to_xp(xp, [W])[0]
    xq = namespace(Wx)
    s = XM.host(xq.linalg.svdvals(Wx))
    E = float(0.5 * ((Wx[0, 0] - 1) ** 2 + (Wx[1, 1] - 1) ** 2))
    return Outcome(residual=float(s[1] / s[0] + E), tolerance=8 * EPS,
                   values={"W": np.asarray(W).tolist(), "singular_values": s.tolist(), "E": E,
                           "det": float(xq.linalg.det(Wx))},
                   message="sigma_2/sigma_1 + E(W) against the rounding of fl(1/a) and the SVD")


@rankone.numeric(backends=("numpy", "cupy"))
def _k3_numeric(p):
    """sigma_2/sigma_1 of [[1, a], [1/a, 1]] is rounding-level and E (14.1) vanishes."""
    return _k3_outcome(np.array([[1.0, p.a], [1.0 / p.a, 1.0]]), xp=xp_of(p))


rankone.property(over=("a",), max_examples=20)


#: the family (14.4) as printed, W = [[1, a], [1/a, 1]], and misprints
RANK_ONE_VARIANTS = {
    "stated": lambda a: sp.Matrix([[1, a], [1 / a, 1]]),
    "sign_flipped": lambda a: sp.Matrix([[1, a], [-1 / a, 1]]),
    "symmetric": lambda a: sp.Matrix([[1, a], [a, 1]]),
}


def _k3_prove(variant="stated"):
    """Failures of det W = 0 and E(W) = 0 for the family (variant), and of the converse: W = [[1, b], [c, 1]]
    (E = 0) has rank one iff c = 1/b."""
    a, b, c = sp.symbols("a b c")
    W = RANK_ONE_VARIANTS[variant](a)
    E = sp.Rational(1, 2) * ((W[0, 0] - 1) ** 2 + (W[1, 1] - 1) ** 2)
    bad = int(sp.cancel(W.det()) != 0) + int(sp.expand(E) != 0)
    sol = sp.solve(sp.Matrix([[1, b], [c, 1]]).det(), c)
    bad += int(len(sol) != 1 or sp.cancel(sol[0] - 1 / b) != 0)
    return bad, sol, sp.cancel(W.det())


@rankone.symbolic(timeout=30)
def _k3_symbolic(p):
    """det [[1,a],[1/a,1]] = 0 and E = 0; conversely the rank-one zeros of (14.1) are exactly this family."""
    bad, sol, _ = _k3_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel / solve", "solution_c": str(sol),
                                                      "proved": "det = 0, E = 0; zero set ∩ rank one = {c = 1/b}"},
                   message="conditions that failed")


@rankone.mutant({
    "sign_flipped": "W = [[1, a], [-1/a, 1]] (sign of the lower-left entry flipped)",
    "symmetric": "W = [[1, a], [a, 1]] (a for 1/a)",
}, timeout=30)
def _k3_mutant(p, variant):
    """(14.4) perturbed, through the same procedure: det W must not vanish."""
    bad, _, det = _k3_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"det": str(det)},
                   message=f"{bad} conditions failed for {variant}: det W = {det}")


@rankone.falsifier("symmetric_family", search=("a",))
def _k3_symmetric(p):
    """[[1, a], [a, 1]] (generalising (14.4) symmetrically) has E = 0 but rank 2 unless a = ±1."""
    return _k3_outcome(np.array([[1.0, p.a], [p.a, 1.0]]))
