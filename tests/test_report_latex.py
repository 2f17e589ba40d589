"""The LaTeX report: escaping of everything taken from the results, the document's structure,
the math of the real claims, figures, and compilation with pdflatex (skipped when absent)."""
import json
import shutil

import pytest

from reports.latex import (LatexError, TeX, check_math, compile_pdf, latex_escape, render_latex,
                           write_latex)

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not on PATH")

NASTY = r"a & b % c $ d # e _ f { g } h ~ i ^ j \ k"


def _rec(claim, check, variant, verdict, **kw):
    rec = {"claim": claim, "check": check, "variant": variant, "verdict": verdict, "residual": 1e-15,
           "tolerance": 1e-12, "params": {"d": 3}, "values": {}, "counterexample": None,
           "backend": "numpy", "seconds": 0.01, "message": ""}
    rec.update(kw)
    return rec


def _claim(cid, status="holds", statement=r"\frac{d}{dt}C_p=0", corrected=None, title="A claim", **kw):
    c = {"id": cid, "document": cid.split(".")[0], "title": title, "label": "Thm 1",
         "location": {"section": "4.2", "equation": "(4.7)", "lines": [211, 223], "seed": "002_x.txt"},
         "statement": statement, "status": status, "corrected": corrected, "params": [], "notes": "",
         "checks": [{"kind": "numeric", "variant": "corrected" if corrected else "stated", "expect": "certified"},
                    {"kind": "falsifier", "variant": "stated" if corrected else "f", "expect": "refuted"}]}
    c.update(kw)
    return c


def _results():
    claims = [_claim("menon.alpha", title=f"Title with {NASTY}", notes=f"notes {NASTY}"),
              _claim("menon.beta", status="erratum", statement=r"g^N(Z,Z)=N\sum_k\sigma_k^2",
                     corrected=r"g^N(Z,Z)=\sum_k\frac{Z_{kk}^2}{N\sigma_k^2}", title="An erratum"),
              _claim("jacot.gamma", title="Hamiltonian E∘φ conserved, λ ≥ 1")]
    recs = [_rec("menon.alpha", "numeric", "stated", "certified", message=f"msg {NASTY}",
                 values={"note": NASTY}),
            _rec("menon.alpha", "falsifier", "f", "refuted", residual=1.8, tolerance=2e-12,
                 params={"d": 3, "name": NASTY}, counterexample={"params": {"d": 2, "s": NASTY}, "gap": 0.5},
                 message=f"found {NASTY}"),
            _rec("menon.beta", "numeric", "corrected", "certified"),
            _rec("menon.beta", "falsifier", "stated", "refuted", residual=0.5, tolerance=1e-9,
                 counterexample={"witness_only": 1.0}),  # no params: the record's params are the instance
            _rec("jacot.gamma", "numeric", "stated", "error", residual=None, tolerance=None,
                 message="ValueError: boom")]
    meta = {"date": "2026-01-01T00:00:00+00:00", "python": "3.11", "profile": "ci", "seed": "derandomized",
            "versions": {"numpy": "2.0", "hypothesis": "6.1"}, "select": NASTY}
    summary = {"documents": {"menon": {"claims": 2, "falsifiers_caught": 2}, "jacot": {"claims": 1}},
               "total": {"claims": 3}}
    return {"meta": meta, "summary": summary, "claims": claims, "records": recs}


def test_latex_escape_of_the_ten_specials():
    assert latex_escape("& % $ # _ { } ~ ^ \\") == (r"\& \% \$ \# \_ \{ \} \textasciitilde{} "
                                                     r"\textasciicircum{} \textbackslash{}")
    assert latex_escape("a--b") == "a-{}-b"                      # no en-dash ligature in options
    assert latex_escape("E∘φ ≥ 1") == r"E\ensuremath{\circ}\ensuremath{\varphi} \ensuremath{\ge} 1"
    assert latex_escape("line\nbreak") == "line break"
    assert isinstance(latex_escape("x"), TeX) and latex_escape(TeX(r"\x")) == r"\x"


def test_every_string_from_the_results_is_escaped():
    tex = render_latex(_results())
    escaped = latex_escape(NASTY)
    assert NASTY not in tex                                   # never raw
    for where in ("Title with", "notes", "msg", "found"):     # title, notes, message ...
        assert f"{where} {escaped}" in tex, where
    assert latex_escape("-k " + NASTY) in tex                 # ... and the run's metadata
    assert r"\ensuremath{\circ}" in tex                       # unicode in a title


def test_structure_sections_per_document_and_errata_appendix():
    tex = render_latex(_results())
    assert tex.startswith("\\documentclass") and tex.rstrip().endswith("\\end{document}")
    i_sum = tex.index(r"\section{Summary}")
    i_menon = tex.index(r"\section{Menon, the geometry of the deep linear network}")
    i_jacot = tex.index(r"\section{Jacot")
    i_app = tex.index(r"\appendix")
    i_err = tex.index(r"\section{Errata: printed and corrected statements}")
    assert i_sum < i_jacot < i_menon < i_app < i_err           # documents in seed order, as the HTML
    errata = tex[i_err:]
    assert "menon.beta" in errata and "Printed" in errata and "Corrected" in errata
    assert r"\frac{Z_{kk}^2}{N\sigma_k^2}" in errata            # the corrected math, kept as math
    assert "menon.alpha" not in errata
    # counterexamples: a concrete instance always, the witness, and the replay command
    plain = tex.replace(r"\allowbreak{}", "")
    assert '"s": ' + latex_escape(json.dumps(NASTY)) in plain   # the counterexample's params
    assert '"d": 3' in plain                                   # record params for the witness-only one
    assert "theorems check menon.beta -{}-variant stated" in plain
    assert r"\begin{longtable}" in tex and "not as expected" in tex   # jacot.gamma errored


