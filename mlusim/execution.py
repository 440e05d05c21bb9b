"""How a queue runs one command (for mlusim.queue.Queue, whose run lock the caller holds): its wait for a notifier,
the skip after a sticky error, its clocks, the observers' events, the failure that becomes the sticky error, and the
release of its pins."""
from __future__ import annotations

import time

from .command import Command, Kind, _running, running_queues
from .errors import QueueFault, UseAfterFreeFault
from .observers import OBSERVERS


def run_next(queue) -> bool:
    """Run the oldest pending command of `queue` (the caller holds its run lock); False when there was none."""
    try:
        command = queue._pending.popleft()
    except IndexError:
        return False
    running = running_queues()
    running.add(queue)
    position = queue.completed
    queue._current = command
    try:
        _execute(queue, command, position)
    finally:  # whatever happened, the command is done: a sync must never hang on it
        running.discard(queue)
        if queue._current is command:
            queue._current = None
            if queue.lost is None:  # a lost queue already counted the command it lost
                queue.completed = position + 1
                if queue.completed == queue.submitted:
                    queue._idle_since = time.perf_counter()
    return True


def _execute(queue, command: Command, position: int) -> None:
    try:
        if command.waits_for is not None:
            placement = command.waits_for
            placement.event.wait()
            queue.model_clock_us = max(queue.model_clock_us, placement.model_time_us)
            for hook in OBSERVERS.notifier_waited:
                hook(queue, placement)
        if queue._fault is not None and command.kind is not Kind.NOTIFIER:
            queue._skipped += 1
            return
        command.host_start = time.perf_counter()
        model_start = queue.model_clock_us
        if command.not_before_us > model_start:
            model_start = command.not_before_us
        command.model_start = queue.model_clock_us = model_start
        outer = getattr(_running, "command", None)
        _running.command = command
        try:
            _check_blocks(queue, command, position)
            for hook in OBSERVERS.command_starting:
                hook(queue, command)
            modelled = command.run() if command.run is not None else None
            command.host_end = time.perf_counter()
            if modelled is not None:
                command.model_us = float(modelled)
            queue.model_clock_us = command.model_end = command.model_start + command.model_us
            for hook in OBSERVERS.command_finished:
                hook(queue, command)
        except BaseException as exc:  # any failure of queued work becomes the queue's sticky error
            command.host_end = time.perf_counter()
            command.model_end = command.model_start
            queue._fault = QueueFault(exc, f"{command.kind} '{command.name}'", queue.name, command_kind=command.kind)
            if not queue.blocking:  # in blocking mode the error is raised at the call itself
                queue.device.record_fault(queue._fault)
            if isinstance(exc, KeyboardInterrupt):
                raise  # Ctrl-C stops the program too, not only the queue
        finally:
            _running.command = outer
    finally:
        unpin(command)


def _check_blocks(queue, command: Command, position: int) -> None:
    """A block freed by an earlier command of this queue (cnrtMemFreeAsync, or cnrtFree inside a host function)
    cannot be used by a later one: that is a use after free, reported instead of touching the memory."""
    for block in command.blocks:
        freed_by = block.freed_by
        if freed_by is not None and freed_by[0] is queue and freed_by[1] < position:
            raise UseAfterFreeFault(f"block 0x{block.start:x} (size {block.size}) was freed by an earlier "
                                    f"command of {queue.name} (use after free)", None, block.start)


def unpin(command: Command) -> None:
    """Release the pins of `command` (it ran, or it will never run)."""
    # the operands of an op often lie in one block (a caching allocator's segment): its pins go in one step
    previous, count = None, 0
    for block in command.blocks:
        if block is previous:
            count += 1
            continue
        if previous is not None:
            previous.space.unpin(previous, count)
        previous, count = block, 1
    if previous is not None:
        previous.space.unpin(previous, count)


def finish_unrun(commands) -> None:
    """Commands that will never run: release their pins; their notifier placements count as reached."""
    for command in commands:
        if command.kind is Kind.NOTIFIER and command.run is not None:
            try:
                command.run()
            except Exception:
                pass
        unpin(command)
