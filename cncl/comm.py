"""Communicators (cnclComm_t): a rank of a clique bound to a device, running its operations one at a time.

Operations are numbered when they are issued and run in that order even when they are queued on different queues
(a turnstile), because every rank must meet its peers' operations in the same order. An operation that fails marks
the communicator failed (its async error) and tells the peers through the rank table, so that they fail too
instead of waiting for it.
"""
from __future__ import annotations

import atexit
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

from mlusim.lazymodule import LazyModule
from mlusim.memo import BoundedMemo
from mlusim.queue import Queue

from . import fabric as states
from .channel import Exchange, Signature
from .errors import (CNCL_RET_ASYNC_ERROR, CNCL_RET_ERR_ARGUMENTS, CNCL_RET_ERR_INTERNAL, CNCL_RET_SUCCESS,
                     CnclError)
from .fabric import Fabric, PeerLost
from .reduction import Scratch

_TURN_POLL = 0.05
#: lean-path plans kept per communicator (a program cycling through more argument tuples starts over)
FAST_PLANS = 64
#: peer memory mapping (numba code), imported when the first communicator is made: loading cncl does not load numba
zerocopy = LazyModule(f"{__package__}.zerocopy")


class Clique:
    """This process's view of one clique: the mapped fabric and the local communicators that use it."""

    def __init__(self, fabric: Fabric, timeout: float):
        self.fabric = fabric
        self.timeout = timeout
        self.local: set[int] = set()
        self._lock = threading.Lock()

    def release(self, rank: int) -> None:
        with self._lock:
            self.local.discard(rank)
            last = not self.local
        if last:
            self.fabric.close()


