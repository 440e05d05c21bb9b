"""Shareable backing for simulated GDRAM: large blocks live in one memfd per process, which other processes of the
same user can map (through /proc/<pid>/fd/<fd>), so that collectives can read and write a peer's device memory
directly instead of copying through message slots.

The arena is one sparse memfd of a fixed virtual size, mapped once (MAP_SHARED) in its process; blocks are
page-aligned ranges of it handed out best-fit. A block's range returns to the arena when the last numpy view of it
is gone (a finalizer on the block array's base), so stale views never see memory reused under them, just as with
numpy's own allocations. Freed pages stay populated for reuse (a new block on them costs no page faults) until more
than RETAIN_BYTES are kept that way; beyond that a freed range's pages are given back (hole punching).

A process that maps a peer's arena keeps that memory alive while it is mapped, so a peer that is killed or frees
a block never makes the mapping invalid: reads see stale or zero data, never a fault.

Switch (environment, read at first use):
  MLUSIM_SHARED_GDRAM=1   blocks of MIN_BYTES and more are shareable from the start (`mlusim run` sets it)
  MLUSIM_SHARED_GDRAM=0   never (collectives then copy through message slots)
  unset                   shareable from the moment this process joins a multi-process CNCL clique (`enable()`)
Only Linux has memfd; elsewhere blocks are always private.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import sys
import threading
import weakref
from collections import deque

import numpy as np

from .. import config
from ..freelist import FreeList
from . import budget

#: Blocks below this size stay private numpy arrays (cheaper to allocate; too small for zero-copy to pay).
MIN_BYTES = 64 * 1024
PAGE = mmap.PAGESIZE
#: Populated but free bytes an arena keeps for reuse before it gives freed pages back to the host.
RETAIN_BYTES = 512 << 20
ENV = "MLUSIM_SHARED_GDRAM"

_FALLOC_FL_KEEP_SIZE, _FALLOC_FL_PUNCH_HOLE = 0x01, 0x02
_SUPPORTED = sys.platform.startswith("linux") and hasattr(os, "memfd_create")


def _setting() -> str | None:
    value = config.environ().get(ENV, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return "on"
    if value in ("0", "false", "no", "off"):
        return "off"
    return None


_state = {"enabled": _SUPPORTED and _setting() == "on"}


def enabled() -> bool:
    return _state["enabled"]


def enable() -> bool:
    """Make blocks allocated from now on shareable (unless MLUSIM_SHARED_GDRAM=0 or the platform lacks memfd).
    Returns whether they are."""
    if _SUPPORTED and _setting() != "off":
        _state["enabled"] = True
    return _state["enabled"]


def _fallocate():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.fallocate
        function.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long)
        return function
    except (OSError, AttributeError):
        return None


class Arena:
    """One process's memfd of `size` virtual bytes and its free list (page-aligned ranges)."""

    def __init__(self, size: int):
        self.size = size
        self.pid = os.getpid()
        self.fd = os.memfd_create("mlusim-gdram", os.MFD_CLOEXEC)  # peers open it through /proc all the same
        os.ftruncate(self.fd, size)
        self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.bytes = np.frombuffer(self.map, np.uint8)
        self.address = self.bytes.ctypes.data
        stat = os.fstat(self.fd)
        self.identity = (self.pid, self.fd, stat.st_dev, stat.st_ino, size)
        self._lock = threading.Lock()
        self._pending: deque = deque()
        self._free = FreeList(0, size)
        self.live = 0
        self._punch = _fallocate()

    # ---- allocation --------------------------------------------------------------------------------------------

    def allocate(self, nbytes: int) -> np.ndarray | None:
        """A uint8 array of `nbytes` inside the arena, or None when the arena has no range that large."""
        need = (nbytes + PAGE - 1) // PAGE * PAGE
        with self._lock:
            self._drain()
            start = self._free.take(need)
            if start is None:
                return None
            self.live += need
        view = memoryview(self.map)[start:start + nbytes]
        array = np.frombuffer(view, np.uint8)
        weakref.finalize(array.base, self._released, start, need).atexit = False  # the arena dies with us
        return array

    def _released(self, start: int, need: int) -> None:
        # Runs when the last view of a block is gone, possibly inside a garbage collection that interrupted this
        # arena's own code: queue the range, and take it back now only if the lock is free. In a forked child the
        # arena is the parent's: its ranges are not the child's to give back.
        if os.getpid() != self.pid:
            return
        self._pending.append((start, need))
        if self._lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._lock.release()

    def _drain(self) -> None:
        while self._pending:
            start, need = self._pending.popleft()
            self.live -= need
            if self._punch is not None and self.populated() - self.live > RETAIN_BYTES:
                self._punch(self.fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, start, need)
            self._free.give(start, need)

    def populated(self) -> int:
        """Bytes of the arena backed by host memory (live blocks plus retained free pages)."""
        return os.fstat(self.fd).st_blocks * 512

    def offset_of(self, array: np.ndarray) -> int | None:
        """The arena offset of `array`'s first byte, or None when the array does not live in this arena."""
        if array.size == 0:
            return None
        offset = array.ctypes.data - self.address
        return offset if 0 <= offset and offset + array.nbytes <= self.size else None


