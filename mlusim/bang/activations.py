"""The `__bang_active_*` family beyond relu/sigmoid/exp/tanh (those are in intrinsics): elementwise functions of one
NRAM vector of half, bfloat16 or float, computed in float32 and rounded once to the destination's type.

The `hp` ("high precision") forms compute the same values here: the simulator always computes in float32.
`active_recip_greater_1` and `active_exp_less_0` are defined on x > 1 and x <= 0 only (their hardware forms are
inaccurate elsewhere): an element outside that domain stops the task with a trap instead of giving a wrong value.
"""
from __future__ import annotations

import math

import numpy as np
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .caching import jit
from .context import VECTOR_ELEMENTS
from .faults import KernelTrap
from .intrinsics import check_operand
from .dtypes import ELEMENT_TYPES
from .pointer import NRAM, PtrType, get, put, span

_SQRT_HALF = np.float32(0.7071067811865476)


def require_float(ptr, what):
    """Compile-time check that `ptr` points to half, bfloat16 or float elements."""


@overload(require_float, inline="always")
def _require_float(ptr, what):
    if isinstance(ptr, PtrType) and not ELEMENT_TYPES[ptr.kind].is_float:
        raise TypingError(f"[bang] {getattr(what, 'literal_value', 'an activation')}: needs half, bfloat16 or float "
                          f"buffers, got {ptr}")
    return lambda ptr, what: None


@register_jitable
def _operands(ctx, dst, src, n, dst_name, src_name):
    """The checked (dst, src) spans of a unary vector function over floating-point NRAM buffers (the names are the
    operands' names in trap messages: string constants, so no string is built at run time)."""
    require_float(dst, dst_name)
    require_float(src, src_name)
    check_operand(ctx, dst, n, NRAM, dst_name)
    check_operand(ctx, src, n, NRAM, src_name)
    ctx.state[VECTOR_ELEMENTS] += n
    return span(dst, n), span(src, n)


ABS, SIGN, SQRT, RSQRT, RECIP, RECIP_GREATER_1, LOG, EXP, EXP_LESS_0, POW2, SIN, COS, GELU = range(13)
_NAMES = ("active_abs", "active_sign", "active_sqrt", "active_rsqrt", "active_recip", "active_recip_greater_1",
          "active_log", "active_exp", "active_exp_less_0", "active_pow2", "active_sin", "active_cos", "active_gelu")


@jit
def domain_trap(name, domain, index):
    raise KernelTrap(name + ": element " + str(index) + " is not " + domain)


@register_jitable
def _reciprocal(x):
    """1 / x, with +-inf at +-0 (numba's float division would raise at 0)."""
    if x == 0:
        return np.float32(np.inf) if math.copysign(1.0, x) > 0 else np.float32(-np.inf)
    return np.float32(1.0) / x


@register_jitable
def _value(op, x, i):
    """The function `op` at x (float32); i is the element index, for the domain traps."""
    if op == ABS:
        return abs(x)
    if op == SIGN:
        return np.float32(1.0) if x > 0 else (np.float32(-1.0) if x < 0 else np.float32(0.0))
    if op == SQRT:
        return np.float32(math.sqrt(x)) if x >= 0 else np.float32(np.nan)
    if op == RSQRT:
        if x > 0:
            return np.float32(1.0) / np.float32(math.sqrt(x))
        return _reciprocal(x) if x == 0 else np.float32(np.nan)  # 1 / sqrt(-0) = 1 / -0 = -inf
    if op == RECIP:
        return _reciprocal(x)
    if op == RECIP_GREATER_1:
        if not x > 1:
            domain_trap("active_recip_greater_1", "> 1", i)
        return np.float32(1.0) / x
    if op == LOG:
        if x > 0:
            return np.float32(math.log(x))
        return np.float32(-np.inf) if x == 0 else np.float32(np.nan)
    if op == EXP:
        return np.float32(math.exp(x))
    if op == EXP_LESS_0:
        if not x <= 0:
            domain_trap("active_exp_less_0", "<= 0", i)
        return np.float32(math.exp(x))
    if op == POW2:
        return np.float32(math.pow(np.float32(2.0), x))
    if op == SIN:
        return np.float32(math.sin(x))
    if op == COS:
        return np.float32(math.cos(x))
    return np.float32(0.5) * x * (np.float32(1.0) + np.float32(math.erf(x * _SQRT_HALF)))  # GELU


@register_jitable
def apply(ctx, dst, src, n, op, dst_name, src_name):
    """dst = function `op` of src, elementwise over n NRAM elements. Each intrinsic passes its `op` as a constant,
    so its compiled loop holds only its own function."""
    d, v = _operands(ctx, dst, src, n, dst_name, src_name)
    for i in range(n):
        put(dst, d, i, _value(op, np.float32(get(src, v, i)), i))


@jit
def active_abs(ctx, dst, src, n):
    """`__bang_active_abs(dst, src, n)`: dst = |src|."""
    apply(ctx, dst, src, n, ABS, "active_abs dst", "active_abs src")


