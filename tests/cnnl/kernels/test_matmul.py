"""matmul: transposes, alpha/beta, batch broadcasting, every dtype, against float64 / exact references."""
import importlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import matmul

from ..references import float_to_int, round_to_format, to_f64
from .strategies import FLOATS, INTS, NUMERIC, SETTINGS, operands, outputs
from ..tolerances import assert_close


@st.composite
def batch_shapes(draw):
    """Two batch shapes that broadcast together."""
    out = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    def operand():
        shape = tuple(n if draw(st.booleans()) else 1 for n in out)
        return shape[draw(st.integers(0, len(shape))):]
    return operand(), operand()


@given(dtype=st.sampled_from(NUMERIC), trans_a=st.booleans(), trans_b=st.booleans(), batches=batch_shapes(),
       m=st.integers(1, 7), n=st.integers(1, 7), k=st.integers(1, 9), data=st.data())
@SETTINGS
def test_matmul(dtype, trans_a, trans_b, batches, m, n, k, data):
    is_int = dtype in INTS
    out_dtype = data.draw(st.sampled_from([dtype, np.dtype(np.float32)] if is_int else [dtype]))
    alpha, beta = data.draw(st.sampled_from([(1.0, 0.0), (0.5, 0.0), (2.0, -1.0)]))
    a_shape = batches[0] + ((k, m) if trans_a else (m, k))
    b_shape = batches[1] + ((n, k) if trans_b else (k, n))
    a = data.draw(operands(a_shape, dtype, -4.0, 4.0))
    b = data.draw(operands(b_shape, dtype, -4.0, 4.0))
    if is_int and dtype.itemsize > 2:  # keep int32/int64 products exact and in range
        a, b = (a % 1000).astype(dtype), (b % 1000).astype(dtype)
    out_shape = np.broadcast_shapes(batches[0], batches[1]) + (m, n)
    out = data.draw(outputs(out_shape, out_dtype) if beta == 0 else operands(out_shape, out_dtype, -4.0, 4.0))
    previous = to_f64(out)
    matmul(a, b, out, trans_a, trans_b, alpha, beta)
    left, right = to_f64(a), to_f64(b)
    left = np.swapaxes(left, -1, -2) if trans_a else left
    right = np.swapaxes(right, -1, -2) if trans_b else right
    expected = alpha * (left @ right) + (beta * previous if beta else 0.0)
    if out_dtype in INTS:
        np.testing.assert_array_equal(out.astype(object), float_to_int(expected, out_dtype))
        return
    scale = alpha * (np.abs(left) @ np.abs(right)) * k + (abs(beta) * np.abs(previous) if beta else 0.0)
    assert_close(out, expected, out_dtype, scale=scale)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_matmul_rounds_once_from_float32_accumulation(dtype):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((64, 300)).astype(dtype)
    b = rng.standard_normal((300, 48)).astype(dtype)
    out = np.empty((64, 48), dtype)
    matmul(a, b, out)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    float32_sum = a.astype(np.float32) @ b.astype(np.float32)
    # the stored value is the correctly rounded float32 result, up to one rounding of float32 noise
    assert np.abs(out.astype(np.float64) - round_to_format(float32_sum.astype(np.float64), dtype)).max() <= \
        np.abs(exact).max() * 2.0 ** -7
    assert_close(out, exact, dtype, scale=np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) * 300)


def test_beta_zero_ignores_nan_and_shape_errors():
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    out = np.full((2, 4), np.nan, np.float32)
    matmul(a, b, out, alpha=2.0, beta=0.0)
    assert (out == 6.0).all()
    with pytest.raises(ValueError):
        matmul(a, a, out)


@pytest.mark.parametrize("dtype", FLOATS)
def test_int8_inputs_into_float_output(dtype):
    a = np.full((2, 200), 100, np.int8)
    b = np.full((200, 2), -100, np.int8)
    out = np.empty((2, 2), np.float32)
    matmul(a, b, out)
    assert (out == -2_000_000.0).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans_b", [False, True])
def test_batches_shared_out_over_threads_match_numpy(dtype, trans_b):
    """A batch of small products is split by batch entry over the pool: the same values as one numpy matmul, for
    batch shapes of several axes, a transposed operand and an output that is a strided view."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 6, 48, 40)).astype(dtype)
    b = rng.standard_normal((3, 6, 40, 56) if not trans_b else (3, 6, 56, 40)).astype(dtype)
    expected = np.matmul(a, np.swapaxes(b, -1, -2) if trans_b else b)
    out = np.empty((3, 6, 48, 56), dtype)
    matmul(a, b, out, trans_b=trans_b)
    strided = np.empty((3, 6, 56, 48), dtype).swapaxes(-1, -2)
    matmul(a, b, strided, trans_b=trans_b)
    for result in (out, strided):
        np.testing.assert_allclose(result, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, True)])
@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.0)])
def test_mid_size_products_by_row_blocks_match_numpy(dtype, trans_a, trans_b, alpha, beta, monkeypatch):
    """A 2-D product of 2^21 multiply-adds is cut into row blocks over the pool (single-threaded BLAS each), scaled
    and accumulated per block: the values of one numpy matmul, into a dense and a strided output; the cut is
    really taken."""
    module = importlib.import_module("cnnl.kernels.matmul")
    blocks = []
    monkeypatch.setattr(module, "thread_count", lambda: 2)
    monkeypatch.setattr(module, "map_parallel", lambda run, spans: blocks.extend([run(s) for s in spans]))
    rng = np.random.default_rng(3)
    m, k, n = 64, 128, 256
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    start = rng.standard_normal((m, n)).astype(dtype)
    expected = alpha * ((a.T if trans_a else a) @ (b.T if trans_b else b)) + beta * start
    for out in (start.copy(), np.empty((n, m), dtype).T):
        out[...] = start
        matmul(a, b, out, trans_a=trans_a, trans_b=trans_b, alpha=alpha, beta=beta)
        np.testing.assert_allclose(out, expected, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4)
    assert len(blocks) == 4  # two row blocks per call
