"""The sample kernels (cnrt.samples) against numpy, and the intrinsics in float32, half and bfloat16."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import cnrt
from mlusim import bang

from ..conftest import from_device, to_device

from cnrt.samples import sram_reduction, tiled_matmul, vector_add


@settings(max_examples=5, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 200_000), seed=st.integers(0, 2**31))
def test_vector_add(board, n, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    np.testing.assert_array_equal(vector_add.run(x, y), x + y)


@settings(max_examples=5, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 300_000), seed=st.integers(0, 2**31))
def test_sram_reduction(board, n, seed):
    x = np.random.default_rng(seed).standard_normal(n, dtype=np.float32)
    assert sram_reduction.run(x) == pytest.approx(float(x.sum(dtype=np.float64)), abs=1e-3 * np.sqrt(n))


@settings(max_examples=4, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(1, 3), k=st.integers(1, 3), n=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_tiled_matmul(board, m, k, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m * 32, k * 64), dtype=np.float32)
    b = rng.standard_normal((k * 64, n * 32), dtype=np.float32)
    np.testing.assert_allclose(tiled_matmul.run(a, b), a @ b, rtol=1e-4, atol=1e-4)


@bang.kernel
def float_ops(ctx, a: bang.gdram(bang.float32), b: bang.gdram(bang.float32), out: bang.gdram(bang.float32), n: int):
    """out holds 14 results of n elements each."""
    x = bang.nram(ctx, "x", bang.float32, n)
    y = bang.nram(ctx, "y", bang.float32, n)
    r = bang.nram(ctx, "r", bang.float32, n)
    t = bang.nram(ctx, "t", bang.float32, n)
    w = bang.wram(ctx, "w", bang.float32, n)
    bang.memcpy(ctx, x, a, n * 4, bang.GDRAM2NRAM)
    bang.memcpy(ctx, y, b, n * 4, bang.GDRAM2NRAM)
    for op in range(14):
        if op == 0:
            bang.add(ctx, r, x, y, n)
        elif op == 1:
            bang.sub(ctx, r, x, y, n)
        elif op == 2:
            bang.mul(ctx, r, x, y, n)
        elif op == 3:
            bang.maximum(ctx, r, x, y, n)
        elif op == 4:
            bang.minimum(ctx, r, x, y, n)
        elif op == 5:
            bang.mul_scalar(ctx, r, x, 2.5, n)
        elif op == 6:
            bang.add_scalar(ctx, r, x, -1.5, n)
        elif op == 7:
            bang.active_relu(ctx, r, x, n)
        elif op == 8:
            bang.active_sigmoid(ctx, r, x, n)
        elif op == 9:
            bang.active_exp(ctx, r, x, n)
        elif op == 10:
            bang.active_tanh(ctx, r, x, n)
        elif op == 11:
            bang.write_value(ctx, r, n, 0.0)
            bang.reduce_sum(ctx, r, x, n)
            bang.reduce_max(ctx, r + 16, x, n)
        elif op == 12:
            bang.transpose(ctx, r, x, 16, n // 16)
        else:
            bang.memcpy(ctx, w, y, n * 4, bang.NRAM2WRAM)
            bang.matmul(ctx, t, x, w, 16, n // 16, 16)
            bang.memcpy(ctx, r, t, 256 * 4, bang.NRAM2NRAM)
        bang.memcpy(ctx, out + op * n, r, n * 4, bang.NRAM2GDRAM)


def expected_float_ops(x, y):
    n = x.size
    results = [x + y, x - y, x * y, np.maximum(x, y), np.minimum(x, y), x * np.float32(2.5), x - np.float32(1.5),
               np.maximum(x, 0), 1 / (1 + np.exp(-x)), np.exp(x), np.tanh(x)]
    reduced = np.zeros(n, np.float32)
    reduced[0], reduced[16] = x.sum(), x.max()
    results += [reduced, x.reshape(16, n // 16).T.ravel()]
    product = x.reshape(16, n // 16) @ y[:(n // 16) * 16].reshape(n // 16, 16)
    results.append(np.concatenate([product.ravel(), np.zeros(n - 256, np.float32)]) if n > 256 else product.ravel())
    return results


def test_float32_intrinsics(queue):
    n = 256
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = cnrt.malloc(14 * n * 4)
    float_ops[(1, 1, 1), 1, queue](to_device(x), to_device(y), out, n)
    cnrt.queueSync(queue)
    got = from_device(out, 14 * n, np.float32).reshape(14, n)
    for op, want in enumerate(expected_float_ops(x, y)):
        np.testing.assert_allclose(got[op][:want.size], want, rtol=2e-5, atol=2e-5, err_msg=f"op {op}")
    counts = float_ops.last_launch.counts
    assert counts.macs == {"float32": 16 * 16 * 16} and counts.copy_bytes["NRAM2WRAM"] == n * 4


@bang.kernel
def half_ops(ctx, a: bang.gdram(bang.half), out: bang.gdram(bang.half), n: int):
    x = bang.nram(ctx, "x", bang.half, n)
    r = bang.nram(ctx, "r", bang.half, n)
    bang.memcpy(ctx, x, a, n * 2, bang.GDRAM2NRAM)
    bang.add(ctx, r, x, x, n)
    bang.memcpy(ctx, out, r, n * 2, bang.NRAM2GDRAM)
    bang.mul_scalar(ctx, r, x, 0.1, n)
    bang.memcpy(ctx, out + n, r, n * 2, bang.NRAM2GDRAM)
    bang.active_exp(ctx, r, x, n)
    bang.memcpy(ctx, out + 2 * n, r, n * 2, bang.NRAM2GDRAM)


@bang.kernel
def bfloat16_ops(ctx, a: bang.gdram(bang.bfloat16), out: bang.gdram(bang.bfloat16), n: int):
    x = bang.nram(ctx, "x", bang.bfloat16, n)
    r = bang.nram(ctx, "r", bang.bfloat16, n)
    bang.memcpy(ctx, x, a, n * 2, bang.GDRAM2NRAM)
    bang.add(ctx, r, x, x, n)
    bang.memcpy(ctx, out, r, n * 2, bang.NRAM2GDRAM)
    bang.mul_scalar(ctx, r, x, 0.1, n)
    bang.memcpy(ctx, out + n, r, n * 2, bang.NRAM2GDRAM)
    bang.active_exp(ctx, r, x, n)
    bang.memcpy(ctx, out + 2 * n, r, n * 2, bang.NRAM2GDRAM)


@pytest.mark.parametrize("kernel,dtype", [(half_ops, np.float16), (bfloat16_ops, ml_dtypes.bfloat16)])
def test_low_precision_intrinsics_round_like_the_stored_type(queue, kernel, dtype):
    n = 128
    x = np.random.default_rng(4).uniform(-4, 4, n).astype(dtype)
    out = cnrt.malloc(3 * n * 2)
    kernel[(1, 1, 1), 1, queue](to_device(x), out, n)
    cnrt.queueSync(queue)
    got = from_device(out, 3 * n, dtype).reshape(3, n).astype(np.float32)
    wide = x.astype(np.float32)
    for op, want in enumerate([wide + wide, wide * np.float32(0.1), np.exp(wide)]):
        np.testing.assert_array_equal(got[op], want.astype(dtype).astype(np.float32), err_msg=f"op {op}")
