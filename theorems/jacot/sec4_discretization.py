"""§4 Discretization Scheme (seed l.223-237; catalogue §2.6 D1-D5, E16): the step condition
rho_l Lt < 1 (l.229-235), the irregular mesh (sums to 1 only for even L; l.225-235), the hand-written
backward pass of the discretised leaky ResNet (``solvers.leaky_net``; l.225-229), the discrete critical
weights (the discrete form of l.146-150) and the adaptive step rule (l.237).  Claims:
``jacot.discrete_step_condition``, ``jacot.irregular_mesh_sum``, ``jacot.discrete_gradient``,
``jacot.discrete_critical_weights``, ``jacot.adaptive_steps``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import fd
from solvers import leaky_net as ln
from theorems.claim import Claim, inconclusive, Outcome, Param, ParamError

EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------
# D2/D3 (+ D4's condition): rho_l Lt < 1
steps = Claim(
    id="jacot.discrete_step_condition",
    title="L > (1 + a/4) Lt keeps every prefactor 1 - rho_l Lt positive (equidistant, a = 0: L > Lt)",
    label="§4, D2-D4",
    section="4",
    equation="l.229-235",
    lines=(229, 235),
    statement=r"\rho_\ell\tilde L<1\Rightarrow 1-\rho_\ell\tilde L>0;\quad \rho_\ell=\tfrac1L:\ \rho_\ell\tilde L<1"
              r"\iff L>\tilde L;\quad \rho_\ell=\tfrac1L+\tfrac aL(\tfrac14-|\tfrac\ell L-\tfrac12|):\ "
              r"L>(1+\tfrac a4)\tilde L\Rightarrow\rho_\ell\tilde L<1",
    status="holds",
    params=[
        Param.int("L", 20, 1, 10_000, "number of layers", search=(1, 200)),
        Param.float("Lt", 3.0, 0.0, 1000.0, "effective depth Lt", search=(0.0, 50.0)),
        Param.float("a", 0.5, 0.0, 1.0, "irregularity of the mesh (a = 0: equidistant)", high_open=True,
                    search=(0.0, 0.99)),
        Param.bool("normalise", True, "divide the irregular mesh by its sum (E16; no-op for even L)"),
    ],
    notes="D2 is trivial; the check is that the paper's sufficient condition implies rho_l Lt < 1, and that it "
          "is sharp for even L (max_l rho_l L = 1 + a/4 exactly, attained at l = L/2). For odd L the maximum "
          "is (1 + a/4 - a/(2L)) (divided by 1 - a/(4L^2) when normalised), still <= 1 + a/4, so the "
          "condition stays sufficient. solvers.leaky_net.check_inputs rejects rho_l Lt >= 1 naming D2.",
    catalogue="jacot §2.6 D2, D3, D4",
    covers=("D2", "D3", "D4"),
)


def _mesh(p):
    return ln.irregular(p.L, p.a, normalise=p.normalise)


def _steps_outcome(p, factor):
    rho = _mesh(p)
    mx = float(rho.max() * p.L)
    cond = p.L > factor * p.Lt
    ok = bool(np.all(1 - rho * p.Lt > 0))
    # exact maximum for even L (l = L/2): 1 + a/4; rounding of the mesh ~ L eps
    tol = 10 * p.L * EPS
    parts = {"condition => prefactors > 0": (0.0 if (ok or not cond) else 1.0, 0.0)}
    if p.L % 2 == 0:
        parts["max rho L = 1 + a/4 (even L)"] = (abs(mx - (1 + p.a / 4)), tol)
    else:
        parts["max rho L <= 1 + a/4 (odd L)"] = (max(0.0, mx - (1 + p.a / 4)), tol)
    return Outcome.from_parts(parts, message=f"condition L > {factor:.4g} Lt is {cond}; min prefactor "
                              f"{float(np.min(1 - rho * p.Lt)):.4g}; max rho L = {mx:.12g}",
                              values={"max_rho_L": mx, "condition": cond, "prefactors_positive": ok})


@steps.numeric
def _(p):
    """The sufficient condition L > (1 + a/4) Lt against the actual min prefactor, and max rho L."""
    return _steps_outcome(p, 1 + p.a / 4)


steps.property(over=("L", "Lt", "a", "normalise"), max_examples=40)


@steps.falsifier("equidistant_condition_for_irregular", search=("L", "Lt"),
                 fixed={"L": 20, "Lt": 19.0, "a": 0.9})
def _(p):
    """Use the equidistant condition L > Lt for the irregular mesh (a = 0.9): prefactors go negative."""
    return _steps_outcome(p, 1.0)


def _steps_symbolic(c_of_a):
    """max_l rho_l L of the printed irregular mesh, for L = 2m and L = 2m + 1: on each side of l = L/2 the |.| is
    linear, rho_l L is monotone in l (sign of the l-derivative checked), so the candidates are l = m and l = m + 1.
    The condition L > c Lt implies rho_l Lt < 1 iff c >= every candidate; it is sharp iff c equals the even-L
    maximum.  Failures: a branch not monotone as assumed, c below a candidate, c not equal to the even maximum."""
    m, a, l = sp.symbols("m a l", positive=True)
    c = c_of_a(a)
    bad = 0
    for L in (2 * m, 2 * m + 1):
        left = L * (1 / L + a / L * (sp.Rational(1, 4) - (sp.Rational(1, 2) - l / L)))  # l <= L/2
        right = L * (1 / L + a / L * (sp.Rational(1, 4) - (l / L - sp.Rational(1, 2))))  # l >= L/2
        bad += int(not sp.diff(left, l).is_positive) + int(not sp.diff(right, l).is_negative)
        cands = [sp.cancel(left.subs(l, m)), sp.cancel(right.subs(l, m + 1))]
        for v in cands:
            gap = sp.factor(sp.cancel(c - v))
            bad += int(not (gap.is_nonnegative or gap == 0))
        if L == 2 * m:  # the maximum is the l = m candidate (it dominates l = m + 1), and c must equal it
            bad += int(not sp.factor(sp.cancel(cands[0] - cands[1])).is_nonnegative)
            bad += int(sp.cancel(c - cands[0]) != 0)
    return bad


@steps.symbolic(timeout=30)
def _(p):
    """Even and odd L: the maximum of rho_l L over l is 1 + a/4 (attained at l = L/2 for even L), so L > (1 + a/4) Lt
    is sufficient and sharp."""
    bad = _steps_symbolic(lambda a: 1 + a / 4)
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy: monotone branches, candidates, sign", "proved":
                   "max_l rho_l L = 1 + a/4 for L = 2m and 1 + a/4 - a/(2L) for L = 2m+1; the printed condition is "
                   "sufficient and sharp"},
                   message="failed: branch monotonicity, sufficiency or sharpness")


@steps.mutant({"equidistant_condition": "L > Lt for the irregular mesh (the a/4 dropped): not sufficient",
               "a_over_2": "L > (1 + a/2) Lt: sufficient but not the sharp condition"}, timeout=30)
def _(p, variant):
    """The condition perturbed, through the same procedure: sufficiency or sharpness must fail."""
    bad = _steps_symbolic({"equidistant_condition": lambda a: sp.Integer(1), "a_over_2": lambda a: 1 + a / 2}[variant])
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} items failed")


# ---------------------------------------------------------------------------
# D4 / E16: the irregular mesh sums to 1 only for even L
mesh = Claim(
    id="jacot.irregular_mesh_sum",
    title="The irregular layer steps sum to 1 only for even L (odd L: 1 - a/(4L^2))",
    label="§4, Irregular",
    section="4",
    equation="l.235",
    lines=(225, 235),
    statement=r"\rho_\ell=\tfrac1L+\tfrac aL(\tfrac14-|\tfrac\ell L-\tfrac12|)\ \text{satisfies}\ \textstyle\sum_\ell\rho_\ell=1",
    status="erratum",
    corrected=r"\textstyle\sum_{\ell=1}^L\rho_\ell=1\ (L\text{ even}),\quad 1-\tfrac a{4L^2}\ (L\text{ odd});"
              r"\ \text{renormalise }\rho_\ell/\sum_k\rho_k",
    params=[
        Param.int("L", 11, 1, 100_000, "number of layers", search=(1, 300)),
        Param.float("a", 0.5, 0.0, 1.0, "irregularity a", high_open=True, search=(0.01, 0.99)),
    ],
    notes="E16. solvers.leaky_net.irregular renormalises by default (no-op for even L); the check uses the "
          "printed (unnormalised) values.",
    catalogue="jacot §2.6 D4; §3 R6; §4 E16",
    covers=("D4", "R6", "E16"),
)


def _mesh_sum(p):
    return float(np.sum(ln.irregular(p.L, p.a, normalise=False)))


@mesh.numeric
def _(p):
    """sum_l rho_l against 1 (even L) or 1 - a/(4L^2) (odd L); rounding ~ L eps."""
    s = _mesh_sum(p)
    target = 1.0 if p.L % 2 == 0 else 1 - p.a / (4 * p.L**2)
    return Outcome(residual=abs(s - target), tolerance=10 * p.L * EPS, values={"sum": s, "target": target},
                   message=f"sum rho = {s:.15g}, corrected value {target:.15g}")


mesh.property(over=("L", "a"), max_examples=40)


@mesh.falsifier("stated", search=("L", "a"))
def _(p):
    """The printed claim sum rho = 1 (refuted at odd L)."""
    s = _mesh_sum(p)
    return Outcome(residual=abs(s - 1.0), tolerance=10 * p.L * EPS, values={"sum": s},
                   message=f"L = {p.L}, a = {p.a}: sum rho = {s:.15g} vs 1")


def _mesh_symbolic(odd_sign=-1):
    """Closed-form sums of the printed mesh for L = 2m and L = 2m + 1 (|.| split at l = L/2) against 1 and
    1 + odd_sign a/(4L^2) (corrected: minus): parities where the difference does not vanish."""
    m, l = sp.symbols("m l", positive=True, integer=True)
    a = sp.Symbol("a", positive=True)
    res = []
    for L, target in ((2 * m, 1), (2 * m + 1, 1 + odd_sign * a / (4 * (2 * m + 1) ** 2))):
        lo = sp.summation(1 / L + a / L * (sp.Rational(1, 4) - (sp.Rational(1, 2) - l / L)), (l, 1, m))
        hi = sp.summation(1 / L + a / L * (sp.Rational(1, 4) - (l / L - sp.Rational(1, 2))), (l, m + 1, L))
        res.append(sp.simplify(sp.together(lo + hi - target)) != 0)
    return sum(res)


@mesh.symbolic(timeout=30)
def _(p):
    """Closed-form sums for L = 2m and L = 2m + 1 (split the |.| at l = L/2)."""
    bad = _mesh_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.summation", "proved":
                   "sum = 1 for L = 2m and 1 - a/(4 L^2) for L = 2m+1"}, message="parities where the sum failed")


@mesh.mutant({"printed_E16": "sum rho_l = 1 for every L (as printed)",
              "odd_sign": "odd L: 1 + a/(4L^2) (sign of the defect flipped)"}, timeout=30)
def _(p, variant):
    """The sum perturbed, through the same procedure: the odd parity must fail."""
    bad = _mesh_symbolic({"printed_E16": 0, "odd_sign": 1}[variant])
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} parities failed")


@mesh.reproduction
def _(p):
    """Catalogue E16/R6: L=11 a=0.5: 0.998966942149; L=18 (a=0.5): 1.000000000000; L=51 a=0.99: 0.999904844291."""
    quoted = {(11, 0.5): 0.998966942149, (18, 0.5): 1.000000000000, (51, 0.99): 0.999904844291}
    got = {f"L={L},a={a}": float(np.sum(ln.irregular(L, a, normalise=False))) for (L, a) in quoted}
    diff = max(abs(got[f"L={L},a={a}"] - q) for (L, a), q in quoted.items())
    return Outcome(residual=diff, tolerance=5e-13, values={"computed": got,
                   "quoted": {f"L={L},a={a}": q for (L, a), q in quoted.items()}},
                   message="sums compared at the quoted 12 decimals")


# ---------------------------------------------------------------------------
# D5: the adaptive rule
adaptive = Claim(
    id="jacot.adaptive_steps",
    title="The adaptive step rule's fixed points are the meshes with equal relative increments",
    label="§4, Adaptive",
    section="4",
    equation="l.237",
    lines=(237, 237),
    statement=r"\rho_\ell\leftarrow\tilde c_\ell/\textstyle\sum_k\tilde c_k,\ \tilde c_\ell=\rho_\ell\|A_{p_\ell}\|/"
              r"\|A_{p_\ell}-A_{p_{\ell-1}}\|\ \text{makes}\ \|A_{p_\ell}-A_{p_{\ell-1}}\|/\|A_{p_\ell}\|\ \text{equal}",
    status="holds",
    params=[
        Param.int("L", 20, 2, 200, "number of layers", search=(3, 40)),
        # rate <= 20: beyond, with L >= 40, the damped rule oscillates (last change ~ 2-20 after 2000+ iterations;
        # sweep seed 9090), so no fixed point exists to test and such draws were inconclusive
        Param.float("rate", 15.0, 0.0, 20.0, "speed of the fast end regions of the test path", search=(1.0, 20.0)),
        Param.int("w", 5, 1, 20, "width", search=(2, 6)),
        Param.int("N", 4, 1, 20, "data points", search=(2, 6)),
        Param.seed("seed of Z, U, V"),
        # at most 20 000 iterations: at L = 200, w = N = 20 an iteration costs ~0.5 ms, so the worst case stays
        # near 10 s (the old 100 000 took 96 s on a loaded 2-core machine and timed out in the device sweep)
        # and at least 500: a budget of a few iterations cannot reach the fixed point (8 of 12 inconclusive draws of
        # sweep seed 9090 had iters <= 40)
        Param.int("iters", 5000, 500, 20_000, "maximum damped iterations (stops when the ratio stalls)"),
    ],
    validate=lambda p: _validate_adaptive(p),
    notes="Test path A(p) = Z + e^{-rate p} U + e^{-rate(1-p)} V + 0.3 p U (catalogue D5) sampled at "
          "p_l = rho_1 + ... + rho_l. The paper makes no convergence claim: the undamped iteration "
          "oscillates (catalogue R6); the damped one rho <- (rho + rho_new)/2 is used to reach the fixed point. "
          "Property: rho is a fixed point iff the relative increments are equal (algebraic: rho_new prop. to "
          "rho / r_l). [EMP] part (2% cost, Fig. 2) not encoded. Declared range narrowed (session 10, fresh sweep "
          "4100702: 5/20 inconclusive): rate <= 10 or L <= 20. Beyond, the damped rule oscillates forever (rate 11-17 "
          "with L >= 58 under damping 0.5, 0.8 and 0.95; scan of 6 paths per cell: rate 12 converged on 6, 5, 0, 0 of "
          "6 at L = 20, 60, 120, 200, rate 10 on 6, 6, 5, 6) and a Levenberg-Marquardt solve of the equal-increment "
          "equations from the equidistant mesh found no solution either (spread 0.6-4.5): no fixed point to test. "
          "The stop rule is the judged fixed-point residual (it was a stall of max r/min r, which stopped at residual "
          "1.1e-10 against 1.3e-11 on a draw that converges).",
    catalogue="jacot §2.6 D5; §3 R6",
    covers=("D5", "R6"),
)


def _validate_adaptive(p):
    if p.rate > 10 and p.L > 20:
        raise ParamError(f"parameters rate, L must satisfy rate <= 10 or L <= 20 (beyond, the damped rule oscillates "
                         f"and no fixed point was found to test; got rate={p.rate}, L={p.L})")


def _path(p):
    rng = np.random.default_rng(p.seed)
    Z, U, V = (rng.standard_normal((p.w, p.N)) for _ in range(3))

    def A(ps):
        ps = np.asarray(ps)[:, None, None]
        return Z + np.exp(-p.rate * ps) * U + np.exp(-p.rate * (1 - ps)) * V + 0.3 * ps * U
    return A


def _iterate(p, damping, iters, use_rho=True, stop=0.0):
    """``iters`` damped steps of the rule from the equidistant mesh, or fewer: with ``stop > 0`` the iteration ends
    once the undamped rule would move every rho_l by at most ``stop`` relative (max_l |T(rho)_l / rho_l - 1| <= stop,
    T(rho) - rho = (rho_next - rho)/(1 - damping)).  The relative residual bounds both judged quantities: the
    spread of the relative increments (T(rho)_l / rho_l is proportional to 1/r_l, so max r/min r - 1 <= ~2x it) and
    L max|T(rho) - rho| <= L max(rho) x it.  Session 10: the former stop, a change of the ratio max r/min r below
    1e-14, fired while rho still moved (fresh sweep 4100702: L = 58, rate 11.0 stopped at a residual 1.1e-10
    against the judged 1.3e-11, and converges to 5.6e-12 within 890 steps); an absolute stop on L max|T - rho|
    left the spread at 1.4 x its tolerance where rho_min is small (L = 2, 3 at rate 12-18, sweep 4100706)."""
    A = _path(p)
    rho = ln.equidistant(p.L)
    ratios = []
    for _ in range(iters):
        As = A(np.concatenate([[0.0], np.cumsum(rho)]))
        r = ln.relative_increments(As)
        ratios.append(float(r.max() / r.min()))
        nxt = ln.adaptive_update(rho, As, damping, use_rho)
        done = stop > 0 and float(np.max(np.abs(nxt - rho) / rho)) / (1 - damping) <= stop
        rho = nxt
        if done:
            break
    As = A(np.concatenate([[0.0], np.cumsum(rho)]))
    r = ln.relative_increments(As)
    ratios.append(float(r.max() / r.min()))
    return rho, As, r, ratios


def _adaptive_outcome(p, use_rho=True):
    tol = 1e3 * p.L * EPS
    try:
        rho, As, r, ratios = _iterate(p, 0.5, p.iters, use_rho, stop=tol / 4)
    except ValueError as e:  # the path passes through A = 0 or stalls: the rule is undefined there
        return inconclusive(f"adaptive rule undefined on this path: {e}")
    new = ln.adaptive_update(rho, As, 0.0, use_rho)
    spread = float(r.max() / r.min() - 1)
    fixed = float(np.max(np.abs(new - rho)) * p.L)
    if not np.all(np.isfinite(rho)) or np.min(rho) <= 0:
        return inconclusive("the iteration left the positive simplex")
    if fixed > tol:
        # The paper makes no convergence claim (catalogue D5(d)); without a limit there is no fixed point to test.
        return inconclusive(f"the damped iteration has not converged after {p.iters} steps (last change {fixed:.1e})")
    # Error model: at a numerical fixed point (one more update moves rho by < 1e3 L eps, else inconclusive)
    # the relative increments are equal up to the same rounding level, 1e3 L eps (norms of L differences).
    k = np.arange(len(ratios))
    sel = k[:: max(1, len(k) // 100)]
    return Outcome.from_parts({"fixed point": (fixed, tol), "equal relative increments": (spread, tol)},
                              message=f"after {len(ratios) - 1} damped steps: max/min relative increment {1 + spread:.12g}",
                              values={"rho_min": float(rho.min()), "rho_max": float(rho.max()),
                                      "plot": {"kind": "semilogy", "x": sel.tolist(),
                                               "series": {"max/min - 1": [max(ratios[i] - 1, 1e-17) for i in sel]},
                                               "xlabel": "iteration", "ylabel": "max r_l / min r_l - 1",
                                               "title": "damped adaptive rule: equidistribution"}})


@adaptive.numeric
def _(p):
    """Damped fixed-point iteration of the rule on the test path; at its limit the rule is stationary and
    the relative increments are equal."""
    return _adaptive_outcome(p)


adaptive.property(over=("L", "rate", "w", "N", "seed"), max_examples=10)


@adaptive.falsifier("without_rho_factor", search=("seed", "L"))
def _(p):
    """The rule with c_l = |A_l| / |A_l - A_{l-1}| (no rho_l): its fixed point does not equidistribute."""
    return _adaptive_outcome(p, use_rho=False)


@adaptive.reproduction
def _(p):
    """Catalogue D5/R6: damped iteration reaches max/min ratio 1.0000 by iteration 40 (L = 20, rate 15);
    the undamped iteration does not decrease monotonically (oscillates). Exact ratios depend on the
    catalogue's unrecorded Z, U, V; the damped ratio is compared at the quoted 4 decimals."""
    p = adaptive.resolve({})
    _, _, _, damped = _iterate(p, 0.5, 40)
    _, _, _, raw = _iterate(p, 0.0, 30)
    osc = int(np.sum(np.diff(raw) > 0))
    return Outcome.from_parts({"damped ratio at 40 = 1.0000": (abs(damped[-1] - 1.0), 5e-5),
                               "undamped oscillates (some increases)": (0.0 if osc > 0 else 1.0, 0.0)},
                              message=f"damped ratio {damped[-1]:.6f} (quoted 1.0000); undamped ratios "
                              f"{[round(x, 2) for x in raw[:11]]}",
                              values={"damped_ratio_40": damped[-1], "undamped_first": raw[:11],
                                      "quoted_undamped": [160, 19.7, 40.9, "...", 2.88, "...", 15.8]})


