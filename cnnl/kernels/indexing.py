"""Indexing: index select, gather, scatter (with add), embedding forward/backward, masked fill and select, index
put, nonzero (`cnnlIndexSelect`, `cnnlGather`, `cnnlScatter`, `cnnlEmbedding*`, `cnnlMasked_v3`, `cnnlIndexPut`,
`cnnlNumTrue_v2`, `cnnlWhere_v2`).

Indices are checked when the op runs (as on a device, where they live in device memory): an index out of range
raises IndexError, which fails the queued op. Accumulating ops (scatter add, index put with accumulate, embedding
backward) add in the compute dtype (float32 for half/bfloat16) and round once; duplicate indices all add. Plain
scatter and index put with duplicate indices keep one of the values (unspecified which, as in CNNL).
"""
import math

import numpy as np

from .dtypes import compute_dtype, is_float
from .parallel import INLINE_DIRECT_ELEMENTS, even_ranges, map_parallel, same_view, thread_count
from .staging import load, store


def _checked(index, extent, what="index"):
    values = np.asarray(index, np.int64)
    if values.size and (values.min() < 0 or values.max() >= extent):
        bad = values[(values < 0) | (values >= extent)][0]
        raise IndexError(f"{what} {int(bad)} is out of range for an axis of {extent}")
    return values


def _working_copy(x):
    """x in its compute dtype as a new array that accumulating ops may modify."""
    dtype = compute_dtype(x.dtype) if is_float(x.dtype) else x.dtype
    return np.array(load(x, dtype), dtype, copy=True)


def _take(x, dim, positions, out):
    """out = x taken at `positions` (checked: in range) along `dim`. np.take runs in 'clip' mode, a no-op on checked
    positions, because numpy buffers the out= of mode 'raise' (4x slower); it lets go of the GIL, so a large take
    whose leading axes are 1 is cut into runs of positions over the host threads, each written in place."""
    if out.dtype != x.dtype or not out.flags.c_contiguous or np.may_share_memory(out, x):
        np.copyto(out, np.take(x, positions, axis=dim, mode="clip"))
        return
    if out.size <= INLINE_DIRECT_ELEMENTS or math.prod(out.shape[:dim]) != 1:
        np.take(x, positions, axis=dim, out=out, mode="clip")
        return
    lead = (0,) * dim
    source, flat = x[lead], positions.reshape(-1)
    target = out.reshape((flat.size,) + x.shape[dim + 1:])
    map_parallel(lambda run: np.take(source, flat[run[0]:run[1]], axis=0, out=target[run[0]:run[1]], mode="clip"),
                 even_ranges(flat.size, thread_count()))


def index_select(x, dim, index, out):
    """out = x taken at `index` (1-D) along `dim`."""
    _take(x, dim, _checked(index, x.shape[dim]), out)


def gather(x, dim, index, out):
    """out[..., i, ...] = x[..., index[..., i, ...], ...] along `dim`; index (and out) may be smaller than x on
    the other axes."""
    window = tuple(slice(None) if axis == dim else slice(0, n) for axis, n in enumerate(index.shape))
    np.copyto(out, np.take_along_axis(x[window], _checked(index, x.shape[dim]), axis=dim))


def _full_index(index, dim):
    key = list(np.indices(index.shape, sparse=True))
    key[dim] = index
    return tuple(key)


def scatter(x, dim, index, src, out, add):
    """out = x with src written (add: added) at `index` along `dim`; src may be larger than index on any axis."""
    positions = _checked(index, x.shape[dim])
    values = src[tuple(slice(0, n) for n in index.shape)]
    result = _working_copy(x)
    if add:
        np.add.at(result, _full_index(positions, dim), load(values, result.dtype))
    else:
        result[_full_index(positions, dim)] = load(values, result.dtype)
    store(result, out)


def embedding_forward(weight, indices, out):
    """out[..., :] = weight[indices[...], :]."""
    _take(weight, 0, _checked(indices, weight.shape[0]), out)


