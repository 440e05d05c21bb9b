"""Zero-copy collectives: ranks read and write each other's device memory directly.

When every rank's buffers live in shareable GDRAM (`mlusim.host.sharedmem`: a memfd arena per process, which the peers
map through /proc/<pid>/fd/<fd>), allReduce, broadcast, allGather and reduceScatter need no message slots for their
data. allReduce: the count is cut into units shared out through atomic counters; a unit is reduced by one rank,
reading it from every rank's send buffer in rank order, and written into every rank's recv buffer (per rank N
bytes read and N written, one pass). The others: every rank pulls what it needs into its own buffers. Results stay
bitwise identical on every rank (each element is computed once, in rank order).

Protocol (mismatched calls, dead peers, timeouts and aborts behave as on the copy path):
  1. every rank posts a descriptor to every peer over the ordinary channels (so the call's signature is checked):
     whether its buffers are shareable, its arena's identity, the offsets of its buffers, and whether it has every
     peer's arena mapped already; then receives the peers'.
  2. only when some rank still had to map a peer's arena: every rank posts whether it could, then receives the
     peers' answers. Every rank decides from the same information, so all take the same path: zero-copy, or
     (a private buffer, an arena that cannot be mapped) the copy path.
  3. the work, then a barrier on the ranks' done counters (a rank's buffers are in use by its peers until then).
"""
from __future__ import annotations

import os

import numpy as np
from numba import njit

from mlusim.host import sharedmem
from mlusim.host.atomics import fetch_add

from .channel import Exchange
from .datatypes import DataType
from .linereduce import copy_bytes, fence, reduce_range, store_fence, streamable
from .reduction import reduce_ordered

#: Collectives of at least this many bytes (the call's total) go zero-copy when they can. Below, the copy path's
#: single exchange beats the two synchronisations zero-copy needs (measurements: docs/cncl.md, "Thresholds").
DEFAULT_MIN_BYTES = 512 * 1024
#: Units of work are multiples of this many elements (the same on every rank).
GRAIN = 4096
#: Output buffers of at least this many bytes are written with streaming stores (linereduce.py); smaller ones
#: through the caches, where whoever reads them next finds them (where streaming starts to win: docs/cncl.md,
#: "Thresholds").
DEFAULT_STREAMING_BYTES = 1024 * 1024
#: int64 words between the work counters of the ranks' ranges (one cache line each).
COUNTER_STRIDE = 8
#: Work counters fit the clique header for this many ranks; larger cliques take the copy path.
MAX_RANKS = 32
_IDENTITY_WORDS = 5
_HEADER_WORDS = 2 + _IDENTITY_WORDS  # shareable, ready, identity
#: Calls of this process that went zero-copy, and large calls that had to take the copy path (for tests).
STATS = {"zero_copy": 0, "copy": 0}


def min_bytes() -> int:
    text = os.environ.get("MLUSIM_CNCL_ZERO_COPY_BYTES")
    return DEFAULT_MIN_BYTES if text is None else int(text)


def streaming_bytes() -> int:
    text = os.environ.get("MLUSIM_CNCL_STREAMING_BYTES")
    return DEFAULT_STREAMING_BYTES if text is None else int(text)


def _streams(outputs: tuple) -> bool:
    """Whether a kernel writes these outputs with streaming stores: large enough, and they can be."""
    return outputs[0].nbytes >= streaming_bytes() and streamable(outputs)


class PeerMemory:
    """The mapped arenas of the peers of one rank (kept until the communicator is destroyed), and where the
    clique's shared work counter stood when this rank's next zero-copy call begins."""

    def __init__(self):
        self.arenas: dict[int, tuple[tuple, np.ndarray | None]] = {}
        self.claimed: np.ndarray | None = None  # the work counters' values, once known

    def ready(self, peers: list[int]) -> bool:
        return all(self.arenas.get(peer, (None, None))[1] is not None for peer in peers)

    def map(self, peer: int, identity: tuple) -> np.ndarray | None:
        known = self.arenas.get(peer)
        if known is not None and known[0] == identity:
            return known[1]
        try:
            mapped = sharedmem.map_peer(identity)
        except (OSError, ValueError):
            mapped = None
        self.arenas[peer] = (identity, mapped)
        return mapped

    def clear(self) -> None:
        self.arenas.clear()


def _descriptor(buffers: list[np.ndarray], ready: bool, willing: bool) -> np.ndarray:
    words = [0] * (_HEADER_WORDS + len(buffers))
    located = sharedmem.locate(buffers) if willing else None
    if located is not None:
        words[0] = 1
        words[2:_HEADER_WORDS] = located[0]
        words[_HEADER_WORDS:] = located[1]
    words[1] = int(ready)
    return np.array(words, np.int64)


