"""Vector and matrix intrinsics over on-chip buffers (`__bang_add`, `__bang_active_relu`, `__bang_matmul`, ...).

Each checks that its buffers are in NRAM (matmul weights in WRAM), lie inside their allocations and meet the board's
alignment (64-byte addresses everywhere; lengths a multiple of 128 bytes on mtp_2xx), then computes in float32
(int64 for integer kinds) and rounds to the destination's element type. Work is counted in the task's state row.
In-place use (dst == src) is allowed, as on hardware.
"""
from __future__ import annotations

import math

import numpy as np
from numba.extending import overload, register_jitable

from .caching import jit
from .context import ADDRESS_ALIGN, KIND_INDEX, LENGTH_ALIGN, MACS, VECTOR_ELEMENTS
from .faults import KernelTrap
from .pointer import (NRAM, WRAM, _not_pointer, address, bounded_mul, check_range, check_space, get, itemsize,
                      kind_name, put, span, store, text)


@jit
def alignment_trap(what, name, offset, align):
    raise KernelTrap(what + ": address of '" + name + "' + " + text(offset) + " is not " + text(align)
                     + "-byte aligned")


@jit
def length_trap(what, count, kind, length_align):
    raise KernelTrap(what + ": " + text(count) + " " + kind + " elements are not a multiple of " + text(length_align)
                     + " bytes, which this board requires")


@register_jitable
def check_operand(ctx, ptr, count, space, what):
    """Trap unless `count` elements at ptr are a valid vector operand in `space` on this board."""
    check_space(ptr, space, what)
    check_range(ptr, count, what)
    align = ctx.limits[ADDRESS_ALIGN]
    if address(ptr) % align != 0:
        alignment_trap(what, ptr.name, ptr.offset, align)
    length_align = ctx.limits[LENGTH_ALIGN]
    if (count * itemsize(ptr)) % length_align != 0:
        length_trap(what, count, kind_name(ptr), length_align)


def accumulator(ptr, count):
    """A zeroed float32 (float kinds) or int64 (integer kinds) work array of `count` elements."""


@overload(accumulator)
def _accumulator(ptr, count):
    _not_pointer(ptr)
    dtype = np.float32 if ptr.kind in ("float32", "half", "bfloat16") else np.int64
    return lambda ptr, count: np.zeros(count, dtype)


def kind_index(ptr):
    """Index of ptr's element kind in the MACS counters."""


@overload(kind_index)
def _kind_index(ptr):
    _not_pointer(ptr)
    index = KIND_INDEX[ptr.kind]
    return lambda ptr: index


# ---- elementwise -------------------------------------------------------------------------------------------------
# Each intrinsic passes its operation as a constant to one checked loop per operand shape (two vectors, a vector and
# a scalar, one vector), so its compiled loop holds only its own operation.

ADD, SUB, MUL, MAXIMUM, MINIMUM = range(5)
RELU, SIGMOID, EXP, TANH = range(4)


@register_jitable
def _combined(op, a, b):
    if op == ADD:
        return a + b
    if op == SUB:
        return a - b
    if op == MUL:
        return a * b
    if op == MAXIMUM:
        return a if a > b else b
    return a if a < b else b  # MINIMUM


@register_jitable
def _activated(op, x):
    if op == RELU:
        return x if x > 0 else x * 0
    v = np.float32(x)
    if op == SIGMOID:
        return np.float32(1.0) / (np.float32(1.0) + np.exp(-v))
    if op == EXP:
        return np.exp(v)
    return math.tanh(v)  # TANH


@register_jitable
def binary(ctx, dst, src0, src1, n, op, dst_name, src0_name, src1_name):
    """dst = src0 `op` src1 over n NRAM elements (the names are the operands' names in trap messages)."""
    check_operand(ctx, dst, n, NRAM, dst_name)
    check_operand(ctx, src0, n, NRAM, src0_name)
    check_operand(ctx, src1, n, NRAM, src1_name)
    d, a, b = span(dst, n), span(src0, n), span(src1, n)
    for i in range(n):
        put(dst, d, i, _combined(op, get(src0, a, i), get(src1, b, i)))
    ctx.state[VECTOR_ELEMENTS] += n


