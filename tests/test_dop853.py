"""Dormand-Prince 8(5,3) (``solvers.rk.DOP853``, ``solve_dop853``): its coefficients against SciPy's transcription,
its order conditions (and mutants that break them), its empirical order with fixed steps, its error norm against
SciPy's on one step, adaptive solutions against closed forms and against ``solve_ivp(method="DOP853")``, the step
budget, and the agreement of its three paths (jitted in-place, jitted out-of-place, NumPy reference)."""
import numpy as np
import pytest
import scipy.linalg as sla
from numba import njit
from scipy.integrate import solve_ivp
from scipy.integrate._ivp import dop853_coefficients as sc853

from solvers import dln, rk, rhs_inplace as ri
from solvers.specialise import register

from _oscillator import osc as _osc, osc_inplace as _osc_ip, osc_np as _osc_np  # noqa: E402

EPS = np.finfo(float).eps
T853 = rk.DOP853


@register(inplace=True)
@njit(cache=True)
def _lin_ip(t, y, args, out):
    """Linear system y' = M y (M = args[0]), in place."""
    M = args[0]
    n = y.shape[0]
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += M[i, j] * y[j]
        out[i] = s


def _kepler_np(t, y):
    r3 = (y[0] ** 2 + y[1] ** 2) ** 1.5
    return np.array([y[2], y[3], -y[0] / r3, -y[1] / r3])


# ---------------------------------------------------------------------------
# the tableau
def test_coefficients_are_scipys_transcription():
    """Ported digit for digit: A, b, c and E3 equal SciPy's bit for bit; e = b - (b - E5) equals E5 up to the
    rounding of the two subtractions (one ulp of |b| each)."""
    n = sc853.N_STAGES
    assert T853.stages == n == 12 and not T853.fsal
    assert np.array_equal(T853.A, sc853.A[:n, :n]) and np.array_equal(T853.c, sc853.C[:n])
    assert np.array_equal(T853.b, sc853.A[n, :n]) and np.array_equal(T853.b, sc853.B)
    assert np.array_equal(T853.e2, sc853.E3[:n]) and sc853.E3[n] == 0.0 and sc853.E5[n] == 0.0
    assert np.all(np.abs(T853.e - sc853.E5[:n]) <= 2 * EPS * np.maximum(np.abs(T853.b), np.abs(sc853.E5[:n])))
    assert (T853.order, T853.order_hat, T853.order_hat2, T853.error_exponent) == (8, 5, 3, -1 / 8)
    assert rk.tableau("dop853") is T853 and repr(T853) == "Tableau('dop853', 12 stages, order 8(5,3))"


def test_order_conditions_hold_to_order_8_and_not_beyond():
    """The build ran the 200 conditions up to order 8 (115 of order 8) for b, those to order 5 for b_hat and to
    order 3 for b_hat2; each declared order is sharp: one more fails."""
    conds = rk.order_conditions(8)
    assert len(conds) == 200 and sum(n == 8 for n, *_ in conds) == 115
    A, b, c = (np.array(x) for x in (T853.A, T853.b, T853.c))
    rk.Tableau("again", A, b, c, 8, b_hat=T853.b_hat, order_hat=5, b_hat2=T853.b_hat2, order_hat2=3,
               error_order=7)
    with pytest.raises(ValueError, match="order condition of order 9 fails for b:"):
        rk.Tableau("claimed 9", A, b, c, 9)
    with pytest.raises(ValueError, match="order condition of order 6 fails for b_hat:"):
        rk.Tableau("claimed 8(6)", A, b, c, 8, b_hat=T853.b_hat, order_hat=6)
    with pytest.raises(ValueError, match="order condition of order 4 fails for b_hat2:"):
        rk.Tableau("claimed 8(5,4)", A, b, c, 8, b_hat=T853.b_hat, order_hat=5, b_hat2=T853.b_hat2, order_hat2=4)
    with pytest.raises(ValueError, match="error_order must be an integer in"):
        rk.Tableau("bad q", A, b, c, 8, b_hat=T853.b_hat, order_hat=5, error_order=8)
    with pytest.raises(ValueError, match="order_hat2 given without"):
        rk.Tableau("no b_hat2", A, b, c, 8, b_hat=T853.b_hat, order_hat=5, order_hat2=3)


