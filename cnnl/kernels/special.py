"""The error function and its inverse (`cnnlErf_v2`, `cnnlErfinv`) and the NaN test (`cnnlIsNan`).

erf and erfinv are evaluated in float64 by a nogil numba loop (one compiled loop per input type: float32, float64)
and rounded once to the storage type (float64 -> 16-bit floats by the cast rules). erfinv is the device's
(`mlusim.numerics.special.erfinv`) with one Newton step for float32 and 16-bit results, two for float64.
"""
import functools
import math

import numpy as np
from numba import njit

from mlusim.numerics.special import erfinv

from .cast import readonly_flat
from .dtypes import BOOL, FLOAT_DTYPES, NUMERIC_DTYPES, check_dtype, check_same_dtype, compute_dtype
from .elementwise import run_elementwise
from .staging import load, store

SPECIAL_OPS = ("erf", "erfinv")


@njit(nogil=True, cache=True)
def special_kernel(mode, steps, x, out):
    """out[i] = erf(x[i]) (mode 0) or erfinv(x[i]) (mode 1, `steps` Newton steps), in float64, over 1-D contiguous
    arrays."""
    for i in range(x.size):
        v = np.float64(x[i])
        out[i] = math.erf(v) if mode == 0 else erfinv(v, steps)


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
