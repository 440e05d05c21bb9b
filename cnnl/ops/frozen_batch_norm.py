"""cnnlFrozenBatchNormBackward_v2 and cnnlGetFrozenBatchNormBackwardWorkspaceSize: the gradients of batch norm in
eval mode, from the running (population) statistics (torch's batch_norm backward with training=False).

The tensors and fusion arguments follow the batch norm family (cnnl/ops/batch_norm.py): x, diff_y, diff_x of one
float type with the channel on axis 1 (NCHW/NCDHW) or last; weight, pop_mean, pop_var, diff_weight, diff_bias are
[C] tensors of `filter_bias_mean_var_desc`; the activation must be IDENTITY (or NULL), bnOps BN, y / bias / diff_z
unused (NULL). diff_weight and diff_bias may be NULL.
"""
from __future__ import annotations

from .. import checks
from ..handle import handle_arg
from ..kernels.frozen_batch_norm import frozen_batch_norm_backward
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..views import is_null
from . import nn_common as N
from .batch_norm import _eps, _fusion, _input, _no_extra, _params

_OP = "cnnlFrozenBatchNormBackward_v2"


@api("cnnlGetFrozenBatchNormBackwardWorkspaceSize")
def getFrozenBatchNormBackwardWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetFrozenBatchNormBackwardWorkspaceSize(handle, x_desc, size_t *size) -> 0."""
    handle_arg(handle)
    _input(_OP, x_desc)
    return 0


@api("cnnlFrozenBatchNormBackward_v2")
def frozenBatchNormBackward_v2(handle, activation_desc, mode, bnOps, x_desc, x, y_desc, y, diff_y_desc, diff_y,
                               filter_bias_mean_var_desc, filter, bias, pop_mean, pop_var, eps, workspace,
                               workspace_size, diff_z_desc, diff_z, diff_x_desc, diff_x, diff_filter,
                               diff_bias) -> None:
    """cnnlFrozenBatchNormBackward_v2(handle, activation_desc, mode, bnOps, x_desc, x, y_desc, y, diff_y_desc,
    diff_y, filter_bias_mean_var_desc, filter, bias, pop_mean, pop_var, float eps, workspace, workspace_size,
    diff_z_desc, diff_z, diff_x_desc, diff_x, diff_filter, diff_bias): diff_x = diff_y * filter / sqrt(pop_var +
    eps); diff_filter = sum(diff_y * (x - pop_mean)) / sqrt(pop_var + eps); diff_bias = sum(diff_y)."""
    _fusion(activation_desc, mode, bnOps)
    _no_extra(diff_z_desc, diff_z, "diff_z")
    with OpCall(_OP, handle) as call:
        xd = _input(_OP, x_desc)
        dyd, dxd = tensor_arg(diff_y_desc, "diff_y_desc"), tensor_arg(diff_x_desc, "diff_x_desc")
        checks.same_dtype(xd, "x_desc", (dyd, "diff_y_desc"), (dxd, "diff_x_desc"))
        checks.same_shape(xd, "x_desc", (dyd, "diff_y_desc"), (dxd, "diff_x_desc"))
        pd = _params(_OP, filter_bias_mean_var_desc, xd)
        epsilon = _eps(eps)
        xv, dyv = call.input(xd, x, "x"), call.input(dyd, diff_y, "diff_y")
        wv, mean, var = (call.input(pd, p, a) for p, a in ((filter, "filter"), (pop_mean, "pop_mean"),
                                                          (pop_var, "pop_var")))
        dxv = call.output(dxd, diff_x, "diff_x")
        grads = [call.output(pd, p, a) if not is_null(p) else None
                 for p, a in ((diff_filter, "diff_filter"), (diff_bias, "diff_bias"))]
        call.workspace(workspace, workspace_size, 0, "cnnlGetFrozenBatchNormBackwardWorkspaceSize")
        axis = N.channel_axis(xd)
        call.submit(lambda: frozen_batch_norm_backward(xv, dyv, wv, mean, var, epsilon, dxv, *grads, axis),
                    flops=4 * xd.size, dtype=xd.dtype)