@jit
def active_sign(ctx, dst, src, n):
    """`__bang_active_sign(dst, src, n)`: dst = 1 for src > 0, -1 for src < 0, 0 for +-0 (and NaN, as torch.sign)."""
    apply(ctx, dst, src, n, SIGN, "active_sign dst", "active_sign src")


@jit
def active_sqrt(ctx, dst, src, n):
    """`__bang_active_sqrt(dst, src, n)`: dst = sqrt(src) (NaN for src < 0)."""
    apply(ctx, dst, src, n, SQRT, "active_sqrt dst", "active_sqrt src")


@jit
def active_sqrthp(ctx, dst, src, n):
    """`__bang_active_sqrthp(dst, src, n)`: dst = sqrt(src)."""
    apply(ctx, dst, src, n, SQRT, "active_sqrthp dst", "active_sqrthp src")


@jit
def active_rsqrt(ctx, dst, src, n):
    """`__bang_active_rsqrt(dst, src, n)`: dst = 1 / sqrt(src) (+-inf at +-0, NaN for src < 0)."""
    apply(ctx, dst, src, n, RSQRT, "active_rsqrt dst", "active_rsqrt src")


@jit
def active_rsqrthp(ctx, dst, src, n):
    """`__bang_active_rsqrthp(dst, src, n)`: dst = 1 / sqrt(src)."""
    apply(ctx, dst, src, n, RSQRT, "active_rsqrthp dst", "active_rsqrthp src")


@jit
def active_recip(ctx, dst, src, n):
    """`__bang_active_recip(dst, src, n)`: dst = 1 / src (+-inf at +-0)."""
    apply(ctx, dst, src, n, RECIP, "active_recip dst", "active_recip src")


@jit
def active_reciphp(ctx, dst, src, n):
    """`__bang_active_reciphp(dst, src, n)`: dst = 1 / src."""
    apply(ctx, dst, src, n, RECIP, "active_reciphp dst", "active_reciphp src")


@jit
def active_recip_greater_1(ctx, dst, src, n):
    """`__bang_active_recip_greater_1(dst, src, n)`: dst = 1 / src for src > 1; other elements trap."""
    apply(ctx, dst, src, n, RECIP_GREATER_1, "active_recip_greater_1 dst", "active_recip_greater_1 src")


@jit
def active_log(ctx, dst, src, n):
    """`__bang_active_log(dst, src, n)`: dst = ln(src) (-inf at 0, NaN for src < 0)."""
    apply(ctx, dst, src, n, LOG, "active_log dst", "active_log src")


@jit
def active_loghp(ctx, dst, src, n):
    """`__bang_active_loghp(dst, src, n)`: dst = ln(src)."""
    apply(ctx, dst, src, n, LOG, "active_loghp dst", "active_loghp src")


@jit
def active_exphp(ctx, dst, src, n):
    """`__bang_active_exphp(dst, src, n)`: dst = exp(src)."""
    apply(ctx, dst, src, n, EXP, "active_exphp dst", "active_exphp src")


@jit
def active_exp_less_0(ctx, dst, src, n):
    """`__bang_active_exp_less_0(dst, src, n)`: dst = exp(src) for src <= 0; other elements trap."""
    apply(ctx, dst, src, n, EXP_LESS_0, "active_exp_less_0 dst", "active_exp_less_0 src")


@jit
def active_pow2(ctx, dst, src, n):
    """`__bang_active_pow2(dst, src, n)`: dst = 2 ** src (exp2)."""
    apply(ctx, dst, src, n, POW2, "active_pow2 dst", "active_pow2 src")


@jit
def active_sin(ctx, dst, src, n):
    """`__bang_active_sin(dst, src, n)`: dst = sin(src)."""
    apply(ctx, dst, src, n, SIN, "active_sin dst", "active_sin src")


@jit
def active_cos(ctx, dst, src, n):
    """`__bang_active_cos(dst, src, n)`: dst = cos(src)."""
    apply(ctx, dst, src, n, COS, "active_cos dst", "active_cos src")


@jit
def active_gelu(ctx, dst, src, n):
    """`__bang_active_gelu(dst, src, n)`: dst = src * Phi(src) = 0.5 src (1 + erf(src / sqrt 2))."""
    apply(ctx, dst, src, n, GELU, "active_gelu dst", "active_gelu src")


@jit
def active_gelup(ctx, dst, src, n):
    """`__bang_active_gelup(dst, src, n)`: the high-precision gelu, src * Phi(src)."""
    apply(ctx, dst, src, n, GELU, "active_gelup dst", "active_gelup src")


#: `exp2` is the name most code knows `__bang_active_pow2` by.
active_exp2 = active_pow2

ACTIVATIONS = ("active_abs", "active_sign", "active_sqrt", "active_sqrthp", "active_rsqrt", "active_rsqrthp",
               "active_recip", "active_reciphp", "active_recip_greater_1", "active_log", "active_loghp",
               "active_exphp", "active_exp_less_0", "active_pow2", "active_exp2", "active_sin", "active_cos",
               "active_gelu", "active_gelup")
