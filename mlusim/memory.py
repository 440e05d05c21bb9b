"""A device's GDRAM: address space, allocator, allocation records, bounds and lifetime checks, poison.

Each device owns the address range [base, base + ADDRESS_SPAN): addresses are virtual, and capacity is accounted
apart from them. Blocks are carved from the free ranges of the whole span next fit (from the end of the block handed
out last, wrapping to the lowest address only when no range after it holds the block), so a freed block's addresses
are not handed out again until the rest of the span (2^40 bytes) is spent: every later use of a stale pointer is a
use after free naming its block and the call that freed it. Every block is followed by a guard gap of GUARD bytes
that belongs to no block, so that an access just past the end of a block, or just before the start of the next one
(a negative offset), is caught. A block's footprint is `round_up(nbytes, ALIGNMENT) + GUARD`; `info()` reports
free = capacity - sum of footprints, exactly. Backing storage is one numpy byte array per block, filled with the poison byte 0xFF (NaN for every float
type, -1 for signed ints) unless poisoning is turned off.
"""
from __future__ import annotations

import bisect
import threading
import weakref
from collections import OrderedDict

import numpy as np

from .command import running_queue
from .host import budget, sharedmem
from .host.budget import HOST_BUDGET
from .freelist import FreeList
from .observers import OBSERVERS
from .errors import (DoubleFreeFault, NegativeOffsetFault, NotBlockStartFault, NullPointerFault, OutOfBoundsFault,
                     OutOfMemoryFault, UnknownAddressFault, UseAfterFreeFault)

ALIGNMENT = 256
GUARD = ALIGNMENT
ADDRESS_BITS = 40
ADDRESS_SPAN = 1 << ADDRESS_BITS
POISON_BYTE = 0xFF
#: Freed blocks remembered (with the call that freed them, and under memcheck its stack) for use-after-free reports;
#: a stale pointer into an older freed block is still a use after free, without the block's details.
FREED_HISTORY = 16384


def round_up(value: int, multiple: int) -> int:
    return (value + multiple - 1) // multiple * multiple


def footprint(nbytes: int) -> int:
    """Bytes of capacity one allocation of `nbytes` consumes."""
    return round_up(max(nbytes, 1), ALIGNMENT) + GUARD


HOST_MEMORY_FRACTION = budget.HOST_MEMORY_FRACTION
_spaces: "weakref.WeakSet[AddressSpace]" = weakref.WeakSet()


def reset_all_after_fork() -> None:
    """In a forked child (called by mlusim.device's fork handler): locks that a thread of the parent may have held at
    the fork are made anew, and the budget counts the child's own allocations."""
    HOST_BUDGET.reset_after_fork()
    for space in list(_spaces):
        space._lock = threading.RLock()
        space._pin_released = threading.Condition(space._lock)
        space._pin_waiters = 0


#: host alignment of a private block's bytes: a cache line, the width of an AVX-512 load (as torch's CPU allocator
#: aligns). numpy aligns to 16 bytes (a large array starts 16 bytes past a page), so vector loads split across cache
#: lines (what that costs: docs/runtime.md, "Host alignment")
BACKING_ALIGNMENT = 64


def aligned_bytes(nbytes: int, fill: int = 0) -> np.ndarray:
    """A uint8 array of `nbytes`, each byte `fill`, starting on a BACKING_ALIGNMENT boundary of host memory."""
    raw = np.zeros(nbytes + BACKING_ALIGNMENT, dtype=np.uint8) if fill == 0 else \
        np.full(nbytes + BACKING_ALIGNMENT, fill, dtype=np.uint8)
    start = -raw.ctypes.data % BACKING_ALIGNMENT
    return raw[start:start + nbytes]