# ---------------------------------------------------------------------------
# D1: the hand-written backward pass
gradient = Claim(
    id="jacot.discrete_gradient",
    title="Gradient of the discretised leaky ResNet cost (hand-written backward pass)",
    label="§4, D1",
    section="4",
    equation="l.227-229",
    lines=(225, 229),
    statement=r"\partial_{W_\ell}\mathcal L=\rho_\ell\big(G_\ell\sigma(A_{\ell-1})^T+\tfrac\lambda{\tilde L}W_\ell\big),"
              r"\ G_{\ell-1}=(1-\rho_\ell\tilde L)G_\ell+\dot\sigma(A_{\ell-1})\odot\rho_\ell V_\ell^TG_\ell,"
              r"\ G_L=\partial_{A_L}C",
    status="holds",
    params=[
        Param.int("w", 3, 1, 16, "width", search=(1, 5)),
        Param.int("N", 4, 1, 16, "data points", search=(1, 6)),
        Param.int("L", 6, 1, 40, "layers", search=(1, 10)),
        Param.float("Lt", 2.0, 1e-6, 100.0, "effective depth (must satisfy L > (1 + a/4) Lt)"
                    " (>= 1e-6: below, not resolved in double precision)",
                    search=(0.1, 3.0)),
        Param.float("a", 0.5, 0.0, 1.0, "irregular mesh parameter", high_open=True, search=(0.0, 0.9)),
        Param.float("lam", 0.1, 0.0, 10.0, "regularisation lambda", search=(0.0, 1.0)),
        Param.seed("seed", 1),
    ],
    validate=lambda p: _validate_grad(p),
    notes="The derivation of D1 (catalogue): chain rule through alpha_l = (1 - rho Lt) alpha + rho W sigma(alpha). "
          "The cost's gradient is piecewise polynomial in W (ReLU kinks): the finite-difference step is h = 1e-6, or "
          "smaller where a pre-activation lies within its reach (_fd_step: a global Lipschitz bound of the layers, so "
          "the stencil crosses no kink; formerly such draws were inconclusive, 9 of 20 in sweep 880011); only a step "
          "below 1e-10, or an error bound above 10% of |grad|, is inconclusive. Both backends (Numba kernel, NumPy "
          "reference).",
    catalogue="jacot §2.6 D1",
    covers=("D1",),
)


