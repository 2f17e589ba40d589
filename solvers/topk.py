"""Sparse, differentiable top-k (Sander, thesis ch. 7): LMO over the permutohedron, the relaxed operators
``topkmask_R`` (phi(x) = x) and ``topkmag_R`` (phi(x) = x^2/2) by reduction to isotonic regression (Props
7.2, 7.5, 7.6), solved three independent ways, Dykstra's algorithm (Alg. 7.7, printed and standard), and the
closed-form Jacobian of Prop 7.8.

Conventions (catalogue sander_part23 §1, §6 A7)
-----------------------------------------------
* ``R(y) = (lam/p) |y|_p^p``, ``p > 1``, ``q = p/(p-1)``, ``R*(u) = lam^(1-q) |u|_q^q / q``,
  ``grad R*(u) = lam^(1-q) psi(u)`` with ``psi(u) = sign(u) |u|^(q-1)``.  ``w = 1_k``.
* Isotonic problem (7.5) on the sorted input ``s`` (descending): ``v* = argmin_{v_1 >= ... >= v_n}
  sum_i h_i(v_i)``, ``h_i(v) = r*(s_i - v) + w_i phi(v)``.  A block ``B`` pools to the root of the
  increasing function ``F_B(g) = sum_B psi(g - s_i) + lam^(q-1) sum_B w_i phi'(g)``.
* Pooling solvers: ``closed`` (p = 2: linear; p = 4/3: the cubic of App. 7.A.6 solved by Cardano in a
  cancellation-free form, then one Newton step) and ``bisect`` (any p > 1: :func:`pool` and
  :func:`pav_reference` bisect to the last bit; :func:`pav` / :func:`pav_values` run the O(n) general-p
  kernels, safeguarded Newton pooling inside a budgeted stack PAV or the threshold decomposition).
* Independent KKT solver (no isotonic regression): mask -- ``y_i = clip(((x_i - tau)_+/lam)^(q-1), 0, 1)``
  with ``sum y = k``; magnitude -- the Prop 7.3 variational form ``max_{z in P(1_k)} sum_i V_i(z_i)``,
  whose optimality condition is ``|y_i|/z_i = t`` on unclipped coordinates, so
  ``z_i = min(1, ((|x_i| - t)_+/lam)^(q-1)/t)`` with ``sum z = k`` (bisection on ``t``), and ``y_i`` solves
  ``|x_i| = |y|/z_i + lam |y|^(p-1)``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["check_input", "lmo", "hard_topkmask", "hard_topkmag", "pool", "pav", "pav_reference", "pav_values",
           "pav_work",
           "topk_mask", "topk_mag",
           "relaxed", "kkt_mask", "kkt_mag", "proj_pairs", "dykstra_printed", "dykstra", "jacobian_blocks",
           "blocks_of", "conj_ksupport", "grad_Rstar"]


def check_input(x, k, lam, p):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.number) or np.iscomplexobj(x):
        raise ValueError(f"x must be a real vector, got dtype {x.dtype}")
    x = x.astype(float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"x must be a non-empty 1-D vector, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x has a NaN or infinite entry")
    n = x.size
    if int(k) != k or not (1 <= k <= n):
        raise ValueError(f"k={k!r} must be an integer in [1, n={n}]")
    lam = float(lam)
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam={lam!r} must be a positive finite number")
    p = float(p)
    if not np.isfinite(p) or p <= 1:
        raise ValueError(f"p={p!r} must be > 1 (q = p/(p-1) is infinite at p = 1)")
    return x, int(k), lam, p


def _q(p):
    return p / (p - 1)


def _psi(u, q):
    return np.sign(u) * np.abs(u) ** (q - 1)


def grad_Rstar(u, lam, p):
    q = _q(p)
    return lam ** (1 - q) * _psi(np.asarray(u, dtype=float), q)


# ---------------------------------------------------------------------------
# hard operators (Prop 7.1)
def lmo(x, w):
    """``f(x, w) = sum_i w_(i) x_[i]`` and ``y(x, w) = w_rank(x)`` (w sorted descending first)."""
    x = np.asarray(x, dtype=float)
    ws = np.sort(np.asarray(w, dtype=float))[::-1]
    order = np.argsort(-x, kind="stable")
    y = np.empty_like(x)
    y[order] = ws
    return float(np.dot(np.sort(x)[::-1], ws)), y


def hard_topkmask(x, k):
    x = np.asarray(x, dtype=float)
    return lmo(x, (np.arange(x.size) < k).astype(float))[1]


def hard_topkmag(x, k):
    x = np.asarray(x, dtype=float)
    return x * hard_topkmask(np.abs(x), k)


# ---------------------------------------------------------------------------
# pooling (7.6)
def _F(g, s, W, c, mag, q):
    """Pooling derivative on Python floats (blocks are short; NumPy call overhead dominates otherwise)."""
    e = q - 1
    tot = 0.0
    for si in s:
        u = g - si
        tot += u ** e if u >= 0 else -((-u) ** e)
    return tot + c * W * (g if mag else 1.0)


def _cubic_root(P, Q):
    """The real root of t^3 + P t + Q = 0, P >= 0 (one real root), without cancellation."""
    if P == 0 and Q == 0:
        return 0.0
    D = math.sqrt(Q * Q / 4 + P ** 3 / 27)
    A = -math.copysign(1.0, Q) * (abs(Q) / 2 + D) ** (1 / 3)
    return A - P / (3 * A) if A != 0 else 0.0


def pool(s, w, lam, p, mag, method="closed"):
    """gamma*_B of (7.6) for the block values ``s``, weights ``w``."""
    s = np.asarray(s, dtype=float)
    w = np.asarray(w, dtype=float)
    q = _q(p)
    c = lam ** (q - 1)
    m = s.size
    W = float(np.sum(w))
    if method == "closed":
        if p == 2:
            return float(np.sum(s) / (m + lam * W)) if mag else float(np.mean(s) - lam * W / m)
        if abs(p - 4 / 3) < 1e-15:
            sb = float(np.mean(s))
            dl = s - sb
            M2, M3 = float(np.sum(dl * dl)), float(np.sum(dl ** 3))
            if mag:       # m t^3 + (3 M2 + c W) t - M3 + c W sb = 0
                P, Q = (3 * M2 + c * W) / m, (c * W * sb - M3) / m
            else:         # m t^3 + 3 M2 t - M3 + c W = 0
                P, Q = 3 * M2 / m, (c * W - M3) / m
            t = _cubic_root(P, Q)
            d = 3 * t * t + P
            if d > 0:
                t -= (t ** 3 + P * t + Q) / d     # one Newton step
            return sb + t
        raise ValueError(f"no closed-form pooling for p={p}; use method='bisect'")
    if method != "bisect":
        raise ValueError(f"method={method!r} must be 'closed' or 'bisect'")
    sl = s.tolist()
    lo, hi = min(sl) - 1.0, max(sl) + 1.0
    while _F(lo, sl, W, c, mag, q) > 0:
        lo -= 2 * (hi - lo)
    while _F(hi, sl, W, c, mag, q) < 0:
        hi += 2 * (hi - lo)
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _F(mid, sl, W, c, mag, q) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def pav_reference(s, w, lam, p, mag, method="closed"):
    """Pool adjacent violators for (7.5) (decreasing order), the plain Python reference: every merge re-pools
    the merged block from its values with :func:`pool`.  Returns (v, blocks), blocks as (start, end)."""
    s = np.asarray(s, dtype=float)
    w = np.asarray(w, dtype=float)
    starts, ends, vals = [], [], []
    for i in range(s.size):
        starts.append(i)
        ends.append(i + 1)
        vals.append(pool(s[i:i + 1], w[i:i + 1], lam, p, mag, method))
        while len(vals) > 1 and vals[-2] < vals[-1]:
            a, e = starts[-2], ends[-1]
            starts.pop(); ends.pop(); vals.pop()
            starts[-1], ends[-1] = a, e
            vals[-1] = pool(s[a:e], w[a:e], lam, p, mag, method)
    v = np.empty(s.size)
    for a, e, g in zip(starts, ends, vals):
        v[a:e] = g
    return v, list(zip(starts, ends))



# ---------------------------------------------------------------------------
# PAV in O(n): a stack of blocks with sufficient statistics (Numba)
#
# A block is pooled from statistics that merge in O(1): its size m, its weight W = sum w_i, its mean and its
# central moments M2 = sum (s_i - mean)^2, M3 = sum (s_i - mean)^3 (Chan, Golub & LeVeque's pairwise
# update, which does not cancel the way raw power sums do).  p = 2 needs m, W and the mean; p = 4/3 the
# cubic of App. 7.A.6 in the centred variable t = g - mean, whose coefficients are exactly m, M2, M3, W
# (same formulas as :func:`pool`).  Each index is pushed once and merged at most once, so p = 2 and
# p = 4/3 are O(n) overall.  Any other p has no such statistics: see "general p in O(n)" below (the mode-2
# branch of ``_pav_stack``, bisection over the block's values, O(n x largest block), is no longer called).

# the same cubic root, compiled for the stack kernel
_cubic_root_nb = njit(cache=True)(_cubic_root)


@njit(cache=True)
def _F_nb(g, s, a, e, W, c, mag, q):
    ex = q - 1.0
    tot = 0.0
    for i in range(a, e):
        u = g - s[i]
        tot += u ** ex if u >= 0 else -((-u) ** ex)
    return tot + c * W * (g if mag else 1.0)


@njit(cache=True)
def _F_dF_nb(g, s, a, e, W, c, mag, q):
    """F_B(g) and F_B'(g) in one pass (F_B' is +inf at g = s_i when q < 2)."""
    ex = q - 1.0
    f = 0.0
    df = 0.0
    fa = 0.0
    for i in range(a, e):
        u = g - s[i]
        au = abs(u)
        t = au ** ex
        f += t if u >= 0 else -t
        fa += t
        df += ex * t / au if au > 0 else (0.0 if q > 2 else (ex if q == 2 else np.inf))
    lin = c * W * (g if mag else 1.0)
    return f + lin, df + (c * W if mag else 0.0), fa + abs(lin)


@njit(cache=True)
def _pool_bracketed_w(s, a, e, W, c, mag, q, lo, hi):
    """The root of the increasing F_B in [lo, hi] (F_B(lo) <= 0 <= F_B(hi)) and the work spent (terms of F_B
    evaluated): a safeguarded Newton iteration (a Newton step that leaves the bracket, or one that did not
    halve the step before last, falls back to bisection; Numerical Recipes' rtsafe rule), run until the
    bracket is two adjacent floats or |F_B| is below its rounding bound (|B| + 2) eps sum |terms| (then the
    computed F_B cannot tell g from the root: the root's error is that bound over F_B', as for the
    reference's bisection, whose last steps follow the signs of rounding noise).  Newton
    converges quadratically where F_B is smooth; near a kink (g = s_i with q < 2 or q > 2) it halves the
    bracket, so the count is at most ~64 + the Newton steps, each costing |B| terms."""
    g = 0.5 * (lo + hi)
    dxold = hi - lo
    dx = dxold
    work = 0
    lo0, hi0 = lo, hi
    tried_lo, tried_hi = False, False
    for _ in range(400):
        f, df, fa = _F_dF_nb(g, s, a, e, W, c, mag, q)
        work += e - a
        # |f| below its rounding (~(|B| + 2) eps sum |terms|, the sum's error bound) is a root as far as
        # F_B can tell: stop; bisecting on noisy signs to adjacent floats took 55 passes where the root is
        # ~0 (floats are dense there)
        if abs(f) <= (e - a + 2) * 1.2e-16 * fa:
            if df > 0 and df < np.inf:           # the last Newton correction, free: leaves the actual
                nxt = g - f / df                 # rounding of f (~sqrt|B| eps), not the bound, in the root
                if lo <= nxt <= hi:
                    g = nxt
            return g, work
        if f < 0:
            lo = g
        else:
            hi = g
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        nxt = g - f / df if (df > 0 and df < np.inf) else mid
        # a Newton step past an end of the original bracket points at a root on that end (the threshold
        # kernel brackets by its bisection points, and a symmetric block pools exactly onto one): try the end
        # once instead of halving towards it for 53 steps
        if nxt >= hi and hi == hi0 and not tried_hi:
            tried_hi = True
            nxt = hi
        elif nxt <= lo and lo == lo0 and not tried_lo:
            tried_lo = True
            nxt = lo
        elif not (lo < nxt < hi) or abs(2.0 * f) > abs(dxold * df):
            nxt = mid
        dxold, dx = dx, nxt - g
        if nxt == g:
            break
        g = nxt
    return g, work


@njit(cache=True)
def _pool_bracketed(s, a, e, W, c, mag, q, lo, hi):
    """:func:`_pool_bracketed_w` without the work count.  The bracket comes from the merge: the merged
    block's root lies between the roots of its two parts, where F_B = F_left + F_right changes sign."""
    return _pool_bracketed_w(s, a, e, W, c, mag, q, lo, hi)[0]


@njit(cache=True)
def _pool_stats(s, a, e, m, W, mean, M2, M3, lam, q, c, mode, mag):
    """gamma*_B of (7.6) from a block's statistics; mode 0: p = 2, 1: p = 4/3, 2: bisection (any p)."""
    if mode == 0:
        return mean * m / (m + lam * W) if mag else mean - lam * W / m
    if mode == 1:
        if mag:
            P, Q = (3 * M2 + c * W) / m, (c * W * mean - M3) / m
        else:
            P, Q = 3 * M2 / m, (c * W - M3) / m
        t = _cubic_root_nb(P, Q)
        d = 3 * t * t + P
        if d > 0:
            t -= (t ** 3 + P * t + Q) / d
        return mean + t
    lo, hi = s[a], s[a]
    for i in range(a, e):
        lo = min(lo, s[i])
        hi = max(hi, s[i])
    lo -= 1.0
    hi += 1.0
    while _F_nb(lo, s, a, e, W, c, mag, q) > 0:
        lo -= 2 * (hi - lo)
    while _F_nb(hi, s, a, e, W, c, mag, q) < 0:
        hi += 2 * (hi - lo)
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _F_nb(mid, s, a, e, W, c, mag, q) < 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@njit(cache=True)
def _pav_stack(s, w, lam, p, mag, mode):
    """Returns (v, starts, ends) for the blocks of the PAV solution of (7.5) (decreasing order)."""
    n = s.size
    q = p / (p - 1.0)
    c = lam ** (q - 1.0)
    start = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    m = np.empty(n)
    W = np.empty(n)
    mean = np.empty(n)
    M2 = np.empty(n)
    M3 = np.empty(n)
    val = np.empty(n)
    top = -1
    for i in range(n):
        top += 1
        start[top], end[top] = i, i + 1
        m[top], W[top], mean[top], M2[top], M3[top] = 1.0, w[i], s[i], 0.0, 0.0
        val[top] = _pool_stats(s, i, i + 1, 1.0, w[i], s[i], 0.0, 0.0, lam, q, c, mode, mag)
        while top > 0 and val[top - 1] < val[top]:
            b = top - 1
            na, nb = m[b], m[top]
            nn = na + nb
            d = mean[top] - mean[b]
            M3[b] = (M3[b] + M3[top] + d ** 3 * na * nb * (na - nb) / (nn * nn)
                     + 3.0 * d * (na * M2[top] - nb * M2[b]) / nn)
            M2[b] = M2[b] + M2[top] + d * d * na * nb / nn
            mean[b] = mean[b] + d * nb / nn
            m[b] = nn
            W[b] = W[b] + W[top]
            end[b] = end[top]
            g_left, g_right = val[b], val[top]
            top = b
            if mode == 2:
                val[b] = _pool_bracketed(s, start[b], end[b], W[b], c, mag, q, g_left, g_right)
            else:
                val[b] = _pool_stats(s, start[b], end[b], m[b], W[b], mean[b], M2[b], M3[b], lam, q, c, mode, mag)
    v = np.empty(n)
    for b in range(top + 1):
        for i in range(start[b], end[b]):
            v[i] = val[b]
    return v, start[:top + 1].copy(), end[:top + 1].copy()


@njit(cache=True)
def _pav2(s, w, lam, mag):
    """p = 2 specialised: a block pools to (S - lam W)/m (mask) or S/(m + lam W) (magnitude) from its sum S,
    weight W and size m; returns (v, starts, ends) like :func:`_pav_stack`."""
    n = s.size
    start = np.empty(n + 1, np.int64)
    S = np.empty(n)
    W = np.empty(n)
    val = np.empty(n)
    top = -1
    for i in range(n):
        top += 1
        start[top] = i
        S[top], W[top] = s[i], w[i]
        val[top] = s[i] / (1.0 + lam * w[i]) if mag else s[i] - lam * w[i]
        while top > 0 and val[top - 1] < val[top]:
            b = top - 1
            S[b] += S[top]
            W[b] += W[top]
            top = b
            m = i + 1 - start[b]
            val[b] = S[b] / (m + lam * W[b]) if mag else (S[b] - lam * W[b]) / m
    start[top + 1] = n
    v = np.empty(n)
    for b in range(top + 1):
        g = val[b]
        for i in range(start[b], start[b + 1]):
            v[i] = g
    return v, start[:top + 1].copy(), start[1:top + 2].copy()


# ---------------------------------------------------------------------------
# general p in O(n): PAV with a linear work budget, and the threshold decomposition behind it
#
# For q - 1 not an integer, F_B(g) = sum_B psi(g - s_i) + c W_B phi'(g) has no finite sufficient statistics,
# so pooling a block by root-finding costs |B| terms per evaluation, and PAV's re-pooling of a growing block
# costs O(|B|^2) in all: on the sorted top-k input (s descending, w = 1_k) the block around k absorbs about
# n/10 entries one by one (measured: 9.5 s at n = 1e5, lam = 0.5).  Two kernels, both counting their work
# in terms of F evaluated (one psi each):
#
# * ``_pav_gen_stack``: the stack PAV, each merge pooled by the safeguarded Newton iteration started from
#   the merge's bracket [g_left, g_right]; it gives up once its work exceeds ``budget * n`` terms.
# * ``_iso_threshold``: the threshold decomposition of a chain (Hochbaum & Queyranne 1994; Ahuja & Orlin
#   2001): for any theta, {i : v*_i > theta} is the prefix [a, j) whose partial sum of h_i'(theta) is
#   smallest (the smallest such j).  Bisecting the value interval [L, U] of an index range R at theta
#   splits R into [a, j) (values in (theta, U]) and [j, e) (values in [L, theta]), so each level of the
#   recursion costs one pass over the indices it holds, and the value interval halves per level.  A range
#   whose singleton minimisers are already non-increasing is solved by them.  Otherwise a range is a leaf
#   (one pooled value, the root of F_R in [L, U] by the same Newton iteration, to the last bit)
#   when its interval is narrower than delta = 4 eps max(|L0|, |U0|), or when the
#   pooled value passes the block test (every proper prefix sum of h_i'(g) exceeds its rounding bound T > 0:
#   no prefix wants to rise), tried at the 1st, 2nd, 4th, ... one-sided split of the same range.  Depth <=
#   log2((U0 - L0) / delta) <= 52, each level two passes (the monotonicity scan and the split), so the work
#   is O(n) with a constant bounded by the precision, not by n: <= ~104 passes plus the block tests (each a
#   Newton solve of ~5-10 passes on its range).  Measured (tests/test_topk.py, bench_peers.py): 8-105 terms
#   per element from n = 1e3 to 1e5 on sorted, random and merge-forcing inputs, p from 1.1 to 8.
#
# ``pav`` with method 'bisect' runs the stack PAV under budget 2n and, when that is exceeded, the threshold
# decomposition from scratch: total work <= 2 n + one pooling + the decomposition's bound, linear in n.
# Error model: a leaf holding one true block gets its root to the last bit (|dg| ~ a few ulps of the scale
# plus |B| eps max|psi| / F_B', the conditioning of the root, as for the reference); a leaf of width <= delta
# holding several true blocks gets a value inside [L, U], within delta = 4 eps max|bound| of each of them.

@njit(cache=True)
def _singleton_root(s, w, i, c, mag, q, p):
    """The minimiser of h_i alone, and its work: mask s_i - lam sign(w_i)|w_i|^(p-1) in closed form
    (psi(g - s_i) = -c w_i, psi^-1(t) = sign(t)|t|^(p-1), c^(p-1) = lam); magnitude: the root of
    psi(g - s_i) + c w_i g between 0 and s_i."""
    if not mag:
        t = c * w[i]
        return s[i] - np.sign(t) * abs(t) ** (p - 1.0), 1
    lo, hi = min(0.0, s[i]), max(0.0, s[i])
    if lo == hi or w[i] == 0.0:          # psi(g - s_i) = 0: g = s_i exactly (Newton would stop an ulp away,
        return s[i], 1                   # which psi^(q-1) with q < 2 turns into sqrt-size errors in y)
    return _pool_bracketed_w(s, i, i + 1, w[i], c, mag, q, lo, hi)


@njit(cache=True)
def _pav_gen_stack(s, w, lam, p, mag, budget):
    """Stack PAV for any p > 1, pooling merges by bracketed Newton; returns (v, starts, ends, work, ok);
    ok is False (and v unfinished) once the work exceeds budget * n terms."""
    n = s.size
    q = p / (p - 1.0)
    c = lam ** (q - 1.0)
    start = np.empty(n + 1, np.int64)
    W = np.empty(n)
    val = np.empty(n)
    top = -1
    work = 0
    limit = budget * n
    for i in range(n):
        top += 1
        start[top] = i
        W[top] = w[i]
        g, wk = _singleton_root(s, w, i, c, mag, q, p)
        val[top] = g
        work += wk
        while top > 0 and val[top - 1] < val[top]:
            b = top - 1
            W[b] += W[top]
            g, wk = _pool_bracketed_w(s, start[b], i + 1, W[b], c, mag, q, val[b], val[top])
            val[b] = g
            work += wk
            top = b
            if work > limit:
                return val, start, start, work, False
    start[top + 1] = n
    v = np.empty(n)
    for b in range(top + 1):
        for i in range(start[b], start[b + 1]):
            v[i] = val[b]
    return v, start[:top + 1].copy(), start[1:top + 2].copy(), work, True


@njit(cache=True)
def _iso_threshold(s, w, lam, p, mag):
    """The threshold decomposition (block comment above); returns (v, starts, ends, work), the leaves in
    index order."""
    n = s.size
    q = p / (p - 1.0)
    c = lam ** (q - 1.0)
    ex = q - 1.0
    cw = np.zeros(n + 1)
    for i in range(n):
        cw[i + 1] = cw[i] + w[i]
    work = 0
    L0, U0 = np.inf, -np.inf
    gam = np.empty(n)
    for i in range(n):
        g, wk = _singleton_root(s, w, i, c, mag, q, p)
        gam[i] = g
        work += wk
        L0 = min(L0, g)
        U0 = max(U0, g)
    eps = np.finfo(np.float64).eps
    delta = 4.0 * eps * max(abs(L0), abs(U0))
    v = np.empty(n)
    starts = np.empty(n, np.int64)
    ends = np.empty(n, np.int64)
    nleaf = 0
    cap = 2 * n + 256
    sa = np.empty(cap, np.int64)
    se = np.empty(cap, np.int64)
    sk = np.empty(cap, np.int64)            # one-sided splits of this range so far
    sL = np.empty(cap)
    sU = np.empty(cap)
    top = 0
    sa[0], se[0], sk[0], sL[0], sU[0] = 0, n, 0, L0, U0
    while top >= 0:
        a, e, k, L, U = sa[top], se[top], sk[top], sL[top], sU[top]
        top -= 1
        # a range whose singleton minimisers are already non-increasing is solved by them (PAV on it merges
        # nothing; clipped to [L, U], where the threshold theorem puts them anyway): one pass of comparisons
        mono = True
        for i in range(a, e - 1):
            if gam[i] < gam[i + 1]:
                mono = False
                break
        if mono:
            work += e - a
            for i in range(a, e):
                v[i] = min(max(gam[i], L), U)
                starts[nleaf], ends[nleaf] = i, i + 1
                nleaf += 1
            continue
        leaf = U - L <= delta
        g = 0.0
        if not leaf and k > 0 and (k & (k - 1)) == 0:          # block test at the 1st, 2nd, 4th, ... one-sided split
            g, wk = _pool_bracketed_w(s, a, e, cw[e] - cw[a], c, mag, q, L, U)
            work += wk + 2 * (e - a)
            # rounding bound T on every computed prefix sum at g: per term 4 eps |d_i| plus the change of
            # |u|^ex when u = g - s_i moves by eps (|g| + |s_i|), summed over R, plus F_R'(g) times 2 ulp(g)
            # (g is the computed root); a prefix within T of 0 is undecided, so the test says 'not a block'
            # and the bisection goes on (a false 'no' costs passes, a false 'yes' would pool two blocks:
            # with q = 11 a prefix sum of 1e-25 against rounding 1e-17 did)
            T = 0.0
            dF = 0.0
            for i in range(a, e):
                u = g - s[i]
                au = abs(u)
                t = au ** ex
                lin = c * w[i] * (g if mag else 1.0)
                T += 4.0 * eps * (t + abs(lin)) + ((au + eps * (abs(g) + abs(s[i]))) ** ex - t)
                dF += ex * t / au if au > 0 else (0.0 if ex > 1.0 else (1.0 if ex == 1.0 else np.inf))
                if mag:
                    dF += c * w[i]
            T += 2.0 * eps * abs(g) * dF
            P = 0.0
            leaf = T < np.inf
            for i in range(a, e - 1):
                if not leaf:
                    break
                u = g - s[i]
                t = abs(u) ** ex
                P += (t if u >= 0 else -t) + c * w[i] * (g if mag else 1.0)
                if P <= T:
                    leaf = False
            if leaf:
                v[a:e] = g
                starts[nleaf], ends[nleaf] = a, e
                nleaf += 1
                continue
        if leaf:
            g, wk = _pool_bracketed_w(s, a, e, cw[e] - cw[a], c, mag, q, L, U)
            work += wk
            v[a:e] = g
            starts[nleaf], ends[nleaf] = a, e
            nleaf += 1
            continue
        th = 0.5 * (L + U)
        # smallest argmin of the prefix sums of h_i'(theta), accumulated from the last minimum (D = P_i - min
        # P so far, Kadane's form): a small d_i after large terms still moves the minimum, which a running P
        # of magnitude sum |d| would round away (measured: p = 1.1, |s| ~ 1e3, terms ~ 1e30)
        D = 0.0
        j = a
        for i in range(a, e):
            u = th - s[i]
            t = abs(u) ** ex
            D += (t if u >= 0 else -t) + c * w[i] * (th if mag else 1.0)
            if D < 0.0:
                D = 0.0
                j = i + 1
        work += e - a
        if j == a:                                  # all of R at or below theta
            top += 1
            sa[top], se[top], sk[top], sL[top], sU[top] = a, e, k + 1, L, th
        elif j == e:                                # all of R above theta
            top += 1
            sa[top], se[top], sk[top], sL[top], sU[top] = a, e, k + 1, th, U
        else:                                       # right part pushed first: leaves come out in index order
            top += 1
            sa[top], se[top], sk[top], sL[top], sU[top] = j, e, 0, L, th
            top += 1
            sa[top], se[top], sk[top], sL[top], sU[top] = a, j, 0, th, U
    return v, starts[:nleaf].copy(), ends[:nleaf].copy(), work


PAV_BUDGET = 2          # stack PAV work allowed per element (terms of F) before the threshold decomposition


def _run_general(s, w, lam, p, mag):
    v, a, e, work, ok = _pav_gen_stack(s, w, float(lam), float(p), bool(mag), PAV_BUDGET)
    if ok:
        return v, a, e, work, "pav"
    v, a, e, work2 = _iso_threshold(s, w, float(lam), float(p), bool(mag))
    return v, a, e, work + work2, "threshold"


def pav_work(s, w, lam, p, mag, kernel="auto"):
    """The general-p solver with its work count: (v, blocks, work, kernel used), work in terms of F_B
    (one psi each).  ``kernel``: 'auto' (stack PAV under a 2n budget, then the threshold decomposition),
    'pav' (the stack PAV without a budget) or 'threshold'."""
    s = np.ascontiguousarray(s, dtype=float)
    w = np.ascontiguousarray(w, dtype=float)
    if kernel == "auto":
        v, a, e, work, used = _run_general(s, w, lam, p, mag)
    elif kernel == "pav":
        v, a, e, work, _ = _pav_gen_stack(s, w, float(lam), float(p), bool(mag), np.inf)
        used = "pav"
    elif kernel == "threshold":
        v, a, e, work = _iso_threshold(s, w, float(lam), float(p), bool(mag))
        used = "threshold"
    else:
        raise ValueError(f"kernel={kernel!r} must be 'auto', 'pav' or 'threshold'")
    return v, list(zip(a.tolist(), e.tolist())), int(work), used


def _run_pav(s, w, lam, p, mag, method):
    s = np.ascontiguousarray(s, dtype=float)
    w = np.ascontiguousarray(w, dtype=float)
    mode = _pav_mode(float(p), method)
    if mode == 0:
        return _pav2(s, w, float(lam), bool(mag))
    if mode == 2:
        return _run_general(s, w, lam, p, mag)[:3]
    return _pav_stack(s, w, float(lam), float(p), bool(mag), mode)


def _pav_mode(p, method):
    if method == "closed":
        if p == 2:
            return 0
        if abs(p - 4 / 3) < 1e-15:
            return 1
        raise ValueError(f"no closed-form pooling for p={p}; use method='bisect'")
    if method != "bisect":
        raise ValueError(f"method={method!r} must be 'closed' or 'bisect'")
    return 2


def pav_values(s, w, lam, p, mag, method="closed"):
    """The PAV solution v of (7.5) (decreasing order), O(n): the Numba stack kernel for p = 2 and 4/3
    ('closed'), the general-p kernels for any p ('bisect'; see :func:`pav_work`)."""
    return _run_pav(s, w, lam, p, mag, method)[0]


def pav(s, w, lam, p, mag, method="closed"):
    """Pool adjacent violators for (7.5) (decreasing order); returns (v, blocks) with blocks as (start, end).
    The O(n) stack kernel; :func:`pav_reference` is the plain re-pooling reference it is tested against."""
    v, a, e = _run_pav(s, w, lam, p, mag, method)
    return v, list(zip(a.tolist(), e.tolist()))


def relaxed(x, k, lam, p, mag, method="closed", sort_input=True):
    """y_{phi,R}(x, 1_k) by PAV (Props 7.2, 7.5, 7.6).  ``sort_input=False`` skips the sort (a wrong variant)."""
    x, k, lam, p = check_input(x, k, lam, p)
    n = x.size
    key = np.abs(x) if mag else x
    sigma = np.argsort(-key, kind="stable") if sort_input else np.arange(n)
    s = key[sigma]
    w = (np.arange(n) < k).astype(float)
    v = pav_values(s, w, lam, p, mag, method)
    if mag:
        v = np.maximum(v, 0.0)            # non-negative monotone cone by truncation (Prop 7.6)
    u = np.empty(n)
    u[sigma] = v
    if mag:
        u = np.sign(x) * u
    return grad_Rstar(x - u, lam, p)


def topk_mask(x, k, lam=1.0, p=2.0, method="closed"):
    return relaxed(x, k, lam, p, False, method)


def topk_mag(x, k, lam=1.0, p=2.0, method="closed"):
    return relaxed(x, k, lam, p, True, method)


# ---------------------------------------------------------------------------
# independent KKT solvers
def _bisect_decreasing(fun, target, lo, hi):
    """t in [lo, hi] with fun(t) = target for a non-increasing fun (fun(lo) >= target >= fun(hi))."""
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if fun(mid) > target:
            lo = mid
        else:
            hi = mid
    return lo, hi


def kkt_mask(x, k, lam=1.0, p=2.0):
    """Capped-simplex KKT: y_i = clip(((x_i - tau)_+/lam)^(q-1), 0, 1), sum y = k."""
    x, k, lam, p = check_input(x, k, lam, p)
    q = _q(p)

    def y_of(tau):
        return np.clip((np.maximum(x - tau, 0) / lam) ** (q - 1), 0, 1)
    lo, hi = _bisect_decreasing(lambda t: float(np.sum(y_of(t))), k, float(x.min()) - lam - 1.0, float(x.max()))
    ylo, yhi = y_of(lo), y_of(hi)
    # interpolate the (piecewise smooth) sum in tau between the last bracket for the last bit
    slo, shi = float(ylo.sum()), float(yhi.sum())
    a = 0.0 if slo == shi else (slo - k) / (slo - shi)
    return (1 - a) * ylo + a * yhi


def _solve_y_z1(ax, lam, p):
    """|y| + lam |y|^(p-1) = ax, y >= 0 (z = 1)."""
    lo, hi = 0.0, ax
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if mid + lam * mid ** (p - 1) < ax:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def kkt_mag(x, k, lam=1.0, p=2.0):
    """Variational route of Prop 7.3 for topkmag_R (module docstring); no isotonic regression."""
    x, k, lam, p = check_input(x, k, lam, p)
    q = _q(p)
    ax = np.abs(x)
    if np.count_nonzero(ax) <= k:
        z = (ax > 0).astype(float)
        return np.sign(x) * np.array([_solve_y_z1(a, lam, p) if a > 0 else 0.0 for a in ax])

    def z_of(t):
        return np.minimum(1.0, (np.maximum(ax - t, 0) / lam) ** (q - 1) / t)
    lo, hi = _bisect_decreasing(lambda t: float(np.sum(z_of(t))), k, 1e-300, float(ax.max()))
    t = 0.5 * (lo + hi)
    z = z_of(t)
    y = np.empty_like(x)
    for i in range(x.size):
        if z[i] >= 1.0:
            y[i] = _solve_y_z1(ax[i], lam, p)
        else:
            y[i] = (max(ax[i] - t, 0.0) / lam) ** (q - 1)
    return np.sign(x) * y


# ---------------------------------------------------------------------------
# Dykstra (Alg. 7.7), phi = id, R = |.|^2/2 (lam = 1)
def proj_pairs(v, offset):
    """Euclidean projection onto {v_i >= v_(i+1) for i = offset, offset + 2, ...} (C_1: offset 0, C_2: 1)."""
    v = np.array(v, dtype=float)
    i = np.arange(offset, v.size - 1, 2)
    a, b = v[i], v[i + 1]
    bad = a < b
    m = 0.5 * (a + b)
    v[i[bad]] = m[bad]
    v[i[bad] + 1] = m[bad]
    return v


def dykstra_printed(s, w, n_iter=1000):
    """Algorithm 7.7 as printed: v^0 = s, p = q = 0, and the linear term <., w> in BOTH half-steps."""
    s, w = np.asarray(s, dtype=float), np.asarray(w, dtype=float)
    v, pp, qq = s.copy(), np.zeros_like(s), np.zeros_like(s)
    for _ in range(int(n_iter)):
        y = proj_pairs(v + pp - w, 0)
        pp = v + pp - y
        v_new = proj_pairs(y + qq - w, 1)
        qq = y + qq - v_new
        v = v_new
    return v


def dykstra(s, w, n_iter=1000, tol=0.0):
    """Standard Dykstra for proj_{monotone}(s - w): start at s - w, pure projections.  Stops after ``n_iter``
    iterations or when an iteration changes v by at most ``tol`` (max norm); returns (v, iterations)."""
    s, w = np.asarray(s, dtype=float), np.asarray(w, dtype=float)
    v, pp, qq = s - w, np.zeros_like(s), np.zeros_like(s)
    it = 0
    for it in range(1, int(n_iter) + 1):
        y = proj_pairs(v + pp, 0)
        pp = v + pp - y
        v_new = proj_pairs(y + qq, 1)
        qq = y + qq - v_new
        done = (np.max(np.abs(v_new - v)) <= tol
                and np.all(np.diff(v_new) <= 4 * np.finfo(float).eps * (np.max(np.abs(v_new)) + 1)))
        v = v_new
        if done:
            break
    return v, it


# ---------------------------------------------------------------------------
# Jacobian (Prop 7.8)
def blocks_of(v, rtol=0.0):
    """Maximal runs of equal values of a PAV solution (exact equality)."""
    out, a = [], 0
    for i in range(1, len(v) + 1):
        if i == len(v) or v[i] != v[a]:
            out.append((a, i))
            a = i
    return out


def jacobian_blocks(s, w, v, blocks, lam, p, mag):
    """dv/ds by Prop 7.8 (general lam: the w_j term is scaled by lam^(q-1)); singletons with 0/0 get their limit."""
    q = _q(p)
    n = len(s)
    J = np.zeros((n, n))
    c = lam ** (q - 1)
    for a, e in blocks:
        g = v[a]
        dd = np.abs(g - s[a:e])
        num = (q - 1) * dd ** (q - 2) if q != 2 else np.ones(e - a)
        den = float(np.sum(num)) + (c * float(np.sum(w[a:e])) if mag else 0.0)
        if den == 0:            # all |g - s_i| = 0 with q > 2: limit of the formula is 1/|B| (catalogue P7.8)
            num, den = np.ones(e - a), float(e - a)
        for r in range(a, e):
            J[r, a:e] = num / den
    return J


def conj_ksupport(y, k):
    """1/2 |y|_(k)^2, the squared k-support norm (Argyriou et al. 2012 closed form)."""
    a = np.sort(np.abs(np.asarray(y, dtype=float)))[::-1]
    n = a.size
    if k >= n:
        return 0.5 * float(np.sum(a * a))
    for r in range(k):
        tail = float(np.sum(a[k - r - 1:]))
        left = a[k - r - 2] if k - r - 2 >= 0 else np.inf
        if left > tail / (r + 1) >= a[k - r - 1]:
            return 0.5 * (float(np.sum(a[:k - r - 1] ** 2)) + tail ** 2 / (r + 1))
    return 0.5 * float(np.sum(a) ** 2 / k)
