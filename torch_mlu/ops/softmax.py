"""softmax and log_softmax with their backward kernels (cnnlSoftmaxForward_v2 / cnnlSoftmaxBackward). The
softmax dim is moved last in a strided view (no copy), which cnnl's LOW_DIMENSION mode reduces over."""
from __future__ import annotations

import torch

import cnnl

from ._core import FLOATING, aten, check_same_device, desc, fallback, handle, register
from ._iter import Destination

LOW = cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION


def _axis(dim: int, ndim: int) -> int:
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def _last(t: torch.Tensor, axis: int) -> torch.Tensor:
    """The tensor with `axis` moved last (a view; a 0-d tensor as [1])."""
    return t.reshape(1) if t.dim() == 0 else t.movedim(axis, -1)


def _forward(log: bool, self, dim: int, half_to_float: bool, out, overload):
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(overload, self, dim, half_to_float, out=out)
    if half_to_float and self.dtype != torch.float16:
        raise RuntimeError("conversion is supported for Half type only")
    axis = _axis(dim, self.dim())
    dtype = torch.float32 if half_to_float else self.dtype
    target = Destination(out, self.shape, dtype, (self,))
    result = target.target
    if result.numel():
        x = self if self.dtype == dtype else self.to(dtype)
        xv, yv = _last(x, axis), _last(result, axis)
        cnnl.softmaxForward_v2(handle(result), cnnl.CNNL_SOFTMAX_LOG if log else cnnl.CNNL_SOFTMAX_ACCURATE, LOW,
                               cnnl.CNNL_COMPUTATION_HIGH_PRECISION, 1, desc(xv), xv.data_ptr(), 0, desc(yv),
                               yv.data_ptr())
    return target.finish()


@register("aten::_softmax.out")
def softmax_out(self, dim, half_to_float=False, *, out):
    """aten::_softmax.out(self, dim, half_to_float, *, out) (torch.softmax)."""
    return _forward(False, self, dim, half_to_float, out, aten._softmax.out)


@register("aten::_log_softmax.out")
def log_softmax_out(self, dim, half_to_float=False, *, out):
    """aten::_log_softmax.out(self, dim, half_to_float, *, out) (torch.log_softmax)."""
    return _forward(True, self, dim, half_to_float, out, aten._log_softmax.out)


def _backward(log: bool, grad_output, output, dim: int, input_dtype, grad_input, overload):
    check_same_device(grad_output, output, grad_input)
    if grad_output.dtype != input_dtype and not (grad_output.dtype == torch.float32 and input_dtype == torch.float16):
        # torch_mlu's check (and torch's CUDA one): a gradient of another dtype only for half_to_float
        raise RuntimeError("expected input and grad types to match, or input to be at::Half and grad to be "
                           "at::Float")
    if output.device.type != "mlu" or output.dtype not in FLOATING or grad_output.dtype != output.dtype:
        out_name = "out" if log else "grad_input"  # (the two schemas name their out= argument differently)
        return fallback(overload, grad_output, output, dim, input_dtype, **{out_name: grad_input})
    axis = _axis(dim, output.dim())
    target = Destination(grad_input, output.shape, output.dtype, (grad_output, output))
    result = target.target
    if result.numel():
        yv, dyv, dxv = _last(output, axis), _last(grad_output, axis), _last(result, axis)
        cnnl.softmaxBackward(handle(result), cnnl.CNNL_SOFTMAX_LOG if log else cnnl.CNNL_SOFTMAX_ACCURATE, LOW, 1,
                             desc(yv), yv.data_ptr(), desc(dyv), dyv.data_ptr(), 0, desc(dxv), dxv.data_ptr())
    return target.finish()


@register("aten::_softmax_backward_data.out")
def softmax_backward_data_out(grad_output, output, dim, input_dtype, *, grad_input):
    """aten::_softmax_backward_data.out(grad_output, output, dim, input_dtype, *, grad_input)."""
    return _backward(False, grad_output, output, dim, input_dtype, grad_input, aten._softmax_backward_data.out)


@register("aten::_log_softmax_backward_data.out")
def log_softmax_backward_data_out(grad_output, output, dim, input_dtype, *, out):
    """aten::_log_softmax_backward_data.out(grad_output, output, dim, input_dtype, *, out)."""
    return _backward(True, grad_output, output, dim, input_dtype, out, aten._log_softmax_backward_data.out)
