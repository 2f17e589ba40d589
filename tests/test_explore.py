"""`theorems explore ID`: a scripted session (show, set, run, falsify, path, save), the saved files
replayed by `theorems check`, bad input that leaves the session running, and a real terminal (pty)."""
import io
import json
import os
import sys
import time
from pathlib import Path

import pytest

from theorems.cli import main
from theorems.registry import get_claim
from theorems.explore import Explorer, interpolate, sparkline, split_assignments

ROOT = Path(__file__).resolve().parents[1]
ID = "menon.balanced_invariance"
PROMPT = f"{ID}> "


def session(script: str, **kw) -> tuple[Explorer, str]:
    """Run a scripted session (one command a line) and return the explorer and its transcript."""
    out = io.StringIO()
    ex = Explorer(get_claim(ID), stdin=io.StringIO(script), stdout=out, **kw)
    ex.cmdloop()
    return ex, out.getvalue()


def blocks(transcript: str) -> dict:
    """The output of each command, keyed by the command line (the session echoes it)."""
    res, cur = {}, None
    for line in transcript.splitlines():
        if line.startswith(PROMPT):
            cur = line[len(PROMPT):].strip()
            res[cur] = []
        elif cur is not None:
            res[cur].append(line)
    return {k: "\n".join(v) for k, v in res.items()}


def test_session_show_set_run_falsify_path_save_and_replay(tmp_path, capsys):
    cex, cert = tmp_path / "cex.json", tmp_path / "certified.json"
    ex, t = session("\n".join([
        "show",
        "set d=2 T=0.5 seed=7",
        "run",
        "set d=0",                                  # bad: the session goes on, nothing changes
        "run",                                      # rerun at the same point
        "falsify finite_step_gd --search",          # Hypothesis search, shrunk to seed=0
        "path 5",
        f"save {cex}",
        f"save {cert} certified",
        "quit",
    ]) + "\n")
    b = blocks(t)
    # show: statement, location, status, parameters with values and ranges, the checks
    assert "status: holds" in b["show"] and "lines 211-223" in b["show"]
    assert "statement: " in b["show"] and "\\frac{d}{dt}" in b["show"]
    assert "d      = 3" in b["show"] and "int [1, 8]" in b["show"]
    assert "falsifier[per_layer_rates]" in b["show"] and "search over seed" in b["show"]
    # set and run
    assert "d=2 T=0.5 seed=7" in b["set d=2 T=0.5 seed=7"]
    assert "numeric[stated]: CERTIFIED" in b["run"] and "residual/tolerance" in b["run"]
    assert "now the certified point" in b["run"]
    assert b["set d=0"].strip() == "error: parameter d=0 is out of range [1, 8]"
    assert ex.given["d"] == 2
    # falsify: a shrunk counterexample, made current
    f = b["falsify finite_step_gd --search"]
    assert "counterexample by Hypothesis over seed" in f and "seed=0" in f
    assert "falsifier[finite_step_gd]: REFUTED" in f
    assert ex.cex["params"]["seed"] == 0 and ex.cex["params"]["d"] == 2
    assert ex.certified["params"]["seed"] == 7
    # path: the seed-drawn instance made explicit and interpolated; both checks along 5 points
    p = b["path 5"]
    assert "seed differs: layers and Y drawn from the seed, made explicit" in p
    assert "interpolated: layers (linear), Y (linear)" in p
    rows = [l for l in p.splitlines() if l.strip()[:4] in ("0.00", "0.25", "0.50", "0.75", "1.00")]
    assert len(rows) == 5 and all("refuted" in r and "certified" in r for r in rows)
    assert "finite_step_gd |" in p and "refuted all along" in p and "certified all along" in p
    # save: a result record, replayed by `theorems check`
    assert f"--variant finite_step_gd --params-file {cex}" in b[f"save {cex}"]
    rec = json.loads(cex.read_text())
    assert rec["verdict"] == "refuted" and rec["variant"] == "finite_step_gd"
    code = main(["check", ID, "--variant", "finite_step_gd", "--params-file", str(cex), "--json"])
    replay = json.loads(capsys.readouterr().out)
    assert code == 1 and replay["verdict"] == "refuted" and replay["params"] == rec["params"]
    assert replay["residual"] == pytest.approx(rec["residual"], rel=1e-9)
    code = main(["check", ID, "--params-file", str(cert), "--json"])
    replay = json.loads(capsys.readouterr().out)
    assert code == 0 and replay["verdict"] == "certified" and replay["params"]["seed"] == 7


