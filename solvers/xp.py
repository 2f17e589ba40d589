"""Array-API dispatch: one code path for NumPy, CuPy and array-api-strict."""
from __future__ import annotations

import numpy as np
from array_api_compat import array_namespace, is_numpy_array

__all__ = ["namespace", "asnumpy", "cupy_available", "backend_namespace", "xp_of", "on"]


def namespace(*arrays):
    """The array-API namespace of ``arrays`` (NumPy, CuPy, array-api-strict, ...)."""
    return array_namespace(*arrays)


def asnumpy(x) -> np.ndarray:
    """Copy an array of any backend to host NumPy."""
    if is_numpy_array(x):
        return x
    if hasattr(x, "get"):  # CuPy
        return x.get()
    if hasattr(x, "__dlpack__"):  # array-api-strict and other CPU libraries: no copy, no __array__ needed
        return np.from_dlpack(x)
    return np.asarray(x)


def cupy_available() -> tuple[bool, str]:
    """Whether CuPy imports and sees a device; the reason when not."""
    try:
        import cupy  # noqa: F401
    except Exception as exc:  # ImportError or a CUDA load error
        return False, f"CuPy is not installed ({type(exc).__name__})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return False, f"CuPy sees no CUDA device ({exc})"
    return (n > 0, "CuPy sees no CUDA device") if n == 0 else (True, "")


def backend_namespace(name: str):
    """The namespace for a backend name: 'numpy' (and 'numba', whose reference is NumPy) or 'cupy'."""
    if name in ("numpy", "numba", "mpmath"):
        import array_api_compat.numpy as xnp
        return xnp
    if name == "cupy":
        ok, why = cupy_available()
        if not ok:
            raise RuntimeError(why)
        import array_api_compat.cupy as xcp
        return xcp
    if name == "array_api_strict":
        import array_api_strict
        return array_api_strict
    raise ValueError(f"unknown backend {name!r}")


def xp_of(p):
    """The array namespace a check runs on: ``p`` is its validated Params (``p.backend``) or a backend name.
    NumPy, Numba and mpmath checks get array-api-compat's NumPy namespace, so one array-API code path
    serves the NumPy reference, array-api-strict and CuPy."""
    return backend_namespace(p if isinstance(p, str) else getattr(p, "backend", "numpy"))


def on(xp, *arrays):
    """Host NumPy arrays moved to ``xp`` as float64 (complex stays complex), in one call per array: the
    instances are drawn once on the host, so every backend sees the same numbers."""
    out = []
    for a in arrays:
        a = np.asarray(a)
        dt = xp.complex128 if np.iscomplexobj(a) else xp.float64
        out.append(xp.asarray(a, dtype=dt))
    return out[0] if len(out) == 1 else tuple(out)