def _validate_grad(p):
    if not p.L > (1 + p.a / 4) * p.Lt:
        raise ParamError(f"parameters L, Lt, a must satisfy L > (1 + a/4) Lt (D2/D4; got L={p.L}, Lt={p.Lt}, a={p.a})")


#: smallest finite-difference step used: below it the cancellation 4 eps |f| / h passes 1e-5 |f| per entry
H_MIN = 1e-10


def _fd_step(As, Ws, rho, Lt, h0=1e-6):
    """The central-difference step: h0, or smaller so that no pre-activation crosses its ReLU kink.

    The net acts column by column, and the layer map a -> (1 - rho Lt) a + rho W [relu(a); 1] is Lipschitz (2-norm,
    relu 1-Lipschitz, the bias row constant) with constant |1 - rho Lt| + rho |W[:, :w]|_2.  A perturbation of size
    h of one entry of W_l moves a column of A_l by at most rho_l h max(1, max|A|), one of a representation by h, so
    every later pre-activation moves by at most h (1 + max|A|) prod_k (|1 - rho_k Lt| + rho_k |W_k[:, :w]|_2)
    (a global bound, not first order).  The step is min(h0, margin / (2 reach per unit step)) with margin =
    min |pre-activation| (A_0 .. A_(L-1)), so both h and h/2 (the truncation estimate) stay on one side of every
    kink: the cost is smooth on the stencil.  Formerly h = 1e-6 with the cruder growth prod (1 + rho (Lt + |W|_2))
    and a draw within its reach was inconclusive (sweep 880011: 9 of 20 per claim).  Returns (h, margin, reach per
    unit step); h = None when the step would fall below H_MIN (rounding would swamp the quotient)."""
    w = As.shape[1]
    lip = float(np.prod([abs(1 - r * Lt) + r * np.linalg.norm(W[:, :w], 2) for r, W in zip(rho, Ws)]))
    unit = (1 + float(np.max(np.abs(As)))) * max(lip, 1.0)
    margin = float(np.min(np.abs(As[:-1])))
    h = min(h0, margin / (2 * unit))
    return (h if h >= H_MIN else None), margin, unit


