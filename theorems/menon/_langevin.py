"""Helpers shared by the menon modules sec10_langevin, sec11_1_dyson, sec11_isospectral_and_sphere.

Stochastic error model (every claim of the Sections 10-11 modules; catalogue menon §5.3): wherever possible
the check is an *exact moment identity of the Euler-Maruyama scheme itself* -- the continuum
identity plus an O(dt) correction written out in closed form or accumulated along the
simulated paths -- so the only statistical error is the Monte-Carlo standard error and the
tolerance is ``K_SE * SE`` (``K_SE = 5``: a two-sided Gaussian tail of 6e-7 per checked
mean).  Where only an order is known (pathwise O(sqrt(dt)) strong error, O(dt) weak error)
the constant is derived next to the check.  Hermitian matrices carry the norm
``|M|^2 = Tr(M^* M)`` and the Wiener process ``H`` on ``Her_d`` has i.i.d. standard Gaussian
coordinates in a Frobenius-orthonormal basis, so ``E|dH_ij|^2 = dt`` off the diagonal
(footnote 5: this is what makes the drift of (11.1) come out with coefficient one).

Cost model (every numeric check here): sweeps draw paths, T and dt over the declared ranges, so the work
paths * T/dt * (cost of a path-step) is unbounded.  ``_common.mc_paths`` estimates the seconds from constants
measured per kernel and caps the paths to fit a budget; every standard error is computed from the paths actually
run (recorded as paths_used), so a capped check is weaker but still able to fail.  Where even the minimum
number of paths does not fit, the draw is inconclusive ('take a larger dt or a shorter T').
"""
from __future__ import annotations

import math

import numpy as np

from solvers import rk
from theorems.claim import Param
from theorems.menon._common import rng_for as _rng  # the document's one seeded generator


K_SE = 5.0     # standard errors allowed for a Monte-Carlo mean (two-sided tail 6e-7)


# ---------------------------------------------------------------------------
# shared helpers
def _weyl_point(d, seed, width=None, min_gap=0.6):
    """A point of the Weyl chamber x_1 < ... < x_d with gaps >= min_gap (seeded)."""
    rng = _rng(seed)
    width = width or 1.2 * d
    for _ in range(10_000):
        x = np.sort(rng.uniform(-width / 2, width / 2, d)) + rng.uniform(-0.3, 0.3)
        if d < 2 or np.min(np.diff(x)) >= min_gap:
            return x
    return (np.arange(d) - (d - 1) / 2) * min_gap * 1.5  # pragma: no cover


def _repulsion(x):
    """sum_{j != i} 1/(x_i - x_j) for x of shape (..., d)."""
    diff = x[..., :, None] - x[..., None, :]
    d = x.shape[-1]
    diff = diff + np.eye(d)  # the diagonal is masked below
    inv = 1.0 / diff
    inv = inv * (1.0 - np.eye(d))
    return inv.sum(axis=-1)


def _random_unitary(d, rng, real=False):
    G = rng.standard_normal((d, d)) + (0 if real else 1j * rng.standard_normal((d, d)))
    Q, R = np.linalg.qr(G)
    ph = np.diagonal(R) / np.abs(np.diagonal(R))
    return Q * ph


def _her_increment(rng, paths, d, dt, real=False):
    """Wiener increments on (Her_d, Tr M*M) (or Sym_d when real): standard Gaussian coordinates
    in a Frobenius-orthonormal basis, so Var(dH_ii) = dt and E|dH_ij|^2 = dt (Hermitian) or
    Var(dH_ij) = dt/2 (real symmetric)."""
    if real:
        G = rng.standard_normal((paths, d, d))
        return (G + np.swapaxes(G, 1, 2)) * (0.5 * math.sqrt(dt))
    G = rng.standard_normal((paths, d, d)) + 1j * rng.standard_normal((paths, d, d))
    return (G + np.conj(np.swapaxes(G, 1, 2))) * (0.5 * math.sqrt(dt))


def _split(M, dH):
    """(P_M dH, P_M^perp dH, eigenvalues of M): P^perp projects onto the commutant of M (the
    normal space of the isospectral orbit), P = 1 - P^perp onto T_M O_x = {[A, M]}."""
    lam, U = np.linalg.eigh(M)
    Uh = np.conj(np.swapaxes(U, 1, 2))
    D = np.einsum("pii->pi", Uh @ dH @ U)
    nor = (U * D[:, None, :]) @ Uh
    return dH - nor, nor, lam


def _matrix_em(x0, U0, dt, n, rng, tan, nor, damp=0.0, real=False, paths=200):
    """Euler-Maruyama of dM = -damp M dt + tan P_M dH + nor P_M^perp dH from M_0 = U0 diag(x0) U0^*
    for ``paths`` paths.  Returns (M_T, eigenvalues of M_T, number of steps)."""
    M0 = (U0 * x0) @ np.conj(U0.T)
    M = np.broadcast_to(M0, (paths,) + M0.shape).copy()
    if real:
        M = M.real.copy()
    for _ in range(n):
        dH = _her_increment(rng, paths, len(x0), dt, real)
        Pt, Pn, _ = _split(M, dH)
        M = M - damp * dt * M + tan * Pt + nor * Pn
    return M, np.linalg.eigvalsh(M)


def _ode(x0, T, c=1.0, a=0.0):
    """x' = -a x + c sum_j 1/(x_i - x_j) by adaptive Dormand-Prince (rtol 1e-11)."""
    def f(t, y):
        return -a * y + c * _repulsion(y)
    res = rk.solve_dopri5(f, 0.0, np.asarray(x0, float), T, rtol=1e-11, atol=1e-13, backend="numpy")
    if not res.success:
        raise RuntimeError(res.message)
    return res.y


def _paths_param(default, lo=50, hi=20_000):
    return Param.int("paths", default, lo, hi, "Monte-Carlo paths")


# ===========================================================================
# Thm 15  Dyson BM via tangential / normal splitting on Her_d
def _orbit_frames(M, real=False):
    """Linear map J: orthonormal coordinates of the Lie algebra (u(d), or so(d) when real) -> orthonormal
    coordinates of Her_d (Sym_d), J c = [A(c), M]; also the basis matrices of the algebra."""
    d = M.shape[0]
    basis = []
    for i in range(d):
        for j in range(i + 1, d):
            E = np.zeros((d, d), complex)
            E[i, j], E[j, i] = 1 / math.sqrt(2), -1 / math.sqrt(2)
            basis.append(E)
            if not real:
                F = np.zeros((d, d), complex)
                F[i, j] = F[j, i] = 1j / math.sqrt(2)
                basis.append(F)
        if not real:
            G = np.zeros((d, d), complex)
            G[i, i] = 1j
            basis.append(G)
    J = np.array([_her_coords(A @ M - M @ A, real) for A in basis]).T
    return J, basis


def _her_coords(H, real=False):
    d = H.shape[0]
    iu = np.triu_indices(d, 1)
    parts = [np.real(np.diagonal(H)), math.sqrt(2) * np.real(H[iu])]
    if not real:
        parts.append(math.sqrt(2) * np.imag(H[iu]))
    return np.concatenate(parts)
