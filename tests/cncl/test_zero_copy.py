"""Zero-copy collectives: ranks in different processes read and write each other's device memory (memfd arenas
mapped through /proc/<pid>/fd). Results against numpy for every collective, dtype and op, in place and not,
buffers freed and allocated again between calls, the fallback to the copy path, a rank killed while its memory is
mapped by its peers, and an abort while a rank waits for its peers to finish."""
import os
import signal
import time

import numpy as np
import pytest

from mlusim.host import sharedmem
from tests.cncl.ranks import ProcessClique, ThreadClique, shm_entries

pytestmark = [pytest.mark.skipif(not sharedmem._SUPPORTED, reason="shareable device memory needs Linux memfd"),
              pytest.mark.child_processes]  # rank processes

#: Every call of at least 1 byte may go zero-copy; blocks of 64 KiB and more are shareable, so the counts below
#: (at least 65537 elements) make every buffer shareable, odd counts make uneven chunks.
ZERO_COPY_ENV = {"MLUSIM_CNCL_ZERO_COPY_BYTES": "1"}
#: ... and every output written with streaming stores (linereduce.py), which large calls use.
STREAMING_ENV = dict(ZERO_COPY_ENV, MLUSIM_CNCL_STREAMING_BYTES="1")
COUNTS = [65537, 200003]


@pytest.fixture(scope="module", params=[(2, ZERO_COPY_ENV), (3, STREAMING_ENV), (4, ZERO_COPY_ENV)],
                ids=["2proc", "3proc-streaming", "4proc"])
def clique(request):
    before = shm_entries()
    world, env = request.param
    runner = ProcessClique(world, env)
    yield runner
    runner.close()
    assert all(process.exitcode == 0 for process in runner.processes)
    assert shm_entries() == before


def _went_zero_copy(clique, calls: int) -> None:
    for stats in clique.run("zero_copy_stats", True):
        assert stats == {"zero_copy": calls, "copy": 0}, stats


def test_all_reduce_every_dtype_and_op(clique):
    clique.run("zero_copy_stats", True)
    assert clique.run("reductions", "allReduce", COUNTS[:1], False) == [[]] * clique.world
    _went_zero_copy(clique, 11 * 4)


def test_all_reduce_in_place(clique):
    clique.run("zero_copy_stats", True)
    assert clique.run("reductions", "allReduce", COUNTS, True) == [[]] * clique.world
    _went_zero_copy(clique, 11 * 4 * 2)


@pytest.mark.parametrize("in_place", [False, True], ids=["out-of-place", "in-place"])
def test_broadcast_and_all_gather(clique, in_place):
    clique.run("zero_copy_stats", True)
    kinds = ("broadcast", "bcast", "allGather")
    for kind in kinds:
        assert clique.run("movements", kind, COUNTS[:1], in_place) == [[]] * clique.world, kind
    _went_zero_copy(clique, 11 * len(kinds))


@pytest.mark.parametrize("kind", ["reduceScatter", "reduce"])
@pytest.mark.parametrize("in_place", [False, True], ids=["out-of-place", "in-place"])
def test_reduce_scatter_and_reduce(clique, kind, in_place):
    clique.run("zero_copy_stats", True)
    assert clique.run("reductions", kind, COUNTS[:1], in_place) == [[]] * clique.world
    _went_zero_copy(clique, 11 * 4)


def test_all_to_all(clique):
    """Zero-copy out of place; in place (allowed by this clone) every rank takes the copy path."""
    clique.run("zero_copy_stats", True)
    assert clique.run("movements", "alltoAll", COUNTS[:1], False) == [[]] * clique.world
    _went_zero_copy(clique, 11)
    assert clique.run("movements", "alltoAll", COUNTS[:1], True) == [[]] * clique.world
    for stats in clique.run("zero_copy_stats", True):
        assert stats == {"zero_copy": 0, "copy": 11}, stats


def test_freed_and_reallocated_buffers(clique):
    clique.run("zero_copy_stats", True)
    assert clique.run("reallocated_buffers", 300001, 6) == [[]] * clique.world
    _went_zero_copy(clique, 6)


def test_small_calls_keep_the_copy_path():
    runner = ProcessClique(2)  # default threshold (512 KiB)
    try:
        runner.run("zero_copy_stats", True)
        assert runner.run("reductions", "allReduce", [1000, 100000, 150000], False, [0x12], [0]) == [[]] * 2
        for stats in runner.run("zero_copy_stats"):
            assert stats == {"zero_copy": 1, "copy": 0}, stats  # 1000 and 100000 elements: below the threshold
    finally:
        runner.close()


@pytest.mark.parametrize("how", ["private_memory", "unmappable"])
def test_fallback_to_the_copy_path(how):
    """One rank whose memory is private, or that cannot map its peers: every rank takes the copy path."""
    if how == "private_memory":
        runner = _mixed_clique(dict(ZERO_COPY_ENV, MLUSIM_SHARED_GDRAM="0"))
    else:
        runner = ProcessClique(3, ZERO_COPY_ENV)
    try:
        if how == "unmappable":
            assert runner.run("reductions", "allReduce", COUNTS[:1], False, [0x12], [0]) == [[]] * 3
            runner.run("zero_copy_stats", True)
            runner.connections[1].send(("unmappable_peers", ()))
            assert runner.connections[1].recv()[0] == "ok"
        assert runner.run("reductions", "allReduce", COUNTS, False, [0x12, 0x10, 0x23], [0, 2]) == [[]] * 3
        for stats in runner.run("zero_copy_stats", True):
            assert stats == {"zero_copy": 0, "copy": 12}, stats
    finally:
        runner.close()


