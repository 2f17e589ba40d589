"""Menon §2-3.1 (seed lines 91-146): the model and its gradient.

Claims (catalogue menon §2.1 M1-M5):

* ``menon.caricature_loss``       (2.1) with f = W_N...W_1 x is E∘φ, gradient (3.6) with E' = 2/n (WX-Y)X^T
* ``menon.dln_gradient``          (3.5)-(3.6), (7.4)-(7.5): grad_{W_p} E(φ) = A_{p+1}^T E'(W) B_{p-1}^T

Conventions as in the package docstring: tuples ``[W_N, ..., W_1]``, ``A_p = W_N...W_p``,
``B_p = W_p...W_1``; vectorisation is row-major and follows :func:`solvers.dln.pack`.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from solvers import dln
from solvers import xp_menon as XM
from solvers.xp import namespace, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError
from theorems.menon._common import validate_widths

from ._model import U, _abs, _chain_k, _gamma


def _widths(p, max_rect=5):
    """Widths from ``widths``, or drawn from the seed when ``rectangular``, else square [d]*(N+1)."""
    if p.get("widths") is not None:
        return [int(x) for x in p.widths]
    if p.get("rectangular"):
        rng = np.random.default_rng([p.seed, 7])
        return [int(x) for x in rng.integers(1, max_rect + 1, p.N + 1)]
    return [p.d] * (p.N + 1)


# ===========================================================================
# M1  the caricature loss (2.1) for the DLN is E∘φ
caricature = Claim(
    id="menon.caricature_loss",
    title="The quadratic data loss (2.1) of the DLN is E∘φ, with gradient (3.6) for E'(W) = 2/n (WX-Y)X^T",
    label="(2.1)-(2.2), Sec. 3.2",
    section="2, 3.2",
    equation="(2.1), (2.2), (3.6)",
    lines=(91, 97),
    statement=r"L(\mathbf W)=\frac1n\sum_{k=1}^n|f(X_k;\mathbf W)-Y_k|^2,\ f(x;\mathbf W)=W_N\cdots W_1x"
              r"\ \Longrightarrow\ L=E\circ\phi,\ E(W)=\frac1n\sum_k|WX_k-Y_k|^2,\ "
              r"\nabla_{W_p}L=A_{p+1}^T\,\tfrac2n(WX-Y)X^T\,B_{p-1}^T",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width d = d_x = d_y of every layer", search=(1, 4)),
        Param.int("N", 3, 1, 6, "depth", search=(1, 5)),
        Param.int("n", 5, 1, 50, "number of training pairs (X_k, Y_k)", search=(1, 8)),
        Param.seed("seed of layers and data"),
    ],
    notes="Lines 91-97 define (2.1)-(2.2) for a general network f(x; W); line 148 (Sec. 3.2) identifies the DLN "
          "as f = f_N∘...∘f_1 with f_p(x) = W_p x (printed with 'n' for N, E18), so (2.1) becomes E∘φ with "
          "E(W) = 1/n sum_k |W X_k - Y_k|^2. The data gradient is computed independently by the complex-step "
          "derivative of (2.1) written sample by sample (no subtractive cancellation, so rounding only). "
          "Falsifier: a ReLU between layers; L is then no function of φ(W) and the E∘φ gradient is wrong.",
    catalogue="menon §2.1 M1",
)


def _m1_data(p):
    rng = np.random.default_rng(p.seed)
    Ws = dln.random_layers([p.d] * (p.N + 1), rng)
    X = rng.standard_normal((p.d, p.n))
    Y = rng.standard_normal((p.d, p.n))
    return Ws, X, Y


def _net(Ws, X, relu: bool):
    """Network outputs for the columns of X (complex-safe, batched over leading axes of the layers); ReLU after
    every layer but the last if relu.  Any array-API backend."""
    xp = namespace(X)
    Z = X
    for i, w in enumerate(reversed(Ws)):  # W_1 first
        Z = w @ Z
        if relu and i < len(Ws) - 1:
            Z = xp.where(xp.real(Z) > 0, Z, xp.zeros_like(Z))
    return Z


def _data_loss(Ws, X, Y, relu: bool):
    """(2.1) per batch element (sum over the last two axes); R*R not |R|^2 keeps the complex step analytic."""
    R = _net(Ws, X, relu) - Y
    return namespace(R).sum(R * R, axis=(-2, -1)) / X.shape[1]


def _complex_step_grad(Ws, X, Y, relu: bool, h=1e-30):
    """d L / d W_p,jk = Im L(W + i h e_pjk) / h for every entry: exact to rounding (no cancellation).  Batched:
    for layer p the r*c perturbed copies of W_p (r x c) form one stack, the other layers broadcast; the complex
    perturbation i h e_jk is formed on the host and moved to the backend of X."""
    xp = namespace(X)
    c = lambda a: xp.astype(a, xp.complex128)  # noqa: E731
    Wc = [c(w) for w in Ws]
    Xc, Yc = c(X), c(Y)
    out = []
    for i, w in enumerate(Ws):
        r, cc = w.shape
        bump = XM.to_xp(xp, [1j * h * np.eye(r * cc).reshape(r * cc, r, cc)])[0]
        Wb = list(Wc)
        Wb[i] = Wc[i][None, :, :] + bump
        out.append(xp.reshape(xp.imag(_data_loss(Wb, Xc, Yc, relu)), (r, cc)) / h)
    return out


def _m1_outcome(p, relu: bool):
    """Array-API path (p.backend) for both gradients and both losses; the rounding scales stay on the host."""
    Ws, X, Y = _m1_data(p)
    xp = xp_of(p)
    Wx, Xx, Yx = XM.to_xp(xp, Ws), *XM.to_xp(xp, [X, Y])
    Wxp = dln.prod(Wx)
    Ep = 2.0 / p.n * (Wxp @ Xx - Yx) @ Xx.T
    formula = dln.grads(Wx, Ep)
    data = _complex_step_grad(Wx, Xx, Yx, relu)
    E_val = XM.vdot(Wxp @ Xx - Yx, Wxp @ Xx - Yx) / p.n
    L_val = float(_data_loss(Wx, Xx, Yx, relu))
    # Error model: both gradients are sums of products of <= K factors (the chain of N layers, the
    # n samples, the d-term dot products), so each entry carries <= gamma_K times the same products
    # of absolute values, G_abs = |A_{p+1}|^T |E'|_abs |B_{p-1}|^T with |E'|_abs = 2/n(P|X| + |Y|)|X|^T,
    # P = |W_N|...|W_1|. Two such computations differ by <= 2 gamma_K G_abs; a factor 4 of slack.
    Wabs = _abs(Ws)
    P = dln.prod(Wabs)
    Eabs = 2.0 / p.n * (P @ np.abs(X) + np.abs(Y)) @ np.abs(X).T
    Gabs = dln.grads(Wabs, Eabs)
    K = (p.N + 2) * p.d + p.n + 4
    tol_g = 8 * _gamma(K) * float(np.sqrt(sum(np.sum(g * g) for g in Gabs)))
    Labs = float(np.sum((P @ np.abs(X) + np.abs(Y)) ** 2) / p.n)
    tol_L = 8 * _gamma(K) * Labs
    res_g = float(np.sqrt(sum(XM.vdot(a - b, a - b) for a, b in zip(formula, data))))
    res_L = abs(L_val - E_val)
    values = {"grad_difference": res_g, "grad_tolerance": tol_g, "loss_data": L_val, "loss_E_phi": E_val,
              "loss_difference": res_L, "loss_tolerance": tol_L,
              "grad_norm": float(np.sqrt(sum(XM.vdot(g, g) for g in data))), "relu": relu}
    return Outcome(residual=res_g + res_L, tolerance=tol_g + tol_L, values=values,
                   message="|grad(2.1) by complex step - (3.6) with E'=2/n(WX-Y)X^T|_F + |L - E(φ(W))|")


@caricature.numeric(backends=("numpy", "cupy"))
def _m1_numeric(p):
    """Complex-step gradient of the data loss (2.1) against formula (3.6) with E'(W) = 2/n (WX-Y)X^T."""
    return _m1_outcome(p, relu=False)


