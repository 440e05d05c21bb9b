"""Layer fusion: elementwise ops are computed inside the layer that makes their input (a conv's or matmul's
epilogue: its bias, a residual add, the activation, a cast), or, where no such layer is there, gathered into ONE
generated kernel per chain (op "fused"). Each absorbed op saves a launch and a full pass over device memory.

Walking the steps in order, an elementwise step (binary / unary / logic / where / cast over floats) joins the
group that computes one of its operands when
  - that operand is the group's output, read by this step only and not a model output,
  - every other operand is a constant or is computed before the group's step (the fused step runs where the
    group's first step ran), and
  - the step's output has the operand's shape (a group never widens: its kernel computes each element once).
Among the candidates the group whose step comes last is taken (a residual add joins the branch computed last).
An output read by several elementwise steps (SiLU's x * sigmoid(x), GELU's x * (1 + erf(x / sqrt 2)) / 2) joins
too when all of them, and what they compute, end in one value (the group's output) that leaves the group: the
steps downstream of it are checked before the first of them joins.
An elementwise step that joins no group starts a group of its own. Groups keep the rounding of the ops one by one
(`kernels/codegen.py`: each node rounded into its type), so arithmetic gives the bits the unfused model gives;
transcendental functions (exp, tanh, erf) are the C library's there and numpy's one by one, which may differ in
the last ulp.
"""
from __future__ import annotations

import numpy as np

from ..graph.program import Program, Step
from ..kernels.codegen import ExpressionBuilder, compute_type
from ..kernels.functions import BINARY, LOGIC, UNARY

ELEMENTWISE = frozenset({"binary", "unary", "logic", "where", "cast"})
FLOATS = frozenset({"float16", "float32", "float64"})
PARAMS = ("alpha", "beta", "min", "max")


def _fusable(program: Program, step: Step) -> bool:
    """An elementwise step the code generator computes (float data, functions with a scalar form)."""
    dtypes = [program.values[k].dtype.name for k in step.ins + step.outs]
    if step.op == "binary":
        return step.attrs["fn"] in BINARY and all(d in FLOATS for d in dtypes)
    if step.op == "unary":
        return step.attrs["fn"] in UNARY and all(d in FLOATS for d in dtypes)
    if step.op == "logic":
        fn = step.attrs["fn"]
        return (fn in LOGIC or fn == "not") and fn not in ("and", "or", "xor") and \
            all(program.values[k].dtype.name in FLOATS for k in step.ins)
    if step.op == "where":
        return program.values[step.ins[0]].dtype == np.bool_ and all(d in FLOATS for d in dtypes[1:])
    if step.op == "cast":
        source, target = program.values[step.ins[0]].dtype.name, program.values[step.outs[0]].dtype.name
        integer = np.dtype(source).kind in "iu"  # converted with round to nearest, as numpy's astype
        return (source in FLOATS and target in FLOATS) or ((source == "bool" or integer) and target in FLOATS) or \
            (source in FLOATS and target == "bool")
    return False


def _same_shape(a, b) -> bool:
    return a is not None and b is not None and tuple(a) == tuple(b)


def _fits(shape, out) -> bool:
    """`shape` broadcasts to `out` without widening it (-1 matches -1 or 1 only where `out` has -1)."""
    if shape is None or out is None or len(shape) > len(out):
        return False
    for d, o in zip(reversed(shape), reversed(out)):
        if d != 1 and d != o:
            return False
    return True


class _Group:
    """A fused step being built: its step (conv / matmul / fused), the expression, the values it reads, and the
    expression node of every value computed inside it."""

    def __init__(self, step: Step, position: int, builder: ExpressionBuilder, ins: list, extra_from: int):
        self.step, self.position, self.builder = step, position, builder
        self.ins = ins                # the step's inputs; expression input k >= offset is ins[extra_from + k - offset]
        self.extra_from = extra_from
        self.offset = 1 if step.op in ("conv", "matmul") else 0
        self.values: dict = {}        # value computed inside -> its node
        self.absorbed = 0
        self.shape = None

    def input_node(self, key, dtype) -> int:
        """The expression node reading value `key` (a new input when the group did not read it yet)."""
        if key in self.values:
            return self.values[key]
        try:
            position = self.ins.index(key, self.extra_from)
            index = position - self.extra_from + self.offset
        except ValueError:
            self.ins.append(key)
            index = len(self.ins) - 1 - self.extra_from + self.offset
        for n, node in enumerate(self.builder.nodes):
            if node["op"] == "input" and node["index"] == index:
                return n
        return self.builder.input(index, dtype)


