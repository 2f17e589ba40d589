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


# ---------------------------------------------------------------------------
# Cost model of the Monte-Carlo checks (sweeps draw paths, T and dt over their whole declared ranges, so the
# requested work paths * T/dt * (cost of one path-step) is unbounded; a draw must finish well inside the sweep's
# 60 s timeout on a shared 2-core machine).
MC_BUDGET_S = 10.0   # estimated seconds of simulation one numeric check may spend (measured constants below)
MC_MIN_PATHS = 30    # fewest paths a capped run keeps: K_SE standard errors are still estimated from >= 30 paths


def mc_paths(p, steps: int, ns_per_path_step: float, us_per_step: float = 20.0, *, runs: float = 1.0,
             min_paths: int = MC_MIN_PATHS, budget_s: float = MC_BUDGET_S):
    """Paths a Monte-Carlo check may run: ``(paths, None)`` or ``(None, inconclusive outcome)``.

    Cost model (constants measured per kernel on the development machine, 2025-11, rounded up):
    seconds = runs * steps * (us_per_step * 1e-6 + paths * ns_per_path_step * 1e-9).  When the requested paths
    do not fit ``budget_s`` they are reduced to the largest count that does; every tolerance of the checks is
    computed from the paths actually simulated (standard errors, binomial errors), so a capped check is weaker
    but still able to fail.  When even ``min_paths`` paths do not fit, the draw is inconclusive: the step count
    T/dt itself is beyond what the check runs."""
    per_path = runs * steps * ns_per_path_step * 1e-9
    fixed = runs * steps * us_per_step * 1e-6
    cap = int((budget_s - fixed) / per_path) if budget_s > fixed else 0
    if cap >= p.paths:
        return int(p.paths), None
    floor = min(min_paths, int(p.paths))
    if cap >= floor:
        return cap, None
    return None, inconclusive(
        f"T/dt = {steps} Euler-Maruyama steps with {floor} paths would take ~{fixed + floor * per_path:.0f} s by the "
        f"cost model (budget {budget_s:.0f} s): take a larger dt or a shorter T", steps=steps,
        paths_requested=int(p.paths), estimated_seconds=fixed + floor * per_path)


def with_paths(outcome, requested: int, used: int):
    """Record the requested and simulated path counts on a check's outcome."""
    vals = getattr(outcome, "values", None)
    if isinstance(vals, dict):
        vals["paths_requested"] = int(requested)
        vals["paths_used"] = int(used)
    return outcome
