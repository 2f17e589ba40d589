"""Menon §10.2-10.3 (seed lines 791-823): the Langevin equation and its Gibbs measure, Brownian motion
on a Riemannian manifold (the Laplace-Beltrami drift).

Stochastic error model and cost model: those of every claim of the Sections 10-11 modules, written once in
the docstring of :mod:`theorems.menon._langevin` (exact Euler-Maruyama moment identities, tolerance K_SE * SE;
paths capped to a time budget by ``_common.mc_paths``, standard errors from the paths actually run).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers.sde import euler_maruyama
from theorems.claim import Claim, Outcome, Param
from theorems.menon._common import EPS, mc_paths, with_paths

from ._langevin import K_SE, _paths_param, _rng


def _log_van(x):
    d = len(x)
    return sum(math.log(abs(x[j] - x[i])) for i in range(d) for j in range(i + 1, d))


# ===========================================================================
# G10.1  Langevin equation, Fokker-Planck, Gibbs measure
gibbs = Claim(
    id="menon.langevin_gibbs",
    title="The Gibbs density is stationary for the Fokker-Planck equation of the Langevin SDE",
    label="G10.1",
    section="10.2",
    equation="(10.1)-(10.3)",
    lines=(791, 805),
    statement=r"dx=-\nabla V\,dt+\sqrt{2/\beta}\,dW,\quad \partial_t\rho=\beta^{-1}\Delta\rho+\nabla\cdot(\rho\nabla V),"
              r"\quad \rho(t)\to\rho_\beta=e^{-\beta V}/Z_\beta",
    status="holds",
    params=[
        Param.int("d", 2, 1, 6, "dimension", search=(1, 3)),
        Param.float("beta", 2.0, 0.05, 50.0, "inverse temperature", search=(0.2, 10.0)),
        Param.seed("seed of the SPD matrix A and of the noise"),
        _paths_param(1000),
        Param.float("dt", 1e-3, 1e-4, 0.05, "Euler-Maruyama step", low_open=True),
        Param.float("T", 8.0, 0.5, 100.0, "time horizon (the transient e^{-2 a_min T} is in the tolerance)"),
    ],
    notes="Numeric instance: V(x) = x^T A x / 2 with A SPD, eigenvalues in [0.5, 2] (OU), so rho_beta is "
          "Gaussian with covariance A^{-1}/beta.  EM for OU is linear, so its covariance at step n is known "
          "in closed form: Sigma_n = Sigma_EM - (I - dt A)^n Sigma_EM (I - dt A)^n from x_0 = 0, with "
          "Sigma_EM = A^{-1} (2 - dt A)^{-1} 2/beta = A^{-1}/beta + O(dt).  The tolerance is K_SE standard "
          "errors plus this exact discretisation-and-transient bias.  Line 803 prints grad V(x_t) inside "
          "the PDE; read grad V(x).  'Under suitable assumptions' (convergence) is not checked beyond OU.  "
          "Range: dt starts at 1e-4 (was 1e-5; T/dt up to 1e6 steps cannot run in a sweep draw; the catalogue uses "
          "dt = 1e-3); paths are capped by the cost model _common.mc_paths, SE from the paths actually run.",
    catalogue="menon §2.7 G10.1; §5.3",
)


#: the Gibbs density and the noise amplitude of (10.2) as printed, and misprints: (rho(beta, V), sigma(beta))
GIBBS_VARIANTS = {
    "stated": (lambda beta, V: sp.exp(-beta * V), lambda beta: sp.sqrt(2 / beta)),
    "temperature_inverted": (lambda beta, V: sp.exp(-V / beta), lambda beta: sp.sqrt(2 / beta)),
    "noise_factor_2_dropped": (lambda beta, V: sp.exp(-beta * V), lambda beta: sp.sqrt(1 / beta)),
}


def _gibbs_prove(variant="stated"):
    """Failures of: (10.3) annihilates rho (variant) for arbitrary V; r L f - f L^* r is a divergence for the
    generator L = -grad V.grad + (sigma^2/2) Laplacian (sigma per variant), d = 1, 2, 3."""
    rho_of, sigma_of = GIBBS_VARIANTS[variant]
    beta = sp.Symbol("beta", positive=True)
    worst, insts = 0, []
    for d in (1, 2, 3):
        xs = sp.symbols(f"x1:{d + 1}", real=True)
        V = sp.Function("V")(*xs)
        f = sp.Function("f")(*xs)
        rho = rho_of(beta, V)
        sigma = sigma_of(beta)
        lap = lambda g: sum(sp.diff(g, x, 2) for x in xs)
        div = lambda F: sum(sp.diff(Fi, x) for Fi, x in zip(F, xs))
        grad = lambda g: [sp.diff(g, x) for x in xs]
        fp = lambda r: lap(r) / beta + div([r * gv for gv in grad(V)])          # (10.3) right side
        gen = lambda g: sum(-gv * gg for gv, gg in zip(grad(V), grad(g))) + sigma**2 / 2 * lap(g)
        stat = sp.expand(sp.simplify(fp(rho) / rho))
        # adjointness: r L f - f L* r = div J with J = (r grad f - f grad r)/beta - f r grad V
        r = sp.Function("r")(*xs)
        J = [(r * a - f * b) / beta - f * r * c for a, b, c in zip(grad(f), grad(r), grad(V))]
        adj = sp.expand(r * gen(f) - f * fp(r) - div(J))
        worst += int(stat != 0) + int(adj != 0)
        insts.append(f"d={d}, V and f arbitrary")
    return worst, insts


@gibbs.symbolic(timeout=60)
def _gibbs_symbolic(p):
    """rho_beta = exp(-beta V) is annihilated by (10.3) for arbitrary V, and (10.3) is the adjoint of the
    generator b.grad + (sigma^2/2) Laplacian of (10.2) with sigma = sqrt(2/beta) (up to a divergence)."""
    worst, insts = _gibbs_prove()
    return Outcome(residual=worst, tolerance=0, values={
        "method": "sympy.expand", "instances": insts,
        "proved": "beta^{-1} Lap rho_beta + div(rho_beta grad V) = 0; (10.3) = L^* for the Ito generator of (10.2)"},
        message="number of identities that did not reduce to zero")


@gibbs.mutant({
    "temperature_inverted": "rho = exp(-V/beta) (beta and 1/beta confused)",
    "noise_factor_2_dropped": "(10.2) with noise sqrt(1/beta) dW (the 2 of sqrt(2/beta) dropped)",
}, timeout=60)
def _gibbs_mutant(p, variant):
    """(10.2)-(10.3) perturbed, through the same procedure: an identity must fail."""
    worst, _ = _gibbs_prove(variant)
    return Outcome(residual=worst, tolerance=0, values={"failed": worst},
                   message=f"{worst} identities did not reduce to zero for {variant}")


def _ou_instance(p):
    rng = _rng(p.seed)
    Q = np.linalg.qr(rng.standard_normal((p.d, p.d)))[0]
    a = rng.uniform(0.5, 2.0, p.d)
    return Q, a, (Q * a) @ Q.T


def _gibbs_run(p, noise_coef):
    """EM of dx = -A x dt + noise_coef dW from x_0 = 0; sample covariance vs A^{-1}/beta."""
    Q, a, A = _ou_instance(p)
    n = max(1, int(round(p.T / p.dt)))
    dt = p.T / n
    rng = _rng(p.seed + 1)
    x = euler_maruyama(lambda x: -x @ A, lambda x, dB: noise_coef * dB, np.zeros((p.paths, p.d)), dt, n, rng)
    S_hat = x.T @ x / p.paths                       # E x = 0 exactly (linear scheme, x_0 = 0)
    target = (Q / a) @ Q.T / p.beta                 # Gibbs covariance A^{-1}/beta
    # exact EM covariance of the *claimed* scheme (noise sqrt(2/beta)), eigenbasis of A:
    g = 1.0 - dt * a
    s_em = (2.0 / p.beta) * dt / (1.0 - g**2) * (1.0 - g ** (2 * n))
    bias = float(np.max(np.abs((Q * s_em) @ Q.T - target)))
    # standard error of mean(x_i x_j) for a centred Gaussian: sqrt((S_ii S_jj + S_ij^2)/paths)
    dg = np.diag(target)
    se = float(np.max(np.sqrt((np.outer(dg, dg) + target**2) / p.paths)))
    resid = float(np.max(np.abs(S_hat - target)))
    tol = K_SE * se + bias + 10 * n * EPS * float(np.max(np.abs(target)))
    return Outcome(residual=resid, tolerance=tol, values={
        "sample_covariance": S_hat.tolist(), "gibbs_covariance": target.tolist(), "em_bias": bias,
        "standard_error": se, "steps": n, "A_eigenvalues": a.tolist()},
        message="max_ij |sample covariance - A^{-1}/beta| after EM to T (K_SE*SE + exact EM bias)")


@gibbs.numeric
def _gibbs_numeric(p):
    """OU potential V = x^T A x/2: the EM stationary covariance of (10.2) is A^{-1}/beta (the Gibbs law)."""
    paths, stop = mc_paths(p, max(1, int(round(p.T / p.dt))), 400.0)   # EM of x' = -A x, d <= 6
    if stop is not None:
        return stop
    return with_paths(_gibbs_run(p.replace(paths=paths), math.sqrt(2.0 / p.beta)), p.paths, paths)


gibbs.property(over=("d", "beta", "seed"), max_examples=6)


@gibbs.falsifier("noise_sqrt_1_over_beta", search=("seed", "beta"))
def _gibbs_half_noise(p):
    """Noise sqrt(1/beta) instead of sqrt(2/beta): the stationary covariance is A^{-1}/(2 beta)."""
    return _gibbs_run(p, math.sqrt(1.0 / p.beta))


# ===========================================================================
# G10.2  Laplace-Beltrami operator and the Ito drift of Brownian motion in coordinates
lb = Claim(
    id="menon.laplace_beltrami_drift",
    title="Brownian motion on (N, h) in coordinates: the Ito drift is beta^{-1} Laplace-Beltrami of x^i",
    label="G10.2",
    section="10.3",
    equation="(10.4)-(10.5)",
    lines=(809, 823),
    statement=r"\Delta_hf=|h|^{-1/2}\partial_i(|h|^{1/2}h^{ij}\partial_jf);\ \text{BM at inverse temperature }\beta"
              r"\text{ has generator }\beta^{-1}\Delta_h:\ dx^i=b^i\,dt+\sqrt{2/\beta}\,(h^{-1/2})^{ij}dW_j,\ "
              r"b^i=\beta^{-1}|h|^{-1/2}\partial_j(|h|^{1/2}h^{ij})=\beta^{-1}\Delta_hx^i",
    status="holds",
    params=[
        Param.float("beta", 2.0, 0.1, 50.0, "inverse temperature", search=(0.5, 5.0)),
        Param.float("r0", 2.0, 0.5, 10.0, "initial radius (polar coordinates)", search=(1.5, 4.0)),
        Param.seed("seed of the noise"),
        _paths_param(4000),
        Param.float("dt", 1e-3, 1e-5, 0.02, "Euler-Maruyama step", low_open=True),
        Param.float("T", 2.0, 0.01, 10.0, "time horizon"),
    ],
    notes="The formula for the coordinate drift is the catalogue's reading of (10.5) ('the Ito-Stratonovich "
          "correction'); the paper writes no formula.  Symbolic: the generator b.grad + beta^{-1} h^{ij} "
          "d_i d_j equals beta^{-1} Delta_h on an arbitrary f for polar coordinates, the round sphere and a "
          "non-diagonal polynomial metric; Delta_h is coordinate invariant (polar vs Cartesian).  Numeric: EM "
          "in polar coordinates (r, theta) with b = (1/(beta r), 0); the exact EM identity "
          "E[r_T^2 - dt^2 sum_n |b_r(r_n)|^2] = r_0^2 + 4T/beta (plane BM at generator Delta/beta) is tested "
          "to K_SE standard errors; dt^2 sum |b_r|^2 = O(dt) is the explicit EM bias.",
    catalogue="menon §2.7 G10.2",
)


def _lb_generator_residual(h, xs, beta, f, variant="stated"):
    """Remainders of generator - beta^{-1} Delta_h f and b^i - beta^{-1} Delta_h x^i for the drift of (10.5) and
    the diffusion beta^{-1} h^{ij} (variant sqrt_det_dropped: b^i = beta^{-1} d_j h^{ij}; diffusion_halved:
    (2 beta)^{-1} h^{ij})."""
    hinv = h.inv()
    sq = sp.sqrt(h.det())
    n = len(xs)
    w = sp.Integer(1) if variant == "sqrt_det_dropped" else sq
    b = [sum(sp.diff(w * hinv[i, j], xs[j]) for j in range(n)) / w / beta for i in range(n)]
    c = 2 * beta if variant == "diffusion_halved" else beta
    gen = sum(b[i] * sp.diff(f, xs[i]) for i in range(n)) + \
        sum(hinv[i, j] * sp.diff(f, xs[i], xs[j]) for i in range(n) for j in range(n)) / c
    lap = sum(sp.diff(sq * sum(hinv[i, j] * sp.diff(f, xs[j]) for j in range(n)), xs[i]) for i in range(n)) / sq
    lapx = [sum(sp.diff(sq * hinv[i, j], xs[j]) for j in range(n)) / sq for i in range(n)]  # Delta_h x^i (h symm.)
    r1 = sp.cancel(sp.together(gen - lap / beta))
    r2 = sum(int(sp.cancel(b[i] - lapx[i] / beta) != 0) for i in range(n))
    return int(r1 != 0) + r2, b


def _lb_prove(variant="stated"):
    """Failures of the generator identity (10.4)-(10.5) on three 2-d metrics (variant of the drift / diffusion),
    and of the coordinate invariance of Delta_h (polar vs Cartesian)."""
    beta = sp.Symbol("beta", positive=True)
    r, th = sp.symbols("r theta", positive=True)
    x, y = sp.symbols("x y", real=True)
    worst, insts, drifts = 0, [], {}
    for name, h, xs in [
        ("polar", sp.diag(1, r**2), (r, th)),
        ("sphere", sp.diag(1, sp.sin(r) ** 2), (r, th)),
        ("polynomial", sp.Matrix([[2 + x**2, x * y / 2], [x * y / 2, 1 + y**2]]), (x, y)),
    ]:
        f = sp.Function("f")(*xs)
        res, b = _lb_generator_residual(h, xs, beta, f, variant)
        worst += res
        insts.append(f"{name}: h = {h.tolist()}")
        drifts[name] = [str(sp.simplify(bi)) for bi in b]
    # coordinate invariance: Delta_polar F(r cos th, r sin th) = (F_xx + F_yy)(r cos th, r sin th)
    F = x**3 * y - 2 * x * y**2 + x**4 + y
    Fp = F.subs({x: r * sp.cos(th), y: r * sp.sin(th)}, simultaneous=True)
    lap_p = sp.diff(r * sp.diff(Fp, r), r) / r + sp.diff(Fp, th, 2) / r**2
    lap_c = (sp.diff(F, x, 2) + sp.diff(F, y, 2)).subs({x: r * sp.cos(th), y: r * sp.sin(th)}, simultaneous=True)
    cs, sn = sp.symbols("c s")
    diff = sp.expand((lap_p - lap_c).subs({sp.cos(th): cs, sp.sin(th): sn}))
    worst += int(sp.reduced(diff, [cs**2 + sn**2 - 1], sn, cs)[1] != 0)   # modulo cos^2 + sin^2 = 1
    return worst, insts, drifts


@lb.symbolic(timeout=60)
def _lb_symbolic(p):
    """Generator of dx = b dt + sqrt(2/beta) h^{-1/2} dW equals beta^{-1} Delta_h (10.4) for three 2-d metrics."""
    worst, insts, drifts = _lb_prove()
    return Outcome(residual=worst, tolerance=0, values={
        "method": "sympy.cancel / expand", "instances": insts, "drifts": drifts,
        "proved": "b^i d_i f + beta^{-1} h^{ij} d_ij f = beta^{-1} Delta_h f and b^i = beta^{-1} Delta_h x^i; "
                  "Delta_h is coordinate invariant (polar vs Cartesian, F = x^3y - 2xy^2 + x^4 + y)"},
        message="number of identities that did not reduce to zero")


@lb.mutant({
    "sqrt_det_dropped": "drift b^i = beta^{-1} d_j h^{ij} (|h|^{1/2} dropped from (10.5))",
    "diffusion_halved": "diffusion (2 beta)^{-1} h^{ij} (noise sqrt(1/beta) for sqrt(2/beta))",
}, timeout=60)
def _lb_mutant(p, variant):
    """(10.4)-(10.5) perturbed, through the same procedure: an identity must fail."""
    worst, _, _ = _lb_prove(variant)
    return Outcome(residual=worst, tolerance=0, values={"failed": worst},
                   message=f"{worst} identities did not reduce to zero for {variant}")


def _lb_run(p, with_sqrt_det=True):
    """EM in polar coordinates; drift b_r = 1/(beta r) (from (10.4)) or d_j h^{rj}/beta = 0 (no |h|^{1/2})."""
    n = max(1, int(round(p.T / p.dt)))
    dt = p.T / n
    rng = _rng(p.seed)
    s = math.sqrt(2.0 * dt / p.beta)
    r = np.full(p.paths, p.r0)
    th = np.zeros(p.paths)
    corr = np.zeros(p.paths)
    rmin = p.r0
    for _ in range(n):
        br = 1.0 / (p.beta * r) if with_sqrt_det else np.zeros_like(r)
        corr += dt**2 * br**2
        z = rng.standard_normal((2, p.paths))
        r, th = r + br * dt + s * z[0], th + s * z[1] / r
        rmin = min(rmin, float(np.min(np.abs(r))))
    q = r**2 - corr
    pred = p.r0**2 + 4.0 * p.T / p.beta
    se = float(np.std(q, ddof=1) / math.sqrt(p.paths))
    resid = abs(float(np.mean(q)) - pred)
    return Outcome(residual=resid, tolerance=K_SE * se + 10 * n * EPS * pred, values={
        "mean_r2": float(np.mean(r**2)), "prediction": pred, "em_correction": float(np.mean(corr)),
        "standard_error": se, "min_radius_seen": rmin, "mean_x": float(np.mean(r * np.cos(th))),
        "steps": n}, message="|E[r_T^2 - dt^2 sum b_r^2] - (r_0^2 + 4T/beta)| (exact EM identity, K_SE*SE)")


@lb.numeric
def _lb_numeric(p):
    """Polar-coordinate EM with the (10.4) drift reproduces plane BM: E r_T^2 = r_0^2 + 4T/beta."""
    paths, stop = mc_paths(p, max(1, int(round(p.T / p.dt))), 250.0)   # polar EM, scalar arrays
    if stop is not None:
        return stop
    return with_paths(_lb_run(p.replace(paths=paths), True), p.paths, paths)


lb.property(over=("beta", "r0", "seed"), max_examples=4, fixed={"paths": 2000})


@lb.falsifier("no_sqrt_det", search=("seed", "beta"))
def _lb_no_sqrtdet(p):
    """Drop the |h|^{1/2} factors: b^i = beta^{-1} d_j h^{ij} = 0 in polar coordinates, E r^2 grows by 2T/beta only."""
    return _lb_run(p, False)
