"""Convolution on channel-last arrays: forward, backward data, backward filter (`cnnlConvolution*`).

Shapes: x (N, *S, C), w (Co, *K, C/groups), y (N, *So, Co), for 1, 2 or 3 spatial axes S; any strides (the API layer
passes NCHW tensors as transposed views). `pads` is one (before, after) pair per spatial axis.

Method: im2col + GEMM on the host BLAS. A numba kernel (`conv_columns`) gathers a block of output lines' windows
into a dense (K*C, positions) matrix (padding read as 0, never materialised); forward multiplies the (Co, K*C)
weight matrix by it, the filter gradient multiplies dy by its transpose, and the data gradient multiplies the
transposed weights by dy and sums the columns back into their windows (col2im, numba). Blocks run on the kernel
thread pool with single-threaded GEMMs, so the copies of one block overlap the GEMM of another; outputs in NCHW or
NHWC memory are written in place. A 1x1 convolution with stride 1 and no padding is one GEMM on the input. Depthwise
convolutions (one input channel per group) take a direct path: one multiply-add of the whole tensor per kernel
position. Numerics: half/bfloat16 compute in float32, float32 and float64 in themselves; one rounding into the
output.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from mlusim.host import blas as blas_threads
from .conv_columns import (as_3d, flat_operand, gather_columns, gather_rows, gather_samples, is_dense,
                           scatter_columns, scatter_rows, scatter_samples)
from .dtypes import compute_dtype
from .parallel import even_ranges, map_parallel, thread_count
from .staging import load, store

#: target bytes of one block of the im2col matrix: what a thread gathers stays in its L2 cache while its GEMM reads it
COLUMN_BLOCK_BYTES = 1 << 18
#: fewest output positions per block (smaller GEMMs run far below the BLAS's peak)
MIN_BLOCK_POSITIONS = 256
#: problems of at most this many im2col elements run on the calling thread (handing work to the pool costs more)
INLINE_COLUMN_ELEMENTS = 1 << 15
#: at most this many bytes of im2col matrices in one run of whole samples (one gather, one batched GEMM: `_sample_runs`)
#: ... and at most a batch's share of RUNS_PER_THREAD runs per thread. Runs of whole samples beat runs that fit L2
#: here: each run costs its thread the GIL a few times, and on a small VM a thread that finds the GIL taken waits
#: ~50 us to be woken (3x3 convolutions of a small CNN, batch 32, all three directions: 4.66 -> 3.90 ms against
#: runs of at most 512 KiB and 4 per thread)
SAMPLE_RUN_BYTES = 8 << 20
RUNS_PER_THREAD = 2
#: samples whose im2col matrix is larger go by blocks of lines (`_Geometry.units`), which bounds the buffers' memory.
#: Up to here whole samples are faster even where a sample's matrix outgrows L2 (2 cores, 1 MiB L2 each, 3x3 convs
#: of batch 32 or 16, forward / forward + backward against blocks of lines: 590 KiB -22% / -16%, 1.2 MiB -25% /
#: -14%, 7.2 MiB -11% / -3%): a block of lines costs several Python calls of its own.
SAMPLE_MATRIX_LIMIT_BYTES = 8 << 20
#: above this many output channels (one group) the GEMMs of blocks are too small for the BLAS: the whole batch's
#: im2col matrix is gathered on the pool and multiplied in one multi-threaded GEMM
WIDE_CHANNELS = 128
#: ... while that matrix stays under this many bytes
WIDE_MATRIX_BYTES = 1 << 28


def output_extent(size, pad_before, pad_after, kernel, stride, dilation):
    """Output extent of one spatial axis (floor rounding, as CNNL's convolution)."""
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


def _padded(x, pads, dtype):
    """x in `dtype`, zero-padded on its spatial axes (x itself when nothing changes)."""
    values = load(x, dtype)
    if not any(before or after for before, after in pads):
        return values
    shape = (x.shape[0],) + tuple(n + b + a for n, (b, a) in zip(x.shape[1:-1], pads)) + (x.shape[-1],)
    padded = np.zeros(shape, dtype)
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(x.shape[1:-1], pads)) + (slice(None),)
    padded[inner] = values
    return padded


