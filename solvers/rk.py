"""Runge-Kutta integrators: explicit fixed-step family, an embedded adaptive pair, and the
implicit midpoint rule.  Each exists as a NumPy reference (any Python right-hand side)
and as a Numba kernel (a jitted right-hand side ``f(t, y, args) -> dy``, or an in-place one
``f(t, y, args, out)`` marked with ``specialise.register(inplace=True)``).

**Methods are data.**  An explicit Runge-Kutta method is a :class:`Tableau` (Butcher's ``A``, ``b``, ``c``,
optionally an embedded ``b_hat``), validated when it is built: ``A`` strictly lower triangular, the rows of
``A`` summing to ``c``, and every order condition up to the declared order (one per rooted tree ``tau``,
``sum_i b_i Phi_i(tau) = 1/gamma(tau)``: ``sum b = 1``, ``sum b c = 1/2``, ``sum b c^2 = 1/3``,
``sum b A(c) = 1/6``, ...), for ``b`` and, up to its own order, for ``b_hat``.  A wrong coefficient is a
``ValueError`` naming the condition that fails.  The fixed-step kernels (:func:`rk_fixed`, and
``solvers.orthogonal``) and the embedded kernel (:func:`dopri5`, :func:`solve_dopri5`) read their
coefficients from these objects (:data:`TABLEAUX`, :data:`DP5`).

The Numba kernels are cached on disk per right-hand side: each loop below is written once as a
template calling ``RHS`` and :mod:`solvers.specialise` compiles one ``njit(cache=True)`` copy of it
per registered right-hand side (``@specialise.register``); an unregistered one compiles once per
process (see that module for why a function-valued argument cannot be cached).  The loops allocate
nothing per step (stage buffers are allocated once); an out-of-place right-hand side still allocates
its result at every stage, an in-place one (``register(inplace=True)``) writes into the stage buffer.

Error models (stated once, used by the claims):

* explicit fixed step of order ``q``: global error ``O(h**q)``; the claims estimate it
  by step doubling, ``|y_h - y_{h/2}| * 2**q / (2**q - 1)``.
* Dormand-Prince 5(4) (``adaptive``): local error per step kept below
  ``atol + rtol * |y|`` (mixed norm); global error is that times a stability factor of
  order ``exp(L T)``, which the claims bound by comparing two tolerances.
* implicit midpoint (Gauss-Legendre, order 2): conserves every quadratic invariant
  exactly (Cooper 1987); the only defect is rounding plus the fixed-point iteration
  tolerance, ``~ n_steps * (eps + iter_tol) * |invariant|``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numba import njit

from .specialise import RHS, is_inplace, kernel

__all__ = ["Tableau", "TABLEAUX", "DP5", "tableau", "order_conditions", "ODEResult", "rk_fixed", "rk_fixed_numpy",
           "dopri5", "dopri5_numpy", "solve_dopri5", "implicit_midpoint", "implicit_midpoint_numpy"]

_EPS = float(np.finfo(float).eps)


# ---------------------------------------------------------------------------
# order conditions: one per rooted tree (Butcher 1963)
@lru_cache(maxsize=None)
def _trees(n: int) -> tuple:
    """Rooted trees with ``n`` nodes; a tree is the sorted tuple of its children's indices in ``_all_trees``
    (so equal trees are equal tuples)."""
    if n == 1:
        return ((),)
    smaller = [t for k in range(1, n) for t in _trees(k)]
    size = {t: k for k in range(1, n) for t in _trees(k)}

    def forests(rest, start):
        if rest == 0:
            yield ()
            return
        for i in range(start, len(smaller)):
            if size[smaller[i]] <= rest:
                for f in forests(rest - size[smaller[i]], i):
                    yield (smaller[i],) + f
    return tuple(forests(n - 1, 0))


def _gamma(t) -> int:
    """Density ``gamma(t) = |t| prod gamma(children)``."""
    g, n = 1, 1
    for u in t:
        g *= _gamma(u)
        n += _size(u)
    return n * g


def _size(t) -> int:
    return 1 + sum(_size(u) for u in t)


def _expr(t) -> str:
    """The elementary weight's vector ``Phi(t)`` written out: children that are leaves give ``c``, the others
    ``A(Phi(child))``; equal factors as powers (``sum b c^2``, ``sum b A(c)``, ``sum b c*A(c^2)``)."""
    if not t:
        return "1"
    counts: dict[str, int] = {}
    for u in t:
        s = "c" if not u else f"A({_expr(u)})"
        counts[s] = counts.get(s, 0) + 1
    return "*".join(s if k == 1 else f"{s}^{k}" for s, k in counts.items())


def order_conditions(order: int):
    """The order conditions up to ``order``: a list of ``(order_of_tree, tree, description, 1/gamma)``."""
    out = []
    for n in range(1, order + 1):
        for t in _trees(n):
            out.append((n, t, _expr(t), Fraction(1, _gamma(t))))
    return out


def _phi(t, A, c, memo):
    """Elementary weight vector ``Phi(t)`` and its absolute-value counterpart (for the rounding bound)."""
    hit = memo.get(t)
    if hit is not None:
        return hit
    v = np.ones(A.shape[0])
    va = np.ones(A.shape[0])
    for u in t:
        if not u:
            v = v * c
            va = va * np.abs(c)
        else:
            w, wa = _phi(u, A, c, memo)
            v = v * (A @ w)
            va = va * (np.abs(A) @ wa)
    memo[t] = (v, va)
    return v, va


def _check_weights(name, label, A, c, w, order):
    memo: dict = {}
    for n, t, desc, rhs in order_conditions(order):
        v, va = _phi(t, A, c, memo)
        lhs = float(w @ v)
        # rounding of the sums: a few eps per term of |w| . |Phi|
        tol = 8 * (A.shape[0] + n) * _EPS * (float(np.abs(w) @ va) + float(rhs))
        if not abs(lhs - float(rhs)) <= tol:
            raise ValueError(f"Runge-Kutta tableau {name!r}: order condition of order {n} fails for {label}: "
                             f"sum {label} {desc} = {lhs!r}, should be {rhs} (difference {lhs - float(rhs):.3g}, "
                             f"rounding allowance {tol:.2g})")


def _frozen(x, what, name, ndim):
    a = np.array(x, dtype=np.float64)
    if a.ndim != ndim or not np.all(np.isfinite(a)):
        raise ValueError(f"Runge-Kutta tableau {name!r}: {what} must be a finite {ndim}-d array, got shape {a.shape}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Tableau:
    """An explicit Runge-Kutta method ``(A, b, c)`` of order ``order``, optionally with embedded weights
    ``b_hat`` of order ``order_hat`` (then ``e = b - b_hat`` is the error-estimate weight vector).
    Checked when built (see the module docstring); the arrays are read-only.  For the callers of the
    former tuples it unpacks as ``A, b, c, order = tableau``."""
    name: str
    A: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: int
    b_hat: np.ndarray | None = None
    order_hat: int | None = None
    e: np.ndarray | None = field(init=False, repr=False)

    def __post_init__(self):
        nm = self.name
        A = _frozen(self.A, "A", nm, 2)
        b = _frozen(self.b, "b", nm, 1)
        c = _frozen(self.c, "c", nm, 1)
        s = b.shape[0]
        if A.shape != (s, s) or c.shape != (s,):
            raise ValueError(f"Runge-Kutta tableau {nm!r}: A {A.shape}, b {b.shape}, c {c.shape} do not describe "
                             f"one {s}-stage method")
        if np.any(np.triu(A) != 0):
            i, j = np.argwhere(np.triu(A) != 0)[0]
            raise ValueError(f"Runge-Kutta tableau {nm!r}: A must be strictly lower triangular (explicit method); "
                             f"A[{i}, {j}] = {A[i, j]!r}")
        if not (isinstance(self.order, (int, np.integer)) and self.order >= 1):
            raise ValueError(f"Runge-Kutta tableau {nm!r}: order must be a positive integer, got {self.order!r}")
        for i in range(s):
            r = float(A[i].sum())
            if not abs(r - c[i]) <= 4 * s * _EPS * (float(np.abs(A[i]).sum()) + abs(c[i])):
                raise ValueError(f"Runge-Kutta tableau {nm!r}: row {i} of A sums to {r!r}, not c[{i}] = {c[i]!r} "
                                 "(the stages must be consistent: A 1 = c)")
        if not abs(float(b.sum()) - 1.0) <= 4 * s * _EPS * float(np.abs(b).sum()):
            raise ValueError(f"Runge-Kutta tableau {nm!r}: the weights b sum to {float(b.sum())!r}, not 1 "
                             "(order condition of order 1)")
        _check_weights(nm, "b", A, c, b, int(self.order))
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)
        object.__setattr__(self, "order", int(self.order))
        if self.b_hat is None:
            if self.order_hat is not None:
                raise ValueError(f"Runge-Kutta tableau {nm!r}: order_hat given without embedded weights b_hat")
            object.__setattr__(self, "e", None)
            return
        bh = _frozen(self.b_hat, "b_hat", nm, 1)
        if bh.shape != (s,):
            raise ValueError(f"Runge-Kutta tableau {nm!r}: b_hat has shape {bh.shape}, expected ({s},)")
        if not (isinstance(self.order_hat, (int, np.integer)) and 1 <= self.order_hat):
            raise ValueError(f"Runge-Kutta tableau {nm!r}: an embedded pair needs order_hat >= 1, "
                             f"got {self.order_hat!r}")
        if not abs(float(bh.sum()) - 1.0) <= 4 * s * _EPS * float(np.abs(bh).sum()):
            raise ValueError(f"Runge-Kutta tableau {nm!r}: the embedded weights b_hat sum to {float(bh.sum())!r}, "
                             "not 1 (order condition of order 1)")
        _check_weights(nm, "b_hat", A, c, bh, int(self.order_hat))
        e = b - bh
        e.setflags(write=False)
        object.__setattr__(self, "b_hat", bh)
        object.__setattr__(self, "order_hat", int(self.order_hat))
        object.__setattr__(self, "e", e)

    @property
    def stages(self) -> int:
        return self.b.shape[0]

    @property
    def fsal(self) -> bool:
        """First same as last: the last stage is evaluated at the new state (``A[-1] = b``, ``c[-1] = 1``),
        so it is the next step's first stage."""
        return bool(self.c[-1] == 1.0 and np.array_equal(self.A[-1], self.b))

    @property
    def error_exponent(self) -> float:
        """``-1/(q+1)``, ``q`` the lower order of the pair: the step-size controller's exponent."""
        if self.order_hat is None:
            raise ValueError(f"Runge-Kutta tableau {self.name!r} has no embedded error estimate")
        return -1.0 / (min(self.order, self.order_hat) + 1)

    # the former 4-tuples (A, b, c, order)
    def __iter__(self):
        return iter((self.A, self.b, self.c, self.order))

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (self.A, self.b, self.c, self.order)[i]

    def __repr__(self):
        emb = "" if self.b_hat is None else f"({self.order_hat})"
        return f"Tableau({self.name!r}, {self.stages} stages, order {self.order}{emb})"


