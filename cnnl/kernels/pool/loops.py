"""The two nogil numba kernels of pooling: `window_kernel` (a weighted sum or a max over each output position's taps,
with or without the argmax) and `max_scatter` (the max gradient through the indices). Both take flat arrays with
element strides, so NHWC and NCHW memory share one compiled specialisation per dtype: channel-last memory runs the
channel loop innermost (vectorised), width-innermost memory runs along output rows."""
import numpy as np
from numba import njit

from ..fastmath import order_key

#: the reduction of `window_kernel`: a weighted sum, or a max with NaN winning or skipped
SUM, MAX_PROPAGATE, MAX_SKIP_NAN = 0, 1, 2


@njit(nogil=True, cache=True)
def window_kernel(src, ss, dst, ds, index, xs, tap0, w0, count0, first0, tap1, w1, count1, first1, shape, width,
                   channel_last, op, alpha, beta, pairs, lo, hi):
    """dst[n, i, j, c] = alpha * reduce over the taps (a, b) of (i, j) of src[n, a, b, c] + beta * dst, for the
    output rows lo..hi. op 0: sum of src * w0 * w1; op 1/2: max with NaN winning / skipped, index = a * width + b
    of the winner when index has elements (op 1, as PyTorch's CPU kernels: every NaN wins, so a window's last NaN
    gives the index). A window without taps gives 0 (sum) or -inf with the index of its first (padding) position.

    src, dst, index are 2-D C-contiguous views of the memory, ss/ds/xs their (N, H, W, C) strides in rows.
    `channel_last`: rows of channel vectors; the work rows are (n, i). Otherwise
    rows along the width (W innermost, as NCHW); the work rows are (n, c, i).
    (Indexing a 2-D view by a loop counter lets the channel loops vectorise.) `pairs`: both axes' windows are 2
    inputs at stride 2 (`TapAxis.is_pairs`), which the width-innermost max with indices reads without the tables."""
    batch, rows, cols, channels = shape
    with_index = index.size > 0
    scaled = alpha != 1.0 or beta != 0.0
    nothing = w0[0, 0] - w0[0, 0]  # 0 in the compute dtype (the weights are finite)
    if channel_last:
        acc = np.empty(channels, src.dtype)
        arg = np.empty(channels, np.int64)
        for u in range(lo, hi):
            n = u // rows
            i = u - n * rows
            k0 = count0[i]
            for j in range(cols):
                k1 = count1[j]
                out = n * ds[0] + i * ds[1] + j * ds[2]
                if k0 == 0 or k1 == 0:
                    for c in range(channels):
                        acc[c] = 0.0 if op == SUM else -np.inf
                    if with_index:
                        where = n * xs[0] + i * xs[1] + j * xs[2]
                        for c in range(channels):
                            index[where, c] = first0[i] * width + first1[j]
                elif op == SUM:
                    if k0 == 1 and k1 == 1 and not scaled:  # one tap (gradients of non-overlapping windows)
                        w = w0[0, i] * w1[0, j]
                        at = n * ss[0] + tap0[0, i] * ss[1] + tap1[0, j] * ss[2]
                        for c in range(channels):
                            dst[out, c] = src[at, c] * w
                        continue
                    for c in range(channels):
                        acc[c] = nothing
                    for ka in range(k0):
                        a = tap0[ka, i]
                        wa = w0[ka, i]
                        for kb in range(k1):
                            w = wa * w1[kb, j]
                            at = n * ss[0] + a * ss[1] + tap1[kb, j] * ss[2]
                            for c in range(channels):
                                acc[c] += src[at, c] * w
                else:  # the first tap initialises; the max rules keep it unless a later tap wins
                    at = n * ss[0] + tap0[0, i] * ss[1] + tap1[0, j] * ss[2]
                    for c in range(channels):
                        acc[c] = src[at, c]
                    if with_index:
                        f = tap0[0, i] * width + tap1[0, j]
                        for c in range(channels):
                            arg[c] = f
                    for ka in range(k0):
                        a = tap0[ka, i]
                        for kb in range(k1):
                            if ka == 0 and kb == 0:
                                continue
                            b = tap1[kb, j]
                            at = n * ss[0] + a * ss[1] + b * ss[2]
                            if with_index:
                                position = a * width + b
                                for c in range(channels):
                                    v = src[at, c]
                                    best = acc[c]
                                    if op == MAX_PROPAGATE:
                                        win = (v > best) | (v != v)
                                    else:
                                        win = (v > best) | ((best != best) & (v == v))
                                    acc[c] = v if win else best
                                    arg[c] = position if win else arg[c]
                            elif op == MAX_PROPAGATE:
                                for c in range(channels):
                                    v = src[at, c]
                                    best = acc[c]
                                    acc[c] = v if (v > best) | (v != v) else best
                            else:
                                for c in range(channels):
                                    v = src[at, c]
                                    best = acc[c]
                                    acc[c] = v if (v > best) | ((best != best) & (v == v)) else best
                    if with_index:
                        where = n * xs[0] + i * xs[1] + j * xs[2]
                        for c in range(channels):
                            index[where, c] = arg[c]
                if not scaled:
                    for c in range(channels):
                        dst[out, c] = acc[c]
                elif beta != 0.0:
                    for c in range(channels):
                        dst[out, c] = acc[c] * alpha + dst[out, c] * beta
                else:
                    for c in range(channels):
                        dst[out, c] = acc[c] * alpha
        return
    # width-innermost memory (NCHW): rows of the input / output planes, one channel at a time, branch-free along j
    depth1 = tap1.shape[0]
    acc = np.empty(cols, src.dtype)
    arg = np.empty(cols, np.int64)
    start = -np.inf if op == MAX_PROPAGATE else np.nan
    if with_index and not scaled and pairs:
        _max_pairs_with_index(src, ss, dst, ds, index, xs, shape, width, op, start, lo, hi)
        return
    if with_index and not scaled:
        _max_rows_with_index(src, ss, dst, ds, index, xs, tap0, count0, first0, tap1, count1, first1, shape, width,
                             op, start, lo, hi)
        return
    for u in range(lo, hi):
        i = u % rows
        nc = u // rows
        c = nc % channels
        n = nc // channels
        k0 = count0[i]
        if op == SUM:
            for j in range(cols):
                acc[j] = nothing
        else:
            for j in range(cols):
                acc[j] = start if k0 > 0 and count1[j] > 0 else -np.inf
            if with_index:
                for j in range(cols):
                    arg[j] = (tap0[0, i] * width + tap1[0, j] if k0 > 0 and count1[j] > 0
                              else first0[i] * width + first1[j])
        for ka in range(k0):
            a = tap0[ka, i]
            r = n * ss[0] + a * ss[1] + c * ss[3]
            for kb in range(depth1):
                if op == SUM:
                    wa = w0[ka, i]
                    for j in range(cols):
                        b = tap1[kb, j]
                        v = src[r, max(b, 0)] * (wa * w1[kb, j])
                        acc[j] += v if b >= 0 else nothing
                elif with_index:
                    for j in range(cols):
                        b = tap1[kb, j]
                        v = src[r, max(b, 0)]
                        best = acc[j]
                        if op == MAX_PROPAGATE:
                            win = (b >= 0) & ((v > best) | (v != v))
                        else:
                            win = (b >= 0) & ((v > best) | ((best != best) & (v == v)))
                        acc[j] = v if win else best
                        arg[j] = a * width + b if win else arg[j]
                elif op == MAX_PROPAGATE:
                    for j in range(cols):
                        b = tap1[kb, j]
                        v = src[r, max(b, 0)]
                        best = acc[j]
                        acc[j] = v if (b >= 0) & ((v > best) | (v != v)) else best
                else:
                    for j in range(cols):
                        b = tap1[kb, j]
                        v = src[r, max(b, 0)]
                        best = acc[j]
                        acc[j] = v if (b >= 0) & ((v > best) | ((best != best) & (v == v))) else best
        out = n * ds[0] + i * ds[1] + c * ds[3]
        if not scaled:
            for j in range(cols):
                dst[out, j] = acc[j]
        elif beta != 0.0:
            for j in range(cols):
                dst[out, j] = acc[j] * alpha + dst[out, j] * beta
        else:
            for j in range(cols):
                dst[out, j] = acc[j] * alpha
        if with_index:
            where = n * xs[0] + i * xs[1] + c * xs[3]
            for j in range(cols):
                index[where, j] = arg[j]


