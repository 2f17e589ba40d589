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


# --- replay: --params-file runs the claim, check, variant and backend the file records ------------
ERRATUM = "jacot.coi_equals_rank"  # an erratum whose printed form is the falsifier 'stated'


def test_saved_falsifier_record_replays_refuted(tmp_path, capsys):
    code, out, _ = run(capsys, "check", ERRATUM, "--variant", "stated", "--json")
    saved = json.loads(out)
    assert code == 1 and saved["verdict"] == "refuted" and saved["check"] == "falsifier"
    f = tmp_path / "cex.json"
    f.write_text(out)
    code, out, err = run(capsys, "check", ERRATUM, "--params-file", str(f), "--json")
    rec = json.loads(out)  # stdout is the record alone; the replay line goes to stderr
    validate_record(rec)
    assert code == 1 and rec["verdict"] == "refuted"
    assert (rec["check"], rec["variant"]) == ("falsifier", "stated")
    assert rec["params"] == saved["counterexample"]["params"]
    assert f"replaying {ERRATUM} falsifier[stated] on numpy from {f}" in err
    code, out, _ = run(capsys, "check", ERRATUM, "--params-file", str(f))
    assert code == 1 and out.startswith(f"replaying {ERRATUM} falsifier[stated]") and "REFUTED" in out
    # the command line overrides the recorded variant, and says so
    code, out, _ = run(capsys, "check", ERRATUM, "--params-file", str(f), "--variant", "corrected")
    assert code == 0 and "numeric[corrected]" in out.splitlines()[0] and "the file records stated" in out


def test_menon_falsifier_record_replays_and_property_record_runs_numeric(tmp_path, capsys):
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--variant", "per_layer_rates",
                       "--param", "seed=4", "--json")
    assert code == 1
    f = tmp_path / "r.json"
    f.write_text(out)
    code, out, _ = run(capsys, "check", "menon.balanced_invariance", "--params-file", str(f), "--json")
    rec = json.loads(out)
    assert code == 1 and rec["variant"] == "per_layer_rates" and rec["params"]["seed"] == 4
    # a failing property draw replays through the numeric check at the drawn parameters
    prop = {"claim": "menon.balanced_invariance", "check": "property", "variant": "stated", "verdict": "refuted",
            "params": {"seed": 0}, "counterexample": {"params": {"seed": 5, "T": 0.3}}}
    f.write_text(json.dumps(prop))
    code, out, err = run(capsys, "check", "menon.balanced_invariance", "--params-file", str(f), "--json")
    rec = json.loads(out)
    assert code == 0 and rec["check"] == "numeric" and rec["params"]["seed"] == 5 and rec["params"]["T"] == 0.3
    assert "note: the file records refuted, this run gives certified" in err


def test_record_of_another_claim_is_bad_input(tmp_path, capsys):
    code, out, _ = run(capsys, "check", ERRATUM, "--variant", "stated", "--json")
    f = tmp_path / "cex.json"
    f.write_text(out)
    code, out, err = run_exit(capsys, ["check", "jacot.gamma_p_scaling", "--params-file", str(f)])
    assert code == 2 and err.count("\n") == 1 and "was recorded for 'jacot.coi_equals_rank'" in err and not out


def test_recorded_backend_not_offered_falls_back_to_numpy(tmp_path, capsys):
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"claim": ERRATUM, "check": "numeric", "variant": "corrected",
                             "params": {"seed": 1}, "backend": "numba"}))
    code, out, err = run(capsys, "check", ERRATUM, "--params-file", str(f), "--json")
    assert code == 0 and json.loads(out)["backend"] == "numpy"
    assert "the recorded backend 'numba' cannot run here" in err and "running numpy" in err
    code, _, err = run_exit(capsys, ["check", ERRATUM, "--params-file", str(f), "--backend", "numba"])
    assert code == 2 and "does not offer backend 'numba'" in err  # given on the command line: no fallback


@pytest.mark.parametrize("content, needle", [
    ({"claim": ERRATUM, "variant": "nonesuch", "params": {}}, "records variant 'nonesuch'"),
    ({"claim": ERRATUM, "check": "numeric", "variant": "stated", "params": {}}, "records numeric[stated]"),
    ({"claim": ERRATUM, "check": "symbolic", "variant": "corrected", "params": {}}, "symbolic check"),
    ({"claim": ERRATUM, "params": [1, 2]}, "must be an object of parameters"),
    ({"claim": ERRATUM, "params": {}, "counterexample": {"params": [1]}}, "counterexample's 'params' must be"),
    ({"claim": ERRATUM, "params": {}, "counterexample": [1]}, "'counterexample' must be an object"),
    ({"claim": 7, "params": {}}, "field 'claim' must be a string"),
])
def test_malformed_records_are_bad_input(tmp_path, capsys, content, needle):
    f = tmp_path / "r.json"
    f.write_text(json.dumps(content))
    code, _, err = run_exit(capsys, ["check", ERRATUM, "--params-file", str(f)])
    assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_params_file_edge_cases_are_bad_input(tmp_path, capsys):
    cases = [(str(tmp_path), "is a folder"), ("", "may not be empty")]
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    cases.append((str(deep), "nested too deeply"))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"seed": "\xff"}')
    cases.append((str(latin), "not UTF-8"))
    huge = tmp_path / "huge.json"
    huge.write_text('{"seed": ' + "9" * 5000 + "}")
    cases.append((str(huge), "not usable"))
    for path, needle in cases:
        code, _, err = run_exit(capsys, ["check", ERRATUM, "--params-file", path])
        assert code == 2 and err.count("\n") == 1 and needle in err, (path, err)


