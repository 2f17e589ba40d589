"""solvers/twopoint.py: kernels against their NumPy references, the lifted system against Eq 7 where Eq 7 is
regular, the lifted field against finite-difference gradients of the loss Eq 16 (erratum E1), the conserved
quantity and the Lyapunov identity along paths, the stopping rule, and bad input."""
import math

import numpy as np
import pytest

from solvers import rk, twopoint as tp

EPS = np.finfo(float).eps


@pytest.fixture(scope="module")
def warm_twopoint():
    """Load the two-point kernels (dopri5 and rk_fixed specialised on lift_rhs) from the on-disk cache,
    or compile them on a cold cache, before anything is timed."""
    P = tp.lift_params(0.25, 1.0, 2.0, [1.0, 0.0])
    z0 = np.array([0.3, 0.1, 0.05])
    rk.dopri5(tp.lift_rhs, 0.0, z0, 0.01, (P,))
    rk.rk_fixed(tp.lift_rhs, 0.0, z0, 0.01, 2, (P,))
    return True


def _random_lift(rng, m=2):
    z = rng.standard_normal(1 + m)
    z[0] = abs(z[0]) + 0.1
    P = tp.lift_params(rng.uniform(0.1, 2), rng.uniform(0.3, 3), rng.uniform(0.3, 3), rng.standard_normal(m),
                       rng.choice([0.25, 0.5]))
    return z, P


def test_rhs_kernels_match_numpy():
    rng = np.random.default_rng(0)
    for m in (1, 2, 3):
        for _ in range(20):
            z, P = _random_lift(rng, m)
            assert np.allclose(tp.lift_rhs(0.0, z, (P,)), tp.lift_rhs_numpy(0.0, z, P), rtol=0, atol=1e-14)
    for _ in range(20):
        y = np.array([rng.uniform(0.1, 2), rng.uniform(0, 2), rng.uniform(-1, 1)])
        P = tp.eq7_params(*rng.uniform(0.1, 2, 4))
        assert np.allclose(tp.eq7_rhs(0.0, y, (P,)), tp.eq7_rhs_numpy(0.0, y, P), rtol=1e-15, atol=1e-15)


def test_dopri5_and_rk4_kernels_match_numpy_reference(warm_twopoint):
    """Same controller, same arithmetic up to summation order: agreement far below the tolerance."""
    P = tp.lift_params(0.25, 1.0, 2.0, [1.0, 0.0])
    z0 = tp.lift_from_uvw(0.01, 0.001, 0.0, 1.0)
    yk, acc_k, _ = rk.dopri5(tp.lift_rhs, 0.0, z0, 30.0, (P,), rtol=1e-10, atol=1e-13)
    yn, acc_n, _ = rk.dopri5_numpy(tp.lift_rhs_numpy, 0.0, z0, 30.0, (P,), rtol=1e-10, atol=1e-13)
    assert abs(acc_k - acc_n) <= 2
    assert np.max(np.abs(yk - yn)) < 1e-9
    fk = rk.rk_fixed(tp.lift_rhs, 0.0, z0, 0.05, 200, (P,))
    fn = rk.rk_fixed_numpy(tp.lift_rhs_numpy, 0.0, z0, 0.05, 200, (P,))
    assert np.max(np.abs(fk - fn)) < 1e-13
    # and the converged solve agrees between backends
    rk_ = tp.solve_to_equilibrium(0.01, 0.001, 0.0, 0.25, 1.0, 1.0, 2.0, backend="numba")
    rn_ = tp.solve_to_equilibrium(0.01, 0.001, 0.0, 0.25, 1.0, 1.0, 2.0, backend="numpy")
    assert abs(rk_["u"] - rn_["u"]) < 1e-12 and rk_["converged"] and rn_["converged"]


def test_lift_chain_rule_is_eq7():
    """d/dt (u, v, w) computed from the lifted field by the chain rule is Eq 7 (with its time factor 2g)."""
    rng = np.random.default_rng(1)
    for m in (1, 2, 4):
        for _ in range(30):
            z, P = _random_lift(rng, m)
            a, th, ty, g = P[:4]
            dY = P[4:]
            s, q = z[0], z[1:]
            ds, dq = tp.lift_rhs_numpy(0, z, P)[0], tp.lift_rhs_numpy(0, z, P)[1:]
            du = 2 * s * ds
            dv = 2 * s * ds * (q @ q) + s * s * 2 * (q @ dq)
            dw = dv - (ds * (q @ dY) + s * (dq @ dY))
            u, v, w = tp.uvw_from_lift(z, dY)
            ref = tp.eq7_rhs_numpy(0, np.array([u, v, w]), tp.eq7_params(a, dY @ dY, th, ty, g))
            scale = 1 + np.max(np.abs(ref)) + abs(w) * a / (th * u)
            assert np.max(np.abs(np.array([du, dv, dw]) - ref)) < 1e-12 * scale


