"""Bounds driven to equality (DESIGN.md, check strength): ``Claim(..., bound=True)``, the numeric
check's ``values["tightness"]``, the tightness search over the declared range with
``hypothesis.target`` and the sharpened-constant falsifier."""
import math

import pytest
from hypothesis import find, settings

from theorems.claim import Claim
from theorems.params import Param
from theorems.registry import all_claims, registry
from theorems.runner import run_check
from theorems.search import full_range
from theorems.vocabulary import Outcome


@pytest.fixture(autouse=True)
def _drop_toys():
    """The toy claims declared here leave the registry after each test (other tests walk every claim)."""
    yield
    for cid in [k for k in registry if k.startswith("menon.zz_bound_")]:
        registry.pop(cid)


def _am_gm(slug: str, c: float, **tight):
    """Toy bound sqrt(ab) <= c (a + b) over a, b in [1e-3, 1e3]: true for c >= 1/2, equality at a = b
    when c = 1/2; tightness sqrt(ab) / (c (a + b)), the smaller side over the larger."""
    cid = f"menon.zz_bound_{slug}"
    registry.pop(cid, None)
    claim = Claim(id=cid, document="menon", title="toy bound", label="toy", lines=(1, 2),
                  statement=rf"\sqrt{{ab}}\le {c}(a+b)", status="holds", bound=True,
                  params=[Param.float("a", 2.0, 1e-3, 1e3), Param.float("b", 50.0, 1e-3, 1e3)])

    @claim.numeric
    def _(p):
        lhs, rhs = math.sqrt(p.a * p.b), c * (p.a + p.b)
        # error model: each side carries a few ulps relative to itself
        return Outcome(residual=max(0.0, lhs - rhs), tolerance=8 * 2.2e-16 * rhs,
                       values={"lhs": lhs, "rhs": rhs, "tightness": lhs / rhs})

    claim.tightness(over=("a", "b"), max_examples=tight.pop("max_examples", 80), **tight)
    return claim


def _record(claim, kind):
    return run_check(next(c for c in claim.checks if c.kind == kind and c.bound is not None), profile="ci")


def test_tight_bound_reaches_equality_and_its_sharpened_constant_is_refuted():
    claim = _am_gm("tight", 0.5)
    assert claim.describe()["bound"] is True
    prop = _record(claim, "property")
    assert prop["verdict"] == "certified", prop["message"]
    assert prop["values"]["best_tightness"] > 0.99, prop["message"]
    a, b = prop["values"]["best_params"]["a"], prop["values"]["best_params"]["b"]
    assert 2 * math.sqrt(a * b) / (a + b) == pytest.approx(prop["values"]["best_tightness"])
    fals = _record(claim, "falsifier")
    assert fals["variant"] == "sharpened_10pct"
    assert fals["verdict"] == "refuted" == claim.check("falsifier", "sharpened_10pct").expect
    assert fals["values"]["tightness"] > 0.9 and fals["values"]["approached"] is True
    # the record's parameters are the tightest instance, and the sharpened bound fails there
    assert fals["params"]["a"] == pytest.approx(a) and fals["params"]["b"] == pytest.approx(b)
    assert math.sqrt(a * b) > 0.9 * 0.5 * (a + b)


def test_loose_bound_reports_not_approached_with_its_best_ratio():
    claim = _am_gm("loose", 1.0)  # twice the sharp constant: tightness <= 1/2
    prop = _record(claim, "property")
    assert prop["verdict"] == "certified"
    best = prop["values"]["best_tightness"]
    assert 0.45 < best <= 0.5 + 1e-12 and prop["values"]["approached"] is False
    assert "bound not approached, best ratio" in prop["message"]
    fals = _record(claim, "falsifier")
    # not refuted: the check fails (it expects refuted) and says why, with the ratio
    assert fals["verdict"] == "certified"
    assert claim.check("falsifier", "sharpened_10pct").expect == "refuted"
    assert f"bound not approached, best ratio {best:.6g}" in fals["message"]
    assert fals["values"]["approached"] is False


def test_loose_bound_declared_so_expects_the_sharpened_bound_to_hold():
    claim = _am_gm("declared_loose", 1.0, approached=False, finding="twice the sharp constant: best ratio 1/2")
    chk = claim.check("falsifier", "sharpened_10pct")
    assert chk.expect == "certified" and "declared not approached" in chk.description
    assert chk.describe()["expect"] == "certified"
    assert claim.notes.endswith("Tightness: twice the sharp constant: best ratio 1/2")
    fals = run_check(chk, profile="ci")
    assert fals["verdict"] == "certified" and "declared loose" in fals["message"]


