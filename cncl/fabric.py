"""The memory a clique shares: a header, a table of ranks, and one channel per ordered pair of ranks.

Layout (offsets in bytes; every counter is a uint32 written by exactly one rank, so no atomics are needed):

  0       header: magic, nrank, slot bytes, layout version (int64 each); at WORK_COUNTER_OFFSET the shared work
          counters of zero-copy collectives (one int64 per rank's range, a cache line apart; atomic increments by every
          rank)
  4096    rank table, RANK_BYTES per rank: state (uint32, also a futex word), pid, device, the count of zero-copy
          operations the rank has finished (uint32 at DONE_OFFSET, a futex word), message
  ...     channel counters, COUNTER_BYTES per ordered pair (src, dst): `posted` (written by src) and `consumed`
          (written by dst), each on its own cache line
  ...     channel slots: per pair, two slots of MESSAGE_HEADER_BYTES + slot bytes (double buffering)

Waiting is a futex wait on the word, in slices of WAIT_SLICE seconds; between slices the waiter checks that the peer
is still there (its state, and for another process its pid) and that the timeout has not passed. Channel counters
(the hot path) have a *sleepers* word 4 bytes after them: a waiter first polls the counter without the GIL
(atomics.spin_until; the CPU yielded between short spins) for up to SPIN_SECONDS, then announces itself there
before it sleeps; a writer stores the counter with a full barrier and makes the futex wake system call only when a
sleeper announced itself (atomics.publish), so a prompt peer costs no system call. Words of the header and rank
table (states, done counters) are written rarely, also while ranks join: their writers always wake, their waiters
yield, then sleep.
Memory ordering: the data of a message is written before its counter and read after it; x86-64 keeps stores in
order and loads in order (TSO), which is all the protocol needs.
"""
from __future__ import annotations

import mmap
import os
import time

import numpy as np

from mlusim.lazymodule import LazyModule

from . import futex
from .errors import CNCL_RET_ERR_SYSTEM, CnclError

#: numba code, imported on first use: loading cncl does not load numba
atomics = LazyModule("mlusim.host.atomics")

MAGIC = 0x4C434E43_4D49534C  # "LSIMCNCL"
LAYOUT_VERSION = 2
HEADER_BYTES = 4096
WORK_COUNTER_OFFSET = 2048
RANK_BYTES = 512
DONE_OFFSET = 32
MESSAGE_TEXT_OFFSET = 64
COUNTER_BYTES = 128
MESSAGE_HEADER_BYTES = 64
WAIT_SLICE = 0.1
#: Before sleeping, a waiter polls the word (without the GIL, pause between reads) for this long: a peer that answers
#: within it is seen without the wake-up latency of a sleeping thread (tens to hundreds of µs on a busy host).
#: Slower peers are waited for asleep.
SPIN_SECONDS = 100e-6
#: polls (a pause apart, ~2-5 µs in all) of one spin; the CPU is yielded and the clock read between spins
SPIN_ROUNDS = 64
#: Bytes from a waitable word to its sleepers word.
SLEEPERS_OFFSET = 4

# Rank states.
ABSENT, ALIVE, GONE, FAILED, ABORTED = 0, 1, 2, 3, 4
STATE_NAMES = {ABSENT: "absent", ALIVE: "alive", GONE: "gone (its communicator was destroyed or its process exited)",
               FAILED: "failed", ABORTED: "aborted"}


def segment_bytes(nrank: int, slot: int) -> int:
    pairs = nrank * nrank
    return HEADER_BYTES + nrank * RANK_BYTES + pairs * COUNTER_BYTES + pairs * 2 * (MESSAGE_HEADER_BYTES + slot)


def _process_alive(pid: int) -> bool:
    """False for a process that is gone or a zombie (killed, not yet reaped by its parent)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True


class PeerLost(CnclError):
    """A peer failed, aborted, exited or timed out while this rank waited for it."""

    def __init__(self, message: str):
        super().__init__(CNCL_RET_ERR_SYSTEM, message)


class AlreadyFailed(PeerLost):
    """This rank's own communicator failed or was aborted (by another of its operations or by cnclAbortComm)."""