def fuse(program: Program, epilogues: bool = True) -> dict:
    """Fuse the program's elementwise steps (see the module's docstring); what was done."""
    producer_position: dict = {key: -1 for key in program.inputs}
    consumers = program.consumers()
    outputs = set(program.outputs)
    owner: dict = {}        # value -> the group whose output it is
    approved: dict = {}     # step index -> the group it joins (checked downstream of a shared output)
    steps: list = []        # new step list (None where a step was absorbed)
    counts = {"epilogue_ops": 0, "fused_ops": 0, "fused_kernels": 0}
    for index, step in enumerate(program.steps):
        position = len(steps)
        if epilogues and step.op in ("conv", "matmul") and _float_layer(program, step):
            group = _start_layer(program, step, position)
            owner[step.outs[0]] = group
            steps.append(group)
            producer_position[step.outs[0]] = position
            continue
        if step.op in ELEMENTWISE and _fusable(program, step):
            group = _join(program, index, step, owner, consumers, outputs, producer_position, approved)
            if group is not None:
                counts["epilogue_ops" if group.offset else "fused_ops"] += 1
                owner[step.outs[0]] = group
                producer_position[step.outs[0]] = group.position
                steps.append(None)
                continue
            group = _start_chain(program, step, position)
            if group is not None:
                owner[step.outs[0]] = group
                steps.append(group)
                producer_position[step.outs[0]] = position
                continue
        steps.append(step)
        for key in step.outs:
            producer_position[key] = position
    result = []
    for entry in steps:
        if entry is None:
            continue
        result.append(_finish(entry, counts) if isinstance(entry, _Group) else entry)
    program.steps = result
    return counts


def _float_layer(program: Program, step: Step) -> bool:
    out = program.values[step.outs[0]]
    return len(step.outs) == 1 and out.dtype.name in ("float16", "float32") and \
        program.values[step.ins[0]].dtype.kind == "f"


def _start_layer(program: Program, step: Step, position: int) -> _Group:
    """A conv / matmul as a group: acc (float32) [+ bias], rounded into the layer's output type (or the epilogue
    the layer has: a quantized layer's dequantization)."""
    builder = ExpressionBuilder()
    if step.attrs.get("epilogue"):
        builder.nodes = [dict(n) for n in step.attrs["epilogue"]["nodes"]]
        group = _Group(step, position, builder, list(step.ins), 2)
        group.values[step.outs[0]] = len(builder.nodes) - 1
        group.shape = program.values[step.outs[0]].shape
        return group
    value = builder.input(0, np.float32)
    ins = list(step.ins[:2])
    if len(step.ins) > 2:
        bias = program.values[step.ins[2]]
        ins.append(step.ins[2])
        node = builder.cast(builder.input(1, bias.dtype), np.float32)
        value = builder.node("binary", [value, node], np.float32, fn="add")
    node = builder.cast(value, program.values[step.outs[0]].dtype)
    group = _Group(step, position, builder, ins, 2)
    group.values[step.outs[0]] = node
    group.shape = program.values[step.outs[0]].shape
    return group


def _start_chain(program: Program, step: Step, position: int):
    builder = ExpressionBuilder()
    group = _Group(Step("fused", {}, [], list(step.outs), step.name), position, builder, [], 0)
    args = [group.input_node(k, program.values[k].dtype) for k in step.ins]
    node = _node(program, builder, step, args)
    if compute_type([n["dtype"] for n in builder.nodes]) is None:
        return None
    group.values[step.outs[0]] = node
    group.shape = program.values[step.outs[0]].shape
    group.absorbed = 1
    return group


