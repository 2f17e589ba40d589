"""Private helpers: training of discretised leaky ResNets for the EMPIRICAL claims of §3.1 (Fig. 1) and §4
(Fig. 2) (catalogue jacot §2.5 BN1, BN2; §2.6 F2; §3 R3-R6).

The checks train discretised leaky ResNets (``solvers.leaky_net``: Numba forward/backward) on the
catalogue's synthetic teacher tasks with L-BFGS (scipy), then measure per layer

* the gamma-stable cost of identity ``COI_gamma(A) = Tr[A (K + gamma I)^{-1} A^T]`` with
  ``gamma_p = 1e-3 ||K_p||_op`` (catalogue E2: ``||sigma(A)||_op^2 = ||K||_op``, NOT ``||K||_op^2``;
  these helpers use ``||K_p||_op``), at every representation ``A_0 = X, ..., A_L``;
* the discrete Hamiltonian ``H_l = Lt/2 |B_l sigma(A_{l-1})^T|^2 - Lt Tr[B_l A_{l-1}^T]`` with
  ``B_l = -(1/lambda) dC/dA_l`` (catalogue H5, discrete form; ``jacot.discrete_critical_weights``);
* the gamma-stable ``H_gamma,l = 1/(2Lt) |dA|^2_{K+gamma} - Lt/2 |A|^2_{K+gamma}`` with the difference
  quotient ``dA = (A_l - A_{l-1}) / rho_l``;
* the singular values of ``W_l`` (the "rank" of a layer is ``#{s > 0.1 s_max}``, catalogue R3) and the
  negative mass ``|[A]_-|_F / |A|_F``.

Following the catalogue (R3 "what does not reproduce cheaply"), every assertion is a loose trend:
medians over the middle third of the layers, monotonicity in the effective depth Lt with a slack,
and +-0.5 between -2H/Lt and the integer, never exact constancy.  The thresholds are justified next
to each check.  Training reaches only approximate stationarity (the minimiser sits on ReLU kinks,
catalogue H2), so these are statements about what L-BFGS finds, exactly as in the paper.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from solvers import leaky_net as ln

GAMMA0 = 1e-3   # gamma_p = GAMMA0 * ||K_p||_op (catalogue R3; E2 form)
BIG_SV = 0.1    # a singular value of W_l counts as "large" above BIG_SV * s_max (catalogue R3)
_MEMO: dict = {}


# ---------------------------------------------------------------------------
# synthetic tasks (catalogue R3/R4: FCNN teacher x -> g2(g1(x)); R5: ResNet teacher d -> 6 -> 3 -> d)
def _normalise(Z, N):
    """Demean over the N training columns and scale so that |Z_train|_F^2 = N (unit mean square norm)."""
    Z = Z - Z[:, :N].mean(axis=1, keepdims=True)
    return Z / np.sqrt(np.sum(Z[:, :N] ** 2) / N)


def _fcnn_teacher(w, N, k, seed, hidden=20, Ntest=0, d=None):
    """f* = g2 o g1 with ReLU FCNNs d -> hidden -> k -> hidden -> d (R3: d = w = 10, hidden 20).
    For d < w the inputs are embedded (zero rows appended) and the targets too: fixed linear
    input/output maps (catalogue R4 suggests width 30 for a 20 -> 5 -> 20 teacher)."""
    d = w if d is None else d
    rng = np.random.default_rng(seed)
    dims = [d, hidden, k, hidden, d]
    H = rng.standard_normal((d, N + Ntest))
    X = H
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        H = rng.standard_normal((b, a)) / np.sqrt(a) @ H + 0.1 * rng.standard_normal((b, 1))
        if i in (0, 2):
            H = np.maximum(H, 0.0)
    X, Y = _normalise(X, N), _normalise(H, N)
    if d < w:
        X = np.vstack([X, np.zeros((w - d, N + Ntest))])
        Y = np.vstack([Y, np.zeros((w - d, N + Ntest))])
    return X[:, :N], Y[:, :N], X[:, N:], Y[:, N:]


# ---------------------------------------------------------------------------
# training
def _lbfgs(X, Y, Ws, rho, Lt, lam, iters):
    """L-BFGS-B (maxcor 30, as the catalogue) on L(W) = C(A_L) + lam/(2Lt) sum rho_l |W_l|^2."""
    shape, N = Ws.shape, X.shape[1]

    def f(x):
        W = x.reshape(shape)
        A = ln.forward(X, W, rho, Lt)[-1]
        val = np.sum((Y - A) ** 2) / N + lam / (2 * Lt) * np.sum(rho * np.sum(W * W, axis=(1, 2)))
        return val, ln.grad(X, Y, W, rho, Lt, lam).ravel()
    r = minimize(f, Ws.ravel(), jac=True, method="L-BFGS-B",
                 options=dict(maxiter=int(iters), maxfun=2 * int(iters), maxcor=30, gtol=1e-12, ftol=0.0))
    return r.x.reshape(shape), float(r.fun)


def _init(w, L, Lt, seed):
    """W_l = Lt [I, 0] + 0.1 N(0, 1) (catalogue R3)."""
    rng = np.random.default_rng(seed)
    return Lt * np.concatenate([np.eye(w), np.zeros((w, 1))], 1)[None] + 0.1 * rng.standard_normal((L, w, w + 1))


def _cap(rho, c):
    """Project positive steps onto {sum = 1, rho_l <= c} (keeps D2's rho_l Lt < 1 under the adaptive rule)."""
    r = np.array(rho, dtype=float)
    for _ in range(r.size):
        if not np.any(r > c * (1 + 1e-12)):
            break
        hi = r >= c
        r[hi] = c
        r[~hi] *= (1 - c * hi.sum()) / r[~hi].sum()
    return r


def _fit(X, Y, Lt, L, lam, iters, scheme="equidistant", seed=0, W0=None, chunk=200, a=0.5):
    """Train with the step rule ``scheme``: equidistant, irregular (a = 0.5, renormalised, E16) or adaptive
    (damped rule rho <- (rho + rho_new)/2 every ``chunk`` iterations, capped at rho_l Lt <= 0.9; catalogue D5:
    the undamped rule oscillates)."""
    w = X.shape[0]
    rho = ln.irregular(L, a) if scheme == "irregular" else ln.equidistant(L)
    W = _init(w, L, Lt, seed) if W0 is None else W0
    if scheme != "adaptive":
        W, val = _lbfgs(X, Y, W, rho, Lt, lam, iters)
        return W, rho, val
    done, val = 0, np.nan
    while done < iters:
        n = min(chunk, iters - done)
        W, val = _lbfgs(X, Y, W, rho, Lt, lam, n)
        done += n
        if done < iters:
            rho = _cap(ln.adaptive_update(rho, ln.forward(X, W, rho, Lt), damping=0.5), 0.9 / Lt)
    return W, rho, val


# ---------------------------------------------------------------------------
# measurements
def _stationarity(X, Y, Ws, rho, Lt, lam):
    """|grad L| / (|grad C| + |grad R|) with R = lam/(2Lt) sum rho_l |W_l|^2 (its gradient rho_l lam/Lt W_l)."""
    g = ln.grad(X, Y, Ws, rho, Lt, lam)
    gR = (lam / Lt) * np.asarray(rho)[:, None, None] * Ws
    den = float(np.linalg.norm(g - gR)) + float(np.linalg.norm(gR))
    return float(np.linalg.norm(g)) / den if den > 0 else 0.0


def _measure(X, Y, Ws, rho, Lt, lam):
    w, N = X.shape
    L = len(rho)
    As = ln.forward_numpy(X, Ws, rho, Lt)
    G = -2.0 / N * (Y - As[-1])
    Gs = [None] * (L + 1)
    Gs[L] = G
    for l in range(L - 1, -1, -1):
        G = (1 - rho[l] * Lt) * G + (As[l] > 0) * (rho[l] * Ws[l][:, :w].T @ G)
        Gs[l] = G
    coi, srank, neg = [], [], []
    for A in As:
        S = ln._sig(A)
        K = S.T @ S
        Kg = K + GAMMA0 * np.linalg.norm(K, 2) * np.eye(N)
        coi.append(float(np.trace(A @ np.linalg.solve(Kg, A.T))))
        s = np.linalg.svd(A, compute_uv=False)
        srank.append(float(s.sum() ** 2 / np.sum(s * s)))
        neg.append(float(np.linalg.norm(np.minimum(A, 0)) / max(float(np.linalg.norm(A)), 1e-300)))
    H, Hg, kin, sv = [], [], [], []
    for l in range(1, L + 1):
        A, B = As[l - 1], -Gs[l] / lam
        S = ln._sig(A)
        H.append(float(-2 / Lt * (Lt / 2 * np.sum((B @ S.T) ** 2) - Lt * np.sum(B * A))))
        K = S.T @ S
        Kg = K + GAMMA0 * np.linalg.norm(K, 2) * np.eye(N)
        dA = (As[l] - A) / rho[l - 1]
        k2 = float(np.trace(dA @ np.linalg.solve(Kg, dA.T)))
        kin.append(k2 / Lt**2)
        Hg.append(float(-2 / Lt * (k2 / (2 * Lt) - Lt / 2 * coi[l - 1])))
        sv.append(np.linalg.svd(Ws[l - 1], compute_uv=False))
    mid = slice(L // 3, max(2 * L // 3, L // 3 + 1))
    svm = np.median(np.array(sv)[mid], axis=0)
    r = int(np.sum(svm > BIG_SV * svm[0])) if svm[0] > 1e-8 else 0   # W = 0: the trivial (collapsed) minimum
    mse = float(np.sum((Y - As[-1]) ** 2) / N)
    rank_layers = [int(np.sum(s > BIG_SV * s[0])) if s[0] > 1e-8 else 0 for s in sv]
    return dict(coi=np.array(coi), srank=np.array(srank), neg=np.array(neg), H=np.array(H), Hg=np.array(Hg),
                kin=np.array(kin), sv_mid=svm, rank=r, mid=mid, mse=mse, rank_layers=rank_layers,
                H_mid=float(np.median(np.array(H)[mid])), Hg_mid=float(np.median(np.array(Hg)[mid])),
                coi_min=float(min(coi)), coi_mid=float(np.median(np.array(coi)[1:][mid])),
                stat=_stationarity(X, Y, Ws, rho, Lt, lam),
                gap=float(svm[r] / svm[r - 1]) if 0 < r < len(svm) else 0.0)


def _schedule(Lt):
    """Continuation in Lt (catalogue R3: weights x Lt_new/Lt_old): 1, 2, 4, 8 (doubling, up to Lt), then to Lt in
    geometric steps of ratio <= 1.5.  The last step was a jump of up to x2 (8 -> 15.6): the rescaled weights start
    far from the new minimum and 500-1500 L-BFGS iterations ended non-stationary (sweep 880011, bottleneck_structure
    draw 14: stationarity 0.64 after 8 -> 14.04; 0.40 after 8 -> 10.6 -> 14.04).  Unchanged where the last ratio is
    <= 1.5 (the defaults' 1, 2, 4, 8, 12)."""
    s = [1.0]
    while s[-1] * 2 <= min(Lt, 8.0):
        s.append(s[-1] * 2)
    if Lt > s[-1]:
        n = int(np.ceil(np.log(Lt / s[-1]) / np.log(1.5) - 1e-9))
        base = s[-1]
        s += [base * (Lt / base) ** (j / n) for j in range(1, n)] + [float(Lt)]
    return s


def _sweep(w, N, L, k, lam, iters, Lts, seed, d=None, hidden=20):
    """Train with continuation along ``Lts`` (memoised per prefix, so the claims share one run)."""
    X, Y, _, _ = _fcnn_teacher(w, N, k, seed, hidden=hidden, d=d)
    out, W, prev = [], None, None
    for i, Lt in enumerate(Lts):
        key = (w, N, L, k, lam, iters, tuple(Lts[: i + 1]), seed, d, hidden)
        if key not in _MEMO:
            W0 = _init(w, L, Lt, seed) if W is None else W * Lt / prev
            Wn, _, val = _fit(X, Y, Lt, L, lam, iters, W0=W0)
            _MEMO[key] = (Wn, _measure(X, Y, Wn, ln.equidistant(L), Lt, lam), val)
        W, m, _ = _MEMO[key]
        prev = Lt
        out.append((Lt, m, W))
    return X, Y, out
