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

import os
import threading

import torch

import cnrt

from .. import _devices
from .._queues import Streams, on_device
from . import settings as configuration, uncached
from .history import MemoryHistory, symbolizer
from .snapshot import segments_with_blocks
from .blocks import ROUND, SMALL_SIZE, Block, DeviceCache, Pool, Segment, segment_size
from .stats import (ALLOCATED_BYTES, ALLOCATION, INACTIVE_SPLIT, INACTIVE_SPLIT_BYTES, REQUESTED_BYTES,
                    RESERVED_BYTES, SEGMENT, DeviceStats, decrease, format_size, increase)


#: the request size torch's allocators refuse outright (2^60 bytes)
ONE_EXABYTE = 1 << 60


class _CollectFirst(Exception):
    """An allocation that would grow past garbage_collection_threshold: malloc gives cached segments back first."""


class CachingAllocator:
    """malloc/free for the C++ allocator, record_stream, empty_cache, statistics. Thread-safe."""

    def __init__(self, streams: Streams):
        self.streams = streams
        self.lock = threading.RLock()
        self.history = MemoryHistory()
        try:  # (the process's settings: a rebuilt device table keeps them)
            self.settings, self._settings_error = configuration.from_environment(), None
        except RuntimeError as error:  # raised by the first allocation, as torch's allocators do
            self.settings, self._settings_error = configuration.AllocatorSettings(), error
        self.reset(0)
        _devices.on_rebuild(self.reset)

    def reset(self, device_count: int) -> None:
        """Start over on a rebuilt device table: the old segments went with the old devices (the C++ allocator does
        not forward frees of blocks from before the rebuild)."""
        with self.lock:
            self._devices = [DeviceCache(i) for i in range(device_count)]
            self._notifier_pool: list = []
            self.owners: dict[int, DeviceCache] = {}  # allocated address -> its device cache
            self.uncached = uncached.from_environment()

    def configure(self, text: str) -> None:
        """torch.mlu.memory._set_allocator_settings: the settings `text` gives (the others back to defaults)."""
        parsed = configuration.AllocatorSettings.parse(text)
        with self.lock:
            self.settings, self._settings_error = parsed, None

    # ---- allocation --------------------------------------------------------------------------------------------
    def malloc(self, nbytes: int, device: int, stream: int) -> int:
        """A block of at least `nbytes` on `device` for use on stream `stream`; returns its address. When cnrt is
        out of memory, the cached segments are released (outside the allocator's lock: cnrtFree waits for queued
        work, which may itself free tensors) and the allocation is tried once more."""
        _devices.check()
        cache = self._devices[device]
        if nbytes >= ONE_EXABYTE:  # as torch's CUDA allocator: no device has that much
            raise torch.OutOfMemoryError("MLU out of memory. Tried to allocate more than 1EB memory.")
        if self._settings_error is not None:
            raise self._settings_error
        if self.uncached:
            return uncached.malloc(self, cache, nbytes, stream)
        size = self.settings.round_size(nbytes)
        try:
            with self.lock:
                address = self._allocate(cache, size, stream, nbytes)
                if address is None:
                    cache.stats.counters["num_alloc_retries"] += 1
        except _CollectFirst:  # garbage_collection_threshold: give cached segments back, then grow
            self._release_cached(cache)
            with self.lock:
                address = self._allocate(cache, size, stream, nbytes, collect=False)
        if address is None:
            self._release_cached(cache)
            with self.lock:
                address = self._allocate(cache, size, stream, nbytes, collect=False)
                if address is None:
                    cache.stats.counters["num_ooms"] += 1
                    raise torch.OutOfMemoryError(self.oom_message(cache, nbytes))
        return address

    def _allocate(self, cache: DeviceCache, size: int, stream: int, nbytes: int,
                  collect: bool = True) -> int | None:
        """The allocation proper (under the lock); None when a new segment was needed and cnrt had no memory."""
        if cache.pending:
            self._process_pending(cache)
        values = cache.stats.values
        parked = cache.parked.get((stream, size))
        if parked:  # a block of this size freed on this stream: the common case of a loop
            block = parked.pop()
            cache.parked_count -= 1
            if block.prev is not None or block.next is not None:
                decrease(values, INACTIVE_SPLIT, block.segment.pool, 1)
                decrease(values, INACTIVE_SPLIT_BYTES, block.segment.pool, block.size)
        else:
            block = self._from_pool(cache, size, stream, nbytes, collect)
            if block is None:
                return None
        block.allocated = True
        block.requested = nbytes
        if self.history.enabled:
            block.stack = self.history.stack()
            self.history.record(cache.device, "alloc", block.address, block.size, stream, block.stack)
        cache.allocated[block.address] = block
        self.owners[block.address] = cache
        offset = block.segment.pool
        increase(values, ALLOCATION, offset, 1)
        increase(values, ALLOCATED_BYTES, offset, block.size)
        increase(values, REQUESTED_BYTES, offset, nbytes)
        if cache.pending:
            cache.stats.note_active_peak(offset)
        return block.address

    def _from_pool(self, cache: DeviceCache, size: int, stream: int, nbytes: int, collect: bool) -> Block | None:
        """Best fit among the stream's free blocks (after merging the parked blocks if need be), else a new segment
        (None when cnrt has no memory); split to `size`. A best fit that max_split_size forbids means every larger
        block is forbidden too.

        A free block serves its own stream only, as in torch's CUDA allocator: a tensor may have been used on
        other streams without record_stream (correct there, since its block comes back to its own stream only),
        so even an idle owning stream does not say that its block is no longer read or written. Memory moves
        between streams when cached segments are released (cnrtFree waits for the work queued on them)."""
        settings = self.settings
        small = size <= SMALL_SIZE
        pool = cache.small if small else cache.large
        block = self._permitted(pool.best_fit(stream, size), size, settings)
        if block is None and cache.parked_count:
            self._merge_parked(cache)
            block = self._permitted(pool.best_fit(stream, size), size, settings)
        if block is None:
            if collect and settings.garbage_collection_threshold and self._over_threshold(cache, settings):
                raise _CollectFirst  # (torch's allocator collects only when it would grow, as here)
            block = self._new_segment(cache, size, small, stream)
            if block is None:
                return None
        else:
            pool.remove(block)
            if block.prev is not None or block.next is not None:
                values = cache.stats.values
                decrease(values, INACTIVE_SPLIT, block.segment.pool, 1)
                decrease(values, INACTIVE_SPLIT_BYTES, block.segment.pool, block.size)
        if block.size - size >= (ROUND if small else SMALL_SIZE + 1) and settings.may_split(block.size):
            self._split(cache, pool, block, size)
        return block

    @staticmethod
    def _permitted(block: Block | None, size: int, settings) -> Block | None:
        return block if block is not None and settings.may_serve(block.size, size) else None

    @staticmethod
    def _over_threshold(cache: DeviceCache, settings) -> bool:
        """Whether the device's reserved memory is past garbage_collection_threshold of what it may use."""
        if cache.allowed_bytes is not None:
            allowed = cache.allowed_bytes
        else:
            with on_device(cache.device):
                allowed = cnrt.memGetInfo()[1]
        return cache.stats.current(RESERVED_BYTES) > settings.garbage_collection_threshold * allowed

    def _new_segment(self, cache: DeviceCache, size: int, small: bool, stream: int) -> Block | None:
        """A new cnrt allocation for a request of `size` (None when cnrt is out of memory)."""
        nbytes = segment_size(size)
        if not cache.admits(nbytes):
            return None
        with on_device(cache.device):
            try:
                address = cnrt.malloc(nbytes)
            except cnrt.CnrtError as error:
                if error.code != cnrt.cnrtErrorNoMem:
                    raise
                return None
        segment = Segment(address, nbytes, cache.device, small, stream=stream)
        if self.history.enabled:
            segment.stack = self.history.stack(kept_with=("alloc", "all"))
            self.history.record(cache.device, "segment_alloc", address, nbytes, stream, segment.stack)
        cache.segments[address] = segment
        values = cache.stats.values
        increase(values, SEGMENT, segment.pool, 1)
        increase(values, RESERVED_BYTES, segment.pool, nbytes)
        cache.stats.counters["num_device_alloc"] += 1
        return Block(address, nbytes, segment, stream)

    def oom_message(self, cache: DeviceCache, requested: int) -> str:
        with on_device(cache.device):
            free, total = cnrt.memGetInfo()
        allocated = cache.stats.current(ALLOCATED_BYTES)
        reserved = cache.stats.current(RESERVED_BYTES)
        return (f"MLU out of memory. Tried to allocate {format_size(requested)}. MLU {cache.device} has a total "
                f"capacity of {format_size(total)} of which {format_size(free)} is free. Of the allocated memory "
                f"{format_size(allocated)} is allocated by PyTorch, and {format_size(reserved - allocated)} is "
                f"reserved by PyTorch but unallocated."
                + ("" if cache.allowed_bytes is None else
                   f" This process may reserve {format_size(cache.allowed_bytes)} of it "
                   f"(set_per_process_memory_fraction).")
                + " (simulated GDRAM: MLUSIM_MEMORY sets its size)")

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
        increase(values, INACTIVE_SPLIT, block.segment.pool, 1)
        increase(values, INACTIVE_SPLIT_BYTES, block.segment.pool, remaining)

    # ---- freeing -----------------------------------------------------------------------------------------------
    def free(self, address: int) -> None:
        """Return a tensor's block: to its pool at once, or after the streams it was recorded on reached this
        point. Never waits for the device."""
        with self.lock:
            cache = self.owners.pop(address, None)
            if cache is None:
                raise ValueError(f"mlu: free of 0x{address:x}, which the caching allocator did not hand out")
            block = cache.allocated.pop(address)
            offset = block.segment.pool
            values = cache.stats.values
            decrease(values, ALLOCATION, offset, 1)
            decrease(values, ALLOCATED_BYTES, offset, block.size)
            decrease(values, REQUESTED_BYTES, offset, block.requested)
            block.allocated = False
            block.stack = None
            history = self.history
            if history.enabled:
                history.record(cache.device, "free_requested", address, block.size, block.stream)
            if block.segment.uncached:
                uncached.free(self, cache, block)
                return
            if block.stream_uses:
                notifiers = [self._notifier_on(cache.device, stream) for stream in block.stream_uses]
                block.stream_uses = None
                cache.pending.append((block, notifiers))
                cache.stats.wait(offset, block.size, 1)
                return
            if history.enabled:
                history.record(cache.device, "free_completed", address, block.size, block.stream)
            # parked, not merged: the next allocation of this size on this stream takes it back at once; parked
            # blocks are merged into the pool when an allocation finds nothing there, and before releasing memory
            if block.prev is not None or block.next is not None:
                increase(values, INACTIVE_SPLIT, offset, 1)
                increase(values, INACTIVE_SPLIT_BYTES, offset, block.size)
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
                    decrease(values, INACTIVE_SPLIT, block.segment.pool, 1)
                    decrease(values, INACTIVE_SPLIT_BYTES, block.segment.pool, block.size)
                self._to_pool(cache, block)
        cache.parked.clear()
        cache.parked_count = 0

    def _notifier_on(self, device: int, stream: int):
        notifier = self._notifier_pool.pop() if self._notifier_pool else \
            cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
        cnrt.placeNotifier(notifier, self.streams.queue(device, stream))
        return notifier

    def _process_pending(self, cache: DeviceCache) -> None:
        still = []
        for block, notifiers in cache.pending:
            if all(cnrt.queryNotifier(n) == cnrt.cnrtSuccess for n in notifiers):
                self._notifier_pool.extend(notifiers)
                cache.stats.wait(block.segment.pool, block.size, -1)
                if self.history.enabled:
                    self.history.record(cache.device, "free_completed", block.address, block.size, block.stream)
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
                decrease(values, INACTIVE_SPLIT, segment.pool, 1)
                decrease(values, INACTIVE_SPLIT_BYTES, segment.pool, neighbour.size)
                self._merge(block, neighbour)
        if block.prev is not None or block.next is not None:
            increase(values, INACTIVE_SPLIT, segment.pool, 1)
            increase(values, INACTIVE_SPLIT_BYTES, segment.pool, block.size)
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
        with self.lock:
            cache = self.owners.get(address)
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
        with self.lock:
            waits = [n for _block, notifiers in cache.pending for n in notifiers]
            if waits:
                cache.stats.counters["num_sync_all_streams"] += 1
        for notifier in waits:
            cnrt.waitNotifier(notifier)
        with self.lock:
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
                    decrease(values, SEGMENT, segment.pool, 1)
                    decrease(values, RESERVED_BYTES, segment.pool, segment.size)
                    cache.stats.counters["num_device_free"] += 1
                    if self.history.enabled:
                        self.history.record(cache.device, "segment_free", segment.address, segment.size,
                                            segment.stream)
                    released.append(segment.address)
        with on_device(cache.device):
            for address in released:
                cnrt.free(address)

    def empty_cache(self) -> None:
        """torch.mlu.empty_cache: give every unused cached segment back to cnrt."""
        _devices.check()  # (segments of a device table rebuilt since went with its devices)
        with self.lock:
            caches = list(self._devices)
        for cache in caches:
            self._release_cached(cache)

    # ---- statistics --------------------------------------------------------------------------------------------
    def set_memory_fraction(self, fraction: float, device: int) -> None:
        """Let this process reserve at most `fraction` of the device's memory (0 to 1)."""
        with on_device(device):
            total = cnrt.memGetInfo()[1]
        with self.lock:
            self._devices[device].allowed_bytes = int(fraction * total)

    def memory_fraction(self, device: int) -> float:
        """The fraction set by set_memory_fraction (1.0 when none was)."""
        allowed = self._devices[device].allowed_bytes
        if allowed is None:
            return 1.0
        with on_device(device):
            return allowed / cnrt.memGetInfo()[1]

    def stats(self, device: int) -> DeviceStats:
        _devices.check()
        return self._devices[device].stats

    def device_stats(self, device: int) -> dict:
        _devices.check()
        with self.lock:
            return self._devices[device].stats.rows()

    def memory_totals(self, device: int) -> tuple[int, int]:
        """(allocated, reserved) bytes of the device now: what each allocation torch's profiler records carries
        (profile_memory=True)."""
        _devices.check()
        stats = self._devices[device].stats
        return stats.current(ALLOCATED_BYTES), stats.current(RESERVED_BYTES)

    def reset_peak(self, device: int) -> None:
        _devices.check()
        with self.lock:
            self._devices[device].stats.reset_peak()

    def reset_accumulated(self, device: int) -> None:
        _devices.check()
        with self.lock:
            self._devices[device].stats.reset_accumulated()

    def snapshot(self) -> dict:
        """torch.mlu.memory._snapshot: every device's segments with their blocks, and the memory history's
        trace of each device (torch.cuda.memory._snapshot's shape)."""
        _devices.check()
        with self.lock:
            caches = list(self._devices)
            stacks = [s.stack for c in caches for s in c.segments.values()]
            stacks += [b.stack for c in caches for b in c.allocated.values()]
            stacks += [entry[4] for trace in self.history.traces.values() for entry in trace]
            frames_of = symbolizer(stacks)
            segments = [segment for cache in caches for segment in segments_with_blocks(cache, frames_of)]
            return {"segments": segments, "device_traces": self.history.device_traces(len(caches), frames_of)}

    def record_history(self, enabled, context, stacks, max_entries, clear: bool, skip_actions=()) -> None:
        """torch.mlu.memory._record_memory_history (history.py)."""
        with self.lock:
            self.history.configure(enabled, context, stacks, max_entries, clear, skip_actions)
