"""mlusim's C ABI: cnrt.h / cnnl.h / cncl.h and libcnrt.so / libcnnl.so / libcncl.so over the Python clones.

C and C++ programs built against these headers run on the simulated devices: every exported function is
implemented by the function of the same C name in `cnrt`, `cnnl` or `cncl` (see docs/capi.md).

    mlusim neuware DIR              a Neuware-like tree (include/, lib64/) for NEUWARE_HOME
    mlusim neuware --cflags/--libs  compiler and linker flags for the cached build
"""
from __future__ import annotations

from mlusim.handles import from_c, to_c


def export_kernel(kernel, argtypes):
    """The address C code passes to cnrtInvokeKernel to launch `kernel` with arguments of `argtypes` (imported on
    use: cncc, which imports this package, starts without numpy)."""
    from .kernels import export_kernel as export
    return export(kernel, argtypes)


def include_dir():
    """The directory of cnrt.h, cnnl.h, cncl.h and mlusim.h."""
    from .cdecl import INCLUDE_DIR
    return INCLUDE_DIR


def library_dir():
    """The directory of libcnrt.so, libcnnl.so and libcncl.so, built on first use."""
    from .build import build_libraries
    return build_libraries()


__all__ = ["export_kernel", "from_c", "include_dir", "library_dir", "to_c"]
