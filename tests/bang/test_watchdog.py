"""Kernels that never end: the watchdog's time limit and Ctrl-C stop them with an error naming the kernel, and the
queue and device stay usable; a kernel stuck in code that never polls is given up instead of hanging the sync."""
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cnrt

from .conftest import from_device
from .robust_kernels import endless_arithmetic, endless_copies, sleepy


@pytest.mark.parametrize("kernel", [endless_copies, endless_arithmetic], ids=["intrinsic loop", "plain loop"])
def test_time_limit_stops_an_endless_kernel_and_the_queue_goes_on(queue, kernel):
    pointer = cnrt.malloc(1024)
    kernel[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](pointer, 1)
    began = time.monotonic()
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    waited = time.monotonic() - began
    text = str(error.value)
    assert error.value.code == cnrt.cnrtErrorKernelTrap
    assert f"kernel '{kernel.__name__}'" in text and "time limit of 0.5 s" in text, text
    assert waited < 5, f"the watchdog took {waited:.1f} s"
    cnrt.memsetAsync(pointer, 0, 1024, queue)  # the queue runs again
    cnrt.queueSync(queue)


def test_a_slow_kernel_within_its_limit_is_not_stopped(queue, monkeypatch):
    monkeypatch.setattr(sleepy, "time_limit", 30)
    pointer = cnrt.malloc(64)
    sleepy[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](pointer, 3_000_000)
    cnrt.queueSync(queue)
    assert from_device(pointer, 1, np.float32)[0] == sum(range(3_000_000)) % 7


def test_time_limit_settings(monkeypatch):
    monkeypatch.setattr(sleepy, "time_limit", "default")
    monkeypatch.setenv("MLUSIM_BANG_TIME_LIMIT", "7.5")
    assert sleepy.time_limit == 7.5
    monkeypatch.setenv("MLUSIM_BANG_TIME_LIMIT", "none")
    assert sleepy.time_limit is None
    monkeypatch.delenv("MLUSIM_BANG_TIME_LIMIT")
    assert sleepy.time_limit == 120
    sleepy.time_limit = None
    assert sleepy.time_limit is None
    with pytest.raises(ValueError):
        sleepy.time_limit = -1


_SCRIPT = """
import sys, time
import cnrt
from mlusim import device as devices
from tests.bang.robust_kernels import {kernel}
{kernel}.time_limit = {limit}
if "{mode}" == "blocking":
    devices.configure(blocking=True)
queue = cnrt.queueCreate()
pointer = cnrt.malloc(1024)
launch = lambda: {kernel}[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](pointer, 1)
if "{mode}" != "blocking":
    launch()
else:  # compile before saying ready: the interrupt is meant for the running kernel, not for the compiler
    {kernel}.__mlusim_prepare__(devices.get(0), cnrt.cnrtDim3_t(4, 1, 1), 4, (pointer, 1), queue)
print("ready", flush=True)
began = time.monotonic()
try:
    launch() if "{mode}" == "blocking" else cnrt.queueSync(queue)
    print("returned normally")
except KeyboardInterrupt as interrupt:
    print(f"KeyboardInterrupt after {{time.monotonic() - began:.1f}} s: {{interrupt}}")
except cnrt.CnrtError as error:
    print(f"error after {{time.monotonic() - began:.1f}} s: {{error}}")
for step in ("sync", "memset"):
    try:
        if step == "sync":
            cnrt.queueSync(queue)
        else:
            fresh = cnrt.queueCreate()
            cnrt.memsetAsync(pointer, 0, 1024, fresh)
            cnrt.queueSync(fresh)
        print(step, "ok")
    except cnrt.CnrtError as error:
        print(step, "error:", error)
"""


def _run(kernel: str, mode: str, limit, interrupt_after=None) -> str:
    process = subprocess.Popen([sys.executable, "-c", _SCRIPT.format(kernel=kernel, mode=mode, limit=limit)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               cwd=__file__.rsplit("/tests/", 1)[0])
    try:
        line = process.stdout.readline()
        assert line.strip() == "ready", line + process.stdout.read()
        if interrupt_after is not None:
            time.sleep(interrupt_after)
            process.send_signal(signal.SIGINT)
        out, _ = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 0, out
    return out


@pytest.mark.parametrize("mode", ["queued", "blocking"])
def test_ctrl_c_stops_an_endless_kernel_with_a_message_naming_it(mode):
    out = _run("endless_copies", mode, None, interrupt_after=1.0)
    assert "KeyboardInterrupt after 1." in out or "KeyboardInterrupt after 0." in out, out
    assert "endless_copies" in out.split("KeyboardInterrupt", 1)[1].splitlines()[0], out
    assert "memset ok" in out, out


def test_a_kernel_that_never_polls_is_given_up_and_its_queue_is_lost():
    out = _run("endless_in_plain_numba", "queued", 0.5)
    assert "error after" in out and "endless_in_plain_numba" in out and "did not stop" in out, out
    assert "sync error:" not in out or "lost" in out, out
    assert "memset ok" in out, out  # other queues of the device work
