"""Losses, forward and backward: cnnlNlllossForward/Backward (and their _v2 forms), cnnlMSELoss/Backward (and
cnnlMSELoss_v2), cnnlBceLoss/Backward, cnnlBceWithLogits_v2/Backward, cnnlSmoothL1LossForward_v2/Backward_v2 and
their workspace queries. Argument orders of the _v2 forms from DeepLink DIOPI's Cambricon backend (loss.cpp).

Every reduction enum numbers NONE=0, MEAN=1, SUM=2. With NONE the output (and a backward's upstream gradient) has
the input's dims (NLL: [N]); with MEAN or SUM it holds one element. NLL takes log-probabilities [N, C], INT32 or
INT64 labels [N], class weights [C] and a one-element total weight (written by the forward, read by the MEAN
backward); a label outside [0, C) that is not `ignore_index` fails the queued op. BCE weights (and the logits
loss's pos_weight) broadcast to the input. Cross entropy is cnnlSoftmaxForward(LOG) followed by NLL. Data types:
HALF, BFLOAT16, FLOAT, DOUBLE, every float operand alike. No workspace is needed.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int, as_number

from .. import checks
from ..handle import handle_arg
from ..kernels import losses as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_FLOPS_PER_ELEMENT = 6


def _reduced(desc: TensorDescriptor, arg: str, reduction: int, dims) -> None:
    """BAD_PARAM unless `desc` is shaped like `dims` (NONE) or holds one element (MEAN, SUM)."""
    if reduction == K.NONE:
        if desc.dims != tuple(dims):
            raise ArgumentFault(f"dims {list(desc.dims)}; reduction NONE needs {list(dims)}", arg)
    elif desc.size != 1:
        raise ArgumentFault(f"dims {list(desc.dims)}; a reduced loss has one element", arg)


def _floats(op, ref: TensorDescriptor, ref_arg: str, *others) -> None:
    N.float_tensor(ref, ref_arg, op)
    checks.same_dtype(ref, ref_arg, *others)


def _broadcast_weight(op, desc, arg, x: TensorDescriptor):
    if desc is None:
        return None
    weight = tensor_arg(desc, arg)
    _floats(op, x, "input_desc", (weight, arg))
    checks.broadcasts_to(x, "input_desc", (weight, arg))
    return weight


def _optional(call, desc, pointer, arg):
    return None if desc is None else call.input(desc, pointer, arg)


def _zero_workspace(handle, *descs) -> int:
    handle_arg(handle)
    for desc, arg in descs:
        if desc is not None:
            tensor_arg(desc, arg)
    return 0


# ---- NLL: cnnlNlllossForward/Backward and their _v2 forms ----------------------------------------------------------

class _NllNames(NamedTuple):
    """The C parameter names of one NLL form, for the errors: the reduction, and (descriptor, pointer) of the [N, C]
    tensor, the labels, the class weights, the total weight and the per-sample tensor. The _v2 forms take the
    reduction first, the workspace after the weight, and a NULL weight (every class weighs 1)."""

    reduction: str
    classes: tuple
    target: tuple
    weight: tuple
    total: tuple
    samples: tuple
    weight_optional: bool = False


_NLL_FORWARD = _NllNames("algorithm", ("x_desc", "x"), ("t_desc", "target"), ("w_desc", "filter"),
                         ("tf_desc", "total_filter"), ("y_desc", "y"))
_NLL_BACKWARD = _NLL_FORWARD._replace(classes=("diff_x_desc", "diff_x"), samples=("diff_y_desc", "diff_y"))
_NLL_FORWARD_V2 = _NllNames("reduction", ("input_desc", "input"), ("target_desc", "target"), ("weight_desc", "weight"),
                            ("total_weight_desc", "total_weight"), ("output_desc", "output"), weight_optional=True)
_NLL_BACKWARD_V2 = _NLL_FORWARD_V2._replace(classes=("grad_input_desc", "grad_input"),
                                            samples=("grad_output_desc", "grad_output"))


def _nll_operands(op, names: _NllNames, reduction, x: TensorDescriptor, t_desc, w_desc, tw_desc):
    """(reduction, target, weight or None, total weight) descriptors of an NLL call on the [N, C] tensor x, checked
    against it."""
    x_arg = names.classes[0]
    t, tw = tensor_arg(t_desc, names.target[0]), tensor_arg(tw_desc, names.total[0])
    w = None if w_desc is None and names.weight_optional else tensor_arg(w_desc, names.weight[0])
    _floats(op, x, x_arg, *(((w, names.weight[0]),) if w is not None else ()), (tw, names.total[0]))
    N.index_tensor(t, names.target[0], op)
    if len(x.dims) != 2:
        raise ArgumentFault(f"{len(x.dims)} dims; NLL takes [N, C]", x_arg)
    batch, classes = x.dims
    if t.dims != (batch,):
        raise ArgumentFault(f"dims {list(t.dims)}; expected [{batch}] (one label per sample)", names.target[0])
    if w is not None and w.dims != (classes,):
        raise ArgumentFault(f"dims {list(w.dims)}; expected [{classes}] (one weight per class)", names.weight[0])
    N.elements_match(tw, names.total[0], 1, "the total weight")
    return N.reduction(reduction, names.reduction), t, w, tw


def _nll_weights(call, names: _NllNames, w: TensorDescriptor, pointer, classes: int):
    if w is None:
        return np.ones(classes, np.float64)
    return call.input(w, pointer, names.weight[1])


def _nll_forward(op, names, handle, reduction, x_desc, x, t_desc, target, ignore_index, w_desc, weight, workspace,
                 workspace_size, tw_desc, total_weight, y_desc, y) -> None:
    with OpCall(op, handle) as call:
        xd, yd = tensor_arg(x_desc, names.classes[0]), tensor_arg(y_desc, names.samples[0])
        mode, td, wd, twd = _nll_operands(op, names, reduction, xd, t_desc, w_desc, tw_desc)
        checks.same_dtype(xd, names.classes[0], (yd, names.samples[0]))
        _reduced(yd, names.samples[0], mode, xd.dims[:1])
        ignore = as_int(ignore_index, "ignore_index")
        xv, tv = call.input(xd, x, names.classes[1]), call.input(td, target, names.target[1])
        wv = _nll_weights(call, names, wd, weight, xd.dims[1])
        twv, yv = call.output(twd, total_weight, names.total[1]), call.output(yd, y, names.samples[1])
        call.workspace(workspace, workspace_size, 0, "cnnlGetNlllossWorkspaceSize")
        call.submit(lambda: K.nll_forward(xv, tv, wv, ignore, mode, yv, twv), flops=2 * xd.dims[0], dtype=xd.dtype)


def _nll_backward(op, names, handle, reduction, dy_desc, dy, t_desc, target, ignore_index, w_desc, weight, tw_desc,
                  total_weight, dx_desc, dx) -> None:
    with OpCall(op, handle) as call:
        dxd, dyd = tensor_arg(dx_desc, names.classes[0]), tensor_arg(dy_desc, names.samples[0])
        mode, td, wd, twd = _nll_operands(op, names, reduction, dxd, t_desc, w_desc, tw_desc)
        checks.same_dtype(dxd, names.classes[0], (dyd, names.samples[0]))
        _reduced(dyd, names.samples[0], mode, dxd.dims[:1])
        ignore = as_int(ignore_index, "ignore_index")
        dyv, tv = call.input(dyd, dy, names.samples[1]), call.input(td, target, names.target[1])
        wv = _nll_weights(call, names, wd, weight, dxd.dims[1])
        twv, dxv = call.input(twd, total_weight, names.total[1]), call.output(dxd, dx, names.classes[1])
        call.submit(lambda: K.nll_backward(dyv, tv, wv, twv, ignore, mode, dxv), flops=2 * dxd.size,
                    dtype=dxd.dtype)


@api("cnnlGetNlllossWorkspaceSize")
def getNlllossWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetNlllossWorkspaceSize(handle, x_desc, &size) -> size (0); the query of both NLL forward forms."""
    return _zero_workspace(handle, (x_desc, "x_desc"))


