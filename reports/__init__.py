"""Turns result records into summaries (and, in a later issue, HTML and LaTeX reports).

Reads only result records and claim descriptions (plain dicts from ``results.json``);
it imports nothing from ``theorems``.
"""
from .summary import summarise, summary_table  # noqa: F401
