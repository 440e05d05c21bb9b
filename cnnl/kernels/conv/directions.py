"""The three directions of a convolution (`cnnlConvolutionForward`, `BackwardData`, `BackwardFilter`): each picks
its path (nothing to sum, depthwise, a pointwise GEMM, im2col + GEMM), sums into a compute-dtype buffer (the output
itself when it can) and stores alpha * sums + beta * out (+ bias) once."""
import numpy as np

from mlusim.host import blas as blas_threads
from ..dtypes import compute_dtype
from ..staging import blend_store, load
from .columns import is_dense
from .depthwise import depthwise_data, depthwise_filter, depthwise_forward, is_depthwise
from .gemm import column_backward_data, column_backward_filter, column_forward
from .geometry import Geometry, channel_first
from .windows import padded


def _sums_nothing(out, operands, dtype, alpha, beta, bias=None) -> bool:
    """True, with out = beta * out + bias stored, when the convolution sums over nothing (an empty batch, no input
    channels, an empty window) or alpha is 0: the operands are not read, so their NaN and inf do not reach out (as
    in BLAS)."""
    if out.size and alpha != 0 and all(operand.size for operand in operands):
        return False
    if out.size:
        blend_store(np.zeros(out.shape, dtype), out, alpha, beta, bias)
    return True


def _weight_matrix(w, dtype):
    """(Co, K*Cg) dense weight matrix in the compute dtype."""
    return np.ascontiguousarray(load(w, dtype)).reshape(w.shape[0], -1)


def _result_buffer(out, dtype, beta, source):
    """Where the convolution sums go: `out` itself when it is dense (channel-last or channel-first), of the compute
    dtype and apart from the `source` the sums read."""
    if (out.dtype == dtype and beta == 0 and (out.flags.c_contiguous or channel_first(out) is not None)
            and not np.may_share_memory(out, source)):
        return out
    return np.empty(out.shape, dtype)


def _gradient_buffer(dx, dtype, alpha, beta, sources):
    """A zeroed (N, *S, C) compute-dtype buffer to sum a data gradient into: dx itself when it is dense, of the
    compute dtype, apart from the `sources` and not blended (alpha 1, beta 0); else a buffer in dx's memory order
    (channel-first or channel-last), so that storing it is a straight copy."""
    if (dx.dtype == dtype and alpha == 1 and beta == 0 and is_dense(dx)
            and not any(np.may_share_memory(dx, source) for source in sources)):
        dx[...] = 0
        return dx
    if channel_first(dx) is not None:
        return np.moveaxis(np.zeros((dx.shape[0], dx.shape[-1]) + dx.shape[1:-1], dtype), 1, -1)
    return np.zeros(dx.shape, dtype)


def conv_forward(x, w, out, pads, strides, dilations, groups, alpha=1.0, beta=0.0, bias=None):
    """out = alpha * conv(x, w) + beta * out + bias; see the package doc for layouts and numerics."""
    dtype = compute_dtype(x.dtype)
    if _sums_nothing(out, (x, w), dtype, alpha, beta, bias):
        return
    kernel, out_spatial = w.shape[1:-1], out.shape[1:-1]
    channels_in, channels_out = x.shape[-1], w.shape[0]
    depthwise = is_depthwise(w, groups, channels_in)
    pointwise = all(k == 1 for k in kernel) and all(s == 1 for s in strides) and not any(map(any, pads))
    xp = padded(x, pads, dtype) if depthwise or pointwise else None
    result = _result_buffer(out, dtype, beta, x)
    if depthwise:
        depthwise_forward(xp, load(w, dtype), result, kernel, out_spatial, strides, dilations)
    else:
        wmat = _weight_matrix(w, dtype)
        if pointwise and groups == 1 and xp.flags.c_contiguous and result.flags.c_contiguous:
            with blas_threads.gemm_threads(xp.size * channels_out):
                np.matmul(xp.reshape(-1, channels_in), wmat.T, out=result.reshape(-1, channels_out))
        else:
            fold = bias is not None and alpha == 1 and beta == 0  # out = conv + bias: add it block by block
            column_forward(Geometry(x.shape, out_spatial, kernel, pads, strides, dilations, groups),
                           load(x, dtype), wmat, result, load(bias, dtype).reshape(-1) if fold else None)
            if fold:
                bias = None
    blend_store(result, out, alpha, beta, bias)


def conv_backward_data(dy, w, dx, pads, strides, dilations, groups, alpha=1.0, beta=0.0):
    """dx = alpha * conv_transpose(dy, w) + beta * dx: the gradient of conv_forward with respect to x."""
    dtype = compute_dtype(dy.dtype)
    if _sums_nothing(dx, (dy, w), dtype, alpha, beta):
        return
    kernel, out_spatial = w.shape[1:-1], dy.shape[1:-1]
    dy_values = load(dy, dtype)
    if is_depthwise(w, groups, dx.shape[-1]):
        result = depthwise_data(dy_values, load(w, dtype), dx.shape, pads, kernel, out_spatial, strides, dilations)
        blend_store(result.copy() if alpha != 1 or beta != 0 else result, dx, alpha, beta)
        return
    geo = Geometry(dx.shape, out_spatial, kernel, pads, strides, dilations, groups)
    target = _gradient_buffer(dx, dtype, alpha, beta, (dy, w))
    column_backward_data(geo, dy_values, _weight_matrix(w, dtype), target)
    blend_store(target, dx, alpha, beta)


def conv_backward_filter(x, dy, dw, pads, strides, dilations, groups, alpha=1.0, beta=0.0):
    """dw = alpha * d(sum(conv(x, w) * dy))/dw + beta * dw: the gradient of conv_forward with respect to w."""
    dtype = compute_dtype(x.dtype)
    if _sums_nothing(dw, (x, dy), dtype, alpha, beta):  # an empty batch gives no gradient: beta * dw
        return
    kernel, out_spatial = dw.shape[1:-1], dy.shape[1:-1]
    dy_values = load(dy, dtype)
    if is_depthwise(dw, groups, x.shape[-1]):
        result = depthwise_filter(padded(x, pads, dtype), dy_values, kernel, out_spatial, strides, dilations)
    else:
        geo = Geometry(x.shape, out_spatial, kernel, pads, strides, dilations, groups)
        result = column_backward_filter(geo, load(x, dtype), dy_values, dtype)
    blend_store(result.reshape(dw.shape), dw, alpha, beta)
