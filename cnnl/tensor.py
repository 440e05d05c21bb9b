"""Tensor descriptors (cnnlTensorDescriptor_t): layout, data type, dims and strides (in elements).

A descriptor set without strides is dense row-major. Strides may be 0 (broadcast) or describe any permutation;
negative strides are rejected, as by CNNL. A 0-d tensor is described as 1-d {1}.
"""
from __future__ import annotations

import itertools
import math

from mlusim import sanitizer
from mlusim.errors import ArgumentFault, HandleFault
from mlusim.lenient import tolerate
from mlusim.validate import as_enum, as_int

from . import dtypes as D
from . import enums as E
from .status import api
from .validated import new_stamp

#: CNNL_DIM_MAX
MAX_DIMS = 8
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

_descriptor_ids = itertools.count(1)


def _dense_ignoring_unit_axes(dims, strides) -> bool:
    expected = 1
    for dim, stride in zip(reversed(dims), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def dense_strides(dims: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements, of a dense tensor with `dims`."""
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(dims[i + 1], 1)
    return tuple(strides)


class TensorDescriptor:
    """cnnlTensorDescriptor_t."""

    __slots__ = ("layout", "dtype", "dims", "strides", "onchip_dtype", "destroyed", "ident", "stamp",
                 "size", "itemsize", "span_elements", "is_dense", "byte_strides", "span_bytes", "read_bytes",
                 "element_layout")

    def __init__(self):
        self.onchip_dtype = E.CNNL_DTYPE_INVALID
        self.destroyed = False
        self.ident = next(_descriptor_ids)
        self.assign(E.CNNL_LAYOUT_ARRAY, E.CNNL_DTYPE_INVALID, (), ())

    def assign(self, layout: int, dtype: int, dims: tuple[int, ...], strides: tuple[int, ...]) -> None:
        """Set the fields (already validated) and the facts derived from them, which every op call reads."""
        self.stamp = new_stamp()  # what ops validated on the old fields no longer holds (cnnl.validated)
        self.layout, self.dtype, self.dims, self.strides = layout, dtype, dims, strides
        #: number of elements
        self.size = math.prod(dims) if dims else 0
        self.itemsize = D.ITEMSIZES.get(dtype, 0)
        self.byte_strides = tuple(s * self.itemsize for s in strides)
        #: elements from the first to one past the last addressed element (0 for an empty tensor)
        self.span_elements = 1 + sum((d - 1) * s for d, s in zip(dims, strides)) if self.size else 0
        #: True when the elements are contiguous in row-major order (size-1 axes may have any stride)
        self.is_dense = _dense_ignoring_unit_axes(dims, strides)
        #: bytes from the first to one past the last addressed element, and the bytes a read of it moves
        self.span_bytes = self.span_elements * self.itemsize
        self.read_bytes = min(self.size, self.span_elements) * self.itemsize
        #: (itemsize, dims, strides) of the elements a strided access touches (None when dense: the whole span)
        self.element_layout = None if self.is_dense else (self.itemsize, dims, strides)

    @property
    def is_set(self) -> bool:
        return bool(self.dims)

    def describe(self) -> str:
        text = f"{D.name(self.dtype)} {list(self.dims)}"
        if not self.is_dense:
            text += f" strides {list(self.strides)}"
        return text

    def __repr__(self) -> str:
        if self.destroyed:
            return f"<cnnlTensorDescriptor {self.ident} destroyed>"
        return f"<cnnlTensorDescriptor {self.ident} {self.describe() if self.is_set else 'unset'}>"


def descriptor_arg(desc, arg: str) -> TensorDescriptor:
    """A live descriptor object (set or not)."""
    if not isinstance(desc, TensorDescriptor):
        raise HandleFault(f"{desc!r:.60} is not a cnnlTensorDescriptor_t", arg)
    if desc.destroyed:
        raise HandleFault("the tensor descriptor was destroyed", arg)
    return desc


def tensor_arg(desc, arg: str) -> TensorDescriptor:
    """A live descriptor whose shape and data type were set."""
    descriptor = descriptor_arg(desc, arg)
    if not descriptor.is_set:
        raise ArgumentFault("the tensor descriptor was never set (cnnlSetTensorDescriptor)", arg)
    return descriptor


def _dims(values, arg: str, maximum: int) -> tuple[int, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ArgumentFault(f"expected a sequence of dimensions, got {type(values).__name__}", arg)
    if not 1 <= len(values) <= MAX_DIMS:
        raise ArgumentFault(f"{len(values)} dimensions; CNNL tensors have 1 to {MAX_DIMS} (a scalar is {{1}})", arg)
    return tuple(as_int(v, f"{arg}[{i}]", minimum=0, maximum=maximum) for i, v in enumerate(values))


def _set(desc, layout, dtype, dims, strides, maximum: int) -> None:
    target = descriptor_arg(desc, "desc")
    layout = as_enum(layout, "layout", E.LAYOUT_RANKS, "cnnlTensorLayout_t")
    dtype = as_enum(dtype, "dtype", D.ITEMSIZES, "cnnlDataType_t")
    shape = _dims(dims, "dimSize", maximum)
    rank = E.LAYOUT_RANKS[layout]
    if rank is not None and len(shape) != rank:  # CNNL keeps such a layout as a tag (DIOPI's 1-D NHWC bias)
        tolerate("a layout's rank must match the dimensions", "cnnlSetTensorDescriptor",
                 ArgumentFault(f"layout {layout} describes {rank} dimensions, got {len(shape)}", "layout"))
    if strides is None:
        steps = dense_strides(shape)
    else:
        steps = _dims(strides, "dimStride", maximum)
        if len(steps) != len(shape):
            raise ArgumentFault(f"{len(steps)} strides for {len(shape)} dimensions", "dimStride")
    if sum((d - 1) * s for d, s in zip(shape, steps) if d) * D.ITEMSIZES[dtype] > INT64_MAX:
        raise ArgumentFault("the tensor spans more bytes than a 64-bit address space", "dimSize")
    target.assign(layout, dtype, shape, steps)


@api("cnnlCreateTensorDescriptor")
def createTensorDescriptor() -> TensorDescriptor:
    """cnnlCreateTensorDescriptor(cnnlTensorDescriptor_t *desc) -> desc (unset)."""
    desc = TensorDescriptor()
    sanitizer.track(desc, "cnnlTensorDescriptor_t")
    return desc


@api("cnnlDestroyTensorDescriptor")
def destroyTensorDescriptor(desc) -> None:
    """cnnlDestroyTensorDescriptor(cnnlTensorDescriptor_t desc)."""
    target = descriptor_arg(desc, "desc")
    target.destroyed, target.stamp = True, new_stamp()


@api("cnnlResetTensorDescriptor")
def resetTensorDescriptor(desc) -> None:
    """cnnlResetTensorDescriptor(cnnlTensorDescriptor_t desc): back to the unset state."""
    target = descriptor_arg(desc, "desc")
    target.onchip_dtype = E.CNNL_DTYPE_INVALID
    target.assign(E.CNNL_LAYOUT_ARRAY, E.CNNL_DTYPE_INVALID, (), ())


@api("cnnlSetTensorDescriptor")
def setTensorDescriptor(desc, layout: int, dtype: int, dims) -> None:
    """cnnlSetTensorDescriptor(desc, layout, dtype, dimNb, dimSize[]): a dense tensor; `dims` is dimSize[dimNb]."""
    _set(desc, layout, dtype, dims, None, INT32_MAX)


@api("cnnlSetTensorDescriptor_v2")
def setTensorDescriptor_v2(desc, layout: int, dtype: int, dims) -> None:
    """cnnlSetTensorDescriptor_v2(desc, layout, dtype, dimNb, const int64_t dimSize[])."""
    _set(desc, layout, dtype, dims, None, INT64_MAX)


@api("cnnlSetTensorDescriptorEx")
def setTensorDescriptorEx(desc, layout: int, dtype: int, dims, strides) -> None:
    """cnnlSetTensorDescriptorEx(desc, layout, dtype, dimNb, dimSize[], dimStride[]): strides in elements."""
    _set(desc, layout, dtype, dims, strides, INT32_MAX)


@api("cnnlSetTensorDescriptorEx_v2")
def setTensorDescriptorEx_v2(desc, layout: int, dtype: int, dims, strides) -> None:
    """cnnlSetTensorDescriptorEx_v2(desc, layout, dtype, dimNb, const int64_t dimSize[], const int64_t dimStride[])."""
    _set(desc, layout, dtype, dims, strides, INT64_MAX)


def _get(desc) -> TensorDescriptor:
    return tensor_arg(desc, "desc")


@api("cnnlGetTensorDescriptor")
def getTensorDescriptor(desc) -> tuple[int, int, tuple[int, ...]]:
    """cnnlGetTensorDescriptor(desc, &layout, &dtype, &dimNb, dimSize[]) -> (layout, dtype, dims)."""
    target = _get(desc)
    return target.layout, target.dtype, target.dims


@api("cnnlGetTensorDescriptor_v2")
def getTensorDescriptor_v2(desc) -> tuple[int, int, tuple[int, ...]]:
    """cnnlGetTensorDescriptor_v2(desc, &layout, &dtype, &dimNb, int64_t dimSize[]) -> (layout, dtype, dims)."""
    return getTensorDescriptor(desc)


@api("cnnlGetTensorDescriptorEx")
def getTensorDescriptorEx(desc) -> tuple[int, int, tuple[int, ...], tuple[int, ...]]:
    """cnnlGetTensorDescriptorEx(desc, &layout, &dtype, &dimNb, dimSize[], dimStride[])
    -> (layout, dtype, dims, strides)."""
    target = _get(desc)
    return target.layout, target.dtype, target.dims, target.strides


@api("cnnlGetTensorDescriptorEx_v2")
def getTensorDescriptorEx_v2(desc) -> tuple[int, int, tuple[int, ...], tuple[int, ...]]:
    """cnnlGetTensorDescriptorEx_v2: as cnnlGetTensorDescriptorEx with int64 arrays."""
    return getTensorDescriptorEx(desc)


@api("cnnlGetTensorElementNum")
def getTensorElementNum(desc) -> int:
    """cnnlGetTensorElementNum(cnnlTensorDescriptor_t desc) -> the number of elements."""
    return _get(desc).size


@api("cnnlSetTensorDescriptorOnchipDataType")
def setTensorDescriptorOnchipDataType(desc, onchip_dtype: int) -> None:
    """cnnlSetTensorDescriptorOnchipDataType(desc, onchip_dtype): the on-chip compute type. Recorded only: the
    simulator computes half/bfloat16 in float32 and every other type in itself."""
    target = _get(desc)
    target.onchip_dtype = as_enum(onchip_dtype, "onchip_dtype", D.ITEMSIZES, "cnnlDataType_t")
    target.stamp = new_stamp()


@api("cnnlGetTensorDescriptorOnchipDataType")
def getTensorDescriptorOnchipDataType(desc) -> int:
    """cnnlGetTensorDescriptorOnchipDataType(desc, &onchip_dtype) -> onchip_dtype."""
    return _get(desc).onchip_dtype
