"""theorems.matrices: each family produces what it says, draws are finite and bounded, samplers are
deterministic per generator, shrinking reaches simple matrices, and Param strategies resolve
dependent shapes."""
import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings, strategies as st

from theorems import matrices as M
from theorems.params import Param, ParamError, params_strategy

EPS = np.finfo(float).eps
SHAPES = [(1, 1), (2, 2), (3, 3), (5, 5), (4, 2), (2, 5)]
FAST = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def _fams(shape):
    sq = shape[0] == shape[1]
    return [f for f in M.MATRIX_FAMILIES if sq or f not in M.SQUARE_FAMILIES]


@pytest.mark.parametrize("shape", SHAPES)
def test_every_family_finite_bounded_and_shaped(shape):
    rng = np.random.default_rng(0)
    for fam in _fams(shape):
        for bound in (0.5, 10.0):
            for _ in range(20):
                A = M.sample(fam, shape, rng, bound=bound)
                assert A.shape == shape, fam
                assert np.all(np.isfinite(A)), fam
                assert np.max(np.abs(A)) <= bound, (fam, bound, np.max(np.abs(A)))


@pytest.mark.parametrize("shape", [(2, 2), (4, 4), (5, 3), (3, 5)])
def test_orthogonal_to_rounding(shape):
    rng = np.random.default_rng(1)
    for _ in range(20):
        Q = M.sample("orthogonal", shape, rng)
        G = Q.T @ Q if shape[0] >= shape[1] else Q @ Q.T
        assert np.max(np.abs(G - np.eye(min(shape)))) <= 20 * max(shape) * EPS


@pytest.mark.parametrize("kappa", [1.0, 1e3, 1e8, 1e12])
@pytest.mark.parametrize("shape", [(3, 3), (6, 6), (5, 2)])
def test_ill_conditioned_has_the_given_condition_number(kappa, shape):
    rng = np.random.default_rng(2)
    for _ in range(10):
        A = M.sample("ill_conditioned", shape, rng, kappa=kappa)
        c = np.linalg.cond(A)
        # the SVD of a matrix with cond kappa resolves sigma_min to about kappa * n * eps relative
        assert kappa / 2 <= c <= 2 * kappa, (kappa, c)


def test_ill_conditioned_without_kappa_draws_a_large_one():
    rng = np.random.default_rng(3)
    conds = [np.linalg.cond(M.sample("ill_conditioned", (4, 4), rng)) for _ in range(30)]
    assert min(conds) >= M.KAPPA_RANGE[0] / 2


def test_near_singular_smallest_singular_value_is_tiny():
    rng = np.random.default_rng(4)
    for shape in [(2, 2), (4, 4), (5, 3)]:
        for _ in range(20):
            s = np.linalg.svd(M.sample("near_singular", shape, rng), compute_uv=False)
            assert s[-1] <= 1e-7 * s[0]
            assert s[-2] >= 1e-3 * s[0] if len(s) > 2 else True


@pytest.mark.parametrize("shape", [(3, 3), (5, 5), (6, 3)])
def test_rank_deficient_has_the_rank(shape):
    rng = np.random.default_rng(5)
    for r in range(min(shape) + 1):
        A = M.sample("rank_deficient", shape, rng, rank=r)
        assert np.linalg.matrix_rank(A) == r
    drawn = [np.linalg.matrix_rank(M.sample("rank_deficient", shape, rng)) for _ in range(30)]
    assert max(drawn) < min(shape)


def test_spd_and_symmetric():
    rng = np.random.default_rng(6)
    for n in (1, 2, 4, 6):
        for _ in range(20):
            S = M.sample("spd", (n, n), rng)
            assert np.array_equal(S, S.T)
            assert np.min(np.linalg.eigvalsh(S)) > 0
            H = M.sample("symmetric", (n, n), rng)
            assert np.array_equal(H, H.T)


