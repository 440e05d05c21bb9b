"""Shape planning over a node list: every tensor's Info (shape, dtype, host value) from the inputs' shapes.

Host values propagate through ops whose inputs all have one and whose outputs are small (shape arithmetic:
Shape -> Gather -> Concat -> Reshape), so shapes computed from shapes are known before the model runs; constants
always have theirs.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from ..status import MagicMindError
from . import ops as O
from .ops import Info


def _placeholder(info: Info) -> np.ndarray:
    """An array of the info's shape that reads as zeros and holds no memory (for ops that read only shapes)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, info.dtype), info.shape, (0,) * len(info.shape))


def infer_node(op_name: str, attrs: dict, ins: Sequence[Info], label: str, fold_limit: int = O.HOST_VALUE_LIMIT):
    """The output Infos of one node (values included when computable on the host)."""
    op = O.get(op_name)
    op.check_arity(len(ins), label)
    try:
        results = op.infer(attrs, ins)
    except MagicMindError as error:
        raise MagicMindError(error.code, f"node {label!r}: {error.message}") from None
    infos = [Info(shape, dtype) for shape, dtype in results]
    if op_name == "const":
        infos[0].value = attrs["value"]
        return infos
    host = op.host_evaluable and (op.shape_only and all(info.known for info in ins[:1]) or
                                  (all(i.value is not None for i in ins) and bool(ins)))
    if host and all(info.known and int(np.prod(info.shape)) <= fold_limit for info in infos):
        values = [i.value if i.value is not None else _placeholder(i) for i in ins]
        try:
            outs = O.evaluate(op_name, attrs, values)
        except MagicMindError as error:
            raise MagicMindError(error.code, f"node {label!r}: {error.message}") from None
        except (ValueError, IndexError, TypeError, ZeroDivisionError) as error:
            raise MagicMindError(3, f"node {label!r} ({op_name}): {error}") from None
        for info, value in zip(infos, outs):
            info.value = value
    return infos


def infer_all(nodes: Sequence, infos: dict, on_node: Optional[Callable] = None) -> dict:
    """Fill `infos` (tensor key -> Info, the inputs' given) for every node's outputs, in order. A node is
    (op, attrs, input keys, output keys, label); `on_node(node, ins)` may supply values before a node (the engine
    reads data-dependent shape inputs from the device there)."""
    for node in nodes:
        op_name, attrs, in_keys, out_keys, label = node
        ins = [infos[k] for k in in_keys]
        if on_node is not None:
            ins = on_node(node, ins)
        outs = infer_node(op_name, attrs, ins, label)
        if len(outs) != len(out_keys):
            raise MagicMindError(13, f"node {label!r}: {len(outs)} outputs inferred, {len(out_keys)} wired")
        for key, info in zip(out_keys, outs):
            infos[key] = info
    return infos
