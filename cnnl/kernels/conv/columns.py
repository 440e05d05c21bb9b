"""The window copies of convolution: im2col rows gathered from, and col2im rows summed back into, a strided input.

An input (N, *S, C) of 1 to 3 spatial axes is handled as 3 spatial axes (missing ones of extent 1); its memory is a
flat array with element strides, so every layout (NHWC, an NCHW tensor seen channel-last, ...) shares one compiled
kernel per dtype. Column r of one sample's column matrix (K, L) is output position r (row-major over the output
spatial axes); its rows are the kernel positions (row-major) times the channels of one group, the layout of the (Co,
*K, C/groups) weight matrix. Copies run along the last spatial axis (contiguous in NCHW memory). Padding is not
materialised: positions outside the input read as 0 (gather) or are dropped (scatter). Both kernels are `nogil`, so
blocks of samples run on the kernel thread pool.
"""
import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def _valid_range(offset, step, extent, count):
    """[lo, hi): the output indices o < count whose input index o * step + offset lies in [0, extent)."""
    lo = 0 if offset >= 0 else (-offset + step - 1) // step
    last = extent - 1 - offset
    hi = 0 if last < 0 else min(count, last // step + 1)
    return lo, max(lo, hi)


@njit(nogil=True, cache=True)
def _line_runs(strides, in_shape, out_shape, kernel, steps, pads):
    """True when a run of output lines reads one contiguous run of input memory per window position: a 2-D (or
    1-D) window moving by 1 along both axes over rows of unit stride laid end to end, as wide as the output (a
    stride-1 "same" convolution of NCHW memory)."""
    return (in_shape[0] == 1 and out_shape[0] == 1 and kernel[0] == 1 and pads[0] == 0 and steps[1] == 1
            and steps[2] == 1 and strides[3] == 1 and (in_shape[1] == 1 or strides[2] == in_shape[2])
            and out_shape[2] == in_shape[2])


@njit(nogil=True, cache=True, inline="always")
def _line_input_row(line, out_h, kd, kh, steps, pads, dilations):
    """(d, h): the input depth and row that window position (kd, kh) reads for output line `line` (a line: one
    index of the first two output spatial axes)."""
    od = line // out_h
    oh = line - od * out_h
    return od * steps[0] - pads[0] + kd * dilations[0], oh * steps[1] - pads[1] + kh * dilations[1]


@njit(nogil=True, cache=True)
def _inside_lines(first_row, height, line0, line1):
    """[a, b): the lines of line0..line1 whose input row line + first_row lies in [0, height)."""
    a = max(line0, -first_row)
    b = min(line1, height - first_row)
    return a, max(a, b)


@njit(nogil=True, cache=True)
def _gather_run(src, at, row_stride, height, out_w, line0, line1, first_row, lo, hi, cols, row):
    """The lines line0..line1 of one row of cols when `_line_runs` holds: one contiguous copy of the input rows
    they read, then the padding columns of each line set to 0."""
    a, b = _inside_lines(first_row, height, line0, line1)
    for o in range((a - line0) * out_w):
        cols[row, o] = 0
    for o in range((b - line0) * out_w, (line1 - line0) * out_w):
        cols[row, o] = 0
    if a == b:
        return
    begin = np.uint64((a - line0) * out_w + lo)
    end = np.uint64((b - 1 - line0) * out_w + hi)
    shift = np.uint64(at + (a + first_row) * row_stride - (a - line0) * out_w)  # column o reads src[shift + o]
    for o in range(begin, end):
        cols[row, o] = src[shift + o]
    for line in range(a, b):
        first = (line - line0) * out_w
        for o in range(lo):
            cols[row, first + o] = 0
        for o in range(hi, out_w):
            cols[row, first + o] = 0


@njit(nogil=True, cache=True)
def _scatter_run(cols, row, dst, at, row_stride, height, out_w, lines, first_row, lo, hi):
    """`scatter_columns` of one row of cols when `_line_runs` holds: its padding columns set to 0 (they are
    dropped), then one contiguous add into the input rows."""
    a, b = _inside_lines(first_row, height, 0, lines)
    if a == b:
        return
    for line in range(a, b):
        first = line * out_w
        for o in range(lo):
            cols[row, first + o] = 0
        for o in range(hi, out_w):
            cols[row, first + o] = 0
    begin = np.uint64(a * out_w + lo)
    end = np.uint64((b - 1) * out_w + hi)
    shift = np.uint64(at + (a + first_row) * row_stride - a * out_w)
    for o in range(begin, end):
        dst[shift + o] += cols[row, o]


@njit(nogil=True, cache=True)
def gather_columns(src, src_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                   sample, line0, line1, cols):
    """cols[k * channels + c, r] = src[sample, window position k of output position r, channel0 + c] (0 in the
    padding) for the output lines line0..line1 (a line: one index of the first two output spatial axes; r counts
    the positions of those lines, row-major). Each row of cols is written front to back."""
    sn, sd, sh, sw, sc = src_strides
    depth, height, width = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    base = sample * sn + channel0 * sc
    step_w = steps[2] * sw
    runs = _line_runs(src_strides, in_shape, out_shape, kernel, steps, pads)
    k = 0
    for kd in range(kernel[0]):
        for kh in range(kernel[1]):
            for kw in range(kernel[2]):
                offset = kw * dilations[2] - pads[2]
                lo, hi = _valid_range(offset, steps[2], width, out_w)
                for c in range(channels):
                    row = k + c
                    if runs:
                        _gather_run(src, base + c * sc + offset, sh, height, out_w, line0, line1,
                                    kh * dilations[1] - pads[1], lo, hi, cols, row)
                        continue
                    for line in range(line0, line1):
                        first = (line - line0) * out_w
                        d, h = _line_input_row(line, out_h, kd, kh, steps, pads, dilations)
                        if not (0 <= d < depth and 0 <= h < height):
                            for o in range(out_w):
                                cols[row, first + o] = 0
                            continue
                        for o in range(lo):
                            cols[row, first + o] = 0
                        at = base + d * sd + h * sh + c * sc + offset * sw
                        if step_w == 1:  # unit stride, unsigned indices (no wraparound test): LLVM vectorises
                            shift = np.uint64(at - first)
                            for o in range(np.uint64(first + lo), np.uint64(first + hi)):
                                cols[row, o] = src[shift + o]
                        else:
                            for o in range(lo, hi):
                                cols[row, first + o] = src[at + o * step_w]
                        for o in range(hi, out_w):
                            cols[row, first + o] = 0
                k += channels


@njit(nogil=True, cache=True)
def gather_samples(src, src_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                   first, stop, cols):
    """`gather_columns` of whole samples first..stop, each into its own (K, L) matrix cols[n - first]: one call
    (one GIL hand-off) for a run of samples."""
    lines = out_shape[0] * out_shape[1]
    for n in range(first, stop):
        gather_columns(src, src_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                       n, 0, lines, cols[n - first])


@njit(nogil=True, cache=True)
def scatter_columns(cols, dst, dst_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                    sample):
    """dst[sample, window position k of output position r, channel0 + c] += cols[k * channels + c, r] over every
    output position of the sample (positions in the padding are dropped): col2im, the transpose of
    `gather_columns`. Kernel positions are summed in order (the outer loop)."""
    sn, sd, sh, sw, sc = dst_strides
    depth, height, width = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    base = sample * sn + channel0 * sc
    step_w = steps[2] * sw
    runs = _line_runs(dst_strides, in_shape, out_shape, kernel, steps, pads)
    k = 0
    for kd in range(kernel[0]):
        for kh in range(kernel[1]):
            for kw in range(kernel[2]):
                offset = kw * dilations[2] - pads[2]
                lo, hi = _valid_range(offset, steps[2], width, out_w)
                for c in range(channels):
                    row = k + c
                    if runs:
                        _scatter_run(cols, row, dst, base + c * sc + offset, sh, height, out_w, out_h,
                                     kh * dilations[1] - pads[1], lo, hi)
                        continue
                    for line in range(out_shape[0] * out_h):
                        first = line * out_w
                        d, h = _line_input_row(line, out_h, kd, kh, steps, pads, dilations)
                        if not (0 <= d < depth and 0 <= h < height):
                            continue
                        at = base + d * sd + h * sh + c * sc + offset * sw
                        if step_w == 1:
                            shift = np.uint64(at - first)
                            for o in range(np.uint64(first + lo), np.uint64(first + hi)):
                                dst[shift + o] += cols[row, o]
                        else:
                            for o in range(lo, hi):
                                dst[at + o * step_w] += cols[row, first + o]
                k += channels


@njit(nogil=True, cache=True)
def scatter_samples(cols, dst, dst_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                    first, stop):
    """`scatter_columns` of whole samples first..stop, each from its own (K, L) matrix cols[n - first]."""
    for n in range(first, stop):
        scatter_columns(cols[n - first], dst, dst_strides, in_shape, channel0, channels, out_shape, kernel, steps,
                        dilations, pads, n)


@njit(nogil=True, cache=True)
def gather_rows(src, src_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                sample, line0, line1, rows):
    """The transposed layout of `gather_columns`, for channel-innermost memory (channel stride 1):
    rows[r, k * channels + c] = src[sample, window position k of output position r, channel0 + c] (0 in the
    padding); each window position is one contiguous copy of `channels` elements."""
    sn, sd, sh, sw, sc = src_strides
    depth, height, width = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    base = sample * sn + channel0 * sc
    for line in range(line0, line1):
        od = line // out_h
        oh = line - od * out_h
        for ow in range(out_w):
            r = (line - line0) * out_w + ow
            column = 0
            for kd in range(kernel[0]):
                d = od * steps[0] - pads[0] + kd * dilations[0]
                for kh in range(kernel[1]):
                    h = oh * steps[1] - pads[1] + kh * dilations[1]
                    for kw in range(kernel[2]):
                        w = ow * steps[2] - pads[2] + kw * dilations[2]
                        if 0 <= d < depth and 0 <= h < height and 0 <= w < width:
                            at = np.uint64(base + d * sd + h * sh + w * sw)  # channels are adjacent (sc 1)
                            first = np.uint64(column)
                            for c in range(np.uint64(channels)):
                                rows[r, first + c] = src[at + c]
                        else:
                            for c in range(channels):
                                rows[r, column + c] = 0
                        column += channels


@njit(nogil=True, cache=True)
def scatter_rows(rows, dst, dst_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                 sample):
    """col2im of the `gather_rows` layout: dst[sample, window position k of output position r, channel0 + c] +=
    rows[r, k * channels + c] over every output position of the sample (padding dropped)."""
    sn, sd, sh, sw, sc = dst_strides
    depth, height, width = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    base = sample * sn + channel0 * sc
    for line in range(out_shape[0] * out_h):
        od = line // out_h
        oh = line - od * out_h
        for ow in range(out_w):
            r = line * out_w + ow
            column = 0
            for kd in range(kernel[0]):
                d = od * steps[0] - pads[0] + kd * dilations[0]
                for kh in range(kernel[1]):
                    h = oh * steps[1] - pads[1] + kh * dilations[1]
                    for kw in range(kernel[2]):
                        w = ow * steps[2] - pads[2] + kw * dilations[2]
                        if 0 <= d < depth and 0 <= h < height and 0 <= w < width:
                            at = np.uint64(base + d * sd + h * sh + w * sw)  # channels are adjacent (sc 1)
                            first = np.uint64(column)
                            for c in range(np.uint64(channels)):
                                dst[at + c] += rows[r, first + c]
                        column += channels


def as_3d(values, fill=1):
    """A spatial tuple of 1 to 3 entries as 3, led by `fill` (1 for extents, steps and dilations, 0 for pads)."""
    return (fill,) * (3 - len(values)) + tuple(int(v) for v in values)


def flat_operand(view, writable):
    """(1-D array over view's memory, (N, D, H, W, C) element strides) of a (N, *S, C) view whose memory is dense
    in some order of its axes (a C-contiguous copy otherwise: then `writable` must be False). The flat array is
    read-only unless `writable` (a read-only array is a numba type of its own: inputs always pass read-only)."""
    if view.size and not _dense_in_some_order(view):
        assert not writable, "an output buffer must be dense"
        view = np.ascontiguousarray(view)
    strides = [s // view.itemsize if n > 1 else 0 for s, n in zip(view.strides, view.shape)]
    strides = strides[:1] + [0] * (5 - view.ndim) + strides[1:]
    flat = np.lib.stride_tricks.as_strided(view, (_span(view),), (view.itemsize,), writeable=writable)
    return flat, tuple(strides)


def is_dense(view):
    """True when view's memory is dense in some order of its axes, with positive strides."""
    return _dense_in_some_order(view)


def _span(view):
    if view.size == 0:
        return 0
    return 1 + sum((n - 1) * s // view.itemsize for s, n in zip(view.strides, view.shape))


def _dense_in_some_order(view):
    axes = sorted((axis for axis in range(view.ndim) if view.shape[axis] > 1), key=lambda a: view.strides[a])
    expected = view.itemsize
    for axis in axes:
        if view.strides[axis] != expected:
            return False
        expected *= view.shape[axis]
    return True
