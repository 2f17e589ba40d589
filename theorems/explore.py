"""``theorems explore ID``: an interactive, line-based session on one claim.

Plain prompts on stdin/stdout (:class:`cmd.Cmd`), so it works over SSH, in a pipe and in a
test; readline history and tab completion when the terminal has them.  The session keeps

* the parameters the user set (``set``/``reset``/``seed``; everything else takes its default,
  and a variant's ``fixed`` values, as ``theorems check`` does),
* the *certified point*: the parameters and record of the last evaluation that certified,
* the *counterexample*: the record of the last evaluation that was refuted (``falsify`` or ``run``),

and ``path`` evaluates the checks along the segment between the last two.  ``save`` writes a
result record that ``theorems check ID --variant V --params-file FILE`` replays.

Use it from Python with custom streams::

    Explorer(get_claim("menon.balanced_invariance"), stdin=io.StringIO("show\\nrun\\n"),
             stdout=out).cmdloop()
"""
from __future__ import annotations

import cmd
import json
import math
import os
import shlex
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .claim import Check, Claim
from .params import ParamError
from .registry import get_claim
from .runner import check_backend
from .vocabulary import Outcome
from .params import parse_assignment
from .record import dumps, jsonable, make_record

__all__ = ["Explorer", "cmd_explore", "MATERIALIZERS", "split_assignments", "interpolate", "sparkline"]

HISTORY_FILE = os.environ.get("THEOREMS_HISTORY", os.path.join(os.path.expanduser("~"), ".theorems_history"))
#: parameters whose integer value is a key (a random draw), not a coordinate: never interpolated
KEY_PARAMS = ("seed",)
#: ``falsify --search``: seconds of shrinking after the first counterexample (the search stays quick)
SHRINK_SECONDS = 5.0


# ---------------------------------------------------------------------------
# materialisers: the instance a seed draws, made explicit, so that a path can interpolate it.
#
# ``MATERIALIZERS[claim_id](claim, params) -> (params', covered, note)`` returns the same instance
# with the seed-drawn data given explicitly (``params'``), the parameter names that no longer
# matter once it is explicit (``covered``), or ``(None, (), reason)`` when that is impossible.
# ``path`` verifies that the materialised endpoints give the same verdicts as the originals.


def _menon_invariance(claim: Claim, params: dict):
    from theorems.menon import invariance as m
    p = claim.resolve(params)
    if p.energy == "completion":
        return None, (), ("energy=completion draws its mask from the seed after the layers, so the drawn "
                          "instance cannot be given explicitly")
    _, Ws, args = m.instance(p)
    out = dict(params, layers=[w.tolist() for w in Ws], Y=np.asarray(args[1]).tolist())
    return out, ("seed", "init", "d", "N", "widths"), "layers and Y drawn from the seed, made explicit"


MATERIALIZERS: dict[str, Callable] = {"menon.balanced_invariance": _menon_invariance}


# ---------------------------------------------------------------------------
# small pure helpers (tested on their own)


def split_assignments(text: str) -> list[str]:
    """Split ``a=1 b=[[1, 2], [3, 4]] energy=quartic`` into assignments: whitespace separates
    assignments only outside brackets and quotes."""
    out, cur, depth, quote = [], [], 0, None
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch.isspace() and depth <= 0:
            if cur:
                out.append("".join(cur))
                cur = []
            continue
        cur.append(ch)
    if cur:
        out.append("".join(cur))
    # a token without '=' continues the previous value (`T= 0.5`)
    merged: list[str] = []
    for tok in out:
        if merged and ("=" not in tok or merged[-1].endswith("=")):
            merged[-1] += tok
        else:
            merged.append(tok)
    return merged


