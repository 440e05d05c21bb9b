"""Modulated deformable convolution (DCN v2), forward and backward (`cnnlDCNForward`, `cnnlDCNBackwardData`,
`cnnlDCNBackwardWeight`), mmcv's modulated_deform_conv numerics, on channel-last arrays:
x (N, H, W, C), offset (N, Ho, Wo, 2 * dg * kh * kw), mask (N, Ho, Wo, dg * kh * kw), w (Co, kh, kw, C / groups),
y (N, Ho, Wo, Co).

Kernel tap k = (i, j) of output (o, p) reads channel c (deformable group g = c // (C / dg)) at
    h = o * stride_h - pad_top + i * dilation_h + offset[..., g * 2K + 2k],
    w = p * stride_w - pad_left + j * dilation_w + offset[..., g * 2K + 2k + 1]
by bilinear interpolation (0 outside the image: a point with h <= -1, h >= H, w <= -1 or w >= W reads 0, and so
does each corner outside it), times mask[..., g * K + k]. The sampled columns (rows (o, p), taps, channels) then
multiply the weights per convolution group on the host BLAS: y = columns @ w^T + bias. The backward sends the
column gradients (dy @ w) back through the bilinear weights into dx, into the offsets (the derivative of the
interpolation along h and w) and into the mask (the unmasked sample); dw = dy^T @ columns, dbias = sum of dy.
Samples run on the kernel thread pool, each in one nogil numba kernel; float32 (float64 for double) throughout.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from mlusim.host import blas as blas_threads
from .dtypes import compute_dtype
from .parallel import map_parallel
from .staging import load, readonly_contiguous, store


@njit(nogil=True, cache=True, inline="always")
def _corners(h, w, height, width):
    """(h_low, w_low, lh, lw, inside) of a sampling point."""
    inside = h > -1 and w > -1 and h < height and w < width
    h_low, w_low = np.floor(h), np.floor(w)
    return int(h_low), int(w_low), h - h_low, w - w_low, inside


@njit(nogil=True, cache=True, inline="always")
def _sampling_point(offset, mask, o, p, k, g, geometry, height, width):
    """Where tap k of deformable group g samples for the output position (o, p), as both passes need it: (its
    modulation m, whether it is inside the image, the fractions lh and lw, whether the top / bottom rows and left /
    right columns of its four neighbours lie in the image, and their clamped rows a, a1 and columns b, b1)."""
    kh, kw, sh, sw, ph, pw, dh, dw, _ = geometry
    taps = kh * kw
    i, j = k // kw, k % kw
    h = o * sh - ph + i * dh + offset[o, p, g * 2 * taps + 2 * k]
    w = p * sw - pw + j * dw + offset[o, p, g * 2 * taps + 2 * k + 1]
    h_low, w_low, lh, lw, inside = _corners(h, w, height, width)
    top, bottom = h_low >= 0, h_low + 1 <= height - 1
    left, right = w_low >= 0, w_low + 1 <= width - 1
    a, b = max(h_low, 0), max(w_low, 0)
    a1, b1 = min(h_low + 1, height - 1), min(w_low + 1, width - 1)
    return mask[o, p, g * taps + k], inside, lh, lw, top, bottom, left, right, a, b, a1, b1


@njit(nogil=True, cache=True)
def _columns(x, offset, mask, geometry, cols):
    """cols (Ho * Wo, K, C) = the modulated bilinear samples of one image x (H, W, C)."""
    kh, kw, groups = geometry[0], geometry[1], geometry[8]
    height, width, channels = x.shape
    out_w = offset.shape[1]
    taps = kh * kw
    per_group = channels // groups
    for row in range(cols.shape[0]):
        o, p = row // out_w, row % out_w
        for k in range(taps):
            for g in range(groups):
                m, inside, lh, lw, top, bottom, left, right, a, b, a1, b1 = _sampling_point(
                    offset, mask, o, p, k, g, geometry, height, width)
                c0 = g * per_group
                if not inside:
                    for c in range(c0, c0 + per_group):
                        cols[row, k, c] = 0.0
                    continue
                hh, hw = 1 - lh, 1 - lw
                w1 = hh * hw * m if top and left else 0.0
                w2 = hh * lw * m if top and right else 0.0
                w3 = lh * hw * m if bottom and left else 0.0
                w4 = lh * lw * m if bottom and right else 0.0
                for c in range(c0, c0 + per_group):
                    cols[row, k, c] = w1 * x[a, b, c] + w2 * x[a, b1, c] + w3 * x[a1, b, c] + w4 * x[a1, b1, c]


@njit(nogil=True, cache=True)
def _columns_backward(x, offset, mask, geometry, dcols, dx, doffset, dmask):
    """dx (H, W, C), doffset, dmask of one image from the gradient dcols (Ho * Wo, K, C) of its columns."""
    kh, kw, groups = geometry[0], geometry[1], geometry[8]
    height, width, channels = x.shape
    out_w = offset.shape[1]
    taps = kh * kw
    per_group = channels // groups
    for row in range(dcols.shape[0]):
        o, p = row // out_w, row % out_w
        for k in range(taps):
            for g in range(groups):
                m, inside, lh, lw, top, bottom, left, right, a, b, a1, b1 = _sampling_point(
                    offset, mask, o, p, k, g, geometry, height, width)
                c0 = g * per_group
                if not inside:
                    doffset[o, p, g * 2 * taps + 2 * k] = 0.0
                    doffset[o, p, g * 2 * taps + 2 * k + 1] = 0.0
                    dmask[o, p, g * taps + k] = 0.0
                    continue
                hh, hw = 1 - lh, 1 - lw
                grad_h = grad_w = grad_m = 0.0
                for c in range(c0, c0 + per_group):
                    g_col = dcols[row, k, c]
                    v1 = x[a, b, c] if top and left else 0.0
                    v2 = x[a, b1, c] if top and right else 0.0
                    v3 = x[a1, b, c] if bottom and left else 0.0
                    v4 = x[a1, b1, c] if bottom and right else 0.0
                    grad_m += g_col * (hh * hw * v1 + hh * lw * v2 + lh * hw * v3 + lh * lw * v4)
                    grad_h += g_col * (-hw * v1 - lw * v2 + hw * v3 + lw * v4)
                    grad_w += g_col * (-hh * v1 + hh * v2 - lh * v3 + lh * v4)
                    scaled = g_col * m
                    if top and left:
                        dx[a, b, c] += hh * hw * scaled
                    if top and right:
                        dx[a, b1, c] += hh * lw * scaled
                    if bottom and left:
                        dx[a1, b, c] += lh * hw * scaled
                    if bottom and right:
                        dx[a1, b1, c] += lh * lw * scaled
                doffset[o, p, g * 2 * taps + 2 * k] = grad_h * m
                doffset[o, p, g * 2 * taps + 2 * k + 1] = grad_w * m
                dmask[o, p, g * taps + k] = grad_m


class Geometry:
    """Window, strides, padding (top, left), dilations and deformable groups of one DCN."""

    def __init__(self, kernel, strides, pads, dilations, deformable_groups, groups):
        self.kernel, self.groups = tuple(kernel), groups
        self.numbers = (kernel[0], kernel[1], strides[0], strides[1], pads[0], pads[1], dilations[0], dilations[1],
                        deformable_groups)


def _inputs(dtype, *arrays):
    return [None if a is None else readonly_contiguous(load(a, dtype)) for a in arrays]


def _mask_or_ones(mask, offset, dtype):
    if mask is not None:
        return readonly_contiguous(load(mask, dtype))
    return readonly_contiguous(np.ones(offset.shape[:-1] + (offset.shape[-1] // 2,), dtype))


def _group_weights(w, dtype, groups):
    """Per group: (Co/g, K * C/g) weight matrices."""
    values = np.ascontiguousarray(load(w, dtype))
    per = values.shape[0] // groups
    return [values[g * per:(g + 1) * per].reshape(per, -1) for g in range(groups)]


def _group_columns(cols, groups):
    """Per group: the (rows, K * C/g) column matrix of that group's channels."""
    rows, taps, channels = cols.shape
    per = channels // groups
    if groups == 1:
        return [cols.reshape(rows, -1)]
    return [np.ascontiguousarray(cols[:, :, g * per:(g + 1) * per]).reshape(rows, -1) for g in range(groups)]


