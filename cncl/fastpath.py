"""The lean path of a small allReduce: a call repeated with the same arguments runs in the calling thread, on an
idle queue, in a few attribute reads and two compiled calls.

The first call with given arguments goes through every check of the general path (calls.py) and, when it is
eligible, leaves a `Plan` on its communicator (the resolved views of its buffers, the message header of its signature
and the channel offsets of its rank), which runs that call too. A later call with the same arguments (send, recv, count, data type,
op, queue, all exact ints) looks up the plan and re-checks what can change since: the buffers' blocks were not freed,
the communicator has not failed and has no operation in flight, no cnclGroupStart is open on this thread, nobody
watches commands one by one (the sanitizer, tracing: mlusim.observers), and the queue is idle. It then takes the
communicator's next sequence number together with a turn of the queue (`cnclComm.take_turn`, mlusim.turn: the call
takes the queue position a queued command would), and posts to every peer and waits for their messages in one
compiled call
(`tiny.exchange_all`): the same messages, headers and counters as the general path, so the ranks may take either
path call by call. The reduction is `reduction.reduce_ordered`'s, in rank order (bitwise the general path's result);
the slots go back in a second compiled call (`tiny.release_all`). The queue's modelled clock and completed count
move as if the command had run there.

`LeanCall` is what every lean path shares (the checks, the turns, the wait for calls in flight, the hand-over);
`Plan` is one host's, netpath.Plan the one of small allReduces across hosts.

A peer that is late (not there within the compiled spin and `WAIT_SECONDS` of yielding the CPU) does not keep the
caller: the rest of the call becomes a command at the turn's position (`cnclComm.hand_over`, built by the submission
builder), run by the queue like any other, which finishes the posts and waits with the general wait (peer checks, timeout, abort). A signature
that does not match is handed over the same way and reported there with the general message.
"""
from __future__ import annotations

import os
import time
from abc import ABC, abstractmethod

import numpy as np

from mlusim.command import Kind, current_command
from mlusim.lazymodule import LazyModule
from mlusim.observers import OBSERVERS
from mlusim.submit import Access, Submission

from . import algorithms, group
from .channel import ALL_REDUCE, Exchange, Signature
from .fabric import SPIN_ROUNDS
from .reduction import ordered_reduction

tiny = LazyModule(f"{__package__}.tiny")

#: MLUSIM_CNCL_FAST_PATH=0 turns the lean path off (every call takes the general path: to compare them).
enabled = os.environ.get("MLUSIM_CNCL_FAST_PATH", "1") != "0"
#: Calls up to this many bytes take the lean path (with at most a slot): the general path sends them as one window
#: of one message per peer, the messages the lean path sends; zero-copy (from 512 KiB) never applies to them.
MAX_BYTES = 64 * 1024
#: Cliques of up to this many ranks (the plan keeps one list of parts per combination of slot parities).
MAX_RANKS = 8
#: How long a call whose peers are not all there after the compiled spin yields the CPU and looks again before its
#: queue takes the call over (a peer on a loaded host may need this core to post).
WAIT_SECONDS = 500e-6
#: How long a call waits for its queue to finish the communicator's earlier calls (one handed over, the calls queued
#: behind it) before it takes the general path itself.
DRAIN_SECONDS = 2e-3
#: After a wait for the queue that ran out, this many calls take the general path without waiting (unless a call is
#: handed over): a peer that is late for long costs a wait now and then, not one per call. Few, so that what they
#: queue drains within the next wait: a pause counted in time let the ranks queue more in it than the other rank's
#: next wait could drain, and the ranks took turns at making each other wait (a hand-over once cost ~200 calls on
#: the general path).
DRAIN_SKIP_CALLS = 8
#: How calls that had a plan went: run in the calling thread, handed over to the queue, or not taken (general path)
STATS = {"inline": 0, "handed_over": 0, "declined": 0}


def plan_key(send_buffer, recv_buffer, count, data_type, reduce_op, queue):
    """The cache key of an allReduce call, or None when an argument is not an exact int (a float count equal to an
    int must not find the int's plan: the general path rejects it)."""
    if (type(send_buffer) is int and type(recv_buffer) is int and type(count) is int and type(data_type) is int
            and type(reduce_op) is int):
        return send_buffer, recv_buffer, count, data_type, reduce_op, queue
    return None


