"""im2col, col2im and unfold (`cnnlIm2Col`, `cnnlCol2Im`, `cnnlUnfold`): the window copies of PyTorch's
F.unfold / F.fold and Tensor.unfold.

im2col: x (N, H, W, C) channel-last view, zero padding -> columns (N, C * kh * kw, oh * ow), row index
c * kh * kw + i * kw + j, column index out_row * ow + out_col (PyTorch's F.unfold layout). col2im: columns
(N, oh * ow, C * kh * kw) (the transposed layout DIOPI hands CNNL) -> y (N, H, W, C), overlapping window positions
summed (F.fold). unfold: y[..., i, ..., k] = x[..., i * step + k, ...] with the window axis appended. Copies keep
the storage type; col2im sums in float32 (float64 for double) and rounds once. Samples run on the thread pool.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .conv import kernel_offsets, output_extent, padded, window_view
from .dtypes import compute_dtype
from .parallel import map_parallel
from .staging import load, store


def out_spatial(spatial, kernel, pads, strides, dilations):
    return tuple(output_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in zip(spatial, pads, kernel, strides,
                                                                                 dilations))


def im2col(x, columns, kernel, pads, strides, dilations):
    """columns (N, C * kh * kw, L) = the sliding windows of x (N, H, W, C)."""
    if columns.size == 0:
        return
    batch, channels = x.shape[0], x.shape[-1]
    outs = out_spatial(x.shape[1:-1], kernel, pads, strides, dilations)
    windows = window_view(padded(x, pads, x.dtype), kernel, outs, strides, dilations)  # (N, oh, ow, kh, kw, C)
    shape = (batch, channels) + tuple(kernel) + outs
    try:
        target, staged = columns.reshape(shape, copy=False), None
    except ValueError:
        target = staged = np.empty(shape, columns.dtype)

    def copy(n):
        np.copyto(target[n], windows[n].transpose(4, 2, 3, 0, 1))

    map_parallel(copy, range(batch))
    if staged is not None:
        columns[...] = staged.reshape(columns.shape)


def col2im(columns, y, kernel, pads, strides, dilations):
    """y (N, H, W, C) = the sum of the windows in columns (N, L, C * kh * kw) put back in place."""
    if y.size == 0:
        return
    dtype = compute_dtype(y.dtype)
    batch, channels = y.shape[0], y.shape[-1]
    outs = out_spatial(y.shape[1:-1], kernel, pads, strides, dilations)
    padded = np.zeros((batch,) + tuple(n + b + a for n, (b, a) in zip(y.shape[1:-1], pads)) + (channels,), dtype)
    cols = columns.reshape((batch,) + outs + (channels,) + tuple(kernel))
    offsets = list(kernel_offsets(kernel, outs, strides, dilations))

    def scatter(n):
        values = load(cols[n], dtype)
        for position, window in offsets:
            padded[(n,) + window] += values[(Ellipsis,) + position]

    map_parallel(scatter, range(batch))
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(y.shape[1:-1], pads)) + (slice(None),)
    store(padded[inner], y)


def unfold_shape(shape, dim, size, step):
    """The shape of x.unfold(dim, size, step)."""
    return tuple(shape[:dim]) + ((shape[dim] - size) // step + 1,) + tuple(shape[dim + 1:]) + (size,)


def unfold(x, y, dim, size, step):
    """y = x.unfold(dim, size, step) (a copy of the strided window view)."""
    if y.size == 0:
        return
    strides = list(x.strides)
    view_strides = strides[:dim] + [strides[dim] * step] + strides[dim + 1:] + [strides[dim]]
    np.copyto(y, as_strided(x, y.shape, view_strides, writeable=False))
