"""float32 <-> float16 / bfloat16 conversion on bit patterns (numba, nogil).

numba has no float16 or bfloat16 arithmetic, so 16-bit floats travel as uint16 bit patterns and float32 as uint32.
Narrowing rounds to nearest, ties to even, overflows to infinity, keeps subnormals and turns NaN into a quiet NaN
of the same sign. Widening is exact. float64 sources are first reduced to float32 by *round-to-odd*
(`float64_to_float32_round_to_odd`), which makes the following round-to-nearest-even a single correct rounding of
the float64 value (float32 carries more than two extra bits over either 16-bit format).
"""
import numpy as np
from llvmlite import binding as _llvm
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

#: The host converts float32 <-> float16 in hardware (x86 F16C): LLVM's fpext/fptrunc on half values then compile
#: to vector conversion instructions, several times faster than the bit arithmetic (which stays the fallback).
HARDWARE_FLOAT16 = bool(_llvm.get_host_cpu_features().get("f16c", False))


@intrinsic
def _float16_bits_to_float32(typingctx, bits):
    """uint16 float16 bit pattern -> float32 value (exact; the hardware quiets a signalling NaN)."""
    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _float32_to_float16_bits(typingctx, value):
    """float32 value -> uint16 float16 bit pattern, rounded to nearest even (NaN payloads: see the callers)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


@intrinsic
def _float32_bits(typingctx, value):
    """The uint32 bit pattern of a float32 value."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@njit(nogil=True, cache=True)
def _f32bits_to_f16bits(f):
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


def _float16_to_float32_table():
    """float32 bit pattern of every float16 bit pattern, built by bit arithmetic (exact)."""
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


@njit(nogil=True, cache=True)
def narrow_bits_reference(src32, dst16, to_bfloat16):
    """Round float32 bit patterns `src32` (uint32) to float16 or bfloat16 bit patterns `dst16` (uint16), RNE
    (bit arithmetic; `narrow_bits` uses the hardware conversion when the host has one)."""
    n = src32.size
    if to_bfloat16:
        for i in range(n):
            f = src32[i]
            if (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):
                dst16[i] = np.uint16((f >> np.uint32(16)) | np.uint32(0x40))
            else:
                rounding = np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))
                dst16[i] = np.uint16((f + rounding) >> np.uint32(16))
    else:
        for i in range(n):
            dst16[i] = np.uint16(_f32bits_to_f16bits(src32[i]))


@njit(nogil=True, cache=True)
def _narrow_bits_hardware(src32, dst16, to_bfloat16):
    """narrow_bits by branch-free selects (vectorised) and, for float16, the hardware conversion."""
    n = src32.size
    if to_bfloat16:
        for i in range(n):
            f = src32[i]
            nan = (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
            rounded = (f + np.uint32(0x7FFF) + ((f >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
            quiet = (f >> np.uint32(16)) | np.uint32(0x40)
            dst16[i] = np.uint16(quiet if nan else rounded)
    else:
        values = src32.view(np.float32)
        for i in range(n):
            f = src32[i]
            nan = (f & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
            converted = _float32_to_float16_bits(values[i])
            quiet = np.uint16(((f >> np.uint32(16)) & np.uint32(0x8000)) | np.uint32(0x7E00))
            dst16[i] = quiet if nan else converted


@njit(nogil=True, cache=True)
def _widen_float16_hardware(src16, dst32):
    n = src16.size
    for i in range(n):
        h = np.uint32(src16[i])
        converted = _float32_bits(_float16_bits_to_float32(src16[i]))
        nan = (h & np.uint32(0x7FFF)) > np.uint32(0x7C00)  # keep the payload exactly, signalling or not
        exact_nan = ((h & np.uint32(0x8000)) << np.uint32(16)) | np.uint32(0x7F800000) \
            | ((h & np.uint32(0x3FF)) << np.uint32(13))
        dst32[i] = exact_nan if nan else converted


@njit(nogil=True, cache=True)
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
    """widen_bits by the table (the fallback without hardware float16 conversion)."""
    _widen_bits(src16, dst32, from_bfloat16, FLOAT16_TO_FLOAT32_BITS)


def narrow_bits(src32, dst16, to_bfloat16):
    """Round float32 bit patterns `src32` (uint32) to float16 or bfloat16 bit patterns `dst16` (uint16), RNE.
    Overflow gives infinity, NaN a quiet NaN of the same sign (0x7E00 / the bfloat16 top half with the quiet bit)."""
    if HARDWARE_FLOAT16:
        _narrow_bits_hardware(src32, dst16, to_bfloat16)
    else:
        narrow_bits_reference(src32, dst16, to_bfloat16)


def float64_to_float32_round_to_odd(values):
    """float64 array -> float32 array rounded to odd (truncate toward zero, set the last bit when inexact)."""
    nearest = values.astype(np.float32)
    back = nearest.astype(np.float64)
    with np.errstate(invalid="ignore"):
        inexact = back != values
        inexact &= ~np.isnan(values)
        overshoot = inexact & (np.abs(back) > np.abs(values))
    bits = nearest.view(np.uint32)
    bits -= overshoot.astype(np.uint32)  # step the magnitude back toward zero (inf becomes the largest float)
    bits |= inexact.astype(np.uint32)
    return nearest
