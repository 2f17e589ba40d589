"""The LaTeX report: a paper-like article rendered from a ``results.json`` dict, and its PDF.

    render_latex(results) -> str                    the document (pure: writes nothing)
    write_latex(results, path, figures=True) -> Path   report.tex, plus one PDF per plot in
                                                    ``figures/`` beside it
    compile_pdf(tex_path) -> Path | None            pdflatex twice in the .tex's folder; None when
                                                    pdflatex is not on PATH; LatexError on failure

Every string taken from the results is escaped (:func:`latex_escape`); the template's output
is escaped by default (Jinja's ``finalize``), and only :class:`TeX` strings built here pass
unescaped.  The one thing deliberately kept as LaTeX is the math of the claims' statements:
a formula goes into the document verbatim only when :func:`check_math` accepts it (balanced
braces and environments, known commands only, no text-mode specials where they would break);
otherwise it is shown as its source in typewriter type.  :func:`compile_pdf` adds a second
line of defence: when pdflatex still stops inside a formula, that formula is switched to its
typewriter source (each formula is fenced by ``%<<math``/``%>>math`` comment lines that carry
the fallback) and the document is compiled again.

Reads only plain dicts (the results file); imports nothing from ``theorems``.
"""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jinja2

from . import strength as strength_mod, view
from .summary import DOCUMENT_ORDER

__all__ = ["TeX", "latex_escape", "check_math", "render_math", "render_mixed", "render_latex",
           "write_latex", "compile_pdf", "LatexError", "DOCUMENT_TITLES"]

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
#: the folder, beside report.tex, of its figures
FIGURES = "figures"

#: display names of the documents (DESIGN.md); a key not listed is shown as itself
DOCUMENT_TITLES = {
    "jacot": "Jacot & Kaiser, leaky ResNets (Hamiltonian of representation paths)",
    "vanrossem": "van Rossem & Saxe, effective theory of the two-point interaction",
    "menon": "Menon, the geometry of the deep linear network",
    "chen": "Chen, effective gradient flow of cumulative weights and biases",
    "sander": "Sander (thesis), ResNets vs neural ODEs, Momentum ResNets, Sinkformers",
}


class TeX(str):
    """A string that is already LaTeX: the template passes it through unescaped."""


class LatexError(RuntimeError):
    """pdflatex failed; ``log`` is the path of the kept .log file."""

    def __init__(self, message: str, log: Path | None = None):
        super().__init__(message)
        self.log = log


# ---------------------------------------------------------------------------
# escaping text
_SPECIAL = {
    "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    "\n": " ", "\r": " ", "\t": " ", "\f": " ", "\v": " ",
}
_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho "
          "sigma sigma tau upsilon phi chi psi omega").split()
#: non-ASCII characters -> math-mode LaTeX (used in text as \ensuremath{...} and inside formulas)
UNICODE_MATH: dict[str, str] = {}
for _i, _n in enumerate(_GREEK):
    UNICODE_MATH[chr(0x3B1 + _i)] = "o" if _n == "omicron" else "\\" + ("varsigma" if _i == 17 else _n)
for _n, _c in {"Gamma": 0x393, "Delta": 0x394, "Theta": 0x398, "Lambda": 0x39B, "Xi": 0x39E, "Pi": 0x3A0,
               "Sigma": 0x3A3, "Upsilon": 0x3A5, "Phi": 0x3A6, "Psi": 0x3A8, "Omega": 0x3A9}.items():
    UNICODE_MATH[chr(_c)] = "\\" + _n
UNICODE_MATH.update({
    "\u03d5": r"\phi", "\u03c6": r"\varphi", "\u03b5": r"\varepsilon", "\u03f5": r"\epsilon",
    "∘": r"\circ", "≤": r"\le", "≥": r"\ge", "≠": r"\ne", "≈": r"\approx", "≡": r"\equiv", "∼": r"\sim",
    "∞": r"\infty", "∈": r"\in", "∉": r"\notin", "⊂": r"\subset", "⊆": r"\subseteq", "∩": r"\cap",
    "∪": r"\cup", "∖": r"\setminus", "∅": r"\emptyset", "→": r"\to", "←": r"\leftarrow",
    "↦": r"\mapsto", "⇒": r"\Rightarrow", "⟹": r"\Longrightarrow", "⇔": r"\Leftrightarrow",
    "±": r"\pm", "∓": r"\mp", "×": r"\times", "÷": r"\div", "·": r"\cdot", "⋅": r"\cdot",
    "∑": r"\sum", "∏": r"\prod", "∫": r"\int", "∂": r"\partial", "∇": r"\nabla", "√": r"\surd",
    "‖": r"\|", "⊥": r"\perp", "⟂": r"\perp", "⊗": r"\otimes", "⊕": r"\oplus", "⊖": r"\ominus",
    "⋯": r"\cdots", "…": r"\ldots", "∀": r"\forall", "∃": r"\exists", "ℝ": r"\mathbb{R}",
    "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}", "ℂ": r"\mathbb{C}", "⟨": r"\langle", "⟩": r"\rangle",
    "²": "^{2}", "³": "^{3}", "¹": "^{1}", "⁻": "^{-}", "⁰": "^{0}", "−": "-", "′": "'",
    "₀": "_{0}", "₁": "_{1}", "₂": "_{2}", "ᵀ": "^{T}", "†": r"\dagger", "°": r"^{\circ}",
})
_TEXT_UNICODE = {"–": "--", "—": "---", "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\ldots{}",
                 "\u00a0": "~", "§": r"\S{}", "¶": r"\P{}", "©": r"\copyright{}", "•": r"\textbullet{}"}


