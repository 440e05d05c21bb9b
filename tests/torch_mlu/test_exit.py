"""The exit sequence: torch's autograd device thread finishes what a backward pass left it (under the GIL) before
the interpreter finalizes."""
import time

import torch

from torch_mlu import _exit


def test_after_a_backward_pass_the_autograd_device_thread_is_found_and_settles():
    x = torch.randn(64, 64, device="mlu", requires_grad=True)
    (x.tanh() * x).sum().backward()
    threads = _exit.autograd_threads()
    assert threads and all(path.endswith("/stat") for path in threads)
    start = time.monotonic()
    assert _exit.settle_autograd_threads()
    assert time.monotonic() - start < _exit.SETTLE_SECONDS
    assert x.grad is not None


def test_a_thread_that_never_sleeps_is_waited_for_no_longer_than_the_timeout(monkeypatch):
    x = torch.randn(8, device="mlu", requires_grad=True)
    x.sum().backward()
    monkeypatch.setattr(_exit, "_asleep", lambda path: False)
    start = time.monotonic()
    assert not _exit.settle_autograd_threads(timeout=0.05)
    assert 0.05 <= time.monotonic() - start < 1.0


def test_without_proc_there_is_nothing_to_wait_for(monkeypatch, tmp_path):
    monkeypatch.setattr(_exit, "_TASKS", str(tmp_path / "missing"))
    assert _exit.autograd_threads() == []
    assert _exit.settle_autograd_threads(timeout=10)
