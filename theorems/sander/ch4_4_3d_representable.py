r"""§4.4.3 Universality of Momentum ResNets with linear residual functions (seed l.3025-3029), with App.
4.A.3 (l.3200-3333): which linear maps the second-order (momentum) linear model represents --
Theorem 4.4 (diagonalisable case) and Theorem 4.7 (Jordan case) -- as a *decision procedure* with
certificates.  Claim: ``sander.representable`` (l.3025-3029).

The decision procedure (``decide``), its certificates and its error model, and the model (4.7) with its
conventions (f_eps, Psi_eps, lambda_eps, x_eps): :mod:`solvers.psi_representable` and its docstring.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import sympy as sp
from scipy.optimize import brentq

from solvers.psi_eps import f_eps, f_eps_prime, lambda_eps, psi_eps
from solvers.psi_preimage import _below_lambda, _nonreal_preimage
from solvers.psi_representable import _random_similarity, _rot, decide
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

EPS = float(np.finfo(float).eps)


# ---------------------------------------------------------------------------
# instance generators (the 'kind' parameter)
def instance(p):
    """(D, truth, theta0): the user's D (truth None), or one drawn from (kind, d, seed, eps).

    representable: X = Q (rotation blocks of non-real preimages of values in [-0.95, lambda_eps - 0.02]
      (a *paired* real eigenvalue below lambda_eps), rotation blocks of random complex z, real x >
      x_eps + 0.5) Q^{-1}, theta0 = eps X - I/(4 eps), D = Psi_eps(theta0)  -> truth True.
    paired_jordan: as representable with the realified J_2(z) (f gives J_2(lambda) + J_2(lambda)), d >= 4.
    unpaired: D = Q diag(lambda_below, others) Q^{-1}, one real eigenvalue in [lambda_eps - 0.3,
      lambda_eps - 0.02] of multiplicity one  -> truth False.
    scaled: D = alpha A for a Gaussian A scaled so that every real eigenvalue exceeds lambda_eps
      (the 'any mapping up to scale' consequence, l.3029) -> truth True."""
    if p.D is not None:
        return np.asarray(p.D, dtype=float), None, None
    rng = np.random.default_rng(p.seed)
    d, eps = p.d, p.eps
    lam, alpha = lambda_eps(eps)
    xe = -alpha * alpha
    Q = _random_similarity(d, rng)
    if p.kind in ("representable", "paired_jordan"):
        blocks = []
        left = d
        if p.kind == "paired_jordan":
            z = _nonreal_preimage(float(rng.uniform(*_below_lambda(lam, -0.95))), eps)
            R = _rot(z)
            blocks.append(np.block([[R, np.eye(2)], [np.zeros((2, 2)), R]]))
            left -= 4
        elif left >= 2:
            z = _nonreal_preimage(float(rng.uniform(*_below_lambda(lam, -0.95))), eps)
            blocks.append(_rot(z))
            left -= 2
        if left >= 2 and rng.random() < 0.5:
            z = complex(rng.uniform(-3, 3), rng.uniform(0.3, 3)) / eps
            blocks.append(_rot(z))
            left -= 2
        for _ in range(left):
            blocks.append(np.array([[xe + 0.5 + rng.exponential(2.0 / eps)]]))
        X = Q @ sla.block_diag(*blocks) @ np.linalg.inv(Q)
        theta0 = eps * X - np.eye(d) / (4 * eps)
        return psi_eps(theta0, eps), True, theta0
    if p.kind == "unpaired":
        vals = [float(rng.uniform(lam - 0.3, lam - 0.02))]
        while len(vals) < d:
            vals.append(float(rng.uniform(lam + 0.05, 2.0)))
        return Q @ np.diag(vals) @ np.linalg.inv(Q), False, None
    if p.kind == "scaled":
        A = rng.standard_normal((d, d))
        ev = np.linalg.eigvals(A)
        re = ev.real[np.abs(ev.imag) <= 1e-12 * max(1.0, np.max(np.abs(ev)))]
        s = 1.0
        if re.size and re.min() < 0:
            s = 0.5 * lam / re.min()          # alpha < lambda_eps / min Sp_R(A)
        return s * A, True, None
    raise ParamError(f"unknown kind {p.kind!r}")


# ---------------------------------------------------------------------------
def _validate(p):
    if p.D is not None:
        D = p.D
        if D.shape[0] != D.shape[1]:
            raise ParamError(f"parameter D must be a square matrix, got shape {D.shape[0]}x{D.shape[1]}")
        if D.shape[0] > 10:
            raise ParamError(f"parameter D is {D.shape[0]}x{D.shape[0]}; at most 10x10 is supported")
        if np.max(np.abs(D)) > 1e6:
            raise ParamError("parameter D has entries above 1e6 in magnitude (Psi_eps grows like e^sqrt|z|; "
                             "preimages would overflow): rescale D")
    else:
        if p.kind == "paired_jordan" and p.d < 4:
            raise ParamError("kind=paired_jordan needs d >= 4 (a J_2(lambda) + J_2(lambda) block)")


claim = Claim(
    id="sander.representable",
    title="Which linear maps the momentum (second-order) linear model represents: decision and construction",
    label="Thm 4.4, Thm 4.7",
    section="4.4.3, 4.A.3",
    equation="(4.7)",
    lines=(3025, 3029),
    statement=r"D\in D^{\mathbb C}_d(\mathbb R):\ D\in\Psi_\varepsilon(\mathbb R^{d\times d})\iff"
              r"\forall\lambda\in\operatorname{Sp}(D),\ \lambda<\lambda_\varepsilon\Rightarrow"
              r"\lambda\text{ has even multiplicity}",
    status="holds",
    params=[
        Param.matrix("D", None, "the real square matrix to decide (nested lists); drawn from kind/d/seed when omitted",
                     shape=("d", "d"), families=("gaussian", "spd", "symmetric", "orthogonal", "diagonal",
                                                 "ill_conditioned", "near_singular", "seed")),
        Param.float("eps", 1.0, 0.01, 100.0, "eps = 1/(1 - gamma) > 0", search=(0.2, 5.0)),
        Param.int("d", 4, 1, 8, "dimension of a drawn D", search=(1, 6)),
        Param.seed("seed of the drawn D"),
        Param.choice("kind", "representable", ["representable", "paired_jordan", "unpaired", "scaled"],
                     "drawn D: Psi_eps(theta0) with a paired real eigenvalue below lambda_eps (representable), "
                     "with J_2(lambda)+J_2(lambda) (paired_jordan, d >= 4), a single real eigenvalue below "
                     "lambda_eps (unpaired), or a scaled Gaussian (scaled, l.3029)"),
        Param.bool("exact", True, "when floating point cannot decide (e.g. one Jordan block J_2(lambda), lambda < "
                   "lambda_eps), decide the given D exactly as a rational matrix (sympy, d <= 6); user D only"),
    ],
    validate=_validate,
    notes="Decision procedure for Thm 4.4 (diagonalisable D) and Thm 4.7 (Jordan case) away from lambda_eps; "
          "see the module docstring.  'representable' is certified by constructing a real theta with "
          "|Psi_eps(theta) - D| / |D| within the error model (a backward certificate); 'not representable' "
          "only by a robust (open) condition: a real cluster of odd size strictly below lambda_eps.  An "
          "unpaired Jordan structure below lambda_eps (e.g. one J_2(lambda)) is not representable in exact "
          "arithmetic but is within rounding of representable matrices, and eigenvalues within the error of "
          "lambda_eps fall in the gap G4.1: both are reported inconclusive by the float analysis, never refuted.  "
          "For a user's D (d <= 6, exact=true) an undecided float analysis falls back to exact rational arithmetic "
          "on the given entries (sympy over Q: characteristic polynomial, isolated real roots, exact ranks of "
          "f(D)^k), which certifies 'not representable' for THAT matrix when a real eigenvalue below lambda_eps has "
          "unpaired Jordan blocks (e.g. [[-0.8, 1], [0, -0.8]]).  With a drawn D "
          "the ground truth is known by construction and the decision must match it.  Catalogue: "
          "Thm 4.4 holds as printed (including multiplicities at lambda_eps, which are unrestricted for "
          "diagonalisable D); typos E4.3 in its proof are encoded as the falsifier 'proof_closed_interval'.",
    catalogue="sander_part23 §2.1 T4.4, T4.7; §3.1-3.2; §4 E4.3, G4.1; §5 item 1",
)


def _outcome(p, r, truth):
    vals = {k: r.get(k) for k in ("representable", "reason", "eigenvalues", "lambda_eps", "clusters",
                                  "residual", "tolerance", "margin", "uncertainty", "kappa_V", "exact",
                                  "float_reason", "root_interval", "jordan_sizes", "exact_error", "exact_finding")}
    vals = {k: v for k, v in vals.items() if v is not None}
    if r.get("theta") is not None:
        vals["theta"] = np.asarray(r["theta"]).tolist()
    if truth is not None:
        vals["ground_truth"] = truth
    if r["representable"] is None:
        if truth is not None:     # a drawn instance must be decided
            return Outcome(verdict="inconclusive", values=vals,
                           message=f"drawn instance (truth {truth}) left undecided: {r['reason']}")
        return inconclusive(r["reason"], **vals)
    parts = {}
    if truth is not None:
        parts["decision_matches_construction"] = (float(r["representable"] != truth), 0.0)
    if r["representable"]:
        if r["residual"] > r["tolerance"]:
            return Outcome(verdict="inconclusive", values=vals,
                           message=f"decided representable ({r['reason']}) but the construction residual "
                                   f"{r['residual']:.2e} exceeds the error model {r['tolerance']:.2e}")
        parts["construction_residual"] = (r["residual"], r["tolerance"])
        msg = f"representable: {r['reason']}; |Psi_eps(theta) - D|/|D| = {r['residual']:.2e}"
    else:
        parts["margin_vs_error"] = (r["uncertainty"], r["margin"])
        msg = f"not representable: {r['reason']}"
    return Outcome.from_parts(parts, msg, vals)


@claim.numeric
def numeric(p):
    """Decide D in Psi_eps(R^{dxd}); certify by constructing theta (residual vs error model) or by a robust
    violated necessary condition (an odd real cluster below lambda_eps, margin vs error radius)."""
    D, truth, _ = instance(p)
    return _outcome(p, decide(D, p.eps, exact=bool(p.exact and truth is None)), truth)


claim.property(over=("eps", "d", "seed", "kind", "D"), max_examples=15,
               description="drawn D of every kind (representable, paired Jordan, unpaired, scaled) decided "
                           "as constructed, with the construction certified; or D drawn from the matrix "
                           "families (Gaussian, SPD, orthogonal, ill-conditioned, ...), decided and certified")


# ---------------------------------------------------------------------------
# symbolic: the realification mechanism of the sufficiency proof (and E4.3's fix)
#: (sign of Im p in the realisation of p(uI + vJ), the pair of eigenvalues realised by P): as used by the proof,
#: and misprints (mutants; 'unpaired' drops 'even multiplicity': one real eigenvalue from a conjugate pair)
REALISATION_FORMS = {"stated": (1, "paired"), "imaginary_sign": (-1, "paired"), "unpaired": (1, "unpaired")}


def _realisation_failures(form):
    sign, pairing = REALISATION_FORMS[form]
    u, v = sp.symbols("u v", real=True)
    a = sp.symbols("a0:11", real=True)
    J = sp.Matrix([[0, -1], [1, 0]])
    X = u * sp.eye(2) + v * J
    pX = sp.zeros(2, 2)
    Xn = sp.eye(2)
    pz = 0
    zn = 1
    for n in range(11):
        pX += a[n] * Xn
        pz += a[n] * zn
        Xn = Xn * X
        zn = sp.expand(zn * (u + sp.I * v))
    pz = sp.expand(pz)
    re, im = sp.re(pz), sp.im(pz)
    diff = pX - (re * sp.eye(2) + sign * im * J)
    n1 = sum(1 for e in diff if sp.expand(e) != 0)
    P = sp.Matrix([[1, sp.I], [1, -sp.I]])
    M = P.inv() * sp.diag(u + sp.I * v, u - sp.I * v) * P
    n2 = sum(1 for e in M if sp.expand(sp.im(sp.expand(e))) != 0)
    lam, mu = sp.symbols("lam mu", real=True)
    other = lam if pairing == "paired" else mu     # a real f(z) below lambda_eps comes with f(conj z) = f(z)
    Ml = P.inv() * sp.diag(lam, other) * P
    n3 = sum(1 for e in (Ml - lam * sp.eye(2)) if sp.expand(e) != 0)
    n3 += sum(1 for e in Ml if sp.expand(sp.im(sp.expand(e))) != 0)
    return n1 + n2 + n3, M


@claim.symbolic(timeout=60)
def symbolic(p):
    """For a real power series p (degree 10, symbolic coefficients), p(uI + vJ) = Re p(u+iv) I + Im p(u+iv) J
    (so f_eps of a rotation block realises f_eps(z)); with E4.3's explicit P = [[1, i], [1, -i]],
    P^{-1} diag(z, conj z) P is real and P^{-1} lambda I P = lambda I (real, a paired eigenvalue)."""
    bad, M = _realisation_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand", "instances": ["p of degree 10, X = uI + vJ", "P = [[1, i], [1, -i]]"],
        "realified": str(sp.simplify(M)),
        "proved": "p(uI+vJ) = Re p(z) I + Im p(z) J; P^{-1} diag(z, conj z) P real; P^{-1} (lam I) P = lam I"},
        message="entries that did not expand to zero / non-real entries")


@claim.mutant({"imaginary_sign": "p(uI + vJ) = Re p(z) I - Im p(z) J (rotation read clockwise)",
               "unpaired": "even multiplicity dropped: P^{-1} diag(lam, mu) P, lam != mu real, is neither lam I nor real"},
              timeout=60)
def mutant(p, variant):
    """The realisation perturbed, through the same expansions: entries must fail."""
    bad, _ = _realisation_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_entries": bad},
                   message=f"{bad} entries fail for {variant}")


# ---------------------------------------------------------------------------
# falsifiers: the nearest wrong rules, each contradicted by a certified decision
def _rule_instance(p, which):
    """Instances on which a wrong rule and the theorem disagree (drawn from the seed)."""
    rng = np.random.default_rng(p.seed)
    eps = p.eps
    lam, _ = lambda_eps(eps)
    d = max(p.d, 2 if which != "no_pairing" else 3)
    Q = _random_similarity(d, rng)
    others = list(rng.uniform(0.1, 2.0, d))
    if which == "threshold_zero":        # one negative eigenvalue in (lambda_eps, 0): representable
        others[0] = float(rng.uniform(0.8 * lam, 0.2 * lam))
    elif which == "threshold_minus_one":  # one eigenvalue in (-1, lambda_eps): not representable
        others[0] = float(rng.uniform(-1 + 0.2 * (1 + lam), lam - 0.2 * (1 + lam)))
    elif which == "no_pairing":          # a double eigenvalue below lambda_eps: representable
        x = float(rng.uniform(*_below_lambda(lam, -0.99)))
        others[0] = others[1] = x
    return Q @ np.diag(others) @ np.linalg.inv(Q)


def _wrong_rule(p, which, rule):
    D = np.asarray(p.D, dtype=float) if p.D is not None else _rule_instance(p, which)
    r = decide(D, p.eps)
    w = np.linalg.eigvals(D)
    predicted = rule(w, r["lambda_eps"])
    vals = {"D": D.tolist(), "wrong_rule_predicts": predicted, "theorem_decides": r["representable"],
            "reason": r["reason"], "lambda_eps": r["lambda_eps"], "eigenvalues": r.get("eigenvalues")}
    if r["representable"] is None:
        return inconclusive("the theorem's decision is itself undecided here: " + r["reason"], **vals)
    certified = (r["residual"] <= r["tolerance"]) if r["representable"] else (r["uncertainty"] <= r["margin"])
    if r["representable"]:
        vals.update(residual=r["residual"], tolerance=r["tolerance"], theta=np.asarray(r["theta"]).tolist())
    else:
        vals.update(margin=r["margin"], uncertainty=r["uncertainty"])
    if not certified:
        return inconclusive("the theorem's decision is not certified here", **vals)
    mismatch = float(predicted != r["representable"])
    return Outcome(residual=mismatch, tolerance=0.0, values=vals,
                   message=f"wrong rule says representable={predicted}, certified decision {r['representable']}"
                           + (f" (theta constructed, residual {r['residual']:.1e})" if r["representable"] else
                              f" (margin {r['margin']:.3g} > error {r['uncertainty']:.1e})"))


def _real_eigs(w, scale):
    return np.sort(w.real[np.abs(w.imag) <= 1e-9 * max(1.0, scale)])


def _paired_below(w, thr, strict=True):
    re = _real_eigs(w, np.max(np.abs(w)))
    below = re[re < thr] if strict else re[re <= thr]
    i, ok = 0, True
    while i < len(below):
        j = i
        while j < len(below) and abs(below[j] - below[i]) <= 1e-8 * max(1.0, abs(below[i])):
            j += 1
        ok &= (j - i) % 2 == 0
        i = j
    return bool(ok)


@claim.falsifier({
    "threshold_zero": "Culver's first-order (exp) criterion, i.e. threshold 0 instead of lambda_eps: 'nonsingular, "
                      "and negative eigenvalues paired'.  A single eigenvalue in (lambda_eps, 0) is representable "
                      "(theta constructed).",
    "threshold_minus_one": "Threshold -1 (the bound lambda > -1 of Props 4.10/4.11 for x -> lambda x with free eps) "
                           "instead of lambda_eps: a single eigenvalue in (-1, lambda_eps) is NOT representable at "
                           "fixed eps.",
    "no_pairing": {"description": "Ignoring the pairing clause ('every real eigenvalue >= lambda_eps'): a double "
                                  "eigenvalue below lambda_eps is representable through a conjugate pair of "
                                  "non-real preimages.",
                   "fixed": {"d": 3}},
}, search=("seed",), fixed={"d": 2})
def _(p, variant):
    return _wrong_rule(p, variant, {
        "threshold_zero": lambda w, lam: bool(np.min(np.abs(w)) > 0 and _paired_below(w, 0.0)),
        "threshold_minus_one": lambda w, lam: _paired_below(w, -1.0),
        "no_pairing": lambda w, lam: bool(np.all(_real_eigs(w, np.max(np.abs(w))) >= lam)),
    }[variant])


@claim.falsifier("proof_step_realness", search=("seed",))
def proof_step_realness(p):
    """E4.3, proof of Thm 4.4 (l.3256): 'P^{-1} D_alpha P real implies P^{-1} D_z P real' fails for a real
    double alpha < lambda_eps: then P^{-1} D_alpha P = alpha I is real for EVERY P (here a random complex
    P), while P^{-1} diag(z, conj z) P is not; P = [[1, i], [1, -i]] must be chosen explicitly."""
    rng = np.random.default_rng(p.seed)
    lam, _ = lambda_eps(p.eps)
    alpha = float(rng.uniform(*_below_lambda(lam, -0.99)))
    z = _nonreal_preimage(alpha, p.eps)
    P = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    Pi = np.linalg.inv(P)
    A = Pi @ np.diag([alpha, alpha]) @ P
    Zm = Pi @ np.diag([z, z.conjugate()]) @ P
    P0 = np.array([[1, 1j], [1, -1j]])
    Z0 = np.linalg.inv(P0) @ np.diag([z, z.conjugate()]) @ P0
    kP = float(np.linalg.cond(P))
    tol = 16 * EPS * kP * max(abs(z), 1.0)
    return Outcome(residual=float(np.linalg.norm(Zm.imag)), tolerance=tol, values={
        "alpha": alpha, "z": [z.real, z.imag], "P": [[str(x) for x in row] for row in P],
        "imag_of_Pinv_Dalpha_P": float(np.linalg.norm(A.imag)), "imag_of_Pinv_Dz_P": float(np.linalg.norm(Zm.imag)),
        "imag_with_P0": float(np.linalg.norm(Z0.imag))},
        message=f"P^-1 (alpha I) P is real (|Im| = {np.linalg.norm(A.imag):.1e}) but |Im P^-1 D_z P| = "
                f"{np.linalg.norm(Zm.imag):.3g}; with P0 = [[1,i],[1,-i]]: {np.linalg.norm(Z0.imag):.1e}")


# ---------------------------------------------------------------------------
@claim.reproduction(name="catalogue_fixtures")
def fixtures(p):
    """Catalogue §2.1 T4.4 / §3.2 fixtures at eps = 1: theta for diag(-0.5, 0.3), the non-real preimage of
    -0.8 and f'(z), the zero x_0 of f_1, lambda_1, and the scale alpha < lambda_{1/2}/(-3) = 0.1278."""
    th = decide(np.diag([-0.5, 0.3]), 1.0)["theta"]
    z = _nonreal_preimage(-0.8, 1.0)
    fp = complex(f_eps_prime(np.complex128(z), 1.0))
    x0 = brentq(lambda x: float(f_eps(x, 1.0)), -4.0, -3.0, xtol=1e-300, rtol=8.9e-16)
    lam1, _ = lambda_eps(1.0)
    lam_half, _ = lambda_eps(0.5)
    parts = {
        "theta_diag(-0.5,0.3)": (max(abs(th[0, 0] + 7.53509772), abs(th[1, 1] + 2.27536778)), 0.5e-8),
        "theta_offdiag": (abs(th[0, 1]) + abs(th[1, 0]), 1e-12),
        "preimage_of_-0.8": (abs(z - (-10.2150897663036 + 4.79878355084543j)), 0.5e-13 * 12),
        "f_prime_there": (abs(fp - (-0.0187 + 0.0769j)), 0.5e-4 * 1.5),
        "zero_x0": (abs(x0 - (-3.37308928662621)), 0.5e-14 * 4),
        "lambda_1": (abs(lam1 - (-0.613498603167404704998)), 16 * EPS),
        "scale_eps_half": (abs(lam_half / -3 - 0.1278), 0.5e-4),
    }
    return Outcome.from_parts(parts, "catalogue fixtures at their quoted precision",
                              {"theta": th.tolist(), "z": [z.real, z.imag], "fprime": [fp.real, fp.imag],
                               "x0": x0, "lambda_1": lam1, "alpha_bound_eps_half": lam_half / -3})
