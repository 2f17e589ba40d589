"""Menon §4.2 and §7.1.3 (seed lines 224-236, 562-570): the end-to-end dynamics on the balanced manifold.

Thm 2 (4.11) and the partial products (7.11) (erratum E3).  Conventions and error models: see
``theorems/menon/_metric.py``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln, rk
from solvers import xp_menon as X
from solvers.matfun import psd_power
from solvers.xp import xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive

from ._common import EPS, balanced_instance, rng_for
from ._metric import (A_VARIANTS, FLOW_MAX_STEPS, KAPPA_MAX, SAFETY, _a_op, _count_nonzero, _kappa, _sym_A,
                      _sym_balanced, _validate_zeros)


def _eq49(Ws, Ep):
    """(4.9): -sum_p A_{p+1} A_{p+1}^T E' B_{p-1}^T B_{p-1}, and the scale sum_p |A|^2 |E'| |B|^2."""
    N = len(Ws)
    out, scale = 0 * Ep, 0.0
    for p in range(1, N + 1):
        A, B = dln.partial_A(Ws, p + 1), dln.partial_B(Ws, p - 1)
        out = out - A @ A.T @ Ep @ B.T @ B
        scale += X.norm2(A) ** 2 * X.fro(Ep) * X.norm2(B) ** 2
    return out, scale


end_to_end = Claim(
    id="menon.end_to_end_balanced",
    title="On the balanced manifold the end-to-end matrix obeys the closed equation (4.11)",
    label="Thm 2",
    section="4.2, 7.1.3",
    equation="(4.9), (4.11)",
    lines=(234, 236),
    statement=r"\mathbf W(0)\in\mathcal M\ \Longrightarrow\ \dot W=-\sum_{k=1}^N(WW^T)^{\frac{N-k}N}"
              r"E'(W)(W^TW)^{\frac{k-1}N}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width", search=(1, 4)),
        Param.int("N", 4, 1, 8, "depth", search=(1, 5)),
        Param.seed("seed of the balanced point and of E'"),
        Param.int("zeros", 0, 0, 7, "number of zero singular values (a point of M_r, r = d - zeros)",
                  search=(0, 2)),
        Param.float("G", 0.0, 0.0, 1.0, "size of a perturbation of the layers off M_0 (|G| = O(G)) for the "
                    "falsifier small_G_linear; the theorem's hypothesis is G = 0 (the numeric check is "
                    "inconclusive off it, sweeps keep it)").for_falsifiers(),
        Param.float("T", 0.0, 0.0, 5.0, "0: compare the vector fields (4.9) and (4.11) at the point; "
                    "T > 0: integrate the flow upstairs (3.6) and (4.11) downstairs to time T (E = 1/2|W-Y|^2)"),
    ],
    validate=_validate_zeros,
    notes="Proof: seed l.560-572 (Sec. 7.1.3).  Pointwise: (4.9) (Thm 1(b), the chain rule) against (4.11) with E' a free Gaussian matrix "
          "(the identity is linear in E', so this is every E).  Also on M_r (zero lambdas), where the "
          "psd powers need the 1e-12 cutoff of solvers.matfun.  The proof's intermediate (7.11) is "
          "erratum E3 (menon.partial_product_svd); (4.11) itself is correct.  T > 0 integrates both "
          "flows by Dormand-Prince 5(4) (solvers.rk.dopri5_numpy) and compares phi(W(T)) with W(T).",
    catalogue="menon §2.3 Thm 2; §4 E3",
)


def _thm2_point(p):
    lam, Qs, Ws = balanced_instance(p.d, p.N, p.seed, zeros=p.zeros)
    rng = rng_for(p.seed + 7919)
    if p.G > 0:
        Ws = [w + p.G * rng.standard_normal(w.shape) for w in Ws]
    return lam, Qs, Ws, rng


def _thm2_pointwise(p):
    """Array-API path (p.backend): the instance is drawn on the host, both sides are computed on xp."""
    lam, Qs, Ws, rng = _thm2_point(p)
    Ep = rng.standard_normal((p.d, p.d))
    xp = xp_of(p)
    Ws, Ep = X.to_xp(xp, Ws), X.to_xp(xp, [Ep])[0]
    W = dln.prod(Ws)
    s = X.host(xp.linalg.svdvals(W))
    kappa, rank = _kappa(s)
    if kappa > KAPPA_MAX:
        return inconclusive(f"kappa(WW^T)={kappa:.3g} is too close to the psd_power cutoff", kappa=kappa)
    up, scale = _eq49(Ws, Ep)
    down = -_a_op(W, Ep, p.N)
    res = X.fro(up - down)
    # error model: N products (each ~ N d eps relative) and N psd powers (~ d eps kappa relative)
    tol = SAFETY * p.N * p.d * EPS * kappa * scale
    G = max((X.fro(c) for c in dln.conserved(Ws)), default=0.0)
    return Outcome(residual=res, tolerance=tol,
                   values={"residual_4_9_vs_4_11": res, "norm_4_9": X.fro(up), "kappa": kappa,
                           "rank": rank, "max_norm_C_p": G, "lambda": lam.tolist()},
                   message="|(4.9) - (4.11)|_F at the point, E' a free Gaussian matrix")


def _flow_down(t, w, N, Y, d):
    W = w.reshape(d, d)
    return -_a_op(W, W - Y, N).ravel()


def _thm2_flow(p, rtols=(1e-8, 1e-10)):
    """Integrate upstairs and downstairs; the loose-vs-tight difference bounds each integration error."""
    lam, Qs, Ws, rng = _thm2_point(p)
    d, N = p.d, p.N
    Y = rng.standard_normal((d, d))
    widths = [d] * (N + 1)
    args = dln.make_args(widths, Y)
    ups, downs, steps = [], [], 0
    for rtol in rtols:
        up = rk.solve_dopri5(dln.dln_rhs_numpy, 0.0, dln.pack(Ws), p.T, args, rtol=rtol, atol=rtol * 1e-2,
                             max_steps=FLOW_MAX_STEPS, backend="numpy")
        down = rk.solve_dopri5(_flow_down, 0.0, dln.prod(Ws).ravel(), p.T, (N, Y, d), rtol=rtol,
                               atol=rtol * 1e-2, max_steps=FLOW_MAX_STEPS, backend="numpy") if up.success else up
        if not (up.success and down.success):
            return inconclusive(f"the flows are too stiff here for the explicit dopri5 within {FLOW_MAX_STEPS} steps "
                                f"(|A_(N,W)| ~ N sigma_max^(2-2/N), d={d}, N={N}, sigma_max={float(lam[0]) ** N:.3g}); "
                                f"take a smaller T")
        ups.append(dln.prod(dln.unpack(up.y, widths)))
        downs.append(down.y.reshape(d, d))
        steps = max(steps, up.accepted + up.rejected, down.accepted + down.rejected)
    # the flow can run toward a rank drop that W(0) does not have (E = 1/2|W - Y|^2 pulls sigma_min down): once
    # sigma_min^2 / sigma_max^2 < 1/KAPPA_MAX the downstairs field's psd powers sit at solvers.matfun's 1e-12 cutoff,
    # where (4.11) is evaluated discontinuously and the loose-vs-tight difference no longer bounds its integration error
    # (sweep 31415926 draw 0: d = 6, N = 2, T = 4.4, sigma_min(W(T)) = 3.8e-6 against sigma_max 3.8, refuted by 1.9x);
    # the pointwise check gates the same kappa
    su = np.linalg.svd(ups[-1], compute_uv=False)
    near = int(np.sum(su ** 2 < su[0] ** 2 / KAPPA_MAX)) if su[0] > 0 else 0
    if near > p.zeros:
        return inconclusive(f"the flow reached sigma_min(W(T))^2 / sigma_max^2 = {(su[-1] / su[0]) ** 2:.3g} < "
                            f"1/KAPPA_MAX = {1 / KAPPA_MAX:.0e} from a point of rank {d - p.zeros}: the psd powers of "
                            f"(4.11) are at their cutoff there; take a smaller T", sigma_T=su.tolist())
    res = float(np.linalg.norm(ups[-1] - downs[-1]))
    err_up = float(np.linalg.norm(ups[0] - ups[-1]))
    err_down = float(np.linalg.norm(downs[0] - downs[-1]))
    scale = max(float(np.linalg.norm(ups[-1])), float(np.linalg.norm(Y)), 1.0)
    s = np.linalg.svd(downs[-1], compute_uv=False)
    kappa, rank = _kappa(s)
    # error model: integration errors of the tight runs are bounded by the loose-vs-tight differences
    # (the loose runs are 100x less accurate), plus rounding ~ steps * N d eps kappa * |W| per step.
    tol = err_up + err_down + SAFETY * steps * N * d * EPS * kappa * scale
    return Outcome(residual=res, tolerance=tol,
                   values={"residual_up_vs_down": res, "integration_error_up": err_up,
                           "integration_error_down": err_down, "steps": steps, "T": p.T,
                           "sigma_T": s.tolist(), "rank_T": rank},
                   message=f"|phi(W(T)) - W(T)|_F at T={p.T}: upstairs (3.6) vs downstairs (4.11), dopri5")


@end_to_end.numeric(backends=("numpy", "cupy"))
def _(p):
    """(4.9) = (4.11) at a balanced point (or the two flows to time T when T > 0).  The pointwise check is
    array-API code; T > 0 is CPU-only (adaptive dopri5 with step control) and runs on NumPy on any backend."""
    # G (the size of a perturbation off M_0) is the falsifier small_G_linear's parameter: the theorem's hypothesis
    # W(0) in M is G = 0.  Sweeps keep it there (Param role "falsifier"; drawing G over [0, 1] used to leave every
    # draw inconclusive); a G > 0 given by hand is off the hypothesis
    if p.G > 0:
        return inconclusive(f"G = {p.G:g} > 0 puts W(0) off the balanced variety M, the theorem's hypothesis "
                            f"(G is the falsifier small_G_linear's perturbation; the claim is about G = 0)")
    return _thm2_flow(p) if p.T > 0 else _thm2_pointwise(p)


end_to_end.property(over=("d", "N", "seed", "zeros"), max_examples=15)


def _e2e_prove(variant="stated"):
    """(4.9) (the chain rule upstairs, through the partial products) minus the statement (4.11) (variant), counted
    as nonzero expressions: d = 1 scalars for N = 1..6, d = 2 with exact rational rotations for N = 1, 2, 3."""
    lam, e = sp.symbols("lambda e", positive=True)
    bad = 0
    for N in range(1, 7):
        rhs49 = -sum(lam ** (2 * (N - p)) * e * lam ** (2 * (p - 1)) for p in range(1, N + 1))
        # (WW^T)^{m/N} = (W^TW)^{m/N} = lambda^{2m} at d = 1 (w = lambda^N)
        rhs411 = -sum(lam ** (2 * ml) * e * lam ** (2 * mr)
                      for (_, ml), (_, mr) in (A_VARIANTS[variant](N, k) for k in range(1, N + 1)))
        bad += int(sp.expand(rhs49 - rhs411) != 0)
    for N in (1, 2, 3):
        Ws, Qs, a, b, Ep = _sym_balanced(N)
        up = -sum(((dln.partial_A(Ws, p + 1) * dln.partial_A(Ws, p + 1).T) * Ep
                   * (dln.partial_B(Ws, p - 1).T * dln.partial_B(Ws, p - 1)) for p in range(1, N + 1)), sp.zeros(2))
        bad += _count_nonzero(up + _sym_A(Qs, a, b, Ep, N, variant))
    return bad


@end_to_end.symbolic(timeout=60)
def _(p):
    """d = 1: (4.9) equals (4.11), i.e. -N w^{2-2/N} E'(w) for w = lambda^N > 0; d = 2 with exact rational
    rotations: (4.9) - (4.11) expands to zero with E' free."""
    bad = _e2e_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand/cancel of every entry",
        "instances": ["d=1, N=1..6", "d=2, N=1,2,3 with Cayley rotations t=1/2,2/3,-1/3,3/5"],
        "proved": "wdot = -N w^{2-2/N} E'(w) (d=1); (4.9) == (4.11) entrywise, E' free, a, b > 0 free"},
        message="number of expressions that did not reduce to zero")


