"""Menon §4.2 with §7.1 (seed lines 211-223), Theorem 1(a): G-balanced varieties are invariant under the
gradient flow of E o phi.

Sign convention (erratum E1, recorded here once for the whole menon package): we write
``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``, which is ``G_p`` of eq. (4.8) and ``-G_p`` of
eq. (4.2)/(4.3).  The claim ``menon.balanced_sign_convention`` shows the two printed
conventions disagree.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln, rk
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import MAX_STEPS, draw_layers, too_many_steps, validate_widths, widths_of

EPS = np.finfo(float).eps
ENERGIES = {"quadratic": (0.0, False), "quartic": (0.5, False), "completion": (0.0, True)}


def _validate(p):
    if p.layers is not None:
        Ws = p.layers
        if len(Ws) < 2:
            raise ParamError("parameter layers must hold at least two matrices [W_N, ..., W_1] (N >= 2)")
        for i in range(len(Ws) - 1):
            if Ws[i].shape[1] != Ws[i + 1].shape[0]:
                raise ParamError(f"parameter layers: shapes {Ws[i].shape} and {Ws[i + 1].shape} of entries {i} and "
                                 f"{i + 1} do not chain (paper order [W_N, ..., W_1], W_p of shape d_p x d_(p-1))")
        if p.Y is not None and p.Y.shape != (Ws[0].shape[0], Ws[-1].shape[1]):
            raise ParamError(f"parameter Y has shape {p.Y.shape}; the end-to-end matrix has shape "
                             f"{(Ws[0].shape[0], Ws[-1].shape[1])}")
    validate_widths(p)
    if p.Y is not None and p.layers is None:
        w = widths_of(p)
        if p.Y.shape != (w[-1], w[0]):
            raise ParamError(f"parameter Y has shape {p.Y.shape}; the end-to-end matrix has shape {(w[-1], w[0])}")


def _layer_shapes(p):
    """[W_N, ..., W_1] of shapes d_p x d_(p-1) (for the matrix strategies)."""
    w = widths_of(p)
    return [(w[k], w[k - 1]) for k in range(len(w) - 1, 0, -1)]


claim = Claim(
    id="menon.balanced_invariance",
    title="G-balanced varieties are invariant under the gradient flow of E∘φ",
    label="Thm 1(a)",
    section="4.2, 7.1",
    equation="(4.7)-(4.8), (7.7)-(7.9)",
    lines=(211, 223),
    statement=r"\dot{\mathbf W}=-\nabla_{\mathbf W}(E\circ\phi)\ \Longrightarrow\ "
              r"\frac{d}{dt}\bigl(W_{p+1}^TW_{p+1}-W_pW_p^T\bigr)=0,\quad 1\le p\le N-1",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width of every layer (ignored when widths is given)", search=(1, 4)),
        Param.int("N", 3, 2, 8, "depth (number of layers); N >= 2 so that there is a C_p", search=(2, 5)),
        Param.seed("seed of the initial layers and target"),
        Param.float("T", 1.0, 0.0, 10.0, "time horizon", low_open=True),
        Param.float("h", 0.01, 0.0, 0.1, "step of the implicit midpoint rule", low_open=True),
        Param.choice("energy", "quadratic", list(ENERGIES),
                     "E = 1/2|M∘(W-Y)|² (+ q/4|M∘(W-Y)|⁴): quadratic, quartic (q=1/2), completion (random mask)"),
        Param.choice("init", "random", ["random", "balanced"], "random layers (G != 0) or a balanced start"),
        Param.vector("widths", None, "rectangular widths d_0..d_N (footnote 1); overrides d and N"),
        Param.matrices("layers", None, "your own initial layers [W_N, ..., W_1] in the paper's order; "
                       "overrides d, N, widths and init", shape=_layer_shapes, bound=2.0,
                       families=("gaussian", "orthogonal", "rank_deficient", "ill_conditioned", "near_singular",
                                 "seed")),
        Param.matrix("Y", None, "target of the energy (shape d_N x d_0); drawn from the seed when omitted",
                     shape=lambda p: (widths_of(p)[-1], widths_of(p)[0]), bound=2.0,
                     families=("gaussian", "rank_deficient", "seed")),
    ],
    validate=_validate,
    notes="Sign convention E1: C_p := W_{p+1}^T W_{p+1} - W_p W_p^T (= G_p of (4.8), = -G_p of (4.2)). "
          "Numeric check: implicit midpoint rule, which conserves every quadratic invariant exactly, so "
          "the drift is rounding only and any O(h^q) integrator error cannot masquerade as conservation.  "
          "A macro step whose fixed-point iteration does not converge (d = N = 8 at h = 0.01, the quartic energy "
          "even at h = 1e-3, formerly inconclusive) is taken as 2^k implicit-midpoint substeps, k kept from one "
          "macro step to the next by a step controller; the tolerance counts the substeps.  The NumPy reference "
          "is capped at 2.5e5 field evaluations (~25 s on an idle core; past it inconclusive, 'take a larger h or "
          "--backend numba'); the stiffest draws seen (d = 7, N = 8, quartic, T = 6.3) need ~1e5.  The property "
          "draws still stop at d <= 4, N <= 5 to keep the default test run short, the sweep covers the range.  "
          "Tolerance vs residual: the tolerance is the worst-case sum over n steps (linear in n), the observed "
          "drift is a random walk of roundings (~sqrt(n)), so the ratio goes from ~1e3 at the defaults (n = 100) "
          "to ~4e4 at n ~ 1e4; an O(h^2) integrator drift would be >= 1e-6 |W|^2 there, far above either.",
    catalogue="menon §2.2 Thm 1(a), §5.2",
)


# ---------------------------------------------------------------------------
def instance(p, mode=0, coef=(0.0,)):
    """Initial layers, widths and rhs arguments for the parameters ``p``."""
    rng = np.random.default_rng(p.seed)
    widths = widths_of(p)
    if p.layers is not None:
        Ws = [np.array(w, dtype=float) for w in p.layers]
        widths = [Ws[-1].shape[1]] + [w.shape[0] for w in Ws[::-1]]
    else:
        Ws = draw_layers(p, rng, widths)
    Y = rng.standard_normal((widths[-1], widths[0]))
    if p.Y is not None:
        Y = np.array(p.Y, dtype=float)
    q, masked = ENERGIES[p.energy]
    M = (rng.random(Y.shape) < 0.6).astype(float) if masked else None
    return widths, Ws, dln.make_args(widths, Y, M, q, mode, coef)


MAX_HALVINGS = 40     # a macro step is subdivided at most 2^40-fold where the fixed-point iteration fails
#: cost model of the NumPy reference (backend numpy, what sweeps run): one field evaluation is ~90 us at
#: d = N = 8 on an idle core (2N - 2 products of 8 x 8), ~4x that on the shared 2-core machine; past this many
#: evaluations (~25 s idle) the run stops, inconclusive with the advice to take a larger h or --backend numba
MAX_RHS_NUMPY = 250_000


def integrate(p, widths, Ws, args):
    """Implicit midpoint from 0 to T (Numba kernel, or its NumPy reference on backend numpy), n = T/h macro
    steps.  Where the fixed-point iteration of a step does not converge (h Lip(f) too large: large layers,
    the quartic energy, d = N = 8), the macro step is taken as 2^k implicit-midpoint substeps of h/2^k instead:
    every substep is still an implicit-midpoint step, which conserves each quadratic C_p exactly, so the
    error model below holds with n = the number of substeps taken.  A step controller keeps k from one macro
    step to the next (trying k - 1 first, so the step grows back where the flow softens): the former recursion
    restarted every macro step at k = 0 and paid a failed 30-iteration attempt per level and per half, which
    took a stiff quartic draw (d = 7, N = 8, T = 6.3, h = 0.043) to 100 s (now 94k field evaluations, ~10 s).
    Returns (layers at T, substeps, the most fixed-point iterations one step needed), or (None, substeps, None)
    past MAX_STEPS substeps or MAX_RHS_NUMPY field evaluations of the NumPy reference."""
    n = max(1, int(round(p.T / p.h)))
    h = p.T / n
    y0 = dln.pack(Ws)

    calls = [0]

    def rhs_numpy(t, y, *a):
        calls[0] += 1
        return dln.dln_rhs_numpy(t, y, *a)

    def run(y, hh, steps, max_iter=100):
        try:
            if p.backend == "numba":
                return rk.implicit_midpoint(dln.dln_rhs, 0.0, y, hh, steps, args, max_iter=max_iter)
            return rk.implicit_midpoint_numpy(rhs_numpy, 0.0, y, hh, steps, args, max_iter=max_iter)
        except (RuntimeError, FloatingPointError):
            return None, None

    if p.backend == "numba":            # fast path: every macro step converges (a failure costs one compiled run)
        y, iters = run(y0, h, n)
        if y is not None:
            return dln.unpack(y, widths), n, iters
    # the field is autonomous (t enters nowhere), so a macro step can be retried from its start alone
    taken, worst, k = 0, 0, 0
    y = y0
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(n):
            k = max(0, k - 1)
            while True:
                if taken + 2 ** k > MAX_STEPS or calls[0] > MAX_RHS_NUMPY:
                    return None, taken, None
                # a slowly contracting step costs more than two fast ones: 30 iterations, then split
                z, it = run(y, h / 2 ** k, 2 ** k, max_iter=30)
                if z is not None and np.all(np.isfinite(z)):
                    break
                k += 1
                if k > MAX_HALVINGS:
                    return None, taken, None
            taken += 2 ** k
            worst = max(worst, it)
            y = z
    return dln.unpack(y, widths), taken, worst


def drift(Ws0, WsT):
    """Per-layer Frobenius drift of C_p and the scale max_p (|W_{p+1}|^2 + |W_p|^2)."""
    C0, CT = dln.conserved(Ws0), dln.conserved(WsT)
    per = [float(np.linalg.norm(a - b)) for a, b in zip(C0, CT)]
    scale = max(float(np.sum(a * a)) for a in Ws0 + WsT)
    return per, scale


def tolerance(n_steps, scale, widths):
    """Error model: the implicit midpoint rule conserves each quadratic C_p exactly; every step
    adds rounding plus the fixed-point stopping error, each ~ eps * |W|^2 per entry of C_p.
    Summed over n steps and the d_p^2 entries (Frobenius norm): n * 8 * max(d) * eps * scale."""
    return n_steps * 8 * max(widths) * EPS * scale


def _flow_outcome(p, mode=0, coef=(0.0,), extra=None):
    widths, Ws, args = instance(p, mode, coef)
    if too_many_steps(p.T, p.h):
        return too_many_steps(p.T, p.h)
    WsT, n, iters = integrate(p, widths, Ws, args)
    if WsT is None:
        return inconclusive(f"implicit midpoint with h={p.h} stopped after {n} substeps (at most {MAX_STEPS:.0e} "
                            f"substeps, 2^{MAX_HALVINGS} per step, and {MAX_RHS_NUMPY:.1e} field evaluations on "
                            "backend numpy): take a larger h, a smaller T, or --backend numba")
    per, scale = drift(Ws, WsT)
    if not np.isfinite(scale):
        return inconclusive("the flow blew up before T (finite-time blow-up of the quartic energy?)")
    values = {"max_drift": max(per), "drift_per_layer": per, "n_steps": n, "max_iterations": iters,
              "scale": scale, "widths": widths}
    if extra:
        values.update(extra(Ws, WsT, args))
    return Outcome(residual=max(per), tolerance=tolerance(n, scale, widths), values=values,
                   message=f"max_p |C_p(T) - C_p(0)|_F over {n} implicit-midpoint steps")


@claim.numeric(backends=("numpy", "numba"))
def numeric(p):
    """Integrate the gradient flow by the implicit midpoint rule and measure the drift of every C_p."""
    return _flow_outcome(p)


claim.property(over=("d", "N", "seed", "energy", "init", "layers", "Y"), max_examples=12)


# ---------------------------------------------------------------------------
#: the conserved quantity as printed (E1 sign convention), and its nearest wrong variants (mutants): the
#: same procedure must leave entries of their rate of change nonzero
QUANTITIES = {
    "stated": lambda Wp1, Wp: Wp1.T * Wp1 - Wp * Wp.T,
    "transposes_swapped": lambda Wp1, Wp: Wp1 * Wp1.T - Wp.T * Wp,
    "sign_flipped": lambda Wp1, Wp: Wp1.T * Wp1 + Wp * Wp.T,
}
SYMBOLIC_INSTANCES = [(1, 2), (2, 2), (2, 3), (3, 2), (2, 3, 1, 2)]  # (d, N) square, and rectangular widths


def _symbolic_rates(quantity, square_only=False):
    """Entries of d/dt Q(W_{p+1}, W_p) along W' = -D (D = dE∘phi/dW with E' a matrix of free symbols, so for
    every E in C^1) that do not expand to 0, summed over p and the instances; the rate is the derivative in t
    of Q at W + t W' (no product rule written by hand).  Also the pivot identity (7.9)."""
    t = sp.Symbol("t")
    worst, pivots = 0, 0
    for inst in SYMBOLIC_INSTANCES:
        widths = [inst[0]] * (inst[1] + 1) if len(inst) == 2 else list(inst)
        if square_only and len(set(widths)) > 1:
            continue
        N = len(widths) - 1
        Ws = [sp.Matrix(widths[q], widths[q - 1], lambda i, j, q=q: sp.Symbol(f"w{q}_{i}{j}"))
              for q in range(N, 0, -1)]
        Ep = sp.Matrix(widths[-1], widths[0], lambda i, j: sp.Symbol(f"e_{i}{j}"))
        D = dln.grads(Ws, Ep)  # the field is -D; the list helpers are backend-agnostic
        moved = [W - t * G for W, G in zip(Ws, D)]
        for q in range(1, N):
            Q = quantity(dln.layer(moved, q + 1), dln.layer(moved, q))
            worst += sum(1 for e in Q if sp.expand(sp.diff(e, t).subs(t, 0)) != 0)
            Wp1, Wp, Dp1, Dp = dln.layer(Ws, q + 1), dln.layer(Ws, q), D[N - q - 1], D[N - q]
            pivots += sum(1 for e in (Wp1.T * Dp1 - Dp * Wp.T) if sp.expand(e) != 0)
    return worst, pivots