@njit(nogil=True, cache=True, inline="always")
def _plane_row(u, rows, channels):
    """(n, c, i) of work row u of width-innermost memory: output row i of channel c of sample n."""
    nc = u // rows
    return nc // channels, nc % channels, u % rows


@njit(nogil=True, cache=True, inline="always")
def _max_start(src, op, start):
    """(NaN wins, `start` in src's dtype, its order key, the key of NaN) for the max kernels with indices (the
    running max keeps src's one type)."""
    nan_highest = op == MAX_PROPAGATE
    cell = np.empty(2, src.dtype)
    cell[0] = start
    cell[1] = np.nan
    return nan_highest, cell[0], order_key(cell[0], nan_highest), order_key(cell[1], True)


@njit(nogil=True, cache=True)
def _max_rows_with_index(src, ss, dst, ds, index, xs, tap0, count0, first0, tap1, count1, first1, shape, width, op,
                         start, lo, hi):
    """The width-innermost max with indices of `window_kernel` (alpha 1, beta 0), one output element at a time
    with its running maximum in registers (the same taps in the same order, so the same winner)."""
    rows, cols, channels = shape[1], shape[2], shape[3]
    nan_highest, first, first_key, nan_key = _max_start(src, op, start)
    for u in range(lo, hi):
        n, c, i = _plane_row(u, rows, channels)
        k0 = count0[i]
        out = n * ds[0] + i * ds[1] + c * ds[3]
        where = n * xs[0] + i * xs[1] + c * xs[3]
        for j in range(cols):
            k1 = count1[j]
            if k0 == 0 or k1 == 0:
                dst[out, j] = -np.inf
                index[where, j] = first0[i] * width + first1[j]
                continue
            best, key, arg = first, first_key, tap0[0, i] * width + tap1[0, j]
            for ka in range(k0):
                a = tap0[ka, i]
                r = n * ss[0] + a * ss[1] + c * ss[3]
                for kb in range(k1):
                    b = tap1[kb, j]
                    best, key, arg = _max_tap(best, key, arg, src[r, b], a * width + b, nan_highest, nan_key)
            dst[out, j] = best
            index[where, j] = arg


