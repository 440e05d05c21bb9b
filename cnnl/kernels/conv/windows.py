"""Sliding windows of a convolution on channel-last arrays (N, *S, C): the output extent of an axis, the zero-padded
input, the strided view of every window, and the input slices each kernel position meets (shared with im2col)."""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..staging import load


def output_extent(size, pad_before, pad_after, kernel, stride, dilation):
    """Output extent of one spatial axis (floor rounding, as CNNL's convolution)."""
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def padded(x, pads, dtype):
    """x in `dtype`, zero-padded on its spatial axes (x itself when nothing changes)."""
    values = load(x, dtype)
    if not any(before or after for before, after in pads):
        return values
    shape = (x.shape[0],) + tuple(n + b + a for n, (b, a) in zip(x.shape[1:-1], pads)) + (x.shape[-1],)
    padded = np.zeros(shape, dtype)
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(x.shape[1:-1], pads)) + (slice(None),)
    padded[inner] = values
    return padded


def window_view(xp, kernel, out_spatial, strides, dilations):
    """Read-only view (N, *So, *K, C) of the sliding windows of the padded input."""
    st = xp.strides
    spatial = range(len(kernel))
    shape = (xp.shape[0],) + tuple(out_spatial) + tuple(kernel) + (xp.shape[-1],)
    steps = ((st[0],) + tuple(st[1 + i] * strides[i] for i in spatial)
             + tuple(st[1 + i] * dilations[i] for i in spatial) + (st[-1],))
    return as_strided(xp, shape, steps, writeable=False)


def kernel_offsets(kernel, out_spatial, strides, dilations):
    """For each kernel position: (index tuple, spatial slices of the padded input it meets)."""
    for position in np.ndindex(*kernel):
        yield position, tuple(slice(k * d, k * d + s * (n - 1) + 1, s)
                              for k, d, s, n in zip(position, dilations, strides, out_spatial))
