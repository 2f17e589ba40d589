"""Leaky ResNets (Jacot & Kaiser): the representation path, the cost of identity and
Hamilton's equations of representation geodesics.

Conventions (catalogue jacot §0/§1):

* ``A`` is ``w x N``: rows are neurons, columns are the N data points.
* ``sigma(A) = [relu(A); 1_N^T]`` is ``(w+1) x N`` (ReLU, then a constant row: the bias);
  ``K = sigma(A)^T sigma(A)``; ``Kbar = relu(A)^T relu(A) = K - 1 1^T``.
* ``||M||_G^2 = Tr[M G^+ M^T]`` for PSD ``G``, and ``+inf`` when ``Im M^T`` is not contained in
  ``Im G`` (the paper's convention, l.87).
* Hamiltonian (eq. (1)): ``H(A, B) = Lt/2 ||B sigma(A)^T||_F^2 - Lt Tr[B A^T]``; Hamilton's
  equations ``A' = dH/dB = Lt (B K - A)``, ``B' = -dH/dA = -Lt (mask(A) * [relu(A) B^T B] - B)``.

The image condition ``Im A^T ⊆ Im G`` is decided numerically (``image_condition``) with the
threshold stated there; every claim that needs a cost of identity uses :func:`coi`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import rk
from .specialise import register

__all__ = ["sigma", "gram", "image_condition", "g_norm2", "coi", "coi_gamma", "hamiltonian",
           "hamilton_rhs", "hamilton_rhs_numpy", "pack", "unpack", "shoot", "IMAGE_RTOL"]

EPS = np.finfo(float).eps
#: relative tolerance of the image condition: a column space residual below
#: ``IMAGE_RTOL * ||M||_F`` counts as "contained" (see :func:`image_condition`).
IMAGE_RTOL = 1e-8


def _as_matrix(A, name="A"):
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a w x N matrix (got shape {A.shape})")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} has non-finite entries")
    return A


def sigma(A, bias: bool = True):
    """``sigma(A)``: ReLU of the rows, with the constant row appended when ``bias``."""
    A = _as_matrix(A)
    r = np.maximum(A, 0.0)
    return np.vstack([r, np.ones((1, A.shape[1]))]) if bias else r


def gram(A, bias: bool = True, gamma: float = 0.0):
    """``K = sigma(A)^T sigma(A)`` (``Kbar`` without bias), plus ``gamma I``."""
    S = sigma(A, bias)
    return S.T @ S + gamma * np.eye(S.shape[1])


def _range_basis(G):
    """Orthonormal basis of the column space of the PSD matrix ``G`` and the threshold used.

    Numerical rank: eigenvalues above ``tau = n * eps * ||G||_2`` (the rounding level of a
    symmetric eigensolver, Higham Thm 8.? / LAPACK backward error ``O(n eps ||G||)``)."""
    lam, V = np.linalg.eigh(G)
    top = max(float(lam[-1]), 0.0)
    tau = G.shape[0] * EPS * top
    keep = lam > tau
    return V[:, keep], lam[keep], tau


def image_condition(M, G) -> tuple[bool, float]:
    """Does ``Im M^T ⊆ Im G`` hold?  Returns (holds, relative residual).

    The residual is ``||M^T - P M^T||_F / ||M||_F`` with ``P`` the projector on the numerical
    range of ``G``.  Error model: a true inclusion leaves a residual of rounding size,
    ``O(n eps cond)``; we accept residuals below ``IMAGE_RTOL = 1e-8``, which leaves a factor
    ``~1e7`` of room above rounding on the well-conditioned Grams of the claims and below the
    ``O(1)`` residual of a genuine violation (a direction of ``M`` missing from ``Im G``).
    Instances in the grey zone (between ``1e-8`` and ``1e-4``) are reported by the caller."""
    M = np.asarray(M, dtype=float)
    nrm = np.linalg.norm(M)
    if nrm == 0.0:
        return True, 0.0
    U, _, _ = _range_basis(G)
    R = M.T - U @ (U.T @ M.T)
    res = float(np.linalg.norm(R) / nrm)
    return res <= IMAGE_RTOL, res


def g_norm2(M, G) -> float:
    """``||M||_G^2 = Tr[M G^+ M^T]``, ``+inf`` when ``Im M^T`` is not in ``Im G``."""
    ok, _ = image_condition(M, G)
    if not ok:
        return float("inf")
    U, lam, _ = _range_basis(G)
    P = M @ U
    return float(np.sum(P * P / lam))


def coi(A, bias: bool = True) -> float:
    """Cost of identity ``||A||_K^2 = ||A sigma(A)^+||_F^2`` (``Kbar`` without bias), with the
    paper's convention ``+inf`` when ``Im A^T ⊄ Im sigma(A)^T``."""
    A = _as_matrix(A)
    return g_norm2(A, gram(A, bias))


