"""Sleeping until a 32-bit word of (shared) memory changes, without spinning a core.

On Linux this is the futex system call on the word's address, which works across processes for a shared mapping;
elsewhere it degrades to polling with a growing sleep. Waits are bounded by a timeout so the caller can check for
dead peers and aborts between them.
"""
from __future__ import annotations

import ctypes
import platform
import sys
import time

_FUTEX_WAIT = 0
_FUTEX_WAKE = 1
_WAKE_ALL = 0x7FFFFFFF
_SYSCALL_NUMBERS = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98, "riscv64": 98, "ppc64le": 221}


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _load_syscall():
    number = _SYSCALL_NUMBERS.get(platform.machine().lower())
    if not sys.platform.startswith("linux") or number is None:
        return None, None
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # CDLL releases the GIL during the call
        return libc.syscall, ctypes.c_long(number)
    except (OSError, AttributeError):
        return None, None


_syscall, _SYS_FUTEX = _load_syscall()
AVAILABLE = _syscall is not None


def wait(address: int, expected: int, timeout: float) -> None:
    """Sleep while the uint32 at `address` equals `expected`, at most `timeout` seconds (may return early)."""
    if _syscall is None:
        time.sleep(min(timeout, 0.001))
        return
    seconds = int(timeout)
    spec = _Timespec(seconds, int((timeout - seconds) * 1e9))
    _syscall(_SYS_FUTEX, ctypes.c_void_p(address), ctypes.c_int(_FUTEX_WAIT), ctypes.c_uint32(expected),
             ctypes.byref(spec), None, ctypes.c_int(0))


def wake(address: int) -> None:
    """Wake every thread (of any process) sleeping on the word at `address`."""
    if _syscall is not None:
        _syscall(_SYS_FUTEX, ctypes.c_void_p(address), ctypes.c_int(_FUTEX_WAKE), ctypes.c_int(_WAKE_ALL),
                 None, None, ctypes.c_int(0))
