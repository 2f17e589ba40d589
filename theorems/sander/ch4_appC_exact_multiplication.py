"""App. 4.C Exact multiplication (seed l.3517-3536): multiplication by gamma = num/den on fixed-point
integers with an information buffer is exactly invertible.  Claim: ``sander.exact_multiplication``
(l.3519-3534).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from solvers import momentum as mom
from theorems.claim import Claim, Outcome, Param, ParamError


# ===========================================================================
# M4.2: exact multiplication (App. 4.C)
def _validate_ratio(p):
    if p.num > p.den:
        raise ParamError(f"parameters num={p.num} > den={p.den}: gamma = num/den must lie in (0, 1]")


exactmul = Claim(
    id="sander.exact_multiplication",
    title="Multiplication by n/d with an information buffer (Algorithm 1, Maclaurin et al.) is exactly reversible",
    label="App. 4.C, Algorithm 1",
    section="4.C",
    equation="Algorithm 1",
    lines=(3519, 3534),
    statement=r"i\leftarrow id+(c\bmod d),\ c\leftarrow (c\div d)\,n+(i\bmod n),\ i\leftarrow i\div n"
              r"\ \text{is inverted by the same steps with }n\leftrightarrow d",
    status="holds",
    params=[
        Param.int("num", 9, 1, 10**6, "numerator n of gamma = n/d", search=(1, 999)),
        Param.int("den", 10, 1, 10**6, "denominator d of gamma = n/d", search=(1, 1000)),
        Param.int("steps", 200, 1, 1000, "number of successive multiplications (<= 1000: audit, draws with up to "
                  "5000 steps x 10^5 values timed out at 60 s)", search=(1, 300)),
        Param.int("bits", 41, 1, 200, "values c are random integers in [-2^bits, 2^bits]", search=(1, 62)),
        Param.int("count", 1000, 1, 1000, "number of values (<= 1000, with steps <= 1000: the run stays within a "
                  "minute on a loaded machine; the Python-integer buffers grow by log2(den/num) bits per step)"),
        Param.seed("seed of the values"),
    ],
    validate=_validate_ratio,
    notes="Python integers (floor division and modulo), so negative values and unbounded buffers are exact. "
          "The inverse is Algorithm 1 with n and d exchanged (proof: i d + (c mod d) and (c div d) n + (i mod n) "
          "are the Euclidean decompositions that the swapped steps read back). Also checked: the value is "
          "multiplied by n/d up to an additive error < n d/(d-n) after any number of steps (n < d).",
    catalogue="sander_part23 §2.1 M4.2",
)


def _int_values(p):
    rng = np.random.default_rng(p.seed)
    hi = 2 ** p.bits
    # exact uniform integers in [-2^bits, 2^bits] from 64-bit chunks
    words = (p.bits + 1 + 63) // 64 + 1
    raw = rng.integers(0, 2**63, size=(p.count, words), dtype=np.int64)
    vals = []
    for row in raw:
        z = 0
        for w in row:
            z = (z << 63) | int(w)
        vals.append(z % (2 * hi + 1) - hi)
    out = np.empty(p.count, dtype=object)
    out[:] = vals
    return out


@exactmul.numeric
def _(p):
    """`steps` multiplications by n/d then `steps` inverse steps: values and buffers return exactly."""
    c0 = _int_values(p)
    c, i = c0.copy(), np.zeros(p.count, dtype=object)
    i[:] = 0
    for _ in range(p.steps):
        c, i = mom.rmul(c, i, p.num, p.den)
    bits = float(np.mean([int(z).bit_length() for z in i]))
    # approximate multiplication: |c_k - c_0 (n/d)^k| < n d/(d-n) (n < d), < n k (n = d) -- exact rationals
    r = Fraction(p.num, p.den) ** p.steps
    dev = max(abs(Fraction(int(a)) - Fraction(int(b)) * r) for a, b in zip(c, c0))
    cap = Fraction(p.num * p.den, p.den - p.num) if p.num < p.den else Fraction(p.num * p.steps)
    cf, bf = c.copy(), i.copy()
    for _ in range(p.steps):
        cf, bf = mom.rmul_inverse(cf, bf, p.num, p.den)
    wrong = int(np.sum(cf != c0)) + int(np.sum(bf != 0))
    return Outcome.from_parts(
        {"round_trip_mismatches": (wrong, 0), "multiplies_by_n_over_d": (float(dev), float(cap))},
        message="values/buffers not restored; deviation from c_0 (n/d)^k",
        values={"mismatches": wrong, "buffer_bits_mean": bits,
                "k_log2(d/n)": p.steps * math.log2(p.den / p.num), "max_deviation": float(dev)})


exactmul.property(over=("num", "den", "steps", "bits", "seed"), max_examples=15, fixed={"count": 50})


@exactmul.falsifier("float_multiplication", search=("seed",))
def _(p):
    """Plain float64 multiplication by n/d then division by n/d: not a bit-exact round trip."""
    rng = np.random.default_rng(p.seed)
    x0 = rng.standard_normal(p.count)
    g = p.num / p.den
    x = x0.copy()
    for _ in range(p.steps):
        x = x * g
    for _ in range(p.steps):
        x = x / g
    wrong = int(np.sum(x != x0))
    return Outcome(residual=wrong, tolerance=0, values={"mismatches": wrong, "count": p.count},
                   message="number of values not restored bit for bit")


@exactmul.falsifier("no_buffer", search=("seed",))
def _(p):
    """Integer multiplication without the information buffer (c <- c*n div d, inverse c*d div n): not exact."""
    c0 = _int_values(p)
    c = c0.copy()
    for _ in range(p.steps):
        c = (c * p.num) // p.den
    for _ in range(p.steps):
        c = (c * p.den) // p.num
    wrong = int(np.sum(c != c0))
    return Outcome(residual=wrong, tolerance=0, values={"mismatches": wrong},
                   message="number of values not restored")
