"""App. C.1 Alternative Dynamics (seed l.581-594, Eq 51, Fig 11), C.2 Loss Curves for Varying Architectures
(l.596-603, Fig 12) and C.5 Adam Optimizer (l.623-633, Fig 15).
Claims: ``vanrossem.eq51_alternatives``, ``vanrossem.loss_curve_third_constant``, ``vanrossem.adam_dynamics``.

Networks and the effective theory along their records: :mod:`theorems.vanrossem._networks` (its conventions).
"""
from __future__ import annotations

import math

import numpy as np

from theorems.claim import Claim, Outcome, inconclusive
from theorems.vanrossem._networks import (EPS_, FIG2_RANGES, VARIANTS, Y1, _converged, _not_converged, _transition,
                                          _validate_net,
                                          eq10_prediction, fig2_params, fitted, network, over_budget, scoped_params,
                                          theory_uvw,
                                          uvw_plot)


# ===========================================================================
# U3 + E10: the Eq 51 alternatives (C.1)
alt = Claim(
    id="vanrossem.eq51_alternatives",
    title="Four altered versions of Eq 7 fit the network dynamics worse (C.1, Eq 51): not reproduced",
    label="Eq 51, Fig 11",
    section="C.1",
    equation="(51)",
    lines=(583, 594),
    statement=r"\text{Adding a factor two, a square, removing a minus sign or removing a term in Eq 7 increases the "
              r"Eq 49 fit loss from 0.92 to 15.35, 16.61, 2.99 and 5.64 (l.589): the good fit is due to the form of "
              r"Eq 7, not to two degrees of freedom.}",
    status="empirical",
    # scope: the Narrow row at its own size (Fig 11's Default row at 20 x 500 is the slow reproduction)
    params=scoped_params(("Narrow",), FIG2_RANGES | {"dx": (0.45, 0.55, 0.5), "dy": (0.9, 1.0, 1.0)},
                         drop=("hidden", "gain", "lr", "optimizer", "batch_size", "units")),
    validate=_validate_net,
    notes="Scope: the Table 1 'Narrow' row at its own size (20 x 50, its gain and rate), the 20-layer leaky-ReLU "
          "small-initialisation row a check trains at Table 1 size (Fig 11's Default row, 20 x 500, is the slow "
          "reproduction; at 58-87 units it did not learn the data on 2 of 7 draws, sweep 1234: not a Table 1 "
          "network), full-batch GD, 6000-12000 epochs, the B.1 two-point data within 10% (dx in [0.45, 0.55], dy in "
          "[0.9, 1]: Fig 11's data). Finding: away from it the printed ranking can hold -- sweep 4321 draw 7 (dx = "
          "1.44, dy = 0.71) gave every alteration >= 3.99 x Eq 7's cost -- so the non-reproduction is specific to the "
          "paper's own data distances in our conventions. "
          "Variants read from the colour-coded LaTeX at l.587 (catalogue U3): factor2 (v' = -2w(...)), square "
          "(u' = -(a/tau_h) w^2), plus (+a/(2 tau_h)(v+w)w/u in w'), noterm (drop (a/tau_h)v/u in v'); each fitted by "
          "the same Eq 49 procedure (grid + Nelder-Mead, (u,v,w) form with a u>0 guard; Eq 7 itself in lifted form). "
          "NOT REPRODUCED (catalogue E10): in our conventions (full-batch GD, PyTorch MSELoss, float64) some "
          "alteration "
          "fits at least as well as Eq 7 -- factor2/plus on shallow and linear nets, square on deep small-init nets. "
          "The numeric check certifies the negation of the printed ranking: some alteration's Eq 49 cost is within "
          "2.99/0.92 = 3.25 of Eq 7's (audit: it asserted 'at least as well', ratio <= 1, which sweep 1234 refuted at "
          "1.22 on a Default-row draw where the printed ranking fails too); the falsifier 'paper_ranking' encodes the printed "
          "ranking (every alteration >= 2.99/0.92 = 3.25 times worse) and is refuted. Possibly convention-dependent "
          "(D1-D3), so the status stays empirical rather than erratum.",
    catalogue="vanrossem §2.5 U3, §3 R4, §4 E10",
    covers=("U3", "E10", "R4"),
)


def _alt_costs(p):
    rec, H, cu, c = network(p)
    b = p.dy ** 2
    if not _converged(cu, b):
        return None, cu, c
    return {k: fitted(p, k) for k in VARIANTS}, cu, c


