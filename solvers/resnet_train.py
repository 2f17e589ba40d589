"""The residual network of Sander's thesis, chapter 3 (eq. (3.3)), its loss, backpropagation and the
depth-scaled gradient descent that discretises the training gradient flow (3.4).

Model (weights indexed by depth ``k = 1..L``; stored 0-based, ``V[k-1] = V_k``)::

    h_0 = A x,   h_{k+1} = h_k + 1/(L sqrt m) V_{k+1} sigma(W_{k+1} h_k / sqrt q),   F(x) = B h_L
    loss = 1/n sum_i |F(x_i) - y_i|^2

Shapes: samples are rows, ``X (n, d)``, ``Y (n, d')``; ``A (q, d)``, ``V (L, q, m)``, ``W (L, m, q)``,
``B (d', q)``.  Hidden states ``H (L+1, n, q)``.

Backpropagation (the *corrected* (3.13)/(3.15), catalogue E8): with ``p_L = 2 B^T (F - y)`` and
``p_k = p_{k+1} + (1/L) d_1 f(h_k, Z_{k+1})^T p_{k+1}`` (transpose!), the gradient in ``Z_k`` uses the
backward state ``p_k`` at the *output* of layer ``k``::

    dl/dV_k = 1/(nL sqrt m) sum_i p_{k,i} sigma(W_k h_{k-1,i}/sqrt q)^T
    dl/dW_k = 1/(nL sqrt(mq)) sum_i [sigma'(.) * (V_k^T p_{k,i})] h_{k-1,i}^T
    dl/dA = 1/n sum_i p_{0,i} x_i^T,     dl/dB = 2/n sum_i (F(x_i) - y_i) h_{L,i}^T

``grads_numpy(..., variant=...)`` also evaluates the two printed forms (no transpose in (3.13);
``p_{k-1}`` in (3.15)) so that the claims can refute them.

Training: gradient descent with learning rate ``L * eta`` on ``Z_k = (V_k, W_k)`` and ``eta`` on
``A, B`` is the explicit Euler scheme of step ``eta`` for (3.4); ``steps`` iterations are GF time
``steps * eta`` (catalogue §1, "GF time versus iterations").

``grads``/``train`` are Numba kernels (``cache=True``, float64); ``grads_numpy``/``train_numpy`` are
the NumPy references.  Both raise ``ValueError`` naming the argument on bad input.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import erf

__all__ = ["ACTIVATIONS", "activation", "check_model", "forward_numpy", "loss_numpy", "grads_numpy",
           "grads", "train", "train_numpy", "init_weights", "depth_index", "weight_gaps"]

ACTIVATIONS = ("gelu", "tanh", "relu", "identity")
_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _act_id(act: str) -> int:
    try:
        return ACTIVATIONS.index(act)
    except ValueError:
        raise ValueError(f"activation {act!r} is unknown (known: {', '.join(ACTIVATIONS)})") from None


def activation(z, act: str):
    """``sigma(z)`` and ``sigma'(z)`` elementwise (GELU is the exact erf form ``z Phi(z)``;
    ReLU'(0) := 0)."""
    z = np.asarray(z, dtype=float)
    a = _act_id(act)
    if a == 0:
        Phi = 0.5 * (1.0 + erf(z / _SQRT2))
        return z * Phi, Phi + z * _INV_SQRT2PI * np.exp(-0.5 * z * z)
    if a == 1:
        t = np.tanh(z)
        return t, 1.0 - t * t
    if a == 2:
        return np.maximum(z, 0.0), (z > 0).astype(float)
    return z.copy(), np.ones_like(z)


def check_model(X, Y, A, V, W, B, act: str = "gelu"):
    """Validate shapes and values; return float64 C-contiguous copies ``(X, Y, A, V, W, B)``."""
    _act_id(act)
    names = ("X", "Y", "A", "V", "W", "B")
    arrs = []
    for nm, a in zip(names, (X, Y, A, V, W, B)):
        a = np.asarray(a)
        if not np.issubdtype(a.dtype, np.number):
            raise ValueError(f"{nm} must be a numeric array, got dtype {a.dtype}")
        a = np.ascontiguousarray(a, dtype=float)
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{nm} contains NaN or inf")
        arrs.append(a)
    X, Y, A, V, W, B = arrs
    if X.ndim != 2 or Y.ndim != 2 or X.shape[0] != Y.shape[0] or X.shape[0] < 1:
        raise ValueError(f"X and Y must have shapes (n, d) and (n, d') with n >= 1, got {X.shape} and {Y.shape}")
    if V.ndim != 3 or W.ndim != 3 or V.shape[0] != W.shape[0] or V.shape[0] < 1:
        raise ValueError(f"V and W must have shapes (L, q, m) and (L, m, q) with L >= 1, got {V.shape} and {W.shape}")
    L, q, m = V.shape
    if W.shape != (L, m, q):
        raise ValueError(f"W must have shape (L, m, q) = {(L, m, q)} to match V {V.shape}, got {W.shape}")
    if A.shape != (q, X.shape[1]):
        raise ValueError(f"A must have shape (q, d) = {(q, X.shape[1])}, got {A.shape}")
    if B.shape != (Y.shape[1], q):
        raise ValueError(f"B must have shape (d', q) = {(Y.shape[1], q)}, got {B.shape}")
    return X, Y, A, V, W, B


