"""The stream-ordered caching allocator behind every mlu tensor (the counterpart of CUDA's caching allocator).

Device memory comes from `cnrt.malloc` in segments and is handed out as blocks carved from them:
- small pool: requests up to 1 MiB, rounded up to 512 bytes, carved from 2 MiB segments;
- large pool: larger requests, rounded up to 512 bytes, from 20 MiB segments (requests under 10 MiB) or from a
  segment of their own rounded up to 2 MiB.
A block belongs to the stream it was allocated on. Freeing never waits for the device: the block is kept for the
next allocation of its size on the same stream, which takes it at once (that stream's queue is in order, so its
earlier work on the block comes first); such parked blocks are merged back into the pool (CUDA merges at free
time) when an allocation finds nothing there, and before memory is given back. Another stream takes a cached block only once the owning
stream's queue has finished all its work. A block used on other streams (`Tensor.record_stream`) returns to the
pool only when notifiers placed on those streams at free time have been reached.
When cnrt runs out of simulated GDRAM, the cached segments are released (after the device's work on them is done)
and the allocation is tried once more; then it fails with torch.OutOfMemoryError naming the sizes.
Statistics follow torch.cuda.memory_stats: each has current/peak/allocated/freed for all, small_pool, large_pool.
PYTORCH_NO_MLU_MEMORY_CACHING=1 gives every tensor its own cnrt allocation instead (freed with cnrtMemFreeAsync on
its stream), so that mlusim's pointer checks see each tensor's bounds and lifetime.
"""
from __future__ import annotations

import bisect
import os
import threading

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


def segment_size(nbytes: int) -> int:
    if nbytes <= SMALL_SIZE:
        return SMALL_SEGMENT
    if nbytes < MIN_LARGE_ALLOC:
        return LARGE_SEGMENT
    return (nbytes + ROUND_LARGE - 1) // ROUND_LARGE * ROUND_LARGE