class LeanCall(ABC):
    """What every lean path does around the exchange of an allReduce: the checks of what may have changed since the
    plan was made, the communicator's and the queue's turn, the wait for calls in flight, and the hand-over to the
    queue of a call whose peers are late. A subclass gives `_inline` (and may add to `usable`)."""

    def __init__(self, comm, queue, send_range, recv_range, dtype, op: int, count: int, model_us: float):
        self.comm, self.queue, self.fabric = comm, queue, comm.fabric
        self.dtype, self.op, self.count = dtype, op, count
        comm.uses(queue)
        self.send_range, self.recv_range = send_range, recv_range
        self.send_block, self.recv_block = send_range.block, recv_range.block
        self.model_us = model_us
        # ranks in other processes: their posts need their own core, worth yielding for; ranks of this process are
        # often driven by this very thread (one thread, several communicators), which no waiting helps
        self.wait_seconds = WAIT_SECONDS if len(comm.clique.local) == 1 else 0.0
        self.drain_seconds = DRAIN_SECONDS if len(comm.clique.local) == 1 else 0.0

    def usable(self) -> bool:
        """What may have changed since the plan was made allows the lean path now (the queue is checked when it is
        claimed, the communicator's turn when it is taken)."""
        return (self.comm.error is None and not self.comm.destroyed and not self.send_block.freed
                and not self.recv_block.freed and not getattr(group._state, "depth", 0)
                and not OBSERVERS.watching_commands and self.fabric.raw is not None)

    def signature(self, seq: int) -> Signature:
        return Signature(ALL_REDUCE, seq, self.dtype.code, self.op, count=self.count)

    @abstractmethod
    def _inline(self, seq: int, started: float) -> tuple:
        """Run the call with sequence number `seq` in the calling thread: (True, the latest peer clock) when it
        completed, or (False, rest) where `rest(exchange)` finishes it on the queue with the general waits."""

    def run(self) -> bool:
        """Run the call in the calling thread (or begin it and hand the rest to the queue); False when the lean
        path does not apply now (nothing was done: the caller takes the general path)."""
        if not self.usable():
            STATS["declined"] += 1
            return False
        comm, queue = self.comm, self.queue
        if comm.in_flight() or queue.completed != queue.submitted:  # work in flight goes first
            if not (self.drain_seconds and self._drain(comm, queue)):
                STATS["declined"] += 1
                return False
        taken = comm.take_turn(queue)
        if taken is None:
            STATS["declined"] += 1
            return False
        ticket, seq, turn = taken
        try:
            started = queue.model_clock_us
            host_us = queue.host_clock.us
            if host_us > started:
                started = host_us
            completed, outcome = self._inline(seq, started)
            if not completed:
                self._hand_over(turn, ticket, seq, started, outcome)
                comm.fast_drain_skips = 0
                STATS["handed_over"] += 1
                return True
            turn.done(started + (outcome - started if outcome > started else 0.0) + self.model_us)
        except BaseException as exc:
            comm.fail(exc)
            comm.end_turn(ticket)
            turn.failed(Kind.COLLECTIVE, "cnclAllReduce", exc)
            if queue.blocking:
                raise queue.take_fault() from None
            return True
        comm.end_turn(ticket)  # the communicator's next operation may go
        STATS["inline"] += 1
        return True

    def _drain(self, comm, queue) -> bool:
        """Wait (at most drain_seconds, the GIL released) for the communicator's operations in flight to end, when
        they are all on this plan's queue (a late peer's call handed over, calls queued while it ran): the calls
        that follow then take the lean path again instead of queueing behind them for good. After a wait that ran
        out, the next DRAIN_SKIP_CALLS calls do not wait (until the next hand-over)."""
        if comm.fast_drain_skips:
            comm.fast_drain_skips -= 1
            return False
        if not comm.in_flight_only_on(queue):
            return False
        give_up = time.perf_counter() + self.drain_seconds
        while comm.in_flight() or queue.completed != queue.submitted:
            left = give_up - time.perf_counter()
            if left <= 0 or comm.error is not None or not queue.idle_within(left):
                comm.fast_drain_skips = DRAIN_SKIP_CALLS
                return False
        return True

    def _hand_over(self, turn, ticket: int, seq: int, started: float, rest) -> None:
        """The queue finishes the call (`rest(exchange)`: the posts not done yet, the wait for the peers, the
        reduction, the release) as the command at the turn's position."""
        comm, signature, model_us = self.comm, self.signature(seq), self.model_us

        def work() -> float:
            begun = current_command().model_start
            try:
                comm.raise_if_failed()
                exchange = Exchange(comm.fabric, comm.rank, comm.clique.timeout, signature, started)
                rest(exchange)
                latest = exchange.latest_peer_clock_us
            except BaseException as exc:
                comm.fail(exc)
                raise
            finally:
                comm.end_turn(ticket)
            return max(latest - begun, 0.0) + model_us

        info = {"nrank": comm.nrank, "rank": comm.rank, "rendezvous": (id(comm.clique), seq),
                "local_ranks": len(comm.clique.local)}
        with Submission(Kind.COLLECTIVE, "cnclAllReduce") as submission:
            submission.pin(self.send_range, Access.READ)
            submission.pin(self.recv_range, Access.WRITE)
            command = submission.command(work, model_us, info)
        comm.hand_over(ticket, turn, command)


