"""Solvers against references: Numba kernels vs NumPy references, orders of accuracy,
invariants, matrix functions vs SciPy, and the array-API paths under array-api-strict."""
import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings, strategies as st
from numba import njit

from solvers import dln, matfun, rk, sde
from solvers.specialise import register

EPS = np.finfo(float).eps


@register
@njit(cache=True)
def _osc(t, y, args):
    """Harmonic oscillator y = (x, v): x' = v, v' = -w^2 x (w = args[0])."""
    w = args[0]
    out = np.empty(2)
    out[0] = y[1]
    out[1] = -w * w * y[0]
    return out


def _osc_np(t, y, w):
    return np.array([y[1], -w * w * y[0]])


def _dln_problem(seed=0, widths=(3, 3, 3, 3)):
    rng = np.random.default_rng(seed)
    Ws = dln.random_layers(list(widths), rng)
    Y = rng.standard_normal((widths[-1], widths[0]))
    return list(widths), dln.pack(Ws), dln.make_args(list(widths), Y)


def test_dln_rhs_numba_matches_numpy(warm_kernels):
    for widths in [(3, 3, 3, 3), (2, 5, 3, 4), (1, 1, 1)]:
        w, y, args = _dln_problem(1, widths)
        for mode, coef in [(0, (0.0,)), (1, (0.5,)), (2, tuple(range(1, len(w)))), (3, (0.3,))]:
            a = dln.make_args(w, args[1], mode=mode, coef=coef)
            assert np.allclose(dln.dln_rhs(0.0, y, a), dln.dln_rhs_numpy(0.0, y, *a), rtol=0, atol=1e-13)


def test_dln_rhs_is_minus_gradient_of_loss():
    """The kernel's field is -grad of L = 1/2|phi(W) - Y|^2 (central differences, error ~ h^2 + eps/h)."""
    w, y, args = _dln_problem(2)
    _, Y, M, q, _, _ = args

    def L(z):
        W = dln.prod(dln.unpack(z, w))
        return 0.5 * np.sum((W - Y) ** 2)
    h = 1e-5
    g = np.array([(L(y + h * e) - L(y - h * e)) / (2 * h) for e in np.eye(y.size)])
    assert np.max(np.abs(-dln.dln_rhs_numpy(0.0, y, *args) - g)) < 1e-7


@pytest.mark.parametrize("method", ["euler", "heun", "midpoint", "rk3", "rk4"])
def test_fixed_step_kernels_agree_and_have_their_order(method, warm_kernels):
    _, _, _, order = rk.TABLEAUX[method]
    args = (np.array([1.3]),)
    y0 = np.array([1.0, 0.0])
    exact = np.array([np.cos(1.3), -1.3 * np.sin(1.3)])
    errs = []
    for n in (40, 80):
        a = rk.rk_fixed(_osc, 0.0, y0, 1.0 / n, n, args[0], method=method)
        b = rk.rk_fixed_numpy(_osc_np, 0.0, y0, 1.0 / n, n, (1.3,), method=method)
        assert np.max(np.abs(a - b)) < 1e-14
        errs.append(np.max(np.abs(a - exact)))
    observed = np.log2(errs[0] / errs[1])
    assert abs(observed - order) < 0.3, (method, observed)


def test_fixed_step_trajectory_output(warm_kernels):
    y, traj = rk.rk_fixed(_osc, 0.0, np.array([1.0, 0.0]), 0.01, 100, np.array([1.0]), every=10)
    assert traj.shape == (11, 2) and np.allclose(traj[-1], y) and np.allclose(traj[0], [1, 0])
    y2, traj2 = rk.rk_fixed_numpy(_osc_np, 0.0, np.array([1.0, 0.0]), 0.01, 100, (1.0,), every=10)
    assert np.allclose(traj, traj2, atol=1e-14)


def test_dopri5_kernel_matches_reference_and_exact_solution(warm_kernels):
    y0 = np.array([1.0, 0.0])
    a, acc, rej = rk.dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-10, atol=1e-12)
    b, acc2, rej2 = rk.dopri5_numpy(_osc_np, 0.0, y0, 5.0, (2.0,), rtol=1e-10, atol=1e-12)
    assert (acc, rej) == (acc2, rej2)
    assert np.max(np.abs(a - b)) < 1e-13
    exact = np.array([np.cos(10.0), -2 * np.sin(10.0)])
    assert np.max(np.abs(a - exact)) < 1e-8  # rtol 1e-10 per step, ~100 steps, stability factor O(1)


