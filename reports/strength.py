"""Check strength (DESIGN.md, "Check strength"): could each check have failed, and by how much.

One computation, shown in four places: the ``strength`` object of ``results.json``, the line
``theorems certify`` prints after the verdict counts (:func:`strength_line`), the HTML report and
the LaTeX/PDF report.  Plain functions on plain dicts (a claim's description from
``theorems list --json``, result records, and a ``theorems sweep`` tally); nothing here imports
the framework.

What is measured, per claim:

* **symbolic mutants**: a check of kind ``symbolic`` whose expected verdict is ``refuted`` (a
  perturbation of the statement the same procedure must not reduce to zero).  *Killed* when its
  record's verdict is ``refuted``; a mutant that came out ``certified`` *survived* (the procedure
  cannot tell the statement from its perturbation: a defect); ``inconclusive`` or ``error`` is
  *not killed* (also a defect); no record is *not run*.  A claim with a symbolic check of its
  statement and no mutant is counted apart (the number the per-document work drives to zero).
* **bounds** (a claim described with ``"bound": true``): the best tightness reported by its records
  (``values["best_tightness"]`` of the tightness search, ``values["tightness"]`` of a numeric check
  or of the sharpened-constant falsifier; 1 = equality).  ``>= APPROACHED`` (0.9) is *approached*;
  below ``FAR`` (0.5) the report says "bound not approached, best ratio r" (a finding, not a
  failure); a bound whose records report no tightness says so.  Claims without the flag show nothing.
* **falsifier margins**: residual / tolerance of each falsifier record that came out refuted (as it
  must); a margin below ``WEAK_MARGIN`` (2) is *weak*: the wrong variant is only barely refuted.
  A bound's sharpened-constant falsifier (``"sharpen"`` in its description) is counted apart
  (``"sharpened": true``): its margin is tightness / 0.9, at most 1.11 at equality, so the bound's
  tightness measures it; it is never weak and stays out of ``min_margin``.
  A threshold test (a convergence rate, an error ratio, a count) whose record carries
  ``values["claimed_value"]``, the value the statement predicts for the compared quantity (below the
  threshold, which sits between it and the wrong variant's natural value), is measured from there:
  margin = (residual - claimed) / (tolerance - claimed), the wrong variant's distance from the claimed
  value in units of the threshold's (``"raw_margin"`` keeps residual / tolerance).  Residual /
  tolerance alone is capped by the quantity's range (an error ratio of 1 against a threshold of 0.6
  for a claimed 0.5 reads 1.67x; measured from the claim it is 5x).
* **sweep tallies** (``theorems sweep --out DIR`` -> ``DIR/sweep.json``): certified, inconclusive,
  refuted, error and rejected draws over the declared ranges, and the inconclusive rate =
  inconclusive / (certified + inconclusive + refuted + error) (rejected draws, which break a
  cross-parameter constraint, never ran).  A refuted or error draw is a defect.

Layout in ``results.json`` (written by ``theorems certify``; the reports recompute it from the
claims, the records and ``results["sweep"]``, so an older results file renders too)::

    "sweep":    the sweep.json that was merged, as read ({"meta", "claims", "summary"}), or absent
    "strength": {"claims":    {ID: claim strength},
                 "documents": {KEY: tally},          # documents in seed order
                 "total":     tally,
                 "sweep":     {"meta", "summary", "claims_matched"} or null,
                 "thresholds": {"approached": 0.9, "far": 0.5, "weak_margin": 2.0}}

    claim strength = {"mutants": [{"variant", "state": killed|survived|not killed|not run,
                                   "verdict"}],
                      "mutants_declared", "mutants_killed",
                      "symbolic_without_mutant": bool,
                      "bound": null | {"best_tightness", "best_params", "band": approached|near|far|none,
                                       "declared_loose", "text"},
                      "falsifiers": [{"variant", "margin", "weak", ["sharpened"],
                                      ["raw_margin", "claimed_value"]}],   # caught ones; margin "inf" for r/0
                      "min_margin", "weak_falsifiers",
                      "sweep": null | {"status", "certified", "inconclusive", "refuted", "error",
                                       "rejected", "draws", "inconclusive_rate", "failures",
                                       "replays"},
                      "defects": [text], "warnings": [text]}

    tally = {"claims", "mutants_declared", "mutants_killed", "mutants_survived", "mutants_not_killed",
             "mutants_not_run", "claims_with_mutants", "symbolic_without_mutant",
             "bounds_declared", "bounds_approached", "bounds_far", "bounds_no_tightness",
             "falsifiers_caught", "falsifiers_sharpened", "falsifiers_weak", "min_margin",
             "sweep": null | {"claims", "certified", "inconclusive", "refuted", "error", "rejected",
                              "draws", "inconclusive_rate"},
             "defects", "warnings"}
"""
from __future__ import annotations

