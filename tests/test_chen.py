"""solvers/orthogonal.py (Cayley-RKMK flows on O(Q)) and solvers/chen.py (Chen's model in cumulative
parameters): order of convergence, orthogonality to rounding, Numba vs NumPy, gradients against
finite differences, bad input."""
import numpy as np
import pytest

from solvers import chen as cm
from solvers import fd, orthogonal as og
from theorems.chen._common import random_orthogonal, separated_instance

EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------
# a smooth test problem on R x O(Q)^2: R_k' = A_k(t, R) R_k with A_k skew and R-dependent (non-linear,
# non-autonomous, non-commuting), y' = -y + tr(R_1)
def _problem(Q=3, seed=0):
    rng = np.random.default_rng(seed)
    B = og.skew(rng.standard_normal((Q, Q)))
    C = rng.standard_normal((Q, Q))
    R0 = np.stack([random_orthogonal(Q, rng) for _ in range(2)])
    return B, C, R0, np.array([0.3])


def _rhs_np(t, y, Rs, B, C):
    A = np.sin(t) * B + og.skew(C @ Rs) * 2
    return np.array([-y[0] + np.trace(Rs[0])]), A


@pytest.fixture(scope="module")
def smooth_reference():
    B, C, R0, y0 = _problem()
    return og.lie_rk_numpy(_rhs_np, 0.0, y0, R0, 1 / 640, 640, (B, C), method="rk4")


@pytest.mark.parametrize("method,order", [("euler", 1), ("heun", 2), ("rk3", 3), ("rk4", 4)])
def test_cayley_rkmk_has_the_order_of_its_tableau(method, order, smooth_reference):
    B, C, R0, y0 = _problem()
    ref = smooth_reference
    errs = []
    for n in (10, 20, 40):
        y, R = og.lie_rk_numpy(_rhs_np, 0.0, y0, R0, 1 / n, n, (B, C), method=method)
        errs.append(max(np.max(np.abs(R - ref[1])), np.max(np.abs(y - ref[0]))))
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(np.abs(rates - order) < 0.35), (method, rates)


def test_orthogonality_is_kept_to_rounding_while_classical_rk4_drifts():
    B, C, R0, y0 = _problem(Q=4, seed=1)
    R0 = np.stack([random_orthogonal(4, np.random.default_rng(3)) for _ in range(2)])
    n, h = 400, 0.05
    _, R, _, Rss = og.lie_rk_numpy(_rhs_np, 0.0, y0, R0, h, n, (B, C), every=1)
    lie_defect = og.orthogonality_defect(Rss)
    # rounding model: c Q eps per step, random-walk growth sqrt(n)
    assert lie_defect < 16 * 4 * EPS * np.sqrt(n) * 4
    # classical RK4 on the matrix entries (no group structure): defect O(h^4) per unit time, far above
    Rc = R0.copy()
    yc = y0.copy()
    for i in range(n):
        t = i * h

        def F(t, R):
            return og.skew(np.zeros_like(R)) + _rhs_np(t, yc, R, B, C)[1] @ R
        k1 = F(t, Rc)
        k2 = F(t + h / 2, Rc + h / 2 * k1)
        k3 = F(t + h / 2, Rc + h / 2 * k2)
        k4 = F(t + h, Rc + h * k3)
        Rc = Rc + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert og.orthogonality_defect(Rc) > 1e4 * lie_defect


def test_dcayinv_is_the_exact_generator_equation():
    """d/ds cay(Om(s)) = A cay(Om(s)) when Om' = dcay^{-1}_Om(A) (central differences)."""
    rng = np.random.default_rng(2)
    Om = og.skew(rng.standard_normal((4, 4)))
    A = og.skew(rng.standard_normal((4, 4)))
    h = 1e-5
    dOm = og.dcayinv(Om, A)
    lhs = (og.cayley(Om + h * dOm) - og.cayley(Om - h * dOm)) / (2 * h)
    assert np.max(np.abs(lhs - A @ og.cayley(Om))) < 1e-8
    assert np.max(np.abs(dOm + dOm.T)) < 1e-14          # stays in o(Q)
    assert og.orthogonality_defect(og.cayley(Om)) < 1e-14


