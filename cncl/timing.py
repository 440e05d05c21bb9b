"""Modelled device time of collectives (an estimate, like mlusim.cost).

The model is the ring algorithm over the board's device-to-device link (MLU-Link): each of the ring's steps moves
one chunk over one link and pays the link latency.
  allReduce       2 (n - 1) steps of N / n bytes      (reduce-scatter then all-gather)
  reduceScatter   (n - 1) steps of N / n bytes        (N = the send buffer, n * count elements)
  allGather       (n - 1) steps of N / n bytes        (N = the receive buffer)
  alltoAll(v)     (n - 1) steps of N / n bytes        (N = the bytes this rank sends)
  broadcast       (n - 1) latencies + N / bandwidth   (pipelined chain)
  reduce          (n - 1) latencies + N / bandwidth   (pipelined chain)
  send / recv     1 latency + N / bandwidth
with bandwidth = min(link bandwidth, GDRAM bandwidth) of the board and LINK_LATENCY_US per step. A single-rank
clique copies on the device: 2 N / GDRAM bandwidth (read + write).
"""
from __future__ import annotations

from mlusim.arch import BoardSpec

from . import channel

#: Latency of one step over MLU-Link, chosen (not published): the order of a PCIe/MLU-Link round trip.
LINK_LATENCY_US = 5.0
US = 1e6


def collective_us(spec: BoardSpec, kind: int, nbytes: int, nrank: int) -> float:
    """Modelled duration of one rank's part of collective `kind` over `nbytes` (see the module doc for N)."""
    if nrank == 1:
        return 2 * nbytes / spec.gdram_bandwidth * US
    rate = min(spec.link_bandwidth, spec.gdram_bandwidth)
    steps = nrank - 1
    if kind == channel.ALL_REDUCE:
        return 2 * steps * (LINK_LATENCY_US + nbytes / nrank / rate * US)
    if kind in (channel.REDUCE_SCATTER, channel.ALL_GATHER, channel.ALL_TO_ALL, channel.ALL_TO_ALLV):
        return steps * (LINK_LATENCY_US + nbytes / nrank / rate * US)
    if kind in (channel.BROADCAST, channel.REDUCE):
        return steps * LINK_LATENCY_US + nbytes / rate * US
    return LINK_LATENCY_US + nbytes / rate * US
