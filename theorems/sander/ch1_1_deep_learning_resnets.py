"""Chapter 1, Sec 1.1 "Learning with deep neural networks" (seed l.179-438): the backpropagation
equations (1.5) of a ResNet (Sec 1.1.4, l.276-284; ``sander.intro_backprop``) and the continuous adjoint (1.7) of
a neural ODE (Sec 1.1.5, l.300-323; ``sander.intro_adjoint``).

Chapter 2's own statements live in the chapter-2 modules; here each introduction statement is checked as
printed in chapter 1.
"""
from __future__ import annotations

import math

import numpy as np

from solvers import xp_sander1 as xk
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param


EPS = float(np.finfo(float).eps)


# ===========================================================================
# I1: backprop (1.5)
bp = Claim(
    id="sander.intro_backprop",
    title="Backpropagation (1.5) for x_{n+1} = x_n + f(x_n, theta_n)",
    label="(1.5)",
    section="1.1",
    equation="(1.5)",
    lines=(276, 284),
    statement=r"\nabla_{\theta_{n-1}}\ell=[\partial_\theta f(x_{n-1},\theta_{n-1})]^\top\nabla_{x_n}\ell,\ "
              r"\nabla_{x_{n-1}}\ell=[I+\partial_xf(x_{n-1},\theta_{n-1})]^\top\nabla_{x_n}\ell",
    status="holds",
    params=[Param.int("d", 3, 1, 10, "state dimension", search=(1, 5)),
            Param.int("p", 4, 1, 10, "hidden width of f(x, theta) = W2 tanh(W1 x + b)", search=(1, 5)),
            Param.int("N", 6, 1, 50, "number of residual blocks", search=(1, 10)),
            Param.seed("seed")],
    notes="Unscaled ResNet (1.4), loss l = |x_N - y|^2.  (1.5) is (2.3) without the 1/N.  The citation 'JAX "
          "(Jacobsen et al., 2018)' (l.280) is wrong: Jacobsen et al. 2018 is i-RevNet (E17).",
    catalogue="sander_part1 §2.0 I1",
    covers=("I1",),
)


def _mlp(xp, x, W1, b, W2):
    """f(x, theta) = W2 tanh(W1 x + b) and tanh(W1 x + b), broadcast over leading batch axes."""
    z = xp.tanh(xk.mv(xp, W1, x) + b)
    return xk.mv(xp, W2, z), z


def _bp_inst(p):
    rng = np.random.default_rng(p.seed)
    W1 = 0.7 * rng.standard_normal((p.N, p.p, p.d))
    b = 0.3 * rng.standard_normal((p.N, p.p))
    W2 = 0.7 * rng.standard_normal((p.N, p.d, p.p)) / math.sqrt(p.p)
    return W1, b, W2, rng.standard_normal(p.d), rng.standard_normal(p.d)


def _bp_loss(xp, W1, b, W2, x0, y):
    """|x_N - y|^2 for every instance of a batch (leading axis on W1, b, W2, x0)."""
    x = x0
    for n in range(W1.shape[-3]):
        x = x + _mlp(xp, x, W1[..., n, :, :], b[..., n, :], W2[..., n, :, :])[0]
    return xp.sum((x - y) ** 2, axis=-1)


def _bp_grads(xp, W1, b, W2, x0, y, identity=True):
    T = xp.matrix_transpose
    xs = [x0]
    for n in range(W1.shape[0]):
        xs.append(xs[-1] + _mlp(xp, xs[-1], W1[n, ...], b[n, ...], W2[n, ...])[0])
    g = 2 * (xs[-1] - y)
    G1, Gb, G2 = [None] * W1.shape[0], [None] * W1.shape[0], [None] * W1.shape[0]
    for n in range(W1.shape[0] - 1, -1, -1):
        _, z = _mlp(xp, xs[n], W1[n, ...], b[n, ...], W2[n, ...])
        dz = xk.mv(xp, T(W2[n, ...]), g) * (1 - z * z)
        G2[n] = xk.outer(xp, g, z)
        G1[n] = xk.outer(xp, dz, xs[n])
        Gb[n] = dz
        g = (g if identity else 0.0) + xk.mv(xp, T(W1[n, ...]), dz)          # [I + d_x f]^T g
    return xp.stack(G1), xp.stack(Gb), xp.stack(G2), g


def _bp_outcome(p, identity):
    """Array API (NumPy, array-api-strict, CuPy): (1.5) on ``xp``, and every finite-difference perturbation of
    (W1, b, W2, x0) as one batched forward pass (solvers.xp_sander1.fd_gradients)."""
    xp = xp_of(p)
    W1, b, W2, x0, y = on(xp, *_bp_inst(p))
    G = _bp_grads(xp, W1, b, W2, x0, y, identity)
    fd, err = xk.fd_gradients(xp, lambda a, c, e, x: _bp_loss(xp, a, c, e, x, y), [W1, b, W2, x0])
    parts = {}
    for nm, g, f, e in zip(("W1", "b", "W2", "x0"), G, fd, err):
        # FD error estimate (solvers.fd) x4 + backprop rounding 50 N (d + p) eps |g|
        parts[nm] = (float(xp.max(xp.abs(g - f))),
                     4 * float(xp.max(e)) + 50 * p.N * (p.d + p.p) * EPS * max(1.0, float(xp.max(xp.abs(f)))))
    return Outcome.from_parts(parts, "(1.5) against central differences")


@bp.numeric(backends=("numpy", "cupy"))
def _(p):
    """Gradients in theta_n and in the input x_0 from (1.5) against solvers.fd."""
    return _bp_outcome(p, True)


bp.property(over=("d", "p", "N", "seed"), max_examples=10)


