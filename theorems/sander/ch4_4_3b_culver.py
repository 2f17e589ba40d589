r"""§4.4.3 Universality of Momentum ResNets with linear residual functions (seed l.3018), with App.
4.A.3.4 (l.3289-3333): Culver's theorem, exp(R^{dxd}) = {M^2 : M in GL_d(R)}, and its diagonalisable
criterion.  Claim: ``sander.culver_exp_range`` (l.3018).
"""
from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla

from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

EPS = float(np.finfo(float).eps)       # 2.2e-16
U = EPS / 2                            # unit roundoff


# ===========================================================================
# 6. Culver: exp(R^{dxd}) = {M^2 : M in GL_d(R)}; diagonalisable criterion
claim_cul = Claim(
    id="sander.culver_exp_range",
    title="Range of the real matrix exponential (Culver 1966; Andrica-Rohan 2010)",
    label="Culver Thm 1 (quoted, l.3018; general form l.3291-3293)",
    section="4.4.3, 4.A.3.4",
    equation="(4.8)",
    lines=(3018, 3018),
    statement=r"\exp(\mathbb R^{d\times d})=\{M^2\mid M\in GL_d(\mathbb R)\};\ D\in D^{\mathbb C}_d(\mathbb R)\text{ is in it}"
              r"\iff D\text{ nonsingular and every eigenvalue }\lambda<0\text{ has even multiplicity}",
    status="holds",
    params=[
        Param.int("d", 4, 2, 10, "size of D", search=(2, 6)),
        Param.seed("seed of the instance"),
        Param.int("neg_pairs", 1, 0, 5, "number of repeated negative eigenvalues (-a, -a)", search=(0, 2)),
        Param.matrix("D", None, "your own real diagonalisable D (overrides d, seed, neg_pairs)", shape=("d", "d"),
                     families=("spd", "identity_like", "seed")),
    ],
    validate=lambda p: _cul_validate(p),
    notes="Literature result (not re-proved).  Numeric check on instances: for D satisfying the criterion, "
          "a real logarithm X is built from D's own eigen-decomposition (negative pairs -a, -a get the block "
          "[[log a, -pi], [pi, log a]] on their real 2-d eigenspace) and expm(X) = D, M = expm(X/2) real with "
          "M^2 = D; for D violating it the check reports inconclusive (use the falsifier).  AUDIT: the drawn D "
          "families were gaussian / orthogonal / symmetric / near_singular ..., which violate the criterion (a negative "
          "eigenvalue of odd multiplicity, or singular) on 5 of 20 sweep draws (seed 777001, all inconclusive: the "
          "numeric check tests the 'if' direction); draws are now the seeded generator (negative pairs, rotations, "
          "conjugated by a non-normal Q) half of the time and spd / identity_like otherwise.  A user's D is taken "
          "as given.",
    catalogue="sander_part23 §2.1 C4.1",
)


def _cul_validate(p):
    if p.get("D") is not None:
        D = p.D
        if D.shape[0] != D.shape[1]:
            raise ParamError(f"parameter D must be square, got shape {D.shape}")
    elif 2 * p.neg_pairs > p.d:
        raise ParamError(f"parameter neg_pairs={p.neg_pairs} needs 2*neg_pairs <= d={p.d}")


def _cul_instance(p):
    if p.get("D") is not None:
        return np.array(p.D, dtype=float)
    rng = np.random.default_rng(p.seed)
    blocks = []
    left = p.d
    for _ in range(p.neg_pairs):
        a = rng.uniform(0.3, 3.0)
        blocks.append(-a * np.eye(2))
        left -= 2
    while left >= 2 and rng.random() < 0.5:
        r, ph = rng.uniform(0.3, 3), rng.uniform(0.2, 3.0)
        blocks.append(r * np.array([[math.cos(ph), -math.sin(ph)], [math.sin(ph), math.cos(ph)]]))
        left -= 2
    for _ in range(left):
        blocks.append(np.array([[rng.uniform(0.2, 4.0)]]))
    Dl = sla.block_diag(*blocks)
    Q = rng.standard_normal((p.d, p.d)) + 2 * np.eye(p.d)
    return Q @ Dl @ np.linalg.inv(Q)