def _round(ex: Exchange, peers: list[int], words: np.ndarray) -> dict[int, np.ndarray]:
    for peer in peers:
        ex.send(peer, words)
    answers = {}
    for peer in peers:
        answers[peer] = ex.receive(peer, words.nbytes).view(np.int64).copy()
        ex.release(peer)
    return answers


def connect(ex: Exchange, nrank: int, buffers: list[np.ndarray], memory: PeerMemory,
            shapes: list[np.ndarray] | None = None, willing: bool = True):
    """Steps 1 and 2. Returns, per rank, its buffers as arrays of this process (views of the peers' mapped
    arenas), or None when this call must take the copy path (the same answer on every rank; a rank that is not
    `willing` sends every rank there). A peer's buffer k has the size and dtype of shapes[k] (default: this rank's
    buffers[k]), or is empty when the peer has none."""
    peers = [peer for peer in range(nrank) if peer != ex.rank]
    words = _descriptor(buffers, memory.ready(peers), willing)
    theirs = _round(ex, peers, words)
    if not words[0] or not all(theirs[peer][0] for peer in peers):
        return None
    arenas = {}
    if not (words[1] and all(theirs[peer][1] for peer in peers)):
        for peer in peers:
            arenas[peer] = memory.map(peer, tuple(int(v) for v in theirs[peer][2:_HEADER_WORDS]))
        ok = np.array([all(arena is not None for arena in arenas.values())], np.int64)
        answers = _round(ex, peers, ok)  # always: the peers wait for this rank's answer
        if not (ok[0] and all(answer[0] for answer in answers.values())):
            return None
    else:
        arenas = {peer: memory.arenas[peer][1] for peer in peers}
    views = []
    for rank in range(nrank):
        if rank == ex.rank:
            views.append(buffers)
            continue
        arena, offsets = arenas[rank], theirs[rank][_HEADER_WORDS:]
        views.append([arena[int(offset):int(offset) + shape.nbytes].view(shape.dtype) if offset >= 0 else shape[:0]
                      for offset, shape in zip(offsets, shapes or buffers)])
    return views


def finish(ex: Exchange, nrank: int) -> None:
    """Step 3's handshake: this rank is done with its peers' buffers; wait until they are done with its own.

    A barrier on the ranks' done counters (fabric.done_offset), cheaper than a round of messages: every rank of
    the clique took the same path in step 2, so the counters move in step."""
    fabric = ex.fabric
    done = fabric.word(fabric.done_offset(ex.rank)) + 1
    fabric.set_word(fabric.done_offset(ex.rank), done)
    for peer in range(nrank):
        if peer != ex.rank:
            fabric.wait_until(fabric.done_offset(peer), done, ex.rank, peer, ex.timeout,
                              "the end of a zero-copy operation")


# ---- the reduction kernel ---------------------------------------------------------------------------------------

@njit(nogil=True, cache=True)
def claim(counters, index):
    """Take the next unit of work counted by counters[index] (its value before the claim)."""
    return fetch_add(counters, index, 1)


@njit(nogil=True, cache=True)
def _reduce_kernel(inputs, outputs, op, counters, bases, rank, unit, streaming):
    """This rank's share of the reduction: the units of its own range first, then what is left of the others'
    ranges (each range has its own counter, COUNTER_STRIDE words apart), so a rank that runs late gets less."""
    count = inputs[0].size
    nrank = bases.size
    units = (count + unit - 1) // unit
    for step in range(nrank):
        owner = (rank + step) % nrank
        low = units * owner // nrank
        high = units * (owner + 1) // nrank
        while True:
            index = low + fetch_add(counters, owner * COUNTER_STRIDE, 1) - bases[owner]
            if index >= high:
                break
            reduce_range(inputs, outputs, op, index * unit, min((index + 1) * unit, count), streaming)
    store_fence()