def _escape_char(ch: str) -> str:
    if ch in _SPECIAL:
        return _SPECIAL[ch]
    o = ord(ch)
    if o < 128:
        return ch if o >= 32 else " "
    if ch in _TEXT_UNICODE:
        return _TEXT_UNICODE[ch]
    if ch in UNICODE_MATH:
        return r"\ensuremath{" + UNICODE_MATH[ch] + "}"
    if 0xC0 <= o <= 0x17F:  # accented Latin letters: pdflatex's utf8 input with T1 fonts sets them
        return ch
    return r"\texttt{[U+%04X]}" % o


def latex_escape(value: Any) -> TeX:
    """Any value as LaTeX text: the ten specials ``& % $ # _ { } ~ ^ \\`` (and ``< > |``)
    escaped, control characters and newlines to spaces, non-ASCII symbols to their math
    equivalents (``"`` is kept: T1 fonts set it straight).  A :class:`TeX` value is returned as it is."""
    if isinstance(value, TeX):
        return value
    if value is None:
        return TeX("")
    if not isinstance(value, str):
        value = fmt(value) if isinstance(value, float) else str(value)
    out, prev = [], ""
    for c in value:
        out.append("{}-" if c == "-" and prev == "-" else _escape_char(c))  # no -- / --- ligatures
        prev = c
    return TeX("".join(out))


def breakable_escape(value: Any) -> TeX:
    """:func:`latex_escape`, with line breaks allowed after ``/ ( = ,`` (long titles of formulas)."""
    return TeX(re.sub(r"(?:(?<=[/(=,])|(?<=\\_))(?!\s)", r"\\allowbreak{}", latex_escape(value)))


def fmt(x: Any, digits: int = 3) -> str:
    """A number for a table: 3 significant digits, non-finite values spelt out."""
    if x is None:
        return "--"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return f"{x:.{digits}g}"
    return str(x)


def tex_num(x: Any) -> TeX:
    """A number in LaTeX, 1.2e-15 as $1.2\\times10^{-15}$."""
    s = fmt(x)
    m = re.fullmatch(r"(-?[0-9.]+)e([+-])0*([0-9]+)", s)
    if m:
        sign = "-" if m.group(2) == "-" else ""
        return TeX(f"${m.group(1)}\\times10^{{{sign}{m.group(3)}}}$")
    if s in ("inf", "-inf"):
        return TeX(r"$\infty$" if s == "inf" else r"$-\infty$")
    return latex_escape(s)


