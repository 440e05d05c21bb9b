"""Synchronised batch norm, the per-device pieces of DDP's SyncBatchNorm (`cnnlSyncBatchNorm*`). The numerics of
PyTorch's batch_norm_stats, batch_norm_gather_stats_with_counts, batch_norm_elemt, batch_norm_backward_reduce and
batch_norm_backward_elemt:

  stats:    mean_c, invstd_c = 1 / sqrt(var_c + eps) over every axis but the channel axis (biased variance)
  gather:   over W devices with counts n_w: mean = sum n_w mean_w / N, var = sum n_w (var_w + (mean_w - mean)^2) / N
            with var_w = 1 / invstd_w^2 - eps; invstd = 1 / sqrt(var + eps); running statistics
            r = (1 - momentum) r + momentum * (mean, var * N / (N - 1))
  elemt:    y = (x - mean) * invstd * weight + bias
  reduce:   sum_dy = sum dy, sum_dy_xmu = sum dy (x - mean), dweight = sum_dy_xmu * invstd, dbias = sum_dy
  b. elemt: dx = (dy - sum_dy / N - (x - mean) invstd^2 sum_dy_xmu / N) * invstd * weight, N = sum of the counts
Sums accumulate in float64; elementwise parts compute in float32 (float64 for double) and round once, in blocks
spread over the kernel thread pool. Weight and bias may be None (1 and 0).
"""
from __future__ import annotations

import numpy as np

from .dtypes import compute_dtype
from .parallel import align_ndim, detach_inputs, run_blocked
from .staging import load, store


def _channel_shape(ndim, axis, channels):
    shape = [1] * ndim
    shape[axis] = channels
    return tuple(shape)


def _reduced_axes(ndim, axis):
    return tuple(a for a in range(ndim) if a != axis)


def _per_channel(values, x, axis, dtype):
    """A per-channel vector (or None) as an array broadcasting against x."""
    if values is None:
        return None
    return load(values, dtype).reshape(_channel_shape(x.ndim, axis, x.shape[axis]))


def stats(x, axis, eps, mean_out, invstd_out):
    """Per-channel mean and 1 / sqrt(biased variance + eps) of x."""
    channels = x.shape[axis]
    count = x.size // channels if channels else 0
    axes = _reduced_axes(x.ndim, axis)
    values = load(x, compute_dtype(x.dtype))
    mean = values.sum(axis=axes, dtype=np.float64) / max(count, 1)
    centred = values - mean.astype(values.dtype).reshape(_channel_shape(x.ndim, axis, channels))
    variance = np.einsum(centred, list(range(x.ndim)), centred, list(range(x.ndim)), [axis],
                         dtype=np.float64) / max(count, 1)
    with np.errstate(divide="ignore"):
        store(mean if count else np.full(channels, np.nan), mean_out)
        store(1.0 / np.sqrt(variance + eps) if count else np.full(channels, np.nan), invstd_out)


def gather_stats(mean_all, invstd_all, counts, momentum, eps, mean_out, invstd_out, running_mean=None,
                 running_var=None):
    """Global mean and invstd from W devices' (mean, invstd) rows and their element counts; updates the running
    statistics (unbiased variance) when given."""
    means, invstds = load(mean_all, np.float64), load(invstd_all, np.float64)
    n = load(counts, np.float64).reshape(-1, 1)
    total = n.sum()
    used = n > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(used, n * means, 0).sum(axis=0) / total
        variance = np.where(used, n * (1.0 / invstds ** 2 - eps + (means - mean) ** 2), 0).sum(axis=0) / total
        store(mean, mean_out)
        store(1.0 / np.sqrt(variance + eps), invstd_out)
        if running_mean is not None:
            store((1 - momentum) * load(running_mean, np.float64) + momentum * mean, running_mean)
        if running_var is not None:
            unbiased = variance * total / (total - 1) if total > 1 else variance
            store((1 - momentum) * load(running_var, np.float64) + momentum * unbiased, running_var)


def _affine(out, x, scale, shift):
    dtype = compute_dtype(x.dtype)
    with np.errstate(all="ignore"):  # NaN/inf statistics give NaN/inf results, silently as on the device
        values = load(x, dtype) * scale
        values += shift
    store(values, out)


def elemt(x, mean, invstd, weight, bias, y, axis):
    """y = (x - mean) * invstd * weight + bias (per channel), as one multiply-add per element."""
    dtype = compute_dtype(x.dtype)
    scale = load(invstd, np.float64) * (1.0 if weight is None else load(weight, np.float64))
    shift = (0.0 if bias is None else load(bias, np.float64)) - load(mean, np.float64) * scale
    shape = _channel_shape(x.ndim, axis, x.shape[axis])
    (source,) = detach_inputs(y, x)
    run_blocked(_affine, x.shape, [y, source, scale.astype(dtype).reshape(shape),
                                   shift.astype(dtype).reshape(shape)])


def backward_reduce(dy, x, mean, invstd, axis, sum_dy=None, sum_dy_xmu=None, dweight=None, dbias=None):
    """The per-channel sums of the backward; each output is written when not None."""
    axes = _reduced_axes(x.ndim, axis)
    dtype = compute_dtype(x.dtype)
    grads = load(dy, dtype)
    total = grads.sum(axis=axes, dtype=np.float64)
    centred = load(x, dtype) - load(mean, dtype).reshape(_channel_shape(x.ndim, axis, x.shape[axis]))
    products = np.einsum(grads, list(range(x.ndim)), centred, list(range(x.ndim)), [axis], dtype=np.float64)
    for values, out in ((total, sum_dy), (products, sum_dy_xmu), (total, dbias)):
        if out is not None:
            store(values, out)
    if dweight is not None:
        store(products * load(invstd, np.float64), dweight)


def _backward_block(out, dy, x, a, b, c):
    """out = a * dy + b * x + c, the per-channel affine map the backward reduces to."""
    dtype = compute_dtype(x.dtype)
    with np.errstate(all="ignore"):
        values = load(dy, dtype) * a
        values += load(x, dtype) * b
        values += c
    store(values, out)


def backward_elemt(dy, x, mean, invstd, weight, sum_dy, sum_dy_xmu, counts, dx, axis):
    """dx of the synchronised batch norm from the global sums and the devices' element counts."""
    dtype = compute_dtype(x.dtype)
    total = float(load(counts, np.float64).sum())
    istd = load(invstd, np.float64)
    w = 1.0 if weight is None else load(weight, np.float64)
    with np.errstate(all="ignore"):  # a zero total count gives NaN gradients
        mean_dy, mean_dy_xmu = load(sum_dy, np.float64) / total, load(sum_dy_xmu, np.float64) / total
        # dx = (dy - mean_dy - (x - mean) istd^2 mean_dy_xmu) istd w = a dy + b x + c
        a = istd * w
        b = -istd ** 3 * mean_dy_xmu * w
        c = (-mean_dy + load(mean, np.float64) * istd ** 2 * mean_dy_xmu) * istd * w
    shape = _channel_shape(x.ndim, axis, x.shape[axis])
    grads, source = detach_inputs(dx, dy, x)
    run_blocked(_backward_block, x.shape, [dx, grads, source] + [align_ndim(v.astype(dtype).reshape(shape), x.ndim)
                                                                 for v in (a, b, c)])
