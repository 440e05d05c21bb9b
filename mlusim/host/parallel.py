"""Share a piece of work out over the host's cores: the fork-join map every kernel library uses (cnnl's kernels,
torch_mlu's generated kernels, MagicMind's engine), on the host threads' team (`mlusim.host.threads.Team`).

Work running inside `map_parallel` (or `run_inline`) is marked on its thread, so a nested call runs inline
instead of waiting for helpers that are all busy with the outer call.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from .threads import cpu_slot, host_cores
from .threads import team as host_team

#: how long the caller of map_parallel, its own share done, spins for the helpers' before it sleeps (an op's
#: shares end within a few hundred us of each other, unless a helper started late)
JOIN_SPIN_SECONDS = 0.002
#: index spaces of at most this many elements run inline on the calling thread in one block: handing work to the
#: team costs tens of µs (a thread wake-up, the GIL; more on a busy host), more than a second core saves on so
#: little data (cnnl's blocked driver and torch_mlu's compiled kernels both go by it)
INLINE_ELEMENTS = 1 << 17
#: the same for work that streams straight into its output (copies, plain ufuncs): memory-bound, so a second
#: thread gains little below a few MiB (docs/cnnl.md, "How an op call works", has the measurement)
INLINE_DIRECT_ELEMENTS = 1 << 20

_state = threading.local()


def thread_count():
    """Number of host threads work is split across (the host cores this process may use, at most 8)."""
    return host_cores()


def inside() -> bool:
    """True on a thread that is running a share of map_parallel (or run_inline) work."""
    return getattr(_state, "inside", False)


def even_ranges(count, pieces):
    """(start, stop) ranges cutting range(count) into at most `pieces` nearly equal, non-empty, consecutive parts."""
    pieces = max(1, min(int(pieces), int(count)))
    bounds = [count * k // pieces for k in range(pieces + 1)]
    return [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


def map_parallel(fn, items):
    """[fn(item) for item in items], the items shared out between the calling thread and the helpers of the
    host's fork-join team (`mlusim.host.threads.Team`).

    The items are cut into one consecutive share per host core; each thread first takes the untaken items of the
    share of the core it runs on (`mlusim.host.threads.cpu_slot`), so that the same items, and the data they touch, land on
    the same core call after call and are found in its caches (on this 2-core VM a relu of 3072 x 2048 float32
    over two halves took 0.47-0.57 ms with each half kept on its core, 0.68-0.86 ms with the halves swapped each
    call, when the host's caches were not crowded), then the untaken items of the other shares, from their ends.
    So a helper the OS schedules late (a busy host) leaves its share to the others instead of holding up the
    op; the caller never waits for a helper that has not started. The caller, its share done, spins for the
    helpers' (JOIN_SPIN_SECONDS) before it sleeps on the batch: woken from sleep it started 35-80 us after the last
    item on this host. Calls from inside a worker run inline. Every item taken has finished before this returns
    or raises; after a failure the remaining items are skipped and the first error is raised.
    """
    items = list(items)
    threads = thread_count()
    if len(items) <= 1 or threads == 1 or getattr(_state, "inside", False):
        return _run_inside(fn, items)
    batch = _Batch(fn, items)
    team = host_team()
    forks = team.fork(batch.work, min(threads, len(items)) - 1)
    batch.work()
    if forks:
        team.join(forks, batch.progress, len(items), JOIN_SPIN_SECONDS)
    batch.finished.acquire()  # released by the thread that finishes the last item
    if batch.error is not None:
        raise batch.error
    return batch.results


class _Batch:
    """The shared state of one map_parallel call."""

    __slots__ = ("fn", "items", "results", "taken", "lock", "done", "progress", "finished", "error", "errors")

    def __init__(self, fn, items):
        self.fn, self.items = fn, items
        self.errors = np.geterr()  # the caller's floating-point error handling holds on the pool threads too
        self.results = [None] * len(items)
        self.taken = bytearray(len(items))  # 1 once a thread took the item (set under the lock)
        self.lock = threading.Lock()
        self.done = 0
        self.progress = np.zeros(1, np.int64)  # `done`, for a caller spinning on it without the GIL
        self.finished = threading.Lock()  # a lock, not an Event: one C call to release, none to make
        self.finished.acquire()
        self.error = None

    def work(self):
        was_inside = getattr(_state, "inside", False)
        _state.inside = True  # nested blocked ops run inline instead of waiting on the pool
        try:
            with np.errstate(**self.errors):
                self._take_items()
        finally:
            _state.inside = was_inside

    def _order(self):
        """The item indices in the order this thread tries them: its core's share, then the others' from their
        ends (see map_parallel)."""
        count, cores = len(self.items), thread_count()
        slot = cpu_slot()
        if slot is None or cores == 1:
            return range(count)
        first, stop = count * slot // cores, count * (slot + 1) // cores
        return itertools.chain(range(first, stop), range(count - 1, stop - 1, -1), range(first - 1, -1, -1))

    def _take_items(self):
        count, taken, lock = len(self.items), self.taken, self.lock
        for index in self._order():
            with lock:
                if taken[index]:
                    continue
                taken[index] = 1
            if self.error is None:
                try:
                    self.results[index] = self.fn(self.items[index])
                except BaseException as exc:  # noqa: BLE001 - raised by the calling thread
                    with self.lock:
                        if self.error is None:
                            self.error = exc
            with self.lock:
                self.done += 1
                self.progress[0] = self.done
                if self.done == count:
                    self.finished.release()


def run_inline(block_fn, operands):
    """block_fn(*operands) on this thread, marked as kernel work (nested blocked ops run inline too)."""
    state = _state
    was_inside = getattr(state, "inside", False)
    state.inside = True
    try:
        block_fn(*operands)
    finally:
        state.inside = was_inside


def _run_inside(fn, items):
    # marks the thread as running kernel work, so nested blocked ops run inline instead of waiting on the pool
    was_inside = getattr(_state, "inside", False)
    _state.inside = True
    try:
        return [fn(item) for item in items]
    finally:
        _state.inside = was_inside
