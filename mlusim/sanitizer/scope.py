"""Where the sanitizer's reports go: a Scope (one per open `mlusim.sanitizer.scope()`, and one for the process)
keeps them, counting a report that repeats an earlier one (same kind, same lines of code) instead of keeping it
again; SanitizerFault raises one at once ("raise at the first error")."""
from __future__ import annotations

from typing import Optional

from mlusim.errors import Fault

from .report import Report, format_reports, user_frames


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
