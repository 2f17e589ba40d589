"""Menon §4.4 (seed lines 296-308): the remarks on thin gradients, the parameter count and the norm identity.

Claims (catalogue menon §2.2 R5-R7; erratum E18, E19):

* ``menon.thin_gradients``        Remark 5 (E19): gradients of E∘φ span rank Dφ <= d^2 dimensions
* ``menon.parameter_count``       Remark 6: (N-1)d^2 = (N-1)d(d+1)/2 + (N-1)d(d-1)/2
* ``menon.norm_identity``         Remark 7, (4.23), and |W_2W_1|^2 = Tr K^2 - Tr GK for N = 2

Conventions as in the package docstring: tuples ``[W_N, ..., W_1]``, ``A_p = W_N...W_p``,
``B_p = W_p...W_1``; vectorisation is row-major and follows :func:`solvers.dln.pack`.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as XM
from solvers.xp import namespace, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import EPS, alpha, balanced_instance, pairs, too_many_steps

from ._model import _abs, _chain_k, _cond, _dphi, _gamma, _gauge_basis, _gl_basis, _rank


def _null_basis(M, rank):
    """Orthonormal basis of ker M (columns), given its numerical rank (on the backend of M)."""
    _, _, Vt = namespace(M).linalg.svd(M)
    return Vt[rank:, :].T


def _validate_rank(p):
    if p.rank > p.d:
        raise ParamError(f"parameter rank={p.rank} must be -1 (full) or in [0, d={p.d}]")


# ===========================================================================
# R5  Remark 5: thin gradients (erratum E19)
POINTS = ("random", "zero", "diag")

thin = Claim(
    id="menon.thin_gradients",
    title="Thin gradients: the gradients of E∘φ at W span rank Dφ(W) ≤ d² dimensions (= d² when nondegenerate)",
    label="Remark 5",
    section="4.4",
    equation="(3.6)",
    lines=(296, 296),
    statement=r"\text{the space of gradients of } L=E\circ\phi \text{ at } \mathbf W \text{ has } d^2 \text{ dimensions}",
    status="erratum",
    corrected=r"\dim\{\nabla(E\circ\phi)(\mathbf W)\}=\operatorname{rank}D\phi(\mathbf W)\le d^2,\ "
              r"=d^2\text{ if some }A_{p+1},B_{p-1}\text{ are both invertible; and }"
              r"\nabla(E\circ\phi)\perp\ker D\phi",
    params=[
        Param.int("d", 3, 1, 5, "width", search=(1, 4)),
        Param.int("N", 4, 1, 6, "depth", search=(1, 5)),
        Param.seed("seed of the layers and the energies"),
        Param.choice("point", "random", POINTS,
                     "random layers, the zero tuple, or all W_p = diag(1, 0, ..., 0)"),
    ],
    notes="Erratum E19: Remark 5 first says 'at most d^2' (correct) and then 'has d^2 dimensions', which fails "
          "at degenerate points: rank 0 at W = 0 and rank 2d - 1 (5 for d = 3) when every W_p = diag(1,0,..,0), "
          "N >= 2 (first row + first column of E'; d^2 for N = 1). The space of gradients is the image of E' -> "
          "(A_{p+1}^T E' B_{p-1}^T)_p = Dφ^T, whose rank is rank Dφ. Related claim (Sec. 2, item (3), line 105): "
          "L is constant along ker Dφ, so ∇L = Dφ^T E' ⟂ ker Dφ; checked with a random E' and a basis of ker Dφ.",
    catalogue="menon §2.2 R5; §4 E19",
)


def _thin_layers(p):
    rng = np.random.default_rng(p.seed)
    d, N = p.d, p.N
    if p.point == "zero":
        return [np.zeros((d, d)) for _ in range(N)], rng
    if p.point == "diag":
        e = np.zeros((d, d))
        e[0, 0] = 1.0
        return [e.copy() for _ in range(N)], rng
    return dln.random_layers([d] * (N + 1), rng), rng


def _thin_measure(p):
    Ws, rng = _thin_layers(p)
    d, N = p.d, p.N
    widths = [d] * (N + 1)
    k = _chain_k(widths)
    # array-API path (p.backend): Dφ and the gradient map are assembled on the host, ranks (SVD), the null basis
    # and the orthogonality product run on the backend
    xp = xp_of(p)
    J, Jabs = XM.to_xp(xp, [_dphi(Ws), _dphi(_abs(Ws))])
    # the gradient map E' -> (D_p) is J^T; build it from dln.grads on the basis E_lm (Remark 5's energies)
    G = XM.to_xp(xp, [np.array([dln.pack(dln.grads(Ws, e)) for e in _gl_basis(d)]).T])[0]
    rank, s, tau, amb = _rank(G, Jabs.T, k)
    # hypothesis of the corrected '= d^2': some p with A_{p+1} and B_{p-1} both invertible
    conds = []
    for q in range(1, N + 1):
        A, B = dln.partial_A(Ws, q + 1), dln.partial_B(Ws, q - 1)
        conds.append(max(_cond(A), _cond(B)))
    hyp = bool(min(conds) < 1e8)
    # orthogonality to ker Dφ
    Ep = rng.standard_normal((d, d))
    g = dln.pack(dln.grads(Ws, Ep))
    Kb = _null_basis(J, rank)
    orth = XM.fro(Kb.T @ XM.to_xp(xp, [g])[0]) if Kb.shape[0] * Kb.shape[1] else 0.0
    gabs = dln.pack(dln.grads(_abs(Ws), np.abs(Ep)))
    # K spans the right singular vectors of the singular values <= tau, so |K^T J^T E'| <= tau |E'|;
    # plus the rounding of g itself (gamma_{k+1} times the same products of absolute values)
    orth_tol = 4 * (_gamma(k + 1) * float(np.linalg.norm(gabs)) + 2 * tau * float(np.linalg.norm(Ep)))
    return {"rank": rank, "d2": d * d, "n_parameters": N * d * d, "hypothesis_invertible_pair": hyp,
            "min_cond_pair": float(min(conds)), "ambiguous": amb, "rank_tau": tau,
            "orthogonality_residual": orth, "orthogonality_tolerance": orth_tol,
            "rank_Dphi": _rank(J, Jabs, k)[0]}


@thin.numeric(backends=("numpy", "cupy"))
def _thin_numeric(p):
    """rank of E' -> ∇(E∘φ) is <= d², = d² when some A_{p+1}, B_{p-1} are invertible; ∇L ⟂ ker Dφ."""
    v = _thin_measure(p)
    if v["ambiguous"]:
        return inconclusive("a singular value in the grey zone of the rounding model", **v)
    mismatch = max(0, v["rank"] - v["d2"])
    if v["hypothesis_invertible_pair"]:
        mismatch += abs(v["rank"] - v["d2"])
    mismatch += abs(v["rank"] - v["rank_Dphi"])
    mismatch += int(v["orthogonality_residual"] > v["orthogonality_tolerance"])
    return Outcome(residual=mismatch, tolerance=0, values=v,
                   message=f"rank {v['rank']} (<= d^2 = {v['d2']}; '=' required: {v['hypothesis_invertible_pair']}); "
                           f"|P_ker ∇L| = {v['orthogonality_residual']:.1e} (tol {v['orthogonality_tolerance']:.1e})")


