"""Scalars passed by `const void *` together with a cnnlPointerMode_t (transform, clip, index fill, fill): a Python
number in CNNL_POINTER_MODE_HOST, the device address of one element in CNNL_POINTER_MODE_DEVICE (read when the
op runs, as on the device)."""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_number, is_address

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..kernels.cast import cast_block
from ..opcall import OpCall

POINTER_MODES = (E.CNNL_POINTER_MODE_HOST, E.CNNL_POINTER_MODE_DEVICE)
_WIDE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: ints up to this size are exact in float32 (a larger one takes the general path's conversion through float64)
_EXACT = 1 << 24


def pointer_mode(value, arg: str = "pointer_mode") -> int:
    return as_enum(value, arg, POINTER_MODES, "cnnlPointerMode_t")


def host_number(value, arg: str, dtype: int):
    """A host scalar for a tensor of `dtype`: integer tensors need an integral value."""
    if value is None:
        raise ArgumentFault("NULL pointer to the scalar", arg)
    number = as_number(value, arg)
    if dtype in D.INTEGER + (E.CNNL_DTYPE_BOOL,) and not checks.integral(number):
        raise ArgumentFault(f"{number} is not integral, as {D.name(dtype)} tensors need", arg)
    return number


def host_scalar(value, arg: str, dtype: int, fill: bool = False) -> np.ndarray:
    """A host number rounded once to `dtype`'s storage type, as a 0-d array (integers must be integral and fit).
    A `fill` value (what the op writes into elements) converts as fill_value does instead."""
    storage = D.NUMPY_DTYPES[dtype]
    if fill:
        if value is None:
            raise ArgumentFault("NULL pointer to the scalar", arg)
        return fill_value(as_number(value, arg), dtype, arg)
    kind = type(value)
    if (kind is float or kind is int and -_EXACT <= value <= _EXACT) and storage in _WIDE_FLOATS:
        return np.array(value, storage)  # one rounding to nearest even, as cast_block's: the common case, quickly
    number = host_number(value, arg, dtype)
    if storage.kind in "iu" and not np.iinfo(storage).min <= int(number) <= np.iinfo(storage).max:
        raise ArgumentFault(f"{number} does not fit {D.name(dtype)}", arg)
    stored = np.empty((), storage)
    cast_block(np.asarray(number, np.float64 if storage.kind == "f" else None), stored)
    return stored


def fill_value(number, dtype: int, arg: str) -> np.ndarray:
    """The element a fill writes for the host number `number` into a tensor of `dtype`, as a 0-d array. Into an
    integer type an integer converts as C converts it (modulo 2^bits: -1 into uint8 is 255, as torch's fill_ and
    `uint8_t v = -1` give); a float truncates toward zero first; NaN and +-inf, and integers beyond 64 bits (no C
    integer holds them), follow the cast rules (NaN -> 0, saturation). Into bool: nonzero is true. Into a float
    type: rounded once (the cast rules)."""
    storage = D.NUMPY_DTYPES[dtype]
    stored = np.empty((), storage)
    if storage.kind in "iu" and (isinstance(number, int) or math.isfinite(number)):
        whole = int(number)  # truncates a float toward zero
        if -2**63 <= whole < 2**64:
            bits = 8 * storage.itemsize
            low = whole % (1 << bits)
            stored[()] = low if storage.kind == "u" else _signed(low, bits)
            return stored
    if isinstance(number, int) and not -2**63 <= number < 2**64:
        number = float(number)
    cast_block(np.asarray(number, np.float64 if isinstance(number, float) else None), stored)
    return stored


def _signed(value: int, bits: int) -> int:
    """The two's-complement reading of the low `bits` bits of `value` (>= 0)."""
    return value - (1 << bits) if value >> (bits - 1) else value


def scalar_reader(call: OpCall, mode: int, pointer, dtype: int, arg: str, optional: bool = False,
                  fill: bool = False) -> Optional[Callable[[], np.ndarray]]:
    """A function returning the scalar as a 0-d array of `dtype`'s storage type when the op runs (None for an
    optional NULL scalar). Host numbers round once to the storage type; integers must fit it (a `fill` value
    converts as fill_value does)."""
    if optional and (pointer is None or (mode == E.CNNL_POINTER_MODE_DEVICE and is_address(pointer)
                                         and int(pointer) == 0)):
        return None
    if mode == E.CNNL_POINTER_MODE_HOST:
        value = host_scalar(pointer, arg, dtype, fill)
        return lambda: value
    view = call.device_scalar(pointer, dtype, arg)
    return lambda: view.reshape(())