@end_to_end.mutant({
    "transposes_swapped": "(W^TW)^{(N-k)/N} E' (WW^T)^{(k-1)/N}: the two psd powers on the wrong sides",
    "exponent_shifted": "(WW^T)^{(N-k+1)/N} E' (W^TW)^{(k-1)/N}: the off-by-one of (7.11) carried into (4.11)",
}, timeout=60)
def _(p, variant):
    """(4.11) perturbed, through the same procedure: (4.9) minus it must leave nonzero expressions."""
    bad = _e2e_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_expressions": bad},
                   message=f"{bad} expressions of (4.9) - (4.11, {variant}) did not reduce to zero")


@end_to_end.falsifier("off_balanced_flow", search=("seed",), fixed={"G": 1e-3, "T": 1.0})
def _(p):
    """Drop the hypothesis W(0) in M at the nearest unbalanced start, through the same dynamics: the numeric
    check's balanced point with its layers moved by G = 1e-3 (|C_p| = O(G)), both flows run to T = 1 with the
    same error model: phi(W(T)) leaves the (4.11) trajectory by O(G), far above the integration tolerance.
    (Replaces 'off_balanced', which compared the two vector fields at independent Gaussian layers, far from M.)"""
    return _thm2_flow(p)


@end_to_end.falsifier("small_G_linear", search=("seed",), fixed={"G": 1e-4})
def _(p):
    """A perturbation of size G off M_0 gives an O(|G|) discrepancy: the ratio discrepancy/G is
    constant over G = 1e-2 .. 1e-5 (log-log slope 1), so no tolerance hides it."""
    out = _thm2_pointwise(p)
    scales = [1e-2, 1e-3, 1e-4, 1e-5]
    disc, cnorm = [], []
    for g in scales:
        o = _thm2_pointwise(p.replace(G=g))
        disc.append(o.values["residual_4_9_vs_4_11"])
        cnorm.append(o.values["max_norm_C_p"])
    slope = float(np.polyfit(np.log(scales), np.log(disc), 1)[0])
    out.values.update({"G_values": scales, "discrepancies": disc, "max_norm_C_p_values": cnorm,
                       "discrepancy_over_norm_C": [a / b for a, b in zip(disc, cnorm)],
                       "loglog_slope": slope})
    out.message += f"; discrepancy ~ |G|^{slope:.3f} over G in 1e-2..1e-5"
    return out


