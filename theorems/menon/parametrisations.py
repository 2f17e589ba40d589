"""Section 5: polar factorisation and SVD, the parametrisations r (polar, both directions) and z (SVD)
of the G-balanced varieties, the scalar conic sections, and the rank-deficient extension.

Sign convention: G_p is used exactly as in (4.2)/(5.6), ``W_{p+1}^T W_{p+1} = W_p W_p^T - G_p``, i.e.
``G_p = -C_p`` with ``C_p`` of the package docstring (erratum E1).  With this sign the right-to-left
construction (5.7)-(5.8) needs ``R_p^2 - G_p`` psd (G_p negative definite suffices) and the
left-to-right one (5.12) needs ``P_{p+1}^2 + G_p`` psd (G_p positive definite suffices).

Several checks combine a few sub-checks, each with its own error model; they are reported as
``residual = max_i r_i / tol_i`` against ``tolerance = 1`` and every ``r_i``, ``tol_i`` is listed in
``values`` (so ``residual <= 1`` iff every sub-check holds within its own tolerance).
"""
from __future__ import annotations

import itertools

import numpy as np
import sympy as sp
from scipy.linalg import expm

from solvers import dln, rk
from solvers import xp_menon as X
from solvers.matfun import psd_sqrt
from solvers.xp import namespace, xp_of
from theorems import matrices as M
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import EPS, alpha, pairs, rng_for, vec


# ---------------------------------------------------------------------------
# shared helpers
def _so_basis(d):
    return [alpha(d, k, l) for (k, l) in pairs(d)]


def _rank_part(J, expected):
    """Numerical rank test of a matrix that should have rank ``expected`` (full column rank when
    ``expected == J.shape[1]``).  Error model: J is exact up to rounding, |dJ|_2 <= n eps |J|_2; the
    rank is ``expected`` iff s_expected > 100 n eps s_max and s_{expected+1} is below it.
    Sub-check residual: thr / s_expected (<= 1 when the gap is resolved) and s_{expected+1} / thr."""
    s = np.linalg.svd(J, compute_uv=False) if isinstance(J, np.ndarray) else X.host(namespace(J).linalg.svdvals(J))
    thr = 100 * max(J.shape) * EPS * s[0]
    num_rank = int(np.sum(s > thr))
    lo = s[expected - 1] if expected >= 1 else np.inf
    hi = s[expected] if expected < len(s) else 0.0
    return (max(thr / lo, hi / thr), 1.0), num_rank, float(lo)


def _balanced_residual(Ws, Gs=None):
    """max_p |W_{p+1}^T W_{p+1} - W_p W_p^T + G_p|_F (4.2) and the per-p scale |W_{p+1}|^2+|W_p|^2+|G_p|."""
    N = len(Ws)
    res, scale = 0.0, 0.0
    for p in range(1, N):
        Wp1, Wp = dln.layer(Ws, p + 1), dln.layer(Ws, p)
        G = 0.0 if Gs is None else Gs[p]
        res = max(res, X.fro(Wp1.T @ Wp1 - Wp @ Wp.T + G))
        scale = max(scale, X.vdot(Wp1, Wp1) + X.vdot(Wp, Wp) + (0 if Gs is None else float(np.linalg.norm(G))))
    return res, scale


def _constraint_differential(Ws):
    """Matrix of V -> (V_{p+1}^T W_{p+1} + W_{p+1}^T V_{p+1} - V_p W_p^T - W_p V_p^T)_p (exact, linear)."""
    N, d = len(Ws), Ws[0].shape[0]
    cols = []
    for i in range(N):
        for a in range(d * d):
            V = [np.zeros((d, d)) for _ in range(N)]
            V[i].flat[a] = 1.0
            out = []
            for p in range(1, N):
                Vp1, Vp, Wp1, Wp = dln.layer(V, p + 1), dln.layer(V, p), dln.layer(Ws, p + 1), dln.layer(Ws, p)
                out.append(Vp1.T @ Wp1 + Wp1.T @ Vp1 - Vp @ Wp.T - Wp @ Vp.T)
            cols.append(vec(out))
    return np.array(cols).T


def _fd_jacobian(f, n, h=1e-5):
    """Central differences at step h and 2h.  Error model: J_h = J + O(h^2) truncation + O(eps |f| / h)
    rounding; the truncation is estimated by Richardson, |J_h - J_2h| / 3, and the rounding floor is
    10 eps max|f| / h per entry (times sqrt of the size for the 2-norm)."""
    f0 = f(np.zeros(n))
    J1 = np.empty((f0.size, n))
    J2 = np.empty((f0.size, n))
    for a in range(n):
        e = np.zeros(n)
        e[a] = 1.0
        J1[:, a] = (f(h * e) - f(-h * e)) / (2 * h)
        J2[:, a] = (f(2 * h * e) - f(-2 * h * e)) / (4 * h)
    err = np.linalg.norm(J1 - J2, 2) / 3 + 10 * EPS * np.max(np.abs(f0)) / h * np.sqrt(J1.size)
    return J1, err


def _jacobian_parts(f, n, Ws):
    """Immersion and tangency sub-checks for a parametrisation f: R^n -> M_G (f(0) = Ws):
    D f has full column rank n (s_min > 10 err), d(C_p) . D f = 0 (within |dC| err) and d(C_p) has
    rank (N-1)d(d+1)/2 (so M_G is a manifold of dimension N d^2 - (N-1)d(d+1)/2 at the point)."""
    N, d = len(Ws), Ws[0].shape[0]
    J, err = _fd_jacobian(f, n)
    s = np.linalg.svd(J, compute_uv=False)
    dC = _constraint_differential(Ws)
    ncon = (N - 1) * d * (d + 1) // 2
    con_part, con_rank, _ = _rank_part(dC, ncon) if N > 1 else ((0.0, 1.0), 0, np.inf)
    tang = float(np.linalg.norm(dC @ J, 2)) if N > 1 else 0.0
    dCn = float(np.linalg.norm(dC, 2)) if N > 1 else 0.0
    parts = {"Dr full column rank (immersion)": (10 * err, float(s[-1])),
             "dC_p . Dr = 0 (tangent to M_G)": (tang, 10 * dCn * err + 1e-300),
             "rank dC = (N-1)d(d+1)/2": con_part}
    vals = {"jacobian_rank": int(np.sum(s > 10 * err)), "jacobian_smin": float(s[-1]), "fd_error": err,
            "constraint_rank": con_rank, "dim_formula": d * d + (N - 1) * d * (d - 1) // 2,
            "dim_from_constraints": N * d * d - con_rank}
    return parts, vals


def _neg_def(rng, d, scale):
    M = rng.standard_normal((d, d))
    return -scale * (M @ M.T / d + 0.2 * np.eye(d))


# ===========================================================================
# P1: polar factorisation and SVD (5.1)-(5.4)
def _validate_polar(p):
    if p.rank is not None and p.rank > p.d:
        raise ParamError(f"parameter rank={p.rank} exceeds d={p.d}")
    if p.W is not None and p.W.shape[0] != p.W.shape[1]:
        raise ParamError(f"parameter W must be square, got shape {p.W.shape}")


