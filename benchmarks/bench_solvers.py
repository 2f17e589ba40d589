"""Speed of the Numba solver kernels not covered by bench_kernels.py, as ratios against their NumPy
references, measured in one run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_solvers.py [--repeat 5] [--quick] [--json PATH]
                                                              [--only GROUP ...] [--cold]

Groups (each a solver module; a module that is missing, fails to import or has no Numba kernel is
skipped with the reason printed):

* ``resnet_ode``   Euler ResNet / HeunNet forward, backprop on stored activations, adjoint (memory-free)
* ``chen``         ``chen.integrate`` (Cayley-RK4 on O(Q), the loop of ``orthogonal.lie_rk``), effective
                   (corrected) and direct flows, ``backend`` numba vs numpy
* ``twopoint``     ``integrate_lifted`` (Dormand-Prince on the lifted system) and ``solve_to_equilibrium``
* ``leaky``        ``shoot`` (Hamilton's equations by Dormand-Prince), ``backend`` numba vs numpy
* ``leaky_net``    discretised leaky ResNet ``forward`` / ``grad``
* ``mlp``          ``train`` (full-batch GD), ``backend`` numba vs numpy
* ``resnet_train`` ``grads`` / ``train`` against ``grads_numpy`` / ``train_numpy``
* ``sinkhorn``     ``sinkhorn`` (log domain), ``backend`` numba vs numpy
* ``topk``         (benchmarked only if the module grows a Numba kernel)

Method.  For every (kernel, problem) the Numba and the NumPy versions are run once and their outputs
compared to the tolerance stated next to the case (the error model of the corresponding test in
``tests/``); a case whose outputs disagree is reported as MISMATCH, not timed, and the script exits
with status 1.  Then both are timed, interleaved (NumPy, Numba, NumPy, ...) so that a change of machine
load hits both, and the best of ``--repeat`` runs is kept (fewer repeats, the same number for both,
when one run of the pair exceeds the per-case budget); wall-clock (``speed-up``) and process CPU time
are both kept.  The table shows CPU times and their ratio (``speed-up``) first: on a loaded machine a run
longer than a scheduler time slice is preempted and its wall time inflated, short runs often are not, so
wall ratios (``wall s-up``) overstate the speed-up of a fast kernel over a slow reference; CPU time leaves
the waiting out (everything here is single-threaded, OpenBLAS included).  ``compile s`` is the first Numba call minus
the best Numba call (CPU time) on the first problem size of each kernel: the JIT compilation, or only the
on-disk cache load when the cache (``cache=True``) is warm; ``--cold`` points ``NUMBA_CACHE_DIR`` at
an empty temporary folder so that it is the true compilation time.  Absolute times depend on the
machine and its load; read the ratios.
"""
import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
import traceback

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if "--cold" in sys.argv:            # must precede the first numba import
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench_solvers_numba_")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import importlib  # noqa: E402

import numpy as np  # noqa: E402

EPS = float(np.finfo(float).eps)


def _maxabs(a):
    a = np.asarray(a, dtype=float)
    return float(np.max(np.abs(a))) if a.size else 0.0


def maxdiff(a, b):
    """Largest entrywise difference over (nested tuples/lists of) arrays."""
    if isinstance(a, (tuple, list)):
        return max((maxdiff(x, y) for x, y in zip(a, b)), default=0.0)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return math.inf
    return _maxabs(a - b)


def scale_of(a):
    if isinstance(a, (tuple, list)):
        return max((scale_of(x) for x in a), default=0.0)
    return _maxabs(a)


