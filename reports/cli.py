"""``theorems report --results FILE --format html|latex|pdf --out PATH [--sweep FILE]``: re-render a saved run.

``--sweep`` merges a ``theorems sweep`` tally (``sweep.json``) into the check-strength section
(reports/strength.py); without it the tally saved in ``results.json`` by ``certify``, if any, is used.

Bad input (a missing or unreadable file, a file that is not a ``results.json`` written by
``theorems certify``, an unknown format, an output path that is a folder) is one line on
stderr and exit status 2.  ``--format pdf`` writes the LaTeX beside PATH (same name, ``.tex``)
and compiles it with pdflatex (exit 1 when pdflatex is missing or fails; its log is kept).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

FORMATS = ("html", "latex", "pdf")


class ResultsError(ValueError):
    """The file is not a results file (the message says why, in one line)."""


def _bad(msg: str) -> int:
    sys.stderr.write(f"theorems: error: {msg}\n")
    return 2


def load_results(path) -> dict:
    """Read and check a ``results.json``: an object with a ``records`` list of record objects
    (and, when present, ``claims`` a list, ``meta`` and ``summary`` objects)."""
    p = Path(path)
    if not p.exists():
        raise ResultsError(f"results file {str(p)!r} not found")
    if p.is_dir():
        raise ResultsError(f"results file {str(p)!r} is a folder")
    try:
        data = json.loads(p.read_text())
    except UnicodeDecodeError:
        raise ResultsError(f"results file {str(p)!r} is not text") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"results file {str(p)!r} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:  # arrays nested deeper than the parser's stack (how deep depends on the caller's)
        raise ResultsError(f"results file {str(p)!r} nests its JSON too deeply to be a results.json") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ResultsError(f"results file {str(p)!r} is not a results.json ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("records"), list):
        raise ResultsError(f"{str(p)!r} is not a results.json written by `theorems certify` "
                           f"(expected an object with a 'records' list)")
    for key, typ in (("claims", list), ("meta", dict), ("summary", dict), ("sweep", dict), ("strength", dict)):
        if key in data and not isinstance(data[key], typ):
            raise ResultsError(f"{str(p)!r} is not a results.json: '{key}' must be a{'n object' if typ is dict else ' list'}")
    for i, r in enumerate(data["records"]):
        if not isinstance(r, dict) or not {"claim", "check", "variant", "verdict"} <= set(r):
            raise ResultsError(f"{str(p)!r} is not a results.json: record {i} is not a result record")
    data.setdefault("claims", [])
    data.setdefault("meta", {})
    data.setdefault("summary", {})
    return data


def cmd_report(args) -> int:
    fmt = (args.format or "").lower()
    if fmt not in FORMATS:
        return _bad(f"unknown format {args.format!r} (known: {', '.join(FORMATS)})")
    try:
        results = load_results(args.results)
    except ResultsError as exc:
        return _bad(str(exc))
    if getattr(args, "sweep", None) is not None:  # a sweep tally merged into the strength report
        from .strength import SweepError, load_sweep
        try:
            results["sweep"] = load_sweep(args.sweep)
        except SweepError as exc:
            return _bad(str(exc))
    out = Path(args.out)
    if out.is_dir():
        return _bad(f"--out {str(out)!r} is a folder; give the report's file name")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _bad(f"cannot create {str(out.parent)!r}: {exc.strerror}")
    if fmt == "html":
        try:
            from .html import write_html
        except ImportError as exc:  # pragma: no cover - reports.html ships with the package
            sys.stderr.write(f"theorems: error: the HTML report is unavailable ({exc})\n")
            return 1
        write_html(results, out)
        print(f"wrote {out}")
        return 0
    from .latex import LatexError, compile_pdf, write_latex
    tex = out if fmt == "latex" else out.with_suffix(".tex")
    write_latex(results, tex)
    if fmt == "latex":
        print(f"wrote {tex}")
        return 0
    try:
        pdf = compile_pdf(tex)
    except LatexError as exc:
        sys.stderr.write(f"theorems: error: {exc}\n")
        return 1
    if pdf is None:
        sys.stderr.write(f"theorems: error: pdflatex is not on PATH; wrote {tex} only\n")
        return 1
    if pdf != out.resolve():
        pdf.replace(out)
    print(f"wrote {tex} and {out}")
    return 0
