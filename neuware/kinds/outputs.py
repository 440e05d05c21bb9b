"""Outputs: what the Python function returns, stored through the C pointers (scalars, handles, structs, strings, text
buffers, arrays, host integers)."""
from __future__ import annotations

from typing import Optional

from .base import Count, Kind, count_expr, count_uses, needs


class Out(Kind):
    """An output: a scalar, a handle, a `void *` or a struct written through the pointer."""

    output = True

    def validate(self, param, ctype):
        scalar = ctype.pointers == 1 and ctype.category in ("integer", "float", "bool", "handle", "struct")
        needs(scalar or (ctype.pointers == 2 and ctype.category == "void"), param, ctype, "an output")

    def emit_store(self, g, param, ctype, value):
        c = g.c(param)
        if ctype.category == "handle":
            g.post.append(f"_ffi.cast(_ADDRESSES, {c})[0] = _to_c({value})")
        elif ctype.category == "void":
            g.post.append(f"_ffi.cast(_ADDRESSES, {c})[0] = _address({value})")
        elif ctype.category == "struct":
            g.post.append(f"_fill_struct({c}, {value}, {g.pointer_type(ctype)})")
        else:
            g.post.append(f"_ffi.cast({g.pointer_type(ctype)}, {c})[0] = {value}")


class OutStruct(Out):
    """An output struct whose `keep` fields are inputs the caller set (CNDev's `version`): they survive the fill."""

    def __init__(self, keep: tuple = ()):
        self.keep = tuple(keep)

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "struct", param, ctype, "an output struct")

    def emit_store(self, g, param, ctype, value):
        g.post.append(f"_fill_struct({g.c(param)}, {value}, {g.pointer_type(ctype)}, {self.keep!r})")


class OutString(Kind):
    """A `const char **` output: set to a NUL-terminated copy of the Python string that stays valid."""

    output = True

    def validate(self, param, ctype):
        needs(ctype.pointers == 2 and ctype.base == "char", param, ctype, "a string output")

    def emit_store(self, g, param, ctype, value):
        g.post.append(f"_ffi.cast('char **', {g.c(param)})[0] = _cstr({value})")


class OutText(Kind):
    """A `char *` buffer of `capacity` bytes (a parameter): the Python string, NUL-terminated; a string that does
    not fit is the library's bad-argument error and nothing is written."""

    output = True

    def __init__(self, capacity: str):
        self.capacity = capacity

    def uses(self):
        return (self.capacity,)

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.base == "char" and not ctype.const_base, param, ctype, "a text output")

    def emit_store(self, g, param, ctype, value):
        g.post.append(f"_store_text({g.c(param)}, {value}, {g.a(self.capacity)}, {param!r}, {self.capacity!r})")


class OutArray(Kind):
    """An output array: the elements of a Python sequence (values or handles); its length goes into `count_out`
    (an output too) when given. `capacity` (a parameter) bounds the number of elements the caller provided."""

    output = True

    def __init__(self, count_out: Optional[str] = None, capacity: Count = None):
        self.count_out, self.capacity = count_out, capacity

    def uses(self):
        return ((self.count_out,) if self.count_out else ()) + count_uses(self.capacity)

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category in ("integer", "float", "bool", "handle"), param, ctype,
               "an output array")

    def emit_check(self, g, param, ctype):
        super().emit_check(g, param, ctype)
        if self.count_out:
            g.pre.append(f"if not {g.c(self.count_out)}: raise _null({self.count_out!r})")

    def emit_store(self, g, param, ctype, value):
        c = g.c(param)
        capacity = count_expr(g, self.capacity) if self.capacity is not None else "None"
        handles = ctype.category == "handle"
        element = "_ADDRESSES" if handles else g.pointer_type(ctype)
        g.post.append(f"_store_array({c}, {value}, {capacity}, {element}, {handles}, {param!r})")
        if self.count_out:
            count_type = g.pointer_type(g.ctypes[self.count_out])
            g.post.append(f"_ffi.cast({count_type}, {g.c(self.count_out)})[0] = len({value})")


class OutHostInt(Kind):
    """An output host integer of `size` bytes (a parameter, or a function of parameters: cnGetMemAttribute's size
    follows the attribute); the bytes written go into `written` (may be NULL)."""

    output = True

    def __init__(self, size: Count, written: Optional[str] = None):
        self.size, self.written = size, written

    def uses(self):
        return count_uses(self.size) + ((self.written,) if self.written else ())

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "an output host integer")

    def emit_store(self, g, param, ctype, value):
        size = count_expr(g, self.size)
        size_param = self.size if isinstance(self.size, str) else param
        g.post.append(f"_store_host_int({g.c(param)}, {value}, {size}, {param!r}, {size_param!r})")
        if self.written:
            w = g.c(self.written)
            g.post.append(f"if {w}: _ffi.cast({g.pointer_type(g.ctypes[self.written])}, {w})[0] = {size}")
