"""The array-API backends (issue 24): declaration, dispatch, agreement with NumPy, command line.

A check that offers ``cupy`` runs one array-API code path (``solvers.xp.xp_of``); it offers
``array_api_strict`` too, which runs that same code on the CPU, so CI (no GPU) tests every such path and
anything NumPy-only in it fails here.  The per-claim items (``numeric[...@array_api_strict]``) are
collected by the plugin and held to the NumPy record; this file tests the machinery itself.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from theorems.registry import all_claims, get_claim
from theorems.vocabulary import ARRAY_API_BACKENDS

#: issue 24's bar: claims whose numeric check offers CuPy (each tested under array-api-strict)
CUPY_CLAIMS_AT_LEAST = 100


def _cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "theorems", *args], capture_output=True, text=True,
                          timeout=timeout)


def _cupy_checks():
    return [(c, k) for c in all_claims() for k in c.checks if "cupy" in k.backends]


def test_every_cupy_check_offers_array_api_strict():
    found = _cupy_checks()
    assert found, "no check offers cupy"
    for c, k in found:
        assert "array_api_strict" in k.backends, f"{c.id} {k.nodeid}: cupy without array_api_strict"
        assert k.kind in ("numeric", "falsifier"), f"{c.id} {k.nodeid}: a {k.kind} check cannot offer cupy"


def test_claims_offering_cupy_reach_the_bar():
    claims = {c.id for c, k in _cupy_checks() if k.kind == "numeric"}
    assert len(claims) >= CUPY_CLAIMS_AT_LEAST, sorted(claims)


def test_declaring_cupy_adds_array_api_strict_and_rejects_unknown():
    from theorems.claim import _backends
    assert _backends("x", ("numpy", "cupy")) == ("numpy", "cupy", "array_api_strict")
    assert _backends("x", ("numpy", "numpy", "numba")) == ("numpy", "numba")
    with pytest.raises(ValueError, match="unknown backend"):
        _backends("x", ("numpy", "jax"))


def test_xp_of_and_on_move_host_arrays_to_the_namespace():
    np = pytest.importorskip("numpy")
    strict = pytest.importorskip("array_api_strict")
    from solvers.xp import asnumpy, on, xp_of
    xp = xp_of("array_api_strict")
    assert xp is strict
    A = on(xp, np.arange(4.0).reshape(2, 2))
    assert type(A).__module__.startswith("array_api_strict") and A.dtype == strict.float64
    np.testing.assert_array_equal(asnumpy(A @ A), np.arange(4.0).reshape(2, 2) @ np.arange(4.0).reshape(2, 2))
    # NumPy-only calls are refused on the strict namespace: what the strict items exist to catch
    with pytest.raises(AttributeError):
        xp.einsum  # noqa: B018


def test_agreement_with_numpy_is_enforced():
    """A strict record whose verdict or residual departs from NumPy's (beyond the tolerance) is an error."""
    from theorems.pytest_plugin import _NUMPY_RECORDS, _agree_with_numpy
    from theorems.runner import run_check
    claim = get_claim("menon.a_operator_transpose")
    check = next(k for k in claim.checks if k.kind == "numeric")
    ref = run_check(check, backend="numpy")
    rec = run_check(check, backend="array_api_strict")
    assert rec["verdict"] == ref["verdict"] == "certified"
    _NUMPY_RECORDS[(claim.id, check.nodeid)] = ref
    ok = _agree_with_numpy(check, rec)
    assert ok["verdict"] == "certified" and "numpy_agreement" in ok["values"]
    off = dict(rec, residual=ref["residual"] + 2 * ref["tolerance"])
    assert _agree_with_numpy(check, off)["verdict"] == "error"
    other = dict(rec, verdict="inconclusive")
    assert _agree_with_numpy(check, other)["verdict"] == "error"


def test_list_backend_filters_and_refuses_unknown():
    r = _cli("list", "--backend", "cupy", "--json")
    assert r.returncode == 0, r.stderr
    ids = {c["id"] for c in json.loads(r.stdout)}
    assert "menon.a_operator_transpose" in ids
    for c in json.loads(r.stdout):
        assert any("cupy" in k.get("backends", ()) for k in c["checks"])
    bad = _cli("list", "--backend", "fortran")
    assert bad.returncode == 2 and "unknown backend" in bad.stderr and "Traceback" not in bad.stderr


def test_certify_backend_cupy_without_a_device_is_one_clear_line(tmp_path):
    from solvers.xp import cupy_available
    if cupy_available()[0]:
        pytest.skip("CuPy and a device are here: the refusal is for machines without them")
    r = _cli("certify", "--backend", "cupy", "--document", "menon", "--select", "a_operator_transpose",
             "--out", str(tmp_path))
    assert r.returncode == 2
    assert "--backend cupy" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_certify_array_api_strict_runs_offering_checks_there_and_reports_it(tmp_path):
    r = _cli("certify", "--backend", "array_api_strict", "--document", "menon", "--select",
             "a_operator_transpose or balanced_invariance", "--out", str(tmp_path), timeout=900)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["meta"]["backend"] == "array_api_strict"
    by = {(x["claim"], x["check"]): x["backend"] for x in res["records"]}
    assert by[("menon.a_operator_transpose", "numeric")] == "array_api_strict"
    assert by[("menon.balanced_invariance", "numeric")] in ("numpy", "numba")   # offers no array API: CPU
    assert res["summary"]["ran_on"].get("array_api_strict", 0) >= 1
    html = (tmp_path / "report.html").read_text()
    assert 'id="ran-on"' in html and "--backend array_api_strict" in html


def test_sweep_runs_offering_claims_on_the_array_api_backend_and_the_rest_on_numpy():
    from theorems.sweep import sweep, sweepable
    claims, skipped = sweepable(claim_ids=["menon.a_operator_transpose", "menon.balanced_invariance"],
                                backend="array_api_strict")
    out = sweep(claims, draws=2, seed=5, backend="array_api_strict", scheduler="serial", workers=1)
    assert out["meta"]["ran_on"] == {"array_api_strict": 1, "numpy": 1}
    assert out["claims"]["menon.a_operator_transpose"]["backend"] == "array_api_strict"
    assert "backend" not in out["claims"]["menon.balanced_invariance"]
    assert out["summary"]["errors"] == 0 and out["summary"]["refuted_true"] == 0


@pytest.mark.parametrize("backend", ARRAY_API_BACKENDS)
def test_array_api_backends_are_known(backend):
    from theorems.vocabulary import BACKENDS
    assert backend in BACKENDS
