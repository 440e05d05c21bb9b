"""The Work of one cncl collective (what `dist.all_reduce(..., async_op=True)` returns), behind the C++ WorkCNCL.

A collective runs on its process group's cncl queue and ends with a notifier placed there. Like NCCL's work:
- `wait()` makes the *current stream* wait for that notifier (cnrtQueueWaitNotifier) and returns at once; with a
  timeout, or with TORCH_CNCL_BLOCKING_WAIT=1, it blocks the host until the work is done (raising on failure or
  on the timeout);
- `get_future()` is a device-aware torch Future completed on the cncl queue: waiting on it (or chaining `then`)
  orders the waiting stream after the collective, as DDP's communication hooks expect;
- a failed collective (a dead or timed-out peer, mismatched calls) raises torch.distributed.DistBackendError from
  `wait()`, `is_success()` is False and `exception()` carries the cncl message.
"""
from __future__ import annotations

import os
import time

import torch

import cnrt

from .. import _state

#: Seconds between checks while a blocking wait polls its notifier.
_POLL = 0.0005


def blocking_wait() -> bool:
    """TORCH_CNCL_BLOCKING_WAIT=1 (torch_mlu's name; TORCH_NCCL_BLOCKING_WAIT is honoured too): wait() blocks the
    host until the collective is done. Read when the first process group is made (as NCCL reads its variables)."""
    global _blocking
    if _blocking is None:
        _blocking = any(os.environ.get(name, "0") not in ("", "0")
                        for name in ("TORCH_CNCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT"))
    return _blocking


_blocking = None


class Work:
    """One collective (or a coalesced group of them) queued on a cncl queue."""

    __slots__ = ("connection", "notifier", "outputs", "name", "sequence_number", "_future", "_source")

    def __init__(self, connection, notifier, outputs: list, name: str, sequence_number: int, source: int = -1):
        self.connection = connection  # the group's Connection of the device (comm, queue, stream)
        self.notifier = notifier      # placed on the cncl queue after the collective (None: nothing was queued)
        self.outputs = outputs
        self.name = name
        self.sequence_number = sequence_number
        self._future = None
        self._source = source

    # ---- state ---------------------------------------------------------------------------------------------------
    @property
    def ran_in_call(self) -> bool:
        """The collective already ran in the calling thread: nothing for a stream to wait for, now or later (the
        C++ WorkCNCL then answers wait() and the state queries without calling back here)."""
        return self.notifier is None

    def _failure(self) -> str | None:
        error = self.connection.error() if self.connection is not None else None
        return None if error is None else f"cncl {self.name} failed: {error}"

    def is_completed(self) -> bool:
        """True once the collective ran (successfully or not)."""
        if self.notifier is None:
            return True
        return cnrt.queryNotifier(self.notifier) == cnrt.cnrtSuccess or self._failure() is not None

    def is_success(self) -> bool:
        return self.is_completed() and self._failure() is None

    def exception_message(self) -> str | None:
        return self._failure() if self.is_completed() else None

    def source_rank(self) -> int:
        return self._source

    def result(self) -> list:
        return self.outputs

    def abort(self) -> None:
        if self.connection is not None:
            self.connection.abort()

    # ---- waiting -------------------------------------------------------------------------------------------------
    def _raise_if_failed(self) -> None:
        failure = self._failure()
        if failure is not None:
            raise torch.distributed.DistBackendError(failure)

    def wait(self, timeout_ms: int = 0) -> bool:
        """Work.wait(timeout): order the current stream after the collective; block the host only with a timeout
        or in blocking-wait mode."""
        self._raise_if_failed()
        if self.notifier is None:
            return True
        if timeout_ms > 0 or blocking_wait():
            self._host_wait(timeout_ms / 1000 if timeout_ms > 0 else self.connection.timeout)
            return True
        self.synchronize()
        return True

    def synchronize(self) -> None:
        """Make the current stream of the work's device wait for it (cnrtQueueWaitNotifier; returns at once)."""
        if self.notifier is None:
            return
        if cnrt.queryNotifier(self.notifier) == cnrt.cnrtSuccess:
            self._raise_if_failed()
            return
        device = self.connection.device
        stream_id = _state.C.current_stream_id(device)
        self.connection.wait_here(self.notifier, _state.runtime.streams.queue(device, stream_id))

    def _host_wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while cnrt.queryNotifier(self.notifier) != cnrt.cnrtSuccess:
            self._raise_if_failed()
            if time.monotonic() >= deadline:
                raise torch.distributed.DistBackendError(
                    f"cncl {self.name} (collective #{self.sequence_number}) timed out after {timeout:g} s")
            time.sleep(_POLL)
        self._raise_if_failed()
        self.synchronize()

    def get_future(self):
        """A device-aware torch Future holding the outputs, completed on the cncl queue: `wait()` / `then()` on it
        order the waiting stream after the collective (the events are recorded on the cncl stream)."""
        if self._future is None:
            device = torch.device("mlu", self.connection.device)
            future = torch.futures.Future(devices=[device])
            if self.notifier is not None and not self.is_completed():
                with torch.mlu.stream(self.connection.stream):
                    future.set_result(self.outputs)
            else:
                self._raise_if_failed()
                future.set_result(self.outputs)
            self._future = future
        return self._future


class Pending(Work):
    """The work of a send/recv or collective issued between startCoalescing and endCoalescing: it ends with the
    coalesced group, whose notifier it takes at endCoalescing."""

    __slots__ = ()

    def __init__(self, connection, outputs: list, name: str, sequence_number: int):
        super().__init__(connection, None, outputs, name, sequence_number)

    @property
    def ran_in_call(self) -> bool:
        return False  # its notifier comes at endCoalescing

    def resolve(self, notifier) -> None:
        self.notifier = notifier


class BlockingWork(Work):
    """A Work whose wait() blocks the host (the barrier's, as NCCL's)."""

    __slots__ = ()

    def __init__(self, work: Work):
        super().__init__(work.connection, work.notifier, work.outputs, work.name, work.sequence_number)

    def wait(self, timeout_ms: int = 0) -> bool:
        self._raise_if_failed()
        if self.notifier is not None:
            self._host_wait(timeout_ms / 1000 if timeout_ms > 0 else self.connection.timeout)
        return True
