r"""App. 4.A.3.4 Theorem 4.4 in the general case (seed l.3289-3333): Theorem 4.7 (Jordan case) and its
gap at lambda_eps (G4.1).  Claim: ``sander.representable_jordan`` (l.3297-3334).

The decision procedure and its helpers, the model (4.7) and its conventions: :mod:`solvers.psi_representable`
and its docstring.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers.psi_eps import lambda_eps, psi_eps
from solvers.psi_preimage import _nonreal_preimage, _taylor
from solvers.psi_representable import _jordan_sizes, _paired, _random_similarity, _rot, _Undecided, GAP
from theorems.claim import Claim, Outcome, Param, inconclusive

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Theorem 4.7 (general / Jordan case) and its gap at lambda_eps (G4.1)
def _jordan_block(m: int, z) -> np.ndarray:
    return z * np.eye(m) + np.eye(m, k=1)


def _sizes_at(A: np.ndarray, lam: float, tau1: float):
    """Jordan sizes of A at the (known) eigenvalue lam from the rank sequence of (A - lam)^k; every
    eigenvalue of A must be lam (A - lam nilpotent at the error level)."""
    N = A - lam * np.eye(A.shape[0])
    return _jordan_sizes(N, tau1)           # raises _Undecided unless N is nilpotent at the error level


def _threshold_data(eps: float):
    lam, alpha = lambda_eps(eps)
    xe = -alpha * alpha
    c = _taylor(complex(xe), eps, 3)
    return lam, xe, c


jordan = Claim(
    id="sander.representable_jordan",
    title="Thm 4.7 (Jordan case): one-sided conditions, and the exact rule at lambda_eps (gap G4.1)",
    label="Thm 4.7",
    section="4.A.3.4",
    equation="(4.7)",
    lines=(3297, 3334),
    statement=r"A\in\Psi_\varepsilon(\mathbb R^{d\times d})\Rightarrow\text{each Jordan block of }\lambda<\lambda_\varepsilon"
              r"\text{ occurs an even number of times};\quad\text{each Jordan block of }\lambda\le\lambda_\varepsilon"
              r"\text{ occurring an even number of times}\Rightarrow A\in\Psi_\varepsilon(\mathbb R^{d\times d})",
    status="gap",
    corrected=r"\text{Both one-sided statements hold, but neither characterises the blocks at }\lambda_\varepsilon"
              r"\text{ (}f_\varepsilon'(x_\varepsilon)=0<f_\varepsilon''(x_\varepsilon)\text{, so }f_\varepsilon(J_m(x_\varepsilon))"
              r"\sim J_{\lceil m/2\rceil}(\lambda_\varepsilon)\oplus J_{\lfloor m/2\rfloor}(\lambda_\varepsilon)\text{). Exact (derived): }"
              r"A\text{ is representable iff the blocks of each real }\lambda<\lambda_\varepsilon\text{ occur in equal pairs and the"
              r" block sizes at }\lambda_\varepsilon\text{ split into pairs }(a,a),\,(a,a-1)\text{ and single 1-blocks.}",
    params=[
        Param.float("eps", 1.0, 0.1, 20.0, "eps = 1/(1 - gamma); below ~0.1 f''(x_eps) is too small for float64 rank decisions", search=(0.3, 3.0)),
        Param.int("m_max", 5, 1, 6, "largest Jordan block J_m(x_eps) whose image is tested"),
        Param.seed("seed of the random real similarity S (X = S J S^-1)"),
    ],
    notes="Status gap (catalogue G4.1): the printed theorem is two one-sided implications, both true; the "
          "numeric check certifies the mechanism that decides the blocks at lambda_eps: f'(x_eps) = 0 < f''(x_eps), "
          "x_eps is the only real preimage of lambda_eps (python-flint proof, solvers.psi_eps.certify_global_min_arb), "
          "J_m(x_eps) maps to sizes (ceil(m/2), floor(m/2)) and realified J_a(z), z a non-real preimage, to (a, a).  "
          "The two falsifiers read either one-sided condition as a characterisation and are refuted by J_2(lambda_eps) "
          "(meets the necessary condition, not representable) and J_2 + J_1 at lambda_eps (fails the sufficient "
          "condition, representable).  No 'stated' falsifier: the printed one-sided statements are not refutable.  "
          "The exact rule is derived in the catalogue (A9), not claimed by the thesis.",
    catalogue="sander_part23 §2.1 T4.7; §3.2 (x_eps, f''); §4 G4.1; §6 A9",
)


def _rank_tau(A, theta, eps, condS):
    """Zero threshold for ranks of (A - lambda_eps)^k: expm forward error ~ eps_mach |M|, |M| ~ 1 + |theta|/eps,
    amplified by the similarity, times a safety 1e3 d."""
    d = A.shape[0]
    return 1e3 * d * EPS * (1 + float(np.linalg.norm(theta)) / eps) * max(1.0, float(np.linalg.norm(A))) * condS ** 2


@jordan.numeric
def jordan_numeric(p):
    """f'(x_eps) = 0 < f''(x_eps); x_eps the unique real preimage of lambda_eps (ball arithmetic); Jordan type of
    Psi_eps(theta) for X = S J_m(x_eps) S^-1 is (ceil(m/2), floor(m/2)), m <= m_max; realified J_a(z) -> (a, a)."""
    from solvers.psi_eps import certify_global_min_arb
    eps = p.eps
    rng = np.random.default_rng(p.seed)
    lam, xe, c = _threshold_data(eps)
    f1, f2 = abs(c[1]), 2 * c[2].real
    # |f'(x_eps)|: x_eps carries the float64 error of alpha* (a few ulp, |dx| <= 8 eps_mach |x|), so
    # |f'(x_eps)| <= |f''| |dx| + rounding of the Taylor sum (1e-16 relative to the terms ~ |f|)
    tol_f1 = abs(f2) * 8 * EPS * abs(xe) + 64 * EPS * abs(lam)
    parts = {"f_prime_at_x_eps": (f1, tol_f1), "f_second_positive": (64 * EPS, f2)}
    cert = certify_global_min_arb(eps)
    parts["unique_real_preimage_arb"] = (0.0 if cert.get("proved") else 1.0, 0.0)
    maps = {}
    for m in range(1, p.m_max + 1):
        S = _random_similarity(m, rng)
        X = S @ _jordan_block(m, xe) @ np.linalg.inv(S)
        theta = eps * X - np.eye(m) / (4 * eps)
        A = psi_eps(theta, eps)
        try:
            sizes, ranks, _ = _sizes_at(A, lam, _rank_tau(A, theta, eps, np.linalg.cond(S)))
        except _Undecided as exc:
            return inconclusive(f"J_{m}(x_eps): {exc}")
        want = [s for s in ((m + 1) // 2, m // 2) if s > 0]
        maps[f"J_{m}(x_eps)"] = {"sizes": sizes, "expected": want, "ranks": ranks}
        parts[f"type_J{m}"] = (0.0 if sizes == want else 1.0, 0.0)
    z = _nonreal_preimage(lam, eps)
    for a in (1, 2):
        R = _rot(z)
        Xr = np.kron(np.eye(a), R) + np.kron(np.eye(a, k=1), np.eye(2))
        S = _random_similarity(2 * a, rng)
        X = S @ Xr @ np.linalg.inv(S)
        theta = eps * X - np.eye(2 * a) / (4 * eps)
        A = psi_eps(theta, eps)
        try:
            sizes, ranks, _ = _sizes_at(A, lam, _rank_tau(A, theta, eps, np.linalg.cond(S)) * max(1.0, abs(z)))
        except _Undecided as exc:
            return inconclusive(f"realified J_{a}(z): {exc}")
        maps[f"J_{a}(z)+J_{a}(conj z)"] = {"sizes": sizes, "expected": [a, a], "ranks": ranks}
        parts[f"type_pair_J{a}"] = (0.0 if sizes == [a, a] else 1.0, 0.0)
    return Outcome.from_parts(parts, "blocks at lambda_eps: J_m(x_eps) -> (ceil(m/2), floor(m/2)), non-real pairs -> (a, a)",
                              {"lambda_eps": lam, "x_eps": xe, "f_prime": f1, "f_second": f2, "arb": cert,
                               "nonreal_preimage": [z.real, z.imag], "maps": maps})


jordan.property(over=("eps", "seed"), max_examples=6)


#: (divisor of p'' in the corner of p(J_3), power of the nilpotent N in p(J_3) - p I at a critical point): as in the
#: proof, and misprints (mutants)
JORDAN_FORMS = {"stated": (2, 2), "second_derivative_undivided": (1, 2), "nilpotent_not_squared": (2, 1)}


def _jordan_failures(form):
    div, npow = JORDAN_FORMS[form]
    z = sp.Symbol("z")
    a = sp.symbols("a0:11")
    p = sum(a[n] * z**n for n in range(11))
    J3 = sp.Matrix([[z, 1, 0], [0, z, 1], [0, 0, z]])
    P = sp.zeros(3, 3)
    Jn = sp.eye(3)
    for n in range(11):
        P += a[n] * Jn
        Jn = Jn * J3
    d1, d2 = sp.diff(p, z), sp.diff(p, z, 2) / div
    want = sp.Matrix([[p, d1, d2], [0, p, d1], [0, 0, p]])
    n1 = sum(1 for e in (P - want) if sp.expand(e) != 0)
    # impose p'(x) = 0 by solving for a1
    a1 = sp.solve(sp.Eq(d1, 0), a[1])[0]
    P0 = (P - p * sp.eye(3)).subs(a[1], a1)
    N2 = sp.Matrix([[0, 1, 0], [0, 0, 1], [0, 0, 0]]) ** npow
    n2 = sum(1 for e in (P0 - d2.subs(a[1], a1) * N2) if sp.expand(e) != 0)
    J2 = sp.Matrix([[z, 1], [0, z]])
    P2 = sp.zeros(2, 2)
    Jn = sp.eye(2)
    for n in range(11):
        P2 += a[n] * Jn
        Jn = Jn * J2
    n3 = sum(1 for e in (P2 - p * sp.eye(2)).subs(a[1], a1) if sp.expand(e) != 0)
    return n1 + n2 + n3


@jordan.symbolic(timeout=60)
def jordan_symbolic(p):
    """p(J_3(z)) = [[p, p', p''/2], [0, p, p'], [0, 0, p]] for a power series p of degree 10 (symbolic
    coefficients); with p'(x) = 0: p(J_2(x)) = p(x) I and p(J_3(x)) - p(x) I = p''(x)/2 N^2 (type (2,1))."""
    bad = _jordan_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand", "instances": ["degree-10 power series, J_2(z), J_3(z)"],
        "proved": "f(J_3) has the f, f', f''/2 pattern; at a critical point J_2 -> lambda I, J_3 -> type (2,1)"},
        message="entries that did not expand to zero")


