"""Reductions over any set of axes (`cnnlReduce`) and argmax/argmin.

The output keeps the reduced axes with extent 1 (keepdims). Accumulation: float16/bfloat16/float32 in float32,
as the device and torch's CPU kernels do, float64 in float64, integers in int64 and wrapped into the output type (so
integer sums and products wrap, as in the tensor's own type). float32 sums over contiguous rows (the last axis, or
all axes around one middle axis) add 256 terms at a time in float32 and those partial sums in float64: faster and
more accurate than one float32 running sum, with float32's range: a partial sum that overflows is inf (NaN when
partial sums overflow both ways), a total beyond float32's range is inf before a mean divides it or a norm takes
its root, and norm2 squares in float32 (squares of |x| < 2^-75 are 0, of |x| > 2^64 inf), as torch gives. Integer mean is the int64 sum (wrapped, which only
int64 inputs can reach) divided by the count, truncated toward zero. max/min propagate NaN; their optional int32
indices give the first occurrence (the first NaN when there is one), counted in C order over the reduced axes.
bool tensors support max and min only.

Large reductions split over threads by output rows; when there are fewer outputs than threads (typically a full
reduction) the reduced extent is cut into chunks whose partial results are combined.
"""
import functools
import math

import numpy as np
from numba import njit

from .dtypes import (ALL_DTYPES, BOOL, FLOAT32, FLOAT64, FLOAT_DTYPES, INT32, NUMERIC_DTYPES, check_dtype,
                     compute_dtype, is_int)
from .parallel import (INLINE_DIRECT_ELEMENTS, STAGED_BLOCK, detach_inputs, even_ranges, map_parallel, run_blocked,
                       thread_count)
from .staging import load, store

REDUCE_OPS = ("sum", "mean", "max", "min", "prod", "norm1", "norm2")
_INDEXED = ("max", "min")
_ALLOWED = {op: NUMERIC_DTYPES for op in REDUCE_OPS}
_ALLOWED.update(max=ALL_DTYPES, min=ALL_DTYPES, norm2=FLOAT_DTYPES)


def reduced_shape(shape, axes):
    """The keepdims output shape of reducing `shape` over `axes`."""
    axes = normalize_axes(axes, len(shape))
    return tuple(1 if d in axes else n for d, n in enumerate(shape))


def normalize_axes(axes, ndim):
    """Sorted, non-negative, unique axes; raises ValueError on an axis out of range."""
    axes = (axes,) if np.isscalar(axes) else tuple(axes)
    result = set()
    for axis in axes:
        if not -ndim <= axis < ndim:
            raise ValueError(f"axis {axis} out of range for {ndim} axes")
        result.add(axis % ndim)
    return tuple(sorted(result))


#: elements summed in the input's own type before the partial sum joins the float64 total: a float32 sum vectorises
#: twice as wide as a float64 one, and the error of a 256-term sum stays far below torch's float32 cascade over the
#: whole extent (figures: docs/cnnl_reduce.md)
PARTIAL_TERMS = 256


@njit(nogil=True, cache=True, fastmath={"reassoc", "nsz", "contract"})
def _float64_sum(values, zero):
    """Sum of a contiguous float32/float64 vector: partial sums of PARTIAL_TERMS in the input's type (`zero` is
    its 0), added in float64 (vectorised: reassociation is allowed, NaN and inf propagate; a partial sum that
    overflows is inf, as the input type's running sum is). Faster than numpy's pairwise float32 sum and more
    accurate."""
    n = values.size
    total = 0.0
    for start in range(0, n - n % PARTIAL_TERMS, PARTIAL_TERMS):  # a whole vector multiple: no scalar remainder
        partial = zero
        for i in range(start, start + PARTIAL_TERMS):
            partial += values[i]
        total += np.float64(partial)
    partial = zero
    for i in range(n - n % PARTIAL_TERMS, n):
        partial += values[i]
    return total + np.float64(partial)


