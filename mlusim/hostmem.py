"""Host buffers: pinned ("page-locked") allocations and the conversion of any buffer-protocol object to bytes."""
from __future__ import annotations

import bisect
import threading
from typing import Any

import numpy as np

from .errors import ArgumentFault, DoubleFreeFault, UnknownAddressFault
from .memory import POISON_BYTE


def host_bytes(obj: Any, arg: str, *, writable: bool) -> np.ndarray:
    """A flat uint8 view of a host buffer (any C-contiguous buffer-protocol object)."""
    if isinstance(obj, np.ndarray):
        array = obj
    else:
        try:
            array = np.asarray(memoryview(obj))
        except (TypeError, ValueError) as exc:
            raise ArgumentFault(f"expected a device address (int) or a host buffer, got {type(obj).__name__} "
                                f"({exc})", arg) from None
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
        try:
            buffer = np.full(nbytes, POISON_BYTE, dtype=np.uint8)
        except MemoryError:
            raise ArgumentFault(f"the host could not provide {nbytes} pinned bytes", "bytes") from None
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
            del self._buffers[start]
            self._freed.add(start)

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
            self._starts.clear()
            self._buffers.clear()
            self._freed.clear()


PINNED = PinnedHostMemory()
