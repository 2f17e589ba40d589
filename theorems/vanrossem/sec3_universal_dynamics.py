"""§3 Universal Dynamics (seed l.114-133; Fig 2 with App. B.1): two fitted constants match trained networks
(Fig 2, l.112-120; an erratum: not on every Fig 2 row), the 20-layer discrepancy (Figs 2 and 5), the dependence on the time constants only (§3.1,
l.116), and Fig 3 (§3.2-3.3, l.124-132): the plateau at small initial weights and very high initial weights.
Claims: ``vanrossem.network_two_constant_fit``, ``vanrossem.deep_network_discrepancy``,
``vanrossem.time_constants_only``, ``vanrossem.network_plateau``, ``vanrossem.very_high_weights``.

Networks and the effective theory along their records: :mod:`theorems.vanrossem._networks` (its conventions).
The effective-theory claim (``time_constants_only``) follows :mod:`theorems.vanrossem._common`'s conventions.
These claims are empirical: their checks are trend assertions with the tolerance stated next to each, on reduced
configurations that run in seconds; the full Table 1 reproductions are ``slow=True``.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from solvers import twopoint as tp
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive
from theorems.vanrossem._common import EPS, FLOOR, RTOL, _lifted_path, flow_params
from theorems.vanrossem._networks import (_converged, _not_converged, _transition, _validate_net, eq10_prediction,
                                          FIG2_RANGES, fitted, net_params, network, over_budget,
                                          scoped_params, theory_uvw, uvw_plot)


# ===========================================================================
# U2 + T4: the two-constant fit of Fig 2
#: the Fig 2 rows of the corrected statement: every Fig 2 row (FIG2_ROWS) but the 20-layer small-initialisation
#: leaky-ReLU/ReLU nets of catalogue U2 (ii) / E11 (Default, Narrow, ReLU) and ELU (its curves are not always matched;
#: see the notes and the falsifier 'stated_elu')
FIT_ROWS = ("Shallow", "Linear", "Tanh", "Swish")
#: the printed 'for all networks' run through the same check on rows the corrected statement excludes: the Narrow row at
#: its Table 1 size (20 x 50, gain 1.05, rate 0.005, 6000 epochs) on the B.1 data (dx = 0.5, dy = 1), seed 0; and
#: the ELU instance the whole-suite sweep found (seed 20261126, draw 10)
STATED = {
    "stated": ("Narrow", {"units": 50, "epochs": 6000, "dx": 0.5, "dy": 1.0, "record_every": 20, "seed": 0}),
    "stated_elu": ("ELU", {"units": 54, "epochs": 11593, "dx": 1.0705243483213107, "dy": 0.47950609146982526,
                           "record_every": 35, "seed": 924569404}),
}

fit = Claim(
    id="vanrossem.network_two_constant_fit",
    title="Two fitted constants make Eq 7 match |dh|^2, |dy|^2 and w of trained networks (Fig 2): not for every "
          "Fig 2 row",
    label="Fig 2, Eq 49",
    section="2.3, 3, B.1",
    equation="(7), (49)",
    lines=(112, 120),
    statement=r"\text{``Despite only needing to fit two constants, the theory matches all three curves quite well "
              r"for all networks'' (l.120); } \tau_h,\tau_y=\arg\min\int(\|dh\|^2-\|dh\|^2_{\rm th})^2+"
              r"(\|dy\|^2-\|dy\|^2_{\rm th})^2+(w-w_{\rm th})^2\,dt\ \text{(Eq 49)}",
    status="erratum",
    corrected=r"\text{On the Fig 2 rows Shallow, Linear, Tanh and Swish the two constants fitted by Eq 49 make Eq 7 "
              r"match the three curves (at most 10\% of their variation unexplained) and Eq 10 with them predicts "
              r"the final } \|dh\|^2 \text{ within 10\%. Not for all networks: the 20-layer small-initialisation "
              r"leaky-ReLU/ReLU rows (Default, Narrow, ReLU) fail it (catalogue E11, "
              r"vanrossem.deep\_network\_discrepancy), and the ELU row's curves are not always matched (its Eq 10 "
              r"end point is)}",
    # the setting of the paper's evidence (fig2_params' ranges: the Fig 2 rows with their own depth, gain and rate; Fig
    # 5's data distances) restricted to the rows of the corrected statement; no optimizer parameter: Fig 2 / l.120
    # concern networks trained by gradient descent
    params=scoped_params(FIT_ROWS, FIG2_RANGES, drop=("hidden", "gain", "lr", "optimizer", "batch_size"),
                         default="Shallow", extra_doc=": its gain, rate and depth; width overridden by units"),
    validate=_validate_net,
    notes="Erratum (audit, issue 20): l.120 says the two-constant fit matches 'quite well for all networks' of Fig 2. "
          "(1) It does not on the 20-layer small-initialisation leaky-ReLU/ReLU rows (catalogue U2 (ii), E11; "
          "vanrossem.deep_network_discrepancy): the falsifier 'stated' runs the same check on the Narrow row at its "
          "Table 1 size (20 x 50, 6000 epochs, B.1 data dx = 0.5, dy = 1, seed 0): unexplained fraction 0.126, Eq 10 "
          "with the fitted constants 25% above u_end. Measured there on seeds 0-5: Narrow refuted on 5 of 6 (Eq 10 "
          "+16% to +132%; seed 5: +5.7%), Default and ReLU at width 100 refuted on every draw that learned the data "
          "(7 of 12; Eq 10 +35% to +96%; the other 5 had not left the plateau by epoch 6000); catalogue U2 at width "
          "500: Default +67%, ReLU +78%, Narrow +34%. Away from the B.1 data these rows often pass (over dx in [0.5, "
          "1.5], dy in [0.25, 1] at widths 50-100: 10 of 12 draws), which is why they are excluded, not asserted to "
          "fail everywhere. Possibly convention-dependent (catalogue D1-D3: full-batch GD, mean MSE, 21 affine "
          "layers), as E11 says. "
          "(2) The ELU row's end point matches (Eq 10 within 4.9% on every ELU draw) but its curves not always: "
          "|dh|^2 first shrinks by 15-27% which the fitted Eq 7 from the same epoch-0 values does not follow, leaving "
          "13-14% of the variation unexplained. The falsifier 'stated_elu' is the whole-suite sweep's instance (seed "
          "20261126 draw 10: width 54, dx = 1.07, dy = 0.48, unexplained 0.131, Eq 10 within 0.7%). Measured: 1 of 37 "
          "random ELU draws over the declared ranges refuted (width 50, dx = 1.47, dy = 0.47: unexplained 0.141); "
          "not a finite-width effect: that instance at the paper's width 500 (same seed and data) leaves 0.103 "
          "unexplained (Eq 10 within 0.08%) and seed 1 there 0.011: the failure is seed-dependent at every width, not a narrow-width artefact; at the sweep instance's data other seeds passed at widths "
          "50-200 (0.005-0.045), seed 3 at width 100 only just (0.095). So ELU is excluded from the corrected rows "
          "rather than given its own width range. "
          "Corrected statement: the fit on the other Fig 2 rows, Shallow, Linear, Tanh and Swish: 52 random draws "
          "over the declared ranges (13 a row, widths 50-100) all certified, largest unexplained fraction 0.070 and "
          "Eq 10 error 5.4% (Tanh, width 66, dx = 0.64, dy = 0.29). "
          "Operationalisation of 'matches quite well' (stated a priori, not tuned; unchanged by the audit): the fitted "
          "Eq 7 leaves at most 10% of the variation of the three curves unexplained (Eq 49 cost / total variation: "
          "the shapes) and Eq 10 with the fitted constants and the epoch-0 values (D5) predicts the final |dh|^2 "
          "within 10% (the end point; catalogue R3 measured 1-3% on the configurations that fit well; 10% allows "
          "seed-to-seed and float32/float64 differences). Runs that have not learned the data (|dy|^2 off b by >1%) are "
          "inconclusive. Default: Table 1 'Shallow' at width 100. Eq 49 units: rectangle rule over recorded epochs "
          "(D6). Scope: the four rows, each with its own depth, gain and rate (no hidden/gain/lr override), width "
          "50-100 (1/10 to 1/5 of the rows' 500; 500 is the slow reproductions), 6000-12000 epochs, the data "
          "distances of B.1 and Fig 5 (dx in [0.5, 1.5], dy in [0.25, 1]); inconclusive past a training work of 6e9 "
          "multiply-adds (~12 s, WORK_MAX; the range stays within it); no optimizer parameter (GD only; Adam: "
          "vanrossem.adam_dynamics). "
          "History: status empirical until this audit. Over the former shared ranges (dx, dy up to 10, 3-19 layers, "
          "any gain and rate) sweep 20261126 gave 3 certified, 14 inconclusive, 3 refuted, all outside the Fig 2 "
          "setting; over the eight Fig 2 rows 19 certified, 1 inconclusive (seed 20261126) and 16 certified, 3 "
          "inconclusive, 1 refuted (seed 5150: Default, Eq 10 15% off; 41% off at width 200, seed 0; then kept as a "
          "'finding'), and the whole-suite sweep (seed 20261126) refuted 2 of 20: ReLU at width 99 (Eq 10 +24%) and "
          "the ELU instance above: the printed statement is wrong on those rows, hence the erratum. Sweeps of the "
          "corrected form: 20 certified of 20 on seed 880017 and on seed 20261126.",
    catalogue="vanrossem §2.5 U2, §2.8 T4, §3 R3, §4 E11",
    covers=("U2", "T4", "R3"),
)


def _fit_outcome(p, kind="eq7"):
    rec, H, cu, c = network(p)
    a, b = p.dx ** 2, p.dy ** 2
    if not _converged(cu, b):
        return _not_converged(cu, b, c)
    f = fitted(p, kind)
    if not math.isfinite(f["cost"]):
        return inconclusive("no finite Eq 49 fit (the theory left its domain at every grid point)")
    u_end = float(cu["u"][-1])
    pred = eq10_prediction(cu, a, b, f["tau_h"], f["tau_y"])
    t10, t90 = _transition(cu["t"], cu["v"], b)
    values = {"tau_h": f["tau_h"], "tau_y": f["tau_y"], "tau_y_over_tau_h": f["tau_y"] / f["tau_h"],
              "fit_cost_eq49": f["cost"], "unexplained_fraction": f["unexplained"], "u0": float(cu["u"][0]),
              "v0": float(cu["v"][0]), "u_end": u_end, "v_end": float(cu["v"][-1]), "w_end": float(cu["w"][-1]),
              "eq10_fitted": pred, "eq10_rel_error": (pred - u_end) / u_end, "v_10_90_epochs": [t10, t90],
              "hidden_layer_H": H, "config": c,
              "plot": uvw_plot(cu, f, a, b, f"{p.config} ({c['hidden']}x{c['units']}): network vs fitted Eq 7")}
    parts = {"unexplained fraction <= 0.1": (f["unexplained"], 0.1),
             "|Eq 10 - u_end| / u_end <= 0.1": (abs(pred - u_end) / u_end, 0.1)}
    return Outcome.from_parts(parts, f"Eq 49 fit: tau_h = {f['tau_h']:.4g}, tau_y = {f['tau_y']:.4g}, cost "
                              f"{f['cost']:.4g}", values)


@fit.numeric
def _(p):
    """Train the network, fit (tau_h, tau_y) by Eq 49, compare the curves and the Eq 10 prediction."""
    if getattr(p, "optimizer", "gd") != "gd":
        # Fig 2 / l.120 concern the Table 1 networks, trained by (full-batch or per-sample) gradient descent; the sweep
        # refuted two Adam runs (lr 0.3-0.9), which are vanrossem.adam_dynamics' subject, not this claim's
        return inconclusive("optimizer = adam: the claim (Fig 2, l.120) is about networks trained by gradient descent; "
                            "Adam is vanrossem.adam_dynamics")
    return over_budget(p) or _fit_outcome(p)


fit.property(over=("seed",), max_examples=3,
             description="the Shallow (width 100) fit certifies for other initialisation seeds")


@fit.falsifier({
    "stated": {"description": "the printed 'for all networks' (l.120) on the Narrow row at its Table 1 size (20 x 50, "
                              "6000 epochs, B.1 data dx = 0.5, dy = 1), seed 0: unexplained fraction 0.126, Eq 10 25% "
                              "above u_end (catalogue E11)",
               "fixed": STATED["stated"][1], "search": ("seed",), "max_examples": 4},
    "stated_elu": {"description": "the printed 'for all networks' on the ELU row at the whole-suite sweep's instance "
                                  "(seed 20261126 draw 10: width 54, dx = 1.07, dy = 0.48): unexplained fraction 0.131 "
                                  "(|dh|^2 first shrinks by 27%, which the fitted Eq 7 trajectory from the same "
                                  "epoch-0 values does not follow), Eq 10 within 0.7%",
                   "fixed": STATED["stated_elu"][1]},
})
def fit_stated(p, variant):
    """The same check (Eq 49 fit; unexplained fraction and Eq 10 within 10%) on a Fig 2 row the corrected statement
    excludes, the row taken from STATED whatever ``config`` says (the declared rows are the corrected statement's)."""
    row = STATED[variant][0]
    q = p.replace(config=row)
    if over := over_budget(q):
        return over
    out = _fit_outcome(q)
    out.message = f"{row} row (printed 'for all networks'): {out.message}"
    if out.decide() == "refuted":
        # the witness is the run of the excluded row, not the declared config the framework would fill in
        out.counterexample = {"config": row, **{k: p[k] for k in ("units", "epochs", "seed", "record_every", "dx",
                                                                 "dy")}}
    return out


@fit.reproduction(slow=True)
def _(p):
    """Table 1 'Shallow' at full size (2 x 500) vs the catalogue's U2 row (tau_h 235.1, tau_y 111.6, cost 34.2,
    u_end 0.3506, Eq 10 0.3616), within 10% (initialisation draws differ: PyTorch vs NumPy generator, float32)."""
    from theorems.claim import Params
    p = Params({x.name: x.default for x in fit.params}).replace(units=500, record_every=10)
    out = _fit_outcome(p)
    v = out.values
    ref = {"tau_h": 235.1, "tau_y": 111.6, "fit_cost_eq49": 34.2, "u_end": 0.3506, "eq10_fitted": 0.3616}
    parts = {f"{k} vs {r}": (abs(v[k] - r) / r, 0.1) for k, r in ref.items()}
    return Outcome.from_parts(parts, "Shallow 2x500 vs catalogue U2", {k: v[k] for k in ref} | {"plot": v["plot"]})


@fit.reproduction(name="table1_rows", slow=True)
def _(p):
    """The catalogue's U2 suite test (R3): on the Table 1 'Tanh', 'Linear' and 'High initial weights' rows (20 x 500,
    6000 epochs, ~1-2 min each) Eq 10 with the fitted constants is within 5% of u_end; fitted constants and costs of
    every row are reported (for comparison with catalogue U2: 161.0/94.1, 150.7/93.8, 152.8/32.8)."""
    from theorems.claim import Params
    base = Params({x.name: x.default for x in fit.params})
    parts, values = {}, {}
    for row in ("Tanh", "Linear", "High initial weights"):
        out = _fit_outcome(base.replace(config=row, units=0, record_every=10))
        v = out.values
        if "eq10_rel_error" not in v:
            parts[f"{row} converged"] = (1.0, 0.0)
            continue
        values[row] = {k: v[k] for k in ("tau_h", "tau_y", "fit_cost_eq49", "unexplained_fraction", "u0", "u_end",
                                         "eq10_fitted")}
        parts[f"{row}: |Eq 10 - u_end|/u_end <= 0.05"] = (abs(v["eq10_rel_error"]), 0.05)
    return Outcome.from_parts(parts, "Table 1 rows where the catalogue's fit is good", values)


# ===========================================================================
# E11: the deep small-initialisation discrepancy
deep = Claim(
    id="vanrossem.deep_network_discrepancy",
    title="Deep small-initialisation nets jump far more sharply than any fitted Eq 7 trajectory (E11)",
    label="Fig 2, Fig 5",
    section="3, 4.1",
    equation="(7), (10)",
    lines=(112, 120),
    statement=r"\text{(catalogue E11) For the 20-layer small-initialisation nets the fitted Eq 7 transition of } "
              r"\|dy\|^2 \text{ is much wider than the network's, and Eq 10 with the fitted constants overestimates "
              r"the final } \|dh\|^2",
    status="empirical",
    # scope: the 20-layer small-initialisation rows the statement is about (catalogue U2 (ii)), with their own gain,
    # rate and depth, the Fig 2 widths/epochs/data distances (FIG2_RANGES; width 50 = the Narrow row's)
    params=scoped_params(("Narrow",), FIG2_RANGES | {"record_every": (5, 40, 20), "dx": (0.45, 0.55, 0.5),
                                                     "dy": (0.9, 1.0, 1.0)},
                         drop=("hidden", "gain", "lr", "optimizer", "batch_size", "units")),
    validate=_validate_net,
    notes="Scope: the Table 1 'Narrow' row at its own size (20 x 50, its gain and rate), the one 20-layer "
          "small-initialisation row a numeric check can train at Table 1 size; the others (Default, ReLU, Intermediate: "
          "500 units) at reduced width are not the paper's networks, and at width 60 the Default row's transition was "
          "only 1.7x narrower than the fitted theory's (sweep 1234 draw 1; the catalogue's x10 is at width 500, the "
          "slow reproduction). Full-batch GD, 6000-12000 epochs, the B.1 two-point data within 10% (dx in [0.45, "
          "0.55], dy in [0.9, 1]: E11 was measured there; at dx 0.77-1.4, dy 0.46-0.93 the Narrow net's jump was only "
          "1.5-2.8x narrower than the fitted theory's on 6 of 8 draws, sweep 1234: a larger input distance is a larger "
          "effective initialisation), a record every 5-40 epochs (the network's jump takes ~200 epochs; sweep 1234 refuted a draw "
          "recorded every 199 epochs, where both widths were one record interval: such draws are now inconclusive); "
          "the former shared ranges drew 500-unit runs of ~60 s and shallow rows outside the statement. "
          "Default: the Table 1 'Narrow' row at full size (20 x 50, 6000 epochs; ~1 s). Measured: the 10%->90% "
          "rise of |dy|^2 takes W_net epochs in the network and W_th in the fitted theory. Trend assertions: on the "
          "Narrow row (numeric check) W_th/W_net >= 2 and Eq 10 (fitted) > u_end; on the Default row at 20 x 500 (slow "
          "reproduction; catalogue E11: W_th/W_net ~ 10, Eq 10 +24% to +78%) W_th/W_net >= 3 and Eq 10 >= 1.1 u_end. "
          "Audit: the catalogue's Default-row magnitudes (3, +10%) were asserted on the Narrow row, where sweeps 1234 "
          "and 4321 measured W_th/W_net = 2.8-8.8 and Eq 10 +2% to +14% at the B.1 data (2 of 4 draws refuted): the "
          "direction of the discrepancy holds on the Narrow net, its size is the Default row's. "
          "Structural reason (catalogue U2 (iii)): in Eq 7 the escape time is ~ln(1/eps)/lambda_+ and the transition "
          "width a few 1/lambda_+, so plateau/width ~ ln(1/eps)/few, while deep nets have plateau/width ~ 17. This "
          "contradicts the l.120 'for all networks' in our conventions (possibly convention-dependent: D1-D3): "
          "vanrossem.network_two_constant_fit is an erratum on that ground, its printed form refuted on the Narrow row "
          "at its Table 1 size (falsifier 'stated'; seeds 0-5 at the B.1 data: 5 of 6 refuted, Eq 10 +16% to +132%), "
          "its corrected form certified on the other Fig 2 rows. Away from the B.1 data the discrepancy is not "
          "universal at widths 50-100 either: over Fig 5's data distances (dx in [0.5, 1.5], dy in [0.25, 1]) 10 of "
          "12 Default/Narrow/ReLU draws passed the two-constant fit's 10% criteria (audit, issue 20), which is why "
          "this claim stays at the B.1 data.",
    catalogue="vanrossem §4 E11, §2.5 U2 (ii)-(iii)",
    covers=("E11",),
)


def _deep_outcome(p, width_ratio=2.0, over=1.0):
    rec, H, cu, c = network(p)
    a, b = p.dx ** 2, p.dy ** 2
    if not _converged(cu, b):
        return _not_converged(cu, b, c)
    f = fitted(p)
    ut, vt, wt, ok = theory_uvw(cu["u"][0], cu["v"][0], cu["w"][0], cu["t"], a, b, f["tau_h"], f["tau_y"])
    n10, n90 = _transition(cu["t"], cu["v"], b)
    t10, t90 = _transition(cu["t"], vt, b)
    if not (math.isfinite(t90) and n90 > n10):
        return inconclusive("the fitted theory does not complete its transition within the record",
                            tau_h=f["tau_h"], tau_y=f["tau_y"])
    if n90 - n10 < 3 * p.record_every:
        return inconclusive(f"the network's 10-90% rise of |dy|^2 ({n90 - n10:.0f} epochs) spans fewer than 3 record "
                            f"intervals ({p.record_every} epochs): its width is not resolved", network_10_90=[n10, n90])
    ratio = (t90 - t10) / (n90 - n10)
    u_end = float(cu["u"][-1])
    pred = eq10_prediction(cu, a, b, f["tau_h"], f["tau_y"])
    values = {"tau_h": f["tau_h"], "tau_y": f["tau_y"], "fit_cost_eq49": f["cost"],
              "unexplained_fraction": f["unexplained"], "network_10_90": [n10, n90], "theory_10_90": [t10, t90],
              "width_ratio": ratio, "plateau_over_width_network": n10 / (n90 - n10),
              "plateau_over_width_theory": t10 / (t90 - t10), "u0": float(cu["u"][0]), "u_end": u_end,
              "eq10_fitted": pred, "eq10_rel_error": (pred - u_end) / u_end,
              "plot": uvw_plot(cu, f, a, b, f"{p.config} ({c['hidden']}x{c['units']}): network vs fitted Eq 7")}
    parts = {f"theory/network transition width >= {width_ratio:g}": (width_ratio / ratio, 1.0),
             f"Eq 10 >= {over:g} u_end (overestimates)": (over * u_end / pred, 1.0)}
    return Outcome.from_parts(parts, f"transition width network {n90 - n10:.0f} vs theory {t90 - t10:.0f} epochs",
                              values)


@deep.numeric
def _(p):
    """Transition widths of |dy|^2 (network vs fitted theory) and Eq 10 vs u_end."""
    return _deep_outcome(p)


@deep.reproduction(slow=True)
def _(p):
    """Table 1 'Default' (20 x 500, 6000 epochs, ~1-2 min): catalogue E11 measured network 10->90% 3791->4010 vs
    best-fit theory ~3080->5050, Eq 10 0.1326 vs u_end 0.0792; the two trend assertions at the catalogue's sizes
    (width ratio >= 3, Eq 10 >= 1.1 u_end)."""
    from theorems.claim import Params
    p = Params({x.name: x.default for x in deep.params}).replace(config="Default", units=500, record_every=10)
    return _deep_outcome(p, width_ratio=3.0, over=1.1)


# ===========================================================================
# 6. Only tau_h, tau_y (and a/tau_h) enter (l.116, catalogue U1)
universality = Claim(
    id="vanrossem.time_constants_only",
    title="Eq 7 refers to the network only through tau_h and tau_y; the input scale only through a/tau_h",
    label="l.116",
    section="3.1",
    equation="(7)",
    lines=(116, 116),
    statement=r"\text{the dynamics in Eq 7 contain no direct reference to the implementation details of the network, "
              r"only two effective learning rates }1/\tau_h,\ 1/\tau_y",
    status="holds",
    # the initial alignment as the cosine cos_0 between dy(0) and Delta_y (w_0 = dy2_0 - sqrt(dy2_0) delta_y cos_0,
    # default = the former w_0 = 0.1), so every draw is a network state (w_0 drawn on [-1e4, 1e4] was rejected by the
    # Cauchy-Schwarz constraint on 3 of 20 draws, sweep 1234, and 2 of the first 2, sweep 777001)
    params=[q for q in flow_params(dh2_0=0.3, dy2_0=0.2) if q.name != "w_0"] + [
        Param.float("cos_0", math.sqrt(0.05), -1.0, 1.0, "cosine of the angle between dy(0) and Delta_y: w(0) = "
                    "|dy(0)|^2 - sqrt(|dy(0)|^2) |Delta_y| cos_0 (every value is a network state; default: w(0) = 0.1)"),
        Param.float("lam", 3.0, FLOOR, 1e3, "common factor of a and tau_h", search=(0.1, 10.0)),
        Param.float("c", 2.0, FLOOR, 1e3, "common factor of both tau's (a time rescaling t -> t/c)",
                    search=(0.1, 10.0)),
        Param.float("T", 4.0, FLOOR, 100.0, "time horizon", search=(0.5, 10.0)),
    ],
    notes="Two exact symmetries of Eq 7: (a, tau_h) -> (lam a, lam tau_h) leaves the field unchanged (a enters only as "
          "a/tau_h), and (tau_h, tau_y) -> (c tau_h, c tau_y) divides it by c (time rescaling). So fitted 'tau_h' "
          "absorb the input scale, and only tau_y/tau_h shapes the orbits. Falsifier: changing a alone changes the "
          "trajectory.",
    catalogue="vanrossem §2.5 U1",
    covers=("U1",),
)


def _u1_traj(p, a, th, ty, times, rel=0.0):
    w0 = p.dy2_0 - math.sqrt(p.dy2_0) * p.delta_y * p.cos_0
    z0 = tp.lift_from_uvw(p.dh2_0, p.dy2_0, w0, p.delta_y) * (1.0 + rel)
    dY = [p.delta_y, 0.0]
    return np.array(tp.uvw_from_lift(_lifted_path(z0, tp.lift_params(a, th, ty, dY), times), dY))


def _u1_outcome(p, scale_a_only=False):
    a = p.delta_x ** 2
    times = np.linspace(0, p.T, 11)[1:]
    ref = _u1_traj(p, a, p.tau_h, p.tau_y, times)
    sym = _u1_traj(p, p.lam * a, p.tau_h * (1.0 if scale_a_only else p.lam), p.tau_y, times)
    slow = _u1_traj(p, a, p.c * p.tau_h, p.c * p.tau_y, p.c * times)
    # component scales (rows dh2, dy2, w): w = |dy|^2 - dy.Delta_y is a difference, so its rounding is relative to
    # |dy|^2 + |dy| delta_y, not to |w| (sweep 1234: w -> -2e-8 beside |dy|^2 = 3e4 refuted at 166x a bound scaled
    # by |w|, the two runs agreeing to 1e-11 = 0.3 eps |dy|^2)
    scl = np.max(np.abs(ref), axis=1, keepdims=True) + 1e-300
    scl[2] = max(float(scl[2, 0]), float(np.max(np.abs(ref[1]) + np.sqrt(np.abs(ref[1])) * p.delta_y)))
    # error model: two adaptive integrations (rtol 1e-11) on different step sequences and rounding differ by
    # (1e3 rtol + 64 eps) times the component scale where the flow does not amplify errors; near a saddle (the
    # plateau escape) an error made early grows with the flow's amplification A, measured here by the reference
    # run from the initial state scaled by 1 + delta (delta = 1e-6): A = max |ref_delta - ref| / (delta scale),
    # at least 1.  (Sweep draws with A ~ 1e13 refuted the fixed bound with a symmetry that holds exactly.)
    delta = 1e-6
    pert = _u1_traj(p, a, p.tau_h, p.tau_y, times, rel=delta)
    amp = max(1.0, float(np.max(np.abs(pert - ref) / (delta * scl))))
    bound = (1e3 * RTOL + 64 * EPS) * scl * amp
    parts = {"(lam a, lam tau_h) (residual / bound)": (float(np.max(np.abs(sym - ref) / bound)), 1.0)}
    if not scale_a_only:
        parts["(c tau_h, c tau_y) at c t (residual / bound)"] = (float(np.max(np.abs(slow - ref) / bound)), 1.0)
    return Outcome.from_parts(parts, "trajectories (dh2, dy2, w) under the symmetries of Eq 7",
                              values={"max_abs_diff": float(np.max(np.abs(sym - ref))), "T": p.T,
                                      "amplification": amp})


@universality.numeric
def universality_numeric(p):
    """Lifted trajectories at (a, tau_h), (lam a, lam tau_h) and (c tau_h, c tau_y, c t) coincide."""
    return _u1_outcome(p)


universality.property(over=("lam", "c", "tau_h", "tau_y", "delta_x", "delta_y", "cos_0"), max_examples=12)


@universality.falsifier("input_scale_alone", search=("lam",))
def universality_a_alone(p):
    """a -> lam a with tau_h fixed: a different trajectory (the input scale is not invisible by itself)."""
    return _u1_outcome(p, scale_a_only=True)


def _universality_symbolic_core(variant="stated"):
    """Eq 7 field: invariant under (a, tau_h) -> (lam a, lam tau_h); divided by c under both tau's -> c tau's."""
    th, ty, a, b, u, v, w, lam, c = sp.symbols("tau_h tau_y a b u v w lam c", positive=True)
    f = [-a / th * w, -w * (u / ty + a / th * v / u),
         -(3 * w - v + b) * u / (2 * ty) - a / (2 * th) * (v + w) * w / u]
    th_new = th / lam if variant == "a_times_tau_h" else lam * th
    cc = c ** 2 if variant == "time_unit_squared" else c
    n1 = sum(1 for e in f if sp.expand(sp.together(e.subs({a: lam * a, th: th_new}, simultaneous=True) - e)) != 0)
    n2 = sum(1 for e in f if sp.expand(sp.together(e.subs({th: c * th, ty: c * ty}, simultaneous=True) - e / cc)) != 0)
    return Outcome(residual=n1 + n2, tolerance=0, values={
        "method": "sympy.together/expand", "proved": "Eq 7 depends on a, tau_h only via a/tau_h; tau's set the time unit"},
        message="field components that changed")


@universality.symbolic(timeout=60)
def universality_symbolic(p):
    """Eq 7 field: invariant under (a, tau_h) -> (lam a, lam tau_h); divided by c under both tau's -> c tau's."""
    return _universality_symbolic_core()


@universality.mutant({
    'a_times_tau_h': 'a and tau_h enter only via a tau_h (invariance under (a, tau_h) -> (lam a, tau_h/lam))',
    'time_unit_squared': "tau's -> c tau's divides the field by c^2",
}, timeout=60)
def universality_symbolic_mutant(p, variant):
    """The statement perturbed, through the same procedure as the symbolic check: it must not reduce to 0."""
    out = _universality_symbolic_core(variant)
    out.message = f"{variant}: {out.message}"
    return out


# ===========================================================================
# P1: plateau at small initial weights, immediate decrease at large ones (networks)
plateau = Claim(
    id="vanrossem.network_plateau",
    title="Small initial weights give a plateau, large ones an immediate decrease (networks)",
    label="Fig 3",
    section="3",
    equation="(9)",
    lines=(124, 132),
    statement=r"\text{Small initial weights: plateau-like dynamics; large initial weights: immediate exponential "
              r"decay of the loss (l.124, l.132)}",
    status="empirical",
    # scope: the Shallow row (its rate; 2 hidden layers) at three gains in disjoint ranges (small, the row's 0.35,
    # large), so every draw is ordered; width 50-200 and 6000-12000 epochs keep the three runs within WORK_MAX (1.4e9)
    params=scoped_params(("Shallow",), {"units": (50, 200, 100), "epochs": (6000, 12000, 6000), "dx": (0.5, 1.5, 0.5),
                                        "dy": (0.5, 1.0, 1.0), "record_every": (1, 3, 2)},
                         drop=("hidden", "gain", "lr", "optimizer", "batch_size")) + [
        Param.float("gain_small", 0.15, 0.1, 0.2, "the small Xavier gain"),
        Param.float("gain_mid", 0.35, 0.3, 0.5, "an intermediate gain (Table 1 Shallow)"),
        Param.float("gain_large", 1.0, 0.8, 1.2, "the large Xavier gain"),
    ],
    validate=lambda p: _validate_gains(p),
    notes="Scope: the Shallow row (its rate, 2 hidden layers), full-batch GD, gains in disjoint ranges small [0.1, "
          "0.2] < mid [0.3, 0.5] < large [0.8, 1.2] (independent draws over [0.01, 5] were ordered 1 time in 6), "
          "width 50-200, 6000-12000 epochs, a record every 1-3 epochs (t_half at the large gain is ~30-250 "
          "epochs; a draw recorded too coarsely to resolve the onset is inconclusive). Measured on the "
          "difference loss L_D = (2w - v + b)/8 (the ybar-independent part of Eq 9, catalogue P1), from its maximum "
          "t_peak (after the transient below): t_half = epochs from t_peak to L_D <= L_D(t_peak)/2, t_10 = to L_D <= "
          "0.9 L_D(t_peak). Trend assertions: "
          "(i) t_half strictly decreases with the gain; (ii) plateau at small gain: t_10/t_half >= 0.5 (an escape "
          "L_D ~ L_0 (1 - eps e^(lambda t)) from a plateau gives t_10/t_half = 1 - ln 5 / ln(0.5/eps), >= 0.5 for "
          "eps <= 0.025; the former 0.7 demanded eps <= 0.002 and failed at gain 0.17 with dx = 1.04 (u0 = 0.037, "
          "ratio 0.68, sweep 1234); a pure "
          "exponential from t=0 has t_10/t_half = ln(10/9)/ln 2 = 0.152); (iii) the onset ratio t_10/t_half is "
          "smaller at the large gain than at the small gain. Catalogue P1: in networks L_D first rises slightly while "
          "ybar is fitted (coupling excluded by Eq 6), so 'immediate exponential decay' is read after that transient (audit: the check measured from t = 0 "
          "although these notes said otherwise; sweep 1234 refuted (iii) on a draw whose L_D rose to 1.65 L_D(0)); "
          "the effective-theory plateau law t_half ~ ln(1/eps)/lambda_+ is checked on the ODE elsewhere.",
    catalogue="vanrossem §2.5 P1, L2",
    covers=("P1", "L2"),
)


def _validate_gains(p):
    _validate_net(p.replace(gain=0.0))
    if not p.gain_small < p.gain_mid < p.gain_large:
        raise ParamError(f"need gain_small < gain_mid < gain_large (got {p.gain_small}, {p.gain_mid}, "
                         f"{p.gain_large})")


def _plateau_times(cu, b):
    """``(t_half, t_10, LD, t_peak)`` of the difference loss, measured from its maximum ``t_peak``: at large gains
    L_D first rises while ybar is fitted (catalogue P1; up to 1.65 L_D(0) on sweep 1234 draw 5, where t_10 from t = 0
    then counted the transient and refuted (iii)); at small gains the maximum is at t ~ 0."""
    LD = (2 * cu["w"] - cu["v"] + b) / 8
    t = cu["t"]
    i0 = int(np.argmax(LD))
    L, tt = LD[i0:], t[i0:] - t[i0]
    i50, i90 = np.argmax(L <= L[0] / 2), np.argmax(L <= 0.9 * L[0])
    if L[i50] > L[0] / 2:
        return math.nan, math.nan, LD, float(t[i0])
    return float(tt[i50]), float(tt[i90]), LD, float(t[i0])


@plateau.numeric
def _(p):
    """Half-times and onset ratios of the difference loss at three gains."""
    b = p.dy ** 2
    res = {}
    series = {}
    for name in ("gain_small", "gain_mid", "gain_large"):
        rec, H, cu, c = network(p.replace(gain=p[name]))
        th, t10, LD, tpk = _plateau_times(cu, b)
        if not math.isfinite(th):
            return inconclusive(f"L_D did not halve within {c['epochs']} epochs at gain {p[name]}", gain=p[name])
        res[name] = {"gain": p[name], "t_half": th, "t_10": t10, "onset_ratio": t10 / th, "u0": float(cu["u"][0]),
                     "max_LD_over_LD0": float(LD.max() / LD[0]), "t_peak": tpk}
        series[f"gain {p[name]}"] = LD / LD[0]
    ts = [res[k]["t_half"] for k in ("gain_small", "gain_mid", "gain_large")]
    if min(ts) < 10 * p.record_every:
        # t_10 and t_half are read off the record: within fewer than 10 intervals the onset ratio t_10/t_half is
        # quantised to 0.1 or coarser (sweep 1234: t_half = 48 = one interval gave the ratio 1 and a refutation)
        return inconclusive(f"t_half = {min(ts):.0f} epochs at the large gain spans fewer than 10 record intervals "
                            f"({p.record_every} epochs): the onset ratio is not resolved", t_half=ts)
    mono = max(ts[1] / ts[0], ts[2] / ts[1])
    t = network(p.replace(gain=p.gain_small))[2]["t"]
    idx = np.unique(np.linspace(0, len(t) - 1, min(200, len(t))).round().astype(int))
    values = {"runs": res, "plot": {"kind": "line", "x": [float(x) for x in t[idx]],
                                    "series": {k: [float(x) for x in s[idx]] for k, s in series.items()},
                                    "xlabel": "epoch", "ylabel": "L_D(t) / L_D(0)",
                                    "title": "difference loss at three initial gains"}}
    parts = {"t_half decreasing in gain (max ratio < 1)": (mono, 1.0),
             "plateau at small gain: 0.5 / (t_10/t_half) <= 1": (0.5 / res["gain_small"]["onset_ratio"], 1.0),
             "onset earlier at large gain (ratio large/small < 1)": (
                 res["gain_large"]["onset_ratio"] / res["gain_small"]["onset_ratio"], 1.0)}
    return Outcome.from_parts(parts, f"t_half = {ts}", values)


# ===========================================================================
# P2: very large initial weights
very_high = Claim(
    id="vanrossem.very_high_weights",
    title="At even larger initial weights the linear approximation breaks down (Fig 3): not confirmed",
    label="Fig 3",
    section="3",
    equation="(5)",
    lines=(124, 126),
    statement=r"\text{``Going to even larger initial weights \ldots\ the linear approximation breaks down'' (l.124)}",
    status="empirical",
    params=net_params(config="Very high initial weights", units=100),
    validate=_validate_net,
    notes="Quantified as: the Eq 49 fit at the 'Very high' row (gain 1.4) is worse than at the 'High' row (gain "
          "1.3): unexplained fraction ratio > 1 and Eq 10 error larger. Catalogue P2: NOT confirmed at gain 1.4 (cost "
          "28.6 vs 12.6 but Eq 10 within 0.8% of u_end). Registered as a slow reproduction (20 x 100) that "
          "certifies the measurable part -- the fit degrades (unexplained fraction x>=1.5) from gain 1.3 to 1.4 -- "
          "and reports the Eq 10 errors, which stay small (measured 5.1% and 5.8% at width 100): the fit of the "
          "curves degrades, the final-distance prediction does not break down at gain 1.4.",
    catalogue="vanrossem §2.5 P2",
    covers=("P2",),
)


@very_high.reproduction(slow=True)
def _(p):
    """Rows 'High' and 'Very high' at width 100 (20 layers, ~5 s each): both Eq 49 fits and Eq 10 errors.  Certified
    when the fit degrades from gain 1.3 to 1.4 (unexplained fraction at least 1.5 times larger), the part of the
    claim that is measurable here; the Eq 10 errors are reported (catalogue at width 500: 0.8% at gain 1.4)."""
    from theorems.claim import Params
    base = Params({x.name: x.default for x in very_high.params})
    vals = {}
    for row in ("High initial weights", "Very high initial weights"):
        out = _fit_outcome(base.replace(config=row))
        vals[row] = {k: out.values.get(k) for k in ("tau_h", "tau_y", "fit_cost_eq49", "unexplained_fraction",
                                                      "u0", "u_end", "eq10_fitted", "eq10_rel_error")}
    hi, vh = vals["High initial weights"], vals["Very high initial weights"]
    if hi["unexplained_fraction"] is None or vh["unexplained_fraction"] is None:
        return inconclusive("a run did not converge", **vals)
    ratio = vh["unexplained_fraction"] / hi["unexplained_fraction"]
    return Outcome(residual=1.5 / ratio, tolerance=1.0, values=vals | {"unexplained_ratio": ratio},
                   message=f"unexplained fraction Very high {vh['unexplained_fraction']:.3g} vs High "
                           f"{hi['unexplained_fraction']:.3g} (ratio {ratio:.3g}); Eq 10 errors "
                           f"{vh['eq10_rel_error']:.3g} vs {hi['eq10_rel_error']:.3g}")
