"""The zero-copy reduction kernel: rank-order reduction of several inputs into several outputs, a cache line at a
time, with ordinary or non-temporal (streaming) stores.

Each 64-byte line of every input is loaded into a vector register, the lines are combined in rank order, and the
result is stored into every output: N bytes read and N written per output, no intermediate buffer, and every
input line is read before any output line at the same offset is written (so an output may be an input: in place).

A result much bigger than the caches is best written with streaming stores: whole lines go to memory through the
write-combining buffers without being read first and without evicting the inputs from the caches. Measured on this
project's 2-core x86-64 host, two threads each reducing two 32 MiB inputs into two outputs (numba, shared-memory
buffers): 9.8-11.7 ms with the earlier kernel (an L1 block copied out by `rep movsb`), 8.0-9.1 ms with this one
and ordinary stores, 6.3-6.4 ms with streaming stores (a single-thread numpy copy of 64 MiB: 5.8-5.9 ms). Streaming stores are weakly ordered: a data phase that used them ends
with store_fence() (or fence() from Python), so the data is visible before a peer is told it is there.

The lines are LLVM vector operations generated here (numba cannot hold a vector in a variable): sum and product
are plain adds and multiplies (integers wrap; floats are not reassociated, so results are numpy's bit for bit), max
and min are compare-and-select with numpy's NaN propagation.
"""
from __future__ import annotations

import platform

import llvmlite.binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: Bytes of one vector line; streaming stores are aligned to it.
LINE = 64
SUM, PROD, MAX, MIN = 0, 1, 2, 3  # cnclSum, cnclProd, cnclMax, cnclMin
_X86_64 = platform.machine().lower() in ("x86_64", "amd64")
if _X86_64:
    llvm.initialize_native_asmparser()  # numba's LLVM compiles inline assembly only with it

_BYTE_POINTER = ir.IntType(8).as_pointer()


def _combine_vectors(builder, op: int, dtype, left, right):
    """left op right, elementwise, for numba dtype `dtype`; max/min keep NaN from either side (numpy)."""
    floating = isinstance(dtype, types.Float)
    if op == SUM:
        return builder.fadd(left, right) if floating else builder.add(left, right)
    if op == PROD:
        return builder.fmul(left, right) if floating else builder.mul(left, right)
    if floating:  # left if (left >= right or left != left) else right, as the scalar kernels do
        keep = builder.or_(builder.fcmp_ordered(">=" if op == MAX else "<=", left, right),
                           builder.fcmp_unordered("uno", left, left))
    else:
        relation = (">=" if op == MAX else "<=")
        compare = builder.icmp_signed if dtype.signed else builder.icmp_unsigned
        keep = compare(relation, left, right)
    return builder.select(keep, left, right)


@intrinsic
def _reduce_line(typingctx, inputs, outputs, byte_offset, op, streaming):
    """For the line at `byte_offset` of every array: outputs[j] = ((inputs[0] op inputs[1]) op ...), with
    non-temporal stores when `streaming` (the outputs' line addresses must then be LINE-aligned)."""
    if not (isinstance(inputs, types.BaseTuple) and isinstance(outputs, types.BaseTuple) and len(inputs) >= 1):
        return None
    dtype = inputs[0].dtype
    if not (isinstance(dtype, (types.Integer, types.Float))
            and all(isinstance(a, types.Array) and a.dtype == dtype and a.ndim == 1 and a.layout == "C"
                    for a in (*inputs, *outputs))):
        return None  # the line loads and stores need contiguous 1-D integer or float arrays of one dtype

    def codegen(context, builder, signature, args):
        in_types, out_types = signature.args[0], signature.args[1]
        element = context.get_data_type(dtype)
        lanes = LINE // context.get_abi_sizeof(element)
        vector_pointer = ir.VectorType(element, lanes).as_pointer()

        def line_of(array_type, array):
            data = context.make_array(array_type)(context, builder, array).data
            return builder.bitcast(builder.gep(builder.bitcast(data, _BYTE_POINTER), [args[2]]), vector_pointer)

        loaded = [builder.load(line_of(t, a), align=1)
                  for t, a in zip(in_types, cgutils.unpack_tuple(builder, args[0]))]
        targets = [line_of(t, a) for t, a in zip(out_types, cgutils.unpack_tuple(builder, args[1]))]
        nontemporal = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        switch_end = builder.append_basic_block("reduce_line.end")
        switch = builder.switch(args[3], switch_end)
        for op_value in (SUM, PROD, MAX, MIN):
            block = builder.append_basic_block(f"reduce_line.op{op_value}")
            switch.add_case(ir.Constant(args[3].type, op_value), block)
            builder.position_at_end(block)
            result = loaded[0]
            for value in loaded[1:]:
                result = _combine_vectors(builder, op_value, dtype, result, value)
            with builder.if_else(args[4]) as (streamed, cached):
                with streamed:
                    for target in targets:
                        builder.store(result, target, align=LINE).set_metadata("nontemporal", nontemporal)
                with cached:
                    for target in targets:
                        builder.store(result, target, align=1)
            builder.branch(switch_end)
        builder.position_at_end(switch_end)
        return context.get_dummy_value()

    return types.void(inputs, outputs, types.intp, types.intp, types.boolean), codegen


