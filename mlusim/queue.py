"""In-order queues (cnrtQueue_t): one way onto a queue (`Queue.submit`), sticky errors, syncs, the modelled clock.

Every queued thing is a `Command` (mlusim.command) built by mlusim.submit.Submission. A queue runs its commands in
order, one at a time (mlusim.execution): on its worker thread (mlusim.worker), on a host thread that syncs it (which
runs what is pending instead of sleeping), in the calling thread when the queue decides so (`submit`), or at the call
in blocking mode. A command that raises becomes the queue's sticky error: the commands after it are skipped and the
next sync reports it with their count (the device keeps it too until its sync). Work the calling thread does at a
queue position without queueing anything takes a turn (`take_turn`, mlusim.turn). Nothing runs in the calling thread
while an observer watches commands one by one (mlusim.observers). Each queue has its own modelled clock; a command
starts at the later of that clock and the modelled time its host thread had seen of the device when it submitted
it. The waits (syncs, Ctrl-C while waiting) are the queue's other half, mlusim.waiting. docs/runtime.md gives the
rules and the figures behind them.
"""
from __future__ import annotations

import itertools
import os
import threading
import time
import weakref
from collections import deque
from queue import SimpleQueue
from typing import Callable, Iterable, Optional

from . import execution, worker
from .command import Command, Kind, running_queues
from .errors import HandleFault, IllegalStateFault, QueueFault
from .notifier import host_clock_of
from .observers import OBSERVERS
from .turn import Turn
from .waiting import WAIT_SLICE, Waiting

_queue_ids = itertools.count(1)
#: The longest take_turn waits for the run lock of an idle queue (held by a thread that is leaving it).
CLAIM_WAIT_SECONDS = 0.001
#: Ops moving at most this many bytes are a few µs of work: less than waking the worker costs (see submit).
SMALL_OP_BYTES = 1 << 14
#: The most commands a queue holds pending: a producer that finds it full runs pending work itself or waits until
#: there is room, so a sync waits for at most this many commands, not for however many faster producers queued.
MAX_PENDING = 4096

_all_queues: "weakref.WeakSet[Queue]" = weakref.WeakSet()


def reset_all_after_fork() -> None:
    """In a forked child (called by mlusim.device's fork handler, after device memory was made usable): every queue
    drops the work the parent had queued or was running, and reports it at its next sync."""
    for queue in list(_all_queues):
        queue._reset_after_fork()


