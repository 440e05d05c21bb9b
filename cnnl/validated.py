"""What a public function learnt from its descriptors, remembered by their identity.

A call validates its descriptors (live, set, data types, shapes, broadcasting, computation types) and derives what
the kernel needs from them (an op name, a workspace size, flops per element). Frameworks call the same op again and
again with the same descriptor objects (torch_mlu caches one per shape and dtype; a C program keeps its handles),
so the hottest functions remember that result under the descriptors themselves: the next call with the same
objects, none of them changed since, skips straight to what differs per call (every pointer is still resolved,
bounds- and lifetime-checked and pinned by OpCall, every scalar still checked). C callers get this too: the C ABI
passes the very descriptor objects its handles name.

A descriptor carries a `stamp` that changes whenever it is set, reset or destroyed (`new_stamp`); an entry holds
the stamps it was made with, so a changed or destroyed descriptor is validated again, and reports its error then.
"""
from __future__ import annotations

import itertools
from operator import attrgetter

from mlusim.memo import BoundedMemo

_stamps = itertools.count(1)

#: entries per function; past this many distinct descriptor combinations the memory starts over
VALIDATED_CALLS = 4096
_stamp_of = attrgetter("stamp")


def new_stamp() -> int:
    """A stamp no descriptor state had before (for a descriptor just set, reset or destroyed)."""
    return next(_stamps)  # (one C call: atomic under the GIL)


class ValidatedCalls:
    """One public function's memory: descriptors (a tuple, plus any hashable facts of the call that the checks
    depend on) -> what validating them produced."""

    __slots__ = ("name", "_entries")

    def __init__(self, name: str):
        self.name = name
        self._entries = BoundedMemo(VALIDATED_CALLS)

    def lookup(self, key: tuple, descriptors: tuple):
        """What `remember(key, descriptors, result)` stored, if every descriptor still has the stamp it had then;
        else None. `descriptors` are the descriptor objects among `key` (they are compared by identity)."""
        try:
            entry = self._entries.get(key)
        except TypeError:  # an unhashable argument: never validated, the full checks report it
            return None
        if entry is None:
            return None
        stamps, result = entry
        return result if list(map(_stamp_of, descriptors)) == stamps else None

    def remember(self, key: tuple, descriptors: tuple, result) -> None:
        """Store what validating `descriptors` (the descriptor objects among `key`) produced."""
        self._entries.put(key, (list(map(_stamp_of, descriptors)), result))

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
