"""Solvers against references: Numba kernels vs NumPy references, orders of accuracy,
invariants, matrix functions vs SciPy, and the array-API paths under array-api-strict."""
import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings, strategies as st
from numba import njit

from solvers import dln, matfun, rk, sde
from solvers.specialise import register

from _oscillator import osc as _osc, osc_inplace as _osc_inplace, osc_np as _osc_np  # noqa: E402

EPS = np.finfo(float).eps


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
    _, _, _, order = rk.TABLEAUX[method]          # a Tableau unpacks as (A, b, c, order)
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


# ---------------------------------------------------------------------------
# Runge-Kutta methods as validated tableaux; result objects; the in-place right-hand-side protocol
def _logistic_np(t, y):
    return y * (1.0 - y)


def test_tableau_objects_unpack_as_before_and_are_read_only():
    A, b, c, order = rk.tableau("rk4")
    assert order == 4 and rk.tableau("rk4").stages == 4 and not rk.tableau("rk4").fsal
    assert rk.DP5.fsal and rk.DP5.order == 5 and rk.DP5.order_hat == 4 and rk.DP5.error_exponent == -0.2
    assert np.array_equal(rk.DP5.e, rk.DP5.b - rk.DP5.b_hat)
    with pytest.raises(ValueError):          # read-only: a method cannot be changed after its checks
        rk.DP5.A[1, 0] = 0.3
    assert [len(rk.order_conditions(p)) for p in range(1, 9)] == [1, 2, 4, 8, 17, 37, 85, 200]  # rooted trees


@pytest.mark.parametrize("change, match", [
    # one Dormand-Prince coefficient off by 1e-6, its row still summing to c: an order-3 condition fails
    (lambda A, b, c, bh: (A.__setitem__((3, 1), A[3, 1] + 1e-6), A.__setitem__((3, 0), A[3, 0] - 1e-6)),
     r"order condition of order 3 fails for b: sum b A\(c\)"),
    (lambda A, b, c, bh: c.__setitem__(2, 0.31), r"row 2 of A sums to .*not c\[2\]"),
    (lambda A, b, c, bh: (b.__setitem__(0, b[0] + 1e-9), b.__setitem__(2, b[2] - 1e-9)),
     r"order condition of order 2 fails for b: sum b c "),
    (lambda A, b, c, bh: b.__setitem__(0, b[0] + 1e-3), r"weights b sum to"),
    (lambda A, b, c, bh: bh.__setitem__(6, 0.0), r"embedded weights b_hat sum to"),
    (lambda A, b, c, bh: A.__setitem__((1, 1), 0.2), r"strictly lower triangular"),
])
def test_tableau_validation_names_the_failed_condition(change, match):
    A, b, c, bh = (np.array(x) for x in (rk.DP5.A, rk.DP5.b, rk.DP5.c, rk.DP5.b_hat))
    change(A, b, c, bh)
    with pytest.raises(ValueError, match=match):
        rk.Tableau("perturbed", A, b, c, 5, b_hat=bh, order_hat=4)


def test_tableau_declared_order_is_checked():
    A, b, c, _ = rk.tableau("rk3")
    with pytest.raises(ValueError, match=r"order condition of order 4 fails for b: sum b c\*A\(c\) = .*should be 1/8"):
        rk.Tableau("rk3 claimed 4", A, b, c, 4)
    with pytest.raises(ValueError, match="order condition of order 5 fails for b_hat"):
        rk.Tableau("dp", rk.DP5.A, rk.DP5.b, rk.DP5.c, 5, b_hat=rk.DP5.b_hat, order_hat=5)


# DOP853 (order 8) is at rounding by n = 16 here (3e-16): its order is measured in tests/test_dop853.py
@pytest.mark.parametrize("name", [n for n in rk.TABLEAUX if n != "dop853"] + ["dopri5 b_hat"])
def test_each_tableau_reaches_its_order_on_a_nonlinear_problem(name):
    """Logistic y' = y(1 - y) (every elementary differential non-zero, unlike a linear problem, where a method
    of too low order can show a higher one), y(0) = 0.1 on [0, 2], exact 1/(1 + 9 e^{-t}); observed order from
    n and 2n steps, error far above rounding (smallest ~1e-11 at rk 5, n = 16)."""
    tab = (rk.Tableau(name, rk.DP5.A, rk.DP5.b_hat, rk.DP5.c, 4) if name == "dopri5 b_hat"
           else rk.tableau(name))
    rk.TABLEAUX["_under_test"] = tab
    try:
        exact = 1.0 / (1.0 + 9.0 * np.exp(-2.0))
        errs = [abs(rk.rk_fixed_numpy(_logistic_np, 0.0, [0.1], 2.0 / n, n, method="_under_test")[0] - exact)
                for n in (8, 16)]
    finally:
        del rk.TABLEAUX["_under_test"]
    observed = np.log2(errs[0] / errs[1])
    assert abs(observed - tab.order) < 0.4, (name, errs, observed)


