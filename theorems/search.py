"""Hypothesis-driven checks: properties (every draw must certify) and falsifier searches.

Each search uses its own example-database key (:func:`theorems.profiles.database_key`), so in
the ``dev`` and ``thorough`` profiles a counterexample found once (a failing property draw, or
the instance a falsifier's search found) is stored and replayed first by the next run.
"""
from __future__ import annotations

import math

from hypothesis import find, given, reject
from hypothesis.errors import NoSuchExample, Unsatisfiable

from .vocabulary import Outcome
from .params import ParamError, Params, params_strategy
from .profiles import database_key, settings_for


def _strategy(check, names, base=None):
    if check.strategy is not None:
        return check.strategy
    # scalars first, then matrices whose declared shapes name them (theorems.matrices)
    return params_strategy(check.claim.params, names, base)


def _instance(check, base: Params, drawn: dict) -> Params:
    q = base.replace(**drawn)
    if check.claim.validator is not None:
        check.claim.validator(q)
    return q


class _DrawFailed(AssertionError):
    def __init__(self, params: Params, out: Outcome, verdict: str):
        self.params, self.out, self.verdict = params, out, verdict
        super().__init__(f"{verdict} at {params.to_json()}: residual={out.residual!r} "
                         f"tolerance={out.tolerance!r} {out.message}")


def run_property(check, base: Params, profile: str | None) -> Outcome:
    claim = check.claim
    run = check if check.func is not None else claim.check("numeric")
    stats = {"examples": 0, "inconclusive": 0, "worst_ratio": 0.0, "worst": None}

    @given(_strategy(check, check.over, base))
    def prop(drawn):
        try:
            q = _instance(check, base, drawn)
        except ParamError:
            reject()
        out = run.evaluate(q)
        verdict = out.decide()
        if verdict == "inconclusive":
            stats["inconclusive"] += 1
            reject()
        if verdict != "certified":
            raise _DrawFailed(q, out, verdict)
        stats["examples"] += 1
        ratio = float(out.residual) / float(out.tolerance) if out.tolerance else 0.0
        if not math.isfinite(ratio) or ratio >= stats["worst_ratio"]:
            stats["worst_ratio"] = ratio
            stats["worst"] = {"params": q.to_json(), "residual": out.residual, "tolerance": out.tolerance}

    prop = settings_for(check.max_examples, profile)(prop)
    # one example-database entry per check, so that a failing draw is replayed first next time
    # (dev/thorough profiles; the ci profile has no database)
    prop._hypothesis_internal_database_key = database_key(claim.id, check.kind, check.variant)
    try:
        prop()
    except _DrawFailed as exc:
        return Outcome(residual=exc.out.residual, tolerance=exc.out.tolerance, verdict=exc.verdict
                       if exc.verdict != "certified" else "refuted",
                       values={**exc.out.values, **stats},
                       counterexample={"params": exc.params.to_json(), **(exc.out.counterexample or {})},
                       message=f"property fails on a drawn instance (shrunk): {exc.out.message}")
    except Unsatisfiable:
        return Outcome(verdict="inconclusive", values=stats,
                       message="every draw violated a hypothesis of the claim (Unsatisfiable)")
    return Outcome(residual=stats["worst_ratio"], tolerance=1.0, values=stats,
                   message=f"{stats['examples']} draws certified (residual/tolerance <= "
                           f"{stats['worst_ratio']:.3g}); {stats['inconclusive']} inconclusive draws rejected")


def run_falsifier(check, base: Params, profile: str | None) -> tuple[Outcome, Params]:
    out = check.evaluate(base)
    if out.decide() == "refuted" or not check.search:
        return out, base
    tried = {"n": 0}

    def refutes(drawn) -> bool:
        try:
            q = _instance(check, base, drawn)
        except ParamError:
            return False
        tried["n"] += 1
        return check.evaluate(q).decide() == "refuted"

    try:
        drawn = find(_strategy(check, check.search, base), refutes,
                     settings=settings_for(check.max_examples, profile),
                     database_key=database_key(check.claim.id, check.kind, check.variant))
    except NoSuchExample:
        out.message = (f"no counterexample at the defaults nor in {tried['n']} draws over "
                       f"{', '.join(check.search)}. " + out.message)
        return out, base
    q = _instance(check, base, drawn)
    out = check.evaluate(q)
    out.message = f"counterexample found by search over {', '.join(check.search)}. " + out.message
    return out, q
