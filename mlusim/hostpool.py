"""The host's worker threads, shared by every part of the simulator that splits work over the host's cores
(large copies, BANG task chunks, cnnl kernel blocks): one pool, sized once, forgotten in a forked child."""
from __future__ import annotations

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
