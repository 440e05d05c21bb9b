"""Which nodes of a TorchDynamo graph a MagicMind subgraph takes.

A node is taken when its function or method is one whose ONNX translation (torch's exporter) the ONNX parser reads,
every tensor it reads or writes is a floating tensor, it returns one tensor (chunk and split: a tuple of them, picked
by the getitem nodes after them), and it mutates nothing (`inplace=True`,
a trailing-underscore method and training-mode batch norm or dropout stay eager). Nodes that only move or rename
data (views, reshapes, transposes) join a subgraph but never make one on their own.
"""
from __future__ import annotations

import operator

import torch
import torch.nn.functional as F
from torch.fx.passes.operator_support import OperatorSupportBase

#: torch functions with MagicMind layers (convolution, GEMM, normalization, pooling, activations, arithmetic)
COMPUTE_FUNCTIONS = frozenset({
    torch.conv1d, torch.conv2d, torch.conv3d, F.linear, torch.matmul, torch.bmm, torch.mm,
    F.batch_norm, F.layer_norm, F.max_pool1d, F.max_pool2d, F.avg_pool1d, F.avg_pool2d, F.adaptive_avg_pool2d,
    F.relu, torch.relu, F.relu6, F.hardtanh, F.leaky_relu, F.elu, torch.sigmoid, F.sigmoid, torch.tanh, F.tanh, F.gelu, F.silu, F.hardswish, F.hardsigmoid,
    F.softmax, torch.softmax, F.log_softmax, torch.exp, torch.sqrt, torch.rsqrt, torch.erf, torch.abs, torch.neg,
    torch.mean, torch.sum, torch.add, torch.sub, torch.mul, torch.div, torch.cat, torch.clamp, F.dropout,
    operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, operator.matmul, F.interpolate,
})
#: torch functions that move data only
MOVEMENT_FUNCTIONS = frozenset({torch.flatten, torch.reshape, torch.transpose, torch.permute, torch.unsqueeze,
                                torch.squeeze, torch.chunk, torch.split, operator.getitem})
COMPUTE_METHODS = frozenset({"mean", "sum", "softmax", "relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "abs",
                             "neg", "add", "sub", "mul", "div", "clamp", "matmul"})
MOVEMENT_METHODS = frozenset({"view", "reshape", "flatten", "permute", "transpose", "contiguous", "unsqueeze",
                              "squeeze", "chunk", "split"})
#: the index of a tensor subscript MagicMind slices (a tensor index is a gather of data it does not take)
_BASIC_INDEX = (int, slice, type(None), type(Ellipsis))
#: functions whose training flag (argument position, keyword) must be False: their training form is not inference
_TRAINING_FLAG = {F.batch_norm: (5, "training"), F.dropout: (2, "training")}
FLOATING = (torch.float32, torch.float16)


def _example(node):
    return node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None


def _reads_floating_tensors_only(node) -> bool:
    for arg in node.all_input_nodes:
        value = _example(arg)
        values = value if isinstance(value, (tuple, list)) and node.target is operator.getitem else [value]
        if not all(isinstance(v, torch.Tensor) and v.dtype in FLOATING for v in values):
            return False
    return True


def _mutates(node) -> bool:
    if node.kwargs.get("inplace"):
        return True
    flag = _TRAINING_FLAG.get(node.target)
    if flag is not None:
        position, name = flag
        value = node.args[position] if len(node.args) > position else node.kwargs.get(name, False)
        if value is not False:
            return True
    return node.op == "call_method" and node.target.endswith("_")


def is_compute(node) -> bool:
    """The node computes (a subgraph of movement nodes only is not worth a model)."""
    return (node.op == "call_function" and node.target in COMPUTE_FUNCTIONS) or \
        (node.op == "call_method" and node.target in COMPUTE_METHODS)


class MagicMindSupport(OperatorSupportBase):
    """torch.fx OperatorSupport: the nodes a MagicMind subgraph takes (module docstring)."""

    def is_node_supported(self, submodules, node) -> bool:
        if node.op == "call_function":
            if node.target not in COMPUTE_FUNCTIONS and node.target not in MOVEMENT_FUNCTIONS:
                return False
        elif node.op == "call_method":
            if node.target not in COMPUTE_METHODS and node.target not in MOVEMENT_METHODS:
                return False
        else:
            return False
        output = _example(node)
        outputs = output if isinstance(output, (tuple, list)) and node.target in _SPLITS else [output]
        if not outputs or not all(isinstance(o, torch.Tensor) and o.dtype in FLOATING and o.numel() for o in outputs):
            return False
        if node.target is operator.getitem and not _basic_index(node.args[1]):
            return False
        source = node.args[0] if node.args else None
        if node.target is operator.getitem and isinstance(_example(source), (tuple, list)) and \
                getattr(source, "target", None) not in _SPLITS:
            return False
        return _reads_floating_tensors_only(node) and not _mutates(node)


#: nodes returning a tuple of tensors (the getitem nodes that pick from them join their partition)
_SPLITS = frozenset({torch.chunk, torch.split, "chunk", "split"})


def _basic_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, _BASIC_INDEX) and not isinstance(i, bool) and
               (not isinstance(i, slice) or all(b is None or type(b) is int for b in (i.start, i.stop, i.step)))
               for i in items)
