"""The fast path of small all-reduces: the message phases of the exchange in numba functions without the GIL.

A small allReduce (one message per peer) is: post this rank's data to every peer, wait for every peer's message,
check the messages' call signatures, reduce in rank order, hand the slots back. On the general path (channel.py)
each step is several Python calls, numpy operations on the headers and a futex wake system call per counter. Here
posting, waiting with checking, and releasing are one call each into compiled code over views of the whole clique
segment (one signature each, so rank processes compiling at once never race on numba's disk cache), and the
reduction is reduction.reduce_ordered on views of the slots, as on the general path; with the same message layout,
counters and rules (so it mixes freely with the general path): the signature of every message is still checked
(a mismatch is reported by the general path's receive, with its message), the peers' states and pids are still
watched, timeouts and aborts still apply (a peer that is not there within the spin falls back to fabric.wait_until,
which sleeps and checks), and a counter store wakes a sleeper only when one announced itself (atomics.publish).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from mlusim.host import atomics
from mlusim.host.atomics import exchange, load, spin_until

from . import futex
from .channel import Exchange
from .datatypes import DataType
from .fabric import MESSAGE_HEADER_BYTES, SLEEPERS_OFFSET, SPIN_ROUNDS
from .reduction import Scratch, reduce_ordered

#: All-reduces of at most this many bytes (and at most a slot) take this path: what it saves is per message, not
#: per byte (measurements: docs/cncl.md, "Thresholds").
MAX_BYTES = 2 * 1024
SUM, PROD, MAX, MIN = 0, 1, 2, 3  # cnclSum, cnclProd, cnclMax, cnclMin
_HEADER_WORDS = MESSAGE_HEADER_BYTES // 8
_SLEEPERS = SLEEPERS_OFFSET // 4


class Channels:
    """Word indexes and slot offsets of one rank's channels to and from each peer (computed once per rank), and
    typed views of the whole clique segment."""

    def __init__(self, fabric, rank: int):
        nrank = fabric.nrank
        self.peers = np.array([peer for peer in range(nrank) if peer != rank], np.int64)
        index = {int(peer): i for i, peer in enumerate(self.peers)}
        self.slot_of_rank = np.array([index.get(r, -1) for r in range(nrank)], np.int64)
        self.out_posted = np.array([fabric.posted_offset(rank, p) >> 2 for p in self.peers], np.int64)
        self.out_consumed = np.array([fabric.consumed_offset(rank, p) >> 2 for p in self.peers], np.int64)
        self.in_posted = np.array([fabric.posted_offset(p, rank) >> 2 for p in self.peers], np.int64)
        self.in_consumed = np.array([fabric.consumed_offset(p, rank) >> 2 for p in self.peers], np.int64)
        self.out_slot = np.array([[self._slot(fabric, rank, p, parity) for parity in (0, 1)] for p in self.peers],
                                 np.int64).reshape(-1, 2)
        self.in_slot = np.array([[self._slot(fabric, p, rank, parity) for parity in (0, 1)] for p in self.peers],
                                np.int64).reshape(-1, 2)
        raw = fabric.raw
        self.words = fabric.words
        self.heads = raw[:raw.size // 8 * 8].view(np.int64)
        self.clocks = self.heads.view(np.float64)
        self.raw = raw[:raw.size // 8 * 8]
        self.header = np.zeros(_HEADER_WORDS, np.int64)
        self.done = np.zeros(len(self.peers), np.uint8)
        self.wake = np.zeros(2 * len(self.peers), np.uint8)
        self.latest = np.zeros(1, np.float64)
        self.base_address = fabric.base_address

    @staticmethod
    def _slot(fabric, src: int, dst: int, parity: int) -> int:
        header, _, _ = fabric.slot_views(src, dst, parity)
        return header.ctypes.data - fabric.base_address


@njit(nogil=True, cache=True)
def _post(words, heads, raw, send, out_posted, out_consumed, out_slot, header, done, wake, rounds):
    """Post the bytes `send` with `header` to every peer not `done` yet; -1 when all are posted, else the index
    of a peer whose slot was not free within the spin (call again once it is)."""
    count = send.size
    for i in range(out_posted.size):
        if done[i]:
            continue
        k = load(words, out_posted[i]) + 1
        if not spin_until(words, out_consumed[i], k - 2, rounds):
            return i
        slot = out_slot[i, k & 1]
        head = slot // 8
        for j in range(8):
            heads[head + j] = header[j]
        base = slot + 64
        raw[base:base + count] = send
        exchange(words, out_posted[i], k & 0xFFFFFFFF)
        if load(words, out_posted[i] + 1) != 0:
            wake[2 * i] = 1
        done[i] = 1
    return -1


@njit(nogil=True, cache=True)
def _arrived(words, heads, clocks, in_posted, in_consumed, in_slot, header, latest, rounds):
    """Wait (spinning) for every peer's message and check its signature against `header` (7 words); -1 when all
    are there and match, i >= 0 when peer i's message is not there yet, -2 - i when it does not match."""
    for i in range(in_posted.size):
        k = load(words, in_consumed[i]) + 1
        if not spin_until(words, in_posted[i], k, rounds):
            return i
        head = in_slot[i, k & 1] // 8
        for j in range(7):
            if heads[head + j] != header[j]:
                return -2 - i
        clock = clocks[head + 7]
        if clock > latest[0]:
            latest[0] = clock
    return -1


