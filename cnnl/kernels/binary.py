"""Elementwise binary ops with numpy broadcasting (`cnnlOpTensor`, div, maximum, minimum, pow, compare, logic).

Numerics: float16/bfloat16 operands are computed in float32 and rounded once into the output; float32 and float64
in their own type. Integer tensors compute in their own type and wrap on overflow (two's complement), like the
hardware's integer ALUs. Integer `div` truncates toward zero and x/0 gives 0; integer `pow` with a negative
exponent gives 0, except for bases 1 and -1. Arithmetic ops reject bool tensors; comparisons and logical ops accept
every dtype and may write any output dtype (as 0/1). Logical ops treat nonzero (and NaN) as true.
"""
import functools

import numpy as np

from .cast import readonly_flat
from .dtypes import (ALL_DTYPES, BOOL, FLOAT32, FLOAT64, INT_DTYPES, NUMERIC_DTYPES, check_dtype,
                     check_same_dtype, compute_dtype, is_int)
from .elementwise import run_elementwise, store_bool_result, stored_in_compute_dtype
from .parallel import INLINE_DIRECT_ELEMENTS, apart_or_same, map_flat_ranges, same_view
from .staging import compute_buffer, load, store

OP_TENSOR_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
COMPARE_OPS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}
LOGICAL_OPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def _lookup(table, op, what):
    try:
        return table[op]
    except KeyError:
        raise ValueError(f"unknown {what} {op!r} (one of {', '.join(table)})") from None


def _check_scale(name, value, dtype):
    # an int is integral however large (float() of 2**53 + 1 is not that int)
    if is_int(dtype) and not isinstance(value, (int, np.integer)) and float(value) != int(value):
        raise ValueError(f"{name}={value}: integer tensors need integral scaling factors")


def _scalar(value, dtype):
    """`value` as a numpy scalar of `dtype`; integers wrap (alpha = -1 on uint8 is 255, as in the hardware)."""
    dtype = np.dtype(dtype)
    return np.array(int(value)).astype(dtype)[()] if is_int(dtype) else dtype.type(value)


def _op_tensor_block(ufunc, alpha1, alpha2, beta, out, a, b):
    kind = compute_dtype(out.dtype)
    a_values, b_values = load(a), load(b)
    if alpha1 != 1:
        a_values = np.multiply(a_values, _scalar(alpha1, kind))
    if alpha2 != 1:
        b_values = np.multiply(b_values, _scalar(alpha2, kind))
    if beta == 0:  # out may hold poison: never read it
        result = compute_buffer(out)
        ufunc(a_values, b_values, out=result)
    else:
        result = np.empty(out.shape, kind)
        ufunc(a_values, b_values, out=result)
        result += np.multiply(load(out), _scalar(beta, kind))
    store(result, out)


#: storage dtypes computed in their own type, for which a plain same-shape op is one ufunc call
_DIRECT_DTYPES = frozenset((FLOAT32, FLOAT64) + INT_DTYPES)


def _direct(ufunc, a, b, out) -> bool:
    """`ufunc(a, b, out=out)` on this thread when the operands are plain (`_plain`), or over one range per host
    thread when they are plain but large and dense (`_plain_dense`); False when the general path must run."""
    if _plain(a, b, out):
        ufunc(a, b, out=out)
        return True
    flat = _plain_dense(a, b, out)
    if flat is None:
        return False
    map_flat_ranges(lambda x, y, result: ufunc(x, y, out=result), out.size, *flat)
    return True


def _plain_dense(a, b, out):
    """(a, b, out) as flat views (b 0-d when it is one element broadcast) when the operands are what `_plain` takes
    but larger, and a, out (and a whole b) are C-contiguous: the plain large case, where the general driver's
    blocks cost a sixth of the op in Python and GIL hand-overs (docs/cnnl_elementwise.md); else None."""
    dtype, shape = out.dtype, out.shape
    if dtype not in _DIRECT_DTYPES or a.dtype != dtype or b.dtype != dtype or a.shape != shape \
            or not a.flags.c_contiguous or not out.flags.c_contiguous:
        return None
    if b.shape == shape:
        if not b.flags.c_contiguous:
            return None
        flat_b = b.reshape(-1)
    elif b.size == 1 and b.ndim <= out.ndim:
        flat_b = b.reshape(())
    else:
        return None
    if not apart_or_same(out, a, b):
        return None
    return a.reshape(-1), flat_b, out.reshape(-1)


