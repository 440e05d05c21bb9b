"""Gradients of views (`cnnlStridedSliceBackward`, `cnnlAsStridedBackward`): the output gradient is put back where
the view took its elements from, zero elsewhere.

A strided slice never repeats an element: one parallel fill and one parallel strided copy. An as_strided view may
(overlapping windows, zero strides): when its positions are distinct the gradient is copied through a strided view
of the flat input storage, otherwise the contributions are summed per position (np.bincount in float64) and
rounded once.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .movement import copy
from .staging import load, store


def _zero(array):
    copy(np.zeros((1,) * array.ndim, array.dtype), array)


def strided_slice_backward(dy, index, dx):
    """dx = 0, then dx[index] = dy (`index` a tuple of slices)."""
    if np.may_share_memory(dy, dx):  # dx is zeroed before dy is read
        dy = dy.copy()
    _zero(dx)
    copy(dy, dx[index])


def as_strided_backward(dy, strides, offset, overlapping, dx):
    """dx (its row-major order as flat storage) = the sum of dy's elements at positions offset + sum(i * stride);
    `overlapping` says two positions coincide."""
    if np.may_share_memory(dy, dx):  # dx is zeroed before dy is read
        dy = dy.copy()
    flat = dx.reshape(-1) if dx.flags.c_contiguous else np.empty(dx.size, dx.dtype)
    if dy.size and overlapping:
        positions = offset + sum(np.arange(n, dtype=np.int64).reshape((-1,) + (1,) * (dy.ndim - 1 - d)) * s
                                 for d, (n, s) in enumerate(zip(dy.shape, strides)))
        sums = np.bincount(np.broadcast_to(positions, dy.shape).reshape(-1),
                           weights=load(dy).astype(np.float64).reshape(-1), minlength=dx.size)
        store(sums, flat)
    else:
        _zero(flat)
        if dy.size:
            step = flat.itemsize
            copy(dy, as_strided(flat[offset:], dy.shape, tuple(s * step for s in strides)))
    if not dx.flags.c_contiguous:
        copy(flat.reshape(dx.shape), dx)
