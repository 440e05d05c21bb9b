"""Inputs an annotation describes by other arguments: arrays with their count, host scalars of a descriptor's type,
host integers and bytes of a given size, and the Switch that picks a kind by another argument's value."""
from __future__ import annotations

from typing import Optional

from ..cdecl import CType
from .base import BindingError, Converted, Count, Kind, count_expr, count_uses, needs
from .inputs import DevicePtr


class Seq(Kind):
    """An array with a count: a Python list of values, handles or device pointers (by the element type; `ctype`
    names it for a `const void *` array). With `optional`, a NULL array is None (the Python default) instead of an
    error."""

    def __init__(self, count: Count, *, ctype: Optional[str] = None, optional: bool = False):
        self.count, self.ctype, self.optional = count, ctype, optional

    def uses(self):
        return count_uses(self.count)

    def validate(self, param, ctype):
        if self.ctype is not None:
            needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, f"an array of {self.ctype}")
        else:
            needs(ctype.pointers >= 1 and _element_mode(ctype) is not None, param, ctype, "an array")

    def emit(self, g, param, ctype):
        if self.ctype is not None:
            mode, cast = "value", g.bind(g.ffi.typeof(f"{self.ctype} *"), "ptr")
        else:
            mode = _element_mode(ctype)
            cast = g.pointer_type(ctype) if mode == "value" else "None"
        value = f"_seq_{mode}({g.c(param)}, {count_expr(g, self.count)}, {param!r}, {cast})"
        if self.optional:
            value = f"None if not {g.c(param)} else {value}"
        g.pre.append(f"{g.a(param)} = {value}")


def _element_mode(ctype: CType) -> Optional[str]:
    element = ctype.pointers - 1
    if element == 0 and ctype.category in ("integer", "float", "bool"):
        return "value"
    if element == 0 and ctype.category == "handle":
        return "handle"
    if element == 1 and ctype.category == "void":
        return "device"
    return None


class HostScalar(Kind):
    """A `const void *` (or typed) host scalar, NULL = None. Exactly one of: a C type name; `dtype_of` a descriptor
    parameter whose data type the scalar has; `compute_of` a descriptor whose computation type decides it (float
    for floating types, double for DOUBLE, int32_t for integers)."""

    def __init__(self, ctype: Optional[str] = None, *, dtype_of: Optional[str] = None,
                 compute_of: Optional[str] = None):
        if (ctype is None) + (dtype_of is None) + (compute_of is None) != 2:
            raise BindingError("HostScalar takes one of ctype, dtype_of, compute_of")
        self.ctype, self.dtype_of, self.compute_of = ctype, dtype_of, compute_of

    def uses(self):
        return tuple(p for p in (self.dtype_of, self.compute_of) if p)

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category in ("void", "float", "integer"), param, ctype, "a host scalar")

    def emit(self, g, param, ctype):
        c = g.c(param)
        if self.ctype is not None:
            g.pre.append(f"{g.a(param)} = _scalar({c}, {g.bind(g.ffi.typeof(self.ctype + ' *'), 'type')})")
        elif self.dtype_of is not None:
            g.pre.append(f"{g.a(param)} = _scalar_dtype({c}, {g.a(self.dtype_of)})")
        else:
            g.pre.append(f"{g.a(param)} = _scalar_compute({c}, {g.a(self.compute_of)})")


class Scalars(Kind):
    """Host scalars whose C type a descriptor decides: `count` of them as a list (count None: one, the number
    itself), NULL = None. `dtype_of` a descriptor parameter, or `first_of` a descriptor-array parameter (its first
    descriptor); `compute`: the descriptor's computation type (float for 16/32-bit floats, double for DOUBLE,
    int32_t for integers), else its data type. `indirect`: the parameter is an array whose first entry points to the
    scalars (cnnlForeachLerp's `input3_ptr_array` in scalar mode)."""

    def __init__(self, count: Count = None, *, dtype_of: Optional[str] = None, first_of: Optional[str] = None,
                 compute: bool = False, indirect: bool = False):
        if (dtype_of is None) == (first_of is None):
            raise BindingError("Scalars takes one of dtype_of, first_of")
        self.count, self.desc, self.first = count, dtype_of or first_of, first_of is not None
        self.compute, self.indirect = compute, indirect

    def uses(self):
        return (self.desc,) + (count_uses(self.count) if self.count is not None else ())

    def validate(self, param, ctype):
        needs(ctype.pointers >= 1 and ctype.category == "void", param, ctype, "host scalars")

    def emit(self, g, param, ctype):
        count = "None" if self.count is None else count_expr(g, self.count)
        desc = f"({g.a(self.desc)} or [None])[0]" if self.first else g.a(self.desc)
        g.pre.append(f"{g.a(param)} = _scalars({g.c(param)}, {desc}, {count}, {self.compute}, {self.indirect}, "
                     f"{param!r})")


class Switch(Kind):
    """The kind another argument selects: `cases` maps its values to kinds, `default` is used otherwise (None: the
    argument is None, for a parameter the chosen mode does not read)."""

    def __init__(self, on: str, cases: dict, default: Optional[Kind] = None):
        self.on, self.cases, self.default = on, dict(cases), default

    def _kinds(self):
        return list(self.cases.values()) + ([self.default] if self.default is not None else [])

    def uses(self):
        return (self.on,) + tuple(u for kind in self._kinds() for u in kind.uses())

    def validate(self, param, ctype):
        for kind in self._kinds():
            if kind.output:
                raise BindingError(f"parameter {param}: a Switch selects among inputs only")
            kind.validate(param, ctype)

    def emit(self, g, param, ctype):
        outer = g.pre
        keyword = "if"
        for value, kind in self.cases.items():
            g.pre = []
            kind.emit(g, param, ctype)
            outer.append(f"{keyword} {g.a(self.on)} == {value!r}:")
            outer.extend(f"    {line}" for line in g.pre)
            keyword = "elif"
        g.pre = []
        if self.default is not None:
            self.default.emit(g, param, ctype)
        else:
            g.pre.append(f"{g.a(param)} = None")
        outer.append("else:")
        outer.extend(f"    {line}" for line in g.pre)
        g.pre = outer


def FillValue(mode: str, dtype_of: Optional[str] = None, *, compute_of: Optional[str] = None) -> Switch:
    """A `const void *` value by pointer mode: in CNNL_POINTER_MODE_DEVICE (1) a device pointer, else a host scalar
    of the descriptor's data type (`dtype_of`) or computation type (`compute_of`)."""
    return Switch(mode, {1: DevicePtr()}, HostScalar(dtype_of=dtype_of, compute_of=compute_of))


class _SizedHost(Converted):
    """Host memory whose byte count is the parameter `size`."""

    def __init__(self, size: str):
        self.size = size

    def uses(self):
        return (self.size,)


class HostInt(_SizedHost):
    """A host integer of `size` bytes (1, 2, 4 or 8), NULL = None."""

    what = "a host integer"

    def value(self, g, param, ctype):
        return f"_host_int({g.c(param)}, {g.a(self.size)}, {param!r}, {self.size!r})"


class Bytes(_SizedHost):
    """`size` bytes of host memory, copied into a Python bytes object (NULL = None)."""

    what = "host bytes"

    def value(self, g, param, ctype):
        return f"_bytes({g.c(param)}, {g.a(self.size)}, {param!r})"
