"""The `_v2` loss forms DIOPI calls: cnnlGetMSELossWorkspaceSize + cnnlMSELoss_v2, cnnlNlllossForward_v2 and
cnnlNlllossBackward_v2 (the NLL workspace query is part 2's cnnlGetNlllossWorkspaceSize).

Same numerics and checks as the part 2 forms (`cnnl.ops.losses`): MSELoss_v2 adds a workspace (0 bytes) to
cnnlMSELoss; the NLL _v2 forms take the reduction first, move the workspace after the weight and accept a NULL
weight (every class weighs 1). Argument orders from DeepLink DIOPI's Cambricon backend (functions/loss.cpp).
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int

from .. import checks
from ..kernels import losses as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N
from .losses import _bind, _forward, _reduced, _zero_workspace


@api("cnnlGetMSELossWorkspaceSize")
def getMSELossWorkspaceSize(handle, input_desc) -> int:
    """cnnlGetMSELossWorkspaceSize(handle, input_desc, &size) -> size (0)."""
    return _zero_workspace(handle, (input_desc, "input_desc"))


@api("cnnlMSELoss_v2")
def mSELoss_v2(handle, reduction, input_desc, input, target_desc, target, workspace, workspace_size, output_desc,
               output) -> None:  # noqa: A002
    """cnnlMSELoss_v2(handle, reduction, input_desc, input, target_desc, target, workspace, workspace_size,
    output_desc, output): (input - target)^2, reduced."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlMSELoss_v2", input_desc, input, target_desc, target)
    _forward("cnnlMSELoss_v2", handle, mode, x, t, (), output_desc, output, workspace, workspace_size,
             "cnnlGetMSELossWorkspaceSize", lambda xv, tv, r, ov: K.mse_forward(xv, tv, r, ov))


def _nll(op, reduction, x: TensorDescriptor, x_arg, t_desc, w_desc, tw_desc):
    """(reduction, target, weight or None, total weight) descriptors of an NLL call, checked."""
    mode = N.reduction(reduction, "reduction")
    t, tw = tensor_arg(t_desc, "target_desc"), tensor_arg(tw_desc, "total_weight_desc")
    N.float_tensor(x, x_arg, op)
    N.index_tensor(t, "target_desc", op)
    if len(x.dims) != 2:
        raise ArgumentFault(f"{len(x.dims)} dims; NLL takes [N, C]", x_arg)
    batch, classes = x.dims
    if t.dims != (batch,):
        raise ArgumentFault(f"dims {list(t.dims)}; expected [{batch}] (one label per sample)", "target_desc")
    w = None
    if w_desc is not None:
        w = tensor_arg(w_desc, "weight_desc")
        checks.same_dtype(x, x_arg, (w, "weight_desc"))
        if w.dims != (classes,):
            raise ArgumentFault(f"dims {list(w.dims)}; expected [{classes}] (one weight per class)", "weight_desc")
    checks.same_dtype(x, x_arg, (tw, "total_weight_desc"))
    N.elements_match(tw, "total_weight_desc", 1, "the total weight")
    return mode, t, w, tw


def _weights(call, w: TensorDescriptor, pointer, classes: int):
    if w is None:
        return np.ones(classes, np.float64)
    return call.input(w, pointer, "weight")


@api("cnnlNlllossForward_v2")
def nlllossForward_v2(handle, reduction, input_desc, input, target_desc, target, ignore_index, weight_desc, weight,
                      workspace, workspace_size, total_weight_desc, total_weight, output_desc,
                      output) -> None:  # noqa: A002
    """cnnlNlllossForward_v2(handle, reduction, input_desc, input, target_desc, target, ignore_index, weight_desc,
    weight, workspace, workspace_size, total_weight_desc, total_weight, output_desc, output): as
    cnnlNlllossForward; weight may be NULL (all ones)."""
    op = "cnnlNlllossForward_v2"
    with OpCall(op, handle) as call:
        xd, yd = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        mode, td, wd, twd = _nll(op, reduction, xd, "input_desc", target_desc, weight_desc, total_weight_desc)
        checks.same_dtype(xd, "input_desc", (yd, "output_desc"))
        _reduced(yd, "output_desc", mode, xd.dims[:1])
        ignore = as_int(ignore_index, "ignore_index")
        xv, tv = call.input(xd, input, "input"), call.input(td, target, "target")
        wv = _weights(call, wd, weight, xd.dims[1])
        twv, yv = call.output(twd, total_weight, "total_weight"), call.output(yd, output, "output")
        call.workspace(workspace, workspace_size, 0, "cnnlGetNlllossWorkspaceSize")
        call.submit(lambda: K.nll_forward(xv, tv, wv, ignore, mode, yv, twv), flops=2 * xd.dims[0], dtype=xd.dtype)


@api("cnnlNlllossBackward_v2")
def nlllossBackward_v2(handle, reduction, grad_output_desc, grad_output, target_desc, target, ignore_index,
                       weight_desc, weight, total_weight_desc, total_weight, grad_input_desc, grad_input) -> None:
    """cnnlNlllossBackward_v2(handle, reduction, grad_output_desc, grad_output, target_desc, target, ignore_index,
    weight_desc, weight, total_weight_desc, total_weight, grad_input_desc, grad_input): as cnnlNlllossBackward;
    weight may be NULL (all ones)."""
    op = "cnnlNlllossBackward_v2"
    with OpCall(op, handle) as call:
        dxd, dyd = tensor_arg(grad_input_desc, "grad_input_desc"), tensor_arg(grad_output_desc, "grad_output_desc")
        mode, td, wd, twd = _nll(op, reduction, dxd, "grad_input_desc", target_desc, weight_desc, total_weight_desc)
        checks.same_dtype(dxd, "grad_input_desc", (dyd, "grad_output_desc"))
        _reduced(dyd, "grad_output_desc", mode, dxd.dims[:1])
        ignore = as_int(ignore_index, "ignore_index")
        dyv, tv = call.input(dyd, grad_output, "grad_output"), call.input(td, target, "target")
        wv = _weights(call, wd, weight, dxd.dims[1])
        twv, dxv = call.input(twd, total_weight, "total_weight"), call.output(dxd, grad_input, "grad_input")
        call.submit(lambda: K.nll_backward(dyv, tv, wv, twv, ignore, mode, dxv), flops=2 * dxd.size,
                    dtype=dxd.dtype)
