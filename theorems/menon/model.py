"""Sections 2-3 and the remarks of Sec. 4.4: the model, its gradient, overparametrization.

Claims (catalogue menon §2.1 M1-M5, §2.2 R5-R7, §2.6 K3; errata E18, E19):

* ``menon.caricature_loss``       (2.1) with f = W_N...W_1 x is E∘φ, gradient (3.6) with E' = 2/n (WX-Y)X^T
* ``menon.dln_gradient``          (3.5)-(3.6), (7.4)-(7.5): grad_{W_p} E(φ) = A_{p+1}^T E'(W) B_{p-1}^T
* ``menon.fibre_dimension``       line 148 (E19): the fibre φ^{-1}(W) has dimension (N-1)d^2, not "N d^2 choices"
* ``menon.matrix_completion_degenerate``  (3.8): minimised exactly on the affine space S (line 158: M_ij -> W_ij)
* ``menon.not_morse``             line 162: Hess(E∘φ) at a minimiser has (N-1)d^2 zero eigenvalues
* ``menon.thin_gradients``        Remark 5 (E19): gradients of E∘φ span rank Dφ <= d^2 dimensions
* ``menon.parameter_count``       Remark 6: (N-1)d^2 = (N-1)d(d+1)/2 + (N-1)d(d-1)/2
* ``menon.norm_identity``         Remark 7, (4.23), and |W_2W_1|^2 = Tr K^2 - Tr GK for N = 2
* ``menon.rank_one_zero_set``     (14.3)-(14.4): [[1,a],[1/a,1]] is rank one with E = 0 for (14.1)

Conventions as in the package docstring: tuples ``[W_N, ..., W_1]``, ``A_p = W_N...W_p``,
``B_p = W_p...W_1``; vectorisation is row-major and follows :func:`solvers.dln.pack`.

Rank decisions (fibre dimension, thin gradients, parameter count, Morse) share one error
model, :func:`_rank`: the entries of a matrix built from products of k factors carry a
rounding error <= gamma_k |M|_abs entrywise (|M|_abs the same products of absolute values),
and the SVD adds a backward error <= c max(m, n) eps |M|_2.  Singular values below that
bound tau are zero; a singular value in the grey zone (tau, 1e3 tau] makes the instance
inconclusive rather than miscounted.
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import expm

from solvers import dln
from solvers import xp_menon as XM
from solvers.xp import namespace, xp_of
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.menon._common import EPS, alpha, balanced_instance, pairs, validate_widths

U = EPS / 2  # unit roundoff


def _gamma(k: int) -> float:
    """Higham's gamma_k = k u / (1 - k u): the relative error bound of a k-term dot product."""
    return k * U / (1 - k * U)


# ---------------------------------------------------------------------------
# shared helpers
def _abs(Ws):
    return [np.abs(w) for w in Ws]


def _dphi(Ws) -> np.ndarray:
    """Jacobian of φ at Ws: a (d_N d_0) x sum_p d_p d_{p-1} matrix, row-major vec, columns in pack order.

    dφ = sum_p A_{p+1} dW_p B_{p-1} and vec_row(L Z R) = (L kron R^T) vec_row(Z)."""
    N = len(Ws)
    return np.hstack([np.kron(dln.partial_A(Ws, p + 1), dln.partial_B(Ws, p - 1).T) for p in range(N, 0, -1)])


def _rank(M, Mabs, k: int, grey: float = 1e3):
    """Numerical rank of M with the error model of the module docstring.

    Returns ``(rank, singular values, tau, ambiguous)``: rank = #{s > tau}; ambiguous when a
    singular value lies in (tau, grey * tau]."""
    if isinstance(M, np.ndarray):
        M = np.atleast_2d(M)
        s = np.linalg.svd(M, compute_uv=False) if M.size else np.zeros(0)
        nabs = float(np.linalg.norm(Mabs))
    else:  # an array-API array (p.backend): the SVD there, the singular values back on the host
        s = XM.host(namespace(M).linalg.svdvals(M)) if M.shape[0] * M.shape[1] else np.zeros(0)
        nabs = XM.fro(Mabs)
    smax = float(s[0]) if s.size else 0.0
    tau = 2 * (_gamma(k) * nabs + 4 * max(M.shape) * EPS * smax)
    rank = int(np.sum(s > tau))
    ambiguous = bool(np.any((s > tau) & (s <= grey * tau)))
    return rank, s, tau, ambiguous


def _null_basis(M, rank):
    """Orthonormal basis of ker M (columns), given its numerical rank (on the backend of M)."""
    _, _, Vt = namespace(M).linalg.svd(M)
    return Vt[rank:, :].T


def _chain_k(widths) -> int:
    """Number of terms in the longest dot-product chain of φ: sum of inner widths, plus one."""
    return int(sum(widths[1:-1]) + max(widths) + 1)


def _widths(p, max_rect=5):
    """Widths from ``widths``, or drawn from the seed when ``rectangular``, else square [d]*(N+1)."""
    if p.get("widths") is not None:
        return [int(x) for x in p.widths]
    if p.get("rectangular"):
        rng = np.random.default_rng([p.seed, 7])
        return [int(x) for x in rng.integers(1, max_rect + 1, p.N + 1)]
    return [p.d] * (p.N + 1)


def _validate_rank(p):
    if p.rank > p.d:
        raise ParamError(f"parameter rank={p.rank} must be -1 (full) or in [0, d={p.d}]")


def _validate_a(p):
    if abs(p.a) < 1e-4:
        raise ParamError(f"parameter a={p.a!r} must be nonzero (|a| >= 1e-4; (14.3) has a in R \\ {{0}})")


