"""The CNNL handle (cnnlHandle_t): bound to the cnrt device current at creation, runs its ops on one queue."""
from __future__ import annotations

import itertools

from cnrt.device import current_device
from cnrt.queues import queue_arg
from mlusim import sanitizer
from mlusim.errors import ArgumentFault, HandleFault
from mlusim.queue import Queue

from .status import api

_handle_ids = itertools.count(1)


class Handle:
    """cnnlHandle_t: a device and the queue its ops are enqueued on."""

    def __init__(self, device):
        self.device = device
        self.queue: Queue = device.default_queue
        self.ident = next(_handle_ids)
        self.destroyed = False

    def __repr__(self) -> str:
        state = " destroyed" if self.destroyed else ""
        return f"<cnnlHandle {self.ident} on device {self.device.index}{state}>"


def handle_arg(handle, arg: str = "handle") -> Handle:
    """The live Handle a handle argument names; BAD_PARAM for anything else."""
    if not isinstance(handle, Handle):
        raise HandleFault(f"{handle!r:.60} is not a cnnlHandle_t created by cnnlCreate", arg)
    if handle.destroyed:
        raise HandleFault("the handle was destroyed by cnnlDestroy", arg)
    return handle


@api("cnnlCreate")
def create() -> Handle:
    """cnnlCreate(cnnlHandle_t *handle) -> handle, bound to the current cnrt device; its queue is that device's
    default queue until cnnlSetQueue."""
    handle = Handle(current_device())
    sanitizer.track(handle, "cnnlHandle_t")
    return handle


@api("cnnlDestroy")
def destroy(handle) -> None:
    """cnnlDestroy(cnnlHandle_t handle): the handle is invalid afterwards (queued work still runs)."""
    handle_arg(handle).destroyed = True


@api("cnnlSetQueue")
def setQueue(handle, queue) -> None:
    """cnnlSetQueue(cnnlHandle_t handle, cnrtQueue_t queue): later ops of the handle run on `queue`
    (NULL = the default queue). The queue must belong to the handle's device."""
    target = handle_arg(handle)
    if queue is None or (isinstance(queue, int) and queue == 0):
        chosen = target.device.default_queue
    else:
        chosen = queue_arg(queue)
    if chosen.device is not target.device:
        raise ArgumentFault(f"the queue is on device {chosen.device.index} but the handle is bound to device "
                            f"{target.device.index}", "queue")
    target.queue = chosen


@api("cnnlGetQueue")
def getQueue(handle) -> Queue:
    """cnnlGetQueue(cnnlHandle_t handle, cnrtQueue_t *queue) -> queue."""
    return handle_arg(handle).queue
