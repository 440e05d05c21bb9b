"""Who watches the simulated device: the one registry of observers (the sanitizer, the trace recorder, tests).

An observer is any object; `add(observer)` registers it for each event below that it has a method for (or for the
`events` named). The code where an event happens reads the event's tuple of bound methods and calls each one:

    for hook in OBSERVERS.command_finished:
        hook(queue, command)

With nobody registered every tuple is empty, so an event costs one attribute read and an empty loop. While anyone
watches queued commands one by one (`watching_commands`), queues run every command through the general path (no
work is done in the calling thread of a queue that is idle), so that each observer sees every command queued, started
and finished.

Events, with their arguments:
  command_enqueued(queue, command)   a command was queued (before it can run)
  command_starting(queue, command)   a command is about to run (on the thread that runs it)
  command_finished(queue, command)   a command ran without raising (its host and modelled times are set)
  notifier_placed(queue, placement)  a queue reached a notifier placement
  notifier_waited(queue, placement)  a queue waited for a notifier placed on another queue (queueWaitNotifier)
  queue_synced(queue)                a host thread waited until a queue was idle
  block_allocated(block)             device memory was allocated
  block_freed(block)                 device memory was freed
  api_fault(call, fault)             a public call failed with `fault`
  kernel_launched(launch)            a BANG kernel launch ran its tasks (its access log is complete)
  kernel_faulted(launch, fault)      a BANG kernel launch stopped with `fault`
  kernel_log_entries()               (a question) how many access-log entries per core a launch should keep; the
                                     largest answer wins, 0 when nobody asks for a log
"""
from __future__ import annotations

import threading
from typing import Iterable, Optional

COMMAND_EVENTS = ("command_enqueued", "command_starting", "command_finished", "notifier_placed", "notifier_waited",
                  "queue_synced")
EVENTS = COMMAND_EVENTS + ("block_allocated", "block_freed", "api_fault", "kernel_launched", "kernel_faulted",
                           "kernel_log_entries")


class Observers:
    """The registry: per event, the tuple of registered methods (in the order their observers were added)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._registered: list[tuple[object, frozenset]] = []
        self.watching_commands = False
        for event in EVENTS:
            setattr(self, event, ())

    def add(self, observer, events: Optional[Iterable[str]] = None) -> None:
        """Register `observer` for `events` (default: every event it has a method for); again: re-registers it."""
        chosen = frozenset(event for event in EVENTS if callable(getattr(observer, event, None))) if events is None \
            else frozenset(events)
        unknown = chosen - set(EVENTS)
        if unknown:
            raise ValueError(f"unknown observer event(s) {sorted(unknown)}; the events are {', '.join(EVENTS)}")
        missing = [event for event in chosen if not callable(getattr(observer, event, None))]
        if missing:
            raise TypeError(f"{observer!r} has no method for the event(s) {sorted(missing)}")
        with self._lock:
            self._registered = [(o, e) for o, e in self._registered if o is not observer]
            if chosen:
                self._registered.append((observer, chosen))
            self._publish()

    def remove(self, observer) -> None:
        """Unregister `observer` from every event (nothing happens if it was not registered)."""
        with self._lock:
            self._registered = [(o, e) for o, e in self._registered if o is not observer]
            self._publish()

    def observing(self, observer) -> bool:
        return any(o is observer for o, _ in self._registered)

    def kernel_log_capacity(self) -> int:
        """The access-log entries per core a BANG launch keeps (the largest any observer asks for)."""
        return max((ask() for ask in self.kernel_log_entries), default=0)

    def _publish(self) -> None:
        for event in EVENTS:
            setattr(self, event, tuple(getattr(o, event) for o, events in self._registered if event in events))
        self.watching_commands = any(getattr(self, event) for event in COMMAND_EVENTS)


#: The process's registry.
OBSERVERS = Observers()


class CommandRecorder:
    """An observer that keeps every (queue, command) finished while it is registered: `with CommandRecorder() as
    seen: ...; seen.commands`. Optionally only those of `queue`."""

    def __init__(self, queue=None):
        self.queue = queue
        self.commands: list = []

    def command_finished(self, queue, command) -> None:
        if self.queue is None or queue is self.queue:
            self.commands.append((queue, command))

    def __enter__(self) -> "CommandRecorder":
        OBSERVERS.add(self)
        return self

    def __exit__(self, *exc) -> bool:
        OBSERVERS.remove(self)
        return False
