"""Section 6.2, 6.4 and 8: the geometry of the balanced manifold M as a bundle over M_d.

Claims: the fibres of phi are O_d^{N-1} orbits (O1), the tangent vectors D z (8.2) (erratum E9),
the pullback metric z^# iota (Lemma 2), the orthonormal basis of T_W M (Thm 14, erratum E12),
the Riemannian submersion phi: (M_r, iota) -> (M_r, g^N) (Thm 13) and its proof sketch (C8).

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
import sympy as sp
from scipy.linalg import expm

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import namespace, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

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


def _min_gap(lam):
    lam = np.sort(np.asarray(lam))[::-1]
    return float(np.min(-np.diff(lam))) if len(lam) > 1 else np.inf


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


def _rotations(d, count, rng):
    return [dln.random_orthogonal(d, rng) for _ in range(count)]


# ===========================================================================
# O1: the fibres of phi in M are O_d^{N-1} orbits
fibres = Claim(
    id="menon.fibres_are_orbits",
    title="The fibres O_W = phi^{-1}(W) ∩ M are O_d^{N-1} orbits",
    label="(6.1), O1",
    section="6.2",
    equation="(6.1)",
    lines=(436, 440),
    statement=r"\mathcal O_W=\phi^{-1}(W)\cap\mathcal M\text{ is an orbit of }O_d^{N-1}:\ "
              r"W_p\mapsto R_pW_pR_{p-1}^T,\ R_0=R_N=I;\quad "
              r"\dim(\ker\phi_*\cap T_{\mathbf W}\mathcal M)=(N-1)\tfrac{d(d-1)}2",
    status="holds",
    params=_params(),
    notes="T_W M is computed as the kernel of the differential of the defining equations C_p = 0 "
          "(independent of the parametrisation z). The orbit's tangent space is spanned by the generators "
          "A_p W_p - W_p A_{p-1} (A_p in so(d), 1 <= p <= N-1, A_0 = A_N = 0). Checked: dim T_W M = "
          "d^2+(N-1)d(d-1)/2, dim(ker phi_* ∩ T_W M) = (N-1)d(d-1)/2 and equals the orbit tangent space; "
          "a random group element preserves phi and M. The ambient kernel of phi_* is (N-1)d^2-dimensional "
          "(E19), so the count (N-1)d(d-1)/2 only holds inside T_W M.",
    catalogue="menon §2.5 O1; §4 E19",
    covers=("K4",),
)


def _fibre_data(p, R_N=False):
    """Array-API path (p.backend): the differentials, generators and rotations are assembled on the host; every
    SVD, subspace product, group action and product of layers runs on the backend."""
    lam, Qs, Ws = _instance(p)
    d, N = p.d, p.N
    n = N * d * d
    xp = xp_of(p)
    T = _Sub(_dC_matrix(Ws), "kernel", xp=xp)
    Jphi = X.to_xp(xp, [_dphi_matrix(Ws)])[0]
    PT = _Sub(Jphi @ T.basis, "kernel", xp=xp)          # kernel of phi_* restricted to T, in T-coordinates
    K = T.basis @ PT.basis
    gens = []
    for q in range(1, N):
        for k, l in pairs(d):
            As = [np.zeros((d, d))] * (N + 1)
            As[q] = alpha(d, k, l)
            gens.append(vec([As[s] @ _lay(Ws, s) - _lay(Ws, s) @ As[s - 1] for s in range(N, 0, -1)]))
    O = _Sub(np.array(gens).T, "range", xp=xp)
    rng = np.random.default_rng(p.seed + 1)
    R = [np.eye(d)] + _rotations(d, N - 1, rng) + [dln.random_orthogonal(d, rng) if R_N else np.eye(d)]
    R, Ws = X.to_xp(xp, R), X.to_xp(xp, Ws)
    Wn = [R[s] @ _lay(Ws, s) @ R[s - 1].T for s in range(N, 0, -1)]
    W, Wnew = dln.prod(Ws), dln.prod(Wn)
    norm2 = [X.norm2(w) for w in Ws]
    phi_err = X.fro(Wnew - W) / X.fro(W)
    # error model: N products of d x d matrices (and 2 rotations per layer), each ~ d eps |A||B|
    phi_tol = 8 * N * d * EPS * float(np.prod(norm2)) / X.norm2(W)
    C_err = max((float(xp.max(xp.abs(c))) for c in dln.conserved(Wn)), default=0.0)
    C_tol = 20 * d * EPS * max(norm2) ** 2
    grey = T.grey or PT.grey or O.grey
    return dict(T=T, PT=PT, K=K, O=O, n=n, phi_err=phi_err, phi_tol=phi_tol, C_err=C_err, C_tol=C_tol,
                grey=grey, Jphi=Jphi, lam=lam)


@fibres.numeric(backends=("numpy", "cupy"))
def fibres_numeric(p):
    """dim T_W M, dim(ker phi_* ∩ T_W M) = (N-1)d(d-1)/2 = orbit dimension, orbit tangent = kernel,
    and the group action preserves phi and M."""
    f = _fibre_data(p)
    if f["grey"]:
        return inconclusive("a singular value in the rank grey zone: dimensions undecided", lam=f["lam"].tolist())
    d, N = p.d, p.N
    dimM, dimK = d * d + (N - 1) * d * (d - 1) // 2, (N - 1) * d * (d - 1) // 2
    T, PT, O = f["T"], f["PT"], f["O"]
    got_K = PT.basis.shape[1]
    dist = float(np.max(_Sub(f["K"], "range", xp=xp_of(p)).dist(O.basis))) if O.rank and got_K else 0.0
    return Outcome.from_parts({
        "dim_T": (abs(T.basis.shape[1] - dimM), 0.5),
        "dim_ker": (abs(got_K - dimK), 0.5),
        "dim_orbit": (abs(O.rank - dimK), 0.5),
        "orbit_in_kernel": (dist, _sub_tol(f["n"], T.cond, PT.cond, O.cond)),
        "phi_invariant": (f["phi_err"], f["phi_tol"]),
        "stays_on_M": (f["C_err"], f["C_tol"]),
    }, values={"dim_T": T.basis.shape[1], "dim_T_expected": dimM, "dim_ker_phi_in_T": got_K,
        "dim_ker_expected": dimK, "dim_orbit": O.rank, "orbit_to_kernel_distance": dist,
        "phi_rel_change": f["phi_err"], "max_abs_C_after_action": f["C_err"]},
        message="fibre = O_d^{N-1} orbit (dimensions, tangent spaces, invariance)")


fibres.property(over=("d", "N", "seed"), max_examples=12)


@fibres.falsifier("q_n_not_identity", search=("seed",))
def fibres_qn(p):
    """Act also on the last index (R_N Haar, not I): M is preserved but phi(W) -> R_N phi(W) changes."""
    f = _fibre_data(p, R_N=True)
    return Outcome(residual=f["phi_err"], tolerance=f["phi_tol"],
                   values={"phi_rel_change": f["phi_err"], "max_abs_C_after_action": f["C_err"],
                           "C_tolerance": f["C_tol"]},
                   message="relative change of phi under the action with R_N != I (M is preserved: "
                           f"max|C_p| = {f['C_err']:.1e})")


@fibres.falsifier("ambient_kernel")
def fibres_ambient(p):
    """Count in the ambient space: ker phi_* in M_d^N has dimension (N-1)d^2 (E19), not (N-1)d(d-1)/2."""
    f = _fibre_data(p)
    d, N = p.d, p.N
    amb = _Sub(f["Jphi"], "kernel", xp=xp_of(p)).basis.shape[1]
    return Outcome(residual=abs(amb - (N - 1) * d * (d - 1) // 2), tolerance=0.5,
                   values={"ambient_kernel_dim": amb, "claimed": (N - 1) * d * (d - 1) // 2,
                           "(N-1)d^2": (N - 1) * d * d},
                   message="dimension mismatch of the ambient kernel of phi_* (integer, tolerance 1/2)")


def _cayley(ts, d):
    """Rational orthogonal matrix (I - S)(I + S)^{-1}, S antisymmetric with entries ts."""
    S = sp.zeros(d, d)
    it = iter(ts)
    for i in range(d):
        for j in range(i + 1, d):
            t = next(it)
            S[i, j], S[j, i] = t, -t
    I = sp.eye(d)
    return (I - S) * (I + S).inv()


def _fibre_failures(variant="stated"):
    """Entries that do not cancel in phi(R W) - phi(W), C_p(R W) - R_p C_p R_p^T and R^T R - I for the action
    W_p -> R_p W_p R_{p-1}^T with R_0 = R_N = I ('stated'), or its nearest wrong variants: R_N a rotation too
    ('r_n_not_identity') or the transpose dropped ('no_transpose': W_p -> R_p W_p R_{p-1})."""
    bad = 0
    for d, N in FIBRE_INSTANCES:
        Ws = [sp.Matrix(d, d, lambda i, j, q=q: sp.Symbol(f"w{q}_{i}{j}")) for q in range(N, 0, -1)]
        m = d * (d - 1) // 2
        last = _cayley(sp.symbols(f"t{N}_0:{m}"), d) if variant == "r_n_not_identity" else sp.eye(d)
        R = [sp.eye(d)] + [_cayley(sp.symbols(f"t{q}_0:{m}"), d) for q in range(1, N)] + [last]
        right = (lambda M: M) if variant == "no_transpose" else (lambda M: M.T)
        Wn = [R[q] * dln.layer(Ws, q) * right(R[q - 1]) for q in range(N, 0, -1)]
        diff = dln.prod(Wn) - dln.prod(Ws)
        bad += sum(1 for e in diff if sp.cancel(sp.together(e)) != 0)
        for q, (Cn, C) in enumerate(zip(dln.conserved(Wn), dln.conserved(Ws)), start=1):
            bad += sum(1 for e in (Cn - R[q] * C * R[q].T) if sp.cancel(sp.together(e)) != 0)
        bad += sum(1 for R_ in R for e in (R_.T * R_ - sp.eye(d)) if sp.cancel(sp.together(e)) != 0)
    return bad


FIBRE_INSTANCES = [(2, 2), (2, 3)]


@fibres.symbolic(timeout=60)
def fibres_symbolic(p):
    """For general layers W_p (symbols) and Cayley rotations R_p, phi(R_p W_p R_{p-1}^T) = phi(W) and
    C_p -> R_p C_p R_p^T, so the O_d^{N-1} action preserves every fibre of phi and every M_G ⊇ M."""
    bad = _fibre_failures()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.cancel of every entry", "instances": [list(i) for i in FIBRE_INSTANCES],
        "proved": "phi(R W) = phi(W) and C_p(R W) = R_p C_p(W) R_p^T for the Cayley-parametrised "
                  "O_d^{N-1} action (R_0 = R_N = I)"}, message="number of entries that did not cancel to zero")


@fibres.mutant({"r_n_not_identity": "the action with R_N free as well (O_d^N, not O_d^{N-1}): phi changes",
                "no_transpose": "W_p -> R_p W_p R_{p-1} (transpose dropped): phi changes"}, timeout=60)
def fibres_mutant(p, variant):
    """The group action misstated, through the same procedure: entries must fail to cancel."""
    bad = _fibre_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} entries did not cancel for the misstated action")


# ===========================================================================
# L8a / E9: the tangent vectors D z (8.1)-(8.2)
tangent = Claim(
    id="menon.tangent_vectors",
    title="Tangent vectors of M: the differential of the parametrisation z",
    label="(8.1)-(8.2), L8a",
    section="8.1",
    equation="(8.1)-(8.2)",
    lines=(614, 626),
    statement=r"D\mathfrak z(\mathbf W)(\theta,\mathbf A)_p=A_pW_p+Q_p\theta Q_p^T-W_pA_{p-1},\quad 1\le p\le N",
    status="erratum",
    corrected=r"D\mathfrak z(\mathbf W)(\theta,\mathbf A)_p=A_pW_p+Q_p\theta Q_{p-1}^T-W_pA_{p-1}"
              r"\quad(Q_p(t)=e^{tA_p}Q_p,\ \Lambda(t)=\Lambda+t\theta)",
    params=_params(Param.float("h", 1e-5, 0.0, 0.1, "step of the central difference", low_open=True),
                   _lam_param()),
    validate=_validate_lam,
    notes="Erratum E9: the theta-term of (8.2) is Q_p theta Q_{p-1}^T (as used in (8.11), (8.12), (8.20)). "
          "Checked against central differences of z along the curve (8.1) in a random direction "
          "(theta, A_0..A_N). Also l.612: the parameter space of z is R_+^d x O_d^{N+1} (not O_d^{N-1}); "
          "the numeric check reports rank Dz = d + (N+1)d(d-1)/2 = dim M (= dim ker dC).",
    catalogue="menon §2.5 L8a; §4 E9, E18 (l.612)",
)


def _curve(lam, Qs, theta, As, t):
    Qt = [expm(t * As[q]) @ _Q(Qs, q) for q in range(len(Qs) - 1, -1, -1)]
    return dln.balanced_point(lam + t * theta, Qt)


def _tangent_outcome(p, theta_term):
    lam, Qs, _ = _instance(p)
    d, N, h = p.d, p.N, p.h
    rng = np.random.default_rng(p.seed + 7919)
    theta = rng.standard_normal(d)
    As = []
    for _ in range(N + 1):
        G = rng.standard_normal((d, d))
        As.append((G - G.T) / 2)
    fd = [(a - b) / (2 * h) for a, b in zip(_curve(lam, Qs, theta, As, h), _curve(lam, Qs, theta, As, -h))]
    ex = _dz(lam, Qs, theta, As, theta_term)
    err = max(float(np.max(np.abs(a - b))) for a, b in zip(fd, ex))
    # error model for a central difference of W_p(t) = e^{tA_p} Q_p (Lambda + t theta) Q_{p-1}^T e^{-tA_{p-1}}:
    # truncation h^2/6 max|W_p'''|, |W_p'''| <= a^3 (|Lambda| + h|theta|) + 3 a^2 |theta|, a = |A_p|_2 + |A_{p-1}|_2;
    # rounding 2 * (4 d eps |W_p(+-h)|) / (2h). Safety factor 2.
    nA = [np.linalg.norm(A, 2) for A in As]
    Lmax = float(np.max(np.abs(lam)) + h * np.max(np.abs(theta)))
    M3 = max((nA[q] + nA[q - 1]) ** 3 * Lmax + 3 * (nA[q] + nA[q - 1]) ** 2 * float(np.max(np.abs(theta)))
             for q in range(1, N + 1))
    tol = 2 * (h * h / 6 * M3 + 4 * d * EPS * Lmax / h)
    J = _Sub(_dz_matrix(lam, Qs), "range")
    Ws = dln.balanced_point(lam, Qs)
    T = _Sub(_dC_matrix(Ws), "kernel")
    return Outcome(residual=err, tolerance=tol, values={
        "max_abs_error": err, "h": h, "truncation_bound": h * h / 6 * M3, "rounding_bound": 4 * d * EPS * Lmax / h,
        "theta_term": theta_term, "rank_Dz": J.rank, "params_dim_R^d_x_O_d^(N+1)": d + (N + 1) * d * (d - 1) // 2,
        "params_dim_R^d_x_O_d^(N-1)": d + (N - 1) * d * (d - 1) // 2, "dim_ker_dC": T.basis.shape[1]},
        message=f"max |central difference - Dz| with the {theta_term} theta-term")


@tangent.numeric
def tangent_numeric(p):
    """Central differences of z along (Lambda + t theta, e^{tA_p} Q_p) against (8.2) with Q_p theta Q_{p-1}^T."""
    return _tangent_outcome(p, "corrected")


tangent.property(over=("d", "N", "seed"), max_examples=12)


@tangent.falsifier("stated", search=("seed",))
def tangent_stated(p):
    """(8.2) as printed, theta-term Q_p theta Q_p^T: off by Q_p theta (Q_{p-1} - Q_p)^T."""
    return _tangent_outcome(p, "printed")


#: the differential (8.2) of z as corrected (E9), and the nearest misprints (mutants): the printed theta-term
#: Q_p theta Q_p^T, and the sign of the right action flipped
TANGENT_FORMS = {
    "corrected": lambda A, Q, L, Th, q: A[q] * Q[q] * L * Q[q - 1].T + Q[q] * Th * Q[q - 1].T
    - Q[q] * L * Q[q - 1].T * A[q - 1],
    "printed_theta_term": lambda A, Q, L, Th, q: A[q] * Q[q] * L * Q[q - 1].T + Q[q] * Th * Q[q].T
    - Q[q] * L * Q[q - 1].T * A[q - 1],
    "right_action_sign": lambda A, Q, L, Th, q: A[q] * Q[q] * L * Q[q - 1].T + Q[q] * Th * Q[q - 1].T
    + Q[q] * L * Q[q - 1].T * A[q - 1],
}
TANGENT_INSTANCES = [(2, 2), (3, 2)]


def _tangent_failures(form):
    """Entries of d/dt|_0 e^{tA_p}Q_p(Lambda+t theta)Q_{p-1}^T e^{-tA_{p-1}} minus the form that do not expand
    to zero (symbolic Q_p, Lambda, theta, antisymmetric A_p)."""
    bad = 0
    t = sp.Symbol("t")
    for d, N in TANGENT_INSTANCES:
        Q = [sp.Matrix(d, d, lambda i, j, q=q: sp.Symbol(f"q{q}_{i}{j}")) for q in range(N + 1)]
        A = []
        for q in range(N + 1):
            M = sp.zeros(d, d)
            for i in range(d):
                for j in range(i + 1, d):
                    M[i, j] = sp.Symbol(f"a{q}_{i}{j}")
                    M[j, i] = -M[i, j]
            A.append(M)
        L = sp.diag(*sp.symbols(f"l0:{d}"))
        Th = sp.diag(*sp.symbols(f"th0:{d}"))
        I = sp.eye(d)
        for q in range(1, N + 1):
            # exp(tA) truncated at t^2: the t-derivative at 0 only sees the linear term
            Wt = (I + t * A[q] + t**2 * A[q]**2 / 2) * Q[q] * (L + t * Th) * Q[q - 1].T \
                * (I - t * A[q - 1] + t**2 * A[q - 1]**2 / 2)
            dW = Wt.diff(t).subs(t, 0)
            bad += sum(1 for e in (dW - TANGENT_FORMS[form](A, Q, L, Th, q)) if sp.expand(e) != 0)
    return bad


@tangent.symbolic(timeout=60)
def tangent_symbolic(p):
    """With symbolic Q_p (any matrices), Lambda, theta, A_p: d/dt at 0 of e^{tA_p}Q_p(Lambda+t theta)Q_{p-1}^T
    e^{-tA_{p-1}} expands to the corrected (8.2)."""
    bad = _tangent_failures("corrected")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand of every entry", "instances": [list(i) for i in TANGENT_INSTANCES],
        "proved": "d/dt|_0 z(Lambda + t theta, e^{tA_p}Q_p) = A_p W_p + Q_p theta Q_{p-1}^T - W_p A_{p-1}"},
        message="entries of (derivative - corrected (8.2)) that did not expand to zero")


@tangent.mutant({"printed_theta_term": "(8.2) as printed: theta-term Q_p theta Q_p^T (E9)",
                 "right_action_sign": "A_p W_p + Q_p theta Q_{p-1}^T + W_p A_{p-1} (sign of the right action)"},
                timeout=60)
def tangent_mutant(p, variant):
    """The misprinted differential through the same procedure: entries must stay nonzero."""
    bad = _tangent_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} entries of (derivative - misprinted (8.2)) did not expand to zero")


# ===========================================================================
# Lemma 2: the pullback metric z^# iota
pullback = Claim(
    id="menon.pullback_metric",
    title="The pullback metric z^# iota is block diagonal with tridiagonal blocks h_a^{k,l}",
    label="Lemma 2",
    section="8.2",
    equation="(8.7)-(8.16)",
    lines=(628, 694),
    statement=r"h=\operatorname{diag}(NI_d,h_a^{1,2},\dots,h_a^{d,d-1}),\ "
              r"h_a^{k,l}=\operatorname{tridiag}\bigl(-\lambda_k\lambda_l;\ \tfrac12(\lambda_k^2+\lambda_l^2),"
              r"\lambda_k^2+\lambda_l^2,\dots,\lambda_k^2+\lambda_l^2,\tfrac12(\lambda_k^2+\lambda_l^2);\ "
              r"-\lambda_k\lambda_l\bigr);\quad \operatorname{Tr}(\alpha_{ij}\Lambda\alpha_{kl}\Lambda)="
              r"\lambda_i\lambda_j(\delta_{il}\delta_{jk}-\delta_{ik}\delta_{jl})",
    status="holds",
    params=_params(_lam_param()),
    validate=_validate_lam,
    notes="Holds for the rotated generators A_p = Q_p alpha_kl Q_p^T (i.e. B_p = alpha_kl, as in the proof "
          "sketch (8.11)-(8.13)). With the literal fixed-frame generators A_p = alpha_kl of (8.8) the Gram "
          "matrix is O^T h O for a block orthogonal O (Ad_{Q_p} mixes the pairs (k,l)): same eigenvalues and "
          "determinant, but not the displayed matrix unless all Q_p = I (imprecision, catalogue E18). "
          "Also E18: the last block h_a^{d,d-1} should read h_a^{d-1,d}. Basis order: l_1..l_d, then for each "
          "pair k<l the vectors a^p_kl, p = 0..N. Ties in Lambda are allowed (the Gram matrix needs no gap).",
    catalogue="menon §2.5 Lemma 2; §4 E18",
)


def _h_formula(lam, N):
    d = len(lam)
    blocks = [N * np.eye(d)]
    for k, l in pairs(d):
        s, o = lam[k] ** 2 + lam[l] ** 2, -lam[k] * lam[l]
        H = np.diag([s] * (N + 1)) + np.diag([o] * N, 1) + np.diag([o] * N, -1)
        H[0, 0] = H[N, N] = s / 2
        blocks.append(H)
    m = sum(b.shape[0] for b in blocks)
    h, i = np.zeros((m, m)), 0
    for b in blocks:
        h[i:i + b.shape[0], i:i + b.shape[0]] = b
        i += b.shape[0]
    return h


def _pullback_outcome(p, frame):
    """The generators are assembled on the host; their Gram matrix, its eigenvalues and determinant are computed
    on p.backend (array API), against h (8.9)-(8.10) moved there."""
    lam, Qs, _ = _instance(p)
    xp = xp_of(p)
    J, h = X.to_xp(xp, [_dz_matrix(lam, Qs, frame), _h_formula(lam, p.N)])
    G = J.T @ J
    err = float(xp.max(xp.abs(G - h)))
    # error model: each entry of a generator carries ~ 4 d eps max(lam) rounding (3 products),
    # a Gram entry is a sum of n = N d^2 products: 2 n * 4 d eps max(lam)^2, safety 2.
    n = p.N * p.d ** 2
    tol = 16 * n * p.d * EPS * float(np.max(lam)) ** 2
    ev = X.host(xp.linalg.eigvalsh(G) - xp.linalg.eigvalsh(h))
    dh = float(xp.linalg.det(h))
    return Outcome(residual=err, tolerance=tol, values={
        "max_abs_gram_minus_h": err, "frame": frame, "eigenvalue_difference": float(np.max(np.abs(ev))),
        "det_ratio": float(xp.linalg.det(G)) / dh if dh != 0 else None,
        "lam": lam.tolist()},
        message=f"max |Gram({frame} generators) - h (8.9)-(8.10)|")


@pullback.numeric(backends=("numpy", "cupy"))
def pullback_numeric(p):
    """Gram matrix of {l_i} ∪ {a^p_kl} with rotated generators A_p = Q_p alpha_kl Q_p^T equals h."""
    return _pullback_outcome(p, "rotated")


pullback.property(over=("d", "N", "seed"), max_examples=12)


@pullback.falsifier("fixed_frame_generators", search=("seed",))
def pullback_fixed(p):
    """Literal (8.8): A_p = alpha_kl in the fixed frame. The Gram matrix is only unitarily equivalent to h."""
    return _pullback_outcome(p, "fixed")


#: (8.16)'s sign, the corner entries and the off-diagonal sign of h_a^{k,l} as Lemma 2 states them, and the
#: nearest misprints (mutants)
PULLBACK_FORMS = {
    "stated": {"trace_sign": 1, "corner": sp.Rational(1, 2), "off_sign": -1},
    "trace_sign_flipped": {"trace_sign": -1, "corner": sp.Rational(1, 2), "off_sign": -1},
    "corners_not_halved": {"trace_sign": 1, "corner": sp.Integer(1), "off_sign": -1},
    "offdiagonal_sign_flipped": {"trace_sign": 1, "corner": sp.Rational(1, 2), "off_sign": 1},
}
PULLBACK_INSTANCES = [(3, 3), (2, 4), (3, 1)]


def _pullback_failures(form):
    """Entries that do not expand to zero: (8.16) for all i<j, k<l (d = 4), and Gram(rotated-frame vectors
    X_p = B_p Lambda + theta - Lambda B_{p-1}) - h for the instances, with the signs/corners of ``form``."""
    fm = PULLBACK_FORMS[form]
    bad = 0
    d = 4
    lam = sp.symbols(f"l0:{d}", positive=True)
    L = sp.diag(*lam)

    def al(k, l, dd):
        a = sp.zeros(dd, dd)
        a[k, l], a[l, k] = 1 / sp.sqrt(2), -1 / sp.sqrt(2)
        return a
    dl = lambda a, b: 1 if a == b else 0  # noqa: E731
    for i, j in pairs(d):
        for k, l in pairs(d):
            e = (al(i, j, d) * L * al(k, l, d) * L).trace() \
                - fm["trace_sign"] * lam[i] * lam[j] * (dl(i, l) * dl(j, k) - dl(i, k) * dl(j, l))
            bad += int(sp.expand(e) != 0)
    for dd, N in PULLBACK_INSTANCES:
        lam_ = sp.symbols(f"l0:{dd}", positive=True)
        L = sp.diag(*lam_)
        vecs = []
        for i in range(dd):
            th = sp.zeros(dd, dd)
            th[i, i] = 1
            vecs.append([th] * N)
        for k, l in pairs(dd):
            for q in range(N + 1):
                B = [al(k, l, dd) if s == q else sp.zeros(dd, dd) for s in range(N + 1)]
                vecs.append([B[s] * L - L * B[s - 1] for s in range(1, N + 1)])
        G = sp.Matrix(len(vecs), len(vecs), lambda a, b: sum(((X.T * Y).trace() for X, Y in zip(vecs[a], vecs[b])),
                                                              sp.Integer(0)))
        h = sp.zeros(len(vecs), len(vecs))
        h[:dd, :dd] = N * sp.eye(dd)
        o = dd
        for k, l in pairs(dd):
            s2, off = lam_[k] ** 2 + lam_[l] ** 2, fm["off_sign"] * lam_[k] * lam_[l]
            for q in range(N + 1):
                h[o + q, o + q] = fm["corner"] * s2 if q in (0, N) else s2
                if q < N:
                    h[o + q, o + q + 1] = h[o + q + 1, o + q] = off
            o += N + 1
        bad += sum(1 for e in (G - h) if sp.expand(e) != 0)
    return bad


@pullback.symbolic(timeout=60)
def pullback_symbolic(p):
    """(8.16) for all i<j, k<l (d = 4), and the Gram matrix of the rotated-frame vectors
    X_p = B_p Lambda + theta - Lambda B_{p-1} (8.11)-(8.13) equals h exactly (symbolic lambda)."""
    bad = _pullback_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand",
        "instances": ["(8.16), d=4, all pairs"] + [f"Gram = h, d={a}, N={b}" for a, b in PULLBACK_INSTANCES],
        "proved": "(8.16), (8.12)-(8.14) and the entries of (8.9)-(8.10) in the rotated frame B_p = Q_p^T A_p Q_p"},
        message="entries that did not expand to zero")


@pullback.mutant({"trace_sign_flipped": "(8.16) with the sign flipped: lambda_i lambda_j (d_ik d_jl - d_il d_jk)",
                  "corners_not_halved": "h_a^{k,l} with lambda_k^2 + lambda_l^2 in the corners (no 1/2)",
                  "offdiagonal_sign_flipped": "h_a^{k,l} with +lambda_k lambda_l off the diagonal"}, timeout=60)
def pullback_mutant(p, variant):
    """Lemma 2 misprinted, through the same procedure: entries must stay nonzero."""
    bad = _pullback_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} entries did not expand to zero for the misprinted Lemma 2")


# ===========================================================================
# Thm 14 / E12: orthonormal basis of T_W M
def _edge_coef(lk, ll, N):
    """sqrt((lk^2 - ll^2)/(lk^{2N} - ll^{2N})) = (sum_j lk^{2j} ll^{2(N-1-j)})^{-1/2}, tie-safe."""
    return 1.0 / np.sqrt(sum(lk ** (2 * j) * ll ** (2 * (N - 1 - j)) for j in range(N)))


def _a_coef(lam, k, l, q, s, N):
    """a^{k,l,p,s} (8.22) with p = q."""
    th = q * np.pi / N
    return (lam[k] * np.sin((s - 1) * th) - lam[l] * np.sin(s * th)) / np.sqrt(
        N * (lam[k] ** 2 + lam[l] ** 2 - 2 * lam[k] * lam[l] * np.cos(th)))


def _thm14_basis(lam, Qs, sign=-1.0):
    """Columns: l^k (8.20), then for each pair k<l: u^{k,l,0} (8.23), u^{k,l,p} 1<=p<=N-1 (8.21) with the
    given sign of the second term (printed: +1, corrected: -1), u^{k,l,N} (8.24). Returns (B, labels)."""
    d, N = len(lam), len(Qs) - 1
    q = lambda s, k: _Q(Qs, s)[:, k]
    cols, labels = [], []
    for k in range(d):
        cols.append(vec([np.outer(q(s, k), q(s - 1, k)) / np.sqrt(N) for s in range(N, 0, -1)]))
        labels.append(("l", k))
    for k, l in pairs(d):
        c = _edge_coef(lam[k], lam[l], N)
        cols.append(vec([c * lam[k] ** (s - 1) * lam[l] ** (N - s) * np.outer(q(s, l), q(s - 1, k))
                         for s in range(N, 0, -1)]))
        labels.append(("u", k, l, 0))
        for pp in range(1, N):
            cols.append(vec([_a_coef(lam, k, l, pp, s, N) * np.outer(q(s, k), q(s - 1, l))
                             + sign * _a_coef(lam, l, k, pp, s, N) * np.outer(q(s, l), q(s - 1, k))
                             for s in range(N, 0, -1)]))
            labels.append(("u", k, l, pp))
        cols.append(vec([c * lam[k] ** (N - s) * lam[l] ** (s - 1) * np.outer(q(s, k), q(s - 1, l))
                         for s in range(N, 0, -1)]))
        labels.append(("u", k, l, N))
    return np.array(cols).T, labels


basis = Claim(
    id="menon.orthonormal_basis",
    title="An explicit orthonormal basis (l, u) of (T_W M, iota)",
    label="Thm 14",
    section="8.3",
    equation="(8.17)-(8.24)",
    lines=(696, 730),
    statement=r"u_s^{k,l,p}=a^{k,l,p,s}q_{s,k}q_{s-1,l}^T+a^{l,k,p,s}q_{s,l}q_{s-1,k}^T\ (1\le p\le N-1);\ "
              r"(\mathbf l^k,\mathbf u^{k,l,p})_{0\le p\le N}\text{ of (8.20)-(8.24) is an orthonormal basis of }"
              r"(T_{\mathbf W}\mathcal M,\iota)",
    status="erratum",
    corrected=r"u_s^{k,l,p}=a^{k,l,p,s}q_{s,k}q_{s-1,l}^T-a^{l,k,p,s}q_{s,l}q_{s-1,k}^T;\ "
              r"\text{then (8.20)-(8.24) is an orthonormal basis of }(T_{\mathbf W}\mathcal M,\iota)",
    params=_params(_lam_param()),
    validate=_validate_lam,
    notes="Erratum E12: with '+' in (8.21) the u^{k,l,p}, 1<=p<=N-1, are orthonormal but NORMAL to M "
          "(distance 1 to T_W M); with '-' every vector is orthonormal and tangent. Both signs lie in the "
          "ambient kernel of phi_*, so tangency must be tested, not membership in ker phi_*. Tangency is "
          "measured against two independent constructions of T_W M: the range of the exact differential "
          "of z (8.2 corrected) and the kernel of dC (the defining equations). Needs distinct lambda "
          "(z is a submersion there); ties give inconclusive.",
    catalogue="menon §2.5 Thm 14; §4 E12",
)


def _basis_outcome(p, sign):
    lam, Qs, Ws = _instance(p)
    d, N = p.d, p.N
    n, m = N * d * d, d + (N + 1) * d * (d - 1) // 2
    B, labels = _thm14_basis(lam, Qs, sign)
    # array-API path: the vectors and the two constructions of T_W M are assembled on the host; the Gram matrix,
    # the SVDs of Dz and dC and the distances to their subspaces run on p.backend
    xp = xp_of(p)
    Tz = _Sub(_dz_matrix(lam, Qs), "range", xp=xp)
    TC = _Sub(_dC_matrix(Ws), "kernel", xp=xp)
    if Tz.grey or TC.grey or Tz.rank != m:
        return inconclusive("Lambda has (near) ties: z is not a submersion at this point "
                            f"(rank Dz = {Tz.rank}, expected {m})", lam=lam.tolist())
    Bx = X.to_xp(xp, [B])[0]
    gram = float(xp.max(xp.abs(Bx.T @ Bx - xp.eye(m, dtype=Bx.dtype))))
    dz_dist, dC_dist = Tz.dist(Bx), TC.dist(Bx)
    ker = np.linalg.norm(_dphi_matrix(Ws) @ B[:, [i for i, lb in enumerate(labels) if lb[0] == "u" and 0 < lb[3] < N]],
                         axis=0) if N > 1 else np.zeros(1)
    # error model: entries from sin/cos/outer products, each ~ 4 eps; Gram entries sums of n terms
    gram_tol = 10 * n * EPS
    return Outcome.from_parts({
        "orthonormal": (gram, gram_tol),
        "tangent_range_Dz": (float(np.max(dz_dist)), _sub_tol(n, Tz.cond)),
        "tangent_ker_dC": (float(np.max(dC_dist)), _sub_tol(n, TC.cond)),
        "count_equals_dim_M": (abs(m - TC.basis.shape[1]), 0.5),
    }, values={"sign": "corrected (-)" if sign < 0 else "printed (+)", "gram_error": gram,
        "max_distance_to_range_Dz": float(np.max(dz_dist)), "max_distance_to_ker_dC": float(np.max(dC_dist)),
        "middle_vectors_max_distance": float(max((dC_dist[i] for i, lb in enumerate(labels)
                                                  if lb[0] == "u" and 0 < lb[3] < N), default=0.0)),
        "max_norm_phi_star_middle": float(np.max(ker)), "number_of_vectors": m, "dim_M": TC.basis.shape[1]},
        message="Thm 14 vectors: orthonormality and tangency to M")


@basis.numeric(backends=("numpy", "cupy"))
def basis_numeric(p):
    """With '-' in (8.21): Gram = I, every vector in T_W M (range of Dz and ker dC), count = dim M."""
    return _basis_outcome(p, -1.0)


basis.property(over=("d", "N", "seed"), max_examples=12)


@basis.falsifier("stated", search=("seed",))
def basis_stated(p):
    """(8.21) as printed ('+'): still orthonormal and in the ambient ker phi_*, but normal to M."""
    return _basis_outcome(p, +1.0)


def _cyclo_zero(expr, w, N):
    """expr, a polynomial in w = exp(i pi / N) (exponents reduced mod 2N), is 0 iff Phi_{2N}(w) divides it."""
    P = sp.Poly(sp.expand(expr), w)
    return P.rem(sp.Poly(sp.cyclotomic_poly(2 * N, w), w)).is_zero


def _pair_block(N, a, b, w, sign):
    """Coordinates (x_s, y_s) = coefficients of q_{s,k}q_{s-1,l}^T and q_{s,l}q_{s-1,k}^T of the N+1
    u-vectors of a pair (k, l) with lambda_k = a, lambda_l = b, unnormalised. For the middle vectors
    the true coefficient is (numerator)/(2i) with sin(j pi p/N) = (w^{jp} - w^{-jp})/(2i)."""
    s_ = lambda j: w ** (j % (2 * N)) - w ** ((-j) % (2 * N))
    vecs = [("real", [0] * N, [a ** (s - 1) * b ** (N - s) for s in range(1, N + 1)])]
    for q in range(1, N):
        x = [a * s_((s - 1) * q) - b * s_(s * q) for s in range(1, N + 1)]
        y = [sign * (b * s_((s - 1) * q) - a * s_(s * q)) for s in range(1, N + 1)]
        vecs.append(("imag", x, y))
    vecs.append(("real", [a ** (N - s) * b ** (s - 1) for s in range(1, N + 1)], [0] * N))
    return vecs


def _basis_failures(sign, Ns=tuple(range(2, 8))):
    """Identities of Thm 14 that fail, exactly in w = e^{i pi/N} modulo the cyclotomic polynomial, for the
    sign ``sign`` of (8.21) (-1 corrected, E12; +1 printed): the discrete sine sums, the telescoping kernel
    identity, the Gram matrix and the tangency equations (dC = 0) of the pair block (u^{k,l,p})_{0<=p<=N}."""
    a, b, w = sp.symbols("a b w")
    bad = 0
    for N in Ns:
        s_ = lambda j: w ** (j % (2 * N)) - w ** ((-j) % (2 * N))  # noqa: E731
        cos = lambda q: (w ** (q % (2 * N)) + w ** ((-q) % (2 * N))) / 2  # noqa: E731
        for q in range(1, N):
            for r in range(1, N):
                # sum_s sin(s q pi/N) sin(s r pi/N) = N/2 delta  (sin*sin = -(s_ s_)/4)
                e = -sum(s_(s * q) * s_(s * r) for s in range(1, N + 1)) / 4 - (sp.Rational(N, 2) if q == r else 0)
                bad += int(not _cyclo_zero(e, w, N))
            # sum_s sin((s-1) theta) sin(s theta) = N/2 cos theta
            e = -sum(s_((s - 1) * q) * s_(s * q) for s in range(1, N + 1)) / 4 - sp.Rational(N, 2) * cos(q)
            bad += int(not _cyclo_zero(e, w, N))
        # telescoping: sum_s a^{N-s} b^{s-1} (a f_{s-1} - b f_s) = a^N f_0 - b^N f_N for any f
        f = sp.symbols(f"f0:{N + 1}")
        e = sum(a ** (N - s) * b ** (s - 1) * (a * f[s - 1] - b * f[s]) for s in range(1, N + 1)) - (a ** N * f[0] - b ** N * f[N])
        bad += int(sp.expand(e) != 0)
        # Gram of the pair block and tangency: a x_{s+1} + b y_{s+1} = b x_s + a y_s
        vecs = _pair_block(N, a, b, w, sign)
        geo = sum(a ** (2 * j) * b ** (2 * (N - 1 - j)) for j in range(N))
        for i, (ti, xi, yi) in enumerate(vecs):
            for j, (tj, xj, yj) in enumerate(vecs):
                ip = sum(u * v for u, v in zip(xi + yi, xj + yj))
                if ti == tj == "imag":   # true value -ip/4; norm^2 must be N(a^2+b^2-2ab cos)
                    target = N * (a * a + b * b - 2 * a * b * cos(i)) if i == j else 0
                    e = -ip / 4 - target
                elif ti == tj == "real":
                    e = ip - (geo if i == j else 0)
                else:                    # true value ip/(2i): zero iff the numerator is zero
                    e = ip
                bad += int(not _cyclo_zero(e, w, N))
            for s in range(N - 1):
                bad += int(not _cyclo_zero(a * xi[s + 1] + b * yi[s + 1] - b * xi[s] - a * yi[s], w, N))
    return bad


@basis.symbolic(timeout=60)
def basis_symbolic(p):
    """Exact in w = e^{i pi/N} modulo the cyclotomic polynomial, N = 2..7, symbolic lambda_k, lambda_l:
    the discrete sine sums, the telescoping kernel identity, and for the corrected sign the Gram matrix
    and the tangency equations of the pair block (u^{k,l,p})_{0<=p<=N}."""
    bad = _basis_failures(-1)
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy Poly remainder modulo cyclotomic_poly(2N, w), w = exp(i pi/N); sympy.expand",
        "instances": [f"N={N}" for N in range(2, 8)],
        "proved": "sum_s sin(s th) sin(s th') = N/2 delta; sum_s sin((s-1) th) sin(s th) = N/2 cos th; "
                  "telescoping kernel identity; pair-block Gram = diag(norms) and tangency (dC = 0) with '-'"},
        message="identities that did not reduce to zero")


@basis.mutant("printed_plus_sign", timeout=60)
def basis_mutant(p):
    """(8.21) as printed ('+', E12) through the same exact procedure: its tangency equations fail (the
    printed u^{k,l,p} are orthonormal but normal to M)."""
    bad = _basis_failures(+1)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad,
                                                      "method": "exact, modulo cyclotomic_poly(2N)"},
                   message=f"{bad} identities (tangency equations) of the printed u^{{k,l,p}} did not vanish")


# ===========================================================================
# Thm 13: phi: (M_r, iota) -> (M_r, g^N) is a Riemannian submersion
def _validate_zeros(p):
    if p.zeros > p.d - 1:
        raise ParamError(f"parameter zeros={p.zeros} must be <= d-1={p.d - 1} (rank r = d - zeros >= 1)")


submersion = Claim(
    id="menon.riemannian_submersion",
    title="g^N on M_r is induced from (M_r, iota) by the Riemannian submersion phi",
    label="Thm 13",
    section="6.4, 8.3",
    equation="(4.16)",
    lines=(490, 498),
    statement=r"\text{for }1\le r\le d,\ \mathbf V\in(\ker\phi_*)^\perp\subset T_{\mathbf W}\mathcal M_r:\ "
              r"\|\mathbf V\|^2=g^N(\phi_*\mathbf V,\phi_*\mathbf V)=\operatorname{Tr}\bigl((\phi_*\mathbf V)^T"
              r"\mathcal A_{N,W}^{-1}\phi_*\mathbf V\bigr)",
    status="holds",
    params=_params(Param.int("zeros", 0, 0, 4, "number of vanishing singular values (rank r = d - zeros)",
                             search=(0, 2))),
    validate=_validate_zeros,
    notes="T_W M_r is the range of the exact differential of z with theta supported on the nonzero lambda "
          "(all of M_r is z(Lambda_r, Q)); the horizontal space is its orthogonal complement of ker phi_*. "
          "The identity is checked as a matrix identity on an orthonormal basis H of the horizontal space: "
          "H^T H = I = (J_phi H)^T A^+ (J_phi H), with A^+ the pseudo-inverse of A_{N,W} (A is singular on "
          "the u_k v_l^T with k, l > r, which are not in T M_r). Also checked: rank phi_* = r(2d - r) and "
          "phi_* H lies in the range of A. The proof in the text is for r = d; lines 732-734 defer the "
          "rank-deficient case to [34].",
    catalogue="menon §2.5 Thm 13, C8; §4 E8",
    covers=("K1",),
)


def _submersion_outcome(p, point="balanced", metric="inverse"):
    d, N = p.d, p.N
    n = N * d * d
    if point == "balanced":
        lam, Qs, Ws = balanced_instance(d, N, p.seed, zeros=p.zeros)
        r = d - p.zeros
        T = _Sub(_dz_matrix(lam, Qs, theta_idx=range(r)), "range")
    else:   # a generic point of M_G, G != 0: T_W M_G = ker dC
        rng = np.random.default_rng(p.seed)
        Ws = dln.random_layers([d] * (N + 1), rng)
        r = d
        T = _Sub(_dC_matrix(Ws), "kernel")
    Jphi = _dphi_matrix(Ws)
    JT = Jphi @ T.basis
    U, s, Vt = np.linalg.svd(JT)
    rank = int(np.sum(s > RANK_TOL * s[0]))
    if T.grey or np.any((s > GREY * s[0]) & (s <= RANK_TOL * s[0])):
        return inconclusive("a singular value in the rank grey zone", zeros=p.zeros)
    H = T.basis @ Vt[:rank].T                      # orthonormal basis of the horizontal space
    Z = Jphi @ H
    W = dln.prod(Ws)
    A = dln.a_matrix(W, N)
    ev = np.linalg.eigvalsh((A + A.T) / 2)
    keep = ev > 1e-9 * ev[-1]
    condA = float(ev[-1] / ev[keep][0])
    if metric == "inverse":
        M = np.linalg.pinv((A + A.T) / 2, rcond=1e-9, hermitian=True)
    else:                                          # falsifier: A instead of A^{-1} (cf. E8)
        M = A
    G = Z.T @ M @ Z
    err = float(np.max(np.abs(G - np.eye(rank))))
    in_range = float(np.max(np.abs(Z - A @ np.linalg.pinv(A, rcond=1e-9) @ Z))) if rank else 0.0
    # error model: Z carries n eps |J_phi| relative rounding amplified by the subspace conditions;
    # the quadratic form in A^+ multiplies it by cond(A) on T M_r.  Safety factor 50.
    tol = 50 * (n + d * d) * EPS * (condA + T.cond + float(s[0] / s[rank - 1]))
    hv = np.random.default_rng(p.seed + 3).standard_normal(rank)
    Vr = H @ hv
    Zr = Jphi @ Vr
    return Outcome.from_parts({
        "isometry": (err, tol),
        "rank_phi_star": (abs(rank - r * (2 * d - r)), 0.5),
        "image_in_range_A": (in_range, tol * max(1.0, float(np.max(np.abs(Z))))),
    }, values={"point": point, "metric": metric, "rank": r, "rank_phi_star": rank, "r(2d-r)": r * (2 * d - r),
        "max_abs_gram_error": err, "cond_A_on_TM_r": condA,
        "random_horizontal_V": {"|V|^2": float(Vr @ Vr), "g^N(phi_* V, phi_* V)": float(Zr @ M @ Zr)}},
        message=f"horizontal Gram (Frobenius) vs g^N Gram of phi_* H ({point} point, A{'^+' if metric == 'inverse' else ''})")


@submersion.numeric
def submersion_numeric(p):
    """On an orthonormal basis H of (ker phi_*)^perp in T_W M_r: (J_phi H)^T A^+ (J_phi H) = I."""
    return _submersion_outcome(p)


submersion.property(over=("d", "N", "seed", "zeros"), max_examples=15)


@submersion.falsifier("g_nonzero", search=("seed",))
def submersion_g_nonzero(p):
    """A generic point of M_G with G != 0 (random layers, T = ker dC): phi with iota does not induce g^N."""
    return _submersion_outcome(p.replace(zeros=0), point="generic")


@submersion.falsifier("a_instead_of_inverse", search=("seed",))
def submersion_a(p):
    """The quadratic form of A instead of A^{-1} (the slip of (7.15), E8): not an isometry."""
    return _submersion_outcome(p, metric="A")


# ===========================================================================
# C8: proof sketch of Thm 13 from Thm 14
sketch = Claim(
    id="menon.submersion_proof_sketch",
    title="phi_* maps l, u^{k,l,0}, u^{k,l,N} onto a g^N-orthonormal eigenbasis of A; ker phi_* = span u^{k,l,p}",
    label="C8 (proof of Thm 13)",
    section="8.3",
    equation="(7.13)-(7.14), (8.20)-(8.24)",
    lines=(732, 738),
    statement=r"\ker\phi_*=\operatorname{span}\{\mathbf u^{k,l,p}\}_{1\le p\le N-1},\ "
              r"\phi_*\mathbf u^{k,l,0}=\sqrt{\tfrac{\lambda_k^{2N}-\lambda_l^{2N}}{\lambda_k^2-\lambda_l^2}}\,u_lv_k^T,\ "
              r"\phi_*\mathbf u^{k,l,N}=\sqrt{\cdots}\,u_kv_l^T,\ \phi_*\mathbf l^k=\sqrt N\lambda_k^{N-1}u_kv_k^T,"
              r"\text{ each of unit }g^N\text{-norm}",
    status="holds",
    params=_params(_lam_param()),
    validate=_validate_lam,
    notes="u_k, v_k are the columns of Q_N, Q_0 (W = Q_N Sigma Q_0^T). The images are g^N-orthonormal with "
          "g^N(Z,Z) = Tr(Z^T A^{-1} Z); the diagonal term of (7.15) as printed (E8) would give "
          "g^N(phi_* l^k) = N^2 lambda_k^{4N-4} instead of 1 (falsifier). Uses the corrected sign of (8.21) "
          "(E12); ker phi_* is taken inside T_W M (the ambient kernel is larger, E19).",
    catalogue="menon §2.5 C8, Thm 13; §4 E8, E12",
)


def _sketch_outcome(p, metric="inverse"):
    lam, Qs, Ws = _instance(p)
    d, N = p.d, p.N
    n = N * d * d
    if _min_gap(lam) < 1e-6 * float(np.max(lam)):
        return inconclusive("Lambda has ties: the SVD frame u_k, v_k is not determined", lam=lam.tolist())
    B, labels = _thm14_basis(lam, Qs, -1.0)
    Jphi = _dphi_matrix(Ws)
    img = Jphi @ B
    U, V = _Q(Qs, N), _Q(Qs, 0)
    pred = np.zeros_like(img)
    horiz = []
    for i, lb in enumerate(labels):
        if lb[0] == "l":
            k = lb[1]
            pred[:, i] = np.sqrt(N) * lam[k] ** (N - 1) * np.outer(U[:, k], V[:, k]).ravel()
            horiz.append(i)
        else:
            _, k, l, q = lb
            c = 1.0 / _edge_coef(lam[k], lam[l], N)
            if q == 0:
                pred[:, i] = c * np.outer(U[:, l], V[:, k]).ravel()
                horiz.append(i)
            elif q == N:
                pred[:, i] = c * np.outer(U[:, k], V[:, l]).ravel()
                horiz.append(i)
    img_err = float(np.max(np.abs(img - pred)))
    lmax = max(1.0, float(np.max(lam)))
    # error model: phi_* sums N products of N d x d factors, |A_{p+1}||B_{p-1}| <= lmax^{N-1}
    img_tol = 4 * N * N * d * EPS * lmax ** (N - 1)
    Z = img[:, horiz]
    W = dln.prod(Ws)
    if metric == "inverse":
        A = dln.a_matrix(W, N)
        ev = np.linalg.eigvalsh((A + A.T) / 2)
        condA = float(ev[-1] / ev[0])
        G = Z.T @ np.linalg.solve(A, Z)
    else:   # (7.15) as printed, in the SVD frame
        condA = 1.0
        sig = lam ** N
        G = np.zeros((len(horiz), len(horiz)))
        for a_, ia in enumerate(horiz):
            for b_, ib in enumerate(horiz):
                Za, Zb = U.T @ Z[:, a_].reshape(d, d) @ V, U.T @ Z[:, b_].reshape(d, d) @ V
                tot = 0.0
                for k in range(d):
                    tot += N * sig[k] ** (2 - 2 / N) * Za[k, k] * Zb[k, k]
                    for l in range(d):
                        if k != l:
                            tot += (sig[k] ** (2 / N) - sig[l] ** (2 / N)) / (sig[k] ** 2 - sig[l] ** 2) * Za[k, l] * Zb[k, l]
                G[a_, b_] = tot
    g_err = float(np.max(np.abs(G - np.eye(len(horiz)))))
    g_tol = 20 * (n + d * d) * EPS * condA * lmax ** 2
    Tz = _Sub(_dz_matrix(lam, Qs), "range")
    kerT = _Sub(Jphi @ Tz.basis, "kernel")
    middle = [i for i, lb in enumerate(labels) if lb[0] == "u" and 0 < lb[3] < N]
    mid_img = float(np.max(np.abs(img[:, middle]))) if middle else 0.0
    return Outcome.from_parts({
        "images": (img_err, img_tol),
        "g_orthonormal": (g_err, g_tol),
        "kernel_vectors": (mid_img, img_tol),
        "dim_kernel": (abs(kerT.basis.shape[1] - len(middle)), 0.5),
    }, values={"max_abs_image_error": img_err, "g_gram_error": g_err, "max_abs_phi_star_middle": mid_img,
        "dim_ker_phi_star_in_T": kerT.basis.shape[1], "number_of_middle_vectors": len(middle),
        "metric": "Tr(Z^T A^{-1} Z)" if metric == "inverse" else "(7.15) as printed",
        "g_norms_of_images": np.diag(G).tolist()},
        message="phi_* of the Thm 14 basis against the eigenbasis of A (Lemma 1)")


@sketch.numeric
def sketch_numeric(p):
    """phi_* of l^k, u^{k,l,0}, u^{k,l,N} are the predicted multiples of u_k v_l^T, g^N-orthonormal;
    phi_* u^{k,l,p} = 0 for 1<=p<=N-1 and these span ker phi_* ∩ T_W M."""
    return _sketch_outcome(p)


sketch.property(over=("d", "N", "seed"), max_examples=12)


@sketch.falsifier("metric_7_15_printed", search=("seed",))
def sketch_printed_metric(p):
    """g^N by (7.15) as printed (diagonal term N sigma^{2-2/N} Z_kk^2, E8): the images of l^k are not unit."""
    return _sketch_outcome(p, metric="printed")


#: the squared coefficients of phi_* u^{k,l,0} and phi_* l^k (in a = lambda_k, b = lambda_l) and the g^N weight
#: of u_k v_k^T, as the proof sketch has them, and the nearest misprints (mutants): the edge coefficient without
#: its square root, and the diagonal weight of (7.15) as printed (E8), N sigma^{2-2/N} in place of its inverse
SKETCH_FORMS = {
    "stated": {"edge2": lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2), "printed_diag": False},
    "edge_coefficient_not_square_rooted": {
        "edge2": lambda a, b, N: ((a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2)) ** 2, "printed_diag": False},
    "diagonal_weight_7_15_printed": {
        "edge2": lambda a, b, N: (a ** (2 * N) - b ** (2 * N)) / (a ** 2 - b ** 2), "printed_diag": True},
}


def _sketch_failures(form):
    """N = 1..8, symbolic lambda: the geometric sum giving phi_* u^{k,l,0}, the telescoping kernel identity, and
    the g^N norms |c Z|^2 = c^2 / mu(Z) of the images, mu the eigenvalue of A_{N,W} (4.14) on u_k v_l^T summed
    from its definition, sum_j sigma_k^{2(N-j)/N} sigma_l^{2(j-1)/N} with sigma = lambda^N; count failures."""
    fm = SKETCH_FORMS[form]
    a, b = sp.symbols("a b", positive=True)
    bad = 0
    for N in range(1, 9):
        geo = sum(a ** (2 * (s - 1)) * b ** (2 * (N - s)) for s in range(1, N + 1))
        bad += int(sp.expand((a * a - b * b) * geo - (a ** (2 * N) - b ** (2 * N))) != 0)
        f = sp.symbols(f"f0:{N + 1}")
        tel = sum(a ** (N - s) * b ** (s - 1) * (a * f[s - 1] - b * f[s]) for s in range(1, N + 1))
        bad += int(sp.expand(tel - (a ** N * f[0] - b ** N * f[N])) != 0)
        mu = lambda x, y: sum(x ** (2 * (N - j)) * y ** (2 * (j - 1)) for j in range(1, N + 1))  # noqa: E731
        # off-diagonal image c u_l v_k^T: unit g^N norm
        bad += int(sp.cancel(fm["edge2"](a, b, N) / mu(b, a) - 1) != 0)
        # diagonal image sqrt(N) a^{N-1} u_k v_k^T: unit g^N norm
        weight = N * a ** (2 * N - 2) if fm["printed_diag"] else 1 / mu(a, a)
        bad += int(sp.cancel(N * a ** (2 * N - 2) * weight - 1) != 0)
    return bad


@sketch.symbolic(timeout=60)
def sketch_symbolic(p):
    """N = 1..8, symbolic lambda: the geometric sum giving phi_* u^{k,l,0}, the telescoping kernel identity,
    and the unit g^N norms of the images, with A_{N,W}'s eigenvalues summed from (4.14) (sigma = lambda^N)."""
    bad = _sketch_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand / cancel", "instances": [f"N={N}" for N in range(1, 9)],
        "proved": "(a^2-b^2) sum_s a^{2(s-1)} b^{2(N-s)} = a^{2N}-b^{2N}; telescoping kernel identity; "
                  "unit g^N norms of phi_* u^{k,l,0}, phi_* l^k against the eigenvalues of A_{N,W} from (4.14)"},
        message="identities that did not reduce to zero")