@bp.falsifier("drop_identity", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """Backprop through the residual branch only (nabla_{x_{n-1}} = d_x f^T nabla_{x_n}): wrong."""
    return _bp_outcome(p, False)


# ===========================================================================
# I2: continuous adjoint (1.7)
adj = Claim(
    id="sander.intro_adjoint",
    title="Continuous adjoint (1.7): d/ds grad_X = -d_X f^T grad_X, grad_Theta = int d_Theta f^T grad_X ds",
    label="(1.7)",
    section="1.1",
    equation="(1.7)",
    lines=(300, 323),
    statement=r"\nabla_{\Theta(s)}\ell=\partial_\Theta[f(X(s),\Theta(s))]^\top\nabla_{X(s)}\ell\,ds,\quad"
              r"\frac{d\nabla_{X(s)}\ell}{ds}=-[\partial_Xf(X(s),\Theta(s))]^\top\nabla_{X(s)}\ell",
    status="holds",
    params=[Param.int("d", 3, 1, 6, "state dimension", search=(1, 4)),
            Param.int("p", 4, 1, 8, "hidden width of f = W2 tanh(W1 x)", search=(1, 5)),
            Param.seed("seed")],
    notes="'... ds' is a density: for a constant Theta, grad_Theta l = int_0^1 d_Theta f^T grad_X ds.  Instance: constant "
          "Theta = (W1, W2), l = |X(1) - y|^2, RK4 with 64 steps backward for (grad_X, grad_W1, grad_W2) (forward states at "
          "half steps), against central differences of l computed through RK4 with 128 steps.  Error model: RK4 error "
          "estimated by the 32-step adjoint (x 2/15, Richardson, both solvers) plus the FD error estimate (solvers.fd), x 4.  The O(1) memory and the mismatch with differentiating the solver are [C] (Chen et al.).",
    catalogue="sander_part1 §2.0 I2",
    covers=("I2",),
)


def _adj_inst(p):
    rng = np.random.default_rng(p.seed)
    return (rng.standard_normal((p.p, p.d)), rng.standard_normal((p.d, p.p)) / math.sqrt(p.p),
            rng.standard_normal(p.d), rng.standard_normal(p.d))


def _adj_forward(xp, W1, W2, x0, M):
    """RK4 with 2M steps of X' = W2 tanh(W1 X), broadcast over leading batch axes."""
    f = lambda x: xk.mv(xp, W2, xp.tanh(xk.mv(xp, W1, x)))
    h, xs, x = 1.0 / (2 * M), [x0], x0
    for _ in range(2 * M):
        k1 = f(x); k2 = f(x + h / 2 * k1); k3 = f(x + h / 2 * k2); k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        xs.append(x)
    return xs


def _adj_grads(xp, W1, W2, x0, y, M, sign):
    xs = _adj_forward(xp, W1, W2, x0, M)
    T = xp.matrix_transpose

    def g(j, a):
        z = xp.tanh(xk.mv(xp, W1, xs[j]))
        dz = xk.mv(xp, T(W2), a) * (1 - z * z)
        return sign * xk.mv(xp, T(W1), dz), xk.outer(xp, dz, xs[j]), xk.outer(xp, a, z)
    a = 2 * (xs[-1] - y)
    G1, G2, h = xp.zeros_like(W1), xp.zeros_like(W2), 1.0 / M
    for i in range(M, 0, -1):           # s from i h to (i - 1) h; half-grid indices 2i, 2i - 1, 2i - 2
        k1 = g(2 * i, a); k2 = g(2 * i - 1, a - h / 2 * k1[0]); k3 = g(2 * i - 1, a - h / 2 * k2[0]); k4 = g(2 * i - 2, a - h * k3[0])
        a = a - h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        G1 = G1 + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        G2 = G2 + h / 6 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
    return a, G1, G2


def _adj_outcome(p, sign):
    """Array API (NumPy, array-api-strict, CuPy): the adjoint RK4 sweeps on ``xp``, and the finite differences
    of the solver's loss as one batched RK4 forward pass over every perturbation."""
    xp = xp_of(p)
    W1, W2, x0, y = on(xp, *_adj_inst(p))
    loss = lambda w1, w2, x: xp.sum((_adj_forward(xp, w1, w2, x, 64)[-1] - y) ** 2, axis=-1)
    fd, err = xk.fd_gradients(xp, loss, [W1, W2, x0], h=1e-5)
    got = _adj_grads(xp, W1, W2, x0, y, 64, sign)
    coarse = _adj_grads(xp, W1, W2, x0, y, 32, sign)
    parts = {}
    for nm, g, gc, f, e, in zip(("grad_x0", "grad_W1", "grad_W2"), got, coarse, (fd[2], fd[0], fd[1]), (err[2], err[0], err[1])):
        # RK4 error of the adjoint ~ |g - g_coarse|/15 (Richardson); the FD loss uses the same solver, whose
        # gradient differs from the exact one by the same order: 2x that, plus the FD estimate, x4
        tol = 4 * (2 * float(xp.max(xp.abs(g - gc))) / 15 + float(xp.max(e))) + 1e-12
        parts[nm] = (float(xp.max(xp.abs(g - f))), tol)
    return Outcome.from_parts(parts, "adjoint (1.7) against FD of the solver's loss")


@adj.numeric(backends=("numpy", "cupy"))
def _(p):
    """Adjoint gradients (state and constant parameters) against central differences."""
    return _adj_outcome(p, -1.0)


adj.property(over=("d", "p", "seed"), max_examples=4)


@adj.falsifier("sign_flipped", search=("seed",), backends=("numpy", "cupy"))
def _(p):
    """d/ds grad_X = +d_X f^T grad_X (sign dropped): gradients wrong."""
    return _adj_outcome(p, 1.0)
