"""Pooling on channel-last arrays x (N, H, W, C): max (with input-plane indices), average (padding counted or not),
their backward passes, and adaptive average and max pooling (`cnnlPooling*`, `cnnlAdaptivePooling*`).

Windows: `kernel`, `strides`, `dilations` per spatial axis and (before, after) `pads`. With ceil mode an extra
window is kept when it starts inside the input or its leading padding (PyTorch's rule); positions past the
padding count as padding. Max indices are flat positions in the unpadded input plane (h * W + w), the first
maximum (in window order: rows, then columns) winning; NaN wins when `propagate_nan`, else it is skipped (a window
of NaNs gives NaN). Padding never wins. The average divides by the window positions inside the padded input
(count_include_pad) or inside the input. Computation in float32 (float64 for double), one rounding into 16-bit
storage.

Every pooling is *separable*: an output position (i, j) reads the input positions (a, b) with a in the tap list
of row i and b in the tap list of column j, weighted by w0[a-tap] * w1[b-tap]. One tap table per axis
(`_Axis`: taps in window order, padding left out, and their weights) describes windows of any geometry, adaptive
bins, and - transposed - the gradients of both averages (each input position gathers the outputs whose windows
hold it). So two nogil numba kernels do all the work: `_window_kernel` (weighted sum or max, with or without
indices) and `_max_scatter` (the max gradient through indices). Both take flat arrays with element strides, so
NHWC and NCHW (any layout whose memory is a permutation of the axes) share one compiled specialisation per dtype;
channel-last memory runs the channel loop innermost (vectorised), other layouts run along output rows. The work
is cut into blocks of output rows (planes for the scatter) shared between the cores by `map_parallel`.
"""
import functools

import numpy as np
from numba import njit

from .cast import cast
from .dtypes import compute_dtype
from .fastmath import order_key
from .parallel import even_ranges, map_parallel, thread_count

#: pooling problems of at most this many elements run in one block on the calling thread. Each block costs a
#: thread the GIL, and on a 2-core VM a thread that finds it taken waits ~50 us to be woken: max pooling 2x2 of
#: (32, 16, 16, 32) and (32, 16, 32, 32) float32 took 0.47 / 0.53 ms on the pool against 0.32 / 0.43 ms inline
#: (2^20 elements: 0.73 pool, 0.78 inline)
POOL_INLINE_ELEMENTS = 1 << 19
_SUM, _MAX_PROPAGATE, _MAX_SKIP_NAN = 0, 1, 2


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

    def positions(self):
        """(kernel index tuple, slices of the padded input it meets for every output position)."""
        for position in np.ndindex(*self.kernel):
            yield position, tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in
                                  zip(position, self.dilations, self.strides, self.out_spatial))

    def axes(self, include_padding=None, transposed=False):
        """The two `_Axis` tap tables (of the gradient when `transposed`); weights 1 / (window positions counted)
        when averaging (`include_padding` True or False)."""
        return [_window_axis(n, o, k, s, d, b, a, include_padding, transposed) for n, (b, a), o, s, d, k in
                zip(self.in_spatial, self.pads, self.out_spatial, self.strides, self.dilations, self.kernel)]


@functools.lru_cache(maxsize=256)
def _window_axis(n, o, k, s, d, b, a, include_padding, transposed):
    taps = np.arange(o)[:, None] * s - b + np.arange(k)[None, :] * d
    valid = (taps >= 0) & (taps < n)
    if include_padding is None:
        counted = None
    elif include_padding:
        counted = ((taps >= -b) & (taps < n + a)).sum(axis=1)
    else:
        counted = valid.sum(axis=1)
    axis = _Axis.from_taps(taps, valid, counted)
    return axis.transposed(n) if transposed else axis


@functools.lru_cache(maxsize=256)
def _adaptive_axis(size, extent, transposed):
    axis = _Axis.adaptive(size, extent)
    return axis.transposed(size) if transposed else axis


