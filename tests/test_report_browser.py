"""The HTML report in a real headless Chromium (selenium + chromedriver).

Skips, naming what is missing, when selenium, chromium or chromedriver is absent (CI installs them
where it can).  ``CHROMIUM`` / ``CHROMEDRIVER`` override where the programs are looked for.

Run as a script to (re)make the screenshots of the README/docs from a saved certification::

    python tests/test_report_browser.py certification/results.json [docs]
"""
from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _first(env: str, names, paths) -> str | None:
    if os.environ.get(env):
        return os.environ[env] if Path(os.environ[env]).exists() else None
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return next((p for p in paths if Path(p).exists()), None)


CHROMIUM = _first("CHROMIUM", ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"),
                  ("/usr/bin/chromium", "/usr/lib/chromium/chromium"))
CHROMEDRIVER = _first("CHROMEDRIVER", ("chromedriver",), ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"))


def missing() -> list[str]:
    out = []
    try:
        import selenium  # noqa: F401
    except ImportError:
        out.append("selenium (pip install selenium)")
    if not CHROMIUM:
        out.append("chromium (apt-get install chromium, or set CHROMIUM)")
    if not CHROMEDRIVER:
        out.append("chromedriver (apt-get install chromium-driver, or set CHROMEDRIVER)")
    return out


def make_driver(width: int = 1280, height: int = 1000, scale: float = 1.0):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-extensions", "--no-first-run", "--hide-scrollbars",
              f"--window-size={width},{height}", f"--force-device-scale-factor={scale}"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)


def synthetic_results() -> dict:
    """Every registered claim with one record per declared check (as expected), plus a plot."""
    from reports import summarise
    from theorems.registry import all_claims
    claims = [c.describe() for c in all_claims()]
    records = []
    for c in claims:
        for k in c["checks"]:
            refuted = k.get("expect", "certified") == "refuted"
            params = {p["name"]: p["default"] for p in c["params"]}
            records.append({
                "claim": c["id"], "check": k["kind"], "variant": k["variant"],
                "verdict": "refuted" if refuted else "certified",
                "residual": 3.5 if refuted else 2e-15, "tolerance": 1e-12, "params": params,
                "values": {"value": 1.0},
                "counterexample": {"params": params, "residual": 3.5, "tolerance": 1e-12} if refuted else None,
                "backend": "numpy", "seconds": 0.01, "message": "synthetic record"})
    records[0]["values"]["plot"] = {"kind": "loglog", "x": [1, 2, 4, 8], "series": {"err": [1, .5, .25, .125]},
                                    "xlabel": "N", "ylabel": "error", "title": "convergence"}
    return {"meta": {"date": "test", "profile": "ci"}, "summary": summarise(claims, records),
            "claims": claims, "records": records}


@pytest.fixture(scope="module")
def browser():
    miss = missing()
    if miss:
        pytest.skip("headless browser test needs " + ", ".join(miss))
    try:
        drv = make_driver()
    except Exception as exc:  # a browser that is installed but cannot start here
        pytest.skip(f"chromium/chromedriver did not start: {str(exc).splitlines()[0][:200]}")
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from reports.html import write_html
    res = synthetic_results()
    return res, write_html(res, tmp_path_factory.mktemp("report") / "report.html")


PROBE = r"""
const q = s => Array.prototype.slice.call(document.querySelectorAll(s));
const size = e => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; };
const stmt = q('.stmt math');
return {
  summaryRows: q('#summary-table tbody tr').length,
  summaryCells: q('#summary-table td[data-col]').map(td => [td.parentNode.getAttribute('data-doc'), td.getAttribute('data-col'), td.textContent.trim()]),
  claims: q('section.claim').length,
  tocRows: q('tr.toc-row').length,
  maths: q('math').length,
  stmtMaths: stmt.length,
  stmtZero: stmt.filter(m => !size(m)).length,
  display: stmt.length ? getComputedStyle(stmt[0]).display : '',
  fracHeight: (q('.stmt math mfrac')[0] || {getBoundingClientRect: () => ({height: 0})}).getBoundingClientRect().height,
  fallbacks: q('code.tex-fallback').length,
  stmtText: q('.stmt').map(e => e.innerText).join('\n'),
  bodyText: document.body.innerText,
  svgs: q('svg.plot-svg').filter(size).length,
  errata: q('.errata').length,
  cex: q('.cex pre').length,
};
"""


