"""Array-API kernels for the Sander chapters 4-7 checks (Momentum ResNets, Sinkformers, in-context learning).

Every function takes arrays of one namespace (NumPy through array-api-compat, array-api-strict or CuPy) and
uses only standard array-API calls, so one code path serves ``--backend numpy|array_api_strict|cupy``.
Instances are drawn on the host (seeded NumPy) and moved with :func:`solvers.xp.on`; only what decides a
verdict is brought back.

* log-sum-exp, SoftMax, the literal half-step recursion (5.3) and the log-domain Sinkhorn iteration batched
  over a leading axis (``sinkhorn_log``): each instance keeps its own stopping iteration (the rule of
  ``solvers.sinkhorn``: stop after the first full iteration whose row error is ``<= tol``), instances that
  have stopped are frozen by a mask, so the batched result equals B separate runs.  The convergence test
  syncs with the host once every ``check_every`` iterations only.  The exponential-domain scaling with
  absorption (``solvers.sinkhorn.sinkhorn_scaling``) is not expressed here: its absorption step and its
  log-domain fallback are data-dependent control flow; the log domain (two log-sum-exp per iteration) is
  what the array path runs on every backend.
* the Laurent-polynomial quadrature losses of chapter 6 (complex arrays over the roots-of-unity torus);
* the Momentum ResNet forward rule (4.2), its inverse (4.3) and the first-order rounding model of
  ``theorems.sander.ch4_3_1_momentum_inverse`` as array updates (``x`` is ``(B, d)``, weights ``(L, p, d)``).
"""
from __future__ import annotations

import math

import numpy as np

from solvers.xp import namespace

__all__ = ["lse", "softmax_rows", "half_steps", "row_col_errors", "sinkhorn_log", "sinkhorn_513",
           "loss_plain", "rnn_loss", "l66_direct", "l66_closed",
           "mlp", "mlp_jacobian", "trajectory", "inverse", "first_order_bound"]


# ---------------------------------------------------------------------------
# Sinkhorn
def lse(A, axis: int):
    """log sum exp along ``axis`` (kept as a length-1 axis), stabilised by the maximum."""
    xp = namespace(A)
    mx = xp.max(A, axis=axis, keepdims=True)
    return mx + xp.log(xp.sum(xp.exp(A - mx), axis=axis, keepdims=True))


def softmax_rows(C):
    """Row-wise SoftMax of a stack ``(..., n, m)``."""
    xp = namespace(C)
    return xp.exp(C - lse(C, -1))


def half_steps(C, l: int):
    """``K^l`` of (5.3) literally: ``l`` alternate normalisations N_R, N_C, ... (log domain), on a stack."""
    xp = namespace(C)
    L = C
    for s in range(int(l)):
        L = L - lse(L, -1) if s % 2 == 0 else L - lse(L, -2)
    return xp.exp(L)


def row_col_errors(K):
    """Per-instance ``(max_i |sum_j K_ij - 1|, max_j |sum_i K_ij - 1|)`` of a stack ``(..., n, n)``."""
    xp = namespace(K)
    return (xp.max(xp.abs(xp.sum(K, axis=-1) - 1.0), axis=-1),
            xp.max(xp.abs(xp.sum(K, axis=-2) - 1.0), axis=-1))


