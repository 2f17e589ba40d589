r"""Chapter 4 of the Sander thesis: which linear maps the second-order (momentum) linear model
represents -- Theorem 4.4 (diagonalisable case), Theorem 4.7 (Jordan case) and its gap at
lambda_eps (G4.1), Proposition 4.15 -- as *decision procedures* with certificates.

Model (4.7): ``eps x'' + x' = theta x``, ``(x, x')(0) = (x0, 0)``, time-1 map ``Psi_eps(theta)``.
Conventions (solvers.psi_eps, catalogue sander_part23 §1): ``kappa = 1/(2 eps)``,
``f_eps(z) = e^{-kappa}(cosh s + kappa sinh(s)/s)``, ``s^2 = z``, and
``Psi_eps(theta) = f_eps(X)`` with ``X = theta/eps + I/(4 eps^2)``, i.e. ``theta = eps X - I/(4 eps)``.
``lambda_eps = min f_eps(R) = min_alpha G_eps(alpha)``, attained at the unique real point
``x_eps = -alpha*^2`` where ``f'(x_eps) = 0 < f''(x_eps)``.

The decision procedure (``decide``)
-----------------------------------
1. Eigenvalues ``w_i`` of D with left/right eigenvectors; each gets the error radius
   ``delta_i = eta kappa_i`` (``eta = 64 d eps_mach |D|_F`` the backward error of the QR algorithm,
   ``kappa_i = 1/|y_i^H x_i|`` the eigenvalue condition number: first-order Bauer-Fike / Wilkinson
   bound for a simple eigenvalue).  Where n_i computed eigenvalues sit within the largest possible
   defective radius of w_i, the first-order bound is replaced by the Hoelder bound
   ``10 |D| (eta/|D|)^{1/n_i}`` of a Jordan block of size n_i.
2. Single-linkage clusters: i ~ j when ``|w_i - w_j| <= delta_i + delta_j``.
3. Each cluster is split off by an ordered complex Schur form and a Sylvester solve (block
   diagonalisation ``D = sum_c R_c T_c L_c``); real clusters get a real basis (W_c, Z_c).  The
   clusters count as separated (their sizes = algebraic multiplicities of every matrix within the
   error) only when each split has ``sep(T11, T22) > 4 eta kappa_V`` (Stewart's perturbation
   theorem for invariant subspaces); otherwise inconclusive -- unless every real cluster lies above
   lambda_eps, where multiplicities do not matter (the construction residual still certifies).
4. A real cluster (centre mu, radius rho) is *below* if ``mu + rho < lambda_eps - err``, *above*
   if ``mu - rho > lambda_eps + err`` and *near* otherwise (err = the float64 error of lambda_eps).
   Below/near clusters get their Jordan structure from the rank sequence of ``(T_c - mu)^k`` with a
   zero threshold tau_k (cluster spread + eta |Z_c|) and a gap factor 100: a singular value in
   ``(tau_k, 100 tau_k]`` makes the structure undecidable (inconclusive).
5. Decision (Thm 4.4 / 4.7):
   * a below cluster with an **odd** number of eigenvalues: NOT representable.  This certificate is
     robust: every matrix within the error radius has an odd number of real eigenvalues (with
     multiplicity) below lambda_eps in that cluster, so some real eigenvalue < lambda_eps has odd
     algebraic multiplicity, which Thm 4.7 (necessity) forbids.  Reported margin: lambda_eps - (mu + rho).
   * a below cluster of even size whose Jordan blocks are not in equal pairs (e.g. one J_2(lambda)):
     the exact matrix is not representable (Thm 4.7), but it lies within rounding of representable
     ones (J_2(lambda) + small perturbation has a conjugate pair lambda +- i delta), so floating point
     cannot decide: inconclusive.
   * a near cluster (|mu - lambda_eps| within the error model) whose blocks are not in equal pairs:
     inconclusive (gap G4.1: below lambda_eps it would not be representable, at or above it would be).
   * otherwise representable, and ``theta`` is CONSTRUCTED: on each cluster X_c is the Taylor polynomial
     of a local inverse branch g of f_eps at a preimage z0 (f(z0) = mu, f'(z0) != 0), applied to the
     nearly nilpotent N = T_c - mu:  ``X_c = z0 + sum_k b_k N^k`` (b_k by series reversion of f's
     Taylor coefficients at z0, computed in mpmath).  Above clusters use the real preimage
     z0 > x_eps; complex clusters a non-real preimage (conjugate cluster: conjugate branch, 2 Re);
     below/near paired clusters a non-real preimage with ``i`` replaced by a real complex structure K
     (K^2 = -I, KN = NK) built from Jordan chains paired block by block (Thm 4.4's realification
     P_j^{-1} D_{z_j} P_j, and Thm 4.7's J_b(z) + J_b(conj z)).
   * exact fallback (``decide(..., exact=True)``, the CLI default for a user's D with d <= 6): when the
     float analysis is undecided, the given entries are read as the exact binary rationals they are and
     Thm 4.7's necessity is decided over Q (``_exact_decide``): e.g. [[-0.8, 1], [0, -0.8]] is certified
     NOT representable (one J_2 block at -0.8 < lambda_eps, exact ranks), a statement about that exact
     matrix only.
   The certificate of "representable" is the residual ``|Psi_eps(theta) - D|_F / |D|_F`` against
   ``tol = 64 d eps_mach kappa_V (1 + |theta|/eps + f'_max |X| / |D|) + kappa_V spread/|D|``:
   rounding in the block diagonalisation (kappa_V = |V||V^{-1}|), propagated through f (f'_max the
   largest |f'| at the preimages), the expm forward error of Psi_eps (~ eps_mach |M|, |M| ~ |theta|/eps),
   and the cluster spreads (a cluster's computed eigenvalues are treated as one eigenvalue: the Taylor
   remainder b_{m+1} N^{m+1} and the commutator [K, N] are of the order of the spread).  The tolerance is
   capped at sqrt(eps_mach) ~ 1.5e-8: a construction that cannot be certified to half the digits (very
   ill-conditioned eigenvectors) is reported inconclusive, never certified on a vacuous bound.
"""
from __future__ import annotations

