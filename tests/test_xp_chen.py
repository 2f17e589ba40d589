"""The chen checks written through the array API (solvers/xp_chen.py): on a second parameter set (not the
default one) array-api-strict reaches NumPy's verdict with a residual within the tolerance, and a planted
error (a mutated map or instance inside the same array-API path) is refuted on both backends, so the
array-API path is shown able to fail."""
from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import pytest

from solvers import xp_chen as xc
from theorems.chen import sec2_1_standard_cost as sec2_1
from theorems.chen import sec2_model
from theorems.chen import sec3_1_cluster_separation as sec3_1
from theorems.chen import sec3_2b_pointwise_flow as sec3_2b
from theorems.chen import sec3_3_moments as sec3_3
from theorems.chen import sec4_2_partial_truncation as sec4_2
from theorems.chen import sec4_3_fixed_rotation as sec4_3
from theorems.chen import sec5_sec7_theorem_5_1 as sec5
from theorems.chen import sec8_1_propagators as sec8_1
from theorems.chen import sec8_collapsed_data as sec8
from theorems.chen import sec9_clustered_data as sec9
from theorems.registry import get_claim
from theorems.runner import run_check

BACKENDS = ("numpy", "array_api_strict")


def _numeric(cid):
    (check,) = [c for c in get_claim(cid).checks if c.kind == "numeric"]
    return check


def _patch(mp, obj, name, wrap):
    mp.setattr(obj, name, wrap(getattr(obj, name)))


def _shift(value):
    """A map whose result is moved by ``value`` (a planted rounding-sized-or-larger error)."""
    def wrap(f):
        @functools.wraps(f)
        def g(*a, **k):
            return f(*a, **k) + value
        return g
    return wrap


def _per_layer_biases_off(f):
    def g(Wc, betas):
        Ws, bs = f(Wc, betas)
        return Ws, [b * 1.001 for b in bs]
    return g


def _forms_third_off(f):
    def g(W, b, X):
        f1, f2, f3 = f(W, b, X)
        return f1, f2, f3 + 1e-6
    return g


def _leaky(f):
    def g(u):
        return f(u) + 0.01 * (u - f(u))      # sigma(u) + 0.01 min(u, 0): points of S^- no longer collapse
    return g


def _tau_beta_off(f):
    def g(R, beta, X):
        return f(R, beta + 1e-3, X)
    return g


def _comm_wrong_complement(f):
    def g(p, seed=None):
        H, M, Hp = f(p, seed)
        # H^perp = 1.1 I - H instead of I - H: the right-hand side becomes 1.1 [H, M].  (The identity itself
        # holds for every H, since H M (I - H) - (I - H) M H = H M - M H, so only the complement can be mutated.)
        return H, M, Hp + 0.1 * np.eye(p.Q)
    return g


def _mom_strict_count(f):
    def g(R, beta, X, yt, count=None, xp=None):
        # the wall example of the falsifier strict_count, counted with '<' on the backend under test
        return f(np.eye(2), np.zeros(2), np.array([[0.0, 1.0], [1.0, -1.0]]), np.zeros(2), count=lambda U: U < 0, xp=xp)
    return g


class _LambdaMax:
    """An array namespace whose eigvalsh lists the eigenvalues in decreasing order: lambda_min read as lambda_max."""
    def __init__(self, xp):
        self._xp = xp
        self.linalg = SimpleNamespace(matrix_norm=xp.linalg.matrix_norm,
                                      eigvalsh=lambda A: xp.flip(xp.linalg.eigvalsh(A), axis=-1),
                                      svdvals=lambda A: xp.flip(xp.linalg.svdvals(A), axis=-1))

    def __getattr__(self, name):
        return getattr(self._xp, name)


def _lambda_max(f):
    return lambda p: _LambdaMax(f(p))


class _ForAll:
    """An array namespace whose ``any`` is ``all``: 'some point is truncated' read as 'every point is'."""
    def __init__(self, xp):
        self._xp = xp
        self.any = xp.all

    def __getattr__(self, name):
        return getattr(self._xp, name)