def test_check_math_accepts_claim_math_and_rejects_what_would_break():
    for ok in (r"\frac{d}{dt}\bigl(W^TW\bigr)=0", r"\begin{pmatrix}1&a\\0&1\end{pmatrix}",
               r"\text{for all }t,\ \operatorname{rank}W=r", r"\left(\sum_k x_k\right)"):
        assert check_math(ok) == (True, ""), ok
    for bad in (r"\frac{a}{b", r"x}", r"\foo x", r"a & b", r"50% off", r"$x$", r"\text{a_b}",
                r"\begin{tabular}{c}x\end{tabular}", r"\left( x", "a\n\nb", r"x\\y", r"\input{f}"):
        assert not check_math(bad)[0], bad


def test_bad_math_falls_back_to_source_text():
    res = _results()
    res["claims"][0]["statement"] = r"\undefinedmacro{x} & 100% \frac{1}{"
    tex = render_latex(res)
    assert render_latex.fallbacks and render_latex.fallbacks[0][1].startswith("unknown command")
    assert r"\texttt{\small \textbackslash{}undefinedmacro\{x\} \& 100\% \textbackslash{}frac\{1\}\{}" in tex


@needs_pdflatex
def test_nasty_report_compiles(tmp_path):
    res = _results()
    res["claims"][0]["statement"] = r"\undefinedmacro{x} & 100% \frac{1}{"
    pdf = compile_pdf(write_latex(res, tmp_path / "report.tex"))
    assert pdf is not None and pdf.stat().st_size > 1000 and compile_pdf.switched == []
    assert not (tmp_path / "report.aux").exists()


@needs_pdflatex
def test_real_claim_statements_compile_as_math(tmp_path):
    """Every statement and correction of every registered claim goes into the PDF as math."""
    from theorems.registry import all_claims
    claims = [c.describe() for c in all_claims()]
    res = {"meta": {}, "summary": {}, "claims": claims, "records": []}
    tex = write_latex(res, tmp_path / "report.tex")
    fallbacks = render_latex.fallbacks
    assert fallbacks == [], f"{len(fallbacks)} statements rejected by check_math: {fallbacks[:3]}"
    assert compile_pdf(tex, passes=1) is not None
    assert compile_pdf.switched == [], f"pdflatex rejected formulas: {compile_pdf.switched}"


@needs_pdflatex
def test_compile_pdf_switches_a_formula_pdflatex_rejects(tmp_path):
    res = _results()
    res["claims"][0]["statement"] = r"x^1^2"      # passes check_math, a TeX error (double superscript)
    tex = write_latex(res, tmp_path / "report.tex")
    assert compile_pdf(tex) is not None
    assert len(compile_pdf.switched) == 1 and "superscript" in compile_pdf.switched[0][1]
    assert r"\texttt{\small x\textasciicircum{}1\textasciicircum{}2}" in tex.read_text()


@needs_pdflatex
def test_compile_failure_raises_and_keeps_the_log(tmp_path):
    tex = tmp_path / "broken.tex"
    tex.write_text("\\documentclass{article}\\begin{document}\\undefinedcommand\\end{document}\n")
    with pytest.raises(LatexError) as exc:
        compile_pdf(tex)
    assert "Undefined control sequence" in str(exc.value)
    assert exc.value.log.exists()


def test_compile_pdf_without_pdflatex_returns_none(tmp_path, monkeypatch):
    import reports.latex as rl
    monkeypatch.setattr(rl.shutil, "which", lambda name: None)
    assert compile_pdf(write_latex(_results(), tmp_path / "r.tex")) is None


@needs_pdflatex
def test_plot_becomes_a_pdf_figure(tmp_path):
    res = _results()
    res["records"][0]["values"]["plot"] = {"kind": "loglog", "x": [1, 2, 4, 8],
                                           "series": {"error": [1, 0.5, 0.25, 0.125]},
                                           "xlabel": "N", "ylabel": "error", "title": "rate 1/N"}
    res["records"][2]["values"]["plot"] = {"kind": "nonsense"}
    tex = write_latex(res, tmp_path / "report.tex")
    text = tex.read_text()
    assert (tmp_path / "figures" / "fig-1.pdf").read_bytes()[:4] == b"%PDF"   # in a subfolder, not loose
    assert r"\includegraphics[width=0.75\linewidth]{figures/fig-1.pdf}" in text
    assert "figure not drawn" in text and not (tmp_path / "figures" / "fig-3.pdf").exists()
    assert not list(tmp_path.glob("*fig*.pdf"))
    assert compile_pdf(tex) is not None


def test_render_rejects_a_non_results_object():
    with pytest.raises(ValueError):
        render_latex({"claims": []})
    json.dumps(_results())  # the fixture itself is a valid JSON document
