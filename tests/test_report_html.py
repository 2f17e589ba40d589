"""The HTML report (reports.html, reports.mathml, reports.plots) on hand-made results."""
from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import unquote

import pytest

from reports import summarise
from reports import html as rhtml
from reports import mathml, plots

EVIL = "<script>alert('x')</script> & <b>bold</b>"


def _claim(cid, status="holds", statement=r"\frac{d}{dt}C_p=0", corrected=None, checks=None, **kw):
    doc = cid.split(".")[0]
    c = {"id": cid, "document": doc, "title": kw.pop("title", f"title of {cid}"), "label": kw.pop("label", "Thm 1"),
         "location": {"section": "4.2", "equation": "(4.7)", "lines": [211, 223], "seed": "002_seed.txt"},
         "statement": statement, "status": status, "corrected": corrected,
         "params": [{"name": "d", "kind": "int", "default": 3, "doc": "width", "range": "[1, 8]"},
                    {"name": "A", "kind": "matrix", "default": None, "doc": "a matrix"}],
         "checks": checks if checks is not None else [
             {"kind": "numeric", "variant": "corrected" if corrected else "stated", "expect": "certified",
              "description": "the numeric check", "backends": ["numpy"]},
             {"kind": "falsifier", "variant": "flip", "expect": "refuted", "description": "a sign flipped"}],
         "notes": kw.pop("notes", ""), "catalogue": "cat §1", "covers": []}
    c.update(kw)
    return c


def _rec(cid, kind, variant, verdict, residual=1e-15, tolerance=1e-12, values=None, params=None, cex=None,
         backend="numpy", message=""):
    return {"claim": cid, "check": kind, "variant": variant, "verdict": verdict, "residual": residual,
            "tolerance": tolerance, "params": params if params is not None else {"d": 3, "A": None},
            "values": values or {}, "counterexample": cex, "backend": backend, "seconds": 0.0123,
            "message": message}


PLOT = {"kind": "loglog", "x": [1, 2, 4, 8, 16], "series": {"error": [1, 0.5, 0.25, 0.125, "nan"],
                                                         "1/N": [1, 0.5, 0.25, 0.125, 0.0625]},
        "xlabel": "N", "ylabel": "error", "title": "first order"}
BIG = {"A": [[0.123456789 * (i + j) for j in range(8)] for i in range(8)], "d": 8}


@pytest.fixture(scope="module")
def results():
    claims = [
        _claim("menon.good", notes="plain notes with $x^2$ math & an ampersand"),
        _claim("menon.err", status="erratum", statement=r"g^N(Z,Z)=N\sum_k\sigma_k^{2}Z_{kk}^2",
               corrected=r"g^N(Z,Z)=\sum_k\frac{Z_{kk}^2}{N\sigma_k^{2}}",
               checks=[{"kind": "numeric", "variant": "corrected", "expect": "certified"},
                       {"kind": "falsifier", "variant": "stated", "expect": "refuted"}]),
        _claim("menon.evil", title=EVIL, label=EVIL, notes=EVIL, statement=r"a<b \text{ and } b>c"),
        _claim("menon.bad", checks=[{"kind": "numeric", "variant": "stated", "expect": "certified"},
                                    {"kind": "falsifier", "variant": "flip", "expect": "refuted"}]),
        _claim("menon.slowonly", checks=[{"kind": "reproduction", "variant": "table1", "expect": "certified",
                                          "slow": True}]),
        _claim("menon.incon"),
        _claim("jacot.plotted", statement="prose with $H(x,p)=\\tfrac12|p|^2$ inline",
               checks=[{"kind": "reproduction", "variant": "fig2", "expect": "certified"},
                       {"kind": "numeric", "variant": "stated", "expect": "certified"},
                       {"kind": "falsifier", "variant": "big", "expect": "refuted"}]),
    ]
    records = [
        _rec("menon.good", "numeric", "stated", "certified"),
        _rec("menon.good", "falsifier", "flip", "refuted", residual=2.5,
             cex={"params": {"d": 2, "A": [[1, 2], [0, 1]]}, "residual": 2.5, "tolerance": 1e-12}),
        _rec("menon.err", "numeric", "corrected", "certified", residual=0, tolerance=0),
        _rec("menon.err", "falsifier", "stated", "refuted", residual="inf",
             cex={"params": {"d": 3, "seed": 17}, "residual": "inf", "tolerance": 1e-12}),
        _rec("menon.evil", "numeric", "stated", "certified", message=EVIL, values={"note": EVIL}),
        _rec("menon.evil", "falsifier", "flip", "refuted", cex={"params": {"d": 1}, "why": EVIL}),
        _rec("menon.bad", "numeric", "stated", "refuted", residual=1.0, cex={"params": {"d": 4}}),
        _rec("menon.bad", "falsifier", "flip", "certified"),
        _rec("menon.incon", "numeric", "stated", "inconclusive", message="singular instance"),
        _rec("menon.incon", "falsifier", "flip", "refuted", cex={"params": {"d": 2}}),
        _rec("jacot.plotted", "reproduction", "fig2", "certified", values={"plot": PLOT, "slope": 1.0}),
        _rec("jacot.plotted", "numeric", "stated", "certified", values={"plot": {"kind": "pie", "x": [1]}}),
        _rec("jacot.plotted", "falsifier", "big", "refuted", params=BIG, backend="numba",
             cex={"params": BIG, "residual": 3.0, "tolerance": 1e-9}),
    ]
    return {"meta": {"date": "2026-01-01T00:00:00+00:00", "profile": "ci", "seed": "derandomized",
                     "python": "3.11", "versions": {"numpy": "2.0"}, "pytest_exit": 1, "runslow": False},
            "summary": summarise(claims, records), "claims": claims, "records": records}


