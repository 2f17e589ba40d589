"""Scaled ResNets and HeunNets as ODE discretisations (Sander, thesis ch. 2): forward pass, exact
backpropagation on stored activations, approximate reversal of the activations, and the memory-free
(adjoint) backpropagation that recomputes the activations on the fly.

Residual function (the catalogue's harness, sander_part1 §2.3)::

    f(x, theta_n) = tanh(W_n x + b_n),   W_n of shape (d, d), b_n of shape (d,)

Weights are stacked: ``W`` of shape ``(K, d, d)``, ``b`` of shape ``(K, d)``; states are batched,
``x`` of shape ``(B, d)``; the step is ``h = 1/N``.

* Euler ResNet (2.1), ``K >= N`` parameter sets ``theta_0..theta_{N-1}``::

      x_{n+1} = x_n + h f(x_n, theta_n)
  reversal (2.6)::   x~_n = x~_{n+1} - h f(x~_{n+1}, theta_n)
  backprop (2.3)/(2.7)::  a = h (1 - f^2) * g_{n+1};  dW_n = a x_n^T;  db_n = a;  g_n = g_{n+1} + W_n^T a

* HeunNet (2.8), ``K >= N + 1`` parameter sets ``theta_0..theta_N`` (catalogue A4/E17: the printed
  "theta_1..theta_N" is one short, step N-1 uses theta_N)::

      y_n = x_n + h f(x_n, theta_n);   x_{n+1} = x_n + h/2 (f(x_n, theta_n) + f(y_n, theta_{n+1}))
  reversal (2.9)::  y~_n = x~_{n+1} - h f(x~_{n+1}, theta_{n+1});
                    x~_n = x~_{n+1} - h/2 (f(x~_{n+1}, theta_{n+1}) + f(y~_n, theta_n))

The backward functions take ``g_N = dLoss/dx_N`` (shape ``(B, d)``) and return ``(dW, db, g_0)``, the
gradients summed over the batch; the loss is the caller's.  ``*_adjoint`` kernels never store the
trajectory (O(1) memory in N): they reverse one step and backpropagate through it at once, and give the
same numbers as ``*_backward`` on the output of ``*_reverse`` up to summation order.

Every Numba kernel (``cache=True``, float64) has a NumPy reference ``*_numpy`` with the same signature;
the tests check them against each other and the backward passes against central finite differences
(:mod:`solvers.fd`).  Rounding model (used by the claims): each layer evaluation costs about
``(d + 2) eps`` relative, and errors are carried through at most ``(1 + h Lf)^N <= e^{Lf}`` growth,
so a full pass is accurate to ``~ N (d + 2) eps e^{Lf} max|x|``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["check_net", "euler_forward", "euler_forward_numpy", "euler_reverse", "euler_reverse_numpy",
           "euler_backward", "euler_backward_numpy", "euler_adjoint", "euler_adjoint_numpy",
           "heun_forward", "heun_forward_numpy", "heun_reverse", "heun_reverse_numpy",
           "heun_backward", "heun_backward_numpy", "heun_adjoint", "heun_adjoint_numpy",
           "smooth_weights", "iid_weights", "half_sq_loss"]


# ---------------------------------------------------------------------------
# input checks
def check_net(x, W, b, N: int, heun: bool = False):
    """Validate shapes and values; return contiguous float64 arrays ``(x, W, b)``.

    Raises ValueError naming the argument and the constraint."""
    N = int(N)
    if N < 1:
        raise ValueError(f"N={N} must be >= 1 (the depth)")
    x, W, b = (np.asarray(a, dtype=float) for a in (x, W, b))
    if x.ndim != 2:
        raise ValueError(f"x must have shape (B, d) (a batch of states), got {x.shape}")
    d = x.shape[1]
    if W.ndim != 3 or W.shape[1:] != (d, d):
        raise ValueError(f"W must have shape (K, d, d) = (K, {d}, {d}), got {W.shape}")
    need = N + 1 if heun else N
    if W.shape[0] < need:
        raise ValueError(f"W holds {W.shape[0]} layers; a {'HeunNet' if heun else 'ResNet'} of depth N={N} "
                         f"needs {need} parameter sets")
    if b.shape != (W.shape[0], d):
        raise ValueError(f"b must have shape (K, d) = {(W.shape[0], d)}, got {b.shape}")
    for nm, a in (("x", x), ("W", W), ("b", b)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{nm} has a NaN or infinite entry")
    return np.ascontiguousarray(x), np.ascontiguousarray(W), np.ascontiguousarray(b)


def smooth_weights(N: int, d: int, rng: np.random.Generator, heun: bool = False, scale: float = 1.0):
    """The catalogue's smooth family: W_n = W0 + sin(2 pi n/N) W1, b_n = b0 + (n/N) b1 (n = 0..K-1)."""
    W0, W1 = scale * rng.standard_normal((2, d, d)) / np.sqrt(d)
    b0, b1 = rng.standard_normal((2, d))
    s = np.arange(N + 1 if heun else N) / N
    return W0 + np.sin(2 * np.pi * s)[:, None, None] * W1, b0 + s[:, None] * b1


