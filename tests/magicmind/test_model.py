"""Model: info getters, serialization (versioned, checksummed), and a deserialized model in a fresh process."""
import subprocess
import sys

import numpy as np
import pytest

import magicmind.python.runtime as mm

from .helpers import build, const, run


def _model():
    rng = np.random.default_rng(3)
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 6]))
    w = rng.standard_normal((6, 3)).astype(np.float32)
    y = net.add_i_activation_node(net.add_i_matmul_node(x, const(net, w)).get_output(0), mm.IActivation.TANH)
    net.mark_output(y.get_output(0))
    return build(net, name="tiny"), w


def test_info_getters():
    model, _ = _model()
    assert model.get_input_num() == 1 and model.get_output_num() == 1
    assert model.get_input_names() == ["input0"] and model.get_output_data_types() == [mm.DataType.FLOAT32]
    assert model.get_input_dimensions()[0].GetDims() == [2, 6] and model.get_output_dimension(0).GetDims() == [2, 3]
    empty = mm.Model()
    try:
        empty.get_input_num()
    except mm.MagicMindError as error:
        assert error.code == mm.Code.FAILED_PRECONDITION


def test_round_trip_in_a_fresh_process_is_bit_identical(tmp_path):
    model, _ = _model()
    path = tmp_path / "tiny.mm"
    assert model.serialize_to_file(str(path)).ok()
    data = np.linspace(-2, 2, 12, dtype=np.float32).reshape(2, 6)
    here = run(model, [data])[0]
    np.save(tmp_path / "x.npy", data)
    script = f"""
import numpy as np, magicmind.python.runtime as mm
m = mm.Model(); assert m.deserialize_from_file({str(path)!r}).ok()
ctx = m.create_i_engine().create_i_context(); q = mm.Device().create_queue()
ins = ctx.create_inputs(); ins[0].from_numpy(np.load({str(tmp_path / 'x.npy')!r})); outs = []
assert ctx.enqueue(ins, outs, q).ok() and q.sync().ok()
np.save({str(tmp_path / 'y.npy')!r}, outs[0].asnumpy())
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=240)
    assert np.load(tmp_path / "y.npy").tobytes() == here.tobytes()
    again = mm.Model()
    assert again.deserialize_from_buffer(model.serialize_to_buffer()).ok()
    assert again.get_name() == "tiny" and again.get_output_names() == model.get_output_names()


def test_truncated_corrupt_and_foreign_files_are_clear_errors(tmp_path):
    model, _ = _model()
    data = model.serialize_to_buffer()
    cases = {"truncated": data[:len(data) // 2], "short": data[:10], "foreign": b"\x7fELF" + data[4:],
             "corrupt": data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:], "empty": b""}
    expected = {"truncated": "truncated", "short": "shorter", "foreign": "magic", "corrupt": "checksum",
                "empty": "shorter"}
    for name, blob in cases.items():
        path = tmp_path / name
        path.write_bytes(blob)
        status = mm.Model().deserialize_from_file(str(path))
        assert not status.ok() and expected[name] in str(status), (name, status)
    assert mm.Model().deserialize_from_file(str(tmp_path / "missing")).code() == mm.Code.NOT_FOUND
    assert mm.Model().deserialize_from_buffer(12).code() == mm.Code.INVALID_ARGUMENT


def test_the_model_reports_its_peak_intermediate_memory():
    """Intermediates share the arena: its peak is below one buffer per intermediate, and the engine's query for
    other dims grows with them."""
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([-1, 64]))
    h = x
    for k in range(6):
        w = net.add_i_const_node(mm.DataType.FLOAT32, mm.Dims([64, 64]), np.eye(64, dtype=np.float32) * (k + 1))
        h = net.add_i_activation_node(net.add_i_matmul_node(h, w.get_output(0)).get_output(0),
                                      mm.IActivation.SIGMOID).get_output(0)
    net.mark_output(h)
    model = build(net, ['{"graph_shape_mutable": true}', '{"dim_range": {"0": {"min": [1, 64], "max": [32, 64]}}}'])
    memory = model.get_build_info()["memory"]
    assert memory["input_shapes"] == [[32, 64]] and memory["constants"] >= 6 * 64 * 64 * 4
    assert 0 < memory["intermediate_peak"] < memory["intermediate_total"]
    engine = model.create_i_engine()
    assert engine.query_context_max_workspace_size([mm.Dims([32, 64])]) == memory["intermediate_peak"]
    assert engine.query_context_max_workspace_size([[2, 64]]) < memory["intermediate_peak"]
    with pytest.raises(mm.MagicMindError):
        engine.query_context_max_workspace_size([[64, 64]])  # outside the dim_range
