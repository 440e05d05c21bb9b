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
    Scalars("n", dtype_of="desc") n host scalars of a descriptor's (or, first_of, a descriptor array's first) type
    FillValue("mode", "desc")     a host scalar of the descriptor's type, or a device pointer in device pointer mode
    Switch("op", {3: ...}, ...)   the kind another argument's value selects
    HostInt("size")               a host integer of `size` bytes (a descriptor attribute)
    Bytes("size")                 `size` host bytes, copied (a kernel argument of the v4 params buffer)
    MemcpySide(...)               a side of a copy: device pointer or host buffer by the direction
    AnyPointer(), HostPointer()   a pointer that may be host or device memory / is host memory
    Text()                        a `const char *` string (NULL = None)
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
    HostBuffer("bytes")           `bytes` of host memory as a writable byte view (a copy's host side); the size
                                  may be a function of other arguments

Every kind emits Python source for the wrapper `marshal.py` compiles per function, so a call runs straight-line
code with no per-parameter dispatch. Pointers and handles arrive as integers (see build.py): a NULL is 0, and a
kind that reads or writes through a pointer casts it to its C type.

The kinds live by job: base.py (the protocol), inputs.py (what the C type decides, handles, structs),
arrays.py (arrays, host scalars, sizes, Switch), pointers.py (host memory, callbacks, kernels), outputs.py.
"""
from __future__ import annotations

from ..cdecl import CType
from .arrays import Bytes, FillValue, HostInt, HostScalar, Scalars, Seq, Switch
from .base import BindingError, Count, Kind
from .inputs import Deref, DevicePtr, HandleIn, Opaque, StructByValue, StructIn, Value
from .outputs import Out, OutArray, OutHostInt, OutString, OutStruct, OutText
from .pointers import AnyPointer, Callback, HostBuffer, HostPointer, Kernel, KernelArgs, MemcpySide, Text

__all__ = ["AnyPointer", "BindingError", "Bytes", "Callback", "Count", "Deref", "DevicePtr", "FillValue", "Scalars",
           "HandleIn", "HostBuffer", "HostInt", "HostPointer", "HostScalar", "Kernel", "KernelArgs", "Kind",
           "MemcpySide", "Opaque", "Out", "OutArray", "OutHostInt", "OutString", "OutStruct", "OutText", "Seq",
           "StructByValue", "StructIn", "Switch", "Text", "Value", "default_kind"]


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
