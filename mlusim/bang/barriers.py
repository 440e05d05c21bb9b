"""`__sync_cluster()` and `__sync_all()`: real barriers between the host threads that run a union's tasks.

Each round of a UnionN launch (its N x coreDim tasks) has its own barriers: one per cluster for sync_cluster, one
for sync_all. A barrier is released when all its participants wait at it. It is a deadlock, reported at once with
task ids instead of hanging, when a participant returns (or faults) without reaching it, or when every live task
of the round waits but at different barriers; a timeout catches the rest (a task that never returns).
"""
from __future__ import annotations

import itertools
import threading
import time

from numba import objmode

from .accesslog import SYNCS_ALL, SYNCS_ANY
from .caching import jit
from .context import BARRIER_KEY, BARRIERS
from .faults import KernelTrap
from .dma import sync

#: barrier scopes: the cluster's cores and its memory core, every core of the union, the compute cores (IPUs) of the
#: cluster or of the union alone, the memory cores (MPUs) alone
CLUSTER, ALL, IPU_CLUSTER, IPU_ALL, MPU_ALL = 0, 1, 2, 3, 4
_SCOPE_NAMES = {CLUSTER: "sync_cluster", ALL: "sync_all", IPU_CLUSTER: "sync_all_ipu_within_cluster",
                IPU_ALL: "sync_all_ipu", MPU_ALL: "sync_all_mpu"}

# The object-mode block only waits at the barrier; the rest of a kernel still runs without the GIL.


class BarrierAborted(KernelTrap):
    """A barrier wait cut short because another task of the round faulted (a consequence, not a cause)."""


class RoundBarriers:
    """The barriers of one round: tasks first_task .. first_task + size - 1 (members 0 .. size - 1) and, when the
    kernel runs them, the clusters' memory cores (members size + cluster)."""

    def __init__(self, first_task: int, size: int, cores_per_cluster: int, timeout: float, memory_cores: int = 0):
        self.first = first_task
        self.size = size
        self.memory_cores = memory_cores
        self.cores_per_cluster = cores_per_cluster
        self.timeout = timeout
        self.cond = threading.Condition()
        self.waiting: dict[int, tuple] = {}
        self.finished: dict[int, bool] = {}     # member -> faulted
        self.releases: dict[tuple, int] = {}
        self.broken: KernelTrap | None = None

    def _cluster(self, member: int) -> int:
        return member - self.size if member >= self.size else member // self.cores_per_cluster

    def _key(self, member: int, scope: int) -> tuple:
        if scope in (ALL, IPU_ALL, MPU_ALL):
            return (scope,)
        return (scope, self._cluster(member))

    def _participants(self, key: tuple) -> list:
        scope = key[0]
        compute = list(range(self.size))
        memory = list(range(self.size, self.size + self.memory_cores))
        if scope in (ALL, IPU_ALL, MPU_ALL):
            return {ALL: compute + memory, IPU_ALL: compute, MPU_ALL: memory}[scope]
        start = key[1] * self.cores_per_cluster
        cluster = list(range(start, start + self.cores_per_cluster))
        return cluster + ([self.size + key[1]] if scope == CLUSTER and self.memory_cores else [])

    def _name(self, key: tuple) -> str:
        return _SCOPE_NAMES[key[0]] + (f" of cluster {key[1]}" if len(key) > 1 else "")

    def _tasks(self, members) -> str:
        return ", ".join(str(self.first + m) if m < self.size else f"the memory core of cluster {m - self.size}"
                         for m in sorted(members))

    def arrive(self, member: int, scope: int) -> None:
        key = self._key(member, scope)
        if member not in self._participants(key):
            return  # a compute core at a memory-core barrier, or the reverse: not among those it waits for
        with self.cond:
            if self.broken is not None:
                raise self.broken
            generation = self.releases.get(key, 0)
            self.waiting[member] = key
            participants = self._participants(key)
            if all(self.waiting.get(p) == key for p in participants):
                for p in participants:
                    del self.waiting[p]
                self.releases[key] = generation + 1
                self.cond.notify_all()
                return
            self._detect_deadlock()
            deadline = time.monotonic() + self.timeout
            while self.releases.get(key, 0) == generation:
                if self.broken is not None:
                    raise self.broken
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    absent = [p for p in participants if self.waiting.get(p) != key]
                    self._break(KernelTrap(f"deadlock: tasks {self._tasks(m for m, k in self.waiting.items() if k == key)} "
                                           f"waited {self.timeout:g} s at {self._name(key)} for task(s) "
                                           f"{self._tasks(absent)}, which never arrived"))
                    raise self.broken
                self.cond.wait(remaining)

    def finish(self, member: int, faulted: bool) -> None:
        with self.cond:
            self.finished[member] = faulted
            self._detect_deadlock()

    def _break(self, error: KernelTrap) -> None:
        if self.broken is None:
            self.broken = error
        self.cond.notify_all()

    def _detect_deadlock(self) -> None:
        for key in set(self.waiting.values()):
            gone = [p for p in self._participants(key) if p in self.finished]
            if gone:
                waiters = self._tasks(m for m, k in self.waiting.items() if k == key)
                if any(self.finished[p] for p in gone):
                    self._break(BarrierAborted(f"tasks {waiters} stopped waiting at {self._name(key)}: task(s) "
                                               f"{self._tasks(gone)} faulted"))
                else:
                    self._break(KernelTrap(f"deadlock: tasks {waiters} wait at {self._name(key)}, but task(s) "
                                           f"{self._tasks(gone)} returned without reaching it"))
                return
        live = [m for m in range(self.size + self.memory_cores) if m not in self.finished]
        if live and all(m in self.waiting for m in live):
            where = "; ".join(f"task {self._tasks([m])} at {self._name(self.waiting[m])}" for m in live)
            self._break(KernelTrap(f"deadlock: every task of the round waits, at different barriers: {where}"))


