"""Families of real matrices and vectors: Hypothesis strategies and NumPy samplers from one definition.

A claim that quantifies over matrices should be tested on the matrices that break weak checks, not
only on Gaussian ones: near-singular, ill-conditioned with a stated condition number, orthogonal,
symmetric positive definite, rank-deficient, pairs that do not commute, and the diagonal and
identity-like edge cases.  Each family below is written once, as a function of a *source* of
random numbers (:class:`Source`), and is available two ways:

- :func:`strategy` (Hypothesis): the source draws bounded finite floats (entries, singular values on
  a log scale, rotation angles), so that shrinking moves entries toward 0, exponents toward 0
  (singular values toward 1), angles toward 0 (orthogonal factors toward the identity) and sizes
  toward the smallest: a shrunk counterexample is a simpler matrix, not "seed 0";
- :func:`sample` (NumPy ``Generator``): the same construction with uniform draws, for sweeps.

:func:`sample_param` draws the value of a matrix, matrices or vector parameter (a JSON-able value
that :meth:`theorems.params.Param.validate` accepts) given the parameters drawn before it;
:func:`param_strategy` is its Hypothesis counterpart (used by :meth:`Param.strategy`).

Every drawn matrix is finite and its entries lie in ``[-bound, bound]`` (default :data:`BOUND`):
the families are built from bounded singular values (at most ``bound``) and orthogonal factors, or
from bounded entries directly.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["BOUND", "MATRIX_FAMILIES", "SQUARE_FAMILIES", "VECTOR_FAMILIES", "DEFAULT_FAMILIES",
           "build", "sample", "strategy", "sample_pair", "pair_strategy", "non_commuting_with",
           "resolve_shape", "sample_param", "param_strategy", "Source", "RngSource"]

BOUND = 10.0
KAPPA_RANGE = (1e2, 1e12)      # condition numbers drawn for ill_conditioned when kappa is not given
TINY_RANGE = (1e-14, 1e-8)     # relative smallest singular value of near_singular

#: every matrix family, in shrinking order (Hypothesis prefers the first: bounded entries)
MATRIX_FAMILIES = ("gaussian", "diagonal", "identity_like", "symmetric", "spd", "orthogonal",
                   "near_singular", "ill_conditioned", "rank_deficient", "non_commuting")
#: families that need a square matrix (the others take any shape)
SQUARE_FAMILIES = ("identity_like", "symmetric", "spd", "non_commuting")
#: the default of ``Param.matrix(..., families=None)``: every family that takes an arbitrary matrix
DEFAULT_FAMILIES = ("gaussian", "diagonal", "identity_like", "symmetric", "orthogonal",
                    "near_singular", "ill_conditioned", "rank_deficient")
VECTOR_FAMILIES = ("entries", "log", "distinct", "integers")
#: not a family of matrices: the value None, i.e. the claim's own seeded instance (so that one property
#: draws both the structured matrices and the seed path, e.g. instances the seed builds with a structure
#: no family has)
SEED = "seed"


# ---------------------------------------------------------------------------
# sources of randomness
class Source:
    """What a family draws: floats in [lo, hi], integers in [lo, hi], a choice, an array of bounded
    entries.  Subclasses: :class:`RngSource` (NumPy) and ``_HypSource`` (Hypothesis)."""

    def float(self, lo: float, hi: float) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def integer(self, lo: int, hi: int) -> int:  # pragma: no cover - interface
        raise NotImplementedError

    def choice(self, options: Sequence) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def entries(self, shape: tuple, bound: float) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def floats(self, n: int, lo: float, hi: float) -> np.ndarray:
        return np.array([self.float(lo, hi) for _ in range(n)], dtype=float)


class RngSource(Source):
    """NumPy ``Generator`` draws: uniform floats, uniform integers; entries are standard normal
    (scaled to the bound when it is below 3) clipped to ``[-bound, bound]``."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def float(self, lo, hi):
        return float(self.rng.uniform(lo, hi)) if hi > lo else float(lo)

    def integer(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def entries(self, shape, bound):
        scale = min(1.0, bound / 3.0)
        return np.clip(scale * self.rng.standard_normal(shape), -bound, bound)

    def floats(self, n, lo, hi):
        return self.rng.uniform(lo, hi, n) if hi > lo else np.full(n, float(lo))


class _HypSource(Source):
    """Hypothesis draws through ``st.composite``'s ``draw``: every float is ``st.floats(lo, hi)``
    (finite, no subnormals), so it shrinks toward 0 (or the end of the range nearest 0)."""

    def __init__(self, draw):
        self.draw = draw

    def float(self, lo, hi):
        from hypothesis import strategies as st
        if not hi > lo:
            return float(lo)
        return float(self.draw(st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)))

    def integer(self, lo, hi):
        from hypothesis import strategies as st
        return int(self.draw(st.integers(lo, hi)))

    def choice(self, options):
        from hypothesis import strategies as st
        return self.draw(st.sampled_from(list(options)))

    def entries(self, shape, bound):
        from hypothesis import strategies as st
        from hypothesis.extra import numpy as hnp
        el = st.floats(-bound, bound, allow_nan=False, allow_infinity=False, allow_subnormal=False)
        return np.asarray(self.draw(hnp.arrays(np.float64, shape, elements=el, fill=st.nothing())), dtype=float)


