"""Menon §12.2 (seed lines 946-980): Brownian motion on (M_d, g^N), the entropy gradient and its
bounded 'Coulombic repulsion'.

Conventions and the entropy normalisation: see ``theorems/menon/_rle.py``.
"""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import sympy as sp

from solvers import dln, fd
from theorems.claim import Claim, Outcome, Param

from ._common import EPS, balanced_instance, pairs, rng_for
from ._rle import _pred_grad_S, _sigma_prime


# ---------------------------------------------------------------------------
# shared helpers
def _entropy(W, N, half=True):
    """Thm 10 entropy of W (up to its constant) from the singular values; ``half=False`` drops the 1/2."""
    s = np.linalg.svd(W, compute_uv=False)
    tot = 0.0
    for i, j in pairs(len(s)):
        tot += math.log((s[i] ** 2 - s[j] ** 2) / (s[i] ** (2 / N) - s[j] ** (2 / N)))
    return 0.5 * tot if half else tot


def _fd_error(est_h, est_2h, rounding):
    """Error model of a central difference: truncation O(h^2) estimated by step doubling
    (|D_h - D_2h| = 3 c h^2, so |D_h - D| ~ |D_h - D_2h| / 3), plus the rounding bound."""
    return float(np.linalg.norm(est_h - est_2h)) / 3 + rounding


# ===========================================================================
# 4. Theorem 18: Brownian motion on (M_d, g^N)
thm18 = Claim(
    id="menon.dln_brownian_motion",
    title="Brownian motion on (M_d, g^N): Laplace-Beltrami drift (1/β) Q_N Σ'' Q_0^T, noise √eig(A) conjugated",
    label="Thm 18",
    section="12.2",
    equation="(12.9)-(12.10)",
    lines=(946, 966),
    statement=r"dX^\beta=\sqrt{2/\beta}\,\bigl(\sqrt{a_{kl}}\,dB^{k,l}\bigr)_{kl}+\beta^{-1}Q_N\Sigma''Q_0^Tdt,\ "
              r"\Sigma''_{kk}=(N-1)\lambda_k^{N-2},\ a_{kk}=N\lambda_k^{2N-2},\ "
              r"a_{kl}=\frac{\lambda_k^{2N}-\lambda_l^{2N}}{\lambda_k^2-\lambda_l^2}",
    status="erratum",
    corrected=r"dX^\beta=\sqrt{2/\beta}\,Q_N\bigl(\sqrt{a_{kl}}\,dB^{k,l}\bigr)_{kl}Q_0^T+\beta^{-1}Q_N\Sigma''Q_0^Tdt",
    params=[
        Param.int("d", 3, 1, 4, "width", search=(1, 4)),
        Param.int("N", 3, 2, 6, "depth", search=(2, 5)),
        Param.seed("seed of Lambda and Q_N, Q_0"),
        Param.float("h", 1e-4, 1e-7, 1e-2, "finite-difference step (relative to |W|)"),
    ],
    notes="Erratum E14 (presentation): the drift (12.9) is correct (no interaction terms), but the noise matrix of "
          "(12.10) is written in the SVD frame; as a matrix-valued SDE for X it must be conjugated, "
          "Q_N(·)Q_0^T, like the drift. Numeric check (beta = 1; both sides scale as 1/beta): the generator of BM "
          "is Delta_{g^N} with inverse metric g^{ij} = A (the matrix of A_{N,W}, Lemma 1), so the Ito drift of "
          "the coordinate W_i is b^i = sum_j d_j A^{ij} - 1/2 A^{ij} d_j log det A (finite differences); the "
          "diffusion matrix of the corrected noise, (Q_N ⊗ Q_0) diag(a) (Q_N ⊗ Q_0)^T, must equal A. The residual "
          "is max(drift error / drift tolerance, covariance error / covariance tolerance) against 1.",
    catalogue="menon §2.9 Thm 18; §3 (Thm 18 drift row); §4 E14",
)


