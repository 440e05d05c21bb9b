"""A synchronous call never reads stale bytes: it waits for the earlier work of other queues that it conflicts with.

cnrtMemcpy, cnrtMemcpyPeer, cnrtMemcpy2D and the synchronous fills run on the device's default queue and return when
done. A program that queues an op on its own queue and then reads the op's output with a synchronous copy, without a
sync in between (it even destroys the queue first), depends on an ordering CNRT does not promise between queues; on
the device it gets the op's result, so here the synchronous call waits for every earlier command of another queue
that writes the bytes it reads or touches the bytes it writes (the commands' declared ranges say which: nothing
waits when nothing overlaps). It is tolerated as mlusim.lenient tolerates what the real library accepts: a warning
once per call site naming the command and its queue, or, with MLUSIM_STRICT=1, the error (cnrtErrorIllegalState).
The sanitizer's racecheck still reports the race (the wait is not a sync).
"""
from __future__ import annotations

from . import device as devices
from .command import running_queues
from .errors import IllegalStateFault
from .lenient import LenientWarning, tolerate


class UnorderedAccessWarning(LenientWarning):
    """A synchronous call needed work of another queue that nothing ordered before it."""


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
            fault = IllegalStateFault(f"{name} needs the result of {other.kind} '{other.name}' queued earlier on "
                                      f"{queue.name}, which nothing orders before it (no sync or notifier wait); "
                                      f"mlusim waited for it, as the device would have run it by now: sync that "
                                      f"queue first", None)
            tolerate("CNRT does not order a synchronous call after other queues' work", name, fault,
                     UnorderedAccessWarning)
            queue.wait_until(position)
