"""The HTML verification report: one self-contained file, readable offline.

``render_html(results)`` turns a parsed ``results.json`` (``{"meta", "summary", "claims",
"records"}``, written by ``theorems certify``) into a page; ``write_html(results, path)`` writes it.
Formulas are MathML (converted here, drawn by the browser, no script or font is fetched), plots
are inline SVG, the style sheet and the small filter script are inline.  Every string taken from
the results is escaped (Jinja2 autoescape); only the MathML and SVG produced here are inserted
as markup.

Reads plain dicts only; imports nothing from ``theorems``.
"""
from __future__ import annotations

import base64
import html as _html
import json
import math
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from . import mathml, plots, strength as strength_mod, view
from .view import ratio
from .summary import COLUMNS, summarise

__all__ = ["render_html", "write_html", "build_context", "replay_command", "pretty_json",
           "claim_outcome", "DOCUMENT_TITLES"]

TEMPLATE = "report.html.j2"
TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"

#: the documents in the order of DESIGN.md, with the titles of the README
DOCUMENT_TITLES = {
    "jacot": "Jacot & Kaiser, leaky ResNets (Hamiltonian of representation paths)",
    "vanrossem": "van Rossem & Saxe, effective theory of the two-point interaction",
    "menon": "Menon, the geometry of the deep linear network",
    "chen": "Chen, effective gradient flow of cumulative weights and biases",
    "sander": "Sander (thesis), ResNets vs neural ODEs, Momentum ResNets, Sinkformers",
}
COLUMN_TITLES = {"claims": "claims", "certified": "certified", "refuted": "refuted",
                 "failed": "failed", "inconclusive": "inconclusive", "unchecked": "unchecked",
                 "errata": "errata", "gaps": "gaps", "falsifiers_caught": "falsifiers caught"}
COLUMN_HELP = {
    "claims": "claims of the document in this run",
    "certified": "claims whose every check came out as expected",
    "refuted": "claims with a check of a statement that should hold come out refuted",
    "failed": "claims with a check that broke, or a falsifier that found no counterexample",
    "inconclusive": "claims with a check whose hypothesis failed on the instance",
    "unchecked": "claims without a record in this run (e.g. only slow checks, skipped)",
    "errata": "claims whose printed statement is wrong (status erratum): "
              "the printed form is a falsifier that must be refuted, the corrected form is certified",
    "gaps": "claims whose printed statement is unproven as printed (status gap): the completed form is certified",
    "falsifiers_caught": "falsifier checks that found their counterexample (refuted, as they must)",
}
KIND_ORDER = ("symbolic", "numeric", "property", "falsifier", "reproduction")
MAX_JSON = 6000          # characters of a values / params dump shown before it is cut


# ---------------------------------------------------------------------------
# small formatting helpers
def fmt_num(v) -> str:
    """A residual / tolerance / value as short text (3 significant digits)."""
    if v is None:
        return "\u2014"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "\u221e" if v > 0 else "\u2212\u221e"
        if v == 0:
            return "0"
        a = abs(v)
        return f"{v:.3g}" if 1e-3 <= a < 1e5 else f"{v:.2e}"
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("inf", "+inf"):
            return "\u221e"
        if low == "-inf":
            return "\u2212\u221e"
        if low == "nan":
            return "NaN"
        return v
    return str(v)