_arena_lock = threading.Lock()
_arena: list = []


def _virtual_size() -> int:

    limit = min(budget.HOST_BUDGET.limit, 1 << 44)
    return (limit + limit // 8 + (256 << 20)) // PAGE * PAGE  # page rounding of blocks >= MIN_BYTES costs < 1/16


def _current() -> Arena | None:
    owner = _arena[0] if _arena else None
    return owner if owner is not None and owner.pid == os.getpid() else None


def arena() -> Arena | None:
    """This process's arena, created on first use (None when memfd is unavailable). A forked child gets its own:
    blocks it inherited stay in the parent's arena (shared with the parent, and private as far as cncl knows)."""
    if not _SUPPORTED:
        return None
    if not _arena or (_arena[0] is not None and _arena[0].pid != os.getpid()):
        with _arena_lock:
            if _arena and _arena[0] is not None and _arena[0].pid != os.getpid():
                _arena.clear()
            if not _arena:
                try:
                    _arena.append(Arena(_virtual_size()))
                except OSError:
                    _arena.append(None)
    return _arena[0]


def backing(nbytes: int, poison: bool, poison_byte: int) -> np.ndarray | None:
    """A shareable backing array for a new block, or None when the block should be a private array."""
    if not _state["enabled"] or nbytes < MIN_BYTES:
        return None
    owner = arena()
    if owner is None:
        return None
    array = owner.allocate(nbytes)
    if array is not None:
        array.fill(poison_byte if poison else 0)
    return array


def locate(arrays: list[np.ndarray]) -> tuple[tuple, list[int]] | None:
    """(arena identity, [offset of each array]) when every array lives in this process's arena (empty arrays
    anywhere: offset -1), else None (some of them are private memory)."""
    owner = _current()
    if owner is None:
        return None
    offsets = []
    for array in arrays:
        offset = owner.offset_of(array) if array.size else -1
        if offset is None:
            return None
        offsets.append(offset)
    return owner.identity, offsets


def map_peer(identity: tuple) -> np.ndarray:
    """A uint8 array over the whole arena of another process (or this one's own arena). Raises OSError when the
    arena cannot be mapped (another user, a process that is gone, a different arena behind that descriptor)."""
    pid, fd, dev, ino, size = identity
    own = _current()
    if own is not None and own.identity == tuple(identity):
        return own.bytes
    handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR | os.O_CLOEXEC)
    try:
        stat = os.fstat(handle)
        if (stat.st_dev, stat.st_ino) != (dev, ino) or stat.st_size < size:
            raise OSError(f"/proc/{pid}/fd/{fd} is not the arena the peer announced")
        return np.frombuffer(mmap.mmap(handle, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE), np.uint8)
    finally:
        os.close(handle)
