"""One launch of a BANG kernel on a simulated device: arguments, task contexts, parallel execution, faults, work.

Kernels without barriers run their tasks, in a seeded shuffled order, on a few host threads (one per host core;
one when the first task shows the work is tiny). Kernels with barriers run each round's N x coreDim tasks on as
many host threads at once, so that sync_cluster / sync_all really wait for each other; rounds follow one another,
each with fresh SRAM. The first fault stops the launch and becomes a KernelFault naming kernel, task and violation.

A launch the main thread runs watches SIGINT (or runs its tasks on a helper thread), so that Ctrl-C stops it;
every launch has a watchdog time limit (mlusim.bang.watchdog). Either stops the tasks with an error that names the
kernel.
When an observer asks for an access log (the sanitizer: mlusim.observers, kernel_log_entries) the workers record
their tasks' GDRAM and SRAM accesses (mlusim.bang.accesslog), which it checks after the launch (kernel_launched).
"""
from __future__ import annotations

import threading
import time
from functools import lru_cache

import numpy as np

from mlusim import device as devices
from mlusim.host.threads import host_cores, pool
from mlusim.errors import Fault, KernelFault
from mlusim.command import running_queue
from mlusim.observers import OBSERVERS
from mlusim.taskmodel import TaskLayout, layout

from . import accesslog
from . import barriers as barrier_registry
from . import watchdog
from .cancel import TaskStopped
from .arenas import POOL, CoreArena, SramArena
from .barriers import BarrierAborted, BarrierSet
from .context import (ADDRESS_ALIGN, BARRIER_KEY, CAPACITY, LENGTH_ALIGN, LIMITS_WIDTH, PENDING_COUNT, SRAM_SHARED,
                      STATE_WIDTH, Ctx)
from .faults import KernelTrap
from .dma import sync
from .pointer import GDRAM, NRAM, SRAM, WRAM, Ptr
from .work import WorkCounts, counts_from_state, modelled_us

#: the coreId a cluster's memory core reports
MEMORY_CORE_ID = 0x80
#: A first task faster than this runs the whole launch on the calling thread (threads would cost more).
INLINE_TASK_SECONDS = 50e-6
HOST_WORKERS = host_cores()


@lru_cache(maxsize=64)
def shuffled(seed: int, count: int) -> tuple:
    """The task order of a launch of `count` tasks under `seed` (a permutation, reproducible)."""
    return tuple(int(t) for t in np.random.default_rng([seed, count]).permutation(count))


def board_limits(spec) -> np.ndarray:
    limits = np.zeros(LIMITS_WIDTH, dtype=np.int64)
    limits[CAPACITY + NRAM] = spec.nram_usable
    limits[CAPACITY + WRAM] = spec.wram_bytes
    limits[CAPACITY + SRAM] = spec.sram_usable
    limits[ADDRESS_ALIGN] = 64
    limits[LENGTH_ALIGN] = 128 if spec.isa < 300 else 1
    return limits


