"""Queues (cnrtQueue_t): creation, sync, query, cross-queue waits, host functions; the queue-argument rule."""
from __future__ import annotations

import threading

from mlusim import sanitizer
from mlusim.errors import ArgumentFault, HandleFault
from mlusim import notifier as notifiers
from mlusim.notifier import Notifier
from mlusim.queue import Queue
from mlusim.submit import Kind, Submission
from mlusim.validate import as_enum, as_int, is_address

from . import constants as C
from .device import current_device
from .errors import api, cnrtErrorNotReady, cnrtSuccess, set_last_error

_per_thread = threading.local()


def queue_arg(queue, arg: str = "queue") -> Queue:
    """The Queue a C queue argument names: NULL / cnrtQueueLegacy = the current device's default queue,
    cnrtQueuePerThread = this host thread's own queue, else a live queue handle."""
    if queue is None or (is_address(queue) and int(queue) in (0, C.cnrtQueueLegacy)):
        return current_device().default_queue
    if is_address(queue) and int(queue) == C.cnrtQueuePerThread:
        return _per_thread_queue()
    if not isinstance(queue, Queue):
        raise HandleFault(f"{queue!r:.60} is not a queue", arg)
    queue.check_alive(arg)
    return queue


def _per_thread_queue() -> Queue:
    device = current_device()
    queues = getattr(_per_thread, "queues", None)
    if queues is None:
        queues = _per_thread.queues = {}
    queue = queues.get(device.index)
    if queue is None or queue.destroyed or queue.device is not device:
        queue = queues[device.index] = device.create_queue(label=f"per-thread queue ({threading.current_thread().name})")
    return queue


def _user_queue(queue, arg: str = "queue") -> Queue:
    """A queue the caller created (not a special handle)."""
    if not isinstance(queue, Queue):
        raise HandleFault(f"{queue!r:.60} is not a queue created by queueCreate", arg)
    queue.check_alive(arg)
    if queue is queue.device.default_queue:
        raise HandleFault("the default queue cannot be destroyed", arg)
    return queue


@api("cnrtQueueCreate", "cnrtCreateQueue")
def queueCreate() -> Queue:
    """cnrtQueueCreate(cnrtQueue_t *queue) -> queue, on the current device (v4: cnrtCreateQueue)."""
    queue = current_device().create_queue()
    sanitizer.track(queue, "cnrtQueue_t")
    return queue



@api("cnrtQueueCreateWithPriority")
def queueCreateWithPriority(flags: int, priority: int) -> Queue:
    """cnrtQueueCreateWithPriority(cnrtQueue_t *queue, unsigned flags, int priority) -> queue.
    Priorities outside [QUEUE_PRIORITY_GREATEST, QUEUE_PRIORITY_LEAST] are clamped, as on hardware."""
    as_enum(flags, "flags", (0, 1), "queue flag")
    value = as_int(priority, "priority")
    value = min(C.QUEUE_PRIORITY_LEAST, max(C.QUEUE_PRIORITY_GREATEST, value))
    queue = current_device().create_queue(priority=value)
    sanitizer.track(queue, "cnrtQueue_t")
    return queue


@api("cnrtQueueGetPriority")
def queueGetPriority(queue) -> int:
    """cnrtQueueGetPriority(cnrtQueue_t queue, int *priority) -> priority."""
    return queue_arg(queue).priority


@api("cnrtDeviceGetQueuePriorityRange")
def deviceGetQueuePriorityRange() -> tuple[int, int]:
    """cnrtDeviceGetQueuePriorityRange(int *least, int *greatest) -> (least, greatest)."""
    return C.QUEUE_PRIORITY_LEAST, C.QUEUE_PRIORITY_GREATEST


@api("cnrtQueueDestroy", "cnrtDestroyQueue")
def queueDestroy(queue) -> None:
    """cnrtQueueDestroy: queued work still runs; the handle is invalid afterwards (v4: cnrtDestroyQueue)."""
    target = _user_queue(queue)
    target.device.destroy_queue(target)



@api("cnrtQueueSync", "cnrtSyncQueue")
def queueSync(queue) -> None:
    """cnrtQueueSync: wait for all work of the queue; raises its sticky error (v4: cnrtSyncQueue)."""
    queue_arg(queue).sync()



@api("cnrtQueueQuery")
def queueQuery(queue) -> int:
    """cnrtQueueQuery: cnrtSuccess when all work is done, cnrtErrorNotReady (also made the last error) while busy.
    A sticky error of the queue is raised (and stays for the next sync)."""
    target = queue_arg(queue)
    if target.busy():
        set_last_error(cnrtErrorNotReady)
        return cnrtErrorNotReady
    fault = target.peek_fault()
    if fault is not None:
        raise fault
    sanitizer.host_observed(target)  # the host saw the queue idle: as good as a sync
    return cnrtSuccess


@api("cnrtQueueWaitNotifier")
def queueWaitNotifier(notifier, queue, flag: int = 0) -> None:
    """cnrtQueueWaitNotifier(notifier, queue, flag): later work of `queue` waits for the notifier's last placement."""
    target_notifier = notifier_arg(notifier)
    as_enum(flag, "flag", (0,), "wait flag")
    notifiers.make_wait(queue_arg(queue), target_notifier)


@api("cnrtInvokeHostFunc")
def invokeHostFunc(queue, fn, userData=None) -> None:
    """cnrtInvokeHostFunc(queue, fn, userData): call fn(userData) on the host when the queue reaches it.
    An exception in fn becomes the queue's sticky error."""
    if not callable(fn):
        raise ArgumentFault(f"expected a callable, got {type(fn).__name__}", "fn")
    target = queue_arg(queue)

    def call() -> None:  # the host function's return value is not a modelled time
        fn(userData)

    Submission(Kind.HOST_FUNC, getattr(fn, "__name__", "host function")).submit(target, call)


def notifier_arg(notifier, arg: str = "notifier") -> Notifier:
    if not isinstance(notifier, Notifier):
        raise HandleFault(f"{notifier!r:.60} is not a notifier", arg)
    notifier.check_alive(arg)
    return notifier
