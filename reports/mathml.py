"""LaTeX to MathML for the HTML report (offline: no renderer, the browser draws MathML Core).

Claims write their ``statement`` and ``corrected`` fields as LaTeX: either a formula with words
in ``\\text{...}`` (the usual form), or prose with math between ``$...$`` (or ``\\(...\\)``).
:func:`render_tex` takes either; :func:`latex_to_mathml` converts one formula.  A formula
that cannot be converted (latex2mathml raises, or leaves an unknown ``\\command`` in the output)
is shown as its TeX source in ``<code class="tex-fallback">`` and counted in :data:`STATS`, so
that the tests can assert that no claim's statement falls back.
"""
from __future__ import annotations

import html
import re
from contextlib import contextmanager

__all__ = ["latex_to_mathml", "render_tex", "split_math", "STATS", "failures", "reset_stats",
           "track", "MathConversionError"]

#: counters since the last :func:`reset_stats`: formulas converted and formulas that fell back
STATS = {"converted": 0, "failed": 0}
#: (tex, reason) of every fallback since the last :func:`reset_stats`
failures: list[tuple[str, str]] = []

_UNKNOWN_CMD = re.compile(r"\\[A-Za-z]+")
_TAG = re.compile(r"<[^>]*>")
# commands latex2mathml does not know, mapped to equivalents it does (all of them render the same)
_REWRITES = [
    (re.compile(r"\\(?:dfrac)(?![A-Za-z])"), r"\\frac"),
    (re.compile(r"\\lVert(?![A-Za-z])"), r"\\|"),
    (re.compile(r"\\rVert(?![A-Za-z])"), r"\\|"),
    (re.compile(r"\\tridiag(?![A-Za-z])"), r"\\operatorname{tridiag}"),
    (re.compile(r"\\arg(?![A-Za-z])"), r"\\operatorname{arg}"),
    (re.compile(r"\\asymp(?![A-Za-z])"), "\u224d"),
    (re.compile(r"\\ldots(?![A-Za-z])"), "\u2026"),
]


_FUNC_MI = re.compile(r"(<mi>[A-Za-z]{2,}</mi>)(?=<m(?:i|n|sub|sup|subsup|row|frac|sqrt)\b)")


class MathConversionError(ValueError):
    """latex2mathml failed on a formula (or produced an unknown command)."""


def reset_stats() -> None:
    STATS["converted"] = STATS["failed"] = 0
    failures.clear()


@contextmanager
def track():
    """Reset the counters, yield :data:`STATS` (live), e.g. ``with track() as s: ...; s['failed']``."""
    reset_stats()
    yield STATS


def _convert(tex: str, display: bool) -> str:
    """One formula to a ``<math>`` element; raises :class:`MathConversionError`."""
    try:
        from latex2mathml.converter import convert
    except ImportError as exc:  # pragma: no cover - latex2mathml is a dependency
        raise MathConversionError("latex2mathml is not installed") from exc
    src = tex.strip()
    for pat, rep in _REWRITES:
        src = pat.sub(rep, src)
    try:
        out = convert(src, display="block" if display else "inline")
    except Exception as exc:  # latex2mathml raises many kinds
        raise MathConversionError(f"{type(exc).__name__}: {exc}") from None
    # latex2mathml passes unknown commands through as <mi>\foo</mi>: that is a failure too
    text = html.unescape(_TAG.sub(" ", out))
    bad = _UNKNOWN_CMD.findall(text)
    if bad:
        raise MathConversionError(f"unknown command {bad[0]}")
    # \log c: latex2mathml writes <mi>log</mi><mi>c</mi>, which MathML sets without a space
    out = _FUNC_MI.sub(r'\1<mspace width="0.1667em"></mspace>', out)
    # the HTML parser puts <math> in the MathML namespace itself; the xmlns is noise there
    return out.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)


def _fallback(tex: str, reason: str) -> str:
    STATS["failed"] += 1
    failures.append((tex, reason))
    return (f'<code class="tex-fallback" title="{html.escape("not converted: " + reason)}">'
            f"{html.escape(tex)}</code>")


def latex_to_mathml(tex: str, display: bool = False) -> str:
    """A TeX formula (no ``$`` delimiters) as a MathML ``<math>`` element (a string of HTML).

    On failure: the TeX, escaped, in ``<code class="tex-fallback">`` (counted in :data:`STATS`)."""
    try:
        out = _convert(tex, display)
    except MathConversionError as exc:
        return _fallback(tex, str(exc))
    STATS["converted"] += 1
    return out


