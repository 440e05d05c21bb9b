"""The one way work reaches a queue: a `Submission` builds every queued Command.

Every memcpy, memset, cnnl op, BANG launch, collective, host function and asynchronous free goes through it:

    with Submission(Kind.MEMCPY, "cnrtMemcpyAsync") as submission:
        dst = submission.write(dst_address, nbytes, "dst")      # resolved, checked and pinned at the call
        src = submission.read(src_address, nbytes, "src")
        submission.submit(queue, work, model_us=...)           # one fully formed Command; the queue owns the pins

The device ranges a command touches are resolved (a bad pointer fails at the call, naming its argument), pinned (a
free waits until the command ran) and recorded with their access, so that the command's read and write sets are
exact: they drive tracing, the cost model's byte counts and the sanitizer. If anything fails before `enqueue`, the
`with` block releases the pins taken so far; a queue that refuses the command releases them too. `Queue.submit`
decides where the command runs (docs/runtime.md); `command()` alone builds one for a turn's hand-over
(mlusim.turn).

An access to a strided tensor or a pitched 2-D region is recorded as a `StridedExtent`: its (address, nbytes) span
plus the exact element layout, so that the bytes between its elements are not counted as accessed.
"""
from __future__ import annotations

from typing import Callable, Optional

from .command import Command, Kind
from .queue import Queue
from .transfer import DeviceRange, acquire


class Access:
    """How a command uses a device range: bit flags (plain ints: flag enums cost a µs per test on this path)."""

    NONE = 0
    READ = 1
    WRITE = 2
    READ_WRITE = 3


class StridedExtent(tuple):
    """(address, nbytes) of a span whose accessed bytes are elements of `itemsize` bytes at `dims` x `strides`
    (strides in elements, >= 0) from `address`; the bytes between them are not accessed. Compares as its tuple."""

    def __new__(cls, address: int, nbytes: int, itemsize: int, dims: tuple, strides: tuple):
        extent = super().__new__(cls, (address, nbytes))
        extent.itemsize = int(itemsize)
        extent.dims = tuple(int(d) for d in dims)
        extent.strides = tuple(int(s) for s in strides)
        return extent

    def __reduce__(self):
        return StridedExtent, (self[0], self[1], self.itemsize, self.dims, self.strides)


Layout = Optional[tuple]  # (itemsize, dims, strides) of a strided access, None for a dense one


class Submission:
    """The device ranges, read/write sets and pins of one command being built."""

    __slots__ = ("kind", "name", "spans", "reads", "writes")

    def __init__(self, kind: Kind, name: str):
        self.kind = kind if kind.__class__ is Kind else Kind(kind)
        self.name = name
        self.spans: list[DeviceRange] = []
        self.reads: list[tuple[int, int]] = []
        self.writes: list[tuple[int, int]] = []

    def __enter__(self) -> "Submission":
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is not None:
            self.release()
        return False

    # ---- device ranges --------------------------------------------------------------------------------------------

    def read(self, address: int, nbytes: int, arg: str, layout: Layout = None) -> DeviceRange:
        """Resolve and pin [address, address + nbytes), which the command reads (only the elements of `layout`,
        (itemsize, dims, strides), when given)."""
        return self.hold(acquire(address, nbytes, arg), Access.READ, layout)

    def write(self, address: int, nbytes: int, arg: str, layout: Layout = None) -> DeviceRange:
        """Resolve and pin [address, address + nbytes), which the command writes (only the elements of `layout`)."""
        return self.hold(acquire(address, nbytes, arg), Access.WRITE, layout)

    def read_write(self, address: int, nbytes: int, arg: str, layout: Layout = None) -> DeviceRange:
        """Resolve and pin [address, address + nbytes), which the command reads and writes."""
        return self.hold(acquire(address, nbytes, arg), Access.READ_WRITE, layout)

    def hold(self, span: DeviceRange, access: int, layout: Layout = None) -> DeviceRange:
        """Take over a range pinned elsewhere (e.g. a strided tensor's span) and record its access."""
        self.spans.append(span)
        self.record(span, access, layout)
        return span

    def pin(self, span: DeviceRange, access: int) -> DeviceRange:
        """Pin again a range resolved earlier (by a plan that outlives its calls) and record its access: its block
        must still be live, or the command would touch freed memory."""
        span.block.space.pin(span.block)
        return self.hold(span, access)

    def record(self, span: DeviceRange, access: int, layout: Layout = None) -> None:
        """Record one more access to a range already held (an output that is also read, say); `layout`
        (itemsize, dims, strides in elements) names the elements of a strided access."""
        if span.nbytes == 0:
            return
        extent = (span.address, span.nbytes) if layout is None else StridedExtent(span.address, span.nbytes,
                                                                                   *layout)
        if access & Access.READ:
            self.reads.append(extent)
        if access & Access.WRITE:
            self.writes.append(extent)

    def record_extents(self, reads=(), writes=()) -> None:
        """Record accesses given as (address, nbytes) extents of ranges already held."""
        self.reads.extend(reads)
        self.writes.extend(writes)

    def absorb(self, other: "Submission") -> None:
        """Take over another submission's ranges, pins and accesses (calls merged into one command)."""
        self.spans += other.spans
        self.reads += other.reads
        self.writes += other.writes
        other.spans, other.reads, other.writes = [], [], []

    def release(self) -> None:
        """Give up the pins of a command that will not be queued."""
        spans, self.spans = self.spans, []
        for span in spans:
            span.block.space.unpin(span.block)

    # ---- the command ----------------------------------------------------------------------------------------------

    def command(self, run: Optional[Callable[[], Optional[float]]], model_us: float = 0.0,
                info: Optional[dict] = None, nbytes: int = -1) -> Command:
        """The fully formed Command; its pins move into it (the queue releases them when it has run). `nbytes`: the
        bytes the work moves, when known (the queue runs a small op in the calling thread)."""
        blocks = tuple([span.block for span in self.spans])
        self.spans = []
        return Command(self.kind, self.name, run, reads=tuple(self.reads), writes=tuple(self.writes),
                       model_us=model_us, blocks=blocks, info=info, nbytes=nbytes)

    def submit(self, queue: Queue, run: Optional[Callable[[], Optional[float]]], model_us: float = 0.0,
               info: Optional[dict] = None, nbytes: int = -1) -> Command:
        """Build the Command and submit it to `queue` (Queue.submit: run at once in blocking mode). `run()` does the
        work and may return the modelled µs when they are known only once it ran."""
        command = self.command(run, model_us, info, nbytes)
        queue.submit(command)
        return command
