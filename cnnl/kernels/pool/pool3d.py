"""3-D pooling on channel-last arrays x (N, D, H, W, C): max (with flat indices d * H * W + h * W + w), both
averages, and their backward passes - the rules of 2-D pooling extended by a depth axis.

Pooling windows are boxes, so every mode splits into the 2-D pooling over (H, W) and a pass over the
depth axis: averages multiply the per-axis weights (the counts of a box are products); max takes the (H, W) maxima
of every depth slice and their indices, then the first maximum along the window's depth taps, so the winner is the
first in (d, h, w) order, NaN winning or skipped as in 2-D. Gradients: averages run the transposed passes in the
reverse order; max scatters through the flat indices (the 2-D scatter on (D * H, W) planes).
"""
from __future__ import annotations

import numpy as np

from ..dtypes import compute_dtype
from ..staging import blend_store, load, store
from .pool2d import avg_pool_backward, avg_pool_forward, depth_sum, max_pool_backward, max_pool_forward
from .taps import Windows


def _plane(windows: Windows) -> Windows:
    """The (H, W) windows of a 3-D geometry."""
    return Windows(windows.in_spatial[1:], windows.out_spatial[1:], windows.kernel[1:], windows.strides[1:],
                     windows.dilations[1:], windows.pads[1:])


def _merged(view, first, count):
    """`view` with axes first .. first + count - 1 merged, as a view (None when its strides do not allow one)."""
    shape = view.shape[:first] + (int(np.prod(view.shape[first:first + count])),) + view.shape[first + count:]
    try:
        return view.reshape(shape, copy=False)
    except ValueError:
        return None


def avg_pool3d_forward(x, out, windows, include_padding, alpha=1.0, beta=0.0):
    """out = alpha * the box averages of x + beta * out."""
    if out.size == 0:
        return
    dtype = compute_dtype(x.dtype)
    depth_axis = windows.axes(include_padding)[0]
    planes = np.empty(x.shape[:2] + out.shape[2:], dtype)
    plane = _plane(windows)
    for n in range(x.shape[0]):  # depth slices are the batch of the (H, W) pooling
        avg_pool_forward(x[n], planes[n], plane, include_padding)
    blend_store(depth_sum(planes, depth_axis, out.shape[1]), out, alpha, beta)


def avg_pool3d_backward(dy, dx, windows, include_padding, alpha=1.0, beta=0.0):
    """dx = alpha * the gradient of avg_pool3d_forward for dy + beta * dx."""
    if dx.size == 0:
        return
    dtype = compute_dtype(dy.dtype)
    depth_axis = windows.axes(include_padding, transposed=True)[0]
    planes = np.empty(dy.shape[:2] + dx.shape[2:], dtype)
    plane = _plane(windows)
    for n in range(dy.shape[0]):
        avg_pool_backward(dy[n], planes[n], plane, include_padding)
    blend_store(depth_sum(planes, depth_axis, dx.shape[1]), dx, alpha, beta)


def max_pool3d_forward(x, out, windows, indices=None, propagate_nan=True, alpha=1.0, beta=0.0):
    """out = alpha * the box maxima of x + beta * out; `indices` (optional) receives d * H * W + h * W + w."""
    if out.size == 0:
        return
    dtype = compute_dtype(x.dtype)
    batch, depth, height, width, channels = x.shape
    plane = _plane(windows)
    maxima = np.empty((batch, depth) + out.shape[2:], dtype)
    where = np.empty(maxima.shape, np.int64)
    for n in range(batch):
        max_pool_forward(x[n], maxima[n], plane, where[n], propagate_nan)
    axis = windows.axes()[0]
    best = np.empty(out.shape, dtype)
    chosen = np.empty(out.shape, np.int64)
    for o in range(out.shape[1]):
        count = axis.count[o]
        if count == 0:  # a window of padding only
            best[:, o] = -np.inf
            chosen[:, o] = axis.first[o] * height * width
            continue
        d0 = axis.taps[0, o]
        value, index = maxima[:, d0].copy(), where[:, d0] + d0 * height * width
        for k in range(1, count):
            d = axis.taps[k, o]
            candidate = maxima[:, d]
            if propagate_nan:
                win = (candidate > value) | np.isnan(candidate)  # any NaN wins: the last one gives the index (torch)
            else:
                win = (candidate > value) | (np.isnan(value) & ~np.isnan(candidate))
            np.copyto(value, candidate, where=win)
            np.copyto(index, where[:, d] + d * height * width, where=win)
        best[:, o], chosen[:, o] = value, index
    blend_store(best, out, alpha, beta)
    if indices is not None:
        store(chosen, indices)


def max_pool3d_backward(dy, indices, dx, alpha=1.0, beta=0.0):
    """dx = alpha * (dy summed into the positions `indices` name) + beta * dx."""
    if dx.size == 0:
        return
    target = _merged(dx, 1, 2)
    staged = None
    if target is None:
        staged = np.empty(dx.shape, compute_dtype(dx.dtype))
        if beta != 0:
            staged[...] = load(dx, staged.dtype)
        target = staged.reshape(dx.shape[0], -1, dx.shape[3], dx.shape[4])
    grads = _merged(dy, 1, 2)
    grads = grads if grads is not None else np.ascontiguousarray(dy).reshape(dy.shape[0], -1, *dy.shape[3:])
    where = _merged(indices, 1, 2)
    where = where if where is not None else np.ascontiguousarray(indices).reshape(grads.shape)
    max_pool_backward(grads, where, target, alpha, beta)
    if staged is not None:
        store(staged, dx)