def _windows(xp, kernel, out_spatial, strides, dilations):
    """Read-only view (N, *So, *K, C) of the sliding windows of the padded input."""
    st = xp.strides
    spatial = range(len(kernel))
    shape = (xp.shape[0],) + tuple(out_spatial) + tuple(kernel) + (xp.shape[-1],)
    steps = ((st[0],) + tuple(st[1 + i] * strides[i] for i in spatial)
             + tuple(st[1 + i] * dilations[i] for i in spatial) + (st[-1],))
    return as_strided(xp, shape, steps, writeable=False)


def _kernel_offsets(kernel, out_spatial, strides, dilations):
    """For each kernel position: (index tuple, spatial slices of the padded input it meets)."""
    for position in np.ndindex(*kernel):
        yield position, tuple(slice(k * d, k * d + s * (n - 1) + 1, s)
                              for k, d, s, n in zip(position, dilations, strides, out_spatial))


def _group_slices(groups, channels):
    per = channels // groups
    return [slice(g * per, (g + 1) * per) for g in range(groups)]


def _weight_matrix(w, dtype):
    """(Co, K*Cg) dense weight matrix in the compute dtype."""
    return np.ascontiguousarray(load(w, dtype)).reshape(w.shape[0], -1)


def _epilogue(result, out, alpha, beta, bias):
    """out = alpha * result + beta * out + bias (bias over the last axis), rounded once into out."""
    if alpha != 1:
        result *= result.dtype.type(alpha)
    if beta != 0:
        result += load(out, result.dtype) * result.dtype.type(beta)
    if bias is not None:
        result += load(bias, result.dtype).reshape(-1)
    if result is not out:
        store(result, out)


def _result_buffer(out, dtype, alpha, beta, source):
    """Where the convolution sums go: `out` itself when it is dense (channel-last or channel-first), of the compute
    dtype and apart from the `source` the sums read."""
    if (out.dtype == dtype and beta == 0 and (out.flags.c_contiguous or _channel_first(out) is not None)
            and not np.may_share_memory(out, source)):
        return out
    return np.empty(out.shape, dtype)


def _no_products(out, dtype, alpha, beta, bias):
    """The result when a convolution sums over nothing (an empty batch, no input channels, an empty window) or
    alpha is 0: beta * out + bias (x and w are not read: their NaN and inf do not reach out, as in BLAS)."""
    if out.size:
        _epilogue(np.zeros(out.shape, dtype), out, alpha, beta, bias)


