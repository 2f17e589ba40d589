"""solvers/liegroup.py (adaptive Cayley-RKMK Dormand-Prince 5(4) on R^m x O(Q)^L): order 5 on a flow with a known
solution, orthogonality to rounding, the Numba kernel against the same loop in Python, agreement with
scipy's solve_ivp on the embedded ODE (a smooth problem and Chen's effective flow), output times, bad input."""
import numpy as np
import pytest
from numba import njit
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from solvers import chen as cm
from solvers import liegroup as lg
from solvers import orthogonal as og
from theorems.chen._common import random_orthogonal, separated_instance

EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------
# known solution: R_k' = cos(t) B_k R_k  ->  R_k(t) = expm(sin(t) B_k) R_k(0)  (the generators at different
# times commute), y' = -t y  ->  y(t) = y0 exp(-t^2/2).  The Cayley coordinates Omega(t) = 2 tanh(sin(t) B/2)
# are not polynomial, so no Runge-Kutta method solves them exactly: the error is the method's.
@njit
def _known_rhs(t, y, Rs, args):
    (B,) = args
    A = np.empty_like(Rs)
    for k in range(Rs.shape[0]):
        A[k] = np.cos(t) * B[k]
    return -t * y, A


def _known_rhs_np(t, y, Rs, B):
    return -t * y, np.cos(t) * B


def _known(Q=4, L=2, seed=0):
    rng = np.random.default_rng(seed)
    B = np.stack([og.skew(rng.standard_normal((Q, Q))) for _ in range(L)])
    R0 = np.stack([random_orthogonal(Q, rng) for _ in range(L)])
    y0 = rng.standard_normal(3)
    return B, R0, y0


def _exact(B, R0, y0, t):
    return y0 * np.exp(-t * t / 2), np.stack([expm(np.sin(t) * Bk) @ Rk for Bk, Rk in zip(B, R0)])


def _err(y, Rs, ex):
    return max(np.max(np.abs(y - ex[0])), np.max(np.abs(Rs - ex[1])))


def test_fixed_steps_converge_with_order_5_to_the_known_solution():
    B, R0, y0 = _known()
    T = 2.0
    ex = _exact(B, R0, y0, T)
    errs = []
    for n in (8, 16, 32):
        h = T / n   # h0 = h_max = h and a tolerance no step can fail: n steps of the 5th-order formula
        r = lg.lie_dopri5(_known_rhs, 0.0, y0, R0, T, (B,), rtol=1e6, atol=1e6, h0=h, h_max=h)
        assert r.success and r.naccepted == n and r.nrejected == 0
        errs.append(_err(r.y, r.Rs, ex))
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(rates - 5) < 0.5), (errs, rates)


def test_adaptive_error_follows_the_tolerance_on_the_known_solution():
    """Smooth field: the global error is a modest multiple of the tolerance and decreases with it."""
    B, R0, y0 = _known()
    T = 3.0
    ex = _exact(B, R0, y0, T)
    errs = []
    for tol in (1e-6, 1e-8, 1e-10):
        r = lg.lie_dopri5(_known_rhs, 0.0, y0, R0, T, (B,), rtol=tol, atol=tol)
        assert r.success
        errs.append(_err(r.y, r.Rs, ex))
        # error model: local error per step <= tol in the scaled norm, |R_ij| <= 1, |y| <= |y0|, and the flow
        # is an isometry on R (no amplification) and contracting on y: global <= n_steps * tol; asserted with
        # the measured step count
        assert errs[-1] <= r.naccepted * tol * (1 + np.max(np.abs(y0))), (tol, errs[-1], r.naccepted)
    assert errs[0] > errs[1] > errs[2]


def test_orthogonality_is_kept_to_rounding_at_a_loose_tolerance():
    B, R0, y0 = _known(Q=5, L=3, seed=2)
    r = lg.lie_dopri5(_known_rhs, 0.0, y0, R0, 40.0, (B,), rtol=1e-3, atol=1e-3,
                      t_eval=np.linspace(0, 40, 81))
    n = r.naccepted
    defect = og.orthogonality_defect(r.Rss)
    # rounding model: c Q eps per step (a solve and a product), random-walk growth; the step error (~1e-3)
    # does not enter: cay of a skew matrix is orthogonal whatever its accuracy
    assert defect < 16 * 5 * EPS * np.sqrt(n) * 4, (defect, n)
    assert _err(r.y, r.Rs, _exact(B, R0, y0, 40.0)) > 1e-7     # the run is inaccurate, yet orthogonal