def gdram_pointer(device, value, name: str, etype, kernel: str) -> Ptr:
    """A Ptr for a device address passed as kernel argument `name`, over the whole block it points into."""
    address = int(value)
    empty = np.zeros(0, dtype=etype.storage)
    if address == 0:
        return Ptr(empty, 0, GDRAM, f"{name} (null)", etype)
    owner = devices.owner_of(address)
    if owner is not device:
        where = "no device" if owner is None else f"device {owner.index}"
        raise KernelFault(f"kernel '{kernel}': argument '{name}' = 0x{address:x} is an address of {where}, "
                          f"not of device {device.index}", kernel=kernel)
    try:
        block, offset = device.memory.resolve(address, 0, arg=name)
    except Fault as fault:
        raise KernelFault(f"kernel '{kernel}': {fault}", kernel=kernel) from None
    if offset % etype.itemsize:
        raise KernelFault(f"kernel '{kernel}': argument '{name}' = 0x{address:x} is not aligned for "
                          f"{etype.kind} ({etype.itemsize} bytes)", kernel=kernel)
    usable = block.size - block.size % etype.itemsize
    return Ptr(block.data[:usable].view(etype.storage), offset // etype.itemsize, GDRAM, name, etype)


class Launch:
    """One `kernel<<<dim, ktype, queue>>>(args)` being run."""

    def __init__(self, kernel, device, task_layout: TaskLayout, args: tuple):
        self.kernel = kernel
        self.name = kernel.__name__
        self.device = device
        self.spec = device.spec
        self.layout = task_layout
        #: memory-core tasks per round: one per cluster of a Union launch of a kernel that asks for them
        self.memory_cores = task_layout.union if kernel.runs_memory_cores else 0
        self.args = kernel.bind_arguments(device, args)
        self.limits = board_limits(self.spec)
        self.seed = device.config.seed
        self.faults: list[tuple[int, BaseException]] = []
        self.failed = False
        self._fault_lock = threading.Lock()
        self.schedule: list[int] = []
        self.counts: WorkCounts | None = None
        self.stopper = watchdog.Stopper(python_tasks=kernel.debug)
        self.log_capacity = OBSERVERS.kernel_log_capacity()
        self.sram_ranges: list[tuple[int, int]] = []
        self.log_entries = None
        self.log_dropped = 0
        self._logged_args: dict = {}

    # ---- per task ------------------------------------------------------------------------------------------------

    def memory_task(self, round_index: int, cluster: int) -> int:
        """The task number of a round's memory-core task of `cluster` (past the compute cores' taskDim)."""
        return self.layout.task_dim + round_index * self.memory_cores + cluster

    def describe(self, task: int) -> str:
        lay = self.layout
        if task < lay.task_dim:
            return lay.describe(task)
        round_index, cluster = divmod(task - lay.task_dim, self.memory_cores)
        return f"the memory core (coreId=0x80) of cluster {cluster} in round {round_index}"

    def context(self, task: int, arena: CoreArena, sram: SramArena) -> Ctx:
        lay = self.layout
        dx, dy, dz = lay.dim
        if task >= lay.task_dim:  # a memory core: the ids of its cluster's first core, coreId 0x80
            round_index, cluster = divmod(task - lay.task_dim, self.memory_cores)
            first = round_index * lay.group_size + cluster * lay.cores_per_cluster
            return Ctx(lay.task_x[first], lay.task_y[first], lay.task_z[first], dx, dy, dz, task, lay.task_dim,
                       cluster, lay.cluster_dim, MEMORY_CORE_ID, lay.cores_per_cluster,
                       arena.nram, arena.wram, sram.data, arena.state, self.limits)
        return Ctx(lay.task_x[task], lay.task_y[task], lay.task_z[task], dx, dy, dz, task, lay.task_dim,
                   lay.cluster_id[task], lay.cluster_dim, lay.core_id[task], lay.cores_per_cluster,
                   arena.nram, arena.wram, sram.data, arena.state, self.limits)

    def sample_context(self) -> Ctx:
        """A context with the types of the real ones (to compile the body before any task runs)."""
        empty = np.zeros(0, dtype=np.uint8)
        return Ctx(0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, empty, empty, empty, np.zeros(1, np.int64), self.limits)

    def _arguments(self, arena: CoreArena) -> tuple:
        """The arguments a task on `arena` gets: pointers that record into its state row while logging."""
        if not self.log_capacity:
            return self.args
        args = self._logged_args.get(id(arena))
        if args is None:
            row = arena.state.ctypes.data
            args = tuple(a.logged(row) if isinstance(a, Ptr) else a for a in self.args)
            self._logged_args[id(arena)] = args
        return args

    def _take(self, arenas: list[CoreArena], srams: list[SramArena] = ()) -> None:
        if self.log_capacity:
            self.sram_ranges = [(s.data.ctypes.data, s.data.ctypes.data + s.data.size) for s in srams]
            accesslog.prepare(arenas, self.log_capacity)

    def _give(self, arenas: list[CoreArena], srams: list[SramArena] = ()) -> None:
        """Return the workers to the pool, keeping what they recorded."""
        if self.log_capacity:
            self.log_entries, self.log_dropped = accesslog.entries(arenas)
        POOL.give(self.spec, arenas, srams)

    def run_task(self, body, task: int, arena: CoreArena, sram: SramArena) -> bool:
        """Run one task; record its fault. True when it completed."""
        ctx = self.context(task, arena, sram)
        if self.log_capacity:
            accesslog.begin_task(arena.state, task)
        try:
            body(ctx, *self._arguments(arena))
            if arena.state[PENDING_COUNT]:
                sync(ctx)
            return True
        except BaseException as exc:  # any failure inside a task is that task's fault
            arena.state[PENDING_COUNT] = 0
            self.record_fault(task, exc)
            return False

    def record_fault(self, task: int, exc: BaseException) -> None:
        with self._fault_lock:
            self.faults.append((task, exc))
            self.failed = True

    # ---- scheduling ----------------------------------------------------------------------------------------------

    def run(self, body, workers: int, barrier_timeout: float, time_limit: float | None = None) -> float:
        """Run every task; returns the modelled device time (µs) or raises KernelFault. The watchdog stops the
        tasks after `time_limit` seconds (None: no limit); Ctrl-C of a thread waiting for the launch stops them
        too (KeyboardInterrupt)."""
        stopper = self.stopper
        queue = running_queue()
        on_main = threading.current_thread() is threading.main_thread()
        if queue is not None:
            queue.on_interrupt(stopper.stop)
            if queue.completed < queue.interrupted_before:  # queued before a Ctrl-C that was waiting for it
                stopper.stop("interrupted by KeyboardInterrupt (Ctrl-C) before it started")
        description = f"kernel '{self.name}'"

        def on_stuck() -> None:
            if not on_main and queue is not None:
                queue.abandon(KernelFault(f"{description} did not stop within {watchdog.GRACE_SECONDS:g} s after "
                                          f"it was stopped ({stopper.reason}); its host thread is left running and "
                                          f"{queue.name} is lost", kernel=self.name, reason="watchdog"))

        watchdog.watch(stopper, time_limit, description, on_stuck)
        try:
            if on_main:
                rows = self._run_for_main_thread(body, workers, barrier_timeout)
            else:
                rows = self._run_tasks(body, workers, barrier_timeout)
        finally:
            stopper.close()
            if queue is not None:
                queue.off_interrupt(stopper.stop)
        self.counts = counts_from_state(rows, self.layout.task_dim)
        for hook in OBSERVERS.kernel_launched:
            hook(self)
        if self.faults or stopper.reason is not None:
            fault = self.kernel_fault()
            for hook in OBSERVERS.kernel_faulted:
                hook(self, fault)
            raise fault
        return modelled_us(self.spec, self.counts, self.layout.task_dim, self.layout.union)

    def _run_tasks(self, body, workers: int, barrier_timeout: float) -> list[np.ndarray]:
        if (self.kernel.uses_barriers or self.memory_cores) and self.layout.union:
            return self._run_rounds(body, barrier_timeout)
        return self._run_pool(body, workers)

    def _run_for_main_thread(self, body, workers: int, barrier_timeout: float) -> list[np.ndarray]:
        """Run the tasks so that Ctrl-C can stop them: on this (main) thread while SIGINT is watched through the
        wakeup fd (tasks that poll stop when it arrives), else (the wakeup fd is taken, or the kernel calls code that
        may never poll) on a helper thread while the main thread waits, able to give up on it."""
        stopper = self.stopper
        previous = None if self.kernel.may_not_poll else watchdog.SIGINT_WATCH.begin(stopper)
        if previous is not None:
            try:
                rows = self._run_tasks(body, workers, barrier_timeout)
            except KeyboardInterrupt:  # Python's own handler ran once the tasks had stopped
                stopper.stop("interrupted by KeyboardInterrupt (Ctrl-C)")
                rows = None
            finally:
                watchdog.SIGINT_WATCH.end(stopper, previous)
            # The handler may also have run inside a task's fault handling (and been recorded there): the launch
            # was interrupted either way, and the interrupt goes on to the caller.
            interrupted = any(isinstance(exc, KeyboardInterrupt) for _, exc in self.faults)
            if rows is None or interrupted or (stopper.reason or "").startswith("interrupted by KeyboardInterrupt"):
                stopper.stop("interrupted by KeyboardInterrupt (Ctrl-C)")
                raise KeyboardInterrupt(f"kernel '{self.name}' interrupted by Ctrl-C; its tasks stopped")
            return rows
        future = watchdog.HELPERS.submit(lambda: self._run_tasks(body, workers, barrier_timeout))
        try:
            while True:
                try:
                    return future.result(timeout=0.05)
                except TimeoutError:
                    if stopper.stuck:
                        raise self._given_up() from None
        except KeyboardInterrupt:
            stopper.stop("interrupted by KeyboardInterrupt (Ctrl-C)")
            try:
                future.result(timeout=watchdog.GRACE_SECONDS)
                how = "its tasks stopped"
            except TimeoutError:
                how = "its tasks did not stop; their host thread is left running"
            except BaseException:
                how = "its tasks stopped"
            raise KeyboardInterrupt(f"kernel '{self.name}' interrupted by Ctrl-C; {how}") from None

    def _given_up(self) -> KernelFault:
        return KernelFault(f"kernel '{self.name}' on {self.spec.name}: {self.stopper.reason}, and its tasks did not "
                           f"stop within {watchdog.GRACE_SECONDS:g} s (code that never polls, e.g. a plain numba "
                           f"function that loops forever); their host thread is left running",
                           kernel=self.name, reason="watchdog")

    def _run_pool(self, body, workers: int) -> list[np.ndarray]:
        order = shuffled(self.seed, self.layout.task_dim)
        self.schedule = list(order)
        arenas = POOL.take_cores(self.spec, min(max(1, workers), len(order)))
        self._take(arenas)
        try:
            def run_chunk(arena: CoreArena, tasks) -> None:
                self.stopper.enter()
                try:
                    for task in tasks:
                        if self.failed:
                            return
                        self.run_task(body, task, arena, arena.own_sram)
                finally:
                    self.stopper.leave()

            started = time.perf_counter()
            run_chunk(arenas[0], order[:1])
            rest = order[1:]
            if len(arenas) == 1 or time.perf_counter() - started < INLINE_TASK_SECONDS:
                run_chunk(arenas[0], rest)
            else:
                chunks = [rest[i::len(arenas)] for i in range(len(arenas))]
                futures = [pool().submit(run_chunk, arena, chunk)
                           for arena, chunk in zip(arenas[1:], chunks[1:])]
                run_chunk(arenas[0], chunks[0])
                for future in futures:
                    future.result()
            return [arena.state[:STATE_WIDTH].copy() for arena in arenas]
        finally:
            self._give(arenas)

    def _run_rounds(self, body, timeout: float) -> list[np.ndarray]:
        lay = self.layout
        group = lay.group_size
        members_per_round = group + self.memory_cores
        round_order = shuffled(self.seed, lay.rounds)
        self.schedule = [r * group + m for r in round_order for m in range(group)]
        barrier_set = BarrierSet(group, lay.cores_per_cluster, timeout, self.memory_cores, lay.task_dim)
        self.limits[BARRIER_KEY] = barrier_registry.register(barrier_set)
        self.limits[SRAM_SHARED] = 1
        arenas = POOL.take_cores(self.spec, members_per_round)
        srams = POOL.take_srams(self.spec, lay.union)
        self._take(arenas, srams)
        self.kernel.bind_srams(self.args, srams)

        def between_rounds() -> None:
            used = max(arena.sram_used() for arena in arenas)
            for sram in srams:
                sram.repoison(used)

        round_gate = threading.Barrier(members_per_round, action=between_rounds)
        self.stopper.on_stop(barrier_set.stop)
        self.stopper.on_stop(lambda reason: round_gate.abort())

        def run_member(member: int) -> None:
            arena = arenas[member]
            cluster = member - group if member >= group else member // lay.cores_per_cluster
            sram = srams[cluster]
            self.stopper.enter()
            try:
                for index in round_order:
                    task = self.memory_task(index, cluster) if member >= group else index * group + member
                    completed = self.run_task(body, task, arena, sram)
                    barrier_set.finish(task, faulted=not completed)
                    try:
                        round_gate.wait()
                    except threading.BrokenBarrierError:
                        return  # the launch was stopped
                    if self.failed:
                        return
            finally:
                self.stopper.leave()

        try:
            members = list(shuffled(self.seed + 1, members_per_round))
            threads = [threading.Thread(target=run_member, args=(m,), name=f"mlusim-bang-core{m}", daemon=True)
                       for m in members[1:]]
            for thread in threads:
                thread.start()
            run_member(members[0])
            for thread in threads:
                thread.join()
            return [arena.state[:STATE_WIDTH].copy() for arena in arenas]
        finally:
            barrier_registry.unregister(int(self.limits[BARRIER_KEY]))
            self._give(arenas, srams)

    # ---- reporting -----------------------------------------------------------------------------------------------

    def kernel_fault(self) -> KernelFault:
        reason = self.stopper.reason
        if reason is not None:
            stopped = [task for task, exc in self.faults if isinstance(exc, (TaskStopped, BarrierAborted))]
            where = f" (task {stopped[0]} was running)" if stopped else ""
            kind = "interrupted" if "KeyboardInterrupt" in reason else "watchdog"
            return KernelFault(f"kernel '{self.name}' on {self.spec.name} was stopped: {reason}{where}",
                               kernel=self.name, task_id=stopped[0] if stopped else None, reason=kind)
        primary = [f for f in self.faults if not isinstance(f[1], BarrierAborted)] or self.faults
        task, exc = primary[0]
        if isinstance(exc, KernelTrap):
            reason, what = exc.reason, str(exc)
        else:
            reason, what = "trap", f"{type(exc).__name__}: {exc}"
        name = f"task {task}" if task < self.layout.task_dim else "a task"
        message = f"kernel '{self.name}' {name} ({self.describe(task)}) on {self.spec.name}: {what}"
        fault = KernelFault(message, kernel=self.name, task_id=task, reason=reason)
        fault.__cause__ = exc
        return fault
