"""Argument checks and views shared by the neural-network op families (convolution, pooling, normalisation,
losses, indexing, random numbers): layouts to channel-last views, float data types, raw output buffers."""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_int

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..tensor import TensorDescriptor

#: data types the neural-network ops compute on
NN_FLOATS = (E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_BFLOAT16, E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_DOUBLE)
INDEX_TYPES = (E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64)

#: layouts whose channel axis is axis 1 (the others keep channels last)
CHANNEL_FIRST = (E.CNNL_LAYOUT_NCHW, E.CNNL_LAYOUT_NCDHW)
#: layouts a feature map of a convolution or pooling may have, by number of dims
FEATURE_LAYOUTS = {4: (E.CNNL_LAYOUT_NHWC, E.CNNL_LAYOUT_NCHW), 5: (E.CNNL_LAYOUT_NDHWC, E.CNNL_LAYOUT_NCDHW)}


def float_tensor(desc: TensorDescriptor, arg: str, op: str) -> TensorDescriptor:
    """NOT_SUPPORTED unless the tensor holds HALF, BFLOAT16, FLOAT or DOUBLE."""
    checks.supported_dtype(desc, arg, NN_FLOATS, op)
    return desc


def index_tensor(desc: TensorDescriptor, arg: str, op: str) -> TensorDescriptor:
    """NOT_SUPPORTED unless the tensor holds INT32 or INT64 indices."""
    checks.supported_dtype(desc, arg, INDEX_TYPES, op)
    return desc


def feature_map(desc: TensorDescriptor, arg: str, ranks=(4, 5), layouts=None) -> TensorDescriptor:
    """A tensor with a channel-first or channel-last feature-map layout of an allowed rank."""
    if len(desc.dims) not in ranks:
        raise ArgumentFault(f"{len(desc.dims)} dims; expected {' or '.join(map(str, ranks))}", arg)
    allowed = layouts if layouts is not None else FEATURE_LAYOUTS[len(desc.dims)]
    if desc.layout not in allowed:
        raise ArgumentFault(f"layout {desc.layout} is not a feature-map layout for {len(desc.dims)} dims "
                            f"(allowed: {list(allowed)})", arg)
    return desc


def channel_last_dims(desc: TensorDescriptor) -> tuple[int, ...]:
    """The dims in (N, *spatial, C) order."""
    dims = desc.dims
    if desc.layout in CHANNEL_FIRST:
        return (dims[0],) + dims[2:] + (dims[1],)
    if desc.layout == E.CNNL_LAYOUT_HWCN:
        return (dims[-1],) + dims[:-2] + (dims[-2],)
    return dims


def channel_last(view, layout: int):
    """A (N, *spatial, C) view of a tensor stored in `layout` (no copy)."""
    if layout in CHANNEL_FIRST:
        return view.transpose((0,) + tuple(range(2, view.ndim)) + (1,))
    if layout == E.CNNL_LAYOUT_HWCN:
        return view.transpose((view.ndim - 1,) + tuple(range(view.ndim - 2)) + (view.ndim - 2,))
    return view


def channel_axis(desc: TensorDescriptor) -> int:
    """The channel axis of a normalisation input: 1 for NCHW/NCDHW, else the last axis."""
    return 1 if desc.layout in CHANNEL_FIRST else len(desc.dims) - 1


def raw_buffer(dtype: int, count, arg: str) -> TensorDescriptor:
    """A dense 1-D descriptor for an API that passes a pointer and an element count instead of a descriptor."""
    elements = as_int(count, arg, minimum=0)
    desc = TensorDescriptor()
    desc.assign(E.CNNL_LAYOUT_ARRAY, dtype, (elements,), (1,))
    return desc


def reduction(value, arg: str = "reduction") -> int:
    """A loss reduction mode: NONE=0, MEAN=1, SUM=2 (every loss enum shares these numbers)."""
    return as_enum(value, arg, E.LOSS_REDUCTIONS, "loss reduction")


def elements_match(desc: TensorDescriptor, arg: str, count: int, what: str) -> None:
    """BAD_PARAM unless the tensor holds exactly `count` elements."""
    if desc.size != count:
        raise ArgumentFault(f"dims {list(desc.dims)} hold {desc.size} elements; {what} needs {count}", arg)


def dtype_name(desc: TensorDescriptor) -> str:
    return D.name(desc.dtype)
