"""Sinkhorn attention (Sander, thesis ch. 5): log-domain Sinkhorn, the SoftMax half-step, particle
fields and functionals of Prop 5.3, and the Gaussian closed forms behind Thm 5.5 and Prop 5.6.

Conventions (catalogue sander_part23 §1, §6 A3)
-----------------------------------------------
* ``C[i, j] = (W_Q x_i)^T W_K x_j``, ``K^0 = exp(C)``; (5.3) alternates ``N_R`` (rows) and ``N_C``
  (columns) starting with ``N_R``: ``K^1 = SoftMax(C)`` (row-wise) is ONE half-step.
* One **full iteration** = one row normalisation followed by one column normalisation, so
  ``K^(2m)`` is the result of ``m`` full iterations (column-stochastic) and ``K^(2m+1)`` is row-stochastic.
  Iteration counts returned here are always full iterations.
* Log domain: ``K = exp(C + f 1^T + 1 g^T)`` (potentials ``f, g``).  With weights ``w`` (a measure
  ``mu = sum_j w_j delta_{x_j}``) the marginal constraints are ``sum_j w_j K_ij = 1`` and
  ``sum_i w_i K_ij = 1``: ``w = 1`` gives the doubly stochastic matrix ``K^inf`` of (5.3),
  ``w = 1/n`` gives the continuous kernel ``k^inf(x_i, x_j) = n K^inf_ij`` normalised against
  ``mu_n`` (E5.4).
* **Stopping rule**: after each full iteration the columns are normalised (exactly, up to rounding);
  the run stops after the first full iteration whose row error
  ``max_i |sum_j w_j K_ij - 1|`` is ``<= tol`` (or after ``max_iter`` full iterations, ``converged=False``).
  The row error of iterate m is read off the row log-sum-exp of iteration m+1, so checking costs nothing.

``sinkhorn_log`` / ``sinkhorn_log_batch`` are Numba kernels (``cache=True``); ``sinkhorn_log_numpy``
is the NumPy reference.  Errors in the inputs raise ``ValueError`` naming the argument.

Two domains, one iteration
--------------------------
The log domain costs ``2 n^2`` ``exp`` per full iteration.  :func:`sinkhorn_scaling` runs the same
iteration in the exponential domain, ``K = diag(u) K_0 diag(v)`` with ``K_0 = exp(C + alpha + beta)``:
two matrix-vector products (BLAS) and ``O(n)`` work per full iteration, with the stabilisation of
Schmitzer (2019): the first row half-step is taken in the log domain (``alpha = -lse_j(C + log w)``, so
``K_0`` is row-normalised and cannot overflow), and whenever a scaling leaves ``[1e-100, 1e100]`` it is
absorbed into the potentials (``alpha += log u``, ``beta += log v``, ``K_0`` recomputed).  Where a row
or a column of ``K_0`` underflows to zero (a cost range beyond ~700, e.g. ``C/eps`` with a small ``eps``),
the scaling cannot continue and :func:`sinkhorn` (``method="auto"``) reruns the log-domain iteration;
``SinkhornResult.method`` says which ran.  The stopping rule and the iteration count are the same in
both domains (the row error of iterate ``m`` is read off the row sums of iteration ``m + 1``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = ["SinkhornResult", "check_cost", "sinkhorn_log", "sinkhorn_log_batch", "sinkhorn_log_numpy",
           "sinkhorn_scaling",
           "sinkhorn", "half_steps_numpy", "softmax_rows", "sinkhorn_513_numpy", "symmetric_potential",
           "cost_matrix", "particle_field", "functional_F0", "functional_Finf", "gradient_F0", "gradient_Finf",
           "gaussian_sinkhorn", "gaussian_l2softmax", "row_col_errors"]


# ---------------------------------------------------------------------------
# input checks
def check_cost(C, name: str = "C", square: bool = True) -> np.ndarray:
    C = np.asarray(C)
    if not np.issubdtype(C.dtype, np.number) or np.iscomplexobj(C):
        raise ValueError(f"{name} must be a real numeric array, got dtype {C.dtype}")
    C = C.astype(float)
    if C.ndim != 2 or C.shape[0] == 0 or C.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D matrix, got shape {C.shape}")
    if square and C.shape[0] != C.shape[1]:
        raise ValueError(f"{name} must be square (n x n attention logits), got shape {C.shape}")
    if not np.all(np.isfinite(C)):
        raise ValueError(f"{name} has a NaN or infinite entry")
    return C


def _check_run(tol, max_iter, logw, n):
    tol = float(tol)
    if not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol={tol!r} must be a positive finite number")
    if int(max_iter) != max_iter or max_iter < 1:
        raise ValueError(f"max_iter={max_iter!r} must be a positive integer")
    if logw is None:
        return tol, int(max_iter), np.zeros(n)
    logw = np.asarray(logw, dtype=float)
    if logw.shape != (n,) or not np.all(np.isfinite(logw)):
        raise ValueError(f"logw must be a finite vector of length {n}, got shape {logw.shape}")
    return tol, int(max_iter), logw


# ---------------------------------------------------------------------------
# Numba kernels
@njit(cache=True)
def _lse_rows(C, g, logw, out):
    n, m = C.shape
    for i in range(n):
        mx = -np.inf
        for j in range(m):
            v = C[i, j] + g[j] + logw[j]
            if v > mx:
                mx = v
        s = 0.0
        for j in range(m):
            s += np.exp(C[i, j] + g[j] + logw[j] - mx)
        out[i] = mx + np.log(s)


@njit(cache=True)
def _lse_cols(C, f, logw, out):
    n, m = C.shape
    for j in range(m):
        mx = -np.inf
        for i in range(n):
            v = C[i, j] + f[i] + logw[i]
            if v > mx:
                mx = v
        s = 0.0
        for i in range(n):
            s += np.exp(C[i, j] + f[i] + logw[i] - mx)
        out[j] = mx + np.log(s)


@njit(cache=True)
def sinkhorn_log(C, logw, tol, max_iter):
    """Log-domain Sinkhorn (module docstring).  Returns ``(f, g, n_iter, row_err, converged)``."""
    n = C.shape[0]
    f = np.zeros(n)
    g = np.zeros(n)
    lse = np.empty(n)
    it = 0
    err = np.inf
    converged = False
    while True:
        _lse_rows(C, g, logw, lse)
        if it > 0:
            err = 0.0
            for i in range(n):
                e = abs(np.exp(f[i] + lse[i]) - 1.0)
                if e > err:
                    err = e
            if err <= tol:
                converged = True
                break
            if it >= max_iter:
                break
        for i in range(n):
            f[i] = -lse[i]
        _lse_cols(C, f, logw, lse)
        for j in range(n):
            g[j] = -lse[j]
        it += 1
    return f, g, it, err, converged


@njit(cache=True)
def sinkhorn_log_batch(Cs, logw, tol, max_iter):
    """``sinkhorn_log`` on a stack ``Cs`` of shape (B, n, n); returns (F, G, iters, errs, converged)."""
    B, n, _ = Cs.shape
    F = np.empty((B, n))
    G = np.empty((B, n))
    iters = np.empty(B, dtype=np.int64)
    errs = np.empty(B)
    conv = np.empty(B, dtype=np.bool_)
    for b in range(B):
        f, g, it, err, ok = sinkhorn_log(Cs[b], logw, tol, max_iter)
        F[b] = f
        G[b] = g
        iters[b] = it
        errs[b] = err
        conv[b] = ok
    return F, G, iters, errs, conv


# ---------------------------------------------------------------------------
# NumPy reference
def _lse(A, axis):
    mx = np.max(A, axis=axis, keepdims=True)
    return (mx + np.log(np.sum(np.exp(A - mx), axis=axis, keepdims=True))).squeeze(axis)


def sinkhorn_log_numpy(C, logw=None, tol=1e-12, max_iter=10_000):
    """NumPy reference of :func:`sinkhorn_log`, same stopping rule and iteration count."""
    C = check_cost(C)
    n = C.shape[0]
    tol, max_iter, logw = _check_run(tol, max_iter, logw, n)
    f, g = np.zeros(n), np.zeros(n)
    it, err, converged = 0, np.inf, False
    while True:
        lse = _lse(C + (g + logw)[None, :], 1)
        if it > 0:
            err = float(np.max(np.abs(np.exp(f + lse) - 1.0)))
            if err <= tol:
                converged = True
                break
            if it >= max_iter:
                break
        f = -lse
        g = -_lse(C + (f + logw)[:, None], 0)
        it += 1
    return f, g, it, err, converged


_ABSORB = 1e100   # a scaling outside [1/_ABSORB, _ABSORB] is absorbed into the potentials


def sinkhorn_scaling(C, logw=None, tol=1e-12, max_iter=10_000, return_kernel=False):
    """Exponential-domain Sinkhorn with absorption (module docstring), same stopping rule and iteration
    count as :func:`sinkhorn_log_numpy`.  Returns ``(f, g, n_iter, row_err, converged)`` (and the kernel
    ``exp(C + f + g)`` when ``return_kernel``, formed as ``u_i K_0 v_j`` without another ``exp``), or
    ``None`` where a row or column of the stabilised kernel underflows (the log domain must take over)."""
    C = check_cost(C)
    n = C.shape[0]
    tol, max_iter, logw = _check_run(tol, max_iter, logw, n)
    w = np.exp(logw)
    # the first row half-step in the log domain, with one n^2 exp: alpha_i = -lse_j(C_ij + log w_j)
    mx = np.max(C, axis=1)
    K = np.exp(C - mx[:, None])
    rs = K @ w
    alpha = -(mx + np.log(rs))
    K /= rs[:, None]                              # = exp(C + alpha): row-normalised, no overflow
    beta = np.zeros(n)
    u, v = np.ones(n), np.ones(n)
    it, err, converged = 0, np.inf, False
    while True:
        Kv = K @ (v * w)                          # row sums of diag(u) K diag(v) are u * Kv
        if it > 0:
            err = float(np.max(np.abs(u * Kv - 1.0)))
            if err <= tol:
                converged = True
                break
            if it >= max_iter:
                break
        if not np.all(Kv > 0):
            return None                           # a row of K_0 underflowed
        u = 1.0 / Kv
        Ku = K.T @ (u * w)
        if not np.all(Ku > 0):
            return None                           # a column of K_0 underflowed
        v = 1.0 / Ku
        it += 1
        if (u.max() > _ABSORB or u.min() < 1 / _ABSORB or v.max() > _ABSORB or v.min() < 1 / _ABSORB):
            alpha += np.log(u)
            beta += np.log(v)
            K = np.exp(C + alpha[:, None] + beta[None, :])
            u, v = np.ones(n), np.ones(n)
    if not (np.all(np.isfinite(u)) and np.all(np.isfinite(v))):
        return None
    out = (alpha + np.log(u), beta + np.log(v), it, err, converged)
    if return_kernel:
        K *= u[:, None]
        K *= v[None, :]
        return out + (K,)
    return out


@dataclass
class SinkhornResult:
    K: np.ndarray          # exp(C + f + g) (scaling: u_i K_0 v_j): column-normalised, rows to row_err
    f: np.ndarray
    g: np.ndarray
    n_iter: int            # full iterations (row + column normalisation)
    row_err: float
    converged: bool
    method: str = "log"    # "scaling" (exponential domain) or "log"


def sinkhorn(C, logw=None, tol=1e-12, max_iter=10_000, backend="numba", method="auto") -> SinkhornResult:
    """Sinkhorn(C) with the stated stopping rule.  ``method``: ``"auto"`` (the exponential-domain scaling,
    the log domain where it would underflow), ``"scaling"`` (fails where it would underflow) or ``"log"``;
    ``backend`` 'numba' (kernel) or 'numpy' (reference) for the log domain."""
    C = check_cost(C)
    n = C.shape[0]
    tol, max_iter, lw = _check_run(tol, max_iter, logw, n)
    if backend not in ("numba", "numpy"):
        raise ValueError(f"backend={backend!r} must be 'numba' or 'numpy'")
    if method not in ("auto", "scaling", "log"):
        raise ValueError(f"method={method!r} must be 'auto', 'scaling' or 'log'")
    if method in ("auto", "scaling"):
        out = sinkhorn_scaling(C, lw, tol, max_iter, return_kernel=True)
        if out is not None:
            f, g, it, err, ok, K = out
            return SinkhornResult(K, f, g, int(it), float(err), bool(ok), "scaling")
        if method == "scaling":
            raise FloatingPointError("the exponential-domain kernel underflows on this cost (use method='log')")
    f, g, it, err, ok = (sinkhorn_log(C, lw, tol, max_iter) if backend == "numba"
                         else sinkhorn_log_numpy(C, lw, tol, max_iter))
    return SinkhornResult(np.exp(C + f[:, None] + g[None, :]), f, g, int(it), float(err), bool(ok), "log")


def half_steps_numpy(C, l: int) -> np.ndarray:
    """``K^l`` of (5.3) literally: ``l`` alternate normalisations N_R, N_C, N_R, ... (log domain)."""
    C = check_cost(C)
    if int(l) != l or l < 0:
        raise ValueError(f"l={l!r} must be a non-negative integer (number of half-steps)")
    L = C.copy()
    for s in range(int(l)):
        L = L - _lse(L, 1)[:, None] if s % 2 == 0 else L - _lse(L, 0)[None, :]
    return np.exp(L)


def softmax_rows(C) -> np.ndarray:
    C = check_cost(C, square=False)
    return np.exp(C - _lse(C, 1)[:, None])


def row_col_errors(K) -> tuple[float, float]:
    K = np.asarray(K, dtype=float)
    return float(np.max(np.abs(K.sum(1) - 1))), float(np.max(np.abs(K.sum(0) - 1)))


def sinkhorn_513_numpy(C, n_iter: int = 200, g0=None):
    """(5.13) as printed (App. 5.B): ``f = log(1/n) - log(K e^g)``, ``g = log(1/n) - log(K^T e^f)``,
    ``g^0 = 1_n``.  Returns ``(f, g, P)`` with ``P = diag(e^f) K^0 diag(e^g)``: marginals 1/n (E5.3)."""
    C = check_cost(C)
    n = C.shape[0]
    g = np.ones(n) if g0 is None else np.asarray(g0, dtype=float)
    f = np.zeros(n)
    for _ in range(int(n_iter)):
        f = np.log(1.0 / n) - _lse(C + g[None, :], 1)
        g = np.log(1.0 / n) - _lse(C + f[:, None], 0)
    return f, g, np.exp(C + f[:, None] + g[None, :])


def symmetric_potential(C, logw=None, tol=1e-14, max_iter=100_000, backend="numba"):
    """For symmetric ``C``: ``a`` with ``K = exp(C + a_i + a_j)`` (the unique symmetric scaling);
    returns ``(a, n_iter, row_err)``.  ``a = (f + g)/2`` from the general solver (f - a = a - g = const)."""
    C = check_cost(C)
    if np.max(np.abs(C - C.T)) > 1e-12 * max(1.0, np.max(np.abs(C))):
        raise ValueError("C must be symmetric for the symmetric Sinkhorn potential")
    r = sinkhorn(C, logw, tol, max_iter, backend)
    return 0.5 * (r.f + r.g), r.n_iter, r.row_err


# ---------------------------------------------------------------------------
# particles: fields and functionals of Prop 5.3 (mu_n = (1/n) sum delta_{x_i}; k = n K, E5.4)
def cost_matrix(X, WQ, WK):
    X = np.asarray(X, dtype=float)
    return (X @ WQ.T) @ (X @ WK.T).T


def particle_field(X, WQ, WK, WV, kind="inf", tol=1e-14, max_iter=100_000, backend="numba"):
    """``T^k_mu(x_i) = int k(x_i, x') W_V x' dmu(x')`` on ``mu_n``, ``k in {0, 1, inf}``, rows = particles."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    C = cost_matrix(X, WQ, WK)
    if kind == "0":
        k = np.exp(C)
    elif kind == "1":
        k = n * softmax_rows(C)
    elif kind == "inf":
        k = n * sinkhorn(C, None, tol, max_iter, backend).K
    else:
        raise ValueError(f"kind={kind!r} must be '0', '1' or 'inf'")
    return (k @ (X @ WV.T)) / n


def functional_F0(X, WQ, WK):
    """F^0(mu_n) = 1/2 int k^0 d(mu x mu) = (1/(2n^2)) sum_ij exp(C_ij)."""
    C = cost_matrix(X, WQ, WK)
    return 0.5 * float(np.mean(np.exp(C)))


def functional_Finf(X, WQ, WK, tol=1e-15, max_iter=100_000, backend="numba"):
    """F^inf(mu_n) = -1/2 int k^inf log(k^inf/k^0) d(mu x mu), with k^inf = exp(c + a + a), int k dmu = 1.
    Returns (F, a): for the symmetric potential a, F = -(1/n) sum_i a_i (the dual value)."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    C = cost_matrix(X, WQ, WK)
    r = sinkhorn(C, np.full(n, -np.log(n)), tol, max_iter, backend)
    a = 0.5 * (r.f + r.g)
    k = np.exp(C + r.f[:, None] + r.g[None, :])
    F = -0.5 * float(np.sum(k * (r.f[:, None] + r.g[None, :]))) / n ** 2
    return F, a


def gradient_F0(X, WQ, WK):
    """Analytic nabla_{x_i} F^0(mu_n) (rows), for any W_Q, W_K."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    E = np.exp(cost_matrix(X, WQ, WK))
    M = WQ.T @ WK
    return (E @ X @ M.T + E.T @ X @ M) / (2 * n ** 2)


def gradient_Finf(X, WQ, WK, tol=1e-15, max_iter=100_000, backend="numba"):
    """Envelope theorem on the dual ``-2 F^inf = max_{f,g} <f + g, mu> - int (e^{c+f+g} - 1) d(mu x mu)``:
    ``nabla_{x_i} F^inf(mu_n) = (1/(2n^2)) sum_j [k_ij M x_j + k_ji M^T x_j]``, ``M = W_Q^T W_K``."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    C = cost_matrix(X, WQ, WK)
    r = sinkhorn(C, np.full(n, -np.log(n)), tol, max_iter, backend)
    k = r.K
    M = WQ.T @ WK
    return (k @ X @ M.T + k.T @ X @ M) / (2 * n ** 2)


# ---------------------------------------------------------------------------
# Gaussian closed forms (mu = N(0, Sigma))
def _sym_fun(S, fun):
    w, U = np.linalg.eigh(0.5 * (S + S.T))
    return (U * fun(w)) @ U.T


def gaussian_sinkhorn(M, Sigma, eps):
    """Sinkhorn kernel ``k^inf_eps = Sinkhorn(x^T M y / eps)`` against ``mu = N(0, Sigma)``, ``M`` SPD.

    ``k^inf(x, y) = exp(x^T N y + f(x) + f(y))``, ``N = M/eps``, ``f(x) = -x^T A x / 2 + const``; the
    conditional law of y given x is Gaussian with precision ``P = A + Sigma^-1`` and mean ``P^-1 N x``,
    and ``A = N P^-1 N`` (marginal constraint).  With ``P = N^(1/2) Y N^(1/2)``: ``Y^2 - R Y - I = 0``,
    ``R = N^(-1/2) Sigma^-1 N^(-1/2)``, ``Y = (R + (R^2 + 4I)^(1/2))/2``.

    Returns ``D`` with ``E[y|x] - x = D x``, computed without cancellation:
    ``D = -N^(-1/2) (I - Y^-1) N^(1/2)``, ``I - Y^-1 = g(R)``, ``g(r) = 1 - (sqrt(r^2+4) - r)/2
    = r/2 - (sqrt(r^2+4) - 2)/2`` and ``sqrt(r^2+4) - 2 = r^2/(sqrt(r^2+4) + 2)``.
    """
    N = np.asarray(M, dtype=float) / eps
    Nh = _sym_fun(N, np.sqrt)
    Nmh = _sym_fun(N, lambda w: 1 / np.sqrt(w))
    Si = np.linalg.inv(Sigma)
    R = Nmh @ Si @ Nmh
    G = _sym_fun(R, lambda r: r / 2 - 0.5 * r * r / (np.sqrt(r * r + 4) + 2))
    return -Nmh @ G @ Nh


def gaussian_l2softmax(WQ, WK, Sigma, eps):
    """L2-SoftMax kernel ``SoftMax(-|W_Q x - W_K x'|^2 / (2 eps))`` against ``N(0, Sigma)``:
    ``x' | x`` is Gaussian with mean ``Sigma W_K^T (S + eps I)^-1 W_Q x``, ``S = W_K Sigma W_K^T``.
    Returns the matrix ``B`` with ``E[x'|x] = B x``."""
    S = WK @ Sigma @ WK.T
    return Sigma @ WK.T @ np.linalg.solve(S + eps * np.eye(S.shape[0]), WQ)


def scaling_least_squares(C) -> np.ndarray:
    """Independent route to the Sinkhorn limit ``K^inf = diag(e^f) e^C diag(e^g)`` (rows and columns summing to 1):
    Levenberg-Marquardt (scipy.optimize.least_squares) on the log-marginal equations in the potentials, gauge g_0 = 0.
    No alternating normalisation: a reference for the iteration's limit (small n only, dense Jacobian)."""
    from scipy.optimize import least_squares
    C = check_cost(C)
    n = C.shape[0]
    if n == 1:
        return np.ones((1, 1))

    def resid(z):
        f = z[:n]
        g = np.concatenate([[0.0], z[n:]])
        A = C + f[:, None] + g[None, :]
        return np.concatenate([_lse(A, 1), _lse(A, 0)[1:]])
    z0 = np.concatenate([-_lse(C, 1), np.zeros(n - 1)])
    r = least_squares(resid, z0, xtol=1e-15, ftol=1e-15, gtol=1e-15, method="lm")
    f = r.x[:n]
    g = np.concatenate([[0.0], r.x[n:]])
    return np.exp(C + f[:, None] + g[None, :])
