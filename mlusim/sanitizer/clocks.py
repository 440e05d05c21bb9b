"""Happens-before between queued commands: vector clocks per queue and per host thread.

A clock is a dict {queue ident: count} that is never changed once made (a join makes a new one), so it can be
shared without copies. Each queue counts the commands it started; a command's clock is the join of its queue's clock
(everything earlier on the queue) and the clock its host thread had when it queued the command (everything the
thread had waited for), with its own count. An access (queue q, count n) happens before a command whose clock
holds at least n for q.

What advances the clocks: queue order; notifier placement (the notifier takes its queue's clock) and
queueWaitNotifier (the waiting queue joins it); a host thread's queue sync, device sync, notifier wait or successful
query (the thread joins the queue's or notifier's clock); a collective (its ranks in this process join each other's
clocks when it completes).

Host threads: Python-level synchronisation between host threads (locks, events, thread start and join) is
invisible to the sanitizer. In the default "shared" mode a sync seen by one host thread counts for every host
thread from then on; "separate" keeps one clock per thread (louder, but a program that hands a synchronised buffer
to another thread through a Python event is then reported).
"""
from __future__ import annotations

import threading

EMPTY: dict = {}


def join(a: dict, b: dict) -> dict:
    """The least clock after both (`a` itself when `b` adds nothing)."""
    if not b or a is b:
        return a
    if not a:
        return b
    merged = None
    for actor, count in b.items():
        if a.get(actor, 0) < count:
            if merged is None:
                merged = dict(a)
            merged[actor] = count
    return a if merged is None else merged


def precedes(epoch: tuple, clock: dict) -> bool:
    """Whether the access at `epoch` (queue ident, count) happens before a command with `clock`."""
    return clock.get(epoch[0], 0) >= epoch[1]


class QueueClock:
    """The clock of one queue: the count of commands it started and the clock after the last one."""

    __slots__ = ("count", "clock")

    def __init__(self):
        self.count = 0
        self.clock = EMPTY

    def advance(self, ident: int, incoming: dict) -> tuple[dict, tuple]:
        """Start one command that also happens after `incoming`; its (clock, epoch)."""
        self.count += 1
        clock = dict(join(self.clock, incoming))
        clock[ident] = self.count
        self.clock = clock
        return clock, (ident, self.count)


class HostClocks:
    """What host threads have waited for."""

    def __init__(self, mode: str = "shared"):
        self.mode = mode
        self.shared = EMPTY
        self.local = threading.local()
        self.lock = threading.Lock()

    def current(self) -> dict:
        """The clock of the calling host thread."""
        if self.mode == "shared":
            return self.shared
        return getattr(self.local, "clock", EMPTY)

    def observe(self, clock: dict) -> None:
        """The calling host thread has waited for work up to `clock`."""
        if not clock:
            return
        if self.mode == "shared":
            with self.lock:
                self.shared = join(self.shared, clock)
        else:
            self.local.clock = join(getattr(self.local, "clock", EMPTY), clock)