class Bench:
    def __init__(self, repeat, quick, budget):
        self.repeat, self.quick, self.budget = repeat, quick, budget
        self.rows = []
        self.skips = []
        self.mismatches = []
        self._seen = set()

    def case(self, group, kernel, size, f_np, f_nb, check):
        """``check(out_np, out_nb) -> (err, tol, what)``; a case is timed only when ``err <= tol``."""
        c0, t0 = time.process_time(), time.perf_counter()
        out_nb = f_nb()
        first_nb, first_nb_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        out_np = f_np()
        first_np = time.perf_counter() - t0
        err, tol, what = check(out_np, out_nb)
        if callable(size):           # a label that reads the kernel's output (e.g. the step count)
            size = size(out_nb)
        row = dict(group=group, kernel=kernel, size=size, err=float(err), tol=float(tol), check=what)
        if not err <= tol:
            row.update(status="MISMATCH", numpy_s=None, numba_s=None, ratio=None, compile_s=None, repeats=0)
            self.rows.append(row)
            self.mismatches.append(row)
            print(f"  MISMATCH {group}/{kernel} [{size}]: {what}: {err:.3g} > tol {tol:.3g}", flush=True)
            return
        # the pair's duration, from the check run (its Numba call includes the compilation the first time)
        one = max(first_np, first_nb if (group, kernel) in self._seen else 0.0, 1e-9)
        nrep = max(1, min(self.repeat, int(self.budget / one)))
        tn, tb, cn, cb = [], [], [], []
        for _ in range(nrep):
            for f, tl, cl in ((f_np, tn, cn), (f_nb, tb, cb)):
                c0, t0 = time.process_time(), time.perf_counter()
                f()
                tl.append(time.perf_counter() - t0)
                cl.append(time.process_time() - c0)
        tn, tb, cn, cb = min(tn), min(tb), min(cn), min(cb)
        comp = None
        if (group, kernel) not in self._seen:
            self._seen.add((group, kernel))
            comp = max(first_nb_cpu - cb, 0.0)
            row["compile_wall_s"] = max(first_nb - tb, 0.0)
        cpu_ratio = cn / cb if cb > 0 else None
        row.update(status="ok", numpy_s=tn, numba_s=tb, ratio=tn / tb, numpy_cpu_s=cn, numba_cpu_s=cb,
                   cpu_ratio=cpu_ratio, compile_s=comp, repeats=nrep)
        self.rows.append(row)
        cr = "-" if cpu_ratio is None else f"{cpu_ratio:.1f}"
        print(f"  {group}/{kernel} [{size}]: cpu numpy {cn:.4g}s numba {cb:.4g}s x{cr} (wall x{tn / tb:.1f})"
              f"{'' if comp is None else f' (compile {comp:.2f}s)'}; {what} {err:.2g} <= {tol:.2g}", flush=True)

    def skip(self, group, reason):
        self.skips.append(dict(group=group, reason=reason))
        print(f"  SKIP {group}: {reason}", flush=True)


def rel_check(scale_fn, factor, what):
    """``max |np - nb| <= factor * scale``; ``scale_fn(out_np)`` gives the magnitude the error lives on."""
    def check(a, b):
        return maxdiff(a, b), factor * max(scale_fn(a), 1.0), what
    return check


def has_numba_kernel(mod):
    try:
        from numba.core.registry import CPUDispatcher
    except ImportError:          # pragma: no cover
        from numba.core.dispatcher import Dispatcher as CPUDispatcher
    return any(isinstance(v, CPUDispatcher) for v in vars(mod).values())


# ---------------------------------------------------------------------------
# groups
def g_resnet_ode(B, ro):
    rng = np.random.default_rng(0)
    sizes = [(64, 4, 8), (256, 8, 16)] if B.quick else [(128, 4, 16), (512, 8, 32), (2048, 16, 64)]
    for N, d, nb in sizes:
        tag = f"N={N} d={d} B={nb}"
        x0 = rng.standard_normal((nb, d))
        y = rng.standard_normal((nb, d))
        # rounding model of the module docstring: N (d + 2) eps e^{Lf} max|x| per pass; allowance 64 for
        # e^{Lf} and the differing summation order (BLAS vs loops)
        fac = 64 * N * (d + 2) * EPS
        for heun in (False, True):
            W, b = ro.smooth_weights(N, d, rng, heun=heun)
            pre = "heun" if heun else "euler"
            fwd_np, fwd_nb = getattr(ro, f"{pre}_forward_numpy"), getattr(ro, f"{pre}_forward")
            xs_np = fwd_np(x0, W, b, N)
            xs = xs_np[0] if heun else xs_np
            _, gN = ro.half_sq_loss(xs[-1], y)
            chk = rel_check(scale_of, fac, "max|diff| vs 64 N(d+2) eps max|out|")
            B.case("resnet_ode", f"{pre}_forward", tag,
                   lambda: fwd_np(x0, W, b, N), lambda: fwd_nb(x0, W, b, N), chk)
            bk_np, bk_nb = getattr(ro, f"{pre}_backward_numpy"), getattr(ro, f"{pre}_backward")
            B.case("resnet_ode", f"{pre}_backward", tag,
                   lambda: bk_np(xs, W, b, gN, N), lambda: bk_nb(xs, W, b, gN, N), chk)
            ad_np, ad_nb = getattr(ro, f"{pre}_adjoint_numpy"), getattr(ro, f"{pre}_adjoint")
            B.case("resnet_ode", f"{pre}_adjoint", tag,
                   lambda: ad_np(xs[-1], W, b, gN, N), lambda: ad_nb(xs[-1], W, b, gN, N), chk)