def dcn_forward(x, offset, mask, w, bias, y, geometry: Geometry):
    """y = the modulated deformable convolution of x (mask None: all ones; bias None: none)."""
    if y.size == 0:
        return
    dtype = compute_dtype(x.dtype)
    xs, offsets = _inputs(dtype, x, offset)
    masks = _mask_or_ones(mask, offsets, dtype)
    weights = _group_weights(w, dtype, geometry.groups)
    shift = None if bias is None else load(bias, dtype)
    batch, out_h, out_w, out_c = y.shape
    taps = geometry.kernel[0] * geometry.kernel[1]
    per_out = out_c // geometry.groups

    def run(n):
        cols = np.empty((out_h * out_w, taps, xs.shape[-1]), dtype)
        _columns(xs[n], offsets[n], masks[n], geometry.numbers, cols)
        result = np.empty((out_h * out_w, out_c), dtype)
        with blas_threads.single_threaded_blas():
            for g, (matrix, weight) in enumerate(zip(_group_columns(cols, geometry.groups), weights)):
                np.matmul(matrix, weight.T, out=result[:, g * per_out:(g + 1) * per_out])
        if shift is not None:
            result += shift
        store(result.reshape(out_h, out_w, out_c), y[n])

    map_parallel(run, range(batch))


def dcn_backward_data(x, offset, mask, w, dy, dx, doffset, dmask, geometry: Geometry):
    """dx, doffset and dmask (dmask may be None, and is when mask is) of the deformable convolution."""
    dtype = compute_dtype(x.dtype)
    batch, height, width, channels = x.shape
    out_h, out_w, out_c = dy.shape[1:]
    if not channels or not out_c:  # no channel carries a gradient: every derivative is 0
        for grad in (dx, doffset, dmask):
            if grad is not None and grad.size:
                store(np.zeros(grad.shape, dtype), grad)
        return
    xs, offsets, grads = _inputs(dtype, x, offset, dy)
    masks = _mask_or_ones(mask, offsets, dtype)
    weights = _group_weights(w, dtype, geometry.groups)
    taps = geometry.kernel[0] * geometry.kernel[1]
    per_out, per_in = out_c // geometry.groups, channels // geometry.groups

    def run(n):
        dcols = np.empty((out_h * out_w, taps, channels), dtype)
        rows = grads[n].reshape(-1, out_c)
        with blas_threads.single_threaded_blas():
            for g, weight in enumerate(weights):
                part = rows[:, g * per_out:(g + 1) * per_out] @ weight
                dcols[:, :, g * per_in:(g + 1) * per_in] = part.reshape(-1, taps, per_in)
        grad_x = np.zeros((height, width, channels), dtype)
        grad_offset = np.empty(offsets.shape[1:], dtype)
        grad_mask = np.empty(masks.shape[1:], dtype)
        _columns_backward(xs[n], offsets[n], masks[n], geometry.numbers, dcols, grad_x, grad_offset, grad_mask)
        store(grad_x, dx[n])
        store(grad_offset, doffset[n])
        if dmask is not None:
            store(grad_mask, dmask[n])

    if dx.size or doffset.size:
        map_parallel(run, range(batch))


