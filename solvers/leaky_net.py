"""The discretised leaky ResNet of Jacot & Kaiser §4 (catalogue jacot §2.6 D1).

    alpha_{p_l} = (1 - rho_l Lt) alpha_{p_{l-1}} + rho_l W_l sigma(alpha_{p_{l-1}}),   l = 1..L,
    cost  L(W) = C(alpha_1(X)) + lambda / (2 Lt) * sum_l rho_l |W_l|_F^2,   C(A) = 1/N |Y - A|_F^2.

Shapes: ``X, Y`` are ``w x N`` (columns are data points); ``Ws`` is ``(L, w, w+1)`` (last column
the bias); ``rho`` has length ``L``.  The forward pass returns the ``L + 1`` representations
``A_0 = X, ..., A_L`` as an array ``(L+1, w, N)``.

Backward pass (hand-written): with ``G_l = dC/dA_l`` (``G_L = -2/N (Y - A_L)``),

    dL/dW_l = rho_l (G_l sigma(A_{l-1})^T + lambda/Lt W_l),
    G_{l-1} = (1 - rho_l Lt) G_l + relu'(A_{l-1}) * (rho_l V_l^T G_l),   V_l = W_l[:, :w].

Step-size rules (§4, l.231-237): :func:`equidistant`, :func:`irregular`, :func:`adaptive_update`.
Normalisation decision for the irregular mesh (catalogue E16): the printed
``rho_l = 1/L + a/L (1/4 - |l/L - 1/2|)`` sums to 1 only for even L (to ``1 - a/(4 L^2)`` for odd
L); :func:`irregular` divides by the sum by default (a no-op for even L) so that ``p_L = 1``;
``normalise=False`` returns the printed values.  The renormalised mesh still satisfies the paper's
sufficient condition ``L > (1 + a/4) Lt  =>  rho_l Lt < 1`` (max_l rho_l L = (1 + a/4 - a/(2L)) /
(1 - a/(4L^2)) <= 1 + a/4 for odd L, since 2L >= 1 + a/4).
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["check_inputs", "forward_numpy", "forward", "loss", "grad_numpy", "grad",
           "equidistant", "irregular", "adaptive_update", "relative_increments"]


def check_inputs(X, Ws, rho, Lt):
    """Validate shapes and D2's condition ``rho_l Lt < 1``; return float arrays."""
    X = np.asarray(X, dtype=float)
    Ws = np.asarray(Ws, dtype=float)
    rho = np.asarray(rho, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a w x N matrix (got shape {X.shape})")
    w, N = X.shape
    if Ws.ndim != 3 or Ws.shape[1:] != (w, w + 1):
        raise ValueError(f"Ws must have shape (L, w, w+1) = (L, {w}, {w + 1}) (got {Ws.shape})")
    if rho.shape != (Ws.shape[0],):
        raise ValueError(f"rho must have one step per layer, length L = {Ws.shape[0]} (got shape {rho.shape})")
    if not (Lt >= 0):
        raise ValueError(f"the effective depth Lt must be >= 0 (got {Lt})")
    if np.any(rho <= 0):
        raise ValueError("every layer step rho_l must be > 0")
    if np.any(rho * Lt >= 1):
        l = int(np.argmax(rho * Lt))
        raise ValueError(f"D2's condition rho_l * Lt < 1 (prefactor 1 - rho_l Lt > 0) fails at layer l = {l + 1}: "
                         f"rho_l * Lt = {rho[l] * Lt:.6g}")
    for name, M in (("X", X), ("Ws", Ws), ("rho", rho)):
        if not np.all(np.isfinite(M)):
            raise ValueError(f"{name} has non-finite entries")
    return X, Ws, rho


def _sig(A):
    return np.vstack([np.maximum(A, 0.0), np.ones((1, A.shape[1]))])


def forward_numpy(X, Ws, rho, Lt):
    X, Ws, rho = check_inputs(X, Ws, rho, Lt)
    As = np.empty((len(rho) + 1,) + X.shape)
    As[0] = X
    for l in range(len(rho)):
        As[l + 1] = (1 - rho[l] * Lt) * As[l] + rho[l] * Ws[l] @ _sig(As[l])
    return As


def loss(X, Y, Ws, rho, Lt, lam):
    """``1/N |Y - A_L|^2 + lam/(2 Lt) sum rho_l |W_l|^2`` (NumPy)."""
    As = forward_numpy(X, Ws, rho, Lt)
    N = X.shape[1] if np.ndim(X) == 2 else 1
    reg = 0.0 if lam == 0 else lam / (2 * Lt) * float(np.sum(rho * np.sum(Ws * Ws, axis=(1, 2))))
    return float(np.sum((np.asarray(Y) - As[-1]) ** 2) / N) + reg


def grad_numpy(X, Y, Ws, rho, Lt, lam, variant=0):
    """Gradient of :func:`loss` w.r.t. all ``W_l`` (shape of ``Ws``).  ``variant=1`` is the wrong
    backward pass that drops the leak factor ``(1 - rho_l Lt)`` (a falsifier)."""
    As = forward_numpy(X, Ws, rho, Lt)
    Y = np.asarray(Y, dtype=float)
    if Y.shape != As[-1].shape:
        raise ValueError(f"Y must have the shape of X, {As[-1].shape} (got {Y.shape})")
    w, N = Y.shape
    G = -2.0 / N * (Y - As[-1])
    out = np.empty_like(np.asarray(Ws, dtype=float))
    for l in range(len(rho) - 1, -1, -1):
        A = As[l]
        out[l] = rho[l] * (G @ _sig(A).T + (lam / Lt if lam else 0.0) * Ws[l])
        leak = 1.0 if variant == 1 else (1 - rho[l] * Lt)
        G = leak * G + (A > 0) * (rho[l] * Ws[l][:, :w].T @ G)
    return out


@njit(cache=True)
def _forward_kernel(X, Ws, rho, Lt):
    L = rho.shape[0]
    w, N = X.shape
    As = np.empty((L + 1, w, N))
    As[0] = X
    for l in range(L):
        for i in range(w):
            for j in range(N):
                s = Ws[l, i, w]
                for k in range(w):
                    a = As[l, k, j]
                    if a > 0.0:
                        s += Ws[l, i, k] * a
                As[l + 1, i, j] = (1.0 - rho[l] * Lt) * As[l, i, j] + rho[l] * s
    return As


@njit(cache=True)
def _grad_kernel(X, Y, Ws, rho, Lt, lam, variant):
    L = rho.shape[0]
    w, N = X.shape
    As = _forward_kernel(X, Ws, rho, Lt)
    G = -2.0 / N * (Y - As[L])
    out = np.empty_like(Ws)
    reg = lam / Lt if lam != 0.0 else 0.0
    for l in range(L - 1, -1, -1):
        for i in range(w):
            for k in range(w + 1):
                s = 0.0
                for j in range(N):
                    if k == w:
                        s += G[i, j]
                    elif As[l, k, j] > 0.0:
                        s += G[i, j] * As[l, k, j]
                out[l, i, k] = rho[l] * (s + reg * Ws[l, i, k])
        leak = 1.0 if variant == 1 else 1.0 - rho[l] * Lt
        Gn = np.empty((w, N))
        for k in range(w):
            for j in range(N):
                v = leak * G[k, j]
                if As[l, k, j] > 0.0:
                    s = 0.0
                    for i in range(w):
                        s += Ws[l, i, k] * G[i, j]
                    v += rho[l] * s
                Gn[k, j] = v
        G = Gn
    return out


def forward(X, Ws, rho, Lt, backend="numba"):
    """Forward pass, ``backend`` ``numba`` (kernel) or ``numpy`` (reference)."""
    if backend == "numpy":
        return forward_numpy(X, Ws, rho, Lt)
    if backend != "numba":
        raise ValueError(f"unknown backend {backend!r} (numpy or numba)")
    X, Ws, rho = check_inputs(X, Ws, rho, Lt)
    return _forward_kernel(np.ascontiguousarray(X), np.ascontiguousarray(Ws), rho, float(Lt))


def grad(X, Y, Ws, rho, Lt, lam, backend="numba", variant=0):
    """Gradient of :func:`loss` (``backend`` numba kernel or numpy reference)."""
    if backend == "numpy":
        return grad_numpy(X, Y, Ws, rho, Lt, lam, variant)
    if backend != "numba":
        raise ValueError(f"unknown backend {backend!r} (numpy or numba)")
    X, Ws, rho = check_inputs(X, Ws, rho, Lt)
    Y = np.asarray(Y, dtype=float)
    if Y.shape != X.shape:
        raise ValueError(f"Y must have the shape of X, {X.shape} (got {Y.shape})")
    return _grad_kernel(np.ascontiguousarray(X), np.ascontiguousarray(Y), np.ascontiguousarray(Ws), rho,
                        float(Lt), float(lam), int(variant))


# ---------------------------------------------------------------------------
# step-size rules
def _check_L(L):
    if int(L) != L or L < 1:
        raise ValueError(f"the number of layers L must be an integer >= 1 (got {L})")
    return int(L)


def equidistant(L):
    """``rho_l = 1/L``."""
    L = _check_L(L)
    return np.full(L, 1.0 / L)


def irregular(L, a, normalise=True):
    """``rho_l = 1/L + a/L (1/4 - |l/L - 1/2|)``, ``a in [0, 1)``; divided by its sum when
    ``normalise`` (the sum is ``1 - a/(4L^2)`` for odd L, catalogue E16)."""
    L = _check_L(L)
    if not 0 <= a < 1:
        raise ValueError(f"a must lie in [0, 1) (got {a})")
    l = np.arange(1, L + 1)
    rho = 1.0 / L + a / L * (0.25 - np.abs(l / L - 0.5))
    return rho / rho.sum() if normalise else rho


def relative_increments(As):
    """``|A_l - A_{l-1}| / |A_l|`` for ``l = 1..L`` (Frobenius norms)."""
    As = np.asarray(As, dtype=float)
    d = np.linalg.norm((As[1:] - As[:-1]).reshape(len(As) - 1, -1), axis=1)
    n = np.linalg.norm(As[1:].reshape(len(As) - 1, -1), axis=1)
    if np.any(n == 0):
        raise ValueError("relative increments undefined: a representation A_l is 0")
    return d / n


def adaptive_update(rho, As, damping=0.0, use_rho=True):
    """One adaptive step (l.237): ``rho_l <- c_l / sum c_k``, ``c_l = rho_l |A_l| / |A_l - A_{l-1}|``,
    then ``damping * rho + (1 - damping) * rho_new``.  ``use_rho=False`` drops the ``rho_l`` factor
    (a falsifier: then the fixed point is not equidistribution)."""
    rho = np.asarray(rho, dtype=float)
    r = relative_increments(As)
    if r.shape != rho.shape:
        raise ValueError(f"As must hold L + 1 = {rho.size + 1} representations (got {len(As)})")
    if np.any(r == 0):
        raise ValueError("adaptive rule undefined: a layer has A_l = A_{l-1} (zero increment)")
    c = (rho if use_rho else 1.0) / r
    new = c / c.sum()
    return damping * rho + (1 - damping) * new
