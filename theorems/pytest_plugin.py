"""pytest integration: ``pytest theorems`` collects every check of every claim as its own item.

Items are named ``<claim id>::<kind>[<variant>]`` and carry the markers of DESIGN.md
(``symbolic``, ``numeric``, ``property``, ``falsifier``, ``reproduction``, ``slow``,
``gpu``).  Slow items run only with ``--runslow`` or the ``thorough`` profile.  The
counterexamples that falsifiers find are printed at the end of the run, and every
record can be written to a JSON file with ``--results-json PATH``.

Registered as a ``pytest11`` entry point (``pyproject.toml``), so an installed ``theorems``
brings it to every pytest run.  Records travel in each report's ``user_properties`` as JSON, so
``pytest -n N`` (pytest-xdist) merges them on the controller, and ``--junitxml`` carries each
record as a ``<property name="record">`` of its test case.  Expected counterexamples collapse to a
count (``--counterexamples`` lists them); real failures, with their replay commands, and the summary
come last.
"""
from __future__ import annotations

import os

# threaded BLAS on tiny matrices under load was 25x slower; set before NumPy is imported
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import json  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from . import profiles  # noqa: E402
from .documents import KEYS  # noqa: E402
from .record import dumps  # noqa: E402
from .vocabulary import ARRAY_API_BACKENDS  # noqa: E402

_RECORDS_KEY = pytest.StashKey[list]()
_PROGRESS_KEY = pytest.StashKey[dict]()
_CLAIMS_KEY = pytest.StashKey[dict]()


def pytest_addoption(parser):
    group = parser.getgroup("theorems")
    group.addoption("--theorems-backend", default="numpy", metavar="B",
                    help="run every check that offers backend B there alone (cupy: on the device); "
                         "the rest run on the CPU as usual")
    group.addoption("--runslow", action="store_true", default=False,
                    help="also run checks marked slow (heavy reproductions)")
    group.addoption("--results-json", default=None, metavar="PATH",
                    help="write every check's result record to PATH")
    group.addoption("--counterexamples", action="store_true", default=False,
                    help="list every counterexample the falsifiers found (by default: a count; all of "
                         "them are in --results-json and the reports)")
    group.addoption("--claims-progress", action="store_true", default=False,
                    help="show progress: checks done / total, the current check, failures so far "
                         "(one updating line on a terminal, one line per check otherwise; "
                         "used by `theorems certify`)")


_CONFIG: dict = {}


def pytest_configure(config):
    _CONFIG["config"] = config
    config.stash[_RECORDS_KEY] = []
    config.stash[_PROGRESS_KEY] = {"done": 0, "failed": 0, "total": 0}


def _claim_module(file_path: Path) -> str | None:
    """``theorems.<doc>.<name>`` for a claim module's file (``theorems/<doc>/<name>.py``), else None."""
    if file_path.suffix != ".py" or file_path.name.startswith("_"):
        return None
    doc, pkg = file_path.parent.name, file_path.parent.parent.name
    if pkg != "theorems" or doc not in KEYS:
        return None
    return f"theorems.{doc}.{file_path.stem}"


def pytest_collect_file(file_path: Path, parent):
    if _claim_module(file_path) is None:
        return None
    return ClaimFile.from_parent(parent, path=file_path)


class ClaimFile(pytest.File):
    def collect(self):
        import importlib

        from .registry import registry
        modname = _claim_module(self.path)
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
            # (a falsifier offering the array API runs there too: its search must find the counterexample
            # through the same array-API code)
            backends = (sorted(check.backends, key=lambda b: b != "numpy")
                        if check.kind == "numeric" or (check.kind == "falsifier"
                                                       and set(check.backends) & set(ARRAY_API_BACKENDS))
                        else ["numpy"])
            if check.kind == "falsifier":
                backends = [b for b in backends if b in ("numpy", *ARRAY_API_BACKENDS)]
            only = self.config.getoption("--theorems-backend", "numpy")
            if only != "numpy" and only in check.backends:
                backends = [only]  # certify --backend cupy: a check that offers it runs there alone
            for i, b in enumerate(backends):
                name = check.nodeid if b == "numpy" else f"{check.kind}[{check.variant}@{b}]"
                # the node id given as a string, so that pytest parses "kind[variant]" into name and
                # params as it does when it reads the --lf cache (a bracketed child name would not match)
                yield CheckItem.from_parent(self, name=name, check=check, backend=b,
                                            nodeid=f"{self.nodeid}::{name}")


