"""A rejected call never puts the ranks out of step; after a failure the next call fails at once with
CNCL_RET_ASYNC_ERROR and the sync reports the CNCL error; a rank killed while it waits in cnclInitComms leaves
nothing in /dev/shm, however it was started."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import cncl
import cnrt
from mlusim import device as devices

N = 1024


@pytest.fixture
def ranks():
    """Two ranks of one process on devices 0 and 1: (comms, queues, buffers of N floats = rank + 1)."""
    devices.configure(memory=64 << 20, device_count=2)
    comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
    queues, buffers = [], []
    for rank in range(2):
        cnrt.setDevice(rank)
        queues.append(cnrt.queueCreate())
        pointer = cnrt.malloc(4 * N)
        cnrt.memcpy(pointer, np.full(N, rank + 1, np.float32), 4 * N, cnrt.cnrtMemcpyHostToDev)
        buffers.append(pointer)
    yield comms, queues, buffers
    live = [comm for comm in comms if not comm.destroyed]
    cncl.destroyComms(live, len(live))
    devices.configure()


def _on(rank, call, *args):
    cnrt.setDevice(rank)
    return call(*args)


def _all_reduce_both(comms, queues, buffers) -> np.ndarray:
    for rank in range(2):
        _on(rank, cncl.allReduce, buffers[rank], buffers[rank], N, cncl.cnclFloat, cncl.cnclSum, comms[rank],
            queues[rank])
    for rank in range(2):
        _on(rank, cnrt.queueSync, queues[rank])
    out = np.empty(N, np.float32)
    _on(0, cnrt.memcpy, out, buffers[0], 4 * N, cnrt.cnrtMemcpyDevToHost)
    return out


def _rejected_calls(comm, queue, pointer):
    """One bad call of every kind (each fails at the call, before anything is queued)."""
    f = cncl.cnclFloat
    return [
        lambda: cncl.alltoAllv([pointer, pointer], [4, 4], [f, 99], [pointer, pointer], [4, 4], [f, f], comm, queue),
        lambda: cncl.alltoAllv([pointer, pointer], [4, 2**40], [f, f], [pointer, pointer], [4, 4], [f, f], comm,
                               queue),
        lambda: cncl.allReduce(pointer, pointer, N, 0x99, cncl.cnclSum, comm, queue),
        lambda: cncl.allReduce(pointer, pointer, 10 * N, f, cncl.cnclSum, comm, queue),
        lambda: cncl.broadcast(pointer, pointer, N, f, 7, comm, queue),
        lambda: cncl.reduce(pointer, pointer, N, f, 9, 0, comm, queue),
        lambda: cncl.allGather(pointer, pointer + 4, N // 2, f, comm, queue),
        lambda: cncl.reduceScatter(pointer, None, N, f, cncl.cnclSum, comm, queue),
        lambda: cncl.alltoAll(pointer, pointer, N, f, comm, queue),
        lambda: cncl.send(pointer, N, f, 5, comm, queue),
        lambda: cncl.recv(1.5, N, f, 1, comm, queue),
    ]


def test_a_rejected_call_of_any_kind_keeps_the_ranks_in_step(ranks):
    comms, queues, buffers = ranks
    cnrt.setDevice(0)
    for call in _rejected_calls(comms[0], queues[0], buffers[0]):
        with pytest.raises(cncl.CnclError) as error:
            call()
        assert error.value.code in (cncl.CNCL_RET_ERR_ARGUMENTS, cncl.CNCL_RET_ERR_NULL_POINTER), error.value
    # rank 0 made eleven rejected calls, rank 1 none: their next collective still matches
    assert (_all_reduce_both(comms, queues, buffers) == 3).all()
    assert cncl.getCommAsyncError(comms[0]) == cncl.CNCL_RET_SUCCESS
    # a call refused by its queue (destroyed) does not count either
    lost = _on(0, cnrt.queueCreate)
    _on(0, cnrt.queueDestroy, lost)
    with pytest.raises(cncl.CnclError):
        _on(0, cncl.allReduce, buffers[0], buffers[0], N, cncl.cnclFloat, cncl.cnclSum, comms[0], lost)
    assert (_all_reduce_both(comms, queues, buffers) == 6).all()


def test_after_a_failure_the_next_call_fails_at_once_and_the_sync_reports_the_cncl_error(ranks):
    comms, queues, buffers = ranks
    for rank in range(2):  # mismatched counts: both ranks fail
        _on(rank, cncl.allReduce, buffers[rank], buffers[rank], 100 + rank, cncl.cnclFloat, cncl.cnclSum,
            comms[rank], queues[rank])
    for rank in range(2):
        with pytest.raises(cnrt.CnrtError) as error:
            _on(rank, cnrt.queueSync, queues[rank])
        assert error.value.code == cnrt.cnrtErrorArgsInvalid, error.value  # not cnrtErrorUnknown
        assert isinstance(error.value.cause, cncl.CnclError)
        assert error.value.cause.code == cncl.CNCL_RET_ERR_ARGUMENTS and "mismatched calls" in str(error.value)
        assert cncl.getCommAsyncError(comms[rank]) == cncl.CNCL_RET_ASYNC_ERROR
        began = time.monotonic()
        with pytest.raises(cncl.CnclError) as error:
            _on(rank, cncl.allReduce, buffers[rank], buffers[rank], N, cncl.cnclFloat, cncl.cnclSum, comms[rank],
                queues[rank])
        assert error.value.code == cncl.CNCL_RET_ASYNC_ERROR and time.monotonic() - began < 1
        with pytest.raises(cncl.CnclError) as error:
            _on(rank, cncl.send, buffers[rank], N, cncl.cnclFloat, 1 - rank, comms[rank], queues[rank])
        assert error.value.code == cncl.CNCL_RET_ASYNC_ERROR
        _on(rank, cnrt.queueSync, queues[rank])  # nothing was queued


_INIT_AS_RANK_0 = "import cncl; cncl.initComms(1, [0], [0], 2, cncl.cnclCliqueId.fromhex({hex!r}))"


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_rank_killed_while_waiting_in_init_leaves_no_segment(how):
    """Started by hand (not `mlusim run`): rank 0 creates the segment and waits for rank 1, which never comes."""
    clique = cncl.getCliqueId()
    path = f"/dev/shm/{clique.segment_name}"
    process = subprocess.Popen([sys.executable, "-c", _INIT_AS_RANK_0.format(hex=clique.hex())],
                               env=dict(os.environ, MLUSIM_CNCL_TIMEOUT="60"))
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(path):
            assert process.poll() is None and time.monotonic() < deadline, "rank 0 never created its segment"
            time.sleep(0.01)
        process.send_signal(how)
        process.wait(10)
        deadline = time.monotonic() + 5
        while os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not os.path.exists(path), f"{path} was left behind"
    finally:
        process.kill()
        process.wait()
