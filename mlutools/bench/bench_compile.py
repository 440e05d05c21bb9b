"""torch.compile on mlu benchmark (torch_mlu._inductor): the numbers of the compile issue, each beside its reference
measured in the same run.

- a pointwise + reduction chain (bias + GELU + dropout + residual + layer norm, 4096 x 4096 float): compiled host
  time vs eager mlu (target >= 2x faster), and the modelled MLU time of both (the fused kernel reads and writes
  each tensor once; eager makes a memory pass per op); numpy doing the same math is the host's own reference.
- a transformer block's training step (forward, backward, SGD): compiled vs eager mlu host time (target >= 1.3x).
- compile time of that transformer block in a fresh process: cold (empty Inductor cache, target <= 90 s) and warm
  (a second process with the cache of the first, target <= 10 s); the first call's time minus a later call's.

Run: python benchmarks/bench_compile.py [--quick]   or   mlusim bench compile
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from mlutools.bench.common import format_rows, paired_median_ms, row, run_main

CHAIN_SIZE = 4096
CHAIN_TARGET = 2.0
STEP_TARGET = 1.3
COLD_TARGET_S = 90.0
WARM_TARGET_S = 10.0
#: the transformer block of the training-step and compile-time measurements
BLOCK = {"dim": 256, "heads": 4, "batch": 8, "tokens": 64}

_COMPILE_SCRIPT = """
import json, sys, time
started = time.perf_counter()
import torch, torch_mlu
from mlutools.bench.bench_compile import make_block, training_step
imported = time.perf_counter()
model, batch = make_block()
compiled = torch.compile(model)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, foreach=False)
first = time.perf_counter()
training_step(compiled, optimizer, batch)
first = time.perf_counter() - first
steady = []
for _ in range(2):
    start = time.perf_counter()
    training_step(compiled, optimizer, batch)
    steady.append(time.perf_counter() - start)
print(json.dumps({"import_s": imported - started, "first_s": first, "steady_s": min(steady)}))
"""


def make_block(dim: int = BLOCK["dim"], heads: int = BLOCK["heads"], batch: int = BLOCK["batch"],
               tokens: int = BLOCK["tokens"], device: str = "mlu"):
    """(a pre-norm transformer block on `device`, (input, target)) with fixed random weights."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = (part.view(b, t, heads, c // heads).transpose(1, 2)
                       for part in self.qkv(self.ln1(x)).split(c, -1))
            attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + F.dropout(self.proj(attention.transpose(1, 2).reshape(b, t, c)), 0.1, self.training)
            return x + F.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))), 0.1, self.training)

    torch.manual_seed(0)
    model = Block().to(device)
    x = torch.randn(batch, tokens, dim, device=device)
    target = torch.randn(batch, tokens, dim, device=device)
    return model, (x, target)


