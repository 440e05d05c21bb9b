"""Inputs that point at host memory or code: the sides of a copy, host or device pointers, host buffers, callbacks,
exported kernels and their `void **` arguments."""
from __future__ import annotations

from .base import BindingError, Converted, Count, count_expr, count_uses


class MemcpySide(Converted):
    """One side of a copy: a device pointer (int) or a host buffer of `size` bytes, decided by the direction
    parameter (cnrtMemcpyNoDirection: by whether the address lies in a device's range)."""

    what = "a copy side"

    def __init__(self, role: str, size: Count, direction: str = "dir"):
        if role not in ("dst", "src"):
            raise BindingError("MemcpySide role is dst or src")
        self.role, self.size, self.direction = role, size, direction

    def uses(self):
        return count_uses(self.size) + (self.direction,)

    def value(self, g, param, ctype):
        return f"_memcpy_{self.role}({g.c(param)}, {count_expr(g, self.size)}, {g.a(self.direction)})"


class AnyPointer(Converted):
    """A pointer that may be device memory (an int, if it lies in a device's address range) or host memory (a
    one-byte host view at that address); NULL = None."""

    what = "a pointer"

    def value(self, g, param, ctype):
        return f"_any_pointer({g.c(param)})"


class HostPointer(Converted):
    """A host pointer (a pinned buffer to free): a one-byte host view at that address; NULL = None."""

    what = "a host pointer"

    def value(self, g, param, ctype):
        return f"_host_pointer({g.c(param)})"


class HostBuffer(Converted):
    """`size` bytes of host memory as a uint8 view (read or written by the call); NULL = None unless size > 0.
    The size is a parameter or a function of parameters (cnrtCastDataType: the count times the element size)."""

    what = "a host buffer"

    def __init__(self, size: Count):
        self.size = size

    def uses(self):
        return count_uses(self.size)

    def value(self, g, param, ctype):
        return f"_host_buffer({g.c(param)}, {count_expr(g, self.size)}, {param!r})"


class Text(Converted):
    """A `const char *` NUL-terminated string: the Python str (NULL = None)."""

    what = "a string"

    def accepts(self, ctype):
        return ctype.pointers == 1 and ctype.base == "char" and ctype.const_base

    def value(self, g, param, ctype):
        return f"_text({g.c(param)})"


class Callback(Converted):
    """A C function pointer, as a Python callable that calls it with its (opaque) argument; NULL = None."""

    what, pointers, categories = "a callback", 0, ("function",)

    def value(self, g, param, ctype):
        return f"_callback({g.c(param)}, {g.bind(g.ffi.typeof(ctype.base), 'type')})"


class Kernel(Converted):
    """A kernel pointer: the kernel exported to C under that address (neuware.export_kernel)."""

    simple, what = True, "a kernel"

    def value(self, g, param, ctype):
        return f"_kernel({g.c(param)}, {param!r})"


class KernelArgs(Converted):
    """`void **args`: one pointer per argument of `kernel`, read with the kernel's declared C types."""

    what, pointers = "kernel arguments", 2

    def __init__(self, kernel: str):
        self.kernel = kernel

    def uses(self):
        return (self.kernel,)

    def value(self, g, param, ctype):
        return f"_kernel_args({g.c(param)}, {g.a(self.kernel)}, {param!r})"