def test_numba_kernel_runs_the_same_loop_as_the_python_reference():
    B, R0, y0 = _known()
    a = lg.lie_dopri5(_known_rhs, 0.0, y0, R0, 1.5, (B,), rtol=1e-9, atol=1e-9)
    b = lg.lie_dopri5_numpy(_known_rhs_np, 0.0, y0, R0, 1.5, (B,), rtol=1e-9, atol=1e-9)
    assert (a.naccepted, a.nrejected, a.nfev) == (b.naccepted, b.nrejected, b.nfev)
    assert _err(a.y, a.Rs, (b.y, b.Rs)) < 1e-13


def test_output_times_are_hit_exactly():
    B, R0, y0 = _known()
    te = np.array([0.0, 0.1, 0.7, 1.3, 2.0])
    r = lg.lie_dopri5(_known_rhs, 0.0, y0, R0, 2.0, (B,), rtol=1e-10, atol=1e-10, t_eval=te)
    assert r.t == 2.0 and r.ys.shape == (5, 3) and r.Rss.shape == (5,) + R0.shape
    for i, t in enumerate(te):
        assert _err(r.ys[i], r.Rss[i], _exact(B, R0, y0, t)) < 1e-8


# ---------------------------------------------------------------------------
# a non-linear, non-commuting problem against solve_ivp on the embedded ODE
@njit
def _nl_rhs(t, y, Rs, args):
    B, C = args
    A = np.empty_like(Rs)
    for k in range(Rs.shape[0]):
        M = C @ Rs[k]
        A[k] = np.sin(t) * B + (M - M.T)
    return np.array([-y[0] + np.trace(Rs[0])]), A


def test_agrees_with_solve_ivp_on_a_nonlinear_flow():
    rng = np.random.default_rng(5)
    Q, L = 3, 2
    B = og.skew(rng.standard_normal((Q, Q)))
    C = rng.standard_normal((Q, Q))
    R0 = np.stack([random_orthogonal(Q, rng) for _ in range(L)])
    y0 = np.array([0.3])
    T, tol = 2.0, 1e-10
    r = lg.lie_dopri5(_nl_rhs, 0.0, y0, R0, T, (B, C), rtol=tol, atol=tol)

    def g(t, z):
        Rs = z[1:].reshape(L, Q, Q)
        dy, A = _nl_rhs(t, z[:1], Rs, (B, C))
        return np.concatenate([dy, (A @ Rs).ravel()])
    s = solve_ivp(g, (0, T), np.concatenate([y0, R0.ravel()]), method="DOP853", rtol=1e-13, atol=1e-13)
    z = np.concatenate([r.y, r.Rs.ravel()])
    d = np.max(np.abs(z - s.y[:, -1]))
    # error model: each solution's global error <= n_steps tol x the flow's amplification; the amplification is
    # measured as the spread of the solution under a 1e-7 perturbation of y0 (one more reference run)
    s2 = solve_ivp(g, (0, T), np.concatenate([y0 + 1e-7, R0.ravel()]), method="DOP853", rtol=1e-13, atol=1e-13)
    G = max(1.0, np.max(np.abs(s2.y[:, -1] - s.y[:, -1])) / 1e-7)
    assert d <= G * (r.naccepted * tol + s.t.size * 1e-13) * 2, (d, G, r.naccepted)
    assert d > 0


# ---------------------------------------------------------------------------
# Chen's effective flow (piecewise smooth: the field jumps on the ReLU walls)
def _chen(Q=3, K=2, L=2, n=10, seed=0):
    clusters, yt, betas, Rs = separated_instance(Q, K, L, n, seed, spread=0.25, distance=3.0 * Q, target=0.4,
                                                 tilt=0.05)
    return clusters, yt, betas, Rs


