"""Layer, RMS and group normalisation: cnnlLayerNormForward, cnnlLayerNormBackward_v2, cnnlRmsNormForward,
cnnlRmsNormBackward, cnnlGroupNormForward_v3, cnnlGroupNormBackward and their workspace queries.

Layer and RMS norm normalise over dims[axis:] of x; weight and bias (the `wb_desc` tensors, or NULL) span
dims[axis:]; the saved mean and rstd (layer norm) or rstd (RMS norm, "rms") hold prod(dims[:axis]) elements.
Group norm takes x as (N, C, *spatial) (NCHW-style, layout NCHW or ARRAY), normalises each (sample, group) and
applies a per-channel scale and bias; mean and rstd hold N * groups elements. HALF, BFLOAT16, FLOAT, DOUBLE;
weights and statistics may be a wider float type. No workspace is needed.
"""
from __future__ import annotations

import math

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int, as_number

from .. import checks
from .. import enums as E
from ..handle import handle_arg
from ..kernels import normalization as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import is_null
from . import nn_common as N

_FLOPS_PER_ELEMENT = 8


def _axis(value, x: TensorDescriptor) -> int:
    return checks.axis(value, len(x.dims), "axis")


def _eps(value) -> float:
    eps = float(as_number(value, "eps"))
    if not eps >= 0:
        raise ArgumentFault(f"eps {eps} must be >= 0", "eps")
    return eps


def _same(op, ref: TensorDescriptor, ref_arg: str, *others):
    N.float_tensor(ref, ref_arg, op)
    checks.same_dtype(ref, ref_arg, *others)
    checks.same_shape(ref, ref_arg, *others)


def _optional_tensor(desc, arg: str, op: str, elements: int, what: str):
    if desc is None:
        return None
    tensor = tensor_arg(desc, arg)
    N.float_tensor(tensor, arg, op)
    N.elements_match(tensor, arg, elements, what)
    return tensor


def _pin_optional(call, desc, pointer, arg, output=False):
    if desc is None or is_null(pointer):
        return None
    return call.output(desc, pointer, arg) if output else call.input(desc, pointer, arg)


# ---- layer norm and RMS norm -------------------------------------------------------------------------------------

def _row_forward(c_name, handle, centered, x_desc, x, axis, wb_desc, weight, bias, eps, workspace, workspace_size,
                 y_desc, y, stats_desc, stats, query):
    with OpCall(c_name, handle) as call:
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        _same(c_name, xd, "x_desc", (yd, "y_desc"))
        dim = _axis(axis, xd)
        rows, cols = math.prod(xd.dims[:dim]), math.prod(xd.dims[dim:])
        epsilon = _eps(eps)
        wbd = _optional_tensor(wb_desc, "wb_desc", c_name, cols, "one weight per normalised element")
        sd = _optional_tensor(stats_desc, "mean_rstd_desc", c_name, rows, "one statistic per row")
        xv = call.input(xd, x, "x")
        wv = _pin_optional(call, wbd, weight, "weight")
        bv = _pin_optional(call, wbd, bias, "bias")
        saved = [_pin_optional(call, sd, p, a, output=True) for p, a in stats]
        yv = call.output(yd, y, "y")
        call.workspace(workspace, workspace_size, 0, query)
        mean_out, rstd_out = (saved if centered else (None, saved[0]))
        call.submit(lambda: K.rows_forward(xv, yv, rows, epsilon, centered, wv, bv, mean_out, rstd_out),
                    flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)


def _row_backward(c_name, handle, centered, x_desc, x, axis, dz_desc, dz, wb_desc, weight, stats_desc, stats,
                  workspace, workspace_size, dx_desc, dx, dweight, dbias, query):
    with OpCall(c_name, handle) as call:
        xd, dzd, dxd = tensor_arg(x_desc, "x_desc"), tensor_arg(dz_desc, "diff_z_desc"), tensor_arg(dx_desc,
                                                                                                   "diff_x_desc")
        _same(c_name, xd, "x_desc", (dzd, "diff_z_desc"), (dxd, "diff_x_desc"))
        dim = _axis(axis, xd)
        rows, cols = math.prod(xd.dims[:dim]), math.prod(xd.dims[dim:])
        wbd = _optional_tensor(wb_desc, "wb_desc", c_name, cols, "one weight per normalised element")
        sd = tensor_arg(stats_desc, "mean_rstd_desc")
        N.float_tensor(sd, "mean_rstd_desc", c_name)
        N.elements_match(sd, "mean_rstd_desc", rows, "one statistic per row")
        xv, dzv = call.input(xd, x, "x"), call.input(dzd, dz, "diff_z")
        wv = _pin_optional(call, wbd, weight, "weight")
        saved = [call.input(sd, p, a) for p, a in stats]
        grads = [_pin_optional(call, wbd, p, a, output=True) for p, a in ((dweight, "diff_weight"),
                                                                         (dbias, "diff_bias"))]
        dxv = call.output(dxd, dx, "diff_x")
        call.workspace(workspace, workspace_size, 0, query)
        mean, rstd = saved if centered else (None, saved[0])
        call.submit(lambda: K.rows_backward(xv, dzv, dxv, rows, centered, mean, rstd, wv, *grads),
                    flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)


