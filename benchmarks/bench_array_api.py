"""Batched array-API checks: NumPy against array-api-strict and CuPy, as ratios measured in one run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_array_api.py [--repeat 3] [--quick] [--json PATH]

Four claims of different kinds, each check run through ``theorems.runner.run_check`` exactly as
``theorems check ID --backend B --param batch=...`` runs it, over batch sizes spanning two decades:

* ``menon.a_operator_transpose``: matrix functions from ``eigh`` (psd powers) on stacks of d x d matrices;
* ``sander.momentum_inverse``: Momentum ResNet forward and inverse passes (4.3), a batch of networks;
* ``sander.sinkhorn_iterations``: Sinkhorn scalings of an n x n kernel (an iteration to a tolerance);
* ``chen.theorem_5_1_support``: sector conditions (5.9)/(5.10) on stacks of per-sample projectors.

Each backend runs the same array-API code path: ``numpy`` (array-api-compat's NumPy namespace),
``array_api_strict`` (the reference implementation of the standard: it shows the cost of the
standard's wrapper, not a speed anyone would choose) and ``cupy`` where CuPy sees a device. The
instances are drawn on the host once per run (the same numbers on every backend) and only the
verdict's residuals come back, so a GPU's time includes the host-to-device copy of the instances.
Times are wall-clock (``cupy`` synchronised), the best of ``--repeat`` interleaved runs after one
warm-up per backend (CuPy compiles its kernels on first use). A backend whose verdict differs from
NumPy's, or whose residual differs by more than the tolerance, is a MISMATCH and the script exits 1.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

#: (claim id, fixed parameters, the size parameter, sizes spanning two decades)
CASES = [
    ("menon.a_operator_transpose", {"d": 4, "N": 3, "seed": 1}, "batch", (16, 160, 1600)),
    ("sander.momentum_inverse", {"seed": 1}, "batch", (2, 20, 200)),
    ("sander.sinkhorn_iterations", {"seed": 1}, "n", (2, 20, 200)),
    ("chen.theorem_5_1_support", {"seed": 1}, "samples", (1000, 10000, 100000)),
]


def _sync(backend):
    if backend == "cupy":
        import cupy
        cupy.cuda.Device().synchronize()


def _time(check, params, backend, repeat):
    from theorems.runner import run_check
    best, rec = float("inf"), None
    for _ in range(repeat):
        _sync(backend)
        t = time.perf_counter()
        rec = run_check(check, params, backend=backend)
        _sync(backend)
        best = min(best, time.perf_counter() - t)
    return best, rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the two smaller sizes only")
    ap.add_argument("--json", default=None, metavar="PATH", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    from solvers.xp import cupy_available
    from theorems.registry import get_claim
    backends = ["numpy", "array_api_strict"] + (["cupy"] if cupy_available()[0] else [])
    if "cupy" not in backends:
        print(f"cupy: not measured ({cupy_available()[1]})")
    rows, bad = [], False
    for cid, fixed, size_name, sizes in CASES:
        claim = get_claim(cid)
        check = next(k for k in claim.checks if k.kind == "numeric")
        missing = [b for b in backends if b not in check.backends]
        if missing:
            print(f"{cid}: does not offer {', '.join(missing)}; skipped")
            continue
        for b in backends:  # warm-up: imports, Numba caches, CuPy kernel compilation
            _time(check, {**fixed, size_name: sizes[0]}, b, 1)
        for n in (sizes[:2] if args.quick else sizes):
            params = {**fixed, size_name: n}
            times, recs = {}, {}
            for b in backends:
                times[b], recs[b] = _time(check, params, b, args.repeat)
            ref = recs["numpy"]
            row = {"claim": cid, size_name: n, "seconds": times,
                   "ratio_to_numpy": {b: times[b] / times["numpy"] for b in backends}, "verdicts": {}}
            for b in backends:
                r = recs[b]
                row["verdicts"][b] = r["verdict"]
                tol = ref["tolerance"] if isinstance(ref["tolerance"], (int, float)) else 0.0
                if r["verdict"] != ref["verdict"] or (
                        isinstance(r["residual"], (int, float)) and isinstance(ref["residual"], (int, float))
                        and abs(r["residual"] - ref["residual"]) > tol):
                    row.setdefault("mismatch", []).append(b)
                    bad = True
            rows.append(row)
            cells = "  ".join(f"{b} {times[b] * 1e3:9.2f} ms ({times[b] / times['numpy']:6.2f}x)" for b in backends)
            print(f"{cid:<36} {size_name}={n:<6} {cells}  {ref['verdict']}"
                  + (f"  MISMATCH {row['mismatch']}" if "mismatch" in row else ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"backends": backends, "rows": rows}, fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