def iid_weights(N: int, d: int, rng: np.random.Generator, heun: bool = False, scale: float = 1.0):
    """The i.i.d. family (no depth smoothness): W_n = W0 + 0.8 U_n, b_n = b0 + 0.5 u_n with U_n, u_n i.i.d.
    uniform of unit variance (entries in [-sqrt3, sqrt3], / sqrt(d) for U_n).  Bounded, so that Assumption 2.8
    holds with N-independent C_f, L_f; the catalogue used Gaussians, whose max_n |W_n|_2 creeps up with N."""
    K = N + 1 if heun else N
    W0 = scale * rng.standard_normal((d, d)) / np.sqrt(d)
    b0 = rng.standard_normal(d)
    r3 = np.sqrt(3.0)
    return (W0 + 0.8 * scale * rng.uniform(-r3, r3, (K, d, d)) / np.sqrt(d),
            b0 + 0.5 * rng.uniform(-r3, r3, (K, d)))


def half_sq_loss(xN, y):
    """Loss 1/2 |x_N - y|^2 (summed over the batch) and its gradient in x_N."""
    r = xN - y
    return 0.5 * float(np.sum(r * r)), r


# ---------------------------------------------------------------------------
# Numba building blocks
@njit(cache=True)
def _f(x, W, b, out):
    """out[i] = tanh(W x[i] + b) for a batch x (B, d)."""
    B, d = x.shape
    for i in range(B):
        for j in range(d):
            s = b[j]
            for k in range(d):
                s += W[j, k] * x[i, k]
            out[i, j] = np.tanh(s)


@njit(cache=True)
def _back_layer(x, fx, W, g, c, dW, db, gx):
    """Through u = tanh(W x + b) with upstream weight c * g: a = c g (1 - u^2); dW += a x^T; db += a;
    gx = W^T a (returned in gx, overwritten)."""
    B, d = x.shape
    for i in range(B):
        for j in range(d):
            gx[i, j] = 0.0
    for i in range(B):
        for j in range(d):
            a = c * g[i, j] * (1.0 - fx[i, j] * fx[i, j])
            db[j] += a
            for k in range(d):
                dW[j, k] += a * x[i, k]
                gx[i, k] += W[j, k] * a


# ---------------------------------------------------------------------------
# Euler ResNet
@njit(cache=True)
def _euler_forward(x0, W, b, N):
    B, d = x0.shape
    xs = np.empty((N + 1, B, d))
    xs[0] = x0
    fx = np.empty((B, d))
    h = 1.0 / N
    for n in range(N):
        _f(xs[n], W[n], b[n], fx)
        xs[n + 1] = xs[n] + h * fx
    return xs


@njit(cache=True)
def _euler_reverse(xN, W, b, N):
    B, d = xN.shape
    xs = np.empty((N + 1, B, d))
    xs[N] = xN
    fx = np.empty((B, d))
    h = 1.0 / N
    for n in range(N - 1, -1, -1):
        _f(xs[n + 1], W[n], b[n], fx)
        xs[n] = xs[n + 1] - h * fx
    return xs


