"""Analytic device-time model (an estimate, not a measurement).

Durations are in microseconds of modelled device time. This first model covers copies, fills and launches:
  - host <-> device copy: latency + bytes / PCIe bandwidth
  - device -> device copy on one device: latency + 2 * bytes / GDRAM bandwidth (read + write)
  - peer copy between devices: latency + bytes / min(link bandwidth, GDRAM bandwidth)
  - memset: latency + bytes / GDRAM bandwidth
  - kernel launch: the board's launch latency
"""
from __future__ import annotations

from .arch import BoardSpec

US = 1e6

HOST_TO_DEVICE = "h2d"
DEVICE_TO_HOST = "d2h"
DEVICE_TO_DEVICE = "d2d"
PEER_TO_PEER = "p2p"
HOST_TO_HOST = "h2h"


def copy_us(spec: BoardSpec, kind: str, nbytes: int) -> float:
    """Modelled time of a copy of `nbytes` in direction `kind`."""
    if kind in (HOST_TO_DEVICE, DEVICE_TO_HOST):
        rate = spec.pcie_bandwidth
        moved = nbytes
    elif kind == DEVICE_TO_DEVICE:
        rate = spec.gdram_bandwidth
        moved = 2 * nbytes
    elif kind == PEER_TO_PEER:
        rate = min(spec.link_bandwidth, spec.gdram_bandwidth)
        moved = nbytes
    elif kind == HOST_TO_HOST:
        return 0.0
    else:
        raise ValueError(f"unknown copy kind {kind!r}")
    return spec.copy_latency_us + moved / rate * US


def memset_us(spec: BoardSpec, nbytes: int) -> float:
    """Modelled time of filling `nbytes` of GDRAM."""
    return spec.copy_latency_us + nbytes / spec.gdram_bandwidth * US


def launch_us(spec: BoardSpec) -> float:
    """Modelled fixed cost of one kernel launch."""
    return spec.kernel_launch_us
