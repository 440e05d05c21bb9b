"""Per-node fallback: aten ops the numba code generator cannot compile run as eager mlu ops.

A post-grad pass of the "mlu" device (Inductor's `register_backend_for_device(..., device_custom_pass=...)`): each
node of a graph on mlu whose op lowers to something the code generator does not have (the special functions of
Inductor's pointwise set without a numba implementation: Bessel, gamma-family, orthogonal polynomials, ...) gets a
lowering of its own that makes it an extern call of the same aten op, exactly as Inductor treats an op without a
lowering. Only that node leaves the fused code; the message goes to the `torch._inductor.mlu` logger, which
`TORCH_LOGS="inductor"` shows, as Inductor's own implicit fallbacks do.
"""
from __future__ import annotations

import functools
import hashlib
import logging
from pathlib import Path

import torch
from torch._inductor.custom_graph_pass import CustomGraphModulePass

log = logging.getLogger("torch._inductor.mlu")

#: aten/prims op packet -> the Inductor op its lowering needs that the code generator lacks
_unsupported_packets: dict = {}
#: op overloads seen to fall back, with their reasons (for tests and the report)
fell_back: dict[str, str] = {}


def _package_hash() -> str:
    """A hash of this package's sources: compiled graphs cached by an older code generator are not reused."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


@functools.cache
def unsupported_ops() -> dict:
    """{aten or prims op packet: Inductor op name} of the ops that run eagerly on mlu."""
    from torch._inductor.codegen.common import pointwise_overrides_data
    from .overrides import UNSUPPORTED
    found = {}
    for name in UNSUPPORTED:
        data = pointwise_overrides_data.get(name)
        if data is None:
            continue
        for namespace in (torch.ops.aten, torch.ops.prims):
            packet = getattr(namespace, data.name, None)
            if packet is not None:
                found[packet] = name
    return found


def _on_mlu(node: torch.fx.Node) -> bool:
    values = [node.meta.get("val")] + [arg.meta.get("val") for arg in node.all_input_nodes]
    for value in values:
        for leaf in torch.utils._pytree.tree_leaves(value):
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "mlu":
                return True
    return False


def eager_lowering(op):
    """A lowering that makes `op` an extern call of the eager mlu op (Inductor's fallback kernel)."""

    def lower(*args, **kwargs):
        from torch._inductor.lowering import fallback_handler
        return fallback_handler(op, add_to_fallback_set=False)(*args, **kwargs)

    lower._inductor_lowering_function = True  # GraphLowering calls it with the lowered arguments
    lower.__name__ = f"mlu_eager_{op.__name__.replace('.', '_')}"
    lower.mlu_eager_op = op
    return lower


class EagerFallbackPass(CustomGraphModulePass):
    """The "mlu" post-grad pass: nodes the code generator cannot compile become eager mlu ops."""

    def __call__(self, gm: torch.fx.GraphModule) -> None:
        unsupported = unsupported_ops()
        changed = False
        for node in gm.graph.nodes:
            if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
                continue
            missing = unsupported.get(node.target.overloadpacket)
            if missing is None or not _on_mlu(node):
                continue
            op = node.target
            reason = f"the mlu numba code generator has no '{missing}'"
            log.info("mlu: %s runs as the eager mlu op (%s)", op, reason)
            fell_back[str(op)] = reason
            node.target = eager_lowering(op)
            changed = True
        if changed:
            gm.recompile()

    def uuid(self) -> str:
        return f"torch_mlu._inductor:{_package_hash()}"


__all__ = ["EagerFallbackPass", "eager_lowering", "fell_back", "unsupported_ops", "log"]
