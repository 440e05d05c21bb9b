"""insert_bn_before_firstnode: the model takes raw UINT8 pixels and normalises them itself.

For each listed input: the model input becomes UINT8 (whatever type the network declared: the samples rely on
this), followed by a cast to the network input's type and (x - mean) * (1 / sqrt(var)) per channel, channels on
axis 1 of the network's layout (what the samples give, also when the input is converted to NHWC). The three
steps are ordinary elementwise steps: the layout pass and the fusion make them one kernel.
"""
from __future__ import annotations

import numpy as np

from ..graph.program import Program, Step
from ..status import invalid


def insert_bn(program: Program, spec: dict) -> int:
    """Prefix the listed inputs with their normalisation; returns how many."""
    prefix = []
    for index, entry in spec.items():
        i = int(index)
        if i >= len(program.inputs):
            raise invalid(f"BuilderConfig: insert_bn_before_firstnode.{index}: the network has "
                          f"{len(program.inputs)} inputs")
        key = program.inputs[i]
        value = program.values[key]
        cast = next((s for s in program.steps if s.op == "cast" and s.ins == [key]), None)
        if value.dtype.kind != "f" and cast is not None and program.values[cast.outs[0]].dtype.kind == "f":
            # the input's type was set (set_data_type): normalise into the type the network computes in
            program.steps.remove(cast)
            program.inputs[i] = key = cast.outs[0]
            value = program.values[key]
            value.name = program.values[cast.ins[0]].name
        mean = np.asarray(entry["mean"], np.float64)
        var = np.asarray(entry["var"], np.float64)
        if value.shape is None or len(value.shape) < 2 or value.shape[1] not in (-1, mean.size):
            raise invalid(f"BuilderConfig: insert_bn_before_firstnode.{index}: {mean.size} channels; input {i} "
                          f"({value.name!r}) has dims {value.shape}")
        if value.dtype.kind != "f":
            raise invalid(f"BuilderConfig: insert_bn_before_firstnode.{index}: input {i} ({value.name!r}) is "
                          f"{value.dtype}; the normalisation needs a float input")
        shape = (1, mean.size) + (1,) * (len(value.shape) - 2)
        raw = program.new_value(value.name, np.uint8, value.shape)
        value.name = value.name + "/normalized"
        program.inputs[i] = raw
        floats = program.new_value(value.name + "/float", value.dtype, value.shape)
        centred = program.new_value(value.name + "/centred", value.dtype, value.shape)
        mean_key = program.new_value(value.name + "/mean", value.dtype, shape, mean.reshape(shape).astype(value.dtype))
        scale = (1.0 / np.sqrt(var)).reshape(shape).astype(value.dtype)
        scale_key = program.new_value(value.name + "/inv_std", value.dtype, shape, scale)
        base = value.name.replace("/normalized", "")
        prefix += [Step("cast", {"dtype": value.dtype.name}, [raw], [floats], base + "/to_float"),
                   Step("binary", {"fn": "sub"}, [floats, mean_key], [centred], base + "/sub_mean"),
                   Step("binary", {"fn": "mul"}, [centred, scale_key], [key], base + "/div_std")]
    program.steps = prefix + program.steps
    return len(spec)
