"""theorems: a symbolic-numeric verification suite for deep-learning theory.

Each claim of the five documents is registered (``theorems.core.Claim``) with its
symbolic, numeric, property, falsifier and reproduction checks.  Run them with
``pytest theorems`` or the ``theorems`` command line.
"""
__version__ = "0.1.0"

from .core import Claim, Outcome, Param, Params, ParamError, all_claims, get_claim, inconclusive, run_check  # noqa: F401
