"""Faults: a rank killed in the middle of a DDP step, or one that never comes to the first collective, makes the
others fail within the group's timeout with torch.distributed.DistBackendError naming the rank (never a hang);
destroy_process_group returns and no shared-memory segment of the job is left in /dev/shm."""
import glob
import multiprocessing
import secrets

import pytest

from tests.torch_mlu.distributed import jobs
from tests.torch_mlu.distributed.ranks import ENV, free_port

pytestmark = pytest.mark.child_processes  # rank processes


def _start(target, world: int, env: dict):
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    for rank in range(world):
        mine, theirs = context.Pipe()
        process = context.Process(target=target, args=(rank, world, env, theirs), daemon=True)
        process.start()
        pipes.append(mine)
        processes.append(process)
    return pipes, processes


def _reply(pipe, timeout: float = 120.0):
    assert pipe.poll(timeout), "the rank did not answer: a hang"
    return pipe.recv()


def test_dead_and_missing_ranks_fail_the_others_with_a_clear_error():
    session = secrets.token_hex(4)
    env = dict(ENV, MLUSIM_CNCL_SESSION=session)
    # both jobs at once: their ranks start torch in parallel
    dead = _start(jobs.dead_rank, 2, dict(env, MASTER_PORT=str(free_port())))
    missing = _start(jobs.missing_rank, 2, dict(env, MASTER_PORT=str(free_port())))
    try:
        error, elapsed = _reply(dead[0][0])
        assert error is not None, "the survivor of a killed rank saw no error"
        kind, message = error
        assert kind == "DistBackendError", message
        assert "rank 1" in message and ("died" in message or "gone" in message), message
        assert elapsed < 20.0  # well within the group's timeout: a dead process is noticed at once

        error, elapsed = _reply(missing[0][0])
        assert error is not None and error[0] == "DistBackendError", error
        assert "rank 1" in error[1] or "join" in error[1], error[1]
        assert 2.5 < elapsed < 15.0  # the group's timeout is 3 s
        assert _reply(missing[0][1]) is None
    finally:
        for _, processes in (dead, missing):
            for process in processes:
                process.join(timeout=30)
                if process.is_alive():
                    process.kill()
    assert dead[1][0].exitcode == 0 and missing[1][0].exitcode == 0
    assert glob.glob(f"/dev/shm/mlusim-cncl-{session}-*") == []