def sinkhorn_log(C, logw=None, tol: float = 1e-12, max_iter: int = 10_000, check_every: int = 8):
    """Log-domain Sinkhorn on a stack ``C`` of shape (B, n, n) (or one (n, n) matrix), the stopping rule and the
    iteration count of ``solvers.sinkhorn.sinkhorn_log_numpy`` per instance.  ``logw``: log weights (n,) or None.

    Returns ``(K, f, g, n_iter, row_err, converged)``; ``K = exp(C + f 1^T + 1 g^T)`` and the potentials are
    arrays of the namespace, ``n_iter`` (int), ``row_err`` (float), ``converged`` (bool) host NumPy arrays (B,)
    (scalars for one matrix)."""
    xp = namespace(C)
    single = C.ndim == 2
    if single:
        C = xp.expand_dims(C, axis=0)
    B, n = C.shape[0], C.shape[-1]
    lw = xp.zeros((n,), dtype=C.dtype) if logw is None else logw
    f = xp.zeros((B, n, 1), dtype=C.dtype)
    g = xp.zeros((B, 1, n), dtype=C.dtype)
    it = xp.zeros((B,), dtype=xp.int64)
    err = xp.full((B,), xp.inf, dtype=C.dtype)
    done = xp.zeros((B,), dtype=xp.bool)
    Cr = C + xp.reshape(lw, (1, 1, n))                 # row lse over j uses w_j
    Cc = C + xp.reshape(lw, (1, n, 1))                 # column lse over i uses w_i
    k = 0
    while True:
        lr = lse(Cr + g, -1)                            # (B, n, 1)
        if k > 0:
            e = xp.max(xp.abs(xp.exp(f + lr) - 1.0), axis=(-2, -1))
            stop_now = xp.logical_and(xp.logical_not(done), e <= tol)
            err = xp.where(done, err, e)
            done = xp.logical_or(done, stop_now)
            if k % check_every == 0 or k >= max_iter:
                if bool(xp.all(done)) or k >= max_iter:
                    break
        run = xp.reshape(xp.logical_not(done), (B, 1, 1))
        f = xp.where(run, -lr, f)
        g = xp.where(run, -lse(Cc + f, -2), g)
        it = it + xp.astype(xp.logical_not(done), xp.int64)
        k += 1
    K = xp.exp(C + f + g)
    f, g = xp.reshape(f, (B, n)), xp.reshape(g, (B, n))
    from solvers.xp import asnumpy
    n_it, row, conv = asnumpy(it).astype(int), asnumpy(err).astype(float), asnumpy(done).astype(bool)
    if single:
        return K[0, ...], f[0, ...], g[0, ...], int(n_it[0]), float(row[0]), bool(conv[0])
    return K, f, g, n_it, row, conv


def sinkhorn_513(C, n_iter: int = 200):
    """(5.13) as printed, on a stack: ``f = log(1/n) - lse_j(C + g)``, ``g = log(1/n) - lse_i(C + f)``, ``g^0 = 1``;
    returns ``P = diag(e^f) K^0 diag(e^g)`` (marginals 1/n, E5.3)."""
    xp = namespace(C)
    n = C.shape[-1]
    g = xp.ones(C.shape[:-2] + (1, n), dtype=C.dtype)
    f = xp.zeros(C.shape[:-1] + (1,), dtype=C.dtype)
    c = math.log(1.0 / n)
    for _ in range(int(n_iter)):
        f = c - lse(C + g, -1)
        g = c - lse(C + f, -2)
    return xp.exp(C + f + g)


# ---------------------------------------------------------------------------
# chapter 6: exact quadrature on the roots-of-unity torus
def loss_plain(C, pv, T: int, lam):
    """E || sum_t p_t [C lambda^(t-T+1)] o lambda^(t-1) - lambda^T ||^2 over the quadrature points ``lam`` (N, d)
    (complex); ``C`` (d, d) and ``pv`` (T,) real.  Returns a 0-d array."""
    xp = namespace(lam)
    Cc = xp.astype(C, lam.dtype)
    out = xp.zeros(lam.shape, dtype=lam.dtype)
    for t in range(1, T + 1):
        out = out + pv[t - 1] * (lam ** (t - T + 1) @ xp.matrix_transpose(Cc)) * lam ** (t - 1)
    r = xp.abs(out - lam ** T)
    return xp.mean(xp.sum(r * r, axis=1))


def rnn_loss(A, B, s1, lam, T: int, W_dependent: bool = False):
    """Remark 2 (see ``theorems.sander.ch6_3_incontext_linear_attention._rnn_loss``): per t, E|y_t - W^t s_1|^2
    and E|y_t|^2 + |s_1|^2.
    Returns two arrays of shape (T,)."""
    xp = namespace(lam)
    Ac, Bc, sc = (xp.astype(a, lam.dtype) for a in (A, B, s1))
    losses, pyth = [], []
    n1 = xp.sum(s1 * s1)
    for t in range(1, T + 1):
        y = xp.zeros(lam.shape, dtype=lam.dtype)
        for k in range(1, t + 1):
            v = lam ** (k - 1) * sc
            v = v * lam / t if W_dependent else v @ xp.matrix_transpose(Bc)
            y = y + v @ xp.matrix_transpose(xp.linalg.matrix_power(Ac, t - k))
        r = xp.abs(y - lam ** t * sc)
        a = xp.abs(y)
        losses.append(xp.mean(xp.sum(r * r, axis=1)))
        pyth.append(xp.mean(xp.sum(a * a, axis=1)) + n1)
    return xp.stack(losses), xp.stack(pyth)


