"""Menon §4.2 and §7.1 (seed lines 211-230): the dynamics on G-balanced varieties.

The end-to-end equation (4.9) for any G, and what finite steps (GD) do to the balance.

Conventions: see the package docstring (``C_p = W_{p+1}^T W_{p+1} - W_p W_p^T``, tuples
``[W_N, ..., W_1]``).  Every tolerance below is written next to its error model.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as X
from solvers.matfun import psd_power
from solvers.xp import namespace, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.menon._common import EPS, balanced_instance, draw_layers, rng_for, validate_widths, widths_of

from ._balanced import _fro, _scale


ENERGIES = ("quadratic", "quartic", "completion")


# ---------------------------------------------------------------------------
# shared helpers
def _energy_prime(name: str, rng: np.random.Generator, shape):
    """E'(W) for E = 1/2|M o (W - Y)|^2 (+ q/4 |M o (W-Y)|^4): quadratic (M = 1), quartic
    (q = 1/2), completion (random 0/1 mask M, eq. (3.8))."""
    Y = rng.standard_normal(shape)
    if name == "quadratic":
        return lambda W: W - Y
    if name == "quartic":
        return lambda W: (W - Y) * (1.0 + 0.5 * np.sum((W - Y) ** 2))
    M = (rng.random(shape) < 0.6).astype(float)
    return lambda W: M * (M * (W - Y))


# ===========================================================================
# 4. Theorem 1(b): the end-to-end equation (4.9) for any G
e2e = Claim(
    id="menon.end_to_end_any_g",
    title="The end-to-end matrix obeys (4.9) on every G-balanced variety",
    label="Thm 1(b)",
    section="4.2, 7.1",
    equation="(4.9)-(4.10), (7.10)",
    lines=(224, 230),
    statement=r"\dot W=-\sum_{p=1}^N(A_{p+1}A_{p+1}^T)\,E'(W)\,(B_{p-1}^TB_{p-1}),\quad A_p=W_N\cdots W_p,"
              r"\ B_p=W_p\cdots W_1,\ A_{N+1}=B_0=1",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width (ignored when widths is given)", search=(1, 4)),
        Param.int("N", 3, 2, 8, "depth", search=(2, 6)),
        Param.seed("seed"),
        Param.choice("energy", "quadratic", list(ENERGIES), "the energy E (quadratic, quartic, completion)"),
        Param.choice("init", "random", ["random", "balanced"], "random layers (G != 0) or a balanced point"),
        Param.vector("widths", None, "rectangular widths d_0..d_N (footnote 1); overrides d and N"),
    ],
    validate=validate_widths,
    notes="Lines 224-230 (statement) and 546-558 (proof).  Numeric: dW/dt = Dphi[-grad L] is computed by "
          "the complex-step derivative Im phi(W + i h V)/h with h = 1e-30 (no subtractive cancellation, "
          "truncation h^2 |phi'''| ~ 1e-60), independently of the formula, and compared with (4.9) at a "
          "point that need not be balanced.",
    catalogue="menon §2.2 Thm 1(b)",
)


def _e2e_instance(p):
    rng = rng_for(p.seed)
    widths = widths_of(p)
    Ws = draw_layers(p, rng, widths)
    Ep = _energy_prime(p.energy, rng, (widths[-1], widths[0]))(dln.prod(Ws))
    return widths, Ws, Ep


def _complex_step_velocity(Ws, Ep):
    """Im phi(W - i h D)/h (complex step, h = 1e-30); any array-API backend."""
    xp = namespace(Ws[0], Ep)
    D = dln.grads(Ws, Ep)
    h = 1e-30
    c = lambda a: xp.astype(a, xp.complex128)  # noqa: E731
    Wc = dln.prod([c(w) - c(g) * (1j * h) for w, g in zip(Ws, D)])
    return xp.imag(Wc) / h


def _e2e_scale(Ws, Ep):
    N = len(Ws)
    return sum(_fro(dln.partial_A(Ws, q + 1)) ** 2 * _fro(Ep) * _fro(dln.partial_B(Ws, q - 1)) ** 2
               for q in range(1, N + 1))


def _formula_49(Ws, Ep, prefactor=None):
    N = len(Ws)
    out = 0
    for q in range(1, N + 1):
        A, B = dln.partial_A(Ws, q + 1), dln.partial_B(Ws, q - 1)
        L = A @ A.T if prefactor is None else prefactor(q)
        out = out - L @ Ep @ (B.T @ B)
    return out


@e2e.numeric(backends=("numpy", "cupy"))
def _(p):
    """(4.9) against the complex-step derivative of phi along -grad L, at any (unbalanced) point (array-API:
    the instance is drawn on the host, both sides computed on p.backend)."""
    widths, Ws, Ep = _e2e_instance(p)
    xp = xp_of(p)
    Ws, Ep = X.to_xp(xp, Ws), X.to_xp(xp, [Ep])[0]
    Wdot = _complex_step_velocity(Ws, Ep)
    rhs = _formula_49(Ws, Ep)
    # error model: both sides are sums of N products of <= 2N+1 factors; rounding per entry is
    # ~ (2N+1) max(d) eps |A|^2|E'||B|^2 summed over p: 16 N max(d) eps * scale.
    tol = 16 * len(Ws) * max(widths) * EPS * _e2e_scale(Ws, Ep)
    r = _fro(Wdot - rhs)
    return Outcome(residual=r, tolerance=tol, values={"norm_Wdot": _fro(Wdot), "widths": widths,
                                                      "balance_defect": max((_fro(c) for c in dln.conserved(Ws)),
                                                                            default=0.0)},
                   message="|d/dt phi(W) - (4.9)|_F")


e2e.property(over=("d", "N", "seed", "energy", "init"), max_examples=15)


#: the p-th term of (4.9) as printed, A_{p+1}A_{p+1}^T E' B_{p-1}^T B_{p-1}, and its nearest misprints
_A, _B = dln.partial_A, dln.partial_B
E2E_VARIANTS = {
    "stated": lambda Ws, q, Ep: _A(Ws, q + 1) * _A(Ws, q + 1).T * Ep * (_B(Ws, q - 1).T * _B(Ws, q - 1)),
    # B_{p-1}B_{p-1}^T as on seed line 564
    "line564_BBt": lambda Ws, q, Ep: _A(Ws, q + 1) * _A(Ws, q + 1).T * Ep * (_B(Ws, q - 1) * _B(Ws, q - 1).T),
    # A_p A_p^T for A_{p+1}A_{p+1}^T
    "A_index_shifted": lambda Ws, q, Ep: _A(Ws, q) * _A(Ws, q).T * Ep * (_B(Ws, q - 1).T * _B(Ws, q - 1)),
}
_E2E_INSTANCES = [(1, 2), (1, 4), (2, 2), (2, 3), (3, 2), (2, 3, 1, 2)]


def _e2e_g_prove(variant="stated"):
    """Worst count over the instances of entries of d/dt phi(W - tD)|_{t=0} (sympy diff of the product, D the
    chain-rule gradient with E' free) minus (4.9) (variant) that do not expand to 0; any layers (unbalanced,
    rectangular).  The B B^T misprint only type-checks on square layers: rectangular instances are skipped for it."""
    t = sp.Symbol("t")
    worst = 0
    for inst in _E2E_INSTANCES:
        widths = [inst[0]] * (inst[1] + 1) if len(inst) == 2 else list(inst)
        if variant == "line564_BBt" and len(set(widths)) > 1:
            continue
        N = len(widths) - 1
        Ws = [sp.Matrix(widths[q], widths[q - 1], lambda i, j, q=q: sp.Symbol(f"w{q}_{i}{j}"))
              for q in range(N, 0, -1)]
        Ep = sp.Matrix(widths[-1], widths[0], lambda i, j: sp.Symbol(f"e_{i}{j}"))
        D = dln.grads(Ws, Ep)
        moved = dln.prod([w - t * g for w, g in zip(Ws, D)])
        lhs = moved.diff(t).subs(t, 0)
        rhs = sp.zeros(widths[-1], widths[0])
        for q in range(1, N + 1):
            rhs -= E2E_VARIANTS[variant](Ws, q, Ep)
        worst = max(worst, sum(1 for e in (lhs - rhs) if sp.expand(e) != 0))
    return worst


@e2e.symbolic(timeout=60)
def _(p):
    """d/dt phi(W + tV)|_{t=0} with V_p = -A_{p+1}^T E' B_{p-1}^T (free-symbol E') expands to (4.9)."""
    worst = _e2e_g_prove()
    return Outcome(residual=worst, tolerance=0, values={
        "method": "sympy diff (product rule (7.10)) + expand", "instances": [list(i) for i in _E2E_INSTANCES],
        "proved": "(7.10) = (4.9) for arbitrary E' and arbitrary (unbalanced, rectangular) layers"},
        message="number of entries that did not expand to zero")


@e2e.mutant({
    "line564_BBt": "B_{p-1}B_{p-1}^T for B_{p-1}^TB_{p-1} (the transpose slip of seed line 564)",
    "A_index_shifted": "A_pA_p^T for A_{p+1}A_{p+1}^T (index shifted p+1 -> p)",
}, timeout=60)
def _(p, variant):
    """(4.9) perturbed, through the same procedure: entries must stay nonzero."""
    worst = _e2e_g_prove(variant)
    return Outcome(residual=worst, tolerance=0, values={"nonzero_entries": worst},
                   message=f"up to {worst} entries of d/dt phi - (4.9, {variant}) did not expand to zero")


@e2e.falsifier("thm2_prefactor", search=("seed",), fixed={"init": "random"})
def _(p):
    """Replace A_{p+1}A_{p+1}^T by (WW^T)^{(N-p)/N} (valid on M_0 only): fails off M_0."""
    widths, Ws, Ep = _e2e_instance(p)
    if len(set(widths)) != 1:
        return inconclusive("the falsifier is stated for equal widths")
    N = len(Ws)
    W = dln.prod(Ws)
    R2 = W @ W.T
    Wdot = _complex_step_velocity(Ws, Ep)
    wrong = _formula_49(Ws, Ep, prefactor=lambda q: psd_power(R2, (N - q) / N))
    tol = 16 * N * max(widths) * EPS * _e2e_scale(Ws, Ep)
    # control: at a balanced point built from the same seed the replaced formula is exact
    lam, Qs, Wb = balanced_instance(widths[0], N, p.seed)
    Epb = _energy_prime(p.energy, rng_for(p.seed), W.shape)(dln.prod(Wb))
    R2b = dln.prod(Wb) @ dln.prod(Wb).T
    ctrl = _fro(_complex_step_velocity(Wb, Epb) - _formula_49(Wb, Epb, lambda q: psd_power(R2b, (N - q) / N)))
    return Outcome(residual=_fro(Wdot - wrong), tolerance=tol,
                   values={"balanced_control_residual": ctrl, "norm_Wdot": _fro(Wdot)},
                   message="|d/dt phi - (4.9 with (WW^T)^{(N-p)/N})|_F off M_0 (the balanced control shows the "
                           "replacement is exact on M_0 up to eigh rounding)")


# ===========================================================================
# 5. B-GD: finite-step gradient descent and the balance
gd = Claim(
    id="menon.gd_balance_drift",
    title="Gradient descent moves C_p by exactly eta^2 (D_{p+1}^T D_{p+1} - D_p D_p^T) per step",
    label="B-GD (catalogue §5.2)",
    section="4.2 (derived)",
    equation="(4.7)-(4.8), (7.9)",
    lines=(211, 223),
    statement=r"\mathbf W^+=\mathbf W-\eta\nabla L(\mathbf W)\ \Longrightarrow\ C_p^+-C_p="
              r"\eta^2\bigl(D_{p+1}^TD_{p+1}-D_pD_p^T\bigr),\quad D_p=\nabla_{W_p}L",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width (ignored when widths is given)", search=(1, 4)),
        Param.int("N", 3, 2, 8, "depth", search=(2, 5)),
        Param.seed("seed"),
        Param.float("eta", 0.37, 0.0, 2.0, "step size", low_open=True, search=(1e-4, 0.5)),
        Param.choice("energy", "quadratic", list(ENERGIES), "the energy E"),
        Param.choice("init", "random", ["random", "balanced"], "random layers or a balanced point"),
        Param.vector("widths", None, "rectangular widths d_0..d_N; overrides d and N"),
    ],
    validate=validate_widths,
    notes="Derived (not in the paper): Theorem 1(a) is exact for the flow only.  The O(eta) term of "
          "C_p^+ - C_p cancels by (7.9); the eta^2 term is exact, with no remainder (a polynomial identity). "
          "Consequences: per-step drift O(eta^2), drift O(eta) at a fixed horizon (reproduced), and exact "
          "invariance of M_0 only in the scalar/commuting case, C_p^+ = (1 - eta^2 e^2 prod_{q != p,p+1} "
          "w_q^2) C_p for d = 1 (symbolic).  A falsifier of 'GD preserves M_0' needs d >= 2 and non-normal "
          "F = Q_N^T E' Q_0.",
    catalogue="menon §2.2 B-GD; §5.2",
)


def _gd_instance(p):
    rng = rng_for(p.seed)
    widths = widths_of(p)
    Ws = draw_layers(p, rng, widths)
    Eprime = _energy_prime(p.energy, rng, (widths[-1], widths[0]))
    return widths, Ws, Eprime


def _gd_step_check(Ws, D, eta, widths):
    N = len(Ws)
    new = [w - eta * g for w, g in zip(Ws, D)]
    C0, C1 = dln.conserved(Ws), dln.conserved(new)
    res, drift = 0.0, 0.0
    for q in range(1, N):
        Dq1, Dq = D[N - q - 1], D[N - q]
        res = max(res, _fro((C1[q - 1] - C0[q - 1]) - eta**2 * (Dq1.T @ Dq1 - Dq @ Dq.T)))
        drift = max(drift, _fro(C1[q - 1] - C0[q - 1]))
    # error model: C_p and C_p^+ each carry ~ max(d) eps |W|^2 per entry (products and the difference);
    # the rhs ~ max(d) eps eta^2 |D|^2.  16x margin, Frobenius over d^2 entries folded into max(d).
    scale = max(_scale(Ws), _scale(new)) + eta**2 * max(X.vdot(g, g) for g in D)
    tol = 16 * max(widths) * EPS * scale
    return res, drift, tol, new


@gd.numeric(backends=("numpy", "cupy"))
def _(p):
    """One GD step: |C_p^+ - C_p - eta^2 (D_{p+1}^T D_{p+1} - D_p D_p^T)|_F against rounding (array-API: E'(W)
    is evaluated on the host draw, the gradients, the step and the C_p on p.backend)."""
    widths, Ws, Eprime = _gd_instance(p)
    Ep = Eprime(dln.prod(Ws))
    xp = xp_of(p)
    Ws, Ep = X.to_xp(xp, Ws), X.to_xp(xp, [Ep])[0]
    D = dln.grads(Ws, Ep)
    res, drift, tol, _ = _gd_step_check(Ws, D, p.eta, widths)
    bound = p.eta**2 * max(X.vdot(D[len(Ws) - q - 1], D[len(Ws) - q - 1]) + X.vdot(D[len(Ws) - q], D[len(Ws) - q])
                           for q in range(1, len(Ws)))
    return Outcome(residual=res, tolerance=tol, values={"drift": drift, "eta2_bound": bound, "widths": widths},
                   message="defect of the exact one-step identity (drift <= eta^2(|D_{p+1}|^2+|D_p|^2) follows)")


gd.property(over=("d", "N", "seed", "eta", "energy", "init"), max_examples=15)


#: the one-step drift of C_p as printed, eta^2 (D_{p+1}^TD_{p+1} - D_pD_p^T), and its nearest misprints
GD_VARIANTS = {
    "stated": lambda eta, D1, D0: eta**2 * (D1.T * D1 - D0 * D0.T),
    "sign_flipped": lambda eta, D1, D0: eta**2 * (D1.T * D1 + D0 * D0.T),
    "transposes_swapped": lambda eta, D1, D0: eta**2 * (D1 * D1.T - D0.T * D0),
}


def _gd_prove(variant="stated"):
    """Worst count of entries of C(W - eta D) - C(W) - (drift, variant) that do not expand to zero (E', eta free;
    square layers), plus the failures of the d = 1 scalar corollary C^+ = (1 - eta^2 e^2 prod w_q^2) C."""
    eta = sp.Symbol("eta")
    worst = 0
    for d, N in _GD_INSTANCES:
        Ws = [sp.Matrix(d, d, lambda i, j, q=q: sp.Symbol(f"w{q}_{i}{j}")) for q in range(N, 0, -1)]
        Ep = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"e_{i}{j}"))
        D = dln.grads(Ws, Ep)
        new = [w - eta * g for w, g in zip(Ws, D)]
        C0, C1 = dln.conserved(Ws), dln.conserved(new)
        for q in range(1, N):
            expr = (C1[q - 1] - C0[q - 1]) - GD_VARIANTS[variant](eta, D[N - q - 1], D[N - q])
            worst = max(worst, sum(1 for e in expr if sp.expand(e) != 0))
    # scalar case d = 1, N = 4: C_p^+ = (1 - eta^2 e^2 prod_{q != p, p+1} w_q^2) C_p
    w = sp.symbols("w1:5")
    e = sp.Symbol("e")
    Ws = [sp.Matrix([[w[q - 1]]]) for q in range(4, 0, -1)]
    D = dln.grads(Ws, sp.Matrix([[e]]))
    new = [x - eta * g for x, g in zip(Ws, D)]
    C0, C1 = dln.conserved(Ws), dln.conserved(new)
    scalar_bad = 0
    for q in range(1, 4):
        others = sp.Mul(*[w[k - 1] ** 2 for k in range(1, 5) if k not in (q, q + 1)])
        scalar_bad += int(sp.expand(C1[q - 1][0] - (1 - eta**2 * e**2 * others) * C0[q - 1][0]) != 0)
    return worst, scalar_bad


_GD_INSTANCES = [(1, 3), (2, 2), (2, 3), (3, 2)]


@gd.symbolic(timeout=60)
def _(p):
    """Free-symbol E' and eta: C^+ - C - eta^2(D_{p+1}^TD_{p+1} - D_pD_p^T) expands to 0; d=1 scalar formula."""
    worst, scalar_bad = _gd_prove()
    return Outcome(residual=worst + scalar_bad, tolerance=0, values={
        "method": "sympy.expand", "instances": [list(i) for i in _GD_INSTANCES] + [[1, 4, "scalar formula"]],
        "proved": "exact one-step identity for all E', eta; scalar: C^+ = (1 - eta^2 e^2 prod w_q^2) C, "
                  "so C = 0 is GD-invariant when d = 1"},
        message="number of entries that did not expand to zero")


