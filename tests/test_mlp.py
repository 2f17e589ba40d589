"""solvers/mlp.py: the Numba epoch loop against the NumPy reference (same record to rounding), hand-written
backpropagation against the central differences of solvers/fd.py, the initialisation statistics, the two-point
observables, and bad input."""
import math

import numpy as np
import pytest

from solvers import fd, mlp

EPS = np.finfo(float).eps
X2 = np.array([[-1.0], [-0.5]])
Y2 = np.array([[0.6], [1.6]])


def _maxdiff(r1, r2):
    d = max(float(np.max(np.abs(a - b))) for ra, rb in zip(r1.reps, r2.reps) for a, b in zip(ra, rb))
    d = max(d, float(np.max(np.abs(r1.outputs - r2.outputs))))
    for (W1, b1), (W2, b2) in zip(r1.params, r2.params):
        d = max(d, float(np.max(np.abs(W1 - W2))), float(np.max(np.abs(b1 - b2))))
    return d


@pytest.mark.parametrize("nl", mlp.NONLINEARITIES)
@pytest.mark.parametrize("opt,bs", [("gd", None), ("gd", 2), ("adam", None), ("adam", 1)])
def test_numba_matches_numpy(nl, opt, bs):
    """Same record to rounding.  Error model: both backends do the same operations; BLAS may sum in another
    order, so per step a relative ``~ width * eps`` difference, amplified along 40 steps of a contracting GD
    (Lipschitz factor ``1 + lr * |Hessian|`` close to 1): bound ``1e3 * width * eps`` in absolute terms for
    O(1) entries; Adam divides by ``sqrt(v)``, where ``v`` can be tiny, so its bound is ``1e5 * width * eps``."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 3))
    Y = rng.standard_normal((5, 2))
    w = [3, 7, 6, 2]
    kw = dict(nonlinearity=nl, gain=1.2, lr=0.02, epochs=40, seed=1, record_every=9, optimizer=opt, batch_size=bs)
    r1 = mlp.train(X, Y, w, backend="numpy", **kw)
    r2 = mlp.train(X, Y, w, backend="numba", **kw)
    assert list(r1.epochs) == list(r2.epochs) == [0, 9, 18, 27, 36, 40]
    tol = (1e5 if opt == "adam" else 1e3) * max(w) * EPS
    assert _maxdiff(r1, r2) <= tol
    assert np.max(np.abs(r1.losses - r2.losses)) <= tol
    assert r1.losses[-1] < r1.losses[0]  # it trains


def test_record_layers_subset_and_full_agree():
    w = [1, 6, 6, 6, 1]
    full = mlp.train(X2, Y2, w, "leaky_relu", 1.0, 0.05, 20, 0, record_every=5, backend="numba")
    sub = mlp.train(X2, Y2, w, "leaky_relu", 1.0, 0.05, 20, 0, record_every=5, backend="numba",
                    record_layers=[2, 4])
    assert full.layers == (0, 1, 2, 3, 4) and sub.layers == (2, 4)
    assert np.array_equal(full.layer(2), sub.layer(2))
    assert np.array_equal(full.layer(4), full.outputs)
    assert np.array_equal(full.layer(0)[3], X2)
    # the recorded representations are those of forward() at the final parameters
    reps = mlp.forward(full.params, X2, "leaky_relu")
    for l in range(5):
        assert np.allclose(reps[l], full.reps[-1][l], rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="not recorded"):
        sub.layer(1)


@pytest.mark.parametrize("nl", mlp.NONLINEARITIES)
@pytest.mark.parametrize("loss", mlp.LOSSES)
def test_gradient_against_central_differences(nl, loss):
    """Hand backpropagation vs solvers.fd.gradient_with_error: entrywise |g - g_fd| <= 10 * err_fd + 1e-10
    (err_fd: Richardson truncation estimate plus cancellation, the fd module's error model; the 1e-10 floor covers
    a kink of (leaky) ReLU inside the stencil, excluded by the seed choice below)."""
    rng = np.random.default_rng(11)
    w = [2, 5, 4, 3]
    params = mlp.init_mlp(w, 1.3, 4, nl)
    params = [(W, rng.standard_normal(b.shape) * 0.3) for W, b in params]
    X = rng.standard_normal((4, 2))
    Y = rng.standard_normal((4, 3))
    L, grads = mlp.loss_and_grads(params, X, Y, nl, loss)
    theta = mlp.pack(params)
    # the pre-activations stay away from the ReLU kink (a central difference across it is wrong by O(1)):
    # a parameter step of 2h moves a pre-activation by at most ~ 2h (1 + |a_prev|_1) << min |z|
    _, pres = mlp._forward_pre(params, X, mlp.NONLINEARITIES.index(nl))
    assert min(float(np.min(np.abs(z))) for z in pres[:-1]) > 1e-3
    assert L == pytest.approx(mlp.loss_value(params, X, Y, nl, loss), rel=1e-14)

    def f(th):
        return mlp.loss_value(mlp.unpack(th, w), X, Y, nl, loss)

    (g_fd,), (err,) = fd.gradient_with_error(f, [theta], h=1e-5)
    g = mlp.pack(grads)
    assert np.all(np.abs(g - g_fd) <= 10 * err + 1e-10), float(np.max(np.abs(g - g_fd) - 10 * err))


def test_loss_conventions():
    params = mlp.init_mlp([1, 4, 2], 1.0, 0)
    X = np.array([[0.1], [0.2], [0.3]])
    Y = np.zeros((3, 2))
    f = mlp.forward(params, X, "leaky_relu")[-1]
    assert mlp.loss_value(params, X, Y, "leaky_relu", "mse_half_mean") == pytest.approx(
        0.5 * np.mean(np.sum(f ** 2, axis=1)), rel=1e-14)
    assert mlp.loss_value(params, X, Y, "leaky_relu", "mse_mean") == pytest.approx(np.mean(f ** 2), rel=1e-14)


def test_init_statistics():
    """Xavier normal: std = gain sqrt(2/(fan_in+fan_out)); sample std of 250000 entries within 5 standard errors
    (relative SE of a sample std = 1/sqrt(2n))."""
    params = mlp.init_mlp([300, 500, 500, 1], 1.3, 7)
    W = params[1][0]
    std = 1.3 * math.sqrt(2 / 1000)
    assert abs(W.std() / std - 1) < 5 / math.sqrt(2 * W.size)
    assert all(np.all(b == 0) for _, b in params)
    assert params[0][0].shape == (500, 300) and params[2][0].shape == (1, 500)
    # seeded
    assert np.array_equal(mlp.init_mlp([2, 3, 1], 1.0, 5)[0][0], mlp.init_mlp([2, 3, 1], 1.0, 5)[0][0])


def test_minibatch_is_seeded_and_differs_from_full_batch():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((6, 2)), rng.standard_normal((6, 1))
    a = mlp.train(X, Y, [2, 5, 1], "tanh", 1.0, 0.05, 10, 3, batch_size=2)
    b = mlp.train(X, Y, [2, 5, 1], "tanh", 1.0, 0.05, 10, 3, batch_size=2)
    c = mlp.train(X, Y, [2, 5, 1], "tanh", 1.0, 0.05, 10, 3)
    assert np.array_equal(a.outputs, b.outputs)
    assert np.max(np.abs(a.outputs - c.outputs)) > 1e-6
    # batch_size = P is full-batch GD
    d = mlp.train(X, Y, [2, 5, 1], "tanh", 1.0, 0.05, 10, 3, batch_size=6)
    assert np.allclose(d.outputs, c.outputs, rtol=0, atol=1e-13)


def test_linear_two_layer_gd_step_by_hand():
    """One GD step on a 1-1-1 linear net, Eq 1 loss: dL/dw2 = mean((f - y) h), dL/dw1 = mean((f - y) w2 x)."""
    init = [(np.array([[0.5]]), np.array([0.1])), (np.array([[2.0]]), np.array([-0.2]))]
    r = mlp.train(X2, Y2, [1, 1, 1], "linear", lr=0.1, epochs=1, init=init)
    h = 0.5 * X2[:, 0] + 0.1
    f = 2.0 * h - 0.2
    e = f - Y2[:, 0]
    w1 = 0.5 - 0.1 * np.mean(e * 2.0 * X2[:, 0])
    w2 = 2.0 - 0.1 * np.mean(e * h)
    assert r.params[0][0][0, 0] == pytest.approx(w1, rel=1e-14)
    assert r.params[1][0][0, 0] == pytest.approx(w2, rel=1e-14)
    assert r.losses[0] == pytest.approx(0.5 * np.mean(e ** 2), rel=1e-14)


def test_hidden_index_and_uvw():
    assert mlp.hidden_index([1] + [500] * 20 + [1]) == 10
    assert mlp.hidden_index([1, 500, 500, 1]) == 1
    assert mlp.hidden_index([1, 5, 1]) == 1
    H = np.array([[[0.0, 1.0], [3.0, 5.0]]])
    F = np.array([[[0.6], [1.1]]])
    u, v, w = mlp.uvw(H, F, [0.6], [1.6])
    assert u[0] == 25.0 and v[0] == pytest.approx(0.25) and w[0] == pytest.approx(0.25 - 0.5)
    with pytest.raises(ValueError, match="two-point"):
        mlp.uvw(np.zeros((1, 3, 2)), np.zeros((1, 3, 1)), [0.0], [1.0])


@pytest.mark.parametrize("kw,match", [
    (dict(widths=[1]), "at least 2"),
    (dict(widths=[1, 0, 1]), "positive integers"),
    (dict(widths=[1, 2.5, 1]), "positive integers"),
    (dict(nonlinearity="sigmoid"), "nonlinearity"),
    (dict(lr=-1.0), "lr"),
    (dict(lr=float("nan")), "lr"),
    (dict(epochs=-1), "epochs"),
    (dict(record_every=0), "record_every"),
    (dict(batch_size=3), "batch_size"),
    (dict(optimizer="sgdm"), "optimizer"),
    (dict(backend="cupy"), "backend"),
    (dict(loss="l1"), "loss"),
    (dict(gain=-1.0), "gain"),
    (dict(record_layers=[9]), "record_layers"),
    (dict(X=np.zeros((2, 3))), "X must be"),
    (dict(Y=np.zeros((3, 1))), "Y must be"),
    (dict(X=np.array([[np.nan], [0.0]])), "finite"),
])
def test_bad_input(kw, match):
    args = dict(X=X2, Y=Y2, widths=[1, 3, 1], nonlinearity="tanh", gain=1.0, lr=0.01, epochs=2, seed=0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        mlp.train(**args)
    with pytest.raises(ValueError, match="hidden layer"):
        mlp.hidden_index([1, 1])
