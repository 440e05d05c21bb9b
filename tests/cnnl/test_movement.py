"""Copy, transpose, expand, concat, split, strided slice, fill, cast and select through the API."""
import itertools
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .references import round_to_format
from .helpers import (ALL, FILL_TYPES, NUMPY, STORAGE, as_float64, empty, fill_reference, fill_values, random_values,
                      raises_status, strided_layouts, sync, tensor)


@st.composite
def layout_pair(draw):
    ndim = draw(st.integers(1, 4))
    dims = [draw(st.integers(1, 5)) for _ in range(ndim)]
    return (dims, draw(st.sampled_from(["dense", "padded", "transposed"])),
            draw(st.sampled_from(["dense", "padded", "transposed"])), draw(st.sampled_from(ALL)),
            draw(st.integers(0, 2**16)))


@settings(max_examples=30, deadline=None)
@given(layout_pair())
def test_copy_any_strides_to_any_strides(problem):
    dims, src_layout, dst_layout, code, seed = problem
    handle = cnnl.create()
    rng = np.random.default_rng(seed)
    values = random_values(rng, dims, code)
    src = tensor(values, code, strided_layouts(dims, rng)[src_layout])
    dst = empty(dims, code, strided_layouts(dims, rng)[dst_layout])
    cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    sync(handle)
    np.testing.assert_array_equal(dst.read(), values)


def test_copy_from_a_broadcast_stride(handle):
    src = tensor(np.array([7.0], np.float32))
    cnnl.setTensorDescriptorEx(src.desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [3, 2], [0, 0])
    dst = empty([3, 2])
    cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    sync(handle)
    assert (dst.read() == 7).all()


def test_overlapping_output_strides_are_bad_param(handle):
    src = tensor(np.ones((3, 2), np.float32))
    dst = empty([3, 2], strides=[0, 1])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output"):
        cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)


def test_an_empty_output_with_zero_strides_is_no_overlap(handle):
    """torch makes empty outputs with 0 strides (the gradient of linalg.vecdot): no elements, nothing overlaps."""
    src = tensor(np.ones((0, 3), np.float32))
    dst = empty([0, 3], strides=[1, 0])
    cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    sync(handle)


def transpose_desc(permute):
    desc = cnnl.createTransposeDescriptor()
    cnnl.setTransposeDescriptor(desc, permute)
    return desc


@pytest.mark.parametrize("permute", list(itertools.permutations(range(3))) + [(3, 1, 0, 2)])
@pytest.mark.parametrize("code", ALL)
def test_transpose(handle, permute, code):
    dims = (2, 3, 4, 5)[:len(permute)]
    values = random_values(np.random.default_rng(0), dims, code)
    x = tensor(values, code)
    y = empty([dims[p] for p in permute], code)
    desc = transpose_desc(permute)
    assert cnnl.getTransposeDescriptor(desc) == tuple(permute)
    ws = cnnl.getTransposeWorkspaceSize(handle, x.desc, desc)
    cnnl.transpose_v2(handle, desc, x.desc, x.ptr, y.desc, y.ptr, None, ws)
    sync(handle)
    np.testing.assert_array_equal(y.read(), values.transpose(permute))


