"""Plots for the reports (matplotlib, Agg backend; nothing is shown, nothing is fetched).

A check's record may carry a plot in its ``values``::

    "plot": {"kind": "loglog" | "semilogx" | "semilogy" | "line",
             "x": [...], "series": {"label": [...], ...},
             "xlabel": "...", "ylabel": "...", "title": "..."}

:func:`render_plot` draws such a spec as SVG, PNG or PDF bytes and raises :class:`PlotError`
(a ``ValueError``) with a short reason when the spec is not valid.  :func:`margin_plot` draws the
per-document summary: the residual/tolerance ratio of every check on a log axis.  :func:`inline_svg`
turns SVG bytes into markup that can sit in an HTML page next to other inline SVGs.
"""
from __future__ import annotations

import html
import io
import itertools
import math
import re

import matplotlib

matplotlib.use("Agg", force=False)

__all__ = ["PlotError", "KINDS", "render_plot", "validate_spec", "margin_plot", "margin_data",
           "inline_svg"]

KINDS = ("loglog", "semilogx", "semilogy", "line")
FORMATS = ("svg", "png", "pdf")
MAX_POINTS = 100_000
_COUNTER = itertools.count()


class PlotError(ValueError):
    """The plot spec is not valid (the reason is the message, one line)."""


def _num(v) -> float:
    """A JSON number of a record (non-finite numbers are written as strings) as a float."""
    if isinstance(v, bool):
        raise PlotError(f"not a number: {v!r}")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v.strip().lower() in ("inf", "+inf", "-inf", "nan", "infinity", "-infinity"):
        return float(v.strip().lower().replace("infinity", "inf"))
    if v is None:
        return math.nan
    raise PlotError(f"not a number: {str(v)[:40]!r}")


def validate_spec(spec) -> dict:
    """The spec checked and normalised (floats, ``nan`` for missing); :class:`PlotError` otherwise."""
    if not isinstance(spec, dict):
        raise PlotError(f"a plot spec must be an object, not {type(spec).__name__}")
    kind = spec.get("kind", "line")
    if kind not in KINDS:
        raise PlotError(f"unknown plot kind {str(kind)[:40]!r} (known: {', '.join(KINDS)})")
    x = spec.get("x")
    if not isinstance(x, (list, tuple)) or not x:
        raise PlotError("plot needs a non-empty list 'x'")
    if len(x) > MAX_POINTS:
        raise PlotError(f"plot has {len(x)} points (at most {MAX_POINTS})")
    series = spec.get("series")
    if not isinstance(series, dict) or not series:
        raise PlotError("plot needs 'series': an object of label -> list of y values")
    xs = [_num(v) for v in x]
    ys = {}
    for label, y in series.items():
        if not isinstance(y, (list, tuple)):
            raise PlotError(f"series {str(label)[:40]!r} is not a list")
        if len(y) != len(xs):
            raise PlotError(f"series {str(label)[:40]!r} has {len(y)} values for {len(xs)} x values")
        ys[str(label)] = [_num(v) for v in y]
    out = {"kind": kind, "x": xs, "series": ys}
    for k in ("xlabel", "ylabel", "title"):
        v = spec.get(k, "")
        out[k] = "" if v is None else str(v)
    return out


def _style():
    return {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
            "svg.fonttype": "path", "svg.hashsalt": "theorems-report", "axes.spines.top": False,
            "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3}


def _figure(size):
    """A figure without pyplot (no global state, no GUI backend, faster import)."""
    from matplotlib.figure import Figure
    fig = Figure(figsize=size)
    return fig, fig.add_subplot()


_SUP = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def _pow10(v, pos=None) -> str:
    """Tick label 10⁻⁴ in plain Unicode: matplotlib's default mathtext labels cost a parser run
    each (most of the time of a small figure)."""
    if not (v > 0) or not math.isfinite(v):
        return ""
    e = math.log10(v)
    if abs(e - round(e)) < 1e-9:
        e = int(round(e))
        return "1" if e == 0 else ("10" if e == 1 else "10" + str(e).translate(_SUP))
    return f"{v:g}"


def _log_axis(axis) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(base=10, numticks=12))
    axis.set_major_formatter(FuncFormatter(_pow10))
    axis.set_minor_formatter(NullFormatter())