def test_dopri5_dln_matches_scipy_dop853(warm_kernels):
    from scipy.integrate import solve_ivp
    w, y0, args = _dln_problem(3)
    a, _, _ = rk.dopri5(dln.dln_rhs, 0.0, y0, 1.0, args, rtol=1e-11, atol=1e-13)
    ref = solve_ivp(lambda t, y: dln.dln_rhs_numpy(t, y, *args), (0, 1), y0, method="DOP853",
                    rtol=1e-13, atol=1e-14).y[:, -1]
    assert np.max(np.abs(a - ref)) < 1e-8


def test_implicit_midpoint_conserves_quadratic_invariants(warm_kernels):
    y0 = np.array([0.3, 1.1])
    a, it = rk.implicit_midpoint(_osc, 0.0, y0, 0.05, 400, np.array([1.7]))
    b, _ = rk.implicit_midpoint_numpy(_osc_np, 0.0, y0, 0.05, 400, (1.7,))
    assert np.max(np.abs(a - b)) < 1e-13
    energy = lambda y: 1.7 ** 2 * y[0] ** 2 + y[1] ** 2  # noqa: E731
    assert abs(energy(a) - energy(y0)) < 400 * 10 * EPS * energy(y0)
    # the explicit RK4 of the same step does drift: the check can tell the two apart
    c = rk.rk_fixed(_osc, 0.0, y0, 0.05, 400, np.array([1.7]))
    assert abs(energy(c) - energy(y0)) > 1e3 * abs(energy(a) - energy(y0)) + 1e-12


def test_implicit_midpoint_reports_nonconvergence():
    with pytest.raises(RuntimeError, match="reduce h"):
        rk.implicit_midpoint_numpy(_osc_np, 0.0, np.array([1.0, 0.0]), 5.0, 1, (10.0,), max_iter=20)


def test_unknown_method_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown Runge-Kutta method 'rk9'"):
        rk.rk_fixed_numpy(_osc_np, 0.0, np.zeros(2), 0.1, 1, (1.0,), method="rk9")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 6), st.floats(-2.0, 2.0), st.integers(0, 1000))