@register_jitable
def with_scalar(ctx, dst, src, value, n, op, dst_name, src_name):
    """dst = src `op` value over n NRAM elements."""
    check_operand(ctx, dst, n, NRAM, dst_name)
    check_operand(ctx, src, n, NRAM, src_name)
    d, v = span(dst, n), span(src, n)
    for i in range(n):
        put(dst, d, i, _combined(op, get(src, v, i), value))
    ctx.state[VECTOR_ELEMENTS] += n


@register_jitable
def activation(ctx, dst, src, n, op, dst_name, src_name):
    """dst = activation `op` of src over n NRAM elements (relu in the element type, the others in float32)."""
    check_operand(ctx, dst, n, NRAM, dst_name)
    check_operand(ctx, src, n, NRAM, src_name)
    d, v = span(dst, n), span(src, n)
    for i in range(n):
        put(dst, d, i, _activated(op, get(src, v, i)))
    ctx.state[VECTOR_ELEMENTS] += n


@jit
def add(ctx, dst, src0, src1, n):
    """`__bang_add(dst, src0, src1, n)`: dst = src0 + src1."""
    binary(ctx, dst, src0, src1, n, ADD, "add dst", "add src0", "add src1")


@jit
def sub(ctx, dst, src0, src1, n):
    """`__bang_sub(dst, src0, src1, n)`: dst = src0 - src1."""
    binary(ctx, dst, src0, src1, n, SUB, "sub dst", "sub src0", "sub src1")


@jit
def mul(ctx, dst, src0, src1, n):
    """`__bang_mul(dst, src0, src1, n)`: dst = src0 * src1."""
    binary(ctx, dst, src0, src1, n, MUL, "mul dst", "mul src0", "mul src1")


@jit
def maximum(ctx, dst, src0, src1, n):
    """`__bang_maximum(dst, src0, src1, n)`: dst = max(src0, src1)."""
    binary(ctx, dst, src0, src1, n, MAXIMUM, "maximum dst", "maximum src0", "maximum src1")


@jit
def minimum(ctx, dst, src0, src1, n):
    """`__bang_minimum(dst, src0, src1, n)`: dst = min(src0, src1)."""
    binary(ctx, dst, src0, src1, n, MINIMUM, "minimum dst", "minimum src0", "minimum src1")


@jit
def mul_scalar(ctx, dst, src, value, n):
    """`__bang_mul_scalar(dst, src, value, n)`: dst = src * value."""
    with_scalar(ctx, dst, src, value, n, MUL, "mul_scalar dst", "mul_scalar src")


@jit
def add_scalar(ctx, dst, src, value, n):
    """`__bang_add_scalar(dst, src, value, n)`: dst = src + value."""
    with_scalar(ctx, dst, src, value, n, ADD, "add_scalar dst", "add_scalar src")


@jit
def write_value(ctx, dst, n, value):
    """`__bang_write_value(dst, n, value)`: fill n elements with value."""
    check_operand(ctx, dst, n, NRAM, "write_value dst")
    d = span(dst, n)
    for i in range(n):
        put(dst, d, i, value)
    ctx.state[VECTOR_ELEMENTS] += n


# ---- activations -------------------------------------------------------------------------------------------------

@jit
def active_relu(ctx, dst, src, n):
    """`__bang_active_relu(dst, src, n)`: dst = max(src, 0)."""
    activation(ctx, dst, src, n, RELU, "active_relu dst", "active_relu src")


@jit
def active_sigmoid(ctx, dst, src, n):
    """`__bang_active_sigmoid(dst, src, n)`: dst = 1 / (1 + exp(-src))."""
    activation(ctx, dst, src, n, SIGMOID, "active_sigmoid dst", "active_sigmoid src")


