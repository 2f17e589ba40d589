r"""App. 4.A.3.1 Surjectivity on C of f_eps (seed l.3210-3229) and App. 4.A.3.3 The entire function
f_eps has a derivative with no zeros off the real axis (l.3267-3288; erratum E4.1).  Claims:
``sander.f_eps_surjective`` (Lemma 4.5, l.3212-3226), ``sander.f_eps_prime_zeros`` (Lemma 4.6, l.3269-3285).

Conventions (kappa = 1/(2 eps), f_eps, G_eps as printed in the main text l.3025, not the Lemma 4.6 print
of erratum E4.1): :mod:`solvers.psi_eps` and ``ch4_4_3c_psi_threshold``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np

from solvers import psi_eps as pe
from theorems.claim import Claim, Outcome, Param, inconclusive

EPS = float(np.finfo(float).eps)       # 2.2e-16
U = EPS / 2                            # unit roundoff


# ===========================================================================
# 4. Lemma 4.5: f_eps is surjective on C
claim_sur = Claim(
    id="sander.f_eps_surjective",
    title="The entire function f_eps is surjective on C",
    label="Lemma 4.5",
    section="4.A.3.1",
    lines=(3212, 3226),
    statement=r"\forall\varepsilon>0:\ f_\varepsilon(\mathbb C)=\mathbb C,\quad "
              r"f_\varepsilon(z)=e^{-\frac1{2\varepsilon}}\sum_{n}\Big(\frac1{(2n)!}+\frac1{2\varepsilon(2n+1)!}\Big)z^n",
    status="holds",
    params=[
        Param.float("eps", 1.0, 1e-6, 1000.0, "eps > 0"
                    " (>= 1e-6: below, the solver of f_eps(z) = w leaves double range)", search=(0.05, 20.0)),
        Param.seed("seed of the targets w"),
        Param.float("radius", 5.0, 0.0, 1000.0, "targets w uniform in the box [-radius, radius]^2", low_open=True),
        Param.int("n_targets", 6, 1, 50, "number of random targets (plus the fixture w = -0.8)"),
    ],
    notes="What is certified: for each sampled target w, python-flint (acb) Krawczyk's test proves a "
          "preimage exists in a small box of the s-plane (z = s^2), i.e. f_eps(z) = w has a solution; the "
          "float64 Newton residual is reported too.  What is not: surjectivity itself is a statement about "
          "all of C (the proof: Hadamard factorisation of an order-1 zero-free entire function plus "
          "evenness); no finite computation certifies it.  The falsifier shows the evenness step matters.",
    catalogue="sander_part23 §2.1 L4.5",
)


def _preimage_newton(w, eps, fun=None, dfun=None):
    """Solve fun(z) = w (default f_eps) by damped Newton from 36 starts; returns (z, |fun(z) - w|)."""
    fun = fun or (lambda z: pe.f_eps(z, eps))
    dfun = dfun or (lambda z: pe.f_eps_prime(z, eps))
    k = 0.5 / eps
    best = (None, math.inf)
    starts = [r * np.exp(1j * ph) for r in (1.0, 10.0, 40.0, 120.0) for ph in np.linspace(0.1, 2 * math.pi, 9)]
    # asymptotic start: f ~ e^{s - kappa}/2 (1 + kappa/s)  =>  s ~ log(2 w) + kappa
    if w != 0:
        s0 = np.log(2 * complex(w)) + k
        starts.insert(0, s0 * s0)
    for z in starts:
        z = complex(z)
        with np.errstate(all="ignore"):
            for _ in range(80):
                F = complex(fun(np.complex128(z))) - w
                D = complex(dfun(np.complex128(z)))
                if not (np.isfinite(F) and np.isfinite(D)) or D == 0:
                    break
                step = F / D
                if abs(step) > 0.5 * (abs(z) + 1):
                    step *= 0.5 * (abs(z) + 1) / abs(step)
                z -= step
                if abs(step) < 1e-15 * (abs(z) + 1):
                    break
            F = abs(complex(fun(np.complex128(z))) - w)
        if np.isfinite(F) and F < best[1]:
            best = (z, F)
        if best[1] < 1e-13 * (abs(w) + 1):
            break
    return best


def _krawczyk_preimage(w, z, eps, prec=128, in_s=False, exp_only=False):
    """acb Krawczyk test for F(s) = e^{-kappa}(cosh s + kappa sinh(s)/s) - w near s = sqrt(z)
    (or s = z when in_s; exp_only: F(s) = e^{s - kappa} - w, the falsifier's function).  K(S) inside the
    box S proves a zero of F in S (F analytic; Krawczyk's operator with Y = 1/F'(mid))."""
    import flint
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        acb, arb = flint.acb, flint.arb
        k = 1 / (2 * arb(eps))
        ek = (-k).exp()
        W = acb(w.real, w.imag)
        s = complex(z) if in_s else complex(np.sqrt(complex(z)))
        if abs(s) < 1e-3 and not exp_only:
            return False, 0.0

        if exp_only:
            def F(S):
                return (S - k).exp() - W

            def dF(S):
                return (S - k).exp()
        else:
            def F(S):
                return ek * (S.cosh() + k * S.sinh() / S) - W

            def dF(S):
                return ek * (S.sinh() + k * (S * S.cosh() - S.sinh()) / (S * S))
        m = acb(s.real, s.imag)
        Y = 1 / dF(m)
        r = max(1e-9 * abs(s), 1e-12)
        for _ in range(6):
            Sb = acb(arb(s.real, r), arb(s.imag, r))
            K = m - Y * F(m) + (1 - Y * dF(Sb)) * (Sb - m)
            if Sb.contains(K):
                return True, r
            r *= 8
        return False, r
    finally:
        flint.ctx.prec = old


@claim_sur.numeric
def sur_numeric(p):
    """Preimages of sampled targets w (and w = -0.8 < lambda_1): Newton residual and an acb Krawczyk proof."""
    rng = np.random.default_rng(p.seed)
    ws = [complex(-0.8, 0.0)] + list(p.radius * (rng.uniform(-1, 1, p.n_targets) + 1j * rng.uniform(-1, 1, p.n_targets)))
    parts, rows = {}, []
    proved = 0
    worst = 0.0
    for i, w in enumerate(ws):
        z, res = _preimage_newton(w, p.eps)
        if z is None:
            parts[f"w{i}"] = (math.inf, 1.0)
            continue
        fp = complex(pe.f_eps_prime(np.complex128(z), p.eps))
        s = abs(np.sqrt(complex(z)))
        # backward error: z known to u|z| moves f by |f'| u |z|; evaluating f: u (4 + kappa + |s|) times
        # the size of its exponential terms, which is <= |f(|z|)| (f majorised on the positive axis)
        size = float(pe.f_eps(abs(complex(z)), p.eps)) if abs(complex(z)) < 1e5 else abs(w) + 1
        tol = 64 * U * (abs(fp) * abs(complex(z)) + (4 + 0.5 / p.eps + s) * max(size, abs(w)))
        ok, r = _krawczyk_preimage(w, z, p.eps)
        proved += ok
        parts[f"w{i}"] = (res, tol)
        worst = max(worst, res / tol if tol > 0 else 0)
        rows.append({"w": [w.real, w.imag], "z": [complex(z).real, complex(z).imag], "residual": res,
                     "abs_fprime": abs(fp), "krawczyk_proved": ok, "box_radius_s": r})
    parts["krawczyk_all_proved"] = (len(ws) - proved, 0.0)
    return Outcome.from_parts(parts, f"f_eps(z) = w solved for {len(ws)} targets", {"preimages": rows})


claim_sur.property(over=("eps", "seed"), max_examples=8)


@claim_sur.falsifier("odd_part_dropped", search=("eps",))
def sur_falsifier(p):
    """The evenness step matters: the non-even order-1 entire function e^{s - kappa} omits w = 0.  Newton
    drives |e^{s-kappa}| to ~0 (0 is an asymptotic value, so a small float residual proves nothing), but
    Krawczyk's test -- the existence proof the true check requires -- fails at the point reached."""
    k = 0.5 / p.eps
    fun = lambda s: np.exp(s - k)        # noqa: E731  (variable s; entire of order 1, omits 0)
    dfun = lambda s: np.exp(s - k)       # noqa: E731
    z, res = _preimage_newton(0.0, p.eps, fun=fun, dfun=dfun)
    ok, r = _krawczyk_preimage(0.0 + 0j, z, p.eps, in_s=True, exp_only=True) if z is not None else (False, 0.0)
    return Outcome.from_parts({"krawczyk_all_proved": (0 if ok else 1, 0.0)},
                              "e^{s-kappa} = 0: existence of a zero near the Newton limit point",
                              {"best_point": [complex(z).real, complex(z).imag] if z is not None else None,
                               "newton_residual": res, "krawczyk_proved": ok})


# ===========================================================================
# 5. Lemma 4.6 (erratum E4.1): f'_eps(z) != 0 off the real axis
claim_zero = Claim(
    id="sander.f_eps_prime_zeros",
    title="f'_eps has no non-real zeros (Lemma 4.6; printed G_eps misses 1/z)",
    label="Lemma 4.6",
    section="4.A.3.3",
    lines=(3269, 3285),
    statement=r"G_\varepsilon(z)=e^{-\frac1{2\varepsilon}}\big(\cos z+\tfrac1{2\varepsilon}\sin z\big)=f_\varepsilon(-z^2),"
              r"\ G_\varepsilon\in\mathcal{LP}\Rightarrow f'_\varepsilon(z)\ne0\ \ \forall z\in\mathbb C\setminus\mathbb R",
    corrected=r"G_\varepsilon(z)=e^{-\frac1{2\varepsilon}}\big(\cos z+\tfrac{\sin z}{2\varepsilon z}\big)=f_\varepsilon(-z^2);"
              r"\ \text{the zeros of }G_\varepsilon\text{ and }G'_\varepsilon\text{ are real, hence }f'_\varepsilon(z)\ne0"
              r"\ \forall z\notin\mathbb R\ (\text{the zeros of }f'_\varepsilon\text{ are real and }<0)",
    status="erratum",
    params=[
        Param.float("eps", 1.0, 0.0, 1000.0, "eps > 0", low_open=True, search=(0.05, 10.0)),
        Param.int("m", 12, 1, 40, "rectangle half-width R = (m + 1/4) pi", search=(2, 12)),
        Param.float("H", 3.0, 0.5, 10.0, "rectangle half-height", search=(1.0, 6.0)),
    ],
    notes="Numeric: winding numbers of g = e^kappa G and g' along |Re z| <= R, |Im z| <= H (phase steps "
          "forced below pi/4 by refinement) equal the numbers of real zeros in (-R, R) counted by sign "
          "changes (plus the simple zero of g' at 0): no non-real zero of G or G' in the box, hence none of "
          "f'_eps in the image region {-z^2}.  Finite boxes only: the Laguerre-Polya argument covers the rest. "
          "Also 'hence those of f_eps as well' (l.3287) should read f'_eps.",
    catalogue="sander_part23 §2.1 L4.6; §4 E4.1",
)


def _gk(z, kappa):
    return np.cos(z) + kappa * np.sinc(z / np.pi)


def _gk1(z, kappa):
    z = np.asarray(z)
    small = np.abs(z) < 1e-3
    zz = np.where(small, 1.0, z)
    q = np.where(small, -z / 3 + z**3 / 30, (zz * np.cos(zz) - np.sin(zz)) / (zz * zz))
    return -np.sin(z) + kappa * q


def _winding(fun, R, H, n0=4000):
    corners = [complex(-R, -H), complex(R, -H), complex(R, H), complex(-R, H), complex(-R, -H)]
    n = n0
    for _ in range(6):
        pts = np.concatenate([np.linspace(corners[i], corners[i + 1], n, endpoint=False) for i in range(4)] + [[corners[0]]])
        v = fun(pts)
        dphi = np.angle(v[1:] / v[:-1])
        if np.all(np.isfinite(dphi)) and np.max(np.abs(dphi)) < math.pi / 4:
            return float(np.sum(dphi) / (2 * math.pi)), n, float(np.max(np.abs(dphi)))
        n *= 4
    return None, n, float(np.max(np.abs(dphi)))


def _real_zero_count(fun, R, odd_zero_at_0):
    x = np.linspace(1e-9, R, 400001)
    v = fun(x)
    c = int(np.sum(np.sign(v[1:]) * np.sign(v[:-1]) < 0))
    return 2 * c + (1 if odd_zero_at_0 else 0)


def _zeros_outcome(p, kappa):
    R = (p.m + 0.25) * math.pi
    wg, ng, mg = _winding(lambda z: _gk(z, kappa), R, p.H)
    wd, nd, md = _winding(lambda z: _gk1(z, kappa), R, p.H)
    if wg is None or wd is None:
        return inconclusive("phase sampling could not resolve the winding number", R=R)
    rg = _real_zero_count(lambda x: _gk(x, kappa), R, False)
    rd = _real_zero_count(lambda x: _gk1(x, kappa), R, True)
    if abs(wg - round(wg)) > 1e-6 or abs(wd - round(wd)) > 1e-6:
        return inconclusive("winding number not an integer to 1e-6", winding_G=wg, winding_Gprime=wd)
    parts = {"G_zeros_all_real": (abs(round(wg) - rg), 0.0), "Gprime_zeros_all_real": (abs(round(wd) - rd), 0.0)}
    vals = {"R": R, "H": p.H, "kappa": kappa, "zeros_G_in_box": round(wg), "real_zeros_G": rg,
            "zeros_Gprime_in_box": round(wd), "real_zeros_Gprime": rd, "samples_per_side": [ng, nd],
            "max_phase_step": [mg, md]}
    return parts, vals


@claim_zero.numeric
def zeros_numeric(p):
    """Argument-principle counts of the zeros of G and G' in a box = their real-zero counts, and
    G(z) = f_eps(-z^2) (corrected form) on random complex z."""
    k = 0.5 / p.eps
    r = _zeros_outcome(p, k)
    if isinstance(r, Outcome):
        return r
    parts, vals = r
    rng = np.random.default_rng(1)
    z = rng.uniform(-6, 6, 40) + 1j * rng.uniform(-3, 3, 40)
    lhs = pe.G_eps(z, p.eps)
    rhs = np.exp(-k) * _gk(z, k)
    scale = np.exp(-k) * (np.cosh(np.abs(z.imag)) * (1 + k / np.maximum(np.abs(z), 1e-3)))
    # both sides rounding: u (4 + kappa + |z|) times the size of the exponential terms
    parts["G_equals_f(-z^2)"] = (float(np.max(np.abs(lhs - rhs) / scale)), 64 * U * (4 + k + 6))
    return Outcome.from_parts(parts, "zeros of G_eps and G'_eps in the box are all real", vals)


claim_zero.property(over=("eps", "m", "H"), max_examples=10)


@claim_zero.reproduction
def zeros_reproduction(p):
    """Catalogue L4.6 (ch4_zeros.py): |Re z| < 60.5, |Im z| < H in {3, 8}, eps in {0.05, 0.25, 1, 4}: 38 zeros
    of G and 39 of G' in the box, all real; kappa = -1.5, -3: 38 zeros of G in the box, only 36 real;
    printed G(0.7) = 0.659269 vs f_1(-0.49) = 0.742999 (eps = 1)."""
    R = 60.5
    parts, rows = {}, []
    for eps in (0.05, 0.25, 1.0, 4.0):
        k = 0.5 / eps
        for H in (3.0, 8.0):
            wg = _winding(lambda z: _gk(z, k), R, H)[0]
            wd = _winding(lambda z: _gk1(z, k), R, H)[0]
            rg = _real_zero_count(lambda x: _gk(x, k), R, False)
            rd = _real_zero_count(lambda x: _gk1(x, k), R, True)
            rows.append({"eps": eps, "H": H, "G_box": wg, "G_real": rg, "Gp_box": wd, "Gp_real": rd})
            parts[f"G[{eps},{H}]"] = (abs(round(wg) - 38) + abs(rg - 38), 0.0)
            parts[f"G'[{eps},{H}]"] = (abs(round(wd) - 39) + abs(rd - 39), 0.0)
    for k in (-1.5, -3.0):
        wg = _winding(lambda z: _gk(z, k), R, 3.0)[0]
        rg = _real_zero_count(lambda x: _gk(x, k), R, False)
        rows.append({"kappa": k, "G_box": wg, "G_real": rg})
        parts[f"kappa={k}"] = (abs(round(wg) - 38) + abs(rg - 36), 0.0)
    pg = float(pe.G_eps_lemma46_printed(0.7, 1.0))
    tg = float(pe.f_eps(-0.49, 1.0))
    parts["printed_G(0.7)"] = (abs(pg - 0.659269), 5e-7)
    parts["f_1(-0.49)"] = (abs(tg - 0.742999), 5e-7)
    return Outcome.from_parts(parts, "zero counts of the catalogue reproduced", {"rows": rows, "printed": pg, "true": tg})


@claim_zero.falsifier("stated")
def zeros_stated(p):
    """The printed G = e^{-kappa}(cos z + kappa sin z) is not f_eps(-z^2): at z = 0.7, eps = 1,
    0.659269 vs 0.742999; and its minimum on R is -0.6781 != lambda_1 = -0.6135."""
    k = 0.5 / p.eps
    z = np.array([0.7, 1.3, 2.9, 4.0])
    printed = pe.G_eps_lemma46_printed(z, p.eps)
    true = pe.f_eps(-z * z, p.eps)
    diff = float(np.max(np.abs(printed - true)))
    return Outcome(residual=diff, tolerance=64 * U * (4 + k) * (1 + k), counterexample={
        "z": z.tolist(), "printed_G": printed.tolist(), "f_eps(-z^2)": true.tolist(),
        "printed_min_on_R": -math.exp(-k) * math.sqrt(1 + k * k), "lambda_eps": pe.lambda_eps(p.eps)[0]},
        message="max |G_printed(z) - f_eps(-z^2)| over z = 0.7, 1.3, 2.9, 4")


@claim_zero.falsifier("negative_kappa")
def zeros_negative_kappa(p):
    """Drop eps > 0: kappa = -3 (eps = -1/6) gives G two non-real zeros (catalogue: 38 in the box, 36 real),
    so the Laguerre-Polya step fails."""
    r = _zeros_outcome(p, -3.0)
    if isinstance(r, Outcome):
        return r
    parts, vals = r
    return Outcome.from_parts(parts, "kappa = -3: zero counts in the box vs on the axis", vals)
