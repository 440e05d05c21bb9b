"""`torch.compile(model, backend="magicmind")`: the graph TorchDynamo captures, partitioned into MagicMind subgraphs.

As Cambricon PyTorch's JIT mode does, the nodes MagicMind takes (support.py) are grouped into the largest
partitions torch.fx's capability partitioner finds; each becomes a MagicMindSubgraph (built models, run on the
current mlu stream) and every other node runs eagerly on mlu between them. Options (torch.compile's `options=`):

  precision       a precision_mode of the BuilderConfig (force_float32, force_float16, qint8_mixed_float16, ...);
                  the qint modes calibrate on the values the subgraph saw when it was compiled
  builder_config  a dict or JSON text merged into the BuilderConfig after `precision`

MagicMind builds inference models: a graph that needs gradients (grad mode on and an input requiring them) or whose
inputs are not mlu tensors runs eagerly, with a warning saying why. Every compiled graph is reported in `graphs`.
"""
from __future__ import annotations

import collections
import operator
import json
import warnings
import weakref
from dataclasses import dataclass, field

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner

from ..build.config import BuilderConfig
from .runner import MagicMindSubgraph
from .support import MagicMindSupport, is_compute

OPTIONS = ("precision", "builder_config")


@dataclass
class CompiledGraph:
    """What the backend made of one captured graph. It refers to the graph and its subgraphs weakly (proxies): the
    report keeps no model, context or device memory alive once torch drops the compiled graph."""

    graph_module: object
    subgraphs: list = field(default_factory=list)      # the MagicMindSubgraph modules
    eager_nodes: list = field(default_factory=list)    # names of the call nodes left to eager mlu
    reason: str = ""                                   # why the whole graph runs eagerly, if it does


#: the graphs compiled in this process, newest last
graphs: collections.deque = collections.deque(maxlen=64)


def config_text(options) -> str:
    """The BuilderConfig JSON of the backend's options; an unknown option or a bad value names it."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"magicmind backend: unknown option {unknown[0]!r} (options: {', '.join(OPTIONS)})")
    values = {"graph_shape_mutable": False}
    precision = options.get("precision", "force_float32")
    values["precision_config"] = {"precision_mode": precision}
    extra = options.get("builder_config") or {}
    if isinstance(extra, str):
        try:
            extra = json.loads(extra)
        except json.JSONDecodeError as error:
            raise ValueError(f"magicmind backend: builder_config is not JSON: {error}") from None
    if not isinstance(extra, dict):
        raise ValueError(f"magicmind backend: builder_config must be a dict or JSON text, not "
                         f"{type(extra).__name__}")
    config = BuilderConfig()
    for text in (json.dumps(values), json.dumps(extra)):
        status = config.parse_from_string(text)
        if not status.ok():
            raise ValueError(f"magicmind backend: {status}")
    return json.dumps(config.as_dict(), sort_keys=True)


def _is_weight(node, example) -> bool:
    """A placeholder holding a parameter or buffer of the model (frozen into the subgraphs), not a user input."""
    if isinstance(example, torch.nn.Parameter):
        return True
    grapharg = node.meta.get("grapharg")
    source = getattr(grapharg, "source", None)
    name = getattr(source, "name", "")
    name = name() if callable(name) else str(name)  # a method in older torch, a property now
    return "._buffers[" in name or "._parameters[" in name


def _eager_reason(example_inputs) -> str:
    tensors = [t for t in example_inputs if isinstance(t, torch.Tensor)]
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        return "the graph needs gradients (MagicMind builds inference models: use torch.no_grad())"
    if not tensors or any(t.device.type != "mlu" for t in tensors):
        return "its inputs are not all mlu tensors"
    return ""


def _partition(gm) -> torch.fx.GraphModule:
    partitioner = CapabilityBasedPartitioner(gm, MagicMindSupport(), allows_single_node_partition=True)
    partitions = [p for p in partitioner.propose_partitions() if any(is_compute(n) for n in p.nodes)]
    return partitioner.fuse_partitions(partitions, prefix="magicmind_")


def _symbolic_axes(node) -> dict:
    """Argument position -> the axes of that tensor argument torch traced as symbolic sizes."""
    found = {}
    for i, arg in enumerate(node.args):
        example = arg.meta.get("example_value") if isinstance(arg, torch.fx.Node) else None
        if isinstance(example, torch.Tensor):
            found[i] = [axis for axis, size in enumerate(example.shape) if isinstance(size, torch.SymInt)]
    return found


class _Capture(torch.fx.Interpreter):
    """Runs the fused graph on the example inputs, keeping each partition's arguments (the values it is built
    from and calibrated on)."""

    def __init__(self, gm, names):
        super().__init__(gm)
        self.names = names
        self.seen: dict = {}

    def call_module(self, target, args, kwargs):
        if target in self.names:
            self.seen[target] = args
        return super().call_module(target, args, kwargs)


def magicmind_backend(gm: torch.fx.GraphModule, example_inputs, options=None):
    """The TorchDynamo backend "magicmind" (registered through the torch_dynamo_backends entry point)."""
    text = config_text(options)
    calibrate = json.loads(text)["precision_config"]["precision_mode"].startswith("qint")
    report = CompiledGraph(weakref.proxy(gm))
    graphs.append(report)
    report.reason = _eager_reason(example_inputs)
    if report.reason:
        warnings.warn(f"magicmind backend: the graph runs eagerly: {report.reason}", stacklevel=2)
        report.eager_nodes = [n.name for n in gm.graph.nodes if n.op.startswith("call")]
        return gm.forward
    fused = _partition(gm)
    placeholders = [n for n in fused.graph.nodes if n.op == "placeholder"]
    weights = {n for n, example in zip(placeholders, example_inputs) if _is_weight(n, example)}
    calls = [n for n in fused.graph.nodes if n.op == "call_module" and n.target.startswith("magicmind_")]
    capture = _Capture(fused, {n.target for n in calls})
    with torch.no_grad():
        capture.run(*example_inputs)
    for node in calls:
        eager = getattr(fused, node.target)
        frozen = {i for i, arg in enumerate(node.args) if arg in weights or getattr(arg, "op", "") == "get_attr"}
        module = MagicMindSubgraph(f"{node.target}", eager, frozen, text, calibrate, _symbolic_axes(node))
        try:
            module.build(capture.seen[node.target])
        except Exception as error:  # noqa: BLE001 - torch's exporter raises many types; the warning names it
            warnings.warn(f"magicmind backend: {node.target} runs eagerly: {error}", stacklevel=2)
            report.eager_nodes.extend(n.name for n in eager.graph.nodes if n.op.startswith("call"))
            continue
        setattr(fused, node.target, module)
        report.subgraphs.append(weakref.proxy(module))
    report.eager_nodes.extend(n.name for n in fused.graph.nodes if n.op.startswith("call") and n not in calls
                              and not (n.target is operator.getitem and n.args[0] in calls))
    report.graph_module = weakref.proxy(fused)
    fused.recompile()
    return fused
