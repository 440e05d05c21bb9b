"""The host's worker threads, shared by every part of the simulator that splits work over the host's cores
(large copies, BANG task chunks; cnnl kernel blocks through the fork-join team): one pool and one team, sized by the
host's cores, forgotten in a forked child."""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

import numpy as np

from ..lazymodule import LazyModule

#: numba, which the spin-waits are written in, loads with the first team (cnrt's import does not pay for it)
spin = LazyModule("mlusim.host.spin")

#: At most this many host threads split one piece of work.
MAX_HOST_THREADS = 8

_cores: Optional[int] = None
_pool: Optional[ThreadPoolExecutor] = None
_lock = threading.Lock()


def host_cores() -> int:
    """The host cores this process may use (at most MAX_HOST_THREADS); read once."""
    global _cores
    if _cores is None:
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:
            cpus = os.cpu_count() or 1
        _cores = max(1, min(cpus, MAX_HOST_THREADS))
    return _cores


def _cpu_reader():
    """glibc's sched_getcpu (a short call that keeps the GIL), or None where there is none."""
    try:
        reader = ctypes.PyDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    reader.restype, reader.argtypes = ctypes.c_int, []
    return reader


_read_cpu = _cpu_reader()
_slots: Optional[dict] = None


def cpu_slot() -> Optional[int]:
    """The position (0 .. host_cores() - 1) of the CPU the calling thread runs on among the CPUs this process may
    use, or None when it cannot be told. Work split into one share per slot and handed out by slot lands on the
    same core call after call, so that each core finds its share of the data still in its caches (as OpenMP's
    static schedule does)."""
    global _slots
    if _read_cpu is None:
        return None
    if _slots is None:
        try:
            cpus = sorted(os.sched_getaffinity(0))
        except AttributeError:
            cpus = list(range(os.cpu_count() or 1))
        _slots = {cpu: index % host_cores() for index, cpu in enumerate(cpus)}
    return _slots.get(_read_cpu())


def pool() -> ThreadPoolExecutor:
    """The shared pool (one worker per host core; callers also work on their own thread)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=host_cores(), thread_name_prefix="mlusim-host")
        return _pool


class _Helper:
    """One thread of the team. After each piece of work it spins (the GIL released) for the next fork for
    Team.SPIN_SECONDS, then sleeps on its own lock until given work."""

    __slots__ = ("team", "slot", "go", "work", "started", "thread")

    def __init__(self, team: "Team", slot: int):
        self.team = team
        self.slot = slot
        self.go = threading.Lock()
        self.go.acquire()  # released by Team.fork, with `work` set
        self.work: Optional[Callable[[], object]] = None
        self.started = 0  # the generation of the fork this helper took last
        self.thread = threading.Thread(target=self._loop, name=f"mlusim-team-{slot}", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        team, go, given, parked = self.team, self.go, 2 * self.slot, 2 * self.slot + 1
        counters = team.counters
        generation = 0
        while True:
            # announce (from outside the GIL) that the last work is done, then spin for the next fork; the settle
            # rounds let the forking thread reach its own share's kernel (which drops the GIL) before this one
            # asks for the GIL: asked while the forker holds it, it would sleep and pay the wake-up after all
            spin.post_then_wait_for(counters, parked, generation, counters, given, generation + 1,
                                    team.spin_rounds, team.settle_rounds)
            go.acquire()
            generation = int(counters[given])
            self.started = generation
            work, self.work = self.work, None
            try:
                work()
            except BaseException:  # noqa: BLE001 - the work reports its own errors; the helper must live on
                pass
            team.idle.append(self)  # (list.append is atomic: no lock)


class Team:
    """Fork-join helpers for work that the calling thread shares out and joins itself (cnnl's map_parallel).

    A fork bumps a helper's generation counter and releases its lock: a helper still spinning after its last
    work sees the counter within a microsecond, a sleeping one is woken by the lock. (A ThreadPoolExecutor.submit
    makes a Future, a work item and a condition: measured right after a kernel, the caller started its own share
    38 us after entering map_parallel, 16 now; and a helper it woke started ~45 us after the caller on this host,
    see `mlusim.host.spin`.) A
    busy helper is not waited for: the caller and the helpers that did start share the work out among themselves.
    """

    #: how long a helper spins for the next fork after its work (torch's OpenMP threads, with the GOMP_SPINCOUNT
    #: the benchmarks set, ~2 ms): long enough to span the host's dispatch of the next large op
    SPIN_SECONDS = 0.0003
    #: how long a helper that saw a fork waits before it asks for the GIL
    SETTLE_SECONDS = 0.00003
    #: how long a joining caller waits for a helper whose items are done to be back to spinning (its Python after
    #: the last item takes a few us)
    PARK_SECONDS = 0.0003

    def __init__(self):
        self.idle: list = []
        #: per helper slot: [2 * slot] the generation of the last fork given to it, [2 * slot + 1] the last one it
        #: finished and went back to spinning after
        self.counters = np.zeros(2 * MAX_HOST_THREADS, np.int64)
        self.spin_rounds = spin.rounds_for(self.SPIN_SECONDS)
        self.settle_rounds = spin.rounds_for(self.SETTLE_SECONDS)
        self.park_rounds = spin.rounds_for(self.PARK_SECONDS)
        self._started = 0
        self._lock = threading.Lock()

    def fork(self, work: Callable[[], object], helpers: int) -> list:
        """Run `work()` on up to `helpers` idle helpers (started on first use, one per host core but one: the
        caller works too); the (helper, generation) of each fork, for `join`."""
        forks = []
        idle, counters = self.idle, self.counters
        while len(forks) < helpers:
            try:
                helper = idle.pop()
            except IndexError:
                with self._lock:
                    if self._started >= host_cores() - 1:
                        break
                    helper = _Helper(self, self._started)
                    self._started += 1
            helper.work = work
            generation = int(counters[2 * helper.slot]) + 1
            counters[2 * helper.slot] = generation
            helper.go.release()
            forks.append((helper, generation))
        return forks

    def join(self, forks: list, progress: np.ndarray, total: int, seconds: float) -> None:
        """Spin (the GIL released) for at most `seconds` until progress[0] >= total (the items of the forked work
        are done) and each forked helper that started it is back to spinning (so it no longer holds the GIL the
        caller is about to take). The caller still waits on its own completion signal after this: it is a way to
        skip a sleep and a wake-up, not the join's correctness."""
        if not spin.wait_for(progress, 0, total, spin.rounds_for(seconds)):
            return
        for helper, generation in forks:
            if helper.started == generation:
                spin.wait_for(self.counters, 2 * helper.slot + 1, generation, self.park_rounds)


_team: Optional[Team] = None


def team() -> Team:
    """The shared fork-join team."""
    global _team
    if _team is None:
        with _lock:
            if _team is None:
                _team = Team()
    return _team


def _forget_pool_in_child() -> None:
    global _pool, _team, _lock
    _pool = None  # a forked child has none of the parent's threads
    _team = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)
