"""Convolution: the convolution descriptor, cnnlConvolutionForward, cnnlConvolutionBackwardData and
cnnlConvolutionBackwardFilter with their algorithm and workspace queries.

Tensors are 4-D (2-D convolution) or 5-D (3-D convolution) in NHWC/NCHW (NDHWC/NCDHW); filters also in HWCN.
Filter dims follow their layout: NHWC [Co, Kh, Kw, C/groups], NCHW [Co, C/groups, Kh, Kw], HWCN [Kh, Kw, C/groups, Co].
Padding is {top, bottom, left, right} ({front, back, top, bottom, left, right} in 3-D). Output extents use floor
rounding. Forward: y = alpha * conv(x, w) + beta * y + bias (bias holds Co elements). Data types: HALF, BFLOAT16,
FLOAT, DOUBLE, all operands alike; the computation runs in float32 (double for DOUBLE).
"""
from __future__ import annotations

import math

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int, as_int_sequence

from .. import checks
from .. import enums as E
from .. import workspace as W
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels.conv import conv_backward_data, conv_backward_filter, conv_forward, output_extent
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_FILTER_LAYOUTS = {4: (E.CNNL_LAYOUT_NHWC, E.CNNL_LAYOUT_NCHW, E.CNNL_LAYOUT_HWCN),
                   5: (E.CNNL_LAYOUT_NDHWC, E.CNNL_LAYOUT_NCDHW)}
ALGORITHM = 0


class ConvolutionDescriptor(Descriptor):
    """cnnlConvolutionDescriptor_t: padding, stride, dilation, groups and compute type."""

    c_type = "cnnlConvolutionDescriptor_t"
    setter = "cnnlSetConvolutionDescriptor"

    def __init__(self):
        super().__init__()
        self.rank = 4
        self.pads: tuple[tuple[int, int], ...] = ()
        self.strides: tuple[int, ...] = ()
        self.dilations: tuple[int, ...] = ()
        self.groups = 1
        self.compute_type = E.CNNL_DTYPE_FLOAT


createConvolutionDescriptor, destroyConvolutionDescriptor = lifecycle(
    ConvolutionDescriptor, "cnnlCreateConvolutionDescriptor", "cnnlDestroyConvolutionDescriptor")


@api("cnnlSetConvolutionDescriptor")
def setConvolutionDescriptor(conv_desc, dimNb, pad, stride, dilation, group_count, compute_type) -> None:
    """cnnlSetConvolutionDescriptor(conv_desc, dimNb, pad[], stride[], dilation[], group_count, compute_type):
    dimNb is the tensors' rank (4 or 5); pad holds 2*(dimNb-2) values, stride and dilation dimNb-2."""
    target = live(conv_desc, ConvolutionDescriptor, "conv_desc")
    rank = as_enum(dimNb, "dimNb", (4, 5), "convolution rank")
    spatial = rank - 2
    pads = as_int_sequence(pad, "pad", length=2 * spatial, minimum=0)
    strides = as_int_sequence(stride, "stride", length=spatial, minimum=1)
    dilations = as_int_sequence(dilation, "dilation", length=spatial, minimum=1)
    groups = as_int(group_count, "group_count", minimum=1)
    computed = checks.dtype_value(compute_type, "compute_type", N.NN_FLOATS, "a convolution compute type")
    target.rank, target.strides, target.dilations, target.groups = rank, strides, dilations, groups
    target.pads = tuple((pads[2 * i], pads[2 * i + 1]) for i in range(spatial))
    target.compute_type, target.is_set = computed, True