import cmath
import math

import numpy as np
import scipy.linalg as sla
import sympy as sp
from scipy.optimize import brentq

from solvers.psi_eps import f_eps, f_eps_prime, lambda_eps, psi_eps
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

EPS = float(np.finfo(float).eps)
GAP = 100.0          # rank gap factor: a singular value in (tau, GAP*tau] is undecidable


class _Undecided(Exception):
    """Floating point cannot decide (clusters, Jordan structure, branch)."""


# ---------------------------------------------------------------------------
# scalar f_eps in complex double (fast), its preimages and Taylor coefficients
def _fc(z: complex, eps: float) -> tuple[complex, complex]:
    """(f_eps(z), f_eps'(z)) for a complex scalar: series for |z| <= 4, closed form otherwise.
    Used only inside Newton; every root is re-verified with solvers.psi_eps.f_eps."""
    k = 0.5 / eps
    ek = math.exp(-k)
    if abs(z) <= 4.0:
        f = 0j
        fp = 0j
        for n in range(30, -1, -1):
            a = 1.0 / math.factorial(2 * n) + k / math.factorial(2 * n + 1)
            f = f * z + a
            if n >= 1:
                fp = fp * z + n * a
        return ek * f, ek * fp
    s = cmath.sqrt(z)
    C, S = cmath.cosh(s), cmath.sinh(s) / s
    return ek * (C + k * S), ek * (S / 2 + k * (C - S) / (2 * z))


def _real_preimage(w: float, eps: float) -> float:
    """The real x >= x_eps with f_eps(x) = w (w >= lambda_eps), by Brent: f is increasing on
    [x_eps, inf) (catalogue T4.7: f' > 0 there)."""
    lam, a = lambda_eps(eps)
    xe = -a * a
    if w <= lam:
        return xe
    hi = 1.0
    while float(f_eps(hi, eps)) < w:
        hi *= 2.0
    return brentq(lambda x: float(f_eps(x, eps)) - w, xe, hi, xtol=1e-300, rtol=8.9e-16, maxiter=400)


def _below_lambda(lam: float, floor: float) -> tuple[float, float]:
    """An interval of real values below lambda_eps to draw from: [max(floor, lam - 0.3), lam - 0.02], or, where
    lambda_eps is so close to -1 (eps >~ 7) that this is empty, the same shape scaled to the gap 1 + lam."""
    lo, hi = max(floor, lam - 0.3), lam - 0.02
    if lo < hi:
        return lo, hi
    gap = 1.0 + lam
    return lam - 0.5 * gap, lam - 0.1 * gap


def _nonreal_preimage(w: complex, eps: float) -> complex:
    """A non-real z with f_eps(z) = w and f'(z) as large as possible (best conditioned branch).

    Starting points: cosh(s) ~ w e^kappa (the leading term), s = i alpha, alpha = +-arccos(w e^kappa)
    + 2 pi k, k <= 5, and s = log(2 w e^kappa) + 2 pi i k; Newton in complex double; a root counts
    when |f(z) - w| <= 1e-12 max(1, |w|) (re-evaluated with solvers.psi_eps.f_eps) and
    |Im z| > 1e-6 max(1, |z|).  For real w < lambda_eps every preimage is non-real; for real w in
    (lambda_eps, e^{-kappa}) there may be none (ArithmeticError), which the decision never asks for."""
    k = 0.5 / eps
    c = complex(w) * math.exp(k)
    a0 = complex(np.arccos(complex(c)))
    guesses = []
    for kk in range(6):
        for sgn in (1, -1):
            al = sgn * a0 + 2 * math.pi * kk
            guesses += [-(al * al), -(al.conjugate() ** 2)]
    s0 = cmath.log(2 * c) if c != 0 else 0j
    guesses += [(s0 + 2j * math.pi * kk) ** 2 for kk in range(-3, 4)]
    best, best_fp = None, -1.0
    for z in guesses:
        if abs(z.imag) < 1e-3:
            z += 0.5j
        ok = False
        for _ in range(80):
            F, dF = _fc(z, eps)
            if dF == 0 or not cmath.isfinite(dF) or not cmath.isfinite(F):
                break
            step = (F - w) / dF
            z -= step
            if abs(step) <= 4e-16 * max(1.0, abs(z)):
                ok = True
                break
        if not ok or not cmath.isfinite(z):
            continue
        F = complex(f_eps(np.complex128(z), eps))
        if abs(F - w) > 1e-12 * max(1.0, abs(w)) or abs(z.imag) <= 1e-6 * max(1.0, abs(z)):
            continue
        fp = abs(complex(f_eps_prime(np.complex128(z), eps)))
        if fp > best_fp:
            best, best_fp = z, fp
    if best is None:
        raise ArithmeticError(f"no non-real preimage of {w} found")
    if complex(w).imag == 0 and best.imag < 0:
        best = best.conjugate()
    return best


