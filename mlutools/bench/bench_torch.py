"""PyTorch "mlu" device benchmark (torch_mlu): the numbers of the torch device issue, each beside its host reference
measured in the same run.

- per-op overhead: a 1-element `a + b` on mlu, median of single calls (target <= 30 us), and 1000 of them plus
  torch.mlu.synchronize() (target <= 40 ms); torch's own CPU add is the reference.
- a large op: `a @ b`, 1024^3 float, on mlu vs the same cnnl.matMul called directly on the same buffers
  (target <= 1.1x), timed in alternation.
- one training step of a small CNN (conv, batch norm, relu, pool, linear, cross entropy, SGD with momentum) on mlu
  vs the same step in torch on the CPU (target <= 2x).
Also printed: where a tiny op's time goes (allocation, dispatch, the queued cnnl call) and the CPU-fallback cost.

Run: mlusim bench torch, or python benchmarks/bench_torch.py [--quick]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

from mlutools.bench import torch_spin  # before torch: libgomp reads its setting when torch loads it

import torch
import torch.nn.functional as F
from torch import nn

import torch_mlu  # noqa: F401  (registers the device when torch did not autoload it)
import cnnl
import cnrt
from mlutools.bench.common import paired_median_ms, reported, row


def _sync() -> None:
    torch.mlu.synchronize()


def _single_call_median_us(function, calls: int) -> float:
    for _ in range(200):
        function()
    _sync()
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    _sync()
    return statistics.median(samples) * 1e6


def per_op_rows(calls: int) -> list[dict]:
    a, b = torch.ones(1, device="mlu"), torch.ones(1, device="mlu")
    ca, cb = torch.ones(1), torch.ones(1)
    add_us = _single_call_median_us(lambda: a + b, calls)
    cpu_us = _single_call_median_us(lambda: ca + cb, calls)

    def thousand() -> None:
        for _ in range(1000):
            a + b
        _sync()

    def thousand_cpu() -> None:
        for _ in range(1000):
            ca + cb

    burst_ms, cpu_burst_ms = paired_median_ms(thousand, thousand_cpu, repeats=7)
    rows = [row("1-element add, median of single calls (us)", add_us, cpu_us, None, unit="us",
                note="reference: torch CPU add"),
            row("1000 tiny adds + synchronize (ms)", burst_ms, cpu_burst_ms, None, unit="ms",
                note="reference: 1000 torch CPU adds")]
    _absolute_target(rows[0], 30.0, "target: <= 30 us")
    _absolute_target(rows[1], 40.0, "target: <= 40 ms")
    return rows


def _absolute_target(result: dict, limit: float, note: str) -> None:
    result["target"] = None
    result["pass"] = result["ours"] <= limit
    result["note"] = f"{note}; {result['note']}"


def breakdown_rows(calls: int) -> list[dict]:
    """Where a tiny op's host time goes (medians of single calls, no targets)."""
    a = torch.ones(1, device="mlu")
    cpu = torch.ones(1)
    empty_us = _single_call_median_us(lambda: torch.empty(1, device="mlu"), calls)
    cpu_empty_us = _single_call_median_us(lambda: torch.empty(1), calls)
    fill_us = _single_call_median_us(lambda: a.fill_(1.0), calls)
    with torch_mlu.fallback.mode("silent"):
        fallback_us = _single_call_median_us(lambda: torch.tanh(a), max(200, calls // 10))
    cpu_tanh_us = _single_call_median_us(lambda: torch.tanh(cpu), calls)
    return [row("torch.empty(1) + free on mlu (us)", empty_us, cpu_empty_us, None, unit="us",
                note="caching allocator; reference: CPU"),
            row("fill_ of 1 element (us)", fill_us, None, None, unit="us", note="public cnnlFill_v3"),
            row("1-element op on the CPU fallback (us)", fallback_us, cpu_tanh_us, None, unit="us",
                note="tanh: copies to the host and back")]


def matmul_rows(size: int) -> list[dict]:
    a = torch.randn(size, size, device="mlu")
    b = torch.randn(size, size, device="mlu")
    out = torch.empty(size, size, device="mlu")
    handle = cnnl.create()
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [size, size])
    queue = cnnl.getQueue(handle)

    def through_torch() -> None:
        a @ b
        _sync()

    def direct() -> None:
        cnnl.matMul(handle, False, False, 1.0, desc, a.data_ptr(), desc, b.data_ptr(), 0.0, desc, out.data_ptr())
        cnrt.queueSync(queue)

    ours_ms, direct_ms = paired_median_ms(through_torch, direct, repeats=7)
    return [row(f"a @ b {size}^3 float on mlu (ms)", ours_ms, direct_ms, 1.1, unit="ms",
                note="reference: cnnl.matMul called directly, in alternation")]


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.conv2, self.bn2 = nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.flatten(1))


def _cnn_step(device: str):
    torch.manual_seed(0)
    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(32, 3, 32, 32).to(device)
    labels = torch.randint(0, 10, (32,)).to(device)

    def step() -> None:
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()
        if device == "mlu":
            _sync()

    return step


def training_rows() -> list[dict]:
    with torch_mlu.fallback.mode("silent"):
        mlu_step = _cnn_step("mlu")
        mlu_ms, cpu_ms = paired_median_ms(mlu_step, _cnn_step("cpu"), repeats=7)
        before = sum(torch_mlu.fallback.counts().values())
        mlu_step()
        fallen = sum(torch_mlu.fallback.counts().values()) - before
    return [row("small CNN training step, batch 32 (ms)", mlu_ms, cpu_ms, 2.0, unit="ms",
                note=f"reference: torch CPU; {fallen} ops per step run on the CPU fallback")]


def run(report=print, quick: bool = False) -> list[dict]:
    """Every figure of the suite (`mlusim bench torch`); `quick` makes fewer calls (a smoke test)."""
    calls = 500 if quick else 3000
    report(f"torch {torch.__version__}; torch_mlu {torch_mlu.__version__}; board {torch.mlu.get_device_name()}; "
           f"{torch_spin.note()}; times are host times on this machine (its load shows in them; the ratios are "
           "what counts)")
    rows = per_op_rows(calls)
    rows += matmul_rows(256 if quick else 1024)
    rows += training_rows()
    rows += breakdown_rows(calls)
    return reported(rows, report)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke test)")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick)
    return 0 if all(r["pass"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
