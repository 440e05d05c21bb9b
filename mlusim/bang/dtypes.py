"""Element types of BANG buffers: float32, half, bfloat16 and the integer types, as numba-visible tokens.

Numba has no half or bfloat16 arithmetic, so both are stored as uint16 bit patterns and converted to float32 for
compute with the rounding of the stored type (round to nearest even), as the MLU's vector units do: the device's
conversions, `mlusim.numerics.float16`.
`load(ptr_base, i)` and `store(ptr_base, i, value)` read and write one element as float32 (or int for integers) and
are what every intrinsic is written with.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.core.imputils import lower_constant
from numba.extending import NativeValue, models, register_model, typeof_impl, unbox

import ml_dtypes

# the conversions of the 16-bit element types (the device's: mlusim.numerics.float16), which code generated for BANG
# element types imports from here
from ..numerics.float16 import bfloat16_to_f32, f32_to_bfloat16, f32_to_half, half_to_f32  # noqa: F401


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
