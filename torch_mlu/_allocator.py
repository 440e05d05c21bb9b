"""The stream-ordered caching allocator behind every mlu tensor (the counterpart of CUDA's caching allocator).

Device memory comes from `cnrt.malloc` in segments and is handed out as blocks carved from them:
- small pool: requests up to 1 MiB, rounded up to 512 bytes, carved from 2 MiB segments;
- large pool: larger requests, rounded up to 512 bytes, from 20 MiB segments (requests under 10 MiB) or from a
  segment of their own rounded up to 2 MiB.
A block belongs to the stream it was allocated on. Freeing never waits for the device: the block goes straight
back to its pool, where the next allocation on the same stream may take it at once (that stream's queue is in
order, so its earlier work on the block comes first). Another stream takes a cached block only once the owning
stream's queue has finished all its work. A block used on other streams (`Tensor.record_stream`) returns to the
pool only when notifiers placed on those streams at free time have been reached.
When cnrt runs out of simulated GDRAM, the cached segments are released (after the device's work on them is done)
and the allocation is tried once more; then it fails with torch.OutOfMemoryError naming the sizes.
Statistics follow torch.cuda.memory_stats: each has current/peak/allocated/freed for all, small_pool, large_pool.
"""
from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field

import torch

import cnrt

from . import _devices
from ._queues import Streams, on_device

ROUND = 512
SMALL_SIZE = 1 << 20          # largest request served by the small pool
SMALL_SEGMENT = 2 << 20       # segment size of the small pool
MIN_LARGE_ALLOC = 10 << 20    # requests below this share 20 MiB segments
LARGE_SEGMENT = 20 << 20
ROUND_LARGE = 2 << 20         # larger requests get a segment of their own, rounded up to this

#: stat names of torch.cuda.memory_stats that are arrays over (all, small_pool, large_pool)
ARRAY_STATS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
               "active_bytes", "inactive_split_bytes", "requested_bytes")
SCALAR_STATS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free",
                "max_split_size")
POOLS = ("all", "small_pool", "large_pool")


