"""cnnlReduce (with and without indices, argmax/argmin), cnnlCumsum and cnnlTopKTensor_v3."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .tolerances import COMPUTE_UNIT, STORE_UNIT, TINY, assert_close
from .helpers import (ALL, FLOATS, INTS, NUMERIC, NUMPY, as_float64, empty, random_values, raises_status, strided_layouts, sync,
                      tensor)

REFERENCES = {cnnl.CNNL_REDUCE_ADD: np.sum, cnnl.CNNL_REDUCE_AVG: np.mean, cnnl.CNNL_REDUCE_MUL: np.prod,
              cnnl.CNNL_REDUCE_MAX: np.max, cnnl.CNNL_REDUCE_MIN: np.min,
              cnnl.CNNL_REDUCE_NORM1: lambda v, axis, keepdims: np.sum(np.abs(v), axis=axis, keepdims=keepdims),
              cnnl.CNNL_REDUCE_NORM2: lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims))}


def reduce_desc(axes, op, code, indices=cnnl.CNNL_REDUCE_NO_INDICES, indices_type=cnnl.CNNL_32BIT_INDICES):
    desc = cnnl.createReduceDescriptor()
    cnnl.setReduceDescriptor(desc, list(axes), op, code, cnnl.CNNL_NOT_PROPAGATE_NAN, indices, indices_type)
    return desc


def run_reduce(handle, desc, x, out, alpha=None, beta=None, indices=None, index_bytes=0):
    ws = cnnl.getReduceOpWorkspaceSize(handle, x.desc, out.desc, desc)
    workspace = cnrt.malloc(ws) if ws else None
    cnnl.reduce(handle, desc, workspace, ws, alpha, x.desc, x.ptr, index_bytes, indices, beta, out.desc, out.ptr)
    sync(handle)


@st.composite
def reductions(draw):
    ndim = draw(st.integers(1, 4))
    dims = [draw(st.integers(1, 5)) for _ in range(ndim)]
    axes = sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=1)))
    return (dims, axes, draw(st.sampled_from(sorted(REFERENCES))), draw(st.sampled_from(FLOATS)),
            draw(st.sampled_from(["dense", "padded", "transposed"])), draw(st.integers(0, 10000)))


@settings(max_examples=40, deadline=None)
@given(reductions())
def test_reduce_any_axes(problem):
    dims, axes, op, code, layout, seed = problem
    handle = cnnl.create()
    rng = np.random.default_rng(seed)
    values = random_values(rng, dims, code, low=0.5, high=1.5)
    x = tensor(values, code, strided_layouts(dims, rng)[layout])
    keep = [1 if d in axes else n for d, n in enumerate(dims)]
    out = empty(keep, code)
    run_reduce(handle, reduce_desc(axes, op, code), x, out)
    want = REFERENCES[op](as_float64(values), axis=tuple(axes), keepdims=True)
    count = int(np.prod([dims[a] for a in axes]))
    assert_close(out.read(), want, NUMPY[code], ulps=4 * count, what=f"reduce {op}")


@pytest.mark.parametrize("code", INTS)
@pytest.mark.parametrize("op", [cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_REDUCE_MAX, cnnl.CNNL_REDUCE_MIN,
                                cnnl.CNNL_REDUCE_MUL])
def test_reduce_integers_with_a_squeezed_output(handle, code, op):
    values = random_values(np.random.default_rng(op), (3, 4, 2), code)
    if op == cnnl.CNNL_REDUCE_MUL:
        values = np.clip(values, -3, 3).astype(NUMPY[code])
    x, out = tensor(values, code), empty([3, 2], code)
    run_reduce(handle, reduce_desc([1], op, code), x, out)
    want = REFERENCES[op](values.astype(np.int64), axis=1, keepdims=False).astype(NUMPY[code])
    np.testing.assert_array_equal(out.read(), want)


@pytest.mark.parametrize("op,reference", [(cnnl.CNNL_REDUCE_MAX, np.argmax), (cnnl.CNNL_REDUCE_MIN, np.argmin)])
@pytest.mark.parametrize("indices_type", [cnnl.CNNL_32BIT_INDICES, cnnl.CNNL_16BIT_INDICES])
def test_reduce_with_indices(handle, op, reference, indices_type):
    values = np.round(random_values(np.random.default_rng(5), (4, 6, 3), cnnl.CNNL_DTYPE_FLOAT)).astype(np.float32)
    x, out = tensor(values), empty([4, 1, 3])
    index_type = np.uint32 if indices_type == cnnl.CNNL_32BIT_INDICES else np.uint16
    indices = empty([12], cnnl.CNNL_DTYPE_INT32 if index_type == np.uint32 else cnnl.CNNL_DTYPE_INT16)
    desc = reduce_desc([1], op, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_REDUCE_FLATTENED_INDICES, indices_type)
    run_reduce(handle, desc, x, out, indices=indices.ptr, index_bytes=12 * np.dtype(index_type).itemsize)
    np.testing.assert_array_equal(out.read(), REFERENCES[op](values, axis=1, keepdims=True))
    got = indices.read().view(index_type).reshape(4, 3)
    np.testing.assert_array_equal(got, reference(values, axis=1))


@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_BOOL])
def test_argmax_argmin_over_several_axes(handle, code):
    values = random_values(np.random.default_rng(6), (3, 4, 5), code)
    x, out = tensor(values, code), empty([3, 1, 1], code)
    for op, reference in ((cnnl.CNNL_REDUCE_MAX, np.argmax), (cnnl.CNNL_REDUCE_MIN, np.argmin)):
        indices = empty([3], cnnl.CNNL_DTYPE_INT32)
        desc = reduce_desc([1, 2], op, code, cnnl.CNNL_REDUCE_ONLY_INDICES)
        run_reduce(handle, desc, x, out, indices=indices.ptr, index_bytes=12)
        np.testing.assert_array_equal(indices.read(), reference(values.reshape(3, 20), axis=1))


def test_reduce_alpha_beta(handle):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    x, out = tensor(values), tensor(np.full((2, 1), 10.0, np.float32))
    run_reduce(handle, reduce_desc([1], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT), x, out, alpha=2.0, beta=0.5)
    np.testing.assert_array_equal(out.read(), [[2 * 3 + 5], [2 * 12 + 5]])


def test_half_reduce_needs_a_workspace(handle):
    x, out = empty([4, 8], cnnl.CNNL_DTYPE_HALF), empty([4, 1], cnnl.CNNL_DTYPE_HALF)
    desc = reduce_desc([1], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT)
    assert cnnl.getReduceOpWorkspaceSize(handle, x.desc, out.desc, desc) == 16
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.reduce(handle, desc, None, 0, None, x.desc, x.ptr, 0, None, None, out.desc, out.ptr)


def test_reduce_bad_arguments(handle):
    x, out = empty([4, 8]), empty([4, 1])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="reduce_op"):
        reduce_desc([1], 99, cnnl.CNNL_DTYPE_FLOAT)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="reduce_indices"):
        reduce_desc([1], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_REDUCE_FLATTENED_INDICES)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="reduce_desc"):
        run_reduce(handle, reduce_desc([1], cnnl.CNNL_REDUCE_SUMSQ, cnnl.CNNL_DTYPE_FLOAT), x, out)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        run_reduce(handle, reduce_desc([0], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT), x, out)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="reduce_desc"):
        run_reduce(handle, reduce_desc([2], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT), x, out)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices_size_inbytes"):
        desc = reduce_desc([1], cnnl.CNNL_REDUCE_MAX, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_REDUCE_ONLY_INDICES)
        cnnl.reduce(handle, desc, None, 0, None, x.desc, x.ptr, 15, empty([4]).ptr, None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices"):
        cnnl.reduce(handle, desc, None, 0, None, x.desc, x.ptr, 16, None, None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
        flags = empty([4, 8], cnnl.CNNL_DTYPE_BOOL)
        run_reduce(handle, reduce_desc([1], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_BOOL), flags,
                   empty([4, 1], cnnl.CNNL_DTYPE_BOOL))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("code", NUMERIC)
def test_cumsum(handle, exclusive, reverse, code):
    values = random_values(np.random.default_rng(7), (3, 5, 2), code)
    x = tensor(values, code, strides=[1, 6, 3])
    y = empty([3, 5, 2], code)
    assert cnnl.getCumsumWorkspaceSize(handle, x.desc, 1) == 0
    cnnl.cumsum(handle, x.desc, x.ptr, 1, exclusive, reverse, cnnl.CNNL_PROPAGATE_NAN, y.desc, y.ptr)
    sync(handle)
    data = as_float64(values)
    if reverse:
        data = data[:, ::-1]
    running = np.cumsum(data, axis=1)
    if exclusive:
        running = np.concatenate([np.zeros_like(running[:, :1]), running[:, :-1]], axis=1)
    if reverse:
        running = running[:, ::-1]
    scale = np.cumsum(np.abs(data), axis=1).max()
    assert_close(y.read(), running, NUMPY[code], scale=scale, ulps=8)


def test_cumsum_bad_arguments(handle):
    x = empty([3, 4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="axis"):
        cnnl.cumsum(handle, x.desc, x.ptr, 2, False, False, 0, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.cumsum(handle, x.desc, x.ptr, 1, False, False, 0, empty([4, 3]).desc, x.ptr)


def run_topk(handle, x, k, dim, largest, lower_index_first=True, index_code=cnnl.CNNL_DTYPE_INT32):
    dims = list(x.dims)
    dims[dim] = k
    values, indices = empty(dims, x.code), empty(dims, index_code)
    ws = cnnl.getTopKTensorWorkspaceSize(handle, x.desc, k, dim, largest, values.desc, indices.desc)
    cnnl.topKTensor_v3(handle, x.desc, x.ptr, k, dim, largest, True, lower_index_first, cnrt.malloc(ws), ws,
                       values.desc, values.ptr, indices.desc, indices.ptr)
    sync(handle)
    return values.read(), indices.read()


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("code", ALL)
@pytest.mark.parametrize("index_code", [cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64])
def test_topk(handle, largest, code, index_code):
    values = random_values(np.random.default_rng(8), (4, 9), code)
    x = tensor(values, code)
    got_values, got_indices = run_topk(handle, x, 3, 1, largest, index_code=index_code)
    keys = -as_float64(values) if largest else as_float64(values)
    order = np.argsort(keys, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(got_indices, order)
    np.testing.assert_array_equal(got_values, np.take_along_axis(values, order, axis=1))


def test_topk_tie_order(handle):
    x = tensor(np.array([[1.0, 3.0, 3.0, 2.0, 3.0]], np.float32))
    assert run_topk(handle, x, 3, 1, True, lower_index_first=True)[1].tolist() == [[1, 2, 4]]
    assert run_topk(handle, x, 3, 1, True, lower_index_first=False)[1].tolist() == [[4, 2, 1]]


def test_topk_bad_arguments(handle):
    x = empty([2, 5])
    values, indices = empty([2, 3]), empty([2, 3], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="k"):
        cnnl.getTopKTensorWorkspaceSize(handle, x.desc, 6, 1, True, values.desc, indices.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="values_desc"):
        cnnl.getTopKTensorWorkspaceSize(handle, x.desc, 2, 1, True, values.desc, indices.desc)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="indices_desc"):
        cnnl.getTopKTensorWorkspaceSize(handle, x.desc, 3, 1, True, values.desc, values.desc)
    ws = cnnl.getTopKTensorWorkspaceSize(handle, x.desc, 3, 1, True, values.desc, indices.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.topKTensor_v3(handle, x.desc, x.ptr, 3, 1, True, True, True, None, ws - 4, values.desc, values.ptr,
                           indices.desc, indices.ptr)





# ---- rows of specials and extremes against torch CPU (float32 accumulation, as on the device) -------------------

torch = pytest.importorskip("torch")

_TORCH_REDUCE = {
    cnnl.CNNL_REDUCE_ADD: lambda t, dims: t.sum(dims, keepdim=True),
    cnnl.CNNL_REDUCE_AVG: lambda t, dims: t.mean(dims, keepdim=True),
    cnnl.CNNL_REDUCE_MUL: lambda t, dims: t.prod(dims[0], keepdim=True) if len(dims) == 1 else
    t.reshape(-1).prod().reshape([1] * t.dim()),
    cnnl.CNNL_REDUCE_MAX: lambda t, dims: t.amax(dims, keepdim=True),
    cnnl.CNNL_REDUCE_MIN: lambda t, dims: t.amin(dims, keepdim=True),
    cnnl.CNNL_REDUCE_NORM1: lambda t, dims: torch.linalg.vector_norm(t, 1, dims, keepdim=True),
    cnnl.CNNL_REDUCE_NORM2: lambda t, dims: torch.linalg.vector_norm(t, 2, dims, keepdim=True),
}
_HALF_TYPES = [cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16]
#: (largest value, a value whose square overflows float32, a value whose square underflows float32 to 0)
_EXTREMES = {cnnl.CNNL_DTYPE_FLOAT: (3.0e38, 2e19, 1e-23), cnnl.CNNL_DTYPE_BFLOAT16: (3.0e38, 2e19, 1e-23),
             cnnl.CNNL_DTYPE_HALF: (65504.0, 60000.0, 6e-8)}
#: (rows, columns, axes): the paths of cnnl/kernels/reduce.py: short and long rows, columns, the whole tensor,
#: one long row cut into chunks, the leading axis of many rows
_SHAPES = [(3, 7, (1,)), (2, 700, (1,)), (5, 300, (0,)), (4, 260, (0, 1)), (1, 140_000, (1,)), (70_000, 2, (0,))]


@st.composite
def special_rows(draw):
    """(values (float64), op, code, axes): rows of normal values with NaN, +-inf, huge values of one sign (their
    float32 sum overflows however the terms pair), squares that overflow or underflow float32, and -0.0, so that
    every result is the same whatever order the device and torch add in."""
    code = draw(st.sampled_from(_HALF_TYPES))
    op = draw(st.sampled_from(sorted(_TORCH_REDUCE)))
    # a product of many factors drifts far from torch's, whose half and bfloat16 products round at every factor
    rows, cols, axes = draw(st.sampled_from(_SHAPES[:4] if op == cnnl.CNNL_REDUCE_MUL else _SHAPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    largest, square_overflow, square_underflow = _EXTREMES[code]
    if op == cnnl.CNNL_REDUCE_MUL:  # factors near 1: no partial product leaves the range, in any order
        values = rng.uniform(0.97, 1.03, (rows, cols)) * rng.choice([-1, 1], (rows, cols))
    else:
        values = rng.uniform(-4, 4, (rows, cols))
    kind = draw(st.sampled_from(["specials", "huge", "squares overflow", "squares underflow", "zeros"]))
    flat = values.reshape(-1)
    where = rng.choice(flat.size, size=min(flat.size, draw(st.integers(1, 6))), replace=False)
    if kind == "specials":
        flat[where] = rng.choice([np.nan, np.inf, -np.inf], where.size)
    elif kind == "huge" and op != cnnl.CNNL_REDUCE_MUL:
        flat[where] = largest * draw(st.sampled_from([1, -1]))
    elif kind == "squares overflow" and op != cnnl.CNNL_REDUCE_MUL:
        flat[where] = square_overflow * rng.choice([-1, 1], where.size)
    elif kind == "squares underflow":
        values = rng.choice([-1, 1], values.shape) * square_underflow * rng.uniform(0.5, 1, values.shape)
    elif kind == "zeros":
        values = np.where(rng.random(values.shape) < 0.5, 0.0, -0.0)
    return values, op, code, axes


@settings(max_examples=80, deadline=None)
@given(special_rows())
def test_rows_of_specials_and_extremes_reduce_as_torch_does(problem):
    """float32, half and bfloat16 accumulate in float32 (as the device and torch's CPU kernels): a sum or mean whose
    accumulation overflows is inf (mean of [3e38, 3e38] too, not the finite float64 value), a norm2 of squares
    that underflow is 0 and of squares that overflow inf, NaN and inf propagate as in torch."""
    values, op, code, axes = problem
    handle = cnnl.create()
    stored = values.astype(NUMPY[code])
    x = tensor(stored, code)
    out = empty([1 if d in axes else n for d, n in enumerate(stored.shape)], code)
    run_reduce(handle, reduce_desc(axes, op, code), x, out)
    source = torch.from_numpy(as_float64(stored)).to({cnnl.CNNL_DTYPE_FLOAT: torch.float32,
                                                      cnnl.CNNL_DTYPE_HALF: torch.float16,
                                                      cnnl.CNNL_DTYPE_BFLOAT16: torch.bfloat16}[code])
    if op in (cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_REDUCE_AVG) and code != cnnl.CNNL_DTYPE_FLOAT:
        # the rule is a float32 accumulation rounded once; torch's CPU sum of a long half row keeps some partial
        # sums in half (+-6e4 values then give inf - inf = NaN), so its float32 sum, rounded, is the reference
        want = _TORCH_REDUCE[op](source.float(), list(axes)).to(source.dtype).double().numpy()
    else:
        want = _TORCH_REDUCE[op](source, list(axes)).double().numpy()
    got = as_float64(out.read())
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    infinite = np.isinf(want)
    assert (got[infinite] == want[infinite]).all(), (got, want)
    assert not np.isinf(got[~infinite]).any(), (got, want)
    fine = np.isfinite(want)
    magnitude = REFERENCES[cnnl.CNNL_REDUCE_NORM1](np.nan_to_num(as_float64(stored)), tuple(axes), True)
    count = int(np.prod([stored.shape[a] for a in axes]))
    scale = {cnnl.CNNL_REDUCE_AVG: magnitude / count, cnnl.CNNL_REDUCE_MUL: np.abs(want) + 1e-30,
             cnnl.CNNL_REDUCE_MAX: np.abs(want), cnnl.CNNL_REDUCE_MIN: np.abs(want),
             cnnl.CNNL_REDUCE_NORM2: np.abs(want)}.get(op, magnitude)
    # torch's result is rounded into the output format as ours is: two roundings apart; its prod of half and
    # bfloat16 rounds every partial product into that format (the device and mlusim multiply in float32)
    dtype = NUMPY[code]
    roundings = 2 + (count if op == cnnl.CNNL_REDUCE_MUL and code != cnnl.CNNL_DTYPE_FLOAT else 0)
    bound = (roundings * STORE_UNIT[dtype] * np.abs(want) + COMPUTE_UNIT[dtype] * 4 * count
             * np.broadcast_to(scale, want.shape) + TINY[dtype])
    assert (np.abs(got - want)[fine] <= bound[fine]).all(), (op, got[fine], want[fine])
