"""The torch_mlu tests: skipped without torch; each test gets a fresh simulated machine (torch_mlu follows the
rebuilt device table, so the caching allocator and the streams start empty), and the default machine back after."""
import json
import os
import subprocess
import sys
import threading

import pytest

torch = pytest.importorskip("torch")
import torch_mlu  # noqa: E402,F401  (builds the C++ part once per user and torch version, then loads it from disk)

import cnrt  # noqa: E402
from mlusim import device as devices  # noqa: E402

MEMORY = 1 << 30


@pytest.fixture(autouse=True)
def fresh_machine():
    """A fresh machine; CPU-fallback warnings off (test_fallback turns them on where they are the subject)."""
    devices.configure(memory=MEMORY)
    torch_mlu.fallback.reset()
    with torch_mlu.fallback.mode("silent"):
        yield
    torch.mlu.synchronize()
    devices.configure()


@pytest.fixture
def two_devices():
    """A machine with two simulated devices."""
    devices.configure(memory=MEMORY, device_count=2)
    yield
    for index in range(2):
        torch.mlu.synchronize(index)


@pytest.fixture
def gates():
    """gates(stream=None) holds a stream's queue (default: the current stream) with a host function until the
    returned event is set; all are set when the test ends, whatever happened, so nothing waits on them."""
    made = []

    def hold(stream=None):
        gate = threading.Event()
        queue = (stream or torch.mlu.current_stream()).mlu_stream
        cnrt.invokeHostFunc(queue, lambda _: gate.wait(60), None)
        made.append(gate)
        return gate

    yield hold
    for gate in made:
        gate.set()


@pytest.fixture(scope="session")
def fresh_process():
    """The facts tests/torch_mlu/fresh_process.py prints, from one run in a fresh interpreter with two devices and
    the fallback in error mode (one process for the whole session: starting torch costs seconds)."""
    env = dict(os.environ, MLUSIM_DEVICE_COUNT="2", MLUSIM_TORCH_FALLBACK="error", TORCH_DEVICE_BACKEND_AUTOLOAD="1")
    script = os.path.join(os.path.dirname(__file__), "fresh_process.py")
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, timeout=240)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])