def _lower(rows):
    """Square strictly lower-triangular matrix from its rows below the diagonal (row i has i entries)."""
    s = len(rows)
    A = np.zeros((s, s))
    for i, r in enumerate(rows):
        A[i, :i] = r
    return A


# the fixed-step methods (coefficients as before, bit for bit)
TABLEAUX = {
    "euler": Tableau("euler", np.zeros((1, 1)), np.array([1.0]), np.array([0.0]), 1),
    "heun": Tableau("heun", np.array([[0.0, 0.0], [1.0, 0.0]]), np.array([0.5, 0.5]), np.array([0.0, 1.0]), 2),
    "midpoint": Tableau("midpoint", np.array([[0.0, 0.0], [0.5, 0.0]]), np.array([0.0, 1.0]),
                        np.array([0.0, 0.5]), 2),
    "rk3": Tableau("rk3", np.array([[0, 0, 0], [0.5, 0, 0], [-1.0, 2.0, 0]]), np.array([1 / 6, 2 / 3, 1 / 6]),
                   np.array([0.0, 0.5, 1.0]), 3),
    "rk4": Tableau("rk4", np.array([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1.0, 0]]),
                   np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]), np.array([0.0, 0.5, 0.5, 1.0]), 4),
}

# Dormand & Prince (1980), RK5(4)7FM: order 5, embedded order 4, FSAL
DP5 = Tableau(
    "dopri5",
    np.array([
        [0, 0, 0, 0, 0, 0, 0],
        [1 / 5, 0, 0, 0, 0, 0, 0],
        [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
        [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
        [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
    ]),
    np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]),
    np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]),
    5,
    b_hat=np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40]),
    order_hat=4,
)
TABLEAUX["dopri5"] = DP5
FIXED_STEP = ("euler", "heun", "midpoint", "rk3", "rk4")

