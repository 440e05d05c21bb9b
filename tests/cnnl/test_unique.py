"""Unique (cnnl/ops/unique.py) against torch.unique and mlu-ops' documented examples."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .helpers import FLOATS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

ASCEND, FORWARD, REVERSE = cnnl.CNNL_SORT_ASCEND, cnnl.CNNL_UNSORT_FORWARD, cnnl.CNNL_UNSORT_REVERSE


def _unique(handle, values, code, mode, dim=-1, inverse=True, counts=True, index_code=cnnl.CNNL_DTYPE_INT32):
    desc = cnnl.createUniqueDescriptor()
    cnnl.setUniqueDescriptor(desc, mode, dim, inverse, counts)
    x = tensor(values, code)
    size = cnnl.getUniqueWorkspaceSize(handle, desc, x.desc)
    workspace = cnrt.malloc(size) if size else None
    number = empty([1], cnnl.CNNL_DTYPE_INT32)
    out = empty([values.size] if dim == -1 else list(values.shape), code)
    slots = values.size if dim == -1 else values.shape[dim]
    idx = empty(list(values.shape) if dim == -1 else [slots], index_code) if inverse else None
    cnt = empty([slots], index_code) if counts else None
    cnnl.unique_v2(handle, desc, x.desc, x.ptr, workspace, size, number.ptr, out.desc, out.ptr,
                   idx and idx.desc, idx and idx.ptr, cnt and cnt.desc, cnt and cnt.ptr)
    sync(handle)
    cnnl.destroyUniqueDescriptor(desc)
    n = int(number.read()[0])
    shape = [n] if dim == -1 else [n if d == dim else e for d, e in enumerate(values.shape)]
    result = out.read().reshape(-1)[:int(np.prod(shape))].reshape(shape)
    return result, (idx.read() if inverse else None), (cnt.read()[:n] if counts else None)


def test_mlu_ops_examples(handle):
    values = np.array([1, 1, 2, 4, 4, 9, 7, 8, 8], np.int32)
    out, inverse, counts = _unique(handle, values, cnnl.CNNL_DTYPE_INT32, FORWARD)
    assert out.tolist() == [1, 2, 4, 9, 7, 8] and inverse.tolist() == [0, 0, 1, 2, 2, 3, 4, 5, 5]
    out, inverse, counts = _unique(handle, values, cnnl.CNNL_DTYPE_INT32, ASCEND)
    assert out.tolist() == [1, 2, 4, 7, 8, 9] and inverse.tolist() == [0, 0, 1, 2, 2, 5, 3, 4, 4]
    assert counts.tolist() == [2, 1, 2, 1, 2, 1]
    out, inverse, counts = _unique(handle, values, cnnl.CNNL_DTYPE_INT32, REVERSE)
    assert out.tolist() == [8, 7, 9, 4, 2, 1] and inverse.tolist() == [5, 5, 4, 3, 3, 2, 1, 0, 0]
    assert counts.tolist() == [2, 1, 1, 2, 1, 2]


@pytest.mark.parametrize("code", FLOATS + [cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64, cnnl.CNNL_DTYPE_BOOL])
@pytest.mark.parametrize("index_code", [cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64])
def test_sorted_unique_matches_torch(handle, code, index_code):
    rng = np.random.default_rng(code)
    values = random_values(rng, (4, 6), code, -3, 3)
    if code in FLOATS:
        values = np.round(as_float64(values)).astype(NUMPY[code])
        values[0, :3] = np.array([np.nan, -0.0, np.nan]).astype(NUMPY[code])
    out, inverse, counts = _unique(handle, values, code, ASCEND, index_code=index_code)
    source = torch.from_numpy(as_float64(values) if code in FLOATS else values)
    t_out, t_inverse, t_counts = torch.unique(source, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(as_float64(out), t_out.double().numpy())
    numbers = ~np.isnan(as_float64(values))  # which NaN is which is arbitrary (torch's order is not stable)
    np.testing.assert_array_equal(inverse[numbers], t_inverse.numpy()[numbers])
    np.testing.assert_array_equal(as_float64(out)[inverse], as_float64(values))
    np.testing.assert_array_equal(counts, t_counts.numpy())


@pytest.mark.parametrize("dim", [0, 1])
def test_unique_slices_along_a_dim(handle, dim):
    values = np.array([[1, 2, 1, 2], [3, 0, 3, 0], [1, 2, 1, 2]], np.float32)
    out, inverse, counts = _unique(handle, values, cnnl.CNNL_DTYPE_FLOAT, ASCEND, dim=dim)
    t_out, t_inverse, t_counts = torch.unique(torch.from_numpy(values), dim=dim, return_inverse=True,
                                              return_counts=True)
    np.testing.assert_array_equal(out, t_out.numpy())
    np.testing.assert_array_equal(inverse, t_inverse.numpy())
    np.testing.assert_array_equal(counts, t_counts.numpy())


def test_unique_without_extra_outputs_and_empty(handle):
    out, inverse, counts = _unique(handle, np.array([3, 1, 3], np.int32), cnnl.CNNL_DTYPE_INT32, ASCEND,
                                   inverse=False, counts=False)
    assert out.tolist() == [1, 3] and inverse is None and counts is None
    out, _, _ = _unique(handle, np.zeros((0,), np.float32), cnnl.CNNL_DTYPE_FLOAT, ASCEND, inverse=False,
                        counts=False)
    assert out.size == 0


def test_unique_bad_arguments(handle):
    desc = cnnl.createUniqueDescriptor()
    x = tensor(np.array([1, 2], np.int32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="unique_desc"):
        cnnl.getUniqueWorkspaceSize(handle, desc, x.desc)  # never set
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mode"):
        cnnl.setUniqueDescriptor(desc, 9, -1, False, False)
    cnnl.setUniqueDescriptor(desc, ASCEND, 1, True, False)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="unique_desc"):
        cnnl.getUniqueWorkspaceSize(handle, desc, x.desc)  # dim 1 of a 1-D input
    cnnl.setUniqueDescriptor(desc, ASCEND, -1, True, False)
    number, small = empty([1], cnnl.CNNL_DTYPE_INT32), empty([1], cnnl.CNNL_DTYPE_INT32)
    size = cnnl.getUniqueWorkspaceSize(handle, desc, x.desc)
    assert size == 2 * 8
    workspace = cnrt.malloc(size)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.unique_v2(handle, desc, x.desc, x.ptr, workspace, size, number.ptr, small.desc, small.ptr, x.desc,
                       x.ptr, None, None)
    floats = empty([2])
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="indices_desc"):
        cnnl.unique_v2(handle, desc, x.desc, x.ptr, workspace, size, number.ptr, x.desc, x.ptr, floats.desc,
                       floats.ptr, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.unique_v2(handle, desc, x.desc, x.ptr, None, 0, number.ptr, x.desc, x.ptr, x.desc, x.ptr, None, None)
    cnnl.destroyUniqueDescriptor(desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="unique_desc"):
        cnnl.setUniqueDescriptor(desc, ASCEND, -1, False, False)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_unique_fuzzed_against_torch(data):
    dims = data.draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    code = data.draw(st.sampled_from([cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF]))
    dim = data.draw(st.sampled_from([-1] + list(range(len(dims)))))
    values = np.random.default_rng(len(dims)).integers(-3, 3, dims).astype(NUMPY[code])
    h = cnnl.create()
    try:
        out, inverse, counts = _unique(h, values, code, ASCEND, dim=dim)
    finally:
        cnnl.destroy(h)
    kwargs = {} if dim == -1 else {"dim": dim}
    t_out, t_inverse, t_counts = torch.unique(torch.from_numpy(as_float64(values)), return_inverse=True,
                                              return_counts=True, **kwargs)
    np.testing.assert_array_equal(as_float64(out), t_out.numpy())
    np.testing.assert_array_equal(inverse.reshape(-1), t_inverse.numpy().reshape(-1))
    np.testing.assert_array_equal(counts, t_counts.numpy())
