"""Menon §6.2 with §8 (seed lines 446-456): the entropy of group orbits (Thm 10) and the constant c_d (E11).

Conventions (catalogue menon §1, §2.5): ``lam`` sorted decreasingly, ``sigma = lam**N``;
``Qs = [Q_N, ..., Q_0]``; the Frobenius-orthonormal basis of so(d) is ``alpha_kl`` (8.7), so
``dQ = Q alpha da`` are Frobenius-orthonormal coordinates on O_d.  The orbit generators are the
rotated ones, ``A_p = Q_p alpha Q_p^T`` acting by ``Q_p -> exp(t A_p) Q_p = Q_p exp(t alpha)``
(catalogue §2.5 Lemma 2: the literal fixed-frame generators give a unitarily equivalent Gram).
"""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import sympy as sp

from solvers import dln
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import EPS, alpha, balanced_instance, pairs, rng_for

from ._entropy import _c_d, _poly_det, _rot


def _printed_factor(si, sj, N, expo=None):
    """The pair factor of (6.2) as printed, (s_i^2 - s_j^2)/(s_i^{2/N} - s_j^{2/N}); exact ties take
    the limit N s^{2-2/N}.  ``expo`` replaces 2/N (falsifier)."""
    e = 2 / N if expo is None else expo
    if si == sj:
        return (2 / e) * si ** (2 - e)
    return (si ** 2 - sj ** 2) / (si ** e - sj ** e)


def _printed_factor_error(si, sj, N):
    """Relative rounding error of :func:`_printed_factor`: the two subtractions cancel."""
    if si == sj:
        return 4 * EPS
    e = 2 / N
    return EPS * (4 + (si ** 2 + sj ** 2) / abs(si ** 2 - sj ** 2) + (si ** e + sj ** e) / abs(si ** e - sj ** e))


def _orbit_generators(lam, Qs):
    """Ambient tangent vectors of the O_d^{N-1} orbit through z(lam, Qs): for p = 1..N-1 and k < l,
    d/dt z(lam, ..., Q_p exp(t alpha_kl), ...) at t = 0 (product rule on W_s = Q_s Lam Q_{s-1}^T)."""
    d, N = len(lam), len(Qs) - 1
    Lam = np.diag(lam)
    Q = lambda s: Qs[N - s]  # noqa: E731
    rows = []
    for p in range(1, N):
        for k, l in pairs(d):
            dQp = Q(p) @ alpha(d, k, l)
            dW = []
            for s in range(N, 0, -1):  # paper order W_N..W_1
                m = np.zeros((d, d))
                if s == p:
                    m = m + dQp @ Lam @ Q(s - 1).T
                if s - 1 == p:
                    m = m + Q(s) @ Lam @ dQp.T
                dW.append(m.ravel())
            rows.append(np.concatenate(dW))
    return np.array(rows).reshape(len(rows), N * d * d)


def _lam_instance(p, min_gap=0.05):
    """lam (sorted decreasingly) and Qs from p.lam / p.seed; p.tie sets lam_2 = lam_1."""
    if p.lam is not None:
        lam = np.sort(np.asarray(p.lam, dtype=float))[::-1]
        rng = rng_for(p.seed)
        Qs = [dln.random_orthogonal(len(lam), rng) for _ in range(p.N + 1)]
    else:
        lam, Qs, _ = balanced_instance(p.d, p.N, p.seed, lam_range=(0.4, 1.8), min_gap=min_gap)
    if p.tie and len(lam) >= 2:
        lam = lam.copy()
        lam[1] = lam[0]
    return lam, Qs


def _validate_lam(p):
    if p.lam is not None and not (1 <= len(p.lam) <= 6):
        raise ParamError("parameter lam must have between 1 and 6 entries (it sets d)")


def _orbit_density(lam, Qs):
    """sqrt det Gram of the orbit generators, its condition number and the generator count."""
    V = _orbit_generators(lam, Qs)
    n = V.shape[0]
    if n == 0:
        return 1.0, 1.0, 0
    G = V @ V.T
    sign, logdet = np.linalg.slogdet(G)
    cond = float(np.linalg.cond(G))
    return (float(np.exp(0.5 * logdet)) if sign > 0 else 0.0), cond, n