def test_false_bound_is_refuted_with_a_shrunk_counterexample():
    claim = _am_gm("false", 0.45)  # below the sharp constant 1/2: fails near a = b
    prop = _record(claim, "property")
    assert prop["verdict"] == "refuted"
    cx = prop["counterexample"]["params"]
    assert math.sqrt(cx["a"] * cx["b"]) > 0.45 * (cx["a"] + cx["b"])  # it does break the bound
    # replaying it through the numeric check refutes again
    again = run_check(claim.check("numeric"), {"a": cx["a"], "b": cx["b"]})
    assert again["verdict"] == "refuted"


def test_a_witness_is_tried_first():
    claim = _am_gm("witness", 0.5, witnesses=[{"a": 3.0, "b": 3.0}], max_examples=5)
    prop = _record(claim, "property")
    assert prop["values"]["best_tightness"] == pytest.approx(1.0)
    assert prop["values"]["best_params"]["a"] == prop["values"]["best_params"]["b"] == 3.0


def test_a_matrix_bound_replays_its_tightest_instance_as_arrays():
    """The search records ``best_params`` as JSON (nested lists); the sharpened falsifier must get the
    matrix back as an array, as a user's ``--param`` would, before the claim's validator sees it."""
    import numpy as np
    cid = "menon.zz_bound_matrix"
    registry.pop(cid, None)
    seen = []

    def validator(p):
        seen.append(type(p.A))
        if not isinstance(p.A, np.ndarray):
            raise TypeError(f"validator got {type(p.A).__name__}, not an array")

    claim = Claim(id=cid, document="menon", title="toy matrix bound", label="toy", lines=(1, 2),
                  statement=r"\|A\|_2\le\|A\|_F", status="holds", bound=True, validate=validator,
                  params=[Param.matrix("A", [[1.0, 0.0], [0.0, 1.0]], shape=(2, 2))])  # ratio 1/sqrt 2 at the default

    @claim.numeric
    def _(p):
        # scaled by max|a_ij|: the squares in |A|_F underflow for entries below 1e-154 (Hypothesis drew 4.9e-214)
        sc = float(np.max(np.abs(p.A))) or 1.0
        two, fro = sc * float(np.linalg.norm(p.A / sc, 2)), sc * float(np.linalg.norm(p.A / sc))
        # error model: both norms to a few ulps of |A|_F; equality at rank one
        return Outcome(residual=max(0.0, two - fro), tolerance=16 * 2.2e-16 * fro,
                       values={"tightness": two / fro if fro else 0.0})

    # a rank-one witness (tightness 1) makes the tightest instance certain; it is recorded as JSON lists
    claim.tightness(over=("A",), max_examples=30, witnesses=[{"A": [[1.0, 2.0], [2.0, 4.0]]}])
    fals = _record(claim, "falsifier")
    assert fals["verdict"] == "refuted", (fals["message"], fals["params"])
    assert set(seen) == {np.ndarray}


def test_a_tightness_search_draws_matrices_whose_shape_names_a_drawn_size():
    import numpy as np
    cid = "menon.zz_bound_shaped"
    registry.pop(cid, None)
    shapes = []
    claim = Claim(id=cid, document="menon", title="toy shaped bound", label="toy", lines=(1, 2),
                  statement=r"\|A\|_2\le\|A\|_F", status="holds", bound=True,
                  params=[Param.int("d", 2, 1, 5), Param.matrix("A", None, shape=("d", "d"))])

    @claim.numeric
    def _(p):
        A = np.eye(p.d) if p.A is None else p.A
        if A.shape != (p.d, p.d):
            raise ValueError(f"A has shape {A.shape}, d = {p.d}")
        shapes.append(A.shape)
        sc = float(np.max(np.abs(A))) or 1.0   # against underflow of the squares, as above
        two, fro = sc * float(np.linalg.norm(A / sc, 2)), sc * float(np.linalg.norm(A / sc))
        return Outcome(residual=max(0.0, two - fro), tolerance=16 * 2.2e-16 * fro,
                       values={"tightness": two / fro if fro else 0.0})

    claim.tightness(over=("d", "A"), max_examples=40)
    prop = _record(claim, "property")
    assert prop["verdict"] == "certified", prop["message"]
    assert len({s[0] for s in shapes}) >= 3            # the size was drawn, and A followed it
    assert prop["values"]["best_tightness"] > 0.99     # rank one reached (d = 1 is rank one)


