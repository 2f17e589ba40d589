"""Start-up and kernel-cache cost of the command line, as ratios measured in one run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_startup.py [--repeat 3] [--json PATH]

Each command runs in a fresh process (wall time, minimum of ``--repeat`` interleaved runs):

* the reference: ``python -c "import numpy, scipy.linalg, scipy.integrate, scipy.optimize, sympy,
  numba, hypothesis"`` (what any run of the suite must import at least once);
* ``theorems list`` (target: <= 1.5x the reference);
* ``theorems check menon.balanced_invariance`` on NumPy (target: <= 1.5x the reference);
* the same check with ``--backend numba`` in a second process, the kernel cache warm
  (target: <= 1.2x the NumPy check).

It also reports how many files the Numba cache gains on a rerun (target: 0).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = [sys.executable, "-c", "import numpy, scipy.linalg, scipy.integrate, scipy.optimize, sympy, numba, hypothesis"]
THEOREMS = [sys.executable, "-m", "theorems"]
COMMANDS = {
    "import reference": REFERENCE,
    "theorems list": THEOREMS + ["list"],
    "check (numpy)": THEOREMS + ["check", "menon.balanced_invariance"],
    "check (numba, warm cache)": THEOREMS + ["check", "menon.balanced_invariance", "--backend", "numba"],
}
TARGETS = {"theorems list": ("import reference", 1.5), "check (numpy)": ("import reference", 1.5),
           "check (numba, warm cache)": ("check (numpy)", 1.2)}


def _cache_files() -> int:
    return sum(1 for d in (ROOT / "solvers", ROOT / "theorems") for p in d.rglob("*.nb[ic]"))


def _time(cmd) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-500:]}")
    return dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=None, metavar="PATH")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for cmd in COMMANDS.values():  # warm the OS file cache and the Numba on-disk cache
        _time(cmd)
    before = _cache_files()
    best = {k: float("inf") for k in COMMANDS}
    for _ in range(args.repeat):  # interleaved, so that a load spike hits every command alike
        for k, cmd in COMMANDS.items():
            best[k] = min(best[k], _time(cmd))
    grown = _cache_files() - before
    print(f"{'command':<28}{'wall s':>8}{'ratio':>8}  target")
    rows = {}
    for k, t in best.items():
        if k in TARGETS:
            ref, target = TARGETS[k]
            ratio = t / best[ref]
            rows[k] = {"seconds": t, "ratio": ratio, "against": ref, "target": target, "met": ratio <= target}
            print(f"{k:<28}{t:>8.2f}{ratio:>8.2f}  <= {target} x {ref}: {'met' if ratio <= target else 'NOT met'}")
        else:
            rows[k] = {"seconds": t}
            print(f"{k:<28}{t:>8.2f}")
    print(f"Numba cache files gained over {args.repeat} reruns: {grown}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "cache_files_gained": grown}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