def test_diagonal_and_identity_like():
    rng = np.random.default_rng(7)
    D = M.sample("diagonal", (4, 3), rng)
    assert np.count_nonzero(D * (1 - np.eye(4, 3))) == 0
    E = M.sample("identity_like", (4, 4), rng)
    assert np.max(np.abs(E - np.eye(4))) <= 1e-3


@pytest.mark.parametrize("n", [2, 3, 5])
def test_non_commuting_pairs(n):
    rng = np.random.default_rng(8)
    for _ in range(30):
        A, B = M.sample_pair("non_commuting", n, rng, families=M.DEFAULT_FAMILIES)
        assert np.linalg.norm(A @ B - B @ A) > 1e-6 * np.linalg.norm(A) * np.linalg.norm(B)
    # given a non-scalar A (here diagonal with distinct entries, or a rank-one matrix), B does not commute
    for A in (np.diag(np.arange(1.0, n + 1)), np.outer(np.ones(n), np.arange(n))):
        B = M.build("non_commuting", (n, n), M.RngSource(rng), partner=A)
        assert np.linalg.norm(A @ B - B @ A) > 0


@given(M.pair_strategy("non_commuting", st.integers(2, 4), families=M.DEFAULT_FAMILIES))
@FAST
def test_non_commuting_strategy(AB):
    A, B = AB
    assert np.linalg.norm(A @ B - B @ A) > 0


def test_samplers_are_deterministic_per_generator():
    for fam in M.MATRIX_FAMILIES:
        a = M.sample(fam, (3, 3), np.random.default_rng(42))
        b = M.sample(fam, (3, 3), np.random.default_rng(42))
        assert np.array_equal(a, b), fam
    p = Param.matrix("A", shape=(3, 3))
    v1 = M.sample_param(p, np.random.default_rng(9), {})
    v2 = M.sample_param(p, np.random.default_rng(9), {})
    assert v1 == v2


@given(st.data())
@FAST
def test_strategies_finite_and_bounded(data):
    fam = data.draw(st.sampled_from(M.MATRIX_FAMILIES))
    m = data.draw(st.integers(1, 4))
    n = m if fam in M.SQUARE_FAMILIES else data.draw(st.integers(1, 4))
    A = data.draw(M.strategy(fam, (m, n), bound=3.0))
    assert A.shape == (m, n) and np.all(np.isfinite(A)) and np.max(np.abs(A)) <= 3.0


def test_shrinking_reaches_a_matrix_with_one_nonzero_entry():
    """A property that fails for any matrix with a nonzero entry shrinks to one nonzero entry, 1.0."""
    A = find(M.strategy("gaussian", (3, 4)), lambda A: bool(np.any(A != 0)), settings=settings(database=None))
    assert np.count_nonzero(A) == 1 and np.max(np.abs(A)) == 1.0


def test_shrinking_structured_families_reaches_identity_like_matrices():
    """Orthogonal and SPD draws shrink to the identity (angles to 0, log-eigenvalues to 0); the
    ill-conditioned family to diag(1, .., 1, 1/kappa) with the smallest kappa drawn."""
    cfg = settings(database=None)
    for fam in ("orthogonal", "spd"):
        assert np.array_equal(find(M.strategy(fam, (3, 3)), lambda A: True, settings=cfg), np.eye(3))
    A = find(M.strategy("ill_conditioned", (3, 3)), lambda A: True, settings=cfg)
    assert np.allclose(A, np.diag([1.0, 1.0, 1 / M.KAPPA_RANGE[0]]))
    # a "bug" that needs an ill-conditioned matrix: the shrunk counterexample is as simple as possible
    A = find(M.strategy("ill_conditioned", (3, 3)), lambda A: np.linalg.cond(A) > 1e6, settings=cfg)
    assert np.count_nonzero(A) == 3


