"""fill_ and zero_ through cnnlFill_v3, and the cached one-element device scalars the scalar forms of the
arithmetic ops read."""
from __future__ import annotations

import numpy as np
import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, desc, fallback, handle, register


#: float dtypes whose conversion of a Python float or int is one numpy rounding (as C++'s): no torch call needed
_NUMPY_FLOATS = {torch.float32: np.float32, torch.float64: np.float64}
_FLOAT_MAX = {dtype: float(torch.finfo(dtype).max) for dtype in _NUMPY_FLOATS}
#: integer dtypes a Python int in their range converts to as it is
_INT_RANGES = {dtype: (torch.iinfo(dtype).min, torch.iinfo(dtype).max)
               for dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)}
#: ints up to this size convert to a float exactly (beyond, int -> float32 and int -> double -> float32 can differ)
_EXACT_INT = 1 << 53


def _plain_number(value, dtype: torch.dtype):
    """`value` in `dtype` when the conversion cannot overflow or round differently from torch's, else None: a
    Python float or int within a float32/float64's range, a Python int within an integer type's."""
    kind = type(value)
    numpy_float = _NUMPY_FLOATS.get(dtype)
    if numpy_float is not None:
        if kind is float or (kind is int and -_EXACT_INT <= value <= _EXACT_INT):
            number = float(value)
            if abs(number) <= _FLOAT_MAX[dtype] or number != number:
                return float(numpy_float(number))
        return None
    bounds = _INT_RANGES.get(dtype)
    if bounds is not None and kind is int and bounds[0] <= value <= bounds[1]:
        return value
    return None


def converted(value, dtype: torch.dtype):
    """`value` converted to `dtype` as torch converts a fill value (torch's error if it overflows the dtype), as a
    Python number cnnl can take exactly."""
    number = _plain_number(value, dtype)
    return number if number is not None else _as_number(torch.full((), value, dtype=dtype))


#: the dtype torch gives a Python number it wraps into a tensor operand
_WRAPPED_DTYPES = {bool: torch.bool, int: torch.int64, float: torch.float64, complex: torch.complex128}


def cast_number(value, dtype: torch.dtype):
    """`value` (a Python number) converted to `dtype` as TensorIterator converts a scalar operand of an arithmetic
    or comparison op (a C++ conversion: a float beyond the type's range becomes inf, an integer wraps), unlike
    fill_'s checked conversion (`converted`); a Python number cnnl can take exactly."""
    number = _plain_number(value, dtype)
    if number is not None:
        return number
    return _as_number(torch.tensor(value, dtype=_WRAPPED_DTYPES.get(type(value), torch.float64)).to(dtype))


def _as_number(scalar: torch.Tensor):
    """A 0-d tensor's value as a number cnnl takes (a bool as 0 or 1)."""
    number = scalar.item()
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
    """A 0-d mlu tensor holding `value` in `dtype` (converted as fill_ converts it), filled on the device's current
    stream (an operand of the scalar forms of ops; freed, stream-ordered, right after the op that reads it)."""
    return device_number(converted(value, dtype), dtype, device)


def device_number(number, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """`device_scalar` of a number already in `dtype` (from `converted` or `cast_number`)."""
    scalar = torch.empty((), dtype=dtype, device=device)
    fill_host(scalar, number)
    return scalar
