"""The one way the tree imports a module on first use.

Packages whose start-up should not pay for numba (a C program's first call loads them into a fresh interpreter)
import those modules on first use, in one of two forms:
- a module-valued name in another module: `tiny = LazyModule("cncl.tiny")` imports cncl.tiny the first time
  `tiny.<name>` is read; every access reads the real module, so monkeypatching it is seen;
- names of a package itself (PEP 562): `__getattr__, __dir__ = lazy_names(__name__, resolve, listed)` in the
  package, where `resolve(name)` imports what defines `name` and returns its value (or `MISSING`).
Imports go through the import system, whose per-module lock makes first uses from several threads safe.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Callable, Iterable

#: what a `lazy_names` resolver returns for a name the package does not have
MISSING = object()


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


def lazy_names(package: str, resolve: Callable[[str], object], listed: Callable[[], Iterable[str]]):
    """(__getattr__, __dir__) for `package`: a name not yet bound is `resolve(name)` (which may bind it in the
    package, so the next read is a plain one); `dir()` shows the names bound so far and `listed()`."""
    namespace = vars(importlib.import_module(package))

    def __getattr__(name: str):
        value = MISSING if name.startswith("__") and name != "__all__" else resolve(name)
        if value is MISSING:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return value

    def __dir__():
        return sorted(set(namespace) | set(listed()))

    return __getattr__, __dir__
