"""The vocabulary of the C-to-Python mapping: what one C parameter is on the Python side.

Most parameters need no annotation: the C type decides (`default_kind`). A scalar passed by value is the Python
number; an opaque handle is the Python object behind it; `void *` is a device pointer (an int, NULL = None); a
non-const pointer to a scalar, a handle, a struct or a `void *` is an output, written from the Python function's
return value (outputs in C order = the returned tuple). The rest is annotated per function in `bindings/`:

    Seq("dimNb")                  an array and its count are one Python list (a count that is no Python parameter
                                  is dropped from the Python call); the count may be a number or a function of
                                  other arguments; Seq(..., optional=True): NULL is None
    HostScalar("float")           a `const void *` host scalar of a C type; HostScalar(dtype_of="desc") of the
                                  descriptor's data type; HostScalar(compute_of="desc") of its computation type
    FillValue("mode", "desc")     a host scalar of the descriptor's type, or a device pointer in device pointer mode
    Switch("op", {3: ...}, ...)   the kind another argument's value selects
    HostInt("size")               a host integer of `size` bytes (a descriptor attribute)
    Bytes("size")                 `size` host bytes, copied (a kernel argument of the v4 params buffer)
    MemcpySide(...)               a side of a copy: device pointer or host buffer by the direction
    AnyPointer(), HostPointer()   a pointer that may be host or device memory / is host memory
    Callback(), Opaque()          a C function pointer, called with the untouched `void *` user data
    Kernel(), KernelArgs("k")     a kernel exported to C, its `void **` arguments decoded by its signature
    Deref()                       the address of a handle (v4 cnrtDestroyNotifier)
    StructIn(convert)             a const struct pointer converted by `convert(ffi, pointer)` (NULL = None)
    OutArray(count_out="dimNb")   an output array written from a Python sequence, its length into `count_out`
    OutHostInt("size", "written") an output host integer of `size` bytes
    OutStruct(keep=("version",))  an output struct whose listed fields the caller set and the call keeps (CNDev's
                                  IN `version` field)
    OutString()                   a `const char **`: set to a NUL-terminated string that stays valid
    OutText("len")                a `char *` buffer of `len` bytes: a NUL-terminated string (longer: an error)
    HostBuffer("bytes")           `bytes` of host memory as a writable byte view (a copy's host side)

Every kind emits Python source for the wrapper `marshal.py` compiles per function, so a call runs straight-line
code with no per-parameter dispatch. Pointers and handles arrive as integers (see build.py): a NULL is 0, and a
kind that reads or writes through a pointer casts it to its C type.
"""
from __future__ import annotations

import inspect
from typing import Callable, Optional, Union

from .cdecl import CType

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


def _needs(condition: bool, param: str, ctype: CType, what: str) -> None:
    if not condition:
        raise BindingError(f"parameter {param} of type {ctype.spelling!r} cannot be {what}")


def _count_expr(g, count: Count) -> str:
    """Source of a count: a parameter name, a number, or a function of parameters (called with their Python
    values)."""
    if isinstance(count, str):
        return g.a(count)
    if isinstance(count, int):
        return str(count)
    names = list(inspect.signature(count).parameters)
    return f"{g.bind(count, 'count')}({', '.join(g.a(n) for n in names)})"


def _count_uses(count: Count) -> tuple:
    if isinstance(count, str):
        return (count,)
    if callable(count):
        return tuple(inspect.signature(count).parameters)
    return ()


# ---- inputs that the C type decides ---------------------------------------------------------------------------

class Value(Kind):
    """A scalar by value: the Python int / float / bool."""

    simple = True

    def validate(self, param, ctype):
        _needs(ctype.pointers == 0 and ctype.category in ("integer", "float", "bool"), param, ctype, "a value")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {g.c(param)}")


class HandleIn(Kind):
    """An opaque handle: the Python object it names (NULL = None)."""

    simple = True

    def validate(self, param, ctype):
        _needs(ctype.pointers == 0 and ctype.category == "handle", param, ctype, "a handle")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _handle({g.c(param)})")


class DevicePtr(Kind):
    """A device pointer: the simulator address as an int (NULL = None). The default of `void *`; a typed pointer
    (`uint32_t *number`, a count the op writes on the device) is annotated."""

    simple = True

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category in ("void", "integer", "float", "bool"), param, ctype,
               "a device pointer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {g.c(param)} or None")


class StructByValue(Kind):
    """A struct passed by value (cnrtDim3_t): the tuple of its fields."""

    simple = True

    def validate(self, param, ctype):
        _needs(ctype.pointers == 0 and ctype.category == "struct", param, ctype, "a struct by value")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _fields({g.c(param)})")


# ---- annotated inputs -----------------------------------------------------------------------------------------