def _taylor(z0: complex, eps: float, K: int) -> list:
    """Taylor coefficients c_j = f^(j)(z0)/j!, j <= K, from the power series
    f = e^{-kappa} sum a_n z^n re-expanded at z0 in mpmath (precision raised by the cancellation
    e^{2 sqrt|z0|}); returned as complex doubles (relative error ~1e-16)."""
    import mpmath as mpm
    r = abs(complex(z0))
    dps = int(25 + 2 * math.sqrt(r) / 2.3)
    with mpm.workdps(dps):
        z = mpm.mpc(complex(z0))
        k = 1 / (2 * mpm.mpf(eps))
        N = int(2 * math.sqrt(r) + 60 + K)
        a = [1 / mpm.factorial(2 * n) + k / mpm.factorial(2 * n + 1) for n in range(N)]
        pw = [mpm.mpc(1)]
        for _ in range(N):
            pw.append(pw[-1] * z)
        ek = mpm.exp(-k)
        return [complex(ek * mpm.fsum(a[n] * mpm.binomial(n, j) * pw[n - j] for n in range(j, N)))
                for j in range(K + 1)]


def _revert(c: list, K: int) -> np.ndarray:
    """Series reversion: b with f(z0 + sum_{k>=1} b_k t^k) = f(z0) + t + O(t^{K+1})."""
    b = np.zeros(K + 1, dtype=complex)
    b[1] = 1 / c[1]
    for n in range(2, K + 1):
        h = b.copy()
        h[n:] = 0
        acc = np.zeros(K + 1, dtype=complex)
        p = np.zeros(K + 1, dtype=complex)
        p[0] = 1
        for j in range(1, n + 1):
            p = np.convolve(p, h)[:K + 1]
            if j >= 2:
                acc += c[j] * p
        b[n] = -acc[n] / c[1]
    return b


def _branch_coeffs(z0: complex, eps: float, K: int) -> np.ndarray:
    """Coefficients (b_0 = z0, b_1, ..., b_K) of the local inverse branch of f_eps through z0."""
    if K <= 1:
        fp = complex(f_eps_prime(np.complex128(z0), eps))
        return np.array([z0, 1 / fp] if K == 1 else [z0], dtype=complex)
    b = _revert(_taylor(z0, eps, K), K)
    b[0] = z0
    return b


# ---------------------------------------------------------------------------
# linear algebra: clusters, block diagonalisation, Jordan structure, complex structure
def _clusters(w: np.ndarray, kap: np.ndarray, nrm: float, d: int):
    """Error radii and single-linkage clusters of the computed eigenvalues (module docstring, 1-2)."""
    eta = 64 * d * EPS * max(nrm, 1e-300)
    eta_rel = 64 * d * EPS
    far = 10 * nrm * eta_rel ** (1.0 / d) if d > 1 else 0.0
    delta = np.empty(len(w))
    for i in range(len(w)):
        ni = int(np.sum(np.abs(w - w[i]) <= far)) if d > 1 else 1
        first = eta * kap[i] if np.isfinite(kap[i]) else np.inf
        if ni > 1:
            first = min(first, 10 * nrm * eta_rel ** (1.0 / ni))
        delta[i] = min(first, 2 * nrm + 1e-300)
    n = len(w)
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for i in range(n):
        for j in range(i + 1, n):
            if abs(w[i] - w[j]) <= delta[i] + delta[j]:
                parent[find(i)] = find(j)
    groups = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    cl = [sorted(g) for g in groups.values()]
    return cl, delta, eta


def _block_diagonalise(D: np.ndarray, centres: list, sizes: list):
    """([(R_c, L_c, T_c)], seps) with D = sum_c R_c T_c L_c, L_c R_c = I (complex), by peeling one cluster
    at a time off an ordered complex Schur form and decoupling it with a Sylvester solve; seps are the
    separations sep(T11, T22) = sigma_min(I kron T11 - T22^T kron I) of each split (Stewart: the split
    survives every perturbation with |E| < sep/4)."""
    n = D.shape[0]
    M = D.astype(complex)
    Vr = np.eye(n, dtype=complex)
    Vl = np.eye(n, dtype=complex)
    out, seps = [], []
    centres = list(centres)
    for ci in range(len(centres) - 1):
        rem = np.array(centres[ci:])
        m = sizes[ci]

        def sel(x, rem=rem):
            return bool(np.argmin(np.abs(rem - x)) == 0)
        T, Q, sdim = sla.schur(M, output="complex", sort=sel)
        if sdim != m:
            raise _Undecided(f"ordered Schur form selected {sdim} eigenvalues for a cluster of {m}")
        T11, T12, T22 = T[:m, :m], T[:m, m:], T[m:, m:]
        Y = sla.solve_sylvester(T11, -T22, -T12)
        op = np.kron(np.eye(T22.shape[0]), T11) - np.kron(T22.T, np.eye(m))
        seps.append(float(np.linalg.svd(op, compute_uv=False)[-1]))
        QH = Q.conj().T
        out.append((Vr @ Q[:, :m], (QH[:m] - Y @ QH[m:]) @ Vl, T11))
        Vr = Vr @ (Q[:, :m] @ Y + Q[:, m:])
        Vl = QH[m:] @ Vl
        M = T22
    out.append((Vr, Vl, M))
    return out, seps


def _real_basis(R, L, D):
    """Real (W, Z, T) of a real (conjugation-closed) cluster: W orthonormal basis of the invariant
    subspace, Z = W^T P (P = R L the spectral projector), T = Z D W."""
    m = R.shape[1]
    P = R @ L
    imag = float(np.linalg.norm(P.imag))
    Pr = P.real
    U, s, _ = np.linalg.svd(Pr)
    W = U[:, :m]
    Z = W.T @ Pr
    return W, Z, Z @ D @ W, imag


