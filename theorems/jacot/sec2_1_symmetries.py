"""§2 Leaky ResNets (seed l.29-52) and §2.1 A Few Symmetries (l.53-72).

Claims: ``jacot.leaky_discretisation`` (l.31-47: the ODE, its discretisation and
the objective; catalogue M1-M3, D1), ``jacot.erratum_leak_per_layer`` (l.39-43, E22),
``jacot.range_symmetry`` (l.57-65, S1-S5), ``jacot.erratum_range_leak`` (l.57-65, E13: re-examined, the
sentence is right) and ``jacot.output_scaling`` (l.67-71).  The RK4 range-symmetry set-up (``_rk4``,
``_ode``) and the D1 convergence check (``_ode_endpoint``) live in ``theorems.jacot._shared``.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import leaky
from solvers import leaky_net as ln
from theorems.claim import Claim, inconclusive, Outcome, Param, ParamError
from theorems.jacot._shared import _ode, _ode_endpoint, _rk4, _weight_family, _Wfun

EPS = float(np.finfo(float).eps)  # a Python float: array-api-strict refuses NumPy scalars


# ---------------------------------------------------------------------------
# S1/S2 (+E13): integration-range symmetry
_sym_params = [
    Param.int("w", 5, 1, 16, "width", search=(1, 6)),
    Param.int("N", 7, 1, 16, "data points", search=(1, 8)),
    Param.float("Lt", 2.0, 0.0, 10.0, "effective depth", search=(0.0, 10.0)),
    Param.float("c", 3.0, 0.0, 10.0, "stretch factor (S1) / added leak (S4)", low_open=True, search=(0.1, 10.0)),
    Param.seed("seed of the weight family and inputs"),
    Param.int("steps", 400, 8, 20_000, "RK4 steps on each range"),
]

rangesym = Claim(
    id="jacot.range_symmetry",
    title="Stretching the range to [0, c] with W'_q = W_{q/c}/c and leak Lt/c stretches the path; norm / c",
    label="§2.1, Integration range",
    section="2.1",
    equation="l.59-61",
    lines=(57, 65),
    statement=r"W'_q=\tfrac1cW_{q/c},\ \tilde L'=\tilde L/c\Rightarrow\alpha'_q=\alpha_{q/c},\quad"
              r"\int_0^c\|W'_q\|^2dq=\tfrac1c\int_0^1\|W_p\|^2dp",
    status="holds",
    params=_sym_params,
    notes="S2 is the same statement read with Lt = 1 on [0, c]. E13 (l.65, 'since 2 Lt = 0 too'): said of "
          "Lt = 0, where the rescaled leak Lt/c is 0 as well; re-examined in the audit of issue 17: the sentence is "
          "right as printed (jacot.erratum_range_leak, status holds). "
          "Both ODEs integrated by the same number of RK4 steps: RK4 is equivariant under q = c p, so the two "
          "discrete paths agree up to rounding and the tolerance is a rounding model (stretched_path_gap; it was "
          "the RK4 step-halving error until the audit of issue 17, wide enough to pass a leak 0.1% off at "
          "steps = 8). Norms by Gauss-Legendre (60 x 8 nodes).",
    catalogue="jacot §2.1 S1, S2, S3; §4 E13; §3 R7",
    covers=("S1", "S2", "S3", "E13", "R7"),
)


def stretched_path_gap(p, leak, factor=True):
    """|alpha'_c - alpha_1|: the net on [0, 1] with leak p.Lt against the stretched net on [0, c] with weights
    W'_q = W_{q/c}/c (or W_{q/c} without the factor) and the given leak, both by p.steps RK4 steps.

    Error model: RK4 is equivariant under the time change q = c p (a step c h of f'(q, y) = f(q/c, y)/c
    computes, stage by stage, the step h of f), so when the stretched ODE is exactly the rescaled one the two
    discrete paths agree up to rounding, whatever the discretisation error: per step a few eps of |y| + h |f|,
    summed over the steps.  Measured over 40 draws of the declared ranges (w, N <= 16, Lt <= 10, c in
    [1e-3, 10], 8 to 2000 steps): gap <= 0.17 steps eps (|alpha_1| + |X|); the tolerance is 10 steps eps
    (|alpha_1| + |X|) (60x that), while a leak 0.1% off moves alpha'_c by >= 4e8 steps eps |alpha_1|.  The
    RK4 error of the paths themselves (step halving) is reported, not used: it does not enter the comparison.
    Returns (gap, tol, values) or an inconclusive Outcome."""
    if not (np.isfinite(1.0 / p.c) and np.isfinite(leak)):
        return inconclusive(f"c={p.c!r}: 1/c or the leak {leak!r} overflows a double; the stretched path is not "
                            "computable")
    rng = np.random.default_rng(p.seed)
    W = _Wfun(rng, p.w)
    X = rng.standard_normal((p.w, p.N))
    cW = (lambda q: W(q / p.c) / p.c) if factor else (lambda q: W(q / p.c))
    a = _rk4(_ode(p.Lt, W), X, 0, 1, p.steps)
    b = _rk4(_ode(leak, cW), X, 0, p.c, p.steps)
    sc = float(np.linalg.norm(a)) + float(np.linalg.norm(X))
    tol = 10 * p.steps * EPS * sc
    gap = float(np.linalg.norm(b - a))
    rk4_err = float(np.linalg.norm(a - _rk4(_ode(p.Lt, W), X, 0, 1, 2 * p.steps)))
    return gap, tol, {"leak": leak, "path_scale": sc, "rk4_error_estimate": rk4_err,
                      "gap_over_rounding": gap / (p.steps * EPS * sc)}


def _range_outcome(p, factor=True):
    path = stretched_path_gap(p, p.Lt / p.c, factor)
    if isinstance(path, Outcome):
        return path
    gap, tol_path, pvals = path
    rng = np.random.default_rng(p.seed)
    W = _Wfun(rng, p.w)
    cW = (lambda q: W(q / p.c) / p.c) if factor else (lambda q: W(q / p.c))
    x, wt = np.polynomial.legendre.leggauss(8)
    e = np.linspace(0, 1, 61)
    ps = ((e[:-1, None] + e[1:, None]) / 2 + np.diff(e)[:, None] / 2 * x).ravel()
    pw = (np.diff(e)[:, None] / 2 * wt).ravel()
    n1 = sum(wi * np.sum(W(t) ** 2) for t, wi in zip(ps, pw))
    n2 = sum(wi * p.c * np.sum(cW(p.c * t) ** 2) for t, wi in zip(ps, pw))
    if not (np.isfinite(n2) and np.isfinite(n1 / p.c)):
        return inconclusive(f"c={p.c!r}: the stretched norm (1/c) int |W|^2 = {n1 / p.c:.3g} overflows a double")
    # Path: the rounding model of stretched_path_gap; norms: same nodes, rounding only.
    return Outcome.from_parts({"alpha'_c = alpha_1": (gap, tol_path),
                               # rounding relative to the compared values: n2 ~ n1/c is 1000 n1 at c = 1e-3
                               "int |W'|^2 = (1/c) int |W|^2": (abs(n2 - n1 / p.c), 1000 * EPS * max(n1, n1 / p.c, abs(n2)))},
                              message=f"path gap {gap:.3g}; norms {n2:.15g} vs {n1 / p.c:.15g}",
                              values={"norm_stretched": n2, "norm_over_c": n1 / p.c, **pvals})


@rangesym.numeric
def _(p):
    """Integrate both ODEs and compare alpha'_c with alpha_1, and the two weight norms."""
    return _range_outcome(p)


