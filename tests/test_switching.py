"""Event location at the walls of a piecewise-smooth field (solvers.rk.solve_switching) and the leaky ResNet shooter
built on it (solvers.leaky.shoot, numba backend; solvers.rhs_inplace.hamilton_rhs_sw)."""
import math

import numpy as np
import pytest
from numba import njit

from solvers import leaky, rk, rhs_inplace as ri
from solvers.specialise import inplace

EPS = np.finfo(float).eps


# a' = -b;  b' = b (a > 0), -2 b (a <= 0);  a(0) = b(0) = 1.  Exact: b = e^t, a = 2 - e^t up to the wall t* = ln 2,
# then b = 2 e^{-2 (t - t*)}, a = -(1 - e^{-2 (t - t*)}).  b' jumps from 2 to -4 at the wall.
@inplace
@njit
def _kink_sw(t, y, args, out):
    sw = args[0]
    out[0] = -y[1]
    out[1] = y[1] if sw[0] > 0.0 else -2.0 * y[1]


@inplace
@njit
def _kink(t, y, args, out):
    out[0] = -y[1]
    out[1] = y[1] if y[0] > 0.0 else -2.0 * y[1]


def _kink_exact(t):
    ts = math.log(2.0)
    if t <= ts:
        return np.array([2.0 - math.exp(t), math.exp(t)])
    e = math.exp(-2.0 * (t - ts))
    return np.array([-(1.0 - e), 2.0 * e])


@pytest.mark.parametrize("method", ["dopri5", "dop853"])
def test_event_location_beats_stepping_over_the_kink(method):
    """Against the exact solution: with the wall located, the error is that of the smooth pair (rtol 1e-6: ~1e-7
    for DP5, ~1e-8 for DOP853); stepping over the jump of b' (the controller shrinking the step until the
    O(h jump) local error passes) leaves an error 300-1000 times larger at the same tolerance (measured:
    7.9e-5 / 4.4e-6), for more evaluations (the rejected steps at the kink)."""
    y0 = np.array([1.0, 1.0])
    ref = _kink_exact(2.0)
    sw = np.ones(1)
    ev = rk.solve_switching(_kink_sw, 0.0, y0, 2.0, (sw,), sw, rtol=1e-6, atol=1e-9, h0=1e-3, method=method)
    plain = rk.solve_dopri5(_kink, 0.0, y0, 2.0, (np.ones(1),), rtol=1e-6, atol=1e-9, h0=1e-3, method=method,
                            hold_after_reject=True)
    assert ev.success and plain.success and ev.events == 1 and sw[0] == -1.0
    e_ev = np.max(np.abs(ev.y - ref))
    e_plain = np.max(np.abs(plain.y - ref))
    assert e_ev <= 1e-6, e_ev
    assert e_ev <= 0.01 * e_plain, (e_ev, e_plain)
    assert ev.nfev < plain.nfev
    # tighter tolerance, smaller error: the located wall is not the error floor
    tight = rk.solve_switching(_kink_sw, 0.0, y0, 2.0, (sw,), sw, rtol=1e-11, atol=1e-14, h0=1e-3, method=method)
    assert np.max(np.abs(tight.y - ref)) <= 1e-10


def test_event_location_steps_onto_output_times():
    sw = np.ones(1)
    ts = np.linspace(0.0, 2.0, 11)[1:]
    r = rk.solve_switching(_kink_sw, 0.0, np.array([1.0, 1.0]), 2.0, (sw,), sw, rtol=1e-10, atol=1e-13, t_eval=ts)
    assert r.success and r.ys.shape == (10, 2) and np.array_equal(r.t_eval, ts)
    for t, y in zip(ts, r.ys):
        assert np.max(np.abs(y - _kink_exact(t))) <= 1e-9


def test_step_cap_and_blowup_give_success_false():
    sw = np.ones(1)
    r = rk.solve_switching(_kink_sw, 0.0, np.array([1.0, 1.0]), 2.0, (sw,), sw, rtol=1e-10, atol=1e-13,
                           max_steps=5, t_eval=[0.5, 1.0, 1.5])
    assert not r.success and not r.blew_up and r.t < 2.0 and "did not reach" in r.message
    assert r.accepted + r.rejected <= 5 + 4     # the cap, plus at most one wall's Newton redos
    # b = e^t passes 1.5 at t = ln 1.5 < ln 2
    r = rk.solve_switching(_kink_sw, 0.0, np.array([1.0, 1.0]), 2.0, (sw,), sw, rtol=1e-10, atol=1e-13,
                           blowup=1.5, t_eval=[0.2, 0.6, 1.0])
    assert not r.success and r.blew_up and r.ys.shape[0] == 1 and "blew up" in r.message
    with pytest.raises(ValueError, match="in-place"):
        rk.solve_switching(leaky.hamilton_rhs, 0.0, np.ones(3), 1.0, (1, 1, 1.0, 0), np.ones(1))


