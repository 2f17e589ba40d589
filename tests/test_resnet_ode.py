"""solvers.resnet_ode: Numba kernels against the NumPy references, backward passes against central
finite differences (solvers.fd), the memory-free kernels against backprop on reconstructed
activations, and bad input."""
import numpy as np
import pytest

from solvers import resnet_ode as ro
from solvers.fd import gradient_with_error

EPS = np.finfo(float).eps


def _net(N=6, d=3, B=2, seed=0, heun=False, family="iid"):
    rng = np.random.default_rng(seed)
    gen = ro.iid_weights if family == "iid" else ro.smooth_weights
    W, b = gen(N, d, rng, heun=heun)
    x0 = rng.standard_normal((B, d))
    y = rng.standard_normal((B, d))
    return x0, W, b, y


def _tol(N, d, xs):
    # rounding model of the module docstring: N (d + 2) eps e^{Lf} max|x|, Lf <= |W|_2 <= 3 here
    return 8 * N * (d + 2) * EPS * np.exp(3.0) * max(1.0, np.abs(xs).max())


@pytest.mark.parametrize("N,d,B", [(1, 1, 1), (5, 3, 2), (40, 4, 3), (7, 8, 1)])
def test_euler_kernels_match_numpy(N, d, B):
    x0, W, b, y = _net(N, d, B, seed=N + d)
    xs = ro.euler_forward(x0, W, b, N)
    xr = ro.euler_forward_numpy(x0, W, b, N)
    tol = _tol(N, d, xs)
    assert xs.shape == (N + 1, B, d) and np.max(np.abs(xs - xr)) <= tol
    rs, rr = ro.euler_reverse(xs[-1], W, b, N), ro.euler_reverse_numpy(xs[-1], W, b, N)
    assert np.max(np.abs(rs - rr)) <= tol and np.array_equal(rs[-1], xs[-1])
    gN = xs[-1] - y
    for a, c in zip(ro.euler_backward(xs, W, b, gN, N), ro.euler_backward_numpy(xs, W, b, gN, N)):
        assert np.max(np.abs(a - c)) <= tol * max(1, np.abs(c).max())
    for a, c in zip(ro.euler_adjoint(xs[-1], W, b, gN, N), ro.euler_adjoint_numpy(xs[-1], W, b, gN, N)):
        assert np.max(np.abs(a - c)) <= tol * max(1, np.abs(c).max())


@pytest.mark.parametrize("N,d,B", [(1, 1, 1), (5, 3, 2), (40, 4, 3), (7, 8, 1)])
def test_heun_kernels_match_numpy(N, d, B):
    x0, W, b, y = _net(N, d, B, seed=N + d, heun=True)
    xs, ys = ro.heun_forward(x0, W, b, N)
    xr, yr = ro.heun_forward_numpy(x0, W, b, N)
    tol = _tol(N, d, xs)
    assert ys.shape == (N, B, d) and np.max(np.abs(xs - xr)) <= tol and np.max(np.abs(ys - yr)) <= tol
    (rs, qs), (rr, qr) = ro.heun_reverse(xs[-1], W, b, N), ro.heun_reverse_numpy(xs[-1], W, b, N)
    assert np.max(np.abs(rs - rr)) <= tol and np.max(np.abs(qs - qr)) <= tol
    gN = xs[-1] - y
    for a, c in zip(ro.heun_backward(xs, W, b, gN, N), ro.heun_backward_numpy(xs, W, b, gN, N)):
        assert np.max(np.abs(a - c)) <= tol * max(1, np.abs(c).max())
    for a, c in zip(ro.heun_adjoint(xs[-1], W, b, gN, N), ro.heun_adjoint_numpy(xs[-1], W, b, gN, N)):
        assert np.max(np.abs(a - c)) <= tol * max(1, np.abs(c).max())