def test_solve_dopri5_result_object_matches_the_tuple_api(warm_kernels):
    y0 = np.array([1.0, 0.0])
    y, acc, rej = rk.dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9, atol=1e-12)
    r = rk.solve_dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9, atol=1e-12)
    assert isinstance(r, rk.ODEResult) and r.success and r.message == "reached t1" and r.t == 5.0
    assert r.y.tobytes() == y.tobytes() and (r.accepted, r.rejected) == (acc, rej)
    assert r.nfev == 1 + 6 * (acc + rej) and r.ys is None            # FSAL: six new stages per step
    rn = rk.solve_dopri5(_osc_np, 0.0, y0, 5.0, (2.0,), rtol=1e-9, atol=1e-12, backend="numpy")
    assert (rn.accepted, rn.rejected, rn.nfev, rn.success) == (acc, rej, r.nfev, True)
    assert np.max(np.abs(rn.y - y)) < 1e-13
    # a step budget that cannot reach t1: no exception, success False and the reason
    bad = rk.solve_dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9, atol=1e-12, max_steps=10)
    assert not bad.success and "did not reach t1=5.0" in bad.message and bad.t < 5.0
    assert bad.accepted + bad.rejected == 10
    with pytest.raises(RuntimeError, match="did not reach"):
        rk.dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), max_steps=10)


def test_solve_dopri5_t_eval_steps_onto_each_output_time(warm_kernels):
    y0 = np.array([1.0, 0.0])
    ts = np.linspace(0.0, 5.0, 51)[1:]
    r = rk.solve_dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-10, atol=1e-12, t_eval=ts)
    assert r.success and r.ys.shape == (50, 2) and np.array_equal(r.t_eval, ts)
    assert r.ys[-1].tobytes() == r.y.tobytes()
    exact = np.stack([np.cos(2 * ts), -2 * np.sin(2 * ts)], axis=1)
    assert np.max(np.abs(r.ys - exact)) < 1e-8                        # as the single-interval test
    # the step size is carried across the output times: far fewer steps than 50 restarts from h0
    restart = sum(rk.dopri5(_osc, a, y0, b, np.array([2.0]), rtol=1e-10, atol=1e-12)[1]
                  for a, b in zip(np.r_[0.0, ts[:-1]], ts))
    assert r.accepted < restart
    rn = rk.solve_dopri5(_osc_np, 0.0, y0, 5.0, (2.0,), rtol=1e-10, atol=1e-12, t_eval=ts, backend="numpy")
    assert (rn.accepted, rn.rejected) == (r.accepted, r.rejected) and np.max(np.abs(rn.ys - r.ys)) < 1e-13
    with pytest.raises(ValueError, match="t_eval must be strictly increasing"):
        rk.solve_dopri5(_osc, 0.0, y0, 5.0, np.array([2.0]), t_eval=[1.0, 0.5])


def test_inplace_rhs_gives_the_same_bits_as_out_of_place(warm_kernels):
    y0 = np.array([0.3, 1.1])
    w = np.array([1.7])
    a = rk.dopri5(_osc, 0.0, y0, 3.0, w, rtol=1e-9, atol=1e-12)
    b = rk.dopri5(_osc_inplace, 0.0, y0, 3.0, w, rtol=1e-9, atol=1e-12)
    assert a[0].tobytes() == b[0].tobytes() and a[1:] == b[1:]
    for m in rk.FIXED_STEP:
        ya, ta = rk.rk_fixed(_osc, 0.0, y0, 0.05, 40, w, method=m, every=8)
        yb, tb = rk.rk_fixed(_osc_inplace, 0.0, y0, 0.05, 40, w, method=m, every=8)
        assert ya.tobytes() == yb.tobytes() and ta.tobytes() == tb.tobytes()


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


