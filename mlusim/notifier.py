"""Notifiers (cnrtNotifier_t) and their placements on queues; the modelled time each host thread has seen of a
device (its host clock)."""
from __future__ import annotations

import threading
from typing import Optional

from .errors import HandleFault


class Placement:
    """One placement of a notifier on a queue; completes when the queue reaches it."""

    __slots__ = ("event", "host_time", "model_time_us", "queue", "clock")

    def __init__(self, queue):
        self.event = threading.Event()
        self.host_time = 0.0
        self.model_time_us = 0.0
        self.queue = queue
        self.clock = None  # the sanitizer's happens-before clock of the queue at this point


class Notifier:
    """A notifier (cnrtNotifier_t): marks a point in a queue's work."""

    def __init__(self, flags: int = 0, timing: bool = True):
        self.flags = flags
        self.timing = timing
        self.destroyed = False
        self.current: Optional[Placement] = None

    def check_alive(self, arg: str = "notifier") -> None:
        if self.destroyed:
            raise HandleFault("the notifier was destroyed", arg)

    def done(self) -> bool:
        placement = self.current
        return placement is None or placement.event.is_set()

    def __repr__(self) -> str:
        state = "destroyed" if self.destroyed else ("done" if self.done() else "pending")
        return f"<cnrtNotifier {id(self):#x} {state}>"


class HostClock(threading.local):
    """Of one device, per host thread: the latest modelled time (µs) of the device the thread has waited for."""

    us = 0.0

    def waited_until(self, model_us: float) -> None:
        """The calling thread has waited for the device to reach `model_us` (a sync, or a wait on a notifier)."""
        if self.us < model_us:
            self.us = model_us


_host_clock_lock = threading.Lock()


def host_clock_of(device) -> HostClock:
    """The host clock of `device` (made on first use; a new device starts from 0)."""
    clock = getattr(device, "host_clock", None)
    if clock is None:
        with _host_clock_lock:
            clock = getattr(device, "host_clock", None)
            if clock is None:
                clock = device.host_clock = HostClock()
    return clock
