"""What one set of input shapes needs before it runs: every tensor's shape (the shape plan) and where each
intermediate lives (the memory plan).

Memory plan: intermediates share one arena. Walking the steps in order, each output takes the lowest free
offset that fits (first fit) and gives it back after its last reader; the outputs of reshape-like steps are
the same bytes as their input (no copy), so that buffer lives until the last reader of either. The arena's size
is the peak; the sum of all intermediates is what one buffer each would take.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..graph import ops as O
from ..graph.infer import infer_node
from ..graph.program import Program
from ..status import Code, MagicMindError

ALIGN = 64
#: steps whose output is their input's bytes under another shape
VIEW_OPS = frozenset({"reshape", "flatten", "squeeze", "unsqueeze", "identity"})


def aligned(nbytes: int) -> int:
    return (nbytes + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class ShapePlan:
    infos: dict
    #: steps computed on the host at plan time (all outputs known there: shape arithmetic)
    host_steps: set
    #: True when a step's output shape depends on device data: shapes are found while running
    dynamic: bool = False
    #: step index -> its layer prepared for these shapes (kernels planned by shape, cnnl descriptors)
    layers: dict = field(default_factory=dict)

    def release(self) -> None:
        """Free what the prepared layers hold (cnnl descriptors)."""
        for layer in self.layers.values():
            destroy = getattr(layer, "destroy", None)
            if destroy is not None:
                destroy()
        self.layers.clear()


def plan_shapes(program: Program, shapes: list) -> ShapePlan:
    """Infos of every value for these input shapes."""
    infos = program.base_infos(shapes)
    host_steps = set()
    for index, step in enumerate(program.steps):
        ins = [infos[v] for v in step.ins]
        op = O.get(step.op)
        missing = [i for i in op.value_inputs if i < len(ins) and ins[i].value is None]
        if missing:
            return ShapePlan(infos, host_steps, dynamic=True)
        outs = infer_node(step.op, step.attrs, ins, step.name)
        for key, info in zip(step.outs, outs):
            infos[key] = info
        if all(o.value is not None for o in outs):
            host_steps.add(index)
        if any(not o.known for o in outs):
            return ShapePlan(infos, host_steps, dynamic=True)
    return ShapePlan(infos, host_steps)


def nbytes(info) -> int:
    return int(np.prod(info.shape, dtype=np.int64)) * info.dtype.itemsize


@dataclass
class MemoryPlan:
    #: value id -> ("arena", offset) | ("alias", value id)
    places: dict = field(default_factory=dict)
    arena_bytes: int = 0
    #: bytes of every intermediate with a buffer of its own
    separate_bytes: int = 0


def plan_memory(program: Program, plan: ShapePlan) -> MemoryPlan:
    """Arena offsets of the program inputs and the intermediates (program outputs get buffers of their own)."""
    outputs = set(program.outputs)
    consumers = program.consumers()
    result = MemoryPlan()
    root = {}

    def last_use(key, start):
        return max(consumers.get(key, [start]) + [start])

    free: list = []  # (offset, size) sorted by offset
    live: dict = {}  # root value -> (offset, size, last step)
    top = 0

    def allocate(size):
        nonlocal top
        for i, (offset, span) in enumerate(free):
            if span >= size:
                if span == size:
                    free.pop(i)
                else:
                    free[i] = (offset + size, span - size)
                return offset
        offset = top
        top += size
        return offset

    def release(offset, size):
        free.append((offset, size))
        free.sort()
        merged = []
        for o, s in free:
            if merged and merged[-1][0] + merged[-1][1] == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        free[:] = merged

    def place(key, start):
        size = aligned(nbytes(plan.infos[key]))
        result.separate_bytes += size
        offset = allocate(size)
        result.places[key] = ("arena", offset)
        root[key] = key
        live[key] = (offset, size, last_use(key, start))

    for key in program.inputs:
        if key not in outputs:
            place(key, -1)
    for index, step in enumerate(program.steps):
        if index in plan.host_steps:
            continue
        for key in step.outs:
            if key in outputs:
                continue
            source = step.ins[0] if step.op in VIEW_OPS else None
            if source is not None and source in root and source not in outputs:
                base = root[source]
                offset, size, end = live[base]
                live[base] = (offset, size, max(end, last_use(key, index)))
                root[key] = base
                result.places[key] = ("alias", base)
            else:
                place(key, index)
        for base in [b for b, (_, _, end) in live.items() if end <= index]:
            offset, size, _ = live.pop(base)
            release(offset, size)
    result.arena_bytes = top
    return result


def check_range(program: Program, shapes: list, names: list) -> None:
    """Each input shape against the model's: rank and fixed extents, and the dim_range of a mutable input."""
    for i, (key, shape) in enumerate(zip(program.inputs, shapes)):
        declared = program.values[key].shape
        name = names[i]
        if declared is not None:
            if len(shape) != len(declared):
                raise MagicMindError(Code.INVALID_ARGUMENT, f"input {i} ({name!r}): shape {list(shape)} has rank "
                                                            f"{len(shape)}; the model takes rank {len(declared)}")
            for axis, (got, want) in enumerate(zip(shape, declared)):
                if want >= 0 and got != want:
                    raise MagicMindError(Code.INVALID_ARGUMENT,
                                         f"input {i} ({name!r}): shape {list(shape)} differs from the model's "
                                         f"{list(declared)} on axis {axis} (the model is not mutable there)")
        bounds = program.ranges[i] if i < len(program.ranges) else None
        if bounds is not None:
            low, high = bounds
            if len(low) == len(shape) and any(not a <= s <= b for s, a, b in zip(shape, low, high)):
                raise MagicMindError(Code.OUT_OF_RANGE,
                                     f"input {i} ({name!r}): shape {list(shape)} is outside its dim_range "
                                     f"min {list(low)} max {list(high)}")
