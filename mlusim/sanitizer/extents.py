"""The bytes one access touches inside one allocation: a dense range, or sorted disjoint runs of bytes (a strided
tensor, a pitched region, a kernel's DMA accesses), and the questions the checks ask of two of them."""
from __future__ import annotations

from typing import Iterable, Optional

import numpy as np

#: A strided layout with more contiguous runs than this is taken as its whole span (its gaps count as accessed).
MAX_RUNS = 1 << 16


class Span:
    """Bytes [lo, hi) of a block (offsets from its start); `runs` ((k, 2) int64, sorted, disjoint) when only those
    runs inside [lo, hi) are touched, None when all of them are."""

    __slots__ = ("lo", "hi", "runs")

    def __init__(self, lo: int, hi: int, runs: Optional[np.ndarray] = None):
        self.lo = lo
        self.hi = hi
        self.runs = runs

    @property
    def nbytes(self) -> int:
        """Bytes touched."""
        if self.runs is None:
            return self.hi - self.lo
        return int((self.runs[:, 1] - self.runs[:, 0]).sum())

    def as_runs(self) -> np.ndarray:
        if self.runs is None:
            return np.array([[self.lo, self.hi]], dtype=np.int64)
        return self.runs

    def covers(self, other: "Span") -> bool:
        """Whether every byte `other` touches is touched by this span (exact only for a dense self)."""
        return self.runs is None and self.lo <= other.lo and other.hi <= self.hi

    def __repr__(self) -> str:
        runs = "" if self.runs is None else f", {len(self.runs)} runs"
        return f"<Span [{self.lo}, {self.hi}){runs}>"


def merged_runs(runs: np.ndarray) -> np.ndarray:
    """Sorted, disjoint runs covering the same bytes as `runs` ((k, 2) [lo, hi) pairs, any order, may overlap)."""
    if len(runs) <= 1:
        return runs.astype(np.int64, copy=False).reshape(-1, 2)
    runs = runs[np.argsort(runs[:, 0], kind="stable")]
    lo, hi = runs[:, 0], np.maximum.accumulate(runs[:, 1])
    # a run starts a new group when it begins after everything before it ended
    starts = np.empty(len(runs), dtype=bool)
    starts[0] = True
    starts[1:] = lo[1:] > hi[:-1]
    index = np.flatnonzero(starts)
    ends = np.append(index[1:] - 1, len(runs) - 1)
    return np.stack([lo[index], hi[ends]], axis=1).astype(np.int64)


def span_of_runs(runs: np.ndarray) -> Optional[Span]:
    """A Span of `runs` (merged first); dense when they form one run; None when there are none."""
    runs = merged_runs(np.asarray(runs, dtype=np.int64).reshape(-1, 2))
    if len(runs) == 0:
        return None
    lo, hi = int(runs[0, 0]), int(runs[-1, 1])
    return Span(lo, hi, None if len(runs) == 1 else runs)


def strided_span(offset: int, nbytes: int, itemsize: int, dims: Iterable[int], strides: Iterable[int]) -> Span:
    """The bytes of elements of `itemsize` bytes at `dims` x `strides` (elements, >= 0) from byte `offset`; their
    whole span [offset, offset + nbytes) when they are dense or too many runs apart."""
    axes = [(int(s), int(d)) for d, s in zip(dims, strides) if int(d) != 1]
    if any(d == 0 for _, d in axes):
        return Span(offset, offset, None)
    axes.sort()
    run = 1  # elements of one contiguous run
    while axes and axes[0][0] == run:
        stride, dim = axes.pop(0)
        run *= dim
    count = 1
    for _, dim in axes:
        count *= dim
    if not axes or count > MAX_RUNS:
        return Span(offset, offset + nbytes, None)
    starts = np.zeros(1, dtype=np.int64)
    for stride, dim in axes:
        starts = np.add.outer(starts, np.arange(dim, dtype=np.int64) * stride).ravel()
    starts = np.sort(starts) * itemsize + offset
    runs = merged_runs(np.stack([starts, starts + run * itemsize], axis=1))
    if len(runs) == 1:
        return Span(int(runs[0, 0]), int(runs[0, 1]), None)
    return Span(int(runs[0, 0]), int(runs[-1, 1]), runs)


def overlap(a: Span, b: Span) -> Optional[tuple[int, int]]:
    """(first byte, bytes in common) of two spans of one block, or None when they share no byte."""
    lo, hi = max(a.lo, b.lo), min(a.hi, b.hi)
    if lo >= hi:
        return None
    if a.runs is None and b.runs is None:
        return lo, hi - lo
    first, second = a.as_runs(), b.as_runs()
    if len(first) > len(second):
        first, second = second, first
    # for each run of `first`, the first run of `second` that ends after it starts is the only one that can overlap
    index = np.searchsorted(second[:, 1], first[:, 0], side="right")
    valid = index < len(second)
    index = np.minimum(index, len(second) - 1)
    common_lo = np.maximum(first[:, 0], second[index, 0])
    common_hi = np.minimum(first[:, 1], second[index, 1])
    hit = valid & (common_lo < common_hi)
    if not hit.any():
        return None
    # bytes in common, counted exactly by intersecting every pair that overlaps
    total = _common_bytes(first, second)
    return int(common_lo[hit].min()), total


def _common_bytes(first: np.ndarray, second: np.ndarray) -> int:
    starts = np.searchsorted(second[:, 1], first[:, 0], side="right")
    ends = np.searchsorted(second[:, 0], first[:, 1], side="left")
    total = 0
    for (lo, hi), begin, end in zip(first, starts, ends):
        if begin < end:
            part = second[begin:end]
            total += int((np.minimum(part[:, 1], hi) - np.maximum(part[:, 0], lo)).clip(min=0).sum())
    return total
