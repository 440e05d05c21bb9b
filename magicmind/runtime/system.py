"""mm.System, mm.Device and the queue a Device creates (a cnrt queue underneath)."""
from __future__ import annotations

import numbers

import cnrt

from ..status import Code, MagicMindError, Status


class System:
    """mm.System(): the runtime's lifetime scope. A context manager; what is created inside stays usable after it
    (the samples create engines inside and run them later)."""

    def __init__(self):
        self._initialized = False

    def initialize(self) -> Status:
        """System::Initialize()."""
        self._initialized = True
        return Status()

    def destroy(self) -> Status:
        """System::Destroy() (the samples also spell it `destory`)."""
        self._initialized = False
        return Status()

    destory = destroy

    def device_count(self) -> int:
        """The number of MLU devices (cnrtGetDeviceCount)."""
        return cnrt.getDeviceCount()

    def __enter__(self) -> "System":
        self.initialize()
        return self

    def __exit__(self, *exc) -> bool:
        self.destroy()
        return False


class Queue:
    """The queue mm.Device.create_queue() returns: a cnrt queue (`.cnrt_queue`), with sync() -> Status."""

    def __init__(self, queue):
        self.cnrt_queue = queue

    def sync(self) -> Status:
        """Wait for the queue (cnrtQueueSync); a sticky error of queued work comes back as its Status."""
        try:
            cnrt.queueSync(self.cnrt_queue)
        except cnrt.CnrtError as error:
            return Status(Code.INTERNAL, f"queue sync: {error}")
        return Status()

    def destroy(self) -> Status:
        try:
            cnrt.queueDestroy(self.cnrt_queue)
        except cnrt.CnrtError as error:
            return Status(Code.INVALID_ARGUMENT, f"queue destroy: {error}")
        return Status()

    def __repr__(self) -> str:
        return f"<mm queue {self.cnrt_queue!r}>"


def queue_arg(queue, arg: str = "queue"):
    """The cnrt queue behind a queue argument: an mm queue or a cnrt queue (cnrtQueue_t)."""
    if isinstance(queue, Queue):
        queue = queue.cnrt_queue
    if not isinstance(queue, cnrt.cnrtQueue_t):
        raise MagicMindError(Code.INVALID_ARGUMENT, f"{arg}: {queue!r:.60} is not a queue (Device.create_queue() "
                                                    f"or cnrt.queueCreate())")
    if queue.destroyed:
        raise MagicMindError(Code.INVALID_ARGUMENT, f"{arg}: the queue was destroyed")
    return queue


class Device:
    """mm.Device(): set `.id`, then `active()` makes it the current device; `create_queue()` makes a queue on it."""

    def __init__(self, id: int = 0):  # noqa: A002  (MagicMind's name)
        self._id = 0
        self.id = id

    @property
    def id(self) -> int:
        return self._id

    @id.setter
    def id(self, value) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise MagicMindError(Code.INVALID_ARGUMENT, f"Device.id: {value!r} is not a device index")
        self._id = int(value)

    def active(self) -> Status:
        """Device::Active(): the current device of this thread (cnrtSetDevice)."""
        try:
            cnrt.setDevice(self._id)
        except cnrt.CnrtError as error:
            return Status(Code.INVALID_ARGUMENT, f"Device.active: device {self._id}: {error}")
        return Status()

    def create_queue(self) -> Queue:
        """A new queue on this device."""
        previous = cnrt.getDevice()
        try:
            cnrt.setDevice(self._id)
            return Queue(cnrt.queueCreate())
        except cnrt.CnrtError as error:
            raise MagicMindError(Code.INVALID_ARGUMENT, f"Device.create_queue: device {self._id}: {error}") from None
        finally:
            cnrt.setDevice(previous)

    def __repr__(self) -> str:
        return f"<mm Device {self._id}>"
