r"""The linear Momentum ResNet map Psi_eps and its threshold lambda_eps (Sander thesis, ch. 4).

Model (4.7): ``eps x'' + x' = theta x`` on [0, 1], ``(x, x')(0) = (x0, 0)``; Prop 4.3 gives
``x(1) = Psi_eps(theta) x0`` with (kappa := 1/(2 eps))

    Psi_eps(theta) = e^{-kappa} sum_n (1/(2n)! + kappa/(2n+1)!) (theta/eps + I/(4 eps^2))^n.

Conventions (the thesis's, l.3200): ``f_eps(z) = Psi_eps(eps z - 1/(4 eps))``, i.e.

    f_eps(z) = e^{-kappa} sum_n (1/(2n)! + kappa/(2n+1)!) z^n = e^{-kappa} (cosh s + kappa sinh(s)/s),  s^2 = z,
    Psi_eps(theta) = f_eps(theta/eps + I/(4 eps^2))          (``psi_scalar`` for scalars),
    G_eps(alpha)   = f_eps(-alpha^2) = e^{-kappa} (cos alpha + kappa sin(alpha)/alpha)   (main text l.3025;
                     NOT the Lemma 4.6 print, which drops the 1/alpha: erratum E4.1),
    lambda_eps     = min_alpha G_eps(alpha) = min Psi_eps(R),  attained at alpha* in (pi, 3 pi/2).

Every function takes ``eps`` > 0 (a Python/NumPy float; the mpmath and arb versions also accept a
decimal string such as "0.1", read exactly, since the float 0.1 is not 1/10 and lambda_eps moves
by ~kappa * 5.5e-17 relative between the two).  Bad input raises ``ValueError``.

Numerical methods and error models
----------------------------------
* ``f_eps`` (scalar, vectorised, real or complex): |z| <= 4: Horner on the Taylor series (40 terms,
  truncation < 1e-30 relative); real z < -4: ``e^{-kappa} cos a + (kappa e^{-kappa}) sin(a)/a``;
  otherwise ``(1/2)[e^{s-kappa}(1 + kappa/s) + e^{-s-kappa}(1 - kappa/s)]`` with Re s >= 0, the
  exponent combined *before* exponentiating (so cosh s never overflows while e^{-kappa} underflows,
  and the product is formed as exp(x + log c) when |x| > 700).  Error: relative
  ~ u (4 + kappa + |s|) in each of the two exponential terms (the rounding of s - kappa is the
  condition number of e^{s-kappa}); for the *sum* this is an absolute error
  u (4 + kappa + |s|) e^{|Re s| - kappa} (1 + kappa/|s|), which is the intrinsic conditioning of f
  near its zeros.  The result over/underflows only when the true value does (|f| > 1.8e308 or
  < 4.9e-324).
* ``psi_eps`` (real square matrix or a stack of them): ``method="expm"`` (default) returns the
  top-left block of ``scipy.linalg.expm([[0, I], [theta/eps, -I/eps]])`` -- the exact flow of the
  first-order system of the proof (l.3188).  It needs no eigenvectors, so defective/non-normal
  theta (Jordan blocks, Thm 4.7) are handled, and the e^{-kappa} damping is inside the matrix, so no
  overflow*underflow products.  Error: expm's backward error is O(u) relative to ||M||, so the
  forward error is ~ u ||M|| cond, ||M|| ~ max(1, ||theta||)/eps: about 1e-13 relative at eps=1e-3.
  ``method="eig"`` uses V f(Lambda) V^{-1} (cheap, batched) and is accurate only to ~u cond(V);
  it raises ValueError when cond(V) > 1e8.  ``method="series"`` is the printed series of Prop 4.3
  (for moderate ||theta||/eps; used as the statement under test).
* ``lambda_eps`` (float64): Brent on the scaled numerator of G'_eps,
  w(a) = t(-a^2 sin a) + (1-t)(a cos a - sin a), t = 1/(1+kappa)  (w = a^2 e^{kappa} G'(a)/(1+kappa)),
  bracketed by [pi, 3pi/2] (w(pi) < 0 < w(3pi/2) for every kappa > 0), then one Newton step on w.
  alpha* is a simple root (G'' > 0), so it is found to a few ulp; G'(alpha*) = 0 makes lambda
  insensitive to the alpha error (quadratic), and on (pi, 3pi/2) cos and sin are both negative, so
  cos a + kappa sin(a)/a has no cancellation.  e^{-kappa} is evaluated with the rounding of
  kappa = 0.5/eps corrected by an error-free product (Dekker), so the float64 lambda has relative
  error <= ~8 u ~ 2e-15 as long as it is a normal number, i.e. kappa <~ 700 (eps >~ 7.1e-4).
  Below that lambda is subnormal (relative accuracy 4.9e-324/|lambda|) and for kappa >~ 745
  (eps <~ 6.7e-4) it underflows to -0.0: float64 cannot represent it.  ``lambda_eps_log`` returns
  log(-lambda) = -kappa + log(1+kappa) + log|t cos a + (1-t) sin(a)/a| instead, relative error
  ~ u in the O(1) part plus u*kappa absolute, valid for every eps > 0.
* ``lambda_eps_mpmath``: Newton from the float64 root (mpmath ``findroot`` on the bracket as a
  fallback) at dps + 10 + log10(kappa) digits -- e^{-kappa} needs kappa to log10(kappa) extra digits,
  without which eps = 1e-300 returns garbage -- ~dps correct digits (checked against the
  catalogue's 40-digit table).
* ``lambda_eps_arb``: python-flint ball arithmetic.  An interval Newton step
  N(X) = m - w(m)/w'(X) with N(X) inside X proves a unique zero of w (= G'_eps) in X; iterated
  to the working precision.  lambda is enclosed by the mean-value form
  G(m) + G'(X)(X - m) (radius ~ |G''| rad(X)^2), every operation rigorous.  The working precision is
  prec + log2(kappa) bits, so the relative radius stays ~2^-prec down to eps = 1e-300.
  ``certify_global_min_arb`` additionally proves rigorously that this critical value is the global
  minimum of f_eps over R (see its docstring).
"""
from __future__ import annotations

