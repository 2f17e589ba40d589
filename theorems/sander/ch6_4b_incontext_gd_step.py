"""§6.4 In-context mapping with gradient descent, Props 6.4 and 6.5 (seed l.4174-4200; proofs §6.A.2-6.A.3,
l.4363-4490): one step of gradient descent in context and the optimal step size eta* of the augmented linear
Transformer with the s_0 cases (erratum E6.1, Lemma 6.13), the s_{t-1}^T / s_{t-1}^* slip in the proof of
Prop 6.4 (l.4363-4375), and Prop 6.5's global minimality by multi-start BFGS (the catalogue's 12-start table).
Claims: ``sander.incontext_gd_step``, ``sander.incontext_gd_step_hermitian``, ``sander.incontext_global_minimum``.

Conventions and the exact-expectation error model (chapter 6): ``theorems.sander._attention``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import xp_sander2 as X
from solvers.fd import gradient_with_error
from solvers.xp import asnumpy, namespace, on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.sander._attention import _torus

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Props 6.4 / 6.5, E6.1
def _s_seq(lam, Tm, s0):
    """s_0..s_Tm (list of arrays over the quadrature points): s_t = lambda^(t-1)."""
    if s0 == "inverse":
        first = lam ** -1
    elif s0 == "zero":
        first = np.zeros_like(lam)
    elif s0 == "s1":
        first = np.ones_like(lam)
    else:
        raise ParamError(f"s0={s0!r} must be inverse, zero or s1")
    return [first] + [lam ** (t - 1) for t in range(1, Tm + 2)]


def _loss_aug(theta, d, Tmax, s0, lam=None):
    """Loss (6.3) of the augmented model (6.4) under Assumption 1, theta = (a1, a2, a3, a4, b1, b2)."""
    a1, a2, a3, a4, b1, b2 = theta
    if lam is None:
        lam = _torus(d, 3 * Tmax + 4)
    s = _s_seq(lam, Tmax, s0)
    tot = 0.0
    for T in range(2, Tmax + 1):
        out = np.zeros_like(lam)
        for t in range(1, T + 1):
            coef = (np.sum(np.conj(s[t]) * (a1 * s[T] + a2 * s[T - 1]), axis=1)
                    + np.sum(np.conj(s[t - 1]) * (a3 * s[T] + a4 * s[T - 1]), axis=1))
            out += coef[:, None] * (b1 * s[t] + b2 * s[t - 1])
        tot += float(np.mean(np.sum(np.abs(out - s[T + 1]) ** 2, axis=1)))
    return tot


def _aug_quadratic(d, Tmax, s0, lam=None):
    """The loss (6.3) of (6.4) under Assumption 1 as a quadratic form in z = a (x) b, a = (a1..a4), b = (b1, b2)
    (z_{2i+j} = a_i b_j): out_T = sum_{ij} a_i b_j V^T_ij with V^T_{i1} = sum_t c^T_{i,t} s_t, V^T_{i2} = sum_t c^T_{i,t}
    s_{t-1}, c^T_{.,t} = (<s_T|s_t>, <s_{T-1}|s_t>, <s_T|s_{t-1}>, <s_{T-1}|s_{t-1}>) (the hermitian products of
    _loss_aug), so l = z^T G z - 2 g^T z + c0 with G = Re E sum_T <V_ij, V_kl>, g = Re E sum_T <V_ij, s_{T+1}>,
    c0 = sum_T E|s_{T+1}|^2: the same quadrature, hence the same exact expectation as _loss_aug.  Returns (G, g, c0)."""
    if lam is None:
        lam = _torus(d, 3 * Tmax + 4)
    s = _s_seq(lam, Tmax, s0)
    G, g, c0 = np.zeros((8, 8)), np.zeros(8), 0.0
    ip = lambda u, v: np.sum(np.conj(u) * v, axis=1)[:, None]  # noqa: E731   <v|u> = sum conj(u) v, per point
    for T in range(2, Tmax + 1):
        V = np.zeros((8,) + lam.shape, dtype=complex)
        for t in range(1, T + 1):
            c = (ip(s[t], s[T]), ip(s[t], s[T - 1]), ip(s[t - 1], s[T]), ip(s[t - 1], s[T - 1]))
            for i in range(4):
                V[2 * i] += c[i] * s[t]
                V[2 * i + 1] += c[i] * s[t - 1]
        Vf = V.reshape(8, -1)
        n = lam.shape[0]
        G += np.real(np.conj(Vf) @ Vf.T) / n
        g += np.real(np.conj(Vf) @ s[T + 1].ravel()) / n
        c0 += float(np.mean(np.sum(np.abs(s[T + 1]) ** 2, axis=1)))
    return G, g, c0


def _aug_loss_grad(theta, Q):
    """Loss and exact gradient of the quadratic form of _aug_quadratic at theta = (a1..a4, b1, b2)."""
    G, g, c0 = Q
    a, b = np.asarray(theta[:4], float), np.asarray(theta[4:], float)
    z = np.outer(a, b).ravel()
    Gz = G @ z
    R = (2 * Gz - 2 * g).reshape(4, 2)
    return float(z @ Gz - 2 * g @ z + c0), np.concatenate([R @ b, R.T @ a])


def _eta_star(d, Tmax, s0):
    Ts = np.arange(2, Tmax + 1)
    m = Ts if s0 == "inverse" else Ts - 1
    return float(np.sum(m) / np.sum(m ** 2 + (d - 1) * m))


def _closed_loss(eta, d, Tmax, s0):
    Ts = np.arange(2, Tmax + 1)
    m = Ts if s0 == "inverse" else Ts - 1
    return float(d * np.sum(eta ** 2 * (m ** 2 + (d - 1) * m) - 2 * eta * m + 1))


def _stationarity(theta, d, Tmax, s0):
    lam = _torus(d, 3 * Tmax + 4)
    (g,), (e,) = gradient_with_error(lambda th: _loss_aug(th, d, Tmax, s0, lam), [np.array(theta, dtype=float)], 1e-4)
    return g, 2 * e


def _gd_mismatch(d, T, s0, seed, eta=0.3):
    """|eta sum_{t=1}^T s_t s_{t-1}^* s_T - (-eta grad L(0) s_T)|, L of (6.5) summing t = 1..T-1, random phases."""
    rng = np.random.default_rng(seed)
    lam = np.exp(2j * np.pi * rng.random((1, d)))
    s = _s_seq(lam, T, s0)
    model = sum(s[t][0] * np.vdot(s[t - 1][0], s[T][0]) for t in range(1, T + 1)) * eta
    gd = eta * sum(s[t + 1][0] * np.vdot(s[t][0], s[T][0]) for t in range(1, T))
    return float(np.linalg.norm(model - gd))


gd = Claim(
    id="sander.incontext_gd_step",
    title="Augmented linear Transformer: the optimum is one GD step with eta* = sum T / sum (T^2 + (d-1)T) -- only "
          "for s_0 = W^-1 s_1, and then the step is on a loss that includes t = 0",
    label="Props 6.4, 6.5 (6.14), Lemma 6.13",
    section="6.4, 6.A.3",
    equation="(6.4)-(6.5), (6.9)",
    lines=(4174, 4200),
    statement=r"a_1^*+a_4^*=a_2^*=b_2^*=0,\ a_3^*b_1^*=\eta^*=\frac{\sum_{T=2}^{T_{\max}}T}{\sum_{T=2}^{T_{\max}}"
              r"(T^2+(d-1)T)}\sim\frac3{2T_{\max}},\ \Gamma_{\theta^*}=0-\eta^*\nabla L(0,e_{1:T}),\ "
              r"L=\tfrac12\textstyle\sum_{t=1}^{T-1}\|s_{t+1}-Ws_t\|^2",
    status="erratum",
    corrected=r"s_0:=W^{-1}s_1:\ \text{structure and }\eta^*\text{ as stated, map }\eta^*\big(\textstyle\sum_{t=1}^{T}"
              r"s_ts_{t-1}^*\big)s_T\ (\text{GD on }L\text{ with the }t=0\text{ term});\ s_0:=0:\ \text{one GD step on (6.5) with }"
              r"\eta^*=\frac{\sum(T-1)}{\sum((T-1)^2+(d-1)(T-1))}",
    params=[
        Param.int("d", 2, 1, 3, "dimension", search=(1, 3)),
        Param.int("Tmax", 5, 2, 6, "T_max", search=(2, 6)),
        Param.choice("s0", "inverse", ["inverse", "zero"], "convention for s_0 (E6.1): W^-1 s_1 or 0"),
        Param.seed("seed of the phases of the GD-identity check and of eta"),
    ],
    notes="E6.1 / ambiguity A1. Exact loss of (6.4) by roots-of-unity quadrature (N = 3 T_max + 4). Checked for the "
          "chosen s_0: the closed-form loss d sum_T (eta^2 K_T - 2 eta m_T + 1) along the structured line, the gradient "
          "of the exact loss in all six parameters vanishing at theta* = (0, 0, 1, 0, eta*, 0) (central differences, "
          "Richardson x2), and the GD identity for the matching inner loss. Global minimality (the catalogue's 12-start "
          "BFGS table) is not re-run. Typo: s_{t-1}^T for s_{t-1}^* (l.4369).  READ (rsan8b): the closed-form-loss "
          "tolerance 64 N^d u (1 + eta T_max^2)^2 d T_max is the worst-case naive-summation bound of a mean over N^d "
          "quadrature points of terms at most that size; ~4e6 x the residual at the defaults (3.6e-15 vs 1.5e-8), kept "
          "because it is rigorous whatever summation order the array backend uses; a wrong eta* or convention moves "
          "the loss by O(1).",
    catalogue="sander_part23 §2.3 P6.4, P6.5, L6.13; §4 E6.1; §6 A1",
    covers=("P6.4", "P6.5", "E6.1"),
)


def _s_seq_xp(xp, d, Tmax, s0):
    """_s_seq on the quadrature torus, moved to xp."""
    return [on(xp, a) for a in _s_seq(_torus(d, 3 * Tmax + 4), Tmax, s0)]


@gd.numeric(backends=("numpy", "cupy"))
def _(p):
    """Closed-form loss, stationarity of the exact loss at the convention's eta*, and the GD identity."""
    xp = xp_of(p)
    es = _eta_star(p.d, p.Tmax, p.s0)
    theta = [0.0, 0.0, 1.0, 0.0, es, 0.0]
    sx = _s_seq_xp(xp, p.d, p.Tmax, p.s0)
    # stationarity: central differences of the exact loss, all 4 x 6 + 1 evaluations as one stack (array path)
    gx, ex = X.gradient_with_error_batched(lambda Th: X.loss_aug(Th, sx, p.Tmax), on(xp, np.array(theta)), 1e-4)
    g, e = asnumpy(gx), 2 * asnumpy(ex)
    eta = float(np.random.default_rng(p.seed).uniform(0, 1))
    L = float(X.loss_aug(on(xp, np.array([[0, 0, 1, 0, eta, 0]], dtype=float)), sx, p.Tmax)[0])
    tolq = 64 * (3 * p.Tmax + 4) ** p.d * EPS * (1 + eta * p.Tmax ** 2) ** 2 * p.d * p.Tmax
    # GD identity, inner loss matching the convention: for 'inverse' the t = 0 term s_1 - W s_0 = 0 is added to (6.5)
    rng = np.random.default_rng(p.seed)
    lam = np.exp(2j * np.pi * rng.random((1, p.d)))
    s = [on(xp, a[0]) for a in _s_seq(lam, p.Tmax, p.s0)]
    T = p.Tmax
    vdot = lambda a, b: xp.sum(xp.conj(a) * b)  # noqa: E731
    model = es * sum(s[t] * vdot(s[t - 1], s[T]) for t in range(1, T + 1))
    t0 = 0 if p.s0 == "inverse" else 1
    gdv = es * sum(s[t + 1] * vdot(s[t], s[T]) for t in range(t0, T))
    return Outcome.from_parts({
        "closed_form_loss": (abs(L - _closed_loss(eta, p.d, p.Tmax, p.s0)), tolq),
        "stationary_at_eta*": (float(np.max(np.abs(g) - e)) + float(np.max(e)), 2 * float(np.max(e))),
        "gd_identity": (float(xp.linalg.vector_norm(model - gdv)), 16 * T * p.d * EPS * (1 + es * T)),
    }, f"s0 = {p.s0} ({p.backend})", values={"eta_star": es, "thesis_eta_star": _eta_star(p.d, p.Tmax, "inverse"),
                               "gradient": g.tolist(), "loss_at_eta_star": _closed_loss(es, p.d, p.Tmax, p.s0)})