# the former names of the Dormand-Prince arrays (read-only views of DP5's)
_DP_C, _DP_A, _DP_B, _DP_E = DP5.c, DP5.A, DP5.b, DP5.e


def tableau(name: str) -> Tableau:
    try:
        return TABLEAUX[name]
    except KeyError:
        raise ValueError(f"unknown Runge-Kutta method {name!r} (known: {', '.join(TABLEAUX)})") from None


@dataclass(frozen=True)
class ODEResult:
    """Outcome of an adaptive solve.  ``y`` the state at ``t`` (the end point when ``success``, else where the
    step budget ran out); ``ys`` the states at the requested output times (``t_eval``; the last row is ``y``
    when ``success``), ``accepted``/``rejected`` steps, ``nfev`` right-hand-side evaluations, ``message``."""
    y: np.ndarray
    t: float
    accepted: int
    rejected: int
    nfev: int
    success: bool
    message: str
    ys: np.ndarray | None = None
    t_eval: np.ndarray | None = None


# ---------------------------------------------------------------------------
# fixed step
def rk_fixed_numpy(f, t0: float, y0, h: float, n: int, args=(), method: str = "rk4",
                   every: int = 0):
    """``n`` explicit steps of size ``h``; returns the final state (and the states every
    ``every`` steps, the initial one included, when ``every > 0``)."""
    A, b, c, _ = tableau(method)
    s = len(b)
    y = np.array(y0, dtype=float)
    t = float(t0)
    traj = [y.copy()] if every else None
    K = np.empty((s, y.size))
    for i in range(n):
        for j in range(s):
            yj = y + h * (A[j, :j] @ K[:j]) if j else y
            K[j] = f(t + c[j] * h, yj, *args)
        y = y + h * (b @ K)
        t += h
        if every and (i + 1) % every == 0:
            traj.append(y.copy())
    return (y, np.array(traj)) if every else y