def _grad_outcome(p, variant=0):
    rng = np.random.default_rng(p.seed)
    X, Y = rng.standard_normal((p.w, p.N)), rng.standard_normal((p.w, p.N))
    Ws = rng.standard_normal((p.L, p.w, p.w + 1))
    rho = ln.irregular(p.L, p.a)
    backend = p.backend if p.backend in ("numpy", "numba") else "numpy"
    g = ln.grad(X, Y, Ws, rho, p.Lt, p.lam, backend=backend, variant=variant)
    As = ln.forward_numpy(X, Ws, rho, p.Lt)
    f = lambda W: ln.loss(X, Y, W, rho, p.Lt, p.lam)  # noqa: E731
    h, margin, reach = _fd_step(As, Ws, rho, p.Lt)
    if h is None:
        return inconclusive(f"a pre-activation is within {margin:.1e} of the ReLU kink: no finite-difference step "
                            f">= {H_MIN:g} stays on its side (reach per unit step {reach:.1e})")

    g1, g2 = fd.central_difference(f, Ws, h), fd.central_difference(f, Ws, h / 2)
    # Error model: central differences have truncation c h^2 (estimated by |g_h - g_{h/2}| = 3/4 c h^2,
    # so the h/2 truncation is <= |g_h - g_{h/2}| / 3) plus cancellation ~ 2 eps |f| / h per entry.
    trunc = float(np.linalg.norm(g1 - g2)) / 3
    cancel = np.sqrt(Ws.size) * 4 * EPS * max(abs(f(Ws)), 1.0) / (h / 2)
    tol = 10 * (trunc + cancel)
    gn = float(np.linalg.norm(g))
    if not tol < 0.1 * gn:
        # the step the kink allows is so small that rounding swamps the difference quotient: no resolution
        return inconclusive(f"finite differences at the step h = {h:.1e} allowed by the kink margin {margin:.1e} "
                            f"cannot resolve the gradient (error bound {tol:.1e} vs |grad| {gn:.1e})")
    return Outcome(residual=float(np.linalg.norm(g - g2)), tolerance=tol, values={
        "grad_norm": gn, "truncation_estimate": trunc, "cancellation": cancel,
        "kink_margin": margin, "fd_step": h}, message=f"|backward pass - central differences (h = {h:.1e})|_F")


