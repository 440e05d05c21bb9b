"""Normalisations: batch norm (training, inference, backward), layer norm, RMS norm and group norm (forward and
backward), the numerics of `cnnlBatchNorm*`, `cnnlLayerNorm*`, `cnnlRmsNorm*`, `cnnlGroupNorm*`.

Every one normalises rows of a matrix: x_hat = (x - mean) * rstd with rstd = 1 / sqrt(var + eps) (RMS norm: no
mean, rstd = 1 / sqrt(mean(x^2) + eps)); variances are biased (divided by the row length). The backward of a row
normalisation with upstream gradient g = dy * weight is dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)) (RMS
norm without the mean(g) term). The mean of a row (layer norm) or group (group norm) holding an infinity is NaN, as
torch's running (Welford) mean makes it (its update meets inf - inf), not the sum's +-inf; batch norm's channel
means stay +-inf there, as torch's two-pass statistics give. Statistics accumulate in float32 (float64 for double) with numpy's pairwise sums
(the forward of C-contiguous rows: one vectorised numba loop per row summing in float64); half and bfloat16 are
computed in float32 and rounded once. Row blocks run on the kernel thread pool.
"""
import math

import numpy as np
from numba import njit

from .channel_stats import (channel_affine, channel_centred_squares, channel_grad_sums, channel_input_grad,
                            channel_sums)
from .dtypes import compute_dtype
from .parallel import (STAGED_BLOCK, detach_inputs, even_ranges, map_parallel, run_blocked, same_view,
                       thread_count)
from .staging import blend_store, load, store


