"""Ops that make tensors: const, range, fill (a shape from data, a scalar value), constant_of_shape."""
from __future__ import annotations

import numpy as np

from ...status import invalid
from . import Op, register
from .shape import ints
from .shapes import unknown_extents


@register
class Const(Op):
    """const(): a tensor held by the model (attrs["value"], a numpy array)."""

    name = "const"
    arity = (0, 0)

    def infer(self, attrs, ins):
        value = attrs["value"]
        return [(value.shape, value.dtype)]

    def run(self, attrs, ins, outs):
        outs[0][...] = attrs["value"]

    def flops(self, attrs, in_shapes, out_shapes):
        return 0.0


def _scalar(value, name):
    flat = np.asarray(value).reshape(-1)
    if flat.size != 1:
        raise invalid(f"range: {name} must hold one value, got {flat.size}")
    return flat[0]


def range_count(start, limit, delta) -> int:
    if delta == 0:
        raise invalid("range: delta is 0")
    return max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)


@register
class Range(Op):
    """range(start, limit, delta): [start, start + delta, ...) below limit (ONNX Range); 1-element inputs."""

    name = "range"
    value_inputs = (0, 1, 2)
    arity = (3, 3)

    def infer(self, attrs, ins):
        dtypes = {i.dtype for i in ins}
        if len(dtypes) != 1:
            raise invalid(f"range: start, limit and delta types differ ({', '.join(map(str, dtypes))})")
        for info, name in zip(ins, ("start", "limit", "delta")):
            if info.shape is not None and -1 not in info.shape and int(np.prod(info.shape)) != 1:
                raise invalid(f"range: {name} must hold one value, has shape {list(info.shape)}")
        if any(i.value is None for i in ins):
            return [((-1,), ins[0].dtype)]
        start, limit, delta = (_scalar(i.value, n) for i, n in zip(ins, ("start", "limit", "delta")))
        return [((range_count(start, limit, delta),), ins[0].dtype)]

    def run(self, attrs, ins, outs):
        start, limit, delta = (_scalar(a, n) for a, n in zip(ins, ("start", "limit", "delta")))
        outs[0][...] = (start + delta * np.arange(outs[0].shape[0])).astype(outs[0].dtype)


@register
class Fill(Op):
    """fill(shape, value): a tensor of the given shape (an int tensor, read from data) holding value's one element
    (MagicMind IFillNode); constant_of_shape (ONNX) is the same with the value an attribute."""

    name = "fill"
    value_inputs = (0,)
    arity = (1, 2)

    def infer(self, attrs, ins):
        shape = ins[0]
        if shape.dtype.kind not in "iu":
            raise invalid(f"fill: the shape must be an int tensor, got {shape.dtype}")
        if len(ins) == 2:
            dtype = ins[1].dtype
            if ins[1].shape is not None and -1 not in ins[1].shape and int(np.prod(ins[1].shape)) != 1:
                raise invalid(f"fill: value must hold one element, has shape {list(ins[1].shape)}")
        else:
            dtype = np.asarray(attrs.get("value", np.zeros(1, np.float32))).dtype
        if shape.value is None:
            return [(unknown_extents(shape), dtype)]
        dims = tuple(ints(shape.value))
        if any(d < 0 for d in dims):
            raise invalid(f"fill: shape {list(dims)} holds a negative extent")
        return [(dims, dtype)]

    def run(self, attrs, ins, outs):
        value = ins[1] if len(ins) == 2 else np.asarray(attrs.get("value", np.zeros(1, np.float32)))
        outs[0][...] = np.asarray(value).reshape(-1)[0]
