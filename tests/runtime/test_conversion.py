"""The v4 conversion helpers against numpy: every half bit pattern both ways, rounding of float and double, sizes,
and cnrtCastDataType on host buffers."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cnrt

from .helpers import raises_code

ALL_HALVES = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def test_every_half_bit_pattern_converts_exactly():
    expected = ALL_HALVES.view(np.float16).astype(np.float64)
    got = np.array([cnrt.convertHalfToDouble(int(bits)) for bits in ALL_HALVES[::7]])
    np.testing.assert_array_equal(got, expected[::7])
    got = np.array([cnrt.cnrtConvertHalfToFloat(int(bits)) for bits in ALL_HALVES[1::13]], np.float32)
    np.testing.assert_array_equal(got, expected[1::13].astype(np.float32))


@given(st.floats(allow_nan=False, width=64))
def test_double_and_float_round_to_the_nearest_half(value):
    assert cnrt.convertDoubleToHalf(value) == int(np.asarray(value, np.float16).view(np.uint16))
    single = np.float32(value) if abs(value) < 3e38 else np.float32(np.sign(value) * np.inf)
    assert cnrt.cnrtConvertFloatToHalf(float(single)) == int(np.asarray(single, np.float16).view(np.uint16))


def test_nan_stays_nan_and_arguments_are_checked():
    assert np.isnan(cnrt.convertHalfToFloat(cnrt.convertFloatToHalf(float("nan"))))
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.convertHalfToFloat, 1 << 16)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.convertHalfToFloat, 1.5)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.convertFloatToHalf, "1")


def test_data_type_sizes():
    sizes = {cnrt.CNRT_FLOAT16: 2, cnrt.CNRT_FLOAT32: 4, cnrt.CNRT_FLOAT64: 8, cnrt.CNRT_INT8: 1,
             cnrt.CNRT_INT16: 2, cnrt.CNRT_INT32: 4, cnrt.CNRT_INT64: 8, cnrt.CNRT_UINT8: 1, cnrt.CNRT_UINT16: 2,
             cnrt.CNRT_UINT32: 4, cnrt.CNRT_BOOL: 1, cnrt.CNRT_FIX8: 1, cnrt.CNRT_QUANT8: 1, cnrt.CNRT_INVALID: 0}
    assert {code: cnrt.dataTypeSize(code) for code in sizes} == sizes
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.dataTypeSize, 0x99)


def test_cast_data_type_on_host_buffers():
    source = np.array([1.5, -2.5, 70000.0, 3.25], np.float32)
    half = np.zeros(4, np.float16)
    cnrt.castDataType(source, cnrt.CNRT_FLOAT32, half, cnrt.CNRT_FLOAT16, 4, None)
    np.testing.assert_array_equal(half, source.astype(np.float16))
    ints = np.zeros(2, np.int16)
    cnrt.castDataType(source, cnrt.CNRT_FLOAT32, ints, cnrt.CNRT_INT16, 2, None)
    np.testing.assert_array_equal(ints, [1, -2])
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.castDataType, source, cnrt.CNRT_FLOAT32, ints,
                        cnrt.CNRT_INT16, 3, None)
    assert "does not fit" in str(error) or "holds" in str(error)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.castDataType, source[2:], cnrt.CNRT_FLOAT32, ints,
                cnrt.CNRT_INT16, 1, None)
    raises_code(cnrt.cnrtErrorNotSupport, cnrt.castDataType, source, cnrt.CNRT_FLOAT32, ints, cnrt.CNRT_QUANT8, 1,
                None)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.castDataType, source, cnrt.CNRT_FLOAT32, ints,
                cnrt.CNRT_INT16, 1, object())
    with pytest.raises(cnrt.CnrtError):
        cnrt.castDataType(source, cnrt.CNRT_FLOAT32, source.copy().view(np.int32)[:1].copy(), cnrt.CNRT_INT32, 2,
                          None)


def test_quantized_cast_follows_the_fixed_point_convention():
    """int = round(clamp(x * scale / 2^pos + offset)) (ties away from zero), float = (int - offset) * 2^pos / scale."""
    param = cnrt.createQuantizedParam(2, 8.0, -1)
    source = np.array([1.0, 0.25, -0.3125, 1e6, -1e6, np.nan], np.float32)
    quantized = np.zeros(6, np.int16)
    cnrt.castDataType(source, cnrt.CNRT_FLOAT32, quantized, cnrt.CNRT_INT16, 6, param)
    wide = np.clip(source.astype(np.float64) * 8.0 / 4.0 - 1, -32768, 32767)
    expected = np.copysign(np.floor(np.abs(wide) + 0.5), wide)
    np.testing.assert_array_equal(quantized[:5], expected[:5])
    assert quantized[5] == 0  # NaN quantizes to the offset-free zero
    back = np.zeros(2, np.float32)
    cnrt.castDataType_V2(quantized, cnrt.cnrtShort, back, cnrt.cnrtFloat, 2, param, cnrt.cnrtRounding_rn)
    np.testing.assert_array_equal(back, (quantized[:2].astype(np.float64) + 1) * 4.0 / 8.0)
    cnrt.destroyQuantizedParam(param)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.castDataType, source, cnrt.CNRT_FLOAT32, quantized,
                cnrt.CNRT_INT16, 1, param)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.createQuantizedParam, 0, float("inf"), 0)


@pytest.mark.parametrize("target", ["float16", "bfloat16"])
def test_cast_v2_rounding_modes_bracket_the_value(target):
    """Each directed mode gives the representable neighbour on its side; rn is numpy's nearest-even cast; rm is the
    nearer neighbour with ties away from zero."""
    import ml_dtypes
    dtype = np.dtype(ml_dtypes.bfloat16) if target == "bfloat16" else np.dtype(np.float16)
    code = cnrt.cnrtBfloat if target == "bfloat16" else cnrt.cnrtHalf
    rng = np.random.default_rng(7)
    source = np.concatenate([rng.normal(0, 100, 2000), [0.0, -0.0, 1e30, -1e30, np.inf, -np.inf, np.nan]])
    source = source.astype(np.float32)
    results = {}
    for mode in range(cnrt.cnrtRounding_max):
        out = np.zeros(source.size, dtype)
        cnrt.castDataType_V2(source, cnrt.cnrtFloat, out, code, source.size, None, mode)
        results[mode] = out.astype(np.float64)
    x = source.astype(np.float64)
    finite = np.isfinite(x)
    np.testing.assert_array_equal(results[cnrt.cnrtRounding_rn], source.astype(dtype).astype(np.float64))
    assert (results[cnrt.cnrtRounding_rd][finite] <= x[finite]).all()
    assert (results[cnrt.cnrtRounding_ru][finite] >= x[finite]).all()
    assert (np.abs(results[cnrt.cnrtRounding_rz][finite]) <= np.abs(x[finite])).all()
    assert (np.abs(results[cnrt.cnrtRounding_ro][finite]) >= np.abs(x[finite])).all()
    down, up = results[cnrt.cnrtRounding_rd], results[cnrt.cnrtRounding_ru]
    nearer = np.where((up - x) < (x - down), up, np.where((up - x) > (x - down), down, np.where(x >= 0, up, down)))
    np.testing.assert_array_equal(results[cnrt.cnrtRounding_rm][finite], nearer[finite])
    for mode, values in results.items():
        assert np.isnan(values[-1]), mode
        assert values[-3] == np.inf and values[-2] == -np.inf, mode
    if target == "float16":  # 1e30 is past the half range: down (and toward zero) stop at the largest half
        assert results[cnrt.cnrtRounding_rd][-5] == results[cnrt.cnrtRounding_rz][-5] == 65504.0
        assert results[cnrt.cnrtRounding_ru][-4] == -65504.0 and results[cnrt.cnrtRounding_rn][-5] == np.inf