@jordan.mutant({"second_derivative_undivided": "corner entry p'' instead of p''/2",
                "nilpotent_not_squared": "at a critical point p(J_3) - p I = p''/2 N (a J_3 again, not type (2,1))"},
               timeout=60)
def jordan_mutant(p, variant):
    """The Jordan-block pattern perturbed, through the same expansions: entries must differ."""
    bad = _jordan_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"differing_entries": bad},
                   message=f"{bad} entries differ for {variant}")


@jordan.falsifier("necessity_as_characterisation", search=("seed",))
def necessity_as_characterisation(p):
    """Read the necessary condition as 'iff': J_2(lambda_eps) meets it (no eigenvalue below lambda_eps) but is
    not representable.  A real 2x2 X with f(X) ~ J_2(lambda_eps) has spectrum in f^{-1}(lambda_eps) =
    {x_eps} (the unique real preimage) + non-real points, so X ~ x_eps I, J_2(x_eps) or a conjugate pair
    (diagonalisable); every class gives f(X) = lambda_eps I: rank(f(X) - lambda_eps I) = 0, not 1."""
    eps = p.eps
    rng = np.random.default_rng(p.seed)
    lam, xe, _ = _threshold_data(eps)
    z = _nonreal_preimage(lam, eps)
    S = _random_similarity(2, rng)
    Si = np.linalg.inv(S)
    cands = {"x_eps I": xe * np.eye(2), "J_2(x_eps)": S @ _jordan_block(2, xe) @ Si, "rot(z)": S @ _rot(z) @ Si}
    vals, ranks = {}, []
    for name, X in cands.items():
        theta = eps * X - np.eye(2) / (4 * eps)
        A = psi_eps(theta, eps)
        N = A - lam * np.eye(2)
        tau = _rank_tau(A, theta, eps, np.linalg.cond(S)) * max(1.0, abs(z))
        s = np.linalg.svd(N, compute_uv=False)
        if np.any((s > tau) & (s <= GAP * tau)):
            return inconclusive(f"rank of f(X) - lambda_eps I undecidable for {name}")
        ranks.append(int(np.sum(s > tau)))
        vals[name] = {"|f(X) - lambda_eps I|": float(np.linalg.norm(N)), "rank": ranks[-1], "tau": tau}
    best = max(ranks)
    return Outcome(residual=float(1 - best), tolerance=0.0, values={"lambda_eps": lam, "x_eps": xe,
                   "nonreal_preimage": [z.real, z.imag], "candidates": vals, "rank_needed_for_J2": 1},
                   message=f"every candidate X gives f(X) = lambda_eps I (max rank {best}); J_2(lambda_eps) needs rank 1: "
                           "the necessary condition is not sufficient")


