"""Sander thesis ch.5-7: the catalogue entries left after sinkformer.py, incontext.py and topk.py.

* Prop 5.1's KL-projection characterisation (an independent Newton solver on the Birkhoff polytope);
* Remark 2 (linear RNNs cannot learn in context), formalised on unitary diagonal contexts;
* Lemma 6.3 (positional-softmax heads build e_t = (0, s_t, s_{t-1})), with the s_0 := s_1 caveat (A1);
* Lemma 6.6 (output of (6.6) in closed form);
* the proof of Prop 6.4 writes s_{t-1}^T for s_{t-1}^* (erratum, complex contexts);
* Prop 6.5's global minimality by multi-start BFGS (the catalogue's 12-start table);
* Fig 6.3 at CPU scale (R6.a, slow);
* the min/max slip in the proof of Prop 7.5 (l.5105) and Prop 7.8's hypothesis p > 0 (should be p > 1);
* the w >= 0 hypothesis of Prop 7.3 (literal perspective);
* Fig 7.3's exact-zero areas; Fig 5.2 and the toy pruning run (registered, not reproduced).

Conventions as in the sibling modules (catalogue sander_part23 §6): hermitian product <a|b> = b^* a (A2),
R = (lam/p)|.|_p^p, h_i(v) = r*(s_i - v) + w_i phi(v) (A7).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from solvers import sinkhorn as sk
from solvers import topk as tk
from solvers import xp_sander2 as X
from solvers.xp import asnumpy, namespace, on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.sander.incontext import (_aug_loss_grad, _aug_quadratic, _closed_loss, _eta_star, _loss_aug, _torus,
                                       _torus_orth, _loss_plain)

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Prop 5.1: Sinkhorn(C) = argmin_{K 1 = K^T 1 = 1} KL(K | e^C)
def _kl(K, K0):
    return float(np.sum(K * np.log(K / K0)))


def _kl_newton(K0, max_iter=200):
    """Primal damped Newton on the affine set {K 1 = K^T 1 = 1}, parametrised by the (n-1)^2 tangent directions
    E_ij - E_in - E_nj + E_nn, from the uniform matrix; no scaling (Sinkhorn) structure is used."""
    n = K0.shape[0]
    m = n - 1
    B = np.zeros(((n - 1) ** 2, n, n))
    for a, (i, j) in enumerate(itertools.product(range(m), range(m))):
        B[a, i, j] += 1; B[a, i, m] -= 1; B[a, m, j] -= 1; B[a, m, m] += 1
    Bf = B.reshape(len(B), -1)
    K = np.full((n, n), 1.0 / n)
    L0 = np.log(K0)
    for it in range(max_iter):
        g = Bf @ (np.log(K) - L0 + 1).ravel()
        H = (Bf / K.ravel()) @ Bf.T
        step = np.linalg.solve(H, g)
        dec = float(g @ step)
        D = (step @ Bf).reshape(n, n)
        t = 1.0
        while np.any(K - t * D <= 0):
            t *= 0.5
        f0 = _kl(K, K0)
        while t > 1e-12 and _kl(K - t * D, K0) > f0 - 0.25 * t * dec + 64 * EPS * abs(f0):
            t *= 0.5
        K = K - t * D
        if dec < 1e-28 and t == 1.0:
            break
    return K, it, float(np.max(np.abs(Bf @ (np.log(K) - L0 + 1).ravel())))


kl = Claim(
    id="sander.sinkhorn_kl_projection",
    title="Sinkhorn(C) is the KL projection of e^C onto the doubly stochastic matrices",
    label="Prop 5.1 (proof)",
    section="5.A.1",
    equation="",
    lines=(3832, 3854),
    statement=r"\mathrm{Sinkhorn}(C)=\operatorname{argmin}_{K\mathbb 1=K^\top\mathbb 1=\mathbb 1}"
              r"\sum_{ij}K_{ij}\log\frac{K_{ij}}{e^{C_{ij}}}",
    status="holds",
    params=[
        Param.int("n", 4, 2, 7, "matrix size", search=(2, 6)),
        Param.float("scale", 2.0, 0.1, 4.0, "C entries uniform in [-scale, scale]", search=(0.1, 3.0)),
        Param.seed("seed of C"),
    ],
    notes="The variational formula the proof of Prop 5.1 uses, checked against an independent primal solver: "
          "damped Newton on KL(K|e^C) restricted to the affine set, in (n-1)^2 tangent coordinates, from the uniform "
          "matrix (strictly convex, so its stationary point is the argmin). The catalogue's perturbation test "
          "(2000 marginal-preserving perturbations never decrease KL) is included as a part (200 perturbations "
          "of size 1e-3). Falsifier: Sinkhorn of a non-additively perturbed cost is doubly stochastic but not "
          "the projection of e^C.",
    catalogue="sander_part23 §2.2 P5.1 (KL check, ch5_psd.py)",
    covers=("P5.1",),
)


def _kl_instance(p, perturb=0.0):
    rng = np.random.default_rng(p.seed)
    C = rng.uniform(-p.scale, p.scale, (p.n, p.n))
    h = rng.uniform(-1, 1, (p.n, p.n))
    Ks = sk.sinkhorn(C + perturb * h, tol=1e-15, max_iter=200_000, backend="numpy")
    return C, Ks


def _kl_outcome(p, perturb=0.0):
    C, Ks = _kl_instance(p, perturb)
    if not Ks.converged:
        return inconclusive("Sinkhorn did not reach 1e-15", row_err=Ks.row_err)
    K0 = np.exp(C)
    Kn, it, gres = _kl_newton(K0)
    # error model: the Newton point solves the optimality system to rounding; the argmin is perturbed by
    # |dK| <= |H^{-1}| |residual|, H = B diag(1/K) B^T >= min(B B^T) / max K; Sinkhorn's own marginal error
    # row_err moves K by at most n * row_err.  Both scaled by 256 n eps headroom for the log/exp evaluations.
    dev = float(np.max(np.abs(Kn - Ks.K)))
    tol = 256 * p.n ** 2 * EPS * float(np.max(K0) / np.min(K0)) ** 0.5 + 4 * p.n * Ks.row_err + 8 * gres
    rng = np.random.default_rng(p.seed + 1)
    worst = math.inf
    base = _kl(Ks.K, K0)
    for _ in range(200):
        H = rng.standard_normal((p.n, p.n))
        H -= H.mean(axis=1, keepdims=True) + H.mean(axis=0, keepdims=True) - H.mean()
        H *= 1e-3 / np.max(np.abs(H))
        if np.any(Ks.K + H <= 0):
            continue
        worst = min(worst, _kl(Ks.K + H, K0) - base)
    # a first-order decrease would be of size |grad . H| ~ 1e-3 * |log K/K0|; rounding of the KL sums ~ n^2 eps
    kl_tol = 64 * p.n ** 2 * EPS * (1 + abs(base)) + 4 * p.n * Ks.row_err * (1 + float(np.max(np.abs(C))))
    return Outcome.from_parts(
        {"argmin": (dev, tol), "no_descent": (max(0.0, -worst), kl_tol)},
        f"|K_newton - K_sinkhorn| = {dev:.2e}, min KL increase over perturbations {worst:.2e}",
        {"newton_iters": it, "newton_gradient": gres, "sinkhorn_row_err": Ks.row_err,
         "KL_at_sinkhorn": base, "KL_at_newton": _kl(Kn, K0), "min_KL_increase": worst})


@kl.numeric
def _(p):
    """Independent Newton argmin of KL over the Birkhoff polytope equals Sinkhorn; perturbations never descend."""
    return _kl_outcome(p)


kl.property(over=("n", "scale", "seed"), max_examples=12)


@kl.falsifier("non_additive_cost")
def _(p):
    """Sinkhorn(C + h), h a non-additive perturbation of size 0.5: doubly stochastic, but not argmin KL(.|e^C)."""
    return _kl_outcome(p, perturb=0.5)


# ===========================================================================
# Remark 2: linear RNNs
def _rnn_loss(A, B, s1, lam, T, W_dependent=False):
    """E_lambda sum_t |y_t - W^t s_1|^2, y_t = sum_{k<=t} A^{t-k} B W^{k-1} s_1, W = diag(lambda), and
    E |y_t|^2 + |s_1|^2 (the Pythagoras split), per t; lam: quadrature points (rows)."""
    out_loss, out_pyth = [], []
    d = s1.size
    for t in range(1, T + 1):
        y = np.zeros(lam.shape, dtype=complex)
        for k in range(1, t + 1):
            v = lam ** (k - 1) * s1                          # W^{k-1} s_1, one row per context
            if W_dependent:                                  # B = W / t (depends on the context)
                v = v * lam / t
            else:
                v = v @ B.T
            y += v @ np.linalg.matrix_power(A, t - k).T
        target = lam ** t * s1
        out_loss.append(float(np.mean(np.sum(np.abs(y - target) ** 2, axis=1))))
        out_pyth.append(float(np.mean(np.sum(np.abs(y) ** 2, axis=1))) + float(s1 @ s1))
    return np.array(out_loss), np.array(out_pyth)


rnn = Claim(
    id="sander.incontext_rnn_remark",
    title="Remark 2 formalised: a linear RNN with context-independent (A, B) has expected error >= |s_1|^2 at every t",
    label="Remark 2",
    section="6.3",
    equation="",
    lines=(4150, 4150),
    statement=r"y_t=\sum_{k=1}^tA^{t-k}BW^{k-1}e_1;\ A,B\text{ would have to depend on }W\text{ for }y_t\approx W^ts_1",
    status="heuristic",
    params=[
        Param.int("d", 2, 1, 3, "dimension", search=(1, 3)),
        Param.int("T", 4, 1, 7, "horizon (t = 1..T)", search=(1, 6)),
        Param.float("scale", 1.0, 0.0, 3.0, "scale of the random A, B (entries N(0, scale^2/d))", search=(0.0, 2.0)),
        Param.seed("seed of A, B, s_1"),
    ],
    notes="The remark is informal (catalogue [H]); this is one precise reading. For W = diag(lambda), lambda uniform "
          "on the torus (unitary commuting contexts, Assumption 6.2), y_t is a polynomial of degree <= t-1 in "
          "lambda while W^t s_1 has degree t, so they are orthogonal in L^2 and E|y_t - W^t s_1|^2 = E|y_t|^2 + "
          "|s_1|^2 >= |s_1|^2: no context-independent (A, B) beats predicting 0. Exact expectation by quadrature "
          "on the N-th roots of unity, N = T + 2 (all exponent differences are <= T). Falsifier: B = W/t "
          "(context-dependent) fits exactly, so the bound needs the independence the remark states.",
    catalogue="sander_part23 §2.3 R6.2",
    covers=("R6.2",),
)


def _rnn_outcome(p, W_dependent=False):
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    A = rng.standard_normal((p.d, p.d)) * p.scale / math.sqrt(p.d)
    B = rng.standard_normal((p.d, p.d)) * p.scale / math.sqrt(p.d)
    s1 = rng.standard_normal(p.d)
    lam = _torus(p.d, p.T + 2)
    Ax, Bx, sx, lx = on(xp, A, B, s1, lam)
    loss, pyth = (asnumpy(a) for a in X.rnn_loss(Ax, Bx, sx, lx, p.T, W_dependent))
    # rounding of the quadrature means: ~ 8 T N^d eps times the size of the summands
    size = float(np.max(pyth)) + 1.0
    tol = 16 * p.T * (1 + p.T) * EPS * size
    n1 = float(s1 @ s1)
    parts = {"lower_bound": (max(0.0, float(np.max(n1 - loss))), tol)}
    if not W_dependent:
        parts["pythagoras"] = (float(np.max(np.abs(loss - pyth))), tol)
    return Outcome.from_parts(parts, f"min_t E|y_t - W^t s_1|^2 = {float(np.min(loss)):.4g} vs |s_1|^2 = {n1:.4g} "
                                     f"({p.backend})", {"loss_per_t": loss.tolist(), "s1_norm2": n1})


@rnn.numeric(backends=("numpy", "cupy"))
def _(p):
    """E|y_t - W^t s_1|^2 = E|y_t|^2 + |s_1|^2 >= |s_1|^2 for every t (exact torus quadrature)."""
    return _rnn_outcome(p)


rnn.property(over=("d", "T", "scale", "seed"), max_examples=15)


@rnn.falsifier("B_depends_on_W", backends=("numpy", "cupy"))
def _(p):
    """With B = W/t (context-dependent, A = any) y_t = W^t s_1: the lower bound fails."""
    return _rnn_outcome(p, W_dependent=True)


# ===========================================================================
# Lemma 6.3: positional softmax heads
def _pos_tokens(S, beta):
    """Two positional-softmax heads with causal mask: P^1 = beta [t' = t], P^2 = beta [t' = t-1];
    returns the (T, 3d) outputs sum_h sum_{t'<=t} A^h_{t,t'} W_V^h s_{t'}, and the weights."""
    T, d = S.shape
    out = np.zeros((T, 3 * d))
    offdiag = []
    for t in range(T):                       # t is 0-based: position t+1
        for h, target in ((1, t), (2, t - 1)):
            logits = np.array([beta if tp == target else 0.0 for tp in range(t + 1)])
            a = np.exp(logits - logits.max())
            a /= a.sum()
            out[t, h * d:(h + 1) * d] = a @ S[:t + 1]
            if target >= 0:
                offdiag.append(1.0 - a[target])
    return out, max(offdiag) if offdiag else 0.0


pos = Claim(
    id="sander.incontext_positional_heads",
    title="Two positional-softmax heads produce e_t = (0, s_t, s_{t-1}) to any precision for t >= 2; at t = 1 the "
          "s_0 slot receives s_1",
    label="Lemma 6.3",
    section="6.4, 6.A.1",
    equation="",
    lines=(4164, 4164),
    statement=r"\sum_{h=1}^2\sum_{t'\le t}\mathcal A^h_{t,t'}W_V^hs_{t'}\simeq(0,s_t,s_{t-1})=e_t",
    status="holds",
    params=[
        Param.int("T", 8, 2, 30, "sequence length", search=(2, 20)),
        Param.int("d", 2, 1, 6, "token dimension", search=(1, 5)),
        Param.float("delta", 1e-6, 1e-12, 0.5, "target precision (beta is chosen from it)", search=(1e-12, 0.1)),
        Param.seed("seed of s_1..s_T (N(0, 1))"),
    ],
    notes="Proof construction (l.4347-4361): P^1_{t,t'} = beta [t'=t], P^2_{t,t'} = beta [t'=t-1], causal mask. "
          "Error at t >= 2 per head <= (t-1)/(e^beta + t-1) * max|s_t' - s_t| <= (T-1) e^-beta 2 max|s|, so beta = "
          "log(2 sqrt2 (T-1) max|s| / delta) gives precision delta (the 'arbitrary precision' of the lemma). Caveat "
          "A1 (catalogue): at t = 1 the causal head 2 can only attend to t' = 1, so the s_0 slot holds s_1 exactly, "
          "i.e. the construction realises the convention s_0 := s_1 (under which Prop 6.5's structure fails, see "
          "sander.incontext_gd_step). Falsifier: reading s_0 = 0 at t = 1.",
    catalogue="sander_part23 §2.3 L6.3; §6 A1",
    covers=("L6.3",),
)


def _pos_tokens_xp(S, beta):
    """_pos_tokens on the array path: both heads as causally masked (T, T) softmax matrices applied to S at once.
    Returns the (T, 3d) outputs and the largest off-target weight (host float)."""
    xp = namespace(S)
    T, d = S.shape
    i = xp.reshape(xp.arange(T), (T, 1))
    j = xp.reshape(xp.arange(T), (1, T))
    outs, off = [xp.zeros((T, d), dtype=S.dtype)], 0.0
    for shift in (0, 1):                       # head 1 attends to t' = t, head 2 to t' = t - 1
        target = (j == i - shift)
        full = lambda v: xp.full((T, T), v, dtype=S.dtype)  # noqa: E731
        logits = xp.where(j <= i, xp.where(target, full(beta), full(0.0)), full(-xp.inf))
        A = X.softmax_rows(logits)
        outs.append(A @ S)
        has = xp.any(target, axis=1)
        w = xp.sum(xp.where(target, A, full(0.0)), axis=1)
        if bool(xp.any(has)):
            off = max(off, float(xp.max(xp.where(has, 1.0 - w, xp.full((T,), -xp.inf, dtype=S.dtype)))))
    return xp.concat(outs, axis=1), off


def _pos_outcome(p, s0_zero=False):
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    S = rng.standard_normal((p.T, p.d))
    smax = float(np.max(np.linalg.norm(S, axis=1)))
    beta = math.log(2 * math.sqrt(2) * max(p.T - 1, 1) * smax / p.delta) if smax > 0 else 0.0
    Sx = on(xp, S)
    out, off = _pos_tokens_xp(Sx, beta)
    want = xp.concat([xp.zeros((p.T - 1, p.d), dtype=Sx.dtype), Sx[1:, :], Sx[:-1, :]], axis=1)
    err = [float(e) for e in asnumpy(xp.linalg.vector_norm(out[1:, :] - want, axis=1))]
    # rounding: softmax weights to ~4 eps, weighted sums of T terms of size smax
    rtol = 8 * p.T * EPS * smax
    s0 = xp.zeros((p.d,), dtype=Sx.dtype) if s0_zero else Sx[0, :]
    slot = float(xp.linalg.vector_norm(out[0, 2 * p.d:] - s0))
    parts = {"t>=2": (max(err) if err else 0.0, p.delta + rtol), "t=1 s0 slot": (slot, p.delta + rtol)}
    return Outcome.from_parts(parts, f"beta = {beta:.3g} ({p.backend})",
                              {"beta": beta, "max_offtarget_weight": off, "errors_t>=2": err,
                               "t1_slot_minus_s0": slot})


@pos.numeric(backends=("numpy", "cupy"))
def _(p):
    """Max error over t >= 2 is <= delta at the chosen beta; at t = 1 the s_0 slot equals s_1 (convention A1)."""
    return _pos_outcome(p)


pos.property(over=("T", "d", "delta", "seed"), max_examples=15)


@pos.falsifier("s0_zero_at_t1", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """The construction does not produce s_0 = 0 at t = 1: the slot holds s_1."""
    return _pos_outcome(p, s0_zero=True)


# ===========================================================================
# Lemma 6.6
def _l66_direct(Ah, Bh, P_row, lam, T, conj_first=False):
    """(6.6) head by head, e_t = lambda^(t-1) (s = 1_d), <a|b> = b^* a (or a^* b if conj_first)."""
    out = np.zeros(lam.shape, dtype=complex)
    e = [lam ** (t - 1) for t in range(1, T + 1)]
    for a, b in zip(Ah, Bh):
        q = a * e[T - 2]                                     # A^h e_{T-1}, A^h = diag(a)
        for t in range(1, T + 1):
            ip = np.sum(np.conj(e[t - 1]) * q, axis=1) if conj_first else np.sum(e[t - 1] * np.conj(q), axis=1)
            out += P_row[t - 1] * ip[:, None] * (b * e[t - 1])
    return out


def _l66_closed(Ah, Bh, P_row, lam, T):
    C = Bh.T @ Ah                                           # B^T A, (i, j) = sum_h b_h^i a_h^j
    out = np.zeros(lam.shape, dtype=complex)
    for t in range(1, T + 1):
        out += P_row[t - 1] * (lam ** (t - T + 1) @ C.T) * lam ** (t - 1)
    return out


l66 = Claim(
    id="sander.incontext_lemma66",
    title="Output of the diagonal multi-head model (6.6) on e_t = lambda^(t-1): sum_t P_{T-1,t} [B^T A] lambda^(t-T+1) o "
          "lambda^(t-1)",
    label="Lemma 6.6",
    section="6.5",
    equation="(6.6)",
    lines=(4210, 4212),
    statement=r"\mathcal T_\theta(e_{1:T})=\sum_{t=1}^TP_{T-1,t}[\mathbf B^\top\mathbf A]\lambda^{t-T+1}\odot\lambda^{t-1}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "dimension", search=(1, 5)),
        Param.int("H", 2, 1, 6, "number of heads", search=(1, 5)),
        Param.int("T", 5, 2, 10, "sequence length", search=(2, 9)),
        Param.seed("seed of A, B (N(0,1)), P (N(0,1)) and 16 random contexts"),
    ],
    notes="Direct evaluation of (6.6) with the hermitian product of l.4343 (<a|b> = b^* a, decision A2), diagonal "
          "A^h = diag(a_h), B^h = diag(b_h), against the closed form, on 16 random unitary contexts. The "
          "catalogue confirmed it only implicitly (the enumerator built from it reproduces Monte Carlo). "
          "Falsifier: the other hermitian convention (a^* b) gives exponents lambda^(T-1-t): wrong.",
    catalogue="sander_part23 §2.3 L6.6; §6 A2",
    covers=("L6.6",),
)


def _l66_outcome(p, conj_first=False):
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    Ah, Bh = rng.standard_normal((p.H, p.d)), rng.standard_normal((p.H, p.d))
    P_row = rng.standard_normal(p.T)
    lam = np.exp(2j * np.pi * rng.random((16, p.d)))
    Ax, Bx, Px, lx = on(xp, Ah, Bh, P_row, lam)
    a = X.l66_direct(Ax, Bx, Px, lx, p.T, conj_first)
    b = X.l66_closed(Ax, Bx, Px, lx, p.T)
    # rounding: each output entry is a sum of H T d products of |P| |a| |b| (powers of unit numbers: ~T eps each)
    scale = float(np.sum(np.abs(P_row))) * float(np.sum(np.abs(Ah)) * np.max(np.abs(Bh)))
    tol = 16 * (p.T + p.d + p.H) * EPS * scale
    res = float(xp.max(xp.abs(a - b)))
    return Outcome(residual=res, tolerance=tol, values={"max_abs_output": float(xp.max(xp.abs(b)))},
                   message=f"|direct - closed form| = {res:.2e} ({p.backend})")


@l66.numeric(backends=("numpy", "cupy"))
def _(p):
    """(6.6) evaluated head by head equals the Lemma 6.6 closed form."""
    return _l66_outcome(p)


l66.property(over=("d", "H", "T", "seed"), max_examples=15)


@l66.falsifier("conjugate_first_argument", backends=("numpy", "cupy"))
def _(p):
    """With <a|b> = a^* b the exponents flip: the closed form fails."""
    return _l66_outcome(p, conj_first=True)


# ===========================================================================
# Prop 6.4 proof: s_{t-1}^T should be s_{t-1}^*
gdt = Claim(
    id="sander.incontext_gd_step_hermitian",
    title="Proof of Prop 6.4: the model output is eta sum_t s_t s_{t-1}^* s_T (hermitian), not s_{t-1}^T",
    label="Prop 6.4 (proof)",
    section="6.A.2",
    equation="",
    lines=(4363, 4375),
    statement=r"\mathcal T_\theta(e_{1:T})=\eta\sum_{t=1}^Ts_ts_{t-1}^\top s_T=-\eta\nabla_WL(0)s_T",
    status="erratum",
    corrected=r"\mathcal T_\theta(e_{1:T})=\eta\sum_{t=1}^Ts_ts_{t-1}^*s_T=-\eta\nabla_WL(0)s_T\quad(s_0=0)",
    params=[
        Param.int("d", 2, 1, 4, "dimension", search=(1, 4)),
        Param.int("T", 4, 2, 8, "sequence length", search=(2, 8)),
        Param.float("eta", 0.3, 0.01, 2.0, "step size eta = B_1 scale", search=(0.05, 1.0)),
        Param.seed("seed of the unitary context and the complex s_1"),
    ],
    notes="Catalogue minor erratum (l.4369). The output of (6.4) with A_3 = I, B_1 = eta I is computed directly "
          "with the hermitian product; -grad_W L(0) for L = 1/2 sum_{t=1}^{T-1} |s_{t+1} - W s_t|^2 (complex W) by "
          "central differences on (Re W, Im W) (G = dL/dRe W + i dL/dIm W). s_0 = 0 (the convention under which "
          "Prop 6.4 holds; E6.1 is encoded in sander.incontext_gd_step). The printed transpose form differs as "
          "soon as the context is complex.",
    catalogue="sander_part23 §2.3 P6.4; §4 minor (ch.6, s_{t-1}^T)",
    covers=("P6.4",),
)


def _gdt_values(p):
    """Array path: the FD gradient of L takes its 8 d^2 + 1 evaluations as one stack of complex W (B, d, d)."""
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    lam = np.exp(2j * np.pi * rng.random(p.d))
    s1 = rng.standard_normal(p.d) + 1j * rng.standard_normal(p.d)
    s = [np.zeros(p.d, dtype=complex)] + [lam ** (t - 1) * s1 for t in range(1, p.T + 1)]
    sx = [on(xp, v) for v in s]
    dd = p.d * p.d
    S_in = xp.stack([sx[t] for t in range(1, p.T)], axis=1)             # (d, T-1): s_1..s_{T-1}
    S_out = xp.stack([sx[t + 1] for t in range(1, p.T)], axis=1)        # (d, T-1): s_2..s_T

    def L(WR):                                                          # WR (B, 2 d^2) -> (B,)
        B = WR.shape[0]
        W = xp.reshape(xp.astype(WR[:, :dd], xp.complex128) + 1j * xp.astype(WR[:, dd:], xp.complex128),
                       (B, p.d, p.d))
        r = xp.abs(S_out - W @ S_in)
        return 0.5 * xp.sum(r * r, axis=(-2, -1))

    gx, gex = X.gradient_with_error_batched(L, xp.zeros((2 * dd,), dtype=xp.float64), 1e-3)
    g, ge = asnumpy(gx), asnumpy(gex)
    G = on(xp, g[:dd] + 1j * g[dd:])
    G = xp.reshape(G, (p.d, p.d))
    sT = sx[p.T]
    vdot = lambda a, b: xp.sum(xp.conj(a) * b)  # noqa: E731
    gd = -p.eta * (G @ sT)
    herm = p.eta * sum(sx[t] * vdot(sx[t - 1], sT) for t in range(1, p.T + 1))     # conjugates s_{t-1}
    trans = p.eta * sum(sx[t] * xp.sum(sx[t - 1] * sT) for t in range(1, p.T + 1))
    # FD error (gradient_with_error's estimate, L is quadratic so it is rounding only) propagated through |s_T|
    tol = p.eta * 2 * float(np.max(ge)) * math.sqrt(2) * p.d * float(np.linalg.norm(s[p.T])) \
        + 16 * p.T * p.d * EPS * p.eta * float(np.linalg.norm(s1)) ** 3
    return herm, trans, gd, tol


@gdt.numeric(backends=("numpy", "cupy"))
def _(p):
    """Direct hermitian output equals -eta grad L(0) s_T (finite differences)."""
    herm, _, gd, tol = _gdt_values(p)
    r = float(namespace(gd).linalg.vector_norm(herm - gd))
    return Outcome(residual=r, tolerance=tol, message=f"|hermitian output + eta grad L(0) s_T| = {r:.2e}")


gdt.property(over=("d", "T", "eta", "seed"), max_examples=12)


@gdt.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed s_{t-1}^T form against -eta grad L(0) s_T: off for complex contexts."""
    _, trans, gd, tol = _gdt_values(p)
    r = float(namespace(gd).linalg.vector_norm(trans - gd))
    return Outcome(residual=r, tolerance=tol, message=f"|transpose form + eta grad L(0) s_T| = {r:.2e}")


# ===========================================================================
# Prop 6.5: global minimality by multi-start BFGS
def _multistart(d, Tmax, s0, starts, seed, Q=None):
    """Best of ``starts`` BFGS runs from uniform starts in [-1, 1]^6 on the exact loss, written as the quadratic form
    of incontext._aug_quadratic in z = a (x) b with its exact gradient (the same quadrature as _loss_aug; the
    quadratic form is compared with _loss_aug at the best point as a part).  CPU-only: BFGS is data-dependent
    control flow."""
    from scipy.optimize import minimize
    Q = _aug_quadratic(d, Tmax, s0) if Q is None else Q
    rng = np.random.default_rng(seed)
    best = None
    for _ in range(starts):
        th0 = rng.uniform(-1, 1, 6)
        r = minimize(_aug_loss_grad, th0, args=(Q,), jac=True, method="BFGS", options={"gtol": 1e-10})
        if best is None or r.fun < best.fun:
            best = r
    return best


def _undetermined_structure(d, Tmax, s0, Q, eta):
    """Structure parts that the loss does not determine at theta* = (0, 0, 1, 0, eta*, 0): the Hessian of the exact
    loss there (central differences of the exact gradient, h = 1e-5: error ~ h^2 |D^3 l| ~ 1e-10 relative) has null
    directions -- always the rescaling (a, b) -> (c a, b / c), for s0 = inverse also a_1 - a_4 -- and a structure
    quantity q whose gradient has a component along a null direction is constant to second order only if the
    minimiser set happens to be flat in q; the loss then does not single out q = 0 (several minimisers, q free).
    Null: eigenvalue <= 1e-7 max eigenvalue (the smallest non-null one on the declared range is ~1.6e-3 max).
    Returns the names of the undetermined parts and the Hessian spectrum."""
    th = np.array([0.0, 0.0, 1.0, 0.0, eta, 0.0])
    h = 1e-5
    H = np.column_stack([(_aug_loss_grad(th + h * e, Q)[1] - _aug_loss_grad(th - h * e, Q)[1]) / (2 * h)
                         for e in np.eye(6)])
    w, U = np.linalg.eigh(0.5 * (H + H.T))
    null = U[:, w <= 1e-7 * w.max()]
    grads = {"a1+a4": [1, 0, 0, 1, 0, 0], "a2*b1": [0, 1, 0, 0, 0, 0], "b2": [0, 0, 0, 0, 0, 1],
             "eta": [0, 0, eta, 0, 1, 0]}
    out = [k for k, gq in grads.items()
           if np.max(np.abs(np.asarray(gq, float) @ null), initial=0.0) > 1e-6 * np.linalg.norm(gq)]
    return out, w


ms = Claim(
    id="sander.incontext_global_minimum",
    title="Prop 6.5's optimum is global: multi-start BFGS over (a_1..b_2) finds loss* = d sum_T(eta*^2 K_T - 2 eta* T + 1)",
    label="Prop 6.5 / 6.14",
    section="6.4, 6.A.3",
    equation="",
    lines=(4192, 4200),
    statement=r"\min_\theta\ell(\theta)=\ell(\theta^*),\ a_1+a_4=a_2=b_2=0,\ "
              r"a_3b_1=\eta^*=\frac{\sum_{T=2}^{T_{\max}}T}{\sum_{T=2}^{T_{\max}}(T^2+(d-1)T)}",
    status="holds",
    params=[
        Param.int("d", 2, 1, 3, "dimension", search=(1, 3)),
        Param.int("Tmax", 3, 2, 5, "largest context length", search=(2, 4)),
        Param.int("starts", 4, 1, 24, "number of random starts in [-1, 1]^6"),
        Param.choice("s0", "inverse", ("inverse", "zero"), "convention for s_0 (A1): W^{-1}s_1 or 0"),
        Param.seed("seed of the starts", search=(0, 1000)),
    ],
    notes="The catalogue's BFGS check (ch6.py, 12 starts) on the exact expected loss (Laurent-monomial quadrature, "
          "sander.incontext's enumerator). Global minimality cannot be proved by sampling; this certifies that no "
          "start finds a lower value than the closed-form optimum and that the best point has the claimed "
          "structure (for d >= 2; d = 1 has a flat direction in a_1 + a_4, catalogue). For s0 = zero the closed form "
          "uses T-1 in place of T (E6.1). Falsifier: the thesis eta* compared with the s0 = 0 optimum. "
          "The BFGS objective is the exact loss written as a quadratic form in a (x) b with its exact gradient (same "
          "quadrature; compared with the direct evaluation at the best point): 24 starts at d = 3, T_max = 5 take "
          "~1 s instead of > 120 s. Gate: reading the structure off the best point needs a minimiser unique in the "
          "structure quantities; where the Hessian of the loss at theta* has a null direction along which one of them "
          "changes (found on the declared range only for s0 = zero, T_max = 2, d >= 2: minimisers with b_2 != 0 at "
          "the minimal loss), the check is inconclusive with that reason.",
    catalogue="sander_part23 §2.3 P6.5 (12-start BFGS table)",
    covers=("P6.5",),
)


def _ms_outcome(p, thesis_eta=False):
    Q = _aug_quadratic(p.d, p.Tmax, p.s0)
    best = _multistart(p.d, p.Tmax, p.s0, p.starts, p.seed, Q)
    eta = _eta_star(p.d, p.Tmax, "inverse" if thesis_eta else p.s0)
    es = _eta_star(p.d, p.Tmax, p.s0)
    L_star = _closed_loss(es, p.d, p.Tmax, p.s0)
    a1, a2, a3, a4, b1, b2 = best.x
    # error model: BFGS with the exact gradient stops at |grad| <= gtol = 1e-10: loss within |grad|^2/curvature,
    # parameters within |grad|/curvature; curvature >= ~1e-3 of the largest on these instances (null directions:
    # see _undetermined_structure)
    ltol = 1e-9 * (1 + L_star)
    ptol = 1e-4
    # the BFGS objective (quadratic form) against the direct quadrature _loss_aug at the best point: two roundings
    # of the same mean over N^d points, N = 3 T_max + 4
    direct = _loss_aug(best.x, p.d, p.Tmax, p.s0)
    qtol = 64 * (3 * p.Tmax + 4) ** p.d * EPS * (1 + abs(direct) + Q[2])
    parts = {"loss": (abs(best.fun - L_star), ltol), "objective_is_the_quadrature_loss": (abs(best.fun - direct), qtol),
             "eta": (abs(a3 * b1 - eta), ptol)}
    structure = {"a1+a4": (abs(a1 + a4), ptol), "a2*b1": (abs(a2 * b1), ptol), "b2": (abs(b2), ptol)}
    vals = {"best_loss": float(best.fun), "closed_form_loss": L_star, "theta": best.x.tolist(),
            "a3b1": float(a3 * b1), "eta_compared": eta}
    if p.d >= 2:
        parts.update(structure)
    else:
        vals["structure_parts"] = "left out: d = 1 has a flat direction in a_1 + a_4 (catalogue)"
    out = Outcome.from_parts(parts, f"best loss {best.fun:.10f} vs closed form {L_star:.10f}", vals)
    if p.d >= 2 and not thesis_eta:
        # hypothesis the structure readout needs: the minimiser is unique up to the rescaling symmetry in the
        # structure quantities (s0 = zero with T_max = 2 has minimisers with b_2 != 0 at the same loss)
        free, spec = _undetermined_structure(p.d, p.Tmax, p.s0, Q, es)
        if free:
            vals["hessian_spectrum_at_theta*"] = spec.tolist()
            vals["undetermined_structure"] = free
            rest = {k: v for k, v in parts.items() if k not in free}
            if Outcome.from_parts(rest, "").decide() != "certified":
                return Outcome.from_parts(rest, f"best loss {best.fun:.10f} vs closed form {L_star:.10f}", vals)
            return inconclusive(f"the minimiser is not unique at d={p.d}, T_max={p.Tmax}, s0={p.s0}: the loss is flat "
                                f"at theta* along a direction that changes {', '.join(free)}, so the structure of a "
                                f"minimiser is not determined (the minimal value {L_star:.10f} is reached: "
                                f"{best.fun:.10f})", **vals)
    return out


@ms.numeric
def _(p):
    """Best of the BFGS runs reaches the closed-form optimum, with a_1+a_4 = a_2 b_1 = b_2 = 0, a_3 b_1 = eta*."""
    return _ms_outcome(p)


@ms.falsifier("thesis_eta_with_zero_s0", fixed={"s0": "zero"})
def _(p):
    """With s_0 = 0 the optimal a_3 b_1 is the (T-1)-version, not the thesis eta* (E6.1)."""
    return _ms_outcome(p, thesis_eta=True)


@ms.reproduction(name="bfgs_table", slow=True)
def _(p):
    """Catalogue table (ch6.py): 12-start BFGS loss* for (d, T_max) = (1,4), (2,5), (3,4), both conventions, quoted
    to 10 decimals; compared at 1e-8 (BFGS stopping accuracy)."""
    quoted = {("inverse", 1, 4): 0.2068965517, ("zero", 1, 4): 0.4285714286, ("inverse", 2, 5): 2.2352941176,
              ("zero", 2, 5): 3.0, ("inverse", 3, 4): 3.8297872340, ("zero", 3, 4): 4.8461538462}
    ours = {}
    for (s0, d, Tm) in quoted:
        ours[f"{s0},{d},{Tm}"] = float(_multistart(d, Tm, s0, 12, 0).fun)
    res = max(abs(ours[f"{s0},{d},{Tm}"] - v) for (s0, d, Tm), v in quoted.items())
    return Outcome(residual=res, tolerance=1e-8, values={"ours": ours, "quoted": {f"{a},{b},{c}": v for (a, b, c), v
                                                                                     in quoted.items()}})


# ===========================================================================
# Prop 7.5 proof, l.5105: max should be min
mm = Claim(
    id="sander.topk_isotonic_min",
    title="Proof of Prop 7.5: f_{phi,R}(x, w) = MIN over v_1 >= ... >= v_n of R*(x_sigma - v) + <phi(v), w> (printed max)",
    label="Prop 7.5 (proof)",
    section="7.A.5",
    equation="",
    lines=(5103, 5105),
    statement=r"f_{\varphi,R}(\mathbf x,\mathbf w)=\max_{v_1\ge\dots\ge v_n}R^*(\mathbf x_\sigma-\mathbf v)+"
              r"\langle\varphi(\mathbf v),\mathbf w\rangle",
    status="erratum",
    corrected=r"f_{\varphi,R}(\mathbf x,\mathbf w)=\min_{\mathbf u}R^*(\mathbf x-\mathbf u)+f(\varphi(\mathbf u),\mathbf w)"
              r"=\min_{v_1\ge\dots\ge v_n}R^*(\mathbf x_\sigma-\mathbf v)+\langle\varphi(\mathbf v),\mathbf w\rangle",
    params=[
        Param.int("n", 4, 2, 6, "input size", search=(2, 6)),
        Param.int("k", 2, 1, 5, "w = 1_k", search=(1, 5)),
        Param.float("lam", 1.0, 0.05, 3.0, "lambda of R = (lam/2)|.|^2", search=(0.1, 3.0)),
        Param.seed("seed of x (uniform in [-5, 5])"),
    ],
    validate=lambda p: _check_k(p),
    notes="Catalogue minor erratum (l.5105). phi = id (the mask), p = 2. Corrected: min over u in R^n equals the "
          "minimum over the n! ordering cones, each an isotonic problem on x_sigma solved by PAV (solvers.topk); the "
          "global minimum is attained at the sorting permutation (Prop 7.5) and equals PAV on the sorted input. "
          "Printed: the objective on the monotone cone is unbounded above (it grows like |v|^2/(2 lam) along "
          "v = t 1), so the max is +inf; the falsifier evaluates it on v = t 1, |t| <= 1e3.",
    catalogue="sander_part23 §2.4 P7.5/P7.6; §4 minor (ch.7, max -> min at l.5105)",
    covers=("P7.5",),
)


def _check_k(p):
    if p.k >= p.n:
        raise ParamError(f"parameter k={p.k} must be < n={p.n}")


def _check_z(p):
    if abs(p.z) < 1e-3:
        raise ParamError(f"parameter z={p.z} must satisfy |z| >= 1e-3")


def _iso_obj(s, v, w, lam):
    return float(np.sum((s - v) ** 2) / (2 * lam) + v @ w)


def _mm_instance(p):
    x = np.random.default_rng(p.seed).uniform(-5, 5, p.n)
    w = (np.arange(p.n) < p.k).astype(float)
    xs = np.sort(x)[::-1]
    v, _ = tk.pav(xs, w, p.lam, 2.0, False)
    return x, w, xs, v


@mm.numeric
def _(p):
    """min over all ordering cones (PAV on each x_sigma) = PAV on sorted x = value at the sorting permutation."""
    x, w, xs, v = _mm_instance(p)
    f_sorted = _iso_obj(xs, v, w, p.lam)
    vals = []
    for sig in itertools.permutations(range(p.n)):
        s = x[list(sig)]
        vs, _ = tk.pav(s, w, p.lam, 2.0, False)
        vals.append(_iso_obj(s, vs, w, p.lam))
    gmin = min(vals)
    # rounding of the objective: n terms of size (|x| + lam k)^2 / lam; PAV pools to ~ n eps
    scale = (float(np.max(np.abs(x))) + p.lam * p.k + 1) ** 2 / p.lam
    tol = 64 * p.n * EPS * scale
    # local optimality on the cone: random feasible directions never decrease
    rng = np.random.default_rng(p.seed + 7)
    worst = 0.0
    for _ in range(100):
        u = np.sort(rng.standard_normal(p.n))[::-1] * 1e-3
        vv = np.sort(v + u)[::-1]
        worst = max(worst, f_sorted - _iso_obj(xs, vv, w, p.lam))
    return Outcome.from_parts({"global_min_at_sorted": (abs(gmin - f_sorted), tol), "local_min": (worst, tol)},
                              f"min over orderings {gmin:.12g}, sorted {f_sorted:.12g}",
                              {"f_sorted": f_sorted, "min_over_orderings": gmin, "max_over_orderings": max(vals)})


mm.property(over=("n", "k", "lam", "seed"), max_examples=12)


@mm.falsifier("stated")
def _(p):
    """The printed max: sup over the monotone cone (v = t 1, |t| <= 1e3) exceeds f by ~ 1e6 n/(2 lam)."""
    x, w, xs, v = _mm_instance(p)
    f_sorted = _iso_obj(xs, v, w, p.lam)
    ts = np.linspace(-1e3, 1e3, 2001)
    sup = max(_iso_obj(xs, t * np.ones(p.n), w, p.lam) for t in ts)
    scale = (float(np.max(np.abs(x))) + p.lam * p.k + 1) ** 2 / p.lam
    tol = 64 * p.n * EPS * scale
    return Outcome(residual=abs(sup - f_sorted), tolerance=tol, values={"sup_on_box": sup, "f": f_sorted},
                   message=f"max over the cone (|t| <= 1e3) = {sup:.3e} vs f = {f_sorted:.6g}")


# ===========================================================================
# Prop 7.8: "p > 0" should be p > 1
def _conj_sup(z, p, Y):
    """sup_{|y| <= Y} (y z - |y|^p / p): dense grid then golden refinement near the best grid point."""
    from scipy.optimize import minimize_scalar
    ys = np.concatenate([-np.geomspace(1e-12, Y, 4000)[::-1], [0.0], np.geomspace(1e-12, Y, 4000)])
    vals = ys * z - np.abs(ys) ** p / p
    i = int(np.argmax(vals))
    lo, hi = ys[max(i - 1, 0)], ys[min(i + 1, ys.size - 1)]
    if hi > lo:
        r = minimize_scalar(lambda y: -(y * z - abs(y) ** p / p), bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-14 * max(1.0, abs(hi))})
        return max(float(vals[i]), -float(r.fun))
    return float(vals[i])


pr = Claim(
    id="sander.topk_jacobian_p_range",
    title="Prop 7.8 needs p > 1 (printed p > 0): for p < 1 the conjugate of |y|^p/p is +inf, not |z|^q/q",
    label="Prop 7.8 (hypothesis)",
    section="7.4",
    equation="",
    lines=(4960, 4962),
    statement=r"R=\tfrac1p\|\cdot\|_p^p,\ p>0,\ \tfrac1p+\tfrac1q=1:\ R^*=\tfrac1q\|\cdot\|_q^q\ \text{and}\ "
              r"\partial\gamma^*_B/\partial s_i=\frac{|\gamma^*_B-s_i|^{q-2}}{\sum_B|\gamma^*_B-s_j|^{q-2}}",
    status="erratum",
    corrected=r"p>1:\ \sup_y\big(yz-\tfrac1p|y|^p\big)=\tfrac1q|z|^q\ \text{and Prop 7.8's formula holds}",
    params=[
        Param.float("p", 4 / 3, 0.1, 4.0, "exponent p of R", search=(1.05, 4.0)),
        Param.float("z", 0.7, -3.0, 3.0, "conjugate argument z (nonzero)", search=(-3.0, 3.0)),
        Param.seed("seed of the block values s (phi = id, one block)"),
    ],
    validate=lambda p: _check_z(p),
    notes="Catalogue minor erratum (Prop 7.8, 'p > 0' should read p > 1). The proof (7.A.7) differentiates the "
          "optimality condition sum_B sign(g - s_i)|g - s_i|^(q-1) + w_i = 0, which comes from R* = |.|^q/q, valid "
          "only for p > 1 (q > 1). Corrected check: (i) the Legendre identity by numerical maximisation (grid + "
          "bounded golden section), (ii) the Jacobian formula for phi = id on one block against central "
          "differences of the pooled root (bisection). Stated falsifier at p in (0,1): sup_{|y|<=Y}(yz - |y|^p/p) "
          "grows without bound with Y (Y = 1e8 here) while |z|^q/q is finite (negative, q < 0).",
    catalogue="sander_part23 §2.4 P7.8 caveats; §4 minor (ch.7)",
    covers=("P7.8",),
)


def _block_root(s, w, q):
    """gamma with sum_i sign(g - s_i)|g - s_i|^(q-1) + sum w = 0 (phi = id, lam = 1), by bisection."""
    W = float(np.sum(w))
    lo, hi = float(np.min(s)) - 1 - abs(W) ** (1 / (q - 1)) * 2, float(np.max(s)) + 1 + abs(W) ** (1 / (q - 1)) * 2
    F = lambda g: float(np.sum(np.sign(g - s) * np.abs(g - s) ** (q - 1))) + W
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        lo, hi = (mid, hi) if F(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


@pr.numeric
def _(p):
    """p > 1: sup_y (y z - |y|^p/p) = |z|^q/q, and Prop 7.8's block derivative matches finite differences."""
    if p.p <= 1.0:
        return inconclusive("the corrected statement needs p > 1", p=p.p)
    q = p.p / (p.p - 1)
    Y = 4 * abs(p.z) ** (1 / (p.p - 1)) + 1
    sup = _conj_sup(p.z, p.p, Y)
    ref = abs(p.z) ** q / q
    # golden section to xatol 1e-14 |y|: value error ~ eps |y z| (stationary point) plus grid rounding
    ctol = 64 * EPS * (1 + Y * abs(p.z) + Y ** p.p / p.p)
    rng = np.random.default_rng(p.seed)
    s = np.sort(rng.uniform(-2, 2, 4))[::-1]
    w = np.array([1.0, 1.0, 0.0, 0.0])
    g = _block_root(s, w, q)
    h = 1e-5
    num = np.abs(g - s) ** (q - 2)
    if not np.all(np.isfinite(num)):
        return inconclusive("gamma coincides with an s_i (0/0 case of the formula)")
    formula = num / num.sum()
    fd = np.array([(_block_root(s + h * e, w, q) - _block_root(s - h * e, w, q)) / (2 * h) for e in np.eye(4)])
    # central differences: truncation h^2 |g'''| (g''' bounded by ~ (q-1)(q-2)(q-3)/min|g - s|^3 here) plus
    # bisection resolution ~ eps |s| / h
    dmin = float(np.min(np.abs(g - s)))
    jtol = 10 * h ** 2 * (1 + abs((q - 2) * (q - 3))) / dmin ** 3 + 16 * EPS * (3 + float(np.max(np.abs(s)))) / h
    return Outcome.from_parts({"legendre": (abs(sup - ref), ctol), "jacobian": (float(np.max(np.abs(fd - formula))), jtol)},
                              f"sup = {sup:.15g} vs |z|^q/q = {ref:.15g}",
                              {"sup": sup, "formula": ref, "q": q, "dgamma_fd": fd.tolist(), "dgamma_formula": formula.tolist()})


pr.property(over=("p", "z", "seed"), max_examples=12)


@pr.falsifier("stated", fixed={"p": 0.5})
def _(p):
    """p = 1/2 (allowed by 'p > 0'): sup_{|y| <= 1e8} (y z - |y|^p/p) is huge, |z|^q/q = -1/|z| is not the conjugate."""
    q = p.p / (p.p - 1)
    sup = _conj_sup(p.z, p.p, 1e8)
    ref = abs(p.z) ** q / q
    return Outcome(residual=abs(sup - ref), tolerance=64 * EPS * (1 + abs(ref)),
                   values={"sup_|y|<=1e8": sup, "|z|^q/q": ref, "q": q},
                   message=f"sup over |y| <= 1e8 = {sup:.3e}, printed conjugate {ref:.4g}")


# ===========================================================================
# Prop 7.3: the w >= 0 hypothesis (n = 2, phi = x^2/2)
def _conj_n2(y, w):
    """f*(y, w) for f(x, w) = 1/2 (w_1 max x_i^2 + w_2 min x_i^2), w_1 >= w_2 > 0 (convex): the sup is attained at a
    stationary point of one of the two quadratic pieces (if inside its region) or on the boundary |x_1| = |x_2|."""
    y1, y2 = y
    w1, w2 = w
    cand = [(y1 + y2) ** 2 / (2 * (w1 + w2)), (y1 - y2) ** 2 / (2 * (w1 + w2))]
    if abs(y1 / w1) >= abs(y2 / w2):
        cand.append(y1 ** 2 / (2 * w1) + y2 ** 2 / (2 * w2))
    if abs(y2 / w1) >= abs(y1 / w2):
        cand.append(y1 ** 2 / (2 * w2) + y2 ** 2 / (2 * w1))
    return max(cand)


def _persp_min(y, w, literal=False):
    """min over z in P(w) = [w, w reversed] of sum y_i^2 / (2 z_i) (phi* = y^2/2); z_i <= 0 is +inf unless literal."""
    from scipy.optimize import minimize_scalar
    w1, w2 = w

    def F(th):
        z = np.array([th * w1 + (1 - th) * w2, (1 - th) * w1 + th * w2])
        if not literal and np.any(z <= 0):
            return math.inf
        return float(np.sum(np.asarray(y) ** 2 / (2 * z)))

    if literal:
        vals = [F(t) for t in np.linspace(0, 1, 20001)
                if min(abs(t * w1 + (1 - t) * w2), abs((1 - t) * w1 + t * w2)) > 0]
        return min(vals)
    r = minimize_scalar(F, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-13})
    return float(min(r.fun, F(0.0), F(1.0)))


