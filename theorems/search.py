"""Hypothesis-driven checks: properties (every draw must certify) and falsifier searches.

Each search uses its own example-database key (:func:`theorems.profiles.database_key`), so in
the ``dev`` and ``thorough`` profiles a counterexample found once (a failing property draw, or
the instance a falsifier's search found) is stored and replayed first by the next run.
"""
from __future__ import annotations

import math

from hypothesis import find, given, reject, strategies as st
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


def _from_json(check, base: Params, recorded: dict) -> Params:
    """An instance from recorded parameters (a witness, a search's ``best_params``, a
    counterexample's ``params``): JSON lists go back through the declared parameter's
    coercion, so a matrix is an array again before the claim's validator sees it."""
    by_name = {p.name: p for p in check.claim.params}
    return _instance(check, base, {k: by_name[k].validate(v) for k, v in recorded.items() if k in by_name})


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


# ---------------------------------------------------------------------------
# bounds driven to equality (DESIGN.md, check strength): the declared range, target(tightness)

#: where a positive range reaches down to 0, log-uniform draws start this far below its top
_LOG_FLOOR = 1e-12


def _log_uniform(lo: float, hi: float, integer: bool = False):
    """Draws in [lo, hi] (0 < lo < hi) uniform in log(x)."""
    a, b = math.log(lo), math.log(hi)

    def back(x: float):
        v = min(hi, max(lo, math.exp(x)))
        return min(int(hi), max(int(math.ceil(lo)), int(round(v)))) if integer else v
    return st.floats(min_value=a, max_value=b, allow_nan=False, allow_infinity=False).map(back)


def full_range(param):
    """A Hypothesis strategy over a parameter's *declared* range (``low``/``high``, not ``search``).

    Where a range spans decades (high/low >= 100, or a positive range reaching 0) half of the draws
    are log-uniform, so that small values are reached; the closed ends are drawn as such.  Choices
    and booleans draw all of their values; a parameter without a finite range (and matrices, vectors)
    keeps :meth:`~theorems.params.Param.strategy`."""
    k = param.kind
    if k == "choice":
        return st.sampled_from(param.choices)
    if k == "bool":
        return st.booleans()
    if k not in ("int", "float") or param.low is None or param.high is None:
        return param.strategy()
    lo, hi = param.low, param.high
    if k == "int":
        lo, hi = int(lo), int(hi)
        parts = [st.integers(min_value=lo, max_value=hi), st.sampled_from(sorted({lo, hi}))]
        if hi >= 100 * max(lo, 1) and hi > max(lo, 1):
            parts.append(_log_uniform(max(lo, 1), hi, integer=True))
        return st.one_of(parts)
    lo, hi = float(lo), float(hi)

    def legal(x: float) -> bool:
        return (lo < x or (x == lo and not param.low_open)) and (x < hi or (x == hi and not param.high_open))
    parts = [st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False,
                       exclude_min=param.low_open, exclude_max=param.high_open)]
    ends = [x for x, is_open in ((lo, param.low_open), (hi, param.high_open)) if not is_open]
    if ends:
        parts.append(st.sampled_from(ends))
    if hi > 0 and (lo <= 0 or hi / lo >= 100):  # the positive part spans decades
        a = max(lo, hi * _LOG_FLOOR) if lo > 0 else hi * _LOG_FLOOR
        if a < hi:
            parts.append(_log_uniform(a, hi).filter(legal))
    if lo < 0 and (hi >= 0 or lo / hi >= 100):  # the negative part spans decades
        b = min(hi, lo * _LOG_FLOOR) if hi < 0 else lo * _LOG_FLOOR
        if -b < -lo:
            parts.append(_log_uniform(-b, -lo).map(lambda x: -x).filter(legal))
    return st.one_of(parts)


def full_range_strategy(check, names, base: Params | None = None):
    """The draws of a tightness search: the check's own strategy, else each scalar name over its
    declared range, then the matrices with their shapes resolved from what was drawn (or ``base``):
    ``over=("d", "A")`` with ``A`` of shape ``("d", "d")`` draws d, then a d x d matrix."""
    if check.strategy is not None:
        return check.strategy
    from .matrices import joint_strategy
    return joint_strategy(check.claim.params, names, base, scalar=full_range)


def _tightness_of(out: Outcome) -> float | None:
    t = out.values.get("tightness") if isinstance(out.values, dict) else None
    try:
        t = float(t)
    except (TypeError, ValueError):
        return None
    return t if math.isfinite(t) else None


#: the tightest instance found per (claim, profile, base parameters): a sharpened falsifier reuses
#: the search its claim's ``property[tightness]`` ran in this process instead of running it again
_TIGHTEST: dict[tuple, Outcome] = {}


def _cache_key(check, base: Params, profile: str | None) -> tuple:
    import json
    from .profiles import current
    return (check.claim.id, profile or current(), base.backend,
            json.dumps(base.to_json(), sort_keys=True, default=str))


def run_tightness(check, base: Params, profile: str | None) -> Outcome:
    """:func:`_search_tightness`, kept for the claim's sharpened falsifier in this process."""
    out = _search_tightness(check, base, profile)
    _TIGHTEST[_cache_key(check, base, profile)] = out
    return out