@pytest.fixture(scope="module")
def page(results):
    return rhtml.render_html(results)


def _section(page, cid):
    m = re.search(rf'<section class="claim[^"]*" id="{re.escape(cid)}".*?</section>', page, re.S)
    assert m, f"no section for {cid}"
    return m.group(0)


def _text(fragment):
    return html.unescape(re.sub(r"<[^>]+>", " ", fragment))


# ---------------------------------------------------------------------------
def test_summary_table_matches_reports_summary(results, page):
    s = summarise(results["claims"], results["records"])
    rows = dict(re.findall(r'<tr data-doc="(\w+)">(.*?)</tr>', page, re.S))
    assert set(rows) == set(s["documents"]) | {"total"}
    assert page.index('data-doc="jacot"') < page.index('data-doc="menon"')   # DESIGN.md order
    for doc, row in rows.items():
        cells = {k: int(v) for k, v in re.findall(r'<td data-col="(\w+)"[^>]*>(\d+)</td>', row)}
        want = s["total"] if doc == "total" else s["documents"][doc]
        assert cells == want, doc
    assert s["documents"]["menon"]["refuted"] == 1 and s["documents"]["menon"]["unchecked"] == 1
    assert page.index('id="summary-table"') < page.index('class="claim')      # the summary comes first


def test_every_claim_has_a_section_and_outcome(results, page):
    for c in results["claims"]:
        sec = _section(page, c["id"])
        assert f'href="#{c["id"]}"' in page                                    # table of contents
        outcome = rhtml.claim_outcome(c, [r for r in results["records"] if r["claim"] == c["id"]])
        assert f'data-outcome="{outcome}"' in sec
        loc = _text(sec)
        assert "002_seed.txt" in loc and "lines 211\u2013223" in loc and "(4.7)" in loc
    assert 'data-outcome="refuted"' in _section(page, "menon.bad")
    assert 'data-outcome="inconclusive"' in _section(page, "menon.incon")
    slow = _section(page, "menon.slowonly")
    assert "not run" in slow and "--runslow" in slow


def test_errata_side_by_side(page):
    sec = _section(page, "menon.err")
    m = re.search(r'<div class="errata">\s*<div class="stmt printed">(.*?)</div></div>\s*'
                  r'<div class="stmt corrected">(.*?)</div></div>', sec, re.S)
    assert m, "printed and corrected side by side"
    printed, corrected = m.groups()
    assert "<math" in printed and "<math" in corrected
    assert "<mfrac>" in corrected and "<mfrac>" not in printed
    assert 'class="errata"' not in _section(page, "menon.good")


