"""Reductions, argmax/argmin, cumsum and topk against float64 / exact references."""
import importlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import argmax, argmin, cumsum, reduce, reduced_shape, topk
from cnnl.kernels.reduce import REDUCE_OPS

from ..references import to_f64, wrap_int
from .strategies import ALL, FLOATS, INTS, NUMERIC, SETTINGS, operands, outputs, shapes
from ..tolerances import COMPUTE_UNIT, assert_close

reduce_module = importlib.import_module("cnnl.kernels.reduce")


@st.composite
def axes_for(draw, ndim):
    return tuple(draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True)))


def float_reference(op, values, axes):
    count = np.prod([values.shape[a] for a in axes])
    total = {"sum": lambda: values.sum(axes, keepdims=True), "mean": lambda: values.sum(axes, keepdims=True) / count,
             "max": lambda: values.max(axes, keepdims=True), "min": lambda: values.min(axes, keepdims=True),
             "prod": lambda: values.prod(axes, keepdims=True),
             "norm1": lambda: np.abs(values).sum(axes, keepdims=True),
             "norm2": lambda: np.sqrt((values ** 2).sum(axes, keepdims=True))}[op]()
    scale = np.abs(values).sum(axes, keepdims=True) if op in ("sum", "mean") else np.abs(total)
    return total, scale * (1 / count if op == "mean" else 1) * max(count, 1)