# ---------------------------------------------------------------------------
# menon.entropy_formula (Thm 10)
entropy_formula = Claim(
    id="menon.entropy_formula",
    title="Entropy formula: the volume of the fibre O_W is c_d^{N-1} sqrt(van(Σ²)/van(Σ^{2/N}))",
    label="Thm 10",
    section="6.2, 8",
    equation="(6.2)-(6.3), (8.10)",
    lines=(446, 456),
    statement=r"\operatorname{vol}(\mathcal O_W)=c_d^{N-1}\sqrt{\frac{\operatorname{van}(\Sigma^2)}"
              r"{\operatorname{van}(\Sigma^{2/N})}}=c_d^{N-1}\prod_{1\le i<j\le d}\sqrt{\frac{\sigma_i^2-\sigma_j^2}"
              r"{\sigma_i^{2/N}-\sigma_j^{2/N}}}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width (ignored when lam is given)", search=(1, 4)),
        Param.int("N", 4, 1, 8, "depth", search=(1, 6)),
        Param.seed("seed of lam and of the frame Q_N..Q_0"),
        Param.bool("tie", False, "set lam_2 = lam_1 (the pair factor then takes its limit N sigma^{2-2/N})"),
        Param.vector("lam", None, "lam = Sigma^{1/N} (positive; overrides d); default drawn from the seed",
                     low=1e-3, high=10.0),
    ],
    validate=_validate_lam,
    notes="Checked is the Sigma-dependence: sqrt det of the Gram matrix of the orbit generators "
          "(Frobenius-orthonormal so(d) coordinates on each of the N-1 free factors) against the "
          "product of pair factors.  The orbit map O_d^{N-1} -> O_W is injective for invertible Lambda "
          "and the Gram determinant is constant on the orbit (invariance), so vol(O_W) = vol(O_d)^{N-1} "
          "times this density; the constant c_d = vol(O_d) is menon.orbit_volume_constant (E11).  "
          "Exact ties use the limit N sigma^{2-2/N}; near ties the printed quotient loses digits and "
          "the tolerance grows with the cancellation (inconclusive beyond 1e-6).  Full rank only "
          "(the paper restricts to it, line 434): with a zero singular value the orbit map is "
          "2^{N-1}-to-1 (falsifier rank_deficient); with two zeros the pair factor is 0/0.",
    catalogue="menon §2.5 Thm 10, Lemma 2; §3; §4 E11",
)


def entropy_outcome(p, expo=None):
    lam, Qs = _lam_instance(p)
    N, d = p.N, len(lam)
    sig = lam ** N
    dens, cond, n = _orbit_density(lam, Qs)
    formula, ferr = 1.0, 0.0
    for i, j in combinations(range(d), 2):
        formula *= math.sqrt(_printed_factor(sig[i], sig[j], N, expo))
        ferr += 0.5 * _printed_factor_error(sig[i], sig[j], N)
    # Error model: Gram entries are inner products of vectors of length N d^2 whose entries come from
    # two d x d products: relative error delta = (4 d + N d^2) eps.  |d log det G| <= n cond(G) delta,
    # halved by the square root.  The printed quotient adds ferr (its cancellation, summed over pairs).
    # A factor 4 covers the O(1) constants of these first-order bounds.
    delta = (4 * d + N * d * d) * EPS
    tol = 4 * (0.5 * n * cond * delta + ferr)
    values = {"sqrt_det_gram": dens, "formula": formula, "lam": lam.tolist(), "sigma": sig.tolist(),
              "gram_size": n, "gram_cond": cond, "pair_formula_error": ferr}
    if tol > 1e-6:
        return inconclusive(f"the printed quotient is ill-conditioned at this near tie (error bound {tol:.1e}); "
                            "pass tie=true for an exact tie", **values)
    res = abs(dens / formula - 1)
    return Outcome(residual=res, tolerance=tol, values=values,
                   message="|sqrt det Gram(orbit generators) / prod_{i<j} pair factor - 1|")


