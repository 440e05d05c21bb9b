"""Benchmark of the cnnl.kernels hot paths against numpy doing the same work in the same run.

Each row: median of several timed repeats after a warm-up call, our time, numpy's time, the ratio and its target.
Run as `python benchmarks/bench_cnnl_kernels.py`, or call `run(report=print)` for the rows as dicts.
"""
import ml_dtypes
import numpy as np

from cnnl import kernels
from mlutools.bench.common import paired_median_ms

REPEATS = 9


def _cases():
    rng = np.random.default_rng(0)
    n = 1 << 24
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.empty_like(a)
    yield ("add f32", "2^24", 1.0, lambda: kernels.op_tensor("add", a, b, c), lambda: np.add(a, b, out=c))
    yield ("mul f32", "2^24", 1.0, lambda: kernels.op_tensor("mul", a, b, c), lambda: np.multiply(a, b, out=c))
    yield ("relu f32", "2^24", 1.0, lambda: kernels.activation_forward("relu", a, c),
           lambda: np.maximum(a, 0, out=c))
    total = np.empty(1, np.float32)
    yield ("sum f32", "2^24", 1.0, lambda: kernels.reduce("sum", a, total, (0,)), lambda: np.sum(a))
    half, bf16 = np.empty(n, np.float16), np.empty(n, ml_dtypes.bfloat16)
    yield ("cast f32->f16", "2^24", 1.5, lambda: kernels.cast(a, half), lambda: a.astype(np.float16))
    yield ("cast f32->bf16", "2^24", 1.5, lambda: kernels.cast(a, bf16), lambda: a.astype(np.float16))
    square = rng.standard_normal((4096, 4096), dtype=np.float32)
    square_out = np.empty_like(square)
    yield ("transpose f32", "4096^2", 1.5, lambda: kernels.transpose(square, (1, 0), square_out),
           lambda: square.T.copy())
    for size in (1024, 2048):
        x = rng.standard_normal((size, size), dtype=np.float32)
        y = rng.standard_normal((size, size), dtype=np.float32)
        out = np.empty((size, size), np.float32)
        label = f"{size}^3"
        yield ("matmul f32", label, 1.15, lambda x=x, y=y, out=out: kernels.matmul(x, y, out),
               lambda x=x, y=y: np.matmul(x, y))
        for dtype, name in ((np.float16, "f16"), (ml_dtypes.bfloat16, "bf16")):
            xh, yh, oh = x.astype(dtype), y.astype(dtype), np.empty((size, size), dtype)
            yield (f"matmul {name} (vs f32 BLAS)", label, 1.5, lambda xh=xh, yh=yh, oh=oh: kernels.matmul(xh, yh, oh),
                   lambda x=x, y=y: np.matmul(x, y))


def run(report=print):
    """Time every case; report each formatted row and return the rows as dicts."""
    rows = []
    report(f"{'op':<26}{'size':>8}{'ours ms':>10}{'numpy ms':>10}{'ratio':>8}{'target':>8}  result")
    for op, size, target, ours, reference in _cases():
        # timed alternately so background load hits both alike; the warm-up run compiles or loads the kernel
        ours_ms, numpy_ms = paired_median_ms(ours, reference, repeats=REPEATS, warmup=1)
        ratio = ours_ms / numpy_ms
        row = dict(op=op, size=size, ours_ms=ours_ms, numpy_ms=numpy_ms, ratio=ratio, target=target,
                   passed=ratio <= target)
        rows.append(row)
        report(f"{op:<26}{size:>8}{ours_ms:>10.2f}{numpy_ms:>10.2f}{ratio:>8.2f}{target:>8.2f}  "
               f"{'PASS' if row['passed'] else 'FAIL'}")
    return rows


def main() -> None:
    """Run the suite and print its table; the exit status is 1 when a kernel misses its target."""
    results = run()
    raise SystemExit(0 if all(r["passed"] for r in results) else 1)


if __name__ == "__main__":
    main()
