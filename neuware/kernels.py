"""Kernels for cnrtInvokeKernel from C.

C code cannot carry MLU machine code to the simulator, so a kernel C launches is one written in Python (a BANG
kernel of `mlusim.bang`, or any callable) and exported to C with its argument types:

    address = neuware.export_kernel(vector_add, ("float *", "float *", "float *", "int"))

C passes that address as the kernel of `cnrtInvokeKernel(kernel, dim, ktype, args, 0, queue)` (each `args[i]`
points at the i-th argument, as for `kernel<<<dim, ktype, queue>>>(...)`) or of the v4 params-buffer launch; the
arguments are read with the declared types (pointers become device addresses).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from mlusim import handles
from mlusim import launch

#: C argument types a kernel may declare -> numpy storage; every pointer type is a 64-bit device address.
_ARGUMENT_TYPES = {
    "bool": "?", "char": "i1", "int8_t": "i1", "uint8_t": "u1", "int16_t": "i2", "uint16_t": "u2", "short": "i2",
    "int": "i4", "int32_t": "i4", "unsigned int": "u4", "uint32_t": "u4", "long": "i8", "int64_t": "i8",
    "unsigned long": "u8", "uint64_t": "u8", "size_t": "u8", "half": "f2", "float": "f4", "double": "f8",
}


def _storage(ctype: str) -> np.dtype:
    text = " ".join(ctype.replace("const ", "").split())
    if text.endswith("*"):
        return np.dtype("u8")
    if text not in _ARGUMENT_TYPES:
        raise ValueError(f"kernel argument type {ctype!r} is not one of {sorted(_ARGUMENT_TYPES)} or a pointer")
    return np.dtype(_ARGUMENT_TYPES[text])


class ExportedKernel(launch.Program):
    """A Python kernel with the C types of its arguments; arguments arrive as raw bytes and are decoded here."""

    def __init__(self, kernel: Any, argtypes: Sequence[str]):
        if not callable(kernel) and not isinstance(kernel, launch.Program):
            raise TypeError(f"expected a kernel (a BANG kernel or a callable), got {type(kernel).__name__}")
        self.kernel = kernel
        self.program = launch.as_program(kernel)
        self.argtypes = tuple(argtypes)
        self.storages = tuple(_storage(t) for t in self.argtypes)
        self.name = self.__name__ = getattr(kernel, "__name__", type(kernel).__name__)

    def values(self, args: Sequence[Any]) -> tuple:
        """The arguments as values: raw bytes read with the declared types (ValueError when they do not fit)."""
        if len(args) != len(self.storages):
            raise ValueError(f"kernel {self.__name__} takes {len(self.storages)} arguments "
                             f"({', '.join(self.argtypes)}), got {len(args)}")
        values = []
        for value, storage in zip(args, self.storages):
            if isinstance(value, (bytes, bytearray)):
                if len(value) < storage.itemsize:
                    raise ValueError(f"kernel {self.__name__}: an argument of {len(value)} bytes where "
                                     f"{storage.itemsize} are needed")
                value = np.frombuffer(bytes(value[:storage.itemsize]), storage)[0].item()
            values.append(value)
        return tuple(values)

    def decode(self, args: tuple) -> tuple:
        """The launch's arguments as values (at the launch call, before they are checked and queued)."""
        try:
            return self.values(args)
        except ValueError as error:
            import cnrt
            raise cnrt.CnrtError(cnrt.cnrtErrorArgsInvalid, f"argument 'args': {error}") from None

    def prepare(self, device, layout, args: tuple, queue) -> None:
        self.program.prepare(device, layout, args, queue)

    def run(self, device, layout, args: tuple) -> launch.LaunchResult:
        return self.program.run(device, layout, args)

    def __call__(self, *args):
        return self.kernel(*self.values(args))

    def __getattr__(self, name: str):  # last_launch and other launch records of the wrapped kernel
        if name in ("kernel", "program"):
            raise AttributeError(name)
        return getattr(self.kernel, name)


def export_kernel(kernel: Any, argtypes: Sequence[str]) -> int:
    """The address C code passes to cnrtInvokeKernel to launch `kernel` with arguments of `argtypes`."""
    return handles.to_c(ExportedKernel(kernel, argtypes))


_compiled: dict = {}


def compiled_kernel(address: int):
    """The BANG C kernel (built by cncc) whose host function is at `address`, as a kernel C can launch; or None."""
    kernel = _compiled.get(address)
    if kernel is None:
        from .bangc import program, registry
        info = registry.kernel_at(address)
        if info is None:
            return None
        compiled = program.BangCKernel(info)
        argtypes = tuple(t if t in _ARGUMENT_TYPES or t.endswith("*") else "void *" for t in compiled.argtypes)
        kernel = _compiled.setdefault(address, ExportedKernel(compiled, argtypes))
    return kernel


def lookup(address: int, param: str) -> ExportedKernel:
    """The exported kernel at `address` (neuware.export_kernel, or a BANG C kernel cncc built), or
    cnrtErrorInvalidKernel."""
    kernel = handles.from_c(address)
    if isinstance(kernel, ExportedKernel):
        return kernel
    compiled = compiled_kernel(address) if address else None
    if compiled is not None:
        return compiled
    import cnrt
    raise cnrt.CnrtError(cnrt.cnrtErrorInvalidKernel,
                         f"argument '{param}': 0x{address:x} is not a kernel exported to C with "
                         f"neuware.export_kernel nor a BANG C kernel built by mlusim's cncc")


def read_arguments(ffi, kernel: Any, c_args, param: str) -> list:
    """The raw bytes of each argument `c_args[i]` points at, sized by the kernel's declared types."""
    if not isinstance(kernel, ExportedKernel):
        return []  # the launch fails on the kernel itself
    count = len(kernel.storages)
    if count and c_args == ffi.NULL:
        import cnrt
        raise cnrt.CnrtError(cnrt.cnrtErrorArgsInvalid, f"argument '{param}': NULL, but kernel "
                                                        f"{kernel.__name__} takes {count} arguments")
    pointers = ffi.unpack(ffi.cast("void **", c_args), count) if count else []
    return [bytes(ffi.buffer(ffi.cast("char *", p), storage.itemsize))
            for p, storage in zip(pointers, kernel.storages)]
