"""Strided slice backward and as_strided backward (cnnl/ops/view_backward.py) against torch autograd."""
import numpy as np
import pytest

import cnnl
import cnrt

from .helpers import ALL, FLOATS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor
from .tolerances import assert_close

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op


@pytest.mark.parametrize("code", ALL)
def test_strided_slice_backward(handle, code):
    begin, end, stride = [1, -1, 0], [4, -6, 5], [2, -2, 1]
    dims = (5, 7, 5)
    shape = tuple(len(range(*slice(b, e, s).indices(n))) for b, e, s, n in zip(begin, end, stride, dims))
    grad = random_values(np.random.default_rng(code), shape, code)
    dy, dx = tensor(grad, code), empty(list(dims), code, strides=[1, 5, 35])
    cnnl.stridedSliceBackward(handle, begin, end, stride, dy.desc, dy.ptr, dx.desc, dx.ptr)
    sync(handle)
    expected = np.zeros(dims, NUMPY[code])
    expected[tuple(slice(b, e, s) for b, e, s in zip(begin, end, stride))] = grad
    np.testing.assert_array_equal(dx.read(), expected)


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("view", [((2, 3), (3, 1), 1), ((3, 4), (2, 1), 0), ((4, 3), (0, 2), 2),
                                  ((2, 2, 2), (4, 2, 1), 0)])
def test_as_strided_backward_matches_autograd(handle, code, view):
    size, stride, offset = view
    rng = np.random.default_rng(code)
    grad = random_values(rng, size, code)
    x = torch.zeros(12, dtype=torch.float64, requires_grad=True)
    torch.as_strided(x, size, stride, offset).backward(torch.from_numpy(as_float64(grad)))
    dy, dx = tensor(grad, code), empty([3, 4], code)
    size_ws = cnnl.getAsStridedBackwardWorkspaceSize(handle, dx.desc)
    workspace = cnrt.malloc(size_ws) if size_ws else None
    cnnl.asStridedBackward(handle, dy.desc, dy.ptr, dx.desc, dx.ptr, list(stride), offset, workspace, size_ws)
    sync(handle)
    assert_close(dx.read().reshape(-1), x.grad.numpy(), NUMPY[code], scale=np.abs(as_float64(grad)).sum())


def test_view_backward_bad_arguments(handle):
    dy, dx = tensor(np.ones((2, 2), np.float32)), empty([3, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dy_desc"):
        cnnl.stridedSliceBackward(handle, [0, 0], [3, 3], [1, 1], dy.desc, dy.ptr, dx.desc, dx.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"stride\[1\]"):
        cnnl.stridedSliceBackward(handle, [0, 0], [2, 2], [1, 0], dy.desc, dy.ptr, dx.desc, dx.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="stride"):
        cnnl.asStridedBackward(handle, dy.desc, dy.ptr, dx.desc, dx.ptr, [8, 1], 0, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="stride"):
        cnnl.asStridedBackward(handle, dy.desc, dy.ptr, dx.desc, dx.ptr, [1], 0, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="storage_offset"):
        cnnl.asStridedBackward(handle, dy.desc, dy.ptr, dx.desc, dx.ptr, [1, 1], -1, None, 0)
    ints = empty([3, 3], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="dx_desc"):
        cnnl.getAsStridedBackwardWorkspaceSize(handle, ints.desc)
    half = empty([3, 3], cnnl.CNNL_DTYPE_HALF)
    assert cnnl.getAsStridedBackwardWorkspaceSize(handle, half.desc) == 36


def test_view_gradients_of_a_full_view_in_place(handle):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = tensor(values)
    cnnl.stridedSliceBackward(handle, [0, 0], [2, 3], [1, 1], g.desc, g.ptr, g.desc, g.ptr)
    cnnl.asStridedBackward(handle, g.desc, g.ptr, g.desc, g.ptr, [3, 1], 0, None, 0)
    sync(handle)
    np.testing.assert_array_equal(g.read(), values)
