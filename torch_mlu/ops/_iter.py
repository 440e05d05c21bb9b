"""What torch's TensorIterator does around an elementwise kernel, for the Python kernels: result dtypes, out=
checks and resizing, operands in the computation dtype, and where the kernel writes (the output itself, or a dense
temporary copied into it when the output has another dtype or overlaps an input).

Structured ops reach PrivateUse1 as their `.out` overload: for `torch.exp(x)` and `x.exp_()` torch's own meta
function has already broadcast, promoted and allocated the output; for a user's `out=` nothing has been checked
yet, so the kernels check here as TensorIterator would.
"""
from __future__ import annotations

import warnings

import torch

from .copy import copy_into
from .fill import device_scalar

INTEGRAL = frozenset({torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool})

_TYPE_NAMES = {torch.float32: "Float", torch.float64: "Double", torch.float16: "Half", torch.bfloat16: "BFloat16",
               torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
               torch.uint8: "Byte", torch.bool: "Bool", torch.complex64: "ComplexFloat",
               torch.complex128: "ComplexDouble", torch.complex32: "ComplexHalf"}


def type_name(dtype: torch.dtype) -> str:
    """torch's C++ name of a dtype, as its error messages print it (Float, Long, ...)."""
    return _TYPE_NAMES.get(dtype, str(dtype).replace("torch.", ""))


_CPP_NAMES = {torch.float32: "float", torch.float64: "double", torch.float16: "c10::Half",
              torch.bfloat16: "c10::BFloat16", torch.int64: "long int", torch.int32: "int", torch.int16: "short int",
              torch.int8: "signed char", torch.uint8: "unsigned char", torch.bool: "bool",
              torch.complex64: "c10::complex<float>", torch.complex128: "c10::complex<double>"}


def cpp_name(dtype: torch.dtype) -> str:
    """The C++ type name of a dtype, as torch's TypeMeta prints it in out= dtype errors (float, long int, ...)."""
    return _CPP_NAMES.get(dtype, str(dtype).replace("torch.", ""))


def float_result(dtype: torch.dtype) -> torch.dtype:
    """The result dtype of a floating-point function of a tensor of `dtype` (integers give the default float)."""
    return torch.get_default_dtype() if dtype in INTEGRAL else dtype


def check_castable(result: torch.dtype, out: torch.Tensor) -> None:
    """torch's error when an out= tensor cannot hold the result dtype."""
    if not torch.can_cast(result, out.dtype):
        raise RuntimeError(f"result type {type_name(result)} can't be cast to the desired output type "
                           f"{type_name(out.dtype)}")


def resize_out(out: torch.Tensor, shape) -> None:
    """at::native::resize_output: give `out` the result's shape (warning when a non-empty tensor is resized)."""
    shape = tuple(shape)
    if tuple(out.shape) == shape:
        return
    if out.numel() != 0:
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                      f"which does not match the required output shape {list(shape)}. This behavior is "
                      f"deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                      f"zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                      f"elements with t.resize_(0).", UserWarning, stacklevel=3)
    out.resize_(shape)


def check_no_internal_overlap(out: torch.Tensor) -> None:
    if not out.is_contiguous() and torch._debug_has_internal_overlap(out) == 1:
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


def is_non_overlapping_and_dense(tensor: torch.Tensor) -> bool:
    """TensorImpl::is_non_overlapping_and_dense (not exposed to Python): some order of the dims is contiguous,
    e.g. a contiguous or channels-last tensor; not an expanded, sliced-with-step or overlapping one."""
    if tensor.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((stride, size) for size, stride in zip(tensor.shape, tensor.stride()) if size != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _same_view(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.data_ptr() == b.data_ptr() and a.stride() == b.stride() and a.shape == b.shape


def check_no_partial_overlap(out: torch.Tensor, *operands) -> None:
    """TensorIterator's assert_no_partial_overlap: an operand that shares some, but not all, of the written tensor's
    memory is refused. As torch's get_overlap_status, only dense tensors are judged (others are "too hard")."""
    if not out.numel():
        return
    start = out.data_ptr()
    end = start + out.numel() * out.element_size()  # (its span when dense, the only case judged)
    for value in operands:
        if not isinstance(value, torch.Tensor) or value is out or value.device != out.device or not value.numel():
            continue
        first = value.data_ptr()
        if first < end and start < first + value.numel() * value.element_size() and not _same_view(out, value) \
                and is_non_overlapping_and_dense(out) and is_non_overlapping_and_dense(value):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


def shares_memory(out: torch.Tensor, value) -> bool:
    """True when `value` (a tensor) lies in out's storage without being exactly out's view."""
    if not isinstance(value, torch.Tensor) or value.device != out.device or value.numel() == 0:
        return False
    if value.untyped_storage().data_ptr() != out.untyped_storage().data_ptr():
        return False
    return not _same_view(out, value)


def on_device(value, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """`value` (an mlu tensor, a 0-d cpu tensor or a number) as an mlu tensor of `dtype` on `device`; numbers and
    0-d cpu tensors become one-element device tensors (broadcast by the kernels)."""
    if not isinstance(value, torch.Tensor):
        return device_scalar(value, dtype, device)
    if value.device.type == "cpu":
        return device_scalar(value.item(), dtype, device)
    return value if value.dtype == dtype else value.to(dtype)


class Destination:
    """Where a kernel writes a result of `shape` and `dtype` that belongs in `out`: `target` is out itself when it
    has the dtype and does not partially overlap an input, else a dense temporary; `finish()` copies (and casts)
    the temporary into out and returns out."""

    __slots__ = ("out", "target")

    def __init__(self, out: torch.Tensor, shape, dtype: torch.dtype, inputs=()):
        resize_out(out, shape)
        check_no_internal_overlap(out)
        self.out = out
        if out.dtype == dtype and not any(shares_memory(out, value) for value in inputs):
            self.target = out
        else:
            self.target = torch.empty(tuple(shape), dtype=dtype, device=out.device)

    def finish(self) -> torch.Tensor:
        if self.target is not self.out and self.out.numel():
            copy_into(self.target, self.out)
        return self.out
