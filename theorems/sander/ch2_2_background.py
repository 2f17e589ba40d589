"""Chapter 2, Sec 2.2 "Background and related work" (seed l.767-788): backpropagation through a scaled
ResNet (2.3) is the Euler scheme of the adjoint ODE (2.4) (l.777-785; ``sander.backprop_euler_adjoint``,
catalogue sander_part1 §2.1 C2.2), and the memory bottleneck of ResNet-152 (l.773-775; ``sander.resnet152_memory``,
catalogue §2.4 X2.7, E17).

Depth ``N``, layers ``n``, step ``h = 1/N``; the ResNet (2.1) is the explicit Euler scheme of any interpolating
field ``phi(., n/N) = f(., theta_n)``.
"""
from __future__ import annotations


import numpy as np
import sympy as sp

from solvers import resnet_ode as ro
from solvers.xp import on, xp_of
from solvers.xp_sander1 import fd_gradients
from theorems.claim import Claim, Outcome, Param


# ===========================================================================
# C2.2: backprop (2.3) is the Euler discretisation of the adjoint (2.4)
backprop = Claim(
    id="sander.backprop_euler_adjoint",
    title="Backpropagation through a scaled ResNet is the Euler scheme of the adjoint ODE",
    label="(2.3)-(2.4)",
    section="2.2",
    equation="(2.3), (2.4)",
    lines=(777, 785),
    statement=r"\nabla_{\theta_{n-1}}L=\tfrac1N[\partial_\theta f(x_{n-1},\theta_{n-1})]^\top\nabla_{x_n}L,\ "
              r"\nabla_{x_{n-1}}L=[I+\tfrac1N\partial_xf(x_{n-1},\theta_{n-1})]^\top\nabla_{x_n}L",
    status="holds",
    params=[Param.int("N", 6, 1, 64, "depth", search=(1, 12)),
            Param.int("d", 3, 1, 6, "dimension", search=(1, 5)),
            Param.seed("seed"),
            Param.choice("family", "iid", ("iid", "smooth"), "weight family")],
    notes="Numeric: (2.3) for f = tanh(Wx+b) as an array-API recursion (the kernel solvers.resnet_ode.euler_backward "
          "with --backend numba) against central finite differences (solvers.fd, Richardson error estimate x10) for the gradients in W_n, b_n and x_0. "
          "Symbolic: one explicit Euler step of -pdot = d_x phi^T p backwards with step 1/N from s = n/N, with "
          "d_x phi frozen at the left point (x_{n-1}, theta_{n-1}), is the second formula of (2.3).",
    catalogue="sander_part1 §2.1 C2.2",
    covers=("C2.2",),
)


def _euler_forward_xp(xp, x0, W, b, N):
    """Euler ResNet x_{n+1} = x_n + tanh(W_n x_n + b_n)/N on xp, broadcast over leading batch axes of
    ``x0 (..., 1, d)``, ``W (..., N, d, d)``, ``b (..., N, d)``; the list of states."""
    xs = [x0]
    for n in range(N):
        u = xp.tanh(xs[-1] @ xp.matrix_transpose(W[..., n, :, :]) + xp.expand_dims(b[..., n, :], axis=-2))
        xs.append(xs[-1] + u / N)
    return xs


