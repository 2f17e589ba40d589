"""Private helpers shared by the sander claim modules of chapters 5-7 (Parts II-III: Sinkformers, in-context
autoregressive learning, sparse top-k); not a claim module (the registry skips ``_*``).

* chapter 5: the array-path spectral gap ``_gap_xp`` and the Sinkhorn-invariance tolerance ``_inv_tol_xp``
  (``ch5_3_sinkformer_attention``, ``ch5_4_sinkformer_gradient_flows``);
* chapter 6: the torus quadrature points ``_torus``/``_torus_orth``, the plain-token loss ``_loss_plain``
  (host) / ``_loss_xp`` (array path), Prop 6.8 as printed and corrected (``_printed_68``, ``_corrected_68``) and
  its rounding model ``_quad_tol`` (``ch6_3``, ``ch6_4b``, ``ch6_5_*``, ``ch6_6`` modules);
* chapter 7: the operator-output error model ``_y_tol``, the input draw ``_draw_x``/``_x_of``, the (n, k, x)
  validation ``_validate_nk`` and the double-range guard ``_double_range``/``_in_double_range`` (``ch7_*``).

Chapter 5 (Sinkformers).
Conventions (catalogue sander_part23 §1, §6 A3/A4): ``C_ij = (W_Q x_i)^T W_K x_j``, ``M = W_Q^T W_K``;
continuous kernels are normalised against ``mu`` (``int k dmu = 1``), so on ``mu_n = (1/n) sum delta_{x_i}``
``k(x_i, x_j) = n K_ij`` and the Wasserstein gradient at a particle is ``n nabla_{x_i} F(mu_n)``;
``Tbar_eps(x) = T_eps(x) - W_V x / eps``.  Iteration counts are full Sinkhorn iterations (row + column
normalisation, ``solvers.sinkhorn``); ``K^1`` (SoftMax) is one half-step.

Chapter 6 (in-context autoregressive learning).
Conventions (catalogue sander_part23 §1, §6 A1/A2): hermitian product ``<u|v> = sum_i u_i conj(v_i)``;
``W = diag(lambda)`` with i.i.d. uniform phases (unitary contexts), ``s_t = lambda^(t-1)``, ``s_1 = 1_d``.
``s_0`` (needed by the augmented token ``e_1 = (0, s_1, s_0)``) is NOT defined by the thesis: parameter
``s0`` in {inverse (W^-1 s_1, the default, the only one reproducing the thesis's eta*), zero, s1 (what Lemma
6.3's heads produce)}.

Exact expectations: every loss here is E|Laurent polynomial in lambda|^2 with per-coordinate exponents in a
window of width D; averaging over the N-th roots of unity in each coordinate (N > D) is exact (aliasing-free),
so the "enumerated" losses are exact up to rounding (error model: 64 N^d eps times the sum of squared
coefficients).

Chapter 7 (fast, differentiable and sparse top-k).
Conventions (catalogue sander_part23 §1, §6 A7): ``R = (lam/p)|.|_p^p``, ``q = p/(p-1)``, ``w = 1_k``;
the mask uses phi(x) = x, topkmag phi(x) = x^2/2 (``solvers.topk``).  Fig 7.1's lambda is unstated: lam = 1.

Error model for operator outputs (used throughout): the pooled values gamma are computed to a few ulps of
their scale ``S = max|x| + lam k`` (closed forms, or bisection to the last bit), so ``|du| <= 64 n eps S``;
``y = lam^(1-q) psi(x - u)`` then moves by at most ``lam^(1-q) (q-1) max|x-u|^(q-2) |du|`` for q >= 2 and by
``2 lam^(1-q) |du|^(q-1)`` for 1 < q < 2 (Hoelder continuity of |u|^(q-1)).
"""
from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from solvers import xp_sander2 as X
from solvers.xp import namespace, on
from theorems.claim import ParamError, inconclusive

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Chapter 5: Sinkformers
def _gap_xp(K):
    """1 - sigma_2(K) (array path; 1 for a 1 x 1 matrix)."""
    if K.shape[-1] < 2:
        return 1.0
    xp = namespace(K)
    return 1.0 - float(xp.linalg.svdvals(K)[1])


def _inv_tol_xp(K1, e1, e2, n):
    xp = namespace(K1)
    return 2 * (e1 + e2 + 8 * n * EPS) / max(_gap_xp(K1), 1e-300) * float(xp.max(K1)) + 8 * n * EPS


# ===========================================================================
# Chapter 6: in-context autoregressive learning
def _torus(d, N):
    """All points of (mu_N)^d, mu_N the N-th roots of unity: shape (N^d, d)."""
    w = np.exp(2j * np.pi * np.arange(N) / N)
    return np.array(list(itertools.product(w, repeat=d))) if d > 0 else np.ones((1, 0))


