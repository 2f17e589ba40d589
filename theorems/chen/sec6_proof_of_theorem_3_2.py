"""Chen §6 (seed lines 867-1027): the proof of Theorem 3.2 -- Lemma 6.1, the gradient on o(Q) for the
Frobenius metric (catalogue chen §2.4: T6).

Claims:

* ``chen.lemma_6_1``            Lemma 6.1: d_s f(e^{s w} R) = -Tr(w pi_-(f'(R) R^T)) (T6)

Notation decisions D1-D9: see ``theorems/chen/_common.py``; the metric on O(Q) (D2), layer coordinates and
the corrected generator (E1): see ``theorems/chen/_pointwise.py``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import expm

from solvers import fd, orthogonal
from theorems.claim import Claim, Outcome, Param
from theorems.chen._common import EPS, random_orthogonal, rng_for


# ===========================================================================
# chen.lemma_6_1 (T6)
lem = Claim(
    id="chen.lemma_6_1",
    title="Lemma 6.1: the gradient on o(Q) for the Frobenius metric is pi_-(f'(R) R^T)",
    label="Lemma 6.1",
    section="6",
    equation="(6.10)-(6.12)",
    lines=(917, 938),
    statement=r"R(s)=e^{s\omega}R_0:\ \partial_sf(R(s))=-\mathrm{Tr}\big(\omega\,\pi_-(\partial_Rf(R(s))R^T(s))\big)",
    status="holds",
    params=[Param.int("Q", 3, 2, 6, "dimension", search=(2, 5)),
            Param.seed("seed of R_0, omega and f")],
    notes="Stated for R(0) = 1; holds at any R_0 by right translation (checked at a random R_0).  "
          "f(R) = Tr(C R) + sum_ij R_ij^3 (smooth, non-linear).  D2: with the Killing normalisation "
          "1/2 Tr the gradient doubles (falsifier 'killing').",
    catalogue="chen §2.4 T6",
    covers=("T6",),
)


def _lem_case(p):
    rng = rng_for(p.seed)
    R0 = random_orthogonal(p.Q, rng)
    w = orthogonal.skew(rng.standard_normal((p.Q, p.Q)))
    C = rng.standard_normal((p.Q, p.Q))
    f = lambda R: float(np.trace(C @ R) + np.sum(R ** 3))
    df = lambda R: C.T + 3 * R ** 2
    (g,), (e,) = fd.gradient_with_error(lambda s: f(expm(s[0] * w) @ R0), [np.zeros(1)], h=1e-5)
    return R0, w, df, g[0], e[0]


@lem.numeric
def lem_numeric(p):
    """d/ds f(e^{s w} R_0) at s = 0 by central differences vs -Tr(w pi_-(f'(R_0) R_0^T))."""
    R0, w, df, g, e = _lem_case(p)
    pred = -float(np.trace(w @ orthogonal.skew(df(R0) @ R0.T)))
    return Outcome(residual=abs(g - pred), tolerance=e + 64 * p.Q * EPS * (1 + abs(pred)),
                   values={"fd": g, "lemma": pred}, message=f"FD {g:.10g} vs lemma {pred:.10g}")


lem.property(over=("Q", "seed"), max_examples=15)


@lem.falsifier("killing", search=("seed",))
def lem_killing(p):
    """With the Killing normalisation <A,B> = 1/2 Tr(A^T B) the 'gradient' 2 pi_-(f'R^T) gives twice the slope."""
    R0, w, df, g, e = _lem_case(p)
    pred = -2 * float(np.trace(w @ orthogonal.skew(df(R0) @ R0.T)))
    return Outcome(residual=abs(g - pred), tolerance=e + 64 * p.Q * EPS * (1 + abs(pred)), message="factor 2")


def _lem_symbolic_core(variant="stated"):
    """O(2), R(s) = rot(s) R_0 with R_0 = rot(phi), f = Tr(C R) + R_11^2: both sides agree identically."""
    s, phi = sp.symbols("s phi")
    C = sp.Matrix(2, 2, sp.symbols("c0:4"))
    rot = lambda a: sp.Matrix([[sp.cos(a), -sp.sin(a)], [sp.sin(a), sp.cos(a)]])
    Rs = rot(s) * rot(phi)
    w = sp.Matrix([[0, -1], [1, 0]])
    f = lambda R: (C * R).trace() + R[0, 0] ** 2
    Rm = sp.Matrix(2, 2, sp.symbols("r0:4"))
    G = sp.Matrix(2, 2, lambda i, j: sp.diff(f(Rm), Rm[i, j])).subs(dict(zip(list(Rm), list(Rs))))
    k = 2 if variant == "killing" else 1

    def slope(G, R, om):
        P = R.T * G if variant == "transposed" else G * R.T
        return -k * (om * (P - P.T) / 2).trace()
    lhs = sp.diff(f(Rs), s)
    e = sp.expand(sp.expand_trig(lhs - slope(G, Rs, w)))
    e = sp.simplify(e) if e != 0 else e
    # Q = 3 at a generic R_0 (free entries: the identity does not use orthogonality), omega a free skew matrix,
    # f(R) = Tr(C R) + sum R_ij^3: e^{s omega} R_0 = (1 + s omega + s^2 omega^2/2) R_0 + O(s^3) for the s-derivative at 0
    w3 = sp.Matrix(3, 3, lambda i, j: 0 if i == j else (1 if i < j else -1) * sp.Symbol(f"o{min(i, j)}{max(i, j)}"))
    R0 = sp.Matrix(3, 3, sp.symbols("q0:9"))
    C3 = sp.Matrix(3, 3, sp.symbols("d0:9"))
    f3 = lambda R: (C3 * R).trace() + sum(x ** 3 for x in R)  # noqa: E731
    R3 = (sp.eye(3) + s * w3 + s ** 2 * w3 * w3 / 2) * R0
    G3 = C3.T + R0.applyfunc(lambda x: 3 * x ** 2)
    e3 = sp.expand(sp.diff(f3(R3), s).subs(s, 0) - slope(G3, R0, w3))
    return Outcome(residual=int(e != 0) + int(e3 != 0), tolerance=0, values={
        "method": "sympy expand_trig (O(2)); first-order expansion of e^{s omega} (Q = 3)",
        "instances": ["O(2), R_0 = rot(phi)", "Q = 3, generic R_0, free skew omega"],
        "proved": "(6.11) at R_0 = rot(phi) and for Q = 3", "remainder": str(e)},
        message="instances where d/ds f(R(s)) and the lemma's slope differ")


@lem.symbolic(timeout=30)
def lem_symbolic(p):
    """O(2), R(s) = rot(s) R_0 with R_0 = rot(phi), f = Tr(C R) + R_11^2: both sides agree identically."""
    return _lem_symbolic_core()


@lem.mutant({
    'killing': "the Killing normalisation: -2 Tr(omega pi_-(f'(R) R^T))",
    'transposed': "pi_-(R^T f'(R)) for pi_-(f'(R) R^T)",
}, timeout=30)
def lem_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _lem_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out
