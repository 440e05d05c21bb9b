"""Top-k along one axis (`cnnlTopKTensor`): the k largest (or smallest) values with their int32 indices.

Results are always sorted (largest first, or smallest first); equal values keep ascending index order, so the
first occurrence wins. NaN counts as larger than every number (it comes first for largest, last for smallest).
"""
import functools

import numpy as np

from .dtypes import ALL_DTYPES, INT32, check_dtype, check_same_dtype
from .parallel import detach_inputs, run_blocked
from .staging import load


def _order(values, axis, largest):
    """Stable ascending order, or descending order with ties in ascending index order."""
    if not largest:
        return np.argsort(values, axis=axis, kind="stable")
    n = values.shape[axis]
    reversed_order = np.argsort(np.flip(values, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(reversed_order, axis)


def _topk_block(k, axis, largest, values_out, indices_out, x):
    order = _order(load(x), axis, largest)
    chosen = np.take(order, np.arange(k), axis=axis)
    np.copyto(values_out, np.take_along_axis(x, chosen, axis=axis))
    np.copyto(indices_out, chosen, casting="unsafe")


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
    block = functools.partial(_topk_block, k, axis, bool(largest))
    run_blocked(block, x.shape, [values, indices, x], whole_axes=(axis,), staged=True)