@api("cnnlNlllossForward")
def nlllossForward(handle, algorithm, workspace, workspace_size, x_desc, x, t_desc, target, ignore_index, w_desc,
                   filter, tf_desc, total_filter, y_desc, y) -> None:
    """cnnlNlllossForward(handle, algorithm, workspace, workspace_size, x_desc, x, t_desc, target, ignore_index,
    w_desc, filter, tf_desc, total_filter, y_desc, y): y = -x[i, target[i]] * filter[target[i]], reduced; the
    total weight of the counted labels goes to total_filter. `algorithm` is the reduction."""
    _nll_forward("cnnlNlllossForward", _NLL_FORWARD, handle, algorithm, x_desc, x, t_desc, target, ignore_index,
                 w_desc, filter, workspace, workspace_size, tf_desc, total_filter, y_desc, y)


@api("cnnlNlllossBackward")
def nlllossBackward(handle, algorithm, diff_y_desc, diff_y, t_desc, target, ignore_index, w_desc, filter, tf_desc,
                    total_filter, diff_x_desc, diff_x) -> None:
    """cnnlNlllossBackward(handle, algorithm, diff_y_desc, diff_y, t_desc, target, ignore_index, w_desc, filter,
    tf_desc, total_filter, diff_x_desc, diff_x): diff_x [N, C] is -filter[label] * upstream at each label, 0
    elsewhere (MEAN divides by total_filter)."""
    _nll_backward("cnnlNlllossBackward", _NLL_BACKWARD, handle, algorithm, diff_y_desc, diff_y, t_desc, target,
                  ignore_index, w_desc, filter, tf_desc, total_filter, diff_x_desc, diff_x)