class _Axis:
    """Tap table of one axis: output i reads input coordinates taps[:count[i], i] (ascending) with weights
    weights[:, i]; `first[i]` is the coordinate of its first window position (for the index of an empty window)."""

    def __init__(self, taps, weights, count, first, size):
        self.taps, self.weights, self.count, self.first, self.size = taps, weights, count, first, size
        self._typed = {}
        self._pairs = None

    def is_pairs(self):
        """True when output i reads exactly inputs 2i and 2i + 1 (a window of 2 at stride 2, all inside)."""
        if self._pairs is None:
            doubled = 2 * np.arange(self.count.size)
            self._pairs = bool(self.taps.shape[0] == 2 and (self.count == 2).all() and (self.taps[0] == doubled).all()
                               and (self.taps[1] == doubled + 1).all())
        return self._pairs

    def weights_as(self, kind):
        """The weights in dtype `kind` (kept: the tables are cached per geometry)."""
        typed = self._typed.get(kind)
        if typed is None:
            typed = self._typed[kind] = self.weights.astype(kind)
        return typed

    @classmethod
    def from_taps(cls, taps, valid, counted):
        """From (outputs, window) coordinates, the valid ones marked; weights 1 / counted (1 without)."""
        outputs, window = taps.shape
        count = valid.sum(axis=1)
        order = np.argsort(~valid, axis=1, kind="stable")  # the valid taps first, in window order
        table = np.where(np.take_along_axis(valid, order, axis=1), np.take_along_axis(taps, order, axis=1), -1)
        width = max(1, int(count.max(initial=0)))
        table = np.ascontiguousarray(table[:, :width].T, np.int64)
        weight = np.ones(outputs) if counted is None else 1.0 / np.maximum(counted, 1)
        weights = np.ascontiguousarray(np.broadcast_to(weight, (width, outputs)))
        return cls(table, weights, count.astype(np.int64), taps[:, 0].astype(np.int64), None)

    @classmethod
    def from_weights(cls, taps, weights):
        """From (outputs, k) input coordinates (each in range; repeats allowed, their weights add up) and their
        weights: the table of an interpolation."""
        outputs, width = taps.shape
        return cls(np.ascontiguousarray(taps.T, np.int64), np.ascontiguousarray(weights.T, np.float64),
                   np.full(outputs, width, np.int64), taps[:, 0].astype(np.int64), None)

    @classmethod
    def adaptive(cls, size, extent):
        """Adaptive bins: output i covers [floor(i * size / extent), ceil((i + 1) * size / extent))."""
        i = np.arange(extent)
        start, stop = (i * size) // extent, -((-(i + 1) * size) // extent)
        width = int((stop - start).max())
        taps = start[:, None] + np.arange(width)[None, :]
        return cls.from_taps(taps, taps < stop[:, None], stop - start)

    def transposed(self, size):
        """The table of the gradient: input coordinate a gathers every output i whose taps hold a, weighted by
        output i's weight."""
        width, outputs = self.taps.shape
        k = np.arange(width)[:, None]
        held = k < self.count[None, :]
        coordinate = self.taps[held]
        output = np.broadcast_to(np.arange(outputs), self.taps.shape)[held]
        weight = self.weights[held]
        order = np.lexsort((output, coordinate))
        coordinate, output, weight = coordinate[order], output[order], weight[order]
        count = np.bincount(coordinate, minlength=size).astype(np.int64)
        start = np.concatenate(([0], np.cumsum(count)[:-1]))
        slot = np.arange(coordinate.size) - start[coordinate]
        depth = max(1, int(count.max(initial=0)))
        taps = np.full((depth, size), -1, np.int64)
        weights = np.zeros((depth, size))
        taps[slot, coordinate] = output
        weights[slot, coordinate] = weight
        return _Axis(taps, weights, count, np.zeros(size, np.int64), outputs)


# ---- kernels -----------------------------------------------------------------------------------------------------