def _float(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf", "nan"):
        return float(v.strip().lower())
    return None


def gauge(q) -> dict | None:
    """Position (0..100 %) of log10(residual/tolerance) on a -16..+8 scale, the tolerance at 2/3."""
    if q is None:
        return None
    lo, hi = -16.0, 8.0
    if q <= 0:
        x = lo
    elif math.isinf(q):
        x = hi
    else:
        x = min(max(math.log10(q), lo), hi)
    return {"pos": round(100 * (x - lo) / (hi - lo), 1), "one": round(100 * (0 - lo) / (hi - lo), 1),
            "over": q > 1}


def pretty_json(obj, width: int = 96, indent: int = 0) -> str:
    """JSON laid out for reading: short things on one line, matrices one row a line."""
    flat = json.dumps(obj, separators=(", ", ": "), ensure_ascii=False)
    pad = " " * indent
    if len(flat) + indent <= width or not isinstance(obj, (dict, list)) or not obj:
        return flat
    inner = " " * (indent + 1)
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: "
                 + pretty_json(v, width, indent + 2 + len(json.dumps(str(k), ensure_ascii=False))).lstrip()
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if all(not isinstance(x, (dict, list)) for x in obj):   # a vector: fill lines
        lines, cur = [], ""
        for s in (json.dumps(x, ensure_ascii=False) for x in obj):
            if cur and len(cur) + len(s) + 2 + indent + 1 > width:
                lines.append(cur + ",")
                cur = s
            else:
                cur = f"{cur}, {s}" if cur else s
        lines.append(cur)
        return "[" + ("\n" + inner).join(lines) + "]"
    rows = [pretty_json(x, width, indent + 1) for x in obj]
    return "[" + (",\n" + inner).join(rows) + "]"


def _cut(s: str, n: int = MAX_JSON) -> str:
    return s if len(s) <= n else s[:n] + f"\n\u2026 ({len(s) - n} more characters in results.json)"


def _expected(check: dict) -> str:
    return view.expected({"check": check.get("kind"), "variant": check.get("variant")}, {"checks": [check]})


claim_outcome = view.claim_outcome


# ---------------------------------------------------------------------------
# replay commands
def replay_command(rec: dict, claim: dict | None = None) -> dict:
    """How to re-run a record (:func:`reports.view.replay`): ``{"command", "file_name", "file_json", "note"}``."""
    return view.replay(rec, claim)


def _data_uri(text: str) -> str:
    return "data:application/json;charset=utf-8;base64," + base64.b64encode(text.encode()).decode()


# ---------------------------------------------------------------------------
def _plot_html(spec, label: str) -> dict:
    try:
        svg = plots.render_plot(spec, "svg")
    except plots.PlotError as exc:
        return {"svg": None, "error": f"plot not drawn: {exc}"}
    except Exception as exc:  # matplotlib itself: never break the report
        return {"svg": None, "error": f"plot not drawn: {type(exc).__name__}: {str(exc)[:200]}"}
    return {"svg": Markup(plots.inline_svg(svg, label=label)), "error": None}


def _check_view(rec: dict, claim: dict, spec: dict | None) -> dict:
    expect = view.expected(rec, {"checks": [spec]} if spec else None)
    verdict = rec.get("verdict", "error")
    ok = verdict == expect
    values = rec.get("values") if isinstance(rec.get("values"), dict) else {}
    plot_specs = []
    if "plot" in values:
        plot_specs.append(values["plot"])
    if isinstance(values.get("plots"), list):
        plot_specs.extend(values["plots"])
    shown = {k: v for k, v in values.items() if k not in ("plot", "plots", "traceback")}
    q = ratio(rec.get("residual"), rec.get("tolerance"))
    weak = None
    if rec.get("check") == "falsifier" and verdict == "refuted":
        badge = "refuted \u2713 caught"
        vclass = "caught"
        if (expect == "refuted" and q is not None and q < strength_mod.WEAK_MARGIN
                and "sharpen" not in (spec or {})):   # a sharpened constant is judged by its tightness
            weak = f"weak: refuted by only {strength_mod.fmt_ratio(q)}\u00d7 its tolerance"
    elif rec.get("check") == "symbolic" and expect == "refuted" and verdict == "refuted":
        badge = "refuted \u2713 mutant killed"
        vclass = "caught"
    elif rec.get("check") == "symbolic" and expect == "refuted" and verdict == "certified":
        badge = "certified \u2717 mutant survived"
        vclass = "refuted"
    else:
        badge = verdict
        vclass = verdict
    cex = rec.get("counterexample")
    inst, drawn = view.instance(rec, claim)
    label = f"{rec.get('claim')} {rec.get('check')}[{rec.get('variant')}]"
    rp = replay_command(rec, claim)
    return {
        "kind": rec.get("check", "?"), "variant": rec.get("variant", "?"), "verdict": verdict,
        "vclass": vclass, "badge": badge, "expect": expect, "ok": ok,
        "residual": fmt_num(rec.get("residual")), "tolerance": fmt_num(rec.get("tolerance")),
        "ratio": None if q is None else ("\u2264 0" if q < 0 else fmt_num(q)), "gauge": gauge(q),
        "exact": _float(rec.get("tolerance")) == 0 and _float(rec.get("residual")) == 0,
        "backend": rec.get("backend", ""), "seconds": rec.get("seconds"),
        "time": _fmt_seconds(rec.get("seconds")),
        "message": rec.get("message") or "",
        "description": (spec or {}).get("description", ""),
        "slow": bool((spec or {}).get("slow")),
        "counterexample": _cut(pretty_json(cex)) if cex not in (None, {}, []) else None,
        "drawn": (_cut(pretty_json(view.compact({k: inst[k] for k in drawn})))
                  if drawn and verdict == "refuted" else None),
        "drawn_names": ", ".join(drawn), "weak": weak,
        "mutant": rec.get("check") == "symbolic" and expect == "refuted",
        "values_json": _cut(pretty_json(shown)) if shown else None, "n_values": len(shown),
        "params": _cut(pretty_json(rec.get("params"))) if rec.get("params") else None,
        "traceback": values.get("traceback") if isinstance(values.get("traceback"), str) else None,
        "plots": [_plot_html(s, f"plot of {label}") for s in plot_specs],
        "replay": rp["command"], "replay_note": rp["note"], "replay_file": rp["file_name"],
        "replay_file_json": rp["file_json"],
        "replay_file_uri": _data_uri(rp["file_json"]) if rp["file_json"] else None,
        "run": True,
    }


def _fmt_seconds(s) -> str:
    if not isinstance(s, (int, float)) or isinstance(s, bool):
        return ""
    if s < 1e-3:
        return f"{s * 1e6:.0f} \u00b5s"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def _not_run_view(spec: dict) -> dict:
    why = "slow: skipped unless --runslow" if spec.get("slow") else (
        "gpu: skipped without CuPy and a device" if spec.get("gpu") else "no record in this run")
    return {"kind": spec.get("kind", "?"), "variant": spec.get("variant", "?"), "verdict": "not run",
            "vclass": "notrun", "badge": "not run", "expect": _expected(spec), "ok": None, "weak": None,
            "mutant": spec.get("kind") == "symbolic" and _expected(spec) == "refuted",
            "description": spec.get("description", ""), "message": why, "run": False,
            "slow": bool(spec.get("slow")), "plots": []}


def _location(claim: dict) -> dict:
    loc = claim.get("location") or {}
    lines = loc.get("lines") or []
    if len(lines) == 2 and lines[0] != lines[1]:
        ln = f"lines {lines[0]}\u2013{lines[1]}"
    elif lines:
        ln = f"line {lines[0]}"
    else:
        ln = ""
    return {"section": loc.get("section") or "", "equation": loc.get("equation") or "",
            "lines": ln, "seed": loc.get("seed") or ""}


def _param_view(p: dict) -> dict:
    d = p.get("default")
    return {"name": str(p.get("name", "?")), "kind": str(p.get("kind") or ""),
            "default": "\u2014" if d is None else json.dumps(d, ensure_ascii=False)[:200],
            "range": str(p.get("range") or ""), "doc": str(p.get("doc") or "")}


def _search_text(claim: dict) -> str:
    return " ".join(str(claim.get(k) or "") for k in ("id", "title", "label", "status", "document",
                                                          "catalogue")).lower()


def build_context(results: dict) -> dict:
    """Everything the template shows, computed from the results (plain data and Markup)."""
    claims = list(results.get("claims") or [])
    records = list(results.get("records") or [])
    raw_meta = results.get("meta") if isinstance(results.get("meta"), dict) else {}
    meta = {k: raw_meta.get(k) for k in ("date", "profile", "seed", "backend", "python", "versions", "pytest_exit",
                                         "runslow", "document", "select")}
    summary = summarise(claims, records)
    st = strength_mod.strength_of(results)
    by_claim: dict[str, list] = {}
    for r in records:
        by_claim.setdefault(r.get("claim"), []).append(r)
    order = list(DOCUMENT_TITLES) + sorted({c["document"] for c in claims} - set(DOCUMENT_TITLES))
    mathml.reset_stats()
    docs = []
    for key in order:
        dclaims = [c for c in claims if c.get("document") == key]
        if not dclaims:
            continue
        views, doc_records = [], []
        for c in dclaims:
            recs = by_claim.get(c["id"], [])
            specs = {(k.get("kind"), k.get("variant")): k for k in c.get("checks", [])}
            rank = {kv: i for i, kv in enumerate(specs)}
            recs_sorted = sorted(recs, key=lambda r: (rank.get((r.get("check"), r.get("variant")), 10**6),
                                                      KIND_ORDER.index(r["check"]) if r.get("check") in KIND_ORDER else 9))
            checks = [_check_view(r, c, specs.get((r.get("check"), r.get("variant")))) for r in recs_sorted]
            seen = {(r.get("check"), r.get("variant")) for r in recs}
            checks += [_not_run_view(k) for kv, k in specs.items() if kv not in seen]
            for r, cv in zip(recs_sorted, checks):
                doc_records.append(dict(r, _ok=cv["ok"]))
            erratum = c.get("status") in ("erratum", "gap") and bool(c.get("corrected"))
            views.append({
                "id": c["id"], "anchor": c["id"], "title": Markup(_title(c.get("title") or "")),
                "title_text": c.get("title", ""), "label": c.get("label", ""),
                "strength": _strength_view(st["claims"].get(c["id"])),
                "status": c.get("status", ""), "outcome": claim_outcome(c, recs),
                "location": _location(c), "catalogue": c.get("catalogue") or "",
                "erratum": erratum,
                "statement": Markup(mathml.render_tex(c.get("statement") or "")),
                "corrected": Markup(mathml.render_tex(c.get("corrected") or "")) if c.get("corrected") else None,
                "notes": Markup(_prose(c.get("notes") or "")),
                "params": [_param_view(p) for p in (c.get("params") or []) if isinstance(p, dict)],
                "checks": checks, "covers": c.get("covers") or [],
                "chips": [(cv["vclass"], f"{cv['kind']}[{cv['variant']}]: {cv['badge']}") for cv in checks],
                "search": _search_text(c),
            })
        margin = None
        try:
            n = len(plots.margin_data(doc_records))
            svg = plots.margin_plot(doc_records, title=f"{key}: residual / tolerance of {n} checks")
            margin = Markup(plots.inline_svg(svg, prefix=f"margin-{key}",
                                             label=f"{key}: residual over tolerance of every check"))
        except plots.PlotError:
            margin = None
        except Exception:  # a summary plot must never break the report
            margin = None
        docs.append({"key": key, "title": DOCUMENT_TITLES.get(key, key), "claims": views,
                     "strength": st["documents"].get(key),
                     "summary": summary["documents"].get(key, {}), "margin": margin,
                     "n_records": len(doc_records)})
    versions = meta.get("versions") if isinstance(meta.get("versions"), dict) else {}
    return {
        "meta": meta, "versions": versions, "docs": docs, "summary": summary,
        "columns": [(c, COLUMN_TITLES.get(c, c), COLUMN_HELP.get(c, "")) for c in COLUMNS],
        "n_claims": len(claims), "n_records": len(records),
        "verdicts": {v: sum(r.get("verdict") == v for r in records)
                     for v in ("certified", "refuted", "inconclusive", "error")},
        "math": dict(mathml.STATS), "math_failures": list(mathml.failures),
        "statuses": sorted({c.get("status", "") for c in claims}),
        "strength": st, "strength_line": strength_mod.strength_line(st),
        "strength_findings": _strength_findings(st, {c["id"]: c for c in claims}),
        "ratio": strength_mod.fmt_ratio, "thresholds": st["thresholds"],
    }


def _title(s: str) -> str:
    """A heading: text, its ``$...$`` / ``\\(...\\)`` math and bare formulas (``W_{p+1}^T``) as
    inline MathML (:func:`_prose`)."""
    return _prose(s)


def _pct(x) -> str:
    return "\u2014" if x is None else f"{100 * x:.1f}%"


def _strength_view(s: dict | None) -> dict | None:
    """A claim's strength as short items ``(class, text)``: good, warn (a finding) or bad (a defect)."""
    if not s:
        return None
    items = []
    if s["mutants_declared"]:
        bad = [m for m in s["mutants"] if m["state"] != "killed"]
        items.append(("bad" if any(m["state"] in ("survived", "not killed") for m in bad) else
                      "warn" if bad else "good",
                      f"symbolic mutants killed {s['mutants_killed']}/{s['mutants_declared']}"
                      + ("".join(f"; {m['variant']}: {m['state']}" for m in bad))))
    elif s["symbolic_without_mutant"]:
        items.append(("warn", "symbolic check without a mutant"))
    b = s.get("bound")
    if b:
        items.append(({"approached": "good", "near": "plain"}.get(b["band"], "warn"), b["text"]))
    if s["falsifiers"]:
        weak = [f for f in s["falsifiers"] if f["weak"]]
        text = f"falsifier margins: {len(s['falsifiers'])} caught"
        if s["min_margin"] is not None:
            text += f", min {strength_mod.fmt_ratio(s['min_margin'])}\u00d7 tolerance"
        if any(f.get("sharpened") for f in s["falsifiers"]):
            text += " (the sharpened constant judged by the bound's tightness)"
        if any("claimed_value" in f for f in s["falsifiers"]):
            text += " (threshold tests measured from the claimed value, in units of the threshold's distance)"
        if weak:
            text += "; weak: " + ", ".join(f"{f['variant']} ({strength_mod.fmt_ratio(f['margin'])}\u00d7)" for f in weak)
        items.append(("warn" if weak else "good", text))
    sw = s.get("sweep")
    if sw:
        text = (f"sweep: {sw['draws']} draws, {sw['certified']} certified, {sw['inconclusive']} inconclusive "
                f"({_pct(sw['inconclusive_rate'])}), {sw['refuted']} refuted, {sw['error']} errors, "
                f"{sw['rejected']} rejected")
        items.append(("bad" if sw["refuted"] or sw["error"] else "warn" if sw["inconclusive"] else "good", text))
    return {"entries": items, "defects": list(s["defects"]), "bad": bool(s["defects"])}


def _strength_findings(st: dict, claims: dict) -> list[dict]:
    """Every defect and warning of the run, one row per claim, defects first."""
    rows = []
    for cid, s in st["claims"].items():
        for kind, texts in (("bad", s["defects"]), ("warn", s["warnings"])):
            for t in texts:
                rows.append({"id": cid, "cls": kind, "text": t})
    rows.sort(key=lambda r: r["cls"] != "bad")
    return rows


def _prose(s: str) -> str:
    """Notes and titles: text escaped, ``$...$`` / ``\\(...\\)`` math as MathML (the TeX shown
    when it cannot be converted), and bare formulas (:func:`reports.view.prose_parts`:
    ``W_{p+1}^T``, ``|W_l|^2``) as MathML where they convert, else left as they are."""
    if not s:
        return ""
    out = []
    for kind, tex, src in view.prose_parts(s):
        if kind == "text":
            out.append(_html.escape(tex))
        elif kind == "math":
            out.append(mathml.latex_to_mathml(tex, display=False))
        else:
            try:
                out.append(mathml._convert(tex, display=False))
                mathml.STATS["converted"] += 1
            except mathml.MathConversionError:
                out.append(_html.escape(src))
    return "".join(out)


def _env():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined
    env = Environment(loader=FileSystemLoader(str(TEMPLATE_DIR)), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = fmt_num
    env.filters["urlq"] = lambda s: quote(str(s), safe="")
    return env


def render_html(results: dict) -> str:
    """The report of a parsed ``results.json`` as one self-contained HTML page."""
    ctx = build_context(results)
    return _env().get_template(TEMPLATE).render(**ctx)


def write_html(results: dict, path) -> Path:
    """Write :func:`render_html` of ``results`` to ``path`` (parents created); returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_html(results), encoding="utf-8")
    return p