polar_svd = Claim(
    id="menon.polar_svd",
    title="Polar factorisation and its relation to the SVD",
    label="(5.1)-(5.4)",
    section="5.1",
    equation="(5.1)-(5.4)",
    lines=(338, 354),
    statement=r"W=QP=RU^T,\ P=\sqrt{W^TW},\ R=\sqrt{WW^T};\ W=V_R\Sigma V_P^T\Rightarrow "
              r"P=V_P\Sigma V_P^T,\ R=V_R\Sigma V_R^T,\ Q=V_RV_P^T,\ U=V_PV_R^T",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "size of W", search=(1, 5)),
        Param.seed("seed of the random W"),
        Param.int("rank", None, 0, 8, "rank of the random W (null: full rank)", search=(0, 5)),
        Param.matrix("W", None, "a square matrix of your own (overrides d, seed, rank)", shape=("d", "d"),
                     families=M.DEFAULT_FAMILIES + ("spd", "seed")),
    ],
    validate=_validate_polar,
    notes="P and R are unique for every W (psd square roots); the orthogonal factors Q, U are unique "
          "only for invertible W (falsifier non_unique_polar_factor).  (5.4) gives *a* valid polar "
          "factor also when W is singular, which is what the numeric check tests.",
    catalogue="menon §2.4 P1",
)


def _polar_instance(p):
    if p.W is not None:
        return np.asarray(p.W, dtype=float)
    rng = rng_for(p.seed)
    d = p.d
    r = d if p.rank is None else p.rank
    return rng.standard_normal((d, r)) @ rng.standard_normal((r, d)) / np.sqrt(max(r, 1))


def _polar_factors(W, swap=False):
    """SVD and polar factors of W on its own array-API backend."""
    VR, s, VPt = namespace(W).linalg.svd(W)
    VP = VPt.T
    P = VP @ X.diag(s) @ VP.T
    R = VR @ X.diag(s) @ VR.T
    Q = VP @ VR.T if swap else VR @ VP.T
    U = VR @ VP.T if swap else VP @ VR.T
    return VR, s, VP, P, R, Q, U


def _polar_parts(W, swap=False):
    """Error model: the SVD is backward stable, |W - V_R S V_P^T| <= c d eps |W|_2; every product of
    O(1) many factors adds d eps |W|; so each relation holds to 50 d eps |W|_2 (|W|_2^2 for P^2, R^2).
    The independent psd square root sqrt(W^T W) (eigh, 1e-12 relative cutoff) differs from V_P S V_P^T
    by at most min(sqrt(delta), delta / s_min) with delta = 50 d eps |W|^2 + 1e-12 |W|^2 (cutoff)."""
    d = W.shape[0]
    xp = namespace(W)
    VR, s, VP, P, R, Q, U = _polar_factors(W, swap)
    sh = X.host(s)
    nW = max(float(sh[0]), 1e-300)
    t1, t2 = 50 * d * EPS * nW, 50 * d * EPS * nW ** 2
    I = xp.eye(d, dtype=W.dtype)
    delta = t2 + (1e-12 * nW ** 2 if sh[-1] ** 2 <= 1e-10 * nW ** 2 else 0.0)
    tsq = 2 * (min(np.sqrt(delta), delta / sh[-1]) if sh[-1] > 0 else np.sqrt(delta))
    lo = lambda S: float(xp.linalg.eigvalsh((S + S.T) / 2)[0])  # noqa: E731
    parts = {
        "(5.2) W = V_R S V_P^T": (X.norm2(W - VR @ X.diag(s) @ VP.T), t1),
        "(5.1) W = QP": (X.norm2(W - Q @ P), t1),
        "(5.1) W = RU^T": (X.norm2(W - R @ U.T), t1),
        "P^2 = W^T W": (X.norm2(P @ P - W.T @ W), t2),
        "R^2 = W W^T": (X.norm2(R @ R - W @ W.T), t2),
        "P, R psd": (max(0.0, -lo(P), -lo(R)), t1),
        "Q, U orthogonal": (max(X.norm2(Q.T @ Q - I), X.norm2(U.T @ U - I)), 50 * d * EPS),
        "(5.3) P = sqrt(W^T W)": (X.norm2(P - psd_sqrt(W.T @ W)), tsq),
        "(5.3) R = sqrt(W W^T)": (X.norm2(R - psd_sqrt(W @ W.T)), tsq),
    }
    return parts, {"singular_values": sh.tolist(), "Q": X.host(Q).tolist(), "P": X.host(P).tolist()}


@polar_svd.numeric(backends=("numpy", "cupy"))
def _(p):
    """Every relation (5.1)-(5.4) on a random (or given) W, each to its rounding tolerance (array-API: W drawn on
    the host, the SVD, polar factors and psd square roots on p.backend)."""
    W = X.to_xp(xp_of(p), [_polar_instance(p)])[0]
    parts, vals = _polar_parts(W)
    return Outcome.from_parts(parts, "polar/SVD relations (5.1)-(5.4)", vals)


polar_svd.property(over=("d", "seed", "rank", "W"), max_examples=20)