rangesym.property(over=("w", "N", "Lt", "c", "seed"), max_examples=10)


@rangesym.falsifier("no_1_over_c", search=("seed",))
def _(p):
    """W'_q = W_{q/c} without the factor 1/c: the paths differ by O(1)."""
    return _range_outcome(p, factor=False)


def _range_symbolic(variant="stated"):
    """Chain rule: sympy's d/dq alpha(q/c) with alpha' = -Lt alpha + W sigma(alpha) substituted, against the primed ODE
    -Lt' alpha + W' sigma(alpha) with Lt' = Lt/c, W'_q = W_{q/c}/c as printed (or perturbed); and
    int_0^c |W'_q|^2 dq against the printed factor (1/c) int_0^1 |W|^2 for a quadratic W: failed identities."""
    q, c, Lt, t = sp.symbols("q c Lt t", positive=True)
    al, Wf, sg = sp.Function("alpha"), sp.Function("W"), sp.Function("sigma")
    kW = 1 if variant == "W_unscaled" else 1 / c
    kL = 1 if variant == "leak_unscaled" else 1 / c
    rho = 1 / c
    lhs = sp.diff(al(q / c), q)
    rhs = -(Lt * kL) * al(q / c) + kW * Wf(q / c) * sg(al(q / c))
    lhs = lhs.replace(lambda e: isinstance(e, (sp.Subs, sp.Derivative)),
                      lambda e: -Lt * al(q / c) + Wf(q / c) * sg(al(q / c)))
    bad = int(sp.expand(lhs - rhs) != 0)
    w0, w1, w2 = sp.symbols("w0 w1 w2", real=True)
    Wp = w0 + w1 * t + w2 * t**2
    bad += int(sp.expand(sp.integrate((kW * Wp.subs(t, q / c)) ** 2, (q, 0, c)) - rho * sp.integrate(Wp**2, (t, 0, 1))) != 0)
    return bad


