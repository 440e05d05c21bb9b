"""The `__bang_active_*` family beyond relu/sigmoid/exp/tanh (those are in intrinsics): elementwise functions of one
NRAM vector of half, bfloat16 or float, computed in float32 and rounded once to the destination's type.

The `hp` ("high precision") forms compute the same values here: the simulator always computes in float32.
`active_recip_greater_1` and `active_exp_less_0` are defined on x > 1 and x <= 0 only (their hardware forms are
inaccurate elsewhere): an element outside that domain stops the task with a trap instead of giving a wrong value.
"""
from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from .caching import jit
from .context import VECTOR_ELEMENTS
from .faults import KernelTrap
from .intrinsics import check_operand
from .pointer import NRAM, get, is_float, put, span

_SQRT_HALF = np.float32(0.7071067811865476)


@register_jitable
def _operands(ctx, dst, src, n, what):
    """The checked (dst, src) spans of a unary vector function over floating-point NRAM buffers."""
    if not is_float(dst) or not is_float(src):
        raise KernelTrap(what + ": needs half, bfloat16 or float buffers")
    check_operand(ctx, dst, n, NRAM, what + " dst")
    check_operand(ctx, src, n, NRAM, what + " src")
    ctx.state[VECTOR_ELEMENTS] += n
    return span(dst, n), span(src, n)


@register_jitable
def _x(src, values, i):
    return np.float32(get(src, values, i))


@jit
def active_abs(ctx, dst, src, n):
    """`__bang_active_abs(dst, src, n)`: dst = |src|."""
    d, v = _operands(ctx, dst, src, n, "active_abs")
    for i in range(n):
        put(dst, d, i, abs(_x(src, v, i)))


@jit
def active_sign(ctx, dst, src, n):
    """`__bang_active_sign(dst, src, n)`: dst = 1 for src > 0, -1 for src < 0, 0 for +-0 (and NaN, as torch.sign)."""
    d, v = _operands(ctx, dst, src, n, "active_sign")
    for i in range(n):
        x = _x(src, v, i)
        put(dst, d, i, np.float32(1.0) if x > 0 else (np.float32(-1.0) if x < 0 else np.float32(0.0)))


@jit
def active_sqrt(ctx, dst, src, n):
    """`__bang_active_sqrt(dst, src, n)`: dst = sqrt(src) (NaN for src < 0)."""
    d, v = _operands(ctx, dst, src, n, "active_sqrt")
    for i in range(n):
        x = _x(src, v, i)
        put(dst, d, i, math.sqrt(x) if x >= 0 else np.float32(np.nan))


@jit
def active_sqrthp(ctx, dst, src, n):
    """`__bang_active_sqrthp(dst, src, n)`: dst = sqrt(src)."""
    active_sqrt(ctx, dst, src, n)


@jit
def active_rsqrt(ctx, dst, src, n):
    """`__bang_active_rsqrt(dst, src, n)`: dst = 1 / sqrt(src) (inf at 0, NaN for src < 0)."""
    d, v = _operands(ctx, dst, src, n, "active_rsqrt")
    for i in range(n):
        x = _x(src, v, i)
        if x > 0:
            put(dst, d, i, np.float32(1.0) / np.float32(math.sqrt(x)))
        elif x == 0:
            put(dst, d, i, np.float32(np.inf))
        else:
            put(dst, d, i, np.float32(np.nan))


@jit
def active_rsqrthp(ctx, dst, src, n):
    """`__bang_active_rsqrthp(dst, src, n)`: dst = 1 / sqrt(src)."""
    active_rsqrt(ctx, dst, src, n)


@register_jitable
def _reciprocal(x):
    if x == 0:
        return np.float32(np.inf) if math.copysign(1.0, x) > 0 else np.float32(-np.inf)
    return np.float32(1.0) / x


@jit
def active_recip(ctx, dst, src, n):
    """`__bang_active_recip(dst, src, n)`: dst = 1 / src (+-inf at +-0)."""
    d, v = _operands(ctx, dst, src, n, "active_recip")
    for i in range(n):
        put(dst, d, i, _reciprocal(_x(src, v, i)))


