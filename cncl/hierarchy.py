"""Collectives across hosts in stages: the host's ranks first share the work over shared memory, then only one
rank per piece crosses the network, then the host shares the result (as NCCL's hierarchical algorithms do).

allReduce of a clique whose hosts hold the same number L of ranks, window by window (L slots' worth):
  1. inside every host, a reduce-scatter: the window is cut into L pieces, the host's rank of local index i
     reduces piece i of every local rank (in rank order) into its recv buffer;
  2. the ranks of local index i of every host (a "rail", one per local index) allReduce their piece over the
     network (algorithms.all_reduce on the rail, in host order);
  3. inside every host, an all-gather of the pieces into every local rank's recv buffer.
Each rank sends 2 (L-1)/L of the window to its host's ranks and 2 (H-1)/(H L) of it over the network (H hosts),
against 2 (n-1)/n of it, most of it over the network, for the flat algorithm. The result is each host's ranks
combined in rank order, then the hosts' partial results in host order: bitwise the same on every rank and from run
to run, though not the flat rank order of a clique on one host.
"""
from __future__ import annotations

import numpy as np

from . import algorithms
from .channel import Exchange, Signature
from .datatypes import DataType
from .reduction import Scratch, reduce_ordered

#: From this many bytes (the same on every rank: a function of the call) an allReduce across hosts goes in stages;
#: below, the flat algorithm's single exchange costs fewer messages.
MIN_BYTES = 256 * 1024


class SubExchange:
    """The messages of `ex` among the ranks `members` (global ranks), addressed by their index in `members`: the
    algorithms of algorithms.py run unchanged on a part of the clique."""

    def __init__(self, ex: Exchange, members: list[int]):
        self.ex, self.members = ex, members
        self.rank = members.index(ex.rank)
        self.slot, self.network, self.fabric = ex.slot, ex.network, ex.fabric

    def is_remote(self, peer: int) -> bool:
        return self.ex.is_remote(self.members[peer])

    def send(self, peer: int, data: np.ndarray, signature: Signature | None = None) -> None:
        self.ex.send(self.members[peer], data, signature)

    def reserve(self, peer: int, nbytes: int, signature: Signature | None = None) -> np.ndarray:
        return self.ex.reserve(self.members[peer], nbytes, signature)

    def publish(self, peer: int) -> None:
        self.ex.publish(self.members[peer])

    def receive(self, peer: int, nbytes: int, signature: Signature | None = None) -> np.ndarray:
        return self.ex.receive(self.members[peer], nbytes, signature)

    def release(self, peer: int) -> None:
        self.ex.release(self.members[peer])


def _layout(ex: Exchange) -> tuple[list[int], list[int]] | None:
    """(this host's ranks, this rank's rail) when every host holds the same number of ranks, else None."""
    host_of = ex.network.host_of
    hosts = max(host_of) + 1
    by_host = [[rank for rank, host in enumerate(host_of) if host == h] for h in range(hosts)]
    if len({len(ranks) for ranks in by_host}) != 1:
        return None
    local = by_host[host_of[ex.rank]]
    index = local.index(ex.rank)
    return local, [ranks[index] for ranks in by_host]


def eligible(ex: Exchange, send: np.ndarray, nrank: int) -> bool:
    """Whether an allReduce of `send` goes in stages (the same answer on every rank)."""
    return (ex.network is not None and send.nbytes >= MIN_BYTES and send.size >= nrank
            and _layout(ex) is not None and len(ex.network.hostnames) > 1)


def all_reduce(ex: Exchange, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType, scratch: Scratch) -> None:
    local, rail = _layout(ex)
    host, across = SubExchange(ex, local), SubExchange(ex, rail)
    width, mine = len(local), local.index(ex.rank)
    per = ex.slot // dtype.size
    for start, stop in algorithms.windows(send.size, per * width):
        pieces = algorithms.split(start, stop, width)
        piece = pieces[mine]
        for peer in range(width):
            if peer != mine:
                host.send(peer, send[pieces[peer]])
        parts = [send[piece] if peer == mine else host.receive(peer, send[piece].nbytes).view(send.dtype)
                 for peer in range(width)]
        reduce_ordered(parts, recv[piece], op, dtype, scratch)
        for peer in range(width):
            if peer != mine:
                host.release(peer)
        algorithms.all_reduce(across, len(rail), recv[piece], recv[piece], op, dtype, scratch)
        for peer in range(width):
            if peer != mine:
                host.send(peer, recv[piece])
        for peer in range(width):
            if peer != mine:
                target = recv[pieces[peer]]
                np.copyto(target, host.receive(peer, target.nbytes).view(target.dtype))
                host.release(peer)
