"""Messages between ranks over a clique's channels, each stamped with the call that sent it.

A message is at most `slot` bytes. The sender of message k on channel (src, dst) waits until message k - 2 was
consumed (two slots), writes header and payload into slot k % 2, then publishes `posted = k`; the receiver waits for
`posted >= k`, checks the header against its own call (so mismatched calls are reported, not silently mixed), reads
the payload in place and publishes `consumed = k`.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from .datatypes import DATA_TYPES, REDUCE_NAMES
from .errors import CNCL_RET_ERR_ARGUMENTS, CnclError
from .fabric import Fabric, PeerLost
from . import network as networking

# Operation kinds carried in message headers.
ALL_REDUCE, BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, ALL_TO_ALLV, SEND_RECV = range(1, 9)
KIND_NAMES = {ALL_REDUCE: "cnclAllReduce", BROADCAST: "cnclBroadcast", REDUCE: "cnclReduce",
              ALL_GATHER: "cnclAllGather", REDUCE_SCATTER: "cnclReduceScatter", ALL_TO_ALL: "cnclAlltoAll",
              ALL_TO_ALLV: "cnclAlltoAllv", SEND_RECV: "cnclSend/cnclRecv"}


class Signature(NamedTuple):
    """What must agree between the sides of a message: the operation, its sequence number on the communicator
    (0 for point-to-point), data type, reduce op, root, and the count the call names. (A named tuple: made on
    every call, it must be cheap.)"""

    kind: int
    seq: int
    dtype: int
    op: int = -1
    root: int = -1
    count: int = 0

    def fields(self) -> tuple[int, ...]:
        return tuple(self)

    def describe(self, fields=None) -> str:
        kind, seq, dtype, op, root, count = self if fields is None else fields
        parts = [f"count={count}", f"data_type={DATA_TYPES[dtype].name if dtype in DATA_TYPES else dtype}"]
        if op >= 0:
            parts.append(f"reduce_op={REDUCE_NAMES.get(op, op)}")
        if root >= 0:
            parts.append(f"root={root}")
        label = KIND_NAMES.get(kind, f"operation {kind}")
        return f"{label}({', '.join(parts)})" + (f" [collective #{seq}]" if seq else "")


class Exchange:
    """One rank's side of one operation: sends to and receives from its peers."""

    def __init__(self, fabric: Fabric, rank: int, timeout: float, signature: Signature, clock_us: float = 0.0):
        self.fabric = fabric
        self.rank = rank
        self.timeout = timeout
        self.signature = signature
        self.clock_us = clock_us
        self.latest_peer_clock_us = clock_us
        self._receiving: dict[int, int] = {}
        self._fields = list(signature.fields())
        self.network = fabric.network
        self._remote = self.network.remote if self.network is not None else ()
        self._outgoing: dict[int, list] = {}   # remote peer -> [(requests, their buffers)] posted, not yet waited
        self._reserved: dict[int, tuple] = {}  # remote peer -> (payload, signature) to publish

    @property
    def slot(self) -> int:
        return self.fabric.slot

    def send(self, peer: int, data: np.ndarray, signature: Signature | None = None) -> None:
        """Post `data` (at most `slot` bytes, contiguous) as the next message to `peer`."""
        if peer in self._remote:
            self._send_remote(peer, data.reshape(-1).view(np.uint8), signature)
            return
        payload = self.reserve(peer, data.nbytes, signature)
        if data.nbytes:
            payload[:] = data.reshape(-1).view(np.uint8)
        self.publish(peer)

    def reserve(self, peer: int, nbytes: int, signature: Signature | None = None) -> np.ndarray:
        """The slot of the next message to `peer`, once it is free, to be filled in place (then `publish`).
        Writing a result straight into the slot saves a pass over memory."""
        if peer in self._remote:
            payload = np.empty(nbytes, np.uint8)
            self._reserved[peer] = (payload, signature)
            return payload
        fabric, src = self.fabric, self.rank
        k = fabric.word(fabric.posted_offset(src, peer)) + 1
        fabric.wait_until(fabric.consumed_offset(src, peer), k - 2, src, peer, self.timeout,
                          f"a free slot towards rank {peer}")
        header, clock, payload = fabric.slot_views(src, peer, k % 2)
        header[:6] = self._fields if signature is None else signature.fields()
        header[6] = nbytes
        clock[0] = self.clock_us
        return payload[:nbytes]

    def publish(self, peer: int) -> None:
        """Make the reserved message to `peer` visible to it."""
        if peer in self._remote:
            self._send_remote(peer, *self._reserved.pop(peer))
            return
        posted_at = self.fabric.posted_offset(self.rank, peer)
        self.fabric.set_word(posted_at, self.fabric.word(posted_at) + 1)

    def receive(self, peer: int, nbytes: int, signature: Signature | None = None) -> np.ndarray:
        """The next message from `peer` as a byte view into the slot; valid until `release(peer)`."""
        if peer in self._remote:
            return self._receive_remote(peer, nbytes, signature)
        fabric, dst = self.fabric, self.rank
        k = fabric.word(fabric.consumed_offset(peer, dst)) + 1
        fabric.wait_until(fabric.posted_offset(peer, dst), k, dst, peer, self.timeout,
                          f"a message from rank {peer}")
        header, clock, payload = fabric.slot_views(peer, dst, k % 2)
        self._check_header(peer, header, float(clock[0]), nbytes, signature)
        self._receiving[peer] = k
        return payload[:nbytes]

    def _check_header(self, peer: int, header: np.ndarray, their_clock: float, nbytes: int,
                      signature: Signature | None) -> None:
        expected = signature or self.signature
        theirs = header[:7].tolist()
        if theirs[:6] != (self._fields if signature is None else list(signature.fields())) or theirs[6] != nbytes:
            raise CnclError(CNCL_RET_ERR_ARGUMENTS,
                            f"mismatched calls: rank {self.rank} called {expected.describe()} expecting {nbytes} "
                            f"bytes from rank {peer}, which called {expected.describe(tuple(theirs[:6]))} and sent "
                            f"{theirs[6]} bytes")
        if their_clock > self.latest_peer_clock_us:
            self.latest_peer_clock_us = their_clock

    def release(self, peer: int) -> None:
        """Hand the slot of the last message received from `peer` back to it."""
        if peer in self._remote:
            return
        self.fabric.set_word(self.fabric.consumed_offset(peer, self.rank), self._receiving.pop(peer))

    # ---- peers on other hosts (network.py) ---------------------------------------------------------------------

    def _send_remote(self, peer: int, payload: np.ndarray, signature: Signature | None) -> None:
        header = np.empty(networking.HEADER_WORDS, np.int64)
        header[:6] = self._fields if signature is None else signature.fields()
        header[6] = payload.nbytes
        header[7:8].view(np.float64)[0] = self.clock_us
        self._outgoing.setdefault(peer, []).append(self.network.isend(self.rank, peer, header, payload))

    def _receive_remote(self, peer: int, nbytes: int, signature: Signature | None) -> np.ndarray:
        network = self.network
        what = f"a message from {network.where(peer)}"
        header, payload = self._wait_remote(network.probe(peer, self.rank), peer, what)
        self._check_header(peer, header, float(header[7:8].view(np.float64)[0]), nbytes, signature)
        if payload is None:
            payload = np.empty(nbytes, np.uint8)
            request = network.irecv_payload(peer, self.rank, payload)
            self._wait_remote(request.test, peer, what, request)
        return payload

    def _wait_remote(self, poll, peer: int, what: str, request=None):
        """poll_until(poll) with this rank's checks; `request` (cancelled when the wait fails) is the poll's."""
        network, me = self.network, self.rank

        def check() -> None:
            self.fabric.check(me, me, what, probe_process=False)  # this rank aborted or failed
            network.poll_control()
            lost = network.loss(peer, me, what)
            if lost is not None:
                raise lost

        try:
            return networking.poll_until(poll, time.monotonic() + self.timeout, what, check)
        except BaseException as exc:
            if request is not None:
                request.Cancel()
            if isinstance(exc, TimeoutError):
                raise PeerLost(f"timed out after {self.timeout:g} s waiting for {network.where(peer)} "
                               f"({what})") from None
            raise

    def finish(self) -> None:
        """Wait until every message sent to a peer on another host was taken (the operation's buffers are free)."""
        for peer, posted in self._outgoing.items():
            for requests, _ in posted:
                for request in requests:
                    self._wait_remote(request.test, peer, f"{self.network.where(peer)} to take a message", request)
        self._outgoing.clear()