thin.property(over=("d", "N", "seed", "point"), max_examples=15)


def _thin_stated(p):
    v = _thin_measure(p)
    return Outcome(residual=abs(v["rank"] - v["d2"]), tolerance=0, values=v,
                   counterexample={"point": p.point, "rank": v["rank"], "d^2": v["d2"]},
                   message=f"at point={p.point}: the gradients span {v['rank']} dimensions, not d^2 = {v['d2']}")


@thin.falsifier({
    "stated": "Printed 'has d² dimensions' at W = 0 (N >= 2): the gradients span 0 dimensions.",
    "stated_rank_deficient": {"description": "Printed 'has d² dimensions' at W_p = diag(1,0,0) (d = 3, "
                                             "N = 4): rank 5 = 2d - 1, not 9.",
                              "fixed": {"point": "diag", "d": 3, "N": 4}},
}, fixed={"point": "zero"})
def _(p, variant):
    return _thin_stated(p)


@thin.reproduction
def _thin_reproduction(p):
    """Catalogue §2.2 R5: ranks 9 (generic), 0 (W = 0), 5 (all W_p = diag(1,0,0)) at d = 3, N = 4."""
    quoted = {"random": 9, "zero": 0, "diag": 5}
    got = {pt: _thin_measure(thin.resolve({"d": 3, "N": 4, "seed": 0, "point": pt}))["rank"] for pt in quoted}
    return Outcome(residual=sum(abs(got[k] - quoted[k]) for k in quoted), tolerance=0,
                   values={"computed": got, "quoted": quoted}, message="ranks compared exactly")