@rangesym.symbolic(timeout=30)
def _(p):
    """Chain rule: d/dq alpha(q/c) = (1/c) alpha'(q/c) = -(Lt/c) alpha + (1/c) W(q/c) sigma(alpha); and
    int_0^c |W(q/c)/c|^2 dq = (1/c) int_0^1 |W|^2 (substitution q = c p) for W = polynomial family."""
    bad = _range_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy chain rule + integrate", "proved":
                   "the stretched path solves the primed ODE; the norm identity for quadratic W"},
                   message="failed identities")


@rangesym.mutant({"leak_unscaled": "leak Lt' = Lt (not Lt/c)",
                  "W_unscaled": "W'_q = W_{q/c} (the factor 1/c dropped)"}, timeout=30)
def _(p, variant):
    """The symmetry perturbed, through the same procedure: an identity must fail."""
    bad = _range_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} identities failed")


@rangesym.reproduction
def _(p):
    """Catalogue S1(b)/R7: w=5, N=7, Lt=2, c=3, W = C0 + sin(3p) C1 + p^2 C2: path error 4.0e-9 (solver-dependent,
    compared as an upper bound 1e-7, the catalogue's (c) tolerance); norm ratio 1/c to 1e-10."""
    p = rangesym.resolve({})
    out = _range_outcome(p)
    gap = out.values["parts"]["alpha'_c = alpha_1"]["residual"]
    r = out.values["norm_stretched"] / out.values["norm_over_c"]
    return Outcome.from_parts({"path error < 1e-7": (gap, 1e-7), "norm ratio 1 to 1e-10": (abs(r - 1), 1e-10)},
                              message=f"path error {gap:.2e} (quoted 4.0e-9 with DOP853); norm ratio {r:.15f}",
                              values={"quoted_path_error": 4.0e-9})


# ---------------------------------------------------------------------------
# S4/S5: output scaling (no bias)
outscale = Claim(
    id="jacot.output_scaling",
    title="Without bias, Lt -> Lt + c scales the path by e^{-cp}",
    label="§2.1, Output scaling",
    section="2.1",
    equation="l.69",
    lines=(67, 71),
    statement=r"W_{p,w+1}=0:\ \tilde L\to\tilde L+c\Rightarrow\alpha'_p=e^{-cp}\alpha_p",
    status="holds",
    params=[pp if pp.name != "c" else Param.float("c", 2.5, -5.0, 10.0, "added leak (negative allowed)",
                                                   search=(-2.0, 5.0)) for pp in _sym_params]
    + [Param.bool("bias", False, "keep a bias column (breaks the symmetry)").for_falsifiers()],
    notes="Uses positive homogeneity of the ReLU; S5 is c = Lt from Lt = 0 (non-leaky net = leaky net with "
          "outputs e^{-Lt} alpha_1). The catalogue's 'cross-entropy makes outputs grow' part is cited, not checked.",
    catalogue="jacot §2.1 S4, S5; §3 R7",
    covers=("S4", "S5", "R7"),
)


def _outscale_outcome(p, bias):
    rng = np.random.default_rng(p.seed)
    W = _Wfun(rng, p.w)
    X = rng.standard_normal((p.w, p.N))
    f1, f2 = _ode(p.Lt, W, bias), _ode(p.Lt + p.c, W, bias)
    a, a2 = _rk4(f1, X, 0, 1, p.steps), _rk4(f1, X, 0, 1, 2 * p.steps)
    b, b2 = _rk4(f2, X, 0, 1, p.steps), _rk4(f2, X, 0, 1, 2 * p.steps)
    s = np.exp(-p.c)
    # Error model (read-through 8): Richardson on the difference d(n) = alpha'_1 - e^{-c} alpha_1 itself, which tends
    # to 0 with the RK4 step iff the symmetry holds: |d(2n)| <= |d(n) - d(2n)| / (2^4 - 1) for order 4, x30 safety
    # (2 x 15; reduced order at ReLU kinks), plus rounding 100 steps eps |alpha'_1|.  Formerly 2 x the step-halving
    # change of EACH path, which ignores that both paths' errors are correlated: 3.3e4 x the residual at the defaults.
    err = float(np.linalg.norm(b2 - s * a2))
    tol = 2 * float(np.linalg.norm((b - s * a) - (b2 - s * a2))) + 100 * p.steps * EPS * float(np.linalg.norm(b2))
    return Outcome(residual=err, tolerance=tol, values={"max_abs_error": float(np.max(np.abs(b2 - s * a2)))},
                   message=f"|alpha'_1 - e^(-c) alpha_1| = {err:.3g} ({'with' if bias else 'no'} bias)")