@entropy_formula.numeric
def _(p):
    """sqrt det of the Gram matrix of the rotated orbit generators vs the product of pair factors of (6.2)."""
    return entropy_outcome(p)


entropy_formula.property(over=("d", "N", "seed", "tie"), max_examples=15)


#: the pair-factor determinant (in a = sigma_k^{1/N}, b = sigma_l^{1/N}) and the sign of the cosine term of
#: the eigenvalues, as the statement has them, and their nearest misprints (mutants)
TRIDIAG_FORMS = {
    "stated": (lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2), -1),
    "pair_exponent_1_over_N": (lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a - b), -1),
    "eigenvalue_sign_flipped": (lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2), +1),
}


def _tridiag_failures(form):
    """Identities of the middle (N-1)x(N-1) block of (8.10) that fail for the form ``form`` (N = 1..8)."""
    target, sign = TRIDIAG_FORMS[form]
    a, b, th = sp.symbols("a b theta", positive=True)
    bad = 0
    for N in range(1, 9):
        n = N - 1
        T = sp.zeros(n, n)
        for i in range(n):
            T[i, i] = a ** 2 + b ** 2
            if i + 1 < n:
                T[i, i + 1] = T[i + 1, i] = -a * b
        det = _poly_det(T) if n else sp.Integer(1)
        bad += int(sp.cancel(det - target(a, b, N)) != 0)
        if n == 0:
            continue
        # eigen-relation with v_s = sin(s theta): interior rows vanish identically, the last row leaves
        # a b sin(N theta), which is 0 at theta = p pi / N; first components sin(p pi/N) != 0 and the
        # N-1 eigenvalues are distinct, so they are the whole spectrum.
        v = sp.Matrix([sp.sin((s + 1) * th) for s in range(n)])
        mu = a ** 2 + b ** 2 + sign * 2 * a * b * sp.cos(th)
        r = T * v - mu * v
        r[n - 1] = r[n - 1] - a * b * sp.sin(N * th)
        bad += sum(1 for e in r if sp.expand(e.rewrite(sp.exp)) != 0)
        bad += sum(1 for q in range(1, N) if sp.sin(N * q * sp.pi / N) != 0 or sp.sin(q * sp.pi / N) == 0)
    return bad


@entropy_formula.symbolic(timeout=60)
def _(p):
    """Middle (N-1)x(N-1) block of (8.10): det = (a^{2N}-b^{2N})/(a^2-b^2) and eigenvalues
    a^2+b^2-2ab cos(p pi/N) with eigenvectors (sin(s p pi/N))_s, N = 1..8."""
    bad = _tridiag_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy: exact det over QQ[a,b] (DomainMatrix) + cancel; eigen-relation rewritten in exp and expanded",
        "instances": [f"N={N}" for N in range(1, 9)],
        "proved": "det(tridiag(-ab, a^2+b^2, -ab)_{N-1}) = (a^{2N}-b^{2N})/(a^2-b^2); eigenpairs "
                  "a^2+b^2-2ab cos(p pi/N), (sin(s p pi/N))_s; with a = sigma_k^{1/N} the pair factor of (6.2)"},
        message="number of identities that did not reduce to zero")


@entropy_formula.mutant({
    "pair_exponent_1_over_N": "pair factor (sigma_i^2-sigma_j^2)/(sigma_i^{1/N}-sigma_j^{1/N}) = (a^{2N}-b^{2N})/(a-b)",
    "eigenvalue_sign_flipped": "eigenvalues a^2+b^2+2ab cos(p pi/N) (sign of the cosine term flipped)"}, timeout=60)
def _(p, variant):
    """The pair factor / spectrum misprinted, through the same identities: some must fail."""
    bad = _tridiag_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities of the misprinted form did not reduce to zero")


@entropy_formula.falsifier("exponent_1_over_N", search=("seed",))
def _(p):
    """The pair factor with sigma^{1/N} in place of sigma^{2/N}."""
    return entropy_outcome(p, expo=1 / p.N)