@api("cnnlNlllossForward_v2")
def nlllossForward_v2(handle, reduction, input_desc, input, target_desc, target, ignore_index, weight_desc, weight,
                      workspace, workspace_size, total_weight_desc, total_weight, output_desc,
                      output) -> None:  # noqa: A002
    """cnnlNlllossForward_v2(handle, reduction, input_desc, input, target_desc, target, ignore_index, weight_desc,
    weight, workspace, workspace_size, total_weight_desc, total_weight, output_desc, output): as
    cnnlNlllossForward; weight may be NULL (all ones)."""
    _nll_forward("cnnlNlllossForward_v2", _NLL_FORWARD_V2, handle, reduction, input_desc, input, target_desc,
                 target, ignore_index, weight_desc, weight, workspace, workspace_size, total_weight_desc,
                 total_weight, output_desc, output)


@api("cnnlNlllossBackward_v2")
def nlllossBackward_v2(handle, reduction, grad_output_desc, grad_output, target_desc, target, ignore_index,
                       weight_desc, weight, total_weight_desc, total_weight, grad_input_desc, grad_input) -> None:
    """cnnlNlllossBackward_v2(handle, reduction, grad_output_desc, grad_output, target_desc, target, ignore_index,
    weight_desc, weight, total_weight_desc, total_weight, grad_input_desc, grad_input): as cnnlNlllossBackward;
    weight may be NULL (all ones)."""
    _nll_backward("cnnlNlllossBackward_v2", _NLL_BACKWARD_V2, handle, reduction, grad_output_desc, grad_output,
                  target_desc, target, ignore_index, weight_desc, weight, total_weight_desc, total_weight,
                  grad_input_desc, grad_input)


# ---- elementwise losses --------------------------------------------------------------------------------------------

def _pair(op, input_desc, target_desc):
    x, t = tensor_arg(input_desc, "input_desc"), tensor_arg(target_desc, "target_desc")
    _floats(op, x, "input_desc", (t, "target_desc"))
    checks.same_shape(x, "input_desc", (t, "target_desc"))
    return x, t


def _forward(op, handle, reduction, x, t, extra, output_desc, output, workspace, workspace_size, query, kernel):
    """Pin input, target, the optional weight tensors `extra` ((desc, pointer, arg)...) and the output; enqueue
    kernel(x, t, *extra, reduction, out)."""
    with OpCall(op, handle) as call:
        out = tensor_arg(output_desc, "output_desc")
        checks.same_dtype(x, "input_desc", (out, "output_desc"))
        _reduced(out, "output_desc", reduction, x.dims)
        xv, tv = call.input(x, x.pointer, "input"), call.input(t, t.pointer, "target")
        extras = [_optional(call, d, p, a) for d, p, a in extra]
        ov = call.output(out, output, "output")
        call.workspace(workspace, workspace_size, 0, query)
        call.submit(lambda: kernel(xv, tv, *extras, reduction, ov), flops=_FLOPS_PER_ELEMENT * x.size,
                    dtype=x.dtype)


def _grad(grad_desc, x: TensorDescriptor, reduction, arg="grad_desc") -> TensorDescriptor:
    grad = tensor_arg(grad_desc, arg)
    checks.same_dtype(x, "input_desc", (grad, arg))
    _reduced(grad, arg, reduction, x.dims)
    return grad


