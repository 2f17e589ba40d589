"""Chapter 3, App 3.A "Some results for general residual networks", its preamble (seed l.1826-1871): the
definition of global Lipschitz continuity (T3.1, l.1830-1834: the typo g(u', v) for g(u', v'), E17;
``sander.lipschitz_definition``) and the backpropagation (3.13)-(3.16) of the general ResNet (3.12) with erratum E8
(l.1852-1862; ``sander.resnet_backprop``).

Catalogue sander_part1 §2.8 (T3.1, T3.2), §4 E8, E17.  Conventions: see :mod:`theorems.sander._resnet_harness`.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import resnet_train as rt
from solvers import xp_sander1 as xk
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.sander._resnet_harness import ACTS


EPS = float(np.finfo(float).eps)


# ===========================================================================
# 1. Backprop (3.13)-(3.16), erratum E8
backprop = Claim(
    id="sander.resnet_backprop",
    title="Backpropagation for the general ResNet (3.12): transpose in (3.13), p_k (not p_{k-1}) in (3.15)",
    label="(3.13)-(3.16)",
    section="3.A",
    equation="(3.13)-(3.16)",
    lines=(1852, 1862),
    statement=r"p_k=p_{k+1}+\tfrac1L\partial_1f(h_k,Z_{k+1})\,p_{k+1},\quad "
              r"\frac{\partial\ell}{\partial Z_k}=\frac1{nL}\sum_i\partial_2f(h_{k-1,i},Z_k)^\top p_{k-1,i}",
    status="erratum",
    corrected=r"p_k=p_{k+1}+\tfrac1L\partial_1f(h_k,Z_{k+1})^\top p_{k+1},\quad "
              r"\frac{\partial\ell}{\partial Z_k}=\frac1{nL}\sum_i\partial_2f(h_{k-1,i},Z_k)^\top p_{k,i},\ "
              r"\frac{\partial\ell}{\partial A}=\frac1n\sum_ip_{0,i}x_i^\top,\ \frac{\partial\ell}{\partial B}=\frac2n\sum_i(F(x_i)-y_i)h_{L,i}^\top",
    params=[
        Param.int("n", 4, 1, 50, "samples", search=(1, 6)),
        # d, d' <= 4 <= q: the frame needs q >= max(d, d'), which independent draws over d, d' <= 8, q >= 1 broke in
        # 7 of 20 sweep draws (rejected); narrowed by the audit (issue 21)
        Param.int("d", 3, 1, 4, "input dimension", search=(1, 4)),
        Param.int("dp", 2, 1, 4, "output dimension d'", search=(1, 4)),
        Param.int("q", 5, 4, 12, "hidden dimension (q >= max(d, d'))", search=(4, 6)),
        Param.int("m", 4, 1, 12, "MLP width", search=(1, 6)),
        Param.int("L", 4, 1, 40, "depth", search=(1, 8)),
        Param.choice("act", "tanh", ACTS, "activation"),
        Param.seed("seed of data and weights (all weights random)"),
    ],
    validate=lambda p: (_ for _ in ()).throw(ParamError(
        f"parameter q={p.q} must be >= max(d, d') = {max(p.d, p.dp)}")) if p.q < max(p.d, p.dp) else None,
    notes="Checked against solvers.fd central differences on random nets (all of A, V_k, W_k, B random, so "
          "no gradient vanishes by symmetry).  The same index shift p_{k-1} recurs in (3.20), (3.37) and l.2330; "
          "the proof of Prop 3.6 uses the right p_{k+1} for V_{k+1} (l.2556).  (3.14) and (3.16) are correct.  "
          "ReLU: FD is valid only away from kinks; an instance with a pre-activation within 40h of 0 is inconclusive "
          "(h = 1e-7 for ReLU since session 9, 1e-5 otherwise: 4/20 -> 0/20 inconclusive on sweep seed 4100402).",
    catalogue="sander_part1 §2.8 T3.2; §4 E8",
    covers=("T3.2", "M3.1", "E8"),
)


def _bp_instance(p):
    rng = np.random.default_rng(p.seed)
    X, Y = rng.standard_normal((p.n, p.d)), rng.standard_normal((p.n, p.dp))
    A = rng.standard_normal((p.q, p.d))
    V = rng.standard_normal((p.L, p.q, p.m))
    W = rng.standard_normal((p.L, p.m, p.q))
    B = rng.standard_normal((p.dp, p.q))
    return X, Y, A, V, W, B


def _bp_outcome(p, variant):
    X, Y, A, V, W, B = _bp_instance(p)
    # ReLU: a step 100x smaller keeps the stencil off the kinks in far more draws (session 9: h = 1e-5 left 4 of 20
    # draws of sweep 4100402 inconclusive, all ReLU); the FD error estimate (cancellation eps |l|/h) sets the tolerance
    h = 1e-7 if p.act == "relu" else 1e-5
    if p.act == "relu":
        H, _ = rt.forward_numpy(X, A, V, W, B, "relu")
        pre = np.einsum("lnq,lmq->lnm", H[:-1], W) / math.sqrt(p.q)
        if np.min(np.abs(pre)) < 4 * h * 10:
            return inconclusive("a ReLU pre-activation lies within the finite-difference stencil of the kink",
                                min_abs_preactivation=float(np.min(np.abs(pre))))
    # array API (NumPy, array-api-strict, CuPy): backprop on xp (the Numba kernel on --backend numba), and every
    # finite-difference perturbation of (A, V, W, B) as one batched forward pass (solvers.xp_sander1.fd_gradients)
    xp = xp_of(p)
    Xx, Yx, Ax, Vx, Wx, Bx = on(xp, X, Y, A, V, W, B)
    if variant == "true" and p.backend == "numba":
        _, *g = rt.grads(X, Y, A, V, W, B, p.act)
        g = on(xp, *g)
    else:
        _, *g = xk.rt_grads(xp, Xx, Yx, Ax, Vx, Wx, Bx, p.act, variant=variant)
    fd, err = xk.fd_gradients(xp, lambda a, v, w, b: xk.rt_loss(xp, Xx, Yx, a, v, w, b, p.act),
                              [Ax, Vx, Wx, Bx], h=h)
    parts, rel = {}, {}
    for nm, gi, fi, ei in zip("AVWB", g, fd, err):
        # error model: fd.gradient_with_error's entrywise estimate (Richardson truncation + cancellation),
        # x4 safety, plus backprop rounding ~ 50 (q + m) L eps |g|
        fmax = float(xp.max(xp.abs(fi)))
        tol = 4 * float(xp.max(ei)) + 50 * (p.q + p.m) * p.L * EPS * max(1.0, fmax)
        parts[nm] = (float(xp.max(xp.abs(gi - fi))), tol)
        rel[nm] = parts[nm][0] / max(fmax, 1e-300)
    return Outcome.from_parts(parts, f"max |backprop - FD| per block ({variant})",
                              {"relative_error": rel, "variant": variant, "fd_step": h})


@backprop.numeric(backends=("numpy", "numba", "cupy"))
def _(p):
    """All four gradients of the corrected backprop against central differences."""
    return _bp_outcome(p, "true")


backprop.property(over=("n", "d", "dp", "q", "m", "L", "act", "seed"), max_examples=12)


@backprop.falsifier({
    "stated": "(3.13) as printed (no transpose of the Jacobian): relative error O(1) (catalogue 2.57 on p_0).",
    "index_p_k_minus_1": "(3.15) as printed, with p_{k-1}: error O(1/L), 0.12 relative at L = 4 (catalogue).",
}, search=("seed", "L"), backends=("numpy", "cupy"))
def _(p, variant):
    return _bp_outcome(p, {"stated": "printed_313", "index_p_k_minus_1": "printed_315"}[variant])


def _backprop_mismatches(form="corrected"):
    """Entries where sympy.diff of the loss and the backprop expression ``form`` differ: 'corrected' ((3.13) with
    d_1f^T, (3.15) with p_k), 'printed_313' (d_1f p without the transpose), 'printed_315' (p_{k-1} in (3.15))."""
    sig = sp.Function("sigma")
    q, m, L = 2, 1, 2
    x, y = sp.symbols("x y")
    A = sp.Matrix(q, 1, lambda i, j: sp.Symbol(f"a{i}"))
    B = sp.Matrix(1, q, lambda i, j: sp.Symbol(f"b{j}"))
    V = [sp.Matrix(q, m, lambda i, j, k=k: sp.Symbol(f"v{k}_{i}{j}")) for k in range(L)]
    W = [sp.Matrix(m, q, lambda i, j, k=k: sp.Symbol(f"w{k}_{i}{j}")) for k in range(L)]
    sq = sp.sqrt(q)
    hs = [A * x]
    pres = []
    for k in range(L):
        pre = W[k] * hs[-1] / sq
        pres.append(pre)
        hs.append(hs[-1] + V[k] * pre.applyfunc(sig) / (L * sp.sqrt(m)))
    F = (B * hs[-1])[0]
    loss = (F - y) ** 2
    P = 2 * B.T * (F - y)
    bad = 0
    dsf = sp.Function("dsigma")
    dsig = [pre.applyfunc(dsf) for pre in pres]

    def D(expr, v):                # sympy writes sigma'(z) as Subs(Derivative(sigma(xi), xi), xi, z)
        return sp.diff(expr, v).replace(lambda e: isinstance(e, sp.Subs), lambda e: dsf(e.point[0]))
    for k in range(L - 1, -1, -1):
        s = pres[k].applyfunc(sig)
        G = sp.matrix_multiply_elementwise(V[k].T * P, dsig[k])
        if form == "printed_313":         # p_k = p_{k+1} + d_1f p_{k+1} / L, no transpose
            P_next = P + V[k] * sp.matrix_multiply_elementwise(W[k] * P, dsig[k]) / (L * sp.sqrt(m) * sq)
        else:
            P_next = P + W[k].T * G / (L * sp.sqrt(m) * sq)
        Pz = P_next if form == "printed_315" else P
        Gz = sp.matrix_multiply_elementwise(V[k].T * Pz, dsig[k])
        gV = Pz * s.T / (L * sp.sqrt(m))
        gW = Gz * hs[k].T / (L * sp.sqrt(m) * sq)
        for M_, g_ in ((V[k], gV), (W[k], gW)):
            for i in range(M_.rows):
                for j in range(M_.cols):
                    bad += int(sp.expand(D(loss, M_[i, j]) - g_[i, j]) != 0)
        P = P_next
    for i in range(q):
        bad += int(sp.expand(D(loss, A[i, 0]) - (P * x)[i, 0]) != 0)
        bad += int(sp.expand(D(loss, B[0, i]) - (2 * (F - y) * hs[-1])[i, 0]) != 0)
    return bad


@backprop.symbolic(timeout=60)
def _(p):
    """sigma an undefined function, q = 2, m = 1, L = 2, one sample: d loss / d(V_k, W_k, A, B) by sympy.diff equals the
    corrected backprop expression entry by entry (expand of the difference is 0)."""
    bad = _backprop_mismatches("corrected")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.diff vs corrected backprop, sigma undefined", "instances": ["q=2, m=1, L=2, n=1"],
        "proved": "(3.13) with d_1 f^T and (3.15) with p_k, (3.14), (3.16), for every C^1 sigma"},
        message="entries where the derivative and the backprop formula differ")


@backprop.mutant({"printed_313": "(3.13) as printed, p_k = p_{k+1} + d_1f p_{k+1}/L (no transpose)",
                  "printed_315": "(3.15) as printed, with p_{k-1} instead of p_k"}, timeout=60)
def _(p, variant):
    """The printed backprop (E8), through the same sympy.diff comparison: entries must differ."""
    bad = _backprop_mismatches(variant)
    return Outcome(residual=bad, tolerance=0, values={"mismatched_entries": bad},
                   message=f"{bad} entries where sympy.diff and the {variant} backprop differ")


# ===========================================================================
# T3.1: global Lipschitz continuity (l.1832), E17 typo
lip = Claim(
    id="sander.lipschitz_definition",
    title="Def. of global Lipschitz continuity: the printed inequality compares g(u, v) with g(u', v), not g(u', v')",
    label="Sec 3.A (definitions), l.1832",
    section="3.A",
    equation="l.1832",
    lines=(1830, 1834),
    statement=r"\|g(u,v)-g(u',v)\|\le K\|u-u'\|+K\|v-v'\|",
    status="erratum",
    corrected=r"\|g(u,v)-g(u',v')\|\le K\|u-u'\|+K\|v-v'\|",
    params=[Param.float("eps", 0.05, 0.0, 1.0, "v-scale of the test function g = tanh(u) + tanh(v/eps)", low_open=True),
            Param.int("pairs", 4000, 10, 10**6, "number of random pairs"),
            Param.seed("seed of the pairs")],
    notes="E17 typo.  The printed condition only constrains u (take v' = v; the K||v - v'|| term is slack), so it "
          "gives a constant blind to v: g = tanh(u) + tanh(v/eps) meets it with K = 1 for every eps, and that K fails the "
          "joint bound that Lemmas 3.19/3.20 and Prop 3.8 use (falsifier 'stated': same g, same pairs, printed condition "
          "checked to hold, only v' vs v differs; audit issue 21 replaced a discontinuous-g strawman whose verdict did "
          "not depend on the printed condition holding).  "
          "Corrected (numeric): g = tanh(u) + tanh(v/eps) satisfies the joint bound with K = max(sup|d_u g|, sup|d_v g|) "
          "= max(1, 1/eps) on random and near pairs (mean-value theorem).  Error model: rounding 8 eps (1 + |g|).",
    catalogue="sander_part1 §2.8 T3.1; §4 E17",
    covers=("T3.1", "E17"),
)


def _pairs(p):
    rng = np.random.default_rng(p.seed)
    u = rng.uniform(-3, 3, p.pairs)
    u2 = u + rng.choice([1e-6, 1e-3, 1e-1, 3.0], p.pairs) * rng.standard_normal(p.pairs)
    v = rng.uniform(-3, 3, p.pairs)
    dv = rng.choice([1e-6, 1e-3, 1e-1, 3.0], p.pairs) * rng.standard_normal(p.pairs)
    v = np.where(np.arange(p.pairs) % 2 == 0, v, 1e-7 * rng.standard_normal(p.pairs))   # half straddle v = 0
    return u, u2, v, v + dv


def _lip_g(xp, eps):
    return lambda u, v: xp.tanh(u) + xp.tanh(v / eps)


def _joint(g, K, p, xp):
    """Array API: the pairs are drawn on the host and moved to ``xp``; both sides on ``xp``."""
    u, u2, v, v2 = on(xp, *_pairs(p))
    gap = xp.abs(g(u, v) - g(u2, v2)) - K * (xp.abs(u - u2) + xp.abs(v - v2))
    i = int(xp.argmax(gap))
    return Outcome(residual=float(xp.max(gap)), tolerance=8 * EPS * 3,
                   values={"K": K, "worst_pair": [float(u[i]), float(v[i]), float(u2[i]), float(v2[i])]},
                   message="max over pairs of |g(u,v) - g(u',v')| - K(|u-u'| + |v-v'|)")


@lip.numeric(backends=("numpy", "cupy"))
def _(p):
    """tanh(u) + tanh(v/eps) with K = max(1, 1/eps) satisfies the joint (corrected) inequality."""
    xp = xp_of(p)
    return _joint(_lip_g(xp, p.eps), max(1.0, 1.0 / p.eps), p, xp)


lip.property(over=("seed",), max_examples=10)


@lip.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The same g = tanh(u) + tanh(v/eps) and the same pairs as the numeric check; the constant is the one the PRINTED
    definition gives, K_printed = sup|d_u g| = 1 (the printed inequality compares g(u, v) with g(u', v), so only u moves;
    it is checked to hold on the pairs, else inconclusive).  That K is then used as the proofs use it (Lemmas 3.19/3.20,
    Prop 3.8), in the joint bound |g(u,v) - g(u',v')| <= K(|u-u'| + |v-v'|): it fails by the v-slope 1/eps - 1.  The
    two sides differ only in v' versus v, the erratum's difference; the corrected numeric check (K = max(1, 1/eps))
    certifies on the same g and pairs."""
    xp = xp_of(p)
    g = _lip_g(xp, p.eps)
    K_printed = 1.0                                              # sup_u |d/du tanh(u)|
    u, u2, v, v2 = on(xp, *_pairs(p))
    printed = float(xp.max(xp.abs(g(u, v) - g(u2, v)) - K_printed * (xp.abs(u - u2) + xp.abs(v - v2))))
    tol = 8 * EPS * 3
    if printed > tol:
        return inconclusive(f"g violates the printed condition with K = {K_printed} (excess {printed:.3e}): "
                            "not a function the printed definition admits")
    out = _joint(g, K_printed, p, xp)
    out.values["printed_condition_residual"] = printed
    out.values["K_corrected"] = max(1.0, 1.0 / p.eps)
    return out
