"""The ONNX parser on ResNet-, MobileNet-, YOLO-style CNNs and a tiny BERT, against onnxruntime CPU (fp32 within
1e-3)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

import magicmind.python.runtime as mm  # noqa: E402
from magicmind.python.runtime.parser import Parser  # noqa: E402

from . import onnx_models as M  # noqa: E402
from .helpers import build, run  # noqa: E402


def _reference(path, feeds):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _parse(path):
    net = mm.Network()
    assert Parser(mm.ModelKind.kOnnx).parse(net, path).ok()
    return net


def _check(path, feeds, config=None, tolerance=1e-3):
    net = _parse(path)
    model = build(net, config)
    got = run(model, list(feeds.values()))
    ref = _reference(path, feeds)
    assert model.get_output_names() == [o.name for o in ort.InferenceSession(path).get_outputs()]
    for g, r in zip(got, ref):
        assert g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=tolerance, atol=tolerance)
    return model


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_resnet_style(tmp_path, opset):
    torch.manual_seed(0)
    path = M.export(M.ResNetish(), (torch.randn(2, 3, 32, 32),), str(tmp_path / "r.onnx"), ["image"], ["logits"],
                    opset=opset)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    _check(path, {"image": x})


def test_mobilenet_style(tmp_path):
    torch.manual_seed(1)
    path = M.export(M.MobileNetish(), (torch.randn(1, 3, 32, 32),), str(tmp_path / "m.onnx"), ["x"], ["p"], opset=13)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    _check(path, {"x": x})


def test_yolo_style_two_heads_with_a_dynamic_batch(tmp_path):
    torch.manual_seed(2)
    path = M.export(M.Yoloish(), (torch.randn(1, 3, 64, 64),), str(tmp_path / "y.onnx"), ["images"],
                    ["p8", "p16"], dynamic={"images": {0: "batch"}}, opset=12)
    net = _parse(path)
    assert net.get_input(0).get_dimension().GetDims() == [-1, 3, 64, 64]
    model = build(net, ['{"graph_shape_mutable": true}',
                        '{"dim_range": {"0": {"min": [1, 3, 64, 64], "max": [4, 3, 64, 64]}}}'])
    context = model.create_i_engine().create_i_context()
    for batch in (3, 1):
        x = np.random.default_rng(batch).standard_normal((batch, 3, 64, 64)).astype(np.float32)
        got = run(model, [x], context)
        for g, r in zip(got, _reference(path, {"images": x})):
            np.testing.assert_allclose(g, r, rtol=1e-3, atol=1e-3)


def test_tiny_bert_with_attention_mask_and_dynamic_axes(tmp_path):
    torch.manual_seed(3)
    ids = torch.randint(0, 50, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    path = M.export(M.TinyBert(), (ids, mask), str(tmp_path / "b.onnx"), ["ids", "mask"], ["logits"],
                    dynamic={"ids": {0: "b", 1: "s"}, "mask": {0: "b", 1: "s"}}, opset=14)
    model = build(_parse(path), '{"graph_shape_mutable": true}')
    context = model.create_i_engine().create_i_context()
    rng = np.random.default_rng(3)
    for batch, seq in ((2, 12), (3, 7)):
        feeds = {"ids": rng.integers(0, 50, (batch, seq)).astype(np.int64),
                 "mask": (rng.random((batch, seq)) > 0.3).astype(np.int64)}
        feeds["mask"][:, 0] = 1
        got = run(model, list(feeds.values()), context)
        np.testing.assert_allclose(got[0], _reference(path, feeds)[0], rtol=1e-3, atol=1e-3)


def test_unsupported_op_names_op_and_node(tmp_path):
    from onnx import TensorProto, helper
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores"], ["keep"], name="nms_0")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4]),
                                            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4])],
                              [helper.make_tensor_value_info("keep", TensorProto.INT64, [-1, 3])])
    path = str(tmp_path / "nms.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    status = Parser(mm.ModelKind.kOnnx).parse(mm.Network(), path)
    assert status.code() == mm.Code.UNIMPLEMENTED and "NonMaxSuppression" in str(status) and "nms_0" in str(status)
    old = str(tmp_path / "old.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)]), old)
    assert "opset 9" in str(Parser(mm.ModelKind.kOnnx).parse(mm.Network(), old))


def test_parser_errors(tmp_path):
    assert Parser(mm.ModelKind.kOnnx).parse(mm.Network(), str(tmp_path / "none.onnx")).code() == mm.Code.NOT_FOUND
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    assert "not a readable ONNX model" in str(Parser(mm.ModelKind.kOnnx).parse(mm.Network(), str(junk)))
    caffe = Parser(mm.ModelKind.kCaffe).parse(mm.Network(), str(junk), str(junk))
    assert caffe.code() == mm.Code.UNIMPLEMENTED and "Caffe" in str(caffe)
    assert Parser(mm.ModelKind.kTensorflow).parse(mm.Network(), str(junk)).code() == mm.Code.UNIMPLEMENTED
    assert Parser(mm.ModelKind.kOnnx).set_model_param("pytorch-input-dtypes", []).code() == \
        mm.Code.INVALID_ARGUMENT
    assert Parser(mm.ModelKind.kOnnx).parse("net", str(junk)).code() == mm.Code.INVALID_ARGUMENT