def test_chen_effective_flow_agrees_with_solve_ivp():
    """Two independent integrators on the same field, each at two tolerances: the spread of each between its two
    tolerances estimates its error (global error of a discontinuous field is not a fixed multiple of tol);
    the two methods must agree within the sum of those estimates (x3 for the estimates' own inaccuracy)."""
    clusters, yt, betas, Rs = _chen()
    L, Q = len(Rs), Rs[0].shape[0]
    T = 2.0
    g = cm.flat_rhs("corrected", clusters, yt, L, Q)
    y0, R0 = cm.pack_state(betas, Rs)
    z0 = np.concatenate([y0, R0.ravel()])
    zs_lie, zs_ivp = [], []
    for tol in (1e-10, 1e-12):
        r = cm.integrate_adaptive("corrected", betas, Rs, clusters, yt, T, rtol=tol, atol=tol)
        assert r.success
        zs_lie.append(np.concatenate([r.y, r.Rs.ravel()]))
        s = solve_ivp(g, (0, T), z0, method="DOP853", rtol=tol, atol=tol)
        zs_ivp.append(s.y[:, -1])
    est = np.max(np.abs(zs_lie[0] - zs_lie[1])) + np.max(np.abs(zs_ivp[0] - zs_ivp[1]))
    d = np.max(np.abs(zs_lie[1] - zs_ivp[1]))
    assert d <= 3 * est + 1e3 * EPS * np.max(np.abs(z0)), (d, est)
    assert og.orthogonality_defect(r.Rs) < 1e-13


def test_chen_adaptive_kernel_matches_the_numpy_rhs():
    clusters, yt, betas, Rs = _chen(n=5)
    a = cm.integrate_adaptive("corrected", betas, Rs, clusters, yt, 0.5, rtol=1e-8, atol=1e-8)
    b = cm.integrate_adaptive("corrected", betas, Rs, clusters, yt, 0.5, rtol=1e-8, atol=1e-8, backend="numpy")
    assert a.naccepted == b.naccepted
    assert np.max(np.abs(a.y - b.y)) < 1e-11 and np.max(np.abs(a.Rs - b.Rs)) < 1e-11


# ---------------------------------------------------------------------------
# bad input
@pytest.mark.parametrize("kw,match", [
    (dict(t1=0.0), "t0 < t1"),
    (dict(rtol=1e-17), "100 eps"),
    (dict(rtol=-1.0), "rtol > 0"),
    (dict(t_eval=[0.5, 0.2]), "t_eval"),
    (dict(h_max=0.0), "h_max"),
])
def test_bad_input_is_a_clear_value_error(kw, match):
    B, R0, y0 = _known()
    args = dict(t1=1.0, rtol=1e-6)
    args.update(kw)
    t1 = args.pop("t1")
    with pytest.raises(ValueError, match=match):
        lg.lie_dopri5(_known_rhs, 0.0, y0, R0, t1, (B,), **args)


def test_non_orthogonal_start_is_rejected():
    B, R0, y0 = _known()
    with pytest.raises(ValueError, match="not orthogonal"):
        lg.lie_dopri5(_known_rhs, 0.0, y0, R0 * 1.01, 1.0, (B,))


def test_tableau_check_rejects_an_inconsistent_pair():
    A, B, C, E, _ = lg.DP54
    Cbad = C.copy()
    Cbad[2] += 0.1
    with pytest.raises(ValueError):
        lg._check_tableau(A, B, Cbad, B - E)
    lg._check_tableau(A, B, C, B - E)


# ---------------------------------------------------------------------------
# sector walls (lie_dopri5_walls): a field that jumps across a wall with a closed-form solution.
# Q = 2, one point x on layer 0, wall g = (R (x + beta))_0.  While g > 0: beta' = c1, R' = w1 J R; after the
# crossing: beta' = c0, R' = w0 J R (J the rotation generator), so R(t) = rot(w1 t) before the crossing time t*,
# rot(w0 (t - t*)) rot(w1 t*) after; t* solves g = cos(w1 t)(1 - t) - sin(w1 t)/2 = 0 (brentq to 1e-15).
_J = np.array([[0.0, -1.0], [1.0, 0.0]])
_WALL = dict(x=np.array([1.0, 0.5]), c1=np.array([-1.0, 0.0]), c0=np.array([-0.5, 0.2]), w1=0.3, w0=-0.7, T=1.6)


