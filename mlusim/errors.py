"""Faults raised by the simulated hardware.

The device layer knows nothing of C status codes: it raises these faults, and each API layer (cnrt, cnnl, cncl)
translates a fault into its own error with its own status code (see `mlusim.apicall`). Messages name the argument
and the reason; the API layer prefixes the C function name.
"""
from __future__ import annotations


class Fault(Exception):
    """Base of every simulator fault. `arg` names the offending argument when there is one."""

    kind = "fault"

    def __init__(self, message: str, arg: str | None = None):
        super().__init__(message)
        self.message = message
        self.arg = arg

    def __str__(self) -> str:
        if self.arg:
            return f"argument '{self.arg}': {self.message}"
        return self.message


class ArgumentFault(Fault):
    """A bad argument value or type."""

    kind = "argument"


class NotSupportedFault(Fault):
    """A valid request this board or simulator does not support."""

    kind = "not_supported"


class HandleFault(Fault):
    """A handle (queue, notifier, ...) that is not one, or was destroyed."""

    kind = "handle"


class DeviceIdFault(Fault):
    """A device ordinal out of range."""

    kind = "device"


class NoDeviceFault(Fault):
    """No device is visible to this process (MLU_VISIBLE_DEVICES leaves none)."""

    kind = "no_device"


class DirectionFault(Fault):
    """A memcpy direction that does not match the pointer kinds."""

    kind = "direction"


class NotReadyFault(Fault):
    """Work that has not completed yet (a notifier not yet reached)."""

    kind = "not_ready"


class IllegalStateFault(Fault):
    """A call that is not allowed in the current state."""

    kind = "illegal_state"


# ---- device memory --------------------------------------------------------------------------------------------

class MemoryFault(Fault):
    """Base of device-memory faults; `address` is the offending device address."""

    kind = "memory"

    def __init__(self, message: str, arg: str | None = None, address: int | None = None):
        super().__init__(message, arg)
        self.address = address


class NullPointerFault(MemoryFault):
    kind = "null_pointer"


class UnknownAddressFault(MemoryFault):
    kind = "unknown_address"


class UseAfterFreeFault(MemoryFault):
    kind = "use_after_free"


class DoubleFreeFault(MemoryFault):
    kind = "double_free"


class OutOfBoundsFault(MemoryFault):
    kind = "out_of_bounds"


class NegativeOffsetFault(OutOfBoundsFault):
    kind = "negative_offset"


class NotBlockStartFault(MemoryFault):
    """free() of an address inside a block but not at its start."""

    kind = "not_block_start"


class OutOfMemoryFault(MemoryFault):
    kind = "out_of_memory"


class HostOutOfMemoryFault(Fault):
    """Pinned host memory that the host (or the host-wide budget of simulated memory) cannot provide."""

    kind = "host_out_of_memory"


# ---- work that failed on a queue -----------------------------------------------------------------------------

class KernelFault(Fault):
    """A kernel violated a rule while running (bounds, capacity, trap, assert, deadlock)."""

    kind = "kernel"

    def __init__(self, message: str, kernel: str = "", task_id: int | None = None, reason: str = "trap"):
        super().__init__(message)
        self.kernel = kernel
        self.task_id = task_id
        self.reason = reason


class QueueFault(Fault):
    """A sticky error: a queued command failed. Raised by the next sync of its queue and of its device.

    `cause` is the original exception, `command` the failed command's description, `skipped` the number of
    later commands of the same queue that were not run because of it.
    """

    kind = "queue"

    def __init__(self, cause: BaseException, command: str, queue: str, skipped: int = 0, command_kind: str = ""):
        self.cause = cause
        self.command_kind = command_kind
        self.command = command
        self.queue = queue
        self.skipped = skipped
        super().__init__(self._describe())

    def _describe(self) -> str:
        text = f"{self.command} failed on {self.queue}: {self.cause}"
        if self.skipped:
            text += f" ({self.skipped} later command(s) on that queue were not run)"
        return text

    def with_skipped(self, skipped: int) -> "QueueFault":
        return QueueFault(self.cause, self.command, self.queue, skipped, self.command_kind)
