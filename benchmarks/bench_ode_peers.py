"""The Numba Dormand-Prince kernels against ``scipy.integrate.solve_ivp`` (RK45 and DOP853) at equal final
error, as ratios measured in one run.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_ode_peers.py [--repeat 5] [--quick] [--json PATH]
                                                                [--only twopoint leaky dln] [--targets 1e-6 1e-9]

Problems (sizes of the state over about two decades):

* ``twopoint``  the lifted two-point system (``solvers.twopoint``, dim Y = m, state 1 + m) on ``[0, 50]`` from
                the consistent start of ``bench_solvers.py``; ours: ``twopoint.integrate_lifted`` (numba).
* ``leaky``     Hamilton's equations of the leaky ResNet (``solvers.leaky``, state 2 w N + 1) on ``p in [0, 1]``
                with 100 output points (the shooting of ``theorems/jacot/sec2_4_hamiltonian.py``); ours:
                ``leaky.shoot`` (numba; when ``rk.solve_switching`` exists, one kernel call with event location at
                the ReLU walls ``A_ij = 0``, Dormand-Prince 5(4); before it, one kernel call and a fresh ``h0`` per
                output interval); the peers get the same outputs through ``t_eval`` (their dense output).
* ``dln``       the deep-linear-network gradient flow (``solvers.dln``, widths d^4, state 3 d^2) on ``[0, 1]``;
                ours: ``rk.dopri5(dln.dln_rhs, ...)``.

Columns ``inplace`` (when ``solvers.rhs_inplace`` exists): the in-place right-hand sides of that module in the
allocation-free loop of ``solvers.rk`` (leaky and two-point through ``rk.solve_dopri5`` with ``t_eval``: one
kernel call per path, the step size carried across the output points).  Columns ``dop853`` (when
``rk.solve_dop853`` exists): the same in-place right-hand sides and calls with the Dormand-Prince 8(5,3) kernel
(``rk.solve_dop853``, same ``h0``, ``max_steps``, ``t_eval`` and hold-after-reject as the ``inplace`` call; its
default hold for the two-point and DLN problems, as Hairer's DOP853 and SciPy's): an order-8 method against the
peers' order-8 one at tight targets; for ``leaky``, when ``rk.solve_switching`` exists, the DOP853 kernel with the
event location of ``leaky.shoot`` (``rhs_inplace.hamilton_rhs_sw``), the ``inplace`` column staying the DP5 kernel
that steps over the walls.

Method.  A reference end state by DOP853 at rtol 1e-13 (atol 1e-16).  For each target final error ``E`` (max
norm relative to ``max(1, |y_ref|)``) and each solver, tolerances ``rtol = 10^-3, 10^-3.5, ..., 10^-13``
(``atol = 1e-3 rtol``) are tried from loose to tight (for the next, tighter target from the one kept for the
previous target on) and the loosest whose final error is ``<= E`` is kept:
each solver at its own cheapest setting that reaches the same accuracy.  The kept runs are then timed
interleaved (ours, inplace, dop853, RK45, DOP853, ours, ...), best of ``--repeat`` process-CPU times, each time
averaged over enough calls to last >= 20 ms.  The peers call the jitted out-of-place right-hand side (faster per
call than the NumPy reference).  The error each reached is printed beside its time; ``RK45/ours`` etc. are
time ratios (> 1: ours faster).  Absolute times depend on the load of the machine: read the ratios.
"""
import argparse
import json
import math
import os
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from scipy.integrate import solve_ivp  # noqa: E402

RTOLS = [10.0 ** (-k / 2) for k in range(6, 27)]


def _cpu(f, min_s=0.02):
    """Process time of one call of ``f``, averaged over enough calls to last ``min_s``."""
    t = time.process_time()
    f()
    one = time.process_time() - t
    reps = max(1, int(min_s / max(one, 1e-7)))
    if reps == 1:
        return one
    t = time.process_time()
    for _ in range(reps):
        f()
    return (time.process_time() - t) / reps


