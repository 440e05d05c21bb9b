"""Losses, forward and backward: cnnlNlllossForward/Backward, cnnlMSELoss/Backward, cnnlBceLoss/Backward,
cnnlBceWithLogits_v2/Backward, cnnlSmoothL1LossForward_v2/Backward_v2 and their workspace queries.

Every reduction enum numbers NONE=0, MEAN=1, SUM=2. With NONE the output (and a backward's upstream gradient) has
the input's dims (NLL: [N]); with MEAN or SUM it holds one element. NLL takes log-probabilities [N, C], INT32 or
INT64 labels [N], class weights [C] and a one-element total weight (written by the forward, read by the MEAN
backward); a label outside [0, C) that is not `ignore_index` fails the queued op. BCE weights (and the logits
loss's pos_weight) broadcast to the input. Cross entropy is cnnlSoftmaxForward(LOG) followed by NLL. Data types:
HALF, BFLOAT16, FLOAT, DOUBLE, every float operand alike. No workspace is needed.
"""
from __future__ import annotations

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


# ---- NLL ---------------------------------------------------------------------------------------------------------

def _nll_operands(op, reduction, x: TensorDescriptor, x_arg, t_desc, w_desc, tf_desc):
    t, w, tf = tensor_arg(t_desc, "t_desc"), tensor_arg(w_desc, "w_desc"), tensor_arg(tf_desc, "tf_desc")
    _floats(op, x, x_arg, (w, "w_desc"), (tf, "tf_desc"))
    N.index_tensor(t, "t_desc", op)
    if len(x.dims) != 2:
        raise ArgumentFault(f"{len(x.dims)} dims; NLL takes [N, C]", x_arg)
    batch, classes = x.dims
    if t.dims != (batch,):
        raise ArgumentFault(f"dims {list(t.dims)}; expected [{batch}] (one label per sample)", "t_desc")
    if w.dims != (classes,):
        raise ArgumentFault(f"dims {list(w.dims)}; expected [{classes}] (one weight per class)", "w_desc")
    N.elements_match(tf, "tf_desc", 1, "the total weight")
    return N.reduction(reduction, "algorithm"), t, w, tf


@api("cnnlGetNlllossWorkspaceSize")
def getNlllossWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetNlllossWorkspaceSize(handle, x_desc, &size) -> size (0)."""
    return _zero_workspace(handle, (x_desc, "x_desc"))


@api("cnnlNlllossForward")
def nlllossForward(handle, algorithm, workspace, workspace_size, x_desc, x, t_desc, target, ignore_index, w_desc,
                   filter, tf_desc, total_filter, y_desc, y) -> None:
    """cnnlNlllossForward(handle, algorithm, workspace, workspace_size, x_desc, x, t_desc, target, ignore_index,
    w_desc, filter, tf_desc, total_filter, y_desc, y): y = -x[i, target[i]] * filter[target[i]], reduced; the
    total weight of the counted labels goes to total_filter. `algorithm` is the reduction."""
    op = "cnnlNlllossForward"
    with OpCall(op, handle) as call:
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        reduction, td, wd, tfd = _nll_operands(op, algorithm, xd, "x_desc", t_desc, w_desc, tf_desc)
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        _reduced(yd, "y_desc", reduction, xd.dims[:1])
        ignore = as_int(ignore_index, "ignore_index")
        xv, tv, wv = call.input(xd, x, "x"), call.input(td, target, "target"), call.input(wd, filter, "filter")
        tfv, yv = call.output(tfd, total_filter, "total_filter"), call.output(yd, y, "y")
        call.workspace(workspace, workspace_size, 0, "cnnlGetNlllossWorkspaceSize")
        call.submit(lambda: K.nll_forward(xv, tv, wv, ignore, reduction, yv, tfv), flops=2 * xd.dims[0],
                    dtype=xd.dtype)


@api("cnnlNlllossBackward")
def nlllossBackward(handle, algorithm, diff_y_desc, diff_y, t_desc, target, ignore_index, w_desc, filter, tf_desc,
                    total_filter, diff_x_desc, diff_x) -> None:
    """cnnlNlllossBackward(handle, algorithm, diff_y_desc, diff_y, t_desc, target, ignore_index, w_desc, filter,
    tf_desc, total_filter, diff_x_desc, diff_x): diff_x [N, C] is -filter[label] * upstream at each label, 0
    elsewhere (MEAN divides by total_filter)."""
    op = "cnnlNlllossBackward"
    with OpCall(op, handle) as call:
        dxd, dyd = tensor_arg(diff_x_desc, "diff_x_desc"), tensor_arg(diff_y_desc, "diff_y_desc")
        reduction, td, wd, tfd = _nll_operands(op, algorithm, dxd, "diff_x_desc", t_desc, w_desc, tf_desc)
        checks.same_dtype(dxd, "diff_x_desc", (dyd, "diff_y_desc"))
        _reduced(dyd, "diff_y_desc", reduction, dxd.dims[:1])
        ignore = as_int(ignore_index, "ignore_index")
        dyv, tv, wv = call.input(dyd, diff_y, "diff_y"), call.input(td, target, "target"), call.input(wd, filter,
                                                                                                      "filter")
        tfv, dxv = call.input(tfd, total_filter, "total_filter"), call.output(dxd, diff_x, "diff_x")
        call.submit(lambda: K.nll_backward(dyv, tv, wv, tfv, ignore, reduction, dxv), flops=2 * dxd.size,
                    dtype=dxd.dtype)


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
