"""The one view-model of a result record, shared by the terminal (pytest plugin, ``theorems``
command line), the HTML report and the LaTeX report: the verdict a check must reach, how far it
was from its tolerance, and the command that replays it.

Plain functions on plain dicts (a record of DESIGN.md's contract, and a claim's description from
``theorems list --json``); nothing here imports the framework.
"""
from __future__ import annotations

import json
import math
import re
import shlex

__all__ = ["expected", "claim_outcome", "ratio", "replay", "replay_command", "replay_params", "instance", "compact",
           "MAX_INLINE_REPLAY"]

#: a ``theorems check`` command longer than this writes its parameters to a file instead
MAX_INLINE_REPLAY = 220


def expected(rec: dict, claim: dict | None = None) -> str:
    """The verdict the record's check must reach: the check's declared ``expect`` when the claim's
    description lists it, else ``refuted`` for a falsifier and ``certified`` for every other kind."""
    for k in (claim or {}).get("checks", []):
        if k.get("kind") == rec.get("check") and k.get("variant") == rec.get("variant") and k.get("expect"):
            return k["expect"]
    return "refuted" if rec.get("check") == "falsifier" else "certified"


def claim_outcome(claim: dict, records: list[dict]) -> str:
    """A claim's line in the summary: ``unchecked`` (no record: only slow checks, or none),
    ``certified`` (every check as expected), ``refuted`` (a check that should certify came out
    refuted), ``failed`` (a check broke, or a falsifier found no counterexample), ``inconclusive``
    (a hypothesis failed on the instance)."""
    if not records:
        return "unchecked"
    bad = [r for r in records if r.get("verdict") != expected(r, claim)]
    if not bad:
        return "certified"
    if any(r.get("verdict") == "refuted" for r in bad):
        return "refuted"
    if any(r.get("verdict") in ("error", "certified") for r in bad):
        return "failed"
    return "inconclusive"


def _float(x):
    if isinstance(x, str) and x in ("inf", "-inf", "nan"):
        return float(x)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    return None


def ratio(residual, tolerance) -> float | None:
    """residual / tolerance (1 = at the tolerance), or None where it has no meaning (a missing or
    NaN side); 0/0 (an exact check that came out exact) is 0, r/0 with r > 0 is infinity."""
    r, t = _float(residual), _float(tolerance)
    if r is None or t is None or math.isnan(r) or math.isnan(t):
        return None
    if t == 0:
        return 0.0 if r == 0 else math.inf
    return r / t


def replay_params(rec: dict, claim: dict | None = None) -> dict:
    """The parameters a replay needs: the counterexample's when there is one, else the record's;
    a null that is the default anyway is left out."""
    cex = rec.get("counterexample")
    params = cex.get("params") if isinstance(cex, dict) and isinstance(cex.get("params"), dict) else None
    params = dict(params if params is not None else (rec.get("params") or {}))
    defaults = {p.get("name"): p.get("default") for p in (claim or {}).get("params", [])}
    return {k: v for k, v in params.items() if not (v is None and defaults.get(k) is None)}


def replay(rec: dict, claim: dict | None = None, inline: bool = False) -> dict:
    """How to re-run a record: ``{"command", "file_name", "file_json", "note"}``.

    numeric / falsifier: ``theorems check ID --variant V [--backend B] --param NAME=JSON ...`` (or,
    when that is long, ``--params-file FILE`` with the file's JSON to save: the record itself, so
    that the file names its claim, check and variant); the other kinds re-run their pytest item by
    its node id (``claim["module"]`` gives the file).  ``inline`` keeps every parameter on the
    command line (the terminal)."""
    claim = claim or {}
    cid, kind, variant = str(rec.get("claim", "?")), str(rec.get("check", "?")), str(rec.get("variant", "?"))
    backend = rec.get("backend")
    if kind in ("numeric", "falsifier"):
        params = replay_params(rec, claim)
        base = ["theorems", "check", cid, "--variant", variant]
        if backend and backend != "numpy":
            base += ["--backend", str(backend)]
        parts = list(base)
        for k, v in params.items():
            parts += ["--param", f"{k}={json.dumps(v, separators=(',', ':'))}"]
        cmd = " ".join(shlex.quote(p) for p in parts)
        if inline or len(cmd) <= MAX_INLINE_REPLAY:
            return {"command": cmd, "file_name": None, "file_json": None, "note": ""}
        fname = f"{cid}.{variant}.params.json"
        saved = {"claim": cid, "check": kind, "variant": variant, "params": params}
        return {"command": " ".join(shlex.quote(p) for p in base + ["--params-file", fname]),
                "file_name": fname, "file_json": json.dumps(saved, indent=1), "note": ""}
    slow = any(k.get("slow") for k in claim.get("checks", [])
               if k.get("kind") == kind and k.get("variant") == variant)
    module = claim.get("module")
    if module:
        path = module.replace(".", "/") + ".py"
        item = f"{kind}[{variant}]"
        cmd = "pytest " + shlex.quote(f"{path}::{cid}::{item}")
    else:
        cmd = "pytest theorems -k " + shlex.quote(f"{cid} and {kind} and {variant}")
    cmd += " --runslow" if slow else ""
    note = "re-runs the Hypothesis draws (derandomized ci profile)" if kind == "property" else ""
    return {"command": cmd, "file_name": None, "file_json": None, "note": note}


def replay_command(rec: dict, claim: dict | None = None, inline: bool = True) -> str:
    """The command line of :func:`replay`, every parameter inline unless ``inline=False``."""
    return replay(rec, claim, inline)["command"]


