"""Central finite differences, the reference every hand-written gradient is checked against.

Error model (stated once): for a C^3 function the central difference of step ``h`` has truncation
``c h^2`` and cancellation about ``2 eps |f| / h`` per entry.  :func:`gradient_with_error`
estimates the truncation from steps ``h`` and ``2h`` (Richardson: ``|d_h - d_2h| / 3``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["central_difference", "gradient_with_error"]

EPS = float(np.finfo(np.float64).eps)


def central_difference(fun, X, h: float):
    """Gradient of the scalar ``fun`` at the array ``X`` by central differences of step ``h``."""
    X = np.asarray(X, dtype=float)
    G = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        E = np.zeros_like(X)
        E[idx] = h
        G[idx] = (fun(X + E) - fun(X - E)) / (2 * h)
    return G


def gradient_with_error(fun, arrays, h: float = 1e-5):
    """Gradients of the scalar ``fun(*arrays)`` in each array, with an entrywise error estimate
    ``|d_h - d_2h| / 3 + 4 eps max(|f|, 1) / h``; returns (grads, errors)."""
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    base = abs(fun(*arrays))
    grads, errs = [], []
    for k, a in enumerate(arrays):
        def f_k(x, k=k):
            return fun(*arrays[:k], x, *arrays[k + 1:])
        d1, d2 = central_difference(f_k, a, h), central_difference(f_k, a, 2 * h)
        grads.append(d1)
        errs.append(np.abs(d1 - d2) / 3 + 4 * EPS * max(base, 1.0) / h)
    return grads, errs