@gradient.numeric(backends=("numpy", "numba"))
def _(p):
    """Backward pass against central differences (h = 1e-5 and 5e-6 for the truncation estimate)."""
    return _grad_outcome(p)


gradient.property(over=("w", "N", "L", "a", "lam", "seed"), max_examples=15)


@gradient.falsifier("no_leak_factor", search=("seed",))
def _(p):
    """A backward pass that drops the leak factor (1 - rho_l Lt) when propagating G."""
    return _grad_outcome(p, variant=1)


# ---------------------------------------------------------------------------
# discrete analogue of H2: critical weights
critical = Claim(
    id="jacot.discrete_critical_weights",
    title="Discrete H2: the gradient vanishes iff W_l = Lt B_l sigma(A_{l-1})^T, B_l = -(1/lambda) dC/dA_l",
    label="§4 (discrete l.148-152)",
    section="2.4, 4",
    equation="l.152, l.227",
    lines=(148, 152),
    statement=r"\partial_{W_\ell}\mathcal L=\tfrac{\lambda\rho_\ell}{\tilde L}\big(W_\ell-\tilde LB_\ell\sigma(A_{\ell-1})^T\big),"
              r"\ B_\ell=-\tfrac1\lambda\partial_{A_\ell}C(A_L);\ \text{so}\ \partial_{W_\ell}\mathcal L=0\iff "
              r"W_\ell=\tilde LB_\ell\sigma(A_{\ell-1})^T",
    status="holds",
    params=[p for p in gradient.params if p.name != "lam"]
    + [Param.float("lam", 0.1, 0.0, 10.0, "regularisation lambda > 0", low_open=True, search=(0.01, 1.0))],
    validate=lambda p: _validate_grad(p),
    notes="Not printed for the discrete net; the discrete form of the paper's W_p = Lt B_p sigma(A_p)^T (H2), with "
          "sigma evaluated at the layer's INPUT A_{l-1}. Checked independently of the backward pass: dL/dW and "
          "dC/dA_l (through the remaining layers) both by central differences, with the step of jacot.discrete_gradient "
          "(1e-6, or below the kink margin: _fd_step; formerly inconclusive near a kink, 9 of 20 draws in sweep 880011; "
          "an error bound above 10% of the gradients' scale is inconclusive). Since rho_l, lambda > 0 the identity "
          "gives the equivalence.",
    catalogue="jacot §2.4 H2 (discrete analogue, brief of this module)",
    covers=("H2",),
)


