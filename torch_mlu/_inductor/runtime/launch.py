"""A compiled mlu kernel at run time: each call is ONE command on the current stream of its device.

`compile_kernel(name, source, meta)` (what the generated wrapper calls for every kernel it defines) loads the
kernel's numba module (source_cache: written once, compiled by numba with its disk cache) and returns a `Kernel`.
Calling the kernel with the wrapper's tensors and sizes builds one `mlusim.submit.Submission`: every tensor's
device range is resolved, bounds- and lifetime-checked and pinned at the call, with its access (inputs read,
outputs written, in-place buffers both), and the command carries the modelled MLU time of the fused kernel
(mlusim.cost's roofline of the kernel's vector work and the bytes it moves once). When the command runs, the numba
function runs over flat views of device memory, its outermost tile split over the host cores (nogil).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import torch

from mlusim.host.parallel import INLINE_ELEMENTS, map_parallel, thread_count
from mlusim import cost
from mlusim.submit import Access, Kind, Submission

from ... import _state
from .. import dtypes as D
from . import source_cache

#: chunks per host thread when a kernel's outer tile is split (dynamic sharing evens out a busy host)
CHUNKS_PER_THREAD = 4

_ACCESS = {"in": Access.READ, "out": Access.WRITE, "inout": Access.READ_WRITE}
_kernels: dict[tuple[str, str], "Kernel"] = {}
_kernels_lock = threading.Lock()
#: Called with every Kernel compiled or loaded, and with every Kernel launched (torch_mlu._inductor.debug).
on_compile: list[Callable[["Kernel"], None]] = []
on_launch: list[Callable[["Kernel"], None]] = []


def compile_kernel(name: str, source: str, meta: dict) -> "Kernel":
    """The kernel `name` of generated numba `source` (one per distinct source and name in a process)."""
    key = (name, str(source_cache.path_for(source)))
    with _kernels_lock:
        found = _kernels.get(key)
    if found is None:
        module = source_cache.load(source)
        found = Kernel(name, getattr(module, name), source, meta)
        with _kernels_lock:
            found = _kernels.setdefault(key, found)
    for hook in list(on_compile):
        hook(found)
    return found


def _span_elements(tensor: torch.Tensor) -> int:
    """Elements from the first to one past the last element a tensor's sizes and strides reach."""
    if tensor.numel() == 0:
        return 0
    return 1 + sum((size - 1) * stride for size, stride in zip(tensor.shape, tensor.stride()))


def _host_array(tensor: torch.Tensor, element) -> np.ndarray:
    """A copy, taken at the call, of a host tensor argument (a 0-d cpu scalar) as the kernel's element type."""
    flat = tensor.detach().reshape(-1).contiguous()
    if tensor.dtype in (torch.float16, torch.bfloat16):
        flat = flat.view(torch.int16)
    return flat.numpy().view(element).copy()


