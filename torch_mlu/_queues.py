"""Streams are cnrt queues, events are cnrt notifiers, and each (device, stream) has its cnnl handle.

torch names a stream by (device, stream id): id 0 is the device's default queue; new streams come from a pool per
device and priority (32 queues each, handed out round-robin and created on first use, as CUDA's and torch_mlu's
stream pools), so code that makes a stream per iteration does not make a queue (and a worker thread) per iteration.
An event id names one cnrt notifier.
"""
from __future__ import annotations

import itertools
import threading
from contextlib import contextmanager

import cnnl
import cnrt

from . import _devices

#: queues per device and priority in the stream pool
POOL_SIZE = 32
#: bits of a stream id below the priority class: id = (class << 8) | (slot + 1); 0 is the default queue
_SLOT_BITS = 8
#: the class bits of the stream ids of adopted external queues (the pool's classes are 0..4)
EXTERNAL_CLASS = 1 << 20


@contextmanager
def on_device(index: int):
    """Run cnrt calls with `index` as this thread's current cnrt device."""
    previous = cnrt.getDevice()
    if previous == index:
        yield
        return
    cnrt.setDevice(index)
    try:
        yield
    finally:
        cnrt.setDevice(previous)


def priority_range() -> tuple[int, int]:
    """(least, greatest) stream priority: cnrtDeviceGetQueuePriorityRange."""
    return cnrt.deviceGetQueuePriorityRange()


class Streams:
    """The cnrt queue and cnnl handle behind each (device, stream id)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.reset(0)
        _devices.on_rebuild(self.reset)

    def reset(self, device_count: int) -> None:
        """Forget the queues and handles (of a device table that was rebuilt)."""
        with self._lock:
            self._queues: dict[tuple[int, int], object] = {}
            self._handles: dict[tuple[int, int], object] = {}
            self._next_slot: dict[tuple[int, int], itertools.count] = {}

    def handle(self, device: int, stream_id: int):
        """The cnnl handle whose ops go on stream `stream_id` of `device` (made on first use)."""
        _devices.check()
        key = (device, stream_id)
        found = self._handles.get(key)
        if found is not None:
            return found
        with self._lock, on_device(device):
            found = self._handles.get(key)
            if found is None:
                found = cnnl.create()
                if stream_id != 0:
                    cnnl.setQueue(found, self._queue_locked(device, stream_id))
                self._handles[key] = found
                self._queues.setdefault(key, cnnl.getQueue(found))
        return found

    def queue(self, device: int, stream_id: int):
        """The cnrt queue of stream `stream_id` on `device`."""
        _devices.check()
        found = self._queues.get((device, stream_id))
        if found is not None:
            return found
        if stream_id == 0:
            return cnnl.getQueue(self.handle(device, 0))
        with self._lock:
            return self._queue_locked(device, stream_id)

    def _queue_locked(self, device: int, stream_id: int):
        found = self._queues.get((device, stream_id))
        if found is None:
            raise ValueError(f"mlu: stream {stream_id} of device {device} was never created")
        return found

    def new_stream(self, device: int, priority: int) -> int:
        """A stream id from the pool of `device` for `priority` (clamped to the device's range)."""
        _devices.check()
        least, greatest = priority_range()
        level = min(least, max(greatest, int(priority)))
        klass = -level  # 0 (least urgent) .. 4
        with self._lock:
            counter = self._next_slot.setdefault((device, klass), itertools.count())
            slot = next(counter) % POOL_SIZE
            stream_id = (klass << _SLOT_BITS) | (slot + 1)
            key = (device, stream_id)
            if key not in self._queues:
                with on_device(device):
                    self._queues[key] = cnrt.queueCreateWithPriority(0, level)
        return stream_id

    def adopt(self, device: int, queue) -> int:
        """The stream id of `queue`, a cnrt queue of `device` made outside torch (torch.mlu.ExternalStream): its own
        id when it is one of the pool's, else a new id in the external range (never destroyed by torch)."""
        _devices.check()
        cnrt.queueGetPriority(queue)  # a live cnrt queue, or cnrt's error naming it (queueQuery would set the
        # last error of a busy queue and raise its sticky error)
        owner = getattr(getattr(queue, "device", None), "index", None)
        if owner != device:
            raise ValueError(f"mlu: the queue belongs to device {owner}, not to device {device}")
        with self._lock:
            for (index, stream_id), known in self._queues.items():
                if index == device and known is queue:
                    return stream_id
            counter = self._next_slot.setdefault((device, EXTERNAL_CLASS), itertools.count(1))
            stream_id = (EXTERNAL_CLASS << _SLOT_BITS) | next(counter)
            self._queues[(device, stream_id)] = queue
        return stream_id

    def priority(self, device: int, stream_id: int) -> int:
        return cnrt.queueGetPriority(self.queue(device, stream_id))

    def all_queues(self, device: int) -> list:
        with self._lock:
            return [queue for (index, _), queue in self._queues.items() if index == device]


class Events:
    """Event ids -> cnrt notifiers."""

    def __init__(self, streams: Streams):
        self._streams = streams
        self._notifiers: dict[int, object] = {}
        self._ids = itertools.count(1)
        _devices.on_rebuild(self.reset)

    def reset(self, device_count: int) -> None:
        """Forget the notifiers (of a device table that was rebuilt); ids keep counting up."""
        self._notifiers.clear()

    def record(self, event_id: int, device: int, stream_id: int, timing: bool) -> int:
        """Place the event's notifier on the stream (a new notifier for id 0); returns the id."""
        _devices.check()
        if event_id == 0:
            flags = cnrt.CNRT_NOTIFIER_DEFAULT if timing else cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL
            event_id = next(self._ids)
            self._notifiers[event_id] = cnrt.notifierCreateWithFlags(flags)
        cnrt.placeNotifier(self.notifier(event_id), self._streams.queue(device, stream_id))
        return event_id

    def notifier(self, event_id: int):
        _devices.check()
        found = self._notifiers.get(event_id)
        if found is None:
            raise ValueError(f"mlu: event {event_id} does not exist (destroyed?)")
        return found

    def block(self, event_id: int, device: int, stream_id: int) -> None:
        cnrt.queueWaitNotifier(self.notifier(event_id), self._streams.queue(device, stream_id), 0)

    def query(self, event_id: int) -> bool:
        return cnrt.queryNotifier(self.notifier(event_id)) == cnrt.cnrtSuccess

    def synchronize(self, event_id: int) -> None:
        cnrt.waitNotifier(self.notifier(event_id))

    def elapsed_ms(self, start: int, end: int) -> float:
        first, second = self.notifier(start), self.notifier(end)
        if not (first.timing and second.timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return cnrt.notifierElapsedTime(first, second)

    def modelled_us(self, start: int, end: int) -> float:
        """Modelled device time between two events (cnrtNotifierDuration), µs."""
        return cnrt.notifierDuration(self.notifier(start), self.notifier(end))

    def destroy(self, event_id: int) -> None:
        notifier = self._notifiers.pop(event_id, None)
        if notifier is not None and not notifier.destroyed:
            cnrt.notifierDestroy(notifier)