def _cond(M) -> float:
    """2-norm condition number, inf for a singular matrix (no warning)."""
    s = np.linalg.svd(M, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


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


# ===========================================================================
# M3  line 148: the fibre of φ (erratum E19)
fibre = Claim(
    id="menon.fibre_dimension",
    title="Overparametrization: the representations of f = W form a manifold of dimension (N-1)d², not 'Nd² choices'",
    label="Sec. 3.2",
    section="3.2",
    equation="",
    lines=(148, 148),
    statement=r"\text{the same function } f \text{ may be represented by } Nd^2 \text{ choices of training parameters } \mathbf W",
    status="erratum",
    corrected=r"\text{for invertible } W,\ \phi^{-1}(W)=\{(g_NW_Ng_{N-1}^{-1},\dots,g_1W_1g_0^{-1}): g_p\in GL_d,"
              r"\ g_0=g_N=I\}\text{ is a manifold of dimension }(N-1)d^2=Nd^2-\operatorname{rank}D\phi,\ "
              r"\operatorname{rank}D\phi(\mathbf W)=d^2",
    params=[
        Param.int("d", 3, 1, 5, "width", search=(1, 4)),
        Param.int("N", 3, 1, 6, "depth", search=(1, 5)),
        Param.seed("seed of the layers and the gauge"),
        Param.choice("point", "random", ["random", "zero"], "random layers (W invertible) or the zero tuple"),
    ],
    notes="Erratum E19 (imprecision): Nd^2 is the number of parameters, not the number (nor the dimension) of "
          "representations. Numeric check: rank Dφ = d^2 (so dim ker Dφ = (N-1)d^2), the GL_d gauge directions "
          "(ξ_p W_p - W_p ξ_{p-1}), ξ_0 = ξ_N = 0, span (N-1)d^2 dimensions inside ker Dφ, and finite gauge "
          "transformations g_p = expm(t ξ_p) stay in the fibre. The zero tuple violates the hypothesis "
          "'W invertible' (numeric: inconclusive); the falsifier zero_tuple shows rank Dφ = 0 there for N >= 2. "
          "The printed line also writes f_n, 1 <= p <= n for N (E18).",
    catalogue="menon §2.1 M3; §4 E19",
)


def _m3_layers(p):
    rng = np.random.default_rng(p.seed)
    if p.point == "zero":
        return [np.zeros((p.d, p.d)) for _ in range(p.N)], rng
    return dln.random_layers([p.d] * (p.N + 1), rng), rng


def _gauge_tangent(Ws, xis):
    """Tangent of W_p -> g_p W_p g_{p-1}^{-1} at g = I: (ξ_p W_p - W_p ξ_{p-1}), ξ_0 = ξ_N = 0. xis = [ξ_1..ξ_{N-1}]."""
    N, d = len(Ws), Ws[0].shape[0]
    z = np.zeros((d, d))
    xi = [z] + list(xis) + [z]  # xi[k] = ξ_k, k = 0..N
    return dln.pack([xi[k] @ dln.layer(Ws, k) - dln.layer(Ws, k) @ xi[k - 1] for k in range(N, 0, -1)])


def _gauge_basis(Ws, gens):
    """Columns: gauge tangents for ξ_k = one generator in slot k (k = 1..N-1), zero elsewhere."""
    N, d = len(Ws), Ws[0].shape[0]
    cols = []
    for k in range(1, N):
        for g in gens:
            xis = [np.zeros((d, d))] * (N - 1)
            xis = list(xis)
            xis[k - 1] = g
            cols.append(_gauge_tangent(Ws, xis))
    return np.array(cols).T if cols else np.zeros((sum(w.size for w in Ws), 0))


def _gl_basis(d):
    out = []
    for i in range(d):
        for j in range(d):
            e = np.zeros((d, d))
            e[i, j] = 1.0
            out.append(e)
    return out


def _fibre_measure(p, n_points: int = 0):
    Ws, rng = _m3_layers(p)
    d, N = p.d, p.N
    widths = [d] * (N + 1)
    k = _chain_k(widths)
    J = _dphi(Ws)
    Jabs = _dphi(_abs(Ws))
    rank, s, tau, amb = _rank(J, Jabs, k)
    T = _gauge_basis(Ws, _gl_basis(d))
    Tabs = _gauge_basis(_abs(Ws), _gl_basis(d))
    grank, gs, gtau, gamb = _rank(T, Tabs, d + 1) if T.size else (0, np.zeros(0), 0.0, False)
    # |Dφ T|: each entry a sum of products of <= k + d factors
    ker_res = float(np.linalg.norm(J @ T)) if T.size else 0.0
    ker_tol = 4 * _gamma(k + d + 1) * float(np.linalg.norm(Jabs @ np.abs(T))) if T.size else 0.0
    # finite gauge transformations: points of the fibre
    W = dln.prod(Ws)
    pts, fib_res, fib_tol = [], 0.0, 0.0
    if n_points:
        xis = [rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(N - 1)]
        for m in range(1, n_points + 1):
            t = 0.5 * m / n_points
            g = [np.eye(d)] + [expm(t * x) for x in xis] + [np.eye(d)]
            gi = [np.eye(d)] + [expm(-t * x) for x in xis] + [np.eye(d)]
            Wg = [g[q] @ dln.layer(Ws, q) @ gi[q - 1] for q in range(N, 0, -1)]
            # rounding: expm/its inverse are accurate to ~ c d eps |g|; φ(Wg) telescopes, so the error is
            # gamma_K times the product of absolute values of all 3N factors
            absprod = dln.prod([np.abs(g[q]) @ np.abs(dln.layer(Ws, q)) @ np.abs(gi[q - 1]) for q in range(N, 0, -1)])
            fib_res = max(fib_res, float(np.linalg.norm(dln.prod(Wg) - W)))
            fib_tol = max(fib_tol, 16 * _gamma(3 * N * d + 10 * d) * float(np.linalg.norm(absprod)))
            pts.append(dln.pack(Wg))
    distinct = 0
    if pts:
        P = np.array(pts)
        gaps = [np.linalg.norm(P[i] - P[j]) for i in range(len(P)) for j in range(i)]
        distinct = len(P) if (not gaps or min(gaps) > 1e6 * fib_tol) else 0
    cond = _cond(W)
    return {"rank_Dphi": rank, "fibre_dim": N * d * d - rank, "gauge_rank": grank, "ker_residual": ker_res,
            "ker_tolerance": ker_tol, "ambiguous": amb or gamb, "cond_W": cond, "rank_tau": tau,
            "smallest_nonzero_sv": float(s[rank - 1]) if rank else 0.0, "fibre_points": len(pts),
            "distinct_fibre_points": distinct, "fibre_residual": fib_res, "fibre_tolerance": fib_tol,
            "n_parameters": N * d * d}


@fibre.numeric
def _m3_numeric(p):
    """rank Dφ = d² at invertible W; the GL_d gauge orbit fills ker Dφ, dimension (N-1)d²."""
    if p.point == "zero":
        return inconclusive("W = 0 is not invertible: the corrected statement assumes invertible W "
                            "(see the falsifier zero_tuple)", point=p.point)
    v = _fibre_measure(p, n_points=3)
    if v["ambiguous"] or v["cond_W"] > 1e8:
        return inconclusive("W too close to singular to decide the ranks in floating point", **v)
    want = (p.N - 1) * p.d ** 2
    mismatch = (abs(v["fibre_dim"] - want) + abs(v["gauge_rank"] - want)
                + int(v["ker_residual"] > v["ker_tolerance"]) + int(v["fibre_residual"] > v["fibre_tolerance"]))
    v["expected_fibre_dim"] = want
    return Outcome(residual=mismatch, tolerance=0, values=v,
                   message=f"fibre dim {v['fibre_dim']} (= Nd^2 - rank Dφ), gauge rank {v['gauge_rank']}, "
                           f"expected (N-1)d^2 = {want}; residual counts mismatches")


fibre.property(over=("d", "N", "seed"), max_examples=15)


#: the gauge direction at W_p of the corrected fibre (derivative of g_p W_p g_{p-1}^{-1}, g = I + t xi) and misprints
FIBRE_VARIANTS = {
    "corrected": lambda xi, W, k: xi[k] * W - W * xi[k - 1],
    "sign_flipped": lambda xi, W, k: xi[k] * W + W * xi[k - 1],      # g_p W_p g_{p-1}
    "same_index": lambda xi, W, k: xi[k] * W - W * xi[k],            # g_p W_p g_p^{-1}
}


def _m3_prove(variant="corrected"):
    """Entries of d/dt phi(W + tV)|_{t=0} (sympy diff of the product) with V_p the gauge direction (variant),
    symbolic W_p and xi_1..xi_{N-1} (xi_0 = xi_N = 0), that do not expand to 0."""
    t = sp.Symbol("t")
    bad = 0
    for d, N in ((2, 2), (2, 3), (1, 4)):
        Ws = [sp.Matrix(d, d, lambda i, j, p=p: sp.Symbol(f"w{p}_{i}{j}")) for p in range(N, 0, -1)]
        xi = [sp.zeros(d, d)] + [sp.Matrix(d, d, lambda i, j, p=p: sp.Symbol(f"x{p}_{i}{j}"))
                                 for p in range(1, N)] + [sp.zeros(d, d)]
        moved = [W + t * FIBRE_VARIANTS[variant](xi, W, k) for W, k in zip(Ws, range(N, 0, -1))]
        dW = dln.prod(moved).diff(t).subs(t, 0)
        bad += sum(1 for e in dW if sp.expand(e) != 0)
    return bad


@fibre.symbolic(timeout=30)
def _m3_symbolic(p):
    """Symbolic W_p and ξ_p: d/dt φ(W + t(ξ_pW_p - W_pξ_{p-1})) = 0 at t = 0, so the GL_d gauge directions lie in
    ker Dφ."""
    bad = _m3_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy diff + expand", "instances_d_N": [[2, 2], [2, 3], [1, 4]],
        "proved": "sum_p A_{p+1}(ξ_p W_p - W_p ξ_{p-1})B_{p-1} = 0 for all ξ_1..ξ_{N-1} (ξ_0 = ξ_N = 0)"},
        message="entries that did not expand to zero")