wn = Claim(
    id="sander.topk_conjugate_weights",
    title="Prop 7.3 for general w >= 0 (n = 2, phi = x^2/2), and the role of w >= 0 (perspective with z_i < 0)",
    label="Prop 7.3",
    section="7.3",
    equation="",
    lines=(4833, 4840),
    statement=r"f_\varphi^*(\mathbf y,\mathbf w)=\min_{\mathbf z\in P(\mathbf w)}\sum_iz_i\varphi^*(y_i/z_i),\quad"
              r"\varphi\text{ convex},\ \mathbf w\ge0",
    status="holds",
    params=[
        Param.float("w2", 0.4, 0.05, 1.0, "w = (1, w2), w2 > 0", search=(0.05, 1.0)),
        Param.float("y1", 0.8, -3.0, 3.0, "y_1", search=(-3.0, 3.0)),
        Param.float("y2", -0.3, -3.0, 3.0, "y_2", search=(-3.0, 3.0)),
    ],
    notes="sander.topk_ksupport checks w = 1_k; here w = (1, w2) with 0 < w2 <= 1 (general non-negative weights), "
          "where f*(y, w) has an exact piecewise closed form (stationary points of the two quadratic pieces and the "
          "boundary |x_1| = |x_2|), against the convex 1-D minimisation over P(w) = [w, w reversed]. Falsifier "
          "(catalogue (d), 'not run'): w = (1, -1/2) with the perspective taken literally (z phi*(y/z) = y^2/(2z) "
          "also for z < 0): the right-hand side is -inf (z_i -> 0^-) while f* >= -f(0) = 0. Finding: with the "
          "closed-domain convention (z_i <= 0 gives +inf) this n = 2 example still satisfies the identity "
          "((|y_1|+|y_2|)^2 on both sides), so the hypothesis w >= 0 is used by the proof's minimax swap and the "
          "perspective, not shown necessary for every convention.",
    catalogue="sander_part23 §2.4 P7.3 (d)",
    covers=("P7.3",),
)


