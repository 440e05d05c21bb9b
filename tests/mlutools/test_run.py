"""`mlusim run` / `python -m mlutools.run`: ranks, environment, prefixed output, failure propagation."""
import subprocess
import sys
import textwrap
import time

import pytest

from tests.cncl.ranks import shm_entries

pytestmark = pytest.mark.child_processes  # rank processes

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import cncl, cnrt
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    comm, = cncl.initComms(1, [0], [rank], world, cncl.cnclCliqueId.from_env())
    buffer = cnrt.malloc(4096)
    cnrt.memcpy(buffer, np.full(1024, rank + 1, np.float32), 4096, cnrt.cnrtMemcpyHostToDev)
    mode = sys.argv[1]
    if rank == 1 and mode == "raise":
        raise RuntimeError("rank 1 gives up")
    if rank == 1 and mode == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    cncl.allReduce(buffer, buffer, 1024, cncl.cnclFloat, cncl.cnclSum, comm, None)
    cnrt.syncDevice()
    out = np.empty(1024, np.float32)
    cnrt.memcpy(out, buffer, 4096, cnrt.cnrtMemcpyDevToHost)
    print(f"world={world} local={os.environ['LOCAL_RANK']} devices={cnrt.getDeviceCount()} sum={out[0]:g}")
""")


def _launch(tmp_path, world: int, mode: str, *options: str):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    began = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "mlutools.run", "-n", str(world), *options, str(script), mode],
                            capture_output=True, text=True, timeout=60,
                            env={**__import__("os").environ, "MLUSIM_CNCL_TIMEOUT": "20"})
    return result, time.monotonic() - began


@pytest.fixture(autouse=True)
def shm_unchanged():
    before = shm_entries(mine_only=False)
    yield
    assert shm_entries(mine_only=False) <= before


def test_ranks_run_with_their_environment_and_prefixed_output(tmp_path):
    result, _ = _launch(tmp_path, 3, "ok", "--devices-per-rank", "2")
    assert result.returncode == 0, result.stderr
    lines = sorted(result.stdout.splitlines())
    assert lines == [f"[rank {r}] world=3 local={r} devices=2 sum=6" for r in range(3)]


def test_a_rank_that_raises_fails_the_job_and_stops_the_others(tmp_path):
    result, seconds = _launch(tmp_path, 2, "raise")
    assert result.returncode == 1
    assert "[rank 1] RuntimeError: rank 1 gives up" in result.stderr
    assert "exited with status 1; stopping the other ranks" in result.stderr
    assert seconds < 15


def test_a_killed_rank_fails_the_job(tmp_path):
    result, seconds = _launch(tmp_path, 3, "sigkill")
    assert result.returncode == 128 + 9
    assert "rank 1 exited with status 137" in result.stderr
    assert seconds < 15


def test_main_rejects_a_bad_rank_count():
    from mlutools import run as launcher

    with pytest.raises(SystemExit):
        launcher.main(["-n", "0", "script.py"])
