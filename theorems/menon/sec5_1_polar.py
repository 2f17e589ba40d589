"""Menon §5.1-5.2 (seed lines 338-376, 382-388): polar factorisation and SVD, and the parametrisation r
of the G-balanced varieties (polar, both directions).

Sign convention: G_p is used exactly as in (4.2)/(5.6), ``W_{p+1}^T W_{p+1} = W_p W_p^T - G_p``, i.e.
``G_p = -C_p`` with ``C_p`` of the package docstring (erratum E1).  With this sign the right-to-left
construction (5.7)-(5.8) needs ``R_p^2 - G_p`` psd (G_p negative definite suffices) and the
left-to-right one (5.12) needs ``P_{p+1}^2 + G_p`` psd (G_p positive definite suffices).

Several checks combine a few sub-checks, each with its own error model; they are reported as
``residual = max_i r_i / tol_i`` against ``tolerance = 1`` and every ``r_i``, ``tol_i`` is listed in
``values`` (so ``residual <= 1`` iff every sub-check holds within its own tolerance).
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import expm

from solvers import dln
from solvers import xp_menon as X
from solvers.matfun import psd_sqrt
from solvers.xp import namespace, xp_of
from theorems import matrices as M
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import EPS, alpha, pairs, rng_for, vec

from ._parametrisations import _balanced_residual, _rank_part


# ---------------------------------------------------------------------------
# shared helpers
def _so_basis(d):
    return [alpha(d, k, l) for (k, l) in pairs(d)]


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