def _mut_a(A, b, c, bh2):           # A[8, 7] off by 1e-9, row 8 still summing to c[8]
    A[8, 7] += 1e-9
    A[8, 0] -= 1e-9


def _mut_b(A, b, c, bh2):           # two weights moved by 1e-11 in opposite directions (sum b = 1 kept)
    b[6] += 1e-11
    b[7] -= 1e-11


def _mut_bhh(A, b, c, bh2):         # the 3rd-order weights: two moved by 1e-9, sum kept
    bh2[0] += 1e-9
    bh2[8] -= 1e-9


@pytest.mark.parametrize("mutate, match", [
    (_mut_a, r"order condition of order \d fails for b: "),
    (_mut_b, r"order condition of order \d fails for b: "),
    (_mut_bhh, r"order condition of order [23] fails for b_hat2: "),
])
def test_a_perturbed_coefficient_is_refused(mutate, match):
    """Mutants: one coefficient moved far above the rounding allowance (~1e-13 here), the consistency checks
    (row sums, sum of weights) kept, so that only an order condition can catch it."""
    A, b, c, bh2 = (np.array(x) for x in (T853.A, T853.b, T853.c, T853.b_hat2))
    bh = b - T853.e
    mutate(A, b, c, bh2)
    with pytest.raises(ValueError, match=match):
        rk.Tableau("mutant", A, b, c, 8, b_hat=bh, order_hat=5, b_hat2=bh2, order_hat2=3, error_order=7)


# ---------------------------------------------------------------------------
# fixed steps: the empirical order
def _observed(errs):
    errs = np.asarray(errs)
    return np.log2(errs[:-1] / errs[1:])


def test_fixed_step_order_is_8_on_nonlinear_problems():
    """Observed order log2(err(n)/err(2n)) on two problems with every elementary differential non-zero:
    Kepler, eccentricity 0.1, one period (exact: back to the start), n = 32, 64, 128; the logistic
    y' = 4y(1 - y), y(0) = 0.1 on [0, 2] (exact 1/(1 + 9e^{-8})), n = 8, 16, 32.  The errors stay >= 2e-15,
    above the rounding of the sums (~1e-15 at these n), and in the asymptotic range (measured: 7.64, 7.86 then
    8.0 from n = 16; 8.26, 8.33).  The embedded 5th-order weights, run the same way, show ~5: the measurement
    tells the orders apart."""
    e = 0.1
    y0 = np.array([1 - e, 0.0, 0.0, np.sqrt((1 + e) / (1 - e))])
    T = 2 * np.pi
    kep = [np.max(np.abs(rk.rk_fixed_numpy(_kepler_np, 0.0, y0, T / n, n, method="dop853") - y0)) for n in (32, 64)]
    ex = 1.0 / (1.0 + 9.0 * np.exp(-8.0))
    f = lambda t, y: 4.0 * y * (1.0 - y)  # noqa: E731
    log = [abs(rk.rk_fixed_numpy(f, 0.0, [0.1], 2.0 / n, n, method="dop853")[0] - ex) for n in (8, 16, 32)]
    assert min(kep + log) > 1e-15, (kep, log)
    for o in np.concatenate([_observed(kep), _observed(log)]):
        assert abs(o - 8) < 0.4, (kep, log)
    # the mutant "order 5 weights as the main method" shows its own order on the logistic problem
    low = rk.Tableau("dop853 b_hat", T853.A, T853.b_hat, T853.c, 5)
    rk.TABLEAUX["_under_test"] = low
    try:
        errs5 = [abs(rk.rk_fixed_numpy(f, 0.0, [0.1], 2.0 / n, n, method="_under_test")[0] - ex)
                 for n in (16, 32, 64)]
    finally:
        del rk.TABLEAUX["_under_test"]
    assert np.all(np.abs(_observed(errs5) - 5) < 0.5), errs5


