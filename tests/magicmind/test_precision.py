"""force_float16 really computes in half: within 3e-2 of fp32 onnxruntime, and measurably different from fp32."""
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

import magicmind.python.runtime as mm  # noqa: E402
from magicmind.python.runtime.parser import Parser  # noqa: E402

from . import onnx_models as M  # noqa: E402
from .helpers import build, run  # noqa: E402


@pytest.mark.parametrize("maker, shape", [(M.ResNetish, (2, 3, 32, 32)), (M.MobileNetish, (1, 3, 32, 32))])
def test_force_float16_is_computed_in_half(tmp_path, maker, shape):
    torch.manual_seed(0)
    path = M.export(maker(), (torch.randn(*shape),), str(tmp_path / "m.onnx"), ["x"], ["y"], opset=13)
    net = mm.Network()
    assert Parser(mm.ModelKind.kOnnx).parse(net, path).ok()
    half = build(net, '{"precision_config": {"precision_mode": "force_float16"}}')
    net32 = mm.Network()
    Parser(mm.ModelKind.kOnnx).parse(net32, path)
    full = build(net32)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    (y16,), (y32,) = run(half, [x]), run(full, [x])
    assert half.get_input_data_types() == [mm.DataType.FLOAT32] and y16.dtype == np.float32
    weights = [half.program.values[s.ins[1]] for s in half.program.steps if s.op == "conv"]
    assert weights and {v.const.dtype for v in weights} == {np.dtype(np.float16)}  # the weights are stored in half
    assert half.get_build_info()["float16_values"] > 10
    np.testing.assert_allclose(y16, ref, rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(y32, ref, rtol=1e-3, atol=1e-3)
    # really different from fp32: the outputs were stored in half (exactly representable there), and their distance
    # from fp32 is far above fp32's own distance from onnxruntime
    assert (y16.astype(np.float16).astype(np.float32) == y16).all()
    assert np.abs(y16 - y32).max() > 10 * np.abs(y32 - ref).max()


def test_a_quantized_mode_without_ranges_names_the_tensor_it_lacks():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 4]))
    w = net.add_i_const_node(mm.DataType.FLOAT32, mm.Dims([4, 3]), np.ones((4, 3), np.float32)).get_output(0)
    net.mark_output(net.add_i_matmul_node(x, w).get_output(0))
    config = mm.BuilderConfig()
    assert config.parse_from_string('{"precision_config": {"precision_mode": "qint8_mixed_float16"}}').ok()
    builder = mm.Builder()
    assert builder.build_model("q", net, config) is None
    assert builder.last_status.code() == mm.Code.INVALID_ARGUMENT and "input0" in str(builder.last_status)
    assert "custom_ranges" in str(builder.last_status)