def _save(fig, fmt: str) -> bytes:
    buf = io.BytesIO()
    meta = {"svg": {"Date": None, "Creator": None}, "pdf": {"CreationDate": None, "Creator": None},
            "png": {"Software": None}}[fmt]
    fig.savefig(buf, format=fmt, bbox_inches="tight", metadata=meta,
                **({"dpi": 150} if fmt == "png" else {}))
    return buf.getvalue()


def render_plot(spec: dict, fmt: str = "svg") -> bytes:
    """Draw a record's plot spec; returns the file's bytes (``svg``, ``png`` or ``pdf``)."""
    if fmt not in FORMATS:
        raise PlotError(f"unknown plot format {fmt!r} (known: {', '.join(FORMATS)})")
    s = validate_spec(spec)
    with matplotlib.rc_context(_style()):
        fig, ax = _figure((5.6, 3.4))
        logx = s["kind"] in ("loglog", "semilogx")
        logy = s["kind"] in ("loglog", "semilogy")
        drawn = 0
        for label, y in s["series"].items():
            pts = [(a, b) for a, b in zip(s["x"], y)
                   if math.isfinite(a) and math.isfinite(b) and (a > 0 or not logx) and (b > 0 or not logy)]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o" if len(xs) <= 30 else None, ms=3.5, lw=1.4, label=label)
            drawn += 1
        if not drawn:
            raise PlotError("no finite point to draw" + (" (log axes need positive values)" if logx or logy else ""))
        if logx:
            ax.set_xscale("log")
            _log_axis(ax.xaxis)
        if logy:
            ax.set_yscale("log")
            _log_axis(ax.yaxis)
        ax.set_xlabel(s["xlabel"])
        ax.set_ylabel(s["ylabel"])
        if s["title"]:
            ax.set_title(s["title"])
        if len(s["series"]) > 1:
            ax.legend(frameon=False)
        return _save(fig, fmt)


# ---------------------------------------------------------------------------
# the per-document summary: residual / tolerance of every check
KIND_ORDER = ("symbolic", "numeric", "property", "falsifier", "reproduction")
FLOOR, CEIL = 1e-20, 1e30


def margin_data(records: list[dict]) -> list[dict]:
    """``[{"kind", "ratio", "clipped", "caught", "ok", "verdict", "claim", "variant"}]`` for every
    record with a residual and a positive tolerance (symbolic checks decided exactly, 0/0, are
    left out).  ``clipped``: -1 at or below zero (an exact zero, or a one-sided bound met with
    room) or below :data:`FLOOR`; +1 above :data:`CEIL` (or infinite)."""
    out = []
    for r in records:
        try:
            res, tol = _num(r.get("residual")), _num(r.get("tolerance"))
        except PlotError:
            continue
        if not (tol > 0) or math.isnan(res) or math.isinf(tol):
            continue
        ratio = res / tol
        clipped = -1 if ratio < FLOOR else (1 if ratio > CEIL else 0)
        out.append({"kind": r.get("check", "?"), "ratio": min(max(ratio, FLOOR), CEIL),
                    "clipped": clipped,
                    "caught": r.get("check") == "falsifier" and r.get("verdict") == "refuted",
                    "ok": r.get("_ok", None), "verdict": r.get("verdict"), "claim": r.get("claim"),
                    "variant": r.get("variant")})
    return out


