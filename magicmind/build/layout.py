"""Layout conversion: the 2-D feature maps of the network (NCHW) are computed in NHWC, the layout MagicMind's
conv kernels (and the MLU's) read: channel-innermost windows, per-channel constants along the fastest axis.

Every conv, pooling, global pooling, resize and concat over 4-D feature maps, and every elementwise op one of whose
inputs is already NHWC, runs in NHWC; its output is a new value, the NHWC version of the network's tensor. A
transpose is inserted only where a tensor changes layout: into NHWC where a converted op reads a tensor only its
NCHW form has (a model input, the output of an op that stays NCHW), back into NCHW (under the tensor's own value id,
so names and model outputs are unchanged) where an NCHW op or a model output needs it. A transpose that moves only
axes of extent 1 ((N, 1, 1, C) <-> (N, C, 1, 1), after a global pooling) is a reshape (no copy). Constants are
permuted at build time; conv weights are packed for the kernel (G, Co/G, K*C/G); a matmul's constant right operand
is stored untransposed. A transpose into NHWC already in the network (convert_input_layout's) is reused, never
undone and redone.

convert_input_layout / convert_output_layout make a model input / output NHWC (NTC, NDHWC): the input value
takes the new layout and a transpose to the network's form follows it (removed when nothing needs it); the output
is the NHWC version itself.
"""
from __future__ import annotations

import numpy as np

from ..graph.program import Program, Step
from ..kernels.conv import pack_weights
from ..status import invalid

TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)
#: NCHW axis -> NHWC axis
AXIS = {0: 0, 1: 3, 2: 1, 3: 2}
FEATURE_OPS = frozenset({"conv", "pool", "global_pool", "batch_norm", "resize"})
ELEMENTWISE = frozenset({"binary", "unary", "logic", "where", "cast"})
#: (network layout, model layout) -> the model input's axis order, as a permutation of the network's axes
CONVERSIONS = {("NCHW", "NHWC"): (0, 2, 3, 1), ("NHWC", "NCHW"): (0, 3, 1, 2), ("NCT", "NTC"): (0, 2, 1),
               ("NTC", "NCT"): (0, 2, 1), ("NCDHW", "NDHWC"): (0, 2, 3, 4, 1), ("NDHWC", "NCDHW"): (0, 4, 1, 2, 3)}


def _permuted(shape, perm):
    return None if shape is None else tuple(shape[p] for p in perm)


def _inverse(perm):
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


