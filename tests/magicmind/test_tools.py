"""The tools: onnx_build / mm_build / pytorch_build -> a model file -> mm_run, with the release's flags; the summary lines scripts
parse; non-zero exit and a message naming the flag for a missing or bad file or value."""
import json
import subprocess
import sys

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

import magicmind.python.runtime as mm  # noqa: E402
from magicmind.tools import mm_build, mm_run  # noqa: E402

from . import onnx_models as M  # noqa: E402
from .helpers import run as run_model  # noqa: E402

FAST = ["--iterations", "2", "--warmup", "0", "--duration", "0"]


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    torch.manual_seed(0)
    path = str(tmp_path_factory.mktemp("tools") / "r.onnx")
    M.export(M.ResNetish(), (torch.randn(1, 3, 32, 32),), path, ["x"], ["y"], dynamic={"x": {0: "n"}}, opset=13)
    return path


def _load(path):
    model = mm.Model()
    assert model.deserialize_from_file(str(path)).ok()
    return model


def test_build_then_run_with_files_gives_onnxruntime_s_output(onnx_path, tmp_path, capsys):
    model_path = tmp_path / "r.mm"
    assert mm_build.onnx_main(["--onnx", onnx_path, "--input_dims", "2,3,32,32", "--dynamic_shape", "false",
                               "--magicmind_model", str(model_path)]) == 0
    assert "Generate model done" in capsys.readouterr().out
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    x.tofile(tmp_path / "x.bin")
    out = tmp_path / "out" / ""
    out.mkdir()
    command = [sys.executable, "-m", "magicmind.tools.mm_run", "--magicmind_model", str(model_path),
               "--input_files", str(tmp_path / "x.bin"), "--output_path", str(out) + "/", "--threads", "2"] + FAST
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    line = next(l for l in done.stdout.splitlines() if l.startswith("Throughput (qps):"))
    qps = float(line.split()[2])           # what `grep -w "Throughput (qps):" | awk '{print $3}'` reads
    assert qps > 0 and float(line[18:].split()[0]) == qps and "total batch sizes: 2" in line
    assert "Input num: 1" in done.stdout and "x : [2, 3, 32, 32], FLOAT32" in done.stdout
    got = np.fromfile(out / "output0", np.float32).reshape(2, 10)
    want = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_dynamic_shapes_layouts_dtypes_and_means(onnx_path, tmp_path, capsys):
    model_path = tmp_path / "d.mm"
    assert mm_build.main(["--onnx", onnx_path, "--input_dims", "-1", "3", "32", "32",
                          "--dim_range_min", "1", "3", "32", "32", "--dim_range_max", "8", "3", "32", "32",
                          "--input_layout", "NHWC", "--means", "120,110,100", "--vars", "3600,2500,1600",
                          "--output_dtypes", "HALF", "--magicmind_model", str(model_path)]) == 0
    model = _load(model_path)
    assert model.get_input_dimensions()[0].GetDims() == [-1, 32, 32, 3]
    assert model.get_input_data_types() == [mm.DataType.UINT8] and model.get_output_data_types() == \
        [mm.DataType.FLOAT16]
    pixels = np.random.default_rng(1).integers(0, 256, (3, 32, 32, 3), dtype=np.uint8)
    normalized = ((pixels - np.float32([120, 110, 100])) / np.float32([60, 50, 40])).transpose(0, 3, 1, 2)
    want = ort.InferenceSession(onnx_path).run(None, {"x": np.ascontiguousarray(normalized, np.float32)})[0]
    np.testing.assert_allclose(run_model(model, [pixels])[0], want, rtol=2e-3, atol=2e-3)
    capsys.readouterr()
    assert mm_run.main(["--magicmind_model", str(model_path)] + FAST) == 1  # mutable: the dims are needed
    assert "--input_dims" in capsys.readouterr().err
    assert mm_run.main(["--magicmind_model", str(model_path), "--input_dims", "4,32,32,3", "--batch_size", "2"]
                       + FAST) == 0
    assert "total batch sizes: 2" in capsys.readouterr().out


