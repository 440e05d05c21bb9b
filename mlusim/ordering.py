"""A synchronous call never reads stale bytes: it waits for the earlier work of other queues that it conflicts with.

cnrtMemcpy, cnrtMemcpyPeer, cnrtMemcpy2D and the synchronous fills run on the device's default queue and return when
done. A program that queues an op on its own queue and then reads the op's output with a synchronous copy, without a
sync in between (it even destroys the queue first), depends on an ordering CNRT does not promise between queues; on
the device it gets the op's result, so here the synchronous call waits for every earlier command of another queue
that writes the bytes it reads or touches the bytes it writes (the commands' declared ranges say which: nothing
waits when nothing overlaps). It then warns, once per call site, naming the call site and the queue it waited for;
the sanitizer's racecheck still reports the race (the wait is not a sync), and MLUSIM_STRICT=1 makes it an error
(cnrtErrorIllegalState) instead.
"""
from __future__ import annotations

import threading
import warnings

from . import config
from . import device as devices
from .command import running_queues
from .errors import IllegalStateFault
from .sanitizer.report import capture_stack, user_frames


class UnorderedAccessWarning(UserWarning):
    """A synchronous call needed work of another queue that nothing ordered before it."""


_warned: set = set()
_warned_lock = threading.Lock()


def _overlap(extents_a, extents_b) -> bool:
    for address_a, nbytes_a in extents_a:
        for address_b, nbytes_b in extents_b:
            if address_a < address_b + nbytes_b and address_b < address_a + nbytes_a:
                return True
    return False


def conflicts(command, reads, writes) -> bool:
    """Whether `command` writes bytes of `reads`, or touches bytes of `writes`."""
    return _overlap(command.writes, reads) or _overlap(command.writes, writes) or _overlap(command.reads, writes)


def wait_for_conflicting_work(name: str, submission, own_queue) -> None:
    """Before the synchronous call `name` (its ranges in `submission`) runs on `own_queue`: wait for the earlier
    commands of every other queue that conflict with it (warning once per call site), or refuse in strict mode."""
    reads, writes = submission.reads, submission.writes
    if not reads and not writes:
        return
    inside = running_queues()  # a call from a command's work: that command is the caller, the rest runs after it
    for device in devices.devices():
        for queue in device.queues_with_work():
            if queue is own_queue or queue in inside:
                continue
            found = queue.last_conflict(lambda command: conflicts(command, reads, writes))
            if found is None:
                continue
            position, other = found
            message = (f"{name} needs the result of {other.kind} '{other.name}' queued earlier on {queue.name}, which "
                       f"nothing orders before it (no sync or notifier wait): CNRT does not promise this ordering "
                       f"between queues; sync that queue first")
            if config.flag(config.environ().get("MLUSIM_STRICT")):
                raise IllegalStateFault(f"{message} (MLUSIM_STRICT=1)", None)
            _warn_once(message)
            queue.wait_until(position)


def reset_warnings() -> None:
    """Warn again at call sites that were warned already (tests; a long-running program after a fix)."""
    with _warned_lock:
        _warned.clear()


def _warn_once(message: str) -> None:
    site = next(iter(user_frames(capture_stack(2))), ("<unknown>", 0, ""))
    key = (site[0], site[1])
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn_explicit(f"{message} (mlusim waited for it, as the device would have run it by now)",
                           UnorderedAccessWarning, site[0], site[1])
