"""Arange, linspace and one-hot (cnnl/ops/creation.py) against float64 numpy references and torch."""
import numpy as np
import pytest

import cnnl

from .helpers import FLOATS, INTS, NUMPY, as_float64, empty, raises_status, sync, tensor
from .tolerances import assert_close

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION


@pytest.mark.parametrize("code", FLOATS + INTS)
def test_arange(handle, code):
    start, step = (-3, 2) if code in INTS else (0.5, -0.25)
    if code == cnnl.CNNL_DTYPE_UINT8:
        start = 3
    out = empty([4, 25], code, strides=[1, 4])  # 100 values in row-major order, stored transposed
    cnnl.arange_v2(handle, HIGH, start, step, out.desc, out.ptr)
    sync(handle)
    expected = (start + step * np.arange(100, dtype=np.float64)).reshape(4, 25)
    if code in INTS:
        expected = (start + step * np.arange(100, dtype=np.int64)).astype(NUMPY[code]).reshape(4, 25)
    assert_close(out.read(), expected, NUMPY[code])


def test_arange_is_long_and_rounds_its_scalars_like_c(handle):
    out = empty([1 << 18], cnnl.CNNL_DTYPE_DOUBLE)  # several parallel chunks
    cnnl.arange_v2(handle, HIGH, 0.1, 0.1, out.desc, out.ptr)
    sync(handle)
    double = out.read()
    assert double[0] == 0.1  # start and step arrive as C doubles for DOUBLE outputs
    np.testing.assert_array_equal(double, 0.1 + np.arange(1 << 18) * 0.1)
    small = empty([4])
    cnnl.arange_v2(handle, HIGH, 0.1, 0.1, small.desc, small.ptr)  # FLOAT output: float start/step
    sync(handle)
    f = np.float64(np.float32(0.1))
    np.testing.assert_array_equal(small.read(), (f + np.arange(4) * f).astype(np.float32))


@pytest.mark.parametrize("code", FLOATS + [cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64])
@pytest.mark.parametrize("count", [1, 2, 7, 1000])
def test_linspace_matches_torch(handle, code, count):
    start, end = (-2.5, 3.75)
    out = empty([count], code)
    cnnl.linspace(handle, start, end, out.desc, out.ptr)
    sync(handle)
    torch_type = {cnnl.CNNL_DTYPE_INT32: torch.int32, cnnl.CNNL_DTYPE_INT64: torch.int64}.get(code, torch.float64)
    expected = torch.linspace(start, end, count, dtype=torch_type).numpy().astype(np.float64)
    assert_close(out.read(), expected, NUMPY[code], scale=abs(start) + abs(end))  # terms of |start|, |end|
    got = out.read()
    if code not in INTS:
        assert as_float64(got)[0] == np.float64(np.asarray(start).astype(NUMPY[code]))
        assert count == 1 or as_float64(got)[-1] == np.float64(np.asarray(end).astype(NUMPY[code]))


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF])
def test_one_hot(handle, axis, code):
    labels = np.array([[0, 3, 1], [2, 2, 0]], np.int32)
    index = tensor(labels, cnnl.CNNL_DTYPE_INT32)
    on, off = tensor(np.array([5], NUMPY[code]), code), tensor(np.array([-1], NUMPY[code]), code)
    expected = np.where(np.eye(4, dtype=bool)[labels], 5, -1)
    expected = np.moveaxis(expected, -1, axis if axis != -1 else 2)
    out = empty(list(expected.shape), code)
    cnnl.oneHot(handle, index.desc, index.ptr, 4, on.ptr, off.ptr, axis, code, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), expected.astype(NUMPY[code]))
    reference = torch.nn.functional.one_hot(torch.from_numpy(labels).long(), 4).numpy()
    np.testing.assert_array_equal(np.moveaxis(expected, axis if axis != -1 else 2, -1) == 5, reference == 1)


def test_one_hot_out_of_range_fails_the_op(handle):
    index = tensor(np.array([0, 4], np.int32), cnnl.CNNL_DTYPE_INT32)
    on, off, out = tensor(np.array([1], np.int32)), tensor(np.array([0], np.int32)), empty([2, 4],
                                                                                          cnnl.CNNL_DTYPE_INT32)
    cnnl.oneHot(handle, index.desc, index.ptr, 4, on.ptr, off.ptr, -1, cnnl.CNNL_DTYPE_INT32, out.ptr)
    with pytest.raises(Exception, match="class index 4"):
        sync(handle)


def test_creation_bad_arguments(handle):
    ints, floats = empty([4], cnnl.CNNL_DTYPE_INT32), empty([4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="step"):
        cnnl.arange_v2(handle, HIGH, 0, 0.5, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.arange_v2(handle, 9, 0, 1, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="start"):
        cnnl.linspace(handle, "0", 1, floats.desc, floats.ptr)
    booleans = empty([4], cnnl.CNNL_DTYPE_BOOL)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="output_desc"):
        cnnl.linspace(handle, 0, 1, booleans.desc, booleans.ptr)
    labels = tensor(np.array([1.0], np.float32))
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="indices_desc"):
        cnnl.oneHot(handle, labels.desc, labels.ptr, 2, ints.ptr, ints.ptr, -1, cnnl.CNNL_DTYPE_INT32, ints.ptr)
    index = tensor(np.array([1], np.int32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="axis"):
        cnnl.oneHot(handle, index.desc, index.ptr, 2, ints.ptr, ints.ptr, 2, cnnl.CNNL_DTYPE_INT32, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="depth"):
        cnnl.oneHot(handle, index.desc, index.ptr, -1, ints.ptr, ints.ptr, -1, cnnl.CNNL_DTYPE_INT32, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output"):
        cnnl.oneHot(handle, index.desc, index.ptr, 2, ints.ptr, ints.ptr, -1, cnnl.CNNL_DTYPE_INT32, None)
    nothing = empty([0])
    cnnl.linspace(handle, 0, 1, nothing.desc, None)
    cnnl.arange_v2(handle, HIGH, 0, 1, nothing.desc, None)