import math
from typing import Tuple

import numpy as np
import scipy.linalg
from scipy.optimize import brentq

__all__ = [
    "kappa_of", "f_eps", "f_eps_prime", "f_eps_series", "psi_scalar", "psi_eps", "psi_eps_series",
    "psi_eps_expm", "G_eps", "G_eps_prime", "G_eps_lemma46_printed", "dG_numerator",
    "lambda_eps", "lambda_eps_log", "lambda_eps_mpmath", "lambda_eps_arb", "certify_global_min_arb",
    "first_zero_G",
]

_U = float(np.finfo(float).eps) / 2          # unit roundoff 1.1e-16
_SERIES_R = 4.0                              # |z| <= 4: Taylor series
_NSERIES = 40                                # 4^40/(80)! ~ 1e-95: truncation negligible
_FACT = [math.factorial(k) for k in range(2 * _NSERIES + 4)]


# ---------------------------------------------------------------------------
# input checking
def _check_eps(eps) -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a real number > 0, got {eps!r}") from None
    if not math.isfinite(e) or e <= 0:
        raise ValueError(f"eps must be a finite real number > 0 (eps = 1/(1-gamma)), got {eps!r}")
    return e


def kappa_of(eps) -> float:
    """kappa = 1/(2 eps) (rounded float64)."""
    return 0.5 / _check_eps(eps)


def _two_prod(a: float, b: float) -> Tuple[float, float]:
    """Dekker/Veltkamp error-free product: a*b = p + e exactly (no FMA in Python 3.11)."""
    p = a * b
    c = 134217729.0  # 2^27 + 1
    ah = a * c; ah = ah - (ah - a); al = a - ah
    bh = b * c; bh = bh - (bh - b); bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _exp_minus_kappa(eps: float) -> Tuple[float, float, float]:
    """(kappa_fl, delta, e^{-kappa_true}) with kappa_true = 0.5/eps = kappa_fl + delta, delta corrected
    via an error-free product so that e^{-kappa} has relative error ~2u, not u*kappa."""
    k = 0.5 / eps
    p, e = _two_prod(eps, k)            # eps*k = p + e exactly
    delta = ((0.5 - p) - e) / eps       # 0.5 - p is exact (Sterbenz), so delta to ~u*|delta|
    return k, delta, math.exp(-k) * (1.0 - delta) if abs(delta) < 1e-8 else math.exp(-k - delta)


