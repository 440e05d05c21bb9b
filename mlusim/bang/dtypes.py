"""Element types of BANG buffers: float32, half, bfloat16 and the integer types, as numba-visible tokens.

Numba has no half or bfloat16 arithmetic, so both are stored as uint16 bit patterns and converted to float32 for
compute with the rounding of the stored type (round to nearest even), as the MLU's vector units do.
`load(ptr_base, i)` and `store(ptr_base, i, value)` read and write one element as float32 (or int for integers) and
are what every intrinsic is written with.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core.imputils import lower_constant
from numba.extending import NativeValue, intrinsic, models, register_jitable, register_model, typeof_impl, unbox

import ml_dtypes


class ElementType:
    """A BANG element type (`float`, `half`, `bfloat16`, `int32_t`, ...); pass it to bang.nram/wram/sram/gdram."""

    __slots__ = ("kind", "storage", "itemsize", "host_dtype", "is_float", "_numba_type")

    def __init__(self, kind: str, storage, host_dtype):
        self.kind = kind
        self.storage = np.dtype(storage)
        self.itemsize = self.storage.itemsize
        self.host_dtype = np.dtype(host_dtype)
        self.is_float = kind in ("float32", "half", "bfloat16")
        self._numba_type = ElementTypeToken(kind)

    def __repr__(self) -> str:
        return f"bang.{self.kind}"

    def __reduce__(self):
        return (by_kind, (self.kind,))


class ElementTypeToken(types.Dummy):
    """The numba type of an ElementType constant; the kind is known at compile time."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(name=f"bang.{kind}")


register_model(ElementTypeToken)(models.OpaqueModel)


@typeof_impl.register(ElementType)
def _typeof_element_type(value, context):
    return value._numba_type


@unbox(ElementTypeToken)
def _unbox_element_type(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


@lower_constant(ElementTypeToken)
def _lower_element_type(context, builder, typ, value):
    return context.get_dummy_value()


float32 = ElementType("float32", np.float32, np.float32)
half = ElementType("half", np.uint16, np.float16)
bfloat16 = ElementType("bfloat16", np.uint16, ml_dtypes.bfloat16)
int32 = ElementType("int32", np.int32, np.int32)
int16 = ElementType("int16", np.int16, np.int16)
int8 = ElementType("int8", np.int8, np.int8)
uint8 = ElementType("uint8", np.uint8, np.uint8)

ELEMENT_TYPES = {t.kind: t for t in (float32, half, bfloat16, int32, int16, int8, uint8)}
STORAGE = {kind: t.storage for kind, t in ELEMENT_TYPES.items()}


def by_kind(kind: str) -> ElementType:
    return ELEMENT_TYPES[kind]


def of_host_dtype(dtype) -> ElementType:
    """The ElementType whose host (numpy / ml_dtypes) dtype is `dtype`."""
    dtype = np.dtype(dtype)
    for t in ELEMENT_TYPES.values():
        if t.host_dtype == dtype:
            return t
    raise TypeError(f"no BANG element type for numpy dtype {dtype}")


# ---- bit casts and float32 <-> half / bfloat16 rounding (compiled code) -----------------------------------------

@intrinsic
def f32_bits(typingctx, value):
    """The uint32 bit pattern of a float32."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def bits_f32(typingctx, bits):
    """The float32 whose bit pattern is a uint32."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


@register_jitable
def bfloat16_to_f32(bits):
    """bfloat16 bits -> float32 (exact)."""
    return bits_f32(np.uint32(np.uint32(bits) << np.uint32(16)))


@register_jitable
def f32_to_bfloat16(value):
    """float32 -> bfloat16 bits, round to nearest even; NaN stays NaN."""
    b = np.int64(f32_bits(np.float32(value)))
    if (b & 0x7FFFFFFF) > 0x7F800000:
        return np.uint16((b >> 16) | 0x40)
    return np.uint16((b + 0x7FFF + ((b >> 16) & 1)) >> 16)


@register_jitable
def half_to_f32(bits):
    """IEEE half bits -> float32 (exact)."""
    h = np.int64(bits)
    sign = (h & 0x8000) << 16
    exponent = (h >> 10) & 0x1F
    mantissa = h & 0x3FF
    if exponent == 0:
        magnitude = np.float32(mantissa) * np.float32(5.960464477539063e-08)  # subnormal: m * 2**-24
        return -magnitude if sign else magnitude
    if exponent == 0x1F:
        return bits_f32(np.uint32(sign | 0x7F800000 | (mantissa << 13)))
    return bits_f32(np.uint32(sign | ((exponent + 112) << 23) | (mantissa << 13)))


@register_jitable
def f32_to_half(value):
    """float32 -> IEEE half bits, round to nearest even, overflow to infinity."""
    b = np.int64(f32_bits(np.float32(value)))
    sign = (b >> 16) & 0x8000
    exponent = (b >> 23) & 0xFF
    mantissa = b & 0x7FFFFF
    if exponent == 0xFF:
        return np.uint16(sign | 0x7C00 | (0x200 if mantissa else 0))
    e16 = exponent - 112
    if e16 >= 0x1F:
        return np.uint16(sign | 0x7C00)
    if e16 <= 0:
        if e16 < -10:
            return np.uint16(sign)
        mantissa |= 0x800000
        shift = 14 - e16
        kept = mantissa >> shift
        rest = mantissa & ((1 << shift) - 1)
        halfway = 1 << (shift - 1)
        if rest > halfway or (rest == halfway and (kept & 1)):
            kept += 1
        return np.uint16(sign | kept)
    out = sign | (e16 << 10) | (mantissa >> 13)
    rest = mantissa & 0x1FFF
    if rest > 0x1000 or (rest == 0x1000 and (out & 1)):
        out += 1  # a carry into the exponent is the correct rounding (up to infinity)
    return np.uint16(out)
