"""Two-point NETWORKS of van Rossem & Saxe against the effective theory (§3, App. B.1, C.1, C.2, C.5, §5 Fig 10):
the two-constant fits of Fig 2 (U2, with the fit loss Eq 49, T4), the Eq 51 alternatives (U3, E10), the loss curve
with a third constant (U4), Adam (U5), the plateau at small initial weights (P1, P2), the 20-layer discrepancy
(E11), the per-layer constants over depth (D2, D3) and the experimental set-up as data (T1, T3, T5).

Conventions (catalogue §2.5 "NET" and decisions D1-D6; recorded once here):

* Data (T3, l.485): inputs ``-1, -1 + dx``, targets ``0.6, 0.6 + dy``; ``dx = 0.5``, ``dy = 1`` (``a = dx^2``,
  ``b = dy^2``).
* Networks (:mod:`solvers.mlp`): ``N`` hidden layers of equal width (decision D3: ``N + 1`` affine layers), Xavier
  normal with the Table 1 gain passed directly, zero biases, float64, the Table 1 learning rate with PyTorch's
  ``MSELoss(mean)`` (``loss="mse_mean"``, twice Eq 1) and full-batch gradient descent by default (decision D2;
  ``batch_size=1`` gives per-sample SGD).  ``H`` is hidden layer ``(N + 1) // 2`` (T5, l.479).
* Theory: Eq 7 verbatim (gradient factor ``g = 1/2``, decision D1) with time = epochs, integrated in the lifted
  ``(s, q)`` form (decision D7) from the network's values at epoch 0 (decision D5).  Fitted ``tau``'s are therefore in
  epochs and absorb the learning rate.
* Fit loss Eq 49 (decision D6): ``sum over recorded epochs of [(u - u_th)^2 + (v - v_th)^2 + (w - w_th)^2] x spacing``
  (the integral by the rectangle rule); minimised over ``(log tau_h, log tau_y)`` by a log grid then Nelder-Mead
  from the best grid points.  As a scale-free measure of "matches quite well" we also report the *unexplained
  fraction* ``cost / sum [(u - mean u)^2 + (v - mean v)^2 + (w - mean w)^2] x spacing`` (1 - R^2 of the three curves).

These claims are empirical: their checks are trend assertions with the tolerance stated next to each, on reduced
configurations that run in seconds; the full Table 1 reproductions are ``slow=True``.
"""
from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
from numba import njit
from scipy.optimize import minimize

from solvers import mlp
from solvers import twopoint as tp
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive

G_EQ7 = tp.EQ7_FACTOR
X1, Y1 = -1.0, 0.6   # T3: the first data point; the second is (X1 + dx, Y1 + dy)


# ===========================================================================
# Table 1 (T1) parsed from the seed text
_SEED = "001_6205c7e10fbf4cce.txt"
#: the Table 1 rows the checks use, as a network configuration (compared with the seed by the T1 check)
TABLE1 = {
    "Default": dict(nonlinearity="leaky_relu", gain=1.0, lr=0.005, epochs=6000, units=500, hidden=20),
    "Shallow": dict(nonlinearity="leaky_relu", gain=0.35, lr=0.01, epochs=6000, units=500, hidden=2),
    "Narrow": dict(nonlinearity="leaky_relu", gain=1.05, lr=0.005, epochs=6000, units=50, hidden=20),
    "Linear": dict(nonlinearity="linear", gain=0.85, lr=0.00125, epochs=6000, units=500, hidden=20),
    "ReLU": dict(nonlinearity="relu", gain=1.0, lr=0.005, epochs=6000, units=500, hidden=20),
    "ELU": dict(nonlinearity="elu", gain=0.95, lr=0.00045, epochs=6000, units=500, hidden=20),
    "Tanh": dict(nonlinearity="tanh", gain=0.85, lr=0.00125, epochs=6000, units=500, hidden=20),
    "Swish": dict(nonlinearity="swish", gain=1.7, lr=0.0025, epochs=6000, units=500, hidden=20),
    "Low initial weights": dict(nonlinearity="leaky_relu", gain=0.9, lr=0.015, epochs=6000, units=500, hidden=20),
    "Intermediate initial weights": dict(nonlinearity="leaky_relu", gain=1.1, lr=0.0025, epochs=6000, units=500,
                                         hidden=20),
    "High initial weights": dict(nonlinearity="leaky_relu", gain=1.3, lr=0.00075, epochs=6000, units=500, hidden=20),
    "Very high initial weights": dict(nonlinearity="leaky_relu", gain=1.4, lr=0.00025, epochs=6000, units=500,
                                      hidden=20),
}
_NL_NAMES = {"leaky relu": "leaky_relu", "relu": "relu", "none": "linear", "tanh": "tanh", "elu": "elu",
             "swish": "swish"}


def seed_path() -> Path | None:
    """The seed text: ``$THEOREMS_SEEDS/<file>``, ``<repo>/shared/seeds/<file>`` or ``/work/shared/seeds/<file>``."""
    here = Path(__file__).resolve().parents[2]
    for d in (os.environ.get("THEOREMS_SEEDS"), here / "shared" / "seeds", here.parent / "shared" / "seeds",
              "/work/shared/seeds"):
        if d and (Path(d) / _SEED).is_file():
            return Path(d) / _SEED
    return None


