"""solvers.leaky_net: the discretised leaky ResNet (Jacot & Kaiser §4), kernels against the NumPy
reference, the hand-written gradient against central differences, step rules, bad input."""
import numpy as np
import pytest

from solvers import leaky_net as ln

EPS = np.finfo(float).eps


def _instance(seed=0, w=3, N=4, L=6, a=0.5):
    rng = np.random.default_rng(seed)
    X, Y = rng.standard_normal((w, N)), rng.standard_normal((w, N))
    Ws = rng.standard_normal((L, w, w + 1))
    return X, Y, Ws, ln.irregular(L, a)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernels_match_numpy(seed):
    X, Y, Ws, rho = _instance(seed)
    A1, A2 = ln.forward(X, Ws, rho, 2.0), ln.forward_numpy(X, Ws, rho, 2.0)
    # same operations in a different order: agreement to a few ulps of the largest activation
    np.testing.assert_allclose(A1, A2, rtol=0, atol=100 * EPS * np.abs(A2).max())
    for variant in (0, 1):
        g1 = ln.grad(X, Y, Ws, rho, 2.0, 0.1, variant=variant)
        g2 = ln.grad_numpy(X, Y, Ws, rho, 2.0, 0.1, variant=variant)
        np.testing.assert_allclose(g1, g2, rtol=0, atol=100 * EPS * max(np.abs(g2).max(), 1.0))


def test_gradient_central_differences():
    X, Y, Ws, rho = _instance(1)
    Lt, lam = 2.0, 0.1
    As = ln.forward_numpy(X, Ws, rho, Lt)
    assert np.min(np.abs(As[:-1])) > 1e-4  # away from the ReLU kinks at this seed
    g = ln.grad(X, Y, Ws, rho, Lt, lam)
    h = 1e-5
    fd = np.zeros_like(Ws)
    for idx in np.ndindex(Ws.shape):
        E = np.zeros_like(Ws)
        E[idx] = h
        fd[idx] = (ln.loss(X, Y, Ws + E, rho, Lt, lam) - ln.loss(X, Y, Ws - E, rho, Lt, lam)) / (2 * h)
    # Error model: central differences, truncation ~ h^2 |f'''| (f is a polynomial of degree ~2L+2 in W on a
    # ReLU pattern, |f'''| = O(10) here) plus cancellation 2 eps |f| / h ~ 1e-10: 1e-7 leaves a margin.
    assert np.max(np.abs(fd - g)) < 1e-7
    # the wrong backward pass (no leak factor) is far off
    assert np.max(np.abs(ln.grad(X, Y, Ws, rho, Lt, lam, variant=1) - fd)) > 1e-2


def test_gradient_vanishes_iff_critical_weights():
    # discrete H2: dL/dW_l = rho_l lam/Lt (W_l - Lt B_l sigma(A_{l-1})^T), B_l = -G_l / lam
    X, Y, Ws, rho = _instance(3)
    Lt, lam = 2.0, 0.3
    g0 = ln.grad(X, Y, Ws, rho, Lt, 0.0)  # rho_l G_l sigma^T
    g = ln.grad(X, Y, Ws, rho, Lt, lam)
    np.testing.assert_allclose(g - g0, rho[:, None, None] * lam / Lt * Ws, atol=1e-13)


def test_step_rules():
    np.testing.assert_allclose(ln.equidistant(7).sum(), 1.0)
    for L in (11, 19, 51):
        assert ln.irregular(L, 0.5, normalise=False).sum() == pytest.approx(1 - 0.5 / (4 * L * L), abs=1e-14)
        assert ln.irregular(L, 0.5).sum() == pytest.approx(1.0, abs=1e-14)
    assert ln.irregular(18, 0.5, normalise=False).sum() == pytest.approx(1.0, abs=1e-14)
    assert ln.irregular(18, 0.8).max() * 18 == pytest.approx(1.2, abs=1e-13)
    # adaptive rule: a path with equal relative increments is a fixed point; new rho sums to 1, is
    # positive and invariant under A -> s A
    As = np.array([[[2.0 ** k]] for k in range(6)])  # relative increments all 1/2
    rho = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    np.testing.assert_allclose(ln.adaptive_update(rho, As), rho, atol=1e-15)
    rng = np.random.default_rng(0)
    As = rng.standard_normal((6, 2, 3))
    new = ln.adaptive_update(rho, As)
    assert new.sum() == pytest.approx(1.0) and np.all(new > 0)
    np.testing.assert_allclose(ln.adaptive_update(rho, 3.7 * As), new, rtol=1e-14)


def test_bad_input():
    X, Y, Ws, rho = _instance(0)
    with pytest.raises(ValueError, match="D2's condition rho_l \\* Lt < 1"):
        ln.forward(X, Ws, ln.equidistant(6), 6.0)  # L = Lt: prefactor 0
    with pytest.raises(ValueError, match="D2"):
        ln.grad(X, Y, Ws, ln.equidistant(6), 7.5, 0.1, backend="numpy")
    with pytest.raises(ValueError, match="Ws must have shape"):
        ln.forward(X, Ws[:, :, :-1], rho, 1.0)
    with pytest.raises(ValueError, match="rho must have one step per layer"):
        ln.forward(X, Ws, rho[:-1], 1.0)
    with pytest.raises(ValueError, match="Y must have the shape"):
        ln.grad(X, Y[:, :-1], Ws, rho, 1.0, 0.1)
    with pytest.raises(ValueError, match="a must lie in"):
        ln.irregular(5, 1.0)
    with pytest.raises(ValueError, match="integer >= 1"):
        ln.equidistant(0)
    with pytest.raises(ValueError, match="backend"):
        ln.forward(X, Ws, rho, 1.0, backend="jax")
    with pytest.raises(ValueError, match="zero increment"):
        ln.adaptive_update(np.full(2, 0.5), np.ones((3, 1, 1)))
    with pytest.raises(ValueError, match="A_l is 0"):
        ln.adaptive_update(np.full(2, 0.5), np.zeros((3, 1, 1)))
    with pytest.raises(ValueError, match=r"L \+ 1"):
        ln.adaptive_update(np.full(3, 1 / 3), np.arange(1.0, 4.0).reshape(3, 1, 1))
