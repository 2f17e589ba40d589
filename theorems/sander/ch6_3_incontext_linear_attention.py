"""§6.3 Linear attention for AR processes (seed l.4118-4159): the realification of Remark 1 (l.4122-4128) and
Remark 2 (l.4150: linear RNNs cannot learn in context), formalised on unitary diagonal contexts.  Claims:
``sander.incontext_realification``, ``sander.incontext_rnn_remark``.

Conventions and the exact-expectation error model (chapter 6): ``theorems.sander._attention``.
"""
from __future__ import annotations

import math

import numpy as np

from solvers import xp_sander2 as X
from solvers.xp import asnumpy, on, xp_of
from theorems.claim import Claim, Outcome, Param
from theorems.sander._attention import _torus

EPS = float(np.finfo(float).eps)


# ===========================================================================
# Remark 1 realification
real = Claim(
    id="sander.incontext_realification",
    title="Realification of a unitary matrix is a rotation with spectrum Sp(W_U) and its conjugate",
    label="Remark 1",
    section="6.3",
    equation="",
    lines=(4122, 4128),
    statement=r"W_U\in U(d)\Rightarrow W_O=\begin{bmatrix}\Re W_U&-\Im W_U\\\Im W_U&\Re W_U\end{bmatrix}\in SO(2d),"
              r"\ \mathrm{Sp}W_O=\mathrm{Sp}W_U\cup\overline{\mathrm{Sp}W_U}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 12, "dimension", search=(1, 6)),
        Param.seed("seed of the Haar unitary"),
    ],
    notes="Haar unitary by QR with phase correction. Spectrum matched by an assignment (sorted by angle); eigenvalues "
          "of a normal matrix are perfectly conditioned, so the tolerance is 64 d eps.",
    catalogue="sander_part23 §2.3 R6.1",
    covers=("R6.1",),
)


def _haar(d, seed, unitary=True):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((d, d)) + 1j * rng.standard_normal((d, d))
    Q, R = np.linalg.qr(Z)
    Q = Q * (np.diag(R) / np.abs(np.diag(R)))
    return Q if unitary else Q + 0.3 * Z / np.linalg.norm(Z)


def _realify(U):
    return np.block([[U.real, -U.imag], [U.imag, U.real]])


def _real_outcome(U, d):
    O = _realify(U)
    ev = np.linalg.eigvals(O)
    eu = np.linalg.eigvals(U)
    target = np.concatenate([eu, np.conj(eu)])
    key = lambda z: (np.round(np.angle(z), 9), np.round(np.abs(z), 9))
    a = np.array(sorted(ev, key=key))
    b = np.array(sorted(target, key=key))
    tol = 64 * d * EPS * max(1.0, float(np.linalg.norm(O, 2)))
    return Outcome.from_parts({"orthogonal": (float(np.max(np.abs(O.T @ O - np.eye(2 * d)))), tol),
                               "det_one": (abs(float(np.linalg.det(O)) - 1), tol * 2 * d),
                               "spectrum": (float(np.max(np.abs(a - b))), 16 * tol)}, "realification")


@real.numeric
def _(p):
    """W_O^T W_O = I, det W_O = 1, spectrum = Sp W_U with its conjugate."""
    return _real_outcome(_haar(p.d, p.seed), p.d)


real.property(over=("d", "seed"), max_examples=15)


@real.falsifier("non_unitary", search=("seed",))
def _(p):
    """A non-unitary W_U gives a non-orthogonal W_O."""
    return _real_outcome(_haar(p.d, p.seed, unitary=False), p.d)


# ===========================================================================
# Remark 2: linear RNNs
def _rnn_loss(A, B, s1, lam, T, W_dependent=False):
    """E_lambda sum_t |y_t - W^t s_1|^2, y_t = sum_{k<=t} A^{t-k} B W^{k-1} s_1, W = diag(lambda), and
    E |y_t|^2 + |s_1|^2 (the Pythagoras split), per t; lam: quadrature points (rows)."""
    out_loss, out_pyth = [], []
    d = s1.size
    for t in range(1, T + 1):
        y = np.zeros(lam.shape, dtype=complex)
        for k in range(1, t + 1):
            v = lam ** (k - 1) * s1                          # W^{k-1} s_1, one row per context
            if W_dependent:                                  # B = W / t (depends on the context)
                v = v * lam / t
            else:
                v = v @ B.T
            y += v @ np.linalg.matrix_power(A, t - k).T
        target = lam ** t * s1
        out_loss.append(float(np.mean(np.sum(np.abs(y - target) ** 2, axis=1))))
        out_pyth.append(float(np.mean(np.sum(np.abs(y) ** 2, axis=1))) + float(s1 @ s1))
    return np.array(out_loss), np.array(out_pyth)


