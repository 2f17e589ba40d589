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
``solvers.orthogonal``) and the embedded kernels (:func:`dopri5`, :func:`solve_dopri5`; :func:`solve_dop853`)
read their coefficients from these objects (:data:`TABLEAUX`, :data:`DP5`, :data:`DOP853`).

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
* Dormand-Prince 8(5,3) (:func:`solve_dop853`, Hairer's DOP853): the same model for Hairer's combined estimate
  ``|err5|^2 / sqrt(|err5|^2 + 0.01 |err3|^2)`` (``O(h^8)``, controller exponent ``-1/8``); order 8, so at tight
  tolerances on smooth fields it takes far fewer steps than 5(4) (not across kinks of the field, where no
  high order is reached).
* fields with switching surfaces (:func:`solve_switching`, a ReLU's walls ``y_i = 0``): the field of the current
  mode is smooth, each wall is located (Hermite interpolant, then Newton on the landing value) and stepped onto, so
  the embedded pair's model holds on each smooth piece; at a wall, switching at a time off by ``|y_i / y_i'|`` costs
  ``|y_i / y_i'| |jump of the field|``, kept below a tenth of the local tolerance.  Stepping over a jump instead
  (the plain loops) has local error ``O(h |jump|)``: the controller shrinks the step, with rejections, until that
  passes, and the global error is far above the tolerance's (tests/test_switching.py: 300-1000x at rtol 1e-6).
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

__all__ = ["Tableau", "TABLEAUX", "DP5", "DOP853", "tableau", "order_conditions", "ODEResult", "rk_fixed", "rk_fixed_numpy",
           "dopri5", "dopri5_numpy", "solve_dopri5", "solve_dop853", "solve_switching", "implicit_midpoint", "implicit_midpoint_numpy"]

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
    ``b_hat`` of order ``order_hat`` (then ``e = b - b_hat`` is the error-estimate weight vector), and optionally a
    second embedded method ``b_hat2`` of order ``order_hat2`` (``e2 = b - b_hat2``; Dormand-Prince 8(5,3) combines
    its two estimates, see :data:`DOP853`).  ``error_order``: the order ``q`` of the local error estimate that the
    step controller assumes (exponent ``-1/(q+1)``); by default the lower order of the pair.
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
    b_hat2: np.ndarray | None = None
    order_hat2: int | None = None
    error_order: int | None = None
    e2: np.ndarray | None = field(init=False, repr=False)

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
        object.__setattr__(self, "e2", None)
        if self.b_hat is None:
            if self.order_hat is not None or self.b_hat2 is not None or self.error_order is not None:
                raise ValueError(f"Runge-Kutta tableau {nm!r}: order_hat, b_hat2 or error_order given without "
                                 "embedded weights b_hat")
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
        if self.b_hat2 is not None:
            bh2 = _frozen(self.b_hat2, "b_hat2", nm, 1)
            if bh2.shape != (s,):
                raise ValueError(f"Runge-Kutta tableau {nm!r}: b_hat2 has shape {bh2.shape}, expected ({s},)")
            if not (isinstance(self.order_hat2, (int, np.integer)) and 1 <= self.order_hat2):
                raise ValueError(f"Runge-Kutta tableau {nm!r}: a second embedded method needs order_hat2 >= 1, "
                                 f"got {self.order_hat2!r}")
            if not abs(float(bh2.sum()) - 1.0) <= 4 * s * _EPS * float(np.abs(bh2).sum()):
                raise ValueError(f"Runge-Kutta tableau {nm!r}: the embedded weights b_hat2 sum to "
                                 f"{float(bh2.sum())!r}, not 1 (order condition of order 1)")
            _check_weights(nm, "b_hat2", A, c, bh2, int(self.order_hat2))
            e2 = b - bh2
            e2.setflags(write=False)
            object.__setattr__(self, "b_hat2", bh2)
            object.__setattr__(self, "order_hat2", int(self.order_hat2))
            object.__setattr__(self, "e2", e2)
        elif self.order_hat2 is not None:
            raise ValueError(f"Runge-Kutta tableau {nm!r}: order_hat2 given without embedded weights b_hat2")
        if self.error_order is not None:
            if not (isinstance(self.error_order, (int, np.integer)) and 1 <= self.error_order < self.order):
                raise ValueError(f"Runge-Kutta tableau {nm!r}: error_order must be an integer in [1, order), "
                                 f"got {self.error_order!r}")
            object.__setattr__(self, "error_order", int(self.error_order))

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
        """``-1/(q+1)``, ``q`` the lower order of the pair (or ``error_order`` when given): the step-size
        controller's exponent."""
        if self.order_hat is None:
            raise ValueError(f"Runge-Kutta tableau {self.name!r} has no embedded error estimate")
        q = self.error_order if self.error_order is not None else min(self.order, self.order_hat)
        return -1.0 / (q + 1)

    # the former 4-tuples (A, b, c, order)
    def __iter__(self):
        return iter((self.A, self.b, self.c, self.order))

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (self.A, self.b, self.c, self.order)[i]

    def __repr__(self):
        emb = "" if self.b_hat is None else f"({self.order_hat}" + ("" if self.b_hat2 is None else f",{self.order_hat2}") + ")"
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

# Dormand & Prince 8(5,3), Hairer's DOP853 (Hairer, Norsett & Wanner, Solving ODEs I, 2nd ed., II.10; the Fortran
# code DOP853.f): 12 stages, order 8, a 5th-order and a 3rd-order embedded method.  The coefficients are those of
# SciPy's transcription, scipy/integrate/_ivp/dop853_coefficients.py (BSD-3-Clause, Copyright (c) the SciPy
# Developers), digit for digit: C, the rows 1..11 of A, B = A[12, :12], E5 and the 3rd-order weights BHH of E3 =
# B - BHH.  Not FSAL (c[-1] = 1 but A[-1] != b): the next step's first stage f(t + h, y_new) is the 13th
# evaluation of a step (SciPy's K[12]).  The extra stages of SciPy's dense output are not used here (the
# integrators step onto each output time).  tests/test_dop853.py compares these arrays with SciPy's bit for bit.
_DOP853_C = [0.0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
             0.118350341907227396726757197510, 0.281649658092772603273242802490, 0.333333333333333333333333333333,
             0.25, 0.307692307692307692307692307692, 0.651282051282051282051282051282, 0.6,
             0.857142857142857142857142857142, 1.0]
_DOP853_A = {   # row: {column: value}; the other entries below the diagonal are zero
    1: {0: 5.26001519587677318785587544488e-2},
    2: {0: 1.97250569845378994544595329183e-2, 1: 5.91751709536136983633785987549e-2},
    3: {0: 2.95875854768068491816892993775e-2, 2: 8.87627564304205475450678981324e-2},
    4: {0: 2.41365134159266685502369798665e-1, 2: -8.84549479328286085344864962717e-1,
        3: 9.24834003261792003115737966543e-1},
    5: {0: 3.7037037037037037037037037037e-2, 3: 1.70828608729473871279604482173e-1,
        4: 1.25467687566822425016691814123e-1},
    6: {0: 3.7109375e-2, 3: 1.70252211019544039314978060272e-1, 4: 6.02165389804559606850219397283e-2,
        5: -1.7578125e-2},
    7: {0: 3.70920001185047927108779319836e-2, 3: 1.70383925712239993810214054705e-1,
        4: 1.07262030446373284651809199168e-1, 5: -1.53194377486244017527936158236e-2,
        6: 8.27378916381402288758473766002e-3},
    8: {0: 6.24110958716075717114429577812e-1, 3: -3.36089262944694129406857109825,
        4: -8.68219346841726006818189891453e-1, 5: 2.75920996994467083049415600797e1,
        6: 2.01540675504778934086186788979e1, 7: -4.34898841810699588477366255144e1},
    9: {0: 4.77662536438264365890433908527e-1, 3: -2.48811461997166764192642586468,
        4: -5.90290826836842996371446475743e-1, 5: 2.12300514481811942347288949897e1,
        6: 1.52792336328824235832596922938e1, 7: -3.32882109689848629194453265587e1,
        8: -2.03312017085086261358222928593e-2},
    10: {0: -9.3714243008598732571704021658e-1, 3: 5.18637242884406370830023853209,
         4: 1.09143734899672957818500254654, 5: -8.14978701074692612513997267357,
         6: -1.85200656599969598641566180701e1, 7: 2.27394870993505042818970056734e1,
         8: 2.49360555267965238987089396762, 9: -3.0467644718982195003823669022},
    11: {0: 2.27331014751653820792359768449, 3: -1.05344954667372501984066689879e1,
         4: -2.00087205822486249909675718444, 5: -1.79589318631187989172765950534e1,
         6: 2.79488845294199600508499808837e1, 7: -2.85899827713502369474065508674,
         8: -8.87285693353062954433549289258, 9: 1.23605671757943030647266201528e1,
         10: 6.43392746015763530355970484046e-1},
}
_DOP853_B = {0: 5.42937341165687622380535766363e-2, 5: 4.45031289275240888144113950566,
             6: 1.89151789931450038304281599044, 7: -5.8012039600105847814672114227,
             8: 3.1116436695781989440891606237e-1, 9: -1.52160949662516078556178806805e-1,
             10: 2.01365400804030348374776537501e-1, 11: 4.47106157277725905176885569043e-2}
_DOP853_E5 = {0: 0.1312004499419488073250102996e-1, 5: -0.1225156446376204440720569753e+1,
              6: -0.4957589496572501915214079952, 7: 0.1664377182454986536961530415e+1,
              8: -0.3503288487499736816886487290, 9: 0.3341791187130174790297318841,
              10: 0.8192320648511571246570742613e-1, 11: -0.2235530786388629525884427845e-1}
_DOP853_BHH = {0: 0.244094488188976377952755905512, 8: 0.733846688281611857341361741547,
               11: 0.220588235294117647058823529412e-1}


def _vec(entries, n=12):
    v = np.zeros(n)
    for j, x in entries.items():
        v[j] = x
    return v


def _dop853_tableau() -> Tableau:
    """The DOP853 :class:`Tableau`: ``b`` of order 8 (the 200 order conditions up to order 8, 115 of them of order
    8), ``b_hat = b - E5`` of order 5, ``b_hat2 = BHH`` of order 3 (so that ``e = E5`` up to the rounding of
    ``b - (b - E5)`` and ``e2 = E3``), ``error_order = 7``: Hairer's combined estimate
    ``|err5|^2 / sqrt(|err5|^2 + 0.01 |err3|^2)`` is ``O(h^8)`` (``err5 = O(h^6)``, ``err3 = O(h^4)``), so the
    controller's exponent is ``-1/8`` (SciPy's ``error_estimator_order = 7``; Hairer's ``expo1 = 1/8``).  Checked
    when :mod:`solvers.rk` is imported (about 20 ms)."""
    A = np.zeros((12, 12))
    for i, row in _DOP853_A.items():
        for j, x in row.items():
            A[i, j] = x
    b = _vec(_DOP853_B)
    return Tableau("dop853", A, b, np.array(_DOP853_C), 8, b_hat=b - _vec(_DOP853_E5), order_hat=5,
                   b_hat2=_vec(_DOP853_BHH), order_hat2=3, error_order=7)


DOP853 = _dop853_tableau()
TABLEAUX["dop853"] = DOP853
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
    when ``success``), ``accepted``/``rejected`` steps, ``nfev`` right-hand-side evaluations, ``message``;
    :func:`solve_switching` adds ``events`` (walls crossed) and ``blew_up`` (stopped by its ``blowup`` bound)."""
    y: np.ndarray
    t: float
    accepted: int
    rejected: int
    nfev: int
    success: bool
    message: str
    ys: np.ndarray | None = None
    t_eval: np.ndarray | None = None

    def checked(self) -> np.ndarray:
        """The end state ``y``; ``RuntimeError`` with :attr:`message` when the solve did not reach its end (for
        callers that treat an unfinished solve as a failure rather than a result)."""
        if not self.success:
            raise RuntimeError(self.message)
        return self.y
    events: int = 0
    blew_up: bool = False


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
            sc = atol + rtol * np.maximum(np.abs(y), np.abs(ynew))
            if tab.e2 is None:
                err = h * (E @ K)
                en = np.sqrt(np.mean((err / sc) ** 2))
            else:                           # DOP853: Hairer's combination of the 5th- and 3rd-order estimates
                e5 = float(np.sum(((E @ K) / sc) ** 2))
                e3 = float(np.sum(((tab.e2 @ K) / sc) ** 2))
                en = 0.0 if e5 == 0.0 and e3 == 0.0 else abs(h) * e5 / np.sqrt(y.size * (e5 + 0.01 * e3))
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
    """Adaptive Dormand-Prince 5(4) from t0 to t1; returns (y(t1), accepted steps, rejected steps) and raises
    ``RuntimeError`` past ``max_steps``.  The tuple form the kernel tests compare against; callers use
    :func:`solve_dopri5` (``backend='numpy'``), which returns an :class:`ODEResult`."""
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


def _dopri5_loop(t0, y0, touts, args, rtol, atol, h0, max_steps, C, A, B, E, E2, expo, fsal, hold):
    """Embedded-pair loop (see :func:`_dopri5_numpy_core`); stage buffers allocated once; with a second estimate
    ``E2`` (DOP853) the error norm is Hairer's combined one (:func:`_combine853`).  Returns
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
    dual = E2.shape[0] > 0
    w5 = np.empty(m if dual else 0)
    w3 = np.empty(m if dual else 0)
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
            if dual:   # two embedded estimates (DOP853): Hairer's combined norm
                en = _combine853(ynew, y, K, B, E, E2, h, rtol, atol, w5, w3)
            else:
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


def _dopri5_inplace_loop(t0, y0, touts, args, rtol, atol, h0, max_steps, C, A, B, E, E2, expo, fsal, hold):
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
    dual = E2.shape[0] > 0
    w5 = np.empty(m if dual else 0)
    w3 = np.empty(m if dual else 0)
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
            if dual:   # two embedded estimates (DOP853): Hairer's combined norm
                en = _combine853(ynew, y, K, B, E, E2, h, rtol, atol, w5, w3)
            else:
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


@njit(cache=True)
def _combine853(ynew, y, K, B, E5, E3, h, rtol, atol, w5, w3):
    """``ynew = y + h B.K`` in place; returns Hairer's DOP853 error norm
    ``|h| e5 / sqrt(m (e5 + 0.01 e3))``, ``e5 = sum_i (E5.K_i / sc_i)^2``, ``e3 = sum_i (E3.K_i / sc_i)^2``,
    ``sc = atol + rtol max(|y|, |ynew|)`` (0 when both estimates vanish): the 5th-order estimate, damped where the
    3rd-order one is large (Hairer, Norsett & Wanner I, II.10; SciPy's ``DOP853._estimate_error_norm``).  The stage
    sums run stage by stage over contiguous rows of ``K`` (stages whose three weights are zero skipped, four of
    DOP853's twelve), accumulating in ``ynew`` and the work buffers ``w5``, ``w3``."""
    m = y.shape[0]
    s = B.shape[0]
    for i in range(m):
        ynew[i] = 0.0
        w5[i] = 0.0
        w3[i] = 0.0
    for j in range(s):
        bj = B[j]
        e5j = E5[j]
        e3j = E3[j]
        if bj == 0.0 and e5j == 0.0 and e3j == 0.0:
            continue
        for i in range(m):
            k = K[j, i]
            ynew[i] += bj * k
            w5[i] += e5j * k
            w3[i] += e3j * k
    e5 = 0.0
    e3 = 0.0
    for i in range(m):
        ynew[i] = y[i] + h * ynew[i]
        sc = atol + rtol * max(abs(y[i]), abs(ynew[i]))
        a = w5[i] / sc
        b = w3[i] / sc
        e5 += a * a
        e3 += b * b
    if e5 == 0.0 and e3 == 0.0:
        return 0.0
    return abs(h) * e5 / np.sqrt(m * (e5 + 0.01 * e3))


def _run_embedded(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab, hold=False):
    y0 = np.ascontiguousarray(y0, dtype=np.float64)
    # one loop for every embedded pair: a second estimate (DOP853's e2) switches to Hairer's combined error norm
    e2 = tab.e2 if tab.e2 is not None else _NO_E2
    loop = _dopri5_inplace_loop if is_inplace(f) else _dopri5_loop
    return kernel(loop, f)(float(t0), y0, touts, args, float(rtol), float(atol), float(h0), int(max_steps),
                           tab.c, tab.A, tab.b, tab.e, e2, tab.error_exponent, tab.fsal, bool(hold))


_NO_E2 = np.empty(0)


# ---------------------------------------------------------------------------
# fields with switching surfaces: event location at the walls y_i = 0
@njit(cache=True)
def _hermite(y0, y1, f0, f1, h, th):
    """Cubic Hermite interpolant at ``th`` in [0, 1] of a component with values ``y0, y1`` and derivatives ``f0, f1``
    at the ends of a step of size ``h``."""
    t2 = th * th
    t3 = t2 * th
    return ((2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + th) * h * f0 + (3 * t2 - 2 * t3) * y1
            + (t3 - t2) * h * f1)


@njit(cache=True)
def _first_crossing(y0, y1, f0, f1, h, s):
    """Earliest ``th`` in (0, 1] where the Hermite interpolant of a switching component leaves the side ``s``
    (``s * y0 >= 0 > s * y1``): the first sign change on a grid of 16 sub-intervals (a cubic crosses at most
    three times), then bisection to the rounding of ``th``."""
    a = 0.0
    b = 1.0
    for k in range(1, 17):
        th = k / 16.0
        if k == 16 or s * _hermite(y0, y1, f0, f1, h, th) < 0.0:
            a = (k - 1) / 16.0
            b = th
            break
    for _ in range(60):
        mid = 0.5 * (a + b)
        if mid <= a or mid >= b:
            break
        if s * _hermite(y0, y1, f0, f1, h, mid) < 0.0:
            b = mid
        else:
            a = mid
    return b


def _switch_loop(t0, y0, touts, args, rtol, atol, h0, max_steps, C, A, B, E, E2, expo, fsal, hold, sw, blowup,
                 nchk, max_refine):
    """:func:`_dopri5_inplace_loop` for a field with switching surfaces ``y_i = 0``, ``i < len(sw)`` (a ReLU's
    walls): the right-hand side reads the side of each wall from ``sw`` (``+1``/``-1``, shared through its
    ``args``), not from the stage states, so within a step the field is the smooth one of the current mode and the
    error estimate sees no kink.  An accepted step after which a component ``y_i`` is on the other side of its wall
    (``sw_i y_i < 0``) is not taken: the earliest crossing ``th`` is located on the cubic Hermite interpolant of the
    step, the step is redone to ``t + th h`` and refined by Newton's method on the landing value
    (``h <- h - y_i / y_i'``) until switching there costs less than a tenth of the local tolerance
    (``|y_i / y_i'| rms(jump / sc) <= 0.1``, ``jump`` the change of the field at the wall; at most ``max_refine``
    redos); then the mode flips and the integration goes on from the wall.  No step straddles a wall (up to
    crossings that leave and re-enter a side within one step, which the sign test at the step ends misses).
    ``blowup``: the integration stops when ``max |y_i|, i < nchk`` exceeds it or the error norm is not finite.
    Returns ``(y, ys, accepted, rejected, t, n_outputs_reached, status, events, extra_evaluations)``; status 0
    done, 1 out of steps, 2 blow-up.  Discarded attempts (the step over a wall, the Newton redos) count as
    rejected."""
    m = y0.shape[0]
    s = B.shape[0]
    nsw = sw.shape[0]
    y = y0.copy()
    ynew = np.empty(m)
    yj = np.empty(m)
    fo = np.empty(m)
    fn = np.empty(m)
    nout = touts.shape[0]
    ys = np.empty((nout, m))
    t = t0
    h = h0
    K = np.empty((s, m))
    dual = E2.shape[0] > 0
    w5 = np.empty(m if dual else 0)
    w3 = np.empty(m if dual else 0)
    acc = 0
    rej = 0
    events = 0
    extra = 0
    held = False
    for i in range(nsw):
        sw[i] = 1.0 if y[i] > 0.0 else -1.0
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
            if dual:
                en = _combine853(ynew, y, K, B, E, E2, h, rtol, atol, w5, w3)
            else:
                en = _combine(ynew, y, K, B, E, h, rtol, atol)
            if not np.isfinite(en):
                return y, ys, acc, rej, t, k, 2, events, extra
            ok = en <= 1.0
            fac, held = _step_factor(en, expo, ok, hold, held)
            if not ok:
                rej += 1
                h *= fac
                continue
            # a wall crossed during the step?
            crossed = False
            for i in range(nsw):
                if sw[i] * ynew[i] < 0.0:
                    crossed = True
                    break
            if crossed:
                if fsal:
                    for i in range(m):
                        fo[i] = K[s - 1, i]
                else:
                    RHS(t + h, ynew, args, fo)
                    extra += 1
                # a component already past its wall at the start (a landing just short of it): flip it there
                flip0 = False
                for i in range(nsw):
                    if sw[i] * ynew[i] < 0.0 and sw[i] * y[i] <= 0.0 and y[i] != 0.0:
                        sw[i] = -sw[i]
                        flip0 = True
                if flip0:
                    rej += 1
                    RHS(t, y, args, K[0])
                    extra += 1
                    continue
                ie = -1
                th = 2.0
                for i in range(nsw):
                    if sw[i] * ynew[i] < 0.0:
                        c = _first_crossing(y[i], ynew[i], K[0, i], fo[i], h, sw[i])
                        if c < th:
                            th = c
                            ie = i
                hfull = h
                hl = th * h
                rej += 1
                landed = False
                for it in range(max_refine + 1):
                    for j in range(1, s):
                        _stage_state(yj, y, K, A, j, hl)
                        RHS(t + C[j] * hl, yj, args, K[j])
                    if dual:
                        en = _combine853(ynew, y, K, B, E, E2, hl, rtol, atol, w5, w3)
                    else:
                        en = _combine(ynew, y, K, B, E, hl, rtol, atol)
                    if not (en <= 1.0):
                        break
                    if fsal:
                        for i in range(m):
                            fo[i] = K[s - 1, i]
                    else:
                        RHS(t + hl, ynew, args, fo)
                        extra += 1
                    g = ynew[ie]
                    gp = fo[ie]
                    tau = abs(g / gp) if gp != 0.0 else np.inf
                    # the field on the other side of the wall at the landing point
                    sw[ie] = -sw[ie]
                    RHS(t + hl, ynew, args, fn)
                    extra += 1
                    sw[ie] = -sw[ie]
                    e2 = 0.0
                    for i in range(m):
                        sc = atol + rtol * abs(ynew[i])
                        d = (fn[i] - fo[i]) / sc
                        e2 += d * d
                    if tau * np.sqrt(e2 / m) <= 0.1 or it == max_refine:
                        landed = True
                        break
                    hn = hl - g / gp
                    if not (0.0 < hn <= hfull):
                        landed = True
                        break
                    hl = hn
                    rej += 1
                if not landed:          # the landing step failed its error test: a smaller step from t
                    rej += 1
                    fac, held = _step_factor(en, expo, False, hold, held)
                    h = hl * fac
                    continue
                t += hl
                y, ynew = ynew, y
                acc += 1
                events += 1
                sw[ie] = -sw[ie]
                other = False
                for i in range(nsw):             # walls crossed at the same time (to the landing's accuracy)
                    if i != ie and sw[i] * y[i] < 0.0:
                        sw[i] = -sw[i]
                        other = True
                if other:
                    RHS(t, y, args, K[0])
                    extra += 1
                else:
                    for i in range(m):
                        K[0, i] = fn[i]
                h = hfull * fac
                if h < hsave:
                    h = hsave
            else:
                t += h
                y, ynew = ynew, y
                if fsal:
                    K[0] = K[s - 1]
                else:
                    RHS(t, y, args, K[0])
                acc += 1
                h *= fac
                if h < hsave:
                    h = hsave
            big = 0.0
            for i in range(nchk):
                a = abs(y[i])
                if a > big:
                    big = a
            if not (big <= blowup):
                return y, ys, acc, rej, t, k, 2, events, extra
        if t < t1:
            return y, ys, acc, rej, t, k, 1, events, extra
        ys[k] = y
    return y, ys, acc, rej, t, nout, 0, events, extra


def dopri5(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
           h0: float = 1e-3, max_steps: int = 1_000_000):
    """Numba kernel of :func:`dopri5_numpy` (same step-size controller, same results); ``f`` as in
    :func:`rk_fixed` (cached on disk when registered, compiled in every process otherwise).
    Returns ``(y(t1), accepted, rejected)``; raises ``RuntimeError`` when ``max_steps`` run out
    (:func:`solve_dopri5` returns an :class:`ODEResult` instead, and is what the claims and solvers call)."""
    y, _, acc, rej, t, _ = _run_embedded(f, t0, y0, np.array([float(t1)]), args, rtol, atol, h0, max_steps, DP5)
    if t < t1:
        raise RuntimeError(f"dopri5 did not reach t1={t1} in {max_steps} steps (t={t})")
    return y, acc, rej


def solve_dopri5(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
                 h0: float = 1e-3, max_steps: int = 1_000_000, t_eval=None, backend: str = "numba",
                 method: Tableau | str = DP5, hold_after_reject: bool = False) -> ODEResult:
    """Adaptive embedded Runge-Kutta (Dormand-Prince 5(4) unless ``method`` names another embedded tableau; one with
    two embedded estimates, :data:`DOP853`, runs in its own loop, see :func:`solve_dop853`)
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
    if backend == "numba":
        y, ys, acc, rej, t, nreached = _run_embedded(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab,
                                                     hold_after_reject)
        ys = ys[:nreached]
    elif backend == "numpy":
        y, ys, acc, rej, t = _dopri5_numpy_core(f, t0, y0, touts, args, rtol, atol, h0, max_steps, tab,
                                                hold_after_reject)
    else:
        raise ValueError(f"unknown backend {backend!r} (numba or numpy)")
    # every attempt evaluates stages 1..s-1; without FSAL an accepted step evaluates the next first stage too
    nfev = 1 + (tab.stages - 1) * (acc + rej) + (0 if tab.fsal else acc)
    ok = bool(t >= t1)
    msg = ("reached t1" if ok else f"{tab.name} did not reach t1={t1} in {max_steps} steps (stopped at t={t})")
    return ODEResult(y=y, t=float(t), accepted=int(acc), rejected=int(rej), nfev=int(nfev), success=ok,
                     message=msg, ys=ys if t_eval is not None else None,
                     t_eval=touts[:len(ys)] if t_eval is not None else None)


def solve_dop853(f, t0: float, y0, t1: float, args=(), rtol: float = 1e-10, atol: float = 1e-12,
                 h0: float = 1e-3, max_steps: int = 1_000_000, t_eval=None, backend: str = "numba",
                 hold_after_reject: bool = True) -> ODEResult:
    """Adaptive Dormand-Prince 8(5,3) (:data:`DOP853`, Hairer's DOP853) from ``t0`` to ``t1``, as an
    :class:`ODEResult`: :func:`solve_dopri5` with that tableau (same arguments, same stepping onto the ``t_eval``
    times, same step-size controller :func:`_step_factor`, exponent ``-1/8``).  The error norm is Hairer's
    combination of the 5th- and 3rd-order estimates (:func:`_combine853`); 12 stages, not FSAL: 11 evaluations per
    attempted step plus one per accepted step (``nfev``).  ``hold_after_reject`` is on by default, as in Hairer's
    code and SciPy's DOP853 (no step growth right after a rejection).  Error model: local error per step below
    ``atol + rtol |y|`` in the RMS norm, global error that times a stability factor; order 8, so at tight
    tolerances it takes far fewer steps than the order-5 pair."""
    return solve_dopri5(f, t0, y0, t1, args, rtol=rtol, atol=atol, h0=h0, max_steps=max_steps, t_eval=t_eval,
                        backend=backend, method=DOP853, hold_after_reject=hold_after_reject)
def solve_switching(f, t0: float, y0, t1: float, args, sw, rtol: float = 1e-10, atol: float = 1e-12,
                    h0: float = 1e-3, max_steps: int = 1_000_000, t_eval=None, method: Tableau | str = DP5,
                    hold_after_reject: bool = True, blowup: float = np.inf, nchk: int | None = None,
                    max_refine: int = 3) -> ODEResult:
    """Embedded Runge-Kutta (Dormand-Prince 5(4) unless ``method`` names another embedded tableau, e.g. ``"dop853"``)
    for a field ``f(t, y, args, out)`` (in place, ``register(inplace=True)``) that is smooth except on the walls
    ``y_i = 0``, ``i < len(sw)``, with event location at the walls (:func:`_switch_loop`): ``sw`` is a float64 array
    that ``f`` finds in its ``args`` (the same object) and reads the side of each wall from (``+1``: ``y_i > 0``);
    the kernel sets it from ``y0`` and flips an entry when the solution reaches that wall, so no step straddles a
    kink and the error estimate controls the smooth field only.  ``t_eval`` as in :func:`solve_dopri5` (the
    integrator steps onto the output times).  ``blowup``: stop (``success`` False, ``blew_up`` True) when
    ``max |y_i|, i < nchk`` (all components by default) exceeds it, or when the error norm is not finite.
    ``nfev`` counts every evaluation, the ones at the walls included.  Error model: that of the embedded pair on
    each smooth piece, plus at each wall the cost of switching at a time off by ``|y_i / y_i'|``, kept below a
    tenth of the local tolerance."""
    tab = tableau(method) if isinstance(method, str) else method
    if not isinstance(tab, Tableau) or tab.e is None:
        raise ValueError(f"solve_switching needs an embedded tableau (with b_hat), got {method!r}")
    if not is_inplace(f):
        raise ValueError("solve_switching needs an in-place right-hand side f(t, y, args, out) "
                         "(solvers.specialise.register(inplace=True))")
    sw = np.asarray(sw)
    y0 = np.ascontiguousarray(y0, dtype=np.float64)
    if sw.dtype != np.float64 or sw.ndim != 1 or sw.shape[0] > y0.shape[0]:
        raise ValueError("sw must be a 1-d float64 array, no longer than y0, shared with the right-hand side's args")
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
    nchk = y0.shape[0] if nchk is None else int(nchk)
    e2 = tab.e2 if tab.e2 is not None else _NO_E2
    y, ys, acc, rej, t, nreached, status, events, extra = kernel(_switch_loop, f)(
        t0, y0, touts, args, float(rtol), float(atol), float(h0), int(max_steps), tab.c, tab.A, tab.b, tab.e, e2,
        tab.error_exponent, tab.fsal, bool(hold_after_reject), sw, float(blowup), nchk, int(max_refine))
    ys = ys[:nreached]
    nfev = 1 + (tab.stages - 1) * (acc + rej) + (0 if tab.fsal else acc) + extra
    ok = status == 0
    if ok:
        msg = "reached t1"
    elif status == 1:
        msg = f"{tab.name} did not reach t1={t1} in {max_steps} steps (stopped at t={t})"
    else:
        msg = f"the solution blew up (max |y_i| > {blowup:g} or not finite) at t={t}"
    return ODEResult(y=y, t=float(t), accepted=int(acc), rejected=int(rej), nfev=int(nfev), success=ok,
                     message=msg, ys=ys if t_eval is not None else None,
                     t_eval=touts[:len(ys)] if t_eval is not None else None, events=int(events),
                     blew_up=status == 2)


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
