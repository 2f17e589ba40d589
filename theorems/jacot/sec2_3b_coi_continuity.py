"""§2.3 Cost of Identity, second part (seed l.125-128): the stable-rank chain (l.125) and the
continuity of the stable rank against the discontinuity of the COI (l.128, P1c).  Claims:
``jacot.stable_rank_chain``, ``jacot.coi_discontinuity``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import xp_jacot as X
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, inconclusive, Outcome, Param, ParamError
from theorems.jacot._shared import _rank, coi_tol

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


# ---------------------------------------------------------------------------
chain = Claim(
    id="jacot.stable_rank_chain",
    title="|A|_F^2/|A|_op^2 <= |A|_*^2/|A|_F^2 <= Rank A",
    label="l.125 (P1b)",
    section="2.3",
    equation="l.125",
    lines=(125, 125),
    statement=r"\frac{\|A\|_F^2}{\|A\|_{op}^2}\le\frac{\|A\|_*^2}{\|A\|_F^2}\le\mathrm{Rank}\,A",
    status="holds",
    bound=True,
    params=[
        Param.int("w", 4, 1, 64, "rows", search=(1, 8)),
        Param.int("N", 5, 1, 64, "columns", search=(1, 8)),
        Param.seed("seed"),
        Param.float("decay", 1.0, 0.0, 1.0, "singular values decay^i (1: all equal, equality on the right)",
                    search=(0.01, 1.0)),
    ],
    notes="Equality on the right iff the nonzero singular values are equal (decay = 1).",
    catalogue="jacot §2.3 P1b",
    covers=("P1b",),
)


def _chain_values(p):
    """A = U diag(decay^i) V^T built on the host; its singular values and rank on p.backend's namespace."""
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    r = min(p.w, p.N)
    U, _ = np.linalg.qr(rng.standard_normal((p.w, r)))
    V, _ = np.linalg.qr(rng.standard_normal((p.N, r)))
    s = p.decay ** np.arange(r)
    A = on(xp, (U * s) @ V.T)
    svx = X.svdvals(xp, A)
    rk = int(X.matrix_rank(xp, A))
    fro2 = float(xp.sum(svx * svx))
    s0, nuc = float(svx[0]), float(xp.sum(svx))
    return fro2 / s0**2, nuc**2 / fro2, rk, asnumpy(svx)


@chain.numeric(backends=("numpy", "cupy"))
def _(p):
    """Both inequalities on a matrix with prescribed singular values."""
    left, mid, rk, sv = _chain_values(p)
    # Error model: ratios of sums of r singular values, each with absolute error ~ r eps s_max.
    tol = 20 * len(sv) * EPS * rk
    return Outcome.from_parts({"left <= middle": (max(0.0, left - mid), tol),
                               "middle <= rank": (max(0.0, mid - rk), tol)},
                              message="stable-rank chain", values={"left": left, "middle": mid, "rank": rk,
                                                                   # the tighter of the two inequalities
                                                                   "tightness": max(left / mid, mid / rk)})


chain.property(over=("w", "N", "seed", "decay"), max_examples=30)


@chain.falsifier("srank_equals_rank", fixed={"decay": 0.1}, backends=("numpy", "cupy"))
def _(p):
    """Claim equality on the right for unequal singular values: s = (1, 0.1, ...) gives middle < rank."""
    left, mid, rk, sv = _chain_values(p)
    return Outcome(residual=abs(rk - mid), tolerance=20 * len(sv) * EPS * rk,
                   values={"middle": mid, "rank": rk}, message=f"stable rank {mid:.6g} vs rank {rk}")


def _nonneg_certificate(expr, vs):
    """1 unless numerator and denominator of expr are polynomials in vs (all >= 0) with coefficients of one sign."""
    num, den = sp.fraction(sp.cancel(sp.together(expr)))
    for q in (num, den):
        try:
            coeffs = sp.Poly(sp.expand(q), *vs).coeffs()
        except sp.PolynomialError:
            return 1
        if not all(c.is_Rational for c in coeffs) or len({sp.sign(c) for c in coeffs if c != 0}) > 1:
            return 1
    return 0


def _chain_symbolic(variant):
    """Singular values s_0 = c + y + x >= s_1 = c + y >= s_2 = c > 0 (x, y >= 0): the gaps middle - left and
    rank - middle of the printed chain (or a perturbed one), as rational functions of (x, y, c), must have
    numerator and denominator with coefficients of one sign (a certificate that each gap is >= 0)."""
    x, y, c = sp.symbols("x y c", nonnegative=True)
    s = [c + y + x, c + y, c]
    fro2, nuc, op = sum(v**2 for v in s), sum(s), s[0]
    left = {"left_op_not_squared": fro2 / op}.get(variant, fro2 / op**2)
    middle = {"middle_nuclear_not_squared": nuc / fro2}.get(variant, nuc**2 / fro2)
    return _nonneg_certificate(middle - left, (x, y, c)) + _nonneg_certificate(3 - middle, (x, y, c))


