"""Inputs that point at host memory or code: the sides of a copy, host or device pointers, host buffers, callbacks,
exported kernels and their `void **` arguments."""
from __future__ import annotations

from .base import BindingError, Count, Kind, count_expr, count_uses, needs


class MemcpySide(Kind):
    """One side of a copy: a device pointer (int) or a host buffer of `size` bytes, decided by the direction
    parameter (cnrtMemcpyNoDirection: by whether the address lies in a device's range)."""

    def __init__(self, role: str, size: Count, direction: str = "dir"):
        if role not in ("dst", "src"):
            raise BindingError("MemcpySide role is dst or src")
        self.role, self.size, self.direction = role, size, direction

    def uses(self):
        return count_uses(self.size) + (self.direction,)

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a copy side")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _memcpy_{self.role}({g.c(param)}, {count_expr(g, self.size)}, "
                     f"{g.a(self.direction)})")


class AnyPointer(Kind):
    """A pointer that may be device memory (an int, if it lies in a device's address range) or host memory (a
    one-byte host view at that address); NULL = None."""

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a pointer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _any_pointer({g.c(param)})")


class HostPointer(Kind):
    """A host pointer (a pinned buffer to free): a one-byte host view at that address; NULL = None."""

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a host pointer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _host_pointer({g.c(param)})")


class HostBuffer(Kind):
    """`size` bytes of host memory as a uint8 view (read or written by the call); NULL = None unless size > 0.
    The size is a parameter or a function of parameters (cnrtCastDataType: the count times the element size)."""

    def __init__(self, size: Count):
        self.size = size

    def uses(self):
        return count_uses(self.size)

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a host buffer")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _host_buffer({g.c(param)}, {count_expr(g, self.size)}, {param!r})")


class Text(Kind):
    """A `const char *` NUL-terminated string: the Python str (NULL = None)."""

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.base == "char" and ctype.const_base, param, ctype, "a string")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _text({g.c(param)})")


class Callback(Kind):
    """A C function pointer, as a Python callable that calls it with its (opaque) argument; NULL = None."""

    def validate(self, param, ctype):
        needs(ctype.pointers == 0 and ctype.category == "function", param, ctype, "a callback")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _callback({g.c(param)}, {g.bind(g.ffi.typeof(ctype.base), 'type')})")


class Kernel(Kind):
    """A kernel pointer: the kernel exported to C under that address (neuware.export_kernel)."""

    simple = True

    def validate(self, param, ctype):
        needs(ctype.pointers == 1 and ctype.category == "void", param, ctype, "a kernel")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _kernel({g.c(param)}, {param!r})")


class KernelArgs(Kind):
    """`void **args`: one pointer per argument of `kernel`, read with the kernel's declared C types."""

    def __init__(self, kernel: str):
        self.kernel = kernel

    def uses(self):
        return (self.kernel,)

    def validate(self, param, ctype):
        needs(ctype.pointers == 2 and ctype.category == "void", param, ctype, "kernel arguments")

    def emit(self, g, param, ctype):
        g.pre.append(f"{g.a(param)} = _kernel_args({g.c(param)}, {g.a(self.kernel)}, {param!r})")