def _workspace_query(op, handle, x_desc, axis) -> int:
    handle_arg(handle)
    xd = tensor_arg(x_desc, "x_desc")
    N.float_tensor(xd, "x_desc", op)
    _axis(axis, xd)
    return 0


@api("cnnlGetLayerNormOpWorkspaceSize")
def getLayerNormOpWorkspaceSize(handle, axis, x_desc) -> int:
    """cnnlGetLayerNormOpWorkspaceSize(handle, axis, x_desc, &size) -> size (0)."""
    return _workspace_query("cnnlLayerNormForward", handle, x_desc, axis)


@api("cnnlGetLayerNormBackwardWorkspaceSize")
def getLayerNormBackwardWorkspaceSize(handle, x_desc, axis) -> int:
    """cnnlGetLayerNormBackwardWorkspaceSize(handle, x_desc, axis, &size) -> size (0)."""
    return _workspace_query("cnnlLayerNormBackward_v2", handle, x_desc, axis)


@api("cnnlLayerNormForward")
def layerNormForward(handle, x_desc, x, axis, wb_desc, weight, bias, eps, workspace, workspace_size, y_desc, y,
                     mean_rstd_desc, saved_mean, saved_rstd) -> None:
    """cnnlLayerNormForward(handle, x_desc, x, axis, wb_desc, weight, bias, eps, workspace, workspace_size, y_desc,
    y, mean_rstd_desc, saved_mean, saved_rstd): y = (x - mean) * rstd * weight + bias over dims[axis:]."""
    _row_forward("cnnlLayerNormForward", handle, True, x_desc, x, axis, wb_desc, weight, bias, eps, workspace,
                 workspace_size, y_desc, y, mean_rstd_desc, ((saved_mean, "saved_mean"), (saved_rstd, "saved_rstd")),
                 "cnnlGetLayerNormOpWorkspaceSize")


@api("cnnlLayerNormBackward_v2")
def layerNormBackward_v2(handle, x_desc, x, axis, diff_z_desc, diff_z, wb_desc, weight, mean_rstd_desc, saved_mean,
                         saved_rstd, workspace, workspace_size, diff_x_desc, diff_x, diff_weight, diff_bias) -> None:
    """cnnlLayerNormBackward_v2(handle, x_desc, x, axis, diff_z_desc, diff_z, wb_desc, weight, mean_rstd_desc,
    saved_mean, saved_rstd, workspace, workspace_size, diff_x_desc, diff_x, diff_weight, diff_bias)."""
    _row_backward("cnnlLayerNormBackward_v2", handle, True, x_desc, x, axis, diff_z_desc, diff_z, wb_desc, weight,
                  mean_rstd_desc, ((saved_mean, "saved_mean"), (saved_rstd, "saved_rstd")), workspace,
                  workspace_size, diff_x_desc, diff_x, diff_weight, diff_bias, "cnnlGetLayerNormBackwardWorkspaceSize")


@api("cnnlGetRmsNormOpWorkspaceSize")
def getRmsNormOpWorkspaceSize(handle, axis, x_desc) -> int:
    """cnnlGetRmsNormOpWorkspaceSize(handle, axis, x_desc, &size) -> size (0)."""
    return _workspace_query("cnnlRmsNormForward", handle, x_desc, axis)


@api("cnnlGetRmsNormBackwardWorkspaceSize")
def getRmsNormBackwardWorkspaceSize(handle, x_desc, axis) -> int:
    """cnnlGetRmsNormBackwardWorkspaceSize(handle, x_desc, axis, &size) -> size (0)."""
    return _workspace_query("cnnlRmsNormBackward", handle, x_desc, axis)