@end_to_end.reproduction(name="flow_side_by_side")
def _(p):
    """Catalogue §2.3 Thm 2 (b): integrate upstairs (3.6) and downstairs (4.11) side by side to T = 2
    (d = 3, N = 4, full rank and rank 2); the catalogue expects agreement to 1e-9."""
    base = end_to_end.resolve({"T": 2.0, "d": 3, "N": 4, "seed": 1})
    base.backend = "numpy"
    outs = [_thm2_flow(base), _thm2_flow(base.replace(zeros=1))]
    res = max(o.residual for o in outs)
    return Outcome(residual=res, tolerance=max(o.tolerance for o in outs),
                   values={"full_rank": outs[0].values, "rank_2": outs[1].values,
                           "catalogue_expectation": 1e-9,
                           "within_catalogue_expectation": bool(res <= 1e-9)},
                   message="max over full rank and rank 2 of |phi(W(2)) - W(2)|_F (tolerance: error model)")


# ---------------------------------------------------------------------------
# menon.partial_product_svd  (E3: (7.11) off by one)
partial = Claim(
    id="menon.partial_product_svd",
    title="Partial products on the balanced manifold in SVD form (proof of Thm 2)",
    label="(7.11), E3",
    section="7.1.3",
    equation="(7.11)",
    lines=(562, 570),
    statement=r"A_p=W_N\cdots W_p=Q_N\Sigma^{\frac{N-p}{N}}Q_{p-1}^T,\ B_p=Q_p\Sigma^{\frac pN}Q_0^T,\ "
              r"A_pA_p^T=(WW^T)^{\frac{N-p}N},\ B_p^TB_p=(W^TW)^{\frac pN}",
    status="erratum",
    corrected=r"A_p=Q_N\Sigma^{\frac{N-p+1}{N}}Q_{p-1}^T,\ A_pA_p^T=(WW^T)^{\frac{N-p+1}N}"
              r"\ (B_p\text{ as printed}),\ \text{so }A_{p+1}A_{p+1}^T=(WW^T)^{\frac{N-p}N}\text{ and (4.11) follows}",
    params=[
        Param.int("d", 3, 1, 8, "width", search=(1, 4)),
        Param.int("N", 4, 1, 8, "depth", search=(1, 5)),
        Param.seed("seed of the balanced point"),
        Param.int("zeros", 0, 0, 7, "number of zero singular values", search=(0, 2)),
    ],
    validate=_validate_zeros,
    notes="The seed prints the exponents with a lower-case n (conversion artefact for N); the off-by-one "
          "N-p -> N-p+1 in A_p is not an artefact.  The B_p formulas are correct.  Line 564 also writes "
          "B_{p-1}B_{p-1}^T where (4.9) has B_{p-1}^T B_{p-1} (falsifier 'line564_BBt').  (4.11) is "
          "unaffected (menon.end_to_end_balanced)."
          "  Tolerance/residual at the defaults ~1.5e5 (audit rmen8): the tolerance is the worst-case first-order"
          " bound SAFETY N d eps kappa |W|^2 of the _metric docstring with kappa = kappa(WW^T) = 1.1e3 there, an"
          " eigh error d eps lambda_max landing on the smallest eigenvalue in full; the observed rounding is ~1"
          " eps |W|^2 (eigh does far better than that worst case on these matrices).  Kept as a bound (not tuned"
          " to an instance).",
    catalogue="menon §2.3 Thm 2 proof; §4 E3",
)