caricature.property(over=("d", "N", "n", "seed"), max_examples=12)


#: E and E' of the statement (2.1)/(3.6) as printed, and the nearest misprints: (E(W, X, Y, n), E'(W, X, Y, n))
CARICATURE_VARIANTS = {
    "stated": (lambda W, X, Y, n: sum(e ** 2 for e in (W * X - Y)) / n,
               lambda W, X, Y, n: sp.Rational(2, n) * (W * X - Y) * X.T),
    "half_normalisation": (lambda W, X, Y, n: sum(e ** 2 for e in (W * X - Y)) / (2 * n),
                           lambda W, X, Y, n: sp.Rational(1, n) * (W * X - Y) * X.T),
    "sign_flipped": (lambda W, X, Y, n: sum(e ** 2 for e in (W * X - Y)) / n,
                     lambda W, X, Y, n: sp.Rational(2, n) * (Y - W * X) * X.T),
}
_M1_INSTANCES = [(2, 2, 2), (1, 3, 2), (2, 3, 1)]  # (d, N, n)


def _m1_prove(variant="stated"):
    """Entries of (2.1) - E(phi(W)) and of sympy's gradient of (2.1) minus A_{p+1}^T E' B_{p-1}^T (the chain rule
    with the statement's E') that do not expand to zero, symbolic layers and data."""
    E_of, Ep_of = CARICATURE_VARIANTS[variant]
    bad = 0
    for d, N, n in _M1_INSTANCES:
        Ws = [sp.Matrix(d, d, lambda i, j, p=p: sp.Symbol(f"w{p}_{i}{j}")) for p in range(N, 0, -1)]
        X = sp.Matrix(d, n, lambda i, j: sp.Symbol(f"x_{i}{j}"))
        Y = sp.Matrix(d, n, lambda i, j: sp.Symbol(f"y_{i}{j}"))
        W = dln.prod(Ws)
        L = sum(((W * X[:, k] - Y[:, k]).T * (W * X[:, k] - Y[:, k]))[0, 0] for k in range(n)) / n
        bad += int(sp.expand(L - E_of(W, X, Y, n)) != 0)
        D = dln.grads(Ws, Ep_of(W, X, Y, n))
        for w, g in zip(Ws, D):
            for i in range(d):
                for j in range(d):
                    bad += int(sp.expand(sp.diff(L, w[i, j]) - g[i, j]) != 0)
    return bad


