"""The array-API path of the jacot checks (solvers.xp_jacot): array-api-strict and NumPy reach the same verdict
with residuals within the check's tolerance on a second (non-default) parameter set, and a planted error (the
claim's falsifier, a wrong statement computed through the same array-API code) is refuted on both backends, so
the path is shown able to fail."""
from __future__ import annotations

import numpy as np
import pytest

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import asnumpy, on, xp_of
from theorems.registry import get_claim
from theorems.runner import resolve_for, run_check

BACKENDS = ("numpy", "array_api_strict")

#: claim id -> (second parameter set of the numeric check, falsifier variant that plants an error, its params)
CASES = {
    "jacot.coi_equals_rank": ({"w": 4, "N": 7, "k": 2, "seed": 11}, "stated", {"seed": 3}),
    "jacot.coi_lower_bound": ({"w": 5, "N": 3, "seed": 4, "shift": 2.0}, "plain_pinv", {"seed": 2}),
    "jacot.erratum_prop1_image_hypothesis": ({"w": 4, "N": 6, "seed": 8, "shift": 1.5}, "stated", {"seed": 1}),
    "jacot.stable_rank_chain": ({"w": 6, "N": 3, "seed": 9, "decay": 0.5}, "srank_equals_rank", {"seed": 4}),
    "jacot.neuron_decomposition_gram": ({"w": 7, "N": 3, "seed": 5}, "stated", {"seed": 6}),
    "jacot.gamma_p_scaling": ({"w": 3, "N": 8, "seed": 2}, "stated", {"seed": 7}),
    "jacot.minimal_norm_weights": ({"w": 2, "N": 3, "Lt": 0.7, "seed": 5}, "w_plus_1_below_N", {"seed": 2}),
    "jacot.k_norm": ({"w": 5, "N": 4, "Lt": 1.0, "seed": 3}, "no_infinity_convention", {"seed": 5}),
    "jacot.three_term_split": ({"w": 7, "N": 6, "Lt": 0.4, "seed": 12}, None, None),
    "jacot.erratum_momentum_transpose": ({"w": 3, "N": 7, "Lt": 0.5, "seed": 4}, "stated", {"seed": 1}),
    "jacot.erratum_coi_squared": ({"w": 2, "N": 6, "seed": 9}, "stated", {"seed": 3}),
    "jacot.erratum_prop1_proof": ({"w": 5, "N": 3, "seed": 4, "n_B": 60}, "stated", {"seed": 2}),
    "jacot.erratum_prop6_bound": ({"w": 4, "N": 6, "k": 2, "seed": 3}, "stated", {"seed": 5}),
    "jacot.erratum_prop6_limit": ({"w": 5, "N": 4, "k": 1, "seed": 2}, "stated", {"seed": 4}),
    "jacot.erratum_fig1_coi_square": ({"w": 5, "N": 6, "k": 2, "seed": 7}, "stated", {"seed": 1}),
    "jacot.hamilton_equations": ({"w": 3, "N": 4, "Lt": 1.5, "seed": 3, "B_scale": 0.3}, "no_relu_mask", {"seed": 2}),
    "jacot.theorem4_identity": ({"w": 4, "N": 6, "Lt": 1.5, "seed": 4, "B_scale": 0.5, "gamma": 0.3}, "no_B_term",
                                {"seed": 2}),
    "jacot.hamiltonian_energies": ({"w": 4, "N": 3, "Lt": 2.0, "seed": 2, "B_scale": 0.2}, "potential_sign_E11",
                                   {"seed": 3}),
}


def _check(cid, kind, variant=None):
    claim = get_claim(cid)
    for c in claim.checks:
        if c.kind == kind and (variant is None or c.variant == variant):
            return c
    raise LookupError(f"{cid}: no {kind} check {variant or ''}")