# ---------------------------------------------------------------------------
# NumPy reference
def forward_numpy(X, A, V, W, B, act: str = "gelu"):
    """Hidden states ``H (L+1, n, q)`` and outputs ``F (n, d')``."""
    L, q, m = V.shape
    H = np.empty((L + 1, X.shape[0], q))
    H[0] = X @ A.T
    c = 1.0 / (L * math.sqrt(m))
    for k in range(L):
        s, _ = activation(H[k] @ W[k].T / math.sqrt(q), act)
        H[k + 1] = H[k] + c * (s @ V[k].T)
    return H, H[L] @ B.T


def loss_numpy(X, Y, A, V, W, B, act: str = "gelu") -> float:
    _, F = forward_numpy(X, A, V, W, B, act)
    return float(np.sum((F - Y) ** 2) / X.shape[0])


def grads_numpy(X, Y, A, V, W, B, act: str = "gelu", variant: str = "true"):
    """``(loss, dA, dV, dW, dB)`` by backpropagation.  ``variant``: ``"true"`` (corrected (3.13),
    (3.15)); ``"printed_313"`` (no transpose in the backward recursion); ``"printed_315"`` (the
    gradient of ``Z_k`` uses ``p_{k-1}``, the backward state at the layer's input)."""
    if variant not in ("true", "printed_313", "printed_315"):
        raise ValueError(f"variant {variant!r} is unknown (true, printed_313, printed_315)")
    n = X.shape[0]
    L, q, m = V.shape
    H, F = forward_numpy(X, A, V, W, B, act)
    R = F - Y
    loss = float(np.sum(R * R) / n)
    dB = 2.0 / n * R.T @ H[L]
    P = 2.0 / n * R @ B                         # rows p_{L,i}/n
    dV, dW = np.empty_like(V), np.empty_like(W)
    c = 1.0 / (L * math.sqrt(m))
    sq = math.sqrt(q)
    for k in range(L - 1, -1, -1):              # layer k+1 of the thesis
        s, ds = activation(H[k] @ W[k].T / sq, act)
        if variant == "printed_313":            # p_k = p_{k+1} + (1/L) d1f p_{k+1}  (no transpose)
            Pin = P + c / sq * (((P @ W[k].T) * ds) @ V[k].T)
        else:
            Pin = P + c / sq * (((P @ V[k]) * ds) @ W[k])
        Puse = Pin if variant == "printed_315" else P
        dV[k] = c * Puse.T @ s
        dW[k] = c / sq * ((Puse @ V[k]) * ds).T @ H[k]
        P = Pin
    dA = P.T @ X
    return loss, dA, dV, dW, dB


def train_numpy(X, Y, A, V, W, B, act: str = "gelu", eta: float = 1e-2, steps: int = 500,
                train_AB: bool = False, every: int = 0):
    """Gradient descent with lr ``L eta`` on ``V, W`` (and ``eta`` on ``A, B`` when ``train_AB``).

    Returns a dict: ``A, V, W, B`` final; ``loss (steps+1,)``; ``gaps (steps+1, 4)`` with, at each
    iterate, ``max_k |V_{k+1}-V_k|_F``, ``max_k |W_{k+1}-W_k|_F``, ``max_k |Z_{k+1}-Z_k|_F`` (Frobenius norm
    of the pair) and ``max_k (|dV|_F + |dW|_F)`` (the norm of l.1613); ``pl (steps+1,)`` the ratio
    ``(|dA|^2 + L sum_k |dZ_k|^2 + |dB|^2) / loss`` (Def 3.5 with the trained blocks only); and
    ``snapshots`` (``V, W`` every ``every`` steps, the first and last included) when ``every > 0``."""
    X, Y, A, V, W, B = check_model(X, Y, A, V, W, B, act)
    eta, steps = _check_train(eta, steps, every)
    L = V.shape[0]
    loss = np.empty(steps + 1)
    gaps = np.empty((steps + 1, 4))
    pl = np.empty(steps + 1)
    snaps_V, snaps_W, snap_t = [], [], []
    for it in range(steps + 1):
        gaps[it] = weight_gaps(V, W)
        if every and (it % every == 0 or it == steps):
            snaps_V.append(V.copy()); snaps_W.append(W.copy()); snap_t.append(it * eta)
        lo, dA, dV, dW, dB = grads_numpy(X, Y, A, V, W, B, act)
        loss[it] = lo
        g2 = L * (np.sum(dV * dV) + np.sum(dW * dW)) + (np.sum(dA * dA) + np.sum(dB * dB) if train_AB else 0.0)
        pl[it] = g2 / lo if lo > 0 else np.inf
        if it == steps:
            break
        V = V - L * eta * dV
        W = W - L * eta * dW
        if train_AB:
            A = A - eta * dA
            B = B - eta * dB
    out = {"A": A, "V": V, "W": W, "B": B, "loss": loss, "gaps": gaps, "pl": pl}
    if every:
        out.update(snap_V=np.array(snaps_V), snap_W=np.array(snaps_W), snap_t=np.array(snap_t))
    return out


