"""solvers.resnet_train: Numba kernels against the NumPy reference, backpropagation against central
finite differences (solvers.fd), the printed backprop variants (catalogue E8) against the same, and bad input."""
import numpy as np
import pytest

from solvers import resnet_train as rt
from solvers.fd import gradient_with_error

EPS = np.finfo(float).eps


def _net(n=5, d=3, dp=2, q=5, m=4, L=4, seed=0, init="iid"):
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, dp))
    A, V, W, B = rt.init_weights(d, dp, q, m, L, rng, init)
    V = rng.standard_normal(V.shape)
    A = A + 0.2 * rng.standard_normal(A.shape)
    B = B + 0.2 * rng.standard_normal(B.shape)
    return X, Y, A, V, W, B


@pytest.mark.parametrize("act", rt.ACTIVATIONS)
@pytest.mark.parametrize("shape", [(5, 3, 2, 5, 4, 4), (1, 1, 1, 1, 1, 1), (7, 2, 3, 6, 3, 9)])
def test_backprop_matches_finite_differences(act, shape):
    n, d, dp, q, m, L = shape
    X, Y, A, V, W, B = _net(n, d, dp, q, m, L, seed=sum(shape))
    _, *g = rt.grads_numpy(X, Y, A, V, W, B, act)
    fd, err = gradient_with_error(lambda a, v, w, b: rt.loss_numpy(X, Y, a, v, w, b, act), [A, V, W, B])
    for name, gi, fi, ei in zip("AVWB", g, fd, err):
        # fd.gradient_with_error's entrywise error estimate; ReLU is only piecewise smooth, so a kink inside
        # the stencil (|pre-activation| < 2h) would void it; the seeds here keep every |pre| > 1e-3.
        assert np.all(np.abs(gi - fi) <= 10 * ei + 1e-9 * max(1.0, np.abs(fi).max())), name


@pytest.mark.parametrize("variant", ["printed_313", "printed_315"])
def test_printed_backprop_variants_are_wrong(variant):
    X, Y, A, V, W, B = _net()
    _, *g = rt.grads_numpy(X, Y, A, V, W, B, "tanh", variant=variant)
    fd, _ = gradient_with_error(lambda a, v, w, b: rt.loss_numpy(X, Y, a, v, w, b, "tanh"), [A, V, W, B])
    rel = max(np.max(np.abs(gi - fi)) / np.max(np.abs(fi)) for gi, fi in zip(g, fd))
    assert rel > 0.05


@pytest.mark.parametrize("act", rt.ACTIVATIONS)
def test_numba_grads_match_numpy(act):
    X, Y, A, V, W, B = _net(9, 3, 3, 6, 5, 12, seed=3)
    a = rt.grads_numpy(X, Y, A, V, W, B, act)
    b = rt.grads(X, Y, A, V, W, B, act)
    assert abs(a[0] - b[0]) <= 64 * EPS * max(1.0, a[0])
    for x, y in zip(a[1:], b[1:]):
        # same operations, different BLAS summation order: (q + m + n) eps per product through L layers
        assert np.max(np.abs(x - y)) <= 1e3 * EPS * max(1.0, np.abs(x).max())


@pytest.mark.parametrize("train_AB", [False, True])
def test_numba_training_matches_numpy(train_AB):
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((8, 4)), rng.standard_normal((8, 4))
    A, V, W, B = rt.init_weights(4, 4, 6, 5, 8, rng, "tied")
    a = rt.train_numpy(X, Y, A, V, W, B, "gelu", 0.05, 30, train_AB=train_AB, every=7)
    b = rt.train(X, Y, A, V, W, B, "gelu", 0.05, 30, train_AB=train_AB, every=7)
    assert np.allclose(a["loss"], b["loss"], rtol=1e-12, atol=0)
    assert np.allclose(a["gaps"], b["gaps"], rtol=1e-9, atol=1e-13)
    assert np.allclose(a["V"], b["V"], rtol=1e-10, atol=1e-13)
    assert np.allclose(a["snap_W"], b["snap_W"], rtol=1e-10, atol=1e-13)
    assert np.array_equal(a["snap_t"], b["snap_t"]) and len(b["snap_t"]) == 6      # t = 0, 7, ..., 28, 30
    assert b["loss"][-1] < b["loss"][0]
    if not train_AB:
        assert np.array_equal(b["A"], A) and np.array_equal(b["B"], B)


