"""Combining the contributions of ranks: in rank order, half and bfloat16 in float32 rounded once."""
from __future__ import annotations

import numpy as np

from .datatypes import REDUCE_FUNCTIONS, DataType


class Scratch:
    """Reusable host buffers of one communicator (its operations run one at a time)."""

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}

    def array(self, name: str, dtype: np.dtype, count: int) -> np.ndarray:
        need = count * dtype.itemsize
        buffer = self._buffers.get(name)
        if buffer is None or buffer.nbytes < need:
            buffer = self._buffers[name] = np.empty(max(need, 2 * (0 if buffer is None else buffer.nbytes)),
                                                    np.uint8)
        return buffer[:need].view(dtype)


def ordered_reduction(nparts: int, op: int, dtype: DataType):
    """`reduce_ordered` of `nparts` parts by `op` as a function (parts, out, scratch), made once for a call that is
    repeated: two parts that need no widening are one ufunc call, without the general function's checks."""
    if nparts == 2 and not dtype.widens:
        combine = REDUCE_FUNCTIONS[op]
        return lambda parts, out, scratch: combine(parts[0], parts[1], out=out)
    return lambda parts, out, scratch: reduce_ordered(parts, out, op, dtype, scratch)


def reduce_ordered(parts: list, out: np.ndarray, op: int, dtype: DataType, scratch: Scratch) -> None:
    """out = ((parts[0] op parts[1]) op parts[2]) ...; `out` may be the memory of any one part.

    The fixed order makes every rank's result bitwise identical and lets tests compare with numpy exactly."""
    if out.size == 0:
        return
    if len(parts) == 1:
        if not np.shares_memory(out, parts[0]):
            np.copyto(out, parts[0])
        return
    combine = REDUCE_FUNCTIONS[op]
    if dtype.widens:
        accumulator = scratch.array("accumulator", dtype.accumulate, out.size)
        operand = scratch.array("operand", dtype.accumulate, out.size)
        np.copyto(accumulator, parts[0], casting="unsafe")
        for part in parts[1:]:
            np.copyto(operand, part, casting="unsafe")
            combine(accumulator, operand, out=accumulator)
        np.copyto(out, accumulator, casting="unsafe")
        return
    # Accumulating straight into `out` is only safe while no part still to be read lives there.
    target = out
    if any(np.may_share_memory(out, part) for part in parts[2:]):
        target = scratch.array("accumulator", dtype.storage, out.size)
    combine(parts[0], parts[1], out=target)
    for part in parts[2:]:
        combine(target, part, out=target)
    if target is not out:
        np.copyto(out, target)
