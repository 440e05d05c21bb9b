"""Threshold and hardtanh, forward and backward (`cnnlThreshold`, `cnnlThresholdBackward`, `cnnlHardtanh`,
`cnnlHardtanhBackward`), as PyTorch's CPU kernels:
- threshold: y = value where x <= threshold, else x (NaN passes through);
- threshold backward: dx = 0 where x <= threshold, else dy;
- hardtanh: y = min(max(x, min_val), max_val) (NaN propagates);
- hardtanh backward: dx = dy where min_val < x < max_val, else 0 (so 0 for NaN x, as PyTorch's vectorised
  kernel gives).
Comparisons and results are in the compute dtype (float32 for half/bfloat16), stored once.
"""
import functools

import numpy as np
from numba import njit

from .cast import readonly_flat
from .dtypes import NUMERIC_DTYPES, check_dtype, check_same_dtype, compute_dtype
from .elementwise import run_elementwise
from .staging import load, store


def _threshold_block(threshold, value, out, x):
    values = load(x)
    store(np.where(values <= threshold, value, values).astype(compute_dtype(out.dtype), copy=False), out)


def threshold(x, threshold_value, value, out):
    """out = value where x <= threshold_value, else x; the scalars are in x's compute dtype."""
    check_same_dtype(x=x, out=out)
    check_dtype("x", x, NUMERIC_DTYPES)
    run_elementwise(functools.partial(_threshold_block, threshold_value, value), out, [x], staged=True)


@njit(nogil=True, cache=True)
def _threshold_backward_loop(x, dy, threshold_value, out):
    for i in range(out.size):
        out[i] = 0 if x[i] <= threshold_value else dy[i]


def _direct(out, *inputs):
    """True when every operand is C-contiguous, of out's shape and stored in its (floating) compute dtype: one
    vectorised loop over the flat arrays then does the whole block (ReLU's backward in every training step)."""
    return out.dtype.kind == "f" and compute_dtype(out.dtype) == out.dtype and all(
        a.shape == out.shape and a.flags.c_contiguous and a.dtype == out.dtype for a in (out, *inputs))


def _threshold_backward_block(threshold_value, out, x, dy):
    if _direct(out, x, dy):
        _threshold_backward_loop(readonly_flat(x), readonly_flat(dy), out.dtype.type(threshold_value),
                                 out.reshape(-1))
        return
    gradient = load(dy)
    store(np.where(load(x) <= threshold_value, 0, gradient).astype(compute_dtype(out.dtype), copy=False), out)


def threshold_backward(x, dy, threshold_value, out):
    """out = 0 where x <= threshold_value, else dy."""
    check_same_dtype(x=x, dy=dy, out=out)
    check_dtype("x", x, NUMERIC_DTYPES)
    run_elementwise(functools.partial(_threshold_backward_block, threshold_value), out, [x, dy],
                    staged=not _direct(out, x, dy))


def _hardtanh_block(low, high, out, x):
    store(np.minimum(np.maximum(load(x), low), high), out)


def hardtanh(x, low, high, out):
    """out = min(max(x, low), high)."""
    check_same_dtype(x=x, out=out)
    check_dtype("x", x, NUMERIC_DTYPES)
    kind = compute_dtype(x.dtype)
    run_elementwise(functools.partial(_hardtanh_block, kind.type(low), kind.type(high)), out, [x], staged=True)


def _hardtanh_backward_block(low, high, out, x, dy):
    values = load(x)
    inside = (values > low) & (values < high)
    store(np.where(inside, load(dy), 0).astype(compute_dtype(out.dtype), copy=False), out)


def hardtanh_backward(x, dy, low, high, out):
    """out = dy where low < x < high, else 0."""
    check_same_dtype(x=x, dy=dy, out=out)
    check_dtype("x", x, NUMERIC_DTYPES)
    kind = compute_dtype(x.dtype)
    run_elementwise(functools.partial(_hardtanh_backward_block, kind.type(low), kind.type(high)), out, [x, dy],
                    staged=True)
