"""The collectives: allReduce, broadcast, bcast, reduce, allGather, reduceScatter, alltoAll, alltoAllv.

Each call checks its arguments at once (a CnclError names the bad one), pins its buffers, and queues one command on
the given cnrt queue; the command runs this rank's side of the exchange (algorithms.py) in queue order. A call that
is rejected leaves no trace: the collective sequence number that keeps the ranks in step is only given when the
command is queued.
"""
from __future__ import annotations

from dataclasses import replace

from mlusim.validate import as_int_sequence, as_size, is_address

from . import algorithms, fastpath, hierarchy, netpath, timing
from .calls import Call, check_overlap
from .comm import cnclComm
from .channel import (ALL_GATHER, ALL_REDUCE, ALL_TO_ALL, ALL_TO_ALLV, BROADCAST, REDUCE, REDUCE_SCATTER,
                      Signature)
from .datatypes import dtype_arg, op_arg
from .errors import CNCL_RET_ERR_ARGUMENTS, CnclError, api
from .p2p import RECV, SEND, Transfer, run_transfers

#: The sequence number of a collective is given when its command is queued (cnclComm.submit), after every check.
UNNUMBERED = 0


def _model(call: Call, kind: int, nbytes: int) -> float:
    return timing.collective_us(call.comm.device.spec, kind, nbytes, call.comm.nrank, timing.hosts_of(call.comm))


@api("cnclAllReduce")
def allReduce(send_buffer, recv_buffer, count: int, data_type: int, reduce_op: int, comm, queue) -> None:
    """cnclAllReduce(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
    cnclReduceOp_t reduce_op, cnclComm_t comm, cnrtQueue_t queue). In place when send_buffer == recv_buffer."""
    key = fastpath.plan_key(send_buffer, recv_buffer, count, data_type, reduce_op, queue)
    if key is not None and fastpath.enabled and type(comm) is cnclComm:
        plan = comm.fast_plans.get(key)
        if plan is not None and plan.run():
            return
    with Call("cnclAllReduce", comm, queue) as call:
        dtype, op, elements = dtype_arg(data_type), op_arg(reduce_op), as_size(count, "count")
        send = call.buffer(send_buffer, elements, dtype, "send_buffer")
        recv = call.buffer(recv_buffer, elements, dtype, "recv_buffer")
        check_overlap(call, 0)
        signature = Signature(ALL_REDUCE, UNNUMBERED, dtype.code, op, count=elements)
        nrank, scratch, memory = call.comm.nrank, call.comm.scratch, call.comm.peer_memory
        lean = (fastpath.Plan if fastpath.eligible(call.comm, send) else
                netpath.Plan if netpath.eligible(call.comm.fabric.network, send.nbytes) else None)
        if key is not None and fastpath.enabled and lean is not None and fastpath.stale(call.comm, key, call.ranges):
            plan = lean(call.comm, call.queue, call.ranges["send_buffer"], call.ranges["recv_buffer"], send, recv,
                        dtype, op, elements, _model(call, ALL_REDUCE, send.nbytes))
            fastpath.remember(call.comm, key, plan)
            if plan.run():  # this call too
                call.release()
                return

        def body(ex) -> None:
            if netpath.eligible(ex.network, send.nbytes):
                netpath.all_reduce(ex, send, recv, op, dtype, scratch)
            elif hierarchy.eligible(ex, send, nrank):
                hierarchy.all_reduce(ex, send, recv, op, dtype, scratch)
            else:
                algorithms.all_reduce(ex, nrank, send, recv, op, dtype, scratch, memory)

        call.submit(signature, _model(call, ALL_REDUCE, send.nbytes), body,
                    call.span("send_buffer"), call.span("recv_buffer"))


def _broadcast(name: str, send_buffer, recv_buffer, count, data_type, root, comm, queue) -> None:
    with Call(name, comm, queue) as call:
        dtype, elements = dtype_arg(data_type), as_size(count, "count")
        origin = call.rank_arg(root, "root")
        is_root = call.comm.rank == origin
        send = call.buffer(send_buffer, elements, dtype, "send_buffer") if is_root else None
        recv = call.buffer(recv_buffer, elements, dtype, "recv_buffer")
        check_overlap(call, 0)
        signature = Signature(BROADCAST, UNNUMBERED, dtype.code, root=origin, count=elements)
        nrank, memory = call.comm.nrank, call.comm.peer_memory
        call.submit(signature, _model(call, BROADCAST, recv.nbytes),
                    lambda ex: algorithms.broadcast(ex, nrank, send, recv, origin, dtype, memory),
                    call.span("send_buffer"), call.span("recv_buffer"))