class Seq(Kind):
    """An array with a count: a Python list of values, handles or device pointers (by the element type; `ctype`
    names it for a `const void *` array). With `optional`, a NULL array is None (the Python default) instead of an
    error."""

    def __init__(self, count: Count, *, ctype: Optional[str] = None, optional: bool = False):
        self.count, self.ctype, self.optional = count, ctype, optional

    def uses(self):
        return _count_uses(self.count)

    def validate(self, param, ctype):
        if self.ctype is not None:
            _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, f"an array of {self.ctype}")
        else:
            _needs(ctype.pointers >= 1 and _element_mode(ctype) is not None, param, ctype, "an array")

    def emit(self, g, param, ctype):
        if self.ctype is not None:
            mode, cast = "value", g.bind(g.ffi.typeof(f"{self.ctype} *"), "ptr")
        else:
            mode = _element_mode(ctype)
            cast = g.pointer_type(ctype) if mode == "value" else "None"
        value = f"_seq_{mode}({g.c(param)}, {_count_expr(g, self.count)}, {param!r}, {cast})"
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
        _needs(ctype.pointers == 1 and ctype.category in ("void", "float", "integer"), param, ctype, "a host scalar")

    def emit(self, g, param, ctype):
        c = g.c(param)
        if self.ctype is not None:
            g.pre.append(f"{g.a(param)} = _scalar({c}, {g.bind(g.ffi.typeof(self.ctype + ' *'), 'type')})")
        elif self.dtype_of is not None:
            g.pre.append(f"{g.a(param)} = _scalar_dtype({c}, {g.a(self.dtype_of)})")
        else:
            g.pre.append(f"{g.a(param)} = _scalar_compute({c}, {g.a(self.compute_of)})")


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


class HostInt(Kind):
    """A host integer of `size` bytes (1, 2, 4 or 8), NULL = None."""

    def __init__(self, size: str):
        self.size = size

    def uses(self):
        return (self.size,)

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a host integer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _host_int({g.c(param)}, {g.a(self.size)}, {param!r}, {self.size!r})")


class Bytes(Kind):
    """`size` bytes of host memory, copied into a Python bytes object (NULL = None)."""

    def __init__(self, size: str):
        self.size = size

    def uses(self):
        return (self.size,)

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "host bytes")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _bytes({g.c(param)}, {g.a(self.size)}, {param!r})")


class MemcpySide(Kind):
    """One side of a copy: a device pointer (int) or a host buffer of `size` bytes, decided by the direction
    parameter (cnrtMemcpyNoDirection: by whether the address lies in a device's range)."""

    def __init__(self, role: str, size: Count, direction: str = "dir"):
        if role not in ("dst", "src"):
            raise BindingError("MemcpySide role is dst or src")
        self.role, self.size, self.direction = role, size, direction

    def uses(self):
        return _count_uses(self.size) + (self.direction,)

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a copy side")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _memcpy_{self.role}({g.c(param)}, {_count_expr(g, self.size)}, "
                     f"{g.a(self.direction)})")


class AnyPointer(Kind):
    """A pointer that may be device memory (an int, if it lies in a device's address range) or host memory (a
    one-byte host view at that address); NULL = None."""

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a pointer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _any_pointer({g.c(param)})")


class HostPointer(Kind):
    """A host pointer (a pinned buffer to free): a one-byte host view at that address; NULL = None."""

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a host pointer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _host_pointer({g.c(param)})")


class HostBuffer(Kind):
    """`size` bytes of host memory as a uint8 view (read or written by the call); NULL = None unless size > 0."""

    def __init__(self, size: str):
        self.size = size

    def uses(self):
        return (self.size,)

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a host buffer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _host_buffer({g.c(param)}, {g.a(self.size)}, {param!r})")


class Callback(Kind):
    """A C function pointer, as a Python callable that calls it with its (opaque) argument; NULL = None."""

    def validate(self, param, ctype):
        _needs(ctype.pointers == 0 and ctype.category == "function", param, ctype, "a callback")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _callback({g.c(param)}, {g.bind(g.ffi.typeof(ctype.base), 'type')})")


class Opaque(Kind):
    """A `void *` the library never looks at (a callback's user data): passed on untouched."""

    simple = True

    def validate(self, param, ctype):
        _needs(ctype.pointers >= 1, param, ctype, "opaque")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = {g.c(param)}")


class Kernel(Kind):
    """A kernel pointer: the kernel exported to C under that address (neuware.export_kernel)."""

    simple = True

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a kernel")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _kernel({g.c(param)}, {param!r})")


class KernelArgs(Kind):
    """`void **args`: one pointer per argument of `kernel`, read with the kernel's declared C types."""

    def __init__(self, kernel: str):
        self.kernel = kernel

    def uses(self):
        return (self.kernel,)

    def validate(self, param, ctype):
        _needs(ctype.pointers == 2 and ctype.category == "void", param, ctype, "kernel arguments")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _kernel_args({g.c(param)}, {g.a(self.kernel)}, {param!r})")


