"""Chapter 3, App 3.B.5-3.B.6 "Proofs of Proposition 3.6 and Theorem 3.7" (seed l.2496-2631): the proof
inequality (3.51) of Prop 3.6 with erratum E16 (l.2532-2540; ``sander.pl_proof_inequality``), the matrix-Chernoff
prefactor n (E13, l.2572 and l.2750, and the 2C typo; ``sander.chernoff_prefactor``), Remark 3.17's direction
'2/r >= eps' (T3.10/E17, l.2608-2612; ``sander.remark317_direction``), Thm 3.7's threshold with E11 (l.2614-2628;
``sander.long_time_threshold``) and Remark 3.18, 'C does not depend on m' -- K_1 grows with m (E15, l.2630;
``sander.remark318_m_dependence``).

Catalogue sander_part1 §2.7 (P3.2, P3.3), §2.8 (T3.10), §4 E11, E13, E15, E16.  Conventions: see :mod:`theorems.sander._resnet_harness`.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy import stats

from solvers import resnet_train as rt
from theorems.claim import Claim, Outcome, Param, ParamError, inconclusive


EPS = float(np.finfo(float).eps)


pl_ineq = Claim(
    id="sander.pl_proof_inequality",
    title="Proof of Prop 3.6: (1 - 2 sqrt2 K/L)^L >= e^{-2 sqrt2 K} is false; (1 - sqrt2 K/L)^L >= e^{-2 sqrt2 K} holds",
    label="Prop 3.6 (proof, (3.51))",
    section="3.B.5",
    equation="(3.51)",
    lines=(2532, 2540),
    statement=r"\Big(1-\frac{2\sqrt2K_\sigma}{L}\Big)^L\ge e^{-2\sqrt2K_\sigma}",
    status="erratum",
    bound=True,
    corrected=r"L\ge2\sqrt2K_\sigma\Rightarrow\Big(1-\frac{\sqrt2K_\sigma}{L}\Big)^L\ge e^{-2\sqrt2K_\sigma}"
              r"\ (\|V_k\|_F\le M\le\tfrac12\text{ halves the per-layer factor; (3.51) survives)}",
    params=[
        Param.float("K", 1.0, 0.0, 20.0, "Lipschitz constant K_sigma (tanh: 1)", low_open=True, search=(0.05, 5.0)),
        Param.int("L", 4, 1, 10**6, "depth (the stated form fails for every L; the corrected form needs L >= 2 sqrt2 K)"),
    ],
    notes="(1 - a/L)^L < e^{-a} for every L > a > 0 (log(1-x) < -x), so the printed inequality is always false: "
          "0.00736 < 0.0591 at L = 4, 0.0567 < 0.0591 at L = 100 (K = 1).  The proof's constraint gives |V_k|_F <= M <= 1/2, "
          "so the factor is 1 - sqrt2 K/L, and -log(1-x) <= 2x on [0, 1/2] gives the corrected form.  Evaluated in mpmath (50 digits).",
    catalogue="sander_part1 §2.7 P3.2; §4 E16",
    covers=("P3.2", "E16"),
)


def _plineq(p, c):
    import mpmath as mp
    with mp.workdps(50):
        a = 2 * mp.sqrt(2) * p.K
        Ls = sorted({p.L, *[int(x) for x in np.unique(np.geomspace(max(p.L, 1), max(p.L, 1) * 1e4, 40).astype(int))]})
        worst, wl = -mp.inf, None
        for L in Ls:
            base = 1 - c * a / L
            if base <= 0:
                continue
            r = -a - L * mp.log(base)          # log e^{-a} - log lhs  (> 0: violated)
            if r > worst:
                worst, wl = r, L
        if wl is None:
            return inconclusive("1 - c a/L <= 0 for every L of the ladder")
        return Outcome(residual=float(worst), tolerance=1e-40, values={
            "worst_L": wl, "lhs_at_worst": float((1 - c * a / wl) ** wl), "rhs": float(mp.e ** (-a)),
            "tightness": float(mp.e ** worst)},  # rhs / lhs at the worst L of the ladder (1 = equality)
            message="max_L [log e^{-a} - log (1 - c a/L)^L] (must be <= 0)")


@pl_ineq.numeric
def _(p):
    """(1 - sqrt2 K/L)^L >= e^{-2 sqrt2 K} on a geometric ladder of L >= max(L, 2 sqrt2 K)."""
    Lmin = math.ceil(2 * math.sqrt(2) * p.K)
    return _plineq(p.replace(L=max(p.L, Lmin)), 0.5)


pl_ineq.property(over=("K",), max_examples=15)


@pl_ineq.falsifier("stated")
def _(p):
    """(1 - 2 sqrt2 K/L)^L >= e^{-2 sqrt2 K}: false at L = 4, K = 1 (0.00736 < 0.0591)."""
    return _plineq(p, 1.0)


#: (per-layer constant c in (1 - c K/L)^L >= e^{-2 sqrt2 K}, largest x = cK/L allowed by the hypothesis on L)
PL_FORMS = {"corrected": (sp.sqrt(2), sp.Rational(1, 2)),                 # L >= 2 sqrt2 K
            "printed_2sqrt2": (2 * sp.sqrt(2), sp.Integer(1)),             # every L > 2 sqrt2 K
            "depth_hypothesis_dropped": (sp.sqrt(2), sp.Integer(1))}       # every L > sqrt2 K


def _pl_failures(form):
    """With x = cK/L the inequality is L log(1-x) >= -2 sqrt2 K, i.e. g(x) = log(1-x) + (2 sqrt2/c) x >= 0 on
    (0, X].  g(0) = 0 and g'' < 0 on (0, 1) (sympy inequality solver), so g >= 0 on (0, X] iff g(X-) >= 0 (a one-sided
    limit).  Returns (the number of failed conditions, g(X-))."""
    c, X = PL_FORMS[form]
    x = sp.Symbol("x", positive=True)
    g = sp.log(1 - x) + 2 * sp.sqrt(2) / c * x
    convex_part = sp.solve_univariate_inequality(sp.diff(g, x, 2) >= 0, x, relational=False).intersect(
        sp.Interval.open(0, 1))
    end = sp.limit(g, x, X, "-")
    return int(g.subs(x, 0) != 0) + int(convex_part != sp.S.EmptySet) + int(not bool(end >= 0)), end


@pl_ineq.symbolic(timeout=30)
def _(p):
    """Corrected (3.51): with x = sqrt2 K/L <= 1/2, g(x) = log(1-x) + 2x is concave with g(0) = 0 and g(1/2) = 1 - log 2
    >= 0, so L log(1 - sqrt2 K/L) >= -2 sqrt2 K for L >= 2 sqrt2 K."""
    bad, end = _pl_failures("corrected")
    return Outcome(residual=bad, tolerance=0, values={"method": "sympy inequality solver and one-sided limit",
                   "instances": ["x in (0, 1/2]"], "g_at_endpoint": str(end),
                   "proved": "(1 - sqrt2 K/L)^L >= e^{-2 sqrt2 K} for L >= 2 sqrt2 K"},
                   message="failed conditions")


@pl_ineq.mutant({"printed_2sqrt2": "(3.51) as printed, (1 - 2 sqrt2 K/L)^L >= e^{-2 sqrt2 K}: g = log(1-x) + x < 0",
                 "depth_hypothesis_dropped": "corrected factor without L >= 2 sqrt2 K: g(1-) = -oo"}, timeout=30)
def _(p, variant):
    """The inequality perturbed, through the same concavity argument: it must fail."""
    bad, end = _pl_failures(variant)
    return Outcome(residual=bad, tolerance=0, values={"failed_conditions": bad, "g_at_endpoint": str(end)},
                   message=f"{bad} conditions fail for {variant}: g at the end of the range = {end}")


pl_ineq.tightness(over=("K", "L"), max_examples=30)


th37 = Claim(
    id="sander.long_time_threshold",
    title="Thm 3.7's small-target threshold: l(0) <= c3^2 c4^2 / (64 e^{2K} max^2 n^4 q^2) (printed q^3)",
    label="Thm 3.7 (proof)",
    section="3.B.6",
    equation="(3.22)",
    lines=(2614, 2628),
    statement=r"\mu\ge\max(\cdot)\tfrac{8e^K}{M}\sqrt{\ell_0}\iff\ell_0\le\frac{c_3^2c_4^2}{64n^4q^3\max^2e^{2K}}"
              r"\quad(M=\tfrac{c_3}{\sqrt{nq}},\ \mu=\tfrac{c_4}{n\sqrt{nq}})",
    status="erratum",
    corrected=r"\mu\ge\max(\cdot)\tfrac{8e^K}{M}\sqrt{\ell_0}\iff\ell_0\le\frac{c_3^2c_4^2}{64n^4q^2\max^2e^{2K}}"
              r"\ (\text{the printed }q^3\text{ is sufficient, stricter by }1/q)",
    params=[Param.int("n", 10, 1, 10**6, "samples", search=(1, 1000)), Param.int("q", 16, 1, 10**4, "hidden dimension", search=(1, 500)),
            Param.float("c3", 3.28e-3, 0.0, 1.0, "c_3", low_open=True, search=(1e-4, 0.5)),
            Param.float("c4", 4.12e-11, 0.0, 1.0, "c_4", low_open=True, search=(1e-12, 1e-2)),
            Param.float("K", 1.0, 0.0, 50.0, "K (Prop 3.9)", search=(0.0, 10.0)),
            Param.float("mx", 1.0, 0.0, 1e3, "max(M_B K, M_B M_X, M_A M_X)", low_open=True, search=(0.1, 10.0))],
    notes="Typo, conservative: the printed q^3 condition implies the q^2 one, so Thm 3.7 stands; the equivalence "
          "as printed is wrong.  Symbolic only (the constants c_3, c_4 are vacuous at CPU scale: c_4 = 4.1e-11 for tanh).",
    catalogue="sander_part1 §2.7 P3.3; §4 E11; §3.1 D16",
    covers=("D16", "P3.3", "E11"),
)


def _th37(power, n_power=4, const=64):
    c3, c4, n, q, K, mx, l0 = sp.symbols("c3 c4 n q K mx l0", positive=True)
    M, mu = c3 / sp.sqrt(n * q), c4 / (n * sp.sqrt(n * q))
    thr = sp.solve(sp.Eq(mu, mx * 8 * sp.exp(K) / M * sp.sqrt(l0)), l0)[0]
    printed = c3 ** 2 * c4 ** 2 / (const * n ** n_power * q ** power * mx ** 2 * sp.exp(2 * K))
    diff = sp.simplify(thr / printed - 1)
    return Outcome(residual=int(diff != 0), tolerance=0, values={"derived": str(thr), "compared": str(printed),
                   "ratio_minus_1": str(diff), "method": "sympy.solve"}, message="derived threshold != compared form")


def _th37_num(p, power):
    # in logarithms: c3^2 c4^2 reaches 1e-650 within the declared ranges (c3, c4 down to 5e-324), where l0
    # underflows to 0 and mu to 0 in floating point.  log mu - log rhs is the relative gap |mu - rhs|/mu to first
    # order; rounding: each of the ~10 log terms carries eps |term|, so the tolerance is 20 eps (1 + sum |terms|)
    lc3, lc4, ln, lq, lmx = (math.log(v) for v in (p.c3, p.c4, p.n, p.q, p.mx))
    log_M = lc3 - 0.5 * (ln + lq)
    log_mu = lc4 - ln - 0.5 * (ln + lq)
    log_l0 = 2 * lc3 + 2 * lc4 - math.log(64) - 2 * p.K - 2 * lmx - 4 * ln - power * lq
    log_rhs = lmx + math.log(8) + p.K - log_M + 0.5 * log_l0
    terms = (lc3, lc4, ln, lq, lmx, p.K, math.log(64))
    tol = 20 * EPS * (1 + sum(abs(t) for t in terms))
    ex = lambda v: math.exp(v) if v < 709.0 else math.inf  # noqa: E731  (the values, not the test, may overflow)
    return Outcome(residual=abs(log_mu - log_rhs), tolerance=tol,
                   values={"l0_threshold": ex(log_l0), "log_l0_threshold": log_l0, "mu": ex(log_mu),
                           "rhs": ex(log_rhs), "log_mu": log_mu, "log_rhs": log_rhs},
                   message="|log mu - log(max 8 e^K/M sqrt(l0))| at the threshold (equality expected)")


@th37.numeric
def _(p):
    """At l0 = c3^2 c4^2 / (64 e^{2K} max^2 n^4 q^2) the condition holds with equality (float64)."""
    return _th37_num(p, 2)


th37.property(over=("n", "q", "c3", "c4", "K", "mx"), max_examples=15)


@th37.falsifier("stated_numeric")
def _(p):
    """The printed q^3 threshold is not where the condition becomes an equality (off by sqrt q in mu)."""
    return _th37_num(p, 3)


@th37.symbolic(timeout=30)
def _(p):
    """Solve mu = max 8 e^K/M sqrt(l0) for l0: c3^2 c4^2 / (64 e^{2K} max^2 n^4 q^2)."""
    return _th37(2)


#: misprints of the corrected threshold other than the printed q^3 (the falsifier 'stated'): (q power, n power, constant)
TH37_MUTANTS = {"n_cubed": (2, 3, 64), "constant_8": (2, 4, 8)}


@th37.mutant({"n_cubed": "n^3 instead of n^4 in the threshold: the derived threshold differs by a factor n",
              "constant_8": "8 instead of 64 = 8^2 (square of the 8 in (3.22) forgotten)"}, timeout=30)
def _(p, variant):
    """The corrected threshold perturbed, through the same sympy.solve comparison: it must differ."""
    return _th37(*TH37_MUTANTS[variant])


@th37.falsifier("stated")
def _(p):
    """The printed q^3: the derived threshold differs by a factor q."""
    return _th37(3)


# ===========================================================================
# E13: the prefactor n of the matrix Chernoff term (l.2572) and the 2C typo (l.2750)
pref = Claim(
    id="sander.chernoff_prefactor",
    title="Proof of Prop 3.6 (l.2572): the matrix-Chernoff failure term needs the dimension prefactor n",
    label="Prop 3.6 (proof, l.2572), Lemma 3.24 (l.2750)",
    section="3.B.5, 3.C",
    equation="l.2572",
    lines=(2570, 2573),
    statement=r"P\big(\lambda_{\min}(\textstyle\sum_kX_k)\le t\mu\big)\le\exp\!\big(-\tfrac{(1-t)^2\mu}{2R}\big)"
              r"\ \ (\text{l.2572: no factor }n)",
    status="erratum",
    bound=True,
    corrected=r"P\big(\lambda_{\min}(\textstyle\sum_kX_k)\le t\mu\big)\le n\exp\!\big(-\tfrac{(1-t)^2\mu}{2R}\big)"
              r"\ (\text{as at l.2606});\ \text{l.2750: }e^{-d/(2Cn^{2/r})}",
    params=[Param.int("n", 1000, 1, 10**6, "matrix dimension n (number of independent diagonal entries)", search=(1, 5000)),
            Param.float("mu_over_R", 40.0, 1.0, 2000.0, "mu/R = N p", search=(5.0, 200.0)),
            Param.float("t", 0.5, 0.0, 1.0, "threshold fraction", low_open=True, high_open=True),
            # N >= 2001 > max mu/R (audit issue 21: N from 10 drew N <= mu/R, p >= 1, in 5 of 20 sweep draws, rejected)
            Param.int("N", 100_000, 2001, 10**7, "number of summands (> mu/R, so p = mu/(RN) < 1)")],
    validate=lambda p: (_ for _ in ()).throw(ParamError(
        f"parameters: mu_over_R={p.mu_over_R} must be < N={p.N}")) if p.mu_over_R >= p.N else None,
    notes="E13.  Instance: X_k = R diag(b_k), b_k in {0,1}^n with i.i.d. Bernoulli(p) entries (lambda_max(X_k) <= R, "
          "mu = lambda_min(E sum) = N p R); lambda_min(sum) is the minimum of n independent Binomial(N, p) counts, so "
          "P = 1 - (1 - F)^n exactly (F = scipy.stats.binom.cdf).  With the (1-t)^2 exponent (E12 corrected), the "
          "bound without n fails (n = 1000, mu/R = 40: P = 0.31 > 6.7e-3); with n it holds.  The l.2750 typo "
          "(d/(Cn^{2/r}) against d/(2Cn^{2/r}) in the next line and at l.2572) involves the unknown cited constant C and "
          "is recorded only.  Error model: logcdf accurate to 1e-12 relative; margin 1e-9 (1 + |log P|).",
    catalogue="sander_part1 §2.8 T3.9; §4 E13",
    covers=("E13",),
)


def _pref(p, with_n):
    prob = p.mu_over_R / p.N
    k = math.floor(p.t * p.mu_over_R)
    logF = float(stats.binom.logcdf(k, p.N, prob))
    P = -math.expm1(p.n * math.log1p(-math.exp(logF)))
    logP = math.log(P) if P > 0 else logF + math.log(p.n)
    logB = (math.log(p.n) if with_n else 0.0) - (1 - p.t) ** 2 * p.mu_over_R / 2
    return Outcome(residual=logP - logB, tolerance=1e-9 * (1 + abs(logP)),
                   values={"P_exact": math.exp(logP), "bound": math.exp(min(logB, 700)), "single_entry_tail": math.exp(logF),
                           "tightness": math.exp(min(logP - logB, 700))},  # P / bound
                   message="log P(lambda_min <= t mu) - log bound (must be <= 0)")


@pref.numeric
def _(p):
    """P(min of n Binomial counts <= t mu) <= n exp(-(1-t)^2 mu / 2R)."""
    return _pref(p, True)


pref.property(over=("n", "mu_over_R"), max_examples=15)


@pref.falsifier("stated")
def _(p):
    """Without n (l.2572): n = 1000, mu/R = 40, t = 1/2 gives P = 0.31 against exp(-5) = 6.7e-3."""
    return _pref(p, False)


pref.tightness(over=("n", "mu_over_R", "t", "N"), max_examples=30, approached=False,
               finding="bound not approached, best ratio P/bound = 0.606 (n = 1, mu/R = 1, t = 0, N = 335; the declared N now starts at 2001, same limit) over "
                       "the declared range: a union bound (factor n) over Chernoff tails exp(-(1-t)^2 mu/2R), "
                       "which leave a constant factor even for a single Binomial count.")


# ===========================================================================
# T3.10 / E17: Remark 3.17's '2/r >= eps'
r317 = Claim(
    id="sander.remark317_direction",
    title="Remark 3.17: to reach eps + 2n^2 exp(-d/(2 v_x n^eps)) one needs 2/r <= eps (printed 2/r >= eps)",
    label="Remark 3.17",
    section="3.B.5",
    equation="(3.53)",
    lines=(2608, 2612),
    statement=r"\text{choose }r\text{ with }2/r\ge\varepsilon:\ 2n^2e^{-d/(2v_xn^{2/r})}\le2n^2e^{-d/(2v_xn^{\varepsilon})}",
    status="erratum", bound=True,
    corrected=r"\text{choose }r\text{ with }2/r\le\varepsilon\ (r=\lceil2/\varepsilon\rceil):\ "
              r"n^{2/r}\le n^{\varepsilon}\Rightarrow2n^2e^{-d/(2v_xn^{2/r})}\le2n^2e^{-d/(2v_xn^{\varepsilon})}",
    params=[Param.int("n", 100, 2, 10**6, "number of samples", search=(2, 10**5)),
            Param.float("eps", 0.3, 0.0, 1.0, "target epsilon", low_open=True, search=(0.05, 0.95)),
            Param.float("d", 1000.0, 1.0, 1e6, "input dimension"),
            Param.float("vx", 1.0, 0.0, 100.0, "v_x", low_open=True)],
    notes="E17 (direction reversed).  Logs of the third term of delta for the chosen r against the target (3.53).  "
          "Corrected: the smallest admissible r = ceil(2/eps) gives n^{2/r} <= n^eps.  Stated: r = 2 satisfies the printed "
          "'2/r >= eps' for every eps <= 1 and gives n^{2/r} = n > n^eps.  For tanh, larger r also shrinks eta_r "
          "(0.148, 0.063, 0.031 for r = 3, 5, 7), so c_1 ~ eta_r^{-2} grows (catalogue T3.10).  Error model: logs, 1e-12 relative.  "
          "Bound (audit issue 21): tightness term(r)/target = exp(-d/(2 v_x)(n^{-2/r} - n^{-eps})), 1 where 2/eps is an "
          "integer (witness eps = 0.4, r = 5); the sharpened comparison term <= 0.9 target fails there.",
    catalogue="sander_part1 §2.8 T3.10; §4 E17",
    covers=("T3.10", "E17"),
)


def _r317_unresolvable(p):
    """eps so small that 2/eps, or v_x so small that d/(2 v_x), is no double: both logs are -inf."""
    if not math.isfinite(2 / p.eps):
        return inconclusive(f"eps={p.eps!r}: r = ceil(2/eps) overflows a double")
    if not math.isfinite(p.d / (2 * p.vx)):
        return inconclusive(f"vx={p.vx!r}: d/(2 v_x) overflows a double, so both terms are exp(-inf) = 0 and "
                            f"their logs cannot be compared")
    return None


def _r317(p, r):
    lt = math.log(2 * p.n * p.n) - p.d / (2 * p.vx * p.n ** (2 / r))
    lg = math.log(2 * p.n * p.n) - p.d / (2 * p.vx * p.n ** p.eps)
    # tightness (bound convention): term(r) / target = exp(lt - lg) = exp(-d/(2 v_x) (n^{-2/r} - n^{-eps})), 1 at
    # 2/r = eps (eps = 2/k for an integer k: r = k); it may underflow to 0 far from equality
    return Outcome(residual=lt - lg, tolerance=1e-12 * (1 + abs(lg)),
                   values={"r": r, "log_term_r": lt, "log_target": lg, "tightness": math.exp(min(lt - lg, 700.0))},
                   message="log(third term of delta at r) - log(target term)")


@r317.numeric
def _(p):
    """r = ceil(2/eps): the term is below the target."""
    return _r317_unresolvable(p) or _r317(p, max(2, math.ceil(2 / p.eps)))


r317.property(over=("n", "eps"), max_examples=15)


# equality where 2/eps is an integer k (r = k, n^{2/r} = n^eps): eps = 0.4, r = 5; the sharpened comparison
# term <= 0.9 target fails there
r317.tightness(over=("n", "eps", "d", "vx"), max_examples=20,
               witnesses=[{"eps": 0.4, "n": 100, "d": 1000.0, "vx": 1.0}, {"eps": 0.5, "n": 10, "d": 10.0, "vx": 1.0}])


@r317.falsifier("stated")
def _(p):
    """r = 2 meets '2/r >= eps' but n^{2/r} = n > n^eps: the term exceeds the target."""
    return _r317_unresolvable(p) or _r317(p, 2)


# ===========================================================================
# E15: Remark 3.18, 'C does not depend on m'
r318 = Claim(
    id="sander.remark318_m_dependence",
    title="Remark 3.18: the constant C of Thm 3.7 depends on m through K_1 = sup_{||z|| <= M_Z} ||d_1 f(h, z)||",
    label="Remark 3.18 (with Prop 3.9's K)",
    section="3.B.6",
    equation="(3.18)",
    lines=(2630, 2630),
    statement=r"C\text{ depends only on }\mathcal X,\sigma,n,q;\ \text{not on }m",
    status="gap",
    corrected=r"K_1=\sup_{\|z\|\le M_Z}\|\partial_1f(h,z)\|_2\ge\frac{M_Z^2\sigma'(0)}{4\sqrt{qm}}\ge\frac{\|W^{\rm init}\|_F^2}{4\sqrt{qm}}\sim\tfrac{\sqrt{qm}}4:"
              r"\ C\text{ depends on }m\text{ unless }K\text{ is taken over the }M\text{-neighbourhood of the initialisation}",
    params=[Param.int("q", 16, 1, 512, "hidden dimension q", search=(1, 64)),
            Param.int("m", 32, 1, 4096, "width m", search=(1, 512)),
            Param.float("M", 2.6e-4, 0.0, 10.0, "radius M of Prop 3.9 (Th 3.7: c3/sqrt(nq))"),
            Param.seed("seed of W_init")],
    notes="E15, gap (Thm 3.7 itself is unaffected: C is just not m-free).  M_Z = ||Z_init|| + M with V_init = 0 and "
          "W_init ~ N(0,1)^{m x q} (||W_init||_F ~ sqrt(qm)).  f(h, (V, W)) = V sigma(W h/sqrt q)/sqrt m (l.2620).  Witness in the "
          "ball ||V||_F + ||W||_F <= M_Z: V = (M_Z/2) u e_1^T, W = (M_Z/2) e_1 v^T and h orthogonal to v, so d_1 f = "
          "V diag(tanh'(Wh/sqrt q)) W/sqrt(mq) = (M_Z/2)^2 u v^T/sqrt(mq), norm M_Z^2/(4 sqrt(mq)) ~ sqrt(qm)/4 (computed "
          "with numpy, rounding 10 eps).  Read-through (issue 21): the witness used to drop the 1/sqrt m, 1/sqrt q of f "
          "(K_1 = M_Z^2/4 ~ qm/4, overstated by sqrt(qm)); the m-dependence survives at the rate sqrt m.  Checked: "
          "K_1 = M_Z^2/(4 sqrt(mq)) exactly (the witness attains the sup: |tanh'| <= 1 = tanh'(0) and "
          "||V diag W||_2 <= ||V||_F ||W||_F <= M_Z^2/4) at each width of the ladder m, 4m, 16m, ... (nested W_init), and "
          "K_1(m_j)/K_1(m) leaves the falsifier's band [0.9, 1.1] on it.  K_1 ~ (sqrt(qm) + M)^2/(4 sqrt(qm)) falls while "
          "sqrt(qm) < M and grows like sqrt m beyond, so it is flat within 10 % over no ladder of four widths (at worst "
          "sqrt(qm) = M/(2 sqrt 2) at the first rung: 5.2, 4.1, 4.1, 5.2 in units of M/4).  Session 9 (issue 21): the former "
          "check compared m with 4m only and was inconclusive where M > ||W_init||_F or the nested draw's Frobenius ratio "
          "was < 1.6 (5/20 draws of sweep seed 990031, 7/20 of 4100402, all at small qm); a K_1 that FALLS with m is "
          "m-dependence too, so both gates went (0/20 inconclusive on 4100402).  "
          "Falsifier 'stated': Remark 3.18 read literally, K_1 independent of m (ratio 1 within 10 %).  The catalogue's "
          "K_1 >= sqrt(qm)/2 = 11.3 (q = 16, m = 32) takes ||z|| Euclidean in (V, W) (||V||_F = ||W||_F = M_Z/sqrt 2); "
          "this witness, in the ||V||_F + ||W||_F ball, gives sqrt(qm)/4: both grow like sqrt m.",
    catalogue="sander_part1 §4 E15; §2.7 P3.2",
    covers=("E15",),
)


_LADDER = 8            # widths m, 4m, ..., 4^7 m at most
_CELLS = 4_000_000     # largest m q a rung may build (32 MB per matrix)
_BAND = 0.1            # Remark 3.18 read literally: K_1 the same at every width, within 10 %


def _k1_ladder(p):
    """K_1 = sup_{||V||_F + ||W||_F <= M_Z} ||d_1 f(h, (V, W))||_2 along the widths m_j = 4^j m, W_init(m_j) nested
    (the first m_j rows of W_init(m_{j+1})), stopping once K_1(m_j)/K_1(m) leaves the band [0.9, 1.1] or a rung would
    exceed _CELLS.  Each rung: the Jacobian at the witness V = (M_Z/2) u e_1^T, W = (M_Z/2) e_1 v^T, h orthogonal to v
    (numpy, one product of the q x m, m x m diagonal and m x q factors), against the closed form M_Z^2/(4 sqrt(m q))."""
    rng = np.random.default_rng(p.seed)
    u = rng.standard_normal(p.q); u /= np.linalg.norm(u)
    v = rng.standard_normal(p.q); v /= np.linalg.norm(v)
    h = rng.standard_normal(p.q)
    h -= (h @ v) * v                                           # W h = 0: tanh'(0) = 1, the largest tanh' (the sup)
    rows = np.zeros((0, p.q))
    ks, ws, ms = [], [], []
    m = p.m
    for _ in range(_LADDER):
        if m * p.q > _CELLS:
            break
        rows = np.vstack([rows, rng.standard_normal((m - rows.shape[0], p.q))])
        MZ = float(np.linalg.norm(rows)) + p.M                 # M_Z = ||Z_init|| + M, V_init = 0
        e1 = np.zeros(m); e1[0] = 1.0
        V = (MZ / 2) * np.outer(u, e1)
        W = (MZ / 2) * np.outer(e1, v)
        _, ds = rt.activation(W @ h / math.sqrt(p.q), "tanh")
        # f(h, (V, W)) = V sigma(W h / sqrt q) / sqrt m (l.2620): d_1 f = V diag(sigma'(W h / sqrt q)) W / sqrt(m q)
        J = V @ (ds[:, None] * W) / math.sqrt(m * p.q)
        ks.append(float(np.linalg.norm(J, 2)))
        ws.append(MZ ** 2 / (4 * math.sqrt(m * p.q)))
        ms.append(m)
        if abs(ks[-1] / ks[0] - 1) > _BAND:
            break
        m *= 4
    return ks, ws, ms


@r318.numeric
def _(p):
    """K_1 = M_Z^2/(4 sqrt(mq)) at every rung of the ladder m, 4m, 16m, ... (the witness attains the sup: ||V diag(tanh')
    W||_2 <= ||V||_F ||W||_F <= M_Z^2/4), and K_1 leaves the band |K_1(m_j)/K_1(m) - 1| <= 0.1 of Remark 3.18's literal
    reading (falsifier 'stated') on the ladder: with M_Z ~ sqrt(qm) + M, K_1 ~ (sqrt(qm) + M)^2/(4 sqrt(qm)) falls while
    sqrt(qm) < M and grows like sqrt(m) beyond, so it is never flat over a ladder of four widths."""
    ks, ws, ms = _k1_ladder(p)
    dev = [k / ks[0] - 1 for k in ks]
    worst = max(range(len(dev)), key=lambda j: abs(dev[j]))
    vals = {"K1_m": ks[0], "K1_at": ks[worst], "m_at": ms[worst], "ratio": ks[worst] / ks[0], "rungs": len(ks)}
    if abs(dev[worst]) <= _BAND:
        # the ladder stopped at _CELLS first: only at q m 4^j > 4e6, where sqrt(qm) >> M and one rung already doubles K_1
        return inconclusive(f"K_1 stayed within 10 % over widths {ms[0]}..{ms[-1]} before the {_CELLS:.0e}-cell cap "
                            f"(ratio {ks[worst] / ks[0]:.3f})", **vals)
    parts = {f"witness = M_Z^2/(4 sqrt(mq)) at m = {m}": (abs(k - w), 10 * EPS * w) for k, w, m in zip(ks, ws, ms)}
    parts["depends on m: |K_1(m_j)/K_1(m) - 1| > 0.1"] = (max(0.0, _BAND - abs(dev[worst])), 0.0)
    return Outcome.from_parts(parts, "K_1 exact and m-dependent", vals)


r318.property(over=("q", "m", "seed"), max_examples=10)


@r318.falsifier("stated")
def _(p):
    """Remark 3.18 read literally: K_1 (hence C) the same at every width m, 4m, 16m, ... (within 10 %)."""
    ks, _, ms = _k1_ladder(p)
    dev = max(abs(k / ks[0] - 1) for k in ks)
    return Outcome(residual=dev, tolerance=_BAND, values={"K1_m": ks[0], "K1_last": ks[-1], "m_last": ms[-1], "rungs": len(ks)},
                   message="max_j |K_1(m_j)/K_1(m) - 1|")
