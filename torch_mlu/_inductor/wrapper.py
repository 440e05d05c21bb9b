"""The Python wrapper of compiled "mlu" graphs: Inductor's Python wrapper (buffer allocation on the mlu caching
allocator, extern kernels as mlu aten ops, i.e. cnnl or the CPU fallback), with the calls of generated numba
kernels written as plain calls of their launchers (each launcher queues one command on the current stream)."""
from __future__ import annotations

import sympy
from torch._inductor.codegen.wrapper import PythonWrapperCodegen, SubgraphPythonWrapperCodegen


class _MLUKernelCalls:
    """The kernel-call spelling shared by the graph wrapper and the subgraph wrappers."""

    def _generate_kernel_call_helper(self, kernel_name: str, call_args, *, device=None, triton=True, **kwargs):
        if device is not None and device.type == "mlu" and not triton:
            args = [self.codegen_python_sizevar(arg) if isinstance(arg, sympy.Expr) else str(arg)
                    for arg in call_args]
            self.writeline(f"{kernel_name}({', '.join(args)})")
            return
        super()._generate_kernel_call_helper(kernel_name, call_args, device=device, triton=triton, **kwargs)


class MLUSubgraphWrapperCodegen(_MLUKernelCalls, SubgraphPythonWrapperCodegen):
    """The wrapper of a subgraph (control flow operators) of an mlu graph."""


class MLUWrapperCodegen(_MLUKernelCalls, PythonWrapperCodegen):
    """The wrapper of a compiled mlu graph."""

    @staticmethod
    def create(is_subgraph: bool, subgraph_name, parent_wrapper, partition_signatures=None):
        if is_subgraph:
            return MLUSubgraphWrapperCodegen(subgraph_name, parent_wrapper, partition_signatures)
        return MLUWrapperCodegen()
