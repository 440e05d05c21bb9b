"""torch_mlu: PyTorch's "mlu" device on the simulated MLU (mlusim).

    import torch, torch_mlu          # or just `import torch`: the torch.backends entry point loads this package
    x = torch.randn(64, 128).mlu(); w = torch.randn(128, 32, device="mlu", requires_grad=True)
    (x @ w).relu().sum().backward(); torch.mlu.synchronize()

The device is torch's PrivateUse1 backend renamed "mlu": a small C++ part (csrc/mlu.cpp: allocator, device guard,
hooks, generator, metadata-only kernels, CPU fallback), built on first import and cached per user, forwards to the
Python runtime over cnrt; native ops run through cnnl (torch_mlu.ops), the others through the CPU fallback
(torch_mlu.fallback). See docs/torch.md.
"""
from __future__ import annotations

import atexit
import os as _os


def _autoload() -> None:
    """The torch.backends entry point: `import torch` imports this package (TORCH_DEVICE_BACKEND_AUTOLOAD=0 stops
    it). Defined before `import torch`, which calls it while `import torch_mlu` is still under way."""


import torch  # noqa: E402

from . import _devices, _exit, _extension, _profiler, _state  # noqa: E402
from ._runtime import Runtime  # noqa: E402

__version__ = "0.1.0+mlusim"


def _install() -> None:
    _state.C = _extension.load()
    _state.runtime = Runtime()
    _state.C.init(_state.runtime)
    _profiler.install()
    atexit.register(_state.C.quiesce_at_exit)  # before the interpreter finalizes under torch's threads' frees
    atexit.register(_exit.settle_autograd_threads)  # runs first (atexit is last in, first out): see _exit
    _devices.on_rebuild(_state.C.reset)
    torch.utils.rename_privateuse1_backend("mlu")
    from . import mlu as _mlu_module
    torch._register_device_module("mlu", _mlu_module)
    torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_packed_sequence=True,
                                                         for_storage=True)
    _devices.on_rebuild(_mlu_module._refresh_default_generators)


_install()

from . import fallback, ops  # noqa: E402,F401  (ops registers the native kernels)
from . import mlu  # noqa: E402,F401
from . import distributed  # noqa: E402,F401  (registers the torch.distributed backend "cncl")
from . import _inductor, _MLUC, _torch_names, backends  # noqa: E402,F401  (_MLUC: the extension's names)

backends.install()  # torch.backends.mlu, torch.backends.cnnl
_torch_names.install()  # torch.is_mlu_available
_inductor.install()  # torch.compile on mlu: registered when Dynamo/Inductor are imported

if _os.environ.get("MLUSIM_OP_TOOLS"):  # the op tools around an unchanged script (op_tools/environment.py)
    from .op_tools import environment as _op_tools_environment
    _op_tools_environment.start_from_environment()
