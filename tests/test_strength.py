"""Check strength (reports/strength.py; DESIGN.md "Check strength") on synthetic results: the counts
per claim, per document and for the suite; a symbolic mutant that came out certified is a defect
shown as one; bounds, falsifier margins and sweep tallies; the strength line of `theorems certify`;
the HTML (in headless Chromium when present) and the LaTeX/PDF (pdflatex when present)."""
from __future__ import annotations

import html
import json
import math
import re
import shutil

import pytest

from reports import strength as st
from reports.view import instance, prose_parts

PDFLATEX = shutil.which("pdflatex")


def _claim(cid, checks, status="holds", **kw):
    c = {"id": cid, "document": cid.split(".")[0], "title": kw.pop("title", f"title of {cid}"), "label": "Thm 1",
         "location": {"section": "1", "equation": "", "lines": [1, 2], "seed": "000_x.txt"},
         "statement": r"a \le b", "status": status, "corrected": None,
         "params": [{"name": "d", "kind": "int", "default": 3, "doc": "size", "range": "[1, 8]"},
                    {"name": "A", "kind": "matrix", "default": None, "doc": "a matrix (drawn from the seed)"}],
         "checks": [dict(k) for k in checks], "notes": kw.pop("notes", ""), "catalogue": "", "covers": []}
    c.update(kw)
    return c


def _k(kind, variant, expect=None):
    return {"kind": kind, "variant": variant,
            "expect": expect or ("refuted" if kind == "falsifier" else "certified"), "description": ""}


def _rec(cid, kind, variant, verdict, residual=1e-15, tolerance=1e-12, values=None, cex=None, params=None):
    params = params if params is not None else {"d": 3, "A": None}
    if verdict == "refuted" and cex is None:
        cex = {"params": params, "residual": residual, "tolerance": tolerance}
    return {"claim": cid, "check": kind, "variant": variant, "verdict": verdict, "residual": residual,
            "tolerance": tolerance, "params": params, "values": values or {}, "counterexample": cex,
            "backend": "numpy", "seconds": 0.01, "message": ""}


DRAWN = [[1.23456789, -0.5], [0.25, 2.0]]


def results() -> dict:
    """menon.mut: 3 mutants (killed, survived, not run), a weak and a strong falsifier;
    menon.nomut: a symbolic check without a mutant; jacot.far / jacot.near / jacot.none: bounds;
    sander.noflag: tightness values but no bound flag (shows nothing)."""
    claims = [
        _claim("menon.mut", [_k("symbolic", "stated"), _k("symbolic", "sign", "refuted"),
                             _k("symbolic", "transpose", "refuted"), _k("symbolic", "dropped", "refuted"),
                             _k("falsifier", "weak"), _k("falsifier", "strong"), _k("numeric", "stated")],
               title="Mutants of $W_{p+1}^T W_{p+1}$", notes="Convention: $C_p = W^TW$ and A_p^T."),
        _claim("menon.nomut", [_k("symbolic", "stated"), _k("numeric", "stated")]),
        _claim("jacot.far", [_k("numeric", "stated"), _k("property", "tightness"), _k("falsifier", "sharpened_10pct"),
                             _k("falsifier", "printed")], bound=True),
        _claim("jacot.near", [_k("numeric", "stated"), _k("property", "tightness"), _k("falsifier", "sharpened_10pct")],
               bound=True),
        _claim("jacot.none", [_k("numeric", "stated")], bound=True),
        _claim("sander.noflag", [_k("numeric", "stated")]),
    ]
    records = [
        _rec("menon.mut", "symbolic", "stated", "certified", 0, 0),
        _rec("menon.mut", "symbolic", "sign", "refuted", 12, 0),
        _rec("menon.mut", "symbolic", "transpose", "certified", 0, 0),          # survived: a defect
        _rec("menon.mut", "falsifier", "weak", "refuted", 1.3e-12, 1e-12,        # margin 1.3: weak
             values={"instance": {"A": DRAWN}}),
        _rec("menon.mut", "falsifier", "strong", "refuted", 0.5, 1e-12),
        _rec("menon.mut", "numeric", "stated", "certified"),
        _rec("menon.nomut", "symbolic", "stated", "certified", 0, 0),
        _rec("menon.nomut", "numeric", "stated", "certified"),
        _rec("jacot.far", "numeric", "stated", "certified", values={"tightness": 0.2}),
        _rec("jacot.far", "property", "tightness", "certified", 0.35, 1, values={"best_tightness": 0.35,
                                                                                "best_params": {"d": 7}}),
        _rec("jacot.far", "falsifier", "sharpened_10pct", "certified", 0.39, 1,
             values={"tightness": 0.35, "best_tightness": 0.35}),
        # a wrong variant's falsifier reports the tightness of the bound it breaks: not the bound's own tightness
        _rec("jacot.far", "falsifier", "printed", "refuted", 5.0, 1, values={"tightness": 5.0}),
        _rec("jacot.near", "numeric", "stated", "certified", values={"tightness": 0.5}),
        _rec("jacot.near", "property", "tightness", "certified", 0.97, 1, values={"best_tightness": 0.97}),
        _rec("jacot.near", "falsifier", "sharpened_10pct", "refuted", 1.08, 1, values={"tightness": 0.97}),
        _rec("jacot.none", "numeric", "stated", "certified"),
        _rec("sander.noflag", "numeric", "stated", "certified", values={"tightness": 0.01}),
    ]
    from reports import summarise
    return {"meta": {"date": "2026-01-01T00:00:00+00:00", "profile": "ci", "seed": "derandomized"},
            "summary": summarise(claims, records), "claims": claims, "records": records}