# ---------------------------------------------------------------------------
# math kept as LaTeX
#: the commands a formula may use (defined by LaTeX, amsmath, amssymb or the preamble)
MATH_COMMANDS = frozenset("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi
rho varrho sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma
Upsilon Phi Psi Omega
frac dfrac tfrac sqrt sum prod int iint oint lim limsup liminf sup inf max min argmin argmax
Pr
log ln exp sin cos tan sinh cosh tanh det dim ker deg arg hom Pr gcd
operatorname mathrm mathbf mathbb mathcal mathfrak mathsf mathtt mathit boldsymbol text textrm
textbf textit emph mbox
left right bigl bigr Bigl Bigr biggl biggr Biggl Biggr big Big bigg Bigg middle bigm Bigm
langle rangle lvert rvert lVert rVert vert Vert lfloor rfloor lceil rceil
quad qquad
cdot cdots ldots dots dotsc dotsb dotsm vdots ddots colon
le leq ge geq ne neq approx asymp sim simeq cong equiv propto ll gg prec succ preceq succeq
in notin ni subset subseteq supset supseteq cap cup setminus emptyset varnothing bigcap bigcup
to mapsto rightarrow leftarrow Rightarrow Leftarrow Longrightarrow Longleftarrow Leftrightarrow
iff implies longrightarrow longmapsto leftrightarrow uparrow downarrow hookrightarrow
times div pm mp circ ast star otimes oplus ominus odot bullet wedge vee land lor neg lnot
partial nabla infty forall exists nexists perp parallel mid nmid top bot angle ell hbar imath jmath
prime dagger
hat bar tilde widetilde widehat vec dot ddot check breve acute grave overline underline overbrace
underbrace overset underset stackrel xrightarrow xleftarrow
begin end
displaystyle textstyle scriptstyle limits nolimits
binom tbinom dbinom pmod bmod mod
Re Im aleph wp
lhd rhd unlhd unrhd triangle triangleq triangleleft triangleright
smallsetminus sqcup sqcap uplus bigoplus bigotimes
phantom hphantom vphantom smash allowbreak
rm bf it sf tt cal mathop mathbin mathrel mathord top intercal lbrace rbrace sharp flat natural
varepsilon varkappa varpi varrho varsigma varphi upsilon lesssim gtrsim leqslant geqslant
not nsubseteq nsupseteq subsetneq supsetneq nleq ngeq nless ngtr nparallel ncong nsim neq
preccurlyeq succcurlyeq sqsubseteq sqsupseteq vdash dashv models because therefore
Uparrow Downarrow updownarrow Updownarrow longleftrightarrow Longleftrightarrow leftrightarrows
rightleftharpoons leftharpoonup rightharpoonup nearrow searrow swarrow nwarrow Longrightarrow
square Box diamond triangledown bigtriangleup bigtriangledown bigwedge bigvee coprod iiint idotsint
backslash dag ddag S P hslash mathring cfrac genfrac substack sideset boxed operatornamewithlimits
mathstrut strut hspace mspace mkern mskip kern cdotp ldotp lnot ast varDelta varGamma varLambda
varSigma varTheta varPhi varPsi varOmega varXi varPi varUpsilon lll ggg succsim precsim
""".split())
MATH_ENVIRONMENTS = frozenset({"pmatrix", "bmatrix", "vmatrix", "Vmatrix", "matrix", "smallmatrix",
                               "cases", "aligned", "array", "split", "gathered"})
_TOKEN = re.compile(r"\\([A-Za-z]+)\*?|\\(.)|([{}&$%#])|(\n\s*\n)", re.S)


def check_math(tex: str) -> tuple[bool, str]:
    """Whether ``tex`` (the inside of a formula) can go into the document as it is."""
    if not isinstance(tex, str) or not tex.strip():
        return False, "empty formula"
    depth = 0
    envs: list[str] = []
    lefts = 0
    for m in _TOKEN.finditer(tex):
        word, sym, special, par = m.groups()
        if par:
            return False, "blank line inside a formula"
        if word:
            if word not in MATH_COMMANDS:
                return False, f"unknown command \\{word}"
            if word == "left":
                lefts += 1
            elif word == "right":
                lefts -= 1
                if lefts < 0:
                    return False, "\\right without \\left"
            elif word in ("begin", "end"):
                em = re.match(r"\s*\{([A-Za-z*]+)\}", tex[m.end():])
                if not em or em.group(1) not in MATH_ENVIRONMENTS:
                    return False, f"environment not allowed after \\{word}"
                if word == "begin":
                    envs.append(em.group(1))
                elif not envs or envs.pop() != em.group(1):
                    return False, f"unbalanced \\end{{{em.group(1)}}}"
        elif sym is not None:
            if sym in "()[]":
                return False, f"math delimiter \\{sym} inside a formula"
            if sym == "\\" and not envs:
                return False, "line break \\\\ outside a matrix environment"
        elif special == "{":
            depth += 1
        elif special == "}":
            depth -= 1
            if depth < 0:
                return False, "unbalanced braces"
        elif special == "&":
            if not envs:
                return False, "& outside a matrix environment"
        elif special in ("$", "%", "#"):
            return False, f"{special} inside a formula"
    if depth:
        return False, "unbalanced braces"
    if envs:
        return False, f"\\begin{{{envs[-1]}}} not closed"
    if lefts:
        return False, "\\left without \\right"
    # _ and ^ inside \text{...} are text-mode errors
    for seg in _text_arguments(tex):
        if re.search(r"(?<!\\)[_^]", seg.replace("$", "")) and "$" not in seg:
            return False, "_ or ^ inside \\text{...}"
    return True, ""


def _text_arguments(tex: str):
    for m in re.finditer(r"\\(?:text|textrm|textbf|textit|mbox)\s*\{", tex):
        depth, j = 1, m.end()
        while j < len(tex) and depth:
            if tex[j] == "\\":
                j += 2
                continue
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            j += 1
        yield tex[m.end():j - 1]


def _unicode_math(tex: str) -> str:
    out = []
    for ch in tex:
        if ord(ch) < 128:
            out.append(ch)
        elif ch in UNICODE_MATH:
            rep = UNICODE_MATH[ch]
            out.append(rep + (" " if rep[-1].isalpha() else ""))
        else:
            out.append(ch)  # check_math rejects it below
    return "".join(out)


def _breakable(tex: str) -> str:
    """Allow line breaks after the top-level spaces of a long formula (``\\ ``, ``\\quad``)."""
    out, depth, i = [], 0, 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\" and i + 1 < len(tex):
            t = re.match(r"\\text\{([^{}$\\]*)\}", tex[i:]) if depth == 0 else None
            if t and " " in t.group(1).strip():  # words of a top-level \text{...} may wrap
                words = re.findall(r"\s*\S+\s*", t.group(1))
                out.append(r"\allowbreak ".join(r"\text{%s}" % w for w in words))
                i += len(t.group(0))
                continue
            m = re.match(r"\\(qquad|quad)(?![A-Za-z])|\\ ", tex[i:])
            if m:
                out.append(m.group(0) + (r"\allowbreak " if depth == 0 else ""))
                i += len(m.group(0))
                continue
            out.append(tex[i:i + 2])
            i += 2
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        out.append(ch)
        i += 1
    return "".join(out)


def verbatim_tex(source: str) -> TeX:
    """A formula's source shown in typewriter type (the fallback)."""
    return TeX(r"\texttt{\small " + latex_escape(source) + "}")


class _MathLog:
    """Records the formulas rendered into one document (for the tests and for compile_pdf)."""

    def __init__(self, force_verbatim=()):
        self.force = set(force_verbatim)
        self.n = 0
        self.fallbacks: list[tuple[str, str]] = []


_current = _MathLog()


def render_math(tex: str, display: bool = True) -> TeX:
    """A formula fenced by ``%<<math N`` / ``%>>math`` lines: math when :func:`check_math`
    accepts it, its typewriter source otherwise.  The fence carries the fallback so that
    :func:`compile_pdf` can switch a formula pdflatex rejects."""
    log = _current
    log.n += 1
    n = log.n
    src = tex or ""
    conv = _unicode_math(src)
    ok, why = check_math(conv)
    if ok and any(ord(c) > 127 for c in conv):
        ok, why = False, "non-ASCII character in a formula"
    if n in log.force:
        ok, why = False, "pdflatex rejected it"
    fallback = verbatim_tex(src)
    if not ok:
        log.fallbacks.append((src, why))
        body = fallback
    else:
        body = (r"$\displaystyle " if display else "$") + _breakable(conv.strip()) + "$"
    # the line after the fence starts with {}: TeX skips the spaces that begin a line, and the
    # space between a formula and the next word would be lost
    return TeX(f"%\n%<<math {n}\n%fallback {fallback}\n{body}%\n%>>math\n{{}}")


def _plain_math(tex: str) -> str:
    """A formula as bookmark text (ASCII: a command by its name, ``\\alpha`` as ``alpha``)."""
    out = re.sub(r"\\([A-Za-z]+) ?", r"\1 ", tex)
    out = re.sub(r"\\(.)", r"\1", out)
    return re.sub(r"[{}]", "", out).replace("  ", " ")


def render_prose(text: str) -> TeX:
    """Notes: text escaped, ``$...$`` / ``\\(...\\)`` math typeset (source in typewriter type when
    :func:`check_math` or pdflatex rejects it), and bare formulas (:func:`reports.view.prose_parts`:
    ``W_{p+1}^T``, ``|W_l|^2``) typeset where :func:`check_math` accepts them, else left as text."""
    out = []
    for kind, tex, src in view.prose_parts(text or ""):
        if kind == "text":
            out.append(latex_escape(tex))
        elif kind == "math" or (check_math(_unicode_math(tex))[0] and tex.isascii()):
            out.append(render_math(tex, display=False))
        else:
            out.append(latex_escape(src))
    return TeX("".join(out))


def heading(text: str) -> TeX:
    """A section heading: escaped text (breakable), its ``$...$`` / ``\\(...\\)`` math typeset in
    the page and the table of contents, and plain text in the PDF bookmarks (``\\texorpdfstring``).
    A heading formula is fenced like every other one (tagged ``heading``): when the table of
    contents cannot take it, :func:`compile_pdf` switches it to its source."""
    parts = view.prose_parts(text or "")
    if all(k == "text" for k, _, _ in parts):
        return breakable_escape(text or "")
    tex, plain = [], []
    for kind, inner, src in parts:
        if kind == "text" or (kind == "auto" and not (check_math(_unicode_math(inner))[0] and inner.isascii())):
            tex.append(breakable_escape(src))
            plain.append(src)
            continue
        m = render_math(inner, display=False)
        tex.append(m.replace("\n%fallback ", " heading\n%fallback ", 1).replace("\\texttt{\\small ", "\\texttt{"))
        plain.append(src if kind == "auto" else _plain_math(inner))
    return TeX(r"\texorpdfstring{" + "".join(tex) + "}{" + latex_escape("".join(plain)) + "}")


def render_mixed(text: str) -> TeX:
    """Prose with math between ``$...$`` or ``\\(...\\)``: text escaped, formulas kept (when
    they pass :func:`check_math`).  Without math it is plain escaped text."""
    if not text:
        return TeX("")
    parts = re.split(r"(?<!\\)(\$[^$]+\$|\\\(.+?\\\))", text, flags=re.S)
    if len(parts) == 1:
        return latex_escape(text)
    out = []
    for k, p in enumerate(parts):
        if k % 2:
            inner = p[1:-1] if p.startswith("$") else p[2:-2]
            out.append(render_math(inner, display=False))
        else:
            out.append(latex_escape(p))
    return TeX("".join(out))


def render_statement(tex: str) -> TeX:
    """A claim's statement: a formula (with words in \\text{...}), or prose with $...$ math."""
    if not tex:
        return TeX("")
    if "$" in tex or r"\(" in tex:
        return render_mixed(tex)
    return render_math(tex, display=True)


# ---------------------------------------------------------------------------
# assembling the document
def _expected(check: dict) -> str:
    return check.get("expect") or ("refuted" if check.get("kind") == "falsifier" else "certified")


def _ratio(rec: dict) -> float | None:
    return view.ratio(rec.get("residual"), rec.get("tolerance"))


def replay_command(rec: dict) -> str:
    """The ``theorems check`` command that re-runs a record at its (counterexample's) parameters."""
    return view.replay_command(rec)


def tex_json(value: Any, limit: int = 900) -> TeX:
    """Compact JSON in typewriter type, breakable after commas, cut at ``limit`` characters."""
    s = json.dumps(value, separators=(", ", ": "), default=str)
    if len(s) > limit:
        s = s[:limit - 3] + "..."
    pieces = [latex_escape(p) for p in re.split(r"(?<=[,:\[])", s)]
    return TeX(r"{\ttfamily\small " + r"\allowbreak{}".join(pieces) + "}")


def _short(s: Any, limit: int = 400) -> str:
    s = " ".join(str(s or "").split())
    if len(s) <= limit:
        return s
    cut = s[:limit - 3]
    if len(re.findall(r"(?<!\\)\$", cut)) % 2:   # never cut inside $...$: cut before it
        cut = cut[:[m.start() for m in re.finditer(r"(?<!\\)\$", cut)][-1]].rstrip()
    return cut + "..."


def _article(word: str) -> str:
    """``a gap``, ``an erratum``: the indefinite article of a status word."""
    word = str(word or "")
    return ("an " if word[:1].lower() in "aeiou" and word else "a ") + word


def _counterexample(rec: dict, claim: dict | None = None) -> dict:
    """What the report shows for a refutation: always a concrete instance (the counterexample's
    parameters, else the record's, with what the check drew from the seed filled in:
    :func:`reports.view.instance`, numbers to 4 digits), the witness the check returned, and the
    replay command."""
    cex = rec.get("counterexample")
    instance, drawn = view.instance(rec, claim)
    witness = {k: v for k, v in cex.items() if k not in ("params", "instance")} if isinstance(cex, dict) else cex
    return {"rec": rec, "instance": tex_json(view.compact(instance), limit=1400),
            "drawn": ", ".join(drawn),
            "witness": tex_json(witness) if witness not in (None, {}) else None,
            "residual": tex_num(rec.get("residual")), "tolerance": tex_num(rec.get("tolerance")),
            "replay": latex_escape(replay_command(rec)), "message": _short(rec.get("message"), 500)}


def _context(results: dict, figures: dict[int, Any] | None) -> dict:
    if not isinstance(results, dict) or not isinstance(results.get("records"), list):
        raise ValueError("not a results dict (expected an object with 'records')")
    meta = results.get("meta") or {}
    records = results["records"]
    claims = [c for c in (results.get("claims") or []) if isinstance(c, dict)]
    known = {c.get("id") for c in claims}
    for r in records:  # records of claims the file does not describe still get a section
        if r.get("claim") not in known:
            known.add(r.get("claim"))
            cid = str(r.get("claim"))
            claims.append({"id": cid, "document": cid.split(".")[0], "title": cid, "label": "",
                           "location": {}, "statement": "", "status": "", "checks": []})
    by_claim: dict[str, list] = {}
    for idx, r in enumerate(records):
        by_claim.setdefault(r.get("claim"), []).append((idx, r))
    figures = figures or {}

    strength = strength_mod.strength_of(results)
    documents: dict[str, dict] = {}
    errata = []
    counts = {"records": len(records), "unexpected": 0}
    for c in claims:
        doc = documents.setdefault(c.get("document") or "?", {
            "key": c.get("document") or "?", "title": DOCUMENT_TITLES.get(c.get("document"), c.get("document")),
            "claims": []})
        expect = {(k.get("kind"), k.get("variant")): _expected(k) for k in c.get("checks") or []}
        rows, cexs, plots = [], [], []
        worst = None
        tally: dict[str, int] = {}
        n_ok = 0
        for idx, r in by_claim.get(c.get("id"), []):
            exp = expect.get((r.get("check"), r.get("variant")),
                             "refuted" if r.get("check") == "falsifier" else "certified")
            ok = r.get("verdict") == exp
            n_ok += ok
            counts["unexpected"] += not ok
            tally[r.get("verdict")] = tally.get(r.get("verdict"), 0) + 1
            ratio = _ratio(r)
            if exp == "certified" and ratio is not None and (worst is None or ratio > worst):
                worst = ratio
            rows.append({"rec": r, "ok": ok, "expect": exp, "residual": tex_num(r.get("residual")),
                         "tolerance": tex_num(r.get("tolerance")), "seconds": fmt(r.get("seconds")),
                         "message": _short(r.get("message"), 300)})
            if r.get("verdict") == "refuted":
                cexs.append(_counterexample(r, c))
            if idx in figures:
                spec = (r.get("values") or {}).get("plot") or {}
                fig = figures[idx] if isinstance(figures[idx], dict) else {"file": figures[idx]}
                plots.append({"file": fig.get("file"), "error": fig.get("error"), "rec": r,
                              "caption": (spec.get("title") if isinstance(spec, dict) else None)
                              or f"{r.get('claim')} {r.get('check')}[{r.get('variant')}]"})
        loc = c.get("location") or {}
        lines = loc.get("lines") or []
        n = len(by_claim.get(c.get("id"), []))
        verdicts = (f"{n_ok}/{n} as expected" if n else "not run") + (
            "; " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items())) if n else "")
        entry = {"c": c, "rows": rows, "cexs": cexs, "plots": plots, "verdicts": verdicts,
                 "heading": heading(c.get("title") or c.get("id") or ""),
                 "article": _article(c.get("status") or "correction"),
                 "strength": _strength_items(strength["claims"].get(c.get("id"))),
                 "all_ok": n > 0 and n_ok == n, "n": n,
                 "lines": f"{lines[0]}--{lines[1]}" if len(lines) == 2 else "",
                 "worst": tex_num(worst) if worst is not None else TeX("--"),
                 "statement": render_statement(c.get("statement") or ""),
                 "corrected": render_statement(c.get("corrected")) if c.get("corrected") else None,
                 "notes": render_prose(_short(c.get("notes"), 1200)) if c.get("notes") else None,
                 "loc": loc}
        doc["claims"].append(entry)
        if c.get("status") in ("erratum", "gap"):
            printed = [x for x in cexs if x["rec"].get("variant") == "stated"]
            errata.append({"c": c, "lines": entry["lines"], "heading": entry["heading"],
                           "printed": render_statement(c.get("statement") or ""),
                           "corrected": render_statement(c.get("corrected") or ""),
                           "refutation": printed[0] if printed else None})
    summary = results.get("summary") or {}
    from .summary import COLUMNS
    versions = meta.get("versions") or {}
    order = sorted(documents, key=lambda k: (DOCUMENT_ORDER.index(k) if k in DOCUMENT_ORDER else len(DOCUMENT_ORDER), k))
    for k in order:
        documents[k]["strength"] = strength["documents"].get(k)
    findings = [{"id": cid, "bad": kind == "bad", "text": t}
                for cid, s in strength["claims"].items()
                for kind, texts in (("bad", s["defects"]), ("warn", s["warnings"])) for t in texts]
    findings.sort(key=lambda f: not f["bad"])
    return {"meta": meta, "versions": versions, "summary": summary, "columns": COLUMNS,
            "documents": [documents[k] for k in order], "errata": errata, "counts": counts,
            "n_claims": sum(len(d["claims"]) for d in documents.values()),
            "strength": strength, "strength_line": strength_mod.strength_line(strength),
            "findings": findings, "ratio": strength_mod.fmt_ratio,
            "thresholds": {k: f"{v:g}" for k, v in strength["thresholds"].items()}}