def dcn_backward_weight(x, offset, mask, dy, dw, dbias, geometry: Geometry):
    """dw (and dbias when not None) of the deformable convolution."""
    dtype = compute_dtype(x.dtype)
    xs, offsets, grads = _inputs(dtype, x, offset, dy)
    masks = _mask_or_ones(mask, offsets, dtype)
    batch = x.shape[0]
    out_h, out_w, out_c = dy.shape[1:]
    taps = geometry.kernel[0] * geometry.kernel[1]
    per_out = out_c // geometry.groups

    def run(n):
        cols = np.empty((out_h * out_w, taps, xs.shape[-1]), dtype)
        _columns(xs[n], offsets[n], masks[n], geometry.numbers, cols)
        rows = grads[n].reshape(-1, out_c)
        with blas_threads.single_threaded_blas():
            return [rows[:, g * per_out:(g + 1) * per_out].T @ matrix
                    for g, matrix in enumerate(_group_columns(cols, geometry.groups))]

    partials = map_parallel(run, range(batch)) if batch else []
    per_in = x.shape[-1] // geometry.groups
    total = np.zeros((out_c, taps * per_in), dtype)
    for part in partials:
        for g, block in enumerate(part):
            total[g * per_out:(g + 1) * per_out] += block
    store(total.reshape(dw.shape), dw)
    if dbias is not None:
        store(grads.reshape(-1, out_c).sum(axis=0, dtype=np.float64), dbias)
