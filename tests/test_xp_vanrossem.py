"""The array-API path of the vanrossem checks (issue 24): array-api-strict and NumPy run the same code and must
agree at a second, non-default parameter set; and a planted error must be caught on both backends, so the
array-API path is shown able to fail.

A planted error is either the claim's own falsifier variant (a perturbed statement, evaluated at the same fixed
parameters, no search) or, for the two claims without one, a mutated field patched into the module under test."""
from __future__ import annotations

import math

import pytest

pytest.importorskip("array_api_strict")

from solvers import xp_vanrossem as xv  # noqa: E402
from theorems.registry import get_claim  # noqa: E402
from theorems.runner import resolve_for  # noqa: E402
from theorems.vanrossem import sec4_1_fixed_point  # noqa: E402

BACKENDS = ("numpy", "array_api_strict")

# claim id -> (second parameter set, falsifier variant used as the planted error or None)
CASES = {
    "vanrossem.fixed_point_stability": ({"tau_h": 0.7, "tau_y": 2.5, "delta_x": 1.3, "delta_y": 0.6, "A_high": 0.8},
                                        "j12_sign_flipped"),
    "vanrossem.equilibrium_line": ({"tau_h": 1.7, "tau_y": 0.4, "delta_x": 0.9, "delta_y": 1.4, "u_eq": 2.5}, None),
    "vanrossem.gradient_factor": ({"seed": 7, "hidden": 5, "dim_x": 3, "dim_y": 1}, "stated"),
    "vanrossem.loss_curve": ({"seed": 11, "hidden": 4, "dim_x": 1, "dim_y": 3}, "sum_convention"),
    "vanrossem.lyapunov_identity": ({"seed": 3, "tau_h": 0.5, "tau_y": 1.7, "delta_x": 1.2, "delta_y": 0.8,
                                     "dh2_0": 0.2, "dy2_0": 0.05, "w_0": 0.05}, "plus"),
    "vanrossem.reduced_system": ({"seed": 9, "dim_y": 3, "hidden": 2, "dim_x": 4}, "factor2"),
    "vanrossem.effective_gradient_flow": ({"seed": 5, "dim_x": 3, "hidden": 2, "dim_y": 3, "tau_ybar": 0.8,
                                           "tau_h": 2.2, "tau_y": 0.6, "scale": 0.7}, "deep_linear_parametrisation"),
    "vanrossem.representational_velocity": ({"seed": 4, "dim_x": 3, "hidden": 6, "dim_y": 1, "tau_h": 1.3,
                                             "tau_y": 0.9, "scale": 0.8, "gradients": "eq16"}, "square"),
    "vanrossem.structure_intuition": ({"seed": 6, "dim_x": 3, "hidden": 5, "dim_y": 2, "tau_h": 0.8, "tau_y": 1.9,
                                       "scale": 1.3, "gradients": "eq16"}, None),
    "vanrossem.two_layer_linear_equivalence": ({"seed": 8, "dim_x": 2, "hidden": 6, "dim_y": 3}, "uncentred_inputs"),
    "vanrossem.linearisation_about_mean": ({"seed": 3, "dim_x": 2, "width": 12, "depth": 3, "act": "softplus",
                                            "eps_max": 0.08}, "expand_about_x1"),
    "vanrossem.loss_definition": ({"seed": 2, "n_points": 5, "dim_x": 3, "dim_y": 2, "width": 5, "depth": 3},
                                  "half_sum"),
}


def _check(cid, kind, variant=None):
    for c in get_claim(cid).checks:
        if c.kind == kind and (variant is None or c.variant == variant):
            return c
    raise LookupError(f"{cid}: no {kind} check {variant or ''}")


def _evaluate(check, given, backend):
    """The check evaluated at fixed parameters on one backend: (verdict, residual, tolerance)."""
    p = resolve_for(check, given)
    p.backend = backend
    out = check.evaluate(p)
    r, t = float(out.residual), float(out.tolerance)
    verdict = out.verdict or ("certified" if r <= t else "refuted")
    return verdict, r, t


def test_every_case_offers_the_array_api():
    for cid, (_, variant) in CASES.items():
        assert "cupy" in _check(cid, "numeric").backends and "array_api_strict" in _check(cid, "numeric").backends
        if variant:
            assert "array_api_strict" in _check(cid, "falsifier", variant).backends


