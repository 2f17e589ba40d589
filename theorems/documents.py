"""The five documents (DESIGN.md contract): key, seed file, title, catalogues.

Each document's metadata lives in its own package (``theorems/<key>/__init__.py`` defines
``SEED``, ``TITLE`` and ``CATALOGUES``); importing a package runs only that ``__init__``, never
its claim modules, so this costs microseconds.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["KEYS", "Document", "document", "DOCUMENTS"]

#: the documents in the order of their seed files (and of every report)
KEYS = ("jacot", "vanrossem", "menon", "chen", "sander")


@dataclass(frozen=True)
class Document:
    key: str
    seed: str
    title: str
    catalogues: tuple


def document(key: str) -> Document:
    pkg = importlib.import_module(f"theorems.{key}")
    return Document(key, pkg.SEED, pkg.TITLE, tuple(pkg.CATALOGUES))


#: key -> (seed file, catalogue files), as DESIGN.md's table
DOCUMENTS = {k: (d.seed, d.catalogues) for k, d in ((k, document(k)) for k in KEYS)}