@api("cnclBroadcast")
def broadcast(send_buffer, recv_buffer, count: int, data_type: int, root: int, comm, queue) -> None:
    """cnclBroadcast(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type, int root,
    cnclComm_t comm, cnrtQueue_t queue). send_buffer is read on the root only; in place when equal to recv_buffer."""
    _broadcast("cnclBroadcast", send_buffer, recv_buffer, count, data_type, root, comm, queue)


@api("cnclBcast")
def bcast(buffer, count: int, data_type: int, root: int, comm, queue) -> None:
    """cnclBcast(void *buffer, size_t count, cnclDataType_t data_type, int root, cnclComm_t comm,
    cnrtQueue_t queue): the in-place broadcast."""
    _broadcast("cnclBcast", buffer, buffer, count, data_type, root, comm, queue)


@api("cnclReduce")
def reduce(send_buffer, recv_buffer, count: int, data_type: int, reduce_op: int, root: int, comm, queue) -> None:
    """cnclReduce(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
    cnclReduceOp_t reduce_op, int root, cnclComm_t comm, cnrtQueue_t queue). recv_buffer is used (and may be
    NULL elsewhere) on the root only; in place when send_buffer == recv_buffer."""
    with Call("cnclReduce", comm, queue) as call:
        dtype, op, elements = dtype_arg(data_type), op_arg(reduce_op), as_size(count, "count")
        origin = call.rank_arg(root, "root")
        send = call.buffer(send_buffer, elements, dtype, "send_buffer")
        recv = call.buffer(recv_buffer, elements, dtype, "recv_buffer") if call.comm.rank == origin else None
        check_overlap(call, 0)
        signature = Signature(REDUCE, UNNUMBERED, dtype.code, op, origin, elements)
        nrank, scratch, memory = call.comm.nrank, call.comm.scratch, call.comm.peer_memory
        call.submit(signature, _model(call, REDUCE, send.nbytes),
                    lambda ex: algorithms.reduce(ex, nrank, send, recv, op, origin, dtype, scratch, memory),
                    call.span("send_buffer"), call.span("recv_buffer"))


@api("cnclAllGather")
def allGather(send_buffer, recv_buffer, count: int, data_type: int, comm, queue) -> None:
    """cnclAllGather(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
    cnclComm_t comm, cnrtQueue_t queue): count per rank; recv_buffer holds nrank * count. In place when
    send_buffer == recv_buffer + rank * count."""
    with Call("cnclAllGather", comm, queue) as call:
        dtype, elements = dtype_arg(data_type), as_size(count, "count")
        nrank, rank, memory = call.comm.nrank, call.comm.rank, call.comm.peer_memory
        send = call.buffer(send_buffer, elements, dtype, "send_buffer")
        recv = call.buffer(recv_buffer, elements * nrank, dtype, "recv_buffer")
        check_overlap(call, rank * elements * dtype.size)
        signature = Signature(ALL_GATHER, UNNUMBERED, dtype.code, count=elements)
        call.submit(signature, _model(call, ALL_GATHER, recv.nbytes),
                    lambda ex: algorithms.all_gather(ex, nrank, send, recv, dtype, memory),
                    call.span("send_buffer"), call.span("recv_buffer"))


@api("cnclReduceScatter")
def reduceScatter(send_buffer, recv_buffer, count: int, data_type: int, reduce_op: int, comm, queue) -> None:
    """cnclReduceScatter(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
    cnclReduceOp_t reduce_op, cnclComm_t comm, cnrtQueue_t queue): count = elements received; send_buffer holds
    nrank * count. In place when recv_buffer == send_buffer + rank * count."""
    with Call("cnclReduceScatter", comm, queue) as call:
        dtype, op, elements = dtype_arg(data_type), op_arg(reduce_op), as_size(count, "count")
        nrank, rank, scratch, memory = call.comm.nrank, call.comm.rank, call.comm.scratch, call.comm.peer_memory
        send = call.buffer(send_buffer, elements * nrank, dtype, "send_buffer")
        recv = call.buffer(recv_buffer, elements, dtype, "recv_buffer")
        # the in-place form is recv == send + rank * count, i.e. send starts rank * count before recv
        check_overlap(call, -rank * elements * dtype.size)
        signature = Signature(REDUCE_SCATTER, UNNUMBERED, dtype.code, op, count=elements)
        call.submit(signature, _model(call, REDUCE_SCATTER, send.nbytes),
                    lambda ex: algorithms.reduce_scatter(ex, nrank, send, recv, op, dtype, scratch, memory),
                    call.span("send_buffer"), call.span("recv_buffer"))