# ===========================================================================
# R6  Remark 6: the parameter count
count = Claim(
    id="menon.parameter_count",
    title="Group orbits: (N-1)d² free parameters, (N-1)d(d+1)/2 fixed by G, the rest an orbit of dimension (N-1)dim St_{r,d}",
    label="Remark 6",
    section="4.4",
    equation="(4.6)",
    lines=(298, 298),
    statement=r"(N-1)d^2\ \text{free parameters, of which } (N-1)\tfrac{d(d+1)}2 \text{ are fixed by } "
              r"(G_N,\dots,G_1);\ \phi^{-1}(W)\cap\mathcal M \text{ is an } \mathrm{St}_{r,d}^{N-1}\text{ orbit}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 5, "width", search=(1, 4)),
        Param.int("N", 4, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of the balanced point"),
        Param.int("rank", -1, -1, 5, "rank r of W (-1: full rank d)"),
    ],
    validate=_validate_rank,
    notes="Printed '(G_N, ..., G_1)' is read (G_{N-1}, ..., G_1) (E18): there are N-1 constants. Arithmetic: "
          "(N-1)d^2 = (N-1)d(d+1)/2 + (N-1)d(d-1)/2 and Nd^2 - (N-1)d(d+1)/2 = (4.6) (sympy). Numeric at a "
          "balanced point of rank r (parametrisation z, (5.15)): for r = d, rank Dφ = d^2 so the fibre has "
          "(N-1)d^2 dimensions; the Jacobian of W -> (C_p) restricted to ker Dφ has rank (N-1)d(d+1)/2; "
          "the O_d^{N-1} generators (ξ_p W_p - W_p ξ_{p-1}, ξ_p in so(d)) lie in ker Dφ ∩ ker DC and span "
          "(N-1)d(d-1)/2 = (N-1) dim St_{d,d}. For r < d only the orbit dimension (N-1)(rd - r(r+1)/2) = "
          "(N-1) dim St_{r,d} is checked; note dim St_{d-1,d} = dim O_d, so the full-rank orbit count only "
          "fails for r <= d-2.",
    catalogue="menon §2.2 R6, B3, O1; §4 E18",
)


def _dC(Ws) -> tuple[np.ndarray, np.ndarray]:
    """Jacobian of W -> (C_1..C_{N-1}) (upper triangles, C_p = W_{p+1}^TW_{p+1} - W_pW_p^T), and its abs version."""
    N, d = len(Ws), Ws[0].shape[0]
    iu = np.triu_indices(d)
    n = sum(w.size for w in Ws)
    widths = [d] * (N + 1)

    def apply(Ls, V):
        out = []
        for k in range(1, N):
            A, dA = dln.layer(Ls, k + 1), dln.layer(V, k + 1)
            B, dB = dln.layer(Ls, k), dln.layer(V, k)
            out.append((dA.T @ A + A.T @ dA - dB @ B.T - B @ dB.T)[iu])
        return np.concatenate(out) if out else np.zeros(0)

    J = np.array([apply(Ws, dln.unpack(e, widths)) for e in np.eye(n)]).T
    Ja = np.abs(np.array([apply(_abs(Ws), dln.unpack(e, widths)) for e in np.eye(n)]).T)
    return J, Ja


