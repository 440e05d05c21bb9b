"""cast: every dtype pair against independent references, plus exact rounding and saturation examples."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import cast

from ..references import FLOAT_FORMATS, float_to_int, round_to_format, saturate_int, to_f64
from .strategies import ALL, LAYOUTS, SETTINGS, outputs, place, shapes
from ..tolerances import BF16, F16, F32, F64


def reference_cast(x, dtype):
    """Expected result of casting x to `dtype`, as float64 (floats) or exact ints."""
    dtype, source = np.dtype(dtype), x.dtype
    if dtype == np.bool_:
        return to_f64(x) != 0
    if source == np.bool_:
        return x.astype(np.int64)
    if dtype.kind in "iu":
        if source.kind in "iu":
            return saturate_int(x.astype(np.int64), dtype)
        return float_to_int(to_f64(x), dtype)
    values = to_f64(x)
    return values if dtype == F64 else round_to_format(values, dtype)


def values_for(rng, shape, dtype):
    """Inputs that exercise rounding ties, saturation and specials as well as ordinary values."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(info.min), -2 ** 52), min(int(info.max), 2 ** 52)
        return rng.integers(low, high, size=shape, endpoint=True).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    scale = 10.0 ** rng.integers(-8, 12, size=shape)
    values = rng.standard_normal(shape) * scale
    ties = rng.random(shape) < 0.3  # exact midpoints between neighbouring half values: RNE ties
    half_ties = (rng.integers(-2048, 2048, size=shape) + 0.5) * 2.0 ** rng.integers(-24, 5, size=shape)
    values = np.where(ties, half_ties, values)
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 65520.0, 3e38, -1e40, 2.0 ** -25])
    pick = rng.random(shape) < 0.15
    values = np.where(pick, specials[rng.integers(len(specials), size=shape)], values)
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(dtype)


@given(source=st.sampled_from(ALL), target=st.sampled_from(ALL), shape=shapes(), data=st.data())
@SETTINGS
def test_cast_matches_reference(source, target, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    x = place(values_for(rng, shape, source), data.draw(st.sampled_from(LAYOUTS)), rng)
    out = data.draw(outputs(shape, target))
    cast(x, out)
    expected = reference_cast(x, target)
    if target.kind == "f" or target in (F16, BF16):
        got = to_f64(out)
        assert np.array_equal(got, expected.astype(np.float64), equal_nan=True), (x, got, expected)
    else:
        np.testing.assert_array_equal(out.astype(object) if target.kind != "b" else out, expected)


@pytest.mark.parametrize("source", [F32, F64])
@pytest.mark.parametrize("target", [F16, BF16])
def test_cast_to_16_bit_is_exactly_rne_on_many_values(source, target):
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2 ** 32, size=200_000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        values = bits.view(np.float32).astype(source)
    if source == F64:
        values = values * (1 + rng.standard_normal(values.size) * 2.0 ** -20)  # bits below float32 precision
    out = np.empty(values.shape, target)
    cast(values, out)
    with np.errstate(invalid="ignore"):
        expected = round_to_format(values.astype(np.float64), target)
    assert np.array_equal(to_f64(out), expected, equal_nan=True)


def test_rne_ties_to_even():
    ulp = 2.0 ** -10  # float16 spacing at 1.0
    x = np.array([1 + ulp / 2, 1 + 3 * ulp / 2, -(1 + ulp / 2), 2049.0, 2051.0], np.float32)
    out = np.empty(5, np.float16)
    cast(x, out)
    assert out.astype(np.float64).tolist() == [1.0, 1 + 2 * ulp, -1.0, 2048.0, 2052.0]
    bf = np.empty(2, ml_dtypes.bfloat16)
    cast(np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8], np.float32), bf)
    assert bf.astype(np.float64).tolist() == [1.0, 1 + 2.0 ** -6]


def test_float_to_int_saturates_and_maps_nan_to_zero():
    x = np.array([np.nan, np.inf, -np.inf, 1e10, -1e10, 2.9, -2.9, 127.5, -128.7], np.float32)
    out = np.empty(9, np.int8)
    cast(x, out)
    assert out.tolist() == [0, 127, -128, 127, -128, 2, -2, 127, -128]
    big = np.empty(3, np.int64)
    cast(np.array([9.3e18, -9.3e18, 2.0 ** 62]), big)
    assert big.tolist() == [2 ** 63 - 1, -2 ** 63, 2 ** 62]


def test_int_to_int_saturates():
    out = np.empty(4, np.uint8)
    cast(np.array([-1, 300, 255, 7], np.int32), out)
    assert out.tolist() == [0, 255, 255, 7]
    small = np.empty(2, np.int8)
    cast(np.array([200, 100], np.uint8), small)
    assert small.tolist() == [127, 100]


def test_bool_conversions():
    out = np.empty(4, np.bool_)
    cast(np.array([0.0, -0.0, np.nan, 1e-30], np.float32), out)
    assert out.tolist() == [False, False, True, True]
    back = np.empty(2, ml_dtypes.bfloat16)
    cast(np.array([True, False]), back)
    assert back.astype(np.float64).tolist() == [1.0, 0.0]


def test_large_strided_cast_uses_blocks_correctly():
    rng = np.random.default_rng(3)
    base = rng.standard_normal((700, 900)).astype(np.float32)
    x = base[::2, ::-3]
    out = np.empty((x.shape[1], x.shape[0]), np.float16).T  # transposed output
    cast(x, out)
    assert np.array_equal(out.astype(np.float64), round_to_format(x.astype(np.float64), F16))


def test_formats_table_is_consistent_with_dtypes():
    for dtype, (_, _, largest) in FLOAT_FORMATS.items():
        assert largest == float(ml_dtypes.finfo(dtype).max)
