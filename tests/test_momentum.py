"""solvers.momentum: Numba kernels against the NumPy reference, exact reversible multiplication,
backpropagation against finite differences, and bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from solvers import momentum as mom
from theorems.params import ParamError
from theorems.registry import get_claim

EPS = np.finfo(float).eps


def _net(L=6, p=5, d=3, B=4, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    W1, W2, b = mom.random_weights(L, p, d, rng, scale=scale)
    x0 = rng.standard_normal((B, d))
    v0 = 0.3 * rng.standard_normal((B, d))
    return W1, W2, b, x0, v0


@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (6, 5, 3, 4), (20, 16, 8, 3), (3, 1, 7, 2)])
@pytest.mark.parametrize("gamma", [0.9, 0.5, 1.0])
def test_kernels_match_numpy_reference(shape, gamma):
    L, p, d, B = shape
    W1, W2, b, x0, v0 = _net(L, p, d, B, seed=L + d)
    xa, va = mom.forward(x0, v0, gamma, W1, W2, b)
    xb, vb = mom.forward_numpy(x0, v0, gamma, W1, W2, b)
    xs, vs = mom.trajectory_numpy(x0, v0, gamma, W1, W2, b)
    S = max(1.0, np.abs(xs).max(), np.abs(vs).max())
    # the two differ only in summation order inside f: (p + d) eps per evaluation, carried through L layers
    # with growth <= (1/gamma)(1 + |F|) per layer; (1 + 2|W|)^L (p + d) eps S bounds it for these sizes
    growth = (1 / gamma) * (1 + np.abs(W1).sum(2).max() * np.abs(W2).sum(1).max())
    tol = 4 * (p + d) * EPS * S * growth ** L
    assert np.max(np.abs(xa - xb)) <= tol and np.max(np.abs(va - vb)) <= tol
    assert np.array_equal(xb, xs[-1]) and np.array_equal(vb, vs[-1])
    ya, wa = mom.inverse(xb, vb, gamma, W1, W2, b)
    yb, wb = mom.inverse_numpy(xb, vb, gamma, W1, W2, b)
    assert np.max(np.abs(ya - yb)) <= tol * growth ** L
    assert np.max(np.abs(yb - x0)) <= 1e-9 * S      # shallow nets: the round trip loses few digits


def test_float32_path_stays_float32_and_loses_more():
    W1, W2, b, x0, v0 = _net(30, 8, 4, 3)
    f32 = [a.astype(np.float32) for a in (x0, v0, W1, W2, b)]
    xL, vL = mom.forward_numpy(f32[0], f32[1], 0.8, *f32[2:])
    assert xL.dtype == np.float32 and vL.dtype == np.float32
    xr, _ = mom.inverse_numpy(xL, vL, 0.8, *f32[2:])
    assert xr.dtype == np.float32
    e32 = np.max(np.abs(xr.astype(float) - f32[0].astype(float)))
    x64, v64 = mom.forward_numpy(x0, v0, 0.8, W1, W2, b)
    e64 = np.max(np.abs(mom.inverse_numpy(x64, v64, 0.8, W1, W2, b)[0] - x0))
    assert e32 > 1e4 * e64


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("gamma", [0.9, 0.5, 0.99])
def test_exact_multiplication_reconstructs_bit_for_bit(dtype, gamma):
    W1, W2, b, x0, v0 = _net(40, 6, 3, 3, seed=2)
    fr = mom.as_fraction(gamma)
    xi, vi, buf = mom.forward_exact(x0, v0, fr.numerator, fr.denominator, W1, W2, b, radix=40, dtype=dtype)
    x0i, v0i, b0 = mom.inverse_exact(xi, vi, buf, fr.numerator, fr.denominator, W1, W2, b, radix=40, dtype=dtype)
    assert np.all(x0i == mom.to_fixed(x0, 40)) and np.all(v0i == mom.to_fixed(v0, 40)) and np.all(b0 == 0)
    # the fixed-point forward tracks the float64 forward: per step a quantisation 2^-40 or the rounding of f in
    # dtype, over 40 layers of the (stable, ODE-like) forward map: 1e4 x that unit x the state scale
    xf, _ = mom.forward_numpy(x0, v0, fr.numerator / fr.denominator, W1, W2, b)
    unit = max(2.0 ** -40, float(np.finfo(dtype).eps))
    assert np.max(np.abs(mom.from_fixed(xi, 40) - xf)) < 1e4 * unit * max(1.0, np.abs(xf).max())


@settings(max_examples=60, deadline=None, derandomize=True)
@given(c=st.integers(-2**70, 2**70), n=st.integers(1, 1000), extra=st.integers(0, 1000), k=st.integers(1, 40))
def test_rmul_round_trip_property(c, n, extra, k):
    d = n + extra
    cc, i = c, 0
    for _ in range(k):
        cc, i = mom.rmul(cc, i, n, d)
    assert i >= 0
    for _ in range(k):
        cc, i = mom.rmul_inverse(cc, i, n, d)
    assert cc == c and i == 0


def test_rmul_single_step_is_euclid():
    c, i = mom.rmul(1234567, 0, 9, 10)
    # i = 0*10 + 7 = 7, c = 123456*9 + 7 % 9 = 1111111, i = 7 // 9 = 0
    assert (c, i) == (1111111, 0)
    assert mom.rmul_inverse(c, i, 9, 10) == (1234567, 0)


def _loss(x0, v0, gamma, W1, W2, b, gx, gv):
    xL, vL = mom.forward_numpy(x0, v0, gamma, W1, W2, b)
    return np.sum(gx * xL) + np.sum(gv * vL)


@pytest.mark.parametrize("recompute", [False, True])
@pytest.mark.parametrize("gamma", [0.9, 0.4])
def test_backprop_matches_finite_differences(recompute, gamma):
    W1, W2, b, x0, v0 = _net(5, 4, 3, 2, seed=7)
    rng = np.random.default_rng(8)
    gx, gv = rng.standard_normal((2,) + x0.shape)
    g = mom.backprop(x0, v0, gamma, W1, W2, b, gx, gv, recompute=recompute)
    args = {"x0": x0, "v0": v0, "W1": W1, "W2": W2, "b": b}
    h = 1e-6
    for name, a in args.items():
        fd = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = {k: v.copy() for k, v in args.items()}
            lo = {k: v.copy() for k, v in args.items()}
            hi[name][idx] += h
            lo[name][idx] -= h
            fd[idx] = (_loss(hi["x0"], hi["v0"], gamma, hi["W1"], hi["W2"], hi["b"], gx, gv)
                       - _loss(lo["x0"], lo["v0"], gamma, lo["W1"], lo["W2"], lo["b"], gx, gv)) / (2 * h)
        # central differences: h^2 |L'''| + eps |L| / h ~ 1e-12 + 1e-9 for these O(10) losses
        assert np.max(np.abs(g[name] - fd)) < 1e-7, name


def test_layer_jacobian_blocks_and_determinant():
    W1, W2, b, x0, v0 = _net(1, 5, 3, 2, seed=3)
    gamma, d = 0.7, 3
    J = mom.layer_jacobian(x0, gamma, W1[0], W2[0], b[0])
    for s in range(2):
        z = np.concatenate([x0[s], v0[s]])

        def layer(z):
            x1, v1 = mom.forward_numpy(z[None, :d], z[None, d:], gamma, W1, W2, b)
            return np.concatenate([x1[0], v1[0]])
        Jfd = np.column_stack([(layer(z + 1e-6 * e) - layer(z - 1e-6 * e)) / 2e-6 for e in np.eye(2 * d)])
        assert np.max(np.abs(J[s] - Jfd)) < 1e-8
        assert abs(np.linalg.det(J[s]) - gamma ** d) < 1e-12


@pytest.mark.parametrize("gamma", [0.0, -0.1, 1.5, float("nan")])
def test_bad_gamma_is_a_clear_error(gamma):
    W1, W2, b, x0, v0 = _net()
    for fn in (mom.forward, mom.forward_numpy, mom.inverse, mom.inverse_numpy):
        with pytest.raises(ValueError, match=r"gamma=.* must lie in \(0, 1\]"):
            fn(x0, v0, gamma, W1, W2, b)


def test_shape_mismatches_are_clear_errors():
    W1, W2, b, x0, v0 = _net(L=4, p=5, d=3, B=2)
    with pytest.raises(ValueError, match="v has shape"):
        mom.forward(x0, v0[:, :2], 0.9, W1, W2, b)
    with pytest.raises(ValueError, match="x must have shape"):
        mom.forward_numpy(x0[0], v0[0], 0.9, W1, W2, b)
    with pytest.raises(ValueError, match="its last axis must be d=3"):
        mom.forward(x0, v0, 0.9, W1[:, :, :2], W2[:, :, :2], b)
    with pytest.raises(ValueError, match="W2 has shape"):
        mom.inverse(x0, v0, 0.9, W1, W2[:3], b)
    with pytest.raises(ValueError, match=r"b has shape"):
        mom.inverse_numpy(x0, v0, 0.9, W1, W2, b[:, :4])
    with pytest.raises(ValueError, match="NaN or infinite"):
        mom.forward(x0 * np.nan, v0, 0.9, W1, W2, b)
    with pytest.raises(ValueError, match="gx, gv have shapes"):
        mom.backprop(x0, v0, 0.9, W1, W2, b, x0[:1], v0)
    with pytest.raises(ValueError, match="positive integers"):
        mom.rmul(5, 0, 0, 3)
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\]"):
        mom.forward_exact(x0, v0, 3, 2, W1, W2, b)


def test_claim_parameters_reject_bad_input():
    with pytest.raises(ParamError, match="gamma"):
        get_claim("sander.momentum_reconstruction").resolve({"gamma": 0.0})
    with pytest.raises(ParamError, match="num=11 > den=10"):
        get_claim("sander.exact_multiplication").resolve({"num": 11, "den": 10})
    with pytest.raises(ParamError, match="dtype"):
        get_claim("sander.momentum_reconstruction").resolve({"dtype": "float16"})
