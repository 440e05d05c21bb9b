"""Pooling on channel-last arrays x (N, *S, C): max (with input-plane indices), average (padding counted or not),
their backward passes, and adaptive average pooling (`cnnlPooling*`, `cnnlAdaptivePooling*`).

Windows: `kernel`, `strides`, `dilations` per spatial axis and (before, after) `pads`. With ceil mode an extra
window is kept when it starts inside the input or its leading padding (PyTorch's rule); positions past the
padding count as padding. Max indices are flat positions in the unpadded input plane (h * W + w), the first
maximum winning; NaN wins when `propagate_nan`, else it is skipped. The average divides by the window positions
inside the padded input (count_include_pad) or inside the input. Computation in float32 (float64 for double),
split over the batch on the kernel thread pool, one vectorised step per kernel position.
"""
import math

import numpy as np

from .dtypes import compute_dtype
from .parallel import map_parallel
from .staging import load, store


def pooled_extent(size, kernel, pad_before, pad_after, stride, dilation, ceil_mode):
    """Output extent of one spatial axis."""
    span = size + pad_before + pad_after - dilation * (kernel - 1) - 1
    extent = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (extent - 1) * stride >= size + pad_before:
        extent -= 1
    return extent


class Windows:
    """The window geometry of one pooling problem."""

    def __init__(self, in_spatial, out_spatial, kernel, strides, dilations, pads):
        self.in_spatial, self.out_spatial = tuple(in_spatial), tuple(out_spatial)
        self.kernel, self.strides, self.dilations, self.pads = tuple(kernel), tuple(strides), tuple(dilations), pads
        # padded extent: room for every window, including the extra window of ceil mode
        self.padded = tuple(max(n + b + a, (o - 1) * s + d * (k - 1) + 1)
                            for n, (b, a), o, s, d, k in zip(in_spatial, pads, out_spatial, strides, dilations, kernel))

    def positions(self):
        """(kernel index tuple, slices of the padded input it meets for every output position)."""
        for position in np.ndindex(*self.kernel):
            yield position, tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in
                                  zip(position, self.dilations, self.strides, self.out_spatial))

    def inner(self):
        return tuple(slice(b, b + n) for n, (b, _) in zip(self.in_spatial, self.pads))

    def padded_copy(self, x, fill, dtype):
        """x (N, *S, C) in `dtype` inside a `fill`-valued padded array."""
        padded = np.full((x.shape[0],) + self.padded + (x.shape[-1],), fill, dtype)
        padded[(slice(None),) + self.inner() + (slice(None),)] = load(x, dtype)
        return padded

    def counts(self, include_padding):
        """Positions each window averages over, shaped (*So, 1)."""
        per_axis = []
        for n, (b, a), o, s, d, k in zip(self.in_spatial, self.pads, self.out_spatial, self.strides,
                                         self.dilations, self.kernel):
            low, high = (-b, n + a) if include_padding else (0, n)
            taps = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
            per_axis.append(((taps >= low) & (taps < high)).sum(axis=1))
        total = per_axis[0].astype(np.float64)
        for counts in per_axis[1:]:
            total = np.multiply.outer(total, counts)
        return np.maximum(total, 1)[..., None]

    def input_index(self, position):
        """Flat input-plane index (h * W + w) that kernel `position` reads at each output position, (*So, 1)."""
        flat = np.zeros(self.out_spatial, np.int64)
        for axis, (k, d, s, o, (b, _), n) in enumerate(zip(position, self.dilations, self.strides, self.out_spatial,
                                                           self.pads, self.in_spatial)):
            coordinate = np.arange(o) * s - b + k * d
            shape = [1] * len(self.out_spatial)
            shape[axis] = o
            flat = flat * n + coordinate.reshape(shape)
        return flat[..., None]


def max_pool_forward(x, out, windows, indices=None, propagate_nan=True, alpha=1.0, beta=0.0):
    """out = alpha * max over each window + beta * out; `indices` (optional) receives the argmax positions."""
    dtype = compute_dtype(x.dtype)
    padded = windows.padded_copy(x, -np.inf, dtype)
    values = np.empty(out.shape, dtype)
    where = np.empty(out.shape, np.int64) if indices is not None else None

    def run(n):
        best, arg = None, None
        for position, window in windows.positions():
            candidate = padded[(n,) + window]
            if best is None:
                best = candidate.copy()
                arg = np.broadcast_to(windows.input_index(position), best.shape).copy() if where is not None else None
                continue
            wins = candidate > best
            if propagate_nan:
                wins |= np.isnan(candidate) & ~np.isnan(best)
            else:
                wins |= np.isnan(best) & ~np.isnan(candidate)
            np.copyto(best, candidate, where=wins)
            if arg is not None:
                np.copyto(arg, windows.input_index(position), where=wins)
        values[n] = best
        if arg is not None:
            where[n] = arg

    map_parallel(run, range(x.shape[0]))
    _scaled_store(values, out, alpha, beta)
    if indices is not None:
        store(where, indices)