SWEEP = {"meta": {"seed": 7, "draws": 20, "engine": "local"},
         "claims": {"menon.mut": {"status": "holds", "certified": 18, "inconclusive": 2, "refuted": 0, "error": 0,
                                  "rejected": 0, "failures": []},
                    "jacot.far": {"status": "holds", "certified": 10, "inconclusive": 4, "refuted": 1, "error": 0,
                                  "rejected": 5,
                                  "failures": [{"params": {"d": 8}, "verdict": "refuted", "message": "x",
                                                "replay": "theorems check jacot.far --param d=8"}]},
                    "chen.elsewhere": {"status": "holds", "certified": 20, "inconclusive": 0, "refuted": 0,
                                       "error": 0, "rejected": 0, "failures": []}},
         "summary": {"claims": 3, "draws": 60, "refuted_true": 1, "errors": 0, "inconclusive_rate": 0.1}}


# ---------------------------------------------------------------------------
def test_counts_per_claim():
    s = st.strength_of(results())["claims"]
    m = s["menon.mut"]
    assert (m["mutants_declared"], m["mutants_killed"]) == (3, 1)
    assert {x["variant"]: x["state"] for x in m["mutants"]} == {"sign": "killed", "transpose": "survived",
                                                                  "dropped": "not run"}
    assert not m["symbolic_without_mutant"] and s["menon.nomut"]["symbolic_without_mutant"]
    assert m["bound"] is None and s["sander.noflag"]["bound"] is None        # no flag: nothing shown
    assert {f["variant"]: f["weak"] for f in m["falsifiers"]} == {"weak": True, "strong": False}
    assert m["min_margin"] == pytest.approx(1.3) and m["weak_falsifiers"] == 1
    far, near, none = s["jacot.far"]["bound"], s["jacot.near"]["bound"], s["jacot.none"]["bound"]
    assert far["best_tightness"] == 0.35 and far["band"] == "far" and far["best_params"] == {"d": 7}
    assert far["text"] == "bound not approached, best ratio 0.35"
    assert near["best_tightness"] == 0.97 and near["band"] == "approached"
    assert none["best_tightness"] is None and none["band"] == "none"
    # the sharpened falsifier of jacot.near is refuted by 1.08x = tightness 0.97 / 0.9: its strength is
    # the bound's tightness, so it is caught but neither weak nor the claim's min margin
    nf = s["jacot.near"]["falsifiers"]
    assert nf == [{"variant": "sharpened_10pct", "margin": 1.08, "weak": False, "sharpened": True}]
    assert s["jacot.near"]["weak_falsifiers"] == 0 and s["jacot.near"]["min_margin"] is None