def _backward(op, handle, reduction, x, t, grad, grad_ptr, extra, diff_desc, diff, workspace, workspace_size, query,
              kernel):
    """Enqueue kernel(dy, x, t, *extra, reduction, dx) (argument order of the BCE kernels)."""
    with OpCall(op, handle) as call:
        dxd = tensor_arg(diff_desc, "diff_input_desc")
        checks.same_dtype(x, "input_desc", (dxd, "diff_input_desc"))
        checks.same_shape(x, "input_desc", (dxd, "diff_input_desc"))
        dyv = call.input(grad, grad_ptr, "grad")
        xv, tv = call.input(x, x.pointer, "input"), call.input(t, t.pointer, "target")
        extras = [_optional(call, d, p, a) for d, p, a in extra]
        dxv = call.output(dxd, diff, "diff_input")
        if query:
            call.workspace(workspace, workspace_size, 0, query)
        call.submit(lambda: kernel(dyv, xv, tv, *extras, reduction, dxv), flops=_FLOPS_PER_ELEMENT * x.size,
                    dtype=x.dtype)


def _bind(op, input_desc, input, target_desc, target):
    x, t = _pair(op, input_desc, target_desc)
    return _Pinned(x, input), _Pinned(t, target)


class _Pinned(TensorDescriptor):
    """A tensor descriptor copy that carries its device pointer."""

    __slots__ = ("pointer",)

    def __init__(self, desc: TensorDescriptor, pointer):
        super().__init__()
        self.assign(desc.layout, desc.dtype, desc.dims, desc.strides)
        self.pointer = pointer


@api("cnnlMSELoss")
def mSELoss(handle, reduction, input_desc, input, target_desc, target, output_desc, output) -> None:
    """cnnlMSELoss(handle, reduction, input_desc, input, target_desc, target, output_desc, output):
    (input - target)^2, reduced."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlMSELoss", input_desc, input, target_desc, target)
    _forward("cnnlMSELoss", handle, mode, x, t, (), output_desc, output, None, 0, None,
             lambda xv, tv, r, ov: K.mse_forward(xv, tv, r, ov))


@api("cnnlGetMSELossWorkspaceSize")
def getMSELossWorkspaceSize(handle, input_desc) -> int:
    """cnnlGetMSELossWorkspaceSize(handle, input_desc, &size) -> size (0): the query of cnnlMSELoss_v2."""
    return _zero_workspace(handle, (input_desc, "input_desc"))


@api("cnnlMSELoss_v2")
def mSELoss_v2(handle, reduction, input_desc, input, target_desc, target, workspace, workspace_size, output_desc,
               output) -> None:  # noqa: A002
    """cnnlMSELoss_v2(handle, reduction, input_desc, input, target_desc, target, workspace, workspace_size,
    output_desc, output): cnnlMSELoss with a workspace (0 bytes)."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlMSELoss_v2", input_desc, input, target_desc, target)
    _forward("cnnlMSELoss_v2", handle, mode, x, t, (), output_desc, output, workspace, workspace_size,
             "cnnlGetMSELossWorkspaceSize", lambda xv, tv, r, ov: K.mse_forward(xv, tv, r, ov))


