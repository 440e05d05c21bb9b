"""Roll, flip, tile and triangles (cnnl/ops/placement.py) against torch / numpy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .helpers import ALL, empty, random_values, raises_status, sync, tensor

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op


def _roll(handle, values, code, shifts, dims, strides=None, out_strides=None):
    x = tensor(values, code, strides=strides)
    out = empty(list(values.shape), code, strides=out_strides)
    size = cnnl.getRollWorkspaceSize(handle, x.desc)
    workspace = cnrt.malloc(size) if size else None
    cnnl.roll(handle, x.desc, x.ptr, shifts, dims, workspace, size, out.desc, out.ptr)
    sync(handle)
    return out.read()


@pytest.mark.parametrize("code", ALL)
def test_roll_matches_torch(handle, code):
    values = random_values(np.random.default_rng(code), (3, 4, 5), code)
    cases = (([1], [0]), ([-2, 7], [2, 1]), ([5, -1, 2], [0, 1, 2]), ([2, 3], [1, 1]), ([1], [2]), ([-1], [1]),
             ([4], [-1]), ([0], [1]))
    for strides in (None, [1, 3, 12]):  # dense: one shifted flat copy + patch; strided: block copies
        for shifts, dims in cases:
            got = _roll(handle, values, code, shifts, dims, strides=strides)
            np.testing.assert_array_equal(got, np.roll(values, shifts, dims))  # numpy's roll is torch's


def test_flattened_roll_into_a_strided_output(handle):
    values = np.arange(12, dtype=np.int32).reshape(3, 4)
    for dims in (None, []):
        got = _roll(handle, values, cnnl.CNNL_DTYPE_INT32, [5], dims, out_strides=[1, 3])
        np.testing.assert_array_equal(got, torch.roll(torch.from_numpy(values), 5).numpy())


@pytest.mark.parametrize("code", ALL)
def test_flip(handle, code):
    values = random_values(np.random.default_rng(code), (2, 3, 4), code)
    for dims in ([0], [-1], [2, 0], [0, 1, 2], []):
        x, out = tensor(values, code, strides=[12, 1, 3]), empty([2, 3, 4], code)
        cnnl.flip(handle, dims, x.desc, x.ptr, out.desc, out.ptr)
        sync(handle)
        np.testing.assert_array_equal(out.read(), np.flip(values, tuple(dims)) if dims else values)


@pytest.mark.parametrize("code", ALL)
def test_tile(handle, code):
    values = random_values(np.random.default_rng(code), (2, 1, 3), code)
    reps = (2, 4, 3)
    x, out = tensor(values, code, strides=[1, 7, 2]), empty([4, 4, 9], code, strides=[1, 4, 16])
    cnnl.tile(handle, x.desc, x.ptr, out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), np.tile(values, reps))


@pytest.mark.parametrize("code", ALL)
@pytest.mark.parametrize("diagonal", [-2, 0, 1, 5])
def test_tri(handle, code, diagonal):
    values = random_values(np.random.default_rng(code), (2, 4, 5), code)
    for upper, reference in ((True, np.triu), (False, np.tril)):
        x, out = tensor(values, code), empty([2, 4, 5], code)
        cnnl.tri(handle, diagonal, upper, x.desc, x.ptr, out.desc, out.ptr)
        sync(handle)
        np.testing.assert_array_equal(out.read(), reference(values, diagonal))


def test_placement_bad_arguments(handle):
    x, other = tensor(np.zeros((2, 3), np.float32)), empty([3, 2])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="shifts"):
        cnnl.roll(handle, x.desc, x.ptr, [1, 2], [0], None, 0, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="shifts"):
        cnnl.roll(handle, x.desc, x.ptr, [1, 2], None, None, 0, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"dims\[0\]"):
        cnnl.roll(handle, x.desc, x.ptr, [1], [2], None, 0, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.flip(handle, [0], x.desc, x.ptr, other.desc, other.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dimension"):
        cnnl.flip(handle, [0, -2], x.desc, x.ptr, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.tile(handle, x.desc, x.ptr, empty([4, 4]).desc, other.ptr)
    vector = empty([3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        cnnl.tri(handle, 0, True, vector.desc, vector.ptr, vector.desc, vector.ptr)
    strided = tensor(np.zeros((2, 3), np.float32), strides=[1, 2])
    assert cnnl.getRollWorkspaceSize(handle, strided.desc) == 24
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.roll(handle, strided.desc, strided.ptr, [1], [0], None, 0, x.desc, x.ptr)
    nothing = empty([0, 3])
    cnnl.roll(handle, nothing.desc, None, [1], [1], None, 0, nothing.desc, None)
    cnnl.tile(handle, nothing.desc, None, empty([0, 6]).desc, None)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_roll_and_flip_fuzzed(data):
    dims = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    axes = data.draw(st.lists(st.integers(-len(dims), len(dims) - 1), min_size=1, max_size=3))
    shifts = [data.draw(st.integers(-12, 12)) for _ in axes]
    values = np.arange(int(np.prod(dims)), dtype=np.int16).reshape(dims)
    h = cnnl.create()
    try:
        got = _roll(h, values, cnnl.CNNL_DTYPE_INT16, shifts, axes)
        unique = sorted({a % len(dims) for a in axes})
        x, out = tensor(values, cnnl.CNNL_DTYPE_INT16), empty(dims, cnnl.CNNL_DTYPE_INT16)
        cnnl.flip(h, unique, x.desc, x.ptr, out.desc, out.ptr)
        sync(h)
    finally:
        cnnl.destroy(h)
    np.testing.assert_array_equal(got, torch.roll(torch.from_numpy(values), shifts, axes).numpy())
    np.testing.assert_array_equal(out.read(), np.flip(values, unique))


def test_roll_and_flip_in_place(handle):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tensor(values)
    cnnl.roll(handle, x.desc, x.ptr, [1], [1], None, 0, x.desc, x.ptr)
    sync(handle)
    np.testing.assert_array_equal(x.read(), np.roll(values, 1, 1))
    cnnl.flip(handle, [0, 1], x.desc, x.ptr, x.desc, x.ptr)
    sync(handle)
    np.testing.assert_array_equal(x.read(), np.flip(np.roll(values, 1, 1)))
