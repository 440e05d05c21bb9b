"""Trigonometric and hyperbolic functions (`cnnlTrigonForward`): sin, cos, tan, asin, acos, atan, sinh, cosh, tanh,
asinh, acosh, atanh, elementwise (numpy's ufuncs: NaN outside the domain, infinities at the poles).
half/bfloat16 compute in float32 and round once; blocks run on the kernel thread pool."""
from __future__ import annotations

import functools

import numpy as np

from .elementwise import run_elementwise, stored_in_compute_dtype
from .staging import compute_buffer, load, store

FUNCTIONS = (np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh,
             np.arccosh, np.arctanh)


def _block(fn, out, x):
    result = compute_buffer(out)
    with np.errstate(all="ignore"):
        fn(load(x), out=result)
    store(result, out)


def trigon(mode, x, out):
    """out = FUNCTIONS[mode](x)."""
    run_elementwise(functools.partial(_block, FUNCTIONS[mode]), out, [x], staged=not stored_in_compute_dtype(out))
