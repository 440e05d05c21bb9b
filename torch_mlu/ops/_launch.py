"""The one place where a native mlu op's fast path puts its command on a queue.

Most ops call cnnl's public functions (which validate every argument and enqueue one command). The hottest small
ops (elementwise on dense, same-shape operands) use `enqueue` after the first call with a given signature went
through the public function: the descriptors, op and data types were validated then, and nothing about them can
differ on a later call with the same cached descriptor objects. What does differ per call is checked per call, by
cnnl's OpCall: every device pointer is resolved, bounds- and lifetime-checked and pinned, and must be on the
handle's device. The command runs the same cnnl kernel the public function runs.
"""
from __future__ import annotations

from cnnl.opcall import OpCall

#: signatures (a tuple naming the op and its descriptor objects) already validated by a public cnnl call
_validated: set = set()
VALIDATED_CACHE_SIZE = 16384


def validated(signature: tuple) -> bool:
    """True once `remember(signature)` was called (after a public cnnl call with it succeeded)."""
    return signature in _validated


def remember(signature: tuple) -> None:
    if len(_validated) >= VALIDATED_CACHE_SIZE:
        _validated.clear()
    _validated.add(signature)


def enqueue(name: str, handle, inputs, outputs, kernel, flops: float, dtype: int, outputs_read: bool = False) -> None:
    """Queue one cnnl command `name` on the handle's queue.

    inputs / outputs: sequences of (descriptor, device address, C argument name); every address is checked and
    pinned until the command ran. kernel(*input_views, *output_views) runs on the queue; `flops` and the cnnl
    `dtype` feed the cost model. `outputs_read`: the kernel reads the outputs too (an op in place)."""
    with OpCall(name, handle) as call:
        views = [call.input(d, address, arg) for d, address, arg in inputs]
        views += [call.output(d, address, arg, read=outputs_read) for d, address, arg in outputs]
        call.submit(lambda: kernel(*views), flops=flops, dtype=dtype)
