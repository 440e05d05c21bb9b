"""`__assert` and `__bang_trap`/`__abort` for kernel bodies."""

from .caching import jit
from .faults import KernelAssert, KernelUserTrap


@jit
def assert_(condition, message):
    """`__assert(condition)`: stop the task with cnrtErrorAssert when condition is false."""
    if not condition:
        raise KernelAssert("assertion failed: " + message)


@jit
def trap(message):
    """`__bang_trap()` / `__abort()`: stop the task with cnrtErrorKernelUserTrap."""
    raise KernelUserTrap("user trap: " + message)
