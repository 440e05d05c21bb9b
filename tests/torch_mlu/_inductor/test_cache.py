"""Compiled code is cached on disk: a second process compiling the same model finds Inductor's compiled graph
(FX graph cache) and numba's machine code of every kernel, and compiles nothing."""
import json
import subprocess
import sys

import pytest
import torch
from torch._dynamo.utils import counters

pytestmark = pytest.mark.child_processes  # a second process

SCRIPT = '''
import json, sys
import torch, torch_mlu
before = sorted(m for m in ("torch._dynamo", "torch._inductor") if m in sys.modules)
import torch.nn.functional as F


def model(x, w):
    return F.layer_norm(F.gelu(x @ w), (w.shape[1],)).softmax(-1) * x.sum()


def run():
    x = torch.linspace(-1, 1, 48, device="mlu").view(6, 8)
    w = torch.linspace(1, -1, 40, device="mlu").view(8, 5)
    return torch.compile(model)(x, w).sum().item()


if __name__ == "__main__":
    result = run()
    from torch._dynamo.utils import counters
    from torch_mlu._inductor import debug
    stats = [kernel.function.stats for kernel in debug.loaded().values()]
    print(json.dumps({"result": result, "before": before, "inductor": dict(counters["inductor"]),
                      "numba_hits": sum(sum(s.cache_hits.values()) for s in stats),
                      "numba_misses": sum(sum(s.cache_misses.values()) for s in stats)}))
'''


def test_a_second_process_compiles_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    script = tmp_path / "compile_me.py"
    script.write_text(SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    import compile_me
    counters.clear()
    first = compile_me.run()  # this process: compiles and fills the caches
    assert counters["inductor"]["fxgraph_cache_miss"] == 1
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["before"] == []  # import torch_mlu does not import the compiler
    assert report["inductor"].get("fxgraph_cache_hit") == 1 and "fxgraph_cache_miss" not in report["inductor"]
    assert report["numba_hits"] >= 1 and report["numba_misses"] == 0
    assert abs(report["result"] - first) < 1e-4
    torch.mlu.synchronize()
