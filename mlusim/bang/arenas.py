"""Backing storage of on-chip memory: NRAM/WRAM per simulated core, SRAM per cluster, reused across launches.

Arenas are 64-byte aligned byte arrays of the board's usable capacity, poisoned with 0xFF (NaN for every float
type) when created; the part a task used is poisoned again before the next task runs on the same arena, so a
kernel that reads on-chip memory it did not write in this task sees NaN rather than a neighbour's data.
"""
from __future__ import annotations

import threading

import numpy as np

from .context import BUFFER_ALIGN, CURSOR, STATE_WIDTH
from .pointer import NRAM, SRAM, WRAM

POISON_BYTE = 0xFF


def aligned_bytes(nbytes: int) -> np.ndarray:
    """A poisoned uint8 array of `nbytes` whose data starts on a BUFFER_ALIGN boundary."""
    raw = np.full(nbytes + BUFFER_ALIGN, POISON_BYTE, dtype=np.uint8)
    skip = (-raw.ctypes.data) % BUFFER_ALIGN
    return raw[skip:skip + nbytes]


class SramArena:
    """The SRAM of one cluster."""

    def __init__(self, nbytes: int):
        self.data = aligned_bytes(nbytes)
        self.dirty = 0

    def note_use(self, used: int) -> None:
        self.dirty = max(self.dirty, used)

    def repoison(self) -> None:
        if self.dirty:
            self.data[:self.dirty] = POISON_BYTE
            self.dirty = 0


class CoreArena:
    """NRAM and WRAM of one simulated core, its own SRAM for tasks that share none, and a state row."""

    def __init__(self, spec):
        self.nram = aligned_bytes(spec.nram_usable)
        self.wram = aligned_bytes(spec.wram_bytes)
        self.own_sram = SramArena(spec.sram_usable)
        self.state = np.zeros(STATE_WIDTH, dtype=np.int64)
        self._dirty = [0, 0]

    def begin_task(self) -> None:
        """Poison what the previous task used and reset the per-task fields of the state row."""
        for index, array in enumerate((self.nram, self.wram)):
            if self._dirty[index]:
                array[:self._dirty[index]] = POISON_BYTE
                self._dirty[index] = 0
        self.state[:8] = 0

    def end_task(self, sram: SramArena) -> None:
        self._dirty[0] = max(self._dirty[0], int(self.state[CURSOR + NRAM]))
        self._dirty[1] = max(self._dirty[1], int(self.state[CURSOR + WRAM]))
        sram.note_use(int(self.state[CURSOR + SRAM]))


class ArenaPool:
    """Arenas per board, lent to launches; concurrent launches (on several queues) get distinct arenas."""

    def __init__(self):
        self._cores: dict[str, list[CoreArena]] = {}
        self._srams: dict[str, list[SramArena]] = {}
        self._lock = threading.Lock()

    def take_cores(self, spec, count: int) -> list[CoreArena]:
        with self._lock:
            free = self._cores.setdefault(spec.name, [])
            taken = [free.pop() for _ in range(min(count, len(free)))]
        taken += [CoreArena(spec) for _ in range(count - len(taken))]
        for arena in taken:
            arena.state[:] = 0
        return taken

    def take_srams(self, spec, count: int) -> list[SramArena]:
        with self._lock:
            free = self._srams.setdefault(spec.name, [])
            taken = [free.pop() for _ in range(min(count, len(free)))]
        return taken + [SramArena(spec.sram_usable) for _ in range(count - len(taken))]

    def give(self, spec, cores: list[CoreArena], srams: list[SramArena] = ()) -> None:
        for sram in srams:
            sram.repoison()
        with self._lock:
            self._cores.setdefault(spec.name, []).extend(cores)
            self._srams.setdefault(spec.name, []).extend(srams)


POOL = ArenaPool()
