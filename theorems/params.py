"""Claim parameters: declaration, validation and Hypothesis strategies.

A parameter is declared once, in the claim's block, with its type, default and
range.  Everything else derives from that declaration: the command line parses
and validates ``--param NAME=JSON`` against it, ``theorems list`` shows it, and
property checks draw from it.  Bad input raises :class:`ParamError` with one line
that names what is wrong; the command line turns that into exit code 2.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Param", "Params", "ParamError", "parse_assignment", "params_strategy"]


class ParamError(ValueError):
    """Bad input for a claim: unknown parameter, wrong type, out of range, NaN."""


@dataclass(frozen=True)
class Param:
    """One parameter of a claim.

    kind: ``int``, ``float``, ``bool``, ``choice``, ``matrix`` or ``vector``.
    ``low``/``high`` bound numeric values (inclusive unless ``low_open``/``high_open``);
    ``search`` narrows the range that property checks and falsifier searches draw
    from (the full range is what a user may pass).
    """

    name: str
    kind: str
    default: Any
    doc: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    search: tuple | None = None
    nullable: bool = False
    shape: Any = None          # matrix/matrices/vector: ints, names of int params, or a callable
    families: tuple | None = None  # which families of theorems.matrices the strategies draw from
    bound: float | None = None  # |entries| <= bound in drawn matrices (theorems.matrices.BOUND if None)
    partner: str | None = None  # matrix: the matrix param a non_commuting draw must not commute with
    #: "falsifier": a parameter only a falsifier varies (an unequal block, a perturbation off the hypothesis);
    #: its default is the claim's hypothesis, the numeric check is inconclusive off it, and sweeps of the
    #: variant that holds leave it at its default instead of drawing inputs the claim excludes
    role: str = ""

    def for_falsifiers(self) -> "Param":
        """This parameter, marked as one only a falsifier varies (see ``role``)."""
        import dataclasses
        return dataclasses.replace(self, role="falsifier")

    # -- constructors -------------------------------------------------
    @staticmethod
    def int(name: str, default: int, low: int | None = None, high: int | None = None,
            doc: str = "", search: tuple | None = None) -> "Param":
        return Param(name, "int", default, doc, low, high, search=search)

    @staticmethod
    def seed(doc: str = "seed of the random instance", default: int = 0,
             search: tuple | None = (0, 10_000)) -> "Param":
        """The seed of a claim's random instance: the int parameter ``seed`` in [0, 2**32 - 1] (what
        ``numpy.random.default_rng`` and ``--param seed=N`` accept); property checks and falsifier
        searches draw it from ``search`` (``None``: the whole range)."""
        return Param("seed", "int", default, doc, 0, 2**32 - 1, search=search)

    @staticmethod
    def float(name: str, default: float, low: float | None = None, high: float | None = None,
              doc: str = "", low_open: bool = False, high_open: bool = False,
              search: tuple | None = None) -> "Param":
        return Param(name, "float", default, doc, low, high, low_open, high_open, search=search)

    @staticmethod
    def bool(name: str, default: bool, doc: str = "") -> "Param":
        return Param(name, "bool", default, doc)

    @staticmethod
    def choice(name: str, default: str, choices: Sequence[str], doc: str = "") -> "Param":
        return Param(name, "choice", default, doc, choices=tuple(choices))

    @staticmethod
    def matrix(name: str, default: Any = None, doc: str = "", shape: Any = None,
               families: Sequence[str] | None = None, bound: float | None = None,
               partner: str | None = None) -> "Param":
        """A real matrix given as nested JSON lists; ``None`` means 'drawn from the seed'.

        For property checks, falsifier searches and sweeps (:mod:`theorems.matrices`): ``shape`` is
        ``(m, n)`` of ints or names of int parameters (``("d", "d")``), or a callable of the resolved
        parameters returning it (undeclared: square, side 1..4); ``families`` the matrix families
        drawn from (default :data:`theorems.matrices.DEFAULT_FAMILIES`; ``"seed"`` among them: half the
        draws are None, the claim's seeded instance); ``bound`` the bound on the
        entries; ``partner`` the matrix param a ``non_commuting`` draw is paired with."""
        return Param(name, "matrix", default, doc, nullable=True, shape=_shape_spec(shape),
                     families=_family_spec(families), bound=bound, partner=partner)

    @staticmethod
    def matrices(name: str, default: Any = None, doc: str = "", shape: Any = None,
                 families: Sequence[str] | None = None, bound: float | None = None) -> "Param":
        """A list of real matrices (JSON list of nested lists), e.g. the layers of a network;
        ``None`` means 'drawn from the seed'.  Shapes are checked by the claim's validator.
        ``shape``: a callable of the resolved parameters returning the list of shapes (or a fixed
        list of shapes); ``families``/``bound`` as for :meth:`matrix`, applied to each matrix."""
        return Param(name, "matrices", default, doc, nullable=True,
                     shape=shape if callable(shape) or shape is None else tuple(_shape_spec(s) for s in shape),
                     families=_family_spec(families), bound=bound)

    @staticmethod
    def vector(name: str, default: Any = None, doc: str = "", low: float | None = None,
               high: float | None = None, shape: Any = None, families: Sequence[str] | None = None,
               bound: float | None = None) -> "Param":
        """A real vector given as a JSON list; ``None`` means 'drawn from the seed'.  ``shape``: its
        length (an int, the name of an int parameter, or a callable of the resolved parameters);
        ``families``: ``entries`` (default), ``log``, ``distinct``, ``integers`` (drawn in
        [low, high], or [-bound, bound] where a side is open)."""
        return Param(name, "vector", default, doc, low, high, nullable=True, shape=_shape_spec(shape),
                     families=_family_spec(families), bound=bound)

    # -- validation ---------------------------------------------------
    def _range_text(self) -> str:
        lo = "(" if self.low_open else "["
        hi = ")" if self.high_open else "]"
        a = "-inf" if self.low is None else repr(self.low)
        b = "inf" if self.high is None else repr(self.high)
        return f"{lo}{a}, {b}{hi}"

    def _check_scalar_range(self, v: float, what: str | None = None) -> None:
        what = what or f"parameter {self.name}={_short(v)}"
        if isinstance(v, float) and math.isnan(v):
            raise ParamError(f"{what} is NaN")
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            raise ParamError(f"{what} is out of range {self._range_text()}")
        if self.high is not None and (v > self.high or (self.high_open and v == self.high)):
            raise ParamError(f"{what} is out of range {self._range_text()}")

    def validate(self, value: Any) -> Any:
        """Coerce a JSON-decoded value to this parameter's type, or raise ParamError."""
        n = self.name
        if value is None:
            if self.nullable or self.default is None:
                return None
            raise ParamError(f"parameter {n} may not be null")
        k = self.kind
        if k == "bool":
            if isinstance(value, bool):
                return value
            raise ParamError(f"parameter {n} must be true or false, got {_short(value)}")
        if k == "int":
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ParamError(f"parameter {n} must be an integer, got {_short(value)}")
            if isinstance(value, (float, np.floating)):
                if math.isnan(value):
                    raise ParamError(f"parameter {n} is NaN")
                if not float(value).is_integer():
                    raise ParamError(f"parameter {n} must be an integer, got {value!r}")
            try:
                v = int(value)
            except OverflowError:  # an infinite float
                raise ParamError(f"parameter {n}={value!r} is out of range {self._range_text()}") from None
            self._check_scalar_range(v)
            return v
        if k == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ParamError(f"parameter {n} must be a number, got {_short(value)}")
            try:
                v = float(value)
            except OverflowError:  # a JSON integer of hundreds of digits
                raise ParamError(f"parameter {n} is too large for a float ({_short(value)})") from None
            if math.isnan(v):
                raise ParamError(f"parameter {n} is NaN")
            if math.isinf(v):
                raise ParamError(f"parameter {n} is infinite")
            self._check_scalar_range(v)
            return v
        if k == "choice":
            if (isinstance(value, (int, float)) and not isinstance(value, bool)
                    and str(value) in self.choices):   # --param r=5 for the choice "5"
                value = str(value)
            if not isinstance(value, str) or value not in self.choices:
                raise ParamError(f"parameter {n}={_short(value)} is not one of {list(self.choices)}")
            return value
        if k == "matrices":
            if not isinstance(value, (list, tuple)) or len(value) == 0:
                raise ParamError(f"parameter {n} must be a non-empty list of matrices (nested lists)")
            out = []
            for i, m in enumerate(value):
                try:
                    arr = np.asarray(m, dtype=float)
                except OverflowError:
                    raise ParamError(f"entry {i} of parameter {n} has an entry too large for a float") from None
                except (TypeError, ValueError, RecursionError):
                    raise ParamError(f"entry {i} of parameter {n} is not a matrix of numbers") from None
                if arr.ndim != 2 or arr.size == 0:
                    raise ParamError(f"entry {i} of parameter {n} must be a non-empty matrix, got shape {arr.shape}")
                if not _numbers_only(m):
                    raise ParamError(f"entry {i} of parameter {n} is not a matrix of numbers (a string or true/false)")
                if not np.all(np.isfinite(arr)):
                    raise ParamError(f"entry {i} of parameter {n} has a NaN or infinite entry")
                out.append(arr)
            return out
        if k in ("matrix", "vector"):
            what = "nested list of numbers" if k == "matrix" else "list of numbers"
            try:
                arr = np.asarray(value, dtype=float)
            except OverflowError:
                raise ParamError(f"parameter {n} has an entry too large for a float") from None
            except (TypeError, ValueError, RecursionError):
                raise ParamError(f"parameter {n} must be a {what}, got {_short(value)}") from None
            want = 2 if k == "matrix" else 1
            if arr.ndim != want or arr.size == 0:
                raise ParamError(f"parameter {n} must be a non-empty {k} ({want}-d list), got shape {arr.shape}")
            if not _numbers_only(value):
                raise ParamError(f"parameter {n} must be a {what}, not strings or true/false")
            if not np.all(np.isfinite(arr)):
                raise ParamError(f"parameter {n} has a NaN or infinite entry")
            if k == "vector" and (self.low is not None or self.high is not None):
                for x in arr:
                    self._check_scalar_range(float(x), f"entry {float(x)!r} of parameter {n}")
            return arr
        raise ParamError(f"parameter {n} has unknown kind {k!r}")  # pragma: no cover

    # -- Hypothesis ---------------------------------------------------
    def strategy(self, params: Mapping[str, Any] | None = None):
        """The Hypothesis strategy property checks and falsifier searches draw from.  A matrix,
        matrices or vector parameter draws from :mod:`theorems.matrices`, its shape resolved from
        ``params`` (the other parameters; see :func:`params_strategy` for drawing them together)."""
        from hypothesis import strategies as st

        if self.kind == "int":
            lo, hi = self.search or (self.low, self.high)
            return st.integers(min_value=lo, max_value=hi)
        if self.kind == "float":
            lo, hi = self.search or (self.low, self.high)
            return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False,
                             exclude_min=self.low_open and lo == self.low,
                             exclude_max=self.high_open and hi == self.high)
        if self.kind == "bool":
            return st.booleans()
        if self.kind == "choice":
            return st.sampled_from(self.search or self.choices)
        if self.kind in ("matrix", "matrices", "vector"):
            from .matrices import param_strategy
            return param_strategy(self, params)
        raise TypeError(f"parameter {self.name} of kind {self.kind} has no default strategy")

    def describe(self) -> dict:
        d = {"name": self.name, "kind": self.kind, "default": _jsonable(self.default), "doc": self.doc}
        if self.kind in ("int", "float", "vector"):
            d["range"] = self._range_text()
        if self.choices:
            d["choices"] = list(self.choices)
        if self.kind in ("matrix", "matrices", "vector"):
            if self.shape is not None:
                d["shape"] = "computed" if callable(self.shape) else _jsonable(self.shape)
            if self.families is not None:
                d["families"] = list(self.families)
            if self.bound is not None:
                d["bound"] = self.bound
            if self.partner is not None:
                d["partner"] = self.partner
        if self.role:
            d["role"] = self.role
        return d