def _exp_times(x, c):
    """c * e^x for arrays (real or complex x, c), formed as exp(x + log c) where e^x alone would
    over/underflow although the product need not."""
    x = np.asarray(x)
    c = np.asarray(c)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        direct = c * np.exp(x)
        safe = np.abs(np.real(x)) <= 700
        if np.all(safe):
            return direct
        cz = np.where(c == 0, 1, c)
        logc = np.log(cz.astype(complex)) if (np.iscomplexobj(c) or np.iscomplexobj(x) or np.any(np.real(cz) < 0)) \
            else np.log(cz)
        viaLog = np.exp(x + logc)
        viaLog = np.where(c == 0, 0, viaLog)
        if not (np.iscomplexobj(c) or np.iscomplexobj(x)):
            viaLog = np.real(viaLog)
        return np.where(safe, direct, viaLog)


# ---------------------------------------------------------------------------
# the entire function f_eps
def f_eps_series(z, eps, terms: int = 60):
    """The printed power series e^{-kappa} sum_{n<terms} (1/(2n)! + kappa/(2n+1)!) z^n (reference;
    accurate only for moderate |z|, e.g. |z| <= 50 with 60 terms)."""
    eps = _check_eps(eps)
    k = 0.5 / eps
    z = np.asarray(z)
    acc = np.zeros_like(z, dtype=complex if np.iscomplexobj(z) else float)
    for n in range(terms - 1, -1, -1):
        acc = acc * z + (1.0 / math.factorial(2 * n) + k / math.factorial(2 * n + 1))
    return math.exp(-k) * acc


def _series_coeffs(eps: float, deriv: bool = False):
    k, delta, ek = _exp_minus_kappa(eps)
    # e^{-kappa}/(2n)! + kappa e^{-kappa}/(2n+1)!, with kappa e^{-kappa} = exp(log kappa - kappa) (no 0*inf)
    kek = math.exp(math.log(k) - k - delta) if k > 700 else k * ek
    c = np.array([ek / _FACT[2 * n] + kek / _FACT[2 * n + 1] for n in range(_NSERIES)])
    if deriv:
        c = np.array([n * c[n] for n in range(1, _NSERIES)])
    return c


def f_eps(z, eps):
    r"""f_eps(z) = e^{-kappa}(cosh s + kappa sinh(s)/s), s^2 = z; real or complex z, vectorised.

    Real input gives a real result.  See the module docstring for the method and error model."""
    eps = _check_eps(eps)
    z = np.asarray(z)
    if z.dtype.kind not in "fciub":
        raise ValueError(f"z must be real or complex numbers, got dtype {z.dtype}")
    cplx = np.iscomplexobj(z)
    z = z.astype(complex if cplx else float)
    k, delta, ek = _exp_minus_kappa(eps)
    out = np.empty_like(z)
    small = np.abs(z) <= _SERIES_R
    if np.any(small):
        c = _series_coeffs(eps)
        zs = z[small]
        acc = np.zeros_like(zs)
        for cn in c[::-1]:
            acc = acc * zs + cn
        out[small] = acc
    big = ~small
    if not cplx:
        neg = big & (z < 0)
        if np.any(neg):
            a = np.sqrt(-z[neg])
            kek = math.exp(math.log(k) - k - delta) if k > 700 else k * ek
            out[neg] = ek * np.cos(a) + kek * (np.sin(a) / a)
        big = big & (z > 0)
    if np.any(big):
        s = np.sqrt(z[big].astype(complex))                 # principal root: Re s >= 0
        kt = k + delta
        t1 = _exp_times(s - kt, 0.5 * (1 + k / s))
        t2 = _exp_times(-s - kt, 0.5 * (1 - k / s))
        val = t1 + t2
        out[big] = val if cplx else np.real(val)
    return out if out.ndim else out[()]


def f_eps_prime(z, eps):
    r"""f'_eps(z) = e^{-kappa}[S(z)/2 + kappa (C(z) - S(z))/(2z)], C = cosh s, S = sinh(s)/s."""
    eps = _check_eps(eps)
    z = np.asarray(z)
    cplx = np.iscomplexobj(z)
    z = z.astype(complex if cplx else float)
    k, delta, ek = _exp_minus_kappa(eps)
    out = np.empty_like(z)
    small = np.abs(z) <= _SERIES_R
    if np.any(small):
        c = _series_coeffs(eps, deriv=True)
        zs = z[small]
        acc = np.zeros_like(zs)
        for cn in c[::-1]:
            acc = acc * zs + cn
        out[small] = acc
    big = ~small
    if np.any(big):
        s = np.sqrt(z[big].astype(complex))
        kt = k + delta
        # f' = (1/4)[e^{s-k}(1/s + k/s^2 - k/s^3) + e^{-s-k}(-1/s + k/s^2 + k/s^3)]
        t1 = _exp_times(s - kt, 0.25 * (1 / s + k / s**2 - k / s**3))
        t2 = _exp_times(-s - kt, 0.25 * (-1 / s + k / s**2 + k / s**3))
        val = t1 + t2
        out[big] = val if cplx else np.real(val)
    return out if out.ndim else out[()]