@jit
def active_exp(ctx, dst, src, n):
    """`__bang_active_exp(dst, src, n)`: dst = exp(src)."""
    activation(ctx, dst, src, n, EXP, "active_exp dst", "active_exp src")


@jit
def active_tanh(ctx, dst, src, n):
    """`__bang_active_tanh(dst, src, n)`: dst = tanh(src)."""
    activation(ctx, dst, src, n, TANH, "active_tanh dst", "active_tanh src")


# ---- reductions and layout ---------------------------------------------------------------------------------------

@jit
def reduce_sum(ctx, dst, src, n):
    """`__bang_reduce_sum(dst, src, n)`, simplified: dst[0] = the sum of src[0:n] (float32 accumulation)."""
    check_operand(ctx, dst, 1, NRAM, "reduce_sum dst")
    check_operand(ctx, src, n, NRAM, "reduce_sum src")
    total = accumulator(src, 1)
    v = span(src, n)
    for i in range(n):
        total[0] += get(src, v, i)
    store(dst, 0, total[0])
    ctx.state[VECTOR_ELEMENTS] += n


@jit
def reduce_max(ctx, dst, src, n):
    """`__bang_reduce_max(dst, src, n)`, simplified: dst[0] = the maximum of src[0:n]."""
    check_operand(ctx, dst, 1, NRAM, "reduce_max dst")
    check_operand(ctx, src, n, NRAM, "reduce_max src")
    if n < 1:
        raise KernelTrap("reduce_max: needs at least one element")
    values = span(src, n)
    best = get(src, values, 0)
    for i in range(1, n):
        v = get(src, values, i)
        if v > best:
            best = v
    store(dst, 0, best)
    ctx.state[VECTOR_ELEMENTS] += n


@jit
def transpose(ctx, dst, src, height, width):
    """`__bang_transpose(dst, src, height, width)`: src is height x width, dst becomes width x height."""
    if height < 0 or width < 0:
        raise KernelTrap("transpose: negative height " + text(height) + " or width " + text(width))
    count = bounded_mul(height, width)  # beyond any buffer when the product overflows: the range check traps
    check_operand(ctx, dst, count, NRAM, "transpose dst")
    check_operand(ctx, src, count, NRAM, "transpose src")
    if dst.base.ctypes.data == src.base.ctypes.data:
        raise KernelTrap("transpose: dst and src must be different buffers ('" + dst.name + "')")
    d, v = span(dst, count), span(src, count)
    for r in range(height):
        for c in range(width):
            put(dst, d, c * height + r, get(src, v, r * width + c))
    ctx.state[VECTOR_ELEMENTS] += count


@jit
def matmul(ctx, dst, lhs, rhs, m, k, n):
    """`__bang_matmul(dst, lhs, rhs, m, k, n)`: dst (m x n, NRAM) = lhs (m x k, NRAM) @ rhs (k x n, WRAM),
    row-major, accumulated in float32 (int64 for integers) and rounded once to dst's type."""
    if m < 0 or k < 0 or n < 0:
        raise KernelTrap("matmul: negative dimension m=" + text(m) + ", k=" + text(k) + ", n=" + text(n))
    check_operand(ctx, dst, bounded_mul(m, n), NRAM, "matmul dst")
    check_operand(ctx, lhs, bounded_mul(m, k), NRAM, "matmul lhs")
    check_operand(ctx, rhs, bounded_mul(k, n), WRAM, "matmul rhs")
    if m == 0 or n == 0:
        return  # no output element (and k or n may then be as large as an int64 holds)
    d, left, right = span(dst, m * n), span(lhs, m * k), span(rhs, k * n)
    row = accumulator(lhs, n)
    for i in range(m):
        row[:] = 0
        for p in range(k):
            a = get(lhs, left, i * k + p)
            for j in range(n):
                row[j] += a * get(rhs, right, p * n + j)
        for j in range(n):
            put(dst, d, i * n + j, row[j])
    ctx.state[MACS + kind_index(lhs)] += bounded_mul(bounded_mul(m, k), n)
