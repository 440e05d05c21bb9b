"""A module imported on first use of one of its attributes.

Packages whose start-up should not pay for numba (a C program's first call loads them into a fresh interpreter)
hold their numba modules through `LazyModule`: `tiny = LazyModule("cncl.tiny")` imports cncl.tiny the first time
`tiny.<name>` is read. The import goes through the import system, whose per-module lock makes first uses from
several threads safe; every access reads the real module, so monkeypatching it is seen.
"""
from __future__ import annotations

import importlib
from types import ModuleType


class LazyModule:
    """Stands for the module `name` until an attribute is read; then that attribute of the imported module."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attribute: str):
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"