def test_transpose_of_a_strided_input_needs_workspace(handle):
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = tensor(values, strides=[1, 3])
    y = empty([4, 3])
    desc = transpose_desc([1, 0])
    ws = cnnl.getTransposeWorkspaceSize(handle, x.desc, desc)
    assert ws == 12 * 4
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.transpose_v2(handle, desc, x.desc, x.ptr, y.desc, y.ptr, None, 0)
    cnnl.transpose_v2(handle, desc, x.desc, x.ptr, y.desc, y.ptr, cnrt.malloc(ws), ws)
    sync(handle)
    np.testing.assert_array_equal(y.read(), values.T)
    cnnl.transpose(handle, desc, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    np.testing.assert_array_equal(y.read(), values.T)


def test_transpose_bad_arguments(handle):
    x, y = empty([2, 3]), empty([2, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="permute"):
        cnnl.setTransposeDescriptor(cnnl.createTransposeDescriptor(), [0, 0])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.transpose_v2(handle, transpose_desc([1, 0]), x.desc, x.ptr, y.desc, y.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.transpose_v2(handle, transpose_desc([0, 2, 1]), x.desc, x.ptr, y.desc, y.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.transpose_v2(handle, cnnl.createTransposeDescriptor(), x.desc, x.ptr, y.desc, y.ptr, None, 0)


def test_expand(handle):
    values = np.arange(3, dtype=np.int32).reshape(3, 1)
    x, y = tensor(values), empty([2, 3, 4], cnnl.CNNL_DTYPE_INT32)
    cnnl.expand(handle, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    np.testing.assert_array_equal(y.read(), np.broadcast_to(values, (2, 3, 4)))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        cnnl.expand(handle, y.desc, y.ptr, x.desc, x.ptr)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("code", ALL)
def test_concat_and_split(handle, axis, code):
    rng = np.random.default_rng(1)
    pieces = []
    for extent in (1, 3, 2):
        dims = [2, 4, 3]
        dims[axis] = extent
        pieces.append(random_values(rng, dims, code))
    whole = np.concatenate(pieces, axis=axis)
    inputs = [tensor(p, code) for p in pieces]
    out = empty(whole.shape, code, strided_layouts(list(whole.shape), rng)["padded"])
    ws = cnnl.getConcatWorkspaceSize(handle, len(inputs))
    cnnl.concat(handle, axis, [t.desc for t in inputs], [t.ptr for t in inputs], cnrt.malloc(ws), ws, out.desc,
                out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), whole)
    outputs = [empty(p.shape, code) for p in pieces]
    ws = cnnl.getSplitWorkspaceSize(handle, len(outputs))
    cnnl.split(handle, axis, out.desc, out.ptr, cnrt.malloc(ws), ws, [t.desc for t in outputs],
               [t.ptr for t in outputs])
    sync(handle)
    for got, want in zip(outputs, pieces):
        np.testing.assert_array_equal(got.read(), want)


def test_concat_and_split_bad_arguments(handle):
    a, b, out = empty([2, 3]), empty([2, 4]), empty([2, 7])
    ws = cnnl.getConcatWorkspaceSize(handle, 2)
    assert ws > 0
    workspace = cnrt.malloc(ws)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.concat(handle, 1, [a.desc, b.desc], [a.ptr, b.ptr], workspace, ws - 1, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"inputs_desc\[1\]"):
        cnnl.concat(handle, 1, [a.desc, empty([3, 4]).desc], [a.ptr, b.ptr], workspace, ws, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.concat(handle, 1, [a.desc, a.desc], [a.ptr, a.ptr], workspace, ws, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="inputs"):
        cnnl.concat(handle, 1, [a.desc, b.desc], [a.ptr], workspace, ws, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="axis"):
        cnnl.split(handle, 2, out.desc, out.ptr, workspace, ws, [a.desc, b.desc], [a.ptr, b.ptr])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"outputs_desc\[0\]"):
        cnnl.split(handle, 1, out.desc, out.ptr, workspace, ws, [empty([2, 3], cnnl.CNNL_DTYPE_HALF).desc, b.desc],
                   [a.ptr, b.ptr])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="concat_num"):
        cnnl.getConcatWorkspaceSize(handle, 0)


@st.composite
def slices(draw):
    ndim = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 6)) for _ in range(ndim)]
    begin, end, stride = [], [], []
    for n in dims:
        step = draw(st.sampled_from([1, 2, 3, -1, -2]))
        begin.append(draw(st.integers(-n - 1, n + 1)))
        end.append(draw(st.integers(-n - 1, n + 1)))
        stride.append(step)
    return dims, begin, end, stride, draw(st.integers(0, 1000))


@settings(max_examples=30, deadline=None)
@given(slices())
def test_strided_slice_follows_python_slices(problem):
    dims, begin, end, stride, seed = problem
    handle = cnnl.create()
    values = random_values(np.random.default_rng(seed), dims, cnnl.CNNL_DTYPE_INT16)
    want = values[tuple(slice(b, e, s) for b, e, s in zip(begin, end, stride))]
    if want.size == 0:
        return
    x, y = tensor(values), empty(want.shape, cnnl.CNNL_DTYPE_INT16)
    cnnl.stridedSlice(handle, x.desc, x.ptr, begin, end, stride, y.desc, y.ptr)
    sync(handle)
    np.testing.assert_array_equal(y.read(), want)


def test_strided_slice_bad_arguments(handle):
    x, y = empty([4, 4]), empty([2, 2])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"stride\[1\]"):
        cnnl.stridedSlice(handle, x.desc, x.ptr, [0, 0], [4, 4], [2, 0], y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.stridedSlice(handle, x.desc, x.ptr, [0, 0], [4, 4], [1, 2], y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="begin"):
        cnnl.stridedSlice(handle, x.desc, x.ptr, [0], [4, 4], [2, 2], y.desc, y.ptr)


@pytest.mark.parametrize("code", ALL)
def test_fill_host_and_device_value(handle, code):
    dtype = NUMPY[code]
    value = True if dtype.kind == "b" else (-3 if dtype.kind == "i" else 5 if dtype.kind == "u" else 2.75)
    out = empty([3, 4], code, strides=[8, 2])
    cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, value, out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), np.full((3, 4), value, dtype))
    scalar = tensor(np.array([0 if dtype.kind == "b" else 1], dtype), code)
    cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_DEVICE, scalar.ptr, out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), np.full((3, 4), scalar.read()[0], dtype))