@claim.symbolic(timeout=60)
def symbolic(p):
    """With E'(W) a matrix of free symbols, d/dt C_p expands to 0 identically (so for every E in C^1)."""
    nonzero, pivot = _symbolic_rates(QUANTITIES["stated"])
    return Outcome(residual=nonzero + pivot, tolerance=0, values={
        "method": "sympy: d/dt at t = 0 of C_p(W - tD), expand of every entry",
        "instances": [list(i) for i in SYMBOLIC_INSTANCES],
        "proved": "dC_p/dt = 0 and (7.9) W_{p+1}^T dW_{p+1}/dt = dW_p/dt W_p^T, E' arbitrary"},
        message="number of entries that did not expand to zero")


@claim.mutant({"transposes_swapped": "W_{p+1}W_{p+1}^T - W_p^TW_p (transposes on the wrong side): not conserved",
               "sign_flipped": "W_{p+1}^TW_{p+1} + W_pW_p^T (the sum, not the difference): not conserved"},
              timeout=60)
def mutant(p, variant):
    """The statement perturbed, through the same procedure: entries of its rate must stay nonzero."""
    nonzero, _ = _symbolic_rates(QUANTITIES[variant], square_only=variant == "transposes_swapped")
    return Outcome(residual=nonzero, tolerance=0, values={"nonzero_rate_entries": nonzero},
                   message=f"{nonzero} entries of d/dt of the mutated quantity did not expand to zero")


