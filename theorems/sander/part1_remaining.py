"""Sander thesis Part I (chapters 1-3): the catalogue entries and errata left uncovered by the other Part I
modules (euler, linear_resnet, adjoint, intro, large_depth, relu_counterexample).

* L3   (l.821)   the depth-rescaled flow: N nabla_n = O(1), and the l.992 gradient runs time 2x slower;
* E18  (l.1138)  Lemma 2.7's proof: the merged weights theta~_n do not follow -N nabla~ exactly (an O(sqrt(l)/N) defect);
* A7   (l.1495)  Prop 2.12's constant: the Heun parameter-gradient map Psi is Lipschitz with constant L_Psi / N;
* T3.1 (l.1832)  the definition of global Lipschitz continuity (typo g(u', v) for g(u', v'), E17);
* T3.4 (l.2121)  inequality (3.26) of Prop 3.10 (Arzela-Ascoli with a non-compact time interval);
* T3.6 (l.2636)  the cited Lemmas 3.19/3.20 (Picard-Lindelof, Caratheodory) through the growth bound they give;
* P3.4 (l.1755)  Lemma 3.22 (Moore-Osgood): the order of t -> oo and L -> oo does not matter under uniform convergence;
* T3.9 (l.2732)  (3.55): lambda_min(E[M|X]) >= m eta_r^2 / 8, through Mehler's formula;
* E13  (l.2572, l.2750) the matrix-Chernoff prefactor n (and the 2C typo);
* T3.10/E17 (l.2612) Remark 3.17's direction '2/r >= eps';
* E15  (l.2630)  Remark 3.18: 'C does not depend on m' -- K_1 grows with m;
* E17  the Lemma 3.23 proof step '2 sqrt(qm) x' (and the list of cosmetic typos);
* E20  the scope of the Sec 3.5.1 experiments (registered, notes only).

Conventions follow the modules they extend: linear ResNets as :mod:`theorems.sander.linear_resnet` (harness H2,
paper order of the product, true gradient ``(2/N) S^T G Sigma P^T``), the chapter-3 notation as
:mod:`theorems.sander.large_depth`.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import sympy as sp
from scipy import stats
from scipy.special import betainc
from scipy.integrate import solve_ivp

from solvers import resnet_train as rt
from solvers import xp_sander1 as xk
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.sander.linear_resnet import _flow, _psi_init, _thr_corrected, grad, loss, opn, prods

EPS = float(np.finfo(float).eps)


# ===========================================================================
# L3: the rescaled flow theta_n' = -N nabla_n
flow = Claim(
    id="sander.linear_rescaled_flow",
    title="Linear ResNets: N nabla_n = O(1) for weights theta_n = psi(n/N), and the l.992 gradient flow is the true one at half speed",
    label="Sec 2.3.2 'Gradient' (rescaled flow)",
    section="2.3.2",
    equation="l.821",
    lines=(819, 823),
    statement=r"\dot\theta_n=-N\nabla_n,\qquad N\nabla_n=O(1)",
    status="holds",
    params=[Param.int("N", 8, 2, 256, "depth of the smaller net (N and 2N are compared)", search=(2, 16)),
            Param.int("d", 3, 1, 6, "dimension", search=(1, 3)),
            Param.seed("seed of psi_init, Sigma and B"),
            Param.float("T", 1.0, 0.0, 10.0, "time horizon of the time-rescaling check", low_open=True)],
    notes="Definition L3, checked through its two consequences: (a) with theta_n = psi(n/N) for a smooth psi, "
          "c(N) = N max_n ||nabla_n||_F converges as N doubles (|c(2N)/c(N) - 1| <= 2 (1/q + 1/N): the change of the "
          "residual Pi^N - B, q = ||Pi^N - B||/||Pi^N - Pi^2N||, plus the O(1/N) Riemann-sum correction; inconclusive "
          "for q < 3, next to the optimum); (b) the flow with the appendix gradient (l.992, no factor 2) at time 2t "
          "equals the true-gradient flow at time t (DOP853 at rtol 1e-10: tolerance 1e-7 relative).  The fixed points "
          "coincide trivially (the two gradients are proportional).  Falsifier: 'nabla_n = O(1)' without the factor N.",
    catalogue="sander_part1 §2.2 L3; §4 E2",
    covers=("L3",),
)


def _h2_instance(p):
    rng = np.random.default_rng(p.seed)
    psi = _psi_init(p.d, rng)
    Q = np.linalg.qr(rng.standard_normal((p.d, p.d)))[0]
    Sig = (Q * np.linspace(0.6, 1.0, p.d)) @ Q.T
    B = np.eye(p.d) + 0.5 * rng.standard_normal((p.d, p.d))
    return psi, Sig, B


def _gnorm(p, N, scale):
    psi, Sig, B = _h2_instance(p)
    th = np.array([psi(n / N) for n in range(1, N + 1)])
    return scale(N) * max(np.linalg.norm(g) for g in grad(th, Sig, B))


def _flow_ab(p):
    psi, Sig, B = _h2_instance(p)
    N = p.N
    th0 = np.array([psi(n / N) for n in range(1, N + 1)]).ravel()

    def rhs(conv):
        return lambda t, y: (-N * grad(y.reshape(N, p.d, p.d), Sig, B, convention=conv)).ravel()
    a = solve_ivp(rhs("true"), (0, p.T), th0, method="DOP853", rtol=1e-11, atol=1e-13).y[:, -1]
    b = solve_ivp(rhs("appendix"), (0, 2 * p.T), th0, method="DOP853", rtol=1e-11, atol=1e-13).y[:, -1]
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-300))


@flow.numeric
def _(p):
    """N max_n ||nabla_n|| is N-independent (to 10 %) and the l.992 flow at 2T is the true flow at T."""
    c1, c2 = _gnorm(p, p.N, lambda N: N), _gnorm(p, 2 * p.N, lambda N: N)
    if c1 == 0:
        return inconclusive("zero gradient: the instance is at a fixed point", c_N=c1)
    # Error model of the O(1) part: N nabla_n = Pi_{:n} (Pi^N - B) Sigma Pi_{n:}^T, so c(N) changes with N through
    # the residual Pi^N - B (relative change ||Pi^N - Pi^2N|| / ||Pi^N - B|| = 1/q) and through the partial
    # products (the O(1/N) Riemann-sum correction): |c(2N)/c(N) - 1| <= 2 (1/q + 1/N).  Measured over 7,000
    # instances (seeds 0-199, d 1-6, N 2-64): at most 0.94 (1/q + 1/N).  Near the optimum (q < 3) the residual
    # is the discretisation change itself and c(N) has no stable scale: inconclusive.  (The fixed 10% used before
    # refuted N = 2, d = 1, seed 4 and seed 45 at the default N = 8, where Pi^N is 0.06 of its own change from B.)
    psi, Sig, B = _h2_instance(p)
    prods_N = [np.eye(p.d)]
    for M in (p.N, 2 * p.N):
        P = np.eye(p.d)
        for n in range(1, M + 1):
            P = (np.eye(p.d) + psi(n / M) / M) @ P
        prods_N.append(P)
    P1, P2 = prods_N[1], prods_N[2]
    q = float(np.linalg.norm(P1 - B) / max(np.linalg.norm(P1 - P2), 1e-300))
    if q < 3:
        return inconclusive(f"Pi^N is within 3 discretisation changes of B (q = {q:.3g}): the relative change of "
                            "N max||nabla_n|| measures the optimum's neighbourhood, not the scaling", c_N=c1, q=q)
    rel = _flow_ab(p)
    return Outcome.from_parts({"N nabla_n = O(1)": (abs(c2 / c1 - 1), 2 * (1 / q + 1 / p.N)),
                               "time rescaling x2": (rel, 1e-7)},   # DOP853 at rtol 1e-11, accumulated over the run
                              "rescaled gradient and time rescaling",
                              {"c_N": c1, "c_2N": c2, "q": q, "rel_flow_gap": rel})


flow.property(over=("N", "d", "seed"), max_examples=6)


@flow.falsifier("unscaled_gradient_O1")
def _(p):
    """'nabla_n = O(1)' (no factor N): max ||nabla_n|| halves when N doubles."""
    c1, c2 = _gnorm(p, p.N, lambda N: 1.0), _gnorm(p, 2 * p.N, lambda N: 1.0)
    return Outcome(residual=abs(c2 / c1 - 1), tolerance=0.1, values={"max_grad_N": c1, "max_grad_2N": c2},
                   message="|max||nabla^{2N}|| / max||nabla^N|| - 1|")


# ===========================================================================
# E18: Lemma 2.7's proof, d theta~_n / dt != -N nabla~_n
e18 = Claim(
    id="sander.lemma27_merged_weights_defect",
    title="Proof of Lemma 2.7: the merged weights theta~_n of the 2N-net follow -N nabla~_n only up to an O(sqrt(l)/N) defect",
    label="Lemma 2.7 (proof)",
    section="App 2.A.4",
    equation="l.1138-1140",
    lines=(1122, 1140),
    statement=r"\tilde\theta_n=\tfrac{\theta_{2n}+\theta_{2n-1}}2+\tfrac{\theta_{2n}\theta_{2n-1}}{4N}\ \text{satisfies}\ "
              r"\dot{\tilde\theta}_n=-N\tilde\nabla_n",
    status="gap",
    corrected=r"\dot{\tilde\theta}_n=-N\tilde\nabla_n+R_n,\quad\|R_n\|=O(\sqrt{\ell}/N)\ \text{(integrable in }t"
              r"\text{ under PL), so Lemma 2.7's conclusion survives}",
    params=[Param.int("N", 16, 2, 512, "depth of the merged net (the 2N-net is differentiated)", search=(8, 64)),
            Param.int("d", 3, 1, 6, "dimension", search=(1, 4)),
            Param.seed("seed of psi_init, Sigma and B")],
    notes="E18.  At theta_j = psi(j/2N) of the 2N-net (true-gradient flow theta_j' = -2N nabla^{2N}_j), "
          "theta~_n is chosen so that (I + theta~_n/N) = (I + theta_{2n}/2N)(I + theta_{2n-1}/2N): the N-net at theta~ "
          "has the same product (checked to rounding) hence the same loss.  The defect R_n = d theta~_n/dt + N nabla^N_n("
          "theta~) is not zero; r(N) = N max_n ||R_n||_op / sqrt(l) converges as N doubles (default instance: 0.1715 at N = 16, "
          "0.1729 at N = 32; a scratch instance gave 0.273, 0.283, 0.288, 0.290, 0.291, 0.291 for N = 4..128): R = O(sqrt(l)/N), integrable since l decays exponentially "
          "(Prop 2.4), so Lemma 2.7 holds (claim sander.linear_depth_limit).  Falsifier 'stated': R = 0.",
    catalogue="sander_part1 §2.2 L8; §4 E18",
    covers=("E18", "L8"),
)


def _defect(p, N):
    """Array API (NumPy, array-api-strict, CuPy): the instance is drawn on the host; gradients, merged weights,
    defect and operator norms are stacked arrays on ``xp``."""
    psi, Sig, B = _h2_instance(p)
    th = np.array([psi(j / (2 * N)) for j in range(1, 2 * N + 1)])
    xp = xp_of(p)
    th, Sig, B = on(xp, th, Sig, B)
    dth = -2 * N * xk.lin_grad(xp, th, Sig, B)
    a, b, da, db = th[0::2, ...], th[1::2, ...], dth[0::2, ...], dth[1::2, ...]        # theta_{2n-1}, theta_{2n}
    tt = (a + b) / 2 + b @ a / (4 * N)
    dtt = (da + db) / 2 + (db @ a + b @ da) / (4 * N)
    R = dtt + N * xk.lin_grad(xp, tt, Sig, B)
    l_merged, l_deep = float(xk.lin_loss(xp, tt, Sig, B)), float(xk.lin_loss(xp, th, Sig, B))
    return float(xp.max(xk.opnorm(xp, R))), l_merged, l_deep, float(xp.max(xk.opnorm(xp, dtt)))


@e18.numeric(backends=("numpy", "cupy"))
def _(p):
    """N max ||R_n|| / sqrt(l) is N-independent (10 %), and the merged net has the 2N-net's loss."""
    R1, l1, ld1, v1 = _defect(p, p.N)
    R2, l2, ld2, _ = _defect(p, 2 * p.N)
    if l1 == 0:
        return inconclusive("zero loss: the defect bound is 0 = 0", loss=l1)
    r1, r2 = p.N * R1 / math.sqrt(l1), 2 * p.N * R2 / math.sqrt(l2)
    # products agree to rounding: 50 N d eps relative to the loss scale
    same = abs(l1 - ld1) / max(l1, 1e-300)
    return Outcome.from_parts({"R = O(sqrt(l)/N)": (abs(r2 / r1 - 1), 0.1),
                               "same product": (same, 50 * p.N * p.d * EPS)},
                              "merged-weights defect", {"r_N": r1, "r_2N": r2, "max_R": R1, "max_dtheta": v1})