def _lb_drift(W, N, h, inverse=False):
    """Ito drift sum_j d_j g^{ij} - 1/2 g^{ij} d_j log det g^{..} of BM (beta = 1) for g^{-1} = A (or A^{-1})."""
    d = W.shape[0]
    n = d * d

    def ginv(Wx):
        M = dln.a_matrix(Wx, N)
        return np.linalg.inv(M) if inverse else M

    G0 = ginv(W)
    dG = np.zeros((n, n, n))  # dG[j] = d_j g^{..}
    dlog = np.zeros(n)
    for j in range(n):
        E = np.zeros(n)
        E[j] = h
        Gp, Gm = ginv(W + E.reshape(d, d)), ginv(W - E.reshape(d, d))
        dG[j] = (Gp - Gm) / (2 * h)
        dlog[j] = (np.linalg.slogdet(Gp)[1] - np.linalg.slogdet(Gm)[1]) / (2 * h)
    div = np.array([sum(dG[j][i, j] for j in range(n)) for i in range(n)])
    # |g|^{1/2} = det(g^{..})^{-1/2}  ->  -1/2 g^{ij} d_j log det(g^{..})
    b = div - 0.5 * G0 @ dlog
    return b.reshape(d, d), G0


def _thm18_outcome(p, *, inverse=False, conjugate=True):
    lam, Qs, _ = balanced_instance(p.d, p.N, p.seed, lam_range=(0.6, 1.6), min_gap=0.1)
    N = p.N
    W = Qs[0] @ np.diag(lam ** N) @ Qs[-1].T
    h = p.h * max(1.0, float(np.linalg.norm(W)))
    b1, A = _lb_drift(W, N, h, inverse)
    b2, _ = _lb_drift(W, N, 2 * h, inverse)
    pred = Qs[0] @ np.diag((N - 1) * lam ** (N - 2)) @ Qs[-1].T
    condA = float(np.linalg.cond(A))
    # error model: central differences (step doubling for the O(h^2) truncation) plus rounding of the
    # d^2 difference quotients, ~ d^2 * eps * |A| * cond(A) / h each
    dtol = 10 * _fd_error(b1, b2, p.d ** 2 * EPS * float(np.linalg.norm(A)) * condA / h)
    derr = float(np.linalg.norm(b1 - pred))
    # diffusion matrix of the noise: vec_row(Q_N X Q_0^T) = (Q_N ⊗ Q_0) vec_row(X)
    a = np.empty((p.d, p.d))
    for k in range(p.d):
        for l in range(p.d):
            a[k, l] = N * lam[k] ** (2 * N - 2) if k == l else \
                (lam[k] ** (2 * N) - lam[l] ** (2 * N)) / (lam[k] ** 2 - lam[l] ** 2)
    K = np.kron(Qs[0], Qs[-1]) if conjugate else np.eye(p.d * p.d)
    cov = K @ np.diag(a.ravel()) @ K.T
    Aexact = dln.a_matrix(W, N)
    # error model: eigen-reconstruction and the psd powers inside a_matrix, ~ 100 d^2 eps |A|
    ctol = 100 * p.d ** 2 * EPS * float(np.linalg.norm(Aexact))
    cerr = float(np.linalg.norm(cov - Aexact))
    return Outcome(residual=max(derr / dtol, cerr / ctol), tolerance=1.0,
                   values={"drift_error": derr, "drift_tolerance": dtol, "covariance_error": cerr,
                           "covariance_tolerance": ctol, "drift_svd_frame": np.diag(Qs[0].T @ b1 @ Qs[-1]).tolist(),
                           "sigma_pp": ((N - 1) * lam ** (N - 2)).tolist(), "lambda": lam.tolist(), "cond_A": condA},
                   message="max(drift err/tol, covariance err/tol): LB drift vs Q_N Sigma'' Q_0^T and noise "
                           "covariance vs A_{N,W}")


@thm18.numeric
def _(p):
    """Laplace-Beltrami drift by finite differences of A and log det A equals Q_N Sigma'' Q_0^T, and the
    conjugated noise has covariance A_{N,W}."""
    return _thm18_outcome(p)


thm18.property(over=("d", "N", "seed"), max_examples=10)


@thm18.falsifier({
    "stated": {"description": "Printed (12.10): noise matrix in the SVD frame (no Q_N(.)Q_0^T): its "
                              "covariance is not A (d >= 2).",
               "fixed": {"d": 2}},
    "inverse_metric": "Use A^{-1} (the metric g^N itself) as the diffusion matrix: the drift is "
                      "no longer (N-1) lam^{N-2}.",
}, search=("seed",))
def _(p, variant):
    return _thm18_outcome(p, **{"stated": dict(conjugate=False), "inverse_metric": dict(inverse=True)}[variant])


