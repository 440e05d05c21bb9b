"""Elementwise arithmetic beyond `binary`: addcmul / addcdiv, lerp, atan2, floor and truncating division, floor
modulo, the product of N tensors, the affine transform alpha*x + beta, clipping and the bitwise ops.

Every input broadcasts to the output (numpy rules); blocks run in parallel through `elementwise.run_elementwise`,
as numpy ufuncs except lerp's per-element formula choice (a nogil numba loop).
Numerics as in `binary`: half/bfloat16 compute in float32 and round once, float32/float64 in their own type,
integers in their own type with wrap-around. The formulas are PyTorch's CPU kernels:
- addcmul: x + (value*t1)*t2; addcdiv: x + (value*t1)/t2.
- lerp: |w| < 0.5 ? start + w*(end - start) : end - (end - start)*(1 - w).
- floor_div: floats as torch.div(rounding_mode="floor") (the fmod-corrected quotient, so 7.5 // 2.5 is exactly 3;
  x/0 is +-inf or NaN); trunc_div: trunc(x/y). floor_mod: fmod corrected toward the divisor's sign, so a zero
  result keeps the dividend's sign (torch.remainder). Integer division or modulo by zero gives 0 (as `binary`'s
  integer div), where PyTorch raises.
- clip: min(max(x, low), high); NaN in x or a bound propagates; low > high gives high (torch.clamp).
- bitwise: and/or/xor/not on integers and bools; shifts as torch.bitwise_left_shift/right_shift: a shift count
  outside [0, bits) gives 0 (left) or the sign fill (right).
"""
import functools

import numpy as np
from numba import njit

from .cast import readonly_flat
from .dtypes import (BOOL, FLOAT32, FLOAT64, FLOAT_DTYPES, NUMERIC_DTYPES, check_dtype, check_same_dtype,
                     compute_dtype, is_int)
from .elementwise import run_elementwise
from .parallel import INLINE_DIRECT_ELEMENTS, INLINE_ELEMENTS, apart_or_same
from .staging import compute_buffer, load, store

INT_OR_BOOL = tuple(d for d in NUMERIC_DTYPES if is_int(d)) + (BOOL,)
#: storage dtypes computed in their own type: a plain op over them is one ufunc into the output
_DIRECT = frozenset((FLOAT32, FLOAT64) + tuple(d for d in NUMERIC_DTYPES if is_int(d)))
BITWISE_OPS = ("and", "or", "xor", "not", "left_shift", "right_shift")


def _scalar(value, dtype):
    """`value` as a numpy scalar of compute dtype `dtype` (integers wrap)."""
    dtype = np.dtype(dtype)
    return np.array(int(value)).astype(dtype)[()] if is_int(dtype) else dtype.type(value)


def _at_least_1d(block):
    """`block` with 0-d operands viewed as 1-element arrays (numpy ufuncs return scalars for 0-d results)."""
    def run(*operands):
        block(*(a.reshape(1) if a is not None and a.ndim == 0 else a for a in operands))
    return run


def _run(block, out, inputs, dtypes=NUMERIC_DTYPES):
    check_same_dtype(out=out, **{f"input{i}": x for i, x in enumerate(inputs)})
    check_dtype("out", out, dtypes)
    run_elementwise(_at_least_1d(block), out, list(inputs), staged=True)


# ---- addcmul / addcdiv / lerp / atan2 ----------------------------------------------------------------------------

def _addc_block(divide, value, out, x, t1, t2):
    kind = compute_dtype(out.dtype)
    result = compute_buffer(out, (x, t2))  # addcdiv_ / addcmul_: out is x (or t2) itself
    with np.errstate(all="ignore"):
        np.multiply(load(t1), _scalar(value, kind), out=result)
        (np.divide if divide else np.multiply)(result, load(t2), out=result)
        np.add(load(x), result, out=result)
    store(result, out)


def _small_dense(out, *inputs) -> bool:
    """True for operands of out's shape and float32/float64 dtype, each apart from out or that very view, with at
    most INLINE_ELEMENTS elements: one block on this thread computes them (an optimizer's per-parameter work),
    without the general driver's checks."""
    dtype, shape = out.dtype, out.shape
    return (dtype in (FLOAT32, FLOAT64) and out.size <= INLINE_ELEMENTS and out.ndim > 0
            and all(x.dtype == dtype and x.shape == shape for x in inputs) and apart_or_same(out, *inputs))


