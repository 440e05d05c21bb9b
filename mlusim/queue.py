"""In-order queues run by workers; commands; notifiers; sticky errors; modelled device clock.

Every queued thing is a `Command`: it names the device ranges it reads and writes, pins the blocks it uses so they
cannot be freed under it, and carries its modelled device duration. A queue runs its commands in order, one at a
time: on its worker thread, on a host thread that syncs it (which runs what is pending instead of sleeping), or
inline at the call in blocking mode. When a command raises, the queue keeps the first error (sticky), skips the
commands after it, and reports it, with the number skipped, at its next sync; the device keeps it too until its sync.

Modelled device clock (mlusim.cost gives the durations; docs/cost.md): each queue has its own clock, so work on
different queues overlaps on the device. A command starts at the later of its queue's clock and the modelled time its
host thread had seen of the device when it enqueued the command (the device's host clock, raised by every sync): work
the host queues after waiting for a queue cannot start before that queue's work ended. queueWaitNotifier carries the notifier's time over.
"""
from __future__ import annotations

import enum
import itertools
import os
import threading
import time
import weakref
from collections import deque
from queue import SimpleQueue
from typing import Callable, Iterable, Optional

from .errors import HandleFault, IllegalStateFault, QueueFault, UseAfterFreeFault

_queue_ids = itertools.count(1)
#: The queues whose command the current host thread is running (to refuse a command that waits on its own queue).
_running = threading.local()
#: The longest a sync waits for the run lock before it looks at its queue's completed count again.
_WAIT_SLICE = 0.02
#: A worker woken again within HOT_SECONDS of finishing its previous batch, or woken for an op (`_op_first`), is being
#: fed a stream of commands (a host thread issuing ops one by one): it sleeps, without the GIL, for as long as
#: commands keep arriving (each sleep GATHER_SECONDS, at most STREAM_WAIT_SECONDS in all), so that the stream runs
#: in batches once the host pauses.
#: Running commands while the host thread keeps queueing costs more than the overlap gains on a small host: both
#: threads run Python and hand the GIL to each other at every numpy call (a small CNN's training step: dispatch
#: 3.5-4 ms and kernels 7-10 ms apart, 16.6-19.5 ms overlapped, 12.7-15.7 ms gathered). A sync never waits for
#: this: the syncing thread runs what is pending itself.
HOT_SECONDS = 0.001
GATHER_SECONDS = 0.0005
STREAM_WAIT_SECONDS = 0.02
#: How often idle_within looks again while the worker has not taken the queued work yet.
IDLE_POLL_SECONDS = 50e-6
#: The longest claim_idle waits for the run lock of an idle queue (held by a thread that is leaving it).
CLAIM_WAIT_SECONDS = 0.001


def running_queue() -> Optional["Queue"]:
    """The queue whose command the calling host thread is running (None outside queued work)."""
    queues = getattr(_running, "queues", None)
    if not queues:
        return None
    return next(iter(queues))


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


_all_queues: "weakref.WeakSet[Queue]" = weakref.WeakSet()


def reset_all_after_fork() -> None:
    """In a forked child (called by mlusim.device's fork handler, after device memory was made usable): every queue
    drops the work the parent had queued or was running, and reports it at its next sync."""
    for queue in list(_all_queues):
        queue._reset_after_fork()

#: Callables `(queue, command)` called after every finished command of every queue (mlusim.trace installs one).
command_hooks: list[Callable[["Queue", "Command"], None]] = []
#: The sanitizer while it is on (mlusim.sanitizer sets it); None keeps its cost to one check per hook.
sanitizer = None


class Kind(str, enum.Enum):
    """What a queued command is (`Command.kind`); compares equal to its value ("memcpy", "op", ...)."""

    MEMCPY = "memcpy"
    MEMSET = "memset"
    OP = "op"
    KERNEL = "kernel"
    COLLECTIVE = "collective"
    HOST_FUNC = "host_func"
    FREE = "free"
    NOTIFIER = "notifier"
    WAIT = "wait"

    def __str__(self) -> str:
        return self.value


def current_command() -> Optional["Command"]:
    """The command the calling thread is running for a queue (None outside queued work)."""
    return getattr(_running, "command", None)


