"""theorems: a symbolic-numeric verification suite for deep-learning theory.

Each claim of the five documents is registered (:class:`theorems.claim.Claim`) with its
symbolic, numeric, property, falsifier and reproduction checks.  Run them with
``pytest theorems`` or the ``theorems`` command line.

The framework, in layers (each imports only those above it; ``tests/test_layers.py`` walks the
imports, function-level ones included):

* :mod:`theorems.params` - parameters: declaration, validation, strategies
* :mod:`theorems.vocabulary` - kinds, verdicts, statuses, backends, :class:`Outcome`
* :mod:`theorems.documents` - the five documents (metadata in each document's package)
* :mod:`theorems.registry` - the registry, the index, loading one claim or all
* :mod:`theorems.claim` - claim declaration and its check decorators
* :mod:`theorems.profiles`, :mod:`theorems.search` - Hypothesis profiles, properties, falsifier search
* :mod:`theorems.record` - the result record
* :mod:`theorems.runner` - running one check (backend, time box)
* :mod:`theorems.pytest_plugin` - ``pytest theorems`` (registered as a ``pytest11`` entry point)
* :mod:`theorems.cli`, :mod:`theorems.explore` - the command line

The names below are imported lazily, so ``import theorems`` costs nothing.
"""
__version__ = "0.1.0"

_LAZY = {"Claim": "claim", "Check": "claim", "Outcome": "vocabulary", "inconclusive": "vocabulary",
         "Param": "params", "Params": "params", "ParamError": "params", "all_claims": "registry",
         "get_claim": "registry", "run_check": "runner"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
