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
from hypothesis.database import DirectoryBasedExampleDatabase

PROFILES = ("ci", "dev", "thorough")
EXAMPLE_FACTOR = {"ci": 1, "dev": 1, "thorough": 10}
DB_ENV = "THEOREMS_HYPOTHESIS_DB"


def database_path() -> str:
    """Where the ``dev`` and ``thorough`` profiles store counterexamples."""
    return os.environ.get(DB_ENV) or os.path.join(".hypothesis", "examples")


_common = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                      HealthCheck.data_too_large])
settings.register_profile("ci", derandomize=True, database=None, **_common)
settings.register_profile("dev", database=DirectoryBasedExampleDatabase(database_path()), **_common)
settings.register_profile("thorough", database=DirectoryBasedExampleDatabase(database_path()), **_common)

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


_DBS: dict[str, DirectoryBasedExampleDatabase] = {}


def _database() -> DirectoryBasedExampleDatabase:
    """The example database at :func:`database_path` (read at each call, so that a process
    can point it elsewhere through the environment)."""
    path = os.path.abspath(database_path())
    if path not in _DBS:
        _DBS[path] = DirectoryBasedExampleDatabase(path)
    return _DBS[path]


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
