"""Helpers shared by the menon modules on the metric g^N and the operator A_{N,W}
(sec4_2_end_to_end_metric, sec4_3_riemannian_gradient, sec7_2_metric_spectrum, sec14_3_infinite_depth).

Shared conventions (catalogue menon §1): ``Ws = [W_N, ..., W_1]``; on the balanced manifold
``W_p = Q_p Lambda Q_{p-1}^T`` and ``W = Q_N Sigma Q_0^T`` with ``Sigma = Lambda^N``.  For singular
values ``sigma_k, sigma_l`` we write ``x = sigma_k^2, y = sigma_l^2``; then the eigenvalue of
``A_{N,W}`` on ``u_k v_l^T`` is ``mu_N(x, y) = sum_{p=1}^N x^{(N-p)/N} y^{(p-1)/N}`` (the proof of
Lemma 1), which is (7.13) when x != y and (7.14) when x = y.  We never evaluate the quotient form
(7.13) directly: it cancels catastrophically for near-equal singular values (catalogue §5.3); the sum
form is used for N <= 64 and an expm1/log1p quotient (exact cancellation-free) above.

Error models.  ``psd_power`` computes ``S^a`` through ``eigh``: each eigenvalue carries an absolute
error ~ d eps lambda_max, i.e. a relative error d eps kappa on the smallest one (kappa =
lambda_max / lambda_min on the range), which the power a <= 1 does not amplify.  Every operator
built from N such powers is therefore accurate to ~ N d eps kappa relative to its norm; a linear
solve with the d^2 x d^2 matrix of A adds cond(A) d^2 eps.  The constants (a factor 50) are safety
factors over these first-order bounds, never tuned to a particular instance.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import namespace
from theorems.claim import ParamError

from ._common import rng_for


SAFETY = 50.0          # safety factor over the first-order rounding bounds (module docstring)
KAPPA_MAX = 1e10       # beyond this kappa(WW^T) the psd_power cutoff (1e-12) is too close: inconclusive
SUM_FORM_MAX_N = 64    # mu_N by the sum form up to this depth, by the expm1 quotient above


# ---------------------------------------------------------------------------
# shared numerics
def _mu(x, y, N):
    """Eigenvalue ``mu_N(x, y) = sum_{p=1}^N x^{(N-p)/N} y^{(p-1)/N}`` of A_{N,W} on u_k v_l^T
    (x = sigma_k^2, y = sigma_l^2; broadcasts).  Sum form for N <= 64 (every term positive: no
    cancellation); otherwise (x - y)/(x^{1/N} - y^{1/N}) with the denominator as
    y^{1/N} expm1(log1p((x-y)/y)/N), where x - y is exact for close x, y (Sterbenz)."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    if N <= SUM_FORM_MAX_N:
        p = np.arange(1, N + 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            xs = np.where(x[..., None] > 0, np.abs(x[..., None]) ** ((N - p) / N), (N - p == 0) * 1.0)
            ys = np.where(y[..., None] > 0, np.abs(y[..., None]) ** ((p - 1) / N), (p - 1 == 0) * 1.0)
        return np.sum(xs * ys, axis=-1)
    return N * _mu_scaled(x, y, N)


def _mu_scaled(x, y, N):
    """``mu_N(x, y) / N`` for large N, cancellation-free (see :func:`_mu`)."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    out = np.empty(x.shape)
    for idx in np.ndindex(x.shape):
        a, b = float(x[idx]), float(y[idx])
        if a < b:
            a, b = b, a
        if b == 0.0:
            out[idx] = a ** ((N - 1) / N) / N
        elif a == b:
            out[idx] = a ** ((N - 1) / N)
        else:
            L = math.log1p((a - b) / b)
            out[idx] = (a - b) / (N * b ** (1.0 / N) * math.expm1(L / N))
    return out


def _a_op(W, Z, N):
    """A_{N,W}(Z) (4.14) by its definition, with one eigh of WW^T and one of W^TW (cf. dln.a_operator);
    any array-API backend."""
    return X.a_op(W, Z, N)


def _a_mat(W, N):
    """Matrix of A_{N,W} on row-major vec(Z) (d^2 x d^2), from the same powers as :func:`_a_op`; any
    array-API backend (kron by broadcasting)."""
    return X.a_mat(W, N)


def _random_W(d, seed, sigmas=None):
    """A square W: Gaussian from the seed, or U diag(sigmas) V^T with Haar U, V from the seed."""
    rng = rng_for(seed)
    if sigmas is None:
        return rng.standard_normal((d, d))
    s = np.asarray(sigmas, float)
    U, V = dln.random_orthogonal(len(s), rng), dln.random_orthogonal(len(s), rng)
    return U @ np.diag(s) @ V.T


def _svd(W):
    U, s, Vt = np.linalg.svd(W)
    return U, s, Vt.T


def _kappa(s):
    """kappa(WW^T) on its numerical range (the psd_power cutoff 1e-12 decides the range)."""
    s2 = np.asarray(s, float) ** 2
    top = s2.max() if s2.size else 0.0
    if top == 0.0:
        return 1.0, 0
    pos = s2[s2 > 1e-12 * top]
    return float(top / pos.min()), int(pos.size)


def _sym_rot(t):
    """Rational rotation (Cayley transform) -- exact orthogonality for sympy."""
    t = sp.Rational(t)
    return sp.Matrix([[1 - t**2, -2 * t], [2 * t, 1 - t**2]]) / (1 + t**2)


def _sym_balanced(N, ts=("1/2", "2/3", "-1/3", "3/5", "1/7", "-2/5", "4/9", "1/4", "5/8")):
    """Symbolic balanced point, d = 2: W_p = Q_p diag(a, b) Q_{p-1}^T with exact rational Q's,
    a, b > 0 symbols, E' a matrix of free symbols.  Returns (Ws, Qs, a, b, Ep)."""
    a, b = sp.symbols("a b", positive=True)
    Qs = [_sym_rot(t) for t in ts[: N + 1]]  # [Q_N, ..., Q_0]
    L = sp.diag(a, b)
    Ws = [Qs[i] * L * Qs[i + 1].T for i in range(N)]
    Ep = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"e{i}{j}"))
    return Ws, Qs, a, b, Ep


