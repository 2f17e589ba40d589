"""§4.3.2 Memory cost (seed l.2926-2936): the bits a Momentum ResNet must store to be exactly
invertible.  Claim: ``sander.momentum_memory`` (l.2926-2935).

Conventions (gamma, eps = 1/(1 - gamma), the main-text and appendix second-order models, the tanh MLP
residual function): ``theorems.sander._momentum``'s docstring.
"""
from __future__ import annotations

import math

import numpy as np

from solvers import momentum as mom
from theorems.claim import Claim, Outcome, Param, inconclusive


# ===========================================================================
# M4.3: memory
memory = Claim(
    id="sander.momentum_memory",
    title="Memory: the buffer stores log2((1/gamma)^k) ~ k(1-gamma)/ln 2 bits per coordinate and sample",
    label="§4.3.2",
    section="4.3.2",
    equation="",
    lines=(2926, 2935),
    statement=r"\text{bits per value}=\log_2\bigl((1/\gamma)^k\bigr)\approx\frac{k(1-\gamma)}{\ln 2}"
              r"\ (\gamma\to1),\ \text{memory }O((1-\gamma)\,k\,d\,n_{\rm batch})",
    status="holds",
    params=[
        Param.float("gamma", 0.9, 0.5, 1.0, "momentum (rounded to n/d, d <= 1000, for the buffer)",
                    high_open=True, search=(0.5, 0.999)),
        Param.int("k", 200, 1, 5000, "depth", search=(1, 400)),
        Param.int("count", 2000, 10, 100_000, "number of buffered values"),
        Param.seed("seed of the values"),
    ],
    notes="Three parts. (i) The buffer after k exact multiplications by n/d holds at most "
          "k log2(d/n) + log2(1 + (d-1)/(d-n)) + 1 bits (rigorous, from i' <= (i d + d - 1)/n). "
          "(ii) Its mean over random 52-bit values is within 3 bits below k log2(d/n) "
          "(the buffer is a mixed-radix number whose leading digit is roughly uniform; mean log2 of a "
          "uniform variable is -1/ln 2 = -1.44 below its maximum; 3 bits is that plus margin for the "
          "non-uniform leading digit, a heuristic model -- the catalogue measured 29.96 vs 30.40). "
          "(iii) The approximation k log2(1/gamma) ~ k(1-gamma)/ln 2 has relative error in "
          "[u/2, u/(2(1-u))] with u = 1-gamma, hence <= u for gamma >= 1/2 (catalogue M4.3(c)). "
          "CAVEAT (catalogue): the O((1-gamma) k d n_batch) hides a factor 1/(32 ln 2) against storing float32 "
          "activations, and Figs 4.2/4.7 are profiler measurements (empirical, not reproduced).",
    catalogue="sander_part23 §2.1 M4.3",
)


@memory.numeric
def _(p):
    """Buffer bits vs k log2(1/gamma) (upper bound and mean), and the ln 2 approximation within 1-gamma."""
    fr = mom.as_fraction(p.gamma)
    n, d = fr.numerator, fr.denominator
    if n == d:
        return inconclusive(f"gamma={p.gamma} rounds to 1: no buffer")
    rng = np.random.default_rng(p.seed)
    c = np.empty(p.count, dtype=object)
    c[:] = [int(z) for z in rng.integers(-2**52, 2**52, size=p.count)]
    i = np.zeros(p.count, dtype=object)
    i[:] = 0
    for _ in range(p.k):
        c, i = mom.rmul(c, i, n, d)
    bl = np.array([int(z).bit_length() for z in i], dtype=float)
    ideal = p.k * math.log2(d / n)
    cap = ideal + math.log2(1 + (d - 1) / (d - n)) + 1
    u = 1 - p.gamma
    exact_bits = p.k * math.log2(1 / p.gamma)
    approx = p.k * u / math.log(2)
    rel = abs(exact_bits - approx) / exact_bits
    return Outcome.from_parts(
        {"buffer_upper_bound": (float(bl.max()), cap), "buffer_mean_near_ideal": (max(0.0, ideal - bl.mean()), 3.0),
         "ln2_approximation": (rel, u)},
        message="max buffer bits vs cap; ideal - mean bits vs 3; relative error of k(1-gamma)/ln2",
        values={"gamma_rational": f"{n}/{d}", "buffer_bits_mean": float(bl.mean()), "buffer_bits_max": float(bl.max()),
                "k_log2(d/n)": ideal, "k_log2(1/gamma)": exact_bits, "k(1-gamma)/ln2": approx,
                "relative_error": rel, "bits_per_layer": exact_bits / p.k,
                "fraction_of_float32_storage": exact_bits / (32 * p.k)})


memory.property(over=("gamma", "k", "seed"), max_examples=12, fixed={"count": 200})


@memory.falsifier("drop_ln2")
def _(p):
    """k(1-gamma) bits (the ln 2 dropped): relative error 34% at gamma = 0.9, more than 1-gamma."""
    exact_bits = p.k * math.log2(1 / p.gamma)
    wrong = p.k * (1 - p.gamma)
    rel = abs(exact_bits - wrong) / exact_bits
    return Outcome(residual=rel, tolerance=1 - p.gamma, values={"k_log2(1/gamma)": exact_bits, "k(1-gamma)": wrong},
                   message="relative error of k(1-gamma) against k log2(1/gamma)")


@memory.reproduction(name="fig42_constant_bits")
def _(p):
    """Fig 4.2 setting gamma = 1 - 1/(50k): k log2(1/gamma) = 0.02888, 0.02886, 0.02885 at k = 10, 100, 1000."""
    quoted = {10: 0.02888, 100: 0.02886, 1000: 0.02885}
    got = {k: -k * math.log2(1 - 1 / (50 * k)) for k in quoted}
    gap = max(abs(got[k] - q) for k, q in quoted.items())
    return Outcome(residual=gap, tolerance=0.5e-5, values={"computed": got, "quoted": quoted,
                                                           "limit_1/(50 ln2)": 1 / (50 * math.log(2))},
                   message="max gap at the quoted 4 significant digits (half a unit of the last digit)")
