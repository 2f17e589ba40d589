"""solvers.sinkhorn: Numba kernels against the NumPy reference, the iteration count (full iterations), the
SoftMax half-step, the (5.13) normalisation, gradients against finite differences, Gaussian closed forms against
a discretised Sinkhorn, and bad input."""
import math

import numpy as np
import pytest

from solvers import sinkhorn as sk
from solvers.fd import gradient_with_error

EPS = np.finfo(float).eps


@pytest.mark.parametrize("n,scale,seed", [(1, 1.0, 0), (2, 0.5, 1), (7, 1.0, 2), (30, 3.0, 3), (64, 6.0, 4)])
def test_numba_matches_numpy_reference(n, scale, seed):
    C = scale * np.random.default_rng(seed).standard_normal((n, n))
    a = sk.sinkhorn(C, tol=1e-12, backend="numba", method="log")
    b = sk.sinkhorn(C, tol=1e-12, backend="numpy", method="log")
    assert a.converged and b.converged
    assert a.n_iter == b.n_iter                      # same stopping rule, same count
    # the two differ only in the order of summation inside log-sum-exp: n eps per half-step, amplified by the
    # conditioning 1/(1 - sigma_2) of the scaling
    s = np.linalg.svd(a.K, compute_uv=False)
    gap = 1 - s[1] if n > 1 else 1.0
    assert np.max(np.abs(a.K - b.K)) <= 8 * n * EPS * a.n_iter / gap * a.K.max() + 1e-13


def test_iteration_count_is_full_iterations_and_stopping_rule():
    C = np.random.default_rng(0).standard_normal((9, 9))
    r = sk.sinkhorn(C, tol=1e-10)
    # K after m full iterations is K^(2m) of the literal recursion (5.3)
    assert np.max(np.abs(sk.half_steps_numpy(C, 2 * r.n_iter) - r.K)) < 1e-14
    # the rule: row error <= tol now, and not after m - 1 full iterations
    assert sk.row_col_errors(r.K)[0] <= 1e-10
    prev = sk.half_steps_numpy(C, 2 * (r.n_iter - 1))
    assert sk.row_col_errors(prev)[0] > 1e-10
    # max_iter caps full iterations and reports non-convergence
    r2 = sk.sinkhorn(C, tol=1e-15, max_iter=2)
    assert r2.n_iter == 2 and not r2.converged


def test_softmax_is_one_half_step_and_limit_is_doubly_stochastic():
    C = 2 * np.random.default_rng(1).standard_normal((6, 6))
    assert np.max(np.abs(sk.half_steps_numpy(C, 1) - sk.softmax_rows(C))) < 1e-15
    r = sk.sinkhorn(C, tol=1e-13)
    row, col = sk.row_col_errors(r.K)
    assert row <= 1e-13 and col <= 1e-14
    assert sk.row_col_errors(sk.softmax_rows(C))[1] > 1e-2     # SoftMax is not column-stochastic


def test_weighted_kernel_is_n_times_matrix_and_513_marginals():
    n = 7
    C = np.random.default_rng(2).standard_normal((n, n))
    K = sk.sinkhorn(C, tol=1e-14).K
    k = sk.sinkhorn(C, np.full(n, -math.log(n)), tol=1e-14).K
    assert np.max(np.abs(k - n * K)) < 1e-12
    f, g, P = sk.sinkhorn_513_numpy(C, 400)
    assert np.allclose(P.sum(1), 1 / n, atol=1e-12) and np.allclose(n * P, K, atol=1e-12)


def test_batch_kernel():
    Cs = np.random.default_rng(3).standard_normal((4, 5, 5))
    F, G, it, err, ok = sk.sinkhorn_log_batch(Cs, np.zeros(5), 1e-12, 10_000)
    for b in range(4):
        r = sk.sinkhorn(Cs[b], tol=1e-12)
        assert it[b] == r.n_iter and ok[b]
        assert np.allclose(np.exp(Cs[b] + F[b][:, None] + G[b][None, :]), r.K, atol=1e-14)