# ---------------------------------------------------------------------------
# text with inline math
_DELIMS = re.compile(r"\$\$(.+?)\$\$|(?<!\\)\$(.+?)(?<!\\)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)


def split_math(s: str) -> list[tuple[str, str]]:
    """``[("text"|"math"|"display", chunk), ...]`` for prose with ``$...$``, ``$$...$$``,
    ``\\(...\\)``, ``\\[...\\]`` math.  An unmatched ``$`` stays text."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for m in _DELIMS.finditer(s):
        if m.start() > pos:
            parts.append(("text", s[pos:m.start()]))
        if m.group(1) is not None or m.group(4) is not None:
            parts.append(("display", m.group(1) if m.group(1) is not None else m.group(4)))
        else:
            parts.append(("math", m.group(2) if m.group(2) is not None else m.group(3)))
        pos = m.end()
    if pos < len(s):
        parts.append(("text", s[pos:]))
    return parts


def _is_formula(s: str) -> bool:
    """A field without ``$`` delimiters: a bare formula (the claims' convention) or plain prose."""
    return bool(re.search(r"\\[A-Za-z]|[\^_=<>{}]|\\[,;: ]", s))


# top-level break points of a long formula: after ",\ ", ";\ ", "\quad", "\qquad"
_OPEN = re.compile(r"\\(?:left|bigl|Bigl|biggl|Biggl|langle)(?![A-Za-z])|\\\{|\\begin\{[A-Za-z*]+\}")
_CLOSE = re.compile(r"\\(?:right|bigr|Bigr|biggr|Biggr|rangle)(?![A-Za-z])|\\\}|\\end\{[A-Za-z*]+\}")
_BREAK = re.compile(r"[,;]\\ |\\qquad(?![A-Za-z])|\\quad(?![A-Za-z])|;")


def _split_formula(tex: str) -> list[str]:
    """Cut a long formula at its top-level separators so that the browser can wrap it (MathML has
    no line breaking inside one ``<math>``).  Returns the pieces, separators kept on the left."""
    pieces, depth, start, i, n = [], 0, 0, 0, len(tex)
    while i < n:
        c = tex[i]
        if c == "\\":
            m = _OPEN.match(tex, i)
            if m:
                depth += 1
                i = m.end()
                continue
            m = _CLOSE.match(tex, i)
            if m:
                depth -= 1
                i = m.end()
                continue
            if depth == 0:
                m = _BREAK.match(tex, i)
                if m:
                    i = m.end()
                    pieces.append(tex[start:i])
                    start = i
                    continue
            if i + 1 < n and tex[i + 1].isalpha():   # a command name: skip its letters
                i += 1
                while i < n and tex[i].isalpha():
                    i += 1
            else:                                     # an escaped character: \{ \\ \  \,
                i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0 and c in ",;":
            m = _BREAK.match(tex, i)
            if m:
                i = m.end()
                pieces.append(tex[start:i])
                start = i
                continue
        i += 1
    pieces.append(tex[start:])
    out = []
    for p in pieces:
        p = re.sub(r"^(?:\s|\\ |\\quad|\\qquad)+", "", p)   # a leading space is the wrap itself
        p = re.sub(r"(?:\s|\\ )+$", "", p)
        p = re.sub(r"\\q?quad$", "", p).rstrip()
        if p:
            out.append(p)
    return out or [tex]


def _formula(tex: str, display: bool, wrap: bool) -> str:
    pieces = _split_formula(tex) if wrap else [tex]
    if len(pieces) > 1:
        try:
            conv = [_convert(p, display=False) for p in pieces]
        except MathConversionError:
            pass  # some cut was not at the top level after all: convert the formula whole
        else:
            STATS["converted"] += 1
            return '<span class="formula">' + "\u2002".join(
                f'<span class="piece">{c}</span>' for c in conv) + "</span>"
    return latex_to_mathml(tex, display=display)


def render_tex(s: str | None, display: bool = False, wrap: bool = True) -> str:
    """HTML for a claim's ``statement`` / ``corrected`` field (or any text with math).

    With ``$``-delimited math: the text escaped, the math converted.  Without delimiters: a
    bare formula (cut at top-level separators when ``wrap``) or, if it looks like prose, text."""
    if not s:
        return ""
    if _DELIMS.search(s):
        out = []
        for kind, chunk in split_math(s):
            if kind == "text":
                out.append(html.escape(chunk))
            else:
                out.append(_formula(chunk, display=kind == "display", wrap=wrap))
        return "".join(out)
    if _is_formula(s):
        return _formula(s, display=display, wrap=wrap)
    return html.escape(s)
