"""The access log of a BANG launch under the sanitizer: which GDRAM and SRAM bytes each task read and wrote, and
how many barriers it had passed when it did.

Recording happens in compiled code, at each DMA (`memcpy`, `memcpy_strided`, `memcpy_async`) and each element
access `p[i]` of a GDRAM or SRAM pointer, into the worker's state row: its header slots below, then entries of four
int64 (first host byte, end host byte, task << 8 | space << 1 | write, barriers: sync_all count << 32 | count of
all barriers). An access that extends one of the last entries of the same task, kind and barrier count widens it
instead, so loops over contiguous memory stay one entry. A full log counts what it drops (the launch then reports
it). With the sanitizer off the capacity slot is 0 and each access costs one test.

An element access has no task context, so a GDRAM or SRAM pointer carries the address of its worker's state row in
`Ptr.log` (0: not recorded); the launcher gives each worker its own copies of the pointer arguments.
"""
from __future__ import annotations

import numpy as np
from numba import types
from llvmlite import ir
from numba.extending import intrinsic, register_jitable

# ---- slots of the state row (see mlusim/bang/context.py for the rest of its layout) -------------------------------
SYNCS_ALL = 7          # sync_all barriers the current task passed (reset per task while recording)
SYNCS_ANY = 31         # barriers of either kind the current task passed (reset per task while recording)
LOG_CAPACITY = 42      # entries the log holds; 0: not recording
LOG_COUNT = 43         # entries used
LOG_TASK = 44          # taskId of the task the worker runs
LOG_DROPPED = 45       # accesses that did not fit
ENTRIES = 240          # first slot of entry 0 (the width of the state row without a log)
ENTRY_WIDTH = 4
#: Entries checked for widening before a new one is added.
MERGE_WINDOW = 4
#: The memory spaces recorded (their numbers in mlusim.bang.pointer).
GDRAM_SPACE, SRAM_SPACE = 0, 3


@intrinsic
def _load(typingctx, address, slot):
    """The int64 at address + 8 * slot."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.load(builder.gep(base, [args[1]]))
    return types.int64(types.intp, types.intp), codegen


@intrinsic
def _store(typingctx, address, slot, value):
    """Store value at address + 8 * slot."""
    def codegen(context, builder, sig, args):
        base = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        builder.store(args[2], builder.gep(base, [args[1]]))
        return context.get_dummy_value()
    return types.void(types.intp, types.intp, types.int64), codegen


@register_jitable
def note(log, first, nbytes, space, write):
    """Record that the current task of the state row at address `log` touched host bytes [first, first + nbytes)
    of memory space `space` (GDRAM or SRAM); nothing when the row is not recording."""
    if log == 0 or nbytes <= 0:
        return
    capacity = _load(log, LOG_CAPACITY)
    if capacity == 0:
        return
    flags = (_load(log, LOG_TASK) << 8) | (space << 1) | (1 if write else 0)
    epoch = (_load(log, SYNCS_ALL) << 32) | _load(log, SYNCS_ANY)
    end = first + nbytes
    count = _load(log, LOG_COUNT)
    oldest = count - MERGE_WINDOW if count > MERGE_WINDOW else 0
    for index in range(count - 1, oldest - 1, -1):
        slot = ENTRIES + ENTRY_WIDTH * index
        if _load(log, slot + 2) == flags and _load(log, slot + 3) == epoch:
            low, high = _load(log, slot), _load(log, slot + 1)
            if first <= high and end >= low:
                _store(log, slot, min(first, low))
                _store(log, slot + 1, max(end, high))
                return
    if count >= capacity:
        _store(log, LOG_DROPPED, _load(log, LOG_DROPPED) + 1)
        return
    slot = ENTRIES + ENTRY_WIDTH * count
    _store(log, slot, first)
    _store(log, slot + 1, end)
    _store(log, slot + 2, flags)
    _store(log, slot + 3, epoch)
    _store(log, LOG_COUNT, count + 1)


@register_jitable
def note_copy(ctx, dst_space, dst, src_space, src, nbytes):
    """Record a DMA of `nbytes` from host address src to dst (spaces of mlusim.bang.pointer)."""
    if ctx.state[LOG_CAPACITY] == 0:
        return
    log = ctx.state.ctypes.data
    if dst_space == GDRAM_SPACE or dst_space == SRAM_SPACE:
        note(log, dst, nbytes, dst_space, True)
    if src_space == GDRAM_SPACE or src_space == SRAM_SPACE:
        note(log, src, nbytes, src_space, False)


@register_jitable
def row_address(ctx):
    """What an SRAM pointer made by this task carries in Ptr.log: its state row's address while recording."""
    if ctx.state[LOG_CAPACITY] == 0:
        return 0
    return ctx.state.ctypes.data


# ---- the launcher's side (Python) ---------------------------------------------------------------------------------

def prepare(arenas, capacity: int) -> None:
    """Give every worker's state row room for `capacity` entries and start recording."""
    width = ENTRIES + ENTRY_WIDTH * capacity
    for arena in arenas:
        if arena.state.size < width:
            grown = np.zeros(width, dtype=np.int64)
            grown[:ENTRIES] = arena.state[:ENTRIES]
            arena.state = grown
        arena.state[LOG_CAPACITY] = capacity
        arena.state[LOG_COUNT] = 0
        arena.state[LOG_DROPPED] = 0


def begin_task(state: np.ndarray, task: int) -> None:
    """The worker with this state row starts task `task`: its barrier counts start from 0."""
    state[LOG_TASK] = task
    state[SYNCS_ALL] = 0
    state[SYNCS_ANY] = 0


def entries(arenas) -> tuple[np.ndarray, int]:
    """Every recorded entry of the workers ((n, 4) int64) and the count of accesses dropped; stops recording."""
    parts, dropped = [], 0
    for arena in arenas:
        state = arena.state
        if state.size <= ENTRIES or state[LOG_CAPACITY] == 0:
            continue
        count = int(state[LOG_COUNT])
        parts.append(state[ENTRIES:ENTRIES + ENTRY_WIDTH * count].reshape(count, ENTRY_WIDTH).copy())
        dropped += int(state[LOG_DROPPED])
        state[LOG_CAPACITY] = 0
    if not parts:
        return np.zeros((0, ENTRY_WIDTH), dtype=np.int64), dropped
    return np.concatenate(parts), dropped