@sketch.mutant({"edge_coefficient_not_square_rooted": "phi_* u^{k,l,0} = (lambda_k^{2N}-lambda_l^{2N})/"
                                                      "(lambda_k^2-lambda_l^2) u_l v_k^T (no square root)",
                "diagonal_weight_7_15_printed": "g^N(u_kv_k^T) = N sigma_k^{2-2/N} as printed in (7.15) (E8)"},
               timeout=60)
def sketch_mutant(p, variant):
    """The proof sketch misprinted, through the same procedure: some norm must fail to be 1."""
    bad = _sketch_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities failed for the misprinted sketch")


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


@tangent.reproduction
def tangent_reproduction(p):
    """Catalogue §4.1 output 'E9': |fd - printed| = 1.745525401850335, |fd - corrected| = 1.2977e-10
    (theta = e_1, h = 1e-6, replayed random frames)."""
    lam, Qs = _errata_replay()
    N, d, h = 4, 3, 1e-6
    e0 = np.eye(d)[0]
    fd = (vec(dln.balanced_point(lam + h * e0, Qs)) - vec(dln.balanced_point(lam - h * e0, Qs))) / (2 * h)
    printed = float(np.max(np.abs(fd - vec([_Q(Qs, q) @ np.diag(e0) @ _Q(Qs, q).T for q in range(N, 0, -1)]))))
    corrected = float(np.max(np.abs(fd - vec([_Q(Qs, q) @ np.diag(e0) @ _Q(Qs, q - 1).T for q in range(N, 0, -1)]))))
    quoted_printed, quoted_corrected = 1.745525401850335, 1.2977241503620007e-10
    # the printed error is deterministic up to the fd noise (z is linear in lambda: no truncation error,
    # rounding 4 d eps max(lam)/h ~ 1e-9); the corrected one IS that noise, so only its bound is compared.
    noise = 4 * d * EPS * 1.7 / h
    res = max(abs(printed - quoted_printed) / noise, corrected / noise)
    return Outcome(residual=res, tolerance=1.0, values={
        "printed_theta_term_error": printed, "quoted_printed": quoted_printed,
        "corrected_theta_term_error": corrected, "quoted_corrected": quoted_corrected, "fd_noise_bound": noise},
        message="E9 replay: printed error matches the quote within the fd noise; corrected error below it")


