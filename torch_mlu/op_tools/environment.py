"""The op tools around an unchanged script, chosen by environment variables:

    MLUSIM_OP_TOOLS=capture,autocompare,timing,fallback   (or "all")   python train.py
    MLUSIM_OP_TOOLS_DIR=results                            (default: mlu_op_tools in the working directory)

`import torch` loads torch_mlu (the torch.backends entry point), which starts the tools named; at exit they write
capture.jsonl, autocompare.txt (and the mismatching calls as mismatch_*.pt), timing.csv / timing.txt and
fallback.txt into the directory and print their summaries to stderr.
"""
from __future__ import annotations

import atexit
import os
import sys
from pathlib import Path

TOOLS_VARIABLE = "MLUSIM_OP_TOOLS"
DIRECTORY_VARIABLE = "MLUSIM_OP_TOOLS_DIR"
NAMES = ("capture", "autocompare", "timing", "fallback")

_started: list = []


def requested(value: str | None = None) -> list[str]:
    """The tool names in MLUSIM_OP_TOOLS (ValueError naming an unknown one)."""
    text = os.environ.get(TOOLS_VARIABLE, "") if value is None else value
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if names == ["all"]:
        return list(NAMES)
    unknown = [name for name in names if name not in NAMES]
    if unknown:
        raise ValueError(f"{TOOLS_VARIABLE}: unknown tool(s) {', '.join(unknown)}; known: {', '.join(NAMES)}, all")
    return names


def start_from_environment() -> list:
    """Start the tools MLUSIM_OP_TOOLS names (once per process); their reports are written at exit."""
    if _started:
        return list(_started)
    names = requested()
    if not names:
        return []
    from . import AutoCompare, FallbackReport, OpCapture, OpTimer
    directory = Path(os.environ.get(DIRECTORY_VARIABLE, "mlu_op_tools"))
    makers = {"capture": lambda: OpCapture(directory / "capture.jsonl"),
              "autocompare": lambda: AutoCompare(save_dir=directory),
              "timing": lambda: OpTimer(directory / "timing.csv"),
              "fallback": lambda: FallbackReport(directory / "fallback.txt")}
    for name in names:
        _started.append(makers[name]().start())
    atexit.register(_stop_all, directory)
    return list(_started)


def _stop_all(directory: Path) -> None:
    from . import AutoCompare, FallbackReport, OpTimer
    for tool in reversed(_started):
        tool.stop()
        if isinstance(tool, AutoCompare):
            lines = tool.report_lines()
            directory.mkdir(parents=True, exist_ok=True)
            (directory / "autocompare.txt").write_text("\n".join(lines) + "\n")
        elif isinstance(tool, OpTimer):
            lines = tool.table_lines(limit=30)
            (directory / "timing.txt").write_text("\n".join(tool.table_lines()) + "\n")
        elif isinstance(tool, FallbackReport):
            lines = tool.table_lines()
        else:
            lines = [f"capture: {len(tool.records)} ops written to {tool.path}"]
        print("\n".join(lines), file=sys.stderr)
    _started.clear()