def _partial_residuals(p, shift):
    """max over p of the four (7.11) residuals, A_p with exponent (N-p+shift)/N."""
    lam, Qs, Ws = balanced_instance(p.d, p.N, p.seed, zeros=p.zeros)
    N = p.N
    sig = lam**N
    kappa, _ = _kappa(sig)
    # array-API path: the host instance moved to p.backend, every residual computed there
    xp = xp_of(p)
    Qs, Ws = X.to_xp(xp, Qs), X.to_xp(xp, Ws)
    Q = lambda q: Qs[N - q]  # noqa: E731  Q_q
    W = dln.prod(Ws)
    # lam**(N*e) = Sigma^e; 0**0 = 1 is not wanted on zero singular values: mask them
    pw = lambda e: X.to_xp(xp, [np.where(lam > 0, np.abs(lam) ** (N * e), 0.0)])[0]  # noqa: E731
    res = {"A_p": 0.0, "A_pA_p^T": 0.0, "B_p": 0.0, "B_p^TB_p": 0.0}
    for q in range(1, N + 1):
        A, B = dln.partial_A(Ws, q), dln.partial_B(Ws, q)
        eA = (N - q + shift) / N
        res["A_p"] = max(res["A_p"], X.fro(A - Q(N) @ X.diag(pw(eA)) @ Q(q - 1).T))
        res["B_p"] = max(res["B_p"], X.fro(B - Q(q) @ X.diag(pw(q / N)) @ Q(0).T))
        res["A_pA_p^T"] = max(res["A_pA_p^T"], X.fro(A @ A.T - psd_power(W @ W.T, eA)))
        res["B_p^TB_p"] = max(res["B_p^TB_p"], X.fro(B.T @ B - psd_power(W.T @ W, q / N)))
    scale = max(1.0, float(np.max(lam)) ** (2 * N))
    # error model: N products (N d eps each) and one psd power (d eps kappa), relative to |W|^2
    tol = SAFETY * N * p.d * EPS * kappa * scale
    return res, tol, {"lambda": lam.tolist(), "kappa": kappa}