def _strength_items(s: dict | None) -> list[TeX]:
    """A claim's strength as short LaTeX items (a defect in red)."""
    if not s:
        return []
    red = lambda t: TeX(r"\textcolor{red!75!black}{\textbf{" + latex_escape(t) + "}}")  # noqa: E731
    out: list[TeX] = []
    if s["mutants_declared"]:
        bad = [m for m in s["mutants"] if m["state"] != "killed"]
        t = f"symbolic mutants killed {s['mutants_killed']}/{s['mutants_declared']}" + "".join(
            f"; {m['variant']}: {m['state']}" for m in bad)
        out.append(red(t) if any(m["state"] in ("survived", "not killed") for m in bad) else latex_escape(t))
    elif s["symbolic_without_mutant"]:
        out.append(latex_escape("symbolic check without a mutant"))
    if s.get("bound"):
        out.append(latex_escape(s["bound"]["text"]))
    if s["falsifiers"]:
        weak = [f for f in s["falsifiers"] if f["weak"]]
        t = f"falsifier margins: {len(s['falsifiers'])} caught"
        if s["min_margin"] is not None:
            t += f", min {strength_mod.fmt_ratio(s['min_margin'])}x tolerance"
        if any(f.get("sharpened") for f in s["falsifiers"]):
            t += " (the sharpened constant judged by the bound's tightness)"
        if any("claimed_value" in f for f in s["falsifiers"]):
            t += " (threshold tests measured from the claimed value, in units of the threshold's distance)"
        if weak:
            t += "; weak: " + ", ".join(f"{f['variant']} ({strength_mod.fmt_ratio(f['margin'])}x)" for f in weak)
        out.append(latex_escape(t))
    sw = s.get("sweep")
    if sw:
        rate = f" ({100 * sw['inconclusive_rate']:.1f}%)" if sw["inconclusive_rate"] is not None else ""
        t = (f"sweep: {sw['draws']} draws, {sw['certified']} certified, {sw['inconclusive']} inconclusive{rate}, "
             f"{sw['refuted']} refuted, {sw['error']} errors, {sw['rejected']} rejected")
        out.append(red(t) if sw["refuted"] or sw["error"] else latex_escape(t))
    return out


