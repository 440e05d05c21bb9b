"""Inputs whose C type decides them (a value, a handle, a device pointer, a struct by value) and the other single-
object inputs: opaque user data, a handle's address, a struct the caller filled."""
from __future__ import annotations

from typing import Callable

from .base import Converted, Kind, needs


class Value(Converted):
    """A scalar by value: the Python int / float / bool."""

    simple, what, pointers, categories = True, "a value", 0, ("integer", "float", "bool")

    def value(self, g, param, ctype):
        return g.c(param)


class HandleIn(Converted):
    """An opaque handle: the Python object it names (NULL = None)."""

    simple, what, pointers, categories = True, "a handle", 0, ("handle",)

    def value(self, g, param, ctype):
        return f"_handle({g.c(param)})"


class DevicePtr(Converted):
    """A device pointer: the simulator address as an int (NULL = None). The default of `void *`; a typed pointer
    (`uint32_t *number`, a count the op writes on the device) is annotated."""

    simple, what, categories = True, "a device pointer", ("void", "integer", "float", "bool")

    def value(self, g, param, ctype):
        return f"{g.c(param)} or None"


class StructByValue(Converted):
    """A struct passed by value (cnrtDim3_t): the tuple of its fields."""

    simple, what, pointers, categories = True, "a struct by value", 0, ("struct",)

    def value(self, g, param, ctype):
        return f"_fields({g.c(param)})"


class Opaque(Converted):
    """A `void *` the library never looks at (a callback's user data): passed on untouched."""

    simple, what = True, "opaque"

    def accepts(self, ctype):
        return ctype.pointers >= 1

    def value(self, g, param, ctype):
        return g.c(param)


class Deref(Kind):
    """The address of a handle: the handle stored there (a NULL address is an error)."""

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "handle", param, ctype, "a handle's address")

    def emit(self, g, param, ctype):
        g.pre.append(f"if not {g.c(param)}: raise _null({param!r})")
        g.pre.append(f"{g.a(param)} = _handle(_ffi.cast(_ADDRESSES, {g.c(param)})[0])")


class StructIn(Converted):
    """A pointer to a struct the caller filled, converted by `convert(ffi, pointer)`; NULL = None."""

    what, categories = "a struct pointer", ("struct",)

    def __init__(self, convert: Callable):
        self.convert = convert

    def value(self, g, param, ctype):
        c = g.c(param)
        return f"None if not {c} else {g.bind(self.convert, 'convert')}(_ffi, _ffi.cast({g.pointer_type(ctype)}, {c}))"
