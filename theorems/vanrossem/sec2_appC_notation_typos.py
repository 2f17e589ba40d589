"""Typos and notation slips across the document, §2.2 to App. C.3 (seed l.81-612; catalogue E12): Eq 5, Eq 9, Eq 18,
Eq 22, Eq 30, Table 2 and the figure captions, each read from the seed text.
Claim: ``vanrossem.notation_typos``.

Conventions: see :mod:`theorems.vanrossem._common`.
"""
from __future__ import annotations

import math
import re

import numpy as np
import sympy as sp

from solvers import twopoint as tp
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.vanrossem._common import EPS
from theorems.vanrossem._seed import _SEED_NAME, _seed_lines, _table2
from theorems.vanrossem._two_point_instances import _loss16


# ===========================================================================
# 6. Typos and notation slips (catalogue E12)
def _latex_of(line):
    """The LaTeX source of a display line: from its first backslash (the Unicode rendering before it has none) to
    the MathML word dump after it."""
    i = line.find("\\")
    if i < 0:
        return ""
    ends = [j for j in (line.find(m, i) for m in ("italic_", "start_ROW", "start_ARG", "roman_", "start_POST",
                                                     "divide start")) if j > 0]
    return line[i:min(ends)] if ends else line[i:]


def _paren_balance(tex):
    tex = tex.replace(r"\left(", "(").replace(r"\right)", ")")
    return tex.count("(") - tex.count(")")


def _typo_eq9_parentheses(L):
    """l.130: Eq 9 closes with ')))': one ')' too many."""
    tex = _latex_of(L[130])
    stated = _paren_balance(tex)
    corrected = _paren_balance(tex.replace("))),", ")),"))
    return abs(stated), abs(corrected), {"eq9_latex_tail": tex[-60:], "paren_excess": -stated}


def _typo_y0(L):
    """l.130, l.331, l.353: 'y(0)' stands for ybar(0). Text: every Eq 9/18/22 uses (y(0) - (y_2+y_1)/2). Numeric:
    the Eq 9 loss at t = 0 equals Eq 16 with y(0) := ybar(0), not with y(0) := the prediction at x_1 or x_2."""
    hits = {ln: _latex_of(L[ln]).count(r"(y(0)-\frac{y_{2}+y_{1}}{2})") for ln in (130, 331, 353)}
    rng = np.random.default_rng(12)
    x1, x2, y1, y2 = rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(2)
    Dh, Dy, ybar = rng.standard_normal((3, 2)), rng.standard_normal((2, 3)), rng.standard_normal(2)
    L16 = _loss16(ybar, Dh, Dy, x1, x2, y1, y2)
    dY = y2 - y1
    dy = Dy @ Dh @ (x2 - x1)
    w, v, b = float(dy @ dy - dy @ dY), float(dy @ dy), float(dY @ dY)

    def eq9(y0):
        m = y0 - 0.5 * (y1 + y2)
        return 0.5 * float(m @ m) + 0.25 * (w + 0.5 * (b - v))
    pred_x1 = ybar - 0.5 * dy                      # the literal y(0): a network output (at x_1)
    tol = 64 * EPS * (abs(L16) + v + b)
    corrected = abs(eq9(ybar) - L16)
    stated = abs(eq9(pred_x1) - L16)
    missing = sum(1 for c in hits.values() if c < 1)
    return (stated / tol if stated > tol else 0.0) + missing, (corrected / tol if corrected > tol else 0.0) + missing, {
        "y0_occurrences": hits, "eq9_with_ybar0": eq9(ybar), "eq9_with_prediction_at_x1": eq9(pred_x1),
        "eq16": L16}


def _typo_mnist(L):
    """l.542-543: Table 2 rows 'MINST' for the MNIST data set of App. B.4."""
    table = " ".join(L[532:544])
    stated = table.count("MINST")
    fixed = table.replace("MINST", "MNIST")
    return stated, fixed.count("MINST") + (0 if "MNIST" in " ".join(L[555:560]) else 1), {
        "table2_minst_count": stated}


