"""The vocabulary every layer shares: check kinds, verdicts, statuses, backends, and what a check
returns (:class:`Outcome`).  Imports nothing of the framework but :mod:`theorems.params`.

A check of kind ``falsifier`` (and a symbolic mutant) is expected to come out ``refuted``; every
other check ``certified``.  That rule lives here once (:func:`expected_verdict`) and the runner,
the pytest plugin, the command line and the reports all use it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from .params import ParamError

__all__ = ["STATUSES", "KINDS", "VERDICTS", "BACKENDS", "ARRAY_API_BACKENDS", "TRUE_VARIANT", "Outcome", "inconclusive",
           "BackendError", "expected_verdict", "true_variant"]

STATUSES = ("holds", "erratum", "gap", "heuristic", "empirical")
KINDS = ("symbolic", "numeric", "property", "falsifier", "reproduction")
VERDICTS = ("certified", "refuted", "inconclusive", "error")
BACKENDS = ("numpy", "numba", "cupy", "mpmath", "array_api_strict")
#: backends that run a check's array-API path (``solvers.xp.xp_of``): a check that offers CuPy offers
#: array-api-strict too, the CPU reference that nothing NumPy-only slipped into that path
ARRAY_API_BACKENDS = ("cupy", "array_api_strict")
#: the variant that holds, by status: an erratum's or a gap's corrected form, else the statement
TRUE_VARIANT = {"holds": "stated", "heuristic": "stated", "empirical": "stated",
                "erratum": "corrected", "gap": "corrected"}


def true_variant(status: str) -> str:
    return TRUE_VARIANT[status]


def expected_verdict(kind: str, expect: str | None = None) -> str:
    """The verdict a check must reach to pass: ``refuted`` for a falsifier, ``certified`` otherwise,
    unless the check declares its own ``expect`` (a symbolic mutant: ``refuted``)."""
    if expect is not None:
        return expect
    return "refuted" if kind == "falsifier" else "certified"


class BackendError(ParamError):
    """The requested backend is unknown, unavailable, or not offered by the check."""


@dataclass
class Outcome:
    """What a check function returns.

    ``residual`` and ``tolerance`` are compared (``residual <= tolerance`` certifies);
    write the error model that gives ``tolerance`` next to the code that computes it.
    ``verdict`` overrides the comparison (use :func:`inconclusive` when a hypothesis of
    the claim fails on this instance).  ``values`` are the named quantities computed;
    ``counterexample`` the witness of a refutation (filled with the parameters when a
    refuted check leaves it empty).
    """

    residual: float | None = None
    tolerance: float | None = None
    values: dict = field(default_factory=dict)
    counterexample: dict | None = None
    message: str = ""
    verdict: str | None = None
    backend: str | None = None

    @classmethod
    def from_parts(cls, parts: dict, message: str = "", values: dict | None = None, **kw) -> "Outcome":
        """One statement checked as several sub-checks ``{name: (residual, tolerance)}``, each with its
        own error model: residual = max_i residual_i / tolerance_i against tolerance 1.  Every part's
        residual and tolerance, and the worst part, are kept in ``values``.  A part with tolerance 0
        (an exact count) contributes 0 when its residual is 0 and infinity otherwise."""
        ratios = {k: (float(r) / float(t) if t > 0 else (0.0 if r == 0 else math.inf))
                  for k, (r, t) in parts.items()}
        # a NaN part is the worst (max() would skip it and let the rest certify): residual NaN -> 'error'
        worst = next((k for k, q in ratios.items() if math.isnan(q)), None) or max(ratios, key=ratios.get)
        vals = {"parts": {k: {"residual": float(r), "tolerance": float(t)} for k, (r, t) in parts.items()},
                "worst_part": worst}
        vals.update(values or {})
        msg = f"{message}; worst part {worst!r}: {float(parts[worst][0]):.3e} vs {float(parts[worst][1]):.3e}"
        return cls(residual=ratios[worst], tolerance=1.0, values=vals, message=msg.lstrip("; "), **kw)

    def decide(self) -> str:
        if self.verdict is not None:
            if self.verdict not in VERDICTS:
                raise ValueError(f"unknown verdict {self.verdict!r}")
            return self.verdict
        if self.residual is None or self.tolerance is None:
            return "error"
        r, t = float(self.residual), float(self.tolerance)
        if math.isnan(r) or math.isnan(t):
            return "error"
        return "certified" if r <= t else "refuted"


def inconclusive(message: str, **values) -> Outcome:
    """The instance violates a hypothesis of the claim (or cannot be decided in floating point)."""
    return Outcome(verdict="inconclusive", message=message, values=values)