@njit(nogil=True, cache=True, fastmath={"reassoc", "nsz", "contract"})
def _float64_sum_of_squares(values, zero):
    """Sum of squares of a contiguous float32/float64 vector, as _float64_sum: each square and the partial sums in
    the input's type (a square below its range is 0, above it inf), no squared temporary."""
    n = values.size
    total = 0.0
    for start in range(0, n - n % PARTIAL_TERMS, PARTIAL_TERMS):
        partial = zero
        for i in range(start, start + PARTIAL_TERMS):
            partial += values[i] * values[i]
        total += np.float64(partial)
    partial = zero
    for i in range(n - n % PARTIAL_TERMS, n):
        partial += values[i] * values[i]
    return total + np.float64(partial)


@njit(nogil=True, cache=True, fastmath={"reassoc", "nsz", "contract"})
def _float64_row_sums(rows, squares, out):
    """out[r] = the float64 sum (of squares when `squares`) of row r of the 2-D float32/float64 `rows` (rows
    contiguous; as _float64_sum and _float64_sum_of_squares, one call for all rows)."""
    zero = np.zeros(1, rows.dtype)[0]
    for r in range(rows.shape[0]):
        out[r] = _float64_sum_of_squares(rows[r], zero) if squares else _float64_sum(rows[r], zero)


def _row_sums(op, axes, values):
    """float64 sums (sum, mean) or sums of squares (norm2) over the last axis of `values` when that is the one
    reduced axis and the layout fits (float32/float64, rows contiguous), keepdims-shaped; else None. One compiled
    pass, as fast as memory and more accurate than numpy's pairwise float32 sum."""
    if (op not in ("sum", "mean", "norm2") or axes != (values.ndim - 1,) or values.dtype not in (FLOAT32, FLOAT64)
            or not values.flags.c_contiguous):
        return None
    rows = values.reshape(-1, values.shape[-1]).view()
    rows.flags.writeable = False  # one numba specialisation per dtype
    sums = np.empty(rows.shape[0], FLOAT64)
    _float64_row_sums(rows, op == "norm2", sums)
    return sums.reshape(values.shape[:-1] + (1,))


def _long_sums(values, squares=False):
    """float64 sums (of squares when `squares`) along the last axis of `values` (float32/float64, last axis
    contiguous), one kernel per row; None when the layout does not fit."""
    if values.dtype not in (FLOAT32, FLOAT64) or values.ndim > 2 or values.strides[-1] != values.itemsize:
        return None
    kernel = _float64_sum_of_squares if squares else _float64_sum
    rows = values.reshape(-1, values.shape[-1])
    result = np.empty(rows.shape[0], FLOAT64)
    for r in range(rows.shape[0]):
        row = rows[r].view()
        row.flags.writeable = False  # one numba specialisation per dtype
        result[r] = kernel(row, row.dtype.type(0))
    return result.reshape(values.shape[:-1])


def _accumulator(dtype):
    return np.dtype(np.int64) if is_int(dtype) else compute_dtype(dtype)


def _partial(op, values, accumulator, want_indices):
    """Reduce the last axis of `values`: (partial result, first-occurrence indices or None)."""
    if op in _INDEXED:
        if want_indices:
            index = (np.argmax if op == "max" else np.argmin)(values, axis=-1)
            return np.take_along_axis(values, index[..., None], axis=-1)[..., 0], index
        return (np.max if op == "max" else np.min)(values, axis=-1), None
    if op == "prod":
        return np.prod(values, axis=-1, dtype=accumulator), None
    if op == "norm1":
        magnitudes = np.abs(values.astype(accumulator, copy=False))
        return np.sum(magnitudes, axis=-1, dtype=accumulator), None
    if op == "norm2":
        return np.sum(np.square(values), axis=-1, dtype=accumulator), None
    return np.sum(values, axis=-1, dtype=accumulator), None  # sum, mean


