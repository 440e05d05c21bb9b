"""Per-thread control of the host BLAS's own threading (OpenBLAS `openblas_set_num_threads_local`).

Kernels that split a GEMM into blocks over the kernel thread pool want each block's GEMM single-threaded, so that
the pool's threads and BLAS's threads do not compete for the same cores. numpy's bundled OpenBLAS exports a
thread-local setter; when it cannot be found (another BLAS), `single_threaded_blas()` does nothing and the blocks
simply share BLAS's pool.
"""
import contextlib
import ctypes
import glob
import os

import numpy as np

_SETTER_NAME = "openblas_set_num_threads_local"


def _find_setter():
    folder = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(folder, "*openblas*")):
        try:
            setter = getattr(ctypes.CDLL(path), _SETTER_NAME)
        except (OSError, AttributeError):
            continue
        setter.restype, setter.argtypes = ctypes.c_int, [ctypes.c_int]
        return setter
    return None


_setter = _find_setter()


def available() -> bool:
    """True when BLAS threading can be limited per thread."""
    return _setter is not None


@contextlib.contextmanager
def single_threaded_blas():
    """Within the block, BLAS calls made by this thread use one thread."""
    if _setter is None:
        yield
        return
    previous = _setter(1)
    try:
        yield
    finally:
        _setter(previous)
