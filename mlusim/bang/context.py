"""The per-task context a kernel receives as its first argument, and on-chip buffer allocation.

`ctx` carries the BANG built-ins (taskIdX/Y/Z, taskDimX/Y/Z, taskId, taskDim, clusterId, clusterDim, coreId, coreDim),
the core's NRAM and WRAM arenas, its cluster's SRAM arena, a per-worker `state` row (allocation cursors, work
counters, pending async copies) and the launch-wide `limits` row. Buffers are carved from an arena by bumping a
cursor: `bang.nram(ctx, "x_tile", bang.float32, 4096)` is `__nram__ float x_tile[4096];`. Every task that declares
the same SRAM buffers in the same order gets the same addresses, as static `__mlu_shared__` declarations do.
"""
from __future__ import annotations

from collections import namedtuple

from numba.extending import overload, register_jitable

from . import accesslog
from .caching import jit
from .dtypes import ELEMENT_TYPES
from .faults import KernelTrap
from .cancel import poll
from .raw import raw_fill
from .pointer import NRAM, SPACE_NAMES, SRAM, WRAM, make_ptr, text

Ctx = namedtuple("Ctx", ("taskIdX", "taskIdY", "taskIdZ", "taskDimX", "taskDimY", "taskDimZ", "taskId", "taskDim",
                         "clusterId", "clusterDim", "coreId", "coreDim", "nram", "wram", "sram", "state", "limits"))

#: Byte alignment of every on-chip buffer (the vector units' address alignment).
BUFFER_ALIGN = 64

# ---- layout of the `state` row (int64) ---------------------------------------------------------------------------
CURSOR = 0                  # CURSOR + space: bytes allocated so far by the current task in NRAM / WRAM / SRAM
PENDING_COUNT = 4           # async copies issued and not yet synchronised
TASK_MARK = 5               # taskId + 1 of the task the cursors belong to (0: none yet)
SRAM_HIGH = 6               # most SRAM bytes any task on this row allocated (to re-poison shared SRAM)
COPY_BYTES = 8              # COPY_BYTES + direction: bytes moved per memcpy direction (23 directions)
COPY_COUNT = 32             # number of memcpy calls
VECTOR_ELEMENTS = 33        # elements processed by vector intrinsics
MACS = 34                   # MACS + kind index: multiply-accumulates by input element kind (7 kinds)
BARRIERS = 41               # barriers passed
PENDING = 48                # PENDING + 3*i: (dst address, src address, bytes) of pending async copy i
MAX_PENDING = 64
STATE_WIDTH = PENDING + 3 * MAX_PENDING
# slots 7, 31 and 42..45 and the entries from STATE_WIDTH on: the sanitizer's access log (mlusim.bang.accesslog)
assert accesslog.ENTRIES == STATE_WIDTH

# ---- layout of the `limits` row (int64) --------------------------------------------------------------------------
CAPACITY = 0                # CAPACITY + space: usable bytes of NRAM / WRAM / SRAM
ADDRESS_ALIGN = 4           # vector-op address alignment in bytes
LENGTH_ALIGN = 5            # vector-op length alignment in bytes (1 = none)
BARRIER_KEY = 6             # registry key of the launch's barriers (0: launched without barrier support)
SRAM_SHARED = 7             # 1 when the cluster's tasks share one SRAM (then buffers are not poisoned per task)
LIMITS_WIDTH = 8

KIND_INDEX = {kind: i for i, kind in enumerate(ELEMENT_TYPES)}


def storage_view(raw, etype):
    """`raw` (uint8) viewed as etype's storage dtype (compiled code)."""


@overload(storage_view)
def _storage_view(raw, etype):
    storage = ELEMENT_TYPES[etype.kind].storage.type
    return lambda raw, etype: raw.view(storage)


def element_size(etype):
    """Bytes per element of an element-type token (compiled code)."""


@overload(element_size)
def _element_size(etype):
    size = ELEMENT_TYPES[etype.kind].itemsize
    return lambda etype: size


POISON = 0xFF


@jit
def capacity_trap(space, name, count, size, start, capacity):
    if count <= 0:
        raise KernelTrap(SPACE_NAMES[space] + " buffer '" + name + "': element count must be positive, got "
                         + text(count))
    raise KernelTrap(SPACE_NAMES[space] + " buffer '" + name + "' of " + text(count) + " x " + text(size)
                     + " bytes does not fit: " + text(start) + " of the " + text(capacity) + " usable bytes of "
                     + SPACE_NAMES[space] + " are already allocated (limit " + text(capacity) + " bytes)")


@register_jitable
def allocate(ctx, space, arena, name, etype, count):
    """A new buffer of `count` elements in `arena`, poisoned unless shared; traps when it does not fit.

    The first allocation of a task starts the cursors afresh (each task declares its buffers anew)."""
    if ctx.state[TASK_MARK] != ctx.taskId + 1:
        ctx.state[TASK_MARK] = ctx.taskId + 1
        ctx.state[CURSOR + NRAM] = 0
        ctx.state[CURSOR + WRAM] = 0
        ctx.state[CURSOR + SRAM] = 0
    poll()
    start = ctx.state[CURSOR + space]
    capacity = ctx.limits[CAPACITY + space]
    size = element_size(etype)
    if count <= 0 or count > (capacity - start) // size:  # compared before multiplying: count * size may overflow
        capacity_trap(space, name, count, size, start, capacity)
    nbytes = count * size
    ctx.state[CURSOR + space] = (start + nbytes + BUFFER_ALIGN - 1) // BUFFER_ALIGN * BUFFER_ALIGN
    if space == SRAM:
        ctx.state[SRAM_HIGH] = max(ctx.state[SRAM_HIGH], start + nbytes)
    if space != SRAM or ctx.limits[SRAM_SHARED] == 0:
        raw_fill(arena.ctypes.data + start, nbytes, POISON)
    log = accesslog.row_address(ctx) if space == SRAM else 0
    return make_ptr(storage_view(arena[start:start + nbytes], etype), 0, space, name, etype, log)


@jit
def nram(ctx, name, etype, count):
    """`__nram__ T name[count];` a buffer in this core's NRAM."""
    return allocate(ctx, NRAM, ctx.nram, name, etype, count)


@jit
def wram(ctx, name, etype, count):
    """`__wram__ T name[count];` a buffer in this core's WRAM (weights for bang.matmul)."""
    return allocate(ctx, WRAM, ctx.wram, name, etype, count)


@jit
def sram(ctx, name, etype, count):
    """`__mlu_shared__ T name[count];` a buffer in the cluster's SRAM, shared by the cluster's cores."""
    return allocate(ctx, SRAM, ctx.sram, name, etype, count)