def g_chen(B, cm):
    from theorems.chen._common import separated_instance
    # (Q, K clusters, L layers, points per cluster, steps); h = 0.01 as in tests/test_chen.py
    sizes = [(3, 2, 3, 5, 60)] if B.quick else [(3, 2, 3, 5, 100), (4, 3, 4, 20, 100), (6, 4, 6, 40, 100)]
    for Q, K, L, n, steps in sizes:
        clusters, yt, betas, Rs = separated_instance(Q, K, L, n, 4, distance=3.0 * Q, spread=0.25)
        tag = f"Q={Q} K={K} L={L} n={n}/cl {steps} st"
        for kind in ("corrected", "direct"):
            run = lambda backend, kind=kind: cm.integrate(kind, betas, Rs, clusters, yt, 0.01, steps,
                                                          backend=backend, every=10)
            # tests/test_chen.py: the two perform the same operations up to summation order, 1e-12 on
            # 60 steps; the ReLU walls make the flow only piecewise smooth, so a rounding-level flip of
            # a Heaviside would show as an O(h) jump (and fail this check)
            chk = lambda a, b: (maxdiff(a, b), 1e-11 * max(scale_of(a), 1.0), "max|diff| of (ys, Rss)")
            B.case("chen", f"integrate[{'effective' if kind == 'corrected' else kind}]", tag,
                   lambda run=run: run("numpy"), lambda run=run: run("numba"), chk)


def g_twopoint(B, tp):
    # the lifted system from a consistent (u, v, w) of tests/test_twopoint.py: a = 0.25, b = 1,
    # tau_h = 1, tau_y = 2 (Eq 7 factor g = 1/2); dim Y = m
    u0, v0, w0, a, b, th, ty = 0.01, 0.001, 0.0, 0.25, 1.0, 1.0, 2.0
    sizes = [(2, 50.0)] if B.quick else [(2, 50.0), (16, 50.0), (2, 2000.0)]
    for m, t1 in sizes:
        dY = np.zeros(m)
        dY[0] = math.sqrt(b)
        z0 = tp.lift_from_uvw(u0, v0, w0, math.sqrt(b), m)
        P = tp.lift_params(a, th, ty, dY)

        def chk(x, y):
            # the same controller on the same right-hand side: the same accepted/rejected steps, states
            # to rounding amplified along the path (1e-10 relative at rtol 1e-11)
            if (x.accepted, x.rejected) != (y.accepted, y.rejected):
                return math.inf, 0.0, f"step counts {(x.accepted, x.rejected)} vs {(y.accepted, y.rejected)}"
            return maxdiff(x.y, y.y), 1e-10 * max(scale_of(x.y), 1.0), "max|diff| of z (same step counts)"
        B.case("twopoint", "integrate_lifted", lambda o, m=m, t1=t1: f"m={m} t1={t1:g} ({o.accepted} steps)",
               lambda: tp.integrate_lifted(z0, P, t1, "numpy"), lambda: tp.integrate_lifted(z0, P, t1, "numba"), chk)
    for m in ([2] if B.quick else [2, 8]):
        def chk2(x, y):
            if x["steps"] != y["steps"] or x["converged"] != y["converged"]:
                return math.inf, 0.0, f"steps {x['steps']} vs {y['steps']}"
            e = maxdiff([x["u"], x["v"], x["w"]], [y["u"], y["v"], y["w"]])
            return e, 1e-9 * max(abs(x["u"]), abs(x["v"]), 1.0), "max|diff| of (u, v, w)_end"
        B.case("twopoint", "solve_to_equilibrium", lambda o, m=m: f"m={m} ({o['steps']} steps)",
               lambda m=m: tp.solve_to_equilibrium(u0, v0, w0, a, b, th, ty, m=m, backend="numpy"),
               lambda m=m: tp.solve_to_equilibrium(u0, v0, w0, a, b, th, ty, m=m, backend="numba"), chk2)


