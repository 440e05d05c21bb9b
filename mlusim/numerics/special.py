"""Scalar special functions in float64, evaluated alike by cnnl's kernels and the compiled kernels of torch.compile.

erfinv starts from Giles' single-precision approximation ("Approximating the erfinv function", GPU Computing Gems,
2011) and takes Newton steps on erf (on erfc for |y| > 0.5, where erf is flat): one step gives an error of ~1e-13
(enough for float32 and 16-bit results), two full float64 accuracy. erfinv(+-1) = +-inf, |y| > 1 gives NaN, the
sign of a zero is kept; NaN stays NaN.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@njit(nogil=True, cache=True)
def erfinv(y, steps):
    """The inverse error function of the float64 `y`, refined by `steps` Newton steps."""
    if y != y or y < -1.0 or y > 1.0:
        return np.nan
    if y == 1.0:
        return np.inf
    if y == -1.0:
        return -np.inf
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    x = p * y
    if abs(y) <= 0.5:
        for _ in range(steps):  # Newton on erf(x) = y
            x -= (math.erf(x) - y) / (_TWO_OVER_SQRT_PI * math.exp(-x * x))
        return x
    # near +-1 erf is flat in float64: Newton on erfc(|x|) = 1 - |y| (exact by Sterbenz) keeps full accuracy
    a, tail = abs(x), 1.0 - abs(y)
    for _ in range(steps):
        a += (math.erfc(a) - tail) / (_TWO_OVER_SQRT_PI * math.exp(-a * a))
    return a if y > 0 else -a
