"""Chapter 2, Sec 2.3.2 "Linear Case", the large-depth limit (Th 2.5, Lemmas 2.6-2.7, seed l.833-852) and
App 2.A.3-2.A.5 (proofs of Lemma 2.6, Lemma 2.7 and Th 2.5, l.1036-1315): trained linear ResNets of depths N and
2N stay O(1/N) apart (``sander.linear_depth_limit``), Lemma 2.6's equi-Lipschitz bound (l.842-848;
``sander.lemma26_compactness``), the merged-weights defect in Lemma 2.7's proof (E18, l.1122-1140: the merged
weights theta~_n do not follow -N nabla~ exactly, an O(sqrt(l)/N) defect; ``sander.lemma27_merged_weights_defect``),
Lemma 2.13 (l.1222-1240; ``sander.linear_euler_lemma_2_13``) and the limit PDE of Th 2.5's proof (l.1266-1290;
``sander.linear_limit_pde``).

Catalogue sander_part1 §2.2 (L7-L12), §3.2 R2, §4 E6, E18.  Notation (harness H2, ``psi_N(s, t) =
theta_{max(1, ceil(Ns))}(t)``, the true gradient): see :mod:`theorems.sander._resnet_harness`.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import expm

from solvers import xp_sander1 as xk
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._resnet_harness import _flow, _h2_instance, _psi_init, _spd, _thr_corrected, grad, loss, opn, prods


EPS = float(np.finfo(float).eps)


# ===========================================================================
# L7, L8, L9, L12: Lemma 2.7, Lemma 2.6, Theorem 2.5
limit = Claim(
    id="sander.linear_depth_limit",
    title="Trained linear ResNets of depths N and 2N stay O(1/N) apart uniformly in time (a Lipschitz limit psi(s, t))",
    label="Lemma 2.7, Lemma 2.6, Th 2.5",
    section="2.3.2, App 2.A.3-2.A.5",
    equation="",
    lines=(840, 852),
    statement=r"\|\theta^N_n(0)-\theta^{2N}_{2n}(0)\|=O(\tfrac1N)\Rightarrow\sup_t\|\theta^N_n(t)-\theta^{2N}_{2n}(t)\|=O(\tfrac1N);"
              r"\ \|\psi-\psi_N\|_\infty=O(\tfrac1N)",
    status="holds",
    params=[Param.int("N", 4, 2, 16, "smallest depth (nets N, 2N, 4N are trained)", search=(2, 6)),
            Param.seed("seed of psi_init and B"),
            Param.float("T", 12.0, 0.1, 100.0, "training time horizon (sup over [0, T])")],
    notes="Catalogue setup: d = 3, Sigma = diag(1, .8, .6), smooth psi_init with max ||.||_op = 1/4, theta^N_n(0) = "
          "psi_init(n/N), sqrt(l0) = 0.9 x corrected threshold (inside Assumption 2.3 as corrected, E1). Checked: "
          "c(N) = N sup_t max_n ||theta^N_n - theta^2N_2n||_op is N-independent: |c(2N)/c(N) - 1| <= 0.1 (catalogue L8(c)); "
          "the sup is over 241 common times. Lemma 2.6 (existence, Arzela-Ascoli) and Th 2.5 follow from it (a Cauchy "
          "sequence at rate 1/N); E18 (the proof's theta~_n does not follow -N nabla~ exactly, an extra integrable "
          "O(sqrt(l)/N) term) does not change the conclusion. Catalogue numbers (0.0912-0.0915; Richardson 0.488-0.498) "
          "are for its unrecorded psi_init and B: the rates, not the constants, are compared.",
    catalogue="sander_part1 §2.2 L7, L8, L9, L12; §4 E18; §3.2 R2",
    covers=("L7", "L8", "L9", "L12", "E18"),
)


def _limit_setup(seed):
    rng = np.random.default_rng(seed)
    Sig = np.diag([1.0, 0.8, 0.6])
    psi = _psi_init(3, rng)
    D = rng.standard_normal((3, 3))
    return Sig, psi, D


def _train(N, seed, T, shift=0.0, ts=None):
    Sig, psi, D = _limit_setup(seed)
    th0 = np.array([psi(n / N) + shift * np.eye(3) for n in range(1, N + 1)])
    # B fixed from the N -> infinity init (psi_init's flow map, via a deep product) so all depths share it
    ref = np.array([psi(n / 1024) for n in range(1, 1025)])
    Pi_ref = prods(ref)[0]
    l_target = (0.9 * _thr_corrected(0.6, 1.0)) ** 2
    B = Pi_ref - D * math.sqrt(l_target / float(np.trace(D @ Sig @ D.T)))
    return _flow(th0, Sig, B, T, rtol=1e-9, t_eval=ts)[1]


def _c(N, p, ts, shift_deep):
    a = _train(N, p.seed, p.T, ts=ts)
    b = _train(2 * N, p.seed, p.T, shift=shift_deep, ts=ts)
    return N * max(opn(a[k, n] - b[k, 2 * n + 1]) for k in range(len(ts)) for n in range(N))


def _limit_outcome(p, shift=0.0):
    ts = np.linspace(0, p.T, 241)
    c1 = _c(p.N, p, ts, shift)
    c2 = _c(2 * p.N, p, ts, shift)
    ratio = c2 / c1 if c1 > 0 else math.inf
    return Outcome(residual=abs(ratio - 1), tolerance=0.1, values={"c_N": c1, "c_2N": c2, "ratio": ratio},
                   message=f"N sup_t max_n ||theta^N_n - theta^2N_2n||: {c1:.5f} (N={p.N}), {c2:.5f} (N={2 * p.N})")


@limit.numeric
def _(p):
    """c(N) = N sup_t max_n ||theta^N_n(t) - theta^{2N}_{2n}(t)||_op is the same at N and 2N (to 10%)."""
    return _limit_outcome(p)


# the unmatched shift is the falsifier's own (a swept 'shift' parameter was 20/20 inconclusive: audit issue 21)
@limit.falsifier("unmatched_initialisation")
def _(p):
    """Smooth but unmatched inits (theta^{2N}(0) shifted by 0.05 I, catalogue L8(d)): c(N) doubles with N."""
    return _limit_outcome(p, shift=0.05)


# ===========================================================================
# L11, E6: the limit dynamics of the proof of Th 2.5
pde = Claim(
    id="sander.linear_limit_pde",
    title="Limit dynamics: d_t psi(s,t) = -2 R(1,s)^T (R(1,0) - B) Sigma R(s,0)^T, psi(s,0) = psi_init(s)",
    label="Proof of Th 2.5",
    section="App 2.A.5",
    equation="(2.11), l.1270-1286",
    lines=(1266, 1290),
    statement=r"\partial_t\psi=-\Pi_{:s}^\top(\Pi-B)\Pi_{s:}^\top,\ \psi(\cdot,0)=0_{d\times d},\ \Pi_{:s}=\text{solution at time }s,\ "
              r"\Pi_{s:}=\text{solution at time }1-s",
    corrected=r"\partial_t\psi(s,t)=-2R_t(1,s)^\top(R_t(1,0)-B)\Sigma R_t(s,0)^\top,\ \psi(s,0)=\psi_{\rm init}(s),\ "
              r"R_t(s_2,s_1)\text{ the flow of }\dot x=\psi(s,t)x",
    status="erratum",
    params=[Param.int("N", 16, 4, 256, "depth (the check also runs 2N; N >= 4: at N = 2 the 1/N law is "
                      "pre-asymptotic, a sweep draw with 2N e(2N) = 1.36 N e(N) was refuted, audit issue 21)",
                      search=(4, 64)),
            Param.int("d", 3, 1, 4, "dimension", search=(1, 3)),
            Param.seed("seed")],
    notes="E6: l.1270 omits Sigma; (2.11) starts from 0 instead of psi_init (l.848 writes psi_init(., 0), an extra "
          "argument); l.1276 describes Pi_{:s} as the solution at time s and Pi_{s:} at time 1-s, whereas Pi_{:s} = "
          "R(1, s) (layers after s) and Pi_{s:} = R(s, 0). Tested on the right-hand side at t = 0 (any t works, the "
          "field is the same map): max_n ||N nabla_n - F(n/N)||_F must decay like 1/N (2N err(2N) <= 1.25 N err(N)). "
          "R by a 4096-step exponential-midpoint rule (error ~1e-7). 'stated' is the printed field in the l.992 "
          "convention (no 2), compared with N nabla_n^{l.992}.",
    catalogue="sander_part1 §2.2 L10, L11; §4 E6",
    covers=("L11", "E6"),
)


def _flowmaps(psi, d, K=4096):
    """R(s_k, 0) and R(1, s_k) on the grid s_k = k/K (exponential midpoint rule)."""
    steps = [expm(psi((k + 0.5) / K) / K) for k in range(K)]
    fwd = [np.eye(d)]
    for S in steps:
        fwd.append(S @ fwd[-1])
    bwd = [np.eye(d)] * (K + 1)
    acc = np.eye(d)
    for k in range(K - 1, -1, -1):
        acc = acc @ steps[k]
        bwd[k] = acc
    return fwd, bwd, K


def _pde_err(p, N, printed, maps):
    rng = np.random.default_rng(p.seed)
    Sig, _ = _spd(p.d, 0.5, 1.2, rng)
    psi = _psi_init(p.d, rng)
    B = rng.standard_normal((p.d, p.d))
    fwd, bwd, K = maps(psi)          # flow maps by scipy expm: CPU (host), moved to xp once
    th = np.array([psi(n / N) for n in range(1, N + 1)])
    # array API (NumPy, array-api-strict, CuPy): the discrete field and the limit field at every s = n/N stacked
    xp = xp_of(p)
    T = xp.matrix_transpose
    ks = [round(n / N * K) for n in range(1, N + 1)]
    th, Sig, B = on(xp, th, Sig, B)
    g = N * xk.lin_grad(xp, th, Sig, B, "appendix" if printed else "true")
    R10 = on(xp, fwd[K])
    if printed:   # Pi_{:s} = 'solution at time s', Pi_{s:} = 'at time 1-s', no Sigma
        F = -T(on(xp, np.array([fwd[k] for k in ks]))) @ (R10 - B) @ T(on(xp, np.array([fwd[K - k] for k in ks])))
    else:
        F = -2 * T(on(xp, np.array([bwd[k] for k in ks]))) @ (R10 - B) @ Sig @ T(on(xp, np.array([fwd[k] for k in ks])))
    return float(xp.max(xp.linalg.matrix_norm(-g - F)))


def _pde_outcome(p, printed):
    cache = {}

    def maps(psi):
        if "m" not in cache:
            cache["m"] = _flowmaps(psi, p.d)
        return cache["m"]
    e1 = _pde_err(p, p.N, printed, maps)
    e2 = _pde_err(p, 2 * p.N, printed, maps)
    # claimed_value: N err(N), what a 1/N rate predicts for 2N err(2N) (the strength report measures a falsifier's
    # margin from it: the printed field's gap does not shrink, 2N err(2N) = 2 N err(N))
    return Outcome(residual=2 * p.N * e2, tolerance=1.25 * p.N * e1 + 1e-5 * 2 * p.N, values={
        "err_N": e1, "err_2N": e2, "N_err_N": p.N * e1, "2N_err_2N": 2 * p.N * e2,
        "claimed_value": p.N * e1 + 1e-5 * 2 * p.N},
        message=f"max_n ||N nabla_n + F(n/N)||: {e1:.4e} (N={p.N}), {e2:.4e} (N={2 * p.N}) "
                f"({'printed' if printed else 'corrected'} field)")


@pde.numeric(backends=("numpy", "cupy"))
def _(p):
    """The discrete field -N nabla_n converges at rate 1/N to the corrected limit field at s = n/N."""
    return _pde_outcome(p, printed=False)


pde.property(over=("N", "d", "seed"), max_examples=5)


@pde.falsifier("stated", backends=("numpy", "cupy"))
def _(p):
    """Printed field (no Sigma, Pi_{:s} = R(s,0), Pi_{s:} = R(1-s,0)): the gap to the discrete field does not vanish."""
    return _pde_outcome(p, printed=True)


# ===========================================================================
# L10: Lemma 2.13 (Prop 2.2 for x' = psi(s) x)
l213 = Claim(
    id="sander.linear_euler_lemma_2_13",
    title="Euler scheme of x' = psi(s) x, ||psi|| <= 1/2, |x0| = 1: error <= (e^{1/2}-1)/N ||(d_s psi + psi^2) x||_inf",
    label="Lemma 2.13 (proof of Th 2.5)",
    section="App 2.A.5",
    equation="l.1236",
    lines=(1222, 1240),
    statement=r"\|x(\tfrac n{N})-y_n\|\le\frac{e^{1/2}-1}{N}\|\partial_s\psi+\psi^2\|_\infty^{K\times[0,1]}",
    status="holds",
    bound=True,
    params=[Param.int("N", 32, 1, 4096, "Euler steps", search=(1, 256)),
            Param.int("d", 3, 1, 5, "dimension", search=(1, 4)),
            Param.seed("seed of psi and x0"),
            Param.choice("family", "smooth", ("smooth", "constant"), "smooth psi (max ||.||_op = 1/2) or psi = I/2")],
    notes="This is Prop 2.2 with L = 1/2 ((e^{1/2}-1)/(2N L) = (e^{1/2}-1)/N, D7). The norm must be read as in the "
          "thesis's notation section, ||g||_inf^K = sup_{x in K} ||g(x)|| for g(x) = (d_s psi + psi^2) x, i.e. it "
          "includes ||x(s)|| <= e^{1/2}; we evaluate it along the trajectory (all the proof of Prop 2.2 uses). Reading "
          "it as the operator norm sup_s ||d_s psi + psi^2||_op is false: psi = I/2 gives error ~ e^{1/2}/(8N) = "
          "0.206/N > (e^{1/2}-1)/(4N) = 0.162/N (falsifier; not in the catalogue). Also: ||psi^2|| <= 1/4 (the text "
          "writes 1/2, true but loose); psi_sigma is only Lipschitz in s (E19, ess-sup). Reference by DOP853, rtol 1e-12.",
    catalogue="sander_part1 §2.2 L10; §3.1 D7; §4 E19",
    covers=("L10", "D7"),
)


def _l213(p):
    d = p.d
    if p.family == "constant":
        def psi(s):
            return 0.5 * np.eye(d)

        def dpsi(s):
            return np.zeros((d, d))
        x0 = np.ones(d) / math.sqrt(d)
    else:
        rng = np.random.default_rng(p.seed)
        A0, A1, A2 = rng.standard_normal((3, d, d))
        sg = np.linspace(0, 1, 1025)
        lip = math.pi * opn(A1) + 2 * opn(A2)
        c = 0.5 / (max(opn(A0 + math.cos(math.pi * s) * A1 + s * s * A2) for s in sg) + lip / 2048)

        def psi(s):
            return c * (A0 + math.cos(math.pi * s) * A1 + s * s * A2)

        def dpsi(s):
            return c * (-math.pi * math.sin(math.pi * s) * A1 + 2 * s * A2)
        x0 = rng.standard_normal(d)
        x0 /= np.linalg.norm(x0)
    N = p.N
    # array API (NumPy, array-api-strict, CuPy): the Euler recursion is an xp array update (psi(n/N) sampled on the
    # host and moved once); the DOP853 reference is scipy (CPU), its values moved to xp; the K-sup and the operator
    # norms of d_s psi + psi^2 over the 2001-point grid are stacked xp computations
    xp = xp_of(p)
    Ps = on(xp, np.array([psi(n / N) for n in range(N)]))
    y = [on(xp, x0)]
    for n in range(N):
        y.append(y[-1] + xk.mv(xp, Ps[n, ...], y[-1]) / N)
    y = xp.stack(y)
    sol = solve_ivp(lambda s, x: psi(s) @ x, (0, 1), x0, method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True)
    X = on(xp, sol.sol(np.arange(N + 1) / N).T)
    err = float(xp.max(xp.linalg.vector_norm(y - X, axis=1)))
    sg = np.linspace(0, 1, 2001)
    P, D = on(xp, np.array([psi(s) for s in sg]), np.array([dpsi(s) for s in sg]))
    G = D + P @ P
    xg = on(xp, sol.sol(sg).T)
    traj = xp.linalg.vector_norm(xk.mv(xp, G, xg), axis=1)
    op = xk.opnorm(xp, G)
    # grid sup + (ds/2) x Lipschitz estimate (x1.5), as in sander.euler_error_bound
    corr = lambda v: float(xp.max(v)) + 0.5 / 2000 * 1.5 * float(xp.max(xp.abs(v[1:] - v[:-1]))) * 2000
    C_traj, C_op = corr(traj), corr(op)
    k = (math.exp(0.5) - 1) / N
    tol = 4 * N * (d + 2) * EPS * math.exp(0.5) + 1e-10      # Euler rounding + DOP853 reference
    return err, k * C_traj, k * C_op, tol


@l213.numeric(backends=("numpy", "cupy"))
def _(p):
    """Euler error against (e^{1/2}-1)/N sup_s ||(d_s psi + psi^2) x(s)|| (the notation section's K-sup)."""
    err, b, bop, tol = _l213(p)
    return Outcome(residual=max(err - b, 0.0), tolerance=tol, values={"error": err, "bound": b, "bound_operator_norm": bop,
                                                                       "N_error": p.N * err, "tightness": err / b if b else math.inf},
                   message=f"max_n ||x(n/N) - y_n|| = {err:.4e} <= {b:.4e}")


l213.property(over=("N", "d", "seed", "family"), max_examples=12)


@l213.falsifier("operator_norm_reading", fixed={"family": "constant", "N": 32}, backends=("numpy", "cupy"))
def _(p):
    """||d_s psi + psi^2|| read as sup_s of the operator norm: psi = I/2 gives 0.206/N > 0.162/N."""
    err, b, bop, tol = _l213(p)
    return Outcome(residual=max(err - bop, 0.0), tolerance=tol, values={"error": err, "bound_operator_norm": bop,
                                                                         "N_error": p.N * err, "N_bound": p.N * bop},
                   message=f"error {err:.5e} vs (e^(1/2)-1)/N sup||d_s psi + psi^2||_op = {bop:.5e}")


l213.tightness(over=("N", "d", "seed", "family"), max_examples=30, approached=False,
               finding="bound not approached, best ratio 0.77 (family 'constant', N = 3167, d = 5) over the declared "
                       "range: the Groenwall constant e^{1/2} - 1 with the K-sup of ||(d_s psi + psi^2) x|| leaves a "
                       "gap even for constant psi, where the Euler error is ~ e^{1/2}/(8N) ||psi^2 x0||.")


@limit.reproduction(name="richardson_rate", slow=True)
def _(p):
    """Th 2.5 / Fig 2.2 at CPU scale: sup_{s,t} ||psi_N - psi_ref||_op over t in [0, 12] for N = 8..64 against N_ref = 256
    fits c (1/N - 1/N_ref) with c stable to 10% (catalogue L9: c = 0.488-0.498 for its own psi_init); the L2-in-s
    metric of Fig 2.2 is reported too (catalogue L12 quotes 3.36e-2 ... for its instance)."""
    ts = np.linspace(0, 12.0, 121)
    Nref = 256
    ref = _train(Nref, 0, 12.0, ts=ts)
    Ns = [8, 16, 32, 64]
    sup, l2, cs = [], [], []
    for N in Ns:
        a = _train(N, 0, 12.0, ts=ts)
        # psi_N(s) = theta_{ceil(N s)}: on the reference grid j = 1..Nref, layer ceil(j N / Nref)
        idx = [math.ceil(j * N / Nref) - 1 for j in range(1, Nref + 1)]
        diff = [[a[k, idx[j]] - ref[k, j] for j in range(Nref)] for k in range(len(ts))]
        sup.append(max(opn(D) for row in diff for D in row))
        l2.append(max(math.sqrt(sum(float(np.sum(D * D)) for D in row) / Nref) for row in diff))
        cs.append(sup[-1] / (1 / N - 1 / Nref))
    spread = (max(cs) - min(cs)) / np.mean(cs)
    return Outcome(residual=spread, tolerance=0.1, values={"N": Ns, "sup_err": sup, "L2_err": l2, "richardson_c": cs,
                   "plot": {"kind": "loglog", "x": [float(n) for n in Ns], "series": {"sup_(s,t) |psi_N - psi_ref|": sup,
                            "max_t L2_s error": l2}, "xlabel": "depth N", "ylabel": "distance to N = 256",
                            "title": "linear ResNet: trained weights converge to psi(s, t) at rate 1/N"}},
                   message=f"Richardson constants {[round(c, 4) for c in cs]} (spread {spread:.3f})")


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
          "theta~) is not zero; r(N) = N max_n ||R_n||_op / sqrt(l) converges as N doubles (|r(2N)/r(N) - 1| <= max(0.1, 1/N), "
          "the O(1/N) approach of a rate; default instance: 0.1715 at N = 16, "
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
    # rate model as in Lemma 2.6: r(N) = r(1 - kappa/N), |r(2N)/r(N) - 1| ~ kappa/(2N); tolerance max(0.1, 1/N)
    # (audit issue 21: the flat 0.1 refuted N = 2 draws with 0.165 and 0.245, seed 777001)
    return Outcome.from_parts({"R = O(sqrt(l)/N)": (abs(r2 / r1 - 1), max(0.1, 1.0 / p.N)),
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
# L7: Lemma 2.6 (compactness of psi_N on [0, 1] x R_+)
l26 = Claim(
    id="sander.lemma26_compactness",
    title="Lemma 2.6: psi_N(s, t) = theta_{floor(Ns)}(t) (l.844; ceil keeps the index in 1..N) is equi-Lipschitz in s uniformly in t, with an integrable time derivative",
    label="Lemma 2.6",
    section="2.3.2, App 2.A.3",
    equation="l.844",
    lines=(844, 844),
    statement=r"\psi_N(s,t)=\theta^N_{\lfloor Ns\rfloor}(t):\ (\psi_N)\text{ has a subsequence converging uniformly on }[0,1]\times\mathbb R_+\text{ to a }\psi\text{ Lipschitz in }s\text{ and }t;"
              r"\ \text{via }\|\dot\theta_n\|_F\le\sqrt{bM\ell_0}\,e^{-amt/2}\ (a,b\text{ of the true gradient; the printed }"
              r"\sqrt{2eM\ell_0}e^{-mt/e}\text{, l.1016/l.1110, has the l.992 constants, E2})",
    status="holds", bound=True,
    params=[Param.int("N", 4, 2, 32, "smallest depth (N and 2N are trained)", search=(2, 6)),
            Param.seed("seed of psi_init and B"),
            Param.float("T", 12.0, 0.1, 100.0, "time horizon")],
    notes="Checked through the two hypotheses of the Arzela-Ascoli argument (the limit itself is sander.linear_depth_limit): "
          "(a) equi-Lipschitz in s uniformly in t: c(N) = sup_t N max_n ||theta_{n+1} - theta_n||_op is N-independent "
          "(|c(2N)/c(N) - 1| <= max(0.1, 1/N), rate model c(N) = c(1 - kappa/N)); (b) integrable derivative, with the constants of the true "
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
        if bound_t >= 1e-3 * math.sqrt(b * M * l0):
            # the ratio (tightness) only where the bound is >= 1e3 x the solver's absolute error (~1e-9 scale)
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
    # rate model: the discrete Lipschitz constant N max ||theta_{n+1} - theta_n|| of a Lipschitz profile approaches its
    # limit as c(1 - kappa/N), so |c(2N)/c(N) - 1| ~ kappa/(2N); tolerance max(0.1, 1/N) (kappa <= 2: the sweep's
    # worst, N = 2, gave 0.44 -- audit issue 21: the flat 0.1 refuted N = 2 draws); the i.i.d. init doubles (~1)
    return Outcome.from_parts({"equi-Lipschitz in s": (abs(c2 / c1 - 1), max(0.1, 1.0 / p.N)),
                               "integrable derivative bound": (max(0.0, x1 / s1, x2 / s2), 1e-6)},
                              "Lemma 2.6 hypotheses", {"c_N": c1, "c_2N": c2, "bound_ratio_N": r1, "bound_ratio_2N": r2,
                                                      "max_op": max(op1, op2), "tightness": max(r1, r2)})


@l26.numeric
def _(p):
    """N-uniform Lipschitz constant in s and the integrable bound on ||theta_n'(t)||."""
    return _l26(p)


# the hypothesis-breaking initialisation is the falsifier's, not a parameter (a sweep drew init = 'iid' for half of
# its draws, all inconclusive: audit issue 21)
# the PL constants a, b of the bound are not attained by the flow of this instance; the search reports how close
l26.tightness(over=("N", "seed", "T"), max_examples=8, approached=False, finding=("best ratio ||theta_n'(t)|| / (sqrt(b M l0) e^{-a m t/2}) = 0.82 at N = 2, t = 0 (0.78-0.82 over 15 "
                       "seeds at N = 2, 0.62 at N = 8); the PL constant b = 4(1 + 1/2N)^{2N-2} is not attained (audit issue 21)"),
              witnesses=[{"N": 2, "seed": 1}])


@l26.falsifier("iid_initialisation")
def _(p):
    """i.i.d. theta_n(0) = psi_init(U_n): N max ||theta_{n+1} - theta_n|| doubles with N (no Lipschitz limit)."""
    return _l26(p, init="iid")