def test_param_strategy_respects_dependent_shapes():
    ps = [Param.int("d", 2, 1, 5), Param.int("N", 2, 1, 3),
          Param.matrix("A", shape=("d", "d")),
          Param.matrix("B", shape=("d", "d"), families=("gaussian", "non_commuting"), partner="A"),
          Param.matrix("C", shape=lambda p: (p["d"] + 1, p["N"]), families=("rank_deficient", "orthogonal")),
          Param.matrices("Ws", shape=lambda p: [(p["d"], p["d"])] * p["N"], families=("spd",)),
          Param.vector("v", shape="d", low=0.0, high=5.0, families=("log", "distinct"))]
    strat = params_strategy(ps, [p.name for p in ps], {})
    seen_pair = []

    @given(strat)
    @FAST
    def check(x):
        d, N = x["d"], x["N"]
        assert x["A"].shape == x["B"].shape == (d, d)
        assert x["C"].shape == (d + 1, N)
        assert len(x["Ws"]) == N and all(W.shape == (d, d) for W in x["Ws"])
        assert all(np.min(np.linalg.eigvalsh(W)) > 0 for W in x["Ws"])
        assert x["v"].shape == (d,) and np.all((x["v"] >= 0) & (x["v"] <= 5))
        for p in ps:
            p.validate(x[p.name])
        seen_pair.append(np.linalg.norm(x["A"] @ x["B"] - x["B"] @ x["A"]) > 0)
    check()
    assert any(seen_pair)
    # a shape naming a parameter that is not drawn takes it from the base values
    x = find(params_strategy(ps, ["A"], {"d": 4, "N": 1}), lambda x: True, settings=settings(database=None))
    assert x["A"].shape == (4, 4)
    # the Param's own strategy resolves from the params it is given
    assert find(ps[2].strategy({"d": 3}), lambda A: True).shape == (3, 3)


def test_sample_param_passes_validate():
    rng = np.random.default_rng(10)
    ps = [Param.matrix("A", shape=(3, 2)), Param.matrix("S"),
          Param.matrices("Ws", shape=lambda p: [(2, 3), (3, 3), (3, 1)]),
          Param.vector("x", shape=4), Param.vector("w", shape="n", low=1, high=6, families="integers"),
          Param.vector("s", shape=3, low=1e-3, high=100.0, families=("log", "distinct"))]
    for _ in range(30):
        so_far = {"n": 3}
        for p in ps:
            v = M.sample_param(p, rng, so_far)
            val = p.validate(v)
            so_far[p.name] = val
        assert np.shape(so_far["A"]) == (3, 2)
        assert [W.shape for W in so_far["Ws"]] == [(2, 3), (3, 3), (3, 1)]
        assert so_far["w"].shape == (3,) and np.all(so_far["w"] == np.round(so_far["w"]))
        assert np.all(so_far["s"] >= 1e-3) and np.all(so_far["s"] <= 100)
    with pytest.raises(TypeError):
        M.sample_param(Param.int("d", 1), rng, {})


def test_declarations_are_checked_and_described():
    with pytest.raises(ValueError):
        Param.matrix("A", families=("gausian",))
    d = Param.matrix("A", shape=("d", "d"), families=("spd",), bound=2.0).describe()
    assert d["shape"] == ["d", "d"] and d["families"] == ["spd"] and d["bound"] == 2.0
    # an undeclared matrix describes as before (no new keys)
    assert set(Param.matrix("A").describe()) == {"name", "kind", "default", "doc"}
    with pytest.raises(ParamError):
        Param.matrix("A").validate([[1.0, float("nan")]])


def test_seed_family_draws_none_half_the_time():
    p = Param.matrix("D", shape=(3, 3), families=("spd", "seed"))
    rng = np.random.default_rng(11)
    vals = [M.sample_param(p, rng, {}) for _ in range(200)]
    nones = sum(v is None for v in vals)
    assert 60 <= nones <= 140
    for v in vals:
        out = p.validate(v)
        assert out is None or np.min(np.linalg.eigvalsh(out)) > 0
    # a failure only drawn matrices show shrinks to the simplest of them (the seed path draws nothing
    # more, so it is what a failure there shrinks to)
    A = find(p.strategy({}), lambda A: A is not None, settings=settings(database=None))
    assert np.array_equal(A, np.eye(3))
