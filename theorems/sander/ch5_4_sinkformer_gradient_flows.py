"""§5.4 Attention and gradient flows (seed l.3686-3729; proofs §5.A.2-5.A.3, l.3856-3929): the kernel
normalisation k = nK (l.3694, erratum E5.4) and the Wasserstein-gradient dichotomy: Sinkhorn and symmetric
kernels are Wasserstein gradients (Prop 5.3, l.3718-3722), SoftMax is not (Prop 5.4, l.3722-3726).
Claims: ``sander.sinkformer_kernel_normalisation``, ``sander.sinkformer_wasserstein_gradient``,
``sander.softmax_not_gradient``.

Conventions (chapter 5): ``theorems.sander._attention``.
"""
from __future__ import annotations

import math

import numpy as np

from solvers import sinkhorn as sk
from solvers import xp_sander2 as X
from solvers.xp import asnumpy, namespace, on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.sander._attention import _inv_tol_xp

EPS = float(np.finfo(float).eps)


def _draw_particles(n, d, seed, scale, assumption=True):
    """Particles x_i ~ N(0, I_d) and W_Q = W_K = W (Assumption 5.2 with W_V = -W^T W), W scaled so that
    max |C_ij| = scale; ``assumption=False`` draws an independent W_V instead (Assumption 5.2 broken)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((d, d))
    C = sk.cost_matrix(X, W, W)
    W = W * math.sqrt(scale / max(np.max(np.abs(C)), 1e-300))
    WV = -W.T @ W if assumption else rng.standard_normal((d, d)) * float(np.linalg.norm(W.T @ W, 2))
    return X, W, W.copy(), WV


# ===========================================================================
# N5.1 / E5.4  kernel normalisation
normalisation = Claim(
    id="sander.sinkformer_kernel_normalisation",
    title="On an empirical measure the continuous kernels are n times the attention matrices",
    label="l.3694",
    section="5.4",
    equation="(5.5)",
    lines=(3694, 3694),
    statement=r"\mu=\tfrac1n\sum_i\delta_{x_i}\ \Rightarrow\ k^1(x_i,x_j)=K^1_{ij},\ k^\infty(x_i,x_j)=K^\infty_{ij}",
    status="erratum",
    corrected=r"k^1(x_i,x_j)=nK^1_{ij},\quad k^\infty(x_i,x_j)=nK^\infty_{ij}",
    params=[
        Param.int("n", 7, 2, 100, "number of particles", search=(2, 12)),
        Param.int("d", 3, 1, 8, "dimension"),
        Param.seed("seed"),
        Param.float("scale", 2.0, 0.0, 8.0, "max |C_ij|"),
    ],
    notes="E5.4: the iteration (5.5) normalises against mu (int k dmu = 1), so on mu_n the kernels are n K; only "
          "then T_mu (l.3708) equals (5.1)/(5.4). The proof at l.3888 misses the same factor 1/n.",
    catalogue="sander_part23 §2.2 N5.1; §4 E5.4; §6 A3",
    covers=("N5.1", "E5.4"),
)


def _kernels_continuous(X, W):
    """k^1 and k^inf by (5.5) against mu_n: normalisations with weights 1/n."""
    n = X.shape[0]
    C = sk.cost_matrix(X, W, W)
    k0 = np.exp(C)
    k1 = k0 / (k0.mean(1, keepdims=True))
    r = sk.sinkhorn(C, np.full(n, -math.log(n)), tol=1e-14)
    return C, k1, r.K, r


@normalisation.numeric(backends=("numpy", "cupy"))
def _(p):
    """k^1 = n K^1 and k^inf = n K^inf, where k is iterated by (5.5) against mu_n."""
    xp = xp_of(p)
    Xp, W, _, _ = _draw_particles(p.n, p.d, p.seed, p.scale)
    Xx, Wx = on(xp, Xp, W)
    C = (Xx @ xp.matrix_transpose(Wx)) @ xp.matrix_transpose(Xx @ xp.matrix_transpose(Wx))
    k0 = xp.exp(C)
    k1 = k0 / xp.mean(k0, axis=1, keepdims=True)                      # (5.5) against mu_n: weights 1/n
    kinf, _, _, _, e1, _ = X.sinkhorn_log(C, on(xp, np.full(p.n, -math.log(p.n))), tol=1e-14)
    K, _, _, _, e2, _ = X.sinkhorn_log(C, tol=1e-14)
    S1 = X.softmax_rows(C)
    return Outcome.from_parts({
        "k1": (float(xp.max(xp.abs(k1 - p.n * S1))), 8 * p.n * EPS * float(xp.max(k1))),
        # |k^inf - n K^inf| = n |k^inf/n - K^inf|, both doubly stochastic up to their marginal errors: the perturbation
        # bound of _inv_tol_xp with the spectral gap of the doubly stochastic K^inf.  (AUDIT: it was evaluated on
        # k^inf = n K^inf itself, whose second singular value is n sigma_2 > 1, so the gap 1 - sigma_2 went negative,
        # was floored at 1e-300 and the tolerance was ~1e288: the part could not fail.)
        "kinf": (float(xp.max(xp.abs(kinf - p.n * K))), p.n * _inv_tol_xp(K, e1, e2, p.n)),
    }, f"k = n K on mu_n ({p.backend})", values={"ratio_k1_over_K1": float(np.median(asnumpy(k1 / S1)))})


normalisation.property(over=("n", "seed"), max_examples=10)


@normalisation.falsifier("stated")
def _(p):
    """As printed, k^inf(x_i, x_j) = K^inf_ij: then int k^inf(x_i, .) dmu = 1/n, not 1 (ratio n)."""
    X, W, _, _ = _draw_particles(p.n, p.d, p.seed, p.scale)
    C = sk.cost_matrix(X, W, W)
    K = sk.sinkhorn(C, tol=1e-14).K
    integral = K.mean(1)
    return Outcome(residual=float(np.max(np.abs(integral - 1))), tolerance=1e-12,
                   values={"integral_of_K_against_mu": integral.tolist(), "ratio": float(1 / integral.mean())},
                   message="max_i |int K(x_i, .) dmu_n - 1|")


# ===========================================================================
# P5.3  Wasserstein gradients
wgrad = Claim(
    id="sander.sinkformer_wasserstein_gradient",
    title="Under Assumption 5.2, T^0 and T^inf are Wasserstein gradient fields of F^0 and F^inf",
    label="Prop 5.3",
    section="5.4",
    equation="(5.10)-(5.12)",
    lines=(3718, 3722),
    statement=r"T^0_\mu=-\nabla_W\mathcal F^0(\mu),\ T^1_\mu=-\nabla\log\!\int k^0(\cdot,x')d\mu(x'),\ "
              r"T^\infty_\mu=-\nabla_W\mathcal F^\infty(\mu),\ \mathcal F^0=\tfrac12\!\int k^0d\mu\otimes\mu,\ "
              r"\mathcal F^\infty=-\tfrac12\!\int k^\infty\log\tfrac{k^\infty}{k^0}d\mu\otimes\mu",
    status="holds",
    params=[
        Param.int("n", 7, 2, 30, "number of particles", search=(3, 10)),
        Param.int("d", 3, 1, 5, "dimension", search=(1, 4)),
        Param.seed("seed"),
        Param.float("scale", 3.0, 0.01, 8.0, "max |C_ij| (Sinkhorn conditioning)", search=(0.5, 6.0)),
    ],
    notes="Checked on mu_n with nabla_W F(mu_n)(x_i) = n nabla_{x_i} F(mu_n) (E5.4 normalisation), by central "
          "differences (solvers.fd.gradient_with_error, h = 1e-4) of F^0 and of F^inf computed by Sinkhorn; the "
          "tolerance is the Richardson error estimate plus the Sinkhorn stopping error propagated through F "
          "(|dF| <= max|f+g| row_err, divided by h). The envelope-theorem gradient of the dual (5.10) is compared too. "
          "Typos: 'T^2_mu' (l.3892) is T^inf_mu; 'W_v' in (5.12) is W_V.",
    catalogue="sander_part23 §2.2 P5.3",
    covers=("P5.3",),
)


def _wgrad_outcome(p, assumption=True, factor_n=True):
    """Array path: the particle fields, and central differences whose 4 n d + 1 evaluations of F^0 and of F^inf
    each run as one stack (F^inf: one batched log-domain Sinkhorn over all perturbed particle sets)."""
    xp = xp_of(p)
    Xh, WQh, WKh, WVh = _draw_particles(p.n, p.d, p.seed, p.scale, assumption)
    n, d = p.n, p.d
    h = 1e-4
    Xp, WQ, WK, WV = on(xp, Xh, WQh, WKh, WVh)
    T_ = xp.matrix_transpose
    logw = on(xp, np.full(n, -math.log(n)))

    def cost(Xs):                                     # (..., n, d) -> (..., n, n)
        return (Xs @ T_(WQ)) @ T_(Xs @ T_(WK))
    C = cost(Xp)
    XV = Xp @ T_(WV)
    Kd, _, _, _, _, _ = X.sinkhorn_log(C, tol=1e-14, max_iter=100_000)      # doubly stochastic K^inf
    Tinf = Kd @ XV                                    # (n K^inf) (X W_V^T) / n
    T0 = xp.exp(C) @ XV / n
    T1 = X.softmax_rows(C) @ XV

    def F0_batch(Xf):
        Cs = cost(xp.reshape(Xf, (Xf.shape[0], n, d)))
        return 0.5 * xp.mean(xp.exp(Cs), axis=(-2, -1))

    def Finf_batch(Xf):
        Cs = cost(xp.reshape(Xf, (Xf.shape[0], n, d)))
        K, f, g, _, _, _ = X.sinkhorn_log(Cs, logw, tol=1e-15, max_iter=100_000)
        fg = xp.expand_dims(f, axis=2) + xp.expand_dims(g, axis=1)
        return -0.5 * xp.sum(K * fg, axis=(-2, -1)) / n ** 2
    xf = xp.reshape(Xp, (n * d,))
    g0, e0 = (xp.reshape(a, (n, d)) for a in X.gradient_with_error_batched(F0_batch, xf, h))
    ginf, einf = (xp.reshape(a, (n, d)) for a in X.gradient_with_error_batched(Finf_batch, xf, h))
    Kw, fw, gw, _, row_err, _ = X.sinkhorn_log(C, logw, tol=1e-15, max_iter=100_000)
    pot = float(xp.max(xp.abs(fw)) + xp.max(xp.abs(gw)))
    einf = einf + 4 * pot * max(row_err, n * EPS) / h
    # T^1 at x_i: -grad_x log int k^0(x, x') dmu_n(x') with the x_j held fixed (one stack per particle)
    Y = Xp @ T_(WK)

    def L_batch(xs):                                  # (B, d) -> (B,)
        return xp.log(xp.mean(xp.exp((xs @ T_(WQ)) @ T_(Y)), axis=1))
    rows = [X.gradient_with_error_batched(L_batch, Xp[i, :], h) for i in range(n)]
    g1, e1 = xp.stack([r[0] for r in rows]), xp.stack([r[1] for r in rows])
    m = n if factor_n else 1
    M = T_(WQ) @ WK
    ga = (Kw @ Xp @ T_(M) + T_(Kw) @ Xp @ M) / (2 * n ** 2)             # envelope theorem (gradient_Finf)
    # the Richardson estimate |d_h - d_2h|/3 is asymptotically the truncation error itself; factor 2 covers the
    # O(h^4) remainder
    e0, e1, einf = 2 * e0, 2 * e1, 2 * einf
    amax = lambda A: float(xp.max(xp.abs(A)))  # noqa: E731
    Fb = float(Finf_batch(xp.reshape(xf, (1, n * d)))[0])
    return Outcome.from_parts({
        "T0": (amax(T0 + m * g0), m * amax(e0) + 8 * n * EPS * amax(T0)),
        "T1": (amax(T1 + g1), amax(e1) + 8 * n * EPS * amax(T1)),
        "Tinf": (amax(Tinf + m * ginf), m * amax(einf) + 8 * n * EPS * amax(Tinf)),
        "Tinf_envelope": (amax(ginf - ga), amax(einf)),
    }, f"T = -n grad F on particles ({p.backend})", values={
        "max_T0": amax(T0), "max_Tinf": amax(Tinf),
        "F_inf_equals_minus_mean_potential": abs(Fb + float(xp.mean(0.5 * (fw + gw))))})


@wgrad.numeric(backends=("numpy", "cupy"))
def _(p):
    """Central differences of F^0, F^inf (Sinkhorn) and log int k^0 against the particle fields."""
    return _wgrad_outcome(p)


wgrad.property(over=("n", "d", "seed", "scale"), max_examples=8)


@wgrad.falsifier({
    "no_assumption_5_2": "Drop Assumption 5.2 (an independent W_V): T^inf is no longer -n grad F^inf.",
    "missing_factor_n": "The proof's discrete form (l.3888), nabla_W F^0 = -sum_j K^0_ij W_V x_j, i.e. "
                        "without the factor n (E5.4).",
}, search=("seed",), backends=("numpy", "cupy"))
def _(p, variant):
    return _wgrad_outcome(p, **{
        "no_assumption_5_2": dict(assumption=False),
        "missing_factor_n": dict(factor_n=False),
    }[variant])


# ===========================================================================
# P5.4  SoftMax is not a Wasserstein gradient
notgrad = Claim(
    id="sander.softmax_not_gradient",
    title="The SoftMax field T^1 is not a Wasserstein gradient (non-symmetric particle Jacobian)",
    label="Prop 5.4",
    section="5.4",
    equation="",
    lines=(3722, 3726),
    statement=r"T^1_\mu=-\nabla\log\!\int k^0(\cdot,x')d\mu(x')\ \text{is not a Wasserstein gradient}",
    status="holds",
    params=[
        Param.int("n", 7, 2, 20, "number of particles", search=(3, 9)),
        Param.int("d", 3, 1, 4, "dimension", search=(1, 3)),
        Param.seed("seed"),
        Param.float("scale", 3.0, 0.0, 8.0, "max |C_ij|", search=(0.5, 6.0)),
    ],
    notes="If T^1 were -nabla_W F then on mu_n the particle field x -> (T^1(x_i))_i would be -n nabla of "
          "F(mu_n) and its nd x nd Jacobian symmetric. Witness: |J - J^T| exceeds the finite-difference error "
          "(Richardson estimate, h = 1e-5) -- certified iff |J - J^T|_max > 2 err. T^inf (Prop 5.3) passes the same "
          "test (values). Proof gap (catalogue P5.4): dF/dmu is determined only up to a mu-dependent constant; the "
          "contradiction survives (the particle test needs no first variation).",
    catalogue="sander_part23 §2.2 P5.4",
    covers=("P5.4",),
)


def _particle_jacobian(field_batch, X):
    """Central differences (steps h and 2h, Richardson error) of a particle field, all 4 n d perturbed particle sets in
    one stack: ``field_batch`` maps (B, n, d) -> (B, n, d) on the array path.  Returns host J, err ((nd, nd))."""
    xp = namespace(X)
    n, d = X.shape
    m = n * d
    h = 1e-5
    E = xp.reshape(xp.eye(m, dtype=X.dtype), (m, n, d))
    X0 = xp.expand_dims(X, axis=0)
    F = field_batch(xp.concat([X0, X0 + h * E, X0 - h * E, X0 + 2 * h * E, X0 - 2 * h * E], axis=0))
    F = xp.reshape(F, (F.shape[0], m))
    fp, fm, fp2, fm2 = F[1:m + 1, :], F[m + 1:2 * m + 1, :], F[2 * m + 1:3 * m + 1, :], F[3 * m + 1:, :]
    J = xp.matrix_transpose((fp - fm) / (2 * h))                       # J[:, k] = d field / d X_k
    J2 = xp.matrix_transpose((fp2 - fm2) / (4 * h))
    scale = float(xp.max(xp.abs(F[0, :])))
    err = xp.abs(J - J2) / 3 + 4 * EPS * max(scale, 1.0) / h
    return asnumpy(J), asnumpy(err)


def _field_batch(xp, kind, WQ, WK, WV):
    """T^1 (SoftMax) or T^inf (batched log-domain Sinkhorn) of (5.4) on a stack of particle sets (B, n, d)."""
    T_ = xp.matrix_transpose

    def field(Xs):
        C = (Xs @ T_(WQ)) @ T_(Xs @ T_(WK))
        K = X.softmax_rows(C) if kind == "1" else X.sinkhorn_log(C, tol=1e-14, max_iter=100_000)[0]
        return K @ (Xs @ T_(WV))                                       # (n K) (X W_V^T) / n
    return field


def _asym(kind, p, WQ_zero=False):
    xp = xp_of(p)
    Xh, WQ, WK, WV = _draw_particles(p.n, p.d, p.seed, p.scale)
    if WQ_zero:
        WQ = np.zeros_like(WQ)
        WV = -WQ.T @ WK
    Xx, WQx, WKx, WVx = on(xp, Xh, WQ, WK, WV)
    J, err = _particle_jacobian(_field_batch(xp, kind, WQx, WKx, WVx), Xx)
    A = np.abs(J - J.T)
    E = err + err.T
    k = np.unravel_index(np.argmax(A - 2 * E), A.shape)
    return J, A, E, k


@notgrad.numeric(backends=("numpy", "cupy"))
def _(p):
    """The particle Jacobian of T^1 has an asymmetric entry larger than twice its finite-difference error."""
    J, A, E, k = _asym("1", p)
    if not A[k] > 2 * E[k]:
        # no witness on this instance is no counterexample: at scale = 0 (k^0 constant, the excluded case
        # c = 0) T^1 is a gradient, and for small scale its asymmetry ~ scale lies below the difference error
        return inconclusive(f"no entry of |J - J^T| exceeds twice its finite-difference error (largest "
                            f"{float(A.max()):.3g}, error at the best entry {float(2 * E[k]):.3g}); scale={p.scale!r} "
                            f"is too small (0: the excluded constant kernel) to show the asymmetry",
                            max_asymmetry=float(A.max()))
    Ji, Ai, Ei, _ = _asym("inf", p)
    return Outcome(residual=float(2 * E[k]), tolerance=float(A[k]),
                   values={"rel_asymmetry_T1": float(np.linalg.norm(J - J.T) / np.linalg.norm(J)),
                           "rel_asymmetry_Tinf": float(np.linalg.norm(Ji - Ji.T) / np.linalg.norm(Ji)),
                           "Tinf_asymmetry_within_fd_error": bool(np.all(Ai <= 2 * Ei + 1e-9 * np.abs(Ji).max()))},
                   message="certified iff 2 * fd error < |J - J^T| at the most asymmetric entry")


notgrad.property(over=("n", "d", "seed", "scale"), max_examples=8)


@notgrad.falsifier("zero_query", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """W_Q = 0 (c = 0, k^0 constant; the case excluded at l.3928): T^1 is trivially a gradient, no witness."""
    J, A, E, k = _asym("1", p, WQ_zero=True)
    return Outcome(residual=float(2 * E[k]), tolerance=float(A[k]), values={"max_asymmetry": float(A.max())})


@notgrad.falsifier("sinkhorn_field", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """The same witness search on T^inf finds nothing: the Sinkformer field is a gradient (Prop 5.3)."""
    J, A, E, k = _asym("inf", p)
    return Outcome(residual=float(2 * E[k]), tolerance=float(A[k]), values={"max_asymmetry": float(A.max())})
