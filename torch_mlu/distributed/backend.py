"""The torch.distributed backend "cncl": every collective of a process group on mlu tensors, over cncl.

torch's ProcessGroup dispatches a collective on mlu tensors to the C++ ProcessGroupCNCL (csrc/), which calls the
method of the same name here. Like NCCL's backend:
- each process group has, per device, one cncl communicator (a clique of the group's ranks, its id handed round
  through the group's c10d store) and one cncl stream (a cnrt queue from the device's stream pool), both made at
  the first collective on that device;
- a collective first makes the cncl stream wait for the current stream (a notifier, skipped when the current
  stream has nothing queued), marks its tensors as used on the cncl stream (Tensor.record_stream: the caching
  allocator does not hand their memory out again before the cncl stream got past this point), queues the cncl
  calls there, and returns a Work ending in a notifier (work.py): `wait()` makes the current stream wait for it;
- between startCoalescing and endCoalescing (batch_isend_irecv, torch's coalescing manager) the cncl calls are
  grouped (cnclGroupStart/End: sends and receives progress together, so no pattern deadlocks);
- a failed communicator (dead or timed-out peer) makes every later call of the group raise DistBackendError at
  once; the group's timeout is the communicator's (a peer that makes no progress for that long fails the call).
"""
from __future__ import annotations

import threading
from datetime import timedelta

import torch

import cncl
import cnrt
from mlusim.host import sharedmem

from .. import _state
from ..ops._iter import is_non_overlapping_and_dense
from . import reduce_ops
from .reduce_ops import Plan
from .work import Pending, Work, blocking_wait

_NOTIFIER_FLAGS = cnrt.CNRT_NOTIFIER_DISABLE_TIMING_ALL


class Connection:
    """The group's communicator and cncl stream on one device."""

    def __init__(self, device: int, comm, stream, timeout: float):
        self.device = device
        self.comm = comm
        self.stream = stream                      # torch.mlu.Stream
        self.stream_id = stream.stream_id
        self.queue = stream.mlu_stream            # its cnrt queue
        self.timeout = timeout
        self.destroyed = False
        self._awaited: dict[int, int] = {}  # queue ident -> its submitted count when it only waited for us

    def error(self) -> str | None:
        """The communicator's failure (its async error), or None."""
        error = self.comm.error
        if error is None:
            return None
        return getattr(error, "message", str(error))

    def check(self) -> None:
        failure = self.error()
        if failure is not None:
            raise torch.distributed.DistBackendError(f"cncl communicator of rank {self.comm.rank} on mlu:"
                                                     f"{self.device} failed earlier: {failure}")

    def follow(self, current_queue) -> None:
        """Later work of the cncl queue waits for everything queued on `current_queue` so far."""
        if current_queue is self.queue or self.only_waits_for_me(current_queue) or \
                cnrt.queueQuery(current_queue) == cnrt.cnrtSuccess:
            return  # nothing pending there that the cncl queue has not done before this point
        notifier = cnrt.notifierCreateWithFlags(_NOTIFIER_FLAGS)
        cnrt.placeNotifier(notifier, current_queue)
        cnrt.queueWaitNotifier(notifier, self.queue, 0)

    def only_waits_for_me(self, queue) -> bool:
        """True when all `queue` has pending is waits for this cncl queue's own notifiers (what wait() of this
        group's works queued): the usual `all_reduce(); all_reduce()` chain, where making the cncl queue wait for
        the current stream would only add a round trip between the two queues."""
        return self._awaited.get(queue.ident) == queue.submitted

    def wait_here(self, notifier, queue) -> None:
        """`queue` waits for `notifier` of this cncl queue (Work.wait); remembers whether that is all it has
        pending (only_waits_for_me)."""
        alone = self.only_waits_for_me(queue) or cnrt.queueQuery(queue) == cnrt.cnrtSuccess
        cnrt.queueWaitNotifier(notifier, queue, 0)
        if alone:
            self._awaited[queue.ident] = queue.submitted
        else:
            self._awaited.pop(queue.ident, None)

    def record(self, tensor: torch.Tensor) -> None:
        """Tensor.record_stream(cncl stream): its memory is not reused before the cncl queue got past here."""
        address = tensor.untyped_storage().data_ptr()
        if address:
            _state.runtime.record_stream(address, self.device, self.stream_id)

    def mark_end(self):
        notifier = cnrt.notifierCreateWithFlags(_NOTIFIER_FLAGS)
        cnrt.placeNotifier(notifier, self.queue)
        return notifier

    def abort(self) -> None:
        if not self.destroyed:
            self.destroyed = True
            cncl.abortComm(self.comm)

    def destroy(self) -> None:
        if not self.destroyed:
            self.destroyed = True
            cncl.destroyComms([self.comm], 1)


