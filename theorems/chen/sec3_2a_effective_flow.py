"""Chen §3.2 (seed lines 374-482; proof in §6, lines 867-1027): Theorem 3.2, the effective gradient flow
of cumulative biases and rotations, integrated beside the direct gradient flow it claims to describe
(catalogue chen §2.4: T1-T4, T8; erratum E1).

Claims:

* ``chen.effective_flow``       Thm 3.2 (3.19)+(3.21)+(3.22): the effective flow integrated beside the
                                direct gradient flow of the composed cost (2.26) on R^Q x O(Q) [E1]
* ``chen.well_posedness``       the discontinuous (Filippov) field; existence/uniqueness not addressed (T8, gap)

Flow comparisons (``chen.effective_flow``): both flows are integrated by the same Cayley-RKMK RK4
(solvers/orthogonal.py, R stays on O(Q) to rounding) with the same step, so if the two right-hand
sides agree the two discrete trajectories coincide up to rounding: the residual measures only
rounding amplified by the flow, never integrator error.

Notation decisions D1-D9: see ``theorems/chen/_common.py``; the metric on O(Q) (D2), layer coordinates and
the corrected generator (E1): see ``theorems/chen/_pointwise.py``.
"""
from __future__ import annotations

import numpy as np

from solvers import chen as cm
from solvers import orthogonal
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.chen._common import EPS, rng_for, separated_instance, validate_QKL


# ===========================================================================
# chen.effective_flow (headline)
# Work limits of the flow comparison (issue-19 audit: a sweep draw Q=4, K=3, L=5, N=40, T=6.1, h=0.0017,
# 3588 steps, ran > 60 s; the old cap of 20000 steps let Q=K=5, L=6, N=40 run 76 CPU s on the Numba kernels).
# The comparison resolves whether the two right-hand sides agree along a discrete trajectory; the step only
# sets where the fields are sampled, and the rounding tolerance grows with n, so steps past a few thousand
# test nothing more.  Measured costs: NumPy reference ~2 ms per step (Python overhead per layer and cluster),
# Numba ~3 us per step x point x layer (direct pass, four stages, plus the amplification run).  The limits
# keep the worst legal draw near 6 CPU s on either backend (under a minute on a loaded shared machine).
MAX_STEPS = 2000
MAX_WORK = 1.2e6     # steps x data points x layers


def _validate_flow(p):
    validate_QKL(p)
    n = max(1, int(round(p.T / p.h)))
    if n > MAX_STEPS:
        raise ParamError(f"T/h = {n} steps exceeds {MAX_STEPS}; increase h or reduce T (the comparison tests "
                         "agreement of the two fields, more steps only add rounding)")
    work = n * p.clusters * p.points_per_cluster * p.layers
    if work > MAX_WORK:
        raise ParamError(f"T/h x points x layers = {n} x {p.clusters * p.points_per_cluster} x {p.layers} = "
                         f"{work:.3g} exceeds {MAX_WORK:.3g}; increase h, reduce T, points_per_cluster or layers")


