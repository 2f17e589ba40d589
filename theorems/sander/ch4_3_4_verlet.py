"""§4.3.4 Momentum ResNets as continuous models (seed l.2957-2971): the Verlet rewriting with step 1.
Claim: ``sander.momentum_verlet`` (l.2966-2970).

Conventions (gamma, eps = 1/(1 - gamma), the main-text and appendix second-order models, the tanh MLP
residual function): ``theorems.sander._momentum``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import momentum as mom
from theorems.claim import Claim, Outcome, Param, inconclusive

EPS64 = float(np.finfo(np.float64).eps)


# ===========================================================================
# M4.4: Verlet rewriting with step 1 [H]
verlet = Claim(
    id="sander.momentum_verlet",
    title="(4.2) rewritten as v_{n+1} = v_n + (f - v_n)/eps is a step-1 scheme for eps x'' + x' = f",
    label="§4.3.4",
    section="4.3.4",
    equation="(4.6)",
    lines=(2966, 2970),
    statement=r"v_{n+1}=v_n+\frac{f(x_n,\theta_n)-v_n}{\varepsilon},\ x_{n+1}=x_n+v_{n+1},\ \varepsilon=\frac1{1-\gamma}"
              r"\ \text{is a Verlet scheme with step 1 for }\varepsilon\ddot x+\dot x=f",
    status="heuristic",
    params=[
        Param.float("gamma", 0.9, 0.0, 1.0, "momentum (eps = 1/(1-gamma))", high_open=True, search=(0.0, 0.95)),
        Param.float("T", 5.0, 0.0, 20.0, "time horizon of the convergence test", low_open=True),
        Param.seed("seed of the (tied) MLP and x_0"),
    ],
    notes="Exact part (certified): the rewriting is an algebraic identity with eps = 1/(1-gamma) (sympy), and "
          "the scheme with step h, v += h (f - v)/eps, x += h v, is a consistent first-order (symplectic-"
          "Euler type, not the second-order Stormer-Verlet) discretisation of eps x'' + x' = f: the error at "
          "time T halves with h (observed order within 0.25 of 1 between h = T/100 and T/400). Heuristic part: "
          "'the continuous limit with step size 1' -- at h = 1 the scheme is a fixed map and the distance to the "
          "ODE solution is O(1), reported in values as step1_error; a consistent limit needs h -> 0.",
    catalogue="sander_part23 §2.1 M4.4",
)


def _tied_mlp(seed, d=2, p=8):
    rng = np.random.default_rng(seed)
    W1, W2, b = mom.random_weights(1, p, d, rng)
    return W1[0], W2[0], b[0], rng.standard_normal(d)


@verlet.numeric
def _(p):
    """Algebraic rewriting (rounding only) and first-order convergence of the step-h scheme to the ODE."""
    from scipy.integrate import solve_ivp
    eps_ = 1.0 / (1.0 - p.gamma)
    W1, W2, b, x0 = _tied_mlp(p.seed)
    rng = np.random.default_rng(p.seed + 1)
    vv, ff = rng.standard_normal((2, 1000))
    alg = float(np.max(np.abs(p.gamma * vv + (1 - p.gamma) * ff - (vv + (ff - vv) / eps_))))
    alg_tol = 8 * EPS64 * float(np.max(np.abs(vv) + np.abs(ff))) * max(1.0, eps_)
    f = lambda x: mom.mlp(x[None, :], W1, W2, b)[0]  # noqa: E731
    d = x0.size
    ref = solve_ivp(lambda t, z: np.concatenate([z[d:], (f(z[:d]) - z[d:]) / eps_]), (0, p.T),
                    np.concatenate([x0, np.zeros(d)]), method="DOP853", rtol=1e-12, atol=1e-12).y[:d, -1]

    def scheme(N):
        h = p.T / N
        x, v = x0.copy(), np.zeros(d)
        for _ in range(N):
            v = v + h * (f(x) - v) / eps_
            x = x + h * v
        return x
    errs = {N: float(np.max(np.abs(scheme(N) - ref))) for N in (100, 200, 400)}
    if min(errs.values()) <= 1e3 * EPS64 * max(1.0, float(np.max(np.abs(ref)))):
        return inconclusive(f"T={p.T!r}: the scheme and the ODE agree to rounding at N = 100, 200, 400 steps "
                            f"(errors {errs}): no observable convergence order", errors=errs)
    order = math.log2(errs[200] / errs[400])
    x, v = x0.copy(), np.zeros(d)
    for _ in range(int(round(p.T))):
        v = p.gamma * v + (1 - p.gamma) * f(x)
        x = x + v
    step1 = float(np.max(np.abs(x - ref))) if round(p.T) == p.T else None
    # asymptotic error expansion e(h) = C h + O(h^2): the observed order between h = T/200 and T/400 is
    # 1 + O(h); 0.25 is the allowance for the O(h) correction at these steps
    return Outcome.from_parts({"algebra": (alg, alg_tol), "first_order_convergence": (abs(order - 1), 0.25)},
                              message="rewriting residual; |observed order - 1|",
                              values={"errors": errs, "observed_order": order, "step1_error": step1,
                                      "eps": eps_})


#: eps as a function of gamma in the rewriting, as printed and misprinted (mutants)
VERLET_EPS = {"stated": lambda g: 1 / (1 - g), "eps_one_minus_gamma": lambda g: 1 - g, "eps_one_over_gamma": lambda g: 1 / g}


def _verlet_failures(form):
    """(4.2) v_{n+1} = gamma v_n + (1-gamma) f(x_n) against the rewriting v_n + (f - v_n)/eps; and, with
    v_n = x_n - x_{n-1}, the rewritten step is eps (x_{n+1} - 2x_n + x_{n-1}) + (x_n - x_{n-1}) = f(x_n), the step-1
    discretisation of eps x'' + x' = f.  Returns the identities that do not cancel."""
    g, v, f, xm, x = sp.symbols("gamma v f x_m x")
    eps_ = VERLET_EPS[form](g)
    bad = int(sp.cancel(v + (f - v) / eps_ - (g * v + (1 - g) * f)) != 0)
    vn = x - xm                                     # v_n
    x_next = x + g * vn + (1 - g) * f               # (4.2)
    bad += int(sp.cancel(eps_ * (x_next - 2 * x + xm) + (x - xm) - f) != 0)
    return bad


@verlet.symbolic(timeout=30)
def _(p):
    """sympy: v + (f - v)/eps with eps = 1/(1-gamma) expands to gamma v + (1-gamma) f, and (4.2) is the step-1 scheme
    eps (x_{n+1} - 2 x_n + x_{n-1}) + (x_n - x_{n-1}) = f(x_n) of eps x'' + x' = f."""
    bad = _verlet_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel", "instances": ["scalar"],
                                                      "proved": "the rewriting of (4.2) at l.2966 and its second-order form"},
                   message="identities that do not cancel")


@verlet.mutant({"eps_one_minus_gamma": "eps = 1 - gamma instead of 1/(1-gamma)",
                "eps_one_over_gamma": "eps = 1/gamma instead of 1/(1-gamma)"}, timeout=30)
def _(p, variant):
    """eps perturbed, through the same cancellations: the rewriting must fail."""
    bad = _verlet_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_identities": bad},
                   message=f"{bad} identities do not cancel for {variant}")
