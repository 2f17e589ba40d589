"""The ``theorems`` command line (DESIGN.md contract).

    theorems list [--document KEY] [--json]
    theorems check ID [--variant V] [--param NAME=JSON ...] [--params-file F]
                      [--backend numpy|numba|cupy|mpmath] [--json]
    theorems certify [--profile ci|dev|thorough] [--out DIR] [--document KEY] [--runslow]
    theorems report --results FILE --format html|latex --out PATH
    theorems explore ID

Exit codes of ``check``: 0 certified, 1 refuted / inconclusive / error, 2 bad input
(one line on stderr naming what is wrong).
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
    sys.stderr.write(f"theorems: error: {msg}\n")
    return 2


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="theorems", description="Certify the claims of deep-learning theory documents.")
    sub = p.add_subparsers(dest="cmd", parser_class=_Parser)
    sub.required = True

    ls = sub.add_parser("list", help="list the claims")
    ls.add_argument("--document", default=None, help="only this document (jacot, vanrossem, menon, chen, sander)")
    ls.add_argument("--json", action="store_true", help="print the claims' records as JSON")
    ls.add_argument("--markdown", action="store_true", help="print a Markdown table (as in the README)")

    ck = sub.add_parser("check", help="run a claim's numeric check once and print the result record")
    ck.add_argument("id", help="claim id, e.g. menon.balanced_invariance")
    ck.add_argument("--variant", default=None, help="stated, corrected, or a falsifier's name")
    ck.add_argument("--param", action="append", default=[], metavar="NAME=JSON",
                    help="a parameter value as JSON (a number, or nested lists for a matrix)")
    ck.add_argument("--params-file", default=None, metavar="F",
                    help="JSON file of parameters (an object, or a result record / counterexample)")
    ck.add_argument("--backend", default="numpy", help="numpy, numba, cupy or mpmath")
    ck.add_argument("--json", action="store_true", help="print the record as JSON")

    ce = sub.add_parser("certify", help="run every check through pytest and write results.json")
    ce.add_argument("--profile", default="ci", help="Hypothesis profile: ci, dev or thorough")
    ce.add_argument("--out", default="certification", help="output directory")
    ce.add_argument("--document", default=None, help="only this document")
    ce.add_argument("--runslow", action="store_true", help="include checks marked slow")
    ce.add_argument("--select", default=None, metavar="EXPR",
                    help="only checks matching this pytest -k expression (e.g. balanced_invariance)")

    rp = sub.add_parser("report", help="render a report (HTML or LaTeX) from a saved results.json")
    rp.add_argument("--results", required=True, metavar="FILE", help="results.json written by certify")
    rp.add_argument("--format", default="html", help="html or latex")
    rp.add_argument("--out", required=True, metavar="PATH", help="the report file to write")

    ex = sub.add_parser("explore", help="explore one claim interactively (terminal)")
    ex.add_argument("id", help="claim id, e.g. menon.balanced_invariance")
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.cmd == "list":
            return cmd_list(args)
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
    except BrokenPipeError:  # `theorems list | head`
        return 0
    return 2  # pragma: no cover


# ---------------------------------------------------------------------------
def cmd_list(args) -> int:
    from .core import ParamError, all_claims
    try:
        claims = all_claims(args.document)
    except ParamError as exc:
        return _bad(str(exc))
    if args.json:
        print(json.dumps([c.describe() for c in claims], indent=1))
        return 0
    if args.markdown:
        print("| id | label | lines | status | checks |")
        print("|---|---|---|---|---|")
        for c in claims:
            kinds = ", ".join(k for k in ("symbolic", "numeric", "property", "falsifier", "reproduction")
                              if any(x.kind == k for x in c.checks)) or "none (see notes)"
            print(f"| `{c.id}` | {c.label} | {c.lines[0]}-{c.lines[1]} | {c.status} | {kinds} |")
        return 0
    for c in claims:
        kinds = ",".join(sorted({k.kind for k in c.checks}))
        print(f"{c.id:<48} {c.status:<9} {c.label:<14} l.{c.lines[0]}-{c.lines[1]:<5} [{kinds}]  {c.title}")
    return 0


def _params_from_file(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"params file {path!r} not found") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"params file {path!r} is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise ValueError(f"params file {path!r} must hold a JSON object")
    # accept a result record or a counterexample as well as a plain object
    if isinstance(data.get("counterexample"), dict) and "params" in data["counterexample"]:
        data = data["counterexample"]["params"]
    elif "params" in data and isinstance(data["params"], dict):
        data = data["params"]
    return data


def cmd_check(args) -> int:
    from .core import BACKENDS, ParamError, get_claim, run_check
    from .params import parse_assignment
    from .record import dumps
    try:
        claim = get_claim(args.id)
        given: dict = {}
        if args.params_file:
            given.update(_params_from_file(args.params_file))
        for a in args.param:
            name, value = parse_assignment(a)
            given[name] = value
        variants = claim.variants()
        if not variants:
            kinds = sorted({c.kind for c in claim.checks}) or ["none"]
            raise ParamError(f"{claim.id} has no numeric check to run (its checks: {', '.join(kinds)}); "
                             f"run `pytest theorems -k {claim.id}`")
        variant = args.variant or claim.true_variant
        if variant not in variants:
            raise ParamError(f"unknown variant {variant!r} for {claim.id} (known: {', '.join(variants)})")
        if args.backend not in BACKENDS:
            raise ParamError(f"unknown backend {args.backend!r} (known: {', '.join(BACKENDS)})")
        check = variants[variant]
        rec = run_check(check, given, backend=args.backend)
    except (ParamError, ValueError) as exc:
        return _bad(str(exc).splitlines()[0])
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


# ---------------------------------------------------------------------------
def cmd_certify(args) -> int:
    import datetime
    import platform
    import subprocess

    from . import profiles
    from .core import DOCUMENTS, all_claims
    from .record import dumps
    if args.profile not in profiles.PROFILES:
        return _bad(f"unknown profile {args.profile!r} (known: {', '.join(profiles.PROFILES)})")
    if args.document and args.document not in DOCUMENTS:
        return _bad(f"unknown document {args.document!r} (known: {', '.join(DOCUMENTS)})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "_records.json"
    pkg = Path(__file__).resolve().parent
    root = pkg.parent
    cmd = [sys.executable, "-m", "pytest", str(pkg), "-q", "--no-header", "-p", "no:cacheprovider",
           f"--hypothesis-profile={args.profile}", f"--results-json={raw}", "--claims-progress",
           "--rootdir", str(root), "-c", str(root / "pyproject.toml") if (root / "pyproject.toml").exists() else os.devnull]
    if not (root / "conftest.py").exists():
        cmd += ["-p", "theorems.pytest_plugin"]
    selectors = [f"{args.document}." if args.document else None, args.select]
    selectors = [s for s in selectors if s]
    if selectors:
        cmd += ["-k", " and ".join(f"({s})" for s in selectors)]
    if args.runslow:
        cmd.append("--runslow")
    env = dict(os.environ, HYPOTHESIS_PROFILE=args.profile)
    rc = subprocess.call(cmd, cwd=str(root), env=env)
    if not raw.exists():
        return _bad(f"pytest wrote no records (exit {rc})")
    records = json.loads(raw.read_text())["records"]
    raw.unlink()
    versions = {}
    for mod in ("numpy", "scipy", "sympy", "numba", "hypothesis", "mpmath", "flint"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover
            versions[mod] = None
    seen = {r["claim"] for r in records}
    claims = [c for c in all_claims(args.document) if not args.select or c.id in seen]
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(), "versions": versions, "profile": args.profile,
            "seed": "derandomized" if args.profile == "ci" else "random (see Hypothesis blobs)",
            "pytest_exit": rc, "runslow": bool(args.runslow), "document": args.document,
            "select": args.select}
    from reports import summarise, summary_table
    described = [c.describe() for c in claims]
    summary = summarise(described, records)
    (out / "results.json").write_text(dumps({"meta": meta, "summary": summary,
                                             "claims": described,
                                             "records": records}, indent=1))
    print(summary_table(summary))
    print(f"wrote {out / 'results.json'}: {len(records)} records")
    return 0 if rc == 0 else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
