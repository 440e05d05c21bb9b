"""How a BANG kernel's `kernel[dim, ktype, queue](...)` reaches the runtime without the kernel language importing it.

The kernel language (mlusim.bang) sits below the CNRT clone; the CNRT clone installs its launch function here when
it is imported, and `kernel[...]` calls it, so a launch written either way takes the same checks and queue path.
"""
from __future__ import annotations

from typing import Callable, Optional

_runtime_launch: Optional[Callable] = None


def install_runtime_launch(launch: Callable) -> None:
    """Called by the runtime (cnrt) at import: `launch(kernel, dim, ktype, args, reserved, queue)`."""
    global _runtime_launch
    _runtime_launch = launch


def runtime_launch() -> Callable:
    """The runtime's launch function (cnrtInvokeKernel)."""
    if _runtime_launch is None:
        raise RuntimeError("kernel[dim, ktype, queue](...) launches through the CNRT runtime: import cnrt first")
    return _runtime_launch
