"""BANG C on the simulated MLU: the cncc driver, the device headers (bang.h, mlu.h, bang_fusor.h) and the launch of
compiled kernels from C (<<<>>>, cnrtInvokeKernel) and Python (`load`)."""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

__all__ = ["Module", "load"]


class Module:
    """A shared object cncc built, loaded into this process: its BANG C kernels by name (`module["vector_add"]`),
    each launchable with `kernel[dim, ktype, queue](*args)` or `cnrt.invokeKernel(kernel, dim, ktype, args, 0, q)`."""

    def __init__(self, path: Path, library: ctypes.CDLL, kernels: dict):
        self.path = path
        self.library = library
        self.kernels = kernels

    def __getitem__(self, name: str):
        try:
            return self.kernels[name]
        except KeyError:
            raise KeyError(f"{self.path} has no BANG C kernel '{name}' (it has: "
                           f"{', '.join(sorted(self.kernels)) or 'none'})") from None

    def __repr__(self) -> str:
        return f"<BANG C module {self.path}: {', '.join(sorted(self.kernels))}>"


def load(path) -> Module:
    """Load a shared object built by cncc (`cncc -shared k.mlu -o libk.so`) and return its kernels."""
    from . import program, registry
    resolved = Path(path).resolve()
    if not resolved.exists():
        raise FileNotFoundError(f"no such shared object: {path}")
    library = ctypes.CDLL(str(resolved))
    base = _mapping_base(str(resolved))
    infos = registry.kernels_of(str(resolved), base) if base else {}
    return Module(resolved, library, {name: program.BangCKernel(info) for name, info in infos.items()})


def _mapping_base(path: str) -> int:
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].strip() == path and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    return 0
