"""One Numba kernel per (integrator loop, right-hand side), compiled once and loaded from disk after.

Why: a kernel that takes the right-hand side as an argument, ``_loop(f, t0, y0, ...)``, defeats
Numba's on-disk cache.  The argument's type is ``types.Dispatcher(f)``, whose pickled form carries
the dispatcher's per-process uuid, so the cache index key differs in every process: each process
compiles again (2-3 s per kernel) and the cache folder gains one data file per process.

How: an integrator's loop is written once, as a plain Python function that calls the module-level
placeholder :data:`RHS` (``from solvers.specialise import RHS``).  :func:`kernel` makes a copy of that
function whose globals bind ``RHS`` to the given right-hand side and compiles it with
``njit(cache=True)``.  A global dispatcher is a compile-time constant to Numba (the call is direct,
as if the right-hand side were written in the loop's module), so nothing process-specific enters the
cache key, and the kernel is loaded from the cache in every later process.

Each specialisation needs its own cache entry: Numba names the index file after the function's
module file, ``__qualname__`` and first line, so the copy's ``__qualname__`` is
``<loop>__<rhs module>__<rhs name>__<hash>`` where ``<hash>`` is a digest of the right-hand side's
source file.  The cache entry is therefore invalidated when the loop's file changes (Numba's own
source stamp) or when the right-hand side's file changes (a new name; the old entry stays on disk
unused).  As everywhere in Numba, a change to a *third* file that the right-hand side calls into is
not detected: clear the cache (``__pycache__/*.nbi``, ``*.nbc`` or ``NUMBA_CACHE_DIR``) after one.

Which right-hand sides: only those marked with :func:`register`, a module-level ``@njit`` function
without closure, bound in its module under its own name, so that (module, name, source digest)
identifies its code across processes.  Any other function (a closure, a function local to a test,
one made by a factory) is specialised the same way but **without** the on-disk cache: it compiles
once per process, as a function-valued argument did before.  Two closures with the same name but
different captured values must never share a cache entry, which is why this is opt-in.

In-place right-hand sides: ``@register(inplace=True)`` (or :func:`inplace` for an unregistered one) declares
the protocol ``f(t, y, args, out) -> None``; the integrators of :mod:`solvers.rk` then pick their loop
variant that passes a stage buffer as ``out`` (``is_inplace``), so that no step allocates.
"""
from __future__ import annotations

import hashlib
import inspect
import sys
import threading
import types

from numba import njit

__all__ = ["RHS", "register", "is_registered", "inplace", "is_inplace", "kernel", "cache_tag"]


def RHS(*args):
    """Placeholder that a loop template calls for its right-hand side; :func:`kernel` rebinds it."""
    raise TypeError("a loop template calls RHS, which only solvers.specialise.kernel binds to a right-hand side")


_REGISTERED: dict[int, object] = {}        # id(rhs) -> rhs (kept alive so ids are not reused)
_INPLACE: dict[int, object] = {}           # id(rhs) -> rhs, for right-hand sides f(t, y, args, out)
_TAGS: dict[int, str] = {}                 # id(rhs) -> cache tag, computed on first use
_KERNELS: dict[tuple[int, int], tuple] = {}  # (id(loop), id(rhs)) -> (loop, rhs, dispatcher)
_LOCK = threading.Lock()


def _py_func(rhs):
    return getattr(rhs, "py_func", rhs)


def register(rhs=None, *, inplace: bool = False):
    """Mark ``rhs`` (a module-level ``@njit`` function) as safe to cache specialisations of.
    Usable as a decorator above ``@njit`` (``@register`` or ``@register(inplace=True)``).  Raises
    ``ValueError`` for a closure or a local function.

    ``inplace=True`` declares the in-place protocol ``rhs(t, y, args, out) -> None`` (the derivative is
    written into ``out``, a contiguous 1-d float64 buffer that the integrator owns; ``out`` never aliases
    ``y``): the integrators then use their allocation-free loops (``solvers.rk``)."""
    if rhs is None:
        return lambda f: register(f, inplace=inplace)
    py = _py_func(rhs)
    if not isinstance(py, types.FunctionType):
        raise ValueError(f"register: {rhs!r} is not a (jitted) Python function")
    if py.__closure__ is not None or "<locals>" in py.__qualname__:
        raise ValueError(f"register: {py.__module__}.{py.__qualname__} is a closure or a local function; its "
                         "name does not identify its code across processes, so it cannot be cached")
    _REGISTERED[id(rhs)] = rhs
    if inplace:
        _INPLACE[id(rhs)] = rhs
    return rhs


def inplace(rhs):
    """Declare ``rhs(t, y, args, out)`` in-place without registering it for the on-disk cache (a closure or a
    local function: compiled once per process, as any unregistered right-hand side)."""
    _py_func(rhs)
    _INPLACE[id(rhs)] = rhs
    return rhs


def is_inplace(rhs) -> bool:
    return _INPLACE.get(id(rhs)) is rhs


def is_registered(rhs) -> bool:
    return _REGISTERED.get(id(rhs)) is rhs


def cache_tag(rhs) -> str:
    """``<module>__<name>__<digest of the source file>`` of a registered right-hand side; raises
    ``ValueError`` when it is not registered or not bound under its own name in its module."""
    if not is_registered(rhs):
        raise ValueError(f"{rhs!r} is not registered (solvers.specialise.register)")
    tag = _TAGS.get(id(rhs))
    if tag is not None:
        return tag
    py = _py_func(rhs)
    mod = sys.modules.get(py.__module__)
    if getattr(mod, py.__qualname__, None) is not rhs:
        raise ValueError(f"{py.__module__}.{py.__qualname__} is registered but is not the module attribute of "
                         "that name (redefined or reloaded?); its cached kernels could not be identified")
    with open(inspect.getfile(py), "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()[:12]
    tag = f"{py.__module__.replace('.', '_')}__{py.__qualname__}__{digest}"
    _TAGS[id(rhs)] = tag
    return tag


def kernel(loop, rhs):
    """The Numba kernel of the loop template ``loop`` with ``RHS`` bound to ``rhs``: ``njit(cache=True)``
    when ``rhs`` is registered, plain ``njit`` (compiled once per process) otherwise.  Memoised."""
    key = (id(loop), id(rhs))
    hit = _KERNELS.get(key)
    if hit is not None and hit[0] is loop and hit[1] is rhs:
        return hit[2]
    with _LOCK:
        hit = _KERNELS.get(key)
        if hit is not None and hit[0] is loop and hit[1] is rhs:
            return hit[2]
        cached = is_registered(rhs)
        g = dict(loop.__globals__)
        g["RHS"] = rhs
        fn = types.FunctionType(loop.__code__, g, loop.__name__, loop.__defaults__, loop.__closure__)
        fn.__qualname__ = f"{loop.__qualname__}__{cache_tag(rhs)}" if cached else loop.__qualname__
        fn.__doc__ = loop.__doc__
        disp = njit(cache=cached)(fn)
        _KERNELS[key] = (loop, rhs, disp)
        return disp
