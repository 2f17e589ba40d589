"""Array-API kernels for Sander's chapters on ResNets and neural ODEs (one code path for NumPy, CuPy and
array-api-strict; ``xp`` is the namespace from :func:`solvers.xp.xp_of`).

Everything here is written with standard array-API calls only and broadcasts over leading batch axes, so a
check can evaluate many instances (or every finite-difference perturbation of one instance) as one stacked
computation.  Instances are drawn on the host by the claim modules and moved with :func:`solvers.xp.on`.

* :func:`fd_gradients` -- central differences of a batched scalar function, all perturbations at once, with the
  error estimate of :func:`solvers.fd.gradient_with_error` (Richardson ``|d_h - d_2h| / 3`` plus cancellation
  ``4 eps max(|f|, 1) / h``); the perturbed points are the same numbers as there (``X +- h e_k``).
* linear ResNets ``Pi = (I + th_N/N)...(I + th_1/N)``: :func:`lin_prods`, :func:`lin_loss`, :func:`lin_grad`.
* ``erf`` by its all-positive series (array API has no erf) for the GELU of chapter 3, and the chapter-3 model
  (3.3) forward pass / loss / backprop (:func:`rt_forward`, :func:`rt_loss`, :func:`rt_grads`), mirroring
  ``solvers.resnet_train.forward_numpy``/``grads_numpy``.
* :func:`opnorm` -- operator 2-norm of a stack of matrices (largest singular value).
"""
from __future__ import annotations

import math

__all__ = ["EPS", "fd_gradients", "lin_prods", "lin_loss", "lin_grad", "opnorm", "erf", "activation",
           "rt_forward", "rt_loss", "rt_grads", "outer"]

EPS = 2.220446049250313e-16
_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def opnorm(xp, A):
    """Largest singular value of each matrix in the stack ``A (..., m, n)``."""
    return xp.max(xp.linalg.svdvals(A), axis=-1)


def outer(xp, a, b):
    """``a b^T`` for vectors (or stacks of vectors) ``a (..., m)``, ``b (..., n)``."""
    return xp.expand_dims(a, axis=-1) * xp.expand_dims(b, axis=-2)