def embedding_backward(indices, grad, padding_idx, scale_by_frequency, out):
    """out[row] = sum of the gradient rows whose index is `row`, in index order (rows equal to padding_idx get
    none); with scale_by_frequency each gradient row is divided by how often its index occurs. One compiled pass
    per range of table rows, the ranges over the host threads; into `out` itself when it is dense in its compute
    dtype."""
    from .row_accumulate import accumulate_rows  # numba's import waits for the first embedding backward

    rows = np.ascontiguousarray(_checked(indices, out.shape[0]).reshape(-1))
    dtype = compute_dtype(grad.dtype)
    width = math.prod(out.shape[1:])
    grads = np.ascontiguousarray(load(grad, dtype).reshape(rows.size, width))
    counts = np.bincount(rows, minlength=out.shape[0]).astype(dtype) if scale_by_frequency else np.empty(0, dtype)
    direct = out.dtype == dtype and out.flags.c_contiguous and not np.may_share_memory(out, grad)
    result = out.reshape(out.shape[0], width) if direct else np.empty((out.shape[0], width), dtype)
    pieces = 1 if result.size + grads.size <= INLINE_DIRECT_ELEMENTS else thread_count()
    map_parallel(lambda span: accumulate_rows(rows, grads, padding_idx, counts, scale_by_frequency, result, *span),
                 even_ranges(result.shape[0], pieces))
    if not direct:
        store(result.reshape(out.shape), out)


def masked_fill(x, mask, value, out):
    """out = value where mask (broadcast to x) is nonzero, else x."""
    np.copyto(out, np.where(np.broadcast_to(mask, x.shape) != 0, np.asarray(value).reshape(()), x))


def masked_select(x, mask, out, count):
    """The elements of x where mask is nonzero, in row-major order, into the start of out; their number into
    count."""
    chosen = x[np.broadcast_to(mask, x.shape) != 0]
    out.reshape(-1)[:chosen.size] = chosen
    count[...] = chosen.size


def index_put(x, indices, values, accumulate, out):
    """out = x with values written (accumulate: added) at x[indices]; an entry of None takes a whole axis, integer
    indices broadcast together, a bool index selects where it is nonzero (numpy advanced indexing)."""
    key = []
    for axis, index in enumerate(indices):
        if index is None:
            key.append(slice(None))
        elif index.dtype == np.bool_:
            key.append(index)
        else:
            key.append(_checked(index, x.shape[axis]))
    key = tuple(key)
    if not accumulate and values.dtype == out.dtype:  # a copy and a scatter in the storage dtype
        data = values.copy() if np.may_share_memory(values, out) else values
        if not same_view(x, out):
            np.copyto(out, x.copy() if np.may_share_memory(x, out) else x)
        out[key] = data
        return
    result = _working_copy(x)
    data = load(values, result.dtype)
    if accumulate:
        np.add.at(result, key, np.broadcast_to(data, result[key].shape))
    else:
        result[key] = data
    store(result, out)


def num_true(x, out):
    """out (one element) = the number of nonzero elements of x."""
    out[...] = np.count_nonzero(x)


def nonzero(x, count, out, as_tuple):
    """The coordinates of x's nonzero elements, row-major: out is (count, ndim), or (ndim, count) as_tuple;
    `count` (from num_true) must equal the number found."""
    coordinates = np.argwhere(x)
    expected = int(np.asarray(count).reshape(-1)[0])
    if coordinates.shape[0] != expected:
        raise ValueError(f"num_true says {expected} nonzero elements, the input has {coordinates.shape[0]}")
    if (coordinates.T.shape if as_tuple else coordinates.shape) != out.shape:
        raise ValueError(f"the output {out.shape} does not hold {coordinates.shape[0]} coordinates")
    np.copyto(out, coordinates.T if as_tuple else coordinates, casting="unsafe")