@api("cnnlMSELossBackward")
def mSELossBackward(handle, reduction, input_desc, input, target_desc, target, grad_desc, grad, diff_input_desc,
                    diff_input) -> None:
    """cnnlMSELossBackward(handle, reduction, input_desc, input, target_desc, target, grad_desc, grad,
    diff_input_desc, diff_input): diff_input = 2 * (input - target) * upstream."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlMSELossBackward", input_desc, input, target_desc, target)
    g = _grad(grad_desc, x, mode)
    _backward("cnnlMSELossBackward", handle, mode, x, t, g, grad, (), diff_input_desc, diff_input, None, 0, None,
              lambda dy, xv, tv, r, dx: K.mse_backward(xv, tv, dy, r, dx))


@api("cnnlGetBceLossWorkspaceSize")
def getBceLossWorkspaceSize(handle, input_desc, weight_desc) -> int:
    """cnnlGetBceLossWorkspaceSize(handle, input_desc, weight_desc, &size) -> size (0)."""
    return _zero_workspace(handle, (input_desc, "input_desc"), (weight_desc, "weight_desc"))


@api("cnnlGetBceLossBackwardWorkspaceSize")
def getBceLossBackwardWorkspaceSize(handle, target_desc, weight_desc) -> int:
    """cnnlGetBceLossBackwardWorkspaceSize(handle, target_desc, weight_desc, &size) -> size (0)."""
    return _zero_workspace(handle, (target_desc, "target_desc"), (weight_desc, "weight_desc"))


@api("cnnlBceLoss")
def bceLoss(handle, input_desc, input, target_desc, target, weight_desc, weight, reduction, workspace,
            workspace_size, output_desc, output) -> None:
    """cnnlBceLoss(handle, input_desc, input, target_desc, target, weight_desc, weight, reduction, workspace,
    workspace_size, output_desc, output): -weight * (t * log(p) + (1 - t) * log(1 - p)), reduced (weight NULL = 1)."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlBceLoss", input_desc, input, target_desc, target)
    wd = _broadcast_weight("cnnlBceLoss", weight_desc, "weight_desc", x)
    _forward("cnnlBceLoss", handle, mode, x, t, ((wd, weight, "weight"),), output_desc, output, workspace,
             workspace_size, "cnnlGetBceLossWorkspaceSize", K.bce_forward)