def test_psd_power_matches_scipy(d, a, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((d, d))
    S = X @ X.T + 0.1 * np.eye(d)
    ref = sla.fractional_matrix_power(S, a).real
    got = matfun.psd_power(S, a)
    cond = np.linalg.cond(S)
    # error model: eigh backward error ~ d eps |S|, amplified by |a| cond^{|a|} in S^a
    assert np.linalg.norm(got - ref) <= 100 * d * EPS * (1 + abs(a)) * cond ** max(1, abs(a)) * np.linalg.norm(ref)


def test_psd_power_zeroes_rounding_eigenvalues():
    """Without the cutoff (1e-17)^(1/4) ~ 6e-5 would pollute a rank-1 power (catalogue psd_pow note)."""
    v = np.array([[1.0], [2.0], [2.0]]) / 3
    S = v @ v.T + 1e-17 * np.eye(3)
    P = matfun.psd_power(S, 0.25)
    assert np.allclose(P, v @ v.T, atol=1e-14)
    assert np.allclose(matfun.psd_power(S, 0.0), np.eye(3))


def test_a_operator_matches_matrix_form_and_batches():
    rng = np.random.default_rng(4)
    W, Z = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    for N in (1, 2, 4):
        M = dln.a_matrix(W, N)
        assert np.allclose(M @ Z.ravel(), dln.a_operator(W, Z, N).ravel(), atol=1e-12)
    assert np.allclose(dln.a_matrix(W, 1), np.eye(9))
    # stacked (batched) input runs through the same code
    Wb, Zb = rng.standard_normal((5, 3, 3)), rng.standard_normal((5, 3, 3))
    batched = dln.a_operator(Wb, Zb, 3)
    assert np.allclose(batched[2], dln.a_operator(Wb[2], Zb[2], 3), atol=1e-12)


def test_balanced_point_is_balanced():
    rng = np.random.default_rng(5)
    lam = np.array([1.5, 1.0, 0.4])
    Qs = [dln.random_orthogonal(3, rng) for _ in range(5)]
    Ws = dln.balanced_point(lam, Qs)
    assert all(np.max(np.abs(C)) < 1e-14 for C in dln.conserved(Ws))
    assert np.allclose(dln.prod(Ws), Qs[0] @ np.diag(lam ** 4) @ Qs[-1].T, atol=1e-13)


def test_array_api_strict_paths():
    """The array-API code paths run unchanged on array-api-strict (nothing NumPy-only)."""
    xs = pytest.importorskip("array_api_strict")
    rng = np.random.default_rng(6)
    Wn, Zn = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    W, Z = xs.asarray(Wn), xs.asarray(Zn)
    got = dln.a_operator(W, Z, 3)
    assert np.allclose(np.asarray(got), dln.a_operator(Wn, Zn, 3), atol=1e-12)
    S = W @ W.mT
    assert np.allclose(np.asarray(matfun.psd_power(S, 0.5)), matfun.psd_power(Wn @ Wn.T, 0.5), atol=1e-12)
    lam = xs.asarray(np.array([1.2, 0.7, 0.3]))
    Qn = [dln.random_orthogonal(3, rng) for _ in range(4)]
    Ws = dln.balanced_point(lam, [xs.asarray(q) for q in Qn])
    Cs = dln.conserved(Ws)
    assert max(float(xs.max(xs.abs(C))) for C in Cs) < 1e-13
    D = dln.grads(Ws, Z)
    Dn = dln.grads([np.asarray(w) for w in Ws], Zn)
    assert all(np.allclose(np.asarray(a), b, atol=1e-12) for a, b in zip(D, Dn))


@pytest.mark.gpu
def test_cupy_paths_match_numpy():
    cp = pytest.importorskip("cupy")
    from solvers.xp import cupy_available
    ok, why = cupy_available()
    if not ok:
        pytest.skip(why)
    rng = np.random.default_rng(7)
    Wn, Zn = rng.standard_normal((4, 3, 3)), rng.standard_normal((4, 3, 3))
    got = dln.a_operator(cp.asarray(Wn), cp.asarray(Zn), 3)
    assert np.allclose(cp.asnumpy(got), dln.a_operator(Wn, Zn, 3), atol=1e-10)


def test_euler_maruyama_ou_moments():
    """dX = -X dt + dB: E X_T = x0 e^{-T}, Var X_T = (1 - e^{-2T})/2 (weak order 1 in dt)."""
    rng = np.random.default_rng(8)
    x = sde.euler_maruyama(lambda x: -x, lambda x, dB: dB, np.full((4000, 1), 2.0), 1e-2, 100, rng)
    T = 1.0
    se = np.sqrt(0.5 / 4000)
    assert abs(x.mean() - 2 * np.exp(-T)) < 4 * se + 2e-2 * 2  # 4 SE + C dt
    assert abs(x.var() - (1 - np.exp(-2 * T)) / 2) < 0.05


@register
@njit(cache=True)
def _ou_step(x, dB, dt, args):
    return -x * dt + dB


def test_euler_maruyama_numba_agrees_in_distribution():
    x = sde.euler_maruyama_numba(_ou_step, np.full((4000, 1), 2.0), 1e-2, 100, seed=3)
    se = np.sqrt(0.5 / 4000)
    assert abs(x.mean() - 2 * np.exp(-1.0)) < 4 * se + 4e-2


def test_claim_batched_path_runs_unchanged_on_array_api_strict():
    """The stacked-array path of a claim (the one CuPy runs) is pure array API: same verdict and
    numbers under array-api-strict as under NumPy."""
    pytest.importorskip("array_api_strict")
    from theorems.registry import get_claim
    from theorems.menon.sec4_3_riemannian_gradient import transpose_batched
    claim = get_claim("menon.a_operator_transpose")
    out = {}
    for backend in ("numpy", "array_api_strict"):
        p = claim.resolve({"batch": 64, "N": 3})
        p.backend = backend
        out[backend] = transpose_batched(p)
        assert out[backend].decide() == "certified", out[backend].message
    a, b = out["numpy"].values, out["array_api_strict"].values
    assert a["instances"] == b["instances"] == 64
    assert abs(a["worst_transpose_rule_relative"] - b["worst_transpose_rule_relative"]) < 1e-15
