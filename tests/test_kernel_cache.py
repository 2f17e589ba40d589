"""Kernels compiled once, on disk: the generic integrators (rk_fixed, dopri5, implicit_midpoint,
orthogonal.lie_rk) specialised on the right-hand sides the claims use are loaded from Numba's on-disk
cache in a second process, which compiles nothing, and the cache folder does not grow after that.

The processes are real subprocesses with ``NUMBA_CACHE_DIR`` pointed at a fresh folder, so the first
one starts from a cold cache (it must compile: that shows the folder is the one in use) and the
following ones are the "second process" of every ``theorems check`` run.  A right-hand side that is
not registered (``_unregistered`` below) is the control: it must compile again in every process,
which shows that the compile listener sees a compilation when there is one."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from solvers import dln, rk, specialise, twopoint as tp

SCRIPT = textwrap.dedent('''
    import json
    import numpy as np
    from numba import njit
    from numba.core import event

    rec = event.RecordingListener()
    with event.install_listener("numba:compile", rec):
        from solvers import chen, dln, leaky, rk, specialise, twopoint as tp
        from theorems.menon import sec14_1_matrix_completion as rle

        rng = np.random.default_rng(0)
        w = [2, 3, 2]
        args = dln.make_args(w, rng.standard_normal((2, 2)))
        y0 = dln.pack(dln.random_layers(w, rng))
        P = tp.lift_params(0.25, 1.0, 2.0, [1.0, 0.5])
        z0 = np.array([0.3, 0.1, 0.05])
        out = {
            # the calls of theorems/menon/invariance.py, sec5_2_scalar_conics.py, sec14_1_matrix_completion.py,
            # solvers/twopoint.py, solvers/leaky.py and solvers/chen.py, with the argument types they pass
            "implicit_midpoint/dln": rk.implicit_midpoint(dln.dln_rhs, 0.0, y0, 0.01, 5, args)[0],
            "dopri5/dln": rk.dopri5(dln.dln_rhs, 0.0, y0, 0.1, args)[0],
            "rk_fixed/dln": rk.rk_fixed(dln.dln_rhs, 0.0, y0, 0.01, 5, args),
            "dopri5/lift": tp.integrate_lifted(z0, P, 0.5).y,
            "rk_fixed/lift": rk.rk_fixed(tp.lift_rhs, 0.0, z0, 0.01, 5, (P,)),
            "switch/hamilton": leaky.shoot(rng.standard_normal((2, 3)), rng.standard_normal((2, 3)), 1.5,
                                           n_out=2)[0][-1],
            "dopri5/mc": rk.dopri5(rle._mc_rhs, 0.0, np.array([0.3, -0.2, 0.1, 0.4]), 0.1, (3.0,),
                                   rtol=1e-10, atol=1e-14)[0],
        }
        X = rng.standard_normal((2, 6))
        clusters = [X[:, :3] + 3.0, X[:, 3:] + 3.0]
        ys, _ = chen.integrate("corrected", [np.zeros(2), np.zeros(2)], [np.eye(2), np.eye(2)], clusters,
                               [np.ones(2), -np.ones(2)], 0.01, 3)
        out["lie_rk/chen_effective"] = ys[-1]

    @njit
    def _unregistered(t, y, args):
        return -args[0] * y

    control = event.RecordingListener()
    with event.install_listener("numba:compile", control):
        out["unregistered"] = rk.rk_fixed(_unregistered, 0.0, np.ones(2), 0.1, 3, (0.5,))

    kernels = {}
    for loop, rhs, d in specialise._KERNELS.values():
        kernels[d.py_func.__qualname__] = {"cached": specialise.is_registered(rhs),
                                           "hits": sum(d.stats.cache_hits.values()),
                                           "misses": sum(d.stats.cache_misses.values())}
    def names(r):
        return sorted({ev.data["dispatcher"].py_func.__qualname__ for _, ev in r.buffer if ev.is_start})
    print(json.dumps({"kernels": kernels, "compiled": names(rec), "control_compiled": names(control),
                      "results": {k: np.asarray(v).tolist() for k, v in out.items()}}))
''')

LOOPS = {"_implicit_midpoint_loop", "_dopri5_loop", "_rk_fixed_loop", "_lie_rk_loop", "_switch_loop"}
RHS = {"solvers_dln__dln_rhs", "solvers_twopoint__lift_rhs", "solvers_rhs_inplace__hamilton_rhs_sw",
       "theorems_menon_sec14_1_matrix_completion___mc_rhs", "solvers_chen__effective_rhs"}


def _run(script, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), OPENBLAS_NUM_THREADS="1")
    env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _files(cache):
    return {str(p.relative_to(cache)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in Path(cache).rglob("*") if p.is_file()}


def test_second_process_loads_every_specialisation_from_disk(tmp_path):
    script = tmp_path / "kernels.py"
    script.write_text(SCRIPT)
    cache = tmp_path / "numba_cache"
    cache.mkdir()

    first = _run(script, cache)
    files1 = _files(cache)
    second = _run(script, cache)
    files2 = _files(cache)
    third = _run(script, cache)
    files3 = _files(cache)

    cached = {q: k for q, k in second["kernels"].items() if k["cached"]}
    # every (loop, rhs) pair named above was specialised, with its own cache entry
    pairs = {(next(l for l in LOOPS if q.startswith(l + "__")), next(r for r in RHS if r in q)) for q in cached}
    assert pairs == {("_implicit_midpoint_loop", "solvers_dln__dln_rhs"), ("_dopri5_loop", "solvers_dln__dln_rhs"),
                     ("_rk_fixed_loop", "solvers_dln__dln_rhs"), ("_dopri5_loop", "solvers_twopoint__lift_rhs"),
                     ("_rk_fixed_loop", "solvers_twopoint__lift_rhs"),
                     ("_switch_loop", "solvers_rhs_inplace__hamilton_rhs_sw"), ("_dopri5_loop", "theorems_menon_sec14_1_matrix_completion___mc_rhs"),
                     ("_lie_rk_loop", "solvers_chen__effective_rhs")}
    # cold cache: the first process compiled each of them (so the folder under test is the one in use)
    assert all(first["kernels"][q]["misses"] >= 1 for q in cached)
    for run in (second, third):
        for q in cached:
            assert run["kernels"][q] == {"cached": True, "hits": 1, "misses": 0}, q
        # nothing else compiled either: the right-hand sides and helpers are inside the cached objects
        assert run["compiled"] == [], run["compiled"]
        # the control compiles in every process: the listener does see a compilation when there is one
        assert "_rk_fixed_loop" in run["control_compiled"] and "_unregistered" in run["control_compiled"]
        # the loaded kernels compute what the freshly compiled ones did, bit for bit
        assert run["results"] == first["results"]
    assert second["kernels"]["_rk_fixed_loop"] == {"cached": False, "hits": 0, "misses": 1}
    # the cache folder is written once: not a file added, resized or rewritten by later processes
    assert files1 and files2 == files1 and files3 == files2


# ---------------------------------------------------------------------------
# the registry itself (nothing compiled here: dispatchers are built lazily)
def test_each_registered_rhs_gets_its_own_cached_kernel():
    a = specialise.kernel(rk._dopri5_loop, dln.dln_rhs)
    b = specialise.kernel(rk._dopri5_loop, tp.lift_rhs)
    assert a is specialise.kernel(rk._dopri5_loop, dln.dln_rhs)      # memoised
    assert a.py_func.__qualname__ != b.py_func.__qualname__
    assert a.py_func.__globals__["RHS"] is dln.dln_rhs and b.py_func.__globals__["RHS"] is tp.lift_rhs
    assert rk._dopri5_loop.__globals__["RHS"] is specialise.RHS        # the template itself is untouched
    # the cache index is named after the copy's qualname, and that carries the source digest
    assert a.stats.cache_path and specialise.cache_tag(dln.dln_rhs) in a.py_func.__qualname__
    assert type(a._cache).__name__ == "FunctionCache"


@njit
def _module_level_but_unregistered(t, y, args):
    return y


def test_unregistered_rhs_takes_the_uncached_path():
    k = specialise.kernel(rk._rk_fixed_loop, _module_level_but_unregistered)
    assert type(k._cache).__name__ == "NullCache"
    assert not specialise.is_registered(_module_level_but_unregistered)


def test_register_refuses_closures_and_local_functions():
    c = 2.0

    def local(t, y, args):
        return c * y
    for f in (local, njit(local)):
        with pytest.raises(ValueError, match="closure or a local function"):
            specialise.register(f)
        assert not specialise.is_registered(f)


def test_template_called_directly_says_what_is_wrong():
    with pytest.raises(TypeError, match="RHS"):
        rk._rk_fixed_loop(0.0, np.ones(1), 0.1, 1, (), *rk.tableau("euler")[:3], 0)
