"""App. 4.E Backpropagation for Momentum ResNets (seed l.3551-3562): the memory-free backward pass and
the Jacobian blocks (4.17).  Claim: ``sander.momentum_backprop`` (l.3551-3568).

Conventions (gamma, eps = 1/(1 - gamma), the main-text and appendix second-order models, the tanh MLP
residual function): ``theorems.sander._momentum``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import fd
from solvers import momentum as mom
from theorems.claim import Claim, Outcome, Param

EPS64 = float(np.finfo(np.float64).eps)


# ===========================================================================
# A4.E: backpropagation
backprop = Claim(
    id="sander.momentum_backprop",
    title="Backpropagation through a Momentum ResNet layer: the block Jacobian of App. 4.E",
    label="App. 4.E",
    section="4.E",
    equation="(4.17)",
    lines=(3551, 3568),
    statement=r"\nabla_{z_{k-1}}L=\begin{pmatrix}I+(1-\gamma)\partial_xf&\gamma I\\(1-\gamma)\partial_xf&\gamma I"
              r"\end{pmatrix}^{\!\top}\nabla_{z_k}L,\quad \nabla_{\theta_{k-1}}L=(1-\gamma)\begin{pmatrix}\partial_\theta f"
              r"\\\partial_\theta f\end{pmatrix}^{\!\top}\nabla_{z_k}L,\quad z=(x,v)",
    status="holds",
    params=[
        Param.float("gamma", 0.9, 0.0, 1.0, "momentum", low_open=True, search=(0.3, 1.0)),
        Param.int("L", 5, 1, 30, "depth", search=(1, 8)),
        Param.int("d", 3, 1, 8, "state width", search=(1, 4)),
        Param.int("p", 4, 1, 16, "hidden width", search=(1, 6)),
        Param.int("batch", 2, 1, 8, "samples"),
        Param.seed("seed"),
        Param.float("wscale", 1.0, 0.0, 4.0, "weight variance scale", low_open=True),
    ],
    notes="The loss is L = <g_x, x_L> + <g_v, v_L> with random output gradients (any loss enters only "
          "through them). Checked: the layer Jacobian (4.17) against central differences, the full "
          "backpropagation (solvers.momentum.backprop, with stored activations and with activations "
          "recomputed by the inverse (4.3) as the thesis does) against central differences of L in every "
          "input and parameter entry, and det J = gamma^d. Finite-difference error model: truncation "
          "estimated by Richardson, |D(h) - D(2h)|/3, plus rounding 4 max(eps |L|, |L - L_ext|) / h, the rounding of L "
          "measured against an extended-precision forward pass (at large weights it is ~200 eps |L|); tolerance 10x "
          "that. Recomputed activations: their rounding amplification is measured (reconstruction error of (4.3)), "
          "not assumed to be gamma^-L (which (1 - gamma) F exceeds 30-fold at wscale ~3).",
    catalogue="sander_part23 §2.1 A4.E",
)


def _bp_instance(p):
    rng = np.random.default_rng(p.seed)
    W1, W2, b = mom.random_weights(p.L, p.p, p.d, rng, scale=p.wscale)
    x0 = rng.standard_normal((p.batch, p.d))
    v0 = 0.5 * rng.standard_normal((p.batch, p.d))
    gx, gv = rng.standard_normal((2, p.batch, p.d))
    return W1, W2, b, x0, v0, gx, gv


_fd_gradient = fd.gradient_with_error


def _loss_rounding(x0, v0, gamma, W1, W2, b, gx, gv, L64):
    """|L_64 - L_ext|: the rounding error of the float64 loss <gx, x_L> + <gv, v_L>, measured against the same forward
    pass in np.longdouble (0 where longdouble is no wider than float64)."""
    ld = np.longdouble
    if np.finfo(ld).eps >= np.finfo(np.float64).eps:
        return 0.0
    x, v = x0.astype(ld), v0.astype(ld)
    g, omg = ld(gamma), ld(1) - ld(gamma)
    for n in range(W1.shape[0]):
        v = g * v + omg * (np.tanh(x @ W1[n].T.astype(ld) + b[n].astype(ld)) @ W2[n].astype(ld))
        x = x + v
    return float(abs(ld(L64) - (np.sum(gx.astype(ld) * x) + np.sum(gv.astype(ld) * v))))


@backprop.numeric
def _(p):
    """Layer Jacobian and full backprop (stored and recomputed activations) vs central differences; det J = gamma^d."""
    W1, W2, b, x0, v0, gx, gv = _bp_instance(p)
    g = p.gamma

    def loss(x0_, v0_, W1_, W2_, b_):
        xL, vL = mom.forward_numpy(x0_, v0_, g, W1_, W2_, b_)
        return float(np.sum(gx * xL) + np.sum(gv * vL))

    fdg, fd_err = _fd_gradient(loss, [x0, v0, W1, W2, b])
    # The rounding term of fd.gradient_with_error, 4 eps max(|L|, 1)/h, assumes L is evaluated to eps |L|; the forward
    # pass amplifies its roundings through the layers (large weights, small gamma: 1e-13 at |L| = 2.3, 200 eps |L|,
    # which refuted legal draws at wscale ~3). The rounding error of L is measured: the same forward pass in
    # extended precision (np.longdouble, 64-bit mantissa on x86-64), |L_64 - L_ext|; the central difference then
    # carries <= noise/h, counted 4x as the module's own term is (x86-64 only: where longdouble is double the
    # measurement is 0 and the term stays eps |L|).
    noise = _loss_rounding(x0, v0, g, W1, W2, b, gx, gv, loss(x0, v0, W1, W2, b))
    h_fd = 1e-5                                   # fd.gradient_with_error's default step
    fd_err = [e + 4 * noise / h_fd for e in fd_err]
    parts, vals = {}, {}
    # recomputing the activations by the inverse (4.3), v_{k-1} = (v_k - (1 - gamma) f) / gamma, divides by gamma
    # once per layer: its rounding is amplified by at least gamma^-L (1e10 at gamma = 0.01, L = 5), and by more
    # where the (1 - gamma) F coupling is large (large weights: 30x gamma^-L at wscale 2.8, which refuted legal
    # draws). The amplification is measured: the reconstruction error of the inverse pass (4.3) from the top,
    # relative to eps S (S the largest state), taken with gamma^-L as a floor; the recomputed activations carry
    # that relative error into the gradient (first order)
    amp_law = math.exp(min(-p.L * math.log(g), 700.0))
    xs_, vs_ = mom.trajectory_numpy(x0, v0, g, W1, W2, b)
    with np.errstate(all="ignore"):
        xr_, vr_ = mom.inverse_numpy(xs_[-1], vs_[-1], g, W1, W2, b)
        rec = float(max(np.max(np.abs(xr_ - x0)), np.max(np.abs(vr_ - v0))))
    S_ = max(1.0, float(np.max(np.abs(xs_))), float(np.max(np.abs(vs_))))
    amp = max(amp_law, rec / (EPS64 * S_)) if np.isfinite(rec) else math.inf
    vals.update({"gamma^-L": amp_law, "measured_amplification": amp})
    gscale = max(1.0, max(float(np.max(np.abs(f))) for f in fdg))
    for mode in ("stored", "recomputed"):
        extra = 10 * amp * EPS64 * gscale if mode == "recomputed" else 0.0
        if extra > 1e-3 * gscale:
            vals["recomputed_not_checked"] = (f"amplification {amp:.3g} (gamma^-L = {amp_law:.3g}): the inverse (4.3) "
                                              f"amplifies rounding beyond 1e-3 of the gradient, so recomputed "
                                              f"activations are not comparable")
            continue
        bp = mom.backprop(x0, v0, g, W1, W2, b, gx, gv, recompute=(mode == "recomputed"))
        r = max(float(np.max(np.abs(bp[k] - f) - 10 * e - extra))
                for k, f, e in zip(("x0", "v0", "W1", "W2", "b"), fdg, fd_err))
        dev = max(float(np.max(np.abs(bp[k] - f))) for k, f in zip(("x0", "v0", "W1", "W2", "b"), fdg))
        parts[f"backprop_{mode}"] = (max(r, 0.0) + dev * (r > 0), dev if r <= 0 else 0.0)
        vals[f"max_dev_{mode}"] = dev
    # the layer Jacobian (4.17) in order (x, v) vs central differences of one layer, first sample
    x, v = x0[:1], v0[:1]
    J = mom.layer_jacobian(x, g, W1[0], W2[0], b[0])[0]
    d = p.d

    def layer(z):
        x1, v1 = mom.forward_numpy(z[None, :d], z[None, d:], g, W1[:1], W2[:1], b[:1])
        return np.concatenate([x1[0], v1[0]])
    z = np.concatenate([x[0], v[0]])
    h = 1e-6
    Jfd = np.column_stack([(layer(z + h * e) - layer(z - h * e)) / (2 * h) for e in np.eye(2 * d)])
    Jfd2 = np.column_stack([(layer(z + 2 * h * e) - layer(z - 2 * h * e)) / (4 * h) for e in np.eye(2 * d)])
    jtol = 10 * (float(np.max(np.abs(Jfd - Jfd2))) / 3 + 4 * EPS64 * max(1.0, float(np.abs(z).max())) / h)
    parts["layer_jacobian"] = (float(np.max(np.abs(J - Jfd))), jtol)
    det = float(np.linalg.det(J))
    # LU determinant: relative error <= 4 (2d) eps cond(J)
    parts["det_gamma^d"] = (abs(det - g ** d), 8 * d * EPS64 * float(np.linalg.cond(J)) * g ** d)
    vals.update({"det": det, "gamma^d": g ** d})
    return Outcome.from_parts(parts, message="backprop vs finite differences, layer Jacobian, determinant",
                              values=vals)


backprop.property(over=("gamma", "L", "d", "p", "seed"), max_examples=10)


#: the printed Jacobian blocks of (4.17) (F = d_x f) and its determinant gamma^d, and misprints (mutants)
MOM_BLOCKS = {"stated": (lambda g, F, I: [[I + (1 - g) * F, g * I], [(1 - g) * F, g * I]], lambda g: g ** 2),
              "F_transposed": (lambda g, F, I: [[I + (1 - g) * F.T, g * I], [(1 - g) * F.T, g * I]], lambda g: g ** 2),
              "gamma_swapped": (lambda g, F, I: [[I + g * F, (1 - g) * I], [g * F, (1 - g) * I]], lambda g: g ** 2),
              "det_gamma": (lambda g, F, I: [[I + (1 - g) * F, g * I], [(1 - g) * F, g * I]], lambda g: g)}


def _mom_jacobian_failures(form):
    blocks, det = MOM_BLOCKS[form]
    g, th = sp.symbols("gamma theta")
    xs, vs = sp.symbols("x0:2"), sp.symbols("v0:2")
    fs = [sp.Function(f"f{i}")(*xs, th) for i in range(2)]
    v1 = [g * vi + (1 - g) * fi for vi, fi in zip(vs, fs)]
    x1 = [xi + vi for xi, vi in zip(xs, v1)]
    z0, z1 = sp.Matrix(list(xs) + list(vs)), sp.Matrix(x1 + v1)
    J = z1.jacobian(z0)
    F = sp.Matrix(fs).jacobian(sp.Matrix(xs))
    I2 = sp.eye(2)
    block = sp.Matrix(sp.BlockMatrix(blocks(g, F, I2)))
    n1 = sum(1 for e in (J - block) if sp.expand(e) != 0)
    n2 = int(sp.expand(J.det() - det(g)) != 0)
    Jt = z1.jacobian(sp.Matrix([th]))
    dth = sp.Matrix(fs).diff(th)
    n3 = sum(1 for e in (Jt - (1 - g) * sp.Matrix.vstack(dth, dth)) if sp.expand(e) != 0)
    return n1 + n2 + n3


@backprop.symbolic(timeout=60)
def _(p):
    """sympy, d = 2, f(x, theta) undefined: the Jacobian of (4.17) is the block matrix; det = gamma^2; theta-block."""
    bad = _mom_jacobian_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy jacobian + expand", "instances": ["d=2, scalar theta"],
        "proved": "d z_{k}/d z_{k-1} = [[I+(1-g)F, gI], [(1-g)F, gI]], det = gamma^2, d z_k/d theta = (1-g)[f_theta; f_theta]"},
        message="entries that did not expand to zero")


@backprop.mutant({"F_transposed": "blocks with F^T instead of F (the backward, not the forward, Jacobian)",
                  "gamma_swapped": "gamma and 1 - gamma exchanged in the blocks",
                  "det_gamma": "det = gamma instead of gamma^d (exponent d dropped, d = 2)"}, timeout=60)
def _(p, variant):
    """The printed Jacobian perturbed, through the same jacobian comparison: entries must differ."""
    bad = _mom_jacobian_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_entries": bad},
                   message=f"{bad} entries/identities fail for the mutated Jacobian ({variant})")


@backprop.falsifier("order_v_x", search=("seed",))
def _(p):
    """The printed blocks read in the order z = (v, x) instead of (x, v): disagrees with finite differences."""
    W1, W2, b, x0, v0, gx, gv = _bp_instance(p)
    d, g = p.d, p.gamma
    x, v = x0[:1], v0[:1]
    J = mom.layer_jacobian(x, g, W1[0], W2[0], b[0])[0]
    S = np.block([[np.zeros((d, d)), np.eye(d)], [np.eye(d), np.zeros((d, d))]])
    Jwrong = S @ J @ S  # the same blocks applied to (v, x)

    def layer(z):
        x1, v1 = mom.forward_numpy(z[None, :d], z[None, d:], g, W1[:1], W2[:1], b[:1])
        return np.concatenate([x1[0], v1[0]])
    z = np.concatenate([x[0], v[0]])
    h = 1e-6
    Jfd = np.column_stack([(layer(z + h * e) - layer(z - h * e)) / (2 * h) for e in np.eye(2 * d)])
    Jfd2 = np.column_stack([(layer(z + 2 * h * e) - layer(z - 2 * h * e)) / (4 * h) for e in np.eye(2 * d)])
    jtol = 10 * (float(np.max(np.abs(Jfd - Jfd2))) / 3 + 4 * EPS64 * max(1.0, float(np.abs(z).max())) / h)
    return Outcome(residual=float(np.max(np.abs(Jwrong - Jfd))), tolerance=jtol,
                   message="max |J_(v,x) - J_fd| against the finite-difference tolerance")
