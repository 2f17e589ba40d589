"""§2.3 Reduction to a 3-dimensional System (seed l.95-113, with App. A.1 l.335-347): the reduced system Eq 7 from
Eqs 19-21 (l.95-105), the representational velocity (l.105, Eq 8) and the integration of Eq 7 through the crossing
of the representations (Eq 21, l.345-347; lifted integrator, erratum E7).
Claims: ``vanrossem.reduced_system``, ``vanrossem.representational_velocity``, ``vanrossem.crossing_integration``.

Conventions: :mod:`theorems.vanrossem._common`; numbers quoted in comments come from the catalogue.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import twopoint as tp
from solvers import xp_vanrossem as xv
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.vanrossem._common import (EPS, FLOOR, RTOL, constants, converge, flow_params, limit_outcome,
                                        limit_tolerance, not_converged, plot_dh2, validate_initial)
from theorems.vanrossem._symbolic import _eq7_sym
from theorems.vanrossem._two_point_instances import _rv_params, _rv_state


# ===========================================================================
# 10. The reduction to three variables on the invariant manifold (Eqs 7, 19-21; catalogue R0, R1)
reduced = Claim(
    id="vanrossem.reduced_system",
    title="Non-rotating solutions of Eq 6 obey the self-contained 3-D system Eq 7",
    label="Eq 7 / Eqs 19-21",
    section="2.3, A.1",
    equation="(7), (8), (19), (20), (21)",
    lines=(95, 105),
    statement=r"\frac{d}{dt}dh\propto dh\ \Longrightarrow\ \dot u=-\frac{a}{\tau_h}w,\ \dot v=-w\Bigl(\frac{u}{\tau_y}"
              r"+\frac{a}{\tau_h}\frac vu\Bigr),\ \dot w=-\frac{(3w-v+b)u}{2\tau_y}-\frac{a}{2\tau_h}\frac{(v+w)w}{u}",
    status="holds",
    params=[Param.seed("seed of the random states"),
            Param.int("dim_y", 2, 1, 8, "dim Y (the lifted q has dim_y entries)", search=(1, 4)),
            Param.int("hidden", 3, 1, 8, "dim H (for the invariance of M under the full Eq 6)", search=(1, 4)),
            Param.int("dim_x", 2, 1, 8, "dim X", search=(1, 4))],
    notes="Holds given Eq 17 as printed (gradient factor 1/2); with the true gradients of Eq 16 every rate is halved "
          "(E1, see vanrossem.gradient_factor). [NEW] The set M = {D_h dx = s n, D_y = q n^T} is invariant under Eq 6, "
          "so Eq 19 is consistent (the paper does not show it); off M Eq 7 does not close (catalogue R0 [G], F10, not "
          "encoded here). Numeric check: at 50 random states of M, (i) the full Eq 6 field keeps M (its components "
          "off n vanish) and (ii) the chain rule of the lifted field gives Eq 7.",
    catalogue="vanrossem §2.2 R0, R1; §2.1 M7",
    covers=("R0", "R1"),
)


def _reduced_draws(p, count=50):
    """The random states of M (host, seeded; the draw order of the former per-state loop)."""
    rng = np.random.default_rng(p.seed)
    m, H, dx = p.dim_y, p.hidden, p.dim_x
    cols = {k: [] for k in ("th", "ty", "DX", "DY", "n", "s", "q", "K")}
    for _ in range(count):
        th, ty = rng.uniform(0.3, 3, 2)
        DX, DY = rng.standard_normal(dx), rng.standard_normal(m)
        n = rng.standard_normal(H)
        n /= np.linalg.norm(n)
        s, q = rng.uniform(0.1, 2) * rng.choice([-1, 1]), rng.standard_normal(m)
        K = rng.standard_normal((H, dx))
        for k, x in zip(cols, (th, ty, DX, DY, n, s, q, K)):
            cols[k].append(x)
    return [np.array(cols[k], dtype=float) for k in cols]


def _reduced_outcome(p, variant=None):
    """Array-API path: the 50 states of M are stacked along a leading axis and the full Eq 6 field, the lifted
    field and the chain rule are evaluated for all of them at once in ``xp``."""
    xp = xv.xp_of(p)
    H = p.hidden
    th, ty, DX, DY, n, s, q, K = xv.on(xp, *_reduced_draws(p))
    mv, dot, outer, T = (lambda A, x: xv.mv(xp, A, x)), (lambda x, y: xv.dot(xp, x, y)), \
        (lambda x, y: xv.outer(xp, x, y)), xp.matrix_transpose
    a, b = dot(DX, DX), dot(DY, DY)
    c3 = lambda x: x[:, None, None]  # noqa: E731  (per-instance scalar against a stack of matrices)
    # a D_h with D_h dx = s n plus an arbitrary part orthogonal to dx (it does not enter the dynamics of dh)
    Dh = outer(n, DX) * c3(s / a) + K - outer(mv(K, DX), DX) / c3(a)
    Dy = outer(q, n)
    dh = mv(Dh, DX)
    r = mv(Dy, dh) - DY
    dDh = -c3(0.5 / th) * outer(mv(T(Dy), r), DX)          # Eq 6 with the Eq 17 gradients (factor 1/2)
    dDy = -c3(0.5 / ty) * outer(r, dh)
    Pn = xp.eye(H, dtype=xp.float64) - outer(n, n)
    dh_dot = mv(dDh, DX)
    amax = lambda x: xp.max(xp.abs(x), axis=-1)  # noqa: E731
    amax2 = lambda x: xp.max(xp.abs(x), axis=(-2, -1))  # noqa: E731
    # the lifted field is the restriction of Eq 6 to M
    ds, dq = xv.lift_field(xp, s, q, DY, a, th, ty, tp.EQ7_FACTOR)
    inv = xp.stack([amax(mv(Pn, dh_dot)) / (1 + amax(dh_dot)), amax2(dDy @ Pn) / (1 + amax2(dDy)),
                    xp.abs(dot(n, dh_dot) - ds) / (1 + xp.abs(ds)), amax(mv(dDy, n) - dq) / (1 + amax(dq))])
    worst_inv = float(xp.max(inv))
    qq = dot(q, q)
    du = 2 * s * ds
    dv = 2 * s * ds * qq + s * s * 2 * dot(q, dq)
    dw = dv - (ds * dot(q, DY) + s * dot(dq, DY))
    u, v = s * s, s * s * qq
    w = v - s * dot(q, DY)
    ref = xv.eq7_field(u, v, w, a, b, th, ty, tp.EQ7_FACTOR, variant)
    R = xp.stack(list(ref), axis=-1)
    scale = 1 + amax(R) + a * xp.abs(w) * (v + xp.abs(w)) / (th * u) + u * (xp.abs(w) + v + b) / ty
    worst_id = float(xp.max(amax(xp.stack([du, dv, dw], axis=-1) - R) / scale))
    return Outcome.from_parts({"M invariant under Eq 6 (relative)": (worst_inv, 256 * EPS * max(H, p.dim_x, p.dim_y)),
                               "chain rule = Eq 7 (relative)": (worst_id, 256 * EPS)},
                              f"50 random states of M, compared with {variant or 'Eq 7'}")


@reduced.numeric(backends=("numpy", "cupy"))
def reduced_numeric(p):
    """Eq 6 keeps M, and on M the chain rule gives Eq 7 (50 random states)."""
    return _reduced_outcome(p)


reduced.property(over=("seed", "dim_y", "hidden", "dim_x"), max_examples=10)


def _reduced_symbolic_core(variant="stated"):
    """sympy on M (dim Y = 2, symbolic s, q, Delta_y): d/dt(u, v, w) from the lifted field = Eq 7 (factor 1/2),
    and = Eq 7 / 2 with the true factor 1/4."""
    th, ty, a = sp.symbols("tau_h tau_y a", positive=True)
    s = sp.Symbol("s", real=True)
    q = sp.Matrix(sp.symbols("q0 q1", real=True))
    D = sp.Matrix(sp.symbols("e0 e1", real=True))
    bad = []
    for g, ratio in ((sp.Rational(1, 2), 1), (sp.Rational(1, 4), sp.Rational(1, 2))):
        r = q * s - D
        ds = -g * a / th * (q.T * r)[0]
        dq = -g / ty * s * r
        u, v = s ** 2, s ** 2 * (q.T * q)[0]
        w = v - s * (q.T * D)[0]
        du = 2 * s * ds
        dv = sp.diff(v, s) * ds + sum(sp.diff(v, q[i]) * dq[i] for i in range(2))
        dw = sp.diff(w, s) * ds + sum(sp.diff(w, q[i]) * dq[i] for i in range(2))
        ref = _eq7_sym(th, ty, a, (D.T * D)[0], u, v, w, None if variant == "stated" else variant)
        for name, lhs, rhs in zip(("u", "v", "w"), (du, dv, dw), ref):
            if sp.expand(sp.numer(sp.together(lhs - ratio * rhs))) != 0:
                bad.append(f"{name} (g={g})")
    return Outcome(residual=len(bad), tolerance=0, values={"method": "sympy chain rule + together/expand",
                                                           "nonzero": bad, "proved": "Eq 7 on M (g = 1/2); Eq 7/2 (g = 1/4)"})


@reduced.symbolic(timeout=60)
def reduced_symbolic(p):
    """sympy on M (dim Y = 2, symbolic s, q, Delta_y): d/dt(u, v, w) from the lifted field = Eq 7 (factor 1/2),
    and = Eq 7 / 2 with the true factor 1/4."""
    return _reduced_symbolic_core()


@reduced.mutant({
    'factor2': "Eq 51 'factor two' variant of Eq 7 (2x dv/dt)",
    'square': "Eq 51 'square' variant of Eq 7 (w^2 in du/dt)",
}, timeout=60)
def reduced_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _reduced_symbolic_core(variant)
    out.message = f"{variant} (perturbed statement): {out.message or 'residual = number of identities that did not reduce to 0'}"
    return out


@reduced.falsifier({
    "factor2": "Eq 51 'factor two' variant: not the reduction of Eq 6.",
    "square": "Eq 51 'square' variant (w^2 in du/dt).",
}, backends=("numpy", "cupy"))
def _(p, variant):
    return _reduced_outcome(p, variant)


# ===========================================================================
# 4. w controls the representational velocity (l.105, catalogue R2)
velocity = Claim(
    id="vanrossem.representational_velocity",
    title="w controls the representational velocity and only adds the output angle",
    label="l.105 (Eq 7, first line; Eq 8)",
    section="2.3",
    equation="(7), (8)",
    lines=(99, 105),
    statement=r"\tfrac{d}{dt}\|dh\|^2=-\tfrac1{\tau_h}\|x_2-x_1\|^2\,w,\qquad "
              r"w=\|dy\|^2-\|dy\|\,\|y_2-y_1\|\cos\theta",
    status="holds",
    params=_rv_params(),
    notes="Sharpening: the first line of Eq 7 is exact for EVERY state (D_h, D_y), not only on the invariant manifold "
          "of Eq 19 (catalogue R0), because d|dh|^2/dt = 2 dh.(dD_h/dt) dX = -(2 g a/tau_h) (D_y dh).(dy - dY) = "
          "-(2 g a/tau_h) w. With the paper's Eq 17 (g = 1/2) this is Eq 7; with the true gradients of Eq 16 "
          "(g = 1/4, erratum E1) it is half of it (choose gradients=eq16: the check then compares with -(a/(2 tau_h)) w). "
          "The velocity is a central difference in time along the Eq 6 field (exact up to rounding: |dh|^2 is "
          "quadratic along a straight line). 'Angle': theta is the angle between dy and Delta y, so "
          "w = v - sqrt(v b) cos(theta), |w - v| <= sqrt(v b).",
    catalogue="vanrossem §2.2 R2 (R0, E1)",
    covers=("R2",),
)


def _rv_outcome(p, predict):
    """Array-API path: the Eq 6 field, the reduced variables and the central difference in time (steps h and 2h
    stacked) in ``xp``."""
    xp = xv.xp_of(p)
    x1, x2, y1, y2, Dh, Dy = xv.on(xp, *_rv_state(p))
    g = tp.EQ7_FACTOR if p.gradients == "eq17" else tp.TRUE_FACTOR
    _, fDh, _ = xv.eq6_field(xp, xp.zeros(p.dim_y, dtype=xp.float64), Dh, Dy, x1, x2, y1, y2, (1.0, p.tau_h, p.tau_y), g)
    dX, dY = x2 - x1, y2 - y1
    a, b = float(xv.dot(xp, dX, dX)), float(xv.dot(xp, dY, dY))
    dh = xv.mv(xp, Dh, dX)
    dy = xv.mv(xp, Dy, dh)
    u, v = float(xv.dot(xp, dh, dh)), float(xv.dot(xp, dy, dy))
    dydY = float(xv.dot(xp, dy, dY))
    w = v - dydY

    def u_along(E):
        d = xv.mv(xp, Dh + E[..., 0][..., None, None] * fDh, dX)
        return xv.dot(xp, d, d)
    # rounding of the difference quotient: 4 eps max|u(+-h)|, |u(+-2h)| / h (evaluated_scale). A large velocity
    # (tau_h = 1.7e-4, scale = 44: |d(dh)/dt| h ~ 1e4 |dh|) makes u(+-h) ~ 1e8 u(0), whose rounding the base-point
    # term 4 eps max(u(0), 1)/h of solvers.fd missed (sweep seed 31337: refuted at 36 vs 0.15, relative 9e-13)
    (du,), (err,) = xv.fd_gradient_with_error(xp, u_along, [xp.zeros(1, dtype=xp.float64)], h=1e-4,
                                              evaluated_scale=True)
    du, err = float(du[0]), float(err[0])
    pred = predict(a, b, u, v, w, p.tau_h, p.tau_y) * (2 * g)    # Eq 7 in units of the chosen gradient factor
    cos = dydY / max(math.sqrt(v * b), 1e-300)
    w_angle = v - math.sqrt(v * b) * cos
    # error model: fd error estimate (rounding of the values the quotient subtracts; the truncation vanishes for a
    # quadratic) x10, plus the rounding of the prediction, 16 eps |a/tau_h| (|v| + |dy.dY|)
    tol_v = 10 * err + 16 * EPS * a / p.tau_h * (abs(v) + abs(dydY))
    return Outcome.from_parts(
        {"d|dh|^2/dt vs prediction": (abs(du - pred), tol_v),
         "w = v - sqrt(v b) cos(theta)": (abs(w - w_angle), 16 * EPS * (abs(v) + math.sqrt(v * b)))},
        "representational velocity along the Eq 6 field (off the invariant manifold)",
        values={"du_dt": du, "predicted": pred, "w": w, "u": u, "v": v, "a": a, "b": b, "cos_theta": cos,
                "gradient_factor": g})


@velocity.numeric(backends=("numpy", "cupy"))
def velocity_numeric(p):
    """d|dh|^2/dt along Eq 6 equals -(a/tau_h) w (times 2g) at a random, unaligned state."""
    return _rv_outcome(p, lambda a, b, u, v, w, th, ty: -a / th * w)


velocity.property(over=("seed", "dim_x", "hidden", "dim_y", "tau_h", "tau_y", "scale", "gradients"),
                  max_examples=15)


@velocity.falsifier({
    "square": "The 'square' variant of Eq 51: d|dh|^2/dt = -(a/tau_h) w^2.",
    "output_norm_only": "Velocity from |dy|^2 alone (no alignment with the targets): -(a/tau_h) v.",
    "decoder_time_constant": {"description": "tau_y in place of tau_h: -(a/tau_y) w.", "search": ("seed", "tau_y")},
}, search=("seed",), backends=("numpy", "cupy"))
def _(p, variant):
    return _rv_outcome(p, {
        "square": lambda a, b, u, v, w, th, ty: -a / th * w * w,
        "output_norm_only": lambda a, b, u, v, w, th, ty: -a / th * v,
        "decoder_time_constant": lambda a, b, u, v, w, th, ty: -a / ty * w,
    }[variant])


def _velocity_symbolic_core(variant="stated"):
    """Generic 2x2 D_h, D_y: d|dh|^2/dt + (2g a/tau_h) w expands to 0 (g = 1/2 and 1/4), no manifold assumption."""
    th = sp.Symbol("tau_h", positive=True)
    Dh = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"h{i}{j}"))
    Dy = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"y{i}{j}"))
    dX = sp.Matrix(sp.symbols("x0 x1"))
    dY = sp.Matrix(sp.symbols("t0 t1"))
    dh = Dh * dX
    dy = Dy * dh
    a = (dX.T * dX)[0]
    w = (dy.T * dy)[0] - (dy.T * dY)[0]
    bad = []
    for g in (sp.Rational(1, 2), sp.Rational(1, 4)):
        dDh = -g / th * Dy.T * (dy - dY) * dX.T
        du = 2 * (dh.T * (dDh * dX))[0]
        c_ = {"factor_2": 2, "sign_flipped": -1}.get(variant, 1)  # Eq 7's -(a/tau_h) w at g = 1/2
        if sp.expand(du + c_ * 2 * g * a / th * w) != 0:
            bad.append(f"g={g}")
    return Outcome(residual=len(bad), tolerance=0, values={
        "method": "sympy.expand, generic 2x2 matrices", "nonzero": bad,
        "proved": "d|dh|^2/dt = -(2g a/tau_h) w for all D_h, D_y (g = 1/2: Eq 7)"},
        message="gradient factors for which the identity failed")


@velocity.symbolic(timeout=60)
def velocity_symbolic(p):
    """Generic 2x2 D_h, D_y: d|dh|^2/dt + (2g a/tau_h) w expands to 0 (g = 1/2 and 1/4), no manifold assumption."""
    return _velocity_symbolic_core()


@velocity.mutant({
    'factor_2': 'd|dh|^2/dt = -(2/tau_h)|dx|^2 w',
    'sign_flipped': 'd|dh|^2/dt = +(1/tau_h)|dx|^2 w',
}, timeout=60)
def velocity_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _velocity_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


# ===========================================================================
# 2. The crossing: Eq 7 is singular at u = 0; the lifted system is not (catalogue R3, E7, D7)
# The crossing instances are drawn crossing BY CONSTRUCTION (sweep 777001: 75% of generic consistent states did not
# cross and were inconclusive).  With q_1 = q.Delta_y/|Delta_y| (the output decoder's component along the target
# difference) and k = tau_y a/tau_h, the part of A_high along Delta_y is A_par = u0 - k v0 cos^2(theta)/u0 =
# s0^2 - k q_1(0)^2 (theta: the angle between dy(0) and Delta_y).  Lemma (any dim Y): if cos(theta) < 0 and A_par < 0,
# s crosses 0 in finite time.  Proof: while s > 0 and q_1 < 0, s' = -(g a/tau_h)(|q|^2 s + |q_1| delta_y) < 0 and
# |q_1|' = -(g/tau_y) s (|q_1| s + delta_y) < 0, so ds/d|q_1| = k (|q|^2 s + |q_1| delta_y)/(s (|q_1| s + delta_y))
# >= k |q_1|/s (|q|^2 >= q_1^2): s^2 - k q_1^2 <= A_par < 0 all along, q_1 cannot reach 0 while s > 0, and
# s' <= -(g a/tau_h) delta_y sqrt(-A_par/k) < 0 bounds the crossing time.  For dim Y = 1 (|cos| = 1, A_par = A_high)
# this is the criterion of the corrected statement.  The instance is therefore parametrised by dy2_0, cos_theta < 0 and
# zeta in (0, 1): dh2_0 = zeta sqrt(k dy2_0) |cos_theta| (so A_par = dh2_0 (1 - 1/zeta^2) < 0) and
# w_0 = dy2_0 - sqrt(dy2_0) delta_y cos_theta.  The falsifier-only parameter ``side`` exercises the other cases:
# "reflected" (cos_theta -> -cos_theta: dy(0).Delta_y > 0, q_1 > 0 is invariant and s never reaches 0) and "above"
# (zeta -> 1/zeta: A_par > 0; for dim Y = 1 no crossing); there the numeric check is inconclusive unless a crossing
# is seen (and then it checks the limit as before).
_R3D = dict(dh2_0=0.05, dy2_0=0.2, w_0=0.6427)                    # catalogue R3 (d), tau = delta = 1
_R3D_COS = (_R3D["dy2_0"] - _R3D["w_0"]) / math.sqrt(_R3D["dy2_0"])
_R3D_ZETA = _R3D["dh2_0"] / (math.sqrt(_R3D["dy2_0"]) * abs(_R3D_COS))


def _crossing_state(p):
    """``p`` with the initial state ``dh2_0, w_0`` built from ``dy2_0, cos_theta, zeta`` and ``side`` (see above)."""
    a = p.delta_x ** 2
    c = -p.cos_theta if p.side == "reflected" else p.cos_theta
    zeta = 1.0 / p.zeta if p.side == "above" else p.zeta
    u0 = zeta * math.sqrt(p.tau_y * a * p.dy2_0 / p.tau_h) * abs(p.cos_theta)
    return p.replace(dh2_0=u0, w_0=p.dy2_0 - math.sqrt(p.dy2_0) * p.delta_y * c, cos_effective=c)


def _validate_crossing(p):
    q = _crossing_state(p)
    if not (math.isfinite(q.dh2_0) and q.dh2_0 > 0):
        raise ParamError(f"dh2_0 = zeta sqrt(tau_y a dy2_0/tau_h)|cos_theta| = {q.dh2_0!r} is not a positive float "
                         "(choose zeta, cos_theta and the scales so that it is)")
    validate_initial(q)


crossing = Claim(
    id="vanrossem.crossing_integration",
    title="Eq 7 'can easily be solved numerically': not through a crossing of the representations",
    label="Eq 7 / Eq 21 as an ODE",
    section="2.3, A.1",
    equation="(7), (21)",
    lines=(345, 347),
    statement=r"\text{Eq 7 is self-contained and ``can easily be solved numerically given initial conditions'' "
              r"(l.347)}",
    status="gap",
    corrected=r"\text{Eq 7 divides by } u=\|dh\|^2\text{; on } \mathcal M=\{dh=s\,n,\ D_y=q\,n^\top\}\text{ the "
              r"lifted field } \dot s=-\tfrac{a}{2\tau_h}q^\top(qs-\Delta y),\ \dot q=-\tfrac1{2\tau_y}s(qs-\Delta y)"
              r"\text{ is polynomial: } s \text{ passes through } 0 \text{ (the representations cross), } u=s^2\ge0,"
              r"\text{ and } u(t)\to\text{Eq 10. For }\dim Y=1\text{ a crossing happens iff } dy(0)^\top\Delta y<0"
              r"\text{ and } A_{\rm high}<0.",
    params=flow_params(tau_h=1.0, tau_y=1.0, delta_x=1.0, delta_y=1.0)[:4] + [
        Param.float("dy2_0", _R3D["dy2_0"], FLOOR, 1e4, "|dy(0)|^2, initial squared predicted-output difference",
                    search=(1e-4, 3.0)),
        Param.float("cos_theta", _R3D_COS, -1.0, 0.0, "cosine of the angle between dy(0) and Delta_y = y_2 - y_1 "
                    "(negative: the outputs start ordered against the targets); w_0 = dy2_0 - sqrt(dy2_0) delta_y "
                    "cos_theta", high_open=True),
        Param.float("zeta", _R3D_ZETA, 0.0, 1.0, "|dh(0)|^2 as a fraction of the crossing threshold "
                    "sqrt(tau_y a dy2_0/tau_h)|cos_theta| (below it the representations cross)", low_open=True,
                    high_open=True),
        Param.choice("side", "crossing", ("crossing", "reflected", "above"),
                     "crossing: the instance above; reflected: cos_theta -> -cos_theta (no crossing); above: "
                     "zeta -> 1/zeta (no crossing for dim Y = 1)").for_falsifiers(),
        Param.float("T_naive", 50.0, 0.0, 1e4, "horizon of the naive Eq 7 integration (falsifier naive_eq7)",
                    low_open=True)],
    validate=_validate_crossing,
    notes="Default: catalogue R3 (d) (dh2_0 = 0.05, dy2_0 = 0.2, w_0 = 0.6427 as cos_theta = -0.98990, zeta = "
          "0.11295; A_high = -3.95; s changes sign at t = 0.188). [AUDIT] The instances cross by construction "
          "(cos_theta < 0, zeta < 1: a crossing for every dim Y, lemma in the module), so the numeric check also "
          "requires the crossing it is about; side = reflected/above (falsifier-only) give the non-crossing cases, "
          "where the check is inconclusive, and the property crossing_criterion draws all three sides for dim Y = 1. "
          "The falsifier integrates Eq 7 as printed with the same Dormand-Prince tolerances: u goes negative right "
          "after the crossing and the run either stalls at u = 0- or blows up (which one depends on the "
          "tolerance and on the output grid; either way a negative squared distance).",
    catalogue="vanrossem §2.2 R3; §4 E7; §6 D7; §5 priority 5",
    covers=("R3", "E7"),
)


@crossing.numeric(backends=("numpy", "numba"))
def crossing_numeric(p):
    """Lifted integration through the crossing: s changes sign, u = s^2 >= 0, and u -> Eq 10."""
    q = _crossing_state(p)
    a, b, AH, AL = constants(q)
    res = converge(q)
    if not res["converged"]:
        return not_converged(res)
    if res["crossings"] == 0 and p.side != "crossing":
        return inconclusive(f"no crossing on this instance (side = {p.side}: s keeps its sign); the claim is about "
                            "crossing trajectories", A_high=AH, dh2_integrated=res["u"])
    u_star = tp.eq10(AH, AL)
    ts, us = np.array(res["ts"]), np.array(res["us"])
    out = limit_outcome(q, u_star, res, "Eq 10 through the crossing", extra={
        "min_dh2_sampled": float(us.min()), "t_min_dh2_sampled": float(ts[int(us.argmin())]),
        "crossings": res["crossings"], "dh2_0": q.dh2_0, "w_0": q.w_0,
        "plot": plot_dh2(res, u_star, title="|dh|^2 = s^2 through the crossing (lifted) and Eq 10")})
    if p.side == "crossing":
        # the construction guarantees a crossing (lemma above): not seeing one is a failure of the integration
        out = Outcome.from_parts({"limit = Eq 10": (out.residual, out.tolerance),
                                  "s changes sign (guaranteed: cos_theta < 0, A_par < 0)":
                                      (0.0 if res["crossings"] > 0 else 1.0, 0.0)},
                                 out.message, values=out.values)
    return out


def _crossing_draws(draw):
    """dim Y = 1 instances (|cos_theta| = 1, the states of a scalar-output network) on all three sides."""
    from hypothesis import strategies as st
    return {"tau_h": draw(st.floats(0.3, 3.0)), "tau_y": draw(st.floats(0.3, 3.0)),
            "delta_x": draw(st.floats(0.3, 2.0)), "delta_y": draw(st.floats(0.3, 2.0)),
            "dy2_0": 10 ** draw(st.floats(-3.0, 0.5)), "cos_theta": -1.0, "zeta": draw(st.floats(0.05, 0.95)),
            "side": draw(st.sampled_from(["crossing", "reflected", "above"]))}


def _crossing_strategy():
    from hypothesis import strategies as st
    return st.composite(_crossing_draws)()


@crossing.property_check(over=(), max_examples=15, strategy=_crossing_strategy(),
                         description="dim Y = 1: a crossing happens iff dy(0).Delta_y < 0 and A_high < 0 (drawn on "
                                     "all three sides); the lifted limit is Eq 10 either way")
def crossing_criterion(p):
    """Scalar outputs (m = 1): the observed crossing equals the criterion, and the limit is Eq 10."""
    q = _crossing_state(p)
    a, b, AH, AL = constants(q)
    res = converge(q, m=1)
    if not res["converged"]:
        return not_converged(res)
    dy_dot = q.dy2_0 - q.w_0                       # dy(0).Delta_y
    predicted = dy_dot < 0 and AH < 0
    observed = res["crossings"] > 0
    u_star = tp.eq10(AH, AL)
    return Outcome.from_parts({
        "crossing criterion": (0.0 if predicted == observed else 1.0, 0.0),
        "limit = Eq 10": (abs(res["u"] - u_star), limit_tolerance(res, AH, AL, u_star)),
    }, "crossing criterion and Eq 10", values={"predicted": predicted, "observed_crossings": res["crossings"],
                                                "A_high": AH, "dy_dot_Delta_y": dy_dot, "side": p.side})


@crossing.falsifier("naive_eq7")
def naive_eq7(p):
    """Eq 7 integrated as printed (Dormand-Prince, same tolerances): negative squared distances after the crossing."""
    p = _crossing_state(p)
    a, b, AH, AL = constants(p)
    nv = tp.integrate_eq7_naive(p.dh2_0, p.dy2_0, p.w_0, a, b, p.tau_h, p.tau_y, p.T_naive, rtol=RTOL,
                                atol=1e-14, n_samples=100, max_steps=2_000)
    u_star = tp.eq10(AH, AL)
    u_end, v_end, w_end = nv["y_end"]
    neg = max(0.0, -nv["min_u"], -nv["min_v"])
    # the same error model as the lifted check, evaluated on the naive end state (Newton distance of Eq 25 on
    # its level set, drift of the conserved A_high); a negative squared distance has tolerance 0 (+ rounding)
    if u_end > 0:
        AH_end = tp.a_high(u_end, v_end, a, p.tau_h, p.tau_y)
        tol_lim = abs(AH_end - AH) + 2 * abs(tp.newton_du(u_end, w_end, a, b, p.tau_h, p.tau_y, AH_end)) \
            + 10 * RTOL * u_end + 32 * EPS * (abs(AH) + AL + u_star)
    else:
        tol_lim = 10 * RTOL * u_star + 32 * EPS * (abs(AH) + AL + u_star)
    ts = nv["ts"]
    plot = {"kind": "line", "x": [float(t) for t in ts],
            "series": {"dh2 naive Eq 7": [float(u) for u in nv["us"]], "Eq 10": [u_star] * len(ts)},
            "xlabel": "t", "ylabel": "|dh|^2", "title": "Eq 7 integrated naively through a crossing"}
    return Outcome.from_parts({
        "negative squared distance": (neg, 16 * EPS * max(1.0, p.dh2_0, p.dy2_0)),
        "limit = Eq 10": (abs(u_end - u_star), tol_lim)},
        f"naive Eq 7: min dh2 = {nv['min_u']:.3g}, min dy2 = {nv['min_v']:.3g}"
        + (f", breakdown at t={nv['t_reached']:.3g} ({nv['breakdown']})" if nv["breakdown"] else ""),
        values={"min_dh2": nv["min_u"], "min_dy2": nv["min_v"], "dh2_end": u_end, "eq10": u_star,
                "breakdown": nv["breakdown"], "t_reached": nv["t_reached"], "plot": plot})


# the printed statement is "solve Eq 7 numerically": its falsifier is the naive integration itself
crossing.falsifier("stated", description="the printed recipe (Eq 7 solved numerically as it stands) = naive_eq7")(
    naive_eq7)


# ===========================================================================
# reproductions of the catalogue's numbers (computed here, compared at the quoted precision)
@crossing.reproduction
def crossing_reproduction(p):
    """Catalogue R3 (d): lifted u_end = 0.2387355307 (10 decimals); the crossing time (quoted 0.188) is reported."""
    a = b = 1.0
    z0 = tp.lift_from_uvw(0.05, 0.2, 0.6427, 1.0)
    P = tp.lift_params(a, 1.0, 1.0, [1.0, 0.0])
    lo, hi = 0.0, 1.0
    s_hi = tp.integrate_lifted(z0, P, hi, backend="numpy", rtol=RTOL, atol=1e-14).checked()[0]
    if s_hi > 0:
        return inconclusive("no sign change of s on [0, 1]")
    for _ in range(40):  # bisection on the sign of s(t)
        mid = (lo + hi) / 2
        if tp.integrate_lifted(z0, P, mid, backend="numpy", rtol=RTOL, atol=1e-14).checked()[0] > 0:
            lo = mid
        else:
            hi = mid
    res = tp.solve_to_equilibrium(0.05, 0.2, 0.6427, a, b, 1.0, 1.0, backend="numpy")
    # the catalogue's crossing time 0.188 (0.1880 in its §4 E7) is NOT reproduced at 3 decimals: bisection on
    # s(t) gives 0.18733 (w0 = 0.6427 is quoted rounded, and the catalogue's detection grid is not stated), so
    # it is reported, not compared; the limit is compared at its quoted 10 decimals
    return Outcome.from_parts({
        "u_end vs 0.2387355307": (abs(res["u"] - 0.2387355307), 5e-11 + limit_tolerance(res))},
        "catalogue R3 (d)", values={"t_cross": hi, "t_cross_quoted": 0.188, "u_end": res["u"],
                                    "crossings": res["crossings"]})
