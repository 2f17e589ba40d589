"""`pytest theorems`: one item per check, named by claim id and kind, with markers; counterexamples shown."""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(*args):
    return subprocess.run([sys.executable, "-m", "pytest", "theorems", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_items_are_named_by_claim_and_kind():
    r = _pytest("--collect-only", "-q", "-k", "balanced_invariance")
    ids = [l for l in r.stdout.splitlines() if "::" in l]
    assert "theorems/menon/invariance.py::menon.balanced_invariance::numeric[stated]" in ids
    assert "theorems/menon/invariance.py::menon.balanced_invariance::numeric[stated@numba]" in ids
    assert any(i.endswith("falsifier[per_layer_rates]") for i in ids)


def test_markers_select_kinds():
    r = _pytest("--collect-only", "-q", "-m", "falsifier", "-k", "balanced_invariance")
    ids = [l for l in r.stdout.splitlines() if "::" in l]
    assert ids and all("falsifier[" in i for i in ids)
    r = _pytest("--collect-only", "-q", "-m", "slow")
    assert all("reproduction[" in l or "property[" in l or "numeric[" in l or "falsifier[" in l
               for l in r.stdout.splitlines() if "::" in l)


def test_expected_counterexamples_collapse_to_a_count():
    r = _pytest("-q", "-k", "balanced_invariance and falsifier")
    assert r.returncode == 0, r.stdout[-3000:]
    assert "4 falsifiers found their counterexamples, as they must" in r.stdout
    assert "replay:" not in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("4 passed")  # the summary comes last


def test_counterexamples_are_listed_on_request_with_replay_commands():
    r = _pytest("-q", "-k", "balanced_invariance and falsifier", "--counterexamples")
    assert r.returncode == 0, r.stdout[-3000:]
    assert "counterexamples found by falsifiers" in r.stdout
    assert "menon.balanced_invariance [per_layer_rates]" in r.stdout
    assert "replay: theorems check menon.balanced_invariance --variant per_layer_rates" in r.stdout


# a plugin that makes one check fail while THEOREMS_TEST_FAIL names it (for --lf and the failure output)
_FAILER = """
import os
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if os.environ.get("THEOREMS_TEST_FAIL") and item.nodeid.endswith(os.environ["THEOREMS_TEST_FAIL"]):
        from theorems.vocabulary import Outcome
        check = item.check
        orig = check.func
        check.func = lambda p, *a: Outcome(residual=1.0, tolerance=0.5, message="planted failure")
        item.addfinalizer(lambda: setattr(check, "func", orig))
"""


def _run(tmp_path, *args, fail=None):
    (tmp_path / "failer_plugin.py").write_text(_FAILER)
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    if fail:
        env["THEOREMS_TEST_FAIL"] = fail
    return subprocess.run([sys.executable, "-m", "pytest", "theorems", "-p", "failer_plugin",
                           "-o", f"cache_dir={tmp_path / 'cache'}", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, env=env)


def _n_checks(claim_id):
    """How many test items pytest collects for the claim (a check with a Numba backend is two)."""
    r = subprocess.run([sys.executable, "-m", "pytest", "theorems", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "-k", claim_id.split(".")[1]], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return sum(f"::{claim_id}::" in line for line in r.stdout.splitlines())


def test_last_failed_reruns_only_the_failure(tmp_path):
    """`pytest --lf` after one failure reruns only it (the cache provider is on)."""
    n = _n_checks("menon.balanced_invariance")
    r = _run(tmp_path, "-q", "-k", "balanced_invariance", fail="menon.balanced_invariance::numeric[stated]")
    assert r.returncode == 1, r.stdout[-3000:]
    assert f"1 failed, {n - 1} passed" in r.stdout
    # the real failure, its replay command and the summary come after the collapsed counterexamples
    tail = r.stdout[r.stdout.index("falsifiers found their counterexamples"):]
    assert "FAILED theorems/menon/invariance.py::menon.balanced_invariance::numeric[stated]" in tail
    assert "replay: theorems check menon.balanced_invariance --variant stated" in r.stdout
    r = _run(tmp_path, "-q", "--lf", "-k", "balanced_invariance")
    assert r.returncode == 0, r.stdout[-3000:]
    assert "1 passed" in r.stdout and f"{n - 1} passed" not in r.stdout, r.stdout[-2000:]


def test_parallel_run_merges_records_and_junit_carries_them(tmp_path):
    """`pytest -n 2` (xdist): every record reaches the controller's --results-json, with the claims the
    workers described; --junitxml carries each record as JSON."""
    out, xml = tmp_path / "r.json", tmp_path / "j.xml"
    n = _n_checks("menon.balanced_invariance")
    r = _run(tmp_path, "-q", "-n", "2", "-k", "balanced_invariance", f"--results-json={out}", f"--junitxml={xml}")
    assert r.returncode == 0, r.stdout[-3000:]
    data = json.loads(out.read_text())
    kinds = sorted(f"{x['check']}[{x['variant']}]" for x in data["records"])
    assert len(kinds) == n and "numeric[stated]" in kinds and "falsifier[per_layer_rates]" in kinds
    assert "menon.balanced_invariance" in {c["id"] for c in data["claims"]}
    import xml.etree.ElementTree as ET
    props = [p for p in ET.parse(xml).iter("property") if p.get("name") == "record"]
    assert len(props) == n
    recs = [json.loads(p.get("value")) for p in props]
    assert {r["claim"] for r in recs} == {"menon.balanced_invariance"}
    assert all(set(r) >= {"verdict", "residual", "tolerance", "params"} for r in recs)
