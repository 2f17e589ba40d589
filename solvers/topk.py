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
  cancellation-free form, then one Newton step) and ``bisect`` (any p > 1: bisection to the last bit).
* Independent KKT solver (no isotonic regression): mask -- ``y_i = clip(((x_i - tau)_+/lam)^(q-1), 0, 1)``
  with ``sum y = k``; magnitude -- the Prop 7.3 variational form ``max_{z in P(1_k)} sum_i V_i(z_i)``,
  whose optimality condition is ``|y_i|/z_i = t`` on unclipped coordinates, so
  ``z_i = min(1, ((|x_i| - t)_+/lam)^(q-1)/t)`` with ``sum z = k`` (bisection on ``t``), and ``y_i`` solves
  ``|x_i| = |y|/z_i + lam |y|^(p-1)``.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["check_input", "lmo", "hard_topkmask", "hard_topkmag", "pool", "pav", "topk_mask", "topk_mag",
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


def pav(s, w, lam, p, mag, method="closed"):
    """Pool adjacent violators for (7.5) (decreasing order); returns (v, blocks) with blocks as (start, end)."""
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


def relaxed(x, k, lam, p, mag, method="closed", sort_input=True):
    """y_{phi,R}(x, 1_k) by PAV (Props 7.2, 7.5, 7.6).  ``sort_input=False`` skips the sort (a wrong variant)."""
    x, k, lam, p = check_input(x, k, lam, p)
    n = x.size
    key = np.abs(x) if mag else x
    sigma = np.argsort(-key, kind="stable") if sort_input else np.arange(n)
    s = key[sigma]
    w = (np.arange(n) < k).astype(float)
    v, _ = pav(s, w, lam, p, mag, method)
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
