"""Waiting for a queue: syncs (`wait_idle`, `wait_until`), the bounded wait `idle_within` and Ctrl-C while waiting.

The waiting half of `mlusim.queue.Queue`, which inherits it: a waiter takes the queue's run lock when it can and
runs what is pending itself (no thread wake-ups for a synchronous call); it reads the state the queue keeps
(`_pending`, `_run_lock`, `completed`, `submitted`, the sticky `_fault`, the running `_current`).
"""
from __future__ import annotations

import time
from typing import Callable

from . import execution
from .command import Kind, running_queues
from .errors import IllegalStateFault
from .observers import OBSERVERS

#: The longest a sync waits for the run lock before it looks at its queue's completed count again.
WAIT_SLICE = 0.02
#: How often idle_within looks again while the worker has not taken the queued work yet.
IDLE_POLL_SECONDS = 50e-6


class Waiting:
    """The waits of a queue."""

    def idle_within(self, seconds: float) -> bool:
        """Wait at most `seconds` (the GIL released; the worker runs the queue's work) for the queue to be idle;
        whether it is. Unlike wait_idle it runs nothing itself and gives up in time."""
        give_up = time.perf_counter() + seconds
        while self._pending or self.completed != self.submitted:
            left = give_up - time.perf_counter()
            if left <= 0 or self._fault is not None or self in running_queues():
                return False
            if self._run_lock.acquire(timeout=left):
                self._run_lock.release()
                if self._pending:  # queued work its worker has not taken yet: give it the lock
                    time.sleep(min(IDLE_POLL_SECONDS, left))
        return True

    def busy(self) -> bool:
        return self.completed < self.submitted

    def wait_idle(self) -> None:
        """Block the calling thread until every command submitted so far has run (not any submitted later)."""
        with self._submit_lock:
            target = self.submitted
        self._wait_for(target)
        if self._ops_since_wait:  # (a wait right after another tells nothing of the host's pattern)
            self._waits_after_each_op = self._ops_since_wait == 1
            self._ops_since_wait = 0
        for hook in OBSERVERS.queue_synced:
            hook(self)

    def wait_until(self, position: int) -> None:
        """Block the calling thread until the command at `position` has run (mlusim.ordering: not a sync of the
        queue, which the sanitizer would take as ordering the caller after all of the queue's work)."""
        self._wait_for(position + 1)

    def _wait_for(self, target: int) -> None:
        """Until `target` commands have completed. The waiter takes the run lock when it can and runs what is
        pending itself (no thread wake-ups for a synchronous call). While the worker holds the lock, the waiter
        waits for it with a timeout that grows to WAIT_SLICE, and looks at the completed count after each: a
        worker kept busy by other producers (which never lets go of the lock) cannot starve a sync whose own work
        is done."""
        if self.completed < target and self in running_queues():
            raise IllegalStateFault(f"a command of {self.name} waits for its own queue, which can never finish")
        wait = 0.0005
        try:
            while self.completed < target:
                if self._run_lock.acquire(timeout=wait):
                    try:
                        while self.completed < target and execution.run_next(self):
                            pass
                    finally:
                        self._run_lock.release()
                else:
                    wait = min(2 * wait, WAIT_SLICE)
        except KeyboardInterrupt as interrupt:
            self.interrupted_before = max(self.interrupted_before, target)
            raise KeyboardInterrupt(self._interrupt(str(interrupt))) from None
        self.host_clock.waited_until(self.model_clock_us)

    def _interrupt(self, detail: str) -> str:
        """Ctrl-C while waiting: stop the running command if it can be stopped (a kernel); describe what was
        interrupted."""
        current = self._current
        for stop in list(self._interrupters):
            stop("interrupted by KeyboardInterrupt (Ctrl-C)")
        if current is None:
            waiting = sorted({c.name for c in list(self._pending) if c.kind is Kind.KERNEL})
            queued = f"; kernel(s) {', '.join(repr(n) for n in waiting)} will stop when they start" if waiting else ""
            return detail or f"interrupted while waiting for {self.name}{queued}"
        return (f"interrupted while waiting for {self.name}, which was running {current.kind} '{current.name}'"
                + (" (asked to stop)" if self._interrupters else ""))

    def on_interrupt(self, stop: Callable[[str], None]) -> None:
        """Call `stop(reason)` when a thread waiting for this queue is interrupted (Ctrl-C) while the current command
        runs (until `off_interrupt(stop)`)."""
        self._interrupters.append(stop)

    def off_interrupt(self, stop: Callable[[str], None]) -> None:
        try:
            self._interrupters.remove(stop)
        except ValueError:
            pass
