"""Per-thread control of the host BLAS's own threading (OpenBLAS `openblas_set_num_threads_local`).

Kernels that split a GEMM into blocks over the kernel thread pool want each block's GEMM single-threaded, so that
the pool's threads and BLAS's threads do not compete for the same cores. A GEMM too small to gain from BLAS's
threads (`gemm_threads`) runs single-threaded too: on a small host whose cores are also busy (the host thread
dispatching ops, another process) a multi-threaded GEMM of a few million multiply-adds was measured 2-10x slower
than the same GEMM on one thread, since BLAS's threads wait for cores and spin after it. numpy's bundled OpenBLAS
exports a thread-local setter; when it cannot be found (another BLAS), both do nothing.
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
        try:  # PyDLL: the setter only stores a thread-local, so it keeps the GIL (no hand-over at every call)
            setter = getattr(ctypes.PyDLL(path), _SETTER_NAME)
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


#: GEMMs of fewer multiply-adds run on one BLAS thread (about a millisecond of one core's work)
PARALLEL_GEMM_MACS = 1 << 26


def gemm_threads(macs: int):
    """A context for a GEMM (or a few) of `macs` multiply-adds: single-threaded below PARALLEL_GEMM_MACS, BLAS's
    own threading above."""
    if macs < PARALLEL_GEMM_MACS:
        return single_threaded_blas()
    return contextlib.nullcontext()