def _loss_plain(C, p, T, lam):
    """E || sum_t p_t [C lambda^(t-T+1)] o lambda^(t-1) - lambda^T ||^2 over the points lam (Lemma 6.6 form)."""
    out = np.zeros(lam.shape, dtype=complex)
    for t in range(1, T + 1):
        out += p[t - 1] * (lam ** (t - T + 1) @ C.T) * lam ** (t - 1)
    return float(np.mean(np.sum(np.abs(out - lam ** T) ** 2, axis=1)))


def _printed_68(C, p, T):
    S = float(np.sum(C.T @ C))
    return float(p @ p) * float(np.sum(C * C)) + p[T - 2] ** 2 * S - 2 * float(np.trace(C)) * p[T - 1] + C.shape[0]


def _corrected_68(C, p, T):
    return _printed_68(C, p, T) - p[T - 2] ** 2 * float(np.sum(C * C))


def _quad_tol(C, pv, d, T):
    N = 2 * T
    return 64 * N ** d * EPS * (1 + float(np.sum(np.abs(C))) ** 2 * float(np.sum(np.abs(pv))) ** 2 + d)


def _loss_xp(xp, C, pv, T, lam):
    """_loss_plain on the array path: host C, p, torus points moved to xp; returns a float."""
    Cx, px, lx = on(xp, C, pv, lam)
    return float(X.loss_plain(Cx, px, T, lx))


def _torus_orth(delta, N):
    mu = _torus(delta, N)
    lam = np.empty((mu.shape[0], 2 * delta), dtype=complex)
    lam[:, 0::2], lam[:, 1::2] = mu, np.conj(mu)
    return lam


# ===========================================================================
# Chapter 7: sparse top-k
def _y_tol(x, k, lam, p, n_scale=64, y=None):
    """Entrywise error of y = grad R*(x - u) for an error du = n_scale n u S in the isotonic solution u.
    For q = p/(p-1) >= 2: dy/dz = ((q-1)/lam) (|z|/lam)^(q-2) = ((q-1)/lam) |y|^((q-2)/(q-1)); with the outputs y
    of the solvers compared (``y``, a posteriori) |y| <= Y = max(1, max|y|) and the slope is <= (q-1) Y/lam (audit:
    the a priori (2S)^(q-2) lam^(1-q) gave 4e124 near p = 1, a tolerance that cannot fail).  Without ``y``: the
    a priori bound.  For q < 2: Hoelder, 2 lam^(1-q) du^(q-1)."""
    q = p / (p - 1)
    n = len(x)
    S = float(np.max(np.abs(x))) + lam * k + 1.0
    du = n_scale * n * EPS * S
    if q >= 2:
        if y is not None:
            Y = max(1.0, max(float(np.max(np.abs(v))) for v in y))
            return (q - 1) / lam * Y * du * (1 + (q - 2) * du / lam) + 4 * n * EPS
        return lam ** (1 - q) * (q - 1) * (2 * S) ** (q - 2) * du + 4 * n * EPS
    return 2 * lam ** (1 - q) * du ** (q - 1) + 4 * n * EPS


def _draw_x(p):
    rng = np.random.default_rng(p.seed)
    return rng.uniform(-5, 5, p.n)


def _validate_nk(p):
    if p.get("x") is not None:
        if p.x.ndim != 1 or p.x.size < 2:
            raise ParamError("parameter x must be a vector of length >= 2")
        if p.get("k") is not None and p.k > p.x.size:
            raise ParamError(f"parameter k={p.k} exceeds the length n={p.x.size} of x")
    elif p.get("k") is not None and p.get("n") is not None and p.k > p.n:
        raise ParamError(f"parameter k={p.k} must be <= n={p.n}")


def _double_range(lam, pp):
    """Why lam and p put the regularised operator out of double range, or None.  grad R* (u) =
    lam^(1-q) |u|^(q-1) sign(u) with q = p/(p-1): lam^(1-q) overflows when |(1-q) log10 lam| > 300
    (lam = 5e-324, or p next to 1 with lam < 1), and |u|^(q-1) overflows or underflows for q > 300."""
    q = pp / (pp - 1)
    if not q - 1 <= 300:
        return inconclusive(f"p={pp!r} is so close to 1 that q = p/(p-1) = {q:.3g}: |u|^(q-1) over- or underflows a "
                            f"double for every |u| != 1", q=q)
    mag = (1 - q) * math.log10(lam)
    if not abs(mag) <= 300:
        return inconclusive(f"lam={lam!r}, p={pp!r}: lam^(1-q) = 10^{mag:.4g} is out of double range (q = {q:.4g})",
                            q=q, log10_scale=mag)
    return None


def _in_double_range(f):
    """A check of the regularised operator: inconclusive when lam, p are out of double range (above)."""
    @functools.wraps(f)
    def checked(p):
        return _double_range(p.lam, p.get("p", 2.0)) or f(p)
    return checked


def _x_of(p):
    return np.array(p.x, dtype=float) if p.get("x") is not None else _draw_x(p)
