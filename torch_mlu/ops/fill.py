"""fill_ and zero_ through cnnlFill_v3, and the cached one-element device scalars the scalar forms of the
arithmetic ops read."""
from __future__ import annotations

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, desc, fallback, handle, register


def converted(value, dtype: torch.dtype):
    """`value` converted to `dtype` as torch converts a fill value (torch's error if it overflows the dtype), as a
    Python number cnnl can take exactly."""
    number = torch.full((), value, dtype=dtype).item()
    return int(number) if isinstance(number, bool) else number


def fill_host(tensor: torch.Tensor, number) -> None:
    """Queue cnnlFill_v3 (host pointer mode) of an already converted number over `tensor` (any strides)."""
    cnnl.fill_v3(handle(tensor), cnnl.CNNL_POINTER_MODE_HOST, number, desc(tensor), tensor.data_ptr())


@register("aten::fill_.Scalar")
def fill_scalar(self: torch.Tensor, value) -> torch.Tensor:
    """aten::fill_.Scalar(self, value)."""
    if self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.fill_.Scalar, self, value)
    number = converted(value, self.dtype)
    if self.numel():
        fill_host(self, number)
    return self


@register("aten::fill_.Tensor")
def fill_tensor(self: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    """aten::fill_.Tensor(self, value): value must be 0-d; an mlu value is read on the device when the fill runs
    (cnnl's device pointer mode), so no host sync."""
    if value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} "
                           f"dimensions.")
    if value.device.type != "mlu":
        return fill_scalar(self, value.item())
    if self.dtype not in TORCH_TO_CNNL or value.dtype not in TORCH_TO_CNNL:
        return fallback(aten.fill_.Tensor, self, value)
    if value.device != self.device:
        value = value.to(self.device)
    if value.dtype != self.dtype:
        value = value.to(self.dtype)
    if self.numel():
        cnnl.fill_v3(handle(self), cnnl.CNNL_POINTER_MODE_DEVICE, value.data_ptr(), desc(self), self.data_ptr())
    return self


@register("aten::zero_")
def zero_(self: torch.Tensor) -> torch.Tensor:
    """aten::zero_(self)."""
    if self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.zero_.default, self)
    if self.numel():
        fill_host(self, 0)
    return self


# ---- device scalars -------------------------------------------------------------------------------------------------
def device_scalar(value, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A 0-d mlu tensor holding `value` in `dtype`, filled on the device's current stream (the operand of the
    scalar forms of the arithmetic ops; freed, stream-ordered, right after the op that reads it)."""
    scalar = torch.empty((), dtype=dtype, device=device)
    fill_host(scalar, converted(value, dtype))
    return scalar