def parse_table1(text: str) -> dict:
    """Rows of Table 1 (l.493-508) from the seed text: ``{experiment: {nonlinearity, gain, lr, epochs, units,
    hidden}}`` (nonlinearity names mapped to :data:`solvers.mlp.NONLINEARITIES`)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("Experiment nonlinearity init gain"))
    rows = {}
    num = r"(\d+(?:\.\d+)?)"
    pat = re.compile(rf"^(.*?)\s+(leaky relu|relu|none|tanh|elu|swish)\s+{num}\s+{num}\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
    for l in lines[start + 1:]:
        if not l.strip():
            continue
        m = pat.match(l.strip())
        if not m:
            break
        rows[m.group(1)] = dict(nonlinearity=_NL_NAMES[m.group(2)], gain=float(m.group(3)), lr=float(m.group(4)),
                                epochs=int(m.group(5)), units=int(m.group(6)), hidden=int(m.group(7)))
    return rows


def parse_dataset(text: str) -> dict:
    """The two-point data of B.1 (l.485): inputs, outputs and the values of dx, dy, from the prose."""
    m = re.search(r"has been set to ([\d.]+) and dy\S* ?\S* ?\S* set to ([\d.]+)", text)
    mx = re.search(r"The inputs are \d+(-\d+)- \d+ and", text)
    my = re.search(r"the outputs are ((\d+\.\d+?)\2+) and", text)
    return {"dx": float(m.group(1)) if m else None, "dy": float(m.group(2)) if m else None,
            "x1": float(mx.group(1)) if mx else None, "y1": float(my.group(2)) if my else None}


# ===========================================================================
# the effective theory along a record (Numba RK4 with a state-dependent step)
#   kind 0: lifted Eq 7 (scalar output): s' = -(g a/th) q r, q' = -(g/ty) s r, r = q s - Dy
#   kind 1..5: (u, v, w) form of Eq 7 and of the four Eq 51 alterations (C.1, l.587):
#     1 Eq 7; 2 "factor2": v' = -2 w(...); 3 "square": u' = -(a/th) w^2; 4 "plus": +a/(2th)(v+w)w/u in w';
#     5 "noterm": drop (a/th) v/u in v'.  All in Eq 7 time units (2g = 1).
VARIANTS = ("eq7", "factor2", "square", "plus", "noterm")


@njit(cache=True)
def _rhs(kind, y, a, b, dY, th, ty, g):
    out = np.empty(y.shape[0])
    if kind == 0:
        s, q = y[0], y[1]
        r = q * s - dY
        out[0] = -g * a / th * q * r
        out[1] = -g / ty * s * r
        return out
    c = 2.0 * g
    u, v, w = y[0], y[1], y[2]
    du = -c * a / th * w
    vterm = a / th * v / u
    if kind == 5:
        vterm = 0.0
    dv = -c * w * (u / ty + vterm)
    wlast = -a / (2.0 * th) * (v + w) * w / u
    if kind == 4:
        wlast = -wlast
    dw = -c * ((3.0 * w - v + b) * u / (2.0 * ty)) + c * wlast
    if kind == 2:
        dv = 2.0 * dv
    if kind == 3:
        du = -c * a / th * w * w
    out[0] = du
    out[1] = dv
    out[2] = dw
    return out


@njit(cache=True)
def _rate(kind, y, a, b, dY, th, ty, g):
    """A bound on the local rate |df/dy| used for the step ``h = cfl / rate``."""
    if kind == 0:
        s, q = y[0], y[1]
        return g * (a * q * q / th + s * s / ty + math.sqrt(a / (th * ty)) * (abs(dY) + abs(q * s))) + 1e-300
    u, v, w = abs(y[0]), abs(y[1]), abs(y[2])
    # Jacobian scale, plus |u'|/u so that one step changes u by at most ~cfl of itself (the 1/u singularity)
    return 2.0 * g * (a / th * (1.0 + (v + w) / u + w / u + w * w / u) + (u + v + w + b) / ty) + 1e-300


@njit(cache=True)
def _path(kind, y0, times, a, b, dY, th, ty, g, cfl, max_steps):
    """States at ``times`` (sorted, ``times[0]`` = start) by classical RK4 with steps ``min(cfl / rate, rest)``;
    returns ``(states, ok)`` where ``ok`` is False if the state left the domain (u <= 0 in the (u, v, w) forms, or
    non-finite) or needed more than ``max_steps`` steps, after which the remaining rows repeat the last state."""
    n = times.shape[0]
    d = y0.shape[0]
    out = np.empty((n, d))
    y = y0.copy()
    out[0] = y
    t = times[0]
    ok = True
    steps = 0
    for k in range(1, n):
        while t < times[k] and ok:
            h = min(cfl / _rate(kind, y, a, b, dY, th, ty, g), times[k] - t)
            steps += 1
            if steps > max_steps:
                ok = False
                break
            k1 = _rhs(kind, y, a, b, dY, th, ty, g)
            k2 = _rhs(kind, y + 0.5 * h * k1, a, b, dY, th, ty, g)
            k3 = _rhs(kind, y + 0.5 * h * k2, a, b, dY, th, ty, g)
            k4 = _rhs(kind, y + h * k3, a, b, dY, th, ty, g)
            yn = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            good = True
            for i in range(d):
                if not np.isfinite(yn[i]):
                    good = False
            if kind != 0 and yn[0] <= 0.0:
                good = False
            if not good:
                ok = False
                break
            y = yn
            t += h
        out[k] = y
    return out, ok


def theory_uvw(u0, v0, w0, times, a, b, tau_h, tau_y, kind="eq7", g=G_EQ7, cfl=0.05, lifted=True,
               sign_dy=1.0, max_steps=100_000):
    """``(u, v, w)`` of the effective theory (or an Eq 51 variant) at ``times`` from the network's initial values.

    ``kind="eq7"`` with ``lifted=True`` integrates the lifted system (scalar output: ``s = sqrt(u0)``,
    ``q = dy0 / s`` with ``dy0 = v0 - w0`` divided by ``Delta_y`` when ``b > 0``); otherwise the ``(u, v, w)`` form.
    Returns ``(u, v, w, ok)``."""
    times = np.asarray(times, dtype=float)
    dYs = math.sqrt(b)
    if kind == "eq7" and lifted:
        s0 = math.sqrt(u0)
        dy0 = (v0 - w0) / dYs if dYs > 0 else math.copysign(math.sqrt(v0), sign_dy)
        Z, ok = _path(0, np.array([s0, dy0 / s0]), times, a, b, dYs, tau_h, tau_y, g, cfl, max_steps)
        u = Z[:, 0] ** 2
        v = u * Z[:, 1] ** 2
        return u, v, v - Z[:, 0] * Z[:, 1] * dYs, ok
    Yv, ok = _path(VARIANTS.index(kind) + 1, np.array([u0, v0, w0], dtype=float), times, a, b, dYs, tau_h, tau_y, g,
                   cfl, max_steps)
    return Yv[:, 0], Yv[:, 1], Yv[:, 2], ok


# ===========================================================================
# networks on the two-point data and the Eq 49 fit
def two_point_data(dx=0.5, dy=1.0):
    """T3: ``X = [[-1], [-1 + dx]]``, ``Y = [[0.6], [0.6 + dy]]``."""
    return np.array([[X1], [X1 + dx]]), np.array([[Y1], [Y1 + dy]])


def run_network(nonlinearity, gain, lr, epochs, units, hidden, seed=0, dx=0.5, dy=1.0, record_every=10,
                batch_size=None, optimizer="gd", backend="numba", extra_layers=()):
    """Train a Table-1-style network on the two-point data; returns ``(record, H, curves)`` with
    ``curves = dict(t, u, v, w, ybar, loss)`` (``loss``: Eq 1, half mean squared error, from the outputs)."""
    X, Y = two_point_data(dx, dy)
    widths = [1] + [int(units)] * int(hidden) + [1]
    H = mlp.hidden_index(widths)
    layers = sorted({H, len(widths) - 1, *extra_layers})
    rec = mlp.train(X, Y, widths, nonlinearity, gain, lr, epochs, seed, record_every=record_every,
                    batch_size=batch_size, optimizer=optimizer, backend=backend, loss="mse_mean",
                    record_layers=layers)
    u, v, w = mlp.uvw(rec.layer(H), rec.outputs, Y[0], Y[1])
    F = rec.outputs[:, :, 0]
    curves = dict(t=rec.epochs.astype(float), u=u, v=v, w=w, ybar=F.mean(axis=1),
                  loss=0.5 * np.mean((F - Y[:, 0]) ** 2, axis=1))
    return rec, H, curves


def fit_cost(curves, tau_h, tau_y, a, b, kind="eq7", t0_index=0, u=None, cfl=0.1, max_steps=30_000):
    """Eq 49 (rectangle rule over the record, decision D6) for constants ``(tau_h, tau_y)``; ``inf`` if the
    theory leaves its domain.  ``u`` overrides the network's ``u`` curve (per-layer fits)."""
    t = curves["t"][t0_index:]
    uu = (curves["u"] if u is None else u)[t0_index:]
    vv, ww = curves["v"][t0_index:], curves["w"][t0_index:]
    ut, vt, wt, ok = theory_uvw(uu[0], vv[0], ww[0], t, a, b, tau_h, tau_y, kind, cfl=cfl, max_steps=max_steps)
    if not ok:
        return math.inf
    dt = np.gradient(t) if len(t) > 1 else np.ones(1)
    return float(np.sum(((uu - ut) ** 2 + (vv - vt) ** 2 + (ww - wt) ** 2) * dt))