@wn.numeric
def _(p):
    """Exact f*(y, (1, w2)) equals min over the permutahedron of the perspective sum."""
    w = (1.0, p.w2)
    lhs = _conj_n2((p.y1, p.y2), w)
    rhs = _persp_min((p.y1, p.y2), w)
    # bounded golden section to xatol 1e-13 in theta: the value error is second order, ~ curvature * 1e-26,
    # plus rounding of the sums; curvature <= |y|^2 (1 - w2)^2 / z_min^3
    tol = 1e-12 * (1 + (p.y1 ** 2 + p.y2 ** 2) / p.w2 ** 3) + 64 * EPS * (1 + lhs)
    return Outcome(residual=abs(lhs - rhs), tolerance=tol, values={"f_star": lhs, "perspective_min": rhs},
                   message=f"f* = {lhs:.14g}, min over P(w) = {rhs:.14g}")


wn.property(over=("w2", "y1", "y2"), max_examples=20)


@wn.falsifier("negative_weight_literal_perspective")
def _(p):
    """w = (1, -1/2), literal perspective: min over P(w) is -inf-like (grid of theta), f* >= 0."""
    w = (1.0, -0.5)
    y = (p.y1, p.y2) if abs(p.y1) > 1e-3 and abs(p.y2) > 1e-3 else (0.8, -0.3)
    rhs = _persp_min(y, w, literal=True)
    lhs_lower = 0.0          # f*(y) >= <0, y> - f(0) = 0
    return Outcome(residual=max(0.0, lhs_lower - rhs), tolerance=64 * EPS,
                   values={"literal_rhs_on_grid": rhs, "f_star_lower_bound": lhs_lower},
                   message=f"literal perspective min on a theta grid = {rhs:.3e} < 0 <= f*")


