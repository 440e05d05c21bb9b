"""Raw byte moves and fills on host addresses, for compiled code whose caller has already checked the ranges."""
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def raw_move(typingctx, dst, src, nbytes):
    """memmove(dst, src, nbytes)."""
    def codegen(context, builder, sig, args):
        dst_ptr = builder.inttoptr(args[0], cgutils.voidptr_t)
        src_ptr = builder.inttoptr(args[1], cgutils.voidptr_t)
        cgutils.raw_memmove(builder, dst_ptr, src_ptr, args[2], 1)
        return context.get_dummy_value()
    return types.void(types.intp, types.intp, types.intp), codegen


@intrinsic
def raw_fill(typingctx, dst, nbytes, byte):
    """memset(dst, byte, nbytes)."""
    def codegen(context, builder, sig, args):
        dst_ptr = builder.inttoptr(args[0], cgutils.voidptr_t)
        value = builder.trunc(args[2], cgutils.int8_t)
        cgutils.memset(builder, dst_ptr, args[1], value)
        return context.get_dummy_value()
    return types.void(types.intp, types.intp, types.intp), codegen
