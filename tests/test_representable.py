"""Tests of sander.representable (theorems/sander/ch4_4_3d_representable.py; the decision procedure in
solvers/psi_representable.py and solvers/psi_preimage.py): command-line decisions (Thm 4.4 / 4.7), bad input,
the private numerical helpers (preimages of f_eps, series reversion, exact rule at lambda_eps), and property tests
(D = Psi_eps(theta) is decided representable and reconstructed; an unpaired eigenvalue below lambda_eps
is decided not representable)."""
import json

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

from solvers import psi_preimage as P
from solvers import psi_representable as R
from solvers.psi_eps import f_eps, lambda_eps, psi_eps
from theorems.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def check(capsys, *params, variant=None):
    argv = ["check", "sander.representable", "--json"]
    for prm in params:
        argv += ["--param", prm]
    if variant:
        argv += ["--variant", variant]
    code, out, err = run(capsys, *argv)
    return code, (json.loads(out) if out.strip() else None), err


# ---------------------------------------------------------------------------
# command line
def test_cli_representable_single_eigenvalue_above_threshold(capsys):
    """diag(-0.5, 2) at eps = 1: -0.5 > lambda_1 = -0.6135 (single negative eigenvalue allowed)."""
    code, rec, _ = check(capsys, "D=[[-0.5,0],[0,2]]", "eps=1")
    assert code == 0 and rec["verdict"] == "certified"
    v = rec["values"]
    assert v["representable"] is True
    assert v["residual"] <= v["tolerance"] < 1e-10
    theta = np.array(v["theta"])
    assert np.allclose(psi_eps(theta, 1.0), np.diag([-0.5, 2.0]), rtol=0, atol=1e-13)
    assert abs(theta[0, 0] + 7.53509772) < 1e-8          # catalogue fixture


def test_cli_not_representable_single_eigenvalue_below_threshold(capsys):
    """diag(-0.7, 1) at eps = 1: -0.7 < lambda_1, multiplicity one."""
    code, rec, _ = check(capsys, "D=[[-0.7,0],[0,1]]", "eps=1")
    assert code == 0 and rec["verdict"] == "certified"
    v = rec["values"]
    assert v["representable"] is False and "odd algebraic multiplicity 1" in v["reason"]
    assert v["margin"] == pytest.approx(v["lambda_eps"] + 0.7) and v["uncertainty"] < 1e-12
    assert "theta" not in v


def test_cli_pair_below_threshold_is_representable(capsys):
    """diag(-0.8, -0.8, 0.3): the pair below lambda_eps comes from z, conj z (catalogue T4.4)."""
    code, rec, _ = check(capsys, "D=[[-0.8,0,0],[0,-0.8,0],[0,0,0.3]]", "eps=1")
    assert code == 0 and rec["values"]["representable"] is True
    theta = np.array(rec["values"]["theta"])
    assert np.max(np.abs(psi_eps(theta, 1.0) - np.diag([-0.8, -0.8, 0.3]))) < 1e-12


def test_cli_larger_eps_makes_it_representable(capsys):
    """diag(-0.7, 1) is representable at eps = 2 (lambda_2 = -0.781): the set grows with eps."""
    code, rec, _ = check(capsys, "D=[[-0.7,0],[0,1]]", "eps=2")
    assert code == 0 and rec["values"]["representable"] is True


def test_cli_gap_at_lambda_eps_is_inconclusive(capsys):
    lam, _ = lambda_eps(1.0)
    code, rec, _ = check(capsys, f"D=[[{lam!r},0],[0,2]]", "eps=1")
    assert code == 1 and rec["verdict"] == "inconclusive" and "G4.1" in rec["message"]


def test_cli_single_jordan_block_below_float_inconclusive_exact_decides(capsys):
    """J_2(-0.8): floating point cannot decide (within rounding of a conjugate pair, which is representable);
    the exact rational matrix is not representable (Thm 4.7 necessity, exact ranks over Q)."""
    code, rec, _ = check(capsys, "D=[[-0.8,1],[0,-0.8]]", "eps=1", "exact=false")
    assert code == 1 and rec["verdict"] == "inconclusive" and "rounding" in rec["message"]
    code, rec, _ = check(capsys, "D=[[-0.8,1],[0,-0.8]]", "eps=1")
    assert code == 0 and rec["verdict"] == "certified"
    v = rec["values"]
    assert v["representable"] is False and v["exact"] is True and v["jordan_sizes"] == [2]
    # J_2 + J_1 + J_1 has even multiplicity 4 but unpaired blocks
    D = [[-0.8, 1, 0, 0], [0, -0.8, 0, 0], [0, 0, -0.8, 0], [0, 0, 0, -0.8]]
    code, rec, _ = check(capsys, "D=" + json.dumps(D), "eps=1")
    assert code == 0 and rec["values"]["representable"] is False and rec["values"]["jordan_sizes"] == [2, 1, 1]