class Block:
    """One allocation. `data` is its backing byte array; `pins` counts queued commands that still use it.

    A freed block is gone for new uses at once; its address range (and backing) returns to the allocator when the
    last command that pinned it is done. `freed_by` is (queue, position) when a queued command freed it
    (cnrtMemFreeAsync, or cnrtFree inside a host function): later commands of that queue must not use it.
    `freed_call` names the call that freed it; `free_stack` is that call's stack when memcheck recorded it."""

    __slots__ = ("start", "size", "footprint", "data", "freed", "pins", "space", "serial", "freed_by", "released",
                 "readonly", "freed_call", "free_stack", "__weakref__")

    def __init__(self, start: int, size: int, data: np.ndarray, space: "AddressSpace", serial: int):
        self.start = start
        self.size = size
        self.footprint = footprint(size)
        self.data = data
        self.freed = False
        self.pins = 0
        self.space = space
        self.serial = serial
        self.freed_by = None
        self.released = False
        self.readonly = None  # a read-only memoryview of `data` (made on first use; see read_only_data)
        self.freed_call = ""
        self.free_stack = ()

    def read_only_data(self) -> memoryview:
        """`data` as a read-only buffer: arrays made over it are read-only from the start (cheaper than making a
        writable view and clearing its flag)."""
        readonly = self.readonly
        if readonly is None:
            readonly = self.readonly = memoryview(self.data).toreadonly()
        return readonly

    @property
    def device_index(self) -> int:
        return self.space.device_index

    @property
    def end(self) -> int:
        return self.start + self.size

    def __repr__(self) -> str:
        state = "freed" if self.freed else "live"
        return f"<block 0x{self.start:x} size {self.size} {state} on device {self.device_index}>"


