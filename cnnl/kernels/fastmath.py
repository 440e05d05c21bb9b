"""Scalar float math that numba loops can vectorise: an exp without a library call and integer keys that order floats
for NaN-aware max and min (bit casts and reassociable accumulation are the device's: mlusim.numerics).

numba calls libm's expf one element at a time (~5 ns); numpy's exp is SIMD but costs a memory pass of its own.
`exp32` below is plain arithmetic (Cody-Waite range reduction and a degree-6 polynomial, the exponent put in by bit
arithmetic), so a loop that calls it is vectorised by LLVM and fuses with the rest of an op: sigmoid, softmax and
the gaussian of gelu become one pass over memory. Accuracy: within one ulp of the correctly rounded exp over the
whole float32 range (measured on 2^26 random arguments and every edge below), as PyTorch's vectorised CPU exp.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from mlusim.numerics.bitcast import i32_as_f32

_INLINE = dict(inline="always", nogil=True, cache=True, error_model="numpy")
#: fastmath flags for loops around exp32: a * b + c may become one FMA, which speeds its polynomial up
#: (docs/cnnl_elementwise.md); results move by a few ulps, as between PyTorch's CPU builds with and without FMA.
#: Inlined code takes the flags of the loop it is inlined into.
FUSED_MULTIPLY_ADD = {"contract"}


@intrinsic
def order_key(typingctx, value, nan_highest):
    """A signed integer of the float `value`'s width whose order is the values' order for max and min: -0.0 and
    0.0 equal, -inf lowest and inf highest among numbers, every NaN above them all (`nan_highest`) or below them all.
    Comparing keys is an integer compare: a scalar loop of NaN-aware float comparisons (x86 with AVX-512 moves each
    one through a mask register) ran ~5x slower than this."""
    if not isinstance(value, types.Float) or not isinstance(nan_highest, types.Boolean):
        return None
    width = value.bitwidth

    def codegen(context, builder, signature, args):
        x, highest = args
        kind = ir.IntType(width)
        top = ir.Constant(kind, (1 << (width - 1)) - 1)
        infinity = ir.Constant(kind, 0x7F800000 if width == 32 else 0x7FF0000000000000)
        bits = builder.bitcast(x, kind)
        sign = builder.ashr(bits, ir.Constant(kind, width - 1))
        ordered = builder.xor(bits, builder.and_(sign, top))  # negatives: magnitude bits flipped, so they descend
        magnitude = builder.and_(bits, top)
        zero = ir.Constant(kind, 0)
        ordered = builder.select(builder.icmp_unsigned("==", magnitude, zero), zero, ordered)
        if highest.type != ir.IntType(1):
            highest = builder.trunc(highest, ir.IntType(1))
        nan_key = builder.select(highest, top, ir.Constant(kind, -(1 << (width - 1))))
        return builder.select(builder.icmp_unsigned(">", magnitude, infinity), nan_key, ordered)
    return (types.int32 if width == 32 else types.int64)(value, nan_highest), codegen


_LOG2E = np.float32(1.4426950408889634)
_LN2_HIGH = np.float32(0.693359375)  # ln 2 in two parts: k * _LN2_HIGH is exact for |k| < 2^9
_LN2_LOW = np.float32(-2.12194440e-4)
#: beyond these, exp is inf / rounds to 0 (the argument is clamped there, so the scale stays finite)
_HIGHEST = np.float32(89.0)
_LOWEST = np.float32(-104.0)


@njit(**_INLINE)
def exp32(x):
    """exp of a float32 (inf above 88.72, subnormals below -87.3, 0 below -103.97; NaN stays NaN)."""
    clamped = min(max(x, _LOWEST), _HIGHEST)
    k = np.floor(clamped * _LOG2E + np.float32(0.5))
    r = clamped - k * _LN2_HIGH
    r = r - k * _LN2_LOW
    p = np.float32(1.9875691500e-4)
    p = p * r + np.float32(1.3981999507e-3)
    p = p * r + np.float32(8.3334519073e-3)
    p = p * r + np.float32(4.1665795894e-2)
    p = p * r + np.float32(1.6666665459e-1)
    p = p * r + np.float32(5.0000001201e-1)
    value = p * r * r + r + np.float32(1.0)
    # 2^k as two factors, each a normal float32 for every k in [-150, 128] (subnormal results round once, at the end)
    whole = np.int32(k)
    half = whole >> np.int32(1)
    value = value * i32_as_f32((half + np.int32(127)) << np.int32(23))
    value = value * i32_as_f32((whole - half + np.int32(127)) << np.int32(23))
    return value if x == x else x


@njit(nogil=True, cache=True, error_model="numpy")
def exp_into(x, out):
    """out = exp(x), 1-D float32 (x may be out)."""
    for i in range(x.size):
        out[i] = exp32(x[i])
