"""cnnlDataType_t <-> numpy storage dtypes, and the cnnlCastDataType_t enum (CNNL_CAST_<X>_TO_<Y>)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from . import enums as E

#: cnnlDataType_t -> numpy dtype, for the data types ops compute on
NUMPY_DTYPES: dict[int, np.dtype] = {
    E.CNNL_DTYPE_HALF: np.dtype(np.float16),
    E.CNNL_DTYPE_FLOAT: np.dtype(np.float32),
    E.CNNL_DTYPE_BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    E.CNNL_DTYPE_DOUBLE: np.dtype(np.float64),
    E.CNNL_DTYPE_INT8: np.dtype(np.int8),
    E.CNNL_DTYPE_INT16: np.dtype(np.int16),
    E.CNNL_DTYPE_INT32: np.dtype(np.int32),
    E.CNNL_DTYPE_INT64: np.dtype(np.int64),
    E.CNNL_DTYPE_UINT8: np.dtype(np.uint8),
    E.CNNL_DTYPE_BOOL: np.dtype(np.bool_),
}

#: cnnlDataType_t -> numpy dtype of the memory a tensor view reads: the compute types and the unsigned types that
#: only casts and copies touch
STORAGE_DTYPES: dict[int, np.dtype] = {
    **NUMPY_DTYPES, E.CNNL_DTYPE_UINT16: np.dtype(np.uint16), E.CNNL_DTYPE_UINT32: np.dtype(np.uint32),
    E.CNNL_DTYPE_UINT64: np.dtype(np.uint64),
}

#: bytes per element of every valid cnnlDataType_t (descriptors accept all of them)
ITEMSIZES: dict[int, int] = {
    **{code: dtype.itemsize for code, dtype in NUMPY_DTYPES.items()},
    E.CNNL_DTYPE_INT31: 4, E.CNNL_DTYPE_UINT16: 2, E.CNNL_DTYPE_UINT32: 4, E.CNNL_DTYPE_UINT64: 8,
    E.CNNL_DTYPE_COMPLEX_HALF: 4, E.CNNL_DTYPE_COMPLEX_FLOAT: 8,
}

NAMES: dict[int, str] = {value: name[len("CNNL_DTYPE_"):] for name, value in vars(E).items()
                         if name.startswith("CNNL_DTYPE_")}

FLOATING = (E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_BFLOAT16, E.CNNL_DTYPE_DOUBLE)
INTEGER = (E.CNNL_DTYPE_INT8, E.CNNL_DTYPE_INT16, E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64, E.CNNL_DTYPE_UINT8)
NUMERIC = FLOATING + INTEGER
ALL = NUMERIC + (E.CNNL_DTYPE_BOOL,)
#: stored in 16 bits, computed in float32
HALF_PRECISION = (E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_BFLOAT16)


def name(code: int) -> str:
    return NAMES.get(code, f"<dtype {code}>")


def compute_dtype(code: int) -> int:
    """The data type arithmetic on `code` storage is carried out in (FLOAT for the 16-bit floats)."""
    return E.CNNL_DTYPE_FLOAT if code in HALF_PRECISION else code


def numpy_dtype(code: int) -> np.dtype:
    return NUMPY_DTYPES[code]


def cost_class(code: int) -> str:
    """The BoardSpec MAC-rate key that bounds arithmetic on this data type."""
    return {E.CNNL_DTYPE_HALF: "half", E.CNNL_DTYPE_BFLOAT16: "bfloat16", E.CNNL_DTYPE_INT8: "int8",
            E.CNNL_DTYPE_UINT8: "int8", E.CNNL_DTYPE_INT16: "int16", E.CNNL_DTYPE_BOOL: "int8"}.get(code, "float")


# ---- cnnlCastDataType_t ---------------------------------------------------------------------------------------
#: The order that numbers the cast enum: CNNL_CAST_<X>_TO_<Y> = 10 * position(X) + position(Y). (Chosen; the real
#: numbers are not public. FLOAT first makes CNNL_CAST_FLOAT_TO_HALF = 1.)
CAST_ORDER = (E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_BFLOAT16, E.CNNL_DTYPE_DOUBLE, E.CNNL_DTYPE_INT8,
              E.CNNL_DTYPE_INT16, E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64, E.CNNL_DTYPE_UINT8, E.CNNL_DTYPE_BOOL)

#: cast enum value -> (source cnnlDataType_t, destination cnnlDataType_t)
CAST_TYPES: dict[int, tuple[int, int]] = {}
CAST_NAMES: dict[str, int] = {}
for _i, _src in enumerate(CAST_ORDER):
    for _j, _dst in enumerate(CAST_ORDER):
        if _src != _dst:
            CAST_TYPES[10 * _i + _j] = (_src, _dst)
            CAST_NAMES[f"CNNL_CAST_{NAMES[_src]}_TO_{NAMES[_dst]}"] = 10 * _i + _j
#: the pairs of the 32- and 64-bit unsigned types with each other and the signed ones (DIOPI's int64 <-> uint32
#: and uint32 <-> uint64 casts): 100 + 10 * position(X) + position(Y) in this order (chosen, as above)
WIDE_CAST_ORDER = (E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64, E.CNNL_DTYPE_UINT32, E.CNNL_DTYPE_UINT64)
for _i, _src in enumerate(WIDE_CAST_ORDER):
    for _j, _dst in enumerate(WIDE_CAST_ORDER):
        if _src != _dst and {E.CNNL_DTYPE_UINT32, E.CNNL_DTYPE_UINT64} & {_src, _dst}:
            CAST_TYPES[100 + 10 * _i + _j] = (_src, _dst)
            CAST_NAMES[f"CNNL_CAST_{NAMES[_src]}_TO_{NAMES[_dst]}"] = 100 + 10 * _i + _j
del _i, _j, _src, _dst
globals().update(CAST_NAMES)