@pytest.mark.parametrize("cid", sorted(CASES))
def test_numeric_offers_array_api_and_agrees(cid):
    params = CASES[cid][0]
    check = _check(cid, "numeric")
    assert {"numpy", "array_api_strict", "cupy"} <= set(check.backends)
    ref = run_check(check, params, backend="numpy")
    rec = run_check(check, params, backend="array_api_strict")
    assert ref["verdict"] == "certified", ref["message"]
    assert rec["verdict"] == ref["verdict"], rec["message"]
    assert abs(rec["residual"] - ref["residual"]) <= ref["tolerance"]


@pytest.mark.parametrize("cid", sorted(c for c in CASES if CASES[c][1] is not None))
def test_planted_error_refuted_on_both(cid):
    _, variant, params = CASES[cid]
    check = _check(cid, "falsifier", variant)
    assert "array_api_strict" in check.backends
    residuals = []
    for b in BACKENDS:
        p = resolve_for(check, params)
        p.backend = b
        out = check.evaluate(p)
        assert out.decide() == "refuted", (b, out.message)
        residuals.append(out.residual)
    assert residuals[0] == pytest.approx(residuals[1], rel=1e-6)


def test_three_term_split_planted_error(monkeypatch):
    """three_term_split has no array-API falsifier: plant a wrong middle coefficient (2 <A', A>_K) in its split,
    through solvers.xp_jacot on each backend: refuted on both."""
    from theorems.jacot import sec2_2b_three_terms as lagrangian

    def wrong(A, dA, Lt, K, xp=None):
        lhs, pot, mid, kin = orig(A, dA, Lt, K, xp)
        return lhs, pot, 2 * mid, kin
    orig = lagrangian._split_terms
    monkeypatch.setattr(lagrangian, "_split_terms", wrong)
    check = _check("jacot.three_term_split", "numeric")
    for b in BACKENDS:
        assert run_check(check, CASES["jacot.three_term_split"][0], backend=b)["verdict"] == "refuted"


@pytest.mark.parametrize("backend", BACKENDS)
def test_xp_jacot_matches_leaky_on_a_batch(backend):
    """solvers.xp_jacot against solvers.leaky / numpy.linalg instance by instance on a batch (mixed signs, a
    rank-deficient instance, one whose image condition fails)."""
    rng = np.random.default_rng(20261126)
    As = rng.standard_normal((6, 3, 5))
    As[1] = np.abs(As[1])                # non-negative: finite COI without bias
    As[2, :, 1] = As[2, :, 0]            # two equal columns
    As[3] = -np.abs(As[3])               # sigmabar(A) = 0: COI without bias is +inf
    xp = xp_of(backend)
    Ax = on(xp, As)
    for bias in (True, False):
        got = asnumpy(X.coi(xp, Ax, bias=bias))
        want = np.array([leaky.coi(A, bias=bias) for A in As])
        assert np.array_equal(np.isinf(got), np.isinf(want))
        fin = np.isfinite(want)
        np.testing.assert_allclose(got[fin], want[fin], rtol=1e-10)
    np.testing.assert_allclose(asnumpy(X.pinv(xp, X.sigma(xp, Ax))), np.linalg.pinv(np.stack([leaky.sigma(A) for A in As])),
                               atol=1e-12)
    np.testing.assert_array_equal(asnumpy(X.matrix_rank(xp, Ax)), np.linalg.matrix_rank(As))
    K = np.stack([leaky.gram(A) for A in As])
    np.testing.assert_allclose(asnumpy(X.pinvh(xp, on(xp, K))), np.linalg.pinv(K, hermitian=True), atol=1e-10)
    g = asnumpy(X.coi_gamma(xp, Ax, 0.3))
    np.testing.assert_allclose(g, [leaky.coi_gamma(A, 0.3) for A in As], rtol=1e-12)
    Bs = rng.standard_normal(As.shape)
    H = asnumpy(X.hamiltonian(xp, Ax, on(xp, Bs), 1.7))
    np.testing.assert_allclose(H, [leaky.hamiltonian(A, B, 1.7) for A, B in zip(As, Bs)], rtol=1e-12, atol=1e-12)