@njit(nogil=True, cache=True)
def _window_kernel(src, ss, dst, ds, index, xs, tap0, w0, count0, first0, tap1, w1, count1, first1, shape, width,
                   channel_last, op, alpha, beta, pairs, lo, hi):
    """dst[n, i, j, c] = alpha * reduce over the taps (a, b) of (i, j) of src[n, a, b, c] + beta * dst, for the
    output rows lo..hi. op 0: sum of src * w0 * w1; op 1/2: max with NaN winning / skipped, index = a * width + b
    of the winner when index has elements (op 1, as PyTorch's CPU kernels: every NaN wins, so a window's last NaN
    gives the index). A window without taps gives 0 (sum) or -inf with the index of its first (padding) position.

    src, dst, index are 2-D C-contiguous views of the memory, ss/ds/xs their (N, H, W, C) strides in rows.
    `channel_last`: rows of channel vectors; the work rows are (n, i). Otherwise
    rows along the width (W innermost, as NCHW); the work rows are (n, c, i).
    (Indexing a 2-D view by a loop counter lets the channel loops vectorise.) `pairs`: both axes' windows are 2
    inputs at stride 2 (`_Axis.is_pairs`), which the width-innermost max with indices reads without the tables."""
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
                        acc[c] = 0.0 if op == _SUM else -np.inf
                    if with_index:
                        where = n * xs[0] + i * xs[1] + j * xs[2]
                        for c in range(channels):
                            index[where, c] = first0[i] * width + first1[j]
                elif op == _SUM:
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
                                    if op == _MAX_PROPAGATE:
                                        win = (v > best) | (v != v)
                                    else:
                                        win = (v > best) | ((best != best) & (v == v))
                                    acc[c] = v if win else best
                                    arg[c] = position if win else arg[c]
                            elif op == _MAX_PROPAGATE:
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
    start = -np.inf if op == _MAX_PROPAGATE else np.nan
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
        if op == _SUM:
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
                if op == _SUM:
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
                        if op == _MAX_PROPAGATE:
                            win = (b >= 0) & ((v > best) | (v != v))
                        else:
                            win = (b >= 0) & ((v > best) | ((best != best) & (v == v)))
                        acc[j] = v if win else best
                        arg[j] = a * width + b if win else arg[j]
                elif op == _MAX_PROPAGATE:
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
    nan_highest = op == _MAX_PROPAGATE
    cell = np.empty(2, src.dtype)
    cell[0] = start
    cell[1] = np.nan
    return nan_highest, cell[0], order_key(cell[0], nan_highest), order_key(cell[1], True)


@njit(nogil=True, cache=True)
def _max_rows_with_index(src, ss, dst, ds, index, xs, tap0, count0, first0, tap1, count1, first1, shape, width, op,
                         start, lo, hi):
    """The width-innermost max with indices of `_window_kernel` (alpha 1, beta 0), one output element at a time
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
    above the best's, or when it is a NaN and NaN wins (`nan_key`): the max rules of `_window_kernel` (op 1: every
    NaN wins, so the last NaN gives the index; 2: NaN skipped), the first tap winning ties between numbers."""
    k = order_key(v, nan_highest)
    win = (k > key) | (nan_highest & (k == nan_key))
    return (v if win else best), (k if win else key), (position if win else arg)


@njit(nogil=True, cache=True)
def _max_scatter(dy, ys, index, xs, dx, ds, shape, plane, chunk, dense, alpha, beta, lo, hi):
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


# ---- operand staging ---------------------------------------------------------------------------------------------

