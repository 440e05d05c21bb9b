"""The caching allocator's pieces: segments (one cnrt allocation each), the blocks carved from them, the pools of
free blocks (best fit per stream) and one device's state. Sizes: requests round up to 512 bytes; up to 1 MiB they
come from the small pool's 2 MiB segments, larger ones from 20 MiB segments (under 10 MiB) or from a segment of
their own rounded up to 2 MiB."""
from __future__ import annotations

import bisect

from .stats import LARGE, RESERVED_BYTES, SMALL, DeviceStats

ROUND = 512
SMALL_SIZE = 1 << 20          # largest request served by the small pool
SMALL_SEGMENT = 2 << 20       # segment size of the small pool
MIN_LARGE_ALLOC = 10 << 20    # requests below this share 20 MiB segments
LARGE_SEGMENT = 20 << 20
ROUND_LARGE = 2 << 20         # larger requests get a segment of their own, rounded up to this


def segment_size(nbytes: int) -> int:
    if nbytes <= SMALL_SIZE:
        return SMALL_SEGMENT
    if nbytes < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return (nbytes + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE


class Segment:
    """One cnrt allocation the pools carve blocks from."""

    __slots__ = ("address", "size", "device", "small", "pool", "uncached", "stream", "stack")

    def __init__(self, address: int, size: int, device: int, small: bool, uncached: bool = False, stream: int = 0):
        self.address, self.size, self.device, self.small = address, size, device, small
        self.pool = SMALL if small else LARGE  # its offset in the statistics
        self.uncached = uncached  # one tensor's own cnrt allocation (PYTORCH_NO_MLU_MEMORY_CACHING)
        self.stream = stream  # the stream it was allocated for
        self.stack = None  # where it was allocated (history.py), while the memory history keeps stacks


class Block:
    """A piece of a segment: allocated to a tensor, or free in its pool. `key` orders free blocks for best fit."""

    __slots__ = ("address", "size", "segment", "stream", "allocated", "requested", "prev", "next", "stream_uses",
                 "key", "stack")

    def __init__(self, address: int, size: int, segment: Segment, stream: int):
        self.address, self.size, self.segment, self.stream = address, size, segment, stream
        self.allocated = False
        self.requested = 0
        self.prev: Block | None = None
        self.next: Block | None = None
        self.stream_uses: set | None = None  # other streams it was recorded on (record_stream)
        self.key = (stream, size, address)
        self.stack = None  # where it was allocated (history.py), while allocated and the history keeps stacks

    def rekey(self) -> None:
        self.key = (self.stream, self.size, self.address)

    @property
    def split(self) -> bool:
        return self.prev is not None or self.next is not None


class Pool:
    """Free blocks of one device and size class, ordered by (stream, size, address): best fit per stream."""

    def __init__(self):
        self.keys: list[tuple] = []
        self.blocks: dict[tuple, Block] = {}

    def insert(self, block: Block) -> None:
        key = block.key
        bisect.insort(self.keys, key)
        self.blocks[key] = block

    def remove(self, block: Block) -> None:
        key = block.key
        del self.keys[bisect.bisect_left(self.keys, key)]
        del self.blocks[key]

    def best_fit(self, stream: int, size: int) -> Block | None:
        index = bisect.bisect_left(self.keys, (stream, size, 0))
        if index < len(self.keys):
            key = self.keys[index]
            if key[0] == stream:
                return self.blocks[key]
        return None


class DeviceCache:
    """The allocator state of one device."""

    def __init__(self, device: int):
        self.device = device
        self.small = Pool()
        self.large = Pool()
        self.segments: dict[int, Segment] = {}
        self.allocated: dict[int, Block] = {}       # address -> allocated block
        self.pending: list[tuple[Block, list]] = []  # freed blocks waiting for notifiers on other streams
        self.parked: dict[tuple[int, int], list[Block]] = {}  # (stream, size) -> freed blocks not yet merged
        self.parked_count = 0
        self.stats = DeviceStats()
        #: the most bytes this process may reserve on the device (set_per_process_memory_fraction); None: no limit
        self.allowed_bytes: int | None = None

    def admits(self, nbytes: int) -> bool:
        """Whether reserving `nbytes` more stays within the process's allowed share of the device."""
        return self.allowed_bytes is None or self.stats.current(RESERVED_BYTES) + nbytes <= self.allowed_bytes