# ===========================================================================
# Fig 7.3: exact-zero areas
def _fig73_fracs(m, lam=0.3):
    g = np.linspace(-2, 2, m)
    out = {}
    for name, p in (("hard", None), ("p=2", 2.0), ("p=4/3", 4 / 3)):
        cnt_sum = cnt_both = 0
        for a in g:
            for b in g:
                x = np.array([a, b, 0.5, 1.0])
                y = tk.hard_topkmag(x, 2) if p is None else tk.topk_mag(x, 2, lam, p)
                cnt_sum += y[0] + y[1] == 0.0
                cnt_both += (y[0] == 0.0) and (y[1] == 0.0)
        out[name] = (cnt_sum / m ** 2, cnt_both / m ** 2)
    return out


fig73 = Claim(
    id="sander.topk_fig73_zero_area",
    title="Fig 7.3: the relaxed top-2 magnitude operators are exactly 0 near the origin (zero-area fractions)",
    label="Fig 7.3",
    section="7.3",
    equation="",
    lines=(4876, 4876),
    statement=r"y_{\varphi,R}(\mathbf x,\mathbf 1_2)_1+y_{\varphi,R}(\mathbf x,\mathbf 1_2)_2=0\ \text{in the center},"
              r"\ \mathbf x=(x_1,x_2,\tfrac12,1),\ \lambda=0.3",
    status="empirical",
    params=[],
    notes="Catalogue §2.4 C7.2: zero fractions of y_1 + y_2 on a 161^2 grid of [-2, 2]^2: 0.039 (p = 2), 0.023 "
          "(p = 4/3), 0.060 (hard; exact region |x_1|, |x_2| < 1/2 has area fraction 1/16, signed cancellations "
          "x_1 = -x_2 inflate the sum counts). The reproduction recomputes them with the PAV of solvers.topk and "
          "compares at 5e-4 (half a unit of the quoted digit; measured 0.0392 / 0.0230 / 0.0600, and 0.0371 / 0.0204 / "
          "0.0587 counting only y_1 = y_2 = 0), and asserts "
          "the ordering p=4/3 < p=2 < hard and that the origin is in every zero region. Default run: a 41^2 grid "
          "(ordering and origin only); the 161^2 table is slow.",
    catalogue="sander_part23 §2.4 C7.2 (Fig 7.3)",
    covers=("C7.2",),
)


