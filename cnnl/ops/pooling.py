"""Pooling: the pooling descriptor (cnnlSetPooling2dDescriptor, _v2, cnnlSetPoolingNdDescriptor_v2),
cnnlPoolingForward(_v2), cnnlPoolingForwardWithIndex, cnnlPoolingBackward, cnnlAdaptivePoolingForward(_v2),
cnnlAdaptivePoolingBackward and their workspace queries.

Tensors are 4-D NHWC or NCHW, or 5-D NDHWC or NCDHW with a 3-D descriptor of cnnlSetPoolingNdDescriptor_v2 (what
DIOPI calls for 3-D max pooling: the numerics of 2-D pooling with a depth axis, max indices d * H * W + h * W + w);
HALF, BFLOAT16, FLOAT, DOUBLE. Modes: MAX, AVERAGE_COUNT_INCLUDE_PADDING, AVERAGE_COUNT_EXCLUDE_PADDING (numerics in
`cnnl.kernels.pool`). Max indices are INT16, INT32 or INT64 flat positions h * W + w in the input plane (INT16 only
when the plane has at most 32767 positions). cnnlPoolingBackward of MAX takes the indices as its `y` (an integer
tensor) or, given the pooled values (a float `y`), finds the maxima again from `x`. Adaptive pooling supports the
average modes and MAX; adaptive MAX writes the argmax positions (the same h * W + w, first maximum winning, NaN
propagating: PyTorch's adaptive_max_pool2d) to its index tensor, which it requires, and its backward takes them back
(index_desc, index).
"""
from __future__ import annotations

import math

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_int_sequence

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import pool as P
from ..kernels.dtypes import compute_dtype
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import is_null
from . import nn_common as N

_INDEX_TYPES = (E.CNNL_DTYPE_INT16, E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64)
_INDEX_LIMITS = {E.CNNL_DTYPE_INT16: 2 ** 15 - 1, E.CNNL_DTYPE_INT32: 2 ** 31 - 1, E.CNNL_DTYPE_INT64: 2 ** 63 - 1}
_AVERAGE = (E.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, E.CNNL_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING)


class PoolingDescriptor(Descriptor):
    """cnnlPoolingDescriptor_t: mode, NaN rule, window, padding, stride, dilation, ceil mode."""

    c_type = "cnnlPoolingDescriptor_t"
    setter = "cnnlSetPooling2dDescriptor_v2"

    def __init__(self):
        super().__init__()
        self.mode = E.CNNL_POOLING_MAX
        self.propagate_nan = False
        self.kernel = (1, 1)
        self.pads = ((0, 0), (0, 0))
        self.strides = (1, 1)
        self.dilations = (1, 1)
        self.ceil_mode = False

    def windows(self, x: TensorDescriptor, y: TensorDescriptor, x_arg: str, y_arg: str) -> P.Windows:
        """The window geometry for x and y; BAD_PARAM unless y has the pooled dims."""
        xd, yd = N.channel_last_dims(x), N.channel_last_dims(y)
        if len(xd) - 2 != len(self.kernel):
            raise ArgumentFault(f"{len(xd)} dims for a {len(self.kernel)}-D pooling descriptor", x_arg)
        spatial = tuple(P.pooled_extent(n, k, b, a, s, d, self.ceil_mode) for n, k, (b, a), s, d in
                        zip(xd[1:-1], self.kernel, self.pads, self.strides, self.dilations))
        if any(extent < 1 for extent in spatial):
            raise ArgumentFault(f"the window {list(self.kernel)} does not fit the padded input {list(xd[1:-1])}",
                                x_arg)
        expected = (xd[0],) + spatial + (xd[-1],)
        if yd != expected:
            raise ArgumentFault(f"dims (N, H, W, C) {list(yd)}; pooling gives {list(expected)}", y_arg)
        return P.Windows(xd[1:-1], spatial, self.kernel, self.strides, self.dilations, self.pads)


createPoolingDescriptor, destroyPoolingDescriptor = lifecycle(
    PoolingDescriptor, "cnnlCreatePoolingDescriptor", "cnnlDestroyPoolingDescriptor")


