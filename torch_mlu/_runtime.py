"""The one Python object the C++ part of torch_mlu calls: device memory, streams, events, pinned host memory and
the CPU-fallback bookkeeping, each forwarded to cnrt (through the caching allocator and the stream table)."""
from __future__ import annotations

import cnrt

from . import _devices, fallback
from .allocator import CachingAllocator
from ._queues import Events, Streams, on_device


class Runtime:
    """Callbacks of the C++ allocator, device guard and hooks (they run under the GIL)."""

    def __init__(self):
        self.streams = Streams()
        self.events = Events(self.streams)
        self.allocator = CachingAllocator(self.streams)
        self.malloc = self.allocator.malloc
        self.free = self.allocator.free
        self.record_stream = self.allocator.record_stream
        self.empty_cache = self.allocator.empty_cache
        self.device_stats = self.allocator.device_stats
        self.reset_peak = self.allocator.reset_peak
        self.reset_accumulated = self.allocator.reset_accumulated
        self.memory_totals = self.allocator.memory_totals
        self.new_stream = self.streams.new_stream
        self.record_event = self.events.record
        self.block_event = self.events.block
        self.query_event = self.events.query
        self.sync_event = self.events.synchronize
        self.elapsed_time = self.events.elapsed_ms
        self.destroy_event = self.events.destroy
        self.on_fallback = fallback.on_fallback

    @staticmethod
    def device_count() -> int:
        return _devices.count()

    @staticmethod
    def set_device(device: int) -> None:
        _devices.check()
        cnrt.setDevice(device)

    def copy_d2d(self, dst: int, src: int, nbytes: int, device: int, stream: int) -> None:
        cnrt.memcpyAsync(dst, src, nbytes, self.streams.queue(device, stream), cnrt.cnrtMemcpyDevToDev)

    def query_stream(self, device: int, stream: int) -> bool:
        return cnrt.queueQuery(self.streams.queue(device, stream)) == cnrt.cnrtSuccess

    def sync_stream(self, device: int, stream: int) -> None:
        cnrt.queueSync(self.streams.queue(device, stream))

    @staticmethod
    def sync_device(device: int) -> None:
        _devices.check()
        with on_device(device):
            cnrt.syncDevice()

    @staticmethod
    def host_alloc(nbytes: int):
        """A pinned host buffer (cnrtHostMalloc): (its address, the buffer that owns it)."""
        buffer = cnrt.hostMalloc(nbytes)
        return buffer.ctypes.data, buffer

    @staticmethod
    def host_free(buffer) -> None:
        cnrt.freeHost(buffer)

    @staticmethod
    def device_of(address: int) -> int:
        attributes = cnrt.pointerGetAttributes(address)
        if attributes.type != cnrt.cnrtMemTypeDevice:
            raise ValueError(f"mlu: 0x{address:x} is not an address of a live device allocation")
        return attributes.device

    @staticmethod
    def mem_get_info(device: int) -> tuple[int, int]:
        _devices.check()
        with on_device(device):
            return cnrt.memGetInfo()
