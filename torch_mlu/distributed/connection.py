"""A process group's communicator and cncl stream on one device (`Connection`): made at the group's first
collective there, failing every later call once the communicator failed, ordering the cncl stream after the
current stream, and marking the tensors a collective used on it (Tensor.record_stream)."""
from __future__ import annotations

import torch

import cncl
import cnrt

from .. import _state

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
