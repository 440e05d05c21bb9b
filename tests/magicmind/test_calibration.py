"""Calibration (CalibDataInterface, Calibrator, LINEAR and EQNM) and the quantized modes: int8 / int16 layers
really computed in integers, their drift from fp32 bounded, worse with bad calibration data.

Bounds (ResNet-style test net, 4 calibration batches from the input's distribution; measured 0.7% for int8 and
4e-5 for int16 when written): max |y - y_fp32| <= 3% of max |y_fp32| for int8 (every mode and algorithm),
<= 0.1% for int16 (and under a tenth of int8's); calibration data 20x too small or too large gives at least 5x the error."""
import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

import magicmind.python.runtime as mm  # noqa: E402
from magicmind.python.runtime.parser import Parser  # noqa: E402

from . import onnx_models as M  # noqa: E402
from .helpers import run  # noqa: E402

rng = np.random.default_rng(5)


class Batches(mm.CalibDataInterface):
    def __init__(self, batches):
        super().__init__()
        self.batches, self.index = batches, -1

    def get_shape(self):
        return mm.Dims(self.batches[0].shape)

    def get_data_type(self):
        return mm.DataType.FLOAT32

    def get_sample(self):
        return self.batches[self.index]

    def next(self):
        self.index += 1
        return mm.Status() if self.index < len(self.batches) else mm.Status(mm.Code.OUT_OF_RANGE, "no more data")

    def reset(self):
        self.index = -1
        return mm.Status()


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    torch.manual_seed(0)
    path = str(tmp_path_factory.mktemp("calib") / "r.onnx")
    M.export(M.ResNetish(), (torch.randn(2, 3, 32, 32),), path, ["x"], ["y"], opset=13)
    x = rng.standard_normal((2, 3, 32, 32)).astype(np.float32)
    return path, x, ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


GOOD = [rng.standard_normal((2, 3, 32, 32)).astype(np.float32) for _ in range(4)]


def _quantized(path, mode, batches=GOOD, algorithm=mm.QuantizationAlgorithm.LINEAR_ALGORITHM, extra=()):
    net = mm.Network()
    assert Parser(mm.ModelKind.kOnnx).parse(net, path).ok()
    config = mm.BuilderConfig()
    assert config.parse_from_string('{"precision_config": {"precision_mode": "%s"}}' % mode).ok()
    for text in extra:
        assert config.parse_from_string(text).ok()
    calibrator = mm.Calibrator([Batches(batches)])
    assert calibrator.set_quantization_algorithm(algorithm).ok()
    assert calibrator.calibrate(net, config).ok()
    model = mm.Builder().build_model("q", net, config)
    assert model is not None
    return model


def _drift(model, x, ref):
    return float(np.abs(run(model, [x])[0] - ref).max() / np.abs(ref).max())


@pytest.mark.parametrize("mode, extra, algorithm", [
    ("qint8_mixed_float32", (), mm.QuantizationAlgorithm.LINEAR_ALGORITHM),
    ("qint8_mixed_float16", (), mm.QuantizationAlgorithm.LINEAR_ALGORITHM),
    ("qint8_mixed_float32", ('{"precision_config": {"weight_quant_granularity": "per_axis"}}',),
     mm.QuantizationAlgorithm.LINEAR_ALGORITHM),
    ("qint8_mixed_float32", ('{"precision_config": {"activation_quant_algo": "asymmetric"}}',),
     mm.QuantizationAlgorithm.LINEAR_ALGORITHM),
    ("qint8_mixed_float32", (), mm.QuantizationAlgorithm.EQNM_ALGORITHM)])
def test_int8_is_computed_in_integers_within_its_bound(resnet, mode, extra, algorithm):
    path, x, ref = resnet
    model = _quantized(path, mode, algorithm=algorithm, extra=extra)
    convs = [s for s in model.program.steps if s.op == "conv"]
    assert convs and all(s.attrs["quant"]["bits"] == 8 for s in convs)
    assert {model.program.values[s.ins[1]].const.dtype for s in convs} == {np.dtype(np.int8)}  # weights in int8
    info = model.get_build_info()
    assert info["quantized_layers"] == len(convs) + 1 and info["calibration"]["batches"] == 4
    drift = _drift(model, x, ref)
    assert 1e-4 < drift <= 0.03  # really quantized (fp32 is within 1e-6 of onnxruntime), and bounded


