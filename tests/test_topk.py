"""solvers.topk: the three solvers of the relaxed operators against each other, the cubic pooling against
bisection, Dykstra (standard and printed) against PAV, the Prop 7.8 Jacobian against finite differences,
hard operators by brute force, and bad input."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from solvers import topk as tk
from solvers.fd import central_difference

EPS = np.finfo(float).eps


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 9), st.integers(0, 10_000), st.floats(0.05, 3.0), st.sampled_from([2.0, 4 / 3, 1.5, 1.25]),
       st.booleans())
def test_three_solvers_agree(n, seed, lam, p, mag):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-5, 5, n)
    k = int(rng.integers(1, n))
    yb = tk.relaxed(x, k, lam, p, mag, "bisect")
    yk = tk.kkt_mag(x, k, lam, p) if mag else tk.kkt_mask(x, k, lam, p)
    assert np.max(np.abs(yb - yk)) < 1e-9
    if p in (2.0, 4 / 3):
        assert np.max(np.abs(tk.relaxed(x, k, lam, p, mag, "closed") - yb)) < 1e-11
    if not mag:
        assert abs(yb.sum() - k) < 1e-9 and yb.min() >= -1e-12 and yb.max() <= 1 + 1e-12


@pytest.mark.parametrize("mag", [False, True])
def test_cubic_pooling_is_the_root(mag):
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = int(rng.integers(1, 8))
        s = np.sort(rng.uniform(-1e3, 1e3, m))[::-1] * rng.choice([1e-3, 1, 1e2])
        w = (rng.random(m) < 0.5).astype(float)
        lam = float(rng.uniform(0.01, 10))
        g1 = tk.pool(s, w, lam, 4 / 3, mag, "closed")
        g2 = tk.pool(s, w, lam, 4 / 3, mag, "bisect")
        assert abs(g1 - g2) <= 64 * EPS * (np.max(np.abs(s)) + lam * m + 1)


def test_dykstra_standard_and_printed():
    rng = np.random.default_rng(1)
    s = np.sort(rng.standard_normal(9))[::-1]
    w = (np.arange(9) < 3).astype(float)
    v1, _ = tk.pav(s, w, 1.0, 2.0, False)
    v2, _ = tk.pav(s, 2 * w, 1.0, 2.0, False)
    vd, it = tk.dykstra(s, w, 10_000, tol=1e-15)
    assert np.max(np.abs(vd - v1)) < 1e-12 and it < 10_000
    vp = tk.dykstra_printed(s, w, 5000)
    assert np.max(np.abs(vp - v2)) < 1e-12 and np.max(np.abs(vp - v1)) > 0.1


def test_projections_are_projections():
    v = np.array([0.0, 1.0, 3.0, 2.0, -1.0, 5.0])
    P1 = tk.proj_pairs(v, 0)
    assert np.all(P1[0::2][:3] >= P1[1::2][:3])
    assert np.allclose(tk.proj_pairs(P1, 0), P1)      # idempotent


@pytest.mark.parametrize("p,mag", [(2.0, False), (4 / 3, False), (2.0, True), (4 / 3, True)])
def test_jacobian_against_finite_differences(p, mag):
    rng = np.random.default_rng(3)
    s = np.sort(rng.uniform(0, 5, 7))[::-1]
    w = (np.arange(7) < 3).astype(float)
    v, blocks = tk.pav(s, w, 1.0, p, mag)
    J = np.array([central_difference(lambda t, i=i: tk.pav(t, w, 1.0, p, mag)[0][i], s, 1e-6) for i in range(7)])
    assert np.max(np.abs(J - tk.jacobian_blocks(s, w, v, blocks, 1.0, p, mag))) < 1e-6


def test_lmo_brute_force_and_hard_operators():
    rng = np.random.default_rng(4)
    for _ in range(20):
        x, w = rng.standard_normal((2, 5))
        f, y = tk.lmo(x, w)
        assert abs(f - max(np.dot(x, w[list(s)]) for s in itertools.permutations(range(5)))) < 1e-12
        assert abs(np.dot(x, y) - f) < 1e-12
    x = np.array([0.2, -0.9, 0.5])
    assert tk.hard_topkmask(x, 2).tolist() == [1, 0, 1]
    assert tk.hard_topkmag(x, 2).tolist() == [0, -0.9, 0.5]


def test_small_lambda_recovers_hard_operators():
    x = np.array([3.0, -2.0, 0.5, 1.2])
    assert np.allclose(tk.topk_mask(x, 2, 1e-6), tk.hard_topkmask(x, 2), atol=1e-5)
    assert np.allclose(tk.topk_mag(x, 2, 1e-6), tk.hard_topkmag(x, 2), atol=1e-5)


def test_ksupport_closed_form():
    assert abs(tk.conj_ksupport([0.7, -0.4], 1) - 0.605) < 1e-15
    y = np.array([3.0, 1.0, 1.0])
    assert abs(tk.conj_ksupport(y, 3) - 5.5) < 1e-15
    assert abs(tk.conj_ksupport(y, 1) - 12.5) < 1e-15      # k = 1: (sum |y|)^2 / 2


@pytest.mark.parametrize("args,msg", [
    ((np.array([1.0, np.nan]), 1, 1.0, 2.0), "NaN"), ((np.ones((2, 2)), 1, 1.0, 2.0), "1-D"),
    ((np.ones(3), 0, 1.0, 2.0), "k=0"), ((np.ones(3), 4, 1.0, 2.0), "k=4"), ((np.ones(3), 1, 0.0, 2.0), "lam"),
    ((np.ones(3), 1, 1.0, 1.0), "p=1.0"), ((np.array(["a"]), 1, 1.0, 2.0), "real")])
def test_bad_input(args, msg):
    with pytest.raises(ValueError, match=msg):
        tk.topk_mask(*args)


def test_no_closed_form_for_other_p():
    with pytest.raises(ValueError, match="bisect"):
        tk.pool(np.array([1.0]), np.array([1.0]), 1.0, 1.5, False, "closed")


# ---------------------------------------------------------------------------
# the O(n) stack PAV against the plain re-pooling reference and against SciPy's isotonic regression
from scipy.optimize import isotonic_regression  # noqa: E402

_pav_inputs = st.tuples(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=40),
    st.floats(1e-3, 1e3), st.booleans(), st.integers(0, 2**31 - 1))


@settings(max_examples=60, deadline=None)
@given(_pav_inputs, st.sampled_from([(2.0, "closed"), (4 / 3, "closed"), (2.0, "bisect"), (1.5, "bisect"),
                                     (3.0, "bisect")]))
def test_stack_pav_matches_the_reference(inp, pm):
    """Same blocks, values to rounding: the stack kernel merges statistics (mean, M2, M3) where the reference
    re-pools each merged block from its values; bisection is started from the merge's bracket."""
    xs, lam, mag, seed = inp
    p, method = pm
    s = np.array(xs)
    w = (np.random.default_rng(seed).random(s.size) < 0.5).astype(float)
    v_ref, b_ref = tk.pav_reference(s, w, lam, p, mag, method)
    v, b = tk.pav(s, w, lam, p, mag, method)
    scale = np.max(np.abs(s)) + lam * (1 + np.sum(w)) + 1.0
    # error model: p = 2 sums of <= 40 values (40 u relative to the scale); p = 4/3 Cardano + one Newton
    # step on moments (cancellation-free, about 1e3 u); bisection: both to the last bit of one root
    tol = {"closed": 4e3, "bisect": 64}[method] * np.finfo(float).eps * scale
    if b == b_ref:
        assert np.max(np.abs(v - v_ref)) <= tol
    else:  # a tie between two adjacent block values decided differently by rounding: same objective
        assert np.max(np.abs(v - v_ref)) <= 1e3 * tol


