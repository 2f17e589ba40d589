"""The claim framework: one declarative block per claim, short check functions, no harness.

A claim module looks like::

    from theorems.core import Claim, Param, Outcome

    claim = Claim(
        id="menon.balanced_invariance", title="...", label="Thm 1(a)", document="menon",
        section="4.2", equation="(4.7)-(4.8)", lines=(211, 223),
        statement=r"\\frac{d}{dt}(W_{p+1}^TW_{p+1}-W_pW_p^T)=0", status="holds",
        params=[Param.int("d", 3, 1, 8, "width"), ...],
    )

    @claim.numeric
    def _(p):                      # p: validated Params, p.backend the requested backend
        ...
        return Outcome(residual=r, tolerance=tol, values={...})

    @claim.falsifier("per_layer_rates", search=("seed",))
    def _(p): ...                  # the wrong variant: must come out refuted

    claim.property(over=("d", "N", "seed"), max_examples=20)   # draws params, runs numeric

Every check yields one result record (:mod:`theorems.record`).  The verdict of an
:class:`Outcome` is derived from ``residual <= tolerance`` unless the check sets it
(``inconclusive`` when a hypothesis of the claim fails on the instance).  A check of
kind ``falsifier`` passes when its verdict is ``refuted``; every other kind passes
when it is ``certified``.
"""
from __future__ import annotations

import inspect
import math
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from .params import Param, ParamError, Params, resolve

__all__ = [
    "Claim", "Check", "Outcome", "Param", "Params", "ParamError", "DOCUMENTS", "STATUSES",
    "KINDS", "VERDICTS", "BACKENDS", "registry", "get_claim", "all_claims", "run_check",
    "BackendError", "inconclusive",
]

#: document key -> (seed file, catalogue files)   (DESIGN.md contract)
DOCUMENTS = {
    "jacot": ("000_1e4f04944f31ad67.txt", ("research/jacot_leaky.md",)),
    "vanrossem": ("001_6205c7e10fbf4cce.txt", ("research/vanrossem_saxe.md",)),
    "menon": ("002_d339aa9bbc964917.txt", ("research/menon_dln.md",)),
    "chen": ("003_ff3e15aaa1f2a936.txt", ("research/chen_flow.md",)),
    "sander": ("004_1c55d58107c357f8.txt", ("research/sander_part1.md", "research/sander_part23.md")),
}
STATUSES = ("holds", "erratum", "gap", "heuristic", "empirical")
KINDS = ("symbolic", "numeric", "property", "falsifier", "reproduction")
VERDICTS = ("certified", "refuted", "inconclusive", "error")
BACKENDS = ("numpy", "numba", "cupy", "mpmath")


class BackendError(ParamError):
    """The requested backend is unknown, unavailable, or not offered by the claim."""


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
        worst = max(ratios, key=ratios.get)
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


@dataclass
class Check:
    """One check of a claim: its kind, the variant it evaluates, and its function."""

    claim: "Claim"
    kind: str
    variant: str
    func: Callable[..., Any] | None
    slow: bool = False
    gpu: bool = False
    backends: tuple = ("numpy",)
    search: tuple = ()
    max_examples: int | None = None
    over: tuple = ()
    timeout: float | None = None
    description: str = ""
    fixed: dict = field(default_factory=dict)
    strategy: Any = None

    @property
    def expect(self) -> str:
        return "refuted" if self.kind == "falsifier" else "certified"

    @property
    def nodeid(self) -> str:
        return f"{self.kind}[{self.variant}]"

    def describe(self) -> dict:
        d = {"kind": self.kind, "variant": self.variant, "expect": self.expect}
        if self.slow:
            d["slow"] = True
        if self.gpu:
            d["gpu"] = True
        if self.description:
            d["description"] = self.description
        if self.kind in ("numeric", "falsifier"):
            d["backends"] = list(self.backends)
        return d


class _Registry(dict):
    def add(self, claim: "Claim") -> None:
        if claim.id in self:
            other = self[claim.id]
            raise ValueError(f"claim id {claim.id!r} registered twice ({other.module} and {claim.module})")
        self[claim.id] = claim


registry: _Registry = _Registry()