@njit(cache=True)
def _stage_state(yj, y, K, A, j, h):
    """``yj = y + h sum_{l<j} A[j, l] K[l]`` (zero coefficients skipped), in place, summed in the order of the
    former array expression ``yj = y.copy(); yj += h * A[j, l] * K[l]`` so that results are unchanged."""
    m = y.shape[0]
    for i in range(m):
        yj[i] = y[i]
    for l in range(j):
        a = A[j, l]
        if a != 0.0:
            ha = h * a
            for i in range(m):
                yj[i] += ha * K[l, i]


def _rk_fixed_loop(t0, y0, h, n, args, A, b, c, every):
    s = b.shape[0]
    m = y0.shape[0]
    y = y0.copy()
    yj = np.empty(m)
    t = t0
    K = np.empty((s, m))
    nout = n // every + 1 if every > 0 else 1
    traj = np.empty((nout, m))
    traj[0] = y
    k = 1
    for i in range(n):
        for j in range(s):
            _stage_state(yj, y, K, A, j, h)
            K[j] = RHS(t + c[j] * h, yj, args)
        for j in range(s):
            if b[j] != 0.0:
                hb = h * b[j]
                for q in range(m):
                    y[q] += hb * K[j, q]
        t += h
        if every > 0 and (i + 1) % every == 0:
            traj[k] = y
            k += 1
    return y, traj


