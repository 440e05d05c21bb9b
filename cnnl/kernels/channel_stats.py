"""Single-pass-per-phase numba kernels of batch norm: per-channel sums and the elementwise maps over (P, C, Q) views.

A tensor normalised per channel along one axis is seen as (P, C, Q): P the product of the axes before the channel
axis, Q of those after it (NCHW: (N, C, H*W); NHWC: (N*H*W, C, 1)). Sums accumulate in float64 in four
interleaved partial sums per channel row (so the adds pipeline); the elementwise maps compute in the arrays'
dtype, in the same operation order as the numpy expressions they replace, so results round as before. Each
kernel takes a channel range, so blocks of channels run on the kernel thread pool (`nogil`).
"""
import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def _row_sum(x, p, c, count):
    a0 = a1 = a2 = a3 = 0.0
    q = 0
    while q + 4 <= count:
        a0 += x[p, c, q]
        a1 += x[p, c, q + 1]
        a2 += x[p, c, q + 2]
        a3 += x[p, c, q + 3]
        q += 4
    while q < count:
        a0 += x[p, c, q]
        q += 1
    return (a0 + a1) + (a2 + a3)


@njit(nogil=True, cache=True)
def channel_moments(x, c0, c1, mean, mean_cast, variance_sum):
    """For channels c0..c1 of x (P, C, Q): mean[c] (float64) = the channel's mean, mean_cast[c] = it rounded to
    x's dtype, variance_sum[c] (float64) = sum of (x - mean_cast[c]) ** 2, the difference taken in x's dtype."""
    rows, _, inner = x.shape
    count = rows * inner
    if inner == 1:  # channel-last memory: sweep the rows once per pass, a running sum per channel
        _channel_last_moments(x[:, :, 0], c0, c1, mean, mean_cast, variance_sum)
        return
    for c in range(c0, c1):
        total = 0.0
        for p in range(rows):
            total += _row_sum(x, p, c, inner)
        mean[c] = total / count
        mean_cast[c] = mean[c]
        m = mean_cast[c]
        s0 = s1 = 0.0
        for p in range(rows):
            q = 0
            while q + 2 <= inner:
                d0 = np.float64(x[p, c, q] - m)
                d1 = np.float64(x[p, c, q + 1] - m)
                s0 += d0 * d0
                s1 += d1 * d1
                q += 2
            while q < inner:
                d0 = np.float64(x[p, c, q] - m)
                s0 += d0 * d0
                q += 1
        variance_sum[c] = s0 + s1


@njit(nogil=True, cache=True)
def _channel_last_moments(x, c0, c1, mean, mean_cast, variance_sum):
    rows = x.shape[0]
    total = np.zeros(c1 - c0)
    for p in range(rows):
        for c in range(c0, c1):
            total[c - c0] += x[p, c]
    for c in range(c0, c1):
        mean[c] = total[c - c0] / rows
        mean_cast[c] = mean[c]
        total[c - c0] = 0.0
    for p in range(rows):
        for c in range(c0, c1):
            d = np.float64(x[p, c] - mean_cast[c])
            total[c - c0] += d * d
    for c in range(c0, c1):
        variance_sum[c] = total[c - c0]


@njit(nogil=True, cache=True)
def channel_affine(x, mean, scale, shift, y, c0, c1):
    """y[p, c, q] = (x[p, c, q] - mean[c]) * scale[c] + shift[c] for channels c0..c1 (in the arrays' dtype)."""
    rows, _, inner = x.shape
    for p in range(rows):
        for c in range(c0, c1):
            m, s, b = mean[c], scale[c], shift[c]
            for q in range(inner):
                y[p, c, q] = (x[p, c, q] - m) * s + b


@njit(nogil=True, cache=True)
def channel_grad_sums(x, dy, mean, invstd, c0, c1, grad_bias, grad_weight):
    """For channels c0..c1: grad_bias[c] = sum of dy, grad_weight[c] = sum of dy * x_hat (float64), with x_hat =
    (x - mean[c]) * invstd[c] in x's dtype."""
    rows, _, inner = x.shape
    if inner == 1:  # channel-last memory: sweep the rows once, running sums per channel
        for c in range(c0, c1):
            grad_bias[c] = 0.0
            grad_weight[c] = 0.0
        for p in range(rows):
            for c in range(c0, c1):
                g = np.float64(dy[p, c, 0])
                grad_bias[c] += g
                grad_weight[c] += g * np.float64((x[p, c, 0] - mean[c]) * invstd[c])
        return
    for c in range(c0, c1):
        m, r = mean[c], invstd[c]
        b0 = b1 = w0 = w1 = 0.0
        for p in range(rows):
            q = 0
            while q + 2 <= inner:
                g0, g1 = np.float64(dy[p, c, q]), np.float64(dy[p, c, q + 1])
                b0 += g0
                b1 += g1
                w0 += g0 * np.float64((x[p, c, q] - m) * r)
                w1 += g1 * np.float64((x[p, c, q + 1] - m) * r)
                q += 2
            while q < inner:
                g0 = np.float64(dy[p, c, q])
                b0 += g0
                w0 += g0 * np.float64((x[p, c, q] - m) * r)
                q += 1
        grad_bias[c] = b0 + b1
        grad_weight[c] = w0 + w1


@njit(nogil=True, cache=True)
def channel_input_grad(x, dy, mean, invstd, scale, count, grad_bias, grad_weight, dx, c0, c1):
    """dx = scale[c] * (dy * count - grad_bias[c] - x_hat * grad_weight[c]) for channels c0..c1, x_hat = (x -
    mean[c]) * invstd[c]; every operand and operation in the arrays' dtype (`count` too)."""
    rows, _, inner = x.shape
    for p in range(rows):
        for c in range(c0, c1):
            m, r, s, gb, gw = mean[c], invstd[c], scale[c], grad_bias[c], grad_weight[c]
            for q in range(inner):
                dx[p, c, q] = s * (dy[p, c, q] * count - gb - ((x[p, c, q] - m) * r) * gw)