rnn = Claim(
    id="sander.incontext_rnn_remark",
    title="Remark 2 formalised: a linear RNN with context-independent (A, B) has expected error >= |s_1|^2 at every t",
    label="Remark 2",
    section="6.3",
    equation="",
    lines=(4150, 4150),
    statement=r"y_t=\sum_{k=1}^tA^{t-k}BW^{k-1}e_1;\ A,B\text{ would have to depend on }W\text{ for }y_t\approx W^ts_1",
    status="heuristic",
    params=[
        Param.int("d", 2, 1, 3, "dimension", search=(1, 3)),
        Param.int("T", 4, 1, 7, "horizon (t = 1..T)", search=(1, 6)),
        Param.float("scale", 1.0, 0.0, 3.0, "scale of the random A, B (entries N(0, scale^2/d))", search=(0.0, 2.0)),
        Param.seed("seed of A, B, s_1"),
    ],
    notes="The remark is informal (catalogue [H]); this is one precise reading. For W = diag(lambda), lambda uniform "
          "on the torus (unitary commuting contexts, Assumption 6.2), y_t is a polynomial of degree <= t-1 in "
          "lambda while W^t s_1 has degree t, so they are orthogonal in L^2 and E|y_t - W^t s_1|^2 = E|y_t|^2 + "
          "|s_1|^2 >= |s_1|^2: no context-independent (A, B) beats predicting 0. Exact expectation by quadrature "
          "on the N-th roots of unity, N = T + 2 (all exponent differences are <= T). Falsifier: B = W/t "
          "(context-dependent) fits exactly, so the bound needs the independence the remark states.",
    catalogue="sander_part23 §2.3 R6.2",
    covers=("R6.2",),
)


def _rnn_outcome(p, W_dependent=False):
    xp = xp_of(p)
    rng = np.random.default_rng(p.seed)
    A = rng.standard_normal((p.d, p.d)) * p.scale / math.sqrt(p.d)
    B = rng.standard_normal((p.d, p.d)) * p.scale / math.sqrt(p.d)
    s1 = rng.standard_normal(p.d)
    lam = _torus(p.d, p.T + 2)
    Ax, Bx, sx, lx = on(xp, A, B, s1, lam)
    loss, pyth = (asnumpy(a) for a in X.rnn_loss(Ax, Bx, sx, lx, p.T, W_dependent))
    # rounding of the quadrature means: ~ 8 T N^d eps times the size of the summands
    size = float(np.max(pyth)) + 1.0
    tol = 16 * p.T * (1 + p.T) * EPS * size
    n1 = float(s1 @ s1)
    parts = {"lower_bound": (max(0.0, float(np.max(n1 - loss))), tol)}
    if not W_dependent:
        parts["pythagoras"] = (float(np.max(np.abs(loss - pyth))), tol)
    return Outcome.from_parts(parts, f"min_t E|y_t - W^t s_1|^2 = {float(np.min(loss)):.4g} vs |s_1|^2 = {n1:.4g} "
                                     f"({p.backend})", {"loss_per_t": loss.tolist(), "s1_norm2": n1})


@rnn.numeric(backends=("numpy", "cupy"))
def _(p):
    """E|y_t - W^t s_1|^2 = E|y_t|^2 + |s_1|^2 >= |s_1|^2 for every t (exact torus quadrature)."""
    return _rnn_outcome(p)


rnn.property(over=("d", "T", "scale", "seed"), max_examples=15)


@rnn.falsifier("B_depends_on_W", backends=("numpy", "cupy"))
def _(p):
    """With B = W/t (context-dependent, A = any) y_t = W^t s_1: the lower bound fails."""
    return _rnn_outcome(p, W_dependent=True)
