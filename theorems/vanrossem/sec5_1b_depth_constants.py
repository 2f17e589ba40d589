"""§5.1 Predictivity of the effective theory, the fitted constants over depth (seed l.232-237, Fig 10), and
§5.2 Effective Learning Rates (l.239-241).
Claims: ``vanrossem.depth_constants``, ``vanrossem.depth_parameter_count``.

Networks and the effective theory along their records: :mod:`theorems.vanrossem._networks` (its conventions).
"""
from __future__ import annotations

import numpy as np

from solvers import mlp
from theorems.claim import Claim, Outcome, Param, inconclusive
from theorems.vanrossem._networks import (_cfg, _converged, _not_converged, _validate_net, fit_taus, scoped_params,
                                          network, two_point_data)


# ===========================================================================
# D2 + D3: the constants over depth (§5, Fig 10)
def _spearman(x, y):
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


depth = Claim(
    id="vanrossem.depth_constants",
    title="Per-layer constants: the theory fits best in the second half; 1/tau_h rises with depth, 1/tau_y peaks "
          "mid-network (Fig 10)",
    label="Fig 10",
    section="5",
    equation="(7), (49)",
    lines=(232, 237),
    statement=r"\text{The theory is accurate only in the second half of the network; there } 1/\tau_h "
              r"\text{ increases with depth and } 1/\tau_y \text{ decreases; at early layers } 1/\tau_y "
              r"\text{ increases (l.232-237)}",
    status="empirical",
    # scope: Fig 10's network, the 20-layer leaky-ReLU rows at small initialisation (Default; Narrow = its 50-unit
    # version) with their own gain, rate and depth; widths 50-100 and 6000-12000 epochs (WORK_MAX); layer_step <= 2
    # keeps >= 11 fitted layers of the 20 (at 5 layers one adjacent swap sets Spearman to 0.9)
    params=scoped_params(("Narrow", "Default"), {"units": (50, 100, 50), "epochs": (6000, 12000, 6000),
                                                 "dx": (0.5, 1.5, 0.5), "dy": (0.25, 1.0, 1.0),
                                                 "record_every": (5, 300, 20)},
                         drop=("hidden", "gain", "lr", "optimizer", "batch_size")) + [
        Param.int("layer_step", 2, 1, 2, "fit every layer_step-th hidden layer (and the last)")],
    validate=_validate_net,
    notes="One run, Eq 49 fitted separately with u taken at each hidden layer l (v, w are the output's). Catalogue "
          "D2's suite test: Spearman(1/tau_h, layer) > 0.9; argmax of 1/tau_y in the middle third of the layers; "
          "argmin of the fit cost in the second half. Default: Table 1 'Narrow' (20 x 50, ~5 s with 11 fits); the "
          "catalogue's run is the Default row (20 x 500), the slow reproduction.",
    catalogue="vanrossem §2.7 D2, §3 R8",
    covers=("D2", "R8"),
)


def _depth_outcome(p):
    c = _cfg(p)
    N = c["hidden"]
    layers = sorted(set(range(1, N + 1, p.layer_step)) | {N})
    rec, H, cu, c = network(p, extra_layers=tuple(range(1, N + 1)))
    a, b = p.dx ** 2, p.dy ** 2
    if not _converged(cu, b):
        return _not_converged(cu, b, c)
    if len(layers) < 5:
        return inconclusive("need at least 5 fitted layers for the depth trends", layers=layers)
    X, Y = two_point_data(p.dx, p.dy)
    rows = []
    for l in layers:
        u, _, _ = mlp.uvw(rec.layer(l), rec.outputs, Y[0], Y[1])
        f = fit_taus(cu, a, b, u=u, grid=10)
        rows.append((l, 1 / f["tau_h"], 1 / f["tau_y"], f["cost"], float(u[0]), float(u[-1])))
    L = np.array([r[0] for r in rows], float)
    ih, iy, cost = (np.array([r[k] for r in rows]) for k in (1, 2, 3))
    rho = _spearman(L, ih)
    ky, kc = int(L[np.argmax(iy)]), int(L[np.argmin(cost)])
    lo, hi = N / 3, 2 * N / 3
    values = {"layers": L.tolist(), "inv_tau_h": ih.tolist(), "inv_tau_y": iy.tolist(), "fit_cost": cost.tolist(),
              "u0_per_layer": [r[4] for r in rows], "u_end_per_layer": [r[5] for r in rows],
              "spearman_inv_tau_h": rho, "argmax_inv_tau_y": ky, "argmin_cost": kc,
              "plot": {"kind": "semilogy", "x": L.tolist(), "series": {"1/tau_h": ih.tolist(), "1/tau_y": iy.tolist()},
                       "xlabel": "hidden layer", "ylabel": "fitted 1/tau (1/epoch)",
                       "title": f"{p.config}: per-layer effective learning rates (Fig 10)"}}
    parts = {"Spearman(1/tau_h, layer) > 0.9": (max(0.0, 0.9 - rho) + (0.0 if rho > 0.9 else 1e-12), 0.0),
             "argmax 1/tau_y in the middle third": (0.0 if lo <= ky <= hi else abs(ky - (lo + hi) / 2), 0.0),
             "argmin cost in the second half": (0.0 if kc > N / 2 else N / 2 - kc + 1, 0.0)}
    return Outcome.from_parts(parts, f"Spearman {rho:.3f}, argmax 1/tau_y at {ky}, argmin cost at {kc}", values)


@depth.numeric
def _(p):
    """Per-layer Eq 49 fits and the three depth trends of Fig 10."""
    return _depth_outcome(p)


@depth.reproduction(slow=True)
def _(p):
    """Default row (20 x 500, ~2 min): the catalogue's D2 table (Spearman of 1/tau_h = 1, 1/tau_y peaking at layer 12,
    cost lowest at layers 13-18); same three assertions."""
    from theorems.claim import Params
    return _depth_outcome(Params({x.name: x.default for x in depth.params}).replace(config="Default",
                                                                                    record_every=10))


depth_h = Claim(
    id="vanrossem.depth_parameter_count",
    title="Parameter-count explanation of the per-layer tau trends (§5)",
    label="§5",
    section="5",
    equation="-",
    lines=(239, 241),
    statement=r"\text{The trends of } 1/\tau_h, 1/\tau_y \text{ over depth are explained by the number of parameters "
              r"before and after the layer } H \text{ (l.241)}",
    status="heuristic",
    params=[],
    notes="A heuristic argument, not testable as stated (catalogue D3): it is consistent with the measured trends of "
          "vanrossem.depth_constants (1/tau_h grows with the number of layers before H) but predicts no number.",
    catalogue="vanrossem §2.7 D3",
    covers=("D3",),
)
