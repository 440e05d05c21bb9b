"""Backing storage of on-chip memory: NRAM/WRAM per simulated core, SRAM per cluster, reused across launches.

Arenas are 64-byte aligned byte arrays of the board's usable capacity. Buffers are poisoned with 0xFF (NaN for
every float type) when a task allocates them (see context.allocate); SRAM that the tasks of a cluster share is
poisoned instead between rounds, so no task sees data of a task it does not share SRAM with on hardware.
"""
from __future__ import annotations

import threading

import numpy as np

from .context import BUFFER_ALIGN, SRAM_HIGH, STATE_WIDTH

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

    def repoison(self, used: int) -> None:
        if used:
            self.data[:used] = POISON_BYTE


class CoreArena:
    """NRAM and WRAM of one simulated core, its own SRAM for tasks that share none, and a state row."""

    def __init__(self, spec):
        self.nram = aligned_bytes(spec.nram_usable)
        self.wram = aligned_bytes(spec.wram_bytes)
        self.own_sram = SramArena(spec.sram_usable)
        self.state = np.zeros(STATE_WIDTH, dtype=np.int64)

    def sram_used(self) -> int:
        return int(self.state[SRAM_HIGH])


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
            arena.state[:STATE_WIDTH] = 0  # a longer row holds the sanitizer's access log after it
        return taken

    def take_srams(self, spec, count: int) -> list[SramArena]:
        with self._lock:
            free = self._srams.setdefault(spec.name, [])
            taken = [free.pop() for _ in range(min(count, len(free)))]
        return taken + [SramArena(spec.sram_usable) for _ in range(count - len(taken))]

    def give(self, spec, cores: list[CoreArena], srams: list[SramArena] = ()) -> None:
        used = max((core.sram_used() for core in cores), default=0)
        for sram in srams:
            sram.repoison(used)
        with self._lock:
            self._cores.setdefault(spec.name, []).extend(cores)
            self._srams.setdefault(spec.name, []).extend(srams)


POOL = ArenaPool()