e18.property(over=("N", "d", "seed"), max_examples=10)


@e18.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """The printed dynamics d theta~/dt = -N nabla~: the defect is 3.4e-2 at N = 4, not rounding."""
    R, l, _, v = _defect(p, p.N)
    # rounding of the residual: 100 N d eps times the size of the terms
    return Outcome(residual=R, tolerance=100 * p.N * p.d * EPS * max(v, 1.0), values={"max_R": R, "loss": l},
                   message="max_n ||d theta~_n/dt + N nabla~_n||")


# ===========================================================================
# A7: Prop 2.12's Lipschitz constant L_Psi / N
psi_c = Claim(
    id="sander.heun_psi_lipschitz",
    title="Proof of Prop 2.12: the Heun parameter-gradient map Psi has Lipschitz constant L_Psi / N",
    label="Prop 2.12 (proof, (2.18)-(2.19))",
    section="App 2.A.9",
    equation="(2.18)-(2.19)",
    lines=(1495, 1506),
    statement=r"\tilde\nabla_{\theta_n}L=\Psi(\cdot),\ \mathrm{Lip}(\Psi)=\tfrac{L_\Psi}N",
    status="holds",
    params=[Param.int("N", 16, 2, 4096, "depth", search=(2, 512)),
            Param.float("theta", 0.7, -3.0, 3.0, "theta_n = theta_{n+1} (scalar layer f(x, th) = tanh(th x))"),
            Param.float("x", 0.4, -3.0, 3.0, "activation x_n (x_{n-1} = x_n)")],
    notes="With the corrected arguments of E4 (claim sander.heun_gradient_formula): Psi(x_n, x_{n-1}, g_{n+1}, g_n) "
          "= (1/2N)[d_th f(x_n, th_n)(1 + d_x f(y_n, th_{n+1})/N) g_{n+1} + d_th f(y_{n-1}, th_n) g_n], y_k = x_k + "
          "f(x_k, th_k)/N.  Symbolic (sympy, generic scalar f): Psi equals the chain-rule gradient of the two Heun steps "
          "that involve theta_n, and N Psi is a polynomial in h = 1/N, so every partial derivative of Psi is "
          "h x (bounded) -- Lip(Psi) = L_Psi/N with L_Psi = the h = 0 value.  Numeric: N ||grad Psi|| at f = tanh(th x) "
          "is N-independent up to O(1/N) (10 %).  Falsifier: Lip(Psi) = O(1/N^2).",
    catalogue="sander_part1 §2.3 A7; §4 E4",
    covers=("A7",),
)


def _psi_sym(inner=1):
    """Heun steps n-1 and n for the scalar layer f(x, th) = tanh(th x); h = 1/N; ``inner`` multiplies the h in
    (1 + h d_x f) of Psi (1 as in (2.18); 1/h drops the 1/N, a mutant)."""
    h = sp.symbols("h", positive=True)
    xn, xm, g1, g0, a, b, c = sp.symbols("x_n x_m g_1 g_0 a b c", real=True)   # a = th_{n-1}, b = th_n, c = th_{n+1}
    f = lambda x, t: sp.tanh(t * x)
    fx = lambda x, t: sp.diff(sp.tanh(t * sp.Symbol("X")), sp.Symbol("X")).subs(sp.Symbol("X"), x)
    ft = lambda x, t: sp.diff(sp.tanh(sp.Symbol("T") * x), sp.Symbol("T")).subs(sp.Symbol("T"), t)
    ym = xm + h * f(xm, a)
    xn_of = xm + h / 2 * (f(xm, a) + f(ym, b))                  # step n-1 (theta_n in its second stage)
    yn = xn + h * f(xn, b)
    xnp1 = xn + h / 2 * (f(xn, b) + f(yn, c))                    # step n
    # the true gradient: d/d theta_n of (g_{n+1} . x_{n+1}) through step n, plus (g_n . x_n) through step n-1
    true = g1 * sp.diff(xnp1, b) + g0 * sp.diff(xn_of, b)
    Psi = h / 2 * (ft(xn, b) * (1 + inner * h * fx(yn, c)) * g1 + ft(ym, b) * g0)
    return h, (xn, xm, g1, g0), true, Psi


def _psi_lipschitz_failures(power=1, inner_dropped=False):
    """Psi against the chain-rule gradient; N^power dPsi/dz at N = oo finite for the four arguments and nonzero for
    g_{n+1} (Lip(Psi) = L_Psi/N^power exactly).  Returns (failures, the limits)."""
    h = sp.symbols("h", positive=True)
    h, args, true, Psi = _psi_sym(1 / h if inner_dropped else 1)
    bad = int(sp.expand(true - Psi) != 0)
    lims = []
    for z in args:
        q0 = sp.expand(sp.diff(Psi, z) / h ** power).subs(h, 0)
        lims.append(str(q0))
        bad += int(q0.has(sp.zoo, sp.oo, sp.nan))
    bad += int(sp.expand(sp.diff(Psi, args[2]) / h ** power).subs(h, 0) == 0)
    return bad, lims


@psi_c.symbolic(timeout=60)
def _(p):
    """Psi = chain-rule gradient (f = tanh(th x)), and N dPsi/dz at N = oo is finite for the four arguments
    (nonzero for g_{n+1}: the order is exactly 1/N)."""
    bad, lims = _psi_lipschitz_failures()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff/expand", "instances": ["f = tanh(th x)"],
                                                      "proved": "Psi = gradient; N dPsi finite and nonzero at N = oo",
                                                      "N_dPsi_at_oo": lims},
                   message="failed identities")


@psi_c.mutant({"rate_N_squared": "Lip(Psi) = L_Psi/N^2: N^2 dPsi/dg_{n+1} is unbounded",
               "inner_1_over_N_dropped": "Psi with (1 + d_x f(y_n, th_{n+1})) instead of (1 + d_x f/N): not the gradient"},
              timeout=60)