class _Geometry:
    """A validated convolution problem: channel-last dims of x, w, y, the op's flops and its workspace (a float32
    accumulator of the op's `output`, one of "x", "w", "y")."""

    def __init__(self, op: str, conv: ConvolutionDescriptor, x: TensorDescriptor, w: TensorDescriptor,
                 y: TensorDescriptor, names=("x_desc", "w_desc", "y_desc"), output="y"):
        x_arg, w_arg, y_arg = names
        for desc, arg in ((x, x_arg), (w, w_arg), (y, y_arg)):
            N.float_tensor(desc, arg, op)
            if len(desc.dims) != conv.rank:
                raise ArgumentFault(f"{len(desc.dims)} dims; the convolution descriptor is set for {conv.rank}", arg)
        checks.same_dtype(x, x_arg, (w, w_arg), (y, y_arg))
        N.feature_map(x, x_arg, (conv.rank,))
        N.feature_map(y, y_arg, (conv.rank,))
        N.feature_map(w, w_arg, (conv.rank,), _FILTER_LAYOUTS[conv.rank])
        xd, wd, yd = N.channel_last_dims(x), N.channel_last_dims(w), N.channel_last_dims(y)
        channels, out_channels, per_group = xd[-1], wd[0], wd[-1]
        if per_group * conv.groups != channels:
            raise ArgumentFault(f"filter has {per_group} input channels per group; x has {channels} channels in "
                                f"{conv.groups} groups", w_arg)
        if out_channels % conv.groups:
            raise ArgumentFault(f"{out_channels} output channels do not divide into {conv.groups} groups", w_arg)
        spatial = tuple(output_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in
                        zip(xd[1:-1], conv.pads, wd[1:-1], conv.strides, conv.dilations))
        if any(extent < 1 for extent in spatial):
            raise ArgumentFault(f"the filter {list(wd[1:-1])} does not fit the padded input {list(xd[1:-1])}", w_arg)
        expected = (xd[0],) + spatial + (out_channels,)
        if yd != expected:
            raise ArgumentFault(f"output dims (N, spatial, C) {list(yd)}; the convolution gives {list(expected)}",
                                y_arg)
        self.conv, self.x, self.w, self.y = conv, x, w, y
        self.flops = 2 * math.prod(yd) * math.prod(wd[1:])
        self.workspace = W.float32_accumulator(getattr(self, output), x.dtype)


def _conv(conv_desc) -> ConvolutionDescriptor:
    return ready(conv_desc, ConvolutionDescriptor, "conv_desc")


def _algo(value, arg="algo") -> int:
    return as_enum(value, arg, E.CONVOLUTION_ALGOS, "convolution algorithm")


def _preference(value) -> None:
    as_enum(value, "preference", E.CONVOLUTION_PREFERENCES, "convolution preference")


def _forward_geometry(conv_desc, x_desc, w_desc, y_desc) -> _Geometry:
    return _Geometry("cnnlConvolutionForward", _conv(conv_desc), tensor_arg(x_desc, "x_desc"),
                     tensor_arg(w_desc, "w_desc"), tensor_arg(y_desc, "y_desc"))


def _data_geometry(conv_desc, w_desc, dy_desc, dx_desc) -> _Geometry:
    return _Geometry("cnnlConvolutionBackwardData", _conv(conv_desc), tensor_arg(dx_desc, "dx_desc"),
                     tensor_arg(w_desc, "w_desc"), tensor_arg(dy_desc, "dy_desc"), ("dx_desc", "w_desc", "dy_desc"),
                     "x")


def _filter_geometry(conv_desc, x_desc, dy_desc, dw_desc) -> _Geometry:
    return _Geometry("cnnlConvolutionBackwardFilter", _conv(conv_desc), tensor_arg(x_desc, "x_desc"),
                     tensor_arg(dw_desc, "dw_desc"), tensor_arg(dy_desc, "dy_desc"), ("x_desc", "dw_desc", "dy_desc"),
                     "w")


def _algorithm_query(handle, preference, geometry) -> int:
    """The algorithm queries: the call checked as its op checks it (`geometry()`); every problem has one algorithm."""
    handle_arg(handle)
    _preference(preference)
    geometry()
    return ALGORITHM


def _workspace_query(handle, algo, geometry) -> int:
    """The workspace queries: the call checked as its op checks it; the size of the problem's workspace."""
    handle_arg(handle)
    _algo(algo)
    return geometry().workspace


# ---- forward ------------------------------------------------------------------------------------------------------