def _check_train(eta, steps, every):
    eta = float(eta)
    if not np.isfinite(eta) or eta <= 0:
        raise ValueError(f"eta={eta!r} must be a positive step (GF time per iteration)")
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps={steps!r} must be a non-negative integer")
    if int(every) != every or every < 0:
        raise ValueError(f"every={every!r} must be a non-negative integer")
    return eta, int(steps)


def weight_gaps(V, W):
    """``[max_k |V_{k+1}-V_k|_F, max_k |W_{k+1}-W_k|_F, max_k |Z_{k+1}-Z_k|_F, max_k (|dV|_F+|dW|_F)]``."""
    if V.shape[0] < 2:
        return np.zeros(4)
    a = np.sqrt(np.sum(np.diff(V, axis=0) ** 2, axis=(1, 2)))
    b = np.sqrt(np.sum(np.diff(W, axis=0) ** 2, axis=(1, 2)))
    return np.array([a.max(), b.max(), np.sqrt(a * a + b * b).max(), (a + b).max()])


# ---------------------------------------------------------------------------
# Numba kernels
@njit(cache=True)
def _act_nb(Z, aid, S, D):
    n, m = Z.shape
    for i in range(n):
        for j in range(m):
            z = Z[i, j]
            if aid == 0:
                Phi = 0.5 * (1.0 + math.erf(z / _SQRT2))
                S[i, j] = z * Phi
                D[i, j] = Phi + z * _INV_SQRT2PI * math.exp(-0.5 * z * z)
            elif aid == 1:
                t = math.tanh(z)
                S[i, j] = t
                D[i, j] = 1.0 - t * t
            elif aid == 2:
                if z > 0.0:
                    S[i, j] = z
                    D[i, j] = 1.0
                else:
                    S[i, j] = 0.0
                    D[i, j] = 0.0
            else:
                S[i, j] = z
                D[i, j] = 1.0


@njit(cache=True)
def _grads_nb(X, Y, A, V, W, B, aid, H, S, D, dA, dV, dW, dB):
    n = X.shape[0]
    L, q, m = V.shape
    c = 1.0 / (L * math.sqrt(m))
    sq = math.sqrt(q)
    H[0] = np.dot(X, A.T)
    for k in range(L):
        _act_nb(np.dot(H[k], W[k].T) / sq, aid, S[k], D[k])
        H[k + 1] = H[k] + c * np.dot(S[k], V[k].T)
    F = np.dot(H[L], B.T)
    R = F - Y
    loss = np.sum(R * R) / n
    dB[:, :] = (2.0 / n) * np.dot(R.T, H[L])
    P = (2.0 / n) * np.dot(R, B)
    for k in range(L - 1, -1, -1):
        G = np.dot(P, V[k]) * D[k]
        dV[k] = c * np.dot(P.T, S[k])
        dW[k] = (c / sq) * np.dot(G.T, H[k])
        P = P + (c / sq) * np.dot(G, W[k])
    dA[:, :] = np.dot(P.T, X)
    return loss


def grads(X, Y, A, V, W, B, act: str = "gelu"):
    """Numba kernel: ``(loss, dA, dV, dW, dB)`` (corrected backpropagation)."""
    X, Y, A, V, W, B = check_model(X, Y, A, V, W, B, act)
    L, q, m = V.shape
    n = X.shape[0]
    H = np.empty((L + 1, n, q))
    S = np.empty((L, n, m))
    D = np.empty((L, n, m))
    dA, dV, dW, dB = np.empty_like(A), np.empty_like(V), np.empty_like(W), np.empty_like(B)
    loss = _grads_nb(X, Y, A, V, W, B, _act_id(act), H, S, D, dA, dV, dW, dB)
    return float(loss), dA, dV, dW, dB


@njit(cache=True)
def _gaps_nb(V, W, out):
    L = V.shape[0]
    for j in range(4):
        out[j] = 0.0
    for k in range(L - 1):
        a = math.sqrt(np.sum((V[k + 1] - V[k]) ** 2))
        b = math.sqrt(np.sum((W[k + 1] - W[k]) ** 2))
        out[0] = max(out[0], a)
        out[1] = max(out[1], b)
        out[2] = max(out[2], math.sqrt(a * a + b * b))
        out[3] = max(out[3], a + b)