# ---------------------------------------------------------------------------
# falsifiers: the nearest wrong variants (catalogue §5.2)
@claim.falsifier("layer_penalty", search=("seed",))
def layer_penalty(p):
    """Loss not of the form E∘φ: add mu/2 |W_1|^2 (mu = 1/2). Only the pair (W_2, W_1) breaks."""
    return _flow_outcome(p, mode=1, coef=(0.5,))


@claim.falsifier("per_layer_rates", search=("seed",))
def per_layer_rates(p):
    """Per-layer learning rates c_p: C_p drifts, while W_{p+1}^T W_{p+1}/c_{p+1} - W_p W_p^T/c_p is conserved."""
    N = len(instance(p)[1])
    rates = np.resize(np.array([1.0, 2.0, 0.5, 1.5, 0.75, 1.25, 0.6, 1.8]), N)

    def weighted(Ws, WsT, args):
        N = len(Ws)
        def wq(L):
            return [dln.layer(L, k + 1).T @ dln.layer(L, k + 1) / rates[k] - dln.layer(L, k) @ dln.layer(L, k).T / rates[k - 1]
                    for k in range(1, N)]
        return {"weighted_drift": max(float(np.linalg.norm(a - b)) for a, b in zip(wq(Ws), wq(WsT))),
                "rates": rates.tolist()}
    return _flow_outcome(p, mode=2, coef=rates, extra=weighted)