def _modes(mode, nan) -> dict:
    return dict(mode=as_enum(mode, "mode", E.POOLING_MODES, "cnnlPoolingMode_t"),
                propagate_nan=as_enum(nan, "maxpooling_nan_opt", E.NAN_PROPAGATIONS,
                                      "cnnlNanPropagation_t") == E.CNNL_PROPAGATE_NAN)


def _store(target: PoolingDescriptor, values: dict, pad_arg) -> None:
    """Set the descriptor from checked `values` once each axis's padding is at most half its window extent
    (PyTorch's rule; `pad_arg(axis, after)` names the argument of the larger side)."""
    for axis, ((before, after), k, d) in enumerate(zip(values["pads"], values["kernel"], values["dilations"])):
        extent = (k - 1) * d + 1
        if 2 * max(before, after) > extent:
            raise ArgumentFault(f"padding {max(before, after)} of axis {axis} exceeds half the window extent "
                                f"{extent}", pad_arg(axis, after > before))
    for name, value in values.items():
        setattr(target, name, value)
    target.is_set = True


_PADDING_2D = ("top_padding", "bottom_padding", "left_padding", "right_padding")


def _set(desc, mode, nan, window, pads, strides, dilations, ceil_mode) -> None:
    target = live(desc, PoolingDescriptor, "pooling_desc")
    values = dict(**_modes(mode, nan),
                  kernel=tuple(as_int(v, a, minimum=1) for v, a in zip(window, ("window_height", "window_width"))),
                  strides=tuple(as_int(v, a, minimum=1) for v, a in zip(strides, ("vertical_stride",
                                                                                  "horizon_stride"))),
                  dilations=tuple(as_int(v, a, minimum=1) for v, a in zip(dilations, ("dilation_h", "dilation_w"))),
                  ceil_mode=checks.flag(ceil_mode, "ceil_mode"))
    padding = [as_int(v, a, minimum=0) for v, a in zip(pads, _PADDING_2D)]
    values["pads"] = ((padding[0], padding[1]), (padding[2], padding[3]))
    _store(target, values, lambda axis, after: _PADDING_2D[2 * axis + after])


@api("cnnlSetPooling2dDescriptor")
def setPooling2dDescriptor(pooling_desc, mode, maxpooling_nan_opt, window_height, window_width, top_padding,
                           bottom_padding, left_padding, right_padding, vertical_stride, horizon_stride) -> None:
    """cnnlSetPooling2dDescriptor(pooling_desc, mode, maxpooling_nan_opt, window_height, window_width, top_padding,
    bottom_padding, left_padding, right_padding, vertical_stride, horizon_stride): no dilation, floor mode."""
    _set(pooling_desc, mode, maxpooling_nan_opt, (window_height, window_width),
         (top_padding, bottom_padding, left_padding, right_padding), (vertical_stride, horizon_stride), (1, 1), False)


@api("cnnlSetPooling2dDescriptor_v2")
def setPooling2dDescriptor_v2(pooling_desc, mode, maxpooling_nan_opt, window_height, window_width, top_padding,
                              bottom_padding, left_padding, right_padding, vertical_stride, horizon_stride,
                              dilation_h, dilation_w, ceil_mode) -> None:
    """cnnlSetPooling2dDescriptor_v2(pooling_desc, mode, maxpooling_nan_opt, window_height, window_width, top_padding,
    bottom_padding, left_padding, right_padding, vertical_stride, horizon_stride, dilation_h, dilation_w,
    ceil_mode)."""
    _set(pooling_desc, mode, maxpooling_nan_opt, (window_height, window_width),
         (top_padding, bottom_padding, left_padding, right_padding), (vertical_stride, horizon_stride),
         (dilation_h, dilation_w), ceil_mode)


def _pads(padding, spatial):
    """(before, after) per axis from `spatial` symmetric values or 2 * spatial (before, after) values."""
    if isinstance(padding, (str, bytes)) or not hasattr(padding, "__len__"):
        raise ArgumentFault(f"expected a sequence of paddings, got {type(padding).__name__}", "padding")
    if len(padding) == spatial:
        values = as_int_sequence(padding, "padding", minimum=0)
        return tuple((v, v) for v in values)
    values = as_int_sequence(padding, "padding", length=2 * spatial, minimum=0)
    return tuple((values[2 * i], values[2 * i + 1]) for i in range(spatial))


