"""Modulated deformable convolution (DCN v2): cnnlCreate/Destroy/SetDCNDescriptor, cnnlGetDCNForwardWorkspaceSize,
cnnlDCNForward, cnnlGetDCNBakcwardDataWorkspaceSize (CNNL's own spelling), cnnlDCNBackwardData,
cnnlGetDCNBackwardWeightWorkspaceSize and cnnlDCNBackwardWeight.

Argument orders from DeepLink DIOPI's Cambricon backend (functions_mmcv/modulated_deform_conv_mlu.cpp), which
passes NHWC tensors: input [N, H, W, C], offset [N, Ho, Wo, 2 * dg * kh * kw], mask [N, Ho, Wo, dg * kh * kw],
filter [Co, kh, kw, C / groups], bias [Co], output [N, Ho, Wo, Co] (NCHW descriptors are read in their own order);
Ho, Wo as a convolution's (floor). mask may be NULL (DCN v1: all ones; the backward's grad_mask then too), bias and
grad_bias may be NULL. HALF, BFLOAT16, FLOAT, DOUBLE, every float operand alike; im2col_step must divide the
batch. Numerics (mmcv's) in `cnnl.kernels.deform_conv`.
"""
from __future__ import annotations

from mlusim import cost
from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int, as_int_sequence

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import deform_conv as K
from ..kernels.conv import output_extent
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_LAYOUTS = N.FEATURE_LAYOUTS[4]


class DCNDescriptor(Descriptor):
    """cnnlDCNDescriptor_t: padding, stride, dilation, deformable and convolution groups, im2col step."""

    c_type = "cnnlDCNDescriptor_t"
    setter = "cnnlSetDCNDescriptor"


createDCNDescriptor, destroyDCNDescriptor = lifecycle(DCNDescriptor, "cnnlCreateDCNDescriptor",
                                                      "cnnlDestroyDCNDescriptor")


@api("cnnlSetDCNDescriptor")
def setDCNDescriptor(dcn_desc, dimNb, pad, stride, dilation, deformable_group, conv_group, im2col_step,
                     compute_type) -> None:
    """cnnlSetDCNDescriptor(dcn_desc, dimNb, pad[4], stride[2], dilation[2], deformable_group, conv_group,
    im2col_step, compute_type): pad is [top, bottom, left, right]; dimNb 4 (2-D)."""
    target = live(dcn_desc, DCNDescriptor, "dcn_desc")
    as_enum(dimNb, "dimNb", (4,), "DCN rank (4)")
    pads = as_int_sequence(pad, "pad", length=4, minimum=0)
    target.strides = as_int_sequence(stride, "stride", length=2, minimum=1)
    target.dilations = as_int_sequence(dilation, "dilation", length=2, minimum=1)
    target.pads = ((pads[0], pads[1]), (pads[2], pads[3]))
    target.deformable_groups = as_int(deformable_group, "deformable_group", minimum=1)
    target.groups = as_int(conv_group, "conv_group", minimum=1)
    target.step = as_int(im2col_step, "im2col_step", minimum=1)
    target.compute_type = as_enum(compute_type, "compute_type", N.NN_FLOATS, "cnnlDataType_t (floating)")
    target.is_set = True


def _map(desc, arg, op) -> TensorDescriptor:
    target = tensor_arg(desc, arg)
    N.float_tensor(target, arg, op)
    N.feature_map(target, arg, (4,), _LAYOUTS)
    return target


