"""The menon checks written against the array API: on a second parameter set (not the defaults the plugin
items use) the array-api-strict path reaches the NumPy verdict with a residual within the tolerance, and a
planted error (a mutated input or a perturbed operator inside the array-API path) makes the check refuted on
both backends, so the array-API path is shown able to fail."""
from __future__ import annotations

import numpy as np
import pytest

from solvers import dln
from solvers import xp_menon as X
from theorems.menon import sec4_1_balanced_variety as BV
from theorems.menon import sec4_2_balanced_dynamics as BD
from theorems.menon import sec4_4_simons_cone as CONE
from theorems.menon import sec6_2_fibres as FIB
from theorems.menon import sec8_1_tangent_and_pullback as TP
from theorems.menon import sec8_3_riemannian_submersion as SUB
from theorems.menon import sec4_2_end_to_end_metric as E2E
from theorems.menon import sec4_3_riemannian_gradient as RG
from theorems.menon import sec7_2_metric_spectrum as SP
from theorems.menon import sec4_4_remarks as REM
from theorems.menon import sec14_1_rank_one as R1
from theorems.menon import sec5_1_polar as POL
from theorems.menon import sec5_3_svd_parametrisation as SVD
from theorems.registry import get_claim
from theorems.runner import backend_pair, evaluate_numeric

BACKENDS = ("numpy", "array_api_strict")


_numeric = evaluate_numeric


# claim id -> a second parameter set (not the defaults)
SECOND = {
    "menon.a_operator_transpose": {"d": 4, "N": 3, "seed": 11, "batch": 6},
    "menon.end_to_end_balanced": {"d": 4, "N": 3, "seed": 5, "zeros": 1},
    "menon.partial_product_svd": {"d": 4, "N": 5, "seed": 3, "zeros": 1},
    "menon.riemannian_gradient": {"d": 4, "N": 3, "seed": 8},
    "menon.riemannian_gradient_flow": {"d": 4, "N": 3, "seed": 2, "zeros": 1},
    "menon.a_operator_spectrum": {"d": 5, "N": 3, "seed": 4},
    "menon.metric_coordinates": {"d": 4, "N": 5, "seed": 9},
    "menon.balanced_sign_convention": {"widths": [2, 3, 4, 2], "seed": 6, "T": 0.2, "h": 0.02},
    "menon.equal_singular_values": {"d": 4, "N": 4, "seed": 7, "zeros": 1, "construction": "sqrt"},
    "menon.balanced_dimension": {"d": 3, "N": 4, "seed": 12},
    "menon.end_to_end_any_g": {"widths": [3, 2, 4, 2], "seed": 5, "energy": "quartic"},
    "menon.gd_balance_drift": {"d": 3, "N": 4, "seed": 3, "eta": 0.2, "energy": "completion"},
    "menon.simons_cone": {"seed": 9, "points": 20},
    "menon.caricature_loss": {"d": 3, "N": 4, "n": 6, "seed": 2},
    "menon.norm_identity": {"d": 4, "N": 2, "seed": 13},
    "menon.rank_one_zero_set": {"a": -3.7},
    "menon.polar_svd": {"d": 5, "seed": 4, "rank": 3},
    "menon.svd_parametrisation": {"d": 4, "N": 2, "seed": 6},
    "menon.rank_deficient_svd": {"d": 4, "r": 3, "N": 2, "seed": 5},
    "menon.pullback_metric": {"d": 3, "N": 3, "seed": 5},
    "menon.orthonormal_basis": {"d": 3, "N": 3, "seed": 7},
    "menon.fibres_are_orbits": {"d": 3, "N": 3, "seed": 4},
    "menon.thin_gradients": {"d": 3, "N": 3, "seed": 4, "point": "random"},
    "menon.parameter_count": {"d": 3, "N": 3, "seed": 2, "rank": 2},
}


def test_every_converted_claim_offers_cupy():
    for cid in SECOND:
        check = next(c for c in get_claim(cid).checks if c.kind == "numeric")
        assert {"numpy", "cupy", "array_api_strict"} <= set(check.backends), cid


@pytest.mark.parametrize("cid", sorted(SECOND))
def test_strict_agrees_with_numpy_on_a_second_parameter_set(cid):
    (v0, r0, t0), (v1, r1, t1) = backend_pair(cid, SECOND[cid])
    assert v0 == "certified", (cid, v0, r0, t0)
    assert v1 == v0, (cid, v0, v1)
    assert abs(r1 - r0) <= t0, (cid, r0, r1, t0)


def _scaled(f, c):
    return lambda *a, **k: c * f(*a, **k)


# claim id -> a function of pytest's monkeypatch that plants an error inside the array-API path
def _plant_transpose(mp):  # a non-self-adjoint term in A: W Z is not transposed consistently
    a_op = dln.a_operator
    mp.setattr(dln, "a_operator", lambda W, Z, N, *r: a_op(W, Z, N) + 1e-3 * (W @ Z))


def _plant_jac_z(mp):  # Dz loses a column (two equal columns): its rank drops below (4.6)
    jz = BV._jac_z

    def bad(lam, Qs):
        J = jz(lam, Qs)
        J[:, 0] = J[:, 1]
        return J
    mp.setattr(BV, "_jac_z", bad)


def _plant_sval(mp):  # W_N scaled by 1.01 with the balance gate blinded: singular values differ
    inst = BV._sval_instance
    mp.setattr(BV, "_sval_instance", lambda p: [1.01 * inst(p)[0]] + inst(p)[1:])
    mp.setattr(dln, "conserved", lambda Ws: [0 * w for w in Ws[1:]])