gd.property(over=("d", "Tmax", "s0", "seed"), max_examples=8)


@gd.falsifier("stated")
def _(p):
    """As printed, with s_0 = 0 (the convention under which the map is one GD step on (6.5), l.4375): the thesis eta*
    is not stationary -- d loss/d b_1 != 0."""
    es = _eta_star(p.d, p.Tmax, "inverse")
    g, e = _stationarity([0.0, 0.0, 1.0, 0.0, es, 0.0], p.d, p.Tmax, "zero")
    return Outcome(residual=float(np.max(np.abs(g) - e)) + float(np.max(e)), tolerance=2 * float(np.max(e)),
                   values={"gradient": g.tolist(), "thesis_eta": es, "zero_convention_eta": _eta_star(p.d, p.Tmax, "zero")})


@gd.falsifier("gd_on_6_5_with_inverse_s0", search=("seed",))
def _(p):
    """With s_0 = W^-1 s_1 (where eta* is right) the optimal map is NOT one GD step on (6.5): extra s_1 s_0^* s_T."""
    mism = _gd_mismatch(p.d, p.Tmax, "inverse", p.seed, eta=_eta_star(p.d, p.Tmax, "inverse"))
    return Outcome(residual=mism, tolerance=16 * p.Tmax * p.d * EPS * 2, values={"mismatch": mism})


