"""`__assert` and `__bang_trap`/`__abort` for kernel bodies."""
from numba import njit

from .faults import KernelAssert, KernelUserTrap


@njit(cache=True, nogil=True)
def assert_(condition, message):
    """`__assert(condition)`: stop the task with cnrtErrorAssert when condition is false."""
    if not condition:
        raise KernelAssert("assertion failed: " + message)


@njit(cache=True, nogil=True)
def trap(message):
    """`__bang_trap()` / `__abort()`: stop the task with cnrtErrorKernelUserTrap."""
    raise KernelUserTrap("user trap: " + message)