@api("cnnlGetConvolutionForwardAlgorithm")
def getConvolutionForwardAlgorithm(handle, conv_desc, x_desc, w_desc, y_desc, preference) -> int:
    """cnnlGetConvolutionForwardAlgorithm(handle, conv_desc, x_desc, w_desc, y_desc, preference, &algo) -> algo."""
    return _algorithm_query(handle, preference, lambda: _forward_geometry(conv_desc, x_desc, w_desc, y_desc))


@api("cnnlGetConvolutionForwardWorkspaceSize")
def getConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, y_desc, bias_desc, conv_desc, algo) -> int:
    """cnnlGetConvolutionForwardWorkspaceSize(handle, x_desc, w_desc, y_desc, bias_desc, conv_desc, algo, &size)
    -> size (a float32 accumulator of y for HALF/BFLOAT16, else 0)."""
    return _workspace_query(handle, algo, lambda: _forward_geometry(conv_desc, x_desc, w_desc, y_desc))


def _bias(bias_desc, geometry: _Geometry):
    if bias_desc is None:
        return None
    desc = tensor_arg(bias_desc, "bias_desc")
    checks.same_dtype(geometry.x, "x_desc", (desc, "bias_desc"))
    N.elements_match(desc, "bias_desc", N.channel_last_dims(geometry.y)[-1], "one bias per output channel")
    return desc


@api("cnnlConvolutionForward")
def convolutionForward(handle, conv_desc, algo, alpha, x_desc, x, w_desc, w, bias_desc, bias, workspace,
                       workspace_size, beta, y_desc, y) -> None:
    """cnnlConvolutionForward(handle, conv_desc, algo, alpha, x_desc, x, w_desc, w, bias_desc, bias, workspace,
    workspace_size, beta, y_desc, y): y = alpha * conv(x, w) + beta * y + bias (alpha, beta NULL = 1, 0)."""
    with OpCall("cnnlConvolutionForward", handle) as call:
        _algo(algo)
        geo = _forward_geometry(conv_desc, x_desc, w_desc, y_desc)
        scale, accumulate = checks.scalar(alpha, "alpha", 1, geo.y.dtype), checks.scalar(beta, "beta", 0, geo.y.dtype)
        bias_d = _bias(bias_desc, geo)
        xv, wv = call.input(geo.x, x, "x"), call.input(geo.w, w, "w")
        bv = call.input(bias_d, bias, "bias") if bias_d is not None else None
        yv = call.output(geo.y, y, "y", read=accumulate != 0)
        call.workspace(workspace, workspace_size, geo.workspace, "cnnlGetConvolutionForwardWorkspaceSize")
        conv = geo.conv
        args = (N.channel_last(xv, geo.x.layout), N.channel_last(wv, geo.w.layout), N.channel_last(yv, geo.y.layout))
        call.submit(lambda: conv_forward(*args, conv.pads, conv.strides, conv.dilations, conv.groups, scale,
                                         accumulate, bv), flops=geo.flops, dtype=geo.x.dtype)


# ---- backward data ------------------------------------------------------------------------------------------------

@api("cnnlGetConvolutionBackwardDataAlgorithm")
def getConvolutionBackwardDataAlgorithm(handle, w_desc, dy_desc, conv_desc, dx_desc, preference) -> int:
    """cnnlGetConvolutionBackwardDataAlgorithm(handle, w_desc, dy_desc, conv_desc, dx_desc, preference, &algo)
    -> algo."""
    return _algorithm_query(handle, preference, lambda: _data_geometry(conv_desc, w_desc, dy_desc, dx_desc))


@api("cnnlGetConvolutionBackwardDataWorkspaceSize")
def getConvolutionBackwardDataWorkspaceSize(handle, w_desc, dy_desc, conv_desc, dx_desc, algo) -> int:
    """cnnlGetConvolutionBackwardDataWorkspaceSize(handle, w_desc, dy_desc, conv_desc, dx_desc, algo, &size)
    -> size (a float32 accumulator of dx for HALF/BFLOAT16, else 0)."""
    return _workspace_query(handle, algo, lambda: _data_geometry(conv_desc, w_desc, dy_desc, dx_desc))