@njit(nogil=True, cache=True)
def _release(words, in_consumed, wake):
    """Hand every peer's slot back (consumed = k), noting in `wake` the counters with an announced sleeper."""
    for i in range(in_consumed.size):
        k = load(words, in_consumed[i]) + 1
        exchange(words, in_consumed[i], k & 0xFFFFFFFF)
        if load(words, in_consumed[i] + 1) != 0:
            wake[2 * i + 1] = 1


def eligible(ex: Exchange, send: np.ndarray, dtype: DataType) -> bool:
    """Whether an allReduce of `send` takes this path (the same answer on every rank: a function of the call)."""
    return 0 < send.nbytes <= MAX_BYTES and send.nbytes <= ex.slot


def all_reduce(ex: Exchange, channels: Channels, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType,
               scratch: Scratch, posted: np.ndarray | None = None) -> None:
    """One rank's side of a small allReduce. `posted` (flags per peer) names the peers this call's message was
    already posted to, by the lean path (fastpath.py) that handed the rest of the call over."""
    fabric, rank = ex.fabric, ex.rank
    header = channels.header
    header[:6] = ex.signature.fields()
    header[6] = send.nbytes
    header[7] = np.float64(ex.clock_us).view(np.int64)
    done, wake = channels.done, channels.wake
    done[:] = 0 if posted is None else posted
    wake[:] = 0
    words, heads = channels.words, channels.heads
    peers = channels.peers
    payload = send.view(np.uint8)
    while True:
        waiting = _post(words, heads, channels.raw, payload, channels.out_posted, channels.out_consumed,
                        channels.out_slot, header, done, wake, SPIN_ROUNDS)
        if waiting < 0:
            break
        peer = int(peers[waiting])
        k = int(words[channels.out_posted[waiting]]) + 1
        fabric.wait_until(fabric.consumed_offset(rank, peer), k - 2, rank, peer, ex.timeout,
                          f"a free slot towards rank {peer}")
    _wake(channels, wake)
    latest = channels.latest
    latest[0] = ex.latest_peer_clock_us
    while True:
        state = _arrived(words, heads, channels.clocks, channels.in_posted, channels.in_consumed,
                         channels.in_slot, header, latest, SPIN_ROUNDS)
        if state == -1:
            break
        if state <= -2:  # a mismatched call: the general receive reports it
            ex.receive(int(peers[-2 - state]), send.nbytes)
            raise AssertionError("unreachable: the signatures differ")
        peer = int(peers[state])
        k = int(words[channels.in_consumed[state]]) + 1
        fabric.wait_until(fabric.posted_offset(peer, rank), k, rank, peer, ex.timeout, f"a message from rank {peer}")
    ex.latest_peer_clock_us = float(latest[0])
    parts = []
    raw, nbytes = channels.raw, send.nbytes
    for r in range(len(channels.slot_of_rank)):
        i = channels.slot_of_rank[r]
        if i < 0:
            parts.append(send)
            continue
        start = int(channels.in_slot[i, (int(words[channels.in_consumed[i]]) + 1) & 1]) + MESSAGE_HEADER_BYTES
        parts.append(raw[start:start + nbytes].view(send.dtype))
    reduce_ordered(parts, recv, op, dtype, scratch)
    wake[:] = 0
    _release(words, channels.in_consumed, wake)
    _wake(channels, wake)