@alt.numeric
def _(p):
    """Fit Eq 7 and the four Eq 51 alterations; certified when some alteration fits within the paper's smallest
    printed factor (2.99/0.92 = 3.25) of Eq 7 (residual = min alteration cost / Eq 7 cost, tolerance 3.25): the
    negation of the printed ranking, which the falsifier 'paper_ranking' asserts through the same fits."""
    fits, cu, c = _alt_costs(p)
    if fits is None:
        return _not_converged(cu, p.dy ** 2, c)
    ratios = {k: fits[k]["cost"] / fits["eq7"]["cost"] for k in VARIANTS[1:]}
    best = min(ratios, key=ratios.get)
    values = {"fit_costs": {k: fits[k]["cost"] for k in VARIANTS}, "ratios_to_eq7": ratios,
              "fitted_taus": {k: (fits[k]["tau_h"], fits[k]["tau_y"]) for k in VARIANTS},
              "paper_ratios_to_eq7": {"factor2": 15.35 / 0.92, "square": 16.61 / 0.92, "plus": 2.99 / 0.92,
                                      "noterm": 5.64 / 0.92},
              "ranking": sorted(fits, key=lambda k: fits[k]["cost"])}
    return Outcome(residual=ratios[best], tolerance=2.99 / 0.92, values=values,
                   message=f"best alteration {best!r}: Eq 49 cost ratio {ratios[best]:.3g} to Eq 7 "
                           "(paper: all >= 3.25)")


@alt.falsifier("paper_ranking")
def _(p):
    """The printed ranking: every alteration's Eq 49 loss is at least 2.99/0.92 = 3.25 times Eq 7's."""
    fits, cu, c = _alt_costs(p)
    if fits is None:
        return _not_converged(cu, p.dy ** 2, c)
    ratios = {k: fits[k]["cost"] / fits["eq7"]["cost"] for k in VARIANTS[1:]}
    need = 2.99 / 0.92
    return Outcome(residual=max(0.0, need - min(ratios.values())), tolerance=0.0,
                   values={"ratios_to_eq7": ratios, "required_ratio": need},
                   message=f"smallest alteration/Eq 7 cost ratio {min(ratios.values()):.3g} vs the paper's "
                           f">= {need:.3g}")


@alt.reproduction(slow=True)
def _(p):
    """Default row (20 x 500, ~1-2 min): the catalogue's U3 table found 'square' best (20.2 vs 185.7 for Eq 7);
    check the measured outcome (some alteration fits at least as well as Eq 7) and report the five costs."""
    from theorems.claim import Params
    p = Params({x.name: x.default for x in alt.params}).replace(config="Default", units=0, record_every=10)
    fits, cu, c = _alt_costs(p)
    if fits is None:
        return _not_converged(cu, p.dy ** 2, c)
    r = min(fits[k]["cost"] for k in VARIANTS[1:]) / fits["eq7"]["cost"]
    return Outcome(residual=r, tolerance=1.0, values={"fit_costs": {k: fits[k]["cost"] for k in VARIANTS},
                                                      "catalogue_costs": {"eq7": 185.7, "factor2": 113.8,
                                                                          "square": 20.2, "plus": 117.3,
                                                                          "noterm": 282.1}},
                   message="Default 20x500: best alteration / Eq 7 Eq 49 cost")


# ===========================================================================
# U4: the loss curve with a third constant tau_ybar (C.2, Fig 12)
def _loss_theory(t, ut_v_w, b, ymean, ybar0, tau_ybar):
    """Eq 9 for two points, scalar output (Eq 1 loss): ``L = (ybar - ymean)^2 / 2 + (2 w - v + b) / 8`` with Eq 18
    ``ybar - ymean = (ybar0 - ymean) exp(-t / tau_ybar)``."""
    _, v, w = ut_v_w
    return 0.5 * ((ybar0 - ymean) * np.exp(-t / tau_ybar)) ** 2 + (2 * w - v + b) / 8