@polar_svd.falsifier("swapped_relation", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """The wrong relation Q = V_P V_R^T, U = V_R V_P^T (the two factors of (5.4) swapped)."""
    W = X.to_xp(xp_of(p), [_polar_instance(p)])[0]
    parts, vals = _polar_parts(W, swap=True)
    return Outcome.from_parts(parts, "polar relations with Q = V_P V_R^T", vals)


@polar_svd.falsifier("non_unique_polar_factor", search=("seed", "d"), fixed={"rank": 2})
def _(p):
    """'The orthogonal polar factor is unique' fails for singular W: flipping the sign of the null
    singular vector gives Q' = V_R D V_P^T != Q with W = Q'P.  Residual |Q - Q'|_2 (once both satisfy
    W = QP within 50 d eps |W|), tolerance: the same rounding bound."""
    W = _polar_instance(p)
    d = W.shape[0]
    VR, s, VP, P, R, Q, U = _polar_factors(W)
    nW = max(float(s[0]), 1e-300)
    tol = 50 * d * EPS * max(nW, 1.0)
    null = np.where(s <= 1e-12 * nW)[0] if s[0] > 0 else np.arange(d)
    if len(null) == 0:
        return inconclusive("W is invertible: its polar factor Q is unique (no counterexample here)",
                            singular_values=s.tolist())
    D = np.eye(d)
    D[null[-1], null[-1]] = -1.0
    Q2 = VR @ D @ VP.T
    ok = max(np.linalg.norm(W - Q @ P, 2), np.linalg.norm(W - Q2 @ P, 2))
    if ok > tol:
        return Outcome(verdict="error", message=f"W = QP fails ({ok:.2e}) for one of the two factors")
    return Outcome(residual=float(np.linalg.norm(Q - Q2, 2)), tolerance=tol,
                   values={"singular_values": s.tolist(), "Q": Q.tolist(), "Q_prime": Q2.tolist(),
                           "polar_residual": float(ok)},
                   counterexample={"W": W.tolist(), "Q": Q.tolist(), "Q_prime": Q2.tolist()},
                   message="two different orthogonal Q with W = QP (W singular)")


# ===========================================================================
# P2: right-to-left polar parametrisation r (5.5)-(5.9), erratum E6
def _chain_rl(W1, Q, G):
    """(5.7)-(5.8): W_{p+1} = Q_{p+1} sqrt(W_p W_p^T - G_p).  Q, G dicts by p.  Returns [W_N..W_1] and
    the smallest eigenvalue of each R_p^2 - G_p."""
    N = max(Q) if Q else 1
    Ws = {1: W1}
    mins = []
    for p in range(1, N):
        S = Ws[p] @ Ws[p].T - G[p]
        mins.append(float(np.linalg.eigvalsh((S + S.T) / 2)[0]))
        Ws[p + 1] = Q[p + 1] @ psd_sqrt(S)
    return [Ws[p] for p in range(N, 0, -1)], mins


def _p_recursion(W1, Q, G, printed=False):
    """(5.9): P_1 = sqrt(W_1^T W_1) (printed: W_1^T W_1), P_{p+1} = sqrt(Q_p P_p^2 Q_p^T - G_p), with
    Q_1 the polar factor of W_1 (it is not a coordinate of r)."""
    VR, s, VPt = np.linalg.svd(W1)
    Qs = dict(Q)
    Qs[1] = VR @ VPt
    N = max(Q) if Q else 1
    P = {1: W1.T @ W1 if printed else psd_sqrt(W1.T @ W1)}
    for p in range(1, N):
        P[p + 1] = psd_sqrt(Qs[p] @ P[p] @ P[p] @ Qs[p].T - G[p])
    return P


def _rl_instance(p, sign=-1.0):
    rng = rng_for(p.seed)
    d, N = p.d, p.N
    W1 = rng.standard_normal((d, d)) / np.sqrt(d)
    Q = {q: dln.random_orthogonal(d, rng) for q in range(2, N + 1)}
    G = {q: -sign * _neg_def(rng, d, p.g_scale) for q in range(1, N)}
    return W1, Q, G


def _chain_tol(Ws, G, d):
    """(4.2) along the construction: each W_{p+1} comes from W_p by one eigh-square-root and one product,
    so the residual of (4.2) at p is local: 50 d eps (|W_p|^2 + |W_{p+1}|^2 + |G_p|), no accumulation."""
    res, scale = _balanced_residual(Ws, G)
    return res, 50 * d * EPS * scale


def _polar_param_outcome(p, printed=False, G_override=None):
    d, N = p.d, p.N
    W1, Q, G = _rl_instance(p)
    if G_override is not None:
        G = G_override(W1, G)
    Ws, mins = _chain_rl(W1, Q, G)
    parts = {"(4.2) on r(Q, W_1)": _chain_tol(Ws, G, d)}
    # (5.9): P_p^2 must equal W_p^T W_p of the construction; errors add along the chain (no sqrt
    # amplification in the squared form): tolerance sum_k 50 d eps scale_k
    P = _p_recursion(W1, Q, G, printed=printed)
    res59, tol59, acc = 0.0, 0.0, 0.0
    for q in range(1, N + 1):
        Wq = dln.layer(Ws, q)
        acc += 50 * d * EPS * (float(np.sum(Wq ** 2)) + (float(np.linalg.norm(G[q - 1])) if q > 1 else 0.0))
        res59 = max(res59, float(np.linalg.norm(P[q] @ P[q] - Wq.T @ Wq)))
        tol59 = max(tol59, acc)
    parts["(5.9) P_p^2 = W_p^T W_p"] = (res59, tol59)
    vals = {"min_eig_R2_minus_G": mins}
    if not printed and G_override is None:
        basis = _so_basis(d)
        m = len(basis)

        def f(x):
            Qx = {q: Q[q] @ expm(sum(x[d * d + (q - 2) * m + j] * basis[j] for j in range(m))) if m else Q[q]
                  for q in range(2, N + 1)}
            return vec(_chain_rl(W1 + x[:d * d].reshape(d, d), Qx, G)[0])
        jparts, jvals = _jacobian_parts(f, d * d + (N - 1) * m, Ws)
        parts.update(jparts)
        vals.update(jvals)
    return parts, vals, Ws


def _g_scale_param():
    return Param.float("g_scale", 0.5, 0.0, 10.0, "size of |G_p| (G_p = ∓g_scale (M M^T/d + 0.2 I))",
                       low_open=True, search=(0.05, 2.0))


polar_parametrisation = Claim(
    id="menon.polar_parametrisation",
    title="Right-to-left polar parametrisation r of M_G (negative definite G_p)",
    label="(5.5)-(5.9)",
    section="5.2",
    equation="(5.5)-(5.9)",
    lines=(356, 376),
    statement=r"P_{p+1}^2=R_p^2-G_p,\ P_{p+1}=\sqrt{R_p^2-G_p},\ W_{p+1}=Q_{p+1}P_{p+1};\ "
              r"P_1=W_1^TW_1,\ P_{p+1}=\sqrt{Q_pP_p^2Q_p^T-G_p};\ G_p<0\Rightarrow "
              r"\dim\mathcal M_{\mathbf G}=d^2+(N-1)d(d-1)/2",
    status="erratum",
    corrected=r"P_1=\sqrt{W_1^TW_1}\ (\text{i.e. }P_1^2=W_1^TW_1),\ Q_1\text{ the polar factor of }W_1;"
              r"\ \text{the rest of (5.5)-(5.9) as printed}",
    params=[
        Param.int("d", 3, 1, 6, "width", search=(1, 4)),
        Param.int("N", 3, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of W_1, Q_p and G_p"),
        _g_scale_param(),
    ],
    notes="Erratum E6 (line 374): printed P_1 = W_1^T W_1 is P_1^2.  The construction (5.7)-(5.8) itself "
          "is right with the sign of (4.2): W_{p+1}^T W_{p+1} = W_p W_p^T - G_p.  Numeric check: (4.2) on "
          "the image, the corrected (5.9) recursion, the finite-difference Jacobian of r (full column rank "
          "d^2+(N-1)d(d-1)/2), tangency d(C_p).Dr = 0 and rank d(C_p) = (N-1)d(d+1)/2, so M_G is a manifold "
          "of the stated dimension near every point of the image.  Negative definiteness is sufficient, "
          "not necessary; with a positive eigenvalue of G_p above lambda_min(R_p^2) the fibre of r is empty "
          "(falsifier indefinite_G; line 191: not every G gives a non-empty M_G).",
    catalogue="menon §2.4 P2; §4 E6",
)


@polar_parametrisation.numeric
def _(p):
    """(4.2) on the image of r, corrected (5.9), and rank of Dr and of d(C_p) (dimension of M_G)."""
    parts, vals, _ = _polar_param_outcome(p)
    return Outcome.from_parts(parts, "polar parametrisation r (5.7)-(5.9 corrected)", vals)


polar_parametrisation.property(over=("d", "N", "seed", "g_scale"), max_examples=20)


@polar_parametrisation.falsifier("stated", search=("seed", "d"))
def _(p):
    """Printed (5.9), P_1 = W_1^T W_1: the recursion no longer gives the polar factors P_p of r's image."""
    parts, vals, _ = _polar_param_outcome(p, printed=True)
    return Outcome.from_parts(parts, "printed (5.9) P_1 = W_1^T W_1", vals)


@polar_parametrisation.falsifier("indefinite_G", search=("seed", "d", "N"))
def _(p):
    """Drop 'G_p negative definite': G_1 with an eigenvalue lambda_min(R_1^2) + g_scale makes R_1^2 - G_1
    indefinite; no real P_2 exists, the fibre of r is empty, and the (clipped) construction misses (4.2)."""
    def override(W1, G):
        G = dict(G)
        w, V = np.linalg.eigh(W1 @ W1.T)
        v = V[:, :1]
        G[1] = (w[0] + p.g_scale) * (v @ v.T)
        return G
    parts, vals, _ = _polar_param_outcome(p, G_override=override)
    return Outcome.from_parts(parts, "G_1 with an eigenvalue above lambda_min(R_1^2): R_1^2 - G_1 is indefinite "
                    f"(min eigenvalue {vals['min_eig_R2_minus_G'][0]:.3g}), no real square root", vals)


# ===========================================================================
# P4: left-to-right polar parametrisation (5.11)-(5.12)
def _chain_lr(WN, U, G, sign=+1.0):
    """(5.12): P_{p+1}^2 = W_{p+1}^T W_{p+1}, R_p = sqrt(P_{p+1}^2 + G_p), W_p = R_p U_p^T (sign=-1: the
    wrong variant with -G_p)."""
    N = max(U) + 1 if U else 1
    Ws = {N: WN}
    mins = []
    for p in range(N - 1, 0, -1):
        S = Ws[p + 1].T @ Ws[p + 1] + sign * G[p]
        mins.append(float(np.linalg.eigvalsh((S + S.T) / 2)[0]))
        Ws[p] = psd_sqrt(S) @ U[p].T
    return [Ws[p] for p in range(N, 0, -1)], mins


def _lr_outcome(p, sign=+1.0):
    rng = rng_for(p.seed)
    d, N = p.d, p.N
    WN = rng.standard_normal((d, d)) / np.sqrt(d)
    U = {q: dln.random_orthogonal(d, rng) for q in range(1, N)}
    G = {q: -_neg_def(rng, d, p.g_scale) for q in range(1, N)}
    Ws, mins = _chain_lr(WN, U, G, sign)
    parts = {"(4.2) on r(W_N, U)": _chain_tol(Ws, G, d)}
    vals = {"min_eig_P2_plus_G": mins}
    if sign > 0:
        basis = _so_basis(d)
        m = len(basis)

        def f(x):
            Ux = {q: U[q] @ expm(sum(x[d * d + (q - 1) * m + j] * basis[j] for j in range(m))) if m else U[q]
                  for q in range(1, N)}
            return vec(_chain_lr(WN + x[:d * d].reshape(d, d), Ux, G)[0])
        jparts, jvals = _jacobian_parts(f, d * d + (N - 1) * m, Ws)
        parts.update(jparts)
        vals.update(jvals)
    return parts, vals


left_to_right = Claim(
    id="menon.left_to_right_parametrisation",
    title="Left-to-right polar parametrisation of M_G (positive definite G_p)",
    label="(5.11)-(5.12)",
    section="5.2",
    equation="(5.11)-(5.12)",
    lines=(382, 388),
    statement=r"\mathfrak r:(W_N,U_{N-1},\dots,U_1)\mapsto\mathbf W,\ P_{p+1}^2=W_{p+1}^TW_{p+1},\ "
              r"R_p=\sqrt{P_{p+1}^2+G_p},\ W_p=R_pU_p^T",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width", search=(1, 4)),
        Param.int("N", 3, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of W_N, U_p and G_p"),
        _g_scale_param(),
    ],
    notes="Holds with the sign of (4.2) when P_{p+1}^2 + G_p is psd; G_p positive definite makes every "
          "square root smooth (the mirror image of line 376).  Same checks as "
          "menon.polar_parametrisation.  The catalogue lists the index typo (v_{N-1},...,v_1) of line 378 "
          "under this item; it belongs to (5.10), see menon.scalar_conics.",
    catalogue="menon §2.4 P4",
)


@left_to_right.numeric
def _(p):
    """(4.2) on the image of the left-to-right map, rank of its Jacobian and of d(C_p)."""
    parts, vals = _lr_outcome(p)
    return Outcome.from_parts(parts, "left-to-right parametrisation (5.12)", vals)


left_to_right.property(over=("d", "N", "seed", "g_scale"), max_examples=20)


@left_to_right.falsifier("sign_copied_from_5_7", search=("seed", "d"))
def _(p):
    """R_p = sqrt(P_{p+1}^2 - G_p) (the sign of (5.7) copied to the other direction) misses (4.2)."""
    parts, vals = _lr_outcome(p, sign=-1.0)
    return Outcome.from_parts(parts, "left-to-right with R_p = sqrt(P_{p+1}^2 - G_p)", vals)


# ===========================================================================
# P3: scalar conic sections (5.10)
scalar_conics = Claim(
    id="menon.scalar_conics",
    title="d = 1: the G-balanced varieties are hyperbolas and gradient-flow trajectories stay on them",
    label="(5.10), Fig. 9.1",
    section="5.2, 9",
    equation="(5.10)",
    lines=(378, 380),
    statement=r"d=1:\ \mathcal M_{\mathbf g}=\{w_{p+1}=v_{p+1}\sqrt{w_p^2-g_p},\ v_p=\pm1\},\ "
              r"\text{i.e. }w_{p+1}^2-w_p^2=-g_p\ \text{(hyperbolas), invariant under the flow}",
    status="holds",
    params=[
        Param.int("N", 2, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of w(0) and the target y"),
        Param.float("T", 5.0, 0.0, 20.0, "time horizon", low_open=True),
        Param.float("eta", 0.1, 0.0, 0.5, "GD step (falsifier finite_step_gd)", low_open=True),
    ],
    notes="The index list (v_{N-1},...,v_1,w_1) on line 378 should be (v_N,...,v_2,w_1) (typo; (5.10) uses "
          "v_{p+1}, 1 <= p <= N-1).  Energy E = (w - y)^2 / 2.  Numeric check: adaptive Dormand-Prince "
          "5(4) (solvers.rk); since each C_p is a first integral, its drift is exactly the sum over steps "
          "of the local errors projected on grad C_p, bounded with the controller's local-error bound.",
    catalogue="menon §2.4 P3, §2.6 K2, §5.2 (scalar GD identity)",
    covers=("K2",),
)


def _scalar_instance(p):
    rng = rng_for(p.seed)
    w0 = rng.uniform(0.3, 1.5, p.N) * rng.choice([-1.0, 1.0], p.N)
    y = float(rng.uniform(-2.0, 2.0))
    return w0, y  # w0 packed in paper order [w_N, ..., w_1]


def _scalar_bound(w0, y):
    """A priori bound on max_q |w_q(t)| along the exact flow: L(t) <= L(0) gives |prod w_q| <= B :=
    |y| + sqrt(2 L(0)); with w_q^2 = w_1^2 + c_q (c_q conserved, c_1 = 0) and prod w_q^2 >=
    (min_q w_q^2)^N = (w_1^2 + c_min)^N we get w_1^2 <= B^(2/N) - c_min, so
    max_q w_q^2 <= B^(2/N) + c_max - c_min."""
    w = w0[::-1]  # w_1..w_N
    N = len(w)
    c = w ** 2 - w[0] ** 2
    B = abs(y) + abs(float(np.prod(w)) - y)
    return float(np.sqrt(B ** (2.0 / N) + c.max() - c.min()))


@scalar_conics.numeric(backends=("numpy", "numba"))
def _(p):
    """Integrate the scalar flow (dopri5, rtol 1e-12) and measure the drift of w_{p+1}^2 - w_p^2."""
    w0, y = _scalar_instance(p)
    N = p.N
    args = dln.make_args([1] * (N + 1), np.array([[y]]))
    rtol, atol = 1e-12, 1e-14
    if p.backend == "numba":
        yT, acc, rej = rk.dopri5(dln.dln_rhs, 0.0, w0, p.T, args, rtol=rtol, atol=atol)
    else:
        yT, acc, rej = rk.dopri5_numpy(dln.dln_rhs_numpy, 0.0, w0, p.T, args, rtol=rtol, atol=atol)
    if not np.all(np.isfinite(yT)):
        return inconclusive("the flow blew up")
    # Error model: each accepted step has |err_i| <= sqrt(m) (atol + rtol |y|) (RMS controller, m = N);
    # |grad C_p . err| <= 4 |w|_max max_i |err_i|; a first integral's drift is the sum of these (the
    # flow carries the perturbed value unchanged), plus rounding 10 eps |w|^2 per step.  |w|_max is
    # the a priori bound of _scalar_bound (10% margin for the numerical trajectory).
    ym = 1.1 * max(_scalar_bound(w0, y), float(np.max(np.abs(yT))))
    tol = acc * (4 * ym * np.sqrt(N) * (atol + rtol * ym) + 10 * EPS * ym ** 2)
    C0 = [w0[N - p - 1] ** 2 - w0[N - p] ** 2 for p in range(1, N)]
    CT = [yT[N - p - 1] ** 2 - yT[N - p] ** 2 for p in range(1, N)]
    drift = max(abs(a - b) for a, b in zip(C0, CT))
    g = [-c for c in C0]  # (4.2): w_{p+1}^2 = w_p^2 - g_p
    wT = yT[::-1]  # w_1..w_N
    conic = max(abs(abs(wT[p]) - np.sqrt(max(wT[p - 1] ** 2 - g[p - 1], 0.0))) for p in range(1, N))
    return Outcome(residual=drift, tolerance=tol,
                   values={"g": g, "w0": w0.tolist(), "wT": yT.tolist(), "accepted_steps": acc,
                           "rejected_steps": rej, "w_bound": ym, "conic_5_10_residual": float(conic),
                           "loss_T": 0.5 * (float(np.prod(yT)) - y) ** 2},
                   message=f"max_p |C_p(T) - C_p(0)| along dopri5 ({acc} steps)")


scalar_conics.property(over=("N", "seed"), max_examples=12)


#: the conserved quantity of the scalar DLN as printed, w_{p+1}^2 - w_p^2, and misprints
CONIC_VARIANTS = {
    "stated": lambda a, b: a ** 2 - b ** 2,
    "sign_flipped": lambda a, b: a ** 2 + b ** 2,
    "squares_dropped": lambda a, b: a - b,
}


def _conics_prove(variant="stated"):
    """Failures of: d/dt C(w - tD)|_{t=0} = 0 (sympy diff, D the gradient with e = E'(w) free); the exact GD
    factor C(w - eta D) = (1 - eta^2 e^2 prod_{q != p,p+1} w_q^2) C(w); (5.10) on the hyperbola.  C per variant."""
    Cf = CONIC_VARIANTS[variant]
    bad, inst = 0, []
    e, eta, t = sp.symbols("e eta t")
    for N in (2, 3, 4):
        w = sp.symbols(f"w1:{N + 1}")  # w[0] = w_1
        W = sp.Mul(*w)
        D = [e * W / w[q] for q in range(N)]  # dL/dw_q = e prod_{r != q} w_r
        for p in range(N - 1):
            C = Cf(w[p + 1], w[p])
            moved = [w[q] - t * D[q] for q in range(N)]
            dC = sp.diff(Cf(moved[p + 1], moved[p]), t).subs(t, 0)
            bad += sp.expand(sp.cancel(dC)) != 0
            wn = [w[q] - eta * D[q] for q in range(N)]
            Cn = Cf(wn[p + 1], wn[p])
            other = sp.Mul(*[w[q] ** 2 for q in range(N) if q not in (p, p + 1)])
            bad += sp.expand(sp.cancel(Cn - (1 - eta ** 2 * e ** 2 * other) * C)) != 0
        inst.append(N)
    g, x, v = sp.symbols("g x v")
    bad += sp.expand((v * sp.sqrt(x ** 2 - g)) ** 2 - x ** 2 + g).subs(v ** 2, 1) != 0
    return int(bad), inst


@scalar_conics.symbolic(timeout=60)
def _(p):
    """d/dt (w_{p+1}^2 - w_p^2) = 0 for e = E'(w) free; (5.10) lies on it; exact GD factor (1 - eta^2 e^2 prod)."""
    bad, inst = _conics_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy diff + cancel + expand", "instances": [f"d=1, N={n}" for n in inst],
        "proved": "d/dt C_p = 0; (5.10) satisfies w_{p+1}^2 - w_p^2 = -g_p; GD: C_p^+ = "
                  "(1 - eta^2 e^2 prod_{q != p,p+1} w_q^2) C_p exactly"},
        message="number of identities that did not reduce to zero")


@scalar_conics.mutant({
    "sign_flipped": "w_{p+1}^2 + w_p^2 (the sum, not the difference): not conserved",
    "squares_dropped": "w_{p+1} - w_p (squares dropped): not conserved",
}, timeout=60)
def _(p, variant):
    """The conserved quantity perturbed, through the same procedure: identities must fail."""
    bad, _ = _conics_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} identities did not reduce to zero for C = {variant}")


