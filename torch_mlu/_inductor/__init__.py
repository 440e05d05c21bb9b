"""torch.compile on "mlu": an Inductor backend whose kernels are numba functions run by the simulated device.

`torch.compile(model)` (Inductor, the default backend) on mlu tensors goes through:

- `device_interface.MLUInterface`: the device for Dynamo and Inductor (torch.mlu underneath);
- `scheduling.MLUScheduling`: Inductor's SIMD fusion; each fused group becomes one numba kernel (`kernel.py`,
  ops in `overrides.py`) for pointwise, reduction and persistent-reduction kernels;
- `wrapper.MLUWrapperCodegen`: the Python wrapper; extern kernels (matmul, convolution, ...) are the mlu aten ops;
- `device_op_overrides.MLUDeviceOpOverrides`: the device-management lines of the wrapper;
- `fallback.EagerFallbackPass`: ops the code generator cannot compile run as eager mlu ops, per node;
- `runtime/`: at run time each kernel call is one command on the current stream (read/write sets, modelled time).

The registration happens when torch._dynamo / torch._inductor are imported (an eager-only program never pays for
importing them). `debug.py` shows the generated kernel sources.
"""
from __future__ import annotations

from . import _import_hooks

_installed = False


class _SchedulingClass:
    """Registered as the Scheduling class of "mlu"; builds the real one on first use (imports Inductor's codegen)."""

    def __new__(cls, scheduler):
        from .scheduling import MLUScheduling
        return MLUScheduling(scheduler)


class _WrapperClass:
    """Registered as the wrapper codegen of "mlu"; builds the real one on first use."""

    supports_caching = True  # the wrapper is plain Python: Inductor's FX graph cache may keep it

    @staticmethod
    def create(*args, **kwargs):
        from .wrapper import MLUWrapperCodegen
        return MLUWrapperCodegen.create(*args, **kwargs)


def _register_interface(module) -> None:
    import torch
    from .device_interface import MLUInterface
    module.register_interface_for_device("mlu", MLUInterface)
    for index in range(torch.mlu.device_count()):
        module.register_interface_for_device(f"mlu:{index}", MLUInterface)


def _register_backend(module) -> None:
    from .device_op_overrides import MLUDeviceOpOverrides
    from .fallback import EagerFallbackPass
    module.register_backend_for_device("mlu", _SchedulingClass, _WrapperClass,
                                       device_custom_pass=EagerFallbackPass())
    module.register_device_op_overrides("mlu", MLUDeviceOpOverrides())


def install() -> None:
    """Register "mlu" with Dynamo and Inductor (now, or when they are first imported). Idempotent."""
    global _installed
    if _installed:
        return
    _installed = True
    _import_hooks.when_imported("torch._dynamo.device_interface", _register_interface)
    _import_hooks.when_imported("torch._inductor.codegen.common", _register_backend)