@api("cnclAlltoAll")
def alltoAll(send_buffer, recv_buffer, count: int, data_type: int, comm, queue) -> None:
    """cnclAlltoAll(const void *send_buffer, void *recv_buffer, size_t count, cnclDataType_t data_type,
    cnclComm_t comm, cnrtQueue_t queue): block i of send_buffer (count elements) goes to rank i; both buffers
    hold nrank * count. (The reference does not guarantee the in-place form; this clone computes it correctly.)"""
    with Call("cnclAlltoAll", comm, queue) as call:
        dtype, elements = dtype_arg(data_type), as_size(count, "count")
        nrank, memory = call.comm.nrank, call.comm.peer_memory
        send = call.buffer(send_buffer, elements * nrank, dtype, "send_buffer")
        recv = call.buffer(recv_buffer, elements * nrank, dtype, "recv_buffer")
        check_overlap(call, 0)
        signature = Signature(ALL_TO_ALL, UNNUMBERED, dtype.code, count=elements)
        call.submit(signature, _model(call, ALL_TO_ALL, send.nbytes),
                    lambda ex: algorithms.all_to_all(ex, nrank, send, recv, dtype, memory),
                    call.span("send_buffer"), call.span("recv_buffer"))


@api("cnclAlltoAllv")
def alltoAllv(send_buffers, send_counts, send_types, recv_buffers, recv_counts, recv_types, comm, queue) -> None:
    """cnclAlltoAllv(const void **send_buffers, uint32_t *send_counts, cnclDataType_t *send_types,
    void **recv_buffers, uint32_t *recv_counts, cnclDataType_t *recv_types, cnclComm_t comm, cnrtQueue_t queue):
    send_buffers[i] (send_counts[i] elements of send_types[i]) goes to rank i; recv_buffers[j] receives from
    rank j. Each pair's count and type must agree between sender and receiver."""
    with Call("cnclAlltoAllv", comm, queue) as call:
        nrank = call.comm.nrank
        transfers = []
        sent = received = 0
        for direction, buffers, counts, types, prefix in ((SEND, send_buffers, send_counts, send_types, "send"),
                                                         (RECV, recv_buffers, recv_counts, recv_types, "recv")):
            pointers = _sequence(buffers, f"{prefix}_buffers", nrank)
            sizes = as_int_sequence(counts, f"{prefix}_counts", length=nrank, minimum=0)
            codes = as_int_sequence(types, f"{prefix}_types", length=nrank)
            for peer in range(nrank):
                if sizes[peer] >= 2**32:
                    raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{prefix}_counts[{peer}]': {sizes[peer]} "
                                                            f"does not fit uint32_t")
                dtype = dtype_arg(codes[peer], f"{prefix}_types[{peer}]")
                view = call.buffer(pointers[peer], sizes[peer], dtype, f"{prefix}_buffers[{peer}]")
                signature = Signature(ALL_TO_ALLV, UNNUMBERED, dtype.code, count=sizes[peer])
                transfers.append(Transfer(direction, peer, view, signature))
                if direction == SEND:
                    sent += view.nbytes
                else:
                    received += view.nbytes
        reads = call.span(*(f"send_buffers[{peer}]" for peer in range(nrank)))
        writes = call.span(*(f"recv_buffers[{peer}]" for peer in range(nrank)))
        this = call.comm
        call.submit(Signature(ALL_TO_ALLV, UNNUMBERED, 0), _model(call, ALL_TO_ALLV, max(sent, received)),
                    lambda ex: run_transfers(ex, numbered(transfers, ex.signature.seq), this.pool, this.fail),
                    reads, writes)


def numbered(transfers: list, seq: int) -> list:
    """The transfers of an alltoAllv, stamped with the sequence number its command got when it was queued."""
    return [replace(t, signature=t.signature._replace(seq=seq)) for t in transfers]


def _sequence(value, arg: str, length: int) -> list:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': expected a sequence of {length} device pointers")
    if len(value) != length:
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': expected {length} entries (one per rank), got "
                                                f"{len(value)}")
    for index, pointer in enumerate(value):
        if pointer is not None and not is_address(pointer):
            raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}[{index}]': expected a device pointer, got "
                                                    f"{type(pointer).__name__}")
    return list(value)
