"""Neural-network op benchmark: convolution forward over the ResNet-50 layer shapes (batch 8, float32, NHWC) against
an im2col + numpy-BLAS baseline, and softmax / layer norm over (4096, 4096) float32 against vectorised numpy; where
torch is importable, also the convolution's ratio to torch.nn.functional.conv2d on the CPU. Every time is the
median of repeats after warm-up, measured in alternation with its numpy reference in the same run (torch is timed
on its own right after, since its OpenMP threads keep spinning after each call).

Run as a script (`python benchmarks/bench_cnnl_nn.py`) or call `run(report=print)`, which returns one dict per case:
name, cnnl_ms, numpy_ms, ratio (cnnl / reference), limit, ok, and torch_ms / torch_ratio for convolutions.
"""
from __future__ import annotations

from typing import Callable, Optional

from mlutools.bench.cases import attention, convolution, normalization
from mlutools.bench.common import paired_median_ms
from mlutools.bench.op_bench import OpBench

WARMUP = 2
REPEATS = 7
CONV_LIMIT = 1.0
TORCH_STRETCH = 1.5
ROW_OP_LIMIT = 1.0


def _row(name, cnnl_ms, numpy_ms, limit, torch_ms: Optional[float] = None) -> dict:
    ratio = cnnl_ms / numpy_ms
    row = dict(name=name, cnnl_ms=cnnl_ms, numpy_ms=numpy_ms, ratio=ratio, limit=limit, ok=ratio <= limit)
    if torch_ms is not None:
        row.update(torch_ms=torch_ms, torch_ratio=cnnl_ms / torch_ms)
    return row


def _line(row: dict) -> str:
    text = (f"{row['name']:34s} {row['cnnl_ms']:9.2f} {row['numpy_ms']:9.2f} {row['ratio']:6.2f} "
            f"{row['limit']:6.2f}")
    if "torch_ms" in row:
        text += f" {row['torch_ms']:9.2f} {row['torch_ratio']:6.2f}"
    return text + ("" if row["ok"] else "  OVER")


def run(report: Callable[[str], None] = print) -> list[dict]:
    """Run every case; report a table line per case; return the results."""
    with_torch = convolution.torch_or_none() is not None
    report(f"{'case':34s} {'cnnl ms':>9s} {'ref ms':>9s} {'ratio':>6s} {'limit':>6s}"
           + (f" {'torch ms':>9s} {'vs torch':>6s}" if with_torch else "  (torch not importable)"))
    results = []
    for name, size, cin, cout, k, stride, padding in convolution.RESNET50_LAYERS:
        device = OpBench()
        try:
            op, baseline, torch_conv = convolution.resnet_layer_case(device, size, cin, cout, k, stride, padding)
            times = paired_median_ms(op, baseline, repeats=REPEATS, warmup=WARMUP)
            # torch apart: its OpenMP threads spin after each call and would slow whatever runs next
            times += paired_median_ms(torch_conv, repeats=REPEATS, warmup=WARMUP) if torch_conv else []
        finally:
            device.close()
        row = _row(f"conv {name}", times[0], times[1], CONV_LIMIT, times[2] if torch_conv else None)
        results.append(row)
        report(_line(row))
    total = {key: sum(r[key] for r in results) for key in ("cnnl_ms", "numpy_ms")}
    totals = _row("conv ResNet-50 layer set (sum)", total["cnnl_ms"], total["numpy_ms"], CONV_LIMIT,
                  sum(r["torch_ms"] for r in results) if with_torch else None)
    if with_torch:
        totals["torch_limit"] = TORCH_STRETCH
    results.append(totals)
    report(_line(totals))
    for name, case in (("softmax f32 4096x4096", attention.softmax_rows_case),
                       ("layer norm f32 4096x4096", normalization.layer_norm_rows_case)):
        device = OpBench()
        try:
            op, reference = case(device)
            cnnl_ms, numpy_ms = paired_median_ms(op, reference, repeats=REPEATS, warmup=WARMUP)
        finally:
            device.close()
        row = _row(f"{name} (vs numpy)", cnnl_ms, numpy_ms, ROW_OP_LIMIT)
        results.append(row)
        report(_line(row))
    return results


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