def _rk_fixed_inplace_loop(t0, y0, h, n, args, A, b, c, every):
    """:func:`_rk_fixed_loop` for an in-place right-hand side ``RHS(t, y, args, out)``."""
    s = b.shape[0]
    m = y0.shape[0]
    y = y0.copy()
    yj = np.empty(m)
    t = t0
    K = np.empty((s, m))
    nout = n // every + 1 if every > 0 else 1
    traj = np.empty((nout, m))
    traj[0] = y
    k = 1
    for i in range(n):
        for j in range(s):
            _stage_state(yj, y, K, A, j, h)
            RHS(t + c[j] * h, yj, args, K[j])
        for j in range(s):
            if b[j] != 0.0:
                hb = h * b[j]
                for q in range(m):
                    y[q] += hb * K[j, q]
        t += h
        if every > 0 and (i + 1) % every == 0:
            traj[k] = y
            k += 1
    return y, traj


def rk_fixed(f, t0: float, y0, h: float, n: int, args=(), method: str = "rk4", every: int = 0):
    """Numba kernel of :func:`rk_fixed_numpy`; ``f`` must be ``@njit`` with signature ``f(t, y, args)`` (or
    ``f(t, y, args, out)`` when registered with ``inplace=True``).  Cached on disk when ``f`` is registered
    (:func:`solvers.specialise.register`); otherwise the kernel is compiled in every process (uncached generic
    path)."""
    tab = tableau(method)
    loop = _rk_fixed_inplace_loop if is_inplace(f) else _rk_fixed_loop
    y, traj = kernel(loop, f)(float(t0), np.ascontiguousarray(y0, dtype=np.float64), float(h),
                              int(n), args, tab.A, tab.b, tab.c, int(every))
    return (y, traj) if every else y


# ---------------------------------------------------------------------------
# embedded pair (Dormand-Prince 5(4) by default)
def _dopri5_numpy_core(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab=DP5, hold=False):
    """The adaptive loop of :func:`dopri5_numpy`, stepping exactly onto each output time of ``touts`` (no
    interpolation).  A step shortened to land on an intermediate output time does not shrink the next one:
    the controller's proposal from before the shortening is kept when it is larger.  ``hold``: the step
    accepted right after a rejection does not grow the step size (Hairer, Norsett & Wanner I, II.4; SciPy's
    RK45 does the same), and a second rejection in a row shrinks the step by the first-order error model
    ``0.9/err`` when that is smaller (the local error across a kink of the field is ``O(h)``, not ``O(h^5)``,
    so the fifth-order rule under-shrinks and is rejected again): fewer rejections where the field has kinks.  Returns
    ``(y, ys, accepted, rejected, t)``; ``t < touts[-1]`` when ``max_steps`` ran out."""
    C, A, B, E = tab.c, tab.A, tab.b, tab.e
    s = tab.stages
    expo = tab.error_exponent
    y = np.array(y0, dtype=float)
    t, h = float(t0), float(h0)
    K = np.empty((s, y.size))
    ys = np.empty((len(touts), y.size))
    acc = rej = 0
    held = False
    K[0] = f(t, y, *args)
    last = len(touts) - 1
    for k, t1 in enumerate(touts):
        while t < t1 and acc + rej < max_steps:
            hsave = h if (k < last and h > t1 - t) else 0.0
            h = min(h, t1 - t)
            for j in range(1, s):
                K[j] = f(t + C[j] * h, y + h * (A[j, :j] @ K[:j]), *args)
            ynew = y + h * (B @ K)
            err = h * (E @ K)
            sc = atol + rtol * np.maximum(np.abs(y), np.abs(ynew))
            en = np.sqrt(np.mean((err / sc) ** 2))
            ok = en <= 1.0
            if ok:
                t += h
                y = ynew
                K[0] = K[s - 1] if tab.fsal else f(t, y, *args)
                acc += 1
            else:
                rej += 1
            fac, held = _step_factor(float(en), expo, bool(ok), bool(hold), held)
            h *= fac
            if ok and h < hsave:
                h = hsave
        if t < t1:
            return y, ys[:k], acc, rej, t
        ys[k] = y
    return y, ys, acc, rej, t