@pytest.mark.parametrize("cid", sorted(CASES))
def test_strict_agrees_with_numpy_at_a_second_parameter_set(cid):
    given, _ = CASES[cid]
    check = _check(cid, "numeric")
    (v0, r0, t0), (v1, r1, t1) = (_evaluate(check, given, b) for b in BACKENDS)
    assert v0 == v1 == "certified", (cid, v0, r0, t0, v1, r1, t1)
    assert math.isclose(t0, t1, rel_tol=1e-9, abs_tol=1e-300)
    assert abs(r0 - r1) <= t0, (cid, r0, r1, t0)


@pytest.mark.parametrize("cid", sorted(c for c, (_, v) in CASES.items() if v))
def test_falsifier_variant_is_refuted_on_both_backends(cid):
    given, variant = CASES[cid]
    check = _check(cid, "falsifier", variant)
    results = [_evaluate(check, given, b) for b in BACKENDS]
    for b, (v, r, t) in zip(BACKENDS, results):
        assert v == "refuted" and r > t, (cid, b, v, r, t)
    # the two backends see the same perturbed statement: their residuals agree to rounding
    assert math.isclose(results[0][1], results[1][1], rel_tol=1e-6)


def test_planted_field_error_caught_by_equilibrium_line(monkeypatch):
    """Eq 7 with the rate of dv/dt doubled (the Eq 51 'factor two' variant): the spectrum at a point of the line no
    longer matches the closed form; caught through the array-API path on both backends."""
    given, _ = CASES["vanrossem.equilibrium_line"]
    check = _check("vanrossem.equilibrium_line", "numeric")
    orig = sec4_1_fixed_point._eq7_c

    def mutated(y, a, b, th, ty):
        du, dv, dw = orig(y, a, b, th, ty)
        return du, 2 * dv, dw
    monkeypatch.setattr(sec4_1_fixed_point, "_eq7_c", mutated)
    for b in BACKENDS:
        v, r, t = _evaluate(check, given, b)
        assert v == "refuted" and r > t, (b, v, r, t)


def test_planted_field_error_caught_by_structure_intuition(monkeypatch):
    """The Eq 6 encoder field scaled by 1.5: d|dh|^2/dt no longer equals -(2g a/tau_h)|dy|^2 for equal targets;
    caught through the array-API path on both backends."""
    given, _ = CASES["vanrossem.structure_intuition"]
    check = _check("vanrossem.structure_intuition", "numeric")
    orig = xv.eq6_field

    def mutated(*args, **kw):
        fyb, fDh, fDy = orig(*args, **kw)
        return fyb, 1.5 * fDh, fDy
    monkeypatch.setattr(xv, "eq6_field", mutated)
    for b in BACKENDS:
        v, r, t = _evaluate(check, given, b)
        assert v == "refuted" and r > t, (b, v, r, t)


def test_helpers_strict_against_numpy():
    """cs_jacobian, cs_gradient and fd_gradient_with_error give NumPy's numbers under array-api-strict."""
    import numpy as np
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 4))
    out = {}
    for b in BACKENDS:
        xp = xv.xp_of(b)
        Ax, x = xv.on(xp, A, rng.standard_normal(3) if b == "numpy" else out["x"])
        out["x"] = xv.asnumpy(x)
        J = xv.cs_jacobian(xp, lambda u, v, w: (u * v, v / w, u * u * w), x)
        G = xv.cs_gradient(xp, lambda X: xp.sum(X * X * X, axis=(-2, -1)), Ax)
        (F,), (E,) = xv.fd_gradient_with_error(xp, lambda X: xp.sum(X * X * X, axis=(-2, -1)), [Ax])
        out[b] = [xv.asnumpy(z) for z in (J, G, F, E)]
    x = out["x"]
    J_exact = np.array([[x[1], x[0], 0], [0, 1 / x[2], -x[1] / x[2] ** 2], [2 * x[0] * x[2], 0, x[0] ** 2]])
    for b in BACKENDS:
        J, G, F, E = out[b]
        assert np.allclose(J, J_exact, rtol=1e-14, atol=1e-14)
        assert np.allclose(G, 3 * A * A, rtol=1e-14, atol=1e-14)
        assert np.all(np.abs(F - 3 * A * A) <= 10 * E)
    for u, v in zip(out["numpy"], out["array_api_strict"]):
        assert np.allclose(u, v, rtol=1e-12, atol=1e-15)
