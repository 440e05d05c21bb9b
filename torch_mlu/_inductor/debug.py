"""The debug view of compiled mlu code: the numba source of every kernel a compiled function generated or ran.

    from torch_mlu._inductor import debug
    with debug.recording() as record:
        compiled(x)                          # first call: compiles; later calls: runs the kernels
    print(record.source())                   # every kernel's numba source, the graph's ops in a comment
    record.write("kernels/")                 # one file per kernel

`mlusim kernels script.py [args]` runs a script with a recording for its whole run and prints (or, with --out,
writes) the kernels at its end. `loaded()` lists every kernel of the process.
"""
from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Union

from .runtime import launch

_lock = threading.Lock()


class Recording:
    """The kernels compiled (or loaded from a cache) and the kernels launched while the recording was active."""

    def __init__(self):
        self.compiled: dict[str, launch.Kernel] = {}
        self.launched: dict[str, launch.Kernel] = {}
        self.launch_count: dict[str, int] = {}

    def _on_compile(self, kernel) -> None:
        with _lock:
            self.compiled.setdefault(kernel.name, kernel)

    def _on_launch(self, kernel) -> None:
        with _lock:
            self.launched.setdefault(kernel.name, kernel)
            self.launch_count[kernel.name] = self.launch_count.get(kernel.name, 0) + 1

    @property
    def kernels(self) -> dict[str, "launch.Kernel"]:
        """Compiled and launched kernels by name, in first-seen order."""
        merged = dict(self.compiled)
        for name, kernel in self.launched.items():
            merged.setdefault(name, kernel)
        return merged

    def source(self, name: Optional[str] = None) -> str:
        """The source of kernel `name`, or of every recorded kernel one after the other."""
        kernels = self.kernels
        if name is not None:
            if name not in kernels:
                raise KeyError(f"no kernel {name!r} was recorded (recorded: {', '.join(kernels) or 'none'})")
            return kernels[name].source
        return "\n\n".join(f"# ==== {kernel_name} ====\n{kernel.source}" for kernel_name, kernel in kernels.items())

    def write(self, directory: Union[str, Path]) -> list[Path]:
        """Write each recorded kernel to `directory`/<name>.py; returns the paths."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for name, kernel in self.kernels.items():
            path = target / f"{_file_name(name)}.py"
            path.write_text(kernel.source)
            written.append(path)
        return written


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:200]


@contextmanager
def recording() -> Iterator[Recording]:
    """Record the kernels compiled, loaded and launched inside the block (any thread)."""
    record = Recording()
    launch.on_compile.append(record._on_compile)
    launch.on_launch.append(record._on_launch)
    try:
        yield record
    finally:
        launch.on_compile.remove(record._on_compile)
        launch.on_launch.remove(record._on_launch)


def loaded() -> dict[str, "launch.Kernel"]:
    """Every kernel compiled or loaded in this process, by name."""
    return {kernel.name: kernel for kernel in launch.loaded_kernels()}