# ---------------------------------------------------------------------------
# finite differences, all perturbations in one batch
def fd_gradients(xp, loss_b, arrays, h: float = 1e-5, budget: int = 2_000_000):
    """Gradients of ``f(*arrays)`` in each array by central differences of steps ``h`` and ``2h``, and the
    entrywise error estimate of :func:`solvers.fd.gradient_with_error`.

    ``loss_b(*batched)`` takes every array with one extra leading batch axis and returns the ``(B,)`` values;
    for array ``k`` the batch holds ``X_k + h e_j, X_k - h e_j, X_k + 2h e_j, X_k - 2h e_j`` for every entry
    ``j`` (the other arrays broadcast), evaluated in chunks of at most ``budget`` perturbed entries.
    Returns ``(grads, errs)`` as ``xp`` arrays shaped like the inputs."""
    base = xp.abs(loss_b(*[xp.expand_dims(a, axis=0) for a in arrays]))[0]
    grads, errs = [], []
    for k, a in enumerate(arrays):
        n = math.prod(a.shape)
        flat = xp.reshape(a, (1, n))
        E = xp.eye(n, dtype=a.dtype)
        pts = xp.concat([flat + h * E, flat - h * E, flat + (2 * h) * E, flat - (2 * h) * E], axis=0)
        total = 4 * n
        per = max(1, sum(math.prod(b.shape) for b in arrays))
        chunk = max(1, budget // per)
        vals = []
        for s in range(0, total, chunk):
            P = pts[s:min(s + chunk, total), ...]
            m = P.shape[0]
            args = [xp.broadcast_to(xp.expand_dims(b, axis=0), (m,) + tuple(b.shape)) for b in arrays]
            args[k] = xp.reshape(P, (m,) + tuple(a.shape))
            vals.append(loss_b(*args))
        v = xp.concat(vals, axis=0) if len(vals) > 1 else vals[0]
        d1 = (v[0:n] - v[n:2 * n]) / (2 * h)
        d2 = (v[2 * n:3 * n] - v[3 * n:4 * n]) / (4 * h)
        grads.append(xp.reshape(d1, a.shape))
        cancel = 4 * EPS * xp.maximum(base, xp.ones_like(base)) / h
        errs.append(xp.reshape(xp.abs(d1 - d2) / 3 + cancel, a.shape))
    return grads, errs


# ---------------------------------------------------------------------------
# linear ResNets (Sander ch. 2, notation of theorems/sander/_resnet_harness.py)
def lin_prods(xp, th):
    """For ``th (..., N, d, d)``: ``Pi``, ``before`` (``Pi_{n:}``, stacked ``(..., N, d, d)``) and ``after``
    (``Pi_{:n}``), in the multiplication order of ``theorems.sander._resnet_harness.prods``."""
    N, d = th.shape[-3], th.shape[-1]
    I = xp.eye(d, dtype=xp.float64)
    A = I + th / N
    before = [xp.broadcast_to(I, A[..., 0, :, :].shape)]
    for n in range(N - 1):
        before.append(A[..., n, :, :] @ before[-1])
    after = [None] * N
    acc = xp.broadcast_to(I, A[..., 0, :, :].shape)
    for n in range(N - 1, -1, -1):
        after[n] = acc
        acc = acc @ A[..., n, :, :]
    return acc, xp.stack(before, axis=-3), xp.stack(after, axis=-3)


def lin_pi(xp, th):
    """``Pi`` alone (the forward pass), same order as :func:`lin_prods`."""
    N, d = th.shape[-3], th.shape[-1]
    I = xp.eye(d, dtype=xp.float64)
    acc = xp.broadcast_to(I, th[..., 0, :, :].shape)
    for n in range(N - 1, -1, -1):
        acc = acc @ (I + th[..., n, :, :] / N)
    return acc


def lin_loss(xp, th, Sig, B):
    """``Tr((Pi - B) Sigma (Pi - B)^T)`` for each instance of the stack ``th (..., N, d, d)``."""
    G = lin_pi(xp, th) - B
    return xp.linalg.trace(G @ Sig @ xp.matrix_transpose(G))


def lin_grad(xp, th, Sig, B, convention: str = "true"):
    """``nabla_n`` for every ``n`` (stacked like ``th``): 'true' (2/N) S^T G Sig P^T, 'appendix' (l.992) without
    the 2, 'main' (l.821) (1/N) S G Sig P, with ``S = Pi_{:n}``, ``P = Pi_{n:}``, ``G = Pi - B``."""
    N = th.shape[-3]
    Pi, before, after = lin_prods(xp, th)
    GS = xp.expand_dims((Pi - B) @ Sig, axis=-3)
    T = xp.matrix_transpose
    if convention == "main":
        return (after @ GS @ before) / N
    c = 2.0 if convention == "true" else 1.0
    return c / N * (T(after) @ GS @ T(before))


# ---------------------------------------------------------------------------
# the chapter-3 model (3.3): h_{k+1} = h_k + 1/(L sqrt m) V_{k+1} sigma(W_{k+1} h_k / sqrt q)
def erf(xp, z, terms: int = 140):
    """``erf`` of a NumPy array is SciPy's and of a CuPy array ``cupyx.scipy.special.erf`` (the library kernels);
    any other array-API namespace (array-api-strict) gets the series below, which the strict test items hold to
    SciPy's values through the NumPy record.

    ``erf`` through ``2/sqrt(pi) exp(-x^2) sum_k 2^k x^{2k+1} / (2k+1)!!`` (all terms of one sign, no
    cancellation), for ``|x| <= 6``; ``erf(+-6)`` rounds to ``+-1`` in float64, so larger arguments are clipped.
    Relative error a few ulp (the sum has at most ~140 positive terms; by k = 140 the terms have decayed below
    1e-30 of the sum for x^2 <= 36)."""
    from array_api_compat import is_cupy_array, is_numpy_array
    if is_numpy_array(z):
        from scipy.special import erf as _erf
        return _erf(z)
    if is_cupy_array(z):
        from cupyx.scipy.special import erf as _erf
        return _erf(z)
    x = xp.clip(z, -6.0, 6.0)
    x2 = x * x
    term = xp.ones_like(x)
    s = xp.ones_like(x)
    for k in range(1, terms):
        term = term * (2.0 * x2) / (2 * k + 1)
        s = s + term
    return (2.0 / math.sqrt(math.pi)) * x * xp.exp(-x2) * s


def activation(xp, z, act: str):
    """``sigma(z)``, ``sigma'(z)`` as ``solvers.resnet_train.activation`` (GELU exact ``z Phi(z)``, ReLU'(0) = 0)."""
    if act == "gelu":
        Phi = 0.5 * (1.0 + erf(xp, z / _SQRT2))
        return z * Phi, Phi + z * _INV_SQRT2PI * xp.exp(-0.5 * z * z)
    if act == "tanh":
        t = xp.tanh(z)
        return t, 1.0 - t * t
    if act == "relu":
        zero = xp.zeros_like(z)
        return xp.where(z > 0, z, zero), xp.where(z > 0, xp.ones_like(z), zero)
    if act == "identity":
        return z, xp.ones_like(z)
    raise ValueError(f"activation {act!r} is unknown (known: gelu, tanh, relu, identity)")


def rt_forward(xp, X, A, V, W, B, act: str):
    """Hidden states ``H`` (list of L+1 arrays ``(..., n, q)``) and outputs ``F (..., n, d')``; every argument
    may carry leading batch axes (``V (..., L, q, m)``, ``W (..., L, m, q)``)."""
    T = xp.matrix_transpose
    L, q, m = V.shape[-3], V.shape[-2], V.shape[-1]
    c = 1.0 / (L * math.sqrt(m))
    H = [X @ T(A)]
    for k in range(L):
        s, _ = activation(xp, H[-1] @ T(W[..., k, :, :]) / math.sqrt(q), act)
        H.append(H[-1] + c * (s @ T(V[..., k, :, :])))
    return H, H[-1] @ T(B)


def rt_loss(xp, X, Y, A, V, W, B, act: str):
    """``1/n sum_i |F(x_i) - y_i|^2`` per instance of the (possibly batched) weights."""
    _, F = rt_forward(xp, X, A, V, W, B, act)
    R = F - Y
    return xp.sum(R * R, axis=(-2, -1)) / X.shape[-2]


def rt_grads(xp, X, Y, A, V, W, B, act: str, variant: str = "true"):
    """``(loss, dA, dV, dW, dB)`` by backpropagation, as ``resnet_train.grads_numpy`` (variants 'true',
    'printed_313': no transpose in (3.13), 'printed_315': the gradient of Z_k uses p_{k-1})."""
    if variant not in ("true", "printed_313", "printed_315"):
        raise ValueError(f"variant {variant!r} is unknown (true, printed_313, printed_315)")
    T = xp.matrix_transpose
    n = X.shape[0]
    L, q, m = V.shape
    H, F = rt_forward(xp, X, A, V, W, B, act)
    R = F - Y
    loss = xp.sum(R * R) / n
    dB = 2.0 / n * T(R) @ H[L]
    P = 2.0 / n * R @ B
    c = 1.0 / (L * math.sqrt(m))
    sq = math.sqrt(q)
    dV, dW = [None] * L, [None] * L
    for k in range(L - 1, -1, -1):
        s, ds = activation(xp, H[k] @ T(W[k, ...]) / sq, act)
        if variant == "printed_313":
            Pin = P + c / sq * (((P @ T(W[k, ...])) * ds) @ T(V[k, ...]))
        else:
            Pin = P + c / sq * (((P @ V[k, ...]) * ds) @ W[k, ...])
        Puse = Pin if variant == "printed_315" else P
        dV[k] = c * T(Puse) @ s
        dW[k] = c / sq * T((Puse @ V[k, ...]) * ds) @ H[k]
        P = Pin
    return loss, T(P) @ X, xp.stack(dV, axis=0), xp.stack(dW, axis=0), dB


def mv(xp, A, x):
    """``A x`` for stacks of matrices ``A (..., m, n)`` and vectors ``x (..., n)`` (a single vector goes through
    ``matmul``'s own 1-D rule, the cheap path of the per-step loops)."""
    if x.ndim == 1:
        return A @ x
    return (A @ xp.expand_dims(x, axis=-1))[..., 0]