class Fabric:
    """A mapped clique segment and the typed views over it."""

    def __init__(self, memory: mmap.mmap, nrank: int, slot: int, name: str = ""):
        self.memory = memory
        self.nrank = nrank
        self.slot = slot
        self.name = name or "private clique"
        self.raw = np.frombuffer(memory, dtype=np.uint8)
        self.words = self.raw[:self.raw.size // 4 * 4].view(np.uint32)  # every uint32 word, by offset // 4
        self.base_address = self.raw.ctypes.data
        self.header = self.raw[:HEADER_BYTES].view(np.int64)
        self.work_counters = self.raw[WORK_COUNTER_OFFSET:HEADER_BYTES].view(np.int64)
        self._ranks_at = HEADER_BYTES
        self._counters_at = self._ranks_at + nrank * RANK_BYTES
        self._slots_at = self._counters_at + nrank * nrank * COUNTER_BYTES
        self.local_pid = os.getpid()
        self._slots: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.fast_channels: dict = {}  # rank -> tiny.Channels, the compiled small-message path's views
        self.network = None  # network.Network of a clique across hosts: its ranks on other hosts are reached over MPI

    # ---- header ------------------------------------------------------------------------------------------------

    def initialise(self) -> None:
        """Write the header (the creator does this once; magic last, so attachers see a complete header)."""
        self.header[1:4] = (self.nrank, self.slot, LAYOUT_VERSION)
        self.header[0] = MAGIC

    def ready(self) -> bool:
        return int(self.header[0]) == MAGIC

    # ---- rank table --------------------------------------------------------------------------------------------

    def _rank_offset(self, rank: int) -> int:
        return self._ranks_at + rank * RANK_BYTES

    def state_offset(self, rank: int) -> int:
        return self._rank_offset(rank)

    def state(self, rank: int) -> int:
        return int(self.word(self.state_offset(rank)))

    def done_offset(self, rank: int) -> int:
        """The word counting the zero-copy operations `rank` has finished (written by that rank only)."""
        return self._rank_offset(rank) + DONE_OFFSET

    def pid(self, rank: int) -> int:
        start = self._rank_offset(rank) + 8
        return int(self.raw[start:start + 8].view(np.int64)[0])

    def claim(self, rank: int, device: int) -> None:
        """Enter this process as the owner of `rank` and announce it."""
        start = self._rank_offset(rank)
        self.raw[start + 8:start + 24].view(np.int64)[:] = (self.local_pid, device)
        self.set_state(rank, ALIVE)

    def set_state(self, rank: int, state: int, message: str = "") -> None:
        """Change a rank's state; failures keep their first message. Wakes everything that waits on the rank."""
        start = self._rank_offset(rank)
        if message and self.state(rank) not in (FAILED, ABORTED):
            text = message.encode("utf-8", "replace")[:RANK_BYTES - MESSAGE_TEXT_OFFSET - 1]
            area = self.raw[start + MESSAGE_TEXT_OFFSET:start + RANK_BYTES]
            area[:] = 0
            area[:len(text)] = np.frombuffer(text, np.uint8)
        self.set_word(self.state_offset(rank), state)
        self.wake_all_of(rank)
        if self.network is not None and state in (GONE, FAILED, ABORTED):
            self.network.announce(rank, state, message or self.message(rank))

    def message(self, rank: int) -> str:
        start = self._rank_offset(rank) + MESSAGE_TEXT_OFFSET
        return bytes(self.raw[start:start + RANK_BYTES - MESSAGE_TEXT_OFFSET]).rstrip(b"\0").decode("utf-8",
                                                                                                      "replace")

    def wake_all_of(self, rank: int) -> None:
        """Wake every waiter whose wait involves `rank` (its state, both directions of its channels, and every
        done counter: a rank waiting in a zero-copy barrier must see its own abort too)."""
        futex.wake(self.base_address + self.state_offset(rank))
        for peer in range(self.nrank):
            futex.wake(self.base_address + self.done_offset(peer))
            if peer != rank:
                for src, dst in ((rank, peer), (peer, rank)):
                    futex.wake(self.base_address + self.posted_offset(src, dst))
                    futex.wake(self.base_address + self.consumed_offset(src, dst))

    # ---- words -------------------------------------------------------------------------------------------------

    def word(self, offset: int) -> int:
        return int(self.words[offset >> 2])

    def set_word(self, offset: int, value: int) -> None:
        """Store a waitable word. A channel counter: with a full barrier, waking its waiters only if one announced
        itself asleep (atomics.publish). A word of the header or rank table (rarely written, also while ranks
        join, before the compiled code is loaded): a plain store and always a wake."""
        if offset >= self._counters_at:
            if atomics.publish(self.words, offset >> 2, value, (offset + SLEEPERS_OFFSET) >> 2):
                futex.wake(self.base_address + offset)
            return
        self.words[offset >> 2] = value & 0xFFFFFFFF
        futex.wake(self.base_address + offset)

    def posted_offset(self, src: int, dst: int) -> int:
        return self._counters_at + (src * self.nrank + dst) * COUNTER_BYTES

    def consumed_offset(self, src: int, dst: int) -> int:
        return self.posted_offset(src, dst) + COUNTER_BYTES // 2

    def slot_views(self, src: int, dst: int, parity: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(header int64[8], the header's clock float64[1], payload uint8[slot]) of one of the two slots of
        channel src -> dst."""
        views = self._slots.get((src, dst, parity))
        if views is None:
            size = MESSAGE_HEADER_BYTES + self.slot
            start = self._slots_at + ((src * self.nrank + dst) * 2 + parity) * size
            header = self.raw[start:start + MESSAGE_HEADER_BYTES].view(np.int64)
            views = self._slots[(src, dst, parity)] = (header, header[7:8].view(np.float64),
                                                       self.raw[start + MESSAGE_HEADER_BYTES:start + size])
        return views

    # ---- waiting -----------------------------------------------------------------------------------------------

    def wait_until(self, offset: int, target: int, me: int, peer: int, timeout: float, what: str) -> None:
        """Sleep until the counter at `offset` reaches `target` (modulo 2**32). Raises PeerLost when `me` was
        aborted, when `peer` failed, left or died, or after `timeout` seconds without the counter reaching it."""
        channel = offset >= self._counters_at
        if (self._spin_until_reached if channel else self._yield_until_reached)(offset, target):
            return
        deadline = next_probe = None
        address = self.base_address + offset
        while True:
            value = self.word(offset)
            if (value - target) & 0xFFFFFFFF < 0x80000000:
                return
            now = time.monotonic()
            if deadline is None:
                deadline, next_probe = now + timeout, now + WAIT_SLICE
            probe = now >= next_probe  # looking at the peer's process costs a /proc read: once per slice
            if probe:
                next_probe = now + WAIT_SLICE
            self.check(me, peer, what, probe_process=probe)
            if now >= deadline:
                raise PeerLost(f"timed out after {timeout:g} s waiting for rank {peer} ({what})")
            if not channel:  # its writers always wake
                futex.wait(address, value, min(WAIT_SLICE, max(deadline - now, 0.001)))
                continue
            sleepers = (offset + SLEEPERS_OFFSET) >> 2
            atomics.announce(self.words, sleepers, 1)
            try:
                value = int(self.words[offset >> 2])  # after the announcement: a later store will wake us
                if (value - target) & 0xFFFFFFFF < 0x80000000:
                    return
                futex.wait(address, value, min(WAIT_SLICE, max(deadline - now, 0.001)))
            finally:
                atomics.announce(self.words, sleepers, -1)

    def _yield_until_reached(self, offset: int, target: int) -> bool:
        give_up = time.perf_counter() + SPIN_SECONDS
        while (self.word(offset) - target) & 0xFFFFFFFF >= 0x80000000:
            if time.perf_counter() >= give_up:
                return False
            os.sched_yield()
        return True

    def _spin_until_reached(self, offset: int, target: int) -> bool:
        """Short spins without the GIL, the CPU yielded between them, for at most SPIN_SECONDS."""
        words, index = self.words, offset >> 2
        give_up = time.perf_counter() + SPIN_SECONDS
        while not atomics.spin_until(words, index, target, SPIN_ROUNDS):
            if time.perf_counter() >= give_up:
                return False
            os.sched_yield()
        return True

    def check(self, me: int, peer: int, what: str, probe_process: bool = True) -> None:
        """Raise PeerLost when this rank was aborted or failed, or when `peer` cannot answer any more
        (with `probe_process`, also when the peer's process died without saying so)."""
        own = self.state(me)
        if own == ABORTED:
            raise AlreadyFailed(f"the communicator of rank {me} was aborted ({what})")
        if own == FAILED:
            raise AlreadyFailed(f"rank {me} already failed: {self.message(me)}")
        state = self.state(peer)
        if state in (FAILED, ABORTED):
            detail = self.message(peer)
            raise PeerLost(f"rank {peer} {STATE_NAMES[state]} while rank {me} waited for it ({what})"
                           + (f": {detail}" if detail else ""))
        if state == GONE:
            raise PeerLost(f"rank {peer} is {STATE_NAMES[GONE]} while rank {me} waited for it ({what})")
        pid = self.pid(peer) if probe_process else 0
        if probe_process and state == ALIVE and pid != self.local_pid and not _process_alive(pid):
            message = f"the process of rank {peer} (pid {pid}) died while rank {me} waited for it ({what})"
            if self.network is not None:  # the ranks on other hosts cannot see the process: say it for it
                self.network.lost(peer)
                self.set_state(peer, FAILED, message)
            raise PeerLost(message)

    def close(self) -> None:
        """Drop the views and unmap (a mapping still viewed elsewhere is left to the garbage collector)."""
        self.raw = self.words = self.header = self.work_counters = None
        self._slots = {}
        self.fast_channels = {}
        if self.network is not None:
            self.network.close()
        try:
            self.memory.close()
        except BufferError:
            pass