@njit(cache=True)
def _euler_backward(xs, W, b, gN, N):
    B, d = gN.shape
    dW = np.zeros((W.shape[0], d, d))
    db = np.zeros((W.shape[0], d))
    g = gN.copy()
    fx = np.empty((B, d))
    gx = np.empty((B, d))
    h = 1.0 / N
    for n in range(N - 1, -1, -1):
        _f(xs[n], W[n], b[n], fx)
        _back_layer(xs[n], fx, W[n], g, h, dW[n], db[n], gx)
        g += gx
    return dW, db, g


@njit(cache=True)
def _euler_adjoint(xN, W, b, gN, N):
    B, d = gN.shape
    dW = np.zeros((W.shape[0], d, d))
    db = np.zeros((W.shape[0], d))
    g = gN.copy()
    x = xN.copy()
    fx = np.empty((B, d))
    gx = np.empty((B, d))
    h = 1.0 / N
    for n in range(N - 1, -1, -1):
        _f(x, W[n], b[n], fx)
        x = x - h * fx                       # (2.6): x~_n from x~_{n+1} with theta_n
        _f(x, W[n], b[n], fx)
        _back_layer(x, fx, W[n], g, h, dW[n], db[n], gx)   # (2.7) at x~_n
        g += gx
    return dW, db, g, x


def euler_forward(x0, W, b, N):
    """Trajectory ``(N+1, B, d)`` of the Euler ResNet (2.1) (Numba)."""
    x0, W, b = check_net(x0, W, b, N)
    return _euler_forward(x0, W, b, int(N))


def euler_reverse(xN, W, b, N):
    """Reconstructed trajectory ``(N+1, B, d)`` by the reversal (2.6), ``x~_N = x_N`` (Numba)."""
    xN, W, b = check_net(xN, W, b, N)
    return _euler_reverse(xN, W, b, int(N))


def euler_backward(xs, W, b, gN, N):
    """Backprop (2.3) on the activations ``xs`` (stored, or reconstructed: then it is (2.7)).  Numba."""
    xs = np.ascontiguousarray(xs, dtype=float)
    _, W, b = check_net(xs[0], W, b, N)
    return _euler_backward(xs, W, b, np.ascontiguousarray(gN, dtype=float), int(N))


def euler_adjoint(xN, W, b, gN, N):
    """Memory-free backprop: (2.6) and (2.7) interleaved; returns ``(dW, db, g_0, x~_0)`` (Numba)."""
    xN, W, b = check_net(xN, W, b, N)
    return _euler_adjoint(xN, W, b, np.ascontiguousarray(gN, dtype=float), int(N))


# NumPy references ----------------------------------------------------------
def _fn(x, W, b):
    return np.tanh(x @ W.T + b)


def euler_forward_numpy(x0, W, b, N):
    x0, W, b = check_net(x0, W, b, N)
    xs = [x0]
    for n in range(N):
        xs.append(xs[-1] + _fn(xs[-1], W[n], b[n]) / N)
    return np.array(xs)


def euler_reverse_numpy(xN, W, b, N):
    xN, W, b = check_net(xN, W, b, N)
    xs = [xN]
    for n in range(N - 1, -1, -1):
        xs.append(xs[-1] - _fn(xs[-1], W[n], b[n]) / N)
    return np.array(xs[::-1])


def euler_backward_numpy(xs, W, b, gN, N):
    xs = np.asarray(xs, dtype=float)
    _, W, b = check_net(xs[0], W, b, N)
    dW, db = np.zeros_like(W), np.zeros_like(b)
    g = np.array(gN, dtype=float)
    for n in range(N - 1, -1, -1):
        u = _fn(xs[n], W[n], b[n])
        a = g * (1 - u * u) / N
        dW[n] = a.T @ xs[n]
        db[n] = a.sum(0)
        g = g + a @ W[n]
    return dW, db, g


