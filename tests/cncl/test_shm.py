"""The clique segments' names in /dev/shm: made once, never taken from another creator, gone after unlink or the
creator's death (the kill tests are in test_robustness.py)."""
import os
import subprocess
import sys
import time
import uuid

import pytest

from cncl import shm

pytestmark = pytest.mark.skipif(not os.path.isdir(shm.SHM_DIRECTORY), reason="no /dev/shm")


def _name() -> str:
    return f"mlusim-test-{uuid.uuid4().hex}"


def _gone_within(path: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)
    return not os.path.exists(path)


def test_a_taken_name_is_refused_and_the_other_creators_segment_stays():
    name = _name()
    path = os.path.join(shm.SHM_DIRECTORY, name)
    memory = shm.create(name, 4096)
    try:
        with pytest.raises(FileExistsError):
            shm.create(name, 4096)
        time.sleep(0.3)  # the refused call's guard has had time to act: it must have kept the name
        assert os.path.exists(path)
        memory[:4] = b"mine"
        again = shm.attach(name)
        assert again is not None and again[:4] == b"mine"
        again.close()
    finally:
        shm.unlink(name)
        memory.close()
    assert _gone_within(path, 5)


def test_a_creator_that_exits_without_unlinking_leaves_nothing():
    name = _name()
    code = f"from cncl import shm; shm.create({name!r}, 4096); print('made', flush=True); import os; os._exit(0)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "made", result.stderr
    assert _gone_within(os.path.join(shm.SHM_DIRECTORY, name), 5)


def test_a_creator_killed_while_starting_its_guard_leaves_no_name():
    """The guard is started before the name is made: a creator killed at that moment has made nothing yet."""
    name = _name()
    code = ("import os, signal, subprocess\n"
            "from cncl import shm\n"
            "subprocess.Popen = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
            f"shm.create({name!r}, 4096)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == -9, result.stderr
    assert _gone_within(os.path.join(shm.SHM_DIRECTORY, name), 1)


def test_the_name_stays_while_its_creator_lives_whatever_its_pipe_descriptor():
    """A process with many files open gets a guard pipe above fd 9, which sh cannot redirect from by number: the
    guard must still wait (it once removed the name at once in such processes)."""
    name = _name()
    path = os.path.join(shm.SHM_DIRECTORY, name)
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(16)]
    try:
        memory = shm.create(name, 4096)
        time.sleep(0.3)
        assert os.path.exists(path)
        shm.unlink(name)
        memory.close()
    finally:
        for fd in held:
            os.close(fd)
    assert _gone_within(path, 5)
