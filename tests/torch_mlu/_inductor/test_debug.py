"""The debug view: the numba source of the kernels a compiled function generated and ran, from Python
(torch_mlu._inductor.debug) and from the command line (`mlusim kernels SCRIPT`)."""
import torch

from mlutools import cli
from torch_mlu._inductor import debug


def fn(x):
    return torch.softmax(x, -1) * x.sigmoid()


def test_recording_shows_the_kernels_of_a_compiled_function(tmp_path):
    compiled = torch.compile(fn)
    x = torch.randn(5, 9, device="mlu")
    with debug.recording() as first:
        compiled(x)
    with debug.recording() as again:
        compiled(x)
    assert first.kernels and list(again.launched) == list(first.launched)
    assert not again.compiled  # nothing new to compile on a later call
    name = next(iter(first.kernels))
    source = first.source(name)
    assert f"def {name}(" in source and "@numba.njit(" in source and "math.exp(" in source
    assert first.launch_count[name] == 1
    written = first.write(tmp_path)
    assert [path.read_text() for path in written] == [kernel.source for kernel in first.kernels.values()]
    assert name in debug.loaded()


def test_mlusim_kernels_prints_and_writes_a_scripts_kernels(tmp_path, capsys):
    script = tmp_path / "script.py"
    script.write_text("import sys, torch\n"
                      "f = torch.compile(lambda x: (x * float(sys.argv[1])).tanh())\n"
                      "print('result', f(torch.ones(3, device='mlu')).sum().item())\n")
    assert cli.main(["kernels", str(script), "2"]) == 0
    printed = capsys.readouterr().out
    assert "result" in printed and "math.tanh(" in printed and "# ==== mlu_poi_" in printed
    assert cli.main(["kernels", "--out", str(tmp_path / "out"), str(script), "2"]) == 0
    files = list((tmp_path / "out").glob("mlu_poi_*.py"))
    assert len(files) == 1 and "math.tanh(" in files[0].read_text()
    assert cli.main(["kernels", "--list", str(script), "2"]) == 0
    assert "(launched 1 times)" in capsys.readouterr().out
    assert cli.main(["kernels", str(tmp_path / "missing.py")]) == 2
