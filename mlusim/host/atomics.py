"""Atomic operations on words of (shared) memory, for numba code (and its small Python entry points): cncl's
message counters, and the spin-waits of the host's fork-join team (`mlusim.host.spin`).

cncl's channel counters have one writer each, and x86-64 keeps plain stores and loads in order (TSO), which is all
the messages need. Waking a sleeping waiter without a system call on every store needs more: a waiter announces
itself in the counter's *sleepers* word before it sleeps, and a writer wakes only when it sees a sleeper. That is
a store followed by a load of another word on both sides (Dekker's pattern), which TSO may reorder; the locked
instructions here (`xchg`, `lock xadd`) are full barriers, so either the writer sees the sleeper or the waiter
sees the new value.
"""
from __future__ import annotations

import platform

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def _pointer(context, builder, array_type, array, index):
    data = context.make_array(array_type)(context, builder, array)
    return builder.gep(data.data, [index])


def _integer_array(array) -> bool:
    return isinstance(array, types.Array) and isinstance(array.dtype, types.Integer)


def _sequential_rmw(typingctx, array, index, value, operation):
    """The typing and code of an atomic read-modify-write of array[index] (a full barrier); its old value."""
    if not _integer_array(array):
        return None

    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, signature.args[0], args[0], args[1])
        operand = context.cast(builder, args[2], signature.args[2], array.dtype)
        return builder.atomic_rmw(operation, pointer, operand, "seq_cst")

    return array.dtype(array, types.intp, value), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """array[index] += value atomically (a locked add: atomic across processes on shared memory); the old
    value. A full barrier."""
    return _sequential_rmw(typingctx, array, index, value, "add")


@intrinsic
def exchange(typingctx, array, index, value):
    """array[index] = value with a full barrier (xchg); the old value."""
    return _sequential_rmw(typingctx, array, index, value, "xchg")


@intrinsic
def load(typingctx, array, index):
    """array[index], read from memory every time (an atomic acquire load: never hoisted out of a loop)."""
    if not _integer_array(array):
        return None

    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(pointer, "acquire", array.dtype.bitwidth // 8)

    return array.dtype(array, types.intp), codegen


@intrinsic
def cpu_relax(typingctx):
    """The spin-wait hint (`pause` on x86-64: saves power and lets the sibling hyperthread run)."""

    def codegen(context, builder, signature, args):
        if _X86_64:
            # declared once per module: a function that relaxes in two loops would declare it twice otherwise
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                      "llvm.x86.sse2.pause")
            builder.call(function, [])
        return context.get_dummy_value()

    return types.void(), codegen


@njit(nogil=True, cache=True)
def reached(words, index, target) -> bool:
    """words[index] has reached `target` (counters wrap modulo 2**32)."""
    return ((load(words, index) - target) & 0xFFFFFFFF) < 0x80000000


@njit(nogil=True, cache=True)
def spin_until(words, index, target, rounds) -> bool:
    """Poll words[index] (without the GIL, a pause apart) until it reaches `target`, at most `rounds` times;
    whether it did. Callers yield the CPU between such spins: on a host with more runnable threads than cores the
    peer that will write the word may need this core."""
    for _ in range(rounds):
        if ((load(words, index) - target) & 0xFFFFFFFF) < 0x80000000:
            return True
        cpu_relax()
    return ((load(words, index) - target) & 0xFFFFFFFF) < 0x80000000


@njit(nogil=True, cache=True)
def publish(words, index, value, sleepers) -> int:
    """words[index] = value (full barrier), then the count of announced sleepers (words[sleepers]): the caller
    wakes them when it is not 0."""
    exchange(words, index, value & 0xFFFFFFFF)
    return load(words, sleepers)


@njit(nogil=True, cache=True)
def announce(words, sleepers, delta) -> None:
    """A waiter starts (delta 1) or stops (delta -1) sleeping on a word; a full barrier."""
    fetch_add(words, sleepers, delta)


def warm() -> None:
    """Load (or compile) the functions above now: the first call of compiled code in a process costs about a
    second, which must not fall into a collective's wait for its peers."""
    import numpy as np

    words = np.zeros(4, np.uint32)
    publish(words, 0, 1, 1)
    announce(words, 1, 1)
    announce(words, 1, -1)
    spin_until(words, 0, 1, 1)