#: Sigma''_kk of Theorem 18 as printed, (N-1) lambda^{N-2}, and misprints
THM18_VARIANTS = {
    "corrected": lambda N, lam: (N - 1) * lam ** (N - 2),
    "factor_N": lambda N, lam: N * lam ** (N - 2),
    "exponent_shifted": lambda N, lam: (N - 1) * lam ** (N - 1),
}


def _thm18_prove(variant="corrected"):
    """Depths N = 2..8 (d = 1) at which the Laplace-Beltrami drift g^{-1/2} d/dw (g^{1/2} g^{-1}) of the metric
    g = 1/(N w^{2-2/N}) (4.14), at w = lambda^N, differs from Sigma'' (variant)."""
    w, lam = sp.symbols("w lambda", positive=True)
    bad = []
    for N in range(2, 9):
        ginv = N * w ** (2 - sp.Rational(2, N))
        sqrtg = 1 / sp.sqrt(ginv)
        drift = sp.diff(sqrtg * ginv, w) / sqrtg
        rem = sp.simplify(sp.powsimp(sp.expand(drift.subs(w, lam**N) - THM18_VARIANTS[variant](N, lam)), force=True))
        if rem != 0:
            bad.append(N)
    return bad


@thm18.symbolic(timeout=60)
def _(p):
    """d = 1: g = 1/(N w^{2-2/N}); the LB drift g^{-1/2} d/dw (g^{1/2} g^{-1}) = (N-1) w^{1-2/N} = (N-1) lam^{N-2}."""
    bad = _thm18_prove()
    return Outcome(residual=len(bad), tolerance=0, values={"method": "sympy diff/simplify", "instances": "d=1, N=2..8",
                                                           "proved": "drift (N-1) w^{1-2/N} = Sigma''"},
                   message="number of N for which the d=1 drift differs from (12.9)")


@thm18.mutant({
    "factor_N": "Sigma''_kk = N lambda_k^{N-2} (N for N-1)",
    "exponent_shifted": "Sigma''_kk = (N-1) lambda_k^{N-1} (exponent shifted)",
}, timeout=60)
def _(p, variant):
    """(12.9) perturbed, through the same procedure: the drift must differ at some depth."""
    bad = _thm18_prove(variant)
    return Outcome(residual=len(bad), tolerance=0, values={"failing_depths": bad},
                   message=f"the LB drift differs from Sigma'' ({variant}) at N = {bad}")


@thm18.reproduction
def _(p):
    """Catalogue §3: at (d, N) = (3, 3) the LB drift in the SVD frame is (3.172674, 2.889657, 1.312561) = Sigma''.
    We take lambda = quoted / (N-1) (inverting (12.9)), recompute the drift by finite differences of A and
    compare at the quoted 6 decimals."""
    quoted = np.array([3.172674, 2.889657, 1.312561])
    N = 3
    lam = quoted / (N - 1)
    rng = rng_for(7)
    QN, Q0 = dln.random_orthogonal(3, rng), dln.random_orthogonal(3, rng)
    W = QN @ np.diag(lam ** N) @ Q0.T
    b, _ = _lb_drift(W, N, 1e-4)
    b2, _ = _lb_drift(W, N, 2e-4)
    drift = np.diag(QN.T @ b @ Q0)
    off = float(np.max(np.abs(QN.T @ b @ Q0 - np.diag(drift))))
    fd_err = _fd_error(b, b2, 0.0)
    return Outcome(residual=float(np.max(np.abs(drift - quoted))), tolerance=5e-7 + 10 * fd_err,
                   values={"drift_svd_frame": drift.tolist(), "quoted": quoted.tolist(), "off_diagonal_max": off,
                           "fd_error_estimate": fd_err},
                   message="LB drift in the SVD frame vs the catalogue's 6-decimal values")


