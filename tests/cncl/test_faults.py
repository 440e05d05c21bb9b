"""Faults: mismatched calls, ranks that die, exit, never arrive, and cnclAbortComm. Every wait ends in a CNCL error
within the configured timeout, and no shared-memory segment is left in /dev/shm."""
import os
import signal
import threading
import time

import pytest

import cncl
import cnrt
from mlusim import device as devices
from tests.cncl.ranks import ProcessClique, shm_entries

pytestmark = pytest.mark.child_processes  # rank processes

FAULT_ENV = {"MLUSIM_CNCL_TIMEOUT": "3"}


@pytest.fixture
def shm_unchanged():
    before = shm_entries()
    yield
    assert shm_entries() == before


@pytest.fixture
def short_timeout(monkeypatch):
    monkeypatch.setenv("MLUSIM_CNCL_TIMEOUT", "1")


def _open(world: int) -> ProcessClique:
    return ProcessClique(world, FAULT_ENV)


@pytest.mark.parametrize("counts, dtypes, words", [
    ((100, 101), (cncl.cnclFloat, cncl.cnclFloat), ("count=100", "count=101")),
    ((64, 64), (cncl.cnclFloat, cncl.cnclInt32), ("data_type=cnclFloat", "data_type=cnclInt32")),
])
def test_mismatched_calls_are_reported_on_every_rank(shm_unchanged, counts, dtypes, words):
    clique = _open(2)
    try:
        clique.run_each("all_reduce_expecting_failure", [(c, d) for c, d in zip(counts, dtypes)])
        results = clique.collect()
    finally:
        clique.close()
    for seconds, text, async_error in results:
        assert "CNCL_RET_ERR" in text and seconds < 2, text
        assert async_error == cncl.CNCL_RET_ASYNC_ERROR
    assert any("mismatched calls" in text and all(w in text for w in words) for _, text, _ in results), results


@pytest.mark.parametrize("how", ["sigkill", "exit_without_cleanup", "normal_exit"])
def test_a_rank_that_leaves_fails_its_peers_fast(shm_unchanged, how):
    clique = _open(3)
    try:
        victim = clique.processes[2]
        if how == "normal_exit":
            clique.connections[2].send(("exit_like_the_interpreter", ()))
        elif how == "exit_without_cleanup":
            clique.connections[2].send(("exit_now", (5,)))
        victim_gone = time.monotonic()
        for connection in clique.connections[:2]:
            connection.send(("all_reduce_expecting_failure", (1000,)))
        if how == "sigkill":
            time.sleep(0.2)
            os.kill(victim.pid, signal.SIGKILL)
            victim_gone = time.monotonic()
        results = [connection.recv() for connection in clique.connections[:2]]
        waited = time.monotonic() - victim_gone
    finally:
        clique.close()
    for status, (seconds, text, async_error) in results:
        assert status == "ok"
        assert "CNCL_RET_ERR_SYSTEM" in text and "rank 2" in text, text
        assert async_error == cncl.CNCL_RET_ASYNC_ERROR
    assert waited < 2.0, f"peers noticed the lost rank only after {waited:.2f} s"


def test_a_peer_that_never_calls_times_out(shm_unchanged):
    clique = _open(2)
    try:
        clique.run_each("all_reduce_expecting_failure", [(10,)])
        clique.connections[1].send(("idle", (4.0,)))
        seconds, text, _ = clique.connections[0].recv()[1]
        clique.connections[1].recv()
    finally:
        clique.close()
    assert "timed out after 3 s" in text, text
    assert 2.5 < seconds < 5


def test_a_rank_that_never_joins_fails_init(shm_unchanged, short_timeout):
    began = time.monotonic()
    with pytest.raises(cncl.CnclError) as error:
        cncl.initComms(1, [0], [0], 2, cncl.getCliqueId())
    assert error.value.code == cncl.CNCL_RET_ERR_INIT
    assert "rank 1" in error.value.message and time.monotonic() - began < 3


def test_a_clique_whose_creator_never_comes_fails_init(shm_unchanged, short_timeout):
    with pytest.raises(cncl.CnclError) as error:
        cncl.initComms(1, [0], [1], 2, cncl.getCliqueId())
    assert error.value.code == cncl.CNCL_RET_ERR_INIT
    assert "rank 0" in error.value.message


def test_abort_comm_unblocks_a_waiting_collective():
    devices.configure(memory=64 << 20, device_count=2)
    try:
        comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
        cnrt.setDevice(0)
        queue = cnrt.queueCreate()
        buffer = cnrt.malloc(4096)
        cncl.allReduce(buffer, buffer, 1024, cncl.cnclFloat, cncl.cnclSum, comms[0], queue)  # rank 1 never joins
        aborter = threading.Timer(0.3, cncl.abortComm, (comms[0],))
        aborter.start()
        began = time.monotonic()
        with pytest.raises(cnrt.CnrtError) as error:
            cnrt.queueSync(queue)
        assert time.monotonic() - began < 1.5
        assert "aborted" in str(error.value)
        aborter.join()
        assert comms[0].destroyed
        assert cncl.getCommAsyncError(comms[1]) == cncl.CNCL_RET_SUCCESS
        cncl.freeComm(comms[1])
    finally:
        devices.configure()


def test_waiting_for_a_slow_peer_does_not_spin(shm_unchanged):
    clique = _open(2)
    try:
        clique.run_each("all_reduce_cpu_time", [(1000, 0.0), (1000, 1.5)])
        (wall, cpu), _ = clique.collect()
    finally:
        clique.close()
    assert wall > 1.2
    assert cpu < 0.15 * wall, f"rank 0 used {cpu:.2f} s of CPU while waiting {wall:.2f} s"