class Claim:
    """A claim of a document: metadata plus its checks (added with the decorators below)."""

    def __init__(self, *, id: str, title: str, document: str, label: str, lines: tuple[int, int],
                 statement: str, status: str, section: str = "", equation: str = "",
                 corrected: str | None = None, params: Sequence[Param] = (), notes: str = "",
                 catalogue: str = "", validate: Callable[[Params], None] | None = None,
                 covers: Sequence[str] = ()):
        if document not in DOCUMENTS:
            raise ValueError(f"unknown document {document!r}")
        if not id.startswith(document + ".") or id != id.lower() or " " in id:
            raise ValueError(f"claim id {id!r} must be '<document>.<slug>' in lower case")
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r} for {id}")
        if status in ("erratum", "gap") and not corrected:
            raise ValueError(f"{id}: an {status} needs the corrected statement")
        for field, text in (("title", title), ("statement", statement), ("corrected", corrected or ""),
                            ("notes", notes)):
            ctrl = sorted({hex(ord(ch)) for ch in text if ord(ch) < 32 and ch not in "\n\t"})
            if ctrl:
                raise ValueError(f"{id}: {field} contains control characters {', '.join(ctrl)} (a '\\a', '\\b', "
                                 f"'\\f' or '\\v' in a non-raw string? write LaTeX as r\"...\")")
        lo, hi = lines
        if not (1 <= lo <= hi):
            raise ValueError(f"{id}: bad line range {lines}")
        self.id = id
        self.title = title
        self.document = document
        self.label = label
        self.section = section
        self.equation = equation
        self.lines = (int(lo), int(hi))
        self.statement = statement
        self.status = status
        self.corrected = corrected
        self.params = tuple(params)
        self.notes = notes
        self.catalogue = catalogue
        self.covers = tuple(covers)
        self.validator = validate
        self.checks: list[Check] = []
        frame = inspect.stack()[1]
        self.module = frame.frame.f_globals.get("__name__", "?")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{id}: duplicate parameter names")
        registry.add(self)

    # -- the variant that holds --------------------------------------
    @property
    def true_variant(self) -> str:
        return "corrected" if self.status in ("erratum", "gap") else "stated"

    # -- decorators ---------------------------------------------------
    def _add(self, check: Check) -> Check:
        for c in self.checks:
            if c.kind == check.kind and c.variant == check.variant:
                raise ValueError(f"{self.id}: check {check.nodeid} defined twice")
        self.checks.append(check)
        return check

    def numeric(self, func: Callable | None = None, *, backends: Iterable[str] = ("numpy",),
                slow: bool = False, description: str = ""):
        """The statement evaluated at the (validated) parameters: residual against tolerance."""
        def deco(f):
            self._add(Check(self, "numeric", self.true_variant, f, slow=slow, backends=tuple(backends),
                            description=description or _doc(f)))
            return f
        return deco(func) if func is not None else deco

    def symbolic(self, func: Callable | None = None, *, variant: str | None = None,
                 timeout: float = 120.0, slow: bool = False, description: str = ""):
        """SymPy proves the identity (or reduces it to zero) on a stated instance.

        A symbolic check of a wrong variant (``variant='stated'`` on an erratum) is a
        falsifier: register it with :meth:`falsifier` and ``symbolic=True``.
        """
        def deco(f):
            self._add(Check(self, "symbolic", variant or self.true_variant, f, slow=slow,
                            timeout=timeout, description=description or _doc(f)))
            return f
        return deco(func) if func is not None else deco

    def falsifier(self, name: str, *, search: Iterable[str] = (), max_examples: int = 50,
                  backends: Iterable[str] = ("numpy",), slow: bool = False, description: str = "",
                  fixed: dict | None = None):
        """The nearest wrong variant.  Evaluated at the defaults (updated by ``fixed``);
        if that does not refute it and ``search`` names parameters, Hypothesis searches
        them for a counterexample.  A falsifier that finds none fails."""
        if name == self.true_variant:
            raise ValueError(
                f"{self.id}: a falsifier may not be named {name!r}, the variant that holds for status "
                f"{self.status!r} (`theorems check --variant {name}` would be ambiguous); an erratum's printed "
                f"form is the falsifier 'stated' of a claim with status 'erratum'")

        def deco(f):
            self._add(Check(self, "falsifier", name, f, slow=slow, backends=tuple(backends),
                            search=tuple(search), max_examples=max_examples,
                            description=description or _doc(f), fixed=dict(fixed or {})))
            return f
        return deco

    def property(self, *, over: Iterable[str] = (), max_examples: int = 25, slow: bool = False,
                 fixed: dict | None = None, strategy: Any = None, description: str = "") -> None:
        """Hypothesis draws the parameters named in ``over`` (from their ``search`` ranges,
        or the dicts of ``strategy``) and the numeric check must certify on every draw."""
        self._add_property(None, over, max_examples, slow, fixed, strategy,
                           description or "the numeric check on Hypothesis draws")

    def property_check(self, *, over: Iterable[str] = (), max_examples: int = 25, slow: bool = False,
                       fixed: dict | None = None, strategy: Any = None, description: str = ""):
        """Decorator: a property of its own, ``f(p) -> Outcome`` on each draw, which must certify."""
        def deco(f):
            self._add_property(f, over, max_examples, slow, fixed, strategy, description or _doc(f))
            return f
        return deco

    def _add_property(self, f, over, max_examples, slow, fixed, strategy, description):
        names = {p.name for p in self.params}
        for n in over:
            if n not in names:
                raise ValueError(f"{self.id}: property draws unknown parameter {n!r}")
        self._add(Check(self, "property", self.true_variant, f, slow=slow, over=tuple(over),
                        max_examples=max_examples, fixed=dict(fixed or {}), description=description,
                        strategy=strategy))

    def reproduction(self, func: Callable | None = None, *, name: str | None = None, slow: bool = False,
                     description: str = ""):
        """The document's (or catalogue's) numbers recomputed at laptop size and compared."""
        def deco(f):
            self._add(Check(self, "reproduction", name or self.true_variant, f, slow=slow,
                            description=description or _doc(f)))
            return f
        return deco(func) if func is not None else deco

    # -- lookups ------------------------------------------------------
    def check(self, kind: str, variant: str | None = None) -> Check:
        for c in self.checks:
            if c.kind == kind and (variant is None or c.variant == variant):
                return c
        raise KeyError(f"{self.id} has no {kind} check" + (f" for variant {variant!r}" if variant else ""))

    def variants(self) -> dict[str, Check]:
        """Variants runnable by ``theorems check --variant``: the numeric check and the falsifiers."""
        out: dict[str, Check] = {}
        for c in self.checks:
            if c.kind == "numeric" or (c.kind == "falsifier" and c.func is not None):
                out.setdefault(c.variant, c)
        return out

    def resolve(self, given: dict | None = None) -> Params:
        return resolve(self.params, given or {}, self.id, self.validator)

    def describe(self) -> dict:
        seed, _ = DOCUMENTS[self.document]
        return {
            "id": self.id, "document": self.document, "title": self.title, "label": self.label,
            "location": {"section": self.section, "equation": self.equation,
                         "lines": list(self.lines), "seed": seed},
            "statement": self.statement, "status": self.status, "corrected": self.corrected,
            "params": [p.describe() for p in self.params],
            "checks": [c.describe() for c in self.checks],
            "notes": self.notes, "catalogue": self.catalogue, "covers": list(self.covers),
        }

    def __repr__(self) -> str:
        return f"<Claim {self.id} ({self.status}, {len(self.checks)} checks)>"


