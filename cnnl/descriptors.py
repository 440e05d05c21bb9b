"""The op descriptors' common life cycle: create, destroy, and the argument check that a descriptor is live and set.

Each descriptor type (activation, op tensor, reduce, transpose, matmul, ...) subclasses `Descriptor` and gets its
cnnlCreateX / cnnlDestroyX pair from `lifecycle()`.
"""
from __future__ import annotations

from typing import Callable

from mlusim import sanitizer
from mlusim.errors import ArgumentFault, HandleFault

from .status import api
from .validated import new_stamp


class Descriptor:
    """Base of the op descriptors. `c_type` is the C type name; `setter` the C function that sets it. Every change of
    a field gives the descriptor a new `stamp`, so what an op validated on its old state no longer holds
    (cnnl.validated)."""

    c_type = "descriptor"
    setter = ""

    def __init__(self):
        self.destroyed = False
        self.is_set = False

    def __setattr__(self, name: str, value) -> None:
        object.__setattr__(self, name, value)
        object.__setattr__(self, "stamp", new_stamp())

    def __repr__(self) -> str:
        state = "destroyed" if self.destroyed else ("set" if self.is_set else "unset")
        return f"<{self.c_type} {state}>"


def live(desc, kind: type, arg: str) -> Descriptor:
    """`desc` as a live (not destroyed) descriptor of `kind`."""
    if not isinstance(desc, kind):
        raise HandleFault(f"{desc!r:.60} is not a {kind.c_type}", arg)
    if desc.destroyed:
        raise HandleFault(f"the {kind.c_type} was destroyed", arg)
    return desc


def ready(desc, kind: type, arg: str) -> Descriptor:
    """`desc` as a live descriptor of `kind` that was set."""
    target = live(desc, kind, arg)
    if not target.is_set:
        raise ArgumentFault(f"the {kind.c_type} was never set ({kind.setter})", arg)
    return target


def lifecycle(kind: type, create_name: str, destroy_name: str) -> tuple[Callable, Callable]:
    """Register `create_name(&desc) -> desc` and `destroy_name(desc)` for a descriptor type."""

    def create():
        desc = kind()
        sanitizer.track(desc, kind.c_type)
        return desc

    def destroy(desc) -> None:
        live(desc, kind, "desc").destroyed = True

    for function, c_name, text in ((create, create_name, f"{create_name}({kind.c_type} *desc) -> desc."),
                                   (destroy, destroy_name, f"{destroy_name}({kind.c_type} desc).")):
        function.__name__ = api.python_name(c_name)
        function.__qualname__ = function.__name__
        function.__doc__ = text
    return api(create_name)(create), api(destroy_name)(destroy)