# ---------------------------------------------------------------------------
# building blocks
def _orthogonal(n: int, src: Source) -> np.ndarray:
    """An n x n orthogonal matrix as a product of Givens rotations G(i, j, theta) over all pairs
    i < j, angles in [-pi, pi], times a reflection diag(+-1, 1, ...): every rotation is orthogonal to
    rounding, and theta = 0 gives the identity (what shrinking reaches)."""
    Q = np.eye(n)
    for i in range(n):
        for j in range(i + 1, n):
            t = src.float(-math.pi, math.pi)
            if t == 0.0:
                continue
            c, s = math.cos(t), math.sin(t)
            qi, qj = Q[:, i].copy(), Q[:, j].copy()
            Q[:, i], Q[:, j] = c * qi - s * qj, s * qi + c * qj
    if n and src.choice((False, True)):
        Q[:, 0] = -Q[:, 0]
    return Q


def _frame(m: int, k: int, src: Source) -> np.ndarray:
    """m x k with orthonormal columns (k <= m): the first k columns of an orthogonal matrix."""
    return _orthogonal(m, src)[:, :k]


def _from_singular(shape: tuple, s: np.ndarray, src: Source) -> np.ndarray:
    """U diag(s) V^T with U, V orthonormal frames (len(s) <= min(shape))."""
    m, n = shape
    k = len(s)
    U, V = _frame(m, k, src), _frame(n, k, src)
    return (U * s) @ V.T


def _log_values(k: int, lo_exp: float, hi_exp: float, src: Source) -> np.ndarray:
    """k values 10**t, t in [lo_exp, hi_exp] (t = 0, the value 1, is what shrinking reaches when the
    range contains it)."""
    return 10.0 ** src.floats(k, lo_exp, hi_exp)


def _top(bound: float) -> float:
    return math.log10(bound)


