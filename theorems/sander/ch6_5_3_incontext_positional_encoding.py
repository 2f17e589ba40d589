"""§6.5.3 Positional encoding-only attention (seed l.4274-4291; proof §6.A.10, l.4610-4631): the conditioning of
the PE-only loss (Prop 6.12, l.4282-4288; erratum E6.3).  Claim: ``sander.incontext_pe_conditioning``.

Conventions and the exact-expectation error model (chapter 6): ``theorems.sander._attention``.
"""
from __future__ import annotations

import numpy as np

from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Prop 6.12 / E6.3 PE-only conditioning
def _pe_H_quadrature(T, mu, n=400):
    """E[lambda^(2t-T) conj(lambda^(2t'-T))] for lambda = exp(i theta/mu), theta ~ U(0, 2 pi): Gauss-Legendre in theta
    (entire integrand of frequency <= 2T/mu: n = 400 nodes is exact to rounding); real part = the quadratic form."""
    x, w = np.polynomial.legendre.leggauss(n)
    th = np.pi * (x + 1)
    lam = np.exp(1j * th / mu)
    t = np.arange(1, T + 1)
    V = lam[None, :] ** (2 * t[:, None] - T)
    H = (V * w[None, :]) @ np.conj(V).T / 2
    b = (V * w[None, :]) @ np.conj(lam ** T) / 2
    return H.real, b.real


def _pe_H_formula(T, mu):
    t = np.arange(1, T + 1)
    D = (t[None, :] - t[:, None]).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        H = mu / (4 * np.pi * D) * np.sin(4 * np.pi * D / mu)
    H[D == 0] = 1.0
    return H


pe = Claim(
    id="sander.incontext_pe_conditioning",
    title="PE-only attention: the loss (6.7) has quadratic-form matrix sinc(4 pi (t'-t)/mu), ill-conditioned as mu grows",
    label="Prop 6.12",
    section="6.5.3",
    equation="(6.7)",
    lines=(4282, 4288),
    statement=r"\text{Hessian of }l:\ H_{t,t'}=\frac{\mu}{4\pi(t'-t)}\sin(4(t'-t))\frac\pi\mu;\ \sigma_1(\mu)\to T,\ "
              r"\sigma_{t>1}(\mu)\to0\ (\mu\to\infty)",
    status="erratum",
    corrected=r"l(p)=p^\top Hp-2b^\top p+1\ \text{with}\ H_{t,t'}=\frac{\mu}{4\pi(t'-t)}\sin\frac{4\pi(t'-t)}{\mu},\ H_{tt}=1"
              r"\ (\text{the Hessian is }2H);\ \sigma_1(H)\to T,\ \sigma_{t>1}(H)\to0",
    params=[
        Param.int("T", 10, 2, 20, "sequence length", search=(2, 12)),
        Param.float("mu", 20.0, 1.0, 1e4, "symmetry-breaking parameter mu >= 1", search=(1.0, 200.0)),
    ],
    notes="E6.3 (typo and naming): the formula is garbled ('sin(4(t'-t)) pi/mu'), and it is the matrix of the quadratic "
          "form, half the Hessian; 'Proposition 6.7' at l.4288 should read 6.12. Checked: quadrature H against the "
          "formula, the Hessian (exact for a quadratic: second differences) against 2H, and trace H = T so "
          "sum_{t>1} sigma_t = T - sigma_1. The limit is tested by the reproduction (sigma_1 at mu = 5 .. 1000).",
    catalogue="sander_part23 §2.3 P6.12; §4 E6.3",
    covers=("P6.12", "E6.3"),
)


def _pe_hessian(T, mu):
    H, b = _pe_H_quadrature(T, mu)
    l = lambda p: float(p @ H @ p - 2 * b @ p + 1)
    Hs = np.zeros((T, T))
    h = 1.0                                  # exact for a quadratic (second differences have no truncation)
    for i in range(T):
        for j in range(T):
            ei, ej = np.eye(T)[i] * h, np.eye(T)[j] * h
            Hs[i, j] = (l(ei + ej) - l(ei - ej) - l(-ei + ej) + l(-ei - ej)) / (4 * h * h)
    return H, Hs


