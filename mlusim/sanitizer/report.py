"""What the sanitizer reports, in the style of NVIDIA compute-sanitizer: the tool, the kind of error, the address and
size, and each access involved with its queue, command and the Python stack of the call that queued it.

Stacks are taken cheaply when work is queued (code objects and instruction offsets: a frame's line number costs more
to ask for than the rest) and turned into text only when a report is printed; frames inside the simulator's own
packages are left out, so a report points at the user's lines.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

PREFIX = "========= "
#: Frames of a captured stack kept (innermost first): the API's own frames and the user's nearest ones.
STACK_DEPTH = 12
#: Frames of user code a report prints per access.
SHOWN_FRAMES = 6

_ROOT = Path(__file__).resolve().parents[2]
_INTERNAL = tuple(str(_ROOT / name) + os.sep for name in ("mlusim", "cnrt", "cnnl", "cncl", "cndev", "cndrv",
                                                           "torch_mlu", "neuware", "magicmind", "mlutools"))
_INTERNAL_EXCEPT = (str(_ROOT / "mlusim" / "samples") + os.sep,)
_STDLIB = (os.path.dirname(os.__file__) + os.sep,)
_LIBRARIES = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def capture_stack(skip: int = 1) -> list:
    """The calling thread's stack as (code, instruction offset) pairs, innermost first, without the `skip` innermost
    frames."""
    try:
        frame = sys._getframe(skip + 1)
    except ValueError:
        return ()
    frames = []
    append = frames.append
    for _ in range(STACK_DEPTH):
        if frame is None:
            break
        append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return frames


def line_of(code, offset: int) -> int:
    """The source line of the instruction at byte `offset` of `code`."""
    for start, end, line in code.co_lines():
        if start <= offset < end and line is not None:
            return line
    return code.co_firstlineno


def _internal(filename: str) -> bool:
    if filename.startswith(_INTERNAL_EXCEPT):
        return False
    return (filename.startswith(_INTERNAL) or filename.startswith(_STDLIB) or filename.startswith("<")
            or any(part in filename for part in _LIBRARIES))


def user_frames(stack: tuple) -> list[tuple[str, int, str]]:
    """(file, line, function) of the frames of `stack` outside the simulator and the standard library; all frames
    when none is."""
    frames = [(code.co_filename, line_of(code, offset), code.co_name) for code, offset in stack]
    mine = [frame for frame in frames if not _internal(frame[0])]
    return mine or frames


def _where(frame: tuple[str, int, str]) -> str:
    filename, line, function = frame
    try:
        shown = os.path.relpath(filename)
        if shown.startswith(".." + os.sep + ".."):
            shown = filename
    except ValueError:
        shown = filename
    return f"{shown}:{line} in {function}"


@dataclass
class Access:
    """One side of an error: what accessed the memory (or allocated it), where it was queued from."""

    access: str                       # "read", "write", "allocation", "call", ...
    command: str = ""                 # the command's name (the C call that queued it, or the kernel)
    kind: str = ""                    # the command's kind: memcpy, memset, op, kernel, collective, ...
    queue: str = ""                   # "queue 3 of device 0"
    host: bool = False                # a synchronous call: the host thread waits for it
    task: Optional[int] = None        # kernel task id
    task_ids: str = ""                # taskIdX=..., clusterId=... of that task
    stack: tuple = ()                 # (code, line) pairs, innermost first
    thread: str = ""

    def describe(self) -> str:
        what = f"{self.access.capitalize()} access" if self.access in ("read", "write") else self.access.capitalize()
        if self.command:
            what += f" by {self.kind} '{self.command}'" if self.kind else f" of '{self.command}'"
        if self.host:
            what += " (a synchronous host call)"
        if self.queue:
            what += f" on {self.queue}"
        if self.task is not None:
            what += f", task {self.task}" + (f" ({self.task_ids})" if self.task_ids else "")
        return what

    def frames(self) -> list[str]:
        return [_where(frame) for frame in user_frames(self.stack)[:SHOWN_FRAMES]]


@dataclass
class Report:
    """One sanitizer finding. `tool` is memcheck/racecheck/initcheck/leakcheck; `kind` what was found:

    racecheck  race (two queued commands), host_race (one side a synchronous host call), kernel_race (two tasks
               of one kernel launch)
    initcheck  uninitialized_read
    leakcheck  memory_leak, handle_leak (queue, notifier, descriptor, handle, communicator; `resource` says which)
    memcheck   the fault's kind: use_after_free, out_of_bounds, negative_offset, double_free, null_pointer,
               unknown_address, not_block_start, misaligned_address, kernel_trap (in a kernel: with `task`)
    """

    tool: str
    kind: str
    message: str
    address: Optional[int] = None
    size: int = 0
    device: Optional[int] = None
    accesses: list = field(default_factory=list)
    severity: str = "error"           # "error" or "warning"
    resource: str = ""                # leakcheck: what leaked
    hazard: str = ""                  # racecheck: write-write or read-write
    task: Optional[int] = None        # memcheck / racecheck in a kernel: the (first) task
    raised: bool = False              # memcheck: the error was also raised to the caller
    count: int = 1                    # hazards / occurrences folded into this report

    def headline(self) -> str:
        where = ""
        if self.address is not None:
            where = f" at 0x{self.address:x}"
            if self.size:
                where = f" of {self.size} byte{'s' if self.size != 1 else ''}" + where
            if self.device is not None:
                where += f" on device {self.device}"
        kind = f"{self.kind} ({self.hazard})" if self.hazard else self.kind
        more = f" [{self.count} times]" if self.count > 1 else ""
        return f"{self.tool.upper()} {self.severity}: {kind}{where}: {self.message}{more}"

    def text(self) -> str:
        lines = [PREFIX + self.headline()]
        for access in self.accesses:
            lines.append(PREFIX + "    " + access.describe())
            frames = access.frames()
            for index, frame in enumerate(frames):
                label = "queued at " if access.access in ("read", "write") else "at "
                lines.append(PREFIX + "        " + (label if index == 0 else " " * len(label)) + frame)
        return "\n".join(lines)

    __str__ = text


def summary(reports: list) -> str:
    """The closing lines of a run: errors and warnings counted by tool."""
    errors = [r for r in reports if r.severity == "error"]
    warnings = [r for r in reports if r.severity != "error"]

    def by_tool(chosen) -> str:
        counts: dict[str, int] = {}
        for report in chosen:
            counts[report.tool] = counts.get(report.tool, 0) + 1
        return ", ".join(f"{tool} {n}" for tool, n in sorted(counts.items()))

    text = PREFIX + f"ERROR SUMMARY: {len(errors)} error{'s' if len(errors) != 1 else ''}"
    if errors:
        text += f" ({by_tool(errors)})"
    if warnings:
        text += f", {len(warnings)} warning{'s' if len(warnings) != 1 else ''} ({by_tool(warnings)})"
    return text


def format_reports(reports: list, title: str = "MLUSIM SANITIZER") -> str:
    """Every report, then the summary, as compute-sanitizer prints them."""
    lines = [PREFIX + title]
    lines += [report.text() for report in reports]
    lines.append(summary(reports))
    return "\n".join(lines)