@api("cnnlBceLossBackward")
def bceLossBackward(handle, grad_desc, grad, input_desc, input, target_desc, target, weight_desc, weight, reduction,
                    workspace, workspace_size, diff_input_desc, diff_input) -> None:
    """cnnlBceLossBackward(handle, grad_desc, grad, input_desc, input, target_desc, target, weight_desc, weight,
    reduction, workspace, workspace_size, diff_input_desc, diff_input)."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlBceLossBackward", input_desc, input, target_desc, target)
    wd = _broadcast_weight("cnnlBceLossBackward", weight_desc, "weight_desc", x)
    g = _grad(grad_desc, x, mode)
    _backward("cnnlBceLossBackward", handle, mode, x, t, g, grad, ((wd, weight, "weight"),), diff_input_desc,
              diff_input, workspace, workspace_size, "cnnlGetBceLossBackwardWorkspaceSize", K.bce_backward)


@api("cnnlGetBceWithLogitsWorkspaceSize")
def getBceWithLogitsWorkspaceSize(handle, input_desc, weight_desc, pos_weight_desc) -> int:
    """cnnlGetBceWithLogitsWorkspaceSize(handle, input_desc, weight_desc, pos_weight_desc, &size) -> size (0)."""
    return _zero_workspace(handle, (input_desc, "input_desc"), (weight_desc, "weight_desc"),
                           (pos_weight_desc, "pos_weight_desc"))


@api("cnnlGetBceWithLogitsBackwardWorkspaceSize")
def getBceWithLogitsBackwardWorkspaceSize(handle, target_desc, weight_desc, pos_weight_desc) -> int:
    """cnnlGetBceWithLogitsBackwardWorkspaceSize(handle, target_desc, weight_desc, pos_weight_desc, &size) -> 0."""
    return _zero_workspace(handle, (target_desc, "target_desc"), (weight_desc, "weight_desc"),
                           (pos_weight_desc, "pos_weight_desc"))


def _logit_weights(op, weight_desc, pos_weight_desc, x):
    return (_broadcast_weight(op, weight_desc, "weight_desc", x),
            _broadcast_weight(op, pos_weight_desc, "pos_weight_desc", x))


@api("cnnlBceWithLogits_v2")
def bceWithLogits_v2(handle, prefer, input_desc, input, target_desc, target, weight_desc, weight, pos_weight_desc,
                     pos_weight, reduction, workspace, workspace_size, output_desc, output) -> None:
    """cnnlBceWithLogits_v2(handle, prefer, input_desc, input, target_desc, target, weight_desc, weight,
    pos_weight_desc, pos_weight, reduction, workspace, workspace_size, output_desc, output):
    -weight * (pos_weight * t * log sigmoid(x) + (1 - t) * log(1 - sigmoid(x))), reduced."""
    checks.preference(prefer)
    mode = N.reduction(reduction)
    x, t = _bind("cnnlBceWithLogits_v2", input_desc, input, target_desc, target)
    wd, pd = _logit_weights("cnnlBceWithLogits_v2", weight_desc, pos_weight_desc, x)
    _forward("cnnlBceWithLogits_v2", handle, mode, x, t, ((wd, weight, "weight"), (pd, pos_weight, "pos_weight")),
             output_desc, output, workspace, workspace_size, "cnnlGetBceWithLogitsWorkspaceSize",
             K.bce_logits_forward)


@api("cnnlBceWithLogitsBackward")
def bceWithLogitsBackward(handle, grad_desc, grad, input_desc, input, target_desc, target, weight_desc, weight,
                          pos_weight_desc, pos_weight, reduction, workspace, workspace_size, diff_input_desc,
                          diff_input) -> None:
    """cnnlBceWithLogitsBackward(handle, grad_desc, grad, input_desc, input, target_desc, target, weight_desc,
    weight, pos_weight_desc, pos_weight, reduction, workspace, workspace_size, diff_input_desc, diff_input)."""
    mode = N.reduction(reduction)
    x, t = _bind("cnnlBceWithLogitsBackward", input_desc, input, target_desc, target)
    wd, pd = _logit_weights("cnnlBceWithLogitsBackward", weight_desc, pos_weight_desc, x)
    g = _grad(grad_desc, x, mode)
    _backward("cnnlBceWithLogitsBackward", handle, mode, x, t, g, grad, ((wd, weight, "weight"),
              (pd, pos_weight, "pos_weight")), diff_input_desc, diff_input, workspace, workspace_size,
              "cnnlGetBceWithLogitsBackwardWorkspaceSize", K.bce_logits_backward)


def _beta(value) -> float:
    beta = float(as_number(value, "beta"))
    if not beta >= 0:
        raise ArgumentFault(f"beta {beta} must be >= 0", "beta")
    return beta


@api("cnnlGetSmoothL1LossForwardWorkspaceSize")
def getSmoothL1LossForwardWorkspaceSize(handle, input_desc, reduction) -> int:
    """cnnlGetSmoothL1LossForwardWorkspaceSize(handle, input_desc, reduction, &size) -> size (0)."""
    N.reduction(reduction)
    return _zero_workspace(handle, (input_desc, "input_desc"))


@api("cnnlGetSmoothL1LossBackwardWorkspaceSize")
def getSmoothL1LossBackwardWorkspaceSize(handle, input_desc, reduction) -> int:
    """cnnlGetSmoothL1LossBackwardWorkspaceSize(handle, input_desc, reduction, &size) -> size (0)."""
    N.reduction(reduction)
    return _zero_workspace(handle, (input_desc, "input_desc"))


@api("cnnlSmoothL1LossForward_v2")
def smoothL1LossForward_v2(handle, input_desc, input, target_desc, target, beta, reduction, workspace,
                           workspace_size, output_desc, output) -> None:
    """cnnlSmoothL1LossForward_v2(handle, input_desc, input, target_desc, target, beta, reduction, workspace,
    workspace_size, output_desc, output): 0.5 * d^2 / beta where |d| < beta, else |d| - 0.5 * beta; reduced."""
    mode, b = N.reduction(reduction), _beta(beta)
    x, t = _bind("cnnlSmoothL1LossForward_v2", input_desc, input, target_desc, target)
    _forward("cnnlSmoothL1LossForward_v2", handle, mode, x, t, (), output_desc, output, workspace, workspace_size,
             "cnnlGetSmoothL1LossForwardWorkspaceSize", lambda xv, tv, r, ov: K.smooth_l1_forward(xv, tv, b, r, ov))


@api("cnnlSmoothL1LossBackward_v2")
def smoothL1LossBackward_v2(handle, input_desc, input, target_desc, target, grad_desc, grad, beta, reduction,
                            workspace, workspace_size, diff_input_desc, diff_input) -> None:
    """cnnlSmoothL1LossBackward_v2(handle, input_desc, input, target_desc, target, grad_desc, grad, beta, reduction,
    workspace, workspace_size, diff_input_desc, diff_input)."""
    mode, b = N.reduction(reduction), _beta(beta)
    x, t = _bind("cnnlSmoothL1LossBackward_v2", input_desc, input, target_desc, target)
    g = _grad(grad_desc, x, mode)
    _backward("cnnlSmoothL1LossBackward_v2", handle, mode, x, t, g, grad, (), diff_input_desc, diff_input, workspace,
              workspace_size, "cnnlGetSmoothL1LossBackwardWorkspaceSize",
              lambda dy, xv, tv, r, dx: K.smooth_l1_backward(xv, tv, dy, b, r, dx))
