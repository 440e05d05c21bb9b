"""CNNL op benchmark: each op through the API (op enqueue + cnrtQueueSync) against the host's own numpy/BLAS time
for the same work, measured in the same run (median of repeats after warm-up).

Run as a script (`python benchmarks/bench_cnnl.py`) or call `run(report=print)`, which returns one dict per case:
name, cnnl_ms, numpy_ms, ratio (cnnl / numpy), limit (the ratio the issue allows) and ok.
"""
from __future__ import annotations

import time
from typing import Callable

import ml_dtypes
import numpy as np

import cnnl
import cnrt
from mlutools.bench.common import paired_median_ms
from mlutools.bench.op_bench import OpBench

WARMUP = 2
REPEATS = 7
ELEMENTS = 1 << 24


# Each case sets up its data on `bench` and returns (the cnnl op, the numpy reference for the same work).

def _op_tensor_case(bench: OpBench, op: int, numpy_op):
    a, b = np.random.rand(ELEMENTS).astype(np.float32), np.random.rand(ELEMENTS).astype(np.float32)
    pa, pb, pc = bench.put(a), bench.put(b), bench.empty(a.nbytes)
    desc = bench.desc([ELEMENTS])
    op_desc = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op_desc, op, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    workspace = cnnl.getOpTensorWorkspaceSize(bench.handle, desc, desc, desc)
    out = np.empty_like(a)
    return (lambda: cnnl.opTensor(bench.handle, op_desc, 1, desc, pa, 1, desc, pb, None, workspace, 0, desc, pc),
            lambda: numpy_op(a, b, out=out))


def case_add(bench):
    return _op_tensor_case(bench, cnnl.CNNL_OP_TENSOR_ADD, np.add)


def case_mul(bench):
    return _op_tensor_case(bench, cnnl.CNNL_OP_TENSOR_MUL, np.multiply)


def case_relu(bench):
    x = np.random.randn(ELEMENTS).astype(np.float32)
    px, py = bench.put(x), bench.empty(x.nbytes)
    desc = bench.desc([ELEMENTS])
    act = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(act, cnnl.CNNL_ACTIVATION_RELU, cnnl.CNNL_NOT_PROPAGATE_NAN, 0.0)
    out = np.empty_like(x)
    return (lambda: cnnl.activationForward(bench.handle, act, None, desc, px, None, desc, py),
            lambda: np.maximum(x, 0, out=out))


def case_reduce_sum(bench):
    x = np.random.rand(ELEMENTS).astype(np.float32)
    px, py = bench.put(x), bench.empty(4)
    x_desc, y_desc = bench.desc([ELEMENTS]), bench.desc([1])
    reduce_desc = cnnl.createReduceDescriptor()
    cnnl.setReduceDescriptor(reduce_desc, [0], cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_DTYPE_FLOAT,
                             cnnl.CNNL_NOT_PROPAGATE_NAN, cnnl.CNNL_REDUCE_NO_INDICES, cnnl.CNNL_32BIT_INDICES)
    workspace = cnnl.getReduceOpWorkspaceSize(bench.handle, x_desc, y_desc, reduce_desc)
    return (lambda: cnnl.reduce(bench.handle, reduce_desc, None, workspace, None, x_desc, px, 0, None, None, y_desc,
                                py),
            lambda: np.sum(x))


def case_transpose(bench):
    n = 4096
    x = np.random.rand(n, n).astype(np.float32)
    px, py = bench.put(x), bench.empty(x.nbytes)
    x_desc, y_desc = bench.desc([n, n]), bench.desc([n, n])
    transpose_desc = cnnl.createTransposeDescriptor()
    cnnl.setTransposeDescriptor(transpose_desc, [1, 0])
    workspace = cnnl.getTransposeWorkspaceSize(bench.handle, x_desc, transpose_desc)
    return (lambda: cnnl.transpose_v2(bench.handle, transpose_desc, x_desc, px, y_desc, py, None, workspace),
            lambda: x.T.copy())


def matmul_case(n: int, dtype_code: int, dtype):
    """matMul of n x n matrices of `dtype`, against numpy's float32 matmul of the same size."""
    def case(bench):
        a = np.random.rand(n, n).astype(np.float32)
        b = np.random.rand(n, n).astype(np.float32)
        pa, pb, pc = bench.put(a.astype(dtype)), bench.put(b.astype(dtype)), bench.empty(n * n * 4)
        desc = bench.desc([n, n], dtype_code)
        out = np.empty_like(a)
        return (lambda: cnnl.matMul(bench.handle, False, False, 1.0, desc, pa, desc, pb, 0.0, desc, pc),
                lambda: np.matmul(a, b, out=out))
    return case