def fit_taus(curves, a, b, kind="eq7", grid=12, span=None, t0_index=0, u=None, starts=2, max_steps=None):
    """Minimise Eq 49 over ``(log tau_h, log tau_y)``: a ``grid x grid`` log grid over ``span`` (default
    ``[T/600, 10 T]`` with ``T`` the recorded duration), then Nelder-Mead from the ``starts`` best grid points.
    The theory is integrated by RK4 with ``cfl = 0.1`` (local relative error ~ cfl^5/120 ~ 1e-7 per step, far below
    the network-vs-theory deviations a fit resolves); a path needing more than 30000 steps plus one per recorded
    time (every record ends a step: a record of 34693 points made every path ``inf`` and the fit NaN) counts as
    ``inf``.  Returns ``dict(tau_h, tau_y, cost, unexplained)``."""
    t = curves["t"][t0_index:]
    max_steps = 30_000 + len(t) if max_steps is None else max_steps
    T = float(t[-1] - t[0])
    lo, hi = span or (T / 600.0, 10.0 * T)
    gs = np.geomspace(lo, hi, grid)
    costs = np.array([[fit_cost(curves, th, ty, a, b, kind, t0_index, u, max_steps=max_steps) for ty in gs]
                      for th in gs])
    order = np.argsort(costs, axis=None)[:starts]
    best = (math.inf, None)

    def f(x):
        return fit_cost(curves, math.exp(x[0]), math.exp(x[1]), a, b, kind, t0_index, u, max_steps=max_steps)

    for idx in order:
        i, j = np.unravel_index(idx, costs.shape)
        if not math.isfinite(costs[i, j]):
            continue
        r = minimize(f, [math.log(gs[i]), math.log(gs[j])], method="Nelder-Mead",
                     options=dict(xatol=1e-3, fatol=1e-9, maxiter=300))
        if r.fun < best[0]:
            best = (float(r.fun), r.x)
    if best[1] is None:
        return dict(tau_h=math.nan, tau_y=math.nan, cost=math.inf, unexplained=math.inf)
    uu = (curves["u"] if u is None else u)[t0_index:]
    dt = np.gradient(t)
    var = float(sum(np.sum((c - c.mean()) ** 2 * dt) for c in (uu, curves["v"][t0_index:], curves["w"][t0_index:])))
    return dict(tau_h=float(math.exp(best[1][0])), tau_y=float(math.exp(best[1][1])), cost=best[0],
                unexplained=best[0] / var)


def eq10_prediction(curves, a, b, tau_h, tau_y):
    """Eq 10 from the network's epoch-0 values and the fitted constants (decision D5)."""
    u0, v0 = float(curves["u"][0]), float(curves["v"][0])
    return tp.eq10(tp.a_high(u0, v0, a, tau_h, tau_y), tp.a_low(a, b, tau_h, tau_y))


def uvw_plot(curves, fit, a, b, title, n=200):
    """Plot convention of Fig 2: u, v, w of the network and of the fitted theory over epochs."""
    t = curves["t"]
    ut, vt, wt, _ = theory_uvw(curves["u"][0], curves["v"][0], curves["w"][0], t, a, b, fit["tau_h"], fit["tau_y"])
    idx = np.unique(np.linspace(0, len(t) - 1, min(n, len(t))).round().astype(int))
    L = lambda x: [float(y) for y in np.asarray(x)[idx]]  # noqa: E731
    return {"kind": "line", "x": L(t), "series": {"|dh|^2 network": L(curves["u"]), "|dh|^2 theory": L(ut),
                                                  "|dy|^2 network": L(curves["v"]), "|dy|^2 theory": L(vt),
                                                  "w network": L(curves["w"]), "w theory": L(wt)},
            "xlabel": "epoch", "ylabel": "u, v, w", "title": title}


# ===========================================================================
# shared parameters, cached runs and fits
_CACHE: dict = {}
_CACHE_MAX = 24


def net_params(config="Shallow", units=100, hidden=0, epochs=0, gain=0.0, lr=0.0, optimizer="gd"):
    """Parameters of a two-point network run: a Table 1 row (``config``) with optional overrides (0 = the
    row's value).  The default is the Shallow row at reduced width 100 (seconds; the row's 500 is ``units=500``)."""
    return [
        Param.choice("config", config, list(TABLE1), "Table 1 row (nonlinearity, gain, lr, epochs, units, layers)"),
        # ranges: at most the Table 1 sizes (500 units, 20 hidden layers) and twice its 6000 epochs; the former
        # 2000 / 40 / 100000 drew runs of 1e11-1e13 multiply-adds (hours on a CPU) that no numeric check decides
        # within the sweep's 120 s per draw (see WORK_MAX for the budget inside these ranges)
        Param.int("units", units, 0, 500, "hidden width (0: the Table 1 value)"),
        Param.int("hidden", hidden, 0, 20, "hidden layers (0: the Table 1 value)"),
        Param.int("epochs", epochs, 0, 12_000, "epochs (0: the Table 1 value, 6000)"),
        # gain and lr: at most ~1.2x the largest Table 1 gain (1.7) and ~3x its largest rate (0.015); at the former
        # bounds (5, 1) the drawn deep nets diverged or never learned the data (sweep seed 20261126: 20 of 20 draws
        # inconclusive)
        Param.float("gain", gain, 0.0, 2.0, "Xavier gain (0: the Table 1 value)"),
        Param.float("lr", lr, 0.0, 0.05, "learning rate of PyTorch's MSELoss (0: the Table 1 value)"),
        Param.choice("optimizer", optimizer, ["gd", "adam"], "full-batch GD (the paper's SGD on 2 points) or Adam"),
        Param.int("batch_size", 0, 0, 2, "0: full batch; 1: per-sample SGD (decision D2)"),
        Param.seed("seed of the Xavier initialisation"),
        Param.int("record_every", 20, 1, 1000, "record u, v, w every this many epochs"),
        Param.float("dx", 0.5, 0.0, 10.0, "input distance |x_2 - x_1| (T3: 0.5)", low_open=True),
        Param.float("dy", 1.0, 0.0, 10.0, "target distance |y_2 - y_1| (T3: 1)", low_open=True),
    ]


