"""`theorems certify` writes results.json and the reports; `theorems report` re-renders them;
counterexamples are stored in the example database and replayed (dev/thorough profiles)."""
import json
import shutil

import pytest

from theorems.cli import main
from theorems.record import validate_record

PDFLATEX = shutil.which("pdflatex")
# one fast claim, its numba item left out (compilation): symbolic, numeric, property, falsifiers
SELECT = "balanced_invariance and not numba"


def _run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as e:  # argparse errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    out = tmp_path_factory.mktemp("cert")
    code = main(["certify", "--document", "menon", "--select", SELECT, "--out", str(out)])
    return code, out


def test_certify_writes_results_and_reports(certified):
    code, out = certified
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert set(res) == {"meta", "summary", "claims", "records", "strength"}
    meta = res["meta"]
    for mod in ("numpy", "scipy", "sympy", "numba", "hypothesis"):
        assert meta["versions"][mod], mod
    assert meta["python"] and meta["date"] and meta["profile"] == "ci" and meta["seed"] == "derandomized"
    assert meta["hypothesis_database"] is None                      # ci stores nothing
    assert [c["id"] for c in res["claims"]] == ["menon.balanced_invariance"]
    kinds = {r["check"] for r in res["records"]}
    assert {"numeric", "property", "symbolic", "falsifier"} <= kinds
    for r in res["records"]:
        validate_record(r)
    assert res["summary"]["total"]["certified"] == 1
    assert "menon.balanced_invariance" in (out / "report.html").read_text()
    tex = (out / "report.tex").read_text()
    assert r"\section{Menon" in tex and r"\appendix" in tex and "per\\_layer\\_rates" in tex
    assert not (out / "_records.json").exists()
    if PDFLATEX:
        assert (out / "report.pdf").read_bytes()[:4] == b"%PDF"
        assert not (out / "report.log").exists() and not (out / "report.aux").exists()


def test_report_round_trip(certified, tmp_path, capsys):
    _, out = certified
    code, stdout, err = _run(capsys, ["report", "--results", str(out / "results.json"), "--format", "latex",
                                      "--out", str(tmp_path / "again.tex")])
    assert code == 0, err
    assert (tmp_path / "again.tex").read_text() == (out / "report.tex").read_text()
    code, _, err = _run(capsys, ["report", "--results", str(out / "results.json"), "--format", "html",
                                 "--out", str(tmp_path / "sub" / "again.html")])
    assert code == 0, err
    assert "menon.balanced_invariance" in (tmp_path / "sub" / "again.html").read_text()


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not on PATH")
def test_report_pdf_format(certified, tmp_path, capsys):
    _, out = certified
    code, _, err = _run(capsys, ["report", "--results", str(out / "results.json"), "--format", "pdf",
                                 "--out", str(tmp_path / "r.pdf")])
    assert code == 0, err
    assert (tmp_path / "r.pdf").read_bytes()[:4] == b"%PDF" and (tmp_path / "r.tex").exists()


@pytest.mark.parametrize("content, fmt, needle", [
    (None, "latex", "not found"),
    ("{not json", "latex", "not valid JSON"),
    ("[1, 2]", "html", "is not a results.json"),
    ('{"meta": {}}', "latex", "is not a results.json"),
    ('{"records": [1]}', "latex", "record 0 is not a result record"),
    ('{"records": [], "claims": {}}', "latex", "'claims' must be a list"),
    ('{"records": []}', "docx", "unknown format 'docx'"),
])
def test_report_bad_input_is_one_line_exit_2(tmp_path, capsys, content, fmt, needle):
    f = tmp_path / "results.json"
    if content is not None:
        f.write_text(content)
    code, _, err = _run(capsys, ["report", "--results", str(f), "--format", fmt, "--out", str(tmp_path / "o")])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err
    assert not (tmp_path / "o").exists()


