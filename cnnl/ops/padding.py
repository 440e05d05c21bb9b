"""Padding: cnnlPad (constant value, any rank), cnnlReflectionPad2d and cnnlReplicationPad2d (torch.nn.functional.pad
with mode 'constant', 'reflect' and 'replicate'). Values move unchanged; every data type; negative pads crop.

cnnlPad's `paddings` is the C array int[dims][2]: a sequence of (before, after) pairs, one per input axis (a flat
sequence of 2*dims numbers is accepted too); the output extent of axis k is before + input[k] + after.
The 2-D pads take `pad` = [left, right, top, bottom] (torch's order) on 4-D tensors whose layout says where H and W
are (NCHW or ARRAY: the last two axes; NHWC: axes 1 and 2). Reflection needs each pad below the input extent.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int_sequence

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..kernels import padding as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import pointer_scalars as P


def _pairs(paddings, ndim: int) -> tuple[tuple[int, int], ...]:
    if isinstance(paddings, (str, bytes)) or not hasattr(paddings, "__len__"):
        raise ArgumentFault(f"expected (before, after) pairs, got {type(paddings).__name__}", "paddings")
    if len(paddings) == ndim and all(hasattr(p, "__len__") for p in paddings):
        flat = [v for i, p in enumerate(paddings) for v in as_int_sequence(p, f"paddings[{i}]", length=2)]
    else:
        flat = as_int_sequence(paddings, "paddings", length=2 * ndim)
    return tuple((flat[2 * i], flat[2 * i + 1]) for i in range(ndim))


def _padded_dims(x_dims, pads, out_dims, out_arg: str, axes=None):
    axes = range(len(x_dims)) if axes is None else axes
    expected = list(x_dims)
    for axis, (before, after) in zip(axes, pads):
        if before < -x_dims[axis] or after < -x_dims[axis]:
            raise ArgumentFault(f"axis {axis}: padding ({before}, {after}) crops more than its {x_dims[axis]} "
                                f"elements", "paddings" if out_arg == "output_desc" else "pad")
        expected[axis] = x_dims[axis] + before + after
    if tuple(expected) != out_dims:
        raise ArgumentFault(f"dims {list(out_dims)}; padding {list(x_dims)} by {list(pads)} gives {expected}",
                            out_arg)


@api("cnnlPad")
def pad(handle, input_desc, input, paddings, padding_value, output_desc, output) -> None:
    """cnnlPad(handle, input_desc, input, const void *paddings, const void *padding_value, output_desc, output):
    output = input padded with a constant (negative pads crop). `paddings` holds (before, after) per axis;
    `padding_value` is a host number of the input's type (NULL = 0)."""
    with OpCall("cnnlPad", handle) as call:
        xd, yd = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(xd, "input_desc", D.ALL, "cnnlPad")
        checks.same_dtype(xd, "input_desc", (yd, "output_desc"))
        if len(yd.dims) != len(xd.dims):
            raise ArgumentFault(f"{len(yd.dims)} dims; the input has {len(xd.dims)}", "output_desc")
        pads = _pairs(paddings, len(xd.dims))
        _padded_dims(xd.dims, pads, yd.dims, "output_desc")
        value = P.host_scalar(0 if padding_value is None else padding_value, "padding_value", xd.dtype, fill=True)
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.submit(lambda: K.constant_pad(x_view, pads, value, y_view), flops=0, dtype=yd.dtype)


#: layout -> the (H, W) axes of a 4-D tensor
_SPATIAL_AXES = {E.CNNL_LAYOUT_NCHW: (2, 3), E.CNNL_LAYOUT_ARRAY: (2, 3), E.CNNL_LAYOUT_NHWC: (1, 2)}


def _pad2d(c_name: str, mode: str, handle, input_desc, input, pad, output_desc, output) -> None:
    with OpCall(c_name, handle) as call:
        xd, yd = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(xd, "input_desc", D.ALL, c_name)
        checks.same_dtype(xd, "input_desc", (yd, "output_desc"))
        if len(xd.dims) != 4 or xd.layout not in _SPATIAL_AXES:
            raise ArgumentFault(f"{len(xd.dims)} dims, layout {xd.layout}; expected a 4-D NCHW, NHWC or ARRAY "
                                f"tensor", "input_desc")
        if yd.layout != xd.layout or len(yd.dims) != 4:
            raise ArgumentFault("the output needs the input's layout and rank", "output_desc")
        left, right, top, bottom = as_int_sequence(pad, "pad", length=4)
        h, w = _SPATIAL_AXES[xd.layout]
        pads = ((top, bottom), (left, right))
        _padded_dims(xd.dims, pads, yd.dims, "output_desc", axes=(h, w))
        for (before, after), axis in zip(pads, (h, w)):
            extent = xd.dims[axis]
            if mode == "reflect" and (before >= extent or after >= extent):
                raise ArgumentFault(f"reflection pads ({before}, {after}) must be below the input extent {extent} "
                                    f"of axis {axis}", "pad")
            if extent == 0 and yd.dims[axis]:
                raise ArgumentFault(f"axis {axis} is empty: nothing to {mode}", "input_desc")
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.submit(lambda: K.index_pad(mode, x_view, (h, w), pads, y_view), flops=0, dtype=yd.dtype)


@api("cnnlReflectionPad2d")
def reflectionPad2d(handle, input_desc, input, pad, output_desc, output) -> None:
    """cnnlReflectionPad2d(handle, input_desc, input, const int pad[4], output_desc, output): reflect H and W
    (torch 'reflect' padding), pad = [left, right, top, bottom]."""
    _pad2d("cnnlReflectionPad2d", "reflect", handle, input_desc, input, pad, output_desc, output)


@api("cnnlReplicationPad2d")
def replicationPad2d(handle, input_desc, input, pad, output_desc, output) -> None:
    """cnnlReplicationPad2d(handle, input_desc, input, const int pad[4], output_desc, output): repeat the edge
    rows and columns (torch 'replicate' padding), pad = [left, right, top, bottom]."""
    _pad2d("cnnlReplicationPad2d", "replicate", handle, input_desc, input, pad, output_desc, output)
