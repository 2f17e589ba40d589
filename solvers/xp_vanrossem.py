"""Array-API building blocks of the vanrossem checks: one code path for NumPy, array-api-strict and CuPy.

Everything here takes the namespace ``xp`` (:func:`solvers.xp.xp_of`) and arrays of that namespace, uses only
standard array-API calls, and broadcasts over leading (batch) axes, so that a check evaluating the statement on
many instances runs them as one stacked computation.  The instances themselves are drawn on the host with the
checks' seeded NumPy generators and moved with :func:`solvers.xp.on` (every backend sees the same numbers).

* :func:`mv`, :func:`dot`, :func:`outer`: batched matrix-vector product, inner product, outer product.
* :func:`loss16`, :func:`eq6_field`: the two-point loss Eq 16 and the effective gradient field Eq 6 on stacks.
* :func:`eq7_field`: Eq 7 (and the Eq 51 variants of the suite) on arrays of states ``(u, v, w)``.
* :func:`lift_field`: the lifted system ``s' = -(g a/tau_h) q.r``, ``q' = -(g/tau_y) s r`` on stacks of states.
* :func:`cs_jacobian`: Jacobian of a rational field by complex-step differentiation, all columns at once.
* :func:`cs_gradient`: gradient of a real-analytic scalar function of an array by complex step, every entry at once.
* :func:`fd_gradient_with_error`: the central differences of :mod:`solvers.fd` (steps ``h`` and ``2h``, the same
  Richardson error estimate), every entry evaluated in one batched call.
"""
from __future__ import annotations

import math

import numpy as np

from solvers.xp import asnumpy, namespace, on, xp_of

__all__ = ["xp_of", "on", "asnumpy", "namespace", "mv", "dot", "outer", "loss16", "eq6_field", "eq7_field",
           "lift_field", "cs_jacobian", "cs_gradient", "fd_gradient_with_error", "EPS"]

EPS = float(np.finfo(np.float64).eps)


def mv(xp, A, x):
    """``A @ x`` for stacks: ``A`` of shape ``(..., m, n)``, ``x`` of shape ``(..., n)``; returns ``(..., m)``."""
    return (A @ x[..., None])[..., 0]


def dot(xp, a, b):
    """``sum(a * b)`` over the last axis (no conjugation: analytic in complex-step arguments)."""
    return xp.sum(a * b, axis=-1)


def outer(xp, a, b):
    """``a b^T`` for stacks of vectors: ``(..., m)`` and ``(..., n)`` give ``(..., m, n)``."""
    return a[..., :, None] * b[..., None, :]


def loss16(xp, ybar, Dh, Dy, x1, x2, y1, y2):
    """Eq 16 ``1/2 <|ybar + 1/2 D_y D_h (x_i - x_-i) - y_i|^2>`` over the two points, broadcasting over leading
    (stack) axes of ``ybar (.., m)``, ``Dh (.., H, dx)`` and ``Dy (.., m, H)`` (analytic: r.r, no conjugation, so
    complex-step arguments are allowed)."""
    r1 = ybar + 0.5 * mv(xp, Dy, mv(xp, Dh, x1 - x2)) - y1
    r2 = ybar + 0.5 * mv(xp, Dy, mv(xp, Dh, x2 - x1)) - y2
    return 0.25 * (dot(xp, r1, r1) + dot(xp, r2, r2))


def eq6_field(xp, ybar, Dh, Dy, x1, x2, y1, y2, taus, g=0.25):
    """Eq 6 with the closed-form gradients of Eq 16 (factor ``g``: 1/4 true, 1/2 the paper's Eq 17), for stacks."""
    dX, dY = x2 - x1, y2 - y1
    dh = mv(xp, Dh, dX)
    r = mv(xp, Dy, dh) - dY
    t_yb, t_h, t_y = taus
    return (-(ybar - 0.5 * (y1 + y2)) / t_yb, -g / t_h * outer(xp, mv(xp, xp.matrix_transpose(Dy), r), dX),
            -g / t_y * outer(xp, r, dh))


