"""Chen §8 (seed lines 1207-1242): the gradient flow for the standard cost with collapsed initial data
reduces to a bilinear toy, and its error equation (catalogue chen §2.9: S8a, S8b; erratum E23).

Claims:

* ``chen.collapsed_reduction``   S8a (8.1)-(8.4): collapsed clusters give the bilinear toy [E23: needs
                                 b_{Q+1} = -W_{Q+1} b^(Q), not b_{Q+1} = 0]
* ``chen.toy_error_equation``    S8b (8.5)-(8.8): E = WB + Y obeys E' = -W W^T E - E B^T B

D5: "W_{Q+1}" of §8-9 is the cumulative output matrix W^(Q+1); output bias b_{Q+1} = -W_{Q+1} b^(Q).  The
bilinear toy and its integrator: ``theorems/chen/_toy.py``; decisions D1-D9 in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import chen as cm
from solvers import xp_chen as xc
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.chen._common import EPS, XP, _xs, rng_for
from theorems.chen._toy import (_collapsed_instance, _to_network, _toy_instance, _toy_matrix_params, _toy_params,
                               _validate_toy_matrices)


# ===========================================================================
# S8a (E23)


sec8a = Claim(
    id="chen.collapsed_reduction",
    title="Collapsed clusters reduce the standard cost to the bilinear toy 1/2 sum |W beta^(l) + y_l|^2",
    label="§8 (8.1)-(8.4)",
    section="8",
    equation="(8.1)-(8.4)",
    lines=(1207, 1225),
    statement=r"\tau^{(Q)}|_{s=0}(x_{\ell,i})=-\beta^{(\ell)}\ \forall\ell,i,\ b_{Q+1}=0\ \Longrightarrow\ \tilde{\mathcal C}="
              r"\tfrac12\sum_\ell|-W_{Q+1}\beta^{(\ell)}-y_\ell|^2",
    status="erratum",
    corrected=r"\mathcal I^{(Q)}(x_{\ell,i})=-\beta^{(\ell)}\ \forall\ell,i,\ b_{Q+1}=-W_{Q+1}b^{(Q)},\ W:=W^{(Q+1)}\ (\text{cumulative}):\ x^{(Q+1)}_{\ell,i}=-W^{(Q+1)}\beta^{(\ell)},\ "
              r"\tilde{\mathcal C}=\tfrac12\sum_\ell|W^{(Q+1)}\beta^{(\ell)}+y_\ell|^2\ \text{(while the collapse persists)}",
    params=[
        Param.int("Q", 2, 2, 2, "dimension = layers = clusters (Q = 2 only: see notes)"),
        Param.int("points", 4, 1, 10, "points per cluster", search=(1, 6)),
        Param.seed("seed"),
    ],
    notes="Network built from aligned cumulative parameters W^(l) = D_l R_l (D_l random positive diagonal: the "
          "reduction does not see W_*), per-layer (W_l, b_l) by the inverse of (2.6); W^(Q+1) random, "
          "W_{Q+1} = W^(Q+1)(W^(Q))^{-1}.  By M7 the output of a collapsed cluster l is W^(Q+1)(beta^(Q) - beta^(l)) "
          "+ (b_{Q+1} + W_{Q+1} b^(Q) - W^(Q+1) beta^(Q)); with b_{Q+1} = 0 the output of cluster Q is 0 (stated "
          "falsifier).  Persistence of (8.1) along the flow is assumed by the paper, not shown (catalogue: the toy "
          "trajectory leaves the collapse at t ~ 2; not encoded here).  (8.1) at l.1213 prints 'tau^(Q)'; it should read I^(Q) (the statement quotes the print; read-through 8: it quoted the correction, and the note cited l.1221).  (8.4), dW^(l)/ds = 0, is not encoded (under D5 the toy cost does not see W^(l)).  Q = 2 "
          "only: the collapsed configuration (cluster j fully truncated by layer j, every other layer the identity on "
          "cluster j or on its image -beta^(j)) is built by rejection over Haar R_l; with signed-orthant R_l it is "
          "infeasible for Q >= 3 (coordinatewise the thresholds would have to satisfy t_j < t_k for all k != j), and "
          "200 Haar draws found none for Q = 3, 4.",
    catalogue="chen §2.9 S8a; §4 E23; §2.7 CL10",
    covers=("S8a", "E23", "CL10"),
)


def _sec8a(p, stated):
    inst = _collapsed_instance(p.Q, p.points, p.seed)
    if inst is None:
        return inconclusive("no collapsed configuration found by rejection for this seed")
    Rs, betas, clusters = inst
    Ws, bs, Wc = _to_network(Rs, betas, p.seed)
    rng = rng_for(p.seed + 5)
    Wcum_out = np.eye(p.Q) + 0.5 * rng.standard_normal((p.Q, p.Q))
    Y = rng.standard_normal((p.Q, p.Q))
    Wout = Wcum_out @ np.linalg.inv(Wc[-1])
    bQ = cm.cumulative(Ws, bs)[1][-1]
    bout = np.zeros(p.Q) if stated else -Wout @ bQ
    # the network's outputs and standard cost on the collapsed data, and the toy (8.2), through the array API
    xp = xp_of(p)
    Wx, bx, betx, Xs = _xs(xp, Ws), _xs(xp, bs), _xs(xp, betas), _xs(xp, clusters)
    Wox, box, Wcx, Yx = on(xp, Wout, bout, Wcum_out, Y)
    err, cost = 0.0, 0.0
    for j, Xj in enumerate(Xs):
        out = Wox @ xc.forward(Wx, bx, Xj)[-1] + xc.col(box)
        err = max(err, float(xc.max_abs(out + Wcx @ xc.col(betx[j]))))
        cost += float(xc.sq_cost(out, Yx[:, j]))
    toy = 0.5 * sum(float(xp.sum(((Wcx @ xc.col(betx[j]))[:, 0] + Yx[:, j]) ** 2)) for j in range(p.Q))
    S = (1 + max(np.max(np.abs(b)) for b in betas)) * max(np.linalg.norm(w, 2) for w in Ws + [Wout]) ** (p.Q + 1)
    tol = 64 * (p.Q + 2) * p.Q * EPS * S * np.linalg.cond(Wc[-1])
    return Outcome.from_parts({"outputs": (err, tol), "cost": (abs(cost - toy), tol * (1 + toy))},
                              message=f"max |x^(Q+1) + W^(Q+1) beta^(l)| = {err:.2e}; cost {cost:.6g} vs (8.2) {toy:.6g}",
                              values={"cost_network": cost, "cost_toy": toy})


@sec8a.numeric(backends=XP)
def sec8a_numeric(p):
    """Outputs and standard cost of the network on collapsed data vs (8.2), with b_{Q+1} = -W_{Q+1} b^(Q)."""
    return _sec8a(p, False)


sec8a.property(over=("points", "seed"), max_examples=8)


@sec8a.falsifier("stated", search=("seed",))
def sec8a_stated(p):
    """l.1221 'we have set b_{Q+1} = 0'."""
    return _sec8a(p, True)


# ===========================================================================
# S8b: the error equation of the bilinear toy (8.5)-(8.8)


sec8b = Claim(
    id="chen.toy_error_equation",
    title="The error E = W B + Y of the bilinear toy obeys E' = -W W^T E - E B^T B",
    label="§8 (8.5)-(8.8)",
    section="8",
    equation="(8.5)-(8.8)",
    lines=(1229, 1247),
    statement=r"\partial_sB=-W^T(WB+Y),\ \partial_sW=-(WB+Y)B^T\ \Longrightarrow\ \partial_sE=-WW^TE-EB^TB",
    status="holds",
    params=_toy_params([Param.int("batch", 1, 1, 512, "random states checked at once, stacked on a leading axis "
                                  "(seeds seed, seed + 1, ...)", search=(1, 8)), *_toy_matrix_params()]),
    validate=lambda p: _validate_toy_matrices(p),
    notes="Symbolic: sympy expansion with matrix-entry symbols (Q = 2).  Numeric: d/ds (WB + Y) by the product rule at "
          "random states vs (8.8), batched through the array API; or at the user's W, B, Y (matrix parameters, read-through 8: "
          "(8.8) quantifies over the state).  Falsifier 'swapped_grams': -W^T W E - E B B^T.",
    catalogue="chen §2.9 S8b",
    covers=("S8b",),
)


def _sec8b(p, swapped):
    """(8.8) at ``batch`` random states (seeds seed, seed + 1, ...; the first is the single-state instance),
    stacked on a leading axis and evaluated through the array API; the state with the largest residual over
    its own tolerance decides (batch = 1: the single-state check)."""
    from types import SimpleNamespace
    batch = getattr(p, "batch", 1)
    if any(getattr(p, n, None) is not None for n in ("W0", "B0", "Y")):
        batch = 1                                 # the user's state (missing matrices drawn from the seed)
        W, B, Y = (a[None] for a in _toy_instance(p))
    else:
        W, B, Y = (np.stack(a) for a in zip(*[_toy_instance(SimpleNamespace(Q=p.Q, seed=p.seed + b))
                                              for b in range(batch)]))
    amax = lambda A: np.max(np.abs(A), axis=(1, 2))  # noqa: E731
    tol = 32 * W.shape[-1] * EPS * (1 + amax(W) + amax(B) + amax(Y)) ** 3     # rounding of cubic products, per state
    xp = xp_of(p)
    W, B, Y = on(xp, W, B, Y)
    T = xp.matrix_transpose
    E = W @ B + Y
    dW, dB = -E @ T(B), -T(W) @ E
    dE = dW @ B + W @ dB
    pred = -(T(W) @ W) @ E - E @ (B @ T(B)) if swapped else -(W @ T(W)) @ E - E @ (T(B) @ B)
    res = asnumpy(xp.max(xp.abs(dE - pred), axis=(-2, -1)))
    k = int(np.argmax(res / tol))
    return Outcome(residual=float(res[k]), tolerance=float(tol[k]),
                   values={"states": batch, "worst_state_seed": p.seed + k},
                   message=f"|dE/ds - (8.8)| = {res[k]:.2e} (worst of {batch} states: seed {p.seed + k})")


@sec8b.numeric(backends=XP)
def sec8b_numeric(p):
    """(8.8) at a random state."""
    return _sec8b(p, False)


sec8b.property(over=("Q", "seed", "W0", "B0", "Y"), max_examples=15)


@sec8b.falsifier("swapped_grams", search=("seed",), fixed={"Q": 2})
def sec8b_swapped(p):
    """Gram matrices swapped: -W^T W E - E B B^T."""
    return _sec8b(p, True)


def _sec8b_symbolic_core(variant="stated"):
    """Entrywise sympy.expand of dE/ds - (8.8) and of dI/ds (Prop 8.3) for Q = 2 with symbolic W, B, Y."""
    Q = 2
    W = sp.Matrix(Q, Q, lambda i, j: sp.Symbol(f"w{i}{j}"))
    B = sp.Matrix(Q, Q, lambda i, j: sp.Symbol(f"b{i}{j}"))
    Y = sp.Matrix(Q, Q, lambda i, j: sp.Symbol(f"y{i}{j}"))
    E = W * B + Y
    dW, dB = -E * B.T, -W.T * E
    rhs = {"swapped_grams": -(W.T * W) * E - E * (B * B.T),
           "missing_term": -(W * W.T) * E}.get(variant, -(W * W.T) * E - E * (B.T * B))
    r1 = dW * B + W * dB - rhs
    r2 = dB * B.T + B * dB.T - (dW.T * W + W.T * dW)
    bad = sum(1 for e in list(r1) + list(r2) if sp.expand(e) != 0)
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "instances": [Q],
                                                      "proved": "(8.8) and d/ds (B B^T - W^T W) = 0 (8.21)-(8.23)"},
                   message="entries that did not expand to zero")


@sec8b.symbolic(timeout=30)
def sec8b_symbolic(p):
    """Entrywise sympy.expand of dE/ds - (8.8) and of dI/ds (Prop 8.3) for Q = 2 with symbolic W, B, Y."""
    return _sec8b_symbolic_core()


@sec8b.mutant({
    'swapped_grams': '(8.8) with the Gram matrices swapped: -W^T W E - E B B^T',
    'missing_term': '(8.8) without -E B^T B',
}, timeout=30)
def sec8b_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _sec8b_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out
