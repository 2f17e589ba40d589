"""``theorems sweep``: draw legal parameter sets over each claim's *declared* range, run the numeric
check of the variant that holds on each, and tally the verdicts (DESIGN.md, command line).

Which claims
    Every claim with a numeric check whose variant is the claim's variant that holds
    (``claim.true_variant``: ``stated`` for holds/heuristic/empirical, ``corrected`` for an erratum or
    a gap), or those picked by ``--document`` / ``--claim``.  A claim whose check does not offer
    ``--backend`` is skipped (listed in ``meta.skipped``), or is bad input when named by ``--claim``.

The draws (:func:`draw_value`, one function for every kind)
    - ``int`` / ``float`` over the declared range ``[low, high]`` (``Param.low``/``high``, never the
      narrower ``Param.search`` that property checks use).  Log-uniform where the range is positive and
      spans at least two decades (``high / low >= 100``; an int is drawn log-uniformly over
      ``[low, high + 1)`` and rounded down, so each integer gets the mass of its stretch of the log
      scale); uniform otherwise (a range that starts at 0 or below is drawn uniformly).  Open ends
      (``low_open``/``high_open``) are excluded: a draw that lands on one is drawn again.
    - A missing bound (``None``): the ``search`` range's bound where the parameter has one, else a
      decade around the default ``d``: ``[d/10, 10 d]`` for ``d > 0``, ``[10 d, d/10]`` for ``d < 0``,
      ``[-1, 1]`` for ``d = 0`` (or no default), cut to the bound that is declared.  (No numeric
      claim of the suite lacks a bound today; the rule is here so that a sweep never draws from an
      infinite range.)
    - The ``seed`` parameter: uniformly over its whole range ``[0, 2**32 - 1]``.
    - ``choice``: uniformly over all declared choices; ``bool``: True or False with equal odds.
    - ``matrix`` / ``matrices`` / ``vector``: left at their default (``None``: drawn by the claim from
      its seed) until a matrix sampler is plugged in at the one place marked in :func:`draw_value`.

    Each parameter's generator derives from (seed, claim id, draw index, parameter name) through
    SHA-256 (:func:`draw_rng`), never Python's salted ``hash()``: a draw replays alone
    (``draw_params(claim, seed, index)``), and the tallies do not depend on the engine, on the number
    of workers or on the order the draws run in.  The claim's validator runs on the drawn set: a
    :class:`~theorems.params.ParamError` (or ``ValueError``) from it means a cross-parameter
    constraint such as ``k <= d``: the set is drawn again (up to ``RESAMPLE`` = 20 sets per draw,
    keyed by the attempt as well), and only a draw with no legal set among them is tallied
    ``rejected``, not a failure.

The time limit (``--timeout``)
    A Dask worker runs its tasks in threads, where SIGALRM cannot interrupt them, and a check stuck in
    compiled code (LAPACK, a Numba kernel) would not see a Python-level interrupt anyway.  So no draw
    runs in the engine's own process: each worker thread keeps one long-lived *draw process*
    (:class:`DrawProcess`, ``python -c 'from theorems.sweep import serve; serve()'``), sends it one
    draw at a time as a JSON line, and waits on the pipe with a deadline.  The draw process first
    imports the claim's module and, the first time it meets the claim, runs the check once at the
    defaults so that Numba compiles its kernels (both under their own, more generous limit:
    ``max(timeout, 120 s)``), says "started", and runs :func:`theorems.runner.run_check`; the deadline
    for the draw counts from "started", so it measures the draw, not imports or compilation.  A draw past the deadline: its process group is killed (SIGKILL), the draw is tallied
    ``error`` with "timed out after X s", and the next draw starts a fresh process (about 1-3 s of
    imports).  A draw process that dies (a segfault, the kernel's OOM killer) is an ``error`` naming
    the signal; one that exceeds ``--memory-limit`` GB of address space (RLIMIT_AS) raises
    MemoryError inside the check, an ``error`` as well.  The process stays warm between draws, so a
    claim's Numba kernels compile once per worker, not once per draw.  It exits when its parent goes
    (PR_SET_PDEATHSIG, and a watchdog thread on the parent's pid).  The same mechanism serves every
    engine: ``serial`` (in this process, for debugging), ``local`` (an embedded Dask LocalCluster of
    worker processes, one thread each, no dashboard) and ``tcp://HOST:PORT`` (a running ``dask
    scheduler`` with its ``dask worker`` processes, which need this package installed).

Caveat on "same seed, same tallies": a draw whose running time is close to ``--timeout`` may time
out on one machine and not another; everything else is a function of (seed, claim id, index).

With ``--out DIR`` each draw is also appended to ``DIR/draws.jsonl`` as it finishes (``{"claim",
"index", "params", "verdict", "message", "seconds", "seed"}``): an interrupted sweep leaves what ran.

Output (``--json``; DESIGN.md contract)::

    {"meta": {"seed", "draws", "engine", ...},
     "claims": {ID: {"status", "certified", "inconclusive", "refuted", "error", "rejected",
                     "failures": [{"params", "verdict", "message", "replay"}]}},
     "summary": {"claims", "draws", "refuted_true", "errors", "inconclusive_rate"}}

``refuted_true`` counts refuted draws of the variant that holds (every refuted draw: the sweep runs
only that variant); ``inconclusive_rate`` is inconclusive draws over draws that ran (rejected draws
excluded).  ``meta`` also records the backend, the time limit, the wall time, each claim's seconds
(``meta.seconds``: total and slowest draw) and the skipped claims.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Iterable

import numpy as np

from .params import Param, ParamError, _jsonable
from .vocabulary import ARRAY_API_BACKENDS

__all__ = ["draw_rng", "draw_value", "draw_params", "sweep_check", "sweepable", "run_draw", "replay_command",
           "DrawProcess", "sweep", "tally", "parse_scheduler", "DEFAULT_TIMEOUT", "SweepError"]

DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY_GB = 4.0
TALLY_KEYS = ("certified", "inconclusive", "refuted", "error", "rejected")
_MESSAGE_WIDTH = 500


class SweepError(ValueError):
    """Bad input to a sweep (the command line's exit 2)."""


# ---------------------------------------------------------------------------
# the draws
def draw_rng(seed: int, claim_id: str, index: int, name: str = "") -> np.random.Generator:
    """The generator of one parameter of one draw: SHA-256 of (seed, claim id, index, name)."""
    digest = hashlib.sha256(f"theorems.sweep|{int(seed)}|{claim_id}|{int(index)}|{name}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


def _bounds(param: Param) -> tuple[float, float]:
    """The declared range, with the documented rule for a missing bound."""
    lo, hi = param.low, param.high
    if lo is not None and hi is not None:
        return lo, hi
    if param.search is not None and len(param.search) == 2:
        slo, shi = param.search
        lo = slo if lo is None else lo
        hi = shi if hi is None else hi
    if lo is None or hi is None:
        d = param.default if isinstance(param.default, (int, float)) and not isinstance(param.default, bool) else 0
        d = float(d)
        if d > 0:
            dlo, dhi = d / 10, d * 10
        elif d < 0:
            dlo, dhi = d * 10, d / 10
        else:
            dlo, dhi = -1.0, 1.0
        if lo is None:
            lo = dlo if hi is None else min(dlo, hi)
        if hi is None:
            hi = max(dhi, lo)
    return lo, hi


def _log_scale(lo: float, hi: float) -> bool:
    return lo > 0 and hi / lo >= 100


def draw_value(param: Param, rng: np.random.Generator, drawn_so_far: dict) -> Any:
    """One legal value of ``param`` (see the module's docstring for the rules).  ``drawn_so_far``
    holds the values drawn before it in declaration order (a structured sampler may size a matrix
    by them).  Returns JSON-able Python values (int, float, bool, str, nested lists) or ``None``
    (leave the parameter at its default)."""
    k = param.kind
    if k == "bool":
        return bool(rng.integers(2))
    if k == "choice":
        return param.choices[int(rng.integers(len(param.choices)))]
    if k in ("matrix", "matrices", "vector"):
        # a matrix parameter with a declared shape is drawn from its families (theorems.matrices:
        # ill-conditioned, near-singular, orthogonal, ...; None = the claim's seeded instance);
        # one without a shape keeps its default
        if param.shape is None:
            return _jsonable(param.default)
        from .matrices import sample_param
        return sample_param(param, rng, drawn_so_far)
    lo, hi = _bounds(param)
    if k == "int":
        ilo = math.ceil(lo) + (1 if param.low_open and math.ceil(lo) == lo else 0)
        ihi = math.floor(hi) - (1 if param.high_open and math.floor(hi) == hi else 0)
        if ihi <= ilo:
            return int(ilo)
        if param.name != "seed" and _log_scale(ilo, ihi):
            v = math.floor(math.exp(rng.uniform(math.log(ilo), math.log(ihi + 1))))
            return int(min(max(v, ilo), ihi))
        return int(rng.integers(ilo, ihi, endpoint=True))
    if k == "float":
        if hi <= lo:
            return float(lo)
        log = _log_scale(lo, hi)
        for _ in range(1000):
            if log:
                v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
            else:
                v = float(rng.uniform(lo, hi))
                if not math.isfinite(v):  # a span wider than the largest float: halves
                    v = float(rng.uniform(lo / 2, hi / 2)) * 2
            v = min(max(v, lo), hi)
            if (param.low_open and v == lo) or (param.high_open and v == hi):
                continue
            return float(v)
        raise SweepError(f"parameter {param.name}: cannot draw from {param._range_text()}")  # pragma: no cover
    raise SweepError(f"parameter {param.name} has unknown kind {k!r}")  # pragma: no cover


#: draws of one index tried until one passes the claim's validator (cross-parameter constraints)
RESAMPLE = 20


def _draw_once(claim, seed: int, index: int, attempt: int) -> dict:
    drawn: dict = {}
    context = {p.name: p.default for p in claim.params}   # what a shape may refer to: drawn, else default
    for p in claim.params:
        if p.role == "falsifier":   # the claim's hypothesis is its default: the variant that holds keeps it
            continue
        key = p.name if attempt == 0 else f"{p.name}#{attempt}"
        drawn[p.name] = draw_value(p, draw_rng(seed, claim.id, index, key), context)
        if drawn[p.name] is not None:
            context[p.name] = drawn[p.name]
    return {k: v for k, v in drawn.items() if v is not None}


def draw_params(claim, seed: int, index: int, with_attempts: bool = False):
    """Draw ``index`` of ``claim`` for sweep ``seed``: ``{name: value}`` (parameters left at their
    default omitted), a function of (seed, claim id, index) alone.  A set that the claim's validator
    rejects (a cross-parameter constraint such as ``zeros <= d``) is drawn again, up to ``RESAMPLE``
    times, from generators keyed by the attempt too (rejection sampling: the legal draws keep the
    declared distributions conditioned on the constraint); the last set is returned when none passes,
    and the sweep tallies it ``rejected``.  ``with_attempts``: also return how many sets were drawn."""
    for attempt in range(RESAMPLE):
        params = _draw_once(claim, seed, index, attempt)
        try:
            claim.resolve(params)
        except ValueError:          # ParamError or a validator's ValueError: draw again
            continue
        except Exception:           # noqa: BLE001 - the validator itself broke: run_draw reports it
            break
        break
    return (params, attempt + 1) if with_attempts else params


# ---------------------------------------------------------------------------
# the claims a sweep runs
def sweep_check(claim):
    """The numeric check of the variant that holds, or None."""
    try:
        variant = claim.true_variant
    except (KeyError, AttributeError):  # a status with no variant that holds (unchecked)
        return None
    for c in claim.checks:
        if c.kind == "numeric" and c.variant == variant and c.func is not None:
            return c
    return None


def sweepable(document: str | None = None, claim_ids: Iterable[str] | None = None,
              backend: str = "numpy") -> tuple[list, dict]:
    """The claims to sweep and the skipped ones ``{id: why}``.  Raises SweepError on bad input."""
    from .registry import all_claims, get_claim
    skipped: dict = {}
    if claim_ids:
        claims = []
        for cid in dict.fromkeys(claim_ids):
            try:
                c = get_claim(cid)
            except ParamError as exc:
                raise SweepError(str(exc)) from None
            chk = sweep_check(c)
            if chk is None:
                raise SweepError(f"{cid} has no numeric check of its variant that holds "
                                 f"({getattr(c, 'status', '?')}): nothing to sweep")
            if backend not in chk.backends and backend not in ARRAY_API_BACKENDS:
                raise SweepError(f"{cid} does not offer backend {backend!r} (offered: {', '.join(chk.backends)})")
            claims.append(c)
        return claims, skipped
    try:
        every = all_claims(document)
    except ParamError as exc:
        raise SweepError(str(exc)) from None
    claims = []
    for c in every:
        chk = sweep_check(c)
        if chk is None:
            continue
        if backend not in chk.backends and backend not in ARRAY_API_BACKENDS:
            skipped[c.id] = f"its numeric check does not offer backend {backend!r}"
            continue
        claims.append(c)
    return claims, skipped


def backend_for(claim, backend: str) -> str:
    """Where a claim's draws run: ``backend`` where its numeric check offers it; for an array-API backend
    (cupy, array_api_strict) the rest run on NumPy (the CPU), as `theorems certify --backend` does."""
    chk = sweep_check(claim)
    return backend if chk is not None and backend in chk.backends else "numpy"


def replay_command(claim_id: str, params: dict, backend: str = "numpy") -> str:
    """``theorems check ID --param name=JSON ...``, each argument shell-quoted."""
    parts = ["theorems", "check", claim_id]
    for k, v in params.items():
        parts += ["--param", f"{k}={json.dumps(v, allow_nan=False)}"]
    if backend != "numpy":
        parts += ["--backend", backend]
    return " ".join(shlex.quote(x) for x in parts)


# ---------------------------------------------------------------------------
# one draw, in a draw process with a deadline
def _load(claim_id: str, module: str | None):
    from .registry import get_claim, registry
    if claim_id not in registry and module:
        import importlib
        importlib.import_module(module)  # a claim outside the index (a test's toy) registers itself
    return get_claim(claim_id)


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MESSAGE_WIDTH else text[: _MESSAGE_WIDTH - 3] + "..."


def serve() -> None:  # pragma: no cover - runs in the draw process (exercised by the tests through it)
    """The draw process: JSON requests on stdin, JSON lines on the original stdout (a check that
    prints goes to /dev/null)."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    ppid = int(os.environ.get("THEOREMS_SWEEP_PARENT", "0")) or os.getppid()
    _die_with_parent(ppid)
    gb = float(os.environ.get("THEOREMS_SWEEP_MEMORY_GB", "0") or 0)
    if gb > 0:
        import resource
        lim = int(gb * 2**30)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        except (ValueError, OSError):
            pass

    def send(obj):
        proto.write(json.dumps(obj, allow_nan=False, default=str) + "\n")
        proto.flush()

    from .runner import run_check
    warm: set = set()
    for line in sys.stdin:
        req = json.loads(line)
        backend = req.get("backend", "numpy")
        try:
            claim = _load(req["claim"], req.get("module"))
            check = sweep_check(claim)
            if check is None:
                raise ParamError(f"{claim.id} has no numeric check of its variant that holds")
        except Exception as exc:  # noqa: BLE001 - reported, not raised
            send({"verdict": "error", "message": _short(f"loading the claim failed: {type(exc).__name__}: {exc}"),
                  "seconds": 0.0})
            continue
        if (claim.id, backend) not in warm:
            # warm-up at the defaults, outside the draw's time limit: Numba compiles the claim's kernels
            # here, so that the limit measures the draw, not which draw came first to a fresh process
            warm.add((claim.id, backend))
            try:
                run_check(check, {}, backend=backend)
            except BaseException:  # noqa: BLE001 - the draws will show it
                pass
        send({"started": True})
        t0 = time.perf_counter()
        try:
            rec = run_check(check, req["params"], backend=req.get("backend", "numpy"))
            out = {"verdict": rec["verdict"], "message": _short(rec["message"] or ""), "seconds": rec["seconds"]}
            if rec["verdict"] == "error" and not rec["message"]:
                tb = (rec.get("values") or {}).get("traceback", "")
                out["message"] = _short(tb.strip().splitlines()[-1] if tb.strip() else "error")
        except ParamError as exc:  # the validator or the backend refused: not a draw the check ran
            out = {"verdict": "rejected", "message": _short(str(exc)), "seconds": 0.0}
        except BaseException as exc:  # noqa: BLE001
            out = {"verdict": "error", "message": _short(f"{type(exc).__name__}: {exc}"),
                   "seconds": time.perf_counter() - t0}
        send(out)


def _die_with_parent(ppid: int) -> None:  # pragma: no cover - in the draw process
    """Exit when the process that started this one goes (a killed Dask worker must not leave a draw
    spinning): PR_SET_PDEATHSIG where Linux has it, and a watchdog thread on the parent's pid."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux
        pass
    if os.getppid() != ppid:
        os._exit(0)

    def watch():
        while True:
            time.sleep(2.0)
            if os.getppid() != ppid:
                os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


class DrawProcess:
    """A long-lived draw process and the deadline on each draw (see the module's docstring)."""

    def __init__(self, memory_gb: float = DEFAULT_MEMORY_GB):
        self.memory_gb = memory_gb
        self.proc: subprocess.Popen | None = None
        self._buf = b""
        self.restarts = 0

    def _start(self) -> None:
        env = dict(os.environ, THEOREMS_SWEEP_PARENT=str(os.getpid()),
                   THEOREMS_SWEEP_MEMORY_GB=str(self.memory_gb or 0))
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        env.setdefault("OMP_NUM_THREADS", "1")
        env.setdefault("MKL_NUM_THREADS", "1")
        self.proc = subprocess.Popen([sys.executable, "-c", "from theorems.sweep import serve; serve()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, start_new_session=True)
        self._buf = b""

    def close(self) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        try:
            os.killpg(p.pid, signal.SIGKILL)  # the draw process and anything it started
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        for f in (p.stdin, p.stdout):
            try:
                f.close()
            except OSError:
                pass

    def __del__(self):  # pragma: no cover
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def _recv(self, deadline: float):
        """The next JSON line, ``None`` past the deadline; EOFError when the process died."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def _died(self) -> dict:
        p = self.proc
        try:
            code = p.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            code = None
        self.close()
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = f"killed by {name}"
        else:
            why = f"exit code {code}"
        return {"verdict": "error", "message": f"the draw process died ({why})", "seconds": 0.0}

    def run(self, request: dict, timeout: float) -> dict:
        """Run one draw: ``{"verdict", "message", "seconds"}``."""
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
            self.restarts += 1
        try:
            self.proc.stdin.write((json.dumps(request, allow_nan=False) + "\n").encode())
            self.proc.stdin.flush()
            load_limit = max(float(timeout), 120.0)
            first = self._recv(time.monotonic() + load_limit)
            if first is None:
                self.close()
                return {"verdict": "error", "message": f"loading {request.get('claim')} (and its run at the defaults) "
                                                       f"timed out after {load_limit:g} s",
                        "seconds": load_limit}
            if not first.get("started"):
                return first  # the claim could not be loaded
            t0 = time.monotonic()
            out = self._recv(t0 + timeout)
        except (EOFError, BrokenPipeError):
            return self._died()
        if out is None:
            self.close()
            return {"verdict": "error", "message": f"timed out after {timeout:g} s", "seconds": float(timeout)}
        return out


_local = threading.local()


def _draw_process(memory_gb: float) -> DrawProcess:
    """This thread's draw process (a Dask worker thread, or the serial engine's)."""
    dp = getattr(_local, "proc", None)
    if dp is None:
        dp = _local.proc = DrawProcess(memory_gb)
    dp.memory_gb = memory_gb
    return dp


def run_draw(claim_id: str, module: str | None, seed: int, index: int, backend: str = "numpy",
             timeout: float = DEFAULT_TIMEOUT, memory_gb: float = DEFAULT_MEMORY_GB) -> dict:
    """One draw of one claim, the unit of work of every engine: draw, validate (rejected), run in the
    thread's draw process with the deadline.  Returns ``{"claim", "index", "params", "verdict",
    "message", "seconds"}``."""
    claim = _load(claim_id, module)
    params, attempts = draw_params(claim, seed, index, with_attempts=True)
    out = {"claim": claim_id, "index": index, "params": params, "attempts": attempts}
    try:
        claim.resolve(params)
    except ValueError as exc:  # ParamError (and a validator's plain ValueError): a cross-parameter constraint
        return {**out, "verdict": "rejected", "message": _short(str(exc)), "seconds": 0.0}
    except Exception as exc:  # noqa: BLE001 - the validator itself broke
        return {**out, "verdict": "error", "message": _short(f"validator: {type(exc).__name__}: {exc}"),
                "seconds": 0.0}
    res = _draw_process(memory_gb).run({"claim": claim_id, "module": module, "params": params,
                                        "backend": backend}, timeout)
    return {**out, "verdict": res.get("verdict", "error"), "message": res.get("message", ""),
            "seconds": float(res.get("seconds") or 0.0)}


# ---------------------------------------------------------------------------
# engines
def parse_scheduler(text: str) -> str:
    """``serial``, ``local`` or ``tcp://HOST:PORT`` (checked), else SweepError."""
    if text in ("serial", "local"):
        return text
    if not text.startswith("tcp://"):
        raise SweepError(f"--scheduler {text!r} must be local, serial or tcp://HOST:PORT")
    rest = text[len("tcp://"):]
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit() or not (1 <= int(port) <= 65535) or "/" in host or " " in host:
        raise SweepError(f"--scheduler {text!r} is not an address tcp://HOST:PORT (a port 1-65535)")
    return text


class _Serial:
    name = "serial"

    def __init__(self, workers, memory_gb):
        self.workers = 1

    def map(self, tasks):
        for t in tasks:
            yield run_draw(*t)

    def close(self):
        dp = getattr(_local, "proc", None)
        if dp is not None:
            dp.close()
            _local.proc = None


class _Dask:
    def __init__(self, scheduler: str, workers: int, memory_gb: float):
        import logging
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is a main dependency
            raise SweepError(f"dask.distributed is not installed ({exc}); run pip install -e .") from None
        self.cluster = None
        if scheduler == "local":
            # no dashboard; the scheduler's small HTTP server (health routes) on a free local port, not 8787
            try:
                self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                            dashboard_address=None, silence_logs=logging.ERROR,
                                            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"})
                self.client = Client(self.cluster)
            except Exception as exc:  # noqa: BLE001 - no processes, no sockets: say so in one line
                if self.cluster is not None:
                    self.cluster.close()
                raise SweepError(f"cannot start a Dask LocalCluster ({type(exc).__name__}: "
                                 f"{(str(exc).splitlines() or [''])[0]}); try --scheduler serial") from None
            self.name = "local"
        else:
            try:
                self.client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise SweepError(f"cannot connect to the Dask scheduler at {scheduler} "
                                 f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
            self.name = scheduler
        self.workers = len(self.client.scheduler_info().get("workers", {}))

    def map(self, tasks):
        from distributed import as_completed
        tasks = list(tasks)
        token = hashlib.sha256(f"{time.time_ns()}|{os.getpid()}".encode()).hexdigest()[:12]
        futures = {}
        for t in tasks:
            f = self.client.submit(run_draw, *t, key=f"sweep-{t[0]}-{t[3]}-{token}", pure=False, retries=0)
            futures[f.key] = (f, t)
        for f in as_completed([f for f, _ in futures.values()]):
            t = futures[f.key][1]
            try:
                yield f.result()
            except Exception as exc:  # noqa: BLE001 - a worker died (KilledWorker) or the task broke
                yield {"index": t[3], "params": None, "verdict": "error", "claim": t[0],
                       "message": _short(f"the task failed on the engine: {type(exc).__name__}: {exc}"),
                       "seconds": 0.0}
            finally:
                f.release()

    def close(self):
        try:
            self.client.close()
        finally:
            if self.cluster is not None:
                self.cluster.close()


# ---------------------------------------------------------------------------
# the sweep
def tally(claims: list, results: dict, backend: str | dict = "numpy") -> dict:
    """Per claim, in claim order, draws in index order: the contract's ``claims`` object.  ``backend``: one
    name, or ``{claim id: backend}`` where the claims ran on different ones."""
    out = {}
    for c in claims:
        b = backend.get(c.id, "numpy") if isinstance(backend, dict) else backend
        rows = sorted(results.get(c.id, []), key=lambda r: r["index"])
        entry = {"status": c.status, **{k: 0 for k in TALLY_KEYS}, "failures": []}
        for r in rows:
            entry[r["verdict"] if r["verdict"] in TALLY_KEYS else "error"] += 1
            if r["verdict"] not in ("certified", "inconclusive", "rejected"):
                params = r["params"] if r["params"] is not None else draw_params(c, r["seed"], r["index"])
                entry["failures"].append({"params": params, "verdict": r["verdict"], "message": r["message"],
                                          "replay": replay_command(c.id, params, b)})
        if b != "numpy":
            entry["backend"] = b
        out[c.id] = entry
    return out


def sweep(claims: list, *, draws: int, seed: int, backend: str = "numpy", scheduler: str = "local",
          workers: int | None = None, timeout: float = DEFAULT_TIMEOUT, memory_gb: float = DEFAULT_MEMORY_GB,
          progress: Callable[[str], None] | None = None, skipped: dict | None = None,
          on_draw: Callable[[dict], None] | None = None, budget: float | None = None) -> dict:
    """Run ``draws`` draws of each claim on the engine and return the contract's object.
    ``on_draw`` sees each draw's result as it arrives (the command line appends it to
    ``DIR/draws.jsonl``, so that an interrupted sweep leaves what it ran)."""
    workers = workers or os.cpu_count() or 1
    t0 = time.perf_counter()
    engine = _Serial(workers, memory_gb) if scheduler == "serial" else _Dask(scheduler, workers, memory_gb)
    where = {c.id: backend_for(c, backend) for c in claims}
    # draw-index major: an interrupted sweep (its DIR/draws.jsonl) holds the first k draws of every claim,
    # not all draws of the first claims; the tallies are the same whatever the order (draws replay alone)
    tasks = [(c.id, c.module, seed, i, where[c.id], timeout, memory_gb) for i in range(draws) for c in claims]
    results: dict = {c.id: [] for c in claims}
    left = {c.id: draws for c in claims}
    counts = {k: 0 for k in TALLY_KEYS}
    done_claims = done_draws = 0
    complete = True
    last = t0
    try:
        for r in engine.map(tasks):
            cid = r["claim"]
            r["seed"] = seed
            results[cid].append(r)
            if on_draw is not None:
                on_draw(r)
            counts[r["verdict"] if r["verdict"] in TALLY_KEYS else "error"] += 1
            done_draws += 1
            left[cid] -= 1
            if left[cid] == 0:
                done_claims += 1
                if progress is not None:
                    mine = {k: sum(1 for x in results[cid] if x["verdict"] == k) for k in TALLY_KEYS}
                    secs = sum(x["seconds"] for x in results[cid])
                    what = ", ".join(f"{v} {k}" for k, v in mine.items() if v)
                    progress(f"sweep: {done_claims}/{len(claims)} claims, {done_draws}/{len(tasks)} draws, "
                             f"{counts['refuted']} refuted, {counts['error']} errors so far  "
                             f"{cid}: {what} ({secs:.1f} s)")
            elif progress is not None and time.perf_counter() - last > 20:  # draws go index-major: a heartbeat
                progress(f"sweep: {done_draws}/{len(tasks)} draws ({done_draws // max(len(claims), 1)} rounds of "
                         f"{len(claims)} claims), {counts['refuted']} refuted, {counts['error']} errors so far")
                last = time.perf_counter()
            if budget is not None and done_draws < len(tasks) and time.perf_counter() - t0 > budget:
                complete = False  # the budget is spent: the draws still out are dropped with the engine
                break
    finally:
        engine.close()
    wall = time.perf_counter() - t0
    table = tally(claims, results, where)
    ran = sum(e[k] for e in table.values() for k in TALLY_KEYS if k != "rejected")
    incon = sum(e["inconclusive"] for e in table.values())
    seconds, resampled = {}, {}
    for cid, rows in results.items():
        ts = [x["seconds"] for x in rows]
        seconds[cid] = {"total": round(sum(ts), 4), "max": round(max(ts), 4) if ts else 0.0}
        extra = sum(int(x.get("attempts", 1)) - 1 for x in rows)
        if extra:
            resampled[cid] = extra
    meta = {"seed": seed, "draws": draws, "engine": engine.name, "workers": engine.workers, "backend": backend,
            "timeout": timeout, "memory_limit_gb": memory_gb, "wall_seconds": round(wall, 2),
            "ranges": "declared (Param.low/high); log-uniform where positive and >= 2 decades",
            "inconclusive_rate": "inconclusive / draws run (rejected excluded)",
            "skipped": dict(skipped or {}), "seconds": seconds,
            "resampled": resampled,   # sets the claim's validator rejected and the sweep drew again
            "resample_limit": RESAMPLE, "budget": budget, "complete": complete,
            "draws_run": {cid: len(rows) for cid, rows in results.items()} if not complete else None,
            "ran_on": {b: sum(1 for x in where.values() if x == b) for b in sorted(set(where.values()))}}
    summary = {"claims": len(claims), "draws": len(tasks) if complete else sum(len(v) for v in results.values()),
               "refuted_true": sum(e["refuted"] for e in table.values()),
               "errors": sum(e["error"] for e in table.values()),
               "inconclusive_rate": round(incon / ran, 4) if ran else 0.0}
    return {"meta": meta, "claims": table, "summary": summary}


def render_table(result: dict) -> str:
    """The readable table: one line per claim, then the failures with their replay commands."""
    lines = []
    w = max([len(k) for k in result["claims"]] + [5])
    lines.append(f"{'claim':<{w}}  {'status':<9} {'cert':>5} {'inc':>5} {'ref':>5} {'err':>5} {'rej':>5} {'sec':>8}")
    secs = result["meta"].get("seconds", {})
    for cid, e in result["claims"].items():
        s = secs.get(cid, {}).get("total", 0.0)
        lines.append(f"{cid:<{w}}  {e['status']:<9} {e['certified']:>5} {e['inconclusive']:>5} {e['refuted']:>5} "
                     f"{e['error']:>5} {e['rejected']:>5} {s:>8.1f}")
    failures = [(cid, f) for cid, e in result["claims"].items() for f in e["failures"]]
    if failures:
        lines.append("")
        lines.append(f"failures ({len(failures)}):")
        for cid, f in failures:
            lines.append(f"  {cid} {f['verdict']}: {f['message'][:200]}")
            lines.append(f"    {f['replay']}")
    s, m = result["summary"], result["meta"]
    lines.append("")
    lines.append(f"{s['claims']} claims, {s['draws']} draws (seed {m['seed']}, engine {m['engine']}, "
                 f"{m['workers']} worker(s), {m['wall_seconds']:.1f} s): {s['refuted_true']} refuted, "
                 f"{s['errors']} errors, inconclusive rate {s['inconclusive_rate']:.3f}")
    if m.get("complete") is False:
        runs = list((m.get("draws_run") or {}).values())
        lines.append(f"stopped at the --budget of {m['budget']:g} s: {min(runs) if runs else 0} to "
                     f"{max(runs) if runs else 0} of {m['draws']} draws per claim ran")
    return "\n".join(lines)
