"""One rank's side of each collective, over an Exchange, on numpy views of device memory.

Every collective walks its buffers in windows sized so that each message fits a channel slot, and each window is
"post every message, then receive every message": a rank never waits to send, so no cycle of waits can form.
Contributions are always combined in rank order, so every rank computes bitwise the same result.
"""
from __future__ import annotations

import numpy as np

from mlusim.lazymodule import LazyModule

from .channel import Exchange
from .datatypes import DataType
from .reduction import Scratch, reduce_ordered

#: the numba halves (small messages, zero copy), imported on first use: loading cncl does not load numba
tiny, zerocopy = LazyModule(f"{__package__}.tiny"), LazyModule(f"{__package__}.zerocopy")

#: Below this many bytes an allReduce sends whole windows to every peer and reduces everything locally (one
#: exchange per window); above, it reduce-scatters then all-gathers (two exchanges, 1/n of the reduction each).
DIRECT_ALL_REDUCE_BYTES = 256 * 1024


def windows(count: int, per: int) -> list[tuple[int, int]]:
    """[start, stop) element windows of at most `per` elements; one empty window when count is 0, so that even an
    empty call is matched against its peers."""
    if count == 0:
        return [(0, 0)]
    return [(start, min(start + per, count)) for start in range(0, count, per)]