@entropy_formula.falsifier("rank_deficient", search=("seed",), fixed={"d": 2, "N": 2})
def _(p):
    """(6.2) extended by continuity to lam = (lam_1, 0) (d = N = 2): the orbit, measured as a set by chord
    sums, is half as long as c_2 sqrt(sigma_1): the orbit map O_2 -> O_W is 2-to-1 there."""
    rng = rng_for(p.seed)
    lam = np.array([rng.uniform(0.5, 1.8), 0.0])
    Q2, Q1, Q0 = (dln.random_orthogonal(2, rng) for _ in range(3))
    L, err, info = _orbit_length_d2n2(lam, Q2, Q1, Q0)
    predicted = _c_d(2) * math.sqrt(_printed_factor(lam[0] ** 2, 0.0, 2))
    return Outcome(residual=abs(L / predicted - 1), tolerance=err / L + 8 * EPS,
                   values={"measured_length": L, "formula_continuous_extension": predicted,
                           "ratio": predicted / L, "lam": lam.tolist(), **info},
                   message="|orbit length (chord sums, as a set) / (6.2) extended to sigma_2 = 0 - 1|")


@entropy_formula.reproduction
def _(p):
    """Catalogue §3: d=3, N=4, lam=(1.7,1.1,0.6): sqrt det Gram = formula = 52.686563706153."""
    quoted = 52.686563706153   # catalogue §2.5 Thm 10 (b) / §3, 12 decimals
    p = entropy_formula.resolve({"lam": [1.7, 1.1, 0.6], "N": 4})
    out = entropy_outcome(p)
    dens, form = out.values["sqrt_det_gram"], out.values["formula"]
    # quoted to 12 decimals (half-unit 5e-13) plus our own rounding bound, relative to the value
    tol = 5e-13 + out.tolerance * quoted
    res = max(abs(dens - quoted), abs(form - quoted))
    return Outcome(residual=res, tolerance=tol, values={**out.values, "quoted": quoted},
                   message="max(|Gram - quoted|, |formula - quoted|)")


# ---------------------------------------------------------------------------
# menon.orbit_volume_constant (E11)
def _chord_length(curve, n):
    """Polygon length of a closed curve theta -> R^m sampled at n equal steps, Richardson-extrapolated
    twice (O(n^-2) -> O(n^-6)); returns (length, error estimate)."""
    Ls = []
    for m in (n, 2 * n, 4 * n):
        th = np.linspace(0, 2 * np.pi, m + 1)
        P = curve(th)
        Ls.append(float(np.sum(np.linalg.norm(np.diff(P, axis=0), axis=1))))
    R1 = [(4 * Ls[1] - Ls[0]) / 3, (4 * Ls[2] - Ls[1]) / 3]
    R2 = (16 * R1[1] - R1[0]) / 15
    # error estimate: the last correction, plus summation rounding (4n terms of size L/(4n))
    return R2, abs(R2 - R1[1]) + 16 * n * EPS * abs(R2)


def _orbit_length_d2n2(lam, Q2, Q1, Q0, n=256):
    """Length of the orbit O_W (d = N = 2) as a subset of M_2^2, from chord sums only: the two
    components Q_1 R(theta) D (D = I, diag(1,-1)) are measured, and the second is counted only if
    it is not the same set as the first (Hausdorff distance against the chord spacing)."""
    Lam = np.diag(lam)

    def comp(D):
        def curve(th):
            Q = Q1 @ _rot(th) @ D
            W2 = Q2 @ Lam @ np.swapaxes(Q, -1, -2)
            W1 = Q @ Lam @ Q0.T
            return np.concatenate([W2.reshape(-1, 4), W1.reshape(-1, 4)], axis=1)
        return curve

    c1, c2 = comp(np.eye(2)), comp(np.diag([1.0, -1.0]))
    L1, e1 = _chord_length(c1, n)
    L2, e2 = _chord_length(c2, n)
    m = 4096
    P1, P2 = c1(np.linspace(0, 2 * np.pi, m)), c2(np.linspace(0, 2 * np.pi, m))
    dist = np.sqrt(((P2[:, None, :] - P1[None, ::8, :]) ** 2).sum(-1)).min(axis=1)
    # a point of a closed curve of length L lies within L/(2 * 512) of the 512 samples of the other one
    # if the sets coincide; disjoint compact orbits sit at a positive distance
    spacing = L1 / 512
    same = bool(dist.max() <= spacing)
    L = L1 if same else L1 + L2
    return L, (e1 if same else e1 + e2), {"components_coincide": same, "hausdorff_to_first": float(dist.max()),
                                          "component_lengths": [L1, L2]}


