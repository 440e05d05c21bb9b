"""threshold and hardtanh with their backward kernels (cnnlThreshold, cnnlThresholdBackward, cnnlHardtanh,
cnnlHardtanhBackward). threshold_backward is also the backward of relu (torch computes it from relu's result)."""
from __future__ import annotations

import torch

import cnnl

from ._core import FLOATING, TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register
from ._iter import Destination, check_castable

NUMERIC = frozenset(TORCH_TO_CNNL) - {torch.bool}


def _same_shape(a: torch.Tensor, b: torch.Tensor):
    if a.shape == b.shape:
        return a, b
    shape = torch.broadcast_shapes(a.shape, b.shape)
    return a.expand(shape), b.expand(shape)


@register("aten::threshold.out")
def threshold_out(self, threshold, value, *, out):
    """aten::threshold.out(self, threshold, value, *, out): value where self <= threshold, else self."""
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in NUMERIC:
        return fallback(aten.threshold.out, self, threshold, value, out=out)
    check_castable(self.dtype, out)
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        cnnl.threshold(handle(result), desc(self), self.data_ptr(), threshold, value, desc(result),
                       result.data_ptr())
    return target.finish()


@register("aten::threshold_backward.grad_input")
def threshold_backward_out(grad_output, self, threshold, *, grad_input):
    """aten::threshold_backward.grad_input(grad_output, self, threshold, *, grad_input): 0 where self <= threshold,
    else grad_output."""
    check_same_device(grad_output, self, grad_input)
    if self.device.type != "mlu" or self.dtype not in NUMERIC or grad_output.dtype != self.dtype:
        return fallback(aten.threshold_backward.grad_input, grad_output, self, threshold, grad_input=grad_input)
    dy, x = _same_shape(grad_output, self)
    target = Destination(grad_input, x.shape, self.dtype, (grad_output, self))
    result = target.target
    if result.numel():
        cnnl.thresholdBackward(handle(result), desc(x), x.data_ptr(), desc(dy), dy.data_ptr(), threshold,
                               desc(result), result.data_ptr())
    return target.finish()


def _hardtanh_into(self, min_val, max_val, out):
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.hardtanh.out, self, min_val, max_val, out=out)
    if min_val > max_val:
        raise RuntimeError("min_val cannot be greater than max_val")
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        cnnl.hardtanh(handle(result), desc(self), self.data_ptr(), float(max_val), float(min_val), desc(result),
                      result.data_ptr())
    return target.finish()


@register("aten::hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    """aten::hardtanh(self, min_val, max_val): clamp to [min_val, max_val] (NaN stays NaN)."""
    return _hardtanh_into(self, min_val, max_val, torch.empty_like(self))


@register("aten::hardtanh.out")
def hardtanh_out(self, min_val=-1, max_val=1, *, out):
    """aten::hardtanh.out(self, min_val, max_val, *, out)."""
    return _hardtanh_into(self, min_val, max_val, out)


@register("aten::hardtanh_")
def hardtanh_(self, min_val=-1, max_val=1):
    """aten::hardtanh_(self, min_val, max_val)."""
    return _hardtanh_into(self, min_val, max_val, self)


def _hardtanh_backward_into(grad_output, self, min_val, max_val, grad_input):
    check_same_device(grad_output, self, grad_input)
    if self.device.type != "mlu" or self.dtype not in FLOATING or grad_output.dtype != self.dtype:
        return fallback(aten.hardtanh_backward.grad_input, grad_output, self, min_val, max_val,
                        grad_input=grad_input)
    dy, x = _same_shape(grad_output, self)
    target = Destination(grad_input, x.shape, self.dtype, (grad_output, self))
    result = target.target
    if result.numel():
        cnnl.hardtanhBackward(handle(result), desc(x), x.data_ptr(), desc(dy), dy.data_ptr(), float(max_val),
                              float(min_val), desc(result), result.data_ptr())
    return target.finish()


@register("aten::hardtanh_backward")
def hardtanh_backward(grad_output, self, min_val, max_val):
    """aten::hardtanh_backward(grad_output, self, min_val, max_val): grad where min_val < self < max_val."""
    return _hardtanh_backward_into(grad_output, self, min_val, max_val, torch.empty_like(self))


@register("aten::hardtanh_backward.grad_input")
def hardtanh_backward_out(grad_output, self, min_val, max_val, *, grad_input):
    """aten::hardtanh_backward.grad_input(grad_output, self, min_val, max_val, *, grad_input)."""
    return _hardtanh_backward_into(grad_output, self, min_val, max_val, grad_input)