def test_counts_per_document_and_total():
    res = st.strength_of(results())
    t = res["total"]
    assert (t["claims"], t["mutants_declared"], t["mutants_killed"], t["mutants_survived"],
            t["mutants_not_run"], t["claims_with_mutants"], t["symbolic_without_mutant"]) == (6, 3, 1, 1, 1, 1, 1)
    assert (t["bounds_declared"], t["bounds_approached"], t["bounds_far"], t["bounds_no_tightness"]) == (3, 1, 1, 1)
    assert (t["falsifiers_caught"], t["falsifiers_sharpened"], t["falsifiers_weak"]) == (4, 1, 1)
    assert t["min_margin"] == pytest.approx(1.3)           # the sharpened falsifier's 1.08 is not a margin
    assert t["sweep"] is None and res["sweep"] is None
    assert list(res["documents"]) == ["jacot", "menon", "sander"]           # seed order
    assert res["documents"]["menon"]["mutants_declared"] == 3 and res["documents"]["jacot"]["mutants_declared"] == 0
    assert sum(d["claims"] for d in res["documents"].values()) == t["claims"]
    json.dumps(res, allow_nan=False)                                          # JSON-safe


def test_sweep_tallies_and_inconclusive_rate():
    res = st.strength_of(results(), SWEEP)
    far = res["claims"]["jacot.far"]["sweep"]
    assert (far["draws"], far["refuted"], far["rejected"]) == (15, 1, 5)      # rejected draws never ran
    assert far["inconclusive_rate"] == pytest.approx(4 / 15)
    assert any("sweep: 1 refuted" in d and "theorems check jacot.far" in d for d in res["claims"]["jacot.far"]["defects"])
    assert res["claims"]["menon.nomut"]["sweep"] is None
    t = res["total"]["sweep"]
    assert (t["claims"], t["draws"], t["inconclusive"], t["refuted"]) == (2, 35, 6, 1)
    assert t["inconclusive_rate"] == pytest.approx(6 / 35)
    assert res["sweep"]["claims_matched"] == 2 and res["sweep"]["claims_in_sweep"] == 3
    # results.json's own "sweep" is used when no other is given
    assert st.strength_of(dict(results(), sweep=SWEEP))["total"]["sweep"] == t


def test_a_surviving_mutant_is_a_defect():
    res = st.strength_of(results())
    defects = res["claims"]["menon.mut"]["defects"]
    assert len(defects) == 1 and "'transpose' survived" in defects[0]
    assert res["total"]["defects"] == 1
    assert st.defect_lines(res) == [f"menon.mut: {defects[0]}"]
    # inconclusive is not killed either
    r = results()
    r["records"][2]["verdict"] = "inconclusive"
    s = st.strength_of(r)["claims"]["menon.mut"]
    assert [m["state"] for m in s["mutants"]][1] == "not killed" and s["defects"]


def test_strength_line():
    line = st.strength_line(st.strength_of(results()))
    assert line.startswith("strength: mutants killed 1/3 on 1 claim (1 SURVIVED, 1 not run); ")
    assert "1 claim with a symbolic check and no mutant" in line
    assert "bounds 3 declared, 1 approached (tightness >= 0.9), 1 not approached (< 0.5), 1 without a tightness" in line
    assert ("falsifier margins: 4 caught (1 sharpened-constant, judged by their bound's tightness), "
            "min 1.3, 1 below 2x") in line
    assert line.endswith("sweep: not run")
    line = st.strength_line(st.strength_of(results(), SWEEP))
    assert line.endswith("sweep: 35 draws on 2 claims, 1 refuted, 0 errors, inconclusive 17.1%")


def test_infinite_margin_and_json():
    r = results()
    r["records"][4].update(residual=3, tolerance=0)                          # an exact check, r/0
    s = st.strength_of(r)
    assert s["claims"]["menon.mut"]["falsifiers"][1]["margin"] == "inf"
    assert st.fmt_ratio("inf") == "inf" and math.isinf(float("inf"))
    json.dumps(s, allow_nan=False)


