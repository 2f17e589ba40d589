"""Helpers shared by the menon modules on the geometry of the balanced manifold M as a bundle over M_d
(sec6_2_fibres, sec8_1_tangent_and_pullback, sec8_3_riemannian_submersion).

Conventions (package docstring): ``Ws = [W_N, ..., W_1]``, ``Qs = [Q_N, ..., Q_0]``,
``W_p = Q_p Lambda Q_{p-1}^T`` (5.15)-(5.16); a tangent vector is ``V = [V_N, ..., V_1]`` and is
flattened by :func:`vec` (layer by layer, row-major).  The tangent space of M is computed in two
independent ways:

* the image of the *exact* differential of z: with ``Q_p(t) = e^{tA_p} Q_p`` and ``Lambda + t theta``,
  ``dW_p = A_p W_p + Q_p theta Q_{p-1}^T - W_p A_{p-1}`` (8.2 corrected, E9); this is the product
  rule applied to ``e^{tA_p} Q_p (Lambda + t theta) Q_{p-1}^T e^{-tA_{p-1}}`` and is checked against
  central differences in ``menon.tangent_vectors``;
* the kernel of the differential of the defining equations ``C_p = 0``,
  ``dC_p(V) = V_{p+1}^T W_{p+1} + W_{p+1}^T V_{p+1} - V_p W_p^T - W_p V_p^T`` (M is cut out
  transversally at full rank: rank dC = (N-1)d(d+1)/2).

Subspace error model (used throughout): an orthonormal basis of the range or kernel of a matrix
computed by the SVD is accurate to about ``n * eps * s_max / s_gap`` (Wedin), where ``s_gap`` is the
smallest singular value kept; rank decisions are made with the relative threshold ``RANK_TOL`` and a
claim is ``inconclusive`` when a singular value falls in the grey zone ``[GREY, RANK_TOL]``.
"""
from __future__ import annotations

import numpy as np

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import namespace
from theorems.claim import Param, ParamError

from ._common import EPS, alpha, balanced_instance, pairs, vec


RANK_TOL = 1e-8   # singular values above RANK_TOL * s_max count
GREY = 1e-12      # below GREY * s_max they are zero; in between the rank is undecided


# ---------------------------------------------------------------------------
# shared numerics (module private)
def _Q(Qs, p):
    """Q_p from ``Qs = [Q_N, ..., Q_0]``."""
    return Qs[len(Qs) - 1 - p]


def _lay(Ws, p):
    return Ws[len(Ws) - p]


def _unvec(v, d, N):
    return [v[i * d * d:(i + 1) * d * d].reshape(d, d) for i in range(N)]


def _dz(lam, Qs, theta, As, theta_term="corrected"):
    """D z(theta, A) (8.2): ``As[p]`` (p = 0..N) antisymmetric, left action ``Q_p -> e^{tA_p} Q_p``.

    ``theta_term='corrected'``: ``Q_p theta Q_{p-1}^T`` (E9); ``'printed'``: ``Q_p theta Q_p^T``."""
    N = len(Qs) - 1
    Ws = dln.balanced_point(lam, Qs)
    Th = np.diag(theta)
    out = []
    for p in range(N, 0, -1):
        Wp = _lay(Ws, p)
        Qr = _Q(Qs, p - 1) if theta_term == "corrected" else _Q(Qs, p)
        out.append(As[p] @ Wp + _Q(Qs, p) @ Th @ Qr.T - Wp @ As[p - 1])
    return out


def _dz_matrix(lam, Qs, frame="rotated", theta_idx=None):
    """Columns: ``l_i = Dz(e_i, 0)`` for i in theta_idx, then for each pair (k, l) and p = 0..N the
    vector ``a^p_kl = Dz(0, A^p)`` with ``A^p = Q_p alpha_kl Q_p^T`` (rotated, the proof's B_p = alpha)
    or ``A^p = alpha_kl`` (fixed frame, literal (8.8))."""
    d, N = len(lam), len(Qs) - 1
    theta_idx = range(d) if theta_idx is None else theta_idx
    Z = [np.zeros((d, d))] * (N + 1)
    cols = []
    for i in theta_idx:
        e = np.zeros(d)
        e[i] = 1.0
        cols.append(vec(_dz(lam, Qs, e, Z)))
    for k, l in pairs(d):
        a = alpha(d, k, l)
        for p in range(N + 1):
            As = list(Z)
            As[p] = _Q(Qs, p) @ a @ _Q(Qs, p).T if frame == "rotated" else a
            cols.append(vec(_dz(lam, Qs, np.zeros(d), As)))
    return np.array(cols).T


def _linear_matrix(f, n):
    """The matrix of a linear map R^n -> R^m given as a function of a vector."""
    return np.array([f(e) for e in np.eye(n)]).T


def _dphi_matrix(Ws):
    """phi_*(V) = sum_p A_{p+1} V_p B_{p-1} as a d_N d_0 x (sum d_p d_{p-1}) matrix."""
    N, d = len(Ws), Ws[0].shape[0]

    def f(v):
        V = _unvec(v, d, N)
        return sum(dln.partial_A(Ws, p + 1) @ _lay(V, p) @ dln.partial_B(Ws, p - 1)
                   for p in range(1, N + 1)).ravel()
    return _linear_matrix(f, N * d * d)


