"""Per-document summary of a certification run, computed from plain result dicts."""
from __future__ import annotations

COLUMNS = ("claims", "certified", "refuted", "failed", "inconclusive", "unchecked", "errata",
           "falsifiers_caught")


def _expected(check: dict) -> str:
    return check.get("expect") or ("refuted" if check["kind"] == "falsifier" else "certified")


def summarise(claims: list[dict], records: list[dict]) -> dict:
    """Per document: claims; certified (every check as expected); refuted (a check of the
    statement that should hold came out refuted); failed (a check broke, or a falsifier found
    no counterexample); inconclusive (a hypothesis failed on the instance); unchecked (no
    records, e.g. only slow checks, skipped); errata; falsifiers caught."""
    by_claim: dict[str, list] = {}
    for r in records:
        by_claim.setdefault(r["claim"], []).append(r)
    docs: dict[str, dict] = {}
    for c in claims:
        d = docs.setdefault(c["document"], dict.fromkeys(COLUMNS, 0))
        d["claims"] += 1
        d["errata"] += c["status"] in ("erratum", "gap")
        recs = by_claim.get(c["id"], [])
        expect = {(k["kind"], k["variant"]): _expected(k) for k in c.get("checks", [])}
        ok = [r["verdict"] == expect.get((r["check"], r["variant"]), "certified") for r in recs]
        d["falsifiers_caught"] += sum(r["check"] == "falsifier" and r["verdict"] == "refuted" for r in recs)
        bad = [r for r, o in zip(recs, ok) if not o]
        if not recs:
            d["unchecked"] += 1
        elif not bad:
            d["certified"] += 1
        elif any(r["verdict"] == "refuted" for r in bad):
            d["refuted"] += 1
        elif any(r["verdict"] in ("error", "certified") for r in bad):
            d["failed"] += 1
        else:
            d["inconclusive"] += 1
    total = {k: sum(d[k] for d in docs.values()) for k in COLUMNS}
    return {"documents": docs, "total": total}


def summary_table(summary: dict) -> str:
    """The summary as a fixed-width text table."""
    head = f"{'document':<10}" + "".join(f"{c:>{max(len(c), 6) + 2}}" for c in COLUMNS)
    rows = [head, "-" * len(head)]
    for doc, d in summary["documents"].items():
        rows.append(f"{doc:<10}" + "".join(f"{d[c]:>{max(len(c), 6) + 2}}" for c in COLUMNS))
    rows.append(f"{'total':<10}" + "".join(f"{summary['total'][c]:>{max(len(c), 6) + 2}}" for c in COLUMNS))
    return "\n".join(rows)