class Plan(LeanCall):
    """One checked allReduce call of one rank on one host, ready to be run again in the calling thread."""

    def __init__(self, comm, queue, send_range, recv_range, send: np.ndarray, recv: np.ndarray, dtype, op: int,
                 count: int, model_us: float):
        super().__init__(comm, queue, send_range, recv_range, dtype, op, count, model_us)
        fabric, rank = comm.fabric, comm.rank
        channels = fabric.fast_channels.get(rank)
        if channels is None:
            channels = fabric.fast_channels[rank] = tiny.Channels(fabric, rank)
        self.channels = channels
        self.send, self.recv, self.payload = send, recv, send.view(np.uint8)
        self.nbytes = send.nbytes
        npeers = len(channels.peers)
        self.chan = np.empty((npeers, 8), np.int64)
        self.chan[:, tiny.OUT_POSTED] = channels.out_posted
        self.chan[:, tiny.OUT_CONSUMED] = channels.out_consumed
        self.chan[:, tiny.IN_POSTED] = channels.in_posted
        self.chan[:, tiny.IN_CONSUMED] = channels.in_consumed
        self.chan[:, tiny.OUT_SLOT:tiny.OUT_SLOT + 2] = channels.out_slot
        self.chan[:, tiny.IN_SLOT:tiny.IN_SLOT + 2] = channels.in_slot
        self.header = np.zeros(8, np.int64)
        self.header[:6] = self.signature(0).fields()
        self.header[6] = self.nbytes
        self.header_clock = self.header[7:8].view(np.float64)
        self.io = np.zeros(tiny.IO_DONE + 3 * npeers, np.int64)
        self.io_clock = self.io[tiny.IO_CLOCK:tiny.IO_CLOCK + 1].view(np.float64)
        self.wakes = self.io[tiny.IO_DONE + npeers:]
        self.raw = channels.raw
        # the compiled calls, bound once (each read through the lazy module is a Python call)
        self.exchange_all, self.release_all, self.parity_at = tiny.exchange_all, tiny.release_all, tiny.IO_PARITY
        # the parts of the reduction in rank order, for each combination of the slots the peers' messages are in
        slot_views = [[self.raw[start + 64:start + 64 + self.nbytes].view(send.dtype) for start in channels.in_slot[i]]
                      for i in range(npeers)]
        self.parts = [[send if channels.slot_of_rank[r] < 0 else
                       slot_views[channels.slot_of_rank[r]][(mask >> channels.slot_of_rank[r]) & 1]
                       for r in range(comm.nrank)] for mask in range(1 << npeers)]
        self.reduce = ordered_reduction(comm.nrank, op, dtype)

    def usable(self) -> bool:
        return super().usable() and algorithms.sends_whole_buffer(self.send, self.comm.nrank)

    def _inline(self, seq: int, started: float) -> tuple:
        self.header[1] = seq
        self.header_clock[0] = started
        status = self.exchange_all(self.raw, self.payload, self.chan, self.header, self.io, SPIN_ROUNDS, 1)
        if self.io[0]:
            self._wake()
        if status != -1:
            status = self._wait(status)
            if status != -1:
                posted = self.io[tiny.IO_DONE:tiny.IO_DONE + len(self.channels.peers)].astype(np.uint8)
                comm = self.comm
                return False, lambda exchange: tiny.all_reduce(exchange, self.channels, self.send, self.recv,
                                                               self.op, self.dtype, comm.scratch, posted=posted)
        self.reduce(self.parts[self.io[self.parity_at]], self.recv, self.comm.scratch)
        self.release_all(self.raw, self.chan, self.io)
        if self.io[0]:
            self._wake()
        return True, self.io_clock[0]

    def _wait(self, status: int) -> int:
        """Yield the CPU and look again, for at most wait_seconds; the last status."""
        if not self.wait_seconds or status < -1:
            return status
        give_up = time.perf_counter() + self.wait_seconds
        while status >= 0:
            os.sched_yield()
            status = self.exchange_all(self.raw, self.payload, self.chan, self.header, self.io, SPIN_ROUNDS, 0)
            if self.io[0]:
                self._wake()
            if time.perf_counter() >= give_up:
                break
        return status

    def _wake(self) -> None:
        self.io[0] = 0
        tiny._wake(self.channels, self.wakes)
        self.wakes[:] = 0


def stale(comm, key, ranges: dict) -> bool:
    """Whether the call `key`, whose checked buffers are `ranges`, needs a new plan (none yet, or one made for
    blocks freed since: the same addresses allocated again)."""
    plan = comm.fast_plans.get(key)
    return (plan is None or plan.send_block is not ranges["send_buffer"].block
            or plan.recv_block is not ranges["recv_buffer"].block)


def remember(comm, key, plan: Plan) -> None:
    """Keep `plan` for later calls with the arguments `key`."""
    comm.fast_plans.put(key, plan)


def eligible(comm, send: np.ndarray) -> bool:
    """Whether an allReduce of `send` may get a plan (a function of the call and the clique)."""
    return (1 < comm.nrank <= MAX_RANKS and comm.fabric.network is None and 0 < send.nbytes <= MAX_BYTES
            and send.nbytes <= comm.fabric.slot and send.flags.c_contiguous and algorithms.sends_whole_buffer(send, comm.nrank))