loss = Claim(
    id="vanrossem.loss_curve_third_constant",
    title="The training loss follows Eq 9 with one more fitted constant tau_ybar (C.2, Fig 12)",
    label="Fig 12, Eq 9, Eq 18",
    section="C.2",
    equation="(9), (18)",
    lines=(598, 603),
    statement=r"\text{Using the fitted } \tau_h,\tau_y \text{, the loss expression Eq 9 fits the training loss after "
              r"fitting one more constant } 1/\tau_{\bar y}\ \text{(l.598-603)}",
    status="empirical",
    # scope: Fig 12's networks, the Fig 2 rows with their own gain, rate and depth (fig2_params)
    params=fig2_params(),
    validate=_validate_net,
    notes="Scope: fig2_params (Fig 12 shows the Fig 2 architectures): the Fig 2 rows of Table 1 with their own "
          "gain, rate and depth, width 50-100, 6000-12000 epochs, dx in [0.5, 1.5], dy in [0.25, 1]. Two parts. (i) Exact (rounding): for two points and scalar output the Eq 1 loss of the network equals "
          "(ybar - ymean)^2/2 + (2w - v + b)/8 at every recorded epoch (tolerance 64 eps max(L, b)). (ii) Empirical: "
          "with (tau_h, tau_y) from the Eq 49 fit, tau_ybar minimising the integrated squared loss error (bounded "
          "scalar search on log tau_ybar) leaves at most 10% of the loss curve's variation unexplained. Catalogue R9: "
          "ybar is not exactly exponential in networks (1/e time 33-66 epochs).",
    catalogue="vanrossem §2.5 U4, §3 R9",
    covers=("U4",),
)


@loss.numeric
def _(p):
    """Loss identity to rounding; fitted tau_ybar and the unexplained fraction of the loss curve."""
    from scipy.optimize import minimize_scalar
    rec, H, cu, c = network(p)
    a, b = p.dx ** 2, p.dy ** 2
    if not _converged(cu, b):
        return _not_converged(cu, b, c)
    ymean = Y1 + p.dy / 2
    ident = np.max(np.abs(cu["loss"] - (0.5 * (cu["ybar"] - ymean) ** 2 + (2 * cu["w"] - cu["v"] + b) / 8)))
    f = fitted(p)
    t = cu["t"]
    th = theory_uvw(cu["u"][0], cu["v"][0], cu["w"][0], t, a, b, f["tau_h"], f["tau_y"])[:3]
    dt = np.gradient(t)

    def cost(x):
        return float(np.sum((cu["loss"] - _loss_theory(t, th, b, ymean, cu["ybar"][0], math.exp(x))) ** 2 * dt))

    r = minimize_scalar(cost, bounds=(math.log(0.1), math.log(10 * t[-1])), method="bounded",
                        options=dict(xatol=1e-6))
    var = float(np.sum((cu["loss"] - cu["loss"].mean()) ** 2 * dt))
    tau_yb = math.exp(r.x)
    Lth = _loss_theory(t, th, b, ymean, cu["ybar"][0], tau_yb)
    idx = np.unique(np.linspace(0, len(t) - 1, min(200, len(t))).round().astype(int))
    values = {"tau_ybar": tau_yb, "tau_h": f["tau_h"], "tau_y": f["tau_y"], "loss_fit_cost": r.fun,
              "loss_unexplained_fraction": r.fun / var, "loss_identity_max_error": float(ident),
              "plot": {"kind": "semilogy", "x": [float(x) for x in t[idx]],
                       "series": {"loss network": [float(x) for x in cu["loss"][idx]],
                                  "loss theory (Eq 9, 3 constants)": [float(x) for x in Lth[idx]]},
                       "xlabel": "epoch", "ylabel": "Eq 1 loss", "title": f"{p.config}: loss curve vs Eq 9"}}
    parts = {"loss identity (rounding)": (float(ident), 64 * EPS_ * max(float(cu["loss"].max()), b)),
             "loss curve unexplained fraction <= 0.1": (r.fun / var, 0.1)}
    return Outcome.from_parts(parts, f"tau_ybar = {tau_yb:.4g} epochs", values)


# ===========================================================================
# U5: Adam (C.5, Fig 15)
def _adam_only():
    import dataclasses
    from theorems.vanrossem._networks import net_params
    q = next(x for x in net_params() if x.name == "optimizer")
    return dataclasses.replace(q, default="adam", choices=("adam",), doc="Adam (the GD comparison run is internal)")