def _doc(f) -> str:
    if f is None or not f.__doc__:
        return ""
    return inspect.cleandoc(f.__doc__).split("\n\n")[0].replace("\n", " ")


# ---------------------------------------------------------------------------
# loading
_loaded = False


def load_all() -> _Registry:
    """Import every document subpackage so that all claims are registered."""
    global _loaded
    if not _loaded:
        import importlib
        import pkgutil

        for doc in DOCUMENTS:
            try:
                pkg = importlib.import_module(f"theorems.{doc}")
            except ModuleNotFoundError as exc:
                if exc.name == f"theorems.{doc}":
                    continue
                raise
            for info in pkgutil.iter_modules(pkg.__path__):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{pkg.__name__}.{info.name}")
        _loaded = True
    return registry


def all_claims(document: str | None = None) -> list[Claim]:
    load_all()
    if document is not None and document not in DOCUMENTS:
        raise ParamError(f"unknown document {document!r} (known: {', '.join(DOCUMENTS)})")
    return [c for c in registry.values() if document is None or c.document == document]


def get_claim(claim_id: str) -> Claim:
    load_all()
    try:
        return registry[claim_id]
    except KeyError:
        import difflib
        close = difflib.get_close_matches(claim_id, list(registry), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ParamError(f"unknown claim id {claim_id!r}{hint}") from None


# ---------------------------------------------------------------------------
# running checks


def _check_backend(check: Check, backend: str) -> None:
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


def evaluate(check: Check, params: Params) -> Outcome:
    """Call a parametrised check function, turning a hypothesis failure into inconclusive."""
    out = check.func(params)
    if not isinstance(out, Outcome):
        raise TypeError(f"{check.claim.id} {check.nodeid} returned {type(out).__name__}, not Outcome")
    return out


def run_check(check: Check, given: dict | None = None, backend: str = "numpy",
              profile: str | None = None) -> dict:
    """Run one check and return its result record (see :mod:`theorems.record`).

    Bad parameters raise :class:`ParamError` (the command line's exit 2); any other
    exception inside the check becomes verdict ``error`` with the traceback's last line.
    """
    from .record import make_record

    claim = check.claim
    params = claim.resolve({**check.fixed, **(given or {})}) if check.kind in ("numeric", "falsifier", "property") \
        else claim.resolve(given or {})
    _check_backend(check, backend)
    params.backend = backend
    t0 = time.perf_counter()
    try:
        if check.kind == "property":
            from .search import run_property
            out = run_property(check, params, profile)
        elif check.kind == "falsifier" and check.func is not None:
            from .search import run_falsifier
            out, params = run_falsifier(check, params, profile)
        elif check.kind == "symbolic":
            from .timebox import timeboxed
            out = timeboxed(check.func, check.timeout)
        elif check.kind in ("numeric",):
            out = evaluate(check, params)
        else:  # reproduction
            out = check.func()
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
