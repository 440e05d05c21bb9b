"""Small allReduces across hosts: two rounds of MPI messages, inside the host then between the hosts, in the calling
thread when it can (as the lean path on one host, fastpath.py).

A clique on several hosts that each hold the same number of ranks, one rank per process, reduces a buffer of up to
MAX_BYTES in two rounds: every rank sends its buffer to the other ranks of its host and combines the host's buffers
in rank order (the host's partial result, the same on each of its ranks); then it sends the partial to the ranks of
its local index on the other hosts (its rail) and combines the hosts' partials in host order. That is
hierarchy.py's order, so every rank gets bitwise the same result as from the staged allReduce, in two message
latencies (the flat algorithm sends every peer the buffer, most of them over the network). All messages of both
rounds go over MPI (its shared memory inside a host), as the header and payload of network.py: one MPI message
each.

Whether a call goes this way is a function of the call and the clique (`eligible`), the same on every rank; the
ranks may still run it in the calling thread or on the queue, call by call: the messages are the same. A call whose
peers are not all there within WAIT_SECONDS of yielding the CPU goes on as a command at its queue position, which
waits as every operation across hosts waits (network.poll_until: the timeout, the peers' announcements, its own
abort).
"""
from __future__ import annotations

import os
import sys
import time
import numpy as np

from . import fastpath, network as networking
from .channel import Signature
from .datatypes import DataType
from .errors import CNCL_RET_ERR_ARGUMENTS, CnclError
from .fabric import ABORTED, GONE, PeerLost
from .reduction import Scratch, ordered_reduction

#: Buffers up to this size take the two rounds: one MPI message each (network.INLINE_BYTES).
MAX_BYTES = networking.INLINE_BYTES
#: How long the calling thread waits for the peers (yielding the CPU between polls) before the queue takes over:
#: a scheduler time slice, for which a peer process on a loaded host may be off its core. (A call handed over puts
#: the calls queued behind it on the general path until the queue is drained.)
WAIT_SECONDS = 4e-3


def equal_hosts(network) -> bool:
    """Whether the clique's hosts hold as many ranks each, one rank per process (kept on the network)."""
    known = getattr(network, "equal_hosts", None)
    if known is None:
        by_host = network.by_host
        known = network.equal_hosts = (len(by_host) > 1 and len({len(ranks) for ranks in by_host}) == 1
                                       and len(set(network.process_of)) == network.nrank)
    return known


def eligible(network, nbytes: int) -> bool:
    """Whether an allReduce of `nbytes` goes in two rounds (the same answer on every rank: a function of the call
    and the clique)."""
    return network is not None and 0 < nbytes <= MAX_BYTES and equal_hosts(network)


