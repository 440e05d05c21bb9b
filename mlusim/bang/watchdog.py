"""Time limits and interrupts of kernel launches: a launch that runs past its time limit, or whose waiting host
thread gets Ctrl-C, is stopped with an error naming the kernel, instead of blocking queueSync forever.

A `Stopper` belongs to one launch and knows the host threads running its tasks. Stopping it lists those threads in
the stop table (mlusim.bang.cancel), where the tasks' polls find them (every intrinsic, copy, pointer access and
loop head polls), so the tasks end with TaskStopped. One watchdog thread per process keeps the deadlines of all
running launches. A task that does not stop within GRACE_SECONDS (code that never polls, e.g. a plain numba
function called from the kernel that loops forever) is given up: the launch fails, and its host thread is left
behind (its queue is lost; see Queue.abandon).

Time limit: `@bang.kernel(time_limit=seconds)`, `kernel.time_limit`, or MLUSIM_BANG_TIME_LIMIT (seconds; 0 or
"none" for no limit); default DEFAULT_TIME_LIMIT. Debug-mode kernels have no limit unless one is set explicitly
(a breakpoint() may wait for a person).
"""
from __future__ import annotations

import os
import queue as queues
import signal
import threading
import time
from concurrent.futures import Future
from typing import Callable, Optional

from mlusim import config

from . import cancel

#: Seconds a launch may run before the watchdog stops it, unless configured otherwise.
DEFAULT_TIME_LIMIT = 120.0
#: Seconds a stopped launch gets to end before it is given up.
GRACE_SECONDS = 2.0