@fibre.mutant({
    "sign_flipped": "the orbit g_pW_pg_{p-1} (no inverse): direction ξ_pW_p + W_pξ_{p-1}",
    "same_index": "the orbit g_pW_pg_p^{-1} (index not shifted): direction ξ_pW_p - W_pξ_p",
}, timeout=30)
def _m3_mutant(p, variant):
    """The gauge action perturbed, through the same procedure: Dφ of its directions must not vanish."""
    bad = _m3_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero_entries": bad},
                   message=f"{bad} entries of Dφ applied to the {variant} gauge directions did not expand to zero")


@fibre.falsifier("stated", search=("seed",))
def _m3_stated(p):
    """The printed count: the representations of W number (or span) N d² — measured (N-1)d², a continuum."""
    v = _fibre_measure(p.replace(point="random"), n_points=p.N * p.d ** 2 + 1)
    stated = p.N * p.d ** 2
    v["stated_count"] = stated
    return Outcome(residual=abs(v["fibre_dim"] - stated), tolerance=0, values=v,
                   counterexample={"fibre_dim": v["fibre_dim"], "stated": stated,
                                   "distinct_representations_found": v["distinct_fibre_points"]},
                   message=f"fibre dimension {v['fibre_dim']} != Nd^2 = {stated}" + (
                       f"; and {v['distinct_fibre_points']} > Nd^2 distinct representations on one gauge curve "
                       "(the fibre is a manifold, not a finite set)" if p.N >= 2 else
                       "; for N = 1 the fibre is the single point W_1 = W"))


@fibre.falsifier("zero_tuple", fixed={"point": "zero", "N": 2})
def _m3_zero(p):
    """Drop 'W invertible': at W = 0 with N >= 2, rank Dφ = 0, so ker Dφ has dimension Nd², not (N-1)d²."""
    if p.N < 2:
        raise ParamError("the zero_tuple falsifier needs N >= 2 (for N = 1, Dφ = I)")
    v = _fibre_measure(p.replace(point="zero"))
    want = (p.N - 1) * p.d ** 2
    return Outcome(residual=abs(v["fibre_dim"] - want), tolerance=0, values=v,
                   message=f"rank Dφ(0) = {v['rank_Dphi']} so dim ker Dφ = {v['fibre_dim']} != (N-1)d^2 = {want}")


# ===========================================================================
# M4  matrix completion (3.8) is degenerate
completion = Claim(
    id="menon.matrix_completion_degenerate",
    title="Matrix completion (3.8) is degenerate: E is minimised (E = 0) exactly on the affine space S",
    label="(3.8), Sec. 3.2",
    section="3.2",
    equation="(3.8)",
    lines=(150, 162),
    statement=r"E(W)=\tfrac12\sum_{(i,j)\in S}|W_{ij}-a_{ij}|^2\ \text{does not depend on } W_{ij},(i,j)\notin S,"
              r"\ \text{and is minimised on }\mathcal S=\{W: W_{ij}=a_{ij},(i,j)\in S\}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "matrix size", search=(1, 5)),
        Param.seed("seed of the mask S and values a_ij"),
        Param.float("density", 0.5, 0.0, 1.0, "probability that an entry is observed (S nonempty, S != all)",
                    search=(0.1, 0.9)),
        Param.float("spread", 100.0, 0.0, 1e6, "size of the unobserved entries of the test minimisers",
                    low_open=True),
    ],
    notes="Line 158 prints 'does not depend on the values M_ij' for W_ij (typo, E18). The minimiser set is the "
          "affine space S of dimension d^2 - |S| > 0 when S is not all entries (the hypothesis: otherwise the "
          "numeric check is inconclusive; the falsifier full_observation makes the point). Numeric check: the "
          "Hessian by second differences with step 1 (exact for a quadratic, rounding only) equals the "
          "projector diag(1_S); E vanishes at random points of S of size 'spread'; moving from a minimiser in "
          "the unobserved directions keeps E = 0 (degeneracy: min over unit directions of E(W*+v) is 0).",
    catalogue="menon §2.1 M4; §4 E18",
)


def _m4_instance(p, full=False):
    rng = np.random.default_rng(p.seed)
    mask = np.ones((p.d, p.d)) if full else (rng.random((p.d, p.d)) < p.density).astype(float)
    a = rng.standard_normal((p.d, p.d))
    return mask, a * mask, rng


def _mc_energy(W, mask, a):
    R = mask * (W - a)
    return 0.5 * float(np.sum(R * R))


def _m4_outcome(p, full=False):
    mask, a, rng = _m4_instance(p, full)
    d = p.d
    nS = int(mask.sum())
    Wstar = a + (1 - mask) * rng.standard_normal((d, d)) * p.spread
    # Hessian by central second differences, step 1: exact for a quadratic E, rounding only
    n = d * d
    H = np.zeros((n, n))
    base = _mc_energy(Wstar, mask, a)
    E = np.eye(n).reshape(n, d, d)
    for i in range(n):
        for j in range(i, n):
            f = lambda s, t: _mc_energy(Wstar + s * E[i] + t * E[j], mask, a)
            H[i, j] = H[j, i] = (f(1, 1) - f(1, -1) - f(-1, 1) + f(-1, -1)) / 4
    proj = np.diag(mask.ravel())
    # Rounding: the observed residuals are O(1) (W* - a = 0 on S, steps 1), each E evaluation errs by
    # <= gamma_{n+2} * (|R|^2 + 1 + ...) <= gamma_{n+2} * 4; four evaluations over 4. Unobserved entries of
    # size 'spread' are multiplied by 0 exactly and do not contribute.
    tol_H = 8 * _gamma(n + 4) * 4
    res_H = float(np.max(np.abs(H - proj)))
    # E on S: random points of S, far apart (spread)
    res_S = max(_mc_energy(a + (1 - mask) * rng.standard_normal((d, d)) * p.spread, mask, a) for _ in range(5))
    tol_S = 0.0  # observed entries equal a_ij exactly, so every residual is exactly 0
    # degeneracy: smallest value of E(W* + v) over unit directions = lambda_min(H)/2
    w, V = np.linalg.eigh(H)
    v = V[:, 0].reshape(d, d)
    res_deg = _mc_energy(Wstar + v, mask, a)
    tol_deg = 8 * _gamma(n + 4) * 2 + res_H  # rounding of E, plus the Hessian error entering v
    # off S, E > 0 and equals the explicit sum (a point with one observed entry off by 1)
    values = {"|S|": nS, "minimiser_set_dim": n - nS, "hessian_rank": int(np.sum(w > 0.5)),
              "hessian_vs_projector": res_H, "E_on_S_max": res_S, "E_at_unit_step_min": res_deg,
              "E_at_base": base, "lambda_min": float(w[0])}
    return Outcome.from_parts({"hessian_is_projector": (res_H, tol_H), "E_zero_on_S": (res_S, tol_S),
                               "degenerate_direction": (res_deg, tol_deg)},
                              "Hess E = P_S (rounding model), E = 0 on S (exact), E(W*+v) = 0 along the kernel",
                              values)


@completion.numeric
def _m4_numeric(p):
    """Hess E = projector onto S; E = 0 on S; E stays 0 along the unobserved directions from a minimiser."""
    mask, _, _ = _m4_instance(p)
    if mask.sum() == 0 or mask.sum() == p.d ** 2:
        return inconclusive("the drawn mask observes no entry or every entry; the degeneracy needs "
                            "0 < |S| < d^2", S=int(mask.sum()))
    return _m4_outcome(p)


completion.property(over=("d", "seed", "density"), max_examples=15)


_M4_S = [(0, 0), (0, 2), (1, 1), (2, 0), (2, 1)]
#: the matrix-completion energy as printed, E = 1/2 sum_S |W_ij - a_ij|^2, and misprints (W, a, S) -> E
COMPLETION_VARIANTS = {
    "stated": lambda W, a, S: sp.Rational(1, 2) * sum((W[i, j] - a[(i, j)]) ** 2 for (i, j) in S),
    "half_dropped": lambda W, a, S: sum((W[i, j] - a[(i, j)]) ** 2 for (i, j) in S),
    "sign_flipped": lambda W, a, S: sp.Rational(1, 2) * sum((W[i, j] + a[(i, j)]) ** 2 for (i, j) in S),
}