def addcmul(x, t1, t2, value, out):
    """out = x + value * t1 * t2 (`cnnlAddcmul`)."""
    if _small_dense(out, x, t1, t2):
        _addc_block(False, value, out, x, t1, t2)
        return
    _run(functools.partial(_addc_block, False, value), out, (x, t1, t2))


def addcdiv(x, t1, t2, value, out):
    """out = x + value * t1 / t2 (`cnnlAddcdiv`); floats only."""
    if _small_dense(out, x, t1, t2):
        _addc_block(True, value, out, x, t1, t2)
        return
    _run(functools.partial(_addc_block, True, value), out, (x, t1, t2), FLOAT_DTYPES)


@njit(nogil=True, cache=True)
def _lerp_kernel(start, end, weight, out):
    """torch's lerp over 1-D contiguous arrays (one select per element: numpy's where is ten times slower)."""
    for i in range(out.size):
        a, b, t = start[i], end[i], weight[i]
        difference = b - a
        out[i] = a + t * difference if abs(t) < 0.5 else b - difference * (1 - t)


@njit(nogil=True, cache=True)
def _lerp_one_weight(start, end, weight, out):
    """`_lerp_kernel` with one weight (a scalar of the compute dtype) for every element: the same arithmetic, no
    broadcast weight array."""
    for i in range(out.size):
        a, b = start[i], end[i]
        difference = b - a
        out[i] = a + weight * difference if abs(weight) < 0.5 else b - difference * (1 - weight)


def _lerp_block(out, start, end, weight):
    kind = compute_dtype(out.dtype)
    flat = [readonly_flat(np.broadcast_to(load(x, kind), out.shape)) for x in (start, end, weight)]
    result = np.empty(out.size, kind)
    _lerp_kernel(*flat, result)
    store(result.reshape(out.shape), out)


def lerp(start, end, weight, out):
    """out = start + weight * (end - start) with PyTorch's two-sided formula (`cnnlLerp`); floats only."""
    if weight.size == 1 and _small_dense(out, start, end) and start.flags.c_contiguous and end.flags.c_contiguous \
            and out.flags.c_contiguous and weight.dtype == out.dtype:
        _lerp_one_weight(readonly_flat(start), readonly_flat(end), weight.reshape(-1)[0], out.reshape(-1))
        return
    _run(_lerp_block, out, (start, end, weight), FLOAT_DTYPES)


def _atan2_block(out, y, x):
    result = compute_buffer(out)
    np.arctan2(load(y), load(x), out=result)
    store(result, out)


def atan2(y, x, out):
    """out = atan2(y, x) (`cnnlAtan2`); floats only."""
    _run(_atan2_block, out, (y, x), FLOAT_DTYPES)


# ---- division and modulo -----------------------------------------------------------------------------------------

def _float_floor_div(a, b, out):
    # torch's div_floor_floating: the quotient of the exact remainder, floored, corrected by the rounding of /
    with np.errstate(all="ignore"):
        quotient_of_zero = a / b
        remainder = np.fmod(a, b)
        quotient = (a - remainder) / b
        np.subtract(quotient, 1, out=quotient, where=(remainder != 0) & ((b < 0) != (remainder < 0)))
        floored = np.floor(quotient)
        floored += (quotient - floored) > 0.5
        result = np.where(quotient == 0, np.copysign(0, quotient_of_zero), floored)
        np.copyto(out, np.where(b == 0, quotient_of_zero, result))


def _int_floor_div(a, b, out):
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        np.copyto(out, np.where(b == 0, 0, np.floor_divide(a, safe)), casting="unsafe")


def _float_trunc_div(a, b, out):
    with np.errstate(all="ignore"):
        np.trunc(np.divide(a, b), out=out)