class _Converter:
    def __init__(self, program: Program):
        self.program = program
        self.nhwc: dict = {}          # network value -> its NHWC version
        self.materialized: set = set(program.inputs) | {k for k, v in program.values.items()
                                                         if v.const is not None}
        self.steps: list = []
        self.transposes = 0
        self.views = 0
        self.converted = 0

    def value(self, key):
        return self.program.values[key]

    def rank4(self, key) -> bool:
        shape = self.value(key).shape
        return shape is not None and len(shape) == 4

    # ---- layout changes --------------------------------------------------------------------------------------

    def _transpose(self, source, target, perm, name) -> None:
        """Append `target = permute(source, perm)`: a reshape (no copy) when the axes of extent other than 1 keep
        their order and the new shape has at most one unknown extent."""
        shape = self.value(source).shape
        if shape is not None:
            moving = [axis for axis in perm if shape[axis] != 1]
            out = _permuted(shape, perm)
            if moving == sorted(moving) and sum(1 for d in out if d < 0) <= 1:
                target_shape = np.array(out, np.int64)
                shape_key = self.program.new_value(name + "/shape", np.int64, target_shape.shape, target_shape)
                self.steps.append(Step("reshape", {}, [source, shape_key], [target], name))
                self.views += 1
                return
        self.steps.append(Step("permute", {"perm": list(perm)}, [source], [target], name))
        self.transposes += 1

    def as_nhwc(self, key):
        """The NHWC version of network value `key` (a permuted constant, or a transpose step)."""
        found = self.nhwc.get(key)
        if found is not None:
            return found
        value = self.value(key)
        if value.const is not None:
            data = np.ascontiguousarray(value.const.reshape((1,) * (4 - value.const.ndim) + value.const.shape)
                                        .transpose(TO_NHWC))
            found = self.program.new_value(value.name + "/nhwc", value.dtype, data.shape, data)
        else:
            found = self.program.new_value(value.name + "/nhwc", value.dtype, _permuted(value.shape, TO_NHWC))
            self._transpose(key, found, TO_NHWC, value.name + "/to_nhwc")
        self.nhwc[key] = found
        return found

    def as_nchw(self, key):
        """Network value `key` itself, transposed back from its NHWC version where it was not computed."""
        if key not in self.materialized:
            self._transpose(self.nhwc[key], key, TO_NCHW, self.value(key).name + "/to_nchw")
            self.materialized.add(key)
        return key

    def output_nhwc(self, key):
        """A new value for the NHWC version of the network's `key`, which a converted step computes."""
        value = self.value(key)
        found = self.program.new_value(value.name + "/nhwc", value.dtype, _permuted(value.shape, TO_NHWC))
        self.nhwc[key] = found
        return found

    # ---- steps -----------------------------------------------------------------------------------------------

    def convertible(self, step) -> bool:
        if step.op in FEATURE_OPS:
            if not step.ins or not self.rank4(step.ins[0]) or step.attrs.get("layout", "NCHW") != "NCHW":
                return False
            if step.op == "resize":
                return self.value(step.ins[1]).const is not None
            if step.op == "pool":
                return len(step.attrs["kernel_shape"]) == 2
            return True
        if step.op == "concat":
            return all(self.rank4(k) for k in step.ins) and any(k in self.nhwc for k in step.ins)
        if step.op in ELEMENTWISE:
            if not all(self.rank4(k) for k in step.outs):
                return False
            runtime = [k for k in step.ins if self.value(k).const is None]
            if not any(k in self.nhwc for k in runtime):
                return False
            # runtime inputs of a lower rank would need a reshape first: those ops stay NCHW
            return all(self.rank4(k) for k in runtime)
        return False

    def convert(self, step) -> None:
        op = step.op
        attrs = dict(step.attrs)
        ins = list(step.ins)
        if op == "conv":
            ins[0] = self.as_nhwc(ins[0])
            w = self.value(ins[1])
            if w.const is not None:
                groups = int(attrs.get("group", 1))
                packed = pack_weights(w.const, groups)
                ins[1] = self.program.new_value(w.name + "/packed", w.dtype, packed.shape, packed)
                attrs.update(packed=True, kernel=list(w.const.shape[2:]))
        elif op == "resize":
            ins[0] = self.as_nhwc(ins[0])
            sizes = np.asarray(self.value(ins[1]).const).reshape(-1)
            if sizes.size == 4:
                data = sizes[list(TO_NHWC)].astype(sizes.dtype)
                ins[1] = self.program.new_value(self.value(ins[1]).name + "/nhwc", data.dtype, data.shape, data)
            if attrs.get("scales"):
                attrs["scales"] = [attrs["scales"][p] for p in TO_NHWC]
        elif op == "concat":
            ins = [self.as_nhwc(k) for k in ins]
            attrs["axis"] = AXIS[int(attrs["axis"]) % 4]
        elif op in ELEMENTWISE:
            ins = [self.as_nhwc(k) if self.value(k).const is None or self.value(k).const.ndim >= 1 and
                   self.value(k).const.size > 1 else k for k in ins]
        else:
            ins[0] = self.as_nhwc(ins[0])
        if op in FEATURE_OPS:
            attrs["layout"] = "NHWC"
        outs = [self.output_nhwc(k) for k in step.outs]
        self.steps.append(Step(op, attrs, ins, outs, step.name))
        self.converted += 1

    def keep(self, step) -> None:
        if step.op == "permute" and len(step.ins) == 1 and self.rank4(step.ins[0]) and \
                tuple(step.attrs.get("perm") or ()) == TO_NCHW:
            source = step.ins[0]
            self.steps.append(Step(step.op, step.attrs, [self.as_nchw(source)], step.outs, step.name))
            self.materialized.update(step.outs)
            self.nhwc.setdefault(step.outs[0], self.as_nchw(source))  # the network's own NHWC tensor
            return
        ins = [self.as_nchw(k) if k not in self.materialized else k for k in step.ins]
        self.steps.append(Step(step.op, step.attrs, ins, step.outs, step.name))
        self.materialized.update(step.outs)


