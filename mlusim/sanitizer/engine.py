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
from mlusim.errors import Fault
from mlusim.observers import COMMAND_EVENTS, OBSERVERS
from mlusim.submit import StridedExtent

from . import kernelrace, leakcheck, memcheck
from .clocks import EMPTY, HostClocks, QueueClock, join
from .extents import Span, strided_span
from .initcheck import InitShadow
from .racecheck import RaceShadow
from .report import Access, Report, capture_stack, format_reports, user_frames

#: Seconds the exit summary, and the end of a scope, wait for queued work to finish.
EXIT_DRAIN_SECONDS = 10.0
DRAIN_SECONDS = 30.0


class SanitizerFault(Fault):
    """A sanitizer error raised where it was found (the "raise at the first error" mode); `.report` is the Report.
    Raised inside queued work, it becomes the queue's sticky error like any other fault."""

    kind = "sanitizer"

    def __init__(self, report: Report):
        super().__init__(report.text())
        self.report = report


class Scope:
    """Reports collected while a `mlusim.sanitizer.scope()` is open (or for the whole process)."""

    def __init__(self, tools: frozenset, raise_first: bool, leak_mark: int = 0):
        self.tools = tools
        self.raise_first = raise_first
        self.leak_mark = leak_mark
        self.reports: list[Report] = []
        self._keys: dict = {}

    @property
    def errors(self) -> list[Report]:
        return [r for r in self.reports if r.severity == "error"]

    @property
    def warnings(self) -> list[Report]:
        return [r for r in self.reports if r.severity != "error"]

    def of(self, tool: Optional[str] = None, kind: Optional[str] = None) -> list[Report]:
        """The reports of one tool and/or kind."""
        return [r for r in self.reports if (tool is None or r.tool == tool) and (kind is None or r.kind == kind)]

    def text(self) -> str:
        return format_reports(self.reports)

    def add(self, report: Report) -> bool:
        """Keep `report`; False when it repeats one already kept (same kind, same lines of code), which counts it.
        Leaks never repeat: each is one object."""
        if report.tool == "leakcheck":
            self.reports.append(report)
            return True
        key = _repeat_key(report)
        earlier = self._keys.get(key)
        if earlier is not None:
            earlier.count += report.count
            return False
        self._keys[key] = report
        self.reports.append(report)
        return True

    def __iter__(self):
        return iter(self.reports)

    def __len__(self) -> int:
        return len(self.reports)

    def __repr__(self) -> str:
        return f"<sanitizer scope {sorted(self.tools)}: {len(self.errors)} errors, {len(self.warnings)} warnings>"


def _repeat_key(report: Report) -> tuple:
    """Reports with the same key are one error found again (a race in a loop): same kind, same lines of code."""
    sides = tuple(sorted(((a.access, a.command, a.task if a.task is not None else -1, _user_site(a.stack) or ())
                          for a in report.accesses), key=repr))
    return report.tool, report.kind, report.resource, report.address if report.tool != "racecheck" else None, sides


def _user_site(stack: tuple):
    frames = user_frames(stack)
    return frames[0] if frames else None


class CommandRecord:
    """What the sanitizer knows of one queued command (not the command itself: that holds its work's buffers)."""

    __slots__ = ("queue", "name", "kind", "stack", "host_clock", "clock", "epoch", "synchronous", "touched",
                 "parent")

    def __init__(self, queue, name: str, kind: Kind, stack: tuple, host_clock: dict, synchronous: bool,
                 parent: Optional["CommandRecord"] = None):
        self.queue = queue
        self.name = name
        self.kind = kind
        self.stack = stack
        self.host_clock = host_clock
        self.clock = None
        self.epoch = None
        self.synchronous = synchronous
        self.touched = None   # a kernel's exact accesses [(block, Span, write)], set by the launch
        self.parent = parent  # the command whose work queued this one (its accesses are part of that work)

    @property
    def queue_name(self) -> str:
        return self.queue.name

    def within(self, other: "CommandRecord") -> bool:
        """Whether this command is `other` or was queued by its work (directly or not)."""
        record = self
        while record is not None:
            if record is other:
                return True
            record = record.parent
        return False

    def access(self, write: bool) -> Access:
        return Access("write" if write else "read", command=self.name, kind=self.kind.value, queue=self.queue.name,
                      host=self.synchronous, stack=self.stack)


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
        reports = [self._kernel_race_report(launch, record, race) for race in result.races] if self.racecheck else []
        if result.dropped:
            reports.append(Report("racecheck", "log_overflow",
                                  f"kernel '{launch.name}': {result.dropped} accesses did not fit in the access log "
                                  f"({self.log_entries} entries per core; MLUSIM_SANITIZE_LOG raises it): they were "
                                  f"not checked for races between tasks, and the launch counts as touching its "
                                  f"arguments' whole blocks", severity="warning"))
        for report in reports:
            self.deliver(report)

    def _kernel_race_report(self, launch, record, race) -> Report:
        layout = launch.layout
        region = race.region
        sides = []
        for task, write in zip(race.tasks, race.writes):
            sides.append(Access("write" if write else "read", command=launch.name, kind="kernel",
                                queue=record.queue_name if record else "", task=task,
                                task_ids=layout.describe(task),
                                stack=record.stack if record else ()))
        both = all(race.writes)
        if region.block is not None:
            address, device = region.block.start + race.first, region.block.device_index
            where = "GDRAM"
        else:
            address, device = None, launch.device.index
            where = f"SRAM of cluster {region.cluster} (round {region.round}), bytes [{race.first}, " \
                    f"{race.first + race.nbytes})"
        first, second = race.tasks
        if not layout.union:
            why = "Block tasks never synchronise with each other"
        elif not (launch.kernel.uses_barriers and first // layout.group_size == second // layout.group_size):
            why = ("the kernel has no barrier" if not launch.kernel.uses_barriers else
                   "tasks of different union rounds never synchronise")
        else:
            why = "no sync_cluster or sync_all that both take part in lies between the accesses"
        message = (f"tasks {first} and {second} of kernel '{launch.name}' touch the same {where} bytes, one "
                   f"writing, and {why}")
        return Report("racecheck", "kernel_race", message, address=address, size=race.nbytes, device=device,
                      accesses=sides, hazard="write-write" if both else "read-write", task=race.tasks[0],
                      count=race.count)

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