# ===========================================================================
# 5. the entropy gradient (12.8), (12.13)
ent_grad = Claim(
    id="menon.entropy_gradient",
    title="grad_{g^N} S = A_{N,W}(∇_F S) = Q_N Σ' Q_0^T with Σ' of (12.8)",
    label="G18",
    section="12.2",
    equation="(12.8), (12.13)",
    lines=(968, 980),
    statement=r"\operatorname{grad}_{g^N}F_\beta=\mathcal A_{N,W}(E'(W))-\beta^{-1}Q_N\Sigma'Q_0^T,\ "
              r"\Sigma'_{kk}=\sum_{l\ne k}\Bigl(\frac{N\lambda_k^{2N-1}}{\lambda_k^{2N}-\lambda_l^{2N}}"
              r"-\frac{\lambda_k}{\lambda_k^2-\lambda_l^2}\Bigr)\lambda_k^{N-1}",
    status="holds",
    params=[
        Param.int("d", 3, 2, 5, "width", search=(2, 4)),
        Param.int("N", 4, 2, 8, "depth", search=(2, 6)),
        Param.seed("seed"),
        Param.float("h", 1e-5, 1e-8, 1e-2, "finite-difference step (relative to |W|)"),
    ],
    notes="S is the entropy of Thm 10 (line 976 says 'Theorem 14': typo, E18). grad_{g^N} S = A(∇_F S) since "
          "g^N(Z, Y) = Tr(Z^T A^{-1} Y) (E5). Numeric: ∇_F S by central differences of S(W) computed from "
          "svdvals (independent of any closed form), then A_{N,W} applied. The E-part of (12.13) is Thm 3 "
          "(other module). Requires distinct singular values (else Sigma' has removable 0/0 pair terms, see "
          "menon.bounded_repulsion).",
    catalogue="menon §2.9 G18; §4 E18",
)


def _ent_grad_outcome(p, half=True):
    lam, Qs, _ = balanced_instance(p.d, p.N, p.seed, lam_range=(0.5, 1.8), min_gap=0.1)
    N = p.N
    W = Qs[0] @ np.diag(lam ** N) @ Qs[-1].T
    h = p.h * max(1.0, float(np.linalg.norm(W)))
    f = lambda X: _entropy(X, N, half)  # noqa: E731
    g1 = dln.a_operator(W, fd.central_difference(f, W, h), N)
    g2 = dln.a_operator(W, fd.central_difference(f, W, 2 * h), N)
    pred = _pred_grad_S(lam, Qs, N)
    normA = float(np.linalg.norm(dln.a_matrix(W, N), 2))
    s = lam ** N
    gap = min(abs(s[i] ** 2 - s[j] ** 2) / max(s[i], s[j]) ** 2 for i, j in pairs(p.d))
    # error model: central differences (truncation by step doubling) plus rounding of each difference
    # quotient, ~ d^2 eps |S| / (h * relative gap), all mapped through A
    rnd = normA * p.d ** 2 * EPS * (abs(f(W)) + 1) / (h * gap)
    tol = 10 * _fd_error(g1, g2, rnd)
    return Outcome(residual=float(np.linalg.norm(g1 - pred)), tolerance=tol,
                   values={"grad_fd_svd_frame": np.diag(Qs[0].T @ g1 @ Qs[-1]).tolist(),
                           "sigma_prime": _sigma_prime(lam, N).tolist(), "lambda": lam.tolist()},
                   message="|A_{N,W}(∇_F S) - Q_N Sigma' Q_0^T|_F with ∇_F S by central differences")


@ent_grad.numeric
def _(p):
    """A_{N,W} applied to the finite-difference gradient of S equals Q_N Sigma' Q_0^T."""
    return _ent_grad_outcome(p)


ent_grad.property(over=("d", "N", "seed"), max_examples=12)


@ent_grad.falsifier("no_half", search=("seed",))
def _(p):
    """S without the 1/2 of Thm 10 (log of the volume squared): the gradient doubles."""
    return _ent_grad_outcome(p, half=False)


#: the pair term of Sigma'_kk (12.8) as printed, and misprints: (N, lam_k, lam_l) -> term
ENT_GRAD_VARIANTS = {
    "stated": lambda N, a, b: (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) - a / (a ** 2 - b ** 2))
    * a ** (N - 1),
    "sign_flipped": lambda N, a, b: (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) + a / (a ** 2 - b ** 2))
    * a ** (N - 1),
    "power_shifted": lambda N, a, b: (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) - a / (a ** 2 - b ** 2))
    * a ** (N - 2),
}


