"""torch.mlu.Stream (a cnrt queue) and torch.mlu.Event (a cnrt notifier), and the current-stream functions.

Both are torch.Stream / torch.Event, so everything torch does with streams and events on a device (the `with`
statement, torch.accelerator, record_stream, autograd's stream handling) goes through the same C++ device guard
and the same cnrt objects.
"""
from __future__ import annotations

import torch

import cnrt

from .. import _queues, _state
from ._utils import checked_index

_MLU = "mlu"
#: c10::DeviceType::PrivateUse1, the device type code of mlu streams
PRIVATEUSE1 = 20


class Stream(torch.Stream):
    """torch.mlu.Stream(device=None, priority=0): an in-order queue of device work (a cnrt queue from the
    device's stream pool). Negative priorities are more urgent (cnrt's range is [-4, 0])."""

    def __new__(cls, device=None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:
            return super().__new__(cls, **kwargs)
        index = checked_index(device)
        return super().__new__(cls, device=torch.device(_MLU, index), priority=priority)

    @staticmethod
    def priority_range() -> tuple[int, int]:
        """torch.mlu.Stream.priority_range(): (least, greatest) priority, cnrtDeviceGetQueuePriorityRange
        ((0, -4): a lower number is more urgent)."""
        return _queues.priority_range()

    @property
    def priority(self) -> int:
        """The cnrt queue priority (cnrtQueueGetPriority)."""
        return _state.runtime.streams.priority(self.device_index, self.stream_id)

    @property
    def mlu_stream(self):
        """The cnrt queue behind this stream (cnrtQueue_t), for calling cnrt/cnnl directly."""
        return _state.runtime.streams.queue(self.device_index, self.stream_id)

    def wait_event(self, event) -> None:
        """Later work on this stream waits for `event` (cnrtQueueWaitNotifier); returns at once."""
        event.wait(self)

    def wait_stream(self, stream) -> None:
        """Later work on this stream waits for all work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record `event` (a new torch.mlu.Event if None) on this stream and return it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __eq__(self, other) -> bool:
        return isinstance(other, torch.Stream) and super().__eq__(other)

    def __hash__(self) -> int:
        return hash((self.stream_id, self.device_index, self.device_type))

    def __repr__(self) -> str:
        return f"<torch.mlu.Stream device=mlu:{self.device_index} stream_id={self.stream_id}>"


class ExternalStream(Stream):
    """torch.mlu.ExternalStream(stream_ptr, device=None): a stream over a cnrt queue made outside torch
    (cnrtQueueCreate, another library). Work torch queues on it goes to that queue; torch never destroys it."""

    def __new__(cls, stream_ptr, device=None, **kwargs):
        index = checked_index(device)
        stream_id = _state.runtime.streams.adopt(index, stream_ptr)
        return super().__new__(cls, stream_id=stream_id, device_index=index, device_type=PRIVATEUSE1)


class Event(torch.Event):
    """torch.mlu.Event(enable_timing=False, blocking=False, interprocess=False): a cnrt notifier, created at its
    first record. elapsed_time() is host wall time in ms (cnrtNotifierElapsedTime); hardware_time() the modelled
    device time in µs (cnrtNotifierDuration)."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, device=None):
        where = torch.device(_MLU, checked_index(device))
        return super().__new__(cls, device=where, enable_timing=enable_timing, blocking=blocking,
                               interprocess=interprocess)

    @property
    def device(self):
        """The device of the stream it was recorded on; None before its first record (torch_mlu's Event, as
        torch.cuda's)."""
        return _EVENT_DEVICE.__get__(self) if self.event_id else None

    def record(self, stream=None) -> None:
        """Record the event on `stream` (default: the current stream of the event's device)."""
        super().record(current_stream(_EVENT_DEVICE.__get__(self)) if stream is None else stream)

    def wait(self, stream=None) -> None:
        """Make later work on `stream` (default: the current stream) wait for this event."""
        super().wait(current_stream(_EVENT_DEVICE.__get__(self)) if stream is None else stream)

    def elapsed_time(self, end_event) -> float:
        """Host wall time in ms between this event and `end_event` (cnrtNotifierElapsedTime); both must have been
        created with enable_timing=True and reached."""
        return _between(self, end_event, _state.runtime.events.elapsed_ms)

    def hardware_time(self, end_event) -> float:
        """Modelled device time between this event and `end_event`, in µs (cnrtNotifierDuration: an estimate of
        mlusim's cost model, not a measurement)."""
        return _between(self, end_event, _state.runtime.events.modelled_us)

    def __repr__(self) -> str:
        return f"<torch.mlu.Event {self.event_id}>" if self.event_id else "<torch.mlu.Event uninitialized>"


#: torch.Event's own device (the one it was made for), under the property Event overrides
_EVENT_DEVICE = torch.Event.device


def _between(start, end, measure) -> float:
    if not isinstance(end, torch.Event) or _EVENT_DEVICE.__get__(end).type != _MLU:
        raise RuntimeError("expected end_event to be an mlu torch.Event")
    if not start.event_id or not end.event_id:
        raise RuntimeError("Both events must be recorded before calculating elapsed time.")
    try:
        return measure(start.event_id, end.event_id)
    except cnrt.CnrtError as error:
        raise RuntimeError(f"mlu: {error}") from None


def current_stream(device=None) -> Stream:
    """torch.mlu.current_stream: this thread's current stream of `device` (default: the current device)."""
    index = checked_index(device)
    stream_id, index = _state.C.current_stream(index)
    return Stream(stream_id=stream_id, device_index=index, device_type=PRIVATEUSE1)


def default_stream(device=None) -> Stream:
    """torch.mlu.default_stream: the device's default stream (its default cnrt queue)."""
    index = checked_index(device)
    return Stream(stream_id=0, device_index=index, device_type=PRIVATEUSE1)


def set_stream(stream) -> None:
    """torch.mlu.set_stream: make `stream` the current stream of its device (None is a no-op)."""
    if stream is None:
        return
    _state.C.set_stream(stream.stream_id, stream.device_index)


class StreamContext:
    """torch.mlu.StreamContext(stream): within the block, `stream` is the current stream of its device (and its
    device is the current device)."""

    def __init__(self, stream):
        self.stream = stream
        self.previous = None
        self.previous_device = -1

    def __enter__(self):
        if self.stream is None:
            return self.stream
        index = self.stream.device_index
        self.previous_device = _state.C.exchange_device(index)
        self.previous = current_stream(index)
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is None:
            return False
        set_stream(self.previous)
        _state.C.set_device(self.previous_device)
        return False


def stream(stream) -> StreamContext:
    """torch.mlu.stream(s): context manager selecting stream `s`."""
    return StreamContext(stream)


__all__ = ["Stream", "Event", "StreamContext", "current_stream", "default_stream", "set_stream", "stream"]