class AddressSpace:
    """The GDRAM of one device."""

    def __init__(self, device_index: int, base: int, capacity: int, poison: bool = True, span: int = ADDRESS_SPAN):
        if capacity + GUARD > span:
            raise ValueError(f"capacity {capacity} exceeds the address span")
        self.device_index = device_index
        self.base = base
        self.span = span
        self.capacity = capacity
        self.poison = poison
        self._lock = threading.RLock()
        self._pin_released = threading.Condition(self._lock)
        self._pin_waiters = 0  # threads in free() waiting for a block's pins to go (unpin wakes them only then)
        self._serial = 0
        self._reset_state()
        _spaces.add(self)

    def _reset_state(self) -> None:
        self._holes = FreeList(self.base + GUARD, self.span - GUARD)
        self._rover = self.base + GUARD  # where the next block is looked for: the end of the block handed out last
        self._handed_out = self.base + GUARD  # every address below it belonged to a block once
        #: times the allocator went back to the lowest free address: from the first on, addresses may be reused
        self.wraps = 0
        self._starts: list[int] = []
        self._blocks: dict[int, Block] = {}
        self._freed: OrderedDict[int, Block] = OrderedDict()
        self._last: Block | None = None  # the live block the latest resolve found (None: look it up)
        self.used = 0

    # ---- allocation ---------------------------------------------------------------------------------------------

    def allocate(self, nbytes: int) -> Block:
        """A new poisoned block of `nbytes` (> 0). Raises OutOfMemoryFault when capacity or host memory runs out."""
        need = footprint(nbytes)
        with self._lock:
            if need > self.capacity - self.used:
                raise OutOfMemoryFault(
                    f"cannot allocate {nbytes} bytes ({need} with alignment and guard) on device "
                    f"{self.device_index}: {self.capacity - self.used} of {self.capacity} bytes free", "bytes")
            start = self._holes.take_next(self._rover, need)
            if start is None:
                raise OutOfMemoryFault(
                    f"cannot allocate {nbytes} bytes on device {self.device_index}: no free range of its "
                    f"{self.span}-byte address space holds {need} bytes (largest {self._holes.largest()})", "bytes")
            if not HOST_BUDGET.take(need):
                self._holes.give(start, need)
                raise OutOfMemoryFault(
                    f"cannot allocate {nbytes} bytes on device {self.device_index}: the host's memory limit for "
                    f"simulated devices ({HOST_BUDGET.limit} bytes) is reached", "bytes")
            try:
                data = self._backing(nbytes)
            except MemoryError:
                HOST_BUDGET.give(need)
                self._holes.give(start, need)
                raise OutOfMemoryFault(f"the host could not provide {nbytes} bytes for device "
                                       f"{self.device_index}", "bytes") from None
            if start < self._rover:
                self.wraps += 1
                self._handed_out = self.base + self.span
            self._rover = start + need
            self._handed_out = max(self._handed_out, self._rover)
            self._serial += 1
            block = Block(start, nbytes, data, self, self._serial)
            bisect.insort(self._starts, start)
            self._blocks[start] = block
            if self.wraps:  # before the first wrap no address is handed out twice
                self._forget_freed_overlapping(start, need)
            self.used += need
        for hook in OBSERVERS.block_allocated:
            hook(block)
        return block

    def _backing(self, nbytes: int) -> np.ndarray:
        shared = sharedmem.backing(nbytes, self.poison, POISON_BYTE)  # peers can map it (cncl zero-copy; pages)
        if shared is not None:
            return shared
        return aligned_bytes(nbytes, POISON_BYTE if self.poison else 0)

    def free(self, address: int, arg: str = "ptr", call: str = "cnrtFree") -> Block:
        """Free the block starting at `address` (cnrtFree). From the host: after the queued commands that use it
        have run. From inside a queued command (a host function), waiting could never end when a later command of
        the same queue uses the block: the block is freed at once, and such later commands fail as a use after free
        instead of running."""
        running = running_queue()
        with self._lock:
            block = self.block_at(address, arg)
            if running is not None:
                self._retire(block, (running, running.completed), f"{call} in a host function on {running.name}")
                return block
            while block.pins:
                self._pin_waiters += 1
                try:
                    self._pin_released.wait()
                finally:
                    self._pin_waiters -= 1
            if block.freed:  # freed by another thread while we waited
                raise DoubleFreeFault(f"0x{address:x} was already freed", arg, address)
            self._retire(block, None, call)
            return block

    def free_async(self, address: int, queue, position: int, arg: str = "ptr",
                   call: str = "cnrtMemFreeAsync") -> Block:
        """Free the block at `address` in the order of `queue` (cnrtMemFreeAsync queued at `position`): no new use
        of it is accepted from now on; commands queued before the free still run on it, and the memory returns to
        the allocator when the last of them is done."""
        with self._lock:
            block = self.block_at(address, arg)
            self._retire(block, (queue, position), f"{call} on {queue.name}")
            return block

    def _retire(self, block: Block, freed_by, call: str) -> None:
        """Make `block` unusable now; release its range when no queued command holds it any more."""
        index = bisect.bisect_left(self._starts, block.start)
        del self._starts[index]
        del self._blocks[block.start]
        block.freed = True
        block.freed_by = freed_by
        block.freed_call = call
        self._freed[block.start] = block
        if len(self._freed) > FREED_HISTORY:
            self._freed.popitem(last=False)
        for hook in OBSERVERS.block_freed:
            hook(block)
        if block.pins == 0:
            self._release(block)

    def _release(self, block: Block) -> None:
        if block.released:
            return
        block.released = True
        block.data = None
        block.readonly = None
        self._holes.give(block.start, block.footprint)
        self.used -= block.footprint
        HOST_BUDGET.give(block.footprint)

    def rewind(self) -> None:
        """Hand out addresses from the lowest free one again, as when the span is spent (for tests of code that
        must cope with an address coming back as a new block)."""
        with self._lock:
            self._rover = self.base + GUARD
            self.wraps += 1
            self._handed_out = self.base + self.span

    def block_at(self, address: int, arg: str = "ptr") -> Block:
        """The live block that starts at `address` (what free takes); the precise fault otherwise."""
        with self._lock:
            block = self._blocks.get(address)
            if block is None:
                self._raise_not_live(address, 1, arg, freeing=True)
            return block

    def free_all(self, call: str = "cnrtDeviceReset") -> None:
        """Free every block (device reset, after the device's queues were drained): a block that work still holds
        (a lost queue's command that never returned) returns to the allocator when that work lets go of it."""
        with self._lock:
            for block in list(self._blocks.values()):
                self._retire(block, None, call)

    # ---- pins: queued work keeps its blocks alive ----------------------------------------------------------------

    def pin(self, block: Block) -> None:
        with self._lock:
            block.pins += 1

    def unpin(self, block: Block, count: int = 1) -> None:
        """Drop `count` pins of `block` (taken by `acquire` or `pin`)."""
        with self._lock:
            block.pins -= count
            if block.pins == 0:
                if block.freed:
                    self._release(block)
                if self._pin_waiters:
                    self._pin_released.notify_all()

    # ---- lookups ------------------------------------------------------------------------------------------------

    def owns(self, address: int) -> bool:
        return self.base <= address < self.base + ADDRESS_SPAN

    def live_blocks(self) -> list[Block]:
        """The live allocations (a snapshot)."""
        with self._lock:
            return list(self._blocks.values())

    def find(self, address: int) -> Block | None:
        """The live block containing `address`, or None."""
        with self._lock:
            index = bisect.bisect_right(self._starts, address) - 1
            if index >= 0:
                block = self._blocks[self._starts[index]]
                if address < block.start + max(block.size, 1):
                    return block
            return None

    def resolve(self, address: int, nbytes: int, arg: str = "ptr") -> tuple[Block, int]:
        """(block, offset) for the range [address, address + nbytes), which must lie inside one live block."""
        with self._lock:
            return self._resolve_locked(address, nbytes, arg)

    def _resolve_locked(self, address: int, nbytes: int, arg: str) -> tuple[Block, int]:
        last = self._last  # the block of the previous lookup: consecutive ops mostly touch the same one
        if last is not None and not last.freed and last.start <= address:
            block = last
        else:
            index = bisect.bisect_right(self._starts, address) - 1
            if index < 0:
                self._raise_not_live(address, nbytes, arg)
            block = self._last = self._blocks[self._starts[index]]
        offset = address - block.start
        if offset < block.size or (nbytes == 0 and offset <= block.size):
            if offset + nbytes > block.size:
                raise OutOfBoundsFault(
                    f"range 0x{address:x}+{nbytes} runs {offset + nbytes - block.size} byte(s) past the end "
                    f"of block 0x{block.start:x} (size {block.size})", arg, address)
            return block, offset
        if block is last:  # past the remembered block: the block that holds it (if any) is found by start
            self._last = None
            return self._resolve_locked(address, nbytes, arg)
        self._raise_not_live(address, nbytes, arg)

    def acquire(self, address: int, nbytes: int, arg: str = "ptr") -> tuple[Block, int]:
        """resolve() and pin the block, atomically: queued work keeps it alive until `unpin`."""
        with self._lock:
            block, offset = self._resolve_locked(address, nbytes, arg)
            block.pins += 1
            return block, offset

    def view(self, address: int, nbytes: int, arg: str = "ptr") -> np.ndarray:
        """A writable uint8 view of [address, address + nbytes)."""
        block, offset = self.resolve(address, nbytes, arg)
        return block.data[offset:offset + nbytes]

    def _raise_not_live(self, address: int, nbytes: int, arg: str, freeing: bool = False):
        if address == 0:
            raise NullPointerFault("null device pointer", arg, 0)
        inside = self.find(address)
        if inside is not None and freeing:
            raise NotBlockStartFault(f"0x{address:x} is {address - inside.start} bytes inside block "
                                     f"0x{inside.start:x}; free takes the block's start address", arg, address)
        freed = self._freed.get(address) if freeing else self._freed_containing(address)
        if freed is not None:
            if freeing:
                raise DoubleFreeFault(f"double free of 0x{address:x} (block of {freed.size} bytes already freed)",
                                      arg, address)
            fault = UseAfterFreeFault(f"0x{address:x} is in block 0x{freed.start:x} (size {freed.size}, allocation "
                                      f"#{freed.serial}), which {freed.freed_call} freed (use after free)",
                                      arg, address)
            fault.block = freed
            raise fault
        index = bisect.bisect_right(self._starts, address)
        if index < len(self._starts):
            following = self._blocks[self._starts[index]]
            gap = following.start - address
            if gap <= GUARD:
                raise NegativeOffsetFault(f"0x{address:x} is {gap} byte(s) before the start of block "
                                          f"0x{following.start:x} (negative offset)", arg, address)
        if index > 0:
            preceding = self._blocks[self._starts[index - 1]]
            past = address - preceding.end
            if 0 <= past < GUARD + ALIGNMENT:
                raise OutOfBoundsFault(f"0x{address:x} is {past} byte(s) past the end of block "
                                       f"0x{preceding.start:x} (size {preceding.size})", arg, address)
        if self.base + GUARD <= address < self._handed_out:
            raise UseAfterFreeFault(f"0x{address:x} was in a block of device {self.device_index} that was freed (use "
                                    f"after free; the block is older than the last {FREED_HISTORY} frees, whose "
                                    f"blocks are named)", arg, address)
        raise UnknownAddressFault(f"0x{address:x} is not an address allocated on device {self.device_index}",
                                  arg, address)

    def _freed_containing(self, address: int) -> Block | None:
        for block in reversed(self._freed.values()):
            if block.start <= address < block.start + max(block.size, 1):
                return block
        return None

    def _forget_freed_overlapping(self, start: int, length: int) -> None:
        stale = [s for s, b in self._freed.items() if s < start + length and start < s + b.footprint]
        for s in stale:
            del self._freed[s]

    # ---- reporting ----------------------------------------------------------------------------------------------

    def info(self) -> tuple[int, int]:
        """(free, total) bytes, exact."""
        with self._lock:
            return self.capacity - self.used, self.capacity

    def fragments(self) -> int:
        """Number of separate free ranges (1 when nothing is fragmented)."""
        with self._lock:
            return len(self._holes)