def coi_gamma(A, gamma: float, bias: bool = True) -> float:
    """gamma-stable cost of identity ``Tr[A (K + gamma I)^{-1} A^T]`` (finite for gamma > 0)."""
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0 (got {gamma})")
    A = _as_matrix(A)
    G = gram(A, bias, gamma)
    return float(np.trace(A @ np.linalg.solve(G, A.T)))


def hamiltonian(A, B, Lt: float) -> float:
    """``H = Lt/2 ||B sigma(A)^T||_F^2 - Lt Tr[B A^T]`` (eq. (1))."""
    S = sigma(A)
    M = B @ S.T
    return float(0.5 * Lt * np.sum(M * M) - Lt * np.sum(B * A))


def hamiltonian_scale(A, B, Lt: float) -> float:
    """Size of the two terms of H (the scale its rounding and integration errors live on)."""
    S = sigma(A)
    M = B @ S.T
    return float(0.5 * Lt * np.sum(M * M) + Lt * abs(np.sum(B * A)))


# ---------------------------------------------------------------------------
# Hamilton's equations.  State y = [A.ravel(), B.ravel(), I] with I(p) = ∫_0^p ||b_q||^2 dq,
# b_p = Lt B_p 1 the bias column of the critical weights W_p = Lt B_p sigma(A_p)^T (H2).
def pack(A, B, I=0.0):
    return np.concatenate([np.ravel(A), np.ravel(B), [I]]).astype(float)


def unpack(y, w, N):
    A = y[: w * N].reshape(w, N)
    B = y[w * N: 2 * w * N].reshape(w, N)
    return A, B, y[2 * w * N]


def hamilton_rhs_numpy(t, y, w, N, Lt, variant=0):
    """Hamilton's equations (H3).  ``variant`` selects a wrong form for the falsifiers:
    1 = the momentum equation with the opposite sign, 2 = the ReLU mask dropped."""
    A, B, _ = unpack(y, w, N)
    R = np.maximum(A, 0.0)
    K = R.T @ R + 1.0
    dA = Lt * (B @ K - A)
    M = R @ (B.T @ B)
    if variant != 2:
        M = np.where(A > 0, M, 0.0)
    dB = -Lt * (M - B)
    if variant == 1:
        dB = -dB
    b = Lt * B.sum(axis=1)
    return np.concatenate([dA.ravel(), dB.ravel(), [b @ b]])


@register
@njit(cache=True)
def hamilton_rhs(t, y, args):
    """Numba kernel of :func:`hamilton_rhs_numpy`; ``args = (w, N, Lt, variant)``."""
    w, N, Lt, variant = args
    n = w * N
    A = y[:n].reshape(w, N)
    B = y[n:2 * n].reshape(w, N)
    R = np.maximum(A, 0.0)
    K = R.T @ R + 1.0
    dA = Lt * (B @ K - A)
    M = R @ (B.T @ B)
    if variant != 2:
        for i in range(w):
            for j in range(N):
                if A[i, j] <= 0.0:
                    M[i, j] = 0.0
    dB = -Lt * (M - B)
    if variant == 1:
        dB = -dB
    out = np.empty(2 * n + 1)
    out[:n] = dA.ravel()
    out[n:2 * n] = dB.ravel()
    s = 0.0
    for i in range(w):
        bi = 0.0
        for j in range(N):
            bi += B[i, j]
        s += (Lt * bi) ** 2
    out[2 * n] = s
    return out


