r"""Which linear maps the linear Momentum ResNet represents (Sander thesis, ch. 4, Theorem 4.4 in the
diagonalisable case, Theorem 4.7 in the Jordan case and its gap at lambda_eps, G4.1): a *decision
procedure* with certificates.

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

import math

import numpy as np
import scipy.linalg as sla
import sympy as sp

from solvers.psi_eps import f_eps_prime, lambda_eps, psi_eps
from solvers.psi_preimage import _branch_coeffs, _nonreal_preimage, _real_preimage

EPS = float(np.finfo(float).eps)
GAP = 100.0          # rank gap factor: a singular value in (tau, GAP*tau] is undecidable


class _Undecided(Exception):
    """Floating point cannot decide (clusters, Jordan structure, branch)."""


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
