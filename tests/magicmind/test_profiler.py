"""mm.Profiler: every layer of every enqueue between start and stop, with its host time and modelled MLU time (the
queue's modelled clock is their sum), the trace under the log directory in TensorBoard's layout and as mlusim's
Perfetto JSON, the tracer levels, and the calls' errors."""
import gzip
import json

import numpy as np
import pytest

import magicmind.python.runtime as mm
from mlusim import trace

from .helpers import build, const

rng = np.random.default_rng(3)


def _model():
    """A fused GEMM + GELU layer (a kernel of our own) and a softmax (a CNNL call)."""
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([8, 32]))
    h = net.add_i_matmul_node(x, const(net, rng.standard_normal((32, 16)).astype(np.float32))).get_output(0)
    h = net.add_i_activation_node(h, mm.IActivation.GELU).get_output(0)
    net.mark_output(net.add_i_softmax_node(h, 1).get_output(0))
    return build(net, name="profiled")


def _enqueue(context, queue, inputs):
    outputs = []
    assert context.enqueue(inputs, outputs, queue).ok()
    assert queue.sync().ok()


def _ready():
    """A model, context, queue and inputs after a first (unprofiled) run. A helper, not a fixture: the objects die
    with the test, inside the sanitizer's leak scope (a fixture's value outlives it)."""
    model = _model()
    context = model.create_i_engine().create_i_context()
    queue = mm.Device().create_queue()
    inputs = context.create_inputs()
    assert inputs[0].from_numpy(rng.standard_normal((8, 32)).astype(np.float32)).ok()
    _enqueue(context, queue, inputs)  # the first run makes the layers (not profiled)
    return model, context, queue, inputs


def test_every_layer_of_every_step_with_host_and_modelled_time(tmp_path):
    model, context, queue, inputs = _ready()
    profiler = mm.Profiler(mm.ProfilerOptions(mm.HostTracerLevel.kCritical, mm.DeviceTracerLevel.kOn), str(tmp_path))
    with trace.recording() as everything:
        assert profiler.start().ok()
        for step in range(3):
            assert profiler.step_begin(step).ok()
            _enqueue(context, queue, inputs)
            assert profiler.step_end().ok()
        assert profiler.stop().ok()
    layers = profiler.layers()
    assert [row["op"] for row in layers] == ["matmul", "softmax"]
    assert all(row["model"] == "profiled" and row["calls"] == 3 for row in layers)
    assert all(row["mlu_us"] > 0 and row["host_ms"] > 0 for row in layers)
    # every command the queue ran besides the input copies belongs to a layer, with its modelled time
    computed = [r for r in everything.records if r.kind != "memcpy"]
    assert len(computed) == sum(row["commands"] for row in layers) == 6
    assert sum(row["mlu_us"] for row in layers) == pytest.approx(sum(r.model_us for r in computed), rel=1e-12)
    assert sorted({r[0].info["step"] for r in profiler.records}) == [0, 1, 2]
    _enqueue(context, queue, inputs)  # after stop: not recorded
    assert sum(row["commands"] for row in profiler.layers()) == sum(row["commands"] for row in layers)


def test_the_trace_is_written_under_the_log_directory_and_exported(tmp_path):
    _, context, queue, inputs = _ready()
    profiler = mm.Profiler(mm.ProfilerOptions(), tmp_path / "logs")
    assert profiler.start().ok()
    _enqueue(context, queue, inputs)
    assert profiler.stop().ok()
    (written,) = (tmp_path / "logs" / "plugins" / "profile").glob("*/*.trace.json.gz")
    assert written == profiler.trace_file
    with gzip.open(written, "rt") as source:
        document = json.load(source)
    layer_events = [e for e in document["traceEvents"] if e["ph"] == "X"]
    names = {e["name"] for e in layer_events}
    assert len(names) == 2 and all(n.startswith("profiled/") for n in names)
    assert len({e["pid"] for e in layer_events}) == 2  # the host and the modelled timeline
    assert profiler.export_chrome_trace(tmp_path / "trace.json").ok()
    assert json.loads((tmp_path / "trace.json").read_text())["traceEvents"] == document["traceEvents"]


@pytest.mark.parametrize("host, device, timelines", [
    (mm.HostTracerLevel.kNone, mm.DeviceTracerLevel.kOn, {"modelled"}),
    (mm.HostTracerLevel.kCritical, mm.DeviceTracerLevel.kOff, {"host"}),
])
def test_tracer_levels_choose_the_timelines(tmp_path, host, device, timelines):
    _, context, queue, inputs = _ready()
    profiler = mm.Profiler(mm.ProfilerOptions(host, device), tmp_path)
    assert profiler.start().ok()
    _enqueue(context, queue, inputs)
    assert profiler.stop().ok()
    events = profiler.chrome_trace()["traceEvents"]
    kept = {("host" if "host" in e["args"]["name"] else "modelled") for e in events if e["name"] == "process_name"}
    assert kept == timelines
    assert [e for e in events if e["ph"] == "X"]


def test_the_calls_refuse_the_wrong_order_and_bad_arguments(tmp_path):
    profiler = mm.Profiler(mm.ProfilerOptions(), tmp_path)
    assert profiler.stop().code() == mm.Code.FAILED_PRECONDITION
    assert profiler.step_begin(0).code() == mm.Code.FAILED_PRECONDITION
    assert profiler.start().ok()
    try:
        assert profiler.start().code() == mm.Code.FAILED_PRECONDITION
        assert mm.Profiler(mm.ProfilerOptions(), tmp_path).start().code() == mm.Code.FAILED_PRECONDITION
        assert profiler.step_end().code() == mm.Code.FAILED_PRECONDITION
        for bad in (-1, 1.5, True, "1"):
            status = profiler.step_begin(bad)
            assert status.code() == mm.Code.INVALID_ARGUMENT and "step_id" in str(status)
        assert profiler.step_begin(4).ok()
        assert profiler.step_begin(5).code() == mm.Code.FAILED_PRECONDITION
    finally:
        assert profiler.stop().ok()
    with pytest.raises(mm.MagicMindError, match="ProfilerOptions"):
        mm.Profiler("kOn", tmp_path)
    with pytest.raises(mm.MagicMindError, match="output_path"):
        mm.Profiler(mm.ProfilerOptions(), 42)
    with pytest.raises(mm.MagicMindError, match="host_tracer_level"):
        mm.ProfilerOptions("kLoud")