def euler_adjoint_numpy(xN, W, b, gN, N):
    xN, W, b = check_net(xN, W, b, N)
    dW, db = np.zeros_like(W), np.zeros_like(b)
    g, x = np.array(gN, dtype=float), xN.copy()
    for n in range(N - 1, -1, -1):
        x = x - _fn(x, W[n], b[n]) / N
        u = _fn(x, W[n], b[n])
        a = g * (1 - u * u) / N
        dW[n] = a.T @ x
        db[n] = a.sum(0)
        g = g + a @ W[n]
    return dW, db, g, x


# ---------------------------------------------------------------------------
# HeunNet
@njit(cache=True)
def _heun_forward(x0, W, b, N):
    B, d = x0.shape
    xs = np.empty((N + 1, B, d))
    ys = np.empty((N, B, d))
    xs[0] = x0
    f1 = np.empty((B, d))
    f2 = np.empty((B, d))
    h = 1.0 / N
    for n in range(N):
        _f(xs[n], W[n], b[n], f1)
        ys[n] = xs[n] + h * f1
        _f(ys[n], W[n + 1], b[n + 1], f2)
        xs[n + 1] = xs[n] + 0.5 * h * (f1 + f2)
    return xs, ys


@njit(cache=True)
def _heun_reverse(xN, W, b, N):
    B, d = xN.shape
    xs = np.empty((N + 1, B, d))
    ys = np.empty((N, B, d))
    xs[N] = xN
    f1 = np.empty((B, d))
    f2 = np.empty((B, d))
    h = 1.0 / N
    for n in range(N - 1, -1, -1):
        _f(xs[n + 1], W[n + 1], b[n + 1], f1)
        ys[n] = xs[n + 1] - h * f1
        _f(ys[n], W[n], b[n], f2)
        xs[n] = xs[n + 1] - 0.5 * h * (f1 + f2)
    return xs, ys


@njit(cache=True)
def _heun_step_back(x, W, b, n, g, h, dW, db, y, f1, f2, gy, gx):
    """Backprop through one Heun step n given x_n (forward quantities recomputed from x_n)."""
    _f(x, W[n], b[n], f1)
    y[:, :] = x + h * f1
    _f(y, W[n + 1], b[n + 1], f2)
    _back_layer(y, f2, W[n + 1], g, 0.5 * h, dW[n + 1], db[n + 1], gy)   # gy = dL/dy_n
    c = 0.5 * g + gy                                                      # weight on f(x_n) (times h)
    _back_layer(x, f1, W[n], c, h, dW[n], db[n], gx)
    g += gy + gx


@njit(cache=True)
def _heun_backward(xs, W, b, gN, N):
    B, d = gN.shape
    dW = np.zeros((W.shape[0], d, d))
    db = np.zeros((W.shape[0], d))
    g = gN.copy()
    y = np.empty((B, d))
    f1 = np.empty((B, d))
    f2 = np.empty((B, d))
    gy = np.empty((B, d))
    gx = np.empty((B, d))
    h = 1.0 / N
    for n in range(N - 1, -1, -1):
        _heun_step_back(xs[n], W, b, n, g, h, dW, db, y, f1, f2, gy, gx)
    return dW, db, g


@njit(cache=True)
def _heun_adjoint(xN, W, b, gN, N):
    B, d = gN.shape
    dW = np.zeros((W.shape[0], d, d))
    db = np.zeros((W.shape[0], d))
    g = gN.copy()
    x = xN.copy()
    y = np.empty((B, d))
    f1 = np.empty((B, d))
    f2 = np.empty((B, d))
    gy = np.empty((B, d))
    gx = np.empty((B, d))
    h = 1.0 / N
    for n in range(N - 1, -1, -1):
        _f(x, W[n + 1], b[n + 1], f1)                  # (2.9)
        y[:, :] = x - h * f1
        _f(y, W[n], b[n], f2)
        x = x - 0.5 * h * (f1 + f2)
        _heun_step_back(x, W, b, n, g, h, dW, db, y, f1, f2, gy, gx)
    return dW, db, g, x