@outscale.numeric
def _(p):
    """Integrate with Lt and Lt + c (no bias) and compare alpha'_1 with e^{-c} alpha_1."""
    if p.bias:
        return inconclusive("the claim assumes no bias (W_{p,w+1} = 0); set bias=false")
    return _outscale_outcome(p, False)


outscale.property(over=("w", "N", "Lt", "c", "seed"), max_examples=10)


@outscale.falsifier("with_bias", search=("seed",))
def _(p):
    """With a bias column the appended 1 is not homogeneous: the symmetry breaks."""
    return _outscale_outcome(p, True)


@outscale.reproduction
def _(p):
    """Catalogue S4(b)/R7: Lt = 1, c = 2.5: no-bias error 7.2e-9 (solver-dependent; bound 1e-7), with bias 0.84
    (weight family unrecorded: compared as O(1), i.e. > 0.1)."""
    p = outscale.resolve({"Lt": 1.0, "c": 2.5})
    e0 = _outscale_outcome(p, False).values["max_abs_error"]
    e1 = _outscale_outcome(p, True).values["max_abs_error"]
    return Outcome.from_parts({"no bias < 1e-7": (e0, 1e-7), "with bias O(1)": (0.0 if e1 > 0.1 else 1.0, 0.0)},
                              message=f"max error no bias {e0:.2e} (quoted 7.2e-9), with bias {e1:.3f} (quoted 0.84)",
                              values={"quoted": {"no_bias": 7.2e-9, "bias": 0.84}})


def _outscale_symbolic(exp_sign=-1, leak_sign=1):
    """For a > 0 and a < 0 (relu(z) = z or 0): sympy's d/dp (e^{exp_sign c p} a) with a' = -Lt a + W relu(a)
    substituted, against the ODE with leak Lt + leak_sign c (printed: e^{-cp}, Lt + c): regions that fail."""
    p_, c, Lt, Wv = sp.symbols("p c Lt W", real=True)
    bad = 0
    for relu in (lambda z: z, lambda z: 0):
        a = sp.Function("a")(p_)
        da = -Lt * a + Wv * relu(a)
        scaled = sp.exp(exp_sign * c * p_) * a
        lhs = sp.diff(scaled, p_).subs(sp.Derivative(a, p_), da)
        rhs = -(Lt + leak_sign * c) * scaled + Wv * relu(scaled)
        bad += int(sp.expand(lhs - rhs) != 0)
    return bad


@outscale.symbolic(timeout=30)
def _(p):
    """d/dp (e^{-cp} a) = -(Lt + c) e^{-cp} a + W relu(e^{-cp} a), given a' = -Lt a + W relu(a), for a > 0 and a < 0."""
    bad = _outscale_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "proved":
                   "output scaling on both ReLU regions (positive homogeneity, e^{-cp} > 0)"}, message="regions failed")


@outscale.mutant({"exponent_sign": "alpha'_p = e^{+cp} alpha_p", "leak_minus_c": "Lt -> Lt - c"}, timeout=30)
def _(p, variant):
    """The scaling perturbed, through the same procedure: a region must fail."""
    bad = _outscale_symbolic(**{"exponent_sign": dict(exp_sign=1), "leak_minus_c": dict(leak_sign=-1)}[variant])
    return Outcome(residual=bad, tolerance=0, values={"failed": bad}, message=f"{variant}: {bad} regions failed")


