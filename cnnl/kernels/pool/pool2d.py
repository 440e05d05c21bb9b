"""2-D pooling on channel-last arrays x (N, H, W, C): max (with input-plane indices), average, their backward
passes, adaptive average and max, and the separable weighted sum interpolation drives (see the package doc)."""
import numpy as np

from ..dtypes import compute_dtype
from ..parallel import thread_count
from .loops import MAX_PROPAGATE, MAX_SKIP_NAN, SUM, max_scatter, window_kernel
from .operands import Target, as_rows, blocks, flat_memory, layout_of, run_blocks, source_operand
from .taps import TapAxis, adaptive_axis


def windowed(src, out, axes, op, alpha=1.0, beta=0.0, indices=None):
    """out (N, Ho, Wo, C) = alpha * (separable window reduction `op` of src (N, H, W, C) over `axes`) + beta * out;
    `indices` (optional, (N, Ho, Wo, C) integers) receives the max positions."""
    if out.size == 0:
        return
    dtype = compute_dtype(src.dtype)
    force = False
    while True:  # all operands channel-last or all width-innermost, else C-contiguous copies
        flat, ss = source_operand(src, dtype, (out, indices), force)
        target = Target(out, dtype, beta != 0, force)
        where = Target(indices, np.dtype(np.int64), False, force) if indices is not None else None
        layouts = {layout_of(ss, src.shape), layout_of(target.strides, out.shape)}
        if where is not None:
            layouts.add(layout_of(where.strides, out.shape))
        if len(layouts) == 1 and None not in layouts:
            break
        force = True
    (layout,) = layouts
    batch, rows, cols, channels = out.shape
    source, ss = as_rows(flat, ss, src.shape, layout)
    result, ds = as_rows(target.flat, target.strides, out.shape, layout)
    if where is not None:
        index, xs = as_rows(where.flat, where.strides, out.shape, layout)
    else:
        index, xs = np.empty((0, result.shape[1]), np.int64), (0, 0, 0, 0)
    units = batch * rows * (1 if layout == "channels" else channels)
    first, second = axes
    kind = flat.dtype.type
    args = (source, ss, result, ds, index, xs, first.taps, first.weights_as(kind), first.count, first.first,
            second.taps, second.weights_as(kind), second.count, second.first, out.shape, src.shape[2],
            layout == "channels", op, float(alpha), float(beta), first.is_pairs() and second.is_pairs())
    run_blocks(lambda lo, hi: window_kernel(*args, lo, hi), blocks(units, src.size + out.size))
    target.finish()
    if where is not None:
        where.finish()


def separable_sum(x, out, axes, alpha=1.0, beta=0.0):
    """out (N, Ho, Wo, C) = alpha * (sum over the taps of both `axes` (TapAxis) of weighted x (N, H, W, C)) +
    beta * out."""
    windowed(x, out, axes, SUM, alpha, beta)


def max_pool_forward(x, out, windows, indices=None, propagate_nan=True, alpha=1.0, beta=0.0):
    """out = alpha * max over each window + beta * out; `indices` (optional) receives the argmax positions."""
    windowed(x, out, windows.axes(), MAX_PROPAGATE if propagate_nan else MAX_SKIP_NAN, alpha, beta, indices)


def avg_pool_forward(x, out, windows, include_padding, alpha=1.0, beta=0.0):
    """out = alpha * mean over each window + beta * out."""
    windowed(x, out, windows.axes(include_padding), SUM, alpha, beta)


def avg_pool_backward(dy, dx, windows, include_padding, alpha=1.0, beta=0.0):
    """dx = alpha * (each window's dy / count spread over the window) + beta * dx."""
    windowed(dy, dx, windows.axes(include_padding, transposed=True), SUM, alpha, beta)


def max_pool_backward(dy, indices, dx, alpha=1.0, beta=0.0):
    """dx = alpha * (dy summed into the input positions `indices` name) + beta * dx."""
    if dx.size == 0:
        return
    dtype = compute_dtype(dy.dtype)
    grads, ys = source_operand(dy, dtype, (dx,))
    where = flat_memory(indices)
    if where is None or np.may_share_memory(indices, dx):
        where = flat_memory(np.ascontiguousarray(indices))
    index, xs = where
    index = index.view()
    index.flags.writeable = False
    batch, height, width, channels = dx.shape
    target = Target(dx, dtype, beta != 0)
    ds = target.strides
    if height > 1 and width > 1 and ds[1] != width * ds[2]:  # positions h * W + w need H stride = W * W stride
        target = Target(dx, dtype, beta != 0, force=True)
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
    bad = sum(run_blocks(lambda lo, hi: max_scatter(*args, lo, hi), blocks(units, dx.size + dy.size)))
    if bad:
        raise ValueError(f"{bad} max pooling indices lie outside the input plane of {height * width} positions")
    target.finish()


def adaptive_avg_forward(x, out):
    """out (N, Ho, Wo, C) = the adaptive average pooling of x (N, H, W, C)."""
    axes = [adaptive_axis(n, o, False) for n, o in zip(x.shape[1:3], out.shape[1:3])]
    windowed(x, out, axes, SUM)


def adaptive_max_forward(x, out, indices=None):
    """out (N, Ho, Wo, C) = the adaptive max pooling of x (N, H, W, C), NaN propagating; `indices` (optional)
    receives the argmax positions h * W + w (the first maximum of each bin)."""
    axes = [adaptive_axis(n, o, False) for n, o in zip(x.shape[1:3], out.shape[1:3])]
    windowed(x, out, axes, MAX_PROPAGATE, indices=indices)


def adaptive_avg_backward(dy, dx):
    """dx (N, H, W, C) = the gradient of adaptive_avg_forward for dy (N, Ho, Wo, C)."""
    axes = [adaptive_axis(n, o, True) for n, o in zip(dx.shape[1:3], dy.shape[1:3])]
    windowed(dy, dx, axes, SUM)


def depth_sum(values, depth_axis, depth_out, dtype=None):
    """(N, depth_out, H, W, C) in `dtype` (default values'): the weighted depth taps `depth_axis` (a TapAxis) of
    values (N, D, H, W, C), the depth pass of 3-D pooling and interpolation (a separable sum over (D, H * W))."""
    batch, depth, rows, cols, channels = values.shape
    flat = values.reshape(batch, depth, rows * cols, channels)
    target = np.empty((batch, depth_out, rows * cols, channels), values.dtype if dtype is None else dtype)
    separable_sum(flat, target, [depth_axis, TapAxis.identity(rows * cols)])
    return target.reshape(batch, depth_out, rows, cols, channels)