def _m4_prove(variant="stated"):
    """Failures of: Hess E = projector onto S, dE/dW_ij = 0 off S, E = 0 on {W_ij = a_ij, (i,j) in S} (the set
    claimed to be the minimisers), for symbolic W, a and a fixed mask S (d = 3)."""
    d, S = 3, _M4_S
    W = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"W_{i}{j}"))
    a = {(i, j): sp.Symbol(f"a_{i}{j}") for (i, j) in S}
    E = COMPLETION_VARIANTS[variant](W, a, S)
    vs = list(W)
    H = sp.hessian(E, vs)
    P = sp.diag(*[1 if (k // d, k % d) in S else 0 for k in range(d * d)])
    bad = sum(1 for e in (H - P) if sp.expand(e) != 0)
    bad += sum(1 for k, x in enumerate(vs) if (k // d, k % d) not in S and sp.diff(E, x) != 0)
    bad += int(sp.expand(E.subs({W[i, j]: a[(i, j)] for (i, j) in S})) != 0)
    return bad


@completion.symbolic(timeout=30)
def _m4_symbolic(p):
    """Symbolic W, a and a fixed mask: Hess E = diag(1_S), ∂E/∂W_ij = 0 off S, E - 0 on S expands to 0."""
    bad = _m4_prove()
    return Outcome(residual=bad, tolerance=0, values={
        "method": "sympy.hessian + expand", "d": 3, "S": _M4_S,
        "proved": "Hess E = projector onto S (rank |S|), E independent of W_ij off S, E = 0 on S"},
        message="entries that did not reduce to zero")


@completion.mutant({
    "half_dropped": "E = sum_S |W_ij - a_ij|^2 (the 1/2 dropped: Hess E = 2 P_S)",
    "sign_flipped": "E = 1/2 sum_S |W_ij + a_ij|^2 (E no longer vanishes on the claimed minimisers)",
}, timeout=30)
def _m4_mutant(p, variant):
    """The energy perturbed, through the same procedure: some identity must fail."""
    bad = _m4_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} entries/conditions did not reduce to zero for E ({variant})")


@completion.falsifier("full_observation", search=("seed",))
def _m4_full(p):
    """S = every entry: E is nondegenerate (Hess E = I), the minimiser is unique and E(W*+v) = 1/2 for unit v."""
    return _m4_outcome(p, full=True)


# ===========================================================================
# M5  E∘φ is not Morse (line 162)
morse = Claim(
    id="menon.not_morse",
    title="E∘φ is not a Morse function: its Hessian at a minimiser has (N-1)d² zero eigenvalues",
    label="Sec. 3.2",
    section="3.2",
    equation="",
    lines=(162, 162),
    statement=r"\phi\circ E(\mathbf W)\ \text{is not a Morse function due to overparametrization}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 4, "width", search=(1, 3)),
        Param.int("N", 3, 1, 5, "depth; N >= 2 for overparametrization", search=(2, 4)),
        Param.seed("seed of the target Y and the factorisation"),
        Param.float("h", 1e-2, 0.0, 1.0, "finite-difference step of the Hessian", low_open=True),
    ],
    notes="Printed '\\phi\\circ E' is read E∘φ (E18). Instance: E = 1/2|W - Y|^2 with Y invertible and W any "
          "factorisation of Y (W_1 = (W_N...W_2)^{-1} Y), a global minimiser. The Hessian is computed by central "
          "differences of the exact gradient (3.6); the gradient is a polynomial of degree 2 in each single "
          "coordinate, so the central difference is exact and only rounding (eps |grad|_abs / h) enters. "
          "Zero eigenvalues are those below that bound (Weyl); the count is exact, (N-1)d^2, because rank Dφ = d^2 "
          "at invertible W, and it also matches Dφ^T Dφ (the exact Hessian at a critical point with Hess E = I). "
          "LaSalle's failure (E not coercive) is not checked here. Falsifier N = 1: the Hessian is I (Morse).",
    catalogue="menon §2.1 M5; §4 E18",
)


def _m5_instance(p):
    rng = np.random.default_rng(p.seed)
    d, N = p.d, p.N
    Y = rng.standard_normal((d, d)) + 2 * np.eye(d)
    top = dln.random_layers([d] * N, rng, scale=1.0)  # W_N .. W_2
    if N > 1:
        for i in range(len(top)):
            top[i] = top[i] + np.eye(d)
        W1 = np.linalg.solve(dln.prod(top), Y)
        Ws = top + [W1]
    else:
        Ws = [Y.copy()]
    return Ws, Y


def _m5_hessian(p):
    Ws, Y = _m5_instance(p)
    d, N, h = p.d, p.N, p.h
    widths = [d] * (N + 1)
    x0 = dln.pack(Ws)
    n = x0.size

    def grad(x):
        L = dln.unpack(x, widths)
        return dln.pack(dln.grads(L, dln.prod(L) - Y))

    H = np.zeros((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        H[:, i] = (grad(x0 + e) - grad(x0 - e)) / (2 * h)
    H = (H + H.T) / 2
    J = _dphi(Ws)
    exact = J.T @ J
    # rounding model: each gradient entry errs by <= gamma_K * G_abs with G_abs the gradient computed
    # from absolute values at a point |W| + h; the difference quotient adds 2 of them over 2h.
    K = _chain_k(widths) + d + 4
    Wabs = [np.abs(w) + h for w in Ws]
    Gabs = dln.pack(dln.grads(Wabs, dln.prod(Wabs) + np.abs(Y)))
    col = 2 * _gamma(K) * Gabs / (2 * h) * 2
    tol_H = float(np.sqrt(n) * np.linalg.norm(col))  # Frobenius bound of the FD error matrix
    ev = np.linalg.eigvalsh(H)
    nzero = int(np.sum(np.abs(ev) <= tol_H))
    amb = bool(np.any((np.abs(ev) > tol_H) & (np.abs(ev) <= 1e3 * tol_H)))
    grad_at_min = float(np.linalg.norm(grad(x0)))
    v = {"zero_eigenvalues": nzero, "nonzero_eigenvalues": n - nzero, "n_parameters": n,
         "expected_zero": (N - 1) * d * d, "eig_tolerance": tol_H,
         "smallest_nonzero": float(np.min(np.abs(ev)[np.abs(ev) > tol_H])) if nzero < n else None,
         "largest_zero": float(np.max(np.abs(ev)[np.abs(ev) <= tol_H])) if nzero else None,
         "fd_vs_exact_hessian": float(np.linalg.norm(H - exact)), "grad_norm_at_minimiser": grad_at_min,
         "ambiguous": amb}
    return v, tol_H


@morse.numeric
def _m5_numeric(p):
    """FD Hessian of E∘φ at a factorisation of Y: >= (N-1)d² zero eigenvalues (exactly that many), not Morse."""
    if p.N < 2:
        return inconclusive("N = 1 is not overparametrized (see the falsifier depth_one)", N=p.N)
    v, tol = _m5_hessian(p)
    if v["ambiguous"]:
        return inconclusive("an eigenvalue lies in the grey zone of the rounding model", **v)
    want = (p.N - 1) * p.d ** 2
    # not Morse: at least (N-1)d^2 (>= 1) zero eigenvalues; and the FD Hessian agrees with Dφ^T Dφ
    deficit = max(0, want - v["zero_eigenvalues"]) + int(v["fd_vs_exact_hessian"] > tol)
    return Outcome(residual=deficit, tolerance=0, values=v,
                   message=f"{v['zero_eigenvalues']} zero / {v['nonzero_eigenvalues']} nonzero Hessian eigenvalues "
                           f"(>= {want} zero required); FD vs Dφ^TDφ {v['fd_vs_exact_hessian']:.1e} (tol {tol:.1e})")


morse.property(over=("d", "N", "seed"), max_examples=12)


@morse.falsifier("depth_one", fixed={"N": 1})
def _m5_depth_one(p):
    """N = 1: L = E, Hessian I, no zero eigenvalue — Morse; the overparametrization is what breaks it."""
    v, tol = _m5_hessian(p.replace(N=1))
    return Outcome(residual=max(0, 1 - v["zero_eigenvalues"]), tolerance=0, values=v,
                   message=f"N = 1: {v['zero_eigenvalues']} zero eigenvalues (a degenerate critical point needs >= 1)")


@morse.reproduction
def _m5_reproduction(p):
    """Catalogue §2.1 M5: d = 3, N = 3 gives exactly 18 zero and 9 nonzero Hessian eigenvalues."""
    quoted = (18, 9)
    v, _ = _m5_hessian(morse.resolve({"d": 3, "N": 3, "seed": 0}))
    got = (v["zero_eigenvalues"], v["nonzero_eigenvalues"])
    return Outcome(residual=abs(got[0] - quoted[0]) + abs(got[1] - quoted[1]), tolerance=0,
                   values={"computed": list(got), "quoted": list(quoted), **v},
                   message="zero / nonzero eigenvalue counts, compared exactly")


# ===========================================================================
# R5  Remark 5: thin gradients (erratum E19)
POINTS = ("random", "zero", "diag")

thin = Claim(
    id="menon.thin_gradients",
    title="Thin gradients: the gradients of E∘φ at W span rank Dφ(W) ≤ d² dimensions (= d² when nondegenerate)",
    label="Remark 5",
    section="4.4",
    equation="(3.6)",
    lines=(296, 296),
    statement=r"\text{the space of gradients of } L=E\circ\phi \text{ at } \mathbf W \text{ has } d^2 \text{ dimensions}",
    status="erratum",
    corrected=r"\dim\{\nabla(E\circ\phi)(\mathbf W)\}=\operatorname{rank}D\phi(\mathbf W)\le d^2,\ "
              r"=d^2\text{ if some }A_{p+1},B_{p-1}\text{ are both invertible; and }"
              r"\nabla(E\circ\phi)\perp\ker D\phi",
    params=[
        Param.int("d", 3, 1, 5, "width", search=(1, 4)),
        Param.int("N", 4, 1, 6, "depth", search=(1, 5)),
        Param.seed("seed of the layers and the energies"),
        Param.choice("point", "random", POINTS,
                     "random layers, the zero tuple, or all W_p = diag(1, 0, ..., 0)"),
    ],
    notes="Erratum E19: Remark 5 first says 'at most d^2' (correct) and then 'has d^2 dimensions', which fails "
          "at degenerate points: rank 0 at W = 0 and rank 2d - 1 (5 for d = 3) when every W_p = diag(1,0,..,0), "
          "N >= 2 (first row + first column of E'; d^2 for N = 1). The space of gradients is the image of E' -> "
          "(A_{p+1}^T E' B_{p-1}^T)_p = Dφ^T, whose rank is rank Dφ. Related claim (Sec. 2, item (3), line 105): "
          "L is constant along ker Dφ, so ∇L = Dφ^T E' ⟂ ker Dφ; checked with a random E' and a basis of ker Dφ.",
    catalogue="menon §2.2 R5; §4 E19",
)


def _thin_layers(p):
    rng = np.random.default_rng(p.seed)
    d, N = p.d, p.N
    if p.point == "zero":
        return [np.zeros((d, d)) for _ in range(N)], rng
    if p.point == "diag":
        e = np.zeros((d, d))
        e[0, 0] = 1.0
        return [e.copy() for _ in range(N)], rng
    return dln.random_layers([d] * (N + 1), rng), rng


def _thin_measure(p):
    Ws, rng = _thin_layers(p)
    d, N = p.d, p.N
    widths = [d] * (N + 1)
    k = _chain_k(widths)
    # array-API path (p.backend): Dφ and the gradient map are assembled on the host, ranks (SVD), the null basis
    # and the orthogonality product run on the backend
    xp = xp_of(p)
    J, Jabs = XM.to_xp(xp, [_dphi(Ws), _dphi(_abs(Ws))])
    # the gradient map E' -> (D_p) is J^T; build it from dln.grads on the basis E_lm (Remark 5's energies)
    G = XM.to_xp(xp, [np.array([dln.pack(dln.grads(Ws, e)) for e in _gl_basis(d)]).T])[0]
    rank, s, tau, amb = _rank(G, Jabs.T, k)
    # hypothesis of the corrected '= d^2': some p with A_{p+1} and B_{p-1} both invertible
    conds = []
    for q in range(1, N + 1):
        A, B = dln.partial_A(Ws, q + 1), dln.partial_B(Ws, q - 1)
        conds.append(max(_cond(A), _cond(B)))
    hyp = bool(min(conds) < 1e8)
    # orthogonality to ker Dφ
    Ep = rng.standard_normal((d, d))
    g = dln.pack(dln.grads(Ws, Ep))
    Kb = _null_basis(J, rank)
    orth = XM.fro(Kb.T @ XM.to_xp(xp, [g])[0]) if Kb.shape[0] * Kb.shape[1] else 0.0
    gabs = dln.pack(dln.grads(_abs(Ws), np.abs(Ep)))
    # K spans the right singular vectors of the singular values <= tau, so |K^T J^T E'| <= tau |E'|;
    # plus the rounding of g itself (gamma_{k+1} times the same products of absolute values)
    orth_tol = 4 * (_gamma(k + 1) * float(np.linalg.norm(gabs)) + 2 * tau * float(np.linalg.norm(Ep)))
    return {"rank": rank, "d2": d * d, "n_parameters": N * d * d, "hypothesis_invertible_pair": hyp,
            "min_cond_pair": float(min(conds)), "ambiguous": amb, "rank_tau": tau,
            "orthogonality_residual": orth, "orthogonality_tolerance": orth_tol,
            "rank_Dphi": _rank(J, Jabs, k)[0]}


@thin.numeric(backends=("numpy", "cupy"))
def _thin_numeric(p):
    """rank of E' -> ∇(E∘φ) is <= d², = d² when some A_{p+1}, B_{p-1} are invertible; ∇L ⟂ ker Dφ."""
    v = _thin_measure(p)
    if v["ambiguous"]:
        return inconclusive("a singular value in the grey zone of the rounding model", **v)
    mismatch = max(0, v["rank"] - v["d2"])
    if v["hypothesis_invertible_pair"]:
        mismatch += abs(v["rank"] - v["d2"])
    mismatch += abs(v["rank"] - v["rank_Dphi"])
    mismatch += int(v["orthogonality_residual"] > v["orthogonality_tolerance"])
    return Outcome(residual=mismatch, tolerance=0, values=v,
                   message=f"rank {v['rank']} (<= d^2 = {v['d2']}; '=' required: {v['hypothesis_invertible_pair']}); "
                           f"|P_ker ∇L| = {v['orthogonality_residual']:.1e} (tol {v['orthogonality_tolerance']:.1e})")


thin.property(over=("d", "N", "seed", "point"), max_examples=15)


def _thin_stated(p):
    v = _thin_measure(p)
    return Outcome(residual=abs(v["rank"] - v["d2"]), tolerance=0, values=v,
                   counterexample={"point": p.point, "rank": v["rank"], "d^2": v["d2"]},
                   message=f"at point={p.point}: the gradients span {v['rank']} dimensions, not d^2 = {v['d2']}")


@thin.falsifier({
    "stated": "Printed 'has d² dimensions' at W = 0 (N >= 2): the gradients span 0 dimensions.",
    "stated_rank_deficient": {"description": "Printed 'has d² dimensions' at W_p = diag(1,0,0) (d = 3, "
                                             "N = 4): rank 5 = 2d - 1, not 9.",
                              "fixed": {"point": "diag", "d": 3, "N": 4}},
}, fixed={"point": "zero"})
def _(p, variant):
    return _thin_stated(p)


@thin.reproduction
def _thin_reproduction(p):
    """Catalogue §2.2 R5: ranks 9 (generic), 0 (W = 0), 5 (all W_p = diag(1,0,0)) at d = 3, N = 4."""
    quoted = {"random": 9, "zero": 0, "diag": 5}
    got = {pt: _thin_measure(thin.resolve({"d": 3, "N": 4, "seed": 0, "point": pt}))["rank"] for pt in quoted}
    return Outcome(residual=sum(abs(got[k] - quoted[k]) for k in quoted), tolerance=0,
                   values={"computed": got, "quoted": quoted}, message="ranks compared exactly")


# ===========================================================================
# R6  Remark 6: the parameter count
count = Claim(
    id="menon.parameter_count",
    title="Group orbits: (N-1)d² free parameters, (N-1)d(d+1)/2 fixed by G, the rest an orbit of dimension (N-1)dim St_{r,d}",
    label="Remark 6",
    section="4.4",
    equation="(4.6)",
    lines=(298, 298),
    statement=r"(N-1)d^2\ \text{free parameters, of which } (N-1)\tfrac{d(d+1)}2 \text{ are fixed by } "
              r"(G_N,\dots,G_1);\ \phi^{-1}(W)\cap\mathcal M \text{ is an } \mathrm{St}_{r,d}^{N-1}\text{ orbit}",
    status="holds",
    params=[
        Param.int("d", 3, 1, 5, "width", search=(1, 4)),
        Param.int("N", 4, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of the balanced point"),
        Param.int("rank", -1, -1, 5, "rank r of W (-1: full rank d)"),
    ],
    validate=_validate_rank,
    notes="Printed '(G_N, ..., G_1)' is read (G_{N-1}, ..., G_1) (E18): there are N-1 constants. Arithmetic: "
          "(N-1)d^2 = (N-1)d(d+1)/2 + (N-1)d(d-1)/2 and Nd^2 - (N-1)d(d+1)/2 = (4.6) (sympy). Numeric at a "
          "balanced point of rank r (parametrisation z, (5.15)): for r = d, rank Dφ = d^2 so the fibre has "
          "(N-1)d^2 dimensions; the Jacobian of W -> (C_p) restricted to ker Dφ has rank (N-1)d(d+1)/2; "
          "the O_d^{N-1} generators (ξ_p W_p - W_p ξ_{p-1}, ξ_p in so(d)) lie in ker Dφ ∩ ker DC and span "
          "(N-1)d(d-1)/2 = (N-1) dim St_{d,d}. For r < d only the orbit dimension (N-1)(rd - r(r+1)/2) = "
          "(N-1) dim St_{r,d} is checked; note dim St_{d-1,d} = dim O_d, so the full-rank orbit count only "
          "fails for r <= d-2.",
    catalogue="menon §2.2 R6, B3, O1; §4 E18",
)


def _dC(Ws) -> tuple[np.ndarray, np.ndarray]:
    """Jacobian of W -> (C_1..C_{N-1}) (upper triangles, C_p = W_{p+1}^TW_{p+1} - W_pW_p^T), and its abs version."""
    N, d = len(Ws), Ws[0].shape[0]
    iu = np.triu_indices(d)
    n = sum(w.size for w in Ws)
    widths = [d] * (N + 1)

    def apply(Ls, V):
        out = []
        for k in range(1, N):
            A, dA = dln.layer(Ls, k + 1), dln.layer(V, k + 1)
            B, dB = dln.layer(Ls, k), dln.layer(V, k)
            out.append((dA.T @ A + A.T @ dA - dB @ B.T - B @ dB.T)[iu])
        return np.concatenate(out) if out else np.zeros(0)

    J = np.array([apply(Ws, dln.unpack(e, widths)) for e in np.eye(n)]).T
    Ja = np.abs(np.array([apply(_abs(Ws), dln.unpack(e, widths)) for e in np.eye(n)]).T)
    return J, Ja


def _count_measure(p):
    d, N = p.d, p.N
    r = d if p.rank < 0 else p.rank
    lam, Qs, Ws = balanced_instance(d, N, p.seed, zeros=d - r)
    k = _chain_k([d] * (N + 1))
    so = [alpha(d, i, j) for (i, j) in pairs(d)]
    # array-API path (p.backend): the Jacobians and the orbit generators are assembled on the host, every rank
    # (SVD), null basis and product runs on the backend
    xp = xp_of(p)
    C, Cabs = _dC(Ws)
    O, Oabs = _gauge_basis(Ws, so), _gauge_basis(_abs(Ws), [np.abs(x) for x in so])
    has_O = bool(O.size)
    J, Jabs, C, Cabs = XM.to_xp(xp, [_dphi(Ws), _dphi(_abs(Ws)), C, Cabs])
    rphi, _, _, a1 = _rank(J, Jabs, k)
    K = _null_basis(J, rphi)
    rC, _, _, a2 = _rank(C @ K, Cabs @ xp.abs(K), 2 * d + N * d * d)
    if has_O:
        O, Oabs = XM.to_xp(xp, [O, Oabs])
    rO, _, _, a3 = _rank(O, Oabs, d + 1) if has_O else (0, None, 0.0, False)
    inside = XM.fro(J @ O) + XM.fro(C @ O) if has_O else 0.0
    inside_tol = 8 * _gamma(k + 2 * d) * (XM.fro(Jabs @ xp.abs(O)) + XM.fro(Cabs @ xp.abs(O))) if has_O else 0.0
    return {"r": r, "rank_Dphi": rphi, "fibre_dim": N * d * d - rphi, "rank_dC_on_fibre": rC,
            "orbit_dim": rO, "orbit_in_kernels_residual": inside, "orbit_in_kernels_tolerance": inside_tol,
            "ambiguous": a1 or a2 or a3, "lambda": lam.tolist(),
            "expected": {"fibre": (N - 1) * d * d, "fixed_by_G": (N - 1) * d * (d + 1) // 2,
                         "orbit": (N - 1) * (r * d - r * (r + 1) // 2)}}


@count.numeric(backends=("numpy", "cupy"))
def _count_numeric(p):
    """Ranks at a balanced point: fibre (N-1)d², G-constraints (N-1)d(d+1)/2 on it, orbit (N-1)dim St_{r,d}."""
    v = _count_measure(p)
    if v["ambiguous"]:
        return inconclusive("a singular value in the grey zone of the rounding model", **v)
    e = v["expected"]
    mismatch = abs(v["orbit_dim"] - e["orbit"]) + int(v["orbit_in_kernels_residual"] > v["orbit_in_kernels_tolerance"])
    if v["r"] == p.d:
        mismatch += abs(v["fibre_dim"] - e["fibre"]) + abs(v["rank_dC_on_fibre"] - e["fixed_by_G"])
        mismatch += abs(e["fibre"] - e["fixed_by_G"] - v["orbit_dim"])
    return Outcome(residual=mismatch, tolerance=0, values=v,
                   message=f"fibre {v['fibre_dim']}, fixed by G {v['rank_dC_on_fibre']}, orbit {v['orbit_dim']} "
                           f"(expected {e}); residual counts mismatches")


count.property(over=("d", "N", "seed"), max_examples=12)


#: the count of equations fixed by (G_N, ..., G_1) as printed, (N-1)d(d+1)/2, and misprints
COUNT_VARIANTS = {
    "stated": lambda d, N: (N - 1) * d * (d + 1) / 2,
    "typo_N_constants": lambda d, N: N * d * (d + 1) / 2,
    "sign_flipped": lambda d, N: (N - 1) * d * (d - 1) / 2,
}


def _count_prove(variant="stated"):
    """Identities (N-1)d^2 = fixed + (N-1) dim O_d, Nd^2 - fixed = (4.6), d(d-1)/2 - (d-r)(d-r-1)/2 = dim St_{r,d}
    (= rd - r(r+1)/2) with fixed the variant count; returns (failed, identities)."""
    d, N, r = sp.symbols("d N r")
    fixed = COUNT_VARIANTS[variant](d, N)
    ids = [(N - 1) * d ** 2 - (fixed + (N - 1) * d * (d - 1) / 2),
           N * d ** 2 - fixed - (d ** 2 + (N - 1) * d * (d - 1) / 2),
           d * (d - 1) / 2 - (d - r) * (d - r - 1) / 2 - (r * d - r * (r + 1) / 2)]
    return sum(1 for e in ids if sp.expand(e) != 0), ids


@count.symbolic(timeout=30)
def _count_symbolic(p):
    """(N-1)d² = (N-1)d(d+1)/2 + (N-1)d(d-1)/2, Nd² - (N-1)d(d+1)/2 = (4.6), d(d-1)/2 - (d-r)(d-r-1)/2 = dim St_{r,d}."""
    bad, ids = _count_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "identities": [str(i) for i in ids]},
                   message="identities that did not expand to zero")


@count.mutant({
    "typo_N_constants": "N d(d+1)/2 equations fixed by the N constants as read literally",
    "sign_flipped": "(N-1)d(d-1)/2 equations fixed (d-1 for d+1)",
}, timeout=30)
def _count_mutant(p, variant):
    """The count perturbed, through the same procedure: an identity must fail."""
    bad, ids = _count_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"remainders": [str(sp.factor(i)) for i in ids]},
                   message=f"{bad} of 3 count identities failed for {variant}")


@count.falsifier("typo_n_constants")
def _count_typo(p):
    """Read literally, N constants (G_N, ..., G_1) fix N d(d+1)/2: the orbit would have (N-1)d² - N d(d+1)/2 dims."""
    v = _count_measure(p.replace(rank=-1))
    wrong = (p.N - 1) * p.d ** 2 - p.N * p.d * (p.d + 1) // 2
    return Outcome(residual=abs(v["orbit_dim"] - wrong), tolerance=0, values={**v, "typo_prediction": wrong},
                   message=f"measured orbit dimension {v['orbit_dim']} vs {wrong} from N constants")


@count.falsifier("full_rank_count_at_rank_deficient", fixed={"rank": 1})
def _count_rank_deficient(p):
    """At rank r <= d-2 the O_d count (N-1)d(d-1)/2 fails; the orbit has (N-1)dim St_{r,d} dimensions.

    (r = d-1 is no counterexample: St_{d-1,d} = SO(d) has the dimension of O_d.)"""
    if p.rank < 0 or p.rank > p.d - 2:
        raise ParamError("this falsifier needs 0 <= rank <= d - 2 (dim St_{d-1,d} = dim O_d)")
    v = _count_measure(p)
    wrong = (p.N - 1) * p.d * (p.d - 1) // 2
    return Outcome(residual=abs(v["orbit_dim"] - wrong), tolerance=0, values={**v, "full_rank_count": wrong},
                   message=f"orbit dimension {v['orbit_dim']} at rank {v['r']} vs (N-1)d(d-1)/2 = {wrong}")


@count.reproduction
def _count_reproduction(p):
    """Catalogue §2.2 B3/R6 at d = 3, N = 4: rank of d(C_p) = 18 = (N-1)d(d+1)/2."""
    quoted = 18
    v = _count_measure(count.resolve({"d": 3, "N": 4, "seed": 0}))
    C, Cabs = _dC(balanced_instance(3, 4, 0)[2])
    rank_dC = _rank(C, Cabs, 6 + 36)[0]
    return Outcome(residual=abs(rank_dC - quoted) + abs(v["rank_dC_on_fibre"] - quoted), tolerance=0,
                   values={"rank_dC": rank_dC, "rank_dC_on_fibre": v["rank_dC_on_fibre"], "quoted": quoted},
                   message="rank of W -> (C_p) on M^N and on the fibre, compared exactly")


# ===========================================================================
# R7  Remark 7: (4.23) and the N = 2 identity
norm = Claim(
    id="menon.norm_identity",
    title="Remark 7: |W_{p+1}|² = |W_p|² - Tr G_p (4.23), and |W_2W_1|² = Tr K² - Tr GK for N = 2",
    label="Remark 7",
    section="4.4",
    equation="(4.23), (4.2)",
    lines=(300, 308),
    statement=r"\|W_{p+1}\|^2=\operatorname{Tr}(W_{p+1}^TW_{p+1})=\operatorname{Tr}(W_pW_p^T-G_p)=\|W_p\|^2-"
              r"\operatorname{Tr}G_p;\quad N=2:\ \|W_2W_1\|^2=\operatorname{Tr}K^2-\operatorname{Tr}GK,\ K=W_1W_1^T",
    status="holds",
    params=[
        Param.int("d", 3, 1, 8, "width", search=(1, 5)),
        Param.int("N", 3, 2, 8, "depth (the product identity is checked when N = 2, on (W_2, W_1) otherwise)",
                  search=(2, 5)),
        Param.seed("seed of the layers"),
    ],
    notes="Convention (4.2): G_p = W_pW_p^T - W_{p+1}^TW_{p+1} (= -C_p; E1). (4.23) holds for every W with that "
          "convention; the N = 2 identity (catalogue §2.2 R7) gives |K|^2 - |G||K| <= |W|^2, the only part of the "
          "'equivalence' of bounds on |W_1| and |W| that is checked (the general-N claim is stated without proof). "
          "Falsifier: the (4.8) sign convention G_p = W_{p+1}^TW_{p+1} - W_pW_p^T in the same formulas.",
    catalogue="menon §2.2 R7; §4 E1",
)


def _norm_outcome(p, sign=+1):
    """Array-API path: the layers are drawn on the host, every trace and norm is computed on p.backend."""
    rng = np.random.default_rng(p.seed)
    d, N = p.d, p.N
    xp = xp_of(p)
    Ws = XM.to_xp(xp, dln.random_layers([d] * (N + 1), rng))
    G = [sign * (-c) for c in dln.conserved(Ws)]  # (4.2): G_p = W_pW_p^T - W_{p+1}^TW_{p+1} = -C_p
    sq = lambda A: XM.vdot(A, A)  # noqa: E731  |A|_F^2
    tr = lambda A: float(xp.linalg.trace(A))  # noqa: E731
    res423, tol423 = 0.0, 0.0
    for k in range(1, N):
        lhs = sq(dln.layer(Ws, k + 1))
        rhs = sq(dln.layer(Ws, k)) - tr(G[k - 1])
        res423 = max(res423, abs(lhs - rhs))
        # rounding: each trace/norm is a sum of d^2 products of d terms: gamma_{2d} (|W_p|^2 + |W_{p+1}|^2) each
        tol423 = max(tol423, 4 * _gamma(2 * d + 2) * (sq(dln.layer(Ws, k)) + sq(dln.layer(Ws, k + 1))))
    W2, W1 = dln.layer(Ws, 2), dln.layer(Ws, 1)
    K, G1 = W1 @ W1.T, G[0]
    lhs = sq(W2 @ W1)
    rhs = tr(K @ K) - tr(G1 @ K)
    a1, a2 = sq(W1), sq(W2)
    # rounding: products of up to 4 layer factors with d-term inner sums; absolute scale |W_1|^2(|W_1|^2+|W_2|^2)
    tol2 = 8 * _gamma(4 * d + 4) * (a1 * (a1 + a2) + a1 * a2)
    res2 = abs(lhs - rhs)
    ineq = XM.fro(K) ** 2 - XM.fro(G1) * XM.fro(K) - lhs
    values = {"max_residual_4_23": res423, "tol_4_23": tol423, "product_lhs": lhs, "product_rhs": rhs,
              "product_residual": res2, "tol_product": tol2,
              "inequality_|K|^2-|G||K|-|W|^2": ineq, "convention": "(4.2)" if sign > 0 else "(4.8)"}
    res = max(res423 / tol423, res2 / tol2) if tol423 > 0 else res2 / tol2
    return Outcome(residual=res, tolerance=1.0, values=values,
                   message="max over (4.23) for all p and the N=2 product identity of |lhs - rhs| / rounding bound")


@norm.numeric(backends=("numpy", "cupy"))
def _norm_numeric(p):
    """(4.23) for every p and |W_2W_1|² = Tr K² - Tr GK, in the (4.2) convention, to rounding."""
    out = _norm_outcome(p)
    if out.values["inequality_|K|^2-|G||K|-|W|^2"] > out.values["tol_product"]:
        out.residual = max(out.residual, 2.0)
        out.message += "; the inequality |K|^2 - |G||K| <= |W_2W_1|^2 fails"
    return out


norm.property(over=("d", "N", "seed"), max_examples=20)


#: G and K of Remark 7 in convention (4.2), and the nearest misprints: (W2, W1) -> (G, K)
NORM_VARIANTS = {
    "stated": lambda W2, W1: (W1 * W1.T - W2.T * W2, W1 * W1.T),
    "sign_flipped": lambda W2, W1: (W2.T * W2 - W1 * W1.T, W1 * W1.T),   # the (4.8) sign
    "K_transposed": lambda W2, W1: (W1 * W1.T - W2.T * W2, W1.T * W1),
}


def _norm_prove(variant="stated"):
    """Nonzero remainders of (4.23) and |W_2W_1|^2 - Tr K^2 + Tr GK for symbolic W_2, W_1 (d = 2, 3)."""
    bad = 0
    for d in (2, 3):
        W2 = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"a_{i}{j}"))
        W1 = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"b_{i}{j}"))
        G, K = NORM_VARIANTS[variant](W2, W1)
        bad += int(sp.expand((W2.T * W2).trace() - ((W1 * W1.T).trace() - G.trace())) != 0)
        P = W2 * W1
        bad += int(sp.expand((P.T * P).trace() - (K * K).trace() + (G * K).trace()) != 0)
    return bad


@norm.symbolic(timeout=30)
def _norm_symbolic(p):
    """Symbolic W_2, W_1 (d = 2, 3): (4.23) and |W_2W_1|² - Tr K² + Tr GK expand to 0."""
    bad = _norm_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.expand", "d": [2, 3],
                                                      "proved": "(4.23) and the N=2 identity in convention (4.2)"},
                   message="identities that did not expand to zero")


