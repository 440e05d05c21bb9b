"""Analytic device-time model: how long work would take on the simulated board. An ESTIMATE, not a measurement.

Every duration is in microseconds of modelled device time; every rate comes from the board's `BoardSpec` (facts of
shared/reference/cambricon-api.md section 4) or from a constant below marked *chosen*. docs/cost.md gives each
formula with its source and what it leaves out.

  copies       host <-> device   copy_latency + bytes / PCIe bandwidth
               device -> device  copy_latency + 2 bytes / GDRAM bandwidth (read + write)
               peer -> peer      copy_latency + bytes / min(link, GDRAM bandwidth)
  memset       copy_latency + bytes / GDRAM bandwidth
  cnnl op      launch + max(compute, memory)                                                   (a roofline)
               compute = flops / (peak of its unit and data type x efficiency of that unit)
               memory  = bytes / GDRAM bandwidth; for tensor-unit ops at least the traffic of a matmul tiled
                         through one cluster's SRAM: flops x itemsize / tile edge
  BANG kernel  launch + waves x max(copy time of one task, compute time of one task)   (tasks run in waves)
  collective   ring steps over MLU-Link: steps x (link latency + chunk / min(link, GDRAM bandwidth))
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from .arch import BoardSpec

US = 1e6

HOST_TO_DEVICE = "h2d"
DEVICE_TO_HOST = "d2h"
DEVICE_TO_DEVICE = "d2d"
PEER_TO_PEER = "p2p"
HOST_TO_HOST = "h2h"

#: The two execution units of an MLU core: the tensor unit (MACs of matmul / convolution) and the vector unit.
TENSOR = "tensor"
VECTOR = "vector"

#: Chosen: fraction of the tensor unit's peak a large library matmul reaches (cuBLAS-class GEMMs reach 80-90%).
TENSOR_EFFICIENCY = 0.85
#: Chosen: float64 has no MAC array; it is emulated at this fraction of the float32 rate.
DOUBLE_FRACTION = 0.25
#: Chosen: on-chip copies (NRAM/WRAM/SRAM) move this many bytes per core per cycle.
ONCHIP_BYTES_PER_CYCLE = 64
#: Chosen: latency of one ring step over MLU-Link (the order of a PCIe / MLU-Link round trip).
LINK_LATENCY_US = 5.0

#: Bytes per element of the rate keys (BoardSpec.macs_per_cycle keys, plus "double").
ITEMSIZE = {"int8": 1, "int16": 2, "half": 2, "bfloat16": 2, "float": 4, "double": 8}

#: Collective kinds, as cncl names them.
ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, BROADCAST, REDUCE = (
    "allReduce", "reduceScatter", "allGather", "broadcast", "reduce")
ALL_TO_ALL, SEND_RECV = "alltoAll", "sendRecv"


# ---- copies and launches ----------------------------------------------------------------------------------------

def copy_us(spec: BoardSpec, kind: str, nbytes: int) -> float:
    """Modelled time of a copy of `nbytes` in direction `kind` (h2d, d2h, d2d, p2p, h2h)."""
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


# ---- compute rates ----------------------------------------------------------------------------------------------

def board_peak_ops(spec: BoardSpec, dtype: str) -> float:
    """Peak tensor ops/s of the whole board (all its chips): what the vendor publishes (MLU370-X8: 96 TFLOPS half)."""
    return spec.peak_ops(dtype) * spec.chips_per_board


def _macs_per_cycle(spec: BoardSpec, dtype: str) -> float:
    if dtype == "double":
        return spec.macs_per_cycle.get("float", 0) * DOUBLE_FRACTION
    return spec.macs_per_cycle.get(dtype, 0) or spec.macs_per_cycle.get("float", 0)


def tensor_ops_per_s(spec: BoardSpec, dtype: str) -> float:
    """Peak tensor-unit rate of one device (chip): 2 ops per MAC x MACs/cycle x cores x clock."""
    return 2.0 * _macs_per_cycle(spec, dtype) * spec.core_count * spec.clock_hz


def vector_ops_per_s(spec: BoardSpec, dtype: str = "float") -> float:
    """Vector-unit rate of one device: one element op per lane per cycle; the lanes of a core are its float32
    MACs per cycle (a simulator choice, the same the BANG work model uses); float64 at DOUBLE_FRACTION."""
    lanes = spec.macs_per_cycle.get("float", 1) * (DOUBLE_FRACTION if dtype == "double" else 1.0)
    return lanes * spec.core_count * spec.clock_hz


# ---- cnnl ops: the roofline -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class OpEstimate:
    """The parts of one op's modelled time (µs) and which one bounds it."""

    compute_us: float
    memory_us: float
    launch_us: float
    flops: float
    traffic_bytes: float

    @property
    def total_us(self) -> float:
        return self.launch_us + max(self.compute_us, self.memory_us)

    @property
    def bound(self) -> str:
        """'compute', 'memory' or 'launch' (when the launch latency is more than the work)."""
        if self.launch_us >= max(self.compute_us, self.memory_us):
            return "launch"
        return "compute" if self.compute_us >= self.memory_us else "memory"