@pytest.mark.parametrize("argv, needle", [
    (["check", "menon.balanced_invariance", "--param", "h=1" + "0" * 400], "too large for a float"),
    (["check", "menon.balanced_invariance", "--param", "Y=[[1" + "0" * 400 + ", 0], [0, 1]]"], "too large for a float"),
    (["check", "menon.balanced_invariance", "--param", "d=1" + "0" * 400], "out of range [1, 8]"),
    (["check", "menon.balanced_invariance", "--param", "seed=" + "[" * 3000 + "]" * 3000], "nested too deeply"),
    (["check", "menon.balanced_invariance", "--param", 'Y=[["1", "0"], ["0", "1"]]'], "not strings or true/false"),
    (["check", "menon.balanced_invariance", "--param", "energy=[1]"], "is not one of"),
    (["check", "menon.balanced_invariance", "--variant", ""], "--variant may not be empty"),
    (["check", "menon.balanced_invariance", "--backend", " "], "--backend may not be empty"),
    (["certify", "--document", ""], "unknown document ''"),
    (["certify", "--select", ""], "--select may not be empty"),
    (["certify", "--select", "a and"], "is not a pytest -k expression"),
    (["certify", "--out", ""], "--out may not be empty"),
    (["check", "jacot.bottleneck_k5"], "has no checks"),
    (["list", "--status", "proved"], "unknown status 'proved'"),
    (["show", "menon.nonesuch"], "unknown claim id"),
])
def test_more_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run_exit(capsys, argv)
    assert code == 2 and err.count("\n") == 1 and needle in err and "Traceback" not in err, err


def test_certify_out_below_a_file_or_too_long_is_bad_input(tmp_path, capsys):
    f = tmp_path / "somefile"
    f.write_text("x")
    for out, needle in ((str(f / "sub"), "cannot create the output folder"), (str(f), "is not a folder"),
                        (str(tmp_path / ("x" * 300)), "cannot create the output folder")):
        code, _, err = run_exit(capsys, ["certify", "--out", out])
        assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_argv_that_is_not_utf8_is_written_escaped(capsys):
    bad = b"menon.\xff".decode("utf-8", "surrogateescape")  # what Python makes of such argv bytes
    code, _, err = run_exit(capsys, ["check", bad])
    assert code == 2 and err.count("\n") == 1 and "\\udcff" in err


# --- show, list --status, and what `check` says about a claim it cannot run -----------------------
def test_show_prints_everything_about_a_claim(capsys):
    code, out, _ = run(capsys, "show", ERRATUM)
    assert code == 0
    for needle in ("status: erratum", "statement: ", "corrected: ", "seed lines", "parameters:",
                   "checks:", "falsifier[stated] (expect refuted; backends numpy", "notes:" if
                   __import__("theorems.registry").registry.get_claim(ERRATUM).notes else "run: theorems check"):
        assert needle in out, needle
    code, out, _ = run(capsys, "show", ERRATUM, "--json")
    assert code == 0 and json.loads(out)["id"] == ERRATUM


def test_show_says_why_a_claim_is_unchecked(capsys):
    code, out, _ = run(capsys, "show", "jacot.bottleneck_k5")
    assert code == 0 and "checks: none" in out and "unchecked by default: it has no checks" in out
    code, out, _ = run(capsys, "show", "vanrossem.very_high_weights")
    assert code == 0 and "unchecked by default: every check is slow" in out and "--runslow" in out


def test_list_status_filter(capsys):
    code, out, _ = run(capsys, "list", "--status", "erratum", "--json")
    claims = json.loads(out)
    assert code == 0 and claims and {c["status"] for c in claims} == {"erratum"}


def test_check_without_numeric_check_suggests_a_pytest_command_that_selects_it(capsys):
    import shlex
    import subprocess
    import sys
    from pathlib import Path
    code, _, err = run_exit(capsys, ["check", "jacot.prop5_nonnegative_limit"])
    assert code == 2 and err.count("\n") == 1 and "theorems show jacot.prop5_nonnegative_limit" in err
    cmd = [part for part in err.split("`") if part.startswith("pytest ")][0]
    assert cmd.startswith("pytest ")
    argv = shlex.split(cmd)[1:]
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", *argv], capture_output=True,
                       text=True, cwd=Path.cwd(), timeout=300)
    items = [line for line in r.stdout.splitlines() if "::" in line]
    assert r.returncode == 0, r.stdout[-1000:] + r.stderr[-1000:]
    from theorems.registry import get_claim
    want = sorted(c.nodeid for c in get_claim("jacot.prop5_nonnegative_limit").checks)
    assert "reproduction[corrected]" in want and "symbolic[corrected]" in want   # and its symbolic mutants
    assert sorted(i.rsplit("::", 1)[1] for i in items) == want
    assert all("::jacot.prop5_nonnegative_limit::" in i for i in items) and root.exists()