def _ent_grad_prove(variant="stated"):
    """Number of (N, k) (d = 3, N = 2..5) with a nonzero remainder of N sigma_k^{2-2/N} dS/dsigma_k (S of Thm 10
    differentiated by sympy, times the eigenvalue of A on u_k v_k^T) minus Sigma'_kk (variant), sigma = lambda^N."""
    bad = 0
    d = 3
    lam = sp.symbols(f"l1:{d + 1}", positive=True)
    sig = sp.symbols(f"s1:{d + 1}", positive=True)
    for N in range(2, 6):
        S = sp.Rational(1, 2) * sum(sp.log((sig[i] ** 2 - sig[j] ** 2) /
                                           (sig[i] ** sp.Rational(2, N) - sig[j] ** sp.Rational(2, N)))
                                    for i, j in pairs(d))
        for k in range(d):
            lhs = N * sig[k] ** (2 - sp.Rational(2, N)) * sp.diff(S, sig[k])
            lhs = lhs.subs({sig[i]: lam[i] ** N for i in range(d)})
            rhs = sum(ENT_GRAD_VARIANTS[variant](N, lam[k], lam[l]) for l in range(d) if l != k)
            bad += int(sp.cancel(sp.together(sp.powsimp(sp.expand_power_base(lhs - rhs, force=True),
                                                        force=True))) != 0)
    return bad


@ent_grad.symbolic(timeout=60)
def _(p):
    """N lambda_k^{2N-2} dS/dsigma_k (the eigenvalue N sigma^{2-2/N} of A times dS) equals Sigma'_kk, d = 3, N = 2..5."""
    bad = _ent_grad_prove()
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy together/cancel",
                                                      "instances": "d=3, N=2..5, every k",
                                                      "proved": "N sigma_k^{2-2/N} dS/dsigma_k = Sigma'_kk (12.8)"},
                   message="number of (N, k) with a nonzero remainder")


@ent_grad.mutant({
    "sign_flipped": "Sigma'_kk with + lambda_k/(lambda_k^2 - lambda_l^2) (sign of the second term flipped)",
    "power_shifted": "Sigma'_kk with the factor lambda_k^{N-2} for lambda_k^{N-1}",
}, timeout=60)
def _(p, variant):
    """(12.8) perturbed, through the same procedure: remainders must stay nonzero."""
    bad = _ent_grad_prove(variant)
    return Outcome(residual=bad, tolerance=0, values={"nonzero": bad},
                   message=f"{bad} of 12 (N, k) have a nonzero remainder against Sigma' ({variant})")


# ===========================================================================
# 6. bounded repulsion (derived)
bounded = Claim(
    id="menon.bounded_repulsion",
    title="The 'Coulombic repulsion' of Σ' is bounded: its pair term tends to (N-1)/2 λ_k^{N-2} at coincidence",
    label="G18-note",
    section="12.2",
    equation="(12.8)",
    lines=(956, 980),
    statement=r"\lim_{\lambda_l\to\lambda_k}\Bigl(\frac{N\lambda_k^{2N-1}}{\lambda_k^{2N}-\lambda_l^{2N}}"
              r"-\frac{\lambda_k}{\lambda_k^2-\lambda_l^2}\Bigr)\lambda_k^{N-1}=\frac{N-1}2\lambda_k^{N-2}",
    status="holds",
    params=[
        Param.int("N", 4, 2, 12, "depth", search=(2, 8)),
        Param.float("lam", 1.3, 0.05, 20.0, "lambda_k", search=(0.2, 3.0)),
        Param.float("eps", 1e-12, 1e-40, 1e-3, "relative separation: lambda_l = lambda_k (1 ± eps)",
                    search=(1e-30, 1e-4)),
    ],
    notes="Derived (catalogue G18-note), not stated in the paper: line 980 calls Sigma' 'the analogue of "
          "Coulombic repulsion', but unlike Dyson's 1/(x_i - x_j) the pair term is bounded (the orbit volume does "
          "not vanish at coincident singular values). With t = lambda_l/lambda_k the pair term is lambda_k^{N-2} "
          "g(t), g(t) = N/(1 - t^{2N}) - 1/(1 - t^2) = (N-1)/2 - (N^2-1)/6 (t-1) + (N^2-1)/12 (t-1)^2 + ... "
          "(sympy series, N = 2..7). Numeric check in mpmath with 30 + 2|log10 eps| digits (the cancellation costs 2|log10 eps| digits) and the "
          "first-order remainder bound 2 (N^2-1)/6 eps lambda^{N-2} as tolerance.",
    catalogue="menon §2.9 G18-note",
)


def _pair_term(lk, ll, N):
    return (N * lk ** (2 * N - 1) / (lk ** (2 * N) - ll ** (2 * N)) - lk / (lk ** 2 - ll ** 2)) * lk ** (N - 1)