def shoot(A0, B0, Lt: float, n_out: int = 100, rtol: float = 1e-11, atol: float = 1e-12,
          backend: str = "numba", variant: int = 0, blowup: float = 1e6, max_steps: int = 200_000,
          max_total_steps: int | None = None, partial: bool = False):
    """Integrate Hamilton's equations on ``p in [0, 1]`` from ``(A0, B0)`` and return the states
    at ``n_out + 1`` equispaced points as an array ``(n_out + 1, 2 w N + 1)``, plus the total
    accepted steps; ``None`` states when the path blows up (an entry of ``(A, B)`` above ``blowup`` in absolute value, or
    not finite).

    Integrator: Dormand-Prince 5(4) (``solvers.rk``), stepping exactly onto each output point.
    The ReLU kink makes ``B'`` jump (and ``A'`` kink) where an entry of ``A`` changes sign.

    * ``backend='numba'``: one kernel call for the whole path (:func:`solvers.rk.solve_switching` on the in-place
      field :func:`solvers.rhs_inplace.hamilton_rhs_sw`) with event location at the walls ``A_ij = 0``: within a
      step the field is the smooth one of the current sign pattern of ``A``; a step over a wall is redone to the
      crossing (located on the step's Hermite interpolant, refined by Newton until switching there costs under a
      tenth of the local tolerance), the sign flips and the integration goes on.  No step straddles a kink, so
      the error model of the smooth pair holds piecewise (local error below ``atol + rtol |y|`` per step).
    * ``backend='numpy'``: the NumPy reference (:func:`solvers.rk.dopri5_numpy` on :func:`hamilton_rhs_numpy`),
      restarted at each output point (``h0 = 1e-4``) and without event location: the embedded error estimate sees
      each jump (local error ``O(h * jump)``) and the controller shrinks the step across it until the local
      tolerance holds again.  The two backends agree to the global integration error, not to rounding.

    ``max_steps`` bounds the steps per output interval on average (``n_out * max_steps`` for the path; the numpy
    backend: per interval).  ``max_total_steps`` bounds the steps (accepted, rejected and, numba, the attempts
    discarded at a wall) over the whole path: past it the path is stiff and ``None`` is returned, as for a
    blow-up.  ``partial``: instead of ``None``, return the states reached before the blow-up or the step bound
    (the first ``k + 1`` output points, ``k >= 0``)."""
    A0 = _as_matrix(A0, "A0")
    B0 = _as_matrix(B0, "B0")
    if A0.shape != B0.shape:
        raise ValueError(f"A0 {A0.shape} and B0 {B0.shape} must have the same shape w x N")
    if not Lt > 0:
        raise ValueError(f"the effective depth Lt must be > 0 (got {Lt})")
    if backend not in ("numba", "numpy"):
        raise ValueError(f"unknown backend {backend!r} (numpy or numba)")
    w, N = A0.shape
    y = pack(A0, B0)
    ps = np.linspace(0.0, 1.0, n_out + 1)
    if backend == "numba":
        from . import rhs_inplace as ri
        cap = max_steps * n_out if max_total_steps is None else min(max_steps * n_out, max_total_steps)
        out = np.empty((n_out + 1, y.size))
        out[0] = y
        if cap <= 0:
            return (out[:1] if partial else None), 0
        args = ri.hamilton_args_sw(w, N, float(Lt), int(variant))
        r = rk.solve_switching(ri.hamilton_rhs_sw, 0.0, y, 1.0, args, args[5], rtol=rtol, atol=atol, h0=1e-4,
                               max_steps=cap, t_eval=ps[1:], blowup=blowup, nchk=2 * w * N)
        k = r.ys.shape[0]
        out[1:k + 1] = r.ys
        if r.success:
            return out, r.accepted
        return (out[:k + 1] if partial else None), r.accepted
    out = np.empty((n_out + 1, y.size))
    out[0] = y
    steps = 0
    budget = max_total_steps
    for k in range(n_out):
        seg = max_steps if budget is None else min(max_steps, budget)
        if seg <= 0:
            return (out[:k + 1] if partial else None), steps
        r = rk.solve_dopri5(hamilton_rhs_numpy, ps[k], y, ps[k + 1], (w, N, float(Lt), int(variant)),
                            rtol=rtol, atol=atol, h0=1e-4, max_steps=seg, backend="numpy")
        if not r.success:
            return (out[:k + 1] if partial else None), steps
        y = r.y
        steps += r.accepted
        if budget is not None:
            budget -= r.accepted + r.rejected
        if not np.all(np.isfinite(y)) or np.max(np.abs(y[:-1])) > blowup:
            return (out[:k + 1] if partial else None), steps
        out[k + 1] = y
    return out, steps