# ---------------------------------------------------------------------------
# the families
def build(family: str, shape: tuple, src: Source, bound: float = BOUND, **kw) -> np.ndarray:
    """One matrix of ``family`` and ``shape`` (m, n) from the source ``src``; entries in [-bound, bound].

    Keywords: ``kappa`` (ill_conditioned: the condition number; drawn log-uniform in
    :data:`KAPPA_RANGE` when omitted), ``rank`` (rank_deficient: drawn in [0, min(m, n) - 1] when
    omitted), ``partner`` (non_commuting: the matrix it must not commute with)."""
    m, n = (int(shape[0]), int(shape[1]))
    if m < 1 or n < 1:
        raise ValueError(f"matrix shape {shape} has an empty side")
    k = min(m, n)
    if family in SQUARE_FAMILIES and m != n:
        raise ValueError(f"family {family} needs a square shape, got {shape}")
    if family == "gaussian":
        A = src.entries((m, n), bound)
    elif family == "diagonal":
        A = np.zeros((m, n))
        A[np.arange(k), np.arange(k)] = src.entries((k,), bound)
    elif family == "identity_like":
        # I + E with |E_ij| <= 1e-3: a perturbed identity (E = 0 when shrunk)
        A = np.eye(n) + src.entries((n, n), min(1e-3, bound))
        A = np.clip(A, -bound, bound)
    elif family == "symmetric":
        E = src.entries((n, n), bound)
        A = np.triu(E) + np.triu(E, 1).T
    elif family == "spd":
        # Q diag(lam) Q^T, lam = 10**t in [1e-3, bound] (t = 0: lam = 1, Q = I when shrunk)
        lam = _log_values(n, -3.0, _top(bound), src)
        Q = _orthogonal(n, src)
        A = (Q * lam) @ Q.T
        A = (A + A.T) / 2
    elif family == "orthogonal":
        A = _frame(m, n, src) if m >= n else _frame(n, m, src).T
    elif family == "near_singular":
        # singular values 10**t in [1e-1, bound], the smallest replaced by tiny * max
        s = _log_values(k, -1.0, _top(bound), src)
        tiny = 10.0 ** src.float(math.log10(TINY_RANGE[0]), math.log10(TINY_RANGE[1]))
        s = np.sort(s)[::-1]
        s[-1] = tiny * s[0]
        A = _from_singular((m, n), s, src)
    elif family == "ill_conditioned":
        kappa = kw.get("kappa")
        if kappa is None:
            kappa = 10.0 ** src.float(math.log10(KAPPA_RANGE[0]), math.log10(KAPPA_RANGE[1]))
        kappa = float(kappa)
        if not (kappa >= 1 and math.isfinite(kappa)):
            raise ValueError(f"condition number kappa must be finite and >= 1, got {kappa!r}")
        scale = 10.0 ** src.float(-1.0, _top(bound))
        # s_1 = scale >= s_i = scale kappa^-e_i >= s_k = scale / kappa, interior exponents e_i in [0, 1]
        e = np.concatenate([[0.0], np.sort(src.floats(max(k - 2, 0), 0.0, 1.0)), [1.0]]) if k > 1 else np.zeros(1)
        s = scale * kappa ** -e
        A = _from_singular((m, n), s, src)
    elif family == "rank_deficient":
        r = kw.get("rank")
        r = src.integer(0, k - 1) if r is None else int(r)
        if not 0 <= r <= k:
            raise ValueError(f"rank {r} is not in [0, {k}] for shape {shape}")
        s = _log_values(r, -1.0, _top(bound), src)
        A = _from_singular((m, n), s, src) if r else np.zeros((m, n))
    elif family == "non_commuting":
        partner = kw.get("partner")
        if partner is None:
            A, _ = build_pair("non_commuting", n, src, bound)
        else:
            A = non_commuting_with(np.asarray(partner, dtype=float), src, bound)
    else:
        raise ValueError(f"unknown matrix family {family!r} (known: {', '.join(MATRIX_FAMILIES)})")
    A = np.asarray(A, dtype=float)
    # singular values <= bound bound every entry by bound; rounding may exceed it by an ulp
    return np.clip(A, -bound, bound)


def _commutator_norm(A: np.ndarray, B: np.ndarray) -> float:
    return float(np.linalg.norm(A @ B - B @ A))


def _is_scalar(A: np.ndarray) -> bool:
    return bool(np.all(A == A[0, 0] * np.eye(A.shape[0])))