def margin_plot(records: list[dict], title: str = "", fmt: str = "svg") -> bytes:
    """The residual/tolerance ratio of every check of ``records`` on a log axis, one row per kind:
    checks of true statements sit left of 1 (the margin is the distance), falsifiers right of it.
    A record may carry ``_ok`` (its verdict is the expected one) to colour unexpected outcomes."""
    data = margin_data(records)
    if not data:
        raise PlotError("no check with a residual and a positive tolerance")
    kinds = [k for k in KIND_ORDER if any(d["kind"] == k for d in data)]
    kinds += sorted({d["kind"] for d in data} - set(kinds))
    groups = {"certified": ("#1a7f37", "o", "certified"),
              "caught": ("#6f42c1", "D", "falsifier refuted (caught)"),
              "other": ("#cf222e", "X", "unexpected / inconclusive / error")}
    inner = [d["ratio"] for d in data if not d["clipped"]] or [1.0]
    lo = max(min(min(inner), 1.0) / 30, FLOOR)
    hi = min(max(max(inner), 1.0) * 30, CEIL)
    pts: dict[str, tuple[list, list]] = {g: ([], []) for g in groups}
    for i, d in enumerate(data):
        if d["ok"] is False or d["verdict"] in ("inconclusive", "error"):
            g = "other"
        elif d["caught"]:
            g = "caught"
        elif d["verdict"] == "certified":
            g = "certified"
        else:
            g = "other"
        if d["clipped"] < 0:
            x = lo * 1.6
        elif d["clipped"] > 0:
            x = hi / 1.6
        else:
            x = min(max(d["ratio"], lo * 1.6), hi / 1.6)
        jitter = ((i * 0.6180339887) % 1.0 - 0.5) * 0.5
        pts[g][0].append(x)
        pts[g][1].append(kinds.index(d["kind"]) + jitter)
    with matplotlib.rc_context(_style()):
        fig, ax = _figure((8.6, 0.5 * len(kinds) + 1.2))
        for g, (xs, ys) in pts.items():
            if xs:
                col, mk, lab = groups[g]
                ax.scatter(xs, ys, s=16, c=col, marker=mk, alpha=0.75, linewidths=0,
                           label=f"{lab} ({len(xs)})")
        ax.axvline(1.0, color="#444", lw=1.0, ls="--")
        ax.text(1.0, -0.58, " tolerance", va="top", ha="left", fontsize=8, color="#444")
        ax.axvspan(lo, lo * 2.6, color="#ddd", alpha=0.7, lw=0)
        ax.text(lo * 2.8, -0.58, "\u2264 0 (exact)", fontsize=7, color="#555",
                ha="left", va="top")
        ax.set_xscale("log")
        _log_axis(ax.xaxis)
        ax.set_xlim(lo, hi)
        ax.set_ylim(-0.6, len(kinds) - 0.3)
        ax.set_yticks(range(len(kinds)))
        ax.set_yticklabels(kinds)
        ax.invert_yaxis()
        ax.grid(axis="y", alpha=0)
        ax.set_xlabel("residual / tolerance   (< 1: holds, with this margin;  > 1: refuted)")
        if title:
            ax.set_title(title, loc="left", pad=14)
        ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, frameon=False,
                  handletextpad=0.2, columnspacing=1.0, borderaxespad=0.1)
        return _save(fig, fmt)


# ---------------------------------------------------------------------------
_XML_HEAD = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)
_STYLE = re.compile(r"<style[^>]*>(.*?)</style>\s*", re.S)
_ID = re.compile(r'\bid="([^"]+)"')


def inline_svg(svg: bytes | str, prefix: str | None = None, label: str = "") -> str:
    """SVG bytes as markup for an HTML page: no XML prologue, metadata, namespace declarations
    (the HTML parser supplies them) or global ``<style>``; every ``id`` (and each reference to
    it) prefixed so that several inline SVGs never share one; ``role="img"`` and a label."""
    s = svg.decode("utf-8") if isinstance(svg, bytes) else svg
    s = _XML_HEAD.sub("", s, count=1)
    s = _METADATA.sub("", s)
    # matplotlib's "*{stroke-linejoin: round; stroke-linecap: butt}" would style the whole page
    s = _STYLE.sub("", s)
    s = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", s)
    pfx = prefix or f"p{next(_COUNTER)}"
    ids = set(_ID.findall(s))
    if ids:
        alt = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
        s = re.sub(rf'\bid="({alt})"', lambda m: f'id="{pfx}-{m.group(1)}"', s)
        s = re.sub(rf'#({alt})(?=[)"\'])', lambda m: f"#{pfx}-{m.group(1)}", s)
    attrs = (' role="img" class="plot-svg" style="stroke-linejoin:round;stroke-linecap:butt"'
             + (f' aria-label="{html.escape(label, quote=True)}"' if label else ""))
    s = re.sub(r"<svg\b", "<svg" + attrs, s, count=1)
    return s.strip()
