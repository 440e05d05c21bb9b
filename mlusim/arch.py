"""Board catalog: one frozen record per simulated Cambricon board.

Numbers come from `shared/reference/cambricon-api.md` (driver attribute tables, BANG guide 1.7.0, published specs).
Values the public sources do not give are *chosen* and marked so in `CHOSEN_VALUES`; they are stable and documented in
docs/boards.md. Sizes are in bytes, rates in Hz and bytes/s.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
GB = 1e9

#: Bytes of NRAM that kernels reserve for the stack (mlu-ops: MAX_NRAM_SIZE = NRAM - 128 KB).
NRAM_STACK_RESERVE = 128 * KiB
#: Bytes of SRAM reserved per cluster (mlu-ops: usable SRAM = SRAM - 128 KB on mtp_592).
SRAM_RESERVE = 128 * KiB


@dataclass(frozen=True)
class BoardSpec:
    """The hardware facts of one board (one chip = one device)."""

    name: str
    isa: int
    compute_capability: tuple[int, int]
    cluster_count: int
    cores_per_cluster: int
    max_union: int
    nram_bytes: int
    wram_bytes: int
    sram_bytes: int
    l2_bytes: int
    gdram_bytes: int
    gdram_bandwidth: float
    bus_width_bits: int
    clock_hz: float
    pcie_bandwidth: float
    link_bandwidth: float
    macs_per_cycle: Mapping[str, int] = field(default_factory=dict)
    chips_per_board: int = 1
    ldram_bytes_per_core: int = 64 * MiB
    sparse_supported: bool = False
    int4_supported: bool = False
    tf32_supported: bool = False
    # Launch / command latencies used by the cost model (chosen, see docs/boards.md).
    kernel_launch_us: float = 5.0
    copy_latency_us: float = 2.0
    # The network between hosts, per card (cliques across hosts; chosen, see docs/boards.md): a 100 Gb/s RoCE NIC
    # per MLU270/MLU370 card, 200 Gb/s per MLU290/MLU590 card, and the latency of one message over it.
    network_bandwidth: float = 12.5 * GB
    network_latency_us: float = 10.0

    @property
    def core_count(self) -> int:
        return self.cluster_count * self.cores_per_cluster

    @property
    def nram_usable(self) -> int:
        return self.nram_bytes - NRAM_STACK_RESERVE

    @property
    def sram_usable(self) -> int:
        return self.sram_bytes - SRAM_RESERVE

    @property
    def mem_clock_hz(self) -> float:
        """Memory clock: bandwidth / bus bytes / 2 (double data rate)."""
        return self.gdram_bandwidth / (self.bus_width_bits / 8) / 2

    def supports(self, dtype: str) -> bool:
        return self.macs_per_cycle.get(dtype, 0) > 0

    def peak_ops(self, dtype: str) -> float:
        """Peak multiply-accumulate throughput as ops/s (2 ops per MAC)."""
        return 2.0 * self.macs_per_cycle.get(dtype, 0) * self.core_count * self.clock_hz


def _macs(**kw: int) -> Mapping[str, int]:
    return MappingProxyType(dict(kw))


# Tensor MACs per core per cycle. mtp_2xx half/float rates are chosen (not published).
_MTP2XX = _macs(int8=4096, int16=2048, half=1024, float=256)
_MTP372 = _macs(int8=4096, int16=2048, half=1536, bfloat16=1536, float=384)
_MTP592 = _macs(int8=4096, int16=1024, half=2048, bfloat16=2048, float=512)

BOARDS: Mapping[str, BoardSpec] = MappingProxyType({b.name: b for b in (
    BoardSpec("MLU270-S4", 270, (2, 0), cluster_count=4, cores_per_cluster=4, max_union=4,
              nram_bytes=512 * KiB, wram_bytes=1024 * KiB, sram_bytes=2 * MiB, l2_bytes=1 * MiB,
              gdram_bytes=16 * GiB, gdram_bandwidth=102.4 * GB, bus_width_bits=256, clock_hz=1.0e9,
              pcie_bandwidth=16 * GB, link_bandwidth=16 * GB, macs_per_cycle=_MTP2XX, int4_supported=True),
    BoardSpec("MLU290-M5", 290, (2, 0), cluster_count=16, cores_per_cluster=4, max_union=16,
              nram_bytes=512 * KiB, wram_bytes=512 * KiB, sram_bytes=2 * MiB, l2_bytes=2 * MiB,
              gdram_bytes=32 * GiB, gdram_bandwidth=1228.8 * GB, bus_width_bits=4096, clock_hz=1.0e9,
              pcie_bandwidth=32 * GB, link_bandwidth=600 * GB, macs_per_cycle=_MTP2XX, int4_supported=True,
              network_bandwidth=25 * GB),
    BoardSpec("MLU370-S4", 372, (3, 0), cluster_count=6, cores_per_cluster=4, max_union=4,
              nram_bytes=768 * KiB, wram_bytes=1024 * KiB, sram_bytes=4 * MiB, l2_bytes=2 * MiB,
              gdram_bytes=24 * GiB, gdram_bandwidth=307.2 * GB, bus_width_bits=384, clock_hz=1.0e9,
              pcie_bandwidth=32 * GB, link_bandwidth=32 * GB, macs_per_cycle=_MTP372),
    BoardSpec("MLU370-X4", 372, (3, 0), cluster_count=8, cores_per_cluster=4, max_union=8,
              nram_bytes=768 * KiB, wram_bytes=1024 * KiB, sram_bytes=4 * MiB, l2_bytes=2 * MiB,
              gdram_bytes=24 * GiB, gdram_bandwidth=307.2 * GB, bus_width_bits=384, clock_hz=1.0e9,
              pcie_bandwidth=32 * GB, link_bandwidth=200 * GB, macs_per_cycle=_MTP372),
    BoardSpec("MLU370-X8", 372, (3, 0), cluster_count=4, cores_per_cluster=4, max_union=4,
              nram_bytes=768 * KiB, wram_bytes=1024 * KiB, sram_bytes=4 * MiB, l2_bytes=2 * MiB,
              gdram_bytes=24 * GiB, gdram_bandwidth=307.2 * GB, bus_width_bits=384, clock_hz=1.0e9,
              pcie_bandwidth=32 * GB, link_bandwidth=200 * GB, macs_per_cycle=_MTP372, chips_per_board=2),
    BoardSpec("MLU590-M9", 592, (5, 0), cluster_count=12, cores_per_cluster=4, max_union=8,
              nram_bytes=NRAM_STACK_RESERVE + 327680, wram_bytes=512 * KiB, sram_bytes=2 * MiB,
              l2_bytes=48 * MiB, gdram_bytes=80 * GiB, gdram_bandwidth=2764.8 * GB, bus_width_bits=6 * 1024,
              clock_hz=1.6e9, pcie_bandwidth=64 * GB, link_bandwidth=600 * GB, macs_per_cycle=_MTP592,
              sparse_supported=True, tf32_supported=True, network_bandwidth=25 * GB),
    BoardSpec("MLU590-H8", 592, (5, 0), cluster_count=12, cores_per_cluster=4, max_union=8,
              nram_bytes=NRAM_STACK_RESERVE + 327680, wram_bytes=512 * KiB, sram_bytes=2 * MiB,
              l2_bytes=40 * MiB, gdram_bytes=64 * GiB, gdram_bandwidth=2048.0 * GB, bus_width_bits=5 * 1024,
              clock_hz=1.5e9, pcie_bandwidth=64 * GB, link_bandwidth=600 * GB, macs_per_cycle=_MTP592,
              sparse_supported=True, tf32_supported=True, network_bandwidth=25 * GB),
)})

DEFAULT_BOARD = "MLU370-X4"

#: Values not in the public sources, chosen for the simulator (kept stable; see docs/boards.md).
CHOSEN_VALUES = (
    "mtp_2xx half/float MACs per cycle (1024 / 256)",
    "GDRAM size of MLU590-M9 (80 GiB) and MLU590-H8 (64 GiB)",
    "WRAM of mtp_592 (512 KiB)",
    "PCIe bandwidth (Gen3 x16 = 16 GB/s for MLU270, Gen4 = 32 GB/s, Gen5 = 64 GB/s for MLU590)",
    "MLU-Link bandwidth between devices",
    "network between hosts per card (100 Gb/s RoCE for MLU270/MLU370, 200 Gb/s for MLU290/MLU590; 10 us a message)",
    "LDRAM per core (64 MiB)",
    "kernel launch latency (5 us) and copy latency (2 us)",
    "compute capability 5.0 of mtp_592",
)


def board(name: str) -> BoardSpec:
    """The spec of a board by name (case-insensitive); KeyError lists the known boards."""
    for key, spec in BOARDS.items():
        if key.lower() == name.strip().lower():
            return spec
    raise KeyError(f"unknown board {name!r}; known boards: {', '.join(BOARDS)}")
