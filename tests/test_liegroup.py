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