def non_commuting_with(A: np.ndarray, src: Source, bound: float = BOUND) -> np.ndarray:
    """B with AB != BA for a given non-scalar square A: B = B0 + c E_ij, where E_ij is the matrix unit
    whose commutator with A is largest (only scalar matrices commute with every E_ij) and c in
    [1, bound/2]; when B0 cancels it (a measure-zero event), B = c E_ij.  A scalar A commutes with
    every B: then B is a bounded Gaussian matrix (the pair cannot be non-commuting)."""
    n = A.shape[0]
    B0 = src.entries((n, n), bound / 2)
    if n < 2 or _is_scalar(A):
        return B0
    best, ij = -1.0, (0, 1)
    for i in range(n):
        for j in range(n):
            E = np.zeros((n, n))
            E[i, j] = 1.0
            c = _commutator_norm(A, E)
            if c > best:
                best, ij = c, (i, j)
    c = src.float(1.0, max(1.0, bound / 2))
    E = np.zeros((n, n))
    E[ij] = c
    B = np.clip(B0 + E, -bound, bound)
    scale = np.linalg.norm(A) * np.linalg.norm(B)
    if _commutator_norm(A, B) <= 1e-8 * scale:
        B = E
    return B


def build_pair(family: str, n: int, src: Source, bound: float = BOUND,
               families: Sequence[str] = ("gaussian",)) -> tuple[np.ndarray, np.ndarray]:
    """A pair (A, B) of n x n matrices.  ``non_commuting``: A from ``families`` (made non-scalar by
    adding E_01 when it is scalar and n >= 2), then B = :func:`non_commuting_with` (A); so
    ||AB - BA|| > 0 for n >= 2.  ``independent``: A and B each from ``families``."""
    fam = src.choice(list(families))
    A = build(fam, (n, n), src, bound) if fam != "non_commuting" else build("gaussian", (n, n), src, bound)
    if family == "independent":
        fam2 = src.choice(list(families))
        return A, build(fam2 if fam2 != "non_commuting" else "gaussian", (n, n), src, bound)
    if family != "non_commuting":
        raise ValueError(f"unknown pair family {family!r} (known: independent, non_commuting)")
    if n >= 2 and _is_scalar(A):
        A = A.copy()
        A[0, 1] += min(1.0, bound)
    return A, non_commuting_with(A, src, bound)


# ---------------------------------------------------------------------------
# vectors
def build_vector(family: str, n: int, src: Source, low: float | None = None, high: float | None = None,
                 bound: float = BOUND) -> np.ndarray:
    """A vector of length n with entries in [low, high] (default [-bound, bound]).

    ``entries``: uniform/bounded entries (Hypothesis shrinks them toward 0, or the end nearest 0);
    ``log``: log-uniform in [low, high] (positive ranges spanning decades); ``distinct``: sorted
    decreasing with gaps of at least 1% of the range; ``integers``: whole numbers in [low, high]."""
    lo = -bound if low is None else float(low)
    hi = bound if high is None else float(high)
    if family == "entries":
        if lo <= 0 <= hi and lo == -hi:
            return src.entries((n,), hi)
        return src.floats(n, lo, hi)
    if family == "log":
        if lo <= 0:
            lo = hi * 1e-6
        return 10.0 ** src.floats(n, math.log10(lo), math.log10(hi))
    if family == "distinct":
        gap = (hi - lo) / (20.0 * max(n, 1))
        if gap * n > hi - lo:
            raise ValueError(f"{n} distinct values do not fit in [{lo}, {hi}]")
        # n increments in [gap, ...], then scaled into the range
        steps = src.floats(n, 1.0, 10.0) * gap
        total = float(np.sum(steps))
        if total > hi - lo:
            steps *= (hi - lo) / total
        start = hi - src.float(0.0, (hi - lo) - float(np.sum(steps[1:])))
        v = start - np.cumsum(steps) + steps[0]
        return np.clip(v, lo, hi)
    if family == "integers":
        a, b = math.ceil(lo), math.floor(hi)
        return np.array([src.integer(a, b) for _ in range(n)], dtype=float)
    raise ValueError(f"unknown vector family {family!r} (known: {', '.join(VECTOR_FAMILIES)})")