def _finalize(value: Any) -> Any:
    """Everything the template prints is escaped unless it is :class:`TeX`."""
    if isinstance(value, TeX):
        return value
    if value is None:
        return ""
    if isinstance(value, float):
        return latex_escape(fmt(value))
    return latex_escape(value)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        block_start_string=r"\BLOCK{", block_end_string="}",
        variable_start_string=r"\VAR{", variable_end_string="}",
        comment_start_string=r"\#{", comment_end_string="}",
        line_statement_prefix="%%", line_comment_prefix="%#",
        trim_blocks=True, lstrip_blocks=True, autoescape=False,
        undefined=jinja2.StrictUndefined, finalize=_finalize, keep_trailing_newline=True)
    env.filters["latex_escape"] = latex_escape
    env.filters["e"] = latex_escape
    env.filters["num"] = tex_num
    env.filters["fmt"] = fmt
    env.filters["json"] = tex_json
    env.filters["mixed"] = render_mixed
    env.filters["statement"] = render_statement
    env.filters["short"] = _short
    env.filters["breakable"] = breakable_escape
    env.filters["heading"] = heading
    return env


def render_latex(results: dict, figures: dict[int, Any] | None = None,
                 force_verbatim: set[int] | frozenset = frozenset()) -> str:
    """The report as a LaTeX document.  ``figures`` maps a record's index to its figure,
    ``{"file": name}`` or ``{"error": why}`` (made by :func:`write_latex`); ``force_verbatim`` the numbers of formulas to show
    as source (used by :func:`compile_pdf`)."""
    global _current
    _current = log = _MathLog(force_verbatim)
    try:
        ctx = _context(results, figures)
        out = environment().get_template("report.tex.j2").render(**ctx).lstrip()
    finally:
        _current = _MathLog()
    render_latex.fallbacks = log.fallbacks  # type: ignore[attr-defined]
    return out