def _plain(a, b, out) -> bool:
    """The plain small case (one dtype computed in itself, a of out's shape, b of it too or one element broadcast
    over it, out aliasing no input other than as that very view), which one call on this thread computes: what
    tiny ops from frameworks are (a tensor and a scalar operand among them), where the general driver's checks cost
    more than the arithmetic."""
    dtype, shape = out.dtype, out.shape
    if dtype not in _DIRECT_DTYPES or a.dtype != dtype or b.dtype != dtype or a.shape != shape \
            or out.size > INLINE_DIRECT_ELEMENTS:
        return False
    if b.shape != shape and (b.size != 1 or b.ndim > out.ndim):
        return False
    return apart_or_same(out, a, b)


def op_tensor(op, a, b, out, alpha1=1.0, alpha2=1.0, beta=0.0):
    """out = op(alpha1*a, alpha2*b) + beta*out with broadcasting (`cnnlOpTensor`); op is 'add', 'sub' or 'mul'.

    beta == 0 never reads `out`. a, b and out share one numeric dtype.
    """
    ufunc = _lookup(OP_TENSOR_OPS, op, "opTensor op")
    if alpha1 == 1 and alpha2 == 1 and beta == 0 and _direct(ufunc, a, b, out):
        return
    if _scaled_add(ufunc, a, b, out, alpha1, alpha2, beta):
        return
    check_same_dtype(a=a, b=b, out=out)
    check_dtype("a", a, NUMERIC_DTYPES)
    for name, value in (("alpha1", alpha1), ("alpha2", alpha2), ("beta", beta)):
        _check_scale(name, value, out.dtype)
    plain = alpha1 == 1 and alpha2 == 1 and beta == 0
    block = functools.partial(_op_tensor_block, ufunc, alpha1, alpha2, beta)
    run_elementwise(block, out, [a, b], staged=not (plain and stored_in_compute_dtype(out)))


def _scaled_add_block(scale, out, a, b):
    if not out.flags.c_contiguous:  # (blocks of a C-contiguous output are; this keeps a block that is not right)
        _op_tensor_block(np.add, 1, scale, 0, out, a, b)
        return
    from .scaled_add import scaled_add, scaled_add_into  # numba's import waits for the first such op
    if same_view(a, out):
        scaled_add_into(readonly_flat(b), scale, out.reshape(-1))
    else:
        scaled_add(readonly_flat(a), readonly_flat(b), scale, out.reshape(-1))


def _scaled_add(ufunc, a, b, out, alpha1, alpha2, beta) -> bool:
    """a + alpha2 * b (add) or a - alpha2 * b (sub) of float32/float64 operands of one shape, dense, in one compiled
    pass instead of a scaled copy of b and an add (`torch.add(a, b, alpha=...)`, the optimizers' updates). The
    checks of `op_tensor` are implied (one float dtype). False when the general path must run."""
    dtype = out.dtype
    if (alpha1 != 1 or alpha2 == 1 or beta != 0 or ufunc not in (np.add, np.subtract)
            or dtype not in (FLOAT32, FLOAT64) or a.dtype != dtype or b.dtype != dtype
            or a.shape != out.shape or b.shape != out.shape
            or not (a.flags.c_contiguous and b.flags.c_contiguous and out.flags.c_contiguous)):
        return False
    scale = dtype.type(alpha2) if ufunc is np.add else -dtype.type(alpha2)
    if out.size <= INLINE_DIRECT_ELEMENTS and apart_or_same(out, a, b):
        _scaled_add_block(scale, out, a, b)  # on this thread, without the blocked driver (the optimizers' tensors)
    else:
        run_elementwise(functools.partial(_scaled_add_block, scale), out, [a, b], staged=False)
    return True


def _int_div(a, b, out):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        remainder = np.fmod(a, b)  # C remainder: sign of the dividend, 0 for b == 0
        np.floor_divide(a - remainder, b, out=out)  # exact division, so floor == trunc; b == 0 gives 0