def _pe_xp(xp, T, mu, n=400):
    """_pe_H_quadrature and _pe_hessian on the array path: the quadrature nodes (Gauss-Legendre, host) moved once;
    H and b from one complex matrix product; the 4 T^2 second-difference evaluations of l as one stacked quadratic
    form (exact for a quadratic with h = 1)."""
    x, w = np.polynomial.legendre.leggauss(n)
    th = np.pi * (x + 1)
    t = np.arange(1, T + 1)
    lam = on(xp, np.exp(1j * th / mu))
    wx = on(xp, w)
    ex = on(xp, (2 * t - T).astype(float))
    # V[t, k] = lam_k^(2t - T): exp of the angle, as on the host (powers of a unit complex number)
    V = xp.exp(xp.reshape(ex, (T, 1)) * xp.reshape(xp.astype(1j * on(xp, th / mu), xp.complex128), (1, n)))
    Vw = V * xp.astype(wx, xp.complex128)
    H = xp.real(Vw @ xp.matrix_transpose(xp.conj(V))) / 2
    bb = xp.real(Vw @ xp.conj(lam ** T)) / 2
    I = xp.eye(T, dtype=xp.float64)
    Ei, Ej = xp.reshape(I, (T, 1, T)), xp.reshape(I, (1, T, T))
    def l(P):                                             # P (..., T): l(p) = p^T H p - 2 b^T p + 1
        return xp.sum((P @ H) * P, axis=-1) - 2 * xp.sum(P * bb, axis=-1) + 1.0
    Hs = (l(Ei + Ej) - l(Ei - Ej) - l(-Ei + Ej) + l(-Ei - Ej)) / 4.0
    return H, Hs


@pe.numeric(backends=("numpy", "cupy"))
def _(p):
    """Quadrature H equals the corrected formula; the Hessian of l equals 2H; trace H = T."""
    xp = xp_of(p)
    H, Hs = _pe_xp(xp, p.T, p.mu)
    F = _pe_H_formula(p.T, p.mu)
    Fx = on(xp, F)
    tol = 64 * p.T * EPS * 10
    return Outcome.from_parts({"H_formula": (float(xp.max(xp.abs(H - Fx))), tol),
                               "hessian_is_2H": (float(xp.max(xp.abs(Hs - 2 * Fx))), 8 * p.T * tol),
                               "trace_T": (abs(float(xp.sum(xp.linalg.diagonal(Fx))) - p.T), tol)},
                              f"Prop 6.12 corrected ({p.backend})",
                              values={"eigenvalues": sorted(asnumpy(xp.linalg.eigvalsh(Fx)).tolist(), reverse=True)})


pe.property(over=("T", "mu"), max_examples=10)


@pe.falsifier("stated")
def _(p):
    """As printed, 'the Hessian is H': the Hessian of l is 2H (off by |H|_max = 1)."""
    H, Hs = _pe_hessian(p.T, p.mu)
    F = _pe_H_formula(p.T, p.mu)
    return Outcome(residual=float(np.max(np.abs(Hs - F))), tolerance=8 * p.T * 64 * p.T * EPS * 10)


@pe.reproduction(name="sigma1_table")
def _(p):
    """sigma_1(mu) for T = 10, mu = 5, 20, 100, 1000: quoted 1.25, 4.91168, 9.58240, 9.99566 (tolerance: half a unit
    in the last quoted digit); H = I for mu = 1, 2."""
    quoted = {5.0: (1.25, 5e-3), 20.0: (4.91168, 5e-6), 100.0: (9.58240, 5e-6), 1000.0: (9.99566, 5e-6)}
    ours = {mu: float(np.linalg.eigvalsh(_pe_H_formula(10, mu))[-1]) for mu in quoted}
    parts = {f"mu={mu}": (abs(ours[mu] - q), t) for mu, (q, t) in quoted.items()}
    parts["identity_mu_1_2"] = (max(float(np.max(np.abs(_pe_H_formula(10, m) - np.eye(10)))) for m in (1.0, 2.0)), 1e-12)
    return Outcome.from_parts(parts, "sigma_1(mu)", values={"sigma1": {str(k): v for k, v in ours.items()}})