def test_bad_set_prints_one_line_and_changes_nothing():
    ex, t = session("\n".join([
        "set T=0.5",
        "set foo=1",
        "set d=2 T=[1,",                            # bad JSON: d is not changed either
        "set energy=cubic",
        "set layers=[[1, 2], [3, 4]]",             # a matrix of the wrong shape
        "set layers=[[[1, 0.5], [0.2, 1]], [[0.4, 1], [1, -0.3], [0, 2]]]",  # shapes do not chain
        "set",
        "reset nonsense",
        "seed -1",
        "run nonsense",
        "run --backend tpu",
        "frobnicate",
        "show",
    ]) + "\n")
    b = blocks(t)
    for cmdline, needle in [("set foo=1", "unknown parameter 'foo'"), ("set d=2 T=[1,", "not valid JSON"),
                            ("set energy=cubic", "is not one of"),
                            ("set layers=[[1, 2], [3, 4]]", "must be a non-empty matrix"),
                            ("set", "set expects NAME=JSON"), ("reset nonsense", "unknown parameter"),
                            ("seed -1", "out of range"), ("run nonsense", "unknown variant 'nonsense'"),
                            ("run --backend tpu", "unknown backend 'tpu'"), ("frobnicate", "unknown command")]:
        lines = b[cmdline].strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], (cmdline, lines)
    assert "do not chain" in b[[k for k in b if k.startswith("set layers=[[[")][0]]
    assert ex.given == {"T": 0.5}
    assert "*T      = 0.5" in b["show"]


def test_set_matrices_with_spaces_reset_and_seed():
    layers = "[[[1, 0.5, 0], [0.2, 1, 0.3]], [[0.4, 1], [1, -0.3], [0.1, 0.2]]]"
    ex, t = session(f"set layers={layers} Y=[[1, 0], [0, 1]] energy=quartic\nrun\nseed 5\nseed\nreset layers Y\n"
                    "reset\nquit\n")
    b = blocks(t)
    assert "numeric[stated]: CERTIFIED" in b["run"] and "widths = [2, 3, 2]" in b["run"]
    assert "seed = 5" in b["seed"]
    assert ex.given == {}


def test_help_lists_every_command_with_one_line():
    _, t = session("help\nhelp path\n")
    b = blocks(t)
    lines = b["help"].splitlines()
    names = [l.split()[0] for l in lines]
    for name in ("show", "set", "reset", "seed", "run", "falsify", "path", "save", "load", "quit", "help"):
        assert name in names, name
    assert all(len(l.split(None, 1)) == 2 for l in lines)  # each with its doc
    assert "switch at the" in b["help path"] and "midpoint" in b["help path"]


def test_default_falsify_is_quick_and_path_needs_a_counterexample():
    t0 = time.perf_counter()
    ex, t = session("path\nfalsify\npath 4\n", profile="ci")
    b = blocks(t)
    assert time.perf_counter() - t0 < 10
    assert "no counterexample yet" in b["path"]
    assert "falsifier[layer_penalty]: REFUTED" in b["falsify"] and "no search needed" in b["falsify"]
    # no certified point yet: the defaults are used; the same parameters: no segment, said so
    assert "using the defaults" in b["path 4"] and "only the variant differs" in b["path 4"]


