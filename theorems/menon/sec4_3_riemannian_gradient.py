"""Menon §4.3 (seed lines 242-290): the operator A_{N,W} and the Riemannian gradient of g^N.

The operator A_{N,W} (4.14) and its transpose rule (erratum E4), the Riemannian gradient (4.19)
(erratum E5) and Thm 3 (4.21)-(4.22).  Conventions and error models: see ``theorems/menon/_metric.py``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.integrate import solve_ivp

from solvers import dln, rk
from solvers import xp_menon as X
from solvers.xp import namespace, xp_of
from theorems import matrices as M
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

from ._common import EPS, balanced_instance, rng_for
from ._metric import (FLOW_MAX_STEPS, KAPPA_MAX, SAFETY, _a_mat, _a_op, _count_nonzero, _kappa, _random_W, _svd, _sym_A,
                      _sym_balanced, _validate_zeros, vec_)


# ---------------------------------------------------------------------------
# menon.a_operator_transpose  (A1 with E4)
def _validate_WZ(p):
    for name in ("W", "Z"):
        M = p[name]
        if M is not None and (M.ndim != 2 or M.shape[0] != M.shape[1]):
            raise ParamError(f"parameter {name} must be a square matrix, got shape {M.shape}")
    if p.W is not None and p.Z is not None and p.W.shape != p.Z.shape:
        raise ParamError(f"parameters W and Z must have the same shape, got {p.W.shape} and {p.Z.shape}")
    if p.W is None and p.Z is not None and p.Z.shape != (p.d, p.d):  # W drawn from the seed at width d
        raise ParamError(f"parameter Z must be d x d = {p.d} x {p.d} (the seeded W), got shape {p.Z.shape}")
    if p.get("zeros", 0) and p.zeros > p.d - 1:
        raise ParamError(f"parameter zeros={p.zeros} must be <= d-1={p.d - 1}")


def _W_Z(p, k=1):
    """W (given, or Gaussian from the seed with `zeros` zero singular values) and k matrices Z."""
    if p.W is not None:
        W = np.array(p.W, float)
    else:
        W = _random_W(p.d, p.seed)
        if p.get("zeros", 0):
            U, s, V = _svd(W)
            s[len(s) - p.zeros:] = 0.0
            W = U @ np.diag(s) @ V.T
    d = W.shape[0]
    rng = rng_for(p.seed + 31337)
    Zs = [np.array(p.Z, float) if (p.Z is not None and i == 0) else rng.standard_normal((d, d)) for i in range(k)]
    return W, Zs


transpose = Claim(
    id="menon.a_operator_transpose",
    title="Transpose rule for A_{N,W}; A is Frobenius self-adjoint and positive definite, so (4.17) holds",
    label="A1, E4",
    section="4.3",
    equation="(4.14)-(4.17)",
    lines=(242, 264),
    statement=r"(\mathcal A_{N,W}(Z))^T=\mathcal A_{N,W}(Z^T)\ \Longrightarrow\ "
              r"g^N(W)(Z_1,Z_2)=\mathrm{Tr}(Z_1^T\mathcal A_{N,W}^{-1}Z_2)",
    status="erratum",
    corrected=r"(\mathcal A_{N,W}(Z))^T=\mathcal A_{N,W^T}(Z^T);\ \mathcal A_{N,W}\text{ is Frobenius "
              r"self-adjoint and positive definite for invertible }W,\text{ hence (4.17)}",
    params=[
        Param.int("d", 3, 1, 8, "width (ignored when W is given)", search=(1, 4)),
        Param.int("N", 4, 1, 8, "depth", search=(1, 5)),
        Param.seed("seed of W (Gaussian) and Z"),
        Param.int("zeros", 0, 0, 7, "zero singular values forced on the seeded W (drops invertibility)"),
        Param.matrix("W", None, "a square matrix of your own", shape=("d", "d"),
                     families=M.DEFAULT_FAMILIES + ("spd", "seed")),
        Param.matrix("Z", None, "the tangent vector Z (same shape as W)", shape=("d", "d"),
                     families=("gaussian", "symmetric", "rank_deficient", "seed")),
        Param.int("batch", 1, 1, 100_000, "number of seeded instances checked at once as stacked arrays "
                  "(array API: NumPy, or CuPy with --backend cupy)"),
    ],
    validate=_validate_WZ,
    notes="The printed identity holds when W is symmetric (or d = 1) and fails otherwise; (4.17) itself is "
          "right, because A is self-adjoint (Lemma 1), not because of line 262.  The parts certified: the "
          "corrected transpose rule, symmetry of the matrix of A, its positive definiteness (smallest "
          "eigenvalue above its rounding bound) and (4.17) from the polarization identity (4.13)."
          "  Tolerance/residual at the defaults ~3e4 (audit rmen8): the worst-case bound SAFETY N d eps kappa"
          " (kappa = 30 there) of the _metric docstring, against ~1 eps of observed rounding; kept as a bound,"
          " not tuned.  Where the smallest eigenvalue lies inside its rounding bound (invertible W with"
          " kappa(WW^T) ~ 1e8-1e9, below KAPPA_MAX) its sign is undecidable and the check is inconclusive; it was"
          " refuted there (audit rmen8: W = diag(1, 0.5, 3e-5), N = 4).",
    catalogue="menon §2.3 A1; §4 E4",
)


def _transpose_parts(p, printed=False):
    W, (Z, Z2) = _W_Z(p, 2)
    N, d = p.N, W.shape[0]
    s = np.linalg.svd(W, compute_uv=False)
    kappa, rank = _kappa(s)
    if kappa > KAPPA_MAX:
        return None, inconclusive(f"kappa(WW^T)={kappa:.3g} is too close to the psd_power cutoff", kappa=kappa)
    AZ = _a_op(W, Z, N)
    nA = max(float(np.linalg.norm(AZ)), 1e-300)
    rel = SAFETY * N * d * EPS * kappa  # relative rounding of any A evaluation (the _metric module docstring)
    other = _a_op(W, Z.T, N) if printed else _a_op(W.T, Z.T, N)
    parts = {"transpose_rule": (float(np.linalg.norm(AZ.T - other)) / nA, rel)}
    vals = {"kappa": kappa, "rank": rank, "d": d}
    return (parts, W, Z, Z2, rel, vals), None


def transpose_batched(p):
    """The corrected rule on ``batch`` seeded instances at once, as stacked arrays through the array API
    (``solvers.dln.a_operator`` broadcasts over the leading axis; NumPy, CuPy and array-api-strict alike):
    transpose rule, Frobenius self-adjointness <A(Z1), Z2> = <Z1, A(Z2)> and <Z, A(Z)> > 0.
    Error model per instance: the same relative rounding SAFETY * N * d * eps * kappa(WW^T) as the single
    check; instances with kappa > KAPPA_MAX are left out and counted (not decided in floating point)."""
    from solvers.xp import asnumpy, backend_namespace
    xp = backend_namespace(p.backend)
    # instance 0 is the single check's (the given or seeded W with its forced zeros, Z and Z2); the other
    # batch - 1 are Gaussian, from a generator of their own
    W0, (Z0, Z20) = _W_Z(p, 2)
    d, N = W0.shape[0], p.N
    rest = np.random.default_rng((p.seed, 0x7A)).standard_normal((3, p.batch - 1, d, d))
    W = np.concatenate([np.asarray(W0, float)[None], rest[0]])
    Z1 = np.concatenate([np.asarray(Z0, float)[None], rest[1]])
    Z2 = np.concatenate([np.asarray(Z20, float)[None], rest[2]])
    B = W.shape[0]
    s = np.linalg.svd(W, compute_uv=False)
    kappa = np.where(s[:, -1] > 0, (s[:, 0] / np.where(s[:, -1] > 0, s[:, -1], 1.0)) ** 2, np.inf)
    keep = kappa <= KAPPA_MAX
    if not np.any(keep):
        return inconclusive("every instance has kappa(WW^T) above KAPPA_MAX", kappa_min=float(kappa.min()))
    W, Z1, Z2, kappa = W[keep], Z1[keep], Z2[keep], kappa[keep]
    rel = SAFETY * N * d * EPS * kappa
    Wx, Z1x, Z2x = xp.asarray(W), xp.asarray(Z1), xp.asarray(Z2)
    T = xp.matrix_transpose
    A1, A2 = dln.a_operator(Wx, Z1x, N), dln.a_operator(Wx, Z2x, N)
    rule = dln.a_operator(T(Wx), T(Z1x), N)

    def fro(X):
        return asnumpy(xp.sqrt(xp.sum(X * X, axis=(-2, -1))))

    def inner(X, Y):
        return asnumpy(xp.sum(X * Y, axis=(-2, -1)))
    nA1 = fro(A1)
    tiny = 1e-300  # a zero Z (a legal tangent vector, e.g. the given Z = 0) makes A(Z) = 0: 0/0 was NaN -> error
    r_rule = fro(T(A1) - rule) / np.maximum(nA1, tiny)
    scale = nA1 * fro(Z2x) + fro(Z1x) * fro(A2)
    r_adj = np.abs(inner(A1, Z2x) - inner(Z1x, A2)) / np.maximum(scale, tiny)
    nZ1 = fro(Z1x)
    q = inner(Z1x, A1) / np.maximum(nZ1 * nA1, tiny)  # <Z, A(Z)> / (|Z| |A(Z)|) must exceed its rounding bound
    # positivity is about Z != 0: a zero Z makes no claim (its ratio is 0)
    pos = np.where(nZ1 == 0, 0.0, np.where(q > 0, rel / np.where(q > 0, q, 1.0), np.inf))
    parts = {"transpose_rule": (float(np.max(r_rule / rel)), 1.0),
             "self_adjoint": (float(np.max(r_adj / rel)), 1.0),
             "positive": (float(np.max(pos)), 1.0)}
    return Outcome.from_parts(parts, f"corrected line 262 on {len(kappa)} stacked instances ({p.backend})", {
        "instances": int(len(kappa)), "left_out_ill_conditioned": int(np.sum(~keep)),
        "max_kappa": float(kappa.max()), "worst_transpose_rule_relative": float(r_rule.max())})


@transpose.numeric(backends=("numpy", "cupy"))
def _(p):
    """Corrected transpose rule, self-adjointness, positive definiteness and (4.17) at W, Z."""
    if p.batch > 1 or p.backend in ("cupy", "array_api_strict"):
        return transpose_batched(p)
    return _transpose_numeric(p, gate=True)


def _transpose_numeric(p, gate):
    """gate: positive definiteness and (4.17) are claimed for invertible W only; a numerically singular W
    (rank below d on the psd_power cutoff) gets the transpose rule and self-adjointness checked and is
    otherwise inconclusive (the falsifier singular_W runs ungated)."""
    got, bad = _transpose_parts(p)
    if bad is not None:
        return bad
    parts, W, Z, Z2, rel, vals = got
    d, N = W.shape[0], p.N
    M = _a_mat(W, N)
    nM = max(float(np.linalg.norm(M, 2)), 1e-300)
    parts["self_adjoint"] = (float(np.linalg.norm(M - M.T, 2)) / nM, rel)
    if gate and vals["rank"] < d:
        out = Outcome.from_parts(parts, "transpose rule + self-adjoint at a singular W", dict(vals))
        if out.decide() != "certified":
            return out
        return inconclusive(f"W is singular (rank {vals['rank']} < d = {d}): the transpose rule and self-adjointness "
                            f"hold, positive definiteness and (4.17) are claimed for invertible W only", **vals)
    ev = np.linalg.eigvalsh((M + M.T) / 2)
    # positive definite: smallest eigenvalue above the eigenvalue rounding bound rel * |M|
    margin = float(ev[0]) / nM
    parts["positive_definite"] = (rel / margin if margin > 0 else math.inf, 1.0)
    vals.update({"min_eigenvalue": float(ev[0]), "max_eigenvalue": float(ev[-1])})
    if margin > 0:
        cond = float(ev[-1] / ev[0])
        g = lambda X, Y: float(vec_(X) @ np.linalg.solve(M, vec_(Y)))  # noqa: E731  Tr(X^T A^{-1} Y)
        polar = 0.25 * (g(Z + Z2, Z + Z2) - g(Z - Z2, Z - Z2))
        direct = g(Z, Z2)
        nZ, nZ2 = float(np.linalg.norm(Z)), float(np.linalg.norm(Z2))
        # the scale of the rounding: polar is 1/4 of a difference of g(Z +- Z2, Z +- Z2), each rounded relative
        # to |Z +- Z2|^2 / ev_min, which sum to 2(|Z|^2 + |Z2|^2) (parallelogram); direct to |Z||Z2| / ev_min.
        # (Scaling by |Z||Z2| alone failed for |Z| << |Z2|: Z = 9e-34 I, where the difference cancels.)
        sc = max((0.5 * (nZ * nZ + nZ2 * nZ2) + nZ * nZ2) / float(ev[0]), 1e-300)
        # error model: a solve with cond(A), d^2 unknowns, on top of A's own rounding
        parts["polarization_4_17"] = (abs(polar - direct) / sc, SAFETY * d * d * EPS * cond + rel * cond)
        vals.update({"g_polarization": polar, "g_4_17": direct, "cond_A": cond})
    out = Outcome.from_parts(parts, "corrected line 262 + self-adjoint + positive definite + (4.17)", vals)
    if gate and abs(margin) <= rel and out.values["worst_part"] == "positive_definite":
        # the smallest eigenvalue of the matrix of A lies within its rounding bound rel |A| (kappa(WW^T) large but
        # below KAPPA_MAX, e.g. 1e8-1e9): its sign is not decided in floating point; every other part holds.
        # (audit rmen8: W = diag(1, 0.5, 3e-5), N = 4 was refuted here although W is invertible)
        return inconclusive(f"the smallest eigenvalue of A_(N,W), {float(ev[0]):.3g} (relative {margin:.3g}), lies "
                            f"within its rounding bound (relative {rel:.3g}, kappa(WW^T) = {vals['kappa']:.3g}): "
                            f"positive definiteness is not decidable at this precision",
                            **{k: v for k, v in out.values.items()})
    return out


transpose.property(over=("d", "N", "seed", "W", "Z"), max_examples=15)


@transpose.falsifier("stated", search=("seed", "d"))
def _(p):
    """The printed identity (A_{N,W}(Z))^T = A_{N,W}(Z^T) on a non-symmetric W."""
    got, bad = _transpose_parts(p, printed=True)
    if bad is not None:
        return bad
    parts, W, Z, Z2, rel, vals = got
    return Outcome.from_parts(parts, "printed line 262", vals)


@transpose.falsifier("singular_W", search=("seed",), fixed={"zeros": 2})
def _(p):
    """Drop invertibility: with two zero singular values (N >= 2) A_{N,W} is singular, not positive definite."""
    return _transpose_numeric(p, gate=False)


def _sym_a_op(P, R, Z, N):
    """A_{N,W}(Z) = sum_k P^{N-k} Z R^{k-1} (4.14) with P = (WW^T)^{1/N}, R = (W^TW)^{1/N}."""
    return sum((P ** (N - k) * Z * R ** (k - 1) for k in range(1, N + 1)), sp.zeros(*Z.shape))


#: right-hand side of the transpose rule: the corrected A_{N,W^T}(Z^T) (for W^T the roles of P and R swap), the
#: printed A_{N,W}(Z^T), and the rule with the transpose on Z dropped
TRANSPOSE_VARIANTS = {
    "corrected": lambda P, R, Z, N: _sym_a_op(R, P, Z.T, N),
    "as_printed": lambda P, R, Z, N: _sym_a_op(P, R, Z.T, N),
    "Z_not_transposed": lambda P, R, Z, N: _sym_a_op(R, P, Z, N),
}


def _transpose_prove(variant="corrected", depths=range(1, 6)):
    """Depths N at which (A_{N,W}(Z))^T (sympy's matrix transpose of the definition) minus the rule's right-hand
    side leaves a nonzero entry, with P, R generic symmetric 2 x 2 matrices of free symbols (psd powers are
    symmetric) and Z a generic 2 x 2 matrix of free symbols."""
    P = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"p{min(i, j)}{max(i, j)}"))
    R = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"r{min(i, j)}{max(i, j)}"))
    Z = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"z{i}{j}"))
    return [N for N in depths
            if _count_nonzero(_sym_a_op(P, R, Z, N).T - TRANSPOSE_VARIANTS[variant](P, R, Z, N)) > 0]


@transpose.symbolic(timeout=60)
def _(p):
    """With P = (WW^T)^{1/N}, R = (W^TW)^{1/N} generic symmetric symbolic 2 x 2 matrices and Z free, the matrix
    transpose of A_W(Z) equals A_{W^T}(Z^T) entrywise (N = 1..5); the printed right-hand side differs for N >= 2."""
    bad = _transpose_prove()
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy matrix transpose + expand, symmetric P, R of free symbols", "instances": "d=2, N = 1..5",
        "printed_differs_for_N": _transpose_prove("as_printed"),
        "proved": "(A_{N,W}(Z))^T = A_{N,W^T}(Z^T) for any symmetric P, R (so for every W)"},
        message="number of depths where the corrected rule did not expand to zero")


@transpose.mutant({
    "as_printed": "(A_{N,W}(Z))^T = A_{N,W}(Z^T), the printed line 262 (W not transposed)",
    "Z_not_transposed": "(A_{N,W}(Z))^T = A_{N,W^T}(Z) (the transpose on Z dropped)",
}, timeout=60)
def _(p, variant):
    """The rule perturbed, through the same procedure: it must fail at some depth."""
    bad = _transpose_prove(variant)
    return Outcome(residual=len(bad), tolerance=0, values={"failing_depths": bad},
                   message=f"the {variant} rule left nonzero entries at {len(bad)} of 5 depths (N = {bad})")


# ---------------------------------------------------------------------------
# menon.riemannian_gradient  (A2 with E5)
Q_QUARTIC = 0.5


def _energy(Wc, Y):
    """E(W) = 1/2 sum R_ij^2 + q/4 (sum R_ij^2)^2, R = W - Y, written without conjugation so that it is
    holomorphic in the entries (for the complex-step derivative); any array-API backend."""
    R = Wc - Y
    s = _xsum(R * R)
    return 0.5 * s + Q_QUARTIC / 4 * s * s


def _xsum(A):
    return namespace(A).sum(A)


def _energy_grad(W, Y):
    R = W - Y
    return R * (1 + Q_QUARTIC * _xsum(R * R))


gradient = Claim(
    id="menon.riemannian_gradient",
    title="The Riemannian gradient of E for g^N is A_{N,W}(E'(W))",
    label="A2, E5",
    section="4.3",
    equation="(4.18)-(4.19)",
    lines=(266, 272),
    statement=r"dE(W)(Z)=\mathrm{Tr}(Z^TE'(W)),\quad g^N(\mathrm{grad}_{g^N}E(W),Z)="
              r"\mathrm{Tr}(Z^T\mathcal A_{N,W}^{-1}E'(W))",
    status="erratum",
    corrected=r"g^N(\mathrm{grad}_{g^N}E(W),Z)=\mathrm{Tr}(Z^T\mathcal A_{N,W}^{-1}\mathrm{grad}_{g^N}E(W))"
              r"=\mathrm{Tr}(Z^TE'(W)),\ \text{i.e. }\mathrm{grad}_{g^N}E=\mathcal A_{N,W}(E'(W))",
    params=[
        Param.int("d", 3, 1, 8, "width", search=(1, 4)),
        Param.int("N", 4, 1, 8, "depth (N = 1: A = I and both forms agree)", search=(1, 5)),
        Param.seed("seed of W, Y and Z"),
    ],
    notes="E(W) = 1/2|W-Y|^2 + 1/8|W-Y|^4 (not quadratic, so E' is not affine).  dE(W)(Z) is computed "
          "independently of E' by the complex-step derivative Im E(W + i h Z)/h, h = 1e-30 (exact to rounding). "
          "The printed (4.19) would make grad E = E'; with it (4.15) would not be the gradient flow."
          "  Tolerance/residual at the defaults ~2e5 (audit rmen8): SAFETY (N d eps kappa + d^2 eps) cond(A)"
          " |E'||Z| with kappa = 30 and cond(A) = 13 is the first-order worst case of a psd_power and a solve;"
          " the observed difference is a few eps |E'||Z|.  Kept as a bound, not tuned.",
    catalogue="menon §2.3 A2; §4 E5",
)


def _gradient_check(p, printed=False):
    rng = rng_for(p.seed)
    d, N = p.d, p.N
    W, Y, Z = (rng.standard_normal((d, d)) for _ in range(3))
    h = 1e-30
    # array-API path: host draws moved to p.backend (the complex-step point W + i h Z formed on the host)
    xp = xp_of(p)
    Wc = X.to_xp(xp, [W + 1j * h * Z])[0]
    W, Y, Z = X.to_xp(xp, [W, Y, Z])
    s = X.host(xp.linalg.svdvals(W))
    kappa, rank = _kappa(s)
    if rank < d or kappa > KAPPA_MAX:
        return inconclusive("W is (numerically) singular: g^N needs A_{N,W} invertible", kappa=kappa)
    Ep = _energy_grad(W, Y)
    dE = float(xp.imag(_energy(Wc, Y))) / h  # complex step: no cancellation
    M = _a_mat(W, N)
    ev = X.host(xp.linalg.eigvalsh(M))
    cond = float(ev[-1] / ev[0])
    grad = Ep if printed else _a_op(W, Ep, N)
    g = X.vdot(vec_(grad), xp.linalg.solve(M, vec_(Z)))  # g^N(grad, Z) = Tr(grad^T A^{-1} Z) (4.17)
    res = abs(g - dE)
    scale = X.fro(Ep) * X.fro(Z)
    # error model: A rounding (N d eps kappa) and a solve with cond(A) over d^2 unknowns
    tol = SAFETY * (N * d * EPS * kappa + d * d * EPS) * cond * scale
    return Outcome(residual=res, tolerance=tol,
                   values={"g_grad_Z": g, "dE_Z": dE, "trace_ZT_Eprime": X.vdot(Z, Ep),
                           "cond_A": cond, "kappa": kappa},
                   message=("printed: grad E = E'" if printed else "grad E = A(E')")
                           + ": |g^N(grad E, Z) - dE(W)(Z)|")


@gradient.numeric(backends=("numpy", "cupy"))
def _(p):
    """g^N(A(E'), Z) = dE(W)(Z) with dE by complex step."""
    return _gradient_check(p)


gradient.property(over=("d", "N", "seed"), max_examples=15)


@gradient.falsifier("stated", search=("seed", "d"), backends=("numpy", "cupy"))
def _(p):
    """The printed (4.19): grad E = E', so g^N(grad E, Z) = Tr(Z^T A^{-1} E') != dE(Z) (N >= 2, d >= 1)."""
    return _gradient_check(p, printed=True)


# ---------------------------------------------------------------------------
# menon.riemannian_gradient_flow  (Thm 3)
flow = Claim(
    id="menon.riemannian_gradient_flow",
    title="(4.11) is the Riemannian gradient flow of E on (M_r, g^N): dissipation and rank preservation",
    label="Thm 3",
    section="4.3",
    equation="(4.20)-(4.22)",
    lines=(274, 290),
    statement=r"\dot W=-\mathrm{grad}_{g^N}E(W)\ \text{on}\ (\mathfrak M_r,g^N),\quad "
              r"\frac{dE(W(t))}{dt}=-\|\mathrm{grad}_{g^N}E\|_{g^N}^2\le0",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width", search=(1, 4)),
        Param.int("N", 4, 1, 8, "depth", search=(2, 5)),
        Param.seed("seed of the balanced point and E'"),
        Param.int("zeros", 0, 0, 7, "zero singular values (a point of M_r, r = d - zeros)", search=(0, 2)),
        Param.float("T", 0.0, 0.0, 5.0, "0: identities at the point; T > 0: integrate (4.11) for E = 1/2|W-Y|^2 "
                    "to time T and check that the rank stays r and E(T) - E(0) = -int |grad E|^2_{g^N} dt"),
    ],
    validate=_validate_zeros,
    notes="T > 0: (4.11) integrated by dopri5 together with e' = -Tr(E'^T A(E')) (the dissipation (4.22)) "
          "(by LSODA where the flow is stiff, |A_(N,W)| ~ N sigma_max^(2-2/N) ~ 1e4 at d = N = 8, and dopri5 "
          "exceeds its step cap: there the rank tolerance's worst-case rounding term, steps N d eps kappa |W| with "
          "kappa(lambda^N) ~ 1e7, is ~0.3 against a measured sigma_(r+1) ~ 1e-11, so the rank part separates only "
          "O(1) growth such as depth_one_flow's; at N = 1 the rank part is not claimed and left out, the dissipation "
          "identities are checked); "
          "the loose-vs-tight (rtol 1e-8 / 1e-10) difference bounds the integration error.  At a point of M_r (balanced, rank r) with E' free: (i) the upstairs dissipation sum_p |D_p|^2 "
          "equals Tr(E'^T A(E')) = |grad E|^2_{g^N} (so dL/dt = dE/dt: overparametrization does not change "
          "the speed); (ii) on full rank, |A(E')|^2_{g^N} = Tr(A(E')^T A^{-1} A(E')) equals it too (4.22); "
          "(iii) rank preservation: A(E') lies in T M_r, i.e. U_perp^T A(E') V_perp = 0.  Requires N >= 2 "
          "for (iii) (falsifier depth_one).  grad = A(E') is menon.riemannian_gradient."
          "  Tolerance/residual at the defaults ~6e5 (audit rmen8): the parts use the worst-case relative bound"
          " SAFETY N d eps kappa with kappa(WW^T) = 1.1e3 at the default balanced point (lambda^N spreads the"
          " singular values), while the upstairs and downstairs dissipations agree to ~1 eps; kept as a bound,"
          " not tuned.",
    catalogue="menon §2.3 Thm 3",
)


def _flow_parts(p, check_rank=True):
    lam, Qs, Ws = balanced_instance(p.d, p.N, p.seed, zeros=p.zeros)
    d, N = p.d, p.N
    Ep = rng_for(p.seed + 7919).standard_normal((d, d))
    kappa, rank = _kappa(lam**N)
    if kappa > KAPPA_MAX:
        return inconclusive(f"kappa={kappa:.3g} too close to the psd_power cutoff")
    # array-API path: host draws moved to p.backend
    xp = xp_of(p)
    Ws, Qs, Ep = X.to_xp(xp, Ws), X.to_xp(xp, [Qs[0], Qs[-1]]), X.to_xp(xp, [Ep])[0]
    W = dln.prod(Ws)
    D = dln.grads(Ws, Ep)
    up = sum(X.vdot(g, g) for g in D)
    AE = _a_op(W, Ep, N)
    down = X.vdot(Ep, AE)
    rel = SAFETY * N * d * EPS * kappa
    parts = {"dissipation_upstairs_vs_downstairs": (abs(up - down) / max(up, 1e-300), rel)}
    vals = {"sum_norm_D_p_sq": up, "tr_Eprime_A_Eprime": down, "rank": rank, "kappa": kappa}
    r = d - p.zeros
    QN, Q0 = Qs
    if p.zeros and not check_rank:
        vals["rank_preservation"] = "not claimed at N = 1 (A = I: the rank grows, falsifier depth_one)"
    elif p.zeros:
        off = QN[:, r:].T @ AE @ Q0[:, r:]
        parts["rank_preservation"] = (X.fro(off) / X.fro(AE), rel)
        vals["zero_block_of_A_Eprime"] = X.fro(off)
    else:
        M = _a_mat(W, N)
        ev = X.host(xp.linalg.eigvalsh(M))
        cond = float(ev[-1] / ev[0])
        gnorm = X.vdot(vec_(AE), xp.linalg.solve(M, vec_(AE)))
        parts["norm_grad_4_22"] = (abs(gnorm - down) / down, rel * cond + SAFETY * d * d * EPS * cond)
        vals.update({"norm_grad_g_sq": gnorm, "cond_A": cond})
    return Outcome.from_parts(parts, "Thm 3 at a balanced point of rank r", vals)


def _flow_aug(t, y, N, Y, d):
    if not np.all(np.isfinite(y)) or np.max(np.abs(y[:-1])) > 1e100:
        # a dopri5 trial stage overshot (stiff at d = N = 8: |A| ~ N sigma^{2-2/N}) (W W^T would overflow): an infinite
        # slope makes the step's error estimate NaN, so dopri5 rejects it and shrinks h (eigh on inf would raise)
        return np.full(y.shape, np.inf)
    W = y[:-1].reshape(d, d)
    Ep = W - Y
    AE = _a_op(W, Ep, N)
    return np.concatenate([-AE.ravel(), [-float(np.sum(Ep * AE))]])


def _flow_integrated(p, rtols=(1e-8, 1e-10), check_rank=True):
    lam, Qs, Ws = balanced_instance(p.d, p.N, p.seed, zeros=p.zeros)
    d, N, r = p.d, p.N, p.d - p.zeros
    Y = rng_for(p.seed + 7919).standard_normal((d, d))
    W0 = dln.prod(Ws)
    E = lambda W: 0.5 * float(np.sum((W - Y) ** 2))  # noqa: E731
    runs, steps, method = [], 0, "dopri5"
    y0 = np.concatenate([W0.ravel(), [0.0]])
    for rtol in rtols:
        res = rk.solve_dopri5(_flow_aug, 0.0, y0, p.T, (N, Y, d), rtol=rtol, atol=rtol * 1e-2,
                              max_steps=FLOW_MAX_STEPS, backend="numpy") if method == "dopri5" else None
        if res is not None and res.success:
            y, n = res.y, res.accepted + res.rejected
        else:
            # stiff: |A_(N,W)| ~ N sigma_max^(2-2/N) reaches 1e4 at d = N = 8 (sigma_max ~ 70 from lambda^N), so the
            # explicit method's stability bound, not its accuracy, sets the step (80000 dopri5 steps were not enough
            # on the sweep's draws); LSODA switches to BDF there (0.5-1.5 s on those draws).  Its steps count in the
            # rounding model below through the evaluations.
            method = "LSODA (stiff: dopri5 over its step cap)"
            sol = solve_ivp(_flow_aug, (0.0, p.T), y0, method="LSODA", args=(N, Y, d), rtol=rtol, atol=rtol * 1e-2)
            if sol.status != 0 or not np.all(np.isfinite(sol.y[:, -1])):
                return inconclusive(f"(4.11) is too stiff here for dopri5 within {FLOW_MAX_STEPS} steps and LSODA "
                                    f"failed ({sol.message}); d={d}, N={N}, T={p.T}")
            y, n = sol.y[:, -1], int(sol.nfev)
        runs.append(y)
        steps = max(steps, n)
    WT, eT = runs[-1][:-1].reshape(d, d), float(runs[-1][-1])
    integ = float(np.linalg.norm(runs[0] - runs[-1]))
    s = np.linalg.svd(WT, compute_uv=False)
    wmax = max(float(np.linalg.norm(WT, 2)), float(np.linalg.norm(W0, 2)), float(np.linalg.norm(Y, 2)))
    kappa, _ = _kappa(lam[:r] ** N)
    # rank: every step leaks ~ eps kappa |W| (rounding of the psd powers) into the zero block
    rank_tol = integ + SAFETY * steps * N * d * EPS * kappa * wmax
    parts = {}
    if p.zeros and check_rank:
        parts["rank_preserved_sigma_r+1"] = (float(s[r]), rank_tol)
    dE = E(WT) - E(W0)
    parts["energy_identity_4_22"] = (abs(dE - eT), integ * (1 + wmax + float(np.linalg.norm(Y))) +
                                     SAFETY * steps * d * d * EPS * (1 + abs(E(W0))))
    return Outcome.from_parts(parts, f"(4.11) integrated to T={p.T}", {
        "sigma_T": s.tolist(), "E_0": E(W0), "E_T": E(WT), "integrated_dissipation": eT,
        "integration_error_estimate": integ, "steps": steps, "rank_start": r, "integrator": method}
        | ({} if check_rank or not p.zeros else {"rank_preserved": "not claimed at N = 1 (the rank grows: depth_one_flow)"}))


@flow.numeric(backends=("numpy", "cupy"))
def _(p):
    """Dissipation identity and rank preservation at a balanced point of rank d - zeros (or along the flow to T).
    The pointwise check is array-API code; T > 0 is CPU-only (adaptive dopri5) on any backend."""
    # rank preservation (iii) needs N >= 2 (at N = 1, A = I and the rank grows: falsifiers depth_one*); at N = 1
    # the dissipation identities are still the statement and are checked, the rank part is left out and said so
    check_rank = p.N >= 2
    return _flow_integrated(p, check_rank=check_rank) if p.T > 0 else _flow_parts(p, check_rank=check_rank)


flow.property(over=("d", "N", "seed", "zeros"), max_examples=15)


@flow.falsifier("depth_one", fixed={"N": 1, "zeros": 1}, search=("seed",))
def _(p):
    """N = 1 (plain gradient descent on W, A = I): E' has a component in the zero block, the rank grows."""
    return _flow_parts(p)


@flow.falsifier("depth_one_flow", fixed={"N": 1, "zeros": 1, "T": 1.0}, search=("seed",))
def _(p):
    """N = 1 integrated to T = 1: the zero singular value of W(0) becomes O(1)."""
    return _flow_integrated(p)


def _flow_prove(variant="stated"):
    """Depths N (d = 2, exact rational rotations, a, b > 0 and E' free) at which the upstairs dissipation
    sum_p |D_p|^2 (D_p from the chain rule, solvers.dln.grads) minus Tr(E'^T A(E')) (variant of A) is not zero."""
    bad = []
    for N in (1, 2, 3):
        Ws, Qs, a, b, Ep = _sym_balanced(N)
        up = sum((g.T * g).trace() for g in dln.grads(Ws, Ep))
        if sp.expand(sp.cancel(up - (Ep.T * _sym_A(Qs, a, b, Ep, N, variant)).trace())) != 0:
            bad.append(N)
    return bad


@flow.symbolic(timeout=60)
def _(p):
    """d = 2, exact rational rotations, a, b > 0 and E' free: sum_p |D_p|^2 = Tr(E'^T A(E')) for N = 1, 2, 3."""
    bad = _flow_prove()
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy.cancel + expand", "instances": "d=2, N=1,2,3",
        "proved": "sum_p |D_p|_F^2 = Tr(E'^T A_{N,W}(E')) on M (dL/dt = dE/dt = -|grad E|^2_{g^N})"},
        message="number of depths where the identity did not reduce to zero")


@flow.mutant({
    "transposes_swapped": "|grad E|^2 = Tr(E'^T sum_k (W^TW)^{(N-k)/N} E' (WW^T)^{(k-1)/N}) (powers on the wrong sides)",
    "exponent_shifted": "|grad E|^2 = Tr(E'^T sum_k (WW^T)^{(N-k+1)/N} E' (W^TW)^{(k-1)/N}) (exponent off by one)",
}, timeout=60)
def _(p, variant):
    """The dissipation (4.22) with A perturbed, through the same procedure: some depth must fail."""
    bad = _flow_prove(variant)
    return Outcome(residual=len(bad), tolerance=0, values={"failing_depths": bad},
                   message=f"sum_p |D_p|^2 - Tr(E'^T A_{variant}(E')) did not reduce to zero at N = {bad}")