def _real_log(D, rtol=1e-8):
    """Real logarithm of a diagonalisable D satisfying Culver's criterion, from its eigen-decomposition;
    returns (X, cond(T)) or (None, reason)."""
    w, V = np.linalg.eig(D)
    d = D.shape[0]
    if np.min(np.abs(w)) < 1e-12 * max(1.0, np.max(np.abs(w))):
        return None, "D is singular"
    used = np.zeros(d, bool)
    cols, blocks = [], []
    for i in np.argsort(np.real(w)):
        if used[i]:
            continue
        lam = w[i]
        if abs(lam.imag) > rtol * abs(lam):            # complex pair
            j = [k for k in range(d) if not used[k] and k != i and abs(w[k] - np.conj(lam)) <= 1e-6 * abs(lam)]
            if not j:
                return None, "unpaired complex eigenvalue"
            used[i] = used[j[0]] = True
            v = V[:, i] if lam.imag > 0 else V[:, j[0]]
            L = np.log(lam if lam.imag > 0 else np.conj(lam))
            cols += [v.real, v.imag]
            # A [Re v, Im v] = [Re v, Im v] [[a, b], [-b, a]] for lambda = a + ib, v the eigenvector
            blocks.append(np.array([[L.real, L.imag], [-L.imag, L.real]]))
        else:                                           # real: with every computed eigenvalue of the same value
            J = [k for k in range(d) if not used[k] and abs(w[k] - lam) <= 1e-6 * abs(lam)]
            if lam.real < 0 and len(J) % 2:
                return None, f"negative eigenvalue {lam.real:.6g} of odd multiplicity {len(J)}"
            used[J] = True
            if len(J) == 1:
                cols.append(V[:, i].real)
            else:
                # A repeated eigenvalue is split by rounding into close reals OR conjugate pairs lam +- i O(u) (which
                # one depends on the BLAS kernel); for a pair the eigenvectors are v, conj v and their real parts
                # coincide (singular T).  Their span is the same real invariant subspace either way: take an
                # orthonormal basis Z of it from an ordered real Schur form.  D diagonalisable => Z^T D Z = lam I up
                # to rounding; a Jordan block (not diagonalisable) is reported, not logged as lam I.
                vals = [w[k] for k in J]

                def sel(re, im, vals=vals):
                    return bool(min(abs(complex(re, im) - z) for z in vals) <= 1e-6 * abs(vals[0]))
                _, Zs, sdim = sla.schur(D, output="real", sort=sel)
                if sdim != len(J):
                    return None, f"eigenvalue {lam.real:.6g}: invariant subspace of dimension {sdim}, not {len(J)}"
                Z = Zs[:, :sdim]
                dev = float(np.linalg.norm(Z.T @ D @ Z - lam.real * np.eye(sdim), 2))
                if dev > 1e-6 * abs(lam):
                    return None, (f"eigenvalue {lam.real:.6g} of multiplicity {sdim} is not semisimple (|Z^T D Z - lam I| "
                                  f"= {dev:.2e}): D is not diagonalisable")
                cols += list(Z.T)
            if lam.real > 0:
                blocks.append(math.log(lam.real) * np.eye(len(J)))
            else:
                a = -lam.real
                blocks += [np.array([[math.log(a), -math.pi], [math.pi, math.log(a)]])] * (len(J) // 2)
    T = np.column_stack(cols)
    B = sla.block_diag(*blocks)
    cT = float(np.linalg.cond(T))
    if not cT < 1 / (1e3 * U):
        return None, f"the eigenvector matrix is numerically singular (cond {cT:.3g}): D is not resolved as diagonalisable"
    return T @ B @ np.linalg.inv(T), cT


@claim_cul.numeric
def cul_numeric(p):
    """Criterion holds => a real X with expm(X) = D and a real M with M^2 = D are constructed."""
    D = _cul_instance(p)
    X, info = _real_log(D)
    if X is None and info.startswith("the eigenvector matrix"):
        return inconclusive(info)
    if X is None:
        return inconclusive(f"D violates Culver's criterion ({info}); not in exp(R^dxd) -- see the falsifier")
    cT = info
    nD = float(np.linalg.norm(D, 2))
    nX = float(np.linalg.norm(X, 2))
    E = sla.expm(X)
    M = sla.expm(X / 2)
    # error model: eigenvectors to u cond(T), expm backward error u ||X||: expm(X) = exp(X + dX), |dX| <= c u |X|, and
    # |exp(X + dX) - exp(X)| <= |dX| sup_t |e^((1-t)X)| |e^(tX)| (first order).  X = T B T^-1 with B block diagonal
    # (log|mu| I + rotations), so |e^(tX)| <= cond(T) m^t, m = max(1, max|mu(D)|): the factor cond(T)^2 m.  The
    # construction of X from the computed eigenvectors adds u cond(T)^2 |B| to X, amplified the same way.
    # D = 0.001 I (+ 3e-21 off the diagonal), X = log(0.001) I: scipy's expm is off by 1500 u ||D|| (covered: the
    # bound is ~1000 u there).  AUDIT: the former factor e^||X|| (Higham's kappa_exp bound) reached 1e76 on the seeded
    # d = 10 instances (non-normal Q: ||X|| ~ 175 while every |mu| <= 4), so the part could not fail there.
    m = max(1.0, float(np.max(np.abs(np.linalg.eigvals(D)))))
    tol = 64 * U * D.shape[0] * cT * cT * max(nD, cT * cT * m) * (1 + nX)
    parts = {"expm(X)=D": (float(np.linalg.norm(E - D, 2)), tol),
             "M^2=D": (float(np.linalg.norm(M @ M - D, 2)), tol)}
    return Outcome.from_parts(parts, "real logarithm and real square root of D", {
        "eigenvalues_D": [[complex(z).real, complex(z).imag] for z in np.linalg.eigvals(D)], "cond_T": cT,
        "norm_X": nX})


claim_cul.property(over=("d", "seed", "neg_pairs", "D"), max_examples=12)


def _expm2(x):
    """exp of the real 2x2 matrix x (4-vector, row-major) in closed form: X = sI + N, N^2 = delta I."""
    a, b, c, d = x
    s = (a + d) / 2
    delta = ((a - d) / 2) ** 2 + b * c
    if delta > 1e-16:
        r = math.sqrt(delta); ch, sh = math.cosh(r), math.sinh(r) / r
    elif delta < -1e-16:
        r = math.sqrt(-delta); ch, sh = math.cos(r), math.sin(r) / r
    else:
        ch, sh = 1.0 + delta / 2, 1.0 + delta / 6
    N = np.array([[(a - d) / 2, b], [c, (d - a) / 2]])
    return math.exp(s) * (ch * np.eye(2) + sh * N)


@claim_cul.falsifier("distinct_negative_eigenvalues")
def cul_falsifier(p):
    """D = diag(-1, -2) (negative eigenvalues of multiplicity 1): min over real 2x2 X of ||expm(X) - D||_F
    from 12 random starts stays ~0.5 (the infimum 1/2 is approached by [[-5/4, b], [-b, -7/4]], b -> 1/4, at the
    boundary where the eigenvalues merge), while the
    criterion-satisfying diag(-1, -1) = expm([[0, -pi], [pi, 0]]) has residual 0."""
    from scipy.optimize import minimize
    D = np.diag([-1.0, -2.0])
    rng = np.random.default_rng(0)
    best = math.inf
    for _ in range(12):
        x0 = rng.normal(0, 2, 4)
        r = minimize(lambda x: float(np.sum((_expm2(x) - D) ** 2)), x0, method="BFGS",
                     options={"gtol": 1e-9, "maxiter": 150})
        best = min(best, math.sqrt(max(r.fun, 0.0)))
    # the closed-form 2x2 exponential used by the search agrees with scipy's expm at the optimum
    best_x = r.x
    ok = float(np.linalg.norm(sla.expm(np.array([[0, -math.pi], [math.pi, 0]])) - np.diag([-1.0, -1.0])))
    agree = float(np.linalg.norm(_expm2(best_x) - sla.expm(best_x.reshape(2, 2))))
    return Outcome(residual=best, tolerance=64 * U * 4 * 2, values={"min_distance_found": best,
                                                                    "diag(-1,-1)_residual": ok,
                                                                    "closed_form_vs_scipy_expm": agree},
                   counterexample={"D": D.tolist()}, message="min ||expm(X) - diag(-1,-2)||_F over real X")
