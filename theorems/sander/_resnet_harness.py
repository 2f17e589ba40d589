"""The ResNet harnesses shared by the claim modules of Sander's thesis, chapters 1-3 (Part I; seed
004_1c55d58107c357f8.txt, l.705-2804; catalogue ``research/sander_part1.md``): linear-ResNet gradient flows, adjoint weight draws, depth ladders
and slope fits.  No claims are declared here; only the ch1_*, ch2_*, ch3_* modules of this package import it (it was
``_part1``, a name from the thesis's part, until session 9).

It holds, in the order of the thesis: the log-log slope fit with its standard error (``_fit_slope``,
used by ``ch2_3_1a_distance_to_ode``, ``ch2_3_1b_nonsmooth_weights`` and ``ch2_4_adjoint_method``); harness H2
of the linear ResNets of Sec 2.3.2 and App 2.A.2-2.A.5 (``prods``, ``loss``, ``grad``, ``opn``, ``_spd``,
``_psi_init``, ``_flow``, ``_thr_corrected``, ``_h2_instance``; used by the three ``ch2_3_2*`` modules); the
weight draws of the adjoint harness of Sec 2.4 (``FAMILIES``, ``_draw``; used by ``ch2_4_adjoint_method`` and
``ch2_appA8_heun_reversal_gradient``); the chapter-3 training tools (``SLOPE_TOL``, ``ACTS``, ``_ladder``; used by
``ch3_3_definitions``, ``ch3_4_large_depth_limit`` and ``ch3_appA0_backprop_lipschitz``); and the local
log-log slopes ``_slopes`` (chapter 3's rates, and Prop 1.1's in ``ch1_2_resnets_discretize_odes``).  The
conventions these helpers fix are written here once; the claim modules refer to them.

Linear ResNets (Sec 2.3.2, App 2.A.2-2.A.5; catalogue sander_part1 §2.2 (L1-L12), §3.1 D4-D7, §3.2 R2, §4 E1,
E2, E6, E18).  Notation decisions (catalogue §6):

* ``f(x, theta) = theta x``; layers ``theta_1..theta_N`` stored as ``th[0..N-1]``;
  ``Pi = (I + th_N/N)...(I + th_1/N)``, ``Pi_{:n}`` the layers after ``n``, ``Pi_{n:}`` the layers before ``n``.
* Loss (2.5) ``L = ||Pi - B||_Sigma^2 = Tr((Pi - B) Sigma (Pi - B)^T)``; ``m, M`` the extreme eigenvalues of Sigma.
* Gradient convention (E2): the TRUE gradient ``nabla_n = (2/N) Pi_{:n}^T (Pi - B) Sigma Pi_{n:}^T``.  The main text
  (l.821) prints it without transposes and without the 2, the appendix (l.992) without the 2.  Training is the
  rescaled flow ``theta_n' = -N nabla_n`` (L3): with the true gradient time runs twice as fast as with l.992.
* Norms: operator norm for weights and their differences (``||theta|| <= 1/4, 1/2``, ``||theta_{n+1}-theta_n||``),
  Frobenius for gradients.
* ``psi_N(s, t) = theta_{max(1, ceil(Ns))}(t)`` (l.844 writes ``theta_{floor(Ns)}``, which uses a non-existent
  ``theta_0``); ``theta_n(0) = psi_init(n/N)``.
* Assumption 2.3 (E1) is used in the corrected, scale-consistent form ``sqrt(l(0)) < m / (4 e^{3/2} sqrt(M))``
  (true gradient); the printed ``m / (4 sqrt2 M e^3)`` is the 'stated' variant.

Adjoint harness (Sec 2.4-2.5, App 2.A.6-2.A.9; catalogue sander_part1 §2.3 (A1-A8), §2.4 (X2.1-X2.8), §3.2
R3-R5, §4 E3, E4, E5, E17; ``solvers.resnet_ode``): ``f(x, theta) = tanh(W x + b)`` with ``theta = (W, b)``,
``d = 4``, one sample, loss ``1/2 |x_N - y|^2``; gradients are in all of ``(W_n, b_n)``.  Notation decisions
(catalogue §6):

* "error in gradients" = ``max_n (|dW_n - dW~_n|_F^2 + |db_n - db~_n|^2)^{1/2}`` (absolute); the relative error
  (divided by ``max_n`` of the exact gradient's norm) is reported too (Fig 2.3(c) plots it).
* ``C_f = sup |f| = sqrt(d)`` for tanh (sharp), ``L_f = max_n |W_n|_2`` (upper bound of ``|d_x f|``).
* HeunNet: ``N + 1`` parameter sets ``theta_0..theta_N`` (E17: l.882 prints ``theta_1..theta_N``).
* ``Delta_theta^N = max_n |theta_{n+1} - theta_n|^2`` (squared, as printed); Prop 2.11's constant is corrected
  to ``C'_f = L'_theta L_theta / 4`` (E3).
* Weight families: ``smooth`` (``W_n = W0 + sin(2 pi n/N) W1``, ``b_n = b0 + (n/N) b1``) and ``iid`` (bounded
  i.i.d. perturbations, so Assumption 2.8 holds with N-independent constants; see ``solvers.resnet_ode``).
  The smooth profile is the same function for every ``N`` (drawn from ``seed`` only).

Chapter 3 (catalogue sander_part1 §1.2 and the notation decisions): depth ``L``, layers ``k = 1..L``;
``|Z| = |V|_F + |W|_F`` for the bounds of Prop 3.3/3.8 and Def 3.5; the consecutive gap reported by the
checks is ``max_k |Z_{k+1} - Z_k|_F`` with ``|(V, W)|_F^2 = |V|_F^2 + |W|_F^2`` (Fig 3.1), the sum-norm
gap is within a factor sqrt 2 of it and is also returned.  Time is gradient-flow time: ``steps`` GD
iterations at learning rate ``L eta`` are GF time ``steps * eta`` (l.1784's "T = 500" is 500 iterations,
GF time 5).  The model, its corrected backprop and the GD loop are :mod:`solvers.resnet_train`.

Rate error model (used by every "O(1/L)" check of chapter 3): a quantity ``e(L) = c/L + O(1/L^2)`` has local
log-log slope ``-1 + O(1/L)`` between ``L`` and ``2L``; with ``L >= 16`` the pre-asymptotic term moves the
slope by less than 0.15 (``SLOPE_TOL``), which is the tolerance.  A quantity that does not converge has slope
about 0.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

from solvers import resnet_ode as ro
from solvers import resnet_train as rt
from theorems.claim import ParamError


def _fit_slope(Ns, errs):
    """Least-squares slope of log(err) on log(N) and its standard error."""
    x, y = np.log(np.asarray(Ns, float)), np.log(np.asarray(errs, float))
    A = np.vstack([x, np.ones_like(x)]).T
    coef, res, *_ = np.linalg.lstsq(A, y, rcond=None)
    r = y - A @ coef
    dof = max(len(x) - 2, 1)
    cov = (r @ r / dof) * np.linalg.inv(A.T @ A)
    return float(coef[0]), float(np.sqrt(cov[0, 0]))


FAMILIES = ("smooth", "iid")


# ---------------------------------------------------------------------------
# shared measurement
def _draw(family, N, d, seed, heun):
    gen = ro.smooth_weights if family == "smooth" else ro.iid_weights
    W, b = gen(N, d, np.random.default_rng(seed), heun=True)     # N + 1 sets; Euler uses the first N
    r = np.random.default_rng([seed, 7])
    x0, y = r.standard_normal((1, d)), r.standard_normal((1, d))
    return W, b, x0, y


E = math.e


# ---------------------------------------------------------------------------
# harness H2
def prods(th):
    """Pi, [Pi_{n:}] and [Pi_{:n}] for n = 1..N (lists indexed n-1)."""
    N, d, _ = th.shape
    I = np.eye(d)
    A = I + th / N
    before = [I]
    for n in range(N - 1):
        before.append(A[n] @ before[-1])           # Pi_{n+1:} = (I + th_n/N) Pi_{n:}
    after = [I] * N
    acc = I
    for n in range(N - 1, -1, -1):
        after[n] = acc                             # Pi_{:n} = (I + th_N/N)...(I + th_{n+1}/N)
        acc = acc @ A[n]
    return acc, before, after


def loss(th, Sig, B):
    Pi = prods(th)[0]
    G = Pi - B
    return float(np.trace(G @ Sig @ G.T))


def grad(th, Sig, B, convention="true"):
    """nabla_n for every n: 'true' (2/N) S^T G Sig P^T, 'appendix' (l.992) (1/N) S^T G Sig P^T, 'main' (l.821)
    (1/N) S G Sig P, with S = Pi_{:n}, P = Pi_{n:}, G = Pi - B."""
    N = th.shape[0]
    Pi, before, after = prods(th)
    GS = (Pi - B) @ Sig
    if convention == "main":
        return np.array([after[n] @ GS @ before[n] for n in range(N)]) / N
    c = 2.0 if convention == "true" else 1.0
    return c / N * np.array([after[n].T @ GS @ before[n].T for n in range(N)])


def opn(A):
    return float(np.linalg.norm(A, 2))


def _spd(d, m, M, rng):
    """Random Sigma with spectrum exactly {m, ..., M} (evenly spaced) in a random orthonormal basis."""
    Q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    ev = np.linspace(m, M, d) if d > 1 else np.array([M])
    return (Q * ev) @ Q.T, ev


def _psi_init(d, rng, radius=0.25):
    """A smooth psi_init : [0, 1] -> R^{dxd} with max_s ||psi_init(s)||_op = radius (on the grid used)."""
    A0, A1, A2 = rng.standard_normal((3, d, d))

    def raw(s):
        return A0 + np.cos(np.pi * s) * A1 + s * s * A2
    sg = np.linspace(0, 1, 513)
    c = radius / max(opn(raw(s)) for s in sg)
    return lambda s: c * raw(s)


def _flow(th0, Sig, B, T, rtol=1e-10, t_eval=None):
    """theta_n' = -N nabla_n (true gradient), DOP853; returns times and states (k, N, d, d)."""
    N, d, _ = th0.shape

    def rhs(t, y):
        return (-N * grad(y.reshape(N, d, d), Sig, B)).ravel()
    sol = solve_ivp(rhs, (0.0, T), th0.ravel(), method="DOP853", rtol=rtol, atol=rtol * 1e-2, t_eval=t_eval)
    if not sol.success:
        return None, None
    return sol.t, sol.y.T.reshape(-1, N, d, d)