# ---------------------------------------------------------------------------
# M1, M2, M3, E22: the ODE, its discretisation and the objective
disc = Claim(
    id="jacot.leaky_discretisation",
    title="The leaky ResNet ODE and its discretisation: D1 with rho = 1/L converges at O(1/L), the printed rho = 1 recursion does not",
    label="l.31-47 (M1-M3)",
    section="2",
    equation="l.33, l.41, l.43, l.47",
    lines=(31, 47),
    statement=r"\partial_p\alpha_p=-\tilde L\alpha_p+W_p\sigma(\alpha_p)\ \text{is the continuous version of}\ "
              r"\alpha_{\ell+1}=(1-\tilde L)\alpha_\ell+W_\ell\sigma(\alpha_\ell)",
    status="heuristic",
    corrected=r"\alpha_{p_\ell}=(1-\tfrac{\tilde L}L)\alpha_{p_{\ell-1}}+\tfrac1LW_{p_\ell}\sigma(\alpha_{p_{\ell-1}})"
              r"\text{ (D1, }\rho_\ell=\tfrac1L)\ \text{satisfies}\ \max|\alpha^{(L)}_1-\alpha_1|=O(1/L),\ "
              r"\mathcal L^{(L)}(\theta)\to\tfrac1N\|f^*(X)-\alpha_1(X)\|^2+\tfrac\lambda{2\tilde L}\int_0^1\|W_p\|_F^2dp",
    params=[
        Param.int("w", 5, 1, 16, "width", search=(2, 6)),
        Param.int("N", 7, 1, 16, "data points", search=(2, 8)),
        Param.float("Lt", 2.0, 0.0, 20.0, "effective depth L~ (0: the NeuralODE of M1)", search=(0.0, 4.0)),
        Param.int("L0", 25, 2, 400, "coarsest number of layers; errors at L0, 2 L0, 4 L0, 8 L0 (need L0 > Lt)",
                  search=(20, 40)),
        Param.float("lam", 0.1, 0.0, 10.0, "regularisation lambda of the objective M3"),
        Param.seed("seed of X, f*(X) and the smooth weights W_p"),
    ],
    validate=lambda p: _validate_disc(p),
    notes="M1 (Lt = 0, the NeuralODE) and M2 (Lt > 0) are definitions; l.43 ('continuous version of "
          "alpha_{l+1} = (1 - Lt) alpha_l + W_l sigma(alpha_l)') is heuristic (E22): it is explicit Euler with step 1, "
          "and by S1 the per-layer leak must be Lt/L. Check: weights W_p = C0 + sin(3p) C1 + p^2 C2, reference "
          "alpha_1 by RK4 with 1000 steps (its error, estimated against 500 steps, is reported), D1 errors at "
          "L0 2^j, j = 0..3, in the Frobenius norm (equivalent to the max norm within sqrt(wN); the max norm's "
          "order drifts irregularly as its maximising entry switches, and is reported); the observed order between "
          "the last two L must be 1 within 3x the larger of the last two changes of the observed order (geometric "
          "drift, one turn allowed where two drift terms of opposite sign meet; fresh sweep 4100702 refuted the "
          "last-change-only allowance at such a turn) + 1e-3 for ReLU-kink noise. M3: the discrete cost (D1) converges to the continuous "
          "objective (reference: RK4 endpoint, Gauss-Legendre quadrature of int |W_p|^2) at the same order.",
    catalogue="jacot §2.1 M1, M2, M3; §4 E22",
    covers=("M1", "M2", "M3"),
)


def _validate_disc(p):
    if not p.L0 > p.Lt:
        raise ParamError(f"parameter L0 must exceed Lt (D2/D3: rho Lt = Lt/L < 1; got L0={p.L0}, Lt={p.Lt})")


def _disc_setup(p):
    rng = np.random.default_rng(p.seed)
    X = rng.standard_normal((p.w, p.N))
    Y = rng.standard_normal((p.w, p.N))
    C = rng.standard_normal((3, p.w, p.w + 1)) / np.sqrt(p.w + 1)
    return X, Y, _weight_family(C)


def _continuous_cost(p, X, Y, Wf, A1):
    if p.Lt == 0 or p.lam == 0:
        return float(np.sum((Y - A1) ** 2) / p.N), 0.0
    xg, wg = np.polynomial.legendre.leggauss(20)
    tq = 0.5 * (xg + 1)
    integral = float(sum(0.5 * wi * np.sum(Wf(t) ** 2) for t, wi in zip(tq, wg)))
    return float(np.sum((Y - A1) ** 2) / p.N) + p.lam / (2 * p.Lt) * integral, integral


def _drift_allowance(q):
    """How far the last observed order q[-1] may still be from the asymptotic one.  Error model: the observed order
    drifts as q_j = q_inf + a h_j + b h_j^2 + ... (h_j = 1/L_j halving); once one term dominates, the remaining drift
    |q_last - q_inf| is at most about the last change |q_last - q_prev| (geometric, ratio 1/2), and 3x that covers the
    ratio not yet reached.  Where the two leading terms have opposite signs the drift turns, and the last change alone
    understates it: fresh sweep 4100702 (w = 8, N = 2, Lt = 4.27, L0 = 6, so rho Lt = 0.71 at the coarsest level)
    had max-norm orders 0.985, 1.013, 1.012, and the last change 0.001 against a deviation of 0.012 was refuted; in
    the Frobenius norm (now the one read) the same draw turns too, 1.0036, 0.9968, 0.9984, 1.0004.  So the allowance is 3x the larger of the last two
    changes (one turn of the drift allowed), + 1e-3 for the ReLU kinks' non-smooth dependence on L.  The falsifiers
    (order 2 claimed: deviation ~1 with changes ~1e-2; the printed rho = 1 leak: no convergence, q ~ 0) stay far
    outside it."""
    return 3 * float(np.max(np.abs(np.diff(q)[-2:]))) + 1e-3


