"""Menon §8.3 with §6.4 (seed lines 490-498, 696-738): the orthonormal basis of T_W M (Thm 14, erratum
E12), the Riemannian submersion phi: (M_r, iota) -> (M_r, g^N) (Thm 13) and its proof sketch (C8).

Conventions, the two routes to the tangent space and the subspace error model: see
``theorems/menon/_geometry.py``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

from ._common import EPS, balanced_instance, pairs, vec
from ._geometry import (GREY, RANK_TOL, _Q, _Sub, _dC_matrix, _dphi_matrix, _dz_matrix, _errata_replay, _instance,
                        _lam_param, _params, _sub_tol, _validate_lam)


def _min_gap(lam):
    lam = np.sort(np.asarray(lam))[::-1]
    return float(np.min(-np.diff(lam))) if len(lam) > 1 else np.inf


# ===========================================================================
# Thm 14 / E12: orthonormal basis of T_W M
def _edge_coef(lk, ll, N):
    """sqrt((lk^2 - ll^2)/(lk^{2N} - ll^{2N})) = (sum_j lk^{2j} ll^{2(N-1-j)})^{-1/2}, tie-safe."""
    return 1.0 / np.sqrt(sum(lk ** (2 * j) * ll ** (2 * (N - 1 - j)) for j in range(N)))


def _a_coef(lam, k, l, q, s, N):
    """a^{k,l,p,s} (8.22) with p = q."""
    th = q * np.pi / N
    return (lam[k] * np.sin((s - 1) * th) - lam[l] * np.sin(s * th)) / np.sqrt(
        N * (lam[k] ** 2 + lam[l] ** 2 - 2 * lam[k] * lam[l] * np.cos(th)))


def _thm14_basis(lam, Qs, sign=-1.0):
    """Columns: l^k (8.20), then for each pair k<l: u^{k,l,0} (8.23), u^{k,l,p} 1<=p<=N-1 (8.21) with the
    given sign of the second term (printed: +1, corrected: -1), u^{k,l,N} (8.24). Returns (B, labels)."""
    d, N = len(lam), len(Qs) - 1
    q = lambda s, k: _Q(Qs, s)[:, k]
    cols, labels = [], []
    for k in range(d):
        cols.append(vec([np.outer(q(s, k), q(s - 1, k)) / np.sqrt(N) for s in range(N, 0, -1)]))
        labels.append(("l", k))
    for k, l in pairs(d):
        c = _edge_coef(lam[k], lam[l], N)
        cols.append(vec([c * lam[k] ** (s - 1) * lam[l] ** (N - s) * np.outer(q(s, l), q(s - 1, k))
                         for s in range(N, 0, -1)]))
        labels.append(("u", k, l, 0))
        for pp in range(1, N):
            cols.append(vec([_a_coef(lam, k, l, pp, s, N) * np.outer(q(s, k), q(s - 1, l))
                             + sign * _a_coef(lam, l, k, pp, s, N) * np.outer(q(s, l), q(s - 1, k))
                             for s in range(N, 0, -1)]))
            labels.append(("u", k, l, pp))
        cols.append(vec([c * lam[k] ** (N - s) * lam[l] ** (s - 1) * np.outer(q(s, k), q(s - 1, l))
                         for s in range(N, 0, -1)]))
        labels.append(("u", k, l, N))
    return np.array(cols).T, labels


basis = Claim(
    id="menon.orthonormal_basis",
    title="An explicit orthonormal basis (l, u) of (T_W M, iota)",
    label="Thm 14",
    section="8.3",
    equation="(8.17)-(8.24)",
    lines=(696, 730),
    statement=r"u_s^{k,l,p}=a^{k,l,p,s}q_{s,k}q_{s-1,l}^T+a^{l,k,p,s}q_{s,l}q_{s-1,k}^T\ (1\le p\le N-1);\ "
              r"(\mathbf l^k,\mathbf u^{k,l,p})_{0\le p\le N}\text{ of (8.20)-(8.24) is an orthonormal basis of }"
              r"(T_{\mathbf W}\mathcal M,\iota)",
    status="erratum",
    corrected=r"u_s^{k,l,p}=a^{k,l,p,s}q_{s,k}q_{s-1,l}^T-a^{l,k,p,s}q_{s,l}q_{s-1,k}^T;\ "
              r"\text{then (8.20)-(8.24) is an orthonormal basis of }(T_{\mathbf W}\mathcal M,\iota)",
    params=_params(_lam_param()),
    validate=_validate_lam,
    notes="Erratum E12: with '+' in (8.21) the u^{k,l,p}, 1<=p<=N-1, are orthonormal but NORMAL to M "
          "(distance 1 to T_W M); with '-' every vector is orthonormal and tangent. Both signs lie in the "
          "ambient kernel of phi_*, so tangency must be tested, not membership in ker phi_*. Tangency is "
          "measured against two independent constructions of T_W M: the range of the exact differential "
          "of z (8.2 corrected) and the kernel of dC (the defining equations). Needs distinct lambda "
          "(z is a submersion there); ties give inconclusive.",
    catalogue="menon §2.5 Thm 14; §4 E12",
)


def _basis_outcome(p, sign):
    lam, Qs, Ws = _instance(p)
    d, N = p.d, p.N
    n, m = N * d * d, d + (N + 1) * d * (d - 1) // 2
    B, labels = _thm14_basis(lam, Qs, sign)
    # array-API path: the vectors and the two constructions of T_W M are assembled on the host; the Gram matrix,
    # the SVDs of Dz and dC and the distances to their subspaces run on p.backend
    xp = xp_of(p)
    Tz = _Sub(_dz_matrix(lam, Qs), "range", xp=xp)
    TC = _Sub(_dC_matrix(Ws), "kernel", xp=xp)
    if Tz.grey or TC.grey or Tz.rank != m:
        return inconclusive("Lambda has (near) ties: z is not a submersion at this point "
                            f"(rank Dz = {Tz.rank}, expected {m})", lam=lam.tolist())
    Bx = X.to_xp(xp, [B])[0]
    gram = float(xp.max(xp.abs(Bx.T @ Bx - xp.eye(m, dtype=Bx.dtype))))
    dz_dist, dC_dist = Tz.dist(Bx), TC.dist(Bx)
    ker = np.linalg.norm(_dphi_matrix(Ws) @ B[:, [i for i, lb in enumerate(labels) if lb[0] == "u" and 0 < lb[3] < N]],
                         axis=0) if N > 1 else np.zeros(1)
    # error model: entries from sin/cos/outer products, each ~ 4 eps; Gram entries sums of n terms
    gram_tol = 10 * n * EPS
    return Outcome.from_parts({
        "orthonormal": (gram, gram_tol),
        "tangent_range_Dz": (float(np.max(dz_dist)), _sub_tol(n, Tz.cond)),
        "tangent_ker_dC": (float(np.max(dC_dist)), _sub_tol(n, TC.cond)),
        "count_equals_dim_M": (abs(m - TC.basis.shape[1]), 0.5),
    }, values={"sign": "corrected (-)" if sign < 0 else "printed (+)", "gram_error": gram,
        "max_distance_to_range_Dz": float(np.max(dz_dist)), "max_distance_to_ker_dC": float(np.max(dC_dist)),
        "middle_vectors_max_distance": float(max((dC_dist[i] for i, lb in enumerate(labels)
                                                  if lb[0] == "u" and 0 < lb[3] < N), default=0.0)),
        "max_norm_phi_star_middle": float(np.max(ker)), "number_of_vectors": m, "dim_M": TC.basis.shape[1]},
        message="Thm 14 vectors: orthonormality and tangency to M")


@basis.numeric(backends=("numpy", "cupy"))
def basis_numeric(p):
    """With '-' in (8.21): Gram = I, every vector in T_W M (range of Dz and ker dC), count = dim M."""
    return _basis_outcome(p, -1.0)


basis.property(over=("d", "N", "seed"), max_examples=12)


@basis.falsifier("stated", search=("seed",))
def basis_stated(p):
    """(8.21) as printed ('+'): still orthonormal and in the ambient ker phi_*, but normal to M."""
    return _basis_outcome(p, +1.0)


def _cyclo_zero(expr, w, N):
    """expr, a polynomial in w = exp(i pi / N) (exponents reduced mod 2N), is 0 iff Phi_{2N}(w) divides it."""
    P = sp.Poly(sp.expand(expr), w)
    return P.rem(sp.Poly(sp.cyclotomic_poly(2 * N, w), w)).is_zero


def _pair_block(N, a, b, w, sign):
    """Coordinates (x_s, y_s) = coefficients of q_{s,k}q_{s-1,l}^T and q_{s,l}q_{s-1,k}^T of the N+1
    u-vectors of a pair (k, l) with lambda_k = a, lambda_l = b, unnormalised. For the middle vectors
    the true coefficient is (numerator)/(2i) with sin(j pi p/N) = (w^{jp} - w^{-jp})/(2i)."""
    s_ = lambda j: w ** (j % (2 * N)) - w ** ((-j) % (2 * N))
    vecs = [("real", [0] * N, [a ** (s - 1) * b ** (N - s) for s in range(1, N + 1)])]
    for q in range(1, N):
        x = [a * s_((s - 1) * q) - b * s_(s * q) for s in range(1, N + 1)]
        y = [sign * (b * s_((s - 1) * q) - a * s_(s * q)) for s in range(1, N + 1)]
        vecs.append(("imag", x, y))
    vecs.append(("real", [a ** (N - s) * b ** (s - 1) for s in range(1, N + 1)], [0] * N))
    return vecs


def _basis_failures(sign, Ns=tuple(range(2, 8))):
    """Identities of Thm 14 that fail, exactly in w = e^{i pi/N} modulo the cyclotomic polynomial, for the
    sign ``sign`` of (8.21) (-1 corrected, E12; +1 printed): the discrete sine sums, the telescoping kernel
    identity, the Gram matrix and the tangency equations (dC = 0) of the pair block (u^{k,l,p})_{0<=p<=N}."""
    a, b, w = sp.symbols("a b w")
    bad = 0
    for N in Ns:
        s_ = lambda j: w ** (j % (2 * N)) - w ** ((-j) % (2 * N))  # noqa: E731
        cos = lambda q: (w ** (q % (2 * N)) + w ** ((-q) % (2 * N))) / 2  # noqa: E731
        for q in range(1, N):
            for r in range(1, N):
                # sum_s sin(s q pi/N) sin(s r pi/N) = N/2 delta  (sin*sin = -(s_ s_)/4)
                e = -sum(s_(s * q) * s_(s * r) for s in range(1, N + 1)) / 4 - (sp.Rational(N, 2) if q == r else 0)
                bad += int(not _cyclo_zero(e, w, N))
            # sum_s sin((s-1) theta) sin(s theta) = N/2 cos theta
            e = -sum(s_((s - 1) * q) * s_(s * q) for s in range(1, N + 1)) / 4 - sp.Rational(N, 2) * cos(q)
            bad += int(not _cyclo_zero(e, w, N))
        # telescoping: sum_s a^{N-s} b^{s-1} (a f_{s-1} - b f_s) = a^N f_0 - b^N f_N for any f
        f = sp.symbols(f"f0:{N + 1}")
        e = sum(a ** (N - s) * b ** (s - 1) * (a * f[s - 1] - b * f[s]) for s in range(1, N + 1)) - (a ** N * f[0] - b ** N * f[N])
        bad += int(sp.expand(e) != 0)
        # Gram of the pair block and tangency: a x_{s+1} + b y_{s+1} = b x_s + a y_s
        vecs = _pair_block(N, a, b, w, sign)
        geo = sum(a ** (2 * j) * b ** (2 * (N - 1 - j)) for j in range(N))
        for i, (ti, xi, yi) in enumerate(vecs):
            for j, (tj, xj, yj) in enumerate(vecs):
                ip = sum(u * v for u, v in zip(xi + yi, xj + yj))
                if ti == tj == "imag":   # true value -ip/4; norm^2 must be N(a^2+b^2-2ab cos)
                    target = N * (a * a + b * b - 2 * a * b * cos(i)) if i == j else 0
                    e = -ip / 4 - target
                elif ti == tj == "real":
                    e = ip - (geo if i == j else 0)
                else:                    # true value ip/(2i): zero iff the numerator is zero
                    e = ip
                bad += int(not _cyclo_zero(e, w, N))
            for s in range(N - 1):
                bad += int(not _cyclo_zero(a * xi[s + 1] + b * yi[s + 1] - b * xi[s] - a * yi[s], w, N))
    return bad


@basis.symbolic(timeout=60)
def basis_symbolic(p):
    """Exact in w = e^{i pi/N} modulo the cyclotomic polynomial, N = 2..7, symbolic lambda_k, lambda_l:
    the discrete sine sums, the telescoping kernel identity, and for the corrected sign the Gram matrix
    and the tangency equations of the pair block (u^{k,l,p})_{0<=p<=N}."""
    bad = _basis_failures(-1)
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy Poly remainder modulo cyclotomic_poly(2N, w), w = exp(i pi/N); sympy.expand",
        "instances": [f"N={N}" for N in range(2, 8)],
        "proved": "sum_s sin(s th) sin(s th') = N/2 delta; sum_s sin((s-1) th) sin(s th) = N/2 cos th; "
                  "telescoping kernel identity; pair-block Gram = diag(norms) and tangency (dC = 0) with '-'"},
        message="identities that did not reduce to zero")


@basis.mutant("printed_plus_sign", timeout=60)
def basis_mutant(p):
    """(8.21) as printed ('+', E12) through the same exact procedure: its tangency equations fail (the
    printed u^{k,l,p} are orthonormal but normal to M)."""
    bad = _basis_failures(+1)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad,
                                                      "method": "exact, modulo cyclotomic_poly(2N)"},
                   message=f"{bad} identities (tangency equations) of the printed u^{{k,l,p}} did not vanish")


# ===========================================================================
# Thm 13: phi: (M_r, iota) -> (M_r, g^N) is a Riemannian submersion
def _validate_zeros(p):
    if p.zeros > p.d - 1:
        raise ParamError(f"parameter zeros={p.zeros} must be <= d-1={p.d - 1} (rank r = d - zeros >= 1)")


submersion = Claim(
    id="menon.riemannian_submersion",
    title="g^N on M_r is induced from (M_r, iota) by the Riemannian submersion phi",
    label="Thm 13",
    section="6.4, 8.3",
    equation="(4.16)",
    lines=(490, 498),
    statement=r"\text{for }1\le r\le d,\ \mathbf V\in(\ker\phi_*)^\perp\subset T_{\mathbf W}\mathcal M_r:\ "
              r"\|\mathbf V\|^2=g^N(\phi_*\mathbf V,\phi_*\mathbf V)=\operatorname{Tr}\bigl((\phi_*\mathbf V)^T"
              r"\mathcal A_{N,W}^{-1}\phi_*\mathbf V\bigr)",
    status="holds",
    params=_params(Param.int("zeros", 0, 0, 4, "number of vanishing singular values (rank r = d - zeros)",
                             search=(0, 2))),
    validate=_validate_zeros,
    notes="T_W M_r is the range of the exact differential of z with theta supported on the nonzero lambda "
          "(all of M_r is z(Lambda_r, Q)); the horizontal space is its orthogonal complement of ker phi_*. "
          "The identity is checked as a matrix identity on an orthonormal basis H of the horizontal space: "
          "H^T H = I = (J_phi H)^T A^+ (J_phi H), with A^+ the pseudo-inverse of A_{N,W} (A is singular on "
          "the u_k v_l^T with k, l > r, which are not in T M_r). Also checked: rank phi_* = r(2d - r) and "
          "phi_* H lies in the range of A. The proof in the text is for r = d; lines 732-734 defer the "
          "rank-deficient case to [34].",
    catalogue="menon §2.5 Thm 13, C8; §4 E8",
    covers=("K1",),
)


def _submersion_outcome(p, point="balanced", metric="inverse"):
    d, N = p.d, p.N
    n = N * d * d
    if point == "balanced":
        lam, Qs, Ws = balanced_instance(d, N, p.seed, zeros=p.zeros)
        r = d - p.zeros
        T = _Sub(_dz_matrix(lam, Qs, theta_idx=range(r)), "range")
    else:   # the nearest point of an M_G with G != 0: the balanced point moved by OFF_M0 Gaussian; T_W M_G = ker dC
        _, _, Ws = balanced_instance(d, N, p.seed, zeros=0)
        rng = np.random.default_rng(p.seed + 7919)
        Ws = [w + OFF_M0 * rng.standard_normal(w.shape) for w in Ws]
        r = d
        T = _Sub(_dC_matrix(Ws), "kernel")
    Jphi = _dphi_matrix(Ws)
    JT = Jphi @ T.basis
    U, s, Vt = np.linalg.svd(JT)
    rank = int(np.sum(s > RANK_TOL * s[0]))
    if T.grey or np.any((s > GREY * s[0]) & (s <= RANK_TOL * s[0])):
        return inconclusive("a singular value in the rank grey zone", zeros=p.zeros)
    H = T.basis @ Vt[:rank].T                      # orthonormal basis of the horizontal space
    Z = Jphi @ H
    W = dln.prod(Ws)
    A = dln.a_matrix(W, N)
    ev = np.linalg.eigvalsh((A + A.T) / 2)
    keep = ev > 1e-9 * ev[-1]
    condA = float(ev[-1] / ev[keep][0])
    if metric == "inverse":
        M = np.linalg.pinv((A + A.T) / 2, rcond=1e-9, hermitian=True)
    else:                                          # falsifier: A instead of A^{-1} (cf. E8)
        M = A
    G = Z.T @ M @ Z
    err = float(np.max(np.abs(G - np.eye(rank))))
    in_range = float(np.max(np.abs(Z - A @ np.linalg.pinv(A, rcond=1e-9) @ Z))) if rank else 0.0
    # error model: Z carries n eps |J_phi| relative rounding amplified by the subspace conditions;
    # the quadratic form in A^+ multiplies it by cond(A) on T M_r.  Safety factor 50.
    tol = 50 * (n + d * d) * EPS * (condA + T.cond + float(s[0] / s[rank - 1]))
    hv = np.random.default_rng(p.seed + 3).standard_normal(rank)
    Vr = H @ hv
    Zr = Jphi @ Vr
    return Outcome.from_parts({
        "isometry": (err, tol),
        "rank_phi_star": (abs(rank - r * (2 * d - r)), 0.5),
        "image_in_range_A": (in_range, tol * max(1.0, float(np.max(np.abs(Z))))),
    }, values={"point": point, "metric": metric, "rank": r, "rank_phi_star": rank, "r(2d-r)": r * (2 * d - r),
        "max_abs_gram_error": err, "cond_A_on_TM_r": condA,
        "random_horizontal_V": {"|V|^2": float(Vr @ Vr), "g^N(phi_* V, phi_* V)": float(Zr @ M @ Zr)}},
        message=f"horizontal Gram (Frobenius) vs g^N Gram of phi_* H ({point} point, A{'^+' if metric == 'inverse' else ''})")


@submersion.numeric
def submersion_numeric(p):
    """On an orthonormal basis H of (ker phi_*)^perp in T_W M_r: (J_phi H)^T A^+ (J_phi H) = I."""
    return _submersion_outcome(p)


submersion.property(over=("d", "N", "seed", "zeros"), max_examples=15)


OFF_M0 = 1e-3   # size of the layers' move off M_0 in the falsifier g_nonzero (|G_p| = O(1e-3))


@submersion.falsifier("g_nonzero", search=("seed",))
def submersion_g_nonzero(p):
    """Drop G = 0 at the nearest point: the numeric check's balanced point with its layers moved by 1e-3 (so it lies
    on an M_G with |G| = O(1e-3), T = ker dC), through the same isometry test: phi with iota no longer induces
    g^N, the Gram defect is O(|G|), ~1e8 times the rounding tolerance.  (It drew independent Gaussian layers,
    far from M_0.)"""
    return _submersion_outcome(p.replace(zeros=0), point="generic")


@submersion.falsifier("a_instead_of_inverse", search=("seed",))
def submersion_a(p):
    """The quadratic form of A instead of A^{-1} (the slip of (7.15), E8): not an isometry."""
    return _submersion_outcome(p, metric="A")


# ===========================================================================
# C8: proof sketch of Thm 13 from Thm 14
sketch = Claim(
    id="menon.submersion_proof_sketch",
    title="phi_* maps l, u^{k,l,0}, u^{k,l,N} onto a g^N-orthonormal eigenbasis of A; ker phi_* = span u^{k,l,p}",
    label="C8 (proof of Thm 13)",
    section="8.3",
    equation="(7.13)-(7.14), (8.20)-(8.24)",
    lines=(732, 738),
    statement=r"\ker\phi_*=\operatorname{span}\{\mathbf u^{k,l,p}\}_{1\le p\le N-1},\ "
              r"\phi_*\mathbf u^{k,l,0}=\sqrt{\tfrac{\lambda_k^{2N}-\lambda_l^{2N}}{\lambda_k^2-\lambda_l^2}}\,u_lv_k^T,\ "
              r"\phi_*\mathbf u^{k,l,N}=\sqrt{\cdots}\,u_kv_l^T,\ \phi_*\mathbf l^k=\sqrt N\lambda_k^{N-1}u_kv_k^T,"
              r"\text{ each of unit }g^N\text{-norm}",
    status="holds",
    params=_params(_lam_param()),
    validate=_validate_lam,
    notes="u_k, v_k are the columns of Q_N, Q_0 (W = Q_N Sigma Q_0^T). The images are g^N-orthonormal with "
          "g^N(Z,Z) = Tr(Z^T A^{-1} Z); the diagonal term of (7.15) as printed (E8) would give "
          "g^N(phi_* l^k) = N^2 lambda_k^{4N-4} instead of 1 (falsifier). Uses the corrected sign of (8.21) "
          "(E12); ker phi_* is taken inside T_W M (the ambient kernel is larger, E19).",
    catalogue="menon §2.5 C8, Thm 13; §4 E8, E12",
)


def _sketch_outcome(p, metric="inverse"):
    lam, Qs, Ws = _instance(p)
    d, N = p.d, p.N
    n = N * d * d
    if _min_gap(lam) < 1e-6 * float(np.max(lam)):
        return inconclusive("Lambda has ties: the SVD frame u_k, v_k is not determined", lam=lam.tolist())
    B, labels = _thm14_basis(lam, Qs, -1.0)
    Jphi = _dphi_matrix(Ws)
    img = Jphi @ B
    U, V = _Q(Qs, N), _Q(Qs, 0)
    pred = np.zeros_like(img)
    horiz = []
    for i, lb in enumerate(labels):
        if lb[0] == "l":
            k = lb[1]
            pred[:, i] = np.sqrt(N) * lam[k] ** (N - 1) * np.outer(U[:, k], V[:, k]).ravel()
            horiz.append(i)
        else:
            _, k, l, q = lb
            c = 1.0 / _edge_coef(lam[k], lam[l], N)
            if q == 0:
                pred[:, i] = c * np.outer(U[:, l], V[:, k]).ravel()
                horiz.append(i)
            elif q == N:
                pred[:, i] = c * np.outer(U[:, k], V[:, l]).ravel()
                horiz.append(i)
    img_err = float(np.max(np.abs(img - pred)))
    lmax = max(1.0, float(np.max(lam)))
    # error model: phi_* sums N products of N d x d factors, |A_{p+1}||B_{p-1}| <= lmax^{N-1}
    img_tol = 4 * N * N * d * EPS * lmax ** (N - 1)
    Z = img[:, horiz]
    W = dln.prod(Ws)
    if metric == "inverse":
        A = dln.a_matrix(W, N)
        ev = np.linalg.eigvalsh((A + A.T) / 2)
        condA = float(ev[-1] / ev[0])
        G = Z.T @ np.linalg.solve(A, Z)
    else:   # (7.15) as printed, in the SVD frame
        condA = 1.0
        sig = lam ** N
        G = np.zeros((len(horiz), len(horiz)))
        for a_, ia in enumerate(horiz):
            for b_, ib in enumerate(horiz):
                Za, Zb = U.T @ Z[:, a_].reshape(d, d) @ V, U.T @ Z[:, b_].reshape(d, d) @ V
                tot = 0.0
                for k in range(d):
                    tot += N * sig[k] ** (2 - 2 / N) * Za[k, k] * Zb[k, k]
                    for l in range(d):
                        if k != l:
                            tot += (sig[k] ** (2 / N) - sig[l] ** (2 / N)) / (sig[k] ** 2 - sig[l] ** 2) * Za[k, l] * Zb[k, l]
                G[a_, b_] = tot
    g_err = float(np.max(np.abs(G - np.eye(len(horiz)))))
    g_tol = 20 * (n + d * d) * EPS * condA * lmax ** 2
    Tz = _Sub(_dz_matrix(lam, Qs), "range")
    kerT = _Sub(Jphi @ Tz.basis, "kernel")
    middle = [i for i, lb in enumerate(labels) if lb[0] == "u" and 0 < lb[3] < N]
    mid_img = float(np.max(np.abs(img[:, middle]))) if middle else 0.0
    return Outcome.from_parts({
        "images": (img_err, img_tol),
        "g_orthonormal": (g_err, g_tol),
        "kernel_vectors": (mid_img, img_tol),
        "dim_kernel": (abs(kerT.basis.shape[1] - len(middle)), 0.5),
    }, values={"max_abs_image_error": img_err, "g_gram_error": g_err, "max_abs_phi_star_middle": mid_img,
        "dim_ker_phi_star_in_T": kerT.basis.shape[1], "number_of_middle_vectors": len(middle),
        "metric": "Tr(Z^T A^{-1} Z)" if metric == "inverse" else "(7.15) as printed",
        "g_norms_of_images": np.diag(G).tolist()},
        message="phi_* of the Thm 14 basis against the eigenbasis of A (Lemma 1)")


@sketch.numeric
def sketch_numeric(p):
    """phi_* of l^k, u^{k,l,0}, u^{k,l,N} are the predicted multiples of u_k v_l^T, g^N-orthonormal;
    phi_* u^{k,l,p} = 0 for 1<=p<=N-1 and these span ker phi_* ∩ T_W M."""
    return _sketch_outcome(p)


sketch.property(over=("d", "N", "seed"), max_examples=12)


@sketch.falsifier("metric_7_15_printed", search=("seed",))
def sketch_printed_metric(p):
    """g^N by (7.15) as printed (diagonal term N sigma^{2-2/N} Z_kk^2, E8): the images of l^k are not unit."""
    return _sketch_outcome(p, metric="printed")


#: the squared coefficients of phi_* u^{k,l,0} and phi_* l^k (in a = lambda_k, b = lambda_l) and the g^N weight
#: of u_k v_k^T, as the proof sketch has them, and the nearest misprints (mutants): the edge coefficient without
#: its square root, and the diagonal weight of (7.15) as printed (E8), N sigma^{2-2/N} in place of its inverse
SKETCH_FORMS = {
    "stated": {"edge2": lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2), "printed_diag": False},
    "edge_coefficient_not_square_rooted": {
        "edge2": lambda a, b, N: ((a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2)) ** 2, "printed_diag": False},
    "diagonal_weight_7_15_printed": {
        "edge2": lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2), "printed_diag": True},
}


def _sketch_failures(form):
    """N = 1..8, symbolic lambda: the geometric sum giving phi_* u^{k,l,0}, the telescoping kernel identity, and
    the g^N norms |c Z|^2 = c^2 / mu(Z) of the images, mu the eigenvalue of A_{N,W} (4.14) on u_k v_l^T summed
    from its definition, sum_j sigma_k^{2(N-j)/N} sigma_l^{2(j-1)/N} with sigma = lambda^N; count failures."""
    fm = SKETCH_FORMS[form]
    a, b = sp.symbols("a b", positive=True)
    bad = 0
    for N in range(1, 9):
        geo = sum(a ** (2 * (s - 1)) * b ** (2 * (N - s)) for s in range(1, N + 1))
        bad += int(sp.expand((a * a - b * b) * geo - (a ** (2 * N) - b ** (2 * N))) != 0)
        f = sp.symbols(f"f0:{N + 1}")
        tel = sum(a ** (N - s) * b ** (s - 1) * (a * f[s - 1] - b * f[s]) for s in range(1, N + 1))
        bad += int(sp.expand(tel - (a ** N * f[0] - b ** N * f[N])) != 0)
        mu = lambda x, y: sum(x ** (2 * (N - j)) * y ** (2 * (j - 1)) for j in range(1, N + 1))  # noqa: E731
        # off-diagonal image c u_l v_k^T: unit g^N norm
        bad += int(sp.cancel(fm["edge2"](a, b, N) / mu(b, a) - 1) != 0)
        # diagonal image sqrt(N) a^{N-1} u_k v_k^T: unit g^N norm
        weight = N * a ** (2 * N - 2) if fm["printed_diag"] else 1 / mu(a, a)
        bad += int(sp.cancel(N * a ** (2 * N - 2) * weight - 1) != 0)
    return bad


@sketch.symbolic(timeout=60)
def sketch_symbolic(p):
    """N = 1..8, symbolic lambda: the geometric sum giving phi_* u^{k,l,0}, the telescoping kernel identity,
    and the unit g^N norms of the images, with A_{N,W}'s eigenvalues summed from (4.14) (sigma = lambda^N)."""
    bad = _sketch_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand / cancel", "instances": [f"N={N}" for N in range(1, 9)],
        "proved": "(a^2-b^2) sum_s a^{2(s-1)} b^{2(N-s)} = a^{2N}-b^{2N}; telescoping kernel identity; "
                  "unit g^N norms of phi_* u^{k,l,0}, phi_* l^k against the eigenvalues of A_{N,W} from (4.14)"},
        message="identities that did not reduce to zero")