@fig73.reproduction(name="ordering_41")
def _(p):
    """41^2 grid: zero fractions (y_1 = y_2 = 0) ordered p=4/3 < p=2 < hard, origin exactly zero for all."""
    fr = _fig73_fracs(41)
    both = {k: v[1] for k, v in fr.items()}
    origin = [float(np.sum(np.abs((tk.topk_mag(np.array([0, 0, .5, 1.]), 2, 0.3, p))[:2]))) for p in (2.0, 4 / 3)]
    ordered = both["p=4/3"] < both["p=2"] < both["hard"]
    return Outcome.from_parts({"ordering": (0 if ordered else 1, 0), "origin_zero": (max(origin), 0)},
                              "zero-area ordering", {"fractions": fr})


@fig73.reproduction(name="fractions_161", slow=True)
def _(p):
    """161^2 grid: fractions of y_1 + y_2 == 0 vs the catalogue's 0.039 / 0.023 / 0.060, at half a unit of the
    quoted third decimal (5e-4)."""
    fr = _fig73_fracs(161)
    quoted = {"p=2": 0.039, "p=4/3": 0.023, "hard": 0.060}
    res = max(abs(fr[k][0] - v) for k, v in quoted.items())
    return Outcome(residual=res, tolerance=5e-4, values={"fractions(sum, both)": fr, "quoted": quoted})