def _jordan_sizes(N: np.ndarray, tau1: float):
    """Jordan block sizes of the nearly nilpotent N from the rank sequence of N^k, with zero threshold
    tau_k = k tau1 (|N| + tau1)^(k-1) and gap factor GAP; raises _Undecided in the gap."""
    m = N.shape[0]
    nN = float(np.linalg.norm(N, 2))
    ranks = [m]
    Pk = np.eye(m)
    svals = []
    for k in range(1, m + 1):
        Pk = Pk @ N
        s = np.linalg.svd(Pk, compute_uv=False)
        tau = k * tau1 * (nN + tau1) ** (k - 1)
        bad = s[(s > tau) & (s <= GAP * tau)]
        svals.append({"k": k, "singular_values": s.tolist(), "tau": tau})
        if bad.size:
            raise _Undecided(f"singular value {bad[0]:.2e} of (T - mu)^{k} lies in the gap "
                             f"({tau:.2e}, {GAP * tau:.2e}]: the Jordan structure is not numerically decidable")
        ranks.append(int(np.sum(s > tau)))
    if ranks[-1] != 0:
        raise _Undecided("the cluster's (T - mu) is not nilpotent at the error level")
    ge = [ranks[k - 1] - ranks[k] for k in range(1, m + 1)]          # blocks of size >= k
    sizes = []
    for k in range(1, m + 1):
        nxt = ge[k] if k < m else 0
        sizes += [k] * (ge[k - 1] - nxt)
    return sorted(sizes, reverse=True), ranks, svals


def _paired(sizes) -> bool:
    """Every block size occurs an even number of times (Thm 4.7's condition)."""
    return all(sizes.count(s) % 2 == 0 for s in set(sizes))


def _exact_rule_at_threshold(sizes) -> bool:
    """Derived exact rule at lambda_eps (catalogue T4.7/A9): the block sizes split into pairs (a, a),
    pairs (a, a-1) and single 1-blocks (J_m(x_eps) -> sizes (ceil(m/2), floor(m/2)))."""
    from functools import lru_cache

    @lru_cache(maxsize=None)
    def ok(t):
        if not t:
            return True
        a, rest = t[0], list(t[1:])
        if a == 1 and ok(tuple(rest)):
            return True
        for partner in (a, a - 1):
            if partner in rest:
                r = list(rest)
                r.remove(partner)
                if ok(tuple(r)):
                    return True
        return False
    return ok(tuple(sorted(sizes, reverse=True)))


def _complex_structure(N: np.ndarray, sizes, tol: float) -> np.ndarray:
    """A real K with K^2 = -I and KN = NK, from Jordan chains of N paired block by block
    (sizes must be paired).  Chains: tops of size k span a complement of ker N^{k-1} + N^{j-k}(tops_j)
    in ker N^k."""
    m = N.shape[0]
    kmax = max(sizes)
    kers = {0: np.zeros((m, 0))}
    Pk = np.eye(m)
    for k in range(1, kmax + 1):
        Pk = Pk @ N
        dim = sum(min(s, k) for s in sizes)
        _, _, Vt = np.linalg.svd(Pk)
        kers[k] = Vt[m - dim:].T
    tops = {}
    for k in range(kmax, 0, -1):
        ck = sizes.count(k)
        if ck == 0:
            continue
        S = [kers[k - 1]] + [np.linalg.matrix_power(N, j - k) @ u for j in tops for u in tops[j].T[:, :, None]]
        S = np.hstack(S) if S else np.zeros((m, 0))
        if S.shape[1]:
            U, s, _ = np.linalg.svd(S, full_matrices=False)
            Qs = U[:, s > tol * max(1.0, s[0])]
            Pc = kers[k] - Qs @ (Qs.T @ kers[k])
        else:
            Pc = kers[k]
        U, s, _ = np.linalg.svd(Pc, full_matrices=False)
        tops[k] = U[:, :ck]
    cols, KB_blocks = [], []
    for k in sorted(tops, reverse=True):
        T = tops[k]
        for p in range(0, T.shape[1], 2):
            v, u = T[:, p], T[:, p + 1]
            cv = [np.linalg.matrix_power(N, k - 1 - i) @ v for i in range(k)]
            cu = [np.linalg.matrix_power(N, k - 1 - i) @ u for i in range(k)]
            cols += cv + cu
            I = np.eye(k)
            KB_blocks.append(np.block([[np.zeros((k, k)), -I], [I, np.zeros((k, k))]]))
    B = np.column_stack(cols)
    KB = sla.block_diag(*KB_blocks)
    return B @ KB @ np.linalg.inv(B)



