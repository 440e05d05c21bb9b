"""Depthwise convolutions (one input channel per group): one multiply-add of the whole tensor per kernel position,
in each direction, instead of per-group GEMMs."""
import numpy as np

from ..parallel import map_parallel
from .windows import kernel_offsets


def is_depthwise(w, groups, channels_in):
    """One input channel per group: the direct (per kernel position) path is faster than per-group GEMMs."""
    return groups > 1 and groups == channels_in and w.shape[-1] == 1


def depthwise_forward(xp, w, result, kernel, out_spatial, strides, dilations):
    channels = xp.shape[-1]
    multiplier = w.shape[0] // channels
    taps = w.reshape(channels, multiplier, -1)

    def run(n):
        target = result[n].reshape(tuple(out_spatial) + (channels, multiplier))
        target[...] = 0
        for index, (_, window) in enumerate(kernel_offsets(kernel, out_spatial, strides, dilations)):
            target += xp[(n,) + window][..., None] * taps[:, :, index]

    map_parallel(run, range(xp.shape[0]))


def depthwise_filter(xp, dy_values, kernel, out_spatial, strides, dilations):
    channels_in = xp.shape[-1]
    multiplier = dy_values.shape[-1] // channels_in
    offsets = [window for _, window in kernel_offsets(kernel, out_spatial, strides, dilations)]

    def partial(n):
        grad = dy_values[n].reshape(-1, channels_in, multiplier)
        taps = np.empty((channels_in, multiplier, len(offsets)), grad.dtype)
        for index, window in enumerate(offsets):
            taps[:, :, index] = np.einsum("rc,rcm->cm", xp[(n,) + window].reshape(-1, channels_in), grad)
        return taps

    return np.sum(map_parallel(partial, range(xp.shape[0])), axis=0).reshape(dy_values.shape[-1], -1)


def depthwise_data(dy_values, w_values, dx_shape, pads, kernel, out_spatial, strides, dilations):
    """The data gradient (N, *S, C) of a depthwise convolution: each kernel position's dy * tap summed back into
    the zero-padded input it read, the padding then cut off (a view)."""
    channels_in = dx_shape[-1]
    padded_shape = (dx_shape[0],) + tuple(n + b + a for n, (b, a) in zip(dx_shape[1:-1], pads)) + (channels_in,)
    grad_padded = np.zeros(padded_shape, dy_values.dtype)
    offsets = [window for _, window in kernel_offsets(kernel, out_spatial, strides, dilations)]
    multiplier = w_values.shape[0] // channels_in
    taps = w_values.reshape(channels_in, multiplier, -1)

    def scatter(n):
        grad = dy_values[n].reshape(tuple(out_spatial) + (channels_in, multiplier))
        for index, window in enumerate(offsets):
            grad_padded[(n,) + window] += np.einsum("...cm,cm->...c", grad, taps[:, :, index])

    map_parallel(scatter, range(dx_shape[0]))
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(dx_shape[1:-1], pads)) + (slice(None),)
    return grad_padded[inner]