def test_report_out_is_a_folder(tmp_path, capsys):
    f = tmp_path / "results.json"
    f.write_text('{"records": []}')
    code, _, err = _run(capsys, ["report", "--results", str(f), "--format", "latex", "--out", str(tmp_path)])
    assert code == 2 and "is a folder" in err and len(err.strip().splitlines()) == 1


def test_counterexample_database_replays(tmp_path, monkeypatch):
    """dev/thorough: a falsifier's counterexample and a failing property draw are stored under the
    check's key and replayed first; ci stores nothing."""
    from theorems import registry as core
    from theorems.claim import Claim
    from theorems.vocabulary import Outcome
    from theorems.params import Param
    from theorems.runner import run_check
    monkeypatch.setenv("THEOREMS_HYPOTHESIS_DB", str(tmp_path / "db"))
    calls = {"n": 0}

    def rare(p):  # refuted on about 1 seed in 10
        calls["n"] += 1
        return Outcome(residual=1.0 if p.seed % 10 == 7 else 0.0, tolerance=0.5)

    claim = Claim(id="menon.zz_replay_probe", title="probe", document="menon", label="-", lines=(1, 1),
                  statement="x", status="holds", params=[Param.int("seed", 0, 0, 10**6)])
    try:
        claim.numeric(rare)
        claim.property(over=("seed",), max_examples=200)
        claim.falsifier("rare", search=("seed",), max_examples=200)(rare)
        for kind in ("falsifier", "property"):
            check = claim.check(kind)
            calls["n"] = 0
            first = run_check(check, profile="dev")
            n_first = calls["n"]
            calls["n"] = 0
            again = run_check(check, profile="dev")
            assert first["verdict"] == again["verdict"] == "refuted", kind
            assert again["counterexample"]["params"]["seed"] % 10 == 7
            assert calls["n"] <= 4 < n_first or n_first <= 4, (kind, n_first, calls["n"])
        assert any((tmp_path / "db").iterdir())
        monkeypatch.setenv("THEOREMS_HYPOTHESIS_DB", str(tmp_path / "db_ci"))
        run_check(claim.check("falsifier"), profile="ci")
        assert not (tmp_path / "db_ci").exists()
    finally:
        core.registry.pop(claim.id, None)


def test_rerun_failed_reruns_only_the_failures_and_merges(tmp_path, capsys):
    """`theorems certify --rerun-failed DIR` runs exactly the checks of DIR/results.json that did not
    come out as expected, and writes the merged records (the rest kept as they were)."""
    from theorems.registry import get_claim
    from theorems.runner import run_check
    claim = get_claim("menon.balanced_invariance")
    good = run_check(claim.check("falsifier", "per_layer_rates"))
    bad = dict(run_check(claim.check("numeric")), verdict="refuted", message="planted")
    prev = tmp_path / "prev"
    prev.mkdir()
    (prev / "results.json").write_text(json.dumps({"meta": {}, "claims": [claim.describe()],
                                                   "records": [good, bad]}))
    out = tmp_path / "out"
    assert main(["certify", "--rerun-failed", str(prev), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    by = {(r["check"], r["variant"]): r for r in res["records"]}
    assert len(res["records"]) == 2
    assert by[("numeric", "stated")]["verdict"] == "certified" and by[("numeric", "stated")]["message"] != "planted"
    assert by[("falsifier", "per_layer_rates")]["seconds"] == good["seconds"]  # kept, not rerun
    assert res["summary"]["total"]["certified"] == 1
    # nothing left to rerun: exit 0 without running anything
    capsys.readouterr()
    assert main(["certify", "--rerun-failed", str(out), "--out", str(tmp_path / "again")]) == 0
    assert "nothing to rerun" in capsys.readouterr().out


def test_rerun_failed_bad_folder_is_exit_2(tmp_path, capsys):
    assert main(["certify", "--rerun-failed", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("theorems: error: --rerun-failed:")