def instance(rec: dict, claim: dict | None = None) -> tuple[dict, list[str]]:
    """The instance a record's check actually used, and the names of its entries that were drawn.

    The counterexample's parameters (else the record's); a parameter left out (null: drawn from the
    seed) is filled from the same-named entry of the record's ``values`` when the check reports
    what it drew there, and ``values["instance"]`` / ``counterexample["instance"]`` (an object of
    the drawn matrices, the convention for checks that draw their instance) are merged in.  So a
    report shows ``{"seed": 0, "A": [[...]]}``, not only ``{"seed": 0}``."""
    cex = rec.get("counterexample") if isinstance(rec.get("counterexample"), dict) else {}
    params = cex.get("params") if isinstance(cex.get("params"), dict) else rec.get("params")
    out = dict(params) if isinstance(params, dict) else {}
    values = rec.get("values") if isinstance(rec.get("values"), dict) else {}
    drawn: dict = {}
    for k, v in out.items():
        if v is None and values.get(k) is not None:
            drawn[k] = values[k]
    for src in (values.get("instance"), cex.get("instance")):
        if isinstance(src, dict):
            drawn.update(src)
    out.update(drawn)
    return out, list(drawn)


def compact(value, digits: int = 4, max_items: int = 8):
    """A value for display: floats to ``digits`` significant digits, long lists cut to
    ``max_items`` entries with a note of how many more (a matrix stays a list of rows)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return value
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: compact(v, digits, max_items) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [compact(v, digits, max_items) for v in list(value)[:max_items]]
        if len(value) > max_items:
            items.append(f"\u2026 {len(value) - max_items} more")
        return items
    return value


# ---------------------------------------------------------------------------
# formulas in prose (notes, titles)
_EXPLICIT = re.compile(r"(?<!\\)\$([^$]+)(?<!\\)\$|\\\((.+?)\\\)", re.S)
_MATHY = re.compile(r"[_^](?:\{|[A-Za-z0-9](?![A-Za-z0-9]))|\\[A-Za-z]+")
_WORDY = re.compile(r"[_^][A-Za-z0-9]{2,}|[_^]$|[_^][^{A-Za-z0-9]")
_TOKEN_OK = re.compile(r"[A-Za-z0-9_^{}()\[\]|+\-*/=<>\\]+")
_GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho "
          "sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi "
          "Omega").split()
_OPERATORS = ("min", "max", "sup", "inf", "lim", "log", "exp", "det", "tr", "argmin", "argmax")


def _bare_formula(tok: str) -> str | None:
    """The TeX of a whitespace-free token that reads as a formula (``W_{p+1}^T``, ``|W_l|^2``,
    ``\\phi``), or None for words and identifiers (``lambda_eps``, ``solvers.psi_eps``, ``e^kappa``)."""
    if not _TOKEN_OK.fullmatch(tok) or not _MATHY.search(tok) or _WORDY.search(tok):
        return None
    if tok.count("{") != tok.count("}") or tok.count("(") != tok.count(")") or tok.count("[") != tok.count("]"):
        return None
    if not re.search(r"[A-Za-z]", tok):
        return None
    words = set(re.findall(r"(?<!\\)[A-Za-z]{3,}", tok)) - set(_GREEK) - set(_OPERATORS)
    if words:  # a word (sqrt, sigmabar, COI) would be set as a product of italic letters
        return None
    tok = re.sub(r"(?<![A-Za-z\\])(" + "|".join(_OPERATORS) + r")(?=_)", r"\\\1", tok)
    return re.sub(r"(?<![A-Za-z\\])(" + "|".join(_GREEK) + r")(?![A-Za-z])", r"\\\1", tok)


def prose_parts(text: str) -> list[tuple[str, str, str]]:
    """Prose cut into ``(kind, tex, source)``: ``("text", s, s)``, ``("math", tex, source)``
    (between ``$...$`` or ``\\(...\\)``) and ``("auto", tex, token)``: a bare token that reads as a formula (subscripts, superscripts, commands:
    ``W_{p+1}^T``, ``|A|_F^2``); the reports typeset an ``auto`` part as math when it converts
    and leave it as text otherwise.  Snake-case names and file paths stay text."""
    out: list[tuple[str, str, str]] = []

    def add(kind, s, src=None):
        if kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + s, out[-1][2] + s)
        elif s:
            out.append((kind, s, s if src is None else src))

    def bare(chunk: str):
        for piece in re.split(r"(\s+)", chunk):
            if not piece or piece.isspace():
                add("text", piece)
                continue
            m = re.fullmatch(r"(.*?)([.,;:!?]*)", piece, re.S)
            core, tail = m.group(1), m.group(2)
            lead = ""
            while core[:1] in ("(", "[") and core.count(core[0]) > core.count(")" if core[0] == "(" else "]"):
                lead, core = lead + core[0], core[1:]
            trail = ""
            while core[-1:] in (")", "]") and core.count(core[-1]) > core.count("(" if core[-1] == ")" else "["):
                trail, core = core[-1] + trail, core[:-1]
            tex = _bare_formula(core) if core else None
            if tex is None:
                add("text", piece)
            else:
                add("text", lead)
                add("auto", tex, core)
                add("text", trail + tail)

    pos = 0
    for m in _EXPLICIT.finditer(text or ""):
        bare(text[pos:m.start()])
        add("math", m.group(1) if m.group(1) is not None else m.group(2), m.group(0))
        pos = m.end()
    bare((text or "")[pos:])
    return out
