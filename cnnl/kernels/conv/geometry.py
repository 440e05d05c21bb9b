"""How a convolution's im2col work is cut: its window geometry in the 3-spatial-axis form of `columns`, its work units
(whole samples, runs of samples or blocks of output lines), where they run, and the layouts of its operands."""
import math

import numpy as np

from mlusim.host import blas as blas_threads
from ..parallel import even_ranges, map_parallel, thread_count
from .columns import (as_3d, gather_columns, gather_rows, gather_samples, scatter_columns, scatter_rows,
                      scatter_samples)

#: target bytes of one block of the im2col matrix: what a thread gathers stays in its L2 cache while its GEMM reads it
COLUMN_BLOCK_BYTES = 1 << 18
#: fewest output positions per block (smaller GEMMs run far below the BLAS's peak)
MIN_BLOCK_POSITIONS = 256
#: problems of at most this many im2col elements run on the calling thread (handing work to the pool costs more)
INLINE_COLUMN_ELEMENTS = 1 << 15
#: at most this many bytes of im2col matrices in one run of whole samples (one gather, one batched GEMM: `sample_runs`)
#: ... and at most a batch's share of RUNS_PER_THREAD runs per thread: each run costs its thread the GIL a few times,
#: and a thread that finds the GIL taken waits to be woken, so fewer, larger runs beat runs that fit L2
#: (docs/cnnl_convolution.md)
SAMPLE_RUN_BYTES = 8 << 20
RUNS_PER_THREAD = 2
#: samples whose im2col matrix is larger go by blocks of lines (`Geometry.units`), which bounds the buffers' memory;
#: up to here whole samples are faster even where a sample's matrix outgrows L2, as a block of lines costs several
#: Python calls of its own (docs/cnnl_convolution.md)
SAMPLE_MATRIX_LIMIT_BYTES = 8 << 20
#: above this many output channels (one group) the GEMMs of blocks are too small for the BLAS: the whole batch's
#: im2col matrix is gathered on the pool and multiplied in one multi-threaded GEMM
WIDE_CHANNELS = 128
#: ... while that matrix stays under this many bytes
WIDE_MATRIX_BYTES = 1 << 28


class Geometry:
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


def sample_runs(geo, itemsize):
    """Runs (first, stop) of whole samples whose im2col matrices together hold at most SAMPLE_RUN_BYTES (at least
    RUNS_PER_THREAD runs per thread when the batch allows; a larger sample runs alone), or None when one sample's
    matrix is larger than SAMPLE_MATRIX_LIMIT_BYTES (`Geometry.units` cuts samples then)."""
    sample_bytes = geo.columns * geo.positions * itemsize
    if sample_bytes > SAMPLE_MATRIX_LIMIT_BYTES:
        return None
    per = max(1, min(SAMPLE_RUN_BYTES // max(1, sample_bytes), -(-geo.batch // (RUNS_PER_THREAD * thread_count()))))
    return [(n, min(n + per, geo.batch)) for n in range(0, geo.batch, per)]


def channel_first(array):
    """(N, C, L) view of a (N, *S, C) array whose memory is (N, C, *S) C-contiguous, else None."""
    moved = np.moveaxis(array, -1, 1)
    if not moved.flags.c_contiguous:
        return None
    return moved.reshape(array.shape[0], array.shape[-1], -1)


def channel_rows(array):
    """(N, C, L) view of a (N, *S, C) array (copied when its strides do not allow it)."""
    first = channel_first(array)
    if first is not None:
        return first
    return np.moveaxis(array.reshape(array.shape[0], -1, array.shape[-1]), -1, 1)


def whole_fits(geo, itemsize):
    """True when the whole batch's im2col matrix (one group) stays under WIDE_MATRIX_BYTES."""
    return geo.groups == 1 and geo.batch * geo.positions * geo.columns * itemsize <= WIDE_MATRIX_BYTES


def wide(geo, channels_out, itemsize):
    """True when one whole-batch GEMM beats per-block GEMMs (see WIDE_CHANNELS)."""
    return channels_out > WIDE_CHANNELS and whole_fits(geo, itemsize)


def whole_matrix(geo, flat, flat_strides, row_layout, dtype):
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


def rows_matrix(grads):
    """dy (N, *So, Co) as a (N*L, Co) matrix (a copy when its memory is not channel-last)."""
    return np.ascontiguousarray(grads).reshape(-1, grads.shape[-1])
