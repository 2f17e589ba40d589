"""Speed of the Numba kernels as ratios against their NumPy references, measured in one run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_kernels.py [--repeat 5]

Each line: kernel, problem, NumPy time, Numba time (after compilation), speed-up.
Compilation is done (and reported) before timing.
"""
import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from solvers import dln, rk  # noqa: E402


def best(f, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for widths in ([3, 3, 3, 3], [4, 4, 4, 4, 4, 4]):
        Ws = dln.random_layers(widths, rng)
        Y = rng.standard_normal((widths[-1], widths[0]))
        args = dln.make_args(widths, Y)
        y0 = dln.pack(Ws)
        tag = f"DLN d={widths[0]} N={len(widths) - 1}"
        t0 = time.perf_counter()
        rk.rk_fixed(dln.dln_rhs, 0.0, y0, 0.01, 1, args)
        rk.dopri5(dln.dln_rhs, 0.0, y0, 0.01, args)
        rk.implicit_midpoint(dln.dln_rhs, 0.0, y0, 0.01, 1, args)
        compile_s = time.perf_counter() - t0
        cases = [
            ("rhs x1000", lambda: [dln.dln_rhs_numpy(0.0, y0, *args) for _ in range(1000)],
             lambda: [dln.dln_rhs(0.0, y0, args) for _ in range(1000)]),
            ("rk4 1000 steps", lambda: rk.rk_fixed_numpy(dln.dln_rhs_numpy, 0.0, y0, 1e-3, 1000, args),
             lambda: rk.rk_fixed(dln.dln_rhs, 0.0, y0, 1e-3, 1000, args)),
            ("dopri5 T=1", lambda: rk.dopri5_numpy(dln.dln_rhs_numpy, 0.0, y0, 1.0, args),
             lambda: rk.dopri5(dln.dln_rhs, 0.0, y0, 1.0, args)),
            ("implicit midpoint 100 steps", lambda: rk.implicit_midpoint_numpy(dln.dln_rhs_numpy, 0.0, y0, 0.01, 100, args),
             lambda: rk.implicit_midpoint(dln.dln_rhs, 0.0, y0, 0.01, 100, args)),
        ]
        for name, f_np, f_nb in cases:
            tn, tb = best(f_np, a.repeat), best(f_nb, a.repeat)
            rows.append((name, tag, tn, tb, tn / tb))
        rows.append(("(compile, cached after first run)", tag, float("nan"), compile_s, float("nan")))
    print(f"{'kernel':<34} {'problem':<16} {'numpy s':>10} {'numba s':>10} {'speed-up':>9}")
    for name, tag, tn, tb, r in rows:
        print(f"{name:<34} {tag:<16} {tn:>10.4g} {tb:>10.4g} {r:>8.1f}x")


if __name__ == "__main__":
    main()