@pytest.mark.parametrize("seed", [0, 1])
def test_gradients_against_finite_differences(seed):
    rng = np.random.default_rng(seed)
    n, d = 5, 2
    X = rng.standard_normal((n, d))
    WQ, WK = 0.6 * rng.standard_normal((2, d, d))          # general (non-symmetric) M
    (g0,), (e0,) = gradient_with_error(lambda Y: sk.functional_F0(Y, WQ, WK), [X], 1e-4)
    assert np.all(np.abs(g0 - sk.gradient_F0(X, WQ, WK)) <= 2 * e0 + 1e-12)
    (gi,), (ei,) = gradient_with_error(lambda Y: sk.functional_Finf(Y, WQ, WK)[0], [X], 1e-4)
    assert np.all(np.abs(gi - sk.gradient_Finf(X, WQ, WK)) <= 2 * ei + 1e-9)


def test_symmetric_potential_and_dual_value():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((6, 2))
    W = 0.7 * rng.standard_normal((2, 2))
    F, a = sk.functional_Finf(X, W, W)
    assert abs(F + a.mean()) < 1e-14
    C = sk.cost_matrix(X, W, W)
    a2, _, _ = sk.symmetric_potential(0.5 * (C + C.T), np.full(6, -math.log(6)))
    assert np.allclose(a, a2, atol=1e-12)


def test_gaussian_closed_form_against_discretised_sinkhorn():
    """1-D: mu = N(0, s^2) discretised on a fine grid; E[y|x] from a weighted Sinkhorn matches the closed form
    to the quadrature error (grid step 0.024, 8 standard deviations; the trapezoid rule is spectrally accurate here)."""
    s2, m, eps = 0.8, 1.5, 0.3
    xs = np.linspace(-8 * math.sqrt(s2), 8 * math.sqrt(s2), 601)
    logw = -xs ** 2 / (2 * s2)
    logw -= np.log(np.sum(np.exp(logw)))
    C = m * np.outer(xs, xs) / eps
    r = sk.sinkhorn(C, logw, tol=1e-12, max_iter=100_000)
    K = np.exp(C + r.f[:, None] + r.g[None, :] + logw[None, :])
    Ey = (K @ xs) / K.sum(1)
    D = sk.gaussian_sinkhorn(np.array([[m]]), np.array([[s2]]), eps)[0, 0]
    sel = np.abs(xs) < 1.5
    assert np.max(np.abs(Ey[sel] - (1 + D) * xs[sel])) < 1e-6


def test_l2softmax_closed_form_against_monte_carlo_free_quadrature():
    """1-D: E[x'|x] for the kernel exp(-(q x - k x')^2/(2 eps)) against N(0, s^2), by quadrature."""
    q, k, s2, eps = 1.3, 0.7, 0.9, 0.2
    xp = np.linspace(-10, 10, 20001)
    x = 0.6
    wts = np.exp(-(q * x - k * xp) ** 2 / (2 * eps) - xp ** 2 / (2 * s2))
    Ex = float(np.sum(wts * xp) / np.sum(wts))
    B = sk.gaussian_l2softmax(np.array([[q]]), np.array([[k]]), np.array([[s2]]), eps)[0, 0]
    assert abs(Ex - B * x) < 1e-10


@pytest.mark.parametrize("bad,msg", [
    (np.ones((2, 3)), "square"), (np.array([[np.nan]]), "NaN"), (np.ones(3), "2-D"),
    (np.array([["a"]]), "numeric"), (np.ones((2, 2)) * 1j, "real")])
def test_bad_cost(bad, msg):
    with pytest.raises(ValueError, match=msg):
        sk.sinkhorn(bad)


