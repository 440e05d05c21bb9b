"""Cumulative sum along one axis (`cnnlCumsum`), optionally exclusive and/or reversed.

float16/bfloat16 accumulate in float32 and round each output once; integers accumulate in their own type and wrap.
"""
import functools

import numpy as np

from .dtypes import NUMERIC_DTYPES, check_dtype, check_same_dtype
from .parallel import detach_inputs, run_blocked
from .staging import load, store


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
    block = functools.partial(_cumsum_block, axis, bool(exclusive), bool(reverse))
    run_blocked(block, x.shape, [out, x], whole_axes=(axis,), staged=True)
