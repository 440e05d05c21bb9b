"""Modelled device time of collectives: the channel's call kinds mapped onto `mlusim.cost.collective_us`
(the ring model over the board's MLU-Link and its formulas are documented there and in docs/cost.md)."""
from __future__ import annotations

from mlusim import cost
from mlusim.arch import BoardSpec
from mlusim.memo import BoundedMemo

from . import channel

_COST_KINDS = {
    channel.ALL_REDUCE: cost.ALL_REDUCE, channel.REDUCE_SCATTER: cost.REDUCE_SCATTER,
    channel.ALL_GATHER: cost.ALL_GATHER, channel.ALL_TO_ALL: cost.ALL_TO_ALL, channel.ALL_TO_ALLV: cost.ALL_TO_ALL,
    channel.BROADCAST: cost.BROADCAST, channel.REDUCE: cost.REDUCE, channel.SEND_RECV: cost.SEND_RECV,
}


_known = BoundedMemo(4096)


def collective_us(spec: BoardSpec, kind: int, nbytes: int, nrank: int, hosts: int = 1) -> float:
    """Modelled duration (µs, an estimate) of one rank's part of collective `kind` over `nbytes` with ranks on
    `hosts` hosts (remembered: the same call is usually made again and again)."""
    key = (id(spec), kind, nbytes, nrank, hosts)
    known = _known.get(key)
    if known is None or known[0] is not spec:  # (an id of a spec since collected names another spec)
        known = _known.put(key, (spec, cost.collective_us(spec, _COST_KINDS[kind], nbytes, nrank, hosts)))
    return known[1]


def hosts_of(comm) -> int:
    """How many hosts the ranks of `comm`'s clique are on."""
    network = comm.fabric.network
    return 1 if network is None else len(network.hostnames)