@api("cnnlRmsNormForward")
def rmsNormForward(handle, axis, x_desc, x, wb_desc, weight, bias, eps, workspace, workspace_size, y_desc, y,
                   rms_desc, rms) -> None:
    """cnnlRmsNormForward(handle, axis, x_desc, x, wb_desc, weight, bias, eps, workspace, workspace_size, y_desc, y,
    rms_desc, rms): y = x * rstd * weight (+ bias), rstd = 1 / sqrt(mean(x^2) + eps) over dims[axis:], saved in
    `rms` (may be NULL)."""
    _row_forward("cnnlRmsNormForward", handle, False, x_desc, x, axis, wb_desc, weight, bias, eps, workspace,
                 workspace_size, y_desc, y, rms_desc, ((rms, "rms"),), "cnnlGetRmsNormOpWorkspaceSize")


@api("cnnlRmsNormBackward")
def rmsNormBackward(handle, axis, x_desc, x, diff_z_desc, diff_z, wb_desc, weight, rms_desc, rms, workspace,
                    workspace_size, diff_x_desc, diff_x, diff_wb_desc, diff_weight, diff_bias) -> None:
    """cnnlRmsNormBackward(handle, axis, x_desc, x, diff_z_desc, diff_z, wb_desc, weight, rms_desc, rms, workspace,
    workspace_size, diff_x_desc, diff_x, diff_wb_desc, diff_weight, diff_bias): gradients of cnnlRmsNormForward
    from its saved rstd (the argument order of DIOPI's call); diff_wb_desc describes diff_weight and diff_bias like
    wb_desc does weight (it may be NULL)."""
    if diff_wb_desc is not None:
        grads, params = tensor_arg(diff_wb_desc, "diff_wb_desc"), tensor_arg(wb_desc, "wb_desc")
        checks.same_dtype(params, "wb_desc", (grads, "diff_wb_desc"))
        checks.same_shape(params, "wb_desc", (grads, "diff_wb_desc"))
    _row_backward("cnnlRmsNormBackward", handle, False, x_desc, x, axis, diff_z_desc, diff_z, wb_desc, weight,
                  rms_desc, ((rms, "rms"),), workspace, workspace_size, diff_x_desc, diff_x, diff_weight, diff_bias,
                  "cnnlGetRmsNormBackwardWorkspaceSize")


# ---- group norm --------------------------------------------------------------------------------------------------

def _group_input(op, x_desc, groups_value):
    x = tensor_arg(x_desc, "x_desc")
    N.float_tensor(x, "x_desc", op)
    if len(x.dims) < 2 or x.layout not in (E.CNNL_LAYOUT_NCHW, E.CNNL_LAYOUT_NCDHW, E.CNNL_LAYOUT_ARRAY,
                                           E.CNNL_LAYOUT_NC):
        raise ArgumentFault(f"group norm takes (N, C, *spatial) with a channel-first layout, got layout "
                            f"{x.layout} with {len(x.dims)} dims", "x_desc")
    groups = as_int(groups_value, "num_groups", minimum=1)
    if x.dims[1] % groups:
        raise ArgumentFault(f"{x.dims[1]} channels do not divide into {groups} groups", "num_groups")
    return x, groups


@api("cnnlGetGroupNormForwardWorkspaceSize")
def getGroupNormForwardWorkspaceSize(handle, num_groups, x_desc) -> int:
    """cnnlGetGroupNormForwardWorkspaceSize(handle, num_groups, x_desc, &size) -> size (0)."""
    handle_arg(handle)
    _group_input("cnnlGroupNormForward_v3", x_desc, num_groups)
    return 0


@api("cnnlGetGroupNormBackwardWorkspaceSize")
def getGroupNormBackwardWorkspaceSize(handle, batch_channels) -> int:
    """cnnlGetGroupNormBackwardWorkspaceSize(handle, N * C, &size) -> size (0)."""
    handle_arg(handle)
    as_int(batch_channels, "batch_channels", minimum=0)
    return 0