def test_gd_is_euler_for_the_depth_scaled_flow():
    """One GD step with lr L*eta moves Z_k by -eta * L dl/dZ_k (3.4) and the loss decreases to first order."""
    rng = np.random.default_rng(2)
    X, Y = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    A, V, W, B = rt.init_weights(3, 3, 5, 4, 10, rng, "tied")
    _, _, dV, dW, _ = rt.grads(X, Y, A, V, W, B, "tanh")
    out = rt.train(X, Y, A, V, W, B, "tanh", 1e-3, 1)
    assert np.allclose(out["V"], V - 10 * 1e-3 * dV, rtol=0, atol=1e-15)
    assert np.allclose(out["W"], W - 10 * 1e-3 * dW, rtol=0, atol=1e-14)
    g2 = 10 * (np.sum(dV ** 2) + np.sum(dW ** 2))
    assert out["loss"][0] - out["loss"][1] == pytest.approx(1e-3 * g2, rel=1e-2)


def test_init_and_zero_residual():
    rng = np.random.default_rng(0)
    A, V, W, B = rt.init_weights(2, 3, 6, 4, 5, rng, "tied")
    assert np.all(V == 0) and np.all(W == W[0]) and np.all(B @ A == 0)     # q >= d + d': BA = 0
    X = rng.standard_normal((4, 2))
    H, F = rt.forward_numpy(X, A, V, W, B, "gelu")
    assert np.all(H == H[0]) and np.all(F == 0)
    A, V, W, B = rt.init_weights(4, 4, 4, 3, 5, rng, "iid", frame="identity")
    assert np.array_equal(A, np.eye(4)) and not np.all(W == W[0])


def test_depth_index():
    assert list(rt.depth_index(5, [0, 0.25, 0.5, 0.999, 1.0])) == [0, 1, 2, 3, 4]
    assert list(rt.depth_index(1, [0, 1])) == [0, 0]
    L = 7
    assert list(rt.depth_index(L, np.arange(L) / (L - 1))) == list(range(L))    # theta_{k+1} = Theta(k/(L-1))


def test_bad_input():
    X, Y, A, V, W, B = _net()
    with pytest.raises(ValueError, match="activation"):
        rt.grads(X, Y, A, V, W, B, "swish")
    with pytest.raises(ValueError, match="W must have shape"):
        rt.grads(X, Y, A, V, W[:, :, :-1], B)
    with pytest.raises(ValueError, match="A must have shape"):
        rt.grads(X, Y, A[:, :-1], V, W, B)
    with pytest.raises(ValueError, match="B must have shape"):
        rt.grads(X, Y, A, V, W, B[:-1])
    with pytest.raises(ValueError, match="X and Y"):
        rt.grads(X, Y[:-1], A, V, W, B)
    bad = V.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="V contains NaN"):
        rt.train(X, Y, A, bad, W, B)
    with pytest.raises(ValueError, match="eta"):
        rt.train(X, Y, A, V, W, B, eta=-1.0)
    with pytest.raises(ValueError, match="steps"):
        rt.train(X, Y, A, V, W, B, steps=2.5)
    with pytest.raises(ValueError, match="variant"):
        rt.grads_numpy(X, Y, A, V, W, B, variant="paper")
    with pytest.raises(ValueError, match="q=2 must be"):
        rt.init_weights(3, 1, 2, 4, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="init"):
        rt.init_weights(3, 1, 4, 4, 3, np.random.default_rng(0), init="orthogonal")
    with pytest.raises(ValueError, match="s must lie"):
        rt.depth_index(4, [1.5])