class _Problem:
    """The checked operands of one DCN call (channel-last dims)."""

    def __init__(self, op, dcn: DCNDescriptor, x_desc, offset_desc, mask_desc, w_dims, w_arg, out_desc, out_arg):
        self.x = _map(x_desc, "input_desc", op)
        batch, height, width, channels = N.channel_last_dims(self.x)
        co, kh, kw, per_group = w_dims
        self.kernel = (kh, kw)
        if channels % dcn.deformable_groups:
            raise ArgumentFault(f"{channels} channels do not split into {dcn.deformable_groups} deformable groups",
                                "dcn_desc")
        if channels % dcn.groups or co % dcn.groups or per_group * dcn.groups != channels:
            raise ArgumentFault(f"filter dims (Co, kh, kw, C/g) {list(w_dims)} do not fit {channels} channels in "
                                f"{dcn.groups} groups", w_arg)
        if batch % dcn.step:
            raise ArgumentFault(f"im2col_step {dcn.step} does not divide the batch {batch}", "dcn_desc")
        out_h, out_w = (output_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in
                        zip((height, width), dcn.pads, self.kernel, dcn.strides, dcn.dilations))
        if min(out_h, out_w) < 1:
            raise ArgumentFault(f"the {kh}x{kw} window does not fit the padded {height}x{width} input", "input_desc")
        taps = kh * kw * dcn.deformable_groups
        self.offset = self._match(op, offset_desc, "offset_desc", (batch, out_h, out_w, 2 * taps))
        self.mask = None if mask_desc is None else self._match(op, mask_desc, "mask_desc",
                                                               (batch, out_h, out_w, taps))
        self.out = self._match(op, out_desc, out_arg, (batch, out_h, out_w, co))
        self.geometry = K.Geometry(self.kernel, dcn.strides, (dcn.pads[0][0], dcn.pads[1][0]), dcn.dilations,
                                   dcn.deformable_groups, dcn.groups)
        self.columns = min(dcn.step, batch) * out_h * out_w * kh * kw * channels
        self.flops = 2.0 * batch * out_h * out_w * kh * kw * per_group * co + 8.0 * batch * out_h * out_w * kh * kw \
            * channels

    def _match(self, op, desc, arg, dims) -> TensorDescriptor:
        target = _map(desc, arg, op)
        checks.same_dtype(self.x, "input_desc", (target, arg))
        if N.channel_last_dims(target) != tuple(dims):
            raise ArgumentFault(f"dims (N, H, W, C) {list(N.channel_last_dims(target))}; expected {list(dims)}", arg)
        return target

    def sampling_views(self, call, input, offset, mask) -> tuple:  # noqa: A002
        """The channel-last views of the three inputs every DCN function reads (mask None when it is NULL)."""
        return (self.view(call, self.x, input, "input"), self.view(call, self.offset, offset, "offset"),
                self.view(call, self.mask, mask, "mask"))

    def view(self, call, desc, pointer, arg, output=False):
        if desc is None:
            return None
        view = call.output(desc, pointer, arg) if output else call.input(desc, pointer, arg)
        return N.channel_last(view, desc.layout)


def _filter(op, desc, arg, x: TensorDescriptor) -> TensorDescriptor:
    w = tensor_arg(desc, arg)
    checks.same_dtype(x, "input_desc", (w, arg))
    if len(w.dims) != 4 or w.layout not in _LAYOUTS + (E.CNNL_LAYOUT_HWCN,):
        raise ArgumentFault(f"dims {list(w.dims)} layout {w.layout}; the filter is a 4-D NHWC, NCHW or HWCN tensor",
                            arg)
    return w


def _bias(desc, arg, x: TensorDescriptor, channels: int):
    if desc is None:
        return None
    bias = tensor_arg(desc, arg)
    checks.same_dtype(x, "input_desc", (bias, arg))
    if bias.dims != (channels,):
        raise ArgumentFault(f"dims {list(bias.dims)}; expected [{channels}]", arg)
    return bias


def _workspace_bytes(problem: _Problem) -> int:
    """The float32 columns of one im2col step."""
    return 4 * problem.columns


def _checked(op, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc, filter_arg, out_desc, out_arg,
             bias_desc=None, bias_arg=None):
    """(problem, filter, bias or None): the descriptors of one DCN call (and of its workspace query), checked in
    the order every DCN function checks them."""
    dcn = ready(dcn_desc, DCNDescriptor, "dcn_desc")
    x = _map(input_desc, "input_desc", op)
    w = _filter(op, filter_desc, filter_arg, x)
    problem = _Problem(op, dcn, input_desc, offset_desc, mask_desc, N.channel_last_dims(w), filter_arg, out_desc,
                       out_arg)
    bias = None if bias_arg is None else _bias(bias_desc, bias_arg, x, N.channel_last_dims(w)[0])
    return problem, w, bias