def _is_num(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _shape(v):
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return None
    return a.shape if a.dtype != object else None


def interpolate(kind: str, a: Any, b: Any, t: float, name: str = "") -> tuple[Any, str]:
    """The value at ``t`` in [0, 1] between ``a`` and ``b``, and how: ``same``, ``linear``,
    ``rounded`` (integers), or ``switch`` (not interpolable: ``a`` before the midpoint, ``b`` from it)."""
    if _jsonable_eq(a, b):
        return a, "same"
    switch = (a if t < 0.5 else b), "switch"
    if name in KEY_PARAMS or a is None or b is None:
        return switch
    if kind == "float" and _is_num(a) and _is_num(b):
        return float(a) + t * (float(b) - float(a)), "linear"
    if kind == "int" and _is_num(a) and _is_num(b):
        return int(math.floor(a + t * (b - a) + 0.5)), "rounded"
    if kind in ("matrix", "vector"):
        A, B = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if A.shape != B.shape:
            return switch
        v = A + t * (B - A)
        if np.all(A == np.round(A)) and np.all(B == np.round(B)) and kind == "vector":
            return np.floor(v + 0.5).tolist(), "rounded"
        return v.tolist(), "linear"
    if kind == "matrices":
        if len(a) != len(b) or any(_shape(x) != _shape(y) for x, y in zip(a, b)):
            return switch
        return [(np.asarray(x, float) + t * (np.asarray(y, float) - np.asarray(x, float))).tolist()
                for x, y in zip(a, b)], "linear"
    return switch


def _jsonable_eq(a, b) -> bool:
    return json.dumps(jsonable(a), sort_keys=True) == json.dumps(jsonable(b), sort_keys=True)


RAMP = "_.-~=+*#@"


def sparkline(ratios: list[float | None]) -> str:
    """log10(residual/tolerance) as one ASCII character per point, scaled to the data; '?' where
    there is no ratio (inconclusive, error, invalid)."""
    logs = [math.log10(max(r, 1e-300)) if r is not None and math.isfinite(r) else
            (300.0 if r is not None and r == math.inf else None) for r in ratios]
    vals = [x for x in logs if x is not None]
    if not vals:
        return "?" * len(ratios)
    lo, hi = min(vals), max(vals)
    out = []
    for x in logs:
        if x is None:
            out.append("?")
        elif hi - lo < 1e-12:
            out.append(RAMP[-1] if x > 0 else RAMP[0])
        else:
            out.append(RAMP[int(round((x - lo) / (hi - lo) * (len(RAMP) - 1)))])
    return "".join(out)


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.3g}" if abs(x) >= 1e-3 or x == 0 else f"{float(x):.2e}"
    return _short(x)


def _short(v, width: int = 90) -> str:
    """A value on one line: matrices as their shape, long JSON truncated."""
    j = jsonable(v)
    if isinstance(j, list) and j and isinstance(j[0], list):
        shp = _shape(j)
        if shp is not None and len(shp) == 2 and shp[0] * shp[1] > 9:
            return f"<{shp[0]}x{shp[1]} matrix>"
        if shp is None or len(shp) == 3:  # a list of matrices
            shapes = [_shape(m) for m in j]
            if all(s is not None and len(s) == 2 for s in shapes) and sum(s[0] * s[1] for s in shapes) > 9:
                return "<matrices " + ", ".join(f"{s[0]}x{s[1]}" for s in shapes) + ">"
    s = json.dumps(j)
    return s if len(s) <= width else s[: width - 3] + "..."


def _ratio(rec: dict) -> float | None:
    r, t = rec.get("residual"), rec.get("tolerance")
    if not _is_num(r) or not _is_num(t) or rec.get("verdict") in ("inconclusive", "error"):
        return None
    r, t = float(r), float(t)
    if t > 0:
        return r / t
    return 0.0 if r == 0 else math.inf


