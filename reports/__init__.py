"""Turns result records into summaries, the check-strength report, and HTML and LaTeX reports.

``summary`` (verdict counts per document), ``strength`` (symbolic mutants killed, bounds' best
tightness, falsifier margins, sweep tallies: the ``strength`` object of ``results.json``, whose
layout is in :mod:`reports.strength`), ``view`` (the one view model of a record), ``html``,
``latex`` and ``plots``.  Reads only result records, claim descriptions and sweep tallies (plain
dicts from ``results.json`` / ``sweep.json``); it imports nothing from ``theorems``.
"""
from .summary import summarise, summary_table  # noqa: F401
