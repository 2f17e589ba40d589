"""Command-line behaviour of the sander RevNet / first-order-flow claims (theorems/sander/
ch4_3_3a_revnet_fixed_points.py, ch4_appB5_B7_first_order.py)."""
import json

import numpy as np
import pytest

from theorems.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_singular_A_is_inconclusive_not_refuted(capsys):
    code, out, _ = run(capsys, "check", "sander.revnet_instability", "--json",
                       "--param", "A=[[0,0],[0,0]]", "--param", "B=[[1,0],[0,1]]")
    rec = json.loads(out)
    assert code == 1 and rec["verdict"] == "inconclusive"
    assert "hypothesis" in rec["message"] and "A, B invertible" in rec["message"]
    assert rec["values"]["weakened_hypothesis"]["AB_not_nilpotent"] is False


def test_singular_A_with_AB_not_nilpotent_reports_the_sharp_condition(capsys):
    # catalogue P4.1(d): A = diag(1, 0) (singular), B = diag(-.3, .7): lambda = 0.85 +- 0.527i, |lambda| = 1
    code, out, _ = run(capsys, "check", "sander.revnet_instability", "--json",
                       "--param", "A=[[1,0],[0,0]]", "--param", "B=[[-0.3,0],[0,0.7]]")
    rec = json.loads(out)
    assert code == 1 and rec["verdict"] == "inconclusive"
    wh = rec["values"]["weakened_hypothesis"]
    assert wh["AB_not_nilpotent"] and wh["conclusion_holds"]
    lam = np.array([complex(*z) for z in rec["values"]["eigenvalues"]])
    assert np.any(np.abs(lam - complex(0.85, 0.5268)) < 1e-3)


def test_default_certifies_with_values(capsys):
    code, out, _ = run(capsys, "check", "sander.revnet_instability", "--json", "--param", "seed=7", "--param", "d=4")
    rec = json.loads(out)
    assert code == 0 and rec["verdict"] == "certified"
    v = rec["values"]
    assert v["max_modulus"] >= 1 - v["eig_tolerance"]
    assert abs(v["det_J"] - 1) < 1e-10 and len(v["eigenvalues"]) == 8


def test_elliptic_instance_certifies_with_modulus_one(capsys):
    code, out, _ = run(capsys, "check", "sander.revnet_instability", "--json",
                       "--param", "A=[[1,0],[0,1]]", "--param", "B=[[-0.5,0],[0,-2.4]]")
    rec = json.loads(out)
    assert code == 0 and rec["values"]["elliptic_all_modulus_1"]
    assert abs(rec["values"]["max_modulus"] - 1) < 1e-12


@pytest.mark.parametrize("args, needle", [
    (("--param", "A=[[1,2,3],[0,1,1]]"), "square"),
    (("--param", "A=[[1,2],[0,1]]", "--param", "B=[[1]]"), "same shape"),
    (("--param", "A=[1,2]"), "matrix"),
    (("--param", "d=0"), "out of range"),
])
def test_bad_input_exit_2(capsys, args, needle):
    code, _, err = run(capsys, "check", "sander.revnet_instability", *args)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


def test_falsifier_variants_exit_1(capsys):
    for variant in ("A_zero", "nilpotent_AB"):
        code, out, _ = run(capsys, "check", "sander.revnet_instability", "--variant", variant, "--json")
        rec = json.loads(out)
        assert code == 1 and rec["verdict"] == "refuted"
        assert rec["values"]["max_modulus"] == 0.0       # no eigenvalue other than 1


@pytest.mark.parametrize("cid", ["sander.revnet_not_asymptotically_stable", "sander.autonomous_time1_linearity"])
def test_errata_stated_exit_1_corrected_exit_0(capsys, cid):
    code, out, _ = run(capsys, "check", cid, "--variant", "stated", "--json")
    assert code == 1 and json.loads(out)["verdict"] == "refuted"
    code, out, _ = run(capsys, "check", cid, "--json")
    assert code == 0 and json.loads(out)["verdict"] == "certified"


def test_time1_linearity_bad_b(capsys):
    code, _, err = run(capsys, "check", "sander.autonomous_time1_linearity", "--param", "b=0.01")
    assert code == 2 and "parameter b" in err
