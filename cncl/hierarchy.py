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
from .reduction import Scratch

#: From this many bytes (the same on every rank: a function of the call) an allReduce across hosts goes in stages;
#: below, the flat algorithm's single exchange costs fewer messages.
MIN_BYTES = 256 * 1024


class SubExchange:
    """The messages of `ex` among the ranks `members` (global ranks), addressed by their index in `members`: the
    algorithms of algorithms.py run unchanged on a part of the clique."""

    def __init__(self, ex: Exchange, members: list[int]):
        self.ex, self.members = ex, members
        self.rank = members.index(ex.rank)
        self.slot, self.network = ex.slot, ex.network  # (a network: the algorithms keep to their message paths)

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


def eligible(ex: Exchange, send: np.ndarray, nrank: int) -> bool:
    """Whether an allReduce of `send` goes in stages (the same answer on every rank)."""
    if ex.network is None or send.nbytes < MIN_BYTES or send.size < nrank:
        return False
    by_host = ex.network.by_host
    return len(by_host) > 1 and len({len(ranks) for ranks in by_host}) == 1


def all_reduce(ex: Exchange, send: np.ndarray, recv: np.ndarray, op: int, dtype: DataType, scratch: Scratch) -> None:
    by_host = ex.network.by_host
    local = by_host[ex.network.local_host]
    width, mine = len(local), local.index(ex.rank)
    host, across = SubExchange(ex, local), SubExchange(ex, [ranks[mine] for ranks in by_host])
    per = ex.slot // dtype.size
    for start, stop in algorithms.windows(send.size, per * width):
        pieces = algorithms.split(start, stop, width)
        piece = pieces[mine]
        peers = [peer for peer in range(width) if peer != mine]
        for peer in peers:
            host.send(peer, send[pieces[peer]])
        algorithms.gather_and_reduce(host, width, send[piece], recv[piece], op, dtype, scratch)
        algorithms.all_reduce(across, len(by_host), recv[piece], recv[piece], op, dtype, scratch)
        for peer in peers:
            host.send(peer, recv[piece])
        for peer in peers:
            np.copyto(recv[pieces[peer]], algorithms.receive_as(host, peer, recv[pieces[peer]]))
            host.release(peer)
