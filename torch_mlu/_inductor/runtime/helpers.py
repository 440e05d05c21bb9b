"""Scalar functions the generated numba kernels call (`h.<name>` in kernel source): 16-bit float storage, bit casts,
NaN-propagating min/max, integer division and power with torch's semantics, reassociable accumulation, a fast
float32 erf, erfinv, and the counter-based random numbers of `ops.rand` / `ops.randn` / `ops.randint64`.

Every function is a small `nogil` numba function (LLVM inlines it into the kernel). The device's numerics come from
`mlusim.numerics` (16-bit float storage, bit casts, reassociable accumulation, erfinv), shared with BANG and cnnl:
16-bit floats travel as uint16 bit patterns and are computed in float32, as Inductor's GPU backends do
(`codegen_upcast_to_fp32`); narrowing rounds to nearest even.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from mlusim.numerics.accumulate import acc_add, acc_mul  # noqa: F401  (called by generated kernels as h.acc_*)
from mlusim.numerics.bitcast import (bits_f32, f32_as_i32, f32_bits, f64_as_i64, i32_as_f32,  # noqa: F401
                                     i64_as_f64)
from mlusim.numerics.float16 import (bfloat16_to_f32, f32_to_bfloat16, f32_to_half, half_to_f32,  # noqa: F401
                                     round_bfloat16, round_half)
from mlusim.numerics.special import erfinv as _erfinv_float64

_INLINE = dict(nogil=True, cache=True)


# ---- arithmetic with torch's semantics ---------------------------------------------------------------------------

@njit(**_INLINE)
def maximum(a, b):
    """torch.maximum: NaN if either is NaN."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a > b else b


@njit(**_INLINE)
def minimum(a, b):
    """torch.minimum: NaN if either is NaN."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a < b else b


@njit(**_INLINE)
def int_maximum(a, b):
    return a if a > b else b


@njit(**_INLINE)
def int_minimum(a, b):
    return a if a < b else b


@njit(**_INLINE)
def truncdiv(a, b):
    """Integer division rounding toward zero (C / torch trunc division); a zero divisor gives 0."""
    if b == 0:
        return a - a
    q = a // b
    if q < 0 and q * b != a:
        q += 1
    return q


@njit(**_INLINE)
def floordiv(a, b):
    """Integer floor division (torch.floor_divide); a zero divisor gives 0."""
    if b == 0:
        return a - a
    return a // b


@njit(**_INLINE)
def int_remainder(a, b):
    """Integer remainder with the sign of the divisor (torch.remainder); a zero divisor gives 0."""
    if b == 0:
        return a - a
    return a % b


@njit(**_INLINE)
def int_fmod(a, b):
    """Integer remainder with the sign of the dividend (torch.fmod); a zero divisor gives 0."""
    if b == 0:
        return a - a
    return a - truncdiv(a, b) * b


@njit(**_INLINE)
def float_remainder(a, b):
    """torch.remainder on floats: a - floor(a / b) * b, with the sign of b (Python's %, NaN for b == 0)."""
    if b == 0:
        return (a - a) / (b - b)
    r = np.fmod(a, b)
    if r != 0 and ((r < 0) != (b < 0)):
        r += b
    return r


@njit(**_INLINE)
def int_pow(a, b):
    """a ** b for integers by repeated squaring (wraps like the integer type); b < 0 gives 0 unless |a| == 1."""
    if b < 0:
        if a == 1:
            return a
        if a == -1:
            return a if b & 1 else a * a
        return a - a
    result = a - a + 1
    base = a
    while b:
        if b & 1:
            result = result * base
        base = base * base
        b >>= 1
    return result


@njit(**_INLINE)
def erf32(x):
    """erf of a float32 value: the odd rational approximation x P(x^2) / Q(x^2) on [-4, 4] used by XLA and Eigen
    for float32, evaluated in float64 (within 2 ulp of the correctly rounded float32 erf; branch free, several
    times faster than the C library's double-precision erf behind math.erf)."""
    z = np.float64(x)
    z = 4.0 if z > 4.0 else (-4.0 if z < -4.0 else z)  # NaN passes through
    z2 = z * z
    p = -2.72614225801306e-10
    p = 2.77068142495902e-08 + p * z2
    p = -2.10102402082508e-06 + p * z2
    p = -5.69250639462346e-05 + p * z2
    p = -7.34990630326855e-04 + p * z2
    p = -2.95459980854025e-03 + p * z2
    p = -1.60960333262415e-02 + p * z2
    q = -1.45660718464996e-05
    q = -2.13374055278905e-04 + q * z2
    q = -1.68282697438203e-03 + q * z2
    q = -7.37332916720468e-03 + q * z2
    q = -1.42647390514189e-02 + q * z2
    return np.float32(z * p / q)


@njit(**_INLINE)
def erfinv(x):
    """torch.erfinv in float64 (Giles' approximation refined by Newton steps; shared with cnnl's erfinv)."""
    return _erfinv_float64(np.float64(x), 2)


@njit(**_INLINE)
def check_index(index, size, line):
    """The bounds check of an indirect index (CUDA's device assert): a bad index raises instead of reading
    outside the tensor."""
    if index < 0 or index >= size:
        raise IndexError("index out of bounds in a compiled mlu kernel")
    return index


# ---- counter-based random numbers (ops.rand / randn / randint64) -------------------------------------------------

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(**_INLINE)
def random_bits(seed, offset):
    """64 random bits for (seed, offset): the offset-th output of the SplitMix64 generator started at `seed`
    (a counter-based generator: any element's number is computed on its own, in any order, on any thread)."""
    z = np.uint64(seed) + (np.uint64(offset) + np.uint64(1)) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(**_INLINE)
def rand(seed, offset):
    """ops.rand: a float32 uniform in [0, 1) for (seed, offset) (the top 24 random bits)."""
    return np.float32(random_bits(seed, offset) >> np.uint64(40)) * np.float32(2.0 ** -24)


@njit(**_INLINE)
def randn(seed, offset):
    """ops.randn: a float32 standard normal for (seed, offset), by Box-Muller on two 32-bit uniforms."""
    bits = random_bits(seed, offset)
    u = (np.float64(bits >> np.uint64(32)) + 1.0) * (2.0 ** -32)  # (0, 1]: log(u) is finite
    v = np.float64(bits & np.uint64(0xFFFFFFFF)) * (2.0 ** -32)
    return np.float32(math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * v))