@jit
def active_reciphp(ctx, dst, src, n):
    """`__bang_active_reciphp(dst, src, n)`: dst = 1 / src."""
    active_recip(ctx, dst, src, n)


@jit
def active_recip_greater_1(ctx, dst, src, n):
    """`__bang_active_recip_greater_1(dst, src, n)`: dst = 1 / src for src > 1; other elements trap."""
    d, v = _operands(ctx, dst, src, n, "active_recip_greater_1")
    for i in range(n):
        x = _x(src, v, i)
        if not x > 1:
            raise KernelTrap("active_recip_greater_1: element " + str(i) + " = " + str(x) + " is not > 1")
        put(dst, d, i, np.float32(1.0) / x)


@jit
def active_log(ctx, dst, src, n):
    """`__bang_active_log(dst, src, n)`: dst = ln(src) (-inf at 0, NaN for src < 0)."""
    d, v = _operands(ctx, dst, src, n, "active_log")
    for i in range(n):
        x = _x(src, v, i)
        if x > 0:
            put(dst, d, i, math.log(x))
        elif x == 0:
            put(dst, d, i, np.float32(-np.inf))
        else:
            put(dst, d, i, np.float32(np.nan))


@jit
def active_loghp(ctx, dst, src, n):
    """`__bang_active_loghp(dst, src, n)`: dst = ln(src)."""
    active_log(ctx, dst, src, n)


@jit
def active_exphp(ctx, dst, src, n):
    """`__bang_active_exphp(dst, src, n)`: dst = exp(src)."""
    d, v = _operands(ctx, dst, src, n, "active_exphp")
    for i in range(n):
        put(dst, d, i, math.exp(_x(src, v, i)))


@jit
def active_exp_less_0(ctx, dst, src, n):
    """`__bang_active_exp_less_0(dst, src, n)`: dst = exp(src) for src <= 0; other elements trap."""
    d, v = _operands(ctx, dst, src, n, "active_exp_less_0")
    for i in range(n):
        x = _x(src, v, i)
        if not x <= 0:
            raise KernelTrap("active_exp_less_0: element " + str(i) + " = " + str(x) + " is not <= 0")
        put(dst, d, i, math.exp(x))


@jit
def active_pow2(ctx, dst, src, n):
    """`__bang_active_pow2(dst, src, n)`: dst = 2 ** src (exp2)."""
    d, v = _operands(ctx, dst, src, n, "active_pow2")
    for i in range(n):
        put(dst, d, i, math.pow(np.float32(2.0), _x(src, v, i)))


@jit
def active_sin(ctx, dst, src, n):
    """`__bang_active_sin(dst, src, n)`: dst = sin(src)."""
    d, v = _operands(ctx, dst, src, n, "active_sin")
    for i in range(n):
        put(dst, d, i, math.sin(_x(src, v, i)))


@jit
def active_cos(ctx, dst, src, n):
    """`__bang_active_cos(dst, src, n)`: dst = cos(src)."""
    d, v = _operands(ctx, dst, src, n, "active_cos")
    for i in range(n):
        put(dst, d, i, math.cos(_x(src, v, i)))


@jit
def active_gelu(ctx, dst, src, n):
    """`__bang_active_gelu(dst, src, n)`: dst = src * Phi(src) = 0.5 src (1 + erf(src / sqrt 2))."""
    d, v = _operands(ctx, dst, src, n, "active_gelu")
    for i in range(n):
        x = _x(src, v, i)
        put(dst, d, i, np.float32(0.5) * x * (np.float32(1.0) + np.float32(math.erf(x * _SQRT_HALF))))


@jit
def active_gelup(ctx, dst, src, n):
    """`__bang_active_gelup(dst, src, n)`: the high-precision gelu, src * Phi(src)."""
    active_gelu(ctx, dst, src, n)


#: `exp2` is the name most code knows `__bang_active_pow2` by.
active_exp2 = active_pow2

ACTIVATIONS = ("active_abs", "active_sign", "active_sqrt", "active_sqrthp", "active_rsqrt", "active_rsqrthp",
               "active_recip", "active_reciphp", "active_recip_greater_1", "active_log", "active_loghp",
               "active_exphp", "active_exp_less_0", "active_pow2", "active_exp2", "active_sin", "active_cos",
               "active_gelu", "active_gelup")
