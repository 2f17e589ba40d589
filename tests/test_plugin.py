"""`pytest theorems`: one item per check, named by claim id and kind, with markers; counterexamples shown."""
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


def test_counterexamples_are_shown_with_replay_commands():
    r = _pytest("-q", "-k", "balanced_invariance and falsifier")
    assert r.returncode == 0, r.stdout[-3000:]
    assert "counterexamples found by falsifiers" in r.stdout
    assert "menon.balanced_invariance [per_layer_rates]" in r.stdout
    assert "replay: theorems check menon.balanced_invariance --variant per_layer_rates" in r.stdout