def dopri5_numpy(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
                 h0: float = 1e-3, max_steps: int = 1_000_000):
    """Adaptive Dormand-Prince 5(4) from t0 to t1; returns (y(t1), accepted steps, rejected steps)."""
    y, _, acc, rej, t = _dopri5_numpy_core(f, t0, y0, (float(t1),), args, rtol, atol, h0, max_steps)
    if t < t1:
        raise RuntimeError(f"dopri5 did not reach t1={t1} in {max_steps} steps (t={t})")
    return y, acc, rej


@njit(cache=True)
def _step_factor(en, expo, ok, hold, held):
    """The step-size controller of every embedded loop: ``(factor on h, held)``.  Factor 0.9 en^expo clipped to
    [0.2, 5]; with ``hold`` (SciPy's rule) no growth right after a rejection, and a second rejection in a row shrinks
    by the first-order model 0.9/en (across a kink the local error is O(h), the high-order rule under-shrinks)."""
    fac = min(5.0, max(0.2, 0.9 * (en if en > 0 else 1e-10) ** expo))
    if hold:
        if ok:
            if held and fac > 1.0:
                fac = 1.0
            held = False
        else:
            if held:
                fac = max(0.2, min(fac, 0.9 / en))
            held = True
    return fac, held


@njit(cache=True)
def _combine(ynew, y, K, B, E, h, rtol, atol):
    """``ynew = y + h B.K`` in place; returns the RMS of the error estimate ``h E.K`` scaled by
    ``atol + rtol max(|y|, |ynew|)`` (same summation order as before the buffers)."""
    m = y.shape[0]
    s = B.shape[0]
    acc = 0.0
    for i in range(m):
        acc_i = 0.0
        err_i = 0.0
        for j in range(s):
            acc_i += B[j] * K[j, i]
            err_i += E[j] * K[j, i]
        ynew[i] = y[i] + h * acc_i
        sc = atol + rtol * max(abs(y[i]), abs(ynew[i]))
        acc += (h * err_i / sc) ** 2
    return np.sqrt(acc / m)


def _dopri5_loop(t0, y0, touts, args, rtol, atol, h0, max_steps, C, A, B, E, expo, fsal, hold):
    """Embedded-pair loop (see :func:`_dopri5_numpy_core`); stage buffers allocated once.  Returns
    ``(y, ys, accepted, rejected, t, n_outputs_reached)``."""
    m = y0.shape[0]
    s = B.shape[0]
    y = y0.copy()
    ynew = np.empty(m)
    yj = np.empty(m)
    nout = touts.shape[0]
    ys = np.empty((nout, m))
    t = t0
    h = h0
    K = np.empty((s, m))
    acc = 0
    rej = 0
    held = False
    K[0] = RHS(t, y, args)
    for k in range(nout):
        t1 = touts[k]
        while t < t1 and acc + rej < max_steps:
            hsave = 0.0
            if h > t1 - t:
                if k < nout - 1:
                    hsave = h
                h = t1 - t
            for j in range(1, s):
                _stage_state(yj, y, K, A, j, h)
                K[j] = RHS(t + C[j] * h, yj, args)
            en = _combine(ynew, y, K, B, E, h, rtol, atol)
            ok = en <= 1.0
            if ok:
                t += h
                y, ynew = ynew, y
                if fsal:
                    K[0] = K[s - 1]
                else:
                    K[0] = RHS(t, y, args)
                acc += 1
            else:
                rej += 1
            fac, held = _step_factor(en, expo, ok, hold, held)
            h *= fac
            if ok and h < hsave:
                h = hsave
        if t < t1:
            return y, ys, acc, rej, t, k
        ys[k] = y
    return y, ys, acc, rej, t, nout


