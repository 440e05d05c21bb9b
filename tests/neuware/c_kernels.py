"""Kernels the C test programs launch through cnrtInvokeKernel.

`scale_add` is a plain Python callable (the launch runs it once with the decoded arguments); `scalar_at` is a BANG
kernel shared with the bang tests (module level there, so numba's disk cache serves both).
"""
import numpy as np

import cnrt
from tests.mlusim.bang.kernels import scalar_at  # noqa: F401  (x[index] = 1.0)

SCALE_ADD_TYPES = ("float *", "float *", "float", "int")
SCALAR_AT_TYPES = ("float *", "int")


def scale_add(x: int, y: int, factor: float, n: int) -> None:
    """y = factor * x + y over n floats (runs on the launching queue's worker; copies through the default
    queue, which is another queue)."""
    a, b = np.empty(n, np.float32), np.empty(n, np.float32)
    cnrt.memcpy(a, x, 4 * n, cnrt.cnrtMemcpyDevToHost)
    cnrt.memcpy(b, y, 4 * n, cnrt.cnrtMemcpyDevToHost)
    cnrt.memcpy(y, np.float32(factor) * a + b, 4 * n, cnrt.cnrtMemcpyHostToDev)
