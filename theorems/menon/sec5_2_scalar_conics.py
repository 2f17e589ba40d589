"""Menon §5.2 with §9 (seed lines 378-380): the scalar conic sections.

Sign convention: G_p is used exactly as in (4.2)/(5.6), ``W_{p+1}^T W_{p+1} = W_p W_p^T - G_p``, i.e.
``G_p = -C_p`` with ``C_p`` of the package docstring (erratum E1).  With this sign the right-to-left
construction (5.7)-(5.8) needs ``R_p^2 - G_p`` psd (G_p negative definite suffices) and the
left-to-right one (5.12) needs ``P_{p+1}^2 + G_p`` psd (G_p positive definite suffices).

Several checks combine a few sub-checks, each with its own error model; they are reported as
``residual = max_i r_i / tol_i`` against ``tolerance = 1`` and every ``r_i``, ``tol_i`` is listed in
``values`` (so ``residual <= 1`` iff every sub-check holds within its own tolerance).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln, rk
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.menon._common import EPS, rng_for


# ===========================================================================
# P3: scalar conic sections (5.10)
scalar_conics = Claim(
    id="menon.scalar_conics",
    title="d = 1: the G-balanced varieties are hyperbolas and gradient-flow trajectories stay on them",
    label="(5.10), Fig. 9.1",
    section="5.2, 9",
    equation="(5.10)",
    lines=(378, 380),
    statement=r"d=1:\ \mathcal M_{\mathbf g}=\{w_{p+1}=v_{p+1}\sqrt{w_p^2-g_p},\ v_p=\pm1\},\ "
              r"\text{i.e. }w_{p+1}^2-w_p^2=-g_p\ \text{(hyperbolas), invariant under the flow}",
    status="holds",
    params=[
        Param.int("N", 2, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of w(0) and the target y"),
        Param.float("T", 5.0, 0.0, 20.0, "time horizon", low_open=True),
        Param.float("eta", 0.1, 0.0, 0.5, "GD step (falsifier finite_step_gd)", low_open=True),
    ],
    notes="The index list (v_{N-1},...,v_1,w_1) on line 378 should be (v_N,...,v_2,w_1) (typo; (5.10) uses "
          "v_{p+1}, 1 <= p <= N-1).  Energy E = (w - y)^2 / 2.  Numeric check: adaptive Dormand-Prince "
          "5(4) (solvers.rk); since each C_p is a first integral, its drift is exactly the sum over steps "
          "of the local errors projected on grad C_p, bounded with the controller's local-error bound."
          "  Tolerance/residual at the defaults ~2e5 (audit rmen8): the tolerance adds the controller's"
          " local-error BOUND sqrt(N)(atol + rtol|w|) over all 379 accepted steps, as if every step used its"
          " whole error budget in the direction of grad C_p; dopri5's actual local errors are far below the"
          " budget and of both signs.",
    catalogue="menon §2.4 P3, §2.6 K2, §5.2 (scalar GD identity)",
    covers=("K2",),
)


def _scalar_instance(p):
    rng = rng_for(p.seed)
    w0 = rng.uniform(0.3, 1.5, p.N) * rng.choice([-1.0, 1.0], p.N)
    y = float(rng.uniform(-2.0, 2.0))
    return w0, y  # w0 packed in paper order [w_N, ..., w_1]


def _scalar_bound(w0, y):
    """A priori bound on max_q |w_q(t)| along the exact flow: L(t) <= L(0) gives |prod w_q| <= B :=
    |y| + sqrt(2 L(0)); with w_q^2 = w_1^2 + c_q (c_q conserved, c_1 = 0) and prod w_q^2 >=
    (min_q w_q^2)^N = (w_1^2 + c_min)^N we get w_1^2 <= B^(2/N) - c_min, so
    max_q w_q^2 <= B^(2/N) + c_max - c_min."""
    w = w0[::-1]  # w_1..w_N
    N = len(w)
    c = w ** 2 - w[0] ** 2
    B = abs(y) + abs(float(np.prod(w)) - y)
    return float(np.sqrt(B ** (2.0 / N) + c.max() - c.min()))


@scalar_conics.numeric(backends=("numpy", "numba"))
def _(p):
    """Integrate the scalar flow (dopri5, rtol 1e-12) and measure the drift of w_{p+1}^2 - w_p^2."""
    w0, y = _scalar_instance(p)
    N = p.N
    args = dln.make_args([1] * (N + 1), np.array([[y]]))
    rtol, atol = 1e-12, 1e-14
    nb = p.backend == "numba"
    res = rk.solve_dopri5(dln.dln_rhs if nb else dln.dln_rhs_numpy, 0.0, w0, p.T, args, rtol=rtol, atol=atol,
                          backend="numba" if nb else "numpy")
    if not res.success:
        return inconclusive(f"the flow did not reach T: {res.message}")
    yT, acc, rej = res.y, res.accepted, res.rejected
    if not np.all(np.isfinite(yT)):
        return inconclusive("the flow blew up")
    # Error model: each accepted step has |err_i| <= sqrt(m) (atol + rtol |y|) (RMS controller, m = N);
    # |grad C_p . err| <= 4 |w|_max max_i |err_i|; a first integral's drift is the sum of these (the
    # flow carries the perturbed value unchanged), plus rounding 10 eps |w|^2 per step.  |w|_max is
    # the a priori bound of _scalar_bound (10% margin for the numerical trajectory).
    ym = 1.1 * max(_scalar_bound(w0, y), float(np.max(np.abs(yT))))
    tol = acc * (4 * ym * np.sqrt(N) * (atol + rtol * ym) + 10 * EPS * ym ** 2)
    C0 = [w0[N - p - 1] ** 2 - w0[N - p] ** 2 for p in range(1, N)]
    CT = [yT[N - p - 1] ** 2 - yT[N - p] ** 2 for p in range(1, N)]
    drift = max(abs(a - b) for a, b in zip(C0, CT))
    g = [-c for c in C0]  # (4.2): w_{p+1}^2 = w_p^2 - g_p
    wT = yT[::-1]  # w_1..w_N
    conic = max(abs(abs(wT[p]) - np.sqrt(max(wT[p - 1] ** 2 - g[p - 1], 0.0))) for p in range(1, N))
    return Outcome(residual=drift, tolerance=tol,
                   values={"g": g, "w0": w0.tolist(), "wT": yT.tolist(), "accepted_steps": acc,
                           "rejected_steps": rej, "w_bound": ym, "conic_5_10_residual": float(conic),
                           "loss_T": 0.5 * (float(np.prod(yT)) - y) ** 2},
                   message=f"max_p |C_p(T) - C_p(0)| along dopri5 ({acc} steps)")


scalar_conics.property(over=("N", "seed"), max_examples=12)


#: the conserved quantity of the scalar DLN as printed, w_{p+1}^2 - w_p^2, and misprints
CONIC_VARIANTS = {
    "stated": lambda a, b: a ** 2 - b ** 2,
    "sign_flipped": lambda a, b: a ** 2 + b ** 2,
    "squares_dropped": lambda a, b: a - b,
}


def _conics_prove(variant="stated"):
    """Failures of: d/dt C(w - tD)|_{t=0} = 0 (sympy diff, D the gradient with e = E'(w) free); the exact GD
    factor C(w - eta D) = (1 - eta^2 e^2 prod_{q != p,p+1} w_q^2) C(w); (5.10) on the hyperbola.  C per variant."""
    Cf = CONIC_VARIANTS[variant]
    bad, inst = 0, []
    e, eta, t = sp.symbols("e eta t")
    for N in (2, 3, 4):
        w = sp.symbols(f"w1:{N + 1}")  # w[0] = w_1
        W = sp.Mul(*w)
        D = [e * W / w[q] for q in range(N)]  # dL/dw_q = e prod_{r != q} w_r
        for p in range(N - 1):
            C = Cf(w[p + 1], w[p])
            moved = [w[q] - t * D[q] for q in range(N)]
            dC = sp.diff(Cf(moved[p + 1], moved[p]), t).subs(t, 0)
            bad += sp.expand(sp.cancel(dC)) != 0
            wn = [w[q] - eta * D[q] for q in range(N)]
            Cn = Cf(wn[p + 1], wn[p])
            other = sp.Mul(*[w[q] ** 2 for q in range(N) if q not in (p, p + 1)])
            bad += sp.expand(sp.cancel(Cn - (1 - eta ** 2 * e ** 2 * other) * C)) != 0
        inst.append(N)
    g, x, v = sp.symbols("g x v")
    bad += sp.expand((v * sp.sqrt(x ** 2 - g)) ** 2 - x ** 2 + g).subs(v ** 2, 1) != 0
    return int(bad), inst


@scalar_conics.symbolic(timeout=60)
def _(p):
    """d/dt (w_{p+1}^2 - w_p^2) = 0 for e = E'(w) free; (5.10) lies on it; exact GD factor (1 - eta^2 e^2 prod)."""
    bad, inst = _conics_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy diff + cancel + expand", "instances": [f"d=1, N={n}" for n in inst],
        "proved": "d/dt C_p = 0; (5.10) satisfies w_{p+1}^2 - w_p^2 = -g_p; GD: C_p^+ = "
                  "(1 - eta^2 e^2 prod_{q != p,p+1} w_q^2) C_p exactly"},
        message="number of identities that did not reduce to zero")


