"""torch.profiler with the MLU (torch_mlu/_profiler.py, csrc/profiler.cpp): each op's device work with its
modelled MLU time, device tracks in the Chrome trace, memory, schedules, TensorBoard's handler, the legacy
profiler's use_device="mlu"."""
import json

import pytest
import torch
from torch import nn
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

from mlusim.observers import OBSERVERS
from torch_mlu import _profiler, _state

DEVICE_ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


def resnet18(width=8, classes=10):
    """ResNet-18's layout (four stages of two basic blocks) at a small width, for 32x32 inputs."""
    layers, cin = [nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()], width
    for stage, cout in enumerate((width, 2 * width, 4 * width, 8 * width)):
        layers += [BasicBlock(cin, cout, 1 if stage == 0 else 2), BasicBlock(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes))


def default_queue():
    return _state.runtime.streams.queue(0, 0)


def device_events(prof):
    return [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


@pytest.fixture
def training_step():
    torch.manual_seed(0)
    model = resnet18().mlu()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 3, 32, 32).mlu()
    target = torch.tensor([1, 7]).mlu()

    def step():
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), target).backward()
        optimizer.step()
        torch.mlu.synchronize()

    step()  # compiled and warm: the profiled step is a steady one
    return step


def test_a_resnet18_step_lists_its_layers_with_modelled_mlu_time(training_step):
    queue = default_queue()
    clock_before = queue.model_clock_us
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        training_step()
    modelled = queue.model_clock_us - clock_before
    averages = {e.key: e for e in prof.key_averages()}
    for op in ("aten::convolution_overrideable", "aten::native_batch_norm", "aten::relu",
               "aten::convolution_backward_overrideable", "aten::native_batch_norm_backward"):
        assert averages[op].self_device_time_total > 0, op
        assert averages[op].self_mlu_time_total == averages[op].self_device_time_total
    kernels = device_events(prof)
    assert {"cnnlConvolutionForward", "cnnlBatchNormForwardTraining", "cnnlConvolutionBackwardFilter"} <= \
        {e.name for e in kernels}
    # every device activity is its command's modelled time, and together they are the queue's modelled clock
    assert sum(e.time_range.elapsed_us() for e in kernels) == pytest.approx(modelled, rel=1e-4, abs=0.01)
    table = prof.key_averages().table(sort_by="self_mlu_time_total", row_limit=10)
    assert "Self MLU" in table and "MLU total" in table
    first_row = table.splitlines()[3]
    assert first_row.split()[0] in averages and averages[first_row.split()[0]].self_device_time_total == \
        max(e.self_device_time_total for e in averages.values())


def test_device_work_is_linked_to_the_op_that_queued_it():
    a = torch.randn(64, 64).mlu()
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        (a @ a).relu_()
        torch.mlu.synchronize()
    by_op = {e.name: e for e in prof.events() if e.device_type == DeviceType.CPU}
    matmul, relu = by_op["aten::mm"], by_op["aten::relu_"]
    assert [k.name for k in matmul.kernels] == ["cnnlMatMul"]
    assert [k.name for k in relu.kernels] == ["cnnlActivationForward"]
    assert matmul.self_device_time_total > 0 and relu.self_device_time_total > 0


def test_the_chrome_trace_puts_device_work_on_its_queue_track(tmp_path):
    a = torch.randn(128, 128).mlu()
    side = torch.mlu.Stream()
    with profile(activities=DEVICE_ACTIVITIES) as prof:
        b = a * a
        with torch.mlu.stream(side):
            c = a + 1
        d = b.cpu()
        torch.mlu.synchronize()
    assert torch.equal(d, (a * a).cpu()) and c.shape == a.shape
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    ops = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op"}
    assert {e["name"] for e in device} >= {"cnnlOpTensor", "cnrtMemcpyAsync"}
    assert {e["cat"] for e in device} >= {"kernel", "gpu_memcpy"}
    tracks = {e["tid"] for e in device}
    assert tracks == {default_queue().ident, _state.runtime.streams.queue(0, side.stream_id).ident}
    assert all(e["pid"] == 0 for e in device)
    for activity in device:
        op = ops[activity["args"]["External id"]]
        assert activity["ts"] >= op["ts"]  # nothing runs before the op queued it
        assert activity["args"]["modelled_us"] == pytest.approx(activity["dur"], abs=1e-3)
    for track in tracks:
        spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in device if e["tid"] == track)
        assert all(end <= next_start + 1e-3 for (_, end), (next_start, _) in zip(spans, spans[1:]))
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"
             and e.get("pid") == 0}
    assert "default queue" in names