def uncached_from_environment() -> bool:
    """PYTORCH_NO_MLU_MEMORY_CACHING (torch_mlu's name; PYTORCH_NO_CUDA_MEMORY_CACHING is read too): set and not
    0/no/off turns the cache off."""
    value = os.environ.get("PYTORCH_NO_MLU_MEMORY_CACHING", os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING"))
    return value is not None and value.strip().lower() not in ("0", "no", "off", "false")


def format_size(nbytes: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(nbytes) < 1024 or unit == "GiB":
            return f"{nbytes:.2f} {unit}" if unit != "B" else f"{nbytes} B"
        nbytes /= 1024
    return f"{nbytes:.2f} GiB"


# Statistics: for each name of torch.cuda.memory_stats, (current, peak, allocated, freed) for all, small_pool and
# large_pool, kept in one flat list per device (the allocation path updates a few entries in straight-line code).
_FIELDS = ("current", "peak", "allocated", "freed")
_STAT = 12                      # ints per statistic: 3 pools x 4 fields
SMALL, LARGE = 4, 8             # offsets of the small and large pool within a statistic
(ALLOCATION, SEGMENT, ACTIVE, INACTIVE_SPLIT, ALLOCATED_BYTES, RESERVED_BYTES, ACTIVE_BYTES, INACTIVE_SPLIT_BYTES,
 REQUESTED_BYTES) = (i * _STAT for i in range(len(ARRAY_STATS)))


def _increase(values: list, stat: int, pool: int, amount: int) -> None:
    """values[stat] (all) and values[stat + pool] grow by `amount`."""
    current = values[stat] + amount
    values[stat] = current
    values[stat + 2] += amount
    if current > values[stat + 1]:
        values[stat + 1] = current
    i = stat + pool
    current = values[i] + amount
    values[i] = current
    values[i + 2] += amount
    if current > values[i + 1]:
        values[i + 1] = current


def _decrease(values: list, stat: int, pool: int, amount: int) -> None:
    values[stat] -= amount
    values[stat + 3] += amount
    values[stat + pool] -= amount
    values[stat + pool + 3] += amount


class DeviceStats:
    """The allocator statistics of one device.

    "active" (blocks allocated or still used by a stream) is "allocation" plus the freed blocks waiting for the
    streams they were recorded on (record_stream), so it costs nothing while no block waits; its peak is kept
    apart for the moments when some do."""

    def __init__(self):
        self.values = [0] * (_STAT * len(ARRAY_STATS))
        self.counters = dict.fromkeys(SCALAR_STATS, 0)
        self.waiting = [0] * _STAT        # (count, bytes, -, -) of waiting blocks for all, small, large
        self.active_peaks = [0] * _STAT   # (count peak, bytes peak, -, -) while blocks waited

    def wait(self, pool: int, nbytes: int, sign: int) -> None:
        """A freed block starts (sign 1) or stops (sign -1) waiting for other streams."""
        for i in (0, pool):
            self.waiting[i] += sign
            self.waiting[i + 1] += sign * nbytes

    def note_active_peak(self, pool: int) -> None:
        """After an allocation while blocks wait: the active peaks may have grown."""
        values, waiting, peaks = self.values, self.waiting, self.active_peaks
        for i in (0, pool):
            peaks[i] = max(peaks[i], values[ALLOCATION + i] + waiting[i])
            peaks[i + 1] = max(peaks[i + 1], values[ALLOCATED_BYTES + i] + waiting[i + 1])

    def reset_peak(self) -> None:
        values = self.values
        for i in range(0, len(values), 4):
            values[i + 1] = values[i]
        for i in (0, SMALL, LARGE):
            self.active_peaks[i] = values[ALLOCATION + i] + self.waiting[i]
            self.active_peaks[i + 1] = values[ALLOCATED_BYTES + i] + self.waiting[i + 1]

    def reset_accumulated(self) -> None:
        values = self.values
        for i in range(0, len(values), 4):
            values[i + 2] = values[i + 3] = 0
        for name in ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
                     "num_device_free"):
            self.counters[name] = 0

    def rows(self) -> dict:
        """{name: [[current, peak, allocated, freed] for all, small, large], counter: value}."""
        values, waiting, peaks = self.values, self.waiting, self.active_peaks
        result = {}
        for k, name in enumerate(ARRAY_STATS):
            result[name] = [values[k * _STAT + p:k * _STAT + p + 4] for p in (0, SMALL, LARGE)]
        for name, source, field in (("active", "allocation", 0), ("active_bytes", "allocated_bytes", 1)):
            rows = []
            for row, p in zip(result[source], (0, SMALL, LARGE)):
                current, peak, allocated, freed = row
                rows.append([current + waiting[p + field], max(peak, peaks[p + field]), allocated,
                             freed - waiting[p + field]])
            result[name] = rows
        result.update(self.counters)
        return result

    def nested(self) -> dict:
        """torch.cuda.memory_stats_as_nested_dict's form. There are no oversize blocks: every block may be split
        (torch's max_split_size is unlimited by default)."""
        result = {name: {pool: dict(zip(_FIELDS, row)) for pool, row in zip(POOLS, rows)}
                  for name, rows in self.rows().items() if name in ARRAY_STATS}
        for name in ("oversize_allocations", "oversize_segments"):
            result[name] = dict.fromkeys(_FIELDS, 0)
        result.update(self.counters)
        return result

    def current(self, stat: int) -> int:
        return self.values[stat]


class Segment:
    """One cnrt allocation the pools carve blocks from."""

    __slots__ = ("address", "size", "device", "small", "pool", "uncached")

    def __init__(self, address: int, size: int, device: int, small: bool, uncached: bool = False):
        self.address, self.size, self.device, self.small = address, size, device, small
        self.pool = SMALL if small else LARGE  # its offset in the statistics
        self.uncached = uncached  # one tensor's own cnrt allocation (PYTORCH_NO_MLU_MEMORY_CACHING)


class Block:
    """A piece of a segment: allocated to a tensor, or free in its pool. `key` orders free blocks for best fit."""

    __slots__ = ("address", "size", "segment", "stream", "allocated", "requested", "prev", "next", "stream_uses",
                 "key")

    def __init__(self, address: int, size: int, segment: Segment, stream: int):
        self.address, self.size, self.segment, self.stream = address, size, segment, stream
        self.allocated = False
        self.requested = 0
        self.prev: Block | None = None
        self.next: Block | None = None
        self.stream_uses: set | None = None  # other streams it was recorded on (record_stream)
        self.key = (stream, size, address)

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
        self.parked: dict[tuple[int, int], list[Block]] = {}  # (stream, size) -> freed blocks not yet merged
        self.parked_count = 0
        self.stats = DeviceStats()



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
            self.uncached = uncached_from_environment()

    # ---- allocation --------------------------------------------------------------------------------------------
    def malloc(self, nbytes: int, device: int, stream: int) -> int:
        """A block of at least `nbytes` on `device` for use on stream `stream`; returns its address. When cnrt is
        out of memory, the cached segments are released (outside the allocator's lock: cnrtFree waits for queued
        work, which may itself free tensors) and the allocation is tried once more."""
        _devices.check()
        cache = self._devices[device]
        if self.uncached:
            return self._malloc_uncached(cache, nbytes, stream)
        size = max(ROUND, (nbytes + ROUND - 1) // ROUND * ROUND)
        with self._lock:
            address = self._allocate(cache, size, stream, nbytes)
            if address is None:
                cache.stats.counters["num_alloc_retries"] += 1
        if address is None:
            self._release_cached(cache)
            with self._lock:
                address = self._allocate(cache, size, stream, nbytes)
                if address is None:
                    cache.stats.counters["num_ooms"] += 1
                    raise torch.OutOfMemoryError(self._oom_message(cache, nbytes))
        return address

    def _allocate(self, cache: DeviceCache, size: int, stream: int, nbytes: int) -> int | None:
        """The allocation proper (under the lock); None when a new segment was needed and cnrt had no memory."""
        if cache.pending:
            self._process_pending(cache)
        values = cache.stats.values
        parked = cache.parked.get((stream, size))
        if parked:  # a block of this size freed on this stream: the common case of a loop
            block = parked.pop()
            cache.parked_count -= 1
            if block.prev is not None or block.next is not None:
                _decrease(values, INACTIVE_SPLIT, block.segment.pool, 1)
                _decrease(values, INACTIVE_SPLIT_BYTES, block.segment.pool, block.size)
        else:
            block = self._from_pool(cache, size, stream, nbytes)
            if block is None:
                return None
        block.allocated = True
        block.requested = nbytes
        cache.allocated[block.address] = block
        self._owner[block.address] = cache
        offset = block.segment.pool
        _increase(values, ALLOCATION, offset, 1)
        _increase(values, ALLOCATED_BYTES, offset, block.size)
        _increase(values, REQUESTED_BYTES, offset, nbytes)
        if cache.pending:
            cache.stats.note_active_peak(offset)
        return block.address

    def _from_pool(self, cache: DeviceCache, size: int, stream: int, nbytes: int) -> Block | None:
        """Best fit from the pool (after merging the parked blocks if need be), else from another stream's free
        blocks once that stream is idle, else from a new segment (None when cnrt has no memory); split to `size`."""
        small = size <= SMALL_SIZE
        pool = cache.small if small else cache.large
        block = pool.best_fit(stream, size)
        if block is None and cache.parked_count:
            self._merge_parked(cache)
            block = pool.best_fit(stream, size)
        if block is None:
            block = pool.best_fit_any(size, lambda other: self._stream_idle(cache.device, other))
            if block is not None:
                self._adopt(pool, block, stream)
        if block is None:
            block = self._new_segment(cache, size, small, stream)
            if block is None:
                return None
        else:
            pool.remove(block)
            if block.prev is not None or block.next is not None:
                values = cache.stats.values
                _decrease(values, INACTIVE_SPLIT, block.segment.pool, 1)
                _decrease(values, INACTIVE_SPLIT_BYTES, block.segment.pool, block.size)
        if block.size - size >= (ROUND if small else SMALL_SIZE + 1):
            self._split(cache, pool, block, size)
        return block

    def _stream_idle(self, device: int, stream: int) -> bool:
        queue = self._streams.queue(device, stream)
        return cnrt.queueQuery(queue) == cnrt.cnrtSuccess

    @staticmethod
    def _adopt(pool: Pool, block: Block, stream: int) -> None:
        """Hand a free block of an idle stream over to `stream`."""
        pool.remove(block)
        block.stream = stream
        block.rekey()
        pool.insert(block)

    def _new_segment(self, cache: DeviceCache, size: int, small: bool, stream: int) -> Block | None:
        """A new cnrt allocation for a request of `size` (None when cnrt is out of memory)."""
        nbytes = segment_size(size)
        with on_device(cache.device):
            try:
                address = cnrt.malloc(nbytes)
            except cnrt.CnrtError as error:
                if error.code != cnrt.cnrtErrorNoMem:
                    raise
                return None
        segment = Segment(address, nbytes, cache.device, small)
        cache.segments[address] = segment
        values = cache.stats.values
        _increase(values, SEGMENT, segment.pool, 1)
        _increase(values, RESERVED_BYTES, segment.pool, nbytes)
        cache.stats.counters["num_device_alloc"] += 1
        return Block(address, nbytes, segment, stream)

    def _oom_message(self, cache: DeviceCache, requested: int) -> str:
        with on_device(cache.device):
            free, total = cnrt.memGetInfo()
        allocated = cache.stats.current(ALLOCATED_BYTES)
        reserved = cache.stats.current(RESERVED_BYTES)
        return (f"MLU out of memory. Tried to allocate {format_size(requested)}. MLU {cache.device} has a total "
                f"capacity of {format_size(total)} of which {format_size(free)} is free. Of the allocated memory "
                f"{format_size(allocated)} is allocated by PyTorch, and {format_size(reserved - allocated)} is "
                f"reserved by PyTorch but unallocated. (simulated GDRAM: MLUSIM_MEMORY sets its size)")

    @staticmethod
    def _split(cache: DeviceCache, pool: Pool, block: Block, size: int) -> None:
        """Keep `size` bytes of `block` for the allocation; the rest goes back to the pool as a free block."""
        remaining = block.size - size
        rest = Block(block.address + size, remaining, block.segment, block.stream)
        rest.prev, rest.next = block, block.next
        if block.next is not None:
            block.next.prev = rest
        block.next = rest
        block.size = size
        block.rekey()
        pool.insert(rest)
        values = cache.stats.values
        _increase(values, INACTIVE_SPLIT, block.segment.pool, 1)
        _increase(values, INACTIVE_SPLIT_BYTES, block.segment.pool, remaining)

    # ---- freeing -----------------------------------------------------------------------------------------------
    def free(self, address: int) -> None:
        """Return a tensor's block: to its pool at once, or after the streams it was recorded on reached this
        point. Never waits for the device."""
        with self._lock:
            cache = self._owner.pop(address, None)
            if cache is None:
                raise ValueError(f"mlu: free of 0x{address:x}, which the caching allocator did not hand out")
            block = cache.allocated.pop(address)
            offset = block.segment.pool
            values = cache.stats.values
            _decrease(values, ALLOCATION, offset, 1)
            _decrease(values, ALLOCATED_BYTES, offset, block.size)
            _decrease(values, REQUESTED_BYTES, offset, block.requested)
            block.allocated = False
            if block.segment.uncached:
                self._free_uncached(cache, block)
                return
            if block.stream_uses:
                notifiers = [self._notifier_on(cache.device, stream) for stream in block.stream_uses]
                block.stream_uses = None
                cache.pending.append((block, notifiers))
                cache.stats.wait(offset, block.size, 1)
                return
            # parked, not merged: the next allocation of this size on this stream takes it back at once; parked
            # blocks are merged into the pool when an allocation finds nothing there, and before releasing memory
            if block.prev is not None or block.next is not None:
                _increase(values, INACTIVE_SPLIT, offset, 1)
                _increase(values, INACTIVE_SPLIT_BYTES, offset, block.size)
            key = (block.stream, block.size)
            parked = cache.parked.get(key)
            if parked is None:
                cache.parked[key] = [block]
            else:
                parked.append(block)
            cache.parked_count += 1

    def _merge_parked(self, cache: DeviceCache) -> None:
        """Move the parked blocks into the pool, merged with their free neighbours."""
        values = cache.stats.values
        for blocks in cache.parked.values():
            for block in blocks:
                if block.prev is not None or block.next is not None:
                    _decrease(values, INACTIVE_SPLIT, block.segment.pool, 1)
                    _decrease(values, INACTIVE_SPLIT_BYTES, block.segment.pool, block.size)
                self._to_pool(cache, block)
        cache.parked.clear()
        cache.parked_count = 0

    # ---- without the cache (PYTORCH_NO_MLU_MEMORY_CACHING=1) -----------------------------------------------------
    def _malloc_uncached(self, cache: DeviceCache, nbytes: int, stream: int) -> int:
        """Every tensor its own cnrt allocation of exactly its size: the simulator's pointer checks (bounds, use
        after free) then see each tensor, which the cache's segments hide."""
        with on_device(cache.device):
            try:
                address = cnrt.malloc(nbytes)
            except cnrt.CnrtError as error:
                if error.code != cnrt.cnrtErrorNoMem:
                    raise
                with self._lock:
                    cache.stats.counters["num_ooms"] += 1
                raise torch.OutOfMemoryError(self._oom_message(cache, nbytes)) from None
        segment = Segment(address, nbytes, cache.device, nbytes <= SMALL_SIZE, uncached=True)
        block = Block(address, nbytes, segment, stream)
        block.allocated, block.requested = True, nbytes
        with self._lock:
            cache.segments[address] = segment
            cache.allocated[address] = block
            self._owner[address] = cache
            values = cache.stats.values
            for stat, amount in ((SEGMENT, 1), (RESERVED_BYTES, nbytes), (ALLOCATION, 1), (ALLOCATED_BYTES, nbytes),
                                 (REQUESTED_BYTES, nbytes)):
                _increase(values, stat, segment.pool, amount)
            cache.stats.counters["num_device_alloc"] += 1
        return address

    def _free_uncached(self, cache: DeviceCache, block: Block) -> None:
        """cnrtMemFreeAsync on the block's stream, after the streams it was recorded on reach this point: freeing
        still never waits for the device. (Called with the lock held; only queues work.)"""
        segment = cache.segments.pop(block.address)
        values = cache.stats.values
        _decrease(values, SEGMENT, segment.pool, 1)
        _decrease(values, RESERVED_BYTES, segment.pool, segment.size)
        cache.stats.counters["num_device_free"] += 1
        own = self._streams.queue(cache.device, block.stream)
        for stream in block.stream_uses or ():
            notifier = cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
            cnrt.placeNotifier(notifier, self._streams.queue(cache.device, stream))
            cnrt.queueWaitNotifier(notifier, own, 0)
        cnrt.memFreeAsync(block.address, own)

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
                cache.stats.wait(block.segment.pool, block.size, -1)
                self._to_pool(cache, block)
            else:
                still.append((block, notifiers))
        cache.pending = still

    def _to_pool(self, cache: DeviceCache, block: Block) -> None:
        """A free block back into its pool, merged with free neighbours of the same stream."""
        segment = block.segment
        pool = cache.small if segment.small else cache.large
        values = cache.stats.values
        for neighbour in (block.prev, block.next):
            if neighbour is not None and not neighbour.allocated and neighbour.stream == block.stream \
                    and pool.blocks.get(neighbour.key) is neighbour:
                pool.remove(neighbour)
                _decrease(values, INACTIVE_SPLIT, segment.pool, 1)
                _decrease(values, INACTIVE_SPLIT_BYTES, segment.pool, neighbour.size)
                self._merge(block, neighbour)
        if block.prev is not None or block.next is not None:
            _increase(values, INACTIVE_SPLIT, segment.pool, 1)
            _increase(values, INACTIVE_SPLIT_BYTES, segment.pool, block.size)
        block.rekey()
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
                if block.stream_uses is None:
                    block.stream_uses = set()
                block.stream_uses.add(stream)

    def _block_containing(self, address: int) -> Block | None:
        for cache in self._devices:
            for block in cache.allocated.values():
                if block.address <= address < block.address + block.size:
                    return block
        return None

    # ---- releasing ---------------------------------------------------------------------------------------------
    def _release_cached(self, cache: DeviceCache) -> None:
        """Free every cached segment of `cache` that holds no allocated block. The waits (for notifiers of blocks
        recorded on other streams; cnrtFree for work still queued on a segment) happen outside the allocator's lock,
        since queued work that finishes may free tensors and so need it."""
        with self._lock:
            waits = [n for _block, notifiers in cache.pending for n in notifiers]
            if waits:
                cache.stats.counters["num_sync_all_streams"] += 1
        for notifier in waits:
            cnrt.waitNotifier(notifier)
        with self._lock:
            self._process_pending(cache)
            self._merge_parked(cache)
            released = []
            values = cache.stats.values
            for pool in (cache.small, cache.large):
                for key in list(pool.keys):
                    block = pool.blocks[key]
                    if block.prev is not None or block.next is not None:
                        continue
                    pool.remove(block)
                    segment = cache.segments.pop(block.segment.address)
                    _decrease(values, SEGMENT, segment.pool, 1)
                    _decrease(values, RESERVED_BYTES, segment.pool, segment.size)
                    cache.stats.counters["num_device_free"] += 1
                    released.append(segment.address)
        with on_device(cache.device):
            for address in released:
                cnrt.free(address)

    def empty_cache(self) -> None:
        """torch.mlu.empty_cache: give every unused cached segment back to cnrt."""
        with self._lock:
            caches = list(self._devices)
        for cache in caches:
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
        candidates += [b for blocks in cache.parked.values() for b in blocks if b.segment is segment]
        if not candidates:
            return None
        block = candidates[0]
        while block.prev is not None:
            block = block.prev
        return block