@claim.falsifier("weight_decay", search=("seed",))
def weight_decay(p):
    """Uniform weight decay lam/2 sum|W_p|^2 (lam = 0.3) on a G != 0 start: C_p(t) = exp(-2 lam t) C_p(0)."""
    lam = 0.3

    def contraction(Ws, WsT, args):
        C0, CT = dln.conserved(Ws), dln.conserved(WsT)
        return {"decay_law_residual": max(float(np.linalg.norm(b - np.exp(-2 * lam * p.T) * a))
                                          for a, b in zip(C0, CT))}
    return _flow_outcome(p.replace(init="random"), mode=3, coef=(lam,), extra=contraction)


@claim.falsifier("finite_step_gd", search=("seed",), fixed={"d": 2})
def finite_step_gd(p):
    """Finite-step gradient descent (eta = 0.1, d >= 2, non-commuting layers) leaves M_G; the drift obeys
    the exact identity C_p^+ - C_p = eta^2 (D_{p+1}^T D_{p+1} - D_p D_p^T) (catalogue §5.2)."""
    eta = 0.1
    widths, Ws, args = instance(p)
    _, Y, M, q, _, _ = args
    steps = max(1, int(round(p.T / eta)))
    Ws0, identity_res = Ws, 0.0
    for _ in range(steps):
        W = dln.prod(Ws)
        R = M * (W - Y)
        D = dln.grads(Ws, M * R * (1 + q * np.sum(R * R)))
        new = [w - eta * g for w, g in zip(Ws, D)]
        N = len(Ws)
        for k in range(1, N):
            Dk1, Dk = D[N - k - 1], D[N - k]
            lhs = dln.conserved(new)[k - 1] - dln.conserved(Ws)[k - 1]
            rhs = eta ** 2 * (Dk1.T @ Dk1 - Dk @ Dk.T)
            identity_res = max(identity_res, float(np.linalg.norm(lhs - rhs)))
        Ws = new
    per, scale = drift(Ws0, Ws)
    return Outcome(residual=max(per), tolerance=tolerance(steps, scale, widths),
                   values={"max_drift": max(per), "drift_per_layer": per, "steps": steps, "eta": eta,
                           "eta2_identity_residual": identity_res},
                   message=f"GD drift of C_p after {steps} steps; the exact eta^2 one-step identity holds to "
                           f"{identity_res:.1e}")
