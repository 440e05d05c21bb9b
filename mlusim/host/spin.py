"""Spin-waits on shared int64 counters with the GIL released, for threads that hand work to each other within
microseconds (the fork and join of `mlusim.host.threads.Team`).

On this kind of host (a virtual machine whose idle vCPUs halt at once), a thread that sleeps on a lock and is woken
by a thread that goes on computing starts 26-80 us later (~5 us only when the waker blocks at once and the woken
thread takes its core); a thread still spinning sees the counter change at once. OpenMP runtimes (torch's libgomp)
spin for a while after each parallel region for that reason. The waits here are `mlusim.host.atomics.spin_until` (an
atomic acquire load, a pause between reads) in numba code that holds no GIL, so a spinning thread costs the Python
threads nothing. Counters compare as cncl's do, modulo 2**32: a target less than 2**31 ahead of the count.
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from .atomics import cpu_relax, exchange, spin_until


@njit(nogil=True, cache=True)
def _wait_for(counters, index, target, rounds, settle):
    if not spin_until(counters, index, target, rounds):
        return False
    for _ in range(settle):
        cpu_relax()
    return True


@njit(nogil=True, cache=True)
def _post_then_wait_for(posted, post_index, value, counters, index, target, rounds, settle):
    exchange(posted, post_index, value)
    return _wait_for(counters, index, target, rounds, settle)


def wait_for(counters: np.ndarray, index: int, target: int, rounds: int, settle: int = 0) -> bool:
    """Spin (the GIL released) until counters[index] reaches `target`, at most `rounds` pauses; then `settle`
    pauses more. Whether the target was reached."""
    return _wait_for(counters, index, target, rounds, settle)


def post_then_wait_for(posted: np.ndarray, post_index: int, value: int, counters: np.ndarray, index: int,
                       target: int, rounds: int, settle: int = 0) -> bool:
    """posted[post_index] = value, stored after the GIL is released (a thread spinning on it for this value can
    take the GIL without waiting for it), then wait_for(counters, index, target, rounds, settle)."""
    return _post_then_wait_for(posted, post_index, value, counters, index, target, rounds, settle)


_pauses_per_us = None


def pauses_per_us() -> float:
    """How many spin rounds take a microsecond on this host (measured once, ~1 ms)."""
    global _pauses_per_us
    if _pauses_per_us is None:
        never = np.zeros(1, np.int64)
        _wait_for(never, 0, 1, 10, 0)  # compiled (or loaded from the cache) before timing
        best = None
        for _ in range(3):
            started = time.perf_counter()
            _wait_for(never, 0, 1, 20000, 0)
            seconds = time.perf_counter() - started
            best = seconds if best is None else min(best, seconds)
        _pauses_per_us = max(1.0, 20000 / (best * 1e6))
    return _pauses_per_us


def rounds_for(seconds: float) -> int:
    """Spin rounds that last about `seconds`."""
    return max(1, int(seconds * 1e6 * pauses_per_us()))
