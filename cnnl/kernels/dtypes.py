"""The dtypes the kernels accept and how each one is computed.

Storage dtypes: float16, bfloat16 (ml_dtypes), float32, float64, int8, int16, int32, int64, uint8, bool.
Every op computes in a *compute dtype* and rounds once into the storage dtype:
half and bfloat16 compute in float32, float32 in float32, float64 in float64, integers in their own type.
"""
import ml_dtypes
import numpy as np

BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
FLOAT16 = np.dtype(np.float16)
FLOAT32 = np.dtype(np.float32)
FLOAT64 = np.dtype(np.float64)
BOOL = np.dtype(np.bool_)
INT32 = np.dtype(np.int32)

FLOAT_DTYPES = (FLOAT16, BFLOAT16, FLOAT32, FLOAT64)
INT_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8))
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + (BOOL,)
#: the wide unsigned storage dtypes only casts read and write (CNNL_CAST_UINT32_TO_INT64, ...)
WIDE_UNSIGNED_DTYPES = tuple(np.dtype(t) for t in (np.uint32, np.uint64))
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES

#: dtypes stored in 16 bits and computed in float32 through the numba conversion kernels
HALF_DTYPES = (FLOAT16, BFLOAT16)


def is_float(dtype):
    """True for the four floating storage dtypes."""
    return np.dtype(dtype) in FLOAT_DTYPES


def is_int(dtype):
    """True for the signed and unsigned integer storage dtypes (not bool; uint32/uint64 too, which only casts
    use)."""
    dtype = np.dtype(dtype)
    return dtype in INT_DTYPES or dtype in WIDE_UNSIGNED_DTYPES


def is_half(dtype):
    """True for float16 and bfloat16 (16-bit storage, float32 compute)."""
    return np.dtype(dtype) in HALF_DTYPES


def compute_dtype(dtype):
    """The dtype arithmetic on `dtype` storage is carried out in."""
    dtype = np.dtype(dtype)
    if dtype not in ALL_DTYPES:
        raise TypeError(f"unsupported dtype {dtype}")
    if dtype in HALF_DTYPES:
        return FLOAT32
    return dtype


def check_dtype(name, array, allowed):
    """Raise TypeError unless `array.dtype` is one of `allowed`; `name` names the argument."""
    if array.dtype not in allowed:
        names = ", ".join(str(d) for d in allowed)
        raise TypeError(f"{name}: dtype {array.dtype} not supported here (allowed: {names})")


def check_same_dtype(**arrays):
    """Raise TypeError unless all keyword arrays share one dtype."""
    dtypes = {name: a.dtype for name, a in arrays.items()}
    if len(set(dtypes.values())) > 1:
        raise TypeError("dtype mismatch: " + ", ".join(f"{n}={d}" for n, d in dtypes.items()))
