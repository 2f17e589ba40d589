"""Shared instance generators for the menon claims (conventions: see the package docstring)."""
from __future__ import annotations

from itertools import combinations

import numpy as np

from solvers import dln

EPS = float(np.finfo(float).eps)


def rng_for(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def balanced_instance(d: int, N: int, seed: int, lam_range=(0.5, 1.8), zeros: int = 0, min_gap: float = 0.05):
    """A point of the balanced variety M_0 through the parametrisation z (5.15)-(5.16).

    Returns ``(lam, Qs, Ws)`` with ``lam`` sorted decreasingly (gaps >= min_gap among the
    nonzero entries), ``Qs = [Q_N, ..., Q_0]`` Haar orthogonal, ``Ws = [W_N, ..., W_1]``.
    ``zeros`` trailing entries of ``lam`` are set to 0 (rank d - zeros)."""
    rng = rng_for(seed)
    r = d - zeros
    for _ in range(1000):
        lam = np.sort(rng.uniform(*lam_range, r))[::-1]
        if r < 2 or np.min(-np.diff(lam)) >= min_gap:
            break
    lam = np.concatenate([lam, np.zeros(zeros)])
    Qs = [dln.random_orthogonal(d, rng) for _ in range(N + 1)]
    return lam, Qs, dln.balanced_point(lam, Qs)


def pairs(d: int):
    return list(combinations(range(d), 2))


def alpha(d: int, k: int, l: int) -> np.ndarray:
    """Frobenius-orthonormal basis element of so(d): (e_k e_l^T - e_l e_k^T)/sqrt(2) (8.7)."""
    a = np.zeros((d, d))
    a[k, l] = 1 / np.sqrt(2)
    a[l, k] = -1 / np.sqrt(2)
    return a


def vec(Ws) -> np.ndarray:
    return np.concatenate([np.asarray(w).ravel() for w in Ws])


def rel(a, b) -> float:
    """|a - b| / max(|b|, tiny) in the Frobenius / absolute norm."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))