@pytest.mark.parametrize("kind", ["stated", "corrected", "direct"])
def test_chen_numba_integrator_matches_numpy_reference(kind):
    clusters, yt, betas, Rs = separated_instance(3, 2, 3, 5, 4, distance=9.0, spread=0.25)
    a = cm.integrate(kind, betas, Rs, clusters, yt, 0.01, 60, backend="numba", every=6)
    b = cm.integrate(kind, betas, Rs, clusters, yt, 0.01, 60, backend="numpy", every=6)
    assert a[0].shape == b[0].shape == (11, 9) and a[1].shape == (11, 3, 3, 3)
    assert np.max(np.abs(a[0] - b[0])) < 1e-12 and np.max(np.abs(a[1] - b[1])) < 1e-12
    assert og.orthogonality_defect(a[1]) < 1e-13


def test_chen_integrator_order_on_a_kink_free_window():
    """Over a short window in which no point crosses a wall, the direct flow converges at order 4."""
    clusters, yt, betas, Rs = separated_instance(2, 1, 1, 6, 3, spread=0.25)
    T = 0.3
    ref = cm.integrate("direct", betas, Rs, clusters, yt, T / 800, 800)
    pattern = lambda ys, Rss: [tuple((Rss[i][0] @ (clusters[0] + ys[i][:2, None]) > 0).ravel()) for i in range(len(ys))]
    assert len(set(pattern(*ref))) == 1          # no wall crossed: the field is smooth on the window
    errs = []
    for n in (4, 8, 16):
        ys, Rss = cm.integrate("direct", betas, Rs, clusters, yt, T / n, n)
        errs.append(max(np.max(np.abs(ys[-1] - ref[0][-1])), np.max(np.abs(Rss[-1] - ref[1][-1]))))
    rates = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    assert np.all(rates > 3.5), rates
    # (across a wall crossing the field jumps and the order drops to ~1: the flow comparisons of
    # chen.effective_flow therefore use the same integrator for both flows, never an order argument)


@pytest.mark.parametrize("bad", [
    dict(R0=np.ones((1, 2, 2)), match="not orthogonal"),
    dict(R0=np.eye(2), match="shape"),
    dict(y0=np.zeros((2, 2)), match="1-d"),
    dict(h=0.0, match="positive"),
    dict(h=float("nan"), match="positive"),
    dict(n=-1, match="non-negative"),
    dict(y0=np.array([np.nan, 0.0]), match="finite"),
])
def test_bad_input_is_rejected_clearly(bad):
    kw = dict(y0=np.zeros(2), R0=np.eye(2)[None], h=0.1, n=3)
    match = bad.pop("match")
    kw.update(bad)
    with pytest.raises(ValueError, match=match):
        og.lie_rk_numpy(lambda t, y, R: (np.zeros_like(y), np.zeros_like(R)), 0.0, kw["y0"], kw["R0"], kw["h"], kw["n"])


def test_integrate_rejects_unknown_kind():
    clusters, yt, betas, Rs = separated_instance(2, 1, 1, 3, 0)
    with pytest.raises(ValueError, match="unknown flow kind"):
        cm.integrate("printed", betas, Rs, clusters, yt, 0.01, 2)
    with pytest.raises(ValueError, match="unknown Runge-Kutta"):
        cm.integrate("direct", betas, Rs, clusters, yt, 0.01, 2, method="rk7")


# ---------------------------------------------------------------------------
# solvers/chen.py
def test_direct_gradient_matches_finite_differences():
    """grad_composed (chain rule through tau = W^{-1} sigma(W(z+beta)) - beta, composed over L layers) vs the
    project's central differences, on a general (non-orthogonal) point of the chart."""
    rng = np.random.default_rng(5)
    Q, L = 3, 3
    Rs = [random_orthogonal(Q, rng) for _ in range(L)]
    betas = [0.5 * rng.standard_normal(Q) for _ in range(L)]
    clusters = [rng.standard_normal((Q, 4)) for _ in range(2)]
    yt = rng.standard_normal((2, Q))
    f = lambda *a: cm.cost_network_general(list(a[:L]), list(a[L:]), clusters, yt)
    g, e = fd.gradient_with_error(f, Rs + betas, h=1e-6)
    gW, gb = cm.grad_composed(Rs, betas, clusters, yt)
    for got, want, err in zip(gW + gb, g, e):
        assert np.all(np.abs(got - want) <= 10 * err + 1e-9)


