"""The one TorchDispatchMode behind every op tool: it sees each aten op that touches an mlu tensor or device (in
the forward pass and, in the autograd engine's threads, the backward ops), describes it once (OpCall) and hands
it to the active tools before and after it runs.

Tools register while they are active; the mode is entered when the first one starts and left when the last one
stops. Whatever a tool runs inside its hooks (a CPU rerun, a synchronisation) is not intercepted again.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from .._host import is_mlu_device


def op_name(func) -> str:
    """"aten::add.Tensor" for an OpOverload (".default" left out)."""
    schema = func._schema
    return schema.name + (f".{schema.overload_name}" if schema.overload_name else "")


def describe(value) -> dict | None:
    """A JSON-ready description of a tensor (shape, dtype, strides, device) or a short repr of a number."""
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).replace("torch.", ""),
                "stride": list(value.stride()) if value.layout == torch.strided else None,
                "device": str(value.device)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
        return {"value": str(value)}
    return {"value": repr(value)[:80]}


def touches_mlu(args, kwargs) -> bool:
    for leaf in tree_leaves([list(args), kwargs]):
        if isinstance(leaf, torch.Tensor):
            if leaf.device.type == "mlu":
                return True
        elif is_mlu_device(leaf):
            return True
    return False


def mlu_device_of(values) -> torch.device | None:
    """The device of the first mlu tensor among the values (nested), if any."""
    for leaf in tree_leaves(values):
        if isinstance(leaf, torch.Tensor) and leaf.device.type == "mlu":
            return leaf.device
        if is_mlu_device(leaf):
            return torch.device(leaf)
    return None


@dataclass
class OpCall:
    """One intercepted aten op."""
    index: int
    func: object
    name: str
    args: tuple
    kwargs: dict
    phase: str
    started: float = 0.0
    host_us: float = 0.0
    result: object = None
    notes: dict = field(default_factory=dict)

    def device(self) -> torch.device | None:
        return mlu_device_of([list(self.args), self.kwargs, self.result])


def _phase() -> str:
    node = torch._C._current_autograd_node()
    return "forward" if node is None else f"backward:{type(node).__name__}"


class _Interceptor(TorchDispatchMode):
    def __init__(self, registry: "Registry"):
        super().__init__()
        self.registry = registry

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tools = self.registry.active()
        if not tools or not touches_mlu(args, kwargs):
            return func(*args, **kwargs)
        call = OpCall(self.registry.next_index(), func, op_name(func), args, kwargs, _phase())
        for tool in tools:
            tool.before(call)
        call.started = time.perf_counter()
        call.result = func(*args, **kwargs)
        call.host_us = (time.perf_counter() - call.started) * 1e6
        for tool in reversed(tools):
            tool.after(call)
        return call.result


class Registry:
    """The active tools, ordered by their `order` (hooks run `before` in that order and `after` in reverse)."""

    def __init__(self):
        self._tools: list = []
        self._lock = threading.Lock()
        self._mode: _Interceptor | None = None
        self._count = 0

    def active(self) -> list:
        return self._tools

    def next_index(self) -> int:
        with self._lock:
            self._count += 1
            return self._count - 1

    def start(self, tool) -> None:
        with self._lock:
            if tool in self._tools:
                raise RuntimeError(f"{type(tool).__name__} is already active")
            self._tools = sorted([*self._tools, tool], key=lambda t: t.order)
            first = self._mode is None
            if first:
                self._mode = _Interceptor(self)
        if first:
            self._mode.__enter__()

    def stop(self, tool) -> None:
        with self._lock:
            self._tools = [t for t in self._tools if t is not tool]
            last = not self._tools and self._mode is not None
            mode, self._mode = (self._mode, None) if last else (None, self._mode)
        if last:
            mode.__exit__(None, None, None)


REGISTRY = Registry()


class Tool:
    """Base of the op tools: a context manager that registers its hooks while active."""

    order = 0

    def before(self, call: OpCall) -> None:
        """Called before the op runs."""

    def after(self, call: OpCall) -> None:
        """Called after it ran (call.result holds its result)."""

    def start(self):
        REGISTRY.start(self)
        return self

    def stop(self) -> None:
        REGISTRY.stop(self)
        self.finish()

    def finish(self) -> None:
        """Called when the tool stops (write files, print reports)."""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