@scalar_conics.falsifier("finite_step_gd", search=("seed", "N"))
def _(p):
    """Finite-step GD leaves the hyperbola: C_p^+ = (1 - eta^2 e^2 prod_{q != p,p+1} w_q^2) C_p exactly.
    Tolerance: rounding, 10 eps |w|^2 per step (the model of the flow check without integrator error)."""
    w0, y = _scalar_instance(p)
    N, eta = p.N, p.eta
    steps = max(1, int(round(p.T / eta)))
    w = w0[::-1].copy()  # w_1..w_N
    ident, tol, scale = 0.0, 0.0, float(np.max(np.abs(w)))
    for _ in range(steps):
        e = float(np.prod(w)) - y
        D = np.array([e * np.prod(np.delete(w, q)) for q in range(N)])
        wn = w - eta * D
        if not np.all(np.isfinite(wn)):
            return inconclusive("GD diverged")
        for q in range(N - 1):
            C, Cn = w[q + 1] ** 2 - w[q] ** 2, wn[q + 1] ** 2 - wn[q] ** 2
            fac = 1 - eta ** 2 * e ** 2 * np.prod(np.delete(w, [q, q + 1]) ** 2)
            ident = max(ident, abs(Cn - fac * C) / max(1.0, float(np.max(wn ** 2)), abs(fac * C)))
        w = wn
        scale = max(scale, float(np.max(np.abs(w))))
        tol += 10 * EPS * scale ** 2
    C0 = np.array([w0[::-1][q + 1] ** 2 - w0[::-1][q] ** 2 for q in range(N - 1)])
    CT = np.array([w[q + 1] ** 2 - w[q] ** 2 for q in range(N - 1)])
    return Outcome(residual=float(np.max(np.abs(CT - C0))), tolerance=tol,
                   values={"steps": steps, "eta": eta, "C0": C0.tolist(), "CT": CT.tolist(),
                           "gd_identity_rel_residual": ident},
                   message=f"GD drift of w_(p+1)^2 - w_p^2; exact one-step factor identity holds to {ident:.1e}")