def _combine(op, partials, indices):
    """Reduce partial results along their last axis (one entry per chunk)."""
    if op in _INDEXED:
        chunk = (np.argmax if op == "max" else np.argmin)(partials, axis=-1)[..., None]
        chosen = None if indices is None else np.take_along_axis(indices, chunk, axis=-1)[..., 0]
        return np.take_along_axis(partials, chunk, axis=-1)[..., 0], chosen
    if op == "prod":
        return np.prod(partials, axis=-1), None
    return np.sum(partials, axis=-1), None


def _finish(op, result, count, dtype):
    """The op's result from its accumulated `result` over `count` elements of `dtype`: a float64 total of a
    float32-accumulated dtype takes float32's range first (inf beyond it), as a float32 accumulator holds it."""
    if op in ("norm2", "mean") and result.dtype == FLOAT64 and compute_dtype(dtype) == FLOAT32:
        with np.errstate(over="ignore"):
            result = np.asarray(result).astype(FLOAT32)
    if op == "norm2":
        return np.sqrt(result)
    if op == "mean":
        if is_int(result.dtype):
            return np.sign(result) * (np.abs(result) // count)
        return result / result.dtype.type(count)
    return result


def _store_result(result, out_block):
    if is_int(out_block.dtype):
        np.copyto(out_block, result.reshape(out_block.shape), casting="unsafe")  # integers wrap
    else:
        store(np.asarray(result).reshape(out_block.shape), out_block)


def _trailing(values, axes):
    """View (or copy) `values` with the reduced axes moved last and merged into one."""
    kept = [d for d in range(values.ndim) if d not in axes]
    moved = np.transpose(values, kept + list(axes))
    return moved.reshape(moved.shape[:len(kept)] + (-1,))


def _reduce_axes(op, values, accumulator, axes):
    """Reduce `values` over `axes` (keepdims) in place of `_partial` when no indices are wanted: numpy then
    chooses the loop order itself (no moved or merged axes, no copy of a transposed block)."""
    if op in _INDEXED:
        return (np.max if op == "max" else np.min)(values, axis=axes, keepdims=True)
    if op == "prod":
        return np.prod(values, axis=axes, dtype=accumulator, keepdims=True)
    if op == "norm1":
        values = np.abs(values.astype(accumulator, copy=False))
    elif op == "norm2":
        values = np.square(values)
    return np.sum(values, axis=axes, dtype=accumulator, keepdims=True)


def _reduce_rows_block(op, axes, count, out, indices, x):
    if indices is None:
        values = load(x)
        sums = _row_sums(op, axes, values)
        if sums is None:
            sums = _reduce_axes(op, values, _accumulator(x.dtype), axes)
        _store_result(_finish(op, sums, count, x.dtype), out)
        return
    values = _trailing(load(x), axes)
    result, index = _partial(op, values, _accumulator(x.dtype), indices is not None)
    if out is not None:
        _store_result(_finish(op, result, count, x.dtype), out)
    if indices is not None:
        np.copyto(indices, index.reshape(indices.shape), casting="unsafe")


def _reduce_chunked(op, axes, out, indices, x, staged):
    """Few outputs: cut the reduced extent into chunks, reduce them in parallel, combine the partials."""
    rows = _trailing(x, axes)  # (outputs, count), stored dtype
    count = rows.shape[-1]
    chunk = STAGED_BLOCK * 4 if staged else max(STAGED_BLOCK, -(-count // (4 * thread_count())))
    starts = range(0, count, chunk)
    accumulator = _accumulator(x.dtype)

    def reduce_chunk(start):
        values = load(rows[..., start:start + chunk])
        if op in ("sum", "mean", "norm2"):
            sums = _long_sums(values, squares=op == "norm2")
            if sums is not None:
                return sums, None
        result, index = _partial(op, values, accumulator, indices is not None)
        return result, None if index is None else index + start

    parts = map_parallel(reduce_chunk, starts)
    partials = np.stack([p[0] for p in parts], axis=-1)
    chunk_indices = None if indices is None else np.stack([p[1] for p in parts], axis=-1)
    result, index = _combine(op, partials, chunk_indices)
    if out is not None:
        _store_result(_finish(op, result, count, x.dtype), out)
    if indices is not None:
        np.copyto(indices, index.reshape(indices.shape), casting="unsafe")


_LEADING_OPS = {"sum": np.sum, "mean": np.sum, "max": np.max, "min": np.min}


def _leading_rows(x, axes):
    """x as a 2-D (reduced, kept) view when the reduced axes are its leading axes and it is C-contiguous, else None.
    (Cutting such an x into column blocks, as the generic path does, makes every block a strided matrix that numpy
    reduces ~3x slower than whole rows.)"""
    k = len(axes)
    if axes != tuple(range(k)) or k == x.ndim or not x.flags.c_contiguous:
        return None
    return x.reshape(math.prod(x.shape[:k]), -1)


def _reduce_leading(op, rows, out, count):
    """out = op over the rows of `rows` (reduced, kept): ranges of whole rows reduced in parallel (numpy's row-wise
    accumulation, contiguous), then the partial results combined."""
    function, accumulator = _LEADING_OPS[op], _accumulator(rows.dtype)
    kwargs = {"dtype": accumulator} if function is np.sum else {}
    partials = map_parallel(lambda bounds: function(rows[bounds[0]:bounds[1]], axis=0, **kwargs),
                            even_ranges(rows.shape[0], 4 * thread_count()))
    result = function(np.stack(partials), axis=0, **kwargs)
    _store_result(_finish(op, result, count, rows.dtype), out)


def _kept_run(x, axes):
    """x as a 3-D (outer, kept, inner) view when the kept axes are one run of consecutive axes with at least one
    reduced axis after it (the last axis of rows, the bias gradient and the batch statistics of an NCHW tensor)
    and x is C-contiguous, else None."""
    kept = [d for d in range(x.ndim) if d not in axes]
    if (x.size == 0 or not kept or kept[-1] == x.ndim - 1 or kept != list(range(kept[0], kept[-1] + 1))
            or not x.flags.c_contiguous):
        return None
    first, stop = kept[0], kept[-1] + 1
    return x.reshape(math.prod(x.shape[:first]), math.prod(x.shape[first:stop]), -1)


def _kept_run_fits(op, x, planes):
    """True when `_reduce_kept_run` computes op over x's planes: float sums, or the maxima / minima of rows."""
    if op in ("sum", "mean", "norm2"):
        return x.dtype in (FLOAT32, FLOAT64)
    return op in _INDEXED and planes.shape[0] == 1


def _reduce_kept_run(op, planes, out, count):
    """op over the outer and inner axes of (outer, kept, inner) planes: ranges of contiguous inner rows reduced in
    parallel, one call per range, so that a large reduction costs a few calls rather than a few per block.

    sum / mean / norm2 of float32/float64: the float64 sum (of squares) of each row in one compiled pass, then of
    the outer partial sums per kept index; rounded once into out. Cut into blocks, as the generic path does, a
    kept middle axis gives numpy strided float32 sums three times slower, and the last axis per-block calls that
    cost more than the sums. max / min of rows (no outer axis): numpy's row maxima per range (NaN propagates)."""
    rows = planes.reshape(-1, planes.shape[-1]).view()
    rows.flags.writeable = False  # one numba specialisation per dtype
    ranges = even_ranges(rows.shape[0], 4 * thread_count() if planes.size > INLINE_DIRECT_ELEMENTS else 1)
    if op in _INDEXED:
        extremes = np.empty(rows.shape[0], rows.dtype)
        function = np.max if op == "max" else np.min
        map_parallel(lambda bounds: function(rows[bounds[0]:bounds[1]], axis=1, out=extremes[bounds[0]:bounds[1]]),
                     ranges)
        _store_result(extremes, out)
        return
    sums = np.empty(rows.shape[0], FLOAT64)
    squares = op == "norm2"
    map_parallel(lambda bounds: _float64_row_sums(rows[bounds[0]:bounds[1]], squares, sums[bounds[0]:bounds[1]]),
                 ranges)
    _store_result(_finish(op, sums.reshape(planes.shape[:2]).sum(axis=0), count, rows.dtype), out)


def _check_output(name, array, shape, dtype=None):
    if array.shape != shape:
        raise ValueError(f"{name}: shape {array.shape}, expected keepdims shape {shape}")
    if dtype is not None and array.dtype != dtype:
        raise TypeError(f"{name}: dtype {array.dtype}, expected {dtype}")


def reduce(op, x, out, axes, indices=None):
    """out = op over `axes` of x, keepdims-shaped (`cnnlReduce`); op is one of `REDUCE_OPS`.

    `indices` (int32, same shape as out) receives argmax/argmin positions for 'max'/'min'. `out` may be None when
    only indices are wanted.
    """
    if op not in REDUCE_OPS:
        raise ValueError(f"unknown reduce op {op!r} (one of {', '.join(REDUCE_OPS)})")
    check_dtype("x", x, _ALLOWED[op])
    axes = normalize_axes(axes, x.ndim)
    shape = reduced_shape(x.shape, axes)
    if out is None and indices is None:
        raise ValueError("reduce needs out or indices")
    if out is not None:
        _check_output("out", out, shape, x.dtype)
    if indices is not None:
        if op not in _INDEXED:
            raise ValueError(f"indices are only produced by max and min, not {op}")
        _check_output("indices", indices, shape, INT32)
    count = math.prod(x.shape[d] for d in axes)
    if count == 0:
        _reduce_nothing(op, out, indices)
        return
    (x,) = detach_inputs(out if out is not None else indices, x)
    if indices is not None and out is not None:
        (x,) = detach_inputs(indices, x)
    staged = x.dtype != compute_dtype(x.dtype) or x.dtype == BOOL or not x.flags.c_contiguous
    if math.prod(shape) < thread_count() and x.size >= 2 * STAGED_BLOCK:
        _reduce_chunked(op, axes, out, indices, x, staged)
        return
    if indices is None and not staged and op in _LEADING_OPS and x.size >= 2 * STAGED_BLOCK:
        rows = _leading_rows(x, axes)
        if rows is not None:
            _reduce_leading(op, rows, out, count)
            return
    if indices is None and not staged:
        planes = _kept_run(x, axes)
        if planes is not None and _kept_run_fits(op, x, planes):
            _reduce_kept_run(op, planes, out, count)
            return
    operands = [a for a in (out, indices) if a is not None] + [x]
    block = functools.partial(_reduce_rows_block, op, axes, count)

    def block_fn(*blocks):
        blocks = list(blocks)
        out_block = blocks.pop(0) if out is not None else None
        index_block = blocks.pop(0) if indices is not None else None
        block(out_block, index_block, blocks[0])

    run_blocked(block_fn, x.shape, operands, whole_axes=axes, staged=staged)


#: the result of reducing no elements (as torch.sum / prod / mean / linalg.vector_norm of an empty dim)
EMPTY_RESULTS = {"sum": 0, "prod": 1, "mean": np.nan, "norm1": 0, "norm2": 0}


def _reduce_nothing(op, out, indices):
    """A reduction over an axis of extent 0: the identity of the op; max, min and their indices have none."""
    if op not in EMPTY_RESULTS or indices is not None:
        raise ValueError(f"{op} of no elements is undefined (a reduced axis has extent 0)")
    value = EMPTY_RESULTS[op]
    if is_int(out.dtype) and value != value:
        raise ValueError("the mean of no elements is NaN, which an integer output cannot hold")
    if out.size:
        store(np.full(out.shape, value, np.float64 if value != value else np.int64), out)


def argmax(x, axis, out):
    """out (int32, keepdims) = index of the first maximum of x along `axis` (the first NaN if any)."""
    reduce("max", x, None, (axis,), indices=out)


def argmin(x, axis, out):
    """out (int32, keepdims) = index of the first minimum of x along `axis` (the first NaN if any)."""
    reduce("min", x, None, (axis,), indices=out)