def _row_blocks(rows, cols):
    step = max(1, STAGED_BLOCK // max(cols, 1))
    return [slice(start, min(start + step, rows)) for start in range(0, rows, step)]


def _as_matrix(array, rows):
    """`array` as a (rows, cols) view when its strides allow, else a copy (for inputs). (numpy cannot infer -1 for
    an empty array, so the row length is computed here.)"""
    return array.reshape(rows, array.size // rows if rows else 0)


class _Output:
    """A (rows, cols) matrix to write an output through: a view of `out` when possible, else a buffer stored back."""

    def __init__(self, out, rows, dtype):
        self.out = out
        cols = out.size // rows if rows else 0
        try:
            self.matrix = out.reshape((rows, cols), copy=False) if out.dtype == dtype else None
        except ValueError:
            self.matrix = None
        if self.matrix is None:
            self.matrix = np.empty((rows, cols), dtype)

    def finish(self):
        if not np.shares_memory(self.matrix, self.out):
            store(self.matrix.reshape(self.out.shape), self.out)


def _stats(values, centered, eps):
    if values.shape[1] == 0:  # rows of no elements (as torch): mean NaN, variance 0
        nan = np.full((values.shape[0], 1), np.nan if centered else 0, values.dtype)
        return nan, np.full_like(nan, 1.0 / np.sqrt(values.dtype.type(eps))), values
    if centered:
        mean = values.mean(axis=-1, keepdims=True)
        mean[np.isinf(mean)] = np.nan  # a row holding an infinity: torch's running (Welford) mean is NaN
    else:
        mean = np.zeros((values.shape[0], 1), values.dtype)
    centred = values - mean if centered else values
    variance = np.einsum("ij,ij->i", centred, centred)[:, None] / max(values.shape[1], 1)
    return mean, 1.0 / np.sqrt(variance + values.dtype.type(eps)), centred


@njit(nogil=True, cache=True, fastmath={"reassoc", "nsz", "contract"}, error_model="numpy")
def _normalise_rows(x, y, weight, bias, centered, eps, means, rstds):
    """y[r] = (x[r] - mean) * rstd (* weight + bias: `weight` / `bias` of no elements are not applied) for the C-
    contiguous rows of x (at least one element each); row statistics summed in float64, in two passes (as the
    numpy path: mean first, then the centred squares, each squared in the compute dtype). Vectorises; NaN and inf
    propagate."""
    rows, cols = x.shape
    for r in range(rows):
        row = x[r]
        mean = 0.0
        if centered:
            for j in range(cols):
                mean += np.float64(row[j])
            mean /= cols
            if mean == np.inf or mean == -np.inf:  # as _stats: torch's running mean of such a row is NaN
                mean = np.nan
        means[r] = mean
        m = means[r]  # rounded to the compute dtype, as the numpy path's statistics
        squares = 0.0
        for j in range(cols):
            d = row[j] - m
            squares += np.float64(d * d)  # squared in the compute dtype: overflows to inf where torch's does
        rstds[r] = 1.0 / np.sqrt(squares / cols + eps)
        s = rstds[r]
        out = y[r]
        if weight.size and bias.size:
            for j in range(cols):
                out[j] = (row[j] - m) * s * weight[j] + bias[j]
        elif weight.size:
            for j in range(cols):
                out[j] = (row[j] - m) * s * weight[j]
        elif bias.size:
            for j in range(cols):
                out[j] = (row[j] - m) * s + bias[j]
        else:
            for j in range(cols):
                out[j] = (row[j] - m) * s


def rows_forward(x, y, rows, eps, centered, weight=None, bias=None, mean_out=None, rstd_out=None):
    """Normalise each of `rows` rows of x into y, then y = y * weight + bias (weight and bias span a row, or None);
    the row means and rstds go to `mean_out` / `rstd_out` (each `rows` elements, or None)."""
    dtype = compute_dtype(x.dtype)
    source = _as_matrix(x, rows)
    target = _Output(y, rows, dtype)
    w = None if weight is None else load(weight, dtype).reshape(1, -1)
    b = None if bias is None else load(bias, dtype).reshape(1, -1)
    means, rstds = np.empty((rows, 1), dtype), np.empty((rows, 1), dtype)

    none = np.empty(0, dtype)
    w_row, b_row = (none if v is None else np.ascontiguousarray(v.reshape(-1)) for v in (w, b))

    def run(block):
        values, into = load(source[block], dtype), target.matrix[block]
        if values.shape[1] and values.flags.c_contiguous and into.flags.c_contiguous:
            _normalise_rows(values, into, w_row, b_row, centered, float(eps), means[block, 0], rstds[block, 0])
            return
        mean, rstd, centred = _stats(values, centered, eps)
        result = centred * rstd
        if w is not None:
            result *= w
        if b is not None:
            result += b
        target.matrix[block] = result
        means[block], rstds[block] = mean, rstd

    map_parallel(run, _row_blocks(rows, source.shape[1]))
    target.finish()
    for values, out in ((means, mean_out), (rstds, rstd_out)):
        if out is not None:
            store(values.reshape(out.shape), out)


def rows_backward(x, dy, dx, rows, centered, mean, rstd, weight=None, dweight=None, dbias=None):
    """dx of `rows_forward` for upstream dy, from the saved row `mean` (None for RMS norm) and `rstd`; with weight,
    dweight = sum over rows of dy * x_hat and dbias = sum of dy (each written when not None)."""
    dtype = compute_dtype(x.dtype)
    source, grads = _as_matrix(x, rows), _as_matrix(dy, rows)
    target = _Output(dx, rows, dtype)
    w = None if weight is None else load(weight, dtype).reshape(1, -1)
    means = np.zeros((rows, 1), dtype) if mean is None else load(mean, dtype).reshape(rows, 1)
    rstds = load(rstd, dtype).reshape(rows, 1)

    def run(block):
        x_hat = (load(source[block], dtype) - means[block]) * rstds[block]
        g = load(grads[block], dtype)
        scaled = g * w if w is not None else g
        count = max(x_hat.shape[1], 1)  # rows of no elements: no mean-of-empty warning
        correction = x_hat * (np.einsum("ij,ij->i", scaled, x_hat)[:, None] / count)
        if centered:
            correction += scaled.sum(axis=-1, keepdims=True) / count
        target.matrix[block] = (scaled - correction) * rstds[block]
        return (g * x_hat).sum(axis=0), g.sum(axis=0)

    partials = map_parallel(run, _row_blocks(rows, source.shape[1]))
    target.finish()
    for index, out in ((0, dweight), (1, dbias)):  # sums over no rows are 0
        if out is not None:
            total = np.sum([p[index] for p in partials], axis=0) if partials else np.zeros(out.size, dtype)
            store(np.asarray(total).reshape(out.shape), out)


# ---- batch norm: per-channel statistics over every other axis --------------------------------------------------

def _channel_shape(ndim, axis, channels):
    shape = [1] * ndim
    shape[axis] = channels
    return tuple(shape)


def _pcq(shape, channel_axis):
    return math.prod(shape[:channel_axis]), shape[channel_axis], math.prod(shape[channel_axis + 1:])


def _channel_view(array, channel_axis, dtype=None):
    """`array` (in `dtype` when given) as a read-only (P, C, Q) view, P and Q the products of the axes before and
    after the channel axis (a copy when the strides do not allow the view)."""
    values = array if dtype is None else load(array, dtype)
    view = np.ascontiguousarray(values.reshape(_pcq(values.shape, channel_axis))).view()  # one numba type per dtype
    view.flags.writeable = False
    return view


def _channel_output(out, channel_axis, dtype, alpha, beta, sources):
    """(P, C, Q) writable array to compute an output into: `out`'s own memory when it is of the compute dtype, not
    blended (alpha 1, beta 0) and apart from `sources` (or the identical view of one), else a buffer."""
    shape = _pcq(out.shape, channel_axis)
    if out.dtype == dtype and alpha == 1 and beta == 0 and not any(
            np.may_share_memory(out, source) and not same_view(out, source) for source in sources):
        try:
            view = out.reshape(shape, copy=False)
            if view.flags.c_contiguous:  # (one numba type per dtype)
                return view
        except ValueError:
            pass
    return np.empty(out.shape, dtype).reshape(shape)


#: batch norm over at most this many elements runs on the calling thread: its passes are a few vectorised
#: operations per element, and each of them handed to the pool costs more than a second core saves
#: (docs/cnnl_normalization.md)
CHANNEL_INLINE_ELEMENTS = 1 << 21


def _channel_blocks(values):
    """(p0, p1, c0, c1) blocks of a (P, C, Q) view for the pool: channels apart when Q > 1, rows apart in
    channel-last memory (Q = 1), where a block of channels would sweep every row; one block when small."""
    rows, channels, inner = values.shape
    if values.size <= CHANNEL_INLINE_ELEMENTS:
        return [(0, rows, 0, channels)]
    if inner > 1 and channels > 1:
        return [(0, rows, lo, hi) for lo, hi in even_ranges(channels, 4 * thread_count())]
    return [(lo, hi, 0, channels) for lo, hi in even_ranges(rows, 4 * thread_count())]


def _blockwise(kernel, blocks):
    """kernel(p0, p1, c0, c1) over the blocks (on this thread when there is one)."""
    map_parallel(lambda block: kernel(*block), blocks)


def _summed(kernel, blocks, channels, outputs=1):
    """Per channel float64 sums: kernel(p0, p1, c0, c1, *partials) writes its block's partial sums into rows of
    zeroed (blocks, channels) arrays; their sum over blocks."""
    partials = [np.zeros((len(blocks), channels)) for _ in range(outputs)]
    map_parallel(lambda i: kernel(*blocks[i], *(part[i] for part in partials)), range(len(blocks)))
    return [part[0] if len(blocks) == 1 else part.sum(axis=0) for part in partials]


def batch_norm_training(x, weight, bias, y, channel_axis, eps, momentum, running_mean=None, running_var=None,
                        save_mean=None, save_invstd=None, alpha=1.0, beta=0.0):
    """y = alpha * ((x - mean) * invstd * weight + bias) + beta * y with batch statistics per channel; updates
    running_mean/var = (1 - momentum) * running + momentum * batch (the unbiased variance) when given."""
    dtype = compute_dtype(x.dtype)
    channels = x.shape[channel_axis]
    count = math.prod(x.shape) // channels if channels else 0
    if count == 0:  # an empty batch (as torch): no output, running statistics unchanged; saved mean 0, var 0
        if save_mean is not None:
            store(np.zeros(channels), save_mean)
        if save_invstd is not None:
            store(np.full(channels, 1.0 / np.sqrt(eps)), save_invstd)
        return
    values = _channel_view(x, channel_axis, dtype)
    blocks = _channel_blocks(values)
    (total,) = _summed(lambda *a: channel_sums(values, *a), blocks, channels)
    if x.dtype != dtype:  # half/bfloat16: torch sums them in float32, whose range the total takes (inf beyond)
        with np.errstate(over="ignore"):
            total = total.astype(np.float32).astype(np.float64)
    mean = total / count
    mean_cast = mean.astype(dtype)
    (variance,) = _summed(lambda *a: channel_centred_squares(values, mean_cast, *a), blocks, channels)
    variance /= max(count, 1)
    if dtype == np.float32:  # a float32 accumulator's range, as torch's: a variance beyond it is inf (invstd 0);
        # torch sums a float32 input's mean in double (finite where a float32 sum would overflow), as here
        with np.errstate(over="ignore"):
            variance = variance.astype(np.float32).astype(np.float64)
    invstd = 1.0 / np.sqrt(variance + eps)
    scale = (invstd * load(weight, np.float64).reshape(-1)).astype(dtype)
    shift = np.ascontiguousarray(load(bias, dtype).reshape(-1))
    target = _channel_output(y, channel_axis, dtype, alpha, beta, (x,))
    _blockwise(lambda *a: channel_affine(values, mean_cast, scale, shift, target, *a), blocks)
    if not np.shares_memory(target, y):
        blend_store(target.reshape(y.shape), y, alpha, beta)
    if running_mean is not None:
        store((1 - momentum) * load(running_mean, np.float64) + momentum * mean, running_mean)
    if running_var is not None:
        unbiased = variance * count / max(count - 1, 1)
        store((1 - momentum) * load(running_var, np.float64) + momentum * unbiased, running_var)
    if save_mean is not None:
        store(mean, save_mean)
    if save_invstd is not None:
        store(invstd, save_invstd)


def batch_norm_inference(x, weight, bias, mean, var, y, channel_axis, eps, alpha=1.0, beta=0.0):
    """y = alpha * ((x - mean) / sqrt(var + eps) * weight + bias) + beta * y with the given (running) statistics."""
    dtype = compute_dtype(x.dtype)
    shape = _channel_shape(x.ndim, channel_axis, x.shape[channel_axis])
    invstd = 1.0 / np.sqrt(load(var, np.float64) + eps)
    scale = invstd * load(weight, np.float64)
    shift = load(bias, np.float64) - load(mean, np.float64) * scale
    scale, shift = scale.astype(dtype).reshape(shape), shift.astype(dtype).reshape(shape)
    (source,) = detach_inputs(y, x)  # blocks of y may be written before a partly overlapping x is read

    def block(out, xb, scale_b, shift_b):
        values = load(xb, dtype) * scale_b
        values += shift_b
        blend_store(values, out, alpha, beta)
    run_blocked(block, x.shape, [y, source, scale, shift])


def batch_norm_backward(x, dy, weight, save_mean, save_invstd, dx, dweight, dbias, channel_axis,
                        alphas=(1.0, 0.0), param_alphas=(1.0, 0.0)):
    """Gradients of batch_norm_training from its saved mean and invstd: dx = weight * invstd / m *
    (m * dy - sum(dy) - x_hat * sum(dy * x_hat)), dweight = sum(dy * x_hat), dbias = sum(dy); each output is
    blended as alpha * gradient + beta * output ((alpha, beta) pairs for dx and for the parameters)."""
    dtype = compute_dtype(x.dtype)
    channels = x.shape[channel_axis]
    count = x.size // channels if channels else 0
    values, grads = _channel_view(x, channel_axis, dtype), _channel_view(dy, channel_axis, dtype)
    mean = np.ascontiguousarray(load(save_mean, dtype).reshape(-1))
    invstd = np.ascontiguousarray(load(save_invstd, dtype).reshape(-1))
    blocks = _channel_blocks(values)
    grad_bias, grad_weight = _summed(lambda *a: channel_grad_sums(values, grads, mean, invstd, *a), blocks, channels,
                                     outputs=2)
    scale = (load(weight, dtype).reshape(-1) * invstd) / dtype.type(max(count, 1))
    target = _channel_output(dx, channel_axis, dtype, *alphas, (x, dy))
    bias_cast, weight_cast = grad_bias.astype(dtype), grad_weight.astype(dtype)
    _blockwise(lambda *a: channel_input_grad(values, grads, mean, invstd, scale, dtype.type(count), bias_cast,
                                             weight_cast, target, *a), blocks)
    if not np.shares_memory(target, dx):
        blend_store(target.reshape(dx.shape), dx, *alphas)
    if dweight is not None:
        blend_store(grad_weight, dweight, *param_alphas)
    if dbias is not None:
        blend_store(grad_bias, dbias, *param_alphas)


# ---- group norm: rows are (sample, group); the affine transform is per channel ---------------------------------

def group_norm_forward(x, weight, bias, y, groups, eps, mean_out=None, rstd_out=None):
    """y = (x normalised over each (sample, group of channels and all spatial positions)) * weight[c] + bias[c];
    x is (N, C, *spatial)."""
    dtype = compute_dtype(x.dtype)
    batch, channels = x.shape[0], x.shape[1]
    per_sample = x.size // batch if batch else 0
    w = None if weight is None else load(weight, dtype).reshape(1, channels, 1)
    b = None if bias is None else load(bias, dtype).reshape(1, channels, 1)
    (source,) = detach_inputs(y, x)
    means, rstds = np.empty((batch, groups), dtype), np.empty((batch, groups), dtype)

    def run(block):  # whole samples: statistics per (sample, group), then the per-channel affine map, one store
        values = load(source[block], dtype).reshape(-1, groups, per_sample // groups)
        mean, rstd, centred = _stats(values.reshape(-1, per_sample // groups), True, eps)
        result = centred
        result *= rstd
        result = result.reshape(-1, channels, per_sample // channels)
        if w is not None:
            result *= w
        if b is not None:
            result += b
        store(result.reshape(y[block].shape), y[block])
        means[block], rstds[block] = mean.reshape(-1, groups), rstd.reshape(-1, groups)

    step = max(1, STAGED_BLOCK // max(per_sample, 1))
    if batch and per_sample:
        map_parallel(run, [slice(n, min(n + step, batch)) for n in range(0, batch, step)])
    for values, out in ((means, mean_out), (rstds, rstd_out)):
        if out is not None:
            store(values.reshape(out.shape), out)


def group_norm_backward(x, dy, weight, mean, rstd, dx, dweight, dbias, groups):
    """Gradients of group_norm_forward from its saved per-(sample, group) mean and rstd."""
    dtype = compute_dtype(x.dtype)
    batch, channels = x.shape[0], x.shape[1]
    rows = batch * groups
    shape = _channel_shape(x.ndim, 1, channels)
    grads = load(dy, dtype)
    scaled = grads * load(weight, dtype).reshape(shape) if weight is not None else grads
    rows_backward(x, np.ascontiguousarray(scaled), dx, rows, True, mean, rstd)
    if dweight is not None or dbias is not None:
        means = load(mean, dtype).reshape(batch, groups, 1)
        rstds = load(rstd, dtype).reshape(batch, groups, 1)
        x_hat = ((load(x, dtype).reshape(batch, groups, -1) - means) * rstds).reshape(x.shape)
        axes = (0,) + tuple(range(2, x.ndim))
        if dweight is not None:
            store((grads * x_hat).sum(axis=axes), dweight)
        if dbias is not None:
            store(grads.sum(axis=axes), dbias)