def _bp(p, transpose=True):
    """Array API (NumPy, array-api-strict, CuPy): (2.3) as an xp array recursion (the Numba kernel
    ro.euler_backward on --backend numba), and every finite-difference perturbation of (W, b, x0) as one batched
    Euler forward pass (solvers.xp_sander1.fd_gradients)."""
    rng = np.random.default_rng(p.seed)
    gen = ro.iid_weights if p.family == "iid" else ro.smooth_weights
    W, b = gen(p.N, p.d, rng)
    x0, y = rng.standard_normal((2, 1, p.d))
    xp = xp_of(p)
    T = xp.matrix_transpose
    Wx, bx, x0x, yx = on(xp, W, b, x0, y)
    xs = _euler_forward_xp(xp, x0x, Wx, bx, p.N)
    gN = xs[-1] - yx
    if transpose and p.backend == "numba":
        dW, db, g0 = on(xp, *ro.euler_backward(np.stack([np.asarray(x) for x in xs]), W, b, np.asarray(gN), p.N))
    else:
        dW, db = [None] * p.N, [None] * p.N
        g = gN
        for n in range(p.N - 1, -1, -1):
            u = xp.tanh(xs[n] @ T(Wx[n, ...]) + bx[n, ...])
            a = g * (1 - u * u) / p.N
            dW[n], db[n] = T(a) @ xs[n], xp.sum(a, axis=0)
            if transpose:              # (2.3): g_{n-1} = [I + (1/N) d_x f]^T g_n
                g = g + a @ Wx[n, ...]
            else:                      # 'drop the transpose': g_{n-1} = g_n + (1/N) d_x f g_n
                g = g + ((1 - u * u) * (g @ T(Wx[n, ...]))) / p.N
        dW, db, g0 = xp.stack(dW), xp.stack(db), g

    def loss(W_, b_, x_):
        r = _euler_forward_xp(xp, x_, W_, b_, p.N)[-1] - yx
        return 0.5 * xp.sum(r * r, axis=(-2, -1))
    (fW, fb, fx), (eW, eb, ex) = fd_gradients(xp, loss, [Wx, bx, x0x], h=1e-5)
    dev = max(float(xp.max(xp.abs(dW - fW) - 10 * eW)), float(xp.max(xp.abs(db - fb) - 10 * eb)),
              float(xp.max(xp.abs(g0 - fx) - 10 * ex)))
    fxmax, fWmax = float(xp.max(xp.abs(fx))), float(xp.max(xp.abs(fW)))
    rel = float(xp.max(xp.abs(g0 - fx))) / max(fxmax, 1e-300)
    return Outcome(residual=max(dev, 0.0), tolerance=1e-12 * max(1.0, fxmax),
                   values={"grad_x0_relative_error": rel, "grad_W_relative_error":
                           float(xp.max(xp.abs(dW - fW))) / max(fWmax, 1e-300),
                           "fd_error_estimate": max(float(xp.max(eW)), float(xp.max(eb)), float(xp.max(ex)))},
                   message=f"(2.3){'' if transpose else ' without transpose'} vs central FD: relative error in "
                           f"grad x0 {rel:.2e} (excess over the FD error estimate x10: {max(dev, 0):.2e})")


@backprop.numeric(backends=("numpy", "numba", "cupy"))
def _(p):
    """(2.3) (kernel) against central finite differences in W_n, b_n and x_0."""
    return _bp(p)


backprop.property(over=("N", "d", "seed", "family"), max_examples=12)


@backprop.falsifier("drop_transpose", search=("seed",), fixed={"d": 3}, backends=("numpy", "cupy"))
def _(p):
    """[I + d_x f/N] instead of its transpose: wrong whenever d_x f = diag(1-u^2) W is not symmetric."""
    return _bp(p, transpose=False)


#: (2.3) as printed: (grad_theta, grad_x) from d_theta f, d_x f (2 x 1 and 2 x 2) and grad_{x_n} L; misprints (mutants)
BACKPROP_23 = {"stated": (lambda N, Ft, Fx, g: Ft.T * g / N, lambda N, Ft, Fx, g: (sp.eye(2) + Fx / N).T * g),
               "transpose_dropped": (lambda N, Ft, Fx, g: Ft.T * g / N, lambda N, Ft, Fx, g: (sp.eye(2) + Fx / N) * g),
               "one_over_N_dropped": (lambda N, Ft, Fx, g: Ft.T * g, lambda N, Ft, Fx, g: (sp.eye(2) + Fx / N).T * g)}


def _backprop_23_failures(form):
    """d = 2, one layer x_n = x_{n-1} + f(x_{n-1}, theta)/N with f undefined and a downstream loss g(x_n) (a generic
    cubic with symbolic coefficients): sympy.diff of g(x_n) in theta and in x_{n-1} against (2.3); and one Euler step
    of -pdot = J^T p backwards with step 1/N against the second formula.  Returns the entries that differ."""
    gt = BACKPROP_23[form]
    N, th = sp.symbols("N theta", positive=True)
    x = sp.Matrix(sp.symbols("x0:2"))
    y = sp.Matrix(sp.symbols("y0:2"))
    f = sp.Matrix([sp.Function(f"f{i}")(x[0], x[1], th) for i in range(2)])
    c = sp.symbols("c0:7")
    g = c[0] * y[0] + c[1] * y[1] + c[2] * y[0] ** 2 + c[3] * y[0] * y[1] + c[4] * y[1] ** 2 + c[5] * y[0] ** 3 \
        + c[6] * y[0] * y[1] ** 2
    xn = x + f / N
    loss = g.subs(dict(zip(y, xn)), simultaneous=True)
    grad_xn = sp.Matrix([sp.diff(g, yi) for yi in y]).subs(dict(zip(y, xn)), simultaneous=True)
    Ft, Fx = f.diff(th), f.jacobian(x)
    bad = sum(1 for e in (sp.Matrix([sp.diff(loss, th)]) - gt[0](N, Ft, Fx, grad_xn)) if sp.expand(e) != 0)
    bad += sum(1 for e in (sp.Matrix([sp.diff(loss, xi) for xi in x]) - gt[1](N, Ft, Fx, grad_xn)) if sp.expand(e) != 0)
    J = sp.Matrix(2, 2, sp.symbols("j0:4"))
    q = sp.Matrix(2, 1, sp.symbols("p0:2"))
    euler_step = q - (-(J.T * q)) / N          # p(s - h) = p(s) - h pdot(s), pdot = -J^T p
    bad += sum(1 for e in (euler_step - gt[1](N, None, J, q)) if sp.expand(e) != 0)
    return bad