def pack_matmul_weights(program: Program) -> int:
    """A matmul's constant right operand stored as (K, N): trans_b applied at build time."""
    packed = 0
    for step in program.steps:
        if step.op != "matmul" or not step.attrs.get("trans_b") or len(step.ins) < 2:
            continue
        value = program.values[step.ins[1]]
        if value.const is None or value.const.ndim < 2:
            continue
        data = np.ascontiguousarray(value.const.swapaxes(-1, -2))
        step.ins = [step.ins[0], program.new_value(value.name + "/kn", value.dtype, data.shape, data)] + step.ins[2:]
        step.attrs = dict(step.attrs, trans_b=False)
        packed += 1
    return packed


def convert_io(program: Program, inputs: dict) -> None:
    """convert_input_layout: the model input takes the converted layout, a transpose to the network's form after
    it (outputs are converted at the end of `to_nhwc`)."""
    prefix = []
    for index, spec in inputs.items():
        key = program.inputs[int(index)]
        value = program.values[key]
        perm = CONVERSIONS[(spec["src"], spec["dst"])]
        if value.shape is None or len(value.shape) != len(perm):
            raise invalid(f"convert_input_layout.{index}: input {value.name!r} has dims {value.shape}; "
                          f"{spec['src']} -> {spec['dst']} needs rank {len(perm)}")
        converted = program.new_value(value.name, value.dtype, _permuted(value.shape, perm))
        value.name = value.name + "/network_layout"
        program.inputs[int(index)] = converted
        bounds = program.ranges[int(index)]
        if bounds is not None:
            program.ranges[int(index)] = (list(_permuted(bounds[0], perm)), list(_permuted(bounds[1], perm)))
        prefix.append(Step("permute", {"perm": list(_inverse(perm))}, [converted], [key],
                           value.name.replace("/network_layout", "") + "/to_network_layout"))
    program.steps = prefix + program.steps


def to_nhwc(program: Program, output_layouts: dict) -> dict:
    """The layout pass (see the module's docstring); what it did."""
    converter = _Converter(program)
    for step in program.steps:
        if converter.convertible(step):
            converter.convert(step)
        else:
            converter.keep(step)
    for i, key in enumerate(program.outputs):
        spec = output_layouts.get(str(i))
        if spec is not None and (spec["src"], spec["dst"]) == ("NCHW", "NHWC") and key in converter.nhwc:
            nhwc = converter.nhwc[key]  # the NHWC version the model computes is the output itself
            name = program.values[key].name
            program.values[key].name = name + "/network_layout"
            program.values[nhwc].name = name
            program.outputs[i] = nhwc
            continue
        converter.as_nchw(key)
        if spec is not None:
            value = program.values[key]
            perm = CONVERSIONS[(spec["src"], spec["dst"])]
            if value.shape is None or len(value.shape) != len(perm):
                raise invalid(f"convert_output_layout.{i}: output {value.name!r} has dims {value.shape}; "
                              f"{spec['src']} -> {spec['dst']} needs rank {len(perm)}")
            out = program.new_value(value.name, value.dtype, _permuted(value.shape, perm))
            value.name = value.name + "/network_layout"
            converter.steps.append(Step("permute", {"perm": list(perm)}, [key], [out], value.name + "/to_model"))
            program.outputs[i] = out
    program.steps = converter.steps
    return {"nhwc_steps": converter.converted, "transposes": converter.transposes, "view_transposes": converter.views}