def test_lift_field_is_gradient_flow_of_eq16_with_factor_quarter():
    """Erratum E1: the full Eq 6 with the TRUE gradients of the loss Eq 16 (central differences of
    L = 1/2 <|ybar + 1/2 D_y D_h (x_i - x_-i) - y_i|^2>) moves (s, q) by the lifted field with g = 1/4, not 1/2."""
    rng = np.random.default_rng(2)
    H, dx_dim, m = 3, 2, 2
    x1, x2 = rng.standard_normal(dx_dim), rng.standard_normal(dx_dim)
    y1, y2 = rng.standard_normal(m), rng.standard_normal(m)
    DX, DY = x2 - x1, y2 - y1
    n = np.eye(H)[0]
    s, q = 0.7, rng.standard_normal(m)
    # D_h with D_h DX = s n (rank one along n); D_y = q n^T: a point of the invariant manifold M
    Dh = np.outer(n, DX) * s / (DX @ DX)
    Dy = np.outer(q, n)
    ybar = (y1 + y2) / 2

    def loss(Dh_, Dy_):
        r1 = ybar + 0.5 * Dy_ @ Dh_ @ (x1 - x2) - y1
        r2 = ybar + 0.5 * Dy_ @ Dh_ @ (x2 - x1) - y2
        return 0.25 * (r1 @ r1 + r2 @ r2)

    h = 1e-6
    gDh = np.zeros_like(Dh)
    for idx in np.ndindex(*Dh.shape):
        E = np.zeros_like(Dh)
        E[idx] = h
        gDh[idx] = (loss(Dh + E, Dy) - loss(Dh - E, Dy)) / (2 * h)
    gDy = np.zeros_like(Dy)
    for idx in np.ndindex(*Dy.shape):
        E = np.zeros_like(Dy)
        E[idx] = h
        gDy[idx] = (loss(Dh, Dy + E) - loss(Dh, Dy - E)) / (2 * h)
    th, ty = 0.8, 1.7
    ds = n @ (-(gDh / th) @ DX)          # d/dt (n . D_h DX)
    dq = -(gDy / ty) @ n                 # d/dt (D_y n)
    for g, should_match in ((tp.TRUE_FACTOR, True), (tp.EQ7_FACTOR, False)):
        f = tp.lift_rhs_numpy(0, np.concatenate([[s], q]), tp.lift_params(DX @ DX, th, ty, DY, g))
        err = np.max(np.abs(f - np.concatenate([[ds], dq])))
        # central differences: error ~ h^2 |L'''| + eps |L| / h  ~ 1e-9
        assert (err < 1e-7) == should_match, (g, err)


def test_lifted_matches_eq7_where_regular(warm_twopoint):
    """Catalogue R1 (b): tau_h = 0.7, tau_y = 1.3, a = 0.25, b = 1, u0 = 0.3, v0 = 0.2 on [0, 30]; both integrated
    with rtol 1e-11: the two agree to the integrators' global error (1e-8 relative budget)."""
    a, b, th, ty = 0.25, 1.0, 0.7, 1.3
    u0, v0, w0 = 0.3, 0.2, 0.2 - math.sqrt(0.2) * 0.5
    z = tp.lift_from_uvw(u0, v0, w0, 1.0)
    y = np.array([u0, v0, w0])
    Pl = tp.lift_params(a, th, ty, [1.0, 0.0])
    Pe = tp.eq7_params(a, b, th, ty)
    t, worst = 0.0, 0.0
    for t1 in np.linspace(0, 30, 31)[1:]:
        z, _, _ = rk.dopri5_numpy(tp.lift_rhs_numpy, t, z, t1, (Pl,), rtol=1e-11, atol=1e-14)
        y, _, _ = rk.dopri5_numpy(tp.eq7_rhs_numpy, t, y, t1, (Pe,), rtol=1e-11, atol=1e-14)
        t = t1
        uvw = np.array(tp.uvw_from_lift(z, [1.0, 0.0]))
        worst = max(worst, np.max(np.abs(uvw - y)))
        assert y[0] > 0
    assert worst < 1e-8