def l66_direct(Ah, Bh, P_row, lam, T: int, conj_first: bool = False):
    """(6.6) head by head on e_t = lambda^(t-1), hermitian product <a|b> = b^* a (or a^* b); (N, d) complex."""
    xp = namespace(lam)
    out = xp.zeros(lam.shape, dtype=lam.dtype)
    e = [lam ** (t - 1) for t in range(1, T + 1)]
    for h in range(Ah.shape[0]):
        a, b = xp.astype(Ah[h, :], lam.dtype), xp.astype(Bh[h, :], lam.dtype)
        q = a * e[T - 2]
        for t in range(1, T + 1):
            ip = (xp.sum(xp.conj(e[t - 1]) * q, axis=1) if conj_first
                  else xp.sum(e[t - 1] * xp.conj(q), axis=1))
            out = out + P_row[t - 1] * xp.expand_dims(ip, axis=1) * (b * e[t - 1])
    return out


def l66_closed(Ah, Bh, P_row, lam, T: int):
    """The Lemma 6.6 closed form sum_t P_t [B^T A] lambda^(t-T+1) o lambda^(t-1)."""
    xp = namespace(lam)
    C = xp.astype(xp.matrix_transpose(Bh) @ Ah, lam.dtype)
    out = xp.zeros(lam.shape, dtype=lam.dtype)
    for t in range(1, T + 1):
        out = out + P_row[t - 1] * (lam ** (t - T + 1) @ xp.matrix_transpose(C)) * lam ** (t - 1)
    return out


# ---------------------------------------------------------------------------
# chapter 4: Momentum ResNets as array updates
def mlp(x, W1n, W2n, bn):
    """f(x) = W2^T tanh(W1 x + b) on a batch x (B, d)."""
    xp = namespace(x)
    return xp.tanh(x @ xp.matrix_transpose(W1n) + bn) @ W2n


def mlp_jacobian(x, W1n, W2n, bn):
    """d f / d x per sample: (B, d, d), [s, i, j] = sum_k W2[k, i] s_k W1[k, j]."""
    xp = namespace(x)
    t = xp.tanh(x @ xp.matrix_transpose(W1n) + bn)
    s = 1.0 - t * t                                                    # (B, p)
    return xp.matrix_transpose(W2n) @ (xp.expand_dims(s, axis=2) * W1n)   # (d, p) @ (B, p, d)


def trajectory(x0, v0, gamma: float, W1, W2, b):
    """All states of (4.2): (L+1, B, d) arrays for x and v, in the dtype of x0."""
    xp = namespace(x0)
    dt = x0.dtype
    g = xp.asarray(gamma, dtype=dt)
    omg = xp.asarray(1.0, dtype=dt) - g
    x, v = x0, v0
    xs, vs = [x], [v]
    for n in range(W1.shape[0]):
        v = g * v + omg * mlp(x, W1[n, ...], W2[n, ...], b[n, ...])
        x = x + v
        xs.append(x)
        vs.append(v)
    return xp.stack(xs), xp.stack(vs)


def inverse(xL, vL, gamma: float, W1, W2, b):
    """L steps of (4.3) from the top; returns (x_0, v_0)."""
    xp = namespace(xL)
    dt = xL.dtype
    g = xp.asarray(gamma, dtype=dt)
    omg = xp.asarray(1.0, dtype=dt) - g
    x, v = xL, vL
    for n in range(W1.shape[0] - 1, -1, -1):
        x = x - v
        v = (v - omg * mlp(x, W1[n, ...], W2[n, ...], b[n, ...])) / g
    return x, v


def inverse_jacobian(x, gamma: float, W1n, W2n, bn):
    """Jacobian of the inverse layer (4.3) at the layer input x: (B, 2d, 2d), order (x, v)."""
    xp = namespace(x)
    B, d = x.shape
    F = mlp_jacobian(x, W1n, W2n, bn)
    I = xp.broadcast_to(xp.eye(d, dtype=x.dtype), (B, d, d))
    top = xp.concat([I, -I], axis=2)
    bot = xp.concat([-(1 - gamma) * F / gamma, (I + (1 - gamma) * F) / gamma], axis=2)
    return xp.concat([top, bot], axis=1)


