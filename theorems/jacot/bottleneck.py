"""Bottleneck structure of trained leaky ResNets (catalogue jacot §2.5 BN1, BN2; §2.6 F2; §3 R3-R6).

These claims are EMPIRICAL (the paper's Fig. 1 and Fig. 2): the checks train discretised leaky
ResNets (``solvers.leaky_net``: Numba forward/backward) on the catalogue's synthetic teacher tasks
with L-BFGS (scipy), then measure per layer

* the gamma-stable cost of identity ``COI_gamma(A) = Tr[A (K + gamma I)^{-1} A^T]`` with
  ``gamma_p = 1e-3 ||K_p||_op`` (catalogue E2: ``||sigma(A)||_op^2 = ||K||_op``, NOT ``||K||_op^2``;
  this module uses ``||K_p||_op``), at every representation ``A_0 = X, ..., A_L``;
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
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

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


def _resnet_teacher(dims, N, Ntest, seed):
    """f* = g_m o ... o g_1 with random residual maps g(x) = P (x + V relu(U x + b)) (F2: 30 -> 6 -> 3 -> 30)."""
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((dims[0], N + Ntest))
    X = H
    for a, b in zip(dims[:-1], dims[1:]):
        U, V = rng.standard_normal((a, a)) / np.sqrt(a), rng.standard_normal((a, a)) / np.sqrt(a)
        c = 0.1 * rng.standard_normal((a, 1))
        H = rng.standard_normal((b, a)) / np.sqrt(a) @ (H + V @ np.maximum(U @ H + c, 0.0))
    X, Y = _normalise(X, N), _normalise(H, N)
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


def _stationarity(X, Y, Ws, rho, Lt, lam):
    """|grad L| / (|grad C| + |grad R|) with R = lam/(2Lt) sum rho_l |W_l|^2 (its gradient rho_l lam/Lt W_l)."""
    g = ln.grad(X, Y, Ws, rho, Lt, lam)
    gR = (lam / Lt) * np.asarray(rho)[:, None, None] * Ws
    den = float(np.linalg.norm(g - gR)) + float(np.linalg.norm(gR))
    return float(np.linalg.norm(g)) / den if den > 0 else 0.0


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
    """Continuation in Lt (catalogue R3: weights x Lt_new/Lt_old): 1, 2, 4, ... up to Lt."""
    s = [1.0]
    while s[-1] * 2 < Lt:
        s.append(s[-1] * 2)
    if Lt > 1:
        s.append(float(Lt))
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


def _validate(p):
    if not p.L > p.Lt:
        raise ParamError(f"parameters L, Lt must satisfy L > Lt (D3: rho_l Lt < 1 for equidistant steps; got L={p.L}, Lt={p.Lt})")
    if p.k > p.w:
        raise ParamError(f"the teacher's inner dimension k must be <= width w (got k={p.k}, w={p.w})")


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
        Param.int("iters", 1000, 500, 1500, "L-BFGS iterations per Lt"),
        Param.seed("seed of teacher, data and initialisation", search=None),
    ]


_PARAMS = _params()


def _layer_plots(m, Lt, L):
    layers = list(range(L + 1))
    return [
        {"kind": "semilogy", "x": layers, "series": {"COI_gamma(A_l)": m["coi"].tolist(),
                                                    "srank ||A||_*^2/||A||_F^2": m["srank"].tolist(),
                                                    "kinetic/Lt^2 (layer l+1)": m["kin"].tolist() + [None]},
         "xlabel": "layer l", "ylabel": "cost of identity / stable rank",
         "title": f"bottleneck structure, Lt = {Lt:g}: COI high at the ends, low in the middle"},
        {"kind": "line", "x": list(range(1, L + 1)), "series": {"-2H_l/Lt (discrete)": m["H"].tolist(),
                                                               "-2H_gamma,l/Lt": m["Hg"].tolist(),
                                                               "COI_gamma(A_(l-1))": np.minimum(m["coi"][:-1], 10.0).tolist(),
                                                               "#sv(W_l) > 0.1 max": [float(x) for x in m["rank_layers"]]},
         "xlabel": "layer l", "ylabel": "-2H/Lt, COI (clipped at 10), rank of W_l",
         "title": f"Hamiltonian across layers, Lt = {Lt:g}"},
    ]


# ---------------------------------------------------------------------------
# BN1 (iii)-(v), (vii): the per-layer structure at large Lt
structure = Claim(
    id="jacot.bottleneck_structure",
    title="Trained leaky ResNets at large Lt: low COI and few large singular values in the middle, "
          "fast high-COI layers at the ends, kinetic energy ~ extra COI, H nearly flat",
    label="Fig. 1, BN1 (iii)-(vii)",
    section="3.1",
    equation="l.140, l.219",
    lines=(219, 219),
    statement=r"\text{large }\tilde L:\ \|A_p\|^2_{K_p}\text{ and }\|\partial_pA_p\|^2\text{ large near }p=0,1,\ "
              r"\|A_p\|^2_{K_p}\to k^*,\ \|\partial_pA_p\|\to0\text{ inside the bottleneck};\ W_p\text{ has }k^*"
              r"\text{ large singular values there};\ \mathcal H\text{ varies much less than kinetic and potential energy}",
    status="empirical",
    params=_params(Lt_low=8.0),  # the claim is about large Lt (Lt = 1..4: no bottleneck, the falsifier)
    validate=_validate,
    notes="Hypothesis (the statements are about minima): an end point with stationarity |grad L|/(|grad C| + |grad R|) > 0.5 or one collapsed to W = 0 (train MSE >= 0.9) is inconclusive with the reason. "
          "Scaled-down Fig. 1 (catalogue R3: w = 10, N = 40, L = 40, k = 2; the paper trains adaptive nets, R3 and this "
          "module use equidistant steps). Default (ci) size w = 8, N = 32, L = 32, "
          "1000 L-BFGS iterations per Lt in the continuation 1, 2, 4, 8, 12. gamma_p = 1e-3 ||K_p||_op (E2). The "
          "'rank' is #{s > 0.1 s_max} of the median middle-third spectrum of W_l; it may exceed k* by one (the "
          "constant direction, catalogue R3: 3 large values for k = 2). Discrete H is not flat in the first layers "
          "(rho Lt = 0.4 cannot resolve a jump of speed Lt sqrt(COI)): only the middle third is tested.",
    catalogue="jacot §2.5 BN1; §3 R3",
    covers=("BN1", "R3"),
)


def _structure_outcome(p):
    _, _, runs = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    Lt, m, _ = runs[-1]
    why = _not_a_minimum([(Lt, m)], p.iters)
    if why:
        return inconclusive(why, train_mse=m["mse"], stationarity=m["stat"])
    L, mid = p.L, m["mid"]
    e = max(1, L // 6)                         # "near the ends": first and last sixth of the layers
    coi = m["coi"]
    coi_ends = min(float(coi[: e + 1].max()), float(coi[-e - 1:].max()))
    Hm = m["H"][mid]
    coi_range = float(coi.max() - coi.min())
    kin_mid = float(np.median(m["kin"][mid]))
    kin_end = max(float(m["kin"][:e].max()), float(m["kin"][-e:].max()))
    neg_mid, neg_in = float(np.median(m["neg"][1:][mid])), float(m["neg"][0])
    # BN1 (vi) / T4g: kinetic/Lt^2 against the extra COI, COI_gamma(A_(l-1)) - min COI_gamma, over all layers
    xc, yk = coi[:-1] - coi.min(), m["kin"]
    slope = float(xc @ yk / (xc @ xc))
    corr = float(np.corrcoef(xc, yk)[0, 1])
    # Thresholds (loose, from the scale separation the paper predicts and the catalogue measured):
    #  * COI: middle median <= 1/2 of the largest COI in BOTH end sixths (catalogue R3: 1.8 vs 181 at the input;
    #    the output COI is smaller, ~4-12 here, so the factor 2 is the margin the output side allows);
    #  * W spectrum: at most k* + 1 large values (k* plus the constant direction, R3), with a gap
    #    s_(r+1)/s_r <= 0.2 (measured 0.02 in R3);
    #  * kinetic energy: middle median <= 1% of its largest value in the end sixths (R3: 0.25 vs 181.5);
    #  * H: range of -2H_l/Lt over the middle third <= 5% of the range of COI_gamma over all layers
    #    (R3: [1.56, 1.81] against 181 -> 1.8, i.e. 0.14%) -- "varies significantly less", not "constant";
    #  * slow layers near non-negative: middle negative mass <= 1/4 of the input's (R3: 0.045 vs 0.71).
    parts = {
        "COI_mid <= COI_ends/2": (m["coi_mid"], coi_ends / 2),
        "large sv in middle <= k+1": (float(m["rank"]), float(p.k + 1)),
        "spectral gap s_(r+1)/s_r <= 0.2": (m["gap"], 0.2),
        "kinetic_mid <= 0.01 kinetic_ends": (kin_mid, 0.01 * kin_end),
        "range(-2H/Lt)_mid <= 0.05 range(COI)": (float(Hm.max() - Hm.min()), 0.05 * coi_range),
        "neg_mid <= neg_input/4": (neg_mid, neg_in / 4),
        #  * kinetic ~ extra COI (T4g: speed ~ Lt sqrt(COI - min COI)): least-squares slope through 0 within
        #    [0.75, 1.25] and correlation >= 0.95 (measured 1.02 and 0.9996 at the defaults; the slope is 1 exactly
        #    when H_gamma is constant over the layers and equal to -Lt/2 min COI, so the 25% covers the
        #    discretisation of the first layers)
        "|slope(kinetic/Lt^2 ~ extra COI) - 1| <= 0.25": (abs(slope - 1), 0.25),
        "1 - corr(kinetic, extra COI) <= 0.05": (1 - corr, 0.05),
    }
    vals = {"Lt": Lt, "train_mse": m["mse"], "stationarity": m["stat"], "coi_input": float(coi[0]),
            "coi_output": float(coi[-1]),
            "coi_mid_median": m["coi_mid"], "coi_min": m["coi_min"], "rank_mid": m["rank"],
            "sv_mid": [round(float(s), 4) for s in m["sv_mid"][:6]],
            "minus2H_over_Lt_mid": [float(Hm.min()), float(np.median(Hm)), float(Hm.max())],
            "minus2Hgamma_over_Lt_mid_median": m["Hg_mid"], "kinetic_mid_median": kin_mid, "kinetic_end_max": kin_end,
            "neg_mid": neg_mid, "neg_input": neg_in, "kinetic_vs_extra_coi_slope": slope,
            "kinetic_vs_extra_coi_corr": corr, "rank_layers": m["rank_layers"]}
    pl = _layer_plots(m, Lt, L)
    vals["plot"], vals["plots"] = pl[0], pl[1:]
    return Outcome.from_parts(parts, message=f"Lt = {Lt:g}: COI input {coi[0]:.1f}, middle {m['coi_mid']:.2f}, output "
                              f"{coi[-1]:.2f}; {m['rank']} large sv; -2H/Lt middle in [{Hm.min():.2f}, {Hm.max():.2f}]",
                              values=vals)


@structure.numeric
def _(p):
    """Train with continuation up to Lt and test the per-layer bottleneck structure (loose thresholds)."""
    return _structure_outcome(p)


@structure.falsifier("small_effective_depth")
def _(p):
    """The same structure claimed at Lt = 1 (NeuralODE-like regime): no bottleneck, many large singular values.
    (Lt = 1 lies below the claim's declared range, large Lt >= 8: the falsifier overrides it.)"""
    return _structure_outcome(p.replace(Lt=1.0))


# ---------------------------------------------------------------------------
# BN1 (i), (ii): -2H/Lt rises to k* from below, min COI falls to k* from above
trend = Claim(
    id="jacot.bottleneck_hamiltonian_trend",
    title="As Lt grows, -2H/Lt rises toward the Bottleneck rank k* from below and min_p COI falls toward it from above",
    label="Fig. 1, BN1 (i)-(ii)",
    section="3.1",
    equation="l.140, l.217-219",
    lines=(217, 219),
    statement=r"-\tfrac2{\tilde L}\mathcal H\uparrow k^*,\qquad\min_p\|A_p\|^2_{K_p}\downarrow k^*\qquad(\tilde L\to\infty)",
    status="empirical",
    params=_PARAMS,
    validate=_validate,
    notes="Hypothesis (the statements are about minima): an end point with stationarity |grad L|/(|grad C| + |grad R|) > 0.5 or one collapsed to W = 0 (train MSE >= 0.9) is inconclusive with the reason. "
          "Medians of the discrete -2H_l/Lt and of -2H_gamma,l/Lt over the middle third of the layers (the first "
          "layers are not resolved, catalogue R3). Monotonicity is asserted with a slack (see the check), closeness "
          "to k* only at the largest Lt >= 8 with the catalogue's +-0.5, on -2H_gamma/Lt and min COI: the discrete "
          "-2H/Lt uses B = -(1/lambda) dC/dA, a one-sided derivative at the ReLU kinks the end point sits on, and its "
          "median at Lt = 12 ranged 0.58-1.83 over rounding-level perturbations of the training (BLAS kernel, 2^-52 "
          "relative change of the start) against 1.79 +- 0.01 for -2H_gamma/Lt; the discrete value is tested for "
          "the rise (within its non-conservation over the middle layers) and for staying below min COI. The integer is the Bottleneck rank k_b of the end "
          "point (nearest integer to min COI_gamma), required within the teacher's k +- 2: BN2 lets the net settle "
          "on another rank (jacot.bottleneck_rank_variability; a sweep draw with k = 3 ended at -2H_gamma/Lt 1.94, min "
          "COI 2.12, a rank-2 minimum, which the teacher's k refuted); the reproductions compare with the teacher's k. Related: jacot.bottleneck_rank_hamiltonian (P5b, registered without a check). "
          "R4 (Fig. 1 at k* = 5, width 30, N = 200, L = 50) is written (_r4_reproduction) but not registered: at the "
          "1000 iterations per Lt affordable here it did not converge (see the comment there).",
    catalogue="jacot §2.5 BN1, P5b; §3 R3, R4",
    covers=("BN1", "R3"),
)


def _trend_parts(runs, k, check_k=True, endpoint_rank=False):
    """``endpoint_rank``: compare -2H_gamma/Lt at the largest Lt with the Bottleneck rank k_b of the end point (the
    integer nearest min COI_gamma, an independent quantity), required within k +- 2 (BN2: minima of another rank
    exist, jacot.bottleneck_rank_variability), instead of with the teacher's k."""
    Lts = [r[0] for r in runs]
    H = [r[1]["H_mid"] for r in runs]
    Hg = [r[1]["Hg_mid"] for r in runs]
    cm = [r[1]["coi_min"] for r in runs]
    # Error model of the discrete -2H/Lt: its B_l = -(1/lambda) dC/dA_l is a one-sided derivative at the ReLU kinks
    # the L-BFGS end point sits on (catalogue H2, R3), so the end point's rounding (BLAS kernel, a 2^-52
    # perturbation of the start) moves the whole middle-third profile: at Lt = 12, 16 such perturbations gave
    # medians 0.58-1.83, profile ranges up to 1.3, while -2H_gamma/Lt (from the representations A_l only) stayed in
    # 1.786-1.798 and min COI in 2.019-2.034.  H is conserved along a critical path (the discrete H_l nearly so in
    # the slow middle layers, catalogue R3: [1.56, 1.81] there), so the half-range u of -2H_l/Lt over the middle
    # third measures how far the end point is from one; the discrete median is only known to +-u.
    u = [float(np.ptp(r[1]["H"][r[1]["mid"]])) / 2 for r in runs]
    # Slack model: each Lt is an approximate (1000-iteration) L-BFGS minimum, not the exact one; on repeated
    # runs the medians move by ~0.1 and min COI by a few percent, so monotonicity is asserted up to an
    # absolute 0.25 on -2H_gamma/Lt (plus u on the discrete -2H/Lt) and a relative 5% on min COI (the trends
    # themselves move by 2-50 per doubling at small Lt and ~0.1-0.5 at large Lt).
    rise_H = max([0.0] + [H[i] - H[i + 1] - u[i] - u[i + 1] for i in range(len(H) - 1)])
    rise_Hg = max([0.0] + [Hg[i] - Hg[i + 1] for i in range(len(Hg) - 1)])
    fall_c = max([0.0] + [cm[i + 1] / cm[i] - 1 for i in range(len(cm) - 1)])
    parts = {"-2H/Lt non-decreasing (slack 0.25 + its non-conservation u)": (rise_H, 0.25),
             "-2H_gamma/Lt non-decreasing (slack 0.25)": (rise_Hg, 0.25),
             "min COI non-increasing (slack 5%)": (fall_c, 0.05),
             # from below / above (eq. (4) upper side: -2H/Lt <= min COI_gamma + gamma c^2; discrete slack 0.1)
             "-2H/Lt <= min COI + 0.1 at every Lt": (max(h - c for h, c in zip(H, cm)), 0.1)}
    if check_k and Lts[-1] >= 8:
        # catalogue R3: +-0.5 on -2H/Lt vs the integer at Lt >= 12 (it measured 1.59 for k = 2, 1.81 for min COI).
        # Tested on the gamma-stable -2H_gamma/Lt: the discrete median is decided by the rounding at the kinks
        # (error model above: 0.58-1.83 across rounding-level perturbations, so +-0.5 would be a coin flip).
        if endpoint_rank:
            kb = max(1, int(round(cm[-1])))
            parts["|-2H_gamma/Lt - k_b| <= 0.5 at largest Lt (k_b = round(min COI))"] = (abs(Hg[-1] - kb), 0.5)
            parts["|k_b - k| <= 2 (BN2)"] = (float(abs(kb - k)), 2.0)
        else:
            parts["|-2H_gamma/Lt - k| <= 0.5 at largest Lt"] = (abs(Hg[-1] - k), 0.5)
            parts["|min COI - k| <= 0.5 at largest Lt"] = (abs(cm[-1] - k), 0.5)
    vals = {"Lt": Lts, "minus2H_over_Lt_mid": H, "minus2H_over_Lt_mid_halfrange": u,
            "minus2Hgamma_over_Lt_mid": Hg, "min_coi_gamma": cm,
            "rank_mid": [r[1]["rank"] for r in runs], "train_mse": [r[1]["mse"] for r in runs],
            "stationarity": [r[1]["stat"] for r in runs],
            "plot": {"kind": "semilogx", "x": Lts, "series": {"-2H/Lt (middle median)": H, "-2H_gamma/Lt": Hg,
                                                             "min_p COI_gamma": cm, "k*": [float(k)] * len(Lts)},
                     "xlabel": "effective depth Lt", "ylabel": "estimate of k*",
                     "title": "BN1: -2H/Lt from below, min COI from above"}}
    return parts, vals


@trend.numeric
def _(p):
    """Continuation sweep 1, 2, 4, ..., Lt: monotone trends and closeness to k* at the largest Lt (every Lt of the
    continuation a converged, non-trivial end point)."""
    _, _, runs = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    why = _not_a_minimum([(r[0], r[1]) for r in runs], p.iters)
    if why:
        return inconclusive(why, stationarity=[r[1]["stat"] for r in runs], train_mse=[r[1]["mse"] for r in runs])
    parts, vals = _trend_parts(runs, p.k, endpoint_rank=True)
    return Outcome.from_parts(parts, message=f"-2H/Lt {[round(x, 2) for x in vals['minus2H_over_Lt_mid']]}, -2H_gamma/Lt "
                              f"{[round(x, 2) for x in vals['minus2Hgamma_over_Lt_mid']]}, min COI "
                              f"{[round(x, 2) for x in vals['min_coi_gamma']]} at Lt {vals['Lt']}", values=vals)


@trend.falsifier("estimate_at_small_Lt", fixed={"Lt": 2.0})
def _(p):
    """-2H/Lt already within 0.5 of k* at Lt = 2 (it is far below: the estimate needs large Lt)."""
    _, _, runs = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    why = _not_a_minimum([(r[0], r[1]) for r in runs], p.iters)
    if why:
        return inconclusive(why)
    H = runs[-1][1]["H_mid"]
    return Outcome(residual=abs(H - p.k), tolerance=0.5, values={"minus2H_over_Lt_mid": H, "Lt": runs[-1][0]},
                   message=f"Lt = {runs[-1][0]:g}: -2H/Lt = {H:.2f} vs k = {p.k}")


def _r3_table(k, Lts, iters):
    _, _, runs = _sweep(10, 40, 40, k, 0.01, iters, Lts, 0)
    return runs


@trend.reproduction(name="R3", slow=True)
def _(p):
    """Catalogue R3 at its size (w = 10, N = 40, L = 40, lam = 0.01, Lt = 1, 2, 4, 8, 12, k = 2) with 5000 L-BFGS
    iterations per Lt (the catalogue ran 20000; on the shared 2-core machine 5000 keeps this at a few CPU minutes,
    and the medians move by < 0.1 between 2000 and 5000 iterations).
    Quoted: -2H/Lt medians -50.9, -11.4, -0.41, 1.14, 1.59; min COI_gamma 22.83, 12.97, 5.33, 2.24, 1.81;
    #sv > 0.1 max: 7, 5, 4, 3, 3.  The teacher draw is unrecorded, so exact values are not reproducible: compared
    are the trends and the catalogue's tolerances (+-0.5 at Lt = 12; min COI within 25% at every Lt >= 4)."""
    quoted_H = [-50.9, -11.4, -0.41, 1.14, 1.59]
    quoted_c = [22.83, 12.97, 5.33, 2.24, 1.81]
    runs = _r3_table(2, [1.0, 2.0, 4.0, 8.0, 12.0], 5000)
    parts, vals = _trend_parts(runs, 2)
    parts["min COI within 25% of quoted (Lt >= 4)"] = (max(abs(r[1]["coi_min"] / q - 1) for r, q in
                                                          zip(runs[2:], quoted_c[2:])), 0.25)
    vals.update(quoted_minus2H=quoted_H, quoted_min_coi=quoted_c, quoted_rank=[7, 5, 4, 3, 3])
    return Outcome.from_parts(parts, message="R3 sweep (k = 2)", values=vals)


# R4 is NOT registered (decorator removed; kept for a run with more CPU).  At 1000 L-BFGS iterations per Lt (what the
# shared 2-core machine allowed: 31 minutes wall) it was refuted: the middle-layer spectra gave 15, 11, 6, 6, 6 large
# values (5 +- 1 at Lt >= 16: passed) and -2H_gamma/Lt rose monotonically (-28.6, -1.40, 2.52, 3.26, 3.26), but the
# discrete -2H/Lt medians (-175, -5.9, 1.47, -590, -28.0) are not converged (B = -G/lambda amplifies the residual
# gradient by 1/lambda = 500 at lambda = 0.002) and min COI_gamma fell through 5 (25.8, 12.8, 5.56, 3.52, 2.33) while
# the train MSE rose from 0.024 (Lt = 8) to 0.060 (Lt = 16): the continuation jumps were not re-converged.  The
# catalogue's 20000 iterations per Lt (~10 CPU minutes each) were not affordable here.
def _r4_reproduction():
    """Catalogue R4 (Fig. 1 scaled down): width 30 (a 20 -> 5 -> 20 teacher embedded in R^30), N = 200, L = 50,
    lam = 0.002, Lt = 2, 4, 8, 16, 24 with continuation, 1000 L-BFGS iterations per Lt (the catalogue suggests
    20000: ~10 CPU minutes per Lt here; 1000 x 5 is ~3 CPU minutes).  Paper: -2H/Lt rises to 5, min COI falls to 5, 5 dominant singular values;
    catalogue: expect 5 +- 1 large middle singular values at Lt >= 16."""
    X, Y, runs = _sweep(30, 200, 50, 5, 0.002, 1000, [2.0, 4.0, 8.0, 16.0, 24.0], 0, d=20)
    parts, vals = _trend_parts(runs, 5, check_k=False)
    parts["5 +- 1 large sv at Lt >= 16"] = (max(abs(r[1]["rank"] - 5) for r in runs[3:]), 1.0)
    parts["|-2H/Lt - 5| <= 1 at Lt = 24"] = (abs(runs[-1][1]["H_mid"] - 5), 1.0)
    pl = _layer_plots(runs[-1][1], 24.0, 50)
    vals["plots"] = pl
    return Outcome.from_parts(parts, message="R4 sweep (k* = 5)", values=vals)


bottleneck_k5 = Claim(
    id="jacot.bottleneck_k5",
    title="Fig. 1 at bottleneck rank k* = 5: -2H/Lt and min COI approach 5 (catalogue R4) - not reproduced here",
    label="R4",
    section="3.1",
    equation="Fig. 1",
    lines=(217, 221),
    statement=r"\text{for a rank-}5\text{ task, }-2H/\tilde L\to 5,\ \min_p\|A_p\|_{K_p}^2\to 5\text{ and 5 dominant "
              r"singular values in the middle layers as }\tilde L\text{ grows}",
    status="empirical",
    params=[],
    notes="Registered without a check, because the reproduction written for it (_r4_reproduction: width 30, a "
          "20 -> 5 -> 20 teacher, N = 200, L = 50, lam = 0.002, Lt = 2..24 with continuation) was REFUTED at the "
          "1000 L-BFGS iterations per Lt affordable on 2 shared cores: 6 large middle singular values at Lt >= 16 "
          "(5 +- 1 passes), but -2H_gamma/Lt rose only to 3.26, the discrete -2H/Lt was -590 at Lt = 16 (B = -G/lam "
          "amplifies the leftover gradient 500x) and the train MSE rose after Lt = 8. The catalogue's 20000 iterations "
          "per Lt (~10 CPU minutes each) were not run; a GPU machine was not available to this task. The k* = 2 and "
          "k* = 3 versions (R3) are reproduced by jacot.bottleneck_hamiltonian_trend.",
    catalogue="jacot §3 R4",
    covers=("R4",),
)


# ---------------------------------------------------------------------------
# BN2: distinct minima with different bottleneck ranks
variability = Claim(
    id="jacot.bottleneck_rank_variability",
    title="Minima with different bottleneck ranks exist for the same task; the kept dimension varies by 1-2",
    label="BN2",
    section="3.1",
    equation="l.221",
    lines=(221, 221),
    statement=r"\text{distinct sequences of local minima }A^{\tilde L}\text{ with different Bottleneck ranks exist; the kept "
              r"dimension can differ by }1\text{--}2",
    status="empirical",
    params=[q for q in _params(Lt_low=8.0) if q.name != "k"]
    + [Param.int("k", 2, 2, 3, "inner dimension k* of the teacher (>= 2: a rank-1 teacher has no non-trivial lower "
                 "rank to settle on; all runs of 7 rank-1 sweep draws found rank 1, a search without a witness)"),
       Param.int("runs", 2, 1, 3, "extra training paths 2Lt/3 -> Lt (init seeds "
                                                       "seed+1..seed+runs)")],
    validate=_validate,
    notes="Hypothesis (the statements are about minima): an end point with stationarity |grad L|/(|grad C| + |grad R|) > 0.5 or one collapsed to W = 0 (train MSE >= 0.9) is inconclusive with the reason. "
          "Same data and objective at the same Lt, different training paths: the continuation 1, 2, 4, ..., Lt of "
          "jacot.bottleneck_structure and, for seeds seed+1..seed+runs, initialisation W = (2Lt/3)[I, 0] + 0.1 N(0, 1) "
          "trained at 2Lt/3 then at Lt. The Bottleneck ranks round(min_p COI_gamma) differ between runs and all lie within "
          "k* +- 2 (the paper's 'can vary by 1-2'). Runs that collapse to W = 0 (direct training at Lt = 12 with L = 32 "
          "does: the leak (1 - Lt/L)^L ~ 3e-7 kills the signal) are the trivial minimum and are not counted. "
          "At the defaults: ranks [2, 1, 1], objectives 0.2270 (continuation, rank 2) vs 0.2377 and 0.2497 (rank 1): "
          "distinct end points of similar cost, the continuation reaching the lowest. The end points are L-BFGS "
          "terminations after `iters` iterations, not certified local minima (stationarity is not reachable at "
          "ReLU kinks, catalogue H2). Observed while writing this: the path is chaotic -- rescaling the initial "
          "weights by 2W instead of (12W)/6 (one ulp) turned a rank-1 end point into a rank-2 one.",
    catalogue="jacot §2.5 BN2; §3 R3 (k = 3 teacher)",
    covers=("BN2", "R3"),
)


def _objective(X, Y, W, Lt, lam):
    rho = ln.equidistant(W.shape[0])
    return ln.loss(X, Y, W, rho, Lt, lam)


def _variability_runs(p):
    X, Y, sweep = _sweep(p.w, p.N, p.L, p.k, p.lam, p.iters, _schedule(p.Lt), p.seed)
    out = [(sweep[-1][1], _objective(X, Y, sweep[-1][2], p.Lt, p.lam))]
    for s in range(1, p.runs + 1):
        key = ("jump", p.w, p.N, p.L, p.k, p.Lt, p.lam, p.iters, s, p.seed)
        if key not in _MEMO:
            Lt0 = 2 * p.Lt / 3
            W, _, _ = _fit(X, Y, Lt0, p.L, p.lam, p.iters, W0=_init(p.w, p.L, Lt0, p.seed + s))
            W, rho, val = _fit(X, Y, p.Lt, p.L, p.lam, p.iters, W0=W * p.Lt / Lt0)
            _MEMO[key] = (_measure(X, Y, W, rho, p.Lt, p.lam), val)
        out.append(_MEMO[key])
    return out


def _minima(res, iters):
    """The runs (measure, objective) whose end points are converged non-trivial minima (_not_a_minimum)."""
    return [(m, v) for m, v in res if _not_a_minimum([(0.0, m)], iters) is None]


@variability.numeric
def _(p):
    """Ranks of the middle layers over several training paths: at least two distinct values, all within k* +- 2."""
    res = _variability_runs(p)
    # A run that collapsed to W = 0 (output the constant mean, train MSE ~ 1 = C(0) on normalised targets) is the
    # trivial minimum A = 0 (L8), not a bottleneck; a run whose end point is not stationary (STAT_MAX) is not a
    # minimum: both reported, not counted.
    kept = _minima(res, p.iters)
    # Bottleneck rank of a run: the integer nearest to min_p COI_gamma (P5b: the COI of the bottleneck is k*);
    # the count of large singular values is reported too but is threshold-sensitive (a third value drifts
    # through 0.1 s_max between runs of the same COI-rank 2).
    ranks = [int(round(m["coi_min"])) for m, _ in kept]
    if len(kept) < 2:
        return inconclusive(f"fewer than two converged non-trivial minima ({len(res) - len(kept)} of {len(res)} runs "
                            f"collapsed to W = 0 or not converged: stationarity > {STAT_MAX}; raise iters)",
                            objective=[v for _, v in res], stationarity=[m["stat"] for m, _ in res],
                            train_mse=[m["mse"] for m, _ in res])
    distinct = len(set(ranks))
    # "exist": >= 2 distinct ranks among the runs (a count: tolerance 0); "vary by 1-2": |rank - k*| <= 2
    parts = {"|rank - k*| <= 2": (float(max(abs(r - p.k) for r in ranks)), 2.0)}
    if distinct < 2:
        # "minima of different ranks exist" is an existence statement: runs that all found one rank are no evidence
        # against it (a search that found no witness), unless the ranks already break the bound above
        bound = Outcome.from_parts(parts, message="", values={})
        if bound.decide() == "certified":
            return inconclusive(f"all {len(kept)} converged runs found the same Bottleneck rank {ranks[0]} (k* = {p.k}): "
                                f"no witness of distinct ranks on this draw (more runs, or another seed)",
                                ranks=ranks, objective=[v for _, v in kept])
    parts["distinct ranks >= 2"] = (0.0 if distinct >= 2 else 1.0, 0.0)
    return Outcome.from_parts(parts, message=f"ranks {ranks} (k* = {p.k}; first: continuation from Lt = 1, then "
                              f"2Lt/3 -> Lt from other initialisations), objectives {[round(v, 4) for _, v in kept]}",
                              values={"ranks": ranks, "objective": [v for _, v in kept],
                                      "sv_count_mid": [m["rank"] for m, _ in kept],
                                      "collapsed_or_unconverged_runs": len(res) - len(kept),
                                      "stationarity": [m["stat"] for m, _ in kept],
                                      "min_coi_gamma": [m["coi_min"] for m, _ in kept],
                                      "minus2H_over_Lt_mid": [m["H_mid"] for m, _ in kept],
                                      "train_mse": [m["mse"] for m, _ in kept],
                                      "sv_mid": [[round(float(s), 3) for s in m["sv_mid"][:5]] for m, _ in kept]})


@variability.falsifier("always_k_star")
def _(p):
    """The kept dimension is always the teacher's k* (no variability): refuted by the rank-1 end points."""
    res = _minima(_variability_runs(p), p.iters)
    if not res:
        return inconclusive(f"no run ended at a converged non-trivial minimum (stationarity > {STAT_MAX} or W = 0)")
    ranks = [int(round(m["coi_min"])) for m, _ in res]
    return Outcome(residual=float(max(abs(r - p.k) for r in ranks)), tolerance=0.0, values={"ranks": ranks},
                   message=f"ranks {ranks} vs k* = {p.k}")


@variability.reproduction(name="R3_k3", slow=True)
def _(p):
    """Catalogue R3, k = 3 teacher (w = 10, N = 40, L = 40, lam = 0.01, continuation to 16; 5000 L-BFGS per Lt where
    the catalogue ran 20000):
    quoted min COI_gamma 17.3, 12.9, 7.35, 2.16, 1.99, 1.91 for Lt = 1, 2, 4, 8, 12, 16 and a rank-2 bottleneck
    (middle spectrum 16.8, 14.8, 0.49, ...) at Lt = 12, i.e. one below k* = 3.  Compared: min COI at the largest
    Lt within 0.25 of an integer k_b, and |k_b - 3| <= 2 (BN2); whether k_b = 2 as quoted is reported."""
    runs = _r3_table(3, [1.0, 2.0, 4.0, 8.0, 12.0, 16.0], 5000)
    cm = [r[1]["coi_min"] for r in runs]
    kb = int(round(cm[-1]))
    # min COI within 0.25 of its integer (catalogue: 1.91 at Lt = 16, i.e. 0.09 off; 0.25 allows the unrecorded
    # teacher draw), monotone decrease in Lt up to 5% (the slack of jacot.bottleneck_hamiltonian_trend), |k_b - 3| <= 2
    fall = max([0.0] + [cm[i + 1] / cm[i] - 1 for i in range(len(cm) - 1)])
    parts = {"min COI within 0.25 of an integer": (abs(cm[-1] - kb), 0.25), "|k_b - 3| <= 2": (abs(kb - 3), 2.0),
             "min COI non-increasing (slack 5%)": (fall, 0.05)}
    return Outcome.from_parts(parts, message=f"k = 3 teacher: min COI {[round(c, 2) for c in cm]} (quoted 17.3, 12.9, "
                              f"7.35, 2.16, 1.99, 1.91); bottleneck rank {kb} (quoted 2)",
                              values={"min_coi_gamma": cm, "k_b": kb, "quoted_k_b": 2,
                                      "rank_mid": [r[1]["rank"] for r in runs],
                                      "sv_mid_last": [round(float(s), 3) for s in runs[-1][1]["sv_mid"][:5]]})


# ---------------------------------------------------------------------------
# F2 / R5, R6: step-size rules on the ResNet-teacher task (Fig. 2)
_F2_PARAMS = [
    Param.int("d", 8, 4, 40, "input/output dimension = width (teacher d -> 6 -> 3 -> d)"),
    Param.int("N", 60, 10, 1000, "training points"),
    Param.int("Ntest", 300, 10, 5000, "test points"),
    Param.int("L", 8, 4, 40, "layers"),
    Param.float("Lt", 3.0, 0.5, 20.0, "effective depth (paper: 3)"),
    Param.float("lam", 0.002, 1e-5, 1.0, "regularisation (paper: 0.002)"),
    Param.int("iters", 600, 50, 50_000, "L-BFGS iterations (adaptive: rho updated every 200)"),
    Param.int("seeds", 3, 1, 10, "teacher/data seeds 0..seeds-1"),
    Param.int("replicas", 3, 1, 10, "trainings per scheme and seed from initial weights that differ at the unit "
              "roundoff (replica 0: unperturbed); the test error of a seed is their mean"),
]


def _f2_validate(p):
    if not p.L > 1.125 * p.Lt:
        raise ParamError(f"parameters L, Lt must satisfy L > (1 + a/4) Lt with a = 0.5 (D4; got L={p.L}, Lt={p.Lt})")
    if 0.9 * p.L <= p.Lt:
        raise ParamError(f"the adaptive cap rho_l <= 0.9/Lt needs 0.9 L > Lt (got L={p.L}, Lt={p.Lt})")


def _f2_runs(d, N, Ntest, L, Lt, lam, iters, seeds, replicas=1):
    """{scheme: [run record per seed and replica]} (record: test, train, rho, seed, replica).

    Rounding ensemble: the L-BFGS end point on this task is chaotic in the rounding -- which of two basins
    a seed's adaptive training ends in (test error ~0.12 or ~0.17 for seed 0) flips with the BLAS kernel
    (OPENBLAS_CORETYPE) or with a relative 2^-52 perturbation of the initial weights.  Replica j > 0 starts
    from W0 (1 + 2^-52 xi), xi ~ N(0, 1) seeded by (seed, j): it samples the end points a different
    rounding would give, so statistics over replicas do not hinge on one rounding."""
    out = {}
    for scheme in ("equidistant", "irregular", "adaptive"):
        for s in range(seeds):
            for j in range(replicas):
                key = ("f2", d, N, Ntest, L, Lt, lam, iters, scheme, s) + ((j,) if j else ())
                if key not in _MEMO:
                    X, Y, Xt, Yt = _resnet_teacher([d, 6, 3, d], N, Ntest, s)
                    W0 = _init(d, L, Lt, s)
                    if j:
                        W0 = W0 * (1 + 2.0 ** -52 * np.random.default_rng((s, j)).standard_normal(W0.shape))
                    W, rho, _ = _fit(X, Y, Lt, L, lam, iters, scheme=scheme, seed=s, W0=W0)
                    pts = np.sum((Yt - ln.forward(Xt, W, rho, Lt)[-1]) ** 2, axis=0)
                    te = float(np.sum(pts) / Ntest)
                    tr = float(np.sum((Y - ln.forward(X, W, rho, Lt)[-1]) ** 2) / N)
                    _MEMO[key] = dict(test=te, train=tr, rho=rho, seed=s, replica=j, test_points=pts)
                out.setdefault(scheme, []).append(_MEMO[key])
    return out


adaptive_err = Claim(
    id="jacot.adaptive_test_error",
    title="Adaptive (and irregular) layer steps give a small but consistent test-error advantage over equidistant",
    label="Fig. 2, F2 (a)",
    section="4",
    equation="l.209, l.239, l.522",
    lines=(239, 239),
    statement=r"\text{test error(adaptive)},\ \text{test error(irregular)}\ \lesssim\ \text{test error(equidistant)}"
              r"\ \text{for }L\in[4,22],\ \tilde L=3",
    status="empirical",
    params=_F2_PARAMS,
    validate=_f2_validate,
    notes="Scaled-down Fig. 2 (catalogue R5 suggests width 40, N = 300 + 300 test, L in {4, 8, 12, 18, 22}, 3 seeds: "
          "the slow reproduction). Teacher: random residual maps g(x) = P(x + V relu(Ux + b)), d -> 6 -> 3 -> d. "
          "Irregular mesh a = 0.5 (the paper gives no value), renormalised (E16). Adaptive: damped rule every 200 "
          "L-BFGS iterations, rho_l Lt <= 0.9. The weak assertion (catalogue R5): the test error of adaptive "
          "<= equidistant's with a 10% allowance, decided by a 95% hierarchical bootstrap interval of the paired ratio "
          "(seeds, test points, replicas; audit issue 17: before, the point estimate was compared with 1.1 and "
          "Ntest = 10 certified on noise; now such draws are inconclusive).  Each scheme and seed is trained "
          "from `replicas` initialisations that differ at the unit roundoff (the end point is chaotic in the "
          "rounding: with one training per seed the median ratio ranged 0.71-1.09 over BLAS kernels and "
          "2^-52 perturbations); the statistic is the geometric mean over seeds of the per-seed ratio of the "
          "replica-mean test errors.",
    catalogue="jacot §2.6 F2 (a); §3 R5",
    covers=("F2", "R5"),
)


def _median_ratio(runs, scheme):
    return float(np.median([r["test"] for r in runs[scheme]]) / np.median([r["test"] for r in runs["equidistant"]]))


def _paired_ratio(runs, scheme):
    """Geometric mean over seeds of mean_replicas test(scheme) / mean_replicas test(equidistant) (paired by seed:
    the teacher's difficulty, which varies 3x between seeds, cancels)."""
    def per_seed(sch):
        acc = {}
        for r in runs[sch]:
            acc.setdefault(r["seed"], []).append(r["test"])
        return {s: float(np.mean(v)) for s, v in acc.items()}
    a, e = per_seed(scheme), per_seed("equidistant")
    return float(np.exp(np.mean([np.log(a[s] / e[s]) for s in e])))


def _ratio_interval(runs, scheme, B=2000, level=0.95):
    """Bootstrap interval of the paired log ratio T = mean_s log(m_s(scheme) / m_s(equidistant)), m_s = the
    replica-mean test error of seed s.  Statistical model: the three noise sources are resampled together,
    hierarchically -- seeds (teachers) with replacement when there are >= 2, then within a seed the test
    points (the same resampled points for every scheme and replica: the comparison is paired) and the
    replicas of each scheme (rounding chaos of the end point).  Returns (T, lo, hi) at the two-sided level."""
    def by_seed(sch):
        acc = {}
        for r in runs[sch]:
            acc.setdefault(r["seed"], []).append(r["test_points"])
        return {k: np.array(v) for k, v in acc.items()}   # seed -> (replicas, Ntest)
    a, e = by_seed(scheme), by_seed("equidistant")
    seeds = sorted(e)

    def T(sel_seeds, idx, ra, re):
        return float(np.mean([np.log(a[s][ra[k]][:, idx[k]].mean() / e[s][re[k]][:, idx[k]].mean())
                              for k, s in enumerate(sel_seeds)]))
    rng = np.random.default_rng(20240)
    n_t = e[seeds[0]].shape[1]
    full = T(seeds, [np.arange(n_t)] * len(seeds), [np.arange(len(a[s])) for s in seeds],
             [np.arange(len(e[s])) for s in seeds])
    stats = []
    for _ in range(B):
        sel = [seeds[i] for i in rng.integers(0, len(seeds), len(seeds))] if len(seeds) > 1 else seeds
        stats.append(T(sel, [rng.integers(0, n_t, n_t) for _ in sel],
                       [rng.integers(0, len(a[s]), len(a[s])) for s in sel],
                       [rng.integers(0, len(e[s]), len(e[s])) for s in sel]))
    lo, hi = np.quantile(stats, [(1 - level) / 2, (1 + level) / 2])
    return full, float(lo), float(hi)


def _ratio_decision(runs, scheme, bound, worse_is_failure=True):
    """Decide 'paired ratio <= bound' by the bootstrap interval (_ratio_interval, 95%): certified when the
    whole interval is below log(bound), refuted when it is wholly above, inconclusive when the sample
    (Ntest, seeds, replicas) cannot tell."""
    t, lo, hi = _ratio_interval(runs, scheme)
    vals = {"ratio": float(np.exp(t)), "ratio_95pct": [float(np.exp(lo)), float(np.exp(hi))]}
    if lo <= np.log(bound) < hi:
        return inconclusive(f"{scheme}/equidistant paired test-error ratio {np.exp(t):.3f}, 95% bootstrap interval "
                            f"[{np.exp(lo):.3f}, {np.exp(hi):.3f}] contains {bound}: the sample (test points, "
                            "seeds, replicas) cannot decide; raise Ntest, seeds or replicas", **vals)
    # the residual is the interval's far end on the side of the verdict, so that residual <= tolerance iff certified
    return Outcome(residual=float(np.exp(hi)) if hi < np.log(bound) else float(np.exp(lo)), tolerance=bound,
                   values=vals, message=f"{scheme}/equidistant paired test-error ratio {np.exp(t):.3f}, 95% interval "
                   f"[{np.exp(lo):.3f}, {np.exp(hi):.3f}] vs {bound}")


@adaptive_err.numeric
def _(p):
    """Test error over seeds (paired, replica means): adaptive against equidistant, decided by a bootstrap interval."""
    runs = _f2_runs(p.d, p.N, p.Ntest, p.L, p.Lt, p.lam, p.iters, p.seeds, p.replicas)
    # Statistical model (audit, issue 17: the former check compared the point estimate with 1.1, so at Ntest = 10
    # it certified on the noise of ten test points): the paired log ratio's 95% interval by the hierarchical
    # bootstrap of _ratio_interval (seeds, test points paired across schemes, replicas).  The claim, read
    # weakly as in catalogue R5 ('adaptive not worse than equidistant beyond 10%'), is certified when the whole
    # interval lies below 1.1, refuted when it lies above, inconclusive otherwise.  Noise measured before the
    # audit: point ratios 0.76-1.13 per seed, 0.905-0.991 for the paired replica means over 4 BLAS kernels.
    out = _ratio_decision(runs, "adaptive", 1.1)
    ri = _paired_ratio(runs, "irregular")
    out.values.update({s: [round(r["test"], 4) for r in v] for s, v in runs.items()} |
                      {"ratio_adaptive": _paired_ratio(runs, "adaptive"), "ratio_irregular": ri,
                       "median_ratio_adaptive": _median_ratio(runs, "adaptive"),
                       "train": {s: [round(r["train"], 4) for r in v] for s, v in runs.items()}})
    return out


@adaptive_err.falsifier("large_advantage")
def _(p):
    """A large advantage (test error of adaptive at most 0.8 x equidistant's, paired replica means): the paper
    says 'small'.  Same bootstrap decision."""
    return _ratio_decision(_f2_runs(p.d, p.N, p.Ntest, p.L, p.Lt, p.lam, p.iters, p.seeds, p.replicas),
                           "adaptive", 0.8)


@adaptive_err.reproduction(name="R5", slow=True)
def _(p):
    """Catalogue R5: width 40, N = 300 train and 300 test (here: width 30 = the teacher's d = 30 -> 6 -> 3 -> 30, N = 200
    train and 300 test, 600 L-BFGS iterations: about 4 CPU minutes), L in {4, 8, 12, 18, 22}, Lt = 3, 3 seeds.  Assert (weak, EMP) median test error
    of adaptive <= equidistant's for L >= 8 with the 10% seed-noise allowance; paper: a small consistent advantage
    and a decreasing test error in L."""
    Ls = [4, 8, 12, 18, 22]
    res = {L: _f2_runs(30, 200, 300, L, 3.0, 0.002, 600, 3) for L in Ls}
    med = {s: [float(np.median([r["test"] for r in res[L][s]])) for L in Ls] for s in ("equidistant", "irregular", "adaptive")}
    parts = {f"L={L}: adaptive/equidistant <= 1.1": (med["adaptive"][i] / med["equidistant"][i], 1.1)
             for i, L in enumerate(Ls) if L >= 8}
    # l.522: larger L improves the test error -- asserted only between the ends of the range (L = 22 vs 4)
    parts.update({f"{s}: test error L=22 < L=4": (med[s][-1] / med[s][0], 1.0) for s in med})
    return Outcome.from_parts(parts, message="R5 median test errors", values={
        "median_test": med, "plot": {"kind": "line", "x": Ls, "series": med, "xlabel": "layers L",
                                     "ylabel": "median test MSE", "title": "Fig. 2 scaled down: test error vs L"}})


adaptive_ends = Claim(
    id="jacot.adaptive_steps_ends",
    title="On trained nets the adaptive rule puts smaller steps (more layers) in the first and last layers",
    label="Fig. 2, F2 (c)",
    section="4",
    equation="l.209, l.239",
    lines=(239, 239),
    statement=r"\text{adaptive }\rho_\ell\text{ is more spread out: more steps in the first and last layers}",
    status="empirical",
    params=_F2_PARAMS,
    validate=_f2_validate,
    notes="Measured on the adaptive runs of jacot.adaptive_test_error (same cache) and, at catalogue R6's "
          "'adaptive update' level, on the trained bottleneck net of jacot.bottleneck_structure (Lt = 12), where "
          "the fast end layers carry relative increments much larger than the middle ones.",
    catalogue="jacot §2.6 F2 (c), D5; §3 R6",
    covers=("F2", "R6", "D5"),
)


@adaptive_ends.numeric
def _(p):
    """rho_1 and rho_L of the trained adaptive nets against the median step; on the Lt = 12 bottleneck net, one
    adaptive update from equidistant steps shrinks the end steps."""
    runs = _f2_runs(p.d, p.N, p.Ntest, p.L, p.Lt, p.lam, p.iters, p.seeds, p.replicas)["adaptive"]
    ends = [float(max(r["rho"][0], r["rho"][-1]) / np.median(r["rho"])) for r in runs]
    X, Y, sweep = _sweep(8, 32, 32, 2, 0.01, 1000, _schedule(12.0), 0)
    Wb = sweep[-1][2]
    rho0 = ln.equidistant(32)
    new = ln.adaptive_update(rho0, ln.forward(X, Wb, rho0, 12.0))
    bn_ends = float(max(new[0], new[-1]) / np.median(new))
    # Count-like assertions: "more steps at the ends" = the end steps are below the median step (ratio < 1)
    return Outcome.from_parts({"F2 task: max(rho_1, rho_L)/median rho < 1 (every seed and replica)": (max(ends), 1.0),
                               "bottleneck net: end steps / median after one update < 1": (bn_ends, 1.0)},
                              message=f"end/median step ratios {[round(e, 3) for e in ends]} (F2 task), "
                              f"{bn_ends:.3g} (bottleneck net)",
                              values={"end_over_median": ends, "bottleneck_end_over_median": bn_ends,
                                      "plot": {"kind": "semilogy", "x": list(range(1, 33)),
                                               "series": {"adaptive rho_l L (one update)": (new * 32).tolist(),
                                                          "equidistant": [1.0] * 32},
                                               "xlabel": "layer l", "ylabel": "rho_l L",
                                               "title": "adaptive steps on the trained bottleneck net (Lt = 12)"}})


@adaptive_ends.falsifier("equidistant_is_stationary")
def _(p):
    """The adaptive rule leaves equidistant steps (nearly) unchanged on the trained bottleneck net:
    max_l |rho_new,l L - 1| <= 0.1. Refuted: the end steps shrink to a fraction of the middle ones."""
    X, Y, sweep = _sweep(8, 32, 32, 2, 0.01, 1000, _schedule(12.0), 0)
    rho0 = ln.equidistant(32)
    new = ln.adaptive_update(rho0, ln.forward(X, sweep[-1][2], rho0, 12.0))
    dev = float(np.max(np.abs(new * 32 - 1)))
    return Outcome(residual=dev, tolerance=0.1, values={"rho_L": (new * 32).tolist()},
                   message=f"max |rho_l L - 1| = {dev:.3f} after one update")