def unit_of(count: int, nrank: int) -> int:
    """Elements per unit of work: about 16 units per rank, a multiple of GRAIN, at most 16 GRAINs (256 KiB of
    float32). The same on every rank."""
    per = -(-count // (16 * nrank))
    return min(max(-(-per // GRAIN) * GRAIN, GRAIN), 16 * GRAIN)


def advance(bases: np.ndarray, count: int) -> None:
    """Where the counters stand after a call: every rank's range counted once per unit, plus one claim of every
    rank that found the range exhausted."""
    nrank = bases.size
    units = -(-count // unit_of(count, nrank))
    for owner in range(nrank):
        bases[owner] += units * (owner + 1) // nrank - units * owner // nrank + nrank


def reduce_shared(ex: Exchange, memory: PeerMemory, inputs: list[np.ndarray], outputs: list[np.ndarray], op: int,
                  dtype: DataType, scratch) -> None:
    """allReduce and reduce: every output = the rank-order reduction of the inputs, the units of work shared out
    among the ranks through the clique's work counters."""
    if memory.claimed is None:
        memory.claimed = np.zeros(len(inputs), np.int64)
    reduce_into(inputs, outputs, op, dtype, scratch, ex.fabric.work_counters, memory.claimed, ex.rank)
    advance(memory.claimed, inputs[0].size)


def reduce_into(inputs: list[np.ndarray], outputs: list[np.ndarray], op: int, dtype: DataType, scratch,
                counters: np.ndarray, bases: np.ndarray, rank: int) -> None:
    """Every output = the rank-order reduction of the inputs (half and bfloat16 in float32, rounded once), the
    work shared with the peers through `counters` (which stood at `bases` when the call began)."""
    count = inputs[0].size
    unit = unit_of(count, bases.size)
    if not dtype.widens:
        _reduce_kernel(tuple(inputs), tuple(outputs), op, counters, bases, rank, unit, _streams(tuple(outputs)))
        return
    # half, bfloat16: numpy in float32, unit by unit
    nrank, units = bases.size, -(-count // unit)
    partial = scratch.array("zero-copy partial", dtype.storage, unit)
    for step in range(nrank):
        owner = (rank + step) % nrank
        low, high = units * owner // nrank, units * (owner + 1) // nrank
        while True:
            index = low + claim(counters, owner * COUNTER_STRIDE) - int(bases[owner])
            if index >= high:
                break
            start, stop = index * unit, min((index + 1) * unit, count)
            block = partial[:stop - start]
            reduce_ordered([part[start:stop] for part in inputs], block, op, dtype, scratch)
            for out in outputs:
                np.copyto(out[start:stop], block)


# ---- the other collectives: every rank pulls what it needs into its own buffers -----------------------------------

def copy_into(target: np.ndarray, source: np.ndarray) -> None:
    """target = source (same size); nothing when they are the same memory (an in-place call). Streaming stores
    for large copies; fenced either way."""
    if target.size == 0 or np.shares_memory(target, source):
        return
    target_bytes, source_bytes = target.reshape(-1).view(np.uint8), source.reshape(-1).view(np.uint8)
    copy_bytes(target_bytes, source_bytes, _streams((target_bytes,)))


def broadcast_from(views: list, rank: int, root: int) -> None:
    """Every rank copies the root's send buffer into its own recv buffer. views[r] = [send, recv] of rank r."""
    copy_into(views[rank][1], views[root][0])


def gather_all(views: list, rank: int) -> None:
    """allGather: rank r copies every rank's send buffer into its own recv buffer, its own first, then the others
    in rank order from r + 1 (so the ranks read different peers' memory at a time)."""
    recv, nrank = views[rank][1], len(views)
    count = views[rank][0].size
    for step in range(nrank):
        source = (rank + step) % nrank
        copy_into(recv[source * count:(source + 1) * count], views[source][0])


def exchange_all(views: list, rank: int) -> None:
    """alltoAll: rank r copies block r of every rank's send buffer into block p of its own recv buffer (its own
    first, then the others from rank + 1 on). Not in place: a peer may still read the block being overwritten."""
    recv, nrank = views[rank][1], len(views)
    count = recv.size // nrank
    for step in range(nrank):
        source = (rank + step) % nrank
        copy_into(recv[source * count:(source + 1) * count], views[source][0][rank * count:(rank + 1) * count])


def reduce_own_chunk(views: list, rank: int, op: int, dtype: DataType, scratch) -> None:
    """reduceScatter: rank r reduces chunk r of every rank's send buffer, in rank order, into its recv buffer
    (which may be chunk r of its own send buffer: in place)."""
    recv = views[rank][1]
    count = recv.size
    inputs = [views[source][0][rank * count:(rank + 1) * count] for source in range(len(views))]
    if count == 0:
        return
    if dtype.widens:  # half, bfloat16: numpy in float32
        reduce_ordered(inputs, recv, op, dtype, scratch)
        return
    reduce_range(tuple(inputs), (recv,), op, 0, count, _streams((recv,)))
    fence()
