"""fallback report: which aten ops ran through the CPU fallback, how often, how much host time they took, which
intercepted op led to them and where in the user's code the first one came from.

    with torch_mlu.op_tools.fallback_report() as report:
        train_step()
    print("\\n".join(report.table_lines()))
"""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .. import fallback
from ._intercept import OpCall, Tool

#: frames in these directories are library code, not the user's call site
_LIBRARY_DIRS = (os.path.dirname(torch.__file__) + os.sep, os.path.dirname(os.path.dirname(__file__)) + os.sep)


@dataclass
class FallbackEntry:
    op: str
    calls: int = 0
    host_us: float = 0.0
    reached_from: set = field(default_factory=set)
    first_site: str = ""


def _user_site() -> str:
    """The innermost stack frame outside torch and torch_mlu ("file:line in function")."""
    for frame in reversed(traceback.extract_stack()):
        if not frame.filename.startswith(_LIBRARY_DIRS) and "<frozen" not in frame.filename:
            return f"{frame.filename}:{frame.lineno} in {frame.name}"
    return "?"


class FallbackReport(Tool):
    """Attributes each CPU fallback to the intercepted op that caused it (`entries`, `table_lines()`)."""

    order = 20

    def __init__(self, path=None):
        self.path = Path(path) if path is not None else None
        self.entries: dict[str, FallbackEntry] = {}
        #: intercepted aten calls, and those of them that ran (wholly or in part) on the CPU fallback
        self.calls = 0
        self.calls_falling_back = 0

    def native_share(self) -> float:
        """The share of the intercepted aten calls that ran natively, with no CPU fallback (1.0 with none seen)."""
        return 1.0 - self.calls_falling_back / self.calls if self.calls else 1.0

    def before(self, call: OpCall) -> None:
        call.notes["fallbacks"] = fallback.counts()

    def after(self, call: OpCall) -> None:
        self.calls += 1
        before = call.notes.get("fallbacks", {})
        after = fallback.counts()
        if after == before:
            return
        self.calls_falling_back += 1
        for name, count in after.items():
            new = count - before.get(name, 0)
            if new <= 0:
                continue
            entry = self.entries.get(name)
            if entry is None:
                entry = self.entries[name] = FallbackEntry(name, first_site=_user_site())
            entry.calls += new
            entry.host_us += call.host_us
            entry.reached_from.add(call.name)

    def table_lines(self) -> list[str]:
        summary = (f"{self.calls - self.calls_falling_back} of {self.calls} aten calls ran natively "
                   f"({100 * self.native_share():.1f}%)")
        if not self.entries:
            return [f"fallback report: no op ran on the CPU fallback; {summary}"]
        header = f"{'fell back to the CPU':<40} {'calls':>7} {'host ms':>10}  reached from / first call site"
        lines = [header, "-" * len(header)]
        for entry in sorted(self.entries.values(), key=lambda e: -e.host_us):
            lines.append(f"{entry.op[:40]:<40} {entry.calls:>7} {entry.host_us / 1e3:>10.3f}  "
                         f"{', '.join(sorted(entry.reached_from))} / {entry.first_site}")
        return lines + [summary]

    def finish(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("\n".join(self.table_lines()) + "\n")