def round_size(nbytes: int) -> int:
    return max(ROUND, (nbytes + ROUND - 1) // ROUND * ROUND)


def segment_size(nbytes: int) -> int:
    if nbytes <= SMALL_SIZE:
        return SMALL_SEGMENT
    if nbytes < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return (nbytes + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE


def format_size(nbytes: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(nbytes) < 1024 or unit == "GiB":
            return f"{nbytes:.2f} {unit}" if unit != "B" else f"{nbytes} B"
        nbytes /= 1024
    return f"{nbytes:.2f} GiB"


class Stat:
    """current / peak / allocated / freed of one statistic."""

    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def increase(self, amount: int) -> None:
        self.current += amount
        self.allocated += amount
        if self.current > self.peak:
            self.peak = self.current

    def decrease(self, amount: int) -> None:
        self.current -= amount
        self.freed += amount

    def row(self) -> list[int]:
        return [self.current, self.peak, self.allocated, self.freed]


class DeviceStats:
    """The statistics of one device: arrays of Stat over (all, small, large) plus counters."""

    def __init__(self):
        self.arrays = {name: (Stat(), Stat(), Stat()) for name in ARRAY_STATS}
        self.counters = dict.fromkeys(SCALAR_STATS, 0)

    def add(self, name: str, small: bool, amount: int) -> None:
        stats = self.arrays[name]
        if amount >= 0:
            stats[0].increase(amount)
            stats[1 if small else 2].increase(amount)
        else:
            stats[0].decrease(-amount)
            stats[1 if small else 2].decrease(-amount)

    def reset_peak(self) -> None:
        for stats in self.arrays.values():
            for stat in stats:
                stat.peak = stat.current

    def reset_accumulated(self) -> None:
        for stats in self.arrays.values():
            for stat in stats:
                stat.allocated = stat.freed = 0
        for name in ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
                     "num_device_free"):
            self.counters[name] = 0

    def rows(self) -> dict:
        """{name: [[current, peak, allocated, freed] for all, small, large], counter: value}."""
        result = {name: [stat.row() for stat in stats] for name, stats in self.arrays.items()}
        result.update(self.counters)
        return result

    def nested(self) -> dict:
        """torch.cuda.memory_stats_as_nested_dict's form."""
        result = {}
        for name, stats in self.arrays.items():
            result[name] = {pool: {"current": s.current, "peak": s.peak, "allocated": s.allocated,
                                   "freed": s.freed} for pool, s in zip(POOLS, stats)}
        result.update(self.counters)
        return result


@dataclass(eq=False)
class Segment:
    """One cnrt allocation the pools carve blocks from."""

    address: int
    size: int
    device: int
    small: bool


@dataclass(eq=False)
class Block:
    """A piece of a segment: allocated to a tensor, or free in its pool."""

    address: int
    size: int
    segment: Segment
    stream: int                        # the stream id it belongs to
    allocated: bool = False
    requested: int = 0
    prev: "Block | None" = None
    next: "Block | None" = None
    stream_uses: set = field(default_factory=set)  # other streams it was recorded on (record_stream)

    @property
    def split(self) -> bool:
        return self.prev is not None or self.next is not None

    def key(self) -> tuple:
        return (self.stream, self.size, self.address)


class Pool:
    """Free blocks of one device and size class, ordered by (stream, size, address): best fit per stream."""

    def __init__(self):
        self.keys: list[tuple] = []
        self.blocks: dict[tuple, Block] = {}

    def insert(self, block: Block) -> None:
        key = block.key()
        bisect.insort(self.keys, key)
        self.blocks[key] = block

    def remove(self, block: Block) -> None:
        key = block.key()
        index = bisect.bisect_left(self.keys, key)
        del self.keys[index]
        del self.blocks[key]

    def best_fit(self, stream: int, size: int) -> Block | None:
        index = bisect.bisect_left(self.keys, (stream, size, 0))
        if index < len(self.keys):
            key = self.keys[index]
            if key[0] == stream:
                return self.blocks[key]
        return None

    def streams(self) -> set[int]:
        return {key[0] for key in self.keys}

    def best_fit_any(self, size: int, usable) -> Block | None:
        """The smallest free block of at least `size` bytes on a stream for which `usable(stream)` is true."""
        best = None
        for stream in self.streams():
            if not usable(stream):
                continue
            found = self.best_fit(stream, size)
            if found is not None and (best is None or found.size < best.size):
                best = found
        return best


class DeviceCache:
    """The allocator state of one device."""

    def __init__(self, device: int):
        self.device = device
        self.small = Pool()
        self.large = Pool()
        self.segments: dict[int, Segment] = {}
        self.allocated: dict[int, Block] = {}       # address -> allocated block
        self.pending: list[tuple[Block, list]] = []  # freed blocks waiting for notifiers on other streams
        self.stats = DeviceStats()

    def pool(self, small: bool) -> Pool:
        return self.small if small else self.large


class CachingAllocator:
    """malloc/free for the C++ allocator, record_stream, empty_cache, statistics. Thread-safe."""

    def __init__(self, streams: Streams):
        self._streams = streams
        self._lock = threading.RLock()
        self.reset(0)
        _devices.on_rebuild(self.reset)

    def reset(self, device_count: int) -> None:
        """Start over on a rebuilt device table: the old segments went with the old devices (the C++ allocator does
        not forward frees of blocks from before the rebuild)."""
        with self._lock:
            self._devices = [DeviceCache(i) for i in range(device_count)]
            self._notifier_pool: list = []
            self._owner: dict[int, DeviceCache] = {}  # allocated address -> its device cache

    # ---- allocation --------------------------------------------------------------------------------------------
    def malloc(self, nbytes: int, device: int, stream: int) -> int:
        """A block of at least `nbytes` on `device` for use on stream `stream`; returns its address."""
        _devices.check()
        cache = self._devices[device]
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        with self._lock:
            if cache.pending:
                self._process_pending(cache)
            pool = cache.pool(small)
            block = pool.best_fit(stream, size)
            if block is None:
                block = pool.best_fit_any(size, lambda other: self._stream_idle(device, other))
                if block is not None:
                    self._adopt(pool, block, stream)
            if block is None:
                block = self._new_segment(cache, size, small, stream, nbytes)
            else:
                pool.remove(block)
                if block.split:
                    cache.stats.add("inactive_split", small, -1)
                    cache.stats.add("inactive_split_bytes", small, -block.size)
            block = self._split(cache, block, size)
            block.allocated = True
            block.requested = nbytes
            cache.allocated[block.address] = block
            self._owner[block.address] = cache
            stats = cache.stats
            stats.add("allocation", small, 1)
            stats.add("allocated_bytes", small, block.size)
            stats.add("active", small, 1)
            stats.add("active_bytes", small, block.size)
            stats.add("requested_bytes", small, nbytes)
            return block.address

    def _stream_idle(self, device: int, stream: int) -> bool:
        queue = self._streams.queue(device, stream)
        return cnrt.queueQuery(queue) == cnrt.cnrtSuccess

    def _adopt(self, pool: Pool, block: Block, stream: int) -> None:
        """Hand a free block of an idle stream over to `stream`."""
        pool.remove(block)
        block.stream = stream
        pool.insert(block)

    def _new_segment(self, cache: DeviceCache, size: int, small: bool, stream: int, requested: int) -> Block:
        nbytes = segment_size(size)
        address = self._device_malloc(cache, nbytes, requested)
        segment = Segment(address, nbytes, cache.device, small)
        cache.segments[address] = segment
        stats = cache.stats
        stats.add("segment", small, 1)
        stats.add("reserved_bytes", small, nbytes)
        stats.counters["num_device_alloc"] += 1
        return Block(address, nbytes, segment, stream)

    def _device_malloc(self, cache: DeviceCache, nbytes: int, requested: int) -> int:
        with on_device(cache.device):
            try:
                return cnrt.malloc(nbytes)
            except cnrt.CnrtError as error:
                if error.code != cnrt.cnrtErrorNoMem:
                    raise
            cache.stats.counters["num_alloc_retries"] += 1
            self._release_cached(cache)
            try:
                return cnrt.malloc(nbytes)
            except cnrt.CnrtError as error:
                if error.code != cnrt.cnrtErrorNoMem:
                    raise
                cache.stats.counters["num_ooms"] += 1
                raise torch.OutOfMemoryError(self._oom_message(cache, requested)) from None

    def _oom_message(self, cache: DeviceCache, requested: int) -> str:
        free, total = cnrt.memGetInfo()
        allocated = cache.stats.arrays["allocated_bytes"][0].current
        reserved = cache.stats.arrays["reserved_bytes"][0].current
        return (f"MLU out of memory. Tried to allocate {format_size(requested)}. MLU {cache.device} has a total "
                f"capacity of {format_size(total)} of which {format_size(free)} is free. Of the allocated memory "
                f"{format_size(allocated)} is allocated by PyTorch, and {format_size(reserved - allocated)} is "
                f"reserved by PyTorch but unallocated. (simulated GDRAM: MLUSIM_MEMORY sets its size)")

    def _split(self, cache: DeviceCache, block: Block, size: int) -> Block:
        """Keep `size` bytes of `block` for the allocation; the rest goes back to the pool as a free block."""
        remaining = block.size - size
        small = block.segment.small
        if remaining < (ROUND if small else SMALL_SIZE + 1):
            return block
        rest = Block(block.address + size, remaining, block.segment, block.stream)
        rest.prev, rest.next = block, block.next
        if block.next is not None:
            block.next.prev = rest
        block.next = rest
        block.size = size
        cache.pool(small).insert(rest)
        cache.stats.add("inactive_split", small, 1)
        cache.stats.add("inactive_split_bytes", small, remaining)
        return block

    # ---- freeing -----------------------------------------------------------------------------------------------
    def free(self, address: int) -> None:
        """Return a tensor's block: to its pool at once, or after the streams it was recorded on reached this
        point. Never waits for the device."""
        with self._lock:
            cache = self._owner.pop(address, None)
            if cache is None:
                raise ValueError(f"mlu: free of 0x{address:x}, which the caching allocator did not hand out")
            block = cache.allocated.pop(address)
            small = block.segment.small
            stats = cache.stats
            stats.add("allocation", small, -1)
            stats.add("allocated_bytes", small, -block.size)
            stats.add("requested_bytes", small, -block.requested)
            block.allocated = False
            if block.stream_uses:
                notifiers = [self._notifier_on(cache.device, stream) for stream in block.stream_uses]
                block.stream_uses = set()
                cache.pending.append((block, notifiers))
                return
            self._to_pool(cache, block)

    def _notifier_on(self, device: int, stream: int):
        notifier = self._notifier_pool.pop() if self._notifier_pool else \
            cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
        cnrt.placeNotifier(notifier, self._streams.queue(device, stream))
        return notifier

    def _process_pending(self, cache: DeviceCache) -> None:
        still = []
        for block, notifiers in cache.pending:
            if all(cnrt.queryNotifier(n) == cnrt.cnrtSuccess for n in notifiers):
                self._notifier_pool.extend(notifiers)
                self._to_pool(cache, block)
            else:
                still.append((block, notifiers))
        cache.pending = still

    def _to_pool(self, cache: DeviceCache, block: Block) -> None:
        small = block.segment.small
        pool = cache.pool(small)
        stats = cache.stats
        stats.add("active", small, -1)
        stats.add("active_bytes", small, -block.size)
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated and neighbour.stream == block.stream \
                    and neighbour.key() in pool.blocks and pool.blocks[neighbour.key()] is neighbour:
                pool.remove(neighbour)
                stats.add("inactive_split", small, -1)
                stats.add("inactive_split_bytes", small, -neighbour.size)
                self._merge(block, neighbour)
        if block.split:
            stats.add("inactive_split", small, 1)
            stats.add("inactive_split_bytes", small, block.size)
        pool.insert(block)

    @staticmethod
    def _merge(block: Block, neighbour: Block) -> None:
        if neighbour is block.prev:
            block.address = neighbour.address
            block.prev = neighbour.prev
            if block.prev is not None:
                block.prev.next = block
        else:
            block.next = neighbour.next
            if block.next is not None:
                block.next.prev = block
        block.size += neighbour.size

    # ---- streams -----------------------------------------------------------------------------------------------
    def record_stream(self, address: int, device: int, stream: int) -> None:
        """Tensor.record_stream: the block is also used on `stream`; do not reuse it before that use is done."""
        with self._lock:
            cache = self._owner.get(address)
            block = cache.allocated.get(address) if cache is not None else None
            if block is None:
                block = self._block_containing(address)
            if block is None:
                raise ValueError(f"mlu: record_stream of 0x{address:x}, which is not an allocated block")
            if stream != block.stream or device != block.segment.device:
                block.stream_uses.add(stream)

    def _block_containing(self, address: int) -> Block | None:
        for cache in self._devices:
            for block in cache.allocated.values():
                if block.address <= address < block.address + block.size:
                    return block
        return None

    # ---- releasing ---------------------------------------------------------------------------------------------
    def _release_cached(self, cache: DeviceCache) -> None:
        """Free every cached segment of `cache` that holds no allocated block (cnrtFree waits for the device's
        work on it)."""
        if cache.pending:
            cache.stats.counters["num_sync_all_streams"] += 1
            for _block, notifiers in cache.pending:
                for notifier in notifiers:
                    cnrt.waitNotifier(notifier)
            self._process_pending(cache)
        for small in (True, False):
            pool = cache.pool(small)
            for key in list(pool.keys):
                block = pool.blocks[key]
                if block.split:
                    continue
                pool.remove(block)
                segment = cache.segments.pop(block.segment.address)
                with on_device(cache.device):
                    cnrt.free(segment.address)
                stats = cache.stats
                stats.add("segment", small, -1)
                stats.add("reserved_bytes", small, -segment.size)
                stats.counters["num_device_free"] += 1

    def empty_cache(self) -> None:
        """torch.mlu.empty_cache: give every unused cached segment back to cnrt."""
        with self._lock:
            for cache in self._devices:
                self._release_cached(cache)

    # ---- statistics --------------------------------------------------------------------------------------------
    def stats(self, device: int) -> DeviceStats:
        _devices.check()
        return self._devices[device].stats

    def device_stats(self, device: int) -> dict:
        _devices.check()
        with self._lock:
            return self._devices[device].stats.rows()

    def reset_peak(self, device: int) -> None:
        _devices.check()
        with self._lock:
            self._devices[device].stats.reset_peak()

    def reset_accumulated(self, device: int) -> None:
        _devices.check()
        with self._lock:
            self._devices[device].stats.reset_accumulated()

    def snapshot(self, device: int) -> list[dict]:
        """Segments with their blocks (torch.cuda.memory_snapshot's shape, reduced)."""
        _devices.check()
        with self._lock:
            cache = self._devices[device]
            result = []
            for segment in cache.segments.values():
                blocks = []
                block = self._first_block(cache, segment)
                while block is not None:
                    blocks.append({"address": block.address, "size": block.size,
                                   "requested_size": block.requested if block.allocated else 0,
                                   "state": "active_allocated" if block.allocated else "inactive"})
                    block = block.next
                result.append({"device": device, "address": segment.address, "total_size": segment.size,
                               "segment_type": "small" if segment.small else "large", "blocks": blocks})
            return result

    @staticmethod
    def _first_block(cache: DeviceCache, segment: Segment) -> Block | None:
        candidates = [b for b in cache.allocated.values() if b.segment is segment]
        candidates += [b for pool in (cache.small, cache.large) for b in pool.blocks.values() if b.segment is segment]
        candidates += [b for b, _ in cache.pending if b.segment is segment]
        if not candidates:
            return None
        block = candidates[0]
        while block.prev is not None:
            block = block.prev
        return block
