"""Top-k along one axis (`cnnlTopKTensor`): the k largest (or smallest) values with their int32 indices.

Results are always sorted (largest first, or smallest first); equal values keep ascending index order, so the
first occurrence wins. NaN counts as larger than every number (it comes first for largest, last for smallest).

A small k (at most `SELECT_K`) is selected in one pass per row by a nogil numba kernel that keeps the best k so far
in a sorted buffer (most elements fail the single comparison with the current k-th and cost nothing more); rows are
spread over the host threads in blocks. A larger k sorts each row stably (numpy).
"""
import functools

import numpy as np
from numba import njit

from .dtypes import ALL_DTYPES, FLOAT32, FLOAT64, INT32, check_dtype, check_same_dtype, is_half
from .parallel import detach_inputs, run_blocked
from .staging import load

#: the largest k the one-pass selection kernel handles (it inserts into a sorted buffer of k)
SELECT_K = 64
_INT64 = np.dtype(np.int64)
#: dtypes the selection kernel runs on directly (others are widened exactly to one of these first)
_NATIVE = (FLOAT32, FLOAT64, INT32, _INT64)


def _order(values, axis, largest):
    """Stable ascending order, or descending order with ties in ascending index order."""
    if not largest:
        return np.argsort(values, axis=axis, kind="stable")
    n = values.shape[axis]
    reversed_order = np.argsort(np.flip(values, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(reversed_order, axis)


def _sort_block(k, axis, largest, values_out, indices_out, x):
    order = _order(load(x), axis, largest)
    chosen = np.take(order, np.arange(k), axis=axis)
    np.copyto(values_out, np.take_along_axis(x, chosen, axis=axis))
    np.copyto(indices_out, chosen, casting="unsafe")


@njit(nogil=True, cache=True)
def _select_rows(x, k, largest, values, indices):
    """values[r], indices[r] = the best k of row x[r], best first, ties (and NaNs among themselves) by index."""
    rows, n = x.shape
    for r in range(rows):
        row = x[r]
        kept_values = values[r]
        kept_indices = indices[r]
        count = 0
        for j in range(n):
            v = row[j]
            if count == k:
                worst = kept_values[k - 1]
                if largest:
                    better = v > worst or (v != v and worst == worst)
                else:
                    better = v < worst or (worst != worst and v == v)
                if not better:
                    continue
                position = k - 1
            else:
                position = count
                count += 1
            while position > 0:
                above = kept_values[position - 1]
                if largest:
                    better = v > above or (v != v and above == above)
                else:
                    better = v < above or (above != above and v == v)
                if not better:
                    break
                kept_values[position] = above
                kept_indices[position] = kept_indices[position - 1]
                position -= 1
            kept_values[position] = v
            kept_indices[position] = j


def _native(x):
    """x's values in a dtype the selection kernel takes, with the same order (exact widening)."""
    if x.dtype in _NATIVE:
        return x
    if is_half(x.dtype):
        return load(x)
    return x.astype(_INT64 if x.dtype == np.uint64 else INT32)


def _select_block(k, axis, largest, values_out, indices_out, x):
    keys = _native(x)
    n = keys.shape[axis]
    rows = np.ascontiguousarray(np.moveaxis(keys, axis, -1)).reshape(-1, n)
    rows.flags.writeable = False  # one numba specialisation per dtype (writability is part of the type)
    kept_values = np.empty((rows.shape[0], k), rows.dtype)
    kept_indices = np.empty((rows.shape[0], k), _INT64)
    _select_rows(rows, k, largest, kept_values, kept_indices)
    shape = tuple(np.moveaxis(indices_out, axis, -1).shape)
    chosen = np.moveaxis(kept_indices.reshape(shape), -1, axis)
    np.copyto(indices_out, chosen, casting="unsafe")
    if keys is x:
        np.copyto(values_out, np.moveaxis(kept_values.reshape(shape), -1, axis))
    else:  # the stored values themselves (the widened keys only ordered them)
        np.copyto(values_out, np.take_along_axis(x, chosen, axis=axis))


def topk(x, k, axis, values, indices, largest=True, sorted=True):
    """values, indices (int32) = the top `k` of x along `axis`; see the module doc for order and ties.

    `sorted=False` is accepted and gives the sorted result, which is one valid unsorted answer.
    """
    check_dtype("x", x, ALL_DTYPES)
    check_same_dtype(x=x, values=values)
    check_dtype("indices", indices, (INT32,))
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} out of range for {x.ndim} axes")
    axis %= x.ndim
    if not 0 <= k <= x.shape[axis]:
        raise ValueError(f"k={k} outside [0, {x.shape[axis]}]")
    expected = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    for name, array in (("values", values), ("indices", indices)):
        if array.shape != expected:
            raise ValueError(f"{name}: shape {array.shape}, expected {expected}")
    if k == 0:
        return
    x, = detach_inputs(values, x)
    x, = detach_inputs(indices, x)
    # blocks never cut the whole axis, so there the outputs may have extent k while x has its full extent
    kernel = _select_block if k <= SELECT_K else _sort_block
    block = functools.partial(kernel, k, axis, bool(largest))
    run_blocked(block, x.shape, [values, indices, x], whole_axes=(axis,), staged=True)
