"""The error function and its inverse (`cnnlErf_v2`, `cnnlErfinv`) and the NaN test (`cnnlIsNan`).

erf and erfinv are evaluated in float64 by a nogil numba loop (one compiled loop per input type: float32, float64)
and rounded once to the storage type (float64 -> 16-bit floats by the cast rules). erfinv starts from Giles'
single-precision approximation ("Approximating the erfinv function", GPU Computing Gems, 2011) and takes Newton
steps on erf (on erfc for |y| > 0.5, where erf is flat): one for float32 and 16-bit results (error ~1e-13, far
below their rounding), two for float64 (full accuracy).
erfinv(+-1) = +-inf, |x| > 1 gives NaN, the sign of a zero is kept; NaN stays NaN.
"""
import functools
import math

import numpy as np
from numba import njit

from .cast import readonly_flat
from .dtypes import BOOL, FLOAT_DTYPES, NUMERIC_DTYPES, check_dtype, check_same_dtype, compute_dtype
from .elementwise import run_elementwise
from .staging import load, store

SPECIAL_OPS = ("erf", "erfinv")
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


@njit(nogil=True, cache=True)
def _erfinv(y, steps):
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


@njit(nogil=True, cache=True)
def special_kernel(mode, steps, x, out):
    """out[i] = erf(x[i]) (mode 0) or erfinv(x[i]) (mode 1, `steps` Newton steps), in float64, over 1-D contiguous
    arrays."""
    for i in range(x.size):
        v = np.float64(x[i])
        out[i] = math.erf(v) if mode == 0 else _erfinv(v, steps)


def _special_block(mode, out, x):
    values = readonly_flat(load(x))
    result = np.empty(values.size, np.float64)
    special_kernel(mode, 2 if values.dtype == np.float64 else 1, values, result)
    store(result.reshape(out.shape), out)


def special(op, x, out):
    """out = op(x) for op 'erf' or 'erfinv'; floats only, same dtype."""
    if op not in SPECIAL_OPS:
        raise ValueError(f"unknown special function {op!r} (one of {', '.join(SPECIAL_OPS)})")
    check_same_dtype(x=x, out=out)
    check_dtype("x", x, FLOAT_DTYPES)
    run_elementwise(functools.partial(_special_block, SPECIAL_OPS.index(op)), out, [x], staged=True)


def _isnan_block(out, x):
    if x.dtype in FLOAT_DTYPES:
        values = load(x)
        if out.dtype == BOOL:
            np.isnan(values, out=out)
        else:
            np.copyto(out, np.isnan(values), casting="unsafe")
    else:
        out[...] = 0


def isnan(x, out):
    """out = x is NaN (False for integers); out is bool or 0/1 in its own type."""
    check_dtype("x", x, NUMERIC_DTYPES)
    run_elementwise(_isnan_block, out, [x], staged=x.dtype != compute_dtype(x.dtype))