def g_leaky(B, lk):
    # theorems/jacot/sec2_4_hamiltonian.py defaults: w = 6, N = 5, Lt = 3, B scale 0.1, n_out = 100, rtol 1e-11
    sizes = [(3, 4, 2.0, 10)] if B.quick else [(6, 5, 3.0, 100), (12, 5, 1.0, 100), (20, 10, 2.0, 50)]
    for w, N, Lt, n_out in sizes:
        rng = np.random.default_rng(w * 100 + N)
        A0, B0 = rng.standard_normal((w, N)), 0.1 * rng.standard_normal((w, N))
        run = lambda be, A0=A0, B0=B0, Lt=Lt, n_out=n_out: lk.shoot(A0, B0, Lt, n_out=n_out, rtol=1e-11,
                                                                   atol=1e-12, backend=be)

        def chk(x, y):
            # tests/test_leaky.py: the ReLU kink lets rounding decide step acceptance differently, so the
            # paths agree to the global integration error (~1e-8 at rtol 1e-11), not to rounding
            if x[0] is None or y[0] is None:
                return (0.0 if x[0] is None and y[0] is None else math.inf), 0.0, "blow-up status"
            return maxdiff(x[0], y[0]), 1e-8 + 1e-6 * scale_of(x[0]), "max|diff| of the path (1e-6 rel + 1e-8)"
        label = lambda o, w=w, N=N, Lt=Lt, n_out=n_out: f"w={w} N={N} Lt={Lt:g} n_out={n_out} ({o[1]} st)"
        B.case("leaky", "shoot", label,
               lambda run=run: run("numpy"), lambda run=run: run("numba"), chk)


def g_leaky_net(B, ln):
    sizes = [(5, 4, 20)] if B.quick else [(5, 4, 20), (10, 20, 100), (30, 50, 200)]
    for w, N, L in sizes:
        rng = np.random.default_rng(L)
        X, Y = rng.standard_normal((w, N)), rng.standard_normal((w, N))
        Ws = rng.standard_normal((L, w, w + 1)) / math.sqrt(w + 1)
        rho = ln.irregular(L, 0.5)
        Lt, lam = 3.0, 0.1
        tag = f"w={w} N={N} L={L}"
        # tests/test_leaky_net.py: same operations in another order, a few ulps of the largest entry
        # (100 eps there on L = 6; here 100 L eps)
        chk = rel_check(scale_of, 100 * L * EPS, "max|diff| vs 100 L eps max|out|")
        B.case("leaky_net", "forward", tag, lambda: ln.forward(X, Ws, rho, Lt, backend="numpy"),
               lambda: ln.forward(X, Ws, rho, Lt, backend="numba"), chk)
        B.case("leaky_net", "grad", tag, lambda: ln.grad(X, Y, Ws, rho, Lt, lam, backend="numpy"),
               lambda: ln.grad(X, Y, Ws, rho, Lt, lam, backend="numba"), chk)


