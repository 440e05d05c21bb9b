"""Notifiers (cnrtNotifier_t): placement on queues, waits, queries, and the two clocks."""
from __future__ import annotations

from mlusim import sanitizer
from mlusim.errors import ArgumentFault, HandleFault, NotReadyFault
from mlusim import notifier as notifiers
from mlusim.notifier import Notifier
from mlusim.validate import as_int

from . import constants as C
from .errors import api, cnrtErrorNotReady, cnrtSuccess, set_last_error
from .queues import notifier_arg, queue_arg


@api("cnrtNotifierCreate", "cnrtCreateNotifier")
def notifierCreate() -> Notifier:
    """cnrtNotifierCreate(cnrtNotifier_t *notifier) -> notifier (v4: cnrtCreateNotifier)."""
    notifier = Notifier()
    sanitizer.track(notifier, "cnrtNotifier_t")
    return notifier


@api("cnrtNotifierCreateWithFlags")
def notifierCreateWithFlags(flags: int) -> Notifier:
    """cnrtNotifierCreateWithFlags(notifier*, flags): CNRT_NOTIFIER_DEFAULT, _DISABLE_TIMING_SW, _DISABLE_TIMING_ALL,
    _INTERPROCESS (or-ed)."""
    value = as_int(flags, "flags", minimum=0)
    if value & ~C.NOTIFIER_FLAGS:
        raise ArgumentFault(f"unknown notifier flag bits 0x{value & ~C.NOTIFIER_FLAGS:x}", "flags")
    timing = not value & (C.CNRT_NOTIFIER_DISABLE_TIMING_SW | C.CNRT_NOTIFIER_DISABLE_TIMING_ALL)
    notifier = Notifier(flags=value, timing=bool(timing))
    sanitizer.track(notifier, "cnrtNotifier_t")
    return notifier


@api("cnrtNotifierDestroy", "cnrtDestroyNotifier")
def notifierDestroy(notifier) -> None:
    """cnrtNotifierDestroy (v4: cnrtDestroyNotifier, which takes the notifier's address in C)."""
    notifier_arg(notifier).destroyed = True


@api("cnrtPlaceNotifier")
def placeNotifier(notifier, queue) -> None:
    """cnrtPlaceNotifier(notifier, queue): the notifier completes when the queue reaches this point."""
    target = notifier_arg(notifier)
    notifiers.place(target, queue_arg(queue))


@api("cnrtWaitNotifier")
def waitNotifier(notifier) -> None:
    """cnrtWaitNotifier: block the host until the notifier's last placement is reached."""
    placement = notifier_arg(notifier).current
    if placement is not None:
        placement.event.wait()
        placement.queue.host_clock.waited_until(placement.model_time_us)  # a wait is a sync for the model
        sanitizer.host_waited(placement)


@api("cnrtQueryNotifier")
def queryNotifier(notifier) -> int:
    """cnrtQueryNotifier: cnrtSuccess when reached (or never placed), cnrtErrorNotReady (also the last error) if not."""
    target = notifier_arg(notifier)
    if target.done():
        sanitizer.host_waited(target.current)  # the host saw it reached: as good as a wait
        return cnrtSuccess
    set_last_error(cnrtErrorNotReady)
    return cnrtErrorNotReady


def _completed_pair(start, end):
    first, second = notifier_arg(start, "start"), notifier_arg(end, "end")
    for notifier, arg in ((first, "start"), (second, "end")):
        if notifier.current is None:
            raise HandleFault("the notifier was never placed on a queue", arg)
        if not notifier.timing:
            raise HandleFault("the notifier was created with timing disabled", arg)
        if not notifier.current.event.is_set():
            raise NotReadyFault("the notifier has not been reached yet", arg)
    return first.current, second.current


@api("cnrtNotifierElapsedTime")
def notifierElapsedTime(start, end) -> float:
    """cnrtNotifierElapsedTime(start, end, float *ms) -> ms: host (software) time between the two notifiers."""
    first, second = _completed_pair(start, end)
    return (second.host_time - first.host_time) * 1e3


@api("cnrtNotifierDuration")
def notifierDuration(start, end) -> float:
    """cnrtNotifierDuration(start, end, float *us) -> us: modelled device time between the two notifiers
    (an estimate from mlusim.cost, not a measurement)."""
    first, second = _completed_pair(start, end)
    return second.model_time_us - first.model_time_us