class Deref(Kind):
    """The address of a handle: the handle stored there (a NULL address is an error)."""

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "handle", param, ctype, "a handle's address")

    def emit(self, g, param, ctype):
        g.pre.append(f"if not {g.c(param)}: raise _null({param!r})")
        g.pre.append(f"{g.a(param)} = _handle(_ffi.cast(_ADDRESSES, {g.c(param)})[0])")


class StructIn(Kind):
    """A pointer to a struct the caller filled, converted by `convert(ffi, pointer)`; NULL = None."""

    def __init__(self, convert: Callable):
        self.convert = convert

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "struct", param, ctype, "a struct pointer")

    def emit(self, g, param, ctype):
        c = g.c(param)
        g.pre.append(f"{g.a(param)} = None if not {c} else {g.bind(self.convert, 'convert')}(_ffi, "
                     f"_ffi.cast({g.pointer_type(ctype)}, {c}))")


# ---- outputs --------------------------------------------------------------------------------------------------

class Out(Kind):
    """An output: a scalar, a handle, a `void *` or a struct written through the pointer."""

    output = True

    def validate(self, param, ctype):
        scalar = ctype.pointers == 1 and ctype.category in ("integer", "float", "bool", "handle", "struct")
        _needs(scalar or (ctype.pointers == 2 and ctype.category == "void"), param, ctype, "an output")

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
        _needs(ctype.pointers == 1 and ctype.category == "struct", param, ctype, "an output struct")

    def emit_store(self, g, param, ctype, value):
        g.post.append(f"_fill_struct({g.c(param)}, {value}, {g.pointer_type(ctype)}, {self.keep!r})")


class OutString(Kind):
    """A `const char **` output: set to a NUL-terminated copy of the Python string that stays valid."""

    output = True

    def validate(self, param, ctype):
        _needs(ctype.pointers == 2 and ctype.base == "char", param, ctype, "a string output")

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
        _needs(ctype.pointers == 1 and ctype.base == "char" and not ctype.const_base, param, ctype, "a text output")

    def emit_store(self, g, param, ctype, value):
        g.post.append(f"_store_text({g.c(param)}, {value}, {g.a(self.capacity)}, {param!r}, {self.capacity!r})")


class OutArray(Kind):
    """An output array: the elements of a Python sequence (values or handles); its length goes into `count_out`
    (an output too) when given. `capacity` (a parameter) bounds the number of elements the caller provided."""

    output = True

    def __init__(self, count_out: Optional[str] = None, capacity: Count = None):
        self.count_out, self.capacity = count_out, capacity

    def uses(self):
        return ((self.count_out,) if self.count_out else ()) + _count_uses(self.capacity)

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category in ("integer", "float", "bool", "handle"), param, ctype,
               "an output array")

    def emit_check(self, g, param, ctype):
        super().emit_check(g, param, ctype)
        if self.count_out:
            g.pre.append(f"if not {g.c(self.count_out)}: raise _null({self.count_out!r})")

    def emit_store(self, g, param, ctype, value):
        c = g.c(param)
        capacity = _count_expr(g, self.capacity) if self.capacity is not None else "None"
        handles = ctype.category == "handle"
        element = "_ADDRESSES" if handles else g.pointer_type(ctype)
        g.post.append(f"_store_array({c}, {value}, {capacity}, {element}, {handles}, {param!r})")
        if self.count_out:
            count_type = g.pointer_type(g.ctypes[self.count_out])
            g.post.append(f"_ffi.cast({count_type}, {g.c(self.count_out)})[0] = len({value})")


class OutHostInt(Kind):
    """An output host integer of `size` bytes; the bytes written go into `written` (may be NULL)."""

    output = True

    def __init__(self, size: str, written: Optional[str] = None):
        self.size, self.written = size, written

    def uses(self):
        return (self.size,) + ((self.written,) if self.written else ())

    def validate(self, param, ctype):
        _needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "an output host integer")

    def emit_store(self, g, param, ctype, value):
        g.post.append(f"_store_host_int({g.c(param)}, {value}, {g.a(self.size)}, {param!r}, {self.size!r})")
        if self.written:
            w = g.c(self.written)
            g.post.append(f"if {w}: _ffi.cast({g.pointer_type(g.ctypes[self.written])}, {w})[0] = {g.a(self.size)}")


def default_kind(param: str, ctype: CType) -> Kind:
    """The kind the C type alone decides, or a BindingError asking for an annotation."""
    if ctype.pointers == 0:
        if ctype.category in ("integer", "float", "bool"):
            return Value()
        if ctype.category == "handle":
            return HandleIn()
        if ctype.category == "struct":
            return StructByValue()
    elif ctype.pointers == 1 and ctype.category == "void":
        return DevicePtr()
    elif not ctype.const_base and ((ctype.pointers == 1 and ctype.category in (
            "integer", "float", "bool", "handle", "struct")) or (ctype.pointers == 2 and ctype.category == "void")):
        return Out()
    raise BindingError(f"parameter {param} of type {ctype.spelling!r} needs an annotation")
