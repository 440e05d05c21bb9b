"""Graph passes over a Program: constant folding and dead-step removal (each returns what it changed)."""
from __future__ import annotations

import numpy as np

from ..graph import ops as O
from ..graph.infer import infer_node
from ..graph.program import Program
from ..status import MagicMindError


def fold_constants(program: Program) -> int:
    """Evaluate every step whose inputs are all constants (or that reads only a known shape) on the host; its
    outputs become constants. Returns the number of steps folded."""
    infos = program.base_infos()
    kept, folded = [], 0
    for step in program.steps:
        ins = [infos[v] for v in step.ins]
        outs = infer_node(step.op, step.attrs, ins, step.name, fold_limit=1 << 62)
        constant = all(i.value is not None for i in ins) or (O.get(step.op).shape_only and ins[0].known)
        if constant and all(o.value is not None for o in outs):
            for key, info in zip(step.outs, outs):
                value = program.values[key]
                value.const, value.shape, value.dtype = np.array(info.value, order="C"), info.shape, info.dtype
                infos[key] = info
            folded += 1
            continue
        for key, info in zip(step.outs, outs):
            infos[key] = info
            program.values[key].shape = info.shape
        kept.append(step)
    program.steps = kept
    return folded


def reinfer(program: Program) -> None:
    """Infer every step again from the inputs' declared shapes: a pass that broke the program fails the build
    here, naming the node (MagicMindError), and every value's declared shape is the inferred one."""
    infos = program.base_infos()
    for step in program.steps:
        outs = infer_node(step.op, step.attrs, [infos[v] for v in step.ins], step.name)
        if len(outs) != len(step.outs):
            raise MagicMindError(13, f"node {step.name!r}: {len(outs)} outputs inferred, {len(step.outs)} wired")
        for key, info in zip(step.outs, outs):
            infos[key] = info
            value = program.values[key]
            if value.dtype != info.dtype:
                raise MagicMindError(13, f"node {step.name!r}: output {value.name!r} is {info.dtype}, declared "
                                         f"{value.dtype}")
            value.shape = info.shape


def remove_dead_steps(program: Program) -> int:
    """Drop the steps no output depends on (and the values only they made). Returns the number dropped."""
    needed = set(program.outputs)
    kept = []
    for step in reversed(program.steps):
        if any(v in needed for v in step.outs):
            kept.append(step)
            needed.update(step.ins)
    dropped = len(program.steps) - len(kept)
    program.steps = kept[::-1]
    live = needed | set(program.inputs) | {v for s in program.steps for v in s.outs}
    for key in [k for k in program.values if k not in live]:
        del program.values[key]
    return dropped


def check_outputs(program: Program) -> None:
    for key in program.outputs:
        if key in program.inputs:
            continue
        if program.values[key].const is None and not any(key in s.outs for s in program.steps):
            raise MagicMindError(13, f"output {program.values[key].name!r} has no producer")
