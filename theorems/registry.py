"""The registry of claims and loading that costs what it runs.

``theorems check ID`` imports the one module that declares ID, found in the index
(``theorems/index.json``: claim id -> module, and each claim's description, the output of
``theorems list``).  The index records a hash of every claim module's source (and of the
declaration layer), so it is used only while it is fresh; a stale index (a claim edited and the
index not rebuilt) falls back to importing every claim module, which is always correct, and the
index is then rewritten where the package folder is writable.  ``tests/test_layers.py`` keeps the
committed index fresh; ``python -m theorems.registry`` rebuilds it.

This module imports nothing of the framework at module level (the claims register themselves
through :data:`registry` when their modules are imported).
"""
from __future__ import annotations

import hashlib
import importlib
import json
import pkgutil
from pathlib import Path

from .documents import KEYS
from .params import ParamError

__all__ = ["registry", "load_all", "load_claim", "all_claims", "get_claim", "index", "build_index",
           "write_index", "index_is_fresh"]

PKG = Path(__file__).resolve().parent
INDEX = PKG / "index.json"
#: framework files whose code shapes a claim's description (a change makes the index stale)
_SHAPING = ("claim.py", "params.py", "vocabulary.py", "documents.py")


class _Registry(dict):
    def add(self, claim) -> None:
        if claim.id in self:
            raise ValueError(f"claim id {claim.id!r} registered twice ({self[claim.id].module} and {claim.module})")
        self[claim.id] = claim


registry: _Registry = _Registry()
_loaded = False


def claim_modules() -> list[str]:
    """Every claim module, by scanning the document packages' folders (no import)."""
    out = []
    for doc in KEYS:
        folder = PKG / doc
        for info in pkgutil.iter_modules([str(folder)]):
            if not info.name.startswith("_"):
                out.append(f"theorems.{doc}.{info.name}")
    return out


def load_all() -> _Registry:
    """Import every claim module so that all claims are registered."""
    global _loaded
    if not _loaded:
        for mod in claim_modules():
            importlib.import_module(mod)
        _loaded = True
    return registry


# ---------------------------------------------------------------------------
# the index
def _source_hash() -> str:
    h = hashlib.sha256()
    files = [PKG / f for f in _SHAPING] + sorted(p for doc in KEYS for p in (PKG / doc).glob("*.py"))
    for p in files:
        h.update(str(p.relative_to(PKG)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def build_index() -> dict:
    """The index of every registered claim (imports all of them)."""
    load_all()
    # in the order of the documents and their modules (not of import: pytest imports them in another
    # order), each module's claims in declaration order; a claim declared elsewhere (a test's toy) is left out
    order = {m: i for i, m in enumerate(claim_modules())}
    claims = [c.describe() for c in sorted((c for c in registry.values() if c.module in order),
                                           key=lambda c: order[c.module])]
    return {"source_hash": _source_hash(), "claims": claims}


def write_index(path: Path = INDEX) -> Path:
    return _write(build_index(), path)


def _write(data: dict, path: Path = INDEX) -> Path:
    global _index_cache, _fresh
    from .record import dumps
    path.write_text(dumps(data, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    _index_cache, _fresh = None, None
    return path


_index_cache: dict | None = None


def _read_index() -> dict | None:
    global _index_cache
    if _index_cache is None:
        try:
            data = json.loads(INDEX.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        _index_cache = data
    return _index_cache


_fresh: bool | None = None


def index_is_fresh() -> bool:
    """Whether the index was built from these sources (hashed once per process)."""
    global _fresh
    if _fresh is None:
        data = _read_index()
        _fresh = data is not None and data.get("source_hash") == _source_hash()
    return _fresh


def index(document: str | None = None) -> list[dict]:
    """The claims' descriptions without importing any claim module when the index is fresh."""
    if document is not None and document not in KEYS:
        raise ParamError(f"unknown document {document!r} (known: {', '.join(KEYS)})")
    if index_is_fresh():
        claims = _read_index()["claims"]
    else:
        built = build_index()
        claims = built["claims"]
        try:  # refresh it for the next command (an installed, read-only package keeps the old one)
            _write(built)
        except OSError:
            pass
    return [c for c in claims if document is None or c["document"] == document]


def load_claim(claim_id: str) -> None:
    """Import the module that declares ``claim_id`` (by the index), or every module."""
    if claim_id in registry:
        return
    data = _read_index() if index_is_fresh() else None
    module = None
    if data is not None:
        module = next((c["module"] for c in data["claims"] if c["id"] == claim_id), None)
    if module is not None:
        importlib.import_module(module)
        if claim_id in registry:
            return
    load_all()


def all_claims(document: str | None = None) -> list:
    if document is not None and document not in KEYS:
        raise ParamError(f"unknown document {document!r} (known: {', '.join(KEYS)})")
    load_all()
    return [c for c in registry.values() if document is None or c.document == document]


def get_claim(claim_id: str):
    known = None
    if claim_id not in registry and index_is_fresh():
        known = [c["id"] for c in _read_index()["claims"]]
    if known is None or claim_id in known:
        load_claim(claim_id)
    try:
        return registry[claim_id]
    except KeyError:
        import difflib
        if known is None:
            load_all()
            known = list(registry)
        close = difflib.get_close_matches(claim_id, known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ParamError(f"unknown claim id {claim_id!r}{hint}") from None


if __name__ == "__main__":  # python -m theorems.registry: rebuild the index
    from theorems import registry as _reg  # the package's module, where the claims register
    print(f"wrote {_reg.write_index()} ({len(_reg.registry)} claims)")