class Command:
    """One unit of queued work, built by mlusim.submit.Submission (notifier placements and waits: by the queue).

    `run()` does the work; it may return a float to replace `model_us` (work whose cost is known only once it ran).
    `reads`/`writes` are (address, nbytes) ranges; `blocks` are the memory blocks pinned until the command is done.
    """

    __slots__ = ("kind", "name", "run", "reads", "writes", "model_us", "blocks", "waits_for",
                 "host_start", "host_end", "model_start", "model_end", "info", "not_before_us", "sanitized",
                 "small")

    def __init__(self, kind: Kind, name: str, run: Optional[Callable[[], Optional[float]]] = None,
                 reads: tuple = (), writes: tuple = (), model_us: float = 0.0, blocks: tuple = (),
                 waits_for: Optional["Placement"] = None, info: Optional[dict] = None):
        self.kind = kind if kind.__class__ is Kind else Kind(kind)
        self.name = name
        self.run = run
        self.reads = reads
        self.writes = writes
        self.model_us = model_us
        self.blocks = blocks
        self.waits_for = waits_for
        self.host_start = self.host_end = 0.0
        self.model_start = self.model_end = 0.0
        self.info = info
        self.not_before_us = 0.0
        self.sanitized = None  # the sanitizer's record of the command (who queued it, its clock)
        self.small = False  # queued by enqueue_small: a few µs of work

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


class Placement:
    """One placement of a notifier on a queue; completes when the queue reaches it."""

    __slots__ = ("event", "host_time", "model_time_us", "queue", "clock")

    def __init__(self, queue: "Queue"):
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


