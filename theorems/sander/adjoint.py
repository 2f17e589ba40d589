"""Chapter 2, Sec 2.4-2.5 and App 2.A.6-2.A.9, 2.B-2.C: memory-free (adjoint) backpropagation for ResNets
and HeunNets, and the experiments.

Catalogue sander_part1 §2.3 (A1-A8), §2.4 (X2.1-X2.8), §3.2 R3-R5, §4 E3, E4, E5, E17.

Harness (catalogue §2.3, ``solvers.resnet_ode``): ``f(x, theta) = tanh(W x + b)`` with ``theta = (W, b)``,
``d = 4``, one sample, loss ``1/2 |x_N - y|^2``; gradients are in all of ``(W_n, b_n)``.

Notation decisions (catalogue §6):

* "error in gradients" = ``max_n (|dW_n - dW~_n|_F^2 + |db_n - db~_n|^2)^{1/2}`` (absolute); the relative error
  (divided by ``max_n`` of the exact gradient's norm) is reported too (Fig 2.3(c) plots it).
* ``C_f = sup |f| = sqrt(d)`` for tanh (sharp), ``L_f = max_n |W_n|_2`` (upper bound of ``|d_x f|``).
* HeunNet: ``N + 1`` parameter sets ``theta_0..theta_N`` (E17: l.882 prints ``theta_1..theta_N``).
* ``Delta_theta^N = max_n |theta_{n+1} - theta_n|^2`` (squared, as printed); Prop 2.11's constant is corrected
  to ``C'_f = L'_theta L_theta / 4`` (E3).
* Weight families: ``smooth`` (``W_n = W0 + sin(2 pi n/N) W1``, ``b_n = b0 + (n/N) b1``) and ``iid`` (bounded
  i.i.d. perturbations, so Assumption 2.8 holds with N-independent constants; see ``solvers.resnet_ode``).
  The smooth profile is the same function for every ``N`` (drawn from ``seed`` only).
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import resnet_ode as ro
from solvers import xp_sander1 as xk
from solvers.fd import gradient_with_error
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

EPS = float(np.finfo(float).eps)
FAMILIES = ("smooth", "iid")
GRID = (64, 128, 256, 512)
N_SEEDS_IID = 4


# ---------------------------------------------------------------------------
# shared measurement
def _draw(family, N, d, seed, heun):
    gen = ro.smooth_weights if family == "smooth" else ro.iid_weights
    W, b = gen(N, d, np.random.default_rng(seed), heun=True)     # N + 1 sets; Euler uses the first N
    r = np.random.default_rng([seed, 7])
    x0, y = r.standard_normal((1, d)), r.standard_normal((1, d))
    return W, b, x0, y


def measure(method, family, N, d, seed, backend="numba"):
    """Reconstruction and gradient errors of the memory-free backward pass of a depth-N ResNet/HeunNet."""
    W, b, x0, y = _draw(family, N, d, seed, method == "heun")
    nb = backend == "numba"
    if method == "heun":
        xs = (ro.heun_forward if nb else ro.heun_forward_numpy)(x0, W, b, N)[0]
        xr = (ro.heun_reverse if nb else ro.heun_reverse_numpy)(xs[-1], W, b, N)[0]
        back, adj = (ro.heun_backward, ro.heun_adjoint) if nb else (ro.heun_backward_numpy, ro.heun_adjoint_numpy)
        K = N + 1
    else:
        W, b = W[:N], b[:N]
        xs = (ro.euler_forward if nb else ro.euler_forward_numpy)(x0, W, b, N)
        xr = (ro.euler_reverse if nb else ro.euler_reverse_numpy)(xs[-1], W, b, N)
        back, adj = (ro.euler_backward, ro.euler_adjoint) if nb else (ro.euler_backward_numpy, ro.euler_adjoint_numpy)
        K = N
    gN = xs[-1] - y
    dW, db, _ = back(xs, W, b, gN, N)
    aW, ab, _, _ = adj(xs[-1], W, b, gN, N)
    per = np.sqrt(np.sum((dW - aW) ** 2, axis=(1, 2)) + np.sum((db - ab) ** 2, axis=1))
    gnorm = np.sqrt(np.sum(dW ** 2, axis=(1, 2)) + np.sum(db ** 2, axis=1))
    recon = np.linalg.norm((xs - xr)[:, 0, :], axis=1)
    Lf = float(max(np.linalg.norm(W[n], 2) for n in range(K)))
    dth = [math.sqrt(float(np.sum((W[n + 1] - W[n]) ** 2) + np.sum((b[n + 1] - b[n]) ** 2))) for n in range(K - 1)]
    scale = max(1.0, float(np.abs(xs).max()))
    # rounding model (solvers.resnet_ode): N (d + 2) eps e^{Lf} max|x|, twice (forward and reversal)
    rnd = 8 * N * (d + 2) * EPS * math.exp(Lf) * scale
    return dict(recon=float(recon.max()), recon_n=recon, grad=float(per.max()), grad_rel=float(per.max() / gnorm.max()),
                Lf=Lf, Cf=math.sqrt(d), Delta=max(dth) ** 2 if dth else 0.0, rounding=rnd,
                grad_rounding=rnd * max(1.0, float(gnorm.max())) * math.exp(Lf))


def _avg(method, family, N, d, seed, backend="numba"):
    """Smooth: one deterministic profile.  iid: geometric mean over N_SEEDS_IID draws (seed, seed+1, ...)."""
    seeds = [seed] if family == "smooth" else [seed + k for k in range(N_SEEDS_IID)]
    ms = [measure(method, family, N, d, s, backend) for s in seeds]
    out = {k: float(np.exp(np.mean(np.log([max(m[k], 1e-300) for m in ms])))) for k in ("recon", "grad", "grad_rel")}
    out.update(Lf=max(m["Lf"] for m in ms), rounding=max(m["rounding"] for m in ms),
               grad_rounding=max(m["grad_rounding"] for m in ms), Delta=max(m["Delta"] for m in ms))
    return out


def fit_slope(Ns, errs):
    """Least-squares slope of log(err) against log(N) and its standard error."""
    x, y = np.log(np.asarray(Ns, float)), np.log(np.asarray(errs, float))
    A = np.vstack([x, np.ones_like(x)]).T
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    r = y - A @ coef
    cov = (r @ r / max(len(x) - 2, 1)) * np.linalg.inv(A.T @ A)
    return float(coef[0]), float(np.sqrt(cov[0, 0]))


def _common_params(N_default=64, N_search=(4, 512)):
    return [
        Param.int("N", N_default, 1, 20_000, "depth", search=N_search),
        Param.int("d", 4, 1, 8, "state dimension", search=(1, 6)),
        Param.seed("seed of the weights, x0 and target"),
        Param.choice("family", "smooth", FAMILIES, "smooth-in-depth weights or bounded i.i.d. weights"),
    ]


# ===========================================================================
# A1, A2: Prop 2.9
recon = Claim(
    id="sander.adjoint_reconstruction_euler",
    title="Reversing a ResNet by backward Euler recovers the activations to O(1/N), smooth or not",
    label="Prop 2.9",
    section="2.4, App 2.A.6",
    equation="(2.6)",
    lines=(856, 872),
    statement=r"\tilde x_N=x_N,\ \tilde x_n=\tilde x_{n+1}-\tfrac1Nf(\tilde x_{n+1},\theta_n):\quad"
              r"\|x_n-\tilde x_n\|\le\frac{(e^{L_f}-1)C_f}{N}+O(\tfrac1{N^2})",
    status="holds", bound=True,
    params=_common_params(),
    notes="Checked in the sharper non-asymptotic form of the catalogue (A2): ||x_n - x~_n|| <= C_f/N ((1+L_f/N)^(N-n) "
          "- 1) <= (e^L_f - 1) C_f/N, no O(1/N^2) remainder (proof: |f(x_n) - f(x_{n+1})| <= L_f C_f/N instead of a "
          "Taylor expansion). The bound is loose (x ~100-800); no constant variant is falsifiable on random instances "
          "(catalogue A2(d)). The falsifier is the wrong belief that smooth weights speed up the Euler reversal.",
    catalogue="sander_part1 §2.3 A1, A2; §3.1 D8; §3.2 R3",
    covers=("A1", "A2", "D8"),
)


@recon.numeric(backends=("numpy", "numba"))
def _(p):
    """max_n ||x_n - x~_n|| against the sharp bound at every n and the printed (e^Lf - 1) C_f / N."""
    m = measure("euler", p.family, p.N, p.d, p.seed, p.backend)
    N, Lf, Cf = p.N, m["Lf"], m["Cf"]
    n = np.arange(N + 1)
    sharp = Cf / N * ((1 + Lf / N) ** (N - n) - 1)
    printed = math.expm1(Lf) * Cf / N
    excess = float(np.max(m["recon_n"] - sharp))
    parts = {"sharp_bound_all_n": (max(excess, 0.0), m["rounding"]),
             "printed_leading_term": (max(m["recon"] - printed, 0.0), m["rounding"])}
    return Outcome.from_parts(parts, f"max_n ||x_n - x~_n|| = {m['recon']:.4e}; sharp bound {sharp.max():.4e}; "
                                     f"(e^Lf-1)Cf/N = {printed:.4e}", {
        "error": m["recon"], "sharp_bound": float(sharp.max()), "printed_bound": printed, "L_f": Lf, "C_f": Cf,
        "N_times_error": N * m["recon"], "looseness": printed / max(m["recon"], 1e-300),
        # tightness against the sharp (checked) bound, worst layer n < N (sharp_N = 0 = error_N)
        "tightness": float(np.max(m["recon_n"][:-1] / sharp[:-1])) if N > 0 and sharp[0] > 0 else 0.0})


recon.property(over=("N", "d", "seed", "family"), max_examples=15)
recon.tightness(over=("N", "d", "seed", "family"), max_examples=20, approached=False,
                finding="the sharp bound C_f/N((1+L_f/N)^(N-n) - 1) (checked at every n) is not approached: best ratio "
                        "error/bound 0.539 at N = 1, d = 1 (iid family) over 20 draws of the declared ranges; it "
                        "falls with N, as the proof's worst-case ||f(x_n) - f(x_{n+1})|| <= L_f C_f/N compounds "
                        "(audit issue 21; catalogue A2(d): loose by x100-800 against the printed form).")


#: the printed bound (e^{L_f} - 1) C_f / N, and misprints (mutants)
RECON_BOUNDS = {"stated": lambda L, C, N: (sp.exp(L) - 1) * C / N,
                "exponent_halved": lambda L, C, N: (sp.exp(L / 2) - 1) * C / N,
                "rate_N_squared": lambda L, C, N: (sp.exp(L) - 1) * C / N ** 2}


def _recon_symbolic(form):
    """Unrolling r_n <= (1 + L/N) r_{n+1} + L C/N^2 from r_N = 0 gives R = C/N((1 + L/N)^(N-n) - 1); (1+L/N)^N <= e^L
    (h = L - N log(1 + L/N), h(0) = 0, h' >= 0), so R <= bound; the bound ``form`` against R: lim_N N (bound - R)
    must be >= 0 (sympy decides the sign).  Returns (failures, residuals)."""
    L, C, N = sp.symbols("L C N", positive=True)
    k, j = sp.symbols("k j", integer=True, nonnegative=True)
    total = sp.summation(L * C / N**2 * (1 + L / N) ** j, (j, 0, k - 1))
    r = sp.simplify(total - C / N * ((1 + L / N) ** k - 1))
    # and the recursion itself is satisfied by the closed form
    R = C / N * ((1 + L / N) ** k - 1)
    r2 = sp.simplify(sp.powsimp(sp.expand((1 + L / N) * R + L * C / N**2 - R.subs(k, k + 1))))
    h = L - N * sp.log(1 + L / N)
    lemma = h.subs(L, 0) == 0 and bool(sp.simplify(sp.diff(h, L)).is_nonnegative)
    margin = sp.limit(N * (RECON_BOUNDS[form](L, C, N) - R.subs(k, N)), N, sp.oo)
    bad = int(r != 0) + int(r2 != 0) + int(not lemma) + int(not bool(sp.simplify(margin).is_nonnegative))
    return bad, r, r2, margin


@recon.symbolic(timeout=30)
def _(p):
    """Unrolling r_n <= (1 + L/N) r_{n+1} + L C/N^2 from r_N = 0 gives C/N((1 + L/N)^(N-n) - 1) <= (e^L - 1) C/N."""
    bad, r, r2, margin = _recon_symbolic("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.summation/simplify", "residuals": [str(r), str(r2)],
                                                      "proved": "r_{N-k} <= C/N((1+L/N)^k - 1) <= (e^L - 1) C/N",
                                                      "limit_N_times_margin": str(margin)},
                   message="identities not reduced to 0")


@recon.mutant({"exponent_halved": "(e^{L_f/2} - 1) C_f/N: below the unrolled recursion for large N",
               "rate_N_squared": "(e^{L_f} - 1) C_f/N^2: below the unrolled recursion for large N"}, timeout=30)
def _(p, variant):
    """The printed bound perturbed, through the same comparison with the unrolled recursion: it must not be proved."""
    bad, _, _, margin = _recon_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"limit_N_times_margin": str(margin)},
                   message=f"lim N (bound - recursion) = {margin} is not >= 0 for {variant}")


@recon.falsifier("smooth_weights_give_1_over_N2", fixed={"family": "smooth", "N": 128})
def _(p):
    """Wrong: 'with weights smooth in depth the Euler reversal error is O(1/N^2)': err(2N) <= 0.375 err(N)
    (a 1/N^2 rate gives 0.25).  The measured ratio is ~1/2: the rate does not depend on depth smoothness."""
    e1 = measure("euler", p.family, p.N, p.d, p.seed, p.backend)
    e2 = measure("euler", p.family, 2 * p.N, p.d, p.seed, p.backend)
    return Outcome(residual=e2["recon"], tolerance=0.375 * e1["recon"] + e2["rounding"],
                   values={"err_N": e1["recon"], "err_2N": e2["recon"], "ratio": e2["recon"] / e1["recon"]},
                   message=f"err(2N)/err(N) = {e2['recon'] / e1['recon']:.4f} (0.5 for 1/N, 0.25 for 1/N^2)")


# ===========================================================================
# A3: Prop 2.10
def _validate_rate_N(p):
    if p.N < 8:
        raise ParamError(f"parameter N={p.N} must be >= 8 for the rate test (it compares N and 2N)")


grad = Claim(
    id="sander.adjoint_gradient_euler",
    title="Memory-free backprop through the Euler reversal has gradient error O(1/N^2)",
    label="Prop 2.10",
    section="2.4, App 2.A.7",
    equation="(2.7)",
    lines=(874, 880),
    statement=r"\|\tilde\nabla_{\theta_n}L-\nabla_{\theta_n}L\|=O(\tfrac1{N^2})",
    status="holds",
    params=_common_params(N_default=64, N_search=(32, 256)),
    validate=_validate_rate_N,
    notes="Tested as the catalogue's (c): (2N)^2 err(2N) <= 1.2 N^2 err(N), i.e. N^2 err is not growing. Error = max "
          "over layers of the Frobenius norm of the (W_n, b_n) gradient difference; iid family: geometric mean over "
          f"{N_SEEDS_IID} draws. The relative error is O(1/N). The explicit constant of the proof (l.1384-1388) renames "
          "Delta/Omega of the statement as L_theta/C_theta (cosmetic). The off-by-one variant of (2.7) (x_{n+1} inside "
          "d_theta f) is also O(1/N^2) (catalogue A3(d)), so it is no falsifier of the rate.",
    catalogue="sander_part1 §2.3 A3; §3.2 R3",
    covers=("A3",),
)


def _ratio_outcome(p, power, factor=1.2):
    a = _avg("euler", p.family, p.N, p.d, p.seed, p.backend)
    b = _avg("euler", p.family, 2 * p.N, p.d, p.seed, p.backend)
    c1, c2 = p.N ** power * a["grad"], (2 * p.N) ** power * b["grad"]
    tol = factor * c1 + (2 * p.N) ** power * b["grad_rounding"]
    return Outcome(residual=c2, tolerance=tol, values={
        "grad_err_N": a["grad"], "grad_err_2N": b["grad"], f"N^{power}_err_N": c1, f"N^{power}_err_2N": c2,
        "rel_err_N": a["grad_rel"], "rel_err_2N": b["grad_rel"]},
        message=f"N^{power} * gradient error: {c1:.4f} at N={p.N}, {c2:.4f} at N={2 * p.N}")


@grad.numeric(backends=("numpy", "numba"))
def _(p):
    """N^2 * max_n gradient error does not grow from N to 2N (ratio <= 1.2)."""
    return _ratio_outcome(p, 2)


# The doubling-ratio test compares two different networks when the weights are i.i.d. (each depth draws its
# own), so for that family the ratio is a random variable, not an error model: the ci profile drew N = 70
# with (2N)^2 err(2N) / N^2 err(N) = 1.28.  The i.i.d. rate is certified by its fitted slope with its standard
# error over N = 64..512 in sander.adjoint_euler_rates; the property draws the smooth family, where the
# comparison across N is deterministic.
grad.property(over=("N", "seed"), max_examples=10, fixed={"family": "smooth"})


@grad.falsifier("rate_1_over_N3")
def _(p):
    """Wrong: O(1/N^3) (as for a second-order reversal): N^3 err doubles from N to 2N."""
    return _ratio_outcome(p, 3)


# ===========================================================================
# measured rates, Euler
def _rates(method, family, d, seed, Ns=GRID):
    rows = [_avg(method, family, N, d, seed) for N in Ns]
    sr, ser = fit_slope(Ns, [r["recon"] for r in rows])
    sg, seg = fit_slope(Ns, [r["grad"] for r in rows])
    return rows, (sr, ser), (sg, seg)


def _rate_plot(Ns, rows, title):
    return {"kind": "loglog", "x": [float(n) for n in Ns],
            "series": {"reconstruction max|x - x~|": [r["recon"] for r in rows],
                       "gradient error": [r["grad"] for r in rows],
                       "relative gradient error": [r["grad_rel"] for r in rows]},
            "xlabel": "depth N", "ylabel": "error", "title": title}


SLOPE_TOL = 0.1   # pre-asymptotic curvature allowance over N = 64..512 (catalogue R3), plus 3 standard errors

euler_rates = Claim(
    id="sander.adjoint_euler_rates",
    title="Measured rates of the Euler adjoint: activations 1/N, gradients 1/N^2, for smooth and i.i.d. weights",
    label="Props 2.9-2.10 (rates)",
    section="2.4",
    equation="(2.6)-(2.7)",
    lines=(866, 880),
    statement=r"\max_n\|x_n-\tilde x_n\|\asymp N^{-1},\quad \max_n\|\tilde\nabla_{\theta_n}L-\nabla_{\theta_n}L\|\asymp N^{-2}"
              r"\ \text{(smooth and non-smooth weights)}",
    status="holds",
    params=[Param.int("d", 4, 1, 8, "state dimension"),
            Param.seed("seed"),
            Param.choice("family", "smooth", FAMILIES, "weight family")],
    notes="Least-squares slopes of log error against log N over N = 64, 128, 256, 512 (iid: geometric mean of "
          f"{N_SEEDS_IID} draws per N); certified when |slope - claimed| <= 0.1 + 3 standard errors. Catalogue "
          "measured N err -> 0.382 (smooth), N^2 grad err -> 1.63 (smooth) for its own draw.",
    catalogue="sander_part1 §2.3 A2, A3, A8; §3.2 R3",
    covers=("A8", "R3"),
)


@euler_rates.numeric
def _(p):
    """Fitted slopes of the reconstruction (-1) and gradient (-2) errors over N = 64..512, loglog plot."""
    rows, (sr, ser), (sg, seg) = _rates("euler", p.family, p.d, p.seed)
    parts = {"recon_slope=-1": (abs(sr + 1), SLOPE_TOL + 3 * ser), "grad_slope=-2": (abs(sg + 2), SLOPE_TOL + 3 * seg)}
    return Outcome.from_parts(parts, f"Euler ({p.family}): recon slope {sr:.3f}+-{ser:.3f}, grad slope {sg:.3f}+-{seg:.3f}", {
        "N": list(GRID), "recon": [r["recon"] for r in rows], "grad": [r["grad"] for r in rows],
        "grad_rel": [r["grad_rel"] for r in rows], "recon_slope": sr, "recon_slope_se": ser, "grad_slope": sg,
        "grad_slope_se": seg, "N_recon": [N * r["recon"] for N, r in zip(GRID, rows)],
        "N2_grad": [N * N * r["grad"] for N, r in zip(GRID, rows)],
        "plot": _rate_plot(GRID, rows, f"Euler adjoint, {p.family} weights: slopes {sr:.2f} and {sg:.2f}")})


euler_rates.property(over=("seed", "family"), max_examples=6)


@euler_rates.falsifier("second_order_rates", fixed={"family": "smooth"})
def _(p):
    """Wrong: the Euler reversal with smooth weights reaches Heun's rates (-2 and -3)."""
    rows, (sr, ser), (sg, seg) = _rates("euler", p.family, p.d, p.seed)
    return Outcome.from_parts({"recon_slope=-2": (abs(sr + 2), SLOPE_TOL + 3 * ser),
                               "grad_slope=-3": (abs(sg + 3), SLOPE_TOL + 3 * seg)},
                              f"measured slopes {sr:.3f}, {sg:.3f}", {"recon_slope": sr, "grad_slope": sg})


# ===========================================================================
# measured rates, Heun (A5, A7 rates; A8 message)
heun_rates = Claim(
    id="sander.adjoint_heun_rates",
    title="Heun adjoint: rates O(Delta/N + 1/N^2) and O(Delta/N^2 + 1/N^3); measured 1/N^3 and 1/N^4 with smooth weights",
    label="Props 2.11-2.12 (rates)",
    section="2.4",
    equation="(2.8)-(2.9)",
    lines=(882, 898),
    statement=r"\max_n\|x_n-\tilde x_n\|=O(\tfrac{\Delta_\theta^N}N+\tfrac1{N^2}),\quad"
              r"\|\tilde\nabla_{\theta_n}L-\nabla_{\theta_n}L\|=O(\tfrac{\Delta_\theta^N}{N^2}+\tfrac1{N^3})",
    status="holds",
    params=[Param.int("d", 4, 1, 8, "state dimension"),
            Param.seed("seed"),
            Param.choice("family", "smooth", FAMILIES, "weight family (smooth: Delta = O(1/N^2); iid: Delta = O(1))")],
    notes="Smooth weights (Delta = O(1/N^2)): the thesis predicts slopes <= -2 (activations) and <= -3 (gradients); "
          "measured -3 and -4 (catalogue A5/A7: a Heun step and its reversal have local defect O(h^4) when "
          "theta_{n+1} - theta_n = O(h)). i.i.d. weights (Delta = O(1)): about -1 and -2. Certified parts: "
          "the thesis's rate, read with the measured Delta (each error divided by its bound Delta/N + 1/N^2, resp. "
          "Delta/N^2 + 1/N^3, must not grow: slope <= 0.1 + 3 SE), and, for smooth weights, the measured rate "
          "(|slope - measured| <= 0.1 + 3 SE for the catalogue's -3/-4). For i.i.d. weights Delta is a random "
          "maximum that drifts with N, so a fixed exponent is not a claim: at seed 1157 the raw slope is -0.86.",
    catalogue="sander_part1 §2.3 A5, A7, A8; §2.4 X2.5; §3.2 R3",
    covers=("A5", "A7", "A8", "X2.5"),
)

HEUN_EXPECT = {"smooth": ((-2.0, -3.0), (-3.0, -4.0)), "iid": ((-1.0, -2.0), (-1.0, -2.0))}


@heun_rates.numeric
def _(p):
    """Fitted slopes of the Heun reconstruction and gradient errors over N = 64..512, against thesis and catalogue."""
    rows, (sr, ser), (sg, seg) = _rates("heun", p.family, p.d, p.seed)
    (tr, tg), (mr, mg) = HEUN_EXPECT[p.family]
    # The thesis's rates are in terms of the measured Delta_theta^N, which for i.i.d. weights is a
    # random maximum that drifts with N: divide each error by its bound (Delta/N + 1/N^2, resp.
    # Delta/N^2 + 1/N^3) and require the ratio not to grow (slope <= 0 + 0.1 + 3 SE).  At seed 1157 (iid)
    # the raw slope is -0.86 +- 0.01 (Delta 13.3 -> 16.7 -> 14.7 -> 14.5) while the normalised one is
    # 0.12 +- 0.06: the bound holds, a fixed exponent -1 does not.
    Ns = np.array(GRID, float)
    D = np.array([r["Delta"] for r in rows], float)
    nr, ner = fit_slope(GRID, [r["recon"] / (d_ / n + 1 / n ** 2) for r, d_, n in zip(rows, D, Ns)])
    ng, neg = fit_slope(GRID, [r["grad"] / (d_ / n ** 2 + 1 / n ** 3) for r, d_, n in zip(rows, D, Ns)])
    parts = {"thesis_recon_rate": (max(nr, 0), SLOPE_TOL + 3 * ner),
             "thesis_grad_rate": (max(ng, 0), SLOPE_TOL + 3 * neg)}
    if p.family == "smooth":  # the catalogue's measured exponents (deterministic for smooth weights only)
        parts.update({f"recon_slope={mr:g}": (abs(sr - mr), SLOPE_TOL + 3 * ser),
                      f"grad_slope={mg:g}": (abs(sg - mg), SLOPE_TOL + 3 * seg)})
    eul = [_avg("euler", p.family, N, p.d, p.seed) for N in GRID]
    return Outcome.from_parts(parts, f"Heun ({p.family}): recon slope {sr:.3f}+-{ser:.3f}, grad slope {sg:.3f}+-{seg:.3f}", {
        "N": list(GRID), "recon": [r["recon"] for r in rows], "grad": [r["grad"] for r in rows],
        "grad_rel": [r["grad_rel"] for r in rows], "recon_slope": sr, "recon_slope_se": ser, "grad_slope": sg,
        "grad_slope_se": seg, "Delta_theta": [r["Delta"] for r in rows],
        "normalised_recon_slope": nr, "normalised_grad_slope": ng,
        "euler_grad_rel": [r["grad_rel"] for r in eul],
        "plot": {"kind": "loglog", "x": [float(n) for n in GRID],
                 "series": {"Heun reconstruction": [r["recon"] for r in rows], "Heun gradient": [r["grad"] for r in rows],
                            "Euler reconstruction": [r["recon"] for r in eul], "Euler gradient": [r["grad"] for r in eul]},
                 "xlabel": "depth N", "ylabel": "error",
                 "title": f"adjoint errors, {p.family} weights: Heun slopes {sr:.2f}, {sg:.2f}"}})


heun_rates.property(over=("seed", "family"), max_examples=6)


@heun_rates.falsifier("iid_gets_smooth_rates", fixed={"family": "iid"})
def _(p):
    """Wrong: Heun's fast rates (-3, -4) without smoothness in depth (A8: Heun benefits from smoothness)."""
    rows, (sr, ser), (sg, seg) = _rates("heun", p.family, p.d, p.seed)
    return Outcome.from_parts({"recon_slope=-3": (abs(sr + 3), SLOPE_TOL + 3 * ser),
                               "grad_slope=-4": (abs(sg + 4), SLOPE_TOL + 3 * seg)},
                              f"measured slopes {sr:.3f}, {sg:.3f}", {"recon_slope": sr, "grad_slope": sg})


# ===========================================================================
# A5, E3: Prop 2.11's constant
def _scalar_heun_error(N, eps, x0, case):
    """f(x, theta) = theta + eps sin(theta/eps) tanh x, theta_n alternating (case B: 0, pi eps/2; case A: -/+ pi eps/2).
    Returns max_n |x_n - x~_n| of the HeunNet (2.8) and its reversal (2.9)."""
    hi = math.pi * eps / 2
    th = [(0.0 if n % 2 == 0 else hi) if case == "B" else (-hi if n % 2 == 0 else hi) for n in range(N + 1)]

    def f(x, t):
        return t + eps * math.sin(t / eps) * math.tanh(x)
    xs = [x0]
    for n in range(N):
        f1 = f(xs[-1], th[n])
        xs.append(xs[-1] + (f1 + f(xs[-1] + f1 / N, th[n + 1])) / (2 * N))
    xr = xs[-1]
    err = 0.0
    for n in range(N - 1, -1, -1):
        f1 = f(xr, th[n + 1])
        xr = xr - (f1 + f(xr - f1 / N, th[n])) / (2 * N)
        err = max(err, abs(xr - xs[n]))
    # constants: L'_f = sup_x |psi_n'(x)| on a grid containing 0; L_theta = sup|1 + cos(t/eps) tanh x| = 2;
    # L'_theta = sup|cos(t/eps) sech^2 x| = 1; Delta = max |theta_{n+1} - theta_n|^2
    xg = np.linspace(-10, 10, 20001)
    Lp = 0.0
    for a, c in ((th[0], th[1]), (th[1], th[0])):      # (theta_n, theta_{n+1}) for both parities
        an, an1 = eps * math.sin(a / eps), eps * math.sin(c / eps)
        f1 = c + an1 * np.tanh(xg)
        dpsi = 0.5 * (an1 / np.cosh(xg) ** 2 + an / np.cosh(xg - f1 / N) ** 2 * (1 - an1 / np.cosh(xg) ** 2 / N))
        Lp = max(Lp, float(np.max(np.abs(dpsi))))
    Delta = max((th[n + 1] - th[n]) ** 2 for n in range(N))
    return err, dict(Lp_f=Lp, L_theta=2.0, Lp_theta=1.0, Delta=Delta, scale=max(abs(v) for v in xs))


heun_const = Claim(
    id="sander.heun_reconstruction_constant",
    title="Heun reversal error <= (e^{L'_f}-1) C'_f Delta/(L'_f N): the constant C'_f must be L'_theta L_theta/4",
    label="Prop 2.11",
    section="2.4, App 2.A.8",
    equation="(2.9), (2.16)-(2.17)",
    lines=(892, 894),
    statement=r"\|x_n-\tilde x_n\|\le\frac{(e^{L'_f}-1)C'_f}{L'_fN}\Delta_\theta^N+O(\tfrac1{N^2}),\quad C'_f=\tfrac14L'_fL_\theta",
    corrected=r"\|x_n-\tilde x_n\|\le\frac{(e^{L'_f}-1)C'_f}{L'_fN}\Delta_\theta^N+O(\tfrac1{N^2}),\quad C'_f=\tfrac14L'_\theta L_\theta",
    status="erratum", bound=True,
    params=[Param.int("N", 100, 10, 5000, "depth (the check also runs 4N)", search=(20, 800)),
            Param.float("eps", 0.05, 0.001, 0.3, "oscillation scale of f(x, theta) = theta + eps sin(theta/eps) tanh x",
                        search=(0.01, 0.2)),
            Param.float("x0", 0.3, -5.0, 5.0, "input (0.3 reproduces the catalogue's numbers)"),
            Param.choice("case", "B", ["B", "A"], "theta_n alternating 0, pi eps/2 (B) or -/+ pi eps/2 (A)")],
    notes="E3: L'_theta (Lipschitz constant of theta -> d_x f) is defined in the statement but unused; the step "
          "(2.16)->(2.17) needs (1/4)|J_{n+1}-J_n||f_{n+1}-f_n| <= (1/4) L'_theta L_theta Delta. The asymptotic "
          "statement is tested on the O(1/N) coefficient: residual 4N err(4N), tolerance c N-independent coefficient "
          "of the bound plus |4N err(4N) - N err(N)| (how far the coefficient still moves, covering the O(1/N^2) term).",
    catalogue="sander_part1 §2.3 A4, A5; §3.1 D9; §3.2 R4; §4 E3, E17",
    covers=("A4", "A5", "D9", "E3", "R4"),
)


def _heun_const_outcome(p, printed):
    e1, c1 = _scalar_heun_error(p.N, p.eps, p.x0, p.case)
    e4, c4 = _scalar_heun_error(4 * p.N, p.eps, p.x0, p.case)
    Lp = c4["Lp_f"]
    C = 0.25 * (Lp if printed else c4["Lp_theta"]) * c4["L_theta"]
    coef = (math.expm1(Lp) / Lp if Lp > 0 else 1.0) * C * c4["Delta"]
    drift = abs(4 * p.N * e4 - p.N * e1)
    rnd = 4 * p.N * 40 * EPS * c4["scale"] * 4 * p.N       # N steps of rounding, times 4N
    return Outcome(residual=4 * p.N * e4, tolerance=coef + drift + rnd, values={
        "N_err_N": p.N * e1, "N_err_4N": 4 * p.N * e4, "N_bound": coef, "C_prime_f": C, "Lp_f": Lp,
        "L_theta": c4["L_theta"], "Lp_theta": c4["Lp_theta"], "Delta": c4["Delta"], "drift": drift,
        "tightness": 4 * p.N * e4 / coef if coef > 0 else math.inf},
        message=f"N err = {p.N * e1:.4e} (N={p.N}), {4 * p.N * e4:.4e} (N={4 * p.N}) vs N bound {coef:.4e} "
                f"({'printed' if printed else 'corrected'} C'_f = {C:.4g})")


@heun_const.numeric
def _(p):
    """O(1/N) coefficient of max_n |x_n - x~_n| against the corrected bound (C'_f = L'_theta L_theta / 4)."""
    return _heun_const_outcome(p, printed=False)


heun_const.property(over=("N", "eps", "case"), max_examples=10)
heun_const.tightness(over=("N", "eps", "x0", "case"), max_examples=15, approached=False,
                     witnesses=[{"case": "A", "x0": 0.0}, {"case": "B", "x0": 0.0}],
                     finding="the corrected coefficient (e^L'_f - 1)/L'_f L'_theta L_theta Delta/4 is reached to a "
                             "ratio of 0.318 at best (N = 100, eps = 0.05, x0 = 0, case A; 17 draws) (the (2.16)->(2.17) step bounds |J_{n+1} - J_n| and "
                             "|f_{n+1} - f_n| by their sups separately; audit issue 21).")


@heun_const.reproduction(name="catalogue_numbers")
def _(p):
    """Catalogue R4/E3 (x0 = 0.3, eps = 0.05): case B N err = 1.0499e-3 for N = 100..3200, printed N bound 7.8078e-5,
    corrected 3.1231e-3; case A N err = 4.2602e-3, printed 2.3508e-7, corrected 1.2337e-2 (compared at 4-5 digits)."""
    quoted = {"B": (1.0499e-3, 7.8078e-5, 3.1231e-3), "A": (4.2602e-3, 2.3508e-7, 1.2337e-2)}
    parts, vals = {}, {}
    for case, (qe, qp, qc) in quoted.items():
        for N in ((100, 400, 3200) if case == "B" else (100,)):
            e, c = _scalar_heun_error(N, 0.05, 0.3, case)
            g = math.expm1(c["Lp_f"]) / c["Lp_f"] * c["Delta"] * c["L_theta"] / 4
            got = (N * e, g * c["Lp_f"], g * c["Lp_theta"])
            vals[f"{case}_N{N}"] = got
            for name, q, v in zip(("N_err", "N_bound_printed", "N_bound_corrected"), (qe, qp, qc), got):
                parts[f"{case}_N{N}_{name}"] = (abs(v - q), 0.6e-4 * q)    # quoted to 5 significant digits
    return Outcome.from_parts(parts, "catalogue E3 numbers recomputed", {"computed": vals, "quoted": quoted})


@heun_const.falsifier("stated")
def _(p):
    """Printed C'_f = L'_f L_theta / 4: N err = 1.05e-3 stays above N bound = 7.8e-5 as N grows."""
    return _heun_const_outcome(p, printed=True)


# ===========================================================================
# A6: Lemma 2.14
lemma214 = Claim(
    id="sander.heun_lemma_2_14",
    title="One Heun step followed by its reversal: defect (1/4N)(J_{n+1}-J_n)[f_{n+1}-f_n] + O(1/N^2)",
    label="Lemma 2.14",
    section="App 2.A.8",
    equation="(2.12)",
    lines=(1398, 1424),
    statement=r"\psi_n(x+\tfrac1N\varphi_n(x))-\varphi_n(x)=\tfrac1{4N}(J_{n+1}(x)-J_n(x))[f_{n+1}(x)-f_n(x)]+O(\tfrac1{N^2})",
    status="holds",
    params=[Param.int("N", 100, 2, 10**5, "depth (the check also runs 10N)", search=(10, 1000)),
            Param.int("d", 3, 1, 8, "dimension", search=(1, 5)),
            Param.seed("seed of W_n, W_{n+1}, b's and x")],
    notes="Typo (E17): 'x in R' should be x in R^d; checked for vectors with f_n = tanh(W_n x + b_n). Numeric: the "
          "remainder r(N) = |lhs - lead| satisfies (10N)^2 r(10N) <= 1.5 N^2 r(N) (bounded N^2 r), plus rounding "
          "8 d eps |f| (10N)^2.",
    catalogue="sander_part1 §2.3 A6; §3.1 D10; §3.2 R4",
    covers=("A6", "D10"),
)


def _l214(N, d, seed, c=0.25, xp=None):
    """Array API (NumPy, array-api-strict, CuPy): the Heun step, its reversal and the leading term on ``xp``
    (the instance is drawn on the host)."""
    xp = xp_of("numpy") if xp is None else xp
    rng = np.random.default_rng(seed)
    W0, W1 = rng.standard_normal((2, d, d)) / np.sqrt(d)
    b0, b1 = rng.standard_normal((2, d))
    x = rng.standard_normal(d)
    W0, W1, b0, b1, x = on(xp, W0, W1, b0, b1, x)

    def f0(z):
        return xp.tanh(xk.mv(xp, W0, z) + b0)

    def f1(z):
        return xp.tanh(xk.mv(xp, W1, z) + b1)

    def J(W, b, z):
        u = xp.tanh(xk.mv(xp, W, z) + b)
        return xp.expand_dims(1 - u * u, axis=-1) * W
    phi = 0.5 * (f0(x) + f1(x + f0(x) / N))
    z = x + phi / N
    psi = 0.5 * (f1(z) + f0(z - f1(z) / N))
    lhs = psi - phi
    lead = c / N * xk.mv(xp, J(W1, b1, x) - J(W0, b0, x), f1(x) - f0(x))
    nrm = xp.linalg.vector_norm
    return float(nrm(lhs - lead)), float(nrm(lead)), float(nrm(lhs))


def _l214_outcome(p, c):
    xp = xp_of(p)
    r1, l1, h1 = _l214(p.N, p.d, p.seed, c, xp)
    r2, l2, h2 = _l214(10 * p.N, p.d, p.seed, c, xp)
    if l1 < 1e-8 / p.N:
        return inconclusive("the leading term vanishes at this x (J_{n+1} - J_n)[f_{n+1} - f_n] = 0", lead=l1)
    a, b = p.N ** 2 * r1, (10 * p.N) ** 2 * r2
    rnd = 8 * p.d * EPS * (10 * p.N) ** 2
    return Outcome(residual=b, tolerance=1.5 * a + rnd, values={
        "N2_remainder_N": a, "N2_remainder_10N": b, "lead_N": l1, "lhs_N": h1, "lhs_over_lead_10N": h2 / l2},
        message=f"N^2 |lhs - lead|: {a:.4e} at N={p.N}, {b:.4e} at N={10 * p.N} (constant {c:g})")


@lemma214.numeric(backends=("numpy", "cupy"))
def _(p):
    """N^2 * |lhs - (1/4N)(J1 - J0)(f1 - f0)| stays bounded from N to 10N."""
    return _l214_outcome(p, 0.25)


lemma214.property(over=("N", "d", "seed"), max_examples=15)


@lemma214.falsifier("half_instead_of_quarter", backends=("numpy", "cupy"))
def _(p):
    """Leading term with 1/2: the remainder is then O(1/N), so N^2 * remainder grows x10."""
    return _l214_outcome(p, 0.5)


#: the leading term c (J_{n+1} - J_n)[f_{n+1} - f_n] / N of Lemma 2.14: c as printed, and misprints (mutants)
LEMMA214_FACTORS = {"stated": sp.Rational(1, 4), "half": sp.Rational(1, 2), "sign_flipped": -sp.Rational(1, 4)}


def _lemma214_orders(form):
    e, X, z = sp.symbols("epsilon X z")
    v0, g0, h0, v1, g1, h1 = sp.symbols("v0 g0 h0 v1 g1 h1")     # f_i(X), f_i'(X), f_i''(X)

    def f0(y):
        return v0 + g0 * (y - X) + h0 * (y - X) ** 2 / 2

    def f1(y):
        return v1 + g1 * (y - X) + h1 * (y - X) ** 2 / 2
    phi = (f0(X) + f1(X + e * f0(X))) / 2
    zz = X + e * phi
    psi = (f1(zz) + f0(zz - e * f1(zz))) / 2
    lead = LEMMA214_FACTORS[form] * e * (g1 - g0) * (v1 - v0)
    ser = sp.expand(psi - phi - lead)
    return sum(1 for k in range(2) if sp.expand(ser.coeff(e, k)) != 0)


@lemma214.symbolic(timeout=30)
def _(p):
    """Scalar f_0, f_1 by their second-order Taylor polynomials at x (symbolic values, slopes, curvatures; the
    first order in eps only involves f and f', the cubic remainder only enters at eps^2 and beyond): the
    coefficients of eps^0 and eps^1 in lhs - (eps/4)(f_1' - f_0')(f_1 - f_0) vanish, eps = 1/N."""
    nz = _lemma214_orders("stated")
    return Outcome(residual=nz, tolerance=0, values={"method": "sympy.expand, coefficients of eps^0, eps^1",
                                                     "proved": "orders 0 and 1 of psi(x + eps phi) - phi - lead vanish"},
                   message="orders with a nonzero coefficient")


@lemma214.mutant({"half": "leading term 1/(2N) (J_{n+1} - J_n)[f_{n+1} - f_n] instead of 1/(4N)",
                  "sign_flipped": "leading term -1/(4N) (J_{n+1} - J_n)[f_{n+1} - f_n]"}, timeout=30)
def _(p, variant):
    """The leading term perturbed, through the same expansion: the eps^1 coefficient must not vanish."""
    nz = _lemma214_orders(variant)
    return Outcome(residual=nz, tolerance=0, values={"nonzero_orders": nz},
                   message=f"{nz} of the orders eps^0, eps^1 do not vanish for {variant}")


# ===========================================================================
# A7, E4, E5: HeunNet parameter gradient (proof of Prop 2.12)
heun_grad = Claim(
    id="sander.heun_gradient_formula",
    title="HeunNet parameter gradient: the proof's formulas of Prop 2.12 have index errors",
    label="Prop 2.12 (proof)",
    section="App 2.A.9",
    equation="l.1480-1484",
    lines=(1476, 1486),
    statement=r"\nabla^1_{\theta_n}=\tfrac1{2N}(\partial_\theta f(x_n,\theta_n)+\tfrac1N\partial_xf(y_n,\theta_{n+1})\partial_\theta f(x_n,\theta_n))^\top\nabla_{x_n}L,\ "
              r"\nabla^2_{\theta_n}=\tfrac1{2N}\partial_\theta f(y_{n-1},\theta_{n-1})^\top(I+\tfrac1N\partial_xf(x_{n-1},\theta_{n-1}))^\top\nabla_{x_{n-1}}L",
    corrected=r"\nabla^1_{\theta_n}=\tfrac1{2N}(\partial_\theta f(x_n,\theta_n)+\tfrac1N\partial_xf(y_n,\theta_{n+1})\partial_\theta f(x_n,\theta_n))^\top\nabla_{x_{n+1}}L,\ "
              r"\nabla^2_{\theta_n}=\tfrac1{2N}\partial_\theta f(y_{n-1},\theta_n)^\top\nabla_{x_n}L",
    status="erratum",
    params=[Param.int("N", 6, 1, 64, "depth", search=(2, 12)),
            Param.int("d", 3, 1, 6, "dimension", search=(1, 4)),
            Param.seed("seed"),
            Param.choice("family", "iid", FAMILIES, "weight family")],
    notes="E4 (proof only; the rate of Prop 2.12 is measured in sander.adjoint_heun_rates). E5 (l.1458): "
          "nabla_{x_n} L = (I + d_x phi_n(x_n)/N)^T nabla_{x_{n+1}} L, Jacobian at x_n, not x_{n+1} (the kernel "
          "solvers.resnet_ode.heun_backward uses x_n). Checked against central finite differences (solvers.fd) with "
          "its Richardson error estimate x10.",
    catalogue="sander_part1 §2.3 A7; §4 E4, E5",
    covers=("A7", "E4", "E5"),
)


def _heun_formula(p, printed):
    W, b, x0, y = _draw(p.family, p.N, p.d, p.seed, True)
    N = p.N
    xs, ys = ro.heun_forward_numpy(x0, W, b, N)
    # exact dL/dx_n for every n (the kernel's recursion, stored)
    gs = [None] * (N + 1)
    gs[N] = xs[-1] - y
    dWk, dbk = np.zeros_like(W), np.zeros_like(b)
    for n in range(N - 1, -1, -1):
        gs[n] = ro._heun_step_back_numpy(xs[n], W, b, n, gs[n + 1], N, dWk, dbk)

    def dtheta_T(x, n, v):              # d_theta f(x, theta_n)^T v for f = tanh(W_n x + b_n)
        u = np.tanh(x @ W[n].T + b[n])
        a = v * (1 - u * u)
        return a.T @ x, a.sum(0)

    def Jt(x, n, v):                   # (d_x f(x, theta_n))^T v
        u = np.tanh(x @ W[n].T + b[n])
        return (v * (1 - u * u)) @ W[n]
    gW, gb = np.zeros_like(W), np.zeros_like(b)
    for n in range(N + 1):
        if n <= N - 1:
            g = gs[n] if printed else gs[n + 1]
            v = (g + Jt(ys[n], n + 1, g) / N) / (2 * N)
            A, B = dtheta_T(xs[n], n, v)
            gW[n] += A
            gb[n] += B
        if n >= 1:
            if printed:
                v = (gs[n - 1] + Jt(xs[n - 1], n - 1, gs[n - 1]) / N) / (2 * N)
                A, B = dtheta_T(ys[n - 1], n - 1, v)
            else:
                A, B = dtheta_T(ys[n - 1], n, gs[n] / (2 * N))
            gW[n] += A
            gb[n] += B

    def loss(W_, b_):
        return ro.half_sq_loss(ro.heun_forward_numpy(x0, W_, b_, N)[0][-1], y)[0]
    (fW, fb), (eW, eb) = gradient_with_error(loss, [W, b], h=1e-5)
    dev = max(float(np.max(np.abs(gW - fW) - 10 * eW)), float(np.max(np.abs(gb - fb) - 10 * eb)))
    per = [float(np.sqrt(np.sum((gW[n] - fW[n]) ** 2) + np.sum((gb[n] - fb[n]) ** 2))
                 / max(np.sqrt(np.sum(fW[n] ** 2) + np.sum(fb[n] ** 2)), 1e-300)) for n in range(N + 1)]
    kern = ro.heun_backward(xs, W, b, gs[N], N)
    kdev = float(max(np.max(np.abs(kern[0] - fW) - 10 * eW), np.max(np.abs(kern[1] - fb) - 10 * eb)))
    tol = 1e-12 * max(1.0, float(np.abs(fW).max()))
    parts = {"formula_vs_fd": (max(dev, 0.0), tol)}
    if not printed:
        parts["kernel_vs_fd"] = (max(kdev, 0.0), tol)
    return Outcome.from_parts(parts, f"{'printed' if printed else 'corrected'} Heun gradient formula vs central FD", {
        "relative_error_per_layer": per, "max_relative_error": max(per), "fd_error_estimate": float(max(eW.max(), eb.max()))})


@heun_grad.numeric
def _(p):
    """Corrected formulas (and the kernel) against central finite differences, every layer 0..N."""
    return _heun_formula(p, printed=False)


heun_grad.property(over=("N", "d", "seed", "family"), max_examples=10)


@heun_grad.falsifier("stated")
def _(p):
    """Printed formulas (nabla_{x_n} in grad^1; theta_{n-1}, (I + J/N)^T nabla_{x_{n-1}} in grad^2): ~18% off."""
    return _heun_formula(p, printed=True)


# ===========================================================================
# X2.7: memory of a ResNet-152
def _resnet152_counts():
    """Parameters of the bottleneck ResNet-152 ([3, 8, 36, 3], torchvision v1.5 layout: stride on the 3x3 conv) and
    the number of conv-output activations per 224x224 image."""
    def block(cin, mid, down):
        q = cin * mid + 2 * mid + mid * mid * 9 + 2 * mid + mid * 4 * mid + 2 * 4 * mid
        return q + (cin * 4 * mid + 2 * 4 * mid if down else 0)
    params, cin, acts, H = 7 * 7 * 3 * 64 + 2 * 64, 64, 64 * 112 * 112, 56
    for mid, nblocks, stride in ((64, 3, 1), (128, 8, 2), (256, 36, 2), (512, 3, 2)):
        for i in range(nblocks):
            params += block(cin, mid, i == 0)
            Ho = H // (stride if i == 0 else 1)
            acts += mid * H * H + mid * Ho * Ho + 4 * mid * Ho * Ho + (4 * mid * Ho * Ho if i == 0 else 0)
            H, cin = Ho, 4 * mid
    return params + 2048 * 1000 + 1000, acts


memory = Claim(
    id="sander.resnet152_memory",
    title="ResNet-152, batch 128: about 22 GiB of activations against 220 MiB of parameters",
    label="Sec 2.2 'Memory bottleneck'",
    section="2.2",
    lines=(773, 775),
    statement=r"\text{ResNet-152, ImageNet, batch 128: activations}\approx22\text{ GiB},\ \text{parameters}\approx220\text{ MiB}",
    status="empirical",
    params=[],
    notes="Parameter count from the architecture (60,192,808 float32 = 229.6 MiB: the quoted 220 MiB is ~4% low, E17 "
          "cosmetic). Activation memory depends on what a framework stores: every conv output stored twice (conv and "
          "BN/ReLU outputs) gives 21.5 GiB, once 10.8 GiB (catalogue X2.7) [heuristic].",
    catalogue="sander_part1 §2.4 X2.7; §3.1 D12; §4 E17",
    covers=("X2.7", "D12"),
)


@memory.reproduction(name="parameter_count")
def _(p):
    """60,192,808 parameters = 229.6 MiB (vs the quoted 220 MiB, compared at 5%); activations x2 = 21.5 GiB (vs ~22 GiB)."""
    params, acts = _resnet152_counts()
    mib = params * 4 / 2**20
    gib2 = acts * 2 * 128 * 4 / 2**30
    parts = {"params_exact": (abs(params - 60_192_808), 0), "MiB_vs_220_at_5%": (abs(mib - 220) / 220, 0.05),
             "GiB_vs_22_at_5%": (abs(gib2 - 22) / 22, 0.05)}
    return Outcome.from_parts(parts, f"{params:,} parameters = {mib:.1f} MiB; activations (x2) {gib2:.2f} GiB", {
        "parameters": params, "MiB": mib, "activations_GiB_stored_twice": gib2, "activations_GiB_stored_once": gib2 / 2})


# ===========================================================================
# X2.1-X2.4, X2.8: GPU experiments, registered only
experiments = Claim(
    id="sander.resnet_ode_experiments",
    title="CIFAR-10/ImageNet experiments: 1/N scaling is harmless, tied-weight pretraining + adjoint fine-tuning works",
    label="Tables 2.1-2.2, Fig 2.3(a,b)",
    section="2.5, App 2.B-2.C",
    lines=(903, 940),
    statement=r"\text{ResNet-101 with/without }1/N:\ 95.5\pm0.1\%\text{ vs }95.5\pm0.1\%\ (\text{CIFAR-10}),\ 77.8\%\text{ vs }77.9\%"
              r"\ (\text{ImageNet});\ \text{adjoint fine-tuning }95.25\to95.65\%,\ 73.1\to75.1\%",
    status="empirical",
    params=[],
    notes="Not reproducible here (GPU-days, real data, no downloads): X2.1 Table 2.1; X2.2 Fig 2.3(a) and the tied-"
          "weight ImageNet runs (72.5/73.2/72%); X2.3 Table 2.2 and transfer (>94.5%, 72%, 75.1%); X2.4 Fig 2.3(b) "
          "(adjoint fails on ResNet-101 layer 3, 23 blocks: consistent with the O(1/N) error at N = 23) [H]; X2.8 "
          "training recipes (SGD, momentum 0.9, weight decay 5e-4/1e-4, 200/90/100 epochs, fine-tuning 5/3 epochs). "
          "CPU analogues: sander.adjoint_training_cpu (Fig 2.4), sander.adjoint_heun_rates (Fig 2.3(c)).",
    catalogue="sander_part1 §2.4 X2.1-X2.4, X2.8; §3.1 D11",
    covers=("X2.1", "X2.2", "X2.3", "X2.4", "X2.8", "D11"),
)


# ===========================================================================
# X2.6 (Fig 2.4) CPU analogue, catalogue R5
train = Claim(
    id="sander.adjoint_training_cpu",
    title="Training with memory-free gradients: Euler adjoint hurts at small depth only; Heun adjoint is close to exact",
    label="Fig 2.4",
    section="2.5",
    lines=(932, 940),
    statement=r"\text{adjoint training: large test error at small depth, equal at large depth; Heun adjoint}\ge\text{Euler adjoint}",
    status="empirical",
    params=[],
    notes="CPU analogue (catalogue R5): d = 4, 200 train / 200 test points, teacher = depth-64 smooth tanh ResNet, "
          "students f = tanh(Wx+b) ResNet/HeunNet with tied initialisation, full-batch GD, lr 0.5 N, 400 steps; each "
          "trained with exact and with memory-free (adjoint) gradients (solvers.resnet_ode kernels). Trend assertions "
          "only (catalogue: at N >= 8 the Euler adjoint can be slightly better than exact, optimisation noise at a "
          "capacity-limited plateau): |adjoint - exact| test loss shrinks from N = 2 to N = 64 (Euler), and the Heun "
          "adjoint gap is below the Euler adjoint gap at N <= 4. Catalogue: Euler exact/adjoint 2.4365/2.5596 at N = 2, "
          "Heun 2.3195/2.3320 (its teacher draw is unrecorded).",
    catalogue="sander_part1 §2.4 X2.5, X2.6; §3.2 R5",
    covers=("X2.6", "R5"),
)


def _train_student(method, adjoint, N, Xtr, Ytr, Xte, Yte, steps=400, lr_scale=0.5, seed=0):
    rng = np.random.default_rng(seed)
    d = Xtr.shape[1]
    K = N + 1
    W = np.repeat(0.1 * rng.standard_normal((1, d, d)), K, axis=0)
    b = np.repeat(0.1 * rng.standard_normal((1, d)), K, axis=0)
    nb = Xtr.shape[0]
    heun = method == "heun"
    for _ in range(steps):
        if heun:
            xs = ro.heun_forward(Xtr, W, b, N)[0]
        else:
            xs = ro.euler_forward(Xtr, W[:N], b[:N], N)
        gN = (xs[-1] - Ytr) / nb
        if heun:
            dW, db = (ro.heun_adjoint(xs[-1], W, b, gN, N) if adjoint else ro.heun_backward(xs, W, b, gN, N))[:2]
        else:
            dW, db = (ro.euler_adjoint(xs[-1], W[:N], b[:N], gN, N) if adjoint else ro.euler_backward(xs, W[:N], b[:N], gN, N))[:2]
            dW = np.concatenate([dW, np.zeros((1, d, d))])
            db = np.concatenate([db, np.zeros((1, d))])
        W -= lr_scale * N * dW
        b -= lr_scale * N * db
    out = ro.heun_forward(Xte, W, b, N)[0][-1] if heun else ro.euler_forward(Xte, W[:N], b[:N], N)[-1]
    return float(np.mean(np.sum((out - Yte) ** 2, axis=1)))


@train.reproduction(name="cpu_fig24", slow=True)
def _(p):
    """Test loss of Euler/Heun students, exact vs adjoint gradients, N = 2, 4, 8, 16, 64 (about 30 s)."""
    rng = np.random.default_rng(11)
    d, n = 4, 200
    Wt, bt = ro.smooth_weights(64, d, rng, scale=2.0)
    X = rng.standard_normal((2 * n, d))
    Y = ro.euler_forward(X, Wt, bt, 64)[-1]
    Xtr, Ytr, Xte, Yte = X[:n], Y[:n], X[n:], Y[n:]
    Ns = [2, 4, 8, 16, 64]
    table = {}
    for N in Ns:
        table[N] = {f"{m}_{'adjoint' if a else 'exact'}": _train_student(m, a, N, Xtr, Ytr, Xte, Yte)
                    for m in ("euler", "heun") for a in (False, True)}
    gap_e = {N: abs(table[N]["euler_adjoint"] - table[N]["euler_exact"]) for N in Ns}
    gap_h = {N: abs(table[N]["heun_adjoint"] - table[N]["heun_exact"]) for N in Ns}
    parts = {"euler_gap_shrinks": (gap_e[64], gap_e[2]),
             "heun_gap<=euler_gap_N2": (gap_h[2], gap_e[2]), "heun_gap<=euler_gap_N4": (gap_h[4], gap_e[4])}
    return Outcome.from_parts(parts, "Fig 2.4 trends at CPU scale", {
        "test_loss": {str(k): v for k, v in table.items()}, "euler_gap": gap_e, "heun_gap": gap_h,
        "plot": {"kind": "semilogx", "x": [float(N) for N in Ns],
                 "series": {k: [table[N][k] for N in Ns] for k in table[Ns[0]]},
                 "xlabel": "depth N", "ylabel": "test loss", "title": "CPU analogue of Fig 2.4"}})