def _typo_layer_counts(L):
    """Blob network: Fig 8 (l.211) and B.3 (l.553) say 5-layer, Fig 13 (l.612) says 4-layer, Table 2 says 4 hidden
    layers. Stated: the counts agree. Corrected: each count is hidden (4) or hidden + 1 Linear layers (5)."""
    rows = _table2(L)
    hidden = {r["hidden"] for k, r in rows.items() if k.startswith("Blobs")}
    c8 = re.search(r"(\d+)-layer, tanh", L[211])
    c3 = re.search(r"(\d+) layer fully connected", L[553])
    c13 = re.search(r"(\d+)-layer, tanh", L[612])
    counts = [int(c.group(1)) for c in (c8, c3, c13) if c]
    if len(counts) < 3 or len(hidden) != 1:
        return 1.0, 1.0, {"parse": "failed"}
    H = hidden.pop()
    stated = len(set(counts + [H])) - 1                     # distinct values beyond one
    corrected = sum(1 for c in counts if c not in (H, H + 1))
    return stated, corrected, {"fig8_blobs_layers": counts[0], "b3_layers": counts[1], "fig13_layers": counts[2],
                               "table2_hidden": H}


def _typo_units(L):
    """Fig 4 caption (l.145): '100 units' for the MNIST net; Table 2: 200 units."""
    m = re.search(r"(\d+) units", L[145])
    rows = _table2(L)
    units = {r["units"] for k, r in rows.items() if k.startswith("MINST") or k.startswith("MNIST")}
    if not m or len(units) != 1:
        return 1.0, 1.0, {"parse": "failed"}
    u = units.pop()
    return float(int(m.group(1)) != u), 0.0, {"fig4_units": int(m.group(1)), "table2_units": u}


def _typo_trace_tau(L):
    """Eq 30 (l.391) names the trace of the Jacobian 'tau', the letter of the time constants tau_h, tau_y. Symbolic
    part of the corrected reading: the right-hand side of Eq 30 is the trace of the Eq 29 Jacobian at u*."""
    tex = _latex_of(L[391])
    stated = int(tex.startswith(r"\tau=") and r"\tau_{y}" in tex)
    th, ty, a = sp.symbols("tau_h tau_y a", positive=True)
    AH, AL = sp.Symbol("A_H", real=True), sp.Symbol("A_L", positive=True)
    ustar = AH / 2 + sp.sqrt(AH ** 2 / 4 + AL ** 2)
    v = th / (ty * a) * ustar * (ustar - AH)
    J22 = -sp.Rational(3, 2) * ustar / ty - a / (2 * th) * v / ustar   # d(dw/dt)/dw at w = 0 (Eq 7 on Eq 24)
    eq30 = -(AH / 2 + sp.sqrt(AH ** 2 + 4 * AL ** 2)) / ty
    corrected = int(sp.simplify(sp.expand(J22 - eq30)) != 0)
    return stated, corrected, {"eq30_lhs": tex[:5]}


def _typo_decoder_argument(L):
    """l.81: 'y_psi(x_i)' for y_psi(h_phi(x_i)); y_psi is a map H -> Y (l.61), so the printed argument is ill-typed."""
    tex = _latex_of(L[81])
    stated = tex.count(r"y_{\psi}(x_{i})")
    return stated, 0 if r"y_{\psi}(h_{\phi}(" in tex else 1, {"printed_occurrences": stated}


def _typo_squared_distance(L):
    """l.170-174: 'the final representational distance converges to A_high/A_low' means the SQUARED distance
    (Eq 10 has |dh|^2 on the left). Checked on the catalogue's exact example (u_inf = 5/6): the converged |dh|^2,
    not |dh|, equals Eq 10."""
    # NumPy Dormand-Prince (no Numba compile for one small run); rtol 1e-10
    res = tp.solve_to_equilibrium(0.3, 0.2, 0.2, 0.25, 1.0, 1.0, 4.0, backend="numpy", rtol=1e-10)
    AH, AL = tp.a_high(0.3, 0.2, 0.25, 1.0, 4.0), tp.a_low(0.25, 1.0, 1.0, 4.0)
    u_star = tp.eq10(AH, AL)
    # error model (as vanrossem.two_point_fixed_point): drift of the conserved A_high + 2 x the Newton distance
    # + the local error 10 rtol u*
    tol = abs(res["AH_end"] - res["AH0"]) + 2 * abs(res["du"]) + 1e-9 * u_star
    text_ok = "||dh||^{2}=\\frac{1}{2}A_{\\text{high}}" in L[158]
    stated, corrected = abs(math.sqrt(res["u"]) - u_star) / tol, abs(res["u"] - u_star) / tol
    return (stated if stated > 1 else 0.0, (corrected if corrected > 1 else 0.0) + (0 if text_ok else 1),
            {"dh2_inf": res["u"], "dh_inf": math.sqrt(res["u"]), "eq10": u_star})


