"""The harmonic oscillator y = (x, v), x' = v, v' = -w^2 x (w = args[0]), shared by the solver tests: out of place
(:func:`osc`), in place (:func:`osc_inplace`, the same operations into the integrator's buffer, so the same bits)
and as the NumPy reference (:func:`osc_np`).  Registered and cached once (solvers.specialise), not once per test
module."""
import numpy as np
from numba import njit

from solvers.specialise import register


@register
@njit(cache=True)
def osc(t, y, args):
    """x' = v, v' = -w^2 x, out of place."""
    w = args[0]
    out = np.empty(2)
    out[0] = y[1]
    out[1] = -w * w * y[0]
    return out


@register(inplace=True)
@njit(cache=True)
def osc_inplace(t, y, args, out):
    """:func:`osc` written into the integrator's buffer (same arithmetic, same bits)."""
    w = args[0]
    out[0] = y[1]
    out[1] = -w * w * y[0]


def osc_np(t, y, w):
    return np.array([y[1], -w * w * y[0]])