@api("cnnlSetPoolingNdDescriptor_v2")
def setPoolingNdDescriptor_v2(pooling_desc, mode, maxpooling_nan_opt, nbDims, window, padding, stride, dilation,
                              ceil_mode) -> None:
    """cnnlSetPoolingNdDescriptor_v2(pooling_desc, mode, maxpooling_nan_opt, nbDims, window[], padding[], stride[],
    dilation[], ceil_mode): pooling of nbDims-dimensional tensors (4 or 5): window, stride and dilation hold
    nbDims - 2 values, padding nbDims - 2 (the same before and after, as DIOPI passes them) or 2 * (nbDims - 2)
    (before, after) values."""
    target = live(pooling_desc, PoolingDescriptor, "pooling_desc")
    rank = as_enum(nbDims, "nbDims", (4, 5), "pooling rank (4 or 5)")
    spatial = rank - 2
    values = dict(**_modes(mode, maxpooling_nan_opt),
                  kernel=as_int_sequence(window, "window", length=spatial, minimum=1),
                  pads=_pads(padding, spatial),
                  strides=as_int_sequence(stride, "stride", length=spatial, minimum=1),
                  dilations=as_int_sequence(dilation, "dilation", length=spatial, minimum=1),
                  ceil_mode=checks.flag(ceil_mode, "ceil_mode"))
    _store(target, values, lambda axis, after: "padding")


def _pair(op, x_desc, y_desc, x_arg="x_desc", y_arg="y_desc"):
    x, y = tensor_arg(x_desc, x_arg), tensor_arg(y_desc, y_arg)
    N.float_tensor(x, x_arg, op)
    checks.same_dtype(x, x_arg, (y, y_arg))
    N.feature_map(x, x_arg, (4, 5))
    N.feature_map(y, y_arg, (4, 5))
    if x.layout != y.layout:
        raise ArgumentFault(f"layout {y.layout} differs from {x_arg}'s {x.layout}", y_arg)
    return x, y


def _index(index_desc, x: TensorDescriptor, y: TensorDescriptor, arg: str) -> TensorDescriptor:
    index = tensor_arg(index_desc, arg)
    checks.supported_dtype(index, arg, _INDEX_TYPES, "max pooling indices")
    if index.dims != y.dims:
        raise ArgumentFault(f"dims {list(index.dims)} differ from the pooled output's {list(y.dims)}", arg)
    plane = x.size // (x.dims[0] * N.channel_last_dims(x)[-1]) if x.size else 0
    if plane - 1 > _INDEX_LIMITS[index.dtype]:
        raise ArgumentFault(f"{plane} input positions do not fit {N.dtype_name(index)} indices", arg)
    return index


@api("cnnlGetPoolingWorkspaceSize")
def getPoolingWorkspaceSize(handle, mode, output_w, output_h) -> int:
    """cnnlGetPoolingWorkspaceSize(handle, mode, output_w, output_h, &size) -> size (always 0 here)."""
    handle_arg(handle)
    as_enum(mode, "mode", E.POOLING_MODES, "cnnlPoolingMode_t")
    as_int(output_w, "output_w", minimum=0)
    as_int(output_h, "output_h", minimum=0)
    return 0


@api("cnnlGetPoolingWithIndexWorkspaceSize")
def getPoolingWithIndexWorkspaceSize(handle, x_desc, y_desc) -> int:
    """cnnlGetPoolingWithIndexWorkspaceSize(handle, x_desc, y_desc, &size) -> size (always 0 here)."""
    handle_arg(handle)
    _pair("cnnlPoolingForwardWithIndex", x_desc, y_desc)
    return 0