#: per-item time guard of a slow check (pytest-timeout; the ini's `timeout` guards the rest)
SLOW_TIMEOUT = 6 * 3600


class CheckFailed(Exception):
    pass


#: this process's NumPy records of the checks that offer an array-API backend (the reference their
#: array-api-strict and CuPy items must agree with; under xdist a worker without it reruns NumPy)
_NUMPY_RECORDS: dict = {}


def _agree_with_numpy(check, rec: dict) -> dict:
    """The array-API item's record, held to the NumPy record of the same check at the same parameters:
    the same verdict, and residuals that differ by at most the check's tolerance (its error model: what
    the two backends may round differently).  A disagreement turns the record into verdict ``error``."""
    from .runner import run_check
    ref = _NUMPY_RECORDS.get((check.claim.id, check.nodeid))
    if ref is None or ref["params"] != rec["params"]:
        ref = run_check(check, rec["params"] if check.kind != "falsifier" else None, backend="numpy")
    agree = {"numpy_verdict": ref["verdict"], "numpy_residual": ref["residual"]}
    r, r0, tol = rec["residual"], ref["residual"], ref["tolerance"]
    why = None
    if ref["verdict"] != rec["verdict"]:
        why = f"NumPy gives {ref['verdict']}, {rec['backend']} gives {rec['verdict']}"
    elif all(isinstance(x, (int, float)) and math.isfinite(x) for x in (r, r0, tol)):
        agree["difference"] = abs(r - r0)
        if check.kind != "falsifier" and abs(r - r0) > tol:
            why = (f"residuals differ by {abs(r - r0):.3g}, more than the tolerance {tol:.3g} "
                   f"(NumPy {r0:.6g}, {rec['backend']} {r:.6g})")
    rec = dict(rec)
    vals = dict(rec["values"]) if isinstance(rec.get("values"), dict) else {"values": rec.get("values")}
    vals["numpy_agreement"] = agree
    rec["values"] = vals
    if why:
        rec.update(verdict="error", message=f"disagrees with the NumPy path: {why}; {rec['message']}")
    return rec


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
        if check.slow and self.config.pluginmanager.hasplugin("timeout"):
            self.add_marker(pytest.mark.timeout(SLOW_TIMEOUT))  # the default per-item guard is for ci
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
        if self.backend == "array_api_strict":
            try:
                import array_api_strict  # noqa: F401
            except ImportError as exc:
                pytest.skip(f"array-api-strict is not installed ({exc})")
        rec = run_check(self.check, backend="cupy" if self.check.gpu else self.backend)
        if self.backend == "numpy" and set(self.check.backends) & set(ARRAY_API_BACKENDS):
            _NUMPY_RECORDS[(self.check.claim.id, self.check.nodeid)] = rec
        if self.backend in ARRAY_API_BACKENDS and rec["verdict"] == self.check.expect:
            rec = _agree_with_numpy(self.check, rec)
        self.record = rec
        # JSON, so that xdist carries it to the controller and --junitxml writes it as it is
        self.user_properties.append(("record", dumps(rec)))
        self.user_properties.append(("expect", self.check.expect))  # a mutant expects refuted too
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
            lines.append(f"  replay: {replay_command(rec, self.check.claim.describe())}")
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
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: describe the claims it collected for the controller
        from .registry import registry
        workeroutput["theorems_claims"] = dumps([c.describe() for c in registry.values()])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """xdist controller: every worker collects every item; count them once."""
    prog = node.config.stash.get(_PROGRESS_KEY, None)
    if prog is not None:
        prog["total"] = sum(_is_claim(i) for i in ids)
        prog.setdefault("t0", time.perf_counter())


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """xdist controller: a worker finished; keep the claims it described."""
    out = getattr(node, "workeroutput", None) or {}
    if "theorems_claims" in out:
        claims = node.config.stash.setdefault(_CLAIMS_KEY, {})
        for c in json.loads(out["theorems_claims"]):
            claims[c["id"]] = c


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


