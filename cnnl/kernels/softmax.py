"""Softmax and log-softmax along one axis, forward and backward (`cnnlSoftmaxForward`, `cnnlSoftmaxBackward`).

Forward: y = alpha * softmax(x) + beta * y, softmax(x) = exp(x - max) / sum(exp(x - max)); log-softmax is
x - max - log(sum(exp(x - max))). Backward from the forward output y and its gradient dy:
softmax dx = y * (dy - sum(dy * y)), log-softmax dx = dy - exp(y) * sum(dy). Half and bfloat16 compute in float32.
Rows are cut into cache-sized blocks spread over the kernel thread pool.
"""
import functools

import numpy as np

from .dtypes import compute_dtype
from .parallel import run_blocked
from .staging import load, store


def _finish(values, out, alpha, beta):
    if alpha != 1:
        values *= values.dtype.type(alpha)
    if beta != 0:
        values += load(out, values.dtype) * values.dtype.type(beta)
    store(values, out)


def _forward_block(log, alpha, beta, x, out):
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
    _finish(result, out, alpha, beta)


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
    _finish(result, dx, alpha, beta)


def softmax_forward(x, out, axis, log=False, alpha=1.0, beta=0.0):
    """out = alpha * (log_)softmax(x) along `axis` + beta * out."""
    xs, os = np.moveaxis(x, axis, -1), np.moveaxis(out, axis, -1)
    run_blocked(functools.partial(_forward_block, log, alpha, beta), os.shape, [xs, os], whole_axes=(-1,))


def softmax_backward(y, dy, dx, axis, log=False, alpha=1.0, beta=0.0):
    """dx = alpha * (gradient of (log_)softmax at output y for dy) + beta * dx."""
    views = [np.moveaxis(a, axis, -1) for a in (y, dy, dx)]
    run_blocked(functools.partial(_backward_block, log, alpha, beta), views[2].shape, views, whole_axes=(-1,))
