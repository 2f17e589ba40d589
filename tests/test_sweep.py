"""``theorems sweep``: the draws, their replay, the engines (serial, LocalCluster, a real ``dask
scheduler`` + ``dask worker``), the time limit, the failures' replay commands, bad input, the JSON."""
from __future__ import annotations

import json
import math
import os
import shlex
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from theorems import sweep as sw
from theorems.cli import main
from theorems.params import Param

CHEAP = ["sander.psi_eps_range", "menon.balanced_invariance"]  # a few ms per draw

TOY = textwrap.dedent('''
    """Toy claims planted by tests/test_sweep.py (never in the index)."""
    import time
    from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

    def _k_le_m(p):
        if p.k > p.m:
            raise ParamError(f"k={p.k} must be <= m={p.m}")

    refuted = Claim(id="menon.sweep_toy_refuted", title="toy: x <= 100", label="toy", lines=(1, 1),
                    statement="x \\\\le 100", status="holds", validate=_k_le_m,
                    params=[Param.float("x", 1.0, 1e-3, 1e3), Param.int("k", 1, 1, 3), Param.int("m", 1, 1, 3)])

    @refuted.numeric
    def _(p):
        if p.x < 1e-2:
            return inconclusive("x below 1e-2")
        return Outcome(residual=p.x, tolerance=100.0, message=f"x = {p.x!r}")

    def _never(p):
        raise ParamError("k + m must exceed 6 (never, in these ranges)")

    never = Claim(id="menon.sweep_toy_never", title="toy: unsatisfiable constraint", label="toy", lines=(1, 1),
                  statement="x", status="holds", validate=_never,
                  params=[Param.int("k", 1, 1, 3), Param.int("m", 1, 1, 3)])

    @never.numeric
    def _(p):
        return Outcome(residual=0.0, tolerance=1.0)

    hang = Claim(id="menon.sweep_toy_hang", title="toy: hangs where x > 1", label="toy", lines=(1, 1),
                 statement="x", status="holds", params=[Param.float("x", 1.0, 1e-3, 1e3)])

    @hang.numeric
    def _(p):
        if p.x > 1:
            time.sleep(600)  # in C: no Python-level interrupt would reach it
        return Outcome(residual=0.0, tolerance=1.0)
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy claims, importable here and in every process the sweep starts (PYTHONPATH)."""
    (tmp_path / "sweep_toy_claims.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    import importlib
    mod = importlib.import_module("sweep_toy_claims")
    from theorems.registry import registry
    yield mod
    for c in (mod.refuted, mod.never, mod.hang):
        registry.pop(c.id, None)
    sys.modules.pop("sweep_toy_claims", None)


def _claims(ids):
    from theorems.registry import get_claim
    return [get_claim(i) for i in ids]


# ---------------------------------------------------------------------------
def test_draws_stay_in_the_declared_range_and_cover_the_decades():
    params = [Param.float("x", 1.0, 1e-6, 1e3, search=(0.5, 2.0)), Param.int("n", 10, 1, 10**6, search=(1, 8)),
              Param.float("u", 0.5, 0.0, 1.0, low_open=True, high_open=True), Param.int("d", 3, 2, 9),
              Param.float("s", 1.0, -2.0, 5.0), Param.seed(), Param.choice("act", "relu", ["relu", "tanh", "id"]),
              Param.bool("flag", False), Param.matrix("A"), Param("z", "float", 2.0)]
    draws = {p.name: [sw.draw_value(p, sw.draw_rng(3, "toy.range", i, p.name), {}) for i in range(3000)]
             for p in params}
    for p in params:
        for v in draws[p.name]:
            if p.kind in ("int", "float"):
                p.validate(v)  # inside the declared range, open ends excluded
    assert all(isinstance(v, int) and not isinstance(v, bool) for v in draws["n"])
    # log-uniform: every decade of x's 9 and of n's 6 gets about its share; the search range is not used
    for name, lo, hi in (("x", -6, 3), ("n", 0, 6)):
        dec = np.floor(np.log10(np.asarray(draws[name], dtype=float))).astype(int)
        counts = np.bincount(dec - lo, minlength=hi - lo)[: hi - lo]
        share = 3000 / (hi - lo)
        assert counts.min() > 0.7 * share and counts.max() < 1.3 * share, (name, counts)
    # uniform where the range is not positive or spans less than two decades
    assert abs(np.mean(draws["s"]) - 1.5) < 0.2 and min(draws["s"]) < -1.5 and max(draws["s"]) > 4.5
    assert set(draws["d"]) == set(range(2, 10))
    assert min(draws["seed"]) >= 0 and max(draws["seed"]) > 2**31  # the seed: its whole range
    assert set(draws["act"]) == {"relu", "tanh", "id"} and set(draws["flag"]) == {True, False}
    assert set(draws["A"]) == {None}  # a matrix stays at its default (drawn by the claim from its seed)
    assert all(0.2 <= v <= 20.0 for v in draws["z"])  # no bounds: a decade around the default


def test_a_draw_replays_alone():
    claim = _claims(["sander.psi_eps_range"])[0]
    forward = [sw.draw_params(claim, 11, i) for i in range(8)]
    backward = [sw.draw_params(claim, 11, i) for i in reversed(range(8))][::-1]
    assert forward == backward
    assert forward[5] == sw.draw_params(claim, 11, 5)
    assert forward != [sw.draw_params(claim, 12, i) for i in range(8)]
    assert len({json.dumps(d, sort_keys=True) for d in forward}) == 8
    # the drawn set is what run_draw runs and records
    r = sw.run_draw(claim.id, claim.module, 11, 5, timeout=60)
    try:
        assert r["params"] == forward[5] and r["verdict"] in sw.TALLY_KEYS
    finally:
        sw._Serial(1, 0).close()


def test_planted_refutation_replays_through_theorems_check(toy, tmp_path):
    res = sw.sweep([toy.refuted], draws=12, seed=5, scheduler="serial", timeout=60)
    e = res["claims"]["menon.sweep_toy_refuted"]
    assert sum(e[k] for k in sw.TALLY_KEYS) == 12
    # k > m violates the validator: such a set is drawn again (rejection sampling), never a failure
    assert e["rejected"] == 0 and e["refuted"] > 0 and e["certified"] > 0
    assert res["meta"]["resampled"]["menon.sweep_toy_refuted"] > 0
    assert res["summary"]["refuted_true"] == e["refuted"] and len(e["failures"]) == e["refuted"]
    f = e["failures"][0]
    assert f["verdict"] == "refuted" and f["params"]["x"] > 100
    argv = shlex.split(f["replay"])
    assert argv[:3] == ["theorems", "check", "menon.sweep_toy_refuted"]
    code = "import sys, sweep_toy_claims; from theorems.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, *argv[1:], "--json"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["verdict"] == "refuted" and rec["params"]["x"] == f["params"]["x"]


def test_a_constraint_no_draw_satisfies_is_tallied_rejected(toy):
    res = sw.sweep([toy.never], draws=3, seed=5, scheduler="serial", timeout=60)
    e = res["claims"]["menon.sweep_toy_never"]
    assert e["rejected"] == 3 and e["certified"] == 0 and res["summary"]["errors"] == 0
    assert res["meta"]["resampled"]["menon.sweep_toy_never"] == 3 * (sw.RESAMPLE - 1)


def test_a_draw_past_the_time_limit_is_an_error_and_the_next_runs(toy):
    t0 = time.perf_counter()
    res = sw.sweep([toy.hang], draws=4, seed=2, scheduler="serial", timeout=2.0)
    wall = time.perf_counter() - t0
    e = res["claims"]["menon.sweep_toy_hang"]
    hung = [i for i in range(4) if sw.draw_params(toy.hang, 2, i)["x"] > 1]
    assert e["error"] == len(hung) and e["certified"] == 4 - len(hung)
    assert all(f["message"] == "timed out after 2 s" for f in e["failures"])
    assert wall < 2.0 * len(hung) + 60  # killed at the limit, not after the 600 s sleep


def test_serial_and_local_cluster_give_the_same_tallies(toy):
    claims = _claims(CHEAP) + [toy.refuted]
    serial = sw.sweep(claims, draws=4, seed=9, scheduler="serial", timeout=60)
    try:
        local = sw.sweep(claims, draws=4, seed=9, scheduler="local", workers=2, timeout=60)
    except Exception as exc:  # pragma: no cover - an environment where dask cannot start processes
        pytest.skip(f"a LocalCluster cannot start here: {exc}")
    assert local["meta"]["engine"] == "local" and serial["meta"]["engine"] == "serial"
    assert local["claims"] == serial["claims"] and local["summary"] == serial["summary"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_running_dask_scheduler_and_worker(toy, tmp_path):
    dask = Path(sys.executable).parent / "dask"
    if not dask.exists():
        pytest.skip("the dask command is not installed next to this Python")
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    logs = [open(tmp_path / "scheduler.log", "w"), open(tmp_path / "worker.log", "w")]
    procs = []
    try:
        procs.append(subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--no-dashboard"], stdout=logs[0], stderr=subprocess.STDOUT))
        procs.append(subprocess.Popen([str(dask), "worker", addr, "--nworkers", "1", "--nthreads", "1",
                                       "--no-dashboard", "--host", "127.0.0.1"], stdout=logs[1], stderr=subprocess.STDOUT))
        from distributed import Client
        deadline = time.monotonic() + 60
        while True:
            try:
                with Client(addr, timeout="5s") as c:
                    c.wait_for_workers(1, timeout=max(1, deadline - time.monotonic()))
                break
            except (OSError, TimeoutError) as exc:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    pytest.skip(f"dask scheduler/worker did not start: {exc}")
                time.sleep(0.5)
        # through the command line (the scheduler's address parsed and used), real claims
        out = tmp_path / "tcp"
        proc = subprocess.run([sys.executable, "-m", "theorems", "sweep", "--claim", *CHEAP, "--draws", "3",
                               "--seed", "4", "--scheduler", addr, "--json", "--out", str(out)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode in (0, 1), proc.stderr
        tcp = json.loads(proc.stdout)
        assert tcp == json.loads((out / "sweep.json").read_text())
        assert tcp["meta"]["engine"] == addr and tcp["meta"]["workers"] == 1
        assert "claims, " in proc.stderr  # progress
        serial = sw.sweep(_claims(CHEAP), draws=3, seed=4, scheduler="serial", timeout=120)
        assert tcp["claims"] == serial["claims"]  # and serial == LocalCluster: the test above
        # the time limit inside a Dask worker thread (no SIGALRM there), and a planted failure's transport
        res = sw.sweep([toy.hang, toy.refuted], draws=3, seed=2, scheduler=addr, timeout=2.0)
        ref = sw.sweep([toy.hang, toy.refuted], draws=3, seed=2, scheduler="serial", timeout=2.0)
        assert res["claims"] == ref["claims"]
        assert res["claims"]["menon.sweep_toy_hang"]["error"] == sum(
            sw.draw_params(toy.hang, 2, i)["x"] > 1 for i in range(3))
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in logs:
            f.close()


@pytest.mark.parametrize("argv, words", [
    (["--claim", "nope.nothing"], "unknown claim id"),
    (["--document", "nowhere"], "unknown document"),
    (["--draws", "0"], "--draws 0"),
    (["--scheduler", "tcp://127.0.0.1"], "tcp://HOST:PORT"),
    (["--scheduler", "tcp://127.0.0.1:99999"], "tcp://HOST:PORT"),
    (["--scheduler", "cluster"], "must be local, serial"),
    (["--timeout", "0"], "--timeout"),
    (["--timeout", "nan"], "--timeout"),
    (["--workers", "0"], "--workers"),
    (["--backend", "fortran"], "unknown backend"),
    (["--document", "menon", "--claim", "menon.balanced_invariance"], "not allowed with"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(["sweep", *argv]))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err, err


def test_a_claim_without_a_numeric_check_is_bad_input(capsys):
    from theorems.registry import index
    from theorems.vocabulary import TRUE_VARIANT
    none = next(c for c in index() if not any(k["kind"] == "numeric" and k["variant"] == TRUE_VARIANT[c["status"]]
                                              for k in c["checks"]))
    assert main(["sweep", "--claim", none["id"]]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "nothing to sweep" in err


def test_the_json_has_the_contract_keys(capsys, tmp_path):
    rc = main(["sweep", "--claim", "sander.psi_eps_range", "--draws", "2", "--scheduler", "serial", "--json",
               "--out", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"meta", "claims", "summary"}
    assert {"seed", "draws", "engine"} <= set(out["meta"]) and out["meta"]["seed"] == 0 and out["meta"]["draws"] == 2
    e = out["claims"]["sander.psi_eps_range"]
    assert set(e) == {"status", "certified", "inconclusive", "refuted", "error", "rejected", "failures"}
    assert set(out["summary"]) == {"claims", "draws", "refuted_true", "errors", "inconclusive_rate"}
    assert out["summary"]["claims"] == 1 and out["summary"]["draws"] == 2
    assert rc == (0 if out["summary"]["refuted_true"] == 0 and out["summary"]["errors"] == 0 else 1)
    for f in e["failures"]:
        assert set(f) == {"params", "verdict", "message", "replay"}
    assert json.loads((tmp_path / "sweep.json").read_text()) == out
    lines = [json.loads(x) for x in (tmp_path / "draws.jsonl").read_text().splitlines()]
    assert sorted(r["index"] for r in lines) == [0, 1] and {r["claim"] for r in lines} == {"sander.psi_eps_range"}
    assert math.isfinite(out["summary"]["inconclusive_rate"])


def test_budget_stops_the_sweep_and_the_tally_covers_what_ran():
    """--budget: past the wall budget the draws still out are dropped; draws go index-major, so the draws
    that ran are the first ones of every claim, and meta says the sweep is incomplete."""
    from theorems.sweep import sweep, sweepable
    claims, _ = sweepable(claim_ids=["menon.balanced_invariance", "chen.gauge_invariance"])
    out = sweep(claims, draws=50, seed=3, scheduler="serial", workers=1, budget=1e-9)
    m = out["meta"]
    assert m["complete"] is False and m["budget"] == 1e-9
    runs = m["draws_run"]
    assert sum(runs.values()) == out["summary"]["draws"] < 100
    assert max(runs.values()) - min(runs.values()) <= 1          # index-major: no claim runs ahead
    full = sweep(claims[:1], draws=1, seed=3, scheduler="serial", workers=1, budget=3600)
    assert full["meta"]["complete"] is True and full["meta"]["draws_run"] is None


def test_falsifier_only_parameters_stay_at_the_hypothesis():
    """A parameter only a falsifier varies (Param.for_falsifiers: an unequal block, a perturbation off the
    hypothesis) is never drawn by a sweep of the variant that holds; the claim's list shows its role."""
    from theorems.registry import get_claim
    from theorems.sweep import draw_params
    for cid, name in (("menon.simons_cone", "n"), ("menon.end_to_end_balanced", "G"),
                      ("menon.balanced_dimension", "zeros")):
        claim = get_claim(cid)
        assert next(p for p in claim.params if p.name == name).describe()["role"] == "falsifier"
        for i in range(10):
            assert name not in draw_params(claim, 7, i), (cid, i)
