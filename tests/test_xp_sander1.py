"""The array-API paths of Sander's chapters on ResNets and neural ODEs (issue 24): for every converted claim the
array-api-strict run reaches the NumPy run's verdict with residuals within the claim's tolerance on a second,
non-default parameter set, and a planted error (the claim's falsifier through the same xp code path, or a patched
step of it) is refuted on both backends, so the array-API path is able to fail."""
from __future__ import annotations

import pytest

from theorems.registry import get_claim

pytest.importorskip("array_api_strict")

BACKENDS = ("numpy", "array_api_strict")

#: claim id -> (second parameter set, planted error: a falsifier name (run at its own fixed values) or "patch")
CASES = {
    "sander.linear_regression_equivalence": ({"d": 4, "n": 23, "seed": 5}, "without_constant"),
    "sander.linear_gradient": ({"N": 7, "d": 2, "seed": 3}, "stated"),
    "sander.linear_pl_bounds": ({"N": 20, "d": 2, "seed": 4, "radius": 0.3}, "stated"),
    "sander.linear_gradient_identities": ({"N": 12, "d": 2, "seed": 2, "radius": 0.4}, "without_norm_condition"),
    "sander.linear_limit_pde": ({"N": 8, "d": 2, "seed": 1}, "stated"),
    "sander.linear_euler_lemma_2_13": ({"N": 20, "d": 2, "seed": 3}, "operator_norm_reading"),
    "sander.lemma27_merged_weights_defect": ({"N": 8, "d": 2, "seed": 1}, "stated"),
    "sander.lipschitz_definition": ({"eps": 0.2, "pairs": 500, "seed": 3}, "stated"),
    "sander.arzela_ascoli_grid_inequality": ({"L": 20, "pairs": 300, "seed": 2, "C": 2.0}, "no_1_over_L_term"),
    "sander.intro_backprop": ({"d": 2, "p": 3, "N": 4, "seed": 1}, "drop_identity"),
    "sander.intro_adjoint": ({"d": 2, "p": 3, "seed": 2}, "sign_flipped"),
    "sander.intro_prop12": ({"d": 3, "p": 2, "N": 8, "seed": 1}, "patch"),
    "sander.resnet_backprop": ({"n": 3, "d": 2, "dp": 2, "q": 4, "m": 3, "L": 3, "act": "gelu", "seed": 2}, "stated"),
    "sander.ode_discretisation": ({"n": 6, "q": 3, "m": 4, "seed": 1, "L_min": 16, "L_max": 256}, "patch"),
    "sander.init_trivial_ode": ({"n": 5, "d": 2, "dp": 2, "q": 5, "m": 3, "L": 4, "act": "gelu", "seed": 1},
                                "q_below_d_plus_dp"),
    "sander.backprop_euler_adjoint": ({"N": 5, "d": 2, "seed": 4, "family": "smooth"}, "drop_transpose"),
    "sander.heun_lemma_2_14": ({"N": 40, "d": 2, "seed": 3}, "half_instead_of_quarter"),
    "sander.singular_value_lemma": ({"m": 5, "r": 3, "n": 4, "seed": 7}, "drop_m_ge_r"),
    "sander.pl_bounds_operator_norm": ({"d": 5, "dp": 3, "M": 0.3, "seed": 2}, "stated"),
    "sander.limit_adjoint_sign": ({"q": 3, "m": 4, "scale": 1.0, "act": "tanh", "seed": 2}, "stated"),
}


def _run(check, given, backend):
    p = check.claim.resolve({**given, **check.fixed})
    p.backend = backend
    return check.evaluate(p)


def test_every_converted_claim_offers_the_array_api():
    for cid in CASES:
        assert "array_api_strict" in get_claim(cid).check("numeric").backends, cid
        assert "cupy" in get_claim(cid).check("numeric").backends, cid


@pytest.mark.parametrize("cid", sorted(CASES))
def test_strict_agrees_with_numpy_on_a_second_parameter_set(cid):
    given, _ = CASES[cid]
    check = get_claim(cid).check("numeric")
    out = {b: _run(check, given, b) for b in BACKENDS}
    np_out, st_out = out["numpy"], out["array_api_strict"]
    assert np_out.decide() == "certified", np_out.message
    assert st_out.decide() == np_out.decide(), st_out.message
    assert abs(st_out.residual - np_out.residual) <= np_out.tolerance, (st_out.residual, np_out.residual)


def _planted_prop12(monkeypatch):
    """Euler steps without the 1/N (x_{n+1} = x_n + f(x_n)): an O(1) error, far above the bound."""
    from theorems.sander import ch1_2_resnets_discretize_odes as intro

    def wrong(f, E1, E2, x, N):
        xs = []
        for n in range(N):
            x = x + f(E1[n, ...], E2[n, ...], x)
            xs.append(x)
        return xs
    monkeypatch.setattr(intro, "_p12_euler", wrong)


def _planted_prop32(monkeypatch):
    """The ResNet output shifted by a constant 1e-2: the gap no longer decays like 1/L."""
    from theorems.sander import ch3_3_definitions as defs
    right = defs._resnet_out
    monkeypatch.setattr(defs, "_resnet_out", lambda p, xp, Vf, Wf, X, L: right(p, xp, Vf, Wf, X, L) + 1e-2)


PATCHES = {"sander.intro_prop12": _planted_prop12, "sander.ode_discretisation": _planted_prop32}


@pytest.mark.parametrize("cid", sorted(CASES))
def test_planted_error_is_refuted_on_both_backends(cid, monkeypatch):
    given, planted = CASES[cid]
    claim = get_claim(cid)
    if planted == "patch":
        PATCHES[cid](monkeypatch)
        check, at = claim.check("numeric"), given
    else:
        check, at = claim.check("falsifier", planted), {}
        assert "array_api_strict" in check.backends
    for b in BACKENDS:
        out = _run(check, at, b)
        assert out.decide() == "refuted", (b, out.message)
