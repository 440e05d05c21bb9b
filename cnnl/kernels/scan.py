"""Cumulative sum along one axis (`cnnlCumsum`), optionally exclusive and/or reversed.

float16/bfloat16 accumulate in float32 and round each output once; integers accumulate in their own type and wrap.
"""
import functools

import numpy as np
from numba import njit

from .dtypes import NUMERIC_DTYPES, check_dtype, check_same_dtype, compute_dtype
from .parallel import detach_inputs, run_blocked
from .staging import load, store


#: dtypes the row-scan kernel is compiled for
_ROW_SCAN_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


@njit(nogil=True, cache=True)
def _scan_rows(x, out):
    """out[i] = running sum of row x[i], left to right (the same additions, in the same order, as np.cumsum)."""
    rows, n = x.shape
    for i in range(rows):
        total = out.dtype.type(0)
        for j in range(n):
            total += x[i, j]
            out[i, j] = total


def _cumsum_direct_block(axis, reverse, out, x):
    """Inclusive scan of a dtype computed as stored, straight into out (no temporary, no copy): contiguous rows
    by the numba row kernel (numpy's accumulate walks across rows, several times slower), anything else by numpy."""
    if reverse:
        x, out = np.flip(x, axis), np.flip(out, axis)
    if (axis == x.ndim - 1 and x.dtype in _ROW_SCAN_DTYPES and x.flags.c_contiguous and out.flags.c_contiguous
            and x.size):
        rows = x.reshape(-1, x.shape[-1]).view()
        rows.flags.writeable = False  # one numba specialisation per dtype
        _scan_rows(rows, out.reshape(-1, out.shape[-1]))
        return
    np.cumsum(x, axis=axis, dtype=out.dtype, out=out)


def _cumsum_block(axis, exclusive, reverse, out, x):
    values = load(x)
    if reverse:
        values = np.flip(values, axis)
    running = np.cumsum(values, axis=axis, dtype=values.dtype)
    if exclusive:
        shifted = np.zeros_like(running)
        target = [slice(None)] * running.ndim
        source = [slice(None)] * running.ndim
        target[axis], source[axis] = slice(1, None), slice(None, -1)
        shifted[tuple(target)] = running[tuple(source)]
        running = shifted
    if reverse:
        running = np.flip(running, axis)
    store(running, out)


def cumsum(x, out, axis, exclusive=False, reverse=False):
    """out = running sum of x along `axis`; `exclusive` leaves out the element itself, `reverse` runs from the end."""
    check_same_dtype(x=x, out=out)
    check_dtype("x", x, NUMERIC_DTYPES)
    if x.shape != out.shape:
        raise ValueError(f"out shape {out.shape} != x shape {x.shape}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} out of range for {x.ndim} axes")
    axis %= x.ndim
    (x,) = detach_inputs(out, x)
    if not exclusive and x.dtype == compute_dtype(x.dtype):
        block = functools.partial(_cumsum_direct_block, axis, bool(reverse))
        run_blocked(block, x.shape, [out, x], whole_axes=(axis,), staged=False)
        return
    block = functools.partial(_cumsum_block, axis, bool(exclusive), bool(reverse))
    run_blocked(block, x.shape, [out, x], whole_axes=(axis,), staged=True)