def _plant_first_grad(mp):  # D_N perturbed alone: the O(eta) term of C_p^+ - C_p no longer cancels
    grads = dln.grads
    mp.setattr(dln, "grads", lambda Ws, Ep: [1.01 * g if i == 0 else g for i, g in enumerate(grads(Ws, Ep))])


def _plant_cone(mp):  # points moved off the cone |a| = |b|
    pts = CONE._cone_points
    mp.setattr(CONE, "_cone_points", lambda rng, m, n, k: [np.concatenate([x[:m], 1.1 * x[m:]])
                                                        for x in pts(rng, m, n, k)])


PLANTED = {
    "menon.a_operator_transpose": _plant_transpose,
    "menon.end_to_end_balanced": lambda mp: mp.setattr(E2E, "_a_op", _scaled(X.a_op, 1.001)),
    "menon.partial_product_svd": lambda mp: mp.setattr(E2E, "psd_power", lambda S, a: X.psd_powers(S, [1.05 * a])[0]),
    "menon.riemannian_gradient": lambda mp: mp.setattr(RG, "_a_op", _scaled(X.a_op, 1.001)),
    "menon.riemannian_gradient_flow": lambda mp: mp.setattr(RG, "_a_op", _scaled(X.a_op, 1.001)),
    "menon.a_operator_spectrum": lambda mp: mp.setattr(SP, "_a_mat", _scaled(X.a_mat, 1.001)),
    "menon.metric_coordinates": lambda mp: mp.setattr(SP, "_a_mat", _scaled(X.a_mat, 1.001)),
    "menon.balanced_sign_convention": lambda mp: mp.setattr(
        BV, "_membership", (lambda m: lambda Ws, G: m(Ws, [1.01 * g for g in G]))(BV._membership)),
    "menon.equal_singular_values": _plant_sval,
    "menon.balanced_dimension": _plant_jac_z,
    "menon.end_to_end_any_g": lambda mp: mp.setattr(BD, "_formula_49", _scaled(BD._formula_49, 1.001)),
    "menon.gd_balance_drift": _plant_first_grad,
    "menon.simons_cone": _plant_cone,
    "menon.caricature_loss": lambda mp: mp.setattr(dln, "grads", (lambda f: lambda Ws, Ep: [1.001 * g for g in f(
        Ws, Ep)])(dln.grads)),
    "menon.norm_identity": lambda mp: mp.setattr(REM, "_norm_outcome", (lambda f: lambda p: f(p, sign=-1))(
        REM._norm_outcome)),   # the (4.8) sign convention
    "menon.rank_one_zero_set": lambda mp: mp.setattr(R1, "_k3_outcome", (lambda f: lambda W, xp=None: f(
        np.array([[1.0, W[0, 1]], [1.01 * W[1, 0], 1.0]]), xp))(R1._k3_outcome)),
    "menon.polar_svd": lambda mp: mp.setattr(POL, "_polar_parts", (lambda f: lambda W, swap=False: f(W, True))(
        POL._polar_parts)),    # Q = V_P V_R^T (swapped)
    "menon.svd_parametrisation": lambda mp: mp.setattr(SVD, "_svd_instance", (lambda f: lambda p: (
        f(p)[0], [1.01 * q if i == 1 else q for i, q in enumerate(f(p)[1])]))(SVD._svd_instance)),  # Q_{N-1} not orthogonal
    "menon.rank_deficient_svd": lambda mp: mp.setattr(SVD, "_rank_instance", (lambda f: lambda p: (
        f(p)[0] * np.array([1.0, 1.0, 1e-9])[: p.r], f(p)[1]))(SVD._rank_instance)),  # sigma_r ~ 0: rank < r
    "menon.pullback_metric": lambda mp: mp.setattr(TP, "_h_formula", _scaled(TP._h_formula, 1.001)),
    "menon.orthonormal_basis": lambda mp: mp.setattr(SUB, "_thm14_basis", (lambda f: lambda lam, Qs, sign=-1.0: f(
        lam, Qs, 1.0))(SUB._thm14_basis)),   # the printed '+' of (8.21)
    "menon.fibres_are_orbits": lambda mp: mp.setattr(FIB, "_rotations", (lambda f: lambda d, c, rng: [
        1.01 * r for r in f(d, c, rng)])(FIB._rotations)),   # the group action leaves O_d: M is not preserved
    "menon.thin_gradients": lambda mp: mp.setattr(dln, "grads", (lambda f: lambda Ws, Ep: [
        g + 0.01 * w for g, w in zip(f(Ws, Ep), Ws)])(dln.grads)),   # a weight-decay term: not a gradient of E o phi
    "menon.parameter_count": lambda mp: mp.setattr(REM, "_gauge_basis", (lambda f: lambda Ws, gens: f(
        Ws, gens) + 1e-3)(REM._gauge_basis)),   # orbit generators pushed off the kernels of D phi and dC
}


def test_planted_table_covers_every_converted_claim():
    assert set(PLANTED) == set(SECOND)


@pytest.mark.parametrize("cid", sorted(PLANTED))
def test_planted_error_is_refuted_on_both_backends(cid, monkeypatch):
    PLANTED[cid](monkeypatch)
    for b in BACKENDS:
        v, r, t = _numeric(cid, SECOND[cid], b)
        assert v == "refuted", (cid, b, v, r, t)
