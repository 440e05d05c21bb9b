"""Run a function right after a module is first imported (or at once if it already is).

torch_mlu registers the "mlu" device with Dynamo and Inductor when their registries are imported, not at
`import torch_mlu`: importing torch._dynamo / torch._inductor costs seconds that eager users should not pay.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from typing import Callable

_hooks: dict[str, list[Callable]] = {}
_lock = threading.RLock()


class _Loader(importlib.abc.Loader):
    """Wraps a module's loader: runs the module, puts the real loader back, then calls the hooks."""

    def __init__(self, loader, name: str):
        self.loader = loader
        self.name = name

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        try:
            self.loader.exec_module(module)
        finally:
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader
        _run(self.name, module)

    def __getattr__(self, attribute):
        return getattr(self.loader, attribute)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds modules with hooks through the other finders and wraps their loaders."""

    def __init__(self):
        self.busy: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if name not in _hooks or name in self.busy:
            return None
        self.busy.add(name)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            self.busy.discard(name)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _Loader(spec.loader, name)
        return spec


_finder = _Finder()


def _run(name: str, module) -> None:
    with _lock:
        hooks = _hooks.pop(name, [])
    for hook in hooks:
        hook(module)


def when_imported(name: str, hook: Callable) -> None:
    """Call `hook(module)` once module `name` is imported: now if it is, else right after its import."""
    with _lock:
        module = sys.modules.get(name)
        if module is None or getattr(module, "__spec__", None) is not None and \
                getattr(getattr(module, "__spec__", None), "_initializing", False):
            _hooks.setdefault(name, []).append(hook)
            if _finder not in sys.meta_path:
                sys.meta_path.insert(0, _finder)
            return
    hook(module)