def _(p, variant):
    """The statement perturbed, through the same gradient comparison and limits: some must fail."""
    bad, lims = _psi_lipschitz_failures(2 if variant == "rate_N_squared" else 1, variant == "inner_1_over_N_dropped")
    return Outcome(residual=bad, tolerance=0, values={"limits": lims},
                   message=f"{bad} identities/limits fail for {variant}")


def _psi_num(p, N, power):
    """N^power times the Euclidean norm of the gradient of Psi (central differences of the closed form)."""
    th = p.theta
    f = lambda x, t: math.tanh(t * x)
    fx = lambda x, t: t / math.cosh(t * x) ** 2
    ft = lambda x, t: x / math.cosh(t * x) ** 2

    def Psi(z):
        xn, xm, g1, g0 = z
        yn, ym = xn + f(xn, th) / N, xm + f(xm, th) / N
        return (ft(xn, th) * (1 + fx(yn, th) / N) * g1 + ft(ym, th) * g0) / (2 * N)
    z0 = np.array([p.x, p.x, 1.0, 1.0])
    e = 1e-6
    gr = [(Psi(z0 + e * np.eye(4)[i]) - Psi(z0 - e * np.eye(4)[i])) / (2 * e) for i in range(4)]
    return N ** power * float(np.linalg.norm(gr))


def _psi_outcome(p, power):
    # N grad Psi = G0 + O(h), h = 1/N: the O(h) term comes from y = x + h f (|d_x f| <= |theta|) and from
    # (1 + h d_x f) and the derivative of sech^2 (a further factor theta), so its relative size is at most
    # ~ (|theta| + theta^2)/(2N) and the N-to-2N change ~ half that; it is below the 10 % tolerance once
    # N >= 5 (|theta| + theta^2).  The pair compared starts there (audit issue 21: N = 9 at theta = 2.04 was refuted
    # pre-asymptotically).
    N0 = max(p.N, int(math.ceil(5 * (abs(p.theta) + p.theta ** 2))))
    a, b = _psi_num(p, N0, power), _psi_num(p, 2 * N0, power)
    if a == 0:
        return inconclusive("Psi is locally constant at this point", value=a)
    return Outcome(residual=abs(b / a - 1), tolerance=0.1, values={"N_pow_gradPsi_N": a, "N_pow_gradPsi_2N": b,
                                                                   "N_compared": N0},
                   message=f"N^{power} ||grad Psi||: ratio between N={N0} and 2N minus 1")


@psi_c.numeric
def _(p):
    """N ||grad Psi|| is the same at N and 2N to 10 % (the O(1/N) correction, N >= 2)."""
    return _psi_outcome(p, 1)


psi_c.property(over=("N",), max_examples=10)


@psi_c.falsifier("lipschitz_1_over_N2")
def _(p):
    """Lip(Psi) = O(1/N^2): N^2 ||grad Psi|| doubles with N."""
    return _psi_outcome(p, 2)


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


# ===========================================================================
# T3.4: inequality (3.26) of Prop 3.10
aa = Claim(
    id="sander.arzela_ascoli_grid_inequality",
    title="Prop 3.10's key inequality (3.26): ||Z^L(s,t) - Z^L(s',t')|| <= C|t-t'| + C|s-s'| + C/L",
    label="Prop 3.10 (proof), Cor 3.11",
    section="3.A.2",
    equation="(3.26)",
    lines=(2093, 2121),
    statement=r"\|\mathcal Z^L(s,t)-\mathcal Z^L(s',t')\|\le C|t-t'|+C|s-s'|+\tfrac CL,\quad"
              r"\mathcal Z^L(s,t)=Z^L_{\lfloor(L-1)s\rfloor+1}(t)",
    status="holds", bound=True,
    params=[Param.int("L", 64, 1, 100_000, "depth", search=(1, 2000)),
            Param.float("C", 1.0, 0.0, 100.0, "constant of hypotheses (i)-(ii)", low_open=True),
            Param.int("p_dim", 3, 1, 16, "dimension p of the weights"),
            Param.int("pairs", 5000, 10, 10**6, "number of (s, t, s', t') pairs"),
            Param.seed("seed")],
    notes="Families meeting (i) ||Z_{k+1} - Z_k|| <= C/L and (ii) ||Z_k|| <= C, ||dZ_k/dt|| <= C (b = C, as the proof "
          "assumes w.l.o.g.): Z_k(t) = cos(t) W_k with W_k a walk from 0 with steps of norm exactly C/L (half of the "
          "draws aligned, the extremal case).  Pairs: random, plus s, s' straddling a grid point (1e-9 apart) where "
          "the C/L term is needed.  Error model: rounding 16 eps C.  Falsifier: drop C/L.  (3.29)'s misplaced C/phi(L) "
          "is cosmetic (catalogue T3.4) and not encoded.",
    catalogue="sander_part1 §2.8 T3.4",
    covers=("T3.4",),
)


