"""Elementwise unary math ops.

float16/bfloat16 compute in float32 and round once; float32/float64 in their own type. Ops marked float-only reject
integer tensors. On integers: abs and neg wrap (abs(-128) stays -128 in int8), square wraps, sign is -1/0/1 and
floor/ceil/round/trunc are the identity. `round` is half to even (rint). sign(NaN) is 0, as torch.sign. bool tensors
are rejected.
"""
import functools

import numpy as np

from .dtypes import FLOAT_DTYPES, NUMERIC_DTYPES, check_dtype, check_same_dtype, is_int
from .elementwise import run_elementwise, stored_in_compute_dtype
from .staging import compute_buffer, load, store


def _rsqrt(x, out):
    np.sqrt(x, out=out)
    np.divide(1, out, out=out)


def _reciprocal(x, out):
    np.divide(1, x, out=out)


def _negate(x, out):
    # not np.negative: numpy 2.4 returns wrong values from it for 4-byte types read with a 16-byte stride into a
    # non-contiguous output. 0 - x (integers, wrapping) and x * -1 (floats, keeps -0.0) are exact negations.
    if is_int(x.dtype):
        np.subtract(x.dtype.type(0), x, out=out)
    else:
        np.multiply(x, x.dtype.type(-1), out=out)


def _sign(x, out):
    """-1, 0 or 1; 0 for NaN, as torch.sign (numpy's sign keeps the NaN)."""
    np.sign(x, out=out)
    np.copyto(out, 0, where=np.isnan(x))


def _integer_identity(x, out):
    np.copyto(out, x)


# name -> (float implementation, integer implementation or None when float-only, single pass over memory)
UNARY_OPS = {
    "abs": (np.abs, np.abs, True),
    "neg": (_negate, _negate, True),
    "exp": (np.exp, None, True),
    "expm1": (np.expm1, None, True),
    "log1p": (np.log1p, None, True),
    "log": (np.log, None, True),
    "log2": (np.log2, None, True),
    "log10": (np.log10, None, True),
    "sqrt": (np.sqrt, None, True),
    "rsqrt": (_rsqrt, None, False),
    "square": (np.square, np.square, True),
    "reciprocal": (_reciprocal, None, True),
    "sin": (np.sin, None, True),
    "cos": (np.cos, None, True),
    "floor": (np.floor, _integer_identity, True),
    "ceil": (np.ceil, _integer_identity, True),
    "round": (np.rint, _integer_identity, True),
    "trunc": (np.trunc, _integer_identity, True),
    "sign": (_sign, np.sign, True),
}


def _unary_block(fn, out, x):
    result = compute_buffer(out)
    with np.errstate(all="ignore"):  # domain errors give NaN/inf, as on the device
        fn(load(x), out=result)
    store(result, out)


def unary(op, x, out):
    """out = op(x) elementwise (x broadcasts to out); op is one of `UNARY_OPS`."""
    try:
        float_fn, int_fn, single_pass = UNARY_OPS[op]
    except KeyError:
        raise ValueError(f"unknown unary op {op!r} (one of {', '.join(UNARY_OPS)})") from None
    check_same_dtype(x=x, out=out)
    check_dtype("x", x, NUMERIC_DTYPES if int_fn is not None else FLOAT_DTYPES)
    fn = int_fn if is_int(x.dtype) else float_fn
    run_elementwise(functools.partial(_unary_block, fn), out, [x],
                    staged=not (single_pass and stored_in_compute_dtype(out)))