def test_int8_with_a_file_list_and_the_build_config_applied_last(onnx_path, tmp_path):
    rng = np.random.default_rng(2)
    lines = []
    for k in range(3):
        rng.standard_normal((1, 3, 32, 32)).astype(np.float32).tofile(tmp_path / f"c{k}.bin")
        lines.append(f"c{k}.bin:1,3,32,32")
    (tmp_path / "list.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "config.json").write_text(json.dumps({"precision_config": {"weight_quant_granularity": "per_axis"}}))
    model_path = tmp_path / "q.mm"
    assert mm_build.onnx_main(["--onnx", onnx_path, "--input_dims", "1,3,32,32", "--precision",
                               "qint8_mixed_float16", "--calibration", "true", "--file_list",
                               str(tmp_path / "list.txt"), "--calibration_data_path", str(tmp_path),
                               "--build_config", str(tmp_path / "config.json"),
                               "--magicmind_model", str(model_path)]) == 0
    info = _load(model_path).get_build_info()
    assert info["quantized_layers"] == 7 and info["calibration"]["batches"] == 3
    assert mm_build.onnx_main(["--onnx", onnx_path, "--input_dims", "1,3,32,32", "--precision",
                               "qint8_mixed_float16", "--calibration", "true", "--magicmind_model",
                               str(tmp_path / "r.mm")]) == 0  # no data: custom_ranges [-1, 1]
    assert _load(tmp_path / "r.mm").get_build_info()["quantized_layers"] == 7


@pytest.mark.parametrize("argv, message", [
    (["--onnx", "/no/such.onnx"], "--onnx"),
    (["--onnx", "{onnx}", "--input_dims", "1,3,x"], "--input_dims"),
    (["--onnx", "{onnx}", "--precision", "int4"], "precision_mode"),
    (["--onnx", "{onnx}", "--build_config", "/no/config.json"], "--build_config"),
    (["--onnx", "{onnx}", "--input_dtypes", "COMPLEX"], "--input_dtypes"),
    (["--onnx", "{onnx}", "--precision", "qint8_mixed_float32", "--calibration", "true", "--file_list",
      "/no/list.txt"], "--file_list"),
])
def test_builder_errors_exit_1_naming_the_flag(onnx_path, tmp_path, capsys, argv, message):
    argv = [a.replace("{onnx}", onnx_path) for a in argv] + ["--magicmind_model", str(tmp_path / "m")]
    assert mm_build.onnx_main(argv) == 1
    assert message in capsys.readouterr().err


def test_runner_errors_exit_1(tmp_path, capsys):
    corrupt = tmp_path / "bad.mm"
    corrupt.write_bytes(b"MLUSIMMM" + b"\0" * 60)
    assert mm_run.main(["--magicmind_model", str(corrupt)] + FAST) == 1
    assert "deserialize" in capsys.readouterr().err
    assert mm_run.main(["--magicmind_model", str(tmp_path / "none")]) == 1
    assert mm_build.main(["--magicmind_model", str(tmp_path / "m")]) == 1  # no model given
    assert "exactly one model" in capsys.readouterr().err


def test_pytorch_build_reads_a_traced_module(tmp_path):
    torch.manual_seed(0)
    model = M.MobileNetish().eval()
    with torch.no_grad():
        traced = torch.jit.trace(model, (torch.randn(1, 3, 32, 32),))
    torch.jit.save(traced, str(tmp_path / "m.pt"))
    assert mm_build.pytorch_main(["--pytorch_pt", str(tmp_path / "m.pt"), "--pt_input_dtypes", "FLOAT",
                                  "--input_dims", "2,3,32,32", "--dynamic_shape", "false",
                                  "--magicmind_model", str(tmp_path / "m.mm")]) == 0
    x = np.random.default_rng(3).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(run_model(_load(tmp_path / "m.mm"), [x])[0], want, rtol=1e-3, atol=1e-3)