@pytest.mark.parametrize("bad, why", [([], "expected an object"), ({"claims": []}, "expected an object"),
                                      ({"claims": {"a.b": {"certified": -1}}}, "not a count"),
                                      ({"claims": {}, "meta": 3}, "'meta' must be an object")])
def test_validate_sweep_rejects(bad, why):
    with pytest.raises(st.SweepError, match=why):
        st.validate_sweep(bad)


def test_instance_shows_the_drawn_matrices():
    rec = results()["records"][3]
    inst, drawn = instance(rec)
    assert drawn == ["A"] and inst == {"d": 3, "A": DRAWN}
    rec2 = dict(rec, values={"A": DRAWN}, counterexample={"params": {"d": 3, "A": None}})
    assert instance(rec2) == ({"d": 3, "A": DRAWN}, ["A"])   # a null parameter filled from values


def test_prose_parts_keeps_names_as_text():
    kinds = lambda t: [(k, src) for k, _, src in prose_parts(t) if k != "text"]  # noqa: E731
    assert kinds("C_p := W_{p+1}^T W_{p+1} - W_p (= G_p),") == [("auto", "C_p"), ("auto", "W_{p+1}^T"),
                                                                  ("auto", "W_{p+1}"), ("auto", "W_p"),
                                                                  ("auto", "G_p")]
    assert kinds("lambda_eps by solvers.psi_eps.certify with e^kappa and values['x_y'] sqrt(g_p)") == []
    assert kinds("not found ($THEOREMS_SEEDS)") == []
    assert kinds("with $x^2$ inline") == [("math", "$x^2$")]


# ---------------------------------------------------------------------------
def test_html_strength_section():
    from reports.html import render_html
    page = render_html(dict(results(), sweep=SWEEP))
    sec = page[page.index('<section id="strength">'):]
    sec = sec[:sec.index("</section>")]
    assert "strength: mutants killed 1/3" in sec
    rows = dict(re.findall(r'<tr data-strength-doc="(\w+)">(.*?)</tr>', sec, re.S))
    assert set(rows) == {"jacot", "menon", "sander", "total"}
    assert re.search(r'data-col="mutants">1/3<', rows["menon"])
    assert re.search(r'data-col="mutants_not_killed" class="bad">1<', rows["total"])
    assert re.search(r'data-col="sweep_draws">35<', rows["total"])
    assert "'transpose' survived" in html.unescape(sec) and "bound not approached, best ratio 0.35" in sec
    claim = re.search(r'<section class="claim[^"]*" id="menon.mut".*?</section>', page, re.S).group(0)
    assert "certified \u2717 mutant survived" in claim and "refuted \u2713 mutant killed" in claim
    assert '<li class="bad">symbolic mutants killed 1/3; transpose: survived; dropped: not run</li>' in claim
    assert "weak: refuted by only 1.3\u00d7 its tolerance" in claim
    assert "Instance used (drawn: A)" in claim and "1.235" in claim          # the drawn matrix, 4 digits
    assert "<math" in claim.split("</h3>")[0]                                 # the title's formula
    notes = claim[claim.index('<p class="notes">'):]
    assert notes.count("<math") == 2                                          # $C_p = W^TW$ and A_p^T
    assert "bound" not in re.search(r'id="sander.noflag".*?</section>', page, re.S).group(0).split("checks")[0]