#: the Table 1 rows of Fig 2 (l.112-120, caption: "variations of the default architecture ... initialized at small
#: weights"): connectivity (Default, Shallow, Narrow; Convolution, Skip and Dropout are not implemented) and
#: nonlinearity (Linear, ReLU, ELU, Tanh, Swish).  The four "initial weights" rows are Fig 3's.
FIG2_ROWS = ("Default", "Shallow", "Narrow", "Linear", "ReLU", "ELU", "Tanh", "Swish")


def fig2_params():
    """The parameters of a Fig 2 claim: :func:`net_params` restricted to the setting the paper's evidence covers.

    * ``config``: :data:`FIG2_ROWS`, each with its own Table 1 depth, gain and learning rate (tuned per row, l.487-489:
      gain "chosen to display rich learning behavior", rate "to produce smooth loss curves while still converging
      within the 6000 epochs"), so no ``hidden``/``gain``/``lr`` override: a depth or gain away from the row's breaks
      that tuning (sweep 20261126 over the shared ranges: 3-19 layers, gain 0.08-1.8, rate up to 0.05 gave 11 of 20
      draws that diverged or never learned, and 3 refuted);
    * ``units`` in [50, 200]: from the Narrow row's 50 to 2/5 of the rows' 500, which :data:`WORK_MAX` allows at 20
      layers (the full 500 are the slow reproductions);
    * ``epochs`` in [6000, 12000]: at least the Table 1 budget the rates were tuned to converge in;
    * ``dx`` in [0.5, 1.5], ``dy`` in [0.25, 1]: the data distances of the paper's two-point experiments (B.1: 0.5
      and 1; Fig 5: dx in [0.5, 1.5], dy in [0, 1], cut at 0.25 where b = dy^2 becomes too small to learn to 1%
      within the budget);
    * ``record_every`` in [5, 300]: at least 20 recorded points in 6000 epochs;
    * no ``optimizer``: Fig 2 / l.120 concern networks trained by gradient descent (Adam: adam_dynamics)."""
    import dataclasses
    narrow = {"units": (50, 200, 100), "epochs": (6000, 12000, 6000), "dx": (0.5, 1.5, 0.5), "dy": (0.25, 1.0, 1.0),
              "record_every": (5, 300, 20)}
    out = []
    for q in net_params():
        if q.name in ("hidden", "gain", "lr", "optimizer"):
            continue
        if q.name == "config":
            q = dataclasses.replace(q, choices=tuple(FIG2_ROWS), doc="Table 1 row of Fig 2 (its nonlinearity, gain, "
                                    "learning rate, depth; width 500 (Narrow: 50) overridden by units)")
        elif q.name in narrow:
            lo, hi, d = narrow[q.name]
            doc = q.doc.split(" (0:")[0].split(" (T3")[0]
            q = dataclasses.replace(q, low=lo, high=hi, default=d, low_open=False, high_open=False,
                                    doc=f"{doc} (in [{lo:g}, {hi:g}]: Fig 2's setting)")
        out.append(q)
    return out


def _cfg(p):
    c = dict(TABLE1[p.config])
    for k, name in (("units", "units"), ("hidden", "hidden"), ("epochs", "epochs"), ("gain", "gain"), ("lr", "lr")):
        if p.get(name):
            c[k] = p[name]
    if c["epochs"] < 10 * p.record_every:
        raise ParamError(f"epochs = {c['epochs']} must be >= 10 * record_every = {10 * p.record_every} "
                         "(a fit needs at least 10 recorded points)")
    return c


def _validate_net(p):
    _cfg(p)


#: work budget of a numeric check that trains a network: epochs x hidden x units x (units + 100) (x2 for per-sample
#: SGD), the multiply-adds of the forward and backward passes plus the elementwise work per unit.  Measured on the
#: 2-core CI machine under load: 2e8 to 7e8 per second, so 1.2e10 trains in about 60 s and leaves the fit and the
#: sweep's 120 s limit room.  (Table 1 rows at full size, 3.6e10, are the slow reproductions.)
WORK_MAX = 1.2e10


def work_estimate(p):
    c = _cfg(p)
    return c["epochs"] * c["hidden"] * c["units"] * (c["units"] + 100) * (2 if p.batch_size == 1 else 1)


def over_budget(p):
    """inconclusive(...) when the run of ``p`` exceeds :data:`WORK_MAX`, else None."""
    w = work_estimate(p)
    if w <= WORK_MAX:
        return None
    c = _cfg(p)
    return inconclusive(f"training {c['hidden']} x {c['units']} units for {c['epochs']} epochs is ~{w:.2g} multiply-adds, "
                        f"beyond the {WORK_MAX:.2g} a numeric check runs within its time limit (about 60 s on a CPU); "
                        "smaller units/hidden/epochs, or the slow reproductions for the Table 1 sizes",
                        work=w, work_max=WORK_MAX)


def network(p, extra_layers=()):
    """The (cached) run of the configuration ``p``: ``(record, H, curves, cfg)``."""
    c = _cfg(p)
    opt = getattr(p, "optimizer", "gd")
    key = (tuple(sorted(c.items())), opt, p.batch_size, p.seed, p.record_every, p.dx, p.dy, tuple(extra_layers))
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        rec, H, cu = run_network(c["nonlinearity"], c["gain"], c["lr"], c["epochs"], c["units"], c["hidden"],
                                 p.seed, p.dx, p.dy, p.record_every, p.batch_size or None, opt,
                                 extra_layers=extra_layers)
        _CACHE[key] = (rec, H, cu, c)
    return _CACHE[key]


def fitted(p, kind="eq7", curves=None):
    """The (cached) Eq 49 fit of ``kind`` to the run of ``p``."""
    rec, H, cu, c = network(p)
    fits = cu.setdefault("_fits", {})
    if kind not in fits:
        fits[kind] = fit_taus(cu, p.dx ** 2, p.dy ** 2, kind)
    return fits[kind]


def _converged(cu, b, rel=1e-2):
    return abs(cu["v"][-1] - b) <= rel * b and abs(cu["w"][-1]) <= rel * b


