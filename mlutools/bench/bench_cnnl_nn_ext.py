"""The "nn-ext" benchmark: flash attention and interpolation against their baselines, measured in the same run on the
same device (the cases in mlutools/bench/cases/attention.py and pooling.py).

- Flash attention forward, batch 4, 16 heads, sequence 2048, head dim 64, half: host time of cnnlFlashAttentionForward
  against the composed attention on the same device (cnnlBatchMatMulBCast_v2 with alpha = 1/sqrt(d) and TRANSB,
  cnnlSoftmaxForward, cnnlBatchMatMulBCast; target ratio <= 0.7), and the peak extra host memory of each (tracemalloc
  over one synced call): flash attention's grows with the sequence (its blocks are capped at QUERY_BLOCK x KEY_BLOCK
  scores per thread), the composed one holds whole score matrices. Flash attention's peak is also measured at half
  the sequence: the ratio of the two is ~2 or less for O(sequence) memory (4 for O(sequence^2)).
- Interpolation, bilinear, 2x, NCHW 16x64x128x128 float32: cnnlInterp_v3 against the separable numpy resize
  (target <= 1.0).

Run `mlusim bench nn-ext` or `python benchmarks/bench_cnnl_nn_ext.py`; `run(report=print)` returns the result rows of
mlutools.bench.common.row.
"""
from __future__ import annotations

import tracemalloc
from typing import Callable

from mlutools.bench.cases import Arena, attention, pooling
from mlutools.bench.common import paired_median_ms, reported, row

ATTENTION_SHAPE = (4, 16, 2048, 64)
ATTENTION_TARGET = 0.7
INTERPOLATION_SHAPE = (16, 64, 128, 128)
INTERPOLATION_TARGET = 1.0
REPEATS = 3
WARMUP = 1


def _synced(arena: Arena, call: Callable[[], None]) -> Callable[[], None]:
    def once():
        call()
        arena.sync()
    return once


def _peak_bytes(function: Callable[[], None]) -> int:
    """Peak bytes allocated on the host (all threads) while `function` runs."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def attention_rows() -> list[dict]:
    arena = Arena()
    try:
        flash, _, _ = attention.flash_attention_call(arena, ATTENTION_SHAPE, "half")
        composed, score_bytes = attention.composed_attention(arena, ATTENTION_SHAPE, "half")
        flash, composed = _synced(arena, flash), _synced(arena, composed)
        flash_ms, composed_ms = paired_median_ms(flash, composed, repeats=REPEATS, warmup=WARMUP)
        flash_peak, composed_peak = _peak_bytes(flash), _peak_bytes(composed)
        half_shape = ATTENTION_SHAPE[:2] + (ATTENTION_SHAPE[2] // 2, ATTENTION_SHAPE[3])
        shorter, _, _ = attention.flash_attention_call(arena, half_shape, "half")
        shorter_peak = _peak_bytes(_synced(arena, shorter))
    finally:
        arena.free()
    shape = "x".join(map(str, ATTENTION_SHAPE))
    mib = 2 ** 20
    return [row(f"flash attention fwd half {shape} vs composed", flash_ms, composed_ms, ATTENTION_TARGET),
            row("flash attention peak host MiB vs composed", flash_peak / mib, composed_peak / mib, None, unit="MiB",
                note=f"composed also holds {score_bytes / mib:.0f} MiB of scores in device memory"),
            row(f"flash attention peak growth, seq {half_shape[2]} -> {ATTENTION_SHAPE[2]}", flash_peak / mib,
                shorter_peak / mib, 2.5, unit="MiB", note="O(seq): <= ~2, O(seq^2): 4")]


def interpolation_rows() -> list[dict]:
    arena = Arena()
    try:
        call, values = pooling.interpolation_call(arena, INTERPOLATION_SHAPE, "float")
        out_h, out_w = 2 * INTERPOLATION_SHAPE[2], 2 * INTERPOLATION_SHAPE[3]
        cnnl_ms, numpy_ms = paired_median_ms(_synced(arena, call), lambda: pooling.numpy_bilinear(values, out_h, out_w),
                                             repeats=REPEATS + 2, warmup=WARMUP)
    finally:
        arena.free()
    shape = "x".join(map(str, INTERPOLATION_SHAPE))
    return [row(f"interp bilinear 2x NCHW {shape} f32 vs numpy", cnnl_ms, numpy_ms, INTERPOLATION_TARGET)]


def run(report: Callable[[str], None] = print) -> list[dict]:
    """Run every case; report the table; return the rows."""
    rows = attention_rows() + interpolation_rows()
    return reported(rows, report)


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