@scalar_conics.mutant({
    "sign_flipped": "w_{p+1}^2 + w_p^2 (the sum, not the difference): not conserved",
    "squares_dropped": "w_{p+1} - w_p (squares dropped): not conserved",
}, timeout=60)
def _(p, variant):
    """The conserved quantity perturbed, through the same procedure: identities must fail."""
    bad, _ = _conics_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} identities did not reduce to zero for C = {variant}")


@scalar_conics.falsifier("finite_step_gd", search=("seed", "N"))
def _(p):
    """Finite-step GD leaves the hyperbola: C_p^+ = (1 - eta^2 e^2 prod_{q != p,p+1} w_q^2) C_p exactly.
    Tolerance: rounding, 10 eps |w|^2 per step (the model of the flow check without integrator error)."""
    w0, y = _scalar_instance(p)
    N, eta = p.N, p.eta
    steps = max(1, int(round(p.T / eta)))
    w = w0[::-1].copy()  # w_1..w_N
    ident, tol, scale = 0.0, 0.0, float(np.max(np.abs(w)))
    for _ in range(steps):
        e = float(np.prod(w)) - y
        D = np.array([e * np.prod(np.delete(w, q)) for q in range(N)])
        wn = w - eta * D
        if not np.all(np.isfinite(wn)):
            return inconclusive("GD diverged")
        for q in range(N - 1):
            C, Cn = w[q + 1] ** 2 - w[q] ** 2, wn[q + 1] ** 2 - wn[q] ** 2
            fac = 1 - eta ** 2 * e ** 2 * np.prod(np.delete(w, [q, q + 1]) ** 2)
            ident = max(ident, abs(Cn - fac * C) / max(1.0, float(np.max(wn ** 2)), abs(fac * C)))
        w = wn
        scale = max(scale, float(np.max(np.abs(w))))
        tol += 10 * EPS * scale ** 2
    C0 = np.array([w0[::-1][q + 1] ** 2 - w0[::-1][q] ** 2 for q in range(N - 1)])
    CT = np.array([w[q + 1] ** 2 - w[q] ** 2 for q in range(N - 1)])
    return Outcome(residual=float(np.max(np.abs(CT - C0))), tolerance=tol,
                   values={"steps": steps, "eta": eta, "C0": C0.tolist(), "CT": CT.tolist(),
                           "gd_identity_rel_residual": ident},
                   message=f"GD drift of w_(p+1)^2 - w_p^2; exact one-step factor identity holds to {ident:.1e}")