def _aa(p, with_L_term=True):
    rng = np.random.default_rng(p.seed)
    L, C = p.L, p.C
    steps = rng.standard_normal((L - 1, p.p_dim)) if L > 1 else np.zeros((0, p.p_dim))
    if p.seed % 2 == 0 and L > 1:
        steps[:] = steps[0]                                    # aligned walk: differences add up
    if L > 1:
        steps *= (C / L) / np.linalg.norm(steps, axis=1, keepdims=True)
    W = np.vstack([np.zeros((1, p.p_dim)), np.cumsum(steps, axis=0)])      # ||W_k|| <= (k-1) C/L <= C
    n = p.pairs
    s, s2 = rng.uniform(0, 1, (2, n))
    t, t2 = rng.uniform(0, 20, (2, n))
    if L > 1:                                                  # half of the pairs straddle a grid point j/(L-1)
        j = rng.integers(1, L, n // 2)
        s[: n // 2] = np.clip(j / (L - 1) - 1e-9, 0, 1)
        s2[: n // 2] = np.clip(j / (L - 1) + 1e-9, 0, 1)
        t2[: n // 2] = t[: n // 2]
    # array API (NumPy, array-api-strict, CuPy): the walk and the pairs are drawn on the host, the grid index
    # floor((L-1)s), the gather Z^L(s, t) and both sides of (3.26) are computed on xp
    xp = xp_of(p)
    Wx, s, s2, t, t2 = on(xp, W, s, s2, t, t2)
    k = xp.astype(xp.clip(xp.floor((L - 1) * s), 0, L - 1), xp.int64)
    k2 = xp.astype(xp.clip(xp.floor((L - 1) * s2), 0, L - 1), xp.int64)
    lhs = xp.linalg.vector_norm(xp.expand_dims(xp.cos(t), axis=1) * xp.take(Wx, k, axis=0)
                                - xp.expand_dims(xp.cos(t2), axis=1) * xp.take(Wx, k2, axis=0), axis=1)
    rhs = C * xp.abs(t - t2) + C * xp.abs(s - s2) + (C / L if with_L_term else 0.0)
    gap = float(xp.max(lhs - rhs))
    return Outcome(residual=gap, tolerance=16 * EPS * C,
                   values={"max_lhs_minus_rhs": gap,
                           "tightness": float(xp.max(lhs / rhs)) if bool(xp.all(rhs > 0)) else math.inf,
                           "max_consecutive": float(
                       np.max(np.linalg.norm(np.diff(W, axis=0), axis=1))) if L > 1 else 0.0},
                   message="max over pairs of LHS - RHS of (3.26)")


@aa.numeric(backends=("numpy", "cupy"))
def _(p):
    """(3.26) on random and grid-straddling pairs."""
    return _aa(p)


aa.property(over=("L", "seed"), max_examples=15)
# equality: s, s' straddling a grid point with t = t' near a multiple of pi (|cos t| -> 1): LHS -> C/L = RHS - 2e-9 C
aa.tightness(over=("L", "C", "p_dim", "seed"), max_examples=15, witnesses=[{"L": 64, "seed": 0}])


@aa.falsifier("no_1_over_L_term", backends=("numpy", "cupy"))
def _(p):
    """Without C/L: s, s' 2e-9 apart across a grid point give LHS ~ C/L > C |s - s'|."""
    return _aa(p, with_L_term=False)


# ===========================================================================
# T3.6: cited Lemmas 3.19 / 3.20
ode = Claim(
    id="sander.cited_ode_lemmas",
    title="Lemmas 3.19 (Picard-Lindelof) and 3.20 (Caratheodory): a linear-growth field gives a global solution with ||U(t)|| <= ||U(0)|| e^{Ct}",
    label="Lemmas 3.19, 3.20",
    section="3.C",
    equation="",
    lines=(2636, 2662),
    statement=r"\|g(U,r)\|\le C\|U\|\Rightarrow\dot U=g(U,t)\text{ has a unique global (Caratheodory) solution}",
    status="heuristic",
    params=[Param.int("dim", 4, 1, 32, "dimension of U"),
            Param.float("C", 1.0, 0.0, 10.0, "growth constant", low_open=True),
            Param.float("T", 3.0, 0.0, 20.0, "horizon", low_open=True),
            Param.int("pieces", 7, 1, 100, "number of pieces of the (discontinuous in time) field"),
            Param.float("u0", 1.0, 1e-12, 100.0, "norm of U(0) (random direction)"
                    " (>= 1e-12: below, ||U|| underflows in the ratio test)"),
            Param.seed("seed")],
    notes="Cited textbook results (registered as heuristic: nothing of the thesis to refute).  Checked consequence "
          "used by Prop 3.8/3.9: for g(U, r) = C tanh(A(r) U) with ||A(r)||_2 <= 1 piecewise constant in r (a "
          "Caratheodory field, discontinuous in time), the solution exists on [0, T] and obeys the Gronwall bound "
          "||U(t)|| <= ||U(0)|| e^{Ct} (DOP853 per piece, rtol 1e-11: tolerance 1e-8 relative).  Falsifier: the "
          "superlinear g = C U^2 (catalogue E7's example) violates the growth hypothesis and leaves the bound (blow-up at "
          "t = 1/(C U0)).",
    catalogue="sander_part1 §2.8 T3.6",
    covers=("T3.6",),
)


def _gronwall(p, g):
    rng = np.random.default_rng(p.seed)
    U0 = rng.standard_normal(p.dim)
    U0 *= p.u0 / np.linalg.norm(U0)
    ts = np.linspace(0, p.T, p.pieces + 1)
    worst, U = -np.inf, U0
    for i in range(p.pieces):
        A = rng.standard_normal((p.dim, p.dim))
        A /= np.linalg.norm(A, 2)
        sol = solve_ivp(lambda t, y: g(y, A), (ts[i], ts[i + 1]), U, method="DOP853", rtol=1e-11, atol=1e-14,
                        dense_output=True)
        tt = np.linspace(ts[i], ts[i + 1], 50)
        Y = sol.sol(tt) if sol.status == 0 else np.full((p.dim, 50), np.inf)
        rel = np.linalg.norm(Y, axis=0) / (np.linalg.norm(U0) * np.exp(p.C * tt)) - 1
        worst = max(worst, float(np.max(np.nan_to_num(rel, nan=np.inf))))
        if sol.status != 0:
            break
        U = sol.y[:, -1]
    return Outcome(residual=worst, tolerance=1e-8, values={"max_rel_excess": worst},
                   message="max_t ||U(t)|| / (||U0|| e^{Ct}) - 1")


@ode.numeric
def _(p):
    """Gronwall bound along a piecewise-constant-in-time field C tanh(A(t) U)."""
    return _gronwall(p, lambda y, A: p.C * np.tanh(A @ y))


@ode.falsifier("superlinear_growth", fixed={"dim": 1, "T": 3.0, "u0": 2.0})
def _(p):
    """g = C |U| U (no linear growth bound), |U0| = 2: U0 e^{Ct} is exceeded, then blow-up at t = 1/2."""
    return _gronwall(p, lambda y, A: p.C * np.abs(y) * y)


# ===========================================================================
# P3.4: Lemma 3.22, order of the limits t -> oo, L -> oo
mo = Claim(
    id="sander.limit_order",
    title="Lemma 3.22 (Moore-Osgood): under uniform convergence in t and in L the limits t -> oo and L -> oo commute",
    label="Lemma 3.22; Thm 3.7 discussion (l.1755)",
    section="3.4.2, 3.C",
    equation="",
    lines=(2676, 2692),
    statement=r"e_{L,t}\to e_{\infty,t}\text{ unif. in }t,\ e_{L,t}\to e_{L,\infty}\text{ unif. in }L\Rightarrow"
              r"\lim_Le_{L,\infty}=\lim_te_{\infty,t}=\lim_{L,t}e_{L,t}",
    status="holds",
    params=[Param.float("C", 2.0, 1.0, 4.0, "target y = C x (x = 1)", low_open=True, search=(1.1, 3.0)),
            Param.float("T", 12.0, 1.0, 50.0, "time horizon (the t -> oo proxy)"),
            Param.int("L_min", 8, 8, 64, "smallest depth of the ladder"),
            Param.int("L_max", 256, 256, 2048, "largest depth of the ladder")],
    validate=lambda p: (_ for _ in ()).throw(ParamError(
        f"parameters L_min={p.L_min}, L_max={p.L_max}: need L_max >= 4 L_min")) if p.L_max < 4 * p.L_min else None,
    notes="Proof verified as correct by the catalogue (P3.4).  Instance: the scalar linear ResNet of depth L with "
          "weight-tied w (App. 3.D's setting with identity activation), output e_{L,t} = (1 + w_L(t)/L)^L under the "
          "depth-scaled flow w' = -2(Pi - C)(1 + w/L)^{L-1}; L = oo: w' = -2(e^w - C)e^w.  Checked: (i) uniform in t "
          "convergence in L (log-log slope of sup_t |e_{L,t} - e_{oo,t}| <= -1 + 0.15, module rate model); "
          "(ii) uniform in L convergence in t: max_L |e_{L,T} - C| <= 1e-7 (linearised rate 2C^2 per unit time); "
          "(iii) the iterated limits agree: |e_{oo,T} - e_{L_max,T}| <= 1e-7.  DOP853 at rtol 1e-12.  Ranges narrowed by the audit (issue 21): L_min >= 8 (L_min = 2 gave a pre-asymptotic slope, refuted) and L_max >= 256 >= 4 L_min (7 of 20 sweep draws were rejected for L_max < 4 L_min).  Falsifier: "
          "e_{L,t} = t/(t+L), where the convergence in L is not uniform in t: lim_L lim_t = 1, lim_t lim_L = 0.",
    catalogue="sander_part1 §2.7 P3.4, P3.6",
    covers=("P3.4",),
)


def _mo_path(C, L, ts):
    if L is None:
        rhs = lambda t, w: -2 * (np.exp(w) - C) * np.exp(w)
        out = lambda w: np.exp(w)
    else:
        rhs = lambda t, w: -2 * ((1 + w / L) ** L - C) * (1 + w / L) ** (L - 1)
        out = lambda w: (1 + w / L) ** L
    sol = solve_ivp(rhs, (0, ts[-1]), [0.0], method="DOP853", rtol=1e-12, atol=1e-14, t_eval=ts)
    return out(sol.y[0])


@mo.numeric
def _(p):
    """Uniform convergence in L (rate 1/L), in t (to C), and equal iterated limits."""
    # T is the t -> oo proxy: at the linearised rate 2 C^2 the distance to C left at T is ~ |C - 1| e^{-2 C^2 T}
    left = abs(p.C - 1) * math.exp(-2 * p.C ** 2 * p.T)
    if left > 1e-8:
        return inconclusive(f"T={p.T!r} is too short a proxy for t -> oo at C={p.C!r}: about {left:.2g} of the "
                            f"distance to C is left at T (the check needs 1e-7)", left_at_T=left)
    ts = np.linspace(0, p.T, 400)
    inf = _mo_path(p.C, None, ts)
    Ls, errs, ends = [], [], []
    L = p.L_min
    while L <= p.L_max:
        e = _mo_path(p.C, L, ts)
        Ls.append(L); errs.append(float(np.max(np.abs(e - inf)))); ends.append(float(e[-1]))
        L *= 2
    if max(errs) < 1e4 * EPS * p.C:
        return inconclusive(f"C={p.C!r}: the paths barely leave e = 1, so sup_t |e_L - e_oo| ({max(errs):.2g}) is "
                            f"rounding and has no slope in L", sup_t_err=errs)
    sl = np.diff(np.log(errs)) / np.diff(np.log(Ls))
    parts = {"uniform in t (slope <= -0.85)": (max(0.0, float(np.max(sl)) + 1), 0.15),
             "uniform in L (|e_{L,T} - C|)": (max(abs(x - p.C) for x in ends), 1e-7),
             "iterated limits agree": (abs(inf[-1] - ends[-1]), 1e-7)}
    return Outcome.from_parts(parts, "Moore-Osgood on the scalar ResNet", {
        "L": Ls, "sup_t_err": errs, "slopes": sl.tolist(), "e_oo_T": float(inf[-1]),
        "plot": {"kind": "loglog", "x": Ls, "series": {"sup_t |e_L - e_oo|": errs}, "xlabel": "L",
                 "ylabel": "sup_t error", "title": "uniform-in-t convergence in L"}})


mo.property(over=("C",), max_examples=5)


@mo.falsifier("nonuniform_family")
def _(p):
    """e_{L,t} = t/(t+L): lim_L lim_t = 1 but lim_t lim_L = 0 (convergence in L not uniform in t)."""
    big = 1e15
    e = lambda L, t: t / (t + L)
    lim_L_of_lim_t = e(big, big * big)           # lim_t first (t >> L), then L large
    lim_t_of_lim_L = e(big * big, big)           # lim_L first (L >> t), then t large
    return Outcome(residual=abs(lim_L_of_lim_t - lim_t_of_lim_L), tolerance=1e-7,
                   values={"lim_L_lim_t": lim_L_of_lim_t, "lim_t_lim_L": lim_t_of_lim_L},
                   message="|difference of the iterated limits|")


# ===========================================================================
# T3.9: (3.55) through Mehler's formula
meh = Claim(
    id="sander.mehler_lower_bound",
    title="(3.55): lambda_min(E[M|X]) >= m eta_r^2 / 8 for unit data in the regime d >> n^{2/r} (Mehler's formula)",
    label="Lemma 3.24 (proof), (3.55)",
    section="3.C",
    equation="(3.55)",
    lines=(2716, 2732),
    statement=r"\lambda_{\min}(\mathbb E(M|X))\ge\tfrac{m\eta_r^2(\sigma)}8\ \text{w.p.}\ \ge1-2n^2e^{-d/(2Cn^{2/r})}",
    status="holds",
    # ranges narrowed (phase 2 of issue 24): where delta >= 1 the statement is vacuous (inconclusive); d in [8, 256],
    # n in [2, 32] keeps that to ~12% of the draws (it was 55% over d in [1, 256], n in [2, 200])
    params=[Param.int("d", 64, 8, 256, "input dimension (the falsifier's d = 4 is its own)"),
            Param.int("n", 8, 2, 32, "number of unit columns of X (the falsifier's n = 64 is its own)"),
            Param.choice("r", "3", ("3", "5", "7", "9"), "Hermite order r (odd: eta_r(tanh) = 0 for even r, tanh is odd)"),
            Param.seed("seed of X", 1)],
    notes="sigma = tanh.  E[M|X]/m = K with K_ij = E_{w ~ N(0, I_d)} tanh(w.x_i) tanh(w.x_j) = sum_r eta_r^2 <x_i, x_j>^r "
          "(Mehler, eta_r the normalised Hermite coefficients).  K is computed by 2D Gauss-Hermite quadrature (60 "
          "nodes per axis; error estimated as 10 x its difference from 80 nodes) and compared with the 80-term Mehler "
          "series (truncation E[tanh^2] |rho|^81); then lambda_min(K) >= eta_r^2/8 is asserted.  The cited C (Nguyen & "
          "Mondelli) is the sub-Gaussian variance proxy of the columns of sqrt(d) X (l.2722): for uniform unit columns "
          "the smallest admissible one, C_min(d) = sup_t t / sqrt(2 ln(2 / P(|sqrt(d) x_1| >= t))) (0.85 at d = 1, 0.65 "
          "at d = 2, 0.84 at d = 64; exact sphere marginal by betainc), makes delta = 2 n^2 exp(-d / (2 C n^{2/r})) "
          "smallest.  (3.55) is a probability statement: where delta >= 1 even at C_min it asserts nothing and the check "
          "is inconclusive (a failing draw there is no contradiction: d = 2, n = 5, r = 7 has delta = 19 and fails in 2 of "
          "3 draws; the former gate d >= n^{2/r} dropped the 2n^2 and 2C and refuted it).  Elsewhere 32 seeded draws of X "
          "are checked and the number of draws with lambda_min < eta_r^2/8 must stay within the binomial(32, delta) "
          "count exceeded with probability 1e-6 (inconclusive where delta is too close to 1 for 32 draws to contradict "
          "it).  d = 64, n = 8 (delta = 0.009, ratio >= 60) certifies; the catalogue's d = 16, n = 64 (ratio 3.5) is outside "
          "the lemma's guarantee (delta = 4e3) and outside the declared n <= 32; d = 4, n = 64 (delta = 7e3) is the "
          "falsifier's own instance (the hypothesis delta < 1 dropped, ratio 0.002).  r is drawn from the odd orders (audit issue 21: even r was rejected, d = 1 refuted).  The Chernoff step after (3.55) is claim sander.chernoff_exponent (E12) and sander."
          "chernoff_prefactor (E13).",
    catalogue="sander_part1 §2.8 T3.9",
    covers=("T3.9",),
)


@lru_cache(maxsize=None)
def _hermite_tanh(R=80, deg=200):
    z, w = np.polynomial.hermite_e.hermegauss(deg)
    w = w / math.sqrt(2 * math.pi)
    s = np.tanh(z)
    h0, h1 = np.ones_like(z), z.copy()
    out = [float(np.sum(w * s * h0)), float(np.sum(w * s * h1))]
    for r in range(1, R):
        h0, h1 = h1, (z * h1 - math.sqrt(r) * h0) / math.sqrt(r + 1)     # orthonormal He_r / sqrt(r!)
        out.append(float(np.sum(w * s * h1)))
    return np.array(out), float(np.sum(w * s * s))


@lru_cache(maxsize=None)
def _hermegauss(deg):
    return np.polynomial.hermite_e.hermegauss(deg)


def _kquad(rho, deg):
    z, w = _hermegauss(deg)
    w = w / math.sqrt(2 * math.pi)
    Z1, Z2 = np.meshgrid(z, z, indexing="ij")
    W = np.outer(w, w)
    rho = np.asarray(rho)[..., None, None]
    return np.sum(W * np.tanh(Z1) * np.tanh(rho * Z1 + np.sqrt(1 - rho ** 2) * Z2), axis=(-1, -2))


MEH_DRAWS = 32      # draws of X for the probability statement (3.55)
MEH_LEVEL = 1e-6    # a failure count exceeded with this probability under delta refutes


@lru_cache(maxsize=None)
def _variance_proxy_min(d):
    """Smallest C with P(|<sqrt(d) x, y>| >= t) <= 2 exp(-t^2 / (2 C^2)) for all t (the definition of l.2462), x
    uniform on the unit sphere of R^d: the marginal P(|x_1| >= s) = I_{1 - s^2}((d-1)/2, 1/2) on a 4001-point grid of
    t in (0, sqrt(d)) (a grid sup is <= the sup, so delta from it is <= the lemma's: the vacuity gate is safe)."""
    if d == 1:
        return 1.0 / math.sqrt(2.0 * math.log(2.0))       # |x_1| = 1: binding at t = 1
    t = np.linspace(1e-6, math.sqrt(d) * (1 - 1e-9), 4001)
    P = betainc((d - 1) / 2, 0.5, 1 - t * t / d)
    ok = P > 1e-300
    return float(np.max(t[ok] / np.sqrt(2.0 * np.log(2.0 / P[ok]))))


def _mehler_delta(d, n, r):
    """The failure probability 2 n^2 exp(-d / (2 C n^{2/r})) of (3.55) at the smallest admissible C."""
    C = _variance_proxy_min(d)
    return 2.0 * n * n * math.exp(-d / (2.0 * C * n ** (2.0 / r))), C


def _mehler(p, X=None):
    eta, E2 = _hermite_tanh()
    r = int(p.r)
    if X is None:
        rng = np.random.default_rng(p.seed)
        X = rng.standard_normal((p.d, p.n))
    n = X.shape[1]
    X = X / np.linalg.norm(X, axis=0)
    G = np.clip(X.T @ X, -1, 1)
    iu = np.triu_indices(n, 1)
    q60, q90 = _kquad(G[iu], 60), _kquad(G[iu], 80)
    K = np.full((n, n), E2)
    K[iu] = q60
    K[(iu[1], iu[0])] = q60
    ser = sum(eta[r] ** 2 * G[iu] ** r for r in range(len(eta)))
    quad_err = 10 * float(np.max(np.abs(q60 - q90))) + 1e-13    # 10 x (60-node - 80-node)
    trunc = E2 * float(np.max(np.abs(G[iu]))) ** len(eta)
    lam = float(np.linalg.eigvalsh(K)[0])
    bound = eta[r] ** 2 / 8
    return lam, bound, float(np.max(np.abs(q60 - ser))), quad_err + trunc


@meh.numeric
def _(p):
    """Mehler's series = the Gaussian expectation, and lambda_min(K) >= eta_r^2 / 8 on 32 draws of X, failing no
    more often than the lemma's probability 1 - delta allows (delta < 1 at the smallest admissible C)."""
    r = int(p.r)
    delta, C = _mehler_delta(p.d, p.n, r)
    if delta >= 1:
        # (3.55) holds 'with probability at least 1 - delta': vacuous here for every admissible C (audit: the legal
        # draw d = 2, n = 5, r = 7, delta = 19, was refuted by the former gate d >= n^{2/r})
        return inconclusive(f"delta = 2n^2 exp(-d/(2C n^(2/r))) = {delta:.3g} >= 1 even at the smallest variance proxy "
                            f"C = {C:.3f}: (3.55) asserts nothing at d = {p.d}, n = {p.n}, r = {r}", delta=delta, C=C)
    kmax = float(stats.binom.isf(MEH_LEVEL, MEH_DRAWS, delta))     # P(failures > kmax) <= MEH_LEVEL under delta
    if kmax >= MEH_DRAWS:
        return inconclusive(f"delta = {delta:.3g} is too close to 1 for {MEH_DRAWS} draws to contradict (3.55) at "
                            f"level {MEH_LEVEL:g}", delta=delta, C=C)
    rng = np.random.default_rng(p.seed)
    Xs = rng.standard_normal((MEH_DRAWS, p.d, p.n))                 # draw 0 is the former single instance
    eig_tol = 10 * p.n * p.n * EPS       # eigvalsh backward error: n eps ||K||; ||K|| <= n E[tanh^2]
    lams, gaps, tols, bound = [], [], [], None
    for X in Xs:
        lam, bound, gap, tol = _mehler(p, X)
        lams.append(lam); gaps.append(gap); tols.append(tol)
    lams = np.array(lams)
    fails = int(np.sum(lams < bound - eig_tol))
    return Outcome.from_parts({"Mehler identity": (max(g / t for g, t in zip(gaps, tols)), 1.0),
                               "(3.55) failures": (float(fails), kmax)},
                              f"Mehler kernel and (3.55) on {MEH_DRAWS} draws ({fails} below eta_r^2/8; delta = {delta:.3g})",
                              {"lambda_min": float(lams[0]), "eta_r^2/8": bound, "ratio": float(lams.min() / bound),
                               "failures": fails, "draws": MEH_DRAWS, "delta": delta, "C": C,
                               "max_failures_allowed": kmax})


meh.property(over=("seed",), max_examples=8, fixed={"d": 64, "n": 8})


@meh.falsifier("outside_regime")
def _(p):
    """The hypothesis delta < 1 dropped: d = 4, n = 64 (its own sizes, the catalogue's; d << n^{2/r}, delta = 7e3),
    X from the seed: lambda_min(K) / (eta_3^2/8) = 0.002."""
    lam, bound, _, _ = _mehler(p, np.random.default_rng(p.seed).standard_normal((4, 64)))
    return Outcome(residual=max(0.0, bound - lam), tolerance=10 * 64 * 64 * EPS,
                   values={"lambda_min": lam, "eta_r^2/8": bound, "ratio": lam / bound},
                   message="eta_r^2/8 - lambda_min(K) (must be <= 0)")


# ===========================================================================
# E13: the prefactor n of the matrix Chernoff term (l.2572) and the 2C typo (l.2750)
pref = Claim(
    id="sander.chernoff_prefactor",
    title="Proof of Prop 3.6 (l.2572): the matrix-Chernoff failure term needs the dimension prefactor n",
    label="Prop 3.6 (proof, l.2572), Lemma 3.24 (l.2750)",
    section="3.B.5, 3.C",
    equation="l.2572",
    lines=(2570, 2573),
    statement=r"P\big(\lambda_{\min}(\textstyle\sum_kX_k)\le t\mu\big)\le\exp\!\big(-\tfrac{(1-t)^2\mu}{2R}\big)"
              r"\ \ (\text{l.2572: no factor }n)",
    status="erratum",
    bound=True,
    corrected=r"P\big(\lambda_{\min}(\textstyle\sum_kX_k)\le t\mu\big)\le n\exp\!\big(-\tfrac{(1-t)^2\mu}{2R}\big)"
              r"\ (\text{as at l.2606});\ \text{l.2750: }e^{-d/(2Cn^{2/r})}",
    params=[Param.int("n", 1000, 1, 10**6, "matrix dimension n (number of independent diagonal entries)", search=(1, 5000)),
            Param.float("mu_over_R", 40.0, 1.0, 2000.0, "mu/R = N p", search=(5.0, 200.0)),
            Param.float("t", 0.5, 0.0, 1.0, "threshold fraction", low_open=True, high_open=True),
            Param.int("N", 100_000, 10, 10**7, "number of summands")],
    validate=lambda p: (_ for _ in ()).throw(ParamError(
        f"parameters: mu_over_R={p.mu_over_R} must be < N={p.N}")) if p.mu_over_R >= p.N else None,
    notes="E13.  Instance: X_k = R diag(b_k), b_k in {0,1}^n with i.i.d. Bernoulli(p) entries (lambda_max(X_k) <= R, "
          "mu = lambda_min(E sum) = N p R); lambda_min(sum) is the minimum of n independent Binomial(N, p) counts, so "
          "P = 1 - (1 - F)^n exactly (F = scipy.stats.binom.cdf).  With the (1-t)^2 exponent (E12 corrected), the "
          "bound without n fails (n = 1000, mu/R = 40: P = 0.31 > 6.7e-3); with n it holds.  The l.2750 typo "
          "(d/(Cn^{2/r}) against d/(2Cn^{2/r}) in the next line and at l.2572) involves the unknown cited constant C and "
          "is recorded only.  Error model: logcdf accurate to 1e-12 relative; margin 1e-9 (1 + |log P|).",
    catalogue="sander_part1 §2.8 T3.9; §4 E13",
    covers=("E13",),
)


def _pref(p, with_n):
    prob = p.mu_over_R / p.N
    k = math.floor(p.t * p.mu_over_R)
    logF = float(stats.binom.logcdf(k, p.N, prob))
    P = -math.expm1(p.n * math.log1p(-math.exp(logF)))
    logP = math.log(P) if P > 0 else logF + math.log(p.n)
    logB = (math.log(p.n) if with_n else 0.0) - (1 - p.t) ** 2 * p.mu_over_R / 2
    return Outcome(residual=logP - logB, tolerance=1e-9 * (1 + abs(logP)),
                   values={"P_exact": math.exp(logP), "bound": math.exp(min(logB, 700)), "single_entry_tail": math.exp(logF),
                           "tightness": math.exp(min(logP - logB, 700))},  # P / bound
                   message="log P(lambda_min <= t mu) - log bound (must be <= 0)")


@pref.numeric
def _(p):
    """P(min of n Binomial counts <= t mu) <= n exp(-(1-t)^2 mu / 2R)."""
    return _pref(p, True)


pref.property(over=("n", "mu_over_R"), max_examples=15)


@pref.falsifier("stated")
def _(p):
    """Without n (l.2572): n = 1000, mu/R = 40, t = 1/2 gives P = 0.31 against exp(-5) = 6.7e-3."""
    return _pref(p, False)


pref.tightness(over=("n", "mu_over_R", "t", "N"), max_examples=30, approached=False,
               finding="bound not approached, best ratio P/bound = 0.606 (n = 1, mu/R = 1, t = 0, N = 335) over "
                       "the declared range: a union bound (factor n) over Chernoff tails exp(-(1-t)^2 mu/2R), "
                       "which leave a constant factor even for a single Binomial count.")


# ===========================================================================
# T3.10 / E17: Remark 3.17's '2/r >= eps'
r317 = Claim(
    id="sander.remark317_direction",
    title="Remark 3.17: to reach eps + 2n^2 exp(-d/(2 v_x n^eps)) one needs 2/r <= eps (printed 2/r >= eps)",
    label="Remark 3.17",
    section="3.B.5",
    equation="(3.53)",
    lines=(2608, 2612),
    statement=r"\text{choose }r\text{ with }2/r\ge\varepsilon:\ 2n^2e^{-d/(2v_xn^{2/r})}\le2n^2e^{-d/(2v_xn^{\varepsilon})}",
    status="erratum",
    corrected=r"\text{choose }r\text{ with }2/r\le\varepsilon\ (r=\lceil2/\varepsilon\rceil):\ "
              r"n^{2/r}\le n^{\varepsilon}\Rightarrow2n^2e^{-d/(2v_xn^{2/r})}\le2n^2e^{-d/(2v_xn^{\varepsilon})}",
    params=[Param.int("n", 100, 2, 10**6, "number of samples", search=(2, 10**5)),
            Param.float("eps", 0.3, 0.0, 1.0, "target epsilon", low_open=True, search=(0.05, 0.95)),
            Param.float("d", 1000.0, 1.0, 1e6, "input dimension"),
            Param.float("vx", 1.0, 0.0, 100.0, "v_x", low_open=True)],
    notes="E17 (direction reversed).  Logs of the third term of delta for the chosen r against the target (3.53).  "
          "Corrected: the smallest admissible r = ceil(2/eps) gives n^{2/r} <= n^eps.  Stated: r = 2 satisfies the printed "
          "'2/r >= eps' for every eps <= 1 and gives n^{2/r} = n > n^eps.  For tanh, larger r also shrinks eta_r "
          "(0.148, 0.063, 0.031 for r = 3, 5, 7), so c_1 ~ eta_r^{-2} grows (catalogue T3.10).  Error model: logs, 1e-12 relative.",
    catalogue="sander_part1 §2.8 T3.10; §4 E17",
    covers=("T3.10", "E17"),
)


def _r317_unresolvable(p):
    """eps so small that 2/eps, or v_x so small that d/(2 v_x), is no double: both logs are -inf."""
    if not math.isfinite(2 / p.eps):
        return inconclusive(f"eps={p.eps!r}: r = ceil(2/eps) overflows a double")
    if not math.isfinite(p.d / (2 * p.vx)):
        return inconclusive(f"vx={p.vx!r}: d/(2 v_x) overflows a double, so both terms are exp(-inf) = 0 and "
                            f"their logs cannot be compared")
    return None


def _r317(p, r):
    lt = math.log(2 * p.n * p.n) - p.d / (2 * p.vx * p.n ** (2 / r))
    lg = math.log(2 * p.n * p.n) - p.d / (2 * p.vx * p.n ** p.eps)
    return Outcome(residual=lt - lg, tolerance=1e-12 * (1 + abs(lg)), values={"r": r, "log_term_r": lt, "log_target": lg},
                   message="log(third term of delta at r) - log(target term)")


@r317.numeric
def _(p):
    """r = ceil(2/eps): the term is below the target."""
    return _r317_unresolvable(p) or _r317(p, max(2, math.ceil(2 / p.eps)))


r317.property(over=("n", "eps"), max_examples=15)


@r317.falsifier("stated")
def _(p):
    """r = 2 meets '2/r >= eps' but n^{2/r} = n > n^eps: the term exceeds the target."""
    return _r317_unresolvable(p) or _r317(p, 2)


# ===========================================================================
# E15: Remark 3.18, 'C does not depend on m'
r318 = Claim(
    id="sander.remark318_m_dependence",
    title="Remark 3.18: the constant C of Thm 3.7 depends on m through K_1 = sup_{||z|| <= M_Z} ||d_1 f(h, z)||",
    label="Remark 3.18 (with Prop 3.9's K)",
    section="3.B.6",
    equation="(3.18)",
    lines=(2630, 2630),
    statement=r"C\text{ depends only on }\mathcal X,\sigma,n,q;\ \text{not on }m",
    status="gap",
    corrected=r"K_1=\sup_{\|z\|\le M_Z}\|\partial_1f(h,z)\|_2\ge M_Z^2\sigma'(0)/4\ge\tfrac14\|W^{\rm init}\|_F^2\sim\tfrac{qm}4:"
              r"\ C\text{ depends on }m\text{ unless }K\text{ is taken over the }M\text{-neighbourhood of the initialisation}",
    params=[Param.int("q", 16, 1, 512, "hidden dimension q", search=(1, 64)),
            Param.int("m", 32, 1, 4096, "width m", search=(1, 512)),
            Param.float("M", 2.6e-4, 0.0, 10.0, "radius M of Prop 3.9 (Th 3.7: c3/sqrt(nq))"),
            Param.seed("seed of W_init")],
    notes="E15, gap (Thm 3.7 itself is unaffected: C is just not m-free).  M_Z = ||Z_init|| + M with V_init = 0 and "
          "W_init ~ N(0,1)^{m x q} (||W_init||_F ~ sqrt(qm)).  Witness in the ball ||V||_F + ||W||_F <= M_Z: V = (M_Z/2) "
          "u e_1^T, W = (M_Z/2) e_1 v^T and h orthogonal to v, so d_1 f = V diag(tanh'(Wh)) W = (M_Z/2)^2 u v^T, "
          "norm M_Z^2/4 (computed with numpy, rounding 10 eps).  Checked: K_1(m) >= M_Z^2/4 and K_1(4m)/K_1(m) >= 2 "
          "(it is ~4).  Falsifier 'stated': Remark 3.18 read literally, K_1 independent of m (ratio 1 within 10 %).  The catalogue's lower bound "
          "K_1 >= sqrt(qm)/2 = 11.3 (q = 16, m = 32) is weaker than this witness (qm/4 ~ 128).",
    catalogue="sander_part1 §4 E15; §2.7 P3.2",
    covers=("E15",),
)


def _k1(p, m):
    rng = np.random.default_rng(p.seed)
    Winit = rng.standard_normal((m, p.q))
    MZ = float(np.linalg.norm(Winit)) + p.M
    u = rng.standard_normal(p.q); u /= np.linalg.norm(u)
    v = rng.standard_normal(p.q); v /= np.linalg.norm(v)
    V = (MZ / 2) * np.outer(u, np.eye(m)[0])
    W = (MZ / 2) * np.outer(np.eye(m)[0], v)
    h = rng.standard_normal(p.q)
    h -= (h @ v) * v                                           # W h = 0: tanh'(0) = 1
    _, ds = rt.activation(W @ h, "tanh")
    J = V @ (ds[:, None] * W)
    return float(np.linalg.norm(J, 2)), MZ


@r318.numeric
def _(p):
    """K_1 >= M_Z^2/4 (witness) and K_1 grows with m (x4 in m gives >= x2, decided where M <= ||W_init||_F)."""
    k1, MZ = _k1(p, p.m)
    k4, _ = _k1(p, 4 * p.m)
    a = MZ - p.M                     # ||W_init||_F ~ sqrt(qm): what carries the m-dependence of M_Z = ||Z_init|| + M
    if p.M > a:
        # with ||W_init(4m)|| ~ 2a, M_Z^2 grows by ((2a + M)/(a + M))^2, >= 9/4 for M <= a but -> 1 as M/a grows:
        # a radius M above ||W_init|| masks the m-dependence (Thm 3.7's M = c3/sqrt(nq) is small); the x2 test
        # is decided for M <= a only (a sweep found m = 1, q = 44, M = 9.35 > a = 7.7 with ratio 1.91)
        return inconclusive(f"M = {p.M:.3g} exceeds ||W_init||_F = {a:.3g}: the radius masks K_1's growth in m "
                            f"(ratio {k4 / k1:.3f}); the claim's regime is M << sqrt(qm)", K1_m=k1, K1_4m=k4, M_Z=MZ)
    return Outcome.from_parts({"witness = M_Z^2/4": (abs(k1 - MZ ** 2 / 4), 10 * EPS * MZ ** 2),
                               "grows with m": (max(0.0, 2 - k4 / k1), 0.0)},
                              "K_1 lower bound", {"K1_m": k1, "K1_4m": k4, "M_Z": MZ, "ratio": k4 / k1})


r318.property(over=("q", "m", "seed"), max_examples=10)


@r318.falsifier("stated")
def _(p):
    """Remark 3.18 read literally: K_1 (hence C) the same at m and 4m."""
    k1, _ = _k1(p, p.m)
    k4, _ = _k1(p, 4 * p.m)
    return Outcome(residual=abs(k4 / k1 - 1), tolerance=0.1, values={"K1_m": k1, "K1_4m": k4},
                   message="|K_1(4m)/K_1(m) - 1|")


# ===========================================================================
# E17: Lemma 3.23's proof step, and the list of cosmetic typos
typo = Claim(
    id="sander.lemma323_proof_step",
    title="Proof of Lemma 3.23 (l.2702): '2 sqrt(qm) x' should read 2 sqrt(qm x); E17 list of typos",
    label="Lemma 3.23 (proof); E17",
    section="3.C",
    equation="l.2702",
    lines=(2700, 2703),
    statement=r"x=\tfrac{(M_W^2-1)qm}{16}:\ 2\sqrt{qm}\,x=\tfrac12\sqrt{M_W^2-1}\,qm\le\tfrac12(M_W^2-1)qm",
    status="erratum",
    bound=True,
    corrected=r"2\sqrt{qm\,x}=\tfrac12\sqrt{M_W^2-1}\,qm\le\tfrac12(M_W^2-1)qm\ (M_W\ge\sqrt2)",
    params=[Param.float("MW", 2.0, 1.4142135623730951, 10.0, "M_W >= sqrt 2", search=(1.4142135623730951, 5.0)),
            Param.int("qm", 512, 1, 10**7, "q m", search=(1, 10**5))],
    notes="E17.  Laurent-Massart's 2 sqrt(k x) + 2x with k = qm: the printed '2 sqrt(qm) x' neither equals "
          "(1/2) sqrt(M_W^2 - 1) qm nor satisfies the needed inequality for qm > 49 (M_W = 2); the corrected 2 sqrt(qm x) "
          "does (the lemma itself holds: claim sander.gaussian_frobenius_tail).  Other E17 items and where they live: "
          "l.280 JAX citation (sander.intro_backprop notes); l.502 'Proposition 1.2.1', (1.10) shapes (catalogue I7, "
          "recorded here); l.775 220 MiB vs 229.6 MiB (sander.resnet152_memory); l.882 HeunNet theta_0..theta_N "
          "(sander.heun_reconstruction_constant); l.844 theta_0, l.848 psi_init(., 0), l.1406 R vs R^d (recorded here); "
          "l.1832 Lipschitz definition (sander.lipschitz_definition); (3.19)/Prop 3.9 R^d vs R^q, l.1954 p_{k,i} vs "
          "p_{L,i} and Bh_{k,i} vs Bh_{L,i}, l.1970/1998 'PL condition (3.5)', l.2484 layer index 0, l.2506 k in "
          "{1..n}, l.2602 PL-sum index (recorded here, notational); Lemma 3.21's proof (sander.singular_value_lemma "
          "notes); Remark 3.17 (sander.remark317_direction); l.2801 stride 2 (sander.table31_cifar); L10's loose "
          "constants (true).  Symbolic: (2 sqrt(qm x))^2 = (1/4)(M_W^2-1) q^2 m^2 and sqrt(a)/2 <= a/2 for a >= 1.",
    catalogue="sander_part1 §2.8 T3.8; §4 E17",
    covers=("E17",),
)


def _typo(p, printed):
    a = p.MW ** 2 - 1
    x = a * p.qm / 16
    lhs = 2 * math.sqrt(p.qm) * x if printed else 2 * math.sqrt(p.qm * x)
    target = 0.5 * math.sqrt(a) * p.qm
    # the step must give the stated value and the inequality <= (1/2) a qm; rounding 8 eps
    return Outcome.from_parts({"equality": (abs(lhs - target) / target, 8 * EPS),
                               "inequality": (max(0.0, lhs - 0.5 * a * p.qm) / (a * p.qm), 8 * EPS)},
                              "Laurent-Massart step", {"lhs": lhs, "claimed": target, "half_a_qm": 0.5 * a * p.qm,
                                                       "tightness": lhs / (0.5 * a * p.qm)})


@typo.numeric
def _(p):
    """2 sqrt(qm x) = (1/2) sqrt(M_W^2 - 1) qm <= (1/2)(M_W^2 - 1) qm."""
    return _typo(p, False)


typo.property(over=("MW", "qm"), max_examples=20)


@typo.falsifier("stated")
def _(p):
    """The printed 2 sqrt(qm) x at M_W = 2, qm = 512: 2 sqrt(512) 96 = 4345 against the claimed 443."""
    return _typo(p, True)


#: the Laurent-Massart term at x = (M_W^2 - 1) qm / c: (term(k, x), c), corrected, and misprints (mutants)
LM_FORMS = {"corrected": (lambda k, x: 2 * sp.sqrt(k * x), 16),
            "printed_2sqrt_qm_x": (lambda k, x: 2 * sp.sqrt(k) * x, 16),
            "x_over_8": (lambda k, x: 2 * sp.sqrt(k * x), 8)}


def _lm_failures(form):
    """term(k, x) at x = a k / c (a = M_W^2 - 1, k = qm) against sqrt(a) k / 2 (simplify of the difference, positive
    symbols), and sqrt(a) k/2 <= a k/2 for a >= 1: no s = sqrt(a) >= 1 with s^2/2 - s/2 < 0 (inequality solver)."""
    term, cden = LM_FORMS[form]
    a, k = sp.symbols("a k", positive=True)
    r1 = sp.simplify(term(k, a * k / cden) - sp.sqrt(a) * k / 2)
    s = sp.symbols("s", real=True)
    viol = sp.solve_univariate_inequality(s ** 2 / 2 - s / 2 < 0, s, relational=False).intersect(sp.Interval(1, sp.oo))
    return int(r1 != 0) + int(viol != sp.S.EmptySet), r1


@typo.symbolic(timeout=30)
def _(p):
    """(2 sqrt(qm x)) = (1/2) sqrt(M_W^2 - 1) qm at x = (M_W^2-1) qm / 16, and a/2 - sqrt(a)/2 >= 0 for a >= 1."""
    bad, _ = _lm_failures("corrected")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand/factor", "instances": ["Lemma 3.23"],
                                                      "proved": "2 sqrt(qm x) = sqrt(a) qm/2 <= a qm/2"},
                   message="failed identities")


@typo.mutant({"printed_2sqrt_qm_x": "the printed 2 sqrt(qm) x: not (1/2) sqrt(M_W^2 - 1) qm",
              "x_over_8": "x = (M_W^2 - 1) qm / 8: 2 sqrt(qm x) = sqrt(2a) qm / 2"}, timeout=30)
def _(p, variant):
    """The step perturbed, through the same simplification: the difference must not vanish."""
    bad, r1 = _lm_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"difference": str(r1)},
                   message=f"term - sqrt(a) qm/2 = {r1} for {variant}")