def cast_case(dtype_code: int, cast_type: int):
    """Cast 2^24 float32 values to a 16-bit float type, against numpy's astype(float16)."""
    def case(bench):
        x = np.random.randn(ELEMENTS).astype(np.float32)
        px, py = bench.put(x), bench.empty(x.size * 2)
        x_desc, y_desc = bench.desc([ELEMENTS]), bench.desc([ELEMENTS], dtype_code)
        return (lambda: cnnl.castDataType(bench.handle, x_desc, px, cast_type, y_desc, py),
                lambda: x.astype(np.float16))
    return case


def cases():
    """(name, allowed ratio, case) for every benchmark case."""
    return [
        ("add f32 2^24 (vs np.add)", 1.0, case_add),
        ("mul f32 2^24 (vs np.multiply)", 1.0, case_mul),
        ("relu f32 2^24 (vs np.maximum)", 1.0, case_relu),
        ("reduce sum f32 2^24 (vs np.sum)", 1.0, case_reduce_sum),
        ("transpose f32 4096^2 (vs .T.copy())", 1.5, case_transpose),
        ("matMul f32 1024^3 (vs np.matmul f32)", 1.15, matmul_case(1024, cnnl.CNNL_DTYPE_FLOAT, np.float32)),
        ("matMul f32 2048^3 (vs np.matmul f32)", 1.15, matmul_case(2048, cnnl.CNNL_DTYPE_FLOAT, np.float32)),
        ("matMul half 1024^3 (vs np.matmul f32)", 1.5, matmul_case(1024, cnnl.CNNL_DTYPE_HALF, np.float16)),
        ("matMul bf16 1024^3 (vs np.matmul f32)", 1.5,
         matmul_case(1024, cnnl.CNNL_DTYPE_BFLOAT16, ml_dtypes.bfloat16)),
        ("matMul half 2048^3 (vs np.matmul f32)", 1.5, matmul_case(2048, cnnl.CNNL_DTYPE_HALF, np.float16)),
        ("matMul bf16 2048^3 (vs np.matmul f32)", 1.5,
         matmul_case(2048, cnnl.CNNL_DTYPE_BFLOAT16, ml_dtypes.bfloat16)),
        ("cast f32->half 2^24 (vs astype f16)", 1.5, cast_case(cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_CAST_FLOAT_TO_HALF)),
        ("cast f32->bf16 2^24 (vs astype f16)", 1.5,
         cast_case(cnnl.CNNL_DTYPE_BFLOAT16, cnnl.CNNL_CAST_FLOAT_TO_BFLOAT16)),
    ]


def api_overhead_us(calls: int = 2000) -> float:
    """Host time of one opTensor call on a 1000-element tensor while the queue is held (no kernel runs)."""
    import threading
    bench = OpBench()
    try:
        n = 1000
        pa, pb, pc = bench.empty(4 * n), bench.empty(4 * n), bench.empty(4 * n)
        desc = bench.desc([n])
        op_desc = cnnl.createOpTensorDescriptor()
        cnnl.setOpTensorDescriptor(op_desc, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, 0)
        release = threading.Event()
        cnrt.invokeHostFunc(bench.queue, lambda _: release.wait(), None)
        start = time.perf_counter()
        for _ in range(calls):
            cnnl.opTensor(bench.handle, op_desc, 1, desc, pa, 1, desc, pb, None, 0, 0, desc, pc)
        elapsed = time.perf_counter() - start
        release.set()
        try:
            cnrt.queueSync(bench.queue)
        except cnrt.CnrtError:
            pass  # the poisoned inputs may make values NaN; only the call time matters here
        return elapsed / calls * 1e6
    finally:
        bench.close()


def run(report: Callable[[str], None] = print) -> list[dict]:
    """Run every case; report a table line per case; return the results."""
    results = []
    report(f"{'case':44s} {'cnnl ms':>9s} {'numpy ms':>9s} {'ratio':>6s} {'limit':>6s}")
    for name, limit, case in cases():
        bench = OpBench()
        try:
            op, reference = case(bench)
            cnnl_ms, numpy_ms = paired_median_ms(bench.synced(op), reference, repeats=REPEATS, warmup=WARMUP)
        finally:
            bench.close()
        ratio = cnnl_ms / numpy_ms
        results.append(dict(name=name, cnnl_ms=cnnl_ms, numpy_ms=numpy_ms, ratio=ratio, limit=limit,
                            ok=ratio <= limit))
        report(f"{name:44s} {cnnl_ms:9.2f} {numpy_ms:9.2f} {ratio:6.2f} {limit:6.2f}"
               f"{'' if ratio <= limit else '  OVER'}")
    overhead = api_overhead_us()
    results.append(dict(name="API overhead per opTensor call (us)", cnnl_ms=overhead / 1e3, numpy_ms=None,
                        ratio=None, limit=None, ok=overhead < 100))
    report(f"API overhead per opTensor call: {overhead:.1f} us")
    return results


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
