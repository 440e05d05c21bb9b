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


def collective_us(spec: BoardSpec, kind: int, nbytes: int, nrank: int) -> float:
    """Modelled duration (µs, an estimate) of one rank's part of collective `kind` over `nbytes` (remembered: the
    same call is usually made again and again)."""
    key = (id(spec), kind, nbytes, nrank)
    known = _known.get(key)
    if known is None or known[0] is not spec:  # (an id of a spec since collected names another spec)
        known = _known.put(key, (spec, cost.collective_us(spec, _COST_KINDS[kind], nbytes, nrank)))
    return known[1]