@pytest.mark.mlusim_sanitize("off")  # the sanitizer sees every command queued: it turns this path off
def test_a_small_fill_on_an_idle_queue_is_done_in_the_call_and_behind_work_waits_its_turn(handle):
    """A fill of at most mlusim.queue.SMALL_OP_BYTES runs on the calling thread when the queue is idle (waking the
    worker costs more than the fill): the queue has nothing left to run when the call returns."""
    from mlusim.queue import SMALL_OP_BYTES
    queue = cnnl.getQueue(handle)
    sync(handle)
    small = empty([SMALL_OP_BYTES // 4])
    cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, 1.5, small.desc, small.ptr)
    assert cnrt.queueQuery(queue) == cnrt.cnrtSuccess
    np.testing.assert_array_equal(small.read(), np.full(SMALL_OP_BYTES // 4, 1.5, np.float32))
    gate = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: gate.wait(10), None)  # the queue is busy: the small fill waits its turn
    cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, 2.5, small.desc, small.ptr)
    assert cnrt.queueQuery(queue) == cnrt.cnrtErrorNotReady
    gate.set()
    sync(handle)
    np.testing.assert_array_equal(small.read(), np.full(SMALL_OP_BYTES // 4, 2.5, np.float32))


def test_fill_bad_arguments(handle):
    out = empty([3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="pointer_mode"):
        cnnl.fill_v3(handle, 2, 1.0, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="value"):
        cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="value"):
        cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_DEVICE, 0, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="value"):
        cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_DEVICE, 12345, out.desc, out.ptr)


CAST_SOURCES = {
    "float": lambda rng: np.concatenate([rng.uniform(-300, 300, 20), [0.0, -0.0, 1e6, -1e6, 2.5, -2.5, 65520.0,
                                                                      1e-8, np.inf, -np.inf, np.nan]]),
    "int": lambda rng: np.concatenate([rng.integers(-300, 300, 20), [0, 127, 128, -129, 255, 256, 40000,
                                                                     -40000, 2**31 - 1]]),
}


def cast_reference(values, src, dst):
    """Independent conversion: RNE for floats, truncation + saturation into integers, != 0 into bool."""
    if dst.kind == "b":
        return as_float64(values) != 0
    if dst.kind == "f" or dst == NUMPY[cnnl.CNNL_DTYPE_BFLOAT16]:
        exact = as_float64(values) if src.kind != "i" or src.itemsize < 8 else values.astype(np.float64)
        if dst == np.float64:
            return exact
        return round_to_format(exact, dst)
    info = np.iinfo(dst)
    floats = as_float64(values)
    truncated = np.trunc(np.nan_to_num(floats, nan=0.0, posinf=float(info.max), neginf=float(info.min)))
    return np.clip(truncated, info.min, info.max)


@pytest.mark.parametrize("pair", sorted(cnnl.dtypes.CAST_TYPES.items()), ids=lambda p: str(p[0]))
def test_cast_every_pair(handle, pair):
    cast_type, (src_code, dst_code) = pair
    src, dst = STORAGE[src_code], STORAGE[dst_code]
    rng = np.random.default_rng(cast_type)
    raw = CAST_SOURCES["int" if src.kind in "iub" else "float"](rng)
    if src.kind == "b":
        values = raw % 2 == 0
    elif src.kind in "iu":
        info = np.iinfo(src)
        values = np.clip(raw, info.min, info.max).astype(src)
    else:
        with np.errstate(over="ignore"):
            values = as_float64(raw).astype(src)
    x = tensor(values, src_code)
    y = empty([values.size], dst_code)
    cnnl.castDataType(handle, x.desc, x.ptr, cast_type, y.desc, y.ptr)
    sync(handle)
    got, want = y.read(), cast_reference(values, src, dst)
    if dst.kind in "iub":
        np.testing.assert_array_equal(got.astype(np.float64), as_float64(want))
    else:
        np.testing.assert_array_equal(np.isnan(as_float64(got)), np.isnan(want))
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(as_float64(got)[ok], want[ok])


@pytest.mark.parametrize("cast_type", [cnnl.CNNL_CAST_FLOAT_TO_HALF, cnnl.CNNL_CAST_HALF_TO_FLOAT,
                                       cnnl.CNNL_CAST_FLOAT_TO_BFLOAT16, cnnl.CNNL_CAST_BFLOAT16_TO_FLOAT])
def test_a_large_contiguous_cast_split_between_the_host_threads_matches_the_reference(handle, cast_type):
    """Past INLINE_DIRECT_ELEMENTS a contiguous float <-> 16-bit float cast runs one flat range per host thread:
    every element, specials included (where the ranges meet too), is converted as in the small case."""
    from cnnl.kernels.parallel import INLINE_DIRECT_ELEMENTS
    src_code, dst_code = cnnl.dtypes.CAST_TYPES[cast_type]
    src, dst = NUMPY[src_code], NUMPY[dst_code]
    count = INLINE_DIRECT_ELEMENTS + 3
    rng = np.random.default_rng(cast_type)
    wide = rng.uniform(-70000, 70000, count)
    specials = CAST_SOURCES["float"](rng)
    for start in (0, count // 2 - len(specials) // 2, count - len(specials)):
        wide[start:start + len(specials)] = specials
    with np.errstate(over="ignore"):
        values = wide.astype(src)
    x, y = tensor(values, src_code), empty([count], dst_code)
    cnnl.castDataType(handle, x.desc, x.ptr, cast_type, y.desc, y.ptr)
    sync(handle)
    got, want = as_float64(y.read()), cast_reference(values, src, dst)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))  # -0.0 stays -0.0