def test_kernels_match_numpy_references_and_corrected_equals_direct():
    for Q, K, L, seed in [(2, 2, 2, 0), (3, 3, 3, 1), (3, 2, 4, 2), (4, 1, 1, 3)]:
        clusters, yt, betas, Rs = separated_instance(Q, K, L, 7, seed, distance=3.0 * Q, spread=0.25)
        assert cm.separation_margin(Rs, betas, clusters) > 0
        y, R = cm.pack_state(betas, Rs)
        out = {}
        for kind in ("stated", "corrected", "direct"):
            args = cm.make_args(clusters, yt, kind)
            f, fn = (cm.direct_rhs, cm.direct_rhs_numpy) if kind == "direct" else (cm.effective_rhs, cm.effective_rhs_numpy)
            a, b = f(0.0, y, R, args), fn(0.0, y, R, *args)
            assert np.max(np.abs(a[0] - b[0])) < 1e-13 and np.max(np.abs(a[1] - b[1])) < 1e-13
            out[kind] = a
        # Thm 3.2 corrected = direct gradient (to rounding); the printed generator differs, beta-field the same
        assert np.max(np.abs(out["corrected"][0] - out["direct"][0])) < 1e-13
        assert np.max(np.abs(out["corrected"][1] - out["direct"][1])) < 1e-13
        assert np.max(np.abs(out["stated"][0] - out["direct"][0])) < 1e-13
        if Q > 1:
            assert np.max(np.abs(out["stated"][1] - out["direct"][1])) > 1e-4


def test_moment_formula_and_separation_margin():
    rng = np.random.default_rng(7)
    R, beta, X, yt = random_orthogonal(4, rng), rng.standard_normal(4), rng.standard_normal((4, 9)), rng.standard_normal(4)
    assert np.max(np.abs(cm.omega_moments(R, beta, X, yt) - cm.omega_corrected(R, beta, X, yt))) < 1e-14
    # catalogue E17 example: literal Def 3.1 holds, D6 margin is not positive
    Rs, betas = [np.eye(2), -np.eye(2)], [np.zeros(2), np.array([0.5, 0.5])]
    assert cm.separation_margin(Rs, betas, [np.array([[-1.0], [-1.0]]), np.array([[3.0], [3.0]])]) <= 0


def test_cumulative_round_trip_and_forward_link():
    rng = np.random.default_rng(8)
    Ws = [rng.standard_normal((3, 3)) + 2 * np.eye(3) for _ in range(3)]
    bs = [rng.standard_normal(3) for _ in range(3)]
    Wc, bc, betas = cm.cumulative(Ws, bs)
    Ws2, bs2 = cm.per_layer(Wc, betas)
    assert max(np.max(np.abs(a - b)) for a, b in zip(Ws + bs, Ws2 + bs2)) < 1e-12
    X = rng.standard_normal((3, 5))
    xs = cm.forward(Ws, bs, X)
    I = cm.compose(Wc, betas, X, general=True)
    assert np.max(np.abs(xs[-1] - Wc[-1] @ (I + betas[-1][:, None]))) < 1e-12


def test_generic_numba_kernel_matches_numpy_reference(request):
    """orthogonal.lie_rk on an unregistered right-hand side (a function local to this test: the
    uncached path of solvers.specialise, ~15 s to compile in every process), against lie_rk_numpy.
    The cached path is exercised by chen.integrate.  Run with --runslow."""
    if not request.config.getoption("--runslow", default=False):
        pytest.skip("compiles a non-cacheable Numba kernel (~15 s): run with --runslow")
    from numba import njit

    @njit
    def rhs(t, y, Rs, args):
        B, C = args
        A = np.empty_like(Rs)
        for k in range(Rs.shape[0]):
            M = C @ Rs[k]
            A[k] = np.sin(t) * B + (M - M.T)
        dy = np.empty(1)
        dy[0] = -y[0] + np.trace(Rs[0])
        return dy, A
    B, C, R0, y0 = _problem()
    for method in ("rk4", "heun"):
        a = og.lie_rk(rhs, 0.0, y0, R0, 0.05, 40, (B, C), method=method, every=10)
        b = og.lie_rk_numpy(_rhs_np, 0.0, y0, R0, 0.05, 40, (B, C), method=method, every=10)
        assert all(np.max(np.abs(x - z)) < 1e-13 for x, z in zip(a, b))
