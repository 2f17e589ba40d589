"""Menon §6.2 (seed lines 436-440): the fibres of phi on the balanced manifold are O_d^{N-1} orbits (O1).

Conventions, the two routes to the tangent space and the subspace error model: see
``theorems/menon/_geometry.py``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.xp import xp_of
from theorems.claim import Claim, Outcome, inconclusive

from ._common import EPS, alpha, pairs, vec
from ._geometry import _Sub, _dC_matrix, _dphi_matrix, _instance, _lay, _params, _sub_tol


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