typo.tightness(over=("MW", "qm"), max_examples=20)


# ===========================================================================
# E20: the scope of the Sec 3.5.1 experiments
scope = Claim(
    id="sander.experiments_scope",
    title="Sec 3.5.1 experiments lie outside Prop 3.6 / Thm 3.7 (GELU unbounded, q = d = d', A and B frozen)",
    label="Sec 3.5.1 vs Prop 3.6, Thm 3.7",
    section="3.5.1",
    equation="",
    lines=(1775, 1780),
    statement=r"\text{Figs 3.1-3.2 exemplify the large-depth and long-time limits (Thm 3.4, Thm 3.7)}",
    status="heuristic",
    params=[],
    notes="E20, a scope note, not an error of a statement.  Prop 3.6 needs a bounded sigma (M_sigma), q >= d + d' and "
          "the PL sum over A, Z, B; the experiments use GELU (unbounded: gelu(z)/z -> 1), q = d = d' and frozen A = B = I. "
          "Only the finite-time results (Props 3.2/3.3, Thm 3.4, which need C^2 + Lipschitz) apply; the long-time "
          "picture (Fig 3.2) is evidence beyond the theory.  Encoded elsewhere: q < d + d' breaks the trivial-ODE "
          "initialisation (sander.init_trivial_ode, falsifier q_below_d_plus_dp); finite-time claims run GELU "
          "(sander.finite_time_smoothness); the scaled long run is sander.fig32_long_time.  No check of its own: "
          "the note is about which theorem an experiment instantiates.",
    catalogue="sander_part1 §4 E20; §2.9 X3.1, X3.2",
    covers=("E20",),
)


