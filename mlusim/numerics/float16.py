"""float16 and bfloat16 storage: conversions to and from float32 in compiled code, one element or whole arrays.

numba has no float16 or bfloat16 arithmetic, so 16-bit floats travel as uint16 bit patterns and are computed in
float32, as the MLU's vector units compute them. The rules, the same for every caller (BANG intrinsics, cnnl's
casts, the kernels torch.compile generates):
- widening is exact, a NaN keeps its payload bits (signalling or not);
- narrowing rounds to nearest, ties to even, overflows to infinity and keeps subnormals; a NaN becomes the quiet
  NaN of its sign (float16 0x7E00 | sign; bfloat16 the float32's top half with the quiet bit set).
The host converts float32 <-> float16 in hardware where it can (x86 F16C: LLVM's fpext/fptrunc on half values
compile to vector conversion instructions, several times faster than bit arithmetic, which stays the fallback and
the reference the tests compare it with).

float64 sources are first reduced to float32 by *round-to-odd* (`float64_to_float32_round_to_odd`), which makes the
following round-to-nearest-even a single correct rounding of the float64 value (float32 carries more than two extra
bits over either 16-bit format).
"""
from __future__ import annotations

import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .bitcast import bits_f32, f32_bits

#: the host converts float32 <-> float16 in hardware (x86 F16C)
HARDWARE_FLOAT16 = bool(_llvm.get_host_cpu_features().get("f16c", False))

_SCALAR = dict(nogil=True, cache=True)