# ---------------------------------------------------------------------------
class Explorer(cmd.Cmd):
    """The interactive session on one claim; ``stdin``/``stdout`` may be any text streams."""

    intro_hint = "type help for the commands, quit (or Ctrl-D) to leave"

    def __init__(self, claim: Claim, stdin=None, stdout=None, profile: str | None = None,
                 echo: bool | None = None):
        interactive = stdin is None and sys.stdin.isatty()
        super().__init__(stdin=stdin, stdout=stdout)
        self.use_rawinput = interactive
        if not interactive:
            self.completekey = None  # type: ignore[assignment]
        self.echo = (not interactive) if echo is None else echo
        self.claim = claim
        self.profile = profile
        self.given: dict = {}              # what the user set; the rest are defaults / fixed
        self.certified: dict | None = None  # record of the last certified evaluation
        self.cex: dict | None = None        # record of the current counterexample
        self.last: dict | None = None       # the last record produced
        self.prompt = f"{claim.id}> "

    # -- plumbing -------------------------------------------------------
    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")

    def error(self, text: str) -> None:
        self.say(f"error: {text}")

    def preloop(self) -> None:
        c = self.claim
        self.say(f"exploring {c.id} ({c.label}, {c.status}): {c.title}")
        self.say(self.intro_hint)

    def precmd(self, line: str) -> str:
        if self.echo and line != "EOF":
            self.say(line.rstrip("\n"))
        return line

    def onecmd(self, line: str) -> bool:
        try:
            return super().onecmd(line)
        except ParamError as exc:
            self.error(str(exc).splitlines()[0])
        except KeyboardInterrupt:
            self.say("interrupted")
        except Exception as exc:  # a bug in a check or in here must not end the session
            self.error(f"{type(exc).__name__}: {exc}")
            if os.environ.get("THEOREMS_DEBUG"):
                self.say(traceback.format_exc())
        return False

    def cmdloop(self, intro=None) -> None:
        while True:
            try:
                super().cmdloop(intro)
                return
            except KeyboardInterrupt:  # Ctrl-C at the prompt: a fresh prompt, not an exit
                self.say("^C (quit or Ctrl-D to leave)")
                intro = ""
                self.preloop = lambda: None  # type: ignore[method-assign]

    def emptyline(self) -> bool:  # an empty line does nothing (cmd.Cmd would repeat the last command)
        return False

    def default(self, line: str) -> bool:
        self.error(f"unknown command {line.split()[0]!r} (type help)")
        return False

    # -- state helpers ----------------------------------------------------
    def _variants(self) -> dict[str, Check]:
        return self.claim.variants()

    def _check(self, variant: str | None) -> Check:
        vs = self._variants()
        if not vs:
            kinds = sorted({c.kind for c in self.claim.checks}) or ["none"]
            raise ParamError(f"{self.claim.id} has no numeric check to run (its checks: {', '.join(kinds)})")
        v = variant or self.claim.true_variant
        if v not in vs:
            raise ParamError(f"unknown variant {v!r} (known: {', '.join(vs)})")
        return vs[v]

    def _falsifiers(self) -> list[Check]:
        return [c for c in self.claim.checks if c.kind == "falsifier" and c.func is not None]

    def _resolve(self, check: Check | None = None, given: dict | None = None):
        given = self.given if given is None else given
        fixed = check.fixed if check is not None and check.kind in ("numeric", "falsifier", "property") else {}
        return self.claim.resolve({**fixed, **given})

    def _evaluate(self, check: Check, given: dict, backend: str = "numpy") -> dict:
        """The check at exactly these parameters (no search), as a result record."""
        params = self._resolve(check, given)
        check_backend(check, backend)
        params.backend = backend
        t0 = time.perf_counter()
        try:
            out = check.evaluate(params)
        except ParamError:
            raise
        except Exception as exc:
            out = Outcome(verdict="error", message=f"{type(exc).__name__}: {exc}",
                          values={"traceback": traceback.format_exc(limit=-3)[-2000:]})
        return make_record(check, params, out, backend=out.backend or backend,
                           seconds=time.perf_counter() - t0)

    def _remember(self, rec: dict) -> str:
        self.last = rec
        if rec["verdict"] == "certified":
            self.certified = rec
            return "  (now the certified point)"
        if rec["verdict"] == "refuted":
            self.cex = rec
            return "  (now the current counterexample)"
        return ""

    def _print_record(self, rec: dict, expect: str) -> None:
        ratio = _ratio(rec)
        flag = "" if rec["verdict"] == expect else f"   (this variant is expected to be {expect})"
        self.say(f"{rec['check']}[{rec['variant']}]: {rec['verdict'].upper()}{flag}")
        if rec["residual"] is not None or rec["tolerance"] is not None:
            self.say(f"  residual {_fmt(rec['residual'])}  tolerance {_fmt(rec['tolerance'])}"
                     + (f"  residual/tolerance {_fmt(ratio)}" if ratio is not None else "")
                     + f"   ({rec['seconds']:.2f} s, {rec['backend']})")
        if rec["message"]:
            self.say(f"  {rec['message']}")
        for k, v in (rec["values"] or {}).items():
            if k == "traceback":
                if rec["verdict"] == "error":
                    self.say("  " + str(v).strip().splitlines()[-1])
                continue
            self.say(f"  {k} = {_short(v)}")

    def _diff(self, params: dict, base: dict | None = None) -> str:
        """The parameters of ``params`` that differ from ``base`` (the defaults when None)."""
        base = base if base is not None else self.claim.resolve({}).to_json()
        d = [f"{k}={_short(v, 40)}" for k, v in params.items() if not _jsonable_eq(v, base.get(k))]
        return " ".join(d) if d else "(the defaults)"

    # -- commands ---------------------------------------------------------
    def do_show(self, arg: str) -> None:
        """show: the statement, location, status, parameters (current value, range) and checks."""
        c = self.claim
        d = c.describe()
        loc = d["location"]
        self.say(f"{c.id}: {c.title}")
        self.say(f"  {c.label}  (document {c.document}: section {loc['section'] or '-'}, "
                 f"equation {loc['equation'] or '-'}, lines {loc['lines'][0]}-{loc['lines'][1]} of {loc['seed']})")
        self.say(f"  status: {c.status}")
        self.say(f"  statement: {c.statement}")
        if c.corrected:
            self.say(f"  corrected: {c.corrected}")
        if c.notes and arg.strip() == "notes":
            self.say(f"  notes: {c.notes}")
        try:
            cur = self._resolve(None).to_json()
        except ParamError as exc:  # cannot happen: set validates
            cur = {}
            self.error(str(exc))
        self.say("  parameters (* = set in this session):")
        w = max((len(p.name) for p in c.params), default=4)
        for p in c.params:
            mark = "*" if p.name in self.given else " "
            bounded = p.kind in ("int", "float") or (p.kind == "vector" and (p.low, p.high) != (None, None))
            rng = p._range_text() if bounded else (
                "{" + ", ".join(p.choices) + "}" if p.choices else "")
            extra = f" search {p.search[0]}..{p.search[1]}" if p.search and len(p.search) == 2 else ""
            dflt = "" if p.name not in self.given else f" default {_short(p.default, 20)}"
            self.say(f"   {mark}{p.name:<{w}} = {_short(cur.get(p.name), 36):<12} {p.kind} {rng}{extra}{dflt}"
                     + (f"  - {p.doc}" if p.doc else ""))
        self.say("  checks:")
        for ch in c.checks:
            bits = []
            if ch.kind in ("numeric", "falsifier") and ch.backends != ("numpy",):
                bits.append("backends " + ",".join(ch.backends))
            if ch.search:
                bits.append("search over " + ",".join(ch.search))
            if ch.over:
                bits.append("draws " + ",".join(ch.over))
            if ch.fixed:
                bits.append("fixed " + " ".join(f"{k}={_short(v, 20)}" for k, v in ch.fixed.items()))
            if ch.slow:
                bits.append("slow")
            tail = f" [{'; '.join(bits)}]" if bits else ""
            self.say(f"    {ch.nodeid:<28} expect {ch.expect:<9}{tail}  {ch.description}")
        if self.certified:
            self.say(f"  certified point: [{self.certified['variant']}] {self._diff(self.certified['params'])}")
        if self.cex:
            self.say(f"  counterexample:  [{self.cex['variant']}] {self._diff(self.cex['params'])}")

    def do_set(self, arg: str) -> None:
        """set NAME=JSON [NAME=JSON ...]: change parameters (validated; nothing changes on an error)."""
        toks = split_assignments(arg)
        if not toks:
            self.error("set expects NAME=JSON, e.g. set d=2 T=0.5 energy=quartic")
            return
        new = dict(self.given)
        for tok in toks:
            name, value = parse_assignment(tok)
            new[name] = value
        self.claim.resolve(new)  # raises ParamError -> one line, state unchanged
        self.given = new
        self.say("  " + " ".join(f"{n}={_short(new[n], 40)}" for n in (parse_assignment(t)[0] for t in toks)))

    def do_reset(self, arg: str) -> None:
        """reset [NAME ...]: back to the defaults (all parameters, or the ones named)."""
        names = arg.split()
        if not names:
            self.given = {}
            self.say("  all parameters at their defaults")
            return
        known = {p.name for p in self.claim.params}
        bad = [n for n in names if n not in known]
        if bad:
            self.error(f"unknown parameter {bad[0]!r} (known: {', '.join(sorted(known))})")
            return
        new = {k: v for k, v in self.given.items() if k not in names}
        self.claim.resolve(new)
        self.given = new
        self.say(f"  reset {' '.join(names)}")

    def do_seed(self, arg: str) -> None:
        """seed N: set the parameter seed (the instance drawn); without N, show it."""
        if "seed" not in {p.name for p in self.claim.params}:
            self.error(f"{self.claim.id} has no seed parameter")
            return
        if not arg.strip():
            self.say(f"  seed = {self._resolve(None).seed}")
            return
        self.do_set(f"seed={arg.strip()}")

    def do_run(self, arg: str) -> None:
        """run [VARIANT] [--backend B]: evaluate the numeric check (or a falsifier) at the current parameters."""
        args = shlex.split(arg)
        backend = "numpy"
        if "--backend" in args:
            i = args.index("--backend")
            if i + 1 >= len(args):
                self.error("--backend needs a value (numpy, numba, cupy, mpmath)")
                return
            backend = args[i + 1]
            del args[i:i + 2]
        if len(args) > 1:
            self.error("run takes at most one variant")
            return
        check = self._check(args[0] if args else None)
        rec = self._evaluate(check, self.given, backend)
        self._print_record(rec, check.expect)
        note = self._remember(rec)
        if note:
            self.say(note)

    def do_falsify(self, arg: str) -> None:
        """falsify [NAME|property] [--search]: a falsifier's Hypothesis search from the current parameters."""
        args = shlex.split(arg)
        force = "--search" in args
        args = [a for a in args if a != "--search"]
        fals = self._falsifiers()
        if args and args[0] == "property":
            return self._falsify_property()
        if not fals:
            self.error(f"{self.claim.id} has no falsifier")
            return
        if args:
            by = {c.variant: c for c in fals}
            if args[0] not in by:
                self.error(f"unknown falsifier {args[0]!r} (known: {', '.join(by)}, property)")
                return
            check = by[args[0]]
        else:
            check = fals[0]
        from .search import run_falsifier
        base = self._resolve(check)
        base.backend = "numpy"
        t0 = time.perf_counter()
        tries = {"n": 0}
        if force and check.search:
            out, params = self._forced_search(check, base, tries)
        else:
            if force:
                self.say(f"  {check.variant} declares no parameters to search; evaluating once")
            out, params = run_falsifier(check, base, self.profile)
        rec = make_record(check, params, out, backend="numpy", seconds=time.perf_counter() - t0)
        where = ("at the current parameters (no search needed)" if _jsonable_eq(rec["params"], base.to_json())
                 else f"by Hypothesis over {', '.join(check.search)}, shrunk")
        if rec["verdict"] == "refuted":
            self.say(f"counterexample {where}: {self._diff(rec['params'], base.to_json())}"
                     if where.startswith("by") else f"refuted {where}")
        self._print_record(rec, check.expect)
        if rec["verdict"] == "refuted":
            self.say(f"  params: {self._diff(rec['params'])}")
            self.say(f"  replay: save FILE, then theorems check {self.claim.id} --variant {check.variant} "
                     f"--params-file FILE")
        else:
            self.say(f"  no counterexample: the falsifier {check.variant} FAILS here (it must find one)")
        note = self._remember(rec)
        if note:
            self.say(note)

    def _forced_search(self, check: Check, base, tries):
        """Hypothesis ``find`` over the falsifier's search parameters even when the current point
        refutes already: the result is the simplest (shrunk) counterexample near the current point."""
        from hypothesis import find
        from hypothesis.errors import NoSuchExample
        from .params import params_strategy
        from .profiles import settings_for
        strat = check.strategy or params_strategy(self.claim.params, check.search, base)

        def inst(drawn):
            q = base.replace(**drawn)
            if self.claim.validator is not None:
                self.claim.validator(q)
            return q

        cache: dict = {}
        found_at: list = []

        def refutes(drawn) -> bool:
            key = json.dumps(jsonable(drawn), sort_keys=True)
            if key in cache:
                return cache[key]
            if found_at and time.perf_counter() - found_at[0] > SHRINK_SECONDS:
                tries["budget"] = True
                return False  # shrinking budget spent: keep the smallest counterexample so far
            try:
                q = inst(drawn)
            except ParamError:
                return False
            tries["n"] += 1
            cache[key] = check.evaluate(q).decide() == "refuted"
            if cache[key] and not found_at:
                found_at.append(time.perf_counter())
            return cache[key]

        try:
            drawn = find(strat, refutes, settings=settings_for(check.max_examples, self.profile))
        except NoSuchExample:
            out = check.evaluate(base)
            out.message = f"no counterexample in {tries['n']} draws over {', '.join(check.search)}. " + out.message
            return out, base
        q = inst(drawn)
        out = check.evaluate(q)
        shrunk = (f"shrinking stopped by its {SHRINK_SECONDS:g} s budget" if tries.get("budget")
                  else "shrunk")
        out.message = (f"counterexample found by search over {', '.join(check.search)} "
                       f"({tries['n']} evaluations, {shrunk}). " + out.message)
        return out, q

    def _falsify_property(self) -> None:
        from .runner import run_check
        try:
            check = self.claim.check("property")
        except KeyError:
            self.error(f"{self.claim.id} has no property check")
            return
        rec = run_check(check, self.given, profile=self.profile)
        self._print_record(rec, "certified")
        if rec["verdict"] == "refuted" and rec["counterexample"] and "params" in rec["counterexample"]:
            # the drawn instance is a counterexample of the claim itself: evaluate it there
            num = self._check(None)
            cex = self._evaluate(num, rec["counterexample"]["params"])
            self.say(f"  the property's shrunk draw: {self._diff(cex['params'])}")
            self.say(self._remember(cex) or f"  (re-evaluated there: {cex['verdict']})")
        elif rec["verdict"] == "certified":
            self.say("  no counterexample: the claim held on every draw")

    def do_path(self, arg: str) -> None:
        """path [N] [--variant V]: residual/tolerance along N points from the certified point to the counterexample."""
        args = shlex.split(arg)
        variant = None
        if "--variant" in args:
            i = args.index("--variant")
            if i + 1 >= len(args):
                self.error("--variant needs a value")
                return
            variant = args[i + 1]
            del args[i:i + 2]
        n = 11
        if args:
            try:
                n = int(args[0])
            except ValueError:
                self.error(f"path expects a number of points, got {args[0]!r}")
                return
            if not 2 <= n <= 201:
                self.error("path takes between 2 and 201 points")
                return
        if self.cex is None:
            self.error("no counterexample yet: run falsify (or a run that is refuted) first")
            return
        start = self.certified
        if start is None:
            true = self._check(None)
            rec = self._evaluate(true, {})
            if rec["verdict"] != "certified":
                self.error("no certified point yet, and the defaults do not certify: run one that certifies")
                return
            self.say(f"  no certified point yet: using the defaults, where {true.nodeid} certifies")
            start = self.certified = rec
        checks = [self._check(variant or self.cex["variant"])]
        true = self._check(None)
        if variant is None and checks[0] is not true:
            checks.append(true)
        a, b = dict(start["params"]), dict(self.cex["params"])
        kinds = {p.name: p.kind for p in self.claim.params}
        self.say(f"path: certified point [{start['variant']}] -> counterexample [{self.cex['variant']}], {n} points")
        mat = MATERIALIZERS.get(self.claim.id)
        differ = [k for k in kinds if not _jsonable_eq(a.get(k), b.get(k))]
        if not differ:
            self.say("  the two points have the same parameters: only the variant differs, so there is no "
                     "segment to walk (falsify NAME --search, or set and run elsewhere, to get two points); "
                     "the checks at that point:")
            n = 1
        hard = [k for k in differ if interpolate(kinds[k], a.get(k), b.get(k), 0.25, k)[1] == "switch"]
        if hard and mat is not None:
            ma, covered, note = mat(self.claim, a)
            mb, _, noteb = mat(self.claim, b) if ma is not None else (None, (), note)
            if ma is not None and mb is not None:
                for k in covered:
                    mb[k] = ma[k]
                ok = all(self._evaluate(c, ma)["verdict"] == self._evaluate(c, a)["verdict"]
                         and self._evaluate(c, mb)["verdict"] == self._evaluate(c, b)["verdict"] for c in checks)
                if ok:
                    ks = [k for k in hard if k in covered]
                    self.say(f"  {', '.join(ks)} differ{'s' if len(ks) == 1 else ''}: {note}, and interpolated "
                             "(the endpoints give the same verdicts as the originals)")
                    a, b = ma, mb
                    differ = [k for k in kinds if not _jsonable_eq(a.get(k), b.get(k))]
                    hard = [k for k in differ if interpolate(kinds[k], a.get(k), b.get(k), 0.25, k)[1] == "switch"]
                else:
                    self.say("  (making the drawn instance explicit changed a verdict at an endpoint: not used)")
            else:
                self.say(f"  (the drawn instance cannot be made explicit: {note or noteb})")
        how = {k: interpolate(kinds[k], a.get(k), b.get(k), 0.25, k)[1] for k in differ}
        lin = [f"{k} ({how[k]})" for k in differ if how[k] != "switch"]
        if lin:
            self.say("  interpolated: " + ", ".join(lin))
        if hard:
            keys = [k for k in hard if k in KEY_PARAMS]
            self.say("  not interpolable, switch at the midpoint: " + ", ".join(hard))
            if keys:
                self.say(f"  NOTE: {', '.join(keys)} is a key of a random draw, not a coordinate: the instance jumps "
                         "at the midpoint, so this is not a straight segment (give the instance explicitly to get one)")
            elif any(kinds[k] in ("matrix", "matrices", "vector") for k in hard):
                self.say("  NOTE: shapes differ between the endpoints: the straight segment is not meaningful")
        ts = [i / (n - 1) for i in range(n)] if n > 1 else [0.0]
        scal = [k for k in differ if kinds[k] in ("int", "float", "choice", "bool")]
        rows, ratios = [], {c.variant: [] for c in checks}
        verdicts = {c.variant: [] for c in checks}
        for t in ts:
            pt = {k: interpolate(kinds[k], a.get(k), b.get(k), t, k)[0] for k in kinds}
            cells = [f"{t:5.2f}"] + [f"{_fmt(pt[k]):>8}" for k in scal]
            for c in checks:
                try:
                    rec = self._evaluate(c, pt)
                    r, v = _ratio(rec), rec["verdict"]
                except ParamError as exc:
                    r, v = None, "invalid"
                    self.say(f"  t={t:.2f}: {str(exc).splitlines()[0]}")
                ratios[c.variant].append(r)
                verdicts[c.variant].append(v)
                cells.append(f"{_fmt(r):>10} {v:<12}")
            rows.append("  ".join(cells).rstrip())
        head = ["    t"] + [f"{k:>8}" for k in scal] + [f"{(c.variant + ' res/tol'):>23}" for c in checks]
        self.say("  " + "  ".join(head))
        for r in rows:
            self.say("  " + r)
        w = max(len(c.variant) for c in checks)
        for c in checks:
            rs = ratios[c.variant]
            fin = [x for x in rs if x is not None and x > 0 and math.isfinite(x)]
            rng = (f"log10(res/tol) {math.log10(min(fin)):+.1f} .. {math.log10(max(fin)):+.1f}" if fin else "")
            self.say(f"  {c.variant:<{w}} |{sparkline(rs)}|  {rng}  {self._crossing(ts, verdicts[c.variant])}")

    @staticmethod
    def _crossing(ts, verdicts) -> str:
        kinds = sorted(set(verdicts))
        if len(verdicts) == 1:
            return verdicts[0]
        if len(kinds) == 1:
            return f"{kinds[0]} all along"
        out = []
        for i in range(1, len(verdicts)):
            if verdicts[i] != verdicts[i - 1]:
                out.append(f"{verdicts[i - 1]} -> {verdicts[i]} between t={ts[i - 1]:.2f} and t={ts[i]:.2f}")
        return "; ".join(out)

    def do_save(self, arg: str) -> None:
        """save FILE [counterexample|certified|params]: write JSON that theorems check --params-file replays."""
        args = shlex.split(arg)
        if not args:
            self.error("save expects a file name")
            return
        what = args[1] if len(args) > 1 else ("counterexample" if self.cex else "params")
        if what in ("counterexample", "cex"):
            if self.cex is None:
                self.error("no counterexample yet (falsify first, or save FILE params)")
                return
            obj, variant = self.cex, self.cex["variant"]
        elif what == "certified":
            if self.certified is None:
                self.error("no certified point yet (run first)")
                return
            obj, variant = self.certified, self.certified["variant"]
        elif what == "params":
            variant = self.claim.true_variant
            obj = {"claim": self.claim.id, "variant": variant, "params": self._resolve(None).to_json()}
        else:
            self.error(f"save FILE takes counterexample, certified or params, not {what!r}")
            return
        path = Path(args[0]).expanduser()
        try:
            path.write_text(dumps(obj, indent=1) + "\n")
        except OSError as exc:
            self.error(f"cannot write {path}: {exc.strerror}")
            return
        vflag = "" if variant == self.claim.true_variant else f" --variant {variant}"
        self.say(f"  wrote {what} to {path}")
        self.say(f"  replay: theorems check {self.claim.id}{vflag} --params-file {shlex.quote(str(path))}")

    def do_load(self, arg: str) -> None:
        """load FILE: read parameters (an object, a result record or a counterexample) as the current ones."""
        args = shlex.split(arg)
        if len(args) != 1:
            self.error("load expects one file name")
            return
        path = Path(args[0]).expanduser()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.error(f"file {str(path)!r} not found")
            return
        except IsADirectoryError:
            self.error(f"{str(path)!r} is a folder, not a file")
            return
        except UnicodeDecodeError:
            self.error(f"file {str(path)!r} is not UTF-8 text")
            return
        except RecursionError:
            self.error(f"file {str(path)!r} is nested too deeply")
            return
        except json.JSONDecodeError as exc:
            self.error(f"file {str(path)!r} is not valid JSON ({exc.msg})")
            return
        except (OSError, ValueError) as exc:  # permission, a name too long; an int of more than 4300 digits
            self.error(f"cannot read {str(path)!r}: {getattr(exc, 'strerror', None) or str(exc).split(';')[0]}")
            return
        if not isinstance(data, dict):
            self.error(f"file {str(path)!r} must hold a JSON object")
            return
        if data.get("claim") not in (None, self.claim.id):
            self.error(f"file {str(path)!r} is for {data['claim']}, not {self.claim.id}")
            return
        if isinstance(data.get("counterexample"), dict) and isinstance(data["counterexample"].get("params"), dict):
            params = data["counterexample"]["params"]
        elif isinstance(data.get("params"), dict):
            params = data["params"]
        else:
            params = data
        variant = data.get("variant") if isinstance(data.get("variant"), str) else None
        check = self._check(variant) if variant in self._variants() else None
        self._resolve(check, params)  # validate before changing anything
        self.given = dict(params)
        self.say(f"  loaded {len(params)} parameters: {self._diff(self._resolve(None).to_json())}")
        if check is not None and data.get("verdict") in ("certified", "refuted"):
            rec = self._evaluate(check, params)
            self._print_record(rec, check.expect)
            if rec["verdict"] != data["verdict"]:
                self.say(f"  NOTE: the file says {data['verdict']}, this evaluation says {rec['verdict']}")
            note = self._remember(rec)
            if note:
                self.say(note)

    def do_record(self, arg: str) -> None:
        """record: the last result record as JSON (the contract's fields)."""
        if self.last is None:
            self.error("no record yet")
            return
        self.say(dumps(self.last, indent=1))

    def do_profile(self, arg: str) -> None:
        """profile [ci|dev|thorough]: the Hypothesis profile of falsify (default: the current one, ci)."""
        from .profiles import PROFILES, current
        if not arg.strip():
            self.say(f"  profile {self.profile or current()}")
            return
        if arg.strip() not in PROFILES:
            self.error(f"unknown profile {arg.strip()!r} (known: {', '.join(PROFILES)})")
            return
        self.profile = arg.strip()
        self.say(f"  profile {self.profile}")

    def do_quit(self, arg: str) -> bool:
        """quit: leave the session (also exit, or Ctrl-D)."""
        return True

    do_exit = do_quit

    def do_EOF(self, arg: str) -> bool:
        self.say("")
        return True

    def do_help(self, arg: str) -> None:
        """help [COMMAND]: the commands with one line each, or one command in full."""
        if arg.strip():
            fn = getattr(self, "do_" + arg.strip(), None)
            if fn is None or arg.strip() == "EOF":
                self.error(f"no command {arg.strip()!r}")
                return
            self.say((fn.__doc__ or arg).strip())
            extra = _HELP.get(arg.strip())
            if extra:
                self.say(extra)
            return
        names = [n[3:] for n in self.get_names() if n.startswith("do_") and n not in ("do_EOF", "do_exit")]
        for name in sorted(set(names), key=_ORDER.index if set(names) <= set(_ORDER) else None):
            doc = (getattr(self, "do_" + name).__doc__ or "").strip().splitlines()[0]
            usage, _, text = doc.partition(": ")
            self.say(f"  {usage:<44} {text}")

    # -- completion (interactive terminals) -----------------------------------
    def complete_set(self, text, line, begidx, endidx):
        return [p.name + "=" for p in self.claim.params if p.name.startswith(text)]

    def complete_reset(self, text, line, begidx, endidx):
        return [p.name for p in self.claim.params if p.name.startswith(text)]

    def complete_run(self, text, line, begidx, endidx):
        return [v for v in list(self._variants()) + ["--backend"] if v.startswith(text)]

    def complete_falsify(self, text, line, begidx, endidx):
        return [v for v in [c.variant for c in self._falsifiers()] + ["property", "--search"] if v.startswith(text)]

    def complete_help(self, text, *a):
        return [n for n in _ORDER if n.startswith(text)]