@gd.falsifier("lemma63_s0_equals_s1")
def _(p):
    """s_0 = s_1 (what the heads of Lemma 6.3 produce at t = 1): the best point on the structured line
    (a_3 = 1, b_1 = eta) is not stationary in the other directions, so the claimed structure fails."""
    lam = _torus(p.d, 3 * p.Tmax + 4)
    # the loss is quadratic in eta on the line: fit it exactly from three values
    vals = [_loss_aug([0, 0, 1, 0, e, 0], p.d, p.Tmax, "s1", lam) for e in (0.0, 0.5, 1.0)]
    A = 2 * (vals[2] - 2 * vals[1] + vals[0])
    B = vals[2] - vals[0] - A
    eta = -B / (2 * A) if A != 0 else 0.0
    g, e = _stationarity([0.0, 0.0, 1.0, 0.0, eta, 0.0], p.d, p.Tmax, "s1")
    return Outcome(residual=float(np.max(np.abs(g) - e)) + float(np.max(e)), tolerance=2 * float(np.max(e)),
                   values={"gradient": g.tolist(), "eta_on_line": eta})


#: the asymptotic constant c in eta* ~ c / T_max as printed (3/2), and misprints (mutants)
ETA_ASYMPTOTICS = {"stated": sp.Rational(3, 2), "asymptotic_3_over_Tmax": sp.Integer(3),
                   "asymptotic_2_over_3Tmax": sp.Rational(2, 3)}


