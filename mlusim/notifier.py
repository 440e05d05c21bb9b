"""Notifiers (cnrtNotifier_t), their placements on queues (`place`) and queues waiting for them (`make_wait`); the
modelled time each host thread has seen of a device (its host clock).

On an idle queue both take a turn (mlusim.turn) and are done at once; otherwise they are commands of the queue.
"""
from __future__ import annotations

import threading
import time
from typing import Optional

from .command import Command, Kind
from .errors import HandleFault
from .observers import OBSERVERS


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


def place(notifier: Notifier, queue) -> Placement:
    """Place `notifier` on `queue` (cnrtPlaceNotifier): it is reached when the queue's earlier work is done."""
    placement = Placement(queue)

    def reach() -> None:
        placement.host_time = time.perf_counter() - getattr(queue.device, "excluded_host_seconds", 0.0)
        placement.model_time_us = queue.model_clock_us
        for hook in OBSERVERS.notifier_placed:
            hook(queue, placement)
        placement.event.set()

    notifier.current = placement
    turn = queue.take_turn()
    if turn is not None:  # an idle queue reaches the placement at once: no hand-over to its worker
        queue.model_clock_us = max(queue.model_clock_us, queue.host_clock.us)
        reach()
        turn.done(queue.model_clock_us)
        return placement
    queue.submit(Command(Kind.NOTIFIER, "placeNotifier", reach))
    return placement


def make_wait(queue, notifier: Notifier) -> None:
    """Make later work of `queue` wait until the notifier's latest placement is reached (cnrtQueueWaitNotifier)."""
    placement = notifier.current
    if placement is None or placement.queue is queue:
        return  # never placed, or placed earlier on this same in-order queue
    if placement.event.is_set():
        turn = queue.take_turn()
        if turn is not None:  # reached already, and this queue is idle: only the modelled clock moves
            turn.done(max(queue.model_clock_us, placement.model_time_us, queue.host_clock.us))
            return
    queue.submit(Command(Kind.WAIT, "queueWaitNotifier", None, waits_for=placement))


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