@gd.mutant({
    "sign_flipped": "C^+ - C = eta^2 (D_{p+1}^TD_{p+1} + D_pD_p^T) (the sum, not the difference)",
    "transposes_swapped": "C^+ - C = eta^2 (D_{p+1}D_{p+1}^T - D_p^TD_p) (transposes on the wrong side)",
}, timeout=60)
def _(p, variant):
    """The one-step identity perturbed, through the same procedure: entries must stay nonzero."""
    worst, _ = _gd_prove(variant)
    return Outcome(residual=worst, tolerance=0, values={"nonzero_entries": worst},
                   message=f"up to {worst} entries of C^+ - C - (drift, {variant}) did not expand to zero")


@gd.falsifier("gd_preserves_M0", search=("seed",), fixed={"d": 2, "init": "balanced", "eta": 0.1})
def _(p):
    """'GD preserves M_0 exactly': with d >= 2 and a non-normal F = Q_N^T E' Q_0, one step leaves M_0."""
    widths, Ws, Eprime = _gd_instance(p)
    D = dln.grads(Ws, Eprime(dln.prod(Ws)))
    res, drift, tol, new = _gd_step_check(Ws, D, p.eta, widths)
    C0 = max(_fro(c) for c in dln.conserved(Ws))
    Ep = Eprime(dln.prod(Ws))
    # with W = Q_N Lam^N Q_0^T, normality of F = Q_N^T E' Q_0 is normality of E'^T-conjugate; report |[F, F^T]|
    U, _, Vt = np.linalg.svd(dln.prod(Ws))
    F = U.T @ Ep @ Vt.T
    return Outcome(residual=max(_fro(c) for c in dln.conserved(new)), tolerance=tol + C0,
                   values={"C_before": C0, "drift": drift, "identity_residual": res,
                           "nonnormality_|FF^T-F^TF|": _fro(F @ F.T - F.T @ F)},
                   message="max_p |C_p^+|_F after one GD step from a balanced point")


