"""The command line contract: list, check, exit codes, and every bad-input path (one line, exit 2)."""
import json

import pytest

from theorems.cli import main
from theorems.record import validate_record


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_json_has_the_fixed_claim_with_a_falsifier(capsys):
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    claims = {c["id"]: c for c in json.loads(out)}
    c = claims["menon.balanced_invariance"]
    assert c["status"] == "holds" and c["document"] == "menon"
    assert "falsifier" in [k["kind"] for k in c["checks"]]
    assert c["location"]["lines"] == [211, 223]


def test_list_text_and_document_filter(capsys):
    code, out, _ = run(capsys, "list", "--document", "menon")
    assert code == 0 and "menon.balanced_invariance" in out
    code, out, _ = run(capsys, "list", "--document", "jacot")
    assert code == 0 and "menon." not in out


def test_check_certifies_and_prints_a_valid_record(capsys):
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--json")
    rec = json.loads(out)
    validate_record(rec)
    assert code == 0 and rec["verdict"] == "certified" and "max_drift" in rec["values"]
    assert rec["values"]["max_drift"] <= rec["tolerance"]


def test_check_numba_backend_agrees_with_numpy(capsys):
    _, out1, _ = run(capsys, "check", "menon.balanced_invariance", "--json", "--param", "seed=3")
    code, out2, _ = run(capsys, "check", "menon.balanced_invariance", "--json", "--param", "seed=3",
                        "--backend", "numba")
    r1, r2 = json.loads(out1), json.loads(out2)
    assert code == 0 and r2["backend"] == "numba"
    assert r1["values"]["n_steps"] == r2["values"]["n_steps"]


def test_falsifier_variant_exits_1_with_counterexample(capsys):
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--variant", "per_layer_rates", "--json")
    rec = json.loads(out)
    assert code == 1 and rec["verdict"] == "refuted" and rec["check"] == "falsifier"
    assert rec["counterexample"]["params"]["seed"] == 0


def test_user_matrix_and_params_file(tmp_path, capsys):
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--json", "--param", "widths=[2,3,1,2]")
    assert code == 0 and json.loads(out)["values"]["widths"] == [2, 3, 1, 2]
    f = tmp_path / "rec.json"
    f.write_text(out)  # a saved result record replays its parameters
    code, out2, _ = run(capsys, "check", "menon.balanced_invariance", "--json", "--params-file", str(f))
    assert code == 0 and json.loads(out2)["params"] == json.loads(out)["params"]