def _not_converged(cu, b, c):
    return inconclusive(f"the network has not learned the data by epoch {c['epochs']}: |dy|^2 = {cu['v'][-1]:.4g} vs "
                        f"b = {b:.4g}; the final state is undefined (catalogue: Table 1 'Low' never leaves the "
                        "plateau)",
                        v_end=float(cu["v"][-1]), w_end=float(cu["w"][-1]))


def _transition(t, v, b):
    """Epochs at which |dy|^2 first reaches 10% and 90% of b."""
    i10, i90 = np.argmax(v >= 0.1 * b), np.argmax(v >= 0.9 * b)
    if v[i10] < 0.1 * b or v[i90] < 0.9 * b:
        return math.nan, math.nan
    return float(t[i10]), float(t[i90])


# ===========================================================================
# U2 + T4: the two-constant fit of Fig 2
fit = Claim(
    id="vanrossem.network_two_constant_fit",
    title="Two fitted constants make Eq 7 match |dh|^2, |dy|^2 and w of trained networks (Fig 2)",
    label="Fig 2, Eq 49",
    section="2.3, 3, B.1",
    equation="(7), (49)",
    lines=(112, 120),
    statement=r"\text{``Despite only needing to fit two constants, the theory matches all three curves quite well "
              r"for all networks'' (l.120); } \tau_h,\tau_y=\arg\min\int(\|dh\|^2-\|dh\|^2_{\rm th})^2+"
              r"(\|dy\|^2-\|dy\|^2_{\rm th})^2+(w-w_{\rm th})^2\,dt\ \text{(Eq 49)}",
    status="empirical",
    # the setting of the paper's evidence (fig2_params: the Fig 2 rows with their own depth, gain and rate; Fig 5's
    # data distances); no optimizer parameter: Fig 2 / l.120 concern networks trained by gradient descent
    params=fig2_params(),
    validate=_validate_net,
    notes="Operationalisation of 'matches quite well' (stated, not tuned): the fitted Eq 7 leaves at most 10% of the "
          "variance of the three curves unexplained (Eq 49 cost / total variation), and Eq 10 with the fitted "
          "constants and the epoch-0 values (D5) predicts the final |dh|^2 within 10% (catalogue R3 measured 1-3% on "
          "the configurations that fit well; 10% allows seed-to-seed and float32/float64 differences). Runs that have "
          "not learned the data (|dy|^2 off b by >1%) are inconclusive. Default: Table 1 'Shallow' at width 100. "
          "Deep small-initialisation nets (Default, ReLU, Narrow, Intermediate) do NOT satisfy it (catalogue U2 (ii), "
          "E11): see vanrossem.deep_network_discrepancy. Eq 49 units: rectangle rule over recorded epochs (D6). Scope "
          "(fig2_params): the setting of the paper's evidence, i.e. the Fig 2 rows of Table 1 (Default, Shallow, "
          "Narrow, Linear, ReLU, ELU, Tanh, Swish) each with its own depth, gain and rate (no hidden/gain/lr "
          "override), width 50-200 (Narrow's 50 to the 20-layer budget; 500 is the slow reproductions), 6000-12000 "
          "epochs, the data distances of B.1 and Fig 5 (dx in [0.5, 1.5], dy in [0.25, 1]); inconclusive past a "
          "training work of 1.2e10 multiply-adds (~60 s, WORK_MAX); no optimizer parameter (GD only; Adam: "
          "vanrossem.adam_dynamics). Over the former shared ranges (dx, dy up to 10, 3-19 layers, any gain and rate) "
          "sweep 20261126 gave 3 certified, 14 inconclusive, 3 refuted, all refutations outside this setting; over "
          "this scope 19 certified, 1 inconclusive (over budget), 0 refuted (seed 20261126) and 16 certified, 3 "
          "inconclusive (2 over budget, 1 ReLU net not yet learned at 6161 epochs), 1 refuted (seed 5150). Finding "
          "kept (inside the paper's setting, catalogue E11): the 20-layer Default row is refuted on some draws, Eq 10 "
          "with the fitted constants 15% off u_end (sweep 5150 draw 15, width 104) and 41% off at width 200 (seed 0), "
          "while other Default draws certify: 'for all networks' (l.120) does not hold for every initialisation.",
    catalogue="vanrossem §2.5 U2, §2.8 T4, §3 R3",
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
    params=net_params(),
    validate=_validate_net,
    notes="Variants read from the colour-coded LaTeX at l.587 (catalogue U3): factor2 (v' = -2w(...)), square "
          "(u' = -(a/tau_h) w^2), plus (+a/(2 tau_h)(v+w)w/u in w'), noterm (drop (a/tau_h)v/u in v'); each fitted by "
          "the same Eq 49 procedure (grid + Nelder-Mead, (u,v,w) form with a u>0 guard; Eq 7 itself in lifted form). "
          "NOT REPRODUCED (catalogue E10): in our conventions (full-batch GD, PyTorch MSELoss, float64) some "
          "alteration "
          "fits at least as well as Eq 7 -- factor2/plus on shallow and linear nets, square on deep small-init nets. "
          "The numeric check certifies this measured outcome; the falsifier 'paper_ranking' encodes the printed "
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
    """Fit Eq 7 and the four Eq 51 alterations; certified when some alteration fits at least as well as Eq 7
    (residual = min alteration cost / Eq 7 cost, tolerance 1), the catalogue's E10 observation."""
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
    return Outcome(residual=ratios[best], tolerance=1.0, values=values,
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
    params=net_params(),
    validate=_validate_net,
    notes="Two parts. (i) Exact (rounding): for two points and scalar output the Eq 1 loss of the network equals "
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


EPS_ = float(np.finfo(float).eps)


# ===========================================================================
# U5: Adam (C.5, Fig 15)
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
    params=net_params(optimizer="adam", lr=1e-3),
    validate=_validate_net,
    notes="Check (trend): the Eq 49 fit of the Adam-trained net leaves at least 3 times the unexplained fraction of "
          "the same net trained by GD with its Table 1 learning rate (catalogue U5 plan: 'expect the fit cost to rise "
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
    rec, H, cu, c = network(p)
    b, a = p.dy ** 2, p.dx ** 2
    if not _converged(cu, b):
        return _not_converged(cu, b, c)
    f_adam = fitted(p)
    pg = p.replace(optimizer="gd", lr=0.0)
    rg, Hg, cug, cg = network(pg)
    if not _converged(cug, b):
        return _not_converged(cug, b, cg)
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
    params=[p for p in net_params() if p.name not in ("gain",)] + [
        Param.float("gain_small", 0.15, 0.01, 5.0, "the small Xavier gain"),
        Param.float("gain_mid", 0.35, 0.01, 5.0, "an intermediate gain (Table 1 Shallow)"),
        Param.float("gain_large", 1.0, 0.01, 5.0, "the large Xavier gain"),
    ],
    validate=lambda p: _validate_gains(p),
    notes="Measured on the difference loss L_D = (2w - v + b)/8 (the ybar-independent part of Eq 9, catalogue P1): "
          "t_half = first epoch with L_D <= L_D(0)/2, t_10 = first epoch with L_D <= 0.9 L_D(0). Trend assertions: "
          "(i) t_half strictly decreases with the gain; (ii) plateau at small gain: t_10/t_half >= 0.7 (a pure "
          "exponential from t=0 has t_10/t_half = ln(10/9)/ln 2 = 0.152); (iii) the onset ratio t_10/t_half is "
          "smaller at the large gain than at the small gain. Catalogue P1: in networks L_D first rises slightly while "
          "ybar is fitted (coupling excluded by Eq 6), so 'immediate exponential decay' is read after that transient; "
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
    LD = (2 * cu["w"] - cu["v"] + b) / 8
    t = cu["t"]
    i50, i90 = np.argmax(LD <= LD[0] / 2), np.argmax(LD <= 0.9 * LD[0])
    if LD[i50] > LD[0] / 2:
        return math.nan, math.nan, LD
    return float(t[i50]), float(t[i90]), LD


@plateau.numeric
def _(p):
    """Half-times and onset ratios of the difference loss at three gains."""
    b = p.dy ** 2
    res = {}
    series = {}
    for name in ("gain_small", "gain_mid", "gain_large"):
        rec, H, cu, c = network(p.replace(gain=p[name]))
        th, t10, LD = _plateau_times(cu, b)
        if not math.isfinite(th):
            return inconclusive(f"L_D did not halve within {c['epochs']} epochs at gain {p[name]}", gain=p[name])
        res[name] = {"gain": p[name], "t_half": th, "t_10": t10, "onset_ratio": t10 / th, "u0": float(cu["u"][0]),
                     "max_LD_over_LD0": float(LD.max() / LD[0])}
        series[f"gain {p[name]}"] = LD / LD[0]
    ts = [res[k]["t_half"] for k in ("gain_small", "gain_mid", "gain_large")]
    mono = max(ts[1] / ts[0], ts[2] / ts[1])
    t = network(p.replace(gain=p.gain_small))[2]["t"]
    idx = np.unique(np.linspace(0, len(t) - 1, min(200, len(t))).round().astype(int))
    values = {"runs": res, "plot": {"kind": "line", "x": [float(x) for x in t[idx]],
                                    "series": {k: [float(x) for x in s[idx]] for k, s in series.items()},
                                    "xlabel": "epoch", "ylabel": "L_D(t) / L_D(0)",
                                    "title": "difference loss at three initial gains"}}
    parts = {"t_half decreasing in gain (max ratio < 1)": (mono, 1.0),
             "plateau at small gain: 0.7 / (t_10/t_half) <= 1": (0.7 / res["gain_small"]["onset_ratio"], 1.0),
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
    params=net_params(config="Narrow", units=0),
    validate=_validate_net,
    notes="Default: the Table 1 'Narrow' row at full size (20 x 50, 6000 epochs; ~1 s). Measured: the 10%->90% "
          "rise of |dy|^2 takes W_net epochs in the network and W_th in the fitted theory. Trend assertions (catalogue "
          "E11: default net W_th/W_net ~ 10, Eq 10 +24% to +78%): W_th/W_net >= 3 and Eq 10 (fitted) >= 1.1 u_end. "
          "Structural reason (catalogue U2 (iii)): in Eq 7 the escape time is ~ln(1/eps)/lambda_+ and the transition "
          "width a few 1/lambda_+, so plateau/width ~ ln(1/eps)/few, while deep nets have plateau/width ~ 17. This "
          "contradicts the l.120 'for all networks' in our conventions (possibly convention-dependent: D1-D3).",
    catalogue="vanrossem §4 E11, §2.5 U2 (ii)-(iii)",
    covers=("E11",),
)


def _deep_outcome(p):
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
    ratio = (t90 - t10) / (n90 - n10)
    u_end = float(cu["u"][-1])
    pred = eq10_prediction(cu, a, b, f["tau_h"], f["tau_y"])
    values = {"tau_h": f["tau_h"], "tau_y": f["tau_y"], "fit_cost_eq49": f["cost"],
              "unexplained_fraction": f["unexplained"], "network_10_90": [n10, n90], "theory_10_90": [t10, t90],
              "width_ratio": ratio, "plateau_over_width_network": n10 / (n90 - n10),
              "plateau_over_width_theory": t10 / (t90 - t10), "u0": float(cu["u"][0]), "u_end": u_end,
              "eq10_fitted": pred, "eq10_rel_error": (pred - u_end) / u_end,
              "plot": uvw_plot(cu, f, a, b, f"{p.config} ({c['hidden']}x{c['units']}): network vs fitted Eq 7")}
    parts = {"theory/network transition width >= 3": (3.0 / ratio, 1.0),
             "Eq 10 overestimates u_end by >= 10%": (1.1 * u_end / pred, 1.0)}
    return Outcome.from_parts(parts, f"transition width network {n90 - n10:.0f} vs theory {t90 - t10:.0f} epochs",
                              values)


@deep.numeric
def _(p):
    """Transition widths of |dy|^2 (network vs fitted theory) and Eq 10 vs u_end."""
    return _deep_outcome(p)


@deep.reproduction(slow=True)
def _(p):
    """Table 1 'Default' (20 x 500, 6000 epochs, ~1-2 min): catalogue E11 measured network 10->90% 3791->4010 vs
    best-fit theory ~3080->5050, Eq 10 0.1326 vs u_end 0.0792; same two trend assertions."""
    from theorems.claim import Params
    return _deep_outcome(Params({x.name: x.default for x in deep.params}).replace(config="Default",
                                                                                  record_every=10))


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
    params=net_params(config="Narrow", units=0) + [
        Param.int("layer_step", 2, 1, 10, "fit every layer_step-th hidden layer (and the last)")],
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


# ===========================================================================
# T1, T3, T5: the experimental set-up as data
table1 = Claim(
    id="vanrossem.table1_configurations",
    title="Table 1: the two-point configurations used here are the seed's rows",
    label="Table 1",
    section="B.1",
    equation="-",
    lines=(491, 508),
    statement=r"\text{Table 1: 15 two-point configurations (nonlinearity, init gain, learning rate, epochs, units, "
              r"hidden layers)}",
    status="heuristic",
    params=[],
    notes="Data, not a claim. Check: Table 1 parsed from the seed text (l.493-508) has 15 rows and every row this "
          "module runs (TABLE1) equals its parsed row in all six columns. The Convolution, Skip, Dropout rows need "
          "architectures solvers.mlp does not have (not run). Inconclusive when the seed file is not found "
          "($THEOREMS_SEEDS, shared/seeds).",
    catalogue="vanrossem §2.8 T1",
    covers=("T1",),
)


@table1.numeric
def _(p):
    """Parse Table 1 from the seed and compare with the configurations used."""
    path = seed_path()
    if path is None:
        return inconclusive("seed text not found (set THEOREMS_SEEDS)")
    rows = parse_table1(path.read_text(encoding="utf-8"))
    bad = [k for k, v in TABLE1.items() if rows.get(k) != v]
    parts = {"15 rows parsed": (abs(len(rows) - 15), 0),
             "rows used equal the seed's": (len(bad), 0)}
    return Outcome.from_parts(parts, f"{len(rows)} rows parsed; mismatches: {bad}",
                              {"parsed_rows": rows, "mismatched": bad, "not_run": sorted(set(rows) - set(TABLE1))})


data = Claim(
    id="vanrossem.two_point_dataset",
    title="The two-point data: inputs -1, -1+dx, outputs 0.6, 0.6+dy with dx = 0.5, dy = 1",
    label="B.1",
    section="B.1",
    equation="-",
    lines=(483, 485),
    statement=r"x\in\{-1,-1+dx\},\ y\in\{0.6,0.6+dy\},\ dx=0.5,\ dy=1",
    status="heuristic",
    params=[Param.float("dx", 0.5, 0.0, 10.0, "input distance", low_open=True),
            Param.float("dy", 1.0, 0.0, 10.0, "target distance", low_open=True)],
    notes="Data (catalogue T3). Check: dx and dy parsed from the seed prose equal this module's defaults, and "
          "two_point_data(dx, dy) has |x_2 - x_1| = dx, |y_2 - y_1| = dy, x_1 = -1, y_1 = 0.6 exactly (a = dx^2, "
          "b = dy^2 as in the effective theory).",
    catalogue="vanrossem §2.8 T3",
    covers=("T3",),
)


@data.numeric
def _(p):
    """Seed prose vs the data generator."""
    X, Y = two_point_data(p.dx, p.dy)
    parts = {"generator": (abs(X[1, 0] - X[0, 0] - p.dx) + abs(Y[1, 0] - Y[0, 0] - p.dy) + abs(X[0, 0] + 1)
                           + abs(Y[0, 0] - 0.6), 4 * EPS_ * (1 + p.dx + p.dy))}
    path = seed_path()
    vals = {"X": X.ravel().tolist(), "Y": Y.ravel().tolist()}
    if path is not None:
        d = parse_dataset(path.read_text(encoding="utf-8"))
        vals["seed"] = d
        if d["dx"] is None:
            return inconclusive("could not parse dx, dy from the seed prose", **vals)
        defaults = {x.name: x.default for x in data.params}
        parts["seed dx, dy = defaults"] = (abs(d["dx"] - defaults["dx"]) + abs(d["dy"] - defaults["dy"]), 0.0)
        if d["x1"] is None or d["y1"] is None:
            return inconclusive("could not parse x_1, y_1 from the seed prose", **vals)
        parts["seed x_1, y_1 = generator"] = (abs(d["x1"] - X[0, 0]) + abs(d["y1"] - Y[0, 0]), 0.0)
    return Outcome.from_parts(parts, "two-point data", vals)


halfway = Claim(
    id="vanrossem.hidden_layer_halfway",
    title="The layer H is the hidden layer exactly halfway through the network",
    label="App. B",
    section="B",
    equation="-",
    lines=(479, 479),
    statement=r"\text{``The hidden layer } H \text{ considered for all models is always the layer exactly halfway "
              r"through the network'' (l.479)}",
    status="heuristic",
    params=[Param.int("hidden", 20, 1, 200, "number of hidden layers N")],
    notes="Definition (catalogue T5, decision D3): N hidden layers = N+1 affine layers; H = hidden layer (N+1)//2 "
          "(for odd N the halfway point is exactly after hidden layer (N+1)/2; for even N it falls inside the "
          "affine layer after hidden layer N/2, and H = N/2: layer 10 of 20, 1 of 2). Check: "
          "solvers.mlp.hidden_index gives that index, and for every Table 1 row the number of affine layers before "
          "and after H differs by at most one.",
    catalogue="vanrossem §2.8 T5",
    covers=("T5",),
)


@halfway.numeric
def _(p):
    """hidden_index against the halfway rule."""
    Hs = {}
    worst = 0
    for n in sorted({p.hidden, 1, 2, 10, 20}):
        H = mlp.hidden_index([1] + [3] * n + [1])
        before, after = H, n + 1 - H
        worst = max(worst, abs(before - after) - (0 if (n + 1) % 2 == 0 else 1))
        Hs[n] = H
    return Outcome(residual=float(max(worst, 0)), tolerance=0.0, values={"H_by_hidden_layers": Hs},
                   message=f"H = {Hs}")


# ===========================================================================
# T4: the fit loss Eq 49 and the fitting procedure
eq49 = Claim(
    id="vanrossem.fit_loss_eq49",
    title="Eq 49: the two constants are the minimisers of the integrated squared error of the three curves",
    label="Eq 49",
    section="B.1",
    equation="(49)",
    lines=(512, 516),
    statement=r"\int(\|dh\|^2-\|dh\|^2_{\rm th})^2dt+\int(\|dy\|^2-\|dy\|^2_{\rm th})^2dt+\int(w-w_{\rm th})^2dt"
              r"\ \text{minimised over } 1/\tau_h, 1/\tau_y",
    status="heuristic",
    params=[Param.float("tau_h", 200.0, 1.0, 1e4, "true tau_h of the synthetic record (epochs)", search=(50.0, 800.0)),
            Param.float("tau_y", 80.0, 1.0, 1e4, "true tau_y of the synthetic record (epochs)", search=(20.0, 400.0)),
            Param.float("dh2_0", 0.02, 0.0, 10.0, "|dh(0)|^2", low_open=True, search=(1e-3, 0.2)),
            Param.float("dy_0", 1e-3, -10.0, 10.0, "dy(0) (scalar output)", search=(-0.05, 0.05)),
            Param.int("epochs", 6000, 100, 100_000, "record length"),
            Param.int("record_every", 20, 1, 1000, "record spacing")],
    validate=lambda p: _validate_eq49(p),
    notes="A definition (catalogue T4); units: rectangle rule over recorded epochs (D6), so absolute costs are "
          "comparable only within this suite (the paper's 0.92 etc. use unstated units). Check of the procedure: a "
          "synthetic record generated by the lifted Eq 7 (RK4, cfl 0.02) at known constants is fitted back "
          "(grid + Nelder-Mead, cfl 0.1). Error model: the fit's integrator differs from the generator's by ~cfl^4 "
          "relative (~1e-5), and Nelder-Mead stops at xatol 1e-3 in log tau, so the recovered constants agree within "
          "5e-3 relative; records whose |dy|^2 has not reached b/2 by the end, or whose cost does not rise to 10x its value at the "
          "generating constants (the fit's noise floor) when they move by 5e-3, do not determine the constants, and a "
          "search returning a cost above 10x that floor has missed the global minimum (all inconclusive).",
    catalogue="vanrossem §2.8 T4",
    covers=("T4",),
)


def _validate_eq49(p):
    if len(range(0, p.epochs + 1, p.record_every)) < 10:
        raise ParamError(f"epochs / record_every = {p.epochs} / {p.record_every} must give at least 10 recorded "
                         "points")


EQ49_REL_TOL = 5e-3   # the recovered constants' tolerance (relative; see the claim's notes)
EQ49_FATOL = 1e-9     # fit_taus' Nelder-Mead fatol: the search stops with costs that far above the minimum


def _eq49_cost(cu, a, b, th, ty):
    return fit_cost(cu, th, ty, a, b, max_steps=30_000 + len(cu["t"]))


def _eq49_undetermined(cu, a, b, p):
    """inconclusive(...) when the record does not determine the constants to EQ49_REL_TOL, else None, and the
    cost at the generating constants.  The fit's objective (RK4 at cfl 0.1) differs from the generator's (cfl 0.02),
    so its value at the generating constants, c0, is the noise floor of the cost; the record determines the
    constants when moving them by EQ49_REL_TOL (either, both, or opposite) raises the cost to at least 10 c0.  A
    record that does not resolve the motion (tau_y = 8.5 sampled every 484 epochs, or a record whose first sample
    is already on the equilibrium line) leaves a flat valley: the sweep recovered 1.6x and 2.1x both constants."""
    c0 = _eq49_cost(cu, a, b, p.tau_h, p.tau_y)
    if not math.isfinite(c0):
        return inconclusive("the fit's integrator (RK4, cfl 0.1, 30000 steps + one per record) cannot follow the "
                            "record at the generating constants (the motion happens between the first samples): the "
                            "record does not determine the constants", cost_true=c0), c0
    rises = []
    for eh, ey in ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1), (1, -1), (-1, 1)):
        c = _eq49_cost(cu, a, b, p.tau_h * (1 + eh * EQ49_REL_TOL), p.tau_y * (1 + ey * EQ49_REL_TOL))
        rises.append(c)
    worst = min(rises)
    if not worst >= 10 * c0:
        return inconclusive(f"moving the constants by {EQ49_REL_TOL:g} raises the Eq 49 cost only to {worst:.3g} "
                            f"(at the generating constants {c0:.3g}, the fit's noise floor): the record does not "
                            "determine the constants to the check's tolerance", cost_true=c0, cost_perturbed=worst), c0
    return None, c0