def _int_pow(a, b, out):
    negative = b < 0
    reciprocal = None
    if negative.any():  # computed before `out` is written, since out may be a or b itself
        odd = (b & 1).astype(bool)
        reciprocal = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(out.dtype)
    np.power(a, np.maximum(b, 0), out=out)
    if reciprocal is not None:
        np.copyto(out, reciprocal, where=negative)


def _float_div(a, b, out):
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(a, b, out=out)


def _float_pow(a, b, out):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if _single_value(b) == 2:  # x * x: the correctly rounded x ** 2 (torch's too), without powf per element
            np.multiply(a, a, out=out)
        else:
            np.power(a, b, out=out)


def _single_value(block):
    """The one value a block holds (of one element, or broadcast: stride 0 on every longer axis), else None."""
    if block.size and all(stride == 0 or n == 1 for stride, n in zip(block.strides, block.shape)):
        return block.flat[0]
    return None


def _maximum(a, b, out):
    np.maximum(a, b, out=out)


def _minimum(a, b, out):
    np.minimum(a, b, out=out)


BINARY_OPS = {
    "div": (_float_div, _int_div),
    "maximum": (_maximum, _maximum),
    "minimum": (_minimum, _minimum),
    "pow": (_float_pow, _int_pow),
}


def _binary_block(float_fn, int_fn, out, a, b):
    result = compute_buffer(out)
    (int_fn if is_int(out.dtype) else float_fn)(load(a), load(b), result)
    store(result, out)


def binary(op, a, b, out):
    """out = op(a, b) with broadcasting; op is 'div', 'maximum', 'minimum' or 'pow' (see module numerics)."""
    float_fn, int_fn = _lookup(BINARY_OPS, op, "binary op")
    if _plain(a, b, out):
        (int_fn if is_int(out.dtype) else float_fn)(a, b, out)
        return
    flat = _plain_dense(a, b, out)
    if flat is not None:
        map_flat_ranges(int_fn if is_int(out.dtype) else float_fn, out.size, *flat)
        return
    check_same_dtype(a=a, b=b, out=out)
    check_dtype("a", a, NUMERIC_DTYPES)
    # one ufunc into out, no temporaries: large blocks (integer div and pow stage through temporaries)
    direct = stored_in_compute_dtype(out) and (op in ("maximum", "minimum") or not is_int(out.dtype))
    run_elementwise(functools.partial(_binary_block, float_fn, int_fn), out, [a, b], staged=not direct)


def _compare_block(ufunc, out, a, b):
    a_values, b_values = load(a), load(b)
    store_bool_result(lambda result: ufunc(a_values, b_values, out=result), out)


def compare(op, a, b, out):
    """out = (a op b) with broadcasting; op is 'eq', 'ne', 'lt', 'le', 'gt' or 'ge'. out is bool (or 0/1 in its dtype)."""
    ufunc = _lookup(COMPARE_OPS, op, "comparison")
    check_same_dtype(a=a, b=b)
    check_dtype("a", a, ALL_DTYPES)
    check_dtype("out", out, ALL_DTYPES)
    direct = stored_in_compute_dtype(a) and out.dtype == BOOL
    run_elementwise(functools.partial(_compare_block, ufunc), out, [a, b], staged=not direct)


def _logical_block(ufunc, out, *inputs):
    values = [load(x) for x in inputs]
    store_bool_result(lambda result: ufunc(*values, out=result), out)


def logical(op, a, b, out):
    """out = a op b on truth values (nonzero is true) with broadcasting; op is 'and', 'or' or 'xor'."""
    ufunc = _lookup(LOGICAL_OPS, op, "logical op")
    check_dtype("a", a, ALL_DTYPES)
    check_dtype("b", b, ALL_DTYPES)
    check_dtype("out", out, ALL_DTYPES)
    direct = stored_in_compute_dtype(a, b) and out.dtype == BOOL
    run_elementwise(functools.partial(_logical_block, ufunc), out, [a, b], staged=not direct)


def logical_not(a, out):
    """out = not a (a == 0), with broadcasting; out is bool (or 0/1 in its dtype)."""
    check_dtype("a", a, ALL_DTYPES)
    check_dtype("out", out, ALL_DTYPES)
    direct = stored_in_compute_dtype(a) and out.dtype == BOOL
    run_elementwise(functools.partial(_logical_block, np.logical_not), out, [a], staged=not direct)