def g_mlp(B, mlp):
    # App. B networks (theorems/vanrossem/_networks.py): two-point data, widths [1] + [units]*hidden + [1];
    # plus a batch of P = 64 points
    sizes = [(2, 20, 4, 50)] if B.quick else [(2, 50, 4, 300), (2, 100, 20, 100), (64, 100, 4, 100)]
    for P, units, hidden, epochs in sizes:
        rng = np.random.default_rng(P + units)
        X, Y = rng.standard_normal((P, 1)), rng.standard_normal((P, 1))
        widths = [1] + [units] * hidden + [1]
        kw = dict(nonlinearity="leaky_relu", gain=1.0, lr=0.005, epochs=epochs, seed=0,
                  record_every=max(1, epochs // 4))

        def chk(r1, r2, w=widths):
            # tests/test_mlp.py: same operations, BLAS summation order; 1e3 width eps absolute for GD
            d = maxdiff([np.asarray(r1.losses), r1.outputs] + [p for wb in r1.params for p in wb],
                        [np.asarray(r2.losses), r2.outputs] + [p for wb in r2.params for p in wb])
            return d, 1e3 * max(w) * EPS * max(1.0, scale_of(r1.outputs)), "max|diff| of losses, outputs, params"
        B.case("mlp", "train[gd]", f"P={P} {hidden}x{units} {epochs} ep",
               lambda: mlp.train(X, Y, widths, backend="numpy", **kw),
               lambda: mlp.train(X, Y, widths, backend="numba", **kw), chk)


def g_resnet_train(B, rt):
    # ch. 3 large-depth ResNet: X (n, d), q-dim residual stream, m hidden units, depth L
    sizes = [(8, 4, 6, 5, 16, 20)] if B.quick else [(8, 4, 6, 5, 16, 200), (16, 4, 16, 16, 64, 50),
                                                     (32, 8, 32, 32, 256, 10)]
    for n, d, q, m, L, steps in sizes:
        rng = np.random.default_rng(L)
        X, Y = rng.standard_normal((n, d)), rng.standard_normal((n, d))
        A, V, W, Bm = rt.init_weights(d, d, q, m, L, rng, "iid")
        V = 0.5 * rng.standard_normal(V.shape)
        tag = f"n={n} q={q} m={m} L={L}"

        def chk_g(a, b):
            # tests/test_resnet_train.py: 1e3 eps relative (BLAS order through L layers)
            return maxdiff(a[1:], b[1:]), 1e3 * EPS * max(1.0, scale_of(a[1:])), "max|diff| of (dA, dV, dW, dB)"
        B.case("resnet_train", "grads[gelu]", tag, lambda: rt.grads_numpy(X, Y, A, V, W, Bm, "gelu"),
               lambda: rt.grads(X, Y, A, V, W, Bm, "gelu"), chk_g)

        def chk_t(a, b):
            # loss rtol 1e-12, V rtol 1e-10 in the test on 30 steps; 1e-10 relative here
            return (maxdiff([a["loss"], a["V"], a["W"]], [b["loss"], b["V"], b["W"]]),
                    1e-10 * max(1.0, scale_of([a["loss"], a["V"], a["W"]])), "max|diff| of loss, V, W")
        B.case("resnet_train", "train[gelu]", f"{tag} {steps} st",
               lambda: rt.train_numpy(X, Y, A, V, W, Bm, "gelu", 0.02, steps),
               lambda: rt.train(X, Y, A, V, W, Bm, "gelu", 0.02, steps), chk_t)


def g_sinkhorn(B, sk):
    sizes = [(32, 1.0)] if B.quick else [(32, 1.0), (128, 3.0), (512, 1.0)]
    for n, scale in sizes:
        C = scale * np.random.default_rng(n).standard_normal((n, n))

        def chk(a, b, n=n):
            if a.n_iter != b.n_iter or a.converged != b.converged:
                return math.inf, 0.0, f"iterations {a.n_iter} vs {b.n_iter}"
            # tests/test_sinkhorn.py: n eps per half-step, times iterations, over the spectral gap
            s = np.linalg.svd(a.K, compute_uv=False)
            gap = 1 - s[1] if n > 1 else 1.0
            return maxdiff(a.K, b.K), 8 * n * EPS * a.n_iter / gap * a.K.max() + 1e-13, "max|diff| of K"
        B.case("sinkhorn", "sinkhorn", lambda o, n=n, scale=scale: f"n={n} scale={scale:g} ({o.n_iter} it)",
               lambda: sk.sinkhorn(C, tol=1e-12, backend="numpy"), lambda: sk.sinkhorn(C, tol=1e-12, backend="numba"),
               chk)


def g_topk(B, tk):
    B.skip("topk", "solvers/topk.py has no Numba kernel (pure NumPy/Python module): nothing to compare")


GROUPS = [
    ("resnet_ode", "solvers.resnet_ode", g_resnet_ode),
    ("chen", "solvers.chen", g_chen),
    ("twopoint", "solvers.twopoint", g_twopoint),
    ("leaky", "solvers.leaky", g_leaky),
    ("leaky_net", "solvers.leaky_net", g_leaky_net),
    ("mlp", "solvers.mlp", g_mlp),
    ("resnet_train", "solvers.resnet_train", g_resnet_train),
    ("sinkhorn", "solvers.sinkhorn", g_sinkhorn),
    ("topk", "solvers.topk", g_topk),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="best of this many timed runs (default 5)")
    ap.add_argument("--quick", action="store_true", help="one small problem per kernel, 2 repeats")
    ap.add_argument("--json", metavar="PATH", help="also write the rows (and skips) as JSON")
    ap.add_argument("--only", nargs="+", metavar="GROUP", choices=[g[0] for g in GROUPS], help="run these groups only")
    ap.add_argument("--budget", type=float, default=2.0,
                    help="seconds per case and pair of runs before the repeats are cut (default 2)")
    ap.add_argument("--cold", action="store_true", help="empty Numba cache: report true compile times")
    a = ap.parse_args()
    repeat = min(a.repeat, 2) if a.quick else a.repeat
    B = Bench(repeat, a.quick, a.budget)
    t_start = time.perf_counter()
    for group, modname, fn in GROUPS:
        if a.only and group not in a.only:
            continue
        print(f"[{group}]", flush=True)
        try:
            mod = importlib.import_module(modname)
        except Exception as exc:  # noqa: BLE001 -- a module being written elsewhere may be absent or broken
            B.skip(group, f"{modname} does not import: {type(exc).__name__}: {exc}")
            continue
        if group != "topk" and not has_numba_kernel(mod):
            B.skip(group, f"{modname} has no Numba kernel")
            continue
        try:
            fn(B, mod)
        except Exception as exc:  # noqa: BLE001 -- an API that changed under us: report, go on
            B.skip(group, f"failed: {type(exc).__name__}: {exc}")
            traceback.print_exc(limit=3)
    total = time.perf_counter() - t_start

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print()
    print(f"NumPy reference vs Numba kernel, best of {repeat} process-CPU times (OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}, load {load:.1f} on {os.cpu_count()} cores, "
          f"total {total:.0f} s).  Absolute times depend on the load: read the ratios.")
    hdr = (f"{'kernel':<34} {'problem':<36} {'numpy s':>9} {'numba s':>9} {'speed-up':>9} {'wall s-up':>9} "
           f"{'compile s':>9}")
    print(hdr)
    print("-" * len(hdr))
    for r in B.rows:
        k = f"{r['group']}.{r['kernel']}"
        if r["status"] != "ok":
            print(f"{k:<34} {r['size']:<36} {'MISMATCH':>9} ({r['check']}: {r['err']:.3g} > {r['tol']:.3g})")
            continue
        c = "" if r["compile_s"] is None else f"{r['compile_s']:.2f}"
        cr = "-" if r["cpu_ratio"] is None else f"{r['cpu_ratio']:.1f}x"
        print(f"{k:<34} {r['size']:<36} {r['numpy_cpu_s']:>9.4g} {r['numba_cpu_s']:>9.4g} {cr:>9} "
              f"{r['ratio']:>8.1f}x {c:>9}")
    for s in B.skips:
        print(f"{s['group'] + ' (skipped)':<34} {s['reason']}")
    if a.json:
        meta = dict(repeat=repeat, quick=a.quick, cold=a.cold, budget_s=a.budget, total_s=total, loadavg=load,
                    cpus=os.cpu_count(), python=platform.python_version(), numpy=np.__version__,
                    numba=importlib.import_module("numba").__version__,
                    openblas_threads=os.environ.get("OPENBLAS_NUM_THREADS"),
                    note="best-of times in s: *_cpu_s process CPU time (cpu_ratio, the table's speed-up), numpy_s/numba_s "
                         "wall clock (ratio); compile_s in CPU time; absolute times under machine load, read the ratios")
        with open(a.json, "w") as fh:
            json.dump(dict(meta=meta, rows=B.rows, skipped=B.skips), fh, indent=1)
        print(f"wrote {a.json}")
    if B.mismatches:
        print(f"{len(B.mismatches)} case(s) where the backends disagree: not timed", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