def _disc_outcome(p, scheme="D1", claimed_order=1.0):
    X, Y, Wf = _disc_setup(p)
    ref = _ode_endpoint(X, Wf, p.Lt, 1000)
    ref_err = float(np.max(np.abs(ref - _ode_endpoint(X, Wf, p.Lt, 500))))
    J, _ = _continuous_cost(p, X, Y, Wf, ref)
    Ls = [p.L0 * 2**j for j in range(4)]
    errs, errs_max, cost_errs = [], [], []
    for L in Ls:
        rho = ln.equidistant(L)
        ps = np.cumsum(rho)
        Ws = np.array([Wf(t) for t in ps])
        if scheme == "D1":
            A = ln.forward_numpy(X, Ws, rho, p.Lt)[-1]
            reg = 0.0 if (p.Lt == 0 or p.lam == 0) else p.lam / (2 * p.Lt) * float(np.sum(rho * np.sum(Ws**2, axis=(1, 2))))
            cost_errs.append(abs(float(np.sum((Y - A) ** 2) / p.N) + reg - J))
        else:  # l.43 printed: per-layer leak Lt, weights W_{p_l}/L
            A = X.copy()
            for l in range(L):
                A = (1 - p.Lt) * A + Ws[l] / L @ leaky.sigma(A)
            cost_errs.append(np.nan)
        # The order is read on the Frobenius norm of the error (equivalent to the statement's max norm within
        # sqrt(wN), so O(1/L) in one is O(1/L) in the other): the max over entries is the upper envelope of wN curves
        # C_i h + D_i h^2 whose maximiser switches between levels, which makes its observed order drift irregularly
        # (sweep 4100704, w = 6, N = 8: max-norm orders 1.0064, 1.0054, 1.0045, 1.0019, 1.0001 against Frobenius
        # 1.034, 1.015, 1.007, 1.003, 1.002 -- the halving drift of one smooth curve).  The max norm is reported.
        errs.append(float(np.linalg.norm(A - ref)))
        errs_max.append(float(np.max(np.abs(A - ref))))
    errs = np.array(errs)
    if errs[-1] < 1e3 * np.sqrt(A.size) * ref_err or not np.all(np.isfinite(errs)):
        return inconclusive("discretisation error at the finest L is not resolved by the reference", errors=errs.tolist(),
                            reference_error=ref_err)
    q = np.log2(errs[:-1] / errs[1:])
    parts = {"path order": (abs(q[-1] - claimed_order), _drift_allowance(q))}
    values = {"L": Ls, "errors": errs.tolist(), "errors_max": errs_max, "observed_orders": q.tolist(),
              "observed_orders_max": np.log2(np.array(errs_max[:-1]) / np.array(errs_max[1:])).tolist(),
              "reference_error": ref_err,
              "plot": {"kind": "loglog", "x": [float(L) for L in Ls],
                       "series": {f"|alpha_1^(L) - alpha_1|_F ({scheme})": errs.tolist(),
                                  f"max |alpha_1^(L) - alpha_1| ({scheme})": errs_max,
                                  "C/L": (errs[0] * Ls[0] / np.array(Ls, dtype=float)).tolist()},
                       "xlabel": "layers L", "ylabel": "error at p = 1", "title": "D1 converges to the ODE at O(1/L)"}}
    if scheme == "D1" and p.Lt > 0 and p.lam > 0:
        ce = np.array(cost_errs)
        if ce[-1] > 1e3 * ref_err:
            qc = np.log2(ce[:-1] / ce[1:])
            # the corrected statement says the cost CONVERGES (its error O(1/L) at worst, as the path's): asserted
            # one-sided, order >= claimed within the same Richardson allowance.  Audit (sweep seed 424242: w = 1,
            # N = 11, Lt = 7.7, lam = 9.5): the first-order terms of loss and regulariser nearly cancel and the cost
            # error fell at orders 2.2, 2.7, 3.3 -- faster than 1/L, which the two-sided test called refuted.
            parts["cost order >= 1"] = (max(0.0, claimed_order - qc[-1]), _drift_allowance(qc))
            values["cost_errors"] = ce.tolist()
            values["cost_orders"] = qc.tolist()
    return Outcome.from_parts(parts, message=f"errors {', '.join(f'{e:.3g}' for e in errs)} at L = {Ls}; "
                                             f"observed order {q[-1]:.3f} (claimed {claimed_order})", values=values)


@disc.numeric
def _(p):
    """D1 (rho = 1/L) against an RK4 reference of the ODE: observed order 1 for the path and for the cost."""
    return _disc_outcome(p)


