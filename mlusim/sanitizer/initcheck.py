"""initcheck: reads of device bytes that were never written, over a shadow map per allocation.

The map holds one byte per 4-byte word of the block: a word counts as written once any of its bytes was written
(so a read never reports bytes a command did write; a partly written word hides the rest of it). Only blocks
allocated while initcheck is on are watched; their maps are made when first used.

As in compute-sanitizer, what is checked is work that uses the bytes (kernels, cnnl ops, collectives); a copy does
not use them: it carries their state to its destination (a device-to-device copy of unwritten bytes leaves its
destination unwritten), and a copy to the host is not an error (a padded struct, a strided tensor's gaps).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .extents import Span

WORD = 4


class InitShadow:
    """The written-word maps of the watched blocks (callers hold the sanitizer's lock)."""

    def __init__(self):
        self.maps: dict = {}  # block -> uint8 map, or None until first used (dropped when the block is freed)
        self.reported: dict = {}  # block -> first words of the reads already reported

    def watch(self, block) -> None:
        self.maps[block] = None

    def forget(self, block) -> None:
        self.maps.pop(block, None)
        self.reported.pop(block, None)

    def clear(self) -> None:
        self.maps.clear()
        self.reported.clear()

    def _map(self, block) -> Optional[np.ndarray]:
        if block not in self.maps:
            return None
        words = self.maps[block]
        if words is None:
            words = self.maps[block] = np.zeros((block.size + WORD - 1) // WORD, dtype=np.uint8)
        return words

    def write(self, block, span: Span) -> None:
        words = self._map(block)
        if words is None:
            return
        if span.runs is None:
            words[span.lo // WORD:(span.hi + WORD - 1) // WORD] = 1
        else:
            words[_word_indices(span.runs)] = 1

    def copy(self, source, source_span: Span, target, target_span: Span) -> None:
        """A device-to-device copy: the target's words become written where the source's were (dense equal-length
        ranges; otherwise the target counts as written)."""
        words = self._map(target)
        if words is None:
            return
        origin = self._map(source)
        if origin is None or source_span.runs is not None or target_span.runs is not None \
                or source_span.hi - source_span.lo != target_span.hi - target_span.lo:
            self.write(target, target_span)
            return
        nbytes = source_span.hi - source_span.lo
        first = source_span.lo // WORD
        written = np.repeat(origin[first:(source_span.hi + WORD - 1) // WORD], WORD)
        written = written[source_span.lo - first * WORD:][:nbytes]
        lead = target_span.lo % WORD
        padded = np.zeros(lead + nbytes + (-(lead + nbytes)) % WORD, dtype=np.uint8)
        padded[lead:lead + nbytes] = written
        start = target_span.lo // WORD
        words[start:start + padded.size // WORD] |= padded.reshape(-1, WORD).max(axis=1)

    def read(self, block, span: Span) -> Optional[tuple[int, int]]:
        """(first offset, unwritten bytes) of the read's bytes that were never written; None when all were.
        Each unwritten word is reported once per block."""
        words = self._map(block)
        if words is None or span.hi <= span.lo:
            return None
        if span.runs is None:
            first_word = span.lo // WORD
            chunk = words[first_word:(span.hi + WORD - 1) // WORD]
            if chunk.all():
                return None
            missing = np.flatnonzero(chunk == 0) + first_word
        else:
            indices = _word_indices(span.runs)
            missing = indices[words[indices] == 0]
            if missing.size == 0:
                return None
        seen = self.reported.setdefault(block, set())
        if int(missing[0]) in seen:
            return None
        seen.add(int(missing[0]))
        first = max(int(missing[0]) * WORD, span.lo)
        return first, int(missing.size) * WORD


def _word_indices(runs: np.ndarray) -> np.ndarray:
    """The indices of the words the byte runs touch (sorted, unique)."""
    first = runs[:, 0] // WORD
    last = (runs[:, 1] + WORD - 1) // WORD
    lengths = last - first
    total = int(lengths.sum())
    offsets = np.repeat(first - np.cumsum(lengths) + lengths, lengths)
    return np.unique(offsets + np.arange(total, dtype=np.int64))
