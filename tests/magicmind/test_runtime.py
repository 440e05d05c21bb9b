"""Engine, Context and run-time tensors: enqueue on cnrt queues, mutable shapes, outputs, device inputs, dumps."""
import threading

import numpy as np
import pytest

import cnrt
import magicmind.python.runtime as mm

from .helpers import build, const, run

rng = np.random.default_rng(1)


def _mlp(batch=-1):
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([batch, 16]))
    w = rng.standard_normal((16, 8)).astype(np.float32)
    h = net.add_i_matmul_node(x, const(net, w)).get_output(0)
    y = net.add_i_activation_node(h, mm.IActivation.GELU).get_output(0)
    net.mark_output(y)
    return net, w


def _gelu(v):
    import math
    return v * 0.5 * (1 + np.vectorize(math.erf)(v / np.sqrt(2)))


def test_mutable_batch_in_one_context_and_a_reused_outputs_list():
    net, w = _mlp()
    model = build(net, ['{"graph_shape_mutable": true}', '{"dim_range": {"0": {"min": [1, 16], "max": [8, 16]}}}'])
    assert model.get_input_dimensions()[0].GetDims() == [-1, 16]
    assert model.get_output_dimensions()[0].GetDims() == [-1, 8]
    context = model.create_i_engine(mm.Model.EngineConfig()).create_i_context()
    queue = mm.Device().create_queue()
    inputs = context.create_inputs()
    outputs = []
    for batch in (8, 3, 1):
        data = rng.standard_normal((batch, 16)).astype(np.float32)
        inputs[0].from_numpy(data)
        assert context.enqueue(inputs, outputs, queue).ok()
        assert queue.sync().ok()
        assert len(outputs) == 1
        np.testing.assert_allclose(outputs[0].asnumpy(), _gelu(data @ w), rtol=1e-4, atol=1e-5)
    inputs[0].from_numpy(np.zeros((9, 16), np.float32))
    status = context.enqueue(inputs, outputs, queue)
    assert status.code() == mm.Code.OUT_OF_RANGE and "input0" in str(status) and "max [8, 16]" in str(status)


def test_fixed_model_refuses_another_shape_and_bad_arguments():
    net, _ = _mlp(4)
    model = build(net)
    context = model.create_i_engine().create_i_context()
    queue = mm.Device().create_queue()
    inputs = context.create_inputs()
    inputs[0].from_numpy(np.zeros((5, 16), np.float32))
    assert "axis 0" in str(context.enqueue(inputs, [], queue))
    assert context.enqueue(inputs, [], "queue").code() == mm.Code.INVALID_ARGUMENT
    assert context.enqueue([], [], queue).code() == mm.Code.INVALID_ARGUMENT
    assert "from_numpy" in str(context.enqueue(context.create_inputs(), [], queue))
    # from_numpy converts to the input's type (float64 -> FLOAT32), as samples rely on
    inputs[0].from_numpy(np.ones((4, 16)))
    assert inputs[0].get_data_type() == mm.DataType.FLOAT32 and context.enqueue(inputs, [], queue).ok()


def test_enqueue_is_ordered_with_other_cnrt_work_on_the_queue():
    """The input is written by a cnrt copy queued on the same queue just before the enqueue: the model sees it."""
    net, w = _mlp(4)
    context = build(net).create_i_engine().create_i_context()
    queue = cnrt.queueCreate()
    data = rng.standard_normal((4, 16)).astype(np.float32)
    device = cnrt.malloc(data.nbytes)
    slow = np.zeros(1)

    def hold(_):
        threading.Event().wait(0.05)  # the copy below cannot run before this: in-order queue
        slow[0] = 1
    cnrt.invokeHostFunc(queue, hold)
    cnrt.memcpyAsync(device, data, data.nbytes, queue, cnrt.cnrtMemcpyHostToDev)
    inputs = context.create_inputs()
    assert inputs[0].set_data(device).ok() and inputs[0].set_dimensions(mm.Dims([4, 16])).ok()
    outputs = []
    assert context.enqueue(inputs, outputs, queue).ok()
    cnrt.queueSync(queue)
    np.testing.assert_allclose(outputs[0].asnumpy(), _gelu(data @ w), rtol=1e-4, atol=1e-5)
    cnrt.free(device)


def test_several_contexts_on_several_queues_at_once():
    net, w = _mlp()
    model = build(net, '{"graph_shape_mutable": true}')
    engine = model.create_i_engine()
    results, errors = {}, []

    def worker(k):
        try:
            data = np.full((k + 1, 16), k, np.float32)
            out = run(model, [data], engine.create_i_context())[0]
            results[k] = (out, _gelu(data @ w))
        except Exception as error:  # noqa: BLE001
            errors.append(error)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out, ref in results.values():
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_outputs_are_deterministic_and_tensors_move_to_the_device():
    net, _ = _mlp(2)
    model = build(net)
    context = model.create_i_engine().create_i_context()
    dev = mm.Device()
    assert dev.active().ok()
    queue = dev.create_queue()
    inputs = context.create_inputs()
    inputs[0].from_numpy(rng.standard_normal((2, 16)))
    assert inputs[0].to(dev).ok() and inputs[0].get_memory_location() == mm.TensorLocation.kMLU
    first, second = [], []
    assert context.enqueue(inputs, first, queue).ok() and context.enqueue(inputs, second, queue).ok()
    assert queue.sync().ok()
    assert first[0].asnumpy().tobytes() == second[0].asnumpy().tobytes()
    with pytest.raises(mm.MagicMindError):
        mm.Device(-1)


def test_debug_dump_writes_intermediates(tmp_path):
    """A fused layer's intermediates do not exist: the dump holds the layer's output; with fusion off (the debug
    switch real programs use for this) every node's output is dumped."""
    net, w = _mlp(2)
    data = rng.standard_normal((2, 16)).astype(np.float32)
    for config, expected in ((None, ["gelu.npy"]), ('{"debug_config": {"fusion_enable": false}}',
                                                    ["gelu.npy", "matmul.npy"])):
        folder = tmp_path / ("fused" if config is None else "unfused")
        context = build(net, config).create_i_engine().create_i_context()
        assert context.set_context_dump_info(mm.Context.ContextDumpInfo(path=str(folder), dump_mode=2)).ok()
        out = run(context.model, [data], context)[0]
        assert sorted(p.name for p in folder.iterdir()) == expected
        np.testing.assert_array_equal(np.load(folder / "gelu.npy"), out)
    np.testing.assert_allclose(np.load(tmp_path / "unfused" / "matmul.npy"), data @ w, rtol=1e-5, atol=1e-5)
    assert context.set_context_dump_info(mm.Context.ContextDumpInfo(path="", dump_mode=1)).code() == \
        mm.Code.INVALID_ARGUMENT


def test_system_and_device():
    with mm.System() as system:
        assert system.device_count() == cnrt.getDeviceCount() >= 1
        dev = mm.Device()
        dev.id = 0
        assert dev.active().ok()
        queue = dev.create_queue()
    assert queue.sync().ok()  # usable after the block
    dev.id = 10_000
    assert dev.active().code() == mm.Code.INVALID_ARGUMENT