@norm.mutant({
    "sign_flipped": "G = W_2^TW_2 - W_1W_1^T (the (4.8) sign) in (4.23) and the N = 2 identity",
    "K_transposed": "K = W_1^TW_1 for W_1W_1^T in the N = 2 identity",
}, timeout=30)
def _norm_mutant(p, variant):
    """Remark 7 perturbed, through the same procedure: an identity must fail."""
    bad = _norm_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed": bad},
                   message=f"{bad} of 4 identities did not expand to zero ({variant})")


@norm.falsifier("convention_4_8", search=("seed",), backends=("numpy", "cupy"))
def _norm_flipped(p):
    """The (4.8) sign G_p = W_{p+1}^TW_{p+1} - W_pW_p^T in (4.23) and the N = 2 identity: both fail."""
    return _norm_outcome(p, sign=-1)


# ===========================================================================
# K3  (14.3)-(14.4): a rank-one variety in the zero set of (14.1)
rankone = Claim(
    id="menon.rank_one_zero_set",
    title="The matrices [[1, a], [1/a, 1]] are rank one and minimise the completion energy (14.1)",
    label="(14.3)-(14.4), Fig. 9.5",
    section="14.1",
    equation="(14.1)-(14.4)",
    lines=(1026, 1038),
    statement=r"W=\begin{pmatrix}1&a\\ \frac1a&1\end{pmatrix},\ a\ne0:\ \operatorname{rank}W=1,\ "
              r"E(W)=\tfrac12((W_{11}-1)^2+(W_{22}-1)^2)=0",
    status="holds",
    params=[Param.float("a", 2.0, -1e4, 1e4, "the parameter a != 0 of (14.3)")],
    validate=_validate_a,
    notes="Figure 9.5 (line 785) is the picture of this hyperbola; line 1036 cites Fig. 9.1 instead (E15). "
          "(14.4) [[1,1],[1,1]] is a = 1; a = -1 is equally a member (E15: limits cluster at both). Symbolic: "
          "det = 0 and E = 0 for symbolic a, and conversely W_11 = W_22 = 1, det W = 0 force W_21 = 1/W_12. "
          "Numeric: sigma_2/sigma_1 <= 8 eps (the only rounding is fl(1/a), a relative error u, giving "
          "|det| <= 2u|a||1/a|, plus the SVD's backward error ~ 2 eps sigma_1; sigma_1 >= 2). |a| < 1e-4 "
          "is rejected so that 1/a stays moderate.",
    catalogue="menon §2.6 K3; §2.10 OP14.1; §4 E15",
)


