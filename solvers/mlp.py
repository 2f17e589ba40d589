"""A small fully connected network trainer (float64): the networks of van Rossem & Saxe App. B.

Architecture (catalogue decision D3): ``widths = [d_in, n_1, ..., n_N, d_out]`` gives ``N`` hidden layers and
``N + 1`` affine layers ``z_l = a_{l-1} W_l^T + b_l`` (PyTorch ``Linear`` layout, ``W_l`` is ``n_l x n_{l-1}``);
hidden layers apply the nonlinearity, the output layer is affine.  Representations are stored row-wise
(``P x n_l``, one row per data point); ``forward`` returns ``[X, a_1, ..., a_N, f(X)]``.

Initialisation (App. B.1, l.485-490: "Xavier normal initialization with gain parameter ... biases ... initialized
at zero"): ``W_l ~ N(0, gain^2 * 2 / (fan_in + fan_out))`` entrywise, ``b_l = 0``, i.e. PyTorch's
``xavier_normal_(W, gain=gain)`` with the paper's gain passed directly (not multiplied by
``calculate_gain(nonlinearity)``; catalogue D1 measures ``G = g^2 (1 + 0.01^2)/2`` for leaky ReLU, which is
this convention).  Draws: ``numpy.random.default_rng(seed)``, layer by layer, ``W`` row-major.

Loss (``loss=``):

* ``"mse_half_mean"`` (default, the paper's Eq 1): ``L = 1/(2P) sum_i |f(x_i) - y_i|^2`` (half the mean over
  points of the squared error);
* ``"mse_mean"``: PyTorch ``MSELoss(reduction='mean')``, ``L = 1/(P d_out) sum_{i,k} (f_k(x_i) - y_ik)^2``; for
  scalar outputs this is twice Eq 1, so a learning rate ``lr`` here equals ``2 lr`` under Eq 1.  Table 1's learning
  rates are PyTorch learning rates, so reproductions of Table 1 use this loss.

Optimisers: ``"gd"`` (full batch, or minibatch SGD when ``batch_size`` is set: each epoch a permutation of the
points drawn from ``default_rng(seed + 1)``, consecutive batches of ``batch_size``, the last one possibly
smaller; one step per batch, the loss of a batch is the same formula over the batch) and ``"adam"`` (PyTorch
defaults ``beta = (0.9, 0.999)``, ``eps = 1e-8``, bias-corrected).

Backends: ``"numpy"`` (reference) and ``"numba"`` (the whole epoch loop in one ``@njit(cache=True)`` kernel on a
flat parameter vector).  Both perform the same floating-point operations in the same order up to BLAS
summation order, so records agree to rounding (tested in ``tests/test_mlp.py``).

Records: at epoch 0 (before any step), every ``record_every`` epochs and at the last epoch, the full-batch loss,
the representations of the layers ``record_layers`` (default: all, ``0..N+1``) and the outputs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

__all__ = ["NONLINEARITIES", "LOSSES", "TrainRecord", "init_mlp", "forward", "loss_value", "loss_and_grads",
           "train", "hidden_index", "uvw", "pack", "unpack", "LEAKY_SLOPE"]

LEAKY_SLOPE = 0.01  # PyTorch LeakyReLU default negative slope
NONLINEARITIES = ("leaky_relu", "relu", "tanh", "linear", "elu", "swish")
LOSSES = ("mse_half_mean", "mse_mean")
OPTIMIZERS = ("gd", "adam")
BACKENDS = ("numpy", "numba")
ADAM_B1, ADAM_B2, ADAM_EPS = 0.9, 0.999, 1e-8


# ---------------------------------------------------------------------------
# input checks
def _check_widths(widths):
    try:
        w = [int(x) for x in widths]
    except (TypeError, ValueError):
        raise ValueError(f"widths must be a list of positive integers (got {widths!r})") from None
    if len(w) < 2:
        raise ValueError(f"widths must have at least 2 entries [d_in, ..., d_out] (got {widths!r})")
    if any(x < 1 for x in w) or any(float(x) != float(y) for x, y in zip(w, widths)):
        raise ValueError(f"widths must be positive integers (got {widths!r})")
    return w


def _check_nl(nonlinearity):
    if nonlinearity not in NONLINEARITIES:
        raise ValueError(f"nonlinearity must be one of {NONLINEARITIES} (got {nonlinearity!r})")
    return NONLINEARITIES.index(nonlinearity)


def _check_data(X, Y, widths):
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if Y.ndim == 1:
        Y = Y[:, None]
    if X.ndim != 2 or X.shape[1] != widths[0]:
        raise ValueError(f"X must be P x d_in = P x {widths[0]} (got shape {X.shape})")
    if Y.ndim != 2 or Y.shape != (X.shape[0], widths[-1]):
        raise ValueError(f"Y must be P x d_out = {X.shape[0]} x {widths[-1]} (got shape {Y.shape})")
    if X.shape[0] < 1:
        raise ValueError("need at least one data point")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Y))):
        raise ValueError("X and Y must be finite")
    return np.ascontiguousarray(X), np.ascontiguousarray(Y)


# ---------------------------------------------------------------------------
# nonlinearities (NumPy)
def _act(z, code):
    if code == 0:
        return np.where(z > 0, z, LEAKY_SLOPE * z)
    if code == 1:
        return np.maximum(z, 0.0)
    if code == 2:
        return np.tanh(z)
    if code == 3:
        return z.copy()
    if code == 4:
        return np.where(z > 0, z, np.expm1(np.minimum(z, 0.0)))
    return z / (1.0 + np.exp(-z))


def _dact(z, code):
    if code == 0:
        return np.where(z > 0, 1.0, LEAKY_SLOPE)
    if code == 1:
        return np.where(z > 0, 1.0, 0.0)
    if code == 2:
        t = np.tanh(z)
        return 1.0 - t * t
    if code == 3:
        return np.ones_like(z)
    if code == 4:
        return np.where(z > 0, 1.0, np.exp(np.minimum(z, 0.0)))
    s = 1.0 / (1.0 + np.exp(-z))
    return s * (1.0 + z * (1.0 - s))


# ---------------------------------------------------------------------------
# parameters
def init_mlp(widths, gain, seed, nonlinearity="leaky_relu"):
    """Xavier-normal weights with ``std = gain * sqrt(2 / (fan_in + fan_out))`` and zero biases (App. B.1);
    returns ``[(W_1, b_1), ..., (W_{N+1}, b_{N+1})]`` with ``W_l`` of shape ``(n_l, n_{l-1})``.
    ``nonlinearity`` is validated but does not change the draw (the paper passes its gain directly)."""
    w = _check_widths(widths)
    _check_nl(nonlinearity)
    if not (isinstance(gain, (int, float, np.floating)) and math.isfinite(gain) and gain >= 0):
        raise ValueError(f"gain must be a finite number >= 0 (got {gain!r})")
    rng = np.random.default_rng(seed)
    params = []
    for fi, fo in zip(w[:-1], w[1:]):
        std = float(gain) * math.sqrt(2.0 / (fi + fo))
        params.append((rng.standard_normal((fo, fi)) * std, np.zeros(fo)))
    return params


def pack(params):
    """Flat vector ``[W_1 (row-major), b_1, W_2, b_2, ...]``."""
    return np.concatenate([np.concatenate([W.ravel(), b.ravel()]) for W, b in params])


def unpack(theta, widths):
    """Inverse of :func:`pack` (copies)."""
    out, o = [], 0
    for fi, fo in zip(widths[:-1], widths[1:]):
        W = theta[o:o + fo * fi].reshape(fo, fi).copy()
        o += fo * fi
        b = theta[o:o + fo].copy()
        o += fo
        out.append((W, b))
    return out


def _widths_of(params):
    return [params[0][0].shape[1]] + [W.shape[0] for W, _ in params]


# ---------------------------------------------------------------------------
# NumPy reference: forward, loss, gradients
def _forward_pre(params, X, code):
    acts, pres = [X], []
    a = X
    n = len(params)
    for l, (W, b) in enumerate(params):
        z = a @ W.T + b
        pres.append(z)
        a = z if l == n - 1 else _act(z, code)
        acts.append(a)
    return acts, pres


def forward(params, X, nonlinearity="leaky_relu"):
    """Representations ``[X, a_1, ..., a_N, f(X)]`` (each ``P x n_l``; index 0 the input, the last the
    affine output)."""
    code = _check_nl(nonlinearity)
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != params[0][0].shape[1]:
        raise ValueError(f"X must be P x d_in = P x {params[0][0].shape[1]} (got shape {X.shape})")
    return _forward_pre(params, X, code)[0]


def _loss_scale(loss, P, d_out):
    """``L = scale * sum (f - y)^2``."""
    if loss == "mse_half_mean":
        return 0.5 / P
    if loss == "mse_mean":
        return 1.0 / (P * d_out)
    raise ValueError(f"loss must be one of {LOSSES} (got {loss!r})")


def loss_value(params, X, Y, nonlinearity="leaky_relu", loss="mse_half_mean"):
    """The training loss (see the module docstring for the two conventions)."""
    out = forward(params, X, nonlinearity)[-1]
    Y = np.asarray(Y, dtype=float).reshape(out.shape)
    return _loss_scale(loss, out.shape[0], out.shape[1]) * float(np.sum((out - Y) ** 2))


def loss_and_grads(params, X, Y, nonlinearity="leaky_relu", loss="mse_half_mean"):
    """Loss and hand-written backpropagation gradients ``[(dW_1, db_1), ...]``."""
    code = _check_nl(nonlinearity)
    X, Y = _check_data(X, Y, _widths_of(params))
    acts, pres = _forward_pre(params, X, code)
    c = _loss_scale(loss, X.shape[0], Y.shape[1])
    r = acts[-1] - Y
    L = c * float(np.sum(r * r))
    delta = 2.0 * c * r
    grads = [None] * len(params)
    for l in range(len(params) - 1, -1, -1):
        W = params[l][0]
        grads[l] = (delta.T @ acts[l], delta.sum(axis=0))
        if l > 0:
            delta = (delta @ W) * _dact(pres[l - 1], code)
    return L, grads


# ---------------------------------------------------------------------------
# the training loop, NumPy reference
@dataclass
class TrainRecord:
    """``epochs[k]``: the k-th recorded epoch; ``losses[k]``: full-batch training loss there; ``reps[k]``: list of
    the representations (``P x n_l``) of the layers ``layers`` at that epoch; ``outputs[k]``: ``P x d_out``;
    ``params``: the final parameters."""

    epochs: np.ndarray
    losses: np.ndarray
    reps: list
    outputs: np.ndarray
    params: list
    layers: tuple = ()
    widths: tuple = ()
    config: dict = field(default_factory=dict)

    def layer(self, l):
        """Array ``(n_records, P, n_l)`` of the representation of layer ``l`` over the record."""
        if l not in self.layers:
            raise ValueError(f"layer {l} was not recorded (recorded: {self.layers})")
        j = self.layers.index(l)
        return np.array([r[j] for r in self.reps])


def _record_epochs(epochs, record_every):
    ks = list(range(0, epochs + 1, record_every))
    if ks[-1] != epochs:
        ks.append(epochs)
    return np.array(ks, dtype=np.int64)


def _batches(P, epochs, batch_size, seed):
    """Permutations ``(epochs, P)`` for minibatch SGD (``None`` for full batch)."""
    if batch_size is None:
        return None
    rng = np.random.default_rng(seed + 1)
    return np.array([rng.permutation(P) for _ in range(epochs)], dtype=np.int64).reshape(epochs, P)


def _train_numpy(params, X, Y, code, lr, epochs, rec, layers, perms, batch_size, adam, loss):
    params = [(W.copy(), b.copy()) for W, b in params]
    P = X.shape[0]
    nl = len(params)
    m = [(np.zeros_like(W), np.zeros_like(b)) for W, b in params] if adam else None
    v = [(np.zeros_like(W), np.zeros_like(b)) for W, b in params] if adam else None
    step = 0
    c_full = _loss_scale(loss, P, Y.shape[1])
    reps, outs, losses = [], [], []
    rec_set = set(int(k) for k in rec)

    def record():
        acts, _ = _forward_pre(params, X, code)
        reps.append([acts[l].copy() for l in layers])
        outs.append(acts[-1].copy())
        losses.append(c_full * float(np.sum((acts[-1] - Y) ** 2)))

    record()
    for ep in range(1, epochs + 1):
        if perms is None:
            idx_list = [None]
        else:
            idx_list = [perms[ep - 1, s:s + batch_size] for s in range(0, P, batch_size)]
        for idx in idx_list:
            Xb, Yb = (X, Y) if idx is None else (X[idx], Y[idx])
            _, g = loss_and_grads(params, Xb, Yb, NONLINEARITIES[code], loss)
            step += 1
            new = []
            for l in range(nl):
                W, b = params[l]
                gW, gb = g[l]
                if adam:
                    mW, mb = m[l]
                    vW, vb = v[l]
                    mW = ADAM_B1 * mW + (1 - ADAM_B1) * gW
                    mb = ADAM_B1 * mb + (1 - ADAM_B1) * gb
                    vW = ADAM_B2 * vW + (1 - ADAM_B2) * gW * gW
                    vb = ADAM_B2 * vb + (1 - ADAM_B2) * gb * gb
                    m[l], v[l] = (mW, mb), (vW, vb)
                    c1 = 1.0 - ADAM_B1 ** step
                    c2 = 1.0 - ADAM_B2 ** step
                    W = W - lr * (mW / c1) / (np.sqrt(vW / c2) + ADAM_EPS)
                    b = b - lr * (mb / c1) / (np.sqrt(vb / c2) + ADAM_EPS)
                else:
                    W = W - lr * gW
                    b = b - lr * gb
                new.append((W, b))
            params = new
        if ep in rec_set:
            record()
    return params, losses, reps, outs


# ---------------------------------------------------------------------------
# the training loop, Numba kernel (flat parameters)
@njit(cache=True)
def _act_nb(z, code):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            x = z[i, j]
            if code == 0:
                out[i, j] = x if x > 0 else LEAKY_SLOPE * x
            elif code == 1:
                out[i, j] = x if x > 0 else 0.0
            elif code == 2:
                out[i, j] = np.tanh(x)
            elif code == 3:
                out[i, j] = x
            elif code == 4:
                out[i, j] = x if x > 0 else np.expm1(x)
            else:
                out[i, j] = x / (1.0 + np.exp(-x))
    return out


@njit(cache=True)
def _dact_nb(z, code):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            x = z[i, j]
            if code == 0:
                out[i, j] = 1.0 if x > 0 else LEAKY_SLOPE
            elif code == 1:
                out[i, j] = 1.0 if x > 0 else 0.0
            elif code == 2:
                t = np.tanh(x)
                out[i, j] = 1.0 - t * t
            elif code == 3:
                out[i, j] = 1.0
            elif code == 4:
                out[i, j] = 1.0 if x > 0 else np.exp(x)
            else:
                s = 1.0 / (1.0 + np.exp(-x))
                out[i, j] = s * (1.0 + x * (1.0 - s))
    return out


@njit(cache=True)
def _grad_nb(theta, grad, widths, offs, X, Y, code, c):
    """Loss and gradient (into ``grad``) at the flat parameters ``theta`` on the batch ``(X, Y)``."""
    nl = widths.shape[0] - 1
    acts = []
    pres = []
    a = X
    acts.append(a)
    for l in range(nl):
        fi, fo = widths[l], widths[l + 1]
        o = offs[l]
        W = theta[o:o + fo * fi].reshape(fo, fi)
        b = theta[o + fo * fi:o + fo * fi + fo]
        z = np.dot(a, W.T) + b
        pres.append(z)
        if l == nl - 1:
            a = z
        else:
            a = _act_nb(z, code)
        acts.append(a)
    r = acts[nl] - Y
    L = c * np.sum(r * r)
    delta = 2.0 * c * r
    for l in range(nl - 1, -1, -1):
        fi, fo = widths[l], widths[l + 1]
        o = offs[l]
        gW = np.dot(delta.T, acts[l])
        grad[o:o + fo * fi] = gW.ravel()
        grad[o + fo * fi:o + fo * fi + fo] = delta.sum(axis=0)
        if l > 0:
            W = theta[o:o + fo * fi].reshape(fo, fi)
            delta = np.dot(delta, W) * _dact_nb(pres[l - 1], code)
    return L


@njit(cache=True)
def _forward_record_nb(theta, widths, offs, X, code, layers, col_off, reps_out, out_out, k):
    nl = widths.shape[0] - 1
    a = X
    for j in range(layers.shape[0]):
        if layers[j] == 0:
            reps_out[k, :, col_off[j]:col_off[j] + widths[0]] = X
    for l in range(nl):
        fi, fo = widths[l], widths[l + 1]
        o = offs[l]
        W = theta[o:o + fo * fi].reshape(fo, fi)
        b = theta[o + fo * fi:o + fo * fi + fo]
        z = np.dot(a, W.T) + b
        if l == nl - 1:
            a = z
        else:
            a = _act_nb(z, code)
        for j in range(layers.shape[0]):
            if layers[j] == l + 1:
                reps_out[k, :, col_off[j]:col_off[j] + fo] = a
    out_out[k] = a
    return a


@njit(cache=True)
def _train_nb(theta, widths, offs, X, Y, code, lr, epochs, rec, layers, col_off, perms, batch_size, adam,
              c_full, c_batch_num):
    """The epoch loop; ``perms`` has shape ``(epochs, P)`` (``batch_size <= 0``: full batch, ``perms`` unused).
    ``c_batch_num``: the loss scale is ``c_batch_num / batch_points`` (0.5 for Eq 1, 1/d_out for MSELoss)."""
    P = X.shape[0]
    nrec = rec.shape[0]
    ncols = col_off[-1]
    reps_out = np.zeros((nrec, P, ncols))
    out_out = np.zeros((nrec, P, Y.shape[1]))
    losses = np.zeros(nrec)
    grad = np.zeros_like(theta)
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    step = 0
    k = 0
    f = _forward_record_nb(theta, widths, offs, X, code, layers, col_off, reps_out, out_out, k)
    losses[k] = c_full * np.sum((f - Y) * (f - Y))
    k += 1
    for ep in range(1, epochs + 1):
        nb = 1 if batch_size <= 0 else (P + batch_size - 1) // batch_size
        for s in range(nb):
            if batch_size <= 0:
                _grad_nb(theta, grad, widths, offs, X, Y, code, c_batch_num / P)
            else:
                lo = s * batch_size
                hi = min(P, lo + batch_size)
                idx = perms[ep - 1, lo:hi]
                Xb = np.empty((hi - lo, X.shape[1]))
                Yb = np.empty((hi - lo, Y.shape[1]))
                for i in range(hi - lo):
                    Xb[i] = X[idx[i]]
                    Yb[i] = Y[idx[i]]
                _grad_nb(theta, grad, widths, offs, Xb, Yb, code, c_batch_num / (hi - lo))
            step += 1
            if adam:
                c1 = 1.0 - ADAM_B1 ** step
                c2 = 1.0 - ADAM_B2 ** step
                for i in range(theta.shape[0]):
                    g = grad[i]
                    m[i] = ADAM_B1 * m[i] + (1 - ADAM_B1) * g
                    v[i] = ADAM_B2 * v[i] + (1 - ADAM_B2) * g * g
                    theta[i] = theta[i] - lr * (m[i] / c1) / (np.sqrt(v[i] / c2) + ADAM_EPS)
            else:
                for i in range(theta.shape[0]):
                    theta[i] = theta[i] - lr * grad[i]
        if k < nrec and rec[k] == ep:
            f = _forward_record_nb(theta, widths, offs, X, code, layers, col_off, reps_out, out_out, k)
            losses[k] = c_full * np.sum((f - Y) * (f - Y))
            k += 1
    return theta, losses, reps_out, out_out


# ---------------------------------------------------------------------------
# public trainer
def train(X, Y, widths, nonlinearity="leaky_relu", gain=1.0, lr=1e-3, epochs=100, seed=0, record_every=1,
          batch_size=None, optimizer="gd", backend="numpy", loss="mse_half_mean", record_layers=None,
          init=None):
    """Train an MLP of ``widths`` on ``(X, Y)`` (``P x d_in``, ``P x d_out``) and record the training.

    Loss: ``loss="mse_half_mean"`` is the paper's Eq 1, ``L = 1/(2P) sum_i |f(x_i) - y_i|^2``; ``"mse_mean"`` is
    PyTorch's ``MSELoss()`` (twice Eq 1 for scalar outputs).  Full-batch gradient descent unless ``batch_size``
    is given (seeded minibatch SGD, permutations from ``default_rng(seed + 1)``); ``optimizer="adam"`` uses Adam
    with PyTorch defaults.  Initial parameters: :func:`init_mlp` ``(widths, gain, seed)`` unless ``init`` (a list
    of ``(W, b)``) is given.  ``record_layers``: indices into :func:`forward`'s list (default all).
    Returns a :class:`TrainRecord`; the records of the two backends agree to rounding."""
    w = _check_widths(widths)
    code = _check_nl(nonlinearity)
    X, Y = _check_data(X, Y, w)
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES} (got {loss!r})")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS} (got {optimizer!r})")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS} (got {backend!r})")
    if not (isinstance(lr, (int, float, np.floating)) and math.isfinite(lr) and lr > 0):
        raise ValueError(f"lr must be a finite number > 0 (got {lr!r})")
    if int(epochs) != epochs or epochs < 0:
        raise ValueError(f"epochs must be an integer >= 0 (got {epochs!r})")
    if int(record_every) != record_every or record_every < 1:
        raise ValueError(f"record_every must be an integer >= 1 (got {record_every!r})")
    epochs, record_every = int(epochs), int(record_every)
    P = X.shape[0]
    if batch_size is not None and (int(batch_size) != batch_size or not 1 <= batch_size <= P):
        raise ValueError(f"batch_size must be None or an integer in [1, P = {P}] (got {batch_size!r})")
    layers = tuple(range(len(w))) if record_layers is None else tuple(int(l) for l in record_layers)
    if any(not 0 <= l < len(w) for l in layers):
        raise ValueError(f"record_layers must be indices in [0, {len(w) - 1}] (got {record_layers!r})")
    params = init_mlp(w, gain, seed, nonlinearity) if init is None else [(np.array(W, float), np.array(b, float))
                                                                         for W, b in init]
    if _widths_of(params) != w:
        raise ValueError(f"init has widths {_widths_of(params)}, expected {w}")
    rec = _record_epochs(epochs, record_every)
    perms = _batches(P, epochs, batch_size, seed)
    adam = optimizer == "adam"
    if backend == "numpy":
        params, losses, reps, outs = _train_numpy(params, X, Y, code, float(lr), epochs, rec, layers, perms,
                                                  batch_size, adam, loss)
        outputs = np.array(outs)
    else:
        wa = np.array(w, dtype=np.int64)
        offs = np.zeros(len(w) - 1, dtype=np.int64)
        o = 0
        for l, (fi, fo) in enumerate(zip(w[:-1], w[1:])):
            offs[l] = o
            o += fo * fi + fo
        col_off = np.zeros(len(layers) + 1, dtype=np.int64)
        for j, l in enumerate(layers):
            col_off[j + 1] = col_off[j] + w[l]
        c_num = 0.5 if loss == "mse_half_mean" else 1.0 / w[-1]
        theta, losses, reps_arr, outputs = _train_nb(
            pack(params), wa, offs, X, Y, code, float(lr), epochs, rec, np.array(layers, dtype=np.int64),
            col_off, perms if perms is not None else np.zeros((1, 1), dtype=np.int64),
            -1 if batch_size is None else int(batch_size), adam, _loss_scale(loss, P, w[-1]), c_num)
        params = unpack(theta, w)
        reps = [[reps_arr[k, :, col_off[j]:col_off[j + 1]] for j in range(len(layers))] for k in range(len(rec))]
    cfg = dict(nonlinearity=nonlinearity, gain=gain, lr=lr, epochs=epochs, seed=seed, record_every=record_every,
               batch_size=batch_size, optimizer=optimizer, backend=backend, loss=loss)
    return TrainRecord(rec, np.asarray(losses, dtype=float), reps, np.asarray(outputs), params, layers, tuple(w),
                       cfg)


# ---------------------------------------------------------------------------
# two-point observables
def hidden_index(widths):
    """Index (into :func:`forward`'s list) of the hidden layer "exactly halfway through the network" (T5, l.479):
    with ``N = len(widths) - 2`` hidden layers the network has ``N + 1`` affine layers and the halfway point is
    after ``(N + 1)/2`` of them, rounded down: hidden layer ``(N + 1) // 2`` (``= N/2`` for even ``N``, catalogue
    decision D3: layer 10 of 20; layer 1 of 1 or 2)."""
    w = _check_widths(widths)
    N = len(w) - 2
    if N < 1:
        raise ValueError(f"the network needs at least one hidden layer (widths = {list(widths)!r})")
    return (N + 1) // 2


def uvw(reps_h, outputs, y1, y2):
    """``(u, v, w)`` along a record of two-point data (Eq 8): ``u = |h(x_2) - h(x_1)|^2``,
    ``v = |dy|^2`` with ``dy = f(x_2) - f(x_1)``, ``w = v - dy.(y_2 - y_1)``.

    ``reps_h``: array ``(n, 2, n_H)`` (or a list of ``2 x n_H`` arrays); ``outputs``: ``(n, 2, d_out)``."""
    H = np.asarray(reps_h, dtype=float)
    F = np.asarray(outputs, dtype=float)
    if H.ndim == 2:
        H = H[None]
    if F.ndim == 2:
        F = F[None]
    if H.ndim != 3 or H.shape[1] != 2 or F.ndim != 3 or F.shape[1] != 2 or F.shape[0] != H.shape[0]:
        raise ValueError(f"reps_h must be (n, 2, n_H) and outputs (n, 2, d_out) for two-point data "
                         f"(got {H.shape} and {F.shape})")
    dY = np.atleast_1d(np.asarray(y2, dtype=float) - np.asarray(y1, dtype=float))
    if dY.shape != (F.shape[2],):
        raise ValueError(f"y1, y2 must have d_out = {F.shape[2]} entries")
    dh = H[:, 1] - H[:, 0]
    dy = F[:, 1] - F[:, 0]
    u = np.sum(dh * dh, axis=1)
    v = np.sum(dy * dy, axis=1)
    return u, v, v - dy @ dY