flow = Claim(
    id="chen.effective_flow",
    title="Effective gradient flow of cumulative biases and rotations (Theorem 3.2) vs the direct gradient flow",
    label="Thm 3.2",
    section="3.2, 6",
    equation="(3.19), (3.21)-(3.23)",
    lines=(421, 473),
    statement=r"\partial_s\beta^{(\ell)}=-R_\ell^TJ_0^{(\ell)\perp}R_\ell(\beta^{(\ell)}+\tilde y_\ell),\quad "
              r"\partial_sR_\ell=\Omega_\ell R_\ell,\quad \Omega_\ell=-\pi_-((\partial_{R_\ell}\mathcal C_N)R_\ell^T)"
              r"=\int_{\mathbb R^Q\setminus(\mathbb R^Q_+\cup\mathbb R^Q_-)}dx\,\mu_\ell(a^{-1}_{R_\ell,\beta^{(\ell)}}(x))"
              r"[H(x),M^{(\ell)}(x)],\ M^{(\ell)}=\tfrac12(xv^T+vx^T),\ v=R_\ell(\beta^{(\ell)}+\tilde y_\ell)",
    status="erratum",
    corrected=r"\Omega_\ell=\int dx\,\mu_\ell(a^{-1}(x))\,[H(x),M^{(\ell)}(x)-\tfrac12xx^T]"
              r"=-\int dx\,\mu_\ell(a^{-1}(x))\,[H(x),\tfrac12(rx^T+xr^T)],\ r=\sigma(x)-v"
              r"\quad\text{(the } \beta\text{-equation (3.19) is exact)}",
    params=[
        Param.int("Q", 2, 2, 5, "dimension of input and hidden layers", search=(2, 4)),
        Param.int("clusters", 2, 1, 5, "number of clusters K (<= Q, <= layers); cluster l is truncated by layer l",
                  search=(1, 3)),
        Param.int("points_per_cluster", 8, 1, 40, "points N_l per cluster", search=(2, 12)),
        Param.int("layers", 2, 1, 6, "number of hidden layers L (>= clusters; layers past K are idle)",
                  search=(1, 4)),
        Param.float("T", 2.0, 0.0, 10.0, "time horizon", low_open=True),
        Param.float("h", 5e-3, 0.0, 0.05, "step of the Cayley-RKMK RK4 integrator", low_open=True),
        Param.seed("seed of the data, targets and initial parameters"),
        Param.float("spread", 0.25, 0.01, 1.0, "standard deviation of each cluster around its centre"),
        Param.float("target", 0.4, 0.0, 2.0, "distance of the target yt_l from the cluster centre"),
    ],
    validate=_validate_flow,
    notes="D2: Frobenius metric, R' = Omega R.  D4: yt fixed data.  D6: cluster separation is checked along "
          "both trajectories (every step); where it is lost the flows are compared on the prefix before it (one "
          "step dropped; issue-19 audit, was inconclusive: 8/20 sweep draws), inconclusive if that is < 20 steps.  "
          "The direct "
          "flow differentiates the composed cost (2.26) written through the network (tau = W^{-1}(sigma(Wx+b)-b), "
          "W general, evaluated at W = R) by the chain rule and projects onto T_R O(Q) = o(Q) R; nothing of "
          "Thm 3.2 is used.  Instance: cluster l centred at 3Q e_l, apex -beta_l near its centre (every sector "
          "occupied), frame R_l mapping the other clusters into the open positive orthant; idle layers have "
          "apex far below all data.  Range (issue-19 audit): at most 2000 steps and steps x points x layers <= 1.2e6 "
          "(was 20000 steps; a 3588-step draw ran past the sweep's 60 s); the comparison tests agreement of "
          "the two fields along the discrete trajectory, so finer steps add only rounding.  Falsifier 'stated' = printed (3.22); 'sign_4_1' = (1.14)/(4.1) "
          "R' = -Omega R (E3, documented here; the §4 claims are another module's).",
    catalogue="chen §2.4 T1-T4, §3 R0, §4 E1 (E3)",
    covers=("T1", "T2", "T3", "T4", "E1", "R0"),
)


def flow_instance(p):
    """(clusters, yt, betas0, Rs0) for the flow parameters."""
    return separated_instance(p.Q, p.clusters, p.layers, p.points_per_cluster, p.seed, spread=p.spread,
                              distance=3.0 * p.Q, target=p.target, tilt=0.05)


def _margins(ys, Rss, clusters):
    return np.array([cm.separation_margin(list(Rss[i]), cm.unpack_state(ys[i], Rss[i])[0], clusters)
                     for i in range(len(ys))])


def _amplification(betas, Rs, clusters, yt, h, n, ref, delta=1e-7, seed=12345):
    """Measured Lipschitz growth of the direct flow: max_t |traj(x0 + delta e) - traj(x0)| / delta for a
    random unit perturbation e of (beta, R) (R perturbed along o(Q), so it stays on O(Q))."""
    rng = rng_for(seed)
    e_b = [rng.standard_normal(b.shape) for b in betas]
    e_R = [orthogonal.skew(rng.standard_normal(R.shape)) for R in Rs]
    nrm = np.sqrt(sum(np.sum(x * x) for x in e_b + e_R))
    b1 = [b + delta * e / nrm for b, e in zip(betas, e_b)]
    R1 = [orthogonal.cayley(delta * e / nrm) @ R for R, e in zip(Rs, e_R)]
    ys, Rss = cm.integrate("direct", b1, R1, clusters, yt, h, n, backend="numba")
    d = max(np.max(np.abs(ys - ref[0])), np.max(np.abs(Rss - ref[1])))
    return max(1.0, d / delta)