@chain.symbolic(timeout=30)
def _(p):
    """Rank 3, ordered singular values: both gaps of the chain are ratios of polynomials with non-negative coefficients."""
    bad = _chain_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel + Poly coefficients", "proved":
                   "|A|_F^2/|A|_op^2 <= |A|_*^2/|A|_F^2 <= 3 for every A of rank 3 (s_0 = c+y+x >= s_1 = c+y >= "
                   "s_2 = c > 0): each gap is a quotient of polynomials in x, y, c >= 0 with coefficients of one sign"},
                   message="gaps without a sign certificate")


@chain.mutant({"left_op_not_squared": "left ratio |A|_F^2/|A|_op (the operator-norm square dropped)",
               "middle_nuclear_not_squared": "middle ratio |A|_*/|A|_F^2 (the nuclear-norm square dropped)"}, timeout=30)
def _(p, variant):
    """The chain perturbed, through the same procedure: a gap must lose its sign certificate."""
    bad = _chain_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"gaps_without_certificate": bad},
                   message=f"{variant}: {bad} gaps without a sign certificate")


chain.tightness(over=("w", "N", "seed", "decay"), max_examples=30)


def _srank(A):
    s = np.linalg.svd(A, compute_uv=False)
    s = s / s[0] if s[0] > 0 else s  # scale-free, so that s ~ 1e-200 does not underflow to 0/0
    return float(s.sum() ** 2 / (s * s).sum())


# ---------------------------------------------------------------------------
# P1c: continuity of the stable rank vs the COI
cont = Claim(
    id="jacot.coi_discontinuity",
    title="The stable rank |A|_*^2/|A|_F^2 is continuous (A != 0); the cost of identity is not",
    label="l.128 (P1c)",
    section="2.3",
    equation="l.128",
    lines=(128, 128),
    statement=r"A\mapsto\frac{\|A\|_*^2}{\|A\|_F^2}\text{ is continuous on }A\neq0,\ \text{whereas }A\mapsto\|A\|^2_{\tilde K}"
              r"\text{ is discontinuous}",
    status="holds",
    params=[
        Param.int("w", 4, 1, 32, "rows of A", search=(2, 6)),
        Param.int("N", 5, 1, 32, "columns of A", search=(2, 6)),
        Param.int("r", 2, 1, 31, "rank of the non-negative base point A_0", search=(1, 3)),
        Param.float("eps", 0.1, 0.0, 1.0, "largest perturbation size; the sequence is eps * 10^-j, j = 0..4",
                    low_open=True, search=(0.01, 1.0)),
        Param.seed("seed"),
    ],
    validate=lambda p: _validate_cont(p),
    notes="A_eps = A_0 + eps E with A_0 = |G1||G2| >= 0 of rank r and E = |u||v|^T >= 0 generic: A_eps >= 0 has "
          "rank r + 1, so (C1) the COI without bias is r + 1 for every eps > 0 and r at eps = 0 (a jump of 1), "
          "while the stable rank moves by at most the Lipschitz bound from |.|_* and |.|_F (triangle "
          "inequalities). The catalogue's example is diag(1, eps) (r = 1, COI 2 -> 1).",
    catalogue="jacot §2.3 P1c",
    covers=("P1c",),
)


def _validate_cont(p):
    if p.r >= min(p.w, p.N):
        raise ParamError(f"parameter r must be < min(w, N) so that A_0 + eps E can gain a rank (got r={p.r}, "
                         f"w={p.w}, N={p.N})")


def _cont_data(p):
    rng = np.random.default_rng(p.seed)
    A0 = np.abs(rng.standard_normal((p.w, p.r))) @ np.abs(rng.standard_normal((p.r, p.N)))
    E = np.outer(np.abs(rng.standard_normal(p.w)), np.abs(rng.standard_normal(p.N)))
    E /= np.linalg.norm(E)
    A0 /= np.linalg.norm(A0)
    return A0, E