@pytest.mark.parametrize("heun", [False, True])
@pytest.mark.parametrize("family", ["iid", "smooth"])
def test_backward_matches_finite_differences(heun, family):
    N, d, B = 5, 3, 2
    x0, W, b, y = _net(N, d, B, seed=3, heun=heun, family=family)
    fwd = ro.heun_forward_numpy if heun else ro.euler_forward_numpy

    def loss(W_, b_, x_):
        out = fwd(x_, W_, b_, N)
        xN = (out[0] if heun else out)[-1]
        return ro.half_sq_loss(xN, y)[0]

    out = fwd(x0, W, b, N)
    xs = out[0] if heun else out
    back = ro.heun_backward if heun else ro.euler_backward
    dW, db, g0 = back(xs, W, b, xs[-1] - y, N)
    (fW, fb, fx), (eW, eb, ex) = gradient_with_error(loss, [W, b, x0], h=1e-5)
    for an, fd, err in ((dW, fW, eW), (db, fb, eb), (g0, fx, ex)):
        # FD error estimate (Richardson + cancellation), times 10 for safety, plus rounding of backprop
        assert np.all(np.abs(an - fd) <= 10 * err + 1e-12), np.max(np.abs(an - fd))
    assert np.max(np.abs(dW)) > 1e-3          # the check is not vacuous


@pytest.mark.parametrize("heun", [False, True])
def test_adjoint_equals_backprop_on_reconstruction(heun):
    N, d, B = 33, 4, 3
    x0, W, b, y = _net(N, d, B, seed=5, heun=heun)
    if heun:
        xs, _ = ro.heun_forward(x0, W, b, N)
        xr, _ = ro.heun_reverse(xs[-1], W, b, N)
        ref = ro.heun_backward(xr, W, b, xs[-1] - y, N)
        adj = ro.heun_adjoint(xs[-1], W, b, xs[-1] - y, N)
    else:
        xs = ro.euler_forward(x0, W, b, N)
        xr = ro.euler_reverse(xs[-1], W, b, N)
        ref = ro.euler_backward(xr, W, b, xs[-1] - y, N)
        adj = ro.euler_adjoint(xs[-1], W, b, xs[-1] - y, N)
    tol = _tol(N, d, xs)
    for a, c in zip(adj[:3], ref):
        assert np.max(np.abs(a - c)) <= tol * max(1, np.abs(c).max())
    assert np.max(np.abs(adj[3] - xr[0])) <= tol
    # and the reconstruction is only approximate: O(1/N) (Euler), smaller for Heun
    assert 0 < np.max(np.abs(xr[0] - x0)) < 1.0


def test_reversal_exact_for_constant_field():
    # W = 0: f = tanh(b) does not depend on x, so both reversals are exact up to rounding
    N, d = 17, 3
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, d))
    W, b = np.zeros((N + 1, d, d)), rng.standard_normal((N + 1, d))
    xs = ro.euler_forward(x0, W, b, N)
    assert np.max(np.abs(ro.euler_reverse(xs[-1], W, b, N)[0] - x0)) <= 4 * N * EPS * 4
    hs, _ = ro.heun_forward(x0, W, b, N)
    assert np.max(np.abs(ro.heun_reverse(hs[-1], W, b, N)[0][0] - x0)) <= 4 * N * EPS * 4


def test_bad_input():
    x0, W, b, _ = _net(4, 3, 2)
    with pytest.raises(ValueError, match="N=0"):
        ro.euler_forward(x0, W, b, 0)
    with pytest.raises(ValueError, match="shape \\(B, d\\)"):
        ro.euler_forward(x0[0], W, b, 4)
    with pytest.raises(ValueError, match="needs 5 parameter sets"):
        ro.heun_forward(x0, W, b, 4)
    with pytest.raises(ValueError, match="W must have shape"):
        ro.euler_forward(x0, W[:, :2], b, 4)
    with pytest.raises(ValueError, match="b must have shape"):
        ro.euler_forward(x0, W, b[:, :2], 4)
    bad = x0.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="x has a NaN"):
        ro.euler_forward(bad, W, b, 4)