@caricature.symbolic(timeout=60)
def _m1_symbolic(p):
    """With symbolic layers and data, (2.1) - E(φ(W)) and every entry of grad(2.1) - (3.6) expand to 0."""
    bad = _m1_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand of every entry", "instances_d_N_n": [list(i) for i in _M1_INSTANCES],
        "proved": "L(2.1) = E(φ(W)) and ∂L/∂W_p = A_{p+1}^T (2/n)(WX-Y)X^T B_{p-1}^T identically"},
        message="number of entries that did not expand to zero")


@caricature.mutant({
    "half_normalisation": "E = 1/(2n) |WX - Y|^2 with E' = (1/n)(WX - Y)X^T (the usual 1/2 slipped in)",
    "sign_flipped": "E' = (2/n)(Y - WX)X^T (residual sign flipped)",
}, timeout=60)
def _m1_mutant(p, variant):
    """The statement perturbed, through the same procedure: entries must stay nonzero."""
    bad = _m1_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} entries of L - E and grad L - (3.6) ({variant}) did not expand to zero")


@caricature.falsifier("relu_between_layers", search=("seed",), fixed={"N": 3}, backends=("numpy", "cupy"))
def _m1_relu(p):
    """A ReLU after each hidden layer: the loss is no longer E∘φ and the (3.6) gradient misses it."""
    if p.N < 2:
        raise ParamError("the ReLU falsifier needs N >= 2 (a hidden layer)")
    return _m1_outcome(p, relu=True)


