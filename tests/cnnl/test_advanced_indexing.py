"""Masked_v4, advanced index, index add and index fill (cnnl/ops/advanced_indexing.py) against torch."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .helpers import (FILL_TYPES, FLOATS, NUMPY, as_float64, empty, fill_reference, fill_values,
                             random_values, raises_status, sync, tensor)
from .tolerances import assert_close

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

I32, I64, BOOL, F32 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64, cnnl.CNNL_DTYPE_BOOL, cnnl.CNNL_DTYPE_FLOAT


def _masked(handle, op, x, mask, out, value=None, scale=None, number=None):
    size = cnnl.getMaskedWorkspaceSize(handle, op, x.desc, mask.desc, value and value.desc, out.desc)
    cnnl.masked_v4(handle, op, x.desc, x.ptr, mask.desc, mask.ptr, value and value.desc, value and value.ptr, scale,
                   None, size, out.desc, out.ptr, number and number.ptr)
    sync(handle)


@pytest.mark.parametrize("code", FLOATS + [I32, BOOL])
def test_masked_fill_from_device_and_host(handle, code):
    rng = np.random.default_rng(code)
    values, mask = random_values(rng, (3, 4), code), rng.random((4,)) < 0.5
    fill = np.array([True if code == BOOL else 2]).astype(NUMPY[code])
    x, m, out = tensor(values, code), tensor(mask), empty([3, 4], code)
    _masked(handle, cnnl.CNNL_MASKED_FILL, x, m, out, value=tensor(fill, code))
    np.testing.assert_array_equal(out.read(), np.where(mask, fill[0], values))
    out2 = empty([3, 4], code)
    _masked(handle, cnnl.CNNL_MASKED_FILL_HOST, x, m, out2, scale=fill[0].item())
    np.testing.assert_array_equal(out2.read(), np.where(mask, fill[0], values))


def test_masked_select_scatter_and_scale(handle):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    mask = np.array([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 0, 0]], np.uint8)
    x, m = tensor(values), tensor(mask, cnnl.CNNL_DTYPE_UINT8)
    out, number = empty([12]), empty([1], I32)
    _masked(handle, cnnl.CNNL_MASKED_SELECT, x, m, out, number=number)
    assert number.read()[0] == 4 and out.read()[:4].tolist() == [0, 3, 8, 9]
    source = tensor(np.array([-1, -2, -3, -4, -5], np.float32))
    scattered = empty([3, 4])
    _masked(handle, cnnl.CNNL_MASKED_SCATTER, x, m, scattered, value=source)
    expected = torch.from_numpy(values).masked_scatter(torch.from_numpy(mask.astype(bool)),
                                                       torch.tensor([-1., -2., -3., -4., -5.]))
    np.testing.assert_array_equal(scattered.read(), expected.numpy())
    scaled = empty([3, 4])
    _masked(handle, cnnl.CNNL_MASKED_SCALE, x, m, scaled, scale=2.5)
    np.testing.assert_array_equal(scaled.read(), values * mask * 2.5)


def _index(handle, values, code, indices):
    x = tensor(values, code)
    descs, pointers = [], []
    for index in indices:
        if index is None:
            descs.append(None)
            pointers.append(None)
        else:
            t = tensor(index, BOOL if index.dtype == np.bool_ else None)
            descs.append(t.desc)
            pointers.append(t.ptr)
    ndim, dims = cnnl.getAdvancedIndexOutputDim(handle, x.desc, descs + [None] * (8 - len(descs)))
    size = cnnl.getAdvancedIndexWorkspaceSize(handle, x.desc, descs)
    out, out_dims, out_ndim = empty(list(dims), code), empty([ndim], I64), empty([1], I32)
    workspace = cnrt.malloc(size) if size else None
    cnnl.advancedIndex(handle, x.desc, x.ptr, descs, pointers, workspace, size, out.desc, out.ptr, out_dims.ptr,
                       out_ndim.ptr)
    sync(handle)
    rank = int(out_ndim.read()[0])
    real = tuple(int(n) for n in out_dims.read()[:rank])
    return dims, out.read().reshape(-1)[:int(np.prod(real))].reshape(real)


CASES = {
    "one int": [np.array([2, 0, -1], np.int64)],
    "second axis": [None, np.array([[1, 0], [3, 3]], np.int32)],
    "adjacent pair": [None, np.array([0, 2], np.int32), np.array([1, -4], np.int64)],
    "separated pair": [np.array([1, 0], np.int32), None, np.array([3, 2], np.int32)],
    "mask": [np.array([True, False, True])],
    "mask over two axes": [np.array([[True, False, False, True]] * 2 + [[False] * 4]), None],
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("code", [F32, cnnl.CNNL_DTYPE_HALF, I64])
def test_advanced_index_matches_torch(handle, name, code):
    values = random_values(np.random.default_rng(1), (3, 4, 5), code)
    indices = CASES[name]
    reported, got = _index(handle, values, code, indices)
    key = tuple(slice(None) if i is None else torch.from_numpy(i) for i in indices)
    expected = torch.from_numpy(as_float64(values))[key].numpy()
    np.testing.assert_array_equal(as_float64(got), expected)
    if not any(i is not None and i.dtype == np.bool_ for i in indices):
        assert reported == expected.shape


@pytest.mark.parametrize("code", FLOATS + [I32])
def test_index_add_matches_torch(handle, code):
    rng = np.random.default_rng(code)
    values, source = random_values(rng, (3, 5), code), random_values(rng, (3, 4), code)
    index = np.array([4, 0, 4, 2], np.int32)
    x, s, idx, out = tensor(values, code), tensor(source, code), tensor(index), empty([3, 5], code)
    cnnl.indexAdd(handle, 1, x.desc, x.ptr, idx.desc, idx.ptr, s.desc, s.ptr, out.desc, out.ptr)
    sync(handle)
    expected = torch.from_numpy(as_float64(values)).index_add(1, torch.from_numpy(index).long(),
                                                              torch.from_numpy(as_float64(source)))
    assert_close(out.read(), expected.numpy(), NUMPY[code], scale=np.abs(as_float64(values)) + 2 * np.abs(
        as_float64(source)).max())


def test_index_add_in_place_and_out_of_range(handle):
    x, s = tensor(np.zeros((2, 3), np.float32)), tensor(np.ones((2, 2), np.float32))
    idx = tensor(np.array([1, 1], np.int64))
    cnnl.indexAdd(handle, -1, x.desc, x.ptr, idx.desc, idx.ptr, s.desc, s.ptr, x.desc, x.ptr)
    sync(handle)
    assert x.read().tolist() == [[0, 2, 0], [0, 2, 0]]
    bad = tensor(np.array([0, 3], np.int64))
    cnnl.indexAdd(handle, 1, x.desc, x.ptr, bad.desc, bad.ptr, s.desc, s.ptr, x.desc, x.ptr)
    with pytest.raises(Exception, match="out of range"):
        sync(handle)


@pytest.mark.parametrize("mode", ["v1", cnnl.CNNL_POINTER_MODE_HOST, cnnl.CNNL_POINTER_MODE_DEVICE])
@pytest.mark.parametrize("code", [F32, cnnl.CNNL_DTYPE_BFLOAT16, I32])
def test_index_fill_matches_torch(handle, mode, code):
    values = random_values(np.random.default_rng(3), (4, 3), code)
    index = np.array([-1, 0, 0], np.int32)
    x, idx, out = tensor(values, code), tensor(index), empty([4, 3], code)
    fill = -2.5 if code != I32 else -2
    if mode == "v1":
        cnnl.indexFill(handle, 0, fill, x.desc, x.ptr, idx.desc, idx.ptr, out.desc, out.ptr)
    else:
        value = fill if mode == cnnl.CNNL_POINTER_MODE_HOST else tensor(np.array([fill]).astype(NUMPY[code]), code).ptr
        cnnl.indexFill_v2(handle, 0, mode, value, x.desc, x.ptr, idx.desc, idx.ptr, out.desc, out.ptr)
    sync(handle)
    expected = torch.from_numpy(as_float64(values)).index_fill(0, torch.from_numpy(index).long(), fill)
    np.testing.assert_array_equal(as_float64(out.read()), expected.numpy())


def test_advanced_indexing_bad_arguments(handle):
    x = tensor(np.zeros((3, 4), np.float32))
    floats = tensor(np.array([1.0], np.float32))
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg=r"indices_desc\[0\]"):
        cnnl.getAdvancedIndexOutputDim(handle, x.desc, [floats.desc])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices_desc"):
        cnnl.getAdvancedIndexOutputDim(handle, x.desc, [None, None])
    mask = tensor(np.array([True, False]))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"indices_desc\[0\]"):
        cnnl.getAdvancedIndexOutputDim(handle, x.desc, [mask.desc])
    a, b = tensor(np.array([0, 1], np.int32)), tensor(np.array([0, 1, 2], np.int32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices_desc"):
        cnnl.getAdvancedIndexOutputDim(handle, x.desc, [a.desc, b.desc])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices_desc"):
        cnnl.getAdvancedIndexOutputDim(handle, x.desc, [a.desc, None, a.desc])
    wrong = empty([3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.advancedIndex(handle, x.desc, x.ptr, [a.desc], [a.ptr], None, 16, wrong.desc, wrong.ptr, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="masked_op"):
        cnnl.masked_v4(handle, 9, x.desc, x.ptr, x.desc, x.ptr, None, None, None, None, 0, x.desc, x.ptr, None)
    small = empty([5])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.masked_v4(handle, cnnl.CNNL_MASKED_SELECT, x.desc, x.ptr, x.desc, x.ptr, None, None, None, None, 0,
                       small.desc, small.ptr, small.ptr)
    ints = tensor(np.zeros((3, 4), np.int32))
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
        cnnl.masked_v4(handle, cnnl.CNNL_MASKED_SCALE, ints.desc, ints.ptr, x.desc, x.ptr, None, None, 2.0, None, 0,
                       ints.desc, ints.ptr, None)
    idx2 = tensor(np.zeros((2, 2), np.int32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="index_desc"):
        cnnl.indexFill(handle, 0, 1.0, x.desc, x.ptr, idx2.desc, idx2.ptr, x.desc, x.ptr)
    source = tensor(np.zeros((3, 3), np.float32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="source_desc"):
        cnnl.indexAdd(handle, 1, x.desc, x.ptr, a.desc, a.ptr, source.desc, source.ptr, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dim"):
        cnnl.indexFill_v2(handle, 2, cnnl.CNNL_POINTER_MODE_HOST, 1.0, x.desc, x.ptr, a.desc, a.ptr, x.desc, x.ptr)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_advanced_index_fuzzed_against_numpy(data):
    dims = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    count = data.draw(st.integers(1, len(dims)))
    rng = np.random.default_rng(sum(dims))
    index_shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    indices = [None if data.draw(st.booleans()) and i < count - 1 else
               rng.integers(-n, n, index_shape).astype(np.int64) for i, n in enumerate(dims[:count])]
    values = np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims)
    h = cnnl.create()
    try:
        _, got = _index(h, values, F32, indices)
    finally:
        cnnl.destroy(h)
    expected = values[tuple(slice(None) if i is None else i for i in indices)]
    np.testing.assert_array_equal(got, expected)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.sampled_from(FILL_TYPES), value=fill_values())
def test_index_and_masked_fills_convert_out_of_range_values_as_c_and_torch_do(handle, code, value):
    """The host value of cnnlIndexFill_v2 and of Masked_v4's FILL_HOST: -1 into uint8 is 255, as torch gives."""
    expected = fill_reference(value, code)
    values = np.zeros((3, 2), NUMPY[code])
    x, idx, out = tensor(values, code), tensor(np.array([0, 2], np.int32), I32), empty([3, 2], code)
    cnnl.indexFill_v2(handle, 0, cnnl.CNNL_POINTER_MODE_HOST, value, x.desc, x.ptr, idx.desc, idx.ptr, out.desc,
                      out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read()[[0, 2]], np.full((2, 2), expected))
    mask = tensor(np.array([[1, 0], [0, 1], [1, 1]], np.uint8), cnnl.CNNL_DTYPE_UINT8)
    _masked(handle, cnnl.CNNL_MASKED_FILL_HOST, x, mask, out, scale=value)
    np.testing.assert_array_equal(out.read()[[0, 1, 2, 2], [0, 1, 0, 1]], np.full(4, expected))