# ===========================================================================
# Registered, not reproduced
colsum = Claim(
    id="sander.sinkformer_column_sums_training",
    title="Fig 5.2: column sums of SoftMax attention approach 1 during Transformer training",
    label="Fig 5.2",
    section="5.2",
    equation="",
    lines=(3653, 3658),
    statement=r"\text{the majority of columns of }\mathrm{SoftMax}(C)\text{ naturally sum closely to 1 after training}",
    status="empirical",
    params=[],
    notes="Not reproduced: the figure trains a ViT on MNIST, a fairseq Transformer on IWSLT'14 and a Point Cloud "
          "Transformer on ModelNet 40 (GPU, data not offline). A toy CPU analogue (one attention layer on "
          "synthetic sets) would not test the quoted observation, which concerns those trained models; no number "
          "is quoted to compare against. Recorded so the catalogue entry is registered (EMP5 bullet 'Fig 5.2').",
    catalogue="sander_part23 §2.2 EMP5 (Fig 5.2)",
    covers=("EMP5",),
)

prune = Claim(
    id="sander.topk_pruning_toy",
    title="Fig 7.5 at toy scale (R7.a): magnitude pruning to 10% density with relaxed top-k",
    label="Fig 7.5",
    section="7.5.1",
    equation="",
    lines=(4984, 4997),
    statement=r"\text{90\% sparsity kept at every step; relaxed top-}k\text{ (}p=2,\tfrac43\text{) comparable to hard top-}k",
    status="empirical",
    params=[],
    notes="Catalogue §3.3 R7.a plan (MLP 784-32-32-10 on sklearn digits, topkmag at 10% density) is not run: the "
          "PAV of solvers.topk is pure Python (a 1000+-weight layer per step, thousands of steps: minutes to hours "
          "on this 2-core machine) and the plan's assertion (relaxed final loss <= hard) is a trend with no "
          "thesis number to compare (the thesis quotes MNIST 5.9% for the entropic straight-through baseline "
          "only). The density invariant itself (exactly k non-zeros) is a property of the operator, checked by "
          "sander.topk_relaxed / sander.topk_fig73_zero_area.",
    catalogue="sander_part23 §3.3 R7.a; §2.4 EMP7",
    covers=("EMP7",),
)


