"""What a launch did (bytes per copy direction, vector elements, MACs) and the modelled device time it implies.

The time is `mlusim.cost.kernel_us` (an estimate): launch + waves x max(copy, compute) of the average task, with
the waves of the task schedule (Block: taskDim / cores; UnionN: rounds / the board's N-cluster slots). When every
task runs in one wave this is
    launch + max(GDRAM bytes / gdram_bandwidth + on-chip bytes / (tasks x clock x 64 B),
                 vector elements / (tasks x clock x float lanes) + sum of MACs / (tasks x clock x MACs/cycle)).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mlusim import cost

from .context import BARRIERS, COPY_BYTES, COPY_COUNT, KIND_INDEX, MACS, VECTOR_ELEMENTS
from .dma import DIRECTIONS

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


def modelled_us(spec, counts: WorkCounts, task_dim: int, union: int = 0) -> float:
    """Modelled device time of a launch in µs (`union`: N of a UnionN launch, 0 for Block; see the module doc)."""
    macs = {}
    for kind, count in counts.macs.items():
        key = _MAC_RATE_KEY[kind]
        macs[key] = macs.get(key, 0) + count
    return cost.kernel_us(spec, task_dim, union, counts.gdram_bytes, counts.onchip_bytes, counts.vector_elements,
                          macs)