@api("cnnlConvolutionBackwardData")
def convolutionBackwardData(handle, alpha, w_desc, w, dy_desc, dy, conv_desc, algo, workspace, workspace_size,
                            beta, dx_desc, dx) -> None:
    """cnnlConvolutionBackwardData(handle, alpha, w_desc, w, dy_desc, dy, conv_desc, algo, workspace,
    workspace_size, beta, dx_desc, dx): dx = alpha * (gradient of the convolution w.r.t. x) + beta * dx."""
    _backward("cnnlConvolutionBackwardData", handle, algo,
              lambda: _data_geometry(conv_desc, w_desc, dy_desc, dx_desc), alpha, beta,
              (("w", w, "w"), ("y", dy, "dy")), ("x", dx, "dx"), workspace, workspace_size,
              lambda wv, dyv, dxv, *rest: conv_backward_data(dyv, wv, dxv, *rest))  # w is checked first


# ---- backward filter ----------------------------------------------------------------------------------------------

@api("cnnlGetConvolutionBackwardFilterAlgorithm")
def getConvolutionBackwardFilterAlgorithm(handle, conv_desc, x_desc, dy_desc, dw_desc, preference) -> int:
    """cnnlGetConvolutionBackwardFilterAlgorithm(handle, conv_desc, x_desc, dy_desc, dw_desc, preference, &algo)
    -> algo."""
    return _algorithm_query(handle, preference, lambda: _filter_geometry(conv_desc, x_desc, dy_desc, dw_desc))


@api("cnnlGetConvolutionBackwardFilterWorkspaceSize")
def getConvolutionBackwardFilterWorkspaceSize(handle, x_desc, dy_desc, dw_desc, conv_desc, algo) -> int:
    """cnnlGetConvolutionBackwardFilterWorkspaceSize(handle, x_desc, dy_desc, dw_desc, conv_desc, algo, &size)
    -> size (a float32 accumulator of dw for HALF/BFLOAT16, else 0)."""
    return _workspace_query(handle, algo, lambda: _filter_geometry(conv_desc, x_desc, dy_desc, dw_desc))


@api("cnnlConvolutionBackwardFilter")
def convolutionBackwardFilter(handle, alpha, x_desc, x, dy_desc, dy, conv_desc, algo, workspace, workspace_size,
                              beta, dw_desc, dw) -> None:
    """cnnlConvolutionBackwardFilter(handle, alpha, x_desc, x, dy_desc, dy, conv_desc, algo, workspace,
    workspace_size, beta, dw_desc, dw): dw = alpha * (gradient of the convolution w.r.t. w) + beta * dw."""
    _backward("cnnlConvolutionBackwardFilter", handle, algo,
              lambda: _filter_geometry(conv_desc, x_desc, dy_desc, dw_desc), alpha, beta,
              (("x", x, "x"), ("y", dy, "dy")), ("w", dw, "dw"), workspace, workspace_size, conv_backward_filter)


def _backward(name, handle, algo, geometry, alpha, beta, inputs, output, workspace, workspace_size, kernel) -> None:
    """The two backward passes: check the call and queue kernel(first, second, out, pads, strides, dilations,
    groups, alpha, beta). `geometry()` checks the descriptors; `inputs` and `output` name which of the geometry's
    x, w and y each (pointer, argument name) is; the workspace is a float32 accumulator of the output."""
    with OpCall(name, handle) as call:
        _algo(algo)
        geo = geometry()
        scale, accumulate = checks.scalar(alpha, "alpha", 1, geo.x.dtype), checks.scalar(beta, "beta", 0, geo.x.dtype)
        views = [call.input(getattr(geo, part), pointer, arg) for part, pointer, arg in inputs]
        part, pointer, arg = output
        views.append(call.output(getattr(geo, part), pointer, arg, read=accumulate != 0))
        call.workspace(workspace, workspace_size, geo.workspace, name.replace("cnnl", "cnnlGet", 1) + "WorkspaceSize")
        conv = geo.conv
        args = tuple(N.channel_last(view, getattr(geo, part).layout)
                     for view, (part, _, _) in zip(views, (*inputs, output)))
        call.submit(lambda: kernel(*args, conv.pads, conv.strides, conv.dilations, conv.groups, scale, accumulate),
                    flops=geo.flops, dtype=geo.x.dtype)