def _volume_O3(n):
    """vol(O_3) for Tr(A^T B) in Euler angles Q = Rz(a) Ry(b) Rz(c): sqrt det of the Frobenius metric of
    the chart, Gauss-Legendre in b (n nodes), periodic trapezoid in a and c, times 2 components."""
    xb, wb = np.polynomial.legendre.leggauss(n)
    b = (xb + 1) * np.pi / 2
    wb = wb * np.pi / 2
    ac = np.linspace(0, 2 * np.pi, 6, endpoint=False)
    A, B, C = np.meshgrid(ac, b, ac, indexing="ij")

    def Rz(t):
        c, s, z, o = np.cos(t), np.sin(t), np.zeros_like(t), np.ones_like(t)
        return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)

    def Ry(t):
        c, s, z, o = np.cos(t), np.sin(t), np.zeros_like(t), np.ones_like(t)
        return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)

    def dRz(t):
        c, s, z = np.cos(t), np.sin(t), np.zeros_like(t)
        return np.stack([np.stack([-s, -c, z], -1), np.stack([c, -s, z], -1), np.stack([z, z, z], -1)], -2)

    def dRy(t):
        c, s, z = np.cos(t), np.sin(t), np.zeros_like(t)
        return np.stack([np.stack([-s, z, c], -1), np.stack([z, z, z], -1), np.stack([-c, z, -s], -1)], -2)

    D = [dRz(A) @ Ry(B) @ Rz(C), Rz(A) @ dRy(B) @ Rz(C), Rz(A) @ Ry(B) @ dRz(C)]
    g = np.empty(A.shape + (3, 3))
    for i in range(3):
        for j in range(3):
            g[..., i, j] = np.sum(D[i] * D[j], axis=(-1, -2))
    dens = np.sqrt(np.clip(np.linalg.det(g), 0, None))
    inner = dens.mean(axis=(0, 2)) * (2 * np.pi) ** 2  # a, c integrals (periodic trapezoid)
    return 2 * float(np.sum(wb * inner))


def _volume_Od(d):
    """Riemannian volume of O_d (Frobenius metric) measured in a chart, with an error estimate."""
    if d == 1:
        return 2.0, 0.0, "counting measure on O_1 = {+1, -1}"
    if d == 2:
        L, err = _chord_length(lambda th: _rot(th).reshape(-1, 4), 256)
        return 2 * L, 2 * err, "chord sums of theta -> R(theta), two components"
    v1, v2 = _volume_O3(12), _volume_O3(24)
    return v2, abs(v2 - v1) + 1e3 * EPS * v2, "Euler angles ZYZ, Gauss-Legendre in b, two components"


orbit_volume_constant = Claim(
    id="menon.orbit_volume_constant",
    title="The constant c_d of the entropy formula is the Frobenius-Riemannian volume of O_d",
    label="Thm 10 (c_d)",
    section="6.2",
    equation="(6.2)",
    lines=(450, 450),
    statement=r"c_d=\text{volume of }O_d\text{ with the standard Haar measure}",
    status="erratum",
    corrected=r"c_d=\operatorname{vol}(O_d,\langle A,B\rangle=\operatorname{Tr}A^TB)"
              r"=2\cdot2^{d(d-1)/4}\prod_{k=1}^{d-1}\operatorname{vol}(S^k),\quad c_2=4\sqrt2\pi",
    params=[
        Param.int("d", 2, 1, 3, "dimension of O_d (d <= 3: charts with a quadrature are coded for these)"),
        Param.seed("seed of the d = N = 2 orbit used by the falsifier"),
    ],
    notes="The standard (probability) Haar measure gives vol(O_d) = 1 (or 2 counting the two components), "
          "which cannot make (6.2) an identity for the Riemannian volume of O_W: the orbit O_W carries "
          "the metric induced from M_d^N, so the fibre volume is vol(O_d, Frobenius)^{N-1} times the "
          "density of menon.entropy_formula.  Numeric check: vol(O_d) measured in a chart "
          "(d=1 counting, d=2 chord sums, d=3 Euler angles) against the closed form.  Reproduction: the "
          "d=N=2 orbit length from chord sums in M_2^2, with no use of the group structure."
          "  Tolerance/residual at the defaults ~2e4 (audit rmen8): the tolerance is the last Richardson"
          " correction |R2 - R1|, an estimate of the O(n^-4) error of R1, while the value compared is R2 (error"
          " O(n^-6)); it is the quadrature's own error estimate, deliberately conservative.",
    catalogue="menon §2.5 Thm 10 (b); §3; §4 E11",
)


