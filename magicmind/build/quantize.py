"""The quantized precision modes (qint8_mixed_float16/32, qint16_mixed_float16/32): every conv and matmul layer
computes in integers, everything else in the mixed float type.

A quantized layer reads its float input and quantizes it as it gathers it (kernels/conv.py):
q = clip(rint(x / scale) + zero, qmin, qmax), with the scale (and zero point, activation_quant_algo asymmetric)
from the input's range: the calibrated one (`mm.Calibrator`, stored on the network), else custom_ranges (by the
tensor's name, "" for every tensor). The weights are stored quantized: symmetric, one scale for the tensor
(weight_quant_granularity per_tensor) or one per output channel (per_axis), qmax = 127 (int8) or 32767 (int16).
The layer's epilogue starts with acc * (input scale * weight scale), then the bias and what fusion adds.
A matmul of two activations (attention scores) quantizes both.
"""
from __future__ import annotations

import numpy as np

from ..graph.program import Program, Step
from ..kernels.codegen import ExpressionBuilder
from ..status import Code, MagicMindError

SUFFIXES = ("/nhwc", "/half", "/kn", "/packed")


def range_key(step: Step, position: int) -> str:
    """How calibration names the range of a layer's input: the layer and the input's position."""
    return f"{step.name}#{position}"


def activation(low: float, high: float, bits: int, asymmetric: bool) -> dict:
    """The quant attrs of an input whose values lie in [low, high]."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    if asymmetric:
        levels = (1 << bits) - 1
        scale = (high - low) / levels if high > low else 1.0
        zero = int(np.clip(np.rint(-low / scale), 0, levels))
        return {"bits": bits, "scale": scale, "zero": zero, "unsigned": True}
    qmax = (1 << (bits - 1)) - 1
    bound = max(abs(low), abs(high))
    return {"bits": bits, "scale": bound / qmax if bound > 0 else 1.0, "zero": 0, "unsigned": False}


def weights(w: np.ndarray, bits: int, per_axis: bool, axis: int):
    """(integer weights, scale per output channel along `axis`) of a float weight tensor."""
    qmax = (1 << (bits - 1)) - 1
    values = np.asarray(w, np.float64)
    moved = np.moveaxis(values, axis, 0).reshape(values.shape[axis], -1)
    bound = np.abs(moved).max(axis=1) if per_axis else np.full(moved.shape[0], np.abs(moved).max())
    scale = np.where(bound > 0, bound / qmax, 1.0)
    shape = [1] * values.ndim
    shape[axis] = -1
    q = np.clip(np.rint(values / scale.reshape(shape)), -qmax, qmax)
    return q.astype(np.int8 if bits == 8 else np.int16), scale


class Ranges:
    """The ranges a quantized build reads its layers' input ranges from."""

    def __init__(self, calibrated: dict, custom: dict):
        self.calibrated, self.custom = calibrated or {}, custom or {}

    def of(self, program: Program, step: Step, position: int):
        found = self.calibrated.get(range_key(step, position))
        if found is not None:
            return found
        name = program.values[step.ins[position]].name
        for suffix in SUFFIXES:
            name = name.replace(suffix, "")
        for key in (name, ""):
            entry = self.custom.get(key)
            if entry is not None:
                return min(entry["min"]), max(entry["max"])
        raise MagicMindError(Code.INVALID_ARGUMENT,
                             f"{step.op} {step.name!r}: no quantization range for its input {position} ({name!r}): "
                             f"calibrate (mm.Calibrator) or give custom_ranges")


def quantize(program: Program, bits: int, ranges: Ranges, asymmetric: bool, per_axis: bool) -> dict:
    """Rewrite the program's conv and matmul layers as quantized layers; what was done."""
    counts = {"quantized_layers": 0}
    steps = []
    for step in program.steps:
        rewritten = None
        if step.op == "conv" and _float_input(program, step, 0):
            rewritten = _conv(program, step, bits, ranges, asymmetric, per_axis)
        elif step.op == "matmul" and _float_input(program, step, 0):
            rewritten = _matmul(program, step, bits, ranges, asymmetric, per_axis)
        if rewritten is not None:
            counts["quantized_layers"] += 1
        steps.append(rewritten or step)
    program.steps = steps
    return counts


def _float_input(program: Program, step: Step, position: int) -> bool:
    return program.values[step.ins[position]].dtype.kind == "f" and not step.attrs.get("epilogue")


def _epilogue(program: Program, step: Step, dequant_key, bias_key) -> dict:
    build = ExpressionBuilder()
    value = build.node("binary", [build.input(0, np.float32), build.input(1, np.float32)], np.float32, fn="mul")
    if bias_key is not None:
        bias = build.cast(build.input(2, program.values[bias_key].dtype), np.float32)
        value = build.node("binary", [value, bias], np.float32, fn="add")
    build.cast(value, program.values[step.outs[0]].dtype)
    return build.expression()


def _constant(program: Program, name: str, array: np.ndarray):
    return program.new_value(name, array.dtype, array.shape, array)


def _conv(program, step, bits, ranges, asymmetric, per_axis):
    w = program.values[step.ins[1]]
    if w.const is None:
        return None
    quant = activation(*ranges.of(program, step, 0), bits, asymmetric)
    packed = bool(step.attrs.get("packed"))
    data = w.const.reshape(w.const.shape[0] * w.const.shape[1], -1) if packed else w.const
    q, scale = weights(data, bits, per_axis, 0)
    if packed:
        q = q.reshape(w.const.shape)
    dequant = (scale * quant["scale"]).astype(np.float32)
    w_key = _constant(program, w.name + f"/qint{bits}", q)
    dequant_key = _constant(program, w.name + "/dequant", dequant)
    bias_key = step.ins[2] if len(step.ins) > 2 else None
    attrs = dict(step.attrs, quant=quant, epilogue=_epilogue(program, step, dequant_key, bias_key))
    ins = [step.ins[0], w_key, dequant_key] + ([bias_key] if bias_key is not None else [])
    return Step("conv", attrs, ins, list(step.outs), step.name)


def _matmul(program, step, bits, ranges, asymmetric, per_axis):
    b = program.values[step.ins[1]]
    attrs = dict(step.attrs)
    quant_a = activation(*ranges.of(program, step, 0), bits, asymmetric)
    if b.const is not None:
        if b.const.ndim != 2 or attrs.get("trans_b") or b.const.dtype.kind != "f":
            return None
        q, scale = weights(b.const, bits, per_axis, 1)
        b_key = _constant(program, b.name + f"/qint{bits}", q)
        dequant = (scale * quant_a["scale"]).astype(np.float32)
        attrs.update(b_integer=True)
    else:
        if b.dtype.kind != "f":
            return None
        quant_b = activation(*ranges.of(program, step, 1), bits, asymmetric)
        attrs.update(quant_b=quant_b)
        b_key = step.ins[1]
        dequant = np.array([quant_a["scale"] * quant_b["scale"]], np.float32)
    dequant_key = _constant(program, step.name + "/dequant", dequant)
    bias_key = step.ins[2] if len(step.ins) > 2 else None
    attrs.update(quant_a=quant_a, epilogue=_epilogue(program, step, dequant_key, bias_key))
    ins = [step.ins[0], b_key, dequant_key] + ([bias_key] if bias_key is not None else [])
    return Step("matmul", attrs, ins, list(step.outs), step.name)
