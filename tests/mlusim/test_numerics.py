"""The device's numerics (mlusim.numerics): 16-bit float conversions against numpy's float16 and ml_dtypes'
bfloat16 (every 16-bit pattern widened; random, boundary and special float32 patterns narrowed), the hardware path
against the bit arithmetic, the one-element functions against the array ones, NaN rules, bit casts, reassociable
accumulation and erfinv."""
import math

import ml_dtypes
import numpy as np
import pytest
from numba import njit

from mlusim.numerics import accumulate, bitcast, float16, special

EVERY16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def _narrowing_cases():
    rng = np.random.default_rng(8)
    edges = np.arange(0x33000000 - 3000, 0x47800000 + 3000, 61, dtype=np.uint32)  # subnormals .. overflow
    specials = np.array([0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FBFFFFF, 0x477FEFFF, 0x477FF000, 0x33000000,
                         0x33000001, 0x7F7FFFFF, 0x7F7F8000, 0x3F808000, 0x3F818000, 0x00000001], np.uint32)
    bits = np.concatenate([rng.integers(0, 1 << 32, size=1 << 16, dtype=np.uint64).astype(np.uint32), edges,
                           specials])
    return np.concatenate([bits, bits | np.uint32(0x80000000)])


NARROW = _narrowing_cases()


def _is_nan32(bits):
    return (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)


@pytest.mark.parametrize("bfloat16", [False, True], ids=["float16", "bfloat16"])
def test_widening_is_exact_and_keeps_nan_payloads(bfloat16):
    got, reference = np.empty(EVERY16.size, np.uint32), np.empty(EVERY16.size, np.uint32)
    float16.widen_bits(EVERY16, got, bfloat16)
    float16.widen_bits_reference(EVERY16, reference, bfloat16)
    np.testing.assert_array_equal(got, reference)
    storage = ml_dtypes.bfloat16 if bfloat16 else np.float16
    want = EVERY16.view(storage).astype(np.float32).view(np.uint32)
    nan = _is_nan32(want)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    mantissa = (EVERY16[nan].astype(np.uint32) & (0x7F if bfloat16 else 0x3FF)) << (16 if bfloat16 else 13)
    sign = (EVERY16[nan].astype(np.uint32) & 0x8000) << 16
    np.testing.assert_array_equal(got[nan], sign | 0x7F800000 | mantissa)  # signalling NaNs stay signalling


@pytest.mark.parametrize("bfloat16", [False, True], ids=["float16", "bfloat16"])
def test_narrowing_rounds_to_nearest_even_and_quiets_nan(bfloat16):
    got, reference = np.empty(NARROW.size, np.uint16), np.empty(NARROW.size, np.uint16)
    float16.narrow_bits(NARROW, got, bfloat16)
    float16.narrow_bits_reference(NARROW, reference, bfloat16)
    np.testing.assert_array_equal(got, reference)
    storage = ml_dtypes.bfloat16 if bfloat16 else np.float16
    with np.errstate(over="ignore"):
        want = NARROW.view(np.float32).astype(storage).view(np.uint16)
    nan = _is_nan32(NARROW)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    sign = (NARROW[nan] >> 16) & 0x8000
    quiet = (NARROW[nan] >> 16) | 0x40 if bfloat16 else sign | 0x7E00
    np.testing.assert_array_equal(got[nan], quiet.astype(np.uint16))


@njit
def _each_narrowed(values, out, to_bfloat16):
    for i in range(values.size):
        out[i] = float16.f32_to_bfloat16(values[i]) if to_bfloat16 else float16.f32_to_half(values[i])


@njit
def _each_widened(bits, out, from_bfloat16):
    for i in range(bits.size):
        out[i] = float16.bfloat16_to_f32(bits[i]) if from_bfloat16 else float16.half_to_f32(bits[i])


@njit
def _each_rounded(values, out, to_bfloat16):
    for i in range(values.size):
        out[i] = float16.round_bfloat16(values[i]) if to_bfloat16 else float16.round_half(values[i])