@gd.reproduction(name="drift_table")
def _(p):
    """Catalogue §2.2/§5.2 (t_gd2.py): d=N=3, rng(1), balanced start, T=1: |dC_1| vs eta |int (D_2^TD_2 - D_1D_1^T)|."""
    quoted = {0.02: (2.5337e-2, 2.4943e-2, 1.7), 0.01: (1.2566e-2, 1.2471e-2, 0.8),
              0.005: (6.2590e-3, 6.2357e-3, 0.4)}  # |dC_1|, eta|int|, mismatch % (§2.2 precision)
    rng = np.random.default_rng(1)
    d, N = 3, 3
    Y = rng.standard_normal((d, d))
    lam = rng.uniform(0.6, 1.4, d)
    W0 = dln.balanced_point(lam, [dln.random_orthogonal(d, rng) for _ in range(N + 1)])

    def coef(Ws):
        D = dln.grads(Ws, dln.prod(Ws) - Y)
        return D, D[N - 2].T @ D[N - 2] - D[N - 1] @ D[N - 1].T

    def flow_integral(h):
        # RK4 on the flow augmented by J' = D_2^TD_2 - D_1D_1^T (order 4; step-doubling error estimate)
        Ws, J = [w.copy() for w in W0], np.zeros((d, d))
        for _ in range(int(round(1.0 / h))):
            ks, cs = [], []
            for stage in range(4):
                if stage == 0:
                    X = Ws
                else:
                    f = 0.5 if stage < 3 else 1.0
                    X = [w + f * h * k for w, k in zip(Ws, ks[-1])]
                D, c = coef(X)
                ks.append([-g for g in D])
                cs.append(c)
            Ws = [w + h / 6 * (a + 2 * b + 2 * c + e) for w, a, b, c, e in zip(Ws, *ks)]
            J = J + h / 6 * (cs[0] + 2 * cs[1] + 2 * cs[2] + cs[3])
        return J

    J, J2 = flow_integral(4e-3), flow_integral(2e-3)
    quad_err = _fro(J - J2) * 16 / 15
    rows, worst = {}, 0.0
    for eta, (qa, qb, qm) in quoted.items():
        Ws = [w.copy() for w in W0]
        for _ in range(int(round(1.0 / eta))):
            D, _ = coef(Ws)
            Ws = [w - eta * g for w, g in zip(Ws, D)]
        dC = dln.conserved(Ws)[0] - dln.conserved(W0)[0]
        a, b = _fro(dC), eta * _fro(J2)
        mism = 100 * _fro(dC - eta * J2) / b
        # compare at the quoted precision: one unit in the last quoted digit (5 significant digits for
        # the norms, 0.1 percentage point for the mismatch), allowing for the rounding of the catalogue's
        # own (unstated) quadrature of the integral
        ulp = lambda v: 10.0 ** (np.floor(np.log10(v)) - 4)  # noqa: E731
        ratios = [abs(a - qa) / ulp(qa), abs(b - qb) / ulp(qb), abs(mism - qm) / 0.1]
        worst = max(worst, *ratios)
        rows[str(eta)] = {"|dC_1|": a, "eta|int|": b, "mismatch_percent": mism,
                          "quoted": [qa, qb, qm], "mismatch_over_eta": mism / 100 / eta}
    return Outcome(residual=worst, tolerance=1.0,
                   values={"rows": rows, "quadrature_error_estimate": quad_err,
                           "note": "the §5.2 table quotes 0.83% and 0.41%; this computation gives 0.82% and "
                                   "0.40% (the §2.2 text's 0.8% and 0.4% agree); eta|int| at eta=0.02 is "
                                   "2.49425e-2 here (quadrature error ~4e-9), printed 2.4943e-2"},
                   message="max |computed - quoted| in units of the last quoted digit")