def test_cast_enum_names():
    assert cnnl.CNNL_CAST_FLOAT_TO_HALF == 1
    assert cnnl.dtypes.CAST_TYPES[cnnl.CNNL_CAST_INT32_TO_BFLOAT16] == (cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_BFLOAT16)
    assert cnnl.dtypes.CAST_TYPES[cnnl.CNNL_CAST_UINT32_TO_INT64] == (cnnl.CNNL_DTYPE_UINT32, cnnl.CNNL_DTYPE_INT64)
    assert len(cnnl.dtypes.CAST_TYPES) == 90 + 10  # every pair of the ten, and the ten unsigned 32/64-bit pairs


def test_cast_type_must_match_the_tensors(handle):
    x, y = empty([3]), empty([3], cnnl.CNNL_DTYPE_HALF)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.castDataType(handle, x.desc, x.ptr, cnnl.CNNL_CAST_FLOAT_TO_INT32, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        cnnl.castDataType(handle, x.desc, x.ptr, cnnl.CNNL_CAST_INT32_TO_HALF, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="cast_type"):
        cnnl.castDataType(handle, x.desc, x.ptr, 999, y.desc, y.ptr)


@pytest.mark.parametrize("code", ALL)
def test_select(handle, code):
    rng = np.random.default_rng(3)
    condition = rng.random((3, 1, 4)) < 0.5
    then_values, else_values = random_values(rng, (5, 4), code), random_values(rng, (3, 5, 1), code)
    cond, then = tensor(condition, cnnl.CNNL_DTYPE_BOOL), tensor(then_values, code)
    other, out = tensor(else_values, code), empty([3, 5, 4], code)
    ws = cnnl.getSelectV2WorkspaceSize(handle, cond.desc, then.desc, other.desc)
    cnnl.selectV2(handle, cond.desc, cond.ptr, then.desc, then.ptr, other.desc, other.ptr,
                  cnrt.malloc(ws) if ws else None, ws, out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), np.where(condition, then_values, else_values))


def test_select_bad_arguments(handle):
    cond, a, b, out = empty([2], cnnl.CNNL_DTYPE_BOOL), empty([2]), empty([2], cnnl.CNNL_DTYPE_HALF), empty([2])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="else_desc"):
        cnnl.selectV2(handle, cond.desc, cond.ptr, a.desc, a.ptr, b.desc, b.ptr, None, 0, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="then_desc"):
        cnnl.selectV2(handle, cond.desc, cond.ptr, empty([3]).desc, a.ptr, a.desc, a.ptr, None, 0, out.desc, out.ptr)



@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.sampled_from(FILL_TYPES), value=fill_values())
def test_a_host_fill_converts_out_of_range_values_as_c_and_torch_do(handle, code, value):
    """-1 into uint8 is 255 (torch's fill_ and C's conversion), 2^32 + 5 into int32 is 5, 300 into int8 is 44."""
    out = empty([5], code)
    cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, value, out.desc, out.ptr)
    sync(handle)
    np.testing.assert_array_equal(out.read(), np.full(5, fill_reference(value, code)))
