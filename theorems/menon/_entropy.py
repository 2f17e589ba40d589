"""Helpers shared by the menon modules sec6_2_orbit_entropy, sec6_2_volume_form, sec6_3_free_energy.

Conventions (catalogue menon §1, §2.5): ``lam`` sorted decreasingly, ``sigma = lam**N``;
``Qs = [Q_N, ..., Q_0]``; the Frobenius-orthonormal basis of so(d) is ``alpha_kl`` (8.7), so
``dQ = Q alpha da`` are Frobenius-orthonormal coordinates on O_d.  The orbit generators are the
rotated ones, ``A_p = Q_p alpha Q_p^T`` acting by ``Q_p -> exp(t A_p) Q_p = Q_p exp(t alpha)``
(catalogue §2.5 Lemma 2: the literal fixed-frame generators give a unitarily equivalent Gram).
"""
from __future__ import annotations

import math

import numpy as np


# ---------------------------------------------------------------------------
# shared helpers
def _sphere_volume(k: int) -> float:
    """vol(S^k) = 2 pi^{(k+1)/2} / Gamma((k+1)/2)."""
    return 2 * math.pi ** ((k + 1) / 2) / math.gamma((k + 1) / 2)


def _c_d(d: int) -> float:
    """Riemannian volume of O_d for <A,B> = Tr(A^T B) (erratum E11): 2 * 2^{d(d-1)/4} prod vol(S^k)."""
    return 2 * 2 ** (d * (d - 1) / 4) * math.prod(_sphere_volume(k) for k in range(1, d))


def _poly_det(M):
    """Exact determinant of a matrix with polynomial entries, by fraction-free elimination over QQ[a, b]
    (sympy DomainMatrix): no expression swell."""
    from sympy.polys.matrices import DomainMatrix
    dM = DomainMatrix.from_Matrix(M)
    return dM.domain.to_sympy(dM.det())


def _rot(th):
    c, s = np.cos(th), np.sin(th)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