def _k3_outcome(W, xp=None):
    """sigma_2/sigma_1 + E(W); the SVD, E and det on ``xp`` (array API) when given, else NumPy."""
    Wx = W if xp is None else XM.to_xp(xp, [W])[0]
    xq = namespace(Wx)
    s = XM.host(xq.linalg.svdvals(Wx))
    E = float(0.5 * ((Wx[0, 0] - 1) ** 2 + (Wx[1, 1] - 1) ** 2))
    return Outcome(residual=float(s[1] / s[0] + E), tolerance=8 * EPS,
                   values={"W": np.asarray(W).tolist(), "singular_values": s.tolist(), "E": E,
                           "det": float(xq.linalg.det(Wx))},
                   message="sigma_2/sigma_1 + E(W) against the rounding of fl(1/a) and the SVD")


@rankone.numeric(backends=("numpy", "cupy"))
def _k3_numeric(p):
    """sigma_2/sigma_1 of [[1, a], [1/a, 1]] is rounding-level and E (14.1) vanishes."""
    return _k3_outcome(np.array([[1.0, p.a], [1.0 / p.a, 1.0]]), xp=xp_of(p))


rankone.property(over=("a",), max_examples=20)


#: the family (14.4) as printed, W = [[1, a], [1/a, 1]], and misprints
RANK_ONE_VARIANTS = {
    "stated": lambda a: sp.Matrix([[1, a], [1 / a, 1]]),
    "sign_flipped": lambda a: sp.Matrix([[1, a], [-1 / a, 1]]),
    "symmetric": lambda a: sp.Matrix([[1, a], [a, 1]]),
}