def test_report_renders_in_chromium(browser, report):
    import time

    from selenium.webdriver.common.by import By
    res, path = report
    t0 = time.perf_counter()
    browser.get(path.as_uri())
    # the report is several MB: probe only once the document has been parsed completely
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")
    r = browser.execute_script(PROBE)
    n = len(res["claims"])
    docs = {c["document"] for c in res["claims"]}
    assert r["summaryRows"] == len(docs) and r["claims"] == n and r["tocRows"] == n
    for doc, col, val in r["summaryCells"]:
        want = res["summary"]["total" if doc == "total" else "documents"]
        assert int(val) == (want[col] if doc == "total" else want[doc][col]), (doc, col)
    # formulas are MathML laid out by the browser: present, sized, and no TeX left visible
    assert r["stmtMaths"] >= n and r["maths"] >= n
    assert r["stmtZero"] == 0, "a statement's <math> has no rendered size"
    assert "math" in r["display"], f"<math> is not laid out as MathML (display: {r['display']!r})"
    assert r["fracHeight"] > 18, "a fraction is not stacked"
    assert r["fallbacks"] == 0
    assert not re.search(r"\\[A-Za-z]{2,}|\^\{|_\{", r["stmtText"]), "raw TeX visible in a statement"
    assert not re.search(r"\$[^$\n]{1,200}\$", r["bodyText"]), "raw $...$ visible"
    assert r["errata"] == sum(c["status"] in ("erratum", "gap") for c in res["claims"])
    assert r["cex"] == sum(rec["verdict"] == "refuted" for rec in res["records"])
    assert r["svgs"] >= len(docs) + 1          # a margin plot per document and the record's plot
    # the filter box
    box = browser.find_element(By.ID, "filter")
    box.send_keys(res["claims"][0]["id"])
    shown = browser.find_element(By.ID, "shown").text
    assert shown.startswith("1 of ") or shown.startswith("2 of "), shown
    box.clear()
    box.send_keys("zzz-no-such-claim")
    assert browser.find_element(By.ID, "shown").text.startswith("0 of ")
    browser.find_element(By.ID, "expand").click()
    # no console errors (failed loads, script errors, bad markup the console reports)
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe
    assert time.perf_counter() - t0 < 20


# ---------------------------------------------------------------------------
def screenshots(results: dict, outdir: Path, claim: str = "menon.metric_coordinates") -> list[Path]:
    """docs/report-summary.png (the top of the report) and docs/report-claim.png (one claim)."""
    import tempfile

    from selenium.webdriver.common.by import By

    from reports.html import write_html
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = write_html(results, Path(tmp) / "report.html")
        drv = make_driver(1280, 1000)
        try:
            drv.get(page.as_uri())
            top = outdir / "report-summary.png"
            drv.save_screenshot(str(top))
            drv.set_window_size(1280, 2600)
            drv.execute_script("document.querySelector('.toolbar').style.display = 'none';")
            el = drv.find_element(By.ID, claim)
            drv.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -12);", el)
            one = outdir / "report-claim.png"
            el.screenshot(str(one))
            severe = [e for e in drv.get_log("browser") if e.get("level") == "SEVERE"]
            if severe:
                print("console errors:", severe, file=sys.stderr)
        finally:
            drv.quit()
    return [top, one]


if __name__ == "__main__":  # pragma: no cover
    import json
    if len(sys.argv) < 2:
        sys.exit("usage: python tests/test_report_browser.py RESULTS.json [OUTDIR] [CLAIM_ID]")
    if missing():
        sys.exit("needs " + ", ".join(missing()))
    sys.path.insert(0, str(ROOT))
    data = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs"
    for p in screenshots(data, out, *(sys.argv[3:4])):
        print("wrote", p)