import math
import re

from .view import expected, ratio

__all__ = ["APPROACHED", "FAR", "WEAK_MARGIN", "claim_strength", "compute", "strength_of",
           "strength_line", "defect_lines", "validate_sweep", "load_sweep", "SweepError", "fmt_ratio"]

#: tightness at or above this is "approached" (within 10% of equality)
APPROACHED = 0.9
#: best tightness below this: "bound not approached, best ratio r"
FAR = 0.5
#: a caught falsifier whose residual is below this many tolerances is weak
WEAK_MARGIN = 2.0
SWEEP_COUNTS = ("certified", "inconclusive", "refuted", "error", "rejected")
#: documents in seed order (DESIGN.md; theorems.documents.KEYS), unknown keys after them
DOCUMENT_ORDER = ("jacot", "vanrossem", "menon", "chen", "sander")


class SweepError(ValueError):
    """The file is not a ``theorems sweep`` tally (the message says why, in one line)."""


def _num(x) -> float | None:
    """A finite or infinite float from a record field (``"inf"`` strings included), else None."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str) and x.strip().lower() in ("inf", "+inf", "-inf", "nan"):
        return float(x.strip().lower())
    return None


def _json_num(x: float | None):
    """JSON-safe: infinities as the strings the result records use."""
    if x is None or math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def fmt_ratio(x) -> str:
    """A tightness or margin as short text: 3 significant digits, ``inf`` spelt out."""
    v = _num(x)
    if v is None:
        return "?"
    if math.isinf(v):
        return "inf"
    if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-3):
        return f"{v:.2e}"
    return f"{v:.3g}"


# ---------------------------------------------------------------------------
def validate_sweep(data, where: str = "sweep file") -> dict:
    """Check a ``theorems sweep`` tally: an object with a ``claims`` object of per-claim tallies
    (``meta`` and ``summary`` objects when present).  Raises :class:`SweepError`."""
    if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        raise SweepError(f"{where} is not a `theorems sweep` tally (expected an object with a 'claims' object)")
    for key in ("meta", "summary"):
        if key in data and not isinstance(data[key], dict):
            raise SweepError(f"{where} is not a `theorems sweep` tally: '{key}' must be an object")
    for cid, t in data["claims"].items():
        if not isinstance(t, dict):
            raise SweepError(f"{where}: the tally of {cid!r} is not an object")
        for k in SWEEP_COUNTS:
            v = t.get(k, 0)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise SweepError(f"{where}: {cid!r} has {k}={v!r}, not a count")
    return data


def _sweep_entry(t: dict) -> dict:
    counts = {k: int(t.get(k, 0) or 0) for k in SWEEP_COUNTS}
    ran = counts["certified"] + counts["inconclusive"] + counts["refuted"] + counts["error"]
    failures = t.get("failures") if isinstance(t.get("failures"), list) else []
    replays = [f.get("replay") for f in failures if isinstance(f, dict) and f.get("replay")][:3]
    return {"status": t.get("status"), **counts, "draws": ran,
            "inconclusive_rate": counts["inconclusive"] / ran if ran else None,
            "failures": len(failures), "replays": replays}


# ---------------------------------------------------------------------------
def _is_mutant(kind, expect) -> bool:
    return kind == "symbolic" and expect == "refuted"


def claim_strength(claim: dict, records: list[dict], sweep: dict | None = None) -> dict:
    """The strength of one claim from its description, its records and its sweep tally (if any)."""
    specs = [k for k in (claim.get("checks") or []) if isinstance(k, dict)]
    by_kv: dict[tuple, list] = {}
    for r in records:
        by_kv.setdefault((r.get("check"), r.get("variant")), []).append(r)
    defects: list[str] = []
    warnings: list[str] = []

    # symbolic mutants: declared by the description, or recognised from a record's expected verdict
    mutant_variants = [k.get("variant") for k in specs if _is_mutant(k.get("kind"), k.get("expect"))]
    for r in records:
        if r.get("check") == "symbolic" and expected(r, claim) == "refuted" and r.get("variant") not in mutant_variants:
            mutant_variants.append(r.get("variant"))
    mutants = []
    for v in mutant_variants:
        recs = by_kv.get(("symbolic", v), [])
        verdicts = [r.get("verdict") for r in recs]
        if not recs:
            state = "not run"
        elif all(x == "refuted" for x in verdicts):
            state = "killed"
        elif "certified" in verdicts:
            state = "survived"
            defects.append(f"symbolic mutant {v!r} survived: the procedure reduced it to zero (certified)")
        else:
            state = "not killed"
            defects.append(f"symbolic mutant {v!r} not killed ({', '.join(sorted(set(map(str, verdicts))))})")
        mutants.append({"variant": v, "state": state,
                        "verdict": verdicts[0] if len(set(verdicts)) == 1 else ",".join(map(str, verdicts))})
    has_symbolic = any(k.get("kind") == "symbolic" and not _is_mutant("symbolic", k.get("expect")) for k in specs) \
        or any(r.get("check") == "symbolic" and expected(r, claim) != "refuted" for r in records)

    # bounds: only for a claim described with "bound": true
    # a bound's sharpened-constant falsifier (see the falsifier margins below)
    sharpened = {k.get("variant") for k in specs if k.get("kind") == "falsifier" and "sharpen" in k}
    if claim.get("bound") is True:   # a results file written before the "sharpen" field
        sharpened |= {r.get("variant") for r in records if r.get("check") == "falsifier"
                      and re.fullmatch(r"sharpened_\d+pct", str(r.get("variant")))}

    bound = None
    if claim.get("bound") is True:
        best, where = None, None
        for r in records:
            # the bound's own records: the variant that holds (numeric, properties, the tightness search) and the
            # sharpened constant; a wrong variant's falsifier reports the tightness of the bound it breaks (> 1)
            if (r.get("variant") not in sharpened
                    and (r.get("check") == "falsifier" or expected(r, claim) == "refuted")):
                continue
            vals = r.get("values") if isinstance(r.get("values"), dict) else {}
            for key in ("best_tightness", "tightness"):
                t = _num(vals.get(key))
                if t is not None and not math.isnan(t) and (best is None or t > best):
                    best = t
                    bp = vals.get("best_params") if key == "best_tightness" else None
                    where = bp if isinstance(bp, dict) else (r.get("params") if isinstance(r.get("params"), dict) else None)
        loose = any(k.get("kind") == "falsifier" and k.get("expect") == "certified" for k in specs)
        if best is None:
            band, text = "none", "bound declared, no record reports its tightness"
            warnings.append(text)
        elif best >= APPROACHED:
            band, text = "approached", f"bound approached: best tightness {fmt_ratio(best)}"
            if best > 1 + 1e-9:   # 1 + a few ulps is equality computed in floating point
                text += " (above 1: the bound fails on that instance)"
        elif best >= FAR:
            band, text = "near", f"best tightness {fmt_ratio(best)} (not within {1 - APPROACHED:.0%} of equality)"
        else:
            band, text = "far", f"bound not approached, best ratio {fmt_ratio(best)}"
            warnings.append(text)
        if loose:
            text += "; declared loose (the sharpened constant is expected to hold)"
        bound = {"best_tightness": _json_num(best), "best_params": where, "band": band,
                 "declared_loose": loose, "text": text}

    # falsifier margins: each falsifier that came out refuted, as it must.  A bound's sharpened-constant
    # falsifier is apart: its margin is tightness / sharpen, at most 1/0.9 at equality, so its strength
    # is the bound's tightness (above), not a margin; it is never "weak" and not in min_margin
    falsifiers = []
    for r in records:
        if r.get("check") != "falsifier" or expected(r, claim) != "refuted" or r.get("verdict") != "refuted":
            continue
        m = ratio(r.get("residual"), r.get("tolerance"))
        vals = r.get("values") if isinstance(r.get("values"), dict) else {}
        claimed = _num(vals.get("claimed_value"))
        if claimed is not None and r.get("variant") not in sharpened:
            res, tol = _num(r.get("residual")), _num(r.get("tolerance"))
            if (res is not None and tol is not None and math.isfinite(claimed) and math.isfinite(tol)
                    and claimed < tol):
                # a threshold test (a rate, a ratio): measured from what the statement predicts, in units of the
                # threshold's distance from it; residual / tolerance would be capped by the quantity's range
                fm = (res - claimed) / (tol - claimed)
                weak = fm < WEAK_MARGIN
                falsifiers.append({"variant": r.get("variant"), "margin": _json_num(fm), "weak": weak,
                                   "raw_margin": _json_num(m), "claimed_value": claimed})
                if weak:
                    warnings.append(f"falsifier {r.get('variant')!r} refuted by only {fmt_ratio(fm)}x the distance "
                                    f"of its threshold {fmt_ratio(tol)} from the claimed value {fmt_ratio(claimed)}")
                continue
            warnings.append(f"falsifier {r.get('variant')!r}: its claimed value {vals.get('claimed_value')!r} is not "
                            "below its threshold; margin taken as residual / tolerance")
        if r.get("variant") in sharpened:
            falsifiers.append({"variant": r.get("variant"), "margin": _json_num(m), "weak": False,
                               "sharpened": True})
            continue
        weak = m is not None and m < WEAK_MARGIN
        falsifiers.append({"variant": r.get("variant"), "margin": _json_num(m), "weak": weak})
        if weak:
            warnings.append(f"falsifier {r.get('variant')!r} refuted by a margin of only {fmt_ratio(m)}x its tolerance")
    margins = [_num(f["margin"]) for f in falsifiers if f["margin"] is not None and not f.get("sharpened")]

    sw = None
    if isinstance(sweep, dict):
        sw = _sweep_entry(sweep)
        if sw["refuted"] or sw["error"]:
            defects.append(f"sweep: {sw['refuted']} refuted and {sw['error']} error draw(s) of {sw['draws']} "
                           "on legal parameters" + (f" (replay: {sw['replays'][0]})" if sw["replays"] else ""))

    return {"mutants": mutants, "mutants_declared": len(mutants),
            "mutants_killed": sum(m["state"] == "killed" for m in mutants),
            "symbolic_without_mutant": bool(has_symbolic and not mutants),
            "bound": bound, "falsifiers": falsifiers,
            "min_margin": _json_num(min(margins)) if margins else None,
            "weak_falsifiers": sum(f["weak"] for f in falsifiers),
            "sweep": sw, "defects": defects, "warnings": warnings}


def _empty_tally() -> dict:
    return {"claims": 0, "mutants_declared": 0, "mutants_killed": 0, "mutants_survived": 0,
            "mutants_not_killed": 0, "mutants_not_run": 0, "claims_with_mutants": 0,
            "symbolic_without_mutant": 0, "bounds_declared": 0, "bounds_approached": 0, "bounds_near": 0,
            "bounds_far": 0, "bounds_no_tightness": 0, "falsifiers_caught": 0, "falsifiers_sharpened": 0, "falsifiers_weak": 0,
            "min_margin": None, "sweep": None, "defects": 0, "warnings": 0}


def _add(t: dict, s: dict) -> None:
    t["claims"] += 1
    t["mutants_declared"] += s["mutants_declared"]
    t["mutants_killed"] += s["mutants_killed"]
    for m in s["mutants"]:
        key = {"survived": "mutants_survived", "not killed": "mutants_not_killed", "not run": "mutants_not_run"}.get(m["state"])
        if key:
            t[key] += 1
    t["claims_with_mutants"] += s["mutants_declared"] > 0
    t["symbolic_without_mutant"] += s["symbolic_without_mutant"]
    if s["bound"] is not None:
        t["bounds_declared"] += 1
        t[{"approached": "bounds_approached", "near": "bounds_near", "far": "bounds_far",
           "none": "bounds_no_tightness"}[s["bound"]["band"]]] += 1
    t["falsifiers_caught"] += len(s["falsifiers"])
    t["falsifiers_sharpened"] += sum(bool(f.get("sharpened")) for f in s["falsifiers"])
    t["falsifiers_weak"] += s["weak_falsifiers"]
    m = _num(s["min_margin"])
    if m is not None and (_num(t["min_margin"]) is None or m < _num(t["min_margin"])):
        t["min_margin"] = s["min_margin"]
    if s["sweep"] is not None:
        sw = t["sweep"] or {"claims": 0, **dict.fromkeys(SWEEP_COUNTS, 0), "draws": 0, "inconclusive_rate": None}
        sw["claims"] += 1
        for k in (*SWEEP_COUNTS, "draws"):
            sw[k] += s["sweep"][k]
        sw["inconclusive_rate"] = sw["inconclusive"] / sw["draws"] if sw["draws"] else None
        t["sweep"] = sw
    t["defects"] += len(s["defects"])
    t["warnings"] += len(s["warnings"])


def compute(claims: list[dict], records: list[dict], sweep: dict | None = None) -> dict:
    """The ``strength`` object of ``results.json`` (layout in the module docstring)."""
    by_claim: dict[str, list] = {}
    for r in records:
        if isinstance(r, dict):
            by_claim.setdefault(r.get("claim"), []).append(r)
    tallies = (sweep or {}).get("claims") if isinstance(sweep, dict) else None
    tallies = tallies if isinstance(tallies, dict) else {}
    per_claim, docs = {}, {}
    for c in claims:
        if not isinstance(c, dict) or "id" not in c:
            continue
        s = claim_strength(c, by_claim.get(c["id"], []), tallies.get(c["id"]))
        per_claim[c["id"]] = s
        _add(docs.setdefault(c.get("document") or str(c["id"]).split(".")[0], _empty_tally()), s)
    order = sorted(docs, key=lambda k: (DOCUMENT_ORDER.index(k) if k in DOCUMENT_ORDER else len(DOCUMENT_ORDER), k))
    docs = {k: docs[k] for k in order}
    total = _empty_tally()
    for s in per_claim.values():
        _add(total, s)
    sweep_info = None
    if isinstance(sweep, dict):
        sweep_info = {"meta": sweep.get("meta") if isinstance(sweep.get("meta"), dict) else {},
                      "summary": sweep.get("summary") if isinstance(sweep.get("summary"), dict) else {},
                      "claims_matched": sum(cid in tallies for cid in per_claim),
                      "claims_in_sweep": len(tallies)}
    return {"claims": per_claim, "documents": docs, "total": total, "sweep": sweep_info,
            "thresholds": {"approached": APPROACHED, "far": FAR, "weak_margin": WEAK_MARGIN}}


def strength_of(results: dict, sweep: dict | None = None) -> dict:
    """:func:`compute` for a parsed ``results.json``: its claims, its records, and ``sweep`` (else
    the ``results["sweep"]`` merged by ``theorems certify``)."""
    if sweep is None and isinstance(results.get("sweep"), dict):
        sweep = results["sweep"]
    return compute([c for c in (results.get("claims") or []) if isinstance(c, dict)],
                   [r for r in (results.get("records") or []) if isinstance(r, dict)], sweep)


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def strength_line(strength: dict) -> str:
    """The one line ``theorems certify`` prints after the verdict counts, e.g. ``strength: mutants
    killed 2/2 on 1 claim; 3 claims with a symbolic check and no mutant; bounds 0 declared;
    falsifier margins: 7 caught, min 9.3e+10, 0 below 2x; sweep: not run``."""
    t = strength["total"]
    parts = [f"mutants killed {t['mutants_killed']}/{t['mutants_declared']} on "
             f"{_plural(t['claims_with_mutants'], 'claim')}"]
    bad = [(t["mutants_survived"], "SURVIVED"), (t["mutants_not_killed"], "not killed"), (t["mutants_not_run"], "not run")]
    if any(n for n, _ in bad):
        parts[0] += " (" + ", ".join(f"{n} {w}" for n, w in bad if n) + ")"
    parts.append(f"{_plural(t['symbolic_without_mutant'], 'claim')} with a symbolic check and no mutant")
    b = f"bounds {t['bounds_declared']} declared"
    if t["bounds_declared"]:
        b += f", {t['bounds_approached']} approached (tightness >= {APPROACHED:g})"
        if t["bounds_far"]:
            b += f", {t['bounds_far']} not approached (< {FAR:g})"
        if t["bounds_no_tightness"]:
            b += f", {t['bounds_no_tightness']} without a tightness"
    parts.append(b)
    sharp = t.get("falsifiers_sharpened", 0)
    parts.append(f"falsifier margins: {t['falsifiers_caught']} caught"
                 + (f" ({sharp} sharpened-constant, judged by their bound's tightness)" if sharp else "")
                 + (f", min {fmt_ratio(t['min_margin'])}" if t["min_margin"] is not None else "")
                 + f", {t['falsifiers_weak']} below {WEAK_MARGIN:g}x")
    sw = t["sweep"]
    if strength.get("sweep") is None:
        parts.append("sweep: not run")
    elif sw is None:
        parts.append("sweep: no claim of this run in the sweep")
    else:
        rate = f"{sw['inconclusive_rate']:.1%}" if sw["inconclusive_rate"] is not None else "-"
        parts.append(f"sweep: {sw['draws']} draws on {_plural(sw['claims'], 'claim')}, {sw['refuted']} refuted, "
                     f"{sw['error']} errors, inconclusive {rate}")
    return "strength: " + "; ".join(parts)


def defect_lines(strength: dict, limit: int = 8) -> list[str]:
    """``ID: text`` for each defect (a surviving mutant, a failed sweep draw), the first ``limit``."""
    out = [f"{cid}: {d}" for cid, s in strength["claims"].items() for d in s["defects"]]
    return out[:limit] + ([f"... and {len(out) - limit} more (see the report)"] if len(out) > limit else [])


def load_sweep(path) -> dict:
    """Read and check ``sweep.json`` (written by ``theorems sweep --out DIR``); :class:`SweepError`
    with one line when it is missing, unreadable or not a sweep tally."""
    import json
    from pathlib import Path
    p = Path(path)
    if not p.exists():
        raise SweepError(f"sweep file {str(p)!r} not found")
    if p.is_dir():
        cand = p / "sweep.json"
        if not cand.is_file():
            raise SweepError(f"sweep file {str(p)!r} is a folder without a sweep.json")
        p = cand
    try:
        data = json.loads(p.read_text())
    except UnicodeDecodeError:
        raise SweepError(f"sweep file {str(p)!r} is not text") from None
    except json.JSONDecodeError as exc:
        raise SweepError(f"sweep file {str(p)!r} is not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except OSError as exc:
        raise SweepError(f"sweep file {str(p)!r} cannot be read ({exc.strerror})") from None
    except RecursionError:
        raise SweepError(f"sweep file {str(p)!r} nests its JSON too deeply to be a sweep tally") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise SweepError(f"sweep file {str(p)!r} is not a sweep tally ({exc})") from None
    return validate_sweep(data, repr(str(p)))