def _count_measure(p):
    d, N = p.d, p.N
    r = d if p.rank < 0 else p.rank
    lam, Qs, Ws = balanced_instance(d, N, p.seed, zeros=d - r)
    k = _chain_k([d] * (N + 1))
    so = [alpha(d, i, j) for (i, j) in pairs(d)]
    # array-API path (p.backend): the Jacobians and the orbit generators are assembled on the host, every rank
    # (SVD), null basis and product runs on the backend
    xp = xp_of(p)
    C, Cabs = _dC(Ws)
    O, Oabs = _gauge_basis(Ws, so), _gauge_basis(_abs(Ws), [np.abs(x) for x in so])
    has_O = bool(O.size)
    J, Jabs, C, Cabs = XM.to_xp(xp, [_dphi(Ws), _dphi(_abs(Ws)), C, Cabs])
    rphi, _, _, a1 = _rank(J, Jabs, k)
    K = _null_basis(J, rphi)
    rC, _, _, a2 = _rank(C @ K, Cabs @ xp.abs(K), 2 * d + N * d * d)
    if has_O:
        O, Oabs = XM.to_xp(xp, [O, Oabs])
    rO, _, _, a3 = _rank(O, Oabs, d + 1) if has_O else (0, None, 0.0, False)
    inside = XM.fro(J @ O) + XM.fro(C @ O) if has_O else 0.0
    inside_tol = 8 * _gamma(k + 2 * d) * (XM.fro(Jabs @ xp.abs(O)) + XM.fro(Cabs @ xp.abs(O))) if has_O else 0.0
    return {"r": r, "rank_Dphi": rphi, "fibre_dim": N * d * d - rphi, "rank_dC_on_fibre": rC,
            "orbit_dim": rO, "orbit_in_kernels_residual": inside, "orbit_in_kernels_tolerance": inside_tol,
            "ambiguous": a1 or a2 or a3, "lambda": lam.tolist(),
            "expected": {"fibre": (N - 1) * d * d, "fixed_by_G": (N - 1) * d * (d + 1) // 2,
                         "orbit": (N - 1) * (r * d - r * (r + 1) // 2)}}


@count.numeric(backends=("numpy", "cupy"))
def _count_numeric(p):
    """Ranks at a balanced point: fibre (N-1)d², G-constraints (N-1)d(d+1)/2 on it, orbit (N-1)dim St_{r,d}."""
    v = _count_measure(p)
    if v["ambiguous"]:
        return inconclusive("a singular value in the grey zone of the rounding model", **v)
    e = v["expected"]
    mismatch = abs(v["orbit_dim"] - e["orbit"]) + int(v["orbit_in_kernels_residual"] > v["orbit_in_kernels_tolerance"])
    if v["r"] == p.d:
        mismatch += abs(v["fibre_dim"] - e["fibre"]) + abs(v["rank_dC_on_fibre"] - e["fixed_by_G"])
        mismatch += abs(e["fibre"] - e["fixed_by_G"] - v["orbit_dim"])
    return Outcome(residual=mismatch, tolerance=0, values=v,
                   message=f"fibre {v['fibre_dim']}, fixed by G {v['rank_dC_on_fibre']}, orbit {v['orbit_dim']} "
                           f"(expected {e}); residual counts mismatches")


count.property(over=("d", "N", "seed"), max_examples=12)


#: the count of equations fixed by (G_N, ..., G_1) as printed, (N-1)d(d+1)/2, and misprints
COUNT_VARIANTS = {
    "stated": lambda d, N: (N - 1) * d * (d + 1) / 2,
    "typo_N_constants": lambda d, N: N * d * (d + 1) / 2,
    "sign_flipped": lambda d, N: (N - 1) * d * (d - 1) / 2,
}


def _count_prove(variant="stated"):
    """Identities (N-1)d^2 = fixed + (N-1) dim O_d, Nd^2 - fixed = (4.6), d(d-1)/2 - (d-r)(d-r-1)/2 = dim St_{r,d}
    (= rd - r(r+1)/2) with fixed the variant count; returns (failed, identities)."""
    d, N, r = sp.symbols("d N r")
    fixed = COUNT_VARIANTS[variant](d, N)
    ids = [(N - 1) * d ** 2 - (fixed + (N - 1) * d * (d - 1) / 2),
           N * d ** 2 - fixed - (d ** 2 + (N - 1) * d * (d - 1) / 2),
           d * (d - 1) / 2 - (d - r) * (d - r - 1) / 2 - (r * d - r * (r + 1) / 2)]
    return sum(1 for e in ids if sp.expand(e) != 0), ids


@count.symbolic(timeout=30)
def _count_symbolic(p):
    """(N-1)d² = (N-1)d(d+1)/2 + (N-1)d(d-1)/2, Nd² - (N-1)d(d+1)/2 = (4.6), d(d-1)/2 - (d-r)(d-r-1)/2 = dim St_{r,d}."""
    bad, ids = _count_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "identities": [str(i) for i in ids]},
                   message="identities that did not expand to zero")


@count.mutant({
    "typo_N_constants": "N d(d+1)/2 equations fixed by the N constants as read literally",
    "sign_flipped": "(N-1)d(d-1)/2 equations fixed (d-1 for d+1)",
}, timeout=30)
def _count_mutant(p, variant):
    """The count perturbed, through the same procedure: an identity must fail."""
    bad, ids = _count_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"remainders": [str(sp.factor(i)) for i in ids]},
                   message=f"{bad} of 3 count identities failed for {variant}")


