"""What every communication call does before its work is queued: check the communicator, queue and buffers, pin
the buffers, and queue (through mlusim.submit, the one builder of queued work) the command whose work is this
rank's side of the exchange."""
from __future__ import annotations

from typing import Callable

import numpy as np

from cnrt.queues import queue_arg
from mlusim.command import current_command
from mlusim.queue import Queue
from mlusim.submit import Access, Kind, Submission
from mlusim.transfer import acquire
from mlusim.validate import as_int, is_address

from . import group, timing
from .channel import SEND_RECV, Exchange, Signature
from .comm import cnclComm, comm_arg
from .datatypes import DataType
from .errors import CNCL_RET_ERR_ARGUMENTS, CNCL_RET_ERR_NULL_POINTER, CnclError


def _argument_error(arg: str, message: str) -> CnclError:
    return CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': {message}")


class Call:
    """One call's checked arguments and pinned buffers. Use as a context manager: if anything fails before the
    command is queued, the pins are released."""

    def __init__(self, name: str, comm, queue):
        self.name = name
        self.comm: cnclComm = comm_arg(comm)
        self.comm.raise_if_failed()  # after a failure, a new call fails at once (CNCL_RET_ASYNC_ERROR)
        self.queue: Queue = self._queue(queue)
        self.submission = Submission(Kind.COLLECTIVE, name)
        self.spans: dict[str, tuple] = {}
        self.ranges: dict = {}  # argument -> its pinned DeviceRange

    def _queue(self, queue) -> Queue:
        if queue is None:
            return self.comm.device.default_queue
        target = queue_arg(queue)
        if target.device is not self.comm.device:
            raise _argument_error("queue", f"{target.name} is not on device {self.comm.device.index}, the device "
                                           f"of the communicator")
        return target

    def __enter__(self) -> "Call":
        return self

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            self.release()
        return False

    def release(self) -> None:
        self.submission.release()

    def rank_arg(self, value, arg: str) -> int:
        rank = as_int(value, arg)
        if not 0 <= rank < self.comm.nrank:
            raise _argument_error(arg, f"rank {rank} is outside the clique's ranks 0..{self.comm.nrank - 1}")
        return rank

    def buffer(self, pointer, count: int, dtype: DataType, arg: str) -> np.ndarray:
        """A typed view of `count` elements of device memory at `pointer`, pinned until the command ran.
        A zero count needs no memory (the pointer may be NULL)."""
        if count == 0:
            return np.empty(0, dtype.storage)
        if pointer is None or (is_address(pointer) and int(pointer) == 0):
            raise CnclError(CNCL_RET_ERR_NULL_POINTER, f"argument '{arg}': null device pointer")
        if not is_address(pointer):
            raise _argument_error(arg, f"expected a device pointer (int), got {type(pointer).__name__}")
        held = self.submission.hold(acquire(int(pointer), count * dtype.size, arg), Access.NONE)  # access: at submit
        self.spans[arg] = ((held.address, held.nbytes),)
        self.ranges[arg] = held
        if held.device is not self.comm.device:
            raise _argument_error(arg, f"0x{int(pointer):x} is on device {held.device.index}, the communicator "
                                       f"is on device {self.comm.device.index}")
        return held.typed(dtype.storage)

    def span(self, *args: str) -> tuple:
        """The device (address, nbytes) ranges of the named buffer arguments, for a Command's reads/writes."""
        return tuple(item for arg in args for item in self.spans.get(arg, ()))

    def take_submission(self, reads: tuple = (), writes: tuple = ()) -> Submission:
        """Hand the pins over, with the accesses of the buffers (to the queued command, which releases them)."""
        submission, self.submission = self.submission, Submission(Kind.COLLECTIVE, self.name)
        submission.record_extents(reads, writes)
        return submission

    def submit(self, signature: Signature, model_us: float, body: Callable[[Exchange], None],
               reads: tuple = (), writes: tuple = ()) -> None:
        """Queue this call's command now, or at cnclGroupEnd inside a group."""
        operation = Operation(self.comm, self.queue, self.name, signature, model_us, body,
                              self.take_submission(reads, writes))
        if group.active():
            group.defer(operation)
        else:
            operation.submit()


class Operation:
    """A checked call ready to be queued: its submission (pins, read/write sets) and its rank-side body."""

    def __init__(self, comm: cnclComm, queue: Queue, name: str, signature: Signature, model_us: float,
                 body: Callable[[Exchange], None], submission: Submission):
        self.comm, self.queue, self.name = comm, queue, name
        self.signature, self.model_us, self.body = signature, model_us, body
        self.submission = submission

    def release(self) -> None:
        """Give up the pins of an operation that will not be queued."""
        self.submission.release()

    def submit(self) -> None:
        """Queue the command. Its duration on the device clock is the modelled time plus the time it waited for
        the latest peer's clock (peers stamp their clock on their messages)."""
        body, model_us, submission = self.body, self.model_us, self.submission

        def enqueue(run, seq: int) -> None:
            signature = self.signature._replace(seq=seq) if seq else self.signature

            def work() -> float:
                started = current_command().model_start
                latest = run(body, signature, started)
                return max(latest - started, 0.0) + model_us

            info = {"nrank": self.comm.nrank, "rank": self.comm.rank}
            if self.comm.fabric.network is not None:  # the trace shows which link the modelled time is for
                info["hosts"] = timing.hosts_of(self.comm)
            if signature.seq:  # a collective: its ranks synchronise (the sanitizer orders what follows after it)
                info["rendezvous"] = (id(self.comm.clique), signature.seq)
                info["local_ranks"] = len(self.comm.clique.local)
            submission.submit(self.queue, work, model_us, info=info)

        # a queue that refuses the command releases its pins; collectives are numbered when they are queued
        self.comm.submit(self.queue, enqueue, collective=self.signature.kind != SEND_RECV)


def check_overlap(call: Call, in_place_offset: int) -> None:
    """send_buffer and recv_buffer may overlap only in the documented in-place form: send_buffer ==
    recv_buffer + in_place_offset (bytes)."""
    if not call.spans.get("send_buffer") or not call.spans.get("recv_buffer"):
        return
    (send, send_bytes), = call.spans["send_buffer"]
    (recv, recv_bytes), = call.spans["recv_buffer"]
    if send + send_bytes <= recv or recv + recv_bytes <= send or send == recv + in_place_offset:
        return
    raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"{call.name}: send_buffer and recv_buffer overlap but are not the in-place "
                                            f"form of the call")
