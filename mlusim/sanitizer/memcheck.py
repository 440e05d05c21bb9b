"""memcheck: the simulator's pointer checks as sanitizer reports, and kernel faults with their task.

Every API call already refuses a bad device pointer (null, unknown, freed, out of bounds, ...) with an error naming
the argument; memcheck also reports it, with the call's stack (and for a use after free the stack of the call that
freed the block), so that a run's summary lists it even when the program swallowed the error. A kernel that traps on an illegal access (out of bounds, negative offset, misaligned operand)
is reported with its task and, for GDRAM, the device address.
"""
from __future__ import annotations

import re
from typing import Optional

from .report import Access, Report

#: Fault kinds of mlusim.errors that memcheck reports (OutOfMemory is a legitimate answer, not a memory error).
POINTER_FAULTS = frozenset({"null_pointer", "unknown_address", "use_after_free", "double_free", "out_of_bounds",
                            "negative_offset", "not_block_start"})

#: The range of a BANG access trap (mlusim.bang.pointer.range_trap, mlusim.bang.dma.span_trap): elements of a
#: pointer access, or bytes of a copy side (at a byte offset, or at segment x stride + first byte of a strided copy).
_RANGE = re.compile(r"(?:(?P<count>-?\d+) element\(s\) from element (?P<element>-?\d+)"
                    r"|(?P<role>dst|src) (?P<nbytes>-?\d+) byte\(s\) at byte offset "
                    r"(?P<byte>-?\d+)(?: x (?P<stride>-?\d+) \+ (?P<first_byte>-?\d+))?)"
                    r" of (?P<space>GDRAM|NRAM|WRAM|SRAM|LDRAM) buffer '(?P<name>[^']*)'")


def _range(match, itemsize: int) -> tuple:
    """(first byte, end byte) within the buffer of a matched trap message."""
    if match.group("count") is not None:
        first = int(match.group("element")) * itemsize
        return first, first + int(match.group("count")) * itemsize
    first = int(match.group("byte"))
    if match.group("stride") is not None:
        first = first * int(match.group("stride")) + int(match.group("first_byte"))
    return first, first + int(match.group("nbytes"))


def api_fault_report(call: str, fault, stack: tuple) -> Optional[Report]:
    """The report of a pointer fault raised by API call `call` (None for faults memcheck does not report)."""
    if fault.kind not in POINTER_FAULTS:
        return None
    address = getattr(fault, "address", None)
    device = None
    if address and address >> 40:
        device = (address >> 40) - 1
    accesses = [Access("call", command=call, stack=stack)]
    freed = getattr(fault, "block", None)
    if fault.kind == "use_after_free" and freed is not None and freed.free_stack:
        accesses.append(Access("free", command=freed.freed_call, stack=freed.free_stack))
    return Report("memcheck", fault.kind, f"{call}: {fault}", address=address, device=device, accesses=accesses,
                  raised=True)


def kernel_fault_report(launch, fault, record) -> Optional[Report]:
    """The report of a kernel fault that is a memory error (None for asserts, user traps, deadlocks...)."""
    if fault.reason != "trap":
        return None
    cause = fault.__cause__
    text = str(cause) if cause is not None else str(fault)
    match = _RANGE.search(text)
    if match is not None:
        kind = "negative_offset" if "negative offset" in text else "out_of_bounds"
    elif "aligned" in text:
        kind = "misaligned_address"
    elif "deadlock" in text or "barrier" in text:
        return None
    else:
        kind = "kernel_trap"
    address, size, device = None, 0, None
    access = "read"
    if match is not None:
        role = match.group("role")
        if role == "dst" or text.lstrip().startswith("write"):
            access = "write"
        address, size, device = _device_address(launch, match)
    task = fault.task_id
    accesses = [Access(access, command=launch.name, kind="kernel", queue=record.queue_name if record else "",
                       task=task, task_ids=launch.describe(task) if task is not None else "",
                       stack=record.stack if record else ())]
    return Report("memcheck", kind, f"kernel '{launch.name}' task {task}: {text}", address=address, size=size,
                  device=device, accesses=accesses, task=task, raised=True)


def _device_address(launch, match) -> tuple:
    """(device address, bytes, device) of the faulting range when it is in a GDRAM argument."""
    if match.group("space") != "GDRAM":
        return None, 0, None
    name = match.group("name")
    for (param, _), value in zip(launch.kernel.params, launch.args):
        if param != name or not hasattr(value, "base"):
            continue
        first, end = _range(match, value.base.itemsize)
        start = _block_start(launch, value)
        if start is None:
            return None, end - first, launch.device.index
        return start + first, end - first, launch.device.index
    return None, 0, None


def _block_start(launch, ptr) -> Optional[int]:
    """The device address of the block the GDRAM pointer's base is a view of."""
    host = ptr.base.ctypes.data
    for block in launch.device.memory.live_blocks():
        if block.data is not None and block.data.ctypes.data == host:
            return block.start
    return None