class TwoRounds:
    """One rank's side of a small allReduce across hosts (its buffers, peers and messages, made once), run call by
    call (`begin`, then polls from either thread: `advance`)."""

    def __init__(self, fabric, rank: int, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType,
                 signature: Signature, scratch: Scratch):
        network = fabric.network
        self.MPI = MPI = networking.mpi()
        self.fabric, self.network, self.comm, self.rank = fabric, network, network.comm, rank
        self.scratch, self.nbytes = scratch, send.nbytes
        by_host = network.by_host
        local = by_host[network.local_host]
        index = local.index(rank)
        self.partial = np.empty_like(send)  # the host's result (its own: a call handed over may still use it)
        size = networking.HEADER_BYTES + send.nbytes
        self.rounds = []
        for members, own, out in ((local, send, self.partial), ([ranks[index] for ranks in by_host], self.partial,
                                                                  recv)):
            message = np.zeros(size, np.uint8)  # header and payload, sent to every peer of the round
            peers, parts = [], []
            for peer in members:
                if peer == rank:
                    parts.append(own)
                    continue
                into = np.empty(size, np.uint8)
                # (rank, its process, the tag of this rank's messages to it, the tag of its messages here, where
                # its message lands)
                peers.append((peer, network.process_of[peer], network.tag(rank, peer), network.tag(peer, rank), into))
                parts.append(into[networking.HEADER_BYTES:].view(send.dtype))
            self.rounds.append((message, message[networking.HEADER_BYTES:], own.reshape(-1).view(np.uint8), peers,
                                parts, out, ordered_reduction(len(members), op, dtype)))
        # the headers of both rounds' messages: the call's signature and length; per call its number and clock
        self.headers = [round_[0][:networking.HEADER_BYTES].view(np.int64) for round_ in self.rounds]
        self.clocks = [header[7:8].view(np.float64) for header in self.headers]
        for header in self.headers:
            header[:6] = signature.fields()
            header[6] = send.nbytes
        self.header = self.headers[0]
        self.expected_before, self.expected_after = self.header[:1].tobytes(), self.header[2:7].tobytes()
        self.round = 2
        self.receiving: list = [[], []]  # per round: the posted receives of its messages
        self.sending: list = []
        self.expected = b""
        self.latest_clock_us = 0.0

    def begin(self, seq: int, clock_us: float) -> None:
        """Start the call numbered `seq`: post the receives of both rounds and this rank's messages of the first."""
        for header in self.headers:
            header[1] = seq
        for clock in self.clocks:
            clock[0] = clock_us
        self.expected = self.expected_before + seq.to_bytes(8, sys.byteorder, signed=True) + self.expected_after
        self.latest_clock_us = clock_us
        self.sending = []
        comm, byte = self.comm, self.MPI.BYTE
        # Posted before anything is sent: a message finds its buffer (an exact fit: one longer is MPI's truncation
        # error, reported as a mismatch; a shorter one says its length in its header).
        self.receiving = [[comm.Irecv([peer[4], byte], peer[1], peer[3]) for peer in round_[3]]
                          for round_ in self.rounds]
        self._start(0)

    def _start(self, round_: int) -> None:
        self.round = round_
        message, payload, own, peers, _, _, _ = self.rounds[round_]
        payload[:] = own
        comm, byte = self.comm, self.MPI.BYTE
        for peer in peers:
            self.sending.append(comm.Isend([message, byte], peer[1], peer[2]))
        if not peers:
            self._finish_round()

    def _finish_round(self) -> None:
        _, _, _, peers, parts, out, combine = self.rounds[self.round]
        expected = self.expected
        for peer in peers:
            into = peer[4]
            if into[:56].tobytes() != expected:
                self._mismatch(peer[0], into)
            clock = float(into[56:64].view(np.float64)[0])
            if clock > self.latest_clock_us:
                self.latest_clock_us = clock
        combine(parts, out, self.scratch)
        if self.round == 0:
            self._start(1)
        else:
            self.round = 2

    def missing(self) -> list[int]:
        """The peers whose message of the current round has not come."""
        if self.round > 1:
            return []
        peers, requests = self.rounds[self.round][3], self.receiving[self.round]
        return [peer[0] for peer, request in zip(peers, requests) if not request.Test()]

    def advance(self) -> bool:
        """Take in what arrived and move on; whether the call is complete (its messages taken by MPI too)."""
        Testall = self.MPI.Request.Testall
        while self.round <= 1:
            requests = self.receiving[self.round]
            try:
                if requests and not Testall(requests):
                    return False
            except self.MPI.Exception:  # MPI_ERR_TRUNCATE: a peer sent more than this call expects
                self._truncated()
            self._finish_round()
        if self.sending:
            if not Testall(self.sending):
                return False
            self.sending = []
        return True

    def _truncated(self) -> None:
        """Report the peer whose message did not fit."""
        for peer, request in zip(self.rounds[self.round][3], self.receiving[self.round]):
            try:
                request.Test()
            except self.MPI.Exception:
                self._mismatch(peer[0], peer[4])
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"mismatched calls: a message to rank {self.rank} did not fit "
                                                f"its call ({self.nbytes} bytes)")

    def cancel(self) -> None:
        """Withdraw the receives still posted (the call failed)."""
        for requests in self.receiving:
            for request in requests:
                if request:
                    request.Cancel()
        self.receiving = [[], []]
        self.round = 2

    def _mismatch(self, peer: int, data: np.ndarray) -> None:
        self.cancel()
        mine = Signature(*self.header[:6].tolist())
        fields = tuple(data[:48].view(np.int64).tolist())
        sent = int(data[48:56].view(np.int64)[0])
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"mismatched calls: rank {self.rank} called {mine.describe()} "
                                                f"expecting {self.nbytes} bytes from {self.network.where(peer)}, "
                                                f"which called {mine.describe(fields)} and sent "
                                                f"{sent if sent != self.nbytes else 'more'} bytes")

    # ---- waiting -------------------------------------------------------------------------------------------------

    def try_inline(self, seconds: float) -> bool:
        """Poll, yielding the CPU between polls, for at most `seconds`; whether the call is complete."""
        give_up = time.perf_counter() + seconds
        while not self.advance():
            if time.perf_counter() >= give_up:
                return False
            os.sched_yield()
        return True

    def wait(self, timeout: float) -> None:
        """Poll until complete, as every wait across hosts (the communicator's timeout, the peers' news, this rank's
        own abort)."""
        what = f"round {self.round + 1} of {Signature(*self.header[:6].tolist()).describe()}"
        try:
            networking.poll_until(lambda: (self.advance(), None), time.monotonic() + timeout, what, self._check_peers)
        except TimeoutError:
            missing = self.missing()
            self.cancel()
            whom = self.network.where(missing[0]) if missing else "MPI to take this rank's messages"
            raise PeerLost(f"timed out after {timeout:g} s waiting for {whom} ({what})") from None
        except BaseException:
            self.cancel()
            raise

    def _check_peers(self) -> None:
        """Every rank's contribution is needed, so any rank's loss fails the call (not only the peers this rank
        waits for): named at its source, a rank that left or aborted before one that failed (often because of it)."""
        network, me, fabric = self.network, self.rank, self.fabric
        fabric.check(me, me, "its own state", probe_process=False)
        network.poll_control()
        what = f"a message of round {self.round + 1}"
        lost = sorted((state not in (GONE, ABORTED), peer) for peer, (state, _) in network.announced.items())
        if lost:
            raise network.loss(lost[0][1], me, what)
        for peer in network.by_host[network.local_host]:
            if peer != me:
                fabric.check(me, peer, what)