def _record_of(report) -> dict | None:
    for name, value in getattr(report, "user_properties", ()):
        if name == "record":
            return json.loads(value) if isinstance(value, str) else value
    return None


def pytest_runtest_logreport(report):
    """Collect each check's record (here, so that it works alike in one process and on the xdist
    controller, where the workers' reports arrive) and advance the progress line."""
    config = _CONFIG.get("config")
    if config is None or report.when != "call" or not _is_claim(report.nodeid):
        return
    rec = _record_of(report)
    if rec is not None:
        config.stash[_RECORDS_KEY].append(rec)
    if not config.getoption("--claims-progress"):
        return
    prog = config.stash[_PROGRESS_KEY]
    prog["done"] += 1
    if report.failed:
        prog["failed"] += 1
    state = rec["verdict"] if rec else report.outcome
    if report.failed:
        expect = dict(getattr(report, "user_properties", ())).get("expect", "?")
        state = f"FAILED ({state}, expected {expect})" if rec else "FAILED"
    tr = config.pluginmanager.get_plugin("terminalreporter")
    tty = tr is not None and tr.isatty()
    parts = report.nodeid.split("::")
    line = _progress_line(prog, " ".join(parts[1:3]), state)
    _progress_show(config, line, permanent=report.failed or not tty)
    if tty and report.failed:  # the failure stays printed; the status line goes on below it
        _progress_show(config, line, permanent=False)


def pytest_report_teststatus(report, config):
    """With --claims-progress, the progress line replaces pytest's dot for each claim check."""
    if config.getoption("--claims-progress") and report.when == "call" and _is_claim(report.nodeid):
        return report.outcome, "", report.outcome.upper()
    return None


def _is_claim(nodeid: str) -> bool:
    parts = nodeid.split("::")
    return len(parts) >= 2 and parts[1].split(".")[0] in KEYS


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After pytest's failure reports: the falsifiers' counterexamples as one line (or listed with
    ``--counterexamples``); pytest's short summary follows, so real failures and the counts end the
    output."""
    prog = config.stash.get(_PROGRESS_KEY, None)
    if prog and prog.get("status_shown"):  # end the in-place status line
        terminalreporter._tw.write("\n")
        prog["status_shown"] = False
    recs = config.stash.get(_RECORDS_KEY, [])
    found = [r for r in recs if r["check"] == "falsifier" and r["verdict"] == "refuted"]
    if found and config.getoption("--counterexamples"):
        terminalreporter.section("counterexamples found by falsifiers")
        for r in found:
            cex = json.dumps(r["counterexample"])
            if len(cex) > 240:
                cex = cex[:237] + "..."
            terminalreporter.write_line(f"{r['claim']} [{r['variant']}] residual={_fmt(r['residual'])} "
                                        f"> tol={_fmt(r['tolerance'])}: {cex}")
            terminalreporter.write_line(f"    replay: {replay_command(r)}")
    elif found:
        terminalreporter.write_line(f"{len(found)} falsifiers found their counterexamples, as they must "
                                    f"(--counterexamples lists them; --results-json and the reports keep them)")
    path = config.getoption("--results-json")
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        from .registry import registry  # the claims of every module collected (for `theorems certify`)
        claims = {c.id: c.describe() for c in registry.values()}
        claims.update(config.stash.get(_CLAIMS_KEY, {}))  # described by xdist workers
        Path(path).write_text(dumps({"profile": profiles.current(), "records": recs,
                                     "claims": list(claims.values())}, indent=1))


def _fmt(x):
    return f"{x:.3g}" if isinstance(x, float) else str(x)


def replay_command(rec: dict, claim: dict | None = None) -> str:
    """The command line that re-runs a record's check at its parameters (:mod:`reports.view`)."""
    from reports.view import replay_command as view_replay
    return view_replay(rec, claim)