# ===========================================================================
# P5: SVD parametrisation z (5.13)-(5.17)
def _validate_svd(p):
    if p.lam is not None:
        if len(p.lam) != p.d:
            raise ParamError(f"parameter lam must have d={p.d} entries, got {len(p.lam)}")
        if np.any(p.lam <= 0):
            raise ParamError("parameter lam must be positive (Lambda in R_+^d)")


def _z_jacobian(lam, Qs, r=None):
    """Analytic Jacobian of z_r (Stiefel frames Qs[i] of shape d x r) in the coordinates
    (lambda, tangent of each St_{r,d}: Q alpha (alpha in so(r)) and Q_perp E (E in R^{(d-r) x r})).
    Also the Jacobian of phi o z_r.  Returns (J_z, J_phi)."""
    N = len(Qs) - 1
    d, r = Qs[0].shape
    L = np.diag(lam)
    Q = {q: Qs[N - q] for q in range(N + 1)}
    cols_z, cols_phi = [], []
    Sig = np.diag(lam ** N)

    def z_dir(dQ, q0):
        out = []
        for p in range(N, 0, -1):
            V = np.zeros((d, d))
            if p == q0:
                V += dQ @ L @ Q[p - 1].T
            if p - 1 == q0:
                V += Q[p] @ L @ dQ.T
            out.append(V)
        return vec(out)

    for k in range(r):
        E = np.zeros((r, r))
        E[k, k] = 1.0
        cols_z.append(vec([Q[p] @ E @ Q[p - 1].T for p in range(N, 0, -1)]))
        cols_phi.append((Q[N] @ (N * lam[k] ** (N - 1) * E) @ Q[0].T).ravel())
    for q in range(N + 1):
        full = np.linalg.svd(Q[q], full_matrices=True)[0]
        perp = full[:, r:]
        dirs = [Q[q] @ alpha(r, k, l) for (k, l) in pairs(r)]
        dirs += [np.outer(perp[:, i], np.eye(r)[j]) for i in range(d - r) for j in range(r)]
        for dQ in dirs:
            cols_z.append(z_dir(dQ, q))
            if q == N:
                cols_phi.append((dQ @ Sig @ Q[0].T).ravel())
            elif q == 0:
                cols_phi.append((Q[N] @ Sig @ dQ.T).ravel())
    return np.array(cols_z).T, np.array(cols_phi).T


