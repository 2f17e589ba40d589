"""The ``theorems`` command line (DESIGN.md contract).

    theorems list [--document KEY] [--status S] [--json]
    theorems show ID [--json]
    theorems check ID [--variant V] [--param NAME=JSON ...] [--params-file F]
                      [--backend numpy|numba|cupy|mpmath] [--json]
    theorems certify [--profile ci|dev|thorough] [--out DIR] [--document KEY] [--runslow]
                     [--select EXPR] [--seed N]
    theorems report --results FILE --format html|latex|pdf --out PATH
    theorems explore ID
    theorems sweep [--document KEY | --claim ID ...] [--draws N] [--seed S] [--backend B]
                   [--scheduler local|serial|tcp://HOST:PORT] [--workers K] [--timeout SECONDS]
                   [--json] [--out DIR]

Exit codes of ``check``: 0 certified, 1 refuted / inconclusive / error, 2 bad input
(one line on stderr naming what is wrong).  ``check --params-file F`` replays the claim, check,
variant and backend recorded in F (a result record, a counterexample, or a plain object of
parameters); ``--variant`` and ``--backend`` on the command line override the record.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one clear line, exit 2
        sys.stderr.write(f"theorems: error: {message}\n")
        raise SystemExit(2)


def _bad(msg: str) -> int:
    """One line on stderr, exit 2.  A value that cannot be encoded (a lone surrogate from
    argv bytes that are not UTF-8) is written escaped, never as an encoding traceback."""
    line = " ".join(str(msg).split("\n")[:1])
    line = line.encode("utf-8", "backslashreplace").decode("utf-8")
    sys.stderr.write(f"theorems: error: {line}\n")
    return 2


def _nonempty(option: str, value):
    """``--variant ''`` must not silently mean 'the default'."""
    from .claim import ParamError
    if value is not None and not value.strip():
        raise ParamError(f"{option} may not be empty")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="theorems", description="Certify the claims of deep-learning theory documents.")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)
    sub.required = True

    ls = sub.add_parser("list", help="list the claims")
    ls.add_argument("--document", default=None, help="only this document (jacot, vanrossem, menon, chen, sander)")
    ls.add_argument("--json", action="store_true", help="print the claims' records as JSON")
    ls.add_argument("--markdown", action="store_true", help="print a Markdown table (as in the README)")
    ls.add_argument("--status", default=None, metavar="S",
                    help="only claims of this status (holds, erratum, gap, heuristic, empirical)")
    ls.add_argument("--backend", default=None, metavar="B",
                    help="only claims with a numeric or falsifier check that offers backend B (e.g. cupy)")

    sh = sub.add_parser("show", help="describe one claim: statement, location, parameters, checks, notes")
    sh.add_argument("id", help="claim id, e.g. menon.balanced_invariance")
    sh.add_argument("--json", action="store_true", help="print the claim's record as JSON")

    ck = sub.add_parser("check", help="run a claim's numeric check once and print the result record")
    ck.add_argument("id", help="claim id, e.g. menon.balanced_invariance")
    ck.add_argument("--variant", default=None, help="stated, corrected, or a falsifier's name")
    ck.add_argument("--param", action="append", default=[], metavar="NAME=JSON",
                    help="a parameter value as JSON (a number, or nested lists for a matrix)")
    ck.add_argument("--params-file", default=None, metavar="F",
                    help="JSON file of parameters (an object, or a result record / counterexample, "
                         "whose recorded variant and backend are replayed unless given here)")
    ck.add_argument("--backend", default=None, help="numpy (default), numba, cupy or mpmath")
    ck.add_argument("--json", action="store_true", help="print the record as JSON")

    ce = sub.add_parser("certify", help="run every check through pytest and write results.json")
    ce.add_argument("--profile", default="ci", help="Hypothesis profile: ci, dev or thorough")
    ce.add_argument("--out", default="certification", help="output directory")
    ce.add_argument("--document", default=None, help="only this document")
    ce.add_argument("--runslow", action="store_true", help="include checks marked slow")
    ce.add_argument("--backend", default="numpy", metavar="B",
                    help="run every check that offers backend B there (cupy: on the GPU) and the rest on "
                         "the CPU; the report says which ran where (default numpy)")
    ce.add_argument("--select", default=None, metavar="EXPR",
                    help="only checks matching this pytest -k expression (e.g. balanced_invariance)")
    ce.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                    help="run the checks in N processes (pytest-xdist); 0 = one per core")
    ce.add_argument("--rerun-failed", default=None, metavar="DIR",
                    help="rerun only the checks that did not come out as expected in DIR/results.json, "
                         "and write that run's records merged into DIR's (into --out)")
    ce.add_argument("--seed", type=int, default=None, metavar="N",
                    help="Hypothesis seed for the dev/thorough profiles (default: drawn and recorded; "
                         "ci is derandomized)")
    ce.add_argument("--sweep", default=None, metavar="FILE",
                    help="merge a `theorems sweep` tally (sweep.json) into the strength report "
                         "(default: OUT/sweep.json when present)")

    rp = sub.add_parser("report", help="render a report (HTML or LaTeX) from a saved results.json")
    rp.add_argument("--results", required=True, metavar="FILE", help="results.json written by certify")
    rp.add_argument("--format", default="html", help="html, latex, or pdf (LaTeX compiled with pdflatex)")
    rp.add_argument("--out", required=True, metavar="PATH", help="the report file to write")
    rp.add_argument("--sweep", default=None, metavar="FILE",
                    help="merge a `theorems sweep` tally (sweep.json) into the strength report")

    ex = sub.add_parser("explore", help="explore one claim interactively (terminal)")
    ex.add_argument("id", help="claim id, e.g. menon.balanced_invariance")

    sw = sub.add_parser("sweep", help="draw legal parameters over the declared ranges, run the variant "
                                      "that holds, and tally the verdicts (on Dask)")
    pick = sw.add_mutually_exclusive_group()
    pick.add_argument("--document", default=None, help="only this document's claims")
    pick.add_argument("--claim", action="extend", nargs="+", default=None, metavar="ID",
                      help="only these claims (repeatable)")
    sw.add_argument("--draws", type=int, default=20, metavar="N", help="draws per claim (default 20)")
    sw.add_argument("--seed", type=int, default=0, metavar="S", help="sweep seed (default 0)")
    sw.add_argument("--backend", default="numpy", help="numpy (default), numba, cupy or mpmath")
    sw.add_argument("--scheduler", default="local", metavar="local|serial|tcp://HOST:PORT",
                    help="an embedded Dask LocalCluster (default), in-process (serial), or a running "
                         "`dask scheduler`")
    sw.add_argument("--workers", type=int, default=None, metavar="K",
                    help="LocalCluster worker processes (default: the CPU count)")
    sw.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                    help="time limit of one draw (default 120); past it the draw is an error")
    sw.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                    help="wall-time budget of the whole sweep: past it the draws still out are dropped and the "
                         "tally covers the draws that ran (draws go index-major, so every claim gets its first "
                         "k draws); meta.complete says whether all ran")
    sw.add_argument("--memory-limit", type=float, default=4.0, metavar="GB",
                    help="address-space limit of a draw's process (default 4; 0: none)")
    sw.add_argument("--json", action="store_true", help="print the tally as one JSON object")
    sw.add_argument("--out", default=None, metavar="DIR", help="also write DIR/sweep.json")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.cmd == "list":
            return cmd_list(args)
        if args.cmd == "show":
            return cmd_show(args)
        if args.cmd == "check":
            return cmd_check(args)
        if args.cmd == "certify":
            return cmd_certify(args)
        if args.cmd == "report":
            from reports.cli import cmd_report
            return cmd_report(args)
        if args.cmd == "explore":
            from .explore import cmd_explore
            return cmd_explore(args)
        if args.cmd == "sweep":
            return cmd_sweep(args)
    except BrokenPipeError:  # `theorems list | head`
        return 0
    return 2  # pragma: no cover


# ---------------------------------------------------------------------------
def cmd_list(args) -> int:
    """From the index (no claim module imported while it is fresh; see :mod:`theorems.registry`)."""
    from .params import ParamError
    from .registry import index
    from .vocabulary import STATUSES
    if args.status is not None and args.status not in STATUSES:
        return _bad(f"unknown status {args.status!r} (known: {', '.join(STATUSES)})")
    try:
        claims = index(args.document)
    except ParamError as exc:
        return _bad(str(exc))
    if args.status is not None:
        claims = [c for c in claims if c["status"] == args.status]
    if getattr(args, "backend", None) is not None:
        from .vocabulary import BACKENDS
        if args.backend not in BACKENDS:
            return _bad(f"unknown backend {args.backend!r} (known: {', '.join(BACKENDS)})")
        claims = [c for c in claims if any(args.backend in x.get("backends", ()) for x in c["checks"])]
    if args.json:
        print(json.dumps(claims, indent=1))
        return 0
    if args.markdown:
        print("| id | label | lines | status | checks |")
        print("|---|---|---|---|---|")
        for c in claims:
            kinds = ", ".join(k for k in ("symbolic", "numeric", "property", "falsifier", "reproduction")
                              if any(x["kind"] == k for x in c["checks"])) or "none (see notes)"
            a, b = c["location"]["lines"]
            print(f"| `{c['id']}` | {c['label']} | {a}-{b} | {c['status']} | {kinds} |")
        return 0
    for c in claims:
        kinds = ",".join(sorted({k["kind"] for k in c["checks"]}))
        a, b = c["location"]["lines"]
        print(f"{c['id']:<48} {c['status']:<9} {c['label']:<14} l.{a}-{b:<5} [{kinds}]  {c['title']}")
    return 0


def _read_params_file(path: str) -> tuple[dict, dict]:
    """The parameters in ``path`` and what the file records about where they come from.

    ``path`` holds a result record (``{"claim", "check", "variant", ..., "params",
    "counterexample": {"params": ...}}``: the counterexample's parameters when it has them,
    else the record's), a counterexample (``{"params": ..., ...}``), or a plain object of
    parameters.  Returns ``(params, meta)`` with meta's ``claim``, ``check``, ``variant``,
    ``backend`` and ``verdict`` where the file gives them.  Raises ParamError (exit 2)."""
    from .claim import ParamError
    from .params import _short
    if not path.strip():
        raise ParamError("--params-file may not be empty")
    name = _short(path, 120)
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamError(f"params file {name} not found") from None
    except IsADirectoryError:
        raise ParamError(f"params file {name} is a folder, not a file") from None
    except UnicodeDecodeError:
        raise ParamError(f"params file {name} is not UTF-8 text") from None
    except (OSError, ValueError) as exc:  # permission, a name too long, an embedded NUL ...
        raise ParamError(f"cannot read params file {name}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise ParamError(f"params file {name} is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ParamError(f"params file {name} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ParamError(f"params file {name} is not usable: {str(exc).split(';')[0]}") from None
    if not isinstance(data, dict):
        raise ParamError(f"params file {name} must hold a JSON object")
    if "params" not in data and "counterexample" not in data:
        return data, {}  # a plain object of parameters
    meta = {}
    for key in ("claim", "check", "variant", "backend", "verdict"):
        if data.get(key) is not None:
            if not isinstance(data[key], str):
                raise ParamError(f"params file {name}: field {key!r} must be a string, got {_short(data[key])}")
            meta[key] = data[key]
    cex = data.get("counterexample")
    if cex is not None and not isinstance(cex, dict):
        raise ParamError(f"params file {name}: 'counterexample' must be an object, got {_short(cex)}")
    if cex is not None and "params" in cex:
        params, where = cex["params"], "counterexample's 'params'"
        meta["from"] = "counterexample"
    elif "params" in data:
        params, where = data["params"], "'params'"
    else:
        raise ParamError(f"params file {name}: the counterexample has no 'params' and the record none either")
    if not isinstance(params, dict):
        raise ParamError(f"params file {name}: the {where} must be an object of parameters, got {_short(params)}")
    return params, meta


def pytest_command(claim) -> str:
    """The pytest command that runs exactly this claim's checks: its node id, so that no other
    claim matches (``-k`` on a dotted id selects nothing), with ``--runslow`` when a check is slow."""
    mod = sys.modules.get(claim.module)
    path = Path(getattr(mod, "__file__", "") or (claim.module.replace(".", "/") + ".py"))
    try:
        path = path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        pass  # not below the working directory: the absolute path
    slow = " --runslow" if any(c.slow for c in claim.checks) else ""
    return f"pytest {shlex_quote(f'{path}::{claim.id}')}{slow}"


def shlex_quote(s: str) -> str:
    import shlex
    return shlex.quote(s)


def _no_variant_message(claim) -> str:
    """Why ``theorems check`` cannot run ``claim`` (no numeric check, no falsifier), and what can."""
    if not claim.checks:
        return (f"{claim.id} has no checks (status {claim.status}): nothing to run; "
                f"`theorems show {claim.id}` says why")
    kinds = ", ".join(f"{c.kind}[{c.variant}]" + (" (slow)" if c.slow else "") for c in claim.checks)
    return (f"{claim.id} has no numeric check or falsifier for theorems check (its checks: {kinds}); "
            f"run them with `{pytest_command(claim)}`, or see `theorems show {claim.id}`")


def _replay_target(claim, meta: dict, path: str):
    """The variant a params file asks for (None: the file records none), or ParamError."""
    from .claim import ParamError
    from .params import _short
    name = _short(path, 120)
    if "claim" in meta and meta["claim"] != claim.id:
        raise ParamError(f"params file {name} was recorded for {_short(meta['claim'])}, not {claim.id}")
    kind, variant = meta.get("check"), meta.get("variant")
    if kind in ("symbolic", "reproduction"):
        raise ParamError(f"params file {name} records the {kind} check {kind}[{_short(variant)}] of {claim.id}, "
                         f"which `theorems check` does not run: run `{pytest_command(claim)}`")
    if kind == "property":
        return claim.true_variant  # a failing draw replays through the numeric check of the variant that holds
    if kind is not None and kind not in ("numeric", "falsifier"):
        raise ParamError(f"params file {name} records an unknown check kind {_short(kind)}")
    if variant is None:
        return None
    variants = claim.variants()
    if variant not in variants or (kind is not None and variants[variant].kind != kind):
        what = f"{kind}[{_short(variant)[1:-1]}]" if kind else f"variant {_short(variant)}"
        raise ParamError(f"params file {name} records {what}, which {claim.id} does not have "
                         f"(known: {', '.join(f'{c.kind}[{v}]' for v, c in variants.items())})")
    return variant


def _recorded_backend(check, backend: str, notes: list) -> str:
    """The backend a record names, or numpy with a note when this check cannot run it."""
    from .runner import check_backend as _check_backend
    from .vocabulary import BackendError
    try:
        _check_backend(check, backend)
        return backend
    except BackendError as exc:
        notes.append(f"note: the recorded backend {backend!r} cannot run here ({str(exc).splitlines()[0]}); "
                     f"running numpy (give --backend to choose)")
        return "numpy"


def cmd_check(args) -> int:
    from .params import ParamError
    from .registry import get_claim
    from .runner import run_check
    from .params import parse_assignment
    from .record import dumps
    notes: list[str] = []
    replay = None
    try:
        _nonempty("--variant", args.variant)
        _nonempty("--backend", args.backend)
        claim = get_claim(args.id)
        given: dict = {}
        meta: dict = {}
        if args.params_file is not None:
            file_params, meta = _read_params_file(args.params_file)
            given.update(file_params)
        for a in args.param:
            name, value = parse_assignment(a)
            given[name] = value
        variants = claim.variants()
        if not variants:
            raise ParamError(_no_variant_message(claim))
        recorded = _replay_target(claim, meta, args.params_file) if args.params_file is not None else None
        variant = args.variant or recorded or claim.true_variant
        if variant not in variants:
            raise ParamError(f"unknown variant {variant!r} for {claim.id} (known: {', '.join(variants)})")
        check = variants[variant]
        if args.backend is not None:
            backend = args.backend
        elif meta.get("backend"):
            backend = _recorded_backend(check, meta["backend"], notes)
        else:
            backend = "numpy"
        if args.params_file is not None:
            how = [f"{'the counterexample' if meta.get('from') == 'counterexample' else 'the parameters'}"]
            if args.variant and recorded and args.variant != recorded:
                how.append(f"variant {args.variant} given here (the file records {recorded})")
            replay = (f"replaying {claim.id} {check.kind}[{variant}] on {backend} from {args.params_file} "
                      f"({'; '.join(how)})")
        rec = run_check(check, given, backend=backend)
    except (ParamError, ValueError) as exc:  # ValueError: a claim's validator rejecting the instance
        return _bad(str(exc))
    if replay:
        notes.insert(0, replay)
    if meta.get("verdict") in ("certified", "refuted", "inconclusive") and rec["variant"] == meta.get("variant") \
            and rec["verdict"] != meta["verdict"]:
        notes.append(f"note: the file records {meta['verdict']}, this run gives {rec['verdict']}")
    for n in notes:  # with --json, stdout is the record alone
        (sys.stderr if args.json else sys.stdout).write(n + "\n")
    if args.json:
        print(dumps(rec, indent=1))
    else:
        exp = check.expect
        print(f"{rec['claim']} {rec['check']}[{rec['variant']}]: {rec['verdict'].upper()}"
              + (f" (this variant is expected to be {exp})" if rec['verdict'] != exp else ""))
        print(f"  residual {rec['residual']!r}  tolerance {rec['tolerance']!r}  ({rec['seconds']:.3f} s, {rec['backend']})")
        if rec["message"]:
            print(f"  {rec['message']}")
        for k, v in rec["values"].items():
            if k != "traceback":
                print(f"  {k} = {json.dumps(v)[:200]}")
        if rec["counterexample"]:
            print(f"  counterexample: {json.dumps(rec['counterexample'])[:500]}")
    return 0 if rec["verdict"] == "certified" else 1


def cmd_show(args) -> int:
    """``theorems show ID``: statement, location, status, parameters, checks, notes, and for a
    claim that nothing checks by default, why."""
    from .documents import DOCUMENTS
    from .params import ParamError
    from .registry import get_claim
    try:
        claim = get_claim(args.id)
    except ParamError as exc:
        return _bad(str(exc))
    d = claim.describe()
    if args.json:
        print(json.dumps(d, indent=1))
        return 0
    loc = d["location"]
    print(f"{claim.id}: {claim.title}")
    print(f"  {claim.label}, document {claim.document} (seed {DOCUMENTS[claim.document][0]})")
    where = [f"section {loc['section']}" if loc["section"] else "", f"equation {loc['equation']}" if loc["equation"] else "",
             f"seed lines {loc['lines'][0]}-{loc['lines'][1]}"]
    print("  location: " + ", ".join(w for w in where if w))
    print(f"  status: {claim.status}")
    print(f"  statement: {claim.statement}")
    if claim.corrected:
        print(f"  corrected: {claim.corrected}")
    if claim.params:
        print("  parameters:")
        for p in d["params"]:
            rng = p.get("range") or (f"one of {p['choices']}" if p.get("choices") else "")
            default = json.dumps(p["default"])
            default = default if len(default) <= 60 else default[:57] + "..."
            print(f"    {p['name']} ({p['kind']}) default {default}" + (f", range {rng}" if rng else "")
                  + (f": {p['doc']}" if p["doc"] else ""))
    if claim.checks:
        print("  checks:")
        for c in claim.checks:
            extra = [f"expect {c.expect}"]
            if c.kind in ("numeric", "falsifier"):
                extra.append("backends " + ", ".join(c.backends))
            if c.slow:
                extra.append("slow")
            print(f"    {c.kind}[{c.variant}] ({'; '.join(extra)})" + (f": {c.description}" if c.description else ""))
    else:
        print("  checks: none")
    if claim.notes:
        print(f"  notes: {claim.notes}")
    if claim.catalogue:
        print(f"  catalogue: {claim.catalogue}")
    default_run = [c for c in claim.checks if not c.slow]
    if not default_run:
        if not claim.checks:
            why = "it has no checks" + ("; the notes above say why" if claim.notes else " and no notes say why")
        else:
            why = (f"every check is slow ({', '.join(c.nodeid for c in claim.checks)}): "
                   f"run `{pytest_command(claim)}`")
        print(f"  unchecked by default: {why}")
    if claim.variants():
        print(f"  run: theorems check {claim.id} [--variant {'|'.join(claim.variants())}]")
    elif claim.checks:
        print(f"  run: {pytest_command(claim)}")
    return 0


# ---------------------------------------------------------------------------
def cmd_sweep(args) -> int:
    """``theorems sweep``: see :mod:`theorems.sweep` (imported here only: ``list`` stays light)."""
    import math
    from .params import _short
    from .vocabulary import BACKENDS
    if args.draws < 1:
        return _bad(f"--draws {args.draws} must be >= 1")
    if args.seed < 0:
        return _bad(f"--seed {args.seed} must be >= 0")
    if args.workers is not None and args.workers < 1:
        return _bad(f"--workers {args.workers} must be >= 1")
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        return _bad(f"--timeout {args.timeout} must be a positive number of seconds")
    if args.budget is not None and not (math.isfinite(args.budget) and args.budget > 0):
        return _bad(f"--budget {args.budget} must be a positive number of seconds")
    if not (math.isfinite(args.memory_limit) and args.memory_limit >= 0):
        return _bad(f"--memory-limit {args.memory_limit} must be >= 0 GB (0: no limit)")
    if args.backend not in BACKENDS:
        return _bad(f"unknown backend {_short(args.backend)} (known: {', '.join(BACKENDS)})")
    if args.document is not None and not args.document.strip():
        return _bad("--document may not be empty")
    out_dir = None
    if args.out is not None:
        if not args.out.strip():
            return _bad("--out may not be empty")
        out_dir = Path(args.out)
        try:
            if out_dir.exists() and not out_dir.is_dir():
                return _bad(f"--out {_short(args.out)} exists and is not a folder")
            out_dir.mkdir(parents=True, exist_ok=True)
        except (OSError, ValueError) as exc:
            return _bad(f"--out {_short(args.out)}: cannot create the folder ({getattr(exc, 'strerror', None) or exc})")
    from . import sweep as sw
    log = None
    if out_dir is not None:
        try:
            log = open(out_dir / "draws.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as exc:
            return _bad(f"--out {_short(args.out)}: cannot write ({getattr(exc, 'strerror', None) or exc})")

    def on_draw(r):  # each draw as it finishes: an interrupted sweep leaves what ran
        nonlocal log
        try:
            log.write(json.dumps(r) + "\n")
            log.flush()
        except OSError as exc:
            sys.stderr.write(f"theorems: warning: {out_dir / 'draws.jsonl'} no longer written ({exc})\n")
            log.close()
            log = None
    try:
        scheduler = sw.parse_scheduler(args.scheduler)
        claims, skipped = sw.sweepable(args.document, args.claim, args.backend)
        if not claims:
            return _bad("no claim with a numeric check of its variant that holds matches the selection")
        sys.stderr.write(f"sweep: {len(claims)} claims x {args.draws} draws, seed {args.seed}, "
                         f"engine {scheduler}, timeout {args.timeout:g} s\n")
        result = sw.sweep(claims, draws=args.draws, seed=args.seed, backend=args.backend, scheduler=scheduler,
                          workers=args.workers, timeout=args.timeout, memory_gb=args.memory_limit,
                          progress=lambda line: (sys.stderr.write(line + "\n"), sys.stderr.flush()),
                          skipped=skipped, budget=args.budget,
                          on_draw=None if log is None else (lambda r: log is not None and on_draw(r)))
    except sw.SweepError as exc:
        return _bad(str(exc))
    except KeyboardInterrupt:
        where = f"; the draws that finished are in {out_dir / 'draws.jsonl'}" if out_dir is not None else ""
        sys.stderr.write(f"theorems: sweep interrupted{where}\n")
        return 130
    finally:
        if log is not None:
            log.close()
    text = json.dumps(result, indent=1)
    if out_dir is not None:
        (out_dir / "sweep.json").write_text(text + "\n")
        sys.stderr.write(f"sweep: wrote {out_dir / 'sweep.json'}\n")
    print(text if args.json else sw.render_table(result))
    s = result["summary"]
    return 0 if s["refuted_true"] == 0 and s["errors"] == 0 else 1


# ---------------------------------------------------------------------------
def _bad_k_expression(expr: str) -> str | None:
    """Why pytest would reject ``-k expr`` (its usage error would print several lines after the
    run started), or None.  Uses pytest's own parser where this pytest has it where expected."""
    try:
        from _pytest.mark import expression
    except ImportError:  # pragma: no cover - another pytest layout: pytest itself will say
        return None
    errors = tuple(e for e in (getattr(expression, "ParseError", None), SyntaxError) if e)  # pytest < 8.4 / >= 8.4
    try:
        expression.Expression.compile(expr)
    except errors as exc:
        return (str(getattr(exc, "msg", None) or exc).splitlines() or [type(exc).__name__])[0]
    except (RecursionError, ValueError, MemoryError) as exc:
        return type(exc).__name__
    return None


def _versions() -> dict:
    versions = {}
    for mod in ("numpy", "scipy", "sympy", "numba", "hypothesis", "mpmath", "flint", "jinja2", "matplotlib"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover - an optional package missing
            versions[mod] = None
    return versions


def _failed_node_ids(folder: Path) -> tuple[dict, list[str]]:
    """The previous results of ``folder/results.json`` and the pytest node ids of its checks that did
    not come out as expected (a check that should certify and did not, a falsifier that found nothing,
    an error)."""
    from reports.view import expected

    path = folder / "results.json"
    try:
        results = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"--rerun-failed: {path} not found") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"--rerun-failed: {path} is not a results.json ({exc})") from None
    if not (isinstance(results, dict) and isinstance(results.get("records"), list)
            and isinstance(results.get("claims"), list)):
        raise ValueError(f"--rerun-failed: {path} has no records and claims")
    claims = {c.get("id"): c for c in results["claims"] if isinstance(c, dict)}
    modules = {}
    ids = []
    for r in results["records"]:
        c = claims.get(r.get("claim"))
        if r.get("verdict") == expected(r, c):
            continue
        module = (c or {}).get("module") or modules.get(r.get("claim"))
        if module is None:
            from .registry import index
            modules = {x["id"]: x["module"] for x in index()}
            module = modules.get(r.get("claim"))
        if module is None:
            raise ValueError(f"--rerun-failed: claim {r.get('claim')!r} of {path} is not registered")
        item = f"{r['check']}[{r['variant']}]"
        if r["check"] == "numeric" and r.get("backend") not in (None, "numpy"):
            item = f"{r['check']}[{r['variant']}@{r['backend']}]"
        ids.append(f"{module.replace('.', '/')}.py::{r['claim']}::{item}")
    return results, ids