def psi_scalar(theta, eps):
    """Psi_eps for scalars (the 1x1 case): f_eps(theta/eps + 1/(4 eps^2))."""
    eps = _check_eps(eps)
    theta = np.asarray(theta)
    return f_eps(theta / eps + 1.0 / (4 * eps * eps), eps)


def G_eps(alpha, eps):
    r"""G_eps(alpha) = f_eps(-alpha^2) = e^{-kappa}(cos alpha + kappa sin(alpha)/alpha) (l.3025).
    Real alpha: direct formula with np.sinc (no 0/0 at alpha = 0); complex alpha: f_eps(-alpha^2)."""
    eps = _check_eps(eps)
    a = np.asarray(alpha)
    if np.iscomplexobj(a):
        return f_eps(-a * a, eps)
    a = a.astype(float)
    k, delta, ek = _exp_minus_kappa(eps)
    kek = math.exp(math.log(k) - k - delta) if k > 700 else k * ek
    return ek * np.cos(a) + kek * np.sinc(a / np.pi)


def G_eps_prime(alpha, eps):
    """G'_eps(alpha) = e^{-kappa}(-sin a + kappa (a cos a - sin a)/a^2) = -2 a f'_eps(-a^2)."""
    eps = _check_eps(eps)
    a = np.asarray(alpha)
    if np.iscomplexobj(a):
        return -2 * a * f_eps_prime(-a * a, eps)
    a = a.astype(float)
    k, delta, ek = _exp_minus_kappa(eps)
    kek = math.exp(math.log(k) - k - delta) if k > 700 else k * ek
    with np.errstate(invalid="ignore", divide="ignore"):
        # (a cos a - sin a)/a^2 ~ -a/3 near 0
        q = np.where(np.abs(a) < 1e-3, -a / 3 + a**3 / 30, (a * np.cos(a) - np.sin(a)) / np.where(a == 0, 1, a) ** 2)
    return -ek * np.sin(a) + kek * q


def G_eps_lemma46_printed(alpha, eps):
    """The Lemma 4.6 print (l.3273): e^{-kappa}(cos alpha + kappa sin alpha) -- erratum E4.1 (no 1/alpha)."""
    eps = _check_eps(eps)
    a = np.asarray(alpha)
    k = 0.5 / eps
    return math.exp(-k) * (np.cos(a) + k * np.sin(a))


def dG_numerator(alpha, eps):
    """w(a) = [-a^2 sin a + kappa (a cos a - sin a)]/(1 + kappa) = a^2 e^{kappa} G'(a)/(1+kappa)."""
    k = kappa_of(eps)
    t = 1.0 / (1.0 + k)
    a = np.asarray(alpha, dtype=float)
    return t * (-a * a * np.sin(a)) + (1 - t) * (a * np.cos(a) - np.sin(a))


# ---------------------------------------------------------------------------
# matrix function
def _check_theta(theta) -> np.ndarray:
    th = np.asarray(theta)
    if th.dtype.kind not in "fiub":
        raise ValueError(f"theta must be a real matrix, got dtype {th.dtype}")
    if th.ndim < 2 or th.shape[-1] != th.shape[-2]:
        raise ValueError(f"theta must be a square matrix (or a stack of them, shape (..., d, d)), got shape {th.shape}")
    if th.shape[-1] == 0:
        raise ValueError("theta must be at least 1x1")
    th = th.astype(float)
    if not np.all(np.isfinite(th)):
        raise ValueError("theta has non-finite entries")
    return th


def psi_eps_expm(theta, eps):
    """Top-left d x d block of expm([[0, I], [theta/eps, -I/eps]]) (the proof's first-order system)."""
    eps = _check_eps(eps)
    th = _check_theta(theta)
    d = th.shape[-1]
    M = np.zeros(th.shape[:-2] + (2 * d, 2 * d))
    M[..., :d, d:] = np.eye(d)
    M[..., d:, :d] = th / eps
    M[..., d:, d:] = -np.eye(d) / eps
    E = scipy.linalg.expm(M)
    return E[..., :d, :d]