# ===========================================================================
# M2  the DLN gradient formula (3.5)-(3.6), (7.4)-(7.5)
ENERGIES = {"quadratic": (0.0, False), "quartic": (0.5, False), "completion": (0.0, True)}

gradient = Claim(
    id="menon.dln_gradient",
    title="Gradient of the lifted loss: ∇_{W_p} E(W_N⋯W_1) = (W_N⋯W_{p+1})^T E'(W) (W_{p-1}⋯W_1)^T",
    label="(3.6), (7.5)",
    section="3.1, 7.1.1",
    equation="(3.5)-(3.7), (7.1)-(7.5)",
    lines=(116, 146),
    statement=r"\nabla_{W_p}E(W_N\cdots W_1)=(W_N\cdots W_{p+1})^TE'(W)(W_{p-1}\cdots W_1)^T,\quad "
              r"\frac{\partial W_{lm}}{\partial W_{p,jk}}=(W_N\cdots W_{p+1})_{lj}(W_{p-1}\cdots W_1)_{km}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 6, "width of every layer (ignored when widths or rectangular is given)", search=(1, 4)),
        Param.int("N", 3, 1, 6, "depth", search=(1, 5)),
        Param.seed("seed of layers and target"),
        Param.choice("energy", "quadratic", list(ENERGIES),
                     "E = 1/2|M∘(W-Y)|² (+ q/4|M∘(W-Y)|⁴): quadratic, quartic (q=1/2), completion (3.8) (random mask)"),
        Param.float("h", 1e-4, 1e-10, 0.1, "finite-difference step (>= 1e-10: below, the difference quotient is rounding only and its error model overflows)"),
        Param.bool("rectangular", False, "draw rectangular widths d_p in [1, 5] from the seed (footnote 1, line 146)"),
        Param.vector("widths", None, "explicit widths d_0..d_N (footnote 1); overrides d, N and rectangular"),
    ],
    validate=lambda p: validate_widths(p, min_N=1),
    notes="Second location: lines 504-524 (Sec. 7.1.1, (7.1)-(7.5)). Numeric check: central finite differences "
          "of L = E∘φ in every coordinate. φ is linear in each single coordinate, so L(t) along a coordinate is "
          "a polynomial of degree 2 (quadratic, completion) or 4 (quartic) and the central difference error is "
          "exactly h^2/6 L'''(0) = q c b h^2 (c = |V|^2, b = <R, V>, V the image direction); the rounding model "
          "is eps |L|_abs / h. Both are computed per entry and form the tolerance.",
    catalogue="menon §2.1 M2",
)


def _m2_instance(p):
    widths = _widths(p)
    rng = np.random.default_rng(p.seed)
    Ws = dln.random_layers(widths, rng)
    Y = rng.standard_normal((widths[-1], widths[0]))
    q, masked = ENERGIES[p.energy]
    M = (rng.random(Y.shape) < 0.6).astype(float) if masked else np.ones_like(Y)
    return widths, Ws, Y, M, q


def _energy(W, Y, M, q):
    R = M * (W - Y)
    s = float(np.sum(R * R))
    return 0.5 * s + 0.25 * q * s * s


