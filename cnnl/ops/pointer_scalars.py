"""Scalars passed by `const void *` together with a cnnlPointerMode_t (transform, clip, index fill, fill): a Python
number in CNNL_POINTER_MODE_HOST, the device address of one element in CNNL_POINTER_MODE_DEVICE (read when the
op runs, as on the device)."""
from __future__ import annotations

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


def host_scalar(value, arg: str, dtype: int) -> np.ndarray:
    """A host number rounded once to `dtype`'s storage type, as a 0-d array (integers must be integral and fit)."""
    storage = D.NUMPY_DTYPES[dtype]
    number = host_number(value, arg, dtype)
    if storage.kind in "iu" and not np.iinfo(storage).min <= int(number) <= np.iinfo(storage).max:
        raise ArgumentFault(f"{number} does not fit {D.name(dtype)}", arg)
    stored = np.empty((), storage)
    cast_block(np.asarray(number, np.float64 if storage.kind == "f" else None), stored)
    return stored


def scalar_reader(call: OpCall, mode: int, pointer, dtype: int, arg: str,
                  optional: bool = False) -> Optional[Callable[[], np.ndarray]]:
    """A function returning the scalar as a 0-d array of `dtype`'s storage type when the op runs (None for an
    optional NULL scalar). Host numbers round once to the storage type; integers must fit it."""
    if optional and (pointer is None or (mode == E.CNNL_POINTER_MODE_DEVICE and is_address(pointer)
                                         and int(pointer) == 0)):
        return None
    if mode == E.CNNL_POINTER_MODE_HOST:
        value = host_scalar(pointer, arg, dtype)
        return lambda: value
    view = call.device_scalar(pointer, dtype, arg)
    return lambda: view.reshape(())
