"""The sanitizer at work: the observer the core calls while it is on, its state, and where its reports go.

`Engine.refresh()` registers the one Engine in mlusim.observers for the events its running tools need (none while it
is off: then every event costs an empty loop) and unregisters it when no tool runs. The Engine keeps the
happens-before clocks (clocks.py), the per-block access lists (racecheck.py), the written-word maps (initcheck.py)
and the leak registry (leakcheck.py), and hands each report to the innermost open scope that runs its tool, else to
the process (summarised at exit).
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from typing import Optional

from mlusim import device as devices
from mlusim.command import Kind, current_command
from mlusim.observers import COMMAND_EVENTS, OBSERVERS
from mlusim.submit import StridedExtent

from . import kernelrace, leakcheck, memcheck
from .clocks import EMPTY, HostClocks, QueueClock, join
from .extents import Span, strided_span
from .initcheck import InitShadow
from .racecheck import RaceShadow
from .records import CommandRecord
from .report import Report, capture_stack, format_reports
from .scope import SanitizerFault, Scope

#: Seconds the exit summary, and the end of a scope, wait for queued work to finish.
EXIT_DRAIN_SECONDS = 10.0
DRAIN_SECONDS = 30.0


class Engine:
    """The sanitizer's hooks and state (one per process)."""

    def __init__(self, host_mode: str = "shared", log_entries: int = 1 << 16):
        self.lock = threading.RLock()
        self.process = Scope(frozenset(), False)
        self.scopes: list[Scope] = []
        self.tools: frozenset = frozenset()
        self.log_entries = log_entries
        self.host = HostClocks(host_mode)
        self.queues: dict[int, QueueClock] = {}
        self.rendezvous: dict = {}
        self.races = RaceShadow()
        self.init = InitShadow()
        self.leaks = leakcheck.LeakRegistry()
        self.generation = devices.generation
        self.exit_code: Optional[int] = None

    # ---- switching ----------------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Recompute the running tools from the process setting and the open scopes; install or remove hooks."""
        tools = set(self.process.tools)
        for scope in self.scopes:
            tools |= scope.tools
        self.tools = frozenset(tools)
        self.racecheck = "racecheck" in self.tools
        self.initcheck = "initcheck" in self.tools
        self.memcheck = "memcheck" in self.tools
        self.leakcheck = "leakcheck" in self.tools
        self.commands = self.racecheck or self.initcheck or self.memcheck
        events = []
        if self.tools:
            events += ["block_allocated", "block_freed"]
        if self.commands:
            events += list(COMMAND_EVENTS) + ["kernel_log_entries", "kernel_launched", "kernel_faulted"]
        if self.memcheck:
            events.append("api_fault")
        OBSERVERS.add(self, events)

    def reset_clocks(self) -> None:
        """Forget every clock (a new device table: its queues start afresh; the old blocks' lists went with them)."""
        with self.lock:
            self.queues.clear()
            self.rendezvous.clear()
            self.host = HostClocks(self.host.mode)
            self.generation = devices.generation

    def reset_state(self) -> None:
        """Forget every clock, access list and map (the sanitizer turned off)."""
        with self.lock:
            self.reset_clocks()
            self.races.clear()
            self.init.clear()

    def reset_after_fork(self) -> None:
        self.lock = threading.RLock()
        self.leaks.lock = threading.Lock()
        self.host.lock = threading.Lock()
        self.reset_state()

    # ---- reports ------------------------------------------------------------------------------------------------

    def deliver(self, report: Report) -> None:
        """Give `report` to the innermost open scope running its tool (else the process); raise it in that scope's
        "raise at the first error" mode."""
        with self.lock:
            target = next((s for s in reversed(self.scopes) if report.tool in s.tools), None)
            if target is None:
                target = self.process if report.tool in self.process.tools else None
            if target is None:
                return
            new = target.add(report)
            raise_now = new and target.raise_first and report.severity == "error"
        if raise_now:
            raise SanitizerFault(report)

    def drain(self, timeout: float = DRAIN_SECONDS) -> bool:
        """Wait (at most `timeout` s) until no device has queued work left, without counting it as a host sync
        (the queues' workers run it). False when work was still pending at the end."""
        deadline = time.monotonic() + timeout
        while any(device.busy() for device in list(devices._devices)):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)
        return True

    def check_leaks(self, since: int) -> list[Report]:
        """Reports of what was made after serial `since` and is still alive (each reported once)."""
        reports = []
        for watched in self.leaks.leaks(since):
            kind, message, address, size, device, made = leakcheck.describe(watched)
            reports.append(Report("leakcheck", kind, message, address=address, size=size, device=device,
                                  accesses=[made], severity="error" if kind == "memory_leak" else "warning",
                                  resource=watched.label if kind == "handle_leak" else "device memory"))
        return reports

    # ---- queue hooks (mlusim.queue) -----------------------------------------------------------------------------

    def command_enqueued(self, queue, command) -> None:
        host = self.host.current()
        running = current_command()
        parent = running.sanitized if running is not None else None
        if parent is not None and parent.clock is not None:
            host = join(host, parent.clock)  # queued by work of another queue: after that work
        info = command.info
        command.sanitized = CommandRecord(queue, command.name, command.kind, capture_stack(2), host,
                                          info is not None and "synchronous" in info, parent)

    def _queue_clock(self, queue) -> QueueClock:
        if devices.generation != self.generation:
            self.reset_clocks()
        state = self.queues.get(queue.ident)
        if state is None:
            state = self.queues[queue.ident] = QueueClock()
        return state

    def command_starting(self, queue, command) -> None:
        """A command starts: its clock; the checks of work whose accesses are known already (all but kernels, whose
        tasks' accesses are known once they ran, and collectives, which synchronise with their peers first)."""
        record = command.sanitized
        if record is None:  # queued before the sanitizer was on
            record = command.sanitized = CommandRecord(queue, command.name, command.kind, (), EMPTY, False)
        kind = command.kind
        reports = None
        with self.lock:
            record.clock, record.epoch = self._queue_clock(queue).advance(queue.ident, record.host_clock)
            if kind is Kind.COLLECTIVE:
                key = _rendezvous(command)
                if key is not None:
                    self.rendezvous.setdefault(key, [[], 0])[0].append(record.clock)
            elif kind is not Kind.KERNEL and command.blocks and (self.racecheck or self.initcheck):
                reports = self._check(command, record)
        if reports:
            for report in reports:
                self.deliver(report)

    def command_finished(self, queue, command) -> None:
        record = command.sanitized
        if record is None or record.clock is None:
            return
        kind = command.kind
        if kind is Kind.COLLECTIVE:
            key = _rendezvous(command)
            if key is not None:
                self._join_collective(queue, command, key)
        elif kind is not Kind.KERNEL:
            return
        if not (self.racecheck or self.initcheck):
            return
        with self.lock:
            reports = self._check(command, record)
        for report in reports:
            self.deliver(report)

    def _check(self, command, record) -> list[Report]:
        """racecheck and initcheck of one command's accesses (the caller holds the lock)."""
        accesses, coarse = self._accesses(command, record)
        reports = []
        if not accesses:
            return reports
        if self.racecheck:
            races = self.races
            for block, span, write in accesses:
                conflicts = races.access(block, span, write, record.epoch, record.clock, record)
                if conflicts:
                    reports += self._race_reports(block, record, conflicts)
        if self.initcheck:
            reports += self._initcheck(command, record, accesses, coarse)
        return reports

    def _initcheck(self, command, record, accesses, coarse: bool) -> list[Report]:
        """Check the reads of work that uses the bytes; copies carry the bytes' state; then mark the writes. A
        kernel's writes count first: its tasks may read what other tasks of it wrote (racecheck says whether they
        waited for it)."""
        reads = [(block, span) for block, span, write in accesses if not write]
        writes = [(block, span) for block, span, write in accesses if write]
        reports = []
        if command.kind is Kind.MEMCPY:
            if len(reads) == 1 and len(writes) == 1:
                self.init.copy(reads[0][0], reads[0][1], writes[0][0], writes[0][1])
                return reports
        elif command.kind is Kind.KERNEL and not coarse:
            for block, span in writes:
                self.init.write(block, span)
        if command.kind is not Kind.MEMCPY and not coarse:
            for block, span in reads:
                missing = self.init.read(block, span)
                if missing is not None:
                    reports.append(self._uninit_report(block, record, *missing))
        for block, span in writes:
            self.init.write(block, span)
        return reports

    def _join_collective(self, queue, command, key) -> None:
        """The ranks of one collective in this process synchronise: the queue goes on after every rank's start."""
        with self.lock:
            entry = self.rendezvous.get(key)
            if entry is None:
                return
            state = self._queue_clock(queue)
            for clock in entry[0]:
                state.clock = join(state.clock, clock)
            entry[1] += 1
            if entry[1] >= int(command.info.get("local_ranks", 1)):
                del self.rendezvous[key]

    def notifier_waited(self, queue, placement) -> None:
        if placement.clock:
            with self.lock:
                state = self._queue_clock(queue)
                state.clock = join(state.clock, placement.clock)

    def notifier_placed(self, queue, placement) -> None:
        with self.lock:
            placement.clock = self._queue_clock(queue).clock

    def queue_synced(self, queue) -> None:
        state = self.queues.get(queue.ident)
        if state is not None:
            self.host.observe(state.clock)

    def host_waited(self, placement) -> None:
        if placement.clock:
            self.host.observe(placement.clock)

    # ---- what a command touched ---------------------------------------------------------------------------------

    def _accesses(self, command, record) -> tuple[list, bool]:
        """[(block, Span, write)] of a command, and whether they are only the declared upper bound of a kernel's."""
        if record.touched is not None:
            return record.touched, False
        blocks = command.blocks
        if not blocks:
            return [], False
        found = []
        for extents, write in ((command.reads, False), (command.writes, True)):
            for extent in extents:
                address, nbytes = extent
                block = blocks[0]
                if not block.start <= address < block.start + block.size:
                    block = _block_of(blocks, address)
                    if block is None:
                        continue
                offset = address - block.start
                if type(extent) is StridedExtent:
                    span = strided_span(offset, nbytes, extent.itemsize, extent.dims, extent.strides)
                    if span.hi <= span.lo:
                        continue
                else:
                    span = Span(offset, offset + nbytes, None)
                found.append((block, span, write))
        return found, command.kind is Kind.KERNEL

    def _race_reports(self, block, record, conflicts) -> list[Report]:
        merged: dict = {}
        for conflict in conflicts:
            other = conflict.record.owner
            key = (id(other), conflict.record.write, conflict.write)
            if key in merged:
                merged[key].size += conflict.nbytes
                continue
            host = record.synchronous or other.synchronous
            both = conflict.record.write and conflict.write
            if host:
                message = ("a synchronous host call touched memory that work queued on another queue also touches, "
                           "with no sync or notifier wait in between")
            else:
                message = ("two queued commands touch the same bytes, one writing, and no queue order, notifier "
                           "wait, sync or collective orders them")
            merged[key] = Report(
                "racecheck", "host_race" if host else "race", message, address=block.start + conflict.first,
                size=conflict.nbytes, device=block.device_index, hazard="write-write" if both else "read-write",
                accesses=[other.access(conflict.record.write), record.access(conflict.write)])
        return list(merged.values())

    def _uninit_report(self, block, record, first: int, nbytes: int) -> Report:
        return Report("initcheck", "uninitialized_read",
                      f"'{record.name}' reads device memory that nothing wrote since it was allocated",
                      address=block.start + first, size=nbytes, device=block.device_index,
                      accesses=[record.access(False)])

    # ---- memory hooks (mlusim.memory) ---------------------------------------------------------------------------

    def block_allocated(self, block) -> None:
        owner = devices.owner_of(block.start)
        if owner is None or owner.memory is not block.space:
            return  # an address space outside the device table (a test's own allocator)
        if self.leakcheck:
            self.leaks.allocated(block, capture_stack(2))
        if self.initcheck:
            with self.lock:
                self.init.watch(block)

    def block_freed(self, block) -> None:
        if self.memcheck:  # a later use after free names this call's stack
            block.free_stack = capture_stack(2)
        with self.lock:
            self.races.forget(block)
            self.init.forget(block)
        self.leaks.freed(block)

    # ---- API hooks (mlusim.apicall, the API layers) -------------------------------------------------------------

    def api_fault(self, call: str, fault) -> None:
        report = memcheck.api_fault_report(call, fault, capture_stack(2))
        if report is not None:
            self.deliver(report)

    def track(self, obj, what: str, label: str) -> None:
        if self.leakcheck:
            self.leaks.track(obj, what, label, capture_stack(3))

    # ---- kernel hooks (mlusim.bang.execute) --------------------------------------------------------------------

    def kernel_log_entries(self) -> int:
        return self.log_entries if (self.racecheck or self.initcheck) else 0

    def kernel_launched(self, launch) -> None:
        if launch.log_entries is None:
            return
        command = current_command()
        record = command.sanitized if command is not None else None
        layout = launch.layout
        rounds = bool(launch.kernel.uses_barriers and layout.union)
        result = kernelrace.analyse(launch.log_entries, launch.log_dropped, command.blocks if command else (),
                                    launch.sram_ranges, rounds, layout.group_size, layout.cores_per_cluster,
                                    layout.union)
        if record is not None and not result.dropped:
            record.touched = result.touched
        reports = [kernelrace.race_report(launch, record, race) for race in result.races] if self.racecheck else []
        if result.dropped:
            reports.append(Report("racecheck", "log_overflow",
                                  f"kernel '{launch.name}': {result.dropped} accesses did not fit in the access log "
                                  f"({self.log_entries} entries per core; MLUSIM_SANITIZE_LOG raises it): they were "
                                  f"not checked for races between tasks, and the launch counts as touching its "
                                  f"arguments' whole blocks", severity="warning"))
        for report in reports:
            self.deliver(report)

    def kernel_faulted(self, launch, fault) -> None:
        if not self.memcheck:
            return
        command = current_command()
        record = command.sanitized if command is not None else None
        report = memcheck.kernel_fault_report(launch, fault, record)
        if report is not None:
            self.deliver(report)

    # ---- the end of the process ---------------------------------------------------------------------------------

    def at_exit(self) -> None:
        if not self.process.tools:
            return
        self.drain(EXIT_DRAIN_SECONDS)
        if "leakcheck" in self.process.tools:
            for report in self.check_leaks(0):
                try:
                    self.deliver(report)
                except SanitizerFault:
                    pass
        reports = self.process.reports
        if reports:
            sys.stdout.flush()
            print(format_reports(reports), file=sys.stderr)
            sys.stderr.flush()
        if self.exit_code is not None and self.process.errors:
            os._exit(self.exit_code)


def _block_of(blocks, address: int):
    for block in blocks:
        if block.start <= address < block.start + max(block.size, 1):
            return block
    return None


def _rendezvous(command):
    info = command.info
    if info is None or command.kind is not Kind.COLLECTIVE:
        return None
    return info.get("rendezvous")


_engine: Optional[Engine] = None
_engine_lock = threading.Lock()


def engine(create: bool = True, **options) -> Optional[Engine]:
    """The process's Engine (made on first use)."""
    global _engine
    if _engine is None and create:
        with _engine_lock:
            if _engine is None:
                _engine = Engine(**options)
                atexit.register(_engine.at_exit)
                os.register_at_fork(after_in_child=_engine.reset_after_fork)
    return _engine