def test_latex_strength_section_and_polish():
    from reports.latex import render_latex
    tex = render_latex(dict(results(), sweep=SWEEP))
    assert r"\tableofcontents" in tex and r"\section{Check strength}" in tex
    i = tex.index(r"\section{Check strength}")
    assert tex.index(r"\section{Summary}") < i < tex.index(r"\section{Jacot")
    assert tex.index(r"\section{Jacot") < tex.index(r"\section{Menon") < tex.index(r"\section{Sander")
    body = tex[i:tex.index(r"\section{Jacot")]
    assert re.search(r"\nmenon & 1/3 & 1 & 1 & 0 & ", body) and re.search(r"\ntotal & 1/3 & 1 & 1 & 3 & 1 & 1 & ", body)
    assert r"\textcolor{red!75!black}{\textbf{symbolic mutant 'transpose' survived" in body
    assert "bound not approached, best ratio 0.35" in body
    assert r"\subsection{\texorpdfstring{" in tex and "$W_{p+1}^T W_{p+1}$" in tex
    assert "(drawn: \\texttt{A})" in tex and "1.235" in tex
    assert r"\paragraph{Strength}" in tex


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not on PATH")
def test_latex_compiles_with_strength_contents_and_heading_math(tmp_path):
    from reports.latex import compile_pdf, write_latex
    r = dict(results(), sweep=SWEEP)
    r["claims"][1]["title"] = r"Heading with \(\frac{a}{b}\) and |W_l|^2 bare"
    tex = write_latex(r, tmp_path / "report.tex")
    pdf = compile_pdf(tex)
    assert pdf is not None and pdf.read_bytes()[:4] == b"%PDF"
    assert compile_pdf.switched == []
    assert not (tmp_path / "report.toc").exists()      # cleaned up after the passes


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not on PATH")
def test_a_heading_formula_the_contents_reject_falls_back(tmp_path):
    """A heading formula that typesets in the page but breaks when read back from the .toc (its
    expansion there is an undefined command): the heading formulas switch to their source and the
    document compiles."""
    from reports.latex import compile_pdf, write_latex
    r = results()
    r["claims"][1]["title"] = "Fragile $x_1$ heading"
    tex = write_latex(r, tmp_path / "report.tex")
    src = tex.read_text()
    assert src.count("$x_1$%") == 1
    src = src.replace("$x_1$%", r"$x_1\brk$%").replace(
        r"\begin{document}", "\\newcommand{\\brk}{\\string\\undefinedintoc}\n\\begin{document}")
    tex.write_text(src)
    pdf = compile_pdf(tex)
    assert pdf is not None
    assert [w for w, _ in compile_pdf.switched] == ["headings"]
    assert r"\texttt{x\_1}" in tex.read_text()