@gd.reproduction(name="commuting_invariance")
def _(p):
    """Catalogue §5.2: C_p = 0 stays 0 under GD for d = 1 (N = 4, 200 steps) and diagonal 3x3 layers."""
    out = {}
    worst_ratio = 0.0
    for label, d in (("scalar", 1), ("diagonal", 3)):
        rng = np.random.default_rng(3)
        N, eta, steps = 4, 0.05, 200
        lam = rng.uniform(0.6, 1.2, d)
        signs = [np.diag(rng.choice([-1.0, 1.0], d)) for _ in range(N + 1)]
        Ws = dln.balanced_point(lam, signs)  # diagonal balanced layers (commuting)
        Y = np.diag(rng.uniform(0.5, 1.5, d))
        scale = _scale(Ws)
        for _ in range(steps):
            D = dln.grads(Ws, dln.prod(Ws) - Y)
            Ws = [w - eta * g for w, g in zip(Ws, D)]
            scale = max(scale, _scale(Ws))
        drift = max(_fro(c) for c in dln.conserved(Ws))
        tol = steps * 8 * d * EPS * scale  # rounding per step, no growth (the factor 1 - eta^2(...) <= 1)
        out[label] = {"max_|C_p|": drift, "tolerance": tol}
        worst_ratio = max(worst_ratio, drift / tol)
    return Outcome(residual=worst_ratio, tolerance=1.0,
                   values={**out, "quoted": {"scalar": "identically 0", "diagonal": 4e-16}},
                   message="max |C_p| after 200 GD steps, in units of the rounding tolerance")