_ORDER = ["show", "set", "reset", "seed", "run", "falsify", "path", "save", "load", "record", "profile",
          "help", "quit"]
_HELP = {
    "set": "  Values are JSON: a number, true/false, a bare word for a choice, nested lists for a matrix:\n"
           "    set d=2 T=0.5 energy=quartic\n    set layers=[[[1, 0.5], [0.2, 1]], [[0.4, 1], [1, -0.3]]]\n"
           "  set NAME=null returns a matrix parameter to 'drawn from the seed'.",
    "run": "  VARIANT is stated/corrected (the default, the numeric check) or a falsifier's name; the check is\n"
           "  evaluated exactly at the current parameters (no search).  A certified result becomes the\n"
           "  certified point, a refuted one the current counterexample.",
    "falsify": "  Without a name, the first falsifier.  As theorems check does, it evaluates at the current\n"
               "  parameters first and searches (Hypothesis, the falsifier's search parameters, shrunk) only if\n"
               "  they do not refute; --search searches anyway, for the simplest counterexample near here.\n"
               "  falsify property runs the property check: a failing draw is a counterexample of the claim.",
    "path": "  Evaluates the counterexample's variant (and the claim's own numeric check) at N points of the\n"
            "  segment: floats and matrices linearly, integers rounded; seeds and choices switch at the\n"
            "  midpoint (it says so).  Where the claim can give its seed-drawn instance explicitly (layers, Y),\n"
            "  differing seeds are replaced by that instance, which is then interpolated.",
    "save": "  counterexample (the default when there is one) and certified write the result record; params\n"
            "  writes {claim, variant, params}.  Replay with the printed theorems check command.",
}