def _cont_outcome(p, coi_law="jump"):
    A0, E = _cont_data(p)
    eps = p.eps * 10.0 ** -np.arange(5)
    c0, s0 = leaky.coi(A0, bias=False), _srank(A0)
    n0 = float(np.linalg.svd(A0, compute_uv=False).sum())
    nE = float(np.linalg.svd(E, compute_uv=False).sum())
    cois, sranks, s_excess, c_res, tols = [], [], 0.0, 0.0, []
    for e in eps:
        A = A0 + e * E
        if _rank(A) != p.r + 1:
            return inconclusive(f"A_0 + {e:.1e} E does not have rank r + 1 (degenerate draw)", eps=float(e))
        c, s = leaky.coi(A, bias=False), _srank(A)
        if not np.isfinite(c):
            return inconclusive(f"image condition undecidable at eps = {e:.1e} (grey zone of solvers.leaky)")
        cois.append(c)
        sranks.append(s)
        # Lipschitz envelope: | |A|_* - n0 | <= e nE, | |A|_F - 1 | <= e (|A0|_F = |E|_F = 1)
        lo = max(n0 - e * nE, 0.0) ** 2 / (1 + e) ** 2
        hi = (n0 + e * nE) ** 2 / max(1 - e, 1e-300) ** 2 if e < 1 else np.inf
        s_excess = max(s_excess, lo - s, s - hi)
        tol_c = coi_tol(A, bias=False) * max(c, 1.0) + coi_tol(A0, bias=False) * max(c0, 1.0)
        tols.append(tol_c)
        if coi_law == "jump":  # the claim: COI(A_eps) - COI(A_0) = 1 for every eps > 0
            c_res = max(c_res, abs((c - c0) - 1.0) / tol_c)
        else:  # falsifier: continuity, |COI(A_eps) - COI(A_0)| within the stable rank's envelope
            c_res = max(c_res, abs(c - c0) / (tol_c + (hi - lo if np.isfinite(hi) else 0.0)))
    s_tol = 100 * max(p.w, p.N) * EPS * max(sranks)  # svd rounding of the ratio
    plot = {"kind": "semilogx", "x": [float(e) for e in eps],
            "series": {"COI without bias": cois, "stable rank": sranks},
            "xlabel": "eps", "ylabel": "value", "title": "A_0 + eps E: the COI stays at r + 1, the stable rank converges"}
    values = {"coi_A0": c0, "srank_A0": s0, "coi": cois, "srank": sranks, "eps": [float(e) for e in eps],
              "plot": plot}
    name = "COI jump = 1" if coi_law == "jump" else "COI continuous"
    return Outcome.from_parts({"srank within Lipschitz envelope": (max(0.0, s_excess), s_tol),
                               name: (c_res, 1.0)},
                              message=f"COI(A_0) = {c0:.6g} -> COI(A_eps) = {cois[-1]:.6g}; srank {s0:.6g} vs "
                                      f"{sranks[-1]:.6g} at eps = {eps[-1]:.0e}", values=values)


@cont.numeric
def _(p):
    """Along eps -> 0: the stable rank stays inside its Lipschitz envelope, the COI (solvers.leaky.coi) stays r + 1."""
    return _cont_outcome(p)


cont.property(over=("w", "N", "r", "eps", "seed"), max_examples=15)


@cont.falsifier("coi_continuous")
def _(p):
    """The COI continuous like the stable rank: |COI(A_eps) - COI(A_0)| within the same envelope."""
    return _cont_outcome(p, coi_law="continuous")


def _cont_symbolic(variant):
    """A_e = diag(1, e) -> A_0 = diag(1, 0) (non-negative, so COI = |A A^+|_F^2): the jumps
    |lim_e srank(A_e) - srank(A_0)| and |lim_e COI(A_e) - COI(A_0)| from singular values and pinv.  The statement
    (or a perturbed one) says which quantity is continuous (jump 0) and which is not: failed assertions."""
    e = sp.Symbol("e", positive=True)

    def srank(A):
        sv = [x for x in A.singular_values() if x != 0]
        return sum(sv) ** 2 / sum(x**2 for x in sv)

    def coi(A):
        return (A * A.pinv()).trace()

    def rank(A):
        return sp.Integer(A.rank())
    A_e, A_0 = sp.diag(1, e), sp.diag(1, 0)
    continuous, discontinuous = {"stated": (srank, coi), "coi_continuous": (coi, srank),
                                 "rank_continuous": (rank, coi)}[variant]
    jump = lambda f: sp.Abs(sp.limit(sp.cancel(f(A_e)), e, 0) - f(A_0))  # noqa: E731
    return int(jump(continuous) != 0) + int(jump(discontinuous) == 0)


@cont.symbolic(timeout=30)
def _(p):
    """diag(1, e): srank (1 + e)^2/(1 + e^2) -> 1 as e -> 0, while COI = Tr[A A^+] = 2 for e > 0 and 1 at e = 0."""
    bad = _cont_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy singular_values, pinv, limit",
                   "proved": "lim_{e->0} srank(diag(1,e)) = 1 = srank(diag(1,0)); COI(diag(1,e)) = 2 != 1 = COI(diag(1,0))"},
                   message="failed assertions (a jump where continuity is stated, or none where a jump is)")


@cont.mutant({"coi_continuous": "the roles swapped: the COI continuous, the stable rank discontinuous",
              "rank_continuous": "Rank A (not the stable rank |A|_*^2/|A|_F^2) continuous"}, timeout=30)
def _(p, variant):
    """The statement perturbed, through the same procedure: an assertion must fail."""
    bad = _cont_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: {bad} continuity assertions fail at diag(1, e) -> diag(1, 0)")
