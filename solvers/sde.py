"""Euler-Maruyama for Ito SDEs dX = b(X) dt + sigma(X) dB, batched over paths.

Error model: strong order 1/2 (pathwise error ~ sqrt(dt)) for multiplicative noise,
weak order 1 (bias of moments ~ dt); Monte-Carlo error of a mean over ``paths``
samples ~ std / sqrt(paths).  Claims state the tolerance as
``k * std/sqrt(paths) + C * dt`` with k and C written next to the check.
"""
from __future__ import annotations

import numpy as np
from .specialise import RHS, kernel

__all__ = ["euler_maruyama", "euler_maruyama_numba"]


def euler_maruyama(drift, noise, x0, dt: float, n: int, rng: np.random.Generator, every: int = 0):
    """NumPy reference.  ``x0`` has shape (paths, ...); ``drift(x) -> same shape``;
    ``noise(x, dB) -> increment`` where ``dB`` are standard normals * sqrt(dt) of x's shape.
    Returns the final states (and snapshots every ``every`` steps when ``every > 0``)."""
    x = np.array(x0, dtype=float)
    sq = np.sqrt(dt)
    snaps = [x.copy()] if every else None
    for i in range(n):
        dB = rng.standard_normal(x.shape) * sq
        x = x + drift(x) * dt + noise(x, dB)
        if every and (i + 1) % every == 0:
            snaps.append(x.copy())
    return (x, np.array(snaps)) if every else x


def _em_loop(x0, dt, n, seed, args):
    np.random.seed(seed)
    paths, m = x0.shape
    x = x0.copy()
    sq = np.sqrt(dt)
    dB = np.empty(m)
    for k in range(paths):
        for i in range(n):
            for j in range(m):
                dB[j] = np.random.standard_normal() * sq
            x[k] = x[k] + RHS(x[k], dB, dt, args)
    return x


def euler_maruyama_numba(step, x0, dt: float, n: int, seed: int, args=()):
    """Numba kernel: ``step(x, dB, dt, args) -> b(x) dt + sigma(x) dB`` (``@njit``), paths of
    shape (paths, m).  Uses Numba's own generator seeded with ``seed`` (not NumPy's stream),
    so it agrees with the reference in distribution, not path by path.  Cached on disk when ``step``
    is registered (:func:`solvers.specialise.register`); otherwise compiled in every process."""
    return kernel(_em_loop, step)(np.ascontiguousarray(x0, dtype=np.float64), float(dt), int(n), int(seed), args)
