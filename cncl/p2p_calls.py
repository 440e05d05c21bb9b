"""cnclSend and cnclRecv."""
from __future__ import annotations

from mlusim.validate import as_size

from . import group, timing
from .calls import Call, Operation
from .channel import SEND_RECV, Signature
from .datatypes import dtype_arg
from .errors import api
from .p2p import RECV, SEND, Transfer, run_transfers


class TransferBatch:
    """The send/recv calls of one communicator that are queued as one command."""

    merges = True  # inside a group, with the other send/recv calls of its communicator (group.py)

    def __init__(self, call: Call, transfer: Transfer, model_us: float, reads: tuple, writes: tuple):
        self.comm, self.queue = call.comm, call.queue
        self.transfers = [transfer]
        self.model_us = model_us
        self.submission = call.take_submission(reads, writes)

    def absorb(self, other: "TransferBatch") -> None:
        """Take over another batch of the same communicator and queue (its pins too)."""
        self.transfers += other.transfers
        self.model_us += other.model_us
        self.submission.absorb(other.submission)

    def release(self) -> None:
        self.submission.release()

    def submit(self) -> None:
        transfers, comm = self.transfers, self.comm
        name = "cnclSend" if len(transfers) == 1 and transfers[0].direction == SEND else "cnclRecv"
        if len(transfers) > 1:
            name = f"cnclGroup({len(transfers)} send/recv)"
        self.submission.name = name
        Operation(comm, self.queue, name, Signature(SEND_RECV, 0, 0), self.model_us,
                  lambda ex: run_transfers(ex, transfers, comm.pool, comm.fail), self.submission).submit()


def _point_to_point(name: str, direction: str, buffer, count, data_type, peer, comm, queue) -> None:
    with Call(name, comm, queue) as call:
        dtype = dtype_arg(data_type)
        elements = as_size(count, "count")
        other = call.rank_arg(peer, "dest" if direction == SEND else "source")
        view = call.buffer(buffer, elements, dtype, "buffer")
        signature = Signature(SEND_RECV, 0, dtype.code, count=elements)
        network = call.comm.fabric.network
        across = network is not None and other in network.remote
        model = timing.collective_us(call.comm.device.spec, SEND_RECV, view.nbytes, 2, 2 if across else 1)
        spans = call.span("buffer")
        batch = TransferBatch(call, Transfer(direction, other, view, signature), model,
                              spans if direction == SEND else (), spans if direction == RECV else ())
    if group.active():
        group.defer(batch)
    else:
        batch.submit()


@api("cnclSend")
def send(buffer, count: int, data_type: int, dest: int, comm, queue) -> None:
    """cnclSend(void *buffer, size_t count, cnclDataType_t data_type, int dest, cnclComm_t comm, cnrtQueue_t queue).
    Inside cnclGroupStart/End it progresses together with the group's other sends and receives."""
    _point_to_point("cnclSend", SEND, buffer, count, data_type, dest, comm, queue)


@api("cnclRecv")
def recv(buffer, count: int, data_type: int, source: int, comm, queue) -> None:
    """cnclRecv(void *buffer, size_t count, cnclDataType_t data_type, int source, cnclComm_t comm, cnrtQueue_t queue)."""
    _point_to_point("cnclRecv", RECV, buffer, count, data_type, source, comm, queue)