class Queue(Waiting):
    """An in-order queue of one device (cnrtQueue_t)."""

    def __init__(self, device, priority: int = 0, blocking: bool = False, label: str = ""):
        self.device = device
        self.priority = priority
        self.blocking = blocking
        self.ident = next(_queue_ids)
        self.label = label or f"queue {self.ident}"
        self.destroyed = False
        self.submitted = 0
        self.completed = 0
        self.model_clock_us = 0.0
        self.host_clock = host_clock_of(device)
        # Commands wait in `_pending`; each is taken and run under `_run_lock`, either by the worker (woken by a
        # token in `_tokens`) or by a host thread that syncs the queue and finds the worker idle: that keeps the
        # order and saves the two thread wake-ups a synchronous call would cost (see wait_idle).
        self._pending: deque = deque()
        self._tokens: SimpleQueue = SimpleQueue()
        # A token is put only when none is outstanding: the worker runs everything pending per token, so a burst of
        # submissions costs one wake-up instead of one per command (set and cleared under _submit_lock).
        self._wake_outstanding = False
        #: the ops submitted since a host thread last waited for the queue after submitting one, and whether that
        #: wait came after a single op (see submit)
        self._ops_since_wait = 0
        self._waits_after_each_op = False
        self._submit_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._fault: Optional[QueueFault] = None
        self._skipped = 0
        self._worker: Optional[threading.Thread] = None
        self._current: Optional[Command] = None
        self._idle_since = time.perf_counter()
        self._interrupters: list[Callable[[str], None]] = []
        #: commands queued before this position were being waited for when the waiting thread got Ctrl-C: a kernel
        #: among them that has not started yet stops as soon as it starts
        self.interrupted_before = 0
        #: set when a command never returned (a kernel the watchdog could not stop): the queue takes no more work
        self.lost: Optional[QueueFault] = None
        _all_queues.add(self)

    def __repr__(self) -> str:
        return f"<cnrtQueue {self.label} of device {self.device.index}{' destroyed' if self.destroyed else ''}>"

    @property
    def name(self) -> str:
        return f"{self.label} of device {self.device.index}"

    def check_alive(self, arg: str = "queue") -> None:
        if self.destroyed:
            raise HandleFault(f"{self.label} was destroyed", arg)
        if self.lost is not None:
            raise IllegalStateFault(f"{self.name} can run no more work: {self.lost.cause}", arg)

    # ---- submission: the one way onto the queue -------------------------------------------------------------------

    def submit(self, command: Command) -> int:
        """Queue `command` (its blocks already pinned; the queue owns the pins from here on) and return its position
        (0 for the first command ever submitted). In blocking mode it runs at once and its error is raised here;
        otherwise the queue decides, from the command's kind and bytes, whether the calling thread runs it now
        (see the module's docstring) or its worker does later; either way errors are reported at the next sync."""
        if command.kind is Kind.OP:
            if 0 <= command.nbytes <= SMALL_OP_BYTES:
                command.small = True
                position = self._run_in_call(command)
                if position >= 0:
                    return position
            else:
                self._ops_since_wait += 1
                if self._waits_after_each_op:
                    self._waits_after_each_op = False
                    position = self._run_in_call(command)
                    if position >= 0:
                        return position
        return self._enqueue(command)

    def _enqueue(self, command: Command) -> int:
        if self.destroyed or self.lost is not None:
            execution.unpin(command)
            self.check_alive()
        if len(self._pending) >= MAX_PENDING and not self.blocking and self not in running_queues():
            self._make_room()
        for hook in OBSERVERS.command_enqueued:
            hook(self, command)
        command.not_before_us = self.host_clock.us
        with self._submit_lock:
            position = self.submitted
            self.submitted += 1
            self._pending.append(command)
            if not self.blocking:
                self._wake_worker_locked()
                return position
        if self in running_queues():
            return position  # submitted from inside one of this queue's commands: runs right after it
        with self._run_lock:
            while execution.run_next(self):
                pass
        fault = self.take_fault()
        if fault is not None:
            raise fault
        return position

    def _make_room(self) -> None:
        """The queue is full: run pending commands in this thread whenever the run lock is free (down to half the
        depth), until there is room (the worker, when it holds the lock, makes room too)."""
        while len(self._pending) >= MAX_PENDING and self.lost is None:
            if self._run_lock.acquire(timeout=WAIT_SLICE):
                try:
                    while len(self._pending) > MAX_PENDING // 2 and execution.run_next(self):
                        pass
                finally:
                    self._run_lock.release()

    def _run_in_call(self, command: Command) -> int:
        """Run `command` in the calling thread and return its position; -1 when the queue's state does not allow it
        (nothing done): it must be idle, run by no other thread, with nothing pending but small commands (a stream
        of them queued while the worker ran something larger, which the worker has not taken yet: they run first,
        in order), and nobody may be watching it get queued."""
        if (self.blocking or self.destroyed or self.lost is not None or OBSERVERS.command_enqueued
                or self in running_queues()):
            return -1
        if not self._run_lock.acquire(blocking=False):
            return -1
        try:
            with self._submit_lock:
                pending = self._pending
                count = len(pending)
                runnable = self.completed + count == self.submitted and (
                    not count or (command.small and all(queued.small for queued in pending)))
                if not runnable:
                    return -1
                command.not_before_us = self.host_clock.us
                position = self.submitted
                self.submitted += 1
                pending.append(command)
            for _ in range(count + 1):  # these, not what other threads queue meanwhile
                execution.run_next(self)
            return position
        finally:
            self._run_lock.release()

    def _wake_worker_locked(self) -> None:
        """Start the worker, or wake it unless a wake-up is outstanding (the caller holds `_submit_lock`)."""
        if self._worker is None:
            self._worker = worker.start(self)
        if not self._wake_outstanding:
            self._wake_outstanding = True
            self._tokens.put(True)

    # ---- turns: work the calling thread does at a queue position (mlusim.turn) ----------------------------------

    def take_turn(self) -> Optional[Turn]:
        """When the queue is idle (alive, nothing queued or running, no sticky error), no thread runs its commands
        and nobody watches commands one by one: take its next position for work the calling thread does itself, as
        if a command had been queued there; None (nothing taken) otherwise. Work other threads submit meanwhile
        runs after the turn ends (Turn.done / failed / hand_over), in order."""
        if (self._pending or self.completed != self.submitted or self._fault is not None
                or OBSERVERS.watching_commands):
            return None
        # idle: a holder of the run lock is only leaving it (a worker after its batch, a sync after its wait)
        if not self._run_lock.acquire(True, CLAIM_WAIT_SECONDS):
            return None
        with self._submit_lock:
            if (self._pending or self.completed != self.submitted or self._fault is not None or self.destroyed
                    or self.lost is not None):
                self._run_lock.release()
                return None
            position = self.submitted
            self.submitted = position + 1
        return Turn(self, position)

    def _end_turn(self, position: int, model_end_us: float) -> None:
        self.model_clock_us = model_end_us
        self.completed = position + 1
        self._idle_since = time.perf_counter()
        self._run_lock.release()

    def _fail_turn(self, position: int, kind: Kind, name: str, exc: BaseException) -> None:
        self._fault = QueueFault(exc, f"{kind} '{name}'", self.name, command_kind=kind)
        if not self.blocking:
            self.device.record_fault(self._fault)
        self._end_turn(position, self.model_clock_us)

    def _hand_over_turn(self, command: Command) -> None:
        command.not_before_us = self.host_clock.us
        with self._submit_lock:
            self._pending.appendleft(command)
        if self.blocking:
            try:
                while execution.run_next(self):
                    pass
            finally:
                self._run_lock.release()
            fault = self.take_fault()
            if fault is not None:
                raise fault
            return
        self._run_lock.release()
        with self._submit_lock:
            self._wake_worker_locked()

    def last_conflict(self, conflicts: Callable[[Command], bool]) -> Optional[tuple[int, Command]]:
        """(position, command) of the latest command queued or running that `conflicts(command)` is true of; None
        when there is none."""
        with self._submit_lock:
            pending = list(self._pending)
            current = self._current
            first = self.submitted - len(pending)
        for index in range(len(pending) - 1, -1, -1):
            if conflicts(pending[index]):
                return first + index, pending[index]
        if current is not None and conflicts(current):
            return first - 1, current
        return None

    def take_fault(self) -> Optional[QueueFault]:
        """The sticky error, with the count of skipped commands; clears it."""
        fault = self._fault
        if fault is None:
            return None
        fault = fault.with_skipped(self._skipped)
        self._fault = None
        self._skipped = 0
        return fault

    def peek_fault(self) -> Optional[QueueFault]:
        fault = self._fault
        return None if fault is None else fault.with_skipped(self._skipped)

    def sync(self) -> None:
        """Wait for all work, then raise the sticky error if there is one (cnrtQueueSync). A lost queue reports
        that it is lost at every sync after its error."""
        self.wait_idle()
        fault = self.take_fault()
        if fault is not None:
            raise fault
        if self.lost is not None:
            self.check_alive()

    def destroy(self) -> None:
        """Refuse new work; the worker finishes what is queued and exits."""
        with self._submit_lock:
            if self.destroyed:
                return
            self.destroyed = True
            if self._worker is not None:
                self._tokens.put(None)

    def abandon(self, cause: BaseException) -> None:
        """The running command will never return (a kernel that ignores the watchdog): count it as failed with
        `cause`, drop the work queued after it, and refuse new work, so that no sync waits forever. Its host thread
        is left behind; the queue is lost (cnrtDeviceReset gives the device new queues)."""
        with self._submit_lock:
            current = self._current
            if current is None or self.lost is not None:
                return
            fault = QueueFault(cause, f"{current.kind} '{current.name}'", self.name, command_kind=current.kind)
            self.lost = fault
            dropped = list(self._pending)
            self._pending = deque()
            self._skipped += len(dropped)
            self._fault = fault
            self.completed = self.submitted
        execution.finish_unrun(dropped)
        self.device.record_fault(fault)

    def note_host_gap(self, started: float, ended: float) -> None:
        """The host spent [started, ended] (perf_counter seconds) on something that is not device work (compiling
        a kernel before its launch). The part of it during which this queue had nothing to run is kept out of the
        notifier host times (cnrtNotifierElapsedTime) of the queue's device."""
        with self._submit_lock:
            if self.completed != self.submitted:
                return  # the queue was busy: the host's work overlapped device work
            idle_from = max(started, self._idle_since)
        if ended > idle_from:
            self.device.excluded_host_seconds = getattr(self.device, "excluded_host_seconds", 0.0) + ended - idle_from

    def _reset_after_fork(self) -> None:
        """In a forked child: the parent's worker is gone and its locks may have been held at the fork. The work the
        parent had queued (or was running) is not run here: its pins are released, its notifier placements count
        as reached, and the next sync of this queue reports how many commands were dropped."""
        self._submit_lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._tokens = SimpleQueue()
        self._wake_outstanding = False
        self._worker = None
        self._interrupters = []
        dropped = list(self._pending)
        if self._current is not None:
            dropped.insert(0, self._current)
        self._current = None
        self._pending = deque()
        execution.finish_unrun(dropped)
        self.completed = self.submitted
        if dropped and self.lost is None and self._fault is None:
            self._fault = QueueFault(IllegalStateFault(
                f"{len(dropped)} command(s) queued before fork() in the parent process (pid {os.getppid()}) do not "
                f"run in this child process"), f"{dropped[0].kind} '{dropped[0].name}'", self.name,
                command_kind=dropped[0].kind)


def wait_all(queues: Iterable[Queue]) -> None:
    for queue in list(queues):
        queue.wait_idle()