def _int_trunc_div(a, b, out):
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        remainder = np.fmod(a, safe)
        np.copyto(out, np.where(b == 0, 0, (a - remainder) // safe), casting="unsafe")


def _float_floor_mod(a, b, out):
    with np.errstate(all="ignore"):
        remainder = np.fmod(a, b)
        np.add(remainder, b, out=remainder, where=(remainder != 0) & ((b < 0) != (remainder < 0)))
        np.copyto(out, remainder)


def _int_floor_mod(a, b, out):
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        np.copyto(out, np.where(b == 0, 0, np.remainder(a, safe)), casting="unsafe")


def _float_trunc_mod(a, b, out):
    with np.errstate(all="ignore"):
        np.fmod(a, b, out=out)


def _int_trunc_mod(a, b, out):
    with np.errstate(all="ignore"):
        safe = np.where(b == 0, 1, b)
        np.copyto(out, np.where(b == 0, 0, np.fmod(a, safe)), casting="unsafe")


_DIVISIONS = {"floor_div": (_float_floor_div, _int_floor_div), "trunc_div": (_float_trunc_div, _int_trunc_div),
              "floor_mod": (_float_floor_mod, _int_floor_mod), "trunc_mod": (_float_trunc_mod, _int_trunc_mod)}


def _division_block(op, out, a, b):
    float_fn, int_fn = _DIVISIONS[op]
    result = compute_buffer(out)
    (int_fn if is_int(out.dtype) else float_fn)(load(a), load(b), result)
    store(result, out)


def divide(op, a, b, out):
    """out = a op b with op 'floor_div' (`cnnlFloorDiv_v2`), 'trunc_div' (`cnnlFloorDivTrunc`), 'floor_mod'
    (`cnnlFloorMod`) or 'trunc_mod' (`cnnlFloorModTrunc`, C's fmod); see the module rules."""
    if op not in _DIVISIONS:
        raise ValueError(f"unknown division {op!r} (one of {', '.join(_DIVISIONS)})")
    _run(functools.partial(_division_block, op), out, (a, b))


# ---- product of N, affine transform, clip ------------------------------------------------------------------------

def _product_block(out, *inputs):
    result = compute_buffer(out, inputs[1:])
    with np.errstate(all="ignore"):
        np.copyto(result, load(inputs[0]))
        for x in inputs[1:]:
            np.multiply(result, load(x), out=result)
    store(result, out)


def mul_n(inputs, out):
    """out = the product of all inputs, left to right (`cnnlMulN`)."""
    if not inputs:
        raise ValueError("mul_n needs at least one input")
    _run(_product_block, out, tuple(inputs))


def _transform_block(alpha, beta, out, x):
    kind = compute_dtype(out.dtype)
    result = compute_buffer(out)
    with np.errstate(all="ignore"):
        if alpha != 1:
            np.multiply(load(x), _scalar(alpha, kind), out=result)
            if not _adds_nothing(beta, kind):
                np.add(result, _scalar(beta, kind), out=result)
        elif not _adds_nothing(beta, kind):
            np.add(load(x), _scalar(beta, kind), out=result)
        else:
            np.copyto(result, load(x))
    store(result, out)


def _adds_nothing(beta, kind) -> bool:
    """True when x + beta is x for every x of `kind`: an integer 0, or a float -0.0 (+0.0 is not: -0.0 + 0.0 is
    +0.0)."""
    return beta == 0 and (np.dtype(kind).kind in "iu" or bool(np.signbit(beta)))


def transform(x, alpha, beta, out):
    """out = alpha * x + beta (`cnnlTransform_v2`) in IEEE arithmetic of the computation type; integer tensors
    need integral alpha and beta. 1 * x is x and x + -0.0 is x, so neither is computed: `x * number` is a
    transform with beta -0.0 (a signed zero product keeps its sign), `x + number` one with alpha 1."""
    dtype = out.dtype
    if dtype in _DIRECT and x.dtype == dtype and x.shape == out.shape and out.size <= INLINE_DIRECT_ELEMENTS \
            and apart_or_same(out, x):
        adds = beta != 0 or not (dtype.kind in "iu" or np.signbit(beta))  # (`_adds_nothing`)
        scalar = dtype.type if dtype.kind == "f" else functools.partial(_scalar, dtype=dtype)
        # one ufunc on this thread (a framework's `x + 1`, `x * 0.5`); floating-point warnings are off in the
        # queued command (cnnl.opcall.quietly), as for binary's plain ops
        if alpha == 1 and not adds:
            np.copyto(out, x)
        elif not adds:
            np.multiply(x, scalar(alpha), out=out)
        elif alpha == 1:
            np.add(x, scalar(beta), out=out)
        else:
            np.multiply(x, scalar(alpha), out=out)
            np.add(out, scalar(beta), out=out)
        return
    _run(functools.partial(_transform_block, alpha, beta), out, (x,))


def _clip_block(low, high, out, x):
    result = compute_buffer(out)
    values = load(x)
    if low is not None and high is not None:
        np.clip(values, low, high, out=result)  # min(max(x, low), high): NaN propagates, low > high gives high
    elif low is not None:
        np.maximum(values, low, out=result)
    else:
        np.minimum(values, high, out=result)
    store(result, out)


@njit(nogil=True, cache=True)
def _clip_flat(x, low, high, out):
    """out = min(max(x, low), high) of 1-D floats (bounds not NaN): a NaN x fails both tests and stays NaN, and
    low > high gives high."""
    for i in range(x.size):
        v = x[i]
        v = low if v < low else v
        out[i] = high if v > high else v


def _clip_flat_block(low, high, out, x):
    if not out.flags.c_contiguous:  # (blocks of a C-contiguous output are; this keeps a block that is not right)
        _clip_block(low, high, out, x)
        return
    _clip_flat(readonly_flat(x), low, high, out.reshape(-1))


def clip(x, low, high, out):
    """out = min(max(x, low), high) (`cnnlClip_v2`); `low` / `high` are 0-d arrays of x's dtype or None (at least
    one given)."""
    if low is None and high is None:
        raise ValueError("clip needs a lower or an upper bound")
    bounds = [None if v is None else load(np.asarray(v, x.dtype).reshape(()))[()] for v in (low, high)]
    if (x.dtype == out.dtype and x.dtype in (np.float32, np.float64) and x.shape == out.shape
            and x.flags.c_contiguous and out.flags.c_contiguous and not any(
                b is not None and np.isnan(b) for b in bounds)):
        # one compiled pass in large blocks (np.clip's NaN handling costs a few passes)
        low_value = x.dtype.type(-np.inf) if bounds[0] is None else bounds[0]
        high_value = x.dtype.type(np.inf) if bounds[1] is None else bounds[1]
        run_elementwise(functools.partial(_clip_flat_block, low_value, high_value), out, [x], staged=False)
        return
    _run(functools.partial(_clip_block, *bounds), out, (x,))


# ---- bitwise -------------------------------------------------------------------------------------------------------

def _shift(op, a, b, out):
    bits = a.dtype.itemsize * 8
    in_range = (b >= 0) & (b < bits)
    count = np.where(in_range, b, 0).astype(a.dtype)
    if op == "left_shift":
        np.copyto(out, np.where(in_range, np.left_shift(a, count), 0), casting="unsafe")
    else:
        signed = a.dtype.kind == "i"
        fill = np.right_shift(a, a.dtype.type(bits - 1)) if signed else np.zeros((), a.dtype)
        np.copyto(out, np.where(in_range, np.right_shift(a, count), fill), casting="unsafe")


def _bitwise_block(op, out, a, b=None):
    if op == "not":
        np.invert(a, out=out) if out.dtype == a.dtype else np.copyto(out, np.invert(a))
    elif op in ("left_shift", "right_shift"):
        _shift(op, a, b, out)
    else:
        {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b, out=out)


def bitwise(op, a, b, out):
    """out = a op b (`cnnlBitCompute_v2`) on integers or bools; 'not' reads only a (b is None); shifts need
    integers."""
    if op not in BITWISE_OPS:
        raise ValueError(f"unknown bitwise op {op!r} (one of {', '.join(BITWISE_OPS)})")
    inputs = (a,) if op == "not" else (a, b)
    allowed = INT_OR_BOOL if op in ("and", "or", "xor", "not") else INT_OR_BOOL[:-1]
    _run(functools.partial(_bitwise_block, op), out, inputs, allowed)
