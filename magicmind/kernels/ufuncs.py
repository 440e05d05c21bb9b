"""numba ufuncs for the elementwise functions numpy lacks (erf and the functions built on it)."""
import math

import numba
import numpy as np


@numba.vectorize(["float32(float32)", "float64(float64)"], cache=True)
def erf(x):
    """The error function (C erf), elementwise."""
    return math.erf(x)


@numba.vectorize(["float32(float32)", "float64(float64)"], cache=True)
def gelu(x):
    """x * Phi(x), Phi the standard normal CDF (erf form, as torch's GELU and ONNX Gelu approximate='none')."""
    return x * 0.5 * (1.0 + math.erf(x * 0.7071067811865476))


def as_compute(a: np.ndarray) -> np.ndarray:
    """`a` in its compute type: 16-bit floats widen to float32 (exact), others stay as they are."""
    return a.astype(np.float32) if a.dtype == np.float16 else a