def avg_pool_forward(x, out, windows, include_padding, alpha=1.0, beta=0.0):
    """out = alpha * mean over each window + beta * out."""
    dtype = compute_dtype(x.dtype)
    padded = windows.padded_copy(x, 0, dtype)
    values = np.empty(out.shape, dtype)
    scale = (1.0 / windows.counts(include_padding)).astype(dtype)

    def run(n):
        total = np.zeros(out.shape[1:], dtype)
        for _, window in windows.positions():
            total += padded[(n,) + window]
        values[n] = total * scale

    map_parallel(run, range(x.shape[0]))
    _scaled_store(values, out, alpha, beta)


def max_pool_backward(dy, indices, dx, alpha=1.0, beta=0.0):
    """dx = alpha * (dy summed into the input positions `indices` name) + beta * dx."""
    dtype = compute_dtype(dy.dtype)
    batch, channels = dx.shape[0], dx.shape[-1]
    plane = math.prod(dx.shape[1:-1])
    grads = load(dy, dtype)
    result = np.empty((batch, plane, channels), dtype)

    def run(n):
        flat = (np.asarray(indices[n], np.int64).reshape(-1, channels) * channels + np.arange(channels)).ravel()
        result[n] = np.bincount(flat, weights=grads[n].reshape(-1), minlength=plane * channels).reshape(plane,
                                                                                                         channels)

    map_parallel(run, range(batch))
    _scaled_store(result.reshape(dx.shape), dx, alpha, beta)


def avg_pool_backward(dy, dx, windows, include_padding, alpha=1.0, beta=0.0):
    """dx = alpha * (each window's dy / count spread over the window) + beta * dx."""
    dtype = compute_dtype(dy.dtype)
    grads = load(dy, dtype) * (1.0 / windows.counts(include_padding)).astype(dtype)
    padded = np.zeros((dx.shape[0],) + windows.padded + (dx.shape[-1],), dtype)

    def run(n):
        for _, window in windows.positions():
            padded[(n,) + window] += grads[n]

    map_parallel(run, range(dx.shape[0]))
    _scaled_store(padded[(slice(None),) + windows.inner() + (slice(None),)], dx, alpha, beta)


def _adaptive_matrix(size, extent, dtype):
    """(extent, size) averaging matrix of adaptive pooling: bin i covers
    [floor(i * size / extent), ceil((i + 1) * size / extent))."""
    matrix = np.zeros((extent, size), dtype)
    for i in range(extent):
        start, stop = (i * size) // extent, -((-(i + 1) * size) // extent)
        matrix[i, start:stop] = 1.0 / (stop - start)
    return matrix


def adaptive_avg_forward(x, out):
    """out (N, Ho, Wo, C) = the adaptive average pooling of x (N, H, W, C)."""
    dtype = compute_dtype(x.dtype)
    rows = _adaptive_matrix(x.shape[1], out.shape[1], dtype)
    cols = _adaptive_matrix(x.shape[2], out.shape[2], dtype)
    values = np.einsum("ih,nhwc,jw->nijc", rows, load(x, dtype), cols, optimize=True)
    store(values, out)


def adaptive_avg_backward(dy, dx):
    """dx (N, H, W, C) = the gradient of adaptive_avg_forward for dy (N, Ho, Wo, C)."""
    dtype = compute_dtype(dy.dtype)
    rows = _adaptive_matrix(dx.shape[1], dy.shape[1], dtype)
    cols = _adaptive_matrix(dx.shape[2], dy.shape[2], dtype)
    values = np.einsum("ih,nijc,jw->nhwc", rows, load(dy, dtype), cols, optimize=True)
    store(values, dx)


def _scaled_store(values, out, alpha, beta):
    if alpha != 1:
        values = values * values.dtype.type(alpha)
    if beta != 0:
        values = values + load(out, values.dtype) * values.dtype.type(beta)
    store(values, out)
