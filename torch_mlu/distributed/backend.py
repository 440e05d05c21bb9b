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
from cncl import world as cncl_world
from mlusim.host import sharedmem

from .. import _state
from ..ops._iter import is_non_overlapping_and_dense
from .connection import Connection
from .gathers import Gathers
from .point_to_point import PointToPoint
from .reductions import Reductions
from .work import Pending, Work, blocking_wait


def _seconds(timeout) -> float:
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    return float(timeout)


class _ThreadState(threading.local):
    """Per host thread, as cncl's groups: the (connection, Pending work) of the calls issued while coalescing (None:
    not coalescing), and the steps to run after the group was queued."""

    coalescing: list | None = None  # class defaults: a thread's first read finds them without an AttributeError
    epilogues: list | None = None


class CnclBackend(Reductions, Gathers, PointToPoint):
    """The Python side of one ProcessGroupCNCL (one group's backend for mlu tensors): connections, coalescing,
    the checks and the lifetime here; the collectives in reductions.py, gathers.py and point_to_point.py."""

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
        if size > 1 and not torch.distributed.is_initialized():
            # the default group: processes no MPI launcher started (torchrun) that span hosts become one MPI world
            try:
                cncl_world.join(store, rank, size, self.timeout)
            except cncl.CnclError as error:
                raise torch.distributed.DistBackendError(f"cncl: rank {rank} could not join the job's MPI world: "
                                                         f"{error}") from None
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
