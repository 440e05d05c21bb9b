"""A free list of address ranges with coalescing, shared by the GDRAM allocator (mlusim/memory.py: next fit, so
that freed addresses are not handed out again until the rest of the range is spent) and the shareable arenas
(mlusim/host/sharedmem.py: best fit). Not thread-safe: its owner holds a lock around every call."""
from __future__ import annotations

import bisect


class FreeList:
    """The free ranges of [start, start + size): indexed by start (to merge neighbours) and by (size, start) (to
    find the smallest range that fits, lowest address first among equals)."""

    def __init__(self, start: int, size: int):
        self._starts: list[int] = [start]
        self._size: dict[int, int] = {start: size}
        self._by_size: list[tuple[int, int]] = [(size, start)]

    def __len__(self) -> int:
        """The number of free ranges."""
        return len(self._starts)

    def largest(self) -> int:
        return self._by_size[-1][0] if self._by_size else 0

    def take(self, need: int) -> int | None:
        """The start of `need` bytes cut from the smallest free range that holds them, or None."""
        i = bisect.bisect_left(self._by_size, (need, -1))
        if i == len(self._by_size):
            return None
        size, start = self._by_size.pop(i)
        del self._starts[bisect.bisect_left(self._starts, start)]
        del self._size[start]
        if size > need:
            self._add(start + need, size - need)
        return start

    def take_next(self, rover: int, need: int) -> int | None:
        """The start of `need` bytes cut from the first free range at or after address `rover` that holds them
        (from `rover` itself when it lies in a free range), else from the first one from the lowest address (the
        wrap); None when no free range holds them."""
        if self.largest() < need:
            return None
        starts, sizes = self._starts, self._size
        index = bisect.bisect_right(starts, rover) - 1
        if index >= 0:
            start = starts[index]
            end = start + sizes[start]
            if end - rover >= need:
                self._cut(start, rover, need)
                return rover
        for position in range(index + 1, len(starts)):
            start = starts[position]
            if sizes[start] >= need:
                self._cut(start, start, need)
                return start
        for position in range(0, min(index + 1, len(starts))):
            start = starts[position]
            if sizes[start] >= need:
                self._cut(start, start, need)
                return start
        return None

    def _cut(self, start: int, at: int, need: int) -> None:
        """Take [at, at + need) out of the free range that starts at `start`."""
        end = start + self._size[start]
        self._remove(start)
        if at > start:
            self._add(start, at - start)
        if at + need < end:
            self._add(at + need, end - at - need)

    def give(self, start: int, size: int) -> None:
        """Return [start, start + size) (taken before, not free now), merging it with free neighbours."""
        index = bisect.bisect_left(self._starts, start)
        following = start + size
        if index < len(self._starts) and self._starts[index] == following:
            size += self._size[following]
            self._remove(following)
        if index > 0:
            previous = self._starts[index - 1]
            if previous + self._size[previous] == start:
                start, size = previous, size + self._size[previous]
                self._remove(previous)
        self._add(start, size)

    def _add(self, start: int, size: int) -> None:
        bisect.insort(self._starts, start)
        self._size[start] = size
        bisect.insort(self._by_size, (size, start))

    def _remove(self, start: int) -> None:
        size = self._size.pop(start)
        del self._starts[bisect.bisect_left(self._starts, start)]
        del self._by_size[bisect.bisect_left(self._by_size, (size, start))]
