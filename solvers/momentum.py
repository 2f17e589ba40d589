"""Momentum ResNets (Sander, thesis ch. 4): forward rule (4.2), closed-form inverse (4.3),
the exactly reversible multiplication of App. 4.C (Maclaurin et al. 2015), and backpropagation
with the layer Jacobian of App. 4.E.

The residual function is a one-hidden-layer tanh MLP, one per layer (the thesis's
``f(x, theta) = W_2^T tanh(W_1 x + b)``)::

    f(x, theta_n) = W2[n]^T tanh(W1[n] x + b[n]),   W1[n], W2[n] of shape (p, d), b[n] of shape (p,)

Weights of the ``L`` layers are stacked: ``W1, W2`` of shape ``(L, p, d)``, ``b`` of shape ``(L, p)``.
States are batched over samples: ``x, v`` of shape ``(B, d)``.

Forward (4.2)::  v_{n+1} = gamma v_n + (1 - gamma) f(x_n, theta_n);  x_{n+1} = x_n + v_{n+1}
Inverse (4.3)::  x_n = x_{n+1} - v_{n+1};  v_n = (v_{n+1} - (1 - gamma) f(x_n, theta_n)) / gamma

``forward``/``inverse`` are Numba kernels (float64 only); ``forward_numpy``/``inverse_numpy``
are the NumPy references and also the float32 path (NumPy keeps float32 throughout when the
inputs are float32; the Numba kernels are compiled for float64 only, to compile once per process).

Exact multiplication (App. 4.C, Algorithm 1): a value ``c`` (integer) times ``n/d`` with an
information buffer ``i`` (integer)::

    i = i*d + (c mod d);  c = c div d;  c = c*n + (i mod n);  i = i div n

is undone by the same algorithm with ``n`` and ``d`` exchanged.  ``forward_exact``/``inverse_exact``
run (4.2)/(4.3) on a fixed-point representation (integers = round(x * 2**radix), Python integers in
object arrays, so buffers never overflow): ``gamma v`` is the exact multiplication, ``(1-gamma) f(x)``
is quantised deterministically from the fixed-point ``x`` and added, so the inverse subtracts the
very same integer and ``x_0, v_0`` come back bit for bit.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
from numba import njit

__all__ = ["mlp", "mlp_jacobian", "check_inputs", "forward", "forward_numpy", "inverse", "inverse_numpy",
           "trajectory_numpy", "rmul", "rmul_inverse", "forward_exact", "inverse_exact", "to_fixed",
           "from_fixed", "layer_jacobian", "backprop", "random_weights", "as_fraction"]


# ---------------------------------------------------------------------------
# input checks
def check_inputs(x, v, gamma, W1, W2, b, allow_float32: bool = True):
    """Validate shapes and gamma; return float arrays (float32 kept when every input is float32).

    Raises ValueError naming the argument and the constraint."""
    g = float(gamma)
    if not np.isfinite(g) or not (0.0 < g <= 1.0):
        raise ValueError(f"gamma={gamma!r} must lie in (0, 1]: the inverse (4.3) divides by gamma")
    arrs = [np.asarray(a) for a in (x, v, W1, W2, b)]
    names = ("x", "v", "W1", "W2", "b")
    for nm, a in zip(names, arrs):
        if not np.issubdtype(a.dtype, np.number):
            raise ValueError(f"{nm} must be a numeric array, got dtype {a.dtype}")
    x, v, W1, W2, b = arrs
    if x.ndim != 2:
        raise ValueError(f"x must have shape (B, d) (batch of samples), got {x.shape}")
    if v.shape != x.shape:
        raise ValueError(f"v has shape {v.shape}, x has shape {x.shape}: they must match")
    if W1.ndim != 3:
        raise ValueError(f"W1 must have shape (L, p, d) (stacked layers), got {W1.shape}")
    L, p, d = W1.shape
    if d != x.shape[1]:
        raise ValueError(f"W1 has shape {W1.shape}: its last axis must be d={x.shape[1]} (the width of x)")
    if W2.shape != W1.shape:
        raise ValueError(f"W2 has shape {W2.shape}, W1 has shape {W1.shape}: they must match")
    if b.shape != (L, p):
        raise ValueError(f"b has shape {b.shape}, expected (L, p) = {(L, p)}")
    for nm, a in zip(names, (x, v, W1, W2, b)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{nm} has a NaN or infinite entry")
    f32 = allow_float32 and all(a.dtype == np.float32 for a in (x, v, W1, W2, b))
    dt = np.float32 if f32 else np.float64
    return tuple(np.ascontiguousarray(a, dtype=dt) for a in (x, v, W1, W2, b))


def random_weights(L: int, p: int, d: int, rng: np.random.Generator, scale: float = 1.0):
    """Gaussian stacked weights with variance scale/fan-in (W1: 1/d, W2: 1/p), b ~ N(0, 0.1^2)."""
    W1 = rng.standard_normal((L, p, d)) * np.sqrt(scale / d)
    W2 = rng.standard_normal((L, p, d)) * np.sqrt(scale / p)
    b = 0.1 * rng.standard_normal((L, p))
    return W1, W2, b


# ---------------------------------------------------------------------------
# NumPy reference (also the float32 path)
def mlp(x, W1n, W2n, bn):
    """f(x) = W2^T tanh(W1 x + b), batched: x (B, d) -> (B, d)."""
    return np.tanh(x @ W1n.T + bn) @ W2n


def mlp_jacobian(x, W1n, W2n, bn):
    """d f / d x for each sample: (B, d, d), entry [s, i, j] = d f_i / d x_j."""
    s = 1.0 - np.tanh(x @ W1n.T + bn) ** 2          # (B, p)
    return np.einsum("pi,bp,pj->bij", W2n, s, W1n)


def forward_numpy(x0, v0, gamma, W1, W2, b):
    """L steps of (4.2); returns (x_L, v_L)."""
    x, v, W1, W2, b = check_inputs(x0, v0, gamma, W1, W2, b)
    dt = x.dtype.type
    g, omg = dt(gamma), dt(1) - dt(gamma)
    for n in range(W1.shape[0]):
        v = g * v + omg * mlp(x, W1[n], W2[n], b[n])
        x = x + v
    return x, v


def trajectory_numpy(x0, v0, gamma, W1, W2, b):
    """All states of (4.2): arrays (L+1, B, d) for x and v."""
    x, v, W1, W2, b = check_inputs(x0, v0, gamma, W1, W2, b)
    dt = x.dtype.type
    g, omg = dt(gamma), dt(1) - dt(gamma)
    xs, vs = [x], [v]
    for n in range(W1.shape[0]):
        v = g * v + omg * mlp(x, W1[n], W2[n], b[n])
        x = x + v
        xs.append(x)
        vs.append(v)
    return np.stack(xs), np.stack(vs)


def inverse_numpy(xL, vL, gamma, W1, W2, b):
    """L steps of (4.3) from the top; returns the reconstructed (x_0, v_0)."""
    x, v, W1, W2, b = check_inputs(xL, vL, gamma, W1, W2, b)
    dt = x.dtype.type
    g, omg = dt(gamma), dt(1) - dt(gamma)
    for n in range(W1.shape[0] - 1, -1, -1):
        x = x - v
        v = (v - omg * mlp(x, W1[n], W2[n], b[n])) / g
    return x, v


# ---------------------------------------------------------------------------
# Numba kernels (float64)
@njit(cache=True)
def _mlp_row(x, W1n, W2n, bn, out):
    p, d = W1n.shape
    for i in range(d):
        out[i] = 0.0
    for k in range(p):
        s = bn[k]
        for j in range(d):
            s += W1n[k, j] * x[j]
        t = np.tanh(s)
        for i in range(d):
            out[i] += W2n[k, i] * t


@njit(cache=True)
def _forward_kernel(x0, v0, gamma, W1, W2, b):
    B, d = x0.shape
    L = W1.shape[0]
    x = x0.copy()
    v = v0.copy()
    f = np.empty(d)
    omg = 1.0 - gamma
    for s in range(B):
        for n in range(L):
            _mlp_row(x[s], W1[n], W2[n], b[n], f)
            for i in range(d):
                v[s, i] = gamma * v[s, i] + omg * f[i]
                x[s, i] = x[s, i] + v[s, i]
    return x, v


@njit(cache=True)
def _inverse_kernel(xL, vL, gamma, W1, W2, b):
    B, d = xL.shape
    L = W1.shape[0]
    x = xL.copy()
    v = vL.copy()
    f = np.empty(d)
    omg = 1.0 - gamma
    for s in range(B):
        for n in range(L - 1, -1, -1):
            for i in range(d):
                x[s, i] = x[s, i] - v[s, i]
            _mlp_row(x[s], W1[n], W2[n], b[n], f)
            for i in range(d):
                v[s, i] = (v[s, i] - omg * f[i]) / gamma
    return x, v


def forward(x0, v0, gamma, W1, W2, b):
    """Numba kernel of (4.2) (float64): returns (x_L, v_L)."""
    x, v, W1, W2, b = check_inputs(x0, v0, gamma, W1, W2, b, allow_float32=False)
    return _forward_kernel(x, v, float(gamma), W1, W2, b)


def inverse(xL, vL, gamma, W1, W2, b):
    """Numba kernel of (4.3) (float64): returns the reconstructed (x_0, v_0)."""
    x, v, W1, W2, b = check_inputs(xL, vL, gamma, W1, W2, b, allow_float32=False)
    return _inverse_kernel(x, v, float(gamma), W1, W2, b)


# ---------------------------------------------------------------------------
# exact multiplication (App. 4.C)
def _check_ratio(n, d):
    if isinstance(n, bool) or isinstance(d, bool) or int(n) != n or int(d) != d:
        raise ValueError(f"the ratio n/d needs integers, got n={n!r}, d={d!r}")
    if int(n) < 1 or int(d) < 1:
        raise ValueError(f"the ratio n/d needs positive integers, got n={n!r}, d={d!r}")
    return int(n), int(d)


def rmul(c, i, n: int, d: int):
    """Algorithm 1 of App. 4.C: multiply the integer(s) ``c`` by ``n/d`` with the buffer(s) ``i``.

    ``c, i``: Python ints or object arrays of Python ints (floor division and modulo, so negative
    values work).  Returns ``(c', i')``."""
    n, d = _check_ratio(n, d)
    i = i * d
    i = i + c % d
    c = c // d
    c = c * n
    c = c + i % n
    i = i // n
    return c, i


def rmul_inverse(c, i, n: int, d: int):
    """Exact inverse of :func:`rmul` (Algorithm 1 with n and d exchanged)."""
    return rmul(c, i, d, n)


def as_fraction(gamma, max_den: int = 1000) -> Fraction:
    """gamma as a ratio n/d (the closest with d <= max_den)."""
    g = float(gamma)
    if not (0.0 < g <= 1.0):
        raise ValueError(f"gamma={gamma!r} must lie in (0, 1]")
    return Fraction(g).limit_denominator(max_den)


def to_fixed(x, radix: int):
    """Fixed-point integers round(x * 2**radix) as an object array of Python ints."""
    a = np.asarray(x, dtype=np.float64) * 2.0 ** radix
    if not np.all(np.isfinite(a)):
        raise ValueError("to_fixed: non-finite value")
    out = np.empty(a.shape, dtype=object)
    flat = out.reshape(-1)
    for k, val in enumerate(np.rint(a).reshape(-1)):
        flat[k] = int(val)
    return out


def from_fixed(c, radix: int, dtype=np.float64):
    """Floats of the fixed-point integers (deterministic rounding)."""
    den = 1 << radix
    flat = [int(z) / den for z in np.asarray(c, dtype=object).reshape(-1)]  # correctly rounded
    return np.array(flat, dtype=np.float64).reshape(np.shape(c)).astype(dtype)


def _quantised_update(x_int, n_layer, omg, W1, W2, b, radix, dtype):
    xf = from_fixed(x_int, radix, dtype)
    f = mlp(xf, W1[n_layer].astype(dtype), W2[n_layer].astype(dtype), b[n_layer].astype(dtype))
    return to_fixed(np.asarray(omg, dtype=np.float64) * f.astype(np.float64), radix)


def forward_exact(x0, v0, n: int, d: int, W1, W2, b, radix: int = 40, dtype=np.float64):
    """(4.2) with gamma = n/d on fixed-point integers, gamma*v by :func:`rmul` (buffer per coordinate).

    Returns ``(x_int, v_int, buffer)`` (object arrays of Python ints); ``f`` is evaluated in ``dtype``."""
    n, d = _check_ratio(n, d)
    if n > d:
        raise ValueError(f"gamma = n/d = {n}/{d} must lie in (0, 1]")
    x, v, W1, W2, b = check_inputs(x0, v0, n / d, W1, W2, b, allow_float32=False)
    x_int, v_int = to_fixed(x, radix), to_fixed(v, radix)
    buf = np.zeros(x.shape, dtype=object)
    buf[...] = 0
    omg = 1.0 - n / d
    for k in range(W1.shape[0]):
        v_int, buf = rmul(v_int, buf, n, d)
        v_int = v_int + _quantised_update(x_int, k, omg, W1, W2, b, radix, dtype)
        x_int = x_int + v_int
    return x_int, v_int, buf


def inverse_exact(x_int, v_int, buf, n: int, d: int, W1, W2, b, radix: int = 40, dtype=np.float64):
    """Exact inverse of :func:`forward_exact`: returns ``(x0_int, v0_int, buffer)``."""
    n, d = _check_ratio(n, d)
    omg = 1.0 - n / d
    for k in range(np.shape(W1)[0] - 1, -1, -1):
        x_int = x_int - v_int
        v_int = v_int - _quantised_update(x_int, k, omg, W1, W2, b, radix, dtype)
        v_int, buf = rmul_inverse(v_int, buf, n, d)
    return x_int, v_int, buf


# ---------------------------------------------------------------------------
# backpropagation (App. 4.E)
def layer_jacobian(x, gamma, W1n, W2n, bn):
    """Jacobian of z_n = (x_n, v_n) -> z_{n+1} (4.17) per sample, (B, 2d, 2d), in the order (x, v):
    [[I + (1-gamma) F, gamma I], [(1-gamma) F, gamma I]] with F = d f / d x at x_n."""
    x = np.asarray(x, dtype=float)
    B, d = x.shape
    F = mlp_jacobian(x, W1n, W2n, bn)
    I = np.broadcast_to(np.eye(d), (B, d, d))
    top = np.concatenate([I + (1 - gamma) * F, gamma * I], axis=2)
    bot = np.concatenate([(1 - gamma) * F, gamma * I], axis=2)
    return np.concatenate([top, bot], axis=1)


def backprop(x0, v0, gamma, W1, W2, b, gx, gv, recompute: bool = True):
    """Gradient of the loss ``L = sum(gx * x_L) + sum(gv * v_L)`` (any loss: pass its gradient at the
    output) with respect to x0, v0, W1, W2, b, by the recursion of App. 4.E:

        grad_{z_{k-1}} L = J_{k-1}^T grad_{z_k} L,
        grad_{theta_{k-1}} L = (1-gamma) [d_theta f; d_theta f]^T grad_{z_k} L.

    With ``recompute=True`` the activations are not stored: x_{k-1} is recovered on the fly by the
    inverse (4.3), as in the thesis (float64, so the recovered activations carry the inversion error).
    Returns a dict with keys x0, v0, W1, W2, b."""
    x0, v0, W1, W2, b = check_inputs(x0, v0, gamma, W1, W2, b, allow_float32=False)
    gx = np.array(gx, dtype=float)
    gv = np.array(gv, dtype=float)
    if gx.shape != x0.shape or gv.shape != x0.shape:
        raise ValueError(f"gx, gv have shapes {gx.shape}, {gv.shape}; expected the state shape {x0.shape}")
    L = W1.shape[0]
    omg = 1.0 - gamma
    if recompute:
        x, v = forward_numpy(x0, v0, gamma, W1, W2, b)
    else:
        xs, vs = trajectory_numpy(x0, v0, gamma, W1, W2, b)
    dW1, dW2, db = np.zeros_like(W1), np.zeros_like(W2), np.zeros_like(b)
    for k in range(L - 1, -1, -1):
        if recompute:
            x = x - v                                        # x_k from (x_{k+1}, v_{k+1})
            xk = x
        else:
            xk = xs[k]
        pre = xk @ W1[k].T + b[k]
        t = np.tanh(pre)
        s = 1.0 - t * t
        # total sensitivity of the layer output (1-gamma) f(x_k): it enters x_{k+1} and v_{k+1}
        g = omg * (gx + gv)                                  # (B, d): dL/d f
        dW2[k] = t.T @ g                                     # f = t @ W2 -> dW2 = t^T g
        gpre = (g @ W2[k].T) * s                             # (B, p)
        dW1[k] = gpre.T @ xk
        db[k] = gpre.sum(axis=0)
        gxk = gx + gpre @ W1[k]                              # J^T: x-row [I + (1-g)F]^T gx + [(1-g)F]^T gv
        gvk = gamma * (gx + gv)                              # v-row: gamma gx + gamma gv
        gx, gv = gxk, gvk
        if recompute:
            v = (v - omg * mlp(xk, W1[k], W2[k], b[k])) / gamma
    return {"x0": gx, "v0": gv, "W1": dW1, "W2": dW2, "b": db}