def _forward(c_name, handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, workspace, workspace_size,
             index_desc=None, index=None) -> None:
    with OpCall(c_name, handle) as call:
        pool = ready(pooling_desc, PoolingDescriptor, "pooling_desc")
        xd, yd = _pair(c_name, x_desc, y_desc)
        windows = pool.windows(xd, yd, "x_desc", "y_desc")
        scale, accumulate = checks.scalar(alpha, "alpha", 1, yd.dtype), checks.scalar(beta, "beta", 0, yd.dtype)
        ind = None
        if index_desc is not None or c_name == "cnnlPoolingForwardWithIndex":
            if pool.mode != E.CNNL_POOLING_MAX:
                raise NotSupportedFault("indices are produced by MAX pooling only", "pooling_desc")
            ind = _index(index_desc, xd, yd, "index_desc")
        xv = N.channel_last(call.input(xd, x, "x"), xd.layout)
        yv = N.channel_last(call.output(yd, y, "y", read=accumulate != 0), yd.layout)
        iv = N.channel_last(call.output(ind, index, "index"), ind.layout) if ind is not None else None
        call.workspace(workspace, workspace_size, 0, "cnnlGetPoolingWorkspaceSize")
        three_d = len(windows.kernel) == 3
        if pool.mode == E.CNNL_POOLING_MAX:
            maximum = P.max_pool3d_forward if three_d else P.max_pool_forward
            run = lambda: maximum(xv, yv, windows, iv, pool.propagate_nan, scale, accumulate)  # noqa: E731
        else:
            include = pool.mode == E.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
            average = P.avg_pool3d_forward if three_d else P.avg_pool_forward
            run = lambda: average(xv, yv, windows, include, scale, accumulate)  # noqa: E731
        call.submit(run, flops=yd.size * len(list(windows.positions())), dtype=xd.dtype)


@api("cnnlPoolingForward")
def poolingForward(handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, workspace, workspace_size) -> None:
    """cnnlPoolingForward(handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, workspace, workspace_size):
    y = alpha * pool(x) + beta * y."""
    _forward("cnnlPoolingForward", handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, workspace,
             workspace_size)


@api("cnnlPoolingForward_v2")
def poolingForward_v2(handle, pooling_desc, alpha, x_desc, x, beta, extra_device_input, y_desc, y, workspace,
                      workspace_size) -> None:
    """cnnlPoolingForward_v2(handle, pooling_desc, alpha, x_desc, x, beta, extra_device_input, y_desc, y, workspace,
    workspace_size): as cnnlPoolingForward; `extra_device_input` (precomputed divisors on some boards) must be
    NULL, since the simulator needs none."""
    if not is_null(extra_device_input):
        raise NotSupportedFault("extra device input is not used by the simulator; pass NULL", "extra_device_input")
    _forward("cnnlPoolingForward_v2", handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, workspace,
             workspace_size)


@api("cnnlPoolingForwardWithIndex")
def poolingForwardWithIndex(handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, index_desc, index, workspace,
                            workspace_size) -> None:
    """cnnlPoolingForwardWithIndex(handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, index_desc, index,
    workspace, workspace_size): MAX pooling that also writes the argmax positions (h * W + w)."""
    _forward("cnnlPoolingForwardWithIndex", handle, pooling_desc, alpha, x_desc, x, beta, y_desc, y, workspace,
             workspace_size, index_desc, index)


