"""Runge-Kutta integrators: explicit fixed-step family, an embedded adaptive pair, and the
implicit midpoint rule.  Each exists as a NumPy reference (any Python right-hand side)
and as a Numba kernel (a jitted right-hand side ``f(t, y, args) -> dy``).

Error models (stated once, used by the claims):

* explicit fixed step of order ``q``: global error ``O(h**q)``; the claims estimate it
  by step doubling, ``|y_h - y_{h/2}| * 2**q / (2**q - 1)``.
* Dormand-Prince 5(4) (``adaptive``): local error per step kept below
  ``atol + rtol * |y|`` (mixed norm); global error is that times a stability factor of
  order ``exp(L T)``, which the claims bound by comparing two tolerances.
* implicit midpoint (Gauss-Legendre, order 2): conserves every quadratic invariant
  exactly (Cooper 1987); the only defect is rounding plus the fixed-point iteration
  tolerance, ``~ n_steps * (eps + iter_tol) * |invariant|``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["TABLEAUX", "rk_fixed", "rk_fixed_numpy", "dopri5", "dopri5_numpy",
           "implicit_midpoint", "implicit_midpoint_numpy"]

# Butcher tableaux (A strictly lower triangular, b weights, c nodes, order)
TABLEAUX = {
    "euler": (np.zeros((1, 1)), np.array([1.0]), np.array([0.0]), 1),
    "heun": (np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5]), np.array([0.0, 1.0]), 2),
    "midpoint": (np.array([[0.0, 0.0], [0.5, 0.0]]), np.array([0.0, 1.0]), np.array([0.0, 0.5]), 2),
    "rk3": (np.array([[0, 0, 0], [0.5, 0, 0], [-1.0, 2.0, 0]]), np.array([1 / 6, 2 / 3, 1 / 6]),
            np.array([0.0, 0.5, 1.0]), 3),
    "rk4": (np.array([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1.0, 0]]),
            np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]), np.array([0.0, 0.5, 0.5, 1.0]), 4),
}


def tableau(name: str):
    try:
        return TABLEAUX[name]
    except KeyError:
        raise ValueError(f"unknown Runge-Kutta method {name!r} (known: {', '.join(TABLEAUX)})") from None


# ---------------------------------------------------------------------------
# fixed step
def rk_fixed_numpy(f, t0: float, y0, h: float, n: int, args=(), method: str = "rk4",
                   every: int = 0):
    """``n`` explicit steps of size ``h``; returns the final state (and the states every
    ``every`` steps, the initial one included, when ``every > 0``)."""
    A, b, c, _ = tableau(method)
    s = len(b)
    y = np.array(y0, dtype=float)
    t = float(t0)
    traj = [y.copy()] if every else None
    K = np.empty((s, y.size))
    for i in range(n):
        for j in range(s):
            yj = y + h * (A[j, :j] @ K[:j]) if j else y
            K[j] = f(t + c[j] * h, yj, *args)
        y = y + h * (b @ K)
        t += h
        if every and (i + 1) % every == 0:
            traj.append(y.copy())
    return (y, np.array(traj)) if every else y


@njit(cache=True)
def _rk_fixed(f, t0, y0, h, n, args, A, b, c, every):
    s = b.shape[0]
    m = y0.shape[0]
    y = y0.copy()
    t = t0
    K = np.empty((s, m))
    nout = n // every + 1 if every > 0 else 1
    traj = np.empty((nout, m))
    traj[0] = y
    k = 1
    for i in range(n):
        for j in range(s):
            yj = y.copy()
            for l in range(j):
                if A[j, l] != 0.0:
                    yj += h * A[j, l] * K[l]
            K[j] = f(t + c[j] * h, yj, args)
        for j in range(s):
            if b[j] != 0.0:
                y += h * b[j] * K[j]
        t += h
        if every > 0 and (i + 1) % every == 0:
            traj[k] = y
            k += 1
    return y, traj


def call_cached(kernel, *args):
    """Call a ``cache=True`` kernel that takes a jitted function as an argument.

    Numba keys such a kernel's disk cache by the function argument's type, which holds a weak
    reference to its dispatcher; once the index lists a function that is gone from this process,
    saving any new specialization fails with ``ReferenceError: underlying object has vanished``
    (numba issues #2956, #9348).  The compiled overload is already in memory when the save fails, so
    the call is repeated once: only the disk cache of that one specialization is lost."""
    try:
        return kernel(*args)
    except ReferenceError:
        return kernel(*args)


def rk_fixed(f, t0: float, y0, h: float, n: int, args=(), method: str = "rk4", every: int = 0):
    """Numba kernel of :func:`rk_fixed_numpy`; ``f`` must be ``@njit`` with signature ``f(t, y, args)``."""
    A, b, c, _ = tableau(method)
    y, traj = call_cached(_rk_fixed, f, float(t0), np.ascontiguousarray(y0, dtype=np.float64), float(h), int(n),
                        args, A, b, c, int(every))
    return (y, traj) if every else y


# ---------------------------------------------------------------------------
# Dormand-Prince 5(4)
_DP_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_DP_A = np.array([
    [0, 0, 0, 0, 0, 0, 0],
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
])
_DP_B = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_DP_E = _DP_B - np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])


def dopri5_numpy(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
                 h0: float = 1e-3, max_steps: int = 1_000_000):
    """Adaptive Dormand-Prince 5(4) from t0 to t1; returns (y(t1), accepted steps, rejected steps)."""
    y = np.array(y0, dtype=float)
    t, h = float(t0), float(h0)
    K = np.empty((7, y.size))
    acc = rej = 0
    K[0] = f(t, y, *args)
    while t < t1 and acc + rej < max_steps:
        h = min(h, t1 - t)
        for j in range(1, 7):
            K[j] = f(t + _DP_C[j] * h, y + h * (_DP_A[j, :j] @ K[:j]), *args)
        ynew = y + h * (_DP_B @ K)
        err = h * (_DP_E @ K)
        sc = atol + rtol * np.maximum(np.abs(y), np.abs(ynew))
        en = np.sqrt(np.mean((err / sc) ** 2))
        if en <= 1.0:
            t += h
            y = ynew
            K[0] = K[6]
            acc += 1
        else:
            rej += 1
        h *= min(5.0, max(0.2, 0.9 * (en if en > 0 else 1e-10) ** -0.2))
    if t < t1:
        raise RuntimeError(f"dopri5 did not reach t1={t1} in {max_steps} steps (t={t})")
    return y, acc, rej


@njit(cache=True)
def _dopri5(f, t0, y0, t1, args, rtol, atol, h0, max_steps, C, A, B, E):
    m = y0.shape[0]
    y = y0.copy()
    t = t0
    h = h0
    K = np.empty((7, m))
    acc = 0
    rej = 0
    K[0] = f(t, y, args)
    while t < t1 and acc + rej < max_steps:
        if h > t1 - t:
            h = t1 - t
        for j in range(1, 7):
            yj = y.copy()
            for l in range(j):
                if A[j, l] != 0.0:
                    yj += h * A[j, l] * K[l]
            K[j] = f(t + C[j] * h, yj, args)
        ynew = y.copy()
        s = 0.0
        for i in range(m):
            acc_i = 0.0
            err_i = 0.0
            for j in range(7):
                acc_i += B[j] * K[j, i]
                err_i += E[j] * K[j, i]
            ynew[i] = y[i] + h * acc_i
            sc = atol + rtol * max(abs(y[i]), abs(ynew[i]))
            s += (h * err_i / sc) ** 2
        en = np.sqrt(s / m)
        if en <= 1.0:
            t += h
            y = ynew
            K[0] = K[6]
            acc += 1
        else:
            rej += 1
        fac = 0.9 * (en if en > 0 else 1e-10) ** -0.2
        h *= min(5.0, max(0.2, fac))
    return y, acc, rej, t


def dopri5(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
           h0: float = 1e-3, max_steps: int = 1_000_000):
    """Numba kernel of :func:`dopri5_numpy` (same step-size controller, same results)."""
    y, acc, rej, t = call_cached(_dopri5, f, float(t0), np.ascontiguousarray(y0, dtype=np.float64), float(t1), args,
                             float(rtol), float(atol), float(h0), int(max_steps), _DP_C, _DP_A, _DP_B, _DP_E)
    if t < t1:
        raise RuntimeError(f"dopri5 did not reach t1={t1} in {max_steps} steps (t={t})")
    return y, acc, rej


# ---------------------------------------------------------------------------
# implicit midpoint
def implicit_midpoint_numpy(f, t0: float, y0, h: float, n: int, args=(), tol: float = 2e-15,
                            max_iter: int = 100):
    """Implicit midpoint rule by fixed-point iteration (contractive when h * Lip(f) < 2).
    Returns (y_n, largest number of iterations a step needed)."""
    y = np.array(y0, dtype=float)
    t = float(t0)
    worst = 0
    for _ in range(n):
        z = y + h * f(t + h / 2, y, *args)
        for it in range(max_iter):
            znew = y + h * f(t + h / 2, (y + z) / 2, *args)
            delta = np.max(np.abs(znew - z))
            z = znew
            if delta <= tol * max(1.0, np.max(np.abs(z))):
                break
        else:
            raise RuntimeError("implicit midpoint: fixed-point iteration did not converge; reduce h")
        worst = max(worst, it + 1)
        y = z
        t += h
    return y, worst


@njit(cache=True)
def _implicit_midpoint(f, t0, y0, h, n, args, tol, max_iter):
    y = y0.copy()
    t = t0
    worst = 0
    for _ in range(n):
        z = y + h * f(t + h / 2, y, args)
        ok = False
        for it in range(max_iter):
            znew = y + h * f(t + h / 2, 0.5 * (y + z), args)
            delta = np.max(np.abs(znew - z))
            z = znew
            if delta <= tol * max(1.0, np.max(np.abs(z))):
                ok = True
                break
        if not ok:
            return y, -1
        if it + 1 > worst:
            worst = it + 1
        y = z
        t += h
    return y, worst


def implicit_midpoint(f, t0: float, y0, h: float, n: int, args=(), tol: float = 2e-15,
                      max_iter: int = 100):
    """Numba kernel of :func:`implicit_midpoint_numpy`."""
    y, worst = call_cached(_implicit_midpoint, f, float(t0), np.ascontiguousarray(y0, dtype=np.float64), float(h),
                                  int(n), args, float(tol), int(max_iter))
    if worst < 0:
        raise RuntimeError("implicit midpoint: fixed-point iteration did not converge; reduce h")
    return y, worst