def _mixed_clique(env_for_rank_1: dict) -> ProcessClique:
    """A 3-rank clique whose rank 1 has other settings (its process environment)."""
    import multiprocessing

    import cncl
    from tests.cncl import ranks

    runner = ProcessClique.__new__(ProcessClique)
    runner.world = 3
    context = multiprocessing.get_context("spawn")
    clique = cncl.getCliqueId().hex()
    runner.connections, runner.processes = [], []
    for rank in range(3):
        settings = dict(ranks.TEST_ENV, **(env_for_rank_1 if rank == 1 else ZERO_COPY_ENV))
        mine, theirs = context.Pipe()
        process = context.Process(target=ranks._serve, args=(rank, 3, clique, settings, theirs), daemon=True)
        process.start()
        runner.connections.append(mine)
        runner.processes.append(process)
    runner.collect("initComms")
    return runner


def test_threads_of_one_process():
    """Ranks in one process use the same path on their own arena."""
    saved = dict(sharedmem._state)
    sharedmem.enable()
    os.environ["MLUSIM_CNCL_ZERO_COPY_BYTES"] = "1"
    runner = ThreadClique(3)
    try:
        runner.run("zero_copy_stats", True)
        assert runner.run("reductions", "allReduce", COUNTS[:1], True, [0x12, 0x11, 0x20], None) == [[]] * 3
        stats = runner.run("zero_copy_stats", True)[0]  # the counters are the process's
        assert stats == {"zero_copy": 3 * 4 * 3, "copy": 0}, stats
    finally:
        runner.close()
        del os.environ["MLUSIM_CNCL_ZERO_COPY_BYTES"]
        sharedmem._state.update(saved)


def test_a_rank_killed_while_its_memory_is_mapped():
    """The survivors fail with a CNCL error (no crash: the killed rank's memory stays valid while they map it)
    and nothing is left in /dev/shm."""
    before = shm_entries()
    runner = ProcessClique(3, dict(ZERO_COPY_ENV, MLUSIM_CNCL_TIMEOUT="3"))
    try:
        assert runner.run("reductions", "allReduce", COUNTS[:1], False, [0x12], [0]) == [[]] * 3  # warm up
        for connection in runner.connections:
            connection.send(("all_reduce_loop_until_failure", (1 << 20, 20.0)))
        time.sleep(1.0)
        os.kill(runner.processes[2].pid, signal.SIGKILL)
        killed = time.monotonic()
        results = [connection.recv() for connection in runner.connections[:2]]
        waited = time.monotonic() - killed
    finally:
        runner.close()
    for status, (calls, text, _) in results:
        assert status == "ok" and calls > 0, (calls, text)
        assert "CNCL_RET_ERR_SYSTEM" in text and "rank 2" in text, text
    assert waited < 2.5
    assert all(process.exitcode == 0 for process in runner.processes[:2])
    assert shm_entries() == before


def test_abort_comm_unblocks_a_rank_in_the_done_barrier(monkeypatch):
    """Rank 0 has done its part of a zero-copy broadcast and waits for rank 1, which is slow: cnclAbortComm on
    rank 0 makes its call fail at once, and rank 1 still finishes."""
    import threading

    import cncl
    import cnrt
    from cncl import zerocopy
    from mlusim import device as devices

    saved = dict(sharedmem._state)
    sharedmem.enable()
    monkeypatch.setenv("MLUSIM_CNCL_ZERO_COPY_BYTES", "1")
    pull = zerocopy.broadcast_from

    def slow_on_rank_1(views, rank, root):
        if rank == 1:
            time.sleep(2.0)
        pull(views, rank, root)

    monkeypatch.setattr(zerocopy, "broadcast_from", slow_on_rank_1)
    devices.configure(memory=64 << 20, device_count=2)
    try:
        comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
        queues, buffers = [], []
        for rank in range(2):
            cnrt.setDevice(rank)
            queues.append(cnrt.queueCreate())
            buffers.append(cnrt.malloc(1 << 20))
            cnrt.memset(buffers[rank], rank + 1, 1 << 20)
        for rank in range(2):
            cncl.bcast(buffers[rank], 1 << 18, cncl.cnclFloat, 0, comms[rank], queues[rank])
        aborter = threading.Timer(0.3, cncl.abortComm, (comms[0],))
        aborter.start()
        began = time.monotonic()
        with pytest.raises(cnrt.CnrtError) as error:
            cnrt.queueSync(queues[0])
        assert time.monotonic() - began < 1.5
        assert "aborted" in str(error.value) and "zero-copy" in str(error.value)
        aborter.join()
        cnrt.queueSync(queues[1])  # rank 1 found rank 0's part done
        received = np.empty(1 << 20, np.uint8)
        cnrt.memcpy(received, buffers[1], 1 << 20, cnrt.cnrtMemcpyDevToHost)
        assert (received == 1).all()
        assert zerocopy.STATS["zero_copy"] >= 1
        cncl.freeComm(comms[1])
    finally:
        devices.configure()
        sharedmem._state.update(saved)