def load_claim(claim_id: str) -> Claim:
    """The claim, importing only the module that declares it (:func:`theorems.registry.get_claim`)."""
    return get_claim(claim_id)


def cmd_explore(args) -> int:
    """``theorems explore ID``: 0 when the session ends, 2 with one line on stderr for a bad id."""
    try:
        claim = load_claim(args.id)
    except ParamError as exc:
        sys.stderr.write(f"theorems: error: {str(exc).splitlines()[0]}\n")
        return 2
    try:
        sys.stdout.reconfigure(errors="backslashreplace")  # an ASCII terminal must not end the session
    except (AttributeError, ValueError):
        pass
    try:  # nor bytes that are not UTF-8 on standard input: they read as U+FFFD, an unknown command
        sys.stdin.reconfigure(errors="replace")
    except (AttributeError, ValueError):
        pass
    ex = Explorer(claim, profile=getattr(args, "profile", None))
    hist = None
    if ex.use_rawinput:
        try:
            import readline
            hist = HISTORY_FILE
            try:
                readline.read_history_file(hist)
            except OSError:
                pass
            readline.set_history_length(2000)
        except ImportError:  # pragma: no cover - no readline on this platform
            hist = None
    try:
        ex.cmdloop()
    finally:
        if hist:
            try:
                import readline
                readline.write_history_file(hist)
            except OSError:
                pass
    return 0
