"""Numba kernels of batch norm: per-channel sums and the elementwise maps over (P, C, Q) views.

A tensor normalised per channel along one axis is seen as (P, C, Q): P the product of the axes before the channel
axis, Q of those after it (NCHW: (N, C, H*W); NHWC: (N*H*W, C, 1)). Every kernel works on the block of rows
p0..p1 and channels c0..c1, so the caller can share out channels (Q > 1: each block streams whole channel planes)
or rows (channel-last memory, Q = 1: each block streams whole rows of channels) between threads. The sums write
one float64 partial per channel of their block (the caller adds the blocks' partials); within a block they
accumulate in float64, along contiguous runs in vector lanes of partial sums (`mlusim.numerics.accumulate.acc_add`). The
elementwise maps compute in the arrays' dtype, in the operation order of the numpy expressions they replace, so
that they round as those did.
"""
import numpy as np
from numba import njit

from mlusim.numerics.accumulate import acc_add


@njit(nogil=True, cache=True)
def channel_sums(x, p0, p1, c0, c1, out):
    """out[c] = sum of x[p0:p1, c, :] in float64, for c in c0..c1."""
    inner = x.shape[2]
    if inner == 1:  # channel-last memory: one sweep of the rows, a running sum per channel
        acc = np.zeros(c1 - c0)
        for p in range(p0, p1):
            row = x[p, c0:c1, 0]
            for c in range(c1 - c0):
                acc[c] += row[c]
        out[c0:c1] = acc
        return
    for c in range(c0, c1):
        total = 0.0
        for p in range(p0, p1):
            plane = x[p, c]
            for q in range(inner):
                total = acc_add(total, np.float64(plane[q]))
        out[c] = total


@njit(nogil=True, cache=True)
def channel_centred_squares(x, mean, p0, p1, c0, c1, out):
    """out[c] = sum of float64(x - mean[c]) ** 2 over x[p0:p1, c, :], the difference taken in x's dtype."""
    inner = x.shape[2]
    if inner == 1:
        acc = np.zeros(c1 - c0)
        m = mean[c0:c1]
        for p in range(p0, p1):
            row = x[p, c0:c1, 0]
            for c in range(c1 - c0):
                d = np.float64(row[c] - m[c])
                acc[c] += d * d
        out[c0:c1] = acc
        return
    for c in range(c0, c1):
        m = mean[c]
        total = 0.0
        for p in range(p0, p1):
            plane = x[p, c]
            for q in range(inner):
                d = np.float64(plane[q] - m)
                total = acc_add(total, d * d)
        out[c] = total


@njit(nogil=True, cache=True)
def channel_grad_sums(x, dy, mean, invstd, p0, p1, c0, c1, grad_bias, grad_weight):
    """grad_bias[c] = sum of dy, grad_weight[c] = sum of dy * x_hat (float64) over rows p0..p1, for c in c0..c1,
    with x_hat = (x - mean[c]) * invstd[c] in x's dtype."""
    inner = x.shape[2]
    if inner == 1:
        bias_acc, weight_acc = np.zeros(c1 - c0), np.zeros(c1 - c0)
        m, r = mean[c0:c1], invstd[c0:c1]
        for p in range(p0, p1):
            row, grad = x[p, c0:c1, 0], dy[p, c0:c1, 0]
            for c in range(c1 - c0):
                g = np.float64(grad[c])
                bias_acc[c] += g
                weight_acc[c] += g * np.float64((row[c] - m[c]) * r[c])
        grad_bias[c0:c1] = bias_acc
        grad_weight[c0:c1] = weight_acc
        return
    for c in range(c0, c1):
        m, r = mean[c], invstd[c]
        bias_total = weight_total = 0.0
        for p in range(p0, p1):
            plane, grad = x[p, c], dy[p, c]
            for q in range(inner):
                g = np.float64(grad[q])
                bias_total = acc_add(bias_total, g)
                weight_total = acc_add(weight_total, g * np.float64((plane[q] - m) * r))
        grad_bias[c] = bias_total
        grad_weight[c] = weight_total


@njit(nogil=True, cache=True)
def channel_affine(x, mean, scale, shift, y, p0, p1, c0, c1):
    """y[p, c, q] = (x[p, c, q] - mean[c]) * scale[c] + shift[c] over the block (in the arrays' dtype)."""
    inner = x.shape[2]
    if inner == 1:  # channel-last memory: vectorise along the channels
        m, s, b = mean[c0:c1], scale[c0:c1], shift[c0:c1]
        for p in range(p0, p1):
            row, out = x[p, c0:c1, 0], y[p, c0:c1, 0]
            for c in range(c1 - c0):
                out[c] = (row[c] - m[c]) * s[c] + b[c]
        return
    for p in range(p0, p1):
        for c in range(c0, c1):
            m, s, b = mean[c], scale[c], shift[c]
            for q in range(inner):
                y[p, c, q] = (x[p, c, q] - m) * s + b


@njit(nogil=True, cache=True)
def channel_input_grad(x, dy, mean, invstd, scale, count, grad_bias, grad_weight, dx, p0, p1, c0, c1):
    """dx = scale[c] * (dy * count - grad_bias[c] - x_hat * grad_weight[c]) over the block, x_hat = (x - mean[c]) *
    invstd[c]; every operand and operation in the arrays' dtype (`count` too)."""
    inner = x.shape[2]
    if inner == 1:  # channel-last memory: vectorise along the channels
        m, r, s = mean[c0:c1], invstd[c0:c1], scale[c0:c1]
        gb, gw = grad_bias[c0:c1], grad_weight[c0:c1]
        for p in range(p0, p1):
            row, grad, out = x[p, c0:c1, 0], dy[p, c0:c1, 0], dx[p, c0:c1, 0]
            for c in range(c1 - c0):
                out[c] = s[c] * (grad[c] * count - gb[c] - ((row[c] - m[c]) * r[c]) * gw[c])
        return
    for p in range(p0, p1):
        for c in range(c0, c1):
            m, r, s, gb, gw = mean[c], invstd[c], scale[c], grad_bias[c], grad_weight[c]
            for q in range(inner):
                dx[p, c, q] = s * (dy[p, c, q] * count - gb - ((x[p, c, q] - m) * r) * gw)
