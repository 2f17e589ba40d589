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
from theorems.claim import Param, ParamError

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


# ---------------------------------------------------------------------------
# the trained bottleneck claims' hypotheses and declared ranges (jacot.bottleneck_structure,
# jacot.bottleneck_hamiltonian_trend, jacot.bottleneck_rank_variability)
#: convergence hypothesis of the trained claims: the statements are about (local) minima of the regularised
#: objective, where the data gradient dC/dW and the regulariser's lam/Lt rho W cancel.  Measured by the
#: stationarity ratio |grad L| / (|grad C| + |grad R|) in [0, 1] (0 at a critical point, ~1 where one term
#: dominates).  L-BFGS end points on the ReLU kinks do not reach 0 (catalogue H2): at the defaults the ratio is
#: 0.04-0.22 over the continuation 1..12; the refuted sweep draws (iters 11, 18, 367 with lam <= 1e-4) ended at
#: 0.82-1.00, with -2H_l/Lt ranging over 1e5-1e11 (B = -(1/lam) dC/dA amplifies the leftover gradient).  Above
#: STAT_MAX the end point is not taken for a minimum: inconclusive, with the ratio and the advice to raise iters.
STAT_MAX = 0.5
#: a run whose train MSE is >= COLLAPSE_MSE has collapsed to W = 0 (output = the constant mean; C(0) = 1 on the
#: normalised targets): the trivial minimum A = 0 (L8), not a bottleneck (large lam, or the leak (1 - Lt/L)^L).
COLLAPSE_MSE = 0.9


def _not_a_minimum(ms, iters):
    """The reason the runs' end points ``ms`` (measure dicts, with their Lt) are not (non-trivial) minima, or None."""
    for Lt, m in ms:
        if m["stat"] > STAT_MAX:
            return (f"training not converged at Lt = {Lt:g}: stationarity |grad L|/(|grad C| + |grad R|) = "
                    f"{m['stat']:.2f} > {STAT_MAX} after {iters} L-BFGS iterations (the claims are about minima; "
                    f"raise iters)")
        if m["mse"] >= COLLAPSE_MSE:
            return (f"training at Lt = {Lt:g} collapsed to the trivial minimum W = 0 (train MSE {m['mse']:.3g} >= "
                    f"{COLLAPSE_MSE}): no bottleneck to measure (smaller lam, or more layers L for this Lt)")
    return None


def _validate(p):
    # rho Lt = Lt/L <= 3/4 (D3 needs < 1): the claims are about representation geodesics, continuous paths that the
    # discretisation approximates only while the step rho Lt is small; at rho Lt -> 1 the leak factor 1 - rho Lt -> 0
    # and L-BFGS ended non-stationary (sweep 880011, bottleneck_structure draw 8: L = 18, Lt = 15.6, rho Lt = 0.87,
    # stationarity 0.82-0.91 with any continuation schedule or extra iterations).  Narrowed range (was L > Lt).
    if not 4 * p.Lt <= 3 * p.L:
        raise ParamError(f"parameters L, Lt must satisfy Lt/L <= 3/4 (the step rho Lt of a path discretisation; "
                         f"got L={p.L}, Lt={p.Lt})")
    # k + 1 < w: a bottleneck of the teacher's dimension k plus the constant direction must be narrower than the width,
    # else 'few large singular values in the middle' (<= k + 1 = w) is vacuous and the net has no room for one (sweep
    # 880011 draw 0: w = 4, k = 3, middle COI 5.3 = w + 1.3, no slow layers).  Narrowed range (was k <= w).
    if not p.k + 1 < p.w:
        raise ParamError(f"the teacher's inner dimension k must satisfy k + 1 < w (a bottleneck narrower than the width; "
                         f"got k={p.k}, w={p.w})")


def _params(Lt_low=1.0):
    """The trained-bottleneck parameters.  Declared ranges (issue 24 phase 2: the sweep draws over the whole range, and
    the former w <= 40, N <= 400, L <= 100, Lt <= 60, iters <= 50000 took tens of minutes per draw on a CPU, past the
    sweep's time limit, while draws with iters ~ 10-400 or lam ~ 1e-5 ended far from a minimum): the scaled-down
    Fig. 1 regime around the catalogue's R3 (w = 10, N = 40, L = 40, k = 2, lam = 0.01), where 500-1500 L-BFGS
    iterations per Lt reach the stationarity the checks require (STAT_MAX) in about a minute."""
    return [
        Param.int("w", 8, 4, 10, "width = input/output dimension"),
        Param.int("N", 32, 16, 40, "training points"),
        Param.int("L", 32, 17, 40, "layers (equidistant rho_l = 1/L; L > Lt)"),
        Param.int("k", 2, 1, 3, "inner dimension k* of the teacher w -> 20 -> k -> 20 -> w"),
        Param.float("Lt", 12.0, Lt_low, 16.0, "largest effective depth (continuation 1, 2, 4, ..., Lt)"),
        Param.float("lam", 0.01, 3e-3, 3e-2, "regularisation lambda"),
        # iters >= 1000 (session 9, narrowed from 500): fresh sweep 4100615 refuted bottleneck_structure's spectral gap
        # at iters = 583 (stationarity 0.44, just inside STAT_MAX: middle spectrum 13.6, 11.6, 3.06, 0.80, gap 0.26);
        # the same draw at 1200 iterations has stationarity 0.27 and gap 0.049 (certified): the structure is that of a
        # minimum, which 500-900 iterations do not reach on every draw
        Param.int("iters", 1000, 1000, 1500, "L-BFGS iterations per Lt"),
        Param.seed("seed of teacher, data and initialisation", search=None),
    ]


_PARAMS = _params()


def _r3_table(k, Lts, iters):
    """The continuation of catalogue R3 (w = 10, N = 40, L = 40, lam = 0.01, seed 0) for a k-dimensional teacher."""
    _, _, runs = _sweep(10, 40, 40, k, 0.01, iters, Lts, 0)
    return runs
