"""Chen §3.1 (seed lines 329-373, with the cost split of §3.2 up to l.417): cluster-separated
truncations and the per-cluster cost (catalogue chen §2.3: CS1-CS3; erratum E17).

Claims:

* ``chen.cluster_separation``     Def 3.1, (3.3)-(3.5): I^(Q)(X_l) = tau^(l)(X_l) [E17: on the images] (CS1)
* ``chen.bias_variance``          (3.6)-(3.8), (3.15): per-cluster cost and its bias-variance split (CS2, CS3)

Layer lists are in layer order [W_1, ..., W_L]; data points are columns.  Notation decisions D1-D9
are recorded in ``theorems/chen/_common.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import xp_chen as xc
from solvers.xp import on, xp_of
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.chen._common import EPS, XP, _f, _xs, separated_instance, validate_QKL


# ===========================================================================
sep = Claim(
    id="chen.cluster_separation",
    title="Cluster-separated truncations give I^(Q)(X_l) = tau^(l)(X_l)",
    label="Def 3.1, (3.3)-(3.5)",
    section="3.1",
    equation="(3.3)-(3.5)",
    lines=(339, 358),
    statement=r"\tau^{(\ell)}=\mathrm{id}\text{ on }X_{\ell'}\ (\ell'\ne\ell)\ \Rightarrow\ "
              r"\mathcal I^{(Q)}(X_\ell)=\tau^{(\ell)}(X_\ell)",
    status="gap",
    corrected=r"\tau^{(\ell')}=\mathrm{id}\text{ near }X_\ell\ (\ell'<\ell)\text{ and near }\tau^{(\ell)}(X_\ell)\ "
              r"(\ell'>\ell)\ \Rightarrow\ \mathcal I^{(Q)}(X_\ell)=\tau^{(\ell)}(X_\ell)",
    params=[Param.int("Q", 2, 1, 5, "dimension", search=(2, 4)),
            Param.int("clusters", 2, 1, 5, "clusters K <= Q", search=(1, 3)),
            Param.int("layers", 2, 1, 6, "layers L >= K", search=(1, 4)),
            Param.int("points_per_cluster", 6, 1, 40, "points per cluster", search=(1, 10)),
            Param.seed("seed")],
    validate=validate_QKL,
    notes="E17/D6: the computation (3.4) applies tau^(l') (l' > l) to the truncated image tau^(l)(X_l), so "
          "the hypothesis must hold on the images (and on neighbourhoods, so that gradients decouple).  "
          "Instances: theorems/chen/_common.separated_instance; the D6 margin is reported.",
    catalogue="chen §2.3 CS1; §4 E17",
    covers=("CS1", "E17"),
)


def _sep_on(xp, clusters, yt, betas, Rs):
    """A separated instance moved to ``xp``: (clusters, yt, betas, Rs) as lists of arrays (yt one (K, Q) array)."""
    return _xs(xp, clusters), on(xp, yt), _xs(xp, betas), _xs(xp, Rs)


@sep.numeric(backends=XP)
def sep_numeric(p):
    """Under D6 (margin > 0): I^(L)(X_l) = tau^(l)(X_l) for every cluster, and (2.26) = (3.6)."""
    clusters, yt, betas, Rs = separated_instance(p.Q, p.clusters, p.layers, p.points_per_cluster, p.seed,
                                                 distance=3.0 * p.Q, spread=0.25)
    m = cm.separation_margin(Rs, betas, clusters)       # the hypothesis D6, gated on the host
    if m <= 0:
        return inconclusive(f"the instance violates D6 (margin {m:.3g})", margin=m)
    xp = xp_of(p)
    clusters, yt, betas, Rs = _sep_on(xp, clusters, yt, betas, Rs)
    e = max(_f(xc.max_abs(xc.compose(Rs, betas, X) - xc.tau(Rs[j], betas[j], X))) for j, X in enumerate(clusters))
    dc = abs(_f(xc.cost_composed(Rs, betas, clusters, yt)) - _f(xc.cost_separated(Rs, betas, clusters, yt)))
    sc = 16 * p.Q * p.layers * EPS * (1 + 3.0 * p.Q * 2)
    return Outcome.from_parts({"composition_3_5": (e, sc), "cost_3_6": (dc, sc * 10 * p.Q)},
                              message=f"D6 margin {m:.3g}", values={"margin": m})


sep.property(over=("Q", "clusters", "layers", "points_per_cluster", "seed"), max_examples=10)


@sep.falsifier("stated")
def sep_stated(p):
    """Literal Def 3.1 (catalogue E17): Q = 2, R_1 = I, R_2 = -I, beta_1 = 0, beta_2 = (.5,.5), X_1 = (-1,-1),
    X_2 = (3,3): tau^(1) = id on X_2 and tau^(2) = id on X_1, yet I^(2)(X_1) = (-.5,-.5) != tau^(1)(X_1) = (0,0)."""
    Rs = [np.eye(2), -np.eye(2)]
    betas = [np.zeros(2), np.array([0.5, 0.5])]
    X1, X2 = np.array([[-1.0], [-1.0]]), np.array([[3.0], [3.0]])
    lit = (np.max(np.abs(cm.tau(Rs[0], betas[0], X2) - X2)) == 0 and np.max(np.abs(cm.tau(Rs[1], betas[1], X1) - X1)) == 0)
    if not lit:
        return inconclusive("the literal hypothesis does not hold on this example")
    res = float(np.max(np.abs(cm.compose(Rs, betas, X1) - cm.tau(Rs[0], betas[0], X1))))
    return Outcome(residual=res, tolerance=8 * EPS, values={"I2_X1": cm.compose(Rs, betas, X1).ravel().tolist(),
                                                            "tau1_X1": cm.tau(Rs[0], betas[0], X1).ravel().tolist(),
                                                            "D6_margin": cm.separation_margin(Rs, betas, [X1, X2])},
                   message="literal Def 3.1 holds but (3.5) fails")


# ===========================================================================
bv = Claim(
    id="chen.bias_variance",
    title="Per-cluster cost (3.6)/(3.15) and its bias-variance split (3.7)",
    label="(3.6)-(3.8), (3.15)",
    section="3.1-3.2",
    equation="(3.6)-(3.8), (3.14)-(3.15)",
    lines=(360, 417),
    statement=r"\mathcal C_N=\tfrac12\sum_\ell\tfrac1{N_\ell}\mathrm{Tr}|\Delta\tau^{(\ell)}(X_\ell)|^2"
              r"+\tfrac12\sum_\ell|\overline{\tau^{(\ell)}}-\tilde y_\ell|^2=\tfrac12\sum_\ell\int\mu_\ell|\tau^{(\ell)}-\tilde y_\ell|^2",
    status="holds",
    params=sep.params,
    validate=sep.validator,
    notes="CS2/CS3.  The printed second sum of (3.7) runs over j with summand indexed by l (typo).  Tolerance "
          "(issue-19 audit 2): first-order rounding of both sides from the computed sums (Higham gamma_n; the cross "
          "term survives only through the rounding of the cluster mean), replacing 64 Q eps (1 + C)(1 + 6Q)^2: "
          "tolerance/residual at the defaults 1.6e4 -> 185; worst residual/tolerance over 160 sweep draws (seeds 11, 12) "
          "1/117; 'bias_only' still refuted (0.019 against 7.2e-14).",
    catalogue="chen §2.3 CS2, CS3",
    covers=("CS2", "CS3"),
)


def _bv_outcome(p, with_variance=True):
    clusters, yt, betas, Rs = separated_instance(p.Q, p.clusters, p.layers, p.points_per_cluster, p.seed,
                                                 distance=3.0 * p.Q, spread=0.25)
    xp = xp_of(p)
    clusters, yt, betas, Rs = _sep_on(xp, clusters, yt, betas, Rs)
    c36 = _f(xc.cost_separated(Rs, betas, clusters, yt))
    split, scale = 0.0, 0.0
    for j, X in enumerate(clusters):
        T = xc.tau(Rs[j], betas[j], X)
        mean = xp.mean(T, axis=1)
        var = 0.5 / X.shape[1] * _f(xp.sum((T - xc.col(mean)) ** 2))
        bias = 0.5 * _f(xp.sum((mean - yt[j, ...]) ** 2))
        if with_variance:
            split += var
        split += bias
        # the cross term mean_i (T_i - m).(m - yt) is 0 exactly and only the rounding dm <= gamma_N max|T| of the
        # computed mean m survives it: 2 |dm| |m - yt|; each sum of squares errs by gamma_{Q+N} of its value
        n_j = X.shape[1]
        scale += (p.Q + n_j) * (var + bias) + 2 * n_j * _f(xc.max_abs(T)) * float(np.sqrt(2 * bias))
    # error model: first-order rounding of both sides (Higham gamma_n ~ n eps); (3.6)'s own sum errs by
    # (Q + N) eps c36; tau's solve errs by ~Q eps cond(R) |T| = Q eps |T| (R orthogonal), entering both sides alike
    sc = 4 * EPS * (scale + (p.Q + sum(X.shape[1] for X in clusters)) * c36)
    return Outcome(residual=abs(c36 - split), tolerance=sc, values={"cost": c36, "split": split},
                   message=f"(3.6) {c36:.8g} vs split {split:.8g}")


@bv.numeric(backends=XP)
def bv_numeric(p):
    """(3.6) vs variance + bias terms (3.7)."""
    return _bv_outcome(p)


bv.property(over=("Q", "clusters", "points_per_cluster", "seed"), max_examples=10)


@bv.falsifier("bias_only", search=("seed",))
def bv_bias_only(p):
    """Dropping the variance term: wrong as soon as a truncated cluster has spread."""
    return _bv_outcome(p, with_variance=False)
