"""The allocator without its cache (PYTORCH_NO_MLU_MEMORY_CACHING=1): every tensor its own cnrt allocation of
exactly its size, freed with cnrtMemFreeAsync on its stream, so that mlusim's pointer checks (bounds, use after
free) see each tensor, which the cache's segments hide. The statistics are kept as with the cache."""
from __future__ import annotations

import os

import torch

import cnrt

from .._queues import on_device
from .blocks import SMALL_SIZE, Block, DeviceCache, Segment
from .stats import ALLOCATED_BYTES, ALLOCATION, REQUESTED_BYTES, RESERVED_BYTES, SEGMENT, decrease, increase


def from_environment() -> bool:
    """PYTORCH_NO_MLU_MEMORY_CACHING (torch_mlu's name; PYTORCH_NO_CUDA_MEMORY_CACHING is read too): set and not
    0/no/off turns the cache off."""
    value = os.environ.get("PYTORCH_NO_MLU_MEMORY_CACHING", os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING"))
    return value is not None and value.strip().lower() not in ("0", "no", "off", "false")


def malloc(allocator, cache: DeviceCache, nbytes: int, stream: int) -> int:
    """Every tensor its own cnrt allocation of exactly its size: the simulator's pointer checks (bounds, use
    after free) then see each tensor, which the cache's segments hide."""
    address = None
    with on_device(cache.device):
        if cache.admits(nbytes):  # (within the process's memory fraction)
            try:
                address = cnrt.malloc(nbytes)
            except cnrt.CnrtError as error:
                if error.code != cnrt.cnrtErrorNoMem:
                    raise
    if address is None:
        with allocator.lock:
            cache.stats.counters["num_ooms"] += 1
        raise torch.OutOfMemoryError(allocator.oom_message(cache, nbytes))
    segment = Segment(address, nbytes, cache.device, nbytes <= SMALL_SIZE, uncached=True)
    block = Block(address, nbytes, segment, stream)
    block.allocated, block.requested = True, nbytes
    with allocator.lock:
        cache.segments[address] = segment
        cache.allocated[address] = block
        allocator.owners[address] = cache
        values = cache.stats.values
        for stat, amount in ((SEGMENT, 1), (RESERVED_BYTES, nbytes), (ALLOCATION, 1), (ALLOCATED_BYTES, nbytes),
                             (REQUESTED_BYTES, nbytes)):
            increase(values, stat, segment.pool, amount)
        cache.stats.counters["num_device_alloc"] += 1
    return address


def free(allocator, cache: DeviceCache, block: Block) -> None:
    """cnrtMemFreeAsync on the block's stream, after the streams it was recorded on reach this point: freeing
    still never waits for the device. (Called with the lock held; only queues work.)"""
    segment = cache.segments.pop(block.address)
    values = cache.stats.values
    decrease(values, SEGMENT, segment.pool, 1)
    decrease(values, RESERVED_BYTES, segment.pool, segment.size)
    cache.stats.counters["num_device_free"] += 1
    own = allocator.streams.queue(cache.device, block.stream)
    for stream in block.stream_uses or ():
        notifier = cnrt.notifierCreateWithFlags(cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
        cnrt.placeNotifier(notifier, allocator.streams.queue(cache.device, stream))
        cnrt.queueWaitNotifier(notifier, own, 0)
    cnrt.memFreeAsync(block.address, own)
