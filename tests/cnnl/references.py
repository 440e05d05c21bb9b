"""Independent float64 / exact-integer references. Nothing here calls `cnnl.kernels`."""
import ml_dtypes
import numpy as np

from .tolerances import BF16, F16, F32

#: significand bits (with the implicit one), smallest normal exponent, largest finite value
FLOAT_FORMATS = {
    F16: (11, -14, 65504.0),
    BF16: (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
    F32: (24, -126, float(np.finfo(np.float32).max)),
}


def to_f64(x):
    """Values of x as float64 (exact for every float dtype and for integers below 2**53)."""
    return np.asarray(x).astype(np.float64)


def round_to_format(values, dtype):
    """float64 values rounded to nearest-even in `dtype`'s format (float64 result; overflow -> inf)."""
    significand, min_exponent, largest = FLOAT_FORMATS[np.dtype(dtype)]
    values = np.asarray(values, np.float64)
    result = values.copy()
    finite = np.isfinite(values) & (values != 0)
    v = values[finite]
    _, exponent = np.frexp(v)
    spacing = np.ldexp(1.0, np.maximum(exponent - 1, min_exponent) - (significand - 1))
    rounded = np.rint(v / spacing) * spacing
    rounded[np.abs(rounded) > largest] = np.copysign(np.inf, rounded[np.abs(rounded) > largest])
    result[finite] = rounded
    return result


def saturate_int(values, dtype):
    """Exact integers (Python ints or int64) clipped into integer `dtype`'s range, as int64/object array."""
    info = np.iinfo(dtype)
    return np.array([min(max(int(v), int(info.min)), int(info.max)) for v in np.ravel(values)],
                    dtype=object).reshape(np.shape(values))


def float_to_int(values, dtype):
    """Truncate toward zero and saturate; NaN -> 0."""
    flat = [0 if np.isnan(v) else (float(v) if np.isinf(v) else int(np.trunc(v))) for v in np.ravel(values)]
    info = np.iinfo(dtype)
    clipped = [int(info.max) if v == float("inf") else int(info.min) if v == float("-inf") else v for v in flat]
    return saturate_int(np.array(clipped, dtype=object).reshape(np.shape(values)), dtype)


def wrap_int(values, dtype):
    """Exact integers reduced modulo 2**bits into integer `dtype` (two's complement wrap)."""
    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    def one(v):
        v = int(v) % (1 << bits)
        return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v
    return np.array([one(v) for v in np.ravel(values)], dtype=object).reshape(np.shape(values)).astype(np.int64)