def all_reduce(ex, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType, scratch: Scratch) -> None:
    """The queued form (an allReduce body run by the queue, channel.Exchange `ex`)."""
    call = TwoRounds(ex.fabric, ex.rank, send, recv, op, dtype, ex.signature, scratch)
    call.begin(ex.signature.seq, ex.clock_us)
    call.wait(ex.timeout)
    ex.latest_peer_clock_us = max(ex.latest_peer_clock_us, call.latest_clock_us)


class Plan(fastpath.LeanCall):
    """One checked small allReduce across hosts of one rank, ready to be run again in the calling thread."""

    def __init__(self, comm, queue, send_range, recv_range, send: np.ndarray, recv: np.ndarray, dtype: DataType,
                 op: int, count: int, model_us: float):
        super().__init__(comm, queue, send_range, recv_range, dtype, op, count, model_us)
        self.wait_seconds = WAIT_SECONDS
        self.call = TwoRounds(comm.fabric, comm.rank, send, recv, op, dtype, self.signature(0), comm.scratch)

    def _inline(self, seq: int, started: float) -> tuple:
        call = self.call
        call.begin(seq, started)
        if call.try_inline(self.wait_seconds):
            return True, call.latest_clock_us

        def rest(exchange) -> None:
            call.wait(exchange.timeout)
            exchange.latest_peer_clock_us = max(exchange.latest_peer_clock_us, call.latest_clock_us)

        return False, rest
