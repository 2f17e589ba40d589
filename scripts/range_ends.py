"""Run every claim's numeric check at the ends of its declared parameter ranges.

For each claim with a numeric check whose default run takes at most ``--cap`` seconds, run
:func:`theorems.runner.run_check` once per declared range end of every float parameter (the
end itself when closed, ``nextafter`` towards the inside when open) and every int parameter,
with the other parameters at their defaults.  A legal value must never give verdict
``error`` (a bug), nor ``refuted`` for the variant that holds (a false refutation): it
certifies, or it is ``inconclusive`` with the reason, or the claim's validator rejects the
combination (ParamError, exit 2 on the command line).

Each run is a forked child of a parent that imported every claim once, killed after
``--cap`` seconds; those runs are listed as skipped.

    python scripts/range_ends.py [--cap 20] [--jobs 2] [--document KEY] [--claim ID ...]
                                 [--json FILE]

Exit 1 when some run ends as ``error`` or a false ``refuted``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import select
import signal
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")


def ends(p):
    """(label, value) for each declared end of a numeric parameter."""
    out = []
    if p.kind == "float":
        if p.low is not None:
            v = math.nextafter(float(p.low), math.inf) if p.low_open else float(p.low)
            out.append(("low" + ("+" if p.low_open else ""), v))
        if p.high is not None:
            v = math.nextafter(float(p.high), -math.inf) if p.high_open else float(p.high)
            out.append(("high" + ("-" if p.high_open else ""), v))
    elif p.kind == "int":
        if p.low is not None:
            out.append(("low", int(p.low)))
        if p.high is not None:
            out.append(("high", int(p.high)))
    return [(lab, v) for lab, v in out if v != p.default]


def _child(check, given, wfd):
    from theorems.params import ParamError
    from theorems.runner import run_check
    try:
        rec = run_check(check, given)
        res = {"verdict": rec["verdict"], "message": rec["message"][:300],
               "tb": (rec["values"].get("traceback") or "")[-600:] if isinstance(rec["values"], dict) else "",
               "seconds": rec["seconds"]}
    except ParamError as exc:
        res = {"verdict": "rejected", "message": str(exc).splitlines()[0][:300]}
    except BaseException as exc:  # noqa: BLE001 - report, never hang the parent
        res = {"verdict": "crash", "message": f"{type(exc).__name__}: {exc}"[:300]}
    os.write(wfd, json.dumps(res).encode())
    os.close(wfd)
    os._exit(0)


class Pool:
    """Fork one child per run, at most ``jobs`` at a time, each killed after ``cap`` seconds."""

    def __init__(self, jobs, cap):
        self.jobs, self.cap, self.running = jobs, cap, {}

    def submit(self, key, check, given, done):
        while len(self.running) >= self.jobs:
            self.poll(done)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(check, given, w)
        os.close(w)
        self.running[r] = (pid, key, time.monotonic(), bytearray())

    def poll(self, done, timeout=0.2):
        if not self.running:
            return
        ready, _, _ = select.select(list(self.running), [], [], timeout)
        for r in ready:
            pid, key, t0, buf = self.running[r]
            chunk = os.read(r, 1 << 16)
            if chunk:
                buf.extend(chunk)
                continue
            os.close(r)
            os.waitpid(pid, 0)
            del self.running[r]
            try:
                res = json.loads(bytes(buf).decode())
            except ValueError:
                res = {"verdict": "crash", "message": "child died without a result"}
            res["wall"] = round(time.monotonic() - t0, 2)
            done(key, res)
        now = time.monotonic()
        for r, (pid, key, t0, _) in list(self.running.items()):
            if now - t0 > self.cap:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(r)
                del self.running[r]
                done(key, {"verdict": "skipped", "message": f"took more than {self.cap:g} s", "wall": self.cap})

    def drain(self, done):
        while self.running:
            self.poll(done)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cap", type=float, default=20.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--document", default=None)
    ap.add_argument("--claim", action="append", default=[])
    ap.add_argument("--json", default=None, help="write every run's result here")
    ap.add_argument("--floors", action="store_true",
                    help="for each float parameter whose low end fails, also run the decades 1e-300 .. 1e-1 above "
                         "it (below the default) and print the smallest from which every decade passes: a floor "
                         "to declare, or the place where the check must say inconclusive")
    args = ap.parse_args(argv)

    from theorems.registry import all_claims, get_claim
    claims = [get_claim(i) for i in args.claim] if args.claim else all_claims(args.document)
    claims = [c for c in claims if any(k.kind == "numeric" for k in c.checks)]
    # warm: import whatever the checks import lazily, once, in the parent
    results: dict = {}

    def done(key, res):
        results[key] = res
        cid, name, lab, val = key
        if lab != "decade" and res["verdict"] not in ("certified", "inconclusive", "rejected"):
            print(f"{res['verdict']:<9} {cid} {name}={val!r} ({lab}) {res.get('wall', '')}s: {res['message'][:200]}",
                  flush=True)

    pool = Pool(args.jobs, args.cap)
    t0 = time.monotonic()
    for c in claims:  # default runs first: a claim whose default run is not cheap is skipped
        pool.submit((c.id, "<default>", "", None), c.check("numeric"), {}, done)
    pool.drain(done)
    print(f"default runs: {time.monotonic() - t0:.0f} s", flush=True)
    for c in claims:
        d = results[(c.id, "<default>", "", None)]
        if d["verdict"] in ("skipped", "crash"):
            continue
        chk = c.check("numeric")
        for p in c.params:
            if p.name in chk.fixed:
                continue
            for lab, v in ends(p):
                pool.submit((c.id, p.name, lab, v), chk, {p.name: v}, done)
    pool.drain(done)

    if args.floors:
        by_id = {c.id: c for c in claims}
        failing = sorted({(k[0], k[1]) for k, r in results.items() if k[2].startswith("low")
                          and r["verdict"] in ("error", "crash", "refuted")})
        decades = [10.0 ** e for e in (-300, -200, -100, -50, -30, -20, -15, -12, -10, -8, -6, -5, -4, -3, -2, -1)]
        for cid, name in failing:
            c = by_id[cid]
            prm = {q.name: q for q in c.params}[name]
            if prm.kind != "float":
                continue
            for v in decades:
                if v > prm.low and (prm.high is None or v <= prm.high) and v < abs(prm.default or 1):
                    pool.submit((cid, name, "decade", v), c.check("numeric"), {name: v}, lambda k, r: results.__setitem__(k, r))
        pool.drain(lambda k, r: results.__setitem__(k, r))
        print("\nfloors (smallest decade from which every decade up to the default passes):")
        for cid, name in failing:
            runs = sorted((k[3], r) for k, r in results.items() if k[:3] == (cid, name, "decade"))
            floor = None
            for v, r in reversed(runs):
                if r["verdict"] in ("certified", "inconclusive", "rejected"):
                    floor = v
                else:
                    break
            seq = " ".join(f"{v:.0e}:{r['verdict'][:4]}" for v, r in runs)
            print(f"  {cid} {name}: floor {floor!r}   [{seq}]")

    bad = {k: r for k, r in results.items() if k[2] != "decade" and r["verdict"] in ("error", "crash", "refuted")}
    skipped = {k: r for k, r in results.items() if r["verdict"] == "skipped"}
    tally: dict = {}
    for k, r in results.items():
        if k[2] == "decade":
            continue
        tally[r["verdict"]] = tally.get(r["verdict"], 0) + 1
    print(f"\n{len(claims)} claims, {len(results)} runs in {time.monotonic() - t0:.0f} s: {tally}")
    if skipped:
        print("skipped (over the cap):")
        for (cid, name, lab, val) in sorted(skipped, key=str):
            print(f"  {cid} {name}={val!r} ({lab})")
    if bad:
        print("error / refuted at a legal value:")
        for (cid, name, lab, val), r in sorted(bad.items(), key=str):
            print(f"  {r['verdict']:<8} {cid} {name}={val!r} ({lab}): {r['message'][:160]}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([{"claim": k[0], "param": k[1], "end": k[2], "value": k[3], **r} for k, r in results.items()],
                      fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
