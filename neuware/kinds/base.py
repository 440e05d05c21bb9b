"""What every kind shares: the Kind protocol, the binding error, and how a count is read."""
from __future__ import annotations

import inspect
from typing import Callable, Union

from ..cdecl import CType

Count = Union[str, int, Callable, None]


class BindingError(Exception):
    """An annotation that does not fit its C declaration or its Python function (a bug of the bindings)."""


class Kind:
    """One C parameter's role. `output` kinds write the Python return value; the others compute an argument."""

    output = False
    simple = False  # computed before the others, so counts and descriptors are available to them

    def uses(self) -> tuple:
        """Other C parameters this kind reads (a count, a size, a descriptor)."""
        return ()

    def validate(self, param: str, ctype: CType) -> None:
        pass

    def emit(self, g, param: str, ctype: CType) -> None:
        """The code computing the Python argument from the C parameter (input kinds)."""
        raise BindingError(f"parameter {param}: {type(self).__name__} is an output kind, it computes no argument")

    # outputs
    def emit_check(self, g, param: str, ctype: CType) -> None:
        g.pre.append(f"if not {g.c(param)}: raise _null({param!r})")

    def emit_store(self, g, param: str, ctype: CType, value: str) -> None:
        """The code storing the Python result `value` through the C parameter (output kinds)."""
        raise BindingError(f"parameter {param}: {type(self).__name__} is an input kind, it stores no result")


class Converted(Kind):
    """An input the wrapper computes with one expression (`value`) of the C argument. By default it is carried by
    a C type with `pointers` levels of pointer to one of `categories`; `what` names it in a binding error."""

    what = "an input"
    pointers = 1
    categories: tuple = ("void",)

    def accepts(self, ctype: CType) -> bool:
        return ctype.pointers == self.pointers and ctype.category in self.categories

    def validate(self, param, ctype):
        needs(self.accepts(ctype), param, ctype, self.what)

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {self.value(g, param, ctype)}")

    def value(self, g, param: str, ctype: CType) -> str:
        """The Python expression of the argument, over `g.c(param)` (the C value) and other parameters."""
        raise BindingError(f"{type(self).__name__} does not say how its argument is computed")


def needs(condition: bool, param: str, ctype: CType, what: str) -> None:
    if not condition:
        raise BindingError(f"parameter {param} of type {ctype.spelling!r} cannot be {what}")


def count_expr(g, count: Count) -> str:
    """Source of a count: a parameter name, a number, or a function of parameters (called with their Python
    values)."""
    if isinstance(count, str):
        return g.a(count)
    if isinstance(count, int):
        return str(count)
    names = list(inspect.signature(count).parameters)
    return f"{g.bind(count, 'count')}({', '.join(g.a(n) for n in names)})"


def count_uses(count: Count) -> tuple:
    if isinstance(count, str):
        return (count,)
    if callable(count):
        return tuple(inspect.signature(count).parameters)
    return ()