def _eq49_search_missed(f, c0):
    """inconclusive(...) when the grid + Nelder-Mead search returned a cost above 10x the noise floor c0 (the cost
    at the generating constants) plus the search's own stopping tolerance EQ49_FATOL: the search missed the global minimum, a limitation of the procedure and not a
    statement about the minimisers of Eq 49; else None."""
    if f["cost"] > 10 * c0 + EQ49_FATOL:
        return inconclusive(f"the Eq 49 search returned ({f['tau_h']:.5g}, {f['tau_y']:.5g}) at cost {f['cost']:.3g}, "
                            f"above 10x the cost {c0:.3g} at the generating constants (+ Nelder-Mead's fatol "
                            f"{EQ49_FATOL:g}): it missed the global minimum "
                            "(grid [T/600, 10 T] + Nelder-Mead)", cost_fit=f["cost"], cost_true=c0)
    return None


@eq49.numeric
def _(p):
    """Fit a synthetic effective-theory record and recover its constants."""
    a, b = 0.25, 1.0
    t = np.arange(0, p.epochs + 1, p.record_every, dtype=float)
    v0 = p.dy_0 ** 2
    w0 = v0 - p.dy_0 * math.sqrt(b)
    u, v, w, ok = theory_uvw(p.dh2_0, v0, w0, t, a, b, p.tau_h, p.tau_y, cfl=0.02, max_steps=2_000_000)
    if not ok:
        return inconclusive("the synthetic record's integration left its step budget", v_end=float(v[-1]))
    if v[-1] < b / 2:
        return inconclusive("the synthetic record does not leave the plateau within the epochs", v_end=float(v[-1]))
    cu = {"t": t, "u": u, "v": v, "w": w}
    why, c0 = _eq49_undetermined(cu, a, b, p)
    if why is not None:
        return why
    f = fit_taus(cu, a, b)
    if not math.isfinite(f["cost"]):
        return inconclusive("no finite Eq 49 fit (the theory left its domain or step budget at every grid point)")
    why = _eq49_search_missed(f, c0)
    if why is not None:
        return why
    rel = max(abs(f["tau_h"] / p.tau_h - 1), abs(f["tau_y"] / p.tau_y - 1))
    return Outcome(residual=rel, tolerance=EQ49_REL_TOL,
                   values={"tau_h_fit": f["tau_h"], "tau_y_fit": f["tau_y"], "fit_cost": f["cost"],
                           "unexplained_fraction": f["unexplained"]},
                   message=f"recovered ({f['tau_h']:.5g}, {f['tau_y']:.5g}) vs ({p.tau_h}, {p.tau_y})")