class cnclComm:
    """A communicator: rank `rank` of `nrank`, on simulated device `device`."""

    def __init__(self, clique: Clique, rank: int, device):
        self.clique = clique
        self.fabric = clique.fabric
        self.rank = rank
        self.nrank = clique.fabric.nrank
        self.device = device
        self.destroyed = False
        self.error: Optional[CnclError] = None
        self.priority = 0
        self.scratch = Scratch()
        self.peer_memory = zerocopy.PeerMemory()
        self.collectives_issued = 0
        self.fast_plans = BoundedMemo(FAST_PLANS)  # plan_key -> Plan: the lean path's checked calls
        self.fast_drain_skips = 0  # calls the lean path sends on without waiting for the calls in flight (fastpath.py)
        self._turn = threading.Condition()
        self._issued = 0
        self._next = 1
        self._cancelled: set[int] = set()
        self._pending: dict[int, tuple[Queue, int, list]] = {}
        self._queues: "weakref.WeakSet[Queue]" = weakref.WeakSet()
        self._pool: Optional[ThreadPoolExecutor] = None
        clique.local.add(rank)
        _live.add(self)

    def __repr__(self) -> str:
        state = "destroyed" if self.destroyed else ("failed" if self.error else "live")
        return f"<cnclComm rank {self.rank}/{self.nrank} device {self.device.index} {state}>"

    # ---- issuing operations ------------------------------------------------------------------------------------

    def submit(self, queue: Queue, enqueue: Callable[[Callable, int], None], collective: bool) -> None:
        """Issue one operation on `queue`. `enqueue(run, seq)` queues its command, whose work calls
        `run(body, signature, clock_us)`, which takes this operation's turn and runs `body(exchange)`. A collective
        gets its sequence number `seq` here, when it is certain to be queued (every rank numbers its collectives
        the same way, so a call rejected before this point never puts the ranks out of step); `seq` is 0 for
        point-to-point."""
        with self._turn:
            self._issued += 1
            ticket = self._issued
            if collective:
                self.collectives_issued += 1
                seq = self.collectives_issued
            else:
                seq = 0
        started: list = []

        def run(body: Callable[[Exchange], None], signature: Signature, clock_us: float) -> float:
            started.append(True)
            self._enter(ticket)
            try:
                self.raise_if_failed()
                exchange = Exchange(self.fabric, self.rank, self.clique.timeout, signature, clock_us)
                body(exchange)
                if exchange.network is not None:
                    exchange.finish()
                return exchange.latest_peer_clock_us
            except BaseException as exc:
                self.fail(exc)
                raise
            finally:
                self.end_turn(ticket)

        try:
            enqueue(run, seq)
        except BaseException:
            self._cancel(ticket)
            with self._turn:
                if seq and self.collectives_issued == seq:
                    self.collectives_issued -= 1  # the number goes to the next collective that is queued
            raise
        with self._turn:
            if ticket >= self._next:
                self._pending[ticket] = (queue, queue.submitted, started)
        self._queues.add(queue)

    def _enter(self, ticket: int) -> None:
        with self._turn:
            while self._next != ticket:
                self._detect_skipped()
                if self.error is not None:
                    raise CnclError(CNCL_RET_ASYNC_ERROR, f"an earlier operation of this communicator failed: "
                                                          f"{self.error.message}")
                self._turn.wait(_TURN_POLL)

    def _detect_skipped(self) -> None:
        """An earlier operation whose queue skipped it (that queue has a sticky error) will never take its turn:
        the communicator cannot stay in step with its peers any more, so it fails."""
        pending = self._pending.get(self._next)
        if pending is None:
            return
        queue, position, started = pending
        if not started and queue.completed >= position:
            self.fail(CnclError(CNCL_RET_ERR_INTERNAL, f"operation #{self._next} of rank {self.rank} was skipped "
                                                       f"because {queue.name} has an error"))

    def _advance_past(self, ticket: int) -> None:
        self._pending.pop(ticket, None)
        self._next = ticket + 1
        while self._next in self._cancelled:
            self._cancelled.discard(self._next)
            self._next += 1
        self._turn.notify_all()

    def _cancel(self, ticket: int) -> None:
        """An operation that never reached its queue gives up its turn."""
        with self._turn:
            if ticket == self._next:
                self._advance_past(ticket)
            elif ticket > self._next:
                self._cancelled.add(ticket)

    # ---- turns of operations the calling thread runs itself (the lean path, fastpath.py) ---------------------------

    def in_flight(self) -> bool:
        """Whether an operation of this communicator was issued and has not ended."""
        return self._issued + 1 != self._next

    def in_flight_only_on(self, queue: Queue) -> bool:
        """Whether every operation in flight was queued on `queue` (none counts)."""
        with self._turn:
            return all(entry[0] is queue for ticket, entry in self._pending.items() if ticket >= self._next)

    def take_turn(self, queue: Queue):
        """When no operation is in flight and `queue` is idle: issue the next collective (its ticket and sequence
        number) together with the queue's turn (mlusim.turn), for a collective the calling thread runs itself;
        (ticket, seq, turn), or None when either is not free (nothing taken). The caller ends the communicator's
        turn with `end_turn(ticket)` (or `hand_over`) and the queue's turn with the Turn."""
        with self._turn:
            if self._issued + 1 != self._next:
                return None
            turn = queue.take_turn()
            if turn is None:
                return None
            ticket = self._issued = self._issued + 1
            seq = self.collectives_issued = self.collectives_issued + 1
        return ticket, seq, turn

    def end_turn(self, ticket: int) -> None:
        """The operation of `ticket` ended: the next one may go."""
        with self._turn:
            self._advance_past(ticket)

    def hand_over(self, ticket: int, turn, command) -> None:
        """The operation of `ticket` goes on as `command` at its turn's queue position (its work ends the
        communicator's turn with `end_turn`); it has started, so it can never be skipped."""
        with self._turn:
            self._pending[ticket] = (turn.queue, turn.position + 1, [True])
        turn.hand_over(command)

    def uses(self, queue: Queue) -> None:
        """`queue` runs operations of this communicator: cnclCommDestroy waits for its work."""
        self._queues.add(queue)

    def pool(self) -> ThreadPoolExecutor:
        """Threads for the concurrent streams of grouped point-to-point calls."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2 * max(self.nrank - 1, 1),
                                            thread_name_prefix=f"cncl-rank{self.rank}")
        return self._pool

    def set_timeout(self, seconds: float) -> None:
        """How long an operation of this communicator (and of the other local ranks of its clique) waits for a peer
        that makes no progress before failing (an mlusim extension; torch.distributed sets the group's timeout)."""
        if not (isinstance(seconds, (int, float)) and seconds > 0):
            raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument 'seconds': must be a positive number, got {seconds!r}")
        self.clique.timeout = float(seconds)

    # ---- errors ------------------------------------------------------------------------------------------------

    def fail(self, exc: BaseException) -> None:
        """Record the first failure as the async error and tell the peers."""
        if self.error is None:
            if isinstance(exc, CnclError):
                self.error = exc
            else:
                self.error = CnclError(CNCL_RET_ERR_INTERNAL, f"{type(exc).__name__}: {exc}")
        if self.fabric.raw is not None and self.fabric.state(self.rank) == states.ALIVE:
            self.fabric.set_state(self.rank, states.FAILED, self.error.message)

    def raise_if_failed(self) -> None:
        if self.error is not None:
            raise CnclError(CNCL_RET_ASYNC_ERROR, f"communicator of rank {self.rank} failed earlier: "
                                                  f"{self.error.message}")

    def async_error(self) -> int:
        return CNCL_RET_SUCCESS if self.error is None else CNCL_RET_ASYNC_ERROR

    # ---- teardown ----------------------------------------------------------------------------------------------

    def wait_idle(self) -> None:
        """Wait until every queue this communicator used has run what was queued (operations end: they succeed,
        fail, or time out)."""
        for queue in list(self._queues):
            queue.wait_idle()

    def abort(self) -> None:
        """Stop waiting operations at once (they fail) and make the peers' operations fail too."""
        if self.fabric.raw is not None:
            self.fabric.set_state(self.rank, states.ABORTED, f"rank {self.rank} called cnclAbortComm")
        if self.error is None:
            self.error = PeerLost(f"the communicator of rank {self.rank} was aborted")

    def destroy(self) -> None:
        """Release the communicator after its queued operations ended."""
        if self.destroyed:
            return
        self.wait_idle()
        self.destroyed = True
        _live.discard(self)
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        if self.fabric.raw is not None and self.fabric.state(self.rank) == states.ALIVE:
            self.fabric.set_state(self.rank, states.GONE)
        self.peer_memory.clear()
        self.clique.release(self.rank)


_live: "weakref.WeakSet[cnclComm]" = weakref.WeakSet()


def comm_arg(comm, arg: str = "comm") -> cnclComm:
    """A live communicator argument."""
    if not isinstance(comm, cnclComm):
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': expected a cnclComm_t, got "
                                                f"{type(comm).__name__}")
    if comm.destroyed:
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': the communicator was destroyed")
    return comm


@atexit.register
def _leave_cliques_at_exit() -> None:
    # Runs before mlusim's own exit hook (registered earlier): let queued collectives finish with the peers, then
    # tell the peers this rank is gone so that they fail at once instead of timing out.
    for comm in list(_live):
        try:
            comm.destroy()
        except Exception:
            pass
