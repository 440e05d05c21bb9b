"""Bit casts in compiled code: the bits of a scalar as a scalar of another type of the same width (numba has no
`view` of a scalar). Each is an LLVM bitcast, free after compilation."""
from __future__ import annotations

from numba import types
from numba.extending import intrinsic


def bitcast(source, target):
    """An intrinsic reinterpreting the bits of a `source` numba scalar as a `target` scalar of the same width."""

    @intrinsic
    def cast(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return target(source), codegen

    return cast


#: the uint32 bit pattern of a float32, and back
f32_bits = bitcast(types.float32, types.uint32)
bits_f32 = bitcast(types.uint32, types.float32)
#: the same as int32 (signed arithmetic on the pattern: order keys, exponent tricks)
f32_as_i32 = bitcast(types.float32, types.int32)
i32_as_f32 = bitcast(types.int32, types.float32)
#: the int64 bit pattern of a float64, and back
f64_as_i64 = bitcast(types.float64, types.int64)
i64_as_f64 = bitcast(types.int64, types.float64)
