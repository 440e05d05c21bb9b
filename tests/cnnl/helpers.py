"""Device tensors for the API tests: host values placed on the device with any strides, and read back.

Everything goes through the real API: cnrt.malloc, cnrt.memcpy host -> device, the cnnl op, cnrt.queueSync,
cnrt.memcpy device -> host.
"""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import cnnl
import cnrt

from .tolerances import BF16, F16, F32, F64  # noqa: F401  (re-exported for the tests)

#: cnnlDataType_t -> numpy dtype
NUMPY = {cnnl.CNNL_DTYPE_HALF: F16, cnnl.CNNL_DTYPE_BFLOAT16: BF16, cnnl.CNNL_DTYPE_FLOAT: F32,
         cnnl.CNNL_DTYPE_DOUBLE: F64, cnnl.CNNL_DTYPE_INT8: np.dtype(np.int8),
         cnnl.CNNL_DTYPE_INT16: np.dtype(np.int16), cnnl.CNNL_DTYPE_INT32: np.dtype(np.int32),
         cnnl.CNNL_DTYPE_INT64: np.dtype(np.int64), cnnl.CNNL_DTYPE_UINT8: np.dtype(np.uint8),
         cnnl.CNNL_DTYPE_BOOL: np.dtype(np.bool_)}
CODE = {dtype: code for code, dtype in NUMPY.items()}
#: the types a device tensor may hold: NUMPY's and the unsigned ones only casts read and write
STORAGE = {**NUMPY, cnnl.CNNL_DTYPE_UINT32: np.dtype(np.uint32), cnnl.CNNL_DTYPE_UINT64: np.dtype(np.uint64)}
FLOATS = [cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_DOUBLE]
INTS = [cnnl.CNNL_DTYPE_INT8, cnnl.CNNL_DTYPE_INT16, cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64,
        cnnl.CNNL_DTYPE_UINT8]
NUMERIC = FLOATS + INTS
ALL = NUMERIC + [cnnl.CNNL_DTYPE_BOOL]


def dense_strides(dims):
    strides, step = [], 1
    for n in reversed(dims):
        strides.append(step)
        step *= max(n, 1)
    return list(reversed(strides))


def span(dims, strides) -> int:
    if any(n == 0 for n in dims):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(dims, strides))


def descriptor(dims, dtype=cnnl.CNNL_DTYPE_FLOAT, strides=None, layout=cnnl.CNNL_LAYOUT_ARRAY):
    desc = cnnl.createTensorDescriptor()
    if strides is None:
        cnnl.setTensorDescriptor(desc, layout, dtype, list(dims))
    else:
        cnnl.setTensorDescriptorEx(desc, layout, dtype, list(dims), list(strides))
    return desc


class DeviceTensor:
    """A tensor in device memory: its descriptor, pointer, dims, strides (elements) and numpy dtype."""

    def __init__(self, dims, dtype_code, strides=None, fill=None):
        self.dims = tuple(dims)
        self.code = dtype_code
        self.dtype = STORAGE[dtype_code]
        self.strides = tuple(strides) if strides is not None else tuple(dense_strides(dims))
        self.desc = descriptor(self.dims, dtype_code, strides)
        self.elements = max(span(self.dims, self.strides), 1)
        self.ptr = cnrt.malloc(self.elements * self.dtype.itemsize)
        if fill is not None:
            self.write(fill)

    def _host_span(self) -> np.ndarray:
        return np.zeros(self.elements, self.dtype)

    def _view(self, flat: np.ndarray) -> np.ndarray:
        item = self.dtype.itemsize
        return as_strided(flat, self.dims, tuple(s * item for s in self.strides))

    def write(self, values) -> None:
        """Place `values` (broadcast to dims) at the strided positions; the rest of the span is zero."""
        flat = self._host_span()
        self._view(flat)[...] = np.broadcast_to(np.asarray(values).astype(self.dtype), self.dims)
        cnrt.memcpy(self.ptr, flat, flat.nbytes, cnrt.cnrtMemcpyHostToDev)

    def read(self) -> np.ndarray:
        flat = self._host_span()
        cnrt.memcpy(flat, self.ptr, flat.nbytes, cnrt.cnrtMemcpyDevToHost)
        return self._view(flat).copy()