# ---------------------------------------------------------------------------
def test_report_command_merges_a_sweep(tmp_path, capsys):
    from theorems.cli import main
    (tmp_path / "results.json").write_text(json.dumps(results()))
    (tmp_path / "sweep.json").write_text(json.dumps(SWEEP))
    code = main(["report", "--results", str(tmp_path / "results.json"), "--sweep", str(tmp_path / "sweep.json"),
                 "--format", "html", "--out", str(tmp_path / "r.html")])
    assert code == 0 and "35 draws on 2 claims" in (tmp_path / "r.html").read_text()
    (tmp_path / "bad.json").write_text('{"claims": []}')
    capsys.readouterr()
    code = main(["report", "--results", str(tmp_path / "results.json"), "--sweep", str(tmp_path / "bad.json"),
                 "--format", "html", "--out", str(tmp_path / "r2.html")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "not a `theorems sweep` tally" in err


def test_certify_prints_the_strength_line_and_picks_up_sweep_json(tmp_path, capsys):
    """A real (small) certify: the symbolic items of menon.balanced_invariance, with OUT/sweep.json."""
    from theorems.cli import main
    sweep = {"meta": {"seed": 1}, "claims": {"menon.balanced_invariance": {
        "status": "holds", "certified": 19, "inconclusive": 1, "refuted": 0, "error": 0, "rejected": 0,
        "failures": []}}, "summary": {}}
    (tmp_path / "sweep.json").write_text(json.dumps(sweep))
    code = main(["certify", "--select", "balanced_invariance and symbolic", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("strength: "))
    assert out.index("falsifiers_caught") < out.index("strength: ")          # after the verdict counts
    assert line.startswith("strength: mutants killed 2/2 on 1 claim;")
    assert line.endswith("sweep: 20 draws on 1 claim, 0 refuted, 0 errors, inconclusive 5.0%")
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["sweep"] == sweep
    s = res["strength"]["claims"]["menon.balanced_invariance"]
    assert s["mutants_killed"] == 2 and s["sweep"]["draws"] == 20 and res["strength"]["total"]["mutants_killed"] == 2


def test_certify_bad_sweep_is_exit_2(tmp_path, capsys):
    from theorems.cli import main
    code = main(["certify", "--select", "balanced_invariance", "--sweep", str(tmp_path / "missing.json"),
                 "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "not found" in err and err.count("\n") == 1


# ---------------------------------------------------------------------------
def test_strength_renders_in_chromium(tmp_path):
    """The strength section in a real headless Chromium (skipped without selenium/chromium)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import test_report_browser as tb
    miss = tb.missing()
    if miss:
        pytest.skip("headless browser test needs " + ", ".join(miss))
    from reports.html import write_html
    page = write_html(dict(results(), sweep=SWEEP), tmp_path / "report.html")
    try:
        drv = tb.make_driver()
    except Exception as exc:  # installed but cannot start here
        pytest.skip(f"chromium/chromedriver did not start: {str(exc).splitlines()[0][:200]}")
    try:
        drv.get(page.as_uri())
        r = drv.execute_script(r"""
            const q = s => Array.prototype.slice.call(document.querySelectorAll(s));
            const size = e => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
            return {
              line: document.getElementById('strength-line').innerText,
              rows: q('#strength-table tr[data-strength-doc]').map(tr => tr.getAttribute('data-strength-doc')),
              visible: size(document.getElementById('strength-table')),
              findings: q('#strength-findings li').map(li => [li.className, li.innerText]),
              bad: q('ul.strength li.bad').filter(size).length,
              titleMath: q('section.claim h3 math').filter(size).length,
              notesMath: q('p.notes math').filter(size).length,
            };""")
        severe = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
    finally:
        drv.quit()
    assert r["line"].startswith("strength: mutants killed 1/3") and r["visible"]
    assert r["rows"] == ["jacot", "menon", "sander", "total"]
    assert r["findings"][0][0] == "bad" and "survived" in r["findings"][0][1]
    assert len(r["findings"]) == 2 + 1 + 1 + 1      # 2 defects; far bound, no tightness, 1 weak falsifier
    assert r["bad"] == 2 and r["titleMath"] >= 1 and r["notesMath"] == 2
    assert not severe, severe


def test_threshold_falsifier_margin_from_the_claimed_value():
    """A rate falsifier: error ratio 0.999 against a threshold 0.6, the statement predicting 0.5 (1/L convergence).
    Residual / tolerance (1.67) is capped by the ratio's range; measured from the claimed value it is 4.99."""
    claim = _claim("sander.rate", [_k("numeric", "stated"), _k("falsifier", "no_rate"), _k("falsifier", "barely"),
                                   _k("falsifier", "malformed")])
    recs = [_rec("sander.rate", "falsifier", "no_rate", "refuted", residual=0.999, tolerance=0.6,
                 values={"claimed_value": 0.5}),
            _rec("sander.rate", "falsifier", "barely", "refuted", residual=0.65, tolerance=0.6,
                 values={"claimed_value": 0.5}),
            # a claimed value above the threshold cannot be a threshold test: the raw margin stays, with a warning
            _rec("sander.rate", "falsifier", "malformed", "refuted", residual=3.0, tolerance=0.6,
                 values={"claimed_value": 0.7})]
    s = st.claim_strength(claim, recs, None)
    by = {f["variant"]: f for f in s["falsifiers"]}
    assert by["no_rate"]["margin"] == pytest.approx(4.99) and not by["no_rate"]["weak"]
    assert by["no_rate"]["raw_margin"] == pytest.approx(0.999 / 0.6) and by["no_rate"]["claimed_value"] == 0.5
    assert by["barely"]["margin"] == pytest.approx(1.5) and by["barely"]["weak"]
    assert by["malformed"]["margin"] == pytest.approx(5.0) and "raw_margin" not in by["malformed"]
    assert s["weak_falsifiers"] == 1 and s["min_margin"] == pytest.approx(1.5)
    assert any("not below its threshold" in w for w in s["warnings"])
    assert any("distance of its threshold" in w for w in s["warnings"])