def split(start: int, stop: int, parts: int) -> list[slice]:
    """`parts` nearly equal consecutive slices of [start, stop)."""
    length = stop - start
    edges = [start + length * j // parts for j in range(parts + 1)]
    return [slice(edges[j], edges[j + 1]) for j in range(parts)]


def _peers(ex: Exchange, nrank: int) -> list[int]:
    return [peer for peer in range(nrank) if peer != ex.rank]


def _per_message(ex: Exchange, dtype: DataType) -> int:
    return ex.slot // dtype.size


def receive_as(ex: Exchange, peer: int, like: np.ndarray) -> np.ndarray:
    return ex.receive(peer, like.nbytes).view(like.dtype)


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst = src, unless they are the same memory (the calls reject any other overlap)."""
    if dst.size and not np.may_share_memory(dst, src):
        np.copyto(dst, src)


def gather_and_reduce(ex: Exchange, nrank: int, own: np.ndarray, out: np.ndarray, op: int, dtype: DataType,
                       scratch: Scratch) -> None:
    """out = reduction, in rank order, of `own` and the matching message of every peer."""
    parts = [own if peer == ex.rank else receive_as(ex, peer, own) for peer in range(nrank)]
    reduce_ordered(parts, out, op, dtype, scratch)
    for peer in _peers(ex, nrank):
        ex.release(peer)


def _zero_copy(ex: Exchange, nrank: int, buffers: list[np.ndarray], total_bytes: int,
               memory: zerocopy.PeerMemory | None, work, shapes: list[np.ndarray] | None = None,
               willing: bool = True) -> bool:
    """Run `work(views)` on the ranks' memory directly (zerocopy.py) when every rank can (and is `willing`);
    False when this call must take the copy path. `total_bytes` must be the same on every rank (a function of the
    call's count)."""
    if (memory is None or ex.network is not None or not 1 < nrank <= zerocopy.MAX_RANKS
            or total_bytes < zerocopy.min_bytes()):
        return False
    views = zerocopy.connect(ex, nrank, buffers, memory, shapes, willing)
    if views is None:
        zerocopy.STATS["copy"] += 1
        return False
    work(views)
    zerocopy.finish(ex, nrank)
    zerocopy.STATS["zero_copy"] += 1
    return True


def sends_whole_buffer(send: np.ndarray, nrank: int) -> bool:
    """Whether an allReduce of `send` sends every peer the whole buffer (direct); else reduce-scatter + all-gather.
    The same answer on every rank: a function of the call."""
    return send.nbytes <= DIRECT_ALL_REDUCE_BYTES or send.size < nrank or nrank == 1


def all_reduce(ex: Exchange, nrank: int, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType,
               scratch: Scratch, memory: zerocopy.PeerMemory | None = None) -> None:
    def reduce_shared(views: list) -> None:
        # each unit of every rank's send buffer is reduced in rank order by one rank and written into every
        # rank's recv buffer
        zerocopy.reduce_shared(ex, memory, [sent for sent, _ in views], [received for _, received in views], op,
                               dtype, scratch)

    if send.size >= nrank and _zero_copy(ex, nrank, [send, recv], send.nbytes, memory, reduce_shared):
        return
    if nrank > 1 and ex.network is None and tiny.eligible(ex, send, dtype):
        channels = ex.fabric.fast_channels.get(ex.rank)
        if channels is None:
            channels = ex.fabric.fast_channels[ex.rank] = tiny.Channels(ex.fabric, ex.rank)
        tiny.all_reduce(ex, channels, send, recv, op, dtype, scratch)
        return
    peers = _peers(ex, nrank)
    per = _per_message(ex, dtype)
    if sends_whole_buffer(send, nrank):
        for start, stop in windows(send.size, per):
            for peer in peers:
                ex.send(peer, send[start:stop])
            gather_and_reduce(ex, nrank, send[start:stop], recv[start:stop], op, dtype, scratch)
        return
    for start, stop in windows(send.size, per * nrank):
        pieces = split(start, stop, nrank)
        mine = pieces[ex.rank]
        for peer in peers:
            ex.send(peer, send[pieces[peer]])
        # The reduced piece goes straight into the message to the first peer (hot in cache), is copied from there
        # to the other peers and to recv: cheaper than reducing into cold recv memory and copying it out.
        own = send[mine]
        reduced = ex.reserve(peers[0], own.nbytes).view(own.dtype)
        gather_and_reduce(ex, nrank, own, reduced, op, dtype, scratch)
        ex.publish(peers[0])
        for peer in peers[1:]:
            ex.send(peer, reduced)
        np.copyto(recv[mine], reduced)
        for peer in peers:
            np.copyto(recv[pieces[peer]], receive_as(ex, peer, recv[pieces[peer]]))
            ex.release(peer)


def broadcast(ex: Exchange, nrank: int, send: np.ndarray | None, recv: np.ndarray, root: int,
              dtype: DataType, memory: zerocopy.PeerMemory | None = None) -> None:
    own_send = send if send is not None else recv[:0]  # every rank describes two buffers; the root's send is
    if _zero_copy(ex, nrank, [own_send, recv], recv.nbytes, memory,  # shaped like the recv buffers
                  lambda views: zerocopy.broadcast_from(views, ex.rank, root), shapes=[recv, recv]):
        return
    for start, stop in windows(recv.size, _per_message(ex, dtype)):
        if ex.rank == root:
            for peer in _peers(ex, nrank):
                ex.send(peer, send[start:stop])
            _copy(recv[start:stop], send[start:stop])
        else:
            np.copyto(recv[start:stop], receive_as(ex, root, recv[start:stop]))
            ex.release(root)


def reduce(ex: Exchange, nrank: int, send: np.ndarray, recv: np.ndarray | None, op: int, root: int,
           dtype: DataType, scratch: Scratch, memory: zerocopy.PeerMemory | None = None) -> None:
    own_recv = recv if recv is not None else send[:0]  # every rank describes two buffers; the root's recv is
    if send.size >= nrank and _zero_copy(  # shaped like the send buffers
            ex, nrank, [send, own_recv], send.nbytes, memory,
            lambda views: zerocopy.reduce_shared(ex, memory, [sent for sent, _ in views], [views[root][1]], op,
                                                 dtype, scratch), shapes=[send, send]):
        return
    for start, stop in windows(send.size, _per_message(ex, dtype)):
        if ex.rank == root:
            gather_and_reduce(ex, nrank, send[start:stop], recv[start:stop], op, dtype, scratch)
        else:
            ex.send(root, send[start:stop])


def all_gather(ex: Exchange, nrank: int, send: np.ndarray, recv: np.ndarray, dtype: DataType,
               memory: zerocopy.PeerMemory | None = None) -> None:
    if _zero_copy(ex, nrank, [send, recv], recv.nbytes, memory,
                  lambda views: zerocopy.gather_all(views, ex.rank)):
        return
    count = send.size
    for start, stop in windows(count, _per_message(ex, dtype)):
        for peer in _peers(ex, nrank):
            ex.send(peer, send[start:stop])
        _copy(recv[ex.rank * count + start:ex.rank * count + stop], send[start:stop])
        for peer in _peers(ex, nrank):
            target = recv[peer * count + start:peer * count + stop]
            np.copyto(target, receive_as(ex, peer, target))
            ex.release(peer)


def reduce_scatter(ex: Exchange, nrank: int, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType,
                   scratch: Scratch, memory: zerocopy.PeerMemory | None = None) -> None:
    if _zero_copy(ex, nrank, [send, recv], send.nbytes, memory,
                  lambda views: zerocopy.reduce_own_chunk(views, ex.rank, op, dtype, scratch)):
        return
    count = recv.size
    for start, stop in windows(count, _per_message(ex, dtype)):
        for peer in _peers(ex, nrank):
            ex.send(peer, send[peer * count + start:peer * count + stop])
        own = send[ex.rank * count + start:ex.rank * count + stop]
        gather_and_reduce(ex, nrank, own, recv[start:stop], op, dtype, scratch)


def all_to_all(ex: Exchange, nrank: int, send: np.ndarray, recv: np.ndarray, dtype: DataType,
               memory: zerocopy.PeerMemory | None = None) -> None:
    if _zero_copy(ex, nrank, [send, recv], send.nbytes, memory, lambda views: zerocopy.exchange_all(views, ex.rank),
                  willing=not np.shares_memory(send, recv)):  # in place: every rank takes the copy path
        return
    count = send.size // nrank
    for start, stop in windows(count, _per_message(ex, dtype)):
        for peer in _peers(ex, nrank):
            ex.send(peer, send[peer * count + start:peer * count + stop])
        own = slice(ex.rank * count + start, ex.rank * count + stop)
        _copy(recv[own], send[own])
        for peer in _peers(ex, nrank):
            target = recv[peer * count + start:peer * count + stop]
            np.copyto(target, receive_as(ex, peer, target))
            ex.release(peer)