@partial.numeric(backends=("numpy", "cupy"))
def _(p):
    """The corrected (7.11): A_p = Q_N Sigma^{(N-p+1)/N} Q_{p-1}^T and A_pA_p^T = (WW^T)^{(N-p+1)/N}."""
    res, tol, vals = _partial_residuals(p, 1)
    return Outcome.from_parts({k: (v, tol) for k, v in res.items()}, "corrected (7.11) for every p", vals)


partial.property(over=("d", "N", "seed", "zeros"), max_examples=12)


@partial.falsifier("stated", search=("seed", "d"), backends=("numpy", "cupy"))
def _(p):
    """The printed exponent (N-p)/N in A_p and A_pA_p^T."""
    res, tol, vals = _partial_residuals(p, 0)
    return Outcome.from_parts({k: (v, tol) for k, v in res.items()}, "printed (7.11) for every p", vals)


@partial.falsifier("line564_BBt", search=("seed",))
def _(p):
    """Line 564's B_{p-1}B_{p-1}^T in place of B_{p-1}^T B_{p-1}: it is Q_{p-1}Sigma^{2(p-1)/N}Q_{p-1}^T,
    not (W^TW)^{(p-1)/N}, so substituting it in (4.9) does not give (4.11)."""
    lam, Qs, Ws = balanced_instance(p.d, p.N, p.seed, zeros=p.zeros)
    Ep = rng_for(p.seed + 7919).standard_normal((p.d, p.d))
    W = dln.prod(Ws)
    wrong = -sum(dln.partial_A(Ws, q + 1) @ dln.partial_A(Ws, q + 1).T @ Ep
                 @ dln.partial_B(Ws, q - 1) @ dln.partial_B(Ws, q - 1).T for q in range(1, p.N + 1))
    _, scale = _eq49(Ws, Ep)
    kappa, _ = _kappa(lam**p.N)
    res = float(np.linalg.norm(wrong + _a_op(W, Ep, p.N)))
    return Outcome(residual=res, tolerance=SAFETY * p.N * p.d * EPS * kappa * scale,
                   values={"residual": res}, message="|(4.9) with B B^T - (4.11)|_F")


