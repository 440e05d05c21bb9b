"""Descriptor + device pointer -> checked, pinned byte range -> numpy view of the tensor.

Every op builds its operands here: the byte span [pointer, pointer + span) that the descriptor's dims and strides
address is resolved and pinned in one step (so a null, unknown, freed or too-short pointer fails at the call), and
the tensor is then a strided numpy view over the block's bytes (what `numpy.lib.stride_tricks.as_strided` builds,
made directly with the `ndarray` constructor, which is ten times cheaper), valid while the pin is held.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, NullPointerFault
from mlusim.transfer import DeviceRange, acquire
from mlusim.validate import is_address

from . import dtypes as D
from .tensor import TensorDescriptor


def pointer_value(pointer, arg: str) -> int:
    """A device pointer argument as an int (NULL = None or 0 is returned as 0)."""
    if pointer is None:
        return 0
    if not is_address(pointer):
        raise ArgumentFault(f"expected a device address (int), got {type(pointer).__name__}", arg)
    return int(pointer)


def is_null(pointer) -> bool:
    """True for NULL (None or address 0). Anything else, junk included, is not NULL: the call that takes it as a
    pointer then reports it."""
    return pointer is None or (is_address(pointer) and int(pointer) == 0)


def self_overlapping(dims, strides) -> bool:
    """True when two different indices of (dims, strides) address the same element (e.g. a 0 stride). An empty
    tensor has no elements, so none of them overlap."""
    if 0 in dims:
        return False
    axes = sorted((s, d) for d, s in zip(dims, strides) if d > 1)
    reach = 1  # elements covered by the axes taken so far
    for stride, dim in axes:
        if stride < reach:
            return True
        reach = stride * (dim - 1) + reach
    return False


def span_bytes(desc: TensorDescriptor) -> int:
    return desc.span_bytes


def acquire_tensor(desc: TensorDescriptor, pointer, arg: str) -> DeviceRange | None:
    """Resolve and pin the bytes `desc` addresses from `pointer`; None for an empty tensor (nothing to touch)."""
    address = pointer if type(pointer) is int else pointer_value(pointer, arg)
    nbytes = desc.span_bytes
    if nbytes == 0:
        return None
    if address == 0:
        raise NullPointerFault(f"null device pointer for a tensor of {desc.describe()}", arg, 0)
    if address % desc.itemsize:
        raise ArgumentFault(f"0x{address:x} is not aligned to the {desc.itemsize}-byte {D.name(desc.dtype)} "
                            f"elements", arg)
    return acquire(address, nbytes, arg)


def tensor_view(desc: TensorDescriptor, span: DeviceRange | None, writable: bool) -> np.ndarray:
    """The tensor `desc` describes, as a numpy view over its pinned span (an empty array when it has no elements)."""
    dtype = D.STORAGE_DTYPES[desc.dtype]
    if span is None:
        return np.empty(desc.dims, dtype)
    block = span.block
    return np.ndarray(desc.dims, dtype, block.data if writable else block.read_only_data(), span.offset,
                      desc.byte_strides)
