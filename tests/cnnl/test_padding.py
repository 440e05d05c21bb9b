"""Constant, reflection and replication padding (cnnl/ops/padding.py) against torch.nn.functional.pad."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnnl

from .helpers import (ALL, FILL_TYPES, FLOATS, NUMPY, as_float64, empty, fill_reference, fill_values,
                             random_values, raises_status, sync, tensor)

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

NCHW, NHWC = cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_NHWC


def _torch_pad(values, pairs, mode="constant", value=0.0):
    flat = [p for before_after in reversed(pairs) for p in before_after]
    return torch.nn.functional.pad(torch.from_numpy(as_float64(values)), flat, mode=mode,
                                   **({"value": value} if mode == "constant" else {})).numpy()


def _pad(handle, values, code, pairs, value=None, strides=None):
    x = tensor(values, code, strides=strides)
    out = empty([n + b + a for n, (b, a) in zip(values.shape, pairs)], code)
    cnnl.pad(handle, x.desc, x.ptr, pairs, value, out.desc, out.ptr)
    sync(handle)
    return out.read()


@pytest.mark.parametrize("code", ALL)
def test_constant_pad_every_dtype(handle, code):
    values = random_values(np.random.default_rng(code), (3, 4, 5), code)
    pairs = [(1, 2), (0, 3), (2, 0)]
    fill = True if code == cnnl.CNNL_DTYPE_BOOL else (7 if code not in FLOATS else -1.5)
    got = _pad(handle, values, code, pairs, fill, strides=[1, 3, 12])
    expected = np.pad(values, pairs, constant_values=np.asarray(fill).astype(NUMPY[code]))
    np.testing.assert_array_equal(got, expected)


def test_constant_pad_crops_with_negative_pads_and_defaults_to_zero(handle):
    values = np.arange(24, dtype=np.float32).reshape(4, 6)
    pairs = [(-1, 2), (3, -4)]
    np.testing.assert_array_equal(_pad(handle, values, cnnl.CNNL_DTYPE_FLOAT, pairs), _torch_pad(values, pairs))
    flat = [-2, 1, 0, -6]  # the flat form of int[2][2]; axis 1 fully cropped
    x = tensor(values)
    out = empty([3, 0])
    cnnl.pad(handle, x.desc, x.ptr, flat, 1.0, out.desc, out.ptr)  # empty output: nothing to do


def test_constant_pad_half_value_rounds_once(handle):
    got = _pad(handle, np.zeros((1,), np.float16), cnnl.CNNL_DTYPE_HALF, [(1, 0)], 0.1)
    assert got[0] == np.float16(0.1)


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("layout", [NCHW, NHWC])
@pytest.mark.parametrize("pad", [(1, 2, 2, 1), (0, 3, -1, 2), (2, -2, 0, 0)])
def test_reflection_and_replication(handle, mode, layout, pad):
    code = cnnl.CNNL_DTYPE_FLOAT
    values = random_values(np.random.default_rng(4), (2, 3, 4, 5), code)  # NCHW values
    left, right, top, bottom = pad
    expected = _torch_pad(values, [(top, bottom), (left, right)], mode)
    if layout == NHWC:
        values, expected = values.transpose(0, 2, 3, 1), expected.transpose(0, 2, 3, 1)
    x, out = tensor(np.ascontiguousarray(values), code), empty(list(expected.shape), code)
    cnnl.setTensorDescriptor(x.desc, layout, code, list(values.shape))
    cnnl.setTensorDescriptor(out.desc, layout, code, list(expected.shape))
    call = cnnl.reflectionPad2d if mode == "reflect" else cnnl.replicationPad2d
    call(handle, x.desc, x.ptr, list(pad), out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), expected)


@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16, cnnl.CNNL_DTYPE_INT8,
                                  cnnl.CNNL_DTYPE_BOOL])
def test_replication_keeps_values_of_every_dtype(handle, code):
    values = random_values(np.random.default_rng(2), (1, 2, 3, 3), code)
    x, out = tensor(values, code), empty([1, 2, 8, 4], code)
    cnnl.replicationPad2d(handle, x.desc, x.ptr, [0, 1, 5, 0], out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), np.pad(values, [(0, 0), (0, 0), (5, 0), (0, 1)], mode="edge"))


def test_padding_bad_arguments(handle):
    x = tensor(np.zeros((2, 3), np.float32))
    out = empty([4, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.pad(handle, x.desc, x.ptr, [(1, 0), (0, 0)], None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="paddings"):
        cnnl.pad(handle, x.desc, x.ptr, [1, 1, 0], None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="paddings"):
        cnnl.pad(handle, x.desc, x.ptr, [(-3, 5), (0, 0)], None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.pad(handle, x.desc, x.ptr, [(1, 1), (0, 0)], None, empty([4, 3], cnnl.CNNL_DTYPE_HALF).desc, out.ptr)
    four = tensor(np.zeros((1, 1, 2, 2), np.float32))
    big = empty([1, 1, 2, 6])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="pad"):
        cnnl.reflectionPad2d(handle, four.desc, four.ptr, [2, 2, 0, 0], big.desc, big.ptr)
    cnnl.replicationPad2d(handle, four.desc, four.ptr, [2, 2, 0, 0], big.desc, big.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        cnnl.replicationPad2d(handle, x.desc, x.ptr, [0, 0, 0, 0], x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="pad"):
        cnnl.replicationPad2d(handle, four.desc, four.ptr, [0, 0, 1], big.desc, big.ptr)
    sync(handle)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_constant_pad_fuzzed(data):
    dims = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    pairs = [(data.draw(st.integers(-n, 3)), data.draw(st.integers(-n, 3))) for n in dims]
    pairs = [(b, a) if n + b + a >= 0 else (b, -n - b) for n, (b, a) in zip(dims, pairs)]
    code = data.draw(st.sampled_from([cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_INT64]))
    values = random_values(np.random.default_rng(len(dims)), dims, code)
    h = cnnl.create()
    try:
        got = _pad(h, values, code, pairs, 3)
    finally:
        cnnl.destroy(h)
    np.testing.assert_array_equal(as_float64(got), _torch_pad(values, pairs, value=3.0))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.sampled_from(FILL_TYPES), value=fill_values())
def test_the_pad_value_converts_out_of_range_values_as_c_and_torch_do(handle, code, value):
    """F.pad(uint8 tensor, value=-1) pads with 255: the padding value converts as a fill's does."""
    got = _pad(handle, np.zeros((2,), NUMPY[code]), code, [(1, 2)], value)
    np.testing.assert_array_equal(got[[0, 3, 4]], np.full(3, fill_reference(value, code)))