def _flat(view):
    """(1-D view of view's memory, element strides) when that memory is dense in some order of the axes, else
    None."""
    if view.size == 0:
        return None
    order = sorted(range(view.ndim), key=lambda axis: -view.strides[axis] if view.shape[axis] > 1 else 0)
    dense = view.transpose(order)
    if not dense.flags.c_contiguous:
        return None
    strides = tuple(s // view.itemsize if n > 1 else 0 for s, n in zip(view.strides, view.shape))
    return dense.reshape(-1), strides


def _source(view, dtype, avoid=(), force=False):
    """(read-only flat array in `dtype`, element strides) of an input view, copied when it overlaps `avoid`;
    `force`: a C-contiguous copy."""
    found = None if force else _flat(view)
    if found is None or any(np.may_share_memory(view, other) for other in avoid if other is not None):
        view = np.ascontiguousarray(view) if found is None else view.copy(order="K")
        found = _flat(view)
    flat, strides = found
    if flat.dtype != dtype:
        converted = np.empty(flat.shape, dtype)
        cast(flat, converted)
        flat = converted
    flat = flat.view()
    flat.flags.writeable = False
    return flat, strides


class _Target:
    """A writable flat array in `dtype` laid out as output view `view` (the view's own memory when it can be),
    holding the view's values when `read`; `finish()` stores it into the view. `force`: C-contiguous staging."""

    def __init__(self, view, dtype, read, force=False):
        self.view = view
        found = None if force else _flat(view)
        if found is not None and view.dtype == dtype:
            self.flat, self.strides = found
            self.staged = None
            return
        if found is None:
            staged = np.empty(view.shape, dtype)
            self.staged, self.strides = staged, tuple(s // staged.itemsize for s in staged.strides)
            self.flat = staged.reshape(-1)
            if read:
                cast(view, staged)
        else:
            memory, self.strides = found
            self.flat = np.empty(memory.shape, dtype)
            self.staged = memory
            if read:
                cast(memory, self.flat)

    def finish(self):
        if self.staged is None:
            return
        if self.staged.ndim == 1:
            cast(self.flat, self.staged)
        else:
            cast(self.staged, self.view)


def _blocks(units, elements):
    """(lo, hi) unit ranges: one when the problem is small, else a few per thread."""
    if elements <= POOL_INLINE_ELEMENTS or units <= 1:
        return [(0, units)]
    return even_ranges(units, 4 * thread_count())


def _run(fn, blocks):
    if len(blocks) == 1:
        return [fn(*blocks[0])]
    return map_parallel(lambda block: fn(*block), blocks)


def _layout(strides, shape):
    """"channels" (C innermost, C > 1), "width" (W innermost) or None, from element strides (N, H, W, C)."""
    if shape[3] > 1 and strides[3] == 1:
        return "channels"
    if shape[3] == 1 or strides[2] == 1 or shape[2] == 1:
        return "width" if strides[2] == 1 or shape[2] == 1 else None
    return None


def _rows(flat, strides, shape, layout):
    """flat as a 2-D array of rows (channel vectors or width rows) and the (N, H, W, C) strides in rows."""
    width = shape[3] if layout == "channels" else shape[2]
    inner = 3 if layout == "channels" else 2
    return flat.reshape(-1, width), tuple(0 if axis == inner else s // width for axis, s in enumerate(strides))


def _windowed(src, out, axes, op, alpha=1.0, beta=0.0, indices=None):
    """out (N, Ho, Wo, C) = alpha * (separable window reduction `op` of src (N, H, W, C) over `axes`) + beta * out;
    `indices` (optional, (N, Ho, Wo, C) integers) receives the max positions."""
    if out.size == 0:
        return
    dtype = compute_dtype(src.dtype)
    force = False
    while True:  # all operands channel-last or all width-innermost, else C-contiguous copies
        flat, ss = _source(src, dtype, (out, indices), force)
        target = _Target(out, dtype, beta != 0, force)
        where = _Target(indices, np.dtype(np.int64), False, force) if indices is not None else None
        layouts = {_layout(ss, src.shape), _layout(target.strides, out.shape)}
        if where is not None:
            layouts.add(_layout(where.strides, out.shape))
        if len(layouts) == 1 and None not in layouts:
            break
        force = True
    (layout,) = layouts
    batch, rows, cols, channels = out.shape
    source, ss = _rows(flat, ss, src.shape, layout)
    result, ds = _rows(target.flat, target.strides, out.shape, layout)
    if where is not None:
        index, xs = _rows(where.flat, where.strides, out.shape, layout)
    else:
        index, xs = np.empty((0, result.shape[1]), np.int64), (0, 0, 0, 0)
    units = batch * rows * (1 if layout == "channels" else channels)
    first, second = axes
    kind = flat.dtype.type
    args = (source, ss, result, ds, index, xs, first.taps, first.weights_as(kind), first.count, first.first,
            second.taps, second.weights_as(kind), second.count, second.first, out.shape, src.shape[2],
            layout == "channels", op, float(alpha), float(beta), first.is_pairs() and second.is_pairs())
    _run(lambda lo, hi: _window_kernel(*args, lo, hi), _blocks(units, src.size + out.size))
    target.finish()
    if where is not None:
        where.finish()


# ---- ops ---------------------------------------------------------------------------------------------------------

#: the tap table of one axis, for other separable ops (interpolation): `TapAxis.from_weights(taps, weights)`
TapAxis = _Axis


def separable_sum(x, out, axes, alpha=1.0, beta=0.0):
    """out (N, Ho, Wo, C) = alpha * (sum over the taps of both `axes` (TapAxis) of weighted x (N, H, W, C)) +
    beta * out."""
    _windowed(x, out, axes, _SUM, alpha, beta)


def max_pool_forward(x, out, windows, indices=None, propagate_nan=True, alpha=1.0, beta=0.0):
    """out = alpha * max over each window + beta * out; `indices` (optional) receives the argmax positions."""
    _windowed(x, out, windows.axes(), _MAX_PROPAGATE if propagate_nan else _MAX_SKIP_NAN, alpha, beta, indices)


def avg_pool_forward(x, out, windows, include_padding, alpha=1.0, beta=0.0):
    """out = alpha * mean over each window + beta * out."""
    _windowed(x, out, windows.axes(include_padding), _SUM, alpha, beta)


def avg_pool_backward(dy, dx, windows, include_padding, alpha=1.0, beta=0.0):
    """dx = alpha * (each window's dy / count spread over the window) + beta * dx."""
    _windowed(dy, dx, windows.axes(include_padding, transposed=True), _SUM, alpha, beta)


def max_pool_backward(dy, indices, dx, alpha=1.0, beta=0.0):
    """dx = alpha * (dy summed into the input positions `indices` name) + beta * dx."""
    if dx.size == 0:
        return
    dtype = compute_dtype(dy.dtype)
    grads, ys = _source(dy, dtype, (dx,))
    where = _flat(indices)
    if where is None or np.may_share_memory(indices, dx):
        where = _flat(np.ascontiguousarray(indices))
    index, xs = where
    index = index.view()
    index.flags.writeable = False
    batch, height, width, channels = dx.shape
    target = _Target(dx, dtype, beta != 0)
    ds = target.strides
    if height > 1 and width > 1 and ds[1] != width * ds[2]:  # positions h * W + w need H stride = W * W stride
        target = _Target(dx, dtype, beta != 0, force=True)
        ds = target.strides
    position = ds[2] if width > 1 else ds[1]
    if channels > 1 and ds[3] == 1:
        per_sample = min(max(1, channels // 8), -(-4 * thread_count() // batch))
        chunk = -(-channels // per_sample)
        dense = chunk == channels and position == channels
    else:
        chunk = 1
        dense = position == 1 or height * width == 1
    units = batch * -(-channels // chunk)
    args = (grads, ys, index, xs, target.flat, (ds[0], position, ds[3]), dy.shape, height * width, chunk, dense,
            float(alpha), float(beta))
    bad = sum(_run(lambda lo, hi: _max_scatter(*args, lo, hi), _blocks(units, dx.size + dy.size)))
    if bad:
        raise ValueError(f"{bad} max pooling indices lie outside the input plane of {height * width} positions")
    target.finish()


def adaptive_avg_forward(x, out):
    """out (N, Ho, Wo, C) = the adaptive average pooling of x (N, H, W, C)."""
    axes = [_adaptive_axis(n, o, False) for n, o in zip(x.shape[1:3], out.shape[1:3])]
    _windowed(x, out, axes, _SUM)


def adaptive_max_forward(x, out, indices=None):
    """out (N, Ho, Wo, C) = the adaptive max pooling of x (N, H, W, C), NaN propagating; `indices` (optional)
    receives the argmax positions h * W + w (the first maximum of each bin)."""
    axes = [_adaptive_axis(n, o, False) for n, o in zip(x.shape[1:3], out.shape[1:3])]
    _windowed(x, out, axes, _MAX_PROPAGATE, indices=indices)


def adaptive_avg_backward(dy, dx):
    """dx (N, H, W, C) = the gradient of adaptive_avg_forward for dy (N, Ho, Wo, C)."""
    axes = [_adaptive_axis(n, o, True) for n, o in zip(dx.shape[1:3], dy.shape[1:3])]
    _windowed(dy, dx, axes, _SUM)