def _thr_corrected(m, M):
    """sqrt(l(0)) bound under which the proof goes through with the true gradient: m / (4 e^{3/2} sqrt(M))."""
    return m / (4 * E**1.5 * math.sqrt(M))


SLOPE_TOL = 0.15


ACTS = list(rt.ACTIVATIONS)


def _slopes(Ls, es):
    """Local log-log slopes of ``es`` against ``Ls`` (consecutive pairs)."""
    Ls, es = np.asarray(Ls, float), np.asarray(es, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.diff(np.log(es)) / np.diff(np.log(Ls))


def _ladder(p):
    if p.L_max < 2 * p.L_min:
        raise ParamError(f"parameters L_min={p.L_min}, L_max={p.L_max}: need L_max >= 2 L_min (at least two depths)")
    Ls = []
    L = p.L_min
    while L <= p.L_max:
        Ls.append(L)
        L *= 2
    return Ls


def _h2_instance(p):
    rng = np.random.default_rng(p.seed)
    psi = _psi_init(p.d, rng)
    Q = np.linalg.qr(rng.standard_normal((p.d, p.d)))[0]
    Sig = (Q * np.linspace(0.6, 1.0, p.d)) @ Q.T
    B = np.eye(p.d) + 0.5 * rng.standard_normal((p.d, p.d))
    return psi, Sig, B
