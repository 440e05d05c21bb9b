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
def gather_columns(src, src_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                   sample, line0, line1, cols):
    """cols[k * channels + c, r] = src[sample, window position k of output position r, channel0 + c] (0 in the
    padding) for the output lines line0..line1 (a line: one index of the first two output spatial axes; r counts
    the positions of those lines, row-major)."""
    sn, sd, sh, sw, sc = src_strides
    depth, height, width = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    base = sample * sn + channel0 * sc
    step_w = steps[2] * sw
    for line in range(line0, line1):
        od = line // out_h
        oh = line - od * out_h
        first = (line - line0) * out_w
        k = 0
        for kd in range(kernel[0]):
            d = od * steps[0] - pads[0] + kd * dilations[0]
            for kh in range(kernel[1]):
                h = oh * steps[1] - pads[1] + kh * dilations[1]
                inside = 0 <= d < depth and 0 <= h < height
                for kw in range(kernel[2]):
                    offset = kw * dilations[2] - pads[2]
                    lo, hi = _valid_range(offset, steps[2], width, out_w)
                    if not inside:
                        lo, hi = 0, 0
                    for c in range(channels):
                        row = cols[k + c]
                        for o in range(lo):
                            row[first + o] = 0
                        at = base + d * sd + h * sh + c * sc + offset * sw
                        if step_w == 1:  # unit stride: a loop LLVM vectorises
                            shift = at - first
                            for o in range(first + lo, first + hi):
                                row[o] = src[shift + o]
                        else:
                            for o in range(lo, hi):
                                row[first + o] = src[at + o * step_w]
                        for o in range(hi, out_w):
                            row[first + o] = 0
                    k += channels


@njit(nogil=True, cache=True)
def scatter_columns(cols, dst, dst_strides, in_shape, channel0, channels, out_shape, kernel, steps, dilations, pads,
                    sample):
    """dst[sample, window position k of output position r, channel0 + c] += cols[k * channels + c, r] over every
    output position of the sample (positions in the padding are dropped): col2im, the transpose of
    `gather_columns`."""
    sn, sd, sh, sw, sc = dst_strides
    depth, height, width = in_shape
    out_h, out_w = out_shape[1], out_shape[2]
    base = sample * sn + channel0 * sc
    step_w = steps[2] * sw
    for line in range(out_shape[0] * out_h):
        od = line // out_h
        oh = line - od * out_h
        first = line * out_w
        k = 0
        for kd in range(kernel[0]):
            d = od * steps[0] - pads[0] + kd * dilations[0]
            for kh in range(kernel[1]):
                h = oh * steps[1] - pads[1] + kh * dilations[1]
                if not (0 <= d < depth and 0 <= h < height):
                    k += kernel[2] * channels
                    continue
                for kw in range(kernel[2]):
                    offset = kw * dilations[2] - pads[2]
                    lo, hi = _valid_range(offset, steps[2], width, out_w)
                    for c in range(channels):
                        row = cols[k + c]
                        at = base + d * sd + h * sh + c * sc + offset * sw
                        if step_w == 1:
                            shift = at - first
                            for o in range(first + lo, first + hi):
                                dst[shift + o] += row[o]
                        else:
                            for o in range(lo, hi):
                                dst[at + o * step_w] += row[first + o]
                    k += channels


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
