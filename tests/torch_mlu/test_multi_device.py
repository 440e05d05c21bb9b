"""Two simulated devices (MLUSIM_DEVICE_COUNT=2): mlu:1 tensors live in device 1's memory and run on its queues;
the current device and streams per device; copies across devices; mixing devices is an error; autograd on mlu:1;
memory statistics, generators and checkpoints per device."""
import io

import pytest
import torch

import cnrt


def test_tensors_live_on_the_device_they_name(two_devices):
    assert torch.mlu.device_count() == 2 == torch.accelerator.device_count()
    a = torch.ones(4, device="mlu:1")
    assert a.device == torch.device("mlu", 1) and a.get_device() == 1
    assert cnrt.pointerGetAttributes(a.data_ptr()).device == 1
    b = (a * 3 + a).cpu()
    assert b.tolist() == [4.0] * 4
    assert torch.mlu.memory_allocated(1) > 0 and torch.mlu.memory_allocated(0) == 0
    module = torch.nn.Linear(2, 2).to("mlu:1")
    assert module.weight.device == torch.device("mlu:1")
    assert module(torch.ones(3, 2, device="mlu:1")).device == torch.device("mlu:1")


def test_current_device_selects_where_new_tensors_go(two_devices):
    torch.mlu.set_device(1)
    try:
        assert torch.mlu.current_device() == 1 and cnrt.getDevice() == 1
        assert torch.empty(2, device="mlu").device == torch.device("mlu:1")
    finally:
        torch.mlu.set_device(0)
    with torch.mlu.device(1):
        assert torch.zeros(1, device="mlu").device.index == 1
    assert torch.mlu.current_device() == 0
    with torch.mlu.device_of(torch.ones(1, device="mlu:1")):
        assert torch.mlu.current_device() == 1


def test_copies_across_devices(two_devices):
    source = torch.arange(24, dtype=torch.float32, device="mlu:0").reshape(4, 6)
    moved = source.to("mlu:1")
    assert moved.device.index == 1 and torch.equal(moved.cpu(), source.cpu())
    strided = torch.empty(6, 4, device="mlu:1").t()
    strided.copy_(source)  # strided destination on another device
    assert torch.equal(strided.cpu(), source.cpu())
    converted = torch.empty(4, 6, dtype=torch.float16, device="mlu:1")
    converted.copy_(source.t().contiguous().t())
    assert torch.equal(converted.cpu(), source.cpu().half())
    assert torch.equal(moved.to("mlu:0", non_blocking=True).cpu(), source.cpu())


def test_mixing_devices_is_an_error(two_devices):
    a, b = torch.ones(2, device="mlu:0"), torch.ones(2, device="mlu:1")
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*mlu:0 and mlu:1"):
        a + b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.atan2(a, b)  # a CPU-fallback op


def test_streams_and_events_per_device(two_devices, gates):
    s1 = torch.mlu.Stream(device=1)
    assert s1.device_index == 1 and torch.mlu.current_stream(1).stream_id == 0
    with torch.mlu.stream(s1):
        assert torch.mlu.current_stream(1) == s1 and torch.mlu.current_device() == 1
        assert torch.mlu.current_stream(0).stream_id == 0
    x = torch.zeros(10, device="mlu:1")
    torch.mlu.synchronize(1)
    gate = gates(s1)
    with torch.mlu.stream(s1):
        x.fill_(3)
        ready = torch.mlu.Event(device=1)
        ready.record(s1)
    torch.mlu.current_stream(0).wait_event(ready)  # a device-0 stream waits for device 1's work
    with torch.mlu.stream(s1):
        y = x.to("mlu:0")
    assert not ready.query()
    gate.set()
    torch.mlu.synchronize(1)
    torch.mlu.synchronize(0)
    assert y.cpu().tolist() == [3.0] * 10


def test_generators_and_checkpoints_per_device(two_devices):
    torch.manual_seed(3)
    a0, a1 = torch.randn(5, device="mlu:0").cpu(), torch.randn(5, device="mlu:1").cpu()
    assert torch.equal(a0, a1)  # both default generators were seeded with 3, each at offset 0
    assert len(torch.mlu.default_generators) == 2
    g = torch.Generator(device="mlu:1").manual_seed(1)
    assert torch.randn(2, device="mlu:1", generator=g).device.index == 1
    with pytest.raises(RuntimeError, match="generator"):
        torch.randn(2, device="mlu:0", generator=g)
    buffer = io.BytesIO()
    torch.save(torch.arange(3.0, device="mlu:1"), buffer)
    buffer.seek(0)
    assert torch.load(buffer).device == torch.device("mlu:1")
    buffer.seek(0)
    assert torch.load(buffer, map_location={"mlu:1": "mlu:0"}).device == torch.device("mlu:0")


def test_environment_variable_sets_the_device_count_and_autograd_runs_on_mlu_1(fresh_process):
    # In a fresh process: torch's autograd engine sizes its per-device threads at the first backward of a process,
    # so (as on CUDA) the device count must be set before then, here through MLUSIM_DEVICE_COUNT=2.
    assert fresh_process["device_count"] == 2
    assert fresh_process["grad_device"] == "mlu:1" and fresh_process["grad_matches"]