def _m2_outcome(p, transposes=True):
    widths, Ws, Y, M, q = _m2_instance(p)
    N, h = len(Ws), p.h
    W = dln.prod(Ws)
    R = M * (W - Y)
    s = float(np.sum(R * R))
    Ep = M * R * (1 + q * s)
    if transposes:
        formula = dln.grads(Ws, Ep)
    else:  # the falsifier: A_{p+1} E' B_{p-1}
        formula = [dln.partial_A(Ws, k + 1) @ Ep @ dln.partial_B(Ws, k - 1) for k in range(N, 0, -1)]
    # rounding scales: P = |W_N|...|W_1|, |R|_abs = M∘(P + |Y|)
    Wabs = _abs(Ws)
    P = dln.prod(Wabs)
    Rabs = M * (P + np.abs(Y))
    K = _chain_k(widths) + Y.size + 4
    err_s = _gamma(K) * (2 * float(np.sum(np.abs(R) * Rabs)) + s)
    dL_round = 0.5 * err_s * (1 + q * (s + err_s)) + U * _energy(W, Y, M, q)
    Gabs = dln.grads(Wabs, M * Rabs * (1 + q * float(np.sum(Rabs * Rabs))))
    fd, tol = [], []
    for i, k in enumerate(range(N, 0, -1)):
        A, B = dln.partial_A(Ws, k + 1), dln.partial_B(Ws, k - 1)
        g = np.zeros(Ws[i].shape)
        t = np.zeros(Ws[i].shape)
        for j in range(g.shape[0]):
            for m in range(g.shape[1]):
                Wp, Wm = list(Ws), list(Ws)
                Wp[i] = Ws[i].copy(); Wp[i][j, m] += h
                Wm[i] = Ws[i].copy(); Wm[i][j, m] -= h
                step = Wp[i][j, m] - Wm[i][j, m]  # the step actually taken (rounded)
                g[j, m] = (_energy(dln.prod(Wp), Y, M, q) - _energy(dln.prod(Wm), Y, M, q)) / step
                V = M * np.outer(A[:, j], B[m, :])
                c, b = float(np.sum(V * V)), float(np.sum(R * V))
                trunc = q * c * (abs(b) + c * h) * h * h          # h^2/6 |L'''| over [-h, h]
                rnd = 2 * dL_round / step                          # rounding of L(+h), L(-h)
                t[j, m] = 2 * (trunc + rnd + _gamma(K) * Gabs[i][j, m])
        fd.append(g)
        tol.append(t)
    diff = np.concatenate([(a - b).ravel() for a, b in zip(fd, formula)])
    tvec = np.concatenate([x.ravel() for x in tol])
    res, tolerance = float(np.linalg.norm(diff)), float(np.linalg.norm(tvec))
    worst = float(np.max(np.abs(diff) / np.maximum(tvec, 1e-300)))
    return Outcome(residual=res, tolerance=tolerance, values={
        "widths": widths, "energy": p.energy, "h": h, "max_entry_ratio": worst,
        "grad_norm": float(np.linalg.norm(np.concatenate([g.ravel() for g in formula]))),
        "transposes": transposes},
        message="|central finite differences - (3.6)|_F against the per-entry truncation + rounding model")


@gradient.numeric
def _m2_numeric(p):
    """Central finite differences of E∘φ in every coordinate against (3.6)/(7.5)."""
    return _m2_outcome(p)


gradient.property(over=("d", "N", "seed", "energy", "rectangular"), max_examples=15)


#: the gradient (3.6) as printed, (W_N...W_{p+1})^T E' (W_{p-1}...W_1)^T, and its nearest misprints (as functions
#: of the layers, the layer number k and E'); the misprints only type-check on square layers
DLN_GRADIENT_VARIANTS = {
    "stated": lambda Ws, k, Ep: dln.partial_A(Ws, k + 1).T * Ep * dln.partial_B(Ws, k - 1).T,
    "no_transposes": lambda Ws, k, Ep: dln.partial_A(Ws, k + 1) * Ep * dln.partial_B(Ws, k - 1),
    "index_shifted": lambda Ws, k, Ep: dln.partial_A(Ws, k).T * Ep * dln.partial_B(Ws, k).T,
}


