"""Convolution on channel-last arrays: forward, backward data, backward filter (`cnnlConvolution*`).

Shapes: x (N, *S, C), w (Co, *K, C/groups), y (N, *So, Co), for 1, 2 or 3 spatial axes S; any strides (the API layer
passes NCHW tensors as transposed views). `pads` is one (before, after) pair per spatial axis.

Method: im2col + GEMM. The padded input's sliding windows are a strided view (N, *So, *K, C) (no copy); blocks of
output rows copy their windows into a dense (rows, K*C) matrix and multiply it by the (K*C, Co) weight matrix on
the host BLAS. Blocks run on the kernel thread pool, so the window copies of one block overlap the GEMM of another.
A 1x1 convolution with stride 1 and no padding is one GEMM on the input itself. Depthwise convolutions (one input
channel per group) take a direct path: one multiply-add of the whole tensor per kernel position.
Numerics: half/bfloat16 compute in float32, float32 and float64 in themselves; one rounding into the output.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import blas_threads
from .dtypes import compute_dtype
from .parallel import map_parallel, thread_count
from .staging import load, store

#: target bytes of one block's window matrix when window copies run apart from the GEMM
BLOCK_BYTES = 1 << 20
#: target bytes of one block's window matrix when each pool thread copies and multiplies its own blocks (stays in
#: L2 while the GEMM reads it)
FUSED_BLOCK_BYTES = 1 << 19
#: at most this many output channels per group, the window copies cost as much as the GEMM: copy and multiply
#: block by block on every core; above it, copy in parallel and run one big multi-threaded GEMM
FUSED_MAX_CHANNELS = 128
#: fewest GEMM rows per fused block
FUSED_MIN_ROWS = 256


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


def _row_blocks(batch, first_extent, row_elements, itemsize):
    """(n, start, stop) blocks over the batch and the first output spatial axis, about BLOCK_BYTES each."""
    step = min(first_extent, max(1, BLOCK_BYTES // max(1, row_elements * itemsize)))
    return [(n, start, min(start + step, first_extent)) for n in range(batch) for start in range(0, first_extent, step)]


def _window_matrix(windows):
    """The dense (rows, K*C) im2col matrix of a window view (N, *So, *K, C), copied in parallel blocks."""
    batch, out_spatial = windows.shape[0], windows.shape[1:1 + (windows.ndim - 2) // 2]
    matrix = np.empty(windows.shape, windows.dtype)
    row_elements = math.prod(windows.shape[2:])
    blocks = _row_blocks(batch, out_spatial[0], row_elements, windows.dtype.itemsize)

    def copy(block):
        n, start, stop = block
        matrix[n, start:stop] = windows[n, start:stop]

    map_parallel(copy, blocks)
    return matrix.reshape(batch * math.prod(out_spatial), -1)


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


def _result_buffer(out, dtype, alpha, beta):
    """Where the convolution sums go: `out` itself when it is dense and of the compute dtype."""
    if out.dtype == dtype and out.flags.c_contiguous and beta == 0:
        return out
    return np.empty(out.shape, dtype)


def _no_products(out, dtype, alpha, beta, bias):
    """The result when a convolution sums over nothing (an empty batch, no input channels, an empty window) or
    alpha is 0: beta * out + bias (x and w are not read: their NaN and inf do not reach out, as in BLAS)."""
    if out.size:
        _epilogue(np.zeros(out.shape, dtype), out, alpha, beta, bias)


def conv_forward(x, w, out, pads, strides, dilations, groups, alpha=1.0, beta=0.0, bias=None):
    """out = alpha * conv(x, w) + beta * out + bias; see the module doc for layouts and numerics."""
    dtype = compute_dtype(x.dtype)
    if out.size == 0 or x.size == 0 or w.size == 0 or alpha == 0:  # alpha 0: x and w are not read (as BLAS)
        return _no_products(out, dtype, alpha, beta, bias)
    kernel, out_spatial = w.shape[1:-1], out.shape[1:-1]
    xp = _padded(x, pads, dtype)
    result = _result_buffer(out, dtype, alpha, beta)
    channels_in, channels_out = x.shape[-1], w.shape[0]
    if _is_depthwise(w, groups, channels_in):
        _depthwise_forward(xp, load(w, dtype), result, kernel, out_spatial, strides, dilations)
    else:
        wmat = _weight_matrix(w, dtype)
        pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in strides) and xp.flags.c_contiguous
        if pointwise and groups == 1 and result.flags.c_contiguous:
            np.matmul(xp.reshape(-1, channels_in), wmat.T, out=result.reshape(-1, channels_out))
        elif groups == 1 and channels_out <= FUSED_MAX_CHANNELS and blas_threads.available():
            _fused_window_gemm(_windows(xp, kernel, out_spatial, strides, dilations), wmat, result)
        else:
            windows = _windows(xp, kernel, out_spatial, strides, dilations)
            for gi, go in zip(_group_slices(groups, channels_in), _group_slices(groups, channels_out)):
                matrix = _window_matrix(windows[..., gi])
                target = result[..., go]
                if target.flags.c_contiguous:
                    np.matmul(matrix, wmat[go].T, out=target.reshape(-1, go.stop - go.start))
                else:
                    target[...] = (matrix @ wmat[go].T).reshape(target.shape)
    _epilogue(result, out, alpha, beta, bias)


def _fused_window_gemm(windows, wmat, result):
    """result (N, *So, Co) = im2col(windows) @ wmat.T, each pool thread copying blocks of output lines (a line is
    one index of the batch and the first spatial axis) into a small matrix and multiplying it with single-threaded
    BLAS, so the copies of one core overlap the GEMMs of the other."""
    batch, first = windows.shape[0], windows.shape[1]
    out_spatial = result.shape[1:-1]
    per_line = math.prod(out_spatial[1:]) if len(out_spatial) > 1 else 1
    columns = wmat.shape[1]
    total_lines = batch * first
    lines = max(1, FUSED_BLOCK_BYTES // (per_line * columns * windows.itemsize), -(-FUSED_MIN_ROWS // per_line))
    lines = min(lines, -(-total_lines // thread_count()))
    starts = list(range(0, total_lines, lines))
    flat = result.reshape(-1, result.shape[-1])
    weights = np.ascontiguousarray(wmat.T)

    def run(chunk):
        buffer = np.empty((lines * per_line, columns), windows.dtype)
        with blas_threads.single_threaded_blas():
            for start in chunk:
                stop, row, line = min(start + lines, total_lines), 0, start
                while line < stop:  # the block's lines may span images
                    n, a = divmod(line, first)
                    b = min(first, a + stop - line)
                    count = (b - a) * per_line
                    buffer[row:row + count].reshape(windows[n, a:b].shape)[...] = windows[n, a:b]
                    row, line = row + count, line + b - a
                np.matmul(buffer[:row], weights, out=flat[start * per_line:stop * per_line])

    runs = [list(chunk) for chunk in np.array_split(np.array(starts), thread_count()) if len(chunk)]
    map_parallel(run, runs)


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
    padded_shape = (dx.shape[0],) + tuple(n + b + a for n, (b, a) in zip(dx.shape[1:-1], pads)) + (dx.shape[-1],)
    grad_padded = np.zeros(padded_shape, dtype)
    dy_values = load(dy, dtype)
    channels_in, channels_out = dx.shape[-1], w.shape[0]
    offsets = [window for _, window in _kernel_offsets(kernel, out_spatial, strides, dilations)]
    if _is_depthwise(w, groups, channels_in):
        multiplier = channels_out // channels_in
        taps = load(w, dtype).reshape(channels_in, multiplier, -1)

        def scatter(n):
            grad = dy_values[n].reshape(tuple(out_spatial) + (channels_in, multiplier))
            for index, window in enumerate(offsets):
                grad_padded[(n,) + window] += np.einsum("...cm,cm->...c", grad, taps[:, :, index])

        map_parallel(scatter, range(dx.shape[0]))
    else:
        wmat = _weight_matrix(w, dtype)
        per_group = channels_in // groups
        for gi, go in zip(_group_slices(groups, channels_in), _group_slices(groups, channels_out)):
            cols = dy_values[..., go].reshape(-1, go.stop - go.start) @ wmat[go]
            cols = cols.reshape(dy.shape[:-1] + (len(offsets), per_group))

            def scatter(n, gi=gi, cols=cols):
                for index, window in enumerate(offsets):
                    grad_padded[(n,) + window + (gi,)] += cols[n, ..., index, :]

            map_parallel(scatter, range(dx.shape[0]))
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(dx.shape[1:-1], pads)) + (slice(None),)
    result = grad_padded[inner]
    if alpha != 1 or beta != 0:
        result = result.copy()
    _epilogue(result, dx, alpha, beta, None)


def conv_backward_filter(x, dy, dw, pads, strides, dilations, groups, alpha=1.0, beta=0.0):
    """dw = alpha * d(sum(conv(x, w) * dy))/dw + beta * dw: the gradient of conv_forward with respect to w."""
    dtype = compute_dtype(x.dtype)
    if dw.size == 0 or x.size == 0 or dy.size == 0 or alpha == 0:  # an empty batch gives no gradient: beta * dw
        return _no_products(dw, dtype, alpha, beta, None)
    kernel, out_spatial = dw.shape[1:-1], dy.shape[1:-1]
    xp = _padded(x, pads, dtype)
    dy_values = load(dy, dtype)
    channels_in, channels_out = x.shape[-1], dw.shape[0]
    if _is_depthwise(dw, groups, channels_in):
        result = _depthwise_filter(xp, dy_values, kernel, out_spatial, strides, dilations)
    else:
        windows = _windows(xp, kernel, out_spatial, strides, dilations)
        result = np.empty((channels_out, math.prod(kernel) * (channels_in // groups)), dtype)
        for gi, go in zip(_group_slices(groups, channels_in), _group_slices(groups, channels_out)):
            grad = dy_values[..., go].reshape(-1, go.stop - go.start)
            np.matmul(grad.T, _window_matrix(windows[..., gi]), out=result[go])
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