#: Columns of the lean path's `Plan.chan` (fastpath.py): word indexes of the counters, then byte offsets of the two
#: slots out and in (the arrays of `Channels`, side by side).
OUT_POSTED, OUT_CONSUMED, IN_POSTED, IN_CONSUMED, OUT_SLOT, IN_SLOT = 0, 1, 2, 3, 4, 6
#: Layout of the int64 `io` array of the lean path's calls: any wake needed, the latest peer clock (float64 bits),
#: the slot parity of each arrived message (bit i: peer i), then per peer the done flags and the wake flags (two per
#: peer: its posted counter, its consumed counter).
IO_WAKE, IO_CLOCK, IO_PARITY, IO_DONE = 0, 1, 2, 3


@njit(nogil=True, cache=True)
def _note_wakes(io, npeers):
    for j in range(IO_DONE + npeers, io.size):
        if io[j]:
            io[IO_WAKE] = 1


@njit(nogil=True, cache=True)
def exchange_all(raw, send, chan, header, io, rounds, fresh):
    """The lean path's post-and-wait (fastpath.py), `_post` then `_arrived` in one compiled call: post `send` with
    `header` to every peer not done yet, then wait (at most `rounds` polls per counter) for every peer's message and
    check its signature; nothing is consumed. `fresh` starts a call (clears `io`). Returns -1 when every message is
    there and matches (io holds the latest peer clock and the slot parities), i for a peer i whose slot was not free
    yet, npeers + i for a peer i whose message is not there yet, -2 - i for a peer i whose message does not match."""
    words = raw.view(np.uint32)
    heads = raw.view(np.int64)
    npeers = chan.shape[0]
    clock = io[IO_CLOCK:IO_CLOCK + 1].view(np.float64)
    if fresh:
        io[:] = 0
        clock[0] = header.view(np.float64)[7]
    done, wake = io[IO_DONE:IO_DONE + npeers], io[IO_DONE + npeers:]
    waiting = _post(words, heads, raw, send, chan[:, OUT_POSTED], chan[:, OUT_CONSUMED],
                    chan[:, OUT_SLOT:OUT_SLOT + 2], header, done, wake, rounds)
    _note_wakes(io, npeers)
    if waiting >= 0:
        return waiting
    state = _arrived(words, heads, raw.view(np.float64), chan[:, IN_POSTED], chan[:, IN_CONSUMED],
                     chan[:, IN_SLOT:IN_SLOT + 2], header, clock, rounds)
    if state >= 0:
        return npeers + state
    if state < -1:
        return state
    parity = 0
    for i in range(npeers):
        parity |= ((load(words, chan[i, IN_CONSUMED]) + 1) & 1) << i
    io[IO_PARITY] = parity
    return -1


@njit(nogil=True, cache=True)
def release_all(raw, chan, io):
    """The lean path's `_release`: every peer's slot handed back, with the wake flags of `io`."""
    npeers = chan.shape[0]
    io[IO_WAKE] = 0
    io[IO_DONE + npeers:] = 0
    _release(raw.view(np.uint32), chan[:, IN_CONSUMED], io[IO_DONE + npeers:])
    _note_wakes(io, npeers)


def _wake(channels: Channels, wake: np.ndarray) -> None:
    """The futex wakes the compiled phases found necessary (a sleeper had announced itself)."""
    if not wake.any():
        return
    base = channels.base_address
    for i in np.flatnonzero(wake):
        peer_index, consumed = divmod(int(i), 2)
        index = channels.in_consumed[peer_index] if consumed else channels.out_posted[peer_index]
        futex.wake(base + int(index) * 4)


def warm() -> None:
    """Load (or compile) the compiled message code now (atomics.warm, and this module's phases): the first call of
    compiled code in a process costs about a second, more when several rank processes compile at once, which must
    not fall into a collective's wait for its peers. cnclInitComms calls it once the ranks have joined."""
    atomics.warm()
    words = np.zeros(64, np.uint32)
    heads = words.view(np.int64)
    none = np.zeros(0, np.int64)
    pairs = np.zeros((0, 2), np.int64)
    flags = np.zeros(2, np.uint8)
    _post(words, heads, words.view(np.uint8), words.view(np.uint8)[:4], none, none, pairs, heads[:8], flags, flags, 1)
    _arrived(words, heads, heads.view(np.float64), none, none, pairs, heads[:8], np.zeros(1, np.float64), 1)
    _release(words, none, flags)
    chan = np.zeros((0, 8), np.int64)
    io = np.zeros(IO_DONE, np.int64)
    exchange_all(words.view(np.uint8), words.view(np.uint8)[:4], chan, heads[:8], io, 1, 1)
    release_all(words.view(np.uint8), chan, io)
