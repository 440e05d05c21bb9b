"""torch dtypes in generated numba code: the scalar type a value is computed in, the element type a buffer is
stored as (16-bit floats as uint16 bit patterns), and the numpy dtype of a buffer's view of device memory."""
from __future__ import annotations

import numpy as np
import torch

from .unsupported import Unsupported

#: Compute dtype of each storage dtype: 16-bit floats are computed in float32 (Inductor's upcast).
_COMPUTE = {torch.float16: torch.float32, torch.bfloat16: torch.float32}

_SCALAR = {
    torch.float32: "np.float32", torch.float64: "np.float64", torch.float16: "np.float32",
    torch.bfloat16: "np.float32", torch.int8: "np.int8", torch.int16: "np.int16", torch.int32: "np.int32",
    torch.int64: "np.int64", torch.uint8: "np.uint8", torch.uint16: "np.uint16", torch.uint32: "np.uint32",
    torch.uint64: "np.uint64", torch.bool: "np.bool_",
}

#: numpy dtype of a buffer's elements as the kernel sees them.
STORAGE = {
    torch.float32: np.float32, torch.float64: np.float64, torch.float16: np.uint16, torch.bfloat16: np.uint16,
    torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64,
    torch.uint8: np.uint8, torch.uint16: np.uint16, torch.uint32: np.uint32, torch.uint64: np.uint64,
    torch.bool: np.bool_,
}

#: numba type names of buffer elements (for kernel signatures).
_NUMBA_ELEMENT = {
    np.float32: "float32", np.float64: "float64", np.uint16: "uint16", np.int8: "int8", np.int16: "int16",
    np.int32: "int32", np.int64: "int64", np.uint8: "uint8", np.uint32: "uint32", np.uint64: "uint64",
    np.bool_: "boolean",
}

#: mlusim.cost rate key per dtype (the vector unit's rate for the kernel's widest float type).
RATE_KEY = {torch.float64: "double", torch.float16: "half", torch.bfloat16: "bfloat16"}


def supported(dtype: torch.dtype) -> bool:
    """True when generated kernels can read and write tensors of `dtype`."""
    return dtype in STORAGE


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype values of `dtype` are computed in."""
    return _COMPUTE.get(dtype, dtype)


def numba_scalar(dtype: torch.dtype) -> str:
    """The numba constructor of a compute value of `dtype`, e.g. "np.float32"."""
    try:
        return _SCALAR[dtype]
    except KeyError:
        raise Unsupported(f"the mlu numba code generator has no dtype {dtype}") from None


def storage(dtype: torch.dtype):
    """numpy dtype of a buffer of `dtype` as the kernel indexes it."""
    try:
        return STORAGE[dtype]
    except KeyError:
        raise Unsupported(f"the mlu numba code generator has no dtype {dtype}") from None


def array_type(dtype: torch.dtype) -> str:
    """numba signature text of a 1-D C-contiguous buffer of `dtype`, e.g. "float32[::1]"."""
    return f"{_NUMBA_ELEMENT[storage(dtype)]}[::1]"


def load_expr(text: str, dtype: torch.dtype) -> str:
    """The expression reading one element `text` of a buffer of `dtype` in its compute type."""
    if dtype == torch.float16:
        return f"h.half_to_f32({text})"
    if dtype == torch.bfloat16:
        return f"h.bfloat16_to_f32({text})"
    return text


def store_expr(value: str, dtype: torch.dtype) -> str:
    """The expression converting a compute value to the element stored in a buffer of `dtype`."""
    if dtype == torch.float16:
        return f"h.f32_to_half({value})"
    if dtype == torch.bfloat16:
        return f"h.f32_to_bfloat16({value})"
    if dtype == torch.bool:
        return f"({value} != 0)"
    return f"{numba_scalar(dtype)}({value})"