def tensor(values, dtype_code=None, strides=None) -> DeviceTensor:
    """A device tensor holding `values` (a Python list of floats becomes FLOAT)."""
    values = np.asarray(values) if isinstance(values, np.ndarray) or dtype_code is not None \
        else np.asarray(values, np.float32 if np.asarray(values).dtype.kind == "f" else None)
    code = dtype_code if dtype_code is not None else CODE[values.dtype]
    return DeviceTensor(values.shape or (1,), code, strides, values.reshape(values.shape or (1,)))


def empty(dims, dtype_code=cnnl.CNNL_DTYPE_FLOAT, strides=None) -> DeviceTensor:
    return DeviceTensor(dims, dtype_code, strides)


def sync(handle) -> None:
    cnrt.queueSync(cnnl.getQueue(handle))


def random_values(rng, dims, dtype_code, low=-4.0, high=4.0) -> np.ndarray:
    """Random values of a cnnl data type: floats in [low, high), small integers, bools."""
    dtype = NUMPY[dtype_code]
    if dtype.kind == "b":
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        lo, hi = (0, 20) if dtype.kind == "u" else (-20, 20)
        return rng.integers(lo, hi, size=dims).astype(dtype)
    return rng.uniform(low, high, size=dims).astype(dtype)


def as_float64(values) -> np.ndarray:
    return np.asarray(values).astype(np.float64)


def raises_status(status: int, *, arg: str | None = None):
    """pytest.raises for a CnnlError with `status` (and, optionally, a message naming `arg`)."""
    name = cnnl.status.STATUS_NAMES[status]
    match = name if arg is None else rf"{name}.*'{arg}'"
    return pytest.raises(cnnl.CnnlError, match=match)


def strided_layouts(dims, rng):
    """Stride patterns for dims: dense, padded (gaps between elements) and transposed (permuted axes)."""
    dense = dense_strides(dims)
    padded = [s * 2 for s in dense_strides([n + 1 for n in dims])]
    order = rng.permutation(len(dims))
    permuted_dims = [dims[p] for p in order]
    permuted = dense_strides(permuted_dims)
    transposed = [0] * len(dims)
    for position, axis in enumerate(order):
        transposed[axis] = permuted[position]
    return {"dense": dense, "padded": padded, "transposed": transposed}




#: the integer types a fill writes into, and bool
FILL_TYPES = (cnnl.CNNL_DTYPE_INT8, cnnl.CNNL_DTYPE_INT16, cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64,
              cnnl.CNNL_DTYPE_UINT8, cnnl.CNNL_DTYPE_BOOL)


def fill_reference(value, code):
    """The element a fill of the host number `value` writes into a tensor of `code`, computed independently: an
    integer (or a finite float truncated toward zero) within 64 bits converts as C converts (numpy's uint64 ->
    narrower integer cast wraps the same way); NaN -> 0, +-inf and beyond 64 bits saturate; bool is value != 0.
    Where torch's fill_ accepts the value, it must give the same element."""
    import math
    import torch

    dtype = NUMPY[code]
    if dtype.kind == "b":
        expected = np.bool_(value != 0)
    elif isinstance(value, float) and math.isnan(value):
        expected = dtype.type(0)
    elif (isinstance(value, float) and math.isinf(value)) or not -2**63 <= int(value) < 2**64:
        info = np.iinfo(dtype)
        expected = dtype.type(info.max if value > 0 else info.min)
    else:
        expected = np.array(int(value) % 2**64, np.uint64).astype(dtype)[()]
    try:
        torch_value = torch.zeros(1, dtype=getattr(torch, dtype.name)).fill_(value)[0].item()
    except (RuntimeError, OverflowError):
        pass  # torch refuses to convert it ("value cannot be converted ... without overflow")
    else:
        assert torch_value == expected, (value, code, torch_value, expected)
    return expected


def fill_values():
    """Host numbers for fills: every integer a C integer holds, beyond it, floats with the specials."""
    from hypothesis import strategies as st
    return st.one_of(st.integers(-2**63, 2**64 - 1), st.integers(-2**70, 2**70), st.sampled_from(
        [-1, -128, -129, 255, 256, -2**31 - 1, 2**31, 2**63, 2**64 - 1, -2**63, 0.0, -0.0, -1.0, 2.7, -2.7,
         float("nan"), float("inf"), float("-inf"), 1e30, -1e30]), st.floats(-1e20, 1e20))