@api("cnnlGroupNormForward_v3")
def groupNormForward_v3(handle, eps, num_groups, x_desc, x, scale_bias_desc, scale, bias, workspace, workspace_size,
                        y_desc, y, mean_rstd_desc, mean, rstd) -> None:
    """cnnlGroupNormForward_v3(handle, eps, num_groups, x_desc, x, scale_bias_desc, scale, bias, workspace,
    workspace_size, y_desc, y, mean_rstd_desc, mean, rstd): per (sample, group) normalisation, then
    y = x_hat * scale[c] + bias[c]; the statistics (N * groups each) may be NULL."""
    with OpCall("cnnlGroupNormForward_v3", handle) as call:
        xd, groups = _group_input("cnnlGroupNormForward_v3", x_desc, num_groups)
        yd = tensor_arg(y_desc, "y_desc")
        _same("cnnlGroupNormForward_v3", xd, "x_desc", (yd, "y_desc"))
        epsilon = _eps(eps)
        sbd = _optional_tensor(scale_bias_desc, "scale_bias_desc", "cnnlGroupNormForward_v3", xd.dims[1],
                               "one scale per channel")
        sd = _optional_tensor(mean_rstd_desc, "mean_rstd_desc", "cnnlGroupNormForward_v3", xd.dims[0] * groups,
                              "one statistic per (sample, group)")
        xv = call.input(xd, x, "x")
        sv, bv = _pin_optional(call, sbd, scale, "scale"), _pin_optional(call, sbd, bias, "bias")
        mv, rv = _pin_optional(call, sd, mean, "mean", True), _pin_optional(call, sd, rstd, "rstd", True)
        yv = call.output(yd, y, "y")
        call.workspace(workspace, workspace_size, 0, "cnnlGetGroupNormForwardWorkspaceSize")
        call.submit(lambda: K.group_norm_forward(xv, sv, bv, yv, groups, epsilon, mv, rv),
                    flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)


@api("cnnlGroupNormBackward")
def groupNormBackward(handle, x_desc, x, diff_z_desc, diff_z, gamma_desc, gamma, mean_desc, mean, rstd_desc, rstd,
                      groups, diff_x_desc, diff_x, diff_scale_desc, diff_scale, diff_bias_desc, diff_bias, workspace,
                      workspace_size) -> None:
    """cnnlGroupNormBackward(handle, x_desc, x, diff_z_desc, diff_z, gamma_desc, gamma, mean_desc, mean, rstd_desc,
    rstd, groups, diff_x_desc, diff_x, diff_scale_desc, diff_scale, diff_bias_desc, diff_bias, workspace,
    workspace_size): gradients of the group norm from its saved mean and rstd."""
    op = "cnnlGroupNormBackward"
    with OpCall(op, handle) as call:
        xd, count = _group_input(op, x_desc, groups)
        dzd, dxd = tensor_arg(diff_z_desc, "diff_z_desc"), tensor_arg(diff_x_desc, "diff_x_desc")
        _same(op, xd, "x_desc", (dzd, "diff_z_desc"), (dxd, "diff_x_desc"))
        channels, rows = xd.dims[1], xd.dims[0] * count
        gd = _optional_tensor(gamma_desc, "gamma_desc", op, channels, "one scale per channel")
        md = _optional_tensor(mean_desc, "mean_desc", op, rows, "one mean per (sample, group)")
        rd = _optional_tensor(rstd_desc, "rstd_desc", op, rows, "one rstd per (sample, group)")
        if md is None or rd is None:
            raise ArgumentFault("the saved statistics are required", "mean_desc" if md is None else "rstd_desc")
        dsd = _optional_tensor(diff_scale_desc, "diff_scale_desc", op, channels, "one gradient per channel")
        dbd = _optional_tensor(diff_bias_desc, "diff_bias_desc", op, channels, "one gradient per channel")
        xv, dzv = call.input(xd, x, "x"), call.input(dzd, diff_z, "diff_z")
        gv = _pin_optional(call, gd, gamma, "gamma")
        mv, rv = call.input(md, mean, "mean"), call.input(rd, rstd, "rstd")
        dsv = _pin_optional(call, dsd, diff_scale, "diff_scale", True)
        dbv = _pin_optional(call, dbd, diff_bias, "diff_bias", True)
        dxv = call.output(dxd, diff_x, "diff_x")
        call.workspace(workspace, workspace_size, 0, "cnnlGetGroupNormBackwardWorkspaceSize")
        call.submit(lambda: K.group_norm_backward(xv, dzv, gv, mv, rv, dxv, dsv, dbv, count),
                    flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)