# ===========================================================================
# L7: Lemma 2.6 (compactness of psi_N on [0, 1] x R_+)
l26 = Claim(
    id="sander.lemma26_compactness",
    title="Lemma 2.6: psi_N(s, t) = theta_{ceil(Ns)}(t) is equi-Lipschitz in s uniformly in t, with an integrable time derivative",
    label="Lemma 2.6",
    section="2.3.2, App 2.A.3",
    equation="l.844",
    lines=(842, 848),
    statement=r"(\psi_N)	ext{ has a subsequence converging uniformly on }[0,1]	imes\mathbb R_+	ext{ to a Lipschitz }\psi;"
              r"\ \|\dot	heta_n\|\le\sqrt{2eM\ell_0}e^{-mt/e}",
    status="holds",
    params=[Param.int("N", 4, 2, 32, "smallest depth (N and 2N are trained)", search=(2, 6)),
            Param.seed("seed of psi_init and B"),
            Param.float("T", 12.0, 0.1, 100.0, "time horizon")],
    notes="Checked through the two hypotheses of the Arzela-Ascoli argument (the limit itself is sander.linear_depth_limit): "
          "(a) equi-Lipschitz in s uniformly in t: c(N) = sup_t N max_n ||theta_{n+1} - theta_n||_op is N-independent "
          "(|c(2N)/c(N) - 1| <= 0.1, catalogue rate model); (b) integrable derivative, with the constants of the true "
          "gradient (E2): ||theta_n'(t)||_F = N||nabla_n||_F <= sqrt(b M l0) e^{-a m t/2}, a = 4(1 - 1/2N)^{2N-2}, "
          "b = 4(1 + 1/2N)^{2N-2} (PL bounds of sander.linear_pl_bounds; l' = -N sum ||nabla_n||^2 <= -a m l), whose "
          "integral 2 sqrt(b M l0)/(a m) is N-uniform.  The printed sqrt(2eM l0) e^{-mt/e} has the l.992 constants "
          "(E2); it is not asserted.  Instance: catalogue L8 (d = 3, Sigma = diag(1, .8, .6), inside the corrected "
          "Assumption 2.3); inconclusive if some ||theta_n(t)||_op > 1/2 (outside the PL region).  DOP853 at rtol 1e-9: "
          "the bound is checked as max_t (||theta'|| - bound_t) <= 1e-6 x bound_0 (absolute solver error; the ratio "
          "form refuted draws with T = 49..71 where the bound decays below the solver's resolution, audit issue 21).  Falsifier: i.i.d. initial weights (no Lipschitz limit, "
          "c(N) grows like N).",
    catalogue="sander_part1 §2.2 L7; §4 E2",
    covers=("L7",),
)