@njit
def _wall_rhs(t, y, Rs, args, side):
    c1, c0, w1, w0, J = args
    A = np.empty_like(Rs)
    if side[0, 0] > 0.5:
        A[0] = w1 * J
        return c1.copy(), A
    A[0] = w0 * J
    return c0.copy(), A


@njit
def _wall_rhs_plain(t, y, Rs, args):
    """The same field with the side read off the sign of g at the argument (what lie_dopri5 integrates)."""
    c1, c0, w1, w0, J, x = args
    z = x + y
    side = np.zeros((2, 1))
    side[0, 0] = 1.0 if Rs[0, 0, 0] * z[0] + Rs[0, 0, 1] * z[1] > 0.0 else 0.0
    return _wall_rhs(t, y, Rs, (c1, c0, w1, w0, J), side)


def _rot(a):
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def _wall_exact():
    from scipy.optimize import brentq
    P = _WALL
    ts = brentq(lambda t: (_rot(P["w1"] * t) @ (P["x"] + P["c1"] * t))[0], 0.0, 1.5, xtol=1e-15, rtol=4 * EPS)
    T = P["T"]
    R = _rot(P["w0"] * (T - ts)) @ _rot(P["w1"] * ts)
    beta = P["c1"] * ts + P["c0"] * (T - ts)
    # precondition of the closed form: one crossing only (g < 0 after t*, the other wall (R z)_1 stays > 0)
    for t in np.linspace(ts, T, 50)[1:]:
        u = _rot(P["w0"] * (t - ts)) @ _rot(P["w1"] * ts) @ (P["x"] + P["c1"] * ts + P["c0"] * (t - ts))
        assert u[0] < 0 < u[1]
    return ts, beta, R[None]


def _wall_run(tol, **kw):
    P = _WALL
    args = (P["c1"], P["c0"], P["w1"], P["w0"], _J)
    return lg.lie_dopri5_walls(_wall_rhs, 0.0, np.zeros(2), np.eye(2)[None], P["T"], (P["x"][:, None], np.zeros(1, np.int64)),
                               args, rtol=tol, atol=tol, **kw)


def test_walls_integrator_matches_the_closed_form_across_a_jump():
    ts, beta, R = _wall_exact()
    P = _WALL
    for tol in (1e-8, 1e-10):
        for restep in (False, True):
            r = _wall_run(tol, restep=restep)
            assert r.success and r.nevents == 1 and r.side[0, 0] == 0.0 and r.side[1, 0] == 1.0
            err = _err(r.y, r.Rs, (beta, R))
            # error model: the state at t* comes from the order-4 continuous extension (or a re-step), then the
            # crossing time's error dt moves the jump: |field jump| dt with |jump| = O(1) here; both are O(tol)
            # per step, the flow being an isometry on R and a translation on beta (no amplification):
            # err <= (steps + 1) tol x |jump| (|jump| = max(|c1 - c0|, |w1 - w0|) <= 1)
            assert err <= (r.naccepted + r.nrejected + 2) * tol, (tol, restep, err, r.naccepted)
        # the same field with the side read off sign(g) at each stage: a step straddles the jump, the controller
        # rejects its way down to a step whose jump error passes, and the error no longer follows the tolerance
        # (measured: err/tol ~ 40-70 against ~4 with the wall located, at ~5x the evaluations)
        args = (P["c1"], P["c0"], P["w1"], P["w0"], _J, P["x"])
        r0 = lg.lie_dopri5(_wall_rhs_plain, 0.0, np.zeros(2), np.eye(2)[None], P["T"], args, rtol=tol, atol=tol)
        err0 = _err(r0.y, r0.Rs, (beta, R))
        assert err <= err0 / 4 and r.nfev <= r0.nfev / 2, (tol, err, err0, r.nfev, r0.nfev)


def test_walls_orthogonality_stays_at_rounding():
    r = _wall_run(1e-3, h_max=0.01)
    n = r.naccepted + r.nevents
    assert r.success and n > 100
    # rounding model as lie_dopri5's: c Q eps per step (solve and products), random-walk growth
    assert og.orthogonality_defect(r.Rs) < 16 * 2 * EPS * np.sqrt(n) * 4