class Params(dict):
    """Resolved parameters: a dict with attribute access (``p.d`` is ``p['d']``).

    ``p.backend`` names the array backend the check was asked to run on.
    """

    backend: str = "numpy"

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"no parameter {name!r}") from None

    def replace(self, **kw) -> "Params":
        q = Params(self)
        q.update(kw)
        q.backend = self.backend
        return q

    def to_json(self) -> dict:
        return {k: _jsonable(v) for k, v in self.items()}


def resolve(declared: Sequence[Param], given: Mapping[str, Any], claim_id: str,
            validator: Callable[[Params], None] | None = None) -> Params:
    """Merge defaults with ``given``, validating every value; unknown names are errors."""
    by_name = {p.name: p for p in declared}
    for k in given:
        if k not in by_name:
            known = ", ".join(by_name) or "none"
            raise ParamError(f"unknown parameter {k!r} for {claim_id} (known: {known})")
    out = Params()
    for p in declared:
        out[p.name] = p.validate(given[p.name]) if p.name in given else p.validate(p.default)
    if validator is not None:
        validator(out)
    return out


def params_strategy(declared: Sequence[Param], names: Sequence[str],
                    base: Mapping[str, Any] | None = None):
    """Hypothesis strategy of a dict over ``names``: scalar parameters first, then the matrix,
    matrices and vector parameters, whose shapes may name the scalars (drawn, or from ``base``)."""
    from .matrices import joint_strategy
    return joint_strategy(declared, names, base)