@basis.reproduction
def basis_reproduction(p):
    """Catalogue §4.1 output 'E12' (d = 3, N = 4, lam = (1.7, 1.1, 0.6), replayed frames): sign +1 at
    distance 1.000 from T_W M, sign -1 at 1.517e-10 (the quote's tangent space came from finite
    differences; here it is exact, so the corrected distance is compared with the rounding model)."""
    lam, Qs = _errata_replay()
    N, d = 4, 3
    n = N * d * d
    T = _Sub(_dz_matrix(lam, Qs), "range")
    out = {}
    for sign in (+1, -1):
        B, _ = _thm14_basis(lam, Qs, sign)
        out[sign] = (float(np.max(np.abs(B.T @ B - np.eye(B.shape[1])))), float(np.max(T.dist(B))))
    tol_sub = _sub_tol(n, T.cond)
    res = max(abs(out[+1][1] - 1.000) / 5e-4, out[-1][1] / tol_sub, out[+1][0] / (10 * n * EPS),
              out[-1][0] / (10 * n * EPS))
    return Outcome(residual=res, tolerance=1.0, values={
        "printed_sign": {"gram_error": out[+1][0], "max_distance": out[+1][1], "quoted": [8.9e-16, 1.000]},
        "corrected_sign": {"gram_error": out[-1][0], "max_distance": out[-1][1], "quoted": [6.7e-16, 1.517e-10]},
        "subspace_tolerance": tol_sub},
        message="E12 replay: printed distance 1.000 (quoted to 4 digits), corrected at rounding level")
