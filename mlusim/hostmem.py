"""Host buffers: pinned ("page-locked") allocations and the conversion of any buffer-protocol object to bytes."""
from __future__ import annotations

import bisect
import threading
from typing import Any

import numpy as np

from .errors import ArgumentFault, DoubleFreeFault, HostOutOfMemoryFault, UnknownAddressFault
from .host.budget import HOST_BUDGET
from .memory import POISON_BYTE
from .validate import is_address


def describe_pointer(obj: Any) -> str:
    """What a pointer argument is, in words, for messages: a device address, a host buffer, or neither."""
    if is_address(obj):
        return "a device address"
    if isinstance(obj, (float, complex, bool, str)) or obj is None:
        return f"a {type(obj).__name__} ({obj!r:.40}), which is neither a device address nor a host buffer"
    if isinstance(obj, np.ndarray) or _has_buffer(obj):
        return "a host buffer"
    return f"a {type(obj).__name__}, which is neither a device address nor a host buffer"


def _has_buffer(obj: Any) -> bool:
    try:
        memoryview(obj)
        return True
    except TypeError:
        return False


def check_pointer_kind(obj: Any, arg: str) -> None:
    """ArgumentFault unless `obj` is a device address or a host buffer."""
    if obj.__class__ is int or isinstance(obj, np.ndarray):
        return
    if describe_pointer(obj) not in ("a device address", "a host buffer"):
        raise ArgumentFault(f"expected a device address (int) or a host buffer (an object with the buffer protocol, "
                            f"e.g. a numpy array), got {describe_pointer(obj)}", arg)


def host_bytes(obj: Any, arg: str, *, writable: bool) -> np.ndarray:
    """A flat uint8 view of a host buffer (any C-contiguous buffer-protocol object)."""
    if isinstance(obj, np.ndarray):
        array = obj
    elif isinstance(obj, (bytes, bytearray, memoryview)) or _has_buffer(obj):
        try:
            array = np.asarray(memoryview(obj))
        except (TypeError, ValueError) as exc:
            raise ArgumentFault(f"host buffer of type {type(obj).__name__} cannot be read as bytes ({exc})",
                                arg) from None
    else:
        raise ArgumentFault(f"expected a device address (int) or a host buffer (an object with the buffer protocol, "
                            f"e.g. a numpy array), got {describe_pointer(obj)}", arg)
    if not array.flags.c_contiguous:
        raise ArgumentFault("host buffer must be C-contiguous", arg)
    if writable and not array.flags.writeable:
        raise ArgumentFault("host buffer is read-only but the call writes to it", arg)
    if array.dtype.hasobject:
        raise ArgumentFault("host buffer holds Python objects, not data", arg)
    return array.reshape(-1).view(np.uint8)


def data_address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


class PinnedHostMemory:
    """The registry of page-locked host buffers made by hostMalloc (cnrtHostMalloc)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._starts: list[int] = []
        self._buffers: dict[int, np.ndarray] = {}
        self._freed: set[int] = set()

    def allocate(self, nbytes: int) -> np.ndarray:
        """A poisoned pinned buffer of `nbytes` (> 0), counted in the host-wide memory budget."""
        if not HOST_BUDGET.take(nbytes):
            raise HostOutOfMemoryFault(f"cannot pin {nbytes} host bytes: the host's memory limit for simulated "
                                       f"memory ({HOST_BUDGET.limit} bytes, shared by this host's processes) is "
                                       f"reached", "bytes")
        try:
            buffer = np.full(nbytes, POISON_BYTE, dtype=np.uint8)
        except MemoryError:
            HOST_BUDGET.give(nbytes)
            raise HostOutOfMemoryFault(f"the host could not provide {nbytes} pinned bytes", "bytes") from None
        start = data_address(buffer)
        with self._lock:
            bisect.insort(self._starts, start)
            self._buffers[start] = buffer
            self._freed.discard(start)
        return buffer

    def free(self, obj: Any, arg: str = "ptr") -> None:
        array = host_bytes(obj, arg, writable=False)
        start = data_address(array)
        with self._lock:
            if start not in self._buffers:
                if start in self._freed:
                    raise DoubleFreeFault(f"pinned host buffer 0x{start:x} was already freed", arg, start)
                raise UnknownAddressFault(f"0x{start:x} is not a buffer returned by hostMalloc", arg, start)
            index = bisect.bisect_left(self._starts, start)
            del self._starts[index]
            nbytes = self._buffers.pop(start).nbytes
            self._freed.add(start)
        HOST_BUDGET.give(nbytes)

    def contains(self, obj: Any) -> bool:
        """True when `obj` lies within a live pinned buffer."""
        try:
            array = host_bytes(obj, "ptr", writable=False)
        except ArgumentFault:
            return False
        start = data_address(array)
        with self._lock:
            index = bisect.bisect_right(self._starts, start) - 1
            if index < 0:
                return False
            buffer = self._buffers[self._starts[index]]
            return start + array.nbytes <= self._starts[index] + buffer.nbytes

    def clear(self) -> None:
        with self._lock:
            held = sum(buffer.nbytes for buffer in self._buffers.values())
            self._starts.clear()
            self._buffers.clear()
            self._freed.clear()
        HOST_BUDGET.give(held)

    def reset_after_fork(self) -> None:
        self._lock = threading.Lock()


PINNED = PinnedHostMemory()
