"""Private helpers shared by the chapter 4 (Momentum ResNets) claim modules of theorems/sander/:
the RevNet spectral numerics of §4.3.3 (``ch4_3_3a_revnet_fixed_points``, ``ch4_3_3b_revnet_continuous``),
the ODE solve of the flow claims (``ch4_4_2_second_order``, ``ch4_appB1_B3_universality``,
``ch4_appB5_B7_first_order``) and the output-grid guard of ``ch4_4_2_second_order`` and
``ch4_appB1_B3_universality``.  The chapter's conventions are stated here once for every ``ch4_*`` module.

Conventions (catalogue sander_part23 §1, decision A6): gamma in (0, 1] is the momentum,
eps = 1/(1 - gamma).  The main-text second-order model is ``eps x'' + x' = f`` (4.6); Appendix
4.B writes ``x'' + x'/eps = f`` (Prop 4.8).  The residual function of every numeric check is the
thesis's tanh MLP ``f(x, theta_n) = W2_n^T tanh(W1_n x + b_n)`` (solvers.momentum), with widths
``d`` (state) and ``p`` (hidden), one weight set per layer, ``v_0 = 0``.

Each flow claim says which of the two second-order forms it uses.  For the RevNet claims of §4.3.3,
``J(A, B) = [[I, A], [B, I + BA]]`` is the Jacobian of ``Psi(v, x) = (v + phi(x), x + psi(v + phi(x)))``
at a fixed point, with ``A = D phi(x*)`` and ``B = D psi(v*)``.

Eigenvalue error model (used by every spectral check of §4.3.3): LAPACK's QR algorithm returns the exact
eigenvalues of ``M + E`` with ``|E|_2 <= c n eps |M|_2``; we take ``c = 4``.  Each computed eigenvalue
is then within ``min(kappa(V) |E|, (2|M|)^(1-1/n) |E|^(1/n))`` of the spectrum of ``M`` (Bauer-Fike with
the condition number of the computed unit-column eigenvector basis, and Elsner's theorem, which needs
no eigenvectors and covers defective matrices).  An eigenvalue within that distance of 1 is "equal to
1 within rounding"; a modulus within it of 1 is "modulus 1 within rounding".
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from theorems.claim import Param, ParamError, inconclusive
from theorems import matrices as M

EPS = float(np.finfo(float).eps)
MAX_D = 32


# ---------------------------------------------------------------------------
# shared numerics
def _eig_tol(M: np.ndarray, V: np.ndarray | None = None) -> float:
    """Distance bound between computed and exact eigenvalues of ``M`` (module docstring)."""
    n = M.shape[0]
    nrm = float(np.linalg.norm(M, 2)) if M.size else 0.0
    E = 4 * n * EPS * max(nrm, EPS)
    elsner = (2 * max(nrm, EPS)) ** (1 - 1 / n) * E ** (1 / n)
    if V is None:
        return elsner
    with np.errstate(all="ignore"):
        kappa = float(np.linalg.cond(V))
    bf = kappa * E if np.isfinite(kappa) else math.inf
    return min(bf, elsner)


def _J(A, B):
    d = A.shape[0]
    I = np.eye(d)
    return np.block([[I, A], [B, I + B @ A]])


def _cplx(z) -> list:
    return [[float(np.real(w)), float(np.imag(w))] for w in np.atleast_1d(z)]


def _singular(M: np.ndarray) -> tuple[bool, float]:
    """Numerically singular: sigma_min <= n eps sigma_max (rank decided in floating point)."""
    s = np.linalg.svd(M, compute_uv=False)
    return bool(s[0] == 0 or s[-1] <= M.shape[0] * EPS * s[0]), float(s[-1])


def _draw_AB(d: int, seed: int):
    """The catalogue's generator (ch4_revnet.py): Gaussian entries times scales U(0.01, 3)."""
    rng = np.random.default_rng(seed)
    sa, sb = rng.uniform(0.01, 3.0, 2)
    return sa * rng.standard_normal((d, d)), sb * rng.standard_normal((d, d))


def _AB_of(p):
    A, B = _AB_raw(p)
    with np.errstate(all="ignore"):
        if not np.all(np.isfinite(B @ A)) or not np.all(np.isfinite(A @ B)):
            raise ParamError("parameters A, B: the product BA overflows float64; rescale the matrices")
    return A, B


def _AB_raw(p):
    if p.A is None and p.B is None:
        return _draw_AB(p.d, p.seed)
    d = (p.A if p.A is not None else p.B).shape[0]
    A0, B0 = _draw_AB(d, p.seed)
    A = np.array(p.A, dtype=float) if p.A is not None else A0
    B = np.array(p.B, dtype=float) if p.B is not None else B0
    return A, B