def test_fixed_step_kernel_matches_reference():
    """The jitted fixed-step loop reads the same tableau: equal to the NumPy loop up to the summation order
    (a few eps per step of |y| = O(1) over 64 steps)."""
    y0 = np.array([1.0, 0.0])
    a = rk.rk_fixed(_osc, 0.0, y0, 0.05, 64, np.array([1.3]), method="dop853")
    b = rk.rk_fixed_numpy(_osc_np, 0.0, y0, 0.05, 64, (1.3,), method="dop853")
    assert np.max(np.abs(a - b)) < 64 * 12 * EPS
    exact = np.array([np.cos(1.3 * 3.2), -1.3 * np.sin(1.3 * 3.2)])
    assert np.max(np.abs(a - exact)) < 1e-11          # h = 0.05, w h = 0.065: (w h)^8 / 8! * 64 * w ~ 1e-13


# ---------------------------------------------------------------------------
# the error norm: one step against SciPy's DOP853
def test_one_step_error_norm_equals_scipys():
    """From the same state and step, SciPy's ``rk_step`` and ``DOP853._estimate_error_norm`` against
    :func:`solvers.rk._combine853` on the same stages.  Rounding model: the stage sums differ only in their
    order (bounded by 16 eps |E|.|K| per component), the weights e and E5 by one ulp of b; the bound below is that
    propagated through the norm's ratio (a factor 4 for e5^2 / sqrt(e5^2 + ...))."""
    from scipy.integrate._ivp.rk import DOP853, rk_step
    rng = np.random.default_rng(3)
    M = rng.standard_normal((5, 5))

    def fun(t, y):
        return np.tanh(M @ y) + np.sin(t)
    y = rng.standard_normal(5)
    rtol, atol = 1e-6, 1e-9
    for h in (0.05, 0.2, 0.5):
        solver = DOP853(fun, 0.0, y, 1.0, rtol=rtol, atol=atol)
        K = np.empty_like(solver.K)
        ynew_sp, _ = rk_step(fun, 0.0, y, fun(0.0, y), h, solver.A, solver.B, solver.C, K)
        scale = atol + np.maximum(np.abs(y), np.abs(ynew_sp)) * rtol
        en_sp = solver._estimate_error_norm(K, h, scale)
        Kc = np.ascontiguousarray(K[:12])
        ynew = np.empty(5)
        en = rk._combine853(ynew, y, Kc, T853.b, T853.e, T853.e2, h, rtol, atol, np.empty(5), np.empty(5))
        absK = np.abs(Kc)
        assert np.all(np.abs(ynew - ynew_sp) <= 16 * EPS * (np.abs(y) + h * (np.abs(T853.b) @ absK)))
        r5 = 16 * EPS * (np.abs(T853.e) @ absK + np.abs(T853.b) @ absK) / np.abs(T853.e @ Kc)
        r3 = 16 * EPS * (np.abs(T853.e2) @ absK) / np.abs(T853.e2 @ Kc)
        assert abs(en - en_sp) <= 4 * (np.max(r5) + np.max(r3)) * en_sp + 4 * EPS * en_sp, (h, en, en_sp)
        # the numpy reference computes the same norm (one accepted step from y with h0 = h, t1 = h)
        _, _, acc, rej, _ = rk._dopri5_numpy_core(lambda t, z: fun(t, z), 0.0, y, (h,), (), rtol, atol, h, 1,
                                                  tab=T853)
        assert (acc, rej) == ((1, 0) if en_sp <= 1.0 else (0, 1))