@intrinsic
def _fpext_half(typingctx, bits):
    """uint16 float16 bit pattern -> float32 by the host's conversion (exact; it may quiet a signalling NaN)."""
    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _fptrunc_half(typingctx, value):
    """float32 -> uint16 float16 bit pattern by the host's conversion, round to nearest even (NaN payloads: see
    the callers)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


# ---- bit arithmetic (the reference, and the path of hosts without hardware conversion) -----------------------------

@njit(**_SCALAR)
def f32bits_to_f16bits(f):
    """The float16 bit pattern (as uint32) of the float32 bit pattern `f` (uint32): round to nearest even."""
    sign = (f >> np.uint32(16)) & np.uint32(0x8000)
    f = f & np.uint32(0x7FFFFFFF)
    if f >= np.uint32(0x7F800000):  # inf or NaN
        if f > np.uint32(0x7F800000):
            return sign | np.uint32(0x7E00)
        return sign | np.uint32(0x7C00)
    if f >= np.uint32(0x47800000):  # >= 65536: past the largest finite half after rounding
        return sign | np.uint32(0x7C00)
    if f >= np.uint32(0x38800000):  # normal half: rebias the exponent, round off 13 mantissa bits
        base = (f >> np.uint32(13)) - np.uint32(112 << 10)
        rest = f & np.uint32(0x1FFF)
        if rest > np.uint32(0x1000) or (rest == np.uint32(0x1000) and (base & np.uint32(1))):
            base += np.uint32(1)  # a carry into the exponent is the correct rounding, up to infinity
        return sign | base
    if f <= np.uint32(0x33000000):  # <= 2**-25: rounds to zero (2**-25 itself is a tie, to even 0)
        return sign
    exponent = f >> np.uint32(23)
    mantissa = (f & np.uint32(0x7FFFFF)) | np.uint32(0x800000)
    shift = np.uint32(126) - exponent  # 14..24: the half subnormal keeps mantissa >> shift
    base = mantissa >> shift
    rest = mantissa & ((np.uint32(1) << shift) - np.uint32(1))
    halfway = np.uint32(1) << (shift - np.uint32(1))
    if rest > halfway or (rest == halfway and (base & np.uint32(1))):
        base += np.uint32(1)
    return sign | base


@njit(**_SCALAR)
def f16bits_to_f32bits(bits):
    """The float32 bit pattern (uint32) of the float16 bit pattern `bits`: exact, NaN payloads kept."""
    h = np.uint32(bits)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    exponent = (h >> np.uint32(10)) & np.uint32(0x1F)
    mantissa = h & np.uint32(0x3FF)
    if exponent == np.uint32(0x1F):
        return sign | np.uint32(0x7F800000) | (mantissa << np.uint32(13))
    if exponent == np.uint32(0):
        magnitude = np.float32(mantissa) * np.float32(2.0 ** -24)  # subnormal: m * 2**-24, exact in float32
        return sign | f32_bits(magnitude)
    return sign | ((exponent + np.uint32(112)) << np.uint32(23)) | (mantissa << np.uint32(13))


# ---- one element ---------------------------------------------------------------------------------------------------

if HARDWARE_FLOAT16:
    @njit(**_SCALAR)
    def half_to_f32(bits):
        """float16 bit pattern -> float32 (exact; a NaN keeps its payload)."""
        h = np.uint32(np.uint16(bits))
        converted = _fpext_half(np.uint16(h))
        exact_nan = bits_f32(((h & np.uint32(0x8000)) << np.uint32(16)) | np.uint32(0x7F800000)
                             | ((h & np.uint32(0x3FF)) << np.uint32(13)))
        return exact_nan if (h & np.uint32(0x7FFF)) > np.uint32(0x7C00) else converted

    @njit(**_SCALAR)
    def f32_to_half(value):
        """float32 -> float16 bit pattern, round to nearest even (overflow to inf, NaN the quiet NaN of its sign)."""
        v = np.float32(value)
        f = f32_bits(v)
        converted = _fptrunc_half(v)
        quiet = np.uint16(((f >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7E00))
        return quiet if (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000) else converted
else:  # pragma: no cover - hosts without F16C
    @njit(**_SCALAR)
    def half_to_f32(bits):
        """float16 bit pattern -> float32 (exact; a NaN keeps its payload)."""
        return bits_f32(f16bits_to_f32bits(bits))

    @njit(**_SCALAR)
    def f32_to_half(value):
        """float32 -> float16 bit pattern, round to nearest even (overflow to inf, NaN the quiet NaN of its sign)."""
        return np.uint16(f32bits_to_f16bits(f32_bits(np.float32(value))))


@njit(**_SCALAR)
def bfloat16_to_f32(bits):
    """bfloat16 bit pattern -> float32 (exact)."""
    return bits_f32(np.uint32(np.uint16(bits)) << np.uint32(16))


@njit(**_SCALAR)
def f32_to_bfloat16(value):
    """float32 -> bfloat16 bit pattern, round to nearest even; a NaN stays a quiet NaN of the same sign."""
    f = f32_bits(np.float32(value))
    quiet = (f >> np.uint32(16)) | np.uint32(0x40)
    rounded = (f + np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    return np.uint16(quiet if (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000) else rounded)


@njit(**_SCALAR)
def round_half(value):
    """A float32 value rounded to the nearest float16, kept as float32 (a cast to half in float32 compute)."""
    return half_to_f32(f32_to_half(value))


@njit(**_SCALAR)
def round_bfloat16(value):
    """A float32 value rounded to the nearest bfloat16, kept as float32."""
    return bfloat16_to_f32(f32_to_bfloat16(value))


# ---- whole arrays --------------------------------------------------------------------------------------------------

def _float16_to_float32_table():
    """float32 bit pattern of every float16 bit pattern, built by numpy bit arithmetic (exact)."""
    h = np.arange(1 << 16, dtype=np.uint32)
    sign = (h & 0x8000) << 16
    exponent = (h >> 10) & 0x1F
    mantissa = h & 0x3FF
    normal = sign | ((exponent + 112) << 23) | (mantissa << 13)
    special = sign | np.uint32(0x7F800000) | (mantissa << 13)  # inf, NaN with its payload
    subnormal = sign | (mantissa.astype(np.float32) * np.float32(2.0 ** -24)).view(np.uint32)
    table = np.where(exponent == 0x1F, special, np.where(exponent == 0, subnormal, normal)).astype(np.uint32)
    table.flags.writeable = False
    return table


FLOAT16_TO_FLOAT32_BITS = _float16_to_float32_table()


@njit(**_SCALAR)
def narrow_bits_reference(src32, dst16, to_bfloat16):
    """Round float32 bit patterns `src32` (uint32) to float16 or bfloat16 bit patterns `dst16` (uint16) by bit
    arithmetic (`narrow_bits` uses the hardware conversion when the host has one)."""
    n = src32.size
    if to_bfloat16:
        for i in range(n):
            dst16[i] = f32_to_bfloat16(bits_f32(src32[i]))
    else:
        for i in range(n):
            dst16[i] = np.uint16(f32bits_to_f16bits(src32[i]))


@njit(**_SCALAR)
def _narrow_bits(src32, dst16, to_bfloat16):
    """narrow_bits by the one-element conversions (branch-free selects: the loops vectorise)."""
    n = src32.size
    values = src32.view(np.float32)
    if to_bfloat16:
        for i in range(n):
            dst16[i] = f32_to_bfloat16(values[i])
    else:
        for i in range(n):
            dst16[i] = f32_to_half(values[i])


@njit(**_SCALAR)
def _widen_float16_hardware(src16, dst32):
    n = src16.size
    for i in range(n):
        dst32[i] = f32_bits(half_to_f32(src16[i]))


@njit(**_SCALAR)
def _widen_bits(src16, dst32, from_bfloat16, float16_table):
    n = src16.size
    if from_bfloat16:
        for i in range(n):
            dst32[i] = np.uint32(src16[i]) << np.uint32(16)
    else:  # a 256 KiB table lookup beats the branchy bit arithmetic several times over
        for i in range(n):
            dst32[i] = float16_table[src16[i]]


def widen_bits(src16, dst32, from_bfloat16):
    """Convert float16 or bfloat16 bit patterns `src16` (uint16) exactly to float32 bit patterns `dst32` (uint32)."""
    if HARDWARE_FLOAT16 and not from_bfloat16:
        _widen_float16_hardware(src16, dst32)
    else:
        _widen_bits(src16, dst32, from_bfloat16, FLOAT16_TO_FLOAT32_BITS)


def widen_bits_reference(src16, dst32, from_bfloat16):
    """widen_bits by the table (the path of hosts without hardware float16 conversion)."""
    _widen_bits(src16, dst32, from_bfloat16, FLOAT16_TO_FLOAT32_BITS)


def narrow_bits(src32, dst16, to_bfloat16):
    """Round float32 bit patterns `src32` (uint32) to float16 or bfloat16 bit patterns `dst16` (uint16), RNE.
    Overflow gives infinity, NaN the quiet NaN of its sign."""
    if HARDWARE_FLOAT16 or to_bfloat16:
        _narrow_bits(src32, dst16, to_bfloat16)
    else:
        narrow_bits_reference(src32, dst16, to_bfloat16)


def float64_to_float32_round_to_odd(values):
    """float64 array -> float32 array rounded to odd (truncate toward zero, set the last bit when inexact)."""
    with np.errstate(invalid="ignore", over="ignore"):  # beyond float32's range is inf, as in any cast
        nearest = values.astype(np.float32)
        back = nearest.astype(np.float64)
        inexact = back != values
        inexact &= ~np.isnan(values)
        overshoot = inexact & (np.abs(back) > np.abs(values))
    bits = nearest.view(np.uint32)
    bits -= overshoot.astype(np.uint32)  # step the magnitude back toward zero (inf becomes the largest float)
    bits |= inexact.astype(np.uint32)
    return nearest