def sram_tile_edge(spec: BoardSpec, dtype: str) -> int:
    """Edge T of the square A and B tiles a cluster keeps in its usable SRAM (2 T^2 elements)."""
    return max(1, math.isqrt(spec.sram_usable // (2 * ITEMSIZE.get(dtype, 4))))


def tiled_matmul_traffic(spec: BoardSpec, flops: float, dtype: str) -> float:
    """GDRAM bytes a matmul of `flops` = 2 M N K reads when tiled through SRAM: every output tile of T x T streams
    a T x K panel of A and a K x T panel of B, so A and B are read N/T and M/T times: 2 M N K itemsize / T."""
    return flops * ITEMSIZE.get(dtype, 4) / sram_tile_edge(spec, dtype)


def op_estimate(spec: BoardSpec, flops: float, nbytes: float, dtype: str = "float", unit: str = VECTOR) -> OpEstimate:
    """The roofline of a cnnl op doing `flops` on `dtype` data on `unit` and moving `nbytes` to/from GDRAM."""
    if unit == TENSOR:
        rate = tensor_ops_per_s(spec, dtype) * TENSOR_EFFICIENCY
        traffic = max(float(nbytes), tiled_matmul_traffic(spec, flops, dtype))
    elif unit == VECTOR:
        rate = vector_ops_per_s(spec, dtype)
        traffic = float(nbytes)
    else:
        raise ValueError(f"unknown execution unit {unit!r} (expected {TENSOR!r} or {VECTOR!r})")
    return OpEstimate(compute_us=flops / rate * US, memory_us=traffic / spec.gdram_bandwidth * US,
                      launch_us=spec.kernel_launch_us, flops=float(flops), traffic_bytes=traffic)


def op_us(spec: BoardSpec, flops: float, nbytes: float, dtype: str = "float", unit: str = VECTOR) -> float:
    """Modelled time (µs) of a cnnl op: launch + max(compute, memory) (see `op_estimate`)."""
    return op_estimate(spec, flops, nbytes, dtype, unit).total_us


# ---- BANG kernels -----------------------------------------------------------------------------------------------

def task_waves(spec: BoardSpec, task_dim: int, union: int) -> tuple[int, int]:
    """(cores busy at once, waves) of a launch: Block tasks take one core each; UnionN tasks run in groups of
    N clusters x cores, as many groups at once as the board has N-cluster slots, one round per group."""
    task_dim = max(1, task_dim)
    if union:
        group = union * spec.cores_per_cluster
        slots = max(1, spec.cluster_count // union)
        rounds = -(-task_dim // group)
        return min(slots, rounds) * group, -(-rounds // slots)
    return min(task_dim, spec.core_count), -(-task_dim // spec.core_count)


def kernel_us(spec: BoardSpec, task_dim: int, union: int, gdram_bytes: int, onchip_bytes: int,
              vector_elements: int, macs: Mapping[str, int]) -> float:
    """Modelled time (µs) of a BANG launch from the work its tasks counted (`macs`: rate key -> MACs).

    Each task is charged the launch's average work. A wave of tasks runs at once; its GDRAM copies share the
    bandwidth among the busy cores, on-chip copies and compute use the task's own core. Copies and compute overlap
    (a roofline per task): time = launch + waves x max(copy, compute)."""
    tasks = max(1, task_dim)
    busy, waves = task_waves(spec, tasks, union)
    clock = spec.clock_hz
    copy_s = (gdram_bytes / tasks * busy / spec.gdram_bandwidth
              + onchip_bytes / tasks / (clock * ONCHIP_BYTES_PER_CYCLE))
    compute_s = vector_elements / tasks / (clock * max(1, spec.macs_per_cycle.get("float", 1)))
    for key, count in macs.items():
        compute_s += count / tasks / (clock * _macs_per_cycle(spec, key))
    return spec.kernel_launch_us + waves * max(copy_s, compute_s) * US


# ---- collectives ------------------------------------------------------------------------------------------------

def collective_us(spec: BoardSpec, kind: str, nbytes: int, nrank: int, hosts: int = 1) -> float:
    """Modelled time (µs) of one rank's part of a ring collective over `nbytes` (N):
    allReduce 2 (n-1) steps of N/n; reduceScatter, allGather, alltoAll (n-1) steps of N/n; broadcast and reduce
    a pipelined chain, (n-1) latencies + N / bandwidth; send/recv one latency + N / bandwidth. A one-rank clique
    copies on the device (2 N / GDRAM bandwidth). A ring through ranks on several `hosts` crosses the network,
    and its steps go at the pace of that hop: the card's network bandwidth and latency (a send/recv pays them
    when its peer is on another host: the caller passes hosts=2)."""
    if nrank <= 1:
        return 2 * nbytes / spec.gdram_bandwidth * US
    rate = min(spec.link_bandwidth, spec.gdram_bandwidth)
    latency = LINK_LATENCY_US
    if hosts > 1:
        rate, latency = min(rate, spec.network_bandwidth), max(latency, spec.network_latency_us)
    steps = nrank - 1
    chunk_us = nbytes / nrank / rate * US
    if kind == ALL_REDUCE:
        return 2 * steps * (latency + chunk_us)
    if kind in (REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL):
        return steps * (latency + chunk_us)
    if kind in (BROADCAST, REDUCE):
        return steps * latency + nbytes / rate * US
    if kind == SEND_RECV:
        return latency + nbytes / rate * US
    raise ValueError(f"unknown collective {kind!r}")