def _err(y, ref):
    return float(np.max(np.abs(np.asarray(y) - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def problems(quick):
    from solvers import dln, leaky, rk, twopoint as tp
    ri = None
    if hasattr(rk, "solve_dopri5"):            # absent before the in-place protocol (the 'before' tables)
        from solvers import rhs_inplace as ri
    out = []
    # two-point: the consistent start of bench_solvers.py (a = 0.25, b = 1, tau_h = 1, tau_y = 2)
    u0, v0, w0, a, b, th, ty = 0.01, 0.001, 0.0, 0.25, 1.0, 1.0, 2.0
    for m in ((2, 20) if quick else (2, 20, 200)):
        dY = np.zeros(m)
        dY[0] = math.sqrt(b)
        z0 = tp.lift_from_uvw(u0, v0, w0, math.sqrt(b), m)
        P = tp.lift_params(a, th, ty, dY)
        fun = (lambda P: (lambda t, z: tp.lift_rhs(t, z, (P,))))(P)
        ours = (lambda z0, P: (lambda rt, at: tp.integrate_lifted(z0, P, 50.0, "numba", rtol=rt, atol=at).y))(z0, P)
        ip = None if ri is None else (lambda z0, P: (lambda rt, at: ri.integrate_lifted(z0, P, 50.0, rtol=rt, atol=at).y))(z0, P)
        d8 = None if ri is None or not hasattr(rk, "solve_dop853") else (
            lambda z0, P: (lambda rt, at: rk.solve_dop853(ri.lift_rhs, 0.0, z0, 50.0, (P,), rtol=rt, atol=at,
                                                          h0=50.0 * 1e-3, max_steps=2_000_000).y))(z0, P)
        out.append(("twopoint", f"m={m} (dim {m + 1}) t1=50", fun, z0, (0.0, 50.0), None, ours, ip, d8))
    # leaky shooting: w x N, Lt; B scale 0.1 (bench_solvers.py / the claim's defaults)
    for w, N, Lt in (((3, 2, 2.0), (6, 5, 3.0)) if quick else ((3, 2, 2.0), (6, 5, 3.0), (20, 25, 1.0))):
        rng = np.random.default_rng(w * 100 + N)
        A0, B0 = rng.standard_normal((w, N)), 0.1 * rng.standard_normal((w, N))
        y0 = leaky.pack(A0, B0)
        ps = np.linspace(0.0, 1.0, 101)
        fun = (lambda w, N, Lt: (lambda t, y: leaky.hamilton_rhs(t, y, (w, N, Lt, 0))))(w, N, Lt)

        def ours(rt, at, A0=A0, B0=B0, Lt=Lt):
            path, _ = leaky.shoot(A0, B0, Lt, n_out=100, rtol=rt, atol=at)
            return path[-1] if path is not None else np.full(y0.shape, np.nan)
        ip = None if ri is None else (lambda A0, B0, Lt: (lambda rt, at: ri.shoot(A0, B0, Lt, n_out=100, rtol=rt,
                                                                                  atol=at).y))(A0, B0, Lt)
        d8 = None if ri is None or not hasattr(rk, "solve_dop853") else (
            lambda y0, w, N, Lt, ps: (lambda rt, at: rk.solve_dop853(
                ri.hamilton_rhs, 0.0, y0, 1.0, ri.hamilton_args(w, N, Lt, 0), rtol=rt, atol=at, h0=1e-4,
                max_steps=200_000, t_eval=ps[1:], hold_after_reject=True).y))(y0, w, N, Lt, ps)
        if hasattr(rk, "solve_switching"):
            def d8(rt, at, y0=y0, w=w, N=N, Lt=Lt, ps=ps):
                a = ri.hamilton_args_sw(w, N, Lt, 0)
                return rk.solve_switching(ri.hamilton_rhs_sw, 0.0, y0, 1.0, a, a[5], rtol=rt, atol=at, h0=1e-4,
                                          max_steps=200_000, t_eval=ps[1:], method="dop853", blowup=1e6,
                                          nchk=2 * w * N).y
        out.append(("leaky", f"w={w} N={N} Lt={Lt:g} (dim {y0.size}) 100 out", fun, y0, (0.0, 1.0), ps, ours, ip,
                    d8))
    # DLN gradient flow
    for d in ((3, 6) if quick else (3, 6, 15)):
        widths = [d] * 4
        rng = np.random.default_rng(d)
        Ws = dln.random_layers(widths, rng)
        Y = rng.standard_normal((d, d))
        args = dln.make_args(widths, Y)
        y0 = dln.pack(Ws)
        fun = (lambda args: (lambda t, y: dln.dln_rhs(t, y, args)))(args)
        ours = (lambda y0, args: (lambda rt, at: rk.dopri5(dln.dln_rhs, 0.0, y0, 1.0, args, rtol=rt, atol=at)[0]))(y0, args)
        ip = d8 = None
        if ri is not None:
            ipa = ri.dln_args(widths, Y)
            ip = (lambda y0, ipa: (lambda rt, at: rk.solve_dopri5(ri.dln_rhs, 0.0, y0, 1.0, ipa, rtol=rt, atol=at).y))(y0, ipa)
            if hasattr(rk, "solve_dop853"):
                d8 = (lambda y0, ipa: (lambda rt, at: rk.solve_dop853(ri.dln_rhs, 0.0, y0, 1.0, ipa, rtol=rt,
                                                                      atol=at).y))(y0, ipa)
        out.append(("dln", f"d={d} N=3 (dim {y0.size}) T=1", fun, y0, (0.0, 1.0), None, ours, ip, d8))
    return out


def run(repeat, quick, targets, only):
    rows = []
    for group, label, fun, y0, span, t_eval, ours, ip, d8 in problems(quick):
        if only and group not in only:
            continue
        ref = solve_ivp(fun, span, y0, method="DOP853", rtol=1e-13, atol=1e-16).y[:, -1]
        solvers = {"ours": ours, "inplace": ip, "dop853": d8,
                   "RK45": lambda rt, at, m="RK45": solve_ivp(fun, span, y0, method=m, rtol=rt, atol=at,
                                                               t_eval=t_eval).y[:, -1],
                   "DOP853": lambda rt, at, m="DOP853": solve_ivp(fun, span, y0, method=m, rtol=rt, atol=at,
                                                                   t_eval=t_eval).y[:, -1]}
        for f in solvers.values():            # compile / load the kernels
            if f is not None:
                f(1e-3, 1e-6)
        start = {}                            # targets in decreasing order: resume each sweep where it stopped
        for E in sorted(targets, reverse=True):
            picks = {}
            for name, f in solvers.items():
                if f is None:
                    continue
                for rt in RTOLS[start.get(name, 0):]:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        e = _err(f(rt, 1e-3 * rt), ref)
                    if e <= E:
                        picks[name] = (rt, e)
                        start[name] = RTOLS.index(rt)
                        break
            best = {n: math.inf for n in picks}
            for _ in range(repeat):
                for n, (rt, _) in picks.items():
                    best[n] = min(best[n], _cpu(lambda n=n, rt=rt: solvers[n](rt, 1e-3 * rt)))
            row = {"problem": group, "size": label, "target": E}
            for n in ("ours", "inplace", "dop853", "RK45", "DOP853"):
                if n in picks:
                    row[f"{n}_ms"] = best[n] * 1e3
                    row[f"{n}_err"] = picks[n][1]
                    row[f"{n}_rtol"] = picks[n][0]
            for peer in ("RK45", "DOP853"):
                for n in ("ours", "inplace", "dop853"):
                    if n in picks and peer in picks:
                        row[f"{peer}/{n}"] = best[peer] / best[n]
            rows.append(row)
            print(_fmt_row(row), flush=True)
    return rows


def _fmt_row(r):
    def g(k, f="{:.3g}"):
        return f.format(r[k]) if k in r else "-"
    return (f"{r['problem']:<8} {r['size']:<34} E<={r['target']:.0e} | ours {g('ours_ms')} ms ({g('ours_err', '{:.1e}')}) "
            f"inplace {g('inplace_ms')} ms ({g('inplace_err', '{:.1e}')}) dop853 {g('dop853_ms')} ms "
            f"({g('dop853_err', '{:.1e}')}) | RK45 {g('RK45_ms')} ms "
            f"({g('RK45_err', '{:.1e}')}) DOP853 {g('DOP853_ms')} ms ({g('DOP853_err', '{:.1e}')}) | "
            f"RK45/ours {g('RK45/ours', '{:.1f}')}x DOP853/ours {g('DOP853/ours', '{:.1f}')}x "
            f"RK45/inplace {g('RK45/inplace', '{:.1f}')}x DOP853/inplace {g('DOP853/inplace', '{:.1f}')}x "
            f"RK45/dop853 {g('RK45/dop853', '{:.1f}')}x DOP853/dop853 {g('DOP853/dop853', '{:.1f}')}x")


def table(rows):
    hdr = (f"{'problem':<8} {'size':<34} {'E':>6} {'ours ms':>9} {'err':>8} {'inpl ms':>9} {'err':>8} {'d853 ms':>9} "
           f"{'err':>8} {'RK45 ms':>9} {'err':>8} {'DOP853 ms':>9} {'err':>8} {'RK45/ours':>9} {'853/ours':>9} "
           f"{'RK45/inpl':>9} {'853/inpl':>9} {'RK45/d853':>9} {'853/d853':>9}")
    lines = [hdr, "-" * len(hdr)]
    for r in rows:
        def g(k, f="{:.3g}"):
            return f.format(r[k]) if k in r else "-"
        lines.append(f"{r['problem']:<8} {r['size']:<34} {r['target']:>6.0e} {g('ours_ms'):>9} {g('ours_err', '{:.1e}'):>8} "
                     f"{g('inplace_ms'):>9} {g('inplace_err', '{:.1e}'):>8} {g('dop853_ms'):>9} "
                     f"{g('dop853_err', '{:.1e}'):>8} {g('RK45_ms'):>9} {g('RK45_err', '{:.1e}'):>8} "
                     f"{g('DOP853_ms'):>9} {g('DOP853_err', '{:.1e}'):>8} {g('RK45/ours', '{:.1f}'):>9} "
                     f"{g('DOP853/ours', '{:.1f}'):>9} {g('RK45/inplace', '{:.1f}'):>9} {g('DOP853/inplace', '{:.1f}'):>9} "
                     f"{g('RK45/dop853', '{:.1f}'):>9} {g('DOP853/dop853', '{:.1f}'):>9}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the two smaller sizes of each problem")
    ap.add_argument("--json", default=None, metavar="PATH")
    ap.add_argument("--only", nargs="+", choices=["twopoint", "leaky", "dln"])
    ap.add_argument("--targets", nargs="+", type=float, default=[1e-6, 1e-9])
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = run(a.repeat, a.quick, a.targets, a.only)
    load = os.getloadavg()[0]
    print(f"\nDormand-Prince 5(4) and 8(5,3) kernels vs solve_ivp at equal final error; best of {a.repeat} interleaved CPU times "
          f"(OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, load {load:.1f} on {os.cpu_count()} "
          f"cores, {time.perf_counter() - t0:.0f} s)")
    print(table(rows))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rows": rows, "load": load, "repeat": a.repeat}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