@pytest.mark.parametrize("bfloat16", [False, True], ids=["float16", "bfloat16"])
def test_one_element_conversions_are_the_array_conversions(bfloat16):
    narrowed, want16 = np.empty(NARROW.size, np.uint16), np.empty(NARROW.size, np.uint16)
    _each_narrowed(NARROW.view(np.float32), narrowed, bfloat16)
    float16.narrow_bits(NARROW, want16, bfloat16)
    np.testing.assert_array_equal(narrowed, want16)
    widened, want32 = np.empty(EVERY16.size, np.float32), np.empty(EVERY16.size, np.uint32)
    _each_widened(EVERY16, widened, bfloat16)
    float16.widen_bits(EVERY16, want32, bfloat16)
    np.testing.assert_array_equal(widened.view(np.uint32), want32)
    rounded = np.empty(NARROW.size, np.float32)
    _each_rounded(NARROW.view(np.float32), rounded, bfloat16)
    back = np.empty(NARROW.size, np.uint32)
    float16.widen_bits(want16, back, bfloat16)
    np.testing.assert_array_equal(rounded.view(np.uint32), back)


def test_float64_sources_round_once():
    """round-to-odd to float32, then nearest-even to 16 bits, is the correctly rounded float64 -> float16."""
    rng = np.random.default_rng(3)
    values = np.concatenate([rng.standard_normal(1 << 14) * 10.0 ** rng.integers(-8, 5, 1 << 14),
                             [1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -11, 65519.99, 65520.0, -0.0, np.inf, 1e300]])
    odd = float16.float64_to_float32_round_to_odd(values)
    got = np.empty(values.size, np.uint16)
    with np.errstate(over="ignore"):
        float16.narrow_bits(odd.view(np.uint32), got, False)
        want = values.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.float16), want)
    tie = np.float64(1 + 2.0 ** -11 + 2.0 ** -40)  # via plain float32 a tie, rounded to even 1.0: twice rounded
    assert np.float32(tie).astype(np.float16) == 1.0 and got[values.size - 7].view(np.float16) == 1 + 2.0 ** -10


@njit
def _bits_round_trip(x, y):
    return (bitcast.f32_bits(x), bitcast.bits_f32(bitcast.f32_bits(x)), bitcast.f32_as_i32(x),
            bitcast.i32_as_f32(bitcast.f32_as_i32(x)), bitcast.f64_as_i64(y), bitcast.i64_as_f64(bitcast.f64_as_i64(y)))


def test_bit_casts_reinterpret_without_changing_bits():
    x, y = np.float32(-1.5), -2.0 ** -1074
    u, x_back, i, x_again, j, y_back = _bits_round_trip(x, y)
    assert u == np.float32(x).view(np.uint32) and i == np.float32(x).view(np.int32)
    assert x_back == x and x_again == x and y_back == y
    assert j == np.float64(y).view(np.int64)


@njit
def _reassociated_sum(values):
    total = np.float64(0.0)
    for v in values:
        total = accumulate.acc_add(total, v)
    return total


@njit
def _reassociated_product(values):
    total = np.float64(1.0)
    for v in values:
        total = accumulate.acc_mul(total, v)
    return total


def test_accumulation_sums_and_multiplies_with_ieee_specials():
    values = np.random.default_rng(5).standard_normal(10_001)
    assert _reassociated_sum(values) == pytest.approx(math.fsum(values), rel=1e-12)
    assert math.isnan(_reassociated_sum(np.array([1.0, np.nan, 2.0])))
    assert _reassociated_sum(np.array([np.inf, 1.0])) == np.inf
    assert _reassociated_product(np.full(20, 2.0)) == 2.0 ** 20


def test_erfinv_inverts_erf_and_keeps_its_edges():
    ys = np.concatenate([np.linspace(-0.999999, 0.999999, 2001), [1e-300, -1e-300, 0.5, 0.9999999999]])
    for y in ys:
        assert math.erf(special.erfinv(y, 2)) == pytest.approx(y, rel=1e-14, abs=1e-300)
    assert special.erfinv(1.0, 2) == math.inf and special.erfinv(-1.0, 2) == -math.inf
    assert math.isnan(special.erfinv(1.5, 2)) and math.isnan(special.erfinv(math.nan, 2))
    assert math.copysign(1.0, special.erfinv(-0.0, 2)) == -1.0
