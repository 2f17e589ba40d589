"""The seed text of van Rossem & Saxe, read by the vanrossem claim modules that check printed tables and
typos (Table 2, the notation slips): its lines, Table 2's rows, and the inconclusive outcome when it is absent.
"""
from __future__ import annotations

import os
import re

from theorems.claim import inconclusive
from theorems.documents import DOCUMENTS


# ---------------------------------------------------------------------------
# the seed text
_SEED_NAME = DOCUMENTS["vanrossem"][0]


def _seed_lines():
    """The seed file's lines (1-based list with a dummy 0), or None when it is not on this machine."""
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.environ.get("THEOREMS_SEEDS", ""), "/work/shared/seeds",
             os.path.join(here, "..", "..", "..", "shared", "seeds"), os.path.join(here, "..", "..", "seeds")]
    for d in cands:
        f = os.path.join(d, _SEED_NAME) if d else ""
        if f and os.path.exists(f):
            with open(f, encoding="utf-8") as fh:
                return [""] + fh.read().split("\n")
    return None


def _table2(L):
    rows = {}
    for ln in range(535, 544):
        m = re.match(r"(.+?)\s+(leaky relu|tanh|relu|none)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", L[ln])
        if m:
            rows[m.group(1).strip()] = {"nonlinearity": m.group(2), "gain": float(m.group(3)),
                                        "lr": float(m.group(4)), "epochs": int(m.group(5)),
                                        "units": int(m.group(6)), "hidden": int(m.group(7)), "line": ln}
    return rows


def _need_seed():
    L = _seed_lines()
    if L is None:
        return None, inconclusive("seed file not found (set THEOREMS_SEEDS): Table 1/2 are read from it")
    return L, None
