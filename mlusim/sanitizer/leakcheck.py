"""leakcheck: device allocations and API handles still alive at the end of a scope or at exit.

Allocations are watched by the core (mlusim.memory tells the sanitizer of each allocation and free). Handles are
registered by the API layers when they make them (`mlusim.sanitizer.track(obj, "notifier")`): queues, notifiers,
cnnl handles and descriptors, cncl communicators. A handle is alive until its `destroyed` flag is set (by its destroy
call, or for queues by the teardown of their device). A device reset or a new device table releases the device's
allocations (they are not leaks). Each leak is reported once, by the innermost scope that made it.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import Optional

from .report import Access


class Watched:
    """One allocation or handle made while leakcheck was on."""

    __slots__ = ("serial", "what", "label", "stack", "exempt", "reported", "obj", "address", "size", "device")

    def __init__(self, serial: int, what: str, label: str, stack: tuple, exempt: bool):
        self.serial = serial
        self.what = what
        self.label = label
        self.stack = stack
        self.exempt = exempt
        self.reported = False
        self.obj = None
        self.address = None
        self.size = 0
        self.device = None


class LeakRegistry:
    """What was made while leakcheck was on and is not yet released."""

    def __init__(self):
        self.lock = threading.Lock()
        self.serials = itertools.count(1)
        self.blocks = weakref.WeakKeyDictionary()  # block -> Watched (a block whose address space is gone is no leak)
        self.handles: dict = {}     # serial -> Watched (holding the object)
        self.exempt = threading.local()

    def mark(self) -> int:
        """A serial: what is made from now on has a greater one."""
        with self.lock:
            return next(self.serials)

    def _exempt(self) -> bool:
        return getattr(self.exempt, "depth", 0) > 0

    def allocated(self, block, stack: tuple) -> None:
        watched = Watched(0, "allocation", f"{block.size} bytes", stack, self._exempt())
        watched.address, watched.size, watched.device = block.start, block.size, block.device_index
        with self.lock:
            watched.serial = next(self.serials)
            self.blocks[block] = watched

    def freed(self, block) -> None:
        with self.lock:
            self.blocks.pop(block, None)

    def track(self, obj, what: str, label: str, stack: tuple) -> None:
        with self.lock:
            watched = Watched(next(self.serials), what, label, stack, self._exempt())
            watched.obj = obj
            self.handles[watched.serial] = watched
            if len(self.handles) % 1024 == 0:
                self._prune()

    def _prune(self) -> None:
        for serial in [s for s, w in self.handles.items() if getattr(w.obj, "destroyed", False)]:
            del self.handles[serial]

    def leaks(self, since: int) -> list[Watched]:
        """What was made after serial `since`, is still alive, not exempt and not yet reported; marks it reported."""
        with self.lock:
            self._prune()
            found = [w for w in list(self.blocks.values()) + list(self.handles.values())
                     if w.serial > since and not w.exempt and not w.reported]
            for watched in found:
                watched.reported = True
        return sorted(found, key=lambda w: w.serial)

    def clear(self) -> None:
        with self.lock:
            self.blocks.clear()
            self.handles.clear()


def describe(watched: Watched) -> tuple[str, str, Optional[int], int, Optional[int], Access]:
    """(kind, message, address, size, device, the access that made it) of a leak."""
    if watched.what == "allocation":
        return ("memory_leak", f"{watched.size} bytes allocated and never freed", watched.address, watched.size,
                watched.device, Access("allocation", stack=watched.stack))
    return ("handle_leak", f"{watched.label} created and never destroyed", None, 0, None,
            Access("creation", command=watched.label, stack=watched.stack))