def test_walls_step_cap_gives_an_unsuccessful_result():
    r = _wall_run(1e-10, max_steps=3)
    assert isinstance(r, lg.LieResult)
    assert not r.success and r.message == "max_steps exceeded" and r.t < _WALL["T"]


def test_walls_output_times_and_bad_walls():
    ts, beta, R = _wall_exact()
    te = np.array([0.0, 0.5, ts, 1.2, _WALL["T"]])
    r = _wall_run(1e-11, t_eval=te)
    assert r.success and r.ys.shape == (5, 2)
    assert _err(r.ys[-1], r.Rss[-1], (beta, R)) < 1e-9
    assert np.all(np.isfinite(r.ys)) and abs(r.ys[2][0] - _WALL["c1"][0] * ts) < 1e-9
    with pytest.raises(ValueError, match="walls"):
        lg.lie_dopri5_walls(_wall_rhs, 0.0, np.zeros(2), np.eye(2)[None], 1.0, (np.zeros((3, 1)), np.zeros(1, np.int64)),
                            (_WALL["c1"], _WALL["c0"], 0.3, -0.7, _J))


def test_chen_sided_rhs_with_the_actual_sides_is_the_effective_rhs():
    clusters, yt, betas, Rs = _chen(Q=4, K=2, L=3, n=7, seed=3)
    y0, R0 = cm.pack_state(betas, Rs)
    for kind in ("stated", "corrected"):
        args = cm.make_args(clusters, yt, kind)
        X, lab = args[0], args[1]
        G = np.ones_like(X)
        for i in range(X.shape[1]):
            G[:, i] = R0[lab[i]] @ (X[:, i] + y0[lab[i] * 4:(lab[i] + 1) * 4])
        a = cm.effective_rhs(0.0, y0, R0, args)
        b = cm.effective_rhs_sided(0.0, y0, R0, args, (G > 0).astype(float))
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        # a flipped side changes the field (the check can fail)
        side = (G > 0).astype(float)
        side[0, 0] = 1 - side[0, 0]
        c = cm.effective_rhs_sided(0.0, y0, R0, args, side)
        assert not np.array_equal(a[0], c[0])


def test_chen_walls_reach_the_tight_reference_where_lie_dopri5_stalls():
    """Chen's corrected effective flow (Q = 3, 20 crossings in [0, 2]): DOP853 at rtol 2.3e-14 as the reference
    (agreeing with the walls integrator at 2.3e-14 to ~5e-14: benchmarks/bench_oq.py); at tol = 1e-10 the walls
    integrator is within (steps + events) x tol of it (error model: tol per step and per located crossing, O(1)
    amplification over T = 2; measured 4.7e-10), the plain one, whose steps straddle the jumps, is not within
    1e-8 (measured 3.8e-8, at ~15x the evaluations)."""
    clusters, yt, betas, Rs = _chen(n=20)
    L, Q = len(Rs), Rs[0].shape[0]
    T = 2.0
    g = cm.flat_rhs("corrected", clusters, yt, L, Q)
    y0, R0 = cm.pack_state(betas, Rs)
    s = solve_ivp(g, (0, T), np.concatenate([y0, R0.ravel()]), method="DOP853", rtol=2.3e-14, atol=2.3e-16)
    zr = s.y[:, -1]
    tol = 1e-10
    r = cm.integrate_adaptive("corrected", betas, Rs, clusters, yt, T, rtol=tol, atol=tol, walls=True)
    r0 = cm.integrate_adaptive("corrected", betas, Rs, clusters, yt, T, rtol=tol, atol=tol)
    assert r.success and r.nevents >= 10
    d = np.max(np.abs(np.concatenate([r.y, r.Rs.ravel()]) - zr))
    d0 = np.max(np.abs(np.concatenate([r0.y, r0.Rs.ravel()]) - zr))
    assert d <= (r.naccepted + r.nevents) * tol, (d, r.naccepted, r.nevents)
    assert d0 > 1e-8 and d < d0 / 20 and r.nfev < r0.nfev / 5, (d, d0, r.nfev, r0.nfev)
    assert og.orthogonality_defect(r.Rs) < 1e-13
    with pytest.raises(ValueError, match="walls=True"):
        cm.integrate_adaptive("direct", betas, Rs, clusters, yt, T, walls=True)