@njit(nogil=True, cache=True)
def _max_pairs_with_index(src, ss, dst, ds, index, xs, shape, width, op, start, lo, hi):
    """`_max_rows_with_index` for 2x2 windows at stride 2 inside the plane (max_pool2d(x, 2)): the same four taps in
    the same order from `start`, so the same winner, read at computed positions instead of through the tap tables."""
    rows, cols, channels = shape[1], shape[2], shape[3]
    nan_highest, first, first_key, nan_key = _max_start(src, op, start)
    for u in range(lo, hi):
        n, c, i = _plane_row(u, rows, channels)
        upper = n * ss[0] + 2 * i * ss[1] + c * ss[3]
        lower = upper + ss[1]
        out = n * ds[0] + i * ds[1] + c * ds[3]
        where = n * xs[0] + i * xs[1] + c * xs[3]
        top = 2 * i * width
        for j in range(cols):
            b = 2 * j
            best, key, arg = first, first_key, top + b
            for tap in range(4):
                column = b + (tap & 1)
                best, key, arg = _max_tap(best, key, arg, src[upper if tap < 2 else lower, column],
                                          top + (tap >> 1) * width + column, nan_highest, nan_key)
            dst[out, j] = best
            index[where, j] = arg


@njit(nogil=True, cache=True, inline="always")
def _max_tap(best, key, arg, v, position, nan_highest, nan_key):
    """(best, its key, arg) after the tap `v` at `position`: v wins when its order key (`fastmath.order_key`) is
    above the best's, or when it is a NaN and NaN wins (`nan_key`): the max rules of `window_kernel` (op 1: every
    NaN wins, so the last NaN gives the index; 2: NaN skipped), the first tap winning ties between numbers."""
    k = order_key(v, nan_highest)
    win = (k > key) | (nan_highest & (k == nan_key))
    return (v if win else best), (k if win else key), (position if win else arg)


@njit(nogil=True, cache=True)
def max_scatter(dy, ys, index, xs, dx, ds, shape, plane, chunk, dense, alpha, beta, lo, hi):
    """dx[n, p, c] = beta * dx + alpha * (dy of every output whose index names position p = h * W + w), for the
    units lo..hi of (sample, block of `chunk` channels); ds = (N, position, C) element strides of dx (its H stride
    is W times its W stride), `dense`: each unit's part of dx is one contiguous run. Returns the number of indices
    outside the plane (skipped)."""
    batch, rows, cols, channels = shape
    blocks = (channels + chunk - 1) // chunk
    bad = 0
    for u in range(lo, hi):
        n = u // blocks
        c0 = (u - n * blocks) * chunk
        c1 = min(channels, c0 + chunk)
        if dense:
            start = n * ds[0] + c0 * ds[2]
            region = dx[start:start + plane * (c1 - c0)]
            if beta != 0.0:
                for k in range(region.size):
                    region[k] *= beta
            else:
                for k in range(region.size):
                    region[k] = 0
        else:
            for p in range(plane):
                base = n * ds[0] + p * ds[1]
                for c in range(c0, c1):
                    dx[base + c * ds[2]] = dx[base + c * ds[2]] * beta if beta != 0.0 else 0
        if c1 - c0 == 1 and alpha == 1.0:  # one channel (NCHW memory): its plane's offsets hoisted
            c = c0
            grad_base, where_base = n * ys[0] + c * ys[3], n * xs[0] + c * xs[3]
            target_base, step = n * ds[0] + c * ds[2], ds[1]
            for i in range(rows):
                for j in range(cols):
                    k = np.int64(index[where_base + i * xs[1] + j * xs[2]])
                    if k < 0 or k >= plane:
                        bad += 1
                    else:
                        dx[target_base + k * step] += dy[grad_base + i * ys[1] + j * ys[2]]
            continue
        for i in range(rows):
            for j in range(cols):
                grad = n * ys[0] + i * ys[1] + j * ys[2]
                where = n * xs[0] + i * xs[1] + j * xs[2]
                for c in range(c0, c1):
                    k = np.int64(index[where + c * xs[3]])
                    if k < 0 or k >= plane:
                        bad += 1
                        continue
                    g = dy[grad + c * ys[3]]
                    target = n * ds[0] + k * ds[1] + c * ds[2]
                    dx[target] += g * alpha if alpha != 1.0 else g
    return bad