def _svd_parts(lam, Qs, backend="numpy"):
    """Sub-checks on z(Lambda, Q) (error model: each W_p is 2 products of O(1) matrices, |dW_p| <= 10 d eps
    lam_max; products of N of them: 10 N d eps lam_max^N; sqrt of a psd matrix with smallest eigenvalue
    lam_min^2 is Lipschitz with constant 1/(2 lam_min))."""
    N = len(Qs) - 1
    d = Qs[0].shape[0]
    lmax, lmin = float(np.max(lam)), float(np.min(lam))
    sv = np.sort(lam)[::-1]
    Jz, _ = _z_jacobian(lam, Qs)       # analytic Jacobian, assembled column by column on the host
    # array-API path: (Lambda, Q) moved to the backend of ``xp`` (p.backend), every residual and SVD there
    xp = xp_of(backend)
    lamx, Qs, Jz = X.to_xp(xp, [lam]), X.to_xp(xp, Qs), X.to_xp(xp, [Jz])[0]
    lamx = lamx[0]
    Ws = dln.balanced_point(lamx, Qs)
    res13, _ = _balanced_residual(Ws)
    W = dln.prod(Ws)
    Sig = X.diag(lamx ** N)
    parts = {
        "(5.13) balanced": (res13, 20 * d * EPS * lmax ** 2),
        "(5.17) W = Q_N S Q_0^T": (X.fro(W - Qs[0] @ Sig @ Qs[-1].T), 10 * N * d * EPS * lmax ** N * np.sqrt(d)),
        "sv(W_p) = Lambda": (max(float(np.max(np.abs(X.host(xp.linalg.svdvals(w)) - sv))) for w in Ws),
                             10 * d * EPS * lmax),
    }
    if N > 1:
        r14 = max(X.norm2(psd_sqrt(dln.layer(Ws, p) @ dln.layer(Ws, p).T)
                          - psd_sqrt(dln.layer(Ws, p + 1).T @ dln.layer(Ws, p + 1))) for p in range(1, N))
        parts["(5.14) R_p = P_{p+1}"] = (r14, 40 * d * EPS * lmax ** 2 / lmin)
    dim = d * d + (N - 1) * d * (d - 1) // 2
    parts["rank Dz = dim M"], rank, smin = _rank_part(Jz, dim)
    return parts, {"rank_Dz": rank, "dim_M": dim, "n_coordinates": Jz.shape[1], "smin_Dz": smin,
                   "lam": lam.tolist()}, Ws


def _svd_instance(p):
    rng = rng_for(p.seed)
    if p.lam is not None:
        lam = np.asarray(p.lam, dtype=float)
    else:
        lam = rng.uniform(0.5, 1.8, p.d)
        for _ in range(1000):
            if p.d < 2 or np.min(np.abs(np.diff(np.sort(lam)))) >= p.min_gap:
                break
            lam = rng.uniform(0.5, 1.8, p.d)
    Qs = [dln.random_orthogonal(p.d, rng) for _ in range(p.N + 1)]
    return lam, Qs


svd_parametrisation = Claim(
    id="menon.svd_parametrisation",
    title="SVD parametrisation z of the balanced manifold M; W = Q_N Sigma Q_0^T",
    label="(5.13)-(5.17)",
    section="5.3",
    equation="(5.13)-(5.17)",
    lines=(390, 414),
    statement=r"W_p=Q_p\Lambda Q_{p-1}^T,\ \Lambda=\Sigma^{1/N}\ \Rightarrow\ W_{p+1}^TW_{p+1}=W_pW_p^T,"
              r"\ R_p=P_{p+1},\ W=Q_N\Sigma Q_0^T;\ \mathfrak z\text{ a local bijection for distinct }\sigma_i",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width", search=(1, 4)),
        Param.int("N", 3, 1, 8, "depth", search=(1, 5)),
        Param.seed("seed of Lambda and Q_N..Q_0"),
        Param.float("min_gap", 0.05, 0.0, 1.0, "smallest gap between the drawn lambda_i", low_open=True),
        Param.vector("lam", None, "Lambda of your own (d positive entries)"),
    ],
    validate=_validate_svd,
    notes="The coordinates (Lambda, Q_N..Q_0) number d + (N+1)d(d-1)/2 = d^2 + (N-1)d(d-1)/2 = dim M, so "
          "'local bijection' means Dz has full column rank, checked with the exact (analytic) Jacobian. "
          "Globally z is not injective: a common sign matrix D (Q_p -> Q_p D) leaves every W_p unchanged, "
          "a 2^d-fold cover (and permutations of Lambda, fixed by the ordering (5.18)).  With repeated "
          "singular values Dz drops rank (falsifier repeated_singular_values).",
    catalogue="menon §2.4 P5; §3 (rank 18 for d=3, N=4)",
)


@svd_parametrisation.numeric(backends=("numpy", "cupy"))
def _(p):
    """(5.13), (5.14), (5.17), singular values of each W_p, and rank Dz = d^2 + (N-1)d(d-1)/2 (array-API path
    on p.backend; the analytic Jacobian is assembled on the host)."""
    lam, Qs = _svd_instance(p)
    if p.d > 1 and np.min(np.abs(np.diff(np.sort(lam)))) < 1e-8 * np.max(lam):
        return inconclusive("repeated singular values: outside the hypothesis 'distinct singular values'",
                            lam=lam.tolist())
    parts, vals, _ = _svd_parts(lam, Qs, p.backend)
    return Outcome.from_parts(parts, "SVD parametrisation z", vals)


svd_parametrisation.property(over=("d", "N", "seed"), max_examples=15)


