"""Root conftest: registers the claim collector and the Hypothesis profiles for `pytest theorems`."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # threaded BLAS on tiny matrices was 25x slower
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from theorems.pytest_plugin import *  # noqa: E402,F401,F403  (hooks)
from theorems.pytest_plugin import pytest_addoption, pytest_collect_file, pytest_configure  # noqa: E402,F401