def _shape_spec(shape: Any) -> Any:
    if shape is None or callable(shape):
        return shape
    if isinstance(shape, (int, str)):
        return (shape,)
    return tuple(shape)


def _family_spec(families: Sequence[str] | None) -> tuple | None:
    if families is None:
        return None
    from .matrices import MATRIX_FAMILIES, SEED, VECTOR_FAMILIES
    fams = (families,) if isinstance(families, str) else tuple(families)
    for f in fams:
        if f not in MATRIX_FAMILIES and f not in VECTOR_FAMILIES and f != SEED:
            raise ValueError(f"unknown matrix family {f!r}")
    return fams


def parse_assignment(text: str) -> tuple[str, Any]:
    """Parse ``NAME=JSON`` from the command line."""
    if "=" not in text:
        raise ParamError(f"--param expects NAME=VALUE, got {text!r}")
    name, raw = text.split("=", 1)
    name = name.strip()
    if not name:
        raise ParamError(f"--param expects NAME=VALUE, got {text!r}")
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        raise ParamError(f"value of parameter {name} is nested too deeply") from None
    except json.JSONDecodeError as exc:
        # a bare word is taken as a string (for choice parameters)
        if raw and raw.replace("_", "").replace("-", "").isalnum() and not raw[0].isdigit():
            value = raw
        else:
            raise ParamError(f"value of parameter {name} is not valid JSON: {_short(raw)} ({exc.msg})") from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ParamError(f"value of parameter {name} is not usable: {str(exc).split(';')[0]}") from None
    return name, value


def _short(value: Any, width: int = 80) -> str:
    """``repr(value)`` cut to ``width`` characters (an error line names the value, not all of it)."""
    try:
        r = repr(value)
    except (RecursionError, ValueError):  # nested too deeply; an int of more than 4300 digits
        r = f"<{type(value).__name__}>"
    return r if len(r) <= width else r[: width - 3] + "..."


def _numbers_only(value: Any) -> bool:
    """True when every leaf of nested lists is an int or float (not a string, not true/false);
    called after ``np.asarray`` accepted ``value`` as a vector or matrix, so the nesting is shallow."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iuf"
    if isinstance(value, (list, tuple)):
        return all(_numbers_only(x) for x in value)
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _reject_constant(c: str):
    raise ParamError(f"{c} is not an accepted value (NaN and infinities are rejected)")


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v
