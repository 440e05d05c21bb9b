"""Kernels that never end: the watchdog's time limit and Ctrl-C stop them with an error naming the kernel, and the
queue and device stay usable; a kernel stuck in code that never polls is given up instead of hanging the sync (its
queue is lost when a worker thread ran it)."""
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import cnrt

from ..conftest import from_device
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
    """MLUSIM_BANG_TIME_LIMIT, as the settings give it (mlusim.config)."""
    from mlusim import config
    monkeypatch.setattr(sleepy, "time_limit", "default")
    with config.overridden(MLUSIM_BANG_TIME_LIMIT="7.5"):
        assert sleepy.time_limit == 7.5
    with config.overridden(MLUSIM_BANG_TIME_LIMIT="none"):
        assert sleepy.time_limit is None
    with config.overridden(MLUSIM_BANG_TIME_LIMIT=None):
        assert sleepy.time_limit == 120
    sleepy.time_limit = None
    assert sleepy.time_limit is None
    with pytest.raises(ValueError):
        sleepy.time_limit = -1


_SCRIPT = """
import signal, sys, time
# Python's own Ctrl-C handling, which a user's terminal gives: a parent that ignores SIGINT (a job started in the
# background by a shell without job control, as a CI runner may start the tests) passes that on, and then no
# KeyboardInterrupt ever comes
signal.signal(signal.SIGINT, signal.default_int_handler)
import cnrt
from mlusim import device as devices
from tests.mlusim.bang.robust_kernels import endless_copies, endless_in_plain_numba

def attempt(label, call):
    began = time.monotonic()
    try:
        call()
        print(label, "returned normally", flush=True)
    except KeyboardInterrupt as interrupt:
        print(label, f"KeyboardInterrupt after {time.monotonic() - began:.1f} s: {interrupt}", flush=True)
    except cnrt.CnrtError as error:
        print(label, f"error after {time.monotonic() - began:.1f} s: {error}", flush=True)

def usable(label, queue, pointer):
    for step in ("sync", "memset"):
        try:
            if step == "sync":
                cnrt.queueSync(queue)
            else:
                fresh = cnrt.queueCreate()
                cnrt.memsetAsync(pointer, 0, 1024, fresh)
                cnrt.queueSync(fresh)
            print(label, step, "ok", flush=True)
        except cnrt.CnrtError as error:
            print(label, step, "error:", error, flush=True)

endless_copies.time_limit = None
dim = cnrt.cnrtDim3_t(4, 1, 1)
# 1. Ctrl-C while the main thread waits in queueSync for a queued endless kernel
queue, pointer = cnrt.queueCreate(), cnrt.malloc(1024)
endless_copies[dim, cnrt.cnrtFuncTypeUnion1, queue](pointer, 1)
print("ready queued", flush=True)
attempt("queued", lambda: cnrt.queueSync(queue))
usable("queued", queue, pointer)
# 2. Ctrl-C while the main thread runs the kernel itself (blocking mode), compiled before the interrupt
devices.configure(blocking=True)
queue, pointer = cnrt.queueCreate(), cnrt.malloc(1024)
from mlusim import launch
endless_copies.prepare(devices.get(0), launch.task_layout(launch.dims(dim), 4, devices.get(0).spec), (pointer, 1), queue)
print("ready blocking", flush=True)
attempt("blocking", lambda: endless_copies[dim, cnrt.cnrtFuncTypeUnion1, queue](pointer, 1))
usable("blocking", queue, pointer)
# 3. a kernel whose endless loop never polls: given up after its time limit and the grace (last: its thread spins on)
devices.configure(blocking=False)
queue, pointer = cnrt.queueCreate(), cnrt.malloc(1024)
endless_in_plain_numba.time_limit = 0.5
endless_in_plain_numba[dim, cnrt.cnrtFuncTypeUnion1, queue](pointer, 1)
attempt("stuck", lambda: cnrt.queueSync(queue))
usable("stuck", queue, pointer)
print("done", flush=True)
"""


#: seconds the three scenarios may take in all (about 5 when the kernels are compiled, 15 with cold caches)
SCENARIO_DEADLINE = 120


@pytest.fixture(scope="module")
def endless_scenarios() -> str:
    """The output of one process that runs the three scenarios of _SCRIPT, Ctrl-C sent 0.4 s after each 'ready'.
    A child that hangs is not waited for: after SCENARIO_DEADLINE it is made to print every thread's stack
    (faulthandler on SIGABRT) and the test fails with its output, instead of the run's timeout ending every test."""
    process = subprocess.Popen([sys.executable, "-X", "faulthandler", "-c", _SCRIPT], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=__file__.rsplit("/tests/", 1)[0])
    lines, finished = [], threading.Event()

    def follow() -> None:
        for line in process.stdout:
            lines.append(line)
            if line.startswith("ready"):
                time.sleep(0.4)
                process.send_signal(signal.SIGINT)
            if line.startswith("done"):
                break
        finished.set()

    threading.Thread(target=follow, daemon=True).start()
    try:
        if not finished.wait(SCENARIO_DEADLINE):
            process.send_signal(signal.SIGABRT)
            finished.wait(10)
            pytest.fail(f"the scenarios did not finish within {SCENARIO_DEADLINE} s:\n" + "".join(lines))
        process.wait(60)
    finally:
        process.kill()
    output = "".join(lines)
    assert process.returncode in (0, -9) and "done" in output, output
    return output


def _line(output: str, label: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(label + " ") and "after" in line)


@pytest.mark.parametrize("mode", ["queued", "blocking"])
def test_ctrl_c_stops_an_endless_kernel_with_a_message_naming_it(endless_scenarios, mode):
    line = _line(endless_scenarios, mode)
    assert "KeyboardInterrupt after 1." in line or "KeyboardInterrupt after 0." in line, endless_scenarios
    assert "endless_copies" in line, endless_scenarios
    assert f"{mode} memset ok" in endless_scenarios, endless_scenarios


def test_a_kernel_that_never_polls_is_given_up(endless_scenarios):
    """Its host thread is left behind; the sync reports it; the device goes on (a queue whose worker thread it was
    is lost, see test_liveness; here the main thread had handed the tasks to a helper, so the queue goes on too)."""
    line = _line(endless_scenarios, "stuck")
    assert "error after" in line and "endless_in_plain_numba" in line and "did not stop" in line, line
    assert "stuck memset ok" in endless_scenarios, endless_scenarios