@pytest.mark.parametrize("w,N", [(4, 3), (12, 14)])     # the loop branch and the BLAS branch (w N^2 > 2048)
def test_frozen_field_is_the_field_where_the_signs_agree(w, N):
    rng = np.random.default_rng(w + N)
    y = leaky.pack(rng.standard_normal((w, N)), rng.standard_normal((w, N)), 0.3)
    n = w * N
    for variant in (0, 1, 2):
        a = np.full_like(y, np.nan)
        b = np.full_like(y, np.nan)
        ri.hamilton_rhs(0.0, y, ri.hamilton_args(w, N, 2.5, variant), a)
        args = ri.hamilton_args_sw(w, N, 2.5, variant)
        args[5][:] = np.where(y[:n] > 0, 1.0, -1.0)
        ri.hamilton_rhs_sw(0.0, y, args, b)
        assert np.array_equal(a, b)
        ref = leaky.hamilton_rhs_numpy(0.0, y, w, N, 2.5, variant)
        assert np.max(np.abs(b - ref)) <= 64 * N * EPS * np.max(np.abs(ref))
        # a mode that disagrees with the signs: the smooth continuation relu(A_ij) -> A_ij, mask 1 where sw > 0
        sw = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        args[5][:] = sw
        ri.hamilton_rhs_sw(0.0, y, args, b)
        A, B, _ = leaky.unpack(y, w, N)
        pos = sw.reshape(w, N) > 0
        R = np.where(pos, A, 0.0)
        K = R.T @ R + 1.0
        M = R @ (B.T @ B)
        if variant != 2:
            M = np.where(pos, M, 0.0)
        dB = -2.5 * (M - B)
        ref = np.concatenate([(2.5 * (B @ K - A)).ravel(), (-dB if variant == 1 else dB).ravel(),
                              [(2.5 * B.sum(axis=1)) @ (2.5 * B.sum(axis=1))]])
        assert np.max(np.abs(b - ref)) <= 64 * N * EPS * np.max(np.abs(ref))


def test_leaky_shoot_events_reach_the_reference():
    """The numba shooter (walls located) against a DOP853 rtol 1e-13 reference and the NumPy backend (steps over
    the walls): the located path is within 1e-9 of the reference at rtol 1e-9, the NumPy path within 1e-7 at rtol
    1e-11, and the located path is the closer of the two."""
    from scipy.integrate import solve_ivp
    rng = np.random.default_rng(605)
    w, N, Lt = 6, 5, 3.0
    A0, B0 = rng.standard_normal((w, N)), 0.1 * rng.standard_normal((w, N))
    Y, steps = leaky.shoot(A0, B0, Lt, n_out=10, rtol=1e-9, atol=1e-12)
    ps = np.linspace(0.0, 1.0, 11)
    ref = solve_ivp(lambda t, y: leaky.hamilton_rhs_numpy(t, y, w, N, Lt), (0.0, 1.0), leaky.pack(A0, B0),
                    method="DOP853", rtol=1e-13, atol=1e-16, t_eval=ps).y.T
    assert Y.shape == ref.shape and steps > 0
    # sign changes of A along the path: the walls are crossed (the test exercises the event location)
    n = w * N
    assert np.any(np.sign(Y[0, :n]) != np.sign(Y[-1, :n]))
    assert np.max(np.abs(Y - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))
    Yn, _ = leaky.shoot(A0, B0, Lt, n_out=10, rtol=1e-11, atol=1e-12, backend="numpy")
    # the NumPy path steps over the walls (local error O(h jump) at each), so its error depends on where the rounding
    # puts its steps: 2.5e-7 (default OpenBLAS kernel) and 4.2e-7 (OPENBLAS_CORETYPE=Haswell) on |y| = 31 here.  It is
    # within 1e-7 relative of the reference, and the located path at a 100x looser rtol is closer than it
    # (7.5e-9 / 7.9e-9: 30-50x)
    err_y, err_n = np.max(np.abs(Y - ref)), np.max(np.abs(Yn - ref))
    assert err_n <= 1e-7 * max(1.0, np.max(np.abs(ref)))
    assert err_y <= err_n


def test_leaky_shoot_step_bound_and_blowup_semantics():
    rng = np.random.default_rng(7)
    A0, B0 = rng.standard_normal((3, 4)), 0.2 * rng.standard_normal((3, 4))
    for backend in ("numba", "numpy"):
        Y, _ = leaky.shoot(A0, B0, 2.0, n_out=10, backend=backend, max_total_steps=5)
        assert Y is None
        Y, _ = leaky.shoot(A0, B0, 2.0, n_out=10, backend=backend, max_total_steps=5, partial=True)
        assert Y is not None and 1 <= Y.shape[0] < 11 and np.array_equal(Y[0], leaky.pack(A0, B0))
        # a blow-up bound below the initial norm's growth: the path stops; partial keeps the points before
        big = float(np.max(np.abs(leaky.pack(A0, B0)[:-1])))
        full, _ = leaky.shoot(A0, B0, 2.0, n_out=10, backend=backend)
        peak = np.max(np.abs(full[:, :-1]), axis=1)
        if peak.max() > 1.01 * big:
            lim = 0.5 * (big + peak.max())
            assert leaky.shoot(A0, B0, 2.0, n_out=10, backend=backend, blowup=lim)[0] is None
            Y, _ = leaky.shoot(A0, B0, 2.0, n_out=10, backend=backend, blowup=lim, partial=True)
            k = Y.shape[0]
            assert 1 <= k < 11 and np.all(peak[:k] <= lim)
            np.testing.assert_allclose(Y, full[:k], rtol=1e-6, atol=1e-8)