@api("cnnlGetDCNForwardWorkspaceSize")
def getDCNForwardWorkspaceSize(handle, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc, bias_desc,
                               output_desc) -> int:
    """cnnlGetDCNForwardWorkspaceSize(handle, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc, bias_desc,
    output_desc, &size) -> size: the float32 columns of one im2col step."""
    handle_arg(handle)
    problem, _, _ = _checked("cnnlDCNForward", dcn_desc, input_desc, offset_desc, mask_desc, filter_desc,
                             "filter_desc", output_desc, "output_desc", bias_desc, "bias_desc")
    return _workspace_bytes(problem)


@api("cnnlDCNForward")
def dCNForward(handle, dcn_desc, input_desc, input, offset_desc, offset, mask_desc, mask, filter_desc, filter,
               bias_desc, bias, workspace, workspace_size, output_desc, output) -> None:  # noqa: A002
    """cnnlDCNForward(handle, dcn_desc, input_desc, input, offset_desc, offset, mask_desc, mask, filter_desc,
    filter, bias_desc, bias, workspace, workspace_size, output_desc, output): output = the modulated deformable
    convolution of input."""
    op = "cnnlDCNForward"
    with OpCall(op, handle) as call:
        problem, wd, bd = _checked(op, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc, "filter_desc",
                                   output_desc, "output_desc", bias_desc, "bias_desc")
        xv, ov, mv = problem.sampling_views(call, input, offset, mask)
        wv = N.channel_last(call.input(wd, filter, "filter"), wd.layout)
        bv = call.input(bd, bias, "bias") if bd is not None else None
        yv = problem.view(call, problem.out, output, "output", output=True)
        call.workspace(workspace, workspace_size, _workspace_bytes(problem), "cnnlGetDCNForwardWorkspaceSize")
        geometry = problem.geometry
        call.submit(lambda: K.dcn_forward(xv, ov, mv, wv, bv, yv, geometry), flops=problem.flops,
                    dtype=problem.x.dtype, unit=cost.TENSOR)


@api("cnnlGetDCNBakcwardDataWorkspaceSize")
def getDCNBakcwardDataWorkspaceSize(handle, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc,
                                    grad_output_desc, grad_input_desc, grad_offset_desc, grad_mask_desc) -> int:
    """cnnlGetDCNBakcwardDataWorkspaceSize(handle, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc,
    grad_output_desc, grad_input_desc, grad_offset_desc, grad_mask_desc, &size) -> size (CNNL spells it
    "Bakcward"): the float32 column gradients of one im2col step."""
    handle_arg(handle)
    problem, _, _ = _checked("cnnlDCNBackwardData", dcn_desc, input_desc, offset_desc, mask_desc, filter_desc,
                             "filter_desc", grad_output_desc, "grad_output_desc")
    return _workspace_bytes(problem)