adam = Claim(
    id="vanrossem.adam_dynamics",
    title="Under Adam the effective theory fits the dynamics poorly (C.5, Fig 15)",
    label="Fig 15",
    section="C.5",
    equation="(7)",
    lines=(623, 633),
    statement=r"\text{``the effective theory does not fit the dynamics of a neural network trained using Adam very "
              r"well'' (l.625); the representational predictions still hold (Figs 16-18)}",
    status="empirical",
    # scope: the Shallow row (its gain and depth) at width 50-100 and 6000-9000 epochs, full batch, Adam only, Adam
    # rates 3e-4 to 3e-3 around PyTorch's default 1e-3 (the paper does not state its rate).  Fig 15's 20-layer
    # Default net costs ~10x GD per parameter under Adam (ADAM_COST): 20 x 50 units took 35 s a draw, 20 x 91 timed out
    params=scoped_params(("Shallow",), FIG2_RANGES | {"lr": (3e-4, 3e-3, 1e-3), "epochs": (6000, 9000, 6000),
                                                      "record_every": (1, 5, 2)},
                         drop=("hidden", "gain", "optimizer", "batch_size"), extra_doc=": its gain and depth")
    + [_adam_only()],
    validate=_validate_net,
    notes="Scope: the Shallow row (Fig 15 shows the 20-layer Default net; Adam on 20 layers costs 30-60 s a draw on "
          "the CI machine, so the deep setting is not swept), width 50-100, 6000-9000 epochs, full batch, Adam rate in "
          "[3e-4, 3e-3]. Check (trend): the Eq 49 fit of the Adam-trained net leaves at least 3 times the unexplained fraction of "
          "the same net trained by GD with its Table 1 learning rate, on records that resolve both runs' rise of |dy|^2 "
          "(>= 3 record intervals, else inconclusive; record every 1-5 epochs: Adam's rise takes 13-40 epochs) (catalogue U5 plan: 'expect the fit cost to rise "
          "by more than 3x'). Adam: PyTorch defaults, lr 1e-3 (the paper does not state its Adam lr). The "
          "final-structure part (Figs 16-18: XOR and the blob task) belongs to the structured-representation claims; "
          "for the two-point net the Eq 10 prediction with Adam-fitted constants is reported, not asserted (measured: "
          "u_end 0.068 vs Eq 10 0.079 on Shallow width 100).",
    catalogue="vanrossem §2.5 U5, §3 R9",
    covers=("U5",),
)


@adam.numeric
def _(p):
    """Unexplained fraction of the Eq 49 fit under Adam vs under GD (same row, width, seed)."""
    if over_budget(p):
        return over_budget(p)
    rec, H, cu, c = network(p)
    b, a = p.dy ** 2, p.dx ** 2
    if not _converged(cu, b):
        return _not_converged(cu, b, c)
    pg = p.replace(optimizer="gd", lr=0.0)
    rg, Hg, cug, cg = network(pg)
    if not _converged(cug, b):
        return _not_converged(cug, b, cg)
    for name, cc in (("Adam", cu), ("GD", cug)):
        t10, t90 = _transition(cc["t"], cc["v"], b)
        if not t90 - t10 >= 3 * p.record_every:
            # a jump inside a record interval leaves a step the fit matches trivially (sweep 1234: Adam at lr 3e-3
            # recorded every 222 epochs, unexplained fraction 7e-10)
            return inconclusive(f"the {name} run's 10-90% rise of |dy|^2 ({t90 - t10:.0f} epochs) spans fewer than 3 "
                                f"record intervals ({p.record_every} epochs): the dynamics are not resolved")
    f_adam = fitted(p)
    f_gd = fitted(pg)
    ratio = f_adam["unexplained"] / f_gd["unexplained"]
    pred = eq10_prediction(cu, a, b, f_adam["tau_h"], f_adam["tau_y"])
    values = {"unexplained_adam": f_adam["unexplained"], "unexplained_gd": f_gd["unexplained"], "ratio": ratio,
              "tau_adam": (f_adam["tau_h"], f_adam["tau_y"]), "tau_gd": (f_gd["tau_h"], f_gd["tau_y"]),
              "u_end_adam": float(cu["u"][-1]), "eq10_adam_fitted": pred, "u_end_gd": float(cug["u"][-1]),
              "plot": uvw_plot(cu, f_adam, a, b, f"{p.config} trained with Adam vs fitted Eq 7")}
    return Outcome(residual=3.0 / ratio, tolerance=1.0, values=values,
                   message=f"unexplained fraction Adam {f_adam['unexplained']:.3g} vs GD {f_gd['unexplained']:.3g} "
                           f"(ratio {ratio:.3g}, claim: >= 3)")