def _split_jordan_block(delta):
    """D = Q [[a, 1, 0], [delta, a, 0], [0, 0, 1/2]] Q^-1 with a = -3/4 < lambda_1 and delta = +-2^-50, built
    in exact rational arithmetic: Q is an integer matrix with det Q = 1, so every entry of D is a dyadic
    rational of at most 53 significant bits and the float64 array IS the exact matrix (no BLAS rounding
    decides which matrix is tested).  Eigenvalues: 1/2 and a +- sqrt(delta), i.e. a +- i 2^-25 (conjugate
    pair) for delta < 0 and a +- 2^-25 (two simple real eigenvalues) for delta > 0: a Jordan block J_2(a)
    split at distance 2^-24 ~ 6e-8, far inside the float error radius of a defective eigenvalue
    (Hoelder bound 10 |D| (64 d eps_mach)^(1/2) ~ 7e-6), so the float analysis sees J_2(a) either way."""
    from fractions import Fraction as Fr
    Q = [[1, 1, 1], [1, 2, 1], [1, 2, 2]]
    Qi = [[2, 0, -1], [-1, 1, 0], [0, -1, 1]]
    assert all(sum(Q[i][k] * Qi[k][j] for k in range(3)) == (i == j) for i in range(3) for j in range(3))
    a = Fr(-3, 4)
    A = [[a, Fr(1), Fr(0)], [delta, a, Fr(0)], [Fr(0), Fr(0), Fr(1, 2)]]
    QA = [[sum(Q[i][k] * A[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
    D = [[sum(QA[i][k] * Qi[k][j] for k in range(3)) for j in range(3)] for i in range(3)]
    Df = np.array([[float(x) for x in row] for row in D])
    assert all(Fr(float(x)) == x for row in D for x in row)          # the float64 matrix is exact
    return Df


def test_rounded_jordan_block_split_into_conjugate_pair_stays_undecided():
    """J_2(-3/4) split into the conjugate pair -3/4 +- i 2^-25: the float analysis cannot tell it from the
    defective block (undecided); exact arithmetic finds no real eigenvalue below lambda_eps (the pair is
    representable by Thm 4.7 sufficiency) but certifies no construction, so the decision stays undecided."""
    from fractions import Fraction as Fr
    D = _split_jordan_block(-Fr(1, 2**50))
    r = R.decide(D, 1.0, exact=True)
    assert "Jordan blocks [2]" in r["reason"] and "cannot decide" in r["reason"]    # the float analysis
    assert r["representable"] is None and "conjugate pair" in r["exact_finding"]


def test_rounded_jordan_block_split_into_real_pair_is_exactly_not_representable():
    """J_2(-3/4) split into the two simple real eigenvalues -3/4 +- 2^-25: the same float analysis (J_2, undecided),
    but exact arithmetic certifies an unpaired real eigenvalue below lambda_eps: not representable (Thm 4.7)."""
    from fractions import Fraction as Fr
    D = _split_jordan_block(Fr(1, 2**50))
    r = R.decide(D, 1.0, exact=True)
    assert "Jordan blocks [2]" in r["float_reason"]
    assert r["representable"] is False and r["exact"] is True and r["jordan_sizes"] == [1]
    lo, hi = r["root_interval"]
    assert abs(lo + 0.75) < 1e-7 and hi - lo < 1e-20


def test_cli_paired_jordan_blocks_are_constructed(capsys):
    D = np.kron(np.eye(2), np.array([[-0.8, 1.0], [0.0, -0.8]]))
    code, rec, _ = check(capsys, "D=" + json.dumps(D.tolist()), "eps=1")
    assert code == 0 and rec["values"]["representable"] is True
    assert np.max(np.abs(psi_eps(np.array(rec["values"]["theta"]), 1.0) - D)) < 1e-12


@pytest.mark.parametrize("param", [
    "D=[[1,2,3],[4,5,6]]",            # not square
    "D=[[1,NaN],[0,1]]",              # not finite
    "D=[[1,1e400],[0,1]]",            # infinite
    "D=[1,2]",                        # not a matrix
    "D=[[\"a\",1],[0,1]]",            # not numbers
    "D=" + json.dumps(np.eye(11).tolist()),
    "D=[[1e7,0],[0,1]]",              # preimage would overflow
    "eps=0",
    "eps=-1",
    "kind=jordan",
])
def test_cli_bad_input_exits_2(capsys, param):
    code, _, err = check(capsys, param)
    assert code == 2 and err.startswith("theorems: error:") and len(err.strip().splitlines()) == 1


def test_cli_bad_input_names_the_problem(capsys):
    code, _, err = check(capsys, "D=[[1,2,3],[4,5,6]]")
    assert code == 2 and "square" in err and "D" in err
    code, _, err = check(capsys, "kind=paired_jordan", "d=3")
    assert code == 2 and "d >= 4" in err


def test_cli_falsifiers_refuted_and_gap_claim(capsys):
    for v in ("threshold_zero", "threshold_minus_one", "no_pairing", "proof_step_realness"):
        code, rec, _ = check(capsys, variant=v)
        assert code == 1 and rec["verdict"] == "refuted", v
    code, out, _ = run(capsys, "check", "sander.representable_jordan", "--json")
    assert code == 0 and json.loads(out)["values"]["maps"]["J_3(x_eps)"]["sizes"] == [2, 1]
    code, out, _ = run(capsys, "check", "sander.first_order_nonrepresentable", "--variant", "lambda_one", "--json")
    assert code == 1


# ---------------------------------------------------------------------------
# helpers
def test_nonreal_preimage_fixture_and_branch():
    z = P._nonreal_preimage(-0.8, 1.0)
    assert abs(z - (-10.2150897663036 + 4.79878355084543j)) < 1e-11
    assert abs(complex(f_eps(np.complex128(z), 1.0)) + 0.8) < 1e-14
    with pytest.raises(ArithmeticError):
        P._nonreal_preimage(0.1, 1.0)      # in (lambda_eps, e^-kappa): every preimage is real


def test_real_preimage_is_monotone_branch():
    lam, a = lambda_eps(1.0)
    xs = [P._real_preimage(w, 1.0) for w in (lam + 1e-6, -0.3, 0.0, 0.3, 5.0)]
    assert all(x > -a * a for x in xs) and np.all(np.diff(xs) > 0)
    assert abs(float(f_eps(xs[3], 1.0)) - 0.3) < 1e-15


def test_series_reversion_inverts_the_taylor_series():
    z0 = -3.0 + 2.0j
    c = P._taylor(z0, 0.7, 5)
    b = P._revert(c, 5)
    t = 1e-3
    h = sum(b[k] * t**k for k in range(1, 6))
    assert abs(complex(f_eps(np.complex128(z0 + h), 0.7)) - c[0] - t) < 1e-15
    # log(1 + t) reversion of exp at 0: b_k = (-1)^(k+1)/k
    bb = P._revert([1, 1, 1 / 2, 1 / 6, 1 / 24], 4)
    assert np.allclose(bb[1:], [1, -1 / 2, 1 / 3, -1 / 4])


@pytest.mark.parametrize("sizes,ok", [([1], True), ([2, 1], True), ([2], False), ([1, 1, 1], True),
                                      ([3, 2], True), ([3, 1], False), ([2, 2, 1], True), ([3, 3], True)])
def test_exact_rule_at_threshold(sizes, ok):
    assert R._exact_rule_at_threshold(sizes) is ok


def test_complex_structure_commutes_and_squares_to_minus_identity():
    N = np.kron(np.eye(2), np.array([[0.0, 1.0], [0.0, 0.0]]))
    S = R._random_similarity(4, np.random.default_rng(1))
    N = S @ N @ np.linalg.inv(S)
    K = R._complex_structure(N, [2, 2], 1e-10)
    assert np.allclose(K @ K, -np.eye(4), atol=1e-12) and np.allclose(K @ N, N @ K, atol=1e-12)


# ---------------------------------------------------------------------------
# property tests
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(d=st.integers(1, 5), seed=st.integers(0, 10_000), eps=st.floats(0.2, 5.0))
def test_property_psi_of_random_theta_is_representable(d, seed, eps):
    rng = np.random.default_rng(seed)
    theta0 = rng.standard_normal((d, d)) * rng.uniform(0.3, 3.0)
    D = psi_eps(theta0, eps)
    r = R.decide(D, eps)
    assert r["representable"] is True, r["reason"]
    assert r["residual"] <= r["tolerance"]
    assert np.linalg.norm(psi_eps(r["theta"], eps) - D) <= r["tolerance"] * np.linalg.norm(D) * 1.0001


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(d=st.integers(1, 6), seed=st.integers(0, 10_000), eps=st.floats(0.2, 5.0), gap=st.floats(1e-6, 0.5))
def test_property_unpaired_eigenvalue_below_threshold_is_not_representable(d, seed, eps, gap):
    rng = np.random.default_rng(seed)
    lam, _ = lambda_eps(eps)
    vals = [lam - gap] + list(rng.uniform(lam + 0.01, 3.0, d - 1))
    Q = R._random_similarity(d, rng)
    D = Q @ np.diag(vals) @ np.linalg.inv(Q)
    r = R.decide(D, eps)
    assert r["representable"] is False, r["reason"]
    assert r["uncertainty"] < r["margin"]


@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 10_000), eps=st.floats(0.3, 3.0))
def test_property_paired_values_below_threshold_are_constructed(seed, eps):
    rng = np.random.default_rng(seed)
    lam, _ = lambda_eps(eps)
    x = float(rng.uniform(max(-0.99, lam - 0.3), lam - 1e-3))
    Q = R._random_similarity(3, rng)
    D = Q @ np.diag([x, x, float(rng.uniform(0.1, 2))]) @ np.linalg.inv(Q)
    r = R.decide(D, eps)
    assert r["representable"] is True and r["residual"] <= r["tolerance"]