@api("cnnlDCNBackwardData")
def dCNBackwardData(handle, dcn_desc, input_desc, input, offset_desc, offset, mask_desc, mask, filter_desc, filter,
                    grad_output_desc, grad_output, workspace, workspace_size, grad_input_desc, grad_input,
                    grad_offset_desc, grad_offset, grad_mask_desc, grad_mask) -> None:  # noqa: A002
    """cnnlDCNBackwardData(handle, dcn_desc, input_desc, input, offset_desc, offset, mask_desc, mask, filter_desc,
    filter, grad_output_desc, grad_output, workspace, workspace_size, grad_input_desc, grad_input,
    grad_offset_desc, grad_offset, grad_mask_desc, grad_mask): the gradients with respect to input, offset and
    mask (grad_mask NULL when mask is)."""
    op = "cnnlDCNBackwardData"
    with OpCall(op, handle) as call:
        problem, wd, _ = _checked(op, dcn_desc, input_desc, offset_desc, mask_desc, filter_desc, "filter_desc",
                                  grad_output_desc, "grad_output_desc")
        gx = problem._match(op, grad_input_desc, "grad_input_desc", N.channel_last_dims(problem.x))
        go = problem._match(op, grad_offset_desc, "grad_offset_desc", N.channel_last_dims(problem.offset))
        gm = None
        if grad_mask_desc is not None:
            if problem.mask is None:
                raise ArgumentFault("grad_mask is given but mask is NULL", "grad_mask_desc")
            gm = problem._match(op, grad_mask_desc, "grad_mask_desc", N.channel_last_dims(problem.mask))
        xv, ov, mv = problem.sampling_views(call, input, offset, mask)
        wv = N.channel_last(call.input(wd, filter, "filter"), wd.layout)
        dyv = problem.view(call, problem.out, grad_output, "grad_output")
        outs = [problem.view(call, d, p, a, output=True) for d, p, a in ((gx, grad_input, "grad_input"),
                                                                         (go, grad_offset, "grad_offset"),
                                                                         (gm, grad_mask, "grad_mask"))]
        call.workspace(workspace, workspace_size, _workspace_bytes(problem), "cnnlGetDCNBakcwardDataWorkspaceSize")
        geometry = problem.geometry
        call.submit(lambda: K.dcn_backward_data(xv, ov, mv, wv, dyv, *outs, geometry), flops=2 * problem.flops,
                    dtype=problem.x.dtype, unit=cost.TENSOR)


@api("cnnlGetDCNBackwardWeightWorkspaceSize")
def getDCNBackwardWeightWorkspaceSize(handle, dcn_desc, input_desc, offset_desc, mask_desc, grad_output_desc,
                                      grad_filter_desc, grad_bias_desc) -> int:
    """cnnlGetDCNBackwardWeightWorkspaceSize(handle, dcn_desc, input_desc, offset_desc, mask_desc,
    grad_output_desc, grad_filter_desc, grad_bias_desc, &size) -> size: the float32 columns of one im2col step."""
    handle_arg(handle)
    problem, _, _ = _checked("cnnlDCNBackwardWeight", dcn_desc, input_desc, offset_desc, mask_desc, grad_filter_desc,
                             "grad_filter_desc", grad_output_desc, "grad_output_desc", grad_bias_desc, "grad_bias_desc")
    return _workspace_bytes(problem)


@api("cnnlDCNBackwardWeight")
def dCNBackwardWeight(handle, dcn_desc, input_desc, input, offset_desc, offset, mask_desc, mask, grad_output_desc,
                      grad_output, workspace, workspace_size, grad_filter_desc, grad_filter, grad_bias_desc,
                      grad_bias) -> None:  # noqa: A002
    """cnnlDCNBackwardWeight(handle, dcn_desc, input_desc, input, offset_desc, offset, mask_desc, mask,
    grad_output_desc, grad_output, workspace, workspace_size, grad_filter_desc, grad_filter, grad_bias_desc,
    grad_bias): the gradients with respect to the filter and the bias (grad_bias may be NULL)."""
    op = "cnnlDCNBackwardWeight"
    with OpCall(op, handle) as call:
        problem, wd, bd = _checked(op, dcn_desc, input_desc, offset_desc, mask_desc, grad_filter_desc,
                                   "grad_filter_desc", grad_output_desc, "grad_output_desc", grad_bias_desc,
                                   "grad_bias_desc")
        xv, ov, mv = problem.sampling_views(call, input, offset, mask)
        dyv = problem.view(call, problem.out, grad_output, "grad_output")
        dwv = N.channel_last(call.output(wd, grad_filter, "grad_filter"), wd.layout)
        dbv = call.output(bd, grad_bias, "grad_bias") if bd is not None else None
        call.workspace(workspace, workspace_size, _workspace_bytes(problem), "cnnlGetDCNBackwardWeightWorkspaceSize")
        geometry = problem.geometry
        call.submit(lambda: K.dcn_backward_weight(xv, ov, mv, dyv, dwv, dbv, geometry), flops=problem.flops,
                    dtype=problem.x.dtype, unit=cost.TENSOR)