def eq7_field(u, v, w, a, b, th, ty, g=0.5, variant=None):
    """Eq 7 (times ``2 g``; ``g = 1/2`` is Eq 7 verbatim) on arrays (or scalars) ``u, v, w``; ``variant`` one of the
    Eq 51 modifications used by the suite (``factor2``: 2x dv/dt, ``noterm``: dv/dt = -w u/tau_y, ``square``:
    du/dt = -(a/tau_h) w^2, ``plus``: sign of the second term of dw/dt flipped).  Plain arithmetic: any namespace."""
    c = 2.0 * g
    du = -c * a / th * w
    dv = -c * w * (u / ty + a / th * v / u)
    dw = -c * ((3.0 * w - v + b) * u / (2.0 * ty) + a / (2.0 * th) * (v + w) * w / u)
    if variant == "factor2":
        dv = 2 * dv
    elif variant == "noterm":
        dv = -c * w * u / ty
    elif variant == "square":
        du = -c * a / th * w * w
    elif variant == "plus":
        dw = -c * ((3 * w - v + b) * u / (2 * ty) - a / (2 * th) * (v + w) * w / u)
    elif variant is not None:
        raise ValueError(f"unknown Eq 7 variant {variant!r}")
    return du, dv, dw


def lift_field(xp, s, q, dY, a, th, ty, g=0.5):
    """The lifted field on stacks: ``s`` shape ``(...)``, ``q`` and ``dY`` shape ``(..., m)``, ``a, th, ty`` shape
    ``(...)`` or scalars; returns ``(ds, dq)`` (``r = q s - Delta_y``)."""
    r = q * s[..., None] - dY
    ds = -g * a / th * dot(xp, q, r)
    dq = (-g / ty * s)[..., None] * r
    return ds, dq


def cs_jacobian(xp, F, x, h=1e-30):
    """Jacobian ``J[i, j] = dF_i/dx_j`` of ``F(*x) -> tuple of n arrays`` at the real vector ``x`` (shape ``(n,)``)
    by complex-step differentiation, all ``n`` directions in one call: ``F`` is evaluated on the columns of
    ``x + i h I`` (shape ``(n,)`` each).  Exact to rounding for a rational ``F`` of real arguments."""
    n = x.shape[0]
    X = xp.astype(x, xp.complex128)[None, :] + (1j * h) * xp.eye(n, dtype=xp.complex128)
    cols = F(*[X[:, k] for k in range(n)])
    return xp.stack([xp.imag(c + 0 * X[:, 0]) for c in cols], axis=0) / h


def cs_gradient(xp, fun, X, h=1e-30):
    """Gradient of a real-analytic scalar function of the array ``X`` (shape ``S``) by complex step, every entry at
    once: ``fun`` receives a stack of shape ``(size, *S)`` (entry ``k`` perturbed by ``i h`` in the ``k``-th slice)
    and returns shape ``(size,)``."""
    shape = tuple(X.shape)
    n = math.prod(shape)
    E = xp.reshape((1j * h) * xp.eye(n, dtype=xp.complex128), (n, *shape))
    vals = fun(xp.astype(X, xp.complex128)[None, ...] + E)
    return xp.reshape(xp.imag(vals) / h, shape)


def _central(xp, fun, X, h):
    """Central differences of step ``h`` in every entry, and the largest ``|f|`` evaluated."""
    shape = tuple(X.shape)
    n = math.prod(shape)
    E = xp.reshape(h * xp.eye(n, dtype=xp.float64), (n, *shape))
    Xb = X[None, ...]
    fp, fm = fun(Xb + E), fun(Xb - E)
    return xp.reshape((fp - fm) / (2 * h), shape), float(xp.max(xp.maximum(xp.abs(fp), xp.abs(fm))))


def fd_gradient_with_error(xp, fun, arrays, h=1e-5, evaluated_scale=False):
    """:func:`solvers.fd.gradient_with_error` batched: gradients of the scalar ``fun(*arrays)`` in each array by
    central differences of steps ``h`` and ``2h`` with the entrywise error estimate ``|d_h - d_2h|/3 +
    4 eps max(|f|, 1)/h``.  ``fun`` must broadcast over a leading axis of any one of its arguments (the stack of
    perturbed copies; the others are passed unbatched) and return one value per stacked copy.

    ``|f|`` is ``|f|`` at the base point (as in solvers.fd), or with ``evaluated_scale`` the largest ``|f|`` among
    the evaluated points: the rounding of a difference quotient is that of the values it subtracts, which far
    exceed ``|f(x)|`` when the step moves ``f`` by more than its own size (a large derivative)."""
    base = abs(float(fun(*arrays)))
    grads, errs = [], []
    for k, A in enumerate(arrays):
        def f_k(Y, k=k):
            return fun(*arrays[:k], Y, *arrays[k + 1:])
        (d1, m1), (d2, m2) = _central(xp, f_k, A, h), _central(xp, f_k, A, 2 * h)
        scale = max(base, m1, m2) if evaluated_scale else base
        grads.append(d1)
        errs.append(xp.abs(d1 - d2) / 3 + 4 * EPS * max(scale, 1.0) / h)
    return grads, errs
