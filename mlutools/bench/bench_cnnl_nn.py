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

import numpy as np
from numpy.lib.stride_tricks import as_strided

import cnnl
from mlutools.bench.common import paired_median_ms
from mlutools.bench.op_bench import OpBench

WARMUP = 2
REPEATS = 7
BATCH = 8
CONV_LIMIT = 1.0
TORCH_STRETCH = 1.5
ROW_OP_LIMIT = 1.0
ROWS = COLUMNS = 4096

#: ResNet-50's distinct convolution shapes: (name, input H=W, in channels, out channels, kernel, stride, padding)
RESNET50_LAYERS = [
    ("conv1 7x7/2 3->64 @224", 224, 3, 64, 7, 2, 3),
    ("layer1 1x1 64->64 @56", 56, 64, 64, 1, 1, 0),
    ("layer1 3x3 64->64 @56", 56, 64, 64, 3, 1, 1),
    ("layer1 1x1 64->256 @56", 56, 64, 256, 1, 1, 0),
    ("layer1 1x1 256->64 @56", 56, 256, 64, 1, 1, 0),
    ("layer2 1x1 256->128 @56", 56, 256, 128, 1, 1, 0),
    ("layer2 3x3/2 128->128 @56", 56, 128, 128, 3, 2, 1),
    ("layer2 1x1/2 256->512 @56", 56, 256, 512, 1, 2, 0),
    ("layer2 3x3 128->128 @28", 28, 128, 128, 3, 1, 1),
    ("layer2 1x1 128->512 @28", 28, 128, 512, 1, 1, 0),
    ("layer3 3x3 256->256 @14", 14, 256, 256, 3, 1, 1),
    ("layer3 1x1 1024->256 @14", 14, 1024, 256, 1, 1, 0),
    ("layer4 3x3 512->512 @7", 7, 512, 512, 3, 1, 1),
    ("layer4 1x1 2048->512 @7", 7, 2048, 512, 1, 1, 0),
]


def im2col_conv(x: np.ndarray, w: np.ndarray, stride: int, padding: int) -> np.ndarray:
    """The baseline: pad, im2col through as_strided + one reshape copy, one sgemm (numpy's BLAS, all cores)."""
    n, h, width, c = x.shape
    out_channels, k = w.shape[0], w.shape[1]
    xp = np.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0))) if padding else x
    ho, wo = (h + 2 * padding - k) // stride + 1, (width + 2 * padding - k) // stride + 1
    s = xp.strides
    cols = as_strided(xp, (n, ho, wo, k, k, c), (s[0], s[1] * stride, s[2] * stride, s[1], s[2], s[3]))
    return (cols.reshape(n * ho * wo, -1) @ w.reshape(out_channels, -1).T).reshape(n, ho, wo, out_channels)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def conv_case(device: OpBench, size: int, cin: int, cout: int, k: int, stride: int, padding: int):
    """(cnnl op, numpy baseline, torch reference or None) for one convolution layer."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, size, size, cin), dtype=np.float32)
    w = rng.standard_normal((cout, k, k, cin), dtype=np.float32)
    out = (size + 2 * padding - k) // stride + 1
    nhwc = cnnl.CNNL_LAYOUT_NHWC
    x_desc, w_desc = device.desc(x.shape, layout=nhwc), device.desc(w.shape, layout=nhwc)
    y_desc = device.desc((BATCH, out, out, cout), layout=nhwc)
    px, pw, py = device.put(x), device.put(w), device.empty(BATCH * out * out * cout * 4)
    conv = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(conv, 4, [padding] * 4, [stride] * 2, [1, 1], 1, cnnl.CNNL_DTYPE_FLOAT)
    algo = cnnl.getConvolutionForwardAlgorithm(device.handle, conv, x_desc, w_desc, y_desc,
                                               cnnl.CNNL_CONVOLUTION_FWD_FASTEST)
    size_ws = cnnl.getConvolutionForwardWorkspaceSize(device.handle, x_desc, w_desc, y_desc, None, conv, algo)

    def op():
        cnnl.convolutionForward(device.handle, conv, algo, None, x_desc, px, w_desc, pw, None, None, None, size_ws,
                                None, y_desc, py)

    torch = _torch()
    reference_torch = None
    if torch is not None:
        tx = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
        tw = torch.from_numpy(w).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)

        def reference_torch():
            with torch.no_grad():
                torch.nn.functional.conv2d(tx, tw, stride=stride, padding=padding)

    return device.synced(op), (lambda: im2col_conv(x, w, stride, padding)), reference_torch


def softmax_case(device: OpBench):
    x = np.random.default_rng(1).standard_normal((ROWS, COLUMNS), dtype=np.float32)
    desc = device.desc(x.shape)
    px, py = device.put(x), device.empty(x.nbytes)

    def op():
        cnnl.softmaxForward(device.handle, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None,
                            desc, px, None, desc, py)

    def reference():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return device.synced(op), reference


def layer_norm_case(device: OpBench):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((ROWS, COLUMNS), dtype=np.float32)
    weight, bias = rng.standard_normal(COLUMNS, dtype=np.float32), rng.standard_normal(COLUMNS, dtype=np.float32)
    desc, wb_desc, stats_desc = device.desc(x.shape), device.desc((COLUMNS,)), device.desc((ROWS,))
    px, py = device.put(x), device.empty(x.nbytes)
    pw, pb = device.put(weight), device.put(bias)
    mean, rstd = device.empty(ROWS * 4), device.empty(ROWS * 4)

    def op():
        cnnl.layerNormForward(device.handle, desc, px, 1, wb_desc, pw, pb, 1e-5, None, 0, desc, py, stats_desc, mean,
                              rstd)

    def reference():
        mu = x.mean(axis=1, keepdims=True)
        var = x.var(axis=1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * weight + bias

    return device.synced(op), reference


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
    with_torch = _torch() is not None
    report(f"{'case':34s} {'cnnl ms':>9s} {'ref ms':>9s} {'ratio':>6s} {'limit':>6s}"
           + (f" {'torch ms':>9s} {'vs torch':>6s}" if with_torch else "  (torch not importable)"))
    results = []
    for name, size, cin, cout, k, stride, padding in RESNET50_LAYERS:
        device = OpBench()
        try:
            op, baseline, torch_conv = conv_case(device, size, cin, cout, k, stride, padding)
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
    for name, case in (("softmax f32 4096x4096", softmax_case), ("layer norm f32 4096x4096", layer_norm_case)):
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
