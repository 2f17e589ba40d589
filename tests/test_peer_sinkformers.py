"""solvers.sinkhorn against the authors' own Sinkformer routine (michaelsdr/sinkformers ``SinkhornDistance``; golden
outputs copied from ../shared/peers/sinkformers.json into tests/data/peer_sinkformers.json, n = 5 and the n = 16,
logit_scale 4 cases), with the conventions and tolerances that file explains: the peer's ``max_iter`` counts half
steps (rows first), its plan is ``peer_mass x K^l`` of the logits / eps with ``peer_mass`` = exp(float32(log(1/n)))
(divide by it, do not multiply by n), and it stops on a potential-change rule (the converged group: compare at the
marginal residuals of both runs)."""
import json
from pathlib import Path

import numpy as np
import pytest

from solvers import sinkhorn as sk

DATA = json.loads((Path(__file__).parent / "data" / "peer_sinkformers.json").read_text())
EPS = float(np.finfo(float).eps)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("case", DATA["fixed_half_steps"],
                         ids=lambda c: f"n{c['n']}-eps{c['eps']}-scale{c['logit_scale']}-s{c['seed']}")
def test_half_steps_match_peer(case):
    """K^l of (5.3) (solvers.sinkhorn.half_steps_numpy, l alternate log-domain normalisations, rows first) against the
    peer's plans[l] / peer_mass: relative max-norm <= 16 l n eps (l log-sum-exp normalisations of n terms)."""
    n, mass = case["n"], case["peer_mass"]
    for b, logits in enumerate(case["logits"]):
        C = np.array(logits) / case["eps"]
        for l, plans in case["plans"].items():
            K = sk.half_steps_numpy(C, int(l))
            peer = np.array(plans[b]) / mass
            assert _rel(K, peer) <= 16 * int(l) * n * EPS, (b, l)


def test_half_step_one_is_the_row_softmax():
    """l = 1 (one row normalisation) is the row SoftMax of logits / eps (the Transformer's attention)."""
    case = DATA["fixed_half_steps"][0]
    C = np.array(case["logits"][0]) / case["eps"]
    peer = np.array(case["plans"]["1"][0]) / case["peer_mass"]
    assert _rel(sk.softmax_rows(C), peer) <= 16 * case["n"] * EPS


@pytest.mark.parametrize("case", DATA["converged"],
                         ids=lambda c: f"n{c['n']}-eps{c['eps']}-scale{c['logit_scale']}-s{c['seed']}")
def test_converged_plan_matches_peer(case):
    """K^inf (solvers.sinkhorn.sinkhorn to 1e-14) against the peer's converged plan / peer_mass: relative
    <= n (r_peer + c_peer + r_ours + c_ours) + 64 n eps (both are doubly stochastic only to their marginal residuals)."""
    n, mass = case["n"], case["peer_mass"]
    for b, logits in enumerate(case["logits"]):
        r = sk.sinkhorn(np.array(logits) / case["eps"], tol=1e-14, max_iter=100_000)
        assert r.converged
        ours = sk.row_col_errors(r.K)
        peer = np.array(case["plan"][b]) / mass
        rp, cp = case["marginal_residuals"][b]
        tol = n * (rp + cp + ours[0] + ours[1]) + 64 * n * EPS
        assert _rel(r.K, peer) <= tol, b


def test_peer_mass_is_not_one_over_n():
    """The convention the file warns about: n x plan differs from K^l by ~1e-7 relative (float32 log(1/n)), far above
    the half-step tolerance, so the tests divide by peer_mass."""
    case = DATA["fixed_half_steps"][0]
    C = np.array(case["logits"][0]) / case["eps"]
    K = sk.half_steps_numpy(C, 2)
    peer = np.array(case["plans"]["2"][0])
    assert _rel(K, case["n"] * peer) > 1e3 * 16 * 2 * case["n"] * EPS
    assert _rel(K, peer / case["peer_mass"]) <= 16 * 2 * case["n"] * EPS
