"""The host's worker threads, shared by every part of the simulator that splits work over the host's cores
(large copies, BANG task chunks, cnnl kernel blocks): one pool, sized once, forgotten in a forked child."""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

#: At most this many host threads split one piece of work.
MAX_HOST_THREADS = 8

_cores: Optional[int] = None
_pool: Optional[ThreadPoolExecutor] = None
_lock = threading.Lock()


def host_cores() -> int:
    """The host cores this process may use (at most MAX_HOST_THREADS); read once."""
    global _cores
    if _cores is None:
        try:
            cpus = len(os.sched_getaffinity(0))
        except AttributeError:
            cpus = os.cpu_count() or 1
        _cores = max(1, min(cpus, MAX_HOST_THREADS))
    return _cores


def _cpu_reader():
    """glibc's sched_getcpu (a short call that keeps the GIL), or None where there is none."""
    try:
        reader = ctypes.PyDLL(None).sched_getcpu
    except (OSError, AttributeError):
        return None
    reader.restype, reader.argtypes = ctypes.c_int, []
    return reader


_read_cpu = _cpu_reader()
_slots: Optional[dict] = None


def cpu_slot() -> Optional[int]:
    """The position (0 .. host_cores() - 1) of the CPU the calling thread runs on among the CPUs this process may
    use, or None when it cannot be told. Work split into one share per slot and handed out by slot lands on the
    same core call after call, so that each core finds its share of the data still in its caches (as OpenMP's
    static schedule does)."""
    global _slots
    if _read_cpu is None:
        return None
    if _slots is None:
        try:
            cpus = sorted(os.sched_getaffinity(0))
        except AttributeError:
            cpus = list(range(os.cpu_count() or 1))
        _slots = {cpu: index % host_cores() for index, cpu in enumerate(cpus)}
    return _slots.get(_read_cpu())


def pool() -> ThreadPoolExecutor:
    """The shared pool (one worker per host core; callers also work on their own thread)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=host_cores(), thread_name_prefix="mlusim-host")
        return _pool


def _forget_pool_in_child() -> None:
    global _pool, _lock
    _pool = None  # a forked child has none of the parent's threads
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)