@jordan.falsifier("sufficiency_as_characterisation", search=("seed",))
def sufficiency_as_characterisation(p):
    """Read the sufficient condition as 'iff': J_2(lambda_eps) + J_1(lambda_eps) fails it (blocks unpaired) yet is
    representable: X = S J_3(x_eps) S^-1 gives Psi_eps(theta) of Jordan type (2, 1) at lambda_eps."""
    eps = p.eps
    rng = np.random.default_rng(p.seed)
    lam, xe, _ = _threshold_data(eps)
    S = _random_similarity(3, rng)
    X = S @ _jordan_block(3, xe) @ np.linalg.inv(S)
    theta = eps * X - np.eye(3) / (4 * eps)
    A = psi_eps(theta, eps)
    try:
        sizes, ranks, sv = _sizes_at(A, lam, _rank_tau(A, theta, eps, np.linalg.cond(S)))
    except _Undecided as exc:
        return inconclusive(str(exc))
    predicted_representable = _paired(sizes or [])
    found = sizes == [2, 1]
    return Outcome(residual=float(found and not predicted_representable), tolerance=0.0, values={
        "theta": theta.tolist(), "Psi_eps(theta)": A.tolist(), "jordan_sizes": sizes, "ranks": ranks,
        "singular_values": sv, "lambda_eps": lam},
        message=f"Psi_eps(theta) has Jordan type {sizes} at lambda_eps (unpaired), but is representable by construction")


@jordan.reproduction(name="catalogue_x_eps")
def jordan_fixture(p):
    """Catalogue §3.2: x_1 = -10.797839372011284 and f''(x_1) = 0.015434229 (eps = 1)."""
    lam, xe, c = _threshold_data(1.0)
    f2 = 2 * c[2].real
    return Outcome.from_parts({"x_eps": (abs(xe + 10.797839372011284), 0.5e-15 * 16 + 8 * EPS * 11),
                               "f_second": (abs(f2 - 0.015434229), 0.5e-9)},
                              "x_eps and f'' at eps = 1", {"x_eps": xe, "f_second": f2})
