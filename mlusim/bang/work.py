"""What a launch did (bytes per copy direction, vector elements, MACs) and the modelled device time it implies.

Model (an estimate; a later cost-model issue moves it to mlusim/cost.py):
    copy_us    = bytes of copies touching GDRAM / gdram_bandwidth
               + bytes of on-chip copies / (cores_used * clock * ONCHIP_BYTES_PER_CYCLE)
    compute_us = vector elements / (cores_used * clock * macs_per_cycle["float"])
               + sum over kinds of MACs / (cores_used * clock * macs_per_cycle[kind])
    time_us    = kernel_launch_us + max(copy_us, compute_us)        (copies and compute overlap: a roofline)
cores_used = min(taskDim, the board's core count).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .context import BARRIERS, COPY_BYTES, COPY_COUNT, KIND_INDEX, MACS, VECTOR_ELEMENTS
from .dma import DIRECTIONS

#: On-chip (NRAM/WRAM/SRAM) copy bytes per core per cycle (a simulator choice).
ONCHIP_BYTES_PER_CYCLE = 64
_MAC_RATE_KEY = {"float32": "float", "half": "half", "bfloat16": "bfloat16", "int8": "int8", "uint8": "int8",
                 "int16": "int16", "int32": "int16"}
_OFFCHIP = {"GDRAM", "LDRAM"}


@dataclass
class WorkCounts:
    """Work counted over all tasks of one launch."""

    tasks: int = 0
    copy_bytes: dict = field(default_factory=dict)    # direction name -> bytes (only directions used)
    copies: int = 0
    vector_elements: int = 0
    macs: dict = field(default_factory=dict)          # element kind -> multiply-accumulates
    barriers: int = 0

    @property
    def gdram_bytes(self) -> int:
        """Bytes of copies with GDRAM (or LDRAM) on either side."""
        return sum(n for name, n in self.copy_bytes.items() if _touches_offchip(name))

    @property
    def onchip_bytes(self) -> int:
        return sum(n for name, n in self.copy_bytes.items() if not _touches_offchip(name))

    @property
    def total_macs(self) -> int:
        return sum(self.macs.values())

    def as_dict(self) -> dict:
        return {"tasks": self.tasks, "copy_bytes": dict(self.copy_bytes), "copies": self.copies,
                "vector_elements": self.vector_elements, "macs": dict(self.macs), "barriers": self.barriers}


def _touches_offchip(direction: str) -> bool:
    source, destination = direction.split("2")
    return source in _OFFCHIP or destination in _OFFCHIP


def counts_from_state(rows: list[np.ndarray], tasks: int) -> WorkCounts:
    """Sum the counters of the workers' state rows."""
    total = np.sum(rows, axis=0) if rows else np.zeros(BARRIERS + 1, np.int64)
    copy_bytes = {name: int(total[COPY_BYTES + i]) for i, (name, _, _) in enumerate(DIRECTIONS)
                  if total[COPY_BYTES + i]}
    macs = {kind: int(total[MACS + i]) for kind, i in KIND_INDEX.items() if total[MACS + i]}
    return WorkCounts(tasks=tasks, copy_bytes=copy_bytes, copies=int(total[COPY_COUNT]),
                      vector_elements=int(total[VECTOR_ELEMENTS]), macs=macs, barriers=int(total[BARRIERS]))


def modelled_us(spec, counts: WorkCounts, task_dim: int) -> float:
    """Modelled device time of a launch in µs (see the module docstring)."""
    cores = max(1, min(task_dim, spec.core_count))
    cycles_per_s = cores * spec.clock_hz
    copy_s = counts.gdram_bytes / spec.gdram_bandwidth + counts.onchip_bytes / (cycles_per_s * ONCHIP_BYTES_PER_CYCLE)
    compute_s = counts.vector_elements / (cycles_per_s * max(1, spec.macs_per_cycle.get("float", 1)))
    for kind, macs in counts.macs.items():
        rate = spec.macs_per_cycle.get(_MAC_RATE_KEY[kind], 0) or spec.macs_per_cycle.get("float", 1)
        compute_s += macs / (cycles_per_s * rate)
    return spec.kernel_launch_us + max(copy_s, compute_s) * 1e6
