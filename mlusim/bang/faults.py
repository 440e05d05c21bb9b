"""Exceptions a kernel body raises when it breaks a rule; the launcher turns them into mlusim KernelFault.

They are raised from compiled code with a runtime message, so they carry only that message; the launcher adds the
kernel name and the task id.
"""


class KernelTrap(Exception):
    """An illegal access or misuse (bounds, capacity, memory space, direction, alignment, deadlock)."""

    reason = "trap"


class KernelAssert(KernelTrap):
    """A failed `bang.assert_` (__assert)."""

    reason = "assert"


class KernelUserTrap(KernelTrap):
    """An explicit `bang.trap()` (__bang_trap / __abort)."""

    reason = "user_trap"
