"""`__memcpy` between memory spaces: directions, the strided form, async copies and their sync.

A copy checks that its direction matches the spaces of its buffers and that both byte ranges lie inside their
allocations, then moves bytes with memmove. `memcpy_async` is checked at issue but moves its bytes only at the next
`sync` (or barrier, or the task's end), so a kernel that reads an async destination before syncing sees stale data,
as it may on hardware.
"""
from __future__ import annotations

from numba.extending import register_jitable

from . import accesslog
from .caching import jit
from .context import COPY_BYTES, COPY_COUNT, MAX_PENDING, PENDING, PENDING_COUNT
from .faults import KernelTrap
from .raw import raw_move
from .pointer import GDRAM, LDRAM, NRAM, SPACE_NAMES, SRAM, WRAM, itemsize

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


@register_jitable
def check_direction(dst, src, direction, what):
    """Trap unless `direction` is a BANG direction whose spaces are those of dst and src."""
    if direction < 0 or direction >= len(DIRECTION_NAMES):
        raise KernelTrap(what + ": " + str(direction) + " is not a memcpy direction (0.."
                         + str(len(DIRECTION_NAMES) - 1) + ")")
    if dst.space != _DESTINATION[direction] or src.space != _SOURCE[direction]:
        raise KernelTrap(what + ": direction " + DIRECTION_NAMES[direction] + " copies "
                         + SPACE_NAMES[_SOURCE[direction]] + " to " + SPACE_NAMES[_DESTINATION[direction]]
                         + ", but src '" + src.name + "' is in " + SPACE_NAMES[src.space] + " and dst '" + dst.name
                         + "' is in " + SPACE_NAMES[dst.space])


@register_jitable
def checked_span(ptr, first_byte, nbytes, role, what):
    """Host address of bytes [first_byte, first_byte + nbytes) after ptr; traps when outside its allocation."""
    size = itemsize(ptr)
    start = ptr.offset * size + first_byte
    limit = ptr.base.shape[0] * size
    if start < 0 or start + nbytes > limit:
        detail = " (negative offset)" if start < 0 else ""
        raise KernelTrap(what + ": " + role + " bytes [" + str(start) + ", " + str(start + nbytes) + ") of "
                         + SPACE_NAMES[ptr.space] + " buffer '" + ptr.name + "' are outside its " + str(limit)
                         + " bytes" + detail)
    return ptr.base.ctypes.data + start


@register_jitable
def _count(ctx, direction, nbytes):
    ctx.state[COPY_BYTES + direction] += nbytes
    ctx.state[COPY_COUNT] += 1


@jit
def memcpy(ctx, dst, src, size, direction):
    """`__memcpy(dst, src, size, dir)`: copy `size` bytes."""
    check_direction(dst, src, direction, "memcpy")
    if size < 0:
        raise KernelTrap("memcpy: negative size " + str(size))
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
    if size < 0 or segnum < 0:
        raise KernelTrap("memcpy: negative size " + str(size) + " or segnum " + str(segnum))
    for segment in range(segnum + 1):
        d = checked_span(dst, segment * dst_stride, size, "dst", "memcpy")
        s = checked_span(src, segment * src_stride, size, "src", "memcpy")
        accesslog.note_copy(ctx, dst.space, d, src.space, s, size)
        raw_move(d, s, size)
    _count(ctx, direction, size * (segnum + 1))


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
    if size < 0:
        raise KernelTrap("memcpy_async: negative size " + str(size))
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
