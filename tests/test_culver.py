"""sander.culver_exp_range: the real logarithm of a D whose repeated negative eigenvalue comes out of LAPACK
as two close reals OR as a conjugate pair -a +- i O(u) (which one depends on the rounding, e.g. the BLAS
kernel: OPENBLAS_CORETYPE=Sandybridge split the draw d=5, seed=126 into a pair and T went singular)."""
import json

import numpy as np
import pytest
import scipy.linalg as sla

from theorems.cli import main
from theorems.sander import ch4_4_3b_culver as psi

DELTA = 2.0 ** -50


def _D(sign):
    """[[-1, DELTA], [sign DELTA, -1]] + [2]: entries exact in float64, eigenvalues -1 +- DELTA (sign = +1) or
    -1 +- i DELTA (sign = -1), both within Culver's 1e-6 pairing of the double eigenvalue -1."""
    return sla.block_diag([[-1.0, DELTA], [sign * DELTA, -1.0]], [[2.0]])


@pytest.mark.parametrize("sign,split", [(-1, "conjugate pair"), (1, "two reals")])
def test_real_log_of_a_split_negative_double_eigenvalue(capsys, sign, split):
    D = _D(sign)
    w = np.linalg.eigvals(D)
    assert bool(np.max(np.abs(w.imag)) > 0) is (sign < 0), split         # the split the test is about
    X, condT = psi._real_log(D)
    assert X is not None and np.isrealobj(X) and condT < 1 + 1e-12     # orthonormal basis of the eigenspace
    code = main(["check", "sander.culver_exp_range", "--json", "--param", "D=" + json.dumps(D.tolist())])
    rec = json.loads(capsys.readouterr().out)
    assert code == 0 and rec["verdict"] == "certified", rec["message"]
    assert rec["residual"] <= rec["tolerance"]


def test_real_log_of_repeated_eigenvalues(capsys):
    """-I_4 (two pairs at -1 in one cluster) and a triple positive eigenvalue: the cluster's invariant subspace gets
    one orthonormal basis and the claim certifies expm(X) = D; a negative eigenvalue of multiplicity 3 and a Jordan
    block are reported (no logarithm), not logged as lam I."""
    S = np.array([[2.0, 1, 0, 0], [1, 2, 1, 0], [0, 1, 2, 1], [0, 0, 1, 2]])
    for D in (-np.eye(4), S @ np.diag([3.0, 3.0, 3.0, 0.5]) @ np.linalg.inv(S)):
        code = main(["check", "sander.culver_exp_range", "--json", "--param", "D=" + json.dumps(D.tolist())])
        rec = json.loads(capsys.readouterr().out)
        assert code == 0 and rec["verdict"] == "certified", rec["message"]
    assert "odd multiplicity 3" in psi._real_log(np.diag([-1.0, -1.0, -1.0, 2.0]))[1]
    assert "not diagonalisable" in psi._real_log(np.array([[-1.0, 1.0], [0.0, -1.0]]))[1]