@api("cnnlPoolingBackward")
def poolingBackward(handle, pooling_desc, alpha, y_desc, y, diff_y_desc, diff_y, x_desc, x, beta, diff_x_desc,
                    diff_x) -> None:
    """cnnlPoolingBackward(handle, pooling_desc, alpha, y_desc, y, diff_y_desc, diff_y, x_desc, x, beta, diff_x_desc,
    diff_x): diff_x = alpha * (gradient of the pooling) + beta * diff_x. For MAX, `y` is the index tensor of
    cnnlPoolingForwardWithIndex or the pooled values (then the maxima are found again in `x`); average modes read
    neither `y` nor `x` (both may be NULL)."""
    with OpCall("cnnlPoolingBackward", handle) as call:
        pool = ready(pooling_desc, PoolingDescriptor, "pooling_desc")
        dxd, dyd = _pair("cnnlPoolingBackward", diff_x_desc, diff_y_desc, "diff_x_desc", "diff_y_desc")
        windows = pool.windows(dxd, dyd, "diff_x_desc", "diff_y_desc")
        scale, accumulate = checks.scalar(alpha, "alpha", 1, dxd.dtype), checks.scalar(beta, "beta", 0, dxd.dtype)
        dyv = N.channel_last(call.input(dyd, diff_y, "diff_y"), dyd.layout)
        three_d = len(windows.kernel) == 3
        if pool.mode in _AVERAGE:
            include = pool.mode == E.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
            dxv = N.channel_last(call.output(dxd, diff_x, "diff_x", read=accumulate != 0), dxd.layout)
            average = P.avg_pool3d_backward if three_d else P.avg_pool_backward
            call.submit(lambda: average(dyv, dxv, windows, include, scale, accumulate),
                        flops=dxd.size + dyd.size * math.prod(pool.kernel), dtype=dxd.dtype)
            return
        yd = tensor_arg(y_desc, "y_desc")
        if yd.dtype in _INDEX_TYPES:
            _index(y_desc, dxd, dyd, "y_desc")
            indices = N.channel_last(call.input(yd, y, "y"), yd.layout)
            xv = None
        else:
            checks.same_dtype(dxd, "diff_x_desc", (yd, "y_desc"))
            checks.same_shape(dyd, "diff_y_desc", (yd, "y_desc"))
            xd = tensor_arg(x_desc, "x_desc")
            checks.same_dtype(dxd, "diff_x_desc", (xd, "x_desc"))
            checks.same_shape(dxd, "diff_x_desc", (xd, "x_desc"))
            xv, indices = N.channel_last(call.input(xd, x, "x"), xd.layout), None
        dxv = N.channel_last(call.output(dxd, diff_x, "diff_x", read=accumulate != 0), dxd.layout)

        forward = P.max_pool3d_forward if three_d else P.max_pool_forward
        backward = P.max_pool3d_backward if three_d else P.max_pool_backward

        def run() -> None:
            found = indices
            if found is None:
                found = np.empty(dyv.shape, np.int64)  # values in the compute dtype: no rounding pass
                forward(xv, np.empty(dyv.shape, compute_dtype(dyv.dtype)), windows, found, pool.propagate_nan)
            backward(dyv, found, dxv, scale, accumulate)

        call.submit(run, flops=dxd.size + dyd.size, dtype=dxd.dtype)


# ---- adaptive ---------------------------------------------------------------------------------------------------

def _adaptive_pair(op, x_desc, y_desc, mode, x_arg, y_arg):
    x, y = _pair(op, x_desc, y_desc, x_arg, y_arg)
    if len(x.dims) != 4:
        raise NotSupportedFault(f"adaptive pooling of {len(x.dims)}-D tensors is not supported (4-D only)", x_arg)
    mode = as_enum(mode, "mode", E.POOLING_MODES, "cnnlPoolingMode_t")
    if mode not in _AVERAGE and mode != E.CNNL_POOLING_MAX:
        raise NotSupportedFault("adaptive pooling supports the average modes and MAX", "mode")
    xd, yd = N.channel_last_dims(x), N.channel_last_dims(y)
    if xd[0] != yd[0] or xd[-1] != yd[-1]:
        raise ArgumentFault(f"batch and channels of {list(y.dims)} differ from {x_arg}'s {list(x.dims)}", y_arg)
    return x, y, mode


def _adaptive_index(mode, index_desc, index, x: TensorDescriptor, y: TensorDescriptor):
    """The index descriptor of an adaptive MAX pooling (required), None for the average modes (which take none)."""
    if mode != E.CNNL_POOLING_MAX:
        if index_desc is not None or not is_null(index):
            raise NotSupportedFault("average adaptive pooling has no indices; pass NULL", "index_desc")
        return None
    if index_desc is None:
        raise ArgumentFault("adaptive MAX pooling needs an index tensor for the argmax positions", "index_desc")
    found = _index(index_desc, x, y, "index_desc")
    if found.layout != y.layout:
        raise ArgumentFault(f"layout {found.layout} differs from the pooled tensor's {y.layout}", "index_desc")
    return found