def _eta_asymptotic_failures(form):
    """T_max eta*(T_max) -> c for both conventions (sympy summation and limit).  Returns (failures, limits)."""
    T, M, d = sp.symbols("T M d", positive=True, integer=True)
    r = 0
    lims = {}
    for name, m in (("inverse", T), ("zero", T - 1)):
        num = sp.summation(m, (T, 2, M))
        den = sp.summation(m ** 2 + (d - 1) * m, (T, 2, M))
        lim = sp.limit(sp.simplify(num / den) * M, M, sp.oo)
        lims[name] = str(lim)
        r += int(sp.simplify(lim - ETA_ASYMPTOTICS[form]) != 0)
    return r, lims


@gd.symbolic(timeout=60)
def _(p):
    """eta*(T_max) ~ 3/(2 T_max) for both conventions (sympy summation and limit)."""
    r, lims = _eta_asymptotic_failures("stated")
    return Outcome(residual=r, tolerance=0, values={"method": "sympy.summation + limit", "limits": lims})


@gd.mutant({"asymptotic_3_over_Tmax": "eta* ~ 3/T_max (the 2 dropped)",
            "asymptotic_2_over_3Tmax": "eta* ~ 2/(3 T_max) (fraction inverted)"}, timeout=60)
def _(p, variant):
    """The asymptotic constant perturbed, through the same summation and limit: it must differ."""
    r, lims = _eta_asymptotic_failures(variant)
    return Outcome(residual=r, tolerance=0, values={"limits": lims},
                   message=f"T_max eta* -> {lims}, not {ETA_ASYMPTOTICS[variant]} ({variant})")


@gd.reproduction(name="eta_table")
def _(p):
    """Catalogue §3.2: eta* and the optimal loss for (d, T_max) = (1,4), (2,5), (3,4), both conventions, quoted to
    10 decimals (tolerance 5e-11, half a unit of the last digit)."""
    quoted = {("inverse", 1, 4): (0.3103448276, 0.2068965517), ("inverse", 2, 5): (0.2058823529, 2.2352941176),
              ("inverse", 3, 4): (0.1914893617, 3.8297872340), ("zero", 1, 4): (0.4285714286, 0.4285714286),
              ("zero", 2, 5): (0.25, 3.0), ("zero", 3, 4): (0.2307692308, 4.8461538462)}
    ours, worst = {}, 0.0
    for (conv, d, Tm), (eq, lq) in quoted.items():
        es = _eta_star(d, Tm, conv)
        ls = _closed_loss(es, d, Tm, conv)
        lx = _loss_aug([0, 0, 1, 0, es, 0], d, Tm, conv)      # exact quadrature at the structured optimum
        ours[f"{conv},d={d},Tmax={Tm}"] = [es, ls, lx]
        worst = max(worst, abs(es - eq), abs(ls - lq), abs(lx - lq))
    return Outcome(residual=worst, tolerance=5e-11, values={"ours_eta_loss_exactloss": ours,
                                                            "quoted": {f"{a},d={b},Tmax={c}": v
                                                                       for (a, b, c), v in quoted.items()}})


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
    ptol = 1e-6          # 10 x the model: gtol 1e-10 over curvature >= ~1e-3 puts the parameters within 1e-7
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