def _dopri5_inplace_loop(t0, y0, touts, args, rtol, atol, h0, max_steps, C, A, B, E, expo, fsal, hold):
    """:func:`_dopri5_loop` for an in-place right-hand side ``RHS(t, y, args, out)``: no allocation per step."""
    m = y0.shape[0]
    s = B.shape[0]
    y = y0.copy()
    ynew = np.empty(m)
    yj = np.empty(m)
    nout = touts.shape[0]
    ys = np.empty((nout, m))
    t = t0
    h = h0
    K = np.empty((s, m))
    acc = 0
    rej = 0
    held = False
    RHS(t, y, args, K[0])
    for k in range(nout):
        t1 = touts[k]
        while t < t1 and acc + rej < max_steps:
            hsave = 0.0
            if h > t1 - t:
                if k < nout - 1:
                    hsave = h
                h = t1 - t
            for j in range(1, s):
                _stage_state(yj, y, K, A, j, h)
                RHS(t + C[j] * h, yj, args, K[j])
            en = _combine(ynew, y, K, B, E, h, rtol, atol)
            ok = en <= 1.0
            if ok:
                t += h
                y, ynew = ynew, y
                if fsal:
                    K[0] = K[s - 1]
                else:
                    RHS(t, y, args, K[0])
                acc += 1
            else:
                rej += 1
            fac, held = _step_factor(en, expo, ok, hold, held)
            h *= fac
            if ok and h < hsave:
                h = hsave
        if t < t1:
            return y, ys, acc, rej, t, k
        ys[k] = y
    return y, ys, acc, rej, t, nout


def _run_embedded(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab, hold=False):
    loop = _dopri5_inplace_loop if is_inplace(f) else _dopri5_loop
    return kernel(loop, f)(float(t0), np.ascontiguousarray(y0, dtype=np.float64), touts, args, float(rtol),
                           float(atol), float(h0), int(max_steps), tab.c, tab.A, tab.b, tab.e,
                           tab.error_exponent, tab.fsal, bool(hold))


def dopri5(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
           h0: float = 1e-3, max_steps: int = 1_000_000):
    """Numba kernel of :func:`dopri5_numpy` (same step-size controller, same results); ``f`` as in
    :func:`rk_fixed` (cached on disk when registered, compiled in every process otherwise).
    Returns ``(y(t1), accepted, rejected)``; raises ``RuntimeError`` when ``max_steps`` run out
    (:func:`solve_dopri5` returns an :class:`ODEResult` instead)."""
    y, _, acc, rej, t, _ = _run_embedded(f, t0, y0, np.array([float(t1)]), args, rtol, atol, h0, max_steps, DP5)
    if t < t1:
        raise RuntimeError(f"dopri5 did not reach t1={t1} in {max_steps} steps (t={t})")
    return y, acc, rej