@orbit_volume_constant.numeric
def _(p):
    """vol(O_d) for the Frobenius metric, measured in a chart by quadrature, vs 2 * 2^{d(d-1)/4} prod vol(S^k)."""
    vol, err, how = _volume_Od(p.d)
    c = _c_d(p.d)
    # error model: the quadrature's own error estimate (Richardson / node doubling) plus rounding
    return Outcome(residual=abs(vol - c), tolerance=err + 16 * EPS * c,
                   values={"measured_volume": vol, "c_d": c, "method": how, "quadrature_error": err},
                   message="|vol(O_d) by quadrature - c_d|")


@orbit_volume_constant.falsifier("stated")
def _(p):
    """Printed: c_d = volume of O_d for the standard (probability) Haar measure, i.e. 1."""
    vol, err, how = _volume_Od(p.d)
    rng = rng_for(p.seed)
    lam = np.sort(rng.uniform(0.5, 1.8, 2))[::-1]
    Q2, Q1, Q0 = (dln.random_orthogonal(2, rng) for _ in range(3))
    L, Lerr, _ = _orbit_length_d2n2(lam, Q2, Q1, Q0)
    sig = lam ** 2
    return Outcome(residual=abs(vol - 1.0), tolerance=err + 16 * EPS,
                   values={"measured_volume": vol, "haar_probability_volume": 1.0, "method": how,
                           "orbit_length_d2N2": L, "printed_orbit_length_c1": math.sqrt(sig[0] + sig[1]),
                           "printed_orbit_length_c2eq2": 2 * math.sqrt(sig[0] + sig[1])},
                   message="|vol(O_d) by quadrature - 1|: the (6.2) constant is not the probability Haar volume")


@orbit_volume_constant.falsifier("haar_two_components")
def _(p):
    """c_d = 2 (probability Haar measure on each of the two components of O_d)."""
    vol, err, how = _volume_Od(p.d)
    return Outcome(residual=abs(vol - 2.0), tolerance=err + 16 * EPS,
                   values={"measured_volume": vol, "method": how}, message="|vol(O_d) by quadrature - 2|")


@orbit_volume_constant.reproduction
def _(p):
    """Catalogue §3: d=N=2, lam=(1.4,0.6): orbit length by quadrature 27.0687907132 vs c_2 sqrt(s_1+s_2)."""
    quoted = 27.0687907132   # catalogue quadrature (its own error was 1.1e-9 against the formula)
    lam = np.array([1.4, 0.6])
    rng = rng_for(0)
    Q2, Q1, Q0 = (dln.random_orthogonal(2, rng) for _ in range(3))
    L, err, info = _orbit_length_d2n2(lam, Q2, Q1, Q0)
    formula = _c_d(2) * math.sqrt(lam[0] ** 2 + lam[1] ** 2)
    # the quoted quadrature value differs from the exact one by about 1.1e-9: compare at 2e-9,
    # and our chord-sum value with the corrected formula at our own error estimate
    res = max(abs(L - quoted) - 2e-9, abs(L - formula) - err - 1e-12, 0.0)
    return Outcome(residual=res, tolerance=0.0,
                   values={"chord_length": L, "chord_error": err, "c2_sqrt_sum": formula, "quoted": quoted,
                           "c_2": _c_d(2), **info},
                   message="max(|L - quoted| - 2e-9, |L - c_2 sqrt(s1+s2)| - err, 0)")
