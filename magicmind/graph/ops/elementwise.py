"""Elementwise ops: binary arithmetic with broadcasting, unary functions and activations, comparisons and logic,
where, cast.

The functions themselves, in their numpy and their fused scalar form, are the tables of magicmind/kernels/functions.py.
16-bit floats are computed in float32 and rounded once into their stored type.
"""
from __future__ import annotations

import numpy as np

from ...kernels import ufuncs
from ...kernels.functions import BINARY, INTEGER_UNARY, LOGIC, UNARY, clip
from ...status import invalid
from . import Op, register
from .shapes import broadcast


def _wide(a: np.ndarray) -> np.ndarray:
    return ufuncs.as_compute(a)


# ---- binary ------------------------------------------------------------------------------------------------------

def _int_div(a, b):
    with np.errstate(all="ignore"):
        quotient = np.where(b == 0, 0, a // np.where(b == 0, 1, b))
    # ONNX and torch divide integers toward zero; // floors
    return np.where((quotient < 0) & (quotient * b != a), quotient + 1, quotient)


@register
class Binary(Op):
    """binary(a, b, fn): broadcasting arithmetic; the output has the inputs' (common) type."""

    name = "binary"
    elementwise = True
    arity = (2, 2)

    def infer(self, attrs, ins):
        a, b = ins
        if attrs["fn"] not in BINARY:
            raise invalid(f"binary: unknown function {attrs['fn']!r}")
        if a.dtype != b.dtype:
            raise invalid(f"binary {attrs['fn']}: input types differ ({a.dtype} and {b.dtype})")
        return [(broadcast(a.shape, b.shape, node=attrs.get("node", "binary")), a.dtype)]

    def run(self, attrs, ins, outs):
        a, b = ins
        fn = attrs["fn"]
        if fn == "div" and a.dtype.kind in "iu":
            outs[0][...] = _int_div(a, b)
            return
        if fn == "mod" and a.dtype.kind in "iu":
            outs[0][...] = np.fmod(a, np.where(b == 0, 1, b))
            return
        if fn == "pow" and a.dtype.kind in "iu":
            outs[0][...] = np.power(a.astype(np.float64), b).astype(a.dtype)
            return
        outs[0][...] = BINARY[fn][0](_wide(a), _wide(b))


# ---- unary -------------------------------------------------------------------------------------------------------


@register
class Unary(Op):
    """unary(x, fn[, alpha, beta, min, max]): an elementwise function of one tensor."""

    name = "unary"
    elementwise = True

    def infer(self, attrs, ins):
        fn = attrs["fn"]
        if fn not in UNARY:
            raise invalid(f"unary: unknown function {fn!r}")
        (x,) = ins
        if x.dtype.kind not in "f" and fn not in INTEGER_UNARY:
            raise invalid(f"unary {fn}: takes a float tensor, got {x.dtype}")
        return [(x.shape, x.dtype)]

    def run(self, attrs, ins, outs):
        fn = attrs["fn"]
        x = ins[0]
        if x.dtype.kind in "iub" and fn == "clip":
            outs[0][...] = clip(x, attrs)
            return
        outs[0][...] = UNARY[fn][0](_wide(x), attrs)


# ---- comparisons, logic, where, cast -----------------------------------------------------------------------------


@register
class Logic(Op):
    """logic(a, b, fn) -> bool with broadcasting; logic(a, fn="not") -> bool."""

    name = "logic"
    elementwise = True
    arity = (1, 2)

    def infer(self, attrs, ins):
        fn = attrs["fn"]
        if fn == "not":
            if len(ins) != 1:
                raise invalid("logic not: takes one input")
            return [(ins[0].shape, np.dtype(np.bool_))]
        if fn not in LOGIC or len(ins) != 2:
            raise invalid(f"logic: {fn!r} is not a two-input logic function")
        if ins[0].dtype != ins[1].dtype:
            raise invalid(f"logic {fn}: input types differ ({ins[0].dtype} and {ins[1].dtype})")
        return [(broadcast(ins[0].shape, ins[1].shape, node="logic"), np.dtype(np.bool_))]

    def run(self, attrs, ins, outs):
        fn = attrs["fn"]
        if fn == "not":
            outs[0][...] = np.logical_not(ins[0])
        else:
            outs[0][...] = LOGIC[fn][0](_wide(ins[0]), _wide(ins[1]))


@register
class Where(Op):
    """where(condition, x, y): x where condition holds, else y (broadcasting)."""

    name = "where"
    elementwise = True
    arity = (3, 3)

    def infer(self, attrs, ins):
        cond, x, y = ins
        if x.dtype != y.dtype:
            raise invalid(f"where: x and y types differ ({x.dtype} and {y.dtype})")
        return [(broadcast(cond.shape, x.shape, y.shape, node="where"), x.dtype)]

    def run(self, attrs, ins, outs):
        outs[0][...] = np.where(ins[0].astype(bool), ins[1], ins[2])


@register
class Cast(Op):
    """cast(x, dtype): the values converted (float -> int truncates toward zero; out of range saturates for
    16-bit floats as IEEE does: to inf)."""

    name = "cast"
    elementwise = True

    def infer(self, attrs, ins):
        return [(ins[0].shape, np.dtype(attrs["dtype"]))]

    def run(self, attrs, ins, outs):
        x = ins[0]
        target = outs[0]
        if x.dtype.kind == "f" and target.dtype.kind in "iu":
            with np.errstate(all="ignore"):
                info = np.iinfo(target.dtype)
                values = np.nan_to_num(np.trunc(x.astype(np.float64)), nan=0.0, posinf=info.max, neginf=info.min)
                target[...] = np.clip(values, info.min, info.max).astype(target.dtype)
            return
        target[...] = x.astype(target.dtype)


@register
class Fused(Op):
    """fused(*inputs, expression): a chain of elementwise ops computed by one generated kernel
    (`magicmind/kernels/codegen.py`); the output has the inputs' broadcast shape and the last node's type."""

    name = "fused"
    elementwise = True
    arity = (0, None)

    def infer(self, attrs, ins):
        nodes = attrs["expression"]["nodes"]
        used = {n["index"] for n in nodes if n["op"] == "input"}
        if used and max(used) >= len(ins):
            raise invalid(f"fused: the expression reads input {max(used)}, the step has {len(ins)}")
        return [(broadcast(*[i.shape for i in ins], node="fused"), np.dtype(nodes[-1]["dtype"]))]

    def prepare(self, attrs, ins, outs):
        from ...kernels.codegen import Elementwise
        kernel = Elementwise(attrs["expression"], [i.shape for i in ins], outs[0].shape)

        def run(arrays, results):
            kernel(arrays, results[0])
        run.flops = self.flops(attrs, [i.shape for i in ins], [o.shape for o in outs])
        run.source = kernel.source
        return run

    def run(self, attrs, ins, outs):
        from . import Info
        self.prepare(attrs, [Info(a.shape, a.dtype) for a in ins], [Info(o.shape, o.dtype) for o in outs])(ins, outs)

    def flops(self, attrs, in_shapes, out_shapes):
        nodes = [n for n in attrs["expression"]["nodes"] if n["op"] != "input"]
        return float(max(1, len(nodes)) * int(np.prod(out_shapes[0])))
