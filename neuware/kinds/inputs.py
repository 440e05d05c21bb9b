"""Inputs whose C type decides them (a value, a handle, a device pointer, a struct by value) and the other single-
object inputs: opaque user data, a handle's address, a struct the caller filled."""
from __future__ import annotations

from typing import Callable

from .base import Kind, needs


class Value(Kind):
    """A scalar by value: the Python int / float / bool."""

    simple = True

    def validate(self, param, ctype):
        needs(ctype.pointers == 0 and ctype.category in ("integer", "float", "bool"), param, ctype, "a value")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {g.c(param)}")


class HandleIn(Kind):
    """An opaque handle: the Python object it names (NULL = None)."""

    simple = True

    def validate(self, param, ctype):
        needs(ctype.pointers == 0 and ctype.category == "handle", param, ctype, "a handle")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _handle({g.c(param)})")


class DevicePtr(Kind):
    """A device pointer: the simulator address as an int (NULL = None). The default of `void *`; a typed pointer
    (`uint32_t *number`, a count the op writes on the device) is annotated."""

    simple = True

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category in ("void", "integer", "float", "bool"), param, ctype,
               "a device pointer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {g.c(param)} or None")


class StructByValue(Kind):
    """A struct passed by value (cnrtDim3_t): the tuple of its fields."""

    simple = True

    def validate(self, param, ctype):
        needs(ctype.pointers == 0 and ctype.category == "struct", param, ctype, "a struct by value")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _fields({g.c(param)})")


class Opaque(Kind):
    """A `void *` the library never looks at (a callback's user data): passed on untouched."""

    simple = True

    def validate(self, param, ctype):
        needs(ctype.pointers >= 1, param, ctype, "opaque")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {g.c(param)}")


class Deref(Kind):
    """The address of a handle: the handle stored there (a NULL address is an error)."""

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "handle", param, ctype, "a handle's address")

    def emit(self, g, param, ctype):
        g.pre.append(f"if not {g.c(param)}: raise _null({param!r})")
        g.pre.append(f"{g.a(param)} = _handle(_ffi.cast(_ADDRESSES, {g.c(param)})[0])")


class StructIn(Kind):
    """A pointer to a struct the caller filled, converted by `convert(ffi, pointer)`; NULL = None."""

    def __init__(self, convert: Callable):
        self.convert = convert

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "struct", param, ctype, "a struct pointer")

    def emit(self, g, param, ctype):
        c = g.c(param)
        g.pre.append(f"{g.a(param)} = None if not {c} else {g.bind(self.convert, 'convert')}(_ffi, "
                     f"_ffi.cast({g.pointer_type(ctype)}, {c}))")
