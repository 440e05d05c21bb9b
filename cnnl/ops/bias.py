"""Bias add and its gradient: cnnlBiasAdd, cnnlBiasAddBackward_v2 and their workspace queries (the bias of
convolutions and linear layers; DIOPI also uses cnnlBiasAdd as an axpby on equal shapes).

cnnlBiasAdd: output = alpha * bias + beta * output, the bias holding one value per channel (axis 1 of NCHW/NCDHW
outputs, the last axis otherwise; its dims may be [C] or any shape of C elements). cnnlBiasAddBackward_v2:
diff_bias = the sum of diff_y over every axis but `axis` (accumulated in float64, integers in int64 and wrapped).
"""
from __future__ import annotations


from .. import checks
from .. import dtypes as D
from .. import workspace as W
from ..handle import handle_arg
from ..kernels import arithmetic as A
from ..kernels import op_tensor
from ..kernels.bias import bias_gradient
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N


def _bias_operands(bias_desc, output_desc) -> tuple[TensorDescriptor, TensorDescriptor, int]:
    bias, out = tensor_arg(bias_desc, "bias_desc"), tensor_arg(output_desc, "output_desc")
    checks.supported_dtype(out, "output_desc", D.NUMERIC, "cnnlBiasAdd")
    checks.same_dtype(out, "output_desc", (bias, "bias_desc"))
    axis = N.channel_axis(out)
    N.elements_match(bias, "bias_desc", out.dims[axis], f"the channel axis {axis} of the output")
    return bias, out, axis


@api("cnnlGetBiasAddWorkspaceSize")
def getBiasAddWorkspaceSize(handle, bias_desc, output_desc) -> int:
    """cnnlGetBiasAddWorkspaceSize(handle, bias_desc, output_desc, size_t *size) -> 0 (the bias is read per
    channel; nothing is staged)."""
    handle_arg(handle)
    _bias_operands(bias_desc, output_desc)
    return 0


def _bias_add(bias, output, axis, alpha, beta):
    shape = [1] * output.ndim
    shape[axis] = output.shape[axis]
    column = bias.reshape(-1).reshape(shape)
    if beta == 0:  # output may hold poison: never read it
        A.transform(column, alpha, 0, output)
    else:
        op_tensor("add", column, output, output, alpha, beta, 0)


@api("cnnlBiasAdd")
def biasAdd(handle, alpha, bias_desc, bias, workspace, workspace_size, beta, output_desc, output) -> None:
    """cnnlBiasAdd(handle, const void *alpha, bias_desc, bias, workspace, workspace_size, const void *beta,
    output_desc, output): output = alpha * bias + beta * output, the bias broadcast along the output's channel
    axis. alpha and beta are host numbers (NULL = 1); beta = 0 never reads the output."""
    with OpCall("cnnlBiasAdd", handle) as call:
        bd, od, axis = _bias_operands(bias_desc, output_desc)
        scale, keep = checks.scalar(alpha, "alpha", 1, od.dtype), checks.scalar(beta, "beta", 1, od.dtype)
        b_view = call.input(bd, bias, "bias")
        o_view = call.output(od, output, "output", read=keep != 0)
        call.workspace(workspace, workspace_size, 0, "cnnlGetBiasAddWorkspaceSize")
        call.submit(lambda: _bias_add(b_view, o_view, axis, scale, keep), flops=2 * od.size, dtype=od.dtype)


def _backward_operands(diff_y_desc, diff_bias_desc, axis):
    dy, db = tensor_arg(diff_y_desc, "diff_y_desc"), tensor_arg(diff_bias_desc, "diff_bias_desc")
    checks.supported_dtype(dy, "diff_y_desc", D.NUMERIC, "cnnlBiasAddBackward_v2")
    checks.same_dtype(dy, "diff_y_desc", (db, "diff_bias_desc"))
    dim = checks.axis(axis, len(dy.dims), "axis")
    N.elements_match(db, "diff_bias_desc", dy.dims[dim], f"axis {dim} of diff_y")
    return dy, db, dim


@api("cnnlGetBiasAddBackwardWorkspaceSize")
def getBiasAddBackwardWorkspaceSize(handle, diff_y_desc, diff_bias_desc, axis) -> int:
    """cnnlGetBiasAddBackwardWorkspaceSize(handle, diff_y_desc, diff_bias_desc, int axis, size_t *size) -> size: a
    float32 accumulator of diff_bias for half/bfloat16, else 0."""
    handle_arg(handle)
    dy, db, _ = _backward_operands(diff_y_desc, diff_bias_desc, axis)
    return W.float32_accumulator(db, dy.dtype)


@api("cnnlBiasAddBackward_v2")
def biasAddBackward_v2(handle, diff_y_desc, diff_y, axis, diff_bias_desc, diff_bias, workspace,
                       workspace_size) -> None:
    """cnnlBiasAddBackward_v2(handle, diff_y_desc, diff_y, int axis, diff_bias_desc, diff_bias, workspace,
    workspace_size): diff_bias = diff_y summed over every axis except `axis` (diff_bias holds dims[axis]
    elements)."""
    with OpCall("cnnlBiasAddBackward_v2", handle) as call:
        dy, db, dim = _backward_operands(diff_y_desc, diff_bias_desc, axis)
        dy_view, db_view = call.input(dy, diff_y, "diff_y"), call.output(db, diff_bias, "diff_bias")
        call.workspace(workspace, workspace_size, W.float32_accumulator(db, dy.dtype),
                       "cnnlGetBiasAddBackwardWorkspaceSize")
        call.submit(lambda: bias_gradient(dy_view, dim, db_view), flops=dy.size, dtype=dy.dtype)
