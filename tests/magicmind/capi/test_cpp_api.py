"""MagicMind's C++ API in the Neuware tree: a CMake project of sample-style programs (inference with cnrtMalloc'd
tensors and a cnrt queue; a C++ build with parser, config, the program's own ICalibData and int8 calibration)
builds against `mlusim neuware DIR` and runs; results against the Python API."""
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cffi", reason="the C ABI needs the capi extra")
torch = pytest.importorskip("torch")

import magicmind.python.runtime as mm  # noqa: E402
from magicmind.python.runtime.parser import Parser  # noqa: E402
from mlutools import cli  # noqa: E402

from .. import onnx_models as M  # noqa: E402
from ..helpers import build, run  # noqa: E402

pytestmark = pytest.mark.child_processes  # C++ programs

PROJECT = Path(__file__).parent / "project"


def _environment(home):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["NEUWARE_HOME"] = str(home)
    return env


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    for tool in ("cmake", "g++"):
        if shutil.which(tool) is None:
            pytest.skip(f"no {tool} on this machine")
    home = tmp_path_factory.mktemp("neuware")
    assert cli.main(["neuware", str(home)]) == 0
    for name in ("mm_runtime.h", "mm_builder.h", "mm_parser.h", "mm_calibrator.h", "mm_common.h"):
        assert (home / "include" / name).is_file()
    assert (home / "lib64" / "libmagicmind_runtime.so").is_file() and (home / "lib64" / "libmagicmind.so").is_file()
    out = tmp_path_factory.mktemp("project")
    env = _environment(home)
    configure = subprocess.run(["cmake", "-S", str(PROJECT), "-B", str(out)], env=env, capture_output=True,
                               text=True, timeout=240)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    made = subprocess.run(["cmake", "--build", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    return out, env


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    torch.manual_seed(0)
    path = str(tmp_path_factory.mktemp("model") / "r.onnx")
    M.export(M.ResNetish(), (torch.randn(2, 3, 32, 32),), path, ["x"], ["y"], dynamic={"x": {0: "n"}}, opset=13)
    return path


def _infer(programs, model_path, x, tmp_path, batch):
    out, env = programs
    x.tofile(tmp_path / "in.bin")
    done = subprocess.run([str(out / "infer"), str(model_path), str(tmp_path / "in.bin"), str(tmp_path / "out.bin"),
                           str(batch)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, np.fromfile(tmp_path / "out.bin", np.float32)


def test_a_cpp_sample_runs_a_model_built_in_python(programs, onnx_path, tmp_path):
    net = mm.Network()
    assert Parser(mm.ModelKind.kOnnx).parse(net, onnx_path).ok()
    model = build(net, ['{"graph_shape_mutable": true}',
                        '{"dim_range": {"0": {"min": [1, 3, 32, 32], "max": [4, 3, 32, 32]}}}'])
    path = tmp_path / "r.mm"
    assert model.serialize_to_file(str(path)).ok()
    x = np.random.default_rng(0).standard_normal((3, 3, 32, 32)).astype(np.float32)
    stdout, got = _infer(programs, path, x, tmp_path, 3)
    assert "input[0] : x [-1, 3, 32, 32], data type [FLOAT32]" in stdout
    assert "output dims [3, 10]" in stdout and "allocated outputs match" in stdout and "const data: yes" in stdout
    assert f"missing file: code {int(mm.Code.NOT_FOUND)}" in stdout
    assert f"no inputs: code {int(mm.Code.INVALID_ARGUMENT)}" in stdout and "done" in stdout
    np.testing.assert_array_equal(got.reshape(3, 10), run(model, [x])[0])


def test_a_cpp_build_with_its_own_calibration_data(programs, onnx_path, tmp_path):
    out, env = programs
    path = tmp_path / "q.mm"
    done = subprocess.run([str(out / "build_int8"), onnx_path, str(path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "calibrated on 3 batches" in done.stdout and "built [2, 3, 32, 32] -> [2, 10]" in done.stdout
    assert f"bad key: code {int(mm.Code.INVALID_ARGUMENT)}" in done.stdout
    model = mm.Model()
    assert model.deserialize_from_file(str(path)).ok()
    assert model.get_build_info()["quantized_layers"] == 7
    x = np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32)
    _, got = _infer(programs, path, x, tmp_path, 2)
    np.testing.assert_array_equal(got.reshape(2, 10), run(model, [x])[0])
