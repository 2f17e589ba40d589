"""Hypothesis profiles: ``ci`` (derandomized, the default), ``dev`` and ``thorough``.

Select one with ``pytest --hypothesis-profile NAME``, ``theorems certify --profile NAME``
or the environment variable ``HYPOTHESIS_PROFILE``.  A check's ``max_examples`` is
multiplied by the profile's factor (``thorough`` draws ten times as many).
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILES = ("ci", "dev", "thorough")
EXAMPLE_FACTOR = {"ci": 1, "dev": 1, "thorough": 10}

_common = dict(deadline=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                      HealthCheck.data_too_large])
settings.register_profile("ci", derandomize=True, database=None, **_common)
settings.register_profile("dev", **_common)
settings.register_profile("thorough", **_common)

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
    return settings(settings.get_profile(name), max_examples=n)
