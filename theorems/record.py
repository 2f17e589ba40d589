"""The result record (DESIGN.md contract) and its JSON encoding.

``{"claim", "check", "variant", "verdict", "residual", "tolerance", "params", "values",
"counterexample", "backend", "seconds", "message"}``.  Non-finite floats are written
as the strings ``"inf"``, ``"-inf"`` and ``"nan"`` so that the file stays strict JSON.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from .vocabulary import KINDS, VERDICTS

RECORD_KEYS = ("claim", "check", "variant", "verdict", "residual", "tolerance", "params",
               "values", "counterexample", "backend", "seconds", "message")


def jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, complex):
        return {"re": jsonable(v.real), "im": jsonable(v.imag)}
    if v is None or isinstance(v, str):
        return v
    try:  # sympy numbers, mpmath mpf, flint arb ...
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def make_record(check, params, out, backend: str, seconds: float) -> dict:
    verdict = out.decide()
    cex = out.counterexample
    if verdict == "refuted" and cex is None:
        cex = {"params": params.to_json() if hasattr(params, "to_json") else params,
               "residual": out.residual, "tolerance": out.tolerance}
    rec = {
        "claim": check.claim.id,
        "check": check.kind,
        "variant": check.variant,
        "verdict": verdict,
        "residual": out.residual,
        "tolerance": out.tolerance,
        "params": params.to_json() if hasattr(params, "to_json") else params,
        "values": out.values,
        "counterexample": cex,
        "backend": backend,
        "seconds": round(seconds, 6),
        "message": out.message,
    }
    return jsonable(rec)


def validate_record(rec: dict) -> None:
    """Raise ValueError unless ``rec`` follows the contract."""
    if tuple(rec) != RECORD_KEYS:
        raise ValueError(f"record keys {tuple(rec)} != {RECORD_KEYS}")
    if rec["check"] not in KINDS:
        raise ValueError(f"unknown check kind {rec['check']!r}")
    if rec["verdict"] not in VERDICTS:
        raise ValueError(f"unknown verdict {rec['verdict']!r}")
    for k in ("claim", "variant", "backend", "message"):
        if not isinstance(rec[k], str):
            raise ValueError(f"record field {k} must be a string")
    for k in ("params", "values"):
        if not isinstance(rec[k], dict):
            raise ValueError(f"record field {k} must be an object")
    if rec["verdict"] == "refuted" and not rec["counterexample"]:
        raise ValueError("a refuted record must carry its counterexample")
    json.dumps(rec, allow_nan=False)


def dumps(obj: Any, **kw) -> str:
    return json.dumps(jsonable(obj), allow_nan=False, **kw)