@pytest.mark.parametrize("argv, needle", [
    (["check", "menon.no_such_claim"], "unknown claim id 'menon.no_such_claim'"),
    (["check", "menon.balanced_invariance", "--param", "d=0"], "parameter d=0 is out of range [1, 8]"),
    (["check", "menon.balanced_invariance", "--param", "foo=1"], "unknown parameter 'foo'"),
    (["check", "menon.balanced_invariance", "--param", "T=[1,"], "not valid JSON"),
    (["check", "menon.balanced_invariance", "--param", "T=NaN"], "NaN"),
    (["check", "menon.balanced_invariance", "--param", "T=Infinity"], "rejected"),
    (["check", "menon.balanced_invariance", "--param", "T=-1"], "out of range"),
    (["check", "menon.balanced_invariance", "--param", "d=2.5"], "must be an integer"),
    (["check", "menon.balanced_invariance", "--param", "d"], "NAME=VALUE"),
    (["check", "menon.balanced_invariance", "--param", "energy=cubic"], "is not one of"),
    (["check", "menon.balanced_invariance", "--param", "widths=[[1,2]]"], "must be a non-empty vector"),
    (["check", "menon.balanced_invariance", "--param", "widths=[2,0,2]"], "widths must be integers in [1, 8]"),
    (["check", "menon.balanced_invariance", "--variant", "nonsense"], "unknown variant 'nonsense'"),
    (["check", "menon.balanced_invariance", "--backend", "tpu"], "unknown backend 'tpu'"),
    (["check", "menon.balanced_invariance", "--backend", "mpmath"], "does not offer backend 'mpmath'"),
    (["check", "menon.balanced_invariance", "--params-file", "/nonexistent.json"], "not found"),
    (["list", "--document", "nope"], "unknown document 'nope'"),
    (["certify", "--profile", "nope"], "unknown profile 'nope'"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run_exit(capsys, argv)
    assert code == 2, (argv, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert needle in lines[0], lines[0]
    assert "Traceback" not in err


def run_exit(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cupy_backend_unavailable_is_bad_input(capsys, monkeypatch):
    import solvers.xp as sx
    monkeypatch.setattr(sx, "cupy_available", lambda: (False, "CuPy is not installed"))
    from theorems.registry import get_claim
    chk = get_claim("menon.balanced_invariance").check("numeric")
    monkeypatch.setattr(chk, "backends", ("numpy", "numba", "cupy"))
    code, _, err = run_exit(capsys, ["check", "menon.balanced_invariance", "--backend", "cupy"])
    assert code == 2 and "backend 'cupy' is unavailable" in err


def test_bad_params_file_json(tmp_path, capsys):
    f = tmp_path / "p.json"
    f.write_text("{not json")
    code, _, err = run_exit(capsys, ["check", "menon.balanced_invariance", "--params-file", str(f)])
    assert code == 2 and "not valid JSON" in err
    f.write_text("[1, 2]")
    code, _, err = run_exit(capsys, ["check", "menon.balanced_invariance", "--params-file", str(f)])
    assert code == 2 and "must hold a JSON object" in err


def test_python_dash_m_is_the_same_program():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "theorems", "check", "menon.balanced_invariance", "--param", "d=0"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "out of range" in r.stderr


def test_certify_writes_results_json(tmp_path):
    """`theorems certify` runs the checks through pytest and writes records with run metadata."""
    import subprocess
    import sys
    out = tmp_path / "cert"
    r = subprocess.run([sys.executable, "-m", "theorems", "certify", "--out", str(out),
                        "--document", "menon", "--select", "balanced_invariance"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "[1/" in r.stdout and "failures so far: 0" in r.stdout  # progress display
    data = json.loads((out / "results.json").read_text())
    assert set(data["meta"]["versions"]) >= {"numpy", "scipy", "sympy", "numba", "hypothesis"}
    assert data["meta"]["profile"] == "ci"
    for rec in data["records"]:
        validate_record(rec)
    kinds = {r["check"] for r in data["records"]}
    assert kinds >= {"symbolic", "numeric", "property", "falsifier"}
    assert data["summary"]["total"]["certified"] == 1 and data["summary"]["total"]["falsifiers_caught"] >= 4


def test_readme_claim_table_lists_every_claim(capsys):
    """The README's claim table is generated by `theorems list --markdown`; it must not go stale."""
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code, out, _ = run(capsys, "list", "--json")
    missing = [c["id"] for c in json.loads(out) if f"`{c['id']}`" not in readme]
    assert not missing, f"README claim table lacks {missing}: regenerate with `theorems list --markdown`"


def test_user_layers_and_target(capsys):
    """A researcher's own layers (paper order [W_N, ..., W_1]) and target, rectangular."""
    layers = '[[[1,0.5,0],[0.2,1,0.3]],[[0.4,1],[1,-0.3],[0.1,0.2]]]'  # W_2: 2x3, W_1: 3x2
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--json", "--param", f"layers={layers}",
                       "--param", "Y=[[1,0],[0,1]]")
    rec = json.loads(out)
    assert code == 0 and rec["values"]["widths"] == [2, 3, 2]
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--variant", "per_layer_rates", "--json",
                       "--param", f"layers={layers}")
    assert code == 1 and json.loads(out)["verdict"] == "refuted"


@pytest.mark.parametrize("argv, needle", [
    (["--param", "layers=[[[1,2]],[[1,2]]]"], "do not chain"),
    (["--param", "layers=[[[1,2]]]"], "at least two matrices"),
    (["--param", "layers=[[[1,NaN]],[[1]]]"], "NaN"),
    (["--param", "layers=[1,2]"], "must be a non-empty matrix"),
    (["--param", "Y=[[1,2]]"], "parameter Y has shape (1, 2)"),
])
def test_bad_layers_are_bad_input(capsys, argv, needle):
    code, _, err = run_exit(capsys, ["check", "menon.balanced_invariance", *argv])
    assert code == 2 and len(err.strip().splitlines()) == 1 and needle in err, err