def test_bad_run_arguments():
    C = np.zeros((3, 3))
    with pytest.raises(ValueError, match="tol"):
        sk.sinkhorn(C, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        sk.sinkhorn(C, max_iter=0)
    with pytest.raises(ValueError, match="logw"):
        sk.sinkhorn(C, logw=np.zeros(2))
    with pytest.raises(ValueError, match="backend"):
        sk.sinkhorn(C, backend="torch")
    with pytest.raises(ValueError, match="half-steps"):
        sk.half_steps_numpy(C, -1)
    with pytest.raises(ValueError, match="kind"):
        sk.particle_field(np.zeros((3, 2)), np.eye(2), np.eye(2), np.eye(2), kind="2")


# ---------------------------------------------------------------------------
# the exponential-domain scaling against the log domain, its fallback, and POT as an oracle
def _offset_cost(n, scale, offset, seed):
    """D + a_i + b_j: Sinkhorn's answer depends on D only (the offsets go into the potentials), but the
    scalings of exp(C) range over e^offset."""
    rng = np.random.default_rng(seed)
    return scale * rng.standard_normal((n, n)) + offset * rng.uniform(-1, 1, (n, 1)) + offset * rng.uniform(-1, 1, n)


@pytest.mark.parametrize("n,scale,offset,seed", [(1, 1.0, 0, 0), (2, 0.5, 0, 1), (7, 1.0, 0, 2), (30, 3.0, 0, 3),
                                                 (64, 6.0, 0, 4), (50, 1.0, 300.0, 5)])
def test_scaling_matches_the_log_domain(n, scale, offset, seed):
    """Same iteration, two domains: the iteration counts agree (up to one where the row error crosses tol
    within rounding) and the kernels agree to the rounding of n-term sums amplified by the conditioning
    1/(1 - sigma_2) of the scaling, as in the numba/numpy comparison above.  Offsets of 300 force
    absorptions (scalings beyond 1e100)."""
    C = _offset_cost(n, scale, offset, seed)
    a = sk.sinkhorn(C, tol=1e-12, method="scaling")
    b = sk.sinkhorn(C, tol=1e-12, method="log")
    assert a.method == "scaling" and b.method == "log" and a.converged and b.converged
    assert abs(a.n_iter - b.n_iter) <= 1
    s = np.linalg.svd(b.K, compute_uv=False)
    gap = 1 - s[1] if n > 1 else 1.0
    assert np.max(np.abs(a.K - b.K)) <= 8 * n * EPS * b.n_iter / gap * b.K.max() + 1e-12 * b.K.max()
    assert sk.row_col_errors(a.K)[0] <= 1e-12 + 4 * n * EPS


def test_auto_falls_back_to_the_log_domain_where_the_scaling_underflows():
    """Column offsets spread over 3000 (keys of very different norms): after the row half-step, whole columns
    of exp(C + alpha) are below the smallest double, the scaling stops and the log domain converges to
    the same answer as for the offset-free cost."""
    C = _offset_cost(20, 1.0, 3000.0, 7)
    assert sk.sinkhorn_scaling(C, tol=1e-10, max_iter=5000) is None
    with pytest.raises(FloatingPointError):
        sk.sinkhorn(C, tol=1e-10, max_iter=5000, method="scaling")
    r = sk.sinkhorn(C, tol=1e-10, max_iter=5000)
    assert r.method == "log" and r.converged
    row, col = sk.row_col_errors(r.K)
    assert row <= 1e-10 and col <= 1e-12
    D = _offset_cost(20, 1.0, 0.0, 7)            # the same D (same draws): offsets change nothing
    assert np.max(np.abs(sk.sinkhorn(D, tol=1e-12).K - r.K)) <= 1e-8


def test_pot_exponential_domain_fails_where_auto_succeeds():
    """The case above for POT's plain Sinkhorn-Knopp (exp(-M/reg) with M = -C): NaN or a plan off its
    marginals, where ours took the log domain."""
    ot = pytest.importorskip("ot")
    import warnings
    C = _offset_cost(20, 1.0, 3000.0, 7)
    w = np.full(20, 1.0 / 20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            P = ot.sinkhorn(w, w, -C, 1.0, numItermax=5000, stopThr=1e-12)
    assert not np.all(np.isfinite(P)) or np.max(np.abs(P.sum(1) - w)) > 1e-6


def test_scaling_agrees_with_pot():
    """POT's Sinkhorn-Knopp as the oracle: plan P = w_i K_ij w_j with marginals w, cost M = -C, reg = 1."""
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(11)
    n = 40
    C = 2.0 * rng.standard_normal((n, n))
    w = np.full(n, 1.0 / n)
    r = sk.sinkhorn(C, np.log(w), tol=1e-13, max_iter=100_000)
    P = ot.sinkhorn(w, w, -C, 1.0, numItermax=100_000, stopThr=1e-15)
    assert r.method == "scaling"
    assert np.max(np.abs(w[:, None] * r.K * w[None, :] - P)) <= 1e-12 * P.max()