# ---------------------------------------------------------------------------
# exact rational fallback (the float input read as the exact binary rationals it denotes)
def _exact_decide(D: np.ndarray, eps: float, max_d: int = 6) -> dict | None:
    """Thm 4.7's necessity decided EXACTLY on the given matrix (entries = exact binary rationals), sympy over QQ.

    Characteristic polynomial, its irreducible factors f (multiplicity m), isolating intervals of f's real
    roots (width 1e-25); a root interval entirely below lambda_eps - 16 u |lambda_eps| (the float64 error of
    lambda_eps, solvers.psi_eps) is a real eigenvalue below lambda_eps; its Jordan sizes come from the exact ranks
    of f(D)^k over QQ (every root of an irreducible f has the same Jordan structure): dim ker f(D)^k =
    deg f * sum_b min(b, k).  Returns None when d > max_d, {representable: False, ...} when a root below
    lambda_eps has unpaired blocks, else {representable: None, exact_finding: ...}.  It certifies non-representability of THIS rational matrix only (an
    unpaired Jordan structure is not robust under perturbation)."""
    from fractions import Fraction
    from sympy import QQ
    from sympy.polys.matrices import DomainMatrix
    d = D.shape[0]
    if d > max_d:
        return None
    lam, _ = lambda_eps(eps)
    lam_lo = Fraction(lam) - Fraction(16 * EPS * abs(lam))
    rows = [[QQ(Fraction(float(x)).numerator, Fraction(float(x)).denominator) for x in row] for row in D]
    M = DomainMatrix(rows, (d, d), QQ)
    x = sp.Symbol("x")
    P = sp.Poly(M.charpoly(), x, domain="QQ")
    _, factors = P.factor_list()
    I = DomainMatrix.eye(d, QQ)
    lam_hi = Fraction(lam) + Fraction(16 * EPS * abs(lam))
    touching = False
    for f, mult in factors:
        ivs = f.intervals(eps=Fraction(1, 10**25))
        touching |= any(Fraction(b) >= lam_lo and Fraction(a) <= lam_hi for (a, b), _k in ivs)
        below = [(a, b) for (a, b), _k in ivs if Fraction(b) < lam_lo]
        if not below:
            continue
        fM = DomainMatrix.zeros((d, d), QQ)
        for c in f.all_coeffs():
            fM = fM * M + I * QQ(Fraction(c).numerator, Fraction(c).denominator)
        null, Pk = [0], I
        for k in range(1, mult + 1):
            Pk = Pk * fM
            null.append((d - Pk.rank()) // f.degree())
        ge = [null[k] - null[k - 1] for k in range(1, mult + 1)]
        sizes = []
        for k in range(1, mult + 1):
            sizes += [k] * (ge[k - 1] - (ge[k] if k < mult else 0))
        if not _paired(sizes):
            a, b = below[0]
            margin = float(lam_lo - Fraction(b))
            return {"representable": False, "exact": True, "margin": margin,
                    "uncertainty": float(Fraction(b) - Fraction(a)) + 16 * EPS * abs(lam),
                    "root_interval": [float(a), float(b)], "factor_degree": f.degree(), "jordan_sizes": sorted(sizes, reverse=True),
                    "reason": f"exact rational arithmetic on the given matrix: real eigenvalue in [{float(a):.15g}, "
                              f"{float(b):.15g}] < lambda_eps = {lam:.12g} (root of an irreducible factor of degree "
                              f"{f.degree()} of the characteristic polynomial) has Jordan blocks {sorted(sizes, reverse=True)}, "
                              "not in equal pairs (exact ranks over Q): not representable (Thm 4.7 necessity).  "
                              "This certifies the exact matrix only: it lies within rounding of representable matrices"}
    if touching:
        return {"representable": None, "exact_finding": "exact: a real eigenvalue cannot be separated from lambda_eps "
                "(gap G4.1 at this precision)"}
    return {"representable": None, "exact_finding": "exact: every real eigenvalue below lambda_eps has its Jordan blocks "
            "in equal pairs (e.g. a near-defective block split into a conjugate pair), so the exact matrix is "
            "representable by Thm 4.7 sufficiency, but no construction is certified at float64 precision"}


# ---------------------------------------------------------------------------
# the decision procedure
def decide(D, eps: float, construct: bool = True, exact: bool = False) -> dict:
    """Decide whether the real square matrix D is in Psi_eps(R^{dxd}) (see ``_decide_float``); with
    ``exact=True`` an undecided float analysis falls back to ``_exact_decide`` (exact rational input)."""
    r = _decide_float(D, eps, construct)
    if exact and r["representable"] is None:
        try:
            ex = _exact_decide(np.asarray(D, dtype=float), eps)
        except Exception as exc:          # sympy failure: stay undecided
            ex = None
            r["exact_error"] = f"{type(exc).__name__}: {exc}"
        if ex is not None and ex["representable"] is False:
            r["float_reason"] = r["reason"]
            r.update(ex)
        elif ex is not None:
            r["exact_finding"] = ex["exact_finding"]
            r["reason"] += "; " + ex["exact_finding"]
    return r


def _decide_float(D, eps: float, construct: bool = True) -> dict:
    """Decide whether the real square matrix D is in Psi_eps(R^{dxd}) and construct theta when it is.

    Returns a dict: ``representable`` (True / False / None = undecidable in floating point), ``reason``,
    ``eigenvalues``, ``lambda_eps``, ``clusters`` (centre, size, side, Jordan sizes), ``margin`` and
    ``uncertainty`` (for False), ``theta``, ``residual``, ``tolerance`` (for True).  See the module
    docstring for the algorithm and error model."""
    D = np.asarray(D, dtype=float)
    d = D.shape[0]
    lam, alpha = lambda_eps(eps)
    lam_err = 16 * EPS * abs(lam) + 1e-300
    nrm = float(np.linalg.norm(D))
    out = {"lambda_eps": lam, "lambda_err": lam_err, "x_eps": -alpha * alpha, "d": d}
    if nrm == 0.0:
        x0 = _real_preimage(0.0, eps)
        th = (eps * x0 - 1 / (4 * eps)) * np.eye(d)
        res = float(np.linalg.norm(psi_eps(th, eps)))
        out.update(representable=True, reason="D = 0: eigenvalue 0 > lambda_eps has the real preimage "
                   "x_0 (f_eps(x_0) = 0), theta = (eps x_0 - 1/(4 eps)) I", eigenvalues=[0.0] * d,
                   theta=th, residual=res, tolerance=64 * d * EPS * (1 + abs(th[0, 0]) / eps),
                   residual_kind="absolute |Psi(theta)|_F", clusters=[])
        return out
    w, VL, VR = sla.eig(D, left=True, right=True)
    kap = np.array([np.linalg.norm(VL[:, i]) * np.linalg.norm(VR[:, i]) / max(abs(np.vdot(VL[:, i], VR[:, i])), 1e-300)
                    for i in range(d)])
    order = np.lexsort((w.imag, w.real))
    w, kap = w[order], kap[order]
    out["eigenvalues"] = [[float(x.real), float(x.imag)] for x in w]
    cl, delta, eta = _clusters(w, kap, nrm, d)
    info = []
    for g in cl:
        mu = complex(np.mean(w[g]))
        spread = float(np.max(np.abs(w[g] - mu)))
        rho = float(max(np.abs(w[g] - mu) + delta[g]))
        real = abs(mu.imag) <= rho
        if real:
            mu = complex(mu.real, 0.0)
            side = "below" if mu.real + rho < lam - lam_err else ("above" if mu.real - rho > lam + lam_err else "near")
        else:
            side = "complex"
        info.append({"mu": mu, "m": len(g), "rho": rho, "spread": spread, "real": real, "side": side, "idx": g})
    for c in info:   # complex clusters come in conjugate pairs of equal size
        if not c["real"]:
            if not any((not e["real"]) and abs(e["mu"] - c["mu"].conjugate()) <= c["rho"] + e["rho"] and e["m"] == c["m"]
                       for e in info):
                out.update(representable=None, reason=f"complex cluster at {c['mu']:.6g} has no conjugate partner of the same size")
                return out
    out["clusters"] = [{"centre": [c["mu"].real, c["mu"].imag], "size": c["m"], "side": c["side"],
                        "radius": c["rho"]} for c in info]
    # clusters must be separated robustly (Stewart): min sep > 4 eta kappa_V
    try:
        blocks, seps = _block_diagonalise(D, [c["mu"] for c in info], [c["m"] for c in info])
    except (_Undecided, np.linalg.LinAlgError, ValueError) as exc:
        out.update(representable=None, reason=f"block diagonalisation failed: {exc}")
        return out
    kV = float(np.linalg.norm(np.hstack([b[0] for b in blocks]), 2) * np.linalg.norm(np.vstack([b[1] for b in blocks]), 2))
    out["kappa_V"] = kV
    critical = any(c["side"] in ("below", "near") for c in info)
    if seps and min(seps) <= 4 * eta * kV and critical:
        out.update(representable=None, reason=f"eigenvalue clusters are not separated at the error level "
                   f"(sep = {min(seps):.2e} <= 4 eta kappa_V = {4 * eta * kV:.2e}): multiplicities not decidable")
        return out
    # (a) robust certificate of non-representability: an odd real cluster below lambda_eps
    odd_below = [c for c in info if c["side"] == "below" and c["m"] % 2 == 1]
    if odd_below:
        c = max(odd_below, key=lambda c: lam - lam_err - (c["mu"].real + c["rho"]))
        margin = lam - c["mu"].real
        out.update(representable=False, margin=float(margin), uncertainty=float(c["rho"] + lam_err),
                   reason=f"real eigenvalue {c['mu'].real:.12g} < lambda_eps = {lam:.12g} has odd algebraic "
                          f"multiplicity {c['m']} (Thm 4.4 / Thm 4.7 necessity: eigenvalues below lambda_eps "
                          "must come in pairs); robust: margin lambda_eps - lambda exceeds its error radius")
        return out
    # (b) structure of the even below clusters and of the near clusters
    for c, (R, L, T) in zip(info, blocks):
        c["R"], c["L"], c["T"] = R, L, T
        if c["real"]:
            W, Z, Tr, imag = _real_basis(R, L, D)
            c.update(W=W, Z=Z, Tr=Tr)
            c["N"] = Tr - c["mu"].real * np.eye(c["m"])
            c["tau1"] = 10 * (c["spread"] + eta * float(np.linalg.norm(Z, 2)))
            if c["side"] in ("below", "near"):
                try:
                    sizes, ranks, sv = _jordan_sizes(c["N"], c["tau1"])
                except _Undecided as exc:
                    out.update(representable=None, reason=f"cluster at {c['mu'].real:.12g} ({c['side']} lambda_eps): {exc}")
                    return out
                c["sizes"] = sizes
    for oc, c in zip(out["clusters"], info):
        if "sizes" in c:
            oc["jordan_sizes"] = c["sizes"]
    for c in info:
        if c["side"] == "below" and not _paired(c["sizes"]):
            out.update(representable=None, reason=(
                f"real eigenvalue {c['mu'].real:.12g} < lambda_eps has Jordan blocks {c['sizes']} that are not in "
                "equal pairs: the exact matrix is not representable (Thm 4.7 necessity), but it lies within rounding "
                "of representable matrices (a perturbed block splits into a conjugate pair), so floating point "
                "cannot decide"))
            return out
        if c["side"] == "near" and not _paired(c["sizes"]):
            rule = _exact_rule_at_threshold(c["sizes"])
            out.update(representable=None, reason=(
                f"gap G4.1: real eigenvalue {c['mu'].real:.15g} is within the error model of lambda_eps = {lam:.15g} "
                f"with unpaired Jordan blocks {c['sizes']}: representable if it is >= lambda_eps"
                + (" (and = lambda_eps by the derived exact rule)" if rule else
                   ", not representable if it is = lambda_eps (derived exact rule)")
                + ", not representable if it is < lambda_eps"))
            return out
    n_below = sum(c["m"] for c in info if c["side"] == "below")
    n_near = sum(c["m"] for c in info if c["side"] == "near")
    if n_below:
        reason = (f"every real eigenvalue below lambda_eps = {lam:.12g} has its Jordan blocks in equal pairs "
                  "(Thm 4.4 / Thm 4.7 sufficiency): realised by conjugate preimages z, conj z of f_eps")
    else:
        reason = (f"no real eigenvalue below lambda_eps = {lam:.12g} (Thm 4.4 / Thm 4.7 sufficiency)")
    if n_near:
        reason += "; eigenvalues within the error of lambda_eps are paired, so representable on either side of it"
    out.update(representable=True, reason=reason)
    if not construct:
        return out
    # (c) construction of theta
    X = np.zeros((d, d))
    fp_max = 0.0
    branches = []
    try:
        for c in info:
            m = c["m"]
            K = m
            if c["side"] == "above":
                z0 = complex(_real_preimage(c["mu"].real, eps))
                b = _branch_coeffs(z0, eps, K).real
                Xc = b[0] * np.eye(m)
                Nk = np.eye(m)
                for k in range(1, K + 1):
                    Nk = Nk @ c["N"]
                    Xc = Xc + b[k] * Nk
                X += c["W"] @ Xc @ c["Z"]
            elif c["real"]:      # below / near, paired: non-real branch with a real complex structure
                z0 = _nonreal_preimage(c["mu"].real, eps)
                b = _branch_coeffs(z0, eps, K)
                Kst = _complex_structure(c["N"], c["sizes"], c["tau1"])
                I = np.eye(m)
                Xc = b[0].real * I + b[0].imag * Kst
                Nk = I
                for k in range(1, K + 1):
                    Nk = Nk @ c["N"]
                    Xc = Xc + (b[k].real * I + b[k].imag * Kst) @ Nk
                X += c["W"] @ Xc @ c["Z"]
            elif c["mu"].imag > 0:
                z0 = _nonreal_preimage(c["mu"], eps)
                b = _branch_coeffs(z0, eps, K)
                N = c["T"] - c["mu"] * np.eye(m)
                Xc = b[0] * np.eye(m, dtype=complex)
                Nk = np.eye(m, dtype=complex)
                for k in range(1, K + 1):
                    Nk = Nk @ N
                    Xc = Xc + b[k] * Nk
                Y = c["R"] @ Xc @ c["L"]
                X += 2 * Y.real
                continue
            else:
                continue
            fp_max = max(fp_max, abs(1 / b[1]) if len(b) > 1 else abs(complex(f_eps_prime(np.complex128(z0), eps))))
            branches.append([z0.real, z0.imag])
    except (ArithmeticError, np.linalg.LinAlgError, ValueError) as exc:
        out.update(representable=None, reason=out["reason"] + f"; but the construction failed: {exc}")
        return out
    theta = eps * X - np.eye(d) / (4 * eps)
    P = psi_eps(theta, eps)
    res = float(np.linalg.norm(P - D) / nrm)
    nX = float(np.linalg.norm(X))
    spread = max(c["spread"] for c in info)
    # error model (module docstring): rounding of the block diagonalisation (kappa_V), the expm forward error
    # of Psi_eps (|theta|/eps), rounding of X propagated through f (f'_max |X|), and the cluster spreads
    tol_model = 64 * d * EPS * kV * (1 + float(np.linalg.norm(theta)) / eps + fp_max * nX / nrm) + kV * spread / nrm
    tol = min(tol_model, math.sqrt(EPS))
    out.update(theta=theta, residual=res, tolerance=tol, tolerance_model=tol_model, kappa_V=kV, X_norm=nX, fprime_max=fp_max,
               residual_kind="relative |Psi_eps(theta) - D|_F / |D|_F")
    return out


# ---------------------------------------------------------------------------
# instance generators (the 'kind' parameter)
def _rot(z: complex) -> np.ndarray:
    return np.array([[z.real, -z.imag], [z.imag, z.real]])


def _random_similarity(d: int, rng) -> np.ndarray:
    """Q = U diag(s) V^T with Haar U, V and s in [0.5, 2]: cond(Q) <= 4."""
    U, _ = np.linalg.qr(rng.standard_normal((d, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return U @ np.diag(rng.uniform(0.5, 2.0, d)) @ V.T


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


# ===========================================================================
# Proposition 4.15
prop415 = Claim(
    id="sander.first_order_nonrepresentable",
    title="diag(-1, -lambda) (lambda > 0, lambda != 1) is in GL_2^+ but not a square, nor a first-order time-1 map",
    label="Prop 4.15",
    section="4.B.7",
    equation="(4.15)",
    lines=(3504, 3517),
    statement=r"A=\operatorname{diag}(-1,-\lambda),\ \lambda>0,\ \lambda\ne1:\ A\in GL_2^+(\mathbb R)\setminus GL_2(\mathbb R)^2"
              r"\text{ and }A\text{ is not the time-1 map of an autonomous }\dot x=f(x)",
    status="holds",
    params=[
        Param.float("lam", 2.0, 1e-6, 1e3, "lambda > 0 (>= 1e-6: below, the absolute error bound 8 eps of the "
                    "eigenvalue parts no longer separates -lambda from 0)", search=(0.05, 20.0)),
        Param.float("eps", 1.0, 0.01, 100.0, "eps for the comparison with the momentum linear model (values only)"),
    ],
    notes="The numeric check certifies det A = lambda > 0; the two negative eigenvalues -1, -lambda are simple "
          "(gap |lambda - 1| against their error), so any real square root commutes with A, is diagonal and would "
          "need m^2 = -1: no real square root (Higham / Culver C4.1, so also no real logarithm: A is not exp of a "
          "linear first-order flow); and the orbit points (0,1), (0,lambda^2) = A^2 (0,1) of the proof are distinct. "
          "The topological part (no nonlinear autonomous flow) is an argument, not a computation.  Values also "
          "report the decision of Thm 4.4 for the momentum model at eps (-1 < lambda_eps always: not representable).",
    catalogue="sander_part23 §2.1 P4.15, C4.1",
)


@prop415.numeric
def prop415_numeric(p):
    """det A = lambda > 0; eigenvalues -1, -lambda simple (no real square root, no real logarithm); scipy's sqrtm
    is non-real; orbit (0,1) -> (0,lambda^2) under A^2 is not closed."""
    if abs(p.lam - 1.0) <= 8 * EPS * max(1.0, p.lam):
        return inconclusive(f"lambda={p.lam!r} is 1 within rounding: the statement assumes lambda != 1 (diag(-1, -1) "
                            f"= expm([[0, -pi], [pi, 0]]) has a real square root; see the falsifier lambda_one)")
    return _prop415_parts(p)


def _prop415_parts(p):
    """The parts of prop415_numeric without its hypothesis lambda != 1 (the falsifier lambda_one drops it)."""
    lam = p.lam
    A = np.diag([-1.0, -lam])
    det = float(np.linalg.det(A))
    w = np.sort(np.linalg.eigvals(A).real)
    err = 8 * EPS * max(1.0, lam)
    Sq = sla.sqrtm(A.astype(complex))
    orbit = np.linalg.matrix_power(A, 2) @ np.array([0.0, 1.0])
    parts = {
        # numpy's det carries a relative error growing with |log det| (8 eps at lambda = 1e-8, 107 eps at 1e-300)
        "det_equals_lambda": (abs(det - lam), EPS * lam * (4 + 2 * abs(math.log(lam)))),
        "det_positive": (err, det),
        "eigenvalues_simple": (err, abs(lam - 1.0)),
        "both_negative": (err, float(-w.max())),
        "orbit_not_closed": (err * max(1.0, lam**2), float(np.linalg.norm(orbit - np.array([0.0, 1.0])))),
    }
    r = decide(A, p.eps)
    return Outcome.from_parts(parts, "A in GL_2^+ minus GL_2^2", {
        "det": det, "eigenvalues": w.tolist(), "sqrtm_imag_norm": float(np.linalg.norm(Sq.imag)),
        "A2_(0,1)": orbit.tolist(), "momentum_linear_model_representable": r["representable"],
        "momentum_reason": r["reason"]})


prop415.property(over=("lam",), max_examples=15)


#: the matrix A(lambda) of Prop 4.15 as printed (lambda > 0, lambda != 1), and misprints (mutants)
PROP415_FORMS = {"stated": lambda lam: sp.diag(-1, -lam), "lambda_is_one": lambda lam: sp.diag(-1, -1),
                 "signs_flipped": lambda lam: sp.diag(1, lam)}


def _prop415_solve(form):
    """sympy.solve M^2 = A over M = [[a, b], [c, e]]; a solution is real when its values are real for real free
    parameters.  Returns (real solutions + [no solution at all] + [det A not > 0], solutions)."""
    a, b, c, e = sp.symbols("a b c e")
    lam = sp.Symbol("lam", positive=True)
    A = PROP415_FORMS[form](lam)
    M = sp.Matrix([[a, b], [c, e]])
    sol = sp.solve(list(M * M - A), [a, b, c, e], dict=True)

    def real(v):
        return sp.im(v.subs({x: sp.Symbol(x.name, real=True) for x in v.free_symbols if x != lam})) == 0
    real_solutions = sum(1 for s_ in sol if all(real(v) for v in s_.values()))
    return real_solutions + (0 if sol else 1) + int(not A.det().is_positive), sol


@prop415.symbolic(timeout=60)
def prop415_symbolic(p):
    """sympy.solve M^2 = diag(-1, -lambda) over M = [[a, b], [c, e]] (lambda > 0 symbolic): every solution has
    a = +-i (none real), det A = lambda > 0; at lambda = 1 a real family a = -e, b = -(e^2 + 1)/c appears."""
    bad, sol = _prop415_solve("stated")
    _, sol1 = _prop415_solve("lambda_is_one")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.solve", "solutions": [str(s) for s in sol], "solutions_at_lambda_1": [str(s) for s in sol1],
        "proved": "M^2 = diag(-1, -lambda) has no real solution for generic lambda > 0"},
        message="number of real solutions")


@prop415.mutant({"lambda_is_one": "A = diag(-1, -1) (the hypothesis lambda != 1 dropped): M = J solves M^2 = A",
                 "signs_flipped": "A = diag(1, lambda): M = diag(1, sqrt(lambda)) is a real square root"}, timeout=60)
def prop415_mutant(p, variant):
    """The matrix perturbed, through the same sympy.solve: a real square root must appear."""
    bad, sol = _prop415_solve(variant)
    return Outcome(residual=bad, tolerance=0, values={"solutions": [str(s_) for s_ in sol]},
                   message=f"{bad} real square roots of the mutated A ({variant})")


@prop415.falsifier("lambda_one", fixed={"lam": 1.0})
def lambda_one(p):
    """lambda = 1: A = -I is the square of the rotation J and the time-1 map of x' = pi J x (expm(pi J) = -I)."""
    out = _prop415_parts(p)
    J = np.array([[0.0, -1.0], [1.0, 0.0]])
    out.values["counterexample_sqrt"] = J.tolist()
    out.values["|J^2 + I|"] = float(np.linalg.norm(J @ J + np.eye(2)))
    out.values["|expm(pi J) + I|"] = float(np.linalg.norm(sla.expm(np.pi * J) + np.eye(2)))
    out.message = "lambda = 1: -I = J^2 = expm(pi J); " + out.message
    return out
