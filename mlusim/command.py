"""What a queue runs: `Command` (one unit of queued work, built by mlusim.submit.Submission) and its `Kind`, and which
command and queues the calling host thread is running."""
from __future__ import annotations

import enum
import threading
from typing import Callable, Optional

#: The queues whose command the current host thread is running (to refuse a command that waits on its own queue),
#: and that command.
_running = threading.local()


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


class Command:
    """One unit of queued work, built by mlusim.submit.Submission (notifier placements and waits: by the queue).

    `run()` does the work; it may return a float to replace `model_us` (work whose cost is known only once it ran).
    `reads`/`writes` are (address, nbytes) ranges; `blocks` are the memory blocks pinned until the command is done;
    `nbytes` the bytes the work moves (-1: not known before it runs), from which the queue decides where it runs.
    """

    __slots__ = ("kind", "name", "run", "reads", "writes", "model_us", "blocks", "waits_for", "nbytes",
                 "host_start", "host_end", "model_start", "model_end", "info", "not_before_us", "sanitized",
                 "small")

    def __init__(self, kind: Kind, name: str, run: Optional[Callable[[], Optional[float]]] = None,
                 reads: tuple = (), writes: tuple = (), model_us: float = 0.0, blocks: tuple = (),
                 waits_for=None, info: Optional[dict] = None, nbytes: int = -1):
        self.kind = kind if kind.__class__ is Kind else Kind(kind)
        self.name = name
        self.run = run
        self.reads = reads
        self.writes = writes
        self.model_us = model_us
        self.blocks = blocks
        self.waits_for = waits_for
        self.nbytes = nbytes
        self.host_start = self.host_end = 0.0
        self.model_start = self.model_end = 0.0
        self.info = info
        self.not_before_us = 0.0
        self.sanitized = None  # the sanitizer's record of the command (who queued it, its clock)
        self.small = False  # the queue found it a few µs of work (Queue.submit)

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


def current_command() -> Optional[Command]:
    """The command the calling thread is running for a queue (None outside queued work)."""
    return getattr(_running, "command", None)


def running_queues() -> set:
    """The queues whose commands the calling thread is running (empty outside queued work)."""
    queues = getattr(_running, "queues", None)
    if queues is None:
        queues = _running.queues = set()
    return queues


def running_queue():
    """The queue whose command the calling host thread is running (None outside queued work)."""
    queues = getattr(_running, "queues", None)
    if not queues:
        return None
    return next(iter(queues))