@backprop.symbolic(timeout=20)
def _(p):
    """d = 2, f undefined, generic cubic loss: sympy.diff gives (2.3) (both formulas); and p + (1/N) J^T p, one Euler
    step of -pdot = J^T p, is its second formula."""
    bad = _backprop_23_failures("stated")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.diff + expand",
                                                      "proved": "(2.3) by the chain rule; (2.3) = Euler step of (2.4)"},
                   message="nonzero entries")


@backprop.mutant({"transpose_dropped": "grad_{x_{n-1}} L = [I + d_x f/N] grad_{x_n} L (no transpose)",
                  "one_over_N_dropped": "grad_theta L = [d_theta f]^T grad_{x_n} L (the 1/N dropped)"}, timeout=20)
def _(p, variant):
    """(2.3) perturbed, through the same sympy.diff comparison: entries must differ."""
    bad = _backprop_23_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"differing_entries": bad},
                   message=f"{bad} entries differ from sympy.diff for {variant}")


# ===========================================================================
# X2.7: memory of a ResNet-152
def _resnet152_counts():
    """Parameters of the bottleneck ResNet-152 ([3, 8, 36, 3], torchvision v1.5 layout: stride on the 3x3 conv) and
    the number of conv-output activations per 224x224 image."""
    def block(cin, mid, down):
        q = cin * mid + 2 * mid + mid * mid * 9 + 2 * mid + mid * 4 * mid + 2 * 4 * mid
        return q + (cin * 4 * mid + 2 * 4 * mid if down else 0)
    params, cin, acts, H = 7 * 7 * 3 * 64 + 2 * 64, 64, 64 * 112 * 112, 56
    for mid, nblocks, stride in ((64, 3, 1), (128, 8, 2), (256, 36, 2), (512, 3, 2)):
        for i in range(nblocks):
            params += block(cin, mid, i == 0)
            Ho = H // (stride if i == 0 else 1)
            acts += mid * H * H + mid * Ho * Ho + 4 * mid * Ho * Ho + (4 * mid * Ho * Ho if i == 0 else 0)
            H, cin = Ho, 4 * mid
    return params + 2048 * 1000 + 1000, acts


memory = Claim(
    id="sander.resnet152_memory",
    title="ResNet-152, batch 128: about 22 GiB of activations against 220 MiB of parameters",
    label="Sec 2.2 'Memory bottleneck'",
    section="2.2",
    lines=(773, 775),
    statement=r"\text{ResNet-152, ImageNet, batch 128: activations}\approx22\text{ GiB},\ \text{parameters}\approx220\text{ MiB}",
    status="empirical",
    params=[],
    notes="Parameter count from the architecture (60,192,808 float32 = 229.6 MiB: the quoted 220 MiB is ~4% low, E17 "
          "cosmetic). Activation memory depends on what a framework stores: every conv output stored twice (conv and "
          "BN/ReLU outputs) gives 21.5 GiB, once 10.8 GiB (catalogue X2.7) [heuristic].",
    catalogue="sander_part1 §2.4 X2.7; §3.1 D12; §4 E17",
    covers=("X2.7", "D12"),
)


@memory.reproduction(name="parameter_count")
def _(p):
    """60,192,808 parameters = 229.6 MiB (vs the quoted 220 MiB, compared at 5%); activations x2 = 21.5 GiB (vs ~22 GiB)."""
    params, acts = _resnet152_counts()
    mib = params * 4 / 2**20
    gib2 = acts * 2 * 128 * 4 / 2**30
    parts = {"params_exact": (abs(params - 60_192_808), 0), "MiB_vs_220_at_5%": (abs(mib - 220) / 220, 0.05),
             "GiB_vs_22_at_5%": (abs(gib2 - 22) / 22, 0.05)}
    return Outcome.from_parts(parts, f"{params:,} parameters = {mib:.1f} MiB; activations (x2) {gib2:.2f} GiB", {
        "parameters": params, "MiB": mib, "activations_GiB_stored_twice": gib2, "activations_GiB_stored_once": gib2 / 2})