render_latex.fallbacks = []  # type: ignore[attr-defined]


def write_latex(results: dict, path, figures: bool = True) -> Path:
    """Write the report to ``path``; with ``figures``, every record with ``values["plot"]`` gets
    a PDF figure in the folder ``figures/`` beside it (``figures/fig-<n>.pdf``, n the record's
    number, drawn by :func:`reports.plots.render_plot`; figures of an earlier report there are
    removed first).  A figure that cannot be drawn is replaced by a line saying why."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figs: dict[int, dict] = {}
    figdir = path.parent / FIGURES
    if figures and figdir.is_dir():
        for old in figdir.glob("fig-*.pdf"):
            old.unlink()
    if figures:
        for idx, r in enumerate(results.get("records") or []):
            spec = (r.get("values") or {}).get("plot") if isinstance(r.get("values"), dict) else None
            if not spec:
                continue
            name = f"{FIGURES}/fig-{idx + 1}.pdf"
            try:
                from .plots import render_plot
                figdir.mkdir(exist_ok=True)
                (path.parent / name).write_bytes(render_plot(spec, "pdf"))
                figs[idx] = {"file": name}
            except Exception as exc:  # noqa: BLE001 - a broken plot must not sink the report
                figs[idx] = {"error": f"figure not drawn: {type(exc).__name__}: {_short(exc, 200)}"}
    path.write_text(render_latex(results, figs))
    return path


# ---------------------------------------------------------------------------
# PDF
_FENCE = re.compile(r"^%<<math (?P<n>\d+)(?P<tag> heading)?\n%fallback (?P<fallback>[^\n]*)\n(?P<body>.*?)\n%>>math$",
                    re.M | re.S)


def _fences(tex: str) -> list[tuple[int, int, int, re.Match]]:
    """(number, first line, last line, match) of each fenced formula (1-based lines)."""
    out = []
    for m in _FENCE.finditer(tex):
        first = tex.count("\n", 0, m.start()) + 1
        last = first + m.group(0).count("\n")
        out.append((int(m.group(1)), first, last, m))
    return out


def _to_fallback(tex: str, numbers: set[int] | None, headings_only: bool = False) -> str:
    def sub(m):
        if (numbers is None or int(m.group("n")) in numbers) and (m.group("tag") or not headings_only):
            return f"%<<math {m.group('n')}{m.group('tag') or ''}\n%fallback {m.group('fallback')}\n{m.group('fallback')}%\n%>>math"
        return m.group(0)
    return _FENCE.sub(sub, tex)


def _error_lines(log: str) -> list[int]:
    return [int(x) for x in re.findall(r"^l\.(\d+)", log, re.M)]


def _first_error(log: str) -> str:
    m = re.search(r"^! (.*)$", log, re.M)
    return m.group(1).strip() if m else "see the log"


def _pdflatex(tex_path: Path, timeout: float) -> tuple[bool, str]:
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", tex_path.name]
    try:
        proc = subprocess.run(cmd, cwd=str(tex_path.parent), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"pdflatex timed out after {timeout:.0f} s"
    log_path = tex_path.with_suffix(".log")
    log = log_path.read_text(errors="replace") if log_path.exists() else proc.stdout.decode(errors="replace")
    return proc.returncode == 0, log


def compile_pdf(tex_path, timeout: float = 120.0, max_fixes: int = 10, passes: int = 2) -> Path | None:
    """Compile ``tex_path`` with pdflatex (at least ``passes`` times: the later ones settle the
    tables' widths, the references and the table of contents; a pass is repeated, up to 4 in all,
    while the .toc still changes) in its own folder, nonstop, with a ``timeout`` per run.  Returns
    the PDF's path, or None when pdflatex is not on PATH.  A formula of a heading that breaks the
    table of contents (read from the .toc from the second pass on) is switched to its source with
    every other heading formula, and the whole compilation repeated.  A formula
    that stops pdflatex is switched to its typewriter source and the run repeated (at most
    ``max_fixes`` times, then every formula at once); the .tex is rewritten accordingly and
    the switched formulas are listed in ``compile_pdf.switched``.  Raises :class:`LatexError`
    (the .log kept beside the .tex) when the document still does not compile."""
    tex_path = Path(tex_path).resolve()
    compile_pdf.switched = []  # type: ignore[attr-defined]
    if shutil.which("pdflatex") is None:
        return None
    if not tex_path.exists():
        raise LatexError(f"{tex_path} does not exist")
    tex = tex_path.read_text()
    toc = tex_path.with_suffix(".toc")
    if toc.exists():
        toc.unlink()  # a stale table of contents of another document
    tries = 0
    while True:
        if toc.exists():
            toc.unlink()  # the first pass reads no contents: its errors are the .tex's lines
        ok, log = _pdflatex(tex_path, timeout)
        if ok:
            break
        if "timed out" in log and len(log) < 200:
            raise LatexError(log, tex_path.with_suffix(".log"))
        fences = [f for f in _fences(tex) if f[3].group("body").startswith("$")]  # formulas still typeset as math
        hit = None
        for line in _error_lines(log):
            hit = next((f for f in fences if f[1] <= line <= f[2]), None)
            if hit:
                break
        if hit is not None and tries < max_fixes:
            compile_pdf.switched.append((hit[0], _first_error(log)))  # type: ignore[attr-defined]
            tex = _to_fallback(tex, {hit[0]})
        elif fences and tries <= max_fixes:
            compile_pdf.switched.append(("all", _first_error(log)))  # type: ignore[attr-defined]
            tex = _to_fallback(tex, None)
            tries = max_fixes
        else:
            raise LatexError(f"pdflatex failed on {tex_path.name}: {_first_error(log)} "
                             f"(log: {tex_path.with_suffix('.log')})", tex_path.with_suffix(".log"))
        tries += 1
        tex_path.write_text(tex)
    ok, done = True, 1
    before = toc.read_text(errors="replace") if toc.exists() else None
    while ok and done < 4 and (done < passes or (toc.exists() and toc.read_text(errors="replace") != before)):
        before = toc.read_text(errors="replace") if toc.exists() else None
        ok, log = _pdflatex(tex_path, timeout)  # later passes: longtable widths, references, contents
        done += 1
        headings = [f for f in _fences(tex) if f[3].group("tag") and f[3].group("body").startswith("$")]
        if not ok and headings:  # a heading formula the table of contents cannot take: all to source
            compile_pdf.switched.append(("headings", _first_error(log)))  # type: ignore[attr-defined]
            tex = _to_fallback(tex, None, headings_only=True)
            tex_path.write_text(tex)
            if toc.exists():
                toc.unlink()
            ok, log = _pdflatex(tex_path, timeout)
            done, before = 1, None
    if not ok:
        raise LatexError(f"pdflatex failed on {tex_path.name} (second pass): {_first_error(log)} "
                         f"(log: {tex_path.with_suffix('.log')})", tex_path.with_suffix(".log"))
    for ext in (".aux", ".out", ".toc", ".log"):
        p = tex_path.with_suffix(ext)
        if p.exists():
            p.unlink()
    return tex_path.with_suffix(".pdf")


compile_pdf.switched = []  # type: ignore[attr-defined]
