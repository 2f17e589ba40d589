r"""Preimages of the entire function f_eps of the linear Momentum ResNet (Sander thesis, ch. 4, App. 4.A.3):
f_eps in complex double, its real and non-real preimages, and the Taylor coefficients of its local inverse
branches by series reversion -- the building blocks of :mod:`solvers.psi_representable`'s decision procedure.

Model (4.7) and conventions: the docstring of :mod:`solvers.psi_representable`.
"""
from __future__ import annotations

import cmath
import math

import numpy as np
from scipy.optimize import brentq

from solvers.psi_eps import f_eps, f_eps_prime, lambda_eps


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