def _dC_matrix(Ws):
    """The differential of (C_1, ..., C_{N-1}), C_p = W_{p+1}^T W_{p+1} - W_p W_p^T."""
    N, d = len(Ws), Ws[0].shape[0]

    def f(v):
        V = _unvec(v, d, N)
        rows = []
        for p in range(1, N):
            Wa, Wb, Va, Vb = _lay(Ws, p + 1), _lay(Ws, p), _lay(V, p + 1), _lay(V, p)
            rows.append((Va.T @ Wa + Wa.T @ Va - Vb @ Wb.T - Wb @ Vb.T).ravel())
        return np.concatenate(rows) if rows else np.zeros(0)
    return _linear_matrix(f, N * d * d)


class _Sub:
    """Range (``kind='range'``) or kernel of a matrix via the SVD, with its rank decision.  With ``xp`` (an
    array-API namespace) the host matrix is moved there and the SVD, the basis and :meth:`dist` run there; the
    singular values come back to the host for the rank decision."""

    def __init__(self, M, kind="range", xp=None):
        if xp is None:
            U, s, Vt = np.linalg.svd(M)
        else:
            U, s, Vt = xp.linalg.svd(X.to_xp(xp, [M])[0] if isinstance(M, np.ndarray) else M)
            s = X.host(s)
        smax = s[0] if s.size and s[0] > 0 else 1.0
        self.s = s
        self.rank = int(np.sum(s > RANK_TOL * smax))
        self.grey = bool(np.any((s > GREY * smax) & (s <= RANK_TOL * smax)))
        self.cond = float(smax / s[self.rank - 1]) if self.rank else 1.0
        self.basis = U[:, :self.rank] if kind == "range" else Vt[self.rank:, :].T

    def dist(self, Y):
        """Column-wise distance of Y to the subspace (columns of Y assumed unit or scaled); host NumPy result."""
        if isinstance(self.basis, np.ndarray):
            Y = np.atleast_2d(np.asarray(Y).T).T
            return np.linalg.norm(Y - self.basis @ (self.basis.T @ Y), axis=0)
        xp = namespace(self.basis)
        Y = X.to_xp(xp, [Y])[0] if isinstance(Y, np.ndarray) else Y
        return X.host(xp.linalg.vector_norm(Y - self.basis @ (self.basis.T @ Y), axis=0))


def _instance(p):
    """(lam, Qs, Ws): a point of M (or M_r with ``zeros`` vanishing singular values)."""
    zeros = p["zeros"] if "zeros" in p else 0
    lam, Qs, Ws = balanced_instance(p.d, p.N, p.seed, zeros=zeros)
    if "lam" in p and p.lam is not None:
        lam = np.asarray(p.lam, dtype=float)
        Ws = dln.balanced_point(lam, Qs)
    return lam, Qs, Ws


def _validate_lam(p):
    if p.lam is not None:
        if len(p.lam) != p.d:
            raise ParamError(f"parameter lam must have d={p.d} entries, got {len(p.lam)}")
        if np.any(p.lam <= 0):
            raise ParamError("parameter lam must be positive (a point of the full-rank manifold M)")


def _lam_param():
    return Param.vector("lam", None, "diagonal Lambda = Sigma^{1/N} (d positive entries); drawn from "
                        "the seed when null (sorted decreasingly, gaps >= 0.05)", low=0.0, high=1e3)


COMMON = [
    Param.int("d", 3, 2, 5, "width d (d >= 2 so that so(d) != 0)", search=(2, 4)),
    Param.int("N", 4, 2, 6, "depth N", search=(2, 5)),
    Param.seed("seed of Lambda and of the Haar frames Q_N, ..., Q_0"),
]


def _params(*extra):
    return list(COMMON) + list(extra)


def _sub_tol(n, *conds):
    """Wedin bound for subspaces from the SVD: 10 n eps (sum of the condition numbers s_max/s_gap)."""
    return 10 * n * EPS * sum(conds)


# ===========================================================================
# reproduction of the catalogue's errata script (§4.1 errata.py, E9 and E12 blocks)
def _errata_replay():
    """Replay the random draws of the catalogue's errata.py (rng seed 2024) up to the E9 block and
    return its (lam, Qs): lam = (1.7, 1.1, 0.6), d = 3, N = 4."""
    rng = np.random.default_rng(2024)
    for _ in range(3):                       # E1: three 3x3 Gaussian layers
        rng.standard_normal((3, 3))
    for d in (2, 3):                         # E2: Q_N, Q_0 and three draws of Sigma per (d, N)
        dln.random_orthogonal(d, rng), dln.random_orthogonal(d, rng)
        for _ in range(3):
            rng.uniform(0.3, 3, d)
    rng.uniform(0.5, 2, 3)                   # E3: lam and five frames
    for _ in range(5):
        dln.random_orthogonal(3, rng)
    for _ in range(4):                       # E4 (W, Z, E') and E6 (W1)
        rng.standard_normal((3, 3))
    Qs = [dln.random_orthogonal(3, rng) for _ in range(5)]
    return np.array([1.7, 1.1, 0.6]), Qs
