"""pytest integration: ``pytest theorems`` collects every check of every claim as its own item.

Items are named ``<claim id>::<kind>[<variant>]`` and carry the markers of DESIGN.md
(``symbolic``, ``numeric``, ``property``, ``falsifier``, ``reproduction``, ``slow``,
``gpu``).  Slow items run only with ``--runslow`` or the ``thorough`` profile.  The
counterexamples that falsifiers find are printed at the end of the run, and every
record can be written to a JSON file with ``--results-json PATH``.

The hooks are imported by the repository's root ``conftest.py``.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from . import profiles
from .record import dumps

_RECORDS_KEY = pytest.StashKey[list]()
_PROGRESS_KEY = pytest.StashKey[dict]()


def pytest_addoption(parser):
    group = parser.getgroup("theorems")
    group.addoption("--runslow", action="store_true", default=False,
                    help="also run checks marked slow (heavy reproductions)")
    group.addoption("--results-json", default=None, metavar="PATH",
                    help="write every check's result record to PATH")
    group.addoption("--claims-progress", action="store_true", default=False,
                    help="show progress: checks done / total, the current check, failures so far "
                         "(one updating line on a terminal, one line per check otherwise; "
                         "used by `theorems certify`)")


_CONFIG: dict = {}


def pytest_configure(config):
    _CONFIG["config"] = config
    config.stash[_RECORDS_KEY] = []
    config.stash[_PROGRESS_KEY] = {"done": 0, "failed": 0, "total": 0}


def _theorems_root() -> Path:
    return Path(__file__).resolve().parent


def pytest_collect_file(file_path: Path, parent):
    root = _theorems_root()
    try:
        rel = file_path.resolve().relative_to(root)
    except ValueError:
        return None
    parts = rel.parts
    if len(parts) != 2 or file_path.suffix != ".py" or parts[1].startswith("_"):
        return None
    from .documents import DOCUMENTS
    if parts[0] not in DOCUMENTS:
        return None
    return ClaimFile.from_parent(parent, path=file_path)


class ClaimFile(pytest.File):
    def collect(self):
        import importlib

        from .registry import registry
        rel = self.path.resolve().relative_to(_theorems_root())
        modname = "theorems." + ".".join(rel.with_suffix("").parts)
        importlib.import_module(modname)
        for claim in [c for c in registry.values() if c.module == modname]:
            yield ClaimNode.from_parent(self, name=claim.id, claim=claim)


class ClaimNode(pytest.Collector):
    def __init__(self, *, claim, **kw):
        super().__init__(**kw)
        self.claim = claim

    def collect(self):
        for check in self.claim.checks:
            # a numeric check runs once per backend it offers (NumPy first): the Numba kernel and
            # the CuPy path are held to the same tolerance as the NumPy reference
            backends = sorted(check.backends, key=lambda b: b != "numpy") if check.kind == "numeric" else ["numpy"]
            for i, b in enumerate(backends):
                name = check.nodeid if i == 0 else f"{check.kind}[{check.variant}@{b}]"
                yield CheckItem.from_parent(self, name=name, check=check, backend=b)


class CheckFailed(Exception):
    pass


class CheckItem(pytest.Item):
    def __init__(self, *, check, backend="numpy", **kw):
        super().__init__(**kw)
        self.check = check
        self.backend = backend
        self.add_marker(check.kind)
        if check.slow:
            self.add_marker("slow")
        if check.gpu or backend == "cupy":
            self.add_marker("gpu")
        self.record = None

    def runtest(self):
        from .runner import run_check
        if self.check.slow and not (self.config.getoption("--runslow") or profiles.current() == "thorough"):
            pytest.skip("slow check: run with --runslow or --hypothesis-profile thorough")
        if self.check.gpu or self.backend == "cupy":
            from solvers.xp import cupy_available
            ok, why = cupy_available()
            if not ok:
                pytest.skip(f"gpu check: {why}")
        rec = run_check(self.check, backend="cupy" if self.check.gpu else self.backend)
        self.record = rec
        self.config.stash[_RECORDS_KEY].append(rec)
        self.user_properties.append(("record", rec))
        if rec["verdict"] != self.check.expect:
            raise CheckFailed(rec)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, CheckFailed):
            rec = excinfo.value.args[0]
            lines = [f"{rec['claim']} {rec['check']}[{rec['variant']}]: expected {self.check.expect}, "
                     f"got {rec['verdict']}",
                     f"  residual  = {rec['residual']!r}", f"  tolerance = {rec['tolerance']!r}",
                     f"  params    = {json.dumps(rec['params'])[:500]}",
                     f"  message   = {rec['message']}"]
            if rec["counterexample"]:
                lines.append(f"  counterexample = {json.dumps(rec['counterexample'])[:1500]}")
            if rec["check"] in ("numeric", "property", "falsifier"):
                lines.append(f"  replay: {replay_command(rec)}")
            tb = rec["values"].get("traceback") if isinstance(rec["values"], dict) else None
            if tb:
                lines.append("  traceback:\n" + tb)
            elif rec["values"]:
                lines.append(f"  values    = {json.dumps(rec['values'])[:1500]}")
            return "\n".join(lines)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        c = self.check.claim
        return self.path, c.lines[0], f"{c.id} {self.check.nodeid}"


def pytest_collection_finish(session):
    prog = session.config.stash.get(_PROGRESS_KEY, None)
    if prog is not None:
        prog["total"] = sum(isinstance(i, CheckItem) for i in session.items)
        prog["t0"] = time.perf_counter()


def _progress_line(prog: dict, current: str, state: str) -> str:
    elapsed = time.perf_counter() - prog.get("t0", time.perf_counter())
    return (f"[{prog['done']}/{prog['total']} checks | failures so far: {prog['failed']} | {elapsed:.0f} s] "
            f"{current}: {state}")


def _progress_show(config, line: str, permanent: bool) -> None:
    """On a terminal one status line is rewritten in place (failures are printed above it and
    stay); otherwise (a pipe, a CI log) each finished check gets a plain line of its own."""
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is None:
        return
    prog = config.stash[_PROGRESS_KEY]
    if tr.isatty():
        width = max(20, tr._tw.fullwidth - 1)
        if permanent:
            tr.rewrite("", erase=True)
            tr._tw.write("\r" + line + "\n")
            prog["status_shown"] = False
        else:
            tr.rewrite(line[:width], erase=True)
            prog["status_shown"] = True
        tr._tw.flush()
    elif permanent:
        tr.write_line(line)


def pytest_runtest_logstart(nodeid, location):
    """Called outside output capture: on a terminal, show which check is running."""
    config = _CONFIG.get("config")
    if config is None or not config.getoption("--claims-progress") or not _is_claim(nodeid):
        return
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and tr.isatty():
        parts = nodeid.split("::")
        _progress_show(config, _progress_line(config.stash[_PROGRESS_KEY], " ".join(parts[1:3]), "running"),
                       permanent=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if isinstance(item, CheckItem) and rep.when == "call" and item.config.getoption("--claims-progress"):
        prog = item.config.stash[_PROGRESS_KEY]
        prog["done"] += 1
        if rep.failed:
            prog["failed"] += 1
        state = item.record["verdict"] if item.record else rep.outcome
        if rep.failed:
            state = f"FAILED ({state}, expected {item.check.expect})"
        tr = item.config.pluginmanager.get_plugin("terminalreporter")
        tty = tr is not None and tr.isatty()
        line = _progress_line(prog, f"{item.check.claim.id} {item.name}", state)
        _progress_show(item.config, line, permanent=rep.failed or not tty)
        if tty and rep.failed:  # the failure stays printed; the status line goes on below it
            _progress_show(item.config, line, permanent=False)


def pytest_report_teststatus(report, config):
    """With --claims-progress, the progress line replaces pytest's dot for each claim check."""
    if config.getoption("--claims-progress") and report.when == "call" and _is_claim(report.nodeid):
        return report.outcome, "", report.outcome.upper()
    return None