def _bounded_outcome(p, dyson=False):
    # each term is ~ 1/eps with relative rounding 10^-dps on a difference of size eps, i.e. absolute
    # error ~ 10^-dps / eps^2: choose dps so that this stays ~ 10^-30
    dps = 30 + int(2 * math.ceil(-math.log10(p.eps)))
    with mp.workdps(dps):
        lk = mp.mpf(p.lam)
        worst = mp.mpf(0)
        for sgn in (1, -1):
            ll = lk * (1 + sgn * mp.mpf(p.eps))
            f = _pair_term(lk, ll, p.N)
            ref = lk ** (p.N - 1) / (lk - ll) if dyson else (p.N - 1) * lk ** (p.N - 2) / 2
            worst = max(worst, abs(f - ref))
        # error model: first-order Taylor remainder |g'(1)| = (N^2-1)/6, doubled for the higher orders
        # (|c2/c1| = 1/2, eps <= 1e-3), plus the rounding 10^(5-dps) / eps^2 (times the size of the terms)
        tol = 2 * (p.N ** 2 - 1) / 6 * p.eps * p.lam ** (p.N - 2) + \
            float(mp.mpf(10) ** (5 - dps) / mp.mpf(p.eps) ** 2) * (p.N + 1) * max(1.0, p.lam) ** (2 * p.N)
        return Outcome(residual=float(worst), tolerance=tol,
                       values={"pair_term": float(_pair_term(lk, lk * (1 + mp.mpf(p.eps)), p.N)),
                               "limit": (p.N - 1) * p.lam ** (p.N - 2) / 2},
                       message="|pair term at lambda_l = lambda_k(1 ± eps) - reference|")


@bounded.numeric
def _(p):
    """Evaluate the pair term of (12.8) at lambda_l = lambda_k (1 ± eps) (mpmath, enough digits)."""
    return _bounded_outcome(p)


bounded.property(over=("N", "lam", "eps"), max_examples=15)


@bounded.falsifier("dyson_like", search=("lam",))
def _(p):
    """The Dyson-like unbounded pair term lambda_k^{N-1}/(lambda_k - lambda_l)."""
    return _bounded_outcome(p, dyson=True)


#: the limit of the pair term as printed, (N-1)/2 lambda^{N-2}, and misprints
BOUNDED_VARIANTS = {
    "stated": lambda N, lam: sp.Rational(N - 1, 2) * lam ** (N - 2),
    "half_dropped": lambda N, lam: (N - 1) * lam ** (N - 2),
    "exponent_shifted": lambda N, lam: sp.Rational(N - 1, 2) * lam ** (N - 1),
}


def _bounded_prove(variant="stated"):
    """Depths N = 2..8 at which sympy's limit lambda_l -> lambda_k of the printed pair term
    (N lambda_k^{2N-1}/(lambda_k^{2N} - lambda_l^{2N}) - lambda_k/(lambda_k^2 - lambda_l^2)) lambda_k^{N-1}
    differs from the right-hand side (variant)."""
    a, b = sp.symbols("lambda_k lambda_l", positive=True)
    bad = []
    for N in range(2, 9):
        g = (N * a ** (2 * N - 1) / (a ** (2 * N) - b ** (2 * N)) - a / (a ** 2 - b ** 2)) * a ** (N - 1)
        lim = sp.limit(sp.cancel(sp.together(g)), b, a)
        if sp.simplify(lim - BOUNDED_VARIANTS[variant](N, a)) != 0:
            bad.append(N)
    return bad


@bounded.symbolic(timeout=60)
def _(p):
    """sympy: lim_{lambda_l -> lambda_k} of the pair term of (12.8) is (N-1)/2 lambda_k^{N-2}, N = 2..8."""
    bad = _bounded_prove()
    return Outcome(residual=len(bad), tolerance=0, values={"method": "sympy.limit of the printed expression",
                                                           "instances": "N=2..8", "proved": "finite limit (N-1)/2 lambda^{N-2}"},
                   message="number of N with a different limit")


@bounded.mutant({
    "half_dropped": "limit (N-1) lambda_k^{N-2} (the 1/2 dropped)",
    "exponent_shifted": "limit (N-1)/2 lambda_k^{N-1} (exponent shifted)",
}, timeout=60)
def _(p, variant):
    """The limit perturbed, through the same procedure: it must differ at some depth."""
    bad = _bounded_prove(variant)
    return Outcome(residual=len(bad), tolerance=0, values={"failing_depths": bad},
                   message=f"the limit differs from the {variant} value at N = {bad}")
