"""solvers.leaky: cost of identity with the image-condition convention, Hamilton's equations."""
import numpy as np
import pytest

from solvers import leaky


def test_coi_image_condition_convention():
    # all entries negative: relu(A) = 0, Im A^T is not in Im Kbar = {0}  ->  +inf without bias
    A = np.array([[-0.329, -0.792]])
    assert leaky.coi(A, bias=False) == np.inf
    # with bias, K = 1 1^T, Im K = constants; A is not constant -> +inf
    assert leaky.coi(A, bias=True) == np.inf
    # a non-negative rank-r matrix: COI without bias = rank (catalogue C1 corrected)
    rng = np.random.default_rng(0)
    A = np.abs(rng.standard_normal((6, 2))) @ np.abs(rng.standard_normal((2, 5)))
    assert leaky.coi(A, bias=False) == pytest.approx(2.0, rel=1e-9)
    # the pseudo-inverse formula agrees where the condition holds
    S = leaky.sigma(A, bias=False)
    assert leaky.coi(A, bias=False) == pytest.approx(np.linalg.norm(A @ np.linalg.pinv(S)) ** 2, rel=1e-9)


def test_coi_gamma_finite_and_monotone():
    A = np.array([[-0.329, -0.792]])
    vals = [leaky.coi_gamma(A, g, bias=False) for g in (1.0, 0.1, 0.01)]
    assert all(np.isfinite(vals)) and vals[0] < vals[1] < vals[2]
    with pytest.raises(ValueError, match="gamma"):
        leaky.coi_gamma(A, 0.0)


def test_numba_rhs_matches_numpy():
    rng = np.random.default_rng(1)
    w, N, Lt = 4, 3, 2.5
    y = leaky.pack(rng.standard_normal((w, N)), rng.standard_normal((w, N)), 0.3)
    for variant in (0, 1, 2):
        a = leaky.hamilton_rhs_numpy(0.0, y, w, N, Lt, variant)
        b = leaky.hamilton_rhs(0.0, y, (w, N, Lt, variant))
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_shoot_backends_agree_and_conserve():
    rng = np.random.default_rng(2)
    A0, B0 = rng.standard_normal((3, 4)), 0.2 * rng.standard_normal((3, 4))
    Y1, _ = leaky.shoot(A0, B0, 2.0, n_out=10, backend="numpy")
    Y2, _ = leaky.shoot(A0, B0, 2.0, n_out=10, backend="numba")
    # Same controller, but rounding differences decide step acceptance differently next to a ReLU
    # kink, so the two paths agree to the global integration error (~1e-8 at rtol 1e-11, estimated
    # by the rtol 1e-9 / 1e-11 comparison in jacot.hamiltonian_conservation), not to rounding.
    np.testing.assert_allclose(Y1, Y2, rtol=1e-6, atol=1e-8)
    H = [leaky.hamiltonian(*leaky.unpack(y, 3, 4)[:2], 2.0) for y in Y2]
    assert np.ptp(H) < 1e-6 * leaky.hamiltonian_scale(A0, B0, 2.0)


def test_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        leaky.shoot(np.zeros((2, 3)), np.zeros((3, 2)), 1.0)
    with pytest.raises(ValueError, match="Lt"):
        leaky.shoot(np.zeros((2, 3)), np.zeros((2, 3)), 0.0)
    with pytest.raises(ValueError, match="non-finite"):
        leaky.coi(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="w x N"):
        leaky.sigma(np.zeros(3))


def test_central_differences():
    from solvers import fd
    X = np.array([[0.3, -1.2], [2.0, 0.5]])
    g = fd.central_difference(lambda Z: float(np.sum(Z**3)), X, 1e-5)
    np.testing.assert_allclose(g, 3 * X**2, rtol=1e-8)   # truncation h^2 |f'''| / 6 = 1e-10
    (gx, gy), (ex, ey) = fd.gradient_with_error(lambda x, y: float(np.sum(x * y**2)), [X, X.T], 1e-4)
    np.testing.assert_allclose(gx, X.T**2, atol=10 * ex.max())
    np.testing.assert_allclose(gy, 2 * X * X.T, atol=10 * ey.max())
