"""Losses with their backward kernels over cnnl: mse_loss (cnnlMSELoss), smooth_l1_loss and huber_loss
(cnnlSmoothL1LossForward_v2 / Backward_v2; huber = delta * smooth L1 with beta = delta), binary_cross_entropy
(cnnlBceLoss) and binary_cross_entropy_with_logits (cnnlBceWithLogits_v2). torch's reduction numbers (none 0,
mean 1, sum 2) are cnnl's. Input and target broadcast to one shape; a reduced loss is a 0-d tensor."""
from __future__ import annotations

import torch

import cnnl

from ._core import FLOATING, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination

NONE, MEAN, SUM = 0, 1, 2
HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION


def _native(*tensors) -> bool:
    present = [t for t in tensors if t is not None]
    return all(t.device.type == "mlu" and t.dtype in FLOATING and t.dtype == present[0].dtype for t in present)


def _pair(self: torch.Tensor, target: torch.Tensor):
    """Input and target at their common shape (broadcast views)."""
    if self.shape == target.shape:
        return self, target
    shape = torch.broadcast_shapes(self.shape, target.shape)
    return self.expand(shape), target.expand(shape)


def _shaped(tensor: torch.Tensor | None, shape) -> torch.Tensor | None:
    """An optional weight at the input's shape (a broadcast view)."""
    if tensor is None or tuple(tensor.shape) == tuple(shape):
        return tensor
    return tensor.expand(shape)


def _reduced_shape(x: torch.Tensor, reduction: int) -> tuple:
    return tuple(x.shape) if reduction == NONE else ()


