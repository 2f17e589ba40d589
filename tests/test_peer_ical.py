"""The in-context loss of sander ch. 6 against the authors' own routines (michaelsdr/ical ``orthogonal.loss_function``
and ``unitary.loss_function``; golden values copied from ../shared/peers/ical.json into tests/data/peer_ical.json), with
the tolerance that file explains: |diff| <= 64 eps (1 + |C|_1^2 |p|_1^2 + d), and N^d eps times that scale for an
expectation computed by quadrature on the N-th roots of unity.  The peer's unitary loss is Prop 6.8 as printed, which
counts the j = k term at t = t' = T-1 twice (erratum E6.2): the project's printed formula must match it, and the exact
loss (quadrature, and the corrected formula) must differ from it by p_{T-1}^2 |C|_F^2."""
import json
from pathlib import Path

import numpy as np
import pytest

from theorems.sander._attention import _corrected_68, _loss_plain, _printed_68, _torus, _torus_orth

DATA = json.loads((Path(__file__).parent / "data" / "peer_ical.json").read_text())
EPS = float(np.finfo(float).eps)
MAX_POINTS = 100_000          # quadrature grids above this are left to the closed forms


def _scale(C, p, d):
    return 1 + float(np.sum(np.abs(C))) ** 2 * float(np.sum(np.abs(p))) ** 2 + d


def _ids(c):
    return f"d{c['d']}-T{c['T']}-s{c['seed']}"


@pytest.mark.parametrize("case", DATA["groups"]["unitary_loss_function"]["cases"], ids=_ids)
def test_printed_prop68_matches_peer_unitary(case):
    """Prop 6.8 as printed (the project's _printed_68) is the peer's unitary.loss_function, to 64 eps x scale."""
    C, p, d, T = np.array(case["C"]), np.array(case["p"]), case["d"], case["T"]
    assert abs(_printed_68(C, p, T) - case["loss"]) <= 64 * EPS * _scale(C, p, d)


@pytest.mark.parametrize("case", DATA["groups"]["unitary_loss_function"]["cases"], ids=_ids)
def test_exact_unitary_loss_is_peer_minus_double_count(case):
    """E6.2: the exact loss (corrected formula; and the quadrature where its grid is small) is the peer's value minus
    p_{T-1}^2 |C|_F^2, and differs from the peer's value wherever that term is above the tolerance."""
    C, p, d, T = np.array(case["C"]), np.array(case["p"]), case["d"], case["T"]
    tol = 64 * EPS * _scale(C, p, d)
    double = p[T - 2] ** 2 * float(np.sum(C * C))
    assert abs(_corrected_68(C, p, T) - (case["loss"] - double)) <= tol
    N = 4 * T + 2
    if N ** d <= MAX_POINTS:
        exact = _loss_plain(C, p, T, _torus(d, N))
        assert abs(exact - (case["loss"] - double)) <= 64 * N ** d * EPS * _scale(C, p, d)
        if double > 64 * N ** d * EPS * _scale(C, p, d):
            assert abs(exact - case["loss"]) > tol     # the peer (the printed formula) is wrong here


@pytest.mark.parametrize("case", DATA["groups"]["orthogonal_loss_function"]["cases"], ids=_ids)
def test_orthogonal_loss_matches_peer(case):
    """The exact orthogonal-context loss (quadrature over conjugate pairs, _torus_orth) is the peer's
    orthogonal.loss_function (exact), to 64 N^(d/2) eps x scale; grids above 1e5 points are skipped."""
    C, p, d, T = np.array(case["C"]), np.array(case["p"]), case["d"], case["T"]
    N = 4 * T + 2
    if N ** (d // 2) > MAX_POINTS:
        pytest.skip(f"quadrature grid {N}^{d // 2} too large")
    L = _loss_plain(C, p, T, _torus_orth(d // 2, N))
    assert abs(L - case["loss"]) <= 64 * N ** (d // 2) * EPS * _scale(C, p, d)


@pytest.mark.parametrize("case", DATA["defect_examples"]["unitary_double_count"]["cases"],
                         ids=lambda c: f"d{c['d']}")
def test_peer_defect_double_count(case):
    """The file's defect examples (not reference data): C = [[1]] or I_2, p = (1, 1), T = 2: the exact loss is 1 or 2,
    the printed formula (peer) gives twice that; the project's quadrature gives the exact value."""
    C, p, d, T = np.array(case["C"]), np.array(case["p"]), case["d"], case["T"]
    exact = _loss_plain(C, p, T, _torus(d, 4 * T + 2))
    assert exact == pytest.approx(case["exact_loss"], abs=1e-12)
    assert _printed_68(C, p, T) == pytest.approx(case["peer_loss"], abs=1e-12)
    assert _corrected_68(C, p, T) == pytest.approx(case["exact_loss"], abs=1e-12)