def _l26_run(p, N, init="smooth"):
    rng = np.random.default_rng(p.seed)
    Sig = np.diag([1.0, 0.8, 0.6])
    psi = _psi_init(3, rng)
    D = rng.standard_normal((3, 3))
    if init == "smooth":
        th0 = np.array([psi(n / N) for n in range(1, N + 1)])
    else:
        r2 = np.random.default_rng(p.seed + 7919 * N)
        th0 = np.array([psi(r2.uniform()) for _ in range(N)])
    ref = np.array([psi(n / 1024) for n in range(1, 1025)])
    l_target = (0.9 * _thr_corrected(0.6, 1.0)) ** 2
    B = prods(ref)[0] - D * math.sqrt(l_target / float(np.trace(D @ Sig @ D.T)))
    ts = np.linspace(0, p.T, 121)
    _, ths = _flow(th0, Sig, B, p.T, rtol=1e-9, t_eval=ts)
    m, M = 0.6, 1.0
    a, b = 4 * (1 - 1 / (2 * N)) ** (2 * N - 2), 4 * (1 + 1 / (2 * N)) ** (2 * N - 2)
    l0 = loss(th0, Sig, B)
    ratio, maxop, c, excess = 0.0, 0.0, 0.0, 0.0
    for k, t in enumerate(ts):
        th = ths[k]
        v = N * np.linalg.norm(grad(th, Sig, B), axis=(1, 2))
        bound_t = math.sqrt(b * M * l0) * math.exp(-a * m * t / 2)
        ratio = max(ratio, float(np.max(v)) / bound_t)
        excess = max(excess, float(np.max(v)) - bound_t)
        maxop = max(maxop, max(opn(x) for x in th))
        c = max(c, N * max(opn(th[n + 1] - th[n]) for n in range(N - 1)))
    # error model: DOP853 at rtol 1e-9 leaves an ABSOLUTE error ~ 1e-9 x scale on theta and so on N grad (Lipschitz,
    # O(1) constants in the PL region); at large t the bound decays below it (e^{-a m t/2} ~ 1e-12 at t = 60), so the
    # comparison is v - bound_t <= 1e-6 sqrt(b M l0) (1e3 safety), not a ratio (audit issue 21: T = 49..71 refuted)
    return ratio, maxop, c, excess, math.sqrt(b * M * l0)