def psi_eps_series(theta, eps, terms: int = 80):
    """The printed series of Prop 4.3, summed (Horner) to ``terms`` terms; reference for moderate
    ||theta/eps + I/(4 eps^2)|| (<= ~50 for full float64 accuracy with 80 terms)."""
    eps = _check_eps(eps)
    th = _check_theta(theta)
    d = th.shape[-1]
    k = 0.5 / eps
    Z = th / eps + np.eye(d) / (4 * eps * eps)
    acc = np.zeros_like(Z)
    for n in range(terms - 1, -1, -1):
        acc = acc @ Z + (1.0 / math.factorial(2 * n) + k / math.factorial(2 * n + 1)) * np.eye(d)
    return math.exp(-k) * acc


def psi_eps(theta, eps, method: str = "expm"):
    r"""Psi_eps(theta) for a real square matrix theta (or a stack (..., d, d)), float64.

    method "expm" (default, robust: any theta, defective included), "eig" (V f(Lambda) V^{-1},
    diagonalisable and well-conditioned theta only), or "series" (the printed Prop 4.3 series)."""
    eps = _check_eps(eps)
    th = _check_theta(theta)
    if method == "expm":
        return psi_eps_expm(th, eps)
    if method == "series":
        return psi_eps_series(th, eps)
    if method == "eig":
        w, V = np.linalg.eig(th)
        cond = np.linalg.cond(V)
        if np.any(~np.isfinite(cond)) or np.any(cond > 1e8):
            raise ValueError("method='eig' needs a diagonalisable theta with well-conditioned eigenvectors "
                             f"(cond(V) = {np.max(cond):.2e} > 1e8); use method='expm'")
        fz = psi_scalar(w.astype(complex), eps)
        R = (V * fz[..., None, :]) @ np.linalg.inv(V)
        return np.real(R)
    raise ValueError(f"method must be 'expm', 'eig' or 'series', got {method!r}")


# ---------------------------------------------------------------------------
# the threshold lambda_eps in float64
def _alpha_star_float(eps: float) -> float:
    k = 0.5 / eps
    t = 1.0 / (1.0 + k)

    def w(a):
        return t * (-a * a * math.sin(a)) + (1 - t) * (a * math.cos(a) - math.sin(a))

    def dw(a):   # derivative of w: -a [t (2 sin a + a cos a) + (1-t) sin a]
        return -a * (t * (2 * math.sin(a) + a * math.cos(a)) + (1 - t) * math.sin(a))

    a = brentq(w, math.pi, 1.5 * math.pi, xtol=1e-300, rtol=4 * _U * 2, maxiter=200)
    step = w(a) / dw(a)
    if abs(step) < 1e-10:
        a -= step
    return a


def lambda_eps(eps) -> Tuple[float, float]:
    """(lambda_eps, alpha*) in float64; relative error <= ~8u while lambda is a normal float
    (eps >~ 7.1e-4); subnormal / -0.0 below (use lambda_eps_log there)."""
    eps = _check_eps(eps)
    a = _alpha_star_float(eps)
    k, delta, ek = _exp_minus_kappa(eps)
    if k > 700:
        logm, _ = lambda_eps_log(eps)
        return -math.exp(logm), a
    lam = ek * (math.cos(a) + (k + delta) * math.sin(a) / a)
    return lam, a


def lambda_eps_log(eps) -> Tuple[float, float]:
    """(log(-lambda_eps), alpha*) in float64, valid for every eps > 0 (no underflow)."""
    eps = _check_eps(eps)
    a = _alpha_star_float(eps)
    k, delta, _ = _exp_minus_kappa(eps)
    t = 1.0 / (1.0 + k)
    g = t * math.cos(a) + (1 - t) * math.sin(a) / a          # < 0 on (pi, 3pi/2)
    return -(k + delta) + math.log1p(k) + math.log(-g), a


def first_zero_G(eps) -> float:
    """alpha_0: the first positive zero of G_eps (in (pi/2, pi)); Psi_eps(-eps a0^2 - 1/(4eps)) = 0."""
    k = kappa_of(eps)
    t = 1.0 / (1.0 + k)
    return brentq(lambda a: t * a * math.cos(a) + (1 - t) * math.sin(a), 0.5 * math.pi, math.pi,
                  xtol=1e-300, rtol=8 * _U)


