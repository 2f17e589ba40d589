"""Private helpers: forward shooting of Hamilton's equations (§2.4, §3.1, App. A.3), shared by the jacot
claim modules of those sections.

A solution of Hamilton's equations from random ``(A_0, B_0)`` is an exact critical path for the synthetic
target ``A_1 + lambda N/2 B_1`` (catalogue §2, key observation), so pointwise claims are certified without
training.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import leaky
from theorems.claim import Param


def _params(w=6, N=5, Lt=3.0, B_scale=0.1, search_w=(2, 8), search_N=(2, 8)):
    return [
        Param.int("w", w, 1, 32, "width (number of neurons, rows of A_p)", search=search_w),
        Param.int("N", N, 1, 32, "number of data points (columns of A_p)", search=search_N),
        Param.float("Lt", Lt, 1e-6, 50.0, "effective depth L~ (leakage)"
                    " (>= 1e-6: below, not resolved in double precision)", search=(0.5, 10.0)),
        Param.seed("seed of the initial (A_0, B_0)"),
        Param.float("B_scale", B_scale, 0.0, 10.0, "scale of the initial momentum B_0", low_open=True,
                    search=(1e-2, 1.0)),
    ]


def _initial(p):
    rng = np.random.default_rng(p.seed)
    A0 = rng.standard_normal((p.w, p.N))
    B0 = p.B_scale * rng.standard_normal((p.w, p.N))
    return A0, B0


def _shoot(p, variant=0, rtol=1e-11, n_out=100):
    A0, B0 = _initial(p)
    # the integrator is adaptive (control flow): it stays on the CPU; an array-API check (array_api_strict, cupy)
    # shoots with the NumPy integrator, so that its path is the NumPy record's path
    backend = p.backend if p.backend in ("numpy", "numba") else "numpy"
    return leaky.shoot(A0, B0, p.Lt, n_out=n_out, rtol=rtol, atol=rtol * 0.1, backend=backend, variant=variant)


def _sym_H(w, N, signs):
    """Symbolic A (entries a_ij, with relu(a_ij) = a_ij where signs[i][j] > 0 and 0 otherwise), B."""
    a = sp.Matrix(w, N, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
    b = sp.Matrix(w, N, lambda i, j: sp.Symbol(f"b{i}{j}", real=True))
    L = sp.Symbol("L", positive=True)
    R = sp.Matrix(w, N, lambda i, j: a[i, j] if signs[i][j] > 0 else 0)
    S = R.col_join(sp.ones(1, N))
    H = L / 2 * sum(e**2 for e in (b * S.T)) - L * sum(b[i, j] * a[i, j] for i in range(w) for j in range(N))
    mask = sp.Matrix(w, N, lambda i, j: 1 if signs[i][j] > 0 else 0)
    return a, b, L, R, S, H, mask


def _printed_motion(a, b, L, S, R, mask, variant="stated"):
    """The right-hand sides of eq. (1) as printed, dA/dp = L(B sigma^T sigma - A) and
    dB/dp = -L(sigma'(A) * [sigma(A) B^T B] - B) (bias row dropped, catalogue H1), or a perturbed copy."""
    w, N = a.shape
    dA = L * (b * S.T * S - a)
    M = R * (b.T * b)
    m = (lambda i, j: 1) if variant == "no_relu_mask" else (lambda i, j: mask[i, j])
    sB = -1 if variant == "momentum_B_sign" else 1
    dB = -L * sp.Matrix(w, N, lambda i, j: m(i, j) * M[i, j] - sB * b[i, j])
    if variant == "momentum_sign":
        dB = -dB
    return dA, dB


def _t4_matrices():
    """w = N = 2: A, B free, K a free symmetric matrix, G = K + gamma I, A' = L(BK - A) (eq. (1))."""
    L, g = sp.symbols("L gamma", positive=True)
    a = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
    b = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"b{i}{j}", real=True))
    K = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"k{min(i, j)}{max(i, j)}", real=True))
    G = K + g * sp.eye(2)
    Gi = G.inv()
    dA = L * (b * K - a)
    H = L / 2 * (b * K * b.T).trace() - L * (b * a.T).trace()
    ip = lambda X, Y: (X * Gi * Y.T).trace()  # noqa: E731
    return L, g, a, b, K, Gi, dA, H, ip