@count.falsifier("typo_n_constants")
def _count_typo(p):
    """Read literally, N constants (G_N, ..., G_1) fix N d(d+1)/2: the orbit would have (N-1)d² - N d(d+1)/2 dims."""
    v = _count_measure(p.replace(rank=-1))
    wrong = (p.N - 1) * p.d ** 2 - p.N * p.d * (p.d + 1) // 2
    return Outcome(residual=abs(v["orbit_dim"] - wrong), tolerance=0, values={**v, "typo_prediction": wrong},
                   message=f"measured orbit dimension {v['orbit_dim']} vs {wrong} from N constants")


@count.falsifier("full_rank_count_at_rank_deficient", fixed={"rank": 1})
def _count_rank_deficient(p):
    """At rank r <= d-2 the O_d count (N-1)d(d-1)/2 fails; the orbit has (N-1)dim St_{r,d} dimensions.

    (r = d-1 is no counterexample: St_{d-1,d} = SO(d) has the dimension of O_d.)"""
    if p.rank < 0 or p.rank > p.d - 2:
        raise ParamError("this falsifier needs 0 <= rank <= d - 2 (dim St_{d-1,d} = dim O_d)")
    v = _count_measure(p)
    wrong = (p.N - 1) * p.d * (p.d - 1) // 2
    return Outcome(residual=abs(v["orbit_dim"] - wrong), tolerance=0, values={**v, "full_rank_count": wrong},
                   message=f"orbit dimension {v['orbit_dim']} at rank {v['r']} vs (N-1)d(d-1)/2 = {wrong}")


@count.reproduction
def _count_reproduction(p):
    """Catalogue §2.2 B3/R6 at d = 3, N = 4: rank of d(C_p) = 18 = (N-1)d(d+1)/2."""
    quoted = 18
    v = _count_measure(count.resolve({"d": 3, "N": 4, "seed": 0}))
    C, Cabs = _dC(balanced_instance(3, 4, 0)[2])
    rank_dC = _rank(C, Cabs, 6 + 36)[0]
    return Outcome(residual=abs(rank_dC - quoted) + abs(v["rank_dC_on_fibre"] - quoted), tolerance=0,
                   values={"rank_dC": rank_dC, "rank_dC_on_fibre": v["rank_dC_on_fibre"], "quoted": quoted},
                   message="rank of W -> (C_p) on M^N and on the fibre, compared exactly")


# ===========================================================================
# R7  Remark 7: (4.23) and the N = 2 identity
norm = Claim(
    id="menon.norm_identity",
    title="Remark 7: |W_{p+1}|² = |W_p|² - Tr G_p (4.23), and |W_2W_1|² = Tr K² - Tr GK for N = 2",
    label="Remark 7",
    section="4.4",
    equation="(4.23), (4.2)",
    lines=(300, 308),
    statement=r"\|W_{p+1}\|^2=\operatorname{Tr}(W_{p+1}^TW_{p+1})=\operatorname{Tr}(W_pW_p^T-G_p)=\|W_p\|^2-"
              r"\operatorname{Tr}G_p;\quad N=2:\ \|W_2W_1\|^2=\operatorname{Tr}K^2-\operatorname{Tr}GK,\ K=W_1W_1^T",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width", search=(1, 5)),
        Param.int("N", 3, 2, 8, "depth (the product identity is checked when N = 2, on (W_2, W_1) otherwise)",
                  search=(2, 5)),
        Param.seed("seed of the layers and of the target Y of E = 1/2|W - Y|^2"),
        Param.float("T", 0.5, 0.0, 5.0, "time of the gradient flow (3.5) at which (4.23) is checked with G_p from "
                    "t = 0 (T = 0: the trace of the definition of G, inconclusive)"),
        Param.float("h", 0.01, 0.0, 0.1, "step of the implicit midpoint rule (a step whose fixed-point iteration "
                    "does not converge is split, as in menon.balanced_invariance)", low_open=True),
    ],
    notes="Convention (4.2): G_p = W_pW_p^T - W_{p+1}^TW_{p+1} (= -C_p; E1). Remark 7 uses (4.23) as a uniform "
          "bound along the flow: G_p is fixed by the initial point and W_p = W_p(t).  The numeric check therefore "
          "takes G_p from W(0) and evaluates (4.23) and the N = 2 identity at W(T) (implicit midpoint for "
          "E = 1/2|W - Y|^2, which conserves each C_p exactly up to rounding); at one point with G computed "
          "from that point (T = 0) (4.23) is the trace of the definition, true for every W, so T = 0 is "
          "inconclusive (audit rmen8: the check was only that).  The N = 2 identity (catalogue §2.2 R7) gives "
          "|K|^2 - |G||K| <= |W|^2, the only part of the "
          "'equivalence' of bounds on |W_1| and |W| that is checked (the general-N claim is stated without proof). "
          "Falsifier: the (4.8) sign convention G_p = W_{p+1}^TW_{p+1} - W_pW_p^T in the same formulas.",
    catalogue="menon §2.2 R7; §4 E1",
)


