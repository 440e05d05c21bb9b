"""The cases of Cambricon's torch_mlu suite that need a real card, skipped with the reason (a pytest plugin the
runner loads: `-p torch_mlu.conformance.hardware`). Each entry names what the case reads that no simulator has;
everything else runs, and counts."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

#: test id (the file's path under test/, "::" and the case's name; a prefix selects several) -> why it needs a card
NEEDS_HARDWARE: dict[str, str] = {}
#: a JSON file of more such entries (the runner's `skips`: `mlusim conformance torch_mlu --skips F`)
SKIPS_VARIABLE = "MLUSIM_CONFORMANCE_SKIPS"


def _table() -> dict[str, str]:
    table = dict(NEEDS_HARDWARE)
    more = os.environ.get(SKIPS_VARIABLE)
    if more:
        with open(more) as file:
            table.update(json.load(file))
    return table


def suite_id(path: Path, nodeid: str) -> str:
    """A case's id from the suite's test/ folder on ("torch_ops/test_add.py::TestAdd::test_x"), whatever pytest's
    root was."""
    path = Path(path)
    relative = path.name
    for parent in path.parents:
        if (parent / "common_utils.py").is_file():
            relative = path.relative_to(parent).as_posix()
            break
    rest = nodeid.split("::", 1)[1] if "::" in nodeid else ""
    return f"{relative}::{rest}"


def reason_for(case: str, table: dict[str, str] | None = None) -> str | None:
    """The reason the case `case` (a suite id) needs a real card, or None."""
    for prefix, reason in (_table() if table is None else table).items():
        if case.startswith(prefix):
            return reason
    return None


def pytest_collection_modifyitems(config, items) -> None:
    table = _table()
    for item in items:
        reason = reason_for(suite_id(item.path, item.nodeid), table)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"needs a real MLU: {reason}"))
