"""The summary of a certification run, from plain result dicts."""
from reports import summarise, summary_table


def _claim(cid, status="holds"):
    return {"id": cid, "document": "menon", "status": status,
            "checks": [{"kind": "numeric", "variant": "stated"}, {"kind": "falsifier", "variant": "f"}]}


def _rec(cid, kind, variant, verdict):
    return {"claim": cid, "check": kind, "variant": variant, "verdict": verdict}


def test_summary_classifies_each_claim():
    claims = [_claim("menon.a"), _claim("menon.b"), _claim("menon.c"), _claim("menon.d"),
              _claim("menon.e", "erratum"), _claim("menon.f")]
    recs = [_rec("menon.a", "numeric", "stated", "certified"), _rec("menon.a", "falsifier", "f", "refuted"),
            _rec("menon.b", "numeric", "stated", "refuted"), _rec("menon.b", "falsifier", "f", "refuted"),
            _rec("menon.c", "numeric", "stated", "certified"), _rec("menon.c", "falsifier", "f", "certified"),
            _rec("menon.d", "numeric", "stated", "inconclusive"),
            _rec("menon.e", "numeric", "stated", "certified"), _rec("menon.e", "falsifier", "f", "refuted")]
    claims.append(_claim("menon.g", "gap"))  # a gap is counted in its own column, not among the errata
    s = summarise(claims, recs)["documents"]["menon"]
    assert s == {"claims": 7, "certified": 2, "refuted": 1, "failed": 1, "inconclusive": 1, "unchecked": 2,
                 "errata": 1, "gaps": 1, "falsifiers_caught": 3}
    table = summary_table(summarise(claims, recs))
    assert "menon" in table and "falsifiers_caught" in table


def test_summary_lists_documents_in_seed_order():
    claims = [dict(_claim(f"{d}.x"), document=d) for d in ("sander", "chen", "jacot", "menon", "vanrossem")]
    assert list(summarise(claims, [])["documents"]) == ["jacot", "vanrossem", "menon", "chen", "sander"]
