"""racecheck across queues: for every block, the accesses that a later command may still race with.

Two accesses to a common byte, at least one a write, race when neither happens before the other (mlusim.sanitizer
.clocks). Each command's accesses are checked once it has run (a kernel's after its launch, with the bytes its tasks
really touched): every other access it conflicts with is in the block's list then, because a command that happens
after another starts only once that one has finished, and two commands that do not are both checked while the other
is listed. A write drops the accesses it covers and follows (they can race only with what also races with it), a
read drops the reads it covers and follows; what is left is bounded per block (the oldest go first).
"""
from __future__ import annotations

from typing import Optional

from .extents import Span, overlap

#: Accesses remembered per block; beyond this the oldest are forgotten (a race with them goes unreported).
MAX_RECORDS = 256


class Record:
    """One access in a block's list: its bytes, whether it writes, its epoch, and the command's record."""

    __slots__ = ("span", "write", "epoch", "owner")

    def __init__(self, span: Span, write: bool, epoch: tuple, owner):
        self.span = span
        self.write = write
        self.epoch = epoch
        self.owner = owner


class Conflict:
    """An access that races with the one being checked: the listed record and the bytes in common."""

    __slots__ = ("record", "first", "nbytes", "write")

    def __init__(self, record: Record, first: int, nbytes: int, write: bool):
        self.record = record
        self.first = first
        self.nbytes = nbytes
        self.write = write


class RaceShadow:
    """The access lists of every block the checked commands touched (callers hold the sanitizer's lock)."""

    def __init__(self):
        self.blocks: dict = {}

    def forget(self, block) -> None:
        self.blocks.pop(block, None)

    def clear(self) -> None:
        self.blocks.clear()

    def access(self, block, span: Span, write: bool, epoch: tuple, clock: dict, owner) -> list[Conflict]:
        """Check one access of a command (clock `clock`, epoch `epoch`) against the block's list, then list it;
        the conflicts found."""
        records = self.blocks.get(block)
        if records is None:
            records = self.blocks[block] = []
        conflicts: list[Conflict] = []
        kept: list[Record] = []
        for record in records:
            if record.owner.within(owner):  # its own, or by work it queued itself
                if not (write and span.covers(record.span)):
                    kept.append(record)
                continue
            actor, count = record.epoch
            before = clock.get(actor, 0) >= count
            if record.write or write:
                common: Optional[tuple] = overlap(record.span, span) if not before else None
                if common is not None and not before:
                    conflicts.append(Conflict(record, common[0], common[1], write))
                if write and span.covers(record.span):
                    continue  # covered: whatever races with it races with this write too (or was reported)
            elif before and span.covers(record.span):
                continue  # an earlier read of the same bytes: any write racing with it races with this read
            kept.append(record)
        kept.append(Record(span, write, epoch, owner))
        if len(kept) > MAX_RECORDS:
            kept = kept[-MAX_RECORDS:]
        self.blocks[block] = kept
        return conflicts