def solve_dopri5(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
                 h0: float = 1e-3, max_steps: int = 1_000_000, t_eval=None, backend: str = "numba",
                 method: Tableau | str = DP5, hold_after_reject: bool = False) -> ODEResult:
    """Adaptive embedded Runge-Kutta (Dormand-Prince 5(4) unless ``method`` names another embedded tableau)
    from ``t0`` to ``t1``, as an :class:`ODEResult`; ``success`` is False (with the reason in ``message``)
    when ``max_steps`` steps did not reach ``t1``.  Without ``t_eval`` this is :func:`dopri5` (numba backend)
    or :func:`dopri5_numpy` (``backend='numpy'``), step for step.  With ``t_eval`` (increasing, in
    ``(t0, t1]``; ``t1`` is appended when missing) the integrator steps exactly onto each output time, in one
    kernel call, the step size carried across them (``ys`` holds the states).  ``hold_after_reject``: the step
    accepted right after a rejection does not grow the step size (as SciPy's RK45; fewer rejections where the
    field has kinks, e.g. the ReLU of the leaky ResNet); off by default, so that the default is :func:`dopri5`."""
    tab = tableau(method) if isinstance(method, str) else method
    if not isinstance(tab, Tableau) or tab.e is None:
        raise ValueError(f"solve_dopri5 needs an embedded tableau (with b_hat), got {method!r}")
    t0, t1 = float(t0), float(t1)
    if not t1 >= t0:
        raise ValueError(f"t1 = {t1} must be >= t0 = {t0}")
    if t_eval is None:
        touts = np.array([t1])
    else:
        touts = np.asarray(t_eval, dtype=np.float64).ravel()
        if touts.size == 0 or touts[-1] != t1:
            touts = np.append(touts, t1)
        if np.any(np.diff(touts) <= 0) or touts[0] <= t0 or touts[-1] > t1:
            raise ValueError("t_eval must be strictly increasing, inside (t0, t1]")
    per = tab.stages - 1 if tab.fsal else tab.stages
    if backend == "numba":
        y, ys, acc, rej, t, nreached = _run_embedded(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab,
                                                     hold_after_reject)
        ys = ys[:nreached]
    elif backend == "numpy":
        y, ys, acc, rej, t = _dopri5_numpy_core(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab,
                                                hold_after_reject)
    else:
        raise ValueError(f"unknown backend {backend!r} (numba or numpy)")
    nfev = 1 + per * (acc + rej)
    ok = bool(t >= t1)
    msg = ("reached t1" if ok else f"{tab.name} did not reach t1={t1} in {max_steps} steps (stopped at t={t})")
    return ODEResult(y=y, t=float(t), accepted=int(acc), rejected=int(rej), nfev=int(nfev), success=ok,
                     message=msg, ys=ys if t_eval is not None else None,
                     t_eval=touts[:len(ys)] if t_eval is not None else None)
# ---------------------------------------------------------------------------
# implicit midpoint
def implicit_midpoint_numpy(f, t0: float, y0, h: float, n: int, args=(), tol: float = 2e-15,
                            max_iter: int = 100):
    """Implicit midpoint rule by fixed-point iteration (contractive when h * Lip(f) < 2).
    Returns (y_n, largest number of iterations a step needed)."""
    y = np.array(y0, dtype=float)
    t = float(t0)
    worst = 0
    for _ in range(n):
        z = y + h * f(t + h / 2, y, *args)
        for it in range(max_iter):
            znew = y + h * f(t + h / 2, (y + z) / 2, *args)
            delta = np.max(np.abs(znew - z))
            z = znew
            if delta <= tol * max(1.0, np.max(np.abs(z))):
                break
        else:
            raise RuntimeError("implicit midpoint: fixed-point iteration did not converge; reduce h")
        worst = max(worst, it + 1)
        y = z
        t += h
    return y, worst


def _implicit_midpoint_loop(t0, y0, h, n, args, tol, max_iter):
    y = y0.copy()
    t = t0
    worst = 0
    for _ in range(n):
        z = y + h * RHS(t + h / 2, y, args)
        ok = False
        for it in range(max_iter):
            znew = y + h * RHS(t + h / 2, 0.5 * (y + z), args)
            delta = np.max(np.abs(znew - z))
            z = znew
            if delta <= tol * max(1.0, np.max(np.abs(z))):
                ok = True
                break
        if not ok:
            return y, -1
        if it + 1 > worst:
            worst = it + 1
        y = z
        t += h
    return y, worst


def implicit_midpoint(f, t0: float, y0, h: float, n: int, args=(), tol: float = 2e-15,
                      max_iter: int = 100):
    """Numba kernel of :func:`implicit_midpoint_numpy`; ``f`` as in :func:`rk_fixed` (cached on disk
    when registered, compiled in every process otherwise)."""
    y, worst = kernel(_implicit_midpoint_loop, f)(float(t0), np.ascontiguousarray(y0, dtype=np.float64),
                                                  float(h), int(n), args, float(tol), int(max_iter))
    if worst < 0:
        raise RuntimeError("implicit midpoint: fixed-point iteration did not converge; reduce h")
    return y, worst