def _norm_outcome(p, sign=+1):
    """G_p from W(0) (convention (4.2); sign = -1: the (4.8) convention), (4.23) and the N = 2 identity at W(T)
    after the gradient flow.  Array-API path: the layers are drawn and integrated on the host (implicit midpoint,
    CPU-only), every trace and norm is computed on p.backend."""
    rng = np.random.default_rng(p.seed)
    d, N = p.d, p.N
    xp = xp_of(p)
    widths = [d] * (N + 1)
    Ws0 = dln.random_layers(widths, rng)
    G = [sign * (-c) for c in dln.conserved(XM.to_xp(xp, Ws0))]  # (4.2): G_p = W_pW_p^T - W_{p+1}^TW_{p+1} = -C_p
    drift_tol, n_steps = 0.0, 0
    if p.T > 0:
        bad = too_many_steps(p.T, p.h)
        if bad:
            return bad
        from theorems.menon.invariance import integrate
        Y = rng.standard_normal((d, d))
        WsT, n_steps, _ = integrate(p, widths, Ws0, dln.make_args(widths, Y))
        if WsT is None:
            return inconclusive(f"implicit midpoint did not converge with h={p.h} even after splitting steps "
                                f"({n_steps} substeps): take a smaller T", substeps=n_steps)
        # implicit midpoint conserves each quadratic C_p exactly; rounding and the fixed-point stop add
        # ~8 d eps max_p |W_p|^2 per substep (the error model of menon.balanced_sign_convention)
        drift_tol = (n_steps + 1) * 8 * d * EPS * max(float(np.sum(w * w)) for w in list(Ws0) + list(WsT))
        Ws0 = WsT
    Ws = XM.to_xp(xp, Ws0)
    sq = lambda A: XM.vdot(A, A)  # noqa: E731  |A|_F^2
    tr = lambda A: float(xp.linalg.trace(A))  # noqa: E731
    res423, tol423 = 0.0, 0.0
    for k in range(1, N):
        lhs = sq(dln.layer(Ws, k + 1))
        rhs = sq(dln.layer(Ws, k)) - tr(G[k - 1])
        res423 = max(res423, abs(lhs - rhs))
        # rounding: each trace/norm is a sum of d^2 products of d terms: gamma_{2d} (|W_p|^2 + |W_{p+1}|^2) each
        tol423 = max(tol423, 4 * _gamma(2 * d + 2) * (sq(dln.layer(Ws, k)) + sq(dln.layer(Ws, k + 1)))
                     + np.sqrt(d) * drift_tol)  # |Tr dG| <= sqrt(d) |dG|_F
    W2, W1 = dln.layer(Ws, 2), dln.layer(Ws, 1)
    K, G1 = W1 @ W1.T, G[0]
    lhs = sq(W2 @ W1)
    rhs = tr(K @ K) - tr(G1 @ K)
    a1, a2 = sq(W1), sq(W2)
    # rounding: products of up to 4 layer factors with d-term inner sums; absolute scale |W_1|^2(|W_1|^2+|W_2|^2)
    tol2 = 8 * _gamma(4 * d + 4) * (a1 * (a1 + a2) + a1 * a2) + drift_tol * a1  # |Tr(dG K)| <= |dG|_F |K|_F
    res2 = abs(lhs - rhs)
    ineq = XM.fro(K) ** 2 - XM.fro(G1) * XM.fro(K) - lhs
    values = {"max_residual_4_23": res423, "tol_4_23": tol423, "product_lhs": lhs, "product_rhs": rhs,
              "product_residual": res2, "tol_product": tol2,
              "inequality_|K|^2-|G||K|-|W|^2": ineq, "convention": "(4.2)" if sign > 0 else "(4.8)",
              "T": p.T, "substeps": n_steps, "conservation_tolerance": drift_tol}
    res = max(res423 / tol423, res2 / tol2) if tol423 > 0 else res2 / tol2
    return Outcome(residual=res, tolerance=1.0, values=values,
                   message="max over (4.23) for all p and the N=2 product identity at W(T), G from W(0), of "
                           "|lhs - rhs| / (rounding + conservation bound)")


