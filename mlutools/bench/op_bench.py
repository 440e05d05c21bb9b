"""Device buffers and descriptors for cnnl op benchmarks, on one handle (shared by the cnnl benchmark scripts)."""
from __future__ import annotations

from typing import Callable

import numpy as np

import cnnl
import cnrt


class OpBench:
    """Device buffers and tensor descriptors on one cnnl handle; `close()` frees them."""

    def __init__(self):
        self.handle = cnnl.create()
        self.queue = cnnl.getQueue(self.handle)
        self.pointers: list[int] = []

    def put(self, array: np.ndarray) -> int:
        """A new device buffer holding `array`."""
        pointer = self.empty(array.nbytes)
        cnrt.memcpy(pointer, np.ascontiguousarray(array), array.nbytes, cnrt.cnrtMemcpyHostToDev)
        return pointer

    def empty(self, nbytes: int) -> int:
        pointer = cnrt.malloc(max(nbytes, 1))
        self.pointers.append(pointer)
        return pointer

    @staticmethod
    def desc(dims, dtype=cnnl.CNNL_DTYPE_FLOAT, layout=cnnl.CNNL_LAYOUT_ARRAY):
        desc = cnnl.createTensorDescriptor()
        cnnl.setTensorDescriptor(desc, layout, dtype, list(dims))
        return desc

    def synced(self, op: Callable[[], None]) -> Callable[[], None]:
        """The op as measured: enqueue + cnrtQueueSync."""
        def once():
            op()
            cnrt.queueSync(self.queue)
        return once

    def close(self) -> None:
        for pointer in self.pointers:
            cnrt.free(pointer)
        cnnl.destroy(self.handle)