def _search_tightness(check, base: Params, profile: str | None) -> Outcome:
    """The tightness search of a bound (:meth:`theorems.claim.Claim.tightness`): the witnesses, then
    Hypothesis draws over the declared ranges with ``target(tightness)``; every draw must certify."""
    from hypothesis import target
    claim, spec = check.claim, check.bound
    numeric = claim.check("numeric", claim.true_variant)
    stats = {"examples": 0, "inconclusive": 0, "untargeted": 0, "worst_ratio": 0.0,
             "best_tightness": None, "best_params": None, "sharpen": spec["sharpen"]}

    def observe(q: Params, out: Outcome) -> float | None:
        verdict = out.decide()
        if verdict == "inconclusive":
            stats["inconclusive"] += 1
            return None
        if verdict != "certified":
            raise _DrawFailed(q, out, verdict)
        stats["examples"] += 1
        ratio = float(out.residual) / float(out.tolerance) if out.tolerance else 0.0
        if math.isfinite(ratio):
            stats["worst_ratio"] = max(stats["worst_ratio"], ratio)
        t = _tightness_of(out)
        if t is None:
            stats["untargeted"] += 1
            return None
        if stats["best_tightness"] is None or t > stats["best_tightness"]:
            stats["best_tightness"], stats["best_params"] = t, q.to_json()
        return t

    def failed(exc: _DrawFailed, how: str) -> Outcome:
        return Outcome(residual=exc.out.residual, tolerance=exc.out.tolerance,
                       verdict=exc.verdict if exc.verdict != "certified" else "refuted",
                       values={**exc.out.values, **stats},
                       counterexample={"params": exc.params.to_json(), **(exc.out.counterexample or {})},
                       message=f"the bound fails on {how}: {exc.out.message}")

    for w in spec["witnesses"]:
        q = _from_json(check, base, w)  # a declared witness outside the range is a bug of the claim
        try:
            observe(q, numeric.evaluate(q))
        except _DrawFailed as exc:
            return failed(exc, f"the declared witness {w}")

    @given(full_range_strategy(check, check.over, base))
    def prop(drawn):
        try:
            q = _instance(check, base, drawn)
        except ParamError:
            reject()
        t = observe(q, numeric.evaluate(q))
        if t is None:
            reject()
        target(t, label="tightness")

    prop = settings_for(check.max_examples, profile)(prop)
    prop._hypothesis_internal_database_key = database_key(claim.id, check.kind, check.variant)
    try:
        prop()
    except _DrawFailed as exc:
        return failed(exc, "a drawn instance (shrunk)")
    except Unsatisfiable:
        if stats["best_tightness"] is None:
            return Outcome(verdict="inconclusive", values=stats,
                           message="no draw gave a certified instance with a tightness (Unsatisfiable)")
    best, s = stats["best_tightness"], spec["sharpen"]
    if best is None:
        return Outcome(verdict="inconclusive", values=stats,
                       message=f"{stats['examples']} draws certified but none reported a tightness")
    stats["approached"] = best > s
    where = f"at {stats['best_params']}"
    found = (f"best tightness {best:.6g} {where}" if best > s else
             f"bound not approached, best ratio {best:.6g} {where} (sharpened factor {s:g} never exceeded)")
    return Outcome(residual=stats["worst_ratio"], tolerance=1.0, values=stats,
                   message=f"{stats['examples']} draws certified ({stats['inconclusive']} inconclusive rejected); "
                           + found)


def tightest(check, base: Params, profile: str | None) -> Outcome:
    """The outcome of the claim's tightness search from ``base`` (run once per process and base)."""
    prop = next(c for c in check.claim.checks if c.kind == "property" and c.bound is not None)
    key = _cache_key(prop, base, profile)
    if key not in _TIGHTEST:
        run_tightness(prop, base, profile)
    return _TIGHTEST[key]


def run_sharpened(check, base: Params, profile: str | None) -> tuple[Outcome, Params]:
    """A sharpened-constant falsifier: refuted at ``base`` already, or evaluated at the tightest
    instance the tightness search finds.  Not refuted there: "bound not approached, best ratio r"."""
    spec = check.bound
    out = check.evaluate(base)
    if out.decide() == "refuted":
        return out, base
    search = tightest(check, base, profile)
    if search.decide() == "refuted" and search.counterexample:  # the bound itself fails on a draw
        q = _from_json(check, base, search.counterexample["params"])
        out = check.evaluate(q)
        out.message = "the tightness search refutes the bound itself. " + out.message
        return out, q
    best, bp = search.values.get("best_tightness"), search.values.get("best_params")
    if best is None or bp is None:
        out.message = f"no tightest instance: {search.message}. " + out.message
        return out, base
    q = _from_json(check, base, bp)
    out = check.evaluate(q)
    out.values = {**out.values, "best_tightness": best, "best_params": bp,
                  "examples": search.values.get("examples"), "approached": out.decide() == "refuted"}
    if out.decide() == "refuted":
        out.message = (f"the tightest instance found (tightness {best:.6g}) refutes the constant sharpened by "
                       f"{spec['sharpen']:g}. " + out.message)
    else:
        out.message = (f"bound not approached, best ratio {best:.6g} over {search.values.get('examples')} "
                       f"draws (the constant sharpened by {spec['sharpen']:g} still holds there"
                       + ("; declared loose" if not spec["approached"] else "") + "). " + out.message)
    return out, q