def test_conserved_quantity_and_lyapunov_along_path():
    """A_high(t) = s^2 - (tau_y a/tau_h)|q|^2 is conserved (Eq 24; exactly, up to rounding, by the implicit
    midpoint rule) and L_D = |qs - Delta_y|^2/8 decreases with dL_D/dt given by the identity R4."""
    a, b, th, ty = 0.25, 1.0, 1.0, 2.0
    dY = np.array([1.0, 0.0])
    z = tp.lift_from_uvw(0.05, 0.2, 0.2 + 0.9 * math.sqrt(0.2), 1.0)
    P = tp.lift_params(a, th, ty, dY)
    A0 = tp.level_a_high(z, a, th, ty)
    h, n = 0.01, 400
    Ls = []
    for _ in range(n // 20):
        z, _ = rk.implicit_midpoint_numpy(tp.lift_rhs_numpy, 0.0, z, h, 20, (P,))
        u, v, w = tp.uvw_from_lift(z, dY)
        LD = (z[1:] * z[0] - dY) @ (z[1:] * z[0] - dY) / 8
        assert abs(LD - (w + (b - v) / 2) / 4) < 1e-14   # Eq 9's second term = |dy - Delta_y|^2 / 8
        # R4: dL/dt = -(u/(8 tau_y))(2w - v + b) - (a/(8 tau_h)) w^2/u, by the chain rule of the lifted field
        f = tp.lift_rhs_numpy(0, z, P)
        r = z[1:] * z[0] - dY
        dL = r @ (f[1:] * z[0] + z[1:] * f[0]) / 4
        ident = -(u / (8 * ty)) * (2 * w - v + b) - a / (8 * th) * w * w / u
        assert abs(dL - ident) < 1e-13 * (1 + abs(ident))
        assert dL <= 1e-16
        Ls.append(LD)
    assert all(x >= y - 1e-15 for x, y in zip(Ls, Ls[1:]))
    assert abs(tp.level_a_high(z, a, th, ty) - A0) < n * 16 * EPS * (1 + abs(A0))


def test_solve_to_equilibrium_through_a_crossing():
    """Catalogue R3 (d): u0 = 0.05, v0 = 0.2, w0 = 0.6427 (taus = a = b = 1) crosses; lifted limit = Eq 10 = 0.2387355307."""
    r = tp.solve_to_equilibrium(0.05, 0.2, 0.6427, 1.0, 1.0, 1.0, 1.0, backend="numpy")
    AH = tp.a_high(0.05, 0.2, 1.0, 1.0, 1.0)
    assert r["converged"] and r["crossings"] == 1 and min(r["us"]) >= 0
    assert abs(r["u"] - tp.eq10(AH, 1.0)) < 1e-9 and abs(r["u"] - 0.2387355307) < 5e-11
    assert abs(r["u"] - tp.eq10(AH, 1.0)) <= abs(r["AH_end"] - r["AH0"]) + 2 * abs(r["du"]) + 1e-10 * r["u"]


def test_eq10_forms():
    for AH, AL in [(-5000.0, 1.0), (-3.95, 1.0), (0.0, 0.7), (50.0, 1.0), (-1e-3, 2.0)]:
        S = math.hypot(AH / 2, AL)
        u = tp.eq10(AH, AL)
        assert abs(u - (AH / 2 + S)) <= 1e-12 * max(1, abs(AH))
        assert abs(u * tp.eq10_minus(AH, AL) + AL * AL) <= 1e-12 * AL * AL  # product of the roots = -A_L^2
        assert tp.eq10_minus(AH, AL) < 0 < u
    assert abs(tp.eq10(-5000.0, 1.0) - 1 / 5000) < 1e-9  # A_L^2/|A_H| (catalogue E4): no cancellation


def test_bad_input():
    with pytest.raises(ValueError, match="Cauchy-Schwarz"):
        tp.lift_from_uvw(0.01, 0.001, 0.5, 1.0)
    with pytest.raises(ValueError, match="dy2"):
        tp.lift_from_uvw(0.01, -0.1, 0.0, 1.0)
    with pytest.raises(ValueError, match="dh2"):
        tp.lift_from_uvw(-1.0, 0.1, 0.1, 1.0)
    with pytest.raises(ValueError, match="undefined"):
        tp.lift_from_uvw(0.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="dim Y = 1"):
        tp.lift_from_uvw(0.1, 0.1, 0.1, 1.0, m=1)
    assert tp.consistent(0.1, 0.04, 0.04 + 0.2, 1.0) is None      # on the boundary (dim Y = 1)
    z = tp.lift_from_uvw(0.1, 0.04, 0.24, 1.0, m=1)
    assert np.allclose(tp.uvw_from_lift(z, [1.0]), (0.1, 0.04, 0.24))


def test_lazy_rescaling_cosine_draws_are_network_states():
    """vanrossem.lazy_rescaling declares the initial alignment as cos_0 in [-1, 1] (w_0 derived): its defaults are the
    former w_0 = 0.1 instance, and every sweep draw passes the validator on its first attempt (w_0 drawn on its own
    was a network state in 6 of 20 draws)."""
    from theorems.claim import Params
    from theorems.sweep import draw_params
    from theorems.vanrossem import appA5_A6_lazy_random_features as sc

    p = sc._lz_state(Params({q.name: q.default for q in sc.lazy.params}))
    assert abs(p.w_0 - 0.1) <= 4 * EPS
    for i in range(20):
        params, attempts = draw_params(sc.lazy, 20261126, i, with_attempts=True)
        assert attempts == 1, (i, params)
        q = sc._lz_state(Params(params))
        assert tp.consistent(q.dh2_0, q.dy2_0, q.w_0, q.delta_y) is None
