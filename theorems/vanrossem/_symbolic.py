"""SymPy helpers shared by the vanrossem symbolic checks: the symbols of the reduced system, Eq 7 as printed
(and the Eq 51 alterations, catalogue U3) and Eq 16 on symbolic matrices.
"""
from __future__ import annotations

import sympy as sp


# ---------------------------------------------------------------------------
# sympy helpers shared by the symbolic checks
def _sym():
    th, ty, a, b, u, v, w = sp.symbols("tau_h tau_y a b u v w", positive=True)
    return th, ty, a, b, u, v, w


def _eq7_sym(th, ty, a, b, u, v, w, variant=None):
    """Eq 7 as printed (variant None) or one of the Eq 51 alterations (catalogue U3)."""
    du = -a / th * w
    dv = -w * (u / ty + a / th * v / u)
    dw = -(3 * w - v + b) * u / (2 * ty) - a / (2 * th) * (v + w) * w / u
    if variant == "factor2":
        dv = 2 * dv
    elif variant == "noterm":
        dv = -w * u / ty
    elif variant == "square":
        du = -a / th * w ** 2
    elif variant == "plus":
        dw = -(3 * w - v + b) * u / (2 * ty) + a / (2 * th) * (v + w) * w / u
    return du, dv, dw


def _sym_eq16(n):
    """Symbolic n x n D_h, D_y, the two inputs/targets, the mean output and the Eq 16 residuals."""
    Dh = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"h{i}{j}"))
    Dy = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"g{i}{j}"))
    x1, x2, y1, y2, yb = (sp.Matrix(n, 1, lambda i, j, c=c: sp.Symbol(f"{c}{i}")) for c in ("xa", "xb", "ya", "yb", "m"))
    r1 = yb + Dy * Dh * (x1 - x2) / 2 - y1
    r2 = yb + Dy * Dh * (x2 - x1) / 2 - y2
    return Dh, Dy, x1, x2, y1, y2, yb, r1, r2