def test_record_shapes_and_profile_memory():
    a = torch.randn(32, 48).mlu()
    with profile(activities=DEVICE_ACTIVITIES, record_shapes=True, profile_memory=True) as prof:
        b = torch.mm(a, a.t())
        torch.mlu.synchronize()
    averages = prof.key_averages(group_by_input_shape=True)
    mm = next(e for e in averages if e.key == "aten::mm")
    assert mm.input_shapes[:2] == [[32, 48], [48, 32]]
    assert mm.device_memory_usage == b.numel() * 4  # the output, allocated by the caching allocator
    empty = [e for e in prof.key_averages() if e.key == "aten::empty" or e.key == "aten::empty_strided"]
    assert sum(e.self_device_memory_usage for e in empty) >= b.numel() * 4
    assert "MLU Mem" in prof.key_averages().table(sort_by="self_mlu_memory_usage")


def test_a_schedule_records_only_its_active_steps(tmp_path):
    start = torch.randn(16, 16)
    a = start.mlu()
    seen = []

    def ready(prof):
        seen.append(len(device_events(prof)))

    with profile(activities=DEVICE_ACTIVITIES, schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=ready) as prof:
        for _ in range(8):
            a.add_(1)
            torch.mlu.synchronize()
            prof.step()
    assert seen == [2, 2]
    torch.testing.assert_close(a.cpu(), start + 8)


def test_tensorboards_trace_handler_writes_a_trace_with_device_work(tmp_path):
    a = torch.randn(16, 16).mlu()
    with profile(activities=DEVICE_ACTIVITIES, schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="rank0")) as prof:
        for _ in range(2):
            (a * a).sum()
            torch.mlu.synchronize()
            prof.step()
    written = list(tmp_path.glob("rank0.*.pt.trace.json"))
    assert len(written) == 1
    events = json.loads(written[0].read_text())["traceEvents"]
    assert any(e.get("cat") == "kernel" and e.get("name") == "cnnlOpTensor" for e in events)


def test_the_cpu_only_profiler_does_not_watch_the_queues():
    a = torch.randn(8, 8).mlu()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        assert not OBSERVERS.observing(_profiler.COLLECTOR)
        (a + a).cpu()
    assert device_events(prof) == []
    assert any(e.name == "aten::add" for e in prof.events())


def test_the_collector_stops_watching_when_the_session_ends():
    a = torch.randn(8, 8).mlu()
    for _ in range(2):  # a second session starts clean
        with profile(activities=DEVICE_ACTIVITIES) as prof:
            assert OBSERVERS.observing(_profiler.COLLECTOR)
            a.mul_(1)
            torch.mlu.synchronize()
        assert not OBSERVERS.observing(_profiler.COLLECTOR)
        assert [e.name for e in device_events(prof)] == ["cnnlTransform_v2"]  # a * scalar


def test_the_legacy_profiler_times_each_op_on_the_device():
    a = torch.randn(256, 256).mlu()
    (a @ a).relu()
    torch.mlu.synchronize()
    queue = default_queue()
    with torch.autograd.profiler.profile(use_device="mlu") as prof:
        before = queue.model_clock_us
        b = a @ a
        torch.mlu.synchronize()
        matmul_us = queue.model_clock_us - before
        b.relu_()
    mm = next(e for e in prof.key_averages() if e.key == "aten::mm")
    assert mm.self_mlu_time_total == int(matmul_us) > 0  # torch's legacy events keep whole µs
    assert "Self MLU" in prof.key_averages().table(sort_by="self_mlu_time_total")


def test_mlu_names_of_the_device_columns():
    for name, target in _profiler._MLU_ALIASES.items():
        event = torch.autograd.profiler_util.FunctionEventAvg()
        assert getattr(event, name) == getattr(event, target)


def test_every_devices_work_is_recorded(two_devices):
    x0, x1 = torch.randn(10, 10).to("mlu:0"), torch.randn(10, 10).to("mlu:1")
    with profile(activities=DEVICE_ACTIVITIES) as prof:  # no synchronize: the session waits for its work
        x0 * 2 + 4
        x1 * 2 + 4
    assert {e.device_index for e in device_events(prof)} == {0, 1}


def test_cambricons_spellings_of_the_legacy_profiler():
    assert torch.is_mlu_available()
    a = torch.randn(10, 10).mlu()
    with torch.autograd.profiler.profile(use_mlu=True, use_kineto=True) as prof:
        a * 2 + 4
        torch.mlu.synchronize()
    names = {e.name for e in prof.function_events}
    assert {"aten::mul", "aten::add", "cnnlTransform_v2"} <= names