class _Geometry:
    """One convolution's window geometry in the 3-spatial-axis form of `conv_columns`, with its group split."""

    def __init__(self, in_shape, out_spatial, kernel, pads, strides, dilations, groups):
        self.batch, self.channels = in_shape[0], in_shape[-1]
        self.in3, self.out3 = as_3d(in_shape[1:-1]), as_3d(out_spatial)
        self.kernel3, self.steps3 = as_3d(kernel), as_3d(strides)
        self.dilations3, self.pads3 = as_3d(dilations), as_3d([before for before, _ in pads], 0)
        self.positions = math.prod(out_spatial)  # im2col columns of one sample
        self.lines = self.out3[0] * self.out3[1]  # output lines of one sample (the last spatial axis is a line)
        self.per_group = self.channels // groups
        self.columns = math.prod(kernel) * self.per_group  # im2col rows of one group
        self.groups = groups

    def gather(self, flat, flat_strides, group, sample, line0, line1, cols):
        gather_columns(flat, flat_strides, self.in3, group * self.per_group, self.per_group, self.out3,
                       self.kernel3, self.steps3, self.dilations3, self.pads3, sample, line0, line1, cols)

    def gather_samples(self, flat, flat_strides, first, stop, cols):
        """`gather` of whole samples first..stop of the one group, each into its own (K, L) matrix of cols."""
        gather_samples(flat, flat_strides, self.in3, 0, self.channels, self.out3, self.kernel3, self.steps3,
                       self.dilations3, self.pads3, first, stop, cols)

    def scatter_samples(self, cols, flat, flat_strides, first, stop):
        """`scatter` of whole samples first..stop of the one group, each from its own (K, L) matrix of cols."""
        scatter_samples(cols, flat, flat_strides, self.in3, 0, self.channels, self.out3, self.kernel3, self.steps3,
                        self.dilations3, self.pads3, first, stop)

    def run_buffer(self, chunk, dtype):
        """A (samples, K, L) im2col buffer for the longest of a chunk's runs of whole samples."""
        return np.empty((max(stop - first for first, stop in chunk), self.columns, self.positions), dtype)

    def scatter(self, cols, flat, flat_strides, group, sample):
        scatter_columns(cols, flat, flat_strides, self.in3, group * self.per_group, self.per_group, self.out3,
                        self.kernel3, self.steps3, self.dilations3, self.pads3, sample)

    def im2col(self, buffer, count, flat, flat_strides, group, sample, line0, line1, row_layout):
        """im2col of output lines line0..line1 (`count` positions) of one sample and group, gathered into `buffer`
        (from `buffer()`): the (K*C/groups, count) matrix, a transposed view of (count, K*C/groups) rows in the
        row layout."""
        if row_layout:
            rows = buffer[:count]
            self.gather_rows(flat, flat_strides, group, sample, line0, line1, rows)
            return rows.T
        cols = buffer[:, :count]
        self.gather(flat, flat_strides, group, sample, line0, line1, cols)
        return cols

    def gather_rows(self, flat, flat_strides, group, sample, line0, line1, rows):
        gather_rows(flat, flat_strides, self.in3, group * self.per_group, self.per_group, self.out3,
                    self.kernel3, self.steps3, self.dilations3, self.pads3, sample, line0, line1, rows)

    def scatter_rows(self, rows, flat, flat_strides, group, sample):
        scatter_rows(rows, flat, flat_strides, self.in3, group * self.per_group, self.per_group, self.out3,
                     self.kernel3, self.steps3, self.dilations3, self.pads3, sample)

    @staticmethod
    def row_layout(flat_strides):
        """True for channel-innermost memory (NHWC): im2col in (positions, K*C) rows, each window position one
        contiguous copy of its channels; else (K*C, positions), copies along the last spatial axis."""
        return flat_strides[4] == 1

    def units(self, itemsize, split):
        """(sample, first line, stop line) work units: whole samples, or (`split`) blocks of lines whose im2col
        matrix holds about COLUMN_BLOCK_BYTES."""
        step = self.lines
        if split:
            line_bytes = max(1, self.columns * self.out3[2] * itemsize)
            step = min(self.lines, max(-(-MIN_BLOCK_POSITIONS // self.out3[2]), COLUMN_BLOCK_BYTES // line_bytes))
        return [(n, start, min(start + step, self.lines))
                for n in range(self.batch) for start in range(0, self.lines, step)]

    def buffer(self, units, dtype, row_layout=False):
        """An im2col matrix buffer for the largest of `units` ((positions, K*C) in the row layout)."""
        longest = max(stop - start for _, start, stop in units) * self.out3[2]
        return np.empty((longest, self.columns) if row_layout else (self.columns, longest), dtype)

    def span(self, line0, line1):
        """The output positions of lines line0..line1 of a sample."""
        return slice(line0 * self.out3[2], line1 * self.out3[2])

    def run(self, work, units):
        """[work(units of one thread)] on the calling thread (small problems) or shared out over the pool, each
        thread's GEMMs single-threaded so that one thread's copies overlap another's GEMM."""
        def chunk_work(chunk):
            with blas_threads.single_threaded_blas():
                return work(chunk)

        if self.batch * self.positions * self.columns * self.groups <= INLINE_COLUMN_ELEMENTS or thread_count() == 1:
            with blas_threads.single_threaded_blas():  # (blocks of lines: GEMMs far too small for BLAS's threads)
                return [work(units)]
        return map_parallel(chunk_work, [units[lo:hi] for lo, hi in even_ranges(len(units), 4 * thread_count())])


def _channel_first(array):
    """(N, C, L) view of a (N, *S, C) array whose memory is (N, C, *S) C-contiguous, else None."""
    moved = np.moveaxis(array, -1, 1)
    if not moved.flags.c_contiguous:
        return None
    return moved.reshape(array.shape[0], array.shape[-1], -1)


def _channel_rows(array):
    """(N, C, L) view of a (N, *S, C) array (copied when its strides do not allow it)."""
    first = _channel_first(array)
    if first is not None:
        return first
    return np.moveaxis(array.reshape(array.shape[0], -1, array.shape[-1]), -1, 1)


def _whole_fits(geo, itemsize):
    """True when the whole batch's im2col matrix (one group) stays under WIDE_MATRIX_BYTES."""
    return geo.groups == 1 and geo.batch * geo.positions * geo.columns * itemsize <= WIDE_MATRIX_BYTES


def _wide(geo, channels_out, itemsize):
    """True when one whole-batch GEMM beats per-block GEMMs (see WIDE_CHANNELS)."""
    return channels_out > WIDE_CHANNELS and _whole_fits(geo, itemsize)


def _whole_matrix(geo, flat, flat_strides, row_layout, dtype):
    """The im2col matrix of the whole batch (one group): (N*L, K) rows in the row layout, else (K, N*L); blocks
    of lines gathered on the pool."""
    total, per_sample = geo.batch * geo.positions, geo.positions
    matrix = np.empty((total, geo.columns) if row_layout else (geo.columns, total), dtype)

    def fill(unit):
        n, line0, line1 = unit
        span = geo.span(line0, line1)
        where = slice(n * per_sample + span.start, n * per_sample + span.stop)
        if row_layout:
            geo.gather_rows(flat, flat_strides, 0, n, line0, line1, matrix[where])
        else:
            geo.gather(flat, flat_strides, 0, n, line0, line1, matrix[:, where])

    units = geo.units(np.dtype(dtype).itemsize, split=True)
    if geo.batch * geo.positions * geo.columns <= INLINE_COLUMN_ELEMENTS:
        units = [units]
        map_parallel(lambda chunk: [fill(unit) for unit in chunk], units)
    else:
        map_parallel(fill, units)
    return matrix


def _rows_matrix(grads):
    """dy (N, *So, Co) as a (N*L, Co) matrix (a copy when its memory is not channel-last)."""
    return np.ascontiguousarray(grads).reshape(-1, grads.shape[-1])


def _wide_forward(geo, flat, flat_strides, row_layout, wmat, result, bias):
    matrix = _whole_matrix(geo, flat, flat_strides, row_layout, wmat.dtype)
    with blas_threads.gemm_threads(matrix.size * wmat.shape[0]):
        _wide_product(geo, row_layout, matrix, wmat, result)
    if bias is not None:
        result += bias


def _wide_product(geo, row_layout, matrix, wmat, result):
    if row_layout:
        product = np.matmul(matrix, wmat.T, out=result.reshape(-1, wmat.shape[0]) if result.flags.c_contiguous
                            else None)
        if product.base is None or not np.shares_memory(product, result):
            result[...] = product.reshape(result.shape)
    else:
        product = wmat @ matrix  # (Co, N*L)
        _channel_rows(result)[...] = product.reshape(wmat.shape[0], geo.batch, -1).transpose(1, 0, 2)


def _column_forward(geo, values, wmat, result, bias=None):
    """result (N, *So, Co) = wmat @ im2col(values) per group (+ bias (Co,) when given, added to each block while
    it is in cache); result is C-contiguous or channel-first."""
    flat, flat_strides = flat_operand(values, writable=False)
    row_layout = geo.row_layout(flat_strides)
    if _wide(geo, wmat.shape[0], values.itemsize):
        return _wide_forward(geo, flat, flat_strides, row_layout, wmat, result, bias)
    target = _channel_rows(result)  # a view (N, Co, L) either way
    target_rows = np.moveaxis(target, 1, 2)  # (N, L, Co)
    channel_first = target.strides[-1] == target.itemsize or target.shape[-1] == 1
    if geo.groups == 1 and channel_first and not row_layout and target.flags.c_contiguous:
        runs = _sample_runs(geo, values.itemsize)
        if runs is not None:
            return _sample_run_forward(geo, flat, flat_strides, wmat, target, bias, runs)
    out_per_group = wmat.shape[0] // geo.groups
    weights_t = [np.ascontiguousarray(wmat[g * out_per_group:(g + 1) * out_per_group].T) for g in range(geo.groups)]
    units = geo.units(values.itemsize, split=True)

    def work(chunk):
        buffer = geo.buffer(units, values.dtype, row_layout)
        for n, line0, line1 in chunk:
            span = geo.span(line0, line1)
            count = span.stop - span.start
            for g in range(geo.groups):
                go = slice(g * out_per_group, (g + 1) * out_per_group)
                cols = geo.im2col(buffer, count, flat, flat_strides, g, n, line0, line1, row_layout)
                if channel_first:
                    block = target[n, go, span]  # (Co_g, positions)
                    np.matmul(weights_t[g].T, cols, out=block)
                    if bias is not None:
                        block += bias[go, None]
                else:  # rows of Co
                    block = target_rows[n, span, go]
                    np.matmul(cols.T, weights_t[g], out=block)
                    if bias is not None:
                        block += bias[go]

    geo.run(work, units)


def _sample_runs(geo, itemsize):
    """Runs (first, stop) of whole samples whose im2col matrices together hold at most SAMPLE_RUN_BYTES (at least
    RUNS_PER_THREAD runs per thread when the batch allows; a larger sample runs alone), or None when one sample's
    matrix is larger than SAMPLE_MATRIX_LIMIT_BYTES (`_Geometry.units` cuts samples then)."""
    sample_bytes = geo.columns * geo.positions * itemsize
    if sample_bytes > SAMPLE_MATRIX_LIMIT_BYTES:
        return None
    per = max(1, min(SAMPLE_RUN_BYTES // max(1, sample_bytes), -(-geo.batch // (RUNS_PER_THREAD * thread_count()))))
    return [(n, min(n + per, geo.batch)) for n in range(0, geo.batch, per)]


def _sample_run_forward(geo, flat, flat_strides, wmat, target, bias, runs):
    """result (N, Co, L) = wmat @ im2col(x) (+ bias) by runs of whole samples (channel-first memory, one group):
    per run, one compiled gather and one batched GEMM into the run's outputs, so a thread hands the GIL back and
    forth a few times per op instead of a few times per sample."""
    def work(chunk):
        buffer = geo.run_buffer(chunk, wmat.dtype)
        for first, stop in chunk:
            cols = buffer[:stop - first]
            geo.gather_samples(flat, flat_strides, first, stop, cols)
            block = target[first:stop]
            np.matmul(wmat, cols, out=block)
            if bias is not None:
                block += bias[:, None]

    geo.run(work, runs)


def _sample_run_data(geo, source, wmat, flat, flat_strides, runs):
    """The data gradient of one group by runs of whole samples: per run, one batched GEMM wmat.T @ dy (K, L) per
    sample and one compiled col2im of the run."""
    weights_t = np.ascontiguousarray(wmat.T)

    def work(chunk):
        buffer = geo.run_buffer(chunk, wmat.dtype)
        for first, stop in chunk:
            cols = buffer[:stop - first]
            np.matmul(weights_t, source[first:stop], out=cols)
            geo.scatter_samples(cols, flat, flat_strides, first, stop)

    geo.run(work, runs)


def _sample_run_filter(geo, flat, flat_strides, source, dtype, runs):
    """The (Co, K) weight gradient of one group by runs of whole samples: per run, one compiled gather and one
    batched GEMM of the transposed products im2col(x) @ dy.T (K, Co), summed over the run's samples."""
    channels_out = source.shape[1]

    def work(chunk):
        buffer = geo.run_buffer(chunk, dtype)
        products = np.empty(buffer.shape[:2] + (channels_out,), dtype)
        total = np.zeros((geo.columns, channels_out), dtype)
        for first, stop in chunk:
            count = stop - first
            cols = buffer[:count]
            geo.gather_samples(flat, flat_strides, first, stop, cols)
            np.matmul(cols, source[first:stop].transpose(0, 2, 1), out=products[:count])
            total += products[:count].sum(axis=0)
        return total

    partials = geo.run(work, runs)
    return (partials[0] if len(partials) == 1 else np.sum(partials, axis=0)).T


def _column_backward_data(geo, grads, wmat, target):
    """Sum the data gradient into `target` (N, *S, C), zeroed, dense: per sample and group, the columns
    wmat.T @ dy added back into their windows (col2im)."""
    flat, flat_strides = flat_operand(target, writable=True)
    row_layout = geo.row_layout(flat_strides)
    if _wide(geo, wmat.shape[0], target.itemsize):  # one GEMM for the batch's columns, col2im per sample
        grad_rows = _rows_matrix(grads)
        with blas_threads.gemm_threads(grad_rows.size * wmat.shape[1]):
            columns = grad_rows @ wmat if row_layout else wmat.T @ grad_rows.T
        per_sample = geo.positions

        def scatter(n):
            where = slice(n * per_sample, (n + 1) * per_sample)
            if row_layout:
                geo.scatter_rows(columns[where], flat, flat_strides, 0, n)
            else:
                geo.scatter(columns[:, where], flat, flat_strides, 0, n)

        map_parallel(scatter, range(geo.batch))
        return
    source = _channel_rows(grads)
    runs = _sample_runs(geo, target.itemsize) if geo.groups == 1 and not row_layout else None
    if runs is not None:
        return _sample_run_data(geo, source, wmat, flat, flat_strides, runs)
    source_rows = np.moveaxis(source, 1, 2)
    out_per_group = wmat.shape[0] // geo.groups
    units = geo.units(target.itemsize, split=False)

    def work(chunk):
        cols = geo.buffer(units, target.dtype, row_layout)
        for n, _, _ in chunk:
            for g in range(geo.groups):
                go = slice(g * out_per_group, (g + 1) * out_per_group)
                if row_layout:
                    np.matmul(source_rows[n, :, go], wmat[go], out=cols)
                    geo.scatter_rows(cols, flat, flat_strides, g, n)
                else:
                    np.matmul(wmat[go].T, source[n, go], out=cols)
                    geo.scatter(cols, flat, flat_strides, g, n)

    geo.run(work, units)


def _column_backward_filter(geo, values, grads, dtype):
    """The (Co, K * C/groups) weight gradient: per group, dy @ im2col(x).T summed over samples and line blocks."""
    flat, flat_strides = flat_operand(values, writable=False)
    row_layout = geo.row_layout(flat_strides)
    channels_out = grads.shape[-1]
    itemsize = np.dtype(dtype).itemsize
    if _wide(geo, channels_out, itemsize) or (row_layout and _whole_fits(geo, itemsize)):
        # one GEMM summing over the whole batch (NHWC: dy is already its (N*L, Co) matrix): the BLAS's best shape
        matrix = _whole_matrix(geo, flat, flat_strides, row_layout, dtype)
        grad_rows = _rows_matrix(grads)
        with blas_threads.gemm_threads(matrix.size * channels_out):
            return grad_rows.T @ (matrix if row_layout else matrix.T)
    source = _channel_rows(grads)
    runs = _sample_runs(geo, itemsize) if geo.groups == 1 and not row_layout else None
    if runs is not None:
        return _sample_run_filter(geo, flat, flat_strides, source, dtype, runs)
    out_per_group = channels_out // geo.groups
    units = geo.units(np.dtype(dtype).itemsize, split=True)

    def work(chunk):  # sums the transposed gradient (K * C/groups, Co): the faster GEMM orientation
        buffer = geo.buffer(units, dtype, row_layout)
        total = np.zeros((geo.columns, channels_out), dtype)
        product = np.empty((geo.columns, out_per_group), dtype)
        for n, line0, line1 in chunk:
            span = geo.span(line0, line1)
            count = span.stop - span.start
            for g in range(geo.groups):
                go = slice(g * out_per_group, (g + 1) * out_per_group)
                cols = geo.im2col(buffer, count, flat, flat_strides, g, n, line0, line1, row_layout)
                np.matmul(cols, source[n, go, span].T, out=product)
                total[:, go] += product
        return total

    partials = geo.run(work, units)
    return (partials[0] if len(partials) == 1 else np.sum(partials, axis=0)).T


def conv_forward(x, w, out, pads, strides, dilations, groups, alpha=1.0, beta=0.0, bias=None):
    """out = alpha * conv(x, w) + beta * out + bias; see the module doc for layouts and numerics."""
    dtype = compute_dtype(x.dtype)
    if out.size == 0 or x.size == 0 or w.size == 0 or alpha == 0:  # alpha 0: x and w are not read (as BLAS)
        return _no_products(out, dtype, alpha, beta, bias)
    kernel, out_spatial = w.shape[1:-1], out.shape[1:-1]
    channels_in, channels_out = x.shape[-1], w.shape[0]
    depthwise = _is_depthwise(w, groups, channels_in)
    pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not any(map(any, pads))
    xp = _padded(x, pads, dtype) if depthwise or pointwise else None
    result = _result_buffer(out, dtype, alpha, beta, x)
    if depthwise:
        _depthwise_forward(xp, load(w, dtype), result, kernel, out_spatial, strides, dilations)
    else:
        wmat = _weight_matrix(w, dtype)
        if pointwise and groups == 1 and xp.flags.c_contiguous and result.flags.c_contiguous:
            with blas_threads.gemm_threads(xp.size * channels_out):
                np.matmul(xp.reshape(-1, channels_in), wmat.T, out=result.reshape(-1, channels_out))
        else:
            fold = bias is not None and alpha == 1 and beta == 0  # out = conv + bias: add it block by block
            _column_forward(_Geometry(x.shape, out_spatial, kernel, pads, strides, dilations, groups),
                            load(x, dtype), wmat, result, load(bias, dtype).reshape(-1) if fold else None)
            if fold:
                bias = None
    _epilogue(result, out, alpha, beta, bias)


def _depthwise_forward(xp, w, result, kernel, out_spatial, strides, dilations):
    channels = xp.shape[-1]
    multiplier = w.shape[0] // channels
    taps = w.reshape(channels, multiplier, -1)

    def run(n):
        target = result[n].reshape(tuple(out_spatial) + (channels, multiplier))
        target[...] = 0
        for index, (_, window) in enumerate(_kernel_offsets(kernel, out_spatial, strides, dilations)):
            target += xp[(n,) + window][..., None] * taps[:, :, index]

    map_parallel(run, range(xp.shape[0]))


def conv_backward_data(dy, w, dx, pads, strides, dilations, groups, alpha=1.0, beta=0.0):
    """dx = alpha * conv_transpose(dy, w) + beta * dx: the gradient of conv_forward with respect to x."""
    dtype = compute_dtype(dy.dtype)
    if dx.size == 0 or dy.size == 0 or w.size == 0 or alpha == 0:
        return _no_products(dx, dtype, alpha, beta, None)
    kernel, out_spatial = w.shape[1:-1], dy.shape[1:-1]
    dy_values = load(dy, dtype)
    channels_in = dx.shape[-1]
    if not _is_depthwise(w, groups, channels_in):
        geo = _Geometry(dx.shape, out_spatial, kernel, pads, strides, dilations, groups)
        target = _gradient_buffer(dx, dtype, alpha, beta, (dy, w))
        _column_backward_data(geo, dy_values, _weight_matrix(w, dtype), target)
        _epilogue(target, dx, alpha, beta, None)
        return
    padded_shape = (dx.shape[0],) + tuple(n + b + a for n, (b, a) in zip(dx.shape[1:-1], pads)) + (channels_in,)
    grad_padded = np.zeros(padded_shape, dtype)
    offsets = [window for _, window in _kernel_offsets(kernel, out_spatial, strides, dilations)]
    multiplier = w.shape[0] // channels_in
    taps = load(w, dtype).reshape(channels_in, multiplier, -1)

    def scatter(n):
        grad = dy_values[n].reshape(tuple(out_spatial) + (channels_in, multiplier))
        for index, window in enumerate(offsets):
            grad_padded[(n,) + window] += np.einsum("...cm,cm->...c", grad, taps[:, :, index])

    map_parallel(scatter, range(dx.shape[0]))
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(dx.shape[1:-1], pads)) + (slice(None),)
    result = grad_padded[inner]
    if alpha != 1 or beta != 0:
        result = result.copy()
    _epilogue(result, dx, alpha, beta, None)


def _gradient_buffer(dx, dtype, alpha, beta, sources):
    """A zeroed (N, *S, C) compute-dtype buffer to sum a data gradient into: dx itself when it is dense, of the
    compute dtype, apart from the `sources` and not blended (alpha 1, beta 0); else a buffer in dx's memory order
    (channel-first or channel-last), so that storing it is a straight copy."""
    if (dx.dtype == dtype and alpha == 1 and beta == 0 and is_dense(dx)
            and not any(np.may_share_memory(dx, source) for source in sources)):
        dx[...] = 0
        return dx
    if _channel_first(dx) is not None:
        return np.moveaxis(np.zeros((dx.shape[0], dx.shape[-1]) + dx.shape[1:-1], dtype), 1, -1)
    return np.zeros(dx.shape, dtype)


def conv_backward_filter(x, dy, dw, pads, strides, dilations, groups, alpha=1.0, beta=0.0):
    """dw = alpha * d(sum(conv(x, w) * dy))/dw + beta * dw: the gradient of conv_forward with respect to w."""
    dtype = compute_dtype(x.dtype)
    if dw.size == 0 or x.size == 0 or dy.size == 0 or alpha == 0:  # an empty batch gives no gradient: beta * dw
        return _no_products(dw, dtype, alpha, beta, None)
    kernel, out_spatial = dw.shape[1:-1], dy.shape[1:-1]
    dy_values = load(dy, dtype)
    channels_in = x.shape[-1]
    if _is_depthwise(dw, groups, channels_in):
        result = _depthwise_filter(_padded(x, pads, dtype), dy_values, kernel, out_spatial, strides, dilations)
    else:
        geo = _Geometry(x.shape, out_spatial, kernel, pads, strides, dilations, groups)
        result = _column_backward_filter(geo, load(x, dtype), dy_values, dtype)
    _epilogue(result.reshape(dw.shape), dw, alpha, beta, None)


def _depthwise_filter(xp, dy_values, kernel, out_spatial, strides, dilations):
    channels_in = xp.shape[-1]
    multiplier = dy_values.shape[-1] // channels_in
    offsets = [window for _, window in _kernel_offsets(kernel, out_spatial, strides, dilations)]

    def partial(n):
        grad = dy_values[n].reshape(-1, channels_in, multiplier)
        taps = np.empty((channels_in, multiplier, len(offsets)), grad.dtype)
        for index, window in enumerate(offsets):
            taps[:, :, index] = np.einsum("rc,rcm->cm", xp[(n,) + window].reshape(-1, channels_in), grad)
        return taps

    return np.sum(map_parallel(partial, range(xp.shape[0])), axis=0).reshape(dy_values.shape[-1], -1)


def _is_depthwise(w, groups, channels_in):
    """One input channel per group: the direct (per kernel position) path is faster than per-group GEMMs."""
    return groups > 1 and groups == channels_in and w.shape[-1] == 1
