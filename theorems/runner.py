"""Running one check: parameters, backend, time box, and the result record.

Bad parameters raise :class:`~theorems.params.ParamError` (the command line's exit 2); any other
exception inside a check becomes verdict ``error`` with the traceback's last lines (a bug: a legal
input the check cannot resolve must return ``inconclusive`` with its reason instead).
"""
from __future__ import annotations

import time
import traceback

from .params import ParamError, Params
from .record import make_record
from .vocabulary import BACKENDS, BackendError, Outcome

__all__ = ["run_check", "check_backend", "resolve_for", "evaluate_numeric", "backend_pair"]


def check_backend(check, backend: str) -> None:
    """Raise :class:`BackendError` unless ``check`` can run on ``backend`` here."""
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if check.kind in ("numeric", "falsifier") and backend not in check.backends:
        raise BackendError(f"{check.claim.id} {check.nodeid} does not offer backend {backend!r} "
                           f"(offered: {', '.join(check.backends)})")
    if backend == "cupy":
        from solvers.xp import cupy_available
        ok, why = cupy_available()
        if not ok:
            raise BackendError(f"backend 'cupy' is unavailable: {why}")


def resolve_for(check, given: dict | None = None) -> Params:
    """The validated parameters a check runs at: defaults, the check's ``fixed`` values, then ``given``."""
    return check.claim.resolve({**check.fixed, **(given or {})})


def run_check(check, given: dict | None = None, backend: str = "numpy", profile: str | None = None) -> dict:
    """Run one check and return its result record (see :mod:`theorems.record`)."""
    params = resolve_for(check, given)
    check_backend(check, backend)
    params.backend = backend
    t0 = time.perf_counter()
    try:
        if check.kind == "property" and check.bound is not None:
            from .search import run_tightness
            out = run_tightness(check, params, profile)
        elif check.kind == "falsifier" and check.bound is not None:
            from .search import run_sharpened
            out, params = run_sharpened(check, params, profile)
        elif check.kind == "property":
            from .search import run_property
            out = run_property(check, params, profile)
        elif check.kind == "falsifier":
            from .search import run_falsifier
            out, params = run_falsifier(check, params, profile)
        elif check.kind == "symbolic":
            from .timebox import timeboxed
            out = timeboxed(lambda: check.evaluate(params), check.timeout)
        else:  # numeric, reproduction
            out = check.evaluate(params)
        if not isinstance(out, Outcome):
            raise TypeError(f"check returned {type(out).__name__}, not Outcome")
    except ParamError:
        raise
    except Exception as exc:  # the check itself broke
        tb = traceback.format_exc(limit=-3)
        out = Outcome(verdict="error", message=f"{type(exc).__name__}: {exc}",
                      values={"traceback": tb[-2000:]})
    seconds = time.perf_counter() - t0
    return make_record(check, params, out, backend=out.backend or backend, seconds=seconds)


def evaluate_numeric(claim_id: str, given: dict | None = None, backend: str = "numpy"):
    """The Outcome of a claim's numeric check at ``given`` on ``backend``, called directly (no record, no
    time box): ``(verdict, residual, tolerance)``.  For tests that compare backends or plant errors."""
    from .registry import get_claim
    claim = get_claim(claim_id)
    check = next(c for c in claim.checks if c.kind == "numeric")
    params = claim.resolve(dict(given or {}))
    params.backend = backend
    out = check.evaluate(params)
    return out.decide(), out.residual, out.tolerance


def backend_pair(claim_id: str, given: dict | None = None, ref: str = "numpy", other: str = "array_api_strict"):
    """``evaluate_numeric`` at the same parameters on two backends: ``((verdict, residual, tolerance) on ref,
    (verdict, residual, tolerance) on other)``, for tests that hold an array-API path to the NumPy one."""
    return evaluate_numeric(claim_id, given, ref), evaluate_numeric(claim_id, given, other)