# ---------------------------------------------------------------------------
# adaptive solutions
def test_linear_system_against_expm_and_scipy():
    """y' = M y on [0, 2] (M random, spectral abscissa < 0.5), exact expm(2M) y0.  Error model: each accepted
    step keeps its local error <= tol_i = atol + rtol |y_i| (RMS); the global error is at most the sum of the
    local errors carried by the flow, n_steps * (atol + rtol max|y|) * max_t ||expm(M t)||_2, plus rounding
    ~ 12 n_steps eps max|y| kappa.  SciPy's DOP853 obeys the same model, so the two differ by at most the sum."""
    rng = np.random.default_rng(7)
    M = 0.5 * rng.standard_normal((6, 6)) - 0.3 * np.eye(6)
    y0 = rng.standard_normal(6)
    exact = sla.expm(2.0 * M) @ y0
    kappa = max(np.linalg.norm(sla.expm(M * s), 2) for s in np.linspace(0, 2, 41))
    ymax = kappa * np.linalg.norm(y0)
    for rtol in (1e-9, 1e-12):
        atol = 1e-3 * rtol
        r = rk.solve_dop853(_lin_ip, 0.0, y0, 2.0, (M,), rtol=rtol, atol=atol)
        assert r.success and r.t == 2.0
        n = r.accepted + r.rejected
        bound = n * (atol + rtol * ymax) * kappa + 12 * n * EPS * ymax * kappa
        err = np.max(np.abs(r.y - exact))
        assert err <= bound, (rtol, err, bound)
        s = solve_ivp(lambda t, y: M @ y, (0.0, 2.0), y0, method="DOP853", rtol=rtol, atol=atol)
        bound_s = (s.nfev / 12) * (atol + rtol * ymax) * kappa + 12 * s.nfev * EPS * ymax * kappa
        assert np.max(np.abs(r.y - s.y[:, -1])) <= bound + bound_s
        assert r.nfev == 1 + 11 * (r.accepted + r.rejected) + r.accepted


def test_work_matches_scipys_dop853():
    """Same tableau, same norm, same exponent and safety factor: over a long interval (the oscillator on [0, 20],
    a few hundred steps) the work is SciPy's, within 10% and the start-up (SciPy estimates its first step, ours
    grows from h0 = 1e-3 by at most 5x per step: up to 4 steps, 48 evaluations, more)."""
    y0 = np.array([1.0, 0.0])
    for rtol in (1e-6, 1e-9, 1e-12):
        r = rk.solve_dop853(_osc_ip, 0.0, y0, 20.0, np.array([2.0]), rtol=rtol, atol=1e-3 * rtol)
        s = solve_ivp(lambda t, y: _osc_np(t, y, 2.0), (0.0, 20.0), y0, method="DOP853", rtol=rtol, atol=1e-3 * rtol)
        assert abs(r.nfev - s.nfev) <= 0.1 * s.nfev + 48, (rtol, r.nfev, s.nfev)


def test_oscillator_t_eval_against_closed_form():
    """x'' = -4x over [0, 5] at rtol 1e-12, output at 50 times (the integrator steps onto each); closed form
    (cos 2t, -2 sin 2t).  Error model as above with kappa = 2 (the flow's 2-norm, |w| = 2), |y| <= 2."""
    y0 = np.array([1.0, 0.0])
    ts = np.linspace(0.0, 5.0, 51)[1:]
    rtol, atol = 1e-12, 1e-15
    r = rk.solve_dop853(_osc_ip, 0.0, y0, 5.0, np.array([2.0]), rtol=rtol, atol=atol, t_eval=ts)
    assert r.success and r.ys.shape == (50, 2) and np.array_equal(r.t_eval, ts)
    assert r.ys[-1].tobytes() == r.y.tobytes()
    exact = np.stack([np.cos(2 * ts), -2 * np.sin(2 * ts)], axis=1)
    n = r.accepted + r.rejected
    bound = n * (atol + 2 * rtol) * 2 + 12 * n * EPS * 2 * 2
    assert np.max(np.abs(r.ys - exact)) <= bound, (np.max(np.abs(r.ys - exact)), bound)
    assert np.max(np.abs(r.ys - exact)) > 0            # not a lookup


def test_step_cap_gives_success_false():
    y0 = np.array([1.0, 0.0])
    bad = rk.solve_dop853(_osc_ip, 0.0, y0, 50.0, np.array([2.0]), rtol=1e-12, atol=1e-15, max_steps=10)
    assert not bad.success and "dop853 did not reach t1=50.0 in 10 steps" in bad.message
    assert bad.t < 50.0 and bad.accepted + bad.rejected == 10
    badn = rk.solve_dop853(_osc_np, 0.0, y0, 50.0, (2.0,), rtol=1e-12, atol=1e-15, max_steps=10, backend="numpy")
    assert not badn.success and (badn.accepted, badn.rejected) == (bad.accepted, bad.rejected)
    ts = np.linspace(0, 50, 11)[1:]
    part = rk.solve_dop853(_osc_ip, 0.0, y0, 50.0, np.array([2.0]), rtol=1e-12, atol=1e-15, max_steps=200,
                           t_eval=ts)
    assert not part.success and 1 <= len(part.ys) == len(part.t_eval) < 10 and part.t_eval[-1] <= part.t