def _m2_prove(variant="stated"):
    """Entries of diff(E(phi), W_p[j,c]) minus (3.6) (variant) and of diff(W, W_p[j,c]) minus (7.4) that do not
    expand to 0; symbolic W_p, E a polynomial with free coefficients.  Returns (bad, checked, instances)."""
    instances = [(2, 2, 2), (2, 2, 2, 2), (2, 3, 1, 2)] if variant == "stated" else [(2, 2, 2), (2, 2, 2, 2)]
    bad, checked = 0, 0
    for widths in instances:
        N = len(widths) - 1
        Ws = [sp.Matrix(widths[p], widths[p - 1], lambda i, j, p=p: sp.Symbol(f"w{p}_{i}{j}"))
              for p in range(N, 0, -1)]
        W = dln.prod(Ws)
        m, n = W.shape
        Wv = sp.Matrix(m, n, lambda i, j: sp.Symbol(f"V_{i}{j}"))  # E as a function of a free matrix
        E = (sum(sp.Symbol(f"c_{i}{j}") * Wv[i, j] + sp.Symbol(f"e_{i}{j}") * Wv[i, j] ** 2
                 for i in range(m) for j in range(n)) + sp.Symbol("f") * Wv[0, 0] * Wv[m - 1, n - 1] ** 2)
        sub = {Wv[i, j]: W[i, j] for i in range(m) for j in range(n)}
        Ep = sp.Matrix(m, n, lambda i, j: sp.diff(E, Wv[i, j])).subs(sub, simultaneous=True)
        L = E.subs(sub, simultaneous=True)
        for idx, k in enumerate(range(N, 0, -1)):
            w = Ws[idx]
            A, B = dln.partial_A(Ws, k + 1), dln.partial_B(Ws, k - 1)
            G = DLN_GRADIENT_VARIANTS[variant](Ws, k, Ep)
            for j in range(w.shape[0]):
                for c in range(w.shape[1]):
                    bad += int(sp.expand(sp.diff(L, w[j, c]) - G[j, c]) != 0)
                    checked += 1
                    if variant != "stated":
                        continue
                    for l in range(m):       # (7.4)
                        for mm in range(n):
                            bad += int(sp.expand(sp.diff(W[l, mm], w[j, c]) - A[l, j] * B[c, mm]) != 0)
    return bad, checked, instances


@gradient.symbolic(timeout=60)
def _m2_symbolic(p):
    """Symbolic W_p and a polynomial E with free coefficients: diff(E(φ), W_p[j,k]) equals (3.6), and (7.4) entrywise."""
    bad, checked, instances = _m2_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.expand of every entry", "instances_widths": [list(i) for i in instances],
        "energy": "sum c_ij W_ij + e_ij W_ij^2 + f W_11 W_mn^2 (free coefficients)", "gradient_entries": checked,
        "proved": "(3.6)/(7.5) and (7.4) entrywise, square and rectangular widths"},
        message="number of entries that did not expand to zero")


@gradient.mutant({
    "no_transposes": "A_{p+1} E'(W) B_{p-1} (the transposes of (3.6) dropped; square layers)",
    "index_shifted": "A_p^T E'(W) B_p^T (partial products shifted by one; square layers)",
}, timeout=60)
def _m2_mutant(p, variant):
    """(3.6) perturbed, through the same procedure: gradient entries must stay nonzero."""
    bad, checked, _ = _m2_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad, "gradient_entries": checked},
                   message=f"{bad} of {checked} gradient entries differ from (3.6, {variant})")


@gradient.falsifier("no_transposes", search=("seed",), fixed={"d": 3})
def _m2_no_transposes(p):
    """Drop the transposes, A_{p+1} E'(W) B_{p-1}: wrong for non-symmetric layers (square widths only)."""
    if p.widths is not None or p.rectangular:
        raise ParamError("the no_transposes variant needs square widths (shapes do not match otherwise)")
    return _m2_outcome(p, transposes=False)
