"""§4.3.3 The role of momentum (seed l.2937-2956) and App. 4.A.0 (l.3128-3175): instability of tied
RevNet fixed points (Prop 4.1) and the consequence the thesis draws from it (erratum E4.4, with the
learning-to-optimise experiment of §4.5.3).  Claims: ``sander.revnet_instability`` (l.2947-3174),
``sander.revnet_not_asymptotically_stable`` (l.2951-3110).

Conventions (the two second-order forms, ``J(A, B)``) and the eigenvalue error model of every spectral check
here: ``theorems.sander._momentum``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from theorems import matrices as M
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._momentum import (_AB_of, _cplx, _draw_AB, _eig_tol, _J, _singular, _spectral_statement,
    _spectral_statement_mp, _validate_AB, AB_PARAMS, MP_DPS)

EPS = float(np.finfo(float).eps)


#: Prop 4.1 assumes A, B in GL_d: the sweep and the properties draw them from the matrix families that are invertible
#: (not rank_deficient, not near_singular, whose sigma_min ~ eps sigma_max the check's gate calls singular); the
#: whole-suite sweep of seed 20261126 drew a singular A or B in 5 of 20 draws (inconclusive, the hypothesis failing).
#: A singular matrix of your own still runs (`--param A=...`): inconclusive, with the weakened hypothesis reported
INVERTIBLE_FAMILIES = tuple(f for f in M.DEFAULT_FAMILIES if f not in ("rank_deficient", "near_singular"))
INVERTIBLE_AB_PARAMS = [
    Param.matrix("A", None, "D phi(x*) in GL_d(R); drawn from d and seed when omitted", shape=("d", "d"),
                 families=INVERTIBLE_FAMILIES),
    Param.matrix("B", None, "D psi(v*) in GL_d(R); drawn from d and seed when omitted", shape=("d", "d"),
                 families=INVERTIBLE_FAMILIES + ("spd", "non_commuting"), partner="A"),
] + [q for q in AB_PARAMS if q.name not in ("A", "B")]


# ===========================================================================
# 1. Prop 4.1 (headline)
revnet = Claim(
    id="sander.revnet_instability",
    title="A tied RevNet fixed point has a Jacobian eigenvalue |λ| ≥ 1, λ ≠ 1",
    label="Prop 4.1",
    section="4.3.3, 4.A.0",
    equation="(4.4), (4.10)-(4.12)",
    lines=(2947, 3174),
    statement=r"J(A,B)=\begin{pmatrix}I_d&A\\B&I_d+BA\end{pmatrix},\ A,B\in GL_d(\mathbb R)\ \Longrightarrow\ "
              r"\exists\lambda\in\operatorname{Sp}J(A,B):\ |\lambda|\ge1,\ \lambda\ne1",
    status="holds",
    bound=True,
    params=INVERTIBLE_AB_PARAMS,
    validate=_validate_AB,
    notes="Bound: max |lambda| >= 1 over the eigenvalues lambda != 1; tightness = 1 / max |lambda| (the constant 1 "
          "over the larger side).  det J = 1 makes the product of the |lambda| equal 1, so max |lambda| = 1 iff "
          "every |lambda| = 1: the elliptic case, Sp(AB) real in [-4, 0) (each mu gives the pair of roots of "
          "lambda^2 - (2+mu) lambda + 1 on the unit circle).  Witnesses of equality: d = 1, A = 1, B = -1 (mu = -1, "
          "lambda = e^{+-i pi/3}); d = 2, A = I, B = diag(-0.5, -2.4) (E4.4's elliptic instance); d = 3, A = I, "
          "B = diag(-1, -2, -3.5).  The sharpened falsifier (max |lambda| >= 1/0.9) is refuted there.  "
          "Numeric check: eig of J in float64 with the module's eigenvalue error model; an eigenvalue within "
          "the model's distance of 1 counts as 1, a modulus within it of 1 counts as modulus 1 (the elliptic "
          "case Sp(AB) in (-4,0), where all |lambda| = 1 exactly, is then recognised).  Singular A or B "
          "(sigma_min <= n eps sigma_max) is reported inconclusive: the hypothesis fails, not the claim.  "
          "Also checked on each instance: det J = 1 (Schur complement) and that every eigenvalue solves "
          "lambda^2 - (2+mu) lambda + 1 = 0 for some mu in Sp(AB) (4.12).  Sharp form (found here): chi_J(lambda) = "
          "det((lambda-1)^2 I - lambda BA) is a polynomial identity needing no invertibility (symbolic check), so the "
          "conclusion holds iff AB is not nilpotent; the catalogue's 'A invertible and AB not nilpotent' (P4.1(d)) "
          "is more than needed (its own example A = diag(1, 0) has A singular).  The value weakened_hypothesis "
          "reports it, also on inconclusive instances.  Proof typo: "
          "'(u, v) is an eigenvector' should be (u, w) (l.3154, 3168; catalogue E4.3).",
    catalogue="sander_part23 §2.1 P4.1; §3.2; §5 item 2",
)


def _revnet_outcome(A, B, gate=True, label="", backend="numpy"):
    d = A.shape[0]
    sA, smA = _singular(A)
    sB, smB = _singular(B)
    J, lam, tol, distinct, max_mod = _spectral_statement(A, B)
    n = 2 * d
    det = float(np.linalg.det(J))
    # det J = 1: LU backward error 4 n^2 eps |J|, amplified by |J^{-1}| (|d det/det| <= |J^{-1}| |dJ| n)
    det_res, tol_det = abs(det - 1.0), 4 * n * n * EPS * float(np.linalg.cond(J))
    eps_used = EPS
    if backend == "mpmath":
        lam, tol, distinct, max_mod, _, det_res, tol_det, det = _spectral_statement_mp(A, B)
        eps_used = 10.0 ** -MP_DPS
    mu, Vm = np.linalg.eig(A @ B)
    tol_mu = _eig_tol(A @ B, Vm) * (eps_used / EPS)
    values = {"max_modulus": max_mod, "det_J": det, "eigenvalues": _cplx(lam),
              "eig_tolerance": tol, "spectrum_AB": _cplx(mu), "sigma_min_A": smA, "sigma_min_B": smB,
              "weakened_hypothesis": {"AB_not_nilpotent": bool(np.any(np.abs(mu) > _eig_tol(A @ B, Vm))),
                                      "conclusion_holds": bool(np.any(distinct) and max_mod >= 1 - tol)},
              "elliptic_all_modulus_1": bool(np.all(np.abs(np.abs(lam) - 1) <= max(tol, 4 * EPS)))}
    if backend == "mpmath":
        values["precision"] = f"mpmath, {MP_DPS} digits (eigenvalues rounded to float for the record)"
    if gate and (sA or sB):
        which = " and ".join(nm for nm, s_ in (("A", sA), ("B", sB)) if s_)
        return inconclusive(f"the hypothesis of Prop 4.1 (A, B invertible) fails: {which} singular "
                            f"(sigma_min(A) = {smA:.3g}, sigma_min(B) = {smB:.3g}); the claim says nothing here",
                            **values)
    if gate and not np.any(distinct):
        # (4.12): the exact eigenvalues are 1 + (mu +- sqrt(mu^2 + 4 mu))/2, mu in Sp(AB) (known within tol_mu).
        # With A, B invertible, mu != 0, so some exact eigenvalue is not 1; the computed ones are within tol of
        # the exact ones, so 'every computed eigenvalue is within tol of 1' is forced when the predicted
        # separation is below 2 tol (+ sqrt(tol_mu) for the error in mu): float64 cannot resolve the claim.
        mu_c = mu.astype(complex)
        sep = float(np.max(np.abs(mu_c) + np.abs(np.sqrt(mu_c * mu_c + 4 * mu_c))) / 2)
        if sep <= 2 * tol + math.sqrt(tol_mu):
            return inconclusive(f"A, B are invertible but Sp(AB) is so close to 0 (max |mu| = "
                                f"{float(np.max(np.abs(mu))):.3g}) that the eigenvalues 1 + (mu +- sqrt(mu^2+4mu))/2 "
                                f"of J lie within {sep:.3g} of 1, below the eigenvalue error {tol:.3g}: the "
                                f"precision cannot separate them from 1", **values)
    r_inst = max(0.0, 1.0 - max_mod)
    parts = {"instability": (r_inst, tol), "det_J": (det_res, tol_det)}
    if max_mod > 0:
        # bound max |lambda| >= 1 (lambda != 1): tightness = 1 / max |lambda|, 1 in the elliptic case
        values["tightness"] = 1.0 / max_mod
    if backend != "mpmath":
        # quadratic rule (4.12): q(l, m) = l^2 - (2+m) l + 1, perturbed by dl <= tol and dm <= tol_mu
        qres, qtol = 0.0, 0.0
        for l in lam:
            q = np.abs(l * l - (2 + mu) * l + 1)
            k = int(np.argmin(q))
            m = mu[k]
            t = abs(2 * l - 2 - m) * tol + abs(l) * tol_mu + 8 * EPS * (abs(l) ** 2 + abs(2 + m) * abs(l) + 1)
            if q[k] / t > qres / max(qtol, 1e-300):
                qres, qtol = float(q[k]), float(t)
        parts["quadratic_rule"] = (qres, qtol if qtol > 0 else 8 * EPS)
    msg = (f"{label}max |lambda| over the eigenvalues != 1 (within {tol:.2e}) is {max_mod:.15g}"
           if np.any(distinct) else f"{label}every eigenvalue of J equals 1 within {tol:.2e}: Sp J = {{1}}")
    return Outcome.from_parts(parts, msg, values)


@revnet.numeric(backends=("numpy", "mpmath"))
def _(p):
    """eig of J(A, B): some eigenvalue has |lambda| >= 1 (within rounding) and is not 1; det J = 1; (4.12).
    Backend mpmath: the same at 60 digits (for near-defective J, e.g. Sp(AB) near -4 or 0)."""
    A, B = _AB_of(p)
    return _revnet_outcome(A, B, backend=p.backend)


revnet.property(over=("d", "A", "B"), max_examples=20)

#: instances where the bound is an equality (every |lambda| = 1): Sp(AB) real in [-4, 0)
REVNET_EQUALITY = [
    {"d": 1, "A": np.array([[1.0]]), "B": np.array([[-1.0]])},
    {"d": 2, "A": np.eye(2), "B": np.diag([-0.5, -2.4])},
    {"d": 3, "A": np.eye(3), "B": np.diag([-1.0, -2.0, -3.5])},
]
revnet.tightness(over=("d", "A", "B"), max_examples=20, witnesses=REVNET_EQUALITY)


#: J(A, B) as printed in Prop 4.1, and its nearest misprints (mutants): the same identities must fail for them
J_FORMS = {
    "stated": lambda I, A, B: sp.BlockMatrix([[I, A], [B, I + B * A]]).as_explicit(),
    "AB_for_BA": lambda I, A, B: sp.BlockMatrix([[I, A], [B, I + A * B]]).as_explicit(),
    "sign_flipped": lambda I, A, B: sp.BlockMatrix([[I, A], [B, I - B * A]]).as_explicit(),
}


def _revnet_identities(form):
    """Number of the identities of the symbolic check that do not expand to 0 for J built by ``form``."""
    lam = sp.Symbol("lambda")
    bad = 0
    for d in (1, 2):
        A = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"a{i}{j}"))
        B = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"b{i}{j}"))
        I = sp.eye(d)
        J = J_FORMS[form](I, A, B)
        bad += sp.expand(J.det(method="berkowitz") - 1) != 0
        bad += sp.expand((J - sp.eye(2 * d)).det(method="berkowitz") - (-1) ** d * A.det() * B.det()) != 0
        chiJ = (lam * sp.eye(2 * d) - J).det(method="berkowitz")
        schur = ((lam - 1) ** 2 * I - lam * B * A).det(method="berkowitz")
        bad += sp.expand(chiJ - schur) != 0
        t = sp.Symbol("t")
        chiBA = (t * I - B * A).det(method="berkowitz")
        bad += sp.expand(schur - sp.expand(lam ** d * chiBA.subs(t, (lam - 1) ** 2 / lam))) != 0
    mu = sp.Symbol("mu")
    q = lam ** 2 - (2 + mu) * lam + 1
    r1, r2 = sp.solve(q, lam)
    bad += sp.expand(r1 * r2 - 1) != 0          # product of the roots is 1
    bad += sp.expand(q.subs(lam, 1) + mu) != 0  # lambda = 1 is a root iff mu = 0
    bad += sp.expand(sp.expand((lam - 1) ** 2 - lam * mu) - q) != 0
    return int(bad)


@revnet.symbolic(timeout=60)
def _(p):
    """d = 1, 2 with symbolic blocks: det J = 1, det(J - I) = (-1)^d det A det B, det(lambda I - J) =
    det((lambda-1)^2 I - lambda BA) = lambda^d chi_BA((lambda-1)^2/lambda), i.e. prod (lambda^2-(2+mu)lambda+1)."""
    bad = _revnet_identities("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy det (berkowitz) + expand", "instances": ["d=1", "d=2 (8 free entries)"],
        "proved": "det J = 1; det(J-I) = (-1)^d det A det B; chi_J(lambda) = det((lambda-1)^2 I - lambda BA) "
                  "= lambda^d chi_BA((lambda-1)^2/lambda) = prod_mu (lambda^2-(2+mu)lambda+1); roots multiply "
                  "to 1; lambda=1 iff mu=0"},
        message="number of identities that did not expand to zero")


@revnet.mutant({"AB_for_BA": "J = [[I, A], [B, I + AB]] (product in the wrong order): det J != 1 for d = 2",
                "sign_flipped": "J = [[I, A], [B, I - BA]] (sign of BA flipped): det J != 1"}, timeout=60)
def _(p, variant):
    """The printed Jacobian perturbed, through the same identities: some must fail to expand to zero."""
    bad = _revnet_identities(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities of the symbolic check fail for the mutated J ({variant})")


@revnet.falsifier("A_zero", fixed={"d": 3}, search=("seed",))
def _(p):
    """Hypothesis dropped: A = 0 (B drawn). J is unipotent, Sp J = {1}: no eigenvalue other than 1."""
    _, B = _draw_AB(p.d, p.seed)
    return _revnet_outcome(np.zeros((p.d, p.d)), B, gate=False, label="A = 0: ")


@revnet.falsifier("nilpotent_AB", fixed={"d": 2}, search=("seed",))
def _(p):
    """A invertible-or-not with AB nilpotent: A = N B^{-1}, N = [[0,1],[0,0]] (strict upper shift), B drawn.
    Then Sp J = {1} again (catalogue: A = [[0,1],[0,0]], B = I)."""
    _, B = _draw_AB(p.d, p.seed)
    N = np.eye(p.d, k=1)
    A = N @ np.linalg.inv(B)
    return _revnet_outcome(A, B, gate=False, label="AB nilpotent: ")


@revnet.falsifier("momentum_gamma_0.9", fixed={"d": 3})
def _(p):
    """Momentum ResNet instead of RevNet (gamma = 0.9, F = D f = -0.1 I): J_m = [[g I, (1-g) F], [g I, I + (1-g) F]]
    has spectral radius 0.9487 < 1 (det = g^d): an attracting fixed point, no eigenvalue with |lambda| >= 1."""
    g, d = 0.9, p.d
    F, I = -0.1 * np.eye(d), np.eye(d)
    Jm = np.block([[g * I, (1 - g) * F], [g * I, I + (1 - g) * F]])
    lam, V = np.linalg.eig(Jm)
    tol = _eig_tol(Jm, V)
    distinct = np.abs(lam - 1) > tol
    max_mod = float(np.max(np.abs(lam[distinct]))) if np.any(distinct) else 0.0
    return Outcome(residual=max(0.0, 1 - max_mod), tolerance=tol,
                   values={"max_modulus": max_mod, "det_Jm": float(np.linalg.det(Jm)), "gamma_pow_d": g ** d,
                           "eigenvalues": _cplx(lam), "eig_tolerance": tol},
                   message=f"momentum gamma = {g}: spectral radius {max_mod:.4f} < 1, det J_m = {np.linalg.det(Jm):.6f}")


@revnet.reproduction(name="elliptic_fraction")
def _(p):
    """The catalogue's 20000 random (A, B) (d <= 6, scales U(0.01, 3)): 9.4% with all |lambda| = 1, and
    min over draws of max |lambda| = 1.000000000000 (12 decimals)."""
    quoted, n = 0.094, 20000
    rng = np.random.default_rng(12345)
    ds = rng.integers(1, 7, n)
    hits, min_max, max_det, min_dist = 0, math.inf, 0.0, math.inf
    for d in range(1, 7):
        k = int(np.sum(ds == d))
        sc = rng.uniform(0.01, 3.0, (k, 2))
        A = sc[:, :1, None] * rng.standard_normal((k, d, d))
        B = sc[:, 1:, None] * rng.standard_normal((k, d, d))
        I = np.broadcast_to(np.eye(d), (k, d, d))
        J = np.concatenate([np.concatenate([I, A], 2), np.concatenate([B, I + B @ A], 2)], 1)
        lam = np.linalg.eigvals(J)
        rho = np.max(np.abs(lam), axis=1)
        hits += int(np.sum(rho < 1 + 1e-9))   # the catalogue's 1e-9 criterion
        min_max = min(min_max, float(rho.min()))
        max_det = max(max_det, float(np.max(np.abs(np.linalg.det(J) - 1))))
        min_dist = min(min_dist, float(np.min(np.abs(lam - 1))))
    frac = hits / n
    # two independent Monte Carlo estimates of the same proportion: 3 standard errors of the difference
    se = math.sqrt(2 * quoted * (1 - quoted) / n)
    return Outcome.from_parts({"elliptic_fraction": (abs(frac - quoted), 3 * se),
                               "min_max_modulus_12_decimals": (abs(min_max - 1.0), 5e-13)},
                              f"fraction of draws with max |lambda| < 1 + 1e-9: {frac:.4f} (catalogue 0.094); "
                              f"min max |lambda| = {min_max:.12f}",
                              {"fraction": frac, "quoted": quoted, "draws": n, "standard_error_diff": se,
                               "min_max_modulus": min_max, "max_abs_detJ_minus_1": max_det,
                               "min_distance_Sp_J_to_1": min_dist,
                               "catalogue_sample_extremes": {"max_abs_detJ_minus_1": 5.1e-13,
                                                             "min_distance_Sp_J_to_1": 1.7e-3}})


# ===========================================================================
# 2. E4.4: the consequence drawn from Prop 4.1
stab = Claim(
    id="sander.revnet_not_asymptotically_stable",
    title="Consequence of Prop 4.1: a tied RevNet fixed point cannot be asymptotically stable",
    label="Prop 4.1 (consequence)",
    section="4.3.3, 4.5.3",
    equation="(4.4)",
    lines=(2951, 3110),
    statement=r"(v^*,x^*)\text{ cannot be a stable fixed point; a RevNet cannot have converging iterations}",
    status="erratum",
    corrected=r"\rho\bigl(J(A,B)\bigr)\ge1\text{ for all }A,B\ (\det D\Psi\equiv1),\text{ so }(v^*,x^*)"
              r"\text{ is never asymptotically stable; it can be Lyapunov stable (elliptic case)}",
    params=AB_PARAMS + [Param.int("points", 20, 1, 500, "random points at which det D Psi is evaluated",
                                  search=(5, 30))],
    validate=_validate_AB,
    notes="Erratum E4.4 (wording).  Corrected form checked: rho(J) >= 1 (within the eigenvalue error model) for "
          "every A, B, invertible or not, because det J = 1; and det D Psi = 1 at random points of a nonlinear "
          "tied RevNet (tanh layers), with the analytic Jacobian.  Printed form refuted by a linear tied RevNet "
          "in the elliptic case Sp(AB) = {-0.5, -2.4} in (-4, 0): all |lambda| = 1 exactly, J diagonalisable, so "
          "J^n stays bounded by kappa(V) and the fixed point is Lyapunov stable.  'Cannot have converging "
          "iterations' fails at a saddle: the stable-eigenvector orbit converges (exactly; in float64 round-off "
          "destroys it after ~20 steps).",
    catalogue="sander_part23 §2.1 P4.1(b); §4 E4.4",
)


def _tied_revnet(d, rng, width=None):
    """phi(x) = W2 tanh(W1 x + b1), psi(v) = U2 tanh(U1 v + c1): analytic Jacobian of Psi."""
    m = width or 2 * d
    W1, W2 = rng.standard_normal((m, d)), rng.standard_normal((d, m)) / math.sqrt(m)
    U1, U2 = rng.standard_normal((m, d)), rng.standard_normal((d, m)) / math.sqrt(m)
    b, c = rng.standard_normal(m), rng.standard_normal(m)

    def jac(v, x):
        A = W2 @ (np.cosh(W1 @ x + b) ** -2 * W1.T).T
        w = v + W2 @ np.tanh(W1 @ x + b)
        B = U2 @ (np.cosh(U1 @ w + c) ** -2 * U1.T).T
        return _J(A, B)
    return jac


@stab.numeric
def _(p):
    """rho(J(A, B)) >= 1 within rounding (no hypothesis on A, B), and det D Psi = 1 at random points."""
    A, B = _AB_of(p)
    J, lam, tol, _, _ = _spectral_statement(A, B)
    rho = float(np.max(np.abs(lam)))
    rng = np.random.default_rng(p.seed + 1)
    jac = _tied_revnet(A.shape[0], rng)
    dets, dtol = [], 0.0
    for _ in range(p.points):
        Jp = jac(rng.standard_normal(A.shape[0]), rng.standard_normal(A.shape[0]))
        dets.append(float(np.linalg.det(Jp)))
        dtol = max(dtol, 4 * Jp.shape[0] ** 2 * EPS * float(np.linalg.cond(Jp)))
    dets = np.array(dets)
    return Outcome.from_parts({"spectral_radius_ge_1": (max(0.0, 1 - rho), tol),
                               "det_DPsi_eq_1": (float(np.max(np.abs(dets - 1))), dtol)},
                              f"rho(J) = {rho:.15g}; det D Psi in [{dets.min():.15g}, {dets.max():.15g}]",
                              {"spectral_radius": rho, "eig_tolerance": tol, "det_DPsi_min": float(dets.min()),
                               "det_DPsi_max": float(dets.max())})


stab.property(over=("d", "seed", "A", "B"), max_examples=15)


def _stab_identities(form):
    """From J(A, B) built by ``form`` (J_FORMS): det J - 1 for symbolic 2x2 blocks (det D Psi = 1, so the product
    of the |lambda| is 1 and rho(J) >= 1); for d = 1 the characteristic polynomial of J itself, its discriminant
    against mu (mu + 4), mu = ab (< 0 on (-4, 0): a conjugate pair), and the product of its two roots against 1
    (|lambda|^2 = lambda conj(lambda) = 1 in that elliptic case).  Returns the identities that failed."""
    A = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"a{i}{j}"))
    B = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"b{i}{j}"))
    bad = int(sp.expand(J_FORMS[form](sp.eye(2), A, B).det(method="berkowitz") - 1) != 0)
    a, b, lam = sp.symbols("a b lambda", real=True)
    J1 = J_FORMS[form](sp.eye(1), sp.Matrix([[a]]), sp.Matrix([[b]]))
    chi = sp.expand((lam * sp.eye(2) - J1).det())
    mu = a * b
    bad += int(sp.expand(sp.discriminant(chi, lam) - mu * (mu + 4)) != 0)
    r1, r2 = sp.solve(chi, lam)
    bad += int(sp.expand(r1 * r2 - 1) != 0)
    return bad


@stab.symbolic(timeout=30)
def _(p):
    """det J(A, B) = 1 (2x2 blocks), so rho(J) >= 1; d = 1: chi_J has discriminant mu(mu+4) (< 0 on -4 < mu < 0)
    and roots multiplying to 1, so in the elliptic case both have |lambda| = 1 (Lyapunov, not asymptotic)."""
    bad = _stab_identities("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy berkowitz det, discriminant and solve of chi_J, expand",
        "instances": ["d=2 (8 free entries)", "d=1 (a, b real)"],
        "proved": "det J = 1; d=1: disc chi_J = mu(mu+4) < 0 on (-4,0) and the roots multiply to 1, so |lambda| = 1"},
        message="identities that did not expand to zero")


@stab.mutant({"sign_flipped": "J = [[I, A], [B, I - BA]]: det J = 1 - 2ab (d = 1), no longer volume preserving",
              "AB_for_BA": "J = [[I, A], [B, I + AB]]: det J != 1 for non-commuting 2x2 blocks"}, timeout=30)
def _(p, variant):
    """The printed Jacobian perturbed, through the same identities: some must fail."""
    bad = _stab_identities(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities fail for the mutated J ({variant})")


@stab.falsifier("stated")
def _(p):
    """Printed 'cannot be a stable fixed point', on the linear tied RevNet A = I, B = diag(-0.5, -2.4):
    Sp(AB) lies in (-4, 0) with a margin larger than its eigenvalue error, so every |lambda| = 1 exactly,
    the lambda are simple (J diagonalisable) and sup_n |J^n| <= kappa(V): Lyapunov stable."""
    A, B = np.eye(2), np.diag([-0.5, -2.4])
    mu, Vm = np.linalg.eig(A @ B)
    tol_mu = _eig_tol(A @ B, Vm)
    real = bool(np.all(np.imag(mu) == 0))
    mu = np.sort(np.real(mu))
    # margin of the elliptic certificate: distance of Sp(AB) to {-4, 0} and between its simple values
    margin = min(float(np.min(mu + 4)), float(np.min(-mu)), float(np.min(np.diff(mu))) / 2 if len(mu) > 1 else 1.0)
    if not real:
        margin = -1.0
    J = _J(A, B)
    lam, V = np.linalg.eig(J)
    kappa = float(np.linalg.cond(V))
    P, sup = np.eye(4), 0.0
    for _ in range(10_000):
        P = P @ J
        sup = max(sup, float(np.linalg.norm(P, 2)))
    return Outcome(residual=margin, tolerance=tol_mu,
                   values={"spectrum_AB": mu.tolist(), "moduli": np.abs(lam).tolist(), "kappa_V": kappa,
                           "sup_n_le_1e4_norm_Jn": sup, "elliptic_margin": margin},
                   message=f"Sp(AB) = {mu.tolist()} lies in (-4,0) with margin {margin:.3g} > error {tol_mu:.1e}: all "
                           f"|lambda| = 1, sup_(n<=1e4) |J^n| = {sup:.4g} <= kappa(V) = {kappa:.4g}; the fixed point "
                           "is Lyapunov stable, so 'cannot be stable' is refuted")


@stab.falsifier("converging_iterations")
def _(p):
    """Printed 'a RevNet cannot have converging iterations': at the saddle A = B = 1 (d = 1), J = [[1,1],[1,2]]
    has the exact eigenvalue (3 - sqrt 5)/2 < 1, and the orbit of its eigenvector converges to the fixed point."""
    Js = sp.Matrix([[1, 1], [1, 2]])
    ls = sp.Rational(3, 2) - sp.sqrt(5) / 2
    v = sp.Matrix([1, ls - 1])                      # (J - ls I) v = 0 exactly
    exact = int(any(sp.simplify(e) != 0 for e in (Js - ls * sp.eye(2)) * v))
    import mpmath as mp
    with mp.workdps(120):
        Jm = mp.matrix([[1, 1], [1, 2]])
        z = mp.matrix([1, (mp.mpf(3) - mp.sqrt(5)) / 2 - 1])
        norms = []
        for n in range(1, 201):
            z = Jm * z
            if n in (10, 50, 100, 200):
                norms.append(float(mp.norm(z)))
    # stated claim 'no orbit converges' is violated by 1 - |lambda_s| > 0 (exact, so tolerance 0)
    gap = 1 - float(ls) if exact == 0 else 0.0
    return Outcome(residual=gap, tolerance=0.0,
                   values={"lambda_stable": float(ls), "orbit_norm_n_10_50_100_200_mp120": norms,
                           "eigvec_identity_exact": exact == 0},
                   message=f"J v = {float(ls):.6f} v exactly (sympy); the orbit J^n v -> 0 "
                           f"(120-digit norms {norms[0]:.2e} ... {norms[-1]:.2e})")


@stab.reproduction(name="nonlinear_neutral_orbit")
def _(p):
    """Catalogue E4.4: phi(x) = Ax - x^3, psi = B., AB = diag(-0.5, -2.4), a 1e-2 perturbation neither converges
    nor escapes over 2e4 steps (quoted |z_n| = 0.0263, 0.0135, 0.0138 at n = 10, 1e3, 2e4; min 0.0107)."""
    A, B = np.eye(2), np.diag([-0.5, -2.4])
    rng = np.random.default_rng(0)
    z0 = rng.standard_normal(4)
    z0 *= 1e-2 / np.linalg.norm(z0)           # the catalogue does not give its perturbation direction
    v, x = z0[:2].copy(), z0[2:].copy()
    norms, n_end = {}, 20_000
    tail_min, tail_max = math.inf, 0.0
    marks = set(np.unique(np.geomspace(1, n_end, 120).astype(int)).tolist())
    trace_n, trace_r = [], []
    for n in range(1, n_end + 1):
        v = v + (A @ x - x ** 3)
        x = x + B @ v
        r = math.hypot(*v, *x)
        if n in (10, 1000, 20000):
            norms[n] = r
        if n in marks:
            trace_n.append(float(n))
            trace_r.append(r)
        if n > n_end - 10_000:
            tail_min, tail_max = min(tail_min, r), max(tail_max, r)
    quoted = {10: 0.0263, 1000: 0.0135, 20000: 0.0138}
    # the direction is unspecified, so only the order of magnitude is comparable: factor 3 either way
    worst = max(abs(math.log(norms[k] / quoted[k])) for k in quoted)
    return Outcome(residual=worst, tolerance=math.log(3.0),
                   values={"norms": {str(k): v_ for k, v_ in norms.items()}, "quoted": {str(k): v_ for k, v_ in quoted.items()},
                           "tail_min": tail_min, "tail_max": tail_max, "quoted_tail_min": 0.0107,
                           "plot": {"kind": "semilogx", "x": trace_n, "series": {"|z_n|": trace_r},
                                    "xlabel": "n", "ylabel": "|z_n - z*|",
                                    "title": "tied nonlinear RevNet, elliptic fixed point: neither converges nor escapes"}},
                   message=f"|z_n| at n = 10, 1e3, 2e4: {[round(norms[k], 4) for k in quoted]}; last 1e4 steps in "
                           f"[{tail_min:.4f}, {tail_max:.4f}] (order of magnitude of the catalogue's numbers)")