def test_inplace_outofplace_and_numpy_paths_agree():
    """The oscillator: the in-place and out-of-place fields do the same operations, so the two jitted loops agree
    bit for bit; the NumPy reference sums in another order (BLAS dots), so it takes the same steps and agrees to
    rounding, 12 eps |y| per step.  The DLN field (in-place: its own product order) agrees to the tolerance's
    scale: both within the error model of the exact flow."""
    y0 = np.array([1.0, 0.3])
    a = np.array([2.0])
    kw = dict(rtol=1e-10, atol=1e-13)
    r_ip = rk.solve_dop853(_osc_ip, 0.0, y0, 7.0, a, **kw)
    r_op = rk.solve_dop853(_osc, 0.0, y0, 7.0, a, **kw)
    r_np = rk.solve_dop853(_osc_np, 0.0, y0, 7.0, (2.0,), backend="numpy", **kw)
    assert r_ip.y.tobytes() == r_op.y.tobytes() and (r_ip.accepted, r_ip.rejected) == (r_op.accepted, r_op.rejected)
    assert (r_np.accepted, r_np.rejected, r_np.nfev) == (r_ip.accepted, r_ip.rejected, r_ip.nfev)
    assert np.max(np.abs(r_np.y - r_ip.y)) <= 12 * r_ip.accepted * EPS * 2.1
    # the DLN gradient flow (dim 27), in place vs out of place vs SciPy's DOP853 at the same tolerance
    widths = [3] * 4
    rng = np.random.default_rng(3)
    Ws = dln.random_layers(widths, rng)
    Y = rng.standard_normal((3, 3))
    z0 = dln.pack(Ws)
    kw = dict(rtol=1e-11, atol=1e-14)
    p_ip = rk.solve_dop853(ri.dln_rhs, 0.0, z0, 1.0, ri.dln_args(widths, Y), **kw)
    p_op = rk.solve_dop853(dln.dln_rhs, 0.0, z0, 1.0, dln.make_args(widths, Y), **kw)
    ref = solve_ivp(lambda t, y: dln.dln_rhs(t, y, dln.make_args(widths, Y)), (0.0, 1.0), z0, method="DOP853",
                    rtol=1e-13, atol=1e-16).y[:, -1]
    scale = max(1.0, np.max(np.abs(ref)))
    assert p_ip.success and p_op.success
    assert abs(p_ip.accepted - p_op.accepted) <= 1
    # local error <= 1e-11 |y| per step over ~n steps (the flow is contracting near its minimum): n * 1e-11 * scale
    n = p_ip.accepted + p_ip.rejected
    for r in (p_ip, p_op):
        assert np.max(np.abs(r.y - ref)) <= n * kw["rtol"] * scale
    assert np.max(np.abs(p_ip.y - p_op.y)) <= 2 * n * kw["rtol"] * scale


def test_solve_dopri5_runs_a_two_estimate_tableau_in_its_own_loop():
    """``solve_dopri5(method=DOP853)`` is ``solve_dop853`` (with its hold flag); the 5(4) path is untouched."""
    y0 = np.array([1.0, 0.0])
    a = rk.solve_dopri5(_osc_ip, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9, method="dop853", hold_after_reject=True)
    b = rk.solve_dop853(_osc_ip, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9)
    assert a.y.tobytes() == b.y.tobytes() and a.nfev == b.nfev
    c = rk.solve_dopri5(_osc_ip, 0.0, y0, 5.0, np.array([2.0]), rtol=1e-9)
    assert c.nfev == 1 + 6 * (c.accepted + c.rejected) and c.accepted > 2 * b.accepted
