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
    raises_code(cnrt.cnrtErrorNotSupport, cnrt.castDataType, source, cnrt.CNRT_FLOAT32, ints, cnrt.CNRT_INT16, 1,
                object())
    with pytest.raises(cnrt.CnrtError):
        cnrt.castDataType(source, cnrt.CNRT_FLOAT32, source.copy().view(np.int32)[:1].copy(), cnrt.CNRT_INT32, 2,
                          None)