def _count_nonzero(M) -> int:
    return sum(1 for e in M if sp.expand(sp.cancel(e)) != 0)


# ---------------------------------------------------------------------------
# menon.end_to_end_balanced  (Thm 2)
def _validate_zeros(p):
    if p.zeros > p.d - 1:
        raise ParamError(f"parameter zeros={p.zeros} must be <= d-1={p.d - 1} (rank >= 1)")


#: (4.11) as printed and its nearest misprints, as lists of terms k -> ((side, m), (side, m)): the k-th term is
#: X^{m_l/N} E'(W) Y^{m_r/N} with X, Y in {WW^T ("L"), W^TW ("R")}.  Shared by Thm 2 and Thm 3.
A_VARIANTS = {
    "stated": lambda N, k: (("L", N - k), ("R", k - 1)),
    "transposes_swapped": lambda N, k: (("R", N - k), ("L", k - 1)),
    "exponent_shifted": lambda N, k: (("L", N - k + 1), ("R", k - 1)),
}


def _sym_A(Qs, a, b, Ep, N, variant="stated"):
    """A_{N,W}(E') of (4.14) (or a misprint of it) at the symbolic balanced point: the psd powers
    (WW^T)^{m/N} = Q_N diag(a, b)^{2m} Q_N^T and (W^TW)^{m/N} = Q_0 diag(a, b)^{2m} Q_0^T (spectral calculus)."""
    frame = {"L": Qs[0], "R": Qs[-1]}
    pw = lambda side, m: frame[side] * sp.diag(a ** (2 * m), b ** (2 * m)) * frame[side].T  # noqa: E731
    out = sp.zeros(Ep.shape[0], Ep.shape[1])
    for k in range(1, N + 1):
        (sl, ml), (sr, mr) = A_VARIANTS[variant](N, k)
        out += pw(sl, ml) * Ep * pw(sr, mr)
    return out


def vec_(Z):
    """Row-major vec(Z) on any array-API backend."""
    if isinstance(Z, (list, tuple)):
        Z = np.asarray(Z, float)
    return namespace(Z).reshape(Z, (-1,))


FLOW_MAX_STEPS = 5000    # dopri5 steps per tolerance: bounds a draw's time (stiff at large d, N)