def training_step(model, optimizer, batch) -> None:
    """One step: forward, mean squared error, backward, SGD update, waiting for the device."""
    import torch
    x, target = batch
    optimizer.zero_grad(set_to_none=True)
    loss = ((model(x) - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    torch.mlu.synchronize()


def chain(x, bias, residual, weight, shift):
    """bias + GELU + dropout + residual + layer norm."""
    import torch.nn.functional as F
    y = F.dropout(F.gelu(x + bias), p=0.1, training=True) + residual
    return F.layer_norm(y, y.shape[-1:], weight, shift)


def _numpy_chain(x, bias, residual, weight, shift, keep):
    """The same math in numpy passes (the host's own reference; erf by the float32 rational form of the kernels)."""
    y = x + bias
    z = np.clip(y * np.float32(0.7071067811865476), -4, 4)
    z2 = z * z
    p = np.float32(-2.72614225801306e-10)
    for c in (2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05, -7.34990630326855e-04,
              -2.95459980854025e-03, -1.60960333262415e-02):
        p = p * z2 + np.float32(c)
    q = np.float32(-1.45660718464996e-05)
    for c in (-2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03, -1.42647390514189e-02):
        q = q * z2 + np.float32(c)
    y = np.float32(0.5) * y * (np.float32(1) + z * p / q)
    y = y * keep * np.float32(1 / 0.9) + residual
    mean = y.mean(-1, keepdims=True)
    var = y.var(-1, keepdims=True)
    return (y - mean) / np.sqrt(var + np.float32(1e-5)) * weight + shift


def _modelled(fn, *args):
    """(modelled µs, bytes moved, commands) of one call of `fn`."""
    import torch
    from mlusim import trace
    torch.mlu.synchronize()
    with trace.recording() as recorder:
        fn(*args)
        torch.mlu.synchronize()
    return (sum(r.model_us for r in recorder.records), sum(r.nbytes for r in recorder.records),
            len(recorder.records))


def chain_rows(report, size: int, repeats: int) -> list[dict]:
    import torch
    torch.manual_seed(0)
    host = [np.random.default_rng(i).standard_normal(shape, dtype=np.float32)
            for i, shape in enumerate([(size, size), (size,), (size, size), (size,), (size,)])]
    args = [torch.from_numpy(a).to("mlu") for a in host]
    compiled = torch.compile(chain)

    def eager_call():
        chain(*args)
        torch.mlu.synchronize()

    def compiled_call():
        compiled(*args)
        torch.mlu.synchronize()

    compiled_call()  # compile
    keep = (np.random.default_rng(9).random((size, size)) >= 0.1).astype(np.float32)
    eager_ms, compiled_ms, numpy_ms = paired_median_ms(
        eager_call, compiled_call, lambda: _numpy_chain(*host, keep), repeats=repeats, warmup=1)
    rows = []
    r = row(f"chain {size}x{size} compiled vs eager mlu (ms)", compiled_ms, eager_ms, CHAIN_TARGET, unit="ms",
            higher_is_better=True, note="bias+GELU+dropout+residual+layer norm; host time")
    rows.append(r)
    rows.append(row(f"chain {size}x{size} compiled vs numpy (ms)", compiled_ms, numpy_ms, None, unit="ms",
                    higher_is_better=True, note="numpy: the same math, one pass per op, on the host"))
    eager_us, eager_bytes, eager_commands = _modelled(chain, *args)
    compiled_us, compiled_bytes, compiled_commands = _modelled(compiled, *args)
    r = row(f"chain {size}x{size} modelled MLU time (us)", compiled_us, eager_us, 1.0, unit="us",
            higher_is_better=True,
            note=f"bytes moved {compiled_bytes / 1e6:.0f} MB in {compiled_commands} commands vs "
                 f"{eager_bytes / 1e6:.0f} MB in {eager_commands}")
    rows.append(r)
    for r in rows:
        report(format_rows([r])[1])
    return rows


def step_rows(report, repeats: int, block: dict) -> list[dict]:
    import copy
    import torch
    model, batch = make_block(**block)
    eager_model = copy.deepcopy(model)
    compiled = torch.compile(model)
    optimizers = [torch.optim.SGD(m.parameters(), lr=1e-3, foreach=False) for m in (eager_model, model)]
    training_step(compiled, optimizers[1], batch)  # compile
    eager_ms, compiled_ms = paired_median_ms(lambda: training_step(eager_model, optimizers[0], batch),
                                             lambda: training_step(compiled, optimizers[1], batch),
                                             repeats=repeats, warmup=1)
    shape = f"d{block['dim']} h{block['heads']} {block['batch']}x{block['tokens']}"
    rows = [row(f"transformer step ({shape}) compiled vs eager (ms)", compiled_ms, eager_ms, STEP_TARGET,
                unit="ms", higher_is_better=True, note="forward + backward + SGD; host time")]
    eager_us, _, eager_commands = _modelled(training_step, eager_model, optimizers[0], batch)
    compiled_us, _, compiled_commands = _modelled(training_step, compiled, optimizers[1], batch)
    rows.append(row("transformer step modelled MLU time (us)", compiled_us, eager_us, None, unit="us",
                    higher_is_better=True, note=f"{compiled_commands} commands vs {eager_commands}"))
    for r in rows:
        report(format_rows([r])[1])
    return rows


def _compile_in_fresh_process(cache_dir: str) -> dict:
    environment = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir)
    result = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT], capture_output=True, text=True,
                            env=environment, timeout=1800)
    if result.returncode != 0:
        raise RuntimeError(f"the compile-time process failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def compile_rows(report) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlusim-compile-bench-") as cache_dir:
        for label, target in (("cold", COLD_TARGET_S), ("warm (second process)", WARM_TARGET_S)):
            times = _compile_in_fresh_process(cache_dir)
            seconds = times["first_s"] - times["steady_s"]
            r = row(f"transformer block compile, {label} (s)", seconds, None, None, unit="s",
                    note=f"target <= {target:g} s; first step {times['first_s']:.1f} s, later steps "
                         f"{times['steady_s'] * 1e3:.0f} ms, imports {times['import_s']:.1f} s (not counted)")
            r["target"], r["pass"] = target, seconds <= target
            rows.append(r)
            report(format_rows([r])[1])
    return rows


def run(report=print, quick: bool = False) -> list[dict]:
    """Run the compile benchmark; returns its rows."""
    import torch  # noqa: F401
    import torch_mlu  # noqa: F401
    report(format_rows([])[0])
    rows = chain_rows(report, 1024 if quick else CHAIN_SIZE, repeats=3 if quick else 5)
    block = dict(BLOCK, dim=64, batch=2) if quick else BLOCK
    rows += step_rows(report, repeats=3 if quick else 7, block=block)
    rows += compile_rows(report)
    return rows


def main(argv=None) -> int:
    return run_main(run, __doc__.split("\n\n")[0], "smaller sizes (checks that the benchmark runs)", argv)


if __name__ == "__main__":
    sys.exit(main())
