"""Threshold and hardtanh forward/backward (cnnl/ops/thresholds.py) against numpy and torch.nn.functional."""
import numpy as np
import pytest

import cnnl

from .helpers import FLOATS, INTS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

SPECIALS = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, 1.25, -1.0])


def _values(code, rng):
    values = random_values(rng, (5, 8), code)
    if code in FLOATS:
        values[0] = SPECIALS.astype(NUMPY[code])
    return values


@pytest.mark.parametrize("code", FLOATS + INTS)
def test_threshold_forward_and_backward(handle, code):
    rng = np.random.default_rng(code)
    xv, dyv = _values(code, rng), random_values(rng, (5, 8), code)
    limit, fill = (1.25, -7.5) if code in FLOATS else {"i": (1, -7), "u": (4, 7)}[NUMPY[code].kind]
    x, dy = tensor(xv, code, strides=[1, 5]), tensor(dyv, code)
    y, dx = empty([5, 8], code), empty([5, 8], code)
    cnnl.threshold(handle, x.desc, x.ptr, limit, fill, y.desc, y.ptr)
    cnnl.thresholdBackward(handle, x.desc, x.ptr, dy.desc, dy.ptr, limit, dx.desc, dx.ptr)
    sync(handle)
    values = as_float64(xv)
    np.testing.assert_array_equal(as_float64(y.read()), np.where(values <= limit, fill, values))
    np.testing.assert_array_equal(as_float64(dx.read()), np.where(values <= limit, 0, as_float64(dyv)))


@pytest.mark.parametrize("code", FLOATS)
def test_hardtanh_matches_torch(handle, code):
    rng = np.random.default_rng(code)
    xv, dyv = _values(code, rng), random_values(rng, (5, 8), code)
    xv[1, :4] = np.array([-1, 2, -0.5, 2.5]).astype(NUMPY[code])  # exactly on the bounds and between
    x, dy, y, dx = tensor(xv, code), tensor(dyv, code), empty([5, 8], code), empty([5, 8], code)
    cnnl.hardtanh(handle, x.desc, x.ptr, 2.0, -1.0, y.desc, y.ptr)
    cnnl.hardtanhBackward(handle, x.desc, x.ptr, dy.desc, dy.ptr, 2.0, -1.0, dx.desc, dx.ptr)
    sync(handle)
    tx, tdy = torch.from_numpy(as_float64(xv)), torch.from_numpy(as_float64(dyv))
    np.testing.assert_array_equal(as_float64(y.read()), torch.nn.functional.hardtanh(tx, -1.0, 2.0).numpy())
    np.testing.assert_array_equal(as_float64(dx.read()), torch.ops.aten.hardtanh_backward(tdy, tx, -1.0, 2.0).numpy())


def test_threshold_rounds_scalars_to_the_tensor_type(handle):
    x = tensor(np.array([0.1, 0.1001], np.float16), cnnl.CNNL_DTYPE_HALF)
    y = empty([2], cnnl.CNNL_DTYPE_HALF)
    cnnl.threshold(handle, x.desc, x.ptr, 0.1, 5.0, y.desc, y.ptr)  # 0.1 rounds to the half 0.1 (0.0999755...)
    sync(handle)
    assert y.read().tolist() == [5.0, np.float16(0.1001)]


def test_threshold_bad_arguments(handle):
    x, y, other = empty([4]), empty([4]), empty([5])
    ints = empty([4], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.threshold(handle, x.desc, x.ptr, 0, 0, other.desc, other.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="threshold"):
        cnnl.threshold(handle, ints.desc, ints.ptr, 0.5, 0, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="value"):
        cnnl.threshold(handle, x.desc, x.ptr, 0, None, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        cnnl.hardtanh(handle, ints.desc, ints.ptr, 1, 0, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="min_val"):
        cnnl.hardtanh(handle, x.desc, x.ptr, -1.0, 1.0, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_y_desc"):
        cnnl.hardtanhBackward(handle, x.desc, x.ptr, other.desc, other.ptr, 1, -1, y.desc, y.ptr)
    nothing = empty([3, 0])
    cnnl.hardtanh(handle, nothing.desc, None, 1, -1, nothing.desc, None)
