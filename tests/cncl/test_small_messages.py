"""The compiled small all-reduce (tiny.py) and the announced-sleeper wakes (mlusim/host/atomics.py) behave like the general
path: a late peer is waited for asleep and woken, a peer that never comes times out, an abort stops the wait, and
a mismatched call is reported with its signature. Two devices of one process, one host thread per rank."""
import threading
import time

import numpy as np
import pytest

import cncl
import cnrt
from cncl import tiny


def _buffer(device: int, values: np.ndarray) -> int:
    cnrt.setDevice(device)
    pointer = cnrt.malloc(values.nbytes)
    cnrt.memcpy(pointer, values, values.nbytes, cnrt.cnrtMemcpyHostToDev)
    return pointer


def _all_reduce(comm, device: int, pointer: int, count: int, dtype=cncl.cnclFloat):
    cnrt.setDevice(device)
    cncl.allReduce(pointer, pointer, count, dtype, cncl.cnclSum, comm, None)
    cnrt.syncDevice()


def test_a_late_peer_is_waited_for_asleep_and_woken(pair):
    values = [np.arange(5, dtype=np.float32) * (r + 1) for r in range(2)]
    assert values[0].nbytes <= tiny.MAX_BYTES  # the compiled path
    pointers = [_buffer(r, values[r]) for r in range(2)]
    errors = []

    def rank(r, delay):
        try:
            time.sleep(delay)
            _all_reduce(pair[r], r, pointers[r], 5)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=rank, args=(0, 0.0)), threading.Thread(target=rank, args=(1, 0.4))]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert not errors and time.monotonic() - started < 10
    for r in range(2):
        out = np.empty(5, np.float32)
        cnrt.setDevice(r)
        cnrt.memcpy(out, pointers[r], 20, cnrt.cnrtMemcpyDevToHost)
        np.testing.assert_array_equal(out, values[0] + values[1])


def test_a_peer_that_never_comes_times_out(pair):
    pair[0].set_timeout(0.5)
    pointer = _buffer(0, np.ones(2, np.float32))
    started = time.monotonic()
    with pytest.raises(cnrt.CnrtError, match="timed out after 0.5 s waiting for rank 1"):
        _all_reduce(pair[0], 0, pointer, 2)
    assert time.monotonic() - started < 5
    assert cncl.getCommAsyncError(pair[0]) == cncl.CNCL_RET_ASYNC_ERROR


def test_an_abort_stops_a_waiting_rank(pair):
    pointer = _buffer(0, np.ones(2, np.float32))
    threading.Timer(0.3, lambda: cncl.abortComm(pair[1])).start()
    started = time.monotonic()
    with pytest.raises(cnrt.CnrtError, match="rank 1"):
        _all_reduce(pair[0], 0, pointer, 2)
    assert time.monotonic() - started < 5


def test_mismatched_small_calls_are_reported(pair):
    pointers = [_buffer(r, np.ones(4, np.int32)) for r in range(2)]
    failures = []

    def rank(r, count):
        try:
            _all_reduce(pair[r], r, pointers[r], count, cncl.cnclInt32)
        except cnrt.CnrtError as exc:
            failures.append(str(exc))

    threads = [threading.Thread(target=rank, args=(r, 3 + r)) for r in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(failures) == 2
    assert any("mismatched calls" in text and "count=3" in text and "count=4" in text for text in failures), failures
