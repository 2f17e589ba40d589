"""Hypothesis profiles: ``ci`` (derandomized, the default), ``dev`` and ``thorough``.

Select one with ``pytest --hypothesis-profile NAME``, ``theorems certify --profile NAME``
or the environment variable ``HYPOTHESIS_PROFILE``.  A check's ``max_examples`` is
multiplied by the profile's factor (``thorough`` draws ten times as many).

Counterexamples are stored and replayed.  The ``dev`` and ``thorough`` profiles keep a
Hypothesis example database (:class:`~hypothesis.database.DirectoryBasedExampleDatabase`):
every failing draw of a property and every counterexample a falsifier's search finds is
saved under a key made of the claim id, the check kind and the variant, and the next run
of that check replays it before drawing anything new.  The database directory is
``$THEOREMS_HYPOTHESIS_DB`` when set, else ``.hypothesis/examples`` under the working
directory (Hypothesis' own convention, so ``pytest theorems --hypothesis-profile dev``
shares it with the rest of the project's tests).  ``theorems certify`` sets it to
``<out>/.hypothesis/examples``, so a certification directory carries its own
counterexamples: running ``certify --profile thorough --out DIR`` again replays them first.
The ``ci`` profile has no database and is derandomized, so CI runs are reproducible and
leave nothing behind.
"""
from __future__ import annotations

import hashlib
import os

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

PROFILES = ("ci", "dev", "thorough")
EXAMPLE_FACTOR = {"ci": 1, "dev": 1, "thorough": 10}
DB_ENV = "THEOREMS_HYPOTHESIS_DB"


def database_path() -> str:
    """Where the ``dev`` and ``thorough`` profiles store counterexamples."""
    return os.environ.get(DB_ENV) or os.path.join(".hypothesis", "examples")


class WorkerDatabase(ExampleDatabase):
    """The example database of one process among parallel ones (``pytest -n N``): it saves into its
    own folder ``<root>/<worker>`` (``PYTEST_XDIST_WORKER``; the root itself in a single process)
    and fetches from the root and every worker's folder, so that a counterexample found by any
    worker is replayed first next time, whichever worker runs that check."""

    def __init__(self, root: str, worker: str | None = None):
        super().__init__()
        self.root = os.path.abspath(root)
        self.worker = worker
        self.own = DirectoryBasedExampleDatabase(os.path.join(self.root, worker) if worker else self.root)

    def _readers(self):
        out = [DirectoryBasedExampleDatabase(self.root)]
        if os.path.isdir(self.root):
            for name in sorted(os.listdir(self.root)):
                if name.startswith("gw") and os.path.isdir(os.path.join(self.root, name)):
                    out.append(DirectoryBasedExampleDatabase(os.path.join(self.root, name)))
        return out

    def save(self, key: bytes, value: bytes) -> None:
        self.own.save(key, value)

    def fetch(self, key: bytes):
        seen = set()
        for db in self._readers():
            for v in db.fetch(key):
                if v not in seen:
                    seen.add(v)
                    yield v

    def delete(self, key: bytes, value: bytes) -> None:
        for db in self._readers():
            db.delete(key, value)

    def __repr__(self) -> str:
        return f"WorkerDatabase({self.root!r}, worker={self.worker!r})"


def _worker() -> str | None:
    return os.environ.get("PYTEST_XDIST_WORKER") or None


_common = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                      HealthCheck.data_too_large])
settings.register_profile("ci", derandomize=True, database=None, **_common)
settings.register_profile("dev", database=WorkerDatabase(database_path(), _worker()), **_common)
settings.register_profile("thorough", database=WorkerDatabase(database_path(), _worker()), **_common)

_env = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(_env if _env in PROFILES else "ci")


def current() -> str:
    name = settings.get_current_profile_name()
    return name if name in PROFILES else "ci"


def settings_for(max_examples: int | None, profile: str | None = None) -> settings:
    name = profile or current()
    if name not in PROFILES:
        from .params import ParamError
        raise ParamError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})")
    n = max(1, int((max_examples or 25) * EXAMPLE_FACTOR[name]))
    base = settings.get_profile(name)
    if base.database is None:  # ci: derandomized, nothing stored
        return settings(base, max_examples=n)
    return settings(base, max_examples=n, database=_database())


_DBS: dict[tuple, WorkerDatabase] = {}


def _database() -> WorkerDatabase:
    """The example database at :func:`database_path` (read at each call, so that a process
    can point it elsewhere through the environment), this worker's folder under it."""
    key = (os.path.abspath(database_path()), _worker())
    if key not in _DBS:
        _DBS[key] = WorkerDatabase(*key)
    return _DBS[key]


def database_key(claim_id: str, kind: str, variant: str) -> bytes:
    """The example-database key of one check: stable across runs and processes, distinct per
    check (Hypothesis' default key hashes the source of the test function, which here is the
    same generic function for every claim)."""
    return hashlib.sha256(f"theorems:{claim_id}:{kind}:{variant}".encode()).digest()


def run_info(profile: str | None = None) -> dict:
    """The seed policy and the example database of a profile (for the run's metadata)."""
    name = profile or current()
    from hypothesis import core
    seed = getattr(core, "global_force_seed", None)
    db = settings.get_profile(name).database if name in PROFILES else None
    return {"profile": name,
            "seed": "derandomized" if name == "ci" else (seed if seed is not None else "random"),
            "database": os.path.abspath(database_path()) if db is not None else None}