def _cayley(d, name):
    """Rotation by the Cayley transform, as (numerator, denominator): Q = (I - A)(I + A)^{-1}, A skew."""
    ks = sp.symbols(f"{name}_0:{d * (d - 1) // 2}")
    A = sp.zeros(d, d)
    for j, (k, l) in enumerate(pairs(d)):
        A[k, l], A[l, k] = ks[j], -ks[j]
    I = sp.eye(d)
    return ((I - A) * (I + A).adjugate()).applyfunc(sp.expand), sp.expand((I + A).det())


def _svd_param_prove(variant="stated"):
    """Polynomial entries of (5.13) (balance) and (5.17) (telescoping) that do not expand to zero, with
    W_p = Q_p Lambda Q_{p-1}^T as printed or (variant transposes_swapped) W_p = Q_{p-1} Lambda Q_p^T."""
    swap = variant == "transposes_swapped"
    bad, inst = 0, []
    # (i) d = 2, N = 2, 3: every Q_p a Cayley rotation (and Q_0 a reflection), full statement
    for d, N in ((2, 2), (2, 3)):
        lam = sp.symbols(f"l1:{d + 1}", positive=True)
        L = sp.diag(*lam)
        Qn = [_cayley(d, f"q{p}") for p in range(N + 1)]
        Qn[0] = (Qn[0][0] * sp.diag(1, -1), Qn[0][1])
        for num, den in Qn:  # the Cayley numerators are orthogonal up to den^2
            bad += sum(1 for x in (num.T * num - den ** 2 * sp.eye(d)) if sp.expand(x) != 0)
        Wn = [(Qn[p - 1][0] * L * Qn[p][0].T if swap else Qn[p][0] * L * Qn[p - 1][0].T, Qn[p][1] * Qn[p - 1][1])
              for p in range(1, N + 1)]
        for p in range(1, N):
            (A, a), (B, b) = Wn[p], Wn[p - 1]  # W_{p+1} = A / a, W_p = B / b
            bad += sum(1 for x in ((A.T * A) * b ** 2 - (B * B.T) * a ** 2) if sp.expand(x) != 0)
        num, den = Wn[-1]
        for p in range(N - 2, -1, -1):
            num, den = num * Wn[p][0], den * Wn[p][1]
        target = Qn[N][0] * sp.diag(*[x ** N for x in lam]) * Qn[0][0].T
        bad += sum(1 for x in (num * Qn[N][1] * Qn[0][1] - target * den) if sp.expand(x) != 0)
        inst.append(f"d={d}, N={N} (Cayley rotations, Q_0 a reflection)")
    # (ii) d = 3, N = 2: only the orthogonality that each identity uses is imposed
    d = 3
    lam = sp.symbols("l1:4", positive=True)
    L = sp.diag(*lam)
    gen = lambda c: sp.Matrix(d, d, lambda i, j: sp.Symbol(f"{c}{i}{j}"))
    n1, d1 = _cayley(d, "q1")
    Q0, Q2 = gen("a"), gen("b")  # arbitrary matrices: (5.17) needs only Q_1^T Q_1 = I
    bad += sum(1 for x in ((Q2 * L * n1.T) * (n1 * L * Q0.T) - Q2 * L * L * Q0.T * d1 ** 2) if sp.expand(x) != 0)
    n0, d0 = _cayley(d, "q0")
    n2, d2 = _cayley(d, "q2")
    Q1 = gen("c")  # arbitrary: (5.13) at p = 1 needs only Q_0, Q_2 orthogonal
    W2, W1 = (Q1 * L * n2.T, n0 * L * Q1.T) if swap else (n2 * L * Q1.T, Q1 * L * n0.T)
    bad += sum(1 for x in ((W2.T * W2) * d0 ** 2 - (W1 * W1.T) * d2 ** 2) if sp.expand(x) != 0)
    inst.append("d=3, N=2 (Q_1 Cayley, Q_0 Q_2 arbitrary for (5.17); Q_0 Q_2 Cayley, Q_1 arbitrary for (5.13))")
    return int(bad), inst


@svd_parametrisation.symbolic(timeout=60)
def _(p):
    """Polynomial identities (denominators cleared, sympy.expand): (5.13) and the telescoping (5.17)."""
    bad, inst = _svd_param_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "Cayley rotations Q = (I-A) adj(I+A) / det(I+A), denominators cleared, sympy.expand",
        "instances": inst,
        "proved": "W_{p+1}^T W_{p+1} = W_p W_p^T and W_N...W_1 = Q_N Lambda^N Q_0^T"},
        message="number of polynomial entries that did not expand to zero")


@svd_parametrisation.mutant({
    "transposes_swapped": "W_p = Q_{p-1} Lambda Q_p^T (the frames on the wrong sides)",
}, timeout=60)
def _(p, variant):
    """(5.13) perturbed, through the same procedure: entries must stay nonzero."""
    bad, _ = _svd_param_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} polynomial entries did not expand to zero for {variant}")


@svd_parametrisation.reproduction
def _(p):
    """rank Dz for d=3, N=4 (catalogue §3 quotes 18 = dim M)."""
    quoted = 18
    p = svd_parametrisation.resolve({"d": 3, "N": 4, "seed": 0})
    lam, Qs = _svd_instance(p)
    parts, vals, _ = _svd_parts(lam, Qs)
    got = vals["rank_Dz"]
    return Outcome(residual=abs(got - quoted), tolerance=0,
                   values={"rank_Dz": got, "quoted": quoted, "formula": vals["dim_M"],
                           "rank_subcheck": parts["rank Dz = dim M"]},
                   message=f"rank Dz = {got} vs quoted {quoted} (exact integer)")


@svd_parametrisation.falsifier("sign_cover", search=("seed",))
def _(p):
    """'z is injective' fails: all 2^d common sign matrices D (Q_p -> Q_p D) give the same point.
    Residual: the distance between two such coordinate points; tolerance: image rounding / s_min(Dz)."""
    lam, Qs = _svd_instance(p)
    d, N = p.d, p.N
    Ws = dln.balanced_point(lam, Qs)
    tol_img = 20 * N * d * EPS * np.max(lam)
    Jz, _ = _z_jacobian(lam, Qs)
    smin = float(np.linalg.svd(Jz, compute_uv=False)[-1])
    same, far = 0, 0.0
    for signs in itertools.product([1.0, -1.0], repeat=d):
        D = np.diag(signs)
        W2 = dln.balanced_point(lam, [Q @ D for Q in Qs])
        if np.linalg.norm(vec(W2) - vec(Ws)) <= tol_img:
            same += 1
            far = max(far, float(np.linalg.norm(vec([Q @ D - Q for Q in Qs]))))
    return Outcome(residual=far, tolerance=tol_img / max(smin, 1e-300),
                   values={"cover_degree": same, "expected_2^d": 2 ** d, "max_coordinate_distance": far},
                   message=f"{same} distinct coordinate points map to the same W (2^d = {2 ** d})")


@svd_parametrisation.falsifier("repeated_singular_values", search=("seed", "d", "N"), fixed={"d": 2})
def _(p):
    """Drop 'distinct singular values': with lambda_1 = lambda_2, Dz loses rank (direction alpha_12 on all
    Q_p at once), so z is not a local bijection there."""
    lam, Qs = _svd_instance(p)
    if p.d < 2:
        return inconclusive("d = 1 has no repeated singular values")
    lam = lam.copy()
    lam[1] = lam[0]
    parts, vals, _ = _svd_parts(lam, Qs)
    return Outcome.from_parts(parts, "z at repeated singular values", vals)


