"""Argument checks shared by the ops: data types, shapes, broadcasting, axes, scalars. Each raises a fault naming
the argument (BAD_PARAM, or NOT_SUPPORTED for a valid request this library does not implement)."""
from __future__ import annotations

import math
from typing import Iterable

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number

from . import dtypes as D
from . import enums as E
from .tensor import TensorDescriptor


def supported_dtype(desc: TensorDescriptor, arg: str, allowed: Iterable[int], op: str) -> None:
    """NOT_SUPPORTED unless the tensor's data type is one of `allowed`."""
    allowed = tuple(allowed)
    if desc.dtype not in allowed:
        names = ", ".join(D.name(code) for code in allowed)
        raise NotSupportedFault(f"{op} does not support {D.name(desc.dtype)} tensors (supported: {names})", arg)


def dtype_value(value, arg: str, allowed: Iterable[int], what: str = "cnnlDataType_t") -> int:
    """A cnnlDataType_t value: BAD_PARAM when it is no data type at all, NOT_SUPPORTED when it is one this library
    does not compute with here (`allowed`)."""
    code = as_enum(value, arg, D.ITEMSIZES, "cnnlDataType_t")
    allowed = tuple(allowed)
    if code not in allowed:
        raise NotSupportedFault(f"{D.name(code)} is not supported as {what} (supported: "
                                f"{', '.join(D.name(c) for c in allowed)})", arg)
    return code


def same_dtype(reference: TensorDescriptor, reference_arg: str, *others: tuple[TensorDescriptor, str]) -> None:
    """BAD_PARAM unless every other tensor has the reference tensor's data type."""
    for desc, arg in others:
        if desc.dtype != reference.dtype:
            raise ArgumentFault(f"data type {D.name(desc.dtype)} differs from {reference_arg}'s "
                                f"{D.name(reference.dtype)}", arg)


def same_shape(reference: TensorDescriptor, reference_arg: str, *others: tuple[TensorDescriptor, str]) -> None:
    """BAD_PARAM unless every other tensor has the reference tensor's dims."""
    for desc, arg in others:
        if desc.dims != reference.dims:
            raise ArgumentFault(f"dims {list(desc.dims)} differ from {reference_arg}'s {list(reference.dims)}", arg)


def broadcasts_to(out: TensorDescriptor, out_arg: str, *inputs: tuple[TensorDescriptor, str]) -> None:
    """BAD_PARAM unless each input broadcasts (numpy rules, right-aligned) to exactly the output's dims."""
    for desc, arg in inputs:
        if len(desc.dims) > len(out.dims):
            raise ArgumentFault(f"{len(desc.dims)} dims cannot broadcast to {out_arg}'s {list(out.dims)}", arg)
        for have, want in zip(reversed(desc.dims), reversed(out.dims)):
            if have != want and have != 1:
                raise ArgumentFault(f"dims {list(desc.dims)} do not broadcast to {out_arg}'s {list(out.dims)}", arg)


def broadcast_dims(*descs: tuple[TensorDescriptor, str]) -> tuple[int, ...]:
    """The dims the tensors broadcast to together (numpy rules); BAD_PARAM naming the first that does not fit."""
    ndim = max(len(desc.dims) for desc, _ in descs)
    dims = [1] * ndim
    for desc, arg in descs:
        for i, extent in enumerate(desc.dims, ndim - len(desc.dims)):
            if extent != 1 and dims[i] not in (1, extent):
                raise ArgumentFault(f"dims {list(desc.dims)} do not broadcast with the other operands", arg)
            dims[i] = extent if extent != 1 else dims[i]
    return tuple(dims)


def axis(value, ndim: int, arg: str) -> int:
    """An axis in [-ndim, ndim), normalised to [0, ndim)."""
    number = as_int(value, arg)
    if not -ndim <= number < ndim:
        raise ArgumentFault(f"axis {number} is out of range for {ndim} dimensions", arg)
    return number % ndim


def preference(value, arg: str = "prefer") -> int:
    """A cnnlComputationPreference_t. The simulator computes every preference at high precision."""
    return as_enum(value, arg, E.COMPUTATION_PREFERENCES, "cnnlComputationPreference_t")


def scalar(value, arg: str, default: float, dtype: int) -> float | int:
    """A host scalar passed by pointer (alpha, beta): NULL (None) means `default`; integer tensors need integral
    scalars within int64 (NaN, inf and 1e30 are BAD_PARAM, not a Python error)."""
    if value is None:
        return default
    kind = type(value)
    if kind is float and dtype not in D.INTEGER or kind is int and -2**63 <= value < 2**63:
        return value  # the common case (a Python number a framework passes), without the general checks
    number = as_number(value, arg)
    if dtype in D.INTEGER:
        if not integral(number):
            raise ArgumentFault(f"{number} is not integral, as {D.name(dtype)} tensors need", arg)
        if not -2**63 <= int(number) < 2**63:
            raise ArgumentFault(f"{number} does not fit the 64-bit integer arithmetic of {D.name(dtype)} tensors",
                                arg)
    return number


def integral(number) -> bool:
    """True for a finite number with no fractional part (NaN and infinities are not; any Python int is)."""
    if isinstance(number, int):
        return True
    return math.isfinite(number) and float(number) == int(number)


def flag(value, arg: str) -> bool:
    """A C bool / int flag."""
    if isinstance(value, bool):
        return value
    return bool(as_int(value, arg))
