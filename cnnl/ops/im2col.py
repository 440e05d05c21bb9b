"""Window copies: cnnlGetIm2ColWorkspaceSize, cnnlIm2Col, cnnlGetCol2ImWorkspaceSize, cnnlCol2Im and cnnlUnfold
(PyTorch's F.unfold, F.fold and Tensor.unfold).

Argument orders from DeepLink DIOPI's Cambricon backend (functions/im2col.cpp, col2im.cpp, unfold.cpp) and
torch_mlu. The convolution descriptor (2-D: cnnlSetConvolutionDescriptor with dimNb 4) gives padding, stride and
dilation (its groups are not used); the filter descriptor only gives the window: dims [*, *, kh, kw] for NCHW
filters, [*, kh, kw, *] for NHWC, [kh, kw, *, *] for HWCN. Im2Col: x [N, C, H, W] (NCHW, or NHWC) ->
y [N, C * kh * kw, oh * ow]. Col2Im: col [N, oh * ow, C * kh * kw] -> y [N, C, H, W] (NCHW or NHWC; H, W from y),
overlaps summed. Floats: HALF, BFLOAT16, FLOAT, DOUBLE. Unfold copies any data type. The three NULL arguments of
cnnlIm2Col (after conv_desc; their names are not public) must be NULL.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_int

from .. import checks
from .. import dtypes as D
from ..descriptors import ready
from ..handle import handle_arg
from ..kernels import im2col as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import pointer_value
from . import nn_common as N
from .convolution import ConvolutionDescriptor

_IMAGE_LAYOUTS = N.FEATURE_LAYOUTS[4]


def _window(conv_desc, w_desc):
    conv = ready(conv_desc, ConvolutionDescriptor, "conv_desc")
    if conv.rank != 4:
        raise NotSupportedFault("only 2-D windows (a dimNb 4 convolution descriptor) are supported", "conv_desc")
    w = tensor_arg(w_desc, "w_desc")
    if len(w.dims) != 4:
        raise ArgumentFault(f"{len(w.dims)} dims; the filter is 4-D", "w_desc")
    kernel = N.channel_last_dims(w)[1:3]
    if min(kernel) < 1:
        raise ArgumentFault(f"window {list(kernel)} is empty", "w_desc")
    return conv, tuple(kernel)


def _image(desc, arg, op) -> TensorDescriptor:
    image = tensor_arg(desc, arg)
    N.float_tensor(image, arg, op)
    N.feature_map(image, arg, (4,), _IMAGE_LAYOUTS)
    return image


def _geometry(conv, kernel, image: TensorDescriptor, arg):
    spatial = N.channel_last_dims(image)[1:3]
    outs = K.out_spatial(spatial, kernel, conv.pads, conv.strides, conv.dilations)
    if min(outs) < 1:
        raise ArgumentFault(f"the window {list(kernel)} does not fit the padded {list(spatial)} input", arg)
    return outs


def _columns(desc, arg, image: TensorDescriptor, image_arg, dims) -> TensorDescriptor:
    columns = tensor_arg(desc, arg)
    checks.same_dtype(image, image_arg, (columns, arg))
    if columns.dims != tuple(dims):
        raise ArgumentFault(f"dims {list(columns.dims)}; expected {list(dims)}", arg)
    return columns


@api("cnnlGetIm2ColWorkspaceSize")
def getIm2ColWorkspaceSize(handle, x_desc, w_desc, conv_desc, y_desc) -> int:
    """cnnlGetIm2ColWorkspaceSize(handle, x_desc, w_desc, conv_desc, y_desc, &size) -> size (0)."""
    handle_arg(handle)
    conv, kernel = _window(conv_desc, w_desc)
    x = _image(x_desc, "x_desc", "cnnlIm2Col")
    _geometry(conv, kernel, x, "x_desc")
    tensor_arg(y_desc, "y_desc")
    return 0


@api("cnnlIm2Col")
def im2Col(handle, x_desc, x, w_desc, conv_desc, bias_desc, bias, extra_input, workspace, workspace_size, y_desc,
           y) -> None:
    """cnnlIm2Col(handle, x_desc, x, w_desc, conv_desc, bias_desc, bias, extra_input, workspace, workspace_size,
    y_desc, y): y [N, C * kh * kw, oh * ow] = the zero-padded sliding windows of x."""
    op = "cnnlIm2Col"
    if bias_desc is not None or pointer_value(bias, "bias") or pointer_value(extra_input, "extra_input"):
        raise NotSupportedFault("the extra inputs of cnnlIm2Col are not supported (pass NULL)", "bias_desc")
    with OpCall(op, handle) as call:
        conv, kernel = _window(conv_desc, w_desc)
        xd = _image(x_desc, "x_desc", op)
        outs = _geometry(conv, kernel, xd, "x_desc")
        batch, channels = xd.dims[0], N.channel_last_dims(xd)[-1]
        yd = _columns(y_desc, "y_desc", xd, "x_desc", (batch, channels * kernel[0] * kernel[1], outs[0] * outs[1]))
        xv = N.channel_last(call.input(xd, x, "x"), xd.layout)
        yv = call.output(yd, y, "y")
        call.workspace(workspace, workspace_size, 0, "cnnlGetIm2ColWorkspaceSize")
        call.submit(lambda: K.im2col(xv, yv, kernel, conv.pads, conv.strides, conv.dilations), flops=0,
                    dtype=xd.dtype)


def _col2im_workspace(y: TensorDescriptor) -> int:
    """A float32 accumulator of the output for HALF/BFLOAT16 (the overlapping windows are summed)."""
    return y.size * 4 if y.dtype in D.HALF_PRECISION else 0


@api("cnnlGetCol2ImWorkspaceSize")
def getCol2ImWorkspaceSize(handle, col_desc, w_desc, y_desc) -> int:
    """cnnlGetCol2ImWorkspaceSize(handle, col_desc, w_desc, y_desc, &size) -> size: a float32 accumulator of y for
    HALF/BFLOAT16, else 0."""
    handle_arg(handle)
    tensor_arg(col_desc, "col_desc")
    tensor_arg(w_desc, "w_desc")
    return _col2im_workspace(_image(y_desc, "y_desc", "cnnlCol2Im"))


@api("cnnlCol2Im")
def col2Im(handle, col_desc, col, w_desc, conv_desc, workspace, workspace_size, y_desc, y) -> None:
    """cnnlCol2Im(handle, col_desc, col, w_desc, conv_desc, workspace, workspace_size, y_desc, y): y = the sum of
    the windows of col [N, oh * ow, C * kh * kw] put back at their places in the [N, C, H, W] image."""
    op = "cnnlCol2Im"
    with OpCall(op, handle) as call:
        conv, kernel = _window(conv_desc, w_desc)
        yd = _image(y_desc, "y_desc", op)
        outs = _geometry(conv, kernel, yd, "y_desc")
        batch, channels = yd.dims[0], N.channel_last_dims(yd)[-1]
        cd = _columns(col_desc, "col_desc", yd, "y_desc", (batch, outs[0] * outs[1], channels * kernel[0] * kernel[1]))
        cv = call.input(cd, col, "col")
        yv = N.channel_last(call.output(yd, y, "y"), yd.layout)
        call.workspace(workspace, workspace_size, _col2im_workspace(yd), "cnnlGetCol2ImWorkspaceSize")
        call.submit(lambda: K.col2im(cv, yv, kernel, conv.pads, conv.strides, conv.dilations), flops=cd.size,
                    dtype=yd.dtype)


@api("cnnlUnfold")
def unfold(handle, dim, size, step, x_desc, x, y_desc, y) -> None:
    """cnnlUnfold(handle, dim, size, step, x_desc, x, y_desc, y): y = x.unfold(dim, size, step): the windows of
    `size` elements taken every `step` along axis `dim`, as a new last axis."""
    op = "cnnlUnfold"
    with OpCall(op, handle) as call:
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        checks.supported_dtype(xd, "x_desc", D.ALL, op)
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        axis = checks.axis(dim, len(xd.dims), "dim")
        window = as_int(size, "size", minimum=0, maximum=xd.dims[axis])
        stride = as_int(step, "step", minimum=1)
        expected = K.unfold_shape(xd.dims, axis, window, stride)
        if yd.dims != expected:
            raise ArgumentFault(f"dims {list(yd.dims)}; unfolding gives {list(expected)}", "y_desc")
        xv, yv = call.input(xd, x, "x"), call.output(yd, y, "y")
        call.submit(lambda: K.unfold(xv, yv, axis, window, stride), flops=0, dtype=xd.dtype)