def exact_int_reference(op, values, axes, dtype):
    objects = values.astype(object)
    count = int(np.prod([values.shape[a] for a in axes]))
    if op == "prod":
        result = np.multiply.reduce(objects, axis=axes, keepdims=True)
    elif op in ("max", "min"):
        result = (np.max if op == "max" else np.min)(objects, axis=axes, keepdims=True)
    else:
        result = np.sum(np.abs(objects) if op == "norm1" else objects, axis=axes, keepdims=True)
        if op == "mean":  # documented: the int64 accumulator wraps before the (truncating) division
            result = wrap_int(result, np.int64).astype(object)
            result = np.frompyfunc(lambda s: abs(s) // count * (1 if s >= 0 else -1), 1, 1)(result)
    return wrap_int(result, dtype)


def first_index_reference(op, values, axes):
    """argmax/argmin over the reduced axes flattened in C order, first occurrence (first NaN if any)."""
    kept = [d for d in range(values.ndim) if d not in axes]
    moved = np.transpose(values, kept + sorted(axes))
    flat = moved.reshape(moved.shape[:len(kept)] + (-1,))
    result = np.empty(flat.shape[:-1], np.int64)
    for index in np.ndindex(*flat.shape[:-1]):
        row = list(flat[index])
        nan = [i for i, v in enumerate(row) if v != v]
        best = (max if op == "max" else min)(row) if not nan else None
        result[index] = nan[0] if nan else row.index(best)
    return result.reshape(reduced_shape(values.shape, axes))


@pytest.mark.parametrize("op", REDUCE_OPS)
@given(dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_reduce(op, dtype, shape, data):
    axes = data.draw(axes_for(len(shape)))
    allowed = {"max": ALL, "min": ALL, "norm2": FLOATS}.get(op, NUMERIC)
    if dtype not in allowed:
        with pytest.raises(TypeError):
            reduce(op, np.zeros(shape, dtype), np.zeros(reduced_shape(shape, axes), dtype), axes)
        return
    low, high = (0.5, 1.5) if op == "prod" else (-10.0, 10.0)
    x = data.draw(operands(shape, dtype, low, high))
    if dtype in FLOATS and data.draw(st.booleans()):  # ties for the indices
        x = np.round(x.astype(np.float32)).astype(dtype)
    out_shape = reduced_shape(shape, axes)
    out = data.draw(outputs(out_shape, dtype))
    indices = data.draw(outputs(out_shape, np.int32)) if op in ("max", "min") and data.draw(st.booleans()) else None
    reduce(op, x, out, axes, indices=indices)
    if dtype in FLOATS:
        expected, scale = float_reference(op, to_f64(x), axes)
        assert_close(out, expected, dtype, scale=scale, what=op)
    else:
        np.testing.assert_array_equal(out.astype(np.int64), exact_int_reference(op, x, axes, dtype))
    if indices is not None:
        np.testing.assert_array_equal(indices, first_index_reference(op, to_f64(x), axes))


@pytest.mark.parametrize("op", ["sum", "max", "norm2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_large_full_reduction_uses_chunks(op, dtype):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(600_001).astype(dtype)
    out = np.empty(1, dtype)
    indices = np.empty(1, np.int32) if op == "max" else None
    reduce(op, x, out, (0,), indices=indices)
    expected, scale = float_reference(op, x.astype(np.float64), (0,))
    assert_close(out, expected, dtype, scale=scale)
    if indices is not None:
        assert indices[0] == int(np.argmax(x.astype(np.float64)))


@pytest.mark.parametrize("op", ["sum", "mean", "norm2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_reductions_of_many_rows_are_float64_accurate(op, dtype):
    """The last axis of a large C-contiguous tensor, one compiled pass (partial sums in the input's type, their
    total in float64): close to the exact result, NaN and inf rows propagate. (A row of opposite huge
    values overflows or not by the order its terms pair in, on the device and in torch alike: tests/cnnl/
    test_reduce.py checks the rows whose result no order changes.)"""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((700, 1500)) * 1e3).astype(dtype)
    x[3, 10] = np.nan
    x[4, 11] = np.inf
    x[5, 12], x[5, 13] = np.inf, -np.inf
    big = np.finfo(dtype).max
    x[6, :4] = [big, big, -big, -big] if op != "norm2" else 0
    out = np.empty((700, 1), dtype)
    reduce(op, x, out, (1,))
    exact = to_f64(x)
    with np.errstate(all="ignore"):
        expected = {"sum": lambda: exact.sum(1, keepdims=True), "mean": lambda: exact.mean(1, keepdims=True),
                    "norm2": lambda: np.sqrt((exact * exact).sum(1, keepdims=True))}[op]()
        if op != "norm2":
            expected[6] = np.nan  # order-dependent: not compared
    assert np.isnan(out[3, 0]) and out[4, 0] == np.inf
    assert out[5, 0] == np.inf if op == "norm2" else np.isnan(out[5, 0])  # inf - inf, or inf^2 + inf^2
    fine = np.isfinite(expected)
    assert_close(out[fine], expected[fine], dtype, scale=np.abs(exact).sum(1, keepdims=True)[fine] / (
        1500 if op == "mean" else 1) if op != "norm2" else None)


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_around_one_kept_middle_axis_are_float64_accurate(op, dtype, threads, monkeypatch):
    """Every axis but one middle axis (the bias gradient of NCHW, axes 0, 2, 3): one compiled pass over the
    contiguous inner rows (their sums in the input's type, totals in float64), on one thread or several; close to
    the exact sum, NaN and inf propagate to their channel only."""
    if threads:
        monkeypatch.setattr(reduce_module, "INLINE_DIRECT_ELEMENTS", 0)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((6, 5, 7, 9)) * 1e3).astype(dtype)
    x[2, 1, 3, 4] = np.nan
    x[0, 3, 0, 0] = np.inf
    out = np.empty((1, 5, 1, 1), dtype)
    reduce(op, x, out, (0, 2, 3))
    exact = to_f64(x).sum((0, 2, 3), keepdims=True) / (6 * 7 * 9 if op == "mean" else 1)
    assert np.isnan(out[0, 1, 0, 0]) and out[0, 3, 0, 0] == np.inf
    fine = np.isfinite(exact)
    assert_close(out[fine], exact[fine], dtype, scale=np.abs(to_f64(x)).sum((0, 2, 3), keepdims=True)[fine] / (
        6 * 7 * 9 if op == "mean" else 1))
    middle = np.empty((1, 7, 1), dtype)
    reduce(op, x[1], middle, (0, 2))  # a 3-D tensor: its axis 1 kept between the two reduced ones
    count = 5 * 9 if op == "mean" else 1
    assert_close(middle, to_f64(x[1]).sum((0, 2), keepdims=True) / count, dtype,
                 scale=np.abs(to_f64(x[1])).sum((0, 2), keepdims=True) / count)


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_row_extremes_take_every_row_and_propagate_nan(op, dtype, threads, monkeypatch):
    """max / min over the last axis of C-contiguous rows (ranges of rows, one numpy call each, on one thread or
    several): every row's extreme, NaN propagating to its own row only; leading kept axes are merged."""
    if threads:
        monkeypatch.setattr(reduce_module, "INLINE_DIRECT_ELEMENTS", 0)
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((3, 37, 50)) * 100).astype(dtype)
    if dtype != np.int32:
        x[1, 5, 7] = np.nan
        x[2, 0, 3] = -np.inf
    out = np.empty((3, 37, 1), dtype)
    reduce(op, x, out, (2,))
    expected = (np.max if op == "max" else np.min)(x, axis=2, keepdims=True)
    np.testing.assert_array_equal(out, expected)
    if dtype != np.int32:
        assert np.isnan(out[1, 5, 0]) and not np.isnan(np.delete(out.ravel(), 37 + 5)).any()


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("op", ["sum", "mean", "norm2"])
def test_float_sums_around_a_run_of_kept_axes(op, threads, monkeypatch):
    """Two consecutive kept axes with reduced axes before and after them, and the last axes of rows: one compiled
    pass per row, close to the exact result."""
    if threads:
        monkeypatch.setattr(reduce_module, "INLINE_DIRECT_ELEMENTS", 0)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 3, 5, 6, 7)).astype(np.float32)
    for axes in ((0, 3, 4), (2, 3, 4)):
        shape = reduced_shape(x.shape, axes)
        out = np.empty(shape, np.float32)
        reduce(op, x, out, axes)
        exact = to_f64(x)
        count = np.prod([x.shape[a] for a in axes])
        expected = {"sum": lambda: exact.sum(axes, keepdims=True),
                    "mean": lambda: exact.sum(axes, keepdims=True) / count,
                    "norm2": lambda: np.sqrt((exact * exact).sum(axes, keepdims=True))}[op]()
        magnitude = np.abs(exact).sum(axes, keepdims=True) / (count if op == "mean" else 1)
        assert_close(out, expected, np.float32, scale=np.abs(expected) + 1 if op == "norm2" else magnitude)


def test_argmax_first_occurrence_and_nan():
    x = np.array([[1, 5, 5, 2], [np.nan, 3, np.nan, 9]], np.float32)
    out = np.empty((2, 1), np.int32)
    argmax(x, 1, out)
    assert out.ravel().tolist() == [1, 0]
    argmin(np.array([[3, 1, 1, 0, 0]], np.int8), 1, out[:1])
    assert out[0, 0] == 3


def test_large_argmax_ties_across_chunks_picks_first():
    x = np.zeros(1 << 20, np.float32)
    x[[700_000, 5, 900_000]] = 7.0
    index = np.empty(1, np.int32)
    reduce("max", x, None, (0,), indices=index)
    assert index[0] == 5


def test_integer_sum_wraps():
    out = np.empty(1, np.int8)
    reduce("sum", np.array([100, 100], np.int8), out, (0,))
    assert out[0] == -56


@given(dtype=st.sampled_from(NUMERIC), shape=shapes(min_dims=1), exclusive=st.booleans(), reverse=st.booleans(),
       data=st.data())
@SETTINGS
def test_cumsum(dtype, shape, exclusive, reverse, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = data.draw(operands(shape, dtype))
    out = data.draw(outputs(shape, dtype))
    cumsum(x, out, axis, exclusive=exclusive, reverse=reverse)
    values = x.astype(object) if dtype in INTS else to_f64(x)
    if reverse:
        values = np.flip(values, axis)
    running = np.cumsum(values, axis=axis)
    if exclusive:
        running = running - values
    if reverse:
        running = np.flip(running, axis)
    if dtype in INTS:
        np.testing.assert_array_equal(out.astype(np.int64), wrap_int(running, dtype))
    else:
        magnitude = np.flip(np.cumsum(np.abs(np.flip(to_f64(x), axis) if reverse else to_f64(x)), axis=axis), axis) \
            if reverse else np.cumsum(np.abs(to_f64(x)), axis=axis)
        assert_close(out, running.astype(np.float64), dtype, scale=magnitude * x.shape[axis])


@given(dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), largest=st.booleans(), data=st.data())
@SETTINGS
def test_topk(dtype, shape, largest, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    k = data.draw(st.integers(1, shape[axis]))
    x = data.draw(operands(shape, dtype, -3.0, 3.0))
    if dtype in FLOATS:
        x = np.round(x.astype(np.float32)).astype(dtype)  # many ties
    out_shape = shape[:axis] + (k,) + shape[axis + 1:]
    values, indices = data.draw(outputs(out_shape, dtype)), data.draw(outputs(out_shape, np.int32))
    topk(x, k, axis, values, indices, largest=largest)
    keyed = np.moveaxis(to_f64(x), axis, -1)
    expected_idx = np.empty(keyed.shape[:-1] + (k,), np.int64)
    for index in np.ndindex(*keyed.shape[:-1]):
        row = keyed[index]
        order = sorted(range(len(row)), key=lambda i: ((-row[i] if largest else row[i]), i))
        expected_idx[index] = order[:k]
    expected_idx = np.moveaxis(expected_idx, -1, axis)
    np.testing.assert_array_equal(indices, expected_idx)
    np.testing.assert_array_equal(to_f64(values), np.take_along_axis(to_f64(x), expected_idx, axis))


def test_topk_orders_and_breaks_ties_by_index():
    x = np.array([1, 3, 3, 2, 3, 0], np.float32)
    values, indices = np.empty(4, np.float32), np.empty(4, np.int32)
    topk(x, 4, 0, values, indices)
    assert values.tolist() == [3, 3, 3, 2] and indices.tolist() == [1, 2, 4, 3]
    topk(x, 2, 0, values[:2], indices[:2], largest=False)
    assert values[:2].tolist() == [0, 1] and indices[:2].tolist() == [5, 0]


def test_reduce_tolerance_model_is_not_trivial():
    assert COMPUTE_UNIT[np.dtype(np.float32)] < 1e-6
