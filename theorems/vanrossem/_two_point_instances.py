"""Random instances of the linearised two-point problem (Eq 16) shared by the vanrossem claim modules: the
parameter blocks and seeded draws of ``(x_i, y_i, D_h, D_y, ybar)`` (host and array-API), the loss Eq 16, the
representational-velocity states, and the two-layer linear network with bias.

Conventions: see :mod:`theorems.vanrossem._common`.
"""
from __future__ import annotations

import numpy as np

from solvers import xp_vanrossem as xv
from theorems.claim import Param
from theorems.vanrossem._common import FLOOR


# ---------------------------------------------------------------------------
# the representational-velocity states (l.105)
def _rv_params():
    return [Param.seed("seed of the state"),
            Param.int("dim_x", 2, 1, 16, "dim X", search=(1, 4)),
            Param.int("hidden", 3, 1, 64, "dim H", search=(1, 6)),
            Param.int("dim_y", 2, 1, 16, "dim Y", search=(1, 4)),
            Param.float("tau_h", 1.0, FLOOR, 1e3, "encoder time constant", search=(0.3, 3.0)),
            Param.float("tau_y", 2.0, FLOOR, 1e3, "decoder time constant", search=(0.3, 3.0)),
            Param.float("scale", 1.0, FLOOR, 100.0, "scale of D_h, D_y", search=(0.05, 3.0)),
            Param.choice("gradients", "eq17", ["eq17", "eq16"],
                         "eq17: the paper's Eq 17 factor 1/2 (Eq 7 time units); eq16: the true gradients (1/4)")]


def _rv_state(p):
    rng = np.random.default_rng(p.seed)
    x1, x2 = rng.standard_normal(p.dim_x), rng.standard_normal(p.dim_x)
    y1, y2 = rng.standard_normal(p.dim_y), rng.standard_normal(p.dim_y)
    Dh = p.scale * rng.standard_normal((p.hidden, p.dim_x))
    Dy = p.scale * rng.standard_normal((p.dim_y, p.hidden))
    return x1, x2, y1, y2, Dh, Dy


def _lin_instance(p):
    rng = np.random.default_rng(p.seed)
    Dh = rng.standard_normal((p.hidden, p.dim_x))
    Dy = rng.standard_normal((p.dim_y, p.hidden))
    yb = rng.standard_normal(p.dim_y)
    X = rng.standard_normal((2, p.dim_x)) + 1.5  # the data mean is far from 0
    Y = rng.standard_normal((2, p.dim_y))
    return Dh, Dy, yb, X, Y


def _net_loss_grads(xp, W1, W2, b2, Xin, Y):
    """Two-layer linear network f(x) = W2 W1 x + b2, loss 1/2 mean_i |f(x_i) - y_i|^2, backprop gradients (xp)."""
    T = xp.matrix_transpose
    H = Xin @ T(W1)
    R = H @ T(W2) + b2 - Y
    return 0.25 * xp.sum(R * R), 0.5 * (T(W2) @ T(R)) @ Xin, 0.5 * T(R) @ H, 0.5 * xp.sum(R, axis=0)


# ---------------------------------------------------------------------------
# instances of Eq 16
def _net_params(extra=()):
    return [Param.seed("seed of the data and linearisation parameters"),
            Param.int("hidden", 3, 1, 16, "dim H of the representation space", search=(1, 5)),
            Param.int("dim_x", 2, 1, 16, "dim X of the inputs", search=(1, 4)),
            Param.int("dim_y", 2, 1, 16, "dim Y of the outputs", search=(1, 4))] + list(extra)


def _net_instance(p):
    rng = np.random.default_rng(p.seed)
    x1, x2 = rng.standard_normal(p.dim_x), rng.standard_normal(p.dim_x)
    y1, y2 = rng.standard_normal(p.dim_y), rng.standard_normal(p.dim_y)
    Dh = rng.standard_normal((p.hidden, p.dim_x))
    Dy = rng.standard_normal((p.dim_y, p.hidden))
    ybar = rng.standard_normal(p.dim_y)
    return x1, x2, y1, y2, Dh, Dy, ybar


def _loss16(ybar, Dh, Dy, x1, x2, y1, y2):
    """Eq 16: L = 1/2 <|ybar + 1/2 D_y D_h (x_i - x_-i) - y_i|^2> over the two points (analytic: r.r, no conj)."""
    r1 = ybar + 0.5 * Dy @ (Dh @ (x1 - x2)) - y1
    r2 = ybar + 0.5 * Dy @ (Dh @ (x2 - x1)) - y2
    return 0.25 * (r1 @ r1 + r2 @ r2)


_loss16_xp = xv.loss16


def _net_instance_xp(p):
    """:func:`_net_instance` drawn on the host and moved to the namespace of ``p.backend``."""
    xp = xv.xp_of(p)
    return (xp, *xv.on(xp, *_net_instance(p)))