def first_order_bound(gamma: float, xs, vs, W1, W2, b, eps: float):
    """The first-order rounding model of ``theorems.sander.ch4_3_1_momentum_inverse`` (module docstring there),
    for every depth 0..L: a host NumPy array (L+1,).  Arrays float64 of one namespace; the per-depth maxima come
    back at once."""
    xp = namespace(xs)
    L, p, d = W1.shape
    B = xs.shape[1]
    P = xp.broadcast_to(xp.eye(2 * d, dtype=xs.dtype), (B, 2 * d, 2 * d))
    acc = xp.zeros((B,), dtype=xs.dtype)
    out = [xp.zeros((), dtype=xs.dtype)]
    for n in range(L):
        x = xs[n, ...]
        t = xp.abs(xp.tanh(x @ xp.matrix_transpose(W1[n, ...]) + b[n, ...]))
        pre = xp.abs(x) @ xp.matrix_transpose(xp.abs(W1[n, ...])) + xp.abs(b[n, ...])
        aW2 = xp.abs(W2[n, ...])
        dfv = eps * ((p + 2) * (t @ aW2) + (d + 2) * (pre @ aW2))
        m = xp.max(xp.abs(xp.concat([xs[n, ...], vs[n, ...], xs[n + 1, ...], vs[n + 1, ...]], axis=1)), axis=1)
        u = 3 * eps * xp.maximum(m, xp.asarray(1e-300, dtype=xs.dtype)) + (1 - gamma) * xp.max(dfv, axis=1)
        before = xp.max(xp.sum(xp.abs(P[:, :d, :]), axis=2), axis=1)
        P = P @ inverse_jacobian(x, gamma, W1[n, ...], W2[n, ...], b[n, ...])
        after = xp.max(xp.sum(xp.abs(P[:, :d, :]), axis=2), axis=1)
        acc = acc + u * (before + after)
        out.append(xp.max(acc))
    from solvers.xp import asnumpy
    return np.asarray(asnumpy(xp.stack(out)), dtype=float)


# ---------------------------------------------------------------------------
# finite differences, all evaluations in one stack
def gradient_with_error_batched(fun_batch, x, h: float):
    """``solvers.fd.gradient_with_error`` for one vector ``x`` (m,) of the namespace, with every evaluation in one
    call ``fun_batch(X)`` on a stack X (B, m) -> (B,): the base point and x +- h e_i, x +- 2h e_i (4 m + 1 rows).
    Same formula and error estimate ``|d_h - d_2h| / 3 + 4 eps max(|f|, 1) / h``; returns (grad, err) of the namespace."""
    xp = namespace(x)
    m = x.shape[0]
    E = xp.eye(m, dtype=x.dtype)
    X0 = xp.reshape(x, (1, m))
    stack = xp.concat([X0, X0 + h * E, X0 - h * E, X0 + 2 * h * E, X0 - 2 * h * E], axis=0)
    f = fun_batch(stack)
    base = xp.abs(f[0])
    fp, fm, fp2, fm2 = f[1:m + 1], f[m + 1:2 * m + 1], f[2 * m + 1:3 * m + 1], f[3 * m + 1:]
    d1 = (fp - fm) / (2 * h)
    d2 = (fp2 - fm2) / (2 * (2 * h))
    eps = float(np.finfo(np.float64).eps)
    err = xp.abs(d1 - d2) / 3 + 4 * eps * xp.maximum(base, xp.asarray(1.0, dtype=x.dtype)) / h
    return d1, err