# ===========================================================================
# P6: rank-deficient case (5.18)-(5.20), erratum E7
def _validate_rank(p):
    if p.r > p.d:
        raise ParamError(f"parameter r={p.r} exceeds d={p.d}")


def _rank_instance(p):
    rng = rng_for(p.seed)
    for _ in range(1000):
        lam = np.sort(rng.uniform(0.5, 1.8, p.r))[::-1]
        if p.r < 2 or np.min(-np.diff(lam)) >= 0.05:
            break
    Qfull = [dln.random_orthogonal(p.d, rng) for _ in range(p.N + 1)]
    return lam, Qfull


def _zr(lam, Qs_st):
    L = X.diag(lam)
    return [Qs_st[i] @ L @ Qs_st[i + 1].T for i in range(len(Qs_st) - 1)]


def _rank_parts(p, printed=False):
    d, r, N = p.d, p.r, p.N
    lam, Qfull = _rank_instance(p)
    Qst_h = [Q[:, :r] for Q in Qfull]
    # array-API path: the frames and Lambda moved to p.backend; Jacobians assembled on the host, ranked there
    xp = xp_of(p)
    lamx, Qst = X.to_xp(xp, [lam])[0], X.to_xp(xp, Qst_h)
    Ws = _zr(lamx, Qst)
    W = dln.prod(Ws)
    s = X.host(xp.linalg.svdvals(W))  # decreasing: the ordering (5.18)
    lmax = float(lam[0])
    tz = 10 * N * d * EPS * lmax ** N * np.sqrt(d)  # rounding of the N-fold product
    zero_idx = list(range(d - r, d)) if printed else list(range(r, d))  # 0-based: sigma_{d-r+1..d} / sigma_{r+1..d}
    zs = float(np.max(s[zero_idx])) if zero_idx else 0.0
    parts = {("printed (5.19) sigma_{d-r+1..d} = 0" if printed else "(5.19) sigma_{r+1..d} = 0"): (zs, tz)}
    vals = {"singular_values": s.tolist(), "r": r, "d": d, "zero_indices_1based": [i + 1 for i in zero_idx]}
    if not printed:
        parts["rank W = r (sigma_r > 0)"] = (tz, float(s[r - 1]))
        res13, _ = _balanced_residual(Ws)
        parts["(5.13) balanced"] = (res13, 20 * d * EPS * lmax ** 2)
        parts["(5.17) W = Q_N S Q_0^T"] = (X.fro(W - Qst[0] @ X.diag(lamx ** N) @ Qst[-1].T), tz)
        # only the first r columns of each Q_p matter: full-frame z with Lambda padded by zeros, and a
        # different completion of the frames, give the same point
        lam0 = np.concatenate([lam, np.zeros(d - r)])
        rng = rng_for(p.seed + 1)
        Qalt = []
        for Q in Qfull:
            perp = Q[:, r:] @ dln.random_orthogonal(d - r, rng) if d > r else Q[:, r:]
            Qalt.append(np.hstack([Q[:, :r], perp]))
        lam0 = X.to_xp(xp, [lam0])[0]

        def dist(As):  # |vec(As) - vec(Ws)|
            return float(np.sqrt(sum(X.vdot(a - w, a - w) for a, w in zip(As, Ws))))
        diff = max(dist(dln.balanced_point(lam0, X.to_xp(xp, Qfull))),
                   dist(dln.balanced_point(lam0, X.to_xp(xp, Qalt))))
        parts["only first r columns matter"] = (diff, 20 * N * d * EPS * lmax)
        Jz, Jphi = X.to_xp(xp, _z_jacobian(lam, Qst_h))
        ncoord = r + (N + 1) * (r * d - r * (r + 1) // 2)
        parts["Dz_r injective"], rz, _ = _rank_part(Jz, ncoord)
        parts["rank D(phi o z_r) = dim M_r-frak"], rphi, _ = _rank_part(Jphi, r * (2 * d - r))
        vals.update({"rank_Dz_r": rz, "n_coordinates": ncoord, "rank_Dphi_z": rphi,
                     "dim_frak_M_r": r * (2 * d - r)})
    return parts, vals


rank_deficient_svd = Claim(
    id="menon.rank_deficient_svd",
    title="Rank-deficient SVD parametrisation z_r of M_r",
    label="(5.18)-(5.20)",
    section="5.4",
    equation="(5.18)-(5.20)",
    lines=(416, 430),
    statement=r"\sigma_1\ge\dots\ge\sigma_d;\ \operatorname{rank}W=r<d\Rightarrow\sigma_{d-r+1}=\dots=\sigma_d=0;"
              r"\ \mathfrak z_r:\mathbb R_+^d\times St_{r,d}^{N+1}\to\mathcal M_r,\ \phi(\mathcal M_r)=\mathfrak M_r",
    status="erratum",
    corrected=r"\operatorname{rank}W=r\Rightarrow\sigma_{r+1}=\dots=\sigma_d=0\ (\sigma_r>0);\ "
              r"\mathfrak z_r:\mathbb R_+^r\times St_{r,d}^{N+1}\to\mathcal M_r,\ W_p=Q_p\Lambda Q_{p-1}^T",
    params=[
        Param.int("d", 3, 2, 6, "width", search=(2, 5)),
        Param.int("r", 2, 1, 6, "rank (1 <= r <= d)", search=(1, 4)),
        Param.int("N", 3, 1, 6, "depth", search=(1, 4)),
        Param.seed("seed of Lambda and the frames"),
    ],
    validate=_validate_rank,
    notes="Erratum E7 (line 422): with the decreasing order (5.18) rank r means the last d - r singular "
          "values vanish, sigma_{r+1} = ... = sigma_d = 0; the printed sigma_{d-r+1..d} claims r zeros, "
          "false whenever 2r > d (e.g. d=3, r=2), true but too weak when 2r <= d.  Also: in (5.20) "
          "Lambda must lie in R_+^r (with Lambda in R_+^d and Q_p in St_{r,d} the product Q_p Lambda "
          "Q_{p-1}^T is not defined); eta_r on line 430 is undefined (presumably z_r).  The numeric check "
          "also tests 'only the first r columns of each Q_p matter' (line 424), that z_r is an immersion "
          "(rank = r + (N+1)(rd - r(r+1)/2), our count, not printed) and that phi o z_r has rank "
          "r(2d - r) = dim frak M_r (4.20).",
    catalogue="menon §2.4 P6; §4 E7",
)


@rank_deficient_svd.numeric(backends=("numpy", "cupy"))
def _(p):
    """Corrected (5.19) on z_r(Lambda, Q) with Lambda in R_+^r, Stiefel frames, rank and immersion checks."""
    parts, vals = _rank_parts(p)
    return Outcome.from_parts(parts, "rank-deficient parametrisation z_r", vals)


rank_deficient_svd.property(over=("d", "r", "N", "seed"), max_examples=15)


@rank_deficient_svd.falsifier("stated", search=("d", "r", "seed"), fixed={"d": 3, "r": 2})
def _(p):
    """Printed (5.19): sigma_{d-r+1} = ... = sigma_d = 0 for rank r < d (fails when 2r > d)."""
    if p.r >= p.d:
        return inconclusive("(5.19) is stated for rank r < d", r=p.r, d=p.d)
    parts, vals = _rank_parts(p, printed=True)
    return Outcome.from_parts(parts, "printed (5.19) zero pattern", vals)
