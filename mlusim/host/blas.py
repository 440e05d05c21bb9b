"""Control of the host BLAS's own threading (OpenBLAS `openblas_set_num_threads_local`).

Kernels that split a GEMM into blocks over the kernel thread pool want each block's GEMM single-threaded, so that
the pool's threads and BLAS's threads do not compete for the same cores. A GEMM too small to gain from BLAS's
threads (`gemm_threads`) runs single-threaded too: on a small host whose cores are also busy (the host thread
dispatching ops, another process) a multi-threaded GEMM of a few million multiply-adds was measured 2-10x slower
than the same GEMM on one thread, since BLAS's threads wait for cores and spin after it. When numpy's OpenBLAS
setter cannot be found (another BLAS), both do nothing.

The "local" setter of numpy's bundled (pthreads) OpenBLAS sets the whole process's count (measured: a 1024^3 GEMM
on one thread ran at one core's speed while another thread held the setting). Blocks held by several threads at
once therefore share one setting: the first to enter sets one thread, the last to leave restores the count found
by the first. (Each thread saving and restoring on its own raced: a thread could restore another's 1, leaving
every later GEMM of the process on one core.)
"""
import contextlib
import ctypes
import glob
import os
import threading

import numpy as np

_SETTER_NAME = "openblas_set_num_threads_local"
#: the thread count's getter, as plain OpenBLAS and numpy's scipy-openblas build (64-bit ints, prefixed) name it
_GETTER_NAMES = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_")


def _find_library():
    folder = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(folder, "*openblas*")):
        try:  # PyDLL: short calls that keep the GIL (no hand-over of it at every call)
            library = ctypes.PyDLL(path)
            setter = getattr(library, _SETTER_NAME)
        except (OSError, AttributeError):
            continue
        setter.restype, setter.argtypes = ctypes.c_int, [ctypes.c_int]
        getter = next((getattr(library, name) for name in _GETTER_NAMES if hasattr(library, name)), None)
        if getter is not None:
            getter.restype, getter.argtypes = ctypes.c_int, []
        return setter, getter
    return None, None


_setter, _getter = _find_library()


def available() -> bool:
    """True when BLAS threading can be limited (numpy's OpenBLAS)."""
    return _setter is not None


def thread_count() -> int:
    """BLAS's current thread count (0 when it cannot be read)."""
    return _getter() if _getter is not None else 0


_holders_lock = threading.Lock()
_holders = 0           # blocks inside single_threaded_blas, over all threads
_count_before = 0      # BLAS's thread count when the first of them entered


def _enter() -> None:
    global _holders, _count_before
    with _holders_lock:
        if _holders == 0:
            _count_before = _setter(1)
        _holders += 1


def _leave() -> None:
    global _holders
    with _holders_lock:
        _holders -= 1
        if _holders == 0:
            _setter(_count_before)


@contextlib.contextmanager
def single_threaded_blas():
    """Within the block, BLAS calls run on one thread (those of other threads too: see the module's docstring)."""
    if _setter is None:
        yield
        return
    _enter()
    try:
        yield
    finally:
        _leave()


#: GEMMs of fewer multiply-adds run on one BLAS thread (about a millisecond of one core's work)
PARALLEL_GEMM_MACS = 1 << 26


def gemm_threads(macs: int):
    """A context for a GEMM (or a few) of `macs` multiply-adds: single-threaded below PARALLEL_GEMM_MACS, BLAS's
    own threading above."""
    if macs < PARALLEL_GEMM_MACS:
        return single_threaded_blas()
    return contextlib.nullcontext()
