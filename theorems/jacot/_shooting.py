"""Private helpers: forward shooting of Hamilton's equations (§2.4, §3.1, App. A.3), shared by the jacot
claim modules of those sections.

A solution of Hamilton's equations from random ``(A_0, B_0)`` is an exact critical path for the synthetic
target ``A_1 + lambda N/2 B_1`` (catalogue §2, key observation), so pointwise claims are certified without
training.
"""

from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from solvers import leaky
from theorems.claim import inconclusive, Param


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


def _on_reached_part(blowup_message, initial, max_total_steps=None, describe=lambda p: f"Lt = {p.Lt:.3g}"):
    """Decorator: run a check of a statement about ANY solution of eq. (1) on the part of the drawn path that exists.

    Eq. (1) depends on p only through Lt p (A' = Lt(B K - A), B' = -Lt(...)), so the path from (A_0, B_0) with depth
    Lt, followed on p in [0, f], is the path with depth f Lt followed on [0, 1]: an instance of the same claim.
    When ``check(p)`` is inconclusive with ``blowup_message`` (the path blew up or turned stiff before p = 1), the
    path ``initial(p)`` is shot once more with ``partial=True`` (50 output points, rtol 1e-11): with k the last
    point reached, the check runs at Lt' = (k/50) Lt, then (k/100) Lt if that still fails; the message and values
    (Lt_checked, p_reached) say so.  Inconclusive when p = 1/50 is not reached (or Lt' < 1e-6, the declared lower
    end of Lt)."""
    def deco(check):
        @functools.wraps(check)
        def run(p):
            out = check(p)
            if out.verdict != "inconclusive" or out.message != blowup_message:
                return out
            A0, B0 = initial(p)
            backend = p.backend if p.backend in ("numpy", "numba") else "numba"  # only locates the blow-up
            Y, _ = leaky.shoot(A0, B0, p.Lt, n_out=50, rtol=1e-11, atol=1e-12, backend=backend,
                               max_total_steps=max_total_steps, partial=True)
            k = len(Y) - 1
            for frac in (k / 50, k / 100):
                if frac * p.Lt < 1e-6:
                    break
                q = p.replace(Lt=p.Lt * frac)
                out = check(q)
                if out.verdict == "inconclusive" and out.message == blowup_message:
                    continue
                out.message += (f" [the drawn path blows up or turns stiff after p = {k / 50:.2f}: checked on p in "
                                f"[0, {frac:.2f}], i.e. the same path with Lt = {q.Lt:.6g} on [0, 1]]")
                out.values["Lt_checked"] = q.Lt
                out.values["p_reached"] = frac
                return out
            return inconclusive(f"the path blows up or turns stiff before p = 1/50 (|B_0| = {np.linalg.norm(B0):.3g}, "
                                f"{describe(p)}): no part of it to check; a smaller B_scale or Lt")
        return run
    return deco


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