def _node(program: Program, builder: ExpressionBuilder, step: Step, args: list) -> int:
    dtype = program.values[step.outs[0]].dtype
    if step.op == "cast":
        return builder.node("cast", args, dtype, source=program.values[step.ins[0]].dtype)
    if step.op == "where":
        return builder.node("where", args, dtype)
    params = {k: step.attrs[k] for k in PARAMS if k in step.attrs}
    return builder.node(step.op, args, dtype, fn=step.attrs["fn"], params=params)


def _operands_ok(program, step, group, inside, producer_position) -> bool:
    """Every operand of `step` is computed in the group (or will be: `inside`), a constant, or computed before
    the group's step; and the step does not widen the group."""
    if not _same_shape(program.values[step.outs[0]].shape, group.shape):
        return False
    for k in step.ins:
        if k in inside or program.values[k].const is not None:
            continue
        if producer_position.get(k, 1 << 60) >= group.position:
            return False
        if not _fits(program.values[k].shape, group.shape):
            return False
    return True


def _closure(program, key, group, consumers, outputs, producer_position):
    """The steps downstream of the group's value `key` (read by several steps) that can join the group, ending
    in one value that leaves it; None when they do not."""
    inside = set(group.values)
    members, exits, pending = set(), set(), [key]
    while pending:
        value = pending.pop()
        if value in outputs:
            exits.add(value)
        for c in consumers.get(value, []):
            if c in members:
                continue
            step = program.steps[c]
            if step.op not in ELEMENTWISE or not _fusable(program, step) or len(step.outs) != 1:
                exits.add(value)
                continue
            members.add(c)
            inside.add(step.outs[0])
            pending.append(step.outs[0])
            if len(members) > 32:
                return None
    if len(exits) != 1 or key in exits:
        return None
    for c in members:
        if not _operands_ok(program, program.steps[c], group, inside, producer_position):
            return None
    return members


def _join(program, index, step, owner, consumers, outputs, producer_position, approved):
    if index in approved:
        group = approved.pop(index)
        return _absorb(program, step, group)
    candidates = []
    for key in step.ins:
        group = owner.get(key)
        if group is None or key in outputs or key not in group.values:
            continue
        if len(consumers.get(key, [])) != 1:
            members = _closure(program, key, group, consumers, outputs, producer_position)
            if members is None or index not in members:
                continue
            candidates.append((group.position, key, group, members))
            continue
        if not _operands_ok(program, step, group, set(group.values), producer_position):
            continue
        candidates.append((group.position, key, group, None))
    candidates = [c for c in candidates if compute_type([n["dtype"] for n in c[2].builder.nodes] +
                                                       [program.values[k].dtype.name for k in step.ins + step.outs])
                  is not None]
    if not candidates:
        return None
    _, key, group, members = max(candidates, key=lambda c: c[0])
    if members is not None:
        for member in members - {index}:
            approved[member] = group
    return _absorb(program, step, group)


def _absorb(program, step, group) -> "_Group":
    args = [group.input_node(k, program.values[k].dtype) for k in step.ins]
    node = _node(program, group.builder, step, args)
    group.values[step.outs[0]] = node
    group.step = Step(group.step.op, group.step.attrs, group.step.ins, list(step.outs), group.step.name)
    group.absorbed += 1
    return group


def _finish(group: _Group, counts: dict) -> Step:
    step = group.step
    expression = group.builder.expression()
    if step.op == "fused":
        counts["fused_kernels"] += 1
        name = step.name if group.absorbed <= 1 else f"{step.name}+{group.absorbed - 1}"
        return Step("fused", {"expression": expression}, list(group.ins), list(step.outs), name)
    if group.absorbed == 0:
        return Step(step.op, step.attrs, list(step.ins), list(step.outs), step.name)
    attrs = dict(step.attrs, epilogue=expression)
    return Step(step.op, attrs, list(group.ins), list(step.outs), step.name)