def test_path_says_when_the_segment_is_not_straight():
    # energy=completion draws its mask from the seed: the instance cannot be made explicit,
    # so the seed switches at the midpoint and the session says the segment is not a straight line
    ex, t = session("set d=2 energy=completion seed=1 T=0.3\nrun\nseed 2\nset h=0.02\nrun finite_step_gd\npath 3\n")
    p = blocks(t)["path 3"]
    assert "cannot be made explicit" in p
    assert "switch at the midpoint: seed" in p and "not a straight segment" in p
    assert "h (linear)" in p


def test_save_params_and_load(tmp_path, capsys):
    f = tmp_path / "p.json"
    _, t = session(f"set seed=3 T=0.4\nsave {f}\nquit\n")
    assert "wrote params" in t
    assert main(["check", ID, "--params-file", str(f)]) == 0
    capsys.readouterr()
    # a counterexample record loads as the current counterexample and params
    g = tmp_path / "cex.json"
    assert main(["check", ID, "--variant", "per_layer_rates", "--param", "T=0.3", "--json"]) == 1
    g.write_text(capsys.readouterr().out)
    ex, t = session(f"load {g}\nload {tmp_path / 'missing.json'}\nshow\n")
    b = blocks(t)
    assert ex.cex is not None and ex.cex["variant"] == "per_layer_rates" and ex.given["T"] == 0.3
    assert "falsifier[per_layer_rates]: REFUTED" in b[f"load {g}"]
    assert b[f"load {tmp_path / 'missing.json'}"].strip().startswith("error: file")


def test_pure_helpers():
    assert split_assignments("a=1 b=[[1, 2], [3, 4]] c=quartic") == ["a=1", "b=[[1, 2], [3, 4]]", "c=quartic"]
    assert split_assignments("T= 0.5") == ["T=0.5"]
    assert interpolate("float", 1.0, 2.0, 0.5) == (1.5, "linear")
    assert interpolate("int", 2, 5, 0.5) == (4, "rounded")
    assert interpolate("int", 0, 9, 0.5, "seed") == (9, "switch")
    assert interpolate("choice", "a", "b", 0.4) == ("a", "switch")
    assert interpolate("matrix", [[0, 0]], [[2, 4]], 0.5) == ([[1.0, 2.0]], "linear")
    assert interpolate("matrix", [[0, 0]], [[2], [4]], 0.5)[1] == "switch"
    assert interpolate("float", 3.0, 3.0, 0.5) == (3.0, "same")
    s = sparkline([1e-3, 1e-1, 10, None, float("inf")])
    assert len(s) == 5 and s[0] == "_" and s[3] == "?" and s[4] == "@"


def test_cli_bad_id_is_one_line_exit_2_and_piped_session(capsys, monkeypatch):
    assert main(["explore", "menon.no_such_claim"]) == 2
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [err.strip()]
    assert "unknown claim id 'menon.no_such_claim'" in err and "Traceback" not in err
    monkeypatch.setattr(sys, "stdin", io.StringIO("set T=0.2\nrun\n"))  # piped; EOF ends the session
    assert main(["explore", ID]) == 0
    out, err = capsys.readouterr()
    assert f"{PROMPT}run" in out and "CERTIFIED" in out and not err


def test_terminal_session_with_history(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    hist = tmp_path / "hist"
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", THEOREMS_HISTORY=str(hist), TERM="dumb")
    child = pexpect.spawn(sys.executable, ["-m", "theorems", "explore", ID], cwd=str(ROOT), env=env,
                          encoding="utf-8", timeout=60)
    try:
        child.expect_exact(PROMPT)
        child.sendline("set T=0.2")
        child.expect_exact(PROMPT)
        child.sendline("run")
        child.expect("CERTIFIED")
        child.expect_exact(PROMPT)
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert "run" in hist.read_text() and "set T=0.2" in hist.read_text()
