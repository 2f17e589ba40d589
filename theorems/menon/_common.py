"""Shared instance generators for the menon claims (conventions: see the package docstring)."""
from __future__ import annotations

from itertools import combinations

import numpy as np

from solvers import dln
from theorems.claim import ParamError, inconclusive

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


def widths_of(p) -> list[int]:
    """Widths d_0..d_N of a claim with parameters ``d``, ``N`` and an optional ``widths`` override."""
    if p.get("widths") is not None:
        return [int(x) for x in p.widths]
    return [p.d] * (p.N + 1)


def validate_widths(p, min_N: int = 2) -> None:
    """``widths`` (when given) are integers in [1, 8] listing d_0..d_N with min_N <= N <= 8."""
    w = p.get("widths")
    if w is None:
        return
    if np.any(w != np.round(w)) or np.any(w < 1) or np.any(w > 8):
        raise ParamError("parameter widths must be integers in [1, 8]")
    if not min_N + 1 <= len(w) <= 9:
        raise ParamError(f"parameter widths must list d_0..d_N with {min_N} <= N <= 8")


def draw_layers(p, rng: np.random.Generator, widths) -> list:
    """Gaussian layers (G != 0), or a balanced point z(Lambda, Q) when ``p.init == 'balanced'``."""
    if p.get("init", "random") == "balanced":
        if len(set(widths)) != 1:
            raise ParamError("init=balanced needs equal widths")
        d, N = widths[0], len(widths) - 1
        lam = rng.uniform(0.5, 1.3, d)
        return dln.balanced_point(lam, [dln.random_orthogonal(d, rng) for _ in range(N + 1)])
    return dln.random_layers(widths, rng)


MAX_STEPS = 10**6  # a step h with T/h above this is not run: inconclusive, 'take a larger h'


def too_many_steps(T, h, what="h"):
    """The inconclusive outcome for a step so small that T/h exceeds MAX_STEPS (T/h may be inf), else None."""
    n = T / h
    if n > MAX_STEPS:
        return inconclusive(f"{what}={h!r} over T={T!r} needs {n:.3g} steps, more than the {MAX_STEPS:.0e} this "
                            f"check runs; take a larger {what}", steps=n)
    return None