# ---------------------------------------------------------------------------
# mpmath
def _mp_eps(eps, mp):
    if isinstance(eps, str):
        e = mp.mpf(eps)
    else:
        e = mp.mpf(_check_eps(eps))
    if not e > 0:
        raise ValueError(f"eps must be > 0, got {eps!r}")
    return e


def lambda_eps_mpmath(eps, dps: int = 40):
    """(lambda_eps, alpha*) as mpmath mpf with ~dps correct digits (computed at dps+10).
    ``eps`` may be a decimal string ("0.1") to mean the exact decimal."""
    import mpmath as mpm
    if not (isinstance(dps, int) and 5 <= dps <= 10000):
        raise ValueError(f"dps must be an integer in [5, 10000], got {dps!r}")
    # e^{-kappa} needs kappa to dps + log10(kappa) digits: add them (tiny eps)
    extra = max(0, int(math.ceil(math.log10(0.5 / _check_eps(float(eps)))))) if float(eps) < 0.5 else 0
    with mpm.workdps(dps + 10 + extra):
        e = _mp_eps(eps, mpm.mp)
        k = 1 / (2 * e)

        def w(a):
            return -a * a * mpm.sin(a) + k * (a * mpm.cos(a) - mpm.sin(a))

        def dw(a):
            return -a * (2 * mpm.sin(a) + a * mpm.cos(a) + k * mpm.sin(a))

        a0 = mpm.mpf(_alpha_star_float(float(e)))
        a = mpm.findroot(w, (mpm.pi, 1.5 * mpm.pi), solver="anderson") if not (mpm.pi < a0 < 1.5 * mpm.pi) else a0
        for _ in range(60):           # Newton from the float64 root: quadratic, ~4 steps to dps+10
            step = w(a) / dw(a)
            a -= step
            if abs(step) < mpm.mpf(10) ** (-(dps + 8 + extra)) * a:
                break
        if not (mpm.pi < a < 1.5 * mpm.pi):
            raise ArithmeticError("Newton left the bracket (pi, 3pi/2)")
        lam = mpm.exp(-k) * (mpm.cos(a) + k * mpm.sin(a) / a)
        return +lam, +a


# ---------------------------------------------------------------------------
# python-flint ball arithmetic
def _arb_eps(eps, arb):
    if isinstance(eps, str):
        e = arb(eps)
    else:
        e = arb(_check_eps(eps))
    if not e > 0:
        raise ValueError(f"eps must be > 0, got {eps!r}")
    return e


def _arb_parts(eps, prec):
    """Set the arb precision to prec + log2(kappa) bits (e^{-kappa} needs kappa to that many bits for a
    relative radius ~2^-prec) and return (arb, eps ball, kappa ball)."""
    import flint
    ctx = flint.ctx
    old = ctx.prec
    k = 0.5 / _check_eps(float(eps))
    ctx.prec = prec + (int(math.ceil(math.log2(k))) + 4 if k > 1 else 0)
    try:
        arb = flint.arb
        e = _arb_eps(eps, arb)
        return arb, e, 1 / (2 * e)
    except Exception:
        ctx.prec = old
        raise


def lambda_eps_arb(eps, prec: int = 200):
    """Certified enclosure (arb lam, arb alpha*) by interval Newton on w = a^2 e^kappa G'_eps(a).

    Raises ArithmeticError if the interval Newton inclusion cannot be established (it then proves
    nothing).  Every radius is rigorous (python-flint/Arb ball arithmetic at ``prec`` bits)."""
    import flint
    if not (isinstance(prec, int) and 53 <= prec <= 100000):
        raise ValueError(f"prec must be an integer in [53, 100000] bits, got {prec!r}")
    old = flint.ctx.prec
    try:
        arb, e, k = _arb_parts(eps, prec)

        def w(a):
            s, c = a.sin(), a.cos()
            return -a * a * s + k * (a * c - s)

        def dw(a):
            s, c = a.sin(), a.cos()
            return -a * (2 * s + a * c + k * s)

        a0 = _alpha_star_float(float(e.mid()))
        X = arb(a0, 1e-6)
        proved = False
        for _ in range(100):
            m = arb(X.mid())
            N = m - w(m) / dw(X)
            if not N.is_finite():
                raise ArithmeticError("interval Newton: w' contains 0 on the ball")
            if X.contains(N):
                proved = True          # N(X) in X: exactly one zero of w in X (w' != 0 on X)
            elif X.overlaps(N):
                N = N.intersection(X)  # any zero in X lies in N(X) as well
            else:
                raise ArithmeticError("interval Newton: N(X) and X are disjoint, no zero in X")
            done = proved and N.rad() >= 0.5 * X.rad()
            X = N
            if done:
                break
        if not proved:
            raise ArithmeticError("interval Newton inclusion N(X) in X was never established")
        if not (X > arb.pi() and X < 1.5 * arb.pi()):
            raise ArithmeticError("enclosure of alpha* is not inside (pi, 3pi/2)")

        def G(a):
            return (-k).exp() * (a.cos() + k * a.sinc())

        def dG(a):
            s, c = a.sin(), a.cos()
            return (-k).exp() * (-s + k * (a * c - s) / (a * a))

        m = arb(X.mid())
        lam = G(m) + dG(X) * (X - m)               # mean-value form: rigorous, radius ~ |G''| rad(X)^2
        lam = lam.intersection(G(X)) if lam.overlaps(G(X)) else lam
        return lam, X
    finally:
        flint.ctx.prec = old


