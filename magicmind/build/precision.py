"""The precision the config asks for. force_float16: every float32 tensor of the data path is stored and computed
in float16 (the kernels widen to float32 inside one op and round once into half, as the MLU's half units
accumulate in float32); the model's inputs and outputs keep their types, with a cast at each end. Shape arithmetic
(values derived from Shape) stays in its own types.
"""
from __future__ import annotations

import numpy as np

from ..graph.program import Program, Step
from ..status import Code, MagicMindError

FLOAT32, FLOAT16 = np.dtype(np.float32), np.dtype(np.float16)


def shape_values(program: Program) -> set:
    """Values computed from shapes only (Shape's outputs and what is computed from them and constants)."""
    found = set()
    for step in program.steps:
        if step.op == "shape":
            found.update(step.outs)
            continue
        variable = [v for v in step.ins if program.values[v].const is None]
        if variable and all(v in found for v in variable):
            found.update(step.outs)
    return found


def to_float16(program: Program) -> int:
    """Rewrite the data path in float16; returns the number of values converted."""
    shapes = shape_values(program)
    shape_consts = {v for s in program.steps if set(s.outs) & shapes for v in s.ins if program.values[v].const is not None}
    boundary = set(program.inputs) | set(program.outputs)
    converted = 0
    for key, value in program.values.items():
        if value.dtype != FLOAT32 or key in shapes or key in shape_consts or key in boundary:
            continue
        if value.const is not None:
            value.const = value.const.astype(np.float16)
        value.dtype = FLOAT16
        converted += 1
    for step in program.steps:
        if step.op == "cast" and step.attrs["dtype"] == "float32" and not set(step.outs) & shapes \
                and not set(step.outs) & boundary:
            step.attrs = dict(step.attrs, dtype="float16")
    steps = []
    rename = {}
    for key in program.inputs:
        value = program.values[key]
        if value.dtype == FLOAT32 and any(key in s.ins for s in program.steps):
            half = program.new_value(value.name + "/half", FLOAT16, value.shape)
            steps.append(Step("cast", {"dtype": "float16"}, [key], [half], value.name + "/to_half"))
            rename[key] = half
    for step in program.steps:
        if not (set(step.outs) & shapes):
            step.ins = [rename.get(v, v) for v in step.ins]
        steps.append(step)
    for i, key in enumerate(program.outputs):
        value = program.values[key]
        producer = next((s for s in steps if key in s.outs), None)
        if value.dtype != FLOAT32 or producer is None or key in shapes:
            continue
        half = program.new_value(value.name + "/half", FLOAT16, value.shape)
        producer.outs = [half if v == key else v for v in producer.outs]
        for s in steps:
            s.ins = [half if v == key else v for v in s.ins]
        steps.append(Step("cast", {"dtype": "float32"}, [half], [key], value.name + "/to_float"))
    program.steps = steps
    return converted


def apply(program: Program, mode: str) -> dict:
    """The float part of a precision_mode (the qint modes' mixed float type; build/quantize.py does the rest);
    what it did."""
    if mode in ("force_float32", "qint8_mixed_float32", "qint16_mixed_float32"):
        return {"float16_values": 0}
    if mode in ("force_float16", "qint8_mixed_float16", "qint16_mixed_float16"):
        return {"float16_values": to_float16(program)}
    raise MagicMindError(Code.INVALID_ARGUMENT, f"precision_mode {mode!r} is not known")
