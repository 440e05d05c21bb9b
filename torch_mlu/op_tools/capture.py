"""capture: every aten op that touches mlu, with its inputs' and outputs' shapes, dtypes, strides and devices, its
phase (forward, or backward with the autograd node) and its host time, kept in memory and written as JSON lines.

    with torch_mlu.op_tools.capture("ops.jsonl") as ops:
        model(x).sum().backward()
    ops.records[0]  # {'index': 0, 'op': 'aten::addmm', 'phase': 'forward', 'inputs': [...], ...}
    torch_mlu.op_tools.load_capture("ops.jsonl") == ops.records
"""
from __future__ import annotations

import json
from pathlib import Path

from torch.utils._pytree import tree_leaves

from ._intercept import OpCall, Tool, describe

FORMAT = "mlusim op capture"
VERSION = 1


def _arguments(call: OpCall) -> list:
    described = []
    schema_arguments = call.func._schema.arguments
    positional = [argument.name for argument in schema_arguments if not argument.kwarg_only]
    for position, value in enumerate(call.args):
        name = positional[position] if position < len(positional) else f"arg{position}"
        described.append({"name": name, **_value(value)})
    for name, value in call.kwargs.items():
        described.append({"name": name, **_value(value)})
    return described


def _value(value) -> dict:
    if isinstance(value, (list, tuple)):
        return {"items": [describe(item) for item in value]}
    return describe(value)


class OpCapture(Tool):
    """Records every intercepted op; `path` (optional) receives them as JSON lines when the capture stops."""

    order = 10

    def __init__(self, path=None):
        self.path = Path(path) if path is not None else None
        self.records: list[dict] = []

    def after(self, call: OpCall) -> None:
        outputs = [describe(leaf) for leaf in tree_leaves(call.result)] if call.result is not None else []
        self.records.append({"index": call.index, "op": call.name, "phase": call.phase,
                             "inputs": _arguments(call), "outputs": outputs, "host_us": round(call.host_us, 3)})

    def finish(self) -> None:
        if self.path is not None:
            self.write(self.path)

    def write(self, path) -> Path:
        """Write the records as JSON lines (a header line, then one op per line)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as handle:
            handle.write(json.dumps({"format": FORMAT, "version": VERSION, "ops": len(self.records)}) + "\n")
            for record in self.records:
                handle.write(json.dumps(record) + "\n")
        return path


def load_capture(path) -> list[dict]:
    """The records of a capture file written by OpCapture."""
    lines = Path(path).read_text().splitlines()
    if not lines:
        raise ValueError(f"{path}: empty capture file")
    header = json.loads(lines[0])
    if header.get("format") != FORMAT:
        raise ValueError(f"{path}: not an mlusim op capture (header {header!r})")
    if header.get("version") != VERSION:
        raise ValueError(f"{path}: capture version {header.get('version')}, this reader knows {VERSION}")
    records = [json.loads(line) for line in lines[1:] if line.strip()]
    if len(records) != header.get("ops"):
        raise ValueError(f"{path}: the header counts {header.get('ops')} ops, the file holds {len(records)}")
    return records