@settings(max_examples=40, deadline=None)
@given(_pav_inputs)
def test_stack_pav_p2_matches_scipy_isotonic_regression(inp):
    """p = 2: h_i(v) = (s_i - v)^2/(2 lam) + w_i phi(v) is a weighted least-squares isotonic problem:
    mask (phi = v): targets s_i - lam w_i, unit weights; magnitude (phi = v^2/2): targets s_i/(1 + lam w_i),
    weights 1 + lam w_i.  SciPy's PAV (C++) is the oracle."""
    xs, lam, mag, seed = inp
    s = np.array(xs)
    w = (np.random.default_rng(seed).random(s.size) < 0.5).astype(float)
    if mag:
        a = 1 + lam * w
        ref = isotonic_regression(s / a, weights=a, increasing=False).x
    else:
        ref = isotonic_regression(s - lam * w, increasing=False).x
    v = tk.pav_values(s, w, lam, 2.0, mag)
    scale = np.max(np.abs(s)) + lam * (1 + np.sum(w)) + 1.0
    assert np.max(np.abs(v - ref)) <= 100 * np.finfo(float).eps * scale


def test_stack_pav_is_linear_for_p2_on_a_worst_case_for_repooling():
    """An increasing input pools everything into one block, merging at every index: the stack kernel's
    work stays O(n) (checked by the result, which the re-pooling reference gets in O(n^2))."""
    n = 20_000
    s = np.linspace(-1, 1, n)
    w = np.zeros(n)
    v = tk.pav_values(s, w, 1.0, 2.0, False)
    assert np.allclose(v, np.mean(s), rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# general p in O(n): the budgeted stack PAV and the threshold decomposition (solvers/topk.py, block comment)
def _merge_forcing(n, rng):
    """Inputs of (7.5) (decreasing order) that force merges: the sorted top-k input (one block of ~n/10 around
    k), a fully increasing input (everything pools into one block, n merges), sawtooths of increasing runs of
    50 (each run pools, runs drift down or up so that the blocks then pool with each other or not), and a
    random one (few large blocks)."""
    k = max(1, n // 10)
    topk = (np.arange(n) < k).astype(float)
    run = np.tile(np.linspace(0, 1, 50), n // 50 + 1)[:n]
    drift = np.repeat(np.arange(n // 50 + 1), 50)[:n] * 0.01
    return {"sorted_topk": (np.sort(rng.standard_normal(n))[::-1], topk),
            "increasing": (np.linspace(-1, 1, n), np.zeros(n)),
            "sawtooth_down": (run - drift, topk),
            "sawtooth_up": (run + drift, np.zeros(n)),
            "random": (rng.standard_normal(n), (rng.random(n) < 0.3).astype(float))}


_gen_p = st.sampled_from([1.1, 1.25, 1.5, 4 / 3, 2.0, 3.0, 8.0])


@settings(max_examples=80, deadline=None)
@given(_pav_inputs, _gen_p, st.sampled_from(["none", "desc", "asc", "saw"]))
def test_general_kernels_match_the_reference(inp, p, order):
    """The stack PAV (unbudgeted), the threshold decomposition and the default ('auto') against the re-pooling
    reference with bisection pooling, on random, sorted (the top-k input), increasing (all merges) and sawtooth
    inputs.  Error model: each kernel's block value is its root to the last bit (bracketed Newton / bisection
    to adjacent floats), so equal blocks agree to a few ulps of the scale (64 eps); blocks decided differently
    by rounding (a tie) or pooled in one threshold leaf of width <= 4 eps max|bound| agree to 1e3 of that."""
    xs, lam, mag, seed = inp
    s = np.array(xs)
    if order == "desc":
        s = np.sort(s)[::-1]
    elif order == "asc":
        s = np.sort(s)
    elif order == "saw":
        s = np.sort(s)[np.argsort(np.arange(s.size) % 3, kind="stable")]
    w = (np.random.default_rng(seed).random(s.size) < 0.5).astype(float)
    v_ref, b_ref = tk.pav_reference(s, w, lam, p, mag, "bisect")
    scale = np.max(np.abs(s)) + lam * (1 + np.sum(w)) + 1.0
    tol = 64 * EPS * scale
    for kernel in ("pav", "threshold", "auto"):
        v, b, work, used = tk.pav_work(s, w, lam, p, mag, kernel)
        assert np.all(np.diff(v) <= 0), kernel                       # feasible: non-increasing
        err = np.max(np.abs(v - v_ref))
        assert err <= (tol if b == b_ref else 1e3 * tol), (kernel, used, err / (EPS * scale), b, b_ref)
    assert np.array_equal(tk.pav_values(s, w, lam, p, mag, "bisect"), tk.pav_work(s, w, lam, p, mag)[0])


@pytest.mark.parametrize("p", [1.5, 1.1, 3.0])
@pytest.mark.parametrize("mag", [False, True])
def test_general_kernels_on_long_merge_forcing_inputs(p, mag):
    """n = 400: long increasing runs (hundreds of merges per block) against the reference (O(n^2) Python)."""
    rng = np.random.default_rng(7)
    for name, (s, w) in _merge_forcing(400, rng).items():
        v_ref, b_ref = tk.pav_reference(s, w, 0.5, p, mag, "bisect")
        scale = np.max(np.abs(s)) + 0.5 * (1 + np.sum(w)) + 1.0
        for kernel in ("threshold", "auto"):
            v, b, _, _ = tk.pav_work(s, w, 0.5, p, mag, kernel)
            err = np.max(np.abs(v - v_ref))
            assert err <= (64 if b == b_ref else 64e3) * EPS * scale, (name, kernel, err / (EPS * scale))


@settings(max_examples=40, deadline=None)
@given(_pav_inputs, st.sampled_from(["none", "desc", "asc"]))
def test_threshold_kernel_p2_matches_scipy(inp, order):
    """The general kernels at p = 2 (no closed form used: psi(u) = u through the same pow path) against SciPy's
    isotonic regression (the weighted least-squares form of test_stack_pav_p2_matches_scipy_isotonic_regression)."""
    xs, lam, mag, seed = inp
    s = np.array(xs)
    s = {"none": s, "desc": np.sort(s)[::-1], "asc": np.sort(s)}[order]
    w = (np.random.default_rng(seed).random(s.size) < 0.5).astype(float)
    if mag:
        a = 1 + lam * w
        ref = isotonic_regression(s / a, weights=a, increasing=False).x
    else:
        ref = isotonic_regression(s - lam * w, increasing=False).x
    scale = np.max(np.abs(s)) + lam * (1 + np.sum(w)) + 1.0
    for kernel in ("threshold", "auto", "pav"):
        v = tk.pav_work(s, w, lam, 2.0, mag, kernel)[0]
        assert np.max(np.abs(v - ref)) <= 100 * EPS * scale, kernel


def test_general_pav_work_is_linear_in_n():
    """Linear scaling as a count, not a time: terms of F evaluated per element (one psi each) on the merge-forcing
    inputs at n = 1e3, 1e4, 1e5.  Bound from the construction: <= 52 levels of two passes plus the block tests'
    Newton solves; measured 8-105 per element (p in 1.1..8, both operators), flat in n.  Asserted: <= 200 per
    element at every n, and the
    per-element work at 1e5 within 2.5x of that at 1e3 (the unbudgeted stack PAV, checked beside it, grows
    like n on the same inputs: the test can fail)."""
    rng = np.random.default_rng(11)
    per = {}
    for n in (1_000, 10_000, 100_000):
        for name, (s, w) in _merge_forcing(n, rng).items():
            for p, mag in ((1.5, False), (1.5, True), (1.1, False), (3.0, True)):
                work = tk.pav_work(s, w, 0.5, p, mag)[2]
                per[(name, p, mag, n)] = work / n
                assert work / n <= 200, (name, p, mag, n, work / n)
    for (name, p, mag, n), r in per.items():
        if n == 100_000:
            assert r <= 2.5 * per[(name, p, mag, 1_000)], (name, p, mag, r, per[(name, p, mag, 1_000)])
    # contrast: re-pooling a growing block is quadratic (the old general-p kernel)
    r1 = tk.pav_work(*_merge_forcing(1_000, rng)["sorted_topk"], 0.5, 1.5, False, "pav")[2] / 1_000
    r4 = tk.pav_work(*_merge_forcing(4_000, rng)["sorted_topk"], 0.5, 1.5, False, "pav")[2] / 4_000
    assert r4 > 2.5 * r1


@pytest.mark.parametrize("p", [1.5, 3.0, 1.25])
@pytest.mark.parametrize("mag", [False, True])
def test_topk_general_p_at_scale_matches_kkt(p, mag):
    """The whole operator at n = 5000, general p (sort O(n log n) + the O(n) kernel + grad R* O(n)) against the
    independent KKT solver (no isotonic regression), to the KKT bisection's accuracy (1e-9)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal(5_000)
    y = tk.relaxed(x, 500, 0.5, p, mag, "bisect")
    yk = tk.kkt_mag(x, 500, 0.5, p) if mag else tk.kkt_mask(x, 500, 0.5, p)
    assert np.max(np.abs(y - yk)) < 1e-9
    if not mag:
        assert abs(y.sum() - 500) < 1e-8