def _is_claim(nodeid: str) -> bool:
    from .documents import DOCUMENTS
    parts = nodeid.split("::")
    return len(parts) >= 2 and parts[1].split(".")[0] in DOCUMENTS


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    prog = config.stash.get(_PROGRESS_KEY, None)
    if prog and prog.get("status_shown"):  # end the in-place status line
        terminalreporter._tw.write("\n")
        prog["status_shown"] = False
    recs = config.stash.get(_RECORDS_KEY, [])
    found = [r for r in recs if r["check"] == "falsifier" and r["verdict"] == "refuted"]
    if found:
        terminalreporter.section("counterexamples found by falsifiers")
        for r in found:
            cex = json.dumps(r["counterexample"])
            if len(cex) > 240:
                cex = cex[:237] + "..."
            terminalreporter.write_line(f"{r['claim']} [{r['variant']}] residual={_fmt(r['residual'])} "
                                        f"> tol={_fmt(r['tolerance'])}: {cex}")
            terminalreporter.write_line(f"    replay: {replay_command(r)}")
    path = config.getoption("--results-json")
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        from .registry import registry
        claims = [c.describe() for c in registry.values()]
        Path(path).write_text(dumps({"profile": profiles.current(), "records": recs, "claims": claims},
                                    indent=1))


def _fmt(x):
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def replay_command(rec: dict) -> str:
    """The command line that re-runs a record's check at its parameters."""
    import shlex
    parts = ["theorems", "check", rec["claim"], "--variant", rec["variant"]]
    cex = rec.get("counterexample") or {}
    params = cex.get("params", rec["params"]) if isinstance(cex, dict) else rec["params"]
    for k, v in params.items():
        parts += ["--param", f"{k}={json.dumps(v, separators=(',', ':'))}"]
    return " ".join(shlex.quote(p) for p in parts)
