"""Bias add and its gradient (cnnl/ops/bias.py) against float64 numpy references."""
import numpy as np
import pytest

import cnnl
import cnrt

from .helpers import FLOATS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor
from .tolerances import assert_close

NCHW, NHWC, ARRAY = cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_ARRAY


def _with_layout(t, layout):
    cnnl.setTensorDescriptor(t.desc, layout, t.code, list(t.dims))
    return t


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("layout", [NCHW, NHWC])
@pytest.mark.parametrize("scales", [(1, 1), (0.5, -2.0), (2.0, 0)])
def test_bias_add_along_the_channel_axis(handle, code, layout, scales):
    rng = np.random.default_rng(code)
    dims, channel = (2, 3, 4, 5), (1 if layout == NCHW else 3)
    bias_values, start = random_values(rng, (dims[channel],), code), random_values(rng, dims, code)
    bias, out = tensor(bias_values, code), _with_layout(tensor(start, code), layout)
    if scales[1] == 0:
        out.write(np.full(dims, np.nan))  # beta = 0 must not read the output
    size = cnnl.getBiasAddWorkspaceSize(handle, bias.desc, out.desc)
    assert size == 0
    cnnl.biasAdd(handle, scales[0], bias.desc, bias.ptr, None, 0, scales[1], out.desc, out.ptr)
    sync(handle)
    shape = [1] * 4
    shape[channel] = dims[channel]
    expected = scales[0] * as_float64(bias_values).reshape(shape) + (scales[1] * as_float64(start) if scales[1]
                                                                     else 0)
    assert_close(out.read(), expected, NUMPY[code], scale=np.abs(expected) + np.abs(as_float64(start)) * 2)


def test_bias_add_as_axpby_on_equal_shapes(handle):
    a, b = np.arange(6, dtype=np.float32), np.ones(6, np.float32)
    x, y = tensor(a), tensor(b)
    cnnl.biasAdd(handle, 0.5, y.desc, y.ptr, None, 0, 2.0, x.desc, x.ptr)  # the sgd form of DIOPI: x = 2x + 0.5y
    sync(handle)
    np.testing.assert_array_equal(x.read(), 2 * a + 0.5)


@pytest.mark.parametrize("code", FLOATS + [cnnl.CNNL_DTYPE_INT32])
@pytest.mark.parametrize("axis", [1, -1, 0])
def test_bias_add_backward_sums_all_other_axes(handle, code, axis):
    rng = np.random.default_rng(axis + 5)
    values = random_values(rng, (3, 4, 5), code)
    dy = tensor(values, code, strides=[1, 3, 12])
    db = empty([values.shape[axis]], code)
    size = cnnl.getBiasAddBackwardWorkspaceSize(handle, dy.desc, db.desc, axis)
    assert size == (db.dims[0] * 4 if code in (cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16) else 0)
    workspace = cnrt.malloc(size) if size else None
    cnnl.biasAddBackward_v2(handle, dy.desc, dy.ptr, axis, db.desc, db.ptr, workspace, size)
    sync(handle)
    others = tuple(d for d in range(3) if d != axis % 3)
    expected = as_float64(values).sum(axis=others)
    assert_close(db.read(), expected, NUMPY[code], scale=np.abs(as_float64(values)).sum(axis=others))


def test_bias_bad_arguments(handle):
    out = tensor(np.zeros((2, 3, 4, 5), np.float32))
    _with_layout(out, NCHW)
    wrong, half = empty([4]), empty([3], cnnl.CNNL_DTYPE_HALF)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="bias_desc"):
        cnnl.getBiasAddWorkspaceSize(handle, wrong.desc, out.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="bias_desc"):
        cnnl.biasAdd(handle, 1, half.desc, half.ptr, None, 0, 1, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="axis"):
        cnnl.getBiasAddBackwardWorkspaceSize(handle, out.desc, wrong.desc, 4)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_bias_desc"):
        cnnl.biasAddBackward_v2(handle, out.desc, out.ptr, 1, wrong.desc, wrong.ptr, None, 0)
    dy = tensor(np.zeros((2, 3), np.float16), cnnl.CNNL_DTYPE_HALF)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.biasAddBackward_v2(handle, dy.desc, dy.ptr, 1, half.desc, half.ptr, None, 0)


def test_bias_gradient_of_an_empty_batch_is_zero(handle):
    dy, db = empty([0, 3]), tensor(np.full(3, 7.0, np.float32))
    cnnl.biasAddBackward_v2(handle, dy.desc, None, 1, db.desc, db.ptr, None, 0)
    sync(handle)
    assert db.read().tolist() == [0.0, 0.0, 0.0]
