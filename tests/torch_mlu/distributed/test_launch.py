"""Unchanged torch_mlu-style training code (init_process_group, all_reduce, DDP) started by `mlusim run -n 2` (no
backend named: mlu, the accelerator, picks cncl) and by `torchrun --nproc-per-node 2` (backend "cncl"), both at
once: the ranks start torch in parallel."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.child_processes  # rank processes

SCRIPT = Path(__file__).with_name("jobs.py")
ROOT = Path(__file__).parents[3]


def _environment(backend: str) -> dict:
    env = dict(os.environ, MLUSIM_TORCH_FALLBACK="silent", PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
               TEST_BACKEND=backend)
    env.pop("MASTER_PORT", None)
    return env


def _check(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for rank in range(2):
        line = f"rank {rank} of 2: all_reduce [3.0, 3.0, 3.0] ddp weights equal True backend ProcessGroupCNCL"
        assert line in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


def test_mlusim_run_and_torchrun():
    mlusim = [sys.executable, "-m", "mlutools.run", "-n", "2", str(SCRIPT)]
    jobs = {"mlusim run": subprocess.Popen(mlusim, env=_environment(""), cwd=ROOT, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)}
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                str(SCRIPT)]
    jobs["torchrun"] = subprocess.Popen(torchrun, env=_environment("cncl"), cwd=ROOT, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
    try:
        for name, job in jobs.items():
            stdout, stderr = job.communicate(timeout=240)
            _check(subprocess.CompletedProcess(job.args, job.returncode, stdout, stderr))
    finally:
        for job in jobs.values():
            if job.poll() is None:
                job.kill()