# ===========================================================================
# Table 5.1 (E5.5), both ways
def _halfwidth_best_free(med, mean, worst):
    """Smallest rounding half-width t making (median, mean, worst) of 4 sorted runs feasible, best unconstrained."""
    from scipy.optimize import linprog
    A, ub = [], []

    def absle(coef, val):
        A.append(list(coef) + [-1.0]); ub.append(val)
        A.append([-x for x in coef] + [-1.0]); ub.append(-val)
    absle((1, 0, 0, 0), worst)
    absle((0, .5, .5, 0), med)
    absle((.25, .25, .25, .25), mean)
    for i in range(3):
        row = [0.0] * 5
        row[i], row[i + 1] = 1.0, -1.0
        A.append(row); ub.append(0.0)
    r = linprog([0, 0, 0, 0, 1], A_ub=A, b_ub=ub, bounds=[(None, None)] * 5, method="highs")
    return float(r.x[4])


_T51 = {"Set Transformer": (87.8, 86.3, 85.8, 84.7), "Set Sinkformer": (89.1, 88.4, 88.3, 88.1),
        "PC Transformer": (93.2, 92.5, 92.5, 92.3), "PC Sinkformer": (93.1, 92.8, 92.7, 92.5)}

t51 = Claim(
    id="sander.sinkformer_table51_consistency",
    title="Table 5.1's best/median/mean/worst of 4 runs are mutually consistent only for some rows",
    label="Table 5.1",
    section="5.6.1",
    equation="",
    lines=(3782, 3789),
    statement=r"\text{each row lists best, median, mean, worst of 4 runs, rounded to 0.1}",
    status="erratum",
    corrected=r"\text{consistent at rounding }\pm0.05\text{ only for Point Cloud Sinkformer, and for Set Transformer "
              r"if its 'best' is the original paper's number; Set Sinkformer and PC Transformer need }\pm0.10,\ \pm0.0625",
    params=[],
    notes="E5.5 encoded both ways (sander.sinkformer_table51 reproduces the catalogue's half-widths). Four runs "
          "a<=b<=c<=d: best d, worst a, median (b+c)/2, mean (a+b+c+d)/4; LP (HiGHS) for the smallest half-width t "
          "making a row feasible. Stated falsifier: all four rows feasible at t = 0.05 (refuted: 0.2375 for Set "
          "Transformer). Corrected check: PC Sinkformer feasible at 0.05; Set Transformer with 'best' left free "
          "(catalogue's likely cause, l.3768) needs exactly t = 0.05 (8t >= 0.4 from d >= c >= median), i.e. it is "
          "consistent, at the boundary; the other two rows need 0.10 and 0.0625. Tolerance 1e-7 on t: HiGHS's "
          "primal/dual feasibility tolerance on data of size 1e2.",
    catalogue="sander_part23 §2.2 EMP5; §4 E5.5",
    covers=("E5.5",),
)


