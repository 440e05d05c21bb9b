"""What the sanitizer knows of one queued command: who queued it (queue, stack, host clock) and its happens-before
clock once it starts (not the command itself: that holds its work's buffers)."""
from __future__ import annotations

from typing import Optional

from mlusim.command import Kind

from .report import Access


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
