"""The PyTorch parser: traced TorchScript files (torch.jit.trace + torch.jit.save) of the test models, with
pytorch-input-dtypes and the dims set after parsing as the samples do, against torch CPU."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

import magicmind.python.runtime as mm  # noqa: E402
from magicmind.python.runtime.parser import Parser  # noqa: E402

from . import onnx_models as M  # noqa: E402
from .helpers import build, run  # noqa: E402


def _save(model, args, path):
    torch.manual_seed(0)
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    model.eval()
    with torch.no_grad():
        traced = torch.jit.trace(model, args)
    torch.jit.save(traced, path)
    return model


def _parse(path, dtypes=None):
    net = mm.Network()
    parser = Parser(mm.ModelKind.kPytorch)
    if dtypes is not None:
        assert parser.set_model_param("pytorch-input-dtypes", dtypes).ok()
    status = parser.parse(net, path)
    assert status.ok(), status
    return net


def test_a_traced_resnet_with_its_dims_set_after_parsing(tmp_path):
    path = str(tmp_path / "r.pt")
    model = _save(M.ResNetish(), (torch.randn(2, 3, 32, 32),), path)
    net = _parse(path, [mm.DataType.FLOAT32])
    assert net.get_input_count() == 1 and net.get_input(0).get_dimension().GetDims() == [-1, -1, -1, -1]
    assert net.get_input(0).get_tensor_name() == "x"
    assert net.get_input(0).set_dimension(mm.Dims([3, 3, 32, 32])).ok()
    built = build(net)
    x = np.random.default_rng(0).standard_normal((3, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    assert built.get_output_names() == ["output0"]
    np.testing.assert_allclose(run(built, [x])[0], want, rtol=1e-3, atol=1e-3)


def test_two_inputs_and_two_outputs_with_integer_ids(tmp_path):
    path = str(tmp_path / "b.pt")
    ids = torch.randint(0, 50, (2, 12))
    mask = torch.ones(2, 12, dtype=torch.int64)
    model = _save(M.TinyBert(), (ids, mask), path)
    net = _parse(path, [mm.DataType.INT64, mm.DataType.INT64])
    for i in range(2):
        assert net.get_input(i).set_dimension(mm.Dims([3, 7])).ok()
    built = build(net)
    rng = np.random.default_rng(1)
    ids_np = rng.integers(0, 50, (3, 7)).astype(np.int64)
    mask_np = (rng.random((3, 7)) > 0.3).astype(np.int64)
    mask_np[:, 0] = 1
    with torch.no_grad():
        want = model(torch.from_numpy(ids_np), torch.from_numpy(mask_np)).numpy()
    np.testing.assert_allclose(run(built, [ids_np, mask_np])[0], want, rtol=1e-3, atol=1e-3)
    yolo = str(tmp_path / "y.pt")
    detector = _save(M.Yoloish(), (torch.randn(1, 3, 64, 64),), yolo)
    net = _parse(yolo)
    net.get_input(0).set_dimension(mm.Dims([1, 3, 64, 64]))
    built = build(net)
    image = np.random.default_rng(2).standard_normal((1, 3, 64, 64)).astype(np.float32)
    with torch.no_grad():
        wants = [w.numpy() for w in detector(torch.from_numpy(image))]
    assert built.get_output_num() == 2
    for got, want in zip(run(built, [image]), wants):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_parser_errors(tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a module")
    status = Parser(mm.ModelKind.kPytorch).parse(mm.Network(), str(junk))
    assert status.code() == mm.Code.INVALID_ARGUMENT and "TorchScript" in str(status)
    path = str(tmp_path / "r.pt")
    _save(M.ResNetish(), (torch.randn(1, 3, 32, 32),), path)
    parser = Parser(mm.ModelKind.kPytorch)
    assert parser.set_model_param("pytorch-input-dtypes", [mm.DataType.FLOAT32, mm.DataType.FLOAT32]).ok()
    assert "2 types" in str(parser.parse(mm.Network(), path))
    assert parser.set_model_param("pytorch-input-dtypes", "FLOAT").code() == mm.Code.INVALID_ARGUMENT
    class Odd(torch.nn.Module):
        def forward(self, x):
            return x.reshape(7, 11, 13)  # no example input holds 1001 elements
    scripted = str(tmp_path / "s.pt")
    torch.jit.save(torch.jit.script(Odd()), scripted)
    net = mm.Network()
    assert Parser(mm.ModelKind.kPytorch).parse(net, scripted).ok()  # read once the dims are known
    status = net.get_input(0).set_dimension(mm.Dims([3, 5]))
    assert status.code() == mm.Code.INVALID_ARGUMENT and "does not run on inputs of dims [[3, 5]]" in str(status)
    assert net.get_input(0).set_dimension(mm.Dims([7, 143])).ok() and net.get_output_count() == 1


def test_a_module_that_needs_its_real_dims_is_read_when_they_are_set(tmp_path):
    """MobileNet-style: a Linear after Flatten takes only the trained image size, which no example input has: the
    graph is read once set_dimension gives the dims; building before that says why."""
    path = str(tmp_path / "m.pt")
    model = _save(M.MobileNetish(), (torch.randn(1, 3, 32, 32),), path)
    net = _parse(path)
    assert net.get_input_count() == 1 and net.get_output_count() == 0
    builder = mm.Builder()
    assert builder.build_model("early", net, mm.BuilderConfig()) is None
    assert builder.last_status.code() == mm.Code.FAILED_PRECONDITION and "set_dimension" in str(builder.last_status)
    assert net.get_input(0).set_dimension(mm.Dims([2, 3, 17, 17])).code() == mm.Code.INVALID_ARGUMENT
    assert net.get_output_count() == 0
    assert net.get_input(0).set_dimension(mm.Dims([2, 3, 32, 32])).ok() and net.get_output_count() == 1
    x = np.random.default_rng(4).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(run(build(net), [x])[0], want, rtol=1e-3, atol=1e-3)