# ---------------------------------------------------------------------------
# the two front ends
def sample(family: str, shape, rng: np.random.Generator, bound: float = BOUND, **kw) -> np.ndarray:
    """NumPy sampler: one matrix (shape (m, n)) or vector (shape (n,) and a vector family)."""
    src = RngSource(rng)
    shape = tuple(int(x) for x in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    if len(shape) == 1:
        return build_vector(family, shape[0], src, kw.get("low"), kw.get("high"), bound)
    return build(family, shape, src, bound, **kw)


def sample_pair(family: str, n: int, rng: np.random.Generator, bound: float = BOUND,
                families: Sequence[str] = ("gaussian",)) -> tuple[np.ndarray, np.ndarray]:
    return build_pair(family, n, RngSource(rng), bound, families)


def strategy(family: str, shape, bound: float = BOUND, **kw):
    """Hypothesis strategy of one matrix (or vector) of ``family``; ``shape`` may be a strategy."""
    from hypothesis import strategies as st

    @st.composite
    def s(draw):
        shp = draw(shape) if isinstance(shape, st.SearchStrategy) else shape
        shp = tuple(int(x) for x in (shp if isinstance(shp, (tuple, list)) else (shp,)))
        src = _HypSource(draw)
        if len(shp) == 1:
            return build_vector(family, shp[0], src, kw.get("low"), kw.get("high"), bound)
        return build(family, shp, src, bound, **kw)
    return s()


def pair_strategy(family: str, n, bound: float = BOUND, families: Sequence[str] = ("gaussian",)):
    from hypothesis import strategies as st

    @st.composite
    def s(draw):
        nn = draw(n) if isinstance(n, st.SearchStrategy) else int(n)
        return build_pair(family, nn, _HypSource(draw), bound, families)
    return s()


# ---------------------------------------------------------------------------
# parameters: shapes declared on Param.matrix / matrices / vector
DEFAULT_SIZES = (1, 4)   # an undeclared matrix is square, its side drawn here


class _Attrs(dict):
    """A dict with attribute access (what a claim's own helpers expect of ``p``), without importing
    theorems.params (this module is below it)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def resolve_shape(spec, params: Mapping[str, Any]):
    """The shape a declaration names, given resolved parameters: ints, names of int parameters
    (``("d", "d")``), or a callable of the parameters.  None when it cannot be resolved (a name
    that is missing or None)."""
    if spec is None:
        return None
    if callable(spec):
        return spec(params if hasattr(params, "__getattr__") else _Attrs(params))  # p.d as well as p["d"]
    if isinstance(spec, (int, str)):
        spec = (spec,)
    out = []
    for x in spec:
        if isinstance(x, str):
            v = params.get(x)
            if v is None:
                return None
            out.append(int(v))
        else:
            out.append(int(x))
    return tuple(out)


def _families(param) -> tuple:
    """The declared families less ``seed`` (the default set where only ``seed`` is declared)."""
    fams = tuple(f for f in (param.families or ()) if f != SEED)
    if fams:
        return fams
    return ("entries",) if param.kind == "vector" else DEFAULT_FAMILIES


def _usable(fams: Sequence[str], shape: tuple) -> list:
    sq = len(shape) == 2 and shape[0] == shape[1]
    out = [f for f in fams if sq or f not in SQUARE_FAMILIES]
    return out or ["gaussian"]


def _draw_one(param, shape, src: Source, params: Mapping[str, Any]):
    bound = float(param.bound) if param.bound is not None else BOUND
    if param.kind == "vector":
        (n,) = shape
        fam = src.choice(list(_families(param)))
        return build_vector(fam, int(n), src, param.low, param.high, bound)
    fam = src.choice(_usable(_families(param), tuple(shape)))
    kw = {}
    if fam == "non_commuting":
        partner = params.get(param.partner) if param.partner else None
        if partner is not None and np.shape(partner) == tuple(shape):
            kw["partner"] = partner
    return build(fam, tuple(shape), src, bound, **kw)


def _shape_of(param, params: Mapping[str, Any], src: Source):
    shape = resolve_shape(param.shape, params)
    if shape is None:
        n = src.integer(*DEFAULT_SIZES)
        if param.kind == "matrices":
            return [(n, n)] * src.integer(1, 3)
        return (n,) if param.kind == "vector" else (n, n)
    return shape


def draw_param(param, src: Source, params: Mapping[str, Any]):
    """The value of a matrix, matrices or vector parameter (NumPy arrays; a list of them for
    ``matrices``), its shape resolved from ``params`` (the parameters drawn before it); None (the
    claim's seeded instance) half of the time when the declared families include ``"seed"``."""
    if SEED in (param.families or ()) and src.choice(("drawn", SEED)) == SEED:
        return None
    shape = _shape_of(param, params, src)
    if param.kind == "matrices":
        return [_draw_one(param, tuple(s), src, params) for s in shape]
    return _draw_one(param, tuple(shape), src, params)


def sample_param(param, rng: np.random.Generator, params_so_far: Mapping[str, Any]):
    """A sweep draw of a matrix, matrices or vector parameter, as JSON lists that
    :meth:`Param.validate` accepts (``params_so_far``: the values drawn or defaulted before it)."""
    if param.kind not in ("matrix", "matrices", "vector"):
        raise TypeError(f"parameter {param.name} of kind {param.kind} is not a matrix or vector")
    v = draw_param(param, RngSource(rng), params_so_far)
    if v is None:
        return None
    return [m.tolist() for m in v] if param.kind == "matrices" else v.tolist()


def param_strategy(param, params: Mapping[str, Any] | None = None):
    """Hypothesis strategy of a matrix, matrices or vector parameter given resolved ``params``."""
    from hypothesis import strategies as st
    ctx = dict(params or {})

    @st.composite
    def s(draw):
        return draw_param(param, _HypSource(draw), ctx)
    return s()


def joint_strategy(declared: Sequence, names: Sequence[str], base: Mapping[str, Any] | None = None,
                   scalar: Callable | None = None):
    """A dict strategy over ``names``: the scalar parameters first (``fixed_dictionaries`` of their
    own strategies, or of ``scalar(param)``: the tightness search passes the declared ranges), then each matrix/vector parameter with its shape resolved from ``base``
    updated with what was drawn (so ``over=("d", "A")`` draws d, then a d x d A).  A matrix whose
    ``partner`` is drawn too and whose family comes out ``non_commuting`` is drawn with it as a pair."""
    from hypothesis import strategies as st
    by = {p.name: p for p in declared}
    kinds = ("matrix", "matrices", "vector")
    scal = [n for n in names if by[n].kind not in kinds]
    mats = [n for n in names if by[n].kind in kinds]
    scalar = scalar or (lambda p: p.strategy())
    s0 = st.fixed_dictionaries({n: scalar(by[n]) for n in scal})
    if not mats:
        return s0

    @st.composite
    def s(draw):
        d = dict(draw(s0))
        ctx = dict(base or {})
        ctx.update(d)
        src = _HypSource(draw)
        for n in mats:
            if n in d:  # drawn already as the partner of a pair
                continue
            p = by[n]
            # a later matrix that names n as its partner and may be non_commuting: draw the pair here
            q = next((by[m] for m in mats if by[m].kind == "matrix" and by[m].partner == n
                      and "non_commuting" in _families(by[m])), None)
            if q is not None and p.kind == "matrix":
                shape = _shape_of(p, ctx, src)
                qshape = _shape_of(q, ctx, src) if q.shape is not None else shape
                fams = _usable(_families(q), tuple(shape))
                if tuple(shape) == tuple(qshape) and shape[0] == shape[1] and src.choice(fams) == "non_commuting":
                    A, B = build_pair("non_commuting", shape[0], src,
                                      float(q.bound) if q.bound is not None else BOUND,
                                      _usable(_families(p), tuple(shape)))
                    d[n], d[q.name] = A, B
                    ctx[n], ctx[q.name] = A, B
                    continue
            d[n] = draw_param(p, src, ctx)
            ctx[n] = d[n]
        return d
    return s()