class Kernel:
    """A generated kernel: call it with the wrapper's arguments (tensors and sizes, then the tile sizes)."""

    def __init__(self, name: str, function, source: str, meta: dict):
        self.name = name
        self.function = function
        self.source = source
        self.meta = meta
        params = meta["params"]
        self.arity = len(params)
        self.tensors = [(position, param, _ACCESS[kind], getattr(torch, dtype), D.storage(getattr(torch, dtype)))
                        for position, (param, kind, dtype) in enumerate(params) if kind != "size"]
        self.trees = meta["trees"]
        self.outer_trees = [i for i, (_, reduction) in enumerate(self.trees) if not reduction]
        self.stages = meta["stages"]
        self.serial = meta["serial"]
        widest = max((getattr(torch, dtype) for _, kind, dtype in params if kind != "size"),
                     key=lambda d: (d.is_floating_point, d.itemsize), default=torch.float32)
        self.rate = D.RATE_KEY.get(widest, "float")
        self._model_cache: dict[tuple, float] = {}
        self.launches = 0

    def __repr__(self) -> str:
        return f"<mlu kernel {self.name}>"

    def work(self, numels: tuple) -> tuple[int, int]:
        """(outer elements, vector element-ops) of a call with tile sizes `numels`."""
        outer = 1
        for i in self.outer_trees:
            outer *= numels[i]
        inner = 1
        for i, (_, reduction) in enumerate(self.trees):
            if reduction:
                inner *= numels[i]
        ops = 0
        for per_iteration, looped in self.stages:
            ops += max(1, per_iteration) * (inner if looped else 1)
        return outer, outer * ops

    def model_us(self, spec, numels: tuple, nbytes: int) -> tuple[float, float]:
        """(modelled µs, flops) of a call: launch + max(vector work, bytes moved once) on the board."""
        key = (id(spec), numels, nbytes)
        found = self._model_cache.get(key)
        if found is None:
            _, flops = self.work(numels)
            found = (cost.op_us(spec, flops, nbytes, self.rate, cost.VECTOR), float(flops))
            if len(self._model_cache) > 256:
                self._model_cache.clear()
            self._model_cache[key] = found
        return found

    def __call__(self, *args: Any) -> None:
        arity = self.arity
        if len(args) != arity + len(self.trees):
            raise TypeError(f"{self.name} takes {arity + len(self.trees)} arguments ({len(args)} given)")
        numels = tuple(int(n) for n in args[arity:])
        outer, _ = self.work(numels)
        if outer == 0:
            return  # nothing to compute or store
        values: list[Any] = list(args[:arity])
        device = None
        for position, _, _, _, _ in self.tensors:
            tensor = args[position]
            if tensor.device.type != "cpu":
                device = tensor.device.index
                break
        if device is None:
            raise RuntimeError(f"{self.name}: no mlu tensor among the arguments")
        queue = _state.runtime.streams.queue(device, _state.C.current_stream_id(device))
        with Submission(Kind.KERNEL, self.name) as submission:
            nbytes = 0
            for position, param, access, dtype, element in self.tensors:
                tensor = args[position]
                if tensor.device.type == "cpu":
                    values[position] = _host_array(tensor, element)
                    continue
                if tensor.device.index != device:
                    raise RuntimeError(f"{self.name}: argument {param} is on {tensor.device}, the kernel runs on "
                                       f"mlu:{device}")
                size = _span_elements(tensor) * tensor.element_size()
                if size == 0:
                    values[position] = np.empty(0, element)
                    continue
                address = tensor.data_ptr()
                if access == Access.READ:
                    span = submission.read(address, size, param)
                elif access == Access.WRITE:
                    span = submission.write(address, size, param)
                else:
                    span = submission.read_write(address, size, param)
                    nbytes += size
                nbytes += size
                values[position] = span.typed(element)
            model_us, flops = self.model_us(queue.device.spec, numels, nbytes)
            run = self._runner(tuple(values), numels, outer)
            submission.submit(queue, run, model_us,
                               info={"flops": flops, "bytes": nbytes, "unit": cost.VECTOR, "rate": self.rate,
                                     "kernel": "inductor-numba"})
        self.launches += 1
        if on_launch:
            for hook in list(on_launch):
                hook(self)

    def _runner(self, values: tuple, numels: tuple, outer: int):
        function = self.function
        _, work = self.work(numels)
        if self.serial or outer == 1 or work <= INLINE_ELEMENTS or thread_count() == 1:
            def run() -> None:
                function(0, self._first_outer(numels), *values, *numels)
            return run
        first = self._first_outer(numels)
        pieces = min(first, thread_count() * CHUNKS_PER_THREAD)
        bounds = [first * i // pieces for i in range(pieces + 1)]
        chunks = [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]

        def run() -> None:
            map_parallel(lambda chunk: function(chunk[0], chunk[1], *values, *numels), chunks)
        return run

    def _first_outer(self, numels: tuple) -> int:
        """The size of the outermost tile (the range split over the host cores); 1 without outer tiles."""
        return numels[self.outer_trees[0]] if self.outer_trees else 1


def loaded_kernels() -> list[Kernel]:
    """Every kernel compiled or loaded in this process."""
    with _kernels_lock:
        return list(_kernels.values())


__all__ = ["Kernel", "compile_kernel", "loaded_kernels", "on_compile", "on_launch"]