def _check_reduction(reduction: int) -> None:
    if reduction not in (NONE, MEAN, SUM):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _as_1d(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(1) if t.dim() == 0 else t


def _forward(name: str, run, self, target, reduction: int, out: torch.Tensor, weights=()):
    """out = loss(self, target): run(handle, x, t, y) with x, t at one shape and y the (dense) result."""
    _check_reduction(reduction)
    x, t = _pair(self, target)
    shape = _reduced_shape(x, reduction)
    destination = Destination(out, shape, self.dtype, (self, target, *weights))
    result = destination.target
    if result.numel():
        dense = result if result.is_contiguous() else torch.empty(shape, dtype=self.dtype, device=self.device)
        if x.numel() == 0:  # torch: mean of nothing is NaN, sum 0
            dense.fill_(float("nan") if reduction == MEAN else 0)
        else:
            run(handle(dense), _as_1d(x), _as_1d(t), _as_1d(dense))
        if dense is not result:
            result.copy_(dense)
    return destination.finish()


def _backward(run, grad_output, self, target, reduction: int, grad_input: torch.Tensor, weights=()):
    """grad_input = dloss/dself: run(handle, dy, x, t, dx) with x, t at one shape, dy of the loss's shape."""
    _check_reduction(reduction)
    x, t = _pair(self, target)
    destination = Destination(grad_input, x.shape, self.dtype, (grad_output, self, target, *weights))
    result = destination.target
    if result.numel():
        dense = result if result.is_contiguous() else torch.empty(x.shape, dtype=self.dtype, device=self.device)
        dy = grad_output if grad_output.dtype == self.dtype else grad_output.to(self.dtype)
        if reduction == NONE and dy.shape != x.shape:
            dy = dy.expand(x.shape)
        run(handle(dense), _as_1d(dy), _as_1d(x), _as_1d(t), _as_1d(dense))
        if dense is not result:
            result.copy_(dense)
    return destination.finish()


# ---- mse ------------------------------------------------------------------------------------------------------------
@register("aten::mse_loss.out")
def mse_loss_out(self, target, reduction=MEAN, *, out):
    """aten::mse_loss.out(self, target, reduction, *, out) (cnnlMSELoss)."""
    check_same_device(self, target, out)
    if not _native(self, target):
        return fallback(aten.mse_loss.out, self, target, reduction, out=out)
    return _forward("mse_loss", lambda h, x, t, y: cnnl.mSELoss(h, reduction, desc(x), x.data_ptr(), desc(t),
                                                                t.data_ptr(), desc(y), y.data_ptr()),
                    self, target, reduction, out)


def _mse_backward_into(grad_output, self, target, reduction, grad_input):
    check_same_device(grad_output, self, target, grad_input)
    if not _native(self, target, grad_output):
        return fallback(aten.mse_loss_backward.grad_input, grad_output, self, target, reduction,
                        grad_input=grad_input)
    return _backward(lambda h, dy, x, t, dx: cnnl.mSELossBackward(h, reduction, desc(x), x.data_ptr(), desc(t),
                                                                  t.data_ptr(), desc(dy), dy.data_ptr(), desc(dx),
                                                                  dx.data_ptr()),
                     grad_output, self, target, reduction, grad_input)


@register("aten::mse_loss_backward.grad_input")
def mse_loss_backward_out(grad_output, self, target, reduction, *, grad_input):
    """aten::mse_loss_backward.grad_input(grad_output, self, target, reduction, *, grad_input)."""
    return _mse_backward_into(grad_output, self, target, reduction, grad_input)


@register("aten::mse_loss_backward")
def mse_loss_backward(grad_output, self, target, reduction):
    """aten::mse_loss_backward(grad_output, self, target, reduction): 2 (self - target) grad (/ n for mean)."""
    return _mse_backward_into(grad_output, self, target, reduction, torch.empty(0, dtype=self.dtype,
                                                                                device=self.device))


# ---- smooth L1 / huber ----------------------------------------------------------------------------------------------
def _smooth_l1_forward(self, target, reduction, beta, out):
    def run(h, x, t, y):
        size = cnnl.getSmoothL1LossForwardWorkspaceSize(h, desc(x), reduction)
        ws, _keep = workspace(size, x.device)
        cnnl.smoothL1LossForward_v2(h, desc(x), x.data_ptr(), desc(t), t.data_ptr(), float(beta), reduction, ws,
                                    size, desc(y), y.data_ptr())
    return _forward("smooth_l1_loss", run, self, target, reduction, out)


def _smooth_l1_backward(grad_output, self, target, reduction, beta, grad_input):
    def run(h, dy, x, t, dx):
        size = cnnl.getSmoothL1LossBackwardWorkspaceSize(h, desc(x), reduction)
        ws, _keep = workspace(size, x.device)
        cnnl.smoothL1LossBackward_v2(h, desc(x), x.data_ptr(), desc(t), t.data_ptr(), desc(dy), dy.data_ptr(),
                                     float(beta), reduction, ws, size, desc(dx), dx.data_ptr())
    return _backward(run, grad_output, self, target, reduction, grad_input)


@register("aten::smooth_l1_loss.out")
def smooth_l1_loss_out(self, target, reduction=MEAN, beta=1.0, *, out):
    """aten::smooth_l1_loss.out(self, target, reduction, beta, *, out) (cnnlSmoothL1LossForward_v2)."""
    check_same_device(self, target, out)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if not _native(self, target) or beta == 0:  # beta 0 is the L1 loss: torch's own formula
        return fallback(aten.smooth_l1_loss.out, self, target, reduction, beta, out=out)
    return _smooth_l1_forward(self, target, reduction, beta, out)


@register("aten::smooth_l1_loss_backward.grad_input")
def smooth_l1_loss_backward_out(grad_output, self, target, reduction, beta, *, grad_input):
    """aten::smooth_l1_loss_backward.grad_input(grad_output, self, target, reduction, beta, *, grad_input)."""
    check_same_device(grad_output, self, target, grad_input)
    if not _native(self, target, grad_output) or beta == 0:
        return fallback(aten.smooth_l1_loss_backward.grad_input, grad_output, self, target, reduction, beta,
                        grad_input=grad_input)
    return _smooth_l1_backward(grad_output, self, target, reduction, beta, grad_input)


def _huber_into(self, target, reduction, delta, out):
    check_same_device(self, target, out)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if not _native(self, target):
        return fallback(aten.huber_loss.out, self, target, reduction, delta, out=out)
    _smooth_l1_forward(self, target, reduction, delta, out)
    return out.mul_(delta) if out.numel() else out


@register("aten::huber_loss")
def huber_loss(self, target, reduction=MEAN, delta=1.0):
    """aten::huber_loss(self, target, reduction, delta): delta * smooth_l1_loss(beta=delta)."""
    return _huber_into(self, target, reduction, delta, torch.empty(0, dtype=self.dtype, device=self.device))


@register("aten::huber_loss.out")
def huber_loss_out(self, target, reduction=MEAN, delta=1.0, *, out):
    """aten::huber_loss.out(self, target, reduction, delta, *, out)."""
    return _huber_into(self, target, reduction, delta, out)


@register("aten::huber_loss_backward.out")
def huber_loss_backward_out(grad_output, self, target, reduction, delta, *, grad_input):
    """aten::huber_loss_backward.out(grad_output, self, target, reduction, delta, *, grad_input)."""
    check_same_device(grad_output, self, target, grad_input)
    if not _native(self, target, grad_output):
        return fallback(aten.huber_loss_backward.out, grad_output, self, target, reduction, delta,
                        grad_input=grad_input)
    _smooth_l1_backward(grad_output, self, target, reduction, delta, grad_input)
    return grad_input.mul_(delta) if grad_input.numel() else grad_input


# ---- binary cross entropy -------------------------------------------------------------------------------------------
def _bce_into(self, target, weight, reduction, out):
    check_same_device(self, target, out, *([weight] if weight is not None else []))
    if self.shape != target.shape:
        raise ValueError(f"Using a target size ({tuple(target.shape)}) that is different to the input size "
                         f"({tuple(self.shape)}) is deprecated. Please ensure they have the same size.")
    if not _native(self, target, weight):
        return fallback(aten.binary_cross_entropy.out, self, target, weight, reduction, out=out)
    w = _shaped(weight, self.shape)

    def run(h, x, t, y):
        w_desc = None if w is None else desc(_as_1d(w))
        size = cnnl.getBceLossWorkspaceSize(h, desc(x), w_desc)
        ws, _keep = workspace(size, x.device)
        cnnl.bceLoss(h, desc(x), x.data_ptr(), desc(t), t.data_ptr(), w_desc, None if w is None else w.data_ptr(),
                     reduction, ws, size, desc(y), y.data_ptr())
    return _forward("binary_cross_entropy", run, self, target, reduction, out, (weight,) if weight is not None else ())


@register("aten::binary_cross_entropy")
def binary_cross_entropy(self, target, weight=None, reduction=MEAN):
    """aten::binary_cross_entropy(self, target, weight, reduction) (cnnlBceLoss; logs clamped at -100 as torch)."""
    return _bce_into(self, target, weight, reduction, torch.empty(0, dtype=self.dtype, device=self.device))


@register("aten::binary_cross_entropy.out")
def binary_cross_entropy_out(self, target, weight=None, reduction=MEAN, *, out):
    """aten::binary_cross_entropy.out(self, target, weight, reduction, *, out)."""
    return _bce_into(self, target, weight, reduction, out)


def _bce_backward_into(grad_output, self, target, weight, reduction, grad_input):
    check_same_device(grad_output, self, target, grad_input, *([weight] if weight is not None else []))
    if not _native(self, target, grad_output, weight):
        return fallback(aten.binary_cross_entropy_backward.grad_input, grad_output, self, target, weight, reduction,
                        grad_input=grad_input)
    w = _shaped(weight, self.shape)

    def run(h, dy, x, t, dx):
        w_desc = None if w is None else desc(_as_1d(w))
        size = cnnl.getBceLossBackwardWorkspaceSize(h, desc(t), w_desc)
        ws, _keep = workspace(size, x.device)
        cnnl.bceLossBackward(h, desc(dy), dy.data_ptr(), desc(x), x.data_ptr(), desc(t), t.data_ptr(), w_desc,
                             None if w is None else w.data_ptr(), reduction, ws, size, desc(dx), dx.data_ptr())
    return _backward(run, grad_output, self, target, reduction, grad_input, (weight,) if weight is not None else ())


@register("aten::binary_cross_entropy_backward")
def binary_cross_entropy_backward(grad_output, self, target, weight=None, reduction=MEAN):
    """aten::binary_cross_entropy_backward(grad_output, self, target, weight, reduction) (cnnlBceLossBackward)."""
    return _bce_backward_into(grad_output, self, target, weight, reduction,
                              torch.empty(0, dtype=self.dtype, device=self.device))


@register("aten::binary_cross_entropy_backward.grad_input")
def binary_cross_entropy_backward_out(grad_output, self, target, weight=None, reduction=MEAN, *, grad_input):
    """aten::binary_cross_entropy_backward.grad_input(grad_output, self, target, weight, reduction, *, grad_input)."""
    return _bce_backward_into(grad_output, self, target, weight, reduction, grad_input)


@register("aten::binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(self, target, weight=None, pos_weight=None, reduction=MEAN):
    """aten::binary_cross_entropy_with_logits(self, target, weight, pos_weight, reduction) (cnnlBceWithLogits_v2;
    weight and pos_weight broadcast to the input)."""
    check_same_device(self, target, *[t for t in (weight, pos_weight) if t is not None])
    if not _native(self, target, weight, pos_weight) or self.shape != target.shape:
        return fallback(aten.binary_cross_entropy_with_logits.default, self, target, weight, pos_weight, reduction)
    w, pw = _shaped(weight, self.shape), _shaped(pos_weight, self.shape)
    out = torch.empty(0, dtype=self.dtype, device=self.device)

    def run(h, x, t, y):
        w_desc = None if w is None else desc(_as_1d(w))
        pw_desc = None if pw is None else desc(_as_1d(pw))
        size = cnnl.getBceWithLogitsWorkspaceSize(h, desc(x), w_desc, pw_desc)
        ws, _keep = workspace(size, x.device)
        cnnl.bceWithLogits_v2(h, HIGH, desc(x), x.data_ptr(), desc(t), t.data_ptr(), w_desc,
                              None if w is None else w.data_ptr(), pw_desc, None if pw is None else pw.data_ptr(),
                              reduction, ws, size, desc(y), y.data_ptr())
    return _forward("binary_cross_entropy_with_logits", run, self, target, reduction, out)


# ---- negative log likelihood ----------------------------------------------------------------------------------------
def _class_weight(weight: torch.Tensor | None):
    """(descriptor, address) of the per-class weight (of the input's dtype: `_native` checked it), or (None, None)
    when torch passes none: cnnl's _v2 NLL functions then weigh every class 1."""
    return (None, None) if weight is None else (desc(weight), weight.data_ptr())


def _rows(self: torch.Tensor, target: torch.Tensor):
    """(x as [samples, classes], target as [samples]) for 1-D, 2-D and spatial ([N, C, d1, ...]) inputs."""
    if self.dim() == 1:
        return self.unsqueeze(0), target.reshape(1)
    if self.dim() == 2:
        return self, target
    return self.movedim(1, -1).reshape(-1, self.shape[1]), target.reshape(-1)


def _nll_forward(self, target, weight, reduction, ignore_index, output, total_weight, overload):
    check_same_device(self, target, output, total_weight, *([weight] if weight is not None else []))
    if not _native(self, weight) or target.dtype not in (torch.int32, torch.int64):
        return fallback(overload, self, target, weight, reduction, ignore_index, output=output,
                        total_weight=total_weight)
    _check_reduction(reduction)
    x, t = _rows(self, target)
    shape = tuple(target.shape) if reduction == NONE else ()
    w_desc, w_address = _class_weight(weight)
    outputs = [Destination(output, shape, self.dtype, (self,)), Destination(total_weight, (), self.dtype, (self,))]
    y, total = (o.target if o.target.is_contiguous() else torch.empty(o.target.shape, dtype=self.dtype,
                                                                       device=self.device) for o in outputs)
    if x.shape[0] == 0:
        y.fill_(float("nan") if reduction == MEAN else 0)
        total.zero_()
    else:
        h = handle(x)
        x_desc = desc(x)
        size = cnnl.getNlllossWorkspaceSize(h, x_desc)
        ws, _keep = workspace(size, self.device)
        y_flat, total_flat = _as_1d(y).reshape(-1), total.reshape(1)
        cnnl.nlllossForward_v2(h, reduction, x_desc, x.data_ptr(), desc(t), t.data_ptr(), ignore_index, w_desc,
                               w_address, ws, size, desc(total_flat), total_flat.data_ptr(), desc(y_flat),
                               y_flat.data_ptr())
    for o, result in zip(outputs, (y, total)):
        if result is not o.target:
            o.target.copy_(result)
        o.finish()
    return output, total_weight


@register("aten::nll_loss_forward.output")
def nll_loss_forward_out(self, target, weight, reduction, ignore_index, *, output, total_weight):
    """aten::nll_loss_forward.output(self, target, weight, reduction, ignore_index, *, output, total_weight)
    (cnnlNlllossForward; cross_entropy is log_softmax + this)."""
    return _nll_forward(self, target, weight, reduction, ignore_index, output, total_weight,
                        aten.nll_loss_forward.output)


@register("aten::nll_loss2d_forward.output")
def nll_loss2d_forward_out(self, target, weight, reduction, ignore_index, *, output, total_weight):
    """aten::nll_loss2d_forward.output(...): spatial NLL as rows of classes."""
    return _nll_forward(self, target, weight, reduction, ignore_index, output, total_weight,
                        aten.nll_loss2d_forward.output)


@register("aten::nll_loss2d_forward")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    """aten::nll_loss2d_forward(self, target, weight, reduction, ignore_index) -> (output, total_weight)."""
    output = torch.empty(0, dtype=self.dtype, device=self.device)
    total_weight = torch.empty((), dtype=self.dtype, device=self.device)
    return nll_loss2d_forward_out(self, target, weight, reduction, ignore_index, output=output,
                                  total_weight=total_weight)


def _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input, overload):
    check_same_device(grad_output, self, target, total_weight, grad_input, *([weight] if weight is not None else []))
    if not _native(self, weight, grad_output, total_weight) or target.dtype not in (torch.int32, torch.int64):
        return fallback(overload, grad_output, self, target, weight, reduction, ignore_index, total_weight,
                        grad_input=grad_input)
    _check_reduction(reduction)
    destination = Destination(grad_input, self.shape, self.dtype, (grad_output, self))
    result = destination.target
    if result.numel():
        spatial = self.dim() > 2
        if not spatial and result.is_contiguous():
            dense = result  # the kernel writes every element of its rows: no buffer, no copy
        else:
            dense = torch.empty(self.movedim(1, -1).shape if spatial else self.shape, dtype=self.dtype,
                                device=self.device)
        dx, t = _rows(dense.movedim(-1, 1) if spatial else dense, target)
        w_desc, w_address = _class_weight(weight)
        dy = _as_1d(grad_output).reshape(-1) if reduction == NONE else grad_output.reshape(1)
        total = total_weight.reshape(1)
        cnnl.nlllossBackward_v2(handle(dx), reduction, desc(dy), dy.data_ptr(), desc(t), t.data_ptr(), ignore_index,
                                w_desc, w_address, desc(total), total.data_ptr(), desc(dx), dx.data_ptr())
        if dense is not result:
            result.copy_(dense.movedim(-1, 1) if spatial else dense)
    return destination.finish()


@register("aten::nll_loss_backward.grad_input")
def nll_loss_backward_out(grad_output, self, target, weight, reduction, ignore_index, total_weight, *, grad_input):
    """aten::nll_loss_backward.grad_input(grad_output, self, target, weight, reduction, ignore_index, total_weight,
    *, grad_input) (cnnlNlllossBackward)."""
    return _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input,
                         aten.nll_loss_backward.grad_input)


@register("aten::nll_loss2d_backward.grad_input")
def nll_loss2d_backward_out(grad_output, self, target, weight, reduction, ignore_index, total_weight, *,
                            grad_input):
    """aten::nll_loss2d_backward.grad_input(...): spatial NLL's gradient."""
    return _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, grad_input,
                         aten.nll_loss2d_backward.grad_input)


@register("aten::nll_loss2d_backward")
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    """aten::nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)."""
    return nll_loss2d_backward_out(grad_output, self, target, weight, reduction, ignore_index, total_weight,
                                   grad_input=torch.empty_like(self))
