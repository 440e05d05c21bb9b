"""Batch normalisation and per-channel scales folded into the convolution before them.

conv(x, w, b) followed by batch_norm(scale, bias, mean, var) (constants) is conv(x, w * f, b * f + shift) with
f = scale / sqrt(var + eps), shift = bias - mean * f; followed by `mul` / `add` with a per-channel constant
(opt_config.conv_scale_fold) it is conv(x, w * c, b * c) / conv(x, w, b + c). The conv's output must feed only
that step (and not be a model output). A batch_norm that follows no convolution becomes mul + add with its
per-channel factor and shift, which the elementwise fusion then computes in one pass with what surrounds it.
Runs on the network's NCHW form, before the layout pass.
"""
from __future__ import annotations

import numpy as np

from ..graph.ops.nn import batch_norm_factors, channel_axis
from ..graph.program import Program, Step


def _single_consumer(program: Program, key, consumers) -> bool:
    return len(consumers.get(key, [])) == 1 and key not in program.outputs


def _per_channel(constant: np.ndarray, rank: int, channels: int):
    """The per-channel vector of a constant that broadcasts over a rank-`rank` NCHW tensor along axis 1 only
    (a scalar counts), or None."""
    if constant.ndim > rank:
        return None
    shape = (1,) * (rank - constant.ndim) + constant.shape
    if any(d != 1 for i, d in enumerate(shape) if i != 1):
        return None
    if shape[1] not in (1, channels):
        return None
    return np.broadcast_to(constant.reshape(-1), (channels,)).astype(np.float64)


def _conv_params(program: Program, conv: Step):
    """(w, b) of a conv whose weights and bias are constants (b zeros when it has none), else None."""
    w = program.values[conv.ins[1]].const
    if w is None or conv.attrs.get("packed") or conv.attrs.get("epilogue") or w.dtype.kind != "f":
        return None
    if len(conv.ins) > 2:
        b = program.values[conv.ins[2]].const
        if b is None:
            return None
        return w, b.reshape(-1)
    return w, np.zeros(w.shape[0], w.dtype)


def _rewrite_conv(program: Program, conv: Step, w: np.ndarray, b: np.ndarray, dtype) -> None:
    name = program.values[conv.ins[1]].name
    w_key = program.new_value(name + "/folded", dtype, w.shape, w.astype(dtype))
    b_key = program.new_value(name + "/folded_bias", dtype, b.shape, b.astype(dtype))
    conv.ins = [conv.ins[0], w_key, b_key]


def fold_into_conv(program: Program, scale_fold: bool = True) -> dict:
    """Fold batch norms (and, with scale_fold, per-channel mul/add) into the convs before them; lower the other
    batch norms to mul + add. Returns {"bn_folded", "scales_folded", "bn_lowered"}."""
    counts = {"bn_folded": 0, "scales_folded": 0, "bn_lowered": 0}
    changed = True
    while changed:
        changed = False
        consumers = program.consumers()
        producer = program.producer()
        for index, step in enumerate(program.steps):
            source = step.ins[0] if step.ins else None
            if step.op == "binary" and len(step.ins) == 2 and program.values[step.ins[0]].const is not None:
                source = step.ins[1]  # constant * conv: the conv's output is the second operand
            conv_index = producer.get(source)
            conv = program.steps[conv_index] if conv_index is not None else None
            if conv is None or conv.op != "conv" or not _single_consumer(program, source, consumers):
                continue
            params = _conv_params(program, conv)
            if params is None:
                continue
            w, b = params
            channels = w.shape[0]
            rank = len(program.values[source].shape or ())
            w64, b64 = w.astype(np.float64), b.astype(np.float64)
            if step.op == "batch_norm":
                consts = [program.values[k].const for k in step.ins[1:]]
                if any(c is None for c in consts) or channel_axis(step.attrs, rank) != 1:
                    continue
                factor, shift = batch_norm_factors(*consts, step.attrs.get("epsilon", 1e-5))
                factor, shift = factor.astype(np.float64), shift.astype(np.float64)
                w64 = w64 * factor.reshape((-1,) + (1,) * (w.ndim - 1))
                b64 = b64 * factor + shift
                counts["bn_folded"] += 1
            elif scale_fold and step.op == "binary" and step.attrs["fn"] in ("mul", "add") and len(step.ins) == 2:
                other = program.values[step.ins[0] if step.ins[1] == source else step.ins[1]].const
                if other is None or other.dtype != w.dtype:
                    continue
                vector = _per_channel(other, rank, channels)
                if vector is None:
                    continue
                if step.attrs["fn"] == "mul":
                    w64 = w64 * vector.reshape((-1,) + (1,) * (w.ndim - 1))
                    b64 = b64 * vector
                else:
                    b64 = b64 + vector
                counts["scales_folded"] += 1
            else:
                continue
            _rewrite_conv(program, conv, w64, b64, w.dtype)
            conv.outs = list(step.outs)
            for key in step.outs:
                program.values[key].shape = program.values[source].shape
            del program.steps[index]
            changed = True
            break
    counts["bn_lowered"] = lower_batch_norms(program)
    return counts


def lower_batch_norms(program: Program) -> int:
    """Every batch_norm with constant parameters left becomes mul + add of per-channel constants."""
    lowered = 0
    steps = []
    for step in program.steps:
        consts = [program.values[k].const for k in step.ins[1:]] if step.op == "batch_norm" else None
        if consts is None or any(c is None for c in consts):
            steps.append(step)
            continue
        x = step.ins[0]
        value = program.values[x]
        rank = len(value.shape) if value.shape is not None else None
        if rank is None or rank < 2:
            steps.append(step)
            continue
        factor, shift = batch_norm_factors(*consts, step.attrs.get("epsilon", 1e-5))
        shape = [1] * rank
        shape[channel_axis(step.attrs, rank)] = -1
        f_key = program.new_value(step.name + "/factor", value.dtype, tuple(factor.reshape(shape).shape),
                                  factor.reshape(shape).astype(value.dtype))
        s_key = program.new_value(step.name + "/shift", value.dtype, tuple(shift.reshape(shape).shape),
                                  shift.reshape(shape).astype(value.dtype))
        scaled = program.new_value(step.name + "/scaled", value.dtype, value.shape)
        steps.append(Step("binary", {"fn": "mul"}, [x, f_key], [scaled], step.name + "/mul"))
        steps.append(Step("binary", {"fn": "add"}, [scaled, s_key], list(step.outs), step.name + "/add"))
        lowered += 1
    program.steps = steps
    return lowered