def _validate_AB(p):
    for name in ("A", "B"):
        M = p.get(name)
        if M is None:
            continue
        if M.shape[0] != M.shape[1]:
            raise ParamError(f"parameter {name} must be a square matrix (a Jacobian in R^(d x d)), got shape {M.shape}")
        if M.shape[0] > MAX_D:
            raise ParamError(f"parameter {name} has size {M.shape[0]} > {MAX_D}")
    if p.get("A") is not None and p.get("B") is not None and p.A.shape != p.B.shape:
        raise ParamError(f"parameters A and B must have the same shape d x d, got {p.A.shape} and {p.B.shape}")


def _spectral_statement(A, B):
    """Sp J(A, B), its error model, and the residual of 'exists lambda, |lambda| >= 1, lambda != 1'."""
    J = _J(A, B)
    lam, V = np.linalg.eig(J)
    tol = _eig_tol(J, V)
    distinct = np.abs(lam - 1) > tol
    max_mod = float(np.max(np.abs(lam[distinct]))) if np.any(distinct) else 0.0
    return J, lam, tol, distinct, max_mod


MP_DPS = 60


def _spectral_statement_mp(A, B, dps=MP_DPS):
    """The same statement in mpmath at ``dps`` digits (float inputs are exact binary numbers).  Error model as in
    the module docstring with eps = 10^-dps and 1-norms (Bauer-Fike holds in any p-norm); every decision
    (|lambda - 1| > tol, |lambda| >= 1 - tol) is taken at that precision before rounding to float for reporting."""
    import mpmath as mp
    with mp.workdps(dps):
        d = A.shape[0]
        Am, Bm = mp.matrix(A.tolist()), mp.matrix(B.tolist())
        BA = Bm * Am                       # formed at dps digits, not in float64
        n = 2 * d
        J = mp.eye(n)
        for i in range(d):
            for j in range(d):
                J[i, d + j] = Am[i, j]
                J[d + i, j] = Bm[i, j]
                J[d + i, d + j] += BA[i, j]
        E, V = mp.eig(J)
        for j in range(n):
            c = mp.sqrt(sum(abs(V[i, j]) ** 2 for i in range(n)))
            for i in range(n):
                V[i, j] /= c
        eps = mp.mpf(10) ** (-dps)
        nrm = mp.mnorm(J, 1)
        Eb = 4 * n * eps * nrm
        tol = (2 * nrm) ** (1 - mp.mpf(1) / n) * Eb ** (mp.mpf(1) / n)
        try:
            tol = min(tol, mp.mnorm(V, 1) * mp.mnorm(V ** -1, 1) * Eb)
        except ZeroDivisionError:
            pass
        distinct = [abs(e - 1) > tol for e in E]
        mods = [abs(e) for e, k in zip(E, distinct) if k]
        max_mod = max(mods) if mods else mp.mpf(0)
        r_inst = max(mp.mpf(0), 1 - max_mod)
        det = mp.det(J)
        tol_det = 4 * n * n * eps * mp.mnorm(J, 1) * mp.mnorm(J ** -1, 1)
        lam = np.array([complex(e) for e in E])
        return (lam, float(tol), np.array(distinct), float(max_mod), float(r_inst),
                float(abs(det - 1)), float(tol_det), float(det))


AB_PARAMS = [
    Param.matrix("A", None, "D phi(x*) in R^(d x d); drawn from d and seed when omitted", shape=("d", "d")),
    Param.matrix("B", None, "D psi(v*) in R^(d x d); drawn from d and seed when omitted", shape=("d", "d"),
                 families=M.DEFAULT_FAMILIES + ("spd", "non_commuting"), partner="A"),
    Param.int("d", 3, 1, MAX_D, "width (ignored when A or B is given)", search=(1, 5)),
    Param.seed("seed of the drawn A, B (Gaussian entries, scales U(0.01, 3))", search=(0, 100_000)),
]


def _ivp(rhs, y0, T, rtol, atol, **kw):
    return solve_ivp(rhs, (0.0, T), y0, method="DOP853", rtol=rtol, atol=atol, **kw)


def _grid_unresolvable(T, n):
    """T so small (subnormal) that n output times in [0, T] are not distinct doubles: nothing to integrate."""
    if not np.all(np.diff(np.linspace(0.0, T, n)) > 0):
        return inconclusive(f"T={T!r} is too small for {n} distinct output times in [0, T] in double precision")
    return None
