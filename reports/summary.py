"""Per-document summary of a certification run, computed from plain result dicts.

One definition everywhere (terminal, results.json, HTML, LaTeX): ``errata`` counts the claims whose
status is ``erratum`` (the printed statement is wrong and is encoded twice, printed form refuted,
corrected form certified) and ``gaps`` those whose status is ``gap`` (the statement is unproven as
printed; the completed form is certified); the two are separate columns.
"""
from __future__ import annotations

from .view import claim_outcome, expected

#: the documents in the order of their seed files (DESIGN.md), as every report shows them
DOCUMENT_ORDER = ("jacot", "vanrossem", "menon", "chen", "sander")
COLUMNS = ("claims", "certified", "refuted", "failed", "inconclusive", "unchecked", "errata", "gaps",
           "falsifiers_caught")


def summarise(claims: list[dict], records: list[dict]) -> dict:
    """Per document: claims; certified (every check as expected); refuted (a check of the
    statement that should hold came out refuted); failed (a check broke, or a falsifier found
    no counterexample); inconclusive (a hypothesis failed on the instance); unchecked (no
    records, e.g. only slow checks, skipped); errata; gaps; falsifiers caught."""
    by_claim: dict[str, list] = {}
    for r in records:
        by_claim.setdefault(r["claim"], []).append(r)
    docs: dict[str, dict] = {}
    for c in claims:
        d = docs.setdefault(c["document"], dict.fromkeys(COLUMNS, 0))
        d["claims"] += 1
        d["errata"] += c["status"] == "erratum"
        d["gaps"] += c["status"] == "gap"
        recs = by_claim.get(c["id"], [])
        d["falsifiers_caught"] += sum(r["check"] == "falsifier" and r["verdict"] == expected(r, c) == "refuted"
                                      for r in recs)
        d[claim_outcome(c, recs)] += 1
    docs = {k: docs[k] for k in sorted(docs, key=lambda k: (DOCUMENT_ORDER.index(k) if k in DOCUMENT_ORDER
                                                             else len(DOCUMENT_ORDER), k))}
    total = {k: sum(d[k] for d in docs.values()) for k in COLUMNS}
    return {"documents": docs, "total": total, "ran_on": ran_on(records)}


def ran_on(records: list[dict]) -> dict:
    """Which backend ran how many check records (``numpy``, ``numba``, ``array_api_strict``, ``cupy``,
    ``mpmath``): the report's 'which ran where' (a GPU run, `certify --backend cupy`, shows its CuPy
    share here)."""
    out: dict[str, int] = {}
    for r in records:
        b = r.get("backend") or "numpy"
        out[b] = out.get(b, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "numpy", kv[0])))


def summary_table(summary: dict) -> str:
    """The summary as a fixed-width text table."""
    head = f"{'document':<10}" + "".join(f"{c:>{max(len(c), 6) + 2}}" for c in COLUMNS)
    rows = [head, "-" * len(head)]
    for doc, d in summary["documents"].items():
        rows.append(f"{doc:<10}" + "".join(f"{d.get(c, 0):>{max(len(c), 6) + 2}}" for c in COLUMNS))
    rows.append(f"{'total':<10}" + "".join(f"{summary['total'].get(c, 0):>{max(len(c), 6) + 2}}" for c in COLUMNS))
    return "\n".join(rows)