def time_limit_from(value) -> Optional[float]:
    """A time limit in seconds from a setting: None / 0 / 'none' / 'off' mean no limit."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "0", "none", "off", "no"):
            return None
        value = float(text)
    seconds = float(value)
    if seconds != seconds or seconds < 0:
        raise ValueError(f"a kernel time limit must be a number of seconds >= 0, got {value!r}")
    return seconds or None


def default_time_limit(debug: bool) -> Optional[float]:
    setting = config.environ().get("MLUSIM_BANG_TIME_LIMIT")
    if setting is not None:
        return time_limit_from(setting)
    return None if debug else DEFAULT_TIME_LIMIT


class Stopper:
    """Stops the tasks of one launch (see the module doc)."""

    __slots__ = ("python_tasks", "reason", "stuck", "finished", "on_stuck", "_threads", "_lock", "_callbacks")

    def __init__(self, python_tasks: bool):
        self.python_tasks = python_tasks  # debug mode: tasks are Python code, stopped by an asynchronous exception
        self.reason: Optional[str] = None
        self.stuck = False
        self.finished = False
        self.on_stuck: Optional[Callable[[], None]] = None
        self._threads: set[int] = set()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[str], None]] = []

    def on_stop(self, callback: Callable[[str], None]) -> None:
        """Also call `callback(reason)` when the launch is stopped (barriers, gates the tasks may wait at)."""
        with self._lock:
            self._callbacks.append(callback)
            reason = self.reason
        if reason is not None:
            callback(reason)

    def enter(self) -> None:
        """The calling host thread starts running tasks of this launch. (No lock: `stop` sets the reason before it
        reads the threads, and a thread reads the reason after it added itself, so none is missed.)"""
        ident = threading.get_ident()
        self._threads.add(ident)
        if self.reason is not None:
            self._stop_thread(ident)

    def leave(self) -> None:
        """The calling host thread runs no more tasks of this launch."""
        ident = threading.get_ident()
        self._threads.discard(ident)
        if self.reason is not None:
            cancel.unlist_threads([ident])

    def stop(self, reason: str) -> None:
        """Make every task of the launch stop at its next poll (the first reason given is kept)."""
        with self._lock:
            if self.reason is not None or self.finished:
                return
            self.reason = reason
            for ident in tuple(self._threads):
                self._stop_thread(ident)
            callbacks = list(self._callbacks)
        if self.on_stuck is not None:
            _grace(self, self.on_stuck)
        for callback in callbacks:
            callback(reason)

    def _stop_thread(self, ident: int) -> None:
        cancel.list_threads([ident])
        if self.python_tasks:
            cancel.interrupt_python_thread(ident)

    def close(self) -> None:
        """The launch is over."""
        with self._lock:
            self.finished = True
            stopped = self.reason is not None
        if stopped:
            cancel.unlist_threads(tuple(self._threads))
        if self.on_stuck is not None:
            unwatch(self)


# ---- the watchdog thread ------------------------------------------------------------------------------------------

#: running launches with a deadline: stopper -> (deadline, description, on_stuck, seconds)
_limits: dict = {}
#: stopped launches: stopper -> (deadline by which they must have ended, on_stuck)
_graces: dict = {}
_cond = threading.Condition()
_thread: Optional[threading.Thread] = None
_sleeping_until = [float("inf")]


def watch(stopper: Stopper, seconds: Optional[float], description: str, on_stuck: Callable[[], None]) -> None:
    """Stop `stopper`'s launch after `seconds` (None: never); call `on_stuck()` if it has not ended GRACE_SECONDS
    after it was stopped (by the watchdog or by an interrupt)."""
    global _thread
    stopper.on_stuck = on_stuck
    with _cond:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="mlusim-bang-watchdog", daemon=True)
            _thread.start()
        if seconds is not None:
            deadline = time.monotonic() + seconds
            _limits[stopper] = (deadline, description, on_stuck, seconds)
            if deadline < _sleeping_until[0]:
                _cond.notify()  # only an earlier deadline changes how long the watchdog sleeps


def unwatch(stopper: Stopper) -> None:
    with _cond:
        _limits.pop(stopper, None)
        _graces.pop(stopper, None)


def _grace(stopper: Stopper, on_stuck: Callable[[], None]) -> None:
    with _cond:
        if not stopper.finished:
            _graces[stopper] = (time.monotonic() + GRACE_SECONDS, on_stuck)
            _cond.notify()


def _run() -> None:
    while True:
        expired, stuck = [], []
        with _cond:
            now = time.monotonic()
            for stopper, entry in list(_limits.items()):
                if entry[0] <= now:
                    expired.append((stopper, entry))
                    del _limits[stopper]
            for stopper, (deadline, on_stuck) in list(_graces.items()):
                if deadline <= now:
                    stuck.append((stopper, on_stuck))
                    del _graces[stopper]
            if not expired and not stuck:
                earliest = min([entry[0] for entry in _limits.values()] + [g[0] for g in _graces.values()],
                               default=float("inf"))
                _sleeping_until[0] = earliest
                _cond.wait(None if earliest == float("inf") else earliest - now)
                _sleeping_until[0] = 0.0
                continue
        for stopper, (_, description, _, seconds) in expired:
            stopper.stop(f"{description} ran past its time limit of {seconds:g} s (set it with "
                         f"@bang.kernel(time_limit=...) or MLUSIM_BANG_TIME_LIMIT)")
        for stopper, on_stuck in stuck:
            if not stopper.finished:
                stopper.stuck = True
                try:
                    on_stuck()
                except Exception:  # the watchdog must survive whatever the callback does
                    pass


# ---- Ctrl-C while the main thread itself runs tasks ----------------------------------------------------------------

class _SigintWatch:
    """Stops launches the main thread runs itself when SIGINT arrives.

    Python runs its SIGINT handler only when the main thread returns to bytecode, which compiled task code never
    does. But the C-level handler writes the signal number to the wakeup fd (signal.set_wakeup_fd) at once: while
    the main thread runs tasks, that fd is a pipe a watcher thread reads, and a SIGINT byte stops the launch (its
    tasks poll), after which Python raises KeyboardInterrupt as usual. When another wakeup fd is in use (an asyncio
    loop), the main thread runs its launches on a helper thread instead (`inline_on_main` says so)."""

    def __init__(self):
        self._pipe = None
        self._running: set = set()
        self._lock = threading.Lock()

    def _ensure(self):
        if self._pipe is None:
            reader, writer = os.pipe()
            os.set_blocking(writer, False)
            self._pipe = (reader, writer)
            threading.Thread(target=self._watch, args=(reader,), name="mlusim-bang-sigint", daemon=True).start()
        return self._pipe[1]

    def _watch(self, reader: int) -> None:
        while True:
            try:
                data = os.read(reader, 64)
            except OSError:
                return
            if signal.SIGINT in data:
                with self._lock:
                    stoppers = list(self._running)
                for stopper in stoppers:
                    stopper.stop("interrupted by KeyboardInterrupt (Ctrl-C)")

    def begin(self, stopper: "Stopper"):
        """Watch for SIGINT while the main thread runs `stopper`'s tasks; None when the wakeup fd is taken."""
        try:
            writer = self._ensure()
            previous = signal.set_wakeup_fd(writer, warn_on_full_buffer=False)
        except (ValueError, OSError):
            return None
        if previous not in (-1, writer):  # someone else's wakeup fd (asyncio): give it back, use a helper thread
            signal.set_wakeup_fd(previous)
            return None
        with self._lock:
            self._running.add(stopper)
        return previous

    def end(self, stopper: "Stopper", previous) -> None:
        with self._lock:
            self._running.discard(stopper)
        signal.set_wakeup_fd(previous)


SIGINT_WATCH = _SigintWatch()


# ---- helper threads for launches made on the main thread ----------------------------------------------------------

class _DaemonPool:
    """Daemon threads that run launches for the main thread (which must stay free to receive Ctrl-C). A thread
    that never returns is simply left behind: the pool starts another when it needs one, and daemon threads do not
    hold up the interpreter's exit."""

    def __init__(self):
        self._jobs: queues.SimpleQueue = queues.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, function: Callable[[], object]) -> Future:
        future: Future = Future()
        with self._lock:
            if self._idle == 0:
                threading.Thread(target=self._work, name="mlusim-bang-launch", daemon=True).start()
            else:
                self._idle -= 1
        self._jobs.put((function, future))
        return future

    def _work(self) -> None:
        while True:
            function, future = self._jobs.get()
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(function())
                except BaseException as exc:  # handed to the waiting thread
                    future.set_exception(exc)
            with self._lock:
                self._idle += 1


HELPERS = _DaemonPool()


def reset_after_fork() -> None:
    """A forked child has no watchdog or helper threads."""
    global _thread, _cond, HELPERS, SIGINT_WATCH
    _thread = None
    SIGINT_WATCH = _SigintWatch()
    _cond = threading.Condition()
    _limits.clear()
    _graces.clear()
    _sleeping_until[0] = float("inf")
    HELPERS = _DaemonPool()
    cancel.reset_after_fork()


os.register_at_fork(after_in_child=reset_after_fork)
