"""Claim declaration: one block per claim, its checks added with decorators.

A claim module looks like::

    from theorems.claim import Claim, Outcome, Param, inconclusive

    claim = Claim(
        id="menon.balanced_invariance", title="...", label="Thm 1(a)",
        section="4.2", equation="(4.7)-(4.8)", lines=(211, 223),
        statement=r"\\frac{d}{dt}(W_{p+1}^TW_{p+1}-W_pW_p^T)=0", status="holds",
        params=[Param.int("d", 3, 1, 8, "width"), Param.seed("seed of the layers"), ...],
    )

    @claim.numeric
    def _(p):                      # p: validated Params, p.backend the requested backend
        ...
        return Outcome(residual=r, tolerance=tol, values={...})

    @claim.falsifier({"per_layer_rates": "...", "layer_penalty": "..."}, search=("seed",))
    def _(p, variant): ...         # a family of wrong variants: each must come out refuted

    claim.property(over=("d", "N", "seed"), max_examples=20)   # draws params, runs numeric

One calling convention: every check function takes the validated parameters ``p`` (a symbolic
check or a reproduction gets the defaults, or what the user passed); a check declared for several
variants at once takes ``(p, variant)``.  The document is the id's prefix.  Each check knows the
verdict it must reach (:func:`theorems.vocabulary.expected_verdict`): ``refuted`` for a falsifier
and a symbolic mutant, ``certified`` for every other check.  :meth:`Claim.expectations` is the
table of a claim's variants and those verdicts.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from .documents import KEYS
from .params import Param, ParamError, Params, resolve
from .registry import registry
from .vocabulary import (BACKENDS, KINDS, STATUSES, Outcome, expected_verdict, inconclusive,  # noqa: F401
                         true_variant)

__all__ = ["Claim", "Check", "Outcome", "Param", "Params", "ParamError", "inconclusive"]


@dataclass
class Check:
    """One check of a claim: its kind, the variant it evaluates, and its function.

    ``func(p)``, or ``func(p, variant)`` when ``family`` (one function declared for several
    variants).  ``expect`` overrides the verdict the kind implies (a symbolic mutant: refuted).
    """

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
    family: bool = False
    expect_: str | None = None
    #: a bound's tightness search or sharpened-constant falsifier (:meth:`Claim.tightness`): its spec
    bound: dict | None = None

    @property
    def expect(self) -> str:
        return expected_verdict(self.kind, self.expect_)

    @property
    def nodeid(self) -> str:
        return f"{self.kind}[{self.variant}]"

    def evaluate(self, params: Params) -> Outcome:
        """Call the check function on validated parameters; it must return an :class:`Outcome`."""
        out = self.func(params, self.variant) if self.family else self.func(params)
        if not isinstance(out, Outcome):
            raise TypeError(f"{self.claim.id} {self.nodeid} returned {type(out).__name__}, not Outcome")
        return out

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
        if self.kind == "falsifier" and self.bound is not None:
            d["sharpen"] = self.bound["sharpen"]   # a bound's sharpened-constant falsifier
        return d


def _arity(f: Callable, want: int, what: str) -> None:
    code = getattr(f, "__code__", None)
    if code is None:  # a builtin or a callable object: trust it
        return
    n = code.co_argcount
    required = n - len(getattr(f, "__defaults__", None) or ())
    if not (required <= want <= n or (code.co_flags & 0x04 and required <= want)):  # *args takes the rest
        args = "(p, variant)" if want == 2 else "(p)"
        raise TypeError(f"{what}: a check function takes {args}, {f.__qualname__} takes {n} argument(s)")


def _variant_table(names) -> dict[str, dict]:
    """``"name"``, ``["a", "b"]`` or ``{"a": "doc", "b": {"doc": ..., "fixed": ..., "search": ...}}``."""
    if isinstance(names, str):
        return {names: {}}
    if isinstance(names, Mapping):
        return {k: ({"description": v} if isinstance(v, str) else dict(v)) for k, v in names.items()}
    return {n: {} for n in names}


class Claim:
    """A claim of a document: metadata plus its checks (added with the decorators below)."""

    def __init__(self, *, id: str, title: str, label: str, lines: tuple[int, int],
                 statement: str, status: str, section: str = "", equation: str = "",
                 corrected: str | None = None, params: Sequence[Param] = (), notes: str = "",
                 catalogue: str = "", validate: Callable[[Params], None] | None = None,
                 covers: Sequence[str] = (), document: str | None = None, module: str | None = None,
                 bound: bool = False):
        prefix = id.split(".", 1)[0]
        if document is not None and document != prefix:
            raise ValueError(f"claim id {id!r} does not start with its document {document!r}")
        if prefix not in KEYS:
            raise ValueError(f"claim id {id!r}: unknown document {prefix!r} (known: {', '.join(KEYS)})")
        if "." not in id or id != id.lower() or " " in id:
            raise ValueError(f"claim id {id!r} must be '<document>.<slug>' in lower case")
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r} for {id}")
        if status in ("erratum", "gap") and not corrected:
            raise ValueError(f"{id}: {'an' if status[0] in 'aeiou' else 'a'} {status} needs the corrected statement")
        for fld, text in (("title", title), ("statement", statement), ("corrected", corrected or ""),
                          ("notes", notes)):
            ctrl = sorted({hex(ord(ch)) for ch in text if ord(ch) < 32 and ch not in "\n\t"})
            if ctrl:
                raise ValueError(f"{id}: {fld} contains control characters {', '.join(ctrl)} (a '\\a', '\\b', "
                                 f"'\\f' or '\\v' in a non-raw string? write LaTeX as r\"...\")")
        lo, hi = lines
        if not (1 <= lo <= hi):
            raise ValueError(f"{id}: bad line range {lines}")
        self.id = id
        self.title = title
        self.document = prefix
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
        #: the statement is an inequality (DESIGN.md, check strength): the numeric check reports
        #: ``values["tightness"]`` and :meth:`tightness` declares its search and sharpened falsifier
        self.bound = bool(bound)
        self.checks: list[Check] = []
        # the declaring module: one frame lookup (~1 us; building the whole stack cost ms per claim)
        self.module = module or sys._getframe(1).f_globals.get("__name__", "?")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"{id}: duplicate parameter names")
        registry.add(self)

    # -- the variant that holds --------------------------------------
    @property
    def true_variant(self) -> str:
        return true_variant(self.status)

    # -- decorators ---------------------------------------------------
    def _add(self, check: Check) -> Check:
        for c in self.checks:
            if c.kind == check.kind and c.variant == check.variant:
                raise ValueError(f"{self.id}: check {check.nodeid} defined twice")
        if check.func is not None:
            _arity(check.func, 2 if check.family else 1, f"{self.id} {check.nodeid}")
        self.checks.append(check)
        return check

    def numeric(self, func: Callable | None = None, *, backends: Iterable[str] = ("numpy",),
                slow: bool = False, description: str = ""):
        """The statement evaluated at the (validated) parameters: residual against tolerance."""
        backends = _backends(self.id, backends)

        def deco(f):
            self._add(Check(self, "numeric", self.true_variant, f, slow=slow, backends=backends,
                            description=description or _doc(f)))
            return f
        return deco(func) if func is not None else deco

    def symbolic(self, func: Callable | None = None, *, variant: str | None = None,
                 timeout: float = 120.0, slow: bool = False, description: str = ""):
        """SymPy proves the identity (or reduces it to zero) on a stated instance, ``f(p)``.

        A symbolic check of a wrong variant (``variant='stated'`` on an erratum) is a
        falsifier: register it with :meth:`falsifier`; a perturbation of the statement that the
        same procedure must not reduce to zero is a :meth:`mutant`.
        """
        def deco(f):
            self._add(Check(self, "symbolic", variant or self.true_variant, f, slow=slow,
                            timeout=timeout, description=description or _doc(f)))
            return f
        return deco(func) if func is not None else deco

    def mutant(self, names, *, timeout: float = 120.0, slow: bool = False, description: str = ""):
        """A symbolic mutant (DESIGN.md, check strength): the statement perturbed (a constant changed,
        a transpose dropped, a sign flipped); the same symbolic procedure must *not* prove it, so its
        expected verdict is ``refuted``.  ``names`` as for :meth:`falsifier` (one name, or a family
        ``f(p, variant)``)."""
        table = _variant_table(names)
        family = not isinstance(names, str)

        def deco(f):
            for name, opt in table.items():
                self._add(Check(self, "symbolic", name, f, slow=opt.get("slow", slow),
                                timeout=opt.get("timeout", timeout), family=family, expect_="refuted",
                                description=opt.get("description") or description or _doc(f)))
            return f
        return deco

    def falsifier(self, names, *, search: Iterable[str] = (), max_examples: int = 50,
                  backends: Iterable[str] = ("numpy",), slow: bool = False, description: str = "",
                  fixed: dict | None = None):
        """The nearest wrong variant(s).  Evaluated at the defaults (updated by ``fixed``);
        if that does not refute it and ``search`` names parameters, Hypothesis searches
        them for a counterexample.  A falsifier that finds none fails.

        ``names`` is one variant name (the function takes ``p``) or a family: a list of names or a
        dict ``{name: description}`` / ``{name: {"description", "search", "fixed", "max_examples",
        "slow"}}`` (the function takes ``(p, variant)``; per-variant options override the keywords).
        """
        table = _variant_table(names)
        family = not isinstance(names, str)
        for name in table:
            if name == self.true_variant:
                raise ValueError(
                    f"{self.id}: a falsifier may not be named {name!r}, the variant that holds for status "
                    f"{self.status!r} (`theorems check --variant {name}` would be ambiguous); an erratum's printed "
                    f"form is the falsifier 'stated' of a claim with status 'erratum'")

        def deco(f):
            for name, opt in table.items():
                self._add(Check(self, "falsifier", name, f, slow=opt.get("slow", slow),
                                backends=_backends(self.id, opt.get("backends", backends)),
                                search=tuple(opt.get("search", search)),
                                max_examples=opt.get("max_examples", max_examples), family=family,
                                description=opt.get("description") or description or _doc(f),
                                fixed=dict(opt.get("fixed", fixed) or {})))
            return f
        return deco

    def property(self, *, over: Iterable[str] = (), max_examples: int = 25, slow: bool = False,
                 fixed: dict | None = None, strategy: Any = None, description: str = ""):
        """Hypothesis draws the parameters named in ``over`` (from their ``search`` ranges,
        or the dicts of ``strategy``) and the numeric check must certify on every draw.

        Called as a statement it runs the numeric check on each draw; used as a decorator
        (``@claim.property(over=...)``) the decorated ``f(p) -> Outcome`` runs instead."""
        check = self._add_property(None, over, max_examples, slow, fixed, strategy,
                                   description or "the numeric check on Hypothesis draws")

        def attach(f):
            _arity(f, 1, f"{self.id} {check.nodeid}")
            check.func = f
            check.description = description or _doc(f) or check.description
            return f
        return attach

    def property_check(self, *, over: Iterable[str] = (), max_examples: int = 25, slow: bool = False,
                       fixed: dict | None = None, strategy: Any = None, description: str = ""):
        """Decorator: a property of its own, ``f(p) -> Outcome`` on each draw, which must certify (the same
        as ``@claim.property(...)``; kept for the modules that use it)."""
        def deco(f):
            self._add_property(f, over, max_examples, slow, fixed, strategy, description or _doc(f))
            return f
        return deco

    def _add_property(self, f, over, max_examples, slow, fixed, strategy, description):
        names = {p.name for p in self.params}
        for n in over:
            if n not in names:
                raise ValueError(f"{self.id}: property draws unknown parameter {n!r}")
        return self._add(Check(self, "property", self.true_variant, f, slow=slow, over=tuple(over),
                               max_examples=max_examples, fixed=dict(fixed or {}), description=description,
                               strategy=strategy))

    def tightness(self, *, over: Iterable[str], max_examples: int = 60, sharpen: float = 0.9,
                  name: str | None = None, witnesses: Sequence[Mapping] = (), approached: bool = True,
                  finding: str = "", fixed: dict | None = None, strategy: Any = None, slow: bool = False,
                  description: str = ""):
        """A bound driven to equality (DESIGN.md, check strength): two checks for a ``bound=True`` claim.

        Tightness convention: the numeric check of a bound returns ``values["tightness"]`` = the side
        that must be smaller divided by the side that must be larger (both positive), so it lies in
        [0, 1] while the bound holds and is 1 at equality; for ``lhs <= C g`` it is ``lhs / (C g)``,
        for ``lhs >= C g`` it is ``C g / lhs``.

        * ``property[tightness]``: Hypothesis draws ``over`` from the *declared* ranges
          (:func:`theorems.search.full_range`, log-uniform where a range spans decades), after the
          ``witnesses`` (parameter dicts: the extremal instances the proof suggests), and pushes
          toward equality with ``hypothesis.target(tightness)``; the bound must certify on every draw
          (a draw that breaks it is a shrunk counterexample), and ``values`` report
          ``best_tightness`` and ``best_params``.
        * ``falsifier[<name>]`` (default ``sharpened_10pct`` for ``sharpen=0.9``): the bound with its
          constant sharpened, ``lhs <= sharpen * C g`` (a lower bound's constant divided by
          ``sharpen``), i.e. ``tightness <= sharpen``, evaluated through the same numeric check at
          the tightest instance the search found: it must come out refuted.  Where the document's
          own proof leaves the constant loose, declare ``approached=False``: the falsifier is then
          expected to come out *certified* (the sharpened bound holds on every draw), its record
          says "bound not approached, best ratio r", and ``theorems list`` shows that expectation;
          ``finding`` (required then) says why and with what best ratio, and is appended to the
          claim's notes.
        """
        if not self.bound:
            raise ValueError(f"{self.id}: tightness() is for a bound; declare Claim(..., bound=True)")
        if not 0.0 < float(sharpen) < 1.0:
            raise ValueError(f"{self.id}: sharpen={sharpen!r} must lie in (0, 1) (the factor on the bound's side)")
        over = tuple(over)
        known = {p.name for p in self.params}
        for n in over:
            if n not in known:
                raise ValueError(f"{self.id}: tightness search draws unknown parameter {n!r}")
        for w in witnesses:
            for n in w:
                if n not in known:
                    raise ValueError(f"{self.id}: a tightness witness names unknown parameter {n!r}")
        if not approached:
            if not finding:
                raise ValueError(f"{self.id}: a bound declared not approached needs its finding (best ratio, why)")
            self.notes = (self.notes + " " if self.notes else "") + "Tightness: " + finding
        name = name or f"sharpened_{round((1.0 - float(sharpen)) * 100)}pct"
        spec = {"over": over, "max_examples": int(max_examples), "sharpen": float(sharpen), "name": name,
                "witnesses": tuple(dict(w) for w in witnesses), "approached": bool(approached)}
        fixed = dict(fixed or {})
        self._add(Check(self, "property", "tightness", None, slow=slow, over=over, max_examples=max_examples,
                        fixed=fixed, strategy=strategy, bound=spec,
                        description=description or "the bound on Hypothesis draws over the declared range, "
                                                   "pushed toward equality (target: tightness)"))
        claim = self

        def sharpened(p):
            return _sharpened_outcome(claim, p, spec["sharpen"])

        how = (f"the bound with its constant sharpened by the factor {sharpen:g} (tightness <= {sharpen:g}), at "
               f"the tightest instance found")
        self._add(Check(self, "falsifier", name, sharpened, slow=slow, search=over, max_examples=max_examples,
                        fixed=fixed, strategy=strategy, bound=spec, expect_=None if approached else "certified",
                        description=how if approached else how + "; declared not approached: the sharpened "
                                                                 "bound is expected to hold (a loose constant)"))

    def reproduction(self, func: Callable | None = None, *, name: str | None = None, slow: bool = False,
                     description: str = ""):
        """The document's (or catalogue's) numbers recomputed at laptop size and compared, ``f(p)``."""
        def deco(f):
            self._add(Check(self, "reproduction", name or self.true_variant, f, slow=slow,
                            description=description or _doc(f)))
            return f
        return deco(func) if func is not None else deco

    # -- lookups ------------------------------------------------------
    def check(self, kind: str, variant: str | None = None) -> Check:
        if kind not in KINDS:
            raise KeyError(f"unknown check kind {kind!r}")
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

    def expectations(self) -> dict[str, str]:
        """Each runnable variant and the verdict it must reach (the variant that holds: certified;
        every falsifier: refuted)."""
        return {v: c.expect for v, c in self.variants().items()}

    def resolve(self, given: dict | None = None) -> Params:
        return resolve(self.params, given or {}, self.id, self.validator)

    def describe(self) -> dict:
        from .documents import DOCUMENTS
        seed, _ = DOCUMENTS[self.document]
        return {
            "id": self.id, "document": self.document, "title": self.title, "label": self.label,
            "location": {"section": self.section, "equation": self.equation,
                         "lines": list(self.lines), "seed": seed},
            "statement": self.statement, "status": self.status, "corrected": self.corrected,
            "params": [p.describe() for p in self.params],
            "checks": [c.describe() for c in self.checks],
            "notes": self.notes, "catalogue": self.catalogue, "covers": list(self.covers),
            "module": self.module,
            **({"bound": True} if self.bound else {}),
        }

    def __repr__(self) -> str:
        return f"<Claim {self.id} ({self.status}, {len(self.checks)} checks)>"


def _sharpened_outcome(claim: "Claim", p: Params, sharpen: float) -> Outcome:
    """The sharpened bound ``tightness <= sharpen`` at ``p``, through the claim's numeric check:
    residual ``tightness / sharpen`` against 1 (refuted when the sharpened constant fails)."""
    import math
    out = claim.check("numeric", claim.true_variant).evaluate(p)
    verdict = out.decide()
    t = out.values.get("tightness")
    if verdict in ("inconclusive", "error"):
        return out
    if t is None or not math.isfinite(float(t)):
        if verdict == "refuted":  # the bound itself fails here: so does any sharpening of it
            return Outcome(verdict="refuted", values=dict(out.values), counterexample=out.counterexample,
                           message="the bound itself fails here (no tightness reported): " + out.message)
        return Outcome(verdict="error", values=dict(out.values),
                       message=f"{claim.id}: the numeric check of a bound reports no finite values['tightness'] "
                               f"({t!r})")
    t = float(t)
    return Outcome(residual=t / sharpen, tolerance=1.0, values={**out.values, "tightness": t, "sharpen": sharpen},
                   message=f"tightness {t:.6g} against the sharpened factor {sharpen:g} "
                           f"(the sharpened side is {t / sharpen:.6g} x the other)")


def _backends(cid: str, backends: Iterable[str]) -> tuple:
    """The backends a check offers: known names, NumPy first, and array-api-strict wherever CuPy is offered
    (the CuPy path is array-API code; array-api-strict runs that same code on the CPU, so CI, which has no
    device, tests it and catches anything NumPy-only in it)."""
    out = []
    for b in backends:
        if b not in BACKENDS:
            raise ValueError(f"{cid}: unknown backend {b!r}")
        if b not in out:
            out.append(b)
    if "cupy" in out and "array_api_strict" not in out:
        out.append("array_api_strict")
    return tuple(out)


def _doc(f) -> str:
    if f is None or not f.__doc__:
        return ""
    import inspect  # cleandoc only (no frame inspection)
    return inspect.cleandoc(f.__doc__).split("\n\n")[0].replace("\n", " ")