class Queue:
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
        self.observers: list[Callable[[Command], None]] = []
        # Commands wait in `_pending`; each is taken and run under `_run_lock`, either by the worker (woken by a
        # token in `_tokens`) or by a host thread that syncs the queue and finds the worker idle: that keeps the
        # order and saves the two thread wake-ups a synchronous call would cost (see wait_idle).
        self._pending: deque = deque()
        self._tokens: SimpleQueue = SimpleQueue()
        # A token is put only when none is outstanding: the worker runs everything pending per token, so a burst of
        # enqueues costs one wake-up instead of one per command (set and cleared under _submit_lock).
        self._wake_outstanding = False
        #: the ops queued by enqueue_op since a host thread last waited for the queue after queueing one, and
        #: whether that wait came after a single op (see enqueue_op)
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

    # ---- submission ---------------------------------------------------------------------------------------------

    def enqueue(self, command: Command) -> int:
        """Queue `command` (its blocks must already be pinned); runs it at once in blocking mode. Returns the
        command's position in the queue (0 for the first command ever queued)."""
        if self.destroyed or self.lost is not None:
            self._unpin(command)
            self.check_alive()
        if sanitizer is not None:
            sanitizer.enqueued(self, command)
        command.not_before_us = self.host_clock.us
        if self.blocking:
            with self._submit_lock:
                position = self.submitted
                self.submitted += 1
                self._pending.append(command)
            if self in getattr(_running, "queues", ()):
                return position  # queued from inside one of this queue's commands: runs right after it
            with self._run_lock:
                while self._run_next():
                    pass
            fault = self.take_fault()
            if fault is not None:
                raise fault
            return position
        with self._submit_lock:
            position = self.submitted
            self.submitted += 1
            self._pending.append(command)
            self._wake_worker_locked()
        return position

    # ---- work run by the calling thread (cncl's lean path of small collectives) ---------------------------------

    def idle_within(self, seconds: float) -> bool:
        """Wait at most `seconds` (the GIL released; the worker runs the queue's work) for the queue to be idle;
        whether it is. Unlike wait_idle it runs nothing itself and gives up in time."""
        give_up = time.perf_counter() + seconds
        while self._pending or self.completed != self.submitted:
            left = give_up - time.perf_counter()
            if left <= 0 or self._fault is not None or self in getattr(_running, "queues", ()):
                return False
            if self._run_lock.acquire(timeout=left):
                self._run_lock.release()
                if self._pending:  # queued work its worker has not taken yet: give it the lock
                    time.sleep(min(IDLE_POLL_SECONDS, left))
        return True

    def claim_idle(self) -> int:
        """For a caller that runs one command's work in its own thread: when the queue is idle (alive, nothing
        queued or running, no sticky error) and no thread runs its commands, take its run lock and the next
        position, as if a command had been queued there; -1 (nothing taken) otherwise. The caller ends the claim
        with `finish_claimed` or `hand_over_claimed`; work other threads queue meanwhile runs after it, in order."""
        if self._pending or self.completed != self.submitted or self._fault is not None:
            return -1
        # idle: a holder of the run lock is only leaving it (a worker after its batch, a sync after its wait)
        if not self._run_lock.acquire(True, CLAIM_WAIT_SECONDS):
            return -1
        with self._submit_lock:
            if (self._pending or self.completed != self.submitted or self._fault is not None or self.destroyed
                    or self.lost is not None):
                self._run_lock.release()
                return -1
            position = self.submitted
            self.submitted = position + 1
        return position

    def finish_claimed(self, position: int, model_end_us: float) -> None:
        """The claimed command at `position` ran in the calling thread and ended at `model_end_us` on the modelled
        clock: count it done and let the queue run what was queued meanwhile."""
        self.model_clock_us = model_end_us
        self.completed = position + 1
        self._idle_since = time.perf_counter()
        self._run_lock.release()

    def fail_claimed(self, position: int, kind: Kind, name: str, exc: BaseException) -> None:
        """The claimed command at `position` failed in the calling thread: `exc` becomes the queue's sticky error,
        as if the command had failed on the queue."""
        self._fault = QueueFault(exc, f"{kind} '{name}'", self.name, command_kind=kind)
        if not self.blocking:
            self.device.record_fault(self._fault)
        self.finish_claimed(position, self.model_clock_us)

    def hand_over_claimed(self, position: int, command: Command) -> None:
        """The claimed position's work is finished by `command` (its blocks pinned), run by the queue as if it had
        been queued at `position`: before anything queued meanwhile."""
        command.not_before_us = self.host_clock.us
        with self._submit_lock:
            self._pending.appendleft(command)
        if self.blocking:
            try:
                while self._run_next():
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

    def _wake_worker_locked(self) -> None:
        """Start the worker, or wake it unless a wake-up is outstanding (the caller holds `_submit_lock`)."""
        if self._worker is None:
            self._start_worker()
        if not self._wake_outstanding:
            self._wake_outstanding = True
            self._tokens.put(True)

    def enqueue_small(self, command: Command) -> int:
        """Queue a command whose work is a few µs (an op on a handful of elements). When no other thread runs the
        queue's work and nothing is pending but such small commands (a stream of them that fell off this path
        while the worker ran something larger, and which the worker, following the stream, has not taken yet),
        the calling thread runs them and this one at once, as the worker would have: same order, same
        sticky-error handling (an error is reported at the next sync, not raised here), same clocks and hooks.
        Waking the worker for such a command costs more than the command (a thread hand-over and two of the GIL);
        and a stream of tiny ops left to the worker stayed with it for as long as the host kept issuing them.
        Otherwise: `enqueue`."""
        command.small = True
        position = self._run_in_call(command)
        return self.enqueue(command) if position < 0 else position

    def enqueue_op(self, command: Command) -> int:
        """Queue an op of any size. A host that waits for the queue after each op it queues (a test, a benchmark, a
        loop that reads each result) would wait for the next one in its next call anyway: on an idle queue that no
        other thread runs, that op runs at once in the calling thread, as enqueue_small runs a small one. Waking
        the worker for it cost 3-10% of a 24 MiB elementwise op and up to 5% of a 64 MiB reduction on a host whose
        idle cores halt (see mlusim.host.threads; docs/runtime.md). Ops queued without a wait after each go to the
        worker, which gathers them: running the first op of a training step in its call made a small CNN's step
        1-2.5% slower. Otherwise: `enqueue`."""
        self._ops_since_wait += 1
        if self._waits_after_each_op:
            self._waits_after_each_op = False
            position = self._run_in_call(command)
            if position >= 0:
                return position
        return self.enqueue(command)

    def _run_in_call(self, command: Command) -> int:
        """Run `command` in the calling thread (see enqueue_small) and return its position; -1 when the queue's
        state does not allow it (nothing done)."""
        if (self.blocking or self.destroyed or self.lost is not None or sanitizer is not None
                or self in getattr(_running, "queues", ())):
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
                self._run_next()
            return position
        finally:
            self._run_lock.release()

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
        self._finish_unrun(dropped)
        self.completed = self.submitted
        if dropped and self.lost is None and self._fault is None:
            self._fault = QueueFault(IllegalStateFault(
                f"{len(dropped)} command(s) queued before fork() in the parent process (pid {os.getppid()}) do not "
                f"run in this child process"), f"{dropped[0].kind} '{dropped[0].name}'", self.name,
                command_kind=dropped[0].kind)

    def _finish_unrun(self, commands) -> None:
        """Commands that will never run: release their pins; their notifier placements count as reached."""
        for command in commands:
            if command.kind is Kind.NOTIFIER and command.run is not None:
                try:
                    command.run()
                except Exception:
                    pass
            self._unpin(command)

    def _start_worker(self) -> None:
        self._worker = threading.Thread(target=self._work, name=f"mlusim-{self.label}", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        tokens = self._tokens
        last_batch_end = 0.0
        while True:
            token = tokens.get()
            if self.lost is not None:
                return
            if token is not None and (time.perf_counter() - last_batch_end < HOT_SECONDS or self._op_first()):
                self._follow_stream()
            with self._submit_lock:  # what is queued from now on puts a new token; what came before runs below
                self._wake_outstanding = False
                batch = len(self._pending)
            if batch:  # (nothing left: a host thread ran it; the run lock is not taken, so its next small op runs too)
                with self._run_lock:  # this batch only: what the host queues meanwhile waits for its stream to pause
                    while batch > 0 and self._run_next():
                        batch -= 1
            last_batch_end = time.perf_counter()
            if token is None:  # destroyed, and nothing is left
                return

    def _op_first(self) -> bool:
        """Whether the oldest pending command is an op: a host thread issuing ops (a framework's dispatch) goes on
        issuing the next one within a fraction of GATHER_SECONDS, so the first op after a quiet spell is followed
        like the rest of its stream. Started at once, it ran beside the dispatch and both waited for the GIL (the
        first convolution of a small CNN's training step after a CPU step: 1.3-4.9 ms instead of ~0.6)."""
        try:
            return self._pending[0].kind is Kind.OP
        except IndexError:
            return False

    def _follow_stream(self) -> None:
        """Sleep while the host keeps queueing commands (see HOT_SECONDS): until GATHER_SECONDS pass without a new
        one, or STREAM_WAIT_SECONDS in all."""
        give_up = time.perf_counter() + STREAM_WAIT_SECONDS
        seen = self.submitted
        while True:
            time.sleep(GATHER_SECONDS)
            now_submitted = self.submitted
            if now_submitted == seen or time.perf_counter() >= give_up or self.lost is not None:
                return
            seen = now_submitted

    def _run_next(self) -> bool:
        """Run the oldest pending command (the caller holds `_run_lock`); False when there was none."""
        try:
            command = self._pending.popleft()
        except IndexError:
            return False
        running = getattr(_running, "queues", None)
        if running is None:
            running = _running.queues = set()
        running.add(self)
        position = self.completed
        self._current = command
        try:
            self._execute(command, position)
        finally:  # whatever happened, the command is done: a sync must never hang on it
            running.discard(self)
            if self._current is command:
                self._current = None
                if self.lost is None:  # a lost queue already counted the command it lost
                    self.completed = position + 1
                    if self.completed == self.submitted:
                        self._idle_since = time.perf_counter()
        return True

    def _execute(self, command: Command, position: int) -> None:
        try:
            if command.waits_for is not None:
                placement = command.waits_for
                placement.event.wait()
                self.model_clock_us = max(self.model_clock_us, placement.model_time_us)
                if sanitizer is not None:
                    sanitizer.waited(self, placement)
            if self._fault is not None and command.kind is not Kind.NOTIFIER:
                self._skipped += 1
                return
            command.host_start = time.perf_counter()
            model_start = self.model_clock_us
            if command.not_before_us > model_start:
                model_start = command.not_before_us
            command.model_start = self.model_clock_us = model_start
            outer = getattr(_running, "command", None)
            _running.command = command
            try:
                self._check_blocks(command, position)
                if sanitizer is not None:
                    sanitizer.starting(self, command)
                modelled = command.run() if command.run is not None else None
                command.host_end = time.perf_counter()
                if modelled is not None:
                    command.model_us = float(modelled)
                self.model_clock_us = command.model_end = command.model_start + command.model_us
                for observer in self.observers:
                    observer(command)
                for hook in command_hooks:
                    hook(self, command)
                if sanitizer is not None:
                    sanitizer.finished(self, command)
            except BaseException as exc:  # any failure of queued work becomes the queue's sticky error
                command.host_end = time.perf_counter()
                command.model_end = command.model_start
                self._fault = QueueFault(exc, f"{command.kind} '{command.name}'", self.name,
                                         command_kind=command.kind)
                if not self.blocking:  # in blocking mode the error is raised at the call itself
                    self.device.record_fault(self._fault)
                if isinstance(exc, KeyboardInterrupt):
                    raise  # Ctrl-C stops the program too, not only the queue
            finally:
                _running.command = outer
        finally:
            self._unpin(command)

    def _check_blocks(self, command: Command, position: int) -> None:
        """A block freed by an earlier command of this queue (cnrtMemFreeAsync, or cnrtFree inside a host function)
        cannot be used by a later one: that is a use after free, reported instead of touching the memory."""
        for block in command.blocks:
            freed_by = block.freed_by
            if freed_by is not None and freed_by[0] is self and freed_by[1] < position:
                raise UseAfterFreeFault(f"block 0x{block.start:x} (size {block.size}) was freed by an earlier "
                                        f"command of {self.name} (use after free)", None, block.start)

    def _unpin(self, command: Command) -> None:
        # the operands of an op often lie in one block (a caching allocator's segment): its pins go in one step
        previous, count = None, 0
        for block in command.blocks:
            if block is previous:
                count += 1
                continue
            if previous is not None:
                previous.space.unpin(previous, count)
            previous, count = block, 1
        if previous is not None:
            previous.space.unpin(previous, count)

    # ---- completion ---------------------------------------------------------------------------------------------

    def busy(self) -> bool:
        return self.completed < self.submitted

    def wait_idle(self) -> None:
        """Block the calling thread until every command submitted so far has run (not any submitted later).

        The waiter takes the run lock when it can and runs what is pending itself (no thread wake-ups for a
        synchronous call). While the worker holds the lock, the waiter waits for it with a timeout that grows to
        _WAIT_SLICE, and looks at the completed count after each: a worker kept busy by other producers (which never
        lets go of the lock) cannot starve a sync whose own work is done."""
        with self._submit_lock:
            target = self.submitted
        if self.completed < target and self in getattr(_running, "queues", ()):
            raise IllegalStateFault(f"a command of {self.name} waits for its own queue, which can never finish")
        wait = 0.0005
        try:
            while self.completed < target:
                if self._run_lock.acquire(timeout=wait):
                    try:
                        while self.completed < target and self._run_next():
                            pass
                    finally:
                        self._run_lock.release()
                else:
                    wait = min(2 * wait, _WAIT_SLICE)
        except KeyboardInterrupt as interrupt:
            self.interrupted_before = max(self.interrupted_before, target)
            raise KeyboardInterrupt(self._interrupt(str(interrupt))) from None
        if self._ops_since_wait:  # (a wait right after another tells nothing of the host's pattern)
            self._waits_after_each_op = self._ops_since_wait == 1
            self._ops_since_wait = 0
        self.host_clock.waited_until(self.model_clock_us)
        if sanitizer is not None:
            sanitizer.host_synced(self)

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
        self._finish_unrun(dropped)
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

    # ---- notifiers ----------------------------------------------------------------------------------------------

    def place(self, notifier: Notifier) -> Placement:
        """Enqueue a notifier placement (cnrtPlaceNotifier)."""
        placement = Placement(self)

        def reach() -> None:
            placement.host_time = time.perf_counter() - getattr(self.device, "excluded_host_seconds", 0.0)
            placement.model_time_us = self.model_clock_us
            if sanitizer is not None:
                sanitizer.placed(self, placement)
            placement.event.set()

        notifier.current = placement
        if self._inline_allowed():
            position = self.claim_idle()
            if position >= 0:  # an idle queue reaches the placement at once: no hand-over to its worker
                self.model_clock_us = max(self.model_clock_us, self.host_clock.us)
                reach()
                self.finish_claimed(position, self.model_clock_us)
                return placement
        self.enqueue(Command(Kind.NOTIFIER, "placeNotifier", reach))
        return placement

    def wait_for(self, notifier: Notifier) -> None:
        """Make later work of this queue wait until the notifier's latest placement is reached."""
        placement = notifier.current
        if placement is None or placement.queue is self:
            return  # never placed, or placed earlier on this same in-order queue
        if placement.event.is_set() and self._inline_allowed():
            position = self.claim_idle()
            if position >= 0:  # reached already, and this queue is idle: only the modelled clock moves
                self.finish_claimed(position, max(self.model_clock_us, placement.model_time_us, self.host_clock.us))
                return
        self.enqueue(Command(Kind.WAIT, "queueWaitNotifier", None, waits_for=placement))

    def _inline_allowed(self) -> bool:
        """Work may run in the calling thread on an idle queue only when no one watches commands one by one (the
        sanitizer, tracing and other command hooks, observers): they see it queued as usual."""
        return sanitizer is None and not command_hooks and not self.observers


def wait_all(queues: Iterable[Queue]) -> None:
    for queue in list(queues):
        queue.wait_idle()


if os.environ.get("MLUSIM_TRACE"):
    from . import trace as _trace
    _trace.record_from_environment()
