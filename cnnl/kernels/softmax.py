"""Softmax and log-softmax along one axis, forward and backward (`cnnlSoftmaxForward`, `cnnlSoftmaxBackward`).

Forward: y = alpha * softmax(x) + beta * y, softmax(x) = exp(x - max) / sum(exp(x - max)); log-softmax is
x - max - log(sum(exp(x - max))). Backward from the forward output y and its gradient dy:
softmax dx = y * (dy - sum(dy * y)), log-softmax dx = dy - exp(y) * sum(dy). Half and bfloat16 compute in float32.
Rows are cut into cache-sized blocks spread over the kernel thread pool. The common forward (float32 rows along the
last, contiguous axis, alpha 1, beta 0) is one compiled loop per row: the maximum, the exponentials (fastmath.exp32,
within an ulp of exp) and their sum (in vector lanes, as PyTorch's CPU kernel) in one pass, the scaling in another.
"""
import functools

import numpy as np
from numba import njit

from mlusim.numerics.accumulate import acc_add

from .dtypes import FLOAT32, compute_dtype
from .fastmath import FUSED_MULTIPLY_ADD, exp32
from .parallel import run_blocked
from .staging import blend_store, load


@njit(nogil=True, cache=True, error_model="numpy", fastmath=FUSED_MULTIPLY_ADD)
def _softmax_rows(x, tops, out, log):
    """(log-)softmax of each row of the 2-D float32 `x` into `out` (out may be x itself), given each row's maximum
    `tops` (NaN for a row holding a NaN: the row is then NaN; a row of -inf gives NaN too, as PyTorch's)."""
    rows, width = x.shape
    for r in range(rows):
        row, result, top = x[r], out[r], tops[r]
        total = np.float32(0.0)
        if log:
            for j in range(width):
                total = acc_add(total, exp32(row[j] - top))
            log_total = np.float32(np.log(total))
            for j in range(width):
                result[j] = (row[j] - top) - log_total  # not row - (top + log_total): that sum rounds at top's scale
        else:
            for j in range(width):
                result[j] = exp32(row[j] - top)
            for j in range(width):  # a loop of its own: the same vector-lane sum whether or not out is x
                total = acc_add(total, result[j])
            scale = np.float32(1.0) / total
            for j in range(width):
                result[j] = result[j] * scale


def _compiled_rows(x, out) -> bool:
    return (x.dtype == FLOAT32 and out.dtype == FLOAT32 and x.ndim >= 1 and x.shape[-1] > 0
            and x.strides[-1] == 4 and out.strides[-1] == 4 and x.flags.c_contiguous and out.flags.c_contiguous)


def _forward_block(log, alpha, beta, x, out):
    if alpha == 1 and beta == 0 and _compiled_rows(x, out):
        rows = x.reshape(-1, x.shape[-1])
        _softmax_rows(rows, rows.max(axis=1), out.reshape(rows.shape), log)  # numpy's SIMD max (NaN propagates)
        return
    values = load(x, compute_dtype(x.dtype))
    if alpha == 1 and beta == 0 and out.dtype == values.dtype:
        # straight into out: no temporary for the shifted values and no copy at the end (out may be x itself:
        # every pass reads and writes the same position)
        np.subtract(values, values.max(axis=-1, keepdims=True), out=out)
        if log:
            out -= np.log(np.exp(out).sum(axis=-1, keepdims=True))
        else:
            np.exp(out, out=out)
            out /= out.sum(axis=-1, keepdims=True)
        return
    shifted = values - values.max(axis=-1, keepdims=True)
    if log:
        total = np.exp(shifted).sum(axis=-1, keepdims=True)
        shifted -= np.log(total)
        result = shifted
    else:
        result = np.exp(shifted, out=shifted)
        result /= result.sum(axis=-1, keepdims=True)
    blend_store(result, out, alpha, beta)


def _backward_block(log, alpha, beta, y, dy, dx):
    dtype = compute_dtype(y.dtype)
    out, grad = load(y, dtype), load(dy, dtype)
    if log:
        result = np.exp(out)
        result *= grad.sum(axis=-1, keepdims=True)
        np.subtract(grad, result, out=result)
    else:
        rows = grad.reshape(-1, grad.shape[-1])
        dots = np.einsum("ij,ij->i", rows, out.reshape(rows.shape)).reshape(grad.shape[:-1] + (1,))
        result = np.subtract(grad, dots)
        result *= out
    blend_store(result, dx, alpha, beta)


def softmax_forward(x, out, axis, log=False, alpha=1.0, beta=0.0):
    """out = alpha * (log_)softmax(x) along `axis` + beta * out."""
    xs, os = np.moveaxis(x, axis, -1), np.moveaxis(out, axis, -1)
    compiled = alpha == 1 and beta == 0 and _compiled_rows(xs, os)  # no temporaries: large blocks
    run_blocked(functools.partial(_forward_block, log, alpha, beta), os.shape, [xs, os], whole_axes=(-1,),
                staged=not compiled)


def softmax_backward(y, dy, dx, axis, log=False, alpha=1.0, beta=0.0):
    """dx = alpha * (gradient of (log_)softmax at output y for dy) + beta * dx."""
    views = [np.moveaxis(a, axis, -1) for a in (y, dy, dx)]
    run_blocked(functools.partial(_backward_block, log, alpha, beta), views[2].shape, views, whole_axes=(-1,))