disc.property(over=("w", "N", "Lt", "seed"), max_examples=6)


@disc.falsifier({
    "per_layer_leak_Lt": "l.43 taken literally as a discretisation: per-layer leak Lt (rho = 1), weights W_{p_l}/L: "
                         "no convergence. (The two-way encoding of E22 is jacot.erratum_leak_per_layer.)",
    "second_order": "Claim O(1/L^2) for D1 (the weights are lagged, explicit Euler): refuted, the order is 1.",
})
def _(p, variant):
    return _disc_outcome(p, **{
        "per_layer_leak_Lt": dict(scheme="printed"),
        "second_order": dict(claimed_order=2.0),
    }[variant])


def _disc_symbolic(variant="stated"):
    """Scalar ODE alpha' = f(alpha) = -Lt alpha + W s(alpha) (s a free function); one step of the recursion
    (D1 as corrected, or a perturbed form) from alpha with h = 1/L against the Taylor expansion of the exact
    solution: the consistency defect lim_{L->oo} L (step - alpha) - f and the local error L^2 (step - exact)
    as L -> oo (must be finite for a first-order scheme)."""
    a, W, Lt, L = sp.symbols("alpha W Lt L", positive=True)
    sfun = sp.Function("s")
    f = -Lt * a + W * sfun(a)
    step = {"stated": (1 - Lt / L) * a + W * sfun(a) / L,
            "per_layer_leak_Lt": (1 - Lt) * a + W * sfun(a) / L,
            "unscaled_W": (1 - Lt / L) * a + W * sfun(a)}[variant]
    h = 1 / L
    exact = a + h * f + h**2 / 2 * sp.diff(f, a) * f  # alpha(p + h) to O(h^3)
    consistency = sp.limit(sp.expand(L * (step - a) - f), L, sp.oo)
    local = sp.limit(sp.expand(L**2 * (step - exact)), L, sp.oo)
    return int(consistency != 0) + int(local.has(sp.oo, -sp.oo, sp.zoo, sp.nan))


@disc.symbolic(timeout=30)
def _(p):
    """D1 (rho = 1/L) is consistent with the leaky ODE: L (step - alpha) -> f(alpha), local error O(1/L^2)."""
    bad = _disc_symbolic()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.limit against the Taylor expansion",
                   "proved": "D1 is a consistent first-order scheme (explicit Euler, step 1/L) for the ODE of l.41"},
                   message="failed: inconsistent, or local error not O(1/L^2)")


@disc.mutant({"per_layer_leak_Lt": "leak Lt per layer, (1 - Lt) alpha + W s / L (the l.43 recursion's leak)",
              "unscaled_W": "(1 - Lt/L) alpha + W s (the weights not scaled by the step)"}, timeout=30)