# ---------------------------------------------------------------------------
# solvers.rhs_inplace: the allocation-free fields agree with the originals
def test_inplace_fields_match_the_originals():
    """Same field, explicit loops instead of BLAS products: agreement to rounding, a few eps times the number of
    terms of the products times the field's scale (the tolerance below: 64 k eps max|f|, k the inner dimension)."""
    from solvers import leaky, rhs_inplace as ri, twopoint as tp
    rng = np.random.default_rng(11)
    P = tp.lift_params(0.25, 1.0, 2.0, rng.standard_normal(4))
    z = rng.standard_normal(5)
    out = np.empty(5)
    ri.lift_rhs(0.0, z, (P,), out)
    assert out.tobytes() == tp.lift_rhs(0.0, z, (P,)).tobytes()       # same operations: same bits
    for w, N in ((3, 2), (6, 5), (1, 4), (20, 25)):          # (20, 25): the BLAS branch
        y = rng.standard_normal(2 * w * N + 1)
        for variant in (0, 1, 2):
            ref = leaky.hamilton_rhs(0.0, y, (w, N, 2.5, variant))
            out = np.full_like(y, np.nan)
            ri.hamilton_rhs(0.0, y, ri.hamilton_args(w, N, 2.5, variant), out)
            assert np.max(np.abs(out - ref)) <= 64 * max(w, N) * EPS * np.max(np.abs(ref))
    for widths in ((3, 3, 3, 3), (2, 5, 3, 4), (1, 1, 1), (4, 2, 6)):
        Ws = dln.random_layers(list(widths), rng)
        Y = rng.standard_normal((widths[-1], widths[0]))
        y = dln.pack(Ws)
        for mode, coef in ((0, (0.0,)), (1, (0.5,)), (2, tuple(range(1, len(widths)))), (3, (0.3,))):
            ref = dln.dln_rhs(0.0, y, dln.make_args(list(widths), Y, q=0.2, mode=mode, coef=coef))
            out = np.full_like(y, np.nan)
            ri.dln_rhs(0.0, y, ri.dln_args(list(widths), Y, q=0.2, mode=mode, coef=coef), out)
            assert np.max(np.abs(out - ref)) <= 64 * len(widths) * max(widths) * EPS * np.max(np.abs(ref))


def test_inplace_shoot_and_lift_follow_the_originals(warm_kernels):
    """One kernel call with output times vs one call per output interval: different steps, so the paths agree to
    the integration error (rtol 1e-11: 1e-8 relative, the allowance of bench_solvers.py), not to rounding."""
    from solvers import leaky, rhs_inplace as ri, twopoint as tp
    rng = np.random.default_rng(5)
    A0, B0 = rng.standard_normal((4, 3)), 0.1 * rng.standard_normal((4, 3))
    path, _ = leaky.shoot(A0, B0, 2.0, n_out=20, rtol=1e-11, atol=1e-12)
    r = ri.shoot(A0, B0, 2.0, n_out=20, rtol=1e-11, atol=1e-12)
    assert r.success and r.ys.shape == (20, path.shape[1])
    assert np.max(np.abs(r.ys - path[1:])) <= 1e-8 * max(1.0, np.max(np.abs(path)))
    P = tp.lift_params(0.25, 1.0, 2.0, [1.0, 0.0])
    z0 = tp.lift_from_uvw(0.01, 0.001, 0.0, 1.0, 2)
    a = tp.integrate_lifted(z0, P, 30.0)
    b = ri.integrate_lifted(z0, P, 30.0)
    assert b.y.tobytes() == a.y.tobytes() and (b.accepted, b.rejected) == (a.accepted, a.rejected)   # same bits


def test_hold_after_reject_saves_rejections_at_kinks(warm_kernels):
    """The ReLU kinks of Hamilton's equations cost rejected steps; holding the step size after a rejection
    (SciPy's RK45 rule) cuts them.  Both backends implement the rule alike (a smooth problem started with a step
    far too large, so that it is rejected: same step counts, states to rounding)."""
    from solvers import leaky, rhs_inplace as ri
    rng = np.random.default_rng(105)
    A0, B0 = rng.standard_normal((6, 5)), 0.1 * rng.standard_normal((6, 5))
    y0 = leaky.pack(A0, B0)
    ps = np.linspace(0.0, 1.0, 21)[1:]
    args = ri.hamilton_args(6, 5, 3.0)
    free, held = (rk.solve_dopri5(ri.hamilton_rhs, 0.0, y0, 1.0, args, rtol=1e-8, atol=1e-11, h0=1e-4, t_eval=ps,
                                  hold_after_reject=h) for h in (False, True))
    assert free.success and held.success and held.rejected < free.rejected
    # both paths within the integration error of each other (rtol 1e-8, kinks: 1e-5 relative)
    assert np.max(np.abs(free.ys - held.ys)) <= 1e-5 * np.max(np.abs(held.ys))
    y0 = np.array([1.0, 0.0])
    a = rk.solve_dopri5(_osc_inplace, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9, atol=1e-12, h0=2.0,
                        t_eval=[1.0, 2.5], hold_after_reject=True)
    b = rk.solve_dopri5(_osc_np, 0.0, y0, 5.0, (2.0,), rtol=1e-9, atol=1e-12, h0=2.0, t_eval=[1.0, 2.5],
                        hold_after_reject=True, backend="numpy")
    assert a.rejected > 0 and (a.accepted, a.rejected) == (b.accepted, b.rejected)
    assert np.max(np.abs(a.ys - b.ys)) < 1e-13