@njit(**_INLINE)
def randint64(seed, offset, low, high):
    """ops.randint64: an int64 uniform in [low, high) for (seed, offset)."""
    span = np.uint64(high - low)
    if span == 0:
        return np.int64(low)
    return np.int64(low + np.int64(random_bits(seed, offset) % span))


# ---- reduction updates -------------------------------------------------------------------------------------------

@njit(**_INLINE)
def argmax_update(best, where, value, index):
    """One step of argmax: the first maximum wins, a NaN is the maximum (torch.argmax)."""
    if where < 0 or (best == best and (value > best or value != value)):
        return value, np.int64(index)
    return best, where


@njit(**_INLINE)
def argmin_update(best, where, value, index):
    """One step of argmin: the first minimum wins, a NaN is the minimum (torch.argmin)."""
    if where < 0 or (best == best and (value < best or value != value)):
        return value, np.int64(index)
    return best, where


@njit(**_INLINE)
def welford_update(mean, m2, count, value):
    """Welford's running mean and sum of squared deviations, in float64."""
    x = np.float64(value)
    count = count + 1.0
    delta = x - mean
    mean = mean + delta / count
    m2 = m2 + delta * (x - mean)
    return mean, m2, count


@njit(**_INLINE)
def welford_combine(mean, m2, weight, other_mean, other_m2, other_weight):
    """Chan's combination of two (mean, m2, weight) partial results, in float64."""
    w = np.float64(other_weight)
    if w == 0.0:
        return mean, m2, weight
    total = weight + w
    delta = np.float64(other_mean) - mean
    ratio = w / total
    return mean + delta * ratio, m2 + np.float64(other_m2) + delta * delta * weight * ratio, total


@njit(**_INLINE)
def online_softmax_update(running_max, running_sum, value):
    """One step of the online softmax statistics (max, sum of exp(x - max)); -inf contributes nothing."""
    if value > running_max:
        return value, running_sum * math.exp(np.float64(running_max) - np.float64(value)) + 1.0
    if value == -np.inf:
        return running_max, running_sum
    return running_max, running_sum + math.exp(np.float64(value) - np.float64(running_max))