def test_verdicts_residuals_counterexamples_and_replay(page):
    sec = _section(page, "menon.good")
    txt = _text(sec)
    assert "certified" in txt and "refuted \u2713 caught" in txt
    assert "residual 1.00e-15 vs tolerance 1.00e-12" in " ".join(txt.split())
    assert "Counterexample" in txt and '"A": [[1, 2], [0, 1]]' in txt
    assert "theorems check menon.good --variant flip --param d=2 --param 'A=[[1,2],[0,1]]'" in txt
    assert "theorems check menon.good --variant stated --param d=3" in txt   # null default dropped
    err = " ".join(_text(_section(page, "menon.err")).split())
    assert "residual 0 \u00b7 exact" in err and "residual \u221e" in err and '"seed": 17' in err
    bad = _section(page, "menon.bad")
    assert "c-unexpected" in bad and "expected certified" in _text(bad) and "expected refuted" in _text(bad)
    prop = rhtml.replay_command({"claim": "menon.good", "check": "property", "variant": "stated"})
    assert prop["command"] == "pytest theorems -k 'menon.good and property and stated'"


def test_long_parameters_replay_through_a_params_file(page):
    sec = _section(page, "jacot.plotted")
    assert "--params-file jacot.plotted.big.params.json" in sec and "--backend numba" in sec
    uri = re.search(r'href="(data:application/json;charset=utf-8;base64,[^"]+)" download="jacot.plotted.big.params.json"',
                    sec).group(1)
    saved = json.loads(base64.b64decode(unquote(uri).split(",", 1)[1]))  # a record: it names its claim
    assert saved["params"] == BIG and saved["claim"] == "jacot.plotted" and saved["check"] == "falsifier"


