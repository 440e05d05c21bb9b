"""The gradient of batch norm with frozen (running) statistics (`cnnlFrozenBatchNormBackward_v2`, the eval-mode
backward of torch's batch_norm): with invstd = 1 / sqrt(pop_var + eps),
dx = dy * weight * invstd, dweight = sum(dy * (x - pop_mean) * invstd), dbias = sum(dy), the sums over every axis
but the channel axis, accumulated in float64 and rounded once."""
import numpy as np

from .dtypes import compute_dtype
from .parallel import detach_inputs, run_blocked
from .staging import load, store


def frozen_batch_norm_backward(x, dy, weight, pop_mean, pop_var, eps, dx, dweight, dbias, channel_axis):
    dtype = compute_dtype(dx.dtype)
    shape = [1] * x.ndim
    shape[channel_axis] = x.shape[channel_axis]
    axes = tuple(a for a in range(x.ndim) if a != channel_axis)
    with np.errstate(all="ignore"):  # a negative variance gives NaN, as on the device
        invstd = 1.0 / np.sqrt(load(pop_var, np.float64) + eps)
    if dweight is not None or dbias is not None:
        grads = load(dy, np.float64)
        if dbias is not None:
            store(grads.sum(axis=axes), dbias)
        if dweight is not None:
            centred = load(x, np.float64) - load(pop_mean, np.float64).reshape(shape)
            indices = list(range(x.ndim))
            store(np.einsum(grads, indices, centred, indices, [channel_axis]) * invstd, dweight)
    scale = (invstd * load(weight, np.float64)).astype(dtype).reshape(shape)
    (source,) = detach_inputs(dx, dy)
    run_blocked(lambda out, g, s: store(load(g, dtype) * s, out), dx.shape, [dx, source, scale])