_TYPOS = {
    "eq9_parentheses": _typo_eq9_parentheses,
    "y0_means_ybar": _typo_y0,
    "decoder_argument": _typo_decoder_argument,
    "trace_named_tau": _typo_trace_tau,
    "squared_distance": _typo_squared_distance,
    "mnist_spelling": _typo_mnist,
    "blob_layer_counts": _typo_layer_counts,
    "mnist_units": _typo_units,
}

typos = Claim(
    id="vanrossem.notation_typos",
    title="Typos and notation slips (Eq 9 brackets, y(0), y_psi(x_i), trace 'tau', squared distance, MINST, "
          "layer and unit counts)",
    label="E12",
    section="2.2, 3, 4.1, A.1, A.3, B, C.3",
    equation="(5), (9), (18), (22), (30); Tables 2",
    lines=(81, 612),
    statement=r"\text{as printed: Eq 9 }\ldots\|dy\|^2)))\text{, }y(0)\text{ in Eqs 9, 18, 22, }y_\psi(x_i)\text{ (l.81), "
              r"}\tau=\mathrm{tr}J\text{ (Eq 30), 'distance' converges to }A\text{, 'MINST', 5-layer vs 4-layer vs 4 "
              r"hidden, 100 vs 200 units}",
    status="erratum",
    corrected=r"\text{one ')' fewer in Eq 9; }y(0)\to\bar y(0);\ y_\psi(x_i)\to y_\psi(h_\phi(x_i));\ "
              r"\mathrm{tr}J\text{ named apart from }\tau_h,\tau_y;\ \|dh(\infty)\|^2\to A;\ \text{MNIST; blob net = 4 "
              r"hidden = 5 Linear layers; one unit count}",
    params=[Param.choice("typo", "all", ["all"] + list(_TYPOS), "which slip to check (all: every one)")],
    notes="Each slip is read from the seed text (its LaTeX source) and checked in its printed and its corrected "
          "reading; where an equation is involved the reading is also checked numerically or symbolically "
          "(y(0) := ybar(0) makes Eq 9 equal Eq 16 at t = 0; Eq 30's right side is the trace of the Eq 29 Jacobian; "
          "the converged |dh|^2, not |dh|, equals Eq 10). Residual of the corrected check = number of corrected "
          "readings that fail; of the 'stated' falsifier = the inconsistency of the least inconsistent printed reading "
          "(a mismatch count or an exact difference; refuted when every printed reading is inconsistent, so each "
          "slip is shown wrong, not only the worst). Not encoded: the eigenvector named (a, b) at l.405 (consistent within the paper, "
          "it only clashes with the catalogue's a, b); '|dh|^6 = u^3' at l.367 (notation; Eq 25 itself is checked by "
          "vanrossem.conservation_law). Inconclusive if the seed file is not on this machine.",
    catalogue="vanrossem §4 E12",
    covers=("E12",),
)


def _typo_outcome(p, which):
    L = _seed_lines()
    if L is None:
        return inconclusive(f"seed file {_SEED_NAME} not found (set THEOREMS_SEEDS to its directory)")
    names = list(_TYPOS) if p.typo == "all" else [p.typo]
    per, values = {}, {}
    for n in names:
        stated, corrected, vals = _TYPOS[n](L)
        per[n] = {"stated": float(stated), "corrected": float(corrected)}
        values[n] = vals
    if which == "stated":
        # the printed text is refuted when EVERY selected slip is inconsistent as printed
        # residual: the LEAST inconsistent printed reading (each measure is exact: a count of mismatching
        # tokens or a difference far from rounding), refuted when even it is > 0; a count of inconsistent
        # readings against len - 1 would cap the margin at len / (len - 1) whatever the slips are
        consistent = [n for n in names if per[n]["stated"] <= 0]
        return Outcome(residual=min(per[n]["stated"] for n in names), tolerance=0.0,
                       values={"per_typo": per, "printed_consistent": consistent, **values},
                       message=f"{len(names) - len(consistent)} of {len(names)} printed readings inconsistent")
    failing = [n for n in names if per[n]["corrected"] > 0]
    return Outcome(residual=float(len(failing)), tolerance=0.0,
                   values={"per_typo": per, "corrected_failing": failing, **values},
                   message=f"{len(failing)} of {len(names)} corrected readings fail")


@typos.numeric
def typos_numeric(p):
    """Every corrected reading is consistent with the seed text and the mathematics."""
    return _typo_outcome(p, "corrected")


@typos.falsifier("stated")
def typos_stated(p):
    """The printed readings: each one is inconsistent (refuted when all selected slips are)."""
    return _typo_outcome(p, "stated")