def test_strings_from_results_are_escaped(page):
    assert "<script>alert" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(" in page and "&amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert len(re.findall(r"<script\b", page)) == 1                        # the report's own filter script
    assert "$x^2$" not in page and "math &amp; an ampersand" in page       # notes: math converted, text escaped


def test_offline_no_external_resources(page):
    assert not re.search(r"""(?:src|href|action|xlink:href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"""url\(\s*["']?\s*(?:https?:)?//|@import""", page, re.I)
    assert "http://" not in page and "https://" not in page               # not even a namespace


def test_plots_inlined_as_svg_and_bad_specs_are_a_note(page):
    sec = _section(page, "jacot.plotted")
    assert re.search(r'<figure class="plot"><svg role="img" class="plot-svg"', sec)
    assert "plot not drawn: unknown plot kind 'pie'" in _text(sec)
    assert page.count('<svg role="img"') == 1 + 2                          # one plot + a margin plot per document
    ids = re.findall(r'(?<![\w-])id="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "inline SVGs must not share ids"


def test_math_rendered_as_mathml(page):
    sec = _section(page, "menon.good")
    assert re.search(r'<div class="tex"><math display="inline">.*<mfrac>', sec, re.S)
    mixed = _section(page, "jacot.plotted")
    assert "prose with " in mixed and "<math" in mixed and "$" not in _text(mixed.split('class="checks"')[0])
    assert 'data-math-failed="0"' in page and 'class="tex-fallback"' not in page


# ---------------------------------------------------------------------------
def test_latex_to_mathml_and_fallback():
    with mathml.track() as st:
        out = mathml.latex_to_mathml(r"\sqrt{\det g^N}\,dW")
        assert out.startswith("<math") and "<msqrt>" in out
        assert 'display="block"' in mathml.latex_to_mathml("x^2", display=True)
        bad = mathml.latex_to_mathml(r"\notacommand{x} < y")
        assert bad == ('<code class="tex-fallback" title="not converted: unknown command \\notacommand">'
                       "\\notacommand{x} &lt; y</code>")
        assert st == {"converted": 2, "failed": 1} and mathml.failures[0][0].startswith(r"\notacommand")
    assert mathml.render_tex("the bound $a<b$ & more") .startswith("the bound <math")
    assert "&amp; more" in mathml.render_tex("the bound $a<b$ & more")
    assert mathml.render_tex("no math here, just words") == "no math here, just words"
    assert mathml.split_math(r"a $x$ b $$y$$ c \(z\)") == [("text", "a "), ("math", "x"), ("text", " b "),
                                                             ("display", "y"), ("text", " c "), ("math", "z")]
    # a long formula is cut at its top-level separators (so the browser can wrap it), never inside braces
    pieces = mathml._split_formula(r"A=\{x,\ y\},\ B=\bigl(1;\ 2\bigr);\ \text{so, }C\quad D")
    assert pieces == [r"A=\{x,\ y\},", r"B=\bigl(1;\ 2\bigr);", r"\text{so, }C", "D"]


def test_every_real_claim_statement_converts():
    from theorems.registry import all_claims
    claims = [c.describe() for c in all_claims()]
    assert len(claims) >= 50
    with mathml.track() as st:
        for c in claims:
            for field in ("statement", "corrected"):
                if c[field]:
                    out = mathml.render_tex(c[field])
                    assert "<math" in out, (c["id"], field)
        assert st["failed"] == 0, mathml.failures[:3]
    page = rhtml.render_html({"meta": {}, "claims": claims, "records": []})
    assert 'data-math-failed="0"' in page
    for c in claims:
        assert f'id="{c["id"]}"' in page


def test_render_plot_formats_and_errors():
    assert plots.render_plot(PLOT, "svg").lstrip().startswith(b"<?xml")
    assert plots.render_plot(PLOT, "png")[:8] == b"\x89PNG\r\n\x1a\n"
    assert plots.render_plot(PLOT, "pdf")[:5] == b"%PDF-"
    for spec, msg in [(None, "must be an object"), ({"kind": "pie", "x": [1], "series": {"a": [1]}}, "unknown plot kind"),
                      ({"x": [1, 2], "series": {"a": [1]}}, "has 1 values for 2"),
                      ({"x": [1], "series": {"a": ["x"]}}, "not a number"),
                      ({"kind": "loglog", "x": [0], "series": {"a": [-1]}}, "no finite point"),
                      ({"x": [], "series": {"a": []}}, "non-empty")]:
        with pytest.raises(plots.PlotError, match=msg):
            plots.render_plot(spec)
    with pytest.raises(plots.PlotError):
        plots.render_plot(PLOT, "gif")


def test_margin_plot_and_inline_svg():
    recs = [_rec("m.a", "numeric", "stated", "certified", residual=1e-3, tolerance=1.0),
            _rec("m.a", "falsifier", "f", "refuted", residual=5.0, tolerance=1e-12),
            _rec("m.a", "symbolic", "stated", "certified", residual=0, tolerance=0),
            _rec("m.a", "numeric", "x", "certified", residual=-2e-7, tolerance=1e-14)]
    data = plots.margin_data(recs)
    assert [d["kind"] for d in data] == ["numeric", "falsifier", "numeric"] and data[2]["clipped"] == -1
    svg = plots.inline_svg(plots.margin_plot(recs), prefix="t")
    assert svg.startswith("<svg role=") and "<?xml" not in svg and "<style" not in svg
    assert all(i.startswith("t-") for i in re.findall(r'\bid="([^"]+)"', svg))
    with pytest.raises(plots.PlotError):
        plots.margin_plot([])


def test_pretty_json_and_numbers():
    assert rhtml.pretty_json({"a": 1}) == '{"a": 1}'
    out = rhtml.pretty_json({"A": [[float(i + j) for j in range(12)] for i in range(3)]}, width=60)
    assert out.splitlines()[1].startswith(' "A": [[0.0, 1.0') and len(out.splitlines()) >= 4
    assert json.loads(out) == {"A": [[float(i + j) for j in range(12)] for i in range(3)]}
    assert [rhtml.fmt_num(v) for v in (0, 1e-15, 0.5, "inf", "nan", None, 3)] == \
        ["0", "1.00e-15", "0.5", "\u221e", "NaN", "\u2014", "3"]


def test_write_html_and_empty_results(tmp_path, results):
    small = {"meta": results["meta"], "claims": results["claims"][:1], "records": []}
    p = rhtml.write_html(small, tmp_path / "sub" / "report.html")
    assert p.exists() and p.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    empty = rhtml.render_html({})
    assert "Verification report" in empty and "0 of 0 claims" in empty