def loss_aug(Theta, s, Tmax: int):
    """Loss (6.3) of the augmented model (6.4) for a stack Theta (B, 6) of (a1, a2, a3, a4, b1, b2); ``s`` is the
    list s_0..s_{Tmax+1} of (N, d) complex arrays over the quadrature points.  Returns (B,) real."""
    xp = namespace(Theta)
    cd = s[0].dtype
    col = lambda k: xp.reshape(xp.astype(Theta[:, k], cd), (-1, 1, 1))  # noqa: E731
    a1, a2, a3, a4, b1, b2 = (col(k) for k in range(6))
    tot = xp.zeros((Theta.shape[0],), dtype=Theta.dtype)
    for T in range(2, Tmax + 1):
        out = xp.zeros((Theta.shape[0],) + s[0].shape, dtype=cd)
        for t in range(1, T + 1):
            coef = (xp.sum(xp.conj(s[t]) * (a1 * s[T] + a2 * s[T - 1]), axis=-1, keepdims=True)
                    + xp.sum(xp.conj(s[t - 1]) * (a3 * s[T] + a4 * s[T - 1]), axis=-1, keepdims=True))
            out = out + coef * (b1 * s[t] + b2 * s[t - 1])
        r = xp.abs(out - s[T + 1])
        tot = tot + xp.mean(xp.sum(r * r, axis=-1), axis=-1)
    return tot


def layerwise_roundtrip(xs, vs, gamma: float, W1, W2, b, eps: float):
    """(4.3) applied once to every computed layer output (x_{n+1}, v_{n+1}) of a trajectory (xs, vs: (L+1, B, d), in
    the dtype of the forward pass), all layers at once; compared with the computed layer input (x_n, v_n).

    Error model (first order, one layer, no amplification across layers): the forward rounding delta_n of layer n
    (componentwise <= u_n = 3 eps m_n + (1-gamma) df_n, the module model of theorems.sander.ch4_3_1_momentum_inverse)
    reaches the recovered input through one inverse Jacobian, |J_n^{-1}|_inf u_n; the inverse step's own rounding
    is <= u_n in the numerator of v_n, divided by gamma, plus one rounding of the result:
    bound_n = u_n (|J_n^{-1}|_inf + 1/gamma + 1) per sample.  Returns host floats (max over layers and samples of
    error / bound, max error)."""
    xp = namespace(xs)
    dt = xs.dtype
    g = xp.asarray(gamma, dtype=dt)
    omg = xp.asarray(1.0, dtype=dt) - g
    T_ = xp.matrix_transpose
    x1, v1 = xs[1:, ...], vs[1:, ...]
    xr = x1 - v1
    f = xp.tanh(xr @ T_(W1) + xp.expand_dims(b, axis=1)) @ W2                    # (L, B, d), layer n's weights
    vr = (v1 - omg * f) / g
    f64 = lambda a: xp.astype(a, xp.float64)  # noqa: E731
    X0, V0, X1, V1 = f64(xs[:-1, ...]), f64(vs[:-1, ...]), f64(x1), f64(v1)
    A1, A2, bb = f64(W1), f64(W2), f64(b)
    err = xp.maximum(xp.max(xp.abs(f64(xr) - X0), axis=-1), xp.max(xp.abs(f64(vr) - V0), axis=-1))   # (L, B)
    p, d = W1.shape[1], W1.shape[2]
    t = xp.tanh(X0 @ T_(A1) + xp.expand_dims(bb, axis=1))
    pre = xp.abs(X0) @ T_(xp.abs(A1)) + xp.expand_dims(xp.abs(bb), axis=1)
    dfv = eps * ((p + 2) * (xp.abs(t) @ xp.abs(A2)) + (d + 2) * (pre @ xp.abs(A2)))
    m = xp.max(xp.abs(xp.concat([X0, V0, X1, V1], axis=-1)), axis=-1)
    u = 3 * eps * xp.maximum(m, xp.asarray(1e-300, dtype=xp.float64)) + (1 - gamma) * xp.max(dfv, axis=-1)
    # row sums of |F_n| (F = W2^T diag(1 - t^2) W1 per sample) bounded without forming F (L B d^2 p flops):
    # sum_j |F_ij| <= sum_k |W2_ki| (1 - t_k^2) sum_j |W1_kj|
    s = 1.0 - t * t
    rowF = (s * xp.expand_dims(xp.sum(xp.abs(A1), axis=-1), axis=1)) @ xp.abs(A2)            # (L, B, d)
    rows_v = (1.0 + 2 * (1 - gamma) * rowF) / gamma           # |-(1-g)F/g| + |(I + (1-g)F)/g| row sums
    Jinv = xp.maximum(xp.max(rows_v, axis=-1), xp.asarray(2.0, dtype=xp.float64))           # (L, B)
    bound = u * (Jinv + 1.0 / gamma + 1.0)
    ratio = xp.max(err / bound)
    return float(ratio), float(xp.max(err))