def heun_forward(x0, W, b, N):
    """HeunNet (2.8): ``(xs (N+1, B, d), ys (N, B, d))`` (Numba); needs N+1 parameter sets."""
    x0, W, b = check_net(x0, W, b, N, heun=True)
    return _heun_forward(x0, W, b, int(N))


def heun_reverse(xN, W, b, N):
    """Reversal (2.9): reconstructed ``(xs, ys)`` (Numba)."""
    xN, W, b = check_net(xN, W, b, N, heun=True)
    return _heun_reverse(xN, W, b, int(N))


def heun_backward(xs, W, b, gN, N):
    """Exact HeunNet backprop on the activations ``xs`` (the y_n are recomputed from x_n).  Numba."""
    xs = np.ascontiguousarray(xs, dtype=float)
    _, W, b = check_net(xs[0], W, b, N, heun=True)
    return _heun_backward(xs, W, b, np.ascontiguousarray(gN, dtype=float), int(N))


def heun_adjoint(xN, W, b, gN, N):
    """Memory-free HeunNet backprop with the reversal (2.9); returns ``(dW, db, g_0, x~_0)`` (Numba)."""
    xN, W, b = check_net(xN, W, b, N, heun=True)
    return _heun_adjoint(xN, W, b, np.ascontiguousarray(gN, dtype=float), int(N))


def heun_forward_numpy(x0, W, b, N):
    x0, W, b = check_net(x0, W, b, N, heun=True)
    xs, ys = [x0], []
    for n in range(N):
        f1 = _fn(xs[-1], W[n], b[n])
        ys.append(xs[-1] + f1 / N)
        xs.append(xs[-1] + (f1 + _fn(ys[-1], W[n + 1], b[n + 1])) / (2 * N))
    return np.array(xs), np.array(ys)


def heun_reverse_numpy(xN, W, b, N):
    xN, W, b = check_net(xN, W, b, N, heun=True)
    xs, ys = [xN], []
    for n in range(N - 1, -1, -1):
        f1 = _fn(xs[-1], W[n + 1], b[n + 1])
        ys.append(xs[-1] - f1 / N)
        xs.append(xs[-1] - (f1 + _fn(ys[-1], W[n], b[n])) / (2 * N))
    return np.array(xs[::-1]), np.array(ys[::-1])


def _heun_step_back_numpy(x, W, b, n, g, N, dW, db):
    f1 = _fn(x, W[n], b[n])
    y = x + f1 / N
    f2 = _fn(y, W[n + 1], b[n + 1])
    a2 = g * (1 - f2 * f2) / (2 * N)
    dW[n + 1] += a2.T @ y
    db[n + 1] += a2.sum(0)
    gy = a2 @ W[n + 1]
    a1 = (0.5 * g + gy) * (1 - f1 * f1) / N
    dW[n] += a1.T @ x
    db[n] += a1.sum(0)
    return g + gy + a1 @ W[n]


def heun_backward_numpy(xs, W, b, gN, N):
    xs = np.asarray(xs, dtype=float)
    _, W, b = check_net(xs[0], W, b, N, heun=True)
    dW, db = np.zeros_like(W), np.zeros_like(b)
    g = np.array(gN, dtype=float)
    for n in range(N - 1, -1, -1):
        g = _heun_step_back_numpy(xs[n], W, b, n, g, N, dW, db)
    return dW, db, g


def heun_adjoint_numpy(xN, W, b, gN, N):
    xN, W, b = check_net(xN, W, b, N, heun=True)
    dW, db = np.zeros_like(W), np.zeros_like(b)
    g, x = np.array(gN, dtype=float), xN.copy()
    for n in range(N - 1, -1, -1):
        f1 = _fn(x, W[n + 1], b[n + 1])
        x = x - (f1 + _fn(x - f1 / N, W[n], b[n])) / (2 * N)
        g = _heun_step_back_numpy(x, W, b, n, g, N, dW, db)
    return dW, db, g, x