class BarrierSet:
    """The barriers of one launch, round by round. Memory-core tasks (`memory_cores` per round) have the task numbers
    task_dim + round * memory_cores + cluster."""

    def __init__(self, group_size: int, cores_per_cluster: int, timeout: float, memory_cores: int = 0,
                 task_dim: int = 0):
        self.group_size = group_size
        self.cores_per_cluster = cores_per_cluster
        self.timeout = timeout
        self.memory_cores = memory_cores
        self.task_dim = task_dim
        self._rounds: dict[int, RoundBarriers] = {}
        self._lock = threading.Lock()
        self.stopped: KernelTrap | None = None

    def stop(self, reason: str) -> None:
        """The launch was stopped: every barrier wait, now or later, ends at once."""
        with self._lock:
            self.stopped = BarrierAborted(f"stopped while waiting at a barrier: {reason}")
            rounds = list(self._rounds.values())
        for barriers in rounds:
            with barriers.cond:
                barriers._break(self.stopped)

    def _member(self, task_id: int) -> tuple:
        """(round, member) of a task."""
        if self.memory_cores and task_id >= self.task_dim:
            index, cluster = divmod(task_id - self.task_dim, self.memory_cores)
            return index, self.group_size + cluster
        return divmod(task_id, self.group_size)

    def round_of(self, index: int) -> RoundBarriers:
        with self._lock:
            barriers = self._rounds.get(index)
            if barriers is None:
                barriers = RoundBarriers(index * self.group_size, self.group_size, self.cores_per_cluster,
                                         self.timeout, self.memory_cores)
                barriers.broken = self.stopped
                self._rounds[index] = barriers
            return barriers

    def arrive(self, task_id: int, scope: int) -> None:
        index, member = self._member(task_id)
        self.round_of(index).arrive(member, scope)

    def finish(self, task_id: int, faulted: bool) -> None:
        index, member = self._member(task_id)
        self.round_of(index).finish(member, faulted)


_registry: dict[int, BarrierSet] = {}
_keys = itertools.count(1)


def register(barriers: BarrierSet) -> int:
    key = next(_keys)
    _registry[key] = barriers
    return key


def unregister(key: int) -> None:
    _registry.pop(key, None)


def arrive(key: int, task_id: int, cluster_dim: int, scope: int) -> None:
    """Wait at a barrier of the launch registered under `key` (called from compiled code in object mode)."""
    name = _SCOPE_NAMES.get(scope, "a barrier")
    if cluster_dim == 0:
        raise KernelTrap(f"{name} in a Block task: Block tasks have no cluster or union to synchronise with")
    barriers = _registry.get(key)
    if barriers is None:
        raise KernelTrap(f"{name} reached, but the kernel was launched without barrier support; declare it "
                         f"with @bang.kernel(barriers=True) when it reaches barriers through plain helper code")
    barriers.arrive(task_id, scope)


# Compiled without nogil (numba warns about object mode under nogil); a kernel calling it still runs without
# the GIL, which only the object-mode wait takes.
@jit(nogil=False)
def sync_cluster(ctx):
    """`__sync_cluster()`: wait for the cores of this cluster (and complete this core's async copies)."""
    sync(ctx)
    key = ctx.limits[BARRIER_KEY]
    task = ctx.taskId
    cluster_dim = ctx.clusterDim
    with objmode():
        arrive(key, task, cluster_dim, CLUSTER)
    ctx.state[BARRIERS] += 1
    ctx.state[SYNCS_ANY] += 1


@jit(nogil=False)
def sync_all(ctx):
    """`__sync_all()`: wait for every core of this union task (and complete this core's async copies)."""
    sync(ctx)
    key = ctx.limits[BARRIER_KEY]
    task = ctx.taskId
    cluster_dim = ctx.clusterDim
    with objmode():
        arrive(key, task, cluster_dim, ALL)
    ctx.state[BARRIERS] += 1
    ctx.state[SYNCS_ANY] += 1
    ctx.state[SYNCS_ALL] += 1