@sketch.mutant({"edge_coefficient_not_square_rooted": "phi_* u^{k,l,0} = (lambda_k^{2N}-lambda_l^{2N})/"
                                                      "(lambda_k^2-lambda_l^2) u_l v_k^T (no square root)",
                "diagonal_weight_7_15_printed": "g^N(u_kv_k^T) = N sigma_k^{2-2/N} as printed in (7.15) (E8)"},
               timeout=60)
def sketch_mutant(p, variant):
    """The proof sketch misprinted, through the same procedure: some norm must fail to be 1."""
    bad = _sketch_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities failed for the misprinted sketch")


@basis.reproduction
def basis_reproduction(p):
    """Catalogue §4.1 output 'E12' (d = 3, N = 4, lam = (1.7, 1.1, 0.6), replayed frames): sign +1 at
    distance 1.000 from T_W M, sign -1 at 1.517e-10 (the quote's tangent space came from finite
    differences; here it is exact, so the corrected distance is compared with the rounding model)."""
    lam, Qs = _errata_replay()
    N, d = 4, 3
    n = N * d * d
    T = _Sub(_dz_matrix(lam, Qs), "range")
    out = {}
    for sign in (+1, -1):
        B, _ = _thm14_basis(lam, Qs, sign)
        out[sign] = (float(np.max(np.abs(B.T @ B - np.eye(B.shape[1])))), float(np.max(T.dist(B))))
    tol_sub = _sub_tol(n, T.cond)
    res = max(abs(out[+1][1] - 1.000) / 5e-4, out[-1][1] / tol_sub, out[+1][0] / (10 * n * EPS),
              out[-1][0] / (10 * n * EPS))
    return Outcome(residual=res, tolerance=1.0, values={
        "printed_sign": {"gram_error": out[+1][0], "max_distance": out[+1][1], "quoted": [8.9e-16, 1.000]},
        "corrected_sign": {"gram_error": out[-1][0], "max_distance": out[-1][1], "quoted": [6.7e-16, 1.517e-10]},
        "subspace_tolerance": tol_sub},
        message="E12 replay: printed distance 1.000 (quoted to 4 digits), corrected at rounding level")
