"""The im2col + GEMM paths of a convolution, one per direction: forward (weights @ columns), backward data (the
transposed weights @ dy, summed back into the windows: col2im) and backward filter (dy @ columns transposed), each
by blocks of lines, by runs of whole samples, or (wide layers) as one whole-batch GEMM."""
import numpy as np

from mlusim.host import blas as blas_threads
from ..parallel import map_parallel
from .columns import flat_operand
from .geometry import channel_rows, rows_matrix, sample_runs, whole_fits, whole_matrix, wide


def _wide_forward(geo, flat, flat_strides, row_layout, wmat, result, bias):
    matrix = whole_matrix(geo, flat, flat_strides, row_layout, wmat.dtype)
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
        channel_rows(result)[...] = product.reshape(wmat.shape[0], geo.batch, -1).transpose(1, 0, 2)


def column_forward(geo, values, wmat, result, bias=None):
    """result (N, *So, Co) = wmat @ im2col(values) per group (+ bias (Co,) when given, added to each block while
    it is in cache); result is C-contiguous or channel-first."""
    flat, flat_strides = flat_operand(values, writable=False)
    row_layout = geo.row_layout(flat_strides)
    if wide(geo, wmat.shape[0], values.itemsize):
        return _wide_forward(geo, flat, flat_strides, row_layout, wmat, result, bias)
    target = channel_rows(result)  # a view (N, Co, L) either way
    target_rows = np.moveaxis(target, 1, 2)  # (N, L, Co)
    channel_first = target.strides[-1] == target.itemsize or target.shape[-1] == 1
    if geo.groups == 1 and channel_first and not row_layout and target.flags.c_contiguous:
        runs = sample_runs(geo, values.itemsize)
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


def column_backward_data(geo, grads, wmat, target):
    """Sum the data gradient into `target` (N, *S, C), zeroed, dense: per sample and group, the columns
    wmat.T @ dy added back into their windows (col2im)."""
    flat, flat_strides = flat_operand(target, writable=True)
    row_layout = geo.row_layout(flat_strides)
    if wide(geo, wmat.shape[0], target.itemsize):  # one GEMM for the batch's columns, col2im per sample
        grad_rows = rows_matrix(grads)
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
    source = channel_rows(grads)
    runs = sample_runs(geo, target.itemsize) if geo.groups == 1 and not row_layout else None
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


def column_backward_filter(geo, values, grads, dtype):
    """The (Co, K * C/groups) weight gradient: per group, dy @ im2col(x).T summed over samples and line blocks."""
    flat, flat_strides = flat_operand(values, writable=False)
    row_layout = geo.row_layout(flat_strides)
    channels_out = grads.shape[-1]
    itemsize = np.dtype(dtype).itemsize
    if wide(geo, channels_out, itemsize) or (row_layout and whole_fits(geo, itemsize)):
        # one GEMM summing over the whole batch (NHWC: dy is already its (N*L, Co) matrix): the BLAS's best shape
        matrix = whole_matrix(geo, flat, flat_strides, row_layout, dtype)
        grad_rows = rows_matrix(grads)
        with blas_threads.gemm_threads(matrix.size * channels_out):
            return grad_rows.T @ (matrix if row_layout else matrix.T)
    source = channel_rows(grads)
    runs = sample_runs(geo, itemsize) if geo.groups == 1 and not row_layout else None
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