eq49.property(over=("tau_h", "tau_y", "dh2_0", "dy_0"), max_examples=6)


@eq49.falsifier("true_gradient_units", search=("tau_h", "tau_y"))
def _(p):
    """Wrong variant: 'the fitted constants are those of Eq 6 with the true gradients of Eq 16' (factor 1/4, erratum
    E1; the same orbits at half speed, i.e. constants tau/2).  The Eq 49 fit in Eq 7 units returns tau, not tau/2."""
    a, b = 0.25, 1.0
    t = np.arange(0, p.epochs + 1, p.record_every, dtype=float)
    v0 = p.dy_0 ** 2
    u, v, w, ok = theory_uvw(p.dh2_0, v0, v0 - p.dy_0, t, a, b, p.tau_h, p.tau_y, cfl=0.02, max_steps=2_000_000)
    if not ok:
        return inconclusive("the synthetic record's integration left its step budget")
    if v[-1] < b / 2:
        return inconclusive("the synthetic record does not leave the plateau within the epochs")
    # same record, constants fitted as if the generator used the factor 1/4: tau' = tau/2 reproduces it exactly
    cu = {"t": t, "u": u, "v": v, "w": w}
    f = fit_taus(cu, a, b)
    rel = max(abs(f["tau_h"] / (p.tau_h / 2) - 1), abs(f["tau_y"] / (p.tau_y / 2) - 1))
    return Outcome(residual=rel, tolerance=5e-3, values={"tau_h_fit": f["tau_h"], "tau_y_fit": f["tau_y"]},
                   message="constants expected under the other time unit (tau/2)")