@api("cnnlGetAdaptivePoolingForwardWorkspaceSize")
def getAdaptivePoolingForwardWorkspaceSize(handle, input_desc, mode, output_desc) -> int:
    """cnnlGetAdaptivePoolingForwardWorkspaceSize(handle, input_desc, mode, output_desc, &size) -> size (0)."""
    handle_arg(handle)
    _adaptive_pair("cnnlAdaptivePoolingForward", input_desc, output_desc, mode, "input_desc", "output_desc")
    return 0


def _adaptive_forward(c_name, handle, input_desc, input, mode, workspace, workspace_size, output_desc, output,
                      index_desc, index) -> None:
    with OpCall(c_name, handle) as call:
        xd, yd, mode = _adaptive_pair(c_name, input_desc, output_desc, mode, "input_desc", "output_desc")
        ind = _adaptive_index(mode, index_desc, index, xd, yd)
        xv = N.channel_last(call.input(xd, input, "input"), xd.layout)
        yv = N.channel_last(call.output(yd, output, "output"), yd.layout)
        call.workspace(workspace, workspace_size, 0, "cnnlGetAdaptivePoolingForwardWorkspaceSize")
        if ind is None:
            call.submit(lambda: P.adaptive_avg_forward(xv, yv), flops=xd.size * 2, dtype=xd.dtype)
        else:
            iv = N.channel_last(call.output(ind, index, "index"), ind.layout)
            call.submit(lambda: P.adaptive_max_forward(xv, yv, iv), flops=xd.size * 2, dtype=xd.dtype)


@api("cnnlAdaptivePoolingForward")
def adaptivePoolingForward(handle, input_desc, input, mode, output_desc, output, index_desc, index) -> None:
    """cnnlAdaptivePoolingForward(handle, input_desc, input, mode, output_desc, output, index_desc, index):
    average (or MAX) over bins [floor(i*H/Ho), ceil((i+1)*H/Ho)) of each axis; index_desc and index are NULL for
    the average modes, and receive the argmax positions h * W + w (INT16/INT32/INT64) for MAX."""
    _adaptive_forward("cnnlAdaptivePoolingForward", handle, input_desc, input, mode, None, 0, output_desc, output,
                      index_desc, index)


@api("cnnlAdaptivePoolingForward_v2")
def adaptivePoolingForward_v2(handle, input_desc, input, mode, workspace, workspace_size, output_desc, output,
                              index_desc, index) -> None:
    """cnnlAdaptivePoolingForward_v2(handle, input_desc, input, mode, workspace, workspace_size, output_desc, output,
    index_desc, index): as cnnlAdaptivePoolingForward, with a workspace."""
    _adaptive_forward("cnnlAdaptivePoolingForward_v2", handle, input_desc, input, mode, workspace, workspace_size,
                      output_desc, output, index_desc, index)


@api("cnnlAdaptivePoolingBackward")
def adaptivePoolingBackward(handle, y_desc, y, index_desc, index, mode, dx_desc, dx) -> None:
    """cnnlAdaptivePoolingBackward(handle, y_desc, y, index_desc, index, mode, dx_desc, dx): the gradient of the
    adaptive pooling; `y` is the output gradient; index_desc and index are NULL for the average modes, and the
    forward's argmax positions for MAX (each gradient goes to the position its index names)."""
    with OpCall("cnnlAdaptivePoolingBackward", handle) as call:
        dxd, dyd, mode = _adaptive_pair("cnnlAdaptivePoolingBackward", dx_desc, y_desc, mode, "dx_desc", "y_desc")
        ind = _adaptive_index(mode, index_desc, index, dxd, dyd)
        dyv = N.channel_last(call.input(dyd, y, "y"), dyd.layout)
        if ind is None:
            dxv = N.channel_last(call.output(dxd, dx, "dx"), dxd.layout)
            call.submit(lambda: P.adaptive_avg_backward(dyv, dxv), flops=dxd.size * 2, dtype=dxd.dtype)
        else:
            iv = N.channel_last(call.input(ind, index, "index"), ind.layout)
            dxv = N.channel_last(call.output(dxd, dx, "dx"), dxd.layout)
            call.submit(lambda: P.max_pool_backward(dyv, iv, dxv), flops=dxd.size + dyd.size, dtype=dxd.dtype)