def test_int16_drifts_far_less_than_int8_and_bad_calibration_data_drifts_more(resnet):
    path, x, ref = resnet
    int8 = _drift(_quantized(path, "qint8_mixed_float32"), x, ref)
    int16 = _drift(_quantized(path, "qint16_mixed_float32"), x, ref)
    assert int16 <= 1e-3 and int16 < int8 / 10  # (inputs past the calibrated range clip in both)
    for factor in (0.05, 20.0):  # ranges far too narrow (clipping) or far too wide (coarse steps)
        bad = _drift(_quantized(path, "qint8_mixed_float32", [b * factor for b in GOOD]), x, ref)
        assert bad >= 5 * int8


def test_a_quantized_model_serializes_with_its_integer_weights(resnet, tmp_path):
    path, x, _ = resnet
    model = _quantized(path, "qint8_mixed_float16")
    target = str(tmp_path / "q.mm")
    assert model.serialize_to_file(target).ok()
    loaded = mm.Model()
    assert loaded.deserialize_from_file(target).ok()
    assert run(loaded, [x])[0].tobytes() == run(model, [x])[0].tobytes()


def test_custom_ranges_build_without_calibration():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([3, 8]))
    w = rng.standard_normal((8, 4)).astype(np.float32)
    net.mark_output(net.add_i_matmul_node(x, net.add_i_const_node(mm.DataType.FLOAT32, mm.Dims([8, 4]),
                                                                  w).get_output(0)).get_output(0))
    config = mm.BuilderConfig()
    assert config.parse_from_string('{"precision_config": {"precision_mode": "qint8_mixed_float32"}, '
                                    '"custom_ranges": {"": {"min": [-1], "max": [1]}}}').ok()
    model = mm.Builder().build_model("q", net, config)
    data = np.clip(rng.standard_normal((3, 8)), -1, 1).astype(np.float32)
    got = run(model, [data])[0]
    scale = 1 / 127
    w_scale = np.abs(w).max() / 127
    want = (np.rint(data / scale) * scale) @ (np.rint(w / w_scale) * w_scale)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_calibrator_errors_name_what_is_wrong(resnet):
    path, _, _ = resnet
    net = mm.Network()
    assert Parser(mm.ModelKind.kOnnx).parse(net, path).ok()
    fp32 = mm.BuilderConfig()
    calibrator = mm.Calibrator([Batches(GOOD)])
    assert "qint8" in str(calibrator.calibrate(net, fp32))
    q = mm.BuilderConfig()
    assert q.parse_from_string('{"precision_config": {"precision_mode": "qint8_mixed_float32", '
                               '"activation_quant_algo": "asymmetric"}}').ok()
    assert calibrator.set_quantization_algorithm(mm.QuantizationAlgorithm.EQNM_ALGORITHM).ok()
    assert "symmetric" in str(calibrator.calibrate(net, q))
    assert calibrator.set_quantization_algorithm("LINEAR").code() == mm.Code.INVALID_ARGUMENT
    assert mm.Calibrator([Batches([])]).calibrate(net, q).code() != mm.Code.OK
    assert mm.Calibrator([Batches(GOOD), Batches(GOOD)]).calibrate(net, q).code() == mm.Code.INVALID_ARGUMENT
    wrong = Batches([np.zeros((2, 3, 16, 16), np.float32)])
    wrong.get_shape = lambda: mm.Dims([2, 3, 32, 32])
    assert "get_sample" in str(mm.Calibrator([wrong]).calibrate(net, q))
    with pytest.raises(mm.MagicMindError):
        mm.Calibrator(["data"])
    assert calibrator.set_remote(mm.RemoteConfig()).ok() and calibrator.set_remote("ip").code() != mm.Code.OK
