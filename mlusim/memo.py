"""Bounded memos: what a hot path remembers (validated descriptors, cached cnnl descriptors, cost-model answers,
collective plans), with a bound on how much.

A hot path looks the same keys up again and again, so a hit must cost one dict lookup; a workload of ever new keys
must not grow memory without bound. A full memo therefore starts over: it forgets every entry before it stores the
next one, which costs one miss per key in use, where least-recently-used order would cost bookkeeping on every hit.
"""
from __future__ import annotations

import threading
from typing import Callable, Hashable, Optional


class BoundedMemo:
    """key -> value, at most `limit` entries. `get` is the dict's own lookup; `put` into a full memo first forgets
    every entry, calling `forget(value)` on each when given (to release what a value holds, a cnnl descriptor)."""

    __slots__ = ("limit", "get", "_entries", "_forget", "_lock")

    def __init__(self, limit: int, forget: Optional[Callable[[object], None]] = None):
        if limit < 1:
            raise ValueError(f"a memo holds at least one entry, not {limit}")
        self.limit = limit
        self._entries: dict = {}
        self.get = self._entries.get
        self._forget = forget
        self._lock = threading.Lock()

    def put(self, key: Hashable, value):
        """Remember `value` under `key` (starting over first when the memo is full); returns `value`."""
        with self._lock:
            entries = self._entries
            if len(entries) >= self.limit and key not in entries:
                self._forget_all()
            entries[key] = value
        return value

    def get_or_make(self, key: Hashable, make: Callable[[], object]):
        """The value remembered under `key`, or `make()` remembered under it now."""
        found = self._entries.get(key)
        return found if found is not None else self.put(key, make())

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._forget_all()

    def _forget_all(self) -> None:
        if self._forget is not None:
            for value in self._entries.values():
                self._forget(value)
        self._entries.clear()

    def values(self):
        return self._entries.values()

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __getitem__(self, key):
        return self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