# claim id -> (second parameter set, planted error: (module, attribute, wrapper))
CASES = {
    "chen.cumulative_parameters": ({"Q": 4, "L": 2, "N": 7, "seed": 3}, (xc, "per_layer", _per_layer_biases_off)),
    "chen.truncation_forms": ({"Q": 4, "L": 2, "N": 7, "seed": 3, "batch": 16}, (xc, "tau_forms", _forms_third_off)),
    "chen.truncation_sectors": ({"Q": 4, "L": 1, "N": 6, "seed": 5, "wall": 0.5}, (xc, "relu", _leaky)),
    "chen.hidden_layers": ({"Q": 4, "L": 2, "N": 7, "seed": 3},
                           (sec2_model, "_hid_outcome", lambda f: functools.partial(f, printed=True))),
    "chen.output_layer": ({"Q": 4, "L": 2, "N": 7, "seed": 3},
                          (sec2_model, "_out_outcome", lambda f: functools.partial(f, zero_bias=True))),
    "chen.pullback_cost": ({"Q": 4, "L": 2, "N": 7, "seed": 3, "clusters": 3},
                           (sec2_1, "_pb_outcome", lambda f: functools.partial(f, zero_bias=True))),
    "chen.gauge_invariance": ({"Q": 4, "L": 2, "N": 7, "seed": 3},
                              (sec2_1, "_gauge_outcome", lambda f: lambda p, A: f(p, A + 0.3 * np.triu(np.ones_like(A), 1)))),
    "chen.reparametrisation": ({"Q": 4, "L": 3, "N": 7, "seed": 3}, (xc, "cost_composed", _shift(1e-6))),
    "chen.alignment": ({"Q": 4, "N": 9, "seed": 3}, (xc, "tau", _tau_beta_off)),
    "chen.cluster_separation": ({"Q": 3, "clusters": 2, "layers": 3, "points_per_cluster": 8, "seed": 4},
                                (xc, "compose", _shift(1e-6))),
    "chen.bias_variance": ({"Q": 3, "clusters": 2, "layers": 3, "points_per_cluster": 8, "seed": 4},
                           (sec3_1, "_bv_outcome", lambda f: functools.partial(f, with_variance=False))),
    "chen.commutator_identity": ({"Q": 6, "seed": 9, "batch": 64}, (sec3_2b, "_comm_case", _comm_wrong_complement)),
    "chen.sector_moments": ({"Q": 4, "N": 10, "seed": 3}, (sec3_3, "_mom_parts", _mom_strict_count)),
    "chen.corollary_3_5": ({"Q": 4, "N": 10, "seed": 3},
                           (sec3_3, "_cor_outcome", lambda f: lambda p, form: f(p, "printed"))),
    "chen.collapsed_reduction": ({"Q": 2, "points": 6, "seed": 3},
                                 (sec8, "_sec8a", lambda f: lambda p, stated: f(p, True))),
    "chen.toy_error_equation": ({"Q": 4, "seed": 3, "T": 1.0, "batch": 16},
                                (sec8, "_sec8b", lambda f: lambda p, swapped: f(p, True))),
    "chen.lemma_8_2": ({"Q": 4, "seed": 7, "zero_A": False}, (sec8_1, "xp_of", _lambda_max)),
    "chen.untruncated_reduction": ({"Q": 4, "points": 2, "seed": 5},
                                   (sec9, "_sec9a", lambda f: lambda p, truncate: f(p, True))),
    "chen.class_frozen_coordinate": ({"Q": 4, "N": 9, "seed": 3},
                                     (sec4_3, "_frz", lambda f: lambda p, truncate_one: f(p, True))),
    "chen.lemma_7_1": ({"Q": 4, "points": 5, "seed": 3}, (sec5, "_l71", lambda f: lambda p: f(p, wrong=True))),
    "chen.theorem_5_1_support": ({"Q": 3, "samples": 2000, "seed": 4},
                                 (sec5, "_t51d", lambda f: lambda p, printed: f(p, True))),
    "chen.partial_truncation_condition": ({"Q": 4, "N": 9, "seed": 3},
                                          (sec4_2, "xp_of", lambda f: lambda p: _ForAll(f(p)))),
}


def test_every_converted_claim_offers_the_array_api():
    for cid in CASES:
        assert _numeric(cid).backends == ("numpy", "cupy", "array_api_strict"), cid


@pytest.mark.parametrize("cid", sorted(CASES))
def test_strict_agrees_with_numpy_on_a_second_parameter_set(cid):
    given, _ = CASES[cid]
    check = _numeric(cid)
    ref, got = (run_check(check, given, backend=b) for b in BACKENDS)
    assert ref["verdict"] == check.expect == got["verdict"], (cid, ref["message"], got["message"])
    assert abs(got["residual"] - ref["residual"]) <= ref["tolerance"], (cid, ref["residual"], got["residual"])


@pytest.mark.parametrize("cid", sorted(CASES))
def test_a_planted_error_is_refuted_on_both_backends(cid, monkeypatch):
    given, (obj, name, wrap) = CASES[cid]
    _patch(monkeypatch, obj, name, wrap)
    check = _numeric(cid)
    for b in BACKENDS:
        rec = run_check(check, given, backend=b)
        assert rec["verdict"] == "refuted", (cid, b, rec["verdict"], rec["message"])