#: exponents (times N) of Sigma in A_p and B_p of (7.11): the corrected statement and its misprints
PARTIAL_VARIANTS = {
    "corrected": (lambda N, q: N - q + 1, lambda N, q: q),
    "as_printed": (lambda N, q: N - q, lambda N, q: q),          # the printed A_p: Sigma^{(N-p)/N}
    "B_index_shifted": (lambda N, q: N - q + 1, lambda N, q: q - 1),  # B_p = Q_p Sigma^{(p-1)/N} Q_0^T
}


def _partial_prove(variant="corrected"):
    """Entries of A_p - Q_N Sigma^{eA} Q_{p-1}^T and B_p - Q_p Sigma^{eB} Q_0^T that do not reduce to zero (d = 2,
    exact rational rotations, Sigma^{1/N} = diag(a, b) free, N = 1..3, every p), and the (N, p) cases in error."""
    eA, eB = PARTIAL_VARIANTS[variant]
    bad = cases = total = 0
    for N in range(1, 4):
        Ws, Qs, a, b, _ = _sym_balanced(N)
        Q = lambda q: Qs[N - q]  # noqa: E731
        for q in range(1, N + 1):
            A, B = dln.partial_A(Ws, q), dln.partial_B(Ws, q)
            n = (_count_nonzero(A - Q(N) * sp.diag(a ** eA(N, q), b ** eA(N, q)) * Q(q - 1).T)
                 + _count_nonzero(B - Q(q) * sp.diag(a ** eB(N, q), b ** eB(N, q)) * Q(0).T))
            bad += n
            cases += int(n > 0)
            total += 1
    return bad, cases, total


@partial.symbolic(timeout=60)
def _(p):
    """d = 2, exact rational rotations, a, b > 0 free: the corrected (7.11) holds entrywise for
    N = 1..3 and every p; the printed A_p fails for every p (mutant as_printed)."""
    good, _, _ = _partial_prove()
    return Outcome(residual=good, tolerance=0, values={
        "method": "sympy.cancel/expand of every entry", "instances": "d=2, N=1..3, all p",
        "proved": "A_p = Q_N diag(a,b)^{N-p+1} Q_{p-1}^T and B_p = Q_p diag(a,b)^p Q_0^T on M (Sigma = Lambda^N)"},
        message="number of entries of the corrected (7.11) that did not reduce to zero")


@partial.mutant({
    "as_printed": "A_p = Q_N Sigma^{(N-p)/N} Q_{p-1}^T as printed (the off-by-one of E3)",
    "B_index_shifted": "B_p = Q_p Sigma^{(p-1)/N} Q_0^T (index shifted p -> p-1 in the exponent)",
}, timeout=60)
def _(p, variant):
    """(7.11) perturbed, through the same procedure: entries must stay nonzero."""
    bad, cases, total = _partial_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad, "failing_cases": f"{cases} of {total}"},
                   message=f"{bad} entries of (7.11, {variant}) did not reduce to zero, in {cases} of {total} (N, p)")