@intrinsic
def address_of(typingctx, array):
    """The address of the array's first element."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        return builder.ptrtoint(data, ir.IntType(64))

    return types.intp(array), codegen


@intrinsic
def store_fence(typingctx):
    """Make every earlier store (streaming stores too) visible before any later one: `sfence` on x86-64."""
    def codegen(context, builder, signature, args):
        if _X86_64:
            kind = ir.FunctionType(ir.VoidType(), [])
            builder.call(ir.InlineAsm(kind, "sfence", "~{memory}", side_effect=True), [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


@njit(nogil=True, cache=True)
def _combine_scalar(left, right, op):
    if op == SUM:
        return left + right
    if op == PROD:
        return left * right
    if op == MAX:
        return left if (left >= right or left != left) else right
    return left if (left <= right or left != left) else right


@njit(nogil=True, cache=True)
def _reduce_elements(inputs, outputs, op, start, stop):
    """The same as the line kernel, element by element (the ragged ends of a range)."""
    for i in range(start, stop):
        value = inputs[0][i]
        for k in range(1, len(inputs)):
            value = _combine_scalar(value, inputs[k][i], op)
        for j in range(len(outputs)):
            outputs[j][i] = value


@njit(nogil=True, cache=True)
def streamable(outputs) -> bool:
    """Whether streaming stores can write all outputs: their addresses agree modulo LINE, on an element
    boundary."""
    item = outputs[0].itemsize
    phase = address_of(outputs[0]) % LINE
    if phase % item:
        return False
    for j in range(1, len(outputs)):
        if address_of(outputs[j]) % LINE != phase:
            return False
    return True


@njit(nogil=True, cache=True)
def reduce_range(inputs, outputs, op, start, stop, streaming):
    """outputs[j][start:stop] = rank-order reduction of inputs[k][start:stop] (same dtype, 1-D, contiguous, same
    length; an output may be an input). `streaming` (only where streamable(outputs)): non-temporal stores; call
    store_fence() before telling anyone the results are there."""
    if op < SUM or op > MIN:
        raise ValueError("reduce_range: op must be SUM, PROD, MAX or MIN")
    item = inputs[0].itemsize
    first = start
    if streaming:  # elements before the outputs' first LINE boundary
        first = min(start + ((-(address_of(outputs[0]) + start * item)) % LINE) // item, stop)
    _reduce_elements(inputs, outputs, op, start, first)
    offset = first * item
    for _ in range((stop - first) * item // LINE):
        _reduce_line(inputs, outputs, offset, op, streaming)
        offset += LINE
    _reduce_elements(inputs, outputs, op, offset // item, stop)


@njit(nogil=True, cache=True)
def copy_bytes(target, source, streaming):
    """target[:] = source[:] (uint8, same size, no overlap) through the line kernel, then a store fence."""
    reduce_range((source,), (target,), SUM, 0, target.size, streaming)
    store_fence()


@njit(nogil=True, cache=True)
def fence():
    """store_fence() for Python callers."""
    store_fence()