def _compare(p, kind, sign=1.0, engine="numba", keep=None):
    """Integrate the effective flow ``kind`` and the direct flow; deviations, error model, values.
    ``keep`` (a dict) receives the direct trajectory, so a caller need not integrate it again."""
    clusters, yt, betas, Rs = flow_instance(p)
    n = max(1, int(round(p.T / p.h)))
    h = p.T / n
    m0 = cm.separation_margin(Rs, betas, clusters)
    if m0 <= 0:
        return inconclusive(f"cluster separation (D6) fails at s=0 (margin {m0:.3g}); try another seed",
                            margin=m0)
    backend = engine
    direct = cm.integrate("direct", betas, Rs, clusters, yt, h, n, backend=backend)
    if keep is not None:
        keep["direct"] = direct
    eff = cm.integrate(kind, betas, Rs, clusters, yt, h, n, backend=backend, sign=sign)
    # D6 along both trajectories: the effective flow may leave separation first (then its field is no longer
    # the direct one's even though the direct state is still separated)
    margins = np.minimum(_margins(*direct, clusters), _margins(*eff, clusters))
    lost_at = None
    if margins.min() <= 0:
        # Thm 3.2 holds while the clusters stay separated (D6): compare on the prefix before the first grid
        # state (of either flow) without separation, one step dropped (the last step's stages may already
        # straddle the loss).
        # Issue-19 audit: was inconclusive on every such draw (8/20 of the sweep, loss at s = 0.43-5.3).
        i = int(np.argmin(margins > 0))
        if i - 1 < 20:
            return inconclusive(f"cluster separation (D6) lost along the flows at s={i * h:.3f}, before 20 "
                                "steps; the hypothesis of Thm 3.2 fails (reduce T, spread or tilt; other seed)",
                                min_margin=float(margins.min()))
        lost_at = i * h
        n = i - 1
        direct = (direct[0][:n + 1], direct[1][:n + 1])
        eff = (eff[0][:n + 1], eff[1][:n + 1])
        margins = margins[:n + 1]
        if keep is not None:
            keep["direct"] = direct
    K, Q = p.clusters, p.Q
    dy = np.abs(eff[0] - direct[0])
    dR = np.abs(eff[1] - direct[1]).reshape(n + 1, -1)
    bias_dev_t, rot_dev_t = dy.max(axis=1), dR.max(axis=1)
    bias_dev, rot_dev = float(bias_dev_t.max()), float(rot_dev_t.max())
    costs_d = [cm.cost_composed(list(direct[1][i]), cm.unpack_state(direct[0][i], direct[1][i])[0], clusters, yt)
               for i in range(0, n + 1, max(1, n // 100))]
    costs_e = [cm.cost_composed(list(eff[1][i]), cm.unpack_state(eff[0][i], eff[1][i])[0], clusters, yt)
               for i in range(0, n + 1, max(1, n // 100))]
    # Error model (issue-24 phase 2; was tol = n * 64 Q eps S G, which charged every step a field's rounding at
    # the size of the state, without the factor h that multiplies the field in the update: 1.8e5 x the residual
    # at the defaults, 2e4-7e7 x over the 20 draws of sweep seed 31337).  Both runs use the same integrator on
    # the same grid; if the two fields are the same function they differ only because they are computed by
    # different formulas, and per step the states can then differ by
    #   (i)  h x the rounding difference of the two fields.  Each field entry is a mean over points of products
    #        of a layer coordinate (size <= S) and a residual r = tau(x) - yt (effective (3.19)/E1), or of a
    #        back-propagated residual and a forward state (direct): <= 64 Q eps S (1 + r_max) (64: four RK
    #        stages x a few products of length Q).  r_max = sqrt(2 N_l max_s C) bounds every point's residual
    #        (1/(2 N_l)|r|^2 <= C; max over the sampled direct trajectory, a gradient flow: C(0) up to rounding);
    #   (ii) the update y + h k, cay(h A) R itself: where the two k (A) differ by (i), the two roundings may land
    #        on neighbouring doubles, <= 2 Q eps S per step.
    # A difference made at one step reaches the end amplified by at most G (measured).  Over n steps, n h = T:
    #   tol = G (T 64 Q eps S (1 + r_max) + n 2 Q eps S).
    # Why the residual stays far below it (~1e3-1e5 x): (i) is mostly below half an ulp of the state, so the two
    # trajectories stay bitwise equal and differ only by isolated last-bit flips that do not accumulate (over
    # those 20 draws the residual is <= 0.4 eps S for n = 12-1370 steps); (ii) counts a flip at every step, all of
    # one sign -- a worst case, which a bound must allow.
    G = _amplification(betas, Rs, clusters, yt, h, n, direct)
    X = np.concatenate(clusters, axis=1)
    S = 1.0 + max(np.max(np.abs(direct[0])), 1.0) + float(np.max(np.abs(X)))
    r_max = float(np.sqrt(2 * p.points_per_cluster * max(costs_d)))
    tol_field, tol_update = G * n * h * 64 * Q * EPS * S * (1 + r_max), G * n * 2 * Q * EPS * S
    tol = tol_field + tol_update
    ts = [i * h for i in range(0, n + 1, max(1, n // 100))]
    step = max(1, n // 100)
    values = {
        "bias_deviation": bias_dev, "rotation_deviation": rot_dev,
        "orthogonality_defect": max(orthogonal.orthogonality_defect(direct[1]),
                                    orthogonal.orthogonality_defect(eff[1])),
        "amplification_G": G, "scale_S": S, "residual_bound_r_max": r_max, "tolerance_field_part": tol_field,
        "tolerance_update_part": tol_update, "residual_in_eps_S": max(bias_dev, rot_dev) / (EPS * S), "n_steps": n, "h": h, "backend": backend,
        "min_separation_margin": float(margins.min()), "separation_lost_at": lost_at, "compared_until": n * h,
        "cost_direct": [costs_d[0], costs_d[-1]], "cost_effective": [costs_e[0], costs_e[-1]],
        "max_cost_increase_direct": float(max(0.0, np.max(np.diff(costs_d)))),
        "J0perp_initial": [cm.j0perp(Rs[j], betas[j], clusters[j]).tolist() for j in range(K)],
        "plot": {"kind": "semilogy", "x": ts,
                 "series": {"|beta_eff - beta_direct|": [max(float(v), 1e-17) for v in bias_dev_t[::step]],
                            "|R_eff - R_direct|": [max(float(v), 1e-17) for v in rot_dev_t[::step]],
                            "cost (direct)": costs_d},
                 "xlabel": "s", "ylabel": "max deviation / cost",
                 "title": f"{kind} effective flow vs direct gradient flow (Q={Q}, K={K}, L={p.layers})"},
    }
    return Outcome(residual=max(bias_dev, rot_dev), tolerance=tol, values=values,
                   message=f"{kind} effective flow vs direct gradient flow over s in [0, {n * h:.4g}] ({n} Cayley-RK4 "
                           f"steps): max |d beta| = {bias_dev:.2e}, max |d R| = {rot_dev:.2e} (tolerance "
                           f"{tol:.1e} = field and update rounding x measured growth G = {G:.2g})")


@flow.numeric(backends=("numpy", "numba"))
def flow_numeric(p):
    """Corrected effective flow (3.19)+(3.21)+E1 vs the direct gradient flow: they coincide to rounding."""
    return _compare(p, "corrected", engine=p.backend)


@flow.property_check(over=("Q", "clusters", "layers", "points_per_cluster", "seed"), max_examples=8,
                     fixed={"T": 1.0, "h": 5e-3})
def flow_property(p):
    """The numeric check (Numba kernels) on Hypothesis draws of the instance shape and seed."""
    return _compare(p, "corrected")


@flow.falsifier({
    "stated": "The printed generator (3.22): the rotations drift away from the direct gradient flow.",
    "sign_4_1": "(1.14)/(4.1) write R' = -Omega R (E3): with the corrected Omega the flow leaves the gradient flow.",
}, search=("seed",))
def _(p, variant):
    keep = {}
    out = _compare(p, keep=keep,
                   **{"stated": dict(kind="stated"), "sign_4_1": dict(kind="corrected", sign=-1.0)}[variant])
    if out.decide() != "certified":
        return out
    # A variant that certifies is decided only where it differs from the corrected field: the printed (3.22)
    # differs by (1/2)[H, xx^T] and the sign variant by 2 Omega, both sums over points in off-diagonal
    # sectors.  Where that difference, integrated over [0, T] along the direct trajectory, is below the
    # tolerance the instance cannot discriminate (e.g. one point per cluster outside every off-diagonal
    # sector): inconclusive, not a failed falsifier.
    clusters, yt, _, _ = flow_instance(p)
    n = max(1, int(round(p.T / p.h)))
    ys, Rss = keep["direct"]          # the direct trajectory _compare compared (same engine and step)
    n = len(ys) - 1
    disc = 0.0
    for i in range(0, n + 1, max(1, n // 50)):
        bs_i, Rs_i = cm.unpack_state(ys[i], Rss[i])
        for j in range(p.clusters):
            co = cm.omega_corrected(Rs_i[j], bs_i[j], clusters[j], yt[j])
            d = (cm.omega_stated(Rs_i[j], bs_i[j], clusters[j], yt[j]) - co) if variant == "stated" else 2 * co
            disc = max(disc, float(np.max(np.abs(d))))
    if disc * out.values["compared_until"] <= out.tolerance:
        return inconclusive(f"the instance does not discriminate: the {variant} field differs from the corrected "
                            f"one by at most {disc:.1e} along the trajectory (no off-diagonal mass)",
                            field_difference=disc, **out.values)
    out.values["field_difference"] = disc
    return out


@flow.reproduction()
def flow_reproduction(p):
    """Catalogue R0/R4 (traj.py, Q=2, N=8, T=8): printed flow drifts by max|dR| = 0.181 from the direct flow,
    corrected agrees to 1.1e-14.  Own instance with the catalogue's Q, N, T, spread and target (the catalogue's
    generator and seed are not kept), so its drift cannot be matched digit for digit: over seeds 0-5 this
    construction drifts by 0.034-0.48 (0.237 at the default seed).  Asserted: stated drift within a factor 2 of
    0.181 (log10 gap <= 0.3; was a factor 10 before the issue-19 audit), corrected <= 1e-12."""
    p = flow.resolve({"Q": 2, "clusters": 1, "layers": 1, "points_per_cluster": 8, "T": 8.0, "h": 4e-3,
                      "spread": 0.35, "target": 0.5})
    st, co = _compare(p, "stated"), _compare(p, "corrected")
    if st.decide() == "inconclusive" or co.decide() == "inconclusive":
        return inconclusive("separation lost", stated=st.message, corrected=co.message)
    drift = st.values["rotation_deviation"]
    agree = max(co.values["rotation_deviation"], co.values["bias_deviation"])
    return Outcome.from_parts({"stated_drift_order": (abs(np.log10(drift / 0.181)), np.log10(2.0)),
                               "corrected_agreement": (agree, 1e-12)},
                              message=f"stated drift {drift:.3g} (catalogue 0.181), corrected {agree:.2e} "
                                      f"(catalogue 1.1e-14)",
                              values={"stated_rotation_drift": drift, "corrected_deviation": agree,
                                      "catalogue": {"stated": 0.181, "corrected": 1.1e-14}})


# ===========================================================================
# T8: registered without a numeric check


Claim(
    id="chen.well_posedness",
    title="Well-posedness of the discontinuous effective flow (not addressed)",
    label="Thm 3.2 (implicit)",
    section="3.2",
    lines=(421, 473),
    statement=r"\text{(3.19), (3.21) define a flow}",
    status="gap",
    corrected=r"\text{the field jumps when a data point crosses a sector wall (a Filippov system); existence and "
              r"uniqueness need a transversality condition at the walls, not stated}",
    notes="No sliding mode appeared in any run (catalogue T8).  The suite integrates with a fixed step and "
          "compares flows that use the same integrator (chen.effective_flow), so the comparison is exact even "
          "across wall crossings; for exact event times an error budget ~h is used (another module).",
    catalogue="chen §2.4 T8",
    covers=("T8",),
)