def certify_global_min_arb(eps, prec: int = 120, max_boxes: int = 20000):
    r"""Rigorous proof that min_{z in R} f_eps(z) = G_eps(alpha*) (the enclosure of lambda_eps_arb).

    * z >= 0: f_eps(z) = e^{-kappa}(cosh s + kappa sinh(s)/s) >= e^{-kappa}(1+kappa) > 0 > lambda.
    * z = -a^2, a >= L: |G(a)| <= e^{-kappa} sqrt(1 + kappa^2/a^2) (Cauchy-Schwarz), and
      L := kappa / sqrt(lambda_hi^2 e^{2 kappa} - 1) makes this < |lambda_hi|, so G > lambda there.
    * U = [alpha* - rho, alpha* + rho]: G'' > 0 on U (ball evaluation) and the unique critical point
      is alpha* (interval Newton), so G >= G(alpha*) on U.
    * [0, L] minus U: adaptive bisection until each box I has lower(G(I)) > upper(lambda).
    Returns a dict (proved: bool, boxes, L, rho, lambda as str).  G is even, so alpha >= 0 suffices.
    """
    import flint
    old = flint.ctx.prec
    try:
        lam, X = lambda_eps_arb(eps, prec)
        arb, e, k = _arb_parts(eps, prec)
        ek = (-k).exp()
        lam_hi = arb(lam.upper())

        def G(a):
            return ek * (a.cos() + k * a.sinc())

        def d2G(a):
            # G'' = e^{-k}(-cos a + k * sinc''(a)), sinc'' = (-a^2 sin a - 2a cos a + 2 sin a)/a^3
            s, c = a.sin(), a.cos()
            return ek * (-c + k * (-a * a * s - 2 * a * c + 2 * s) / (a * a * a))

        q = lam_hi * lam_hi * (2 * k).exp() - 1
        if not q > 0:
            return {"proved": False, "why": "lambda_hi^2 e^{2 kappa} - 1 not certified > 0", "lambda": lam.str(20)}
        L = arb((k / q.sqrt()).upper())
        rho = 0.25
        while rho > 1e-6:
            U = arb(X.mid(), rho)
            if d2G(U) > 0:
                break
            rho /= 2
        else:
            return {"proved": False, "why": "no convex neighbourhood of alpha* found", "lambda": lam.str(20)}
        lo_u, hi_u = float(X.mid()) - rho, float(X.mid()) + rho
        stack = [(0.0, float(L.upper()) + 1e-9)]
        boxes = 0
        while stack:
            a, b = stack.pop()
            if a >= lo_u and b <= hi_u:
                continue
            if a < lo_u < b:
                stack += [(a, lo_u), (lo_u, b)]
                continue
            if a < hi_u < b:
                stack += [(a, hi_u), (hi_u, b)]
                continue
            boxes += 1
            if boxes > max_boxes:
                return {"proved": False, "why": f"more than {max_boxes} boxes", "lambda": lam.str(20)}
            I = arb((a + b) / 2, (b - a) / 2)
            if G(I) > lam_hi:
                continue
            stack += [(a, (a + b) / 2), ((a + b) / 2, b)]
        return {"proved": True, "boxes": boxes, "L": float(L.upper()), "rho": rho, "lambda": lam.str(25)}
    finally:
        flint.ctx.prec = old
