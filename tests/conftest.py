import numpy as np
import pytest


@pytest.fixture(scope="session")
def warm_kernels():
    """Load the Numba kernels (from the on-disk cache, or compile them on a cold one) once per session
    so Hypothesis never times the compiler or the cache loader."""
    from solvers import dln, rk
    w = [2, 2, 2]
    args = dln.make_args(w, np.eye(2))
    y0 = dln.pack(dln.random_layers(w, np.random.default_rng(0)))
    rk.rk_fixed(dln.dln_rhs, 0.0, y0, 0.01, 2, args)
    rk.dopri5(dln.dln_rhs, 0.0, y0, 0.01, args)
    rk.implicit_midpoint(dln.dln_rhs, 0.0, y0, 0.01, 2, args)
    return True