def _seconds(timeout) -> float:
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    return float(timeout)


class _ThreadState(threading.local):
    """Per host thread, as cncl's groups: the (connection, Pending work) of the calls issued while coalescing (None:
    not coalescing), and the steps to run after the group was queued."""

    coalescing: list | None = None  # class defaults: a thread's first read finds them without an AttributeError
    epilogues: list | None = None


class CnclBackend:
    """The Python side of one ProcessGroupCNCL (one group's backend for mlu tensors)."""

    @property
    def _coalescing(self) -> list | None:
        return self._thread.coalescing

    @_coalescing.setter
    def _coalescing(self, value: list | None) -> None:
        self._thread.coalescing = value

    @property
    def _epilogues(self) -> list:
        epilogues = self._thread.epilogues
        if epilogues is None:
            epilogues = self._thread.epilogues = []
        return epilogues

    @_epilogues.setter
    def _epilogues(self, value: list) -> None:
        self._thread.epilogues = value

    def __init__(self, store, rank: int, size: int, timeout):
        self.store = store
        self.rank = rank
        self.size = size
        self.timeout = _seconds(timeout)
        self.sequence_number = 0
        self._connections: dict[int, Connection] = {}
        self._cliques = 0
        self._lock = threading.RLock()
        self._thread = _ThreadState()
        sharedmem.enable()  # device memory allocated from now on can be mapped by the peers (zero-copy)
        blocking_wait()     # read the environment now, not at every wait()

    # ---- connections ---------------------------------------------------------------------------------------------
    def connect(self, device: int) -> Connection:
        """The connection of `device`, made on first use (every rank of the group makes its connections in the
        same order, as their first collectives come in the same order)."""
        found = self._connections.get(device)
        if found is not None:
            return found
        with self._lock:
            found = self._connections.get(device)
            if found is None:
                found = self._connections[device] = self._new_connection(device)
        return found

    def _new_connection(self, device: int) -> Connection:
        key = f"cncl_clique_{self._cliques}"
        self._cliques += 1
        if self.size == 1:
            clique = None
        elif self.rank == 0:
            clique = cncl.getCliqueId()
            self.store.set(key, bytes(clique))
        else:
            clique = cncl.cnclCliqueId.from_bytes(self.store.get(key))
        try:
            comm, = cncl.initComms(1, [device], [self.rank], self.size, clique, timeout=self.timeout)
        except cncl.CnclError as error:
            raise torch.distributed.DistBackendError(f"cncl: rank {self.rank} could not join its group of "
                                                     f"{self.size} on mlu:{device}: {error}") from None
        comm.set_timeout(self.timeout)
        return Connection(device, comm, torch.mlu.Stream(device), self.timeout)

    def _begin(self, tensors, name: str) -> Connection:
        """Check the tensors (dense mlu tensors of one device), find the connection, order its queue after the
        current stream."""
        device = None
        for tensor in tensors:
            if tensor.device.type != "mlu":
                raise ValueError(f"cncl {name}: expected mlu tensors, got a tensor on {tensor.device}")
            if not is_non_overlapping_and_dense(tensor):
                raise ValueError(f"cncl {name}: tensors must be contiguous (dense), got one of size "
                                 f"{tuple(tensor.shape)} with strides {tensor.stride()}")
            if tensor.is_sparse:
                raise ValueError(f"cncl {name}: sparse tensors are not supported")
            if device is None:
                device = tensor.device.index
            elif tensor.device.index != device:
                raise ValueError(f"cncl {name}: tensors must be on one device, got mlu:{device} and "
                                 f"{tensor.device}")
        if device is None:
            device = torch.mlu.current_device()
        connection = self.connect(device)
        connection.check()
        self.sequence_number += 1
        stream_id = _state.C.current_stream_id(device)
        connection.follow(_state.runtime.streams.queue(device, stream_id))
        return connection

    def _finish(self, connection: Connection, outputs: list, name: str, used=()) -> Work:
        if self._coalescing is None and not connection.queue.busy():
            # The cncl queue has run everything, this collective included (cncl ran a small one in this thread):
            # the work is complete, with nothing for a stream to wait for or an input to be kept alive for.
            return Work(connection, None, outputs, name, self.sequence_number)
        for tensor in used:
            connection.record(tensor)
        if self._coalescing is not None:
            work = Pending(connection, outputs, name, self.sequence_number)
            self._coalescing.append((connection, work))
            return work
        return Work(connection, connection.mark_end(), outputs, name, self.sequence_number)

    def _after(self, connection: Connection, step) -> None:
        """Run `step()` (torch ops) on the cncl stream after the cncl calls queued so far (at endCoalescing when
        coalescing, where the calls themselves are queued)."""
        if self._coalescing is not None:
            self._epilogues.append((connection, step))
            return
        with torch.mlu.stream(connection.stream):
            step()

    def _on_stream(self, connection: Connection, step):
        """`step()` (torch ops making a scratch tensor) on the cncl stream, now."""
        with torch.mlu.stream(connection.stream):
            return step()

    # ---- coalescing ----------------------------------------------------------------------------------------------
    def start_coalescing(self) -> None:
        """Backend::startCoalescing: the following calls are one group (cnclGroupStart)."""
        if self._coalescing is not None:
            raise RuntimeError("cncl: startCoalescing called twice without endCoalescing")
        cncl.groupStart()
        self._coalescing = []
        self._epilogues = []

    def end_coalescing(self) -> Work:
        """Backend::endCoalescing: queue the group (cnclGroupEnd); one Work ends with all of it."""
        if self._coalescing is None:
            raise RuntimeError("cncl: endCoalescing without startCoalescing")
        issued, epilogues = self._coalescing, self._epilogues
        self._coalescing, self._epilogues = None, []
        cncl.groupEnd()
        for connection, step in epilogues:
            with torch.mlu.stream(connection.stream):
                step()
        if not issued:
            return Work(None, None, [], "coalesced", self.sequence_number)
        ends = {}
        for connection, work in issued:
            if connection.device not in ends:
                ends[connection.device] = connection.mark_end()
            work.resolve(ends[connection.device])
        connection = issued[-1][0]
        outputs = [tensor for _, work in issued for tensor in work.outputs]
        return Work(connection, ends[connection.device], outputs, "coalesced", self.sequence_number)

    # ---- reductions ----------------------------------------------------------------------------------------------
    def _reduce(self, connection: Connection, kind: str, send: torch.Tensor, recv: torch.Tensor | None, plan: Plan,
                root: int = 0) -> None:
        """One reduction of `send` into `recv` (kind: allReduce, reduce, reduceScatter) by `plan`."""
        comm, queue = connection.comm, connection.queue
        if plan.premul is not None:
            factor = plan.premul
            send = self._on_stream(connection, lambda: send * factor)
            connection.record(send)
        if plan.emulated:
            self._reduce_by_gathering(connection, kind, send, recv, plan, root)
        else:
            source = plan.view(send) if plan.view else send
            target = plan.view(recv) if plan.view and recv is not None else recv
            count = source.numel()
            target_ptr = target.data_ptr() if target is not None else 0
            if kind == "allReduce":
                cncl.allReduce(source.data_ptr(), target_ptr, count, plan.cncl_type, plan.cncl_op, comm, queue)
            elif kind == "reduce":
                cncl.reduce(source.data_ptr(), target_ptr, count, plan.cncl_type, plan.cncl_op, root, comm, queue)
            else:
                cncl.reduceScatter(source.data_ptr(), target_ptr, count // self.size, plan.cncl_type, plan.cncl_op,
                                   comm, queue)
        if plan.average and recv is not None:
            self._average(connection, recv)

    def _average(self, connection: Connection, recv: torch.Tensor) -> None:
        """AVG: the sum in `recv` divided by the group size on the cncl stream (integers: truncating)."""
        size = self.size
        if recv.dtype.is_floating_point or recv.dtype.is_complex:
            self._after(connection, lambda: recv.div_(size))
        else:
            self._after(connection, lambda: recv.div_(size, rounding_mode="trunc"))

    def _reduce_by_gathering(self, connection: Connection, kind: str, send: torch.Tensor, recv, plan: Plan,
                             root: int) -> None:
        """What cncl cannot reduce: gather every rank's input, combine in rank order on the cncl stream."""
        source = plan.view(send) if plan.view else send
        gathered = self._on_stream(connection, lambda: torch.empty((self.size,) + tuple(source.shape),
                                                                    dtype=source.dtype, device=source.device))
        code, count = reduce_ops.movement_type(source)
        cncl.allGather(source.contiguous().data_ptr(), gathered.data_ptr(), count, code, connection.comm,
                       connection.queue)
        rank, size = self.rank, self.size

        def combine() -> None:
            result = reduce_ops.combine_in_rank_order(gathered, plan.op)
            if recv is None:
                return
            target = plan.view(recv) if plan.view else recv
            if kind == "reduceScatter":
                chunk = result.reshape(size, -1)[rank]
                target.copy_(chunk.view(target.shape))
            else:
                target.copy_(result)

        if kind != "reduce" or self.rank == root:
            self._after(connection, combine)

    def allreduce(self, tensors: list, reduce_op: tuple) -> Work:
        """ProcessGroup.allreduce (dist.all_reduce): in place on each tensor."""
        connection = self._begin(tensors, "allreduce")
        op, factor = reduce_op
        for tensor in tensors:
            self._reduce(connection, "allReduce", tensor, tensor, reduce_ops.plan(op, factor, tensor.dtype))
        return self._finish(connection, tensors, "allreduce", tensors)

    def allreduce_dense(self, tensor: torch.Tensor, device: int, stream_id: int, op: int) -> Work:
        """ProcessGroup.allreduce of one tensor, which the C++ side found dense and on mlu `device`, whose current
        stream it read (`stream_id`), with a ReduceOp other than PREMUL_SUM: the steps of `allreduce` without its
        checks of the tensor list, for the common call of small tensors, where those checks would cost as much as
        the collective."""
        connection = self._connections.get(device)
        plan = reduce_ops.plan(op, None, tensor.dtype)
        if connection is None or plan.emulated or plan.view is not None or self._thread.coalescing is not None:
            return self.allreduce([tensor], (op, None))
        connection.check()
        self.sequence_number += 1
        connection.follow(_state.runtime.streams.queue(device, stream_id))
        address = tensor.data_ptr()
        cncl.allReduce(address, address, tensor.numel(), plan.cncl_type, plan.cncl_op, connection.comm,
                       connection.queue)
        if plan.average:
            self._average(connection, tensor)
        return self._finish(connection, [tensor], "allreduce", (tensor,))

    def allreduce_coalesced(self, tensors: list, reduce_op: tuple) -> Work:
        """ProcessGroup.allreduce_coalesced: the all-reduces of several tensors as one group."""
        return self._coalesced(lambda: [self.allreduce([tensor], reduce_op) for tensor in tensors], tensors)

    def reduce(self, tensors: list, reduce_op: tuple, root: int, root_tensor: int) -> Work:
        """ProcessGroup.reduce (dist.reduce): the result lands in the root's tensor."""
        connection = self._begin(tensors, "reduce")
        self._check_rank(root, "root")
        op, factor = reduce_op
        for tensor in tensors:
            target = tensor if self.rank == root else None
            self._reduce(connection, "reduce", tensor, target, reduce_ops.plan(op, factor, tensor.dtype), root)
        return self._finish(connection, tensors, "reduce", tensors)

    def reduce_scatter_tensor(self, output: torch.Tensor, input: torch.Tensor, reduce_op: tuple) -> Work:
        """ProcessGroup._reduce_scatter_base (dist.reduce_scatter_tensor): chunk `rank` of the reduction of every
        rank's input."""
        connection = self._begin([output, input], "reduce_scatter_tensor")
        if input.numel() != output.numel() * self.size:
            raise ValueError(f"cncl reduce_scatter_tensor: the input must have {self.size} times the output's "
                             f"{output.numel()} elements, got {input.numel()}")
        self._check_same_dtype(output, input, "reduce_scatter_tensor")
        op, factor = reduce_op
        self._reduce(connection, "reduceScatter", input, output, reduce_ops.plan(op, factor, input.dtype))
        return self._finish(connection, [output], "reduce_scatter_tensor", [output, input])

    def reduce_scatter_tensor_coalesced(self, outputs: list, inputs: list, reduce_op: tuple) -> Work:
        return self._coalesced(lambda: [self.reduce_scatter_tensor(o, i, reduce_op)
                                        for o, i in zip(outputs, inputs)], outputs)

    def reduce_scatter(self, outputs: list, input_lists: list, reduce_op: tuple) -> Work:
        """ProcessGroup.reduce_scatter (dist.reduce_scatter): output = the reduction of input_list[rank] of
        every rank."""
        flat = [tensor for inputs in input_lists for tensor in inputs]
        connection = self._begin(list(outputs) + flat, "reduce_scatter")
        op, factor = reduce_op
        for output, inputs in zip(outputs, input_lists):
            self._check_list(inputs, output, "reduce_scatter", "input_list")
            joined = self._adjacent(inputs)
            if joined is None:
                joined = self._on_stream(connection, lambda: torch.cat([t.reshape(-1) for t in inputs]))
                connection.record(joined)
            self._reduce(connection, "reduceScatter", joined, output, reduce_ops.plan(op, factor, output.dtype))
        return self._finish(connection, list(outputs), "reduce_scatter", list(outputs) + flat)

    # ---- data movement -------------------------------------------------------------------------------------------
    def broadcast(self, tensors: list, root: int, root_tensor: int) -> Work:
        """ProcessGroup.broadcast (dist.broadcast): the root's tensor into every rank's."""
        connection = self._begin(tensors, "broadcast")
        self._check_rank(root, "root")
        for tensor in tensors:
            code, count = reduce_ops.movement_type(tensor)
            cncl.bcast(tensor.data_ptr(), count, code, root, connection.comm, connection.queue)
        return self._finish(connection, tensors, "broadcast", tensors)

    def allgather_into_tensor(self, output: torch.Tensor, input: torch.Tensor) -> Work:
        """ProcessGroup._allgather_base (dist.all_gather_into_tensor): every rank's input, in rank order."""
        connection = self._begin([output, input], "all_gather_into_tensor")
        if output.numel() != input.numel() * self.size:
            raise ValueError(f"cncl all_gather_into_tensor: the output must have {self.size} times the input's "
                             f"{input.numel()} elements, got {output.numel()}")
        self._check_same_dtype(output, input, "all_gather_into_tensor")
        code, count = reduce_ops.movement_type(input)
        cncl.allGather(input.data_ptr(), output.data_ptr(), count, code, connection.comm, connection.queue)
        return self._finish(connection, [output], "all_gather_into_tensor", [output, input])

    def allgather_into_tensor_coalesced(self, outputs: list, inputs: list) -> Work:
        return self._coalesced(lambda: [self.allgather_into_tensor(o, i) for o, i in zip(outputs, inputs)], outputs)

    def allgather(self, output_lists: list, inputs: list) -> Work:
        """ProcessGroup.allgather (dist.all_gather): output_list[r] = rank r's input."""
        flat = [tensor for outputs in output_lists for tensor in outputs]
        connection = self._begin(flat + list(inputs), "all_gather")
        for outputs, input in zip(output_lists, inputs):
            self._check_list(outputs, input, "all_gather", "output_list")
            target = joined = self._adjacent(outputs)
            if joined is None:
                target = self._on_stream(connection, lambda: torch.empty(
                    (self.size * input.numel(),), dtype=input.dtype, device=input.device))
                connection.record(target)
            code, count = reduce_ops.movement_type(input)
            cncl.allGather(input.contiguous().data_ptr(), target.data_ptr(), count, code, connection.comm,
                           connection.queue)
            if joined is None:
                self._after(connection, self._scatter_copy(target, outputs))
        return self._finish(connection, flat, "all_gather", flat + list(inputs))

    def allgather_coalesced(self, output_lists: list, inputs: list) -> Work:
        return self._coalesced(lambda: [self.allgather([outputs], [input])
                                        for outputs, input in zip(output_lists, inputs)],
                               [t for outputs in output_lists for t in outputs])

    def gather(self, output_lists: list, inputs: list, root: int) -> Work:
        """ProcessGroup.gather (dist.gather): the root's output_list[r] = rank r's input (grouped send/recv)."""
        flat = [tensor for outputs in output_lists for tensor in outputs]
        connection = self._begin(flat + list(inputs), "gather")
        self._check_rank(root, "root")
        input, = inputs
        comm, queue = connection.comm, connection.queue
        cncl.groupStart()
        try:
            if self.rank == root:
                outputs, = output_lists
                self._check_list(outputs, input, "gather", "gather_list")
                for peer, output in enumerate(outputs):
                    if peer == root:
                        continue
                    code, count = reduce_ops.movement_type(output)
                    cncl.recv(output.data_ptr(), count, code, peer, comm, queue)
            else:
                code, count = reduce_ops.movement_type(input)
                cncl.send(input.data_ptr(), count, code, root, comm, queue)
        finally:
            cncl.groupEnd()
        if self.rank == root:
            own = output_lists[0][root]
            self._after(connection, lambda: own.copy_(input))
        return self._finish(connection, flat, "gather", flat + list(inputs))

    def scatter(self, outputs: list, input_lists: list, root: int) -> Work:
        """ProcessGroup.scatter (dist.scatter): rank r's output = the root's scatter_list[r]."""
        flat = [tensor for inputs in input_lists for tensor in inputs]
        connection = self._begin(list(outputs) + flat, "scatter")
        self._check_rank(root, "root")
        output, = outputs
        comm, queue = connection.comm, connection.queue
        cncl.groupStart()
        try:
            if self.rank == root:
                inputs, = input_lists
                self._check_list(inputs, output, "scatter", "scatter_list")
                for peer, input in enumerate(inputs):
                    if peer != root:
                        code, count = reduce_ops.movement_type(input)
                        cncl.send(input.contiguous().data_ptr(), count, code, peer, comm, queue)
            else:
                code, count = reduce_ops.movement_type(output)
                cncl.recv(output.data_ptr(), count, code, root, comm, queue)
        finally:
            cncl.groupEnd()
        if self.rank == root:
            own = input_lists[0][root]
            self._after(connection, lambda: output.copy_(own))
        return self._finish(connection, [output], "scatter", [output] + flat)

    def alltoall_base(self, output: torch.Tensor, input: torch.Tensor, output_splits: list,
                      input_splits: list) -> Work:
        """ProcessGroup.alltoall_base (dist.all_to_all_single): the input's block r (input_splits[r] rows, or an
        equal share) goes to rank r; the output's block r (output_splits[r] rows) comes from rank r."""
        connection = self._begin([output, input], "all_to_all_single")
        self._check_same_dtype(output, input, "all_to_all_single")
        if not output_splits and not input_splits and input.numel() % self.size == 0 \
                and output.numel() == input.numel():
            code, count = reduce_ops.movement_type(input)
            cncl.alltoAll(input.data_ptr(), output.data_ptr(), count // self.size, code, connection.comm,
                          connection.queue)
        else:
            sends = self._blocks(input, input_splits, "input_split_sizes")
            receives = self._blocks(output, output_splits, "output_split_sizes")
            self._exchange(connection, sends, receives, input.element_size())
        return self._finish(connection, [output], "all_to_all_single", [output, input])

    def alltoall(self, outputs: list, inputs: list) -> Work:
        """ProcessGroup.alltoall (dist.all_to_all): inputs[r] goes to rank r, outputs[r] comes from rank r."""
        connection = self._begin(list(outputs) + list(inputs), "all_to_all")
        if len(outputs) != self.size or len(inputs) != self.size:
            raise ValueError(f"cncl all_to_all: expected {self.size} input and output tensors, got "
                             f"{len(inputs)} and {len(outputs)}")
        sends = [(t.data_ptr(), t.numel() * t.element_size()) for t in inputs]
        receives = [(t.data_ptr(), t.numel() * t.element_size()) for t in outputs]
        self._exchange(connection, sends, receives, 1)
        return self._finish(connection, list(outputs), "all_to_all", list(outputs) + list(inputs))

    def _blocks(self, tensor: torch.Tensor, splits: list, arg: str) -> list[tuple[int, int]]:
        """(address, nbytes) of each rank's block of rows of `tensor`."""
        rows = tensor.shape[0] if tensor.dim() else 1
        if not splits:
            if rows % self.size:
                raise ValueError(f"cncl all_to_all_single: {rows} rows do not split equally among {self.size} "
                                 f"ranks; pass {arg}")
            splits = [rows // self.size] * self.size
        if len(splits) != self.size or sum(splits) != rows or min(splits) < 0:
            raise ValueError(f"cncl all_to_all_single: {arg} {list(splits)} must be {self.size} sizes adding up to "
                             f"the {rows} rows")
        row_bytes = tensor.numel() // max(rows, 1) * tensor.element_size()
        blocks, offset = [], 0
        for split in splits:
            blocks.append((tensor.data_ptr() + offset * row_bytes, split * row_bytes))
            offset += split
        return blocks

    def _exchange(self, connection: Connection, sends: list, receives: list, unit: int) -> None:
        """Every rank sends sends[r] = (address, nbytes) to rank r and receives receives[r] from it (one grouped
        command: all directions progress together)."""
        comm, queue = connection.comm, connection.queue
        cncl.groupStart()
        try:
            for peer in range(self.size):
                address, nbytes = sends[peer]
                cncl.send(address if nbytes else 0, nbytes, cncl.cnclUint8, peer, comm, queue)
                address, nbytes = receives[peer]
                cncl.recv(address if nbytes else 0, nbytes, cncl.cnclUint8, peer, comm, queue)
        finally:
            cncl.groupEnd()

    # ---- point to point ------------------------------------------------------------------------------------------
    def send(self, tensors: list, dst: int, tag: int) -> Work:
        """ProcessGroup.send (dist.send / isend)."""
        connection = self._begin(tensors, "send")
        self._check_rank(dst, "dst")
        tensor, = tensors
        code, count = reduce_ops.movement_type(tensor)
        cncl.send(tensor.data_ptr(), count, code, dst, connection.comm, connection.queue)
        return self._finish(connection, list(tensors), "send", tensors)

    def recv(self, tensors: list, src: int, tag: int) -> Work:
        """ProcessGroup.recv (dist.recv / irecv)."""
        connection = self._begin(tensors, "recv")
        self._check_rank(src, "src")
        tensor, = tensors
        code, count = reduce_ops.movement_type(tensor)
        cncl.recv(tensor.data_ptr(), count, code, src, connection.comm, connection.queue)
        work = self._finish(connection, list(tensors), "recv", tensors)
        work._source = src
        return work

    def recv_anysource(self, tensors: list, tag: int) -> Work:
        raise RuntimeError("cncl does not support receiving from any source (recv with src=None); name the source")

    def barrier(self, device_ids: list, device) -> Work:
        """ProcessGroup.barrier (dist.barrier): an all-reduce of one element; its wait() blocks the host."""
        if device is None:
            device = device_ids[0] if device_ids else torch.mlu.current_device()
        with torch.mlu.device(device):
            flag = torch.zeros(1, device=f"mlu:{device}")
        work = self.allreduce([flag], (reduce_ops.SUM, None))
        work.name = "barrier"
        return _BlockingWork(work)

    # ---- helpers -------------------------------------------------------------------------------------------------
    def _coalesced(self, issue, outputs: list) -> Work:
        if self._coalescing is not None:  # already inside a group: the calls join it
            works = issue()
            return works[-1] if works else Work(None, None, outputs, "coalesced", self.sequence_number)
        self.start_coalescing()
        try:
            issue()
        except BaseException:
            self._coalescing = None
            self._epilogues = []
            try:
                cncl.groupEnd()
            except cncl.CnclError:
                pass
            raise
        return self.end_coalescing()

    def _check_rank(self, rank: int, arg: str) -> None:
        if not 0 <= rank < self.size:
            raise ValueError(f"cncl: {arg} rank {rank} is outside the group's ranks 0..{self.size - 1}")

    def _check_list(self, tensors: list, like: torch.Tensor, name: str, arg: str) -> None:
        if len(tensors) != self.size:
            raise ValueError(f"cncl {name}: {arg} must hold {self.size} tensors (one per rank), got {len(tensors)}")
        for tensor in tensors:
            if tensor.numel() != like.numel() or tensor.dtype != like.dtype:
                raise ValueError(f"cncl {name}: every tensor of {arg} must have {like.numel()} elements of "
                                 f"{like.dtype}, got {tensor.numel()} of {tensor.dtype}")

    @staticmethod
    def _check_same_dtype(output: torch.Tensor, input: torch.Tensor, name: str) -> None:
        if output.dtype != input.dtype:
            raise ValueError(f"cncl {name}: input ({input.dtype}) and output ({output.dtype}) dtypes differ")
        if not output.is_contiguous() or not input.is_contiguous():
            raise ValueError(f"cncl {name}: input and output must be contiguous")

    @staticmethod
    def _adjacent(tensors: list) -> torch.Tensor | None:
        """A flat view over `tensors` when they are contiguous pieces of one storage, back to back (the usual
        `list(big.chunk(n))`), else None."""
        if not tensors or not all(t.is_contiguous() for t in tensors):
            return None
        first = tensors[0]
        step = first.numel() * first.element_size()
        storage = first.untyped_storage().data_ptr()
        for index, tensor in enumerate(tensors):
            if tensor.untyped_storage().data_ptr() != storage or \
                    tensor.data_ptr() != first.data_ptr() + index * step:
                return None
        total = first.numel() * len(tensors)
        return first.new_empty(0).set_(first.untyped_storage(), first.storage_offset(), (total,))

    @staticmethod
    def _scatter_copy(flat: torch.Tensor, outputs: list):
        def copy() -> None:
            count = flat.numel() // len(outputs)
            for index, output in enumerate(outputs):
                output.copy_(flat[index * count:(index + 1) * count].view(output.shape))
        return copy

    # ---- lifetime ------------------------------------------------------------------------------------------------
    def set_timeout(self, timeout_ms: int) -> None:
        self.timeout = timeout_ms / 1000
        for connection in self._connections.values():
            connection.timeout = self.timeout
            connection.comm.set_timeout(self.timeout)

    def wait_for_pending_works(self) -> None:
        for connection in list(self._connections.values()):
            cnrt.queueSync(connection.queue)

    def abort(self) -> None:
        """Backend::abort: fail every waiting operation of the group (and the peers'), free the communicators."""
        for connection in list(self._connections.values()):
            connection.abort()
        self._connections.clear()

    def shutdown(self) -> None:
        """Backend::shutdown (destroy_process_group): free the communicators once their queued work ended."""
        connections, self._connections = list(self._connections.values()), {}
        for connection in connections:
            connection.destroy()


class _BlockingWork(Work):
    """A Work whose wait() blocks the host (the barrier's, as NCCL's)."""

    __slots__ = ()

    def __init__(self, work: Work):
        super().__init__(work.connection, work.notifier, work.outputs, work.name, work.sequence_number)

    def wait(self, timeout_ms: int = 0) -> bool:
        self._raise_if_failed()
        if self.notifier is not None:
            self._host_wait(timeout_ms / 1000 if timeout_ms > 0 else self.connection.timeout)
        return True