@norm.numeric(backends=("numpy", "cupy"))
def _norm_numeric(p):
    """(4.23) for every p and |W_2W_1|² = Tr K² - Tr GK at W(T) with G_p from W(0), in the (4.2) convention."""
    if p.T == 0:
        return inconclusive("T = 0: with G_p computed from the same point, (4.23) and the N = 2 identity are the "
                            "trace of the definition of G_p (true for every W); Remark 7's bound is along the flow, "
                            "T > 0")
    out = _norm_outcome(p)
    if "tol_product" in out.values and out.values["inequality_|K|^2-|G||K|-|W|^2"] > out.values["tol_product"]:
        out.residual = max(out.residual, 2.0)
        out.message += "; the inequality |K|^2 - |G||K| <= |W_2W_1|^2 fails"
    return out


norm.property(over=("d", "N", "seed"), max_examples=20)


#: G and K of Remark 7 in convention (4.2), and the nearest misprints: (W2, W1) -> (G, K)
NORM_VARIANTS = {
    "stated": lambda W2, W1: (W1 * W1.T - W2.T * W2, W1 * W1.T),
    "sign_flipped": lambda W2, W1: (W2.T * W2 - W1 * W1.T, W1 * W1.T),   # the (4.8) sign
    "K_transposed": lambda W2, W1: (W1 * W1.T - W2.T * W2, W1.T * W1),
}


def _norm_prove(variant="stated"):
    """Nonzero remainders of (4.23) and |W_2W_1|^2 - Tr K^2 + Tr GK for symbolic W_2, W_1 (d = 2, 3)."""
    bad = 0
    for d in (2, 3):
        W2 = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"a_{i}{j}"))
        W1 = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"b_{i}{j}"))
        G, K = NORM_VARIANTS[variant](W2, W1)
        bad += int(sp.expand((W2.T * W2).trace() - ((W1 * W1.T).trace() - G.trace())) != 0)
        P = W2 * W1
        bad += int(sp.expand((P.T * P).trace() - (K * K).trace() + (G * K).trace()) != 0)
    return bad


@norm.symbolic(timeout=30)
def _norm_symbolic(p):
    """Symbolic W_2, W_1 (d = 2, 3): (4.23) and |W_2W_1|² - Tr K² + Tr GK expand to 0."""
    bad = _norm_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "d": [2, 3],
                                                      "proved": "(4.23) and the N=2 identity in convention (4.2)"},
                   message="identities that did not expand to zero")


@norm.mutant({
    "sign_flipped": "G = W_2^TW_2 - W_1W_1^T (the (4.8) sign) in (4.23) and the N = 2 identity",
    "K_transposed": "K = W_1^TW_1 for W_1W_1^T in the N = 2 identity",
}, timeout=30)
def _norm_mutant(p, variant):
    """Remark 7 perturbed, through the same procedure: an identity must fail."""
    bad = _norm_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} of 4 identities did not expand to zero ({variant})")


@norm.falsifier("convention_4_8", search=("seed",), backends=("numpy", "cupy"))
def _norm_flipped(p):
    """The (4.8) sign G_p = W_{p+1}^TW_{p+1} - W_pW_p^T in (4.23) and the N = 2 identity: both fail."""
    return _norm_outcome(p, sign=-1)