@t51.numeric
def _(p):
    """PC Sinkformer and (best free) Set Transformer feasible at 0.05; the others need 0.10 and 0.0625."""
    from theorems.sander.sinkformer import _min_halfwidth
    tol = 1e-7            # HiGHS feasibility tolerance on data of size ~1e2
    t = {k: _min_halfwidth(*v) for k, v in _T51.items()}
    t_free = _halfwidth_best_free(*_T51["Set Transformer"][1:])
    parts = {"PC Sinkformer <= 0.05": (max(0.0, t["PC Sinkformer"] - 0.05), tol),
             "Set Transformer (best free) = 0.05": (abs(t_free - 0.05), tol),
             "Set Sinkformer = 0.10": (abs(t["Set Sinkformer"] - 0.10), tol),
             "PC Transformer = 0.0625": (abs(t["PC Transformer"] - 0.0625), tol)}
    return Outcome.from_parts(parts, "Table 5.1 rounding half-widths", {"t_min": t, "t_min_set_transformer_best_free": t_free})


@t51.falsifier("stated")
def _(p):
    """All four rows consistent with 1-decimal rounding (t <= 0.05): refuted."""
    from theorems.sander.sinkformer import _min_halfwidth
    t = {k: _min_halfwidth(*v) for k, v in _T51.items()}
    worst = max(t, key=t.get)
    return Outcome(residual=max(0.0, t[worst] - 0.05), tolerance=1e-7, values={"t_min": t},
                   message=f"{worst} needs half-width {t[worst]:.4g} > 0.05")


# ===========================================================================
# Fig 6.3 at CPU scale (R6.a)
def _fig63_train(kind, d, H, Tmax, seed, maxiter):
    from scipy.optimize import minimize
    from theorems.sander.incontext import _corrected_68
    rng = np.random.default_rng(seed)
    nP = sum(range(2, Tmax + 1))
    lams = {T: _torus_orth(d // 2, 4 * T + 2) for T in range(2, Tmax + 1)} if kind == "orthogonal" else None

    def unpack(th):
        A = th[:H * d].reshape(H, d)
        B = th[H * d:2 * H * d].reshape(H, d)
        rows, i = {}, 2 * H * d
        for T in range(2, Tmax + 1):
            rows[T] = th[i:i + T]; i += T
        return A, B, rows

    def loss(th):
        A, B, rows = unpack(th)
        C = B.T @ A
        if kind == "unitary":
            return sum(_corrected_68(C, rows[T], T) for T in rows)
        return sum(_loss_plain(C, rows[T], T, lams[T]) for T in rows)

    th0 = rng.standard_normal(2 * H * d + nP) * 0.5
    r = minimize(loss, th0, method="L-BFGS-B", options={"maxiter": maxiter, "maxfun": 50 * maxiter, "ftol": 1e-16,
                                                         "gtol": 1e-12})
    A, B, rows = unpack(r.x)
    return float(r.fun), B.T @ A, rows


fig63 = Claim(
    id="sander.incontext_fig63_cpu",
    title="Fig 6.3 at CPU scale: training (6.6) reaches the zero-loss sets of Props 6.7 (unitary, H = d) and 6.11 "
          "(orthogonal, delta < H < d: rank-delta B^T A with P_{T-1,T-1}/P_{T-1,T} = -1/2)",
    label="Fig 6.3",
    section="6.6",
    equation="",
    lines=(4272, 4272),
    statement=r"\text{unitary, }H=d:\ \mathbf B^\top\mathbf A\text{ diagonal},\ P_{T-1}\propto e_T;\ "
              r"\text{orthogonal, }\delta<H<d:\ \operatorname{rank}\mathbf B^\top\mathbf A=\delta,\ \ell\to0",
    status="empirical",
    params=[],
    notes="Catalogue §3.3 R6.a plan at reduced size (d = 4, T_max = 5 instead of d = 10, T = 15, L-BFGS instead of "
          "Adam): exact population loss, unitary by the corrected Prop 6.8 form (E6.2), orthogonal by torus "
          "quadrature. Random N(0, 1/4) initialisation, seed 0. Trend assertions with loose tolerances: final loss "
          "<= 1e-6; unitary: |offdiag(B^T A)| / |diag| <= 1e-2 and sum_{t<T}|P_{T-1,t}| / |P_{T-1,T}| <= 1e-2; "
          "orthogonal with H = 3 (delta = 2 < H < d = 4, as the thesis's H = 8 between delta = 5 and d = 10): "
          "sigma_3(B^T A)/sigma_1 <= 1e-2 (rank delta although H = 3 allows 3) and P_{T-1,T-1}/P_{T-1,T} = -1/2 "
          "(Prop 6.11's rank-delta member) to 1e-2. Whether L-BFGS reaches zero loss from a random start is the "
          "empirical content (Fig 6.3: 'arbitrarily small final loss'). Measured over seeds 0-5 (not asserted): "
          "H = 3 reaches zero loss for 4/6 seeds (seeds 3, 4 drift to P_{T-1,T-1}/P_{T-1,T} -> -1, the impossible "
          "b = -1 family, loss ~2, parameters growing, ~190 s each); H = delta = 2 only for 1/6 (local minima at "
          "loss 5.13 and 2.87). Seed 0 is used (about 11 s for both runs).",
    catalogue="sander_part23 §3.3 R6.a; §2.3 EMP6 (Fig 6.3)",
    covers=("EMP6",),
)


@fig63.reproduction(name="cpu_fig63", slow=True)
def _(p):
    """Both training runs reach the predicted zero-loss structures."""
    Lu, Cu, Pu = _fig63_train("unitary", 4, 4, 5, 0, 3000)
    Lo, Co, Po = _fig63_train("orthogonal", 4, 3, 5, 0, 1500)
    off = np.abs(Cu - np.diag(np.diag(Cu)))
    sv = np.linalg.svd(Co, compute_uv=False)
    p_ratio_u = max(float(np.sum(np.abs(r[:-1])) / abs(r[-1])) for r in Pu.values())
    p_ratio_o = max(abs(float(r[-2] / r[-1]) + 0.5) for T, r in Po.items() if T >= 3)
    parts = {"unitary loss": (Lu, 1e-6), "orthogonal loss": (Lo, 1e-6),
             "unitary offdiag": (float(np.max(off) / np.min(np.abs(np.diag(Cu)))), 1e-2),
             "unitary P -> e_T": (p_ratio_u, 1e-2),
             "orthogonal rank": (float(sv[2] / sv[0]), 1e-2),
             "orthogonal P ratio -1/2": (p_ratio_o, 1e-2)}
    return Outcome.from_parts(parts, "Fig 6.3 structures", {"singular_values_orthogonal": sv.tolist(),
                                                            "BtA_unitary": Cu.tolist()})