def cmd_certify(args) -> int:
    """Run every check through pytest (progress on the terminal), then write into ``--out``:
    results.json, report.html, report.tex and, when pdflatex is on PATH, report.pdf (compiled
    in that folder).  Exit 0 only when every check came out as expected and every report was
    written; 1 otherwise (a failed check, a report that could not be written or compiled)."""
    import datetime
    import platform
    import random
    import shlex
    import shutil
    import subprocess

    from . import __version__, profiles
    from .documents import DOCUMENTS
    from .registry import all_claims
    from .record import dumps
    from .params import _short
    if args.profile not in profiles.PROFILES:
        return _bad(f"unknown profile {_short(args.profile)} (known: {', '.join(profiles.PROFILES)})")
    # an empty --document or --select would silently mean 'everything'
    if args.document is not None and args.document not in DOCUMENTS:
        return _bad(f"unknown document {_short(args.document)} (known: {', '.join(DOCUMENTS)})")
    if args.select is not None:
        if not args.select.strip():
            return _bad("--select may not be empty")
        why = _bad_k_expression(args.select)
        if why:
            return _bad(f"--select {_short(args.select)} is not a pytest -k expression ({why})")
    if args.seed is not None and not (0 <= args.seed < 2**32):
        return _bad(f"--seed {_short(args.seed)} is out of range [0, 2^32)")
    if args.jobs < 0:
        return _bad(f"--jobs {args.jobs} must be >= 0 (0: one process per core)")
    from .vocabulary import BACKENDS
    backend = getattr(args, "backend", "numpy") or "numpy"
    if backend not in BACKENDS:
        return _bad(f"unknown backend {_short(backend)} (known: {', '.join(BACKENDS)})")
    if backend == "cupy":
        from solvers.xp import cupy_available
        ok, why = cupy_available()
        if not ok:
            return _bad(f"--backend cupy: {why}")
    sweep = None
    if getattr(args, "sweep", None) is not None:  # check strength: a sweep tally to merge (exit 2 if bad)
        from reports.strength import SweepError, load_sweep
        try:
            sweep = load_sweep(args.sweep)
        except SweepError as exc:
            return _bad(str(exc))
    previous, rerun_ids = None, []
    if args.rerun_failed is not None:
        try:
            previous, rerun_ids = _failed_node_ids(Path(args.rerun_failed))
        except ValueError as exc:
            return _bad(str(exc))
        if not rerun_ids:
            print(f"nothing to rerun: every check in {Path(args.rerun_failed) / 'results.json'} came out as expected")
            return 0
    if not args.out.strip():
        return _bad("--out may not be empty")
    try:
        out = Path(args.out).resolve()
        if out.exists() and not out.is_dir():
            return _bad(f"--out {_short(args.out)} exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
        probe = out / "_records.json"
        probe.touch()  # a folder we cannot write to fails here, not after the whole run
    except (OSError, ValueError) as exc:  # below a regular file, a name too long, no permission, a NUL
        return _bad(f"--out {_short(args.out)}: cannot create the output folder "
                    f"({getattr(exc, 'strerror', None) or exc})")
    raw = out / "_records.json"
    if raw.exists():
        raw.unlink()
    pkg = Path(__file__).resolve().parent
    root = pkg.parent
    # ci: derandomized, no example database.  dev/thorough: a seed (given or drawn, and recorded)
    # and the example database <out>/.hypothesis/examples, whose counterexamples replay first.
    seed = None if args.profile == "ci" else (args.seed if args.seed is not None
                                                else random.SystemRandom().randrange(2**32))
    db = None if args.profile == "ci" else out / ".hypothesis" / "examples"
    target = pkg / args.document if args.document and (pkg / args.document).is_dir() else pkg
    targets = [str(root / i) for i in rerun_ids] if rerun_ids else [str(target)]
    cmd = [sys.executable, "-m", "pytest", *targets, "-q", "--no-header", "-p", "no:cacheprovider",
           "-o", "console_output_style=classic",
           f"--hypothesis-profile={args.profile}", f"--results-json={raw}", "--claims-progress",
           "--rootdir", str(root), "-c", str(root / "pyproject.toml") if (root / "pyproject.toml").exists() else os.devnull]
    if seed is not None:
        cmd.append(f"--hypothesis-seed={seed}")
    if not (root / "conftest.py").exists():
        cmd += ["-p", "theorems.pytest_plugin"]
    selectors = [f"{args.document}." if args.document else None, args.select]
    selectors = [s for s in selectors if s]
    if selectors:
        cmd += ["-k", " and ".join(f"({s})" for s in selectors)]
    if backend != "numpy":
        cmd.append(f"--theorems-backend={backend}")
    if args.runslow or rerun_ids:
        cmd.append("--runslow")  # a rerun runs what failed, slow or not
    if args.jobs != 1:
        cmd += ["-n", str(args.jobs) if args.jobs > 0 else "auto"]
    env = dict(os.environ, HYPOTHESIS_PROFILE=args.profile)
    if db is not None:
        env[profiles.DB_ENV] = str(db)
    rc = subprocess.call(cmd, cwd=str(root), env=env)
    if not raw.exists():
        return _bad(f"pytest wrote no records (exit {rc})")
    collected = json.loads(raw.read_text())
    records = collected["records"]
    raw.unlink()
    if rc == 5:
        return _bad("no check matched the selection" + (f" -k {args.select!r}" if args.select else ""))
    if previous is not None:  # merge: the rerun's records replace the previous ones of the same check
        key = lambda r: (r["claim"], r["check"], r["variant"], r.get("backend"))  # noqa: E731
        fresh = {key(r) for r in records}
        records = [r for r in previous["records"] if key(r) not in fresh] + records
        collected["claims"] = previous["claims"]
        args.select = args.document = None
    seen = {r["claim"] for r in records}
    if "claims" in collected:  # described by the pytest run (saves importing every claim again)
        described = [c for c in collected["claims"]
                     if (not args.document or c["document"] == args.document) and (not args.select or c["id"] in seen)]
    else:
        described = [c.describe() for c in all_claims(args.document) if not args.select or c.id in seen]
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "theorems_version": __version__, "python": platform.python_version(),
            "platform": platform.platform(terse=True), "versions": _versions(),
            "profile": args.profile, "seed": "derandomized" if seed is None else seed,
            "hypothesis_database": str(db) if db is not None else None,
            "pytest_exit": rc, "runslow": bool(args.runslow), "document": args.document, "backend": backend,
            "select": args.select,
            "replay": (f"theorems certify --profile {args.profile} --seed {seed}"
                       + (f" --document {args.document}" if args.document else "")
                       + (f" --select {shlex.quote(args.select)}" if args.select else "")
                       + (" --runslow" if args.runslow else "")
                       + (f" --backend {backend}" if backend != "numpy" else "") + f" --out {args.out}")
            if seed is not None else None}
    from reports import summarise, summary_table
    summary = summarise(described, records)
    results = {"meta": meta, "summary": summary, "claims": described, "records": records}
    from reports.strength import SweepError, defect_lines, load_sweep, strength_line, strength_of
    if sweep is None and (out / "sweep.json").is_file():  # `theorems sweep --out` into the same folder
        try:
            sweep = load_sweep(out / "sweep.json")
        except SweepError as exc:
            sys.stderr.write(f"theorems: {exc}; the strength report goes without it\n")
    if sweep is not None:
        results["sweep"] = sweep
    results["strength"] = strength_of(results)
    (out / "results.json").write_text(dumps(results, indent=1))
    print(summary_table(summary))
    print(strength_line(results["strength"]))
    for line in defect_lines(results["strength"]):
        print(f"  strength defect: {line}")
    print(f"wrote {out / 'results.json'}: {len(records)} records")
    results = json.loads((out / "results.json").read_text())  # the reports read what was saved
    problems = 0
    try:
        from reports.html import write_html
        write_html(results, out / "report.html")
        print(f"wrote {out / 'report.html'}")
    except ImportError as exc:
        problems += 1
        sys.stderr.write(f"theorems: report.html not written: the HTML report is unavailable ({exc})\n")
    except Exception as exc:  # noqa: BLE001 - keep the other reports
        problems += 1
        sys.stderr.write(f"theorems: report.html not written: {type(exc).__name__}: {exc}\n")
    from reports.latex import LatexError, compile_pdf, write_latex
    tex = write_latex(results, out / "report.tex")
    print(f"wrote {tex}")
    pdf_path = out / "report.pdf"
    if pdf_path.exists():
        pdf_path.unlink()  # never leave a stale PDF next to a new report.tex
    if shutil.which("pdflatex"):
        try:
            pdf = compile_pdf(tex)
            note = (f" ({len(compile_pdf.switched)} formula(s) shown as source: pdflatex rejected them)"
                    if compile_pdf.switched else "")
            print(f"wrote {pdf}{note}")
        except LatexError as exc:
            problems += 1
            sys.stderr.write(f"theorems: report.pdf not written: {exc}\n")
    else:
        print("report.pdf skipped: pdflatex is not on PATH (compile report.tex with pdflatex to get it)")
    if seed is not None:
        print(f"Hypothesis seed {seed}; counterexamples are kept in {db} and replayed first next time")
    if rc != 0:
        sys.stderr.write(f"theorems: certification failed: some checks did not come out as expected "
                         f"(pytest exit {rc}); see the report\n")
    return 0 if rc == 0 and problems == 0 else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