@njit(cache=True)
def _train_nb(X, Y, A, V, W, B, aid, eta, steps, train_AB, every, loss, gaps, pl, snap_V, snap_W):
    n = X.shape[0]
    L, q, m = V.shape
    H = np.empty((L + 1, n, q))
    S = np.empty((L, n, m))
    D = np.empty((L, n, m))
    dA, dV, dW, dB = np.empty_like(A), np.empty_like(V), np.empty_like(W), np.empty_like(B)
    js = 0
    for it in range(steps + 1):
        _gaps_nb(V, W, gaps[it])
        if every > 0 and (it % every == 0 or it == steps):
            snap_V[js] = V
            snap_W[js] = W
            js += 1
        lo = _grads_nb(X, Y, A, V, W, B, aid, H, S, D, dA, dV, dW, dB)
        loss[it] = lo
        g2 = L * (np.sum(dV * dV) + np.sum(dW * dW))
        if train_AB:
            g2 += np.sum(dA * dA) + np.sum(dB * dB)
        pl[it] = g2 / lo if lo > 0 else np.inf
        if it == steps:
            break
        V -= (L * eta) * dV
        W -= (L * eta) * dW
        if train_AB:
            A -= eta * dA
            B -= eta * dB


def train(X, Y, A, V, W, B, act: str = "gelu", eta: float = 1e-2, steps: int = 500,
          train_AB: bool = False, every: int = 0):
    """Numba kernel of :func:`train_numpy` (same return value)."""
    X, Y, A, V, W, B = check_model(X, Y, A, V, W, B, act)
    eta, steps = _check_train(eta, steps, every)
    L, q, m = V.shape
    nsnap = (steps // every + 1 + (steps % every != 0)) if every else 0
    snap_V = np.empty((nsnap, L, q, m))
    snap_W = np.empty((nsnap, L, m, q))
    loss, gaps, pl = np.empty(steps + 1), np.empty((steps + 1, 4)), np.empty(steps + 1)
    A, V, W, B = A.copy(), V.copy(), W.copy(), B.copy()
    _train_nb(X, Y, A, V, W, B, _act_id(act), eta, steps, bool(train_AB), int(every), loss, gaps, pl,
              snap_V, snap_W)
    out = {"A": A, "V": V, "W": W, "B": B, "loss": loss, "gaps": gaps, "pl": pl}
    if every:
        t = [it * eta for it in range(0, steps + 1, every)]
        if steps % every:
            t.append(steps * eta)
        out.update(snap_V=snap_V, snap_W=snap_W, snap_t=np.array(t))
    return out


# ---------------------------------------------------------------------------
# initialisation and the depth interpolation (3.8)
def init_weights(d: int, dp: int, q: int, m: int, L: int, rng, init: str = "tied", frame: str = "stack"):
    """``A, V, W, B`` of Sec 3.3: ``V_k = 0``; ``W_k = W ~ N(0,1)`` tied (``init='tied'``) or i.i.d. per layer
    (``'iid'``).  ``frame='stack'``: ``A = (I_d; 0)``, ``B = (0, I_d')`` (needs q >= max(d, d'));
    ``frame='identity'``: the experiments' ``A = B = I`` (needs q = d = d')."""
    if init not in ("tied", "iid"):
        raise ValueError(f"init={init!r} must be 'tied' or 'iid'")
    if q < max(d, dp):
        raise ValueError(f"q={q} must be >= max(d, d') = {max(d, dp)}")
    V = np.zeros((L, q, m))
    if init == "tied":
        W = np.broadcast_to(rng.standard_normal((m, q)), (L, m, q)).copy()
    else:
        W = rng.standard_normal((L, m, q))
    if frame == "identity":
        if not (q == d == dp):
            raise ValueError(f"frame='identity' needs q = d = d', got q={q}, d={d}, d'={dp}")
        return np.eye(q), V, W, np.eye(q)
    if frame != "stack":
        raise ValueError(f"frame={frame!r} must be 'stack' or 'identity'")
    A = np.zeros((q, d))
    A[:d, :d] = np.eye(d)
    B = np.zeros((dp, q))
    B[:, q - dp:] = np.eye(dp)
    return A, V, W, B


def depth_index(L: int, s):
    """0-based layer of the interpolation (3.8): ``Z^L(s) = Z_{floor((L-1)s)+1}``, ``s in [0, 1]``."""
    s = np.asarray(s, dtype=float)
    if np.any((s < 0) | (s > 1)):
        raise ValueError("s must lie in [0, 1]")
    return np.floor((L - 1) * s + 1e-12).astype(int)
