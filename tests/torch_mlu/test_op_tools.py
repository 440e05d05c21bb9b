"""torch_mlu.op_tools: autocompare names a deliberately wrong kernel (forward and backward) and saves its
arguments for replay, capture round-trips through its file, timing and the fallback report see the ops, and
MLUSIM_OP_TOOLS runs them around an unchanged script."""
import os
import subprocess
import sys

import pytest
import torch

from torch_mlu import op_tools
from torch_mlu.ops import unary


def _model_step(x, w):
    y = torch.tanh(x @ w)
    loss = (y * y).sum()
    loss.backward()
    return loss


def _inputs():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4, 5, generator=generator).to("mlu").requires_grad_()
    w = torch.randn(5, 3, generator=generator).to("mlu").requires_grad_()
    return x, w


def test_autocompare_finds_no_difference_in_correct_kernels(tmp_path):
    x, w = _inputs()
    with op_tools.autocompare(save_dir=tmp_path) as check:
        _model_step(x, w)
    assert check.mismatches == [] and check.first is None
    assert check.compared >= 8
    assert list(tmp_path.iterdir()) == []


def test_autocompare_names_a_wrong_forward_kernel_and_saves_it_for_replay(tmp_path, monkeypatch):
    real = unary.compute_unary

    def wrong(spec, self, out):
        result = real(spec, self, out)
        return result.mul_(1.01) if spec.name == "tanh" else result

    x, w = _inputs()
    monkeypatch.setattr(unary, "compute_unary", wrong)
    with op_tools.autocompare(save_dir=tmp_path) as check:
        _model_step(x, w)
    first = check.first
    assert first.op == "aten::tanh" and first.phase == "forward"
    assert "result 0" in first.detail and os.path.exists(first.path)
    replayed = op_tools.replay(first.path)
    assert replayed.op == "aten::tanh" and not replayed.matches
    monkeypatch.setattr(unary, "compute_unary", real)
    assert op_tools.replay(first.path).matches  # the saved call, with the kernel fixed, agrees with the CPU


def test_autocompare_names_a_wrong_gradient_kernel(tmp_path, monkeypatch):
    real = unary._activation_backward

    def wrong(name, descriptor, grad_output, output, grad_input):
        return real(name, descriptor, grad_output, output, grad_input).mul_(2)

    x, w = _inputs()
    monkeypatch.setattr(unary, "_activation_backward", wrong)
    with op_tools.autocompare(save_dir=tmp_path) as check:
        _model_step(x, w)
    assert [m.op for m in check.mismatches][:1] == ["aten::tanh_backward"]
    assert check.first.phase == "backward:TanhBackward0"
    with pytest.raises(op_tools.OpMismatchError, match="aten::tanh_backward"):
        with op_tools.autocompare(stop_at_first=True):
            _model_step(*_inputs())


def test_capture_round_trips_through_its_file(tmp_path):
    path = tmp_path / "ops.jsonl"
    x, w = _inputs()
    with op_tools.capture(path) as ops:
        _model_step(x, w)
        torch.ones(3, device="mlu")
    assert op_tools.load_capture(path) == ops.records
    names = [r["op"] for r in ops.records]
    assert names[:2] == ["aten::mm", "aten::tanh"] and "aten::tanh_backward" in names and "aten::ones" in names
    first = ops.records[0]
    assert first["inputs"][0] == {"name": "self", "shape": [4, 5], "dtype": "float32", "stride": [5, 1],
                                  "device": "mlu:0"}
    assert first["outputs"] == [{"shape": [4, 3], "dtype": "float32", "stride": [3, 1], "device": "mlu:0"}]
    assert {r["phase"] for r in ops.records} >= {"forward", "backward:TanhBackward0"}
    assert [r["index"] for r in ops.records] == sorted(r["index"] for r in ops.records)
    path.write_text(path.read_text().replace('"ops": ', '"ops": 1'))
    with pytest.raises(ValueError, match="the header counts"):
        op_tools.load_capture(path)


def test_timing_reports_host_and_modelled_mlu_time(tmp_path):
    x, w = _inputs()
    with op_tools.timing(tmp_path / "timing.csv") as timer:
        _model_step(x, w)
    mm = timer.times["aten::mm"]
    assert mm.calls == 3 and mm.host_us > 0 and mm.mlu_us > 0
    lines = timer.table_lines()
    assert lines[0].split()[:3] == ["op", "calls", "host"] and any(line.startswith("aten::mm") for line in lines)
    assert (tmp_path / "timing.csv").read_text().splitlines()[0] == "op,calls,host_us,mlu_us"


def test_fallback_report_names_the_op_and_the_call_site():
    x = torch.linspace(0.5, 2, 8, device="mlu")
    with op_tools.fallback_report() as report:
        torch.special.i0(x)
        x + 1  # native: not reported
    entry = report.entries["aten::i0.out"]
    assert entry.calls == 1 and entry.reached_from == {"aten::i0"}
    assert entry.first_site.startswith(__file__)
    assert list(report.entries) == ["aten::i0.out"]
    assert (report.calls, report.calls_falling_back, report.native_share()) == (2, 1, 0.5)
    assert report.table_lines()[-1] == "1 of 2 aten calls ran natively (50.0%)"


def test_environment_variable_runs_the_tools_around_an_unchanged_script(tmp_path):
    script = ("import torch\n"
              "x = torch.randn(3, 4, device='mlu', requires_grad=True)\n"
              "torch.special.i0(x.detach())\n"
              "torch.tanh(x).sum().backward()\n")
    env = dict(os.environ, MLUSIM_OP_TOOLS="all", MLUSIM_OP_TOOLS_DIR=str(tmp_path), MLUSIM_TORCH_FALLBACK="silent")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=240,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert {p.name for p in tmp_path.iterdir()} >= {"capture.jsonl", "autocompare.txt", "timing.csv", "timing.txt",
                                                    "fallback.txt"}
    assert "aten::tanh_backward" in {r["op"] for r in op_tools.load_capture(tmp_path / "capture.jsonl")}
    assert "aten::i0.out" in (tmp_path / "fallback.txt").read_text()
    assert "0 differ" in (tmp_path / "autocompare.txt").read_text()
    env["MLUSIM_OP_TOOLS"] = "capture,profiler"
    done = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, text=True, env=env,
                          timeout=240)
    assert done.returncode != 0 and "unknown tool(s) profiler" in done.stderr