def _l26(p, init="smooth"):
    r1, op1, c1, x1, s1 = _l26_run(p, p.N, init)
    r2, op2, c2, x2, s2 = _l26_run(p, 2 * p.N, init)
    if max(op1, op2) > 0.5:
        return inconclusive("some ||theta_n(t)||_op > 1/2: outside the PL region of Prop 2.4", max_op=max(op1, op2))
    return Outcome.from_parts({"equi-Lipschitz in s": (abs(c2 / c1 - 1), 0.1),
                               "integrable derivative bound": (max(0.0, x1 / s1, x2 / s2), 1e-6)},
                              "Lemma 2.6 hypotheses", {"c_N": c1, "c_2N": c2, "bound_ratio_N": r1, "bound_ratio_2N": r2,
                                                      "max_op": max(op1, op2)})


@l26.numeric
def _(p):
    """N-uniform Lipschitz constant in s and the integrable bound on ||theta_n'(t)||."""
    return _l26(p)


# the hypothesis-breaking initialisation is the falsifier's, not a parameter (a sweep drew init = 'iid' for half of
# its draws, all inconclusive: audit issue 21)
@l26.falsifier("iid_initialisation")
def _(p):
    """i.i.d. theta_n(0) = psi_init(U_n): N max ||theta_{n+1} - theta_n|| doubles with N (no Lipschitz limit)."""
    return _l26(p, init="iid")