def test_tightness_declaration_errors():
    registry.pop("menon.zz_bound_nobound", None)
    c = Claim(id="menon.zz_bound_nobound", document="menon", title="t", label="l", lines=(1, 1), statement="s",
              status="holds", params=[Param.float("a", 1.0, 0.0, 1.0)])
    assert "bound" not in c.describe()
    with pytest.raises(ValueError, match="bound=True"):
        c.tightness(over=("a",))
    c.bound = True
    with pytest.raises(ValueError, match="unknown parameter"):
        c.tightness(over=("zz",))
    with pytest.raises(ValueError, match="sharpen"):
        c.tightness(over=("a",), sharpen=1.5)
    with pytest.raises(ValueError, match="finding"):
        c.tightness(over=("a",), approached=False)


def test_full_range_draws_reach_small_values_of_a_range_spanning_decades():
    p = Param.float("eps", 0.5, 1e-8, 1.0, search=(0.1, 1.0))  # the search range would never go below 0.1
    x = find(full_range(p), lambda v: v < 1e-5, settings=settings(max_examples=300, database=None))
    assert 1e-8 <= x < 1e-5
    q = Param.float("s", 0.5, 0.0, 2.0, low_open=True)
    y = find(full_range(q), lambda v: v < 1e-6, settings=settings(max_examples=300, database=None))
    assert 0.0 < y < 1e-6
    n = Param.int("N", 10, 1, 100_000, search=(1, 20))
    m = find(full_range(n), lambda v: v > 1000, settings=settings(max_examples=300, database=None))
    assert 1000 < m <= 100_000


def test_every_bound_claim_has_a_tightness_search_and_a_sharpened_falsifier():
    bounds = [c for c in all_claims() if c.bound and not c.id.startswith("menon.zz_")]
    for c in bounds:
        kinds = {(k.kind, k.bound is not None) for k in c.checks}
        assert ("property", True) in kinds, f"{c.id}: bound=True without a tightness search"
        assert ("falsifier", True) in kinds, f"{c.id}: bound=True without a sharpened-constant falsifier"
        assert any(k.kind == "numeric" for k in c.checks), f"{c.id}: a bound needs a numeric check"
        assert c.describe()["bound"] is True
    for c in all_claims():
        if not c.bound:
            assert "bound" not in c.describe()
            assert not any(k.bound is not None for k in c.checks)


def test_target_climbs_to_an_interior_equality():
    """x e^{1-x} <= 1 on [0, 50], equality only at the interior point x = 1 (not an end of the range)."""
    cid = "menon.zz_bound_interior"
    registry.pop(cid, None)
    claim = Claim(id=cid, document="menon", title="toy bound", label="toy", lines=(1, 2),
                  statement=r"xe^{1-x}\le 1", status="holds", bound=True,
                  params=[Param.float("x", 7.0, 0.0, 50.0)])

    @claim.numeric
    def _(p):
        lhs = p.x * math.exp(1.0 - p.x)
        return Outcome(residual=max(0.0, lhs - 1.0), tolerance=8 * 2.2e-16,
                       values={"lhs": lhs, "tightness": lhs})

    claim.tightness(over=("x",), max_examples=100)
    prop = _record(claim, "property")
    assert prop["verdict"] == "certified"
    assert prop["values"]["best_tightness"] > 0.999, prop["message"]
    assert abs(prop["values"]["best_params"]["x"] - 1.0) < 0.05
    assert _record(claim, "falsifier")["verdict"] == "refuted"


# ---------------------------------------------------------------------------
# Inventory of inequality claims (issues 16-22: "every inequality claim reports its best tightness").
# A statement with an inequality sign is either a bound (bound=True: tightness search + sharpened constant), or
# one of the classified non-bounds below (the sign sits in a hypothesis, an ordering, an index range, a sign
# condition with no constant to sharpen, an identity's consequence, or an empirical trend), or a bound still
# without its tightness search: BOUNDS_WITHOUT_TIGHTNESS, the count the per-document issues drive to zero.
import re  # noqa: E402

_INEQ = re.compile(r"\\le(?![a-z])|\\ge(?![a-z])|\\leq|\\geq|\\lesssim|\\gtrsim|(?<![\\a-z])<|>|\\ll|\\gg|≤|≥")

#: genuine bounds (a side compared with a constant or another side, equality reachable or not) not yet declared
#: bound=True, with what their tightness would measure
BOUNDS_WITHOUT_TIGHTNESS = {
}