def _k3_prove(variant="stated"):
    """Failures of det W = 0 and E(W) = 0 for the family (variant), and of the converse: W = [[1, b], [c, 1]]
    (E = 0) has rank one iff c = 1/b."""
    a, b, c = sp.symbols("a b c")
    W = RANK_ONE_VARIANTS[variant](a)
    E = sp.Rational(1, 2) * ((W[0, 0] - 1) ** 2 + (W[1, 1] - 1) ** 2)
    bad = int(sp.cancel(W.det()) != 0) + int(sp.expand(E) != 0)
    sol = sp.solve(sp.Matrix([[1, b], [c, 1]]).det(), c)
    bad += int(len(sol) != 1 or sp.cancel(sol[0] - 1 / b) != 0)
    return bad, sol, sp.cancel(W.det())


@rankone.symbolic(timeout=30)
def _k3_symbolic(p):
    """det [[1,a],[1/a,1]] = 0 and E = 0; conversely the rank-one zeros of (14.1) are exactly this family."""
    bad, sol, _ = _k3_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy.cancel / solve", "solution_c": str(sol),
                                                      "proved": "det = 0, E = 0; zero set ∩ rank one = {c = 1/b}"},
                   message="conditions that failed")


@rankone.mutant({
    "sign_flipped": "W = [[1, a], [-1/a, 1]] (sign of the lower-left entry flipped)",
    "symmetric": "W = [[1, a], [a, 1]] (a for 1/a)",
}, timeout=30)
def _k3_mutant(p, variant):
    """(14.4) perturbed, through the same procedure: det W must not vanish."""
    bad, _, det = _k3_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"det": str(det)},
                   message=f"{bad} conditions failed for {variant}: det W = {det}")


@rankone.falsifier("symmetric_family", search=("a",))
def _k3_symmetric(p):
    """[[1, a], [a, 1]] (generalising (14.4) symmetrically) has E = 0 but rank 2 unless a = ±1."""
    return _k3_outcome(np.array([[1.0, p.a], [p.a, 1.0]]))
