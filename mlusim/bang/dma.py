"""`__memcpy` between memory spaces: directions, the strided form, async copies and their sync.

A copy checks that its direction matches the spaces of its buffers and that both byte ranges lie inside their
allocations, then moves bytes with memmove. `memcpy_async` is checked at issue but moves its bytes only at the next
`sync` (or barrier, or the task's end), so a kernel that reads an async destination before syncing sees stale data,
as it may on hardware.
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from . import accesslog
from .caching import jit
from .context import COPY_BYTES, COPY_COUNT, MAX_PENDING, PENDING, PENDING_COUNT
from .faults import KernelTrap
from .raw import raw_move
from .cancel import poll
from .pointer import (BOUND, GDRAM, LDRAM, NRAM, SPACE_NAMES, SRAM, WRAM, bounded_mul, itemsize, require_pointer,
                      text)

#: Directions in the order of the BANG C enum (mlisa: GDRAM2NRAM = 0 ...): name -> (destination, source) space.
DIRECTIONS = (
    ("GDRAM2NRAM", NRAM, GDRAM), ("NRAM2GDRAM", GDRAM, NRAM), ("LDRAM2NRAM", NRAM, LDRAM),
    ("NRAM2LDRAM", LDRAM, NRAM), ("GDRAM2WRAM", WRAM, GDRAM), ("WRAM2GDRAM", GDRAM, WRAM),
    ("LDRAM2WRAM", WRAM, LDRAM), ("WRAM2LDRAM", LDRAM, WRAM), ("NRAM2NRAM", NRAM, NRAM),
    ("NRAM2WRAM", WRAM, NRAM), ("WRAM2NRAM", NRAM, WRAM), ("GDRAM2SRAM", SRAM, GDRAM),
    ("SRAM2GDRAM", GDRAM, SRAM), ("LDRAM2SRAM", SRAM, LDRAM), ("SRAM2LDRAM", LDRAM, SRAM),
    ("SRAM2NRAM", NRAM, SRAM), ("NRAM2SRAM", SRAM, NRAM), ("SRAM2WRAM", WRAM, SRAM), ("WRAM2SRAM", SRAM, WRAM),
    ("GDRAM2GDRAM", GDRAM, GDRAM), ("GDRAM2LDRAM", LDRAM, GDRAM), ("LDRAM2GDRAM", GDRAM, LDRAM),
    ("SRAM2SRAM", SRAM, SRAM),
)
DIRECTION_NAMES = tuple(name for name, _, _ in DIRECTIONS)
_DESTINATION = tuple(dst for _, dst, _ in DIRECTIONS)
_SOURCE = tuple(src for _, _, src in DIRECTIONS)
for _index, _name in enumerate(DIRECTION_NAMES):
    globals()[_name] = _index


@jit
def direction_trap(what, direction, dst_space, dst_name, src_space, src_name):
    if direction < 0 or direction >= len(DIRECTION_NAMES):
        raise KernelTrap(what + ": " + text(direction) + " is not a memcpy direction (0.."
                         + text(len(DIRECTION_NAMES) - 1) + ")")
    raise KernelTrap(what + ": direction " + DIRECTION_NAMES[direction] + " copies "
                     + SPACE_NAMES[_SOURCE[direction]] + " to " + SPACE_NAMES[_DESTINATION[direction]]
                     + ", but src '" + src_name + "' is in " + SPACE_NAMES[src_space] + " and dst '" + dst_name
                     + "' is in " + SPACE_NAMES[dst_space])


@register_jitable
def check_direction(dst, src, direction, what):
    """Trap unless `direction` is a BANG direction whose spaces are those of dst and src."""
    require_pointer(dst, "memcpy dst")
    require_pointer(src, "memcpy src")
    if (direction < 0 or direction >= len(DIRECTION_NAMES) or dst.space != _DESTINATION[direction]
            or src.space != _SOURCE[direction]):
        direction_trap(what, direction, dst.space, dst.name, src.space, src.name)


@jit
def span_trap(what, role, nbytes, inside, start, offset, size, first_byte, space, name, limit):
    if nbytes < 0:
        raise KernelTrap(what + ": negative size " + text(nbytes))
    detail = " (negative offset)" if start < 0 else ""
    raise KernelTrap(what + ": " + role + " " + text(nbytes) + " byte(s) at byte offset "
                     + (text(start) if inside else text(offset) + " x " + text(size) + " + " + text(first_byte))
                     + " of " + SPACE_NAMES[space] + " buffer '" + name + "' are outside its " + text(limit)
                     + " bytes" + detail)


@register_jitable
def checked_span(ptr, first_byte, nbytes, role, what):
    """Host address of bytes [first_byte, first_byte + nbytes) after ptr; traps when outside its allocation.
    Overflow-proof: offsets and sizes beyond BOUND are out of range before any sum is formed."""
    poll()
    size = itemsize(ptr)
    limit = ptr.base.shape[0] * size
    element_bytes = bounded_mul(ptr.offset, size)
    inside = -BOUND <= element_bytes <= BOUND and -BOUND <= first_byte <= BOUND and 0 <= nbytes <= BOUND
    start = element_bytes + first_byte if inside else np.int64(BOUND + 1)
    if nbytes < 0 or not inside or start < 0 or start > limit or nbytes > limit - start:
        span_trap(what, role, nbytes, inside, start, ptr.offset, size, first_byte, ptr.space, ptr.name, limit)
    return ptr.base.ctypes.data + start


INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


@jit
def int_trap(what, name, value):
    raise KernelTrap(what + ": " + name + " " + text(value) + " does not fit the int parameter of BANG's __memcpy")


@register_jitable
def check_int(value, name, what):
    """Trap unless `value` fits the `int` parameter `name` of the BANG C call (sizes, strides, segment counts)."""
    if value < INT32_MIN or value > INT32_MAX:
        int_trap(what, name, value)


@register_jitable
def _count(ctx, direction, nbytes):
    ctx.state[COPY_BYTES + direction] += nbytes
    ctx.state[COPY_COUNT] += 1


@jit
def memcpy(ctx, dst, src, size, direction):
    """`__memcpy(dst, src, size, dir)`: copy `size` bytes."""
    check_direction(dst, src, direction, "memcpy")
    check_int(size, "size", "memcpy")
    if size < 0:
        raise KernelTrap("memcpy: negative size " + text(size))
    d = checked_span(dst, 0, size, "dst", "memcpy")
    s = checked_span(src, 0, size, "src", "memcpy")
    accesslog.note_copy(ctx, dst.space, d, src.space, s, size)
    raw_move(d, s, size)
    _count(ctx, direction, size)


@jit
def memcpy_strided(ctx, dst, src, size, direction, dst_stride, src_stride, segnum):
    """`__memcpy(dst, src, size, dir, dst_stride, src_stride, segnum)`: segnum + 1 segments of `size` bytes,
    the i-th at byte offset i * stride on each side."""
    check_direction(dst, src, direction, "memcpy")
    check_int(size, "size", "memcpy")
    check_int(dst_stride, "dst_stride", "memcpy")
    check_int(src_stride, "src_stride", "memcpy")
    check_int(segnum, "segnum", "memcpy")
    if size < 0 or segnum < 0:
        raise KernelTrap("memcpy: negative size " + text(size) + " or segnum " + text(segnum))
    for segment in range(segnum + 1):
        d = checked_span(dst, bounded_mul(segment, dst_stride), size, "dst", "memcpy")
        s = checked_span(src, bounded_mul(segment, src_stride), size, "src", "memcpy")
        accesslog.note_copy(ctx, dst.space, d, src.space, s, size)
        raw_move(d, s, size)
    _count(ctx, direction, bounded_mul(size, segnum + 1))


@jit
def sync(ctx):
    """`__sync_io()` / `__sync()`: complete this core's pending async copies, in issue order."""
    pending = ctx.state[PENDING_COUNT]
    for i in range(pending):
        record = PENDING + 3 * i
        raw_move(ctx.state[record], ctx.state[record + 1], ctx.state[record + 2])
    ctx.state[PENDING_COUNT] = 0


@jit
def memcpy_async(ctx, dst, src, size, direction):
    """`__memcpy_async(dst, src, size, dir)`: checked now, performed at the next `sync`."""
    check_direction(dst, src, direction, "memcpy_async")
    check_int(size, "size", "memcpy_async")
    if size < 0:
        raise KernelTrap("memcpy_async: negative size " + text(size))
    d = checked_span(dst, 0, size, "dst", "memcpy_async")
    s = checked_span(src, 0, size, "src", "memcpy_async")
    accesslog.note_copy(ctx, dst.space, d, src.space, s, size)  # it happens before the next barrier
    if ctx.state[PENDING_COUNT] == MAX_PENDING:
        sync(ctx)
    record = PENDING + 3 * ctx.state[PENDING_COUNT]
    ctx.state[record] = d
    ctx.state[record + 1] = s
    ctx.state[record + 2] = size
    ctx.state[PENDING_COUNT] += 1
    _count(ctx, direction, size)
