"""cnclDataType_t and cnclReduceOp_t: their values, their numpy forms, and how each reduces."""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from mlusim.validate import as_enum

cnclInvalid = 0x0
cnclHalf = cnclFloat16 = 0x10
cnclBfloat16 = 0x11
cnclFloat = cnclFloat32 = 0x12
cnclInt8 = cnclChar = 0x20
cnclInt16 = 0x21
cnclInt = cnclInt32 = 0x22
cnclInt64 = 0x23
cnclUint8 = 0x30
cnclUint16 = 0x31
cnclUint32 = 0x32
cnclUint64 = 0x33

cnclSum = 0
cnclProd = 1
cnclMax = 2
cnclMin = 3

CNCL_PRIORITY_DEFAULT = 0x0
CNCL_PRIORITY_HIGH = 0x10
CNCL_PRIORITY_HIGH_FOR_ONCE = 0x11


@dataclass(frozen=True)
class DataType:
    """One cnclDataType_t: its numpy storage type and the type reductions accumulate in."""

    code: int
    name: str
    storage: np.dtype
    accumulate: np.dtype

    @property
    def size(self) -> int:
        return self.storage.itemsize

    @property
    def widens(self) -> bool:
        """True when values are reduced in a wider type and rounded once at the end (half, bfloat16)."""
        return self.accumulate != self.storage


def _same(code: int, name: str, storage) -> DataType:
    return DataType(code, name, np.dtype(storage), np.dtype(storage))


DATA_TYPES = {t.code: t for t in (
    DataType(cnclHalf, "cnclHalf", np.dtype(np.float16), np.dtype(np.float32)),
    DataType(cnclBfloat16, "cnclBfloat16", np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)),
    _same(cnclFloat, "cnclFloat", np.float32),
    _same(cnclInt8, "cnclInt8", np.int8),
    _same(cnclInt16, "cnclInt16", np.int16),
    _same(cnclInt32, "cnclInt32", np.int32),
    _same(cnclInt64, "cnclInt64", np.int64),
    _same(cnclUint8, "cnclUint8", np.uint8),
    _same(cnclUint16, "cnclUint16", np.uint16),
    _same(cnclUint32, "cnclUint32", np.uint32),
    _same(cnclUint64, "cnclUint64", np.uint64),
)}

#: cnclReduceOp_t -> the elementwise numpy function that combines two operands.
REDUCE_FUNCTIONS = {cnclSum: np.add, cnclProd: np.multiply, cnclMax: np.maximum, cnclMin: np.minimum}
REDUCE_NAMES = {cnclSum: "cnclSum", cnclProd: "cnclProd", cnclMax: "cnclMax", cnclMin: "cnclMin"}


def dtype_arg(value, arg: str = "data_type") -> DataType:
    """The DataType a cnclDataType_t argument names (cnclInvalid and unknown values are argument errors)."""
    return DATA_TYPES[as_enum(value, arg, DATA_TYPES, "cnclDataType_t")]


def op_arg(value, arg: str = "reduce_op") -> int:
    return as_enum(value, arg, REDUCE_FUNCTIONS, "cnclReduceOp_t")