def _(p, variant):
    """The recursion perturbed, through the same procedure: not consistent with the ODE."""
    bad = _disc_symbolic(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{variant}: the recursion is not a consistent discretisation of the ODE")


# ---------------------------------------------------------------------------
# E13 / S3 (l.65): without leakage the range change keeps the depth 0 (re-examined: the document is right)
leak = Claim(
    id="jacot.erratum_range_leak",
    title="Without leakage (Lt = 0), changing the integration range leaves the effective depth 0: the stretched "
          "leak Lt/c is 0 too",
    label="l.65 (E13, re-examined)",
    section="2.1",
    equation="l.65",
    lines=(57, 65),
    statement=r"\tilde L=0:\ W'_q=\tfrac1cW_{q/c}\text{ on }[0,c]\text{ with leak }\tilde L/c=0\Rightarrow"
              r"\alpha'_c=\alpha_1\quad(\text{the range change has no effect on the effective depth})",
    status="holds",
    params=list(_sym_params),
    notes="E13 re-examined (audit, issue 17): status erratum -> holds. l.57 divides the leakage parameter by c, "
          "and l.65's 'since 2 Lt = 0 too' is said of Lt = 0, where every multiple of Lt (Lt/c included) is 0: the "
          "sentence is true as printed (the '2' is at most an extraction artifact for '/c'). The former falsifier "
          "ran a leak 2 Lt for Lt = 2, a reading the document does not make; it is replaced by the nearest wrong "
          "variants of what l.57-65 say: the leak kept at Lt on [0, c] (the hypothesis Lt = 0 dropped) and the "
          "leak multiplied by c instead of divided. The numeric check runs the sentence at Lt = 0 and, at the "
          "drawn Lt, the l.57 rule it rests on (leak Lt/c); the former tolerance was the RK4 step-halving "
          "error, although the paired runs agree to rounding, so a leak 0.1% off certified at steps = 8; now the "
          "rounding model of stretched_path_gap in this module (the 0.1%-off leak is refuted by ~1e8).",
    catalogue="jacot §2.1 S3; §4 E13",
    covers=("E13", "S3"),
)


def _leak_outcome(p, leak_fn):
    """The stretched net with the leak leak_fn(Lt, c) against the original, at Lt = 0 (the sentence of l.65)
    and at the drawn Lt (the l.57 rule the sentence rests on); error model: stretched_path_gap."""
    parts, vals = {}, {}
    for name, q in (("Lt = 0 (l.65)", p.replace(Lt=0.0)), (f"Lt = {p.Lt:g} (l.57 rule)", p)):
        r = stretched_path_gap(q, leak_fn(q.Lt, q.c))
        if isinstance(r, Outcome):
            return r
        parts[name] = r[:2]
        vals[name] = r[2]
    return Outcome.from_parts(parts, values=vals,
                              message=f"|alpha'_c - alpha_1| at Lt = 0 and Lt = {p.Lt:g} on [0, {p.c:g}]")


@leak.numeric
def _(p):
    """Leak Lt/c on [0, c] (0 when Lt = 0): the stretched path ends where the original does, to rounding."""
    return _leak_outcome(p, lambda Lt, c: Lt / c)


leak.property(over=("w", "N", "Lt", "c", "seed", "steps"), max_examples=8)


@leak.falsifier({
    "leak_kept": {"doc": "The hypothesis Lt = 0 dropped: a leaky net (Lt = 2) on the range [0, c] with its leak "
                         "kept at Lt, as if the range change had no effect: the paths differ.",
                  "search": ("seed", "c"), "fixed": {"Lt": 2.0}},
    "leak_times_c": {"doc": "The leak multiplied by c instead of divided (Lt c on [0, c], Lt = 2): the paths differ.",
                     "search": ("seed", "c"), "fixed": {"Lt": 2.0}},
})
def _(p, variant):
    """The stretched net with a wrong leak, through the same RK4 pair and rounding model (c != 1)."""
    r = stretched_path_gap(p, p.Lt if variant == "leak_kept" else p.Lt * p.c)
    if isinstance(r, Outcome):
        return r
    gap, tol, vals = r
    return Outcome(residual=gap, tolerance=tol, values=vals,
                   message=f"{variant}: |alpha'_c - alpha_1| = {gap:.3g} with leak {vals['leak']:.6g} on [0, {p.c:g}]")


# ---------------------------------------------------------------------------
# E22: the per-layer leak of the discrete analogue is Lt/L (l.43 has rho = 1)
perlayer = Claim(
    id="jacot.erratum_leak_per_layer",
    title="The discrete analogue of the leaky ODE has per-layer leak Lt/L (D1, rho = 1/L), not Lt (l.43)",
    label="l.43 (E22)",
    section="2",
    equation="l.43",
    lines=(39, 43),
    statement=r"\partial_p\alpha_p=-\tilde L\alpha_p+W_p\sigma(\alpha_p)\ \text{is the continuum limit of}\ "
              r"\alpha_{\ell+1}=(1-\tilde L)\alpha_\ell+\tfrac1LW_{p_\ell}\sigma(\alpha_\ell)",
    status="erratum",
    corrected=r"\alpha_{p_\ell}=(1-\tfrac{\tilde L}L)\alpha_{p_{\ell-1}}+\tfrac1LW_{p_\ell}\sigma(\alpha_{p_{\ell-1}})"
              r"\ \Rightarrow\ \max|\alpha^{(L)}_1-\alpha_1|=O(1/L)",
    params=[prm for prm in disc.params],
    validate=_validate_disc,
    notes="E22 (the catalogue calls l.43 heuristic, not an error of the theory). The same check as "
          "jacot.leaky_discretisation (_disc_outcome in this module, RK4 reference, Richardson error model on the observed "
          "order), which covers M1-M3; here the printed per-layer leak Lt is the falsifier 'stated'. "
          "The printed recursion is read with the weights scaled by 1/L (any other scaling is further from the ODE).",
    catalogue="jacot §2.1 M2; §4 E22",
    covers=("E22",),
)


@perlayer.numeric
def _(p):
    """D1 with rho = 1/L (leak Lt/L per layer): observed order 1 towards the ODE endpoint."""
    return _disc_outcome(p)


@perlayer.falsifier("stated", search=("seed", "Lt"))
def _(p):
    """Per-layer leak Lt (the printed l.43 recursion, weights W_{p_l}/L): no convergence to the ODE."""
    return _disc_outcome(p, scheme="printed")


perlayer.property(over=("w", "N", "Lt", "seed"), max_examples=4)
