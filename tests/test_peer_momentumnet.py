"""solvers.momentum against the Momentum ResNet authors' own code (michaelsdr/momentumnet ``MomentumNet`` and
``TorchExactRep.rational_mul``; golden outputs copied from ../shared/peers/momentumnet.json into
tests/data/peer_momentumnet.json: the L = 8 cases, one L = 23 case, every rational_mul case), with the conventions and
tolerances that file explains: update (4.2) with the same gamma, f(x) = W2[n]^T tanh(W1[n] x + b[n]), forward at
8 L eps (float64 and float32), gradients at 32 L eps against backpropagation through stored activations, exact
multiplication bit for bit.  The peer's rational_mul is wrong on negative values (truncating division): the project's
floor-division Algorithm 1 must differ from it there and invert exactly."""
import json
from pathlib import Path

import numpy as np
import pytest

from solvers import momentum as mom

DATA = json.loads((Path(__file__).parent / "data" / "peer_momentumnet.json").read_text())
EPS64 = float(np.finfo(np.float64).eps)
EPS32 = float(np.finfo(np.float32).eps)


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float))) / np.max(np.abs(np.asarray(b, float))))


def _net(case, dtype=np.float64):
    return tuple(np.array(case[k], dtype=dtype) for k in ("x0", "v0", "W1", "W2", "b"))


@pytest.mark.parametrize("case", DATA["forward"], ids=lambda c: f"L{c['L']}-d{c['d']}-p{c['p']}-s{c['seed']}")
def test_forward_and_gradients_match_peer(case):
    L = case["L"]
    x0, v0, W1, W2, b = _net(case)
    gx = np.array(case["gx"])
    for out in case["outputs"]:
        g = out["gamma"]
        xL, _ = mom.forward_numpy(x0, v0, g, W1, W2, b)
        assert _rel(xL, out["xL"]) <= 8 * L * EPS64, g
        x32 = mom.forward_numpy(*(a.astype(np.float32) for a in (x0, v0)), g,
                                *(a.astype(np.float32) for a in (W1, W2, b)))[0]
        assert x32.dtype == np.float32
        assert _rel(x32, out["xL_float32"]) <= 8 * L * EPS32, g
        grads = mom.backprop(x0, v0, g, W1, W2, b, gx, np.zeros_like(gx), recompute=False)
        assert _rel(grads["x0"], out["grad_x0"]) <= 32 * L * EPS64, g
        if "grad_v0" in out:
            assert _rel(grads["v0"], out["grad_v0"]) <= 32 * L * EPS64, g


@pytest.mark.parametrize("case", DATA["rational_mul"], ids=lambda c: f"gamma{c['gamma']}")
def test_rational_mul_matches_peer_bit_for_bit(case):
    """Algorithm 1 (solvers.momentum.rmul, floor division) on non-negative integers, where the peer's truncating
    division agrees: values and buffers after steps 1, 2, 5, 20, and the exact round trip."""
    n, d = case["n"], case["d"]
    c = np.array(case["value0"], dtype=object)
    i = np.array(case["buffer0"], dtype=object)
    for step in range(1, 21):
        c, i = mom.rmul(c, i, n, d)
        saved = case["after_steps"].get(str(step))
        if saved is not None:
            assert [int(z) for z in c] == saved["value"], step
            assert [int(z) for z in i] == saved["buffer"], step
    for _ in range(20):
        c, i = mom.rmul_inverse(c, i, n, d)
    back = case["after_20_steps_then_20_inverse_steps"]
    assert [int(z) for z in c] == back["value"] == case["value0"]
    assert [int(z) for z in i] == back["buffer"]


@pytest.mark.parametrize("case", DATA["defect_examples"]["rational_mul_negative"]["cases"],
                         ids=lambda c: f"gamma{c['gamma']}")
def test_negative_values_differ_from_the_defective_peer(case):
    """Not reference data: the peer's truncating quotient breaks the round trip on negative values; the project's
    floor-division Algorithm 1 gives the file's Algorithm-1 values, differs from the peer's, and inverts exactly."""
    n, d = case["n"], case["d"]
    c0 = np.array(case["value0"], dtype=object)
    c, i = mom.rmul(c0, np.array(case["buffer0"], dtype=object), n, d)
    assert [int(z) for z in c] == case["algorithm1_floor_after_one_step"]["value"]
    assert [int(z) for z in i] == case["algorithm1_floor_after_one_step"]["buffer"]
    assert [int(z) for z in c] != case["peer_after_one_step"]["value"]
    cb, ib = mom.rmul_inverse(c, i, n, d)
    assert [int(z) for z in cb] == case["value0"] and all(int(z) == 0 for z in ib)
    assert case["peer_after_inverse_step"]["value"] != case["value0"]