def _critical_outcome(p, shift=0):
    rng = np.random.default_rng(p.seed)
    X, Y = rng.standard_normal((p.w, p.N)), rng.standard_normal((p.w, p.N))
    Ws = rng.standard_normal((p.L, p.w, p.w + 1))
    rho = ln.irregular(p.L, p.a)
    As = ln.forward_numpy(X, Ws, rho, p.Lt)
    h, margin, unit = _fd_step(As, Ws, rho, p.Lt)
    if h is None:
        return inconclusive(f"a pre-activation is within {margin:.1e} of the ReLU kink: no finite-difference step "
                            f">= {H_MIN:g} stays on its side (reach per unit step {unit:.1e})")
    growth = float(np.prod([1 + r * (p.Lt + np.linalg.norm(W, 2)) for r, W in zip(rho, Ws)]))  # truncation model
    f = lambda W: ln.loss(X, Y, W, rho, p.Lt, p.lam)  # noqa: E731

    def C_from(l, A):  # C(A_L) as a function of A_l
        return ln.loss(A, Y, Ws[l:], rho[l:], p.Lt, 0.0) if l < p.L else float(np.sum((Y - A) ** 2) / p.N)

    worst, scale = 0.0, 0.0
    for l in range(1, p.L + 1):
        gW = np.zeros_like(Ws[l - 1])
        for idx in np.ndindex(gW.shape):
            E = np.zeros_like(Ws)
            E[(l - 1,) + idx] = h
            gW[idx] = (f(Ws + E) - f(Ws - E)) / (2 * h)
        gA = np.zeros((p.w, p.N))
        for idx in np.ndindex(gA.shape):
            E = np.zeros((p.w, p.N))
            E[idx] = h
            gA[idx] = (C_from(l, As[l] + E) - C_from(l, As[l] - E)) / (2 * h)
        B = -gA / p.lam
        S = ln._sig(As[l - 1 + shift])
        pred = p.lam * rho[l - 1] / p.Lt * (Ws[l - 1] - p.Lt * B @ S.T)
        worst = max(worst, float(np.linalg.norm(gW - pred)))
        scale = max(scale, float(np.linalg.norm(gW)) + float(np.linalg.norm(pred)))
    # Error model: pred - gW = rho_l (dC/dA_l)_fd sigma^T - (dL/dW_l)_fd: the lambda terms cancel exactly, so
    # the error is the cancellation of two central differences, 4 eps max(|f|, 1) / h per entry (sqrt(n)
    # entries), amplified by rho_l |sigma(A_{l-1})|_F for the dC/dA_l part, plus truncation h^2 |f'''|,
    # bounded by h^2 * scale * growth^3 (a third derivative through L layers).
    cancel = 4 * EPS * max(abs(f(Ws)), 1.0) / h * np.sqrt(max(Ws[0].size, p.w * p.N))
    amp = 1 + float(np.max(rho)) * max(float(np.linalg.norm(ln._sig(A))) for A in As)
    tol = 10 * (cancel * amp + h * h * scale * growth**3)
    if not tol < 0.1 * scale:
        # the step the kink allows is so small that rounding swamps the difference quotients: no resolution
        return inconclusive(f"finite differences at the step h = {h:.1e} allowed by the kink margin {margin:.1e} "
                            f"cannot resolve the gradients (error bound {tol:.1e} vs their scale {scale:.1e})")
    return Outcome(residual=worst, tolerance=tol, values={"scale": scale, "fd_step": h, "kink_margin": margin},
                   message=f"max_l |dL/dW_l - lam rho_l/Lt (W_l - Lt B_l sigma(A_(l-1))^T)| = {worst:.3g}")


@critical.numeric
def _(p):
    """dL/dW_l and B_l by central differences; the identity at every layer."""
    return _critical_outcome(p)


critical.property(over=("w", "N", "L", "a", "lam", "seed"), max_examples=8)


@critical.falsifier("sigma_of_output", search=("seed",))
def _(p):
    """W_l = Lt B_l sigma(A_l)^T (sigma at the layer's output, the continuous formula read literally)."""
    return _critical_outcome(p, shift=1)
