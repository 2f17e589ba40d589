"""Chapter 2, Sec 2.4 "Adjoint Method in Residual Networks" (seed l.854-910), with the proofs of App 2.A.6-2.A.8
(l.1316-1453): memory-free (adjoint) backpropagation for ResNets and HeunNets.  Prop 2.9 (l.856-872; reversal
by backward Euler, ``sander.adjoint_reconstruction_euler``), Prop 2.10 (l.874-880; ``sander.adjoint_gradient_euler``),
the measured rates of Props 2.9-2.12 (l.866-898; ``sander.adjoint_euler_rates``, ``sander.adjoint_heun_rates``) and
Prop 2.11's constant (l.892-894, erratum E3; ``sander.heun_reconstruction_constant``).

Catalogue sander_part1 §2.3 (A1-A5, A8), §3.2 R3-R5, §4 E3, E17.  Harness and notation decisions (the
"error in gradients", ``C_f``, ``L_f``, the ``N + 1`` HeunNet parameter sets, ``Delta_theta^N``, the ``smooth``
and ``iid`` weight families): see :mod:`theorems.sander._resnet_harness`.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import resnet_ode as ro
from theorems.claim import Claim, Outcome, Param, ParamError
from theorems.sander._resnet_harness import FAMILIES, _draw, _fit_slope


EPS = float(np.finfo(float).eps)


GRID = (64, 128, 256, 512)
#: the i.i.d. family's rates are fitted further out: at d = 1 the mean gradient slope over N = 64..512 is pre-asymptotic
#: (fresh sweep 27182818 draw 15: -1.80 +- 0.028, refuted against -2 +- (0.1 + 3 SE)); on the same seeds it is -1.89 over
#: 128..1024 and -1.94 +- 0.037 over 256..2048 (d = 2: -1.91, d = 4: -1.99 on 64..512), converging to the claimed -2
IID_GRID = (256, 512, 1024, 2048)


N_SEEDS_IID = 4


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


def _common_params(N_default=64, N_search=(4, 512), N_max=20_000, N_min=1):
    return [
        Param.int("N", N_default, N_min, N_max, "depth", search=N_search),
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
                   values={"err_N": e1["recon"], "err_2N": e2["recon"], "ratio": e2["recon"] / e1["recon"],
                           "claimed_value": 0.25 * e1["recon"] + e2["rounding"]},   # what 1/N^2 predicts
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
    # N <= 2048 (audit issue 21): the iid family's error model runs 8 seeds at N and 2N; at N = 4326 that took 48 s of
    # the sweep's 60 s on the shared machine, and N = 20000 would take minutes
    # (and N >= 8, what _validate_rate_N asks: the declared 1 made the sweep resample rejected draws).
    # N >= 64 (session 10, narrowed from 8): the doubling test reads the asymptotic rate, and below N = 64 the smooth
    # family (W_n = W0 + sin(2 pi n/N) W1) is pre-asymptotic: fresh sweep 4100703 refuted N = 10, d = 2 with
    # N^2 err 0.997 -> 1.258 (ratio 1.26), which then settles at 1.33, 1.39, 1.42, 1.44 for N = 32..256.  Worst
    # doubling ratio over random (seed, d): 1.47-2.41 at N = 8..28 (60 draws), 1.22 at N = 36 (300 draws), 1.15 over
    # N log-uniform in [64, 300] (400 draws), against the tolerance 1.2
    params=_common_params(N_default=64, N_search=(64, 256), N_max=2048, N_min=64),
    validate=_validate_rate_N,
    notes="Tested as the catalogue's (c): (2N)^2 err(2N) <= 1.2 N^2 err(N), i.e. N^2 err is not growing. Error = max "
          "over layers of the Frobenius norm of the (W_n, b_n) gradient difference; iid family: geometric mean over "
          f"{N_SEEDS_IID} draws. The relative error is O(1/N). The explicit constant of the proof (l.1384-1388) renames "
          "Delta/Omega of the statement as L_theta/C_theta (cosmetic). The off-by-one variant of (2.7) (x_{n+1} inside "
          "d_theta f) is also O(1/N^2) (catalogue A3(d)), so it is no falsifier of the rate.  iid family (audit issue 21): "
          "each depth draws its own networks, so the ratio is random; it is judged as exp(mean log ratio) over 8 seeds "
          "<= 1.2 exp(3 SE) (a flat 1.2 refuted N = 18 at seed 777001 with 1.62).",
    catalogue="sander_part1 §2.3 A3; §3.2 R3",
    covers=("A3",),
)


#: i.i.d. weights: seeds whose spread is the error model of a comparison across depths (each depth draws its own
#: networks, so the doubling ratio and the fitted slope are random variables: audit issue 21, seed 777001 refuted
#: N = 18 (ratio 1.62 of geometric means over 4 seeds) and d = 1 (slope -1.735 +- 0.046, the fit's SE, while the
#: per-seed slopes spread from -1.57 to -2.05))
IID_SPREAD_SEEDS = 8


def _ratio_outcome(p, power, factor=1.2):
    if p.family == "iid":
        # error model of a random ratio: per seed j the log ratio r_j = log((2N)^p err_j(2N)) - log(N^p err_j(N)) of
        # two independent networks; the geometric-mean ratio exp(mean r) must stay below factor x exp(3 SE), SE the
        # standard error of mean r over IID_SPREAD_SEEDS seeds (a growing N^p err drifts by log 2 per doubling at
        # p -> p + 1, which 3 SE does not absorb once the seeds agree)
        l1, r, rnd, rel1, rel2 = [], [], 0.0, [], []
        for j in range(IID_SPREAD_SEEDS):
            m1 = measure("euler", "iid", p.N, p.d, p.seed + j, p.backend)
            m2 = measure("euler", "iid", 2 * p.N, p.d, p.seed + j, p.backend)
            l1.append(math.log(max(m1["grad"], 1e-300)))
            r.append(math.log(max(2 ** power * m2["grad"], 1e-300)) - l1[-1])
            rnd = max(rnd, (2 * p.N) ** power * m2["grad_rounding"])
            rel1.append(m1["grad_rel"]); rel2.append(m2["grad_rel"])
        r = np.array(r)
        se = float(np.std(r, ddof=1) / math.sqrt(len(r)))
        c1 = p.N ** power * float(np.exp(np.mean(l1)))
        c2 = c1 * float(np.exp(np.mean(r)))
        tol = factor * c1 * math.exp(3 * se) + rnd
        claimed = c1 + rnd      # N^p err unchanged from N to 2N: what the rate 1/N^p predicts
        vals = {f"N^{power}_err_N": c1, f"N^{power}_err_2N": c2, "grad_err_N": c1 / p.N ** power,
                "grad_err_2N": c2 / (2 * p.N) ** power, "rel_err_N": float(np.exp(np.mean(np.log(rel1)))),
                "rel_err_2N": float(np.exp(np.mean(np.log(rel2)))), "log_ratio_mean": float(np.mean(r)),
                "log_ratio_se": se, "seeds": IID_SPREAD_SEEDS}
    else:
        a = _avg("euler", p.family, p.N, p.d, p.seed, p.backend)
        b = _avg("euler", p.family, 2 * p.N, p.d, p.seed, p.backend)
        c1, c2 = p.N ** power * a["grad"], (2 * p.N) ** power * b["grad"]
        tol = factor * c1 + (2 * p.N) ** power * b["grad_rounding"]
        claimed = c1 + (2 * p.N) ** power * b["grad_rounding"]
        vals = {"grad_err_N": a["grad"], "grad_err_2N": b["grad"], f"N^{power}_err_N": c1, f"N^{power}_err_2N": c2,
                "rel_err_N": a["grad_rel"], "rel_err_2N": b["grad_rel"]}
    return Outcome(residual=c2, tolerance=tol, values={**vals, "claimed_value": claimed},
                   message=f"N^{power} * gradient error: {c1:.4f} at N={p.N}, {c2:.4f} at N={2 * p.N}")


def _iid_slopes(method, d, seed, Ns=GRID, k=IID_SPREAD_SEEDS):
    """i.i.d. weights: the reconstruction and gradient slopes fitted per seed (each seed its own sequence of networks)
    and their means with the standard errors of the means (the error model of a slope across random networks)."""
    rs, gs = [], []
    for j in range(k):
        ms = [measure(method, "iid", N, d, seed + j) for N in Ns]
        rs.append(_fit_slope(Ns, [m["recon"] for m in ms])[0])
        gs.append(_fit_slope(Ns, [m["grad"] for m in ms])[0])
    return ((float(np.mean(rs)), float(np.std(rs, ddof=1) / math.sqrt(k))),
            (float(np.mean(gs)), float(np.std(gs, ddof=1) / math.sqrt(k))))


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
    sr, ser = _fit_slope(Ns, [r["recon"] for r in rows])
    sg, seg = _fit_slope(Ns, [r["grad"] for r in rows])
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
    notes="Least-squares slopes of log error against log N over N = 64, 128, 256, 512 (iid: N = 256..2048, the "
          "asymptotic range at d = 1; geometric mean of "
          f"{N_SEEDS_IID} draws per N); certified when |slope - claimed| <= 0.1 + 3 standard errors. Catalogue "
          "measured N err -> 0.382 (smooth), N^2 grad err -> 1.63 (smooth) for its own draw.  iid family (audit issue 21): "
          "the slopes are the means of 8 per-seed fits with the standard error of the mean (the geometric-mean fit's "
          "own SE, 0.046, hid a per-seed spread -1.57..-2.05 at d = 1 and refuted that draw).",
    catalogue="sander_part1 §2.3 A2, A3, A8; §3.2 R3",
    covers=("A8", "R3"),
)


@euler_rates.numeric
def _(p):
    """Fitted slopes of the reconstruction (-1) and gradient (-2) errors over N = 64..512, loglog plot."""
    rows, (sr, ser), (sg, seg) = _rates("euler", p.family, p.d, p.seed)
    if p.family == "iid":
        # the slope of the geometric mean has the fit's SE only; across random networks the per-seed spread is the
        # error model (see IID_SPREAD_SEEDS)
        (sr, ser), (sg, seg) = _iid_slopes("euler", p.d, p.seed, Ns=IID_GRID)
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
          "maximum that drifts with N, so a fixed exponent is not a claim: at seed 1157 the raw slope is -0.86. i.i.d. rates are fitted over "
          "N = 256..2048 (IID_GRID, as for Euler): over 64..512 the normalised gradient slope was +0.24 +- 0.02 at "
          "d = 3 (fresh sweep 4100433, refuted), pre-asymptotic; +0.07 +- 0.05 over 256..2048.",
    catalogue="sander_part1 §2.3 A5, A7, A8; §2.4 X2.5; §3.2 R3",
    covers=("A5", "A7", "A8", "X2.5"),
)


HEUN_EXPECT = {"smooth": ((-2.0, -3.0), (-3.0, -4.0)), "iid": ((-1.0, -2.0), (-1.0, -2.0))}


@heun_rates.numeric
def _(p):
    """Fitted slopes of the Heun reconstruction and gradient errors over N = 64..512 (iid: 256..2048), against thesis
    and catalogue."""
    # i.i.d. weights: fitted over IID_GRID, as for Euler (fresh sweep 4100433, d = 3: the normalised gradient slope
    # was +0.24 +- 0.02 over 64..512, pre-asymptotic, against 0.1 + 3 SE)
    grid = IID_GRID if p.family == "iid" else GRID
    rows, (sr, ser), (sg, seg) = _rates("heun", p.family, p.d, p.seed, Ns=grid)
    (tr, tg), (mr, mg) = HEUN_EXPECT[p.family]
    # The thesis's rates are in terms of the measured Delta_theta^N, which for i.i.d. weights is a
    # random maximum that drifts with N: divide each error by its bound (Delta/N + 1/N^2, resp.
    # Delta/N^2 + 1/N^3) and require the ratio not to grow (slope <= 0 + 0.1 + 3 SE).  At seed 1157 (iid)
    # the raw slope is -0.86 +- 0.01 (Delta 13.3 -> 16.7 -> 14.7 -> 14.5) while the normalised one is
    # 0.12 +- 0.06: the bound holds, a fixed exponent -1 does not.
    Ns = np.array(grid, float)
    D = np.array([r["Delta"] for r in rows], float)
    nr, ner = _fit_slope(grid, [r["recon"] / (d_ / n + 1 / n ** 2) for r, d_, n in zip(rows, D, Ns)])
    ng, neg = _fit_slope(grid, [r["grad"] / (d_ / n ** 2 + 1 / n ** 3) for r, d_, n in zip(rows, D, Ns)])
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
    rows, (sr, ser), (sg, seg) = _rates("heun", p.family, p.d, p.seed, Ns=IID_GRID)
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