#: inequality signs that do not make the claim a bound, by the reason
NOT_BOUNDS = {
    "hypothesis or domain (the sign restricts the inputs, the conclusion is an identity or a property)": (
        "jacot.erratum_prop7_nonneg_criterion", "jacot.coi_equals_rank", "jacot.constant_coi_path",
        "jacot.strict_minima_stable", "vanrossem.depth_scaling", "menon.dyson_well_posedness",
        "chen.class_frozen_coordinate", "chen.sector_moments", "sander.incontext_scalar_flow",
        "sander.init_trivial_ode", "sander.cited_ode_lemmas", "sander.topk_jacobian_p_range",
        "sander.topk_conjugate_weights", "sander.psi_linear_solution", "sander.f_eps_surjective",
        "sander.representable_jordan", "sander.first_order_nonrepresentable", "sander.linear_maps_v0_zero",
        "sander.topk_ksupport", "sander.pl_condition", "sander.lipschitz_definition"),
    "index ranges or orderings (1 <= p <= N, sigma_1 >= ... >= sigma_d, v_1 >= ... >= v_n)": (
        "jacot.zero_representation", "menon.balanced_invariance", "menon.balanced_sign_convention",
        "menon.rank_deficient_svd", "menon.entropy_formula", "menon.tangent_vectors", "menon.orthonormal_basis",
        "menon.riemannian_submersion", "menon.submersion_proof_sketch", "sander.incontext_positional_heads",
        "sander.topk_isotonic_min", "sander.topk_lmo", "sander.topk_relaxed", "sander.topk_dykstra",
        "sander.topk_dual_ascent", "sander.relu_counterexample", "chen.staircase"),
    "a sign or strictness with no constant to sharpen (> 0, <= 0, A >= 0 entrywise, s_1 < infinity)": (
        "jacot.erratum_prop9_perturbation", "jacot.prop5_nonnegative_limit", "jacot.stable_minima",
        "vanrossem.fixed_point_stability", "menon.entropy_monotone", "chen.cost_decrease",
        "chen.partial_truncation_condition", "sander.revnet_continuous_spectrum", "sander.nonuniversality_v0_zero"),
    "an identity whose consequence is a sign (dE/dt = -|grad E|^2 <= 0), or a minimisation solved in closed form": (
        "jacot.erratum_prop6_limit",   # the corrected statement is the equality |A|_K^2 = |A|_Kbar^2
        "vanrossem.lyapunov_identity", "menon.riemannian_gradient_flow", "jacot.erratum_prop1_proof",
        "sander.linear_regression_equivalence"),
    "covered by a bound claim (the same inequality, declared bound=True there)": (
        "jacot.erratum_prop1_image_hypothesis",),   # jacot.coi_lower_bound
    "a condition between conditions (the threshold is proved symbolically, not a measured side)": (
        "jacot.discrete_step_condition", "sander.long_time_threshold"),
    "a probability or a distribution written with an event (P(|dh|^2 < h))": (
        "vanrossem.random_feature_distribution",),
    "an existential constant (<= C/L with C unspecified: the rate is tested, not a constant)": (
        "sander.ode_discretisation", "sander.clipping_lipschitz_gap"),
    "empirical or heuristic trends (their allowance is stated in the check)": (
        "jacot.finite_length_jumps", "jacot.adaptive_test_error", "chen.class_untruncation",
        "sander.adjoint_training_cpu", "sander.incontext_experiments", "sander.incontext_fig63_cpu",
        "sander.fig31_large_depth", "sander.fig32_long_time", "sander.incontext_pe_conditioning"),
}


def test_every_inequality_claim_is_a_bound_or_classified():
    classified = {cid for ids in NOT_BOUNDS.values() for cid in ids}
    assert not classified & set(BOUNDS_WITHOUT_TIGHTNESS), "a claim is listed both as a bound and as a non-bound"
    ids = {c.id for c in all_claims()}
    stale = (classified | set(BOUNDS_WITHOUT_TIGHTNESS)) - ids
    assert not stale, f"listed claims that do not exist: {sorted(stale)}"
    unclassified = sorted(c.id for c in all_claims() if not c.id.startswith("menon.zz_") and not c.bound
                          and _INEQ.search(c.statement or "") and c.id not in classified
                          and c.id not in BOUNDS_WITHOUT_TIGHTNESS)
    assert not unclassified, ("statements with an inequality sign that are neither bound=True nor classified here "
                              f"(declare the bound's tightness, or say why it is not a bound): {unclassified}")


def test_bounds_without_tightness_are_named_and_counted():
    """The bounds still without a tightness search: a bound declared since must leave the list."""
    done = sorted(cid for cid in BOUNDS_WITHOUT_TIGHTNESS if registry[cid].bound)
    assert not done, f"now declared bound=True, remove from BOUNDS_WITHOUT_TIGHTNESS: {done}"
    assert len(BOUNDS_WITHOUT_TIGHTNESS) == 0   # 9 at the inventory (2026-11-26); jacot's, sander's and chen's declared since
