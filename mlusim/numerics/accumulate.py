"""Accumulation that a compiled reduction loop may vectorise: one addition (or product) marked reassociable, so LLVM
keeps partial results in vector lanes, as PyTorch's CPU reductions do; every other operation of the kernel keeps
IEEE order and NaN/inf rules."""
from __future__ import annotations

from numba import types
from numba.extending import intrinsic


@intrinsic
def acc_add(typingctx, acc, value):
    """acc + value with LLVM's `reassoc` flag on this one addition (floats of one type)."""
    if acc != value or not isinstance(acc, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1], flags=("reassoc", "nsz"))
    return acc(acc, value), codegen


@intrinsic
def acc_mul(typingctx, acc, value):
    """acc * value with the `reassoc` flag (products accumulated over a reduction loop)."""
    if acc != value or not isinstance(acc, types.Float):
        return None

    def codegen(context, builder, signature, args):
        return builder.fmul(args[0], args[1], flags=("reassoc", "nsz"))
    return acc(acc, value), codegen
